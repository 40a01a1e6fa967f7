//! Samples that repeat a pattern run after run.
//!
//! Some benchmarks step through placements from one sample to the next: the pointer chases
//! start from one SM after another, the atomics and cache-operator benchmarks use the next
//! copy of their target. Their samples scatter by several percent within a run, but the same
//! sample of every run of a card lands on the same placement and reads alike: the scatter
//! repeats, and a run's median is far steadier than the scatter says (H100, contention on
//! 1024 threads per word: 8 % within a run, run medians within 0.3 %).
//!
//! The part of a sample that does not repeat is what a run's median carries from run to run.
//! It is measured from pairs of runs of one card with the same number of samples: each sample
//! relative to its run's median, minus the same sample of the other run relative to that run's
//! median. A run-wide shift (which is what a regression is) cancels, and so does the pattern.

use crate::stats::mad;

/// Fewest paired samples for an estimate.
const MIN_PAIRS: usize = 8;

/// One run of one metric: its median and its samples in the order measured (`None` where
/// left out).
#[derive(Debug, Clone, Copy)]
pub(crate) struct OrderedRun<'a> {
    pub median: f64,
    pub samples: &'a [Option<f64>],
}

/// The relative spread of one sample that does not repeat between runs: the robust spread of
/// the paired differences over √2, pooled over every pair of a `baseline` run and a `candidate`
/// run that have the same number of samples. `None` with fewer than [`MIN_PAIRS`] differences.
pub(crate) fn unrepeated_spread(baseline: &[OrderedRun<'_>], candidate: &[OrderedRun<'_>]) -> Option<f64> {
    let mut differences = Vec::new();
    for b in baseline {
        for c in candidate {
            if b.samples.len() != c.samples.len() || b.median == 0.0 || c.median == 0.0 {
                continue;
            }
            differences.extend(
                b.samples
                    .iter()
                    .zip(c.samples)
                    .filter_map(|(x, y)| Some(x.as_ref()? / b.median - y.as_ref()? / c.median)),
            );
        }
    }
    if differences.len() < MIN_PAIRS {
        return None;
    }
    Some(1.4826 * mad(&differences)? / std::f64::consts::SQRT_2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Rng;

    fn run(samples: &[Option<f64>]) -> OrderedRun<'_> {
        let kept: Vec<f64> = samples.iter().flatten().copied().collect();
        OrderedRun { median: crate::stats::median(&kept).unwrap(), samples }
    }

    /// A standard normal draw (sum of twelve uniforms).
    fn normal(rng: &mut Rng) -> f64 {
        (0..12).map(|_| rng.next_u64() as f64 / u64::MAX as f64).sum::<f64>() - 6.0
    }

    /// `n` samples of a four-placement cycle (±8 %) with `noise` relative noise, times `scale`.
    fn cycled(rng: &mut Rng, n: usize, noise: f64, scale: f64) -> Vec<Option<f64>> {
        let cycle = [1.06, 0.92, 0.95, 1.02];
        (0..n).map(|i| Some(scale * cycle[i % 4] * (1.0 + noise * normal(rng)))).collect()
    }

    #[test]
    fn a_repeated_cycle_and_a_run_wide_shift_cancel() {
        let mut rng = Rng::seeded(7);
        let a = cycled(&mut rng, 20, 0.003, 1.0);
        let b = cycled(&mut rng, 20, 0.003, 1.0);
        let shifted = cycled(&mut rng, 20, 0.003, 0.95);
        let s = unrepeated_spread(&[run(&a), run(&b)], &[run(&shifted)]).unwrap();
        // The cycle alone scatters the samples by about 6 %; what does not repeat is 0.3 %.
        assert!(s > 0.0015 && s < 0.006, "{s}");
        let direct = crate::stats::robust_relative_spread(&a.iter().flatten().copied().collect::<Vec<_>>()).unwrap();
        assert!(direct > 0.04, "{direct}");
    }

    #[test]
    fn independent_samples_keep_their_spread() {
        let mut rng = Rng::seeded(11);
        let noisy = |rng: &mut Rng| (0..40).map(|_| Some(1.0 + 0.02 * normal(rng))).collect::<Vec<_>>();
        let (a, b) = (noisy(&mut rng), noisy(&mut rng));
        let s = unrepeated_spread(&[run(&a)], &[run(&b)]).unwrap();
        assert!(s > 0.014 && s < 0.028, "{s}");
    }

    #[test]
    fn runs_of_other_lengths_or_too_few_pairs_give_nothing() {
        let a = vec![Some(1.0); 20];
        let b = vec![Some(1.0); 19];
        assert_eq!(unrepeated_spread(&[run(&a)], &[run(&b)]), None);
        let mut gaps = vec![None; 20];
        gaps[..5].fill(Some(1.0));
        assert_eq!(unrepeated_spread(&[run(&a)], &[run(&gaps)]), None);
    }
}
