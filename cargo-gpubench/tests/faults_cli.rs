//! Faults seen from the command line: libraries that load but lack a symbol, input files that
//! are not regular files. One error line and a documented exit code, never a panic or a hang.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_cargo-gpubench");

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Builds a shared library exporting only `cuInit` as `names` in `dir`; false without a C compiler.
fn stub_libraries(dir: &Path, names: &[&str]) -> bool {
    let src = dir.join("stub.c");
    std::fs::write(&src, "int cuInit(unsigned flags) { return 0; }\n").unwrap();
    let first = dir.join(names[0]);
    let built = Command::new("cc").arg("-shared").arg("-fPIC").arg("-o").arg(&first).arg(&src).status();
    if !built.is_ok_and(|s| s.success()) {
        return false;
    }
    for n in &names[1..] {
        std::fs::copy(&first, dir.join(n)).unwrap();
    }
    true
}

#[test]
fn a_libcuda_or_libnvrtc_lacking_a_symbol_is_environment_error_3() {
    let dir = tempfile::tempdir().unwrap();
    if !stub_libraries(dir.path(), &["libcuda.so.1", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"]) {
        println!("skipping: no C compiler to build a stub library");
        return;
    }
    let run = |args: &[&str]| {
        Command::new(BIN).arg("gpubench").args(args).env("LD_LIBRARY_PATH", dir.path()).output().unwrap()
    };
    let o = run(&["info"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: no usable CUDA driver: libcuda.so.1 loads but lacks cuDriverGetVersion"), "{err}");
    let o = run(&["kernels", "--arch", "sm_90"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: no usable NVRTC: libnvrtc loads but lacks nvrtcVersion"), "{err}");
}

#[test]
fn named_pipes_and_folders_as_input_files_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("in.json");
    if !Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
        println!("skipping the pipe: no mkfifo");
        return;
    }
    let fifo = fifo.to_str().unwrap();
    let folder = dir.path().to_str().unwrap();
    for (args, code, needle) in [
        (vec!["compare", fifo, fifo], 5, "is a named pipe, not a regular file"),
        (vec!["report", fifo], 5, "is a named pipe, not a regular file"),
        (vec!["baseline", "save", fifo], 5, "is a named pipe, not a regular file"),
        (vec!["baseline", "show", fifo], 5, "is a named pipe, not a regular file"),
        (vec!["compare", "--config", fifo, folder, folder], 2, "is a named pipe, not a regular file"),
        (vec!["report", folder], 5, "is a folder, not a regular file"),
    ] {
        let mut child = Command::new(BIN)
            .arg("gpubench")
            .args(&args)
            .current_dir(dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if started.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                panic!("{args:?} hangs");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let o = child.wait_with_output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.lines().count() == 1 && err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn exclusive_is_accepted_and_checked_after_the_gpu_is_found() {
    let has_driver =
        ["/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1"].iter().any(|p| Path::new(p).exists());
    if has_driver {
        println!("skipping: this machine has a CUDA driver");
        return;
    }
    let o = Command::new(BIN).args(["gpubench", "--exclusive", "--quick"]).output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.starts_with("error: no CUDA driver"), "{err}");
    let o = Command::new(BIN).args(["gpubench", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("--exclusive"));
}
