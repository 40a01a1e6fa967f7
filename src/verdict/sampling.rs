//! The sampling error of one run's median, a floor of the band where the reference runs are
//! too few to show the run-to-run spread.
//!
//! From the scatter of a run's samples: the standard error of the median of independent
//! samples, 1.2533 × robust spread / √samples per run, the larger of the two sides.
//!
//! Samples that repeat a pattern run after run are not independent. Some benchmarks step through
//! placements from one sample to the next: the atomics and cache-operator benchmarks use the
//! next copy of their target. Their samples scatter by several percent within a run, but the
//! same sample of every run of a card lands on the same placement and reads alike: the scatter
//! repeats, and a run's median is far steadier than the scatter says (H100, contention on 1024
//! threads per word: 8 % within a run, run medians within 0.3 %). The part of a sample that does
//! not repeat is what a run's median carries from run to run. It is measured from pairs of runs
//! with the same number of samples, the candidate's and the baseline's of the same card (or, for
//! a class, of every card: the placements are the benchmark's, and they cycle alike on every
//! card): each sample relative to its run's median, minus the same sample of the other run
//! relative to that run's median. A run-wide shift (which is what a regression is) cancels, and
//! so does the pattern.

use crate::stats::{mad, robust_relative_spread};

/// Standard error of the median of independent normal samples, per unit of their spread and
/// √samples.
const MEDIAN_SE_FACTOR: f64 = 1.2533;

/// One side's runs of one metric, as the floor reads them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SideRuns<'a> {
    /// Kept samples, every run pooled.
    pub pooled: &'a [f64],
    /// Runs with kept samples.
    pub runs: usize,
    /// Each run's median, its GPU UUID and its samples in order (`None` where left out).
    pub medians: &'a [f64],
    pub uuids: &'a [String],
    pub ordered: &'a [Vec<Option<f64>>],
}

impl SideRuns<'_> {
    fn per_run(&self) -> f64 {
        (self.pooled.len() / self.runs.max(1)).max(1) as f64
    }

    /// The standard error of one run's median from the scatter of the samples.
    fn scatter_error(&self) -> f64 {
        robust_relative_spread(self.pooled).unwrap_or(0.0) * MEDIAN_SE_FACTOR / self.per_run().sqrt()
    }

    fn ordered_runs(&self, card: Option<&str>) -> Vec<OrderedRun<'_>> {
        self.medians
            .iter()
            .zip(self.uuids)
            .zip(self.ordered)
            .filter(|((_, u), _)| card.is_none_or(|c| u.as_str() == c))
            .map(|((m, _), s)| OrderedRun { median: *m, samples: s })
            .collect()
    }
}

/// Which baseline runs a metric's samples are paired with to find what does not repeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pattern<'a> {
    /// The samples do not step through placements: the scatter alone.
    Unpaired,
    /// The candidate's own card's runs (a same-card comparison).
    Card(&'a str),
    /// Every baseline run, of every card (a class comparison). The placements are the
    /// benchmark's, not the card's: on eleven H100s, contention on 1024 threads per word cycles
    /// alike on every card (paired differences 0.60 % across cards, 0.54 % within one, against
    /// 8.4 % of scatter).
    EveryCard,
}

/// The relative standard error of one run's median: the larger of the two sides' from the
/// scatter of their samples. Where the metric's samples step through placements in the same
/// order in every run ([`Pattern::Card`], [`Pattern::EveryCard`]), the error of what does not
/// repeat between the candidate's runs and those baseline runs, where it is under half of the
/// scatter: the mark of a repeated pattern rather than of chance.
pub(crate) fn run_median_error(baseline: &SideRuns<'_>, candidate: &SideRuns<'_>, pattern: Pattern<'_>) -> f64 {
    let scatter = baseline.scatter_error().max(candidate.scatter_error());
    let paired = match pattern {
        Pattern::Unpaired => return scatter,
        Pattern::Card(card) => baseline.ordered_runs(Some(card)),
        Pattern::EveryCard => baseline.ordered_runs(None),
    };
    let unrepeated = unrepeated_spread(&paired, &candidate.ordered_runs(None))
        .map(|s| s * MEDIAN_SE_FACTOR / candidate.per_run().sqrt());
    match unrepeated {
        Some(u) if u < scatter / 2.0 => u,
        _ => scatter,
    }
}

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

    #[test]
    fn a_class_comparison_pairs_with_every_card_and_a_card_with_its_own_runs() {
        let mut rng = Rng::seeded(5);
        // baseline: card A's run (the cycle) and card B's run (independent noise); candidate on C
        let a = cycled(&mut rng, 20, 0.003, 1.0);
        let b: Vec<Option<f64>> = (0..20).map(|_| Some(1.0 + 0.05 * normal(&mut rng))).collect();
        let c = cycled(&mut rng, 20, 0.003, 0.97);
        let flat = |v: &[Option<f64>]| v.iter().flatten().copied().collect::<Vec<f64>>();
        let (base_pool, cand_pool) = ([flat(&a), flat(&b)].concat(), flat(&c));
        let medians = [run(&a).median, run(&b).median];
        let uuids = ["A".to_string(), "B".to_string()];
        let ordered = [a.clone(), b.clone()];
        let baseline = SideRuns { pooled: &base_pool, runs: 2, medians: &medians, uuids: &uuids, ordered: &ordered };
        let (c_median, c_uuid, c_ordered) = ([run(&c).median], ["C".to_string()], [c.clone()]);
        let candidate =
            SideRuns { pooled: &cand_pool, runs: 1, medians: &c_median, uuids: &c_uuid, ordered: &c_ordered };
        let scatter = run_median_error(&baseline, &candidate, Pattern::Unpaired);
        // Card A's runs alone repeat C's cycle: far under the scatter.
        let own = run_median_error(&baseline, &candidate, Pattern::Card("A"));
        assert!(own < scatter / 4.0, "{own} vs {scatter}");
        // Card B's run, which does not repeat the cycle, joins the pairs of a class comparison.
        assert!(run_median_error(&baseline, &candidate, Pattern::EveryCard) > own);
        // Baseline cards that do not repeat it: the scatter stays.
        let n2: Vec<Option<f64>> = (0..20).map(|_| Some(1.0 + 0.05 * normal(&mut rng))).collect();
        let (noisy, noisy_pool) = ([b.clone(), n2.clone()], [flat(&b), flat(&n2)].concat());
        let noisy_medians = [run(&b).median, run(&n2).median];
        let baseline =
            SideRuns { pooled: &noisy_pool, runs: 2, medians: &noisy_medians, uuids: &uuids, ordered: &noisy };
        let unpaired = run_median_error(&baseline, &candidate, Pattern::Unpaired);
        assert_eq!(run_median_error(&baseline, &candidate, Pattern::EveryCard), unpaired);
        // A baseline whose every card repeats the cycle: paired with every card.
        let a2 = cycled(&mut rng, 20, 0.003, 1.01);
        let ordered = [a.clone(), a2.clone()];
        let pool = [flat(&a), flat(&a2)].concat();
        let medians = [run(&a).median, run(&a2).median];
        let baseline = SideRuns { pooled: &pool, runs: 2, medians: &medians, uuids: &uuids, ordered: &ordered };
        let every = run_median_error(&baseline, &candidate, Pattern::EveryCard);
        assert!(every < run_median_error(&baseline, &candidate, Pattern::Unpaired) / 4.0, "{every}");
    }
}
