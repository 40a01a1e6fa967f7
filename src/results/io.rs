//! Reading and writing our JSON documents: atomic writes, strict schema checks on read.

use std::io::Write;
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

/// Writes `bytes` to `path` atomically: a temporary file in the same folder, flushed to disk,
/// then renamed over `path`. A reader sees the old file or the new one, never half of one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(path, e));
    }
    Ok(())
}

/// Serialises `value` as pretty JSON and writes it atomically.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("our documents always serialise");
    bytes.push(b'\n');
    write_atomic(path, &bytes)
}

/// Serialises `value` as compact JSON (one line) and writes it atomically: for large documents
/// such as baselines, where indentation would double the size.
pub fn write_json_compact<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let mut bytes = serde_json::to_vec(value).expect("our documents always serialise");
    bytes.push(b'\n');
    write_atomic(path, &bytes)
}

/// Reads a JSON document whose top-level `schema` field must equal `schema`.
///
/// A missing file is an I/O error; an unparsable, truncated or foreign file is a data error
/// that names the file and what is wrong with it.
pub fn read_json<T: DeserializeOwned>(path: &Path, schema: &str) -> Result<T> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    parse_json(path, &bytes, schema)
}

/// Parses `bytes` as [`read_json`] does (`path` only names the source in errors).
pub fn parse_json<T: DeserializeOwned>(path: &Path, bytes: &[u8], schema: &str) -> Result<T> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        let what = if e.is_eof() { "truncated JSON" } else { "not valid JSON" };
        Error::data(path, format!("{what} ({e})"))
    })?;
    match value.get("schema").and_then(|s| s.as_str()) {
        Some(s) if s == schema => {}
        Some(other) => {
            return Err(Error::data(path, format!("schema is `{other}`, expected `{schema}`")));
        }
        None => return Err(Error::data(path, format!("no `schema` field: not a {schema} file"))),
    }
    serde_json::from_value(value).map_err(|e| Error::data(path, format!("does not match schema {schema}: {e}")))
}
