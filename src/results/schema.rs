//! The results document: what a run measured, on which GPU and software stack.
//!
//! One type serves three places: the per-family records a bench process writes, the merged
//! results of a whole run, and (wrapped) the baselines. Every metric carries its per-sample
//! values, its unit, its direction (higher or lower is better) and its clock domain.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Schema tag of [`ResultsDocument`]; readers refuse any other.
pub const RESULTS_SCHEMA: &str = "gpubench.results/1";

/// A whole run (or one bench family's part of it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultsDocument {
    /// Always [`RESULTS_SCHEMA`].
    pub schema: String,
    /// Seconds since the Unix epoch when the run started.
    pub created_unix_s: u64,
    /// The GPU the run measured.
    pub gpu: GpuIdentity,
    /// Driver, CUDA and compiler versions.
    pub stack: Stack,
    /// How the run was configured.
    pub settings: Settings,
    /// Every benchmark that produced samples, in run order.
    pub benchmarks: Vec<BenchmarkResult>,
    /// Discrete facts inferred about the GPU (cache sizes, line sizes, ...), compared exactly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub facts: Vec<Fact>,
    /// How much of the run throttled, and why.
    #[serde(default)]
    pub telemetry: Option<RunTelemetry>,
    /// Wall time of the whole run, seconds (0 in a single family's record).
    pub wall_time_s: f64,
}

/// Identity and fixed properties of one GPU, read from the driver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuIdentity {
    /// Marketing name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as NVML and nvidia-smi print it.
    pub uuid: String,
    /// CUDA ordinal the run used.
    pub ordinal: u32,
    /// PCI bus id, "0000:00:00.0".
    pub pci_bus_id: String,
    /// Compute capability major.
    pub cc_major: u32,
    /// Compute capability minor.
    pub cc_minor: u32,
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// L2 cache size in bytes.
    pub l2_bytes: u64,
    /// Shared memory a block may opt in to, bytes.
    pub smem_per_block_optin: u64,
    /// Shared memory per SM, bytes.
    pub smem_per_sm: u64,
    /// Resident threads per SM.
    pub max_threads_per_sm: u32,
    /// 32-bit registers per SM.
    pub regs_per_sm: u32,
    /// Threads per warp.
    pub warp_size: u32,
    /// Maximum SM clock the driver reports, kHz.
    pub sm_clock_max_khz: u32,
    /// Peak memory clock, kHz.
    pub mem_clock_khz: u32,
    /// Memory bus width, bits.
    pub bus_width_bits: u32,
    /// Device memory, bytes.
    pub total_mem_bytes: u64,
    /// Whether ECC is on.
    pub ecc_enabled: bool,
    /// The board's part number as NVML reports it ("692-2G520-0282-001"), where NVML answers.
    /// Boards of one class can differ in their memory parts: class baselines judge a card
    /// against the cards of its board where they hold them (docs, "Baselines and verdicts").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board_part_number: Option<String>,
    /// The VBIOS version as NVML reports it, where NVML answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vbios_version: Option<String>,
}

impl GpuIdentity {
    /// Theoretical DRAM bandwidth: bus width x memory clock x 2 (double data rate), bytes/s.
    pub fn peak_dram_bytes_per_s(&self) -> f64 {
        2.0 * self.mem_clock_khz as f64 * 1e3 * self.bus_width_bits as f64 / 8.0
    }

    /// "sm_90": the NVRTC target for this GPU.
    pub fn arch(&self) -> String {
        format!("sm_{}{}", self.cc_major, self.cc_minor)
    }

    /// The GPU class: model, compute capability, SM count and memory size. Runs on GPUs of one
    /// class compare with one baseline; driver and toolkit are attributes, not part of the key.
    pub fn class_key(&self) -> GpuClass {
        GpuClass {
            name: self.name.clone(),
            cc: format!("{}.{}", self.cc_major, self.cc_minor),
            sm_count: self.sm_count,
            memory_gib: (self.total_mem_bytes as f64 / (1u64 << 30) as f64).round() as u64,
        }
    }
}

/// The key that selects a baseline: GPUs of one class are interchangeable for comparison.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GpuClass {
    /// Marketing name.
    pub name: String,
    /// Compute capability, "9.0".
    pub cc: String,
    /// SM count.
    pub sm_count: u32,
    /// Device memory, GiB, rounded.
    pub memory_gib: u64,
}

impl GpuClass {
    /// A file-name-safe slug: "nvidia-h100-80gb-hbm3-cc90-132sm-79gib".
    pub fn slug(&self) -> String {
        let mut s = String::new();
        for c in self.name.chars() {
            if c.is_ascii_alphanumeric() {
                s.push(c.to_ascii_lowercase());
            } else if !s.ends_with('-') {
                s.push('-');
            }
        }
        let s = s.trim_matches('-');
        format!("{s}-cc{}-{}sm-{}gib", self.cc.replace('.', ""), self.sm_count, self.memory_gib)
    }
}

/// The software the numbers were measured with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stack {
    /// NVIDIA driver release, e.g. "580.159.04" (from NVML; absent without NVML).
    pub driver_version: Option<String>,
    /// CUDA version the driver supports, e.g. "13.0".
    pub cuda_driver_api: String,
    /// NVRTC version used to compile the kernels, e.g. "13.0".
    pub nvrtc_version: String,
    /// The cudarc bindings' CUDA feature.
    pub cudarc_feature: String,
    /// gpubench version.
    pub tool_version: String,
}

/// How the run was configured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// "quick" or "default".
    pub profile: String,
    /// Name filter, if any.
    pub filter: Option<String>,
    /// Criterion samples per benchmark.
    pub sample_size: usize,
    /// Criterion warm-up time per benchmark, seconds.
    pub warm_up_s: f64,
    /// Criterion measurement time per benchmark, seconds.
    pub measurement_s: f64,
}

/// Which clock a metric's value moves with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockDomain {
    /// SM (graphics) clock: latencies, L1/shared bandwidth, instruction rates, atomics.
    Sm,
    /// Memory clock: DRAM bandwidth.
    Memory,
    /// No clock: counts, inferred sizes.
    None,
}

/// Which direction is good.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// Bandwidth, throughput.
    Higher,
    /// Latency, time.
    Lower,
}

/// One benchmark: one criterion benchmark id, its samples and derived metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchmarkResult {
    /// Criterion id, "family/name".
    pub id: String,
    /// Bench family (bench target), e.g. "stream".
    pub family: String,
    /// Configuration of this benchmark (sizes, strides, thread counts). Runs with different
    /// parameters are not comparable.
    #[serde(default)]
    pub params: BTreeMap<String, serde_json::Value>,
    /// Settings a run-time search chose, and the search's trials. They may differ between runs
    /// without making them incomparable.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub chosen: BTreeMap<String, serde_json::Value>,
    /// GPU time per iteration of each sample, ns (CUDA events).
    pub time_ns: Vec<f64>,
    /// In-kernel clock readings of each sample, when the kernel reports them.
    #[serde(default)]
    pub clocks: Vec<KernelClock>,
    /// Derived metrics.
    pub metrics: Vec<Metric>,
    /// Kernels this benchmark ran and how they were built.
    #[serde(default)]
    pub kernels: Vec<KernelProvenance>,
    /// Criterion's own estimates of the time per iteration, when criterion wrote them.
    #[serde(default)]
    pub criterion: Option<CriterionEstimates>,
    /// What NVML saw during each sample.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub telemetry: Vec<SampleTelemetry>,
    /// Per-SM values of metrics measured on every SM (a chip map per metric): see [`SmMap`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sm_maps: Vec<SmMap>,
}

impl BenchmarkResult {
    /// The metric called `name`.
    pub fn metric(&self, name: &str) -> Option<&Metric> {
        self.metrics.iter().find(|m| m.name == name)
    }

    /// The chip map of the metric called `name`.
    pub fn sm_map(&self, name: &str) -> Option<&SmMap> {
        self.sm_maps.iter().find(|m| m.metric == name)
    }
}

/// A metric measured on every SM: the value each SM gave (median over the benchmark's samples),
/// and its spread over the SMs. The metric's own samples are per-sample medians over SMs, or
/// means where the benchmark's `over_sms` parameter says "mean"; this map keeps the placement
/// structure: a slow SM, GPC or L2 region, and a fingerprint of the card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmMap {
    /// Name of the metric the map belongs to.
    pub metric: String,
    /// Unit of the values.
    pub unit: String,
    /// SM id (`%smid`) of each entry, ascending.
    pub sm: Vec<u32>,
    /// Value per SM, same order as `sm`.
    pub values: Vec<f64>,
    /// Group of each SM (same order as `sm`) where a probe found one: SMs that thread-block
    /// clusters co-schedule share a group (a GPC, or part of one). Empty when unknown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub group: Vec<u32>,
    /// Spread of `values` over the SMs.
    pub spread: Spread,
}

impl SmMap {
    /// Builds a map from (SM id, value) pairs; pairs are sorted by SM id.
    pub fn new(metric: impl Into<String>, unit: impl Into<String>, mut pairs: Vec<(u32, f64)>) -> Self {
        pairs.sort_by_key(|p| p.0);
        let values: Vec<f64> = pairs.iter().map(|p| p.1).collect();
        SmMap {
            metric: metric.into(),
            unit: unit.into(),
            sm: pairs.iter().map(|p| p.0).collect(),
            spread: Spread::of(&values),
            values,
            group: Vec::new(),
        }
    }

    /// The value of SM `sm`.
    pub fn value(&self, sm: u32) -> Option<f64> {
        self.sm.iter().position(|&s| s == sm).map(|i| self.values[i])
    }
}

/// Robust spread of a set of values: median, quartiles and extremes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Number of values.
    pub n: usize,
    /// Median.
    pub median: f64,
    /// First quartile.
    pub q1: f64,
    /// Third quartile.
    pub q3: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

impl Spread {
    /// The spread of `values` (NaN statistics when empty).
    pub fn of(values: &[f64]) -> Self {
        let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        sorted.sort_by(f64::total_cmp);
        if sorted.is_empty() {
            let nan = f64::NAN;
            return Spread { n: 0, median: nan, q1: nan, q3: nan, min: nan, max: nan };
        }
        let q = |p: f64| crate::stats::percentile_sorted(&sorted, p);
        Spread {
            n: sorted.len(),
            median: crate::stats::median_sorted(&sorted),
            q1: q(0.25),
            q3: q(0.75),
            min: sorted[0],
            max: sorted[sorted.len() - 1],
        }
    }

    /// (max - min) / median.
    pub fn relative_range(&self) -> f64 {
        (self.max - self.min) / self.median
    }
}

/// SM cycles and nanoseconds that one kernel thread counted over the same window of a sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct KernelClock {
    /// clock64() delta.
    pub cycles: f64,
    /// %globaltimer delta, ns.
    pub ns: f64,
}

impl KernelClock {
    /// Effective SM clock over the window, MHz.
    pub fn mhz(&self) -> Option<f64> {
        (self.ns > 0.0).then(|| self.cycles / self.ns * 1e3)
    }
}

/// One derived quantity of a benchmark, per sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// Short name, unique within the benchmark, e.g. "bandwidth".
    pub name: String,
    /// Unit, e.g. "GB/s", "cycles".
    pub unit: String,
    /// Which direction is good.
    pub better: Better,
    /// Which clock it moves with.
    pub domain: ClockDomain,
    /// One value per criterion sample.
    pub samples: Vec<f64>,
    /// Summary of `samples`.
    pub summary: Summary,
    /// The same samples divided out by the clock of the metric's domain (cycles, bytes per
    /// clock, ...), when the clock of each sample is known.
    #[serde(default)]
    pub normalized: Option<NormalizedMetric>,
}

/// Clock-normalised samples of a metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NormalizedMetric {
    /// Unit after normalisation, e.g. "B/clk", "cycles".
    pub unit: String,
    /// One value per sample (same order as the raw samples).
    pub samples: Vec<f64>,
    /// Summary of `samples`.
    pub summary: Summary,
}

impl Metric {
    /// Builds a metric and its summary.
    pub fn new(
        name: impl Into<String>,
        unit: impl Into<String>,
        better: Better,
        domain: ClockDomain,
        samples: Vec<f64>,
    ) -> Self {
        let summary = Summary::of(&samples);
        Metric { name: name.into(), unit: unit.into(), better, domain, samples, summary, normalized: None }
    }
}

/// Order statistics and moments of a sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Median.
    pub median: f64,
    /// Mean.
    pub mean: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Sample standard deviation (0 for fewer than two values).
    pub stdev: f64,
}

impl Summary {
    /// Summarises `values` (NaN-free). An empty slice gives NaN statistics and n = 0.
    pub fn of(values: &[f64]) -> Self {
        let n = values.len();
        if n == 0 {
            let nan = f64::NAN;
            return Summary { n, median: nan, mean: nan, min: nan, max: nan, stdev: nan };
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let median = crate::stats::median_sorted(&sorted);
        let mean = values.iter().sum::<f64>() / n as f64;
        let stdev =
            if n > 1 { (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt() } else { 0.0 };
        Summary { n, median, mean, min: sorted[0], max: sorted[n - 1], stdev }
    }
}

/// How one kernel source was compiled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelProvenance {
    /// Source file, e.g. "stream.cu".
    pub source: String,
    /// NVRTC target, e.g. "sm_90".
    pub arch: String,
    /// NVRTC version.
    pub nvrtc_version: String,
    /// SHA-256 of the source text as compiled (common header included).
    pub source_sha256: String,
    /// SHA-256 of the generated PTX.
    pub ptx_sha256: String,
    /// SHA-256 of the generated cubin (machine code).
    pub cubin_sha256: String,
}

/// Criterion's estimates (ns per iteration) read from its `estimates.json`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CriterionEstimates {
    /// Mean point estimate.
    pub mean_ns: f64,
    /// Median point estimate.
    pub median_ns: f64,
    /// Lower bound of the mean's confidence interval.
    pub mean_lower_ns: f64,
    /// Upper bound of the mean's confidence interval.
    pub mean_upper_ns: f64,
    /// Standard deviation estimate.
    pub std_dev_ns: f64,
}

/// What NVML reported over one criterion sample of a benchmark.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SampleTelemetry {
    /// Median SM clock NVML reported during the sample, MHz.
    pub sm_mhz: Option<f64>,
    /// Median memory clock, MHz.
    pub mem_mhz: Option<f64>,
    /// Median board power, W.
    pub power_w: Option<f64>,
    /// Highest GPU temperature, degrees C.
    pub temp_c: Option<f64>,
    /// Lowest performance state number seen (0 = P0, fastest).
    pub pstate: Option<u32>,
    /// Union of the clock-event (throttle) reasons seen, NVML bit mask.
    pub reasons_mask: u64,
    /// Names of the reasons in `reasons_mask` that slow the clock (idle and application
    /// settings excluded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slowdown: Vec<String>,
    /// Energy used during the sample, mJ.
    pub energy_mj: Option<f64>,
    /// Growth of the power-violation counter during the sample, ns.
    pub power_violation_ns: Option<f64>,
    /// Growth of the thermal-violation counter during the sample, ns.
    pub thermal_violation_ns: Option<f64>,
    /// NVML readings that fell inside the sample.
    pub readings: u32,
    /// Whether the sample counts as throttled (slowdown reasons, violation time, or an
    /// effective clock well below the maximum).
    pub throttled: bool,
    /// Processes other than this run's that NVML listed on the GPU during the sample.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub foreign_processes: Vec<ForeignProcess>,
    /// Why the GPU's process list could not be read for this sample, if it could not: no
    /// foreign process recorded then means "unknown", not "none".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes_unknown: Option<String>,
}

/// A process other than this run's that used the GPU (from NVML's compute and graphics
/// process lists and its per-process utilisation).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ForeignProcess {
    /// Its pid as NVML reports it.
    pub pid: u32,
    /// Its name from `/proc/<pid>/comm`, when this process can see it.
    #[serde(default)]
    pub name: Option<String>,
    /// GPU memory it held, MiB, when NVML says.
    #[serde(default)]
    pub used_mib: Option<f64>,
    /// Highest SM utilisation NVML attributed to it, %, when NVML says.
    #[serde(default)]
    pub sm_util_pct: Option<u32>,
    /// A caveat, e.g. that the pid belongs to another pid namespace and might be this run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// How many samples throttled and why, with their median clock and power: the part that a
/// run's telemetry ([`RunTelemetry`]) and a baseline's (`baseline::TelemetrySummary`) share,
/// written into either's JSON object as its own fields.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ThrottleSummary {
    /// Samples of all benchmarks.
    pub samples: usize,
    /// Of those, throttled.
    pub throttled_samples: usize,
    /// Throttled samples per slowdown reason.
    #[serde(default)]
    pub reasons: BTreeMap<String, usize>,
    /// Median effective SM clock over all kernel-clocked samples, MHz.
    pub median_sm_mhz: Option<f64>,
    /// Median board power over all samples, W.
    pub median_power_w: Option<f64>,
}

/// How much of a run throttled, and why.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunTelemetry {
    /// Whether NVML was available.
    pub nvml: bool,
    /// Samples, throttling and median clock and power.
    #[serde(flatten)]
    pub throttle: ThrottleSummary,
    /// Every foreign process seen during the run (largest memory and utilisation seen).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub foreign_processes: Vec<ForeignProcess>,
    /// Samples during which a foreign process used the GPU.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub shared_samples: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A discrete fact inferred from measurements, e.g. `l1.line_bytes = 128`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fact {
    /// Dotted name: "<level>.<property>", e.g. "l2.size_bytes", "smem.banks".
    pub name: String,
    /// The inferred value.
    pub value: FactValue,
    /// Unit, e.g. "bytes", "ways", "" for none.
    pub unit: String,
    /// Confidence in [0, 1] from the inference.
    pub confidence: f64,
    /// One line: how it was inferred (which sweep, which change point).
    pub method: String,
}

/// Value of a [`Fact`]: a number, or a word such as "lru".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FactValue {
    /// A count or size.
    Number(f64),
    /// A category.
    Text(String),
}
