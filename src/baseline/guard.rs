//! What a baseline save refuses, for `baseline save` and `fleet --save-envelope` alike: runs
//! that would make every later verdict a judgement against a disturbed measurement.
//!
//! Always refused (no flag overrides it): runs with missing or non-finite statistics
//! ([`super::check_runs`]). Refused unless `--force`:
//! - a run measured while another process used the GPU (a sample's telemetry names the
//!   process, which makes the verdicts of that benchmark INCONCLUSIVE);
//! - a run throttled in more than [`MAX_THROTTLED_SHARE`] of its samples;
//! - the same run twice (same GPU and start time), among the new runs or already in the
//!   baseline appended to;
//! - runs of another benchmark configuration (settings: profile, filter, samples, times)
//!   than each other, or than the baseline they replace.

use std::collections::BTreeSet;

use super::Baseline;
use crate::results::ResultsDocument;

/// Largest share of a run's telemetry samples that may be throttled for it to be saved as a
/// baseline without `--force`: 1 % (a committed baseline's runs have 0 or 1 of 1,680).
pub const MAX_THROTTLED_SHARE: f64 = 0.01;

/// One run's label in messages: "run 2 (GPU-0ecb8783..., started at unix time N)".
fn label(i: usize, run: &ResultsDocument) -> String {
    format!("run {} ({}, started at unix time {})", i + 1, run.gpu.uuid, run.created_unix_s)
}

/// Why `runs` (new, oldest first) must not become or join `existing` without `--force`: one
/// reason per problem found, empty when there is none.
pub fn problems(runs: &[ResultsDocument], existing: Option<&Baseline>, appending: bool) -> Vec<String> {
    let mut out = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        // As the verdicts read a run: a sample's telemetry lists the foreign processes NVML saw.
        let mut foreign = Vec::new();
        let mut disturbed = BTreeSet::new();
        let (mut samples, mut throttled) = (0usize, 0usize);
        for b in &run.benchmarks {
            samples += b.telemetry.len();
            throttled += b.telemetry.iter().filter(|t| t.throttled).count();
            for t in b.telemetry.iter().filter(|t| !t.foreign_processes.is_empty()) {
                disturbed.insert(b.id.as_str());
                crate::telemetry::processes::merge(&mut foreign, t.foreign_processes.iter().cloned());
            }
        }
        if !foreign.is_empty() {
            out.push(format!(
                "{} was measured beside another GPU process: {} during {} benchmark{}",
                label(i, run),
                crate::telemetry::processes::describe_all(&foreign),
                disturbed.len(),
                if disturbed.len() == 1 { "" } else { "s" }
            ));
        }
        if samples > 0 && throttled as f64 > MAX_THROTTLED_SHARE * samples as f64 {
            out.push(format!(
                "{} was throttled in {throttled} of {samples} samples (more than {} %)",
                label(i, run),
                MAX_THROTTLED_SHARE * 100.0
            ));
        }
    }
    let mut seen = BTreeSet::new();
    if appending && let Some(b) = existing {
        seen.extend(b.runs.iter().map(|r| (r.gpu.uuid.clone(), r.created_unix_s)));
    }
    for (i, run) in runs.iter().enumerate() {
        if !seen.insert((run.gpu.uuid.clone(), run.created_unix_s)) {
            out.push(format!("{} is given twice (or is already in the baseline)", label(i, run)));
        }
    }
    let settings = |r: &ResultsDocument| {
        let s = &r.settings;
        format!("profile {}, {} samples, filter {:?}", s.profile, s.sample_size, s.filter)
    };
    if let Some(first) = runs.first() {
        if let Some((i, other)) = runs.iter().enumerate().find(|(_, r)| r.settings != first.settings) {
            out.push(format!(
                "{} has another configuration ({}) than run 1 ({})",
                label(i, other),
                settings(other),
                settings(first)
            ));
        }
        // (An append of another configuration is refused by the store, as a usage error.)
        if let Some(b) = existing
            && !appending
            && b.settings != first.settings
        {
            let theirs = format!(
                "profile {}, {} samples, filter {:?}",
                b.settings.profile, b.settings.sample_size, b.settings.filter
            );
            out.push(format!("the runs' configuration ({}) is not the baseline's ({theirs})", settings(first)));
        }
    }
    out
}

/// "16 runs of 8 cards": what a baseline (or a list of runs) holds.
pub fn describe_runs(runs: &[ResultsDocument]) -> String {
    let cards: BTreeSet<&str> = runs.iter().map(|r| r.gpu.uuid.as_str()).collect();
    format!(
        "{} run{} of {} card{}",
        runs.len(),
        if runs.len() == 1 { "" } else { "s" },
        cards.len(),
        if cards.len() == 1 { "" } else { "s" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{ForeignProcess, SampleTelemetry};

    fn run() -> ResultsDocument {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/h200-quick-run.json");
        ResultsDocument::read(std::path::Path::new(path)).unwrap()
    }

    fn with_telemetry(mut r: ResultsDocument, t: impl Fn(usize) -> SampleTelemetry) -> ResultsDocument {
        let b = &mut r.benchmarks[0];
        b.telemetry = (0..b.metrics[0].samples.len()).map(t).collect();
        r
    }

    #[test]
    fn contaminated_throttled_duplicate_and_mixed_runs_are_named() {
        let clean = run();
        assert!(problems(std::slice::from_ref(&clean), None, false).is_empty());
        let beside = with_telemetry(clean.clone(), |i| SampleTelemetry {
            foreign_processes: if i == 0 {
                vec![ForeignProcess { pid: 42, name: Some("python3".into()), ..Default::default() }]
            } else {
                Vec::new()
            },
            ..Default::default()
        });
        let p = problems(&[beside], None, false);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("measured beside another GPU process") && p[0].contains("pid 42"), "{p:?}");
        let hot = with_telemetry(clean.clone(), |_| SampleTelemetry { throttled: true, ..Default::default() });
        let p = problems(&[hot], None, false);
        assert!(p[0].contains("was throttled in"), "{p:?}");
        let p = problems(&[clean.clone(), clean.clone()], None, false);
        assert!(p[0].contains("run 2") && p[0].contains("given twice"), "{p:?}");
        let mut other = clean.clone();
        other.created_unix_s += 1;
        other.settings.profile = "default".into();
        let p = problems(&[clean.clone(), other], None, false);
        assert!(p[0].contains("another configuration"), "{p:?}");
        assert_eq!(describe_runs(&[clean.clone(), clean]), "2 runs of 1 card");
    }
}
