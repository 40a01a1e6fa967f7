//! Launches per criterion iteration of an atomics kernel.
//!
//! The harness times one iteration per sample, and one launch of a fast atomics kernel (a word
//! per thread, CAS, low contention) lasts 30-90 µs on an H100, while the kernels that serialise on
//! one address last about a millisecond. One launch of a fast kernel varies by 3-8 % from the
//! next, so twenty one-launch samples left its run median 1-3 % off from one process to the next.
//! Each kernel therefore gets a batch of launches per iteration, as many as make at least
//! [`MIN_ITERATION_US`] of GPU time, measured once before the samples.

use crate::device::EventTimer;
use crate::error::Result;

/// Least GPU time of one kernel per iteration, µs.
pub const MIN_ITERATION_US: u64 = 1000;

/// Most launches per iteration.
pub const MAX_BATCH: u64 = 1024;

/// Launches timed to choose the batch (after one untimed launch).
const PROBE_LAUNCHES: u64 = 3;

/// Environment variable that overrides [`MIN_ITERATION_US`] (0 to 100000; 0 means one launch per
/// iteration), for measuring how the spread falls with longer iterations. The value is recorded
/// among the benchmark's parameters, so runs made with another value are not comparable.
pub const ITERATION_ENV: &str = "GPUBENCH_ATOMICS_ITERATION_US";

/// [`ITERATION_ENV`] when set to a number in 0..=100000, else [`MIN_ITERATION_US`].
pub fn min_iteration_us() -> u64 {
    std::env::var(ITERATION_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|n| *n <= 100_000)
        .unwrap_or(MIN_ITERATION_US)
}

/// Launches per iteration for a kernel whose launch lasts `launch_ns`: enough for `min_us`,
/// at least one, at most [`MAX_BATCH`].
pub fn launches_for(launch_ns: f64, min_us: u64) -> u64 {
    if min_us == 0 || launch_ns.is_nan() || launch_ns <= 0.0 {
        return 1;
    }
    ((min_us as f64 * 1e3 / launch_ns).ceil() as u64).clamp(1, MAX_BATCH)
}

/// Chooses the batch of a kernel: one untimed launch, then [`PROBE_LAUNCHES`] timed ones
/// through `launch`. With `min_us` = 0 nothing is launched and the batch is one.
pub fn choose(timer: &EventTimer, min_us: u64, mut launch: impl FnMut() -> Result<()>) -> Result<u64> {
    if min_us == 0 {
        return Ok(1);
    }
    launch()?;
    timer.start()?;
    for _ in 0..PROBE_LAUNCHES {
        launch()?;
    }
    let ns = timer.stop_ns()?;
    Ok(launches_for(ns / PROBE_LAUNCHES as f64, min_us))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_kernels_get_enough_launches_for_the_minimum() {
        // a 36 µs launch needs 28 for a millisecond
        assert_eq!(launches_for(36_000.0, 1000), 28);
        // a launch longer than the minimum runs once
        assert_eq!(launches_for(12_700_000.0, 1000), 1);
        assert_eq!(launches_for(1_000_000.0, 1000), 1);
        assert_eq!(launches_for(999_999.0, 1000), 2);
    }

    #[test]
    fn zero_minimum_or_bad_timing_means_one_launch_and_the_batch_is_capped() {
        assert_eq!(launches_for(36_000.0, 0), 1);
        assert_eq!(launches_for(0.0, 1000), 1);
        assert_eq!(launches_for(f64::NAN, 1000), 1);
        assert_eq!(launches_for(10.0, 100_000), MAX_BATCH);
    }
}
