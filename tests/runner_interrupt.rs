//! Ctrl-C during a run: the bench in flight is stopped, the records of the benchmarks that
//! finished are kept, and the error maps to exit code 130. (Own test binary: the interrupt
//! flag is process-wide.)

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gpubench::error::{Error, exit};
use gpubench::harness::Profile;
use gpubench::results::ResultsDocument;
use gpubench::runner::{self, BenchBinary, ExecOptions, RunHeader, interrupt};

fn script(dir: &Path, name: &str, body: &str) -> BenchBinary {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    BenchBinary { package: "stand-in".into(), name: name.into(), path }
}

fn fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h200-quick-run.json")
}

fn header() -> RunHeader {
    let doc = ResultsDocument::read(&fixture_path()).unwrap();
    RunHeader { gpu: doc.gpu, stack: doc.stack, settings: doc.settings, created_unix_s: doc.created_unix_s }
}

#[test]
fn an_interrupted_run_keeps_the_finished_benchmarks() {
    let dir = tempfile::tempdir().unwrap();
    // The first bench finishes and leaves its record; the second is interrupted mid-way.
    let first = script(
        dir.path(),
        "finished",
        &format!("cp '{}' \"$GPUBENCH_RECORD_DIR/finished.json\"", fixture_path().display()),
    );
    let second = script(dir.path(), "interrupted", "sleep 30");
    let opts = ExecOptions {
        profile: Profile::Quick,
        filter: None,
        device: 0,
        work_dir: dir.path().join("work"),
        timeout: Duration::from_secs(60),
        discard_throttled: false,
    };
    let stopper = std::thread::spawn(|| {
        std::thread::sleep(Duration::from_millis(1500));
        interrupt::request();
    });
    let t = Instant::now();
    let (doc, failure) = runner::run_all(&[first, second], &opts, header(), &mut |_| {});
    stopper.join().unwrap();
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    let failure = failure.expect("the run was interrupted");
    assert!(matches!(failure, Error::Interrupted), "{failure}");
    assert_eq!(failure.exit_code(), exit::INTERRUPTED);
    let recorded = ResultsDocument::read(&fixture_path()).unwrap();
    assert_eq!(doc.benchmarks.len(), recorded.benchmarks.len());
    assert_eq!(doc.benchmarks[0].metrics, recorded.benchmarks[0].metrics);
}
