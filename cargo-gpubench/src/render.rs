//! How the CLI shows the steps of the main job ([`gpubench::pipeline::Observer`]) and verdicts:
//! tables on stdout (or JSON with `--json`), notes and progress on stderr.

use std::io::IsTerminal;
use std::path::Path;

use gpubench::pipeline::Observer;
use gpubench::report::{TableOptions, summary_table, verdict_report};
use gpubench::results::ResultsDocument;
use gpubench::runner::RunEvent;
use gpubench::verdict::Comparison;

use crate::progress::Progress;

/// The terminal: progress while the benches run, then the results and the verdicts.
pub struct Terminal {
    progress: Progress,
    json: bool,
    all: bool,
}

impl Terminal {
    /// Results as JSON on stdout when `json` (the verdicts then go to stderr); PASS rows listed
    /// when `all`.
    pub fn new(verbose: bool, json: bool, all: bool) -> Self {
        Terminal { progress: Progress::new(verbose), json, all }
    }
}

impl Observer for Terminal {
    fn event(&mut self, event: RunEvent) {
        self.progress.event(event);
    }

    fn benches_finished(&mut self) {
        self.progress.finish();
    }

    fn waiting_for_gpu(&mut self, uuid: &str, holder: &str) {
        eprintln!("GPU {uuid} is in use by another gpubench run ({holder}); waiting for it (Ctrl-C to give up)");
    }

    fn note(&mut self, line: &str) {
        eprintln!("{line}");
    }

    fn results(&mut self, doc: &ResultsDocument, stopped: bool, path: &Path) {
        if self.json {
            crate::output::emit(serde_json::to_string_pretty(doc).expect("results serialise"));
        } else {
            crate::output::emit(summary_table(doc));
            crate::output::emit(format!(
                "{} on {} (driver {}, CUDA {}, NVRTC {}): {} benchmarks in {:.1} s",
                if stopped { "stopped" } else { "measured" },
                doc.gpu.name,
                doc.stack.driver_version.as_deref().unwrap_or("unknown"),
                doc.stack.cuda_driver_api,
                doc.stack.nvrtc_version,
                doc.benchmarks.len(),
                doc.wall_time_s
            ));
            if let Some(t) = &doc.telemetry {
                crate::output::emit(format!("telemetry: {}", gpubench::telemetry::describe(t)));
            }
        }
        eprintln!("results: {}", path.display());
    }

    fn comparison(&mut self, c: &Comparison) {
        verdicts(c, self.all, self.json);
    }
}

/// Notes of a step on stderr, nothing else.
pub struct Notes;

impl Observer for Notes {
    fn note(&mut self, line: &str) {
        eprintln!("{line}");
    }
}

/// Prints the verdict table (on stderr when stdout carries JSON).
pub fn verdicts(c: &Comparison, all: bool, to_stderr: bool) {
    let terminal = if to_stderr { std::io::stderr().is_terminal() } else { std::io::stdout().is_terminal() };
    let color = terminal && std::env::var_os("NO_COLOR").is_none();
    let text = verdict_report(c, TableOptions { color, all });
    if to_stderr {
        crate::output::emit_err(&text);
    } else {
        crate::output::emit_raw(&text);
    }
}
