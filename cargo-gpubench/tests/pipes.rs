//! Every command's output piped into a reader that has already gone (`... | head -1`): no
//! panic, and the exit code stays the command's own (a REGRESSED comparison still exits 1).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_cargo-gpubench");

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(name)
}

/// Runs the CLI in `dir` with stdout a pipe whose read end is already closed.
fn run_into_closed_pipe(dir: &Path, args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    Command::new(BIN)
        .arg("gpubench")
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("the CLI starts")
}

fn assert_code(args: &[&str], o: &Output, code: i32) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
    assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{args:?}: {err}");
}

/// The quick fixture with stream/triad's bandwidth 5 % lower: one REGRESSED metric.
fn regressed_copy(dir: &Path) -> PathBuf {
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

#[test]
fn every_offline_command_survives_a_closed_stdout_with_its_own_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let quick = fixture("h200-quick-run.json");
    let quick = quick.to_str().unwrap();
    let regressed = regressed_copy(dir.path());
    let regressed = regressed.to_str().unwrap();
    let h100 = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../results/nvidia-h100-80gb-hbm3-cc90-132sm-79gib/default.json")
        .to_string_lossy()
        .into_owned();
    let o = run_into_closed_pipe(dir.path(), &["baseline", "save", quick, "--name", "piped"]);
    assert_code(&["baseline", "save"], &o, 0);
    let cases: Vec<(Vec<&str>, i32)> = vec![
        (vec!["compare", quick, regressed, "--json"], 1),
        (vec!["compare", quick, regressed], 1),
        (vec!["compare", quick, quick, "--json"], 0),
        (vec!["compare", quick, quick, "--all"], 0),
        (vec!["report", quick], 0),
        (vec!["report", quick, "--json"], 0),
        (vec!["baseline", "list"], 0),
        (vec!["baseline", "list", "--json"], 0),
        (vec!["baseline", "show", "piped", "--json"], 0),
        (vec!["baseline", "show", "piped", "--all"], 0),
        (vec!["--help"], 0),
        (vec!["compare", "--help"], 0),
        (vec!["chipmap", h100.as_str()], 0),
        (vec!["chipmap", h100.as_str(), "--json"], 0),
        (vec!["fleet", quick, "--json"], 0),
    ];
    for (args, code) in cases {
        let o = run_into_closed_pipe(dir.path(), &args);
        assert_code(&args, &o, code);
    }
}

#[test]
fn dissect_from_saved_sweeps_survives_a_closed_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let from = fixture("dissect/h200-run1");
    let out = dir.path().join("d");
    let args = ["dissect", "--from", from.to_str().unwrap(), "--out", out.to_str().unwrap()];
    let o = run_into_closed_pipe(dir.path(), &args);
    assert_code(&args, &o, 0);
}
