// DRAM bandwidth: the rest of the full profile's sweep (unroll 1, the one-vector-per-thread
// loop of plain STREAM; see dram_ops.cuh).

DRAM_KERNELS(1, 0)
DRAM_KERNELS(1, 1)
DRAM_KERNELS(1, 2)
