//! One gpubench run per GPU at a time: an advisory file lock per GPU UUID.
//!
//! Two runs on one GPU spoil each other's numbers (and a baseline saved from them). Each run
//! takes an exclusive `flock` on `<lock dir>/<uuid>.lock` before it measures and holds it until
//! it exits; the kernel releases it when the process ends, however it ends, so a killed run
//! never leaves a stale lock. The lock folder is shared by all users of the machine
//! (`$GPUBENCH_LOCK_DIR`, else `gpubench-locks` in the system temporary folder), because runs
//! of different users disturb one GPU just as much.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
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

/// The lock folder: `$GPUBENCH_LOCK_DIR`, else `<temp>/gpubench-locks`.
pub fn lock_dir() -> PathBuf {
    std::env::var_os(ENV_LOCK_DIR).map(PathBuf::from).unwrap_or_else(|| std::env::temp_dir().join("gpubench-locks"))
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
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        let args: Vec<String> = std::env::args().collect();
        let text = format!("pid {} since unix time {now}: {}\n", std::process::id(), args.join(" "));
        // The description is informative only; failing to write it does not matter.
        let _ = self.file.set_len(0);
        let _ = self.file.rewind();
        let _ = self.file.write_all(text.as_bytes());
        let _ = self.file.flush();
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
    if !dir.exists() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        // Shared by every user of the machine, like /tmp itself.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o1777));
        }
    }
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o666);
    }
    options.open(path).map_err(|e| Error::io(path, e))
}

fn read_holder(file: &File) -> String {
    let mut text = String::new();
    let mut reader = file;
    let _ = reader.rewind();
    let _ = reader.read_to_string(&mut text);
    let text = text.trim();
    if text.is_empty() { "another process".to_string() } else { text.to_string() }
}
