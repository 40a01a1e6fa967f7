//! What the history keeps of one results document: one run row and one row per metric,
//! extracted without I/O so that the store and the tests share it.

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::results::{BenchmarkResult, Better, ClockDomain, ResultsDocument, Spread};
use crate::stats::median;

/// One run as the history stores it (the `runs` table).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRow {
    /// Identity of the run: card UUID, start time, profile, filter, benchmark count and wall
    /// time. The same run imported twice has the same key and is stored once.
    pub run_key: String,
    /// Seconds since the Unix epoch when the run started.
    pub created_unix_s: i64,
    /// GPU UUID.
    pub card_uuid: String,
    /// Marketing name.
    pub gpu_name: String,
    /// GPU class slug (model, compute capability, SMs, memory).
    pub class_slug: String,
    /// NVIDIA driver release.
    pub driver_version: Option<String>,
    /// CUDA version the driver supports.
    pub cuda_driver_api: String,
    /// NVRTC version.
    pub nvrtc_version: String,
    /// cudarc CUDA feature.
    pub cudarc_feature: String,
    /// gpubench version.
    pub tool_version: String,
    /// Settings profile ("quick", "default", "full").
    pub profile: String,
    /// Benchmark filter of the run.
    pub filter: Option<String>,
    /// Criterion samples per benchmark.
    pub sample_size: i64,
    /// Wall time of the run, s.
    pub wall_time_s: f64,
    /// Samples of all benchmarks (telemetry summary).
    pub samples: Option<i64>,
    /// Of those, throttled.
    pub throttled_samples: Option<i64>,
    /// throttled_samples / samples.
    pub throttle_share: Option<f64>,
    /// Throttled samples per reason, JSON object.
    pub throttle_reasons: Option<String>,
    /// Median effective SM clock of the run, MHz.
    pub median_sm_mhz: Option<f64>,
    /// Median board power, W.
    pub median_power_w: Option<f64>,
    /// Maximum SM clock the driver reported, MHz.
    pub sm_clock_max_mhz: f64,
    /// Board power limit, W, where the results document records one (`power_limit_w` under
    /// `gpu` or `telemetry`).
    pub power_limit_w: Option<f64>,
    /// Processes of other programs seen on the GPU during the run (length of a
    /// `telemetry.foreign_processes` array), where the document records them.
    pub foreign_processes: Option<i64>,
    /// That array as JSON.
    pub foreign_processes_json: Option<String>,
    /// Where the run came from (file, archive member, or "run").
    pub source: String,
}

/// One metric of one run (the `metrics` table).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricRow {
    /// Criterion id of the benchmark, "family/name".
    pub benchmark: String,
    /// Bench family.
    pub family: String,
    /// Metric name.
    pub metric: String,
    /// Unit.
    pub unit: String,
    /// First 16 hex digits of the SHA-256 of the benchmark's parameters (JSON): runs with other
    /// parameters form another series.
    pub params_hash: String,
    /// The parameters, JSON.
    pub params_json: String,
    /// "higher" or "lower".
    pub better: String,
    /// "sm", "memory" or "none".
    pub domain: String,
    /// Samples.
    pub n: i64,
    /// Median of the samples.
    pub median: f64,
    /// Sample standard deviation.
    pub stdev: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// Unit of the clock-normalised value.
    pub norm_unit: Option<String>,
    /// Median of the clock-normalised samples.
    pub norm_median: Option<f64>,
    /// Effective SM clock of the benchmark (median over its samples of clock64 / globaltimer),
    /// else NVML's SM clock, MHz.
    pub eff_clock_mhz: Option<f64>,
    /// Median memory clock NVML reported during the benchmark, MHz.
    pub mem_clock_mhz: Option<f64>,
    /// Median board power during the benchmark, W.
    pub power_w: Option<f64>,
    /// Share of the benchmark's samples that throttled.
    pub throttle_share: Option<f64>,
    /// First 16 hex digits of the SHA-256 over the benchmark's kernels' cubin hashes (sorted):
    /// changes when the generated machine code changes.
    pub kernel_hash: Option<String>,
    /// Per-SM summary (chip map) of this metric: SM count, median, min, max, IQR.
    pub sm: Option<SmSummary>,
}

/// Summary of a metric's per-SM chip map.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SmSummary {
    /// SMs in the map.
    pub n: i64,
    /// Median over SMs.
    pub median: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Interquartile range over SMs.
    pub iqr: f64,
}

impl From<&Spread> for SmSummary {
    fn from(s: &Spread) -> Self {
        SmSummary { n: s.n as i64, median: s.median, min: s.min, max: s.max, iqr: s.q3 - s.q1 }
    }
}

/// A run and its metrics, ready to store.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRecord {
    /// The run row.
    pub run: RunRow,
    /// Its metric rows.
    pub metrics: Vec<MetricRow>,
}

fn hex16(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Fields that may not be in [`ResultsDocument`] yet, read from the document's JSON.
fn optional_number(raw: &serde_json::Value, paths: &[&[&str]]) -> Option<f64> {
    paths.iter().find_map(|p| p.iter().try_fold(raw, |v, k| v.get(*k)).and_then(|v| v.as_f64()))
}

impl RunRecord {
    /// Extracts the history record of `doc`. `raw` is the document's JSON where it is at hand
    /// (fields newer than this build's schema, such as `telemetry.foreign_processes`, are read
    /// from it); without it the document itself is serialised. `source` says where it came
    /// from.
    pub fn from_document(doc: &ResultsDocument, raw: Option<&serde_json::Value>, source: &str) -> Self {
        let own;
        let raw = match raw {
            Some(r) => r,
            None => {
                own = serde_json::to_value(doc).unwrap_or(serde_json::Value::Null);
                &own
            }
        };
        let t = doc.telemetry.as_ref().map(|t| &t.throttle);
        let foreign = raw.get("telemetry").and_then(|t| t.get("foreign_processes")).filter(|v| !v.is_null());
        let run = RunRow {
            run_key: format!(
                "{}@{}/{}/{}/{}/{:.3}",
                doc.gpu.uuid,
                doc.created_unix_s,
                doc.settings.profile,
                doc.settings.filter.as_deref().unwrap_or(""),
                doc.benchmarks.len(),
                doc.wall_time_s
            ),
            created_unix_s: doc.created_unix_s as i64,
            card_uuid: doc.gpu.uuid.clone(),
            gpu_name: doc.gpu.name.clone(),
            class_slug: doc.gpu.class_key().slug(),
            driver_version: doc.stack.driver_version.clone(),
            cuda_driver_api: doc.stack.cuda_driver_api.clone(),
            nvrtc_version: doc.stack.nvrtc_version.clone(),
            cudarc_feature: doc.stack.cudarc_feature.clone(),
            tool_version: doc.stack.tool_version.clone(),
            profile: doc.settings.profile.clone(),
            filter: doc.settings.filter.clone(),
            sample_size: doc.settings.sample_size as i64,
            wall_time_s: doc.wall_time_s,
            samples: t.map(|t| t.samples as i64),
            throttled_samples: t.map(|t| t.throttled_samples as i64),
            throttle_share: t.filter(|t| t.samples > 0).map(|t| t.throttled_samples as f64 / t.samples as f64),
            throttle_reasons: t.map(|t| serde_json::to_string(&t.reasons).unwrap_or_default()),
            median_sm_mhz: t.and_then(|t| t.median_sm_mhz),
            median_power_w: t.and_then(|t| t.median_power_w),
            sm_clock_max_mhz: doc.gpu.sm_clock_max_khz as f64 / 1e3,
            power_limit_w: optional_number(raw, &[&["gpu", "power_limit_w"], &["telemetry", "power_limit_w"]]),
            foreign_processes: foreign.map(|f| f.as_array().map_or(1, |a| a.len() as i64)),
            foreign_processes_json: foreign.map(|f| f.to_string()),
            source: source.to_string(),
        };
        let metrics = doc.benchmarks.iter().flat_map(metric_rows).collect();
        RunRecord { run, metrics }
    }
}

/// The metric rows of one benchmark.
fn metric_rows(b: &BenchmarkResult) -> Vec<MetricRow> {
    let params_json = serde_json::to_string(&b.params).unwrap_or_default();
    let params_hash = hex16(params_json.as_bytes());
    let kernel_hash = (!b.kernels.is_empty()).then(|| {
        let mut cubins: Vec<&str> = b.kernels.iter().map(|k| k.cubin_sha256.as_str()).collect();
        cubins.sort_unstable();
        hex16(cubins.join(",").as_bytes())
    });
    let kernel_mhz: Vec<f64> = b.clocks.iter().filter_map(|c| c.mhz()).collect();
    let nvml = |f: fn(&crate::results::SampleTelemetry) -> Option<f64>| {
        let v: Vec<f64> = b.telemetry.iter().filter_map(f).collect();
        median(&v)
    };
    let eff_clock_mhz = median(&kernel_mhz).or_else(|| nvml(|t| t.sm_mhz));
    let mem_clock_mhz = nvml(|t| t.mem_mhz);
    let power_w = nvml(|t| t.power_w);
    let throttle_share = (!b.telemetry.is_empty())
        .then(|| b.telemetry.iter().filter(|t| t.throttled).count() as f64 / b.telemetry.len() as f64);
    b.metrics
        .iter()
        .map(|m| MetricRow {
            benchmark: b.id.clone(),
            family: b.family.clone(),
            metric: m.name.clone(),
            unit: m.unit.clone(),
            params_hash: params_hash.clone(),
            params_json: params_json.clone(),
            better: match m.better {
                Better::Higher => "higher",
                Better::Lower => "lower",
            }
            .into(),
            domain: match m.domain {
                ClockDomain::Sm => "sm",
                ClockDomain::Memory => "memory",
                ClockDomain::None => "none",
            }
            .into(),
            n: m.summary.n as i64,
            median: m.summary.median,
            stdev: m.summary.stdev,
            min: m.summary.min,
            max: m.summary.max,
            norm_unit: m.normalized.as_ref().map(|n| n.unit.clone()),
            norm_median: m.normalized.as_ref().map(|n| n.summary.median).filter(|v| v.is_finite()),
            eff_clock_mhz,
            mem_clock_mhz,
            power_w,
            throttle_share,
            kernel_hash: kernel_hash.clone(),
            sm: b.sm_map(&m.name).map(|s| SmSummary::from(&s.spread)),
        })
        .collect()
}
