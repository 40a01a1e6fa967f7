//! A card without a class baseline: the first hour on a GPU model nobody has recorded, where a
//! user's only evidence of how far runs stray is the runs of the card itself. Every card of
//! today's code in `tests/corpus/` with three runs or more, its first three runs (a, b, c),
//! each its own process, judged against each other as the commands would with no class
//! baseline in the folder:
//!
//! - one run against one run (`--save-baseline`, then a run): six ordered pairs per card;
//! - one run before, two after (`upgrade --before` after one `--save-baseline`): three per card;
//! - two runs before, one after (`--save-baseline`, `--append`, then a run): three per card.
//!
//! Every comparison is A/A, so a REGRESSED is a false alarm. The table in
//! `docs/src/verdicts.md` is generated here.

#[path = "support/book.rs"]
mod book;
#[path = "support/recorded.rs"]
mod recorded;

use gpubench::results::ResultsDocument;
use gpubench::verdict::{Rule, Side, compare};
use recorded::{RUNS_PER_CARD, code_of, runs_by_card};

const CLASSES: [(&str, &str); 2] =
    [("H100", "nvidia-h100-80gb-hbm3-cc90-132sm-79gib"), ("H200", "nvidia-h200-cc90-132sm-140gib")];

/// How many of `cases` (baseline runs, new runs) give a REGRESSED, and how many a decided
/// verdict (REGRESSED or IMPROVED).
struct Tally {
    comparisons: usize,
    regressed: usize,
    decided: usize,
}

fn tally(cases: &[(Vec<ResultsDocument>, Vec<ResultsDocument>)]) -> Tally {
    let mut t = Tally { comparisons: 0, regressed: 0, decided: 0 };
    for (old, new) in cases {
        let c = compare(Side::of("before", old), Side::of("after", new), &Rule::default()).unwrap();
        t.comparisons += 1;
        t.regressed += usize::from(c.counts.regressed > 0);
        t.decided += usize::from(c.counts.regressed + c.counts.improved > 0);
    }
    t
}

/// The first three runs of every card of today's code run three times or more.
fn cards(slug: &str) -> Vec<Vec<ResultsDocument>> {
    let (by_card, current) = runs_by_card(slug);
    by_card
        .into_values()
        .filter(|runs| runs.len() >= RUNS_PER_CARD && code_of(&runs[0]) == current)
        .map(|runs| runs.into_iter().take(RUNS_PER_CARD).collect())
        .collect()
}

/// Baseline and new run indices of one comparison.
type Split = (Vec<usize>, Vec<usize>);

/// The comparisons of one form on every card: `form(i, j, n)` picks the baseline runs and the
/// new runs of a card of `n` runs, for each ordered pair `(i, j)`, or none.
fn cases(
    cards: &[Vec<ResultsDocument>],
    form: fn(usize, usize, usize) -> Option<Split>,
) -> Vec<(Vec<ResultsDocument>, Vec<ResultsDocument>)> {
    let mut out = Vec::new();
    for runs in cards {
        let n = runs.len();
        for (old, new) in (0..n).flat_map(|i| (0..n).filter_map(move |j| form(i, j, n))) {
            let pick = |ix: &[usize]| ix.iter().map(|k| runs[*k].clone()).collect::<Vec<_>>();
            out.push((pick(&old), pick(&new)));
        }
    }
    out
}

/// Every run of `0..n` but `i`.
fn others(i: usize, n: usize) -> Vec<usize> {
    (0..n).filter(|k| *k != i).collect()
}

/// One run against another.
fn one_against_one(i: usize, j: usize, _: usize) -> Option<Split> {
    (i != j).then(|| (vec![i], vec![j]))
}

/// One run before and the card's other runs after.
fn one_before_the_rest_after(i: usize, j: usize, n: usize) -> Option<Split> {
    (j == 0).then(|| (vec![i], others(i, n)))
}

/// The card's other runs before and one after.
fn the_rest_before_one_after(i: usize, j: usize, n: usize) -> Option<Split> {
    (j == 0).then(|| (others(i, n), vec![i]))
}

#[test]
fn one_card_without_a_class_baseline() {
    let mut rows = [
        ("one run against one run", Vec::new()),
        ("one run before, two after", Vec::new()),
        ("two runs before, one after", Vec::new()),
    ];
    let mut header = vec!["one card, no class baseline".to_string()];
    for (model, slug) in CLASSES {
        let cards = cards(slug);
        header.push(format!("{model} ({} cards)", cards.len()));
        let forms = [
            cases(&cards, one_against_one),
            cases(&cards, one_before_the_rest_after),
            cases(&cards, the_rest_before_one_after),
        ];
        for ((label, cells), form) in rows.iter_mut().zip(&forms) {
            let t = tally(form);
            eprintln!("{model} {label}: {} of {} with a REGRESSED, {} decided", t.regressed, t.comparisons, t.decided);
            if *label == "one run against one run" {
                // Nothing learned of how far runs stray: nothing is decided.
                assert_eq!(t.decided, 0, "{model}: {label}");
            }
            cells.push(format!("{} of {}", t.regressed, t.comparisons));
        }
    }
    let mut table = format!("| {} |\n| --- | --- | --- |\n", header.join(" | "));
    for (label, cells) in &rows {
        table.push_str(&format!("| {label} | {} |\n", cells.join(" | ")));
    }
    eprint!("{table}");
    book::assert_generated("docs/src/verdicts.md", "| one card, no class baseline |", &table);
}

/// The quickstart's steps on four H200s that no baseline held, on the GPU machine
/// (`tests/fixtures/recorded/h200-first-hour.tar.xz`: per card `--save-baseline first` (r1),
/// `--baseline first` (r2, its output `r2.log`), `--save-baseline first --append` twice (r3,
/// r4), with a folder of no other baseline): no ordered pair of a card's runs decides anything
/// (r2 against r1 among them, as the CLI's `r2.log` shows), and each run against a baseline of
/// the card's three others (no class) raises no REGRESSED.
#[test]
fn the_first_hour_on_four_h200s() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/recorded/h200-first-hour.tar.xz");
    let mut cards: std::collections::BTreeMap<String, Vec<ResultsDocument>> = Default::default();
    for (_, run) in gpubench::verdict::corpus::gather(&[file]).unwrap().runs {
        cards.entry(run.gpu.uuid.clone()).or_default().push(run);
    }
    assert_eq!(cards.len(), 4);
    let (mut pairs, mut moved) = (0, 0);
    for (uuid, runs) in &cards {
        assert_eq!(runs.len(), 4, "{uuid}");
        for i in 0..4 {
            for j in (0..4).filter(|j| *j != i) {
                let c = compare(Side::of("before", &runs[i..=i]), Side::of("after", &runs[j..=j]), &Rule::default())
                    .unwrap();
                assert_eq!(c.counts.regressed + c.counts.improved, 0, "{uuid} r{} -> r{}", i + 1, j + 1);
                pairs += 1;
                moved += usize::from(c.counts.inconclusive > 0);
            }
            let rest: Vec<ResultsDocument> = others(i, runs.len()).into_iter().map(|k| runs[k].clone()).collect();
            let c = compare(Side::of("before", &rest), Side::of("after", &runs[i..=i]), &Rule::default()).unwrap();
            eprintln!("{} r{} against its three others: {}", &uuid[..12], i + 1, c.counts.line());
            assert_eq!(c.counts.regressed, 0, "{uuid} r{}", i + 1);
        }
    }
    eprintln!(
        "one run against one: {moved} of {pairs} ordered pairs with a metric beyond the minimum effect, none decided"
    );
}
