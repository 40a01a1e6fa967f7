//! Reading and writing our JSON documents: atomic writes, strict schema checks on read. A
//! document may be stored compressed, gzip (`.json.gz`) or xz (`.json.xz`, a third smaller for
//! results): readers recognise the magic bytes, writers compress by the file's name.

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
    remove_stale_temporaries(dir, name);
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

/// Removes the temporary files (`.NAME.tmp-PID`) that saves of `name` in `dir` left behind
/// when they were killed: those whose process is gone. Another process's save in progress is
/// left alone.
pub fn remove_stale_temporaries(dir: &Path, name: &str) {
    let prefix = format!(".{name}.tmp-");
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(pid) = file.to_str().and_then(|f| f.strip_prefix(&prefix)).and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let alive = pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists();
        if !alive && e.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Serialises `value` as pretty JSON and writes it atomically.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let mut bytes = super::numbers::to_json_bytes(value, true).expect("our documents always serialise");
    bytes.push(b'\n');
    write_atomic(path, &bytes)
}

/// Serialises `value` as compact JSON (one line) and writes it atomically: for large documents
/// such as baselines, where indentation would double the size.
pub fn write_json_compact<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let mut bytes = super::numbers::to_json_bytes(value, false).expect("our documents always serialise");
    bytes.push(b'\n');
    write_atomic(path, &bytes)
}

/// Reads a JSON document whose top-level `schema` field must equal `schema`.
///
/// A missing file is an I/O error; an unparsable, truncated or foreign file is a data error
/// that names the file and what is wrong with it.
pub fn read_json<T: DeserializeOwned>(path: &Path, schema: &str) -> Result<T> {
    let bytes = read_document(path)?;
    parse_json(path, &bytes, schema)
}

/// Largest document gpubench reads, after decompression: 1 GiB (a baseline of many runs is
/// tens of MB). A file, a gzip stream or an archive member that is larger is refused without
/// holding more than this much in memory.
pub const MAX_DOCUMENT_BYTES: u64 = 1 << 30;

/// Lowers [`MAX_DOCUMENT_BYTES`] (a number of bytes; values above it are ignored).
pub const ENV_MAX_DOCUMENT_BYTES: &str = "GPUBENCH_MAX_DOCUMENT_BYTES";

/// The limit in force: [`MAX_DOCUMENT_BYTES`], or less where [`ENV_MAX_DOCUMENT_BYTES`] says so.
pub fn document_limit() -> u64 {
    std::env::var(ENV_MAX_DOCUMENT_BYTES)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(MAX_DOCUMENT_BYTES, |v| v.min(MAX_DOCUMENT_BYTES))
}

/// "1 GiB", "512 MiB", "1000 bytes": a limit as the error messages give it.
pub fn describe_limit(limit: u64) -> String {
    if limit >= 1 << 30 && limit % (1 << 30) == 0 {
        format!("{} GiB", limit >> 30)
    } else if limit >= 1 << 20 && limit % (1 << 20) == 0 {
        format!("{} MiB", limit >> 20)
    } else {
        format!("{limit} bytes")
    }
}

/// Reads `reader` to its end, refusing (a data error naming `path`, with `what` the kind of
/// content: "the file", "the gzip stream") anything beyond `limit` bytes without holding more
/// than `limit + 1` bytes.
pub fn read_to_end_limited(path: &Path, reader: impl Read, limit: u64, what: &str) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    reader.take(limit.saturating_add(1)).read_to_end(&mut out).map_err(|e| {
        if what == "the file" {
            Error::io(path, e)
        } else if what == "the gzip stream" {
            Error::data(path, format!("not a readable gzip stream ({e})"))
        } else {
            Error::data(path, format!("{what} is not readable ({e})"))
        }
    })?;
    if out.len() as u64 > limit {
        let why = if what == "the file" {
            format!("is larger than {} (the limit for one document)", describe_limit(limit))
        } else {
            format!("{what} expands beyond {} (the limit for one document)", describe_limit(limit))
        };
        return Err(Error::data(path, why));
    }
    Ok(out)
}

/// Opens `path` for reading, refusing anything but a regular file at once (following links): a
/// named pipe is opened without blocking and refused, never read.
pub fn open_regular(path: &Path) -> Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK: opening a FIFO without a writer returns at once instead of waiting for one.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.file_type().is_file() {
        return Err(not_regular(path, meta.file_type()));
    }
    Ok(file)
}

/// The bytes of the document at `path`: a regular file of at most [`document_limit`] bytes,
/// decompressed (within the same limit) where it is a gzip stream. The one reader of results,
/// baseline and other JSON input files.
pub fn read_document(path: &Path) -> Result<Vec<u8>> {
    read_document_within(path, document_limit())
}

/// [`read_document`] with an explicit limit.
pub fn read_document_within(path: &Path, limit: u64) -> Result<Vec<u8>> {
    let mut reader = std::io::BufReader::new(open_regular(path)?);
    let head = std::io::BufRead::fill_buf(&mut reader).map_err(|e| Error::io(path, e))?;
    if head.starts_with(GZIP_MAGIC) {
        read_to_end_limited(path, flate2::read::MultiGzDecoder::new(reader), limit, "the gzip stream")
    } else if head.starts_with(XZ_MAGIC) {
        read_to_end_limited(path, xz2::read::XzDecoder::new_multi_decoder(reader), limit, "the xz stream")
    } else {
        read_to_end_limited(path, reader, limit, "the file")
    }
}

const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b];
const XZ_MAGIC: &[u8] = &[0xfd, b'7', b'z', b'X', b'Z', 0x00];

/// The bytes of a stored document: a gzip or xz stream (recognised by its magic bytes)
/// decompressed, anything else as it is. A broken stream, or one larger than
/// [`document_limit`] once decompressed, is a data error naming `path`.
pub fn decompressed<'a>(path: &Path, bytes: &'a [u8]) -> Result<Cow<'a, [u8]>> {
    if bytes.starts_with(GZIP_MAGIC) {
        read_to_end_limited(path, flate2::read::MultiGzDecoder::new(bytes), document_limit(), "the gzip stream")
            .map(Cow::Owned)
    } else if bytes.starts_with(XZ_MAGIC) {
        read_to_end_limited(path, xz2::read::XzDecoder::new_multi_decoder(bytes), document_limit(), "the xz stream")
            .map(Cow::Owned)
    } else {
        Ok(Cow::Borrowed(bytes))
    }
}

/// `bytes` as a gzip stream, for a document stored as `.json.gz`.
pub fn gzipped(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing to a Vec cannot fail.
    enc.write_all(bytes).and_then(|()| enc.finish()).unwrap_or_default()
}

/// `bytes` as an xz stream (preset 9, deterministic), for a document stored as `.json.xz`.
pub fn xz_compressed(bytes: &[u8]) -> Vec<u8> {
    let mut enc = xz2::write::XzEncoder::new(Vec::new(), 9);
    // Writing to a Vec cannot fail.
    enc.write_all(bytes).and_then(|()| enc.finish()).unwrap_or_default()
}

/// `bytes` as the file `path` stores them: gzip for `.gz`, xz for `.xz`, else as they are.
pub fn stored_as(path: &Path, bytes: Vec<u8>) -> Vec<u8> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("gz") => gzipped(&bytes),
        Some("xz") => xz_compressed(&bytes),
        _ => bytes,
    }
}

/// Whether a file name is a JSON document's: `*.json`, `*.json.gz` or `*.json.xz`.
pub fn is_document_name(name: &str) -> bool {
    name.ends_with(".json") || name.ends_with(".json.gz") || name.ends_with(".json.xz")
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
    if meta.file_type().is_file() { Ok(()) } else { Err(not_regular(path, meta.file_type())) }
}

/// What a file that is not a regular file is: "a folder", "a named pipe", "a device", ...
pub fn kind_of(ft: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_file() {
        "a regular file"
    } else if ft.is_dir() {
        "a folder"
    } else if ft.is_symlink() {
        "a symbolic link"
    } else if ft.is_fifo() {
        "a named pipe"
    } else if ft.is_char_device() || ft.is_block_device() {
        "a device"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "an unknown kind of file"
    }
}

fn not_regular(path: &Path, ft: std::fs::FileType) -> Error {
    Error::data(path, format!("is {}, not a regular file", kind_of(ft)))
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

    #[test]
    fn temporaries_of_killed_saves_are_removed_by_the_next_save() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.json");
        // No process has pid 4294967295; pid 1 always runs.
        let stale = dir.path().join(".b.json.tmp-4294967295");
        let live = dir.path().join(".b.json.tmp-1");
        let other = dir.path().join(".c.json.tmp-4294967295");
        for p in [&stale, &live, &other] {
            std::fs::write(p, b"half").unwrap();
        }
        write_atomic(&path, b"new").unwrap();
        assert!(!stale.exists() && live.exists() && other.exists());
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
    }

    #[test]
    fn a_named_pipe_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("p.json.gz");
        if !std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
            return;
        }
        let started = std::time::Instant::now();
        let e = read_document(&fifo).unwrap_err();
        assert!(e.to_string().ends_with("is a named pipe, not a regular file"), "{e}");
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        let e = open_regular(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().ends_with("is a device, not a regular file"), "{e}");
    }

    #[test]
    fn documents_read_back_plain_gzipped_or_xz_compressed_by_their_name() {
        let dir = tempfile::tempdir().unwrap();
        let text = br#"{"a": [1, 2, 3]}"#.to_vec();
        for name in ["d.json", "d.json.gz", "d.json.xz"] {
            let path = dir.path().join(name);
            std::fs::write(&path, stored_as(&path, text.clone())).unwrap();
            assert_eq!(read_document(&path).unwrap(), text, "{name}");
            let raw = std::fs::read(&path).unwrap();
            assert_eq!(decompressed(&path, &raw).unwrap().as_ref(), &text[..], "{name}");
            assert!(is_document_name(name));
        }
        assert_ne!(std::fs::read(dir.path().join("d.json.xz")).unwrap(), text);
        assert!(!is_document_name("d.json.bz2"));
    }

    #[test]
    fn documents_beyond_the_limit_are_refused_plain_or_gzipped() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("a.json");
        std::fs::write(&plain, vec![b' '; 2000]).unwrap();
        assert_eq!(read_document_within(&plain, 2000).unwrap().len(), 2000);
        let e = read_document_within(&plain, 1999).unwrap_err();
        assert!(e.to_string().ends_with("is larger than 1999 bytes (the limit for one document)"), "{e}");
        // A bomb: 64 KiB of gzip that expands to 64 MiB.
        let bomb = dir.path().join("b.json.gz");
        std::fs::write(&bomb, gzipped(&vec![b' '; 64 << 20])).unwrap();
        assert!(std::fs::metadata(&bomb).unwrap().len() < 1 << 20);
        let e = read_document_within(&bomb, 1 << 20).unwrap_err();
        assert_eq!(e.exit_code(), crate::error::exit::DATA);
        assert!(e.to_string().ends_with("the gzip stream expands beyond 1 MiB (the limit for one document)"), "{e}");
        assert_eq!(read_document_within(&bomb, 64 << 20).unwrap().len(), 64 << 20);
        assert_eq!(describe_limit(MAX_DOCUMENT_BYTES), "1 GiB");
    }
}
