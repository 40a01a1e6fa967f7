//! Every family in one table: from a family's name, its bench target, its host code and its
//! kernel files. The name is everything's key: the bench target `benches/<name>.rs` (its cargo
//! target name and its record name, see [`crate::protocol`]), the benchmark ids `<name>/...`,
//! and the host module [`crate::families`]`::<name>`.

use crate::error::Result;
use crate::harness::Suite;
use crate::kernels::{self, KernelSource};

/// One microbenchmark family.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    /// The family's name: bench target, record name and benchmark id prefix.
    pub name: &'static str,
    /// Its host code: a module file or folder under `src/` (first), then shared code it builds on.
    pub host: &'static [&'static str],
    /// Its kernel files under `kernels/`, headers first (all share `kernels/common.cuh`).
    pub kernel_files: &'static [&'static str],
    /// Its embedded sources, as compiled (the name of each is the one results record).
    pub sources: &'static [KernelSource],
    /// What the bench target runs.
    pub run: fn(&mut Suite) -> Result<()>,
}

impl Family {
    /// The bench target's source file, `benches/<name>.rs`.
    pub fn bench_file(&self) -> String {
        format!("benches/{}.rs", self.name)
    }
}

macro_rules! families {
    ($($name:ident: host [$($host:literal),*], kernels [$($file:literal),*], sources [$($src:ident),*];)*) => {
        /// Every family, in the order of `Cargo.toml`'s `[[bench]]` targets.
        pub const REGISTRY: &[Family] = &[$(Family {
            name: stringify!($name),
            host: &[$($host),*],
            kernel_files: &[$($file),*],
            sources: &[$(kernels::$src),*],
            run: super::$name::run,
        }),*];
    };
}

families! {
    latency: host ["src/families/latency.rs", "src/placement.rs"],
        kernels ["kernels/latency.cu"], sources [LATENCY];
    stream: host ["src/families/stream.rs", "src/families/dram/mod.rs", "src/families/dram/config.rs"],
        kernels ["kernels/stream.cu"], sources [STREAM];
    shared_banks: host ["src/families/shared_banks.rs"],
        kernels ["kernels/shared_banks.cu"], sources [SHARED_BANKS];
    atomics: host ["src/families/atomics/"],
        kernels ["kernels/atomics.cu", "kernels/atomics_variants.cu"], sources [ATOMICS, ATOMICS_VARIANTS];
    l1_bandwidth: host ["src/families/l1_bandwidth.rs", "src/measure/sm_bandwidth.rs"],
        kernels ["kernels/l1_loads.cuh", "kernels/l1_bandwidth.cu", "kernels/l1_bandwidth_sweep.cu"],
        sources [L1_BANDWIDTH, L1_BANDWIDTH_SWEEP];
    shared_bandwidth: host ["src/families/shared_bandwidth.rs", "src/measure/sm_bandwidth.rs"],
        kernels ["kernels/shared_bandwidth.cu"], sources [SHARED_BANDWIDTH];
    instructions: host ["src/families/instructions/"],
        kernels ["kernels/instructions_ops.cuh", "kernels/instructions.cu", "kernels/instructions_ieee.cu",
            "kernels/instructions_sweep.cu"],
        sources [INSTRUCTIONS, INSTRUCTIONS_IEEE, INSTRUCTIONS_SWEEP];
    dram: host ["src/families/dram/mod.rs", "src/families/dram/config.rs"],
        kernels ["kernels/dram_ops.cuh", "kernels/dram.cu", "kernels/dram_sweep.cu"], sources [DRAM, DRAM_SWEEP];
    l2_bandwidth: host ["src/families/l2_bandwidth.rs"],
        kernels ["kernels/l2_bandwidth.cu"], sources [L2_BANDWIDTH];
    access_patterns: host ["src/families/access_patterns.rs"],
        kernels ["kernels/access_patterns.cu"], sources [ACCESS_PATTERNS];
    constant_memory: host ["src/families/constant_memory.rs"],
        kernels ["kernels/constant_memory.cu"], sources [CONSTANT_MEMORY];
    spilling: host ["src/families/spilling.rs"],
        kernels ["kernels/spilling.cu"], sources [SPILLING];
}

/// The family named `name`.
pub fn family(name: &str) -> Option<&'static Family> {
    REGISTRY.iter().find(|f| f.name == name)
}

/// Embedded sources that belong to no family: the dissection's and the power load's.
pub const NOT_FAMILIES: &[KernelSource] = &[kernels::DISSECT, kernels::POWER];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_source_belongs_to_one_family_or_is_listed_apart() {
        for s in kernels::ALL {
            let owners = REGISTRY.iter().filter(|f| f.sources.iter().any(|x| x.name == s.name)).count();
            let apart = NOT_FAMILIES.iter().any(|x| x.name == s.name);
            assert_eq!(owners + usize::from(apart), 1, "{}", s.name);
        }
    }

    #[test]
    fn a_family_lists_the_files_of_its_sources_and_the_sources_start_with_its_name() {
        for f in REGISTRY {
            for s in f.sources {
                assert!(f.kernel_files.contains(&format!("kernels/{}", s.file_name()).as_str()), "{}", s.name);
                assert!(s.name.starts_with(f.name), "{} in {}", s.name, f.name);
            }
            assert!(f.host[0].starts_with(&format!("src/families/{}", f.name)), "{}", f.name);
        }
    }
}
