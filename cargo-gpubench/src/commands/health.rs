//! `cargo gpubench health`: the health profile on this node's GPUs, judged against the class
//! envelope; one line per GPU, exit 0 (PASS), 7 (a GPU outside the envelope) or the run's own
//! error code; `--drain` drains the node through `scontrol` on failure.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use gpubench::baseline::BaselineKey;
use gpubench::error::{Error, Result, exit};
use gpubench::fleet::{self, FleetRule, LoadedRun, health};
use gpubench::runner::devices::{DeviceSelection, worst_exit_code};
use gpubench::runner::fanout::{DeviceRun, run_devices};

use crate::cli::HealthArgs;
use gpubench::pipeline::judge;

pub fn health(args: HealthArgs) -> Result<i32> {
    let selection = DeviceSelection::parse(&args.device).map_err(Error::Usage)?;
    let (code, lines) = match check(&args, &selection) {
        Ok(r) => r,
        Err(e) => (e.exit_code(), vec![format!("FAIL {e}")]),
    };
    for l in &lines {
        crate::output::emit(l);
    }
    if code != exit::OK && args.drain {
        let first = lines.iter().find(|l| l.starts_with("FAIL")).cloned().unwrap_or_else(|| lines.join("; "));
        drain(&health::drain_text(first.trim_start_matches("FAIL ")));
    }
    Ok(code)
}

/// Runs the profile and judges it: the exit code and one line per GPU.
fn check(args: &HealthArgs, selection: &DeviceSelection) -> Result<(i32, Vec<String>)> {
    gpubench::device::preflight()?;
    let ordinals = selection.resolve(gpubench::device::device_count()?)?;
    let uuids = ordinals.iter().map(|&n| gpubench::device::uuid_without_context(n)).collect::<Result<Vec<_>>>()?;
    // Without --out: a fresh private folder, removed when the check ends (however it ends
    // short of a kill).
    let (dir, _scratch) = scratch_dir(args.out.as_deref())?;
    let runs: Vec<DeviceRun> =
        ordinals.iter().zip(&uuids).map(|(&ordinal, uuid)| DeviceRun::in_dir(ordinal, uuid, &dir)).collect();
    let exe = std::env::current_exe().map_err(|e| Error::io("current executable", e))?;
    let child: Vec<OsString> = health::run_args(args.timeout).into_iter().map(OsString::from).collect();
    let outcomes = run_devices(&exe, &child, &runs, args.archive.as_deref())?;

    let envelope = envelope_runs(args, outcomes.iter().find_map(|o| o.doc.as_ref()))?;
    let config = args.place.get().config(&judge::current_dir()?)?;
    let rule = FleetRule { verdict: config.rule, ..FleetRule::default() };
    let mut lines = Vec::new();
    let mut codes = Vec::new();
    for o in &outcomes {
        let (code, line) = match (&o.doc, o.code) {
            (Some(doc), 0) if !envelope.is_empty() => {
                let cand = LoadedRun { origin: o.run.results.display().to_string(), host: None, doc: doc.clone() };
                let (card, n) = fleet::analysis::judge_one(&envelope, &cand, &rule);
                (if card.outlier { exit::OUTLIER } else { exit::OK }, health::verdict_line(o.run.ordinal, &card, n))
            }
            (Some(_), 0) => (
                exit::OK,
                format!("PASS GPU {} {}: ran; no class envelope to judge against", o.run.ordinal, o.run.uuid),
            ),
            _ => (
                o.code.max(1),
                format!(
                    "FAIL GPU {} {}: health run failed (exit {}): {}",
                    o.run.ordinal,
                    o.run.uuid,
                    o.code,
                    o.reason.as_deref().unwrap_or("no results")
                ),
            ),
        };
        codes.push(code);
        lines.push(line);
    }
    lines.sort_by_key(|l| !l.starts_with("FAIL"));
    Ok((worst_exit_code(&codes), lines))
}

/// The class envelope: `--envelope` (files, folders, a class baseline), else the class's default
/// baseline in the baselines folder; empty when there is none.
fn envelope_runs(args: &HealthArgs, sample: Option<&gpubench::results::ResultsDocument>) -> Result<Vec<LoadedRun>> {
    if let Some(p) = &args.envelope {
        return Ok(fleet::load(std::slice::from_ref(p))?.runs);
    }
    let Some(doc) = sample else { return Ok(Vec::new()) };
    let root = judge::current_dir()?;
    let config = args.place.get().config(&root)?;
    let store = args.place.get().store(&config, &root);
    let key = BaselineKey::for_gpu(&doc.gpu, None, false)?;
    Ok(match store.load(&key)? {
        Some((path, b)) => {
            b.runs.into_iter().map(|doc| LoadedRun { origin: path.display().to_string(), host: None, doc }).collect()
        }
        None => Vec::new(),
    })
}

/// Where the health runs write: `out` (created), else a fresh folder of mode 0700 under the
/// system temporary folder with an unpredictable name, removed when the returned guard drops.
/// (A predictable name would let another local user plant files or links there, or forge the
/// results judged.)
fn scratch_dir(out: Option<&Path>) -> Result<(PathBuf, Option<tempfile::TempDir>)> {
    match out {
        Some(d) => {
            std::fs::create_dir_all(d).map_err(|e| Error::io(d, e))?;
            Ok((d.to_path_buf(), None))
        }
        None => {
            let tmp = std::env::temp_dir();
            use std::os::unix::fs::PermissionsExt;
            let scratch = tempfile::Builder::new()
                .prefix("gpubench-health-")
                .permissions(std::fs::Permissions::from_mode(0o700))
                .tempdir_in(&tmp)
                .map_err(|e| Error::io(&tmp, e))?;
            Ok((scratch.path().to_path_buf(), Some(scratch)))
        }
    }
}

/// Drains this node; a missing `scontrol` or its failure is reported, not fatal.
fn drain(reason: &str) {
    let host = short_hostname();
    let line = fleet::report::drain_command(&host, reason);
    eprintln!("draining: {line}");
    let status = std::process::Command::new("scontrol")
        .args(["update", &format!("nodename={host}"), "state=drain", &format!("reason={reason}")])
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => eprintln!("error: scontrol failed ({s}); the node was not drained"),
        Err(e) => eprintln!("error: cannot run scontrol ({e}); the node was not drained"),
    }
}

fn short_hostname() -> String {
    let full = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_else(|_| "localhost".into());
    full.trim().split('.').next().unwrap_or("localhost").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scratch_folder_is_fresh_private_and_removed() {
        use std::os::unix::fs::PermissionsExt;
        // The name the check used to take: planted by someone else, it is not used.
        let old = std::env::temp_dir().join(format!("gpubench-health-{}", std::process::id()));
        let (a, guard_a) = scratch_dir(None).unwrap();
        let (b, guard_b) = scratch_dir(None).unwrap();
        assert_ne!(a, b);
        assert_ne!(a, old);
        assert_eq!(std::fs::metadata(&a).unwrap().permissions().mode() & 0o777, 0o700);
        std::fs::write(a.join("GPU-x.json"), b"{}").unwrap();
        drop(guard_a);
        drop(guard_b);
        assert!(!a.exists() && !b.exists(), "removed at the end");
        let out = tempfile::tempdir().unwrap();
        let (d, guard) = scratch_dir(Some(&out.path().join("kept"))).unwrap();
        assert!(guard.is_none() && d.is_dir());
    }
}
