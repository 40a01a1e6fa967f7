// DRAM bandwidth, kernel bodies shared by dram.cu (the regression set's search space) and
// dram_sweep.cu (the rest of the full sweep): STREAM copy / scale / add / triad (seed 002 section V) plus a read-only and a
// write-only stream, on doubles in 16-byte vectors, with an unroll U and a cache hint H as
// compile-time configuration and the block size at run time.
//
// Why the plain STREAM kernels (stream.cu, ~80% of peak on an H200) leave bandwidth on the
// table, and what these do instead:
// - bytes in flight: a grid-stride loop with one 16-byte load per array per thread keeps at most
//   2048 threads x 16 B = 32 KiB per array per SM in flight, while HBM at ~4.8 TB/s with ~1 µs
//   loaded latency needs several MB in flight GPU-wide. Here each thread issues U independent
//   16-byte loads per input array (a tile of U x blockDim contiguous vectors per block, coalesced
//   for every k) before it uses any of them;
// - occupancy: the host sizes the grid with the occupancy calculator for the kernel and block
//   size (persistent blocks, one wave), since the unrolled kernels use more registers;
// - cache hints: H = 1 streams with evict-first loads and stores (ld/st.global.cs), so that data
//   used once does not push other lines out of L2 first; H = 2 loads without allocating in L1
//   and asks L2 to fetch 256-byte blocks (ld.global.L1::no_allocate.L2::256B, sm_80+; plain
//   stores), which gives DRAM longer bursts; H = 0 uses plain accesses. Which is fastest
//   depends on the part and the op; the configuration search measures all three.
// The tile that runs past the end of the arrays is done with per-vector guards by its block.
// Block 0, thread 0 stamps clock64/%globaltimer around its block's share for the SM clock.

template <int H> __device__ __forceinline__ double2 dram_ld(const double2* p);
template <> __device__ __forceinline__ double2 dram_ld<0>(const double2* p) { return *p; }
template <> __device__ __forceinline__ double2 dram_ld<1>(const double2* p) {
    double2 v;
    asm volatile("ld.global.cs.v2.f64 {%0, %1}, [%2];" : "=d"(v.x), "=d"(v.y) : "l"(p));
    return v;
}
template <> __device__ __forceinline__ double2 dram_ld<2>(const double2* p) {
    double2 v;
#if __CUDA_ARCH__ >= 800
    asm volatile("ld.global.L1::no_allocate.L2::256B.v2.f64 {%0, %1}, [%2];" : "=d"(v.x), "=d"(v.y) : "l"(p));
#else
    v = *p;
#endif
    return v;
}
template <int H> __device__ __forceinline__ void dram_st(double2* p, double2 v);
template <> __device__ __forceinline__ void dram_st<0>(double2* p, double2 v) { *p = v; }
template <> __device__ __forceinline__ void dram_st<1>(double2* p, double2 v) {
    asm volatile("st.global.cs.v2.f64 [%0], {%1, %2};" ::"l"(p), "d"(v.x), "d"(v.y) : "memory");
}
template <> __device__ __forceinline__ void dram_st<2>(double2* p, double2 v) { *p = v; }

// The sum of the four 32-bit words of a vector (the read stream's checksum, wrapping).
__device__ __forceinline__ u32 dram_words(double2 v) {
    u64 x = (u64)__double_as_longlong(v.x), y = (u64)__double_as_longlong(v.y);
    return (u32)x + (u32)(x >> 32) + (u32)y + (u32)(y >> 32);
}

// Calls body(i, bd, full) for each tile of U x blockDim vectors this block owns: i is the
// thread's first vector, its others are i + k * bd; `full` says all U are below n2. One launch
// makes `passes` passes over the n2 vectors (T tiles each): the grid walks the virtual tiles
// 0 .. passes x T in order, block b taking b, b + gridDim, ..., virtual tile v being tile v mod T,
// so a tile comes back only after the whole array has streamed through and every pass reads
// DRAM. A persistent grid wraps from one pass into the next; a flat grid has a block per virtual
// tile. Passes make a launch long enough for the launch gap not to count
// (src/measure/launch_size.rs).
template <int U, class F> __device__ __forceinline__ void dram_tiles(u64 n2, u32 passes, F body) {
    const u64 bd = blockDim.x;
    const u64 tile = bd * U;
    const u64 tiles = (n2 + tile - 1) / tile;
    const u64 virtual_tiles = tiles * passes;
    const u64 advance = gridDim.x % tiles;
    u64 t = blockIdx.x % tiles;
    for (u64 v = blockIdx.x; v < virtual_tiles; v += gridDim.x) {
        const u64 first = t * tile;
        if (first + tile <= n2) body(first + threadIdx.x, bd, true);
        else body(first + threadIdx.x, bd, false);
        t += advance;
        if (t >= tiles) t -= tiles;
    }
}

#define DRAM_IN(k) (full || i + (u64)(k) * bd < n2)

template <int U, int H>
__device__ __forceinline__ void dram_copy(const double2* __restrict__ a, double2* __restrict__ c, u64 n2, u32 passes) {
    dram_tiles<U>(n2, passes, [&](u64 i, u64 bd, bool full) {
        double2 x[U];
#pragma unroll
        for (int k = 0; k < U; ++k) if (DRAM_IN(k)) x[k] = dram_ld<H>(a + i + k * bd);
#pragma unroll
        for (int k = 0; k < U; ++k) if (DRAM_IN(k)) dram_st<H>(c + i + k * bd, x[k]);
    });
}

template <int U, int H>
__device__ __forceinline__ void dram_scale(double2* __restrict__ b, const double2* __restrict__ c, double q, u64 n2, u32 passes) {
    dram_tiles<U>(n2, passes, [&](u64 i, u64 bd, bool full) {
        double2 x[U];
#pragma unroll
        for (int k = 0; k < U; ++k) if (DRAM_IN(k)) x[k] = dram_ld<H>(c + i + k * bd);
#pragma unroll
        for (int k = 0; k < U; ++k) if (DRAM_IN(k)) dram_st<H>(b + i + k * bd, make_double2(q * x[k].x, q * x[k].y));
    });
}

template <int U, int H>
__device__ __forceinline__ void dram_add(const double2* __restrict__ a, const double2* __restrict__ b,
                                         double2* __restrict__ c, u64 n2, u32 passes) {
    dram_tiles<U>(n2, passes, [&](u64 i, u64 bd, bool full) {
        double2 x[U], y[U];
#pragma unroll
        for (int k = 0; k < U; ++k) if (DRAM_IN(k)) { x[k] = dram_ld<H>(a + i + k * bd); y[k] = dram_ld<H>(b + i + k * bd); }
#pragma unroll
        for (int k = 0; k < U; ++k)
            if (DRAM_IN(k)) dram_st<H>(c + i + k * bd, make_double2(x[k].x + y[k].x, x[k].y + y[k].y));
    });
}

template <int U, int H>
__device__ __forceinline__ void dram_triad(double2* __restrict__ a, const double2* __restrict__ b,
                                           const double2* __restrict__ c, double q, u64 n2, u32 passes) {
    dram_tiles<U>(n2, passes, [&](u64 i, u64 bd, bool full) {
        double2 x[U], y[U];
#pragma unroll
        for (int k = 0; k < U; ++k) if (DRAM_IN(k)) { x[k] = dram_ld<H>(b + i + k * bd); y[k] = dram_ld<H>(c + i + k * bd); }
#pragma unroll
        for (int k = 0; k < U; ++k)
            if (DRAM_IN(k)) dram_st<H>(a + i + k * bd, make_double2(x[k].x + q * y[k].x, x[k].y + q * y[k].y));
    });
}

// Read-only: every word is summed (wrapping) and the block's sum added with one atomic to one of
// DRAM_READ_SLOTS words a 128-byte line apart (block b to slot b mod DRAM_READ_SLOTS): a flat
// grid has hundreds of thousands of blocks, whose atomics on a single word would queue on one L2
// slice. The host checks the sum of the slots.
#define DRAM_READ_SLOTS 256
template <int U, int H>
__device__ __forceinline__ void dram_read(const double2* __restrict__ a, u32* __restrict__ total, u64 n2, u32 passes) {
    u32 acc = 0;
    dram_tiles<U>(n2, passes, [&](u64 i, u64 bd, bool full) {
        double2 x[U];
#pragma unroll
        for (int k = 0; k < U; ++k) if (DRAM_IN(k)) x[k] = dram_ld<H>(a + i + k * bd);
#pragma unroll
        for (int k = 0; k < U; ++k) if (DRAM_IN(k)) acc += dram_words(x[k]);
    });
    __shared__ u32 warp_sums[32];
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
        acc = threadIdx.x < (blockDim.x + 31) / 32 ? warp_sums[threadIdx.x] : 0;
        for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
        if (threadIdx.x == 0) atomicAdd(total + (blockIdx.x % DRAM_READ_SLOTS) * 32, acc);
    }
}

// Write-only: every vector gets (w, w).
template <int U, int H> __device__ __forceinline__ void dram_write(double2* __restrict__ c, double w, u64 n2, u32 passes) {
    dram_tiles<U>(n2, passes, [&](u64 i, u64 bd, bool full) {
#pragma unroll
        for (int k = 0; k < U; ++k) if (DRAM_IN(k)) dram_st<H>(c + i + k * bd, make_double2(w, w));
    });
}

#define DRAM_TIMED(CALL)                                             \
    bool timer = blockIdx.x == 0 && threadIdx.x == 0;                \
    gb_stamp s;                                                      \
    if (timer) s = gb_stamp_begin();                                 \
    CALL;                                                            \
    if (blockIdx.x == 0) __syncthreads();                            \
    if (timer) { gb_stamp_end(s, p); p->count += 1; }

// dram_<op>_u<U>_h<H>(<op's arrays and scalars>, u64 n2, u32 passes, gb_probe* p)
#define DRAM_KERNELS(U, H)                                                                                       \
extern "C" __global__ void dram_copy_u##U##_h##H(const double2* a, double2* c, u64 n2, u32 passes, gb_probe* p) {            \
    DRAM_TIMED((dram_copy<U, H>(a, c, n2, passes)))                                                                      \
}                                                                                                                \
extern "C" __global__ void dram_scale_u##U##_h##H(double2* b, const double2* c, double q, u64 n2, u32 passes, gb_probe* p) { \
    DRAM_TIMED((dram_scale<U, H>(b, c, q, n2, passes)))                                                                  \
}                                                                                                                \
extern "C" __global__ void dram_add_u##U##_h##H(const double2* a, const double2* b, double2* c, u64 n2, u32 passes, \
                                                 gb_probe* p) {                                                  \
    DRAM_TIMED((dram_add<U, H>(a, b, c, n2, passes)))                                                                    \
}                                                                                                                \
extern "C" __global__ void dram_triad_u##U##_h##H(double2* a, const double2* b, const double2* c, double q,      \
                                                   u64 n2, u32 passes, gb_probe* p) {                                        \
    DRAM_TIMED((dram_triad<U, H>(a, b, c, q, n2, passes)))                                                               \
}                                                                                                                \
extern "C" __global__ void dram_read_u##U##_h##H(const double2* a, u32* total, u64 n2, u32 passes, gb_probe* p) {           \
    DRAM_TIMED((dram_read<U, H>(a, total, n2, passes)))                                                                  \
}                                                                                                                \
extern "C" __global__ void dram_write_u##U##_h##H(double2* c, double w, u64 n2, u32 passes, gb_probe* p) {                   \
    DRAM_TIMED((dram_write<U, H>(c, w, n2, passes)))                                                                     \
}
