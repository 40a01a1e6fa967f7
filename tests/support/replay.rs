//! The calibration replay's machinery: the recording workflow's class baselines built from the
//! committed runs (three cards, or `--cards 3` over every other card), every other card judged
//! against them, and the false alarms counted.

use std::collections::BTreeMap;

use gpubench::baseline::span::spanning_cards;
use gpubench::baseline::{Baseline, BaselineKey};
use gpubench::results::ResultsDocument;
use gpubench::verdict::{Comparison, Rule, Verdict};

use crate::judging::{card_baseline, judge};
use crate::recorded::{Code, RUNS_PER_CARD, code_of, runs_by_card};

/// The recording workflow's class: three runs (the first three) on every card of the `current`
/// code (the committed class baseline's) that was run three times or more and that one
/// baseline can hold with the others, and the class baseline of the three cards that span them
/// (`baseline save --cards 3`, [`spanning_cards`]); every other card, of every code, is judged.
/// A card of two runs is judged, never chosen: the workflow runs each card three times, and a
/// class of cards of two runs would learn its run spreads from fewer runs than it gives.
pub fn split(
    by_card: &BTreeMap<String, Vec<ResultsDocument>>,
    current: &Code,
) -> (Vec<ResultsDocument>, Vec<(String, Vec<ResultsDocument>)>) {
    let pool: Vec<ResultsDocument> =
        recorded_pool(by_card, current).into_iter().filter(|r| by_card[&r.gpu.uuid].len() >= RUNS_PER_CARD).collect();
    let (keep, _) = spanning_cards(&pool, 3);
    let chosen: Vec<ResultsDocument> = pool.into_iter().filter(|r| keep.contains(&r.gpu.uuid)).collect();
    let others = by_card.iter().filter(|(u, _)| !keep.contains(u)).map(|(u, r)| (u.clone(), r.clone())).collect();
    (chosen, others)
}

/// The runs the recording workflow gives `baseline save`: three (the first three) on every card
/// of the `current` code that one baseline can hold with the others.
pub fn recorded_pool(by_card: &BTreeMap<String, Vec<ResultsDocument>>, current: &Code) -> Vec<ResultsDocument> {
    let mut reference: Option<Baseline> = None;
    let mut pool: Vec<ResultsDocument> = Vec::new();
    for runs in by_card.values().filter(|r| code_of(&r[0]) == *current) {
        let three: Vec<ResultsDocument> = runs.iter().take(RUNS_PER_CARD).cloned().collect();
        if held_with(&mut reference, &three) {
            pool.extend(three);
        }
    }
    pool
}

/// Whether one baseline can hold `runs` with those of the first card passed here
/// (`Baseline::accepts` against that card's baseline, which the first call makes).
pub fn held_with(reference: &mut Option<Baseline>, runs: &[ResultsDocument]) -> bool {
    match reference {
        Some(b) => runs.iter().all(|r| b.accepts(r).is_ok()),
        None => {
            let key = BaselineKey { class: runs[0].gpu.class_key(), uuid: None, name: None };
            *reference = Baseline::from_runs(&key, runs.to_vec(), 0).ok();
            reference.is_some()
        }
    }
}

/// A class baseline of `runs`, as `baseline save` writes it.
pub fn class_baseline(runs: Vec<ResultsDocument>) -> Baseline {
    let key = BaselineKey { class: runs[0].gpu.class_key(), uuid: None, name: None };
    Baseline::from_runs(&key, runs, 0).unwrap()
}

/// Every comparison of the workflow on the class `slug`: each judged card's every run against
/// its class baseline, and each of its runs against a per-card baseline of its other runs.
pub struct Workflow {
    /// The class baselines (one, or one per judged card).
    pub classes: Vec<Baseline>,
    /// (class comparison, same-card comparison) inputs: the run, the index of its class
    /// baseline, its per-card baseline.
    pub cases: Vec<(ResultsDocument, usize, Option<Baseline>)>,
}

impl Workflow {
    pub fn class_of(&self, case: usize) -> &Baseline {
        &self.classes[self.cases[case].1]
    }

    /// Adds every run of a judged card, each with a per-card baseline of its other runs (where
    /// it has two or more), learned with the class's model as the prior.
    pub fn judge_card(&mut self, runs: &[ResultsDocument], class: usize) {
        let model = self.classes[class].noise.clone().unwrap();
        for i in 0..runs.len() {
            let rest: Vec<ResultsDocument> =
                runs.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, r)| r.clone()).collect();
            let card = (rest.len() >= 2).then(|| card_baseline(rest, &model));
            self.cases.push((runs[i].clone(), class, card));
        }
    }
}

/// The workflow with three cards: the class baseline of the three that span the recorded
/// cards, every spread learned from their nine runs; every other card judged.
pub fn workflow(by_card: &BTreeMap<String, Vec<ResultsDocument>>, current: &Code) -> Workflow {
    let (chosen, others) = split(by_card, current);
    let mut w = Workflow { classes: vec![class_baseline(chosen)], cases: Vec::new() };
    for (_, runs) in &others {
        w.judge_card(runs, 0);
    }
    w
}

/// The workflow as `baseline save --cards 3` runs it on every recorded card but the one
/// judged: the runs of the three that span them kept, every spread learned from all of their
/// runs; every card of the class judged so, its own runs never among those learned from.
pub fn workflow_every_other_card(by_card: &BTreeMap<String, Vec<ResultsDocument>>, current: &Code) -> Workflow {
    let pool = recorded_pool(by_card, current);
    let mut w = Workflow { classes: Vec::new(), cases: Vec::new() };
    for (uuid, runs) in by_card {
        let rest: Vec<ResultsDocument> = pool.iter().filter(|r| &r.gpu.uuid != uuid).cloned().collect();
        let (keep, _) = spanning_cards(&rest, 3);
        let mut class = class_baseline(rest.iter().filter(|r| keep.contains(&r.gpu.uuid)).cloned().collect());
        class.learn_from(&rest);
        w.classes.push(class);
        w.judge_card(runs, w.classes.len() - 1);
    }
    w
}

pub fn regressed(c: &Comparison) -> Vec<String> {
    c.metrics.iter().filter(|m| m.verdict == Verdict::Regressed).map(|m| format!("{}: {}", m.key(), m.reason)).collect()
}

/// A class baseline of every card of the corpus but `uuid` (each card's first three runs, the
/// cards whose runs one baseline holds with the first one's).
pub fn every_other_card(by_card: &BTreeMap<String, Vec<ResultsDocument>>, uuid: &str) -> Baseline {
    let mut runs: Vec<ResultsDocument> = Vec::new();
    let mut reference: Option<Baseline> = None;
    for (_, card) in by_card.iter().filter(|(u, _)| u.as_str() != uuid) {
        let three: Vec<ResultsDocument> = card.iter().take(RUNS_PER_CARD).cloned().collect();
        if !held_with(&mut reference, &three) {
            continue;
        }
        runs.extend(three);
    }
    class_baseline(runs)
}

/// What the workflow's class and same-card comparisons flag on the class `slug`: false class
/// alarms, class alarms that a baseline of every other card of the corpus raises too (the card
/// differs from the class: what a class comparison is for), same-card false alarms, the false
/// alarms (class and same-card) on the judged cards of the class baseline's code, and the lines
/// of each.
pub struct Alarms {
    pub class: usize,
    pub confirmed: usize,
    pub same: usize,
    pub on_current_code: usize,
    pub current_cards: usize,
    pub text: String,
}

/// The workflow `build` makes of the runs of the class `slug`.
pub type Build = fn(&BTreeMap<String, Vec<ResultsDocument>>, &Code) -> Workflow;

impl Alarms {
    /// The counts and every alarm's line, for the test's output.
    pub fn summary(&self, model: &str) -> String {
        format!(
            "{model}: {} class, {} same-card false alarms; {} confirmed by every other card; {} on the {} judged cards of the class baseline's code\n{}",
            self.class, self.same, self.confirmed, self.on_current_code, self.current_cards, self.text
        )
    }
}

pub fn false_alarms(slug: &str, build: Build) -> Alarms {
    false_alarms_under(slug, build, &Rule::default())
}

pub fn false_alarms_under(slug: &str, build: Build, rule: &Rule) -> Alarms {
    let (by_card, current) = runs_by_card(slug);
    let w = build(&by_card, &current);
    assert!(w.cases.len() >= 9, "{slug}: {} comparisons", w.cases.len());
    let chosen: std::collections::BTreeSet<&str> =
        w.classes.iter().flat_map(|c| &c.runs).map(|r| &r.gpu.uuid[..12]).collect();
    let judged: std::collections::BTreeSet<&str> = w.cases.iter().map(|(r, _, _)| &r.gpu.uuid[..12]).collect();
    let current_cards: std::collections::BTreeSet<&str> =
        w.cases.iter().filter(|(r, _, _)| code_of(r) == current).map(|(r, _, _)| &r.gpu.uuid[..12]).collect();
    let mut a = Alarms {
        class: 0,
        confirmed: 0,
        same: 0,
        on_current_code: 0,
        current_cards: current_cards.len(),
        text: String::new(),
    };
    a.text.push_str(&format!(
        "class baseline runs of {chosen:?}; judged: {} cards, {} runs\n",
        judged.len(),
        w.cases.len()
    ));
    let mut others: BTreeMap<String, Baseline> = BTreeMap::new();
    for (i, (run, _, card)) in w.cases.iter().enumerate() {
        let c = judge(w.class_of(i), run, rule);
        let flagged: Vec<&gpubench::verdict::MetricVerdict> =
            c.metrics.iter().filter(|m| m.verdict == Verdict::Regressed).collect();
        if !flagged.is_empty() {
            let all = others.entry(run.gpu.uuid.clone()).or_insert_with(|| every_other_card(&by_card, &run.gpu.uuid));
            let wide = judge(all, run, rule);
            for m in flagged {
                let again = wide.metrics.iter().any(|x| x.key() == m.key() && x.verdict == Verdict::Regressed);
                let what = if again { "card differs from every other card" } else { "class" };
                *(if again { &mut a.confirmed } else { &mut a.class }) += 1;
                a.on_current_code += usize::from(!again && current_cards.contains(&run.gpu.uuid[..12]));
                a.text.push_str(&format!("{what} {}: {}: {}\n", &run.gpu.uuid[..12], m.key(), m.reason));
            }
        }
        for r in card.as_ref().map(|b| regressed(&judge(b, run, rule))).unwrap_or_default() {
            a.same += 1;
            a.on_current_code += usize::from(current_cards.contains(&run.gpu.uuid[..12]));
            a.text.push_str(&format!("same card {}: {r}\n", &run.gpu.uuid[..12]));
        }
    }
    a
}
