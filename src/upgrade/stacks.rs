//! The two software stacks of an upgrade job: an archive (the bench executables and the CLI,
//! from `cargo gpubench archive`), the NVRTC library its processes load, and extra environment.
//!
//! How a process is given another NVRTC: cudarc opens NVRTC by name at run time, trying
//! `libnvrtc.so`, then `libnvrtc.so.13`, then `libnvrtc.so.12` (among others), and the dynamic
//! loader searches `LD_LIBRARY_PATH` before the system's library cache. For a stack with an NVRTC
//! library, the job makes a folder of links by every one of those names to that file and puts it
//! first on the child's `LD_LIBRARY_PATH`, followed by the library's own folder (where NVRTC
//! finds its `libnvrtc-builtins`). Each run records the NVRTC version it loaded
//! (`stack.nvrtc_version`), so the reports show which one ran.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::results::read_json;
use crate::runner::archive::{self, ARCHIVE_ROOT, ARCHIVE_SCHEMA, ArchiveManifest};

/// Names cudarc tries for NVRTC, in its order (the first that loads wins).
pub const NVRTC_NAMES: [&str; 3] = ["libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"];

/// What the user asked for one side.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StackSpec {
    /// "A" or "B".
    pub label: String,
    /// An archive (.tar.gz or unpacked folder); `None`: the workspace's, built by the job.
    pub archive: Option<PathBuf>,
    /// The NVRTC library its processes load; `None`: whichever the loader finds.
    pub nvrtc: Option<PathBuf>,
    /// Extra environment of its processes.
    pub env: Vec<(String, String)>,
}

impl StackSpec {
    /// "archive a.tar.gz, NVRTC /opt/nvrtc12/libnvrtc.so.12, env CUDA_MODULE_LOADING=EAGER".
    pub fn describe(&self) -> String {
        let mut parts = vec![match &self.archive {
            Some(a) => format!("archive {}", a.display()),
            None => "this workspace".to_string(),
        }];
        if let Some(n) = &self.nvrtc {
            parts.push(format!("NVRTC {}", n.display()));
        }
        if !self.env.is_empty() {
            let env: Vec<String> = self.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
            parts.push(format!("env {}", env.join(" ")));
        }
        parts.join(", ")
    }
}

/// Parses `KEY=VALUE` (the key a shell variable name).
pub fn parse_env(text: &str) -> std::result::Result<(String, String), String> {
    let (k, v) = text.split_once('=').ok_or_else(|| format!("`{text}` is not KEY=VALUE"))?;
    let ok = !k.is_empty()
        && !k.starts_with(|c: char| c.is_ascii_digit())
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ok {
        return Err(format!("`{k}` is not an environment variable name"));
    }
    Ok((k.to_string(), v.to_string()))
}

/// A side ready to run: its CLI, archive folder and environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreparedStack {
    /// "A" or "B".
    pub label: String,
    /// What the user asked for, in words.
    pub description: String,
    /// The archive's CLI.
    pub cli: PathBuf,
    /// The unpacked archive (given to the CLI as `--archive`).
    pub root: PathBuf,
    /// Environment its processes get on top of this one's.
    pub env: Vec<(String, String)>,
    /// The NVRTC library its processes load, when one was named.
    #[serde(default)]
    pub nvrtc: Option<PathBuf>,
}

impl PreparedStack {
    /// The environment as the child process gets it.
    pub fn envs(&self) -> Vec<(OsString, OsString)> {
        self.env.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect()
    }
}

/// Checks what can be checked without running anything: the archive exists and the NVRTC
/// library is a file. One-line errors: exit 5 for an archive, 3 for a library.
pub fn check(spec: &StackSpec) -> Result<()> {
    if let Some(a) = &spec.archive
        && !a.exists()
    {
        return Err(Error::data(
            a,
            format!("stack {}: no such archive (make one with `cargo gpubench archive`)", spec.label),
        ));
    }
    if let Some(lib) = &spec.nvrtc {
        nvrtc_file(&spec.label, lib)?;
    }
    Ok(())
}

fn nvrtc_file(label: &str, lib: &Path) -> Result<PathBuf> {
    let real = std::fs::canonicalize(lib).map_err(|e| Error::NvrtcLibrary {
        path: lib.to_path_buf(),
        reason: format!("stack {label}: {}", io_reason(&e)),
    })?;
    if !real.is_file() {
        return Err(Error::NvrtcLibrary {
            path: lib.to_path_buf(),
            reason: format!("stack {label}: not a file (give the library itself, e.g. .../lib/libnvrtc.so.12)"),
        });
    }
    Ok(real)
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        _ => e.to_string(),
    }
}

/// Unpacks the archive (under `work/<label>`), checks that it holds the CLI, and makes the NVRTC
/// link folder; `workspace` is the archive to use when the spec names none.
pub fn prepare(spec: &StackSpec, work: &Path, workspace: Option<&Path>) -> Result<PreparedStack> {
    check(spec)?;
    let side = work.join(format!("stack-{}", spec.label.to_ascii_lowercase()));
    let archive = spec.archive.as_deref().or(workspace).ok_or_else(|| {
        Error::Usage(format!("stack {}: no archive given and none built from the workspace", spec.label))
    })?;
    // Runs start in their card's folder: the archive's paths must be absolute.
    let archive = &std::fs::canonicalize(archive).map_err(|e| Error::io(archive, e))?;
    let root = if archive.is_dir() {
        if archive.join("manifest.json").is_file() { archive.clone() } else { archive.join(ARCHIVE_ROOT) }
    } else {
        side.join("archive").join(ARCHIVE_ROOT)
    };
    archive::open(archive, &side.join("archive"))?;
    let manifest: ArchiveManifest = read_json(&root.join("manifest.json"), ARCHIVE_SCHEMA)?;
    let cli = manifest.cli.map(|c| root.join(c)).filter(|c| c.is_file()).ok_or_else(|| {
        Error::data(archive, format!("stack {}: the archive holds no CLI (bin/cargo-gpubench)", spec.label))
    })?;
    let mut env = spec.env.clone();
    if let Some(lib) = &spec.nvrtc {
        let real = nvrtc_file(&spec.label, lib)?;
        let links = side.join("nvrtc");
        if links.exists() {
            std::fs::remove_dir_all(&links).map_err(|e| Error::io(&links, e))?;
        }
        std::fs::create_dir_all(&links).map_err(|e| Error::io(&links, e))?;
        for name in NVRTC_NAMES {
            std::os::unix::fs::symlink(&real, links.join(name)).map_err(|e| Error::io(links.join(name), e))?;
        }
        let mut path = vec![links, real.parent().map(Path::to_path_buf).unwrap_or_default()];
        let inherited = env
            .iter()
            .find(|(k, _)| k == "LD_LIBRARY_PATH")
            .map(|(_, v)| OsString::from(v))
            .or_else(|| std::env::var_os("LD_LIBRARY_PATH"));
        if let Some(old) = inherited {
            path.extend(std::env::split_paths(&old));
        }
        let joined = std::env::join_paths(path).map_err(|e| Error::Usage(format!("LD_LIBRARY_PATH: {e}")))?;
        env.retain(|(k, _)| k != "LD_LIBRARY_PATH");
        env.push(("LD_LIBRARY_PATH".into(), joined.to_string_lossy().into_owned()));
    }
    Ok(PreparedStack {
        label: spec.label.clone(),
        description: spec.describe(),
        cli,
        root,
        env,
        nvrtc: spec.nvrtc.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_assignments_parse() {
        assert_eq!(parse_env("CUDA_MODULE_LOADING=EAGER"), Ok(("CUDA_MODULE_LOADING".into(), "EAGER".into())));
        assert_eq!(parse_env("A=b=c"), Ok(("A".into(), "b=c".into())));
        assert!(parse_env("novalue").is_err());
        assert!(parse_env("1X=2").is_err());
        assert!(parse_env("=2").is_err());
    }

    #[test]
    fn an_nvrtc_library_is_linked_by_every_name_and_put_first_on_the_loader_path() {
        let dir = tempfile::tempdir().unwrap();
        let arch = dir.path().join("arch").join(ARCHIVE_ROOT);
        std::fs::create_dir_all(arch.join("bin")).unwrap();
        std::fs::write(arch.join("bin/cargo-gpubench"), b"").unwrap();
        let manifest = ArchiveManifest {
            schema: ARCHIVE_SCHEMA.into(),
            tool_version: "0".into(),
            benches: Vec::new(),
            cli: Some("bin/cargo-gpubench".into()),
        };
        std::fs::write(arch.join("manifest.json"), serde_json::to_vec(&manifest).unwrap()).unwrap();
        let lib = dir.path().join("nv/lib/libnvrtc.so.12");
        std::fs::create_dir_all(lib.parent().unwrap()).unwrap();
        std::fs::write(&lib, b"").unwrap();
        let spec = StackSpec {
            label: "A".into(),
            archive: Some(dir.path().join("arch")),
            nvrtc: Some(lib.clone()),
            env: vec![("X".into(), "1".into())],
        };
        let s = prepare(&spec, &dir.path().join("work"), None).unwrap();
        assert_eq!(s.cli, arch.join("bin/cargo-gpubench"));
        let ld = &s.env.iter().find(|(k, _)| k == "LD_LIBRARY_PATH").unwrap().1;
        let first = PathBuf::from(ld.split(':').next().unwrap());
        for name in NVRTC_NAMES {
            assert_eq!(std::fs::canonicalize(first.join(name)).unwrap(), std::fs::canonicalize(&lib).unwrap());
        }
        assert!(ld.split(':').nth(1).unwrap().ends_with("nv/lib"));
        assert!(s.env.contains(&("X".into(), "1".into())));

        let missing = StackSpec { nvrtc: Some(dir.path().join("none.so")), ..spec.clone() };
        let e = prepare(&missing, &dir.path().join("work"), None).unwrap_err();
        assert_eq!(e.exit_code(), crate::error::exit::ENVIRONMENT);
        assert!(e.to_string().contains("no such file"), "{e}");
        let e = check(&StackSpec { archive: Some(dir.path().join("none.tar.gz")), ..spec }).unwrap_err();
        assert_eq!(e.exit_code(), crate::error::exit::DATA);
    }
}
