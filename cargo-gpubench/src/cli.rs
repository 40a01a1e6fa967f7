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
    /// Infer the memory hierarchy (cache sizes, lines, sets, ways, policy, TLB, banks) from latency sweeps and per-access traces.
    Dissect(DissectArgs),
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
