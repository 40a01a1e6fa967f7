//! Work per launch and launches per criterion iteration of an atomics kernel.
//!
//! At their base work (64 operations per thread for the fast kernels), one launch of a fast
//! atomics kernel (a word per thread, CAS, low contention) lasts 30-90 µs on an H100, while the
//! kernels that serialise on one address last about a millisecond. Timed by CUDA events, every
//! launch adds the launch gap (up to 3 µs, 10 % of the fastest), so each kernel's operations per
//! thread are first multiplied until one launch lasts [`launch_size::MIN_LAUNCH_US`]
//! ([`size`]). Each launch uses the next copy of its target ([`crate::placement::Placements`]),
//! and its rate depends on which L2 slices and pages the copy lands on: with one launch per
//! sample, a run median of twenty samples is the median of twenty placements, and runs of one
//! card differed by 0.7-4.2 % (`atomics/contention:k=4` 2.3 % on one H200). Each kernel therefore gets a batch of launches per iteration, as many as
//! make at least [`MIN_ITERATION_US`] of GPU time: sixteen copies per sample, and over a run's
//! samples every copy, brought the same card's runs within 0.1-0.8 % of each other at 64 ms
//! (`tests/fixtures/recorded/atomics-iteration/`). Both are measured once, before the samples.

use crate::device::EventTimer;
use crate::error::Result;
use crate::measure::launch_size;

/// Least GPU time of one kernel per iteration, µs: sixteen sized launches.
pub const MIN_ITERATION_US: u64 = 32_000;

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

/// Work per launch and launches per iteration of a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizing {
    /// Operations per thread of every timed launch.
    pub iters: u32,
    /// Launches per iteration.
    pub launches: u64,
}

impl Sizing {
    /// The sizing of a kernel whose launch lasted `launch_ns` at `base_iters` operations per
    /// thread: the base times [`launch_size::work_scale`], and the batch for `min_us` at that work.
    pub fn for_launch(launch_ns: f64, base_iters: u32, min_us: u64) -> Sizing {
        let scale = launch_size::work_scale(launch_ns);
        let iters = base_iters.saturating_mul(scale);
        let scaled_ns = launch_ns * (iters as f64 / base_iters.max(1) as f64);
        Sizing { iters, launches: launches_for(scaled_ns, min_us) }
    }
}

/// Sizes a kernel through `launch(iters)`: one untimed launch, then [`PROBE_LAUNCHES`] timed
/// ones, at `base_iters` operations per thread ([`Sizing::for_launch`]). The launches change the
/// kernel's targets: reset them before the samples.
pub fn size(
    timer: &EventTimer,
    base_iters: u32,
    min_us: u64,
    mut launch: impl FnMut(u32) -> Result<()>,
) -> Result<Sizing> {
    launch(base_iters)?;
    timer.start()?;
    for _ in 0..PROBE_LAUNCHES {
        launch(base_iters)?;
    }
    let ns = timer.stop_ns()?;
    Ok(Sizing::for_launch(ns / PROBE_LAUNCHES as f64, base_iters, min_us))
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
    fn a_fast_kernel_gets_the_work_of_the_minimum_launch_and_one_launch_per_iteration() {
        // 64 operations per thread in 30 µs: x128 makes 3.84 ms
        let s = Sizing::for_launch(30_000.0, 64, 1000);
        assert_eq!(s, Sizing { iters: 64 * 128, launches: 1 });
        // a kernel already past the minimum keeps its work
        assert_eq!(Sizing::for_launch(2_500_000.0, 4, 1000), Sizing { iters: 4, launches: 1 });
        // a longer iteration than one sized launch still batches
        assert_eq!(Sizing::for_launch(30_000.0, 64, 10_000), Sizing { iters: 64 * 128, launches: 3 });
    }

    #[test]
    fn zero_minimum_or_bad_timing_means_one_launch_and_the_batch_is_capped() {
        assert_eq!(launches_for(36_000.0, 0), 1);
        assert_eq!(launches_for(0.0, 1000), 1);
        assert_eq!(launches_for(f64::NAN, 1000), 1);
        assert_eq!(launches_for(10.0, 100_000), MAX_BATCH);
    }
}
