// Register spilling to local memory (seed 003). One computation, compiled under different
// register caps with __launch_bounds__(256, B): 65536 / (256 B) registers per thread at most.
//
// Each thread keeps SPILL_N floats live and updates them in a ring, v[k] = fma(v[k], a,
// v[k + 1]), so every value is read and written every round: with 80+ registers nothing spills;
// under a cap of 32 (B = 8) about 40 values live in local memory (LDL/STL through L1). The
// results are the same bit for bit under every cap (same FMAs in the same order): the host
// compares them. Work reported: FMAs per warp; the ratio of rates is the cost of the spills.

#define SPILL_N 64

__device__ __forceinline__ float spill_body(float a, u32 rounds) {
    float v[SPILL_N];
#pragma unroll
    for (int k = 0; k < SPILL_N; ++k) v[k] = a * (float)(threadIdx.x + k + 1);
#pragma unroll 1
    for (u32 r = 0; r < rounds; ++r) {
#pragma unroll
        for (int k = 0; k < SPILL_N; ++k) v[k] = fmaf(v[k], a, v[(k + 1) % SPILL_N]);
    }
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < SPILL_N; ++k) s += v[k];
    return s;
}

// spill_<cap>(float a, u32 rounds, float* out, gb_sm_window*, u32 slots)
#define GB_SPILL_KERNEL(NAME, BLOCKS)                                                                  \
extern "C" __global__ void __launch_bounds__(256, BLOCKS) NAME(float a, u32 rounds, float* out,       \
                                                               gb_sm_window* win, u32 slots) {        \
    gb_stamp s = gb_stamp_begin();                                                                     \
    float r = spill_body(a, rounds);                                                                   \
    out[blockIdx.x * blockDim.x + threadIdx.x] = r;                                                    \
    gb_window_close(win, slots, s, (u64)rounds * SPILL_N * 32);                                        \
}

GB_SPILL_KERNEL(spill_none, 1)
GB_SPILL_KERNEL(spill_regs128, 2)
GB_SPILL_KERNEL(spill_regs64, 4)
GB_SPILL_KERNEL(spill_regs51, 5)
GB_SPILL_KERNEL(spill_regs42, 6)
GB_SPILL_KERNEL(spill_regs32, 8)

GB_SM_FOLD_KERNEL(spill_fold)
