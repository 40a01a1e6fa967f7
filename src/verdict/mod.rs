//! Regression verdicts: the rule of DESIGN.md section 4, applied per metric to a baseline and a
//! new run (or two sets of runs).
//!
//! For every metric both sides measured:
//!
//! 1. **Validity gate** ([`gate`]): throttled samples are left out when enough clean ones
//!    remain. When a side throttled as a whole or the effective clocks of the two sides differ
//!    by more than [`Rule::clock_tolerance`], clock-normalised values are compared if both
//!    sides have them; otherwise a change that the throttling or the clock difference could
//!    explain is INCONCLUSIVE, never REGRESSED.
//! 2. **Significance**: a two-sided Mann-Whitney U test on the per-sample values, with
//!    Benjamini-Hochberg over every metric of the comparison.
//! 3. **Effect size**: the bootstrap confidence interval of median(new) / median(baseline)
//!    must lie entirely beyond the metric's threshold (the configured threshold, widened by
//!    the baseline's own noise; see [`Rule`]) in the bad direction for REGRESSED, in the good
//!    direction for IMPROVED. A point estimate beyond the threshold whose interval or test
//!    does not confirm it is INCONCLUSIVE; anything else is PASS.
//! 4. **Facts** compare exactly.
//!
//! "Bad" follows the metric's declared direction: latency up is bad, bandwidth down is bad.

mod compare;
mod contamination;
mod facts;
mod gate;
mod rule;
mod series;
mod upgrade;

use serde::{Deserialize, Serialize};

pub use compare::{Side, compare};
pub use facts::{FactVerdict, show as show_fact};
pub use gate::noise as baseline_noise;
pub use rule::{MetricOverride, Rule};
pub use upgrade::{KernelChange, StackField, Upgrade, kernels as run_kernels};

use crate::error::exit;
use crate::results::{Better, GpuIdentity, Settings, Stack};
use crate::stats::Interval;

/// Schema tag of the comparison JSON.
pub const COMPARISON_SCHEMA: &str = "gpubench.comparison/1";

/// The verdict on one metric or fact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    /// Worse beyond the threshold, significant, with the whole confidence interval beyond it.
    Regressed,
    /// Better beyond the threshold, likewise.
    Improved,
    /// The data cannot tell: throttled, clocks differ, too noisy, not comparable, missing.
    Inconclusive,
    /// No change beyond the threshold.
    Pass,
}

impl Verdict {
    /// "REGRESSED", "IMPROVED", "INCONCLUSIVE", "PASS".
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Regressed => "REGRESSED",
            Verdict::Improved => "IMPROVED",
            Verdict::Inconclusive => "INCONCLUSIVE",
            Verdict::Pass => "PASS",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// Which values a metric's verdict compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// The metric's own samples.
    Raw,
    /// The samples divided out by the clock of the metric's domain.
    Normalized,
}

/// What one side contributed to a metric's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SideStats {
    /// Median of the compared samples (in the unit of the verdict's basis).
    pub median: f64,
    /// Samples compared.
    pub n: usize,
    /// Throttled samples left out.
    pub excluded: usize,
    /// Runs the samples came from.
    pub runs: usize,
    /// Median effective clock in the metric's domain, MHz.
    pub clock_mhz: Option<f64>,
    /// Whether too many samples throttled to leave them out.
    pub throttled: bool,
}

/// The verdict on one metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricVerdict {
    /// Benchmark id, "family/name".
    pub benchmark: String,
    /// Bench family.
    pub family: String,
    /// Metric name.
    pub metric: String,
    /// Unit of the compared values (the normalised unit when the basis is normalised).
    pub unit: String,
    /// Which direction is good.
    pub better: Better,
    /// The verdict.
    pub verdict: Verdict,
    /// One line: why.
    pub reason: String,
    /// Raw or clock-normalised values.
    pub basis: Basis,
    /// Baseline side.
    pub baseline: Option<SideStats>,
    /// New side.
    pub candidate: Option<SideStats>,
    /// median(new) / median(baseline).
    pub ratio: Option<f64>,
    /// Bootstrap confidence interval of `ratio`.
    pub ci: Option<Interval>,
    /// Two-sided Mann-Whitney p-value.
    pub p_value: Option<f64>,
    /// Benjamini-Hochberg adjusted p-value over the comparison.
    pub q_value: Option<f64>,
    /// Relative threshold applied (after widening by noise).
    pub threshold: Option<f64>,
    /// Baseline's relative noise that widened the threshold.
    pub noise: Option<f64>,
}

impl MetricVerdict {
    /// "<benchmark id>:<metric>".
    pub fn key(&self) -> String {
        format!("{}:{}", self.benchmark, self.metric)
    }

    /// Relative change of the median, new against baseline (0.03 for +3 %).
    pub fn change(&self) -> Option<f64> {
        self.ratio.map(|r| r - 1.0)
    }
}

/// Identity of one side of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SideInfo {
    /// Where it came from: a file path, "this run".
    pub label: String,
    /// GPU of its newest run.
    pub gpu: GpuIdentity,
    /// Stack of its newest run.
    pub stack: Stack,
    /// Settings of its newest run.
    pub settings: Settings,
    /// Number of runs.
    pub runs: usize,
    /// Start of its newest run, Unix seconds.
    pub created_unix_s: u64,
}

/// Verdict counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// REGRESSED metrics and facts.
    pub regressed: usize,
    /// IMPROVED.
    pub improved: usize,
    /// INCONCLUSIVE.
    pub inconclusive: usize,
    /// PASS.
    pub pass: usize,
}

impl Counts {
    fn add(&mut self, v: Verdict) {
        match v {
            Verdict::Regressed => self.regressed += 1,
            Verdict::Improved => self.improved += 1,
            Verdict::Inconclusive => self.inconclusive += 1,
            Verdict::Pass => self.pass += 1,
        }
    }

    /// "0 REGRESSED, 1 IMPROVED, 2 INCONCLUSIVE, 140 PASS".
    pub fn line(&self) -> String {
        format!(
            "{} REGRESSED, {} IMPROVED, {} INCONCLUSIVE, {} PASS",
            self.regressed, self.improved, self.inconclusive, self.pass
        )
    }
}

/// A whole comparison: both sides, the upgrade view, the rule, and a verdict per metric and
/// fact.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// Always [`COMPARISON_SCHEMA`].
    pub schema: String,
    /// Verdict counts.
    pub counts: Counts,
    /// The baseline side.
    pub baseline: SideInfo,
    /// The new side.
    pub candidate: SideInfo,
    /// Stack and generated-code changes.
    pub upgrade: Upgrade,
    /// The rule the verdicts followed.
    pub rule: Rule,
    /// One verdict per baseline metric, in the baseline's order.
    pub metrics: Vec<MetricVerdict>,
    /// One verdict per baseline fact.
    pub facts: Vec<FactVerdict>,
    /// Metrics only the new side has ("<benchmark>:<metric>").
    pub not_in_baseline: Vec<String>,
    /// Baseline metrics the new side did not run (name filter, family not selected).
    pub not_run: Vec<String>,
    /// Things to know before trusting the verdicts (GPU classes or profiles differ).
    pub warnings: Vec<String>,
}

impl Comparison {
    /// Recounts the verdicts.
    pub fn recount(&mut self) {
        let mut c = Counts::default();
        self.metrics.iter().for_each(|m| c.add(m.verdict));
        self.facts.iter().for_each(|f| c.add(f.verdict));
        self.counts = c;
    }

    /// Whether any metric or fact REGRESSED.
    pub fn regressed(&self) -> bool {
        self.counts.regressed > 0
    }

    /// The documented exit code: 1 when anything regressed, else 0.
    pub fn exit_code(&self) -> i32 {
        if self.regressed() { exit::REGRESSION } else { exit::OK }
    }

    /// The verdict on metric `metric` of benchmark `benchmark`.
    pub fn metric(&self, benchmark: &str, metric: &str) -> Option<&MetricVerdict> {
        self.metrics.iter().find(|m| m.benchmark == benchmark && m.metric == metric)
    }
}
