//! Reading a fleet's files: results and baseline JSON files, folders of them (searched
//! recursively), `.tar.gz` / `.tar.xz` archives of them, and node status files written by the batch recipe.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::baseline::BASELINE_SCHEMA;
use crate::error::{Error, Result};
use crate::results::{RESULTS_SCHEMA, ResultsDocument, is_tarball, parse_json};

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
    /// What was read but changed or left out on the way (a node status with control
    /// characters or an invalid host name), one line each.
    pub warnings: Vec<String>,
}

/// Reads every path: a file named on the command line must be a results, baseline or node
/// status file or a `.tar.gz` / `.tar.xz` of results (else [`Error::Data`]); in folders, JSON files of
/// other schemas, named pipes and other files that are not regular files are skipped and
/// listed, symbolic links to folders are not followed ([`crate::results::scan`]), while a
/// corrupt file of ours is still an error. Every run must have finite statistics
/// ([`crate::results::check_finite`]).
pub fn load(paths: &[PathBuf]) -> Result<Loaded> {
    let mut loaded = Loaded::default();
    let mut skipped = Vec::new();
    let mut archives: Vec<(String, usize)> = Vec::new();
    crate::results::scan::scan(paths, &mut skipped, &mut |input| {
        if let Some((archive, _)) = input.origin.split_once(".tar.") {
            if archives.last().is_none_or(|(a, _)| a != archive) {
                archives.push((archive.to_string(), 0));
            }
            let before = loaded.runs.len();
            take(&input.path, &input.origin, input.host, &input.bytes, input.named, &mut loaded)?;
            if let Some(last) = archives.last_mut() {
                last.1 += loaded.runs.len() - before;
            }
            return Ok(());
        }
        take(&input.path, &input.origin, input.host, &input.bytes, input.named, &mut loaded)
    })?;
    loaded.skipped.extend(skipped);
    // A named archive without runs is a mistake worth an error.
    for p in paths.iter().filter(|p| is_tarball(p) && !p.is_dir()) {
        let stem = p.display().to_string();
        let stem = stem.split_once(".tar.").map_or(stem.as_str(), |(a, _)| a).to_string();
        if !archives.iter().any(|(a, n)| *a == stem && *n > 0) {
            return Err(Error::data(p, "the archive holds no results JSON"));
        }
    }
    Ok(loaded)
}

/// Files our own of `bytes` go into `loaded`; others are skipped (or, when `named` on the
/// command line, refused).
fn take(p: &Path, origin: &str, host: Option<String>, bytes: &[u8], named: bool, loaded: &mut Loaded) -> Result<()> {
    let mut value = serde_json::from_slice::<serde_json::Value>(bytes).ok();
    let mut repaired = None;
    if value.is_none() {
        // A node status written by a shell with a raw control character in its reason is not
        // JSON; read it with the character escaped rather than fail the whole fleet.
        let escaped = escape_controls_in_strings(bytes);
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&escaped)
            && v.get("schema").and_then(|s| s.as_str()) == Some(NODE_SCHEMA)
        {
            value = Some(v);
            repaired = Some(escaped);
        }
    }
    let bytes = repaired.as_deref().unwrap_or(bytes);
    let schema = value.as_ref().and_then(|v| v.get("schema").and_then(|s| s.as_str()).map(str::to_owned));
    let checked = |doc: ResultsDocument| -> Result<ResultsDocument> {
        crate::results::check_finite(&doc).map_err(|why| Error::data(p, why))?;
        Ok(doc)
    };
    match schema.as_deref() {
        Some(NODE_SCHEMA) => {
            let node: NodeStatus = parse_json(p, bytes, NODE_SCHEMA)?;
            match node.checked() {
                Ok((node, note)) => {
                    if let Some(note) = note {
                        loaded.warnings.push(format!("{origin}: {note}"));
                    }
                    loaded.nodes.push(node);
                }
                Err(why) => {
                    loaded.warnings.push(format!("{origin}: node status left out: {why}"));
                    loaded.skipped.push((origin.to_string(), format!("node status left out: {why}")));
                }
            }
        }
        Some(RESULTS_SCHEMA) => {
            let doc = checked(parse_json(p, bytes, RESULTS_SCHEMA)?)?;
            loaded.runs.push(LoadedRun { origin: origin.to_string(), host, doc });
        }
        Some(BASELINE_SCHEMA) => {
            for doc in crate::baseline::Baseline::parse(p, bytes)?.runs {
                let doc = checked(doc)?;
                loaded.runs.push(LoadedRun { origin: origin.to_string(), host: host.clone(), doc });
            }
        }
        Some(other) if !named => loaded.skipped.push((origin.to_string(), format!("schema `{other}`"))),
        None if !named && value.is_some() => {
            loaded.skipped.push((origin.to_string(), "JSON without a `schema` field".into()))
        }
        // Named on the command line, or unparsable: the results reader says what is wrong.
        // (A node status named directly is read as it is.)
        _ => {
            parse_json::<ResultsDocument>(p, bytes, RESULTS_SCHEMA)?;
        }
    }
    Ok(())
}

impl NodeStatus {
    /// The status when its host is a valid host name (else why not), its reason's control
    /// characters (a line break would forge report lines) replaced by spaces, with a note
    /// saying so.
    pub fn checked(mut self) -> std::result::Result<(Self, Option<String>), String> {
        if !valid_host_name(&self.host) {
            return Err(format!("host {:?} is not a valid host name", self.host));
        }
        let mut note = None;
        if self.reason.chars().any(char::is_control) {
            note = Some(format!("control characters in the reason of host {} replaced by spaces", self.host));
            self.reason = self.reason.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
        }
        Ok((self, note))
    }
}

/// `bytes` with every control character inside a JSON string written as a `\u00XX` escape
/// (JSON forbids them raw); the rest as it is.
fn escape_controls_in_strings(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let (mut in_string, mut escaped) = (false, false);
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            } else if b < 0x20 {
                out.extend_from_slice(format!("\\u{b:04x}").as_bytes());
                continue;
            }
        } else if b == b'"' {
            in_string = true;
        }
        out.push(b);
    }
    out
}

/// A host name as DNS allows it (RFC 1123): labels of letters, digits and inner hyphens, 1-63
/// characters each, separated by dots, 253 characters at most. Safe to put on a command line.
pub fn valid_host_name(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}
