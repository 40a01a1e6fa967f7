//! The machine code of each stack, as listings on disk: every kernel source compiled with the
//! stack's own NVRTC (its CLI's `kernels --arch ARCH --out DIR --json`, in the stack's
//! environment, so with its NVRTC library), each cubin disassembled, one `<source>.sass` per
//! kernel source and the compile's provenance (`provenance.json`) beside them. A job re-judged
//! with `--from` reads the listings back and needs no disassembler.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::code::{Disassembler, FunctionCode, functions};
use super::stacks::PreparedStack;
use crate::error::{Error, Result};
use crate::results::{KernelProvenance, write_atomic};

/// A stack's listings: functions per kernel source ("stream.cu"), and how each was compiled.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Listings {
    /// Functions of each source's cubin.
    pub functions: BTreeMap<String, Vec<FunctionCode>>,
    /// The compile's provenance of each source, when recorded: its cubin hash must be the one
    /// the runs loaded for the listing to describe what ran.
    pub provenance: BTreeMap<String, KernelProvenance>,
}

impl Listings {
    /// Reads `<source stem>.sass` files and `provenance.json` from `dir`; `None` when the folder
    /// holds no listing.
    pub fn read(dir: &Path) -> Result<Option<Listings>> {
        let Ok(entries) = std::fs::read_dir(dir) else { return Ok(None) };
        let mut out = Listings::default();
        for e in entries.flatten() {
            let path = e.path();
            if path.extension().is_some_and(|x| x == "sass") {
                let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
                let stem = path.file_stem().unwrap_or_default().to_string_lossy();
                out.functions.insert(format!("{stem}.cu"), functions(&text));
            }
        }
        let prov = dir.join("provenance.json");
        if prov.is_file() {
            let text = std::fs::read(&prov).map_err(|e| Error::io(&prov, e))?;
            let list: Vec<KernelProvenance> = serde_json::from_slice(&text)
                .map_err(|e| Error::data(&prov, format!("not a provenance list ({e})")))?;
            out.provenance = list.into_iter().map(|p| (p.source.clone(), p)).collect();
        }
        Ok((!out.functions.is_empty()).then_some(out))
    }

    /// The functions of `source` when the listing describes the cubin with hash `cubin_sha256`
    /// (or records no hash).
    pub fn of(&self, source: &str, cubin_sha256: &str) -> Option<&[FunctionCode]> {
        let matches = self.provenance.get(source).is_none_or(|p| p.cubin_sha256 == cubin_sha256);
        self.functions.get(source).filter(|_| matches).map(Vec::as_slice)
    }
}

/// The listings folder of stack `label` for `arch` under the job's output folder:
/// `code/<arch>/<a|b>`.
pub fn dir(out: &Path, arch: &str, label: &str) -> PathBuf {
    out.join("code").join(arch).join(label.to_ascii_lowercase())
}

/// Compiles every kernel source with the stack's NVRTC for `arch` and disassembles each cubin
/// into `dir`. The compile needs no GPU. A failed compile is an error naming the stack (its exit
/// code is the CLI's: 3 for a missing or broken NVRTC, 4 for a kernel that does not compile).
pub fn compile(stack: &PreparedStack, arch: &str, dir: &Path, tool: &Disassembler) -> Result<()> {
    let cubins = dir.join("cubin");
    std::fs::create_dir_all(&cubins).map_err(|e| Error::io(&cubins, e))?;
    let out = Command::new(&stack.cli)
        .args(["kernels", "--arch", arch, "--json", "--out"])
        .arg(&cubins)
        .envs(stack.envs())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::io(&stack.cli, e))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let line = err.lines().rev().find_map(|l| l.strip_prefix("error: ")).unwrap_or("no output").to_string();
        let reason = format!("compiling the kernels for {arch} failed: {line}");
        return Err(match out.status.code() {
            Some(3) => Error::NvrtcLibrary {
                path: stack.nvrtc.clone().unwrap_or_else(|| "libnvrtc (the loader's)".into()),
                reason: format!("stack {}: {reason}", stack.label),
            },
            code => Error::BenchProcess {
                bench: format!("stack {} kernels", stack.label),
                reason,
                code: code.unwrap_or(crate::error::exit::BENCH_FAILURE),
            },
        });
    }
    write_atomic(&dir.join("provenance.json"), &out.stdout)?;
    let entries = std::fs::read_dir(&cubins).map_err(|e| Error::io(&cubins, e))?;
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().is_some_and(|x| x == "cubin") {
            let listing = tool.listing(&path)?;
            let stem = path.file_stem().unwrap_or_default().to_string_lossy().into_owned();
            write_atomic(&dir.join(format!("{stem}.sass")), listing.as_bytes())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listings_read_back_and_refuse_another_cubin() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("k.sass"), "\t\tFunction : k1\n        /*0000*/  EXIT ;\n").unwrap();
        let prov = KernelProvenance {
            source: "k.cu".into(),
            arch: "sm_90".into(),
            nvrtc_version: "13.0".into(),
            source_sha256: "s".into(),
            ptx_sha256: "p".into(),
            cubin_sha256: "c".into(),
        };
        std::fs::write(dir.path().join("provenance.json"), serde_json::to_vec(&[prov]).unwrap()).unwrap();
        let l = Listings::read(dir.path()).unwrap().unwrap();
        assert_eq!(l.of("k.cu", "c").unwrap()[0].name, "k1");
        assert!(l.of("k.cu", "other").is_none());
        assert!(Listings::read(&dir.path().join("none")).unwrap().is_none());
    }
}
