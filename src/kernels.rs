//! CUDA sources embedded in the binary, compiled at run time by NVRTC (see [`crate::device`]).

/// The header every source is compiled with (clock probes, cache-operator loads).
pub const COMMON_HEADER: &str = include_str!("../kernels/common.cuh");

/// One CUDA source file of `kernels/`.
#[derive(Debug, Clone, Copy)]
pub struct KernelSource {
    /// Stem of the file name, "stream" for `kernels/stream.cu`.
    pub name: &'static str,
    /// The file's text.
    pub text: &'static str,
}

impl KernelSource {
    /// "stream.cu".
    pub fn file_name(&self) -> String {
        format!("{}.cu", self.name)
    }

    /// The text NVRTC compiles: the common header, then the source.
    pub fn full_text(&self) -> String {
        format!("{COMMON_HEADER}\n#line 1 \"{}\"\n{}", self.file_name(), self.text)
    }
}

/// `NAME = "stem";` embeds `kernels/stem.cu`; `NAME = "stem" after "prelude.cuh";` embeds
/// `kernels/prelude.cuh` followed by `kernels/stem.cu` (definitions several sources share), with
/// `#line` markers so that compiler messages name the right file.
macro_rules! kernel_sources {
    ($($(#[$doc:meta])* $const:ident = $name:literal $(after $prelude:literal)?;)*) => {
        $($(#[$doc])* pub const $const: KernelSource = KernelSource {
            name: $name,
            text: concat!(
                $("#line 1 \"", $prelude, "\"\n", include_str!(concat!("../kernels/", $prelude)),
                  "\n#line 1 \"", $name, ".cu\"\n",)?
                include_str!(concat!("../kernels/", $name, ".cu"))
            ),
        };)*
        /// Every embedded source.
        pub const ALL: &[KernelSource] = &[$($const),*];
    };
}

kernel_sources! {
    /// Pointer-chase latency.
    LATENCY = "latency";
    /// STREAM copy / scale / add / triad.
    STREAM = "stream";
    /// Shared-memory bank-conflict latency.
    SHARED_BANKS = "shared_banks";
    /// Global atomic throughput.
    ATOMICS = "atomics";
    /// Memory-hierarchy dissection: per-access histograms and traces.
    DISSECT = "dissect";
    /// A sustained tensor-core and memory load that drives the card to its power limit.
    POWER = "power";
    /// Atomics: contention, 64-bit and floating-point adds, CAS, latency, shared memory.
    ATOMICS_VARIANTS = "atomics_variants";
    /// L1 data-cache load bandwidth per SM: the regression set's configurations.
    L1_BANDWIDTH = "l1_bandwidth" after "l1_loads.cuh";
    /// L1 data-cache load bandwidth per SM: the rest of the full sweep.
    L1_BANDWIDTH_SWEEP = "l1_bandwidth_sweep" after "l1_loads.cuh";
    /// Shared-memory load bandwidth per SM.
    SHARED_BANDWIDTH = "shared_bandwidth";
    /// L2 read bandwidth over footprints and block counts.
    L2_BANDWIDTH = "l2_bandwidth";
    /// Global access patterns: coalescing, access width, cache operators.
    ACCESS_PATTERNS = "access_patterns";
    /// Constant memory: uniform and divergent reads.
    CONSTANT_MEMORY = "constant_memory";
    /// Register spilling to local memory.
    SPILLING = "spilling";
    /// DRAM bandwidth: STREAM, read-only and write-only streams (the regression set's search).
    DRAM = "dram" after "dram_ops.cuh";
    /// DRAM bandwidth: the rest of the full sweep.
    DRAM_SWEEP = "dram_sweep" after "dram_ops.cuh";
    /// Latency and throughput of single arithmetic instructions.
    INSTRUCTIONS = "instructions" after "instructions_ops.cuh";
    /// Latency and throughput of IEEE division and square root.
    INSTRUCTIONS_IEEE = "instructions_ieee" after "instructions_ops.cuh";
    /// Throughput of every arithmetic operation over ILP (full profile).
    INSTRUCTIONS_SWEEP = "instructions_sweep" after "instructions_ops.cuh";
}
