//! Finding results documents to import: files, folders (searched recursively) and .tar.gz / .tar.xz
//! archives of results files.

use std::path::{Path, PathBuf};

use super::record::RunRecord;
use crate::error::{Error, Result};
use crate::results::{RESULTS_SCHEMA, ResultsDocument, is_tarball, json_members, parse_json};

/// What a search for results documents found.
#[derive(Debug, Default)]
pub struct Found {
    /// The runs, in the order they were found.
    pub records: Vec<RunRecord>,
    /// JSON files inside folders or archives that are not results documents (verdicts,
    /// dissect sweeps, ...), with the reason they were left out.
    pub skipped: Vec<String>,
}

/// Reads every results document under `paths`. A file named directly must be a results
/// document or a .tar.gz / .tar.xz; inside folders and archives, JSON files of other schemas are skipped
/// and listed. A corrupt results document is an error wherever it is.
pub fn collect(paths: &[PathBuf]) -> Result<Found> {
    let mut found = Found::default();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut found)?;
        } else if is_tarball(p) {
            read_tarball(p, &mut found)?;
        } else {
            let bytes = std::fs::read(p).map_err(|e| Error::io(p, e))?;
            let rec = parse_record(p, &bytes, &p.display().to_string())?;
            found.records.push(rec);
        }
    }
    Ok(found)
}

fn walk(dir: &Path, found: &mut Found) -> Result<()> {
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, found)?;
        } else if is_tarball(&p) {
            read_tarball(&p, found)?;
        } else if p.extension().is_some_and(|e| e == "json") {
            let bytes = std::fs::read(&p).map_err(|e| Error::io(&p, e))?;
            maybe_record(&p, &bytes, &p.display().to_string(), found)?;
        }
    }
    Ok(())
}

fn read_tarball(path: &Path, found: &mut Found) -> Result<()> {
    for (name, bytes) in json_members(path)? {
        let source = format!("{}:{name}", path.display());
        maybe_record(&PathBuf::from(&source), &bytes, &source, found)?;
    }
    Ok(())
}

/// Adds the document when it is a results document; lists it as skipped when it is JSON of
/// another kind.
fn maybe_record(path: &Path, bytes: &[u8], source: &str, found: &mut Found) -> Result<()> {
    let bytes = &*crate::results::decompressed(path, bytes)?;
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
    let raw: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| Error::data(path, e.to_string()))?;
    Ok(RunRecord::from_document(&doc, Some(&raw), source))
}
