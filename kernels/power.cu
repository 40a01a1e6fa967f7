// A sustained, power-hungry load: every warp issues tensor-core MMAs (mma.sync m16n8k16,
// f16 inputs, f32 accumulators) from four independent accumulator sets, and streams 16-byte
// loads from a large array between them. Used to make the card reach its power limit without
// touching its settings. Meanwhile the first warp of block 0 measures: its lane 0 chases
// `chase_steps` pointers through shared memory (which nothing else in the kernel uses, so the
// load's traffic cannot lengthen it) and stamps clock64 / %globaltimer around the chase, so each
// launch yields a latency in ns (raw) and in cycles (normalised) at whatever clock the power
// limit allows.

#define GB_POWER_CHASE_WORDS 1024

extern "C" __global__ void power_load(const float4* __restrict__ stream, u64 n4, u32 iters, gb_probe* p,
                                      float* sink, u32 chase_steps) {
    __shared__ u32 chain[GB_POWER_CHASE_WORDS];
    u32 lane = threadIdx.x & 31;
    if (blockIdx.x == 0 && threadIdx.x < 32) {
        for (u32 w = lane; w < GB_POWER_CHASE_WORDS; w += 32) chain[w] = (w + 33) % GB_POWER_CHASE_WORDS;
        __syncwarp();
        if (lane == 0) {
            u32 j = (u32)p->sink % GB_POWER_CHASE_WORDS;
            gb_stamp s = gb_stamp_begin();
            for (u32 k = 0; k < chase_steps; ++k) j = chain[j];
            if (j == 0xFFFFFFFFu) p->count = 0;  // waits for the last load before the clock
            gb_stamp_end(s, p);
            p->count += chase_steps;
            p->sink = j;
        }
        return;
    }
    u32 a0 = 0x3c003c00u ^ lane, a1 = 0x3c003c00u, a2 = 0x3c003c00u, a3 = 0x3c003c00u;
    u32 b0 = 0x3c003c00u, b1 = 0x3c00u ^ (lane << 1);
    float d[4][4];
#pragma unroll
    for (int k = 0; k < 4; ++k) { d[k][0] = d[k][1] = d[k][2] = d[k][3] = 0.0f; }
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 step = (u64)gridDim.x * blockDim.x;
    float acc = 0.0f;
    for (u32 it = 0; it < iters; ++it) {
#pragma unroll
        for (int r = 0; r < 2; ++r) {
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                asm volatile(
                    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                    : "+f"(d[k][0]), "+f"(d[k][1]), "+f"(d[k][2]), "+f"(d[k][3])
                    : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
            }
        }
        float4 v = stream[i];
        acc += (v.x + v.y) + (v.z + v.w);
        i += step;
        if (i >= n4) i -= n4;
    }
    float total = acc;
#pragma unroll
    for (int k = 0; k < 4; ++k) total += d[k][0] + d[k][1] + d[k][2] + d[k][3];
    if (total == 1.2345f) *sink = total;  // keeps the work; never true for these inputs
}
