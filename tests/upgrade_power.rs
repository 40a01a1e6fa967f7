//! What the interleaved upgrade job can see, on the runs of recorded A/A jobs: the default
//! profile, three rounds (A B A B A B, each run in its own process) on each of two H100s
//! (GPU-05e4954b, GPU-875e8a51) and two H200s (GPU-48dd89df, GPU-8c051c2a) (`tests/corpus/`;
//! the first three members of a card's archive are A, the last three B). Each card is judged
//! as the job judges it (A's runs a per-card baseline whose run spreads take the committed
//! class baseline's as their prior), as recorded and with every metric of B made 2 % and 3 %
//! worse. Family verdicts are off, so that each metric meets its shift alone.
//!
//! `cargo test --test upgrade_power -- --nocapture` prints the table.

use std::path::{Path, PathBuf};

use gpubench::baseline::Baseline;
use gpubench::results::ResultsDocument;
use gpubench::upgrade::judge::judge_card;
use gpubench::verdict::calibrate::shifted;
use gpubench::verdict::corpus::gather;
use gpubench::verdict::{FailOn, Rule, Verdict};

const H100: &str = "nvidia-h100-80gb-hbm3-cc90-132sm-79gib";
const H200: &str = "nvidia-h200-cc90-132sm-140gib";

/// The cards of the recorded A/A jobs, by class.
const JOBS: [(&str, &str); 4] = [(H100, "05e4954b"), (H100, "875e8a51"), (H200, "48dd89df"), (H200, "8c051c2a")];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The A and B runs of one card of the recorded job.
fn job_runs(class: &str, card: &str) -> (Vec<ResultsDocument>, Vec<ResultsDocument>) {
    let path: PathBuf = root().join("tests/corpus").join(class).join(format!("runs-GPU-{card}.tar.xz"));
    let mut runs = gather(&[path]).unwrap().runs;
    runs.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(runs.len(), 6, "{card}");
    let mut docs: Vec<ResultsDocument> = runs.into_iter().map(|(_, r)| r).collect();
    let b = docs.split_off(3);
    assert!(docs.iter().zip(&b).all(|(a, b)| a.created_unix_s < b.created_unix_s), "A and B alternate");
    (docs, b)
}

/// (REGRESSED, IMPROVED, metrics judged) of B against A on one card, B made `worse` worse.
fn judge(
    a: &[ResultsDocument],
    b: &[ResultsDocument],
    worse: f64,
    rule: &Rule,
    class: &Baseline,
) -> (usize, usize, usize) {
    let b: Vec<ResultsDocument> = b.iter().map(|r| shifted(r, worse)).collect();
    let uuid = a[0].gpu.uuid.clone();
    let card = judge_card(&uuid, a, &b, rule, FailOn::default(), None, class.noise.as_ref());
    let c = card.comparison.expect("the card is judged");
    let judged = c.metrics.iter().filter(|m| m.detectable.is_some()).count();
    let count = |v: Verdict| c.metrics.iter().filter(|m| m.verdict == v).count();
    if worse == 0.0 {
        for m in c.metrics.iter().filter(|m| matches!(m.verdict, Verdict::Regressed | Verdict::Improved)) {
            println!("A/A {uuid}: {} {}: {}", m.verdict, m.key(), m.reason);
        }
    }
    (count(Verdict::Regressed), count(Verdict::Improved), judged)
}

#[test]
fn the_interleaved_job_states_its_power_at_two_and_three_percent() {
    let rule = Rule { family_verdicts: None, same_card_family_verdicts: None, ..Rule::default() };
    println!("| card | A/A REGRESSED | A/A IMPROVED | metrics judged | caught at 2 % | caught at 3 % |");
    println!("| --- | --- | --- | --- | --- | --- |");
    let (mut hit2, mut hit3, mut all) = (0, 0, 0);
    for (slug, card) in JOBS {
        let class = Baseline::read(&root().join(format!("baselines/{slug}/class.json.xz"))).unwrap();
        let (a, b) = job_runs(slug, card);
        let (reg, imp, judged) = judge(&a, &b, 0.0, &rule, &class);
        let (r2, _, _) = judge(&a, &b, 0.02, &rule, &class);
        let (r3, _, _) = judge(&a, &b, 0.03, &rule, &class);
        let pct = |n: usize| 100.0 * n as f64 / judged as f64;
        println!("| GPU-{card} | {reg} | {imp} | {judged} | {r2} ({:.1} %) | {r3} ({:.1} %) |", pct(r2), pct(r3));
        assert!(judged >= 250, "{card}: {judged} metrics judged");
        // A 3 % shift is caught more often than a 2 % one, which sits at the 2 % minimum effect.
        assert!(r3 > r2, "{card}: {r2} at 2 %, {r3} at 3 %");
        (hit2, hit3, all) = (hit2 + r2, hit3 + r3, all + judged);
    }
    let share3 = hit3 as f64 / all as f64;
    println!("all cards: 2 % caught in {hit2} of {all}, 3 % in {hit3} of {all}");
    assert!(share3 >= 0.5, "3 % caught in {hit3} of {all}");
}
