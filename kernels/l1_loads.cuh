// L1 data-cache load bandwidth in bytes per clock per SM: loads and kernel body shared by
// l1_bandwidth.cu (the configurations the regression set searches) and l1_bandwidth_sweep.cu
// (the rest of the full sweep). Bytes per clock per SM (seed 004; per-SM timing of seed 001
// section 6.1, see gb_window_close).
//
// Every warp reads the same ILP * 32 * W bytes (at most 4 KiB) round after round, so after the
// untimed warm round every load hits L1. A round is ILP independent loads of W bytes per lane
// at immediate offsets: lane * W + k * 32 * W, so one warp instruction covers 32 * W contiguous
// bytes, one to four 128-byte L1 wavefronts without bank conflicts. The round's values are folded
// into `x`, and the next round's address depends on `x` through `zmask` (0 at run time, unknown to
// the compiler): exactly ILP loads per warp are in flight, no round can be hoisted out of the
// loop or merged with another, and every loaded word is used.
//
// What it takes to reach the 128 B/clk/SM of the L1 data path:
// - bytes in flight: one warp round moves ILP * 32 * W bytes per L1 hit latency (about 40
//   cycles), so warps * ILP * 32 * W / 40 must exceed 128, e.g. 8 warps at ILP 2 for 128-bit;
// - issue slots: an SM issues 4 warp instructions per clock (one per sub-partition, no dual
//   issue since Volta) and the L1 returns one 128-byte wavefront per clock. A round costs ILP
//   loads + about ILP * W / 8 LOP3 folds + 4 instructions of address update and loop (unrolled
//   by 4), i.e. 10 slots per 512 B at 32-bit and ILP 4 (2.5 per clock: fits) but 5 slots per
//   128 B at 32-bit and ILP 1 (5 per clock: capped at 80%). 128-bit loads need 1-2 slots per
//   wavefront, which is why wide accesses are the ones that reach the limit (seed 004, Ampere).
// The configuration search picks the ILP and warp count per width from measurements.

// Loads of W bytes with one PTX cache operator, the W/4 words folded into one. On sm_90, plain
// `ld.global` is LDG.E (weak, cached in L1), `.ca` is LDG.E.STRONG.SM (also through L1) and `.nc`
// is LDG.E.CONSTANT (the read-only path of the same array).
#define GB_L1_LOADS(OPN, PTXOP)                                                                            \
template <int W> __device__ __forceinline__ u32 l1_ld_##OPN(const char* p);                                \
template <> __device__ __forceinline__ u32 l1_ld_##OPN<4>(const char* p) {                                 \
    u32 a;                                                                                                 \
    asm volatile("ld.global" PTXOP ".u32 %0, [%1];" : "=r"(a) : "l"(p));                                   \
    return a;                                                                                              \
}                                                                                                          \
template <> __device__ __forceinline__ u32 l1_ld_##OPN<8>(const char* p) {                                 \
    u32 a, b;                                                                                              \
    asm volatile("ld.global" PTXOP ".v2.u32 {%0, %1}, [%2];" : "=r"(a), "=r"(b) : "l"(p));                 \
    return a ^ b;                                                                                          \
}                                                                                                          \
template <> __device__ __forceinline__ u32 l1_ld_##OPN<16>(const char* p) {                                \
    u32 a, b, c, d;                                                                                        \
    asm volatile("ld.global" PTXOP ".v4.u32 {%0, %1, %2, %3}, [%4];"                                       \
                 : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(p));                                           \
    return a ^ b ^ c ^ d;                                                                                  \
}                                                                                                          \
struct l1_op_##OPN {                                                                                       \
    template <int W> static __device__ __forceinline__ u32 ld(const char* p) { return l1_ld_##OPN<W>(p); } \
};

GB_L1_LOADS(ld, "")
GB_L1_LOADS(ca, ".ca")
GB_L1_LOADS(nc, ".nc")

// One round: ILP loads, folded.
template <class OP, int W, int ILP> __device__ __forceinline__ u32 l1_round(const char* p) {
    u32 x = 0;
#pragma unroll
    for (int k = 0; k < ILP; ++k) x ^= OP::template ld<W>(p + k * 32 * W);
    return x;
}

// `rounds` is a multiple of 4. Work reported: bytes loaded by the warp in the timed rounds.
template <class OP, int W, int ILP>
__device__ __forceinline__ void l1_body(const char* buf, u32 zmask, u32 rounds, gb_sm_window* win, u32 slots,
                                        u32* sink, u32 sentinel) {
    const char* p = buf + (threadIdx.x & 31) * W;
    u32 acc = l1_round<OP, W, ILP>(p);  // warm round: brings the lines into this SM's L1
    p += acc & zmask;
    gb_stamp s = gb_stamp_begin();
#pragma unroll 1
    for (u32 r = 0; r < rounds; r += 4) {
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            u32 x = l1_round<OP, W, ILP>(p);
            acc += x;
            p += x & zmask;
        }
    }
    if (acc == sentinel) sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
    gb_window_close(win, slots, s, (u64)rounds * ILP * 32 * W);
}

#define GB_L1_KERNEL(OPN, W, ILP)                                                                    \
extern "C" __global__ void l1_##OPN##_w##W##_ilp##ILP(const char* buf, u32 zmask, u32 rounds,       \
                                                        gb_sm_window* win, u32 slots, u32* sink,    \
                                                        u32 sentinel) {                             \
    l1_body<l1_op_##OPN, W, ILP>(buf, zmask, rounds, win, slots, sink, sentinel);                  \
}
