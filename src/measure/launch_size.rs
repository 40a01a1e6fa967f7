//! How much work one timed launch does. The families timed by CUDA events around whole launches
//! (`stream`, `dram`, the atomics throughput benchmarks) pay the gap between back-to-back kernels
//! once per launch; on the cards measured so far it is 1.4-3.0 µs (`docs/src/harness-overhead.md`).
//! Every launch of them therefore does enough work to last at least [`MIN_LAUNCH_US`], so that
//! the gap stays below 0.2 % of what it times:
//! - the streams make several passes over their arrays in one launch, as many as take
//!   [`MIN_LAUNCH_US`] even at the device's theoretical DRAM bandwidth ([`passes_for`]), so the
//!   count depends on the GPU model alone;
//! - the atomics kernels multiply their operations per thread by the least power of two that
//!   brings a measured launch to [`MIN_LAUNCH_US`] ([`work_scale`]).
//!
//! Benchmarks record [`MIN_LAUNCH_US`] as the parameter [`LAUNCH_PARAM`]: runs made with
//! shorter launches (or none of this) are not comparable with them.

/// Least GPU time of one timed launch, µs: 2 ms holds a 3 µs launch gap to 0.15 %.
pub const MIN_LAUNCH_US: u64 = 2000;

/// The benchmark parameter that records [`MIN_LAUNCH_US`].
pub const LAUNCH_PARAM: &str = "min_launch_us";

/// Largest work multiplier [`work_scale`] gives.
pub const MAX_SCALE: u32 = 1 << 16;

/// Passes per launch over a stream of `bytes_per_pass`: the fewest that last at least
/// [`MIN_LAUNCH_US`] at `peak_bytes_per_s` (so at least as long at any bandwidth the device
/// reaches). One when the peak is unknown.
pub fn passes_for(bytes_per_pass: u64, peak_bytes_per_s: f64) -> u32 {
    if bytes_per_pass == 0 || !peak_bytes_per_s.is_finite() || peak_bytes_per_s <= 0.0 {
        return 1;
    }
    let bytes = peak_bytes_per_s * MIN_LAUNCH_US as f64 * 1e-6;
    (bytes / bytes_per_pass as f64).ceil().clamp(1.0, MAX_SCALE as f64) as u32
}

/// Work multiplier for a kernel whose launch at its base work lasted `launch_ns`: the least
/// power of two that brings it to [`MIN_LAUNCH_US`], at most [`MAX_SCALE`]; one for a launch
/// already that long or a reading that is not a time.
pub fn work_scale(launch_ns: f64) -> u32 {
    if !launch_ns.is_finite() || launch_ns <= 0.0 {
        return 1;
    }
    let mut scale = 1u32;
    while (launch_ns * scale as f64) < MIN_LAUNCH_US as f64 * 1e3 && scale < MAX_SCALE {
        scale *= 2;
    }
    scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_passes_last_the_minimum_at_peak_bandwidth() {
        // H100 SXM: 3352 GB/s; STREAM copy over two 200 MiB arrays, 419 MB a pass
        let peak = 3352.32e9;
        let p = passes_for(419_430_400, peak);
        assert_eq!(p, 16);
        assert!(p as f64 * 419_430_400.0 / peak >= MIN_LAUNCH_US as f64 * 1e-6);
        assert!((p - 1) as f64 * 419_430_400.0 / peak < MIN_LAUNCH_US as f64 * 1e-6);
        // a pass longer than the minimum runs once
        assert_eq!(passes_for(20_000_000_000, peak), 1);
    }

    #[test]
    fn unknown_peak_or_empty_stream_means_one_pass() {
        assert_eq!(passes_for(1 << 30, 0.0), 1);
        assert_eq!(passes_for(1 << 30, f64::NAN), 1);
        assert_eq!(passes_for(0, 3e12), 1);
    }

    #[test]
    fn work_scale_is_the_least_power_of_two_reaching_the_minimum() {
        // a 30 µs launch: 64 x 30 = 1.92 ms is short, 128 x 30 = 3.84 ms
        assert_eq!(work_scale(30_000.0), 128);
        assert_eq!(work_scale(31_250.0), 64);
        assert_eq!(work_scale(2_000_000.0), 1);
        assert_eq!(work_scale(1_999_999.0), 2);
        assert_eq!(work_scale(0.0), 1);
        assert_eq!(work_scale(f64::NAN), 1);
        assert_eq!(work_scale(1.0), MAX_SCALE);
    }
}
