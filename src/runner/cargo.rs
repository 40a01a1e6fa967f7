//! Finding the workspace and building its bench targets through cargo's JSON messages (the way
//! cargo-nextest finds its test binaries).

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cargo_metadata::{Message, MetadataCommand, TargetKind};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A built bench executable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchBinary {
    /// Package that owns the target.
    pub package: String,
    /// Bench target name (for our targets, the family name).
    pub name: String,
    /// Path to the executable.
    pub path: PathBuf,
}

/// The cargo workspace a run belongs to.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// Folder of the workspace's Cargo.toml.
    pub root: PathBuf,
    /// Cargo's target folder.
    pub target_dir: PathBuf,
}

/// Describes the workspace around `manifest_path` (or the current folder).
pub fn workspace(manifest_path: Option<&Path>) -> Result<Workspace> {
    let mut cmd = MetadataCommand::new();
    cmd.no_deps();
    if let Some(p) = manifest_path {
        cmd.manifest_path(p);
    }
    let meta = cmd.exec().map_err(|e| Error::Cargo(first_line(&e.to_string())))?;
    Ok(Workspace {
        root: meta.workspace_root.into_std_path_buf(),
        target_dir: meta.target_directory.into_std_path_buf(),
    })
}

/// Cargo's own flags for building the bench targets, passed on as they are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CargoOptions {
    /// Packages whose bench targets to build (`-p`); every package of the workspace when empty.
    pub packages: Vec<String>,
    /// Features to activate (`--features`).
    pub features: Vec<String>,
    /// Cargo profile (`--profile`) [default: cargo's, `bench`].
    pub profile: Option<String>,
    /// When cargo colours its messages (`--color`: auto, always, never).
    pub color: Option<String>,
}

impl CargoOptions {
    /// The arguments of `cargo bench --no-run` after the subcommand: which packages and
    /// targets, features, profile and colour. `benches` limits the build to the named targets.
    pub fn bench_args(&self, benches: &[String]) -> Vec<String> {
        let mut args = Vec::new();
        if self.packages.is_empty() {
            args.push("--workspace".to_string());
        }
        for p in &self.packages {
            args.extend(["--package".to_string(), p.clone()]);
        }
        if benches.is_empty() {
            args.push("--benches".to_string());
        }
        for b in benches {
            args.extend(["--bench".to_string(), b.clone()]);
        }
        for f in &self.features {
            args.extend(["--features".to_string(), f.clone()]);
        }
        if let Some(p) = &self.profile {
            args.extend(["--profile".to_string(), p.clone()]);
        }
        if let Some(c) = &self.color {
            args.extend(["--color".to_string(), c.clone()]);
        }
        args
    }
}

/// Builds every bench target of the workspace (`cargo bench --no-run`) and returns the
/// executables, in cargo's order. `benches` limits the build to the named targets; `options`
/// are cargo's flags (packages, features, profile, colour).
pub fn build_benches(
    manifest_path: Option<&Path>,
    benches: &[String],
    options: &CargoOptions,
) -> Result<Vec<BenchBinary>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["bench", "--no-run", "--message-format", "json-render-diagnostics"]);
    if let Some(p) = manifest_path {
        cmd.arg("--manifest-path").arg(p);
    }
    cmd.args(options.bench_args(benches));
    cmd.stdout(Stdio::piped()).stderr(Stdio::inherit());
    let mut child = cmd.spawn().map_err(|e| Error::Cargo(format!("could not start cargo: {e}")))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let parsed = parse_bench_artifacts(std::io::BufReader::new(stdout));
    let status = child.wait().map_err(|e| Error::Cargo(format!("waiting for cargo: {e}")))?;
    if !status.success() {
        return Err(Error::Cargo("building the bench targets failed (cargo's errors are above)".into()));
    }
    parsed
}

/// Picks the bench executables out of cargo's JSON message stream.
pub fn parse_bench_artifacts(reader: impl BufRead) -> Result<Vec<BenchBinary>> {
    let mut out = Vec::new();
    for message in Message::parse_stream(reader) {
        let message = message.map_err(|e| Error::Cargo(format!("reading cargo's messages: {e}")))?;
        if let Message::CompilerArtifact(artifact) = message {
            if !artifact.target.kind.contains(&TargetKind::Bench) {
                continue;
            }
            if let Some(exe) = artifact.executable {
                out.push(BenchBinary {
                    package: package_name(&artifact.package_id.repr),
                    name: artifact.target.name.clone(),
                    path: exe.into_std_path_buf(),
                });
            }
        }
    }
    Ok(out)
}

/// The package name inside a package id: "path+file:///w/foo#0.1.0" -> "foo",
/// "path+file:///w/x#bar@0.1.0" -> "bar", "registry+...#baz@1.0" -> "baz".
fn package_name(id: &str) -> String {
    let (path, frag) = id.rsplit_once('#').unwrap_or((id, ""));
    match frag.split_once('@') {
        Some((name, _)) => name.to_string(),
        None => path.rsplit('/').next().unwrap_or(path).to_string(),
    }
}

fn first_line(s: &str) -> String {
    s.lines().find(|l| !l.trim().is_empty()).unwrap_or(s).trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::{CargoOptions, package_name};

    #[test]
    fn cargo_flags_are_passed_on() {
        let none = CargoOptions::default();
        assert_eq!(none.bench_args(&[]), ["--workspace", "--benches"]);
        assert_eq!(none.bench_args(&["dram".into()]), ["--workspace", "--bench", "dram"]);
        let all = CargoOptions {
            packages: vec!["mine".into()],
            features: vec!["a,b".into()],
            profile: Some("release".into()),
            color: Some("never".into()),
        };
        assert_eq!(
            all.bench_args(&[]),
            ["--package", "mine", "--benches", "--features", "a,b", "--profile", "release", "--color", "never"]
        );
    }

    #[test]
    fn package_names_come_out_of_package_ids() {
        assert_eq!(package_name("path+file:///work/main#0.1.0"), "main");
        assert_eq!(package_name("path+file:///work/main/cargo-gpubench#cargo-gpubench@0.1.0"), "cargo-gpubench");
        assert_eq!(package_name("registry+https://github.com/rust-lang/crates.io-index#serde@1.0.0"), "serde");
    }
}
