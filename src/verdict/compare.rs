//! Comparing two sides metric by metric.

use std::collections::{BTreeMap, BTreeSet};

use regex::Regex;

use super::contamination;
use super::gate::{self, Prepared};
use super::series::{self, MetricSeries, param_difference};
use super::{
    Basis, COMPARISON_SCHEMA, Comparison, Counts, MetricVerdict, Rule, SideInfo, SideStats, Upgrade, Verdict,
    facts::compare_facts,
};
use crate::error::{Error, Result};
use crate::results::{Better, ClockDomain, ResultsDocument};
use crate::stats::{Interval, Rng, benjamini_hochberg, fnv1a, mann_whitney_u, ratio_of_medians};

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
    let mut assessed = Vec::new();
    let mut not_run = Vec::new();
    for old in &old_series {
        match new_index.get(&(old.benchmark.as_str(), old.metric.as_str())) {
            Some(new) => assessed.push(match (new_shared.get(&old.benchmark), old_shared.get(&old.benchmark)) {
                (Some(why), _) => Assessed { row: row(old, Verdict::Inconclusive, why.clone()), stats: None },
                (None, Some(why)) => {
                    Assessed { row: row(old, Verdict::Inconclusive, format!("baseline: {why}")), stats: None }
                }
                (None, None) => assess(old, new, rule),
            }),
            None => {
                let ran = new_benchmarks.contains(old.benchmark.as_str());
                let filtered = filter.as_ref().is_some_and(|f| !f.is_match(&old.benchmark));
                if !ran && (filtered || !new_families.contains(old.family.as_str())) {
                    not_run.push(old.key());
                    continue;
                }
                let why = if ran { "metric not reported by the new run" } else { "benchmark missing from the new run" };
                assessed.push(Assessed { row: row(old, Verdict::Inconclusive, why.into()), stats: None });
            }
        }
    }

    let p: Vec<f64> = assessed.iter().filter_map(|a| a.stats.as_ref().map(|s| s.p)).collect();
    let mut q = benjamini_hochberg(&p).into_iter();
    let metrics: Vec<MetricVerdict> = assessed
        .into_iter()
        .map(|a| match a.stats {
            Some(stats) => decide(a.row, &stats, q.next().unwrap_or(1.0), rule),
            None => a.row,
        })
        .collect();

    let mut comparison = Comparison {
        schema: COMPARISON_SCHEMA.to_string(),
        counts: Counts::default(),
        baseline: baseline.info()?,
        candidate: candidate.info()?,
        upgrade: Upgrade::between(old_run, new_run),
        rule: rule.clone(),
        metrics,
        facts: compare_facts(&old_run.facts, &new_run.facts, rule),
        not_in_baseline: new_series
            .iter()
            .filter(|s| !old_keys.contains(&(s.benchmark.as_str(), s.metric.as_str())))
            .map(MetricSeries::key)
            .collect(),
        not_run,
        warnings: warnings(old_run, new_run),
    };
    comparison.recount();
    Ok(comparison)
}

fn warnings(old: &ResultsDocument, new: &ResultsDocument) -> Vec<String> {
    let mut w = Vec::new();
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

/// How the gate judged the pair of sides.
#[derive(Debug, Clone)]
enum Gate {
    /// Nothing to worry about.
    Clean,
    /// Clock-normalised values are compared, because of `0`.
    Normalized(String),
    /// A side throttled as a whole (`0` says which and why) and no normalised values exist.
    Throttled(String),
    /// The clocks differ by `factor` (>= 1); a verdict must exceed the threshold even after
    /// allowing the whole clock difference. `1` describes the clocks.
    Clock(f64, String),
}

/// Statistics of one metric, awaiting the suite-wide correction of its p-value.
#[derive(Debug, Clone)]
struct Stats {
    p: f64,
    ratio: f64,
    ci: Interval,
    threshold: f64,
    widened: bool,
    gate: Gate,
    excluded_note: Option<String>,
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
        p_value: None,
        q_value: None,
        threshold: None,
        noise: None,
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

/// Everything up to the significance correction: compatibility, gate, test, interval.
fn assess(old: &MetricSeries, new: &MetricSeries, rule: &Rule) -> Assessed {
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
        Gate::Clock(ratio.max(1.0 / ratio), clock_text(ratio))
    } else {
        Gate::Clean
    };

    let (basis, bv, cv, b_runs) = match (&gate, &b.normalized, &c.normalized) {
        (Gate::Normalized(_), Some(bn), Some(cn)) => (Basis::Normalized, bn, cn, &b.normalized_run_medians),
        _ => (Basis::Raw, &b.values, &c.values, &b.run_medians),
    };
    if basis == Basis::Normalized {
        r.unit = old.normalized_unit.clone().unwrap_or_else(|| old.unit.clone());
    }
    r.basis = basis;
    r.baseline = Some(side_stats(&b, bv));
    r.candidate = Some(side_stats(&c, cv));

    let key = old.key();
    let (configured, noise_factor) = rule.for_metric(&key);
    let noise = gate::noise(bv, b_runs);
    let threshold = configured.max(noise_factor * noise);
    r.noise = Some(noise);
    r.threshold = Some(threshold);

    let mut rng = Rng::seeded(rule.seed ^ fnv1a(&key));
    let (Some(test), Some(est)) =
        (mann_whitney_u(bv, cv), ratio_of_medians(bv, cv, rule.resamples, rule.confidence, &mut rng))
    else {
        r.reason = "baseline median is not positive: no ratio to judge".into();
        return Assessed { row: r, stats: None };
    };
    r.p_value = Some(test.p);
    r.ratio = Some(est.ratio);
    r.ci = Some(est.ci);
    let excluded: Vec<String> = [("baseline", b.excluded), ("new run", c.excluded)]
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(side, n)| format!("{n} throttled samples of the {side} left out"))
        .collect();
    let stats = Stats {
        p: test.p,
        ratio: est.ratio,
        ci: est.ci,
        threshold,
        widened: threshold > configured,
        gate,
        excluded_note: (!excluded.is_empty()).then(|| excluded.join(", ")),
    };
    Assessed { row: r, stats: Some(stats) }
}

/// The verdict, once the p-value is corrected over the suite (`q`).
fn decide(mut r: MetricVerdict, st: &Stats, q: f64, rule: &Rule) -> MetricVerdict {
    r.q_value = Some(q);
    // "Worse" factors: > 1 means worse, whatever the metric's direction.
    let (worse, worse_lo, worse_hi) = match r.better {
        Better::Lower => (st.ratio, st.ci.lo, st.ci.hi),
        Better::Higher => (1.0 / st.ratio, 1.0 / st.ci.hi, 1.0 / st.ci.lo),
    };
    let bound = 1.0 + st.threshold;
    let significant = q < rule.alpha;
    let point_beyond = worse > bound || worse < 1.0 / bound;
    let mut verdict = if significant && worse_lo > bound {
        Verdict::Regressed
    } else if significant && worse_hi < 1.0 / bound {
        Verdict::Improved
    } else if point_beyond {
        Verdict::Inconclusive
    } else {
        Verdict::Pass
    };
    let pct = |x: f64| format!("{:+.2}%", (x - 1.0) * 100.0);
    let change =
        format!("{} ({:.0}% CI {} to {})", pct(st.ratio), rule.confidence * 100.0, pct(st.ci.lo), pct(st.ci.hi));
    let limit = format!("±{:.1}%{}", st.threshold * 100.0, if st.widened { " (widened by noise)" } else { "" });
    let mut reason = match verdict {
        Verdict::Regressed | Verdict::Improved => format!("{change} beyond {limit}, q={q:.1e}"),
        Verdict::Pass => format!("{change} within {limit}"),
        _ if !significant => format!("{change} beyond {limit} but not significant (q={q:.2})"),
        _ => format!("{change}: interval overlaps {limit}"),
    };
    match &st.gate {
        Gate::Clean => {}
        Gate::Normalized(why) => reason = format!("clock-normalised ({why}): {reason}"),
        Gate::Throttled(why) => {
            if verdict != Verdict::Pass {
                reason = format!("{why}, no clock-normalised values: {reason}");
                verdict = Verdict::Inconclusive;
            } else {
                reason = format!("{reason}; {why}");
            }
        }
        Gate::Clock(factor, why) => {
            let holds = match verdict {
                Verdict::Regressed => worse_lo / factor > bound,
                Verdict::Improved => worse_hi * factor < 1.0 / bound,
                _ => true,
            };
            if !holds {
                reason = format!("{why} could explain {}: {reason}", verdict.label());
                verdict = Verdict::Inconclusive;
            }
        }
    }
    if let Some(note) = &st.excluded_note {
        reason = format!("{reason}; {note}");
    }
    r.verdict = verdict;
    r.reason = reason;
    r
}
