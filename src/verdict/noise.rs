//! The noise model a baseline learns from its own runs: how far runs of one card stray from
//! each other (run-to-run spread) and how far cards of the class stray from each other
//! (between-card spread), per metric, with their degrees of freedom, moderated across the
//! metrics of a family, and the run-to-run spread of each family's change.
//!
//! It replaces every measured value a configuration used to carry: a verdict needs the
//! baseline file and the policy (minimum effect, confidence), nothing else, and a GPU model the
//! code has never seen gets the same treatment as any other from the same recording workflow
//! (several runs per card, each in its own process; several cards for a class).
//!
//! # What is learned
//!
//! For every metric and basis (raw, clock-normalised), from the median of each run:
//!
//! - **run spread**: the relative standard deviation of run medians around their card's mean,
//!   pooled over every card with two or more runs, on `runs − cards` degrees of freedom;
//! - **card spread**: the relative standard deviation of the card means, on `cards − 1`
//!   degrees of freedom (it carries the run noise of those means too);
//! - **run envelope**: the largest relative change between two runs of one card, the floor of a
//!   same-card band (metrics that fall on a few levels per process jump further than their
//!   pooled spread says);
//! - **moderated** spreads: each metric's spread shrunk towards a prior fitted to the spreads of
//!   the other metrics of its family (empirical Bayes, [`crate::stats::fit_variance_prior`]),
//!   `s̃² = (d0·s0² + d·s²) / (d0 + d)` on `d0 + d` degrees of freedom: three runs or cards do
//!   not mean Student's t on two degrees of freedom (9.9 at 99 %) where thirty metrics of the
//!   family agree. A metric whose spread the prior cannot explain (`P(F(d, d0) > s²/s0²)` below
//!   `1 − confidence`) keeps its own: a heavy-tailed metric is never narrowed by quiet ones.
//!
//! A per-card baseline (one card, a few runs) takes the run spreads of the class baseline as
//! the prior of its own ([`learn`] with a prior model): the class's many runs say how runs of a
//! metric stray, the card's own runs update it. A card whose runs stray further than the class
//! prior explains keeps its own spread, on the degrees of freedom of the moderated estimate.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::boards::{self, BoardCards, BoardLevels};
use super::family::{self, Member};
use super::gate;
use super::series;
use crate::results::ResultsDocument;
use crate::stats::{MAX_PRIOR_DF, VariancePrior, f_upper_tail, fit_variance_prior};

/// A relative standard deviation and the degrees of freedom it rests on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Relative standard deviation (0.01 is 1 %).
    pub sd: f64,
    /// Degrees of freedom.
    pub df: f64,
}

impl Spread {
    fn prior(self) -> VariancePrior {
        VariancePrior { s0_sq: self.sd * self.sd, d0: self.df.clamp(1.0, MAX_PRIOR_DF), n: 1 }
    }
}

/// The spreads of one metric on one basis.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spreads {
    /// Run-to-run spread as the baseline's runs show it (`None`: no card has two runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<Spread>,
    /// Between-card spread of the card means (`None`: fewer than two cards).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card: Option<Spread>,
    /// The run-to-run spread verdicts use: moderated, or taken from the class prior.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_model: Option<Spread>,
    /// The between-card spread verdicts use: moderated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card_model: Option<Spread>,
    /// The largest relative change between two runs of one card that the baseline's runs show
    /// ([`run_envelope`]; a per-card baseline keeps the class's where it is larger): a same-card
    /// band is never narrower, so a run on a level that healthy runs of the metric take is no
    /// regression however few runs the Student band rests on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_envelope: Option<f64>,
}

/// The spreads of one metric.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct MetricNoise {
    /// Of the values as measured.
    pub raw: Spreads,
    /// Of the clock-normalised values, where every run has them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub normalized: Option<Spreads>,
}

/// What a baseline learned about one bench family.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct FamilyNoise {
    /// The prior of its metrics' run-to-run variances (`s0`, `d0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_prior: Option<Spread>,
    /// The prior of its metrics' between-card variances.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card_prior: Option<Spread>,
    /// Run-to-run spread of the family's change (the median over its metrics of each metric's
    /// log change, each run against its card's other runs): a class baseline's own, or in a
    /// per-card baseline the class's, the prior of the card's own runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_change: Option<Spread>,
    /// How far, in units of its metric's spread, a run strays from its card's other runs: the
    /// quantile at the learning confidence of every such deviation of the family's metrics
    /// ([`tail`]). Where runs stray further than Student's t says (heavy tails: samples that
    /// cycle through placements, a run that lands on other pages), bands widen to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_tail: Option<f64>,
    /// The same for a card against the other cards.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card_tail: Option<f64>,
}

/// Everything a baseline learned from its runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NoiseModel {
    /// Runs it was learned from.
    pub runs: usize,
    /// Cards (GPU UUIDs) among them.
    pub cards: usize,
    /// Runs of the class baseline whose run spreads served as the prior (per-card baselines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prior_runs: Option<usize>,
    /// Per metric, by "<benchmark id>:<metric>".
    pub metrics: BTreeMap<String, MetricNoise>,
    /// Per bench family.
    pub families: BTreeMap<String, FamilyNoise>,
    /// Per metric whose levels follow the board part number among the cards learned from
    /// (DRAM latency on H200 boards, docs): the card means by board, so that a card of a board
    /// is judged against that board's cards ([`super::boards::learn_levels`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub boards: BTreeMap<String, BoardLevels>,
    /// The cards learned from, by board part number (cards that carry one).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub card_boards: BTreeMap<String, usize>,
}

impl NoiseModel {
    /// The spreads of metric `key` on the raw or normalised basis.
    pub fn spreads(&self, key: &str, normalized: bool) -> Option<&Spreads> {
        let m = self.metrics.get(key)?;
        if normalized { m.normalized.as_ref() } else { Some(&m.raw) }
    }

    /// The run-to-run spread of `family`'s change, where learned.
    pub fn family_run_change(&self, family: &str) -> Option<Spread> {
        self.families.get(family).and_then(|f| f.run_change)
    }

    /// The card means by board of metric `key` on the raw or normalised basis, where the boards
    /// of the cards learned from differ on it.
    pub fn board_cards(&self, key: &str, normalized: bool) -> Option<&BoardCards> {
        let b = self.boards.get(key)?;
        if normalized { b.normalized.as_ref() } else { b.raw.as_ref() }
    }

    /// The learned (run, card) tail quantiles of `family` ([`FamilyNoise::run_tail`]).
    pub fn family_tails(&self, family: &str) -> (Option<f64>, Option<f64>) {
        self.families.get(family).map_or((None, None), |f| (f.run_tail, f.card_tail))
    }
}

/// Fewest samples per run for a run median (the verdicts' default).
const MIN_SAMPLES: usize = 5;

/// Learns the noise model of `runs` at two-sided `confidence`; `prior`, the model of a class
/// baseline, gives the run spreads that a per-card baseline's few runs update.
pub fn learn(runs: &[ResultsDocument], prior: Option<&NoiseModel>, confidence: f64) -> NoiseModel {
    let cards: std::collections::BTreeSet<&str> = runs.iter().map(|r| r.gpu.uuid.as_str()).collect();
    let board_of: BTreeMap<String, Option<String>> =
        runs.iter().map(|r| (r.gpu.uuid.clone(), r.gpu.board_part_number.clone())).collect();
    let all = series::collect(runs);
    // (key, family, basis, measured spreads, run medians by card)
    let mut measured: Vec<(String, String, bool, Spreads, ByCard)> = Vec::new();
    let mut members: BTreeMap<String, Vec<Member>> = BTreeMap::new();
    for s in &all {
        if s.inconsistent.is_some() {
            continue;
        }
        let p = gate::prepare(&s.runs, MIN_SAMPLES);
        let key = s.key();
        let raw = by_card(&p.run_medians, &p.run_uuids);
        measured.push((key.clone(), s.family.clone(), false, measure(&raw), raw));
        if p.normalized.is_some() && !p.normalized_run_medians.is_empty() {
            let normalized = by_card(&p.normalized_run_medians, &p.normalized_run_uuids);
            measured.push((key.clone(), s.family.clone(), true, measure(&normalized), normalized));
        }
        members.entry(s.family.clone()).or_default().push(Member {
            better: s.better,
            new: f64::NAN,
            runs: p.run_uuids.iter().cloned().zip(p.run_medians.iter().copied()).collect(),
        });
    }

    let mut model =
        NoiseModel { runs: runs.len(), cards: cards.len(), prior_runs: prior.map(|p| p.runs), ..NoiseModel::default() };
    for board in board_of.values().flatten() {
        *model.card_boards.entry(board.clone()).or_default() += 1;
    }
    // Family priors, per basis and level, fitted to the metrics' measured variances.
    let mut run_priors: BTreeMap<(String, bool), VariancePrior> = BTreeMap::new();
    let mut card_priors: BTreeMap<(String, bool), VariancePrior> = BTreeMap::new();
    let families: std::collections::BTreeSet<(String, bool)> =
        measured.iter().map(|(_, f, n, _, _)| (f.clone(), *n)).collect();
    for (family, normalized) in &families {
        let of = |pick: fn(&Spreads) -> Option<Spread>| -> Vec<(f64, f64)> {
            measured
                .iter()
                .filter(|(_, f, n, _, _)| f == family && n == normalized)
                .filter_map(|(_, _, _, s, _)| pick(s))
                .map(|s| (s.sd * s.sd, s.df))
                .collect()
        };
        if let Some(p) = fit_variance_prior(&of(|s| s.run)) {
            run_priors.insert((family.clone(), *normalized), p);
        }
        if let Some(p) = fit_variance_prior(&of(|s| s.card)) {
            card_priors.insert((family.clone(), *normalized), p);
        }
    }
    let mut run_z: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut card_z: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for (key, family, normalized, mut spreads, cards) in measured {
        let class_prior = prior.and_then(|p| p.spreads(&key, normalized)).and_then(|s| s.run_model.or(s.run));
        spreads.run_model = match class_prior {
            Some(cp) => Some(
                class_moderated(&cp.prior(), spreads.run, confidence).unwrap_or_else(|| own_scale(spreads.run, cp)),
            ),
            None => family_moderated(run_priors.get(&(family.clone(), normalized)), spreads.run, confidence),
        };
        spreads.card_model = family_moderated(card_priors.get(&(family.clone(), normalized)), spreads.card, confidence);
        let class_envelope = prior.and_then(|p| p.spreads(&key, normalized)).and_then(|s| s.run_envelope);
        spreads.run_envelope = larger(spreads.run_envelope, class_envelope);
        if !normalized {
            if let Some(s) = spreads.run_model {
                run_z.entry(family.clone()).or_default().extend(run_deviations(&cards, s.sd));
            }
            if let Some(s) = spreads.card_model {
                card_z.entry(family.clone()).or_default().extend(card_deviations(&cards, s.sd));
            }
        }
        if let Some(levels) = boards::learn_levels(&cards, &board_of, confidence) {
            let entry = model.boards.entry(key.clone()).or_default();
            if normalized {
                entry.normalized = Some(levels);
            } else {
                entry.raw = Some(levels);
            }
        }
        let entry = model.metrics.entry(key).or_default();
        if normalized {
            entry.normalized = Some(spreads);
        } else {
            entry.raw = spreads;
        }
    }
    for ((family, normalized), p) in &run_priors {
        if !normalized {
            model.families.entry(family.clone()).or_default().run_prior = Some(Spread { sd: p.s0_sq.sqrt(), df: p.d0 });
        }
    }
    for ((family, normalized), p) in &card_priors {
        if !normalized {
            model.families.entry(family.clone()).or_default().card_prior =
                Some(Spread { sd: p.s0_sq.sqrt(), df: p.d0 });
        }
    }
    for (family, z) in run_z {
        if let Some(q) = tail(z, confidence) {
            model.families.entry(family).or_default().run_tail = Some(q);
        }
    }
    for (family, z) in card_z {
        if let Some(q) = tail(z, confidence) {
            model.families.entry(family).or_default().card_tail = Some(q);
        }
    }
    // A per-card baseline takes the class's run tails where its own runs show none.
    if let Some(p) = prior {
        for (family, f) in &p.families {
            let entry = model.families.entry(family.clone()).or_default();
            entry.run_tail = larger(entry.run_tail, f.run_tail);
        }
    }
    // A class baseline's own; a per-card baseline keeps the class's, the prior its own runs
    // update when a family is judged ([`super::family`]).
    for (family, members) in &members {
        let run_change = match prior {
            Some(p) => p.family_run_change(family),
            None => family::run_change_spread(members),
        };
        if run_change.is_some() {
            model.families.entry(family.clone()).or_default().run_change = run_change;
        }
    }
    model
}

/// The larger of two learned values where both are, else the one there is.
fn larger(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// The spread `own` moderated by the family's prior, or as measured where there is no prior
/// or the prior cannot explain it; `None` without a measured spread and without a prior.
fn family_moderated(prior: Option<&VariancePrior>, own: Option<Spread>, confidence: f64) -> Option<Spread> {
    match prior {
        Some(p) => moderated(p, own, confidence).or(own),
        None => own,
    }
}

/// `own` (none: no degrees of freedom of its own) moderated by `prior`; `None` where the prior
/// cannot explain it, either way: a spread improbably large under the prior (a heavy-tailed
/// metric is not narrowed by quiet ones) or improbably small (a metric that repeats to the last
/// digit is not widened by noisy ones), each at `1 − confidence`.
fn moderated(prior: &VariancePrior, own: Option<Spread>, confidence: f64) -> Option<Spread> {
    moderate_unless(prior, own, confidence, true)
}

/// `own` moderated by `prior`, or `None` where it is improbably large under it, or improbably
/// small when `small_keeps_own`, at `1 − confidence`.
fn moderate_unless(
    prior: &VariancePrior,
    own: Option<Spread>,
    confidence: f64,
    small_keeps_own: bool,
) -> Option<Spread> {
    let (s_sq, d) = own.map_or((0.0, 0.0), |s| (s.sd * s.sd, s.df));
    if d > 0.0 {
        let upper = f_upper_tail(s_sq / prior.s0_sq, d, prior.d0);
        if upper < 1.0 - confidence || (small_keeps_own && 1.0 - upper < 1.0 - confidence) {
            return None;
        }
    }
    let (v, df) = prior.moderate(s_sq, d);
    Some(Spread { sd: v.sqrt(), df: df.min(MAX_PRIOR_DF) })
}

/// A card's run spread of a metric moderated by the class's run spread of the same metric, the
/// prior of a per-card baseline; `None` where its spread is improbably large under that prior (a
/// card whose runs of the metric stray more than the class's keeps its own scale,
/// [`own_scale`]). An improbably small
/// spread is moderated all the same: a card's two or three runs of a metric whose runs fall on a
/// few discrete levels (pages, placements) often land on one level and agree to the last digit,
/// and the class's many runs of that very metric say how far a run can stray. (Against a family
/// prior, fitted to the other metrics of the family, [`moderated`] keeps a quiet metric's own.)
fn class_moderated(prior: &VariancePrior, own: Option<Spread>, confidence: f64) -> Option<Spread> {
    moderate_unless(prior, own, confidence, false)
}

/// The run spread of a card whose runs of a metric stray more than the class prior explains:
/// the card's own spread as the scale, on the degrees of freedom of its spread moderated by the
/// class's (`d0 + d`); without a spread of its own, the class's. On its own one or two degrees
/// of freedom the band would be Student's t of 63.7 or 9.9 (at 99 %) times that spread, and a
/// 10 % change of a metric whose two runs differ by 0.5 % would go unseen: the class's many runs
/// of the metric say how run medians stray in shape, the card's own runs by how much.
fn own_scale(own: Option<Spread>, class: Spread) -> Spread {
    match own {
        Some(s) => {
            let (v, df) = class.prior().moderate(s.sd * s.sd, s.df);
            Spread { sd: s.sd.max(v.sqrt()), df: df.min(MAX_PRIOR_DF) }
        }
        None => class,
    }
}

/// Run medians by card (GPU UUID), positive and finite ones only.
pub type ByCard = BTreeMap<String, Vec<f64>>;

/// One metric's run medians by card, as the noise model reads them, and their pooled
/// run-to-run spread (relative; `None` where no card has two runs).
#[derive(Debug, Clone, PartialEq)]
pub struct CardMedians {
    /// Run medians by card.
    pub by_card: ByCard,
    /// Pooled relative spread of run medians about their card's mean.
    pub run_spread: Option<f64>,
}

/// Every metric of `runs` on the raw basis, by "<benchmark id>:<metric>": what [`learn`] learns
/// the spreads from (throttled samples left out where enough remain; a metric whose runs were
/// measured with different settings left out).
pub fn card_medians(runs: &[ResultsDocument]) -> BTreeMap<String, CardMedians> {
    series::collect(runs)
        .iter()
        .filter(|s| s.inconsistent.is_none())
        .map(|s| {
            let p = gate::prepare(&s.runs, MIN_SAMPLES);
            let by_card = by_card(&p.run_medians, &p.run_uuids);
            let run_spread = super::level::pooled_spread(by_card.values()).map(|(sd, _)| sd);
            (s.key(), CardMedians { by_card, run_spread })
        })
        .collect()
}

fn by_card(medians: &[f64], uuids: &[String]) -> ByCard {
    let mut cards: ByCard = BTreeMap::new();
    for (m, u) in medians.iter().zip(uuids) {
        if m.is_finite() && *m > 0.0 {
            cards.entry(u.clone()).or_default().push(*m);
        }
    }
    cards
}

/// Run and card spreads of one metric from its run medians by card.
fn measure(cards: &ByCard) -> Spreads {
    let run = super::level::pooled_spread(cards.values()).map(|(sd, df)| Spread { sd, df: f64::from(df) });
    let means: Vec<f64> = cards.values().map(|v| mean(v)).collect();
    let card = (means.len() >= 2).then(|| {
        let m = mean(&means);
        let var = means.iter().map(|x| (x / m - 1.0).powi(2)).sum::<f64>() / (means.len() - 1) as f64;
        Spread { sd: var.sqrt(), df: (means.len() - 1) as f64 }
    });
    Spreads { run, card, run_model: None, card_model: None, run_envelope: run_envelope(cards) }
}

/// The mean of `v` (NaN when empty): a card's mean of its run medians.
pub(super) fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The largest relative change from one run of a card to another, `max(a / b) − 1` over the
/// ordered pairs of runs of each card with two or more; `None` without such a card.
///
/// Some metrics fall on a few discrete levels per process (`shared_banks/threads=256:stride=4`
/// on H200s: 36.11 cycles in most processes, 35.17 in one in eight, every sample of a process
/// alike): a run on the other level than its card's reference runs is a jump of about three
/// pooled spreads, just beyond a Student band at 99 %, and far likelier than one in a hundred.
/// The runs of the class show the jump; the band takes it from them.
pub(super) fn run_envelope(cards: &ByCard) -> Option<f64> {
    cards
        .values()
        .filter(|r| r.len() >= 2)
        .map(|runs| {
            let (lo, hi) = runs.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
            hi / lo - 1.0
        })
        .filter(|e| e.is_finite())
        .reduce(f64::max)
}

/// Each run's relative deviation from the mean of its card's other runs, in units of the
/// spread `sd` of one run about that mean (`sd · √(1 + 1/(n − 1))`).
fn run_deviations(cards: &ByCard, sd: f64) -> Vec<f64> {
    let mut z = Vec::new();
    for runs in cards.values().filter(|r| r.len() >= 2) {
        let n = runs.len();
        for (i, x) in runs.iter().enumerate() {
            let others: Vec<f64> = runs.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, v)| *v).collect();
            let scale = sd * (1.0 + 1.0 / (n - 1) as f64).sqrt();
            if scale > 0.0 {
                z.push((x / mean(&others) - 1.0) / scale);
            }
        }
    }
    z
}

/// Each card mean's relative deviation from the mean of the other cards, in units of the
/// spread `sd` of one card about that mean (`sd · √(1 + 1/(k − 1))`).
fn card_deviations(cards: &ByCard, sd: f64) -> Vec<f64> {
    let means: Vec<f64> = cards.values().map(|v| mean(v)).collect();
    let k = means.len();
    if k < 3 {
        return Vec::new();
    }
    let scale = sd * (1.0 + 1.0 / (k - 1) as f64).sqrt();
    (0..k)
        .filter(|_| scale > 0.0)
        .map(|i| {
            let others: Vec<f64> = means.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, v)| *v).collect();
            (means[i] / mean(&others) - 1.0) / scale
        })
        .collect()
}

/// The split-conformal quantile of `|z|` at `confidence`: the value of rank
/// `⌈(N + 1) · confidence⌉` among the `N` deviations (the largest where that rank exceeds N);
/// `None` with fewer than 20.
fn tail(z: Vec<f64>, confidence: f64) -> Option<f64> {
    let mut a: Vec<f64> = z.into_iter().filter(|v| v.is_finite()).map(f64::abs).collect();
    if a.len() < MIN_TAIL_DEVIATIONS {
        return None;
    }
    a.sort_by(f64::total_cmp);
    let rank = ((a.len() + 1) as f64 * confidence).ceil() as usize;
    Some(a[rank.clamp(1, a.len()) - 1])
}

/// Fewest deviations for a family's tail quantile.
const MIN_TAIL_DEVIATIONS: usize = 20;

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn run_and_card_spreads_come_from_run_medians_by_card() {
        // Two cards 10 % apart, runs 1 % either side of their card's mean.
        let s = measure(&by_card(&[99.0, 101.0, 108.9, 111.1], &ids(&["a", "a", "b", "b"])));
        let run = s.run.unwrap();
        assert_eq!(run.df, 2.0);
        assert!((run.sd - 0.01414).abs() < 1e-4, "{run:?}");
        let card = s.card.unwrap();
        assert_eq!(card.df, 1.0);
        assert!((card.sd - (10.0 / 105.0) * std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-4, "{card:?}");
        // One run per card: no run spread; one card: no card spread.
        assert!(measure(&by_card(&[100.0, 110.0], &ids(&["a", "b"]))).run.is_none());
        assert!(measure(&by_card(&[100.0, 101.0], &ids(&["a", "a"]))).card.is_none());
    }

    #[test]
    fn the_run_envelope_is_the_largest_change_between_two_runs_of_a_card() {
        // Card a on two levels 2.67 % apart, card b's runs 1 % apart, card c one run.
        let cards = by_card(&[35.17, 36.11, 35.17, 100.0, 101.0, 50.0], &ids(&["a", "a", "a", "b", "b", "c"]));
        let e = run_envelope(&cards).unwrap();
        assert!((e - (36.11 / 35.17 - 1.0)).abs() < 1e-12, "{e}");
        assert_eq!(run_envelope(&by_card(&[1.0, 2.0], &ids(&["a", "b"]))), None);
        // A per-card baseline whose runs agree keeps the class's envelope.
        assert_eq!(measure(&by_card(&[36.11, 36.11], &ids(&["a", "a"]))).run_envelope, Some(0.0));
    }

    #[test]
    fn the_tail_quantile_is_the_conformal_rank_of_the_deviations() {
        // 99 deviations 1..=99 and one of 500: at 0.99 the rank is ceil(101 · 0.99) = 100.
        let mut z: Vec<f64> = (1..=99).map(f64::from).collect();
        z.push(-500.0);
        assert_eq!(tail(z.clone(), 0.99), Some(500.0));
        assert_eq!(tail(z, 0.9), Some(91.0));
        assert_eq!(tail(vec![1.0; 5], 0.99), None);
        // Runs 1 % apart on one card: each 1 % from the other, in units of 1 % · √2.
        let cards = by_card(&[99.0, 100.0], &ids(&["a", "a"]));
        let d = run_deviations(&cards, 0.01);
        assert!(
            (d[0] + 1.0 / 2.0_f64.sqrt()).abs() < 1e-9 && (d[1] - 1.0 / 0.99 / 2.0_f64.sqrt() * 1.0).abs() < 1e-2,
            "{d:?}"
        );
    }

    #[test]
    fn a_prior_moderates_few_degrees_of_freedom_and_spares_an_outlier() {
        let prior = VariancePrior { s0_sq: 1e-4, d0: 40.0, n: 30 };
        let m = moderated(&prior, Some(Spread { sd: 0.002, df: 2.0 }), 0.99).unwrap();
        assert_eq!(m.df, 42.0);
        assert!(m.sd > 0.009 && m.sd < 0.01, "{m:?}");
        // 8 % where the family strays by 1 %: the prior cannot explain it.
        assert!(moderated(&prior, Some(Spread { sd: 0.08, df: 2.0 }), 0.99).is_none());
        assert_eq!(family_moderated(Some(&prior), Some(Spread { sd: 0.08, df: 2.0 }), 0.99).unwrap().sd, 0.08);
        // Improbably quiet (0.01 % on 4 df where the family strays by 1 %): its own.
        assert!(moderated(&prior, Some(Spread { sd: 0.0001, df: 4.0 }), 0.99).is_none());
        // No spread of its own: the prior as it stands.
        let p = moderated(&prior, None, 0.99).unwrap();
        assert_eq!((p.sd, p.df), (0.01, 40.0));
    }

    #[test]
    fn a_card_is_moderated_by_the_class_unless_its_runs_stray_further() {
        // The class's runs of the metric stray by 1.8 % (13 df); two runs of a card agree to
        // 0.0035 % (one df, the same level): the class's spread, hardly narrowed.
        let class = VariancePrior { s0_sq: 0.018f64.powi(2), d0: 13.0, n: 1 };
        let quiet = class_moderated(&class, Some(Spread { sd: 3.5e-5, df: 1.0 }), 0.99).unwrap();
        assert_eq!(quiet.df, 14.0);
        assert!(quiet.sd > 0.017 && quiet.sd < 0.018, "{quiet:?}");
        // Against a family prior the same quiet metric keeps its own.
        assert!(moderated(&class, Some(Spread { sd: 3.5e-5, df: 1.0 }), 0.99).is_none());
        // A card whose runs stray by 15 % on 2 df: its own spread, on the degrees of freedom of
        // the moderated estimate (Student's t of 2.9 at 99 %, not 9.9).
        assert!(class_moderated(&class, Some(Spread { sd: 0.15, df: 2.0 }), 0.99).is_none());
        let stray = own_scale(Some(Spread { sd: 0.15, df: 2.0 }), Spread { sd: 0.018, df: 13.0 });
        assert_eq!((stray.sd, stray.df), (0.15, 15.0));
        // Without a spread of its own, the class's.
        assert_eq!(own_scale(None, Spread { sd: 0.018, df: 13.0 }), Spread { sd: 0.018, df: 13.0 });
    }
}
