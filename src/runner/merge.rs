//! Merging the bench processes' records and criterion's estimates into one results document.

use super::criterion_files::CriterionBenchmark;
use crate::results::{
    BenchmarkResult, Better, ClockDomain, GpuIdentity, Metric, RESULTS_SCHEMA, ResultsDocument, Settings, Stack,
};

/// What one bench executable left behind.
#[derive(Debug, Clone, Default)]
pub struct BenchOutput {
    /// Bench target name.
    pub bench: String,
    /// Our harness's record, when the bench uses it.
    pub record: Option<ResultsDocument>,
    /// Criterion's files.
    pub criterion: Vec<CriterionBenchmark>,
}

/// The run-level facts the merged document carries.
#[derive(Debug, Clone)]
pub struct RunHeader {
    /// GPU measured.
    pub gpu: GpuIdentity,
    /// Software stack.
    pub stack: Stack,
    /// Settings.
    pub settings: Settings,
    /// Start time, Unix seconds.
    pub created_unix_s: u64,
}

/// Builds the results document: our records' benchmarks (with criterion's estimates attached),
/// then criterion-only benchmarks of benches that do not use our harness, timed in ns.
pub fn merge(header: RunHeader, outputs: Vec<BenchOutput>, wall_time_s: f64) -> ResultsDocument {
    let mut benchmarks = Vec::new();
    let mut stack = header.stack;
    for out in outputs {
        let mut recorded: Vec<BenchmarkResult> = Vec::new();
        if let Some(record) = out.record {
            stack = record.stack;
            recorded = record.benchmarks;
        }
        for b in recorded.iter_mut() {
            b.criterion = out.criterion.iter().find(|c| c.id == b.id).map(|c| c.estimates);
        }
        let foreign: Vec<BenchmarkResult> = out
            .criterion
            .iter()
            .filter(|c| !recorded.iter().any(|b| b.id == c.id))
            .map(|c| BenchmarkResult {
                chosen: Default::default(),
                id: c.id.clone(),
                family: out.bench.clone(),
                params: Default::default(),
                time_ns: c.time_per_iter_ns.clone(),
                clocks: Vec::new(),
                metrics: vec![Metric::new("time", "ns", Better::Lower, ClockDomain::Sm, c.time_per_iter_ns.clone())],
                kernels: Vec::new(),
                criterion: Some(c.estimates),
                telemetry: Vec::new(),
                sm_maps: Vec::new(),
            })
            .collect();
        benchmarks.extend(recorded);
        benchmarks.extend(foreign);
    }
    ResultsDocument {
        schema: RESULTS_SCHEMA.to_string(),
        created_unix_s: header.created_unix_s,
        gpu: header.gpu,
        stack,
        settings: header.settings,
        facts: Vec::new(),
        telemetry: Some(crate::telemetry::run_summary(&benchmarks)),
        benchmarks,
        wall_time_s,
    }
}
