// Single-instruction operations (see instructions_ops.cuh): latency, and throughput at ILP 8
// (enough independent chains per warp to cover every latency here with 8+ warps per SM), plus
// the fold kernel of the per-SM windows.

#define GB_INST(NAME) GB_INST_LAT(NAME) GB_INST_THR(NAME, 8)

GB_INST(fp32_fma)
GB_INST(fp32_add)
GB_INST(fp32_mul)
GB_INST(fp64_fma)
GB_INST(fp64_add)
GB_INST(fp64_mul)
GB_INST(fp16x2_fma)
GB_INST(fp16x2_add)
GB_INST(fp16x2_mul)
GB_INST(int32_add)
GB_INST(int32_mul)
GB_INST(int32_mad)
GB_INST(sfu_rcp)
GB_INST(sfu_rsqrt)
GB_INST(sfu_ex2)
GB_INST(sfu_lg2)
GB_INST(sfu_sin)
GB_INST(sfu_cos)

GB_SM_FOLD_KERNEL(inst_fold)
