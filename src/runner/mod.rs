//! Orchestration for `cargo gpubench`: build the bench targets through cargo (or take them from
//! an archive), run them one after another, merge their records into one results document.

pub mod archive;
pub mod cargo;
pub mod criterion_files;
pub mod devices;
pub mod execute;
pub mod fanout;
pub mod interrupt;
pub mod lock;
pub mod merge;

use std::time::Instant;

pub use cargo::{BenchBinary, CargoOptions, Workspace, build_benches, parse_bench_artifacts, workspace};
pub use execute::{ExecOptions, RunEvent, run_bench};
pub use merge::{BenchOutput, RunHeader, merge};

use crate::error::{Error, Result};
use crate::results::ResultsDocument;

/// Runs every bench executable in order and merges what they measured. The first failing
/// bench stops the run; what finished before it is returned alongside the error.
pub fn run_all(
    binaries: &[BenchBinary],
    opts: &ExecOptions,
    header: RunHeader,
    on_event: &mut dyn FnMut(RunEvent),
) -> (ResultsDocument, Option<Error>) {
    let started = Instant::now();
    if let Err(e) = prepare_work_dir(opts) {
        return (merge(header, Vec::new(), 0.0), Some(e));
    }
    let mut outputs = Vec::new();
    let mut failure = None;
    for (index, bin) in binaries.iter().enumerate() {
        on_event(RunEvent::BenchStarted { bench: bin.name.clone(), index, total: binaries.len() });
        let t0 = Instant::now();
        let result = run_bench(bin, opts, on_event);
        outputs.push(collect(bin, opts));
        on_event(RunEvent::BenchFinished { bench: bin.name.clone(), seconds: t0.elapsed().as_secs_f64() });
        if let Err(e) = result {
            failure = Some(e);
            break;
        }
    }
    (merge(header, outputs, started.elapsed().as_secs_f64()), failure)
}

fn prepare_work_dir(opts: &ExecOptions) -> Result<()> {
    let dir = &opts.work_dir;
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    std::fs::create_dir_all(opts.record_dir()).map_err(|e| Error::io(dir, e))
}

fn collect(bin: &BenchBinary, opts: &ExecOptions) -> BenchOutput {
    let record_path = crate::protocol::record_file(&opts.record_dir(), &bin.name);
    let record = ResultsDocument::read(&record_path).ok();
    let criterion = criterion_files::read_all(&opts.criterion_home(&bin.name));
    BenchOutput { bench: bin.name.clone(), record, criterion }
}
