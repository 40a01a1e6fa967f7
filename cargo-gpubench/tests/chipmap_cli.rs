//! `cargo gpubench chipmap` end to end on a recorded H100 run (latency from every SM, with GPC
//! groups), and on the same run with one SM planted 30 % slower.

use std::path::{Path, PathBuf};
use std::process::Output;

mod common;

use common::run;

/// The committed H100 default run, unpacked into `dir`.
fn recorded_in(dir: &Path) -> PathBuf {
    common::recorded_h100_default(dir, "default.json")
}

fn json(o: &Output) -> serde_json::Value {
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("chipmap --json prints JSON")
}

#[test]
fn a_recorded_h100_run_gives_its_per_sm_spread_and_groups() {
    let dir = tempfile::tempdir().unwrap();
    let file = recorded_in(dir.path());
    let out = dir.path().join("maps");
    let o = run(
        dir.path(),
        &[
            "chipmap",
            file.to_str().unwrap(),
            "--benchmark",
            "^latency/cg/4MiB$",
            "--json",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let rows = json(&o);
    let cycles = rows.as_array().unwrap().iter().find(|r| r["metric"] == "cycles_per_access").expect("the L2 map");
    let spread = &cycles["spread"];
    assert_eq!(spread["n"], 132);
    let (min, median, max) =
        (spread["min"].as_f64().unwrap(), spread["median"].as_f64().unwrap(), spread["max"].as_f64().unwrap());
    // an L2 hit from every SM of an H100: 275-307 cycles, median about 286
    assert!(min > 250.0 && max < 330.0 && (min..max).contains(&median), "{spread}");
    assert_eq!(cycles["groups"], 12, "the cluster probe's groups are kept in the results");
    assert!(cycles["outliers"].as_array().unwrap().is_empty(), "{}", cycles["outliers"]);
    let svg = std::fs::read_to_string(out.join("latency_cg_4MiB.svg")).unwrap();
    assert!(svg.contains("grouped by GPC"));
}

#[test]
fn an_sm_planted_30_percent_slower_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(recorded_in(dir.path())).unwrap()).unwrap();
    let b = v["benchmarks"].as_array_mut().unwrap().iter_mut().find(|b| b["id"] == "latency/cg/4MiB").unwrap();
    let map = b["sm_maps"].as_array_mut().unwrap().iter_mut().find(|m| m["metric"] == "cycles_per_access").unwrap();
    let i = map["sm"].as_array().unwrap().iter().position(|s| s == 77).unwrap();
    let slow = map["values"][i].as_f64().unwrap() * 1.3;
    map["values"][i] = slow.into();
    let path = dir.path().join("planted.json");
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    let o = run(dir.path(), &["chipmap", path.to_str().unwrap(), "--benchmark", "^latency/cg/4MiB$", "--json"]);
    let rows = json(&o);
    let cycles = rows.as_array().unwrap().iter().find(|r| r["metric"] == "cycles_per_access").unwrap();
    let named: Vec<u64> = cycles["outliers"].as_array().unwrap().iter().map(|o| o["sm"].as_u64().unwrap()).collect();
    assert_eq!(named, vec![77]);
}

#[test]
fn a_results_file_without_maps_is_a_one_line_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let quick = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/h200-quick-run.json");
    let o = run(dir.path(), &["chipmap", quick.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no per-SM maps") && err.lines().count() == 1, "{err}");
}
