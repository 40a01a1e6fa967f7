//! The verdict rule's parameters: minimum effect, prediction band, validity gate.
//!
//! # Why these defaults
//!
//! Samples within one run are extremely tight (0.01 % spread for a pointer chase) and strongly
//! correlated, while two runs on the same card differ by more (a new process gets other
//! physical pages, another L2 slice mapping, another clock history) and two cards of a class
//! by more again. A test on samples therefore flags noise on nearly every metric. The rule
//! asks instead: "is the new run's median further from the baseline's runs (or cards) than
//! runs (or cards) stray from each other, and by more than a change worth reporting?"
//!
//! - [`Rule::threshold`] (default 2 %): the minimum effect, the smallest relative change that
//!   can be called REGRESSED or IMPROVED.
//! - [`Rule::confidence`] (default 0.99) and [`Rule::spread_floor`] (default 0.2 %): the
//!   threshold widens to the half width of a two-sided Student-t prediction interval of the
//!   new median from the `k` reference values (baseline runs of the same card, or baseline
//!   cards): `max(t(confidence, df) · spread, z · floor) · √(1/n + 1/k)`. The floor keeps one
//!   run, or identical runs, from giving a zero band. `spread` and `df` are the metric's own
//!   (`k − 1` degrees of freedom) moderated by an empirical-Bayes prior fitted, at verdict
//!   time, to the spreads of the other metrics of its family in the same baseline
//!   (`s̃² = (d0·s0² + (k−1)·s²) / (d0 + k − 1)` on `d0 + k − 1` degrees of freedom; see
//!   `level::moderate`): two or three runs or cards no longer mean t(0.995, 1) = 63.7 or
//!   t(0.995, 2) = 9.9 where the family's metrics agree, while a noisy metric keeps a wide band.
//!   Metrics with a measured `run_spread` / `card_spread` override keep their own spread.
//! - [`Rule::card_spread_floor`] (default 1 %): the floor of the between-card spread in class
//!   comparisons; an override's `card_spread` sets it per metric, from the measured spread.
//! - [`Rule::noise_factor`] (default 1): multiplies that band (an override can widen one
//!   metric's band without raising its minimum effect).
//!
//! Per-metric overrides of the threshold and the noise factor come from `gpubench.toml`.

use regex::Regex;
use serde::Serialize;

use super::Level;
use crate::stats::{MAX_PRIOR_DF, VariancePrior};

/// Parameters of the verdict rule (defaults documented on each field and in the README).
#[derive(Debug, Clone, Serialize)]
pub struct Rule {
    /// Minimum effect: smallest relative change of the median called REGRESSED or IMPROVED
    /// (default 0.02).
    pub threshold: f64,
    /// Multiplies the prediction band that widens the threshold (default 1).
    pub noise_factor: f64,
    /// Two-sided level of the run-level prediction interval (default 0.99).
    pub confidence: f64,
    /// Floor of the relative standard deviation of the reference runs or cards (default
    /// 0.002).
    pub spread_floor: f64,
    /// Floor of the relative spread between cards for class comparisons (default 0.01): two or
    /// three cards that happen to agree do not prove that every card does.
    pub card_spread_floor: f64,
    /// Relative difference of the effective clocks of the two sides above which clock-normalised
    /// values are compared when both sides have them (default 0.01).
    pub clock_tolerance: f64,
    /// Fewest samples per side for a statistical verdict (default 5).
    pub min_samples: usize,
    /// Facts that differ are REGRESSED only when both inferences are at least this confident
    /// (default 0.9); otherwise INCONCLUSIVE.
    pub min_fact_confidence: f64,
    /// Judge a card against its runs in a baseline of several cards with the run-to-run spread
    /// pooled over every card's runs (default false: the card's own runs). More degrees of
    /// freedom, so more power, but a card whose runs stray more than the others' (heavy-tailed
    /// metrics) can then raise false alarms (README, "Verdicts").
    pub pool_run_spread: bool,
    /// Seed kept for reproducible resampling by callers (the run-level rule itself is
    /// deterministic).
    pub seed: u64,
    /// Per-metric overrides, first match wins.
    pub overrides: Vec<MetricOverride>,
    /// Metrics whose samples step through placements (copies of their target) that every run
    /// covers in the same order, as a regular expression on `"<benchmark id>:<metric>"`: their
    /// scatter repeats run after run, and a run's median is judged against one or two runs of
    /// its card with the sampling error of what does not repeat (`verdict::pattern`). Default
    /// none.
    pub cycled_samples: Option<KeyPattern>,
    /// Bench families judged as a whole in class comparisons, as a regular expression on the
    /// family name (`verdict::family`; default `^atomics$`): where healthy cards differ on
    /// single metrics but those differences cancel over the family, a family that moved as a
    /// whole carries the verdict of its metrics that moved the same way. `None`: no family is.
    pub family_verdicts: Option<KeyPattern>,
    /// Bench families judged as a whole against the card's own runs (default
    /// `^(atomics|access_patterns)$`): families whose change, the median over their metrics,
    /// strays little from run to run while some of their metrics stray by 1-3 %.
    pub same_card_family_verdicts: Option<KeyPattern>,
    /// Measured run-to-run spread of a family's change (the median over its metrics of each
    /// metric's log change, one run left out of its card's others) and its degrees of freedom:
    /// the prior of the spread a baseline's own runs show, for families judged as a whole on
    /// the same card, where a baseline of one or two runs of the card shows none. Default none.
    pub family_run_spread: Option<(f64, f64)>,
}

/// A regular expression on metric keys (`"<benchmark id>:<metric>"`) or family names, kept
/// with the text it was written as.
#[derive(Debug, Clone, Serialize)]
pub struct KeyPattern {
    /// The regular expression as written.
    #[serde(rename = "match")]
    pub pattern: String,
    #[serde(skip)]
    regex: Regex,
}

impl KeyPattern {
    /// Compiles `pattern`; the error is one line.
    pub fn new(pattern: &str) -> Result<Self, String> {
        let regex = compile(pattern)?;
        Ok(KeyPattern { pattern: pattern.to_string(), regex })
    }

    /// Whether `key` matches.
    pub fn is_match(&self, key: &str) -> bool {
        self.regex.is_match(key)
    }
}

/// The bench families judged as a whole in class comparisons by default
/// ([`Rule::family_verdicts`]).
pub const DEFAULT_FAMILY_VERDICTS: &str = "^atomics$";

/// The bench families judged as a whole on the same card by default
/// ([`Rule::same_card_family_verdicts`]).
pub const DEFAULT_SAME_CARD_FAMILY_VERDICTS: &str = "^(atomics|access_patterns)$";

/// A per-metric change of the rule, selected by a regular expression on
/// `"<benchmark id>:<metric>"`, e.g. `"latency/.*/32MiB:.*"`.
#[derive(Debug, Clone, Serialize)]
pub struct MetricOverride {
    /// The regular expression as written.
    #[serde(rename = "match")]
    pub pattern: String,
    /// Threshold for matching metrics.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// Noise factor for matching metrics.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise_factor: Option<f64>,
    /// Floor of the between-card spread for matching metrics (class comparisons).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card_spread: Option<f64>,
    /// Floor of the run-to-run spread for matching metrics, from their measured A/A spread: a
    /// baseline of one or a few runs cannot show how far runs of this metric stray.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_spread: Option<f64>,
    /// Degrees of freedom `run_spread` rests on (runs minus cards of the runs that measured
    /// it). With it the measured spread is a prior that the baseline's own runs update, as the
    /// family prior does for other metrics: `t(run_spread_df + k − 1)` instead of `t(k − 1)`,
    /// which is 63.7 for two runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_spread_df: Option<f64>,
    /// Degrees of freedom `card_spread` rests on (cards minus one), likewise for class
    /// comparisons.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card_spread_df: Option<f64>,
    /// `card_spread` was measured over cards of different boards (board part numbers) and
    /// describes how boards differ: a class reference split by board (README, "Verdicts")
    /// takes its own within-board spread instead.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub card_spread_across_boards: bool,
    /// Cards of the class fall in groups on this metric (a few cards 5-9 % from the rest, in
    /// every run): no band of a class spread tells a card of a rare group from a regression,
    /// so a class comparison is INCONCLUSIVE at most; the card's own runs judge it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cards_in_groups: bool,
    /// Applies only to GPU classes whose key ("nvidia-h200-cc90-132sm-140gib") contains this;
    /// `None` applies to every class.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_class: Option<String>,
    #[serde(skip)]
    regex: Option<Regex>,
}

impl MetricOverride {
    /// Compiles `pattern`; the error is one line.
    pub fn new(pattern: &str, threshold: Option<f64>, noise_factor: Option<f64>) -> Result<Self, String> {
        let regex = compile(pattern)?;
        Ok(MetricOverride {
            pattern: pattern.to_string(),
            threshold,
            noise_factor,
            card_spread: None,
            run_spread: None,
            run_spread_df: None,
            card_spread_df: None,
            card_spread_across_boards: false,
            cards_in_groups: false,
            gpu_class: None,
            regex: Some(regex),
        })
    }

    fn matches(&self, key: &str) -> bool {
        self.regex.as_ref().is_some_and(|r| r.is_match(key))
    }

    /// The override's card spread and its degrees of freedom, where they apply at `scope`.
    fn card_spread_at(&self, scope: Scope) -> Option<(f64, Option<f64>)> {
        let applies = match scope {
            Scope::SameCard => false,
            Scope::Class => true,
            Scope::ClassByBoard => !self.card_spread_across_boards,
        };
        applies.then_some(self.card_spread.map(|s| (s, self.card_spread_df))).flatten()
    }
}

/// The level a measured spread of an override serves: a card's own runs, a class taken whole,
/// or a class reference narrowed to the candidate's board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Run-to-run: `run_spread`.
    SameCard,
    /// Between the cards of a class: `card_spread`.
    Class,
    /// Between the cards of one board: `card_spread` unless `card_spread_across_boards`.
    ClassByBoard,
}

impl Default for Rule {
    fn default() -> Self {
        Rule {
            threshold: 0.02,
            noise_factor: 1.0,
            confidence: 0.99,
            spread_floor: 0.002,
            card_spread_floor: 0.01,
            clock_tolerance: 0.01,
            min_samples: 5,
            min_fact_confidence: 0.9,
            pool_run_spread: false,
            seed: 0,
            overrides: Vec::new(),
            cycled_samples: None,
            family_verdicts: Some(KeyPattern::new(DEFAULT_FAMILY_VERDICTS).expect("a valid pattern")),
            same_card_family_verdicts: Some(
                KeyPattern::new(DEFAULT_SAME_CARD_FAMILY_VERDICTS).expect("a valid pattern"),
            ),
            family_run_spread: None,
        }
    }
}

impl Rule {
    /// The rule for comparisons of the GPU class `class_key`: without the overrides that name
    /// another class.
    pub fn for_class(&self, class_key: &str) -> Rule {
        let mut r = self.clone();
        r.overrides.retain(|o| o.gpu_class.as_deref().is_none_or(|c| class_key.contains(c)));
        r
    }

    /// Threshold and noise factor for the metric `key` ("<benchmark id>:<metric>").
    pub fn for_metric(&self, key: &str) -> (f64, f64) {
        let mut threshold = self.threshold;
        let mut noise_factor = self.noise_factor;
        if let Some(o) = self.overrides.iter().find(|o| o.matches(key)) {
            threshold = o.threshold.unwrap_or(threshold);
            noise_factor = o.noise_factor.unwrap_or(noise_factor);
        }
        (threshold, noise_factor)
    }

    /// Floor of the between-card spread of the metric `key` in class comparisons (`by_board`:
    /// against the cards of the candidate's board): the first matching override's
    /// `card_spread` where it applies, else [`Rule::card_spread_floor`].
    pub fn card_floor(&self, key: &str, by_board: bool) -> f64 {
        let scope = if by_board { Scope::ClassByBoard } else { Scope::Class };
        self.overrides
            .iter()
            .find(|o| o.matches(key))
            .and_then(|o| o.card_spread_at(scope))
            .map_or(self.card_spread_floor, |(s, _)| s)
    }

    /// Floor of the run-to-run spread of the metric `key` where fewer than three reference runs
    /// (or cards) leave it unmeasured: the first matching override's `run_spread`, else
    /// [`Rule::spread_floor`] (never below it).
    pub fn run_floor(&self, key: &str) -> f64 {
        let o = self.overrides.iter().find(|o| o.matches(key)).and_then(|o| o.run_spread);
        o.unwrap_or(self.spread_floor).max(self.spread_floor)
    }

    /// Whether the samples of the metric `key` step through placements in the same order in
    /// every run ([`Rule::cycled_samples`]).
    pub fn cycled_samples(&self, key: &str) -> bool {
        self.cycled_samples.as_ref().is_some_and(|c| c.is_match(key))
    }

    /// Whether the bench family `family` is judged as a whole at `level`
    /// ([`Rule::family_verdicts`] in a class, [`Rule::same_card_family_verdicts`] on the same
    /// card; never against one other card).
    pub fn family_verdict(&self, family: &str, level: Level) -> bool {
        let pattern = match level {
            Level::Class => &self.family_verdicts,
            Level::SameCard => &self.same_card_family_verdicts,
            Level::OtherCard => return false,
        };
        pattern.as_ref().is_some_and(|f| f.is_match(family))
    }

    /// Whether the first override matching `key` says the class's cards fall in groups on it
    /// ([`MetricOverride::cards_in_groups`]).
    pub fn cards_in_groups(&self, key: &str) -> bool {
        self.overrides.iter().find(|o| o.matches(key)).is_some_and(|o| o.cards_in_groups)
    }

    /// Whether the first override matching `key` gives the metric a measured spread at `scope`
    /// (`run_spread` for same-card, `card_spread` for class comparisons). Such a metric is
    /// known not to be like the rest of its family: its band is not moderated by the family's
    /// prior, and it does not enter the prior (see [`crate::verdict`], "Level").
    pub fn measured_spread(&self, key: &str, scope: Scope) -> bool {
        self.overrides.iter().find(|o| o.matches(key)).is_some_and(|o| match scope {
            Scope::SameCard => o.run_spread.is_some(),
            _ => o.card_spread_at(scope).is_some(),
        })
    }

    /// The measured spread of the metric `key` as a prior: the first matching override's
    /// `run_spread` on `run_spread_df` degrees of freedom, or for class comparisons its
    /// `card_spread` on `card_spread_df` (where it applies at `scope`), when it gives both.
    pub fn measured_prior(&self, key: &str, scope: Scope) -> Option<VariancePrior> {
        let o = self.overrides.iter().find(|o| o.matches(key))?;
        let (spread, d0) = match scope {
            Scope::SameCard => (o.run_spread?, o.run_spread_df?),
            _ => {
                let (s, df) = o.card_spread_at(scope)?;
                (s, df?)
            }
        };
        Some(VariancePrior { s0_sq: spread * spread, d0, n: 1 })
    }

    /// Checks that every parameter is in range; the error names the first bad one.
    pub fn validate(&self) -> Result<(), String> {
        let unit = |name: &str, v: f64, lo: f64, hi: f64| {
            if v.is_finite() && v >= lo && v < hi {
                Ok(())
            } else {
                Err(format!("{name} = {v} is outside [{lo}, {hi})"))
            }
        };
        unit("threshold", self.threshold, 0.0, MAX_THRESHOLD)?;
        unit("noise_factor", self.noise_factor, 0.0, 100.0)?;
        unit("clock_tolerance", self.clock_tolerance, 0.0, 1.0)?;
        unit("min_fact_confidence", self.min_fact_confidence, 0.0, 1.000_001)?;
        if !(self.confidence >= 0.5 && self.confidence < 1.0) {
            return Err(format!("confidence = {} must be in [0.5, 1)", self.confidence));
        }
        unit("spread_floor", self.spread_floor, 0.0, 1.0)?;
        unit("card_spread_floor", self.card_spread_floor, 0.0, 1.0)?;
        if let Some((spread, df)) = self.family_run_spread {
            unit("family_run_spread", spread, 0.0, 1.0)?;
            unit("family_run_spread_df", df, 1.0, MAX_PRIOR_DF + 1.0)?;
        }
        if !(2..=MAX_MIN_SAMPLES).contains(&self.min_samples) {
            return Err(format!("min_samples = {} is outside [2, {MAX_MIN_SAMPLES}]", self.min_samples));
        }
        for o in &self.overrides {
            if let Some(t) = o.threshold {
                unit(&format!("threshold of `{}`", o.pattern), t, 0.0, MAX_THRESHOLD)?;
            }
            if let Some(f) = o.noise_factor {
                unit(&format!("noise_factor of `{}`", o.pattern), f, 0.0, 100.0)?;
            }
            if let Some(f) = o.run_spread {
                unit(&format!("run_spread of `{}`", o.pattern), f, 0.0, 1.0)?;
            }
            if let Some(f) = o.card_spread {
                unit(&format!("card_spread of `{}`", o.pattern), f, 0.0, 1.0)?;
            }
            for (name, df, spread) in
                [("run_spread", o.run_spread_df, o.run_spread), ("card_spread", o.card_spread_df, o.card_spread)]
            {
                let Some(d) = df else { continue };
                unit(&format!("{name}_df of `{}`", o.pattern), d, 1.0, MAX_PRIOR_DF + 1.0)?;
                if spread.is_none() {
                    return Err(format!("{name}_df of `{}` needs a {name}", o.pattern));
                }
            }
        }
        Ok(())
    }
}

/// Largest accepted threshold: a change of 50 % or more is never "within noise".
pub const MAX_THRESHOLD: f64 = 0.5;
/// Largest accepted `min_samples`: above it every metric would be INCONCLUSIVE.
pub const MAX_MIN_SAMPLES: usize = 1000;

/// `pattern` compiled; the error is one line naming it.
fn compile(pattern: &str) -> Result<Regex, String> {
    Regex::new(pattern).map_err(|e| format!("bad pattern `{pattern}`: {}", first_line(&e.to_string())))
}

fn first_line(s: &str) -> &str {
    s.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_matching_override_wins() {
        let mut rule = Rule::default();
        rule.overrides.push(MetricOverride::new("latency/.*/32MiB:", Some(0.1), None).unwrap());
        rule.overrides.push(MetricOverride::new("latency/", Some(0.05), Some(4.0)).unwrap());
        assert_eq!(rule.for_metric("latency/ca/32MiB:cycles_per_access"), (0.1, 1.0));
        let mut h200 = MetricOverride::new("latency/ca/64MiB:", Some(0.2), None).unwrap();
        h200.gpu_class = Some("nvidia-h200".into());
        let mut classed = rule.clone();
        classed.overrides.insert(0, h200);
        assert_eq!(classed.for_class("nvidia-h200-cc90-132sm-140gib").for_metric("latency/ca/64MiB:x"), (0.2, 1.0));
        assert_eq!(
            classed.for_class("nvidia-h100-80gb-hbm3-cc90-132sm-79gib").for_metric("latency/ca/64MiB:x"),
            (0.05, 4.0)
        );
        assert_eq!(rule.for_metric("latency/ca/64MiB:cycles_per_access"), (0.05, 4.0));
        assert_eq!(rule.for_metric("stream/copy:bandwidth"), (0.02, 1.0));
        assert!(rule.validate().is_ok());
    }

    #[test]
    fn out_of_range_parameters_are_named() {
        let rule = Rule { threshold: 1.5, ..Rule::default() };
        assert!(rule.validate().unwrap_err().contains("threshold"));
        let rule = Rule { confidence: 0.2, ..Rule::default() };
        assert!(rule.validate().unwrap_err().contains("confidence"));
        let rule = Rule { spread_floor: -0.1, ..Rule::default() };
        assert!(rule.validate().unwrap_err().contains("spread_floor"));
        assert!(MetricOverride::new("(", None, None).unwrap_err().contains("bad pattern"));
    }
}
