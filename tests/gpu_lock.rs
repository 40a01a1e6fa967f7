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

#[test]
fn a_lock_file_planted_as_a_link_is_refused_and_its_target_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let victim = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(victim.path(), b"precious").unwrap();
    std::os::unix::fs::symlink(victim.path(), dir.path().join(format!("{UUID}.lock"))).unwrap();
    let err = GpuLock::acquire(dir.path(), UUID, WaitPolicy::NoWait, &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("is a symbolic link; refusing it"), "{err}");
    assert_eq!(err.exit_code(), exit::USAGE);
    assert_eq!(std::fs::read(victim.path()).unwrap(), b"precious");
}

#[test]
fn lock_folders_that_are_links_shared_or_foreign_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    let base = tempfile::tempdir().unwrap();
    // A link to a folder of the user's.
    let real = base.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = base.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let err = GpuLock::acquire(&link, UUID, WaitPolicy::NoWait, &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("is a symbolic link; refusing it"), "{err}");
    // A folder anyone may write to (as /tmp/gpubench-locks was).
    let shared = base.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let err = GpuLock::acquire(&shared, UUID, WaitPolicy::NoWait, &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("is writable by group or others (mode 1777)"), "{err}");
    assert_eq!(err.to_string().lines().count(), 1);
    // Another user's folder (only root can make one here).
    if gpubench::runner::lock::current_uid() == 0 {
        let foreign = base.path().join("foreign");
        std::fs::create_dir(&foreign).unwrap();
        std::fs::set_permissions(&foreign, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&foreign, Some(65534), Some(65534)).unwrap();
        let err = GpuLock::acquire(&foreign, UUID, WaitPolicy::NoWait, &mut |_| {}).unwrap_err();
        assert!(err.to_string().contains("is owned by uid 65534, not by this user (uid 0)"), "{err}");
        assert!(std::fs::read_dir(&foreign).unwrap().next().is_none(), "nothing was created in it");
    }
    // A fresh folder is created private, and the lock file too.
    let fresh = base.path().join("fresh");
    let lock = GpuLock::acquire(&fresh, UUID, WaitPolicy::NoWait, &mut |_| {}).unwrap();
    assert_eq!(std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777, 0o700);
    assert_eq!(std::fs::metadata(lock.path()).unwrap().permissions().mode() & 0o777, 0o600);
}

#[test]
fn the_default_lock_folder_is_the_users_own() {
    let dir = gpubench::runner::lock::lock_dir();
    if std::env::var_os("GPUBENCH_LOCK_DIR").is_some() {
        return;
    }
    assert_ne!(dir, std::env::temp_dir().join("gpubench-locks"));
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name == "gpubench-locks" && std::env::var_os("XDG_RUNTIME_DIR").is_some()
            || name == format!("gpubench-locks-{}", gpubench::runner::lock::current_uid()),
        "{}",
        dir.display()
    );
}

#[test]
fn a_lock_file_is_never_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{UUID}.lock"));
    let old = vec![b'x'; 2000];
    std::fs::write(&path, &old).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let lock = GpuLock::acquire(dir.path(), UUID, WaitPolicy::NoWait, &mut |_| {}).unwrap();
    let bytes = std::fs::read(lock.path()).unwrap();
    assert_eq!(bytes.len(), 2000, "the file keeps its length");
    assert!(bytes.starts_with(format!("pid {}", std::process::id()).as_bytes()));
}
