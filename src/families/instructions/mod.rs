//! Arithmetic instruction latency and throughput (Qiu et al. section IV): FP16 (half2), FP32 and
//! FP64 FMA / add / multiply, INT32 add / multiply / multiply-add, the special-function unit
//! (reciprocal, reciprocal square root, base-2 exponential and logarithm, sine, cosine) and the
//! IEEE division and square root sequences.
//!
//! Latency: cycles per op of a dependent chain in one warp (clock64 of lane 0). Throughput:
//! results per clock per SM from the per-SM windows, with ILP independent chains per warp, and
//! its efficiency against the documented rate of the instruction class ([`crate::measure::limits`]).
//! Kernels: `kernels/instructions_ops.cuh` and the three sources built on it. This module holds
//! the operations and the arithmetic of their counts; [`timing`] launches and times them.

pub mod timing;

pub use timing::run;

use crate::kernels::{self, KernelSource};
use crate::measure::launch_size;
use crate::measure::limits::{self, ArithClass};
use crate::measure::per_sm::{self, Residency};
use crate::results::GpuIdentity;

/// How an operation's inputs are encoded in the kernels' 64-bit arguments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// IEEE single.
    F32(f32),
    /// IEEE double.
    F64(f64),
    /// Two IEEE halves (bit patterns), packed as half2.
    F16x2(u16),
    /// Unsigned 32-bit integer.
    U32(u32),
}

impl Value {
    /// The 64-bit pattern the kernel decodes.
    pub fn bits(self) -> u64 {
        match self {
            Value::F32(x) => x.to_bits() as u64,
            Value::F64(x) => x.to_bits(),
            Value::F16x2(h) => ((h as u64) << 16) | h as u64,
            Value::U32(x) => x as u64,
        }
    }
}

/// Which kernel source an operation lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// One instruction per op (`kernels/instructions.cu`).
    Single,
    /// IEEE division and square root sequences (`kernels/instructions_ieee.cu`).
    Ieee,
}

/// One operation: its kernels' suffix, limit class, inputs, and how many ops a latency launch
/// chains.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Op {
    /// "fp32_fma": the metric name and the kernels' suffix.
    pub name: &'static str,
    /// Throughput limit class.
    pub class: ArithClass,
    /// Source.
    pub group: Group,
    /// Multiplier / divisor operand.
    pub a: Value,
    /// Addend and chain seed.
    pub b: Value,
}

const fn op(name: &'static str, class: ArithClass, group: Group, a: Value, b: Value) -> Op {
    Op { name, class, group, a, b }
}

/// Half-precision 0.999, 0.001 and 1.0 as bit patterns.
const H_0999: u16 = 0x3bfe;
const H_0001: u16 = 0x1419;
const H_1: u16 = 0x3c00;

/// Every operation, in report order. Values keep chains finite and normal where the op allows:
/// x = 0.999 x + 0.001 converges to 1; multiplies by 0.9999 (by 1 in half precision) stay
/// normal for far more ops than a launch runs; a / x alternates; square roots converge to 1.
pub const OPS: [Op; 22] = [
    op("fp32_fma", ArithClass::Fp32, Group::Single, Value::F32(0.999), Value::F32(0.001)),
    op("fp32_add", ArithClass::Fp32, Group::Single, Value::F32(0.0), Value::F32(0.001)),
    op("fp32_mul", ArithClass::Fp32, Group::Single, Value::F32(0.9999), Value::F32(1.0)),
    op("fp64_fma", ArithClass::Fp64, Group::Single, Value::F64(0.999), Value::F64(0.001)),
    op("fp64_add", ArithClass::Fp64, Group::Single, Value::F64(0.0), Value::F64(0.001)),
    op("fp64_mul", ArithClass::Fp64, Group::Single, Value::F64(0.9999), Value::F64(1.0)),
    op("fp16x2_fma", ArithClass::Fp16, Group::Single, Value::F16x2(H_0999), Value::F16x2(H_0001)),
    op("fp16x2_add", ArithClass::Fp16, Group::Single, Value::F16x2(0), Value::F16x2(H_0001)),
    op("fp16x2_mul", ArithClass::Fp16, Group::Single, Value::F16x2(H_1), Value::F16x2(H_1)),
    // ptxas spreads integer adds over two pipes (IADD3 and IMAD.IADD): no single limit.
    op("int32_add", ArithClass::Sequence, Group::Single, Value::U32(0), Value::U32(12345)),
    op("int32_mul", ArithClass::Int32Mul, Group::Single, Value::U32(3), Value::U32(12345)),
    op("int32_mad", ArithClass::Int32Mul, Group::Single, Value::U32(3), Value::U32(12345)),
    op("sfu_rcp", ArithClass::Special, Group::Single, Value::F32(0.0), Value::F32(1.25)),
    op("sfu_rsqrt", ArithClass::Special, Group::Single, Value::F32(0.0), Value::F32(1.25)),
    op("sfu_ex2", ArithClass::Special, Group::Single, Value::F32(0.0), Value::F32(1.25)),
    op("sfu_lg2", ArithClass::Special, Group::Single, Value::F32(0.0), Value::F32(1.25)),
    op("sfu_sin", ArithClass::Special, Group::Single, Value::F32(0.0), Value::F32(1.25)),
    op("sfu_cos", ArithClass::Special, Group::Single, Value::F32(0.0), Value::F32(1.25)),
    op("fp32_div", ArithClass::Sequence, Group::Ieee, Value::F32(1.5), Value::F32(1.25)),
    op("fp32_sqrt", ArithClass::Sequence, Group::Ieee, Value::F32(0.0), Value::F32(1.25)),
    op("fp64_div", ArithClass::Sequence, Group::Ieee, Value::F64(1.5), Value::F64(1.25)),
    op("fp64_sqrt", ArithClass::Sequence, Group::Ieee, Value::F64(0.0), Value::F64(1.25)),
];

/// Ops per latency round of each kernel (`LAT` in instructions_ops.cuh).
pub fn latency_ops_per_round(op: &Op) -> u32 {
    match op.group {
        Group::Single => 64,
        Group::Ieee => 8,
    }
}

/// Ops per lane per throughput round (`BODY`), and results per op (2 for half2).
pub fn throughput_body(op: &Op) -> (u32, u32) {
    let body = match op.name {
        "fp32_fma" => 512,
        "fp32_add" | "fp32_mul" | "fp16x2_fma" | "fp16x2_add" | "fp16x2_mul" => 256,
        "int32_add" | "int32_mul" | "int32_mad" => 256,
        _ if op.group == Group::Ieee => 16,
        _ => 128,
    };
    let results = if op.name.starts_with("fp16x2") { 2 } else { 1 };
    (body, results)
}

/// ILP of the regression set: enough independent chains per warp to cover the latency of every
/// op with 8 or more warps per SM.
pub const REGRESSION_ILP: u32 = 8;
/// ILPs of the full sweep.
pub const SWEEP_ILPS: [u32; 4] = [1, 2, 4, 8];
/// Warps per SM of the full sweep.
pub const SWEEP_WARPS: [u32; 5] = [4, 8, 16, 32, 64];
/// Warps per SM the regression set tries, most first: it runs at the largest that fits.
pub const REGRESSION_WARPS: [u32; 5] = [64, 32, 16, 8, 4];
/// Ops a latency launch chains: single instructions, IEEE sequences.
pub const LATENCY_OPS: [u32; 2] = [4096, 512];
/// Cycles one throughput launch keeps an SM busy at the limit (`launch_size::MIN_WINDOW_CYCLES`).
pub const THROUGHPUT_CYCLES: u64 = launch_size::MIN_WINDOW_CYCLES;
/// Results per clock per SM assumed for sizing launches of an op without a documented limit:
/// integer adds run on two pipes (up to 128), the IEEE sequences at a few per clock.
pub fn sizing_rate(op: &Op) -> f64 {
    match op.group {
        Group::Single => 128.0,
        Group::Ieee => 4.0,
    }
}
/// Bit pattern no result is compared equal to in practice.
pub const SENTINEL: u64 = 0xdead_beef_cafe_f00d;

/// Latency in cycles per op from lane 0's window.
pub fn cycles_per_op(cycles: u64, ops: u64) -> f64 {
    if ops == 0 { f64::NAN } else { cycles as f64 / ops as f64 }
}

/// Rounds of a latency launch: about `target_ops` ops.
pub fn latency_rounds(op: &Op) -> u32 {
    let target = if op.group == Group::Ieee { LATENCY_OPS[1] } else { LATENCY_OPS[0] };
    (target / latency_ops_per_round(op)).max(1)
}

/// Results per launch of a throughput kernel: warps x rounds x body x results x lanes.
pub fn throughput_work(gpu: &GpuIdentity, op: &Op, r: &Residency, rounds: u32) -> u64 {
    let (body, results) = throughput_body(op);
    let warps = gpu.sm_count as u64 * r.blocks_per_sm as u64 * r.threads_per_block as u64 / gpu.warp_size as u64;
    warps * rounds as u64 * body as u64 * results as u64 * gpu.warp_size as u64
}

/// The limit of `op` on this GPU, results per clock per SM.
pub fn limit(gpu: &GpuIdentity, op: &Op) -> Option<f64> {
    limits::results_per_clk_per_sm(op.class, gpu.cc_major, gpu.cc_minor)
}

pub(crate) fn source(group: Group) -> KernelSource {
    match group {
        Group::Single => kernels::INSTRUCTIONS,
        Group::Ieee => kernels::INSTRUCTIONS_IEEE,
    }
}

pub(crate) fn rounds_for(gpu: &GpuIdentity, op: &Op, r: &Residency, lim: Option<f64>) -> u32 {
    let (body, results) = throughput_body(op);
    let per_warp_round = body as u64 * results as u64 * gpu.warp_size as u64;
    per_sm::rounds_for(
        launch_size::scaled_window(THROUGHPUT_CYCLES),
        lim.unwrap_or_else(|| sizing_rate(op)),
        r.warps_per_sm,
        per_warp_round,
        1,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_encode_as_the_kernels_decode_them() {
        assert_eq!(Value::F32(1.0).bits(), 0x3f80_0000);
        assert_eq!(Value::F64(1.0).bits(), 0x3ff0_0000_0000_0000);
        assert_eq!(Value::F16x2(H_1).bits(), 0x3c00_3c00);
        assert_eq!(Value::U32(7).bits(), 7);
    }

    #[test]
    fn half_constants_are_the_documented_values() {
        fn half(h: u16) -> f64 {
            let (s, e, m) = ((h >> 15) as i32, ((h >> 10) & 0x1f) as i32, (h & 0x3ff) as f64);
            let v = if e == 0 { m / 1024.0 * 2f64.powi(-14) } else { (1.0 + m / 1024.0) * 2f64.powi(e - 15) };
            if s == 1 { -v } else { v }
        }
        assert!((half(H_0999) - 0.999).abs() < 5e-4);
        assert!((half(H_0001) - 0.001).abs() < 1e-6);
        assert_eq!(half(H_1), 1.0);
    }

    #[test]
    fn op_names_are_unique_and_ieee_ops_have_no_limit() {
        let mut names: Vec<_> = OPS.iter().map(|o| o.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), OPS.len());
        let g = crate::families::test_identity();
        for o in OPS.iter().filter(|o| o.group == Group::Ieee) {
            assert_eq!(limit(&g, o), None, "{}", o.name);
        }
        let fma = OPS.iter().find(|o| o.name == "fp32_fma").unwrap();
        assert_eq!(limit(&g, fma), Some(128.0));
    }

    #[test]
    fn results_count_warps_rounds_body_and_half2_pairs() {
        let g = crate::families::test_identity();
        let r = Residency::new(64, 32);
        let fma = OPS.iter().find(|o| o.name == "fp32_fma").unwrap();
        // 132 SMs x 64 warps x 10 rounds x 512 ops x 32 lanes
        assert_eq!(throughput_work(&g, fma, &r, 10), 132 * 64 * 10 * 512 * 32);
        let h = OPS.iter().find(|o| o.name == "fp16x2_fma").unwrap();
        assert_eq!(throughput_work(&g, h, &r, 10), 132 * 64 * 10 * 256 * 2 * 32);
    }

    #[test]
    fn ops_per_clock_per_sm_at_the_limit_is_100_percent() {
        // An SM that retires 512 FFMA x 32 lanes x 64 warps in 8192 cycles does 128 op/clk.
        let work = 512u64 * 32 * 64;
        let rate = work as f64 / 8192.0;
        assert_eq!(rate, 128.0);
        assert_eq!(limits::efficiency_percent(rate, Some(128.0)), 100.0);
    }

    #[test]
    fn latency_launches_chain_a_fixed_number_of_ops() {
        for o in OPS {
            let ops = latency_rounds(&o) * latency_ops_per_round(&o);
            assert_eq!(ops, if o.group == Group::Ieee { 512 } else { 4096 }, "{}", o.name);
        }
        assert_eq!(cycles_per_op(16_384, 4096), 4.0);
        assert!(cycles_per_op(1, 0).is_nan());
    }

    #[test]
    fn throughput_rounds_fill_the_target_cycles() {
        let g = crate::families::test_identity();
        let r = Residency::new(64, 32);
        let fma = OPS.iter().find(|o| o.name == "fp32_fma").unwrap();
        // 2^22 cycles x 128 op/clk / (64 warps x 512 ops x 32 lanes) = 512 rounds
        assert_eq!(rounds_for(&g, fma, &r, Some(128.0)), 512);
    }

    /// (BODY, LAT, RESULTS) of each op as the kernel source declares it.
    fn declared(op: &str) -> (u32, u32, u32) {
        let text = kernels::INSTRUCTIONS.text;
        if op == "int32_add" {
            let s = &text[text.find("struct op_int32_add").unwrap()..];
            let e = &s[s.find("enum {").unwrap()..];
            let num = |k: &str| {
                e[e.find(k).unwrap() + k.len()..].split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
            };
            return (num("BODY = "), num("LAT = "), num("RESULTS = "));
        }
        if op == "sfu_rcp" {
            let s = &text[text.find("struct op_sfu_rcp").unwrap()..];
            let args: Vec<u32> = s[s.find("GB_OP_COMMON(float, ").unwrap() + 20..]
                .split(')')
                .next()
                .unwrap()
                .split(", ")
                .map(|x| x.trim().parse().unwrap())
                .collect();
            return (args[0], args[1], args[2]);
        }
        let line = text
            .lines()
            .find(|l| l.starts_with("GB_OP") && l.contains(&format!("({op},")))
            .unwrap_or_else(|| panic!("no declaration of {op}"));
        let args: Vec<&str> = line[line.find('(').unwrap() + 1..].split(", ").collect();
        let body = args[3].parse().unwrap();
        let lat = args[4].parse().unwrap();
        // GB_OP3 / GB_OP2A / GB_OP2B carry RESULTS; GB_OPDIV / GB_OP1 have one result
        let results =
            if line.starts_with("GB_OP3") || line.starts_with("GB_OP2") { args[5].parse().unwrap() } else { 1 };
        (body, lat, results)
    }

    #[test]
    fn host_counts_match_the_kernel_declarations() {
        for o in OPS {
            let (body, lat, results) = declared(o.name);
            assert_eq!(throughput_body(&o), (body, results), "{}", o.name);
            assert_eq!(latency_ops_per_round(&o), lat, "{}", o.name);
            // rounds of every ILP split evenly
            for ilp in SWEEP_ILPS {
                let per_step = if o.name == "int32_add" { 2 } else { 1 };
                assert_eq!(body % (ilp * per_step), 0, "{} at ILP {ilp}", o.name);
            }
        }
    }
}
