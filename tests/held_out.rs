//! The committed H200 class baseline on a card it never learned from: three default runs of
//! GPU-d11f5949-313e-2384-178a-5556e20ffb8a (692-2G520-0282-001, driver 580.159.04), recorded
//! after the baseline was rebuilt and kept out of `tests/corpus/`
//! (`tests/fixtures/recorded/h200-held-out.tar.xz`). Each run against the class, and against a
//! per-card baseline of the card's two other runs (the class baseline its prior), with each
//! metric's confidence and with the comparison's.

#[path = "support/judging.rs"]
mod judging;

use std::path::Path;

use gpubench::baseline::Baseline;
use gpubench::results::ResultsDocument;
use gpubench::verdict::corpus::gather;
use gpubench::verdict::{Comparison, ConfidenceScope, Rule, Verdict};
use judging::{card_baseline, judge};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn held_out_runs(file: &str) -> Vec<ResultsDocument> {
    let runs = gather(&[root().join("tests/fixtures/recorded").join(file)]).unwrap().runs;
    runs.into_iter().map(|(_, r)| r).collect()
}

fn h200_class() -> Baseline {
    Baseline::read(&root().join("baselines/nvidia-h200-cc90-132sm-140gib/class.json.xz")).unwrap()
}

/// A per-card baseline of every run of `runs` but the `i`-th, the class baseline its prior.
fn others_baseline(runs: &[ResultsDocument], i: usize, class: &Baseline) -> Baseline {
    let others = runs.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, r)| r.clone()).collect();
    card_baseline(others, &class.noise_model())
}

fn count(c: &Comparison, v: Verdict) -> usize {
    c.metrics.iter().filter(|m| m.verdict == v).count()
}

/// The share of metrics whose detectable effect is 5 % or less.
fn within_5(c: &Comparison) -> f64 {
    let judged: Vec<f64> = c.metrics.iter().filter_map(|m| m.detectable).collect();
    judged.iter().filter(|d| **d <= 0.05).count() as f64 / judged.len() as f64
}

/// Against the class: 0 REGRESSED in each run; with each metric's confidence 92.3-92.6 % of the
/// metrics detectable to 5 % and none INSENSITIVE, with the comparison's 83.9 % and 16
/// INSENSITIVE. Against the card's own two other runs: 0 REGRESSED, 97 % detectable to 5 %.
#[test]
fn a_card_the_committed_class_never_saw_raises_no_alarm() {
    let class = h200_class();
    let runs = held_out_runs("h200-held-out.tar.xz");
    assert_eq!(runs.len(), 3);
    assert!(class.runs.iter().all(|r| r.gpu.uuid != runs[0].gpu.uuid), "the card is held out");
    let each = Rule::default();
    let whole = Rule { confidence_scope: ConfidenceScope::Comparison, ..Rule::default() };
    for (i, run) in runs.iter().enumerate() {
        let (a, b) = (judge(&class, run, &each), judge(&class, run, &whole));
        assert_eq!((count(&a, Verdict::Regressed), count(&b, Verdict::Regressed)), (0, 0));
        assert!(count(&a, Verdict::Insensitive) == 0 && within_5(&a) > 0.92, "{}", within_5(&a));
        assert!(within_5(&b) > 0.83 && within_5(&b) < within_5(&a), "{}", within_5(&b));
        let card = others_baseline(&runs, i, &class);
        for rule in [&each, &whole] {
            let c = judge(&card, run, rule);
            assert_eq!(count(&c, Verdict::Regressed), 0, "run {i}");
            assert!(within_5(&c) > 0.96, "run {i}: {}", within_5(&c));
        }
    }
}

/// A card below every recorded card of today's code in its atomics (GPU-ce787e6e-8e33-b304-
/// 7cff-8bf807e3d694, 692-2G520-0282-000, `tests/fixtures/recorded/h200-held-out-lower-atomics.
/// tar.xz`): against the class, 5-6 REGRESSED in each run, all atomics and all lower
/// (`add_u32/same_sector` 2.9 %, `distinct`, `contention:k=1`, `types:f32/distinct` 3.6-4.4 %),
/// nothing else; the level of three cards of the corpus recorded with earlier atomics samples
/// (GPU-c153c7e8, 0b22bb49, 89ccdb96), so no card the class learned from shows it, and a class
/// comparison says the card differs. Against its own runs, 0 REGRESSED.
#[test]
fn a_card_below_every_recorded_card_in_its_atomics_is_flagged_there_only() {
    let class = h200_class();
    let runs = held_out_runs("h200-held-out-lower-atomics.tar.xz");
    assert_eq!(runs.len(), 3);
    let rule = Rule::default();
    for (i, run) in runs.iter().enumerate() {
        let c = judge(&class, run, &rule);
        let flagged: Vec<_> = c.metrics.iter().filter(|m| m.verdict == Verdict::Regressed).collect();
        assert!((3..=8).contains(&flagged.len()), "run {i}: {} REGRESSED", flagged.len());
        for m in &flagged {
            assert!(m.family == "atomics" && m.ratio.unwrap() < 0.975, "run {i}: {}: {}", m.key(), m.reason);
        }
        assert_eq!(count(&judge(&others_baseline(&runs, i, &class), run, &rule), Verdict::Regressed), 0, "run {i}");
    }
}
