//! Faults seen from the command line: libraries that load but lack a symbol, input files that
//! are not regular files. One error line and a documented exit code, never a panic or a hang.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

mod common;

use common::{BIN, stderr};

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

/// A stub libcuda exporting `driver` and a stub libnvrtc exporting every NVRTC entry point
/// gpubench checks, in `dir`: each returns success, and those that report something report
/// one GPU (compute capability 9.0) on a CUDA 12.8 driver. False without a C compiler.
fn stub_driver(dir: &Path, driver: &[&str]) -> bool {
    let special = |name: &str| -> Option<&'static str> {
        Some(match name {
            "cuDriverGetVersion" => "int cuDriverGetVersion(int *v) { *v = 12080; return 0; }",
            "cuDeviceGetCount" => "int cuDeviceGetCount(int *n) { *n = 1; return 0; }",
            "cuDeviceGet" => "int cuDeviceGet(int *d, int o) { *d = 0; return 0; }",
            "cuDeviceGetAttribute" => {
                "int cuDeviceGetAttribute(int *v, int a, int d) { *v = (a == 75) ? 9 : 1; return 0; }"
            }
            "cuDeviceGetName" => {
                "int cuDeviceGetName(char *s, int n, int d) { strncpy(s, \"Stub GPU\", n); return 0; }"
            }
            "cuDeviceGetUuid" => "int cuDeviceGetUuid(char *u, int d) { memset(u, 0x11, 16); return 0; }",
            "cuDeviceGetUuid_v2" => "int cuDeviceGetUuid_v2(char *u, int d) { memset(u, 0x11, 16); return 0; }",
            "cuDeviceTotalMem_v2" => "int cuDeviceTotalMem_v2(size_t *b, int d) { *b = 1ul << 30; return 0; }",
            "cuDevicePrimaryCtxRetain" => {
                "int cuDevicePrimaryCtxRetain(void **c, int d) { *c = (void *)0x1000; return 0; }"
            }
            "cuCtxGetCurrent" => "int cuCtxGetCurrent(void **c) { *c = (void *)0x1000; return 0; }",
            "cuStreamCreate" => "int cuStreamCreate(void **s, unsigned f) { *s = (void *)0x2000; return 0; }",
            "cuEventCreate" => "int cuEventCreate(void **e, unsigned f) { *e = (void *)0x3000; return 0; }",
            "cuGetErrorName" => "int cuGetErrorName(int e, const char **s) { *s = \"CUDA_ERROR_STUB\"; return 0; }",
            "nvrtcVersion" => "int nvrtcVersion(int *a, int *b) { *a = 12; *b = 8; return 0; }",
            _ => return None,
        })
    };
    let source = |names: &[&str]| -> String {
        let mut c = String::from("#include <string.h>\n#include <stddef.h>\n");
        for n in names {
            match special(n) {
                Some(body) => c.push_str(body),
                None => c.push_str(&format!("int {n}(void) {{ return 0; }}")),
            }
            c.push('\n');
        }
        c
    };
    let build = |name: &str, names: &[&str]| {
        let src = dir.join(format!("{name}.c"));
        std::fs::write(&src, source(names)).unwrap();
        Command::new("cc").args(["-shared", "-fPIC", "-w", "-o"]).arg(dir.join(name)).arg(&src).status()
    };
    if !build("libcuda.so.1", driver).is_ok_and(|s| s.success()) {
        return false;
    }
    let nvrtc = gpubench::device::NVRTC_SYMBOLS;
    assert!(build("libnvrtc.so.13", nvrtc).is_ok_and(|s| s.success()));
    std::fs::copy(dir.join("libnvrtc.so.13"), dir.join("libnvrtc.so.12")).unwrap();
    true
}

fn run_on_stub(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("gpubench")
        .args(args)
        .env("LD_LIBRARY_PATH", dir)
        .env("GPUBENCH_LOCK_DIR", dir.join("locks"))
        .current_dir(dir)
        .output()
        .unwrap()
}

#[test]
fn a_driver_lacking_a_symbol_of_clean_up_is_error_3_not_an_abort() {
    // cuCtxGetCurrent is called when a context is made current and again when it is released:
    // missing, the first call panics and the clean-up of the unwind panics again (an abort,
    // exit 134) unless the start-up check names it.
    for missing in ["cuCtxGetCurrent", "cuDevicePrimaryCtxRelease_v2", "cuStreamDestroy_v2", "cuEventDestroy_v2"] {
        let dir = tempfile::tempdir().unwrap();
        let exported: Vec<&str> = gpubench::device::DRIVER_SYMBOLS.iter().copied().filter(|s| *s != missing).collect();
        if !stub_driver(dir.path(), &exported) {
            println!("skipping: no C compiler to build a stub library");
            return;
        }
        let o = run_on_stub(dir.path(), &["info"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(3), "{missing}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("error: no usable CUDA driver: libcuda.so.1 loads but lacks {missing}")),
            "{err}"
        );
    }
}

#[test]
fn a_driver_with_exactly_the_checked_symbols_is_never_found_lacking_one() {
    // Every entry point the run's start, `info` and their clean-up call is in the start-up
    // list: a library exporting exactly that list is never found lacking one later.
    let dir = tempfile::tempdir().unwrap();
    if !stub_driver(dir.path(), gpubench::device::DRIVER_SYMBOLS) {
        println!("skipping: no C compiler to build a stub library");
        return;
    }
    for args in [&["info"][..], &["info", "--json"], &["devices"]] {
        let o = run_on_stub(dir.path(), args);
        let err = stderr(&o);
        assert!(!err.contains("lacks") && !err.contains("panicked"), "{args:?}: {err}");
        assert!(matches!(o.status.code(), Some(0..=10)), "{args:?}: {:?} {err}", o.status);
    }
}
