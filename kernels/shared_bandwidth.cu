// Shared-memory load bandwidth in bytes per clock per SM (seed 001 section 6.1, seed 004).
//
// The layout is the one of l1_bandwidth.cu, on a 4 KiB shared array per block: a round is ILP
// independent ld.shared of W bytes per lane at immediate offsets lane * W + k * 32 * W (one to
// four conflict-free 128-byte wavefronts per warp instruction), folded into `x`; the next round's
// address depends on `x` through `zmask` (0 at run time), so exactly ILP loads per warp are in
// flight and nothing can be hoisted. Shared addresses are 32-bit, so the address update costs one
// instruction less than for global loads.
//
// Limit: 32 banks x 4 bytes = 128 B/clk/SM. At 32-bit width every warp instruction is one
// wavefront, so the SM must issue one load per clock from its 4 sub-partitions plus the folds
// and address updates; seed 004 measured 47% on Ampere with scalar accesses and 98% with
// 128-bit ones. Wide accesses with ILP >= 2 and >= 8 warps leave the issue slots idle half the
// time, which is what reaching >= 95% takes.

#define SMEM_BYTES 4096

template <int W> __device__ __forceinline__ u32 smem_ld(u32 a);
template <> __device__ __forceinline__ u32 smem_ld<4>(u32 addr) {
    u32 a;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(a) : "r"(addr));
    return a;
}
template <> __device__ __forceinline__ u32 smem_ld<8>(u32 addr) {
    u32 a, b;
    asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(a), "=r"(b) : "r"(addr));
    return a ^ b;
}
template <> __device__ __forceinline__ u32 smem_ld<16>(u32 addr) {
    u32 a, b, c, d;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(addr));
    return a ^ b ^ c ^ d;
}

template <int W, int ILP> __device__ __forceinline__ u32 smem_round(u32 addr) {
    u32 x = 0;
#pragma unroll
    for (int k = 0; k < ILP; ++k) x ^= smem_ld<W>(addr + k * 32 * W);
    return x;
}

// `rounds` is a multiple of 4. Work reported: bytes loaded by the warp in the timed rounds.
template <int W, int ILP>
__device__ __forceinline__ void smem_body(u32 seed, u32 zmask, u32 rounds, gb_sm_window* win, u32 slots, u32* sink,
                                          u32 sentinel) {
    __shared__ __align__(16) u32 s[SMEM_BYTES / 4];
    for (u32 i = threadIdx.x; i < SMEM_BYTES / 4; i += blockDim.x) s[i] = (i * 2654435761u) ^ seed;
    __syncthreads();
    u32 addr = (u32)__cvta_generic_to_shared(s) + (threadIdx.x & 31) * W;
    u32 acc = smem_round<W, ILP>(addr);
    addr += acc & zmask;
    gb_stamp st = gb_stamp_begin();
#pragma unroll 1
    for (u32 r = 0; r < rounds; r += 4) {
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            u32 x = smem_round<W, ILP>(addr);
            acc += x;
            addr += x & zmask;
        }
    }
    if (acc == sentinel) sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
    gb_window_close(win, slots, st, (u64)rounds * ILP * 32 * W);
}

#define GB_SMEM_KERNEL(W, ILP)                                                                          \
extern "C" __global__ void smem_w##W##_ilp##ILP(u32 seed, u32 zmask, u32 rounds, gb_sm_window* win,    \
                                                 u32 slots, u32* sink, u32 sentinel) {                  \
    smem_body<W, ILP>(seed, zmask, rounds, win, slots, sink, sentinel);                                 \
}

#define GB_SMEM_ILPS(W) GB_SMEM_KERNEL(W, 1) GB_SMEM_KERNEL(W, 2) GB_SMEM_KERNEL(W, 4) GB_SMEM_KERNEL(W, 8)

GB_SMEM_ILPS(4)
GB_SMEM_ILPS(8)
GB_SMEM_ILPS(16)

GB_SM_FOLD_KERNEL(smem_fold)
