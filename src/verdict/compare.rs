//! Comparing two sides metric by metric.

use std::collections::{BTreeMap, BTreeSet};

use regex::Regex;

use super::boards::Boards;
use super::contamination;
use super::decide::{BandInputs, DETECTION_POWER_Z, Gate, ONE_RUN_EACH, Stats, decide};
use super::family::{self, FamilyRule, FamilyVerdict, Member};
use super::gate::{self, Prepared};
use super::level::{self, Level};
use super::multiplicity;
use super::noise::{self, NoiseModel};
use super::sampling::{self, SideRuns};
use super::series::{self, MetricSeries, param_difference};
use super::{
    BaselineKind, Basis, COMPARISON_SCHEMA, Comparison, ConfidenceScope, Counts, LearnedBoard, MetricConfidence,
    MetricVerdict, Rule, SideInfo, SideStats, Upgrade, Verdict, facts::compare_facts,
};
use crate::error::{Error, Result};
use crate::results::{ClockDomain, ResultsDocument};
use crate::stats::{Interval, median};

/// One side of a comparison: a label for reports and its runs, oldest first.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    /// Where the runs came from, e.g. a baseline file.
    pub label: &'a str,
    /// The runs; samples of one metric are pooled over them.
    pub runs: &'a [ResultsDocument],
    /// What the baseline learned of its runs' noise ([`super::noise`]); `None`: learned from
    /// `runs` here, as a baseline file would have stored it.
    pub noise: Option<&'a NoiseModel>,
}

impl<'a> Side<'a> {
    /// A side of `runs` whose noise is learned from them.
    pub fn of(label: &'a str, runs: &'a [ResultsDocument]) -> Self {
        Side { label, runs, noise: None }
    }
}

impl Side<'_> {
    fn newest(&self) -> Result<&ResultsDocument> {
        self.runs.last().ok_or_else(|| Error::Usage(format!("{}: no runs to compare", self.label)))
    }

    fn info(&self) -> Result<SideInfo> {
        let run = self.newest()?;
        Ok(SideInfo {
            label: self.label.to_string(),
            gpu: run.gpu.clone(),
            stack: run.stack.clone(),
            settings: run.settings.clone(),
            runs: self.runs.len(),
            created_unix_s: run.created_unix_s,
            wall_time_s: crate::stats::median(&self.runs.iter().map(|r| r.wall_time_s).collect::<Vec<_>>())
                .unwrap_or(0.0),
        })
    }
}

/// Compares `candidate` with `baseline` under `rule` (see the module documentation of
/// [`crate::verdict`]). Fails only when a side has no runs or the rule is out of range.
pub fn compare(baseline: Side<'_>, candidate: Side<'_>, rule: &Rule) -> Result<Comparison> {
    rule.validate().map_err(Error::Usage)?;
    let (old_run, new_run) = (baseline.newest()?, candidate.newest()?);
    if candidate.runs.iter().all(|r| r.benchmarks.is_empty()) {
        return Err(Error::Usage(format!("{}: the new side holds no benchmarks: nothing to judge", candidate.label)));
    }
    let samples = |side: &Side<'_>| {
        side.runs.iter().flat_map(|r| &r.benchmarks).flat_map(|b| &b.metrics).map(|m| m.samples.len()).max()
    };
    if let (Some(a), Some(b)) = (samples(&baseline), samples(&candidate))
        && rule.min_samples > a.max(b)
    {
        return Err(Error::Usage(format!(
            "min_samples = {} exceeds the {} samples a metric has on either side: every metric would be INCONCLUSIVE",
            rule.min_samples,
            a.max(b)
        )));
    }
    let noise = match baseline.noise {
        Some(n) => n.clone(),
        None => noise::learn(baseline.runs, None, rule.confidence),
    };
    let old_series = series::collect(baseline.runs);
    let new_series = series::collect(candidate.runs);
    let new_index: BTreeMap<(&str, &str), &MetricSeries> =
        new_series.iter().map(|s| ((s.benchmark.as_str(), s.metric.as_str()), s)).collect();
    let old_keys: BTreeSet<(&str, &str)> =
        old_series.iter().map(|s| (s.benchmark.as_str(), s.metric.as_str())).collect();
    let new_benchmarks: BTreeSet<&str> =
        candidate.runs.iter().flat_map(|r| r.benchmarks.iter().map(|b| b.id.as_str())).collect();
    let new_families: BTreeSet<&str> =
        candidate.runs.iter().flat_map(|r| r.benchmarks.iter().map(|b| b.family.as_str())).collect();
    let filter = new_run.settings.filter.as_deref().and_then(|f| Regex::new(f).ok());

    // Another process on the GPU during a benchmark: its metrics are INCONCLUSIVE, never judged.
    let (old_shared, new_shared) =
        (contamination::by_benchmark(baseline.runs), contamination::by_benchmark(candidate.runs));
    let candidate_uuid = new_run.gpu.uuid.as_str();
    let boards = Boards {
        by_uuid: baseline.runs.iter().map(|r| (r.gpu.uuid.clone(), r.gpu.board_part_number.clone())).collect(),
        candidate: new_run.gpu.board_part_number.clone(),
        confidence: rule.confidence,
        learned: noise.card_boards.clone(),
    };
    let mut assessed = Vec::new();
    let mut not_run = Vec::new();
    for old in &old_series {
        match new_index.get(&(old.benchmark.as_str(), old.metric.as_str())) {
            Some(new) => assessed.push(match (new_shared.get(&old.benchmark), old_shared.get(&old.benchmark)) {
                (Some(why), _) => Assessed { row: row(old, Verdict::Inconclusive, why.clone()), stats: None },
                (None, Some(why)) => {
                    Assessed { row: row(old, Verdict::Inconclusive, format!("baseline: {why}")), stats: None }
                }
                (None, None) => assess(old, new, candidate_uuid, &boards, rule, &noise),
            }),
            None => {
                let ran = new_benchmarks.contains(old.benchmark.as_str());
                let filtered = filter.as_ref().is_some_and(|f| !f.is_match(&old.benchmark));
                if !ran && filtered {
                    not_run.push(old.key());
                    continue;
                }
                let why = if ran {
                    "metric not reported by the new run"
                } else if new_families.contains(old.family.as_str()) {
                    "benchmark missing from the new run"
                } else {
                    "family not measured by the new run"
                };
                assessed.push(Assessed { row: row(old, Verdict::NotMeasured, why.into()), stats: None });
            }
        }
    }

    let (confidence, at_risk) = metric_confidence(&assessed, rule);
    if confidence > rule.confidence {
        rejudge(&mut assessed, confidence);
    }
    let families = judge_families(&assessed, candidate_uuid, rule, confidence, &noise);
    let mut kind = baseline_kind(baseline.runs, candidate_uuid, &boards);
    kind.learned_board = learned_board(&assessed, &noise);
    let metrics: Vec<MetricVerdict> = assessed
        .into_iter()
        .map(|a| match a.stats {
            Some(stats) => {
                let family = families.iter().find(|f| f.family == stats.family && f.level == stats.level);
                decide(a.row, &stats, family, rule.max_detectable)
            }
            None => a.row,
        })
        .collect();

    let mut comparison = Comparison {
        schema: COMPARISON_SCHEMA.to_string(),
        counts: Counts::default(),
        baseline: baseline.info()?,
        candidate: candidate.info()?,
        upgrade: Upgrade::between(old_run, new_run),
        baseline_kind: kind,
        rule: rule.clone(),
        metric_confidence: MetricConfidence { confidence, at_risk },
        metrics,
        families,
        facts: compare_facts(&old_run.facts, &new_run.facts, rule),
        not_in_baseline: new_series
            .iter()
            .filter(|s| !old_keys.contains(&(s.benchmark.as_str(), s.metric.as_str())))
            .map(MetricSeries::key)
            .collect(),
        not_run,
        warnings: warnings(old_run, new_run, baseline.runs, &boards),
    };
    let unknown = comparison.metrics.iter().filter(|m| m.reason.contains(ONE_RUN_EACH)).count();
    if unknown > 0 {
        comparison.warnings.push(format!(
            "{unknown} {} moved beyond the minimum effect, but the baseline holds one run of this card, the new side one, and no run-to-run spread: a process's own level cannot be told from a change, so none is REGRESSED or IMPROVED (save two more runs: `cargo gpubench --save-baseline --append`)",
            if unknown == 1 { "metric" } else { "metrics" }
        ));
    }
    comparison.recount();
    Ok(comparison)
}

/// The kind of baseline `runs` is for a new run on `uuid`.
fn baseline_kind(runs: &[ResultsDocument], uuid: &str, boards: &Boards) -> BaselineKind {
    let cards: BTreeSet<&str> = runs.iter().map(|r| r.gpu.uuid.as_str()).collect();
    let same_card_runs = runs.iter().filter(|r| r.gpu.uuid == uuid).count();
    let level = if same_card_runs > 0 {
        Level::SameCard
    } else if cards.len() >= 2 {
        Level::Class
    } else {
        Level::OtherCard
    };
    let board = (level == Level::Class).then(|| boards.split_for(cards.iter().copied())).flatten();
    let board_cards = board.map(|b| cards.iter().filter(|u| boards.board_of(u) == Some(b)).count());
    BaselineKind {
        level,
        cards: cards.len(),
        runs: runs.len(),
        same_card_runs,
        uuid: uuid.to_string(),
        board: board.map(str::to_string),
        board_cards,
        learned_board: None,
    }
}

/// The metrics of `assessed` judged against the cards of the candidate's board that the
/// baseline learned from ([`super::boards::learn_levels`]), and the most cards of it any of them
/// was judged against; `None` where there are none.
fn learned_board(assessed: &[Assessed], noise: &NoiseModel) -> Option<LearnedBoard> {
    let splits: Vec<&super::boards::BoardSplit> = assessed
        .iter()
        .filter_map(|a| a.stats.as_ref()?.band_inputs.reference.board.as_ref())
        .filter(|b| b.learned)
        .collect();
    let part_number = splits.first()?.part_number.clone();
    Some(LearnedBoard {
        cards: noise.card_boards.get(&part_number).copied().unwrap_or(0),
        metrics: splits.len(),
        part_number,
    })
}

fn warnings(
    old: &ResultsDocument,
    new: &ResultsDocument,
    baseline_runs: &[ResultsDocument],
    boards: &Boards,
) -> Vec<String> {
    let mut w = Vec::new();
    let kind = baseline_kind(baseline_runs, &new.gpu.uuid, &Boards::default());
    if let (Level::Class, Some(board)) = (kind.level, boards.unseen()) {
        w.push(format!(
            "the class baseline holds cards of one other board only, none of board {board}: no metric can be REGRESSED or IMPROVED against it (add runs of a card of this board to the class baseline)"
        ));
    }
    if kind.level == Level::OtherCard {
        w.push(format!(
            "the baseline holds one card ({}), not this one ({}): how cards of the class differ is unknown, so no metric can be REGRESSED or IMPROVED (save runs of two or more cards for a class baseline)",
            old.gpu.uuid, new.gpu.uuid
        ));
    }
    let (a, b) = (old.gpu.class_key(), new.gpu.class_key());
    if a != b {
        w.push(format!("different GPU classes: baseline {}, new {}", a.slug(), b.slug()));
    }
    if old.settings.profile != new.settings.profile {
        w.push(format!(
            "different profiles: baseline {}, new {} (benchmarks with other parameters are INCONCLUSIVE)",
            old.settings.profile, new.settings.profile
        ));
    }
    w
}

struct Assessed {
    row: MetricVerdict,
    stats: Option<Stats>,
}

fn row(s: &MetricSeries, verdict: Verdict, reason: String) -> MetricVerdict {
    MetricVerdict {
        benchmark: s.benchmark.clone(),
        family: s.family.clone(),
        metric: s.metric.clone(),
        unit: s.unit.clone(),
        better: s.better,
        verdict,
        reason,
        basis: Basis::Raw,
        baseline: None,
        candidate: None,
        ratio: None,
        ci: None,
        threshold: None,
        noise: None,
        level: None,
        reference_n: None,
        detectable: None,
    }
}

fn side_stats(p: &Prepared, values: &[f64]) -> SideStats {
    SideStats {
        median: crate::stats::median(values).unwrap_or(f64::NAN),
        n: values.len(),
        excluded: p.excluded,
        runs: p.runs,
        clock_mhz: p.clock_mhz,
        throttled: p.throttled,
    }
}

/// Everything the verdict is decided from: compatibility, gate, level, prediction band.
fn assess(
    old: &MetricSeries,
    new: &MetricSeries,
    candidate_uuid: &str,
    boards: &Boards,
    rule: &Rule,
    noise: &NoiseModel,
) -> Assessed {
    let incompatible = old
        .inconsistent
        .as_ref()
        .map(|w| format!("baseline runs differ: {w}"))
        .or_else(|| new.inconsistent.as_ref().map(|w| format!("new runs differ: {w}")))
        .or_else(|| (old.unit != new.unit).then(|| format!("unit {} vs {}", old.unit, new.unit)))
        .or_else(|| (old.better != new.better).then(|| "direction differs".to_string()))
        .or_else(|| param_difference(&old.params, &new.params))
        .or_else(|| old.method.difference(&new.method));
    if let Some(why) = incompatible {
        return Assessed { row: row(old, Verdict::Inconclusive, format!("not comparable: {why}")), stats: None };
    }
    let b = gate::prepare(&old.runs, rule.min_samples);
    let c = gate::prepare(&new.runs, rule.min_samples);
    let mut r = row(old, Verdict::Inconclusive, String::new());
    if b.values.len() < rule.min_samples || c.values.len() < rule.min_samples {
        r.reason = format!("too few samples ({} and {}, need {})", b.values.len(), c.values.len(), rule.min_samples);
        return Assessed { row: r, stats: None };
    }

    let domain = match old.domain {
        ClockDomain::Sm => "SM clock",
        ClockDomain::Memory => "memory clock",
        ClockDomain::None => "clock",
    };
    let clock_ratio = match (b.clock_mhz, c.clock_mhz) {
        (Some(x), Some(y)) if x > 0.0 && y > 0.0 => Some(y / x),
        _ => None,
    };
    let clock_text = |ratio: f64| {
        format!(
            "{domain} {:.0} MHz vs {:.0} MHz in the baseline ({:+.1}%)",
            c.clock_mhz.unwrap_or(0.0),
            b.clock_mhz.unwrap_or(0.0),
            (ratio - 1.0) * 100.0
        )
    };
    let mut throttled = Vec::new();
    for (name, p) in [("baseline", &b), ("new run", &c)] {
        if p.throttled {
            let reasons: Vec<&str> = p.reasons.iter().map(String::as_str).collect();
            throttled.push(format!(
                "{name} throttled ({}) in {}/{} samples",
                reasons.join(", "),
                p.throttled_samples,
                p.total
            ));
        }
    }
    let clock_off = clock_ratio.is_some_and(|r| (r - 1.0).abs() > rule.clock_tolerance);
    let have_normalized = b.normalized.is_some() && c.normalized.is_some();
    let gate = if (!throttled.is_empty() || clock_off) && have_normalized {
        let mut why = throttled.clone();
        why.extend(clock_ratio.filter(|_| clock_off).map(clock_text));
        Gate::Normalized(why.join("; "))
    } else if !throttled.is_empty() {
        Gate::Throttled(throttled.join("; "))
    } else if let Some(ratio) = clock_ratio.filter(|r| *r != 1.0) {
        Gate::Clock(ratio, clock_text(ratio))
    } else {
        Gate::Clean
    };

    let (basis, bv, cv, b_runs, b_uuids, c_runs) = match (&gate, &b.normalized, &c.normalized) {
        (Gate::Normalized(_), Some(bn), Some(cn)) => {
            (Basis::Normalized, bn, cn, &b.normalized_run_medians, &b.normalized_run_uuids, &c.normalized_run_medians)
        }
        _ => (Basis::Raw, &b.values, &c.values, &b.run_medians, &b.run_uuids, &c.run_medians),
    };
    if basis == Basis::Normalized {
        r.unit = old.normalized_unit.clone().unwrap_or_else(|| old.unit.clone());
    }
    r.basis = basis;
    r.baseline = Some(side_stats(&b, bv));
    r.candidate = Some(side_stats(&c, cv));

    let key = old.key();
    let minimum = rule.minimum_for(&key);
    let normalized = basis == Basis::Normalized;
    let reference = level::reference(b_runs, b_uuids, candidate_uuid, boards, noise.board_cards(&key, normalized));
    let spreads = noise.spreads(&key, normalized).copied().unwrap_or_default();
    let (run_tail, card_tail) = noise.family_tails(&old.family);
    let learned = level::Learned {
        run: spreads.run_model.or(spreads.run),
        card: spreads.card_model.or(spreads.card),
        run_tail,
        card_tail,
        run_envelope: spreads.run_envelope,
    };
    // The new side: one value per run on the same card; one card for a class comparison.
    let same_card = reference.level == Level::SameCard;
    let n_new = if same_card { c_runs.len() } else { 1 };
    let learned = if same_card { learned.or_new_runs(c_runs) } else { learned };
    let run_spread_unknown = same_card && learned.run_spread_unknown();
    // A run's median carries its own sampling error, the standard error of the median of its
    // samples: a floor under the run-to-run spread, learned or not. Runs of a noisy metric
    // (atomics under contention: 5 % between samples) scatter by that much between processes
    // even where the few pairs of runs a baseline holds happened to agree.
    let floor = rule.spread_floor.max(sampling::run_median_error(
        &SideRuns { pooled: bv, runs: b.runs },
        &SideRuns { pooled: cv, runs: c.runs },
    ));
    let inputs = BandInputs { reference, n_new, floor, learned };
    let (Some(x), Some(band)) = (median(c_runs), inputs.band(rule.confidence)) else {
        r.reason = "baseline median is not positive: no ratio to judge".into();
        return Assessed { row: r, stats: None };
    };
    let ratio = x / band.center;
    let level = inputs.reference.level;
    let chance = multiplicity::chance_beyond(minimum, band.half_width, band.df, rule.confidence);
    r.noise = Some(band.spread);
    r.level = Some(level);
    r.reference_n = Some(band.k);
    r.ratio = Some(ratio);
    let (threshold, detectable) = bounds(&mut r, &band, minimum);
    if run_spread_unknown {
        r.detectable = None;
    }

    // One side timed by the kernel's own clock, the other only by NVML (whose reading may be
    // stale): a change of the SM clock cannot be ruled out.
    let no_kernel_clock = (old.domain == ClockDomain::Sm && b.kernel_clock != c.kernel_clock).then(|| {
        let side = if b.kernel_clock { "the new run" } else { "the baseline" };
        format!("{side} has no kernel clock reading, so a change of the SM clock cannot be ruled out")
    });
    let excluded: Vec<String> = [("baseline", b.excluded), ("new run", c.excluded)]
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(side, n)| format!("{n} throttled samples of the {side} left out"))
        .collect();
    let clock_within = match &gate {
        Gate::Clean | Gate::Normalized(_) => true,
        Gate::Clock(r, _) => (r - 1.0).abs() <= rule.clock_tolerance,
        Gate::Throttled(_) => false,
    };
    let family_member = (level != Level::OtherCard && clock_within && no_kernel_clock.is_none()).then(|| Member {
        better: old.better,
        new: x,
        runs: b_uuids.iter().cloned().zip(b_runs.iter().copied()).collect(),
    });
    let stats = Stats {
        ratio,
        minimum,
        threshold,
        detectable,
        level,
        k: band.k,
        gate,
        no_kernel_clock,
        excluded_note: (!excluded.is_empty()).then(|| excluded.join(", ")),
        family: old.family.clone(),
        unseen_board: (level == Level::Class).then(|| boards.unseen().map(str::to_string)).flatten(),
        run_spread_unknown,
        family_member,
        band_inputs: inputs,
        chance,
    };
    Assessed { row: r, stats: Some(stats) }
}

/// The threshold (the minimum effect or the band, whichever is wider) and the detectable
/// effect of a metric judged with `band`, written into its row with the band as its interval.
fn bounds(r: &mut MetricVerdict, band: &level::Band, minimum: f64) -> (f64, f64) {
    let threshold = minimum.max(band.half_width);
    // The smallest true change caught nine times in ten: beyond the threshold by the 90 %
    // quantile of the new side's own scatter.
    let detectable = threshold + DETECTION_POWER_Z * band.sd;
    r.threshold = Some(threshold);
    r.detectable = Some(detectable);
    if let Some(ratio) = r.ratio {
        r.ci = Some(Interval { lo: ratio * (1.0 - band.half_width), hi: ratio * (1.0 + band.half_width) });
    }
    (threshold, detectable)
}

/// The level every metric of `assessed` is judged at: the rule's confidence, or, when it is the
/// comparison's, the share of it ([`multiplicity`]) of the metrics that could pass their
/// minimum effect by chance; and how many could as often as that level allows (those whose band
/// at it is wider than the minimum effect).
fn metric_confidence(assessed: &[Assessed], rule: &Rule) -> (f64, usize) {
    let chances: Vec<f64> = assessed
        .iter()
        .filter_map(|a| a.stats.as_ref())
        .filter(|st| st.level != Level::OtherCard)
        .map(|st| st.chance)
        .collect();
    let alpha = match rule.confidence_scope {
        ConfidenceScope::Metric => 1.0 - rule.confidence,
        ConfidenceScope::Comparison => multiplicity::per_metric_alpha(&chances, 1.0 - rule.confidence),
    };
    (1.0 - alpha, chances.iter().filter(|c| **c >= alpha).count())
}

/// Builds every judged metric's band again at `confidence`, with its threshold and detectable
/// effect.
fn rejudge(assessed: &mut [Assessed], confidence: f64) {
    for a in assessed.iter_mut() {
        let Some(st) = a.stats.as_mut() else { continue };
        if let Some(band) = st.band_inputs.band(confidence) {
            let minimum = st.minimum;
            (st.threshold, st.detectable) = bounds(&mut a.row, &band, minimum);
        }
    }
}

/// The verdict on each bench family as a whole ([`family`]) at each level its metrics were
/// judged at, from those metrics; families of too few metrics, cards or runs have none. On the
/// same card, a per-card baseline's family takes the run-to-run spread of its change that the
/// class baseline learned as the prior of its own runs.
fn judge_families(
    assessed: &[Assessed],
    candidate: &str,
    rule: &Rule,
    confidence: f64,
    noise: &NoiseModel,
) -> Vec<FamilyVerdict> {
    let mut by_family: BTreeMap<(&str, Level), Vec<Member>> = BTreeMap::new();
    for st in assessed.iter().filter_map(|a| a.stats.as_ref()).filter(|st| rule.family_verdict(&st.family, st.level)) {
        if let Some(m) = &st.family_member {
            by_family.entry((st.family.as_str(), st.level)).or_default().push(m.clone());
        }
    }
    by_family
        .into_iter()
        .filter_map(|((name, level), members)| {
            let run_prior = noise.prior_runs.and(noise.family_run_change(name)).map(|s| (s.sd, s.df));
            let family_rule = FamilyRule {
                level,
                candidate,
                minimum: rule.threshold,
                confidence,
                floor: rule.spread_floor,
                run_prior,
            };
            family::judge(name, &members, &family_rule)
        })
        .collect()
}
