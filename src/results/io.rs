//! Reading and writing our JSON documents: atomic writes, strict schema checks on read. A
//! document may be stored gzip-compressed (`.json.gz`): readers recognise the gzip magic bytes.

use std::borrow::Cow;
use std::io::{Read, Write};
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

/// Writes `bytes` to `path` atomically: a temporary file in the same folder, flushed to disk,
/// then renamed over `path`. A reader sees the old file or the new one, never half of one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_checked(path, bytes, |_| Ok(()))
}

/// Like [`write_atomic`], but reads the temporary file back and hands its bytes to `check`
/// before the rename: a file that `check` refuses is removed and `path` stays as it was.
pub fn write_atomic_checked(path: &Path, bytes: &[u8], check: impl FnOnce(&[u8]) -> Result<()>) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::read(&tmp)
    })();
    let result = match written {
        Ok(back) => check(&back).and_then(|()| std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))),
        Err(e) => Err(Error::io(path, e)),
    };
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
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
    check_regular_file(path)?;
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    parse_json(path, &bytes, schema)
}

/// Largest document a gzip stream may expand to (a baseline of many runs is tens of MB).
const MAX_DECOMPRESSED_BYTES: u64 = 4 << 30;

/// The bytes of a stored document: a gzip stream (recognised by its magic bytes) decompressed,
/// anything else as it is. A broken or oversized stream is a data error naming `path`.
pub fn decompressed<'a>(path: &Path, bytes: &'a [u8]) -> Result<Cow<'a, [u8]>> {
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Ok(Cow::Borrowed(bytes));
    }
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .take(MAX_DECOMPRESSED_BYTES + 1)
        .read_to_end(&mut out)
        .map_err(|e| Error::data(path, format!("not a readable gzip stream ({e})")))?;
    if out.len() as u64 > MAX_DECOMPRESSED_BYTES {
        return Err(Error::data(path, format!("expands beyond {} GiB", MAX_DECOMPRESSED_BYTES >> 30)));
    }
    Ok(Cow::Owned(out))
}

/// `bytes` as a gzip stream, for a document stored as `.json.gz`.
pub fn gzipped(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing to a Vec cannot fail.
    enc.write_all(bytes).and_then(|()| enc.finish()).unwrap_or_default()
}

/// Whether `path` names a gzip-compressed document (`.gz`).
pub fn is_gzipped_name(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "gz")
}

/// Parses `bytes` as [`read_json`] does (`path` only names the source in errors); a gzip
/// stream is decompressed first.
pub fn parse_json<T: DeserializeOwned>(path: &Path, bytes: &[u8], schema: &str) -> Result<T> {
    let bytes = decompressed(path, bytes)?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
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

/// Refuses at once anything but a regular file (after following links): a named pipe would
/// block the read forever, a device would never end, a folder is not a document. A missing
/// file is the I/O error "No such file or directory".
pub fn check_regular_file(path: &Path) -> Result<()> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    let ft = meta.file_type();
    if ft.is_file() {
        return Ok(());
    }
    let what = if ft.is_dir() {
        "a folder"
    } else {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            "a named pipe"
        } else if ft.is_char_device() || ft.is_block_device() {
            "a device"
        } else if ft.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        }
    };
    Err(Error::data(path, format!("is {what}, not a regular file")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_write_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.json");
        write_atomic(&path, b"old").unwrap();
        let e = write_atomic_checked(&path, b"new", |back| {
            assert_eq!(back, b"new");
            Err(Error::data("x", "refused"))
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "x: refused");
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        write_atomic_checked(&path, b"new", |_| Ok(())).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
    }

    #[test]
    fn folders_and_named_pipes_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let e = check_regular_file(dir.path()).unwrap_err();
        assert!(e.to_string().ends_with("is a folder, not a regular file"), "{e}");
        let fifo = dir.path().join("p");
        let status = std::process::Command::new("mkfifo").arg(&fifo).status();
        if status.is_ok_and(|s| s.success()) {
            let e = read_json::<serde_json::Value>(&fifo, "x").unwrap_err();
            assert!(e.to_string().ends_with("is a named pipe, not a regular file"), "{e}");
            assert_eq!(e.exit_code(), crate::error::exit::DATA);
        }
        let e = check_regular_file(Path::new("/dev/null")).unwrap_err();
        assert!(e.to_string().ends_with("is a device, not a regular file"), "{e}");
    }
}
