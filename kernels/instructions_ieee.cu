// IEEE-rounded division and square root (see instructions_ops.cuh): sequences of several
// instructions (a special-function estimate refined by FMAs, with a slow path for special
// operands), so no single hardware limit applies. Latency, and throughput at ILP 8.

#define GB_INST(NAME) GB_INST_LAT(NAME) GB_INST_THR(NAME, 8)

GB_INST(fp32_div)
GB_INST(fp32_sqrt)
GB_INST(fp64_div)
GB_INST(fp64_sqrt)
