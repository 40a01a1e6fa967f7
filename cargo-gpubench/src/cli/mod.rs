//! Command-line definitions. Flags are validated here; commands turn them into library calls.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

mod groups;
mod upgrade;
#[cfg(test)]
mod vocabulary;

pub use groups::{BaselineChoice, BaselinePlace, CargoBuild, Format, OneDevice, VerdictOutputs, percent};
pub use upgrade::UpgradeArgs;

/// GPU microbenchmarks as criterion benches: memory latency, bandwidth, atomics, with the clocks
/// they ran at. Builds the workspace's bench targets, runs them on the GPU and writes one
/// results JSON.
#[derive(Debug, Parser)]
#[command(name = "cargo gpubench", bin_name = "cargo gpubench", version, about, long_about = None)]
#[command(after_help = exit_codes())]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub run: RunArgs,
}

/// The exit-code table of `--help`, generated from `gpubench::error::exit::TABLE`.
pub fn exit_codes() -> String {
    gpubench::error::exit::help_text()
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run two software stacks (archives, NVRTC libraries, environment) alternately on the same GPUs and judge B against A per card, with the machine code compared; or judge a run against per-card baselines saved before a driver upgrade.
    Upgrade(UpgradeArgs),
    /// Build the bench targets (and this CLI) into a .tar.gz that runs on a GPU machine without a Rust toolchain.
    Archive(ArchiveArgs),
    /// Compile every embedded kernel with NVRTC for an architecture and report what was generated (no GPU needed).
    Kernels(KernelsArgs),
    /// Print the summary of a results JSON file.
    Report(ReportArgs),
    /// Per-SM maps of a results file (latency from every SM): spread, outlier SMs, SVG plots.
    Chipmap(ChipmapArgs),
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
    /// Trends of every metric per card, change points, and the stack or clock change behind each (no GPU).
    History(HistoryArgs),
    /// Read many results files (cards, nodes): class envelopes, outlier cards and outlier SMs (no GPU).
    Fleet(FleetArgs),
    /// A short health profile on this node's GPUs, judged against the class envelope (for Slurm's HealthCheckProgram).
    Health(HealthArgs),
}

/// Options of a benchmark run (the default command).
#[derive(Debug, Args, Clone)]
#[command(mut_arg("json", |a| a.help("Print the results JSON to stdout instead of the table")))]
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

    /// GPU(s) to measure: a CUDA ordinal, `all`, or a list such as `0,2,5`. Several GPUs run at
    /// once, one process each; `--output` is then a folder holding one `<UUID>.json` per GPU.
    #[arg(long, default_value = "0", value_name = "N|all|N,N")]
    pub device: gpubench::runner::devices::DeviceSelection,

    /// Run only these bench targets (repeatable).
    #[arg(long = "bench", value_name = "NAME")]
    pub benches: Vec<String>,

    /// Run the executables of an archive (a .tar.gz from `cargo gpubench archive`, or its unpacked folder) instead of building.
    #[arg(long, value_name = "ARCHIVE")]
    pub archive: Option<PathBuf>,

    /// Path to the workspace's Cargo.toml.
    #[arg(long, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,

    #[command(flatten)]
    pub cargo: CargoBuild,

    /// Kill a bench executable that runs longer than this many seconds.
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    pub timeout: u64,

    #[command(flatten)]
    pub format: Format,

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

    #[command(flatten)]
    pub baseline: BaselineChoice,

    /// Fail at once (exit code 6) when another gpubench run holds this GPU, instead of waiting.
    #[arg(long)]
    pub no_wait: bool,

    /// Also append this run to the history database at PATH (SQLite, created when missing).
    #[arg(long, value_name = "PATH")]
    pub history: Option<PathBuf>,

    /// Fail at once (exit code 7) when another process holds this GPU, instead of measuring
    /// beside it (its metrics would be INCONCLUSIVE).
    #[arg(long)]
    pub exclusive: bool,

    #[command(flatten)]
    pub place: BaselinePlace,

    #[command(flatten)]
    pub outputs: VerdictOutputs,
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

    #[command(flatten)]
    pub cargo: CargoBuild,
}

#[derive(Debug, Args)]
pub struct KernelsArgs {
    /// Target architecture, e.g. sm_90 [default: the GPU's own].
    #[arg(long, value_name = "SM")]
    pub arch: Option<String>,

    /// Also write each kernel's .cu (as compiled), .ptx and .cubin into this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    #[command(flatten)]
    pub format: Format,
}

#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help("Print JSON (the document itself) instead of a table")))]
pub struct ReportArgs {
    /// A results JSON file.
    pub results: PathBuf,

    #[command(flatten)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct ChipmapArgs {
    /// A results JSON file.
    pub results: PathBuf,

    /// Only benchmarks whose id matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub benchmark: Option<String>,

    /// Write one SVG per map into this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Robust z-score beyond which an SM is an outlier.
    #[arg(long, alias = "z", default_value_t = gpubench::report::chipmap::OUTLIER_Z, value_name = "Z")]
    pub z_limit: f64,

    #[command(flatten)]
    pub format: Format,
}

#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help("Print the comparison as JSON instead of the table")))]
pub struct CompareArgs {
    /// The baseline side: a results JSON or a baseline file.
    #[arg(value_name = "OLD")]
    pub old: PathBuf,

    /// The new side: a results JSON or a baseline file.
    #[arg(value_name = "NEW")]
    pub new: PathBuf,

    #[command(flatten)]
    pub format: Format,

    /// Configuration file [default: the nearest gpubench.toml].
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,

    #[command(flatten)]
    pub outputs: VerdictOutputs,
}

#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help("Print the calibration as JSON instead of Markdown tables")))]
pub struct CalibrateArgs {
    /// Results or baseline files, folders of them, or .tar.gz archives of them.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,

    #[command(flatten)]
    pub format: Format,

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
    /// Move a corrupt baseline file aside (to FILE.quarantined-<unix seconds>) so that a new one can be saved.
    Quarantine(BaselineQuarantineArgs),
    /// Put back the baseline that the last save replaced (kept as FILE.previous); the one it
    /// replaces becomes FILE.previous in turn.
    Restore(BaselineRestoreArgs),
}

#[derive(Debug, Args)]
pub struct BaselineQuarantineArgs {
    /// The baseline file to move aside.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

#[derive(Debug, Args)]
pub struct BaselineListArgs {
    #[command(flatten)]
    pub place: BaselinePlace,

    #[command(flatten)]
    pub format: Format,
}

#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help("Print the baseline file's JSON instead")))]
pub struct BaselineShowArgs {
    /// A baseline file, or a baseline in the folder by name, file stem or GPU class slug.
    #[arg(value_name = "NAME|FILE")]
    pub target: String,

    #[command(flatten)]
    pub place: BaselinePlace,

    /// Also list every metric with its noise and threshold.
    #[arg(long)]
    pub all: bool,

    #[command(flatten)]
    pub format: Format,
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

    /// Keep the runs of the N cards that span the others: one of every board part number (up
    /// to N), then the set that leaves the least of each metric's range outside it, beyond what
    /// runs of one card stray by. The spreads (run to run, between cards) are learned from
    /// every run given. Record three runs on every card of the class (`--device all` runs them
    /// at once) and keep three: the levels cards of a class fall into are then in the class,
    /// and the spreads are those of every card measured.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), conflicts_with_all = ["append", "per_gpu"])]
    pub cards: Option<u32>,

    /// Save runs measured beside another GPU process, throttled in more than 1 % of their
    /// samples, given twice, or of another configuration than each other or the baseline
    /// replaced (refused without it).
    #[arg(long)]
    pub force: bool,

    #[command(flatten)]
    pub place: BaselinePlace,
}

#[derive(Debug, Args)]
pub struct BaselineRestoreArgs {
    /// Restore the named baseline instead of the class's default one.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    /// The baseline is keyed by a GPU's UUID too (saved with --per-gpu); give a results file
    /// of that GPU.
    #[arg(long)]
    pub per_gpu: bool,

    /// A results file of the GPU class (or GPU) whose baseline to restore.
    #[arg(value_name = "RESULTS")]
    pub results: PathBuf,

    #[command(flatten)]
    pub place: BaselinePlace,
}

#[derive(Debug, Args)]
pub struct InfoArgs {
    #[command(flatten)]
    pub gpu: OneDevice,

    #[command(flatten)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct RampArgs {
    #[command(flatten)]
    pub gpu: OneDevice,

    /// Milliseconds the GPU idles before the launches.
    #[arg(long, default_value_t = 3000, value_name = "MS")]
    pub idle_ms: u64,

    /// Back-to-back launches after the idle period.
    #[arg(long, default_value_t = 400, value_name = "N")]
    pub launches: usize,

    /// Write the whole trace as JSON here.
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub format: Format,
}

#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help("Print dissect.json to stdout instead of the tables")))]
#[command(mut_arg("device", |a| a.help("CUDA ordinal of the GPU to measure")))]
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

    #[command(flatten)]
    pub gpu: OneDevice,

    #[command(flatten)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct LoadArgs {
    #[command(flatten)]
    pub gpu: OneDevice,

    /// How long to keep the load on.
    #[arg(long, default_value_t = 20, value_name = "SECONDS")]
    pub seconds: u64,

    /// Write the whole trace as JSON here.
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub format: Format,
}

/// Default history database of the `history` commands.
pub const DEFAULT_HISTORY_DB: &str = "gpubench-history.db";

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
#[command(mut_arg("json", |a| a.help("Print the whole analysis (series, change points, runs) as JSON instead of the table")))]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub command: Option<HistoryCommand>,

    /// The history database.
    #[arg(long, value_name = "PATH", default_value = DEFAULT_HISTORY_DB)]
    pub db: PathBuf,

    /// Only metrics whose "benchmark/metric" matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub metric: Option<String>,

    /// Only this card (GPU UUID, or a prefix of it such as GPU-df5b3884).
    #[arg(long, value_name = "UUID")]
    pub card: Option<String>,

    #[command(flatten)]
    pub format: Format,

    /// Write the change points as Markdown (a CI step summary), with the plots when --plots is given.
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,

    /// Write SVG trend plots, one per card and bench family, into this folder.
    #[arg(long, value_name = "DIR")]
    pub plots: Option<PathBuf>,

    /// In the Markdown, link the plots under this URL prefix instead of by relative path.
    #[arg(long, value_name = "URL", requires = "plots")]
    pub plot_url: Option<String>,

    /// Exit with code 8 when a change point falls in the newest N runs of its series.
    #[arg(long, value_name = "N")]
    pub fail_recent: Option<usize>,

    /// Smallest change reported, in percent (5 or 5%): a step of a series; a metric's
    /// threshold from gpubench.toml applies where larger.
    #[arg(long, value_name = "PERCENT", default_value = "1", value_parser = percent)]
    pub min_effect: f64,

    /// Configuration file whose per-metric thresholds set each metric's smallest reported step
    /// [default: the nearest gpubench.toml].
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,

    /// Penalty per change point, in units of the series' noise variance times ln(runs).
    #[arg(long, value_name = "FACTOR", default_value_t = 4.0)]
    pub penalty: f64,
}

#[derive(Debug, Subcommand)]
pub enum HistoryCommand {
    /// Load results files, folders of them, or .tar.gz archives of them into the database (a run already there is skipped).
    Import(HistoryImportArgs),
}

#[derive(Debug, Args)]
pub struct HistoryImportArgs {
    /// Results JSON files, folders (searched recursively) or .tar.gz archives.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,

    /// The history database (created when missing).
    #[arg(long, value_name = "PATH", default_value = DEFAULT_HISTORY_DB)]
    pub db: PathBuf,
}

#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help("Print the report as JSON instead of the tables")))]
pub struct FleetArgs {
    /// Results or baseline files, folders of them (searched recursively), or .tar.gz archives.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,

    #[command(flatten)]
    pub format: Format,

    /// List every metric's envelope, not only the metrics a card is flagged on.
    #[arg(long)]
    pub all: bool,

    /// Write the report as Markdown.
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,

    /// Write the report as JUnit XML (one test case per card; an outlier fails).
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,

    /// Write an SVG of each group's envelope (each card a point) into this folder.
    #[arg(long, value_name = "DIR")]
    pub svg: Option<PathBuf>,

    /// Save the class envelope (a class baseline file, what `health --envelope` reads) built
    /// from the largest group's cards to this file (the file it replaces is kept as
    /// PATH.previous).
    #[arg(long, alias = "save-baseline", value_name = "PATH")]
    pub save_envelope: Option<PathBuf>,

    /// With --save-envelope: save runs measured beside another GPU process, throttled, given
    /// twice or of mixed configurations anyway.
    #[arg(long, requires = "save_envelope")]
    pub force: bool,

    /// Print a `scontrol update ... state=drain` line for each node with an outlier card or a
    /// failed run (printed, never run).
    #[arg(long)]
    pub drain_commands: bool,

    /// Robust z-score beyond which a card's metric is an outlier.
    #[arg(long, default_value_t = 3.5, value_name = "Z")]
    pub z_limit: f64,

    /// Smallest change reported, in percent (5 or 5%): a card's change from the class median;
    /// a metric's threshold from gpubench.toml applies where larger.
    #[arg(long, value_name = "PERCENT", default_value = "5", value_parser = percent)]
    pub min_effect: f64,

    /// Configuration file [default: the nearest gpubench.toml].
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct HealthArgs {
    /// GPUs to check: `all`, a CUDA ordinal, or a list such as `0,2,5`.
    #[arg(long, default_value = "all", value_name = "N|all|N,N")]
    pub device: String,

    /// The class envelope: a class baseline file (from `fleet --save-envelope`), a results file,
    /// or a folder of results [default: this GPU class's baseline in the baselines folder].
    #[arg(long, value_name = "PATH")]
    pub envelope: Option<PathBuf>,

    /// Run the executables of an archive (from `cargo gpubench archive`) instead of building.
    #[arg(long, value_name = "ARCHIVE")]
    pub archive: Option<PathBuf>,

    /// Folder for the health runs' results [default: a temporary folder].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// On failure, drain this node: `scontrol update nodename=$(hostname -s) state=drain reason=...`.
    #[arg(long)]
    pub drain: bool,

    /// Kill the health runs after this many seconds (Slurm kills a HealthCheckProgram at 60 s).
    #[arg(long, default_value_t = 50, value_name = "SECONDS")]
    pub timeout: u64,

    #[command(flatten)]
    pub place: BaselinePlace,
}
