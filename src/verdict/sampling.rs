//! The sampling error of one run's median, a floor of the band's run-to-run spread: the
//! standard error of the median of independent samples, 1.2533 × robust spread / √samples per
//! run, the larger of the two sides. Where the baseline has one run per card it is the only
//! measure of a run's error; where it has several, the learned run-to-run spread rests on a
//! few pairs of runs, which may agree by chance on a metric whose samples scatter by several
//! percent. Samples that step through placements correlate with their neighbours (H200
//! atomics: 0.4-0.5 at lag one), so there the floor lies below a median's true error, which
//! the learned run spread carries (`docs/src/calibration.md`).

use crate::stats::robust_relative_spread;

/// Standard error of the median of independent normal samples, per unit of their spread and
/// √samples.
const MEDIAN_SE_FACTOR: f64 = 1.2533;

/// One side's samples of one metric, as the floor reads them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SideRuns<'a> {
    /// Kept samples, every run pooled.
    pub pooled: &'a [f64],
    /// Runs with kept samples.
    pub runs: usize,
}

impl SideRuns<'_> {
    /// The standard error of one run's median from the scatter of the samples.
    fn scatter_error(&self) -> f64 {
        let per_run = (self.pooled.len() / self.runs.max(1)).max(1) as f64;
        robust_relative_spread(self.pooled).unwrap_or(0.0) * MEDIAN_SE_FACTOR / per_run.sqrt()
    }
}

/// The relative standard error of one run's median: the larger of the two sides'.
pub(crate) fn run_median_error(baseline: &SideRuns<'_>, candidate: &SideRuns<'_>) -> f64 {
    baseline.scatter_error().max(candidate.scatter_error())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_of_a_median_shrinks_with_the_samples_of_a_run() {
        // Samples 1 % apart on either side: a robust spread near 1 %.
        let samples: Vec<f64> = (0..40).map(|i| if i % 2 == 0 { 0.99 } else { 1.01 }).collect();
        let one = SideRuns { pooled: &samples, runs: 1 };
        let four = SideRuns { pooled: &samples, runs: 4 };
        let (e1, e4) = (one.scatter_error(), four.scatter_error());
        assert!(e1 > 0.0 && (e4 / e1 - 2.0).abs() < 1e-9, "{e1} {e4}");
        assert_eq!(run_median_error(&one, &four), e4);
    }
}
