//! What the commands that judge runs share: configuration, the baselines folder, and writing
//! the verdict reports.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use gpubench::baseline::Store;
use gpubench::config::Config;
use gpubench::error::{Error, Result};
use gpubench::report::{TableOptions, comparison_json, junit, markdown, verdict_report};
use gpubench::results::write_atomic;
use gpubench::verdict::Comparison;

use crate::cli::{BaselinePlace, VerdictOutputs};

/// The configuration: `--config`, else the nearest gpubench.toml from `start` upwards.
pub fn config(place: &BaselinePlace, start: &Path) -> Result<Config> {
    match &place.config {
        Some(path) => Config::load(path),
        None => Config::discover(start),
    }
}

/// The baselines folder: `--baseline-dir`, else the configuration's, else `<root>/baselines`.
pub fn store(place: &BaselinePlace, config: &Config, root: &Path) -> Store {
    let dir =
        place.baseline_dir.clone().or_else(|| config.baseline_dir.clone()).unwrap_or_else(|| root.join("baselines"));
    Store::new(dir)
}

/// The current folder.
pub fn current_dir() -> Result<PathBuf> {
    std::env::current_dir().map_err(|e| Error::io(".", e))
}

/// A report format.
type Render = fn(&Comparison) -> String;

/// Prints the terminal report (on stderr when stdout carries JSON) and writes the requested
/// report files.
pub fn emit(c: &Comparison, outputs: &VerdictOutputs, to_stderr: bool) -> Result<()> {
    let terminal = if to_stderr { std::io::stderr().is_terminal() } else { std::io::stdout().is_terminal() };
    let color = terminal && std::env::var_os("NO_COLOR").is_none();
    let text = verdict_report(c, TableOptions { color, all: outputs.all });
    if to_stderr {
        crate::output::emit_err(&text);
    } else {
        crate::output::emit_raw(&text);
    }
    let files: [(&Option<PathBuf>, Render); 3] =
        [(&outputs.markdown, markdown), (&outputs.junit, junit), (&outputs.verdicts_json, comparison_json)];
    for (path, render) in files {
        if let Some(path) = path {
            write_atomic(path, render(c).as_bytes())?;
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(())
}

/// `path` relative to the current folder when it lies below it (shorter labels in reports).
pub fn shown(path: &Path) -> String {
    let relative = std::env::current_dir().ok().and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf));
    relative.unwrap_or_else(|| path.to_path_buf()).display().to_string()
}

/// Whether a `--baseline` value names a file rather than a baseline in the folder.
pub fn is_file_argument(value: &str) -> bool {
    value.contains('/') || value.ends_with(".json")
}
