//! Measurements taken while another process used the GPU are not evidence about the card or
//! the software: their metrics are INCONCLUSIVE with the process named, never REGRESSED.

use std::collections::BTreeMap;

use crate::results::{ResultsDocument, SampleTelemetry};
use crate::telemetry::processes::{describe_all, merge};

/// Why a benchmark's samples cannot be judged, from their telemetry: "another process (pid N,
/// name, X MiB) used this GPU during the run", or `None` when no sample saw one.
pub fn reason(telemetry: &[SampleTelemetry]) -> Option<String> {
    let mut all = Vec::new();
    let mut shared = 0;
    for t in telemetry.iter().filter(|t| !t.foreign_processes.is_empty()) {
        shared += 1;
        merge(&mut all, t.foreign_processes.iter().cloned());
    }
    (shared > 0).then(|| {
        format!("{} used this GPU during the run ({shared} of {} samples)", describe_all(&all), telemetry.len())
    })
}

/// For each benchmark id of `runs` that another process disturbed, the reason (the newest
/// run's, when several runs were).
pub fn by_benchmark(runs: &[ResultsDocument]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for run in runs {
        for b in &run.benchmarks {
            if let Some(why) = reason(&b.telemetry) {
                out.insert(b.id.clone(), why);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::ForeignProcess;

    fn sample(pids: &[(u32, f64)]) -> SampleTelemetry {
        SampleTelemetry {
            foreign_processes: pids
                .iter()
                .map(|&(pid, mib)| ForeignProcess {
                    pid,
                    name: Some("python3".into()),
                    used_mib: Some(mib),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn clean_telemetry_gives_no_reason() {
        assert_eq!(reason(&[sample(&[]), sample(&[])]), None);
        assert_eq!(reason(&[]), None);
    }

    #[test]
    fn one_disturbed_sample_names_the_process() {
        let r = reason(&[sample(&[]), sample(&[(4242, 600.0)]), sample(&[(4242, 874.0)])]).unwrap();
        assert_eq!(r, "another process (pid 4242, python3, 874 MiB) used this GPU during the run (2 of 3 samples)");
        let r = reason(&[sample(&[(1, 1.0), (2, 2.0)])]).unwrap();
        assert!(r.starts_with("other processes (pid 1, python3, 1 MiB; pid 2, python3, 2 MiB)"), "{r}");
    }
}
