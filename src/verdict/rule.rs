//! The verdict rule's parameters: policy only. Every measured spread a verdict uses comes from
//! the baseline itself ([`super::noise`]): the rule says how sure a verdict must be and how
//! large a change is worth reporting, never how noisy a metric or a GPU is.
//!
//! - [`Rule::threshold`] (default 2 %): the minimum effect, the smallest relative change that
//!   can be called REGRESSED or IMPROVED.
//! - [`Rule::confidence`] (default 0.99): how sure a verdict must be. A change beyond the minimum
//!   effect and the Student-t prediction band of the new run's median, built from the spreads
//!   the baseline learned, is REGRESSED or IMPROVED. [`Rule::confidence_scope`] says of what:
//!   of each metric alone (default), or of the whole comparison (a healthy run raises no false
//!   REGRESSED or IMPROVED in any metric with that probability, [`super::multiplicity`]; the
//!   bands of the noisier metrics widen to pay for it).
//! - [`Rule::max_detectable`] (default 10 %): a metric whose detectable effect (the band, plus
//!   the margin for 90 % power) exceeds it is INSENSITIVE unless its change is beyond the band:
//!   the comparison says it could not see, rather than passing a metric it was blind to.
//!
//! Per-metric overrides of the minimum effect come from `gpubench.toml`.

use regex::Regex;
use serde::Serialize;

use super::Level;

/// Parameters of the verdict rule (defaults documented on each field and in the README).
#[derive(Debug, Clone, Serialize)]
pub struct Rule {
    /// Minimum effect: smallest relative change of the median called REGRESSED or IMPROVED
    /// (default 0.02).
    pub threshold: f64,
    /// Two-sided level of the run-level prediction interval (default 0.99), of the whole
    /// comparison or of each metric ([`Rule::confidence_scope`]).
    pub confidence: f64,
    /// What [`Rule::confidence`] is the confidence of (default: each metric).
    pub confidence_scope: ConfidenceScope,
    /// Largest detectable effect a metric may have and still be judged (default 0.10; a
    /// metric's own minimum effect where larger): above it, a change within the band is
    /// INSENSITIVE, never PASS.
    pub max_detectable: f64,
    /// Floor of the relative standard deviation of the reference runs or cards (0.002, not
    /// configurable): identical runs do not give a zero band.
    #[serde(skip)]
    pub spread_floor: f64,
    /// Relative difference of the effective clocks of the two sides above which clock-normalised
    /// values are compared when both sides have them (default 0.01).
    pub clock_tolerance: f64,
    /// Fewest samples per side for a statistical verdict (default 5).
    pub min_samples: usize,
    /// Facts that differ are REGRESSED only when both inferences are at least this confident
    /// (default 0.9); otherwise INCONCLUSIVE.
    pub min_fact_confidence: f64,
    /// Per-metric minimum effects, first match wins.
    pub overrides: Vec<MetricOverride>,
    /// Bench families also judged as a whole in class comparisons, as a regular expression on
    /// the family name (default `^atomics$`; [`super::family`]). A family verdict only adds
    /// power: a metric of a family that moved as a whole, which moved the same way beyond the
    /// minimum effect, is carried; no metric's own verdict is taken away.
    pub family_verdicts: Option<KeyPattern>,
    /// The same against the card's own runs (default `^(atomics|access_patterns)$`).
    pub same_card_family_verdicts: Option<KeyPattern>,
}

/// What the rule's confidence is the confidence of.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConfidenceScope {
    /// Each metric on its own: of 300 metrics, those whose band is wider than the minimum
    /// effect may raise a false alarm each with `1 − confidence`.
    #[default]
    Metric,
    /// The whole comparison: the chance of a false REGRESSED or IMPROVED anywhere in a healthy
    /// run is at most `1 − confidence`, shared among the metrics whose change could pass their
    /// minimum effect by chance ([`super::multiplicity`]).
    Comparison,
}

impl ConfidenceScope {
    /// Parses "comparison" or "metric".
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "comparison" => Ok(ConfidenceScope::Comparison),
            "metric" => Ok(ConfidenceScope::Metric),
            other => Err(format!("confidence_scope = \"{other}\" must be \"comparison\" or \"metric\"")),
        }
    }
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

/// A per-metric minimum effect, selected by a regular expression on
/// `"<benchmark id>:<metric>"`, e.g. `"latency/.*/32MiB:.*"`: policy (how large a change of
/// this metric is worth reporting), never a measured spread.
#[derive(Debug, Clone, Serialize)]
pub struct MetricOverride {
    /// The regular expression as written.
    #[serde(rename = "match")]
    pub pattern: String,
    /// Minimum effect for matching metrics.
    pub threshold: f64,
    #[serde(skip)]
    regex: Option<Regex>,
}

impl MetricOverride {
    /// Compiles `pattern`; the error is one line.
    pub fn new(pattern: &str, threshold: f64) -> Result<Self, String> {
        let regex = compile(pattern)?;
        Ok(MetricOverride { pattern: pattern.to_string(), threshold, regex: Some(regex) })
    }

    fn matches(&self, key: &str) -> bool {
        self.regex.as_ref().is_some_and(|r| r.is_match(key))
    }
}

impl Default for Rule {
    fn default() -> Self {
        Rule {
            threshold: 0.02,
            confidence: 0.99,
            confidence_scope: ConfidenceScope::default(),
            max_detectable: 0.10,
            spread_floor: 0.002,
            clock_tolerance: 0.01,
            min_samples: 5,
            min_fact_confidence: 0.9,
            overrides: Vec::new(),
            family_verdicts: Some(KeyPattern::new(DEFAULT_FAMILY_VERDICTS).expect("a valid pattern")),
            same_card_family_verdicts: Some(
                KeyPattern::new(DEFAULT_SAME_CARD_FAMILY_VERDICTS).expect("a valid pattern"),
            ),
        }
    }
}

impl Rule {
    /// Minimum effect of the metric `key` ("<benchmark id>:<metric>").
    pub fn minimum_for(&self, key: &str) -> f64 {
        self.overrides.iter().find(|o| o.matches(key)).map_or(self.threshold, |o| o.threshold)
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

    /// Checks that every parameter is in a range where the rule can still fail a run; the
    /// error names the first bad one.
    pub fn validate(&self) -> Result<(), String> {
        let unit = |name: &str, v: f64, lo: f64, hi: f64| {
            if v.is_finite() && v >= lo && v < hi {
                Ok(())
            } else {
                Err(format!("{name} = {v} is outside [{lo}, {hi})"))
            }
        };
        unit("threshold", self.threshold, 0.0, MAX_THRESHOLD)?;
        unit("clock_tolerance", self.clock_tolerance, 0.0, 0.5)?;
        unit("min_fact_confidence", self.min_fact_confidence, 0.0, 1.000_001)?;
        if !(self.confidence >= 0.5 && self.confidence < 1.0) {
            return Err(format!("confidence = {} must be in [0.5, 1)", self.confidence));
        }
        if !(self.max_detectable.is_finite() && self.max_detectable >= 0.005 && self.max_detectable <= 1.0) {
            return Err(format!("max_detectable = {} is outside [0.005, 1]", self.max_detectable));
        }
        if !(2..=MAX_MIN_SAMPLES).contains(&self.min_samples) {
            return Err(format!("min_samples = {} is outside [2, {MAX_MIN_SAMPLES}]", self.min_samples));
        }
        for o in &self.overrides {
            unit(&format!("threshold of `{}`", o.pattern), o.threshold, 0.0, MAX_THRESHOLD)?;
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
        rule.overrides.push(MetricOverride::new("latency/.*/32MiB:", 0.1).unwrap());
        rule.overrides.push(MetricOverride::new("latency/", 0.05).unwrap());
        assert_eq!(rule.minimum_for("latency/ca/32MiB:cycles_per_access"), 0.1);
        assert_eq!(rule.minimum_for("latency/ca/64MiB:cycles_per_access"), 0.05);
        assert_eq!(rule.minimum_for("stream/copy:bandwidth"), 0.02);
        assert!(rule.validate().is_ok());
    }

    #[test]
    fn out_of_range_parameters_are_named() {
        let rule = Rule { threshold: 1.5, ..Rule::default() };
        assert!(rule.validate().unwrap_err().contains("threshold"));
        let rule = Rule { confidence: 0.2, ..Rule::default() };
        assert!(rule.validate().unwrap_err().contains("confidence"));
        let rule = Rule { max_detectable: 0.001, ..Rule::default() };
        assert!(rule.validate().unwrap_err().contains("max_detectable"));
        let rule = Rule { min_samples: 100_000, ..Rule::default() };
        assert!(rule.validate().unwrap_err().contains("min_samples"));
        assert!(MetricOverride::new("(", 0.02).unwrap_err().contains("bad pattern"));
    }
}
