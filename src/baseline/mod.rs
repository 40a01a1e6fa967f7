//! Baselines: the runs a new run is compared with, one file per GPU class under `baselines/`.
//!
//! A baseline holds whole results documents (raw per-sample values, clocks, telemetry, kernel
//! provenance) so that every verdict can be recomputed from it, plus summaries for people and
//! diffs: the stack it was taken on, the kernels' hashes, per-metric medians and noise, and
//! the telemetry. Driver and toolkit versions are attributes, not part of the key: comparing
//! across an upgrade is the point.
//!
//! Files are schema-versioned ([`BASELINE_SCHEMA`]), written atomically (temporary file, then
//! rename), and a file that is corrupt, truncated or of another schema is an error
//! ([`crate::Error::Data`], exit code 5) that is never overwritten or deleted.

use std::borrow::Cow;
use std::path::Path;

use crate::error::{Error, Result};
use crate::results::{RESULTS_SCHEMA, ResultsDocument, parse_json};

mod document;
pub mod guard;
mod key;
pub mod span;
mod store;
mod validate;

pub use document::{BASELINE_SCHEMA, Baseline, BaselineMetric, TelemetrySummary};
pub use key::{BaselineKey, validate_name};
pub use store::{Listed, SaveMode, Store, previous_path};
pub use validate::{check_baseline, check_runs, quarantine, quarantine_path};

/// What a file of runs holds: one results document, or a baseline's runs.
#[derive(Debug, Clone)]
pub enum RunsFile {
    /// A results document (`gpubench.results/1`).
    Results(Box<ResultsDocument>),
    /// A baseline (`gpubench.baseline/1`).
    Baseline(Box<Baseline>),
}

/// The `schema` a results or baseline file's bytes state (`None` where they do not parse as
/// JSON or state none), and the bytes, decompressed where gzipped.
pub(crate) fn schema_of<'a>(path: &Path, bytes: &'a [u8]) -> Result<(Option<String>, Cow<'a, [u8]>)> {
    #[derive(serde::Deserialize)]
    struct Tag {
        schema: Option<String>,
    }
    let bytes = crate::results::decompressed(path, bytes)?;
    let tag: Option<Tag> = serde_json::from_slice(&bytes).ok();
    Ok((tag.and_then(|t| t.schema), bytes))
}

impl RunsFile {
    /// Reads a results or baseline file, telling them apart by their `schema`; anything else
    /// is [`Error::Data`].
    /// Every run must pass [`crate::results::check_document`].
    pub fn read(path: &Path) -> Result<Self> {
        let bytes = crate::results::read_document(path)?;
        let file = Self::parse(path, &bytes)?;
        for run in file.runs() {
            crate::results::check_document(run).map_err(|why| Error::data(path, why))?;
        }
        Ok(file)
    }

    /// The noise model of a baseline file ([`Baseline::noise_model`]); `None` for a results
    /// file, whose noise a comparison learns from its runs.
    pub fn noise_model(&self) -> Option<crate::verdict::NoiseModel> {
        match self {
            RunsFile::Baseline(b) => Some(b.noise_model()),
            RunsFile::Results(_) => None,
        }
    }

    /// Parses a results or baseline file's bytes (`path` names them in errors).
    fn parse(path: &Path, bytes: &[u8]) -> Result<Self> {
        let (schema, bytes) = schema_of(path, bytes)?;
        let bytes = &*bytes;
        match schema.as_deref() {
            Some(BASELINE_SCHEMA) => Ok(RunsFile::Baseline(Box::new(Baseline::parse(path, bytes)?))),
            Some(RESULTS_SCHEMA) => Ok(RunsFile::Results(Box::new(parse_json(path, bytes, RESULTS_SCHEMA)?))),
            Some(other) => Err(Error::data(
                path,
                format!("schema is `{other}`, expected `{RESULTS_SCHEMA}` or `{BASELINE_SCHEMA}`"),
            )),
            // Unparsable, truncated, or without a schema: the results reader says which.
            None => parse_json::<ResultsDocument>(path, bytes, RESULTS_SCHEMA).map(|r| RunsFile::Results(Box::new(r))),
        }
    }

    /// The runs, oldest first, borrowed.
    pub fn runs(&self) -> &[ResultsDocument] {
        match self {
            RunsFile::Results(r) => std::slice::from_ref(r),
            RunsFile::Baseline(b) => &b.runs,
        }
    }

    /// The runs, oldest first.
    pub fn into_runs(self) -> Vec<ResultsDocument> {
        match self {
            RunsFile::Results(r) => vec![*r],
            RunsFile::Baseline(b) => b.runs,
        }
    }
}
