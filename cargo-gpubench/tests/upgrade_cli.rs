//! `cargo gpubench upgrade` end to end without a GPU: its help, one-line errors with their
//! documented codes up to the "no GPU" exit, and `--from` on a job folder of recorded runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gpubench::baseline::RunsFile;
use gpubench::error::exit;
use gpubench::results::{ResultsDocument, Summary};

mod common;

use common::stderr;

fn cli(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-gpubench"))
        .arg("gpubench")
        .args(args)
        .current_dir(dir)
        // Also where a driver exists: no GPU visible.
        .env("CUDA_VISIBLE_DEVICES", "")
        .env_remove("CUDA_HOME")
        .env_remove("CUDA_PATH")
        .output()
        .expect("the CLI starts")
}

fn one_line(o: &Output, code: i32, starts: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with(starts), "{err}");
}

#[test]
fn help_explains_both_forms_nvrtc_and_the_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let o = cli(&["upgrade", "--help"], dir.path());
    assert_eq!(o.status.code(), Some(exit::OK));
    let help = String::from_utf8_lossy(&o.stdout);
    for want in [
        "--a <ARCHIVE>",
        "--b-nvrtc <LIB>",
        "--b-env <KEY=VALUE>",
        "--rounds <N>",
        "--before <NAME>",
        "--save-baseline before --append --per-gpu",
        "LD_LIBRARY_PATH",
        "machine code identical: not a compiler change",
        "11 REGRESSED with identical machine code",
        "12 could not judge",
    ] {
        assert!(help.contains(want), "--help lacks {want}:\n{help}");
    }
}

#[test]
fn missing_inputs_fail_in_one_line_with_their_codes() {
    let dir = tempfile::tempdir().unwrap();
    one_line(
        &cli(&["upgrade", "--a", "old.tar.gz", "--b", "new.tar.gz"], dir.path()),
        exit::DATA,
        "error: old.tar.gz: stack A: no such archive",
    );
    one_line(
        &cli(&["upgrade", "--b-nvrtc", "/nonexistent/libnvrtc.so.12"], dir.path()),
        exit::ENVIRONMENT,
        "error: NVRTC library /nonexistent/libnvrtc.so.12: stack B: no such file",
    );
    // clap's own errors add a hint line.
    let o = cli(&["upgrade", "--b-env", "NOEQUALS"], dir.path());
    assert_eq!(o.status.code(), Some(exit::USAGE));
    assert!(
        stderr(&o)
            .starts_with("error: invalid value 'NOEQUALS' for '--b-env <KEY=VALUE>': `NOEQUALS` is not KEY=VALUE")
    );
    one_line(&cli(&["upgrade", "--rounds", "0"], dir.path()), exit::USAGE, "error: --rounds must be at least 1");
    one_line(&cli(&["upgrade", "--before", "bad name"], dir.path()), exit::USAGE, "error: ");
    one_line(&cli(&["upgrade", "--from", "nowhere"], dir.path()), exit::DATA, "error: nowhere/runs: ");
}

#[test]
fn the_before_step_saves_one_baseline_per_card_on_several_gpus() {
    // `--save-baseline NAME --per-gpu` is accepted with several GPUs (each saves its own card's
    // baseline); without --per-gpu it stays refused. Here it gets as far as finding no GPU.
    let dir = tempfile::tempdir().unwrap();
    let o = cli(&["--device", "all", "--save-baseline", "before", "--per-gpu"], dir.path());
    one_line(&o, exit::ENVIRONMENT, "error: no CUDA");
    let o = cli(&["--device", "all", "--save-baseline", "before"], dir.path());
    one_line(&o, exit::USAGE, "error: --save-baseline saves one GPU's run; for several GPUs, add --per-gpu");
}

/// An unpacked archive: a manifest, a CLI and no benches.
fn archive(dir: &Path, name: &str) -> PathBuf {
    let root = dir.join(name);
    std::fs::create_dir_all(root.join("bin")).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_cargo-gpubench"), root.join("bin/cargo-gpubench")).unwrap();
    std::fs::write(
        root.join("manifest.json"),
        r#"{"schema":"gpubench.archive/1","tool_version":"0.1.0","benches":[],"cli":"bin/cargo-gpubench"}"#,
    )
    .unwrap();
    root
}

#[test]
fn with_archives_and_nvrtc_libraries_in_place_the_job_stops_at_no_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (archive(dir.path(), "a"), archive(dir.path(), "b"));
    let lib = dir.path().join("libnvrtc.so.12");
    std::fs::write(&lib, b"").unwrap();
    let args = ["upgrade", "--a", a.to_str().unwrap(), "--b", b.to_str().unwrap(), "--a-nvrtc", lib.to_str().unwrap()];
    let o = cli(&args, dir.path());
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(exit::ENVIRONMENT), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: no CUDA"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// A job folder: A is two runs of a committed baseline card, B the same runs with the STREAM
/// triad 15 % slower.
fn job_folder(dir: &Path) -> PathBuf {
    let base =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../baselines/nvidia-h100-80gb-hbm3-cc90-132sm-79gib/class.json.xz");
    let runs = RunsFile::read(&base).unwrap().into_runs();
    let uuid = runs[0].gpu.uuid.clone();
    let a: Vec<ResultsDocument> = runs.into_iter().filter(|r| r.gpu.uuid == uuid).collect();
    let card = dir.join("job/runs").join(&uuid);
    std::fs::create_dir_all(&card).unwrap();
    for (i, r) in a.iter().enumerate() {
        r.write(&card.join(format!("a-{}.json", i + 1))).unwrap();
        let mut b = r.clone();
        let m = b.benchmarks.iter_mut().find(|x| x.id == "stream/triad").unwrap().metrics.iter_mut().next().unwrap();
        m.samples.iter_mut().for_each(|v| *v *= 0.85);
        m.summary = Summary::of(&m.samples);
        b.write(&card.join(format!("b-{}.json", i + 1))).unwrap();
    }
    dir.join("job")
}

#[test]
fn from_a_job_folder_judges_and_reports_without_a_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let job = job_folder(dir.path());
    let o = cli(
        &[
            "upgrade",
            "--from",
            job.to_str().unwrap(),
            "--junit",
            "j.xml",
            "--markdown",
            "m.md",
            "--verdicts-json",
            "v.json",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(exit::REGRESSION_SAME_CODE), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("stream/triad"), "{out}");
    assert!(out.contains("machine code identical: not a compiler change"), "{out}");
    assert!(out.ends_with("upgrade: REGRESSED, machine code identical: not a compiler change (exit 11)\n"), "{out}");
    for f in ["j.xml", "m.md", "v.json"] {
        assert!(dir.path().join(f).is_file(), "{f}");
    }
    for f in ["upgrade.json", "upgrade.md", "upgrade-junit.xml"] {
        assert!(job.join(f).is_file(), "{f}");
    }
    assert!(std::fs::read_to_string(dir.path().join("j.xml")).unwrap().contains("REGRESSED_SAME_CODE"));

    let o = cli(&["upgrade", "--from", job.to_str().unwrap(), "--json"], dir.path());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["schema"], "gpubench.upgrade/1");
    assert_eq!(v["outcome"], "regressed_same_code");
    let m = &v["cards"][0]["comparison"]["metrics"][0];
    assert!(m["code"]["line"].is_string(), "{m}");
}

#[test]
fn the_example_workflow_runs_the_job_with_flags_it_has_and_names_its_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let help = String::from_utf8_lossy(&cli(&["upgrade", "--help"], dir.path()).stdout).into_owned();
    let wf =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.github/workflows/gpu-upgrade.yml"))
            .unwrap();
    assert!(wf.contains("/bin/cargo-gpubench upgrade \"${args[@]}\""), "the workflow runs the job");
    let flags: Vec<&str> = wf
        .lines()
        .filter(|l| l.contains("args=(") || l.contains("args+=(") || l.trim_start().starts_with("--"))
        .flat_map(|l| l.split(|c: char| c.is_whitespace() || c == '(' || c == ')'))
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .collect();
    assert!(flags.len() >= 8, "{flags:?}");
    for f in flags {
        assert!(
            help.contains(&format!("{f} ")) || help.contains(&format!("{f}\n")),
            "the workflow passes {f}, which upgrade lacks"
        );
    }
    for code in ["0)", "1)", "11)", "12)"] {
        assert!(wf.contains(code), "the workflow does not tell exit {code} apart");
    }
    assert!(wf.contains("REGRESSED_CODE_CHANGED") && wf.contains("REGRESSED_SAME_CODE") && wf.contains("NOT_JUDGED"));
}
