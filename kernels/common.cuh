// Shared by every gpubench kernel source; prepended before compilation with NVRTC.
//
// Clock probes: one designated thread reads clock64() (its SM's cycle counter) and %globaltimer
// (ns) at the start and end of its work, and adds both deltas to a gb_probe in device memory.
// cycles / ns over the same window is the SM clock the kernel actually ran at.

typedef unsigned int u32;
typedef unsigned long long u64;

struct gb_probe {
    u64 cycles;   // sum of clock64() deltas
    u64 ns;       // sum of %globaltimer deltas
    u64 count;    // work items timed (accesses, operations), kernel-specific
    u64 sink;     // data-dependent value that keeps results alive
};

__device__ __forceinline__ u64 gb_globaltimer() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ u64 gb_clock() {
    u64 c;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c));
    return c;
}

struct gb_stamp {
    u64 c0, t0;
};

__device__ __forceinline__ gb_stamp gb_stamp_begin() {
    gb_stamp s;
    s.t0 = gb_globaltimer();
    s.c0 = gb_clock();
    return s;
}

__device__ __forceinline__ void gb_stamp_end(gb_stamp s, gb_probe* p) {
    u64 c1 = gb_clock();
    u64 t1 = gb_globaltimer();
    p->cycles += c1 - s.c0;
    p->ns += t1 - s.t0;
}

// Global loads with explicit cache operators.
__device__ __forceinline__ u32 gb_ld_ca(const u32* p) {
    u32 v;
    asm volatile("ld.global.ca.u32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}
__device__ __forceinline__ u32 gb_ld_cg(const u32* p) {
    u32 v;
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}
__device__ __forceinline__ u32 gb_ld_cv(const u32* p) {
    u32 v;
    asm volatile("ld.global.cv.u32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}
__device__ __forceinline__ u32 gb_ld_nc(const u32* p) {
    u32 v;
    asm volatile("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}

// Per-SM windows (seed 001 section 6.1, seed 004). The throughput of one SM is the work its warps
// did divided by the span from the earliest warp start to the latest warp end on that SM, counted
// in that SM's own clock64 cycles (counters of different SMs are not synchronised, so cycles are
// only ever compared within one SM). %globaltimer over the same span gives the SM's effective
// clock and, being one clock for the whole GPU, the GPU-wide span of a launch.
//
// Each warp takes a gb_stamp before its timed work and calls gb_window_close after it (all lanes,
// after the results are consumed); lane 0 publishes the warp's span and work into its SM's slot.
// After every launch a fold kernel (GB_SM_FOLD_KERNEL) adds each slot's span to running totals and
// empties the slots, so that the totals of a sample cover time inside launches only. An SM id at
// or beyond `slots` is not recorded; the host notices the missing work.

struct gb_sm_window {
    u64 c0, c1;  // earliest warp start, latest warp end (clock64); empty: c0 = ~0, c1 = 0
    u64 t0, t1;  // the same in %globaltimer ns
    u64 work;    // work items (bytes, operations) the warps reported
};

struct gb_sm_total {
    u64 cycles;   // sum of per-launch spans, clock64
    u64 ns;       // sum of per-launch spans, %globaltimer
    u64 work;     // sum of work
    u64 windows;  // launches that ran on this SM
};

__device__ __forceinline__ u32 gb_smid() {
    u32 s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

__device__ __forceinline__ void gb_window_close(gb_sm_window* w, u32 slots, gb_stamp s, u64 work) {
    __syncwarp();
    u64 c1 = gb_clock();
    u64 t1 = gb_globaltimer();
    if ((threadIdx.x & 31) == 0) {
        u32 sm = gb_smid();
        if (sm < slots) {
            atomicMin(&w[sm].c0, s.c0);
            atomicMax(&w[sm].c1, c1);
            atomicMin(&w[sm].t0, s.t0);
            atomicMax(&w[sm].t1, t1);
            atomicAdd(&w[sm].work, work);
        }
    }
}

// Folds `slots` windows into tot[0 .. slots) and empties them; tot[slots] collects the GPU-wide
// span (earliest start to latest end over all SMs, ns) and the total work. One block.
#define GB_SM_FOLD_KERNEL(NAME)                                                         \
extern "C" __global__ void NAME(gb_sm_window* w, gb_sm_total* tot, u32 slots) {         \
    __shared__ u64 lo, hi, work;                                                        \
    if (threadIdx.x == 0) { lo = ~0ull; hi = 0; work = 0; }                             \
    __syncthreads();                                                                    \
    for (u32 i = threadIdx.x; i < slots; i += blockDim.x) {                             \
        gb_sm_window x = w[i];                                                          \
        if (x.work != 0) {                                                              \
            tot[i].cycles += x.c1 - x.c0;                                               \
            tot[i].ns += x.t1 - x.t0;                                                   \
            tot[i].work += x.work;                                                      \
            tot[i].windows += 1;                                                        \
            atomicMin(&lo, x.t0);                                                       \
            atomicMax(&hi, x.t1);                                                       \
            atomicAdd(&work, x.work);                                                   \
        }                                                                               \
        w[i].c0 = ~0ull; w[i].c1 = 0; w[i].t0 = ~0ull; w[i].t1 = 0; w[i].work = 0;      \
    }                                                                                   \
    __syncthreads();                                                                    \
    if (threadIdx.x == 0 && work != 0) {                                                \
        tot[slots].ns += hi - lo;                                                       \
        tot[slots].work += work;                                                        \
        tot[slots].windows += 1;                                                        \
    }                                                                                   \
}
