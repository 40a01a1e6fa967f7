//! Progress on stderr while the benches run: a spinner on a terminal, plain lines otherwise,
//! with an estimate of the time left once a bench target has finished.

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
    /// Seconds each finished bench target took.
    finished: Vec<f64>,
    total: usize,
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
        Progress { bar, verbose, done_in_bench: 0, bench: String::new(), finished: Vec::new(), total: 0 }
    }

    /// Handles one event.
    pub fn event(&mut self, e: RunEvent) {
        match e {
            RunEvent::BenchStarted { bench, index, total } => {
                self.bench = bench;
                self.done_in_bench = 0;
                self.total = total;
                let left = seconds_left(&self.finished, total).map(|s| format!(", {} left", duration(s)));
                self.line(format!("[{}/{}] {}{}", index + 1, total, self.bench, left.unwrap_or_default()));
            }
            RunEvent::BenchmarkDone { id } => {
                self.done_in_bench += 1;
                let left = seconds_left(&self.finished, self.total).map(|s| format!(", {} left", duration(s)));
                let msg = format!(
                    "{}: {} benchmarks done, last {id}{}",
                    self.bench,
                    self.done_in_bench,
                    left.unwrap_or_default()
                );
                match &self.bar {
                    Some(bar) => bar.set_message(msg),
                    None if self.verbose => {}
                    None => eprintln!("      {id}"),
                }
            }
            RunEvent::BenchFinished { bench, seconds } => {
                self.finished.push(seconds);
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

/// The time the bench targets not yet finished will take, estimated from the finished ones'
/// mean (bench targets differ, so it is rough); none before the first has finished.
pub fn seconds_left(finished: &[f64], total: usize) -> Option<f64> {
    if finished.is_empty() {
        return None;
    }
    let mean = finished.iter().sum::<f64>() / finished.len() as f64;
    Some(mean * total.saturating_sub(finished.len()) as f64)
}

/// "~40 s", "~3 min 20 s": whole seconds, marked as an estimate.
fn duration(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    if s < 60 { format!("~{s} s") } else { format!("~{} min {} s", s / 60, s % 60) }
}

#[cfg(test)]
mod tests {
    use super::{duration, seconds_left};

    #[test]
    fn time_left_is_the_finished_targets_mean_times_those_left() {
        assert_eq!(seconds_left(&[], 12), None);
        assert_eq!(seconds_left(&[10.0, 20.0], 12), Some(150.0));
        assert_eq!(seconds_left(&[10.0, 20.0, 30.0], 3), Some(0.0));
        assert_eq!(seconds_left(&[10.0; 5], 3), Some(0.0));
    }

    #[test]
    fn durations_read_as_estimates() {
        assert_eq!(duration(42.4), "~42 s");
        assert_eq!(duration(200.0), "~3 min 20 s");
        assert_eq!(duration(-1.0), "~0 s");
    }
}
