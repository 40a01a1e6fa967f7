//! The run-level view of telemetry: how much of the run throttled and why.

use crate::results::{BenchmarkResult, RunTelemetry};

/// Summarises the telemetry of every benchmark of a run.
pub fn run_summary(benchmarks: &[BenchmarkResult]) -> RunTelemetry {
    let mut out = RunTelemetry::default();
    let mut power = Vec::new();
    let mut clocks = Vec::new();
    for b in benchmarks {
        clocks.extend(b.clocks.iter().filter_map(|c| c.mhz()));
        for t in &b.telemetry {
            out.nvml |= t.readings > 0 || t.sm_mhz.is_some();
            out.throttle.samples += 1;
            power.extend(t.power_w);
            if !t.foreign_processes.is_empty() {
                out.shared_samples += 1;
                super::processes::merge(&mut out.foreign_processes, t.foreign_processes.iter().cloned());
            }
            if t.throttled {
                out.throttle.throttled_samples += 1;
                for r in &t.slowdown {
                    *out.throttle.reasons.entry(r.clone()).or_default() += 1;
                }
            }
        }
    }
    out.throttle.median_sm_mhz = crate::stats::median(&clocks);
    out.throttle.median_power_w = crate::stats::median(&power);
    out
}

/// One line for people: "3 of 412 samples throttled (sw_power_cap: 3); SM 1980 MHz, 512 W".
pub fn describe(t: &RunTelemetry) -> String {
    let th = &t.throttle;
    let mut s = if !t.nvml {
        "no NVML telemetry".to_string()
    } else if th.throttled_samples == 0 {
        format!("none of {} samples throttled", th.samples)
    } else {
        let reasons: Vec<String> = th.reasons.iter().map(|(r, n)| format!("{r}: {n}")).collect();
        format!("{} of {} samples throttled ({})", th.throttled_samples, th.samples, reasons.join(", "))
    };
    if let Some(mhz) = th.median_sm_mhz {
        s.push_str(&format!("; median SM clock {mhz:.0} MHz"));
    }
    if let Some(w) = th.median_power_w {
        s.push_str(&format!(", median power {w:.0} W"));
    }
    if !t.foreign_processes.is_empty() {
        s.push_str(&format!(
            "; {} used this GPU during {} of {} samples (their metrics are INCONCLUSIVE)",
            super::processes::describe_all(&t.foreign_processes),
            t.shared_samples,
            th.samples
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{KernelClock, SampleTelemetry};

    fn bench(throttle: &[Option<&str>]) -> BenchmarkResult {
        let telemetry = throttle
            .iter()
            .map(|r| SampleTelemetry {
                sm_mhz: Some(1980.0),
                power_w: Some(500.0),
                readings: 2,
                throttled: r.is_some(),
                slowdown: r.iter().map(|s| s.to_string()).collect(),
                ..Default::default()
            })
            .collect();
        let fixture: crate::results::ResultsDocument =
            serde_json::from_str(include_str!("../../tests/fixtures/h200-quick-run.json")).unwrap();
        BenchmarkResult {
            telemetry,
            clocks: vec![KernelClock { cycles: 1980.0, ns: 1000.0 }],
            ..fixture.benchmarks[0].clone()
        }
    }

    #[test]
    fn the_summary_names_foreign_processes() {
        let mut b = bench(&[None, None, None]);
        b.telemetry[1].foreign_processes = vec![crate::results::ForeignProcess {
            pid: 4242,
            name: Some("python3".into()),
            used_mib: Some(874.0),
            sm_util_pct: Some(69),
            note: None,
        }];
        let t = run_summary(&[b]);
        assert_eq!(t.shared_samples, 1);
        let line = describe(&t);
        assert!(
            line.ends_with(
                "; another process (pid 4242, python3, 874 MiB, SM 69 %) used this GPU during 1 of 3 samples \
                 (their metrics are INCONCLUSIVE)"
            ),
            "{line}"
        );
    }

    #[test]
    fn throttled_samples_are_counted_per_reason() {
        let t = run_summary(&[
            bench(&[None, Some("sw_power_cap")]),
            bench(&[Some("sw_power_cap"), Some("clock_below_max")]),
        ]);
        assert!(t.nvml);
        assert_eq!((t.throttle.samples, t.throttle.throttled_samples), (4, 3));
        assert_eq!(t.throttle.reasons["sw_power_cap"], 2);
        assert_eq!(t.throttle.reasons["clock_below_max"], 1);
        assert_eq!(t.throttle.median_sm_mhz, Some(1980.0));
        assert_eq!(
            describe(&t),
            "3 of 4 samples throttled (clock_below_max: 1, sw_power_cap: 2); median SM clock 1980 MHz, median power 500 W"
        );
    }

    #[test]
    fn a_run_without_nvml_says_so() {
        let mut b = bench(&[]);
        b.clocks.clear();
        let t = run_summary(&[b]);
        assert_eq!(describe(&t), "no NVML telemetry");
    }
}
