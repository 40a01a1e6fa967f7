//! Command-line definitions. Flags are validated here; commands turn them into library calls.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// GPU microbenchmarks as criterion benches: memory latency, bandwidth, atomics, with the clocks
/// they ran at. Builds the workspace's bench targets, runs them on the GPU and writes one
/// results JSON.
#[derive(Debug, Parser)]
#[command(name = "cargo gpubench", bin_name = "cargo gpubench", version, about, long_about = None)]
#[command(after_help = EXIT_CODES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub run: RunArgs,
}

pub const EXIT_CODES: &str = "Exit codes:
  0  success, no regression
  1  a metric REGRESSED against the baseline
  2  usage error (bad flags or configuration)
  3  environment: no GPU, no libcuda, no NVRTC, or driver too old
  4  a benchmark failed: kernel compile error, launch failure, out of GPU memory, wrong result, watchdog
  5  a results, baseline or archive file is corrupt, truncated or of another schema
  6  the GPU is in use by another gpubench run (--no-wait)
  130  interrupted";

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build the bench targets (and this CLI) into a .tar.gz that runs on a GPU machine without a Rust toolchain.
    Archive(ArchiveArgs),
    /// Compile every embedded kernel with NVRTC for an architecture and report what was generated (no GPU needed).
    Kernels(KernelsArgs),
    /// Print the summary of a results JSON file.
    Report(ReportArgs),
    /// Show the GPU: identity, driver and toolkit versions, clocks, power limit, ECC, MIG, throttle reasons.
    Info(InfoArgs),
    /// Let the GPU idle, then chase pointers while its clock ramps up: raw latency (ns) moves, cycles hold.
    Ramp(RampArgs),
    /// Hold a tensor-core and memory load until the card limits its clock: raw TFLOP/s moves, FLOP per clock holds.
    Load(LoadArgs),
    /// Infer the memory hierarchy (cache sizes, lines, sets, ways, policy, TLB, banks) from latency sweeps and per-access traces.
    Dissect(DissectArgs),
    /// Compare two results or baseline files offline (no GPU): a verdict per metric.
    Compare(CompareArgs),
    /// Calibrate the verdict rule on recorded runs: same-card and class A/A false alarms, detection power.
    Calibrate(CalibrateArgs),
    /// List, show or save the baselines runs are compared with.
    #[command(subcommand)]
    Baseline(BaselineCommand),
}

/// Options of a benchmark run (the default command).
#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// Run only benchmarks whose id ("family/name") matches this regular expression.
    #[arg(value_name = "FILTER")]
    pub filter: Option<String>,

    /// Short sampling and fewer sweep points: a smoke run (about 20 s on an H100).
    #[arg(long, conflicts_with = "full")]
    pub quick: bool,

    /// Every sweep point and configuration of every family: characterisation rather than CI.
    #[arg(long)]
    pub full: bool,

    /// Where to write the results JSON [default: <target>/gpubench/results.json, or
    /// ./gpubench-results.json with --archive].
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,

    /// CUDA ordinal of the GPU to measure.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub device: usize,

    /// Run only these bench targets (repeatable).
    #[arg(long = "bench", value_name = "NAME")]
    pub benches: Vec<String>,

    /// Run the executables of an archive (a .tar.gz from `cargo gpubench archive`, or its unpacked folder) instead of building.
    #[arg(long, value_name = "PATH")]
    pub archive: Option<PathBuf>,

    /// Path to the workspace's Cargo.toml.
    #[arg(long, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,

    /// Kill a bench executable that runs longer than this many seconds.
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    pub timeout: u64,

    /// Print the results JSON to stdout instead of the table.
    #[arg(long)]
    pub json: bool,

    /// Show the bench executables' own output (criterion's report).
    #[arg(short, long)]
    pub verbose: bool,

    /// Drop samples taken while the GPU throttled instead of keeping them marked and
    /// clock-normalised.
    #[arg(long)]
    pub discard_throttled: bool,

    /// Save this run as the baseline of this GPU class, under NAME when given (replacing the
    /// runs it held; see --append).
    #[arg(long, value_name = "NAME", num_args = 0..=1, default_missing_value = "")]
    pub save_baseline: Option<String>,

    /// With --save-baseline: add this run to the baseline's runs (keeping the newest
    /// `[baseline] max_runs`) instead of replacing them.
    #[arg(long, requires = "save_baseline")]
    pub append: bool,

    /// Compare with the baseline NAME, or a baseline or results FILE [default: this GPU class's
    /// baseline, when there is one].
    #[arg(long, value_name = "NAME|FILE", num_args = 0..=1, default_missing_value = "", conflicts_with = "no_baseline")]
    pub baseline: Option<String>,

    /// Do not compare with a baseline.
    #[arg(long)]
    pub no_baseline: bool,

    /// Key baselines by this GPU's UUID too (strict per-GPU baselines).
    #[arg(long)]
    pub per_gpu: bool,

    /// Fail at once (exit code 6) when another gpubench run holds this GPU, instead of waiting.
    #[arg(long)]
    pub no_wait: bool,

    #[command(flatten)]
    pub place: BaselinePlace,

    #[command(flatten)]
    pub outputs: VerdictOutputs,
}

/// Where baselines and the configuration are.
#[derive(Debug, Args, Clone, Default)]
pub struct BaselinePlace {
    /// Folder of baseline files [default: `[baseline] dir` of gpubench.toml, else `baselines`
    /// in the workspace, or in the current folder with --archive and offline commands].
    #[arg(long, value_name = "DIR")]
    pub baseline_dir: Option<PathBuf>,

    /// Configuration file [default: the nearest gpubench.toml].
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

/// Where the verdicts go besides the terminal.
#[derive(Debug, Args, Clone, Default)]
pub struct VerdictOutputs {
    /// Write the verdicts as Markdown (a CI step summary).
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,

    /// Write the verdicts as JUnit XML (one test case per metric; REGRESSED fails).
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,

    /// Write the verdicts as JSON.
    #[arg(long, value_name = "PATH")]
    pub verdicts_json: Option<PathBuf>,

    /// List PASS rows in the terminal table too.
    #[arg(long)]
    pub all: bool,

    /// Also exit 1 on these verdicts (comma-separated): inconclusive, not-measured.
    #[arg(long, value_name = "VERDICTS", value_parser = gpubench::verdict::FailOn::parse)]
    pub fail_on: Option<gpubench::verdict::FailOn>,

    /// Compare with a baseline of another GPU class (refused otherwise, exit code 7).
    #[arg(long)]
    pub allow_other_class: bool,
}

#[derive(Debug, Args)]
pub struct ArchiveArgs {
    /// The archive to write.
    #[arg(short, long, default_value = "gpubench-archive.tar.gz", value_name = "PATH")]
    pub output: PathBuf,

    /// Path to the workspace's Cargo.toml.
    #[arg(long, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,

    /// Archive only these bench targets (repeatable).
    #[arg(long = "bench", value_name = "NAME")]
    pub benches: Vec<String>,
}

#[derive(Debug, Args)]
pub struct KernelsArgs {
    /// Target architecture, e.g. sm_90 [default: the GPU's own].
    #[arg(long, value_name = "SM")]
    pub arch: Option<String>,

    /// Also write each kernel's .cu (as compiled), .ptx and .cubin into this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A results JSON file.
    pub results: PathBuf,

    /// Print JSON (the document itself) instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline side: a results JSON or a baseline file.
    #[arg(value_name = "OLD")]
    pub old: PathBuf,

    /// The new side: a results JSON or a baseline file.
    #[arg(value_name = "NEW")]
    pub new: PathBuf,

    /// Print the comparison as JSON instead of the table.
    #[arg(long)]
    pub json: bool,

    /// Configuration file [default: the nearest gpubench.toml].
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,

    #[command(flatten)]
    pub outputs: VerdictOutputs,
}

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Results or baseline files, folders of them, or .tar.gz archives of them.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,

    /// Print the calibration as JSON instead of Markdown tables.
    #[arg(long)]
    pub json: bool,

    /// Configuration file [default: the nearest gpubench.toml].
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum BaselineCommand {
    /// List the baselines in the baselines folder.
    List(BaselineListArgs),
    /// Show a baseline: GPU, stack, kernels, and the noise of its metrics.
    Show(BaselineShowArgs),
    /// Save results files (from `cargo gpubench -o`) as a baseline, without a GPU.
    Save(BaselineSaveArgs),
}

#[derive(Debug, Args)]
pub struct BaselineListArgs {
    #[command(flatten)]
    pub place: BaselinePlace,

    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct BaselineShowArgs {
    /// A baseline file, or a baseline in the folder by name, file stem or GPU class slug.
    #[arg(value_name = "NAME|FILE")]
    pub target: String,

    #[command(flatten)]
    pub place: BaselinePlace,

    /// Also list every metric with its noise and threshold.
    #[arg(long)]
    pub all: bool,

    /// Print the baseline file's JSON instead.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct BaselineSaveArgs {
    /// Results files of one GPU class, oldest first.
    #[arg(value_name = "RESULTS", required = true)]
    pub results: Vec<PathBuf>,

    /// Save under this name instead of as the class's default baseline.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    /// Key the baseline by the GPU's UUID too (a strict per-GPU baseline).
    #[arg(long)]
    pub per_gpu: bool,

    /// Add the runs to the existing baseline instead of replacing its runs.
    #[arg(long)]
    pub append: bool,

    #[command(flatten)]
    pub place: BaselinePlace,
}

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// CUDA ordinal of the GPU.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub device: usize,

    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RampArgs {
    /// CUDA ordinal of the GPU.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub device: usize,

    /// Milliseconds the GPU idles before the launches.
    #[arg(long, default_value_t = 3000, value_name = "MS")]
    pub idle_ms: u64,

    /// Back-to-back launches after the idle period.
    #[arg(long, default_value_t = 400, value_name = "N")]
    pub launches: usize,

    /// Write the whole trace as JSON here.
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,

    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DissectArgs {
    /// Folder for the report, JSON and plots [default: <target>/gpubench/dissect, or
    /// ./gpubench-dissect outside a cargo workspace; with --from, that folder].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Infer again from the sweeps saved in a dissect folder, without a GPU.
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,

    /// Coarser sweeps and fewer traces: a smoke run.
    #[arg(long)]
    pub quick: bool,

    /// CUDA ordinal of the GPU to measure.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub device: usize,

    /// Print dissect.json to stdout instead of the tables.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct LoadArgs {
    /// CUDA ordinal of the GPU.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub device: usize,

    /// How long to keep the load on.
    #[arg(long, default_value_t = 20, value_name = "SECONDS")]
    pub seconds: u64,

    /// Write the whole trace as JSON here.
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,

    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}
