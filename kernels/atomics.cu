// Global atomic throughput (seed 003): every thread of a full grid adds 1 to the word at
// target[gid & mask], `iters` times. mask = 0: one address for the whole GPU; 7: eight words of
// one 32-byte sector; 31: thirty-two words of one 128-byte line; 0xffffffff: a word per thread.
// The result is unused, so the compiler emits fire-and-forget reductions (RED); the words are
// checked afterwards against the number of additions.

extern "C" __global__ void atomic_add_u32(u32* target, u32 mask, u32 iters, gb_probe* p) {
    u32 gid = blockIdx.x * blockDim.x + threadIdx.x;
    u32* t = target + (gid & mask);
    bool timer = blockIdx.x == 0 && threadIdx.x == 0;
    gb_stamp s;
    if (timer) s = gb_stamp_begin();
    for (u32 i = 0; i < iters; ++i) atomicAdd(t, 1u);
    if (blockIdx.x == 0) __syncthreads();
    if (timer) { gb_stamp_end(s, p); p->count += 1; }
}

extern "C" __global__ void sum_words(const u32* x, u64 n, u64* total) {
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 step = (u64)gridDim.x * blockDim.x;
    u64 local = 0;
    for (; i < n; i += step) local += x[i];
    if (local) atomicAdd(total, local);
}
