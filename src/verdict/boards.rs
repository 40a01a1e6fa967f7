//! Boards (board part numbers, as NVML reads them) of the cards of a class baseline: which
//! cards a class comparison is narrowed to, and with what between-card spread.
//!
//! Two sources of cards by board: the runs the baseline keeps, and the card means the baseline
//! learned from every run it was saved from ([`learn_levels`], stored in its noise model), where
//! the boards of those cards differ on a metric. A class baseline that keeps one card of each
//! board (`baseline save --cards 3`) still judges a card of a board it learned from against the
//! cards of that board.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::level::pooled_spread;
use super::noise::ByCard;
use crate::stats::{f_upper_tail, median};

/// One metric's card means (each the mean of the card's run medians) by board part number.
pub type BoardCards = BTreeMap<String, Vec<f64>>;

/// What a class baseline learned of a metric whose levels follow the board: its cards' means by
/// board, on each basis where the boards differ on it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BoardLevels {
    /// Of the values as measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<BoardCards>,
    /// Of the clock-normalised values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normalized: Option<BoardCards>,
}

/// Fewest baseline cards of the candidate's board for a class reference split by board that
/// takes the spread of that board's own cards (boards differ in it too: two H200 cards of
/// board 692-2G520-0282-000 read stride-4 loads 3.7 % apart where four of -001 agree within
/// 0.2 %), so it needs two or more degrees of freedom.
pub(crate) const MIN_BOARD_CARDS: usize = 3;

/// Fewest baseline cards of the candidate's board for a class reference split by board that
/// takes the between-card spread pooled within every board (each card around its board's mean)
/// where the board has fewer than [`MIN_BOARD_CARDS`]: two, so that the board's mean is more
/// than one card (one card that strays would otherwise read as its board's offset). Such a split
/// also needs the boards to differ on the metric ([`boards_differ`]) and two or more degrees of
/// freedom within boards.
pub(crate) const MIN_BOARD_CARDS_POOLED: usize = 2;

/// A class reference narrowed to the cards of the candidate's board.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BoardSplit {
    /// The candidate's board part number.
    pub part_number: String,
    /// Relative between-card spread: of the board's cards in the baseline when it holds
    /// [`MIN_BOARD_CARDS`] or more of them, else of the cards within every board, each around
    /// its board's mean ([`MIN_BOARD_CARDS_POOLED`]).
    pub spread: f64,
    /// Degrees of freedom of `spread` (cards minus boards of the cards it is taken over).
    pub df: u32,
    /// Whether the cards are those the baseline learned from ([`learn_levels`]) rather than
    /// those whose runs it keeps.
    pub learned: bool,
}

/// The board part number of each card: the baseline's cards by UUID and the candidate's.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Boards {
    pub by_uuid: BTreeMap<String, Option<String>>,
    pub candidate: Option<String>,
    /// Level of the test that boards differ on a metric, for a split by board that borrows
    /// the within-board spread of other boards (the rule's confidence).
    pub confidence: f64,
    /// The cards the baseline learned its spreads from, by board ([`super::noise::NoiseModel::card_boards`]).
    pub learned: BTreeMap<String, usize>,
}

impl Boards {
    /// The candidate's board when the cards `uuids` all carry one, span two or more boards,
    /// and include [`MIN_BOARD_CARDS`] or more of the candidate's board, or
    /// [`MIN_BOARD_CARDS_POOLED`] of it with two or more degrees of freedom within boards
    /// (cards minus boards); `None` otherwise (the class is judged whole).
    pub(crate) fn split_for<'a>(&'a self, uuids: impl Iterator<Item = &'a str>) -> Option<&'a str> {
        let own = self.candidate.as_deref()?;
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for u in uuids {
            *seen.entry(self.board_of(u)?).or_default() += 1;
        }
        let within_df: usize = seen.values().map(|n| n - 1).sum();
        let own_cards = seen.get(own).copied().unwrap_or(0);
        (seen.len() >= 2 && enough_cards(own_cards, within_df)).then_some(own)
    }

    /// The class reference narrowed to the candidate's board, from the baseline's runs by card
    /// (`cards`: run medians per UUID): the board's card medians and the spread they are judged
    /// with ([`split`]). `None`: the class is judged whole.
    pub(crate) fn narrow(&self, cards: &BTreeMap<&str, Vec<f64>>) -> Option<(Vec<f64>, BoardSplit)> {
        let own = self.split_for(cards.keys().copied())?;
        let mut by_board: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        for (u, runs) in cards {
            if let (Some(b), Some(m)) = (self.board_of(u), median(runs)) {
                by_board.entry(b).or_default().push(m);
            }
        }
        split(&by_board, own, self.confidence)
    }

    /// The class reference narrowed to the candidate's board from the card means by board that
    /// the baseline learned from every run it was saved from ([`learn_levels`]); `None` where
    /// the candidate carries no board or too few cards of its board were learned from.
    pub(crate) fn narrow_learned(&self, learned: &BoardCards) -> Option<(Vec<f64>, BoardSplit)> {
        let own = self.candidate.as_deref()?;
        let by_board: BTreeMap<&str, Vec<f64>> = learned.iter().map(|(b, v)| (b.as_str(), v.clone())).collect();
        split(&by_board, own, self.confidence).map(|(values, s)| (values, BoardSplit { learned: true, ..s }))
    }

    /// The board part number of the baseline card `uuid`, where it carries one.
    pub(crate) fn board_of(&self, uuid: &str) -> Option<&str> {
        self.by_uuid.get(uuid)?.as_deref()
    }

    /// The candidate's board when every baseline card is of one other board and the baseline
    /// learned from no card of it: the baseline cannot say how boards differ (H200 boards of
    /// two part numbers read DRAM-streaming loads 2-4 % apart), so a class comparison cannot
    /// tell the board's offset from a change. A baseline of several boards shows how boards
    /// differ in its between-card spread.
    pub(crate) fn unseen(&self) -> Option<&str> {
        let own = self.candidate.as_deref()?;
        if self.learned.contains_key(own) {
            return None;
        }
        let boards: std::collections::BTreeSet<Option<&str>> = self.by_uuid.values().map(Option::as_deref).collect();
        match boards.into_iter().collect::<Vec<_>>()[..] {
            [Some(only)] if only != own => Some(own),
            _ => None,
        }
    }
}

/// Whether `own` cards of a board, among cards with `within_df` degrees of freedom within their
/// boards, are enough to judge a card of that board against: [`MIN_BOARD_CARDS`], or
/// [`MIN_BOARD_CARDS_POOLED`] with two or more degrees of freedom within boards.
fn enough_cards(own: usize, within_df: usize) -> bool {
    own >= MIN_BOARD_CARDS || (own >= MIN_BOARD_CARDS_POOLED && within_df >= 2)
}

/// The cards of board `own` among `by_board` (card values by board) and the spread they are
/// judged with: with [`MIN_BOARD_CARDS`] or more cards of the board, their own spread; with
/// [`MIN_BOARD_CARDS_POOLED`], the spread of every card around its board's mean, where the
/// boards differ on the metric ([`boards_differ`]) and that spread rests on two or more degrees
/// of freedom. `None` (the class is judged whole) with one board, or too few cards of `own`.
fn split(by_board: &BTreeMap<&str, Vec<f64>>, own: &str, confidence: f64) -> Option<(Vec<f64>, BoardSplit)> {
    let values = by_board.get(own).filter(|v| !v.is_empty())?.clone();
    if by_board.len() < 2 {
        return None;
    }
    let within_df: usize = by_board.values().map(|v| v.len().saturating_sub(1)).sum();
    let (spread, df) = if values.len() >= MIN_BOARD_CARDS {
        pooled_spread(std::iter::once(&values))?
    } else if enough_cards(values.len(), within_df) && boards_differ(by_board, confidence) {
        pooled_spread(by_board.values())?
    } else {
        return None;
    };
    Some((values, BoardSplit { part_number: own.to_string(), spread, df, learned: false }))
}

/// What a class baseline learns of how its boards differ on one metric (`cards`: run medians
/// by UUID of every card it was saved from, `board_of`: their board part numbers): the card
/// means by board, where every card carries a board, the boards differ on the metric beyond
/// their cards' scatter ([`boards_differ`] at `confidence`), and a card of some board could be
/// judged against its board ([`split`]: three cards of it, or two with two degrees of freedom
/// within boards). `None` otherwise: a class whose boards agree on a metric judges it whole.
pub(crate) fn learn_levels(
    cards: &ByCard,
    board_of: &BTreeMap<String, Option<String>>,
    confidence: f64,
) -> Option<BoardCards> {
    let mut by_board: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (uuid, runs) in cards {
        let board = board_of.get(uuid)?.as_deref()?;
        if !runs.is_empty() {
            by_board.entry(board).or_default().push(super::noise::mean(runs));
        }
    }
    let within_df: usize = by_board.values().map(|v| v.len().saturating_sub(1)).sum();
    let judged_apart = by_board.values().any(|v| enough_cards(v.len(), within_df));
    (by_board.len() >= 2 && judged_apart && boards_differ(&by_board, confidence))
        .then(|| by_board.into_iter().map(|(b, v)| (b.to_string(), v)).collect())
}

/// Whether the boards' card medians differ by more than their cards do within each board: a
/// one-way analysis of variance, `P(F(boards − 1, cards − boards) > F) < 1 − confidence`.
/// DRAM latency follows the H200 board (694 vs 670 cycles, cards of one board within 0.2 %)
/// and passes; most metrics do not, and a new card of a board the baseline holds twice is
/// judged against the class whole rather than against two cards.
fn boards_differ(by_board: &BTreeMap<&str, Vec<f64>>, confidence: f64) -> bool {
    let all: Vec<f64> = by_board.values().flatten().copied().collect();
    let (n, b) = (all.len(), by_board.len());
    if b < 2 || n <= b {
        return false;
    }
    let grand = all.iter().sum::<f64>() / n as f64;
    let (mut between, mut within) = (0.0, 0.0);
    for cards in by_board.values() {
        let mean = cards.iter().sum::<f64>() / cards.len() as f64;
        between += cards.len() as f64 * (mean - grand).powi(2);
        within += cards.iter().map(|v| (v - mean).powi(2)).sum::<f64>();
    }
    let (d1, d2) = ((b - 1) as f64, (n - b) as f64);
    if within <= 0.0 {
        return between > 0.0;
    }
    f_upper_tail((between / d1) / (within / d2), d1, d2) < 1.0 - confidence
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::level::tests::uuids;
    use crate::verdict::level::{Learned, Level, band, reference};

    #[test]
    fn a_class_with_two_boards_is_judged_against_the_candidates_board() {
        // Board X: cards A, B, C near 100; board Y: cards D, E, F near 104, one median each.
        let medians = [100.0, 100.2, 99.8, 104.0, 104.4, 104.2];
        let ids = uuids(&["A", "B", "C", "D", "E", "F"]);
        let board = |b: &str| Some(b.to_string());
        let mut boards = Boards {
            by_uuid: [("A", "X"), ("B", "X"), ("C", "X"), ("D", "Y"), ("E", "Y"), ("F", "Y")]
                .iter()
                .map(|(u, b)| (u.to_string(), board(b)))
                .collect(),
            candidate: board("Y"),
            confidence: 0.99,
            learned: BTreeMap::new(),
        };
        let r = reference(&medians, &ids, "G", &boards, None);
        assert_eq!((r.level, r.values.clone()), (Level::Class, vec![104.0, 104.4, 104.2]));
        let split = r.board.clone().unwrap();
        assert_eq!((split.part_number.as_str(), split.df), ("Y", 2));
        // The board's own cards around their mean: 0.2/104.2 twice and 0.
        let expect = (2.0 * (0.2f64 / 104.2).powi(2) / 2.0).sqrt();
        assert!((split.spread - expect).abs() < 1e-12, "{} vs {expect}", split.spread);
        let b = band(&r, 1, 0.99, 0.002, Learned::default()).unwrap();
        assert!((b.center - 104.2).abs() < 1e-9 && b.spread == split.spread && b.df == 2.0 && b.k == 3, "{b:?}");
        // Taken whole, the two boards give a spread of 2.1 %: a band several times as wide.
        let whole = reference(&medians, &ids, "G", &Boards::default(), None);
        let card = super::super::noise::Spread { sd: 0.021, df: 5.0 };
        let wide = band(&whole, 1, 0.99, 0.002, Learned { card: Some(card), ..Learned::default() }).unwrap();
        assert!(wide.half_width > 2.0 * b.half_width, "{wide:?} vs {b:?}");
        // A board the baseline does not hold, a card without a board, or one board in all:
        // the class whole. Two cards of the board: the spread within both boards (3 df).
        boards.candidate = board("Z");
        assert_eq!(reference(&medians, &ids, "G", &boards, None).board, None);
        boards.candidate = board("Y");
        assert_eq!(reference(&medians[..5], &ids[..5], "G", &boards, None).board.map(|b| b.df), Some(3));
        boards.by_uuid.insert("C".into(), None);
        assert_eq!(reference(&medians, &ids, "G", &boards, None).board, None);
        for u in ["C", "D", "E", "F"] {
            boards.by_uuid.insert(u.into(), board("X"));
        }
        boards.candidate = board("X");
        assert_eq!(reference(&medians, &ids, "G", &boards, None).board, None);
        // A card of the baseline is judged against its own runs, whatever the boards.
        assert_eq!(reference(&medians, &ids, "D", &boards, None).level, Level::SameCard);
    }

    #[test]
    fn two_cards_of_a_board_take_the_spread_within_boards_where_boards_differ() {
        let ids = uuids(&["A", "B", "D", "E", "F"]);
        let board = |b: &str| Some(b.to_string());
        let boards = Boards {
            by_uuid: [("A", "X"), ("B", "X"), ("D", "Y"), ("E", "Y"), ("F", "Y")]
                .iter()
                .map(|(u, b)| (u.to_string(), board(b)))
                .collect(),
            candidate: board("X"),
            confidence: 0.99,
            learned: BTreeMap::new(),
        };
        // DRAM latency follows the board: X near 670, Y near 694, cards within 0.1 %.
        let medians = [670.0, 670.6, 694.0, 694.4, 693.8];
        let r = reference(&medians, &ids, "G", &boards, None);
        assert_eq!(r.values, vec![670.0, 670.6]);
        let split = r.board.clone().unwrap();
        // Within X (1 df) and within Y (2 df), each card around its board's mean.
        let y = (694.0 + 694.4 + 693.8) / 3.0;
        let ss = 2.0 * (0.3f64 / 670.3).powi(2)
            + [694.0f64, 694.4, 693.8].iter().map(|v| (v / y - 1.0).powi(2)).sum::<f64>();
        assert_eq!(split.df, 3);
        assert!((split.spread - (ss / 3.0).sqrt()).abs() < 1e-12, "{split:?}");
        // Boards that do not differ beyond their cards: the class whole, five cards.
        let mixed = [100.0, 102.0, 101.0, 100.5, 101.8];
        let r = reference(&mixed, &ids, "G", &boards, None);
        assert_eq!((r.board.clone(), r.values.len()), (None, 5));
        // One card of the candidate's board is no board mean: the class whole.
        let r = reference(&medians[1..], &ids[1..], "G", &boards, None);
        assert_eq!((r.board.clone(), r.values.len()), (None, 4));
        // Two cards of each of two boards: 2 df within boards, enough.
        let r = reference(&medians[..4], &ids[..4], "G", &boards, None);
        assert_eq!(r.board.map(|b| b.df), Some(2));
    }

    /// Run medians by card, and each card's board, for [`learn_levels`].
    fn learning_set(cards: &[(&str, &str, f64)]) -> (ByCard, BTreeMap<String, Option<String>>) {
        let runs = cards.iter().map(|(u, _, v)| (u.to_string(), vec![v * 0.999, v * 1.001])).collect();
        let boards = cards.iter().map(|(u, b, _)| (u.to_string(), Some(b.to_string()))).collect();
        (runs, boards)
    }

    #[test]
    fn a_class_learns_its_boards_card_means_where_the_boards_differ() {
        // DRAM latency: board X near 670, Y near 694, cards of a board within 0.1 %.
        let dram = [("A", "X", 670.0), ("B", "X", 670.5), ("C", "X", 669.6), ("D", "Y", 694.0), ("E", "Y", 694.4)];
        let (runs, boards) = learning_set(&dram);
        let learned = learn_levels(&runs, &boards, 0.99).unwrap();
        assert_eq!(learned["X"].len(), 3);
        assert!((learned["Y"][1] - 694.4).abs() < 1e-9, "{learned:?}");
        // Boards that agree on a metric: nothing learned, the class is judged whole.
        let alike = [("A", "X", 100.0), ("B", "X", 101.0), ("C", "X", 99.0), ("D", "Y", 100.5), ("E", "Y", 99.5)];
        let (runs, b) = learning_set(&alike);
        assert_eq!(learn_levels(&runs, &b, 0.99), None);
        // A card without a board, one board only, or no board with cards enough to judge against.
        let (runs, mut b) = learning_set(&dram);
        b.insert("E".into(), None);
        assert_eq!(learn_levels(&runs, &b, 0.99), None);
        let (runs, b) = learning_set(&dram[..3]);
        assert_eq!(learn_levels(&runs, &b, 0.99), None);
        let (runs, b) = learning_set(&[dram[0], dram[1], dram[3]]);
        assert_eq!(learn_levels(&runs, &b, 0.99), None);
    }

    #[test]
    fn a_card_of_a_learned_board_is_judged_against_that_boards_cards() {
        let learned: BoardCards =
            [("X".to_string(), vec![670.0, 670.5, 669.6]), ("Y".to_string(), vec![694.0, 694.4])].into();
        // The baseline keeps one card of each board: whole, the class spreads over both boards.
        let ids = uuids(&["A", "A", "D", "D"]);
        let medians = [670.0, 670.2, 694.0, 694.2];
        let board = |b: &str| Some(b.to_string());
        let mut boards = Boards {
            by_uuid: [("A", "X"), ("D", "Y")].iter().map(|(u, b)| (u.to_string(), board(b))).collect(),
            candidate: board("X"),
            confidence: 0.99,
            learned: [("X".to_string(), 3), ("Y".to_string(), 2)].into(),
        };
        assert_eq!(reference(&medians, &ids, "G", &boards, None).board, None);
        // What it learned: the three cards of board X, with their own spread, marked as learned.
        let r = reference(&medians, &ids, "G", &boards, Some(&learned));
        assert_eq!((r.level, r.values.clone()), (Level::Class, vec![670.0, 670.5, 669.6]));
        let split = r.board.unwrap();
        assert!(split.learned && split.df == 2 && split.spread < 0.001, "{split:?}");
        // Two cards of board Y: the spread within both boards, which differ.
        boards.candidate = board("Y");
        let split = reference(&medians, &ids, "G", &boards, Some(&learned)).board.unwrap();
        assert_eq!((split.df, split.learned), (3, true));
        // A board it learned from no card of: the cards it keeps, the class whole.
        boards.candidate = board("Z");
        assert_eq!(reference(&medians, &ids, "G", &boards, Some(&learned)).board, None);
        // The candidate's own card is judged against its own runs.
        boards.candidate = board("X");
        assert_eq!(reference(&medians, &ids, "A", &boards, Some(&learned)).level, Level::SameCard);
    }

    #[test]
    fn a_board_the_baseline_learned_from_is_not_unseen() {
        let board = |b: &str| Some(b.to_string());
        let mut boards = Boards {
            by_uuid: [("A".to_string(), board("X"))].into(),
            candidate: board("Y"),
            confidence: 0.99,
            learned: BTreeMap::new(),
        };
        assert_eq!(boards.unseen(), Some("Y"));
        boards.learned.insert("Y".into(), 4);
        assert_eq!(boards.unseen(), None);
    }
}
