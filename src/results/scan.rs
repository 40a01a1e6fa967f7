//! Finding input documents under paths given on the command line: files named directly,
//! folders searched recursively, `.tar.gz` / `.tar.xz` archives. The one walker of `fleet`,
//! `history import` and `calibrate`.
//!
//! Only regular files are read. A named pipe, device or socket named directly is refused (a
//! data error, exit code 5); inside a folder it is skipped and named. Symbolic links to folders
//! are not followed (a link back up the tree would otherwise count every run again and again),
//! a folder reached twice (a bind mount) is read once, and hidden files (`.name`, such as an
//! interrupted save's temporary file) are passed over. Every file is read through
//! [`super::read_document`]: gzip-compressed or not, at most [`super::MAX_DOCUMENT_BYTES`].

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Folders deeper than this below a named folder are not searched.
pub const MAX_DEPTH: usize = 32;

/// One document found.
#[derive(Debug)]
pub struct Input {
    /// Where it came from: a path, or "archive.tar.gz:member".
    pub origin: String,
    /// The path that names it in errors (for a member, `origin` as a path).
    pub path: PathBuf,
    /// The folder it lies in, or the archive's name without its extension (a host, in the batch
    /// recipes' `<shared>/<host>/` layout).
    pub host: Option<String>,
    /// Named directly on the command line (not found in a folder or an archive).
    pub named: bool,
    /// Its bytes, decompressed.
    pub bytes: Vec<u8>,
}

/// Whether a file in a folder is a candidate: `*.json`, `*.json.gz`, `*.json.xz` or an archive.
pub fn is_candidate(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    super::is_document_name(name) || super::is_tarball(path)
}

/// Calls `visit` with every document under `paths`, in order (folders sorted by name). What
/// was passed over inside folders goes to `skipped` as (path, reason).
pub fn scan(
    paths: &[PathBuf],
    skipped: &mut Vec<(String, String)>,
    visit: &mut dyn FnMut(Input) -> Result<()>,
) -> Result<()> {
    let mut seen = HashSet::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| Error::io(p, e))?;
        if meta.is_dir() {
            walk(p, 0, &mut seen, skipped, visit)?;
        } else {
            read_file(p, true, visit)?;
        }
    }
    Ok(())
}

fn host_of(p: &Path) -> Option<String> {
    p.parent().and_then(|d| d.file_name()).and_then(|n| n.to_str()).map(str::to_owned)
}

fn read_file(p: &Path, named: bool, visit: &mut dyn FnMut(Input) -> Result<()>) -> Result<()> {
    if super::is_tarball(p) {
        let host = super::tarball_stem(p);
        for (name, bytes) in super::json_members(p)? {
            let origin = format!("{}:{name}", p.display());
            let bytes = super::decompressed(Path::new(&origin), &bytes)?.into_owned();
            visit(Input { path: PathBuf::from(&origin), origin, host: host.clone(), named: false, bytes })?;
        }
        return Ok(());
    }
    let bytes = super::read_document(p)?;
    visit(Input { origin: p.display().to_string(), path: p.to_path_buf(), host: host_of(p), named, bytes })
}

fn walk(
    dir: &Path,
    depth: usize,
    seen: &mut HashSet<(u64, u64)>,
    skipped: &mut Vec<(String, String)>,
    visit: &mut dyn FnMut(Input) -> Result<()>,
) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(dir).map_err(|e| Error::io(dir, e))?;
    if !seen.insert((meta.dev(), meta.ino())) {
        skipped.push((dir.display().to_string(), "a folder already searched".into()));
        return Ok(());
    }
    if depth > MAX_DEPTH {
        skipped.push((dir.display().to_string(), format!("deeper than {MAX_DEPTH} folders")));
        return Ok(());
    }
    let mut entries: Vec<(PathBuf, std::fs::FileType)> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(|e| e.file_type().ok().map(|t| (e.path(), t)))
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (p, ft) in entries {
        if ft.is_dir() {
            walk(&p, depth + 1, seen, skipped, visit)?;
            continue;
        }
        if !is_candidate(&p) && !ft.is_symlink() {
            continue;
        }
        let target = if ft.is_symlink() {
            match std::fs::metadata(&p) {
                Ok(m) => m.file_type(),
                Err(e) => {
                    skipped.push((p.display().to_string(), format!("a broken symbolic link ({e})")));
                    continue;
                }
            }
        } else {
            ft
        };
        if target.is_dir() {
            skipped.push((p.display().to_string(), "a symbolic link to a folder, not followed".into()));
        } else if !is_candidate(&p) {
            continue;
        } else if !target.is_file() {
            skipped.push((p.display().to_string(), format!("{}, not a regular file", super::kind_of(target))));
        } else {
            read_file(&p, false, visit)?;
        }
    }
    Ok(())
}

/// Every run under `paths` (results files and baselines' runs), labelled by where it came
/// from ("set1-runs.tar.gz:runs/r0.json", "baseline.json#3"), and what was passed over: the
/// input of `calibrate`. Other JSON is skipped wherever it is; a corrupt results or baseline
/// file, or a run whose statistics are not finite ([`super::check_finite`]), is a data error.
pub fn runs(paths: &[PathBuf]) -> Result<(Vec<(String, super::ResultsDocument)>, Vec<String>)> {
    use super::{RESULTS_SCHEMA, parse_json};
    use crate::baseline::{BASELINE_SCHEMA, Baseline};
    #[derive(serde::Deserialize)]
    struct Tag {
        schema: Option<String>,
    }
    let mut found = Vec::new();
    let mut notes = Vec::new();
    let mut skipped = Vec::new();
    scan(paths, &mut skipped, &mut |input| {
        let checked = |label: String, doc: super::ResultsDocument| -> Result<(String, super::ResultsDocument)> {
            crate::results::check_finite(&doc).map_err(|why| Error::data(&input.path, why))?;
            Ok((label, doc))
        };
        let tag: Option<Tag> = serde_json::from_slice(&input.bytes).ok();
        match tag.and_then(|t| t.schema).as_deref() {
            Some(RESULTS_SCHEMA) => {
                found.push(checked(input.origin.clone(), parse_json(&input.path, &input.bytes, RESULTS_SCHEMA)?)?)
            }
            Some(BASELINE_SCHEMA) => {
                for (i, run) in Baseline::parse(&input.path, &input.bytes)?.runs.into_iter().enumerate() {
                    found.push(checked(format!("{}#{i}", input.origin), run)?);
                }
            }
            Some(other) => notes.push(format!("{} (schema {other})", input.origin)),
            None if input.named => {
                // Named directly and not ours: the results reader says what is wrong.
                parse_json::<super::ResultsDocument>(&input.path, &input.bytes, RESULTS_SCHEMA)?;
            }
            None => notes.push(format!("{} (not a results or baseline file)", input.origin)),
        }
        Ok(())
    })?;
    notes.extend(skipped.into_iter().map(|(p, why)| format!("{p} ({why})")));
    Ok((found, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(paths: &[PathBuf]) -> (Vec<String>, Vec<(String, String)>) {
        let mut skipped = Vec::new();
        let mut found = Vec::new();
        scan(paths, &mut skipped, &mut |i| {
            found.push(i.origin);
            Ok(())
        })
        .unwrap();
        (found, skipped)
    }

    #[test]
    fn symlink_loops_are_not_followed_and_pipes_are_skipped_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("runs");
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::write(root.join("a/r.json"), b"{}").unwrap();
        std::fs::write(root.join("a/r2.json.gz"), crate::results::gzipped(b"[]")).unwrap();
        std::os::unix::fs::symlink(&root, root.join("a/loop")).unwrap();
        std::os::unix::fs::symlink(root.join("a/r.json"), root.join("link.json")).unwrap();
        let fifo = root.join("pipe.json");
        let has_fifo = std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success());
        let (found, skipped) = names(std::slice::from_ref(&root));
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(found.iter().any(|f| f.ends_with("r2.json.gz")));
        assert!(skipped.iter().any(|(p, why)| p.ends_with("loop") && why.contains("not followed")), "{skipped:?}");
        if has_fifo {
            assert!(
                skipped.iter().any(|(p, why)| p.ends_with("pipe.json") && why == "a named pipe, not a regular file"),
                "{skipped:?}"
            );
            let mut none = Vec::new();
            let e = scan(&[fifo], &mut none, &mut |_| Ok(())).unwrap_err();
            assert!(e.to_string().ends_with("is a named pipe, not a regular file"), "{e}");
        }
    }
}
