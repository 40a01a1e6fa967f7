//! Reading a fleet's files: results and baseline JSON files, folders of them (searched
//! recursively), `.tar.gz` / `.tar.xz` archives of them, and node status files written by the batch recipe.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::baseline::BASELINE_SCHEMA;
use crate::error::{Error, Result};
use crate::results::{RESULTS_SCHEMA, ResultsDocument, is_tarball, json_members, parse_json, tarball_stem};

/// Schema tag of a [`NodeStatus`] file.
pub const NODE_SCHEMA: &str = "gpubench.node/1";

/// How one node's run ended, written by the batch recipe next to its results
/// (`<shared>/<host>/node.json`): a failed node has no results to judge, only a reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeStatus {
    /// Always [`NODE_SCHEMA`].
    pub schema: String,
    /// Short host name.
    pub host: String,
    /// Exit code of `cargo gpubench --device all` on the node.
    pub exit_code: i32,
    /// One line: the run's error message, empty on success.
    #[serde(default)]
    pub reason: String,
}

/// One run read from somewhere.
#[derive(Debug, Clone)]
pub struct LoadedRun {
    /// Where it came from: a path, or "archive.tar.gz:entry".
    pub origin: String,
    /// The host, taken from the folder the file lies in (the recipe's `<shared>/<host>/` layout).
    pub host: Option<String>,
    /// The run.
    pub doc: ResultsDocument,
}

/// Everything read from the arguments.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// Every run, in the order found.
    pub runs: Vec<LoadedRun>,
    /// Node status files.
    pub nodes: Vec<NodeStatus>,
    /// Files inside folders that were not ours (other JSON), with why they were skipped.
    pub skipped: Vec<(String, String)>,
}

/// Reads every path: a file named on the command line must be a results, baseline or node
/// status file or a `.tar.gz` / `.tar.xz` of results (else [`Error::Data`]); in folders, JSON files of
/// other schemas are skipped and listed, while a corrupt file of ours is still an error.
pub fn load(paths: &[PathBuf]) -> Result<Loaded> {
    let mut loaded = Loaded::default();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| Error::io(p, e))?;
        if meta.is_dir() {
            walk(p, &mut loaded)?;
        } else {
            read_file(p, &mut loaded, true)?;
        }
    }
    Ok(loaded)
}

fn walk(dir: &Path, loaded: &mut Loaded) -> Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| !p.file_name().and_then(|n| n.to_str()).unwrap_or(".").starts_with('.'))
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, loaded)?;
        } else if is_json(&p) || is_tarball(&p) {
            read_file(&p, loaded, false)?;
        }
    }
    Ok(())
}

fn is_json(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "json")
}

fn host_of(p: &Path) -> Option<String> {
    p.parent().and_then(|d| d.file_name()).and_then(|n| n.to_str()).map(str::to_owned)
}

fn read_file(p: &Path, loaded: &mut Loaded, named: bool) -> Result<()> {
    if is_tarball(p) {
        return read_tarball(p, loaded);
    }
    let bytes = std::fs::read(p).map_err(|e| Error::io(p, e))?;
    take(p, &p.display().to_string(), host_of(p), &bytes, named, loaded)
}

/// Files our own of `bytes` go into `loaded`; others are skipped (or, when `named` on the
/// command line, refused).
fn take(p: &Path, origin: &str, host: Option<String>, bytes: &[u8], named: bool, loaded: &mut Loaded) -> Result<()> {
    let bytes = &*crate::results::decompressed(p, bytes)?;
    let value = serde_json::from_slice::<serde_json::Value>(bytes).ok();
    let schema = value.as_ref().and_then(|v| v.get("schema").and_then(|s| s.as_str()).map(str::to_owned));
    match schema.as_deref() {
        Some(NODE_SCHEMA) => loaded.nodes.push(parse_json(p, bytes, NODE_SCHEMA)?),
        Some(RESULTS_SCHEMA) => {
            let doc = parse_json(p, bytes, RESULTS_SCHEMA)?;
            loaded.runs.push(LoadedRun { origin: origin.to_string(), host, doc });
        }
        Some(BASELINE_SCHEMA) => {
            for doc in crate::baseline::Baseline::parse(p, bytes)?.runs {
                loaded.runs.push(LoadedRun { origin: origin.to_string(), host: host.clone(), doc });
            }
        }
        Some(other) if !named => loaded.skipped.push((origin.to_string(), format!("schema `{other}`"))),
        None if !named && value.is_some() => {
            loaded.skipped.push((origin.to_string(), "JSON without a `schema` field".into()))
        }
        // Named on the command line, or unparsable: the results reader says what is wrong.
        _ => {
            parse_json::<ResultsDocument>(p, bytes, RESULTS_SCHEMA)?;
        }
    }
    Ok(())
}

fn read_tarball(p: &Path, loaded: &mut Loaded) -> Result<()> {
    let before = loaded.runs.len();
    let host = tarball_stem(p);
    for (name, bytes) in json_members(p)? {
        let origin = format!("{}:{name}", p.display());
        take(Path::new(&origin), &origin, host.clone(), &bytes, false, loaded)?;
    }
    if loaded.runs.len() == before {
        return Err(Error::data(p, "the archive holds no results JSON"));
    }
    Ok(())
}
