//! Reading what criterion wrote: `<home>/<group>/<function>/new/{benchmark,estimates,sample}.json`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::results::CriterionEstimates;

/// One benchmark criterion measured.
#[derive(Debug, Clone, PartialEq)]
pub struct CriterionBenchmark {
    /// "group/function".
    pub id: String,
    /// Point estimates and intervals.
    pub estimates: CriterionEstimates,
    /// Per-sample time per iteration, ns (times / iters of sample.json).
    pub time_per_iter_ns: Vec<f64>,
}

#[derive(Deserialize)]
struct BenchmarkFile {
    full_id: String,
}

#[derive(Deserialize)]
struct Interval {
    lower_bound: f64,
    upper_bound: f64,
}

#[derive(Deserialize)]
struct Estimate {
    point_estimate: f64,
    confidence_interval: Interval,
}

#[derive(Deserialize)]
struct EstimatesFile {
    mean: Estimate,
    median: Estimate,
    std_dev: Estimate,
}

#[derive(Deserialize)]
struct SampleFile {
    iters: Vec<f64>,
    times: Vec<f64>,
}

/// Every benchmark under `home`, sorted by id. Unreadable entries are skipped: criterion's
/// files are a secondary source, our own records are the primary one.
pub fn read_all(home: &Path) -> Vec<CriterionBenchmark> {
    let mut found = Vec::new();
    let mut dirs = vec![home.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n == "new") {
                    if let Some(b) = read_one(&path) {
                        found.push(b);
                    }
                } else {
                    dirs.push(path);
                }
            }
        }
    }
    found.sort_by(|a, b| a.id.cmp(&b.id));
    found
}

fn read_one(new_dir: &Path) -> Option<CriterionBenchmark> {
    let read = |name: &str| -> Option<Vec<u8>> { std::fs::read(PathBuf::from(new_dir).join(name)).ok() };
    let bench: BenchmarkFile = serde_json::from_slice(&read("benchmark.json")?).ok()?;
    let est: EstimatesFile = serde_json::from_slice(&read("estimates.json")?).ok()?;
    let time_per_iter_ns = read("sample.json")
        .and_then(|b| serde_json::from_slice::<SampleFile>(&b).ok())
        .map(|s| s.times.iter().zip(&s.iters).map(|(t, i)| t / i.max(1.0)).collect())
        .unwrap_or_default();
    Some(CriterionBenchmark {
        id: bench.full_id,
        estimates: CriterionEstimates {
            mean_ns: est.mean.point_estimate,
            median_ns: est.median.point_estimate,
            mean_lower_ns: est.mean.confidence_interval.lower_bound,
            mean_upper_ns: est.mean.confidence_interval.upper_bound,
            std_dev_ns: est.std_dev.point_estimate,
        },
        time_per_iter_ns,
    })
}
