// STREAM (McCalpin; seed 002 section V) on doubles, 16-byte vector accesses, grid-stride loops:
//   copy  c = a        scale b = q c        add  c = a + b        triad a = b + q c
// One launch makes `passes` passes over the arrays (every kernel is idempotent), so that it lasts
// long enough for the launch gap not to count (src/measure/launch_size.rs); a thread comes back to
// its first element only after the whole array has streamed through, so every pass reads DRAM.
// Block 0, thread 0 stamps clock64/%globaltimer around its block's share for the SM clock.

extern "C" __global__ void stream_init(double* a, double* b, double* c, u64 n, double va, double vb, double vc) {
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 step = (u64)gridDim.x * blockDim.x;
    for (; i < n; i += step) { a[i] = va; b[i] = vb; c[i] = vc; }
}

#define GB_STREAM_KERNEL(NAME, PARAMS, BODY)                                      \
extern "C" __global__ void NAME PARAMS {                                          \
    bool timer = blockIdx.x == 0 && threadIdx.x == 0;                             \
    gb_stamp s;                                                                   \
    if (timer) s = gb_stamp_begin();                                              \
    u64 step = (u64)gridDim.x * blockDim.x;                                       \
    for (u32 pass = 0; pass < passes; ++pass) {                                   \
        u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;                       \
        for (; i < n2; i += step) { BODY; }                                       \
    }                                                                             \
    if (blockIdx.x == 0) __syncthreads();                                         \
    if (timer) { gb_stamp_end(s, p); p->count += 1; }                             \
}

GB_STREAM_KERNEL(stream_copy,
    (const double2* __restrict__ a, double2* __restrict__ c, u64 n2, u32 passes, gb_probe* p),
    c[i] = a[i])

GB_STREAM_KERNEL(stream_scale,
    (double2* __restrict__ b, const double2* __restrict__ c, double q, u64 n2, u32 passes, gb_probe* p),
    double2 x = c[i]; b[i] = make_double2(q * x.x, q * x.y))

GB_STREAM_KERNEL(stream_add,
    (const double2* __restrict__ a, const double2* __restrict__ b, double2* __restrict__ c, u64 n2, u32 passes, gb_probe* p),
    double2 x = a[i]; double2 y = b[i]; c[i] = make_double2(x.x + y.x, x.y + y.y))

GB_STREAM_KERNEL(stream_triad,
    (double2* __restrict__ a, const double2* __restrict__ b, const double2* __restrict__ c, double q, u64 n2, u32 passes, gb_probe* p),
    double2 x = b[i]; double2 y = c[i]; a[i] = make_double2(x.x + q * y.x, x.y + q * y.y))

// Counts elements of x that differ from `expected` (BabelStream-style verification).
extern "C" __global__ void count_mismatches(const double* x, u64 n, double expected, u64* bad) {
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 step = (u64)gridDim.x * blockDim.x;
    u64 local = 0;
    for (; i < n; i += step) local += (x[i] != expected);
    if (local) atomicAdd(bad, local);
}
