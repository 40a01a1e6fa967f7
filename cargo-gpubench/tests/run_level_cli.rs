//! The command line on the run-level verdict rule: `calibrate`, `--fail-on`, and the refusal of
//! another card or GPU class (exit code 10). Recorded H200 results, no GPU.

use std::path::{Path, PathBuf};
use std::process::Output;

mod common;

use common::{fixture, run};

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// The quick fixture edited by `edit`, written to `dir/name`.
fn edited(dir: &Path, name: &str, edit: impl Fn(&mut serde_json::Value)) -> PathBuf {
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("h200-quick-run.json")).unwrap()).unwrap();
    edit(&mut v);
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    path
}

#[test]
fn fail_on_not_measured_turns_a_missing_family_into_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let old = fixture("h200-quick-run.json");
    let new = edited(dir.path(), "new.json", |v| {
        v["benchmarks"].as_array_mut().unwrap().retain(|b| b["family"] != "atomics");
    });
    let (old, new) = (old.to_str().unwrap(), new.to_str().unwrap());
    let o = run(dir.path(), &["compare", old, new]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("NOT MEASURED"), "{}", text(&o));
    let o = run(dir.path(), &["compare", old, new, "--fail-on", "not-measured"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let o = run(dir.path(), &["compare", old, new, "--fail-on", "sometimes"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn another_class_is_refused_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let old = fixture("h200-quick-run.json");
    let new = edited(dir.path(), "h100.json", |v| v["gpu"]["sm_count"] = 114.into());
    let (old, new) = (old.to_str().unwrap(), new.to_str().unwrap());
    let o = run(dir.path(), &["compare", old, new]);
    assert_eq!(o.status.code(), Some(gpubench::error::exit::MISMATCH), "{}", text(&o));
    assert!(text(&o).contains("--allow-other-class") && !text(&o).contains("panicked"), "{}", text(&o));
    let o = run(dir.path(), &["compare", old, new, "--allow-other-class"]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", text(&o));
}

#[test]
fn calibrate_reports_false_alarms_and_power() {
    let dir = tempfile::tempdir().unwrap();
    // Three runs of one card (the recording, slightly moved) and a file that holds no runs.
    for (i, f) in [1.0, 1.002, 0.999].iter().enumerate() {
        edited(dir.path(), &format!("r{i}.json"), |v| {
            for b in v["benchmarks"].as_array_mut().unwrap() {
                for m in b["metrics"].as_array_mut().unwrap() {
                    for s in m["samples"].as_array_mut().unwrap() {
                        *s = (s.as_f64().unwrap() * f).into();
                    }
                }
            }
        });
    }
    std::fs::write(dir.path().join("notes.json"), r#"{"schema":"something/1"}"#).unwrap();
    let o = run(dir.path(), &["calibrate", ".", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["schema"], "gpubench.calibration/1");
    assert_eq!(v["same_card"]["comparisons"], 3);
    assert_eq!(v["same_card"]["aa"]["regressed"], 0);
    assert!(v["class"].is_null(), "one card: no leave-one-card-out");
    assert!(String::from_utf8_lossy(&o.stderr).contains("notes.json"));
    let o = run(dir.path(), &["calibrate", "missing-folder"]);
    assert_eq!(o.status.code(), Some(5), "{}", text(&o));
}
