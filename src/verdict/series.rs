//! Per-metric sample series gathered from the runs of one side of a comparison.
//!
//! A side is one results document or the several runs a baseline keeps. For every metric this
//! collects, run by run, the raw samples, the clock-normalised samples, which samples NVML saw
//! throttled and the effective clock of each sample in the metric's clock domain.

use std::collections::{BTreeMap, BTreeSet};

use crate::results::{BenchmarkResult, Better, ClockDomain, Metric, ResultsDocument};

/// One metric of one run.
#[derive(Debug, Clone)]
pub(crate) struct RunSeries {
    /// Raw per-sample values.
    pub values: Vec<f64>,
    /// Clock-normalised values, one per raw value, when the run has them.
    pub normalized: Option<Vec<f64>>,
    /// Whether each sample was throttled.
    pub throttled: Vec<bool>,
    /// Slowdown reasons NVML reported for the throttled samples.
    pub reasons: BTreeSet<String>,
    /// Effective clock of each sample in the metric's domain, MHz, where known.
    pub clock_mhz: Vec<Option<f64>>,
    /// Whether the clocks come from the kernel's own readings (not NVML's, which may be stale).
    pub kernel_clock: bool,
    /// UUID of the GPU the run was measured on.
    pub uuid: String,
}

/// One metric across all runs of a side.
#[derive(Debug, Clone)]
pub(crate) struct MetricSeries {
    pub benchmark: String,
    pub family: String,
    pub metric: String,
    pub unit: String,
    pub normalized_unit: Option<String>,
    pub better: Better,
    pub domain: ClockDomain,
    pub params: BTreeMap<String, serde_json::Value>,
    /// How the benchmark measured, beyond its parameters ([`Method`]).
    pub method: Method,
    /// Why the runs of this side cannot be pooled (different parameters or units), if so.
    pub inconsistent: Option<String>,
    pub runs: Vec<RunSeries>,
}

impl MetricSeries {
    /// "<benchmark id>:<metric>", the key of overrides and seeds.
    pub fn key(&self) -> String {
        format!("{}:{}", self.benchmark, self.metric)
    }
}

/// Every metric of `runs`, in the order of first appearance.
pub(crate) fn collect(runs: &[ResultsDocument]) -> Vec<MetricSeries> {
    let mut out: Vec<MetricSeries> = Vec::new();
    let mut index: BTreeMap<(String, String), usize> = BTreeMap::new();
    for run in runs {
        for b in &run.benchmarks {
            for m in &b.metrics {
                let series = run_series(b, m, &run.gpu.uuid);
                let key = (b.id.clone(), m.name.clone());
                match index.get(&key) {
                    Some(&i) => {
                        let entry = &mut out[i];
                        if entry.inconsistent.is_none() {
                            entry.inconsistent = differences(entry, b, m);
                        }
                        entry.runs.push(series);
                    }
                    None => {
                        index.insert(key, out.len());
                        out.push(MetricSeries {
                            benchmark: b.id.clone(),
                            family: b.family.clone(),
                            metric: m.name.clone(),
                            unit: m.unit.clone(),
                            normalized_unit: m.normalized.as_ref().map(|n| n.unit.clone()),
                            better: m.better,
                            domain: m.domain,
                            params: b.params.clone(),
                            method: Method::of(b),
                            inconsistent: None,
                            runs: vec![series],
                        });
                    }
                }
            }
        }
    }
    out
}

/// How `b`/`m` differ from the series' first run in what makes samples comparable.
fn differences(series: &MetricSeries, b: &BenchmarkResult, m: &Metric) -> Option<String> {
    if series.unit != m.unit {
        return Some(format!("unit {} in one run, {} in another", series.unit, m.unit));
    }
    param_difference(&series.params, &b.params).or_else(|| series.method.difference(&Method::of(b)))
}

/// What a benchmark's numbers depend on besides its parameters: the kernel sources it compiled
/// (by content) and the candidates its run-time search chose among. Two runs that differ in
/// either measured in different ways (another kernel, another launch shape tried) and are not
/// comparable. The generated code (PTX, cubin) is not part of it: a compiler or driver upgrade
/// is what a comparison is for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Method {
    /// Kernel source file -> SHA-256 of its text.
    pub sources: BTreeMap<String, String>,
    /// The candidate configurations of the run-time search (`chosen.search`), sorted; empty
    /// without a search. The refinement's candidates (`chosen.refined`) are not: they are the
    /// search's best few, which differ from run to run.
    pub candidates: Vec<String>,
}

impl Method {
    pub(crate) fn of(b: &BenchmarkResult) -> Self {
        let sources = b.kernels.iter().map(|k| (k.source.clone(), k.source_sha256.clone())).collect();
        let mut candidates: Vec<String> = b
            .chosen
            .get("search")
            .and_then(|v| v.as_array())
            .into_iter()
            .flatten()
            .filter_map(|c| c.get("config").and_then(|v| v.as_str()).map(str::to_string))
            .collect();
        candidates.sort();
        candidates.dedup();
        Method { sources, candidates }
    }

    /// How `other` measured differently, as one line; `None` when alike. Sources only one side
    /// names are not compared (a run that recorded none says nothing).
    pub(crate) fn difference(&self, other: &Method) -> Option<String> {
        for (source, hash) in &self.sources {
            if let Some(h) = other.sources.get(source)
                && h != hash
            {
                return Some(format!("kernel source {source} differs"));
            }
        }
        let (a, b) = (&self.candidates, &other.candidates);
        if !a.is_empty() && !b.is_empty() && a != b {
            let only: Vec<&String> =
                a.iter().filter(|c| !b.contains(c)).chain(b.iter().filter(|c| !a.contains(c))).collect();
            let shown: Vec<&str> = only.iter().take(2).map(|s| s.as_str()).collect();
            return Some(format!(
                "run-time search over other candidates ({} differ{}, e.g. {})",
                only.len(),
                if only.len() == 1 { "s" } else { "" },
                shown.join(", ")
            ));
        }
        None
    }
}

/// The first parameter whose value differs, as "name a vs b".
pub(crate) fn param_difference(
    a: &BTreeMap<String, serde_json::Value>,
    b: &BTreeMap<String, serde_json::Value>,
) -> Option<String> {
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for k in keys {
        let (x, y) = (a.get(k), b.get(k));
        if x != y {
            let show = |v: Option<&serde_json::Value>| v.map(|v| v.to_string()).unwrap_or_else(|| "absent".into());
            return Some(format!("parameter {k}: {} vs {}", show(x), show(y)));
        }
    }
    None
}

fn run_series(b: &BenchmarkResult, m: &Metric, uuid: &str) -> RunSeries {
    let n = m.samples.len();
    let normalized = m.normalized.as_ref().filter(|nm| nm.samples.len() == n).map(|nm| nm.samples.clone());
    let aligned_telemetry = b.telemetry.len() == n;
    let throttled = if aligned_telemetry {
        b.telemetry.iter().map(|t| t.throttled).collect()
    } else {
        // Samples cannot be matched to readings: one throttled reading taints them all.
        vec![b.telemetry.iter().any(|t| t.throttled); n]
    };
    let mut reasons = BTreeSet::new();
    for t in b.telemetry.iter().filter(|t| t.throttled) {
        if t.slowdown.is_empty() {
            reasons.insert("throttled".to_string());
        }
        reasons.extend(t.slowdown.iter().cloned());
    }
    RunSeries {
        values: m.samples.clone(),
        normalized,
        throttled,
        reasons,
        clock_mhz: sample_clocks(b, m.domain, n),
        kernel_clock: b.clocks.iter().any(|c| c.mhz().is_some()),
        uuid: uuid.to_string(),
    }
}

/// The effective clock of each of `n` samples in `domain`: the kernel's own clock readings for
/// the SM clock (NVML's when the kernel has none), NVML's memory clock for the memory domain.
/// Readings that cannot be matched to samples one to one are summarised by their median.
fn sample_clocks(b: &BenchmarkResult, domain: ClockDomain, n: usize) -> Vec<Option<f64>> {
    let from_telemetry = |pick: fn(&crate::results::SampleTelemetry) -> Option<f64>| -> Vec<Option<f64>> {
        if b.telemetry.len() == n {
            b.telemetry.iter().map(pick).collect()
        } else {
            let all: Vec<f64> = b.telemetry.iter().filter_map(pick).collect();
            vec![crate::stats::median(&all); n]
        }
    };
    match domain {
        ClockDomain::Sm if !b.clocks.is_empty() => {
            if b.clocks.len() == n {
                b.clocks.iter().map(|c| c.mhz()).collect()
            } else {
                let all: Vec<f64> = b.clocks.iter().filter_map(|c| c.mhz()).collect();
                vec![crate::stats::median(&all); n]
            }
        }
        ClockDomain::Sm => from_telemetry(|t| t.sm_mhz),
        ClockDomain::Memory => from_telemetry(|t| t.mem_mhz),
        ClockDomain::None => vec![None; n],
    }
}
