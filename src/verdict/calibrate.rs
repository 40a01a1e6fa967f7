//! Calibration of the verdict rule on recorded runs: how often it cries wolf, and how much it
//! catches.
//!
//! Every baseline learns its noise model from its own runs ([`super::noise`]), as a saved
//! baseline would:
//!
//! - **Same card, leave one run out**: for every card with two or more runs, each run in turn
//!   is the candidate and the card's other runs are a per-card baseline, whose run-to-run
//!   spreads take the other cards' runs (a class baseline without this card) as their prior.
//! - **Same card in a class baseline**: likewise, but the baseline holds every other run of
//!   every card (a class baseline that includes the candidate's card).
//! - **Class, leave one card out**: for every card, when two or more other cards remain, each
//!   of its runs in turn is the candidate and the other cards' runs are the baseline.
//!
//! Each comparison is made once as recorded (A/A: every REGRESSED is a false alarm) and once
//! per injected shift in [`SHIFTS`], every sample of every metric of the candidate run moved
//! together in the bad direction (latency up by the shift, bandwidth down by it), which is
//! what a real per-run change looks like. The power table is the share of metric verdicts that
//! come out REGRESSED, per [`MetricClass`]; the table of single metrics shifts them with the
//! families' verdicts off, which is what a change of one metric alone meets (one metric does
//! not move the median of its family).

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Counts, Level, Rule, Side, Verdict, compare};
use crate::error::{Error, Result};
use crate::results::{Better, ResultsDocument};

/// Injected per-run shifts of the power table.
pub const SHIFTS: [f64; 5] = [0.01, 0.02, 0.03, 0.05, 0.10];

/// Schema tag of the calibration JSON.
pub const CALIBRATION_SCHEMA: &str = "gpubench.calibration/1";

/// The metric classes of the power table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricClass {
    /// Pointer-chase latencies.
    Latency,
    /// Memory and cache bandwidths.
    Bandwidth,
    /// Instruction latency and throughput.
    Instructions,
    /// Shared-memory latency (bank conflicts) and bandwidth.
    SharedMemory,
    /// Global and shared atomics.
    Atomics,
    /// Everything else (constant memory, spilling).
    Other,
}

impl MetricClass {
    /// The class of a bench family.
    pub fn of_family(family: &str) -> Self {
        match family {
            "latency" => MetricClass::Latency,
            "stream" | "dram" | "l1_bandwidth" | "l2_bandwidth" | "access_patterns" | "sm_bandwidth" => {
                MetricClass::Bandwidth
            }
            "instructions" => MetricClass::Instructions,
            "shared_banks" | "shared_bandwidth" => MetricClass::SharedMemory,
            f if f.starts_with("atomic") => MetricClass::Atomics,
            _ => MetricClass::Other,
        }
    }

    /// The shift a metric of the class is meant to be caught at, at which its misses are
    /// listed ([`LevelCalibration::missed`]): against a class baseline 5 %; on the same card
    /// 5 % for atomics, whose contended forms differ by 1-2 % between runs, 3 % for the others
    /// (docs, "Baselines and verdicts").
    pub fn target_shift(self, level: Level) -> f64 {
        match (level, self) {
            (Level::SameCard, MetricClass::Atomics) | (Level::Class | Level::OtherCard, _) => 0.05,
            (Level::SameCard, _) => 0.03,
        }
    }

    /// "latency", "bandwidth", "instructions", "shared memory", "atomics", "other".
    pub fn label(self) -> &'static str {
        match self {
            MetricClass::Latency => "latency",
            MetricClass::Bandwidth => "bandwidth",
            MetricClass::Instructions => "instructions",
            MetricClass::SharedMemory => "shared memory",
            MetricClass::Atomics => "atomics",
            MetricClass::Other => "other",
        }
    }
}

/// Detection power of one metric class at one level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PowerRow {
    /// The class.
    pub class: MetricClass,
    /// Metric verdicts per shift (metrics of the class times comparisons).
    pub verdicts: usize,
    /// Share of them REGRESSED at each shift of [`SHIFTS`].
    pub detected: Vec<f64>,
    /// A/A verdicts of the class that were not PASS (INCONCLUSIVE, IMPROVED, REGRESSED).
    pub aa_not_pass: usize,
}

/// What the baseline of each comparison held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BaselineScope {
    /// The candidate card's other runs only.
    Card,
    /// The runs of several cards.
    Class,
}

/// The calibration at one level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LevelCalibration {
    /// Same card (leave one run out) or class (leave one card out).
    pub level: Level,
    /// The candidate card's runs only, or several cards' runs.
    pub baseline: BaselineScope,
    /// Comparisons made (candidate runs).
    pub comparisons: usize,
    /// Class comparisons judged against the cards of the candidate's board (the runs carry
    /// board part numbers and the baseline holds several boards, docs, "Baselines and verdicts").
    pub by_board: usize,
    /// Verdict counts over every A/A comparison.
    pub aa: Counts,
    /// A/A metrics that came out REGRESSED, with how often ("benchmark:metric" -> count).
    pub false_alarms: BTreeMap<String, usize>,
    /// Detection power per metric class, every metric of the run shifted together.
    pub power: Vec<PowerRow>,
    /// Detection power per metric class of each metric shifted alone (families' verdicts off).
    pub single_metrics: Vec<PowerRow>,
    /// The detectable effects the A/A comparisons stated.
    pub sensitivity: Detectable,
    /// Metrics not REGRESSED in some comparison at the target shift of their class
    /// ([`MetricClass::target_shift`]; "benchmark:metric" -> comparisons missed, out of those
    /// that judged it).
    pub missed: BTreeMap<String, Missed>,
    /// Bench families judged as a whole ([`super::FamilyVerdict`]), by name.
    pub families: BTreeMap<String, FamilyPower>,
}

/// The detectable effects ([`super::MetricVerdict::detectable`]) of every metric verdict of the
/// A/A comparisons of one level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Detectable {
    /// Metric verdicts with a detectable effect.
    pub judged: usize,
    /// Of them, at most 5 %.
    pub within_5_percent: usize,
    /// Their median.
    pub median: Option<f64>,
    /// The largest.
    pub max: Option<f64>,
    /// A/A verdicts INSENSITIVE.
    pub insensitive: usize,
}

/// How a bench family judged as a whole fared over the comparisons of one level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FamilyPower {
    /// Comparisons that judged the family as a whole.
    pub comparisons: usize,
    /// A/A family verdicts REGRESSED (false alarms).
    pub aa_regressed: usize,
    /// A/A family verdicts not PASS.
    pub aa_not_pass: usize,
    /// Share of comparisons in which the family was REGRESSED, at each shift of [`SHIFTS`].
    pub detected: Vec<f64>,
}

/// How often one metric escaped the target shift of its class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Missed {
    /// Comparisons in which it was not REGRESSED.
    pub missed: usize,
    /// Comparisons that judged it.
    pub of: usize,
}

impl LevelCalibration {
    /// Detection share of `class` at `shift` (one of [`SHIFTS`]).
    pub fn detected(&self, class: MetricClass, shift: f64) -> Option<f64> {
        let i = SHIFTS.iter().position(|s| (s - shift).abs() < 1e-9)?;
        self.power.iter().find(|r| r.class == class).map(|r| r.detected[i])
    }
}

/// The whole calibration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    /// Always [`CALIBRATION_SCHEMA`].
    pub schema: String,
    /// GPU class of the runs.
    pub gpu_class: String,
    /// Profile of the runs.
    pub profile: String,
    /// Runs used per card (GPU UUID).
    pub cards: BTreeMap<String, usize>,
    /// Runs left out (another class, profile or settings than the largest group).
    pub skipped: Vec<String>,
    /// The injected shifts.
    pub shifts: Vec<f64>,
    /// Same-card leave-one-run-out calibration against the card's other runs, when a card has
    /// two or more runs.
    pub same_card: Option<LevelCalibration>,
    /// Same-card leave-one-run-out calibration against every other run of every card, when there
    /// are two or more cards and a card has two or more runs.
    pub same_card_in_class: Option<LevelCalibration>,
    /// Leave-one-card-out calibration, when there are three or more cards.
    pub class: Option<LevelCalibration>,
}

/// Calibrates `rule` on `runs` (label, run). Runs are grouped by GPU class, profile and
/// settings, and the largest group is used; the rest are listed as skipped. Search-chosen
/// settings recorded among the parameters by older runs are moved aside first
/// ([`super::corpus::split_chosen`]).
pub fn calibrate(mut runs: Vec<(String, ResultsDocument)>, rule: &Rule) -> Result<Calibration> {
    rule.validate().map_err(Error::Usage)?;
    super::corpus::split_chosen(&mut runs);
    let mut groups: BTreeMap<String, Vec<(String, ResultsDocument)>> = BTreeMap::new();
    for (label, run) in runs {
        let s = &run.settings;
        let key = format!(
            "{} profile {} ({} samples, filter {:?})",
            run.gpu.class_key().slug(),
            s.profile,
            s.sample_size,
            s.filter
        );
        groups.entry(key).or_default().push((label, run));
    }
    let best = groups
        .iter()
        .max_by_key(|(_, v)| v.len())
        .map(|(k, _)| k.clone())
        .ok_or_else(|| Error::Usage("no results runs found to calibrate on".into()))?;
    let mut skipped = Vec::new();
    for (key, v) in &groups {
        if *key != best {
            skipped.extend(v.iter().map(|(l, _)| format!("{l} ({key})")));
        }
    }
    let chosen = groups.remove(&best).unwrap_or_default();
    let (gpu_class, profile) = (chosen[0].1.gpu.class_key().slug(), chosen[0].1.settings.profile.clone());
    let mut by_card: BTreeMap<String, Vec<ResultsDocument>> = BTreeMap::new();
    for (_, run) in chosen {
        by_card.entry(run.gpu.uuid.clone()).or_default().push(run);
    }
    for runs in by_card.values_mut() {
        runs.sort_by_key(|r| r.created_unix_s);
    }

    // Same card: leave one run out, of the card's runs and of every card's runs.
    let mut same = Vec::new();
    let mut same_in_class = Vec::new();
    for (uuid, runs) in by_card.iter().filter(|(_, r)| r.len() >= 2) {
        for i in 0..runs.len() {
            let baseline: Vec<ResultsDocument> =
                runs.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, r)| r.clone()).collect();
            let others: Vec<ResultsDocument> =
                by_card.iter().filter(|(u, _)| *u != uuid).flat_map(|(_, r)| r.iter().cloned()).collect();
            if by_card.len() >= 2 {
                same_in_class.push(Pair {
                    baseline: baseline.iter().cloned().chain(others.iter().cloned()).collect(),
                    candidate: runs[i].clone(),
                    prior: None,
                });
            }
            let prior = (!others.is_empty()).then(|| Box::new(super::noise::learn(&others, None, rule.confidence)));
            same.push(Pair { baseline, candidate: runs[i].clone(), prior });
        }
    }
    // Class: leave one card out, with at least two cards left.
    let mut class = Vec::new();
    if by_card.len() >= 3 {
        for (uuid, runs) in &by_card {
            let baseline: Vec<ResultsDocument> =
                by_card.iter().filter(|(u, _)| *u != uuid).flat_map(|(_, r)| r.iter().cloned()).collect();
            for run in runs {
                class.push(Pair { baseline: baseline.clone(), candidate: run.clone(), prior: None });
            }
        }
    }
    Ok(Calibration {
        schema: CALIBRATION_SCHEMA.to_string(),
        gpu_class,
        profile,
        cards: by_card.iter().map(|(u, r)| (u.clone(), r.len())).collect(),
        skipped,
        shifts: SHIFTS.to_vec(),
        same_card: (!same.is_empty()).then(|| level(Level::SameCard, BaselineScope::Card, &same, rule)).transpose()?,
        same_card_in_class: (!same_in_class.is_empty())
            .then(|| level(Level::SameCard, BaselineScope::Class, &same_in_class, rule))
            .transpose()?,
        class: (!class.is_empty()).then(|| level(Level::Class, BaselineScope::Class, &class, rule)).transpose()?,
    })
}

/// One comparison of a calibration: a baseline's runs, the candidate run, and the model whose
/// run spreads are the prior of a per-card baseline's.
struct Pair {
    baseline: Vec<ResultsDocument>,
    candidate: ResultsDocument,
    prior: Option<Box<super::noise::NoiseModel>>,
}

fn level(level: Level, baseline: BaselineScope, pairs: &[Pair], rule: &Rule) -> Result<LevelCalibration> {
    let mut aa = Counts::default();
    let mut false_alarms: BTreeMap<String, usize> = BTreeMap::new();
    let mut totals: BTreeMap<MetricClass, (usize, Vec<usize>, usize)> = BTreeMap::new();
    let mut missed: BTreeMap<String, Missed> = BTreeMap::new();
    // `detected` counts hits until the shares are taken at the end.
    let mut families: BTreeMap<String, FamilyPower> = BTreeMap::new();
    let mut by_board = 0;
    let mut alone: BTreeMap<MetricClass, Vec<usize>> = BTreeMap::new();
    let mut detectable: Vec<f64> = Vec::new();
    let mut insensitive = 0;
    let alone_rule = Rule { family_verdicts: None, same_card_family_verdicts: None, ..rule.clone() };
    for pair in pairs {
        let (baseline, candidate) = (&pair.baseline, &pair.candidate);
        let noise = &super::noise::learn(baseline, pair.prior.as_deref(), rule.confidence);
        let judge_with = |run: &ResultsDocument, rule: &Rule| {
            compare(
                Side { label: "baseline", runs: baseline, noise: Some(noise) },
                Side::of("candidate", std::slice::from_ref(run)),
                rule,
            )
        };
        let judge = |run: &ResultsDocument| judge_with(run, rule);
        let c = judge(candidate)?;
        by_board += usize::from(c.baseline_kind.board.is_some());
        for m in &c.metrics {
            aa.add(m.verdict);
            detectable.extend(m.detectable);
            insensitive += usize::from(m.verdict == Verdict::Insensitive);
            if m.verdict == Verdict::Regressed {
                *false_alarms.entry(m.key()).or_default() += 1;
            }
            let e = totals.entry(MetricClass::of_family(&m.family)).or_insert((0, vec![0; SHIFTS.len()], 0));
            e.0 += 1;
            if m.verdict != Verdict::Pass {
                e.2 += 1;
            }
        }
        for f in &c.families {
            let p = families.entry(f.family.clone()).or_insert_with(|| FamilyPower {
                comparisons: 0,
                aa_regressed: 0,
                aa_not_pass: 0,
                detected: vec![0.0; SHIFTS.len()],
            });
            p.comparisons += 1;
            p.aa_regressed += usize::from(f.verdict == Verdict::Regressed);
            p.aa_not_pass += usize::from(f.verdict != Verdict::Pass);
        }
        for (i, shift) in SHIFTS.iter().enumerate() {
            let moved = shifted(candidate, *shift);
            for m in judge_with(&moved, &alone_rule)?.metrics.iter().filter(|m| m.verdict == Verdict::Regressed) {
                alone.entry(MetricClass::of_family(&m.family)).or_insert_with(|| vec![0; SHIFTS.len()])[i] += 1;
            }
            let c = judge(&moved)?;
            for f in c.families.iter().filter(|f| f.verdict == Verdict::Regressed) {
                if let Some(p) = families.get_mut(&f.family) {
                    p.detected[i] += 1.0;
                }
            }
            for m in c.metrics.iter().filter(|m| m.verdict == Verdict::Regressed) {
                if let Some(e) = totals.get_mut(&MetricClass::of_family(&m.family)) {
                    e.1[i] += 1;
                }
            }
            let at_target = |family: &str| (MetricClass::of_family(family).target_shift(level) - shift).abs() < 1e-9;
            for m in c.metrics.iter().filter(|m| m.verdict != Verdict::NotMeasured && at_target(&m.family)) {
                let e = missed.entry(m.key()).or_insert(Missed { missed: 0, of: 0 });
                e.of += 1;
                e.missed += usize::from(m.verdict != Verdict::Regressed);
            }
        }
    }
    let share = |hits: &[usize], n: usize| hits.iter().map(|h| *h as f64 / n.max(1) as f64).collect::<Vec<f64>>();
    let single_metrics = totals
        .iter()
        .map(|(class, (n, _, aa_not_pass))| PowerRow {
            class: *class,
            verdicts: *n,
            detected: share(alone.get(class).map_or(&[0; SHIFTS.len()][..], |v| &v[..]), *n),
            aa_not_pass: *aa_not_pass,
        })
        .collect();
    let power = totals
        .into_iter()
        .map(|(class, (n, hits, aa_not_pass))| PowerRow { class, verdicts: n, detected: share(&hits, n), aa_not_pass })
        .collect();
    detectable.sort_by(f64::total_cmp);
    let sensitivity = Detectable {
        judged: detectable.len(),
        within_5_percent: detectable.iter().filter(|d| **d <= 0.05).count(),
        median: crate::stats::median(&detectable),
        max: detectable.last().copied(),
        insensitive,
    };
    missed.retain(|_, m| m.missed > 0);
    for p in families.values_mut() {
        let n = p.comparisons.max(1) as f64;
        p.detected.iter_mut().for_each(|d| *d /= n);
    }
    Ok(LevelCalibration {
        level,
        baseline,
        comparisons: pairs.len(),
        by_board,
        aa,
        false_alarms,
        power,
        single_metrics,
        sensitivity,
        missed,
        families,
    })
}

/// `run` with every sample of every metric moved by `shift` in the bad direction: latency up
/// by the factor 1 + shift, bandwidth down by 1 − shift.
pub fn shifted(run: &ResultsDocument, shift: f64) -> ResultsDocument {
    let mut d = run.clone();
    for b in &mut d.benchmarks {
        for m in &mut b.metrics {
            let factor = match m.better {
                Better::Lower => 1.0 + shift,
                Better::Higher => 1.0 - shift,
            };
            m.samples.iter_mut().for_each(|v| *v *= factor);
            m.summary = crate::results::Summary::of(&m.samples);
            if let Some(n) = &mut m.normalized {
                n.samples.iter_mut().for_each(|v| *v *= factor);
                n.summary = crate::results::Summary::of(&n.samples);
            }
        }
    }
    d
}
