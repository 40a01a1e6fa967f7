//! Archives of results files: `.tar.gz` (`.tgz`) or `.tar.xz`, read whole.

use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};

/// The archive extensions read here.
const EXTENSIONS: [&str; 3] = [".tar.gz", ".tgz", ".tar.xz"];

/// Whether `path` names an archive this module reads.
pub fn is_tarball(path: &Path) -> bool {
    tarball_stem(path).is_some()
}

/// The file name of `path` without its archive extension ("host-a" for "host-a.tar.xz").
pub fn tarball_stem(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    EXTENSIONS.iter().find_map(|ext| name.strip_suffix(ext)).map(str::to_owned)
}

/// The `.json` members of the archive at `path`, as (name inside the archive, bytes), sorted by
/// name. A file that is not a readable archive is a data error naming it; so is a member larger
/// than [`super::document_limit`] once decompressed (1 GiB: [`super::MAX_DOCUMENT_BYTES`]), or
/// members that together are: nothing beyond the limit is held in memory.
pub fn json_members(path: &Path) -> Result<Vec<(String, Vec<u8>)>> {
    json_members_within(path, super::document_limit())
}

/// [`json_members`] with an explicit limit on each member and on all members together.
pub fn json_members_within(path: &Path, limit: u64) -> Result<Vec<(String, Vec<u8>)>> {
    let file = super::io::open_regular(path)?;
    let xz = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(".tar.xz"));
    let stream: Box<dyn Read> = if xz {
        Box::new(xz2::read::XzDecoder::new(std::io::BufReader::new(file)))
    } else {
        Box::new(flate2::read::GzDecoder::new(std::io::BufReader::new(file)))
    };
    let kind = if xz { ".tar.xz" } else { ".tar.gz" };
    let bad = |e: std::io::Error| Error::data(path, format!("not a readable {kind} ({e})"));
    let mut archive = tar::Archive::new(stream);
    let mut members = Vec::new();
    let mut total = 0u64;
    for entry in archive.entries().map_err(bad)? {
        let entry = entry.map_err(bad)?;
        let name = entry.path().map_err(bad)?.display().to_string();
        if !entry.header().entry_type().is_file() || !name.ends_with(".json") {
            continue;
        }
        let shown = |what: &str| {
            format!("member {name} {what} {} (the limit for one document)", super::io::describe_limit(limit))
        };
        if entry.size() > limit {
            return Err(Error::data(path, shown("is larger than")));
        }
        let mut bytes = Vec::new();
        entry.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(bad)?;
        total += bytes.len() as u64;
        if bytes.len() as u64 > limit {
            return Err(Error::data(path, shown("is larger than")));
        }
        if total > limit {
            return Err(Error::data(path, shown("brings the archive's JSON beyond")));
        }
        members.push((name, bytes));
    }
    members.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(members)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tar_of(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (name, bytes) in files {
            let mut h = tar::Header::new_gnu();
            h.set_size(bytes.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            b.append_data(&mut h, name, *bytes).unwrap();
        }
        b.into_inner().unwrap()
    }

    #[test]
    fn gzip_and_xz_archives_give_their_json_members_sorted() {
        let dir = tempfile::tempdir().unwrap();
        let tar = tar_of(&[("b.json", b"{}"), ("notes.txt", b"x"), ("a.json", b"[1]")]);
        let gz = dir.path().join("runs.tar.gz");
        std::fs::write(&gz, crate::results::gzipped(&tar)).unwrap();
        let xz = dir.path().join("runs.tar.xz");
        let mut enc = xz2::write::XzEncoder::new(Vec::new(), 6);
        std::io::Write::write_all(&mut enc, &tar).unwrap();
        std::fs::write(&xz, enc.finish().unwrap()).unwrap();
        for p in [&gz, &xz] {
            assert!(is_tarball(p));
            let m = json_members(p).unwrap();
            assert_eq!(m, vec![("a.json".to_string(), b"[1]".to_vec()), ("b.json".to_string(), b"{}".to_vec())]);
        }
        assert_eq!(tarball_stem(&xz).as_deref(), Some("runs"));
        assert!(!is_tarball(Path::new("runs.json.gz")));
    }

    #[test]
    fn a_broken_archive_is_a_data_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("broken.tar.xz");
        std::fs::write(&p, b"not xz").unwrap();
        let e = json_members(&p).unwrap_err().to_string();
        assert!(e.contains("broken.tar.xz") && e.contains("not a readable .tar.xz"), "{e}");
    }

    #[test]
    fn a_member_beyond_the_limit_is_refused_without_reading_it_whole() {
        let dir = tempfile::tempdir().unwrap();
        let big = vec![b' '; 5000];
        let tar = tar_of(&[("a.json", b"{}"), ("big.json", &big)]);
        let gz = dir.path().join("bomb.tar.gz");
        std::fs::write(&gz, crate::results::gzipped(&tar)).unwrap();
        let e = json_members_within(&gz, 4096).unwrap_err();
        assert_eq!(e.exit_code(), crate::error::exit::DATA);
        assert!(e.to_string().contains("member big.json is larger than 4096 bytes"), "{e}");
        let e = json_members_within(&gz, 5001).unwrap_err();
        assert!(e.to_string().contains("brings the archive's JSON beyond"), "{e}");
        assert_eq!(json_members_within(&gz, 6000).unwrap().len(), 2);
    }

    #[test]
    fn a_named_pipe_called_tar_gz_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("runs.tar.gz");
        if !std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
            return;
        }
        let e = json_members(&fifo).unwrap_err();
        assert!(e.to_string().ends_with("is a named pipe, not a regular file"), "{e}");
    }
}
