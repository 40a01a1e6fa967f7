// L1 load bandwidth: the kernels the regression set's configuration search tries (plain loads,
// ILP 2, 4, 8; see l1_loads.cuh), and the fold kernel of the per-SM windows.

#define GB_L1_REGRESSION(W) GB_L1_KERNEL(ld, W, 2) GB_L1_KERNEL(ld, W, 4) GB_L1_KERNEL(ld, W, 8)

GB_L1_REGRESSION(4)
GB_L1_REGRESSION(8)
GB_L1_REGRESSION(16)

GB_SM_FOLD_KERNEL(l1_fold)
