// Constant memory (seed 003): a __constant__ table read uniformly (every lane of a warp on the
// same word: one broadcast) and divergently (32 lanes on 32 different words, which the constant
// cache serves one address at a time).
//
// The table holds CMEM_WORDS words, t[i] = (5 i + 1) mod CMEM_WORDS (a single cycle through the
// table), written by the host. Lane l starts at word (l * lane_stride) mod CMEM_WORDS:
// lane_stride 0 is uniform, 33 (odd, so a bijection) puts the 32 lanes on 32 distinct words.
//
// Throughput: ILP independent loads per round at j + 8k; the next round's j depends on their sum
// through `zmask` (0 at run time), so no round can be hoisted; thread loads per clock per SM
// from the per-SM windows. Latency: one warp chases j = t[j], cycles per load.

#define CMEM_WORDS 256
#define CMEM_MASK (CMEM_WORDS - 1)
#define CMEM_ILP 4

__constant__ u32 cmem_table[CMEM_WORDS];

extern "C" __global__ void cmem_throughput(u32 lane_stride, u32 zmask, u32 rounds, gb_sm_window* win, u32 slots,
                                           u32* sink, u32 sentinel) {
    u32 j = ((threadIdx.x & 31) * lane_stride) & CMEM_MASK;
    u32 acc = 0;
    gb_stamp s = gb_stamp_begin();
#pragma unroll 1
    for (u32 r = 0; r < rounds; r += 4) {
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            u32 x = 0;
#pragma unroll
            for (int k = 0; k < CMEM_ILP; ++k) x += cmem_table[(j + 8 * k) & CMEM_MASK];
            acc ^= x;
            j = (j + 1 + (x & zmask)) & CMEM_MASK;
        }
    }
    if (acc == sentinel) sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
    gb_window_close(win, slots, s, (u64)rounds * CMEM_ILP * 32);
}

extern "C" __global__ void cmem_latency(u32 lane_stride, u32 steps, gb_probe* p, u32* sink, u32 sentinel) {
    u32 j = ((threadIdx.x & 31) * lane_stride) & CMEM_MASK;
    for (int i = 0; i < 8; ++i) j = cmem_table[j];  // warm
    __syncwarp();
    gb_stamp s = gb_stamp_begin();
#pragma unroll 1
    for (u32 i = 0; i < steps; i += 8) {
#pragma unroll
        for (int u = 0; u < 8; ++u) j = cmem_table[j];
    }
    if (j == sentinel) sink[threadIdx.x] = j;  // waits for the last load
    if (threadIdx.x == 0) {
        gb_stamp_end(s, p);
        p->count += steps;
    }
}

GB_SM_FOLD_KERNEL(cmem_fold)
