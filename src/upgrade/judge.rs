//! Judging B against A per card, with the run as the unit: A's runs on the card are its
//! baseline (a per-card baseline: run-to-run spread learned from them), B's runs the new side,
//! through [`crate::verdict::compare`]; then each metric's code attribution.

use std::collections::BTreeMap;

use serde::Serialize;

use super::code::{CodeVerdict, KernelCode, MetricCode, compare_source};
use super::listings::Listings;
use crate::error::exit;
use crate::results::{KernelProvenance, ResultsDocument};
use crate::verdict::{Comparison, FailOn, Rule, Side, Verdict, compare, run_kernels};

/// Schema tag of the upgrade report.
pub const UPGRADE_SCHEMA: &str = "gpubench.upgrade/1";

/// What the job concludes, and its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Every card judged; nothing REGRESSED.
    Pass,
    /// A metric REGRESSED whose machine code changed (or is not known to be the same): exit 1.
    RegressedCodeChanged,
    /// Metrics REGRESSED, each with the same machine code on both stacks: exit 11.
    RegressedSameCode,
    /// A card could not be judged, or `--fail-on` verdicts occurred: exit 12.
    NotJudged,
}

impl Outcome {
    /// The documented exit code.
    pub fn exit_code(self) -> i32 {
        match self {
            Outcome::Pass => exit::OK,
            Outcome::RegressedCodeChanged => exit::REGRESSION,
            Outcome::RegressedSameCode => exit::REGRESSION_SAME_CODE,
            Outcome::NotJudged => exit::NOT_JUDGED,
        }
    }

    /// One line for reports.
    pub fn line(self) -> &'static str {
        match self {
            Outcome::Pass => "no regression",
            Outcome::RegressedCodeChanged => "REGRESSED, machine code changed",
            Outcome::RegressedSameCode => "REGRESSED, machine code identical: not a compiler change",
            Outcome::NotJudged => "could not judge",
        }
    }
}

/// One card: B against A.
#[derive(Debug, Clone, Serialize)]
pub struct CardJudgement {
    /// GPU UUID.
    pub uuid: String,
    /// GPU name.
    pub name: String,
    /// Runs of A and of B.
    pub runs: [usize; 2],
    /// The comparison, when one could be made.
    pub comparison: Option<Comparison>,
    /// Why there is none, or what `--fail-on` found.
    pub not_judged: Option<String>,
    /// Every kernel source, A against B.
    pub kernels: Vec<KernelCode>,
    /// The code attribution of every metric ("<benchmark>:<metric>"), shown in the JSON as a
    /// `code` field of each metric.
    #[serde(skip)]
    pub code: BTreeMap<String, MetricCode>,
    /// The card's own outcome.
    pub outcome: Outcome,
}

impl CardJudgement {
    /// The attribution of a metric.
    pub fn code_of(&self, key: &str) -> Option<&MetricCode> {
        self.code.get(key)
    }
}

/// The listings of both stacks for a card's architecture, where made.
pub type ListingPair<'a> = Option<(&'a Listings, &'a Listings)>;

/// Judges one card's runs. A's runs are a per-card baseline: their run-to-run spreads take
/// `class` (the noise model of the class baseline, where there is one) as their prior, as a
/// saved per-card baseline's do; three runs alone show little of how far runs of a metric stray.
pub fn judge_card(
    uuid: &str,
    a: &[ResultsDocument],
    b: &[ResultsDocument],
    rule: &Rule,
    fail_on: FailOn,
    listings: ListingPair<'_>,
    class: Option<&crate::verdict::NoiseModel>,
) -> CardJudgement {
    let name = b.last().or(a.last()).map(|r| r.gpu.name.clone()).unwrap_or_default();
    let mut card = CardJudgement {
        uuid: uuid.to_string(),
        name,
        runs: [a.len(), b.len()],
        comparison: None,
        not_judged: None,
        kernels: Vec::new(),
        code: BTreeMap::new(),
        outcome: Outcome::NotJudged,
    };
    let missing: Vec<&str> = [("A", a), ("B", b)].iter().filter(|(_, r)| r.is_empty()).map(|(l, _)| *l).collect();
    if !missing.is_empty() {
        card.not_judged = Some(format!("no runs of stack {} on this card", missing.join(" and ")));
        return card;
    }
    let noise = crate::verdict::noise::learn(a, class, rule.confidence);
    let c = match compare(Side { label: "A", runs: a, noise: Some(&noise) }, Side::of("B", b), rule) {
        Ok(c) => c,
        Err(e) => {
            card.not_judged = Some(e.to_string());
            return card;
        }
    };
    let (ka, kb) = (run_kernels(a.last().expect("A has runs")), run_kernels(b.last().expect("B has runs")));
    let kernels = kernel_comparisons(&ka, &kb, listings);
    let by_source: BTreeMap<String, KernelCode> = kernels.iter().map(|k| (k.source.clone(), k.clone())).collect();
    let sources = benchmark_sources(b.last().expect("B has runs"), a.last().expect("A has runs"));
    for m in &c.metrics {
        let (srcs, config) = sources.get(&m.benchmark).cloned().unwrap_or_default();
        card.code.insert(m.key(), MetricCode::of(&m.benchmark, &m.metric, &config, &srcs, &by_source));
    }
    card.kernels = kernels;
    card.outcome = outcome_of(&c, &card.code, fail_on);
    if card.outcome == Outcome::NotJudged {
        card.not_judged = Some(format!("--fail-on: {}", c.counts.line()));
    }
    card.comparison = Some(c);
    card
}

fn kernel_comparisons(
    a: &BTreeMap<String, KernelProvenance>,
    b: &BTreeMap<String, KernelProvenance>,
    listings: ListingPair<'_>,
) -> Vec<KernelCode> {
    let names: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    names
        .into_iter()
        .map(|s| {
            let (pa, pb) = (a.get(s), b.get(s));
            let (pair, stale) = match (listings, pa, pb) {
                (Some((la, lb)), Some(pa), Some(pb)) => {
                    let (fa, fb) = (la.of(s, &pa.cubin_sha256), lb.of(s, &pb.cubin_sha256));
                    let listed = la.functions.contains_key(s.as_str()) && lb.functions.contains_key(s.as_str());
                    (fa.zip(fb), listed && (fa.is_none() || fb.is_none()))
                }
                _ => (None, false),
            };
            let mut k = compare_source(s, pa, pb, pair);
            if stale && k.by != "SASS" && k.verdict != CodeVerdict::Identical {
                k.by = "cubin SHA-256: the compiled listing is not the cubin the runs loaded".into();
            }
            k
        })
        .collect()
}

/// Kernel sources and configuration words of each benchmark, from the new side's run, else the
/// baseline's.
fn benchmark_sources(new: &ResultsDocument, old: &ResultsDocument) -> BTreeMap<String, (Vec<String>, String)> {
    let mut out = BTreeMap::new();
    for b in old.benchmarks.iter().chain(&new.benchmarks) {
        if !b.kernels.is_empty() {
            let sources = b.kernels.iter().map(|k| k.source.clone()).collect();
            out.insert(b.id.clone(), (sources, super::code::config_words(b)));
        }
    }
    out
}

fn outcome_of(c: &Comparison, code: &BTreeMap<String, MetricCode>, fail_on: FailOn) -> Outcome {
    let regressed: Vec<CodeVerdict> = c
        .metrics
        .iter()
        .filter(|m| m.verdict == Verdict::Regressed)
        .map(|m| code.get(&m.key()).map_or(CodeVerdict::Unknown, |k| k.verdict))
        .collect();
    let facts_regressed = c.facts.iter().any(|f| f.verdict == Verdict::Regressed);
    if facts_regressed || regressed.iter().any(|v| !v.same_measured_code()) {
        Outcome::RegressedCodeChanged
    } else if !regressed.is_empty() {
        Outcome::RegressedSameCode
    } else if c.exit_code_with(fail_on) != exit::OK {
        Outcome::NotJudged
    } else {
        Outcome::Pass
    }
}

/// The job's outcome over its cards: a regression with changed code first, then one with the
/// same code, then a card not judged.
pub fn overall(cards: &[CardJudgement]) -> Outcome {
    let has = |o: Outcome| cards.iter().any(|c| c.outcome == o);
    if cards.is_empty() {
        Outcome::NotJudged
    } else if has(Outcome::RegressedCodeChanged) {
        Outcome::RegressedCodeChanged
    } else if has(Outcome::RegressedSameCode) {
        Outcome::RegressedSameCode
    } else if has(Outcome::NotJudged) {
        Outcome::NotJudged
    } else {
        Outcome::Pass
    }
}

/// One side of the job, as the report names it.
#[derive(Debug, Clone, Serialize)]
pub struct StackInfo {
    /// "A" or "B".
    pub label: String,
    /// What was asked for: archive, NVRTC library, environment; or the before/after baseline.
    pub description: String,
    /// The NVRTC versions its runs loaded.
    pub nvrtc: Vec<String>,
    /// The driver versions its runs saw.
    pub driver: Vec<String>,
}

impl StackInfo {
    /// The stack of `runs` as described.
    pub fn of<'a>(
        label: &str,
        description: &str,
        runs: impl Iterator<Item = &'a ResultsDocument> + Clone,
    ) -> StackInfo {
        let mut nvrtc: Vec<String> = runs.clone().map(|r| r.stack.nvrtc_version.clone()).collect();
        nvrtc.sort();
        nvrtc.dedup();
        let mut driver: Vec<String> =
            runs.map(|r| r.stack.driver_version.clone().unwrap_or_else(|| "unknown".into())).collect();
        driver.sort();
        driver.dedup();
        StackInfo { label: label.into(), description: description.into(), nvrtc, driver }
    }

    /// "A: archive a.tar.gz, NVRTC 12.9, driver 580.159.04".
    pub fn line(&self) -> String {
        format!(
            "{}: {}; NVRTC {}, driver {}",
            self.label,
            self.description,
            self.nvrtc.join("/"),
            self.driver.join("/")
        )
    }
}

/// The whole job: stacks, rounds, cards and the outcome.
#[derive(Debug, Clone, Serialize)]
pub struct UpgradeReport {
    /// Always [`UPGRADE_SCHEMA`].
    pub schema: String,
    /// A and B.
    pub stacks: [StackInfo; 2],
    /// Rounds asked for.
    pub rounds: usize,
    /// How machine code was compared: "SASS listings (...)" or "cubin SHA-256 only: ...".
    pub code_by: String,
    /// Things to know (a stack loaded the same NVRTC as the other, a listing did not match).
    pub notes: Vec<String>,
    /// One judgement per card.
    pub cards: Vec<CardJudgement>,
    /// The conclusion.
    pub outcome: Outcome,
}

impl UpgradeReport {
    /// The report as JSON, each metric of each card's comparison with its `code` attribution.
    pub fn json(&self) -> String {
        let mut v = serde_json::to_value(self).expect("upgrade reports serialise");
        for (i, card) in self.cards.iter().enumerate() {
            let Some(metrics) = v["cards"][i]["comparison"]["metrics"].as_array_mut() else { continue };
            for m in metrics {
                let key = format!("{}:{}", m["benchmark"].as_str().unwrap_or(""), m["metric"].as_str().unwrap_or(""));
                if let Some(code) = card.code_of(&key) {
                    m["code"] = serde_json::to_value(code).expect("attributions serialise");
                }
            }
        }
        let mut s = serde_json::to_string_pretty(&v).expect("JSON values print");
        s.push('\n');
        s
    }

    /// The documented exit code.
    pub fn exit_code(&self) -> i32 {
        self.outcome.exit_code()
    }
}
