//! Regression verdicts, per metric, of a new run (or several) against a baseline. The run is
//! the unit of evidence, not the sample; every spread comes from the baseline's own runs
//! ([`noise`]), so a verdict needs the baseline file and the policy of [`Rule`], nothing else.
//!
//! For every metric both sides measured:
//!
//! 1. **Comparable**: the same parameters, kernel sources and run-time search candidates on
//!    both sides; otherwise INCONCLUSIVE "not comparable", with the reason.
//! 2. **Validity gate** ([`gate`]): throttled samples are left out when enough clean ones
//!    remain. When a side throttled as a whole or the effective clocks of the two sides differ
//!    by more than [`Rule::clock_tolerance`], clock-normalised values are compared if both
//!    sides have them; otherwise a change that the throttling or the clock difference could
//!    explain is INCONCLUSIVE, never REGRESSED.
//! 3. **Level** ([`level`]): same card (the new run's GPU UUID is among the baseline's runs:
//!    the card's run medians, the learned run-to-run spread), class (one value per baseline
//!    card, the learned between-card spread plus the run-to-run spread; narrowed to the cards
//!    of the new card's board where the boards of the cards it learned from differ), or one other card
//!    (INCONCLUSIVE at most).
//! 4. **Effect size**: the new median of run medians, relative to the mean of the reference
//!    values, must lie beyond the minimum effect and the Student-t prediction band of the
//!    level. Each metric states its detectable effect (the threshold plus the margin for 90 %
//!    power); within the band, a metric whose detectable effect exceeds
//!    [`Rule::max_detectable`] is INSENSITIVE, one beyond the minimum effect INCONCLUSIVE, one
//!    within it PASS. Families the rule names are also judged as a whole ([`family`]); a
//!    family that moved carries its metrics that moved the same way beyond the minimum effect,
//!    and takes no verdict away.
//! 5. **Facts** compare exactly. A baseline metric the new run did not measure (its benchmark
//!    or family is absent, and no name filter explains it) is NOT MEASURED.
//!
//! "Bad" follows the metric's declared direction: latency up is bad, bandwidth down is bad.

mod boards;
pub mod calibrate;
mod comparable;
mod compare;
mod contamination;
pub mod corpus;
mod decide;
mod facts;
mod family;
mod gate;
mod level;
pub mod multiplicity;
pub mod noise;
mod rule;
mod sampling;
mod series;
mod upgrade;

use serde::{Deserialize, Serialize};

pub use comparable::check_comparable;
pub use compare::{Side, compare};
pub use facts::{FactVerdict, show as show_fact};
pub use family::FamilyVerdict;
pub use gate::noise as baseline_noise;
pub use level::Level;
pub use noise::NoiseModel;
pub use rule::{
    ConfidenceScope, DEFAULT_FAMILY_VERDICTS, DEFAULT_SAME_CARD_FAMILY_VERDICTS, KeyPattern, MetricOverride, Rule,
};
pub use upgrade::{KernelChange, StackField, Upgrade, kernels as run_kernels};

use crate::error::exit;
use crate::results::{Better, GpuIdentity, Settings, Stack};
use crate::stats::Interval;

/// Verdicts besides REGRESSED that make the comparison fail (exit code 1), for CI jobs that
/// must not pass on missing or undecidable data.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FailOn {
    /// Fail when any metric or fact is INCONCLUSIVE.
    pub inconclusive: bool,
    /// Fail when any baseline metric was NOT MEASURED.
    pub not_measured: bool,
    /// Fail when any metric was INSENSITIVE (its detectable effect above `max_detectable`).
    pub insensitive: bool,
}

impl FailOn {
    /// Parses a comma-separated list of "inconclusive", "not-measured" (also "not_measured"),
    /// "insensitive".
    pub fn parse(list: &str) -> Result<Self, String> {
        let mut f = FailOn::default();
        for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match word.to_ascii_lowercase().as_str() {
                "inconclusive" => f.inconclusive = true,
                "not-measured" | "not_measured" => f.not_measured = true,
                "insensitive" => f.insensitive = true,
                other => {
                    return Err(format!("unknown verdict `{other}` (use inconclusive, not-measured, insensitive)"));
                }
            }
        }
        Ok(f)
    }
}

/// Which kind of baseline a run was compared with, as every report says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BaselineKind {
    /// Same card (the new run's UUID is among the baseline's runs), class (several other
    /// cards), or other card (one card, not the new run's).
    pub level: Level,
    /// Distinct cards (GPU UUIDs) in the baseline.
    pub cards: usize,
    /// Runs in the baseline.
    pub runs: usize,
    /// Baseline runs on the new run's card (0 unless `level` is same card).
    pub same_card_runs: usize,
    /// The new run's GPU UUID.
    pub uuid: String,
    /// For a class baseline of several boards that holds the new run's board: that board part
    /// number, and the baseline cards of it (the cards the new run is judged against).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub board: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub board_cards: Option<usize>,
    /// Metrics judged against the cards of the new run's board that the baseline learned its
    /// spreads from (those on which the boards of the class differ).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub learned_board: Option<LearnedBoard>,
}

/// The metrics of a class comparison judged against the cards of the new run's board that the
/// baseline learned from, rather than against the cards whose runs it keeps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LearnedBoard {
    /// The new run's board part number.
    pub part_number: String,
    /// Cards of that board the baseline learned from.
    pub cards: usize,
    /// Metrics judged against them: those on which the boards differ.
    pub metrics: usize,
}

impl BaselineKind {
    /// "per-card baseline: 6 runs of GPU-2e3c43b6 (same card)", "class baseline: 3 cards, 18
    /// runs (GPU-... is not among them)", "baseline of one other card ...".
    pub fn describe(&self) -> String {
        let text = self.describe_level();
        match &self.learned_board {
            Some(b) => format!(
                "{text}; {} on which boards differ against the {} of board {} it learned from",
                if b.metrics == 1 { "1 metric".to_string() } else { format!("{} metrics", b.metrics) },
                if b.cards == 1 { "1 card".to_string() } else { format!("{} cards", b.cards) },
                b.part_number
            ),
            None => text,
        }
    }

    fn describe_level(&self) -> String {
        let short: String = self.uuid.chars().take(12).collect();
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        match self.level {
            Level::SameCard if self.cards == 1 => {
                format!("per-card baseline: {} of this card ({short}), run-to-run spread", plural(self.runs, "run"))
            }
            Level::SameCard => format!(
                "per-card comparison within a class baseline of {}, {}: {} of this card ({short}), run-to-run spread",
                plural(self.cards, "card"),
                plural(self.runs, "run"),
                plural(self.same_card_runs, "run")
            ),
            Level::Class => match (&self.board, self.board_cards) {
                (Some(board), Some(n)) if n < boards::MIN_BOARD_CARDS => format!(
                    "class baseline: {}, {} ({short} not among them), against the {} of board {board} where boards differ on a metric (between-card spread within boards), else the class whole",
                    plural(self.cards, "card"),
                    plural(self.runs, "run"),
                    plural(n, "card")
                ),
                (Some(board), Some(n)) => format!(
                    "class baseline: {}, {} ({short} not among them), against the {} of board {board}, between-card spread of that board",
                    plural(self.cards, "card"),
                    plural(self.runs, "run"),
                    plural(n, "card")
                ),
                _ => format!(
                    "class baseline: {}, {} ({short} not among them), between-card spread",
                    plural(self.cards, "card"),
                    plural(self.runs, "run")
                ),
            },
            Level::OtherCard => format!(
                "baseline of one other card ({}): between-card spread unknown, changes are INCONCLUSIVE at most",
                plural(self.runs, "run")
            ),
        }
    }
}

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
    /// The baseline has the metric, the new run did not measure it.
    NotMeasured,
    /// Within the band, but the band is so wide that the comparison could not have seen a
    /// change below the rule's `max_detectable`: blind, not PASS.
    Insensitive,
    /// No change beyond the threshold.
    Pass,
}

impl Verdict {
    /// "REGRESSED", "IMPROVED", "INCONCLUSIVE", "NOT MEASURED", "PASS".
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Regressed => "REGRESSED",
            Verdict::Improved => "IMPROVED",
            Verdict::Inconclusive => "INCONCLUSIVE",
            Verdict::NotMeasured => "NOT MEASURED",
            Verdict::Insensitive => "INSENSITIVE",
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
    /// New median of run medians / mean of the reference values (run or card medians).
    pub ratio: Option<f64>,
    /// `ratio` ± the half width of the run-level prediction interval (the spread of the
    /// reference runs or cards, floored); not an interval of the samples.
    pub ci: Option<Interval>,
    /// Relative threshold applied: the minimum effect, or the prediction band when wider.
    pub threshold: Option<f64>,
    /// Measured relative standard deviation of the reference values (run-to-run for the same
    /// card, between cards for a class baseline).
    pub noise: Option<f64>,
    /// The level of variance the verdict was judged at.
    pub level: Option<Level>,
    /// Reference values: baseline runs of this card, or baseline cards.
    pub reference_n: Option<usize>,
    /// The smallest relative change this comparison catches nine times in ten: the threshold
    /// plus the 90 % quantile of the new side's scatter around the reference.
    pub detectable: Option<f64>,
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
    /// Median wall time of its runs, seconds (0 when none was recorded).
    pub wall_time_s: f64,
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
    /// NOT MEASURED.
    #[serde(default)]
    pub not_measured: usize,
    /// INSENSITIVE.
    #[serde(default)]
    pub insensitive: usize,
}

impl Counts {
    pub(crate) fn add(&mut self, v: Verdict) {
        match v {
            Verdict::Regressed => self.regressed += 1,
            Verdict::Improved => self.improved += 1,
            Verdict::Inconclusive => self.inconclusive += 1,
            Verdict::NotMeasured => self.not_measured += 1,
            Verdict::Insensitive => self.insensitive += 1,
            Verdict::Pass => self.pass += 1,
        }
    }

    /// "0 REGRESSED, 1 IMPROVED, 2 INCONCLUSIVE, 140 PASS" (", 3 NOT MEASURED" when any).
    pub fn line(&self) -> String {
        let mut s = format!(
            "{} REGRESSED, {} IMPROVED, {} INCONCLUSIVE, {} PASS",
            self.regressed, self.improved, self.inconclusive, self.pass
        );
        if self.insensitive > 0 {
            s.push_str(&format!(", {} INSENSITIVE", self.insensitive));
        }
        if self.not_measured > 0 {
            s.push_str(&format!(", {} NOT MEASURED", self.not_measured));
        }
        s
    }
}

/// Judged metrics counted by their detectable effect, in steps of 2, 3, 5 and 10 % (and the
/// rule's `max_detectable`): what a comparison could have seen.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Sensitivity {
    /// (upper bound of the step, metrics whose detectable effect is at most it and above the
    /// step before), for the steps below `max_detectable`, then `max_detectable` itself.
    pub steps: Vec<(f64, usize)>,
    /// Metrics whose detectable effect exceeds `max_detectable`.
    pub insensitive: usize,
    /// Metrics with no detectable effect: not compared (not measured, not comparable, gated
    /// before a band).
    pub not_judged: usize,
    /// Runs of the new side, and their median wall time in seconds: what the detection cost.
    pub runs: usize,
    /// Median wall time of a run of the new side, seconds (0: not recorded).
    pub run_seconds: f64,
}

impl Sensitivity {
    fn of(metrics: &[MetricVerdict], max_detectable: f64, candidate: &SideInfo) -> Self {
        let mut bounds: Vec<f64> = [0.02, 0.03, 0.05, 0.10].into_iter().filter(|b| *b < max_detectable).collect();
        bounds.push(max_detectable);
        let mut s = Sensitivity {
            steps: bounds.iter().map(|b| (*b, 0)).collect(),
            runs: candidate.runs,
            run_seconds: candidate.wall_time_s,
            ..Sensitivity::default()
        };
        for m in metrics {
            match m.detectable {
                None => s.not_judged += 1,
                Some(d) => match s.steps.iter_mut().find(|(b, _)| d <= *b + 1e-12) {
                    Some(step) => step.1 += 1,
                    None => s.insensitive += 1,
                },
            }
        }
        s
    }

    /// "judged to 2 %: 250; to 3 %: 40; to 5 %: 10; insensitive (above 10 %): 3; not judged: 4;
    /// from 3 runs of 58 s".
    pub fn line(&self) -> String {
        let mut parts: Vec<String> =
            self.steps.iter().filter(|(_, n)| *n > 0).map(|(b, n)| format!("to {} %: {n}", trim_percent(*b))).collect();
        if let Some(first) = parts.first_mut() {
            *first = format!("judged {first}");
        }
        if self.insensitive > 0 {
            let max = self.steps.last().map_or(0.0, |s| s.0);
            parts.push(format!("insensitive (above {} %): {}", trim_percent(max), self.insensitive));
        }
        if self.not_judged > 0 {
            parts.push(format!("not judged: {}", self.not_judged));
        }
        if self.runs > 0 && self.run_seconds > 0.0 {
            let runs = if self.runs == 1 { "1 run".to_string() } else { format!("{} runs", self.runs) };
            parts.push(format!("from {runs} of {:.0} s", self.run_seconds));
        }
        parts.join("; ")
    }
}

/// 0.02 -> "2", 0.025 -> "2.5".
fn trim_percent(f: f64) -> String {
    let p = f * 100.0;
    if (p - p.round()).abs() < 1e-9 { format!("{p:.0}") } else { format!("{p:.1}") }
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
    /// Which kind of baseline the new run was compared with.
    pub baseline_kind: BaselineKind,
    /// The rule the verdicts followed.
    pub rule: Rule,
    /// The level each metric was judged at ([`multiplicity`]).
    pub metric_confidence: MetricConfidence,
    /// One verdict per baseline metric, in the baseline's order.
    pub metrics: Vec<MetricVerdict>,
    /// One verdict per bench family judged as a whole (the median of its metrics' changes
    /// against the spread of the baseline's own runs or cards; [`FamilyVerdict`]). They are
    /// evidence for the metrics' verdicts, not counted themselves.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub families: Vec<FamilyVerdict>,
    /// One verdict per baseline fact.
    pub facts: Vec<FactVerdict>,
    /// Metrics only the new side has ("<benchmark>:<metric>").
    pub not_in_baseline: Vec<String>,
    /// Baseline metrics the new side did not run (name filter, family not selected).
    pub not_run: Vec<String>,
    /// Things to know before trusting the verdicts (GPU classes or profiles differ).
    pub warnings: Vec<String>,
}

/// The level each metric of a comparison was judged at.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MetricConfidence {
    /// Two-sided level of each metric's band: the rule's confidence, or above it where the
    /// confidence is the comparison's and metrics share it ([`Rule::confidence_scope`]).
    pub confidence: f64,
    /// Metrics whose change could pass the minimum effect by chance at least as often as the
    /// level allows (their band is wider than the minimum effect): those the comparison's
    /// confidence is shared among.
    pub at_risk: usize,
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

    /// Like [`Comparison::exit_code`], and 1 as well when `fail_on` names a verdict that
    /// occurred (INCONCLUSIVE, NOT MEASURED).
    pub fn exit_code_with(&self, fail_on: FailOn) -> i32 {
        let extra = (fail_on.inconclusive && self.counts.inconclusive > 0)
            || (fail_on.not_measured && self.counts.not_measured > 0)
            || (fail_on.insensitive && self.counts.insensitive > 0);
        if extra { exit::REGRESSION } else { self.exit_code() }
    }

    /// The judged metrics counted by what they could detect: "judged to 3 %: 280; to 5 %: 20;
    /// insensitive: 7" ([`Sensitivity`]).
    pub fn sensitivity(&self) -> Sensitivity {
        Sensitivity::of(&self.metrics, self.rule.max_detectable, &self.candidate)
    }

    /// The verdict on metric `metric` of benchmark `benchmark`.
    pub fn metric(&self, benchmark: &str, metric: &str) -> Option<&MetricVerdict> {
        self.metrics.iter().find(|m| m.benchmark == benchmark && m.metric == metric)
    }
}
