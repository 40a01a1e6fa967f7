//! Library integration tests (one test binary; modules per subject). None needs a GPU.

#[path = "library/archive.rs"]
mod archive;
#[path = "library/cargo_messages.rs"]
mod cargo_messages;
#[path = "library/kernels_compile.rs"]
mod kernels_compile;
#[path = "library/merge.rs"]
mod merge;
#[path = "library/results_files.rs"]
mod results_files;
#[path = "library/summary_table.rs"]
mod summary_table;
#[path = "library/telemetry.rs"]
mod telemetry;

/// Path of a committed fixture.
pub fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}
