//! Finding results documents to import: files, folders (searched recursively) and .tar.gz / .tar.xz
//! archives of results files, plain or gzipped (`.json.gz`), through the shared walker
//! ([`crate::results::scan`]).

use std::path::{Path, PathBuf};

use super::record::RunRecord;
use crate::error::{Error, Result};
use crate::results::{RESULTS_SCHEMA, ResultsDocument, check_finite, parse_json};

/// What a search for results documents found.
#[derive(Debug, Default)]
pub struct Found {
    /// The runs, in the order they were found.
    pub records: Vec<RunRecord>,
    /// JSON files inside folders or archives that are not results documents (verdicts,
    /// dissect sweeps, ...), named pipes and links to folders, with the reason they were left
    /// out.
    pub skipped: Vec<String>,
}

/// Reads every results document under `paths`. A file named directly must be a results
/// document (`.json` or `.json.gz`) or a .tar.gz / .tar.xz, and a regular file; inside folders
/// and archives, JSON files of other schemas and files that are not regular files are skipped
/// and listed. A corrupt results document, or one with a statistic that is not finite, is an
/// error wherever it is.
pub fn collect(paths: &[PathBuf]) -> Result<Found> {
    let mut found = Found::default();
    let mut skipped = Vec::new();
    crate::results::scan::scan(paths, &mut skipped, &mut |input| {
        if input.named {
            let rec = parse_record(&input.path, &input.bytes, &input.origin)?;
            found.records.push(rec);
            Ok(())
        } else {
            maybe_record(&input.path, &input.bytes, &input.origin, &mut found)
        }
    })?;
    found.skipped.extend(skipped.into_iter().map(|(p, why)| format!("{p} ({why})")));
    Ok(found)
}

/// Adds the document when it is a results document; lists it as skipped when it is JSON of
/// another kind.
fn maybe_record(path: &Path, bytes: &[u8], source: &str, found: &mut Found) -> Result<()> {
    let schema = serde_json::from_slice::<serde_json::Value>(bytes)
        .ok()
        .and_then(|v| v.get("schema").and_then(|s| s.as_str()).map(str::to_owned));
    match schema {
        Some(s) if s == RESULTS_SCHEMA => {
            found.records.push(parse_record(path, bytes, source)?);
        }
        Some(s) => found.skipped.push(format!("{source} (schema `{s}`)")),
        None => found.skipped.push(format!("{source} (not a results document)")),
    }
    Ok(())
}

fn parse_record(path: &Path, bytes: &[u8], source: &str) -> Result<RunRecord> {
    let doc: ResultsDocument = parse_json(path, bytes, RESULTS_SCHEMA)?;
    check_finite(&doc).map_err(|why| Error::data(path, why))?;
    let raw: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| Error::data(path, e.to_string()))?;
    Ok(RunRecord::from_document(&doc, Some(&raw), source))
}
