//! The family level of a class comparison: a bench family judged as a whole.
//!
//! Healthy cards of one class differ on single metrics by more than a regression worth
//! catching: H100 atomics on two threads per address span 12 % over 45 cards, H200 atomics on a
//! word per thread fall in groups 4 % apart. But the differences are the card's and they are
//! metric-specific: a card slow on one atomic is fast on another (README, "Verdicts"), and the
//! median over a family's metrics of each metric's change spreads by 0.1-0.2 % between cards.
//! A software change that slows a family moves that median by its whole size.
//!
//! The family's change is the median, over its metrics judged against the class, of each
//! metric's log change in the bad direction against the mean of the baseline's card medians
//! (the class whole, never narrowed to a board). Its band comes from the baseline's own cards:
//! every run of every card is judged the same way against the other cards (leave one card out),
//! and the root mean square of those changes, floored, times Student's t on cards − 1 degrees
//! of freedom is the band. A family whose change lies beyond the minimum effect and that band
//! is REGRESSED (or IMPROVED) as a whole; its metrics that moved beyond the minimum effect the
//! same way then are too, although each alone lies within the spread of healthy cards, since
//! the family shows that this card moved. A change of single metrics does not move the median
//! and is judged by each metric's own band, as before.
//!
//! Which families are judged so is the rule's ([`super::Rule::family_verdicts`], atomics by
//! default): the idea needs card differences that cancel over the family. Where they do not
//! (on H200 the DRAM-streaming access patterns move together on a card, and a card with slow
//! DRAM reads them all 2-3 % low), a family verdict is a false alarm in waiting.

use std::collections::BTreeMap;

use serde::Serialize;

use super::Verdict;
use crate::results::Better;
use crate::stats::{median, t_quantile};

/// Fewest metrics of a family judged against the class for the family to be judged whole.
pub(crate) const MIN_FAMILY_METRICS: usize = 5;

/// Fewest baseline cards for a family's band (two degrees of freedom).
pub(crate) const MIN_FAMILY_CARDS: usize = 3;

/// One metric of a family in a class comparison.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Member {
    /// Which direction is good.
    pub better: Better,
    /// The new card's value (median of its run medians).
    pub new: f64,
    /// The baseline's run medians, each with its run's GPU UUID.
    pub runs: Vec<(String, f64)>,
}

impl Member {
    /// Median of each baseline card's run medians, by GPU UUID.
    fn cards(&self) -> BTreeMap<&str, f64> {
        let mut by_card: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        for (u, v) in &self.runs {
            by_card.entry(u.as_str()).or_default().push(*v);
        }
        by_card.into_iter().filter_map(|(u, v)| Some((u, median(&v)?))).collect()
    }

    /// Log change in the bad direction of the new card against the mean of the card medians.
    fn change(&self) -> Option<f64> {
        let cards = self.cards();
        let center = cards.values().sum::<f64>() / cards.len() as f64;
        let c = worse_log(self.better, self.new / center);
        c.is_finite().then_some(c)
    }
}

/// The verdict on a bench family as a whole, in a class comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FamilyVerdict {
    /// Bench family.
    pub family: String,
    /// REGRESSED, IMPROVED, INCONCLUSIVE (beyond the minimum effect, within the band) or PASS.
    pub verdict: Verdict,
    /// Median over the family's metrics of each metric's change in the bad direction, as a
    /// factor minus one: +0.05 is 5 % worse (latency up, bandwidth down).
    pub worse_by: f64,
    /// The threshold: the minimum effect, or the band when wider.
    pub threshold: f64,
    /// Root mean square of the reference cards' leave-one-card-out family changes (log).
    pub spread: f64,
    /// Metrics the median is taken over.
    pub metrics: usize,
    /// Reference cards the spread comes from.
    pub cards: usize,
    /// One line: why.
    pub reason: String,
}

impl FamilyVerdict {
    /// Whether the family as a whole moved beyond its threshold, worse or better.
    pub fn decided(&self) -> bool {
        matches!(self.verdict, Verdict::Regressed | Verdict::Improved)
    }

    /// "atomics as a whole 5.10 % worse, beyond ±2.0 %": the reason without its evidence.
    pub fn summary(&self) -> String {
        format!(
            "{} as a whole {:.2} % {}, {} ±{:.1} %",
            self.family,
            self.worse_by.abs() * 100.0,
            if self.worse_by >= 0.0 { "worse" } else { "better" },
            if self.decided() { "beyond" } else { "within" },
            self.threshold * 100.0
        )
    }
}

/// Log change of `ratio` in the bad direction: positive is worse.
pub(crate) fn worse_log(better: Better, ratio: f64) -> f64 {
    match better {
        Better::Lower => ratio.ln(),
        Better::Higher => -ratio.ln(),
    }
}

/// Judges `family` from its `members`, with the minimum effect `minimum`, two-sided
/// `confidence` and the relative spread floored at `floor`. `None` when fewer than
/// [`MIN_FAMILY_METRICS`] metrics or [`MIN_FAMILY_CARDS`] cards with leave-one-out changes
/// take part.
pub(crate) fn judge(
    family: &str,
    members: &[Member],
    minimum: f64,
    confidence: f64,
    floor: f64,
) -> Option<FamilyVerdict> {
    let changes: Vec<f64> = members.iter().filter_map(Member::change).collect();
    if changes.len() < MIN_FAMILY_METRICS {
        return None;
    }
    let change = median(&changes)?;
    let by_card = leave_one_card_out(members);
    if by_card.len() < MIN_FAMILY_CARDS {
        return None;
    }
    let mean_square: f64 = by_card.values().map(|c| c.iter().map(|d| d * d).sum::<f64>() / c.len() as f64).sum::<f64>()
        / by_card.len() as f64;
    let spread = mean_square.sqrt();
    let t = t_quantile(0.5 + confidence / 2.0, (by_card.len() - 1) as u32);
    let z = t_quantile(0.5 + confidence / 2.0, 1_000_000);
    let half_width = (t * spread).max(z * floor).exp_m1();
    let threshold = minimum.max(half_width);
    let worse_by = change.exp_m1();
    let verdict = if worse_by > threshold {
        Verdict::Regressed
    } else if worse_by < 1.0 / (1.0 + threshold) - 1.0 {
        Verdict::Improved
    } else if worse_by.abs() > minimum {
        Verdict::Inconclusive
    } else {
        Verdict::Pass
    };
    let reason = format!(
        "{} as a whole {:.2} % {} (median of {} metrics) against {} cards, whose runs spread by {:.2} % from the others: {} ±{:.1} %",
        family,
        worse_by.abs() * 100.0,
        if worse_by >= 0.0 { "worse" } else { "better" },
        changes.len(),
        by_card.len(),
        spread * 100.0,
        if matches!(verdict, Verdict::Regressed | Verdict::Improved) { "beyond" } else { "within" },
        threshold * 100.0
    );
    Some(FamilyVerdict {
        family: family.to_string(),
        verdict,
        worse_by,
        threshold,
        spread,
        metrics: changes.len(),
        cards: by_card.len(),
        reason,
    })
}

/// Every baseline run of every card judged as a new card against the other cards: per card,
/// the median over metrics of each run's log change in the bad direction. Metrics measured on
/// fewer than [`MIN_FAMILY_CARDS`] cards take no part; a run counts where
/// [`MIN_FAMILY_METRICS`] metrics give it a change.
fn leave_one_card_out(members: &[Member]) -> BTreeMap<&str, Vec<f64>> {
    // card -> run index within the card -> changes over metrics
    let mut runs: BTreeMap<&str, BTreeMap<usize, Vec<f64>>> = BTreeMap::new();
    for m in members {
        let cards = m.cards();
        if cards.len() < MIN_FAMILY_CARDS {
            continue;
        }
        for card in cards.keys() {
            let others: Vec<f64> = cards.iter().filter(|(u, _)| *u != card).map(|(_, v)| *v).collect();
            let center = others.iter().sum::<f64>() / others.len() as f64;
            if !(center.is_finite() && center > 0.0) {
                continue;
            }
            let own = m.runs.iter().filter(|(u, _)| u == card).map(|(_, v)| *v);
            for (i, value) in own.enumerate() {
                let change = worse_log(m.better, value / center);
                if change.is_finite() {
                    runs.entry(card).or_default().entry(i).or_default().push(change);
                }
            }
        }
    }
    runs.into_iter()
        .map(|(card, by_run)| {
            let changes: Vec<f64> =
                by_run.values().filter(|c| c.len() >= MIN_FAMILY_METRICS).filter_map(|c| median(c)).collect();
            (card, changes)
        })
        .filter(|(_, c)| !c.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A family of `n` metrics on `cards` cards of two runs each: metric `i` of card `c` reads
    /// `100 · (1 + offset(c, i))`, runs 0.1 % either side; the new card reads `new(i)`.
    fn family(n: usize, cards: usize, offset: impl Fn(usize, usize) -> f64, new: impl Fn(usize) -> f64) -> Vec<Member> {
        (0..n)
            .map(|i| {
                let runs = (0..cards)
                    .flat_map(|c| {
                        let v = 100.0 * (1.0 + offset(c, i));
                        [(format!("GPU-{c}"), v * 0.999), (format!("GPU-{c}"), v * 1.001)]
                    })
                    .collect();
                Member { better: Better::Higher, new: new(i), runs }
            })
            .collect()
    }

    /// Card offsets of a few percent that differ by metric and cancel over the family: card
    /// `c` is +s on half the metrics and −s on the others, s up to 6 %.
    fn grouped(c: usize, i: usize) -> f64 {
        let s = 0.01 * (c % 7) as f64;
        if (i + c).is_multiple_of(2) { s } else { -s }
    }

    #[test]
    fn a_shift_of_the_whole_family_is_caught_where_single_metrics_spread_more() {
        // Each metric alone spreads by several percent between the eight cards. A new card like
        // card 3 (±3 % by metric), 5 % slower on every metric:
        let members = family(12, 8, grouped, |i| 0.95 * 100.0 * (1.0 + grouped(3, i)));
        let v = judge("atomics", &members, 0.02, 0.99, 0.002).unwrap();
        assert_eq!(v.verdict, Verdict::Regressed, "{v:?}");
        assert!((v.worse_by - 0.0526).abs() < 0.02, "{v:?}");
        assert_eq!((v.metrics, v.cards), (12, 8));
        // The same card unshifted: within the band, PASS.
        let members = family(12, 8, grouped, |i| 100.0 * (1.0 + grouped(3, i)));
        let v = judge("atomics", &members, 0.02, 0.99, 0.002).unwrap();
        assert_eq!(v.verdict, Verdict::Pass, "{v:?}");
        // 5 % faster: IMPROVED.
        let members = family(12, 8, grouped, |i| 1.05 * 100.0 * (1.0 + grouped(3, i)));
        assert_eq!(judge("atomics", &members, 0.02, 0.99, 0.002).unwrap().verdict, Verdict::Improved);
    }

    #[test]
    fn a_few_metrics_that_move_do_not_move_the_family() {
        // Three of twelve metrics 10 % slower: the median stays.
        let members = family(12, 8, |_, _| 0.0, |i| if i < 3 { 90.0 } else { 100.0 });
        let v = judge("atomics", &members, 0.02, 0.99, 0.002).unwrap();
        assert_eq!(v.verdict, Verdict::Pass, "{v:?}");
    }

    #[test]
    fn cards_whose_families_differ_widen_the_band() {
        // Cards differ as a whole by up to ±3 %: a 3 % shift is not beyond their spread.
        let whole = |c: usize, _: usize| 0.01 * (c as f64 - 3.5) * 0.85;
        let members = family(12, 8, whole, |_| 97.0);
        let v = judge("latency", &members, 0.02, 0.99, 0.002).unwrap();
        assert!(v.threshold > 0.05, "{v:?}");
        assert_eq!(v.verdict, Verdict::Inconclusive, "{v:?}");
    }

    #[test]
    fn too_few_metrics_or_cards_give_no_family_verdict() {
        assert!(judge("atomics", &family(4, 8, grouped, |_| 95.0), 0.02, 0.99, 0.002).is_none());
        assert!(judge("atomics", &family(12, 2, grouped, |_| 95.0), 0.02, 0.99, 0.002).is_none());
    }

    #[test]
    fn direction_follows_the_metric() {
        assert!(worse_log(Better::Lower, 1.05) > 0.0);
        assert!(worse_log(Better::Higher, 1.05) < 0.0);
        assert!((worse_log(Better::Higher, 0.95) - -(0.95f64.ln())).abs() < 1e-15);
    }
}
