// Global-memory access patterns (seed 003): coalesced, misaligned and strided 32-bit loads;
// 8- to 128-bit loads; and the PTX cache operators.
//
// One body for all: at iteration i, a thread's k-th load reads element
// (((i * ILP + k) * T + t) * stride + offset) mod E, with t the thread's index in the grid, T the
// grid's threads and E the footprint in elements (a power of two), so consecutive lanes read
// elements `stride` apart and a warp covers the footprint in order. The loaded values are folded
// and consumed through a runtime sentinel; work reported: the bytes the warp asked for (useful
// bytes), not the sectors the memory system moved.

#define GB_AP_LOADS(OPN, PTXOP)                                                                            \
struct ap_##OPN##_1 {                                                                                      \
    enum { BYTES = 1 };                                                                                    \
    static __device__ __forceinline__ u32 ld(const char* p) {                                              \
        u32 a;                                                                                             \
        asm volatile("ld.global" PTXOP ".u8 %0, [%1];" : "=r"(a) : "l"(p));                                \
        return a;                                                                                          \
    }                                                                                                      \
};                                                                                                         \
struct ap_##OPN##_2 {                                                                                      \
    enum { BYTES = 2 };                                                                                    \
    static __device__ __forceinline__ u32 ld(const char* p) {                                              \
        u32 a;                                                                                             \
        asm volatile("ld.global" PTXOP ".u16 %0, [%1];" : "=r"(a) : "l"(p));                               \
        return a;                                                                                          \
    }                                                                                                      \
};                                                                                                         \
struct ap_##OPN##_4 {                                                                                      \
    enum { BYTES = 4 };                                                                                    \
    static __device__ __forceinline__ u32 ld(const char* p) {                                              \
        u32 a;                                                                                             \
        asm volatile("ld.global" PTXOP ".u32 %0, [%1];" : "=r"(a) : "l"(p));                               \
        return a;                                                                                          \
    }                                                                                                      \
};                                                                                                         \
struct ap_##OPN##_8 {                                                                                      \
    enum { BYTES = 8 };                                                                                    \
    static __device__ __forceinline__ u32 ld(const char* p) {                                              \
        u32 a, b;                                                                                          \
        asm volatile("ld.global" PTXOP ".v2.u32 {%0, %1}, [%2];" : "=r"(a), "=r"(b) : "l"(p));             \
        return a ^ b;                                                                                      \
    }                                                                                                      \
};                                                                                                         \
struct ap_##OPN##_16 {                                                                                     \
    enum { BYTES = 16 };                                                                                   \
    static __device__ __forceinline__ u32 ld(const char* p) {                                              \
        u32 a, b, c, d;                                                                                    \
        asm volatile("ld.global" PTXOP ".v4.u32 {%0, %1, %2, %3}, [%4];"                                   \
                     : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(p));                                       \
        return a ^ b ^ c ^ d;                                                                              \
    }                                                                                                      \
};

// On sm_90: plain = LDG.E, .ca = LDG.E.STRONG.SM, .cg = LDG.E.STRONG.GPU, .cs = LDG.E.EF
// (evict-first), .cv = LDG.E.STRONG.SYS, .lu = LDG.E.LU (last use), .nc = LDG.E.CONSTANT.
GB_AP_LOADS(ld, "")
GB_AP_LOADS(ca, ".ca")
GB_AP_LOADS(cg, ".cg")
GB_AP_LOADS(cs, ".cs")
GB_AP_LOADS(cv, ".cv")
GB_AP_LOADS(lu, ".lu")
GB_AP_LOADS(nc, ".nc")

#define AP_ILP 4

template <class L>
__device__ __forceinline__ void ap_body(const char* buf, u32 stride, u32 offset, u32 emask, u32 iters,
                                        gb_sm_window* win, u32 slots, u32* sink, u32 sentinel) {
    const u32 T = gridDim.x * blockDim.x;
    const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    u32 e[AP_ILP];
#pragma unroll
    for (int k = 0; k < AP_ILP; ++k) e[k] = (k * T + t) * stride + offset;
    const u32 step = AP_ILP * T * stride;
    u32 acc = 0;
    gb_stamp s = gb_stamp_begin();
#pragma unroll 1
    for (u32 i = 0; i < iters; ++i) {
        u32 x = 0;
#pragma unroll
        for (int k = 0; k < AP_ILP; ++k) {
            x ^= L::ld(buf + (u64)(e[k] & emask) * L::BYTES);
            e[k] += step;
        }
        acc += x;
    }
    if (acc == sentinel) sink[t] = acc;
    gb_window_close(win, slots, s, (u64)iters * AP_ILP * 32 * L::BYTES);
}

// ap_<kind>(const char* buf, u32 stride, u32 offset, u32 emask, u32 iters, gb_sm_window*, u32
// slots, u32* sink, u32 sentinel)
#define GB_AP_KERNEL(NAME, L)                                                                              \
extern "C" __global__ void NAME(const char* buf, u32 stride, u32 offset, u32 emask, u32 iters,            \
                                gb_sm_window* win, u32 slots, u32* sink, u32 sentinel) {                   \
    ap_body<L>(buf, stride, offset, emask, iters, win, slots, sink, sentinel);                            \
}

GB_AP_KERNEL(ap_width_1, ap_ld_1)
GB_AP_KERNEL(ap_width_2, ap_ld_2)
GB_AP_KERNEL(ap_width_4, ap_ld_4)
GB_AP_KERNEL(ap_width_8, ap_ld_8)
GB_AP_KERNEL(ap_width_16, ap_ld_16)
GB_AP_KERNEL(ap_op_ld, ap_ld_16)
GB_AP_KERNEL(ap_op_ca, ap_ca_16)
GB_AP_KERNEL(ap_op_cg, ap_cg_16)
GB_AP_KERNEL(ap_op_cs, ap_cs_16)
GB_AP_KERNEL(ap_op_cv, ap_cv_16)
GB_AP_KERNEL(ap_op_lu, ap_lu_16)
GB_AP_KERNEL(ap_op_nc, ap_nc_16)

GB_SM_FOLD_KERNEL(ap_fold)

// Fills n 32-bit words with a pattern.
extern "C" __global__ void ap_fill(u32* buf, u32 n) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) buf[i] = i * 2654435761u;
}
