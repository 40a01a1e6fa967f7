//! Comparing two sides metric by metric.

use std::collections::{BTreeMap, BTreeSet};

use regex::Regex;

use super::boards::Boards;
use super::contamination;
use super::decide::{BandInputs, Gate, Stats, decide};
use super::family::{self, FamilyRule, FamilyVerdict, Member};
use super::gate::{self, Prepared};
use super::level::{self, Level};
use super::sampling::{self, SideRuns};
use super::series::{self, MetricSeries, param_difference};
use super::{
    BaselineKind, Basis, COMPARISON_SCHEMA, Comparison, Counts, MetricVerdict, Rule, Scope, SideInfo, SideStats,
    Upgrade, Verdict, facts::compare_facts,
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
        })
    }
}

/// Compares `candidate` with `baseline` under `rule` (see the module documentation of
/// [`crate::verdict`]). Fails only when a side has no runs or the rule is out of range.
pub fn compare(baseline: Side<'_>, candidate: Side<'_>, rule: &Rule) -> Result<Comparison> {
    rule.validate().map_err(Error::Usage)?;
    let (old_run, new_run) = (baseline.newest()?, candidate.newest()?);
    let rule = &rule.for_class(&old_run.gpu.class_key().slug());
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
                (None, None) => assess(old, new, candidate_uuid, &boards, rule),
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

    moderate(&mut assessed, rule);
    let families = judge_families(&assessed, candidate_uuid, rule);
    let metrics: Vec<MetricVerdict> = assessed
        .into_iter()
        .map(|a| match a.stats {
            Some(stats) => {
                let family = families.iter().find(|f| f.family == stats.band.family && f.level == stats.level);
                decide(a.row, &stats, family)
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
        baseline_kind: baseline_kind(baseline.runs, candidate_uuid, &boards),
        rule: rule.clone(),
        metrics,
        families,
        facts: compare_facts(&old_run.facts, &new_run.facts, rule),
        not_in_baseline: new_series
            .iter()
            .filter(|s| !old_keys.contains(&(s.benchmark.as_str(), s.metric.as_str())))
            .map(MetricSeries::key)
            .collect(),
        not_run,
        warnings: warnings(old_run, new_run, baseline.runs),
    };
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
    }
}

fn warnings(old: &ResultsDocument, new: &ResultsDocument, baseline_runs: &[ResultsDocument]) -> Vec<String> {
    let mut w = Vec::new();
    let kind = baseline_kind(baseline_runs, &new.gpu.uuid, &Boards::default());
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
fn assess(old: &MetricSeries, new: &MetricSeries, candidate_uuid: &str, boards: &Boards, rule: &Rule) -> Assessed {
    let incompatible = old
        .inconsistent
        .as_ref()
        .map(|w| format!("baseline runs differ: {w}"))
        .or_else(|| new.inconsistent.as_ref().map(|w| format!("new runs differ: {w}")))
        .or_else(|| (old.unit != new.unit).then(|| format!("unit {} vs {}", old.unit, new.unit)))
        .or_else(|| (old.better != new.better).then(|| "direction differs".to_string()))
        .or_else(|| param_difference(&old.params, &new.params));
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
    let (b_ordered, c_ordered, c_uuids) = match basis {
        Basis::Normalized => (&b.normalized_run_samples, &c.normalized_run_samples, &c.normalized_run_uuids),
        Basis::Raw => (&b.run_samples, &c.run_samples, &c.run_uuids),
    };
    if basis == Basis::Normalized {
        r.unit = old.normalized_unit.clone().unwrap_or_else(|| old.unit.clone());
    }
    r.basis = basis;
    r.baseline = Some(side_stats(&b, bv));
    r.candidate = Some(side_stats(&c, cv));

    let key = old.key();
    let (minimum, band_factor) = rule.for_metric(&key);
    let mut reference = level::reference(b_runs, b_uuids, candidate_uuid, rule.pool_run_spread, boards);
    let by_board = reference.board.is_some();
    // A class band carries the new card's run-to-run noise, seen in the baseline cards' runs; a
    // metric's measured run spread is its prior there too (or its floor, given without degrees
    // of freedom): the baseline's cards may not show a heavy-tailed stray run.
    if reference.level == Level::Class {
        reference.run_spread = reference.run_spread.map(|(s, df)| match rule.measured_prior(&key, Scope::SameCard) {
            Some(prior) => level::by_prior(&prior, s, f64::from(df), rule.confidence)
                .map_or((s, df), |m| (m.spread, m.df.min(f64::from(u32::MAX)) as u32)),
            None if rule.measured_spread(&key, Scope::SameCard) => (s.max(rule.run_floor(&key)), df),
            None => (s, df),
        });
    }
    // The new side: one value per run on the same card; one card for a class comparison.
    let n_new = if reference.level == Level::SameCard { c_runs.len() } else { 1 };
    // A spread on fewer than two degrees of freedom (two reference values and no pooled
    // run-to-run spread) says little. Two floors stand in for it: the metric's measured
    // run-to-run spread (an override's `run_spread`), and the standard error of one run's
    // median from its own samples (1.2533 × robust spread / √samples per run). With more
    // degrees of freedom the spread of run medians measures that error directly, and better:
    // samples that cycle through placements (atomics, cache operators) scatter by several
    // percent while their runs' medians agree within a few tenths. A class comparison keeps
    // the second floor: a new card's one run brings its own sampling error.
    let spread_df =
        reference.spread_beyond_values().map_or(reference.values.len().saturating_sub(1), |(_, df)| df as usize);
    // A spread pooled over other cards' runs does not see a card whose runs stray more than
    // theirs: there an override's `run_spread` stays a floor, unless it is a prior (given with
    // `run_spread_df`), which the moderation combines with the pooled spread.
    let pooled_without_prior = reference.pooled.is_some() && rule.measured_prior(&key, Scope::SameCard).is_none();
    let mut floor = if spread_df < 2 || pooled_without_prior { rule.run_floor(&key) } else { rule.spread_floor };
    if spread_df < 2 || reference.level != Level::SameCard {
        let side =
            |p: &Prepared, pooled, medians, uuids, ordered| SideRuns { pooled, runs: p.runs, medians, uuids, ordered };
        let pattern = match (rule.cycled_samples(&key), reference.level) {
            (false, _) => sampling::Pattern::Unpaired,
            (true, Level::SameCard) => sampling::Pattern::Card(candidate_uuid),
            (true, Level::Class | Level::OtherCard) => sampling::Pattern::EveryCard,
        };
        floor = floor.max(sampling::run_median_error(
            &side(&b, bv, b_runs, b_uuids, b_ordered),
            &side(&c, cv, c_runs, c_uuids, c_ordered),
            pattern,
        ));
    }
    if reference.level == Level::Class {
        floor = floor.max(rule.card_floor(&key, by_board));
    }
    let (Some(x), Some(band)) =
        (median(c_runs), level::band(&reference, n_new, rule.confidence, floor, c_runs.len(), None))
    else {
        r.reason = "baseline median is not positive: no ratio to judge".into();
        return Assessed { row: r, stats: None };
    };
    let threshold = minimum.max(band_factor * band.half_width);
    let ratio = x / band.center;
    let inputs = BandInputs {
        family: old.family.clone(),
        reference: reference.clone(),
        n_new,
        floor,
        runs: c_runs.len(),
        band_factor,
        spread: band.spread,
        df: band.df,
        own_spread: rule.measured_spread(&key, reference.scope()),
    };
    r.noise = Some(band.spread);
    r.threshold = Some(threshold);
    r.level = Some(reference.level);
    r.reference_n = Some(band.k);
    r.ratio = Some(ratio);
    r.ci = Some(Interval { lo: ratio * (1.0 - band.half_width), hi: ratio * (1.0 + band.half_width) });

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
    let family_member = (reference.level != Level::OtherCard && clock_within && no_kernel_clock.is_none()).then(|| {
        Member { better: old.better, new: x, runs: b_uuids.iter().cloned().zip(b_runs.iter().copied()).collect() }
    });
    let stats = Stats {
        ratio,
        minimum,
        threshold,
        level: reference.level,
        k: band.k,
        gate,
        no_kernel_clock,
        excluded_note: (!excluded.is_empty()).then(|| excluded.join(", ")),
        cards_in_groups: reference.level == Level::Class && rule.cards_in_groups(&key),
        band: inputs,
        family_member,
    };
    Assessed { row: r, stats: Some(stats) }
}

/// Moderates the spread of every judged metric by the other metrics of its family compared at
/// the same level ([`level::moderate`]), and widens or narrows its band and threshold
/// accordingly. Metrics with a measured spread of their own in the configuration
/// ([`Rule::measured_spread`]) are left out of the family's prior; where the configuration
/// also gives the degrees of freedom of that measurement ([`Rule::measured_prior`]) it is their
/// prior instead, else they keep their own band. A family of fewer than three metrics with two
/// or more reference values keeps the plain Student-t bands.
fn moderate(assessed: &mut [Assessed], rule: &Rule) {
    let mut groups: BTreeMap<(String, Level), Vec<usize>> = BTreeMap::new();
    for (i, a) in assessed.iter().enumerate() {
        if let Some(st) = a.stats.as_ref().filter(|st| !st.band.own_spread) {
            groups.entry((st.band.family.clone(), st.level)).or_default().push(i);
        }
    }
    for members in groups.values() {
        let input: Vec<(f64, f64, f64)> = members
            .iter()
            .filter_map(|&i| assessed[i].stats.as_ref())
            .map(|st| (st.band.spread, st.band.df, st.band.floor))
            .collect();
        for (&i, m) in members.iter().zip(level::moderate(&input, rule.confidence)) {
            if let Some(m) = m {
                rebuild_band(&mut assessed[i], m, rule);
            }
        }
    }
    for a in assessed.iter_mut() {
        let Some(st) = a.stats.as_ref().filter(|st| st.band.own_spread) else { continue };
        let Some(prior) = rule.measured_prior(&a.row.key(), st.band.reference.scope()) else { continue };
        if let Some(m) = level::by_prior(&prior, st.band.spread, st.band.df, rule.confidence) {
            rebuild_band(a, m, rule);
        }
    }
}

/// The verdict on each bench family as a whole ([`family`]) at each level its metrics were
/// judged at, from those metrics; families of too few metrics, cards or runs have none.
fn judge_families(assessed: &[Assessed], candidate: &str, rule: &Rule) -> Vec<FamilyVerdict> {
    let mut by_family: BTreeMap<(&str, Level), Vec<Member>> = BTreeMap::new();
    for st in
        assessed.iter().filter_map(|a| a.stats.as_ref()).filter(|st| rule.family_verdict(&st.band.family, st.level))
    {
        if let Some(m) = &st.family_member {
            by_family.entry((st.band.family.as_str(), st.level)).or_default().push(m.clone());
        }
    }
    by_family
        .into_iter()
        .filter_map(|((name, level), members)| {
            let family_rule = FamilyRule {
                level,
                candidate,
                minimum: rule.threshold,
                confidence: rule.confidence,
                floor: rule.spread_floor,
                run_prior: rule.family_run_spread,
            };
            family::judge(name, &members, &family_rule)
        })
        .collect()
}

/// The band and threshold of `a` again, from the moderated spread `m`.
fn rebuild_band(a: &mut Assessed, m: level::Moderated, rule: &Rule) {
    let Some(st) = a.stats.as_mut() else { return };
    let b = &st.band;
    let Some(band) = level::band(&b.reference, b.n_new, rule.confidence, b.floor, b.runs, Some(m)) else {
        return;
    };
    st.threshold = st.minimum.max(b.band_factor * band.half_width);
    a.row.threshold = Some(st.threshold);
    a.row.ci = Some(Interval { lo: st.ratio * (1.0 - band.half_width), hi: st.ratio * (1.0 + band.half_width) });
}
