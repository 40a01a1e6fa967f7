//! Every command's output piped into a reader that has already gone (`... | head -1`): no
//! panic, and the exit code stays the command's own (a REGRESSED comparison still exits 1).

use std::path::Path;
use std::process::{Command, Output, Stdio};

mod common;

use common::{BIN, fixture, regressed_copy, two_run_baseline};

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

#[test]
fn every_offline_command_survives_a_closed_stdout_with_its_own_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let quick = fixture("h200-quick-run.json");
    let quick = quick.to_str().unwrap();
    let regressed = regressed_copy(dir.path());
    let regressed = regressed.to_str().unwrap();
    let two = two_run_baseline(dir.path());
    let two = two.to_str().unwrap();
    let h100_path = common::recorded_h100_default(dir.path(), "h100-default.json");
    let h100 = h100_path.to_string_lossy().into_owned();
    let o = run_into_closed_pipe(dir.path(), &["baseline", "save", quick, "--name", "piped"]);
    assert_code(&["baseline", "save"], &o, 0);
    let cases: Vec<(Vec<&str>, i32)> = vec![
        (vec!["compare", two, regressed, "--json"], 1),
        (vec!["compare", two, regressed], 1),
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

/// Whether `code` is one of the documented exit codes.
fn documented(code: Option<i32>) -> bool {
    code.is_some_and(|c| gpubench::error::exit::TABLE.iter().any(|(n, _)| *n == c))
}

/// Every command and subcommand: those above with their exact codes, the rest (which need a
/// GPU, NVRTC or a cargo build, or judge data they are given) with a documented code, and none
/// may panic on a closed stdout.
fn every_command_case(dir: &Path) -> Vec<Vec<String>> {
    let quick = fixture("h200-quick-run.json").to_string_lossy().into_owned();
    let db = dir.join("history.db").to_string_lossy().into_owned();
    let missing = dir.join("no-workspace/Cargo.toml").to_string_lossy().into_owned();
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    // An upgrade job's folder: one run of each stack.
    let job = dir.join("job");
    std::fs::create_dir_all(job.join("runs/card")).unwrap();
    for side in ["a-1.json", "b-1.json"] {
        std::fs::copy(fixture("h200-quick-run.json"), job.join("runs/card").join(side)).unwrap();
    }
    let job = job.to_string_lossy().into_owned();
    vec![
        s(&["--quick", "--no-baseline", "--manifest-path", &missing]),
        s(&["--quick", "--json", "--no-baseline", "--manifest-path", &missing]),
        s(&["archive", "--manifest-path", &missing, "-o", "a.tar.gz"]),
        s(&["kernels", "--arch", "sm_90"]),
        s(&["kernels", "--arch", "sm_90", "--json"]),
        s(&["report", &quick]),
        s(&["chipmap", &quick]),
        s(&["info"]),
        s(&["info", "--json"]),
        s(&["ramp", "--idle-ms", "1", "--launches", "2"]),
        s(&["load", "--seconds", "1", "--json"]),
        s(&["dissect", "--quick"]),
        s(&["compare", &quick, &quick]),
        s(&["calibrate", &quick]),
        s(&["calibrate", &quick, "--json"]),
        s(&["baseline", "list"]),
        s(&["baseline", "show", "piped"]),
        s(&["baseline", "save", &quick, "--name", "again"]),
        s(&["baseline", "quarantine", "no-such-baseline.json"]),
        s(&["history", "import", &quick, "--db", &db]),
        s(&["history", "--db", &db]),
        s(&["history", "--db", &db, "--json"]),
        s(&["fleet", &quick]),
        s(&["health", "--timeout", "5"]),
        s(&["upgrade", "--from", &job]),
    ]
}

#[test]
fn every_subcommand_survives_a_closed_stdout_with_a_documented_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let cases = every_command_case(dir.path());
    // every subcommand `--help` lists has a case
    let help = Command::new(BIN).args(["gpubench", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        // continuation lines of a wrapped description are indented further
        .filter(|l| !l[2..].starts_with(' '))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() >= 14, "{commands:?}");
    for c in &commands {
        assert!(cases.iter().any(|a| a[0] == *c), "no closed-stdout case for `{c}`");
    }
    for args in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run_into_closed_pipe(dir.path(), &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(documented(o.status.code()), "{args:?}: {:?} {err}", o.status.code());
        assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{args:?}: {err}");
    }
}
