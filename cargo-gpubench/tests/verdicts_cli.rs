//! The command line end to end on recorded H200 results: compare, report formats, baselines,
//! exit codes and bad inputs. No GPU needed.

use std::path::Path;
use std::process::{Command, Output};

mod common;

use common::{BIN, assert_exit, assert_one_error_line, fixture, regressed_copy, run, stderr, stdout, two_run_baseline};

#[test]
fn identical_runs_compare_clean() {
    let dir = tempfile::tempdir().unwrap();
    let f = fixture("h200-quick-run.json");
    let o = run(dir.path(), &["compare", f.to_str().unwrap(), f.to_str().unwrap()]);
    assert_exit(&o, 0);
    // One run against one run of the card: nothing moved, and nothing could be stated.
    assert!(stdout(&o).contains("\ndetects:  not judged: 42;"), "{}", stdout(&o));
    let b = two_run_baseline(dir.path());
    let o = run(dir.path(), &["compare", b.to_str().unwrap(), f.to_str().unwrap()]);
    assert_exit(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("stack:    same stack: driver 580.159.04, CUDA 13.0, NVRTC 13.0"), "{out}");
    assert!(out.contains("\nverdicts: 0 REGRESSED, 0 IMPROVED, 0 INCONCLUSIVE, 42 PASS of 42\n"), "{out}");
    assert!(out.ends_with("\n") && out.contains("\ndetects:  judged to "), "{out}");
}

#[test]
fn a_regression_exits_1_and_writes_every_report() {
    let dir = tempfile::tempdir().unwrap();
    let new = regressed_copy(dir.path());
    let old = two_run_baseline(dir.path());
    let o = run(
        dir.path(),
        &[
            "compare",
            old.to_str().unwrap(),
            new.to_str().unwrap(),
            "--markdown",
            "out/summary.md",
            "--junit",
            "out/junit.xml",
            "--verdicts-json",
            "out/verdicts.json",
        ],
    );
    assert_exit(&o, 1);
    let out = stdout(&o);
    let row = out.lines().find(|l| l.contains("stream/triad")).expect("a row for stream/triad");
    assert!(row.contains("REGRESSED") && row.contains("-5.01%"), "{row}");
    assert!(out.contains("\nverdicts: 1 REGRESSED, 0 IMPROVED, 0 INCONCLUSIVE, 41 PASS of 42\n"), "{out}");
    let md = std::fs::read_to_string(dir.path().join("out/summary.md")).unwrap();
    assert!(md.starts_with("## gpubench: REGRESSED"));
    let xml = std::fs::read_to_string(dir.path().join("out/junit.xml")).unwrap();
    assert_eq!(xml.matches("<testcase ").count(), 42);
    assert_eq!(xml.matches("<failure ").count(), 1);
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/verdicts.json")).unwrap()).unwrap();
    assert_eq!(json["counts"]["regressed"], 1);
    assert!(stderr(&o).contains("wrote out/junit.xml"));
    // The HTML page lands next to the JSON.
    let page = std::fs::read_to_string(dir.path().join("out/verdicts.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("<table id=\"verdicts\">"));
    assert!(page.contains("<tr class=\"regressed\"><td>REGRESSED</td><td>stream/triad</td>"), "{page}");
    assert!(stderr(&o).contains("wrote out/verdicts.html"));
}

#[test]
fn json_on_stdout_keeps_the_table_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let new = regressed_copy(dir.path());
    let old = two_run_baseline(dir.path());
    let o = run(dir.path(), &["compare", "--json", old.to_str().unwrap(), new.to_str().unwrap()]);
    assert_exit(&o, 1);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is one JSON document");
    assert_eq!(v["schema"], "gpubench.comparison/1");
    let triad = v["metrics"].as_array().unwrap().iter().find(|m| m["benchmark"] == "stream/triad").unwrap();
    assert_eq!(triad["verdict"], "REGRESSED");
    assert!(stderr(&o).contains("verdicts: 1 REGRESSED"));
}

#[test]
fn profiles_that_differ_are_inconclusive_not_regressed() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = (fixture("h200-default-run.json"), fixture("h200-quick-run.json"));
    let o = run(dir.path(), &["compare", old.to_str().unwrap(), new.to_str().unwrap()]);
    assert_exit(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("warning:  different profiles: baseline default, new quick"), "{out}");
    assert!(out.contains("0 REGRESSED"), "{out}");
}

#[test]
fn bad_files_are_one_line_errors_with_exit_code_5() {
    let dir = tempfile::tempdir().unwrap();
    let good = fixture("h200-quick-run.json");
    let bytes = std::fs::read(&good).unwrap();
    std::fs::write(dir.path().join("truncated.json"), &bytes[..bytes.len() / 3]).unwrap();
    std::fs::write(dir.path().join("corrupt.json"), b"{\"schema\": \"gpubench.results/1\",, }").unwrap();
    std::fs::write(dir.path().join("foreign.json"), b"{\"schema\": \"nvbench/2\"}").unwrap();
    std::fs::write(dir.path().join("binary.json"), [0xff, 0xfe, 0x00, 0x01]).unwrap();
    let cases = [
        ("truncated.json", "truncated.json: truncated JSON"),
        ("corrupt.json", "corrupt.json: not valid JSON"),
        ("foreign.json", "schema is `nvbench/2`, expected `gpubench.results/1` or `gpubench.baseline/1`"),
        ("binary.json", "binary.json: not valid JSON"),
        ("missing.json", "missing.json: No such file or directory"),
    ];
    for (file, needle) in cases {
        let o = run(dir.path(), &["compare", good.to_str().unwrap(), file]);
        assert_exit(&o, 5);
        assert_one_error_line(&o, needle);
        let o = run(dir.path(), &["compare", file, good.to_str().unwrap()]);
        assert_exit(&o, 5);
    }
}

#[test]
fn bad_flags_and_configuration_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let f = fixture("h200-quick-run.json");
    let f = f.to_str().unwrap();
    assert_exit(&run(dir.path(), &["compare", f]), 2);
    assert_exit(&run(dir.path(), &["compare", f, f, "--threshold", "3"]), 2);
    std::fs::write(dir.path().join("gpubench.toml"), "[verdict]\nthreshold = 3\n").unwrap();
    let o = run(dir.path(), &["compare", f, f]);
    assert_exit(&o, 2);
    assert_one_error_line(&o, "gpubench.toml: threshold = 3 is outside [0, 0.5)");
    std::fs::write(dir.path().join("other.toml"), "[verdict]\nthreshold = 0.02\nbogus = 1\n").unwrap();
    let o = run(dir.path(), &["compare", f, f, "--config", "other.toml"]);
    assert_exit(&o, 2);
    assert_one_error_line(&o, "other.toml: line 3: unknown field `bogus`");
    // A bad baseline name is refused before any GPU is looked for.
    let o = run(dir.path(), &["--save-baseline", "../escape", "--no-wait"]);
    assert_exit(&o, 2);
    assert_one_error_line(&o, "bad baseline name `../escape`");
}

#[test]
fn the_workspace_configuration_sets_the_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let new = regressed_copy(dir.path());
    let old = fixture("h200-quick-run.json");
    std::fs::write(
        dir.path().join("gpubench.toml"),
        "[[verdict.metric]]\nmatch = \"^stream/triad:\"\nthreshold = 0.08\n",
    )
    .unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let o = run(&sub, &["compare", old.to_str().unwrap(), new.to_str().unwrap(), "--all"]);
    assert_exit(&o, 0);
    let row = stdout(&o).lines().find(|l| l.contains("stream/triad")).unwrap().to_string();
    assert!(row.contains("PASS") && row.contains("within -7.4%"), "{row}");
}

#[test]
fn baselines_are_saved_listed_shown_and_compared_offline() {
    let dir = tempfile::tempdir().unwrap();
    let run_file = fixture("h200-quick-run.json");
    let r = run_file.to_str().unwrap();
    let o = run(dir.path(), &["baseline", "save", r]);
    assert_exit(&o, 0);
    assert!(stderr(&o).contains("saved the default baseline of nvidia-h200-cc90-132sm-140gib (1 run) to baselines/nvidia-h200-cc90-132sm-140gib/class.json"), "{}", stderr(&o));
    // The same run three times: refused as a duplicate unless forced.
    let o = run(dir.path(), &["baseline", "save", r, r, "--name", "r580", "--force"]);
    assert_exit(&o, 0);
    let o = run(dir.path(), &["baseline", "save", r, "--name", "r580", "--append", "--force"]);
    assert_exit(&o, 0);
    assert!(stderr(&o).contains("(3 runs)"), "{}", stderr(&o));

    let o = run(dir.path(), &["baseline", "list"]);
    assert_exit(&o, 0);
    let out = stdout(&o);
    assert!(
        out.contains("nvidia-h200-cc90-132sm-140gib/class.json")
            && out.contains("nvidia-h200-cc90-132sm-140gib/r580.json"),
        "{out}"
    );
    let o = run(dir.path(), &["baseline", "list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);

    let o = run(dir.path(), &["baseline", "show", "r580", "--all"]);
    assert_exit(&o, 0);
    let out = stdout(&o);
    assert!(
        out.contains("runs:      3") && out.contains("stack:     driver 580.159.04, CUDA 13.0, NVRTC 13.0"),
        "{out}"
    );
    assert!(out.contains("stream/triad") && !out.contains("learned:"), "one card, one board: {out}");
    let o = run(dir.path(), &["baseline", "show", "nope"]);
    assert_exit(&o, 2);
    assert_one_error_line(&o, "no baseline `nope` in baselines");

    // A baseline file on either side of an offline comparison.
    let o = run(dir.path(), &["compare", "baselines/nvidia-h200-cc90-132sm-140gib/r580.json", r]);
    assert_exit(&o, 0);
    assert!(stdout(&o).contains("3 runs, newest at"), "{}", stdout(&o));
    // One run of the card in the class baseline, one new: the change is INCONCLUSIVE, and
    // the warning says how to get a verdict.
    let new = regressed_copy(dir.path());
    let o = run(dir.path(), &["compare", "baselines/nvidia-h200-cc90-132sm-140gib/class.json", new.to_str().unwrap()]);
    assert_exit(&o, 0);
    assert!(stdout(&o).contains("`cargo gpubench --save-baseline --append`"), "{}", stdout(&o));
    let o = run(dir.path(), &["baseline", "save", r, "--append", "--force"]);
    assert_exit(&o, 0);
    let o = run(dir.path(), &["compare", "baselines/nvidia-h200-cc90-132sm-140gib/class.json", new.to_str().unwrap()]);
    assert_exit(&o, 1);
}

#[test]
fn a_broken_baseline_is_reported_and_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let r = fixture("h200-quick-run.json");
    let r = r.to_str().unwrap();
    assert_exit(&run(dir.path(), &["baseline", "save", r]), 0);
    let path = dir.path().join("baselines/nvidia-h200-cc90-132sm-140gib/class.json");
    let good = std::fs::read(&path).unwrap();
    let truncated = &good[..good.len() - 200];
    std::fs::write(&path, truncated).unwrap();
    for args in [vec!["baseline", "save", r], vec!["baseline", "save", r, "--append"]] {
        let o = run(dir.path(), &args);
        assert_exit(&o, 5);
        assert_one_error_line(&o, "truncated JSON");
        assert!(stderr(&o).contains("the file was left as it is"));
        assert_eq!(std::fs::read(&path).unwrap(), truncated);
    }
    let o = run(dir.path(), &["baseline", "list"]);
    assert_exit(&o, 5);
    assert!(stdout(&o).contains("unreadable"), "{}", stdout(&o));
    let o = run(dir.path(), &["compare", "baselines/nvidia-h200-cc90-132sm-140gib/class.json", r]);
    assert_exit(&o, 5);
    // A baseline from another schema version.
    let foreign = String::from_utf8(good).unwrap().replacen("gpubench.baseline/1", "gpubench.baseline/2", 1);
    std::fs::write(&path, &foreign).unwrap();
    let o = run(dir.path(), &["baseline", "save", r]);
    assert_exit(&o, 5);
    assert_one_error_line(&o, "schema is `gpubench.baseline/2`, expected `gpubench.baseline/1`");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), foreign);
    // An incompatible append is a usage error and changes nothing.
    std::fs::remove_file(&path).unwrap();
    assert_exit(&run(dir.path(), &["baseline", "save", r]), 0);
    let before = std::fs::read(&path).unwrap();
    let d = fixture("h200-default-run.json");
    let o = run(dir.path(), &["baseline", "save", d.to_str().unwrap(), "--append"]);
    assert_exit(&o, 2);
    assert_one_error_line(&o, "cannot add the run to");
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

/// A new H100 card (`tests/corpus/.../runs-GPU-24386ad7.tar.xz`, not in the baseline) against
/// the committed H100 class baseline: the atomics family as a whole PASS, exit 0; the same run
/// 5 % slower everywhere: the family REGRESSED, and every atomic that moved beyond the minimum
/// effect REGRESSED, alone or carried by the family; exit 1.
#[test]
fn a_class_comparison_judges_the_atomics_family_as_a_whole() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let class = "nvidia-h100-80gb-hbm3-cc90-132sm-79gib";
    let baseline = root.join("baselines").join(format!("{class}/class.json.xz"));
    let archive = root.join("tests/corpus").join(class).join("runs-GPU-24386ad7.tar.xz");
    let (_, run) = gpubench::verdict::corpus::gather(&[archive]).unwrap().runs.into_iter().next().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (same, slower) = (dir.path().join("run.json"), dir.path().join("slower.json"));
    std::fs::write(&same, serde_json::to_vec(&run).unwrap()).unwrap();
    let shifted = gpubench::verdict::calibrate::shifted(&run, 0.05);
    std::fs::write(&slower, serde_json::to_vec(&shifted).unwrap()).unwrap();

    let o = run_in(dir.path(), &["compare", baseline.to_str().unwrap(), same.to_str().unwrap()]);
    assert_exit(&o, 0);
    assert!(stdout(&o).contains("family:   PASS atomics as a whole"), "{}", stdout(&o));

    let o = run_in(dir.path(), &["compare", "--json", baseline.to_str().unwrap(), slower.to_str().unwrap()]);
    assert_exit(&o, 1);
    let c: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let family = &c["families"].as_array().unwrap()[0];
    assert_eq!((family["family"].as_str(), family["verdict"].as_str()), (Some("atomics"), Some("REGRESSED")));
    let atomics: Vec<&serde_json::Value> =
        c["metrics"].as_array().unwrap().iter().filter(|m| m["family"] == "atomics").collect();
    for m in &atomics {
        assert_eq!(m["verdict"], "REGRESSED", "{}: {}", m["metric"], m["reason"]);
    }
    assert!(atomics.len() > 20);
}

/// `cargo gpubench SUBCOMMAND --config <the workspace's gpubench.toml> ARGS` in `dir`.
fn run_in(dir: &Path, args: &[&str]) -> Output {
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../gpubench.toml");
    Command::new(BIN)
        .arg("gpubench")
        .args(&args[..1])
        .arg("--config")
        .arg(config)
        .args(&args[1..])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// A comparison needs the baseline file and nothing else: `compare --json` prints the same
/// bytes from the repository (its gpubench.toml states the defaults) and from a folder with no
/// configuration, for a same-card and a class comparison.
#[test]
fn the_same_baseline_gives_the_same_verdicts_from_any_folder() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().unwrap();
    let baseline = repo.join("baselines/nvidia-h100-80gb-hbm3-cc90-132sm-79gib/class.json.xz");
    let elsewhere = tempfile::tempdir().unwrap();
    // A run of a card of the baseline (same card) and one of a card it does not hold (class).
    let same = elsewhere.path().join("same.json");
    let runs: serde_json::Value =
        serde_json::from_slice(&gpubench::results::read_document(&baseline).unwrap()).unwrap();
    std::fs::write(&same, serde_json::to_vec(&runs["runs"][0]).unwrap()).unwrap();
    let other = common::recorded_h100_default(elsewhere.path(), "other.json");
    for new in [&same, &other] {
        let args = ["compare", baseline.to_str().unwrap(), new.to_str().unwrap(), "--json"];
        let (here, there) = (run(&repo, &args), run(elsewhere.path(), &args));
        assert_eq!(here.status.code(), there.status.code());
        assert!(!stdout(&here).is_empty(), "{}", stderr(&here));
        assert!(stdout(&here) == stdout(&there), "verdict JSON differs between folders for {}", new.display());
    }
}

/// `baseline save --cards N` keeps the runs of the N cards that span the others: of four cards,
/// one whose `stream/triad` sits 5 % below the rest is among the two kept.
#[test]
fn baseline_save_keeps_the_cards_that_span_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let lower = regressed_copy(dir.path());
    let mut files = Vec::new();
    for (i, source) in
        [fixture("h200-quick-run.json"), fixture("h200-quick-run.json"), lower.clone(), fixture("h200-quick-run.json")]
            .iter()
            .enumerate()
    {
        let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(source).unwrap()).unwrap();
        v["gpu"]["uuid"] = serde_json::json!(format!("GPU-0000000{i}-card"));
        v["created_unix_s"] = serde_json::json!(v["created_unix_s"].as_u64().unwrap() + i as u64);
        let path = dir.path().join(format!("card{i}.json"));
        std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
        files.push(path.to_str().unwrap().to_string());
    }
    let mut args = vec!["baseline", "save", "--cards", "2", "--force"];
    args.extend(files.iter().map(String::as_str));
    let o = run(dir.path(), &args);
    assert_exit(&o, 0);
    let err = stderr(&o);
    assert!(err.contains("kept the runs of 2 of 4 cards") && err.contains("GPU-00000002-card"), "{err}");
    assert!(err.contains("(2 runs)"), "{err}");
    // The file keeps the runs of two cards and the spreads learned from all four.
    let saved =
        walk(dir.path()).into_iter().find(|p| p.to_string_lossy().contains("class.json")).expect("a class baseline");
    let b: serde_json::Value = serde_json::from_slice(&gpubench::results::read_document(&saved).unwrap()).unwrap();
    assert_eq!(b["runs"].as_array().unwrap().len(), 2);
    assert_eq!((b["noise"]["runs"].as_u64(), b["noise"]["cards"].as_u64()), (Some(4), Some(4)));
    let o = run(dir.path(), &["baseline", "save", "--cards", "0", files[0].as_str()]);
    assert_exit(&o, 2);
    let o = run(dir.path(), &["baseline", "save", "--cards", "2", "--append", files[0].as_str()]);
    assert_exit(&o, 2);
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
    }
    out
}
