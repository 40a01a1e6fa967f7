//! Reading the stored history back as series: per card and per metric, run medians in time
//! order, with the run-level facts (stack, power limit, foreign processes) beside them.

use std::collections::BTreeMap;

use regex::Regex;
use serde::Serialize;

use super::store::HistoryStore;
use crate::error::{Error, Result};

/// What one stored run was measured with and under (the facts attribution compares).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunInfo {
    /// Row id in `runs`.
    pub id: i64,
    /// Start time, seconds since the Unix epoch.
    pub created_unix_s: i64,
    /// GPU UUID.
    pub card_uuid: String,
    /// Marketing name.
    pub gpu_name: String,
    /// Driver release.
    pub driver_version: Option<String>,
    /// CUDA version the driver supports.
    pub cuda_driver_api: String,
    /// NVRTC version.
    pub nvrtc_version: String,
    /// cudarc CUDA feature.
    pub cudarc_feature: String,
    /// gpubench version.
    pub tool_version: String,
    /// Settings profile.
    pub profile: String,
    /// Share of the run's samples that throttled.
    pub throttle_share: Option<f64>,
    /// Median effective SM clock of the run, MHz.
    pub median_sm_mhz: Option<f64>,
    /// Board power limit, W.
    pub power_limit_w: Option<f64>,
    /// Foreign processes seen during the run.
    pub foreign_processes: Option<i64>,
}

impl RunInfo {
    /// The software stack fields that differ from `before`, as "what a -> b" phrases.
    pub fn stack_changes(&self, before: &RunInfo) -> Vec<String> {
        let mut out = Vec::new();
        let mut cmp = |what: &str, a: &str, b: &str| {
            if a != b {
                out.push(format!("{what} {a} -> {b}"));
            }
        };
        let unknown = "unknown";
        cmp(
            "driver",
            before.driver_version.as_deref().unwrap_or(unknown),
            self.driver_version.as_deref().unwrap_or(unknown),
        );
        cmp("CUDA", &before.cuda_driver_api, &self.cuda_driver_api);
        cmp("NVRTC", &before.nvrtc_version, &self.nvrtc_version);
        cmp("cudarc", &before.cudarc_feature, &self.cudarc_feature);
        cmp("gpubench", &before.tool_version, &self.tool_version);
        out
    }
}

/// Which series a set of points belongs to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct SeriesKey {
    /// GPU UUID.
    pub card: String,
    /// Benchmark id.
    pub benchmark: String,
    /// Metric name.
    pub metric: String,
    /// Unit.
    pub unit: String,
    /// Hash of the benchmark's parameters.
    pub params_hash: String,
}

impl SeriesKey {
    /// "benchmark/metric [unit]", the name tables show.
    pub fn label(&self) -> String {
        format!("{}/{} [{}]", self.benchmark, self.metric, self.unit)
    }
}

/// One run's value of a series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// Row id of the run.
    pub run_id: i64,
    /// Start time of the run.
    pub created_unix_s: i64,
    /// Median of the metric in that run.
    pub value: f64,
    /// Median of the clock-normalised metric.
    pub normalized: Option<f64>,
    /// Clock of the metric's domain during its benchmark (effective SM clock, or NVML's memory
    /// clock for memory-domain metrics), MHz.
    pub clock_mhz: Option<f64>,
    /// Share of the benchmark's samples that throttled.
    pub throttle_share: Option<f64>,
    /// Hash of the benchmark's generated code.
    pub kernel_hash: Option<String>,
}

/// A metric on one card over time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    /// Which metric on which card.
    pub key: SeriesKey,
    /// Bench family.
    pub family: String,
    /// "higher" or "lower".
    pub better: String,
    /// "sm", "memory" or "none".
    pub domain: String,
    /// Unit of the normalised values.
    pub norm_unit: Option<String>,
    /// Values in time order.
    pub points: Vec<Point>,
}

/// Which series to read.
#[derive(Debug, Clone, Default)]
pub struct SeriesFilter {
    /// Regular expression over "benchmark/metric".
    pub metric: Option<Regex>,
    /// Card UUID or a prefix of it.
    pub card: Option<String>,
}

impl SeriesFilter {
    /// A filter from the command line's `--metric` regular expression and `--card` prefix; a
    /// bad expression is a usage error.
    pub fn new(metric: Option<&str>, card: Option<&str>) -> Result<Self> {
        let metric = match metric {
            Some(m) => Some(Regex::new(m).map_err(|e| {
                let why = e.to_string().lines().last().unwrap_or("").trim_start_matches("error: ").to_string();
                Error::Usage(format!("--metric `{m}`: bad regular expression ({why})"))
            })?),
            None => None,
        };
        Ok(SeriesFilter { metric, card: card.map(str::to_owned) })
    }
}

/// Every stored run, by row id.
pub fn load_runs(store: &HistoryStore) -> Result<BTreeMap<i64, RunInfo>> {
    let e = |err: rusqlite::Error| Error::data(store.path(), format!("history database: {err}"));
    let mut stmt = store
        .connection()
        // Every column, each read by its name: no second list of the table's columns.
        .prepare("SELECT * FROM runs")
        .map_err(e)?;
    let rows = stmt
        .query_map([], |r| {
            Ok(RunInfo {
                id: r.get("id")?,
                created_unix_s: r.get("created_unix_s")?,
                card_uuid: r.get("card_uuid")?,
                gpu_name: r.get("gpu_name")?,
                driver_version: r.get("driver_version")?,
                cuda_driver_api: r.get("cuda_driver_api")?,
                nvrtc_version: r.get("nvrtc_version")?,
                cudarc_feature: r.get("cudarc_feature")?,
                tool_version: r.get("tool_version")?,
                profile: r.get("profile")?,
                throttle_share: r.get("throttle_share")?,
                median_sm_mhz: r.get("median_sm_mhz")?,
                power_limit_w: r.get("power_limit_w")?,
                foreign_processes: r.get("foreign_processes")?,
            })
        })
        .map_err(e)?;
    let mut out = BTreeMap::new();
    for row in rows {
        let row = row.map_err(e)?;
        out.insert(row.id, row);
    }
    Ok(out)
}

/// The series that pass `filter`, each in time order (ties by run id), sorted by key.
pub fn load_series(store: &HistoryStore, filter: &SeriesFilter) -> Result<Vec<Series>> {
    let e = |err: rusqlite::Error| Error::data(store.path(), format!("history database: {err}"));
    let mut stmt = store
        .connection()
        .prepare(
            "SELECT r.card_uuid, m.benchmark, m.metric, m.unit, m.params_hash, m.family, m.better, m.domain,
                    m.norm_unit, m.run_id, r.created_unix_s, m.median, m.norm_median,
                    CASE WHEN m.domain = 'memory' THEN m.mem_clock_mhz ELSE m.eff_clock_mhz END,
                    m.throttle_share, m.kernel_hash
             FROM metrics m JOIN runs r ON r.id = m.run_id
             WHERE m.median IS NOT NULL AND (?1 IS NULL OR r.card_uuid LIKE ?1 || '%')
             ORDER BY r.card_uuid, m.benchmark, m.metric, m.unit, m.params_hash, r.created_unix_s, r.id",
        )
        .map_err(e)?;
    let rows = stmt
        .query_map([filter.card.as_deref()], |r| {
            let key = SeriesKey {
                card: r.get(0)?,
                benchmark: r.get(1)?,
                metric: r.get(2)?,
                unit: r.get(3)?,
                params_hash: r.get(4)?,
            };
            let head = (r.get::<_, String>(5)?, r.get::<_, String>(6)?, r.get::<_, String>(7)?, r.get(8)?);
            let point = Point {
                run_id: r.get(9)?,
                created_unix_s: r.get(10)?,
                value: r.get(11)?,
                normalized: r.get(12)?,
                clock_mhz: r.get(13)?,
                throttle_share: r.get(14)?,
                kernel_hash: r.get(15)?,
            };
            Ok((key, head, point))
        })
        .map_err(e)?;
    let mut out: Vec<Series> = Vec::new();
    for row in rows {
        let (key, (family, better, domain, norm_unit), point) = row.map_err(e)?;
        if let Some(re) = &filter.metric
            && !re.is_match(&format!("{}/{}", key.benchmark, key.metric))
        {
            continue;
        }
        match out.last_mut() {
            Some(s) if s.key == key => s.points.push(point),
            _ => out.push(Series { key, family, better, domain, norm_unit, points: vec![point] }),
        }
    }
    Ok(out)
}
