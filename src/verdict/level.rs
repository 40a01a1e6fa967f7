//! The hierarchical noise model: which level of variance a verdict is judged at, and the
//! prediction band of a new run (or a new card) at that level.
//!
//! Samples within one run are strongly correlated, so the unit of evidence is the run:
//!
//! - **same card**: the candidate's GPU UUID is among the baseline's runs. The reference is
//!   the median of each of that card's baseline runs; the band comes from the run-to-run
//!   spread the baseline learned (over every card's runs).
//! - **class**: the candidate's card is not in the baseline and the baseline holds two or more
//!   cards. The reference is one value per card (the mean of that card's run medians); the
//!   band comes from the spread between cards.
//!   Where the candidate carries a board part number and the baseline learned three or more
//!   cards of that board (of several boards that differ on the metric, [`super::boards`]), or
//!   keeps the runs of three or more, the reference is those cards, with their own
//!   between-card spread: boards of one class can differ in their memory parts (H200 boards
//!   692-2G520-0282-000 and -001 chase DRAM at 694 and 670 cycles, docs), and a spread taken
//!   across boards is a bimodal one that hides real changes.
//! - **other card**: the baseline holds one card and the candidate is another. Between-card
//!   spread cannot be estimated from one card, so no change is called REGRESSED or IMPROVED:
//!   it is INCONCLUSIVE, and the comparison warns.
//!
//! The band is a Student-t prediction interval ([`band`]) built from the spreads the baseline
//! learned of its runs ([`super::noise`]): the run-to-run spread on the same card, the
//! between-card spread plus the run-to-run spread in a class, each on the degrees of freedom
//! it rests on (moderated across the metrics of its family). The floor on a relative spread
//! keeps identical runs from giving a zero band; being a known minimum rather than an estimate,
//! it takes the normal quantile.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::boards::{BoardCards, BoardSplit, Boards};
use super::noise::Spread;
use crate::stats::{normal_quantile, t_quantile};

/// The level of variance a metric's verdict was judged at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// The candidate's card is in the baseline: its run medians against that card's runs.
    SameCard,
    /// The candidate's card is not in a baseline of several cards: against card medians.
    Class,
    /// The baseline holds one card and it is not the candidate's.
    OtherCard,
}

impl Level {
    /// "same card", "class", "other card".
    pub fn label(self) -> &'static str {
        match self {
            Level::SameCard => "same card",
            Level::Class => "class",
            Level::OtherCard => "other card",
        }
    }

    /// What one reference value is: "run" or "card".
    pub fn unit(self) -> &'static str {
        match self {
            Level::Class => "card",
            _ => "run",
        }
    }
}

/// The reference values of one metric: one per baseline run of the candidate's card, or one
/// per baseline card.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reference {
    pub level: Level,
    pub values: Vec<f64>,
    /// For a class reference split by board: `values` are the cards of the candidate's board,
    /// and the spread is theirs ([`BoardSplit`]).
    pub board: Option<BoardSplit>,
}

/// Picks the level for a candidate measured on `candidate_uuid`, given the baseline's run
/// medians and the UUID of each run (same length); `boards` splits a class reference by board,
/// by the card means by board the baseline learned (`learned`) where it has them for the
/// candidate's board, else by the cards whose runs it keeps.
pub(crate) fn reference(
    run_medians: &[f64],
    run_uuids: &[String],
    candidate_uuid: &str,
    boards: &Boards,
    learned: Option<&BoardCards>,
) -> Reference {
    let mut cards: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (m, u) in run_medians.iter().zip(run_uuids) {
        cards.entry(u.as_str()).or_default().push(*m);
    }
    if let Some(own) = cards.get(candidate_uuid) {
        return Reference { level: Level::SameCard, values: own.clone(), board: None };
    }
    if cards.len() >= 2 {
        if let Some((values, split)) = learned.and_then(|l| boards.narrow_learned(l)).or_else(|| boards.narrow(&cards))
        {
            return Reference { level: Level::Class, values, board: Some(split) };
        }
        let values = cards.values().map(|v| v.iter().sum::<f64>() / v.len() as f64).collect();
        return Reference { level: Level::Class, values, board: None };
    }
    Reference { level: Level::OtherCard, values: run_medians.to_vec(), board: None }
}

impl Reference {
    /// A same-card reference of `values`.
    #[cfg(test)]
    pub(crate) fn of(values: &[f64]) -> Self {
        Reference { level: Level::SameCard, values: values.to_vec(), board: None }
    }
}

/// Pooled relative standard deviation of values around their group's mean (runs around their
/// card's, cards around their board's), with its degrees of freedom (values minus groups);
/// `None` when no group has two values.
pub(super) fn pooled_spread<'a>(cards: impl Iterator<Item = &'a Vec<f64>>) -> Option<(f64, u32)> {
    let (mut ss, mut df) = (0.0, 0u32);
    for runs in cards.filter(|r| r.len() >= 2) {
        let mean = runs.iter().sum::<f64>() / runs.len() as f64;
        if mean.is_finite() && mean > 0.0 {
            ss += runs.iter().map(|v| (v / mean - 1.0).powi(2)).sum::<f64>();
            df += runs.len() as u32 - 1;
        }
    }
    (df > 0).then(|| ((ss / f64::from(df)).sqrt(), df))
}

/// The prediction band of the new side around the reference values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Band {
    /// Mean of the reference values.
    pub center: f64,
    /// Relative spread the band is built on: run-to-run on the same card, between cards in a
    /// class (0 where none was learned).
    pub spread: f64,
    /// Degrees of freedom of `spread`.
    pub df: f64,
    /// Relative half width of the band at the rule's confidence.
    pub half_width: f64,
    /// Relative standard deviation of the new side's median around the centre, without
    /// Student's quantile: what the detectable effect adds for power.
    pub sd: f64,
    /// Reference values.
    pub k: usize,
}

/// The learned spreads a band is built from ([`super::noise`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Learned {
    /// Run-to-run spread of the metric.
    pub run: Option<Spread>,
    /// Between-card spread of the metric.
    pub card: Option<Spread>,
    /// The family's learned tail quantiles of runs and cards, in units of their spread: a
    /// floor under Student's quantile where deviations are heavier-tailed than it.
    pub run_tail: Option<f64>,
    pub card_tail: Option<f64>,
    /// The largest change between two runs of one card the baseline's runs show: a floor under
    /// a same-card band ([`super::noise::Spreads::run_envelope`]).
    pub run_envelope: Option<f64>,
}

impl Learned {
    /// On the same card where the baseline learned no run-to-run spread of the metric (one run
    /// of the card and no class baseline's spreads to lend it one), the new side's own: the
    /// spread of its `new` run medians about their mean and the largest change between two of
    /// them, where it has two runs or more. Under no change both sides' runs are runs of one
    /// card, so the new side's scatter is as good a measure of how far a run strays as the
    /// baseline's; where the baseline has one of its own it stands as learned.
    pub(crate) fn or_new_runs(mut self, new: &[f64]) -> Self {
        if self.run.is_none() && new.len() >= 2 {
            let card = super::noise::ByCard::from([(String::new(), new.to_vec())]);
            self.run = pooled_spread(card.values()).map(|(sd, df)| Spread { sd, df: f64::from(df) });
            self.run_envelope = super::noise::run_envelope(&card);
        }
        self
    }

    /// Whether the run-to-run spread of the metric is unknown: nothing learned of how far a run
    /// strays from another (no run spread, no envelope). A same-card change then cannot be told
    /// from the level a process happens to land on.
    pub(crate) fn run_spread_unknown(&self) -> bool {
        self.run.is_none() && self.run_envelope.is_none()
    }
}

/// Two-sided Student quantile at `confidence` on `df` degrees of freedom (rounded down, so the
/// band is never narrower than the exact one); the normal quantile below one.
pub(super) fn quantile(confidence: f64, df: f64) -> f64 {
    let p = 0.5 + confidence / 2.0;
    if df >= 1.0 { t_quantile(p, df.floor().min(f64::from(u32::MAX)) as u32) } else { normal_quantile(p) }
}

/// The band for the median of `n` new runs around `reference`, at two-sided `confidence`:
///
/// - same card (and one other card): `t(d) · s · √(1/n + 1/k)` with the run-to-run spread `s`
///   on `d` degrees of freedom, and never less than the largest change between two runs of one
///   card that the baseline's runs show, over `√n` (a level a process lands on is not averaged
///   away by the reference runs, which often share one level; the median of `n` new runs
///   rarely lands on another);
/// - class: `√((t(d_c) · s_c)² · (1 + 1/k) + (t(d_r) · s_r)² / n)`: a new card strays from
///   the class by the between-card spread `s_c` (of the `k` card means, or of the cards of the
///   candidate's board) and its runs by the run-to-run spread `s_r`.
///
/// Every spread is floored at `floor`, taken with the normal quantile (a known minimum, not an
/// estimate). `None` when the centre is not a positive finite number.
pub(crate) fn band(reference: &Reference, n: usize, confidence: f64, floor: f64, learned: Learned) -> Option<Band> {
    let values = &reference.values;
    let k = values.len();
    if k == 0 {
        return None;
    }
    let center = values.iter().sum::<f64>() / k as f64;
    if !(center.is_finite() && center > 0.0) {
        return None;
    }
    let z = quantile(confidence, 0.0);
    let scaled = |s: Option<Spread>, tail: Option<f64>| match s {
        Some(s) => {
            let q = quantile(confidence, s.df).max(tail.unwrap_or(0.0));
            ((q * s.sd).max(z * floor), s.sd.max(floor), s.sd, s.df)
        }
        None => (z * floor, floor, 0.0, 0.0),
    };
    let n = n.max(1) as f64;
    let (run_t, run_sd, run_s, run_df) = scaled(learned.run, learned.run_tail);
    let b = match reference.level {
        Level::SameCard | Level::OtherCard => {
            let scale = (1.0 / n + 1.0 / k as f64).sqrt();
            let envelope = learned.run_envelope.unwrap_or(0.0) / n.sqrt();
            Band { center, spread: run_s, df: run_df, half_width: (run_t * scale).max(envelope), sd: run_sd * scale, k }
        }
        Level::Class => {
            let card = match &reference.board {
                Some(split) => Some(Spread { sd: split.spread, df: f64::from(split.df) }),
                None => learned.card,
            };
            let (card_t, card_sd, card_s, card_df) = scaled(card, learned.card_tail);
            let between = 1.0 + 1.0 / k as f64;
            Band {
                center,
                spread: card_s,
                df: card_df,
                half_width: (card_t * card_t * between + run_t * run_t / n).sqrt(),
                sd: (card_sd * card_sd * between + run_sd * run_sd / n).sqrt(),
                k,
            }
        }
    };
    Some(b)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// UUIDs from short names, for references built by hand.
    pub(in crate::verdict) fn uuids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_candidates_card_selects_its_own_runs() {
        let medians = [100.0, 101.0, 110.0, 111.0, 120.0];
        let ids = uuids(&["A", "A", "B", "B", "C"]);
        let r = reference(&medians, &ids, "B", &Boards::default(), None);
        assert_eq!(r.level, Level::SameCard);
        assert_eq!(r.values, vec![110.0, 111.0]);
        let r = reference(&medians, &ids, "D", &Boards::default(), None);
        assert_eq!(r.level, Level::Class);
        assert_eq!(r.values, vec![100.5, 110.5, 120.0]);
        let r = reference(&medians[..2], &ids[..2], "D", &Boards::default(), None);
        assert_eq!(r.level, Level::OtherCard);
    }

    #[test]
    fn pooled_spread_is_of_runs_around_their_cards_mean() {
        let cards = [vec![99.0, 101.0], vec![110.0, 111.0], vec![120.0]];
        let (s, df) = pooled_spread(cards.iter()).unwrap();
        let expect = (((1.0f64 / 100.0).powi(2) * 2.0 + (0.5f64 / 110.5).powi(2) * 2.0) / 2.0).sqrt();
        assert_eq!(df, 2);
        assert!((s - expect).abs() < 1e-12, "{s} vs {expect}");
        assert_eq!(pooled_spread([vec![1.0]].iter()), None);
    }

    #[test]
    fn the_new_runs_stand_in_for_a_run_spread_the_baseline_lacks() {
        // One new run and nothing learned: unknown.
        assert!(Learned::default().or_new_runs(&[100.0]).run_spread_unknown());
        // Two new runs 2 % apart: their spread on one degree of freedom, their gap the envelope.
        let l = Learned::default().or_new_runs(&[100.0, 102.0]);
        let run = l.run.unwrap();
        assert_eq!(run.df, 1.0);
        assert!((run.sd - (2.0f64 * (1.0 / 101.0f64).powi(2)).sqrt()).abs() < 1e-12, "{run:?}");
        assert!((l.run_envelope.unwrap() - 0.02).abs() < 1e-12 && !l.run_spread_unknown());
        // A spread the baseline learned stands.
        let learned = Learned { run: Some(Spread { sd: 0.005, df: 8.0 }), ..Learned::default() };
        assert_eq!(learned.or_new_runs(&[100.0, 110.0]), learned);
    }

    #[test]
    fn a_same_card_band_is_a_t_prediction_interval_of_the_learned_run_spread() {
        // 1 % run spread on 12 df, one new run against three: t(0.995, 12) · 1 % · √(1 + 1/3).
        let run = Some(Spread { sd: 0.01, df: 12.0 });
        let b = band(&Reference::of(&[100.0; 3]), 1, 0.99, 0.002, Learned { run, ..Learned::default() }).unwrap();
        let expect = 3.0545 * 0.01 * (4.0_f64 / 3.0).sqrt();
        assert!((b.half_width - expect).abs() < 1e-3 * expect, "{} vs {expect}", b.half_width);
        assert!((b.sd - 0.01 * (4.0_f64 / 3.0).sqrt()).abs() < 1e-9);
        // Nothing learned: the floor, at the normal quantile.
        let b = band(&Reference::of(&[100.0; 3]), 1, 0.99, 0.002, Learned::default()).unwrap();
        assert!((b.half_width - 2.5758 * 0.002 * (4.0_f64 / 3.0).sqrt()).abs() < 1e-4, "{}", b.half_width);
        // More new runs narrow the band.
        let three = band(&Reference::of(&[100.0; 3]), 3, 0.99, 0.002, Learned { run, ..Learned::default() }).unwrap();
        assert!(three.half_width < expect);
        // A family whose runs stray five spreads where t says three: the tail widens the band.
        let heavy = Learned { run, run_tail: Some(5.0), ..Learned::default() };
        let b = band(&Reference::of(&[100.0; 3]), 1, 0.99, 0.002, heavy).unwrap();
        assert!((b.half_width - 5.0 * 0.01 * (4.0_f64 / 3.0).sqrt()).abs() < 1e-9, "{b:?}");
        assert!(band(&Reference::of(&[0.0, 0.0]), 1, 0.99, 0.002, Learned::default()).is_none());
        assert!(band(&Reference::of(&[]), 1, 0.99, 0.002, Learned::default()).is_none());
    }

    #[test]
    fn a_same_card_band_is_never_narrower_than_the_largest_change_between_two_runs() {
        // Runs 0.9 % apart on 60 df give a band of 2.6 %; the runs learned from jumped 2.67 %.
        let run = Some(Spread { sd: 0.0078, df: 60.0 });
        let plain = band(&Reference::of(&[35.17, 35.17]), 1, 0.99, 0.002, Learned { run, ..Learned::default() });
        let learned = Learned { run, run_envelope: Some(0.0267), ..Learned::default() };
        let b = band(&Reference::of(&[35.17, 35.17]), 1, 0.99, 0.002, learned).unwrap();
        assert!(plain.unwrap().half_width < 0.0267 && b.half_width == 0.0267, "{b:?}");
        // The median of four new runs: half the envelope, below the Student band.
        let four = band(&Reference::of(&[35.17, 35.17]), 4, 0.99, 0.002, learned).unwrap();
        assert!(four.half_width > 0.0267 / 2.0 && four.half_width < 0.0267, "{four:?}");
        // Not in a class band: a card's level is the between-card spread's.
        let class = Reference { level: Level::Class, values: vec![100.0; 3], board: None };
        let c = band(&class, 1, 0.99, 0.002, Learned { run_envelope: Some(0.5), ..learned }).unwrap();
        assert!(c.half_width < 0.5, "{c:?}");
    }

    #[test]
    fn a_class_band_adds_the_card_spread_and_the_new_cards_run_noise() {
        let class = Reference { level: Level::Class, values: vec![100.0; 4], board: None };
        let learned = Learned {
            run: Some(Spread { sd: 0.005, df: 20.0 }),
            card: Some(Spread { sd: 0.01, df: 3.0 }),
            ..Learned::default()
        };
        let b = band(&class, 1, 0.99, 0.002, learned).unwrap();
        // t(0.995, 3) = 5.841, t(0.995, 20) = 2.845.
        let expect = ((5.841_f64 * 0.01).powi(2) * 1.25 + (2.845_f64 * 0.005).powi(2)).sqrt();
        assert!((b.half_width - expect).abs() < 1e-3 * expect, "{} vs {expect}", b.half_width);
        assert_eq!((b.spread, b.df, b.k), (0.01, 3.0, 4));
    }
}
