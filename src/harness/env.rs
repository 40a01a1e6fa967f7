//! How a bench process is configured: the environment variables of [`crate::protocol`], set by
//! `cargo gpubench`, with defaults for plain `cargo bench`.

use std::path::PathBuf;
use std::time::Duration;

use crate::error::{Error, Result};

pub use crate::protocol::{
    ENV_DEVICE, ENV_DISCARD_THROTTLED, ENV_NO_TELEMETRY, ENV_PROFILE, ENV_PROGRESS, ENV_RECORD_DIR, PROGRESS_PREFIX,
};

/// How long and how often each benchmark is sampled, and how many points sweeps take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// A smoke run: few points, short sampling (CI budget: 20 s for the suite).
    Quick,
    /// The regression run (CI budget: 90 s for the suite): each family's regression set.
    Default,
    /// Every sweep point and configuration of every family: characterisation, not CI.
    Full,
}

impl Profile {
    /// Reads [`ENV_PROFILE`]; unset means `Default`.
    pub fn from_env() -> Result<Self> {
        match std::env::var(ENV_PROFILE) {
            Err(_) => Ok(Profile::Default),
            Ok(v) => Profile::parse(&v),
        }
    }

    /// Parses "quick", "default" or "full".
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "quick" => Ok(Profile::Quick),
            "default" | "" => Ok(Profile::Default),
            "full" => Ok(Profile::Full),
            other => Err(Error::Usage(format!("unknown profile `{other}` (expected quick, default or full)"))),
        }
    }

    /// The profile's name.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Quick => "quick",
            Profile::Default => "default",
            Profile::Full => "full",
        }
    }

    /// Criterion samples per benchmark.
    pub fn sample_size(self) -> usize {
        match self {
            Profile::Quick => 10,
            Profile::Default | Profile::Full => 20,
        }
    }

    /// Criterion warm-up time per benchmark.
    pub fn warm_up(self) -> Duration {
        match self {
            Profile::Quick => Duration::from_millis(30),
            Profile::Default | Profile::Full => Duration::from_millis(100),
        }
    }

    /// Criterion measurement time per benchmark.
    pub fn measurement(self) -> Duration {
        match self {
            Profile::Quick => Duration::from_millis(100),
            Profile::Default | Profile::Full => Duration::from_millis(300),
        }
    }
}

/// The GPU ordinal from [`ENV_DEVICE`] (default 0).
pub fn device_ordinal() -> Result<usize> {
    match std::env::var(ENV_DEVICE) {
        Err(_) => Ok(0),
        Ok(v) => v.trim().parse().map_err(|_| Error::Usage(format!("{ENV_DEVICE}=`{v}` is not a GPU ordinal"))),
    }
}

/// Where this bench process writes its record: [`ENV_RECORD_DIR`], else `<target>/gpubench/records`
/// next to the executable (`target/release/deps/<bench>` gives `target`).
pub fn record_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(ENV_RECORD_DIR) {
        return Some(PathBuf::from(dir));
    }
    let exe = std::env::current_exe().ok()?;
    let target = exe.parent()?.parent()?.parent()?;
    Some(target.join("gpubench").join("records"))
}

/// Whether `cargo gpubench` asked for progress lines.
pub fn progress_requested() -> bool {
    std::env::var_os(ENV_PROGRESS).is_some()
}
