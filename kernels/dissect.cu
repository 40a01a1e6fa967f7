// Memory-hierarchy dissection (seeds 000, 001, 002): one thread chases j = a[j] through an
// array whose visited elements hold a[i] = (i + stride) % n, and times every access on its own
// with the SM's 32-bit cycle counter. Each access is bracketed as
//     t0 = clock; j = load(a + j); sink = j; t1 = clock
// where the store of j to shared memory cannot issue before the load returns, so t1 - t0 covers
// exactly one load and its use. Histogram kernels count the cycles in 2-cycle bins; trace
// kernels record every access in shared memory and copy the record out at the end; they start
// at element `start`, so that a host-written chain (a policy probe) can begin anywhere.
//
// Shared memory shrinks the L1 (they share one array), so the kernels keep theirs small: 16-bit
// histogram bins (a launch times at most 65535 accesses) and 16-bit trace records (saturated).
// Every kernel spells out its parameter list: the host checks its launches against this text.

#define DISSECT_BIN_SHIFT 1
#define DISSECT_BINS 2048

__constant__ u32 dissect_const[16384];

__device__ __forceinline__ u32 dissect_clock() {
    u32 c;
    asm volatile("mov.u32 %0, %%clock;" : "=r"(c) : : "memory");
    return c;
}

__device__ __forceinline__ void dissect_keep(u32* sink, u32 v) {
    asm volatile("st.volatile.shared.u32 [%0], %1;" : : "r"((u32)__cvta_generic_to_shared(sink)), "r"(v) : "memory");
}

__device__ __forceinline__ u32 dissect_tex(u64 tex, u32 j) {
    u32 r0, r1, r2, r3;
    asm volatile("tex.1d.v4.u32.s32 {%0, %1, %2, %3}, [%4, {%5}];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "l"(tex), "r"(j));
    return r0;
}

__device__ __forceinline__ u64 dissect_ld_cg64(const u64* p) {
    u64 v;
    asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(p));
    return v;
}

__device__ __forceinline__ u32 dissect_ld_const(u32 j) {
    return dissect_const[j];
}

// Writes the visited elements only (a lap of n / stride accesses), so that huge footprints
// cost nothing but their allocation. n is a multiple of stride.
extern "C" __global__ void dissect_init(u32* a, u64 n, u64 stride) {
    u64 laps = n / stride;
    for (u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x; k < laps; k += (u64)gridDim.x * blockDim.x)
        a[k * stride] = (u32)(((k + 1) % laps) * stride);
}

// Element offset of visit k inside its stride block: 0 for the first visit, otherwise a hashed
// multiple of `unit` below `stride` (always 0 when unit is 0 or the stride is under two units).
// It spreads the lines of a large-stride chase over the L2's slices and sets without changing
// the pages the chase touches. The host's `dissect::launch::scatter` is the same function.
__device__ __forceinline__ u64 dissect_scatter(u64 k, u64 stride, u64 unit) {
    if (k == 0 || unit == 0 || stride < 2 * unit) return 0;
    return (((k * 2654435761ull) & 0xFFFFFFFFull) % (stride / unit)) * unit;
}

extern "C" __global__ void dissect_init64(u64* a, u64 n, u64 stride, u64 unit) {
    u64 laps = n / stride;
    for (u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x; k < laps; k += (u64)gridDim.x * blockDim.x) {
        u64 next = (k + 1) % laps;
        a[k * stride + dissect_scatter(k, stride, unit)] = next * stride + dissect_scatter(next, stride, unit);
    }
}

// Reads a large buffer through L2 so that whatever was cached there is evicted.
extern "C" __global__ void dissect_flush(const u32* buf, u64 n, gb_probe* p) {
    u32 x = 0;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
        x ^= gb_ld_cg(buf + i);
    if (x == 0x9E3779B9u) p->sink ^= x;
}

#define DISSECT_HIST_BODY(IDX, START, LOAD)                                             \
    __shared__ unsigned short h[DISSECT_BINS];                                          \
    __shared__ u32 sink[1];                                                             \
    for (u32 b = 0; b < DISSECT_BINS; ++b) h[b] = 0;                                    \
    IDX j = START;                                                                      \
    for (u64 i = 0; i < warm_steps; ++i) j = LOAD;                                      \
    dissect_keep(sink, (u32)j);                                                         \
    gb_stamp s = gb_stamp_begin();                                                      \
    for (u64 i = 0; i < steps; ++i) {                                                   \
        u32 t0 = dissect_clock();                                                       \
        j = LOAD;                                                                       \
        dissect_keep(sink, (u32)j);                                                     \
        u32 t1 = dissect_clock();                                                       \
        u32 bin = (t1 - t0) >> DISSECT_BIN_SHIFT;                                       \
        h[bin < DISSECT_BINS ? bin : DISSECT_BINS - 1] += (unsigned short)1;            \
    }                                                                                   \
    gb_stamp_end(s, p);                                                                 \
    p->count += steps;                                                                  \
    p->sink = (u64)j;                                                                   \
    for (u32 b = 0; b < DISSECT_BINS; ++b)                                              \
        if (h[b]) hist[b] += h[b];

extern "C" __global__ void dissect_hist_ca(const u32* __restrict__ a, u64 warm_steps, u64 steps, u64* hist,
                                           gb_probe* p) {
    DISSECT_HIST_BODY(u32, 0u, gb_ld_ca(a + j))
}

extern "C" __global__ void dissect_hist_cg(const u32* __restrict__ a, u64 warm_steps, u64 steps, u64* hist,
                                           gb_probe* p) {
    DISSECT_HIST_BODY(u32, 0u, gb_ld_cg(a + j))
}

extern "C" __global__ void dissect_hist_nc(const u32* __restrict__ a, u64 warm_steps, u64 steps, u64* hist,
                                           gb_probe* p) {
    DISSECT_HIST_BODY(u32, 0u, gb_ld_nc(a + j))
}

extern "C" __global__ void dissect_hist_tex(u64 tex, u64 warm_steps, u64 steps, u64* hist, gb_probe* p) {
    DISSECT_HIST_BODY(u32, 0u, dissect_tex(tex, j))
}

extern "C" __global__ void dissect_hist_const(u64 warm_steps, u64 steps, u64* hist, gb_probe* p) {
    DISSECT_HIST_BODY(u32, 0u, dissect_ld_const(j))
}

extern "C" __global__ void dissect_hist_tlb(const u64* __restrict__ a, u64 warm_steps, u64 steps, u64* hist,
                                            gb_probe* p) {
    DISSECT_HIST_BODY(u64, 0ull, dissect_ld_cg64(a + j))
}

// The L2-path histogram chase on one chosen SM, so that a latency can be measured from every SM
// in turn (an L2 or DRAM latency depends on where the SM sits). Launched as a grid of one-thread
// blocks spread over every SM: the first block on `target_sm` to raise claims[target_sm] to
// `launch` chases, every other block leaves at once. The chase starts at element `start`, so
// that SMs chasing a footprint beyond the L2 from a cold start read different pages.
extern "C" __global__ void dissect_hist_cg_sm(const u32* __restrict__ a, u32 start, u64 warm_steps, u64 steps,
                                              u64* hist, gb_probe* p, u32* claims, u32 slots, u32 launch,
                                              u32 target_sm) {
    u32 sm = gb_smid();
    if (sm >= slots || sm != target_sm) return;
    if (atomicMax(claims + sm, launch) >= launch) return;
    DISSECT_HIST_BODY(u32, start, gb_ld_cg(a + j))
}

// The timing bracket around no load: its cycles are the overhead in every recorded access.
extern "C" __global__ void dissect_timer(u64 warm_steps, u64 steps, u64* hist, gb_probe* p) {
    DISSECT_HIST_BODY(u32, 1u, (j ^ (u32)i))
}

#define DISSECT_TRACE_BODY(LOAD)                                                        \
    extern __shared__ unsigned short rec[];                                             \
    __shared__ u32 sink[1];                                                             \
    u32 j = start;                                                                      \
    for (u64 i = 0; i < warm_steps; ++i) j = LOAD;                                      \
    dissect_keep(sink, j);                                                              \
    for (u32 i = 0; i < steps; ++i) {                                                   \
        u32 t0 = dissect_clock();                                                       \
        j = LOAD;                                                                       \
        dissect_keep(sink, j);                                                          \
        u32 t1 = dissect_clock();                                                       \
        u32 dt = t1 - t0;                                                               \
        rec[i] = (unsigned short)(dt < 0xFFFFu ? dt : 0xFFFFu);                         \
    }                                                                                   \
    for (u32 i = 0; i < steps; ++i) out[i] = rec[i];                                    \
    p->count += steps;                                                                  \
    p->sink = j;

extern "C" __global__ void dissect_trace_ca(const u32* __restrict__ a, u32 start, u64 warm_steps, u32 steps,
                                            unsigned short* out, gb_probe* p) {
    DISSECT_TRACE_BODY(gb_ld_ca(a + j))
}

extern "C" __global__ void dissect_trace_cg(const u32* __restrict__ a, u32 start, u64 warm_steps, u32 steps,
                                            unsigned short* out, gb_probe* p) {
    DISSECT_TRACE_BODY(gb_ld_cg(a + j))
}

extern "C" __global__ void dissect_trace_nc(const u32* __restrict__ a, u32 start, u64 warm_steps, u32 steps,
                                            unsigned short* out, gb_probe* p) {
    DISSECT_TRACE_BODY(gb_ld_nc(a + j))
}

extern "C" __global__ void dissect_trace_tex(u64 tex, u32 start, u64 warm_steps, u32 steps, unsigned short* out,
                                             gb_probe* p) {
    DISSECT_TRACE_BODY(dissect_tex(tex, j))
}

// One warp; thread t chases its own self-loop at element (t % distinct) * spacing of the
// constant array (which holds a[i] = i), so every access of the warp reads `distinct`
// different addresses. Thread 0 times the warp's accesses.
extern "C" __global__ void dissect_const_divergent(u32 distinct, u32 spacing, u32 steps, gb_probe* p) {
    u32 j = (threadIdx.x % distinct) * spacing;
    for (u32 i = 0; i < 64; ++i) j = dissect_const[j];
    __syncwarp();
    u64 c0 = gb_clock();
    for (u32 i = 0; i < steps; i += 4) {
        j = dissect_const[j]; j = dissect_const[j]; j = dissect_const[j]; j = dissect_const[j];
    }
    if (j == 0xFFFFFFFFu) p->count = 0;
    u64 c1 = gb_clock();
    if (threadIdx.x == 0) {
        p->cycles += c1 - c0;
        p->count += steps;
    }
    atomicXor(&p->sink, (u64)j);
}
