//! Boards (board part numbers, as NVML reads them) of the cards of a class baseline: which
//! cards a class comparison is narrowed to, and with what between-card spread.

use std::collections::BTreeMap;

use super::level::pooled_spread;
use crate::stats::{f_upper_tail, median};

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
}

/// The board part number of each card: the baseline's cards by UUID and the candidate's.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Boards {
    pub by_uuid: BTreeMap<String, Option<String>>,
    pub candidate: Option<String>,
    /// Level of the test that boards differ on a metric, for a split by board that borrows
    /// the within-board spread of other boards (the rule's confidence).
    pub confidence: f64,
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
        let enough = own_cards >= MIN_BOARD_CARDS || (own_cards >= MIN_BOARD_CARDS_POOLED && within_df >= 2);
        (seen.len() >= 2 && enough).then_some(own)
    }

    /// The class reference narrowed to the candidate's board, from the baseline's runs by card
    /// (`cards`: run medians per UUID): the board's card medians and the spread they are judged
    /// with. With [`MIN_BOARD_CARDS`] or more cards of the board, their own spread; with
    /// [`MIN_BOARD_CARDS_POOLED`], the spread within every board, where the boards differ on the
    /// metric ([`boards_differ`]). `None`: the class is judged whole.
    pub(crate) fn narrow(&self, cards: &BTreeMap<&str, Vec<f64>>) -> Option<(Vec<f64>, BoardSplit)> {
        let own = self.split_for(cards.keys().copied())?;
        let mut by_board: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        for (u, runs) in cards {
            if let (Some(b), Some(m)) = (self.board_of(u), median(runs)) {
                by_board.entry(b).or_default().push(m);
            }
        }
        let values = by_board.get(own).cloned().unwrap_or_default();
        let spread = if values.len() >= MIN_BOARD_CARDS {
            pooled_spread(std::iter::once(&values))
        } else {
            pooled_spread(by_board.values()).filter(|_| boards_differ(&by_board, self.confidence))
        };
        let (spread, df) = spread.filter(|_| !values.is_empty())?;
        Some((values, BoardSplit { part_number: own.to_string(), spread, df }))
    }

    /// The board part number of the baseline card `uuid`, where it carries one.
    pub(crate) fn board_of(&self, uuid: &str) -> Option<&str> {
        self.by_uuid.get(uuid)?.as_deref()
    }

    /// The candidate's board when every baseline card is of one other board: the baseline
    /// cannot say how boards differ (H200 boards of two part numbers read DRAM-streaming loads
    /// 2-4 % apart), so a class comparison cannot tell the board's offset from a change. A
    /// baseline of several boards shows how boards differ in its between-card spread.
    pub(crate) fn unseen(&self) -> Option<&str> {
        let own = self.candidate.as_deref()?;
        let boards: std::collections::BTreeSet<Option<&str>> = self.by_uuid.values().map(Option::as_deref).collect();
        match boards.into_iter().collect::<Vec<_>>()[..] {
            [Some(only)] if only != own => Some(own),
            _ => None,
        }
    }
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
        };
        let r = reference(&medians, &ids, "G", &boards);
        assert_eq!((r.level, r.values.clone()), (Level::Class, vec![104.0, 104.4, 104.2]));
        let split = r.board.clone().unwrap();
        assert_eq!((split.part_number.as_str(), split.df), ("Y", 2));
        // The board's own cards around their mean: 0.2/104.2 twice and 0.
        let expect = (2.0 * (0.2f64 / 104.2).powi(2) / 2.0).sqrt();
        assert!((split.spread - expect).abs() < 1e-12, "{} vs {expect}", split.spread);
        let b = band(&r, 1, 0.99, 0.002, Learned::default()).unwrap();
        assert!((b.center - 104.2).abs() < 1e-9 && b.spread == split.spread && b.df == 2.0 && b.k == 3, "{b:?}");
        // Taken whole, the two boards give a spread of 2.1 %: a band several times as wide.
        let whole = reference(&medians, &ids, "G", &Boards::default());
        let card = super::super::noise::Spread { sd: 0.021, df: 5.0 };
        let wide = band(&whole, 1, 0.99, 0.002, Learned { card: Some(card), ..Learned::default() }).unwrap();
        assert!(wide.half_width > 2.0 * b.half_width, "{wide:?} vs {b:?}");
        // A board the baseline does not hold, a card without a board, or one board in all:
        // the class whole. Two cards of the board: the spread within both boards (3 df).
        boards.candidate = board("Z");
        assert_eq!(reference(&medians, &ids, "G", &boards).board, None);
        boards.candidate = board("Y");
        assert_eq!(reference(&medians[..5], &ids[..5], "G", &boards).board.map(|b| b.df), Some(3));
        boards.by_uuid.insert("C".into(), None);
        assert_eq!(reference(&medians, &ids, "G", &boards).board, None);
        for u in ["C", "D", "E", "F"] {
            boards.by_uuid.insert(u.into(), board("X"));
        }
        boards.candidate = board("X");
        assert_eq!(reference(&medians, &ids, "G", &boards).board, None);
        // A card of the baseline is judged against its own runs, whatever the boards.
        assert_eq!(reference(&medians, &ids, "D", &boards).level, Level::SameCard);
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
        };
        // DRAM latency follows the board: X near 670, Y near 694, cards within 0.1 %.
        let medians = [670.0, 670.6, 694.0, 694.4, 693.8];
        let r = reference(&medians, &ids, "G", &boards);
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
        let r = reference(&mixed, &ids, "G", &boards);
        assert_eq!((r.board.clone(), r.values.len()), (None, 5));
        // One card of the candidate's board is no board mean: the class whole.
        let r = reference(&medians[1..], &ids[1..], "G", &boards);
        assert_eq!((r.board.clone(), r.values.len()), (None, 4));
        // Two cards of each of two boards: 2 df within boards, enough.
        let r = reference(&medians[..4], &ids[..4], "G", &boards);
        assert_eq!(r.board.map(|b| b.df), Some(2));
    }
}
