//! Bootstrap confidence interval of the ratio of two medians.
//!
//! The effect size of a verdict is `median(new) / median(baseline)`. Its interval comes from
//! the percentile bootstrap: both samples are resampled with replacement, independently, and
//! the ratio of the resampled medians is collected; the interval is the central `confidence`
//! share of those ratios.

use super::quantile::{median, percentile_sorted};
use super::rng::Rng;

/// A closed interval.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Interval {
    /// Lower end.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
}

/// The ratio of medians and its bootstrap confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioEstimate {
    /// median(new) / median(base).
    pub ratio: f64,
    /// Percentile-bootstrap interval of the ratio.
    pub ci: Interval,
}

/// Estimates `median(new) / median(base)` with a `confidence` (e.g. 0.99) percentile-bootstrap
/// interval from `resamples` resamples. `None` when a sample is empty or a median of `base`
/// (resampled or not) is not positive.
pub fn ratio_of_medians(
    base: &[f64],
    new: &[f64],
    resamples: usize,
    confidence: f64,
    rng: &mut Rng,
) -> Option<RatioEstimate> {
    let (mb, mn) = (median(base)?, median(new)?);
    if mb <= 0.0 {
        return None;
    }
    let ratio = mn / mb;
    let mut base = Resampler::new(base);
    let mut new = Resampler::new(new);
    let mut ratios = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let rb = base.median(rng);
        let rn = new.median(rng);
        if rb <= 0.0 {
            return None;
        }
        ratios.push(rn / rb);
    }
    if ratios.is_empty() {
        return Some(RatioEstimate { ratio, ci: Interval { lo: ratio, hi: ratio } });
    }
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence.clamp(0.0, 1.0)) / 2.0;
    let ci = Interval { lo: percentile_sorted(&ratios, tail), hi: percentile_sorted(&ratios, 1.0 - tail) };
    Some(RatioEstimate { ratio, ci })
}

/// Draws resamples of one sample and returns their medians.
///
/// A resample is a multiset of positions in the sorted sample, so its median needs no sorting:
/// count how often each position was drawn and walk the counts to the middle rank.
struct Resampler {
    sorted: Vec<f64>,
    counts: Vec<u32>,
}

impl Resampler {
    fn new(values: &[f64]) -> Self {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        Resampler { counts: vec![0; sorted.len()], sorted }
    }

    fn median(&mut self, rng: &mut Rng) -> f64 {
        let n = self.sorted.len();
        self.counts.fill(0);
        for _ in 0..n {
            self.counts[rng.below(n)] += 1;
        }
        median_of_counts(&self.sorted, &self.counts)
    }
}

/// Median of the multiset that holds `sorted[i]` `counts[i]` times (counts sum to the length
/// of `sorted`, which is not empty).
fn median_of_counts(sorted: &[f64], counts: &[u32]) -> f64 {
    let n: usize = counts.iter().map(|&c| c as usize).sum();
    let (lo_rank, hi_rank) = ((n - 1) / 2, n / 2);
    let mut seen = 0usize;
    let mut lo = f64::NAN;
    for (value, &c) in sorted.iter().zip(counts) {
        let before = seen;
        seen += c as usize;
        if before <= lo_rank && lo_rank < seen {
            lo = *value;
        }
        if hi_rank < seen {
            return 0.5 * (lo + value);
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread(center: f64, n: usize, rel: f64) -> Vec<f64> {
        (0..n).map(|i| center * (1.0 + rel * ((i as f64 / (n - 1) as f64) - 0.5))).collect()
    }

    #[test]
    fn median_of_counts_matches_the_median_of_the_multiset() {
        let mut rng = Rng::seeded(1);
        for n in [1usize, 2, 5, 10, 21] {
            let sorted: Vec<f64> = (0..n).map(|i| (i * i) as f64).collect();
            for _ in 0..50 {
                let mut counts = vec![0u32; n];
                let mut drawn = Vec::new();
                for _ in 0..n {
                    let i = rng.below(n);
                    counts[i] += 1;
                    drawn.push(sorted[i]);
                }
                assert_eq!(median_of_counts(&sorted, &counts), median(&drawn).unwrap(), "{counts:?}");
            }
        }
    }

    #[test]
    fn interval_contains_the_true_ratio_of_a_shift() {
        let base = spread(100.0, 20, 0.01);
        let new: Vec<f64> = base.iter().map(|v| v * 1.03).collect();
        let est = ratio_of_medians(&base, &new, 2000, 0.99, &mut Rng::seeded(9)).unwrap();
        assert!((est.ratio - 1.03).abs() < 1e-12);
        assert!(est.ci.lo < 1.03 && est.ci.hi > 1.03, "{est:?}");
        assert!(est.ci.hi - est.ci.lo < 0.02, "{est:?}");
    }

    #[test]
    fn noisier_samples_give_wider_intervals() {
        let tight = spread(100.0, 20, 0.002);
        let loose = spread(100.0, 20, 0.2);
        let a = ratio_of_medians(&tight, &tight, 2000, 0.99, &mut Rng::seeded(3)).unwrap();
        let b = ratio_of_medians(&loose, &loose, 2000, 0.99, &mut Rng::seeded(3)).unwrap();
        assert!(b.ci.hi - b.ci.lo > 10.0 * (a.ci.hi - a.ci.lo), "{a:?} {b:?}");
    }

    #[test]
    fn reproducible_for_one_seed_and_refuses_a_zero_baseline() {
        let base = spread(50.0, 10, 0.05);
        let new = spread(51.0, 10, 0.05);
        let x = ratio_of_medians(&base, &new, 500, 0.95, &mut Rng::seeded(5)).unwrap();
        let y = ratio_of_medians(&base, &new, 500, 0.95, &mut Rng::seeded(5)).unwrap();
        assert_eq!(x, y);
        assert!(ratio_of_medians(&[0.0, 0.0], &new, 10, 0.95, &mut Rng::seeded(5)).is_none());
        assert!(ratio_of_medians(&[], &new, 10, 0.95, &mut Rng::seeded(5)).is_none());
    }
}
