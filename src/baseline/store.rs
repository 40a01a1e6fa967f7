//! The baselines folder: finding, reading, listing and saving baseline files.

use std::path::{Path, PathBuf};

use super::validate::{check_baseline, check_runs};
use super::{Baseline, BaselineKey};
use crate::error::{Error, Result};
use crate::results::{ResultsDocument, check_regular_file, write_atomic_checked};

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

/// Where a save keeps the baseline it replaced: `<file name>.previous` beside it (not a
/// `*.json` name, so the folder does not list it as a baseline).
pub fn previous_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "baseline".into());
    path.with_file_name(format!("{name}.previous"))
}

/// One file found in the folder, read or not.
#[derive(Debug)]
pub struct Listed {
    /// The file.
    pub path: PathBuf,
    /// The file within the folder (`<class>/class.json`, or a flat name of earlier versions).
    pub relative: PathBuf,
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

    /// Where the baseline for `key` lives: in the class's folder (`<class>/class.json`,
    /// `<class>/<uuid>.json`, ... — [`BaselineKey::relative_path`]), or the one-file name of
    /// earlier versions (`<class>.json`) where only that exists; `.json.gz` or `.json.xz` where
    /// only a compressed file exists (a baseline kept small in a repository; saves keep it
    /// compressed the same way).
    /// A baseline not saved yet goes to the class's folder.
    pub fn path(&self, key: &BaselineKey) -> PathBuf {
        let placed = |relative: PathBuf| -> Option<PathBuf> {
            let plain = self.dir.join(&relative);
            let compressed = |ext: &str| {
                let mut p = plain.clone().into_os_string();
                p.push(ext);
                PathBuf::from(p)
            };
            [plain.clone(), compressed(".gz"), compressed(".xz")].into_iter().find(|p| p.exists())
        };
        placed(key.relative_path())
            .or_else(|| placed(PathBuf::from(key.flat_file_name())))
            .unwrap_or_else(|| self.dir.join(key.relative_path()))
    }

    /// The baseline for `key`: `None` when there is no such file, an error when the file
    /// exists but is not a baseline for that key.
    pub fn load(&self, key: &BaselineKey) -> Result<Option<(PathBuf, Baseline)>> {
        let path = self.path(key);
        match check_regular_file(&path) {
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
            Ok(()) => {}
        }
        let bytes = match crate::results::read_document(&path) {
            Ok(b) => b,
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
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
    /// [`Error::Data`]. Runs with missing or non-finite statistics are refused before anything
    /// is written, and the new file is read back and checked before it replaces the old one.
    /// Returns the file and what was written.
    pub fn save(
        &self,
        key: &BaselineKey,
        runs: Vec<ResultsDocument>,
        mode: SaveMode,
        now_unix_s: u64,
    ) -> Result<(PathBuf, Baseline)> {
        self.save_learning(key, runs, mode, None, now_unix_s)
    }

    /// Saves `runs` as the class baseline for `key` as [`Store::save`] replaces one, with the
    /// noise model learned from `learned_from`: every run recorded, of which `runs` are those
    /// kept (`baseline save --cards`). The run-to-run and between-card spreads of the class are
    /// then those of every card measured, on their degrees of freedom, while the file keeps the
    /// runs of a few cards as the reference.
    pub fn save_learned_from(
        &self,
        key: &BaselineKey,
        runs: Vec<ResultsDocument>,
        learned_from: &[ResultsDocument],
        now_unix_s: u64,
    ) -> Result<(PathBuf, Baseline)> {
        self.save_learning(key, runs, SaveMode::Replace, Some(learned_from), now_unix_s)
    }

    fn save_learning(
        &self,
        key: &BaselineKey,
        runs: Vec<ResultsDocument>,
        mode: SaveMode,
        learned_from: Option<&[ResultsDocument]>,
        now_unix_s: u64,
    ) -> Result<(PathBuf, Baseline)> {
        let path = self.path(key);
        check_runs(&runs)
            .map_err(|why| Error::data(&path, format!("refused to save: {why}; the baseline was left as it is")))?;
        let existing = self.load(key).map_err(|e| match e {
            Error::Data { path, reason } => Error::Data {
                reason: format!(
                    "{reason}; the file was left as it is (`cargo gpubench baseline quarantine {}` moves it aside)",
                    path.display()
                ),
                path,
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
        let mut baseline = Baseline::from_runs(key, all_runs, now_unix_s)?;
        if let Some(every) = learned_from {
            check_runs(every)
                .map_err(|why| Error::data(&path, format!("refused to save: {why}; the baseline was left as it is")))?;
            baseline.learn_from(every);
        }
        let baseline = self.with_class_prior(key, baseline);
        let refused =
            |why: String| Error::data(&path, format!("refused to save: {why}; the baseline was left as it is"));
        check_baseline(&baseline).map_err(refused)?;
        let mut bytes = crate::results::to_json_bytes(&baseline, false).map_err(|e| refused(e.to_string()))?;
        bytes.push(b'\n');
        let bytes = crate::results::stored_as(&path, bytes);
        // The baseline replaced stays recoverable: its bytes, as they were, in `<file>.previous`
        // (`cargo gpubench baseline restore` puts them back).
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file()) {
            let old = crate::results::read_to_end_limited(
                &path,
                crate::results::open_regular(&path)?,
                crate::results::document_limit(),
                "the file",
            )?;
            crate::results::write_atomic(&previous_path(&path), &old)?;
        }
        // What is returned is the baseline as it reads back (numbers as stored, to
        // `SIGNIFICANT_DIGITS`), so a caller holds exactly what a later load gives.
        let mut stored = None;
        write_atomic_checked(&path, &bytes, |back| {
            let read = Baseline::parse(&path, back).map_err(|e| refused(format!("it would not read back: {e}")))?;
            check_baseline(&read).map_err(|why| refused(format!("it would not read back: {why}")))?;
            if read.key() != *key || read.runs.len() != baseline.runs.len() {
                return Err(refused("it read back as another baseline".into()));
            }
            stored = Some(read);
            Ok(())
        })?;
        Ok((path, stored.unwrap_or(baseline)))
    }

    /// A per-card baseline learns its run-to-run spreads with the class baseline of the same
    /// folder (when there is a readable one) as their prior; other baselines are as learned.
    fn with_class_prior(&self, key: &BaselineKey, mut baseline: Baseline) -> Baseline {
        if key.uuid.is_some() {
            let class = BaselineKey { class: key.class.clone(), uuid: None, name: None };
            if let Ok(Some((_, c))) = self.load(&class) {
                baseline.learn_with_prior(Some(&c.noise_model()));
            }
        }
        baseline
    }

    /// Puts the baseline that the last save of `key` replaced back (from `<file>.previous`); the
    /// baseline it replaces becomes `<file>.previous` in turn, so a restore can be undone the
    /// same way. Returns the file and the baseline restored.
    pub fn restore(&self, key: &BaselineKey) -> Result<(PathBuf, Baseline)> {
        let path = self.path(key);
        let previous = previous_path(&path);
        let old = match crate::results::read_document(&previous) {
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::Usage(format!(
                    "no previous baseline to restore: {} does not exist",
                    previous.display()
                )));
            }
            other => other?,
        };
        let raw = crate::results::read_to_end_limited(
            &previous,
            crate::results::open_regular(&previous)?,
            crate::results::document_limit(),
            "the file",
        )?;
        let baseline = Baseline::parse(&previous, &old)?;
        if baseline.key() != *key {
            return Err(Error::data(
                &previous,
                format!("holds the {}, not the {}", baseline.key().describe(), key.describe()),
            ));
        }
        let current = match crate::results::open_regular(&path) {
            Ok(f) => Some(crate::results::read_to_end_limited(&path, f, crate::results::document_limit(), "the file")?),
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        // Both versions are in memory and on disk at every step.
        crate::results::write_atomic(&path, &raw)?;
        match current {
            Some(bytes) => crate::results::write_atomic(&previous, &bytes)?,
            None => std::fs::remove_file(&previous).map_err(|e| Error::io(&previous, e))?,
        }
        Ok((path, baseline))
    }

    /// Every `*.json`, `*.json.gz` and `*.json.xz` file of the folder and of its class folders one level
    /// down (hidden and temporary files skipped), sorted by path; an absent folder lists
    /// nothing.
    pub fn list(&self) -> Result<Vec<Listed>> {
        let mut paths = Vec::new();
        for entry in documents_and_folders(&self.dir)? {
            if entry.is_dir() {
                paths.extend(documents_and_folders(&entry)?.into_iter().filter(|p| p.is_file()));
            } else {
                paths.push(entry);
            }
        }
        paths.sort();
        Ok(paths
            .into_iter()
            .map(|path| Listed {
                baseline: Baseline::read(&path),
                relative: path.strip_prefix(&self.dir).map(Path::to_path_buf).unwrap_or_else(|_| path.clone()),
                path,
            })
            .collect())
    }
}

/// The `*.json`, `*.json.gz` and `*.json.xz` files and the folders of `dir`, hidden ones skipped; an absent
/// folder holds none.
fn documents_and_folders(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(dir, e)),
    };
    Ok(entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            !name.starts_with('.') && (p.is_dir() || (crate::results::is_document_name(name) && p.is_file()))
        })
        .collect())
}
