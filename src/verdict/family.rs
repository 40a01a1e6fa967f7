//! The family level of a comparison: a bench family judged as a whole.
//!
//! Healthy cards of one class differ on single metrics by more than a regression worth
//! catching: H100 atomics on two threads per address span 12 % over 45 cards, H200 atomics on a
//! word per thread fall in groups 4 % apart. But the differences are the card's and they are
//! metric-specific: a card slow on one atomic is fast on another, and the
//! median over a family's metrics of each metric's change spreads by 0.1-0.2 % between cards.
//! A software change that slows a family moves that median by its whole size.
//!
//! The family's change is the median, over its metrics, of each metric's log change in the
//! bad direction against its reference: in a class, the mean of the baseline's card medians
//! (the class whole, never narrowed to a board); on the same card, the mean of the card's
//! baseline runs. Its band comes from the baseline's own runs judged the same way: in a class,
//! every run of every card against the other cards (leave one card out), the root mean square
//! of those changes times Student's t on cards − 1 degrees of freedom; on the same card, every
//! run of a card of two or more runs against its card's other runs, moderated, in a per-card
//! baseline, by the spread of that change the class baseline learned ([`super::noise`]), which
//! a baseline of one run of the card needs. A family whose change lies beyond the minimum
//! effect and that band is REGRESSED (or
//! IMPROVED) as a whole; its metrics that moved beyond the minimum effect the same way then are
//! too, although each alone lies within its own band, since the family shows that this card
//! moved. A change of single metrics does not move the median and is judged by each metric's
//! own band, as before. On the same card the cards' differences do not enter; there the family
//! lends the narrow band of a median over many metrics to metrics whose runs stray by 1-2 %.
//! A family verdict only adds: a metric beyond its own band keeps its own verdict whatever the
//! family did, so a minority of a family that moved the other way is never turned around.
//!
//! Which families are judged so is the rule's ([`super::Rule::family_verdicts`], atomics by
//! default): the idea needs card differences that cancel over the family. Where they do not
//! (on H200 the DRAM-streaming access patterns move together on a card, and a card with slow
//! DRAM reads them all 2-3 % low), a family verdict is a false alarm in waiting.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Level, Verdict};
use crate::results::Better;
use crate::stats::{median, normal_quantile, t_quantile};

/// Fewest metrics of a family judged at one level for the family to be judged whole.
pub(crate) const MIN_FAMILY_METRICS: usize = 5;

/// Fewest baseline cards for a family's band in a class comparison (two degrees of freedom).
pub(crate) const MIN_FAMILY_CARDS: usize = 3;

/// One metric of a family.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Member {
    /// Which direction is good.
    pub better: Better,
    /// The new side's value (median of its run medians).
    pub new: f64,
    /// The baseline's run medians, each with its run's GPU UUID.
    pub runs: Vec<(String, f64)>,
}

impl Member {
    /// Run medians of each baseline card, by GPU UUID.
    fn by_card(&self) -> BTreeMap<&str, Vec<f64>> {
        let mut by_card: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        for (u, v) in &self.runs {
            by_card.entry(u.as_str()).or_default().push(*v);
        }
        by_card
    }

    /// Median of each baseline card's run medians, by GPU UUID.
    fn cards(&self) -> BTreeMap<&str, f64> {
        self.by_card().into_iter().filter_map(|(u, v)| Some((u, median(&v)?))).collect()
    }

    /// Log change in the bad direction of the new side against its reference: the mean of the
    /// card medians (class), or of the runs of the new side's card (same card).
    fn change(&self, level: Level, candidate: &str) -> Option<f64> {
        let reference: Vec<f64> = match level {
            Level::SameCard => self.runs.iter().filter(|(u, _)| u == candidate).map(|(_, v)| *v).collect(),
            _ => self.cards().into_values().collect(),
        };
        let center = reference.iter().sum::<f64>() / reference.len() as f64;
        let c = worse_log(self.better, self.new / center);
        c.is_finite().then_some(c)
    }
}

/// What a family's verdict is judged with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct FamilyRule<'a> {
    /// Same card or class ([`Level::OtherCard`] gives no family verdict).
    pub level: Level,
    /// The new side's GPU UUID.
    pub candidate: &'a str,
    /// Minimum effect.
    pub minimum: f64,
    /// Two-sided level of the band.
    pub confidence: f64,
    /// Floor of the spread, taken with the normal quantile.
    pub floor: f64,
    /// Run-to-run spread of a family's change and its degrees of freedom that a class baseline
    /// learned, the prior of the spread a per-card baseline's own runs show on the same card.
    pub run_prior: Option<(f64, f64)>,
}

/// The verdict on a bench family as a whole.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FamilyVerdict {
    /// Bench family.
    pub family: String,
    /// The level it was judged at: same card (run-to-run) or class (between cards).
    pub level: Level,
    /// REGRESSED, IMPROVED, INCONCLUSIVE (beyond the minimum effect, within the band) or PASS.
    pub verdict: Verdict,
    /// Median over the family's metrics of each metric's change in the bad direction, as a
    /// factor minus one: +0.05 is 5 % worse (latency up, bandwidth down).
    pub worse_by: f64,
    /// The threshold: the minimum effect, or the band when wider.
    pub threshold: f64,
    /// Root mean square of the family changes of the baseline's own runs, each left out in turn
    /// (of its card's other runs on the same card, of the other cards in a class), log; on the
    /// same card moderated by the measured prior.
    pub spread: f64,
    /// Degrees of freedom of `spread`.
    pub df: f64,
    /// Metrics the median is taken over.
    pub metrics: usize,
    /// Reference values: runs of the new side's card, or baseline cards.
    pub reference_n: usize,
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
        format!("{}, {}", self.change_text(), self.limit_text())
    }

    /// "atomics as a whole 5.10 % worse".
    fn change_text(&self) -> String {
        let way = if self.worse_by >= 0.0 { "worse" } else { "better" };
        format!("{} as a whole {:.2} % {way}", self.family, self.worse_by.abs() * 100.0)
    }

    /// "beyond ±2.0 %" or "within ±2.0 %".
    fn limit_text(&self) -> String {
        format!("{} ±{:.1} %", if self.decided() { "beyond" } else { "within" }, self.threshold * 100.0)
    }
}

/// Log change of `ratio` in the bad direction: positive is worse.
pub(crate) fn worse_log(better: Better, ratio: f64) -> f64 {
    match better {
        Better::Lower => ratio.ln(),
        Better::Higher => -ratio.ln(),
    }
}

/// Judges `family` from its `members` under `rule`. `None` when fewer than
/// [`MIN_FAMILY_METRICS`] metrics take part, or no spread of two or more degrees of freedom
/// (with the prior's) can be had: on the same card, runs of the baseline's cards; in a class,
/// [`MIN_FAMILY_CARDS`] cards.
pub(crate) fn judge(family: &str, members: &[Member], rule: &FamilyRule) -> Option<FamilyVerdict> {
    let changes: Vec<f64> = members.iter().filter_map(|m| m.change(rule.level, rule.candidate)).collect();
    if changes.len() < MIN_FAMILY_METRICS {
        return None;
    }
    let change = median(&changes)?;
    let (spread, df, reference_n, evidence) = match rule.level {
        Level::Class => {
            let by_card = leave_one_card_out(members);
            if by_card.len() < MIN_FAMILY_CARDS {
                return None;
            }
            let ms = by_card.values().map(|c| mean_square(c)).sum::<f64>() / by_card.len() as f64;
            let k = by_card.len();
            (
                ms.sqrt(),
                (k - 1) as f64,
                k,
                format!("{k} cards, whose runs spread by {:.2} % from the others", ms.sqrt() * 100.0),
            )
        }
        Level::SameCard => {
            let own = leave_one_run_out(members);
            let d_own: f64 = own.values().map(|c| c.len().saturating_sub(1) as f64).sum();
            let all: Vec<f64> = own.values().flatten().copied().collect();
            let s_own_sq = if all.is_empty() { 0.0 } else { mean_square(&all) };
            let (s_sq, df) = match rule.run_prior {
                Some((s0, d0)) => ((d0 * s0 * s0 + d_own * s_own_sq) / (d0 + d_own), d0 + d_own),
                None => (s_own_sq, d_own),
            };
            if df < 2.0 {
                return None;
            }
            let runs = members.first().map_or(0, |m| m.runs.iter().filter(|(u, _)| u == rule.candidate).count());
            (
                s_sq.sqrt(),
                df,
                runs,
                format!(
                    "{runs} run{} of this card; runs of a card spread by {:.2} % ({df:.0} df)",
                    if runs == 1 { "" } else { "s" },
                    s_sq.sqrt() * 100.0
                ),
            )
        }
        Level::OtherCard => return None,
    };
    let p = 0.5 + rule.confidence / 2.0;
    let t = t_quantile(p, df.floor().min(f64::from(u32::MAX)) as u32);
    let z = normal_quantile(p);
    let half_width = (t * spread).max(z * rule.floor).exp_m1();
    let threshold = rule.minimum.max(half_width);
    let worse_by = change.exp_m1();
    let mut v = FamilyVerdict {
        family: family.to_string(),
        level: rule.level,
        verdict: verdict_by(worse_by, threshold, rule.minimum),
        worse_by,
        threshold,
        spread,
        df,
        metrics: changes.len(),
        reference_n,
        reason: String::new(),
    };
    v.reason = format!("{} (median of {} metrics) against {evidence}: {}", v.change_text(), v.metrics, v.limit_text());
    Some(v)
}

/// The run-to-run spread of the family change of `members` (each run of a card against its
/// card's other runs), pooled over the cards, and its degrees of freedom; `None` without a card
/// of two runs.
pub(crate) fn run_change_spread(members: &[Member]) -> Option<super::noise::Spread> {
    let own = leave_one_run_out(members);
    let df: f64 = own.values().map(|c| c.len().saturating_sub(1) as f64).sum();
    let all: Vec<f64> = own.values().flatten().copied().collect();
    (df >= 1.0 && !all.is_empty()).then(|| super::noise::Spread { sd: mean_square(&all).sqrt(), df })
}

/// The verdict on a family worse by `worse_by` (a factor minus one), as
/// [`super::decide`]'s rule for a metric: REGRESSED beyond the threshold, IMPROVED beyond its
/// inverse, INCONCLUSIVE beyond the minimum effect. Compared in the factor-minus-one form the
/// family's change is computed in: `1 + worse_by` rounds, and a change of exactly the minimum
/// effect (the calibration's 2 % shift) would fall on the other side.
fn verdict_by(worse_by: f64, threshold: f64, minimum: f64) -> Verdict {
    if worse_by > threshold {
        Verdict::Regressed
    } else if worse_by < 1.0 / (1.0 + threshold) - 1.0 {
        Verdict::Improved
    } else if worse_by.abs() > minimum {
        Verdict::Inconclusive
    } else {
        Verdict::Pass
    }
}

fn mean_square(v: &[f64]) -> f64 {
    v.iter().map(|d| d * d).sum::<f64>() / v.len() as f64
}

/// Per card (GPU UUID), the family change of each of its runs: the median over metrics of the
/// run's log change in the bad direction against `reference(runs by card, card, run index)`,
/// for metrics whose runs by card are `eligible`; a run counts where [`MIN_FAMILY_METRICS`]
/// metrics give it a change.
fn family_changes<'a>(
    members: &'a [Member],
    reference: impl Fn(&BTreeMap<&'a str, Vec<f64>>, &str, usize) -> Option<f64>,
    eligible: impl Fn(&BTreeMap<&'a str, Vec<f64>>) -> bool,
) -> BTreeMap<&'a str, Vec<f64>> {
    // card -> run index within the card -> changes over metrics
    let mut runs: BTreeMap<&str, BTreeMap<usize, Vec<f64>>> = BTreeMap::new();
    for m in members {
        let by_card = m.by_card();
        if !eligible(&by_card) {
            continue;
        }
        for (card, values) in &by_card {
            for (i, value) in values.iter().enumerate() {
                let Some(center) = reference(&by_card, card, i).filter(|c| c.is_finite() && *c > 0.0) else { continue };
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

/// Every baseline run of every card judged as a new card against the other cards' medians
/// (metrics measured on [`MIN_FAMILY_CARDS`] cards or more).
fn leave_one_card_out(members: &[Member]) -> BTreeMap<&str, Vec<f64>> {
    family_changes(
        members,
        |by_card, card, _| {
            let others: Vec<f64> = by_card.iter().filter(|(u, _)| **u != card).filter_map(|(_, v)| median(v)).collect();
            Some(others.iter().sum::<f64>() / others.len() as f64)
        },
        |by_card| by_card.len() >= MIN_FAMILY_CARDS,
    )
}

/// Every baseline run of a card with two or more runs judged as a new run of that card against
/// the mean of the card's other runs. Runs are matched across metrics by their order.
fn leave_one_run_out(members: &[Member]) -> BTreeMap<&str, Vec<f64>> {
    family_changes(
        members,
        |by_card, card, i| {
            let others: Vec<f64> =
                by_card.get(card)?.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, v)| *v).collect();
            (!others.is_empty()).then(|| others.iter().sum::<f64>() / others.len() as f64)
        },
        |_| true,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A class comparison at the defaults of the rule.
    const CLASS: FamilyRule<'static> = FamilyRule {
        level: Level::Class,
        candidate: "GPU-new",
        minimum: 0.02,
        confidence: 0.99,
        floor: 0.002,
        run_prior: None,
    };

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
        let v = judge("atomics", &members, &CLASS).unwrap();
        assert_eq!(v.verdict, Verdict::Regressed, "{v:?}");
        assert!((v.worse_by - 0.0526).abs() < 0.02, "{v:?}");
        assert_eq!((v.metrics, v.reference_n, v.level), (12, 8, Level::Class));
        // The same card unshifted: within the band, PASS.
        let members = family(12, 8, grouped, |i| 100.0 * (1.0 + grouped(3, i)));
        let v = judge("atomics", &members, &CLASS).unwrap();
        assert_eq!(v.verdict, Verdict::Pass, "{v:?}");
        // 5 % faster: IMPROVED.
        let members = family(12, 8, grouped, |i| 1.05 * 100.0 * (1.0 + grouped(3, i)));
        assert_eq!(judge("atomics", &members, &CLASS).unwrap().verdict, Verdict::Improved);
    }

    #[test]
    fn a_few_metrics_that_move_do_not_move_the_family() {
        // Three of twelve metrics 10 % slower: the median stays.
        let members = family(12, 8, |_, _| 0.0, |i| if i < 3 { 90.0 } else { 100.0 });
        let v = judge("atomics", &members, &CLASS).unwrap();
        assert_eq!(v.verdict, Verdict::Pass, "{v:?}");
    }

    #[test]
    fn cards_whose_families_differ_widen_the_band() {
        // Cards differ as a whole by up to ±3 %: a 3 % shift is not beyond their spread.
        let whole = |c: usize, _: usize| 0.01 * (c as f64 - 3.5) * 0.85;
        let members = family(12, 8, whole, |_| 97.0);
        let v = judge("latency", &members, &CLASS).unwrap();
        assert!(v.threshold > 0.05, "{v:?}");
        assert_eq!(v.verdict, Verdict::Inconclusive, "{v:?}");
    }

    #[test]
    fn too_few_metrics_or_cards_give_no_family_verdict() {
        assert!(judge("atomics", &family(4, 8, grouped, |_| 95.0), &CLASS).is_none());
        assert!(judge("atomics", &family(12, 2, grouped, |_| 95.0), &CLASS).is_none());
    }

    #[test]
    fn direction_follows_the_metric() {
        assert!(worse_log(Better::Lower, 1.05) > 0.0);
        assert!(worse_log(Better::Higher, 1.05) < 0.0);
        assert!((worse_log(Better::Higher, 0.95) - -(0.95f64.ln())).abs() < 1e-15);
    }

    #[test]
    fn on_the_same_card_the_band_is_the_runs_of_the_baseline_cards() {
        let same = FamilyRule { level: Level::SameCard, candidate: "GPU-3", ..CLASS };
        // Card 3 of the eight (two runs each, 0.1 % either side), 5 % slower on every metric.
        let members = family(12, 8, grouped, |i| 0.95 * 100.0 * (1.0 + grouped(3, i)));
        let v = judge("atomics", &members, &same).unwrap();
        assert_eq!((v.verdict, v.level, v.reference_n), (Verdict::Regressed, Level::SameCard, 2), "{v:?}");
        // Eight cards of two runs: 8 df of runs left out of their card's other run.
        assert_eq!(v.df, 8.0);
        let members = family(12, 8, grouped, |i| 1.003 * 100.0 * (1.0 + grouped(3, i)));
        assert_eq!(judge("atomics", &members, &same).unwrap().verdict, Verdict::Pass);
        // One card of one run shows no run-to-run spread: a measured prior stands in for it.
        let one: Vec<Member> = family(12, 1, grouped, |i| 0.95 * 100.0 * (1.0 + grouped(0, i)))
            .into_iter()
            .map(|mut m| {
                m.runs.truncate(1);
                m
            })
            .collect();
        let alone = FamilyRule { candidate: "GPU-0", ..same };
        assert!(judge("atomics", &one, &alone).is_none());
        let v = judge("atomics", &one, &FamilyRule { run_prior: Some((0.0014, 111.0)), ..alone }).unwrap();
        assert_eq!((v.verdict, v.df), (Verdict::Regressed, 111.0), "{v:?}");
    }
}
