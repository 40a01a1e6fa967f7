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
