//! Gathering recorded runs for calibration: results files, baselines (their runs), folders of
//! them and `.tar.gz` / `.tar.xz` archives of them. Other JSON (comparisons, reports) is skipped and named.

use std::path::{Path, PathBuf};

use crate::baseline::{BASELINE_SCHEMA, Baseline, schema_of};
use crate::error::{Error, Result};
use crate::results::{RESULTS_SCHEMA, ResultsDocument, is_tarball, json_members, parse_json};

/// Runs found under some paths, and what was passed over.
#[derive(Debug, Default)]
pub struct Corpus {
    /// Every run, with where it came from ("set1-runs.tar.gz:runs/r0.json").
    pub runs: Vec<(String, ResultsDocument)>,
    /// Files that hold no runs, with the reason.
    pub skipped: Vec<String>,
}

/// Reads every run under `paths` (files, folders searched recursively, `.tar.gz` / `.tar.xz` archives).
/// A named path that does not exist or a corrupt results file is an error; JSON of another
/// schema is skipped.
pub fn gather(paths: &[PathBuf]) -> Result<Corpus> {
    let mut corpus = Corpus::default();
    for path in paths {
        visit(path, &mut corpus)?;
    }
    Ok(corpus)
}

/// Older runs kept what a run-time search chose (and the search's scores) among the benchmark
/// parameters; newer runs keep them under `chosen`, where they do not make runs incomparable.
/// For every benchmark, the keys that any run of `runs` has under `chosen` are moved there from
/// `params` in every other run. Returns how many benchmark records were moved.
pub fn split_chosen(runs: &mut [(String, ResultsDocument)]) -> usize {
    use std::collections::{BTreeMap, BTreeSet};
    let mut chosen_keys: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (_, run) in runs.iter() {
        for b in &run.benchmarks {
            chosen_keys.entry(b.id.clone()).or_default().extend(b.chosen.keys().cloned());
        }
    }
    let mut moved = 0;
    for (_, run) in runs.iter_mut() {
        for b in &mut run.benchmarks {
            let Some(keys) = chosen_keys.get(&b.id) else { continue };
            let mut any = false;
            for k in keys {
                if let Some(v) = b.params.remove(k) {
                    b.chosen.insert(k.clone(), v);
                    any = true;
                }
            }
            moved += usize::from(any);
        }
    }
    moved
}

fn visit(path: &Path, corpus: &mut Corpus) -> Result<()> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if meta.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| Error::io(path, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                !name.starts_with('.') && (p.is_dir() || crate::results::is_document_name(name) || is_tarball(p))
            })
            .collect();
        entries.sort();
        for e in entries {
            visit(&e, corpus)?;
        }
        return Ok(());
    }
    let name = path.display().to_string();
    if is_tarball(path) {
        for (inner, bytes) in json_members(path)? {
            let label = format!("{name}:{inner}");
            add(&PathBuf::from(&label), &label, &bytes, corpus)?;
        }
        return Ok(());
    }
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    add(path, &name, &bytes, corpus)
}

fn add(path: &Path, label: &str, bytes: &[u8], corpus: &mut Corpus) -> Result<()> {
    let (schema, bytes) = schema_of(path, bytes)?;
    let bytes = &*bytes;
    match schema.as_deref() {
        Some(RESULTS_SCHEMA) => corpus.runs.push((label.to_string(), parse_json(path, bytes, RESULTS_SCHEMA)?)),
        Some(BASELINE_SCHEMA) => {
            let b = Baseline::parse(path, bytes)?;
            for (i, run) in b.runs.into_iter().enumerate() {
                corpus.runs.push((format!("{label}#{i}"), run));
            }
        }
        Some(other) => corpus.skipped.push(format!("{label} (schema {other})")),
        None => corpus.skipped.push(format!("{label} (not a results or baseline file)")),
    }
    Ok(())
}
