//! Judging one run against a baseline, and per-card baselines, as the commands do.

use gpubench::baseline::{Baseline, BaselineKey};
use gpubench::results::ResultsDocument;
use gpubench::verdict::{Comparison, NoiseModel, Rule, Side, compare};

/// `run` against `b` under `rule`.
pub fn judge(b: &Baseline, run: &ResultsDocument, rule: &Rule) -> Comparison {
    let side = Side { label: "baseline", runs: &b.runs, noise: b.noise.as_ref() };
    compare(side, Side::of("new", std::slice::from_ref(run)), rule).unwrap()
}

/// A per-card baseline of `runs`, learned with a class baseline's model as its prior.
#[allow(dead_code)]
pub fn card_baseline(runs: Vec<ResultsDocument>, class: &NoiseModel) -> Baseline {
    let key = BaselineKey { class: runs[0].gpu.class_key(), uuid: Some(runs[0].gpu.uuid.clone()), name: None };
    let mut b = Baseline::from_runs(&key, runs, 0).unwrap();
    b.learn_with_prior(Some(class));
    b
}
