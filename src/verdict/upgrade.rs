//! The upgrade view: what changed in the software stack and in the generated code between the
//! two sides of a comparison.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::results::{KernelProvenance, ResultsDocument, Stack};

/// One field of the stack on both sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StackField {
    /// "driver", "CUDA", "NVRTC", "cudarc", "gpubench".
    pub field: String,
    /// Baseline's value.
    pub old: String,
    /// New value.
    pub new: String,
}

impl StackField {
    /// Whether the value changed.
    pub fn changed(&self) -> bool {
        self.old != self.new
    }
}

/// How one kernel source's generated code compares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelChange {
    /// Source file, e.g. "stream.cu".
    pub source: String,
    /// Present in the baseline.
    pub in_old: bool,
    /// Present in the new run.
    pub in_new: bool,
    /// The CUDA source text (with the common header) differs.
    pub source_changed: bool,
    /// The PTX differs.
    pub ptx_changed: bool,
    /// The cubin (machine code) differs.
    pub cubin_changed: bool,
}

impl KernelChange {
    /// Whether anything about this kernel differs. A kernel the new run did not compile (its
    /// family was not measured) is not a change: its metrics are NOT MEASURED.
    pub fn changed(&self) -> bool {
        self.in_new && (!self.in_old || self.source_changed || self.ptx_changed || self.cubin_changed)
    }

    /// "PTX, cubin", "source, PTX, cubin", "new", "removed".
    pub fn what(&self) -> String {
        if !self.in_old {
            return "new".into();
        }
        if !self.in_new {
            return "removed".into();
        }
        let parts: Vec<&str> =
            [(self.source_changed, "source"), (self.ptx_changed, "PTX"), (self.cubin_changed, "cubin")]
                .into_iter()
                .filter_map(|(c, n)| c.then_some(n))
                .collect();
        parts.join(", ")
    }
}

/// Stack fields and kernels, old against new.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Upgrade {
    /// Every stack field, changed or not.
    pub stack: Vec<StackField>,
    /// Every kernel source seen on either side.
    pub kernels: Vec<KernelChange>,
}

impl Upgrade {
    /// Compares the stacks and kernels of the newest run of each side.
    pub fn between(old: &ResultsDocument, new: &ResultsDocument) -> Self {
        Upgrade { stack: stack_fields(&old.stack, &new.stack), kernels: kernel_changes(&kernels(old), &kernels(new)) }
    }

    /// Stack fields that changed.
    pub fn stack_changes(&self) -> impl Iterator<Item = &StackField> {
        self.stack.iter().filter(|f| f.changed())
    }

    /// Kernels whose source or generated code changed.
    pub fn kernel_changes(&self) -> impl Iterator<Item = &KernelChange> {
        self.kernels.iter().filter(|k| k.changed())
    }

    /// One line: "driver 570.86.15 -> 580.159.04, NVRTC 12.8 -> 13.0", or "same stack: ...".
    pub fn stack_line(&self) -> String {
        let changed: Vec<String> =
            self.stack_changes().map(|f| format!("{} {} -> {}", f.field, f.old, f.new)).collect();
        if changed.is_empty() {
            let same: Vec<String> = self.stack.iter().map(|f| format!("{} {}", f.field, f.new)).collect();
            format!("same stack: {}", same.join(", "))
        } else {
            changed.join(", ")
        }
    }

    /// One line: "generated code changed: latency.cu (PTX, cubin)" or "generated code unchanged".
    pub fn kernels_line(&self) -> String {
        let changed: Vec<String> = self.kernel_changes().map(|k| format!("{} ({})", k.source, k.what())).collect();
        if changed.is_empty() {
            format!("generated code unchanged ({} kernel sources)", self.kernels.len())
        } else {
            format!("generated code changed: {}", changed.join(", "))
        }
    }
}

fn stack_fields(old: &Stack, new: &Stack) -> Vec<StackField> {
    let driver = |s: &Stack| s.driver_version.clone().unwrap_or_else(|| "unknown".into());
    [
        ("driver", driver(old), driver(new)),
        ("CUDA", old.cuda_driver_api.clone(), new.cuda_driver_api.clone()),
        ("NVRTC", old.nvrtc_version.clone(), new.nvrtc_version.clone()),
        ("cudarc", old.cudarc_feature.clone(), new.cudarc_feature.clone()),
        ("gpubench", old.tool_version.clone(), new.tool_version.clone()),
    ]
    .into_iter()
    .map(|(field, old, new)| StackField { field: field.into(), old, new })
    .collect()
}

/// Every kernel source a run compiled, once, by source name.
pub fn kernels(run: &ResultsDocument) -> BTreeMap<String, KernelProvenance> {
    let mut out = BTreeMap::new();
    for b in &run.benchmarks {
        for k in &b.kernels {
            out.entry(k.source.clone()).or_insert_with(|| k.clone());
        }
    }
    out
}

fn kernel_changes(
    old: &BTreeMap<String, KernelProvenance>,
    new: &BTreeMap<String, KernelProvenance>,
) -> Vec<KernelChange> {
    let names: std::collections::BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    names
        .into_iter()
        .map(|name| {
            let (o, n) = (old.get(name), new.get(name));
            let differs = |f: fn(&KernelProvenance) -> &str| match (o, n) {
                (Some(o), Some(n)) => f(o) != f(n),
                _ => false,
            };
            KernelChange {
                source: name.clone(),
                in_old: o.is_some(),
                in_new: n.is_some(),
                source_changed: differs(|k| &k.source_sha256),
                ptx_changed: differs(|k| &k.ptx_sha256),
                cubin_changed: differs(|k| &k.cubin_sha256),
            }
        })
        .collect()
}
