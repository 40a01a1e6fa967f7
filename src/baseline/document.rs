//! The baseline file format.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::BaselineKey;
use crate::error::{Error, Result};
use crate::results::{
    BenchmarkResult, Better, ClockDomain, GpuClass, KernelProvenance, RESULTS_SCHEMA, ResultsDocument, Settings, Stack,
    Summary, ThrottleSummary, parse_json,
};
use crate::verdict::{NoiseModel, run_kernels};

/// Level of the test that a metric's spread is not described by its family's prior, when a
/// baseline learns its noise model: the rule's default confidence.
pub const LEARN_CONFIDENCE: f64 = 0.99;

/// Schema tag of [`Baseline`]; readers refuse any other.
pub const BASELINE_SCHEMA: &str = "gpubench.baseline/1";

/// A baseline: the runs a GPU class (or one GPU) is compared with, and their summaries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// Always [`BASELINE_SCHEMA`].
    pub schema: String,
    /// Name; `None` for the class's default baseline.
    pub name: Option<String>,
    /// The GPU class every run was measured on.
    pub gpu_class: GpuClass,
    /// Set for a strict baseline of one GPU: its UUID.
    pub gpu_uuid: Option<String>,
    /// When the file was last written, Unix seconds.
    pub updated_unix_s: u64,
    /// The stack of the runs (the newest run's; appended runs must match it).
    pub stack: Stack,
    /// The settings of the runs.
    pub settings: Settings,
    /// Each kernel source the runs compiled, with its source, PTX and cubin hashes.
    pub kernels: Vec<KernelProvenance>,
    /// Per-metric summaries over all runs.
    pub metrics: Vec<BaselineMetric>,
    /// What NVML and the kernels' clocks saw over all runs.
    pub telemetry: TelemetrySummary,
    /// What the runs say of their own noise: run-to-run and between-card spreads per metric,
    /// the families' priors ([`crate::verdict::noise`]). Verdicts take every spread from here.
    /// Files written before it existed have none: it is then learned from `runs` as read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<NoiseModel>,
    /// The runs themselves, oldest first: every sample, clock reading and telemetry record.
    pub runs: Vec<ResultsDocument>,
}

/// Summary of one metric over a baseline's runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineMetric {
    /// Benchmark id.
    pub benchmark: String,
    /// Bench family.
    pub family: String,
    /// Metric name.
    pub metric: String,
    /// Unit.
    pub unit: String,
    /// Good direction.
    pub better: Better,
    /// Clock domain.
    pub domain: ClockDomain,
    /// Summary of all runs' samples pooled.
    pub summary: Summary,
    /// Each run's median.
    pub run_medians: Vec<f64>,
    /// Relative noise that widens the verdict threshold (see [`crate::verdict::Rule`]).
    pub noise: f64,
}

/// Telemetry over a baseline's runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TelemetrySummary {
    /// Runs that had NVML readings.
    pub runs_with_nvml: usize,
    /// Samples of all runs, throttling and median clock and power.
    #[serde(flatten)]
    pub throttle: ThrottleSummary,
}

impl Baseline {
    /// Builds a baseline for `key` from `runs` (oldest first) at time `now`.
    pub fn from_runs(key: &BaselineKey, runs: Vec<ResultsDocument>, now: u64) -> Result<Self> {
        let newest = runs.last().ok_or_else(|| Error::Usage("no runs to make a baseline of".into()))?;
        if runs.iter().all(|r| r.benchmarks.is_empty()) {
            return Err(Error::Usage("the results hold no benchmarks: nothing to save as a baseline".into()));
        }
        let baseline = Baseline {
            schema: BASELINE_SCHEMA.to_string(),
            name: key.name.clone(),
            gpu_class: key.class.clone(),
            gpu_uuid: key.uuid.clone(),
            updated_unix_s: now,
            stack: newest.stack.clone(),
            settings: newest.settings.clone(),
            kernels: run_kernels(newest).into_values().collect(),
            metrics: metric_summaries(&runs),
            telemetry: telemetry_summary(&runs),
            noise: Some(crate::verdict::noise::learn(&runs, None, LEARN_CONFIDENCE)),
            runs,
        };
        for run in &baseline.runs {
            baseline.accepts(run).map_err(Error::Usage)?;
        }
        Ok(baseline)
    }

    /// Learns the noise model from `runs` (every run recorded, of which the baseline keeps
    /// some) instead of its own runs.
    pub fn learn_from(&mut self, runs: &[ResultsDocument]) {
        self.noise = Some(crate::verdict::noise::learn(runs, None, LEARN_CONFIDENCE));
    }

    /// Learns the noise model again from the runs, with `prior` (a class baseline's model) as
    /// the prior of the run-to-run spreads: a per-card baseline of a few runs borrows how far
    /// runs of each metric stray from the class's many runs.
    pub fn learn_with_prior(&mut self, prior: Option<&NoiseModel>) {
        self.noise = Some(crate::verdict::noise::learn(&self.runs, prior, LEARN_CONFIDENCE));
    }

    /// The noise model verdicts use: the stored one, or one learned from the runs.
    pub fn noise_model(&self) -> NoiseModel {
        self.noise.clone().unwrap_or_else(|| crate::verdict::noise::learn(&self.runs, None, LEARN_CONFIDENCE))
    }

    /// The key this baseline is stored under.
    pub fn key(&self) -> BaselineKey {
        BaselineKey { class: self.gpu_class.clone(), uuid: self.gpu_uuid.clone(), name: self.name.clone() }
    }

    /// The newest run.
    pub fn newest(&self) -> &ResultsDocument {
        self.runs.last().expect("a checked baseline has runs")
    }

    /// Reads and checks a baseline file; anything but a well-formed baseline is
    /// [`Error::Data`].
    pub fn read(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Self::parse(path, &bytes)
    }

    /// Parses and checks baseline bytes (`path` names them in errors).
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<Self> {
        let b: Baseline = parse_json(path, bytes, BASELINE_SCHEMA)?;
        b.check().map_err(|reason| Error::data(path, reason))?;
        Ok(b)
    }

    /// Internal consistency: runs present, of the results schema, of this class (and GPU).
    fn check(&self) -> Result<(), String> {
        if self.runs.is_empty() {
            return Err("baseline holds no runs".into());
        }
        for (i, run) in self.runs.iter().enumerate() {
            if run.schema != RESULTS_SCHEMA {
                return Err(format!("run {i} has schema `{}`, expected `{RESULTS_SCHEMA}`", run.schema));
            }
            if run.gpu.class_key() != self.gpu_class {
                return Err(format!(
                    "run {i} was measured on {}, not {}",
                    run.gpu.class_key().slug(),
                    self.gpu_class.slug()
                ));
            }
            if let Some(u) = &self.gpu_uuid
                && &run.gpu.uuid != u
            {
                return Err(format!("run {i} was measured on {}, not {u}", run.gpu.uuid));
            }
        }
        if let Some(n) = &self.name {
            super::validate_name(n).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Whether `run` may join this baseline's runs: same GPU class (and GPU), settings, stack
    /// and generated code, and the same parameters for the benchmarks both have. The error
    /// says what differs.
    pub fn accepts(&self, run: &ResultsDocument) -> Result<(), String> {
        if run.gpu.class_key() != self.gpu_class {
            return Err(format!(
                "the run was measured on {}, the baseline is for {}",
                run.gpu.class_key().slug(),
                self.gpu_class.slug()
            ));
        }
        if let Some(u) = &self.gpu_uuid
            && &run.gpu.uuid != u
        {
            return Err(format!("the run was measured on {}, the baseline is for {u}", run.gpu.uuid));
        }
        if run.settings != self.settings {
            return Err(format!(
                "the run's settings (profile {}, {} samples, filter {:?}) differ from the baseline's (profile {}, {} samples, filter {:?})",
                run.settings.profile,
                run.settings.sample_size,
                run.settings.filter,
                self.settings.profile,
                self.settings.sample_size,
                self.settings.filter
            ));
        }
        let (a, b) = (&run.stack, &self.stack);
        if (&a.driver_version, &a.cuda_driver_api, &a.nvrtc_version, &a.cudarc_feature)
            != (&b.driver_version, &b.cuda_driver_api, &b.nvrtc_version, &b.cudarc_feature)
        {
            return Err(format!(
                "the run's stack (driver {}, NVRTC {}) differs from the baseline's (driver {}, NVRTC {})",
                a.driver_version.as_deref().unwrap_or("unknown"),
                a.nvrtc_version,
                b.driver_version.as_deref().unwrap_or("unknown"),
                b.nvrtc_version
            ));
        }
        for k in run_kernels(run).values() {
            if let Some(mine) = self.kernels.iter().find(|m| m.source == k.source)
                && (mine.ptx_sha256 != k.ptx_sha256 || mine.cubin_sha256 != k.cubin_sha256)
            {
                return Err(format!("the generated code of {} differs from the baseline's", k.source));
            }
        }
        for b in &run.benchmarks {
            for old in self.runs.iter().filter_map(|r| r.benchmark(&b.id)) {
                if old.params != b.params {
                    return Err(format!("benchmark {} has other parameters than in the baseline", b.id));
                }
            }
        }
        Ok(())
    }
}

/// Keeps at most `max_runs` (at least 1) of the newest runs of each card (GPU UUID), in their
/// order: appending to a baseline of several cards keeps every card, never only the newest.
pub fn keep_newest_per_card(runs: Vec<ResultsDocument>, max_runs: usize) -> Vec<ResultsDocument> {
    let max_runs = max_runs.max(1);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut keep = vec![false; runs.len()];
    for (i, run) in runs.iter().enumerate().rev() {
        let n = seen.entry(run.gpu.uuid.clone()).or_default();
        if *n < max_runs {
            *n += 1;
            keep[i] = true;
        }
    }
    runs.into_iter().zip(keep).filter_map(|(r, k)| k.then_some(r)).collect()
}

fn metric_summaries(runs: &[ResultsDocument]) -> Vec<BaselineMetric> {
    let mut out: Vec<BaselineMetric> = Vec::new();
    let mut pooled: Vec<Vec<f64>> = Vec::new();
    for run in runs {
        for b in &run.benchmarks {
            for m in &b.metrics {
                let i = match out.iter().position(|x| x.benchmark == b.id && x.metric == m.name) {
                    Some(i) => i,
                    None => {
                        out.push(BaselineMetric {
                            benchmark: b.id.clone(),
                            family: b.family.clone(),
                            metric: m.name.clone(),
                            unit: m.unit.clone(),
                            better: m.better,
                            domain: m.domain,
                            summary: Summary::of(&[]),
                            run_medians: Vec::new(),
                            noise: 0.0,
                        });
                        pooled.push(Vec::new());
                        out.len() - 1
                    }
                };
                let finite: Vec<f64> = m.samples.iter().copied().filter(|v| v.is_finite()).collect();
                out[i].run_medians.extend(crate::stats::median(&finite));
                pooled[i].extend(finite);
            }
        }
    }
    for (m, values) in out.iter_mut().zip(&pooled) {
        m.summary = Summary::of(values);
        m.noise = crate::verdict::baseline_noise(values, &m.run_medians);
    }
    out
}

fn telemetry_summary(runs: &[ResultsDocument]) -> TelemetrySummary {
    let all: Vec<BenchmarkResult> = runs.iter().flat_map(|r| r.benchmarks.iter().cloned()).collect();
    let pooled = crate::telemetry::run_summary(&all);
    let runs_with_nvml = runs
        .iter()
        .filter(|r| {
            r.telemetry.as_ref().is_some_and(|t| t.nvml) || r.benchmarks.iter().any(|b| !b.telemetry.is_empty())
        })
        .count();
    TelemetrySummary { runs_with_nvml, throttle: pooled.throttle }
}
