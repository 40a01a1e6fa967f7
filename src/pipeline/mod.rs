//! The main job of `cargo gpubench`, as a library call: plan the run, build (or unpack) the
//! bench targets, run them on the GPU and collect their records, write the results, compare
//! them with the baseline, save them as a baseline, and hand each step's result to an
//! [`Observer`] that renders it (the CLI prints tables; a library user can do anything).
//!
//! ```no_run
//! # fn main() -> gpubench::Result<()> {
//! struct Quiet;
//! impl gpubench::pipeline::Observer for Quiet {}
//! let request = gpubench::pipeline::Request::default();
//! let code = gpubench::pipeline::run(&request, &mut Quiet)?;
//! # let _ = code; Ok(()) }
//! ```

pub mod judge;
mod steps;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use judge::{Judge, JudgeRequest, Place, ReportFiles};
pub use steps::{Plan, build, plan, record_history, run_benches};

use crate::error::{Error, Result, exit};
use crate::harness::Profile;
use crate::results::ResultsDocument;
use crate::runner::RunEvent;
use crate::runner::interrupt;
use crate::runner::lock::WaitPolicy;
use crate::verdict::{Comparison, FailOn};

/// What to run and how, with every flag already validated.
#[derive(Debug, Clone)]
pub struct Request {
    /// Measurement profile.
    pub profile: Profile,
    /// Run only benchmarks whose id matches this regular expression.
    pub filter: Option<String>,
    /// CUDA ordinal of the GPU.
    pub device: usize,
    /// Run only these bench targets (all when empty).
    pub benches: Vec<String>,
    /// Run an archive's executables instead of building the workspace's.
    pub archive: Option<PathBuf>,
    /// The workspace's Cargo.toml [default: cargo's search from the current folder].
    pub manifest_path: Option<PathBuf>,
    /// Cargo's flags for building the bench targets.
    pub cargo: crate::runner::CargoOptions,
    /// Where to write the results [default: `<target>/gpubench/results.json`, or
    /// `./gpubench-results.json` with an archive].
    pub output: Option<PathBuf>,
    /// Kill a bench executable that runs longer than this.
    pub timeout: Duration,
    /// Drop throttled samples instead of normalising them.
    pub discard_throttled: bool,
    /// Refuse to measure beside another process on the GPU.
    pub exclusive: bool,
    /// Wait for another gpubench run on the GPU, or refuse.
    pub wait: WaitPolicy,
    /// Also append the run to this history database.
    pub history: Option<PathBuf>,
    /// What the run is judged against.
    pub judge: JudgeRequest,
    /// Verdict report files.
    pub reports: ReportFiles,
    /// Verdicts that fail the run besides REGRESSED.
    pub fail_on: FailOn,
}

impl Default for Request {
    fn default() -> Self {
        Request {
            profile: Profile::Default,
            filter: None,
            device: 0,
            benches: Vec::new(),
            archive: None,
            manifest_path: None,
            cargo: Default::default(),
            output: None,
            timeout: Duration::from_secs(600),
            discard_throttled: false,
            exclusive: false,
            wait: WaitPolicy::Wait,
            history: None,
            judge: JudgeRequest::default(),
            reports: ReportFiles::default(),
            fail_on: FailOn::default(),
        }
    }
}

/// Receives what each step produced, to show it. Every method does nothing by default.
pub trait Observer {
    /// Progress of the bench executables.
    fn event(&mut self, _event: RunEvent) {}
    /// Every bench executable has finished (or the run stopped).
    fn benches_finished(&mut self) {}
    /// Another gpubench run holds the GPU; the run waits for it.
    fn waiting_for_gpu(&mut self, _uuid: &str, _holder: &str) {}
    /// A one-line note about a step (a file written, a baseline saved or missing).
    fn note(&mut self, _line: &str) {}
    /// The results, written to `path`; `stopped` when a bench failed or the run was interrupted.
    fn results(&mut self, _doc: &ResultsDocument, _stopped: bool, _path: &Path) {}
    /// The comparison with the baseline.
    fn comparison(&mut self, _c: &Comparison) {}
}

/// Runs the main job and returns its exit code: 1 when a metric REGRESSED (or a verdict of
/// `fail_on` occurred), else 0. Errors carry their own codes ([`crate::error::exit`]).
pub fn run(req: &Request, obs: &mut dyn Observer) -> Result<i32> {
    let plan = plan(req, obs)?;
    if req.archive.is_none() {
        obs.note("building the bench targets (cargo bench --no-run; cargo's progress follows)");
    }
    let binaries = build(req, &plan)?;
    let (doc, failure) = run_benches(req, &plan, &binaries, obs);
    doc.write(&plan.output)?;
    obs.results(&doc, failure.is_some(), &plan.output);
    if let Some(e) = failure {
        return Err(e);
    }
    let comparison = plan.judge.compare(&doc)?;
    if let Some(c) = &comparison {
        obs.comparison(c);
        req.reports.write(c, obs)?;
    }
    plan.judge.save(&doc, now_unix_s(), obs)?;
    if interrupt::requested() {
        return Err(Error::Interrupted);
    }
    record_history(req, &doc, obs)?;
    Ok(comparison.map_or(exit::OK, |c| c.exit_code_with(req.fail_on)))
}

/// Seconds since the Unix epoch.
pub fn now_unix_s() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}
