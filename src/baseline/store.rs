//! The baselines folder: finding, reading, listing and saving baseline files.

use std::path::{Path, PathBuf};

use super::{Baseline, BaselineKey};
use crate::error::{Error, Result};
use crate::results::{ResultsDocument, write_json_compact};

/// How a save treats an existing baseline file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaveMode {
    /// The new runs replace the old ones.
    Replace,
    /// The new runs join the old ones (which must be compatible); only the newest `max_runs`
    /// of each card are kept.
    Append {
        /// Runs kept at most per card (GPU UUID).
        max_runs: usize,
    },
}

/// One file found in the folder, read or not.
#[derive(Debug)]
pub struct Listed {
    /// The file.
    pub path: PathBuf,
    /// Its baseline, or why it cannot be read.
    pub baseline: Result<Baseline>,
}

/// A folder of baselines (`baselines/` in the workspace).
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// The store in `dir` (created on the first save).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Store { dir: dir.into() }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the baseline for `key` lives.
    pub fn path(&self, key: &BaselineKey) -> PathBuf {
        self.dir.join(key.file_name())
    }

    /// The baseline for `key`: `None` when there is no such file, an error when the file
    /// exists but is not a baseline for that key.
    pub fn load(&self, key: &BaselineKey) -> Result<Option<(PathBuf, Baseline)>> {
        let path = self.path(key);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(&path, e)),
        };
        let baseline = Baseline::parse(&path, &bytes)?;
        if baseline.key() != *key {
            return Err(Error::data(
                &path,
                format!("holds the {}, not the {}", baseline.key().describe(), key.describe()),
            ));
        }
        Ok(Some((path, baseline)))
    }

    /// Saves `runs` (oldest first) as the baseline for `key`, atomically. An existing file
    /// that is not a readable baseline for `key` is left untouched and reported as
    /// [`Error::Data`]. Returns the file and what was written.
    pub fn save(
        &self,
        key: &BaselineKey,
        runs: Vec<ResultsDocument>,
        mode: SaveMode,
        now_unix_s: u64,
    ) -> Result<(PathBuf, Baseline)> {
        let existing = self.load(key).map_err(|e| match e {
            Error::Data { path, reason } => Error::Data {
                path,
                reason: format!("{reason}; the file was left as it is (move it away to save a new baseline)"),
            },
            other => other,
        })?;
        let all_runs = match (mode, existing) {
            (SaveMode::Append { max_runs }, Some((path, old))) => {
                for run in &runs {
                    old.accepts(run).map_err(|why| {
                        Error::Usage(format!(
                            "cannot add the run to {}: {why}; save without --append to replace it",
                            path.display()
                        ))
                    })?;
                }
                let mut all = old.runs;
                all.extend(runs);
                super::document::keep_newest_per_card(all, max_runs)
            }
            _ => runs,
        };
        let baseline = Baseline::from_runs(key, all_runs, now_unix_s)?;
        let path = self.path(key);
        write_json_compact(&path, &baseline)?;
        Ok((path, baseline))
    }

    /// Every `*.json` file of the folder (hidden and temporary files skipped), sorted by name;
    /// an absent folder lists nothing.
    pub fn list(&self) -> Result<Vec<Listed>> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io(&self.dir, e)),
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                !name.starts_with('.') && name.ends_with(".json") && p.is_file()
            })
            .collect();
        paths.sort();
        Ok(paths.into_iter().map(|path| Listed { baseline: Baseline::read(&path), path }).collect())
    }
}
