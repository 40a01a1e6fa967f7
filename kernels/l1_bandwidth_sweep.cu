// L1 load bandwidth: the rest of the full profile's sweep (plain loads at ILP 1, `.ca` and
// `.nc` at every ILP; see l1_loads.cuh).

#define GB_L1_ALL_ILPS(OPN, W) GB_L1_KERNEL(OPN, W, 1) GB_L1_KERNEL(OPN, W, 2) GB_L1_KERNEL(OPN, W, 4) GB_L1_KERNEL(OPN, W, 8)

GB_L1_KERNEL(ld, 4, 1)
GB_L1_KERNEL(ld, 8, 1)
GB_L1_KERNEL(ld, 16, 1)
GB_L1_ALL_ILPS(ca, 4)
GB_L1_ALL_ILPS(ca, 8)
GB_L1_ALL_ILPS(ca, 16)
GB_L1_ALL_ILPS(nc, 4)
GB_L1_ALL_ILPS(nc, 8)
GB_L1_ALL_ILPS(nc, 16)
