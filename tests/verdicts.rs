//! The verdict rule on real H200 results (tests/fixtures), with shifts, throttling and clock
//! drops injected into the recorded samples.

use std::path::Path;

use gpubench::results::{Better, Fact, FactValue, NormalizedMetric, ResultsDocument, SampleTelemetry, Summary};
use gpubench::verdict::{Comparison, MetricOverride, Rule, Side, Verdict, compare};

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;
#[path = "support/second_run.rs"]
mod second_run;
use second_run::two_runs;

fn fixture(name: &str) -> ResultsDocument {
    ResultsDocument::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)).unwrap()
}

fn default_run() -> ResultsDocument {
    fixture("h200-default-run.json")
}

fn run_compare(old: &[ResultsDocument], new: &[ResultsDocument], rule: &Rule) -> Comparison {
    compare(Side::of("old", old), Side::of("new", new), rule).unwrap()
}

/// Keeps the samples (and their clock readings) whose index passes `keep`.
fn subsample(doc: &ResultsDocument, keep: impl Fn(usize) -> bool) -> ResultsDocument {
    let mut d = doc.clone();
    for b in &mut d.benchmarks {
        let pick = |v: &Vec<f64>| v.iter().enumerate().filter(|(i, _)| keep(*i)).map(|(_, x)| *x).collect::<Vec<_>>();
        b.time_ns = pick(&b.time_ns);
        b.clocks = b.clocks.iter().enumerate().filter(|(i, _)| keep(*i)).map(|(_, c)| *c).collect();
        for m in &mut b.metrics {
            m.samples = pick(&m.samples);
            m.summary = Summary::of(&m.samples);
        }
    }
    d
}

/// Draws every benchmark's samples with replacement (one index draw per sample, shared by the
/// benchmark's metrics and clock readings).
fn resample(doc: &ResultsDocument, seed: u64) -> ResultsDocument {
    let mut rng = Rng::seeded(seed);
    let mut d = doc.clone();
    for b in &mut d.benchmarks {
        let n = b.metrics[0].samples.len();
        let idx: Vec<usize> = (0..n).map(|_| rng.below(n)).collect();
        if b.clocks.len() == n {
            b.clocks = idx.iter().map(|&i| b.clocks[i]).collect();
        }
        for m in &mut b.metrics {
            m.samples = idx.iter().map(|&i| m.samples[i]).collect();
            m.summary = Summary::of(&m.samples);
        }
    }
    d
}

/// Makes metric `metric` of benchmark `id` worse by `fraction` (latency up, bandwidth down).
fn worsen(doc: &mut ResultsDocument, id: &str, metric: &str, fraction: f64) {
    let b = doc.benchmarks.iter_mut().find(|b| b.id == id).unwrap();
    let m = b.metrics.iter_mut().find(|m| m.name == metric).unwrap();
    let factor = match m.better {
        Better::Lower => 1.0 + fraction,
        Better::Higher => 1.0 / (1.0 + fraction),
    };
    m.samples.iter_mut().for_each(|v| *v *= factor);
    m.summary = Summary::of(&m.samples);
}

fn count(c: &Comparison, v: Verdict) -> Vec<String> {
    c.metrics.iter().filter(|m| m.verdict == v).map(|m| format!("{} [{}]", m.key(), m.reason)).collect()
}

fn all_metric_keys(doc: &ResultsDocument) -> Vec<(String, String)> {
    doc.benchmarks.iter().flat_map(|b| b.metrics.iter().map(|m| (b.id.clone(), m.name.clone()))).collect()
}

#[test]
fn aa_split_halves_of_one_run_give_no_regression() {
    for doc in [default_run(), fixture("h200-quick-run.json")] {
        let rule = Rule::default();
        let even = subsample(&doc, |i| i % 2 == 0);
        let odd = subsample(&doc, |i| i % 2 == 1);
        let n = doc.benchmarks[0].metrics[0].samples.len();
        let first = subsample(&doc, |i| i < n / 2);
        let second = subsample(&doc, |i| i >= n / 2);
        for (a, b) in [(&even, &odd), (&odd, &even), (&first, &second), (&second, &first)] {
            let c = run_compare(std::slice::from_ref(a), std::slice::from_ref(b), &rule);
            assert_eq!(c.metrics.len(), all_metric_keys(&doc).len());
            assert!(count(&c, Verdict::Regressed).is_empty(), "{:#?}", count(&c, Verdict::Regressed));
            assert!(count(&c, Verdict::Improved).is_empty(), "{:#?}", count(&c, Verdict::Improved));
            assert!(c.counts.pass >= c.metrics.len() * 9 / 10, "{}", c.counts.line());
            assert_eq!(c.exit_code(), 0);
        }
    }
}

#[test]
fn aa_resampled_runs_give_no_regression() {
    let doc = default_run();
    let rule = Rule::default();
    let runs: Vec<ResultsDocument> = (1..=4).map(|s| resample(&doc, s)).collect();
    for (i, a) in runs.iter().enumerate() {
        for b in runs.iter().skip(i + 1) {
            let c = run_compare(std::slice::from_ref(a), std::slice::from_ref(b), &rule);
            assert!(count(&c, Verdict::Regressed).is_empty(), "{:#?}", count(&c, Verdict::Regressed));
            assert!(count(&c, Verdict::Improved).is_empty(), "{:#?}", count(&c, Verdict::Improved));
        }
    }
    // A baseline of several runs against another resampled run.
    let c = run_compare(&runs[..3], &runs[3..], &rule);
    assert!(count(&c, Verdict::Regressed).is_empty());
    assert_eq!(c.baseline.runs, 3);
}

#[test]
fn identical_results_pass_everything() {
    let doc = default_run();
    let c = run_compare(std::slice::from_ref(&doc), std::slice::from_ref(&doc), &Rule::default());
    assert_eq!(c.counts.pass, c.metrics.len(), "{:#?}", count(&c, Verdict::Inconclusive));
    assert!(c.metrics.iter().all(|m| m.ratio == Some(1.0)));
}

/// Metrics the injection tests single out: one or two per family, tight and noisy.
const PROBES: [(&str, &str); 8] = [
    ("latency/ca/4KiB", "cycles_per_access"),
    ("latency/cg/256MiB", "ns_per_access"),
    ("latency/ca/64MiB", "cycles_per_access"),
    ("stream/triad", "bandwidth"),
    ("stream/copy", "bandwidth"),
    ("atomics/add_u32/same_line", "ops_per_s"),
    ("atomics/add_u32/distinct", "ops_per_clock"),
    ("shared_banks/threads=32", "stride=8"),
];

#[test]
fn three_percent_slowdown_is_regressed_in_that_metric_only() {
    let doc = default_run();
    let rule = Rule::default();
    let baseline = &two_runs(&doc)[..];
    for (id, metric) in PROBES {
        let mut new = doc.clone();
        worsen(&mut new, id, metric, 0.03);
        let c = run_compare(baseline, std::slice::from_ref(&new), &rule);
        let v = c.metric(id, metric).unwrap();
        let others: Vec<String> = c
            .metrics
            .iter()
            .filter(|m| matches!(m.verdict, Verdict::Regressed | Verdict::Improved) && m.key() != v.key())
            .map(|m| m.key())
            .collect();
        assert!(others.is_empty(), "injecting into {id}:{metric} moved {others:?}");
        if v.threshold.unwrap() <= 0.025 {
            assert_eq!(v.verdict, Verdict::Regressed, "{id}:{metric}: {}", v.reason);
            assert_eq!(c.exit_code(), 1);
        } else {
            // Noisier than the shift (the two runs' medians lie apart): never REGRESSED on
            // noise, and the reason says why.
            assert_ne!(v.verdict, Verdict::Regressed, "{id}:{metric}: {}", v.reason);
            assert!(v.reason.contains("widened by the run-to-run spread"), "{}", v.reason);
        }
    }
}

#[test]
fn three_percent_slowdown_is_caught_in_every_tight_metric() {
    let doc = default_run();
    let rule = Rule::default();
    let mut new = doc.clone();
    for (id, metric) in all_metric_keys(&doc) {
        worsen(&mut new, &id, &metric, 0.03);
    }
    let c = run_compare(&two_runs(&doc), std::slice::from_ref(&new), &rule);
    let mut caught = 0;
    for v in &c.metrics {
        assert_ne!(v.verdict, Verdict::Improved, "{}: {}", v.key(), v.reason);
        if v.threshold.unwrap() <= 0.025 {
            assert_eq!(v.verdict, Verdict::Regressed, "{}: {}", v.key(), v.reason);
            caught += 1;
        }
    }
    // All but the few metrics that scatter by percents within a run (footprints at the L2
    // boundary) are tight enough to catch 3 %.
    assert!(caught * 10 >= c.metrics.len() * 9, "caught {caught} of {}", c.metrics.len());
}

#[test]
fn one_percent_shift_on_a_noisier_metric_is_not_regressed() {
    let doc = default_run();
    // Metrics whose samples scatter by more than 1 % (relative standard deviation).
    let noisy: Vec<(String, String)> = doc
        .benchmarks
        .iter()
        .flat_map(|b| b.metrics.iter().map(move |m| (b, m)))
        .filter(|(_, m)| m.summary.stdev / m.summary.median > 0.01)
        .map(|(b, m)| (b.id.clone(), m.name.clone()))
        .collect();
    assert!(noisy.len() >= 4, "{noisy:?}");
    let mut new = doc.clone();
    for (id, metric) in &noisy {
        worsen(&mut new, id, metric, 0.01);
    }
    // Under the default minimum effect none of them is called.
    let c = run_compare(std::slice::from_ref(&doc), std::slice::from_ref(&new), &Rule::default());
    for (id, metric) in &noisy {
        let v = c.metric(id, metric).unwrap();
        assert_ne!(v.verdict, Verdict::Regressed, "{id}:{metric}: {}", v.reason);
    }
    assert_eq!(c.counts.regressed, 0, "{:#?}", count(&c, Verdict::Regressed));
    // With the minimum lowered far below the shift, a single-run baseline still widens their
    // thresholds by the standard error of a run's median (their scatter), above the floor.
    let mut rule = Rule::default();
    rule.overrides.push(MetricOverride::new(".*", 0.002).unwrap());
    let c = run_compare(std::slice::from_ref(&doc), std::slice::from_ref(&new), &rule);
    let widened = noisy.iter().filter(|(id, m)| c.metric(id, m).unwrap().threshold.unwrap() > 0.006).count();
    assert!(widened * 2 >= noisy.len(), "{widened} of {} widened", noisy.len());
}

/// `doc` with only the benchmarks whose id starts with one of `prefixes` (smaller comparisons
/// for tests about one benchmark).
fn only(doc: &ResultsDocument, prefixes: &[&str]) -> ResultsDocument {
    let mut d = doc.clone();
    d.benchmarks.retain(|b| prefixes.iter().any(|p| b.id.starts_with(p)));
    d
}

fn telemetry(n: usize, throttled: impl Fn(usize) -> bool) -> Vec<SampleTelemetry> {
    (0..n)
        .map(|i| SampleTelemetry {
            sm_mhz: Some(1980.0),
            readings: 3,
            throttled: throttled(i),
            slowdown: if throttled(i) { vec!["sw_power_cap".into()] } else { Vec::new() },
            ..SampleTelemetry::default()
        })
        .collect()
}

fn benchmark_mut<'a>(doc: &'a mut ResultsDocument, id: &str) -> &'a mut gpubench::results::BenchmarkResult {
    doc.benchmarks.iter_mut().find(|b| b.id == id).unwrap()
}

/// Adds normalised samples (value / clock in GHz) to every metric of `id`.
fn add_normalized(doc: &mut ResultsDocument, id: &str) {
    let b = benchmark_mut(doc, id);
    let ghz: Vec<f64> = b.clocks.iter().map(|c| c.mhz().unwrap() / 1e3).collect();
    for m in &mut b.metrics {
        let samples: Vec<f64> = m.samples.iter().zip(&ghz).map(|(v, g)| v / g).collect();
        m.normalized =
            Some(NormalizedMetric { unit: format!("{}/GHz", m.unit), summary: Summary::of(&samples), samples });
    }
}

/// Slows `id` down by `fraction` through its SM clock: values and clock readings move together.
fn slow_clock(doc: &mut ResultsDocument, id: &str, fraction: f64) {
    let b = benchmark_mut(doc, id);
    for c in &mut b.clocks {
        c.cycles /= 1.0 + fraction;
    }
    // Work that follows the clock: the same cycles, more time.
    for m in b.metrics.iter_mut().filter(|m| m.unit.ends_with("/s") || m.unit == "ns") {
        let f = match m.better {
            Better::Lower => 1.0 + fraction,
            Better::Higher => 1.0 / (1.0 + fraction),
        };
        m.samples.iter_mut().for_each(|v| *v *= f);
        m.summary = Summary::of(&m.samples);
    }
}

#[test]
fn throttled_windows_are_inconclusive_not_regressed() {
    let doc = only(&default_run(), &["stream/", "atomics/"]);
    let id = "stream/triad";
    let mut new = doc.clone();
    worsen(&mut new, id, "bandwidth", 0.05);
    let n = new.benchmark(id).unwrap().metrics[0].samples.len();
    benchmark_mut(&mut new, id).telemetry = telemetry(n, |_| true);
    let c = run_compare(&two_runs(&doc), std::slice::from_ref(&new), &Rule::default());
    let v = c.metric(id, "bandwidth").unwrap();
    assert_eq!(v.verdict, Verdict::Inconclusive, "{}", v.reason);
    assert!(v.reason.contains("new run throttled (sw_power_cap) in 20/20 samples"), "{}", v.reason);
    assert_eq!(c.counts.regressed, 0);
    assert_eq!(c.exit_code(), 0);

    // A throttled baseline does not turn a better-looking new run into IMPROVED either.
    let mut old = doc.clone();
    worsen(&mut old, id, "bandwidth", 0.05);
    benchmark_mut(&mut old, id).telemetry = telemetry(n, |_| true);
    let c = run_compare(&two_runs(&old), std::slice::from_ref(&doc), &Rule::default());
    assert_eq!(c.metric(id, "bandwidth").unwrap().verdict, Verdict::Inconclusive);

    // Without the throttle flags the same data is a regression.
    benchmark_mut(&mut new, id).telemetry.clear();
    let c = run_compare(&two_runs(&doc), std::slice::from_ref(&new), &Rule::default());
    assert_eq!(c.metric(id, "bandwidth").unwrap().verdict, Verdict::Regressed);
}

#[test]
fn a_few_throttled_samples_are_left_out() {
    let doc = only(&default_run(), &["latency/cg/", "stream/"]);
    let id = "latency/cg/256MiB";
    let mut new = doc.clone();
    // Four samples ran 8 % slow while throttled; the other sixteen are unchanged.
    let slow = |i: usize| i.is_multiple_of(5);
    let b = benchmark_mut(&mut new, id);
    for m in &mut b.metrics {
        for (i, v) in m.samples.iter_mut().enumerate() {
            if slow(i) {
                *v *= 1.08;
            }
        }
    }
    b.telemetry = telemetry(20, slow);
    let c = run_compare(std::slice::from_ref(&doc), std::slice::from_ref(&new), &Rule::default());
    let v = c.metric(id, "ns_per_access").unwrap();
    assert_eq!(v.verdict, Verdict::Pass, "{}", v.reason);
    assert_eq!(v.candidate.unwrap().excluded, 4);
    assert_eq!(v.candidate.unwrap().n, 16);
    assert!(v.reason.contains("4 throttled samples of the new run left out"), "{}", v.reason);
}

#[test]
fn clock_drop_is_normalised_when_normalised_values_exist() {
    let doc = only(&default_run(), &["atomics/", "stream/"]);
    let id = "atomics/add_u32/same_sector";
    let (mut old, mut new) = (doc.clone(), doc.clone());
    slow_clock(&mut new, id, 0.10);
    add_normalized(&mut old, id);
    add_normalized(&mut new, id);
    let c = run_compare(&two_runs(&old), std::slice::from_ref(&new), &Rule::default());
    let v = c.metric(id, "ops_per_s").unwrap();
    assert_eq!(v.verdict, Verdict::Pass, "{}", v.reason);
    assert_eq!(v.basis, gpubench::verdict::Basis::Normalized);
    assert!(v.reason.starts_with("clock-normalised (SM clock"), "{}", v.reason);
    assert_eq!(v.unit, "op/s/GHz");

    // A real regression on top of the clock drop still shows after normalisation.
    worsen(&mut new, id, "ops_per_s", 0.05);
    add_normalized(&mut new, id);
    let c = run_compare(&two_runs(&old), std::slice::from_ref(&new), &Rule::default());
    assert_eq!(c.metric(id, "ops_per_s").unwrap().verdict, Verdict::Regressed);
}

#[test]
fn clock_drop_without_normalised_values_needs_a_change_beyond_the_clock() {
    let doc = only(&default_run(), &["latency/ca/", "stream/"]);
    let id = "latency/ca/4KiB";
    let mut new = doc.clone();
    slow_clock(&mut new, id, 0.10);
    let c = run_compare(&two_runs(&doc), std::slice::from_ref(&new), &Rule::default());
    let v = c.metric(id, "ns_per_access").unwrap();
    assert_eq!(v.verdict, Verdict::Inconclusive, "{}", v.reason);
    assert!(v.reason.contains("SM clock") && v.reason.contains("could explain REGRESSED"), "{}", v.reason);
    assert_eq!(c.counts.regressed, 0, "{:#?}", count(&c, Verdict::Regressed));

    // More cycles on a slower clock: the clock cannot explain that direction.
    let mut new = doc.clone();
    slow_clock(&mut new, id, 0.10);
    worsen(&mut new, id, "cycles_per_access", 0.05);
    let c = run_compare(&two_runs(&doc), std::slice::from_ref(&new), &Rule::default());
    let v = c.metric(id, "cycles_per_access").unwrap();
    assert_eq!(v.verdict, Verdict::Regressed, "{}", v.reason);

    // 20 % slower on a 5 % clock drop: more than the clock can explain.
    let mut new = doc.clone();
    slow_clock(&mut new, id, 0.05);
    worsen(&mut new, id, "ns_per_access", 0.15);
    let c = run_compare(&two_runs(&doc), std::slice::from_ref(&new), &Rule::default());
    let v = c.metric(id, "ns_per_access").unwrap();
    assert_eq!(v.verdict, Verdict::Regressed, "{}", v.reason);
}

#[test]
fn a_noisy_multi_run_baseline_widens_the_threshold() {
    let doc = only(&default_run(), &["stream/", "atomics/"]);
    let id = "stream/copy";
    // Two baseline runs whose copy bandwidth differs by 3 %: runs disagree by that much.
    let mut second = resample(&doc, 11);
    worsen(&mut second, id, "bandwidth", 0.03);
    let runs = [resample(&doc, 10), second];
    let mut new = resample(&doc, 12);
    worsen(&mut new, id, "bandwidth", 0.035);
    // One run of the card on each side: no run-to-run spread, a change beyond the minimum
    // effect is INCONCLUSIVE, with the reason and a warning.
    let single = run_compare(&runs[..1], std::slice::from_ref(&new), &Rule::default());
    let v = single.metric(id, "bandwidth").unwrap();
    assert_eq!(v.verdict, Verdict::Inconclusive, "{}", v.reason);
    assert!(v.reason.starts_with("one run of this card on each side") && v.detectable.is_none(), "{v:?}");
    assert!(single.warnings.iter().any(|w| w.contains("none is REGRESSED or IMPROVED")), "{:?}", single.warnings);
    // Two new runs bring a run-to-run spread of their own where the baseline has none.
    let mut again = resample(&doc, 13);
    worsen(&mut again, id, "bandwidth", 0.035);
    let pair = run_compare(&runs[..1], &[new.clone(), again], &Rule::default());
    let v = pair.metric(id, "bandwidth").unwrap();
    assert!(v.detectable.is_some() && !v.reason.starts_with("one run"), "{v:?}");
    let multi = run_compare(&runs, std::slice::from_ref(&new), &Rule::default());
    let v = multi.metric(id, "bandwidth").unwrap();
    assert_ne!(v.verdict, Verdict::Regressed, "{}", v.reason);
    assert!(v.noise.unwrap() > 0.01 && v.threshold.unwrap() > 0.04, "{v:?}");
    assert_eq!(v.baseline.unwrap().runs, 2);
}

#[test]
fn different_profiles_are_not_comparable_and_never_regress() {
    let quick = fixture("h200-quick-run.json");
    let c = run_compare(std::slice::from_ref(&default_run()), std::slice::from_ref(&quick), &Rule::default());
    assert_eq!(c.counts.regressed, 0);
    assert!(c.warnings.iter().any(|w| w.contains("different profiles")), "{:?}", c.warnings);
    let v = c.metric("latency/ca/16KiB", "cycles_per_access").unwrap();
    assert_eq!(v.verdict, Verdict::Inconclusive);
    assert!(v.reason.contains("parameter steps_per_launch: 4096 vs 2048"), "{}", v.reason);
    // Benchmarks the quick profile skips in families it ran are NOT MEASURED, not silently passed.
    let v = c.metric("latency/ca/4KiB", "cycles_per_access").unwrap();
    assert_eq!(v.verdict, Verdict::NotMeasured);
    assert_eq!(v.reason, "benchmark missing from the new run");
}

#[test]
fn a_filtered_run_compares_only_what_it_ran() {
    let doc = default_run();
    let mut new = subsample(&doc, |i| i % 2 == 0);
    new.benchmarks.retain(|b| b.id.starts_with("stream/"));
    new.settings.filter = Some("^stream/".into());
    let c = run_compare(std::slice::from_ref(&doc), std::slice::from_ref(&new), &Rule::default());
    assert_eq!(c.metrics.len(), 4);
    assert_eq!(c.not_run.len(), all_metric_keys(&doc).len() - 4);
    assert_eq!(c.counts.pass, 4);
}

#[test]
fn facts_compare_exactly() {
    let mut old = only(&default_run(), &["stream/"]);
    let fact = |v: f64| Fact {
        name: "l2.size_bytes".into(),
        value: FactValue::Number(v),
        unit: "bytes".into(),
        confidence: 0.98,
        method: "latency sweep change point".into(),
    };
    old.facts.push(fact(62_914_560.0));
    let mut new = old.clone();
    let c = run_compare(std::slice::from_ref(&old), std::slice::from_ref(&new), &Rule::default());
    assert_eq!(c.facts[0].verdict, Verdict::Pass);
    new.facts[0] = fact(50_331_648.0);
    let c = run_compare(std::slice::from_ref(&old), std::slice::from_ref(&new), &Rule::default());
    assert_eq!(c.facts[0].verdict, Verdict::Regressed);
    assert_eq!(c.facts[0].reason, "changed: 62914560 bytes -> 50331648 bytes");
    assert_eq!(c.exit_code(), 1);
}

#[test]
fn the_upgrade_view_names_stack_and_code_changes() {
    let old = only(&default_run(), &["latency/ca/4KiB", "stream/", "atomics/", "shared_banks/threads=1"]);
    let mut new = old.clone();
    new.stack.driver_version = Some("590.10.01".into());
    new.stack.nvrtc_version = "13.1".into();
    for b in new.benchmarks.iter_mut().filter(|b| b.family == "stream") {
        for k in &mut b.kernels {
            k.cubin_sha256 = "0".repeat(64);
        }
    }
    let c = run_compare(std::slice::from_ref(&old), std::slice::from_ref(&new), &Rule::default());
    assert_eq!(c.upgrade.stack_line(), "driver 580.159.04 -> 590.10.01, NVRTC 13.0 -> 13.1");
    assert_eq!(c.upgrade.kernels_line(), "generated code changed: stream.cu (cubin)");
    let same = run_compare(std::slice::from_ref(&old), std::slice::from_ref(&old), &Rule::default());
    assert!(same.upgrade.stack_line().starts_with("same stack: driver 580.159.04, CUDA 13.0"));
    assert!(same.upgrade.kernels_line().starts_with("generated code unchanged"));
}

#[test]
fn too_few_samples_are_inconclusive() {
    let doc = only(&default_run(), &["stream/"]);
    let few = subsample(&doc, |i| i < 3);
    let c = run_compare(std::slice::from_ref(&doc), std::slice::from_ref(&few), &Rule::default());
    for m in &c.metrics {
        assert_eq!(m.verdict, Verdict::Inconclusive);
        assert_eq!(m.reason, "too few samples (20 and 3, need 5)");
    }
}

/// Card `c` of a made-up class from one recorded run: its own GPU UUID, and its atomics on a
/// word per thread and on one sector read `offset` better or worse by metric, half of them each
/// way, while the atomics on one word and one line read as recorded: as on the measured H100s
/// and H200s, a card's differences on a few atomics, which cancel over the family.
fn class_card(run: &ResultsDocument, c: usize, offset: f64) -> ResultsDocument {
    let mut d = run.clone();
    d.gpu.uuid = format!("GPU-{c:08x}-0000-0000-0000-000000000000");
    let mut i = 0;
    for b in d.benchmarks.iter_mut().filter(|b| b.id.ends_with("/distinct") || b.id.ends_with("/same_sector")) {
        for m in &mut b.metrics {
            let sign = if (i + c).is_multiple_of(2) { 1.0 } else { -1.0 };
            m.samples.iter_mut().for_each(|v| *v *= 1.0 + sign * offset);
            m.summary = Summary::of(&m.samples);
            i += 1;
        }
    }
    d
}

/// Every atomic of `doc` whose key contains one of `only` (all with `&[""]`) worse by `fraction`.
fn worsen_atomics(doc: &mut ResultsDocument, fraction: f64, only: &[&str]) {
    for (id, metric) in all_metric_keys(doc) {
        let key = format!("{id}:{metric}");
        if id.starts_with("atomics/") && only.iter().any(|o| key.contains(o)) {
            worsen(doc, &id, &metric, fraction);
        }
    }
}

/// Five baseline cards whose grouped atomics spread by up to ±4 % by metric, and a sixth card
/// at ±2.5 %.
fn atomics_class() -> (Vec<ResultsDocument>, ResultsDocument) {
    let run = default_run();
    let baseline = (0..5).map(|c| class_card(&run, c, 0.01 * c as f64)).collect();
    (baseline, class_card(&run, 5, 0.025))
}

#[test]
fn a_class_comparison_catches_atomics_that_slow_down_as_a_family() {
    let (baseline, card) = atomics_class();
    let rule = Rule::default();
    let c = run_compare(&baseline, std::slice::from_ref(&card), &rule);
    assert_eq!(c.baseline_kind.level, gpubench::verdict::Level::Class);
    let family = c.families.iter().find(|f| f.family == "atomics").expect("atomics judged as a whole");
    assert_eq!(family.verdict, Verdict::Pass, "{}", family.reason);
    assert!(count(&c, Verdict::Regressed).is_empty(), "{:?}", count(&c, Verdict::Regressed));
    // Only atomics are judged as a whole by default.
    assert_eq!(c.families.len(), 1, "{:?}", c.families);

    // 5 % slower on every atomic: alone each lies within the ±4 % spread of the cards, the family
    // moved by 5 % where the cards' families agree: every atomic is REGRESSED with it.
    let mut slower = card.clone();
    worsen_atomics(&mut slower, 0.05, &[""]);
    let c = run_compare(&baseline, std::slice::from_ref(&slower), &rule);
    let family = c.families.iter().find(|f| f.family == "atomics").unwrap();
    assert_eq!(family.verdict, Verdict::Regressed, "{}", family.reason);
    assert!((family.worse_by - 0.05).abs() < 0.01, "{family:?}");
    let atomics: Vec<_> = c.metrics.iter().filter(|m| m.family == "atomics").collect();
    assert!(atomics.iter().all(|m| m.verdict == Verdict::Regressed), "{:?}", count(&c, Verdict::Inconclusive));
    assert!(atomics.iter().any(|m| m.reason.contains("atomics as a whole")), "{:?}", atomics[0].reason);
    assert!(c.metrics.iter().filter(|m| m.family != "atomics").all(|m| m.verdict != Verdict::Regressed));
    // Without family verdicts the atomics on which the cards spread are not REGRESSED.
    let alone = run_compare(
        &baseline,
        std::slice::from_ref(&slower),
        &Rule { family_verdicts: None, same_card_family_verdicts: None, ..rule.clone() },
    );
    assert!(alone.families.is_empty());
    let spread = |c: &Comparison| {
        c.metrics
            .iter()
            .filter(|m| m.benchmark.ends_with("/distinct") || m.benchmark.ends_with("/same_sector"))
            .map(|m| m.verdict)
            .collect::<Vec<_>>()
    };
    assert!(spread(&alone).iter().all(|v| *v != Verdict::Regressed), "{:?}", count(&alone, Verdict::Regressed));
    assert!(spread(&c).iter().all(|v| *v == Verdict::Regressed));
}

#[test]
fn a_single_atomic_that_moves_is_judged_alone() {
    let (baseline, card) = atomics_class();
    let mut one = card.clone();
    worsen(&mut one, "atomics/add_u32/same_address", "ops_per_clock", 0.08);
    let c = run_compare(&baseline, std::slice::from_ref(&one), &Rule::default());
    let family = c.families.iter().find(|f| f.family == "atomics").unwrap();
    assert_eq!(family.verdict, Verdict::Pass, "{}", family.reason);
    let m = c.metric("atomics/add_u32/same_address", "ops_per_clock").unwrap();
    assert!(!m.reason.contains("as a whole"), "{}", m.reason);
    // Alone, against cards that agree on it: REGRESSED on its own band.
    assert_eq!(m.verdict, Verdict::Regressed, "{}", m.reason);
    // The same change of a metric on which the cards spread by ±4 % is not.
    let mut grouped = card.clone();
    worsen(&mut grouped, "atomics/add_u32/distinct", "ops_per_clock", 0.05);
    let c = run_compare(&baseline, std::slice::from_ref(&grouped), &Rule::default());
    assert_eq!(c.families[0].verdict, Verdict::Pass, "{}", c.families[0].reason);
    let m = c.metric("atomics/add_u32/distinct", "ops_per_clock").unwrap();
    assert_ne!(m.verdict, Verdict::Regressed, "{}", m.reason);
}
