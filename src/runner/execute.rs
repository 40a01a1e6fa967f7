//! Running one bench executable: environment, progress, logs, watchdog.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::cargo::BenchBinary;
use super::interrupt;
use crate::error::{Error, Result, exit};
use crate::harness::Profile;
use crate::protocol::{
    self, ENV_CRITERION_HOME, ENV_DEVICE, ENV_DISCARD_THROTTLED, ENV_PROFILE, ENV_PROGRESS, ENV_RECORD_DIR, Line,
};

/// What the run reports while it goes.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent {
    /// A bench executable starts (`index` of `total`).
    BenchStarted {
        /// Target name.
        bench: String,
        /// 0-based position.
        index: usize,
        /// Number of executables.
        total: usize,
    },
    /// A benchmark inside it finished.
    BenchmarkDone {
        /// "family/name".
        id: String,
    },
    /// A bench executable finished.
    BenchFinished {
        /// Target name.
        bench: String,
        /// Its wall time.
        seconds: f64,
    },
    /// A line of the bench's own output (shown with --verbose).
    Output(String),
}

/// How bench executables are run.
#[derive(Debug, Clone)]
pub struct ExecOptions {
    /// Measurement profile.
    pub profile: Profile,
    /// Criterion name filter.
    pub filter: Option<String>,
    /// CUDA ordinal.
    pub device: usize,
    /// Where records, criterion files and logs go.
    pub work_dir: PathBuf,
    /// Kill a bench executable that runs longer than this.
    pub timeout: Duration,
    /// Drop throttled samples instead of normalising them.
    pub discard_throttled: bool,
}

impl ExecOptions {
    /// Folder of the family records.
    pub fn record_dir(&self) -> PathBuf {
        self.work_dir.join("records")
    }

    /// Criterion's home for `bench`.
    pub fn criterion_home(&self, bench: &str) -> PathBuf {
        self.work_dir.join("criterion").join(bench)
    }
}

/// Runs `bin` to completion (or until the watchdog fires), reporting progress to `on_event`.
pub fn run_bench(bin: &BenchBinary, opts: &ExecOptions, on_event: &mut dyn FnMut(RunEvent)) -> Result<()> {
    let log_path = opts.work_dir.join(format!("{}.log", bin.name));
    let mut log = std::fs::File::create(&log_path).map_err(|e| Error::io(&log_path, e))?;
    let mut cmd = Command::new(&bin.path);
    cmd.arg("--bench").arg("--noplot");
    if let Some(f) = &opts.filter {
        cmd.arg(f);
    }
    cmd.env(ENV_PROFILE, opts.profile.name())
        .env(ENV_DEVICE, opts.device.to_string())
        .env(ENV_RECORD_DIR, opts.record_dir())
        .env(ENV_PROGRESS, "1")
        .env(ENV_CRITERION_HOME, opts.criterion_home(&bin.name))
        .env_remove(ENV_DISCARD_THROTTLED)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if opts.discard_throttled {
        cmd.env(ENV_DISCARD_THROTTLED, "1");
    }
    let mut child = cmd.spawn().map_err(|e| Error::BenchProcess {
        bench: bin.name.clone(),
        reason: format!("could not start {}: {e}", bin.path.display()),
        code: exit::BENCH_FAILURE,
    })?;
    let (tx, rx) = mpsc::channel::<String>();
    let readers: Vec<_> = [
        child.stdout.take().map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
        child.stderr.take().map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
    ]
    .into_iter()
    .flatten()
    .map(|stream| {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(|l| l.ok()) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        })
    })
    .collect();
    drop(tx);
    let started = Instant::now();
    let status = loop {
        while let Ok(line) = rx.try_recv() {
            handle_line(line, &mut log, on_event);
        }
        if interrupt::requested() {
            // Ctrl-C or a termination request: stop the bench; its finished benchmarks are
            // already in its record.
            let _ = child.kill();
            let _ = child.wait();
            return Err(Error::Interrupted);
        }
        if let Some(status) = child.try_wait().map_err(|e| Error::io(&bin.path, e))? {
            break status;
        }
        if started.elapsed() > opts.timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Error::Watchdog { what: format!("bench `{}`", bin.name), seconds: opts.timeout.as_secs() });
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    for r in readers {
        let _ = r.join();
    }
    for line in rx.try_iter() {
        handle_line(line, &mut log, on_event);
    }
    if status.success() {
        return Ok(());
    }
    if interrupt::requested() {
        return Err(Error::Interrupted);
    }
    Err(bench_failure(bin, status, &opts.record_dir(), &log_path))
}

fn handle_line(line: String, log: &mut std::fs::File, on_event: &mut dyn FnMut(RunEvent)) {
    let _ = writeln!(log, "{line}");
    match protocol::parse_line(&line) {
        Line::Done(id) => on_event(RunEvent::BenchmarkDone { id: id.to_string() }),
        Line::Progress => {}
        Line::Output => on_event(RunEvent::Output(line)),
    }
}

fn bench_failure(bin: &BenchBinary, status: std::process::ExitStatus, record_dir: &Path, log: &Path) -> Error {
    let own = std::fs::read_to_string(protocol::error_file(record_dir, &bin.name))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    let code = status.code();
    let reason = match (&own, code) {
        (Some(msg), _) => msg.clone(),
        (None, Some(c)) => format!("exited with code {c} (log: {})", log.display()),
        (None, None) => format!("killed by a signal (log: {})", log.display()),
    };
    // Our harness exits with our documented codes; anything else is a crash.
    let code = match code {
        Some(c) if own.is_some() && c != 0 => c,
        _ => exit::BENCH_FAILURE,
    };
    Error::BenchProcess { bench: bin.name.clone(), reason, code }
}
