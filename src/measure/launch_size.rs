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
//!
//! Kernels timed by their own clock reads in per-SM windows pay for the window's start and end
//! instead (warps that start and finish at different times, the clock reads, the closing
//! atomics). Every throughput family sizes its windows to [`MIN_WINDOW_CYCLES`] at its rate
//! (or a fixed fraction of it) and records the size as [`WINDOW_PARAM`]; the shared-memory
//! atomics, whose rate varies by an order of magnitude between settings, measure one window
//! first ([`window_scale`]).

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

/// Least span of one per-SM window, SM cycles (about 2 ms at 2 GHz). A window runs from the first
/// warp's start on an SM to the last warp's end, and its start and end cost the same whatever
/// it times: measured by timing windows 4 and 16 times longer, 0.2-1.4 % of the 2^18-cycle
/// windows of the throughput families on the H200 (`docs/src/harness-overhead.md`), 0.11 % or
/// less of these.
pub const MIN_WINDOW_CYCLES: u64 = 1 << 22;

/// The benchmark parameter that records the cycles a benchmark's per-SM windows are sized to.
pub const WINDOW_PARAM: &str = "window_cycles";

/// Environment variable that multiplies the cycles every per-SM window is sized to (1 to 64;
/// default 1), for measuring what a window's fixed cost takes from its rate: a rate that rises
/// with longer windows was paying for the window's start and end. Runs made with it carry the
/// parameter [`WINDOW_SCALE_PARAM`] on every benchmark and are compared with each other only.
pub const WINDOW_SCALE_ENV: &str = "GPUBENCH_WINDOW_SCALE";

/// The parameter that records [`WINDOW_SCALE_ENV`] where it is set.
pub const WINDOW_SCALE_PARAM: &str = "window_scale";

/// [`WINDOW_SCALE_ENV`] when set to a number in 2..=64, else `None`.
pub fn window_scale_env() -> Option<u64> {
    std::env::var(WINDOW_SCALE_ENV).ok().and_then(|v| v.trim().parse::<u64>().ok()).filter(|n| (2..=64).contains(n))
}

/// `cycles` times [`WINDOW_SCALE_ENV`]: what a family sizes its per-SM windows to.
pub fn scaled_window(cycles: u64) -> u64 {
    cycles.saturating_mul(window_scale_env().unwrap_or(1))
}

/// Work multiplier for a kernel whose launch at its base work lasted `launch_ns`: the least
/// power of two that brings it to [`MIN_LAUNCH_US`], at most [`MAX_SCALE`]; one for a launch
/// already that long or a reading that is not a time.
pub fn work_scale(launch_ns: f64) -> u32 {
    scale_to(launch_ns, MIN_LAUNCH_US as f64 * 1e3)
}

/// Work multiplier for a kernel whose per-SM windows at its base work lasted `window_cycles` on
/// average: the least power of two that brings them to [`MIN_WINDOW_CYCLES`], at most
/// [`MAX_SCALE`].
pub fn window_scale(window_cycles: f64) -> u32 {
    scale_to(window_cycles, scaled_window(MIN_WINDOW_CYCLES) as f64)
}

/// The least power of two that brings `span` to `min`, at most [`MAX_SCALE`]; one for a span
/// already that long or one that is not a positive number.
fn scale_to(span: f64, min: f64) -> u32 {
    if !span.is_finite() || span <= 0.0 {
        return 1;
    }
    let mut scale = 1u32;
    while (span * scale as f64) < min && scale < MAX_SCALE {
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

    #[test]
    fn window_scale_reaches_the_minimum_window() {
        // 5133-cycle windows (a block's threads on one shared word): x1024 makes 5.3M
        assert_eq!(window_scale(5133.0), 1024);
        assert_eq!(window_scale(MIN_WINDOW_CYCLES as f64), 1);
        assert_eq!(window_scale((MIN_WINDOW_CYCLES / 2 - 1) as f64), 4);
        assert_eq!(window_scale((MIN_WINDOW_CYCLES / 2) as f64), 2);
        assert_eq!(window_scale(f64::INFINITY), 1);
        assert_eq!(window_scale(-3.0), 1);
    }
}
