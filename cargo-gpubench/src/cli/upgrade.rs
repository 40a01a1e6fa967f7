//! Flags of `cargo gpubench upgrade`.

use std::path::PathBuf;

use clap::Args;

use super::{BaselinePlace, CargoBuild, Format};

const AFTER_HELP: &str = "\
Forms:
  Two stacks in one job (a toolkit or NVRTC upgrade, or any environment change):
    cargo gpubench upgrade --a old.tar.gz --b new.tar.gz --device all
    cargo gpubench upgrade --archive a.tar.gz --a-nvrtc /opt/cuda-12.9/lib64/libnvrtc.so.12 \\
        --b-nvrtc /usr/local/cuda-13.0/lib64/libnvrtc.so.13
    cargo gpubench upgrade --b-env CUDA_MODULE_LOADING=EAGER
  Archives come from `cargo gpubench archive`; a stack without one runs this workspace, built
  once by the job. Runs go A, B, A, B, ... (--rounds), each its own process of the stack's CLI
  (`--archive ROOT --device N --no-baseline -o FILE`), every selected GPU at once. Per card, A's
  runs are the baseline of B's, judged with the run as the unit.

  Before/after on the same card (a driver upgrade, which cannot happen inside one job):
    cargo gpubench --save-baseline before --append --per-gpu --device all   # three times, before
    cargo gpubench upgrade --before before --device all                       # after the upgrade
  One run before shows nothing of how far runs stray (some metrics take one of a few levels
  per process); three show more, and a per-card baseline takes the spreads of the folder's
  class baseline, where there is one, as its prior.

NVRTC: cudarc opens NVRTC by name (libnvrtc.so, libnvrtc.so.13, libnvrtc.so.12). For --a-nvrtc
LIB the job links LIB under each of those names in a folder it puts first on the runs'
LD_LIBRARY_PATH, followed by LIB's own folder (for libnvrtc-builtins). Each run records the
NVRTC version it loaded.

Machine code: with cuobjdump or nvdisasm on the PATH or in $CUDA_HOME/bin, each stack compiles
every kernel with its own NVRTC and the job disassembles the cubins; a flagged metric then says
whether the executed inner loop of its kernels changed (instruction counts by class), or
\"machine code identical: not a compiler change\". Without a disassembler the cubin hashes decide.

Output folder (--out): runs/<UUID>/a-N.json, b-N.json and their logs; code/<arch>/<a|b>/ the
listings; upgrade.json, upgrade.md, upgrade-junit.xml. --from DIR judges such a folder again
without a GPU.

Exit codes of upgrade: 0 no regression; 1 a metric REGRESSED and its machine code changed (or is
not known); 11 REGRESSED with identical machine code (not a compiler change); 12 could not judge
(a card lacks a stack's runs, or --fail-on verdicts occurred); 2, 3, 4, 5 as for a run (usage,
no GPU / NVRTC library, a failed run, a missing archive).";

/// Options of `cargo gpubench upgrade`.
#[derive(Debug, Args)]
#[command(after_long_help = AFTER_HELP)]
#[command(mut_arg("json", |a| a.help("Print the upgrade report as JSON instead of the tables")))]
pub struct UpgradeArgs {
    /// Run only benchmarks whose id ("family/name") matches this regular expression.
    #[arg(value_name = "FILTER")]
    pub filter: Option<String>,

    /// Stack A (before): an archive from `cargo gpubench archive` (.tar.gz or its unpacked folder)
    /// [default: --archive, else this workspace].
    #[arg(long = "a", value_name = "ARCHIVE")]
    pub a: Option<PathBuf>,

    /// Stack B (after): an archive [default: --archive, else this workspace].
    #[arg(long = "b", value_name = "ARCHIVE")]
    pub b: Option<PathBuf>,

    /// The one archive of both stacks, when they differ by NVRTC or environment only.
    #[arg(long, value_name = "ARCHIVE", conflicts_with_all = ["a", "b"])]
    pub archive: Option<PathBuf>,

    /// The NVRTC library stack A's runs load (e.g. .../libnvrtc.so.12 from the
    /// nvidia-cuda-nvrtc-cu12 wheel).
    #[arg(long, value_name = "LIB")]
    pub a_nvrtc: Option<PathBuf>,

    /// The NVRTC library stack B's runs load.
    #[arg(long, value_name = "LIB")]
    pub b_nvrtc: Option<PathBuf>,

    /// Environment of stack A's runs (repeatable).
    #[arg(long, value_name = "KEY=VALUE", value_parser = gpubench::upgrade::stacks::parse_env)]
    pub a_env: Vec<(String, String)>,

    /// Environment of stack B's runs (repeatable).
    #[arg(long, value_name = "KEY=VALUE", value_parser = gpubench::upgrade::stacks::parse_env)]
    pub b_env: Vec<(String, String)>,

    /// Before/after: judge B's runs against each card's baseline NAME, saved before the upgrade
    /// with `cargo gpubench --save-baseline NAME --per-gpu`; stack A is not run.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["a", "a_nvrtc", "a_env"])]
    pub before: Option<String>,

    /// Runs of each stack per GPU.
    #[arg(long, default_value_t = gpubench::upgrade::DEFAULT_ROUNDS, value_name = "N")]
    pub rounds: usize,

    /// GPU(s): a CUDA ordinal, `all`, or a list such as `0,2,5`; each is judged on its own.
    #[arg(long, default_value = "0", value_name = "N|all|N,N")]
    pub device: gpubench::runner::devices::DeviceSelection,

    /// The quick profile in every run (a smoke job).
    #[arg(long, conflicts_with = "full")]
    pub quick: bool,

    /// The full profile in every run.
    #[arg(long)]
    pub full: bool,

    /// Run only these bench targets (repeatable).
    #[arg(long = "bench", value_name = "NAME")]
    pub benches: Vec<String>,

    /// Kill a bench executable of a run after this many seconds.
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    pub timeout: u64,

    /// The job's folder: runs, listings and reports.
    #[arg(long, default_value = "gpubench-upgrade", value_name = "DIR")]
    pub out: PathBuf,

    /// Judge the runs of an earlier job's folder again, without a GPU (listings it holds are used).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["a", "b", "archive", "a_nvrtc", "b_nvrtc"])]
    pub from: Option<PathBuf>,

    /// Do not compile and disassemble the kernels: compare machine code by cubin hash only.
    #[arg(long)]
    pub no_disassemble: bool,

    /// Path to the workspace's Cargo.toml (for a stack built from the workspace).
    #[arg(long, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,

    #[command(flatten)]
    pub cargo: CargoBuild,

    /// Also write the report as Markdown here (the job's folder always gets upgrade.md).
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,

    /// Also write the report as JUnit XML here.
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,

    /// Also write the report as JSON here.
    #[arg(long, value_name = "PATH")]
    pub verdicts_json: Option<PathBuf>,

    /// List PASS rows in the terminal tables too.
    #[arg(long)]
    pub all: bool,

    /// Exit 12 on these verdicts (comma-separated): inconclusive, not-measured, insensitive.
    #[arg(long, value_name = "VERDICTS", value_parser = gpubench::verdict::FailOn::parse)]
    pub fail_on: Option<gpubench::verdict::FailOn>,

    #[command(flatten)]
    pub place: BaselinePlace,

    #[command(flatten)]
    pub format: Format,
}
