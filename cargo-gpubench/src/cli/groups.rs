//! Flag groups several commands share (`#[command(flatten)]`): output format, one GPU, which
//! baseline, where baselines are, where verdicts go, cargo's build flags; and the parsers of
//! values several commands take (percentages).

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

/// Cargo's flags for building the bench targets, passed on to `cargo bench --no-run`.
#[derive(Debug, Args, Clone, Default)]
pub struct CargoBuild {
    /// Build and run only the bench targets of this package (repeatable; cargo's -p) [default:
    /// every package of the workspace].
    #[arg(short = 'p', long = "package", value_name = "SPEC")]
    pub packages: Vec<String>,

    /// Cargo features to activate when building the bench targets (repeatable; cargo's -F).
    #[arg(short = 'F', long, value_name = "FEATURES")]
    pub features: Vec<String>,

    /// Cargo profile the bench targets are built with [default: bench].
    #[arg(long = "profile", value_name = "PROFILE-NAME")]
    pub cargo_profile: Option<String>,

    /// When cargo colours its build messages: auto, always or never.
    #[arg(long, value_name = "WHEN", value_parser = ["auto", "always", "never"])]
    pub color: Option<String>,
}

impl CargoBuild {
    /// The library's description of the same.
    pub fn options(&self) -> gpubench::runner::CargoOptions {
        gpubench::runner::CargoOptions {
            packages: self.packages.clone(),
            features: self.features.clone(),
            profile: self.cargo_profile.clone(),
            color: self.color.clone(),
        }
    }
}

/// A percentage: `5`, `5%` or `0.5 %`, in [0, 100).
pub fn percent(s: &str) -> Result<f64, String> {
    let number = s.trim().trim_end_matches('%').trim_end();
    let v: f64 = number.parse().map_err(|_| format!("`{s}` is not a percentage (such as 5 or 5%)"))?;
    if !(v.is_finite() && (0.0..100.0).contains(&v)) {
        return Err(format!("{s} is not a percentage from 0 up to 100"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::percent;

    #[test]
    fn percentages_take_an_optional_percent_sign() {
        assert_eq!(percent("5"), Ok(5.0));
        assert_eq!(percent("5%"), Ok(5.0));
        assert_eq!(percent("0.5 %"), Ok(0.5));
        assert_eq!(percent("0"), Ok(0.0));
        assert!(percent("100").is_err());
        assert!(percent("-1%").is_err());
        assert!(percent("NaN").is_err());
        assert!(percent("five").is_err());
        assert!(percent("%").is_err());
    }
}
