//! `cargo gpubench dissect --from DIR` on a saved (simulated) run: tables, JSON, files, errors.

use std::process::Command;

use gpubench::dissect::plan::{self, Options};
use gpubench::dissect::sim::{SimConfig, SimGpu};
use gpubench::dissect::{analyze, write_folder};

fn cli() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cargo-gpubench"))
}

#[test]
fn dissect_from_a_saved_folder() {
    let mut gpu = SimGpu::new(SimConfig::small("cli"));
    let sweeps = plan::run(&mut gpu, Options::QUICK, 0, None, &mut |_| {}).unwrap();
    let src = tempfile::tempdir().unwrap();
    write_folder(src.path(), &sweeps, &analyze(&sweeps), true).unwrap();
    let out = tempfile::tempdir().unwrap();
    let r =
        cli().args(["gpubench", "dissect", "--from"]).arg(src.path()).arg("--out").arg(out.path()).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(text.contains("L1 (ld.ca)") && text.contains("smem.banks"), "{text}");
    for f in ["dissect.json", "results.json", "report.txt", "plots/size_ca.svg"] {
        assert!(out.path().join(f).is_file(), "{f} missing");
    }
    assert!(!out.path().join("sweeps.json").exists(), "an offline run does not copy the sweeps");
    let r = cli().args(["dissect", "--json", "--from"]).arg(src.path()).arg("--out").arg(out.path()).output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(doc["schema"], "gpubench.dissect/1");
    assert!(doc["dissection"]["facts"].as_array().unwrap().len() > 20);
}

#[test]
fn dissect_from_a_folder_without_sweeps_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let r = cli().args(["dissect", "--from"]).arg(dir.path()).output().unwrap();
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("no sweeps.json") && err.lines().count() == 1, "{err}");
}

/// Two H100 cards measured with the L2 and DRAM latencies taken over every SM: the second
/// card's recorded sweeps, re-inferred offline, against a baseline of the first card's three
/// runs give no REGRESSED and no INCONCLUSIVE verdict (the single-SM latencies of earlier runs
/// differed by up to 7.6 % between cards).
#[test]
fn a_second_h100_against_the_first_cards_dissect_runs() {
    let root =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/recorded/h100-dissect-every-sm");
    let bl = tempfile::tempdir().unwrap();
    let mut save = cli();
    save.args(["gpubench", "baseline", "save", "--name", "first", "--baseline-dir"]).arg(bl.path());
    for i in 1..=3 {
        save.arg(root.join(format!("GPU-3574496b/run{i}/results.json")));
    }
    let r = save.output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let out = tempfile::tempdir().unwrap();
    let r = cli()
        .args(["gpubench", "dissect", "--from"])
        .arg(root.join("GPU-78464d6d/run1"))
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let report = String::from_utf8_lossy(&r.stdout);
    assert!(report.contains("(132 SMs: "), "latencies over every SM: {report}");
    let baseline = bl.path().join("nvidia-h100-80gb-hbm3-cc90-132sm-79gib/first.json");
    let r = cli()
        .args(["gpubench", "compare", "--fail-on", "inconclusive"])
        .arg(&baseline)
        .arg(out.path().join("results.json"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&r.stdout);
    assert_eq!(r.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&r.stderr));
    assert!(text.contains("0 REGRESSED, 0 IMPROVED, 0 INCONCLUSIVE"), "{text}");
}
