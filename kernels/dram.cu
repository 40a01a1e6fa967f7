// DRAM bandwidth: the kernels of the regression set's configuration search (unroll 2, 4, 8,
// plain, evict-first and L2-prefetching accesses; see dram_ops.cuh), initialisation and
// verification.

DRAM_KERNELS(2, 0)
DRAM_KERNELS(4, 0)
DRAM_KERNELS(8, 0)
DRAM_KERNELS(2, 1)
DRAM_KERNELS(4, 1)
DRAM_KERNELS(8, 1)
DRAM_KERNELS(2, 2)
DRAM_KERNELS(4, 2)
DRAM_KERNELS(8, 2)

// Fills the three arrays with one value each.
extern "C" __global__ void dram_init(double* a, double* b, double* c, u64 n, double va, double vb, double vc) {
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 step = (u64)gridDim.x * blockDim.x;
    for (; i < n; i += step) { a[i] = va; b[i] = vb; c[i] = vc; }
}

// Counts elements of x[0 .. n) that differ from `expected`.
extern "C" __global__ void dram_mismatches(const double* x, u64 n, double expected, u64* bad) {
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 step = (u64)gridDim.x * blockDim.x;
    u64 local = 0;
    for (; i < n; i += step) local += (x[i] != expected);
    if (local) atomicAdd(bad, local);
}
