//! One process per GPU at the same time: each runs the single-GPU path of `cargo gpubench` on
//! its GPU alone (`CUDA_VISIBLE_DEVICES`, see [`isolate`]; its own per-UUID lock, its own results
//! file named by UUID), its output goes to a log file next to its results, and the parent waits
//! for all of them.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Instant, SystemTime};

use super::devices::{child_args, isolate, results_file_name};
use crate::error::{Error, Result};
use crate::results::ResultsDocument;

/// One GPU to measure.
#[derive(Debug, Clone)]
pub struct DeviceRun {
    /// CUDA ordinal.
    pub ordinal: usize,
    /// GPU UUID.
    pub uuid: String,
    /// Where its process writes its results.
    pub results: PathBuf,
    /// Where its process's stdout and stderr go.
    pub log: PathBuf,
}

impl DeviceRun {
    /// GPU `uuid` at CUDA `ordinal`, its results and log named after its UUID in `dir`.
    pub fn in_dir(ordinal: usize, uuid: &str, dir: &Path) -> Self {
        let results = results_file_name(uuid);
        let log = format!("{}.log", results.trim_end_matches(".json"));
        DeviceRun { ordinal, uuid: uuid.to_string(), results: dir.join(results), log: dir.join(log) }
    }
}

/// How one GPU's process ended.
#[derive(Debug, Clone)]
pub struct DeviceOutcome {
    /// The GPU and its files.
    pub run: DeviceRun,
    /// Its exit code (128 + signal when killed).
    pub code: i32,
    /// Its one-line error, when it failed.
    pub reason: Option<String>,
    /// What it measured, when it wrote results during this run.
    pub doc: Option<ResultsDocument>,
    /// Wall time of the process, seconds.
    pub seconds: f64,
}

/// Starts `exe` once per GPU with the parent's arguments rewritten for that GPU
/// ([`child_args`]), all at once, and waits for all of them.
pub fn run_devices(
    exe: &Path,
    parent_args: &[OsString],
    runs: &[DeviceRun],
    archive: Option<&Path>,
) -> Result<Vec<DeviceOutcome>> {
    let started_at = SystemTime::now();
    let mut children = Vec::new();
    for run in runs {
        let log = std::fs::File::create(&run.log).map_err(|e| Error::io(&run.log, e))?;
        let err = log.try_clone().map_err(|e| Error::io(&run.log, e))?;
        let mut cmd = Command::new(exe);
        let child = isolate(&mut cmd, &run.uuid, run.ordinal)
            .args(child_args(parent_args, 0, &run.results, archive))
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .map_err(|e| Error::io(exe, e))?;
        children.push((run.clone(), child, Instant::now()));
    }
    let mut outcomes = Vec::new();
    for (run, mut child, t0) in children {
        let status = child.wait().map_err(|e| Error::io(exe, e))?;
        let code = status.code().unwrap_or_else(|| {
            use std::os::unix::process::ExitStatusExt;
            128 + status.signal().unwrap_or(0)
        });
        let fresh = std::fs::metadata(&run.results).and_then(|m| m.modified()).is_ok_and(|t| t >= started_at);
        let doc = if fresh { ResultsDocument::read(&run.results).ok() } else { None };
        let reason = (code != 0).then(|| last_error_line(&run.log));
        outcomes.push(DeviceOutcome { run, code, reason, doc, seconds: t0.elapsed().as_secs_f64() });
    }
    Ok(outcomes)
}

/// The last `error: ...` line of a log (without the prefix), or its last line.
pub fn last_error_line(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix("error: "))
        .or(lines.last().copied())
        .unwrap_or("no output")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_gpu_process_runs_with_its_own_arguments_and_code() {
        // A stand-in for the CLI: a shell script that reports the GPU it was given and what it
        // sees, and fails on GPU 1.
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("fake.sh");
        std::fs::write(
            &exe,
            "#!/bin/sh\nwhile [ $# -gt 0 ]; do case $1 in --device) d=$2;; --output) o=$2;; esac; shift; done\n\
             echo measuring $d of $CUDA_VISIBLE_DEVICES as $GPUBENCH_ORDINAL\n\
             if [ $GPUBENCH_ORDINAL = 1 ]; then echo 'error: no CUDA GPU: gone' >&2; exit 3; fi\n\
             printf '{\"schema\":\"x\"}' > $o\n",
        )
        .unwrap();
        std::process::Command::new("chmod").arg("+x").arg(&exe).status().unwrap();
        let runs: Vec<DeviceRun> = (0..2).map(|i| DeviceRun::in_dir(i, &format!("GPU-{i}"), dir.path())).collect();
        assert_eq!(runs[1].results, dir.path().join("GPU-1.json"));
        assert_eq!(runs[1].log, dir.path().join("GPU-1.log"));
        let out = run_devices(&exe, &["--device".into(), "all".into()], &runs, None).unwrap();
        assert_eq!(out.iter().map(|o| o.code).collect::<Vec<_>>(), vec![0, 3]);
        assert_eq!(out[1].reason.as_deref(), Some("no CUDA GPU: gone"));
        assert!(out[0].reason.is_none());
        // GPU 0 wrote a file, but not a results document: no doc, and no panic.
        assert!(dir.path().join("GPU-0.json").exists() && out[0].doc.is_none());
        // each process sees its GPU alone, as device 0, and knows the ordinal the parent uses
        assert!(std::fs::read_to_string(&runs[0].log).unwrap().contains("measuring 0 of GPU-0 as 0"));
        assert!(std::fs::read_to_string(&runs[1].log).unwrap().contains("measuring 0 of GPU-1 as 1"));
    }
}
