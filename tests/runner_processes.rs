//! The runner against stand-in bench executables (shell scripts): the watchdog and crashes.
//! No GPU needed. (Ctrl-C, which sets a process-wide flag, has its own test binary.)

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use gpubench::error::{Error, exit};
use gpubench::harness::Profile;
use gpubench::runner::{self, BenchBinary, ExecOptions};

fn script(dir: &Path, name: &str, body: &str) -> BenchBinary {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    BenchBinary { package: "stand-in".into(), name: name.into(), path }
}

fn options(work: &Path, timeout: Duration) -> ExecOptions {
    ExecOptions {
        profile: Profile::Quick,
        filter: None,
        device: 0,
        work_dir: work.to_path_buf(),
        timeout,
        discard_throttled: false,
    }
}

#[test]
fn the_watchdog_stops_a_hanging_bench() {
    let dir = tempfile::tempdir().unwrap();
    let bin = script(dir.path(), "hangs", "sleep 30");
    let opts = options(&dir.path().join("work"), Duration::from_secs(1));
    std::fs::create_dir_all(opts.record_dir()).unwrap();
    let t = Instant::now();
    let err = runner::run_bench(&bin, &opts, &mut |_| {}).unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(matches!(err, Error::Watchdog { seconds: 1, .. }), "{err}");
    assert_eq!(err.to_string(), "bench `hangs` did not finish within 1 s (watchdog)");
    assert_eq!(err.exit_code(), exit::BENCH_FAILURE);
}

#[test]
fn a_crashing_bench_is_a_bench_failure_with_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let bin = script(dir.path(), "crashes", "echo 'about to fail' >&2\nexit 3");
    let opts = options(&dir.path().join("work"), Duration::from_secs(30));
    std::fs::create_dir_all(opts.record_dir()).unwrap();
    let err = runner::run_bench(&bin, &opts, &mut |_| {}).unwrap_err();
    assert_eq!(err.exit_code(), exit::BENCH_FAILURE);
    assert!(err.to_string().contains("exited with code 3"), "{err}");
    let log = std::fs::read_to_string(dir.path().join("work/crashes.log")).unwrap();
    assert!(log.contains("about to fail"));
}
