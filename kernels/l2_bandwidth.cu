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

// MODE 0: the whole grid sweeps one footprint of vmask + 1 vectors (every line read by several
// SMs over a launch, by one SM at a time). MODE 1, the private variant: block b reads only its
// own slice of S = vmask + 1 vectors, vectors [b S, (b + 1) S), in the same order within the
// slice. No two SMs share a line, so no line is requested by several SMs at once: the figure is
// the L2's hit bandwidth without requests of different SMs for the same line arriving together.
// MODE 2, the peak variant: every block reads the same S vectors in the same order, so that the
// SMs ask for each line at about the same time and the L2 serves one line to many SMs.
template <int ILP, int MODE>
__device__ __forceinline__ void l2_read(const uint4* buf, u32 vmask, u32 iters, gb_sm_window* win, u32 slots,
                                        u32* sink, u32 sentinel) {
    const u32 T = MODE == 0 ? gridDim.x * blockDim.x : blockDim.x;
    const u32 t = MODE == 0 ? blockIdx.x * blockDim.x + threadIdx.x : threadIdx.x;
    const uint4* base = MODE == 1 ? buf + (u64)blockIdx.x * (vmask + 1) : buf;
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
            x ^= l2_ld_cg(base + (v[k] & vmask));
            v[k] += step;
        }
        acc += x;
    }
    if (acc == sentinel) sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
    gb_window_close(win, slots, s, (u64)iters * ILP * 32 * 16);
}

#define GB_L2_KERNEL(NAME, ILP, MODE)                                                                     \
extern "C" __global__ void NAME##ILP(const uint4* buf, u32 vmask, u32 iters, gb_sm_window* win,          \
                                     u32 slots, u32* sink, u32 sentinel) {                                \
    l2_read<ILP, MODE>(buf, vmask, iters, win, slots, sink, sentinel);                                    \
}

GB_L2_KERNEL(l2_read_ilp, 1, 0)
GB_L2_KERNEL(l2_read_ilp, 2, 0)
GB_L2_KERNEL(l2_read_ilp, 4, 0)
GB_L2_KERNEL(l2_read_ilp, 8, 0)
GB_L2_KERNEL(l2_read_local_ilp, 2, 1)
GB_L2_KERNEL(l2_read_local_ilp, 4, 1)
GB_L2_KERNEL(l2_read_local_ilp, 8, 1)
GB_L2_KERNEL(l2_read_shared_ilp, 2, 2)
GB_L2_KERNEL(l2_read_shared_ilp, 4, 2)
GB_L2_KERNEL(l2_read_shared_ilp, 8, 2)

GB_SM_FOLD_KERNEL(l2_fold)

// Fills n vectors with a pattern (no zero pages, nothing compressible).
extern "C" __global__ void l2_fill(uint4* buf, u32 n) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        u32 h = i * 2654435761u;
        buf[i] = make_uint4(h, h ^ 0x55555555u, h + 0x9e3779b9u, ~h);
    }
}
