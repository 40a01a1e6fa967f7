//! The command line end to end, on machines without a GPU and on recorded results.

use std::process::{Command, Output};

mod common;

use common::{fixture, stderr};

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-gpubench")).args(args).output().expect("the CLI starts")
}

fn has_gpu_driver() -> bool {
    ["/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1"]
        .iter()
        .any(|p| std::path::Path::new(p).exists())
}

#[test]
fn without_a_gpu_the_run_fails_with_one_line_and_code_3() {
    if has_gpu_driver() {
        println!("skipping: this machine has a CUDA driver");
        return;
    }
    for args in [&["gpubench"][..], &["gpubench", "--quick"], &[], &["info"], &["ramp"], &["load"]] {
        let o = cli(args);
        assert_eq!(o.status.code(), Some(3), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("error: no CUDA driver: libcuda.so.1"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn report_prints_the_summary_of_recorded_results() {
    let o = cli(&["gpubench", "report", fixture("h200-default-run.json").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("latency/cg/256MiB"), "{out}");
    assert!(out.contains("NVIDIA H200 (132 SMs, cc 9.0), driver 580.159.04"), "{out}");
    let json = cli(&["report", "--json", fixture("h200-quick-run.json").to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["schema"], "gpubench.results/1");
}

#[test]
fn a_corrupt_results_file_is_code_5_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.json");
    std::fs::write(&path, "{\"schema\": \"gpubench.results/1\", \"gpu\":").unwrap();
    let o = cli(&["report", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(5));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("broken.json: truncated JSON"), "{err}");
}

#[test]
fn usage_errors_are_code_2() {
    assert_eq!(cli(&["--no-such-flag"]).status.code(), Some(2));
    assert_eq!(cli(&["--quick", "--full"]).status.code(), Some(2));
    let o = cli(&["gpubench", "--quick", "("]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("bad filter `(`"), "{}", stderr(&o));
}

#[test]
fn help_documents_the_exit_codes() {
    let o = cli(&["gpubench", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("Exit codes:") && out.contains("3  environment"), "{out}");
}

#[test]
fn kernels_compile_offline_or_explain_why_not() {
    let dir = tempfile::tempdir().unwrap();
    let o = cli(&["kernels", "--arch", "sm_90", "--out", dir.path().to_str().unwrap()]);
    match o.status.code() {
        Some(0) => {
            let out = String::from_utf8_lossy(&o.stdout);
            assert!(out.contains("latency.cu") && out.contains("sm_90"), "{out}");
            assert!(dir.path().join("stream.cubin").is_file());
            assert!(std::fs::read_to_string(dir.path().join("stream.ptx")).unwrap().contains(".entry stream_triad"));
        }
        Some(3) => {
            println!("skipping the compile check: {}", stderr(&o).trim());
            assert!(stderr(&o).starts_with("error: no NVRTC"), "{}", stderr(&o));
        }
        other => panic!("unexpected exit {other:?}: {}", stderr(&o)),
    }
    assert_eq!(cli(&["kernels", "--arch", "compute_90"]).status.code(), Some(2));
}
