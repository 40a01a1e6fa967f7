//! Edges of the verdict rule on the recorded H200 run: which kind of baseline a run meets,
//! families the run did not measure, runs without a kernel clock, cards and classes that must
//! not be compared, and baselines that keep every card when runs are appended.

use std::path::Path;

use gpubench::baseline::{BaselineKey, SaveMode, Store};
use gpubench::error::{Error, exit};
use gpubench::report::{TableOptions, comparison_json, junit, markdown, verdict_report};
use gpubench::results::{Better, ResultsDocument, Summary};
use gpubench::verdict::{Comparison, FailOn, Level, Rule, Side, Verdict, check_comparable, compare};

#[path = "support/second_run.rs"]
mod second_run;
use second_run::two_runs;

fn run() -> ResultsDocument {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h200-default-run.json");
    ResultsDocument::read(&path).unwrap()
}

fn on_card(doc: &ResultsDocument, uuid: &str, factor: f64) -> ResultsDocument {
    let mut d = doc.clone();
    d.gpu.uuid = uuid.to_string();
    for b in &mut d.benchmarks {
        for m in &mut b.metrics {
            m.samples.iter_mut().for_each(|v| *v *= factor);
            m.summary = Summary::of(&m.samples);
            if let Some(n) = &mut m.normalized {
                n.samples.iter_mut().for_each(|v| *v *= factor);
            }
        }
    }
    d
}

fn judge(old: &[ResultsDocument], new: &[ResultsDocument]) -> Comparison {
    compare(Side::of("old", old), Side::of("new", new), &Rule::default()).unwrap()
}

#[test]
fn reports_name_the_kind_of_baseline() {
    let doc = run();
    let uuid = doc.gpu.uuid.clone();
    let same = judge(&[doc.clone(), on_card(&doc, &uuid, 1.001)], std::slice::from_ref(&doc));
    assert_eq!(same.baseline_kind.level, Level::SameCard);
    assert!(
        same.baseline_kind.describe().starts_with("per-card baseline: 2 runs"),
        "{}",
        same.baseline_kind.describe()
    );
    assert!(same.metrics.iter().filter(|m| m.level.is_some()).all(|m| m.level == Some(Level::SameCard)));

    let class_runs = [on_card(&doc, "GPU-a", 1.0), on_card(&doc, "GPU-b", 1.004), on_card(&doc, "GPU-c", 0.997)];
    let c = judge(&class_runs, std::slice::from_ref(&doc));
    assert_eq!((c.baseline_kind.level, c.baseline_kind.cards, c.baseline_kind.runs), (Level::Class, 3, 3));
    assert_eq!(c.counts.regressed, 0, "{}", c.counts.line());
    let describe = c.baseline_kind.describe();
    assert!(describe.starts_with("class baseline: 3 cards, 3 runs"), "{describe}");
    assert!(verdict_report(&c, TableOptions::default()).contains(&format!("against:  {describe}")));
    assert!(markdown(&c).contains(&format!("Compared with a {describe}.")));
    assert!(junit(&c).contains("<property name=\"baseline_level\" value=\"class\"/>"));
    assert!(junit(&c).contains("<property name=\"baseline_cards\" value=\"3\"/>"));
    let json: serde_json::Value = serde_json::from_str(&comparison_json(&c)).unwrap();
    assert_eq!(json["baseline_kind"]["level"], "class");
    assert_eq!(json["baseline_kind"]["cards"], 3);

    // A 6 % slowdown on a card the class baseline does not hold is caught where the cards agree
    // within 0.4 %: the threshold is widened by the between-card spread only.
    let mut slow = on_card(&doc, "GPU-d", 1.0);
    for b in slow.benchmarks.iter_mut().filter(|b| b.family == "latency") {
        for m in &mut b.metrics {
            let f = if m.better == Better::Lower { 1.06 } else { 1.0 / 1.06 };
            m.samples.iter_mut().for_each(|v| *v *= f);
        }
    }
    let c = judge(&class_runs, &[slow]);
    let latency: Vec<_> = c.metrics.iter().filter(|m| m.family == "latency").collect();
    let caught = latency.iter().filter(|m| m.verdict == Verdict::Regressed).count();
    assert!(caught * 10 >= latency.len() * 9, "{caught} of {}", latency.len());
    assert!(c.metrics.iter().filter(|m| m.family != "latency").all(|m| m.verdict != Verdict::Regressed));
}

#[test]
fn a_baseline_of_one_other_card_is_inconclusive_never_regressed() {
    let doc = run();
    let c = judge(&[on_card(&doc, "GPU-other", 1.0)], &[on_card(&doc, &doc.gpu.uuid, 1.08)]);
    assert_eq!(c.baseline_kind.level, Level::OtherCard);
    assert_eq!(c.counts.regressed, 0, "{}", c.counts.line());
    assert!(c.counts.inconclusive > c.metrics.len() / 2, "{}", c.counts.line());
    assert!(c.warnings.iter().any(|w| w.contains("holds one card")), "{:?}", c.warnings);
}

#[test]
fn a_family_the_run_did_not_measure_is_not_measured_not_changed_code() {
    let doc = run();
    let mut new = doc.clone();
    new.benchmarks.retain(|b| b.family != "atomics");
    let c = judge(std::slice::from_ref(&doc), &[new]);
    let atomics: Vec<_> = c.metrics.iter().filter(|m| m.family == "atomics").collect();
    assert!(!atomics.is_empty());
    assert!(atomics.iter().all(|m| m.verdict == Verdict::NotMeasured), "{:?}", atomics[0].reason);
    assert_eq!(atomics[0].reason, "family not measured by the new run");
    assert_eq!(c.counts.not_measured, atomics.len());
    assert!(c.upgrade.kernels_line().starts_with("generated code unchanged"), "{}", c.upgrade.kernels_line());
    assert!(c.counts.line().ends_with(&format!("{} NOT MEASURED", atomics.len())));
    assert_eq!(c.exit_code(), exit::OK);
    assert_eq!(c.exit_code_with(FailOn::parse("not-measured").unwrap()), exit::REGRESSION);
    assert_eq!(
        c.exit_code_with(FailOn::parse("inconclusive").unwrap()),
        c.exit_code_with(FailOn::default()).max(if c.counts.inconclusive > 0 { exit::REGRESSION } else { exit::OK })
    );
    assert!(FailOn::parse("inconclusive,bogus").unwrap_err().contains("bogus"));
    assert!(junit(&c).contains("NOT MEASURED: family not measured"));
}

#[test]
fn a_run_without_kernel_clock_after_a_clock_drop_is_inconclusive_not_regressed() {
    let doc = run();
    // The card ran 10 % slower clocks: times in ns grow by 10 %, cycles do not move. The new
    // run has no kernel clock readings and NVML's clock (if any) is stale.
    let mut new = doc.clone();
    for b in &mut new.benchmarks {
        b.clocks.clear();
        for m in b.metrics.iter_mut().filter(|m| m.unit == "ns") {
            m.samples.iter_mut().for_each(|v| *v *= 1.1);
        }
    }
    let c = judge(&two_runs(&doc), &[new]);
    let ns: Vec<_> = c.metrics.iter().filter(|m| m.unit == "ns").collect();
    assert!(!ns.is_empty());
    assert_eq!(c.counts.regressed, 0, "{}", c.counts.line());
    // Every 10 % that lies beyond its band (one of a noisy metric's two runs may lie far
    // from the other) is put down to a clock the run cannot rule out.
    let beyond: Vec<_> = ns.into_iter().filter(|m| m.threshold.is_some_and(|t| t < 0.09)).collect();
    assert!(beyond.len() >= 10, "{}", beyond.len());
    for m in beyond {
        assert_eq!(m.verdict, Verdict::Inconclusive, "{}: {}", m.key(), m.reason);
        assert!(m.reason.contains("no kernel clock"), "{}", m.reason);
    }
}

#[test]
fn another_card_or_class_is_refused_with_exit_code_7() {
    let doc = run();
    let other = on_card(&doc, "GPU-other", 1.0);
    let e = check_comparable(Some(&doc.gpu.uuid), std::slice::from_ref(&doc), &other.gpu, false).unwrap_err();
    assert!(matches!(e, Error::Mismatch(_)));
    assert_eq!(e.exit_code(), exit::MISMATCH);
    assert!(e.to_string().contains("GPU-other") && !e.to_string().contains('\n'), "{e}");
    // A class baseline takes any card of the class.
    check_comparable(None, std::slice::from_ref(&doc), &other.gpu, false).unwrap();
    let mut foreign = doc.clone();
    foreign.gpu.sm_count = 114;
    let e = check_comparable(None, std::slice::from_ref(&doc), &foreign.gpu, false).unwrap_err();
    assert_eq!(e.exit_code(), exit::MISMATCH);
    assert!(e.to_string().contains("--allow-other-class"), "{e}");
    check_comparable(None, std::slice::from_ref(&doc), &foreign.gpu, true).unwrap();
}

#[test]
fn appending_keeps_the_newest_runs_of_every_card() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let doc = run();
    let key = BaselineKey::for_gpu(&doc.gpu, None, false).unwrap();
    let mut runs = Vec::new();
    for (i, card) in ["GPU-a", "GPU-a", "GPU-a", "GPU-b", "GPU-b"].iter().enumerate() {
        let mut r = on_card(&doc, card, 1.0);
        r.created_unix_s = 1000 + i as u64;
        runs.push(r);
    }
    store.save(&key, runs, SaveMode::Replace, 1).unwrap();
    let mut newest = on_card(&doc, "GPU-a", 1.0);
    newest.created_unix_s = 2000;
    let (_, b) = store.save(&key, vec![newest], SaveMode::Append { max_runs: 2 }, 2).unwrap();
    let kept: Vec<(&str, u64)> = b.runs.iter().map(|r| (r.gpu.uuid.as_str(), r.created_unix_s)).collect();
    assert_eq!(kept, vec![("GPU-a", 1002), ("GPU-b", 1003), ("GPU-b", 1004), ("GPU-a", 2000)]);
}

/// Settings under which nothing could fail are refused in one line: a `min_samples` above the
/// samples every metric has on both sides, and a new side that holds no benchmark.
#[test]
fn comparisons_that_could_judge_nothing_are_usage_errors() {
    let doc = run();
    let most = doc.benchmarks.iter().flat_map(|b| &b.metrics).map(|m| m.samples.len()).max().unwrap();
    let rule = Rule { min_samples: most + 1, ..Rule::default() };
    let e = compare(Side::of("old", std::slice::from_ref(&doc)), Side::of("new", std::slice::from_ref(&doc)), &rule)
        .unwrap_err();
    assert_eq!(e.exit_code(), exit::USAGE);
    assert!(e.to_string().contains(&format!("min_samples = {} exceeds", most + 1)), "{e}");
    let mut empty = doc.clone();
    empty.benchmarks.clear();
    let e =
        compare(Side::of("old", std::slice::from_ref(&doc)), Side::of("new", &[empty]), &Rule::default()).unwrap_err();
    assert!(matches!(e, Error::Usage(_)) && e.to_string().contains("holds no benchmarks"), "{e}");
}

/// A metric within a band wider than `max_detectable` is INSENSITIVE, counted, and fails a
/// job that asks `--fail-on insensitive`; metrics whose runs agree PASS, judged to a few percent.
#[test]
fn a_metric_that_could_not_see_is_insensitive_not_pass() {
    let doc = run();
    // Two baseline runs 30 % apart on one metric: its run spread is huge.
    let mut wild = doc.clone();
    let b = wild.benchmarks.iter_mut().find(|b| b.id.starts_with("stream/")).unwrap();
    let key = format!("{}:{}", b.id, b.metrics[0].name);
    b.metrics[0].samples.iter_mut().for_each(|v| *v *= 1.3);
    b.metrics[0].summary = Summary::of(&b.metrics[0].samples);
    let baseline = [doc.clone(), wild];
    let c = compare(Side::of("old", &baseline), Side::of("new", std::slice::from_ref(&doc)), &Rule::default()).unwrap();
    let m = c.metrics.iter().find(|m| m.key() == key).unwrap();
    assert_eq!(m.verdict, Verdict::Insensitive, "{}", m.reason);
    assert!(m.detectable.unwrap() > 0.10 && m.reason.contains("could not see a change below"), "{}", m.reason);
    assert!(c.counts.insensitive >= 1 && c.sensitivity().insensitive >= 1);
    assert_eq!(c.exit_code_with(FailOn::default()), exit::OK);
    assert_eq!(c.exit_code_with(FailOn::parse("insensitive").unwrap()), exit::REGRESSION);
    // The metrics whose runs agree are judged to a few percent and PASS.
    let quiet = c.metrics.iter().find(|m| m.benchmark.starts_with("latency/")).unwrap();
    assert_eq!(quiet.verdict, Verdict::Pass, "{}", quiet.reason);
    assert!(quiet.detectable.unwrap() < 0.05, "{quiet:?}");
}
