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
// through `mask` (0 at run time), so they cannot overlap. p gets cycles, ns and the op count.
#define GB_ATOMV_LATENCY(NAME, SETUP, OP, FINISH)                                        \
extern "C" __global__ void NAME(u32* target, u32 mask, u32 n, gb_probe* p) {             \
    SETUP;                                                                               \
    u32 v = 0;                                                                           \
    v = OP; /* warm: the line comes to L2 / the word into shared memory */               \
    gb_stamp s = gb_stamp_begin();                                                       \
    for (u32 i = 0; i < n; ++i) v = OP;                                                  \
    if (v == 0xFFFFFFFFu) p->count = 0; /* waits for the last result */                 \
    gb_stamp_end(s, p);                                                                  \
    p->count += n;                                                                       \
    FINISH;                                                                              \
}

// add: v = old value; CAS: the expected value of the next CAS (old + 1 after a success, the value
// seen after a failure, which only the warm-up CAS of a later launch meets).
#define GB_CAS_STEP(W) (r = atomicCAS(W + (v & mask), v, v + 1), r == v ? v + 1 : r)
GB_ATOMV_LATENCY(atomv_lat_global_add, u32* w = target, atomicAdd(w + (v & mask), 1u), (void)0)
GB_ATOMV_LATENCY(atomv_lat_global_cas, u32* w = target; u32 r, GB_CAS_STEP(w), (void)0)
GB_ATOMV_LATENCY(atomv_lat_shared_add, __shared__ u32 w[32]; w[0] = *target, atomicAdd(w + (v & mask), 1u),
                 *target = w[0])
GB_ATOMV_LATENCY(atomv_lat_shared_cas, __shared__ u32 w[32]; w[0] = *target; u32 r, GB_CAS_STEP(w), *target = w[0])

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
    if (threadIdx.x < (blockDim.x + k - 1) / k) atomicAdd(total, (unsigned long long)words[threadIdx.x]);
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
