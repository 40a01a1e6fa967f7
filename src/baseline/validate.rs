//! Baselines that cannot be poisoned: what is checked before a baseline is written, and the
//! way out for a baseline that is corrupt anyway (moving it aside, never deleting it).

use std::path::{Path, PathBuf};

use super::Baseline;
use crate::error::{Error, Result};
use crate::results::{ResultsDocument, Summary, check_document};

/// Every run must be a consistent results document with finite statistics
/// ([`check_document`]); the error names the run (counted from 1), benchmark and metric.
pub fn check_runs(runs: &[ResultsDocument]) -> Result<(), String> {
    for (i, run) in runs.iter().enumerate() {
        check_document(run).map_err(|why| format!("run {}: {why}", i + 1))?;
        if run.benchmarks.is_empty() && run.facts.is_empty() {
            return Err(format!("run {}: no benchmarks and no facts", i + 1));
        }
    }
    Ok(())
}

/// A baseline's runs and its own per-metric summaries must be finite and consistent: such a
/// baseline serialises without `null` statistics and reads back as it was.
pub fn check_baseline(b: &Baseline) -> Result<(), String> {
    check_runs(&b.runs)?;
    for m in &b.metrics {
        let key = format!("{}:{}", m.benchmark, m.metric);
        finite_summary(&m.summary).map_err(|why| format!("{key}: {why}"))?;
        if m.run_medians.iter().any(|v| !v.is_finite()) || !m.noise.is_finite() {
            return Err(format!("{key}: run medians or noise are not finite"));
        }
    }
    Ok(())
}

fn finite_summary(s: &Summary) -> Result<(), String> {
    let values = [s.median, s.mean, s.min, s.max, s.stdev];
    if s.n == 0 || values.iter().any(|v| !v.is_finite()) {
        return Err(format!("summary of {} samples is empty or not finite", s.n));
    }
    Ok(())
}

/// Where [`quarantine`] moves `path`: `<name>.quarantined-<unix seconds>` in the same folder
/// (not a `*.json` name, so the baselines folder no longer lists it).
pub fn quarantine_path(path: &Path, now_unix_s: u64) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "baseline".into());
    path.with_file_name(format!("{name}.quarantined-{now_unix_s}"))
}

/// Moves a (corrupt) baseline file aside with a timestamp, so that the next save can write a
/// fresh one; nothing is deleted. Refuses anything but a regular file and never overwrites an
/// earlier quarantined copy. Returns the new path.
pub fn quarantine(path: &Path, now_unix_s: u64) -> Result<PathBuf> {
    crate::results::check_regular_file(path)?;
    let target = quarantine_path(path, now_unix_s);
    if target.exists() {
        return Err(Error::Usage(format!("{} already exists; try again in a second", target.display())));
    }
    std::fs::rename(path, &target).map_err(|e| Error::io(path, e))?;
    Ok(target)
}
