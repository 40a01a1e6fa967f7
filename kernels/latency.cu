// Pointer-chase latency (seeds 000, 001, 002): one thread follows j = a[j] through an array
// initialised as a[i] = (i + stride) % n. Each access depends on the previous one, so the time
// per access is the load-to-use latency of whichever level holds the line.
//
// The chase is continuous across launches: each launch resumes at the index the previous one
// stopped at (p->sink), so after one lap a footprint that fits L2 hits in it and one that does
// not keeps missing. L1 does not keep lines across launches, so a launch first chases
// `warm_steps` untimed accesses (a lap of a footprint small enough for L1; 0 otherwise).

extern "C" __global__ void chase_init(u32* a, u64 n, u64 stride) {
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 step = (u64)gridDim.x * blockDim.x;
    for (; i < n; i += step) a[i] = (u32)((i + stride) % n);
}

#define GB_CHASE_KERNEL(NAME, LOAD)                                                   \
extern "C" __global__ void NAME(const u32* __restrict__ a, u32 warm_steps, u32 steps, \
                                gb_probe* p) {                                        \
    u32 j = (u32)p->sink;                                                             \
    for (u32 i = 0; i < warm_steps; ++i) j = LOAD(a + j);                             \
    if (j == 0xFFFFFFFFu) p->count = 0; /* the warm lap completes before timing */    \
    gb_stamp s = gb_stamp_begin();                                                    \
    for (u32 i = 0; i < steps; i += 8) {                                              \
        j = LOAD(a + j); j = LOAD(a + j); j = LOAD(a + j); j = LOAD(a + j);           \
        j = LOAD(a + j); j = LOAD(a + j); j = LOAD(a + j); j = LOAD(a + j);           \
    }                                                                                 \
    if (j == 0xFFFFFFFFu) p->count = 0; /* waits for the last load before the clock */ \
    gb_stamp_end(s, p);                                                               \
    p->count += steps;                                                                \
    p->sink = j;                                                                      \
}

GB_CHASE_KERNEL(chase_ca, gb_ld_ca)
GB_CHASE_KERNEL(chase_cg, gb_ld_cg)
GB_CHASE_KERNEL(chase_cv, gb_ld_cv)
GB_CHASE_KERNEL(chase_nc, gb_ld_nc)

// The same chase from every SM (seed 002's placement question, DESIGN.md section 3a): a grid of
// one-thread blocks, several per SM, in which the first block to reach an SM in this launch
// claims it (claims[sm] is raised to `launch`) and chases, and the others leave. Each SM keeps its
// own gb_probe (probes[sm]), so every SM resumes its own chase and reports its own latency.
// target_sm = 0xFFFFFFFF chases from every SM at once; any other value only from that SM.
#define GB_CHASE_SM_KERNEL(NAME, LOAD)                                                  \
extern "C" __global__ void NAME(const u32* __restrict__ a, u32 warm_steps, u32 steps,   \
                                gb_probe* probes, u32* claims, u32 slots, u32 launch,   \
                                u32 target_sm) {                                        \
    u32 sm = gb_smid();                                                                 \
    if (sm >= slots || (target_sm != 0xFFFFFFFFu && sm != target_sm)) return;           \
    if (atomicMax(claims + sm, launch) >= launch) return;                               \
    gb_probe* p = probes + sm;                                                          \
    u32 j = (u32)p->sink;                                                               \
    for (u32 i = 0; i < warm_steps; ++i) j = LOAD(a + j);                               \
    if (j == 0xFFFFFFFFu) p->count = 0;                                                 \
    gb_stamp s = gb_stamp_begin();                                                      \
    for (u32 i = 0; i < steps; i += 8) {                                                \
        j = LOAD(a + j); j = LOAD(a + j); j = LOAD(a + j); j = LOAD(a + j);             \
        j = LOAD(a + j); j = LOAD(a + j); j = LOAD(a + j); j = LOAD(a + j);             \
    }                                                                                   \
    if (j == 0xFFFFFFFFu) p->count = 0;                                                 \
    gb_stamp_end(s, p);                                                                 \
    p->count += steps;                                                                  \
    p->sink = j;                                                                        \
}

GB_CHASE_SM_KERNEL(chase_sm_ca, gb_ld_ca)
GB_CHASE_SM_KERNEL(chase_sm_cg, gb_ld_cg)
GB_CHASE_SM_KERNEL(chase_sm_cv, gb_ld_cv)
GB_CHASE_SM_KERNEL(chase_sm_nc, gb_ld_nc)

// Which SMs a thread-block cluster spans (cc >= 9.0): launched with a cluster dimension and one
// block per SM (the dynamic shared memory leaves room for one), every block writes its SM id and
// its cluster's index. The blocks of a cluster always share a GPC, so SMs seen together in any
// cluster belong to one GPC.
extern "C" __global__ void cluster_sms(u32* out) {
#if __CUDA_ARCH__ >= 900
    if (threadIdx.x == 0) {
        u32 c;
        asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(c));
        out[2 * blockIdx.x] = gb_smid();
        out[2 * blockIdx.x + 1] = c;
    }
#endif
}
