//! The per-GPU lock: a second run on the same GPU waits for the first, or refuses with
//! `--no-wait` (exit code 6); other GPUs are not affected.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use gpubench::error::{Error, exit};
use gpubench::runner::lock::{GpuLock, WaitPolicy};

const UUID: &str = "GPU-0ecb8783-d484-6f3f-bb0a-c1c9301d183d";

#[test]
fn a_second_run_refuses_with_no_wait() {
    let dir = tempfile::tempdir().unwrap();
    let first = GpuLock::acquire(dir.path(), UUID, WaitPolicy::NoWait, &mut |_| panic!("nobody holds it")).unwrap();
    let err = GpuLock::acquire(dir.path(), UUID, WaitPolicy::NoWait, &mut |_| {}).unwrap_err();
    assert!(matches!(err, Error::Busy { .. }), "{err}");
    assert_eq!(err.exit_code(), exit::BUSY);
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!("GPU {UUID} is in use by another gpubench run (pid {}", std::process::id())),
        "{msg}"
    );
    assert!(msg.ends_with("rerun without --no-wait to wait for it"), "{msg}");
    // Another GPU is free.
    GpuLock::acquire(dir.path(), "GPU-11111111-2222", WaitPolicy::NoWait, &mut |_| {}).unwrap();
    drop(first);
    GpuLock::acquire(dir.path(), UUID, WaitPolicy::NoWait, &mut |_| {}).unwrap();
}

#[test]
fn a_second_run_waits_for_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let first = GpuLock::acquire(dir.path(), UUID, WaitPolicy::Wait, &mut |_| {}).unwrap();
    let (tx, rx) = mpsc::channel();
    let path = dir.path().to_path_buf();
    let second = std::thread::spawn(move || {
        let t = Instant::now();
        let mut told = Vec::new();
        let lock = GpuLock::acquire(&path, UUID, WaitPolicy::Wait, &mut |holder| {
            told.push(holder.to_string());
            tx.send(()).unwrap();
        })
        .unwrap();
        (t.elapsed(), told, lock.path().to_path_buf())
    });
    // The second run announces that it waits, and keeps waiting while the first holds on.
    rx.recv_timeout(Duration::from_secs(5)).expect("the second run says it waits");
    std::thread::sleep(Duration::from_millis(700));
    assert!(!second.is_finished());
    drop(first);
    let (waited, told, path) = second.join().unwrap();
    assert!(waited >= Duration::from_millis(700), "{waited:?}");
    assert_eq!(told.len(), 1);
    assert!(told[0].starts_with(&format!("pid {}", std::process::id())), "{told:?}");
    assert_eq!(path, dir.path().join(format!("{UUID}.lock")));
}
