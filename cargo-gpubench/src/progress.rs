//! Progress on stderr while the benches run: a spinner on a terminal, plain lines otherwise.

use std::io::IsTerminal;
use std::time::Duration;

use gpubench::runner::RunEvent;
use indicatif::{ProgressBar, ProgressStyle};

/// Shows run events to the user.
pub struct Progress {
    bar: Option<ProgressBar>,
    verbose: bool,
    done_in_bench: usize,
    bench: String,
}

impl Progress {
    /// A spinner when stderr is a terminal (and not verbose), else plain lines.
    pub fn new(verbose: bool) -> Self {
        let bar = (std::io::stderr().is_terminal() && !verbose).then(|| {
            let bar = ProgressBar::new_spinner();
            bar.set_style(ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}").expect("valid template"));
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        Progress { bar, verbose, done_in_bench: 0, bench: String::new() }
    }

    /// Handles one event.
    pub fn event(&mut self, e: RunEvent) {
        match e {
            RunEvent::BenchStarted { bench, index, total } => {
                self.bench = bench;
                self.done_in_bench = 0;
                self.line(format!("[{}/{}] {}", index + 1, total, self.bench));
            }
            RunEvent::BenchmarkDone { id } => {
                self.done_in_bench += 1;
                let msg = format!("{}: {} benchmarks done, last {id}", self.bench, self.done_in_bench);
                match &self.bar {
                    Some(bar) => bar.set_message(msg),
                    None if self.verbose => {}
                    None => eprintln!("      {id}"),
                }
            }
            RunEvent::BenchFinished { bench, seconds } => {
                self.line(format!("      {bench} finished in {seconds:.1} s ({} benchmarks)", self.done_in_bench));
            }
            RunEvent::Output(line) => {
                if self.verbose {
                    eprintln!("{line}");
                }
            }
        }
    }

    fn line(&self, s: String) {
        match &self.bar {
            Some(bar) => bar.println(s),
            None => eprintln!("{s}"),
        }
    }

    /// Removes the spinner.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
