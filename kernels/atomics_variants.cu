// Atomics beyond atomicAdd on 32-bit words (seed 003): contention (k threads per address),
// 64-bit and floating-point adds, compare-and-swap, dependent-chain latency, and shared-memory
// atomics. Results of adds are unused, so the compiler emits reductions (RED) where it can;
// CAS and the latency chains use the returned value.

// k consecutive threads per address: word gid / k (a warp covers 32 / k words for k <= 32).
extern "C" __global__ void atomv_contention(u32* target, u32 k, u32 iters, gb_probe* p) {
    u32 gid = blockIdx.x * blockDim.x + threadIdx.x;
    u32* t = target + gid / k;
    bool timer = blockIdx.x == 0 && threadIdx.x == 0;
    gb_stamp s;
    if (timer) s = gb_stamp_begin();
    for (u32 i = 0; i < iters; ++i) atomicAdd(t, 1u);
    if (blockIdx.x == 0) __syncthreads();
    if (timer) { gb_stamp_end(s, p); p->count += 1; }
}

// k threads per address, interleaved: word gid mod (threads / k), so the threads sharing a word
// belong to different warps and SMs.
extern "C" __global__ void atomv_interleaved(u32* target, u32 words, u32 iters, gb_probe* p) {
    u32 gid = blockIdx.x * blockDim.x + threadIdx.x;
    u32* t = target + gid % words;
    bool timer = blockIdx.x == 0 && threadIdx.x == 0;
    gb_stamp s;
    if (timer) s = gb_stamp_begin();
    for (u32 i = 0; i < iters; ++i) atomicAdd(t, 1u);
    if (blockIdx.x == 0) __syncthreads();
    if (timer) { gb_stamp_end(s, p); p->count += 1; }
}

// Adds of 1 to word gid & mask: 0 for one address, ~0 for a word per thread.
#define GB_ATOMV_ADD(NAME, T, ONE)                                                       \
extern "C" __global__ void NAME(T* target, u32 mask, u32 iters, gb_probe* p) {           \
    u32 gid = blockIdx.x * blockDim.x + threadIdx.x;                                     \
    T* t = target + (gid & mask);                                                        \
    bool timer = blockIdx.x == 0 && threadIdx.x == 0;                                    \
    gb_stamp s;                                                                          \
    if (timer) s = gb_stamp_begin();                                                     \
    for (u32 i = 0; i < iters; ++i) atomicAdd(t, ONE);                                   \
    if (blockIdx.x == 0) __syncthreads();                                                \
    if (timer) { gb_stamp_end(s, p); p->count += 1; }                                    \
}

GB_ATOMV_ADD(atomv_add_u64, unsigned long long, 1ull)
GB_ATOMV_ADD(atomv_add_f32, float, 1.0f)
GB_ATOMV_ADD(atomv_add_f64, double, 1.0)

// Compare-and-swap increments of word gid / k: each thread retries until it has made `iters`
// increments; attempts that lost a race are counted in p->sink. With k = 1 every CAS succeeds.
extern "C" __global__ void atomv_cas(u32* target, u32 k, u32 iters, gb_probe* p) {
    u32 gid = blockIdx.x * blockDim.x + threadIdx.x;
    u32* t = target + gid / k;
    bool timer = blockIdx.x == 0 && threadIdx.x == 0;
    gb_stamp s;
    if (timer) s = gb_stamp_begin();
    u32 v = *(volatile u32*)t;
    u32 failed = 0;
    for (u32 done = 0; done < iters;) {
        u32 r = atomicCAS(t, v, v + 1);
        if (r == v) {
            ++done;
            v = v + 1;
        } else {
            ++failed;
            v = r;
        }
    }
    if (failed) atomicAdd(&p->sink, (u64)failed);
    if (blockIdx.x == 0) __syncthreads();
    if (timer) { gb_stamp_end(s, p); p->count += 1; }
}

// Dependent chains in one thread: each atomic's address depends on the previous one's result
// through `mask` (0 at run time), so they cannot overlap; the chain's own address arithmetic (a
// few integer instructions) is part of every step. Global chains walk LAT_LINES words 128 bytes
// apart, one per L2 line, so the slices that serve them, near and far, are all visited; how far
// they are still depends on the SM (one SM's chain differed between H100 cards by up to 6 %),
// so the global chains run on every SM at once (below). Shared chains stay on one word. CAS steps
// compare with the value the previous step returned and count the comparisons that failed in
// p->sink (the host checks that the words hold exactly the successful operations). A warm lap
// brings the lines into L2 (the word into shared memory) before the stamp.

#define LAT_LINES 256
#define LAT_STRIDE 32

template <bool CAS> __device__ __forceinline__ u32 atomv_lat_op(u32* w, u32 v, u32& failed) {
    if (CAS) {
        u32 r = atomicCAS(w, v, v + 1);
        failed += r != v;
        return r;
    }
    return atomicAdd(w, 1u);
}

template <bool CAS, u32 LINES>
__device__ __forceinline__ void atomv_lat_chain(u32* w, u32 mask, u32 n, gb_probe* p) {
    u32 v = 0, failed = 0;
    for (u32 i = 0; i < LINES; ++i) v = atomv_lat_op<CAS>(w + ((i + (v & mask)) & (LINES - 1)) * LAT_STRIDE, v, failed);
    gb_stamp s = gb_stamp_begin();
    for (u32 i = 0; i < n; ++i) v = atomv_lat_op<CAS>(w + ((i + (v & mask)) & (LINES - 1)) * LAT_STRIDE, v, failed);
    if (v == 0xFFFFFFFFu) p->count = 0;  // waits for the last result
    gb_stamp_end(s, p);
    p->count += n;
    p->sink += failed;
}

// atomv_lat_shared_<op>(u32* target, u32 mask, u32 n, gb_probe* p): one thread.
#define GB_ATOMV_LAT_SHARED(NAME, CAS)                                                   \
extern "C" __global__ void NAME(u32* target, u32 mask, u32 n, gb_probe* p) {             \
    __shared__ u32 w[1];                                                                 \
    w[0] = *target;                                                                      \
    atomv_lat_chain<CAS, 1>(w, mask, n, p);                                              \
    *target = w[0];                                                                      \
}

// The global chains from every SM at once: a grid of one-thread blocks, several per SM; on each
// SM the first block of a launch claims the SM (as the every-SM chases of kernels/latency.cu) and
// walks LAT_LINES lines of its own, at target + sm * LAT_LINES * LAT_STRIDE, into its own probe.
// One dependent atomic in flight per SM, on lines no other SM touches: the L2 sees 132 requests
// at a time, not a load. The mean over SMs does not depend on which SM a single chain landed on.
#define GB_ATOMV_LAT_EVERY_SM(NAME, CAS)                                                 \
extern "C" __global__ void NAME(u32* target, u32 mask, u32 n, gb_probe* probes,          \
                                u32* claims, u32 slots, u32 launch) {                    \
    u32 sm = gb_smid();                                                                  \
    if (sm >= slots) return;                                                             \
    if (atomicMax(claims + sm, launch) >= launch) return;                                \
    atomv_lat_chain<CAS, LAT_LINES>(target + (u64)sm * LAT_LINES * LAT_STRIDE, mask, n,  \
                                    probes + sm);                                        \
}

GB_ATOMV_LAT_EVERY_SM(atomv_lat_sm_global_add, false)
GB_ATOMV_LAT_EVERY_SM(atomv_lat_sm_global_cas, true)
GB_ATOMV_LAT_SHARED(atomv_lat_shared_add, false)
GB_ATOMV_LAT_SHARED(atomv_lat_shared_cas, true)

// Shared-memory atomicAdd throughput: k consecutive threads per word of a block-private array;
// afterwards each block adds its words to *total, which the host checks. Per-SM windows.
extern "C" __global__ void atomv_shared(u32 k, u32 iters, gb_sm_window* win, u32 slots, unsigned long long* total) {
    extern __shared__ u32 words[];
    for (u32 i = threadIdx.x; i < blockDim.x; i += blockDim.x) words[i] = 0;
    __syncthreads();
    u32* w = words + threadIdx.x / k;
    gb_stamp s = gb_stamp_begin();
    for (u32 i = 0; i < iters; ++i) atomicAdd(w, 1u);
    gb_window_close(win, slots, s, (u64)iters * 32);
    __syncthreads();
    // One warp sums the block's words and adds them with one atomic: an atomic per word on one
    // global address from every block (270k at one thread per word) queued behind the window and
    // took 90 % of it.
    if (threadIdx.x < 32) {
        u32 n = (blockDim.x + k - 1) / k;
        unsigned long long sum = 0;
        for (u32 i = threadIdx.x; i < n; i += 32) sum += words[i];
        for (u32 d = 16; d > 0; d >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, d);
        if (threadIdx.x == 0) atomicAdd(total, sum);
    }
}

GB_SM_FOLD_KERNEL(atomv_fold)

// Sum of n words, converted to integers (the float words hold exact integer counts).
#define GB_ATOMV_SUM(NAME, T)                                                             \
extern "C" __global__ void NAME(const T* x, u64 n, unsigned long long* total) {          \
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;                                   \
    u64 step = (u64)gridDim.x * blockDim.x;                                               \
    unsigned long long local = 0;                                                         \
    for (; i < n; i += step) local += (unsigned long long)x[i];                           \
    if (local) atomicAdd(total, local);                                                   \
}

GB_ATOMV_SUM(atomv_sum_u32, u32)
GB_ATOMV_SUM(atomv_sum_u64, unsigned long long)
GB_ATOMV_SUM(atomv_sum_f32, float)
GB_ATOMV_SUM(atomv_sum_f64, double)
