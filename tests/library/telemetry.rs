//! Telemetry on recorded device data: normalisation arithmetic, throttle classification with
//! injected power-cap windows, and the sampler without NVML.

use gpubench::harness::{Bench, MeasuredSample, Sample, ThrottlePolicy, build_result};
use gpubench::results::{BenchmarkResult, ClockDomain, KernelClock, ResultsDocument};
use gpubench::telemetry::{Sampler, normalize, run_summary};

/// The committed H200 default run (stored gzipped), read through a temporary copy.
fn recorded() -> ResultsDocument {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/recorded/h200-default.json.gz");
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()), &mut text)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("default.json");
    std::fs::write(&copy, text).unwrap();
    ResultsDocument::read(&copy).unwrap()
}

/// The samples of a recorded benchmark as the harness measured them.
fn as_measured(b: &BenchmarkResult) -> (Bench, Vec<MeasuredSample>) {
    let mut bench = Bench::new(b.id.split_once('/').unwrap().1);
    for m in &b.metrics {
        bench = bench.metric(m.name.clone(), &m.unit, m.better, m.domain);
    }
    let samples = (0..b.time_ns.len())
        .map(|i| MeasuredSample {
            iters: 1,
            sample: Sample::clocked(
                b.time_ns[i],
                b.metrics.iter().map(|m| m.samples[i]).collect(),
                b.clocks.get(i).copied(),
            ),
            telemetry: b.telemetry.get(i).cloned(),
        })
        .collect();
    (bench, samples)
}

#[test]
fn normalised_samples_are_the_raw_ones_divided_by_each_samples_clock() {
    let doc = recorded();
    let mut checked = 0;
    for b in &doc.benchmarks {
        for m in &b.metrics {
            let Some(n) = &m.normalized else { continue };
            assert_eq!(n.samples.len(), m.samples.len(), "{} {}", b.id, m.name);
            for (i, (raw, norm)) in m.samples.iter().zip(&n.samples).enumerate() {
                let clock = match m.domain {
                    ClockDomain::Sm => b.clocks.get(i).and_then(|c| c.mhz()).or(b.telemetry[i].sm_mhz),
                    ClockDomain::Memory => b.telemetry[i].mem_mhz,
                    ClockDomain::None => None,
                };
                let expected = normalize(*raw, &m.unit, m.domain, clock.unwrap_or(f64::NAN)).unwrap();
                // Both sides are stored to 7 significant digits.
                assert!((expected - norm).abs() <= 2e-6 * expected.abs(), "{} {} sample {i}", b.id, m.name);
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "{checked}");
}

#[test]
fn nanoseconds_times_the_kernel_clock_agree_with_clock64_cycles() {
    // Two independent readings of the same chase: %globaltimer ns scaled by the effective clock,
    // and clock64 cycles. They must agree to a fraction of a percent.
    let doc = recorded();
    for b in doc.benchmarks.iter().filter(|b| b.family == "latency") {
        let cycles = b.metric("cycles_per_access").unwrap().summary.median;
        let ns_as_cycles = b.metric("ns_per_access").unwrap().normalized.as_ref().unwrap();
        assert_eq!(ns_as_cycles.unit, "cycles");
        let rel = (ns_as_cycles.summary.median - cycles).abs() / cycles;
        assert!(rel < 2e-3, "{}: {cycles} cycles vs {} from ns", b.id, ns_as_cycles.summary.median);
    }
}

#[test]
fn injected_power_cap_windows_are_classified_throttled_and_counted() {
    let doc = recorded();
    let triad = doc.benchmark("stream/triad").unwrap();
    let (bench, mut samples) = as_measured(triad);
    let max_mhz = doc.gpu.sm_clock_max_khz as f64 / 1e3;
    assert!(
        !build_result("stream", &bench, &samples, max_mhz, ThrottlePolicy::Normalize)
            .telemetry
            .iter()
            .any(|t| t.throttled)
    );
    // a power-cap window over samples 5..10: reason bit and violation time
    for s in &mut samples[5..10] {
        let t = s.telemetry.as_mut().unwrap();
        t.reasons_mask |= 0x4;
        t.power_violation_ns = Some(3.0e6);
    }
    // the clock dropped to 70% for samples 12..15 without any reason bit
    for s in &mut samples[12..15] {
        let c = s.sample.clock.unwrap();
        s.sample.clock = Some(KernelClock { cycles: c.cycles * 0.7, ns: c.ns });
    }
    let r = build_result("stream", &bench, &samples, max_mhz, ThrottlePolicy::Normalize);
    let flags: Vec<bool> = r.telemetry.iter().map(|t| t.throttled).collect();
    let expected: Vec<bool> = (0..flags.len()).map(|i| (5..10).contains(&i) || (12..15).contains(&i)).collect();
    assert_eq!(flags, expected);
    assert_eq!(r.telemetry[6].slowdown, vec!["sw_power_cap", "power_violation"]);
    assert_eq!(r.telemetry[13].slowdown, vec!["clock_below_max"]);
    let summary = run_summary(std::slice::from_ref(&r));
    assert_eq!(summary.throttle.throttled_samples, 8);
    assert_eq!(summary.throttle.reasons["sw_power_cap"], 5);
    assert_eq!(summary.throttle.reasons["clock_below_max"], 3);
    // discarding on request keeps only the clean samples
    let kept = build_result("stream", &bench, &samples, max_mhz, ThrottlePolicy::Discard);
    assert_eq!(kept.metrics[0].samples.len(), flags.len() - 8);
}

#[test]
fn the_sampler_without_nvml_records_nothing_and_says_why() {
    let present = ["/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "/usr/lib64/libnvidia-ml.so.1"]
        .iter()
        .any(|p| std::path::Path::new(p).exists());
    if present {
        println!("skipping: this machine has NVML");
        return;
    }
    let s = Sampler::start("GPU-00000000-0000-0000-0000-000000000000", std::time::Duration::from_millis(10));
    let why = s.unavailable().expect("no NVML here");
    assert!(why.starts_with("NVML unavailable"), "{why}");
    let now = std::time::Instant::now();
    assert!(s.window(now, now).is_none());
    assert!(gpubench::telemetry::device_status("GPU-0").is_err());
    assert_eq!(gpubench::telemetry::driver_release(), None);
}
