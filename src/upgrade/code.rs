//! Did the code that ran change between the two stacks? Per kernel function: the whole machine
//! code, and the executed inner loop ([`super::loops`]), read from `cuobjdump -sass` or
//! `nvdisasm` listings; per kernel source, where no listing exists, the cubin's SHA-256.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::loops::{self, LoopBody};
use super::sass::{self, Function};
use crate::error::{Error, Result};
use crate::results::KernelProvenance;

/// A disassembler found on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disassembler {
    /// `cuobjdump` (run as `cuobjdump -sass FILE`) or `nvdisasm` (`nvdisasm FILE`).
    pub path: PathBuf,
}

impl Disassembler {
    /// `cuobjdump`, else `nvdisasm`, on the PATH or in `$CUDA_HOME/bin` or `$CUDA_PATH/bin`.
    pub fn find() -> Option<Disassembler> {
        let mut dirs: Vec<PathBuf> =
            std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
        for var in ["CUDA_HOME", "CUDA_PATH"] {
            if let Some(d) = std::env::var_os(var) {
                dirs.push(PathBuf::from(d).join("bin"));
            }
        }
        ["cuobjdump", "nvdisasm"]
            .iter()
            .find_map(|tool| dirs.iter().map(|d| d.join(tool)).find(|p| p.is_file()))
            .map(|path| Disassembler { path })
    }

    /// The SASS listing of a cubin.
    pub fn listing(&self, cubin: &Path) -> Result<String> {
        let mut cmd = Command::new(&self.path);
        if self.path.file_name().is_some_and(|n| n == "cuobjdump") {
            cmd.arg("-sass");
        }
        let out = cmd.arg(cubin).output().map_err(|e| Error::io(&self.path, e))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(Error::data(
                cubin,
                format!("{} failed: {}", self.path.display(), err.lines().next().unwrap_or("no output")),
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// One kernel function's machine code, as compared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionCode {
    /// The symbol.
    pub name: String,
    /// Every instruction, branch targets relative to the function's start.
    pub code: Vec<String>,
    /// Its inner loop, when it has a loop.
    pub inner: Option<LoopBody>,
}

impl FunctionCode {
    /// The function's code and inner loop.
    pub fn of(f: &Function) -> Self {
        let code = f.instrs.iter().map(|i| loops::normalized(&i.text, i.target, 0)).collect();
        FunctionCode { name: f.name.clone(), code, inner: loops::inner_loop(f) }
    }
}

/// Every function of a listing.
pub fn functions(listing: &str) -> Vec<FunctionCode> {
    sass::parse(listing).iter().map(FunctionCode::of).collect()
}

/// How a kernel's machine code compares between A and B.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CodeVerdict {
    /// The same machine code (every instruction, or the same cubin).
    Identical,
    /// The inner loops are identical; code outside them differs.
    LoopIdentical,
    /// The inner loops differ.
    LoopChanged,
    /// The cubins differ and no listing says where (no disassembler).
    Changed,
    /// Not known: no provenance, or the kernel is missing on a side.
    Unknown,
}

impl CodeVerdict {
    /// Whether the code measured is the same on both sides: the whole code, or the inner loop.
    pub fn same_measured_code(self) -> bool {
        matches!(self, CodeVerdict::Identical | CodeVerdict::LoopIdentical)
    }

    /// Short text for a table cell.
    pub fn label(self) -> &'static str {
        match self {
            CodeVerdict::Identical => "identical",
            CodeVerdict::LoopIdentical => "loop identical",
            CodeVerdict::LoopChanged => "loop changed",
            CodeVerdict::Changed => "cubin differs",
            CodeVerdict::Unknown => "unknown",
        }
    }
}

/// One function, A against B.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionDiff {
    /// The symbol.
    pub name: String,
    /// The comparison.
    pub verdict: CodeVerdict,
    /// Instructions of A's and B's inner loop.
    pub loop_len: Option<(usize, usize)>,
    /// Classes whose count differs in the inner loop: (class, A's count, B's count).
    pub delta: Vec<(String, u32, u32)>,
}

impl FunctionDiff {
    /// `stream_triad: inner loop 24 -> 26 instructions: load global 128-bit 4 -> 2, ...`.
    pub fn line(&self) -> String {
        match self.verdict {
            CodeVerdict::LoopChanged => {
                let mut s = format!("{}: inner loop", self.name);
                if let Some((a, b)) = self.loop_len {
                    s.push_str(&format!(" {a} -> {b} instructions"));
                }
                if self.delta.is_empty() {
                    s.push_str(" (same classes, other instructions)");
                } else {
                    let d: Vec<String> = self.delta.iter().map(|(c, a, b)| format!("{c} {a} -> {b}")).collect();
                    s.push_str(&format!(": {}", d.join(", ")));
                }
                s
            }
            v => format!("{}: {}", self.name, v.label()),
        }
    }
}

/// Compares one function's code on both sides.
pub fn compare_function(a: &FunctionCode, b: &FunctionCode) -> FunctionDiff {
    let loop_len = match (&a.inner, &b.inner) {
        (Some(x), Some(y)) => Some((x.len(), y.len())),
        _ => None,
    };
    let verdict = if a.code == b.code {
        CodeVerdict::Identical
    } else if a.inner.as_ref().map(|l| &l.code) == b.inner.as_ref().map(|l| &l.code) {
        CodeVerdict::LoopIdentical
    } else {
        CodeVerdict::LoopChanged
    };
    let mut delta = Vec::new();
    if verdict == CodeVerdict::LoopChanged {
        let empty = BTreeMap::new();
        let ca = a.inner.as_ref().map_or(&empty, |l| &l.classes);
        let cb = b.inner.as_ref().map_or(&empty, |l| &l.classes);
        let keys: std::collections::BTreeSet<&String> = ca.keys().chain(cb.keys()).collect();
        for k in keys {
            let (x, y) = (ca.get(k).copied().unwrap_or(0), cb.get(k).copied().unwrap_or(0));
            if x != y {
                delta.push((k.clone(), x, y));
            }
        }
    }
    FunctionDiff { name: a.name.clone(), verdict, loop_len, delta }
}

/// One kernel source, A against B.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelCode {
    /// Source file, e.g. "stream.cu".
    pub source: String,
    /// The worst of its functions' comparisons, or the hash comparison.
    pub verdict: CodeVerdict,
    /// "SASS" (listings of both sides) or "cubin SHA-256".
    pub by: String,
    /// Per function, where listings exist.
    pub functions: Vec<FunctionDiff>,
}

/// Compares one source: listings of both sides where given (functions matched by name), else
/// the cubin hashes of the runs' provenance.
pub fn compare_source(
    source: &str,
    a: Option<&KernelProvenance>,
    b: Option<&KernelProvenance>,
    listings: Option<(&[FunctionCode], &[FunctionCode])>,
) -> KernelCode {
    let hash = |by: &str, verdict| KernelCode { source: source.into(), verdict, by: by.into(), functions: Vec::new() };
    let (Some(pa), Some(pb)) = (a, b) else { return hash("provenance", CodeVerdict::Unknown) };
    if pa.cubin_sha256 == pb.cubin_sha256 {
        return hash("cubin SHA-256", CodeVerdict::Identical);
    }
    let Some((la, lb)) = listings else { return hash("cubin SHA-256", CodeVerdict::Changed) };
    let mut functions = Vec::new();
    for fa in la {
        match lb.iter().find(|f| f.name == fa.name) {
            Some(fb) => functions.push(compare_function(fa, fb)),
            None => functions.push(FunctionDiff {
                name: fa.name.clone(),
                verdict: CodeVerdict::Unknown,
                loop_len: None,
                delta: Vec::new(),
            }),
        }
    }
    for fb in lb.iter().filter(|f| !la.iter().any(|a| a.name == f.name)) {
        functions.push(FunctionDiff {
            name: fb.name.clone(),
            verdict: CodeVerdict::Unknown,
            loop_len: None,
            delta: vec![],
        });
    }
    let verdict = functions.iter().map(|f| f.verdict).max().unwrap_or(CodeVerdict::Identical);
    KernelCode { source: source.into(), verdict, by: "SASS".into(), functions }
}

/// What the code comparison says about one metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricCode {
    /// The worst comparison over the functions (or sources) the metric's benchmark ran.
    pub verdict: CodeVerdict,
    /// One line: "machine code identical: not a compiler change", "inner loop changed:
    /// stream_triad: ...".
    pub line: String,
    /// The kernel functions (or sources) it rests on.
    pub kernels: Vec<String>,
}

impl MetricCode {
    /// The attribution of a metric of benchmark `benchmark` that ran the kernel sources
    /// `sources`, given every source's comparison; `config` is the benchmark's parameters and
    /// chosen settings in words ("ld ilp=8 warps=32 4"), which help tell its kernels apart.
    pub fn of(
        benchmark: &str,
        metric: &str,
        config: &str,
        sources: &[String],
        code: &BTreeMap<String, KernelCode>,
    ) -> Self {
        let kernels: Vec<&KernelCode> = sources.iter().filter_map(|s| code.get(s)).collect();
        if kernels.is_empty() {
            return MetricCode {
                verdict: CodeVerdict::Unknown,
                line: "no kernel provenance: code change not known".into(),
                kernels: sources.to_vec(),
            };
        }
        let with_listings: Vec<&FunctionDiff> = kernels.iter().flat_map(|k| &k.functions).collect();
        let (verdict, names, changed): (CodeVerdict, Vec<String>, Vec<String>) = if with_listings.is_empty() {
            let v = kernels.iter().map(|k| k.verdict).max().unwrap_or(CodeVerdict::Unknown);
            (v, kernels.iter().map(|k| k.source.clone()).collect(), Vec::new())
        } else {
            let chosen = relevant(benchmark, metric, config, &with_listings);
            let v = chosen.iter().map(|f| f.verdict).max().unwrap_or(CodeVerdict::Identical);
            let changed = chosen.iter().filter(|f| !f.verdict.same_measured_code()).map(|f| f.line()).collect();
            (v, chosen.iter().map(|f| f.name.clone()).collect(), changed)
        };
        let line = match verdict {
            CodeVerdict::Identical => "machine code identical: not a compiler change".to_string(),
            CodeVerdict::LoopIdentical => {
                "inner loop identical (code outside it differs): not a compiler change in the measured loop".to_string()
            }
            CodeVerdict::LoopChanged => format!("inner loop changed: {}", first_two(&changed)),
            CodeVerdict::Changed => {
                format!("cubin differs ({}; no disassembler: inner loops not compared)", names.join(", "))
            }
            CodeVerdict::Unknown => format!("code change not known ({})", first_two(&names)),
        };
        MetricCode { verdict, line, kernels: names }
    }

    /// Short text for a table cell: "identical", "loop: load global 128-bit 4 -> 2", ...
    pub fn cell(&self) -> String {
        match self.verdict {
            CodeVerdict::LoopChanged => {
                let first = self.line.trim_start_matches("inner loop changed: ");
                let short: String = first.chars().take(60).collect();
                if short.len() < first.len() {
                    format!("loop changed: {short}…")
                } else {
                    format!("loop changed: {short}")
                }
            }
            v => v.label().to_string(),
        }
    }
}

fn first_two(items: &[String]) -> String {
    match items.len() {
        0 => "-".into(),
        1 | 2 => items.join("; "),
        n => format!("{}; {} and {} more", items[0], items[1], n - 2),
    }
}

/// The functions a metric ran: those whose name shares the most words with the benchmark id,
/// the metric name and its configuration (`l1_ld_w4_ilp8` for `l1_bandwidth/32bit` at `ld`,
/// width 4, ILP 8; `inst_thr_fp32_fma_ilp8` for `instructions/throughput:fp32_fma`); all of them
/// where no name shares a word. Words split at letters and digits (`ilp8`: `ilp`, `8`), and a
/// word of three letters or more matches the start of a longer one (`thr`, `throughput`).
fn relevant<'a>(benchmark: &str, metric: &str, config: &str, functions: &[&'a FunctionDiff]) -> Vec<&'a FunctionDiff> {
    let name = benchmark.split_once('/').map_or(benchmark, |(_, n)| n);
    let wanted = words(&format!("{name} {metric} {config}"));
    let score = |f: &str| {
        words(f)
            .iter()
            .filter(|w| wanted.iter().any(|x| x == *w || (w.len() >= 3 && x.starts_with(w.as_str()))))
            .count()
    };
    let best = functions.iter().map(|f| score(&f.name)).max().unwrap_or(0);
    if best == 0 {
        return functions.to_vec();
    }
    functions.iter().copied().filter(|f| score(&f.name) == best).collect()
}

/// The distinct words of a name, lower case, split at non-alphanumerics and between letters
/// and digits.
fn words(s: &str) -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    for part in s.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()) {
        let mut cur = String::new();
        for c in part.chars() {
            if cur.chars().last().is_some_and(|l| l.is_ascii_digit() != c.is_ascii_digit()) {
                out.insert(std::mem::take(&mut cur));
            }
            cur.push(c.to_ascii_lowercase());
        }
        out.insert(cur);
    }
    out.into_iter().collect()
}

/// A benchmark's parameters and chosen settings as words for [`MetricCode::of`]: scalar values
/// only (strings, integers as such).
pub fn config_words(b: &crate::results::BenchmarkResult) -> String {
    let mut out = Vec::new();
    for v in b.params.values().chain(b.chosen.values()) {
        match v {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Number(n) => match n.as_f64() {
                Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => out.push(format!("{}", f as i64)),
                _ => out.push(n.to_string()),
            },
            _ => {}
        }
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(name: &str, verdict: CodeVerdict) -> FunctionDiff {
        FunctionDiff { name: name.into(), verdict, loop_len: None, delta: Vec::new() }
    }

    #[test]
    fn a_metric_rests_on_the_functions_named_like_it() {
        let fs = [
            diff("inst_thr_fp32_fma_ilp8", CodeVerdict::LoopChanged),
            diff("inst_lat_fp32_fma", CodeVerdict::Identical),
            diff("inst_thr_fp64_add_ilp8", CodeVerdict::Identical),
        ];
        let refs: Vec<&FunctionDiff> = fs.iter().collect();
        let r = relevant("instructions/throughput", "fp32_fma", "", &refs);
        assert_eq!(r.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["inst_thr_fp32_fma_ilp8"]);
        let r = relevant("instructions/latency", "fp32_fma", "", &refs);
        assert_eq!(r.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["inst_lat_fp32_fma"]);
        assert_eq!(relevant("x/y", "z", "", &refs).len(), 3, "no shared word: every function");
        let l1 = [diff("l1_ld_w4_ilp8", CodeVerdict::Identical), diff("l1_ld_w8_ilp8", CodeVerdict::LoopChanged)];
        let refs: Vec<&FunctionDiff> = l1.iter().collect();
        let r = relevant("l1_bandwidth/32bit", "bytes_per_clk_per_sm", "4096 128 4 ld ld/ilp=8/warps=32 8", &refs);
        assert_eq!(r.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["l1_ld_w4_ilp8"]);
    }
}
