// Arithmetic instruction latency and throughput (seed 002 section IV): operations and kernel
// bodies shared by instructions.cu (single instructions), instructions_ieee.cu (IEEE division and
// square root) and instructions_sweep.cu (the full profile's ILP sweep).
//
// Every operation is one PTX instruction in inline asm: x = op(x, a, b) with a, b kernel
// parameters, so that NVVM cannot fold a chain. ptxas still simplifies integer adds with a
// loop-invariant operand (x + b + b + b + b becomes x + 4b), so the integer add chain is a pair
// x = x + y; y = y + x, where both operands keep changing; ptxas then spreads the adds over
// IADD3 (integer pipe) and IMAD.IADD (FMA pipe), as it does in real code. Likewise on sm_90 it
// alternates half2 arithmetic between HFMA2/HADD2/HMUL2 and HFMA2.MMA (the second FP16 pipe),
// and it folds rcp(rcp(x)) into x, so the reciprocal chain negates its operand (a free modifier).
// tests/sass.rs checks the instruction counts.
//
// Latency: one warp runs one dependent chain per lane, LAT ops per round; clock64 over the
// rounds / ops is the latency. The comparison of the result with a runtime sentinel before the
// closing stamp makes the clock wait for the last op; the loop's own 2-3 instructions issue in the
// shadow of the chain.
//
// Throughput: every warp runs ILP independent chains, interleaved so that consecutive
// instructions are independent; a round is OP::BODY ops per lane. Ops per clock per SM come from
// the per-SM windows. For full-rate ops (FP32, FP16x2 on sm_90) an SM issues one warp
// instruction per sub-partition per clock, so every non-arithmetic instruction in the loop costs
// a slot: with 512 ops per round the loop's 3 instructions cost 0.6%. ILP x warps must cover
// the latency (4 cycles for FFMA: 4 independent FFMAs in flight per sub-partition); ILP 8 with
// 8+ warps per sub-partition leaves the pipe no idle cycle, at the start and the end of the
// window too (one warp alone keeps it busy).
//
// Values: a, b and the seeds are chosen by the host so that chains stay finite and normal where
// the op allows it (FMA converges to b / (1 - a)); the approximate special functions run into a
// fixed point, inf or NaN within a few steps, which the special-function unit handles at the
// same rate. Inputs, the sentinel and the sink travel as 64-bit patterns.

template <class T> __device__ __forceinline__ T gb_from_bits(u64 v);
template <> __device__ __forceinline__ float gb_from_bits<float>(u64 v) { return __uint_as_float((u32)v); }
template <> __device__ __forceinline__ double gb_from_bits<double>(u64 v) { return __longlong_as_double((long long)v); }
template <> __device__ __forceinline__ u32 gb_from_bits<u32>(u64 v) { return (u32)v; }

__device__ __forceinline__ u64 gb_to_bits(float x) { return __float_as_uint(x); }
__device__ __forceinline__ u64 gb_to_bits(double x) { return (u64)__double_as_longlong(x); }
__device__ __forceinline__ u64 gb_to_bits(u32 x) { return x; }

// A distinct start value per chain k, so that no two chains are the same computation.
__device__ __forceinline__ float gb_seed(float b, u32 k) { return b + (float)k * 0.125f; }
__device__ __forceinline__ double gb_seed(double b, u32 k) { return b + (double)k * 0.125; }
__device__ __forceinline__ u32 gb_seed(u32 b, u32 k) { return b ^ k; }

// An operation: value type T, chain state S, BODY ops per throughput round, LAT ops per latency
// round, RESULTS per op and lane (2 for half2), PER_STEP ops per step of the state.
#define GB_OP_COMMON(TY, BODYN, LATN, RES)                                                           \
    typedef TY T;                                                                                    \
    typedef TY S;                                                                                    \
    enum { BODY = BODYN, LAT = LATN, RESULTS = RES, PER_STEP = 1 };                                  \
    static __device__ __forceinline__ S init(T b, u32 k) { return gb_seed(b, k); }                   \
    static __device__ __forceinline__ u64 bits(S x) { return gb_to_bits(x); }

// x = op(x, a, b)
#define GB_OP3(NAME, TY, C, BODYN, LATN, RES, PTX)                                                   \
struct op_##NAME {                                                                                   \
    GB_OP_COMMON(TY, BODYN, LATN, RES)                                                               \
    static __device__ __forceinline__ S step(S x, T a, T b) {                                        \
        S y;                                                                                         \
        asm(PTX " %0, %1, %2, %3;" : "=" C(y) : C(x), C(a), C(b));                                   \
        return y;                                                                                    \
    }                                                                                                \
};
// x = op(x, a)
#define GB_OP2A(NAME, TY, C, BODYN, LATN, RES, PTX)                                                  \
struct op_##NAME {                                                                                   \
    GB_OP_COMMON(TY, BODYN, LATN, RES)                                                               \
    static __device__ __forceinline__ S step(S x, T a, T b) {                                        \
        S y;                                                                                         \
        asm(PTX " %0, %1, %2;" : "=" C(y) : C(x), C(a));                                             \
        return y;                                                                                    \
    }                                                                                                \
};
// x = op(x, b)
#define GB_OP2B(NAME, TY, C, BODYN, LATN, RES, PTX)                                                  \
struct op_##NAME {                                                                                   \
    GB_OP_COMMON(TY, BODYN, LATN, RES)                                                               \
    static __device__ __forceinline__ S step(S x, T a, T b) {                                        \
        S y;                                                                                         \
        asm(PTX " %0, %1, %2;" : "=" C(y) : C(x), C(b));                                             \
        return y;                                                                                    \
    }                                                                                                \
};
// x = a op x (division)
#define GB_OPDIV(NAME, TY, C, BODYN, LATN, PTX)                                                      \
struct op_##NAME {                                                                                   \
    GB_OP_COMMON(TY, BODYN, LATN, 1)                                                                 \
    static __device__ __forceinline__ S step(S x, T a, T b) {                                        \
        S y;                                                                                         \
        asm(PTX " %0, %1, %2;" : "=" C(y) : C(a), C(x));                                             \
        return y;                                                                                    \
    }                                                                                                \
};
// x = op(x)
#define GB_OP1(NAME, TY, C, BODYN, LATN, PTX)                                                        \
struct op_##NAME {                                                                                   \
    GB_OP_COMMON(TY, BODYN, LATN, 1)                                                                 \
    static __device__ __forceinline__ S step(S x, T a, T b) {                                        \
        S y;                                                                                         \
        asm(PTX " %0, %1;" : "=" C(y) : C(x));                                                       \
        return y;                                                                                    \
    }                                                                                                \
};

struct gb_u32_pair {
    u32 x, y;
};
// Integer add: x = x + y; y = y + x (two dependent adds per step, see above).
struct op_int32_add {
    typedef u32 T;
    typedef gb_u32_pair S;
    enum { BODY = 256, LAT = 64, RESULTS = 1, PER_STEP = 2 };
    static __device__ __forceinline__ S init(T b, u32 k) { return S{b ^ k, b + k}; }
    static __device__ __forceinline__ u64 bits(S s) { return ((u64)s.y << 32) | s.x; }
    static __device__ __forceinline__ S step(S s, T a, T b) {
        asm("add.u32 %0, %0, %1;" : "+r"(s.x) : "r"(s.y));
        asm("add.u32 %0, %0, %1;" : "+r"(s.y) : "r"(s.x));
        return s;
    }
};

// Reciprocal of the negated value: ptxas folds rcp(rcp(x)) into x, but not rcp(-rcp(-x)), and
// the negation is a free operand modifier (MUFU.RCP R1, -R0).
struct op_sfu_rcp {
    GB_OP_COMMON(float, 128, 64, 1)
    static __device__ __forceinline__ S step(S x, T a, T b) {
        S y;
        asm("{ .reg .f32 t; neg.f32 t, %1; rcp.approx.ftz.f32 %0, t; }" : "=f"(y) : "f"(x));
        return y;
    }
};

GB_OP3(fp32_fma, float, "f", 512, 64, 1, "fma.rn.f32")
GB_OP2B(fp32_add, float, "f", 256, 64, 1, "add.rn.f32")
GB_OP2A(fp32_mul, float, "f", 256, 64, 1, "mul.rn.f32")
GB_OP3(fp64_fma, double, "d", 128, 64, 1, "fma.rn.f64")
GB_OP2B(fp64_add, double, "d", 128, 64, 1, "add.rn.f64")
GB_OP2A(fp64_mul, double, "d", 128, 64, 1, "mul.rn.f64")
GB_OP3(fp16x2_fma, u32, "r", 256, 64, 2, "fma.rn.f16x2")
GB_OP2B(fp16x2_add, u32, "r", 256, 64, 2, "add.rn.f16x2")
GB_OP2A(fp16x2_mul, u32, "r", 256, 64, 2, "mul.rn.f16x2")
GB_OP2A(int32_mul, u32, "r", 256, 64, 1, "mul.lo.u32")
GB_OP3(int32_mad, u32, "r", 256, 64, 1, "mad.lo.u32")
GB_OP1(sfu_rsqrt, float, "f", 128, 64, "rsqrt.approx.ftz.f32")
GB_OP1(sfu_ex2, float, "f", 128, 64, "ex2.approx.ftz.f32")
GB_OP1(sfu_lg2, float, "f", 128, 64, "lg2.approx.ftz.f32")
GB_OP1(sfu_sin, float, "f", 128, 64, "sin.approx.ftz.f32")
GB_OP1(sfu_cos, float, "f", 128, 64, "cos.approx.ftz.f32")
GB_OPDIV(fp32_div, float, "f", 16, 8, "div.rn.f32")
GB_OP1(fp32_sqrt, float, "f", 16, 8, "sqrt.rn.f32")
GB_OPDIV(fp64_div, double, "d", 16, 8, "div.rn.f64")
GB_OP1(fp64_sqrt, double, "d", 16, 8, "sqrt.rn.f64")

// One warp, one dependent chain per lane: p gets cycles, ns and the ops of lane 0.
template <class OP>
__device__ __forceinline__ void lat_body(u64 a_bits, u64 b_bits, u32 rounds, gb_probe* p, u64* sink, u64 sentinel) {
    typedef typename OP::T T;
    const T a = gb_from_bits<T>(a_bits), b = gb_from_bits<T>(b_bits);
    typename OP::S x = OP::init(b, threadIdx.x);
#pragma unroll
    for (int i = 0; i < 4; ++i) x = OP::step(x, a, b);  // warm: instruction cache, pipes
    if (OP::bits(x) == sentinel) sink[threadIdx.x] = OP::bits(x);
    __syncwarp();
    gb_stamp s = gb_stamp_begin();
#pragma unroll 1
    for (u32 r = 0; r < rounds; ++r) {
#pragma unroll
        for (int i = 0; i < OP::LAT / OP::PER_STEP; ++i) x = OP::step(x, a, b);
    }
    if (OP::bits(x) == sentinel) sink[threadIdx.x] = OP::bits(x);  // waits for the chain
    if (threadIdx.x == 0) {
        gb_stamp_end(s, p);
        p->count += (u64)rounds * OP::LAT;
    }
}

// ILP independent chains per lane; work reported: results (ops x RESULTS) of the warp.
template <class OP, int ILP>
__device__ __forceinline__ void thr_body(u64 a_bits, u64 b_bits, u32 rounds, gb_sm_window* win, u32 slots, u64* sink,
                                         u64 sentinel) {
    typedef typename OP::T T;
    enum { STEPS = OP::BODY / OP::PER_STEP / ILP };
    const T a = gb_from_bits<T>(a_bits), b = gb_from_bits<T>(b_bits);
    typename OP::S x[ILP];
#pragma unroll
    for (int k = 0; k < ILP; ++k) x[k] = OP::init(b, threadIdx.x * ILP + k);
    gb_stamp s = gb_stamp_begin();
#pragma unroll 1
    for (u32 r = 0; r < rounds; ++r) {
#pragma unroll
        for (int i = 0; i < STEPS; ++i) {
#pragma unroll
            for (int k = 0; k < ILP; ++k) x[k] = OP::step(x[k], a, b);
        }
    }
    u64 acc = 0;
#pragma unroll
    for (int k = 0; k < ILP; ++k) acc ^= OP::bits(x[k]);
    if (acc == sentinel) sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
    gb_window_close(win, slots, s, (u64)rounds * STEPS * ILP * OP::PER_STEP * OP::RESULTS * 32);
}

// inst_lat_<op>(u64 a, u64 b, u32 rounds, gb_probe*, u64* sink, u64 sentinel)
#define GB_INST_LAT(NAME)                                                                                    \
extern "C" __global__ void inst_lat_##NAME(u64 a, u64 b, u32 rounds, gb_probe* p, u64* sink, u64 sentinel) { \
    lat_body<op_##NAME>(a, b, rounds, p, sink, sentinel);                                                    \
}

// inst_thr_<op>_ilp<k>(u64 a, u64 b, u32 rounds, gb_sm_window*, u32 slots, u64* sink, u64 sentinel)
#define GB_INST_THR(NAME, ILP)                                                                            \
extern "C" __global__ void inst_thr_##NAME##_ilp##ILP(u64 a, u64 b, u32 rounds, gb_sm_window* win,       \
                                                       u32 slots, u64* sink, u64 sentinel) {             \
    thr_body<op_##NAME, ILP>(a, b, rounds, win, slots, sink, sentinel);                                  \
}
