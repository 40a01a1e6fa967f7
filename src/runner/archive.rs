//! Archives of built bench executables (and the CLI) for GPU machines without a Rust
//! toolchain, in the manner of `cargo nextest archive`.
//!
//! Layout of the `.tar.gz`: `gpubench-archive/manifest.json`, `gpubench-archive/bin/cargo-gpubench`,
//! `gpubench-archive/benches/<name>`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::cargo::BenchBinary;
use crate::error::{Error, Result};
use crate::results::{read_json, write_atomic};

/// Schema tag of the archive manifest.
pub const ARCHIVE_SCHEMA: &str = "gpubench.archive/1";
/// Top folder inside the archive.
pub const ARCHIVE_ROOT: &str = "gpubench-archive";

/// `manifest.json` of an archive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArchiveManifest {
    /// Always [`ARCHIVE_SCHEMA`].
    pub schema: String,
    /// gpubench version that made it.
    pub tool_version: String,
    /// Bench executables, paths relative to the archive root.
    pub benches: Vec<BenchBinary>,
    /// The CLI, relative to the archive root, if included.
    pub cli: Option<PathBuf>,
}

/// Writes a `.tar.gz` archive of `benches` (and `cli`) to `out`, atomically.
pub fn create(out: &Path, benches: &[BenchBinary], cli: Option<&Path>) -> Result<ArchiveManifest> {
    let mut entries: Vec<(PathBuf, &Path)> = Vec::new();
    let mut listed = Vec::new();
    for b in benches {
        let rel = PathBuf::from("benches").join(&b.name);
        entries.push((rel.clone(), &b.path));
        listed.push(BenchBinary { package: b.package.clone(), name: b.name.clone(), path: rel });
    }
    let cli_rel = cli.map(|c| {
        let rel = PathBuf::from("bin").join("cargo-gpubench");
        entries.push((rel.clone(), c));
        rel
    });
    let manifest = ArchiveManifest {
        schema: ARCHIVE_SCHEMA.into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        benches: listed,
        cli: cli_rel,
    };
    let mut bytes = Vec::new();
    {
        let gz = flate2::write::GzEncoder::new(&mut bytes, flate2::Compression::default());
        let mut tar = tar::Builder::new(gz);
        let json = serde_json::to_vec_pretty(&manifest).expect("manifest serialises");
        let mut header = tar::Header::new_gnu();
        header.set_size(json.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, format!("{ARCHIVE_ROOT}/manifest.json"), json.as_slice())
            .map_err(|e| Error::io(out, e))?;
        for (rel, src) in &entries {
            tar.append_path_with_name(src, Path::new(ARCHIVE_ROOT).join(rel)).map_err(|e| Error::io(*src, e))?;
        }
        let gz = tar.into_inner().map_err(|e| Error::io(out, e))?;
        gz.finish().map_err(|e| Error::io(out, e))?;
    }
    write_atomic(out, &bytes)?;
    Ok(manifest)
}

/// Opens an archive: a `.tar.gz` is unpacked under `scratch`, a folder is used as it is.
/// Returns the bench executables with absolute paths.
pub fn open(path: &Path, scratch: &Path) -> Result<Vec<BenchBinary>> {
    let root = if path.is_dir() {
        if path.join("manifest.json").is_file() { path.to_path_buf() } else { path.join(ARCHIVE_ROOT) }
    } else {
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
        tar.set_preserve_permissions(true);
        std::fs::create_dir_all(scratch).map_err(|e| Error::io(scratch, e))?;
        tar.unpack(scratch).map_err(|e| Error::data(path, format!("not a readable gpubench archive ({e})")))?;
        scratch.join(ARCHIVE_ROOT)
    };
    let manifest: ArchiveManifest = read_json(&root.join("manifest.json"), ARCHIVE_SCHEMA)?;
    manifest
        .benches
        .into_iter()
        .map(|b| {
            let abs = root.join(&b.path);
            if !abs.is_file() {
                return Err(Error::data(
                    path,
                    format!("the archive lists {} but does not contain it", b.path.display()),
                ));
            }
            Ok(BenchBinary { path: abs, ..b })
        })
        .collect()
}
