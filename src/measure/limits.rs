//! Hardware limits the driver does not report, keyed on compute capability, to express measured
//! throughput as a fraction of the limit. They are documented facts of the architecture, never
//! inputs to a measurement or an inference: a missing entry means "no efficiency", not a guess.
//!
//! Sources: NVIDIA architecture whitepapers (Volta GV100, Turing, Ampere GA100 and GA102, Ada,
//! Hopper GH100) and the CUDA C++ Programming Guide's table of arithmetic instruction throughput
//! (results per clock cycle per multiprocessor). Cross-checks with published peaks: H100 SXM
//! 132 SMs x 128 FP32 lanes x 2 flop x 1.98 GHz = 66.9 TFLOPS; A100 108 x 64 x 2 x 1.41 GHz =
//! 19.5 TFLOPS; H100 FP16 (non-tensor) 132 x 256 x 2 x 1.98 GHz = 133.8 TFLOPS.

use crate::results::GpuIdentity;

/// Bytes per clock per SM of the L1 data path for loads that hit: 128 (one 128-byte wavefront
/// per clock) on Volta and later.
pub fn l1_bytes_per_clk_per_sm(gpu: &GpuIdentity) -> Option<f64> {
    (gpu.cc_major >= 7).then_some(128.0)
}

/// Bytes per clock per SM of shared memory: 32 banks of 4 bytes, one access each per clock
/// (Maxwell and later).
pub fn shared_bytes_per_clk_per_sm(gpu: &GpuIdentity) -> Option<f64> {
    (gpu.cc_major >= 5).then_some(128.0)
}

/// Families of arithmetic instructions that share one throughput limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithClass {
    /// 16-bit floating-point add, multiply, multiply-add (a half2 instruction gives 2 results).
    Fp16,
    /// 32-bit floating-point add, multiply, multiply-add.
    Fp32,
    /// 64-bit floating-point add, multiply, multiply-add.
    Fp64,
    /// 32-bit integer add and subtract.
    Int32Add,
    /// 32-bit integer multiply and multiply-add.
    Int32Mul,
    /// Special-function unit: reciprocal, reciprocal square root, base-2 logarithm and
    /// exponential, sine, cosine (approximate, single precision).
    Special,
    /// Sequences of several instructions (IEEE division, square root): no single limit.
    Sequence,
}

/// Results per clock per SM of `class` on compute capability `major.minor`, where known.
pub fn results_per_clk_per_sm(class: ArithClass, major: u32, minor: u32) -> Option<f64> {
    let cc = (major, minor);
    let v = match class {
        ArithClass::Fp32 => match cc {
            (7, _) | (8, 0) => 64.0,
            (8, 6) | (8, 7) | (8, 9) | (9, 0) | (10, _) | (12, _) => 128.0,
            _ => return None,
        },
        ArithClass::Fp16 => match cc {
            (7, _) | (8, 6) | (8, 9) => 128.0,
            (8, 0) | (9, 0) => 256.0,
            _ => return None,
        },
        ArithClass::Fp64 => match cc {
            (7, 0) | (8, 0) => 32.0,
            (9, 0) => 64.0,
            (7, 5) | (8, 6) | (8, 9) => 2.0,
            _ => return None,
        },
        ArithClass::Int32Add | ArithClass::Int32Mul => match cc {
            (7, _) | (8, _) | (9, 0) => 64.0,
            _ => return None,
        },
        ArithClass::Special => match cc {
            (7, _) | (8, _) | (9, 0) => 16.0,
            _ => return None,
        },
        ArithClass::Sequence => return None,
    };
    Some(v)
}

/// `measured` as a percentage of `limit`; NaN without a limit (recorded as no value).
pub fn efficiency_percent(measured: f64, limit: Option<f64>) -> f64 {
    match limit {
        Some(l) if l > 0.0 => 100.0 * measured / l,
        _ => f64::NAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp32_lanes_match_the_published_peaks() {
        // H100 SXM: 132 SMs at 1.98 GHz, 66.9 TFLOPS
        let h100 = 132.0 * results_per_clk_per_sm(ArithClass::Fp32, 9, 0).unwrap() * 2.0 * 1.98e9;
        assert!((h100 / 1e12 - 66.9).abs() < 0.1, "{h100}");
        // A100: 108 SMs at 1.41 GHz, 19.5 TFLOPS: 64 lanes, not 128
        let a100 = 108.0 * results_per_clk_per_sm(ArithClass::Fp32, 8, 0).unwrap() * 2.0 * 1.41e9;
        assert!((a100 / 1e12 - 19.5).abs() < 0.1, "{a100}");
        // RTX 3090 (8.6): 82 SMs at 1.695 GHz, 35.6 TFLOPS
        let ga102 = 82.0 * results_per_clk_per_sm(ArithClass::Fp32, 8, 6).unwrap() * 2.0 * 1.695e9;
        assert!((ga102 / 1e12 - 35.6).abs() < 0.1, "{ga102}");
    }

    #[test]
    fn fp64_and_fp16_match_the_published_peaks() {
        // H100 SXM FP64 (non-tensor) 33.5 TFLOPS, FP16 (non-tensor) 133.8 TFLOPS
        let fp64 = 132.0 * results_per_clk_per_sm(ArithClass::Fp64, 9, 0).unwrap() * 2.0 * 1.98e9;
        assert!((fp64 / 1e12 - 33.5).abs() < 0.1, "{fp64}");
        let fp16 = 132.0 * results_per_clk_per_sm(ArithClass::Fp16, 9, 0).unwrap() * 2.0 * 1.98e9;
        assert!((fp16 / 1e12 - 133.8).abs() < 0.1, "{fp16}");
        // A100 FP64 9.7 TFLOPS, FP16 (non-tensor) 78 TFLOPS
        let fp64 = 108.0 * results_per_clk_per_sm(ArithClass::Fp64, 8, 0).unwrap() * 2.0 * 1.41e9;
        assert!((fp64 / 1e12 - 9.7).abs() < 0.1, "{fp64}");
        let fp16 = 108.0 * results_per_clk_per_sm(ArithClass::Fp16, 8, 0).unwrap() * 2.0 * 1.41e9;
        assert!((fp16 / 1e12 - 78.0).abs() < 0.1, "{fp16}");
    }

    #[test]
    fn unknown_architectures_and_sequences_have_no_limit() {
        assert_eq!(results_per_clk_per_sm(ArithClass::Fp32, 6, 0), None);
        assert_eq!(results_per_clk_per_sm(ArithClass::Fp64, 10, 0), None);
        assert_eq!(results_per_clk_per_sm(ArithClass::Sequence, 9, 0), None);
        assert_eq!(results_per_clk_per_sm(ArithClass::Special, 9, 0), Some(16.0));
        assert_eq!(results_per_clk_per_sm(ArithClass::Int32Mul, 8, 6), Some(64.0));
    }

    #[test]
    fn l1_and_shared_deliver_128_bytes_per_clock_on_recent_parts() {
        let mut g = crate::families::test_identity();
        assert_eq!(l1_bytes_per_clk_per_sm(&g), Some(128.0));
        assert_eq!(shared_bytes_per_clk_per_sm(&g), Some(128.0));
        g.cc_major = 6;
        assert_eq!(l1_bytes_per_clk_per_sm(&g), None);
        assert_eq!(shared_bytes_per_clk_per_sm(&g), Some(128.0));
    }

    #[test]
    fn efficiency_is_a_percentage_of_the_limit() {
        assert_eq!(efficiency_percent(121.6, Some(128.0)), 95.0);
        assert!(efficiency_percent(1.0, None).is_nan());
        assert!(efficiency_percent(1.0, Some(0.0)).is_nan());
    }
}
