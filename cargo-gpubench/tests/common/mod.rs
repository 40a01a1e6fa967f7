//! Helpers shared by the CLI tests: running the binary as cargo does, the repository's
//! fixtures, and the assertions every command's output must pass.
// Each test file is its own crate and uses some of these helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The CLI under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_cargo-gpubench");

/// A file or folder of the repository, by its path from the root.
pub fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

/// A file under tests/fixtures.
pub fn fixture(name: &str) -> PathBuf {
    repo("tests/fixtures").join(name)
}

/// Runs the CLI in `dir` as cargo does (`cargo-gpubench gpubench ARGS`), without colour.
pub fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN).arg("gpubench").args(args).current_dir(dir).env("NO_COLOR", "1").output().expect("the CLI starts")
}

/// Standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit code `code`, and never a panic or a backtrace.
pub fn assert_exit(o: &Output, code: i32) {
    assert_eq!(o.status.code(), Some(code), "stdout:\n{}\nstderr:\n{}", stdout(o), stderr(o));
    let err = stderr(o);
    assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "{err}");
}

/// Exactly one `error` line on standard error, and it contains `needle`.
pub fn assert_one_error_line(o: &Output, needle: &str) {
    let err = stderr(o);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains(needle), "{err}");
}

/// The committed H100 default run (stored gzipped), unpacked into `dir` as `name`.
pub fn recorded_h100_default(dir: &Path, name: &str) -> PathBuf {
    let gz = fixture("recorded/h100-default.json.gz");
    let mut text = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(std::fs::File::open(gz).unwrap()), &mut text).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The quick H200 fixture with stream/triad's bandwidth 5 % lower (one REGRESSED metric),
/// written to `dir`. Its stored summary is recomputed: inconsistent files are refused.
pub fn regressed_copy(dir: &Path) -> PathBuf {
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("h200-quick-run.json")).unwrap()).unwrap();
    for b in v["benchmarks"].as_array_mut().unwrap() {
        if b["id"] == "stream/triad" {
            for s in b["metrics"][0]["samples"].as_array_mut().unwrap() {
                *s = serde_json::json!(s.as_f64().unwrap() * 0.95);
            }
            let samples: Vec<f64> =
                b["metrics"][0]["samples"].as_array().unwrap().iter().map(|s| s.as_f64().unwrap()).collect();
            b["metrics"][0]["summary"] = serde_json::to_value(gpubench::results::Summary::of(&samples)).unwrap();
        }
    }
    let path = dir.join("regressed.json");
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    path
}

#[path = "../../../tests/support/second_run.rs"]
mod second_run;

/// A baseline file (`two-runs.json` in `dir`) of the recorded H200 quick run and a second run
/// drawn from its samples ([`second_run::two_runs`]): one run against one run of a card decides
/// nothing, so a test of what a verdict does needs a baseline of two.
pub fn two_run_baseline(dir: &Path) -> PathBuf {
    use gpubench::baseline::{Baseline, BaselineKey};
    let run = gpubench::results::ResultsDocument::read(&fixture("h200-quick-run.json")).unwrap();
    let key = BaselineKey { class: run.gpu.class_key(), uuid: None, name: Some("two-runs".into()) };
    let b = Baseline::from_runs(&key, second_run::two_runs(&run), run.created_unix_s + 120).unwrap();
    let path = dir.join("two-runs.json");
    std::fs::write(&path, serde_json::to_vec(&b).unwrap()).unwrap();
    path
}
