//! The protocol between `cargo gpubench` (the runner, [`crate::runner`]) and a bench process (the
//! harness, [`crate::harness`]): the environment variables that configure the bench process
//! (criterion rejects flags it does not know, so ours travel this way), the files it leaves in
//! the record folder, and the progress lines it prints. Both sides use only these definitions.
//!
//! A bench target's record name is its cargo target name: `benches/<name>.rs` calls
//! `gpubench::harness::main("<name>", ..)`, writes `<record dir>/<name>.json` (or `<name>.error`
//! when it fails), and the runner reads the file named after the target it ran. The registry
//! ([`crate::families::REGISTRY`]) and a test over `Cargo.toml` keep the names equal.

use std::path::{Path, PathBuf};

/// Selects the measurement profile: `quick`, `default` or `full`.
pub const ENV_PROFILE: &str = "GPUBENCH_PROFILE";
/// Folder where the bench process writes its family record (`<family>.json`).
pub const ENV_RECORD_DIR: &str = "GPUBENCH_RECORD_DIR";
/// CUDA ordinal of the GPU to measure.
pub const ENV_DEVICE: &str = "GPUBENCH_DEVICE";
/// Set by `cargo gpubench`: print progress lines for it on stderr.
pub const ENV_PROGRESS: &str = "GPUBENCH_PROGRESS";
/// Set: drop throttled samples instead of keeping them marked and normalised.
pub const ENV_DISCARD_THROTTLED: &str = "GPUBENCH_DISCARD_THROTTLED";
/// Set: do not poll NVML.
pub const ENV_NO_TELEMETRY: &str = "GPUBENCH_NO_TELEMETRY";
/// Set by a parent that gave this process a single GPU through `CUDA_VISIBLE_DEVICES`: the CUDA
/// ordinal the parent knows that GPU by, recorded in the results instead of 0.
pub const ENV_ORDINAL: &str = "GPUBENCH_ORDINAL";
/// Criterion's own variable: the folder of its estimates, one per bench target.
pub const ENV_CRITERION_HOME: &str = "CRITERION_HOME";

/// Prefix of the progress lines a bench process prints for `cargo gpubench`.
pub const PROGRESS_PREFIX: &str = "gpubench-progress: ";

/// The record a bench process writes on success: `<dir>/<bench>.json`.
pub fn record_file(dir: &Path, bench: &str) -> PathBuf {
    dir.join(format!("{bench}.json"))
}

/// The message a bench process leaves when it fails: `<dir>/<bench>.error`.
pub fn error_file(dir: &Path, bench: &str) -> PathBuf {
    dir.join(format!("{bench}.error"))
}

/// The progress line that says benchmark `id` ("family/name") finished.
pub fn done_line(id: &str) -> String {
    format!("{PROGRESS_PREFIX}done {id}")
}

/// What a line of a bench process's output says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line<'a> {
    /// Benchmark `id` finished.
    Done(&'a str),
    /// Another progress line (ignored).
    Progress,
    /// The bench's own output.
    Output,
}

/// Reads one line of a bench process's output.
pub fn parse_line(line: &str) -> Line<'_> {
    match line.strip_prefix(PROGRESS_PREFIX) {
        Some(rest) => rest.strip_prefix("done ").map_or(Line::Progress, Line::Done),
        None => Line::Output,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_round_trip() {
        assert_eq!(parse_line(&done_line("stream/copy")), Line::Done("stream/copy"));
        assert_eq!(parse_line("gpubench-progress: started"), Line::Progress);
        assert_eq!(parse_line("stream/copy time: [1 ms]"), Line::Output);
    }

    #[test]
    fn records_and_errors_are_named_after_the_bench() {
        let dir = Path::new("/w/records");
        assert_eq!(record_file(dir, "dram"), Path::new("/w/records/dram.json"));
        assert_eq!(error_file(dir, "dram"), Path::new("/w/records/dram.error"));
    }
}
