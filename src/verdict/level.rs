//! The hierarchical noise model: which level of variance a verdict is judged at, and the
//! prediction band of a new run (or a new card) at that level.
//!
//! Samples within one run are strongly correlated, so the unit of evidence is the run:
//!
//! - **same card**: the candidate's GPU UUID is among the baseline's runs. The reference is
//!   the median of each of that card's baseline runs; the band comes from their run-to-run
//!   spread.
//! - **class**: the candidate's card is not in the baseline and the baseline holds two or more
//!   cards. The reference is one median per card (the median of that card's run medians); the
//!   band comes from the spread between cards.
//!   Where every baseline card and the candidate carry a board part number, the baseline holds
//!   more than one board and three or more cards of the candidate's, the reference is those
//!   cards, with their own between-card spread: boards of one class can differ in their
//!   memory parts (H200 boards 692-2G520-0282-000 and -001 chase DRAM at 694 and 670 cycles,
//!   README "Verdicts"), and a spread taken across boards is a bimodal one that hides real
//!   changes.
//! - **other card**: the baseline holds one card and the candidate is another. Between-card
//!   spread cannot be estimated from one card, so no change is called REGRESSED or IMPROVED:
//!   it is INCONCLUSIVE, and the comparison warns.
//!
//! The band is a Student-t prediction interval for the mean of `n` new observations from `k`
//! reference values: `max(t(confidence, k − 1) · s, z(confidence) · floor) · √(1/n + 1/k)`;
//! a class band adds, in quadrature, the pooled run-to-run spread of the baseline's cards (a
//! new card's run carries that noise, card medians average it away).
//! The floor on the relative spread `s` keeps a single run, or identical runs, from giving a
//! zero band; being a known minimum rather than an estimate, it takes the normal quantile.
//! With few reference values `t(k − 1)` is huge (63.7 for two, 9.9 for three at 99 %), so the
//! spread and its degrees of freedom are moderated across the metrics of one family judged
//! against the same baseline ([`moderate`]): `t(d0 + k − 1) · s̃` replaces `t(k − 1) · s`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::boards::{BoardSplit, Boards};
use crate::stats::{MAX_PRIOR_DF, VariancePrior, fit_variance_prior, median, t_quantile};

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
    /// For a class reference: the pooled relative run-to-run spread within the baseline's
    /// cards and its degrees of freedom (a new card is judged on its own runs, which carry
    /// this noise on top of the card's offset; card medians average it away).
    pub run_spread: Option<(f64, u32)>,
    /// For a same-card reference in a baseline of several cards: the relative run-to-run
    /// spread pooled over the runs of every card (each around its card's mean) and its degrees
    /// of freedom, when the other cards add to what the candidate's card alone gives. It
    /// replaces the spread of the card's own few runs: run-to-run noise is a property of the
    /// measurement more than of one card, and two runs alone give t(0.995, 1) = 63.7.
    pub pooled: Option<(f64, u32)>,
    /// For a class reference split by board: `values` are the cards of the candidate's board,
    /// and the spread is theirs ([`BoardSplit`]).
    pub board: Option<BoardSplit>,
}

/// Picks the level for a candidate measured on `candidate_uuid`, given the baseline's run
/// medians and the UUID of each run (same length); `pool` pools a same-card reference's
/// run-to-run spread over every card's runs; `boards` splits a class reference by board.
pub(crate) fn reference(
    run_medians: &[f64],
    run_uuids: &[String],
    candidate_uuid: &str,
    pool: bool,
    boards: &Boards,
) -> Reference {
    let mut cards: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (m, u) in run_medians.iter().zip(run_uuids) {
        cards.entry(u.as_str()).or_default().push(*m);
    }
    if let Some(own) = cards.get(candidate_uuid) {
        let own_df = own.len().saturating_sub(1) as u32;
        let pooled = pooled_spread(cards.values()).filter(|(_, df)| pool && *df > own_df);
        return Reference { level: Level::SameCard, values: own.clone(), run_spread: None, pooled, board: None };
    }
    if cards.len() >= 2 {
        let run_spread = pooled_spread(cards.values());
        if let Some((values, split)) = boards.narrow(&cards) {
            return Reference { level: Level::Class, values, run_spread, pooled: None, board: Some(split) };
        }
        let values = cards.values().filter_map(|v| median(v)).collect();
        return Reference { level: Level::Class, values, run_spread, pooled: None, board: None };
    }
    Reference { level: Level::OtherCard, values: run_medians.to_vec(), run_spread: None, pooled: None, board: None }
}

impl Reference {
    /// A reference of `values` with no spread from beyond them.
    #[cfg(test)]
    pub(crate) fn of(values: &[f64]) -> Self {
        Reference { level: Level::SameCard, values: values.to_vec(), run_spread: None, pooled: None, board: None }
    }

    /// The scope of the overrides' measured spreads that serve this reference.
    pub(crate) fn scope(&self) -> super::Scope {
        match (self.level, &self.board) {
            (Level::Class, Some(_)) => super::Scope::ClassByBoard,
            (Level::Class, None) => super::Scope::Class,
            _ => super::Scope::SameCard,
        }
    }

    /// A spread that replaces that of `values`: the pooled run-to-run spread of a same-card
    /// reference, or the within-board spread of a class reference split by board.
    pub(crate) fn spread_beyond_values(&self) -> Option<(f64, u32)> {
        self.pooled.or(self.board.as_ref().map(|b| (b.spread, b.df)))
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

/// A metric's spread moderated by its family's prior (see [`moderate`]): the spread that
/// replaces the measured one in the band and the degrees of freedom of its Student-t quantile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Moderated {
    pub spread: f64,
    pub df: f64,
}

/// Moderates the relative spreads of the metrics of one family compared at one level, all
/// from the same baseline (the empirical-Bayes rule of [`crate::stats::fit_variance_prior`]).
///
/// `metrics` holds, per metric, its measured relative spread, the degrees of freedom of that
/// spread (`k − 1` for `k` reference values, more for a pooled run-to-run spread) and the floor
/// of its band. The metrics with a spread of one or more degrees of freedom split in two:
/// - those whose spread exceeds their floor: the prior `s0²`, `d0` is fitted to their
///   variances;
/// - those within their floor: the floor describes them, a prior of the median floor on their
///   summed degrees of freedom (a metric that repeats to the last digit says nothing about one
///   that does not, but many within their floor say the floor is the family's spread there).
///   When fewer than three metrics exceed their floor, this prior serves them too.
///
/// Each metric then gets `s̃² = (d0·s0² + d·s²) / (d0 + d)` on `d0 + d` degrees of freedom from
/// its prior, and a metric without a spread (one reference value) the fitted prior's `s0` on
/// `d0` (else the floor's); the band never falls below the floor. A metric whose own variance
/// is improbably large under its prior (`P(F(d, d0) > s²/s0²) < 1 − confidence`) is not
/// described by it and keeps its own spread and `t(d)` (`None`). All `None` when fewer than
/// three metrics have a spread.
///
/// Before, metrics within their floor and families without a fitted prior kept
/// `t(k − 1) · s`: with two reference values `t(0.995, 1) · s = 63.7 · s`, so 0.1 % of
/// run-to-run spread became a 7.7 % band.
pub(crate) fn moderate(metrics: &[(f64, f64, f64)], confidence: f64) -> Vec<Option<Moderated>> {
    let repeated = |m: &&(f64, f64, f64)| m.1 >= 1.0;
    let above = |m: &(f64, f64, f64)| m.0 > m.2;
    if metrics.iter().filter(repeated).count() < 3 {
        return vec![None; metrics.len()];
    }
    let fit: Vec<(f64, f64)> = metrics.iter().filter(repeated).filter(|m| above(m)).map(|m| (m.0 * m.0, m.1)).collect();
    let fitted = fit_variance_prior(&fit);
    let floor_prior = |members: &[&(f64, f64, f64)]| -> Option<VariancePrior> {
        let mut floors: Vec<f64> = members.iter().map(|m| m.2).filter(|f| *f > 0.0).collect();
        if floors.is_empty() {
            return None;
        }
        floors.sort_by(f64::total_cmp);
        let floor = floors[floors.len() / 2];
        let evidence: f64 = members.iter().map(|m| m.1).sum();
        Some(VariancePrior { s0_sq: floor * floor, d0: evidence.clamp(1.0, MAX_PRIOR_DF), n: members.len() })
    };
    let within: Vec<&(f64, f64, f64)> = metrics.iter().filter(repeated).filter(|m| !above(m)).collect();
    let all: Vec<&(f64, f64, f64)> = metrics.iter().filter(repeated).collect();
    let within_prior = floor_prior(&within);
    let above_prior = fitted.or_else(|| floor_prior(&all));
    metrics
        .iter()
        .map(|m| {
            let prior = match (m.1 >= 1.0, above(m)) {
                (true, true) => above_prior,
                (true, false) => within_prior,
                // no spread of its own: the fitted prior, else the floor's
                (false, _) => fitted.or(within_prior).or(above_prior),
            }?;
            by_prior(&prior, m.0, m.1, confidence)
        })
        .collect()
}

/// The spread `spread` on `df` degrees of freedom moderated by `prior`; `None` when the prior
/// cannot explain it (`P(F(df, d0) > s²/s0²) < 1 − confidence`): such a metric keeps its own
/// spread and `t(df)`.
pub(crate) fn by_prior(prior: &VariancePrior, spread: f64, df: f64, confidence: f64) -> Option<Moderated> {
    let s_sq = spread * spread;
    if df > 0.0 && prior.upper_tail(s_sq, df) < 1.0 - confidence {
        return None;
    }
    let (v, df) = prior.moderate(s_sq, df);
    Some(Moderated { spread: v.sqrt(), df })
}

/// The prediction band of the new side around the reference values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Band {
    /// Mean of the reference values.
    pub center: f64,
    /// Relative standard deviation the band is built on: of the reference values, or the
    /// pooled run-to-run spread of a same-card reference (0 with one value and none pooled).
    pub spread: f64,
    /// Degrees of freedom of `spread`.
    pub df: f64,
    /// Relative half width of the band: `max(t · spread, z · floor) · √(1/n + 1/k)`.
    pub half_width: f64,
    /// Reference values.
    pub k: usize,
}

/// The band for the mean of `n` new values around `reference`, at two-sided `confidence`,
/// with the relative spread floored at `floor`; the class run-to-run spread of the reference
/// adds the noise of `runs` new runs to a class band. `None` when the centre is not a positive
/// finite number.
pub(crate) fn band(
    reference: &Reference,
    n: usize,
    confidence: f64,
    floor: f64,
    runs: usize,
    moderated: Option<Moderated>,
) -> Option<Band> {
    let values = &reference.values;
    let k = values.len();
    if k == 0 {
        return None;
    }
    let center = values.iter().sum::<f64>() / k as f64;
    if !(center.is_finite() && center > 0.0) {
        return None;
    }
    let (spread, df) = match reference.spread_beyond_values() {
        Some((s, df)) => (s, f64::from(df)),
        None if k >= 2 => {
            let var = values.iter().map(|v| (v - center).powi(2)).sum::<f64>() / (k - 1) as f64;
            (var.sqrt() / center, (k - 1) as f64)
        }
        None => (0.0, 0.0),
    };
    // The measured spread carries the uncertainty of its degrees of freedom (Student's t); the
    // floor is a known minimum, taken with the normal quantile.
    let p = 0.5 + confidence / 2.0;
    let z = t_quantile(p, 1_000_000);
    // Degrees of freedom rounded down: the band is never narrower than the exact one.
    let t_of = |df: f64| if df >= 1.0 { t_quantile(p, df.floor().min(f64::from(u32::MAX)) as u32) } else { z };
    let scale = (1.0 / n.max(1) as f64 + 1.0 / k as f64).sqrt();
    let main = match moderated {
        Some(m) => (t_of(m.df) * m.spread).max(z * floor),
        None => (t_of(df) * spread).max(z * floor),
    } * scale;
    let run_term =
        reference.run_spread.map_or(0.0, |(s, df)| t_quantile(p, df.max(1)) * s / (runs.max(1) as f64).sqrt());
    let half_width = main.hypot(run_term);
    Some(Band { center, spread, df, half_width, k })
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
        let r = reference(&medians, &ids, "B", true, &Boards::default());
        assert_eq!(r.level, Level::SameCard);
        assert_eq!(r.values, vec![110.0, 111.0]);
        // Its run-to-run spread is pooled with A's runs (2 df against its own 1); C has one run.
        let (s, df) = r.pooled.unwrap();
        assert_eq!(df, 2);
        let expect = ((2.0 * (0.5f64 / 100.5).powi(2) + 2.0 * (0.5f64 / 110.5).powi(2)) / 2.0).sqrt();
        assert!((s - expect).abs() < 1e-12, "{s} vs {expect}");
        // Alone, or with cards of single runs, a card pools nothing beyond its own runs.
        assert_eq!(reference(&medians[2..], &ids[2..], "B", true, &Boards::default()).pooled, None);
        // Not asked for: the card's own runs only.
        assert_eq!(reference(&medians, &ids, "B", false, &Boards::default()).pooled, None);
        let r = reference(&medians, &ids, "D", true, &Boards::default());
        assert_eq!(r.level, Level::Class);
        assert_eq!(r.values, vec![100.5, 110.5, 120.0]);
        // Runs of A and B around their card means: (0.5/100.5)² · 2 + (0.5/110.5)² · 2, 2 df.
        let (s, df) = r.run_spread.unwrap();
        let expect = ((2.0 * (0.5f64 / 100.5).powi(2) + 2.0 * (0.5f64 / 110.5).powi(2)) / 2.0).sqrt();
        assert_eq!(df, 2);
        assert!((s - expect).abs() < 1e-12, "{s} vs {expect}");
        let r = reference(&medians[..2], &ids[..2], "D", true, &Boards::default());
        assert_eq!(r.level, Level::OtherCard);
    }

    #[test]
    fn band_is_a_t_prediction_interval_with_a_floor() {
        // Five runs with a 1 % relative standard deviation: t(0.995, 4) = 4.604.
        let runs = [98.585_786_437_6, 101.414_213_562_4, 100.0, 100.0, 100.0];
        let b = band(&Reference::of(&runs), 1, 0.99, 0.001, 1, None).unwrap();
        assert!((b.center - 100.0).abs() < 1e-6);
        assert!((b.spread - 0.01).abs() < 1e-4, "{}", b.spread);
        let expect = 4.604 * 0.01 * (1.0 + 0.2_f64).sqrt();
        assert!((b.half_width - expect).abs() < 1e-3 * expect, "{} vs {expect}", b.half_width);
        // Identical runs and single runs do not give a zero band: the floor, at z = 2.576.
        let b = band(&Reference::of(&[100.0; 4]), 1, 0.99, 0.002, 1, None).unwrap();
        assert_eq!(b.spread, 0.0);
        assert!((b.half_width - 2.5758 * 0.002 * 1.25_f64.sqrt()).abs() < 1e-4, "{}", b.half_width);
        // Two values that differ: t(0.995, 1) = 63.66 times their spread.
        let b = band(&Reference::of(&[99.0, 101.0]), 1, 0.99, 0.002, 1, None).unwrap();
        let expect = 63.657 * 2.0_f64.sqrt() / 100.0 * 1.5_f64.sqrt();
        assert!((b.half_width - expect).abs() < 1e-3 * expect, "{} vs {expect}", b.half_width);
        let b = band(&Reference::of(&[100.0]), 1, 0.99, 0.002, 1, None).unwrap();
        assert!((b.half_width - 2.5758 * 0.002 * 2.0_f64.sqrt()).abs() < 1e-4, "{}", b.half_width);
        // More new runs narrow the band.
        assert!(
            band(&Reference::of(&runs), 3, 0.99, 0.001, 3, None).unwrap().half_width
                < band(&Reference::of(&runs), 1, 0.99, 0.001, 1, None).unwrap().half_width
        );
        assert!(band(&Reference::of(&[0.0, 0.0]), 1, 0.99, 0.002, 1, None).is_none());
        assert!(band(&Reference::of(&[]), 1, 0.99, 0.002, 1, None).is_none());
        // A class band adds the run-to-run noise of the new card's run: √(a² + (t·s)²).
        let class =
            band(&Reference { run_spread: Some((0.01, 10)), ..Reference::of(&[100.0; 3]) }, 1, 0.99, 0.002, 1, None)
                .unwrap();
        let a = 2.5758 * 0.002 * (1.0 + 1.0 / 3.0_f64).sqrt();
        let expect = a.hypot(3.169_3 * 0.01);
        assert!((class.half_width - expect).abs() < 1e-3 * expect, "{} vs {expect}", class.half_width);
    }

    #[test]
    fn a_pooled_run_spread_replaces_the_spread_of_two_runs() {
        // Two runs of the card 2 % apart; 12 df of other cards' runs say 0.5 %.
        let own = Reference::of(&[99.0, 101.0]);
        let pooled = Reference { pooled: Some((0.005, 12)), ..own.clone() };
        let alone = band(&own, 1, 0.99, 0.002, 1, None).unwrap();
        let b = band(&pooled, 1, 0.99, 0.002, 1, None).unwrap();
        assert_eq!((b.spread, b.df, b.k), (0.005, 12.0, 2));
        // t(0.995, 12) = 3.055 times 0.5 %, for one new run against two: √1.5.
        let expect = 3.055 * 0.005 * 1.5_f64.sqrt();
        assert!((b.half_width - expect).abs() < 1e-3 * expect, "{} vs {expect}", b.half_width);
        assert!(alone.half_width > 20.0 * b.half_width, "{alone:?}");
    }

    #[test]
    fn a_measured_prior_moderates_and_lets_an_unexplained_spread_go() {
        // A 1 % run spread measured on 19 df; two runs 0.8 % apart (1 df) come out near 1 %.
        let prior = VariancePrior { s0_sq: 1e-4, d0: 19.0, n: 1 };
        let m = by_prior(&prior, 0.008, 1.0, 0.99).unwrap();
        assert_eq!(m.df, 20.0);
        assert!((m.spread - ((19e-4 + 0.64e-4) / 20.0_f64).sqrt()).abs() < 1e-12, "{m:?}");
        // 6 % against 1 %: P(F(1, 19) > 36) is far below 1 %, the prior does not describe it.
        assert_eq!(by_prior(&prior, 0.06, 1.0, 0.99), None);
        // No spread of its own: the prior as it stands.
        let single = by_prior(&prior, 0.0, 0.0, 0.99).unwrap();
        assert_eq!((single.spread, single.df), (0.01, 19.0));
    }

    #[test]
    fn moderation_borrows_from_agreeing_metrics_and_spares_outliers() {
        // Thirty metrics of one family, two runs left (k = 3), spreads around 0.4 %; one metric
        // at 5 %; one within its floor; one with a single reference value.
        let mut m: Vec<(f64, f64, f64)> = (0..30).map(|i| (0.003 + 0.0002 * f64::from(i % 10), 2.0, 0.002)).collect();
        m.push((0.05, 2.0, 0.002));
        m.push((0.001, 2.0, 0.002));
        m.push((0.0, 0.0, 0.002));
        let out = moderate(&m, 0.99);
        let typical = out[0].unwrap();
        assert!(typical.df > 10.0, "{typical:?}");
        // Near the family's typical spread (the log-variance fit corrects for χ² draws, so evenly
        // spaced spreads come out a little above their geometric mean).
        assert!(typical.spread > 0.003 && typical.spread < 0.007, "{typical:?}");
        assert_eq!(out[30], None, "a spread the prior cannot explain keeps its own band");
        // A spread within its floor is moderated towards the floor, on the degrees of freedom
        // of the metrics within theirs (here one metric, k − 1 = 2, plus its own 2).
        let within = out[31].unwrap();
        assert!(within.spread > 0.001 && within.spread < 0.002 && within.df == 4.0, "{within:?}");
        let single = out[32].unwrap();
        assert!(single.spread > 0.003 && single.df > 10.0, "{single:?}");
        // The moderated band of a typical metric is far narrower than t(0.995, 2) · s.
        let refs = [100.0, 100.4, 99.6];
        let plain = band(&Reference::of(&refs), 1, 0.99, 0.002, 1, None).unwrap();
        let moderated = band(&Reference::of(&refs), 1, 0.99, 0.002, 1, Some(typical)).unwrap();
        assert!(moderated.half_width < plain.half_width / 2.0, "{moderated:?} vs {plain:?}");
        // Too few metrics with two or more reference values: nothing is moderated.
        assert!(moderate(&m[..2], 0.99).iter().all(Option::is_none));
        assert!(
            moderate(&[(0.003, 0.0, 0.002), (0.003, 0.0, 0.002), (0.003, 2.0, 0.002)], 0.99)
                .iter()
                .all(Option::is_none)
        );
    }

    #[test]
    fn two_reference_values_within_the_floor_keep_a_band_near_the_floor() {
        // A family of four metrics on two runs each, spreads 0.1-0.27 % against a 0.2 % floor.
        let m: Vec<(f64, f64, f64)> = [0.001, 0.0024, 0.0011, 0.0027].iter().map(|&s| (s, 1.0, 0.002)).collect();
        let out = moderate(&m, 0.99);
        for (i, o) in out.iter().enumerate() {
            let o = o.unwrap_or_else(|| panic!("metric {i} not moderated"));
            let b = band(&Reference::of(&[100.0, 100.0 * (1.0 + m[i].0)]), 1, 0.99, 0.002, 1, Some(o)).unwrap();
            // t(0.995, 1) · s would be 63.7 · s: up to 21 % here.
            assert!(b.half_width < 0.02, "metric {i}: {b:?}");
        }
    }
}
