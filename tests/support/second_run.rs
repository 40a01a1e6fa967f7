//! A baseline's second run where a test needs one.
//!
//! One run against one run of the same card learns no run-to-run spread, and such a comparison
//! decides nothing (a process's own level cannot be told from a change). A test of what the
//! rule or a report does with a verdict takes a baseline of the recorded run and a second run
//! drawn from its samples: two processes that landed on one level, the run-to-run spread a
//! run's sampling error.

use gpubench::results::{ResultsDocument, Summary};

/// `run`'s samples drawn again with replacement (a fixed draw per benchmark, shared by its
/// metrics and clock readings), recorded a minute later.
pub fn second_run(run: &ResultsDocument) -> ResultsDocument {
    let mut d = run.clone();
    d.created_unix_s += 60;
    for b in &mut d.benchmarks {
        let n = b.metrics.first().map_or(0, |m| m.samples.len());
        if n == 0 {
            continue;
        }
        let idx: Vec<usize> =
            (0..n as u64).map(|i| ((i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 17) % n as u64) as usize).collect();
        if b.clocks.len() == n {
            b.clocks = idx.iter().map(|&i| b.clocks[i]).collect();
        }
        if b.time_ns.len() == n {
            b.time_ns = idx.iter().map(|&i| b.time_ns[i]).collect();
        }
        if b.telemetry.len() == n {
            b.telemetry = idx.iter().map(|&i| b.telemetry[i].clone()).collect();
        }
        let draw = |v: &[f64]| -> Vec<f64> { idx.iter().map(|&i| v[i]).collect() };
        for m in b.metrics.iter_mut().filter(|m| m.samples.len() == n) {
            m.samples = draw(&m.samples);
            m.summary = Summary::of(&m.samples);
            if let Some(z) = m.normalized.as_mut().filter(|z| z.samples.len() == n) {
                z.samples = draw(&z.samples);
                z.summary = Summary::of(&z.samples);
            }
        }
    }
    d
}

/// The baseline runs of a test: `run` and its [`second_run`].
pub fn two_runs(run: &ResultsDocument) -> Vec<ResultsDocument> {
    vec![run.clone(), second_run(run)]
}
