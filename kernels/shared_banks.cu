// Shared-memory latency under bank conflicts (seed 002 section II, seed 001 section 6.2).
// One block of T threads; s[i] = (i + stride) % n; thread t starts at (t * stride) % n and
// chases j = s[j]. Threads of a warp touch (t + k) * stride at step k: a stride of 2^m words
// puts min(32, 2^m) threads of a warp in one bank. Each thread times its own chase; the probe
// collects the sum of per-thread cycles, the per-thread maximum, and the access count. Thread
// 0 also stamps clock64 and %globaltimer around its chase into `clk` (the SM clock).

extern "C" __global__ void smem_chase(u32 stride, u32 n, u32 steps, gb_probe* p, u64* max_cycles, gb_probe* clk) {
    extern __shared__ u32 s[];
    for (u32 i = threadIdx.x; i < n; i += blockDim.x) s[i] = (i + stride) % n;
    __syncthreads();
    u32 j = (threadIdx.x * stride) % n;
    // one untimed lap of the same steps settles instruction caches and warp scheduling
    for (u32 i = 0; i < 32; ++i) j = s[j];
    __syncthreads();
    gb_stamp stamp = gb_stamp_begin();
    u64 c0 = gb_clock();
    for (u32 i = 0; i < steps; i += 8) {
        j = s[j]; j = s[j]; j = s[j]; j = s[j];
        j = s[j]; j = s[j]; j = s[j]; j = s[j];
    }
    if (j == 0xFFFFFFFFu) p->count = 0;  // waits for the last load before the clock
    u64 c1 = gb_clock();
    if (threadIdx.x == 0) gb_stamp_end(stamp, clk);
    u64 dc = c1 - c0;
    atomicAdd(&p->cycles, dc);
    atomicMax(max_cycles, dc);
    atomicAdd(&p->count, (u64)steps);
    atomicXor(&p->sink, (u64)j);
}
