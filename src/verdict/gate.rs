//! The validity gate: which samples of a side can be trusted, and at which clock they ran.
//!
//! Throttled samples (NVML slowdown reasons or violation time during the sample) are left out
//! when enough clean samples remain; otherwise the side is marked throttled and any verdict
//! other than PASS becomes INCONCLUSIVE unless clock-normalised values can be compared.

use std::collections::BTreeSet;

use super::series::RunSeries;
use crate::stats::{median, robust_relative_spread};

/// The usable samples of one side of one metric.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    /// Kept raw samples, all runs pooled.
    pub values: Vec<f64>,
    /// Kept clock-normalised samples, when every run has them.
    pub normalized: Option<Vec<f64>>,
    /// Median of each run's kept raw samples.
    pub run_medians: Vec<f64>,
    /// GPU UUID of each entry of `run_medians`.
    pub run_uuids: Vec<String>,
    /// Median of each run's kept normalised samples.
    pub normalized_run_medians: Vec<f64>,
    /// GPU UUID of each entry of `normalized_run_medians`.
    pub normalized_run_uuids: Vec<String>,
    /// Whether every run has the kernel's own clock readings.
    pub kernel_clock: bool,
    /// Samples before exclusion.
    pub total: usize,
    /// Samples NVML saw throttled.
    pub throttled_samples: usize,
    /// Throttled samples left out.
    pub excluded: usize,
    /// Too many samples throttled to leave them out: the side as a whole is throttled.
    pub throttled: bool,
    /// Slowdown reasons seen.
    pub reasons: BTreeSet<String>,
    /// Median effective clock of the kept samples in the metric's domain, MHz.
    pub clock_mhz: Option<f64>,
    /// Runs with at least one kept sample.
    pub runs: usize,
}

/// Applies the gate to one side's runs of a metric.
pub(crate) fn prepare(runs: &[RunSeries], min_samples: usize) -> Prepared {
    let total: usize = runs.iter().map(|r| r.values.len()).sum();
    let throttled_count: usize = runs.iter().map(|r| r.throttled.iter().filter(|&&t| t).count()).sum();
    let exclude = throttled_count > 0 && total - throttled_count >= min_samples;
    let keep = |r: &RunSeries, i: usize| !exclude || !r.throttled[i];
    let mut values = Vec::new();
    let mut normalized = Some(Vec::new());
    let mut run_medians = Vec::new();
    let mut normalized_run_medians = Vec::new();
    let mut run_uuids = Vec::new();
    let mut normalized_run_uuids = Vec::new();
    let mut kernel_clock = true;
    let mut clocks = Vec::new();
    let mut reasons = BTreeSet::new();
    let mut used_runs = 0;
    for r in runs {
        let kept: Vec<usize> = (0..r.values.len()).filter(|&i| keep(r, i)).collect();
        reasons.extend(r.reasons.iter().cloned());
        if kept.is_empty() {
            continue;
        }
        used_runs += 1;
        let v: Vec<f64> = kept.iter().map(|&i| r.values[i]).filter(|v| v.is_finite()).collect();
        if let Some(m) = median(&v) {
            run_medians.push(m);
            run_uuids.push(r.uuid.clone());
        }
        kernel_clock &= r.kernel_clock;
        values.extend(v);
        match (&mut normalized, &r.normalized) {
            (Some(acc), Some(nv)) => {
                let v: Vec<f64> = kept.iter().map(|&i| nv[i]).filter(|v| v.is_finite()).collect();
                if let Some(m) = median(&v) {
                    normalized_run_medians.push(m);
                    normalized_run_uuids.push(r.uuid.clone());
                }
                acc.extend(v);
            }
            _ => normalized = None,
        }
        clocks.extend(kept.iter().filter_map(|&i| r.clock_mhz[i]));
    }
    if normalized.as_ref().is_some_and(|n| n.is_empty()) {
        normalized = None;
    }
    Prepared {
        values,
        normalized,
        run_medians,
        run_uuids,
        normalized_run_medians,
        normalized_run_uuids,
        kernel_clock: kernel_clock && used_runs > 0,
        total,
        throttled_samples: throttled_count,
        excluded: if exclude { throttled_count } else { 0 },
        throttled: throttled_count > 0 && !exclude,
        reasons,
        clock_mhz: median(&clocks),
        runs: used_runs,
    }
}

/// Which way a metric's value can follow the clock of its domain, read from its unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClockScaling {
    /// Per unit of time (GB/s, op/s, ns): a faster clock can only make it better, a slower one
    /// worse, by at most the clock ratio.
    PerTime,
    /// Per clock (B/clk, op/clk, cycles): a faster clock can only make it worse (work that does
    /// not follow the clock takes more cycles), a slower one better.
    PerClock,
    /// Neither (percentages, ratios, counts): either way.
    Either,
}

impl ClockScaling {
    /// The scaling of a metric measured in `unit`.
    pub fn of_unit(unit: &str) -> Self {
        if unit.ends_with("/s") || matches!(unit, "ns" | "us" | "ms" | "s") {
            ClockScaling::PerTime
        } else if unit == "cycles" || unit.split('/').any(|part| part == "clk") {
            ClockScaling::PerClock
        } else {
            ClockScaling::Either
        }
    }

    /// The largest worsening and the largest improvement (factors >= 1) that a clock ratio
    /// `ratio` (new side over baseline) can explain.
    pub fn explains(self, ratio: f64) -> (f64, f64) {
        let (faster, slower) = (ratio.max(1.0), (1.0 / ratio).max(1.0));
        match self {
            ClockScaling::PerTime => (slower, faster),
            ClockScaling::PerClock => (faster, slower),
            ClockScaling::Either => (faster.max(slower), faster.max(slower)),
        }
    }
}

/// The baseline's relative noise: the larger of the robust spread of its pooled samples and
/// the largest deviation of one run's median from the median of the run medians.
pub fn noise(values: &[f64], run_medians: &[f64]) -> f64 {
    let within = robust_relative_spread(values).unwrap_or(0.0);
    let between = match median(run_medians) {
        Some(m) if run_medians.len() > 1 && m != 0.0 => {
            run_medians.iter().map(|r| (r / m - 1.0).abs()).fold(0.0, f64::max)
        }
        _ => 0.0,
    };
    within.max(between)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(values: &[f64], throttled: &[bool], clock: f64) -> RunSeries {
        RunSeries {
            values: values.to_vec(),
            normalized: None,
            throttled: throttled.to_vec(),
            reasons: if throttled.iter().any(|&t| t) { ["sw_power_cap".to_string()].into() } else { BTreeSet::new() },
            clock_mhz: vec![Some(clock); values.len()],
            kernel_clock: true,
            uuid: "GPU-test".into(),
        }
    }

    #[test]
    fn a_few_throttled_samples_are_left_out() {
        let mut t = vec![false; 10];
        t[3] = true;
        t[7] = true;
        let p = prepare(&[run(&[1.0; 10], &t, 1980.0)], 5);
        assert_eq!((p.values.len(), p.excluded, p.throttled), (8, 2, false));
        assert_eq!(p.clock_mhz, Some(1980.0));
    }

    #[test]
    fn a_mostly_throttled_side_is_marked_not_trimmed() {
        let p = prepare(&[run(&[1.0; 10], &[true; 10], 1500.0)], 5);
        assert_eq!((p.values.len(), p.excluded, p.throttled), (10, 0, true));
        assert!(p.reasons.contains("sw_power_cap"));
    }

    #[test]
    fn a_clock_change_explains_only_the_direction_its_unit_follows() {
        assert_eq!(ClockScaling::of_unit("GB/s"), ClockScaling::PerTime);
        assert_eq!(ClockScaling::of_unit("ns"), ClockScaling::PerTime);
        assert_eq!(ClockScaling::of_unit("B/clk/SM"), ClockScaling::PerClock);
        assert_eq!(ClockScaling::of_unit("cycles"), ClockScaling::PerClock);
        assert_eq!(ClockScaling::of_unit("%"), ClockScaling::Either);
        // A clock 1 % faster on the new side: a per-second rate can only gain from it, a
        // per-clock rate can only lose.
        assert_eq!(ClockScaling::PerTime.explains(1.01), (1.0, 1.01));
        assert_eq!(ClockScaling::PerClock.explains(1.01), (1.01, 1.0));
        let (w, i) = ClockScaling::PerTime.explains(0.99);
        assert!((w - 1.0 / 0.99).abs() < 1e-12 && i == 1.0);
        assert_eq!(ClockScaling::Either.explains(1.01), (1.01, 1.01));
    }

    #[test]
    fn noise_takes_the_larger_of_within_and_between_runs() {
        let tight = [100.0, 100.01, 99.99, 100.0];
        assert!(noise(&tight, &[100.0]) < 1e-3);
        // Two tight runs at 100 and one at 103: the pooled robust spread ignores the odd run,
        // the spread of the run medians does not.
        let odd: Vec<f64> = tight.iter().map(|v| v * 1.03).collect();
        let pooled: Vec<f64> = tight.iter().chain(&tight).chain(&odd).copied().collect();
        let n = noise(&pooled, &[100.0, 100.0, 103.0]);
        assert!((n - 0.03).abs() < 1e-9, "{n}");
    }
}
