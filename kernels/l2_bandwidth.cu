// L2 read bandwidth over a footprint sweep, and its scaling with the number of blocks
// (seed 002 section III).
//
// Every thread reads 16-byte vectors with ld.global.cg (cached in L2, not in L1, so that every
// load is served by L2 however small the footprint): at iteration i its k-th load is vector
// ((i * ILP + k) * T + t) mod V, with t the thread's index in the grid, T the grid's threads and
// V the footprint in vectors (a power of two). Each warp instruction covers 512 contiguous bytes
// and the grid sweeps the footprint in order, so a footprint the L2 holds stays resident across
// launches after the first. The values are folded and consumed through a runtime sentinel;
// work reported: bytes loaded by the warp.

__device__ __forceinline__ u32 l2_ld_cg(const uint4* p) {
    u32 a, b, c, d;
    asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(p));
    return a ^ b ^ c ^ d;
}

template <int ILP>
__device__ __forceinline__ void l2_read(const uint4* buf, u32 vmask, u32 iters, gb_sm_window* win, u32 slots,
                                        u32* sink, u32 sentinel) {
    const u32 T = gridDim.x * blockDim.x;
    const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    u32 v[ILP];
#pragma unroll
    for (int k = 0; k < ILP; ++k) v[k] = k * T + t;
    const u32 step = ILP * T;
    u32 acc = 0;
    gb_stamp s = gb_stamp_begin();
#pragma unroll 1
    for (u32 i = 0; i < iters; ++i) {
        u32 x = 0;
#pragma unroll
        for (int k = 0; k < ILP; ++k) {
            x ^= l2_ld_cg(buf + (v[k] & vmask));
            v[k] += step;
        }
        acc += x;
    }
    if (acc == sentinel) sink[t] = acc;
    gb_window_close(win, slots, s, (u64)iters * ILP * 32 * 16);
}

// Private variant: block b reads only its own slice of S = slice_mask + 1 vectors, vectors
// [b S, (b + 1) S), in the same order as l2_read within the slice. No two SMs share a line, so
// no line is requested by several SMs at once: the figure is the L2's hit bandwidth without
// requests of different SMs for the same line arriving together.
template <int ILP>
__device__ __forceinline__ void l2_read_local(const uint4* buf, u32 slice_mask, u32 iters, gb_sm_window* win,
                                              u32 slots, u32* sink, u32 sentinel) {
    const u32 T = blockDim.x;
    const u32 t = threadIdx.x;
    const uint4* base = buf + (u64)blockIdx.x * (slice_mask + 1);
    u32 v[ILP];
#pragma unroll
    for (int k = 0; k < ILP; ++k) v[k] = k * T + t;
    const u32 step = ILP * T;
    u32 acc = 0;
    gb_stamp s = gb_stamp_begin();
#pragma unroll 1
    for (u32 i = 0; i < iters; ++i) {
        u32 x = 0;
#pragma unroll
        for (int k = 0; k < ILP; ++k) {
            x ^= l2_ld_cg(base + (v[k] & slice_mask));
            v[k] += step;
        }
        acc += x;
    }
    if (acc == sentinel) sink[blockIdx.x * blockDim.x + t] = acc;
    gb_window_close(win, slots, s, (u64)iters * ILP * 32 * 16);
}

#define GB_L2_LOCAL_KERNEL(ILP)                                                                           \
extern "C" __global__ void l2_read_local_ilp##ILP(const uint4* buf, u32 slice_mask, u32 iters,           \
                                                  gb_sm_window* win, u32 slots, u32* sink, u32 sentinel) { \
    l2_read_local<ILP>(buf, slice_mask, iters, win, slots, sink, sentinel);                               \
}

GB_L2_LOCAL_KERNEL(2)
GB_L2_LOCAL_KERNEL(4)
GB_L2_LOCAL_KERNEL(8)

#define GB_L2_KERNEL(ILP)                                                                                  \
extern "C" __global__ void l2_read_ilp##ILP(const uint4* buf, u32 vmask, u32 iters, gb_sm_window* win,    \
                                            u32 slots, u32* sink, u32 sentinel) {                          \
    l2_read<ILP>(buf, vmask, iters, win, slots, sink, sentinel);                                           \
}

GB_L2_KERNEL(1)
GB_L2_KERNEL(2)
GB_L2_KERNEL(4)
GB_L2_KERNEL(8)

GB_SM_FOLD_KERNEL(l2_fold)

// Fills n vectors with a pattern (no zero pages, nothing compressible).
extern "C" __global__ void l2_fill(uint4* buf, u32 n) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        u32 h = i * 2654435761u;
        buf[i] = make_uint4(h, h ^ 0x55555555u, h + 0x9e3779b9u, ~h);
    }
}
