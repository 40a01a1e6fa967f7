//! One gpubench run per GPU at a time: an advisory file lock per GPU UUID.
//!
//! Two runs on one GPU spoil each other's numbers (and a baseline saved from them). Each run
//! takes an exclusive `flock` on `<lock dir>/<uuid>.lock` before it measures and holds it until
//! it exits; the kernel releases it when the process ends, however it ends, so a killed run
//! never leaves a stale lock.
//!
//! The lock folder is private to the user ([`lock_dir`]): `$GPUBENCH_LOCK_DIR`, else
//! `gpubench-locks` in `$XDG_RUNTIME_DIR`, else `gpubench-locks-<uid>` in the system temporary
//! folder, created with mode 0700. A folder that is a symbolic link, is owned by another user or
//! is writable by others is refused (a shared folder would let any local user point a lock file
//! at a file of their choice, or hold every GPU's lock). Lock files are opened without following
//! links, must be regular files of the user, and are never truncated. Where several users share
//! the GPUs, one service user runs the benchmarks, so that every run locks in one folder.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fs4::FileExt;

use super::interrupt;
use crate::error::{Error, Result};

/// Overrides the lock folder.
pub const ENV_LOCK_DIR: &str = "GPUBENCH_LOCK_DIR";

/// How often a waiting run retries.
const POLL: Duration = Duration::from_millis(200);

/// What to do when another run holds the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitPolicy {
    /// Wait until it finishes (or Ctrl-C).
    Wait,
    /// Fail at once with [`Error::Busy`].
    NoWait,
}

/// Size of the holder description written at the start of a lock file (padded with spaces,
/// never truncated).
const HOLDER_BYTES: usize = 512;

/// The lock folder: `$GPUBENCH_LOCK_DIR`, else `$XDG_RUNTIME_DIR/gpubench-locks` where that
/// runtime folder is the user's, else `<temp>/gpubench-locks-<uid>`.
pub fn lock_dir() -> PathBuf {
    if let Some(d) = std::env::var_os(ENV_LOCK_DIR) {
        return PathBuf::from(d);
    }
    if let Some(run) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from)
        && run.is_absolute()
        && private_dir(&run).is_ok()
    {
        return run.join("gpubench-locks");
    }
    std::env::temp_dir().join(format!("gpubench-locks-{}", current_uid()))
}

/// The effective user id of this process.
pub fn current_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Checks that `dir` is a folder (not a link to one) owned by this user and not writable by
/// group or others: the one-line error says what is wrong.
pub fn private_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(dir).map_err(|e| Error::io(dir, e))?;
    let refuse = |why: String| {
        Error::Usage(format!(
            "lock folder {}: {why}; refusing it (remove it, or set {ENV_LOCK_DIR} to a folder of your own with mode 0700)",
            dir.display()
        ))
    };
    if meta.file_type().is_symlink() {
        return Err(refuse("is a symbolic link".into()));
    }
    if !meta.is_dir() {
        return Err(refuse("is not a folder".into()));
    }
    if meta.uid() != current_uid() {
        return Err(refuse(format!("is owned by uid {}, not by this user (uid {})", meta.uid(), current_uid())));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(refuse(format!("is writable by group or others (mode {:o})", meta.mode() & 0o7777)));
    }
    Ok(())
}

/// An exclusive hold on one GPU, released on drop or process exit.
#[derive(Debug)]
pub struct GpuLock {
    file: File,
    path: PathBuf,
}

impl GpuLock {
    /// Takes the lock of GPU `uuid` in `dir`. When another run holds it, `on_wait` is called
    /// once with the holder's description and the run waits (polling, so that Ctrl-C ends the
    /// wait with [`Error::Interrupted`]), or fails with [`Error::Busy`] under
    /// [`WaitPolicy::NoWait`].
    pub fn acquire(dir: &Path, uuid: &str, policy: WaitPolicy, on_wait: &mut dyn FnMut(&str)) -> Result<GpuLock> {
        let path = lock_path(dir, uuid);
        let file = open_lock_file(dir, &path)?;
        let mut announced = false;
        loop {
            match FileExt::try_lock(&file) {
                Ok(()) => break,
                Err(fs4::TryLockError::WouldBlock) => {
                    let holder = read_holder(&file);
                    if policy == WaitPolicy::NoWait {
                        return Err(Error::Busy { uuid: uuid.to_string(), holder });
                    }
                    if !announced {
                        on_wait(&holder);
                        announced = true;
                    }
                    if interrupt::requested() {
                        return Err(Error::Interrupted);
                    }
                    std::thread::sleep(POLL);
                }
                Err(fs4::TryLockError::Error(e)) => return Err(Error::io(&path, e)),
            }
        }
        let mut lock = GpuLock { file, path };
        lock.write_holder();
        Ok(lock)
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn write_holder(&mut self) {
        use std::os::unix::fs::FileExt as _;
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        let args: Vec<String> = std::env::args().collect();
        let text = format!("pid {} since unix time {now}: {}", std::process::id(), args.join(" "));
        // A fixed-size record at the start, padded: the file is never truncated.
        let mut record: Vec<u8> = text.into_bytes();
        record.truncate(HOLDER_BYTES - 1);
        record.resize(HOLDER_BYTES - 1, b' ');
        record.push(b'\n');
        // The description is informative only; failing to write it does not matter.
        let _ = self.file.write_all_at(&record, 0);
    }
}

impl Drop for GpuLock {
    fn drop(&mut self) {
        let _ = FileExt::unlock(&self.file);
    }
}

fn lock_path(dir: &Path, uuid: &str) -> PathBuf {
    let name: String = uuid.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    dir.join(format!("{name}.lock"))
}

fn open_lock_file(dir: &Path, path: &Path) -> Result<File> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
    if std::fs::symlink_metadata(dir).is_err() {
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        match std::fs::DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io(dir, e)),
        }
    }
    private_dir(dir)?;
    let mut options = OpenOptions::new();
    // Never truncated, never through a link; private to the user.
    options.read(true).write(true).create(true).truncate(false);
    options.mode(0o600).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    let file = options.open(path).map_err(|e| {
        if e.raw_os_error() == Some(libc::ELOOP) {
            Error::Usage(format!("lock file {} is a symbolic link; refusing it (remove it)", path.display()))
        } else {
            Error::io(path, e)
        }
    })?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.is_file() || meta.uid() != current_uid() || meta.nlink() != 1 {
        return Err(Error::Usage(format!(
            "lock file {} is not a regular file of this user with one link; refusing it (remove it)",
            path.display()
        )));
    }
    Ok(file)
}

fn read_holder(file: &File) -> String {
    use std::os::unix::fs::FileExt as _;
    let mut bytes = vec![0u8; HOLDER_BYTES];
    let n = file.read_at(&mut bytes, 0).unwrap_or(0);
    bytes.truncate(n);
    let text = String::from_utf8_lossy(&bytes);
    let text: String = text.trim().chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    if text.is_empty() { "another process".to_string() } else { text.to_string() }
}
