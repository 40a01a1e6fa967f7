//! Which cards a class baseline keeps when more cards were measured than it should hold: the
//! few whose runs span the widest part of what every card measured.
//!
//! Cards of one class fall into levels (a third of the H200s measured read L2 bandwidth 2.7 %
//! below the others, in two tight groups) that three cards picked at random may not sample:
//! a class baseline of three cards of one level learns a between-card spread that every card of
//! the other level falls outside. Runs on every card of a machine cost the wall time of one
//! card (each GPU runs in its own process, all at once); choosing the cards that span them puts
//! every level those cards show into the class.
//!
//! The choice, per metric over the cards' means of their run medians: what a set of cards
//! *misses* of a metric is the largest distance by which some card lies outside the set's range,
//! relative to the metric's median card, less [`NOISE_SPREADS`] of the metric's run-to-run
//! spread (what runs of one card stray by is no level); a set misses the sum over metrics of the
//! squares (a level 3 % away left out weighs as nine 1 % misses). Every set of `n` cards that
//! holds as many board part numbers as it can (`min(n, boards)`: a card of a board the class
//! lacks is judged with that stated) is tried, and the one that misses least kept, ties to the
//! higher *coverage* (the mean over metrics of the set's range over every card's), then to the
//! lower UUIDs. Beyond [`MAX_SETS`] sets it goes greedily: the card that misses least alone, then
//! each card that lowers the miss most, cards of missing boards only while the places left are
//! as many as those boards. The result is a function of the runs alone.

use std::collections::BTreeMap;

use crate::results::ResultsDocument;
use crate::stats::median;

/// One metric over the cards: each card's mean of its run medians, and the relative spread of
/// run medians about their card's mean, pooled over cards with two or more runs (0 without),
/// from [`crate::verdict::noise::card_medians`].
/// The range of the means over every card (`lo`, `hi`) and the median card's absolute value
/// (`mid`, `None` where 0) are kept with them.
struct MetricCards {
    means: BTreeMap<String, f64>,
    run_spread: f64,
    lo: f64,
    hi: f64,
    mid: Option<f64>,
}

/// Per "<benchmark id>:<metric>", for metrics every card has.
type CardValues = BTreeMap<String, MetricCards>;

/// Misses within this many run spreads of a metric are what runs of one card stray by, not a
/// level of the class: they weigh nothing.
pub const NOISE_SPREADS: f64 = 2.0;

fn card_values(runs: &[ResultsDocument]) -> CardValues {
    let cards: std::collections::BTreeSet<&str> = runs.iter().map(|r| r.gpu.uuid.as_str()).collect();
    crate::verdict::noise::card_medians(runs)
        .into_iter()
        .filter(|(_, m)| m.by_card.len() == cards.len())
        .map(|(key, m)| {
            let means: BTreeMap<String, f64> =
                m.by_card.iter().map(|(c, v)| (c.clone(), v.iter().sum::<f64>() / v.len() as f64)).collect();
            let all: Vec<f64> = means.values().copied().collect();
            let (lo, hi) = range(all.iter().copied());
            let mid = median(&all).map(f64::abs).filter(|v| *v > 0.0);
            (key, MetricCards { means, run_spread: m.run_spread.unwrap_or(0.0), lo, hi, mid })
        })
        .collect()
}

/// The mean over metrics that vary of the range of `set`'s values over the range of every card's.
fn coverage(values: &CardValues, set: &[&str]) -> f64 {
    let (mut total, mut metrics) = (0.0, 0usize);
    for m in values.values() {
        if m.hi > m.lo {
            let (slo, shi) = range(set.iter().filter_map(|c| m.means.get(*c).copied()));
            total += (shi - slo).max(0.0) / (m.hi - m.lo);
            metrics += 1;
        }
    }
    if metrics == 0 { 0.0 } else { total / metrics as f64 }
}

/// The sum over metrics of the square of the largest relative distance by which a card lies
/// outside `set`'s range, less [`NOISE_SPREADS`] run spreads.
fn miss(values: &CardValues, set: &[&str]) -> f64 {
    values
        .values()
        .map(|m| {
            let (slo, shi) = range(set.iter().filter_map(|c| m.means.get(*c).copied()));
            match m.mid {
                Some(mid) if shi >= slo => {
                    let d = (slo - m.lo).max(m.hi - shi).max(0.0) / mid;
                    (d - NOISE_SPREADS * m.run_spread).max(0.0).powi(2)
                }
                _ => 0.0,
            }
        })
        .sum()
}

/// A set of cards with its miss and coverage, computed once.
struct Scored<'a> {
    set: Vec<&'a str>,
    miss: f64,
    coverage: f64,
}

impl<'a> Scored<'a> {
    fn new(values: &CardValues, set: Vec<&'a str>) -> Self {
        Scored { miss: miss(values, &set), coverage: coverage(values, &set), set }
    }

    /// Whether it is a better set than `other`: it misses less, or as much and covers more.
    fn beats(&self, other: &Scored) -> bool {
        self.miss < other.miss || (self.miss == other.miss && self.coverage > other.coverage)
    }
}

/// `candidate` where it beats `best` (or there is none yet), else `best`.
fn keep_better<'a>(best: Option<Scored<'a>>, candidate: Scored<'a>) -> Option<Scored<'a>> {
    match best {
        Some(b) if !candidate.beats(&b) => Some(b),
        _ => Some(candidate),
    }
}

fn range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)))
}

/// The GPU UUIDs of at most `n` cards of `runs` that span them (every card where there are `n`
/// or fewer), and their coverage (the mean share of each metric's range they span).
pub fn spanning_cards(runs: &[ResultsDocument], n: usize) -> (Vec<String>, f64) {
    let values = card_values(runs);
    let mut cards: Vec<&str> = runs.iter().map(|r| r.gpu.uuid.as_str()).collect();
    cards.sort_unstable();
    cards.dedup();
    if n == 0 {
        return (Vec::new(), 0.0);
    }
    let board: BTreeMap<&str, Option<&str>> =
        runs.iter().map(|r| (r.gpu.uuid.as_str(), r.gpu.board_part_number.as_deref())).collect();
    let boards: std::collections::BTreeSet<Option<&str>> = board.values().copied().collect();
    let wanted = n.min(cards.len());
    if let Some(best) = best_set(&values, &cards, &board, wanted.min(boards.len()), wanted) {
        return (best.set.into_iter().map(str::to_owned).collect(), best.coverage);
    }
    let mut chosen: Vec<&str> = Vec::new();
    while chosen.len() < wanted {
        // Cards of boards the set lacks only, once the places left are as many as those boards.
        let missing: Vec<Option<&str>> =
            boards.iter().copied().filter(|b| !chosen.iter().any(|c| board[c] == *b)).collect();
        let only_missing = !missing.is_empty() && wanted - chosen.len() <= missing.len();
        let mut best: Option<Scored> = None;
        for c in cards.iter().copied() {
            if chosen.contains(&c) || (only_missing && !missing.contains(&board[c])) {
                continue;
            }
            let mut with = chosen.clone();
            with.push(c);
            best = keep_better(best, Scored::new(&values, with));
        }
        match best {
            Some(b) => chosen = b.set,
            None => break,
        }
    }
    let share = coverage(&values, &chosen);
    (chosen.into_iter().map(str::to_owned).collect(), share)
}

/// Most sets of cards [`spanning_cards`] tries one by one.
pub const MAX_SETS: u64 = 100_000;

/// The set of `size` of `cards` (sorted) holding `boards` board part numbers or more that misses
/// least ([`Scored::beats`]), ties to the first in lexicographic order; `None` where there are more
/// than [`MAX_SETS`] sets.
fn best_set<'a>(
    values: &CardValues,
    cards: &[&'a str],
    board: &BTreeMap<&str, Option<&str>>,
    boards: usize,
    size: usize,
) -> Option<Scored<'a>> {
    let k = cards.len();
    let sets = (0..size as u64).try_fold(1u64, |acc, i| acc.checked_mul(k as u64 - i).map(|v| v / (i + 1)))?;
    if sets > MAX_SETS || size == 0 {
        return None;
    }
    let mut index: Vec<usize> = (0..size).collect();
    let mut best: Option<Scored> = None;
    loop {
        let set: Vec<&str> = index.iter().map(|&i| cards[i]).collect();
        let held: std::collections::BTreeSet<Option<&str>> = set.iter().map(|c| board[c]).collect();
        if held.len() >= boards {
            best = keep_better(best, Scored::new(values, set));
        }
        // the next combination in lexicographic order
        let Some(i) = (0..size).rev().find(|&i| index[i] < k - size + i) else { break };
        index[i] += 1;
        for j in i + 1..size {
            index[j] = index[j - 1] + 1;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Better, ClockDomain, Metric};

    /// A run of `card` (the recorded quick run, one benchmark kept) with one metric per value.
    fn run(card: &str, values: &[f64]) -> ResultsDocument {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/h200-quick-run.json");
        let mut r = ResultsDocument::read(std::path::Path::new(path)).unwrap();
        r.benchmarks.truncate(1);
        r.gpu.uuid = card.into();
        r.benchmarks[0].metrics = values
            .iter()
            .enumerate()
            .map(|(i, v)| Metric::new(format!("m{i}"), "x", Better::Higher, ClockDomain::None, vec![*v; 5]))
            .collect();
        r
    }

    #[test]
    fn the_cards_chosen_span_both_levels_of_a_metric() {
        // Seven cards of an upper level and two of a lower one 2.7 % below, a second metric
        // that varies a little on every card: three cards hold a lower-level one.
        let mut runs = Vec::new();
        for (i, level) in [100.0, 100.1, 99.9, 100.05, 97.3, 100.0, 99.95, 97.2, 100.02].iter().enumerate() {
            runs.push(run(&format!("GPU-{i}"), &[*level, 50.0 + i as f64 * 0.01]));
        }
        let (cards, share) = spanning_cards(&runs, 3);
        assert_eq!(cards.len(), 3);
        assert!(cards.iter().any(|c| c == "GPU-4" || c == "GPU-7"), "{cards:?}");
        assert!(share > 0.8, "{share}");
        // Three boards: one card of each, and a card of the lower level among them.
        let mut boards = runs.clone();
        for (i, r) in boards.iter_mut().enumerate() {
            r.gpu.board_part_number = Some(["A", "A", "A", "B", "B", "A", "C", "A", "A"][i].into());
        }
        let (picked, _) = spanning_cards(&boards, 3);
        let of = |c: &String| boards.iter().find(|r| r.gpu.uuid == *c).unwrap().gpu.board_part_number.clone();
        let held: std::collections::BTreeSet<_> = picked.iter().map(of).collect();
        assert_eq!(held.len(), 3, "{picked:?}");
        assert!(picked.iter().any(|c| c == "GPU-4" || c == "GPU-7"), "{picked:?}");
        // More cards asked for than measured: every card, each once.
        let (all, share) = spanning_cards(&runs[..2], 3);
        assert_eq!(all.len(), 2);
        assert!((share - 1.0).abs() < 1e-12);
        // The choice depends on the runs, not on their order.
        let mut reversed = runs.clone();
        reversed.reverse();
        assert_eq!(spanning_cards(&reversed, 3).0, cards);
    }

    #[test]
    fn beyond_the_sets_tried_one_by_one_the_choice_is_greedy_and_still_spans() {
        // 90 cards (117 480 sets of three): one level 3 % below on cards 10 and 70, boards A and B.
        let template = run("GPU-x", &[100.0, 50.0]);
        let runs: Vec<ResultsDocument> = (0..90)
            .map(|i| {
                let mut r = template.clone();
                r.gpu.uuid = format!("GPU-{i:02}");
                r.gpu.board_part_number = Some(if i % 2 == 0 { "A" } else { "B" }.into());
                let level = if i == 10 || i == 70 { 97.0 } else { 100.0 + f64::from(i % 7) * 0.01 };
                for (m, v) in r.benchmarks[0].metrics.iter_mut().zip([level, 50.0 + f64::from(i) * 0.001]) {
                    *m = Metric::new(m.name.clone(), "x", Better::Higher, ClockDomain::None, vec![v; 5]);
                }
                r
            })
            .collect();
        let (cards, _) = spanning_cards(&runs, 3);
        assert_eq!(cards.len(), 3);
        assert!(cards.iter().any(|c| c == "GPU-10" || c == "GPU-70"), "{cards:?}");
        let boards: std::collections::BTreeSet<u32> =
            cards.iter().map(|c| c[4..].parse::<u32>().unwrap() % 2).collect();
        assert_eq!(boards.len(), 2, "{cards:?}");
    }
}
