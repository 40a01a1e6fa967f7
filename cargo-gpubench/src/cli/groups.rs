//! Flag groups several commands share (`#[command(flatten)]`): output format, one GPU, which
//! baseline, where baselines are, where verdicts go.

use std::path::PathBuf;

use clap::Args;

/// `--json`: the output format, shared by every command that prints a table.
#[derive(Debug, Args, Clone, Default)]
pub struct Format {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `--device N`: the one GPU of a command that measures one.
#[derive(Debug, Args, Clone)]
pub struct OneDevice {
    /// CUDA ordinal of the GPU.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub device: usize,
}

/// Which baseline a run is compared with.
#[derive(Debug, Args, Clone, Default)]
pub struct BaselineChoice {
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

impl BaselinePlace {
    /// The library's description of the same.
    pub fn get(&self) -> gpubench::pipeline::Place {
        gpubench::pipeline::Place { baseline_dir: self.baseline_dir.clone(), config: self.config.clone() }
    }
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

    /// Write the verdicts, counts and telemetry as one self-contained HTML page [default:
    /// next to --verdicts-json, with the extension .html].
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,

    /// List PASS rows in the terminal table too.
    #[arg(long)]
    pub all: bool,

    /// Also exit 1 on these verdicts (comma-separated): inconclusive, not-measured, insensitive.
    #[arg(long, value_name = "VERDICTS", value_parser = gpubench::verdict::FailOn::parse)]
    pub fail_on: Option<gpubench::verdict::FailOn>,

    /// Compare with a baseline of another GPU class (refused otherwise, exit code 10).
    #[arg(long)]
    pub allow_other_class: bool,
}

impl VerdictOutputs {
    /// The report files asked for.
    pub fn files(&self) -> gpubench::pipeline::ReportFiles {
        gpubench::pipeline::ReportFiles {
            markdown: self.markdown.clone(),
            junit: self.junit.clone(),
            json: self.verdicts_json.clone(),
            html: self.html.clone(),
        }
    }
}
