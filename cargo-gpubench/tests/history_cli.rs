//! `cargo gpubench history` end to end on recorded H200 results: import (files, folders,
//! archives, idempotent), the change point table, JSON, Markdown with plots, `--fail-recent`
//! and its exit code, bad inputs. No GPU needed.

use std::path::{Path, PathBuf};

mod common;

use common::{assert_exit, assert_one_error_line, repo, run, stdout};

/// Eight copies of the quick fixture an hour apart; from run `k` on, the driver is newer and
/// every latency (raw and normalised) is 3 % higher.
fn planted_runs(dir: &Path, k: usize) -> PathBuf {
    let text = std::fs::read_to_string(repo("tests/fixtures/h200-quick-run.json")).unwrap();
    let base: serde_json::Value = serde_json::from_str(&text).unwrap();
    let runs = dir.join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    for i in 0..8 {
        let mut doc = base.clone();
        doc["created_unix_s"] = serde_json::json!(1_800_000_000u64 + 3600 * i as u64);
        if i >= k {
            doc["stack"]["driver_version"] = serde_json::json!("590.48.01");
            for b in doc["benchmarks"].as_array_mut().unwrap() {
                if b["family"] != "latency" {
                    continue;
                }
                for m in b["metrics"].as_array_mut().unwrap() {
                    let scale = |v: &mut serde_json::Value| *v = serde_json::json!(v.as_f64().unwrap() * 1.03);
                    scale(&mut m["summary"]["median"]);
                    if m["normalized"].is_object() {
                        scale(&mut m["normalized"]["summary"]["median"]);
                    }
                }
            }
        }
        std::fs::write(runs.join(format!("run{i}.json")), serde_json::to_vec(&doc).unwrap()).unwrap();
    }
    runs
}

#[test]
fn import_is_idempotent_over_files_folders_and_archives() {
    let dir = tempfile::tempdir().unwrap();
    let set1 = repo("tests/fixtures/recorded/h200-aa/set1-runs.tar.xz");
    let quick = repo("tests/fixtures/h200-quick-run.json");
    let o = run(dir.path(), &["history", "import", set1.to_str().unwrap(), quick.to_str().unwrap()]);
    assert_exit(&o, 0);
    assert!(stdout(&o).contains("imported 7 runs into gpubench-history.db (0 already there"), "{}", stdout(&o));
    let o = run(dir.path(), &["history", "import", set1.to_str().unwrap()]);
    assert_exit(&o, 0);
    assert!(stdout(&o).contains("imported 0 runs") && stdout(&o).contains("6 already there"), "{}", stdout(&o));
    assert!(stdout(&o).contains("it holds 7 runs"), "{}", stdout(&o));
    // The A/A runs of set 1 (judged with the committed thresholds) hold no change point.
    let config = repo("gpubench.toml");
    let o = run(dir.path(), &["history", "--config", config.to_str().unwrap(), "--fail-recent", "2"]);
    assert_exit(&o, 0);
    assert!(stdout(&o).contains("0 change points"), "{}", stdout(&o));
}

#[test]
fn a_planted_step_is_reported_with_its_cause_in_table_json_markdown_and_plots() {
    let dir = tempfile::tempdir().unwrap();
    let runs = planted_runs(dir.path(), 5);
    let o = run(dir.path(), &["history", "import", "--db", "h.db", runs.to_str().unwrap()]);
    assert_exit(&o, 0);
    let o = run(
        dir.path(),
        &[
            "history",
            "--db",
            "h.db",
            "--metric",
            "^latency/cg/",
            "--markdown",
            "out/summary.md",
            "--plots",
            "out/plots",
        ],
    );
    assert_exit(&o, 0);
    let table = stdout(&o);
    assert!(table.contains("latency/cg/"), "{table}");
    assert!(table.contains("+3.00 % regressed") && table.contains("software"), "{table}");
    assert!(table.contains("driver 580.159.04 -> 590.48.01"), "{table}");
    let md = std::fs::read_to_string(dir.path().join("out/summary.md")).unwrap();
    assert!(md.contains("| driver 580.159.04 -> 590.48.01 |"), "{md}");
    assert!(md.contains("](plots/GPU-0ecb8783-latency.svg)"), "{md}");
    assert!(dir.path().join("out/plots/GPU-0ecb8783-latency.svg").is_file());

    let o = run(dir.path(), &["history", "--db", "h.db", "--metric", "^latency/cg/", "--json"]);
    assert_exit(&o, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let series = v["series"].as_array().unwrap();
    assert!(!series.is_empty());
    for s in series {
        let cps = s["change_points"].as_array().unwrap();
        assert_eq!(cps.len(), 1, "{s}");
        assert_eq!(cps[0]["index"], 5);
        assert_eq!(cps[0]["cause"], "software");
        assert_eq!(s["series"]["points"].as_array().unwrap().len(), 8);
    }
}

#[test]
fn fail_recent_exits_with_its_code_only_when_a_change_point_is_among_the_newest_runs() {
    let dir = tempfile::tempdir().unwrap();
    let runs = planted_runs(dir.path(), 6);
    assert_exit(&run(dir.path(), &["history", "import", runs.to_str().unwrap()]), 0);
    let o = run(dir.path(), &["history", "--fail-recent", "2", "--metric", "^latency/"]);
    assert_exit(&o, gpubench::error::exit::CHANGE_POINT);
    assert!(stdout(&o).contains("(recent)"), "{}", stdout(&o));
    let o = run(dir.path(), &["history", "--fail-recent", "1", "--metric", "^latency/"]);
    assert_exit(&o, 0);
    // Without --fail-recent a change point is reported, not failed.
    assert_exit(&run(dir.path(), &["history", "--metric", "^latency/"]), 0);
    // Filtering to another card leaves nothing to show.
    let o = run(dir.path(), &["history", "--card", "GPU-00000000"]);
    assert_exit(&o, 2);
    assert_one_error_line(&o, "no series");
}

#[test]
fn bad_inputs_get_one_error_line_and_their_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(dir.path(), &["history"]);
    assert_exit(&o, 2);
    assert_one_error_line(&o, "no history database at gpubench-history.db");

    std::fs::write(dir.path().join("junk.db"), b"not an sqlite database, just text that is long enough").unwrap();
    let o = run(dir.path(), &["history", "--db", "junk.db"]);
    assert_exit(&o, 5);
    assert_one_error_line(&o, "junk.db");

    let quick = repo("tests/fixtures/h200-quick-run.json");
    assert_exit(&run(dir.path(), &["history", "import", quick.to_str().unwrap()]), 0);
    let o = run(dir.path(), &["history", "--metric", "("]);
    assert_exit(&o, 2);
    assert_one_error_line(&o, "--metric");

    // A JSON file of another kind named directly is refused; nothing is stored.
    let verdicts = dir.path().join("other.json");
    std::fs::write(&verdicts, br#"{"schema": "gpubench.verdicts/1"}"#).unwrap();
    let o = run(dir.path(), &["history", "import", "--db", "new.db", verdicts.to_str().unwrap()]);
    assert_exit(&o, 5);
    assert_one_error_line(&o, "expected `gpubench.results/1`");
    assert!(!dir.path().join("new.db").exists());

    // A folder without results documents is a usage error.
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    let o = run(dir.path(), &["history", "import", "--db", "new.db", "empty"]);
    assert_exit(&o, 2);
    assert_one_error_line(&o, "no results documents");
}

#[test]
fn a_run_with_a_bad_history_database_fails_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("junk.db"), b"not an sqlite database, just text that is long enough").unwrap();
    let o = run(dir.path(), &["--history", "junk.db", "--no-baseline"]);
    assert_exit(&o, 5);
    assert_one_error_line(&o, "junk.db");
}
