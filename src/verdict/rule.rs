//! The verdict rule's parameters: thresholds, error rates, resampling, validity gate.
//!
//! # Why these defaults
//!
//! Samples within one run are often extremely tight (0.01 % spread for a pointer chase), while
//! two runs on the same GPU differ by more: a new process gets other physical pages, another
//! L2 slice mapping, another clock history. A test that only asks "are these samples
//! different?" therefore flags noise on nearly every metric, which is how compare scripts end up
//! crying wolf on identical code. The rule here asks a different question: "is the change
//! larger than what reruns produce, with confidence?" Three parameters answer it:
//!
//! - [`Rule::threshold`] (default 2 %): the smallest relative change that can be called
//!   REGRESSED or IMPROVED. The whole bootstrap confidence interval of the ratio of medians
//!   must lie beyond it, so a 3 % shift on a metric with a spread of a few tenths of a percent
//!   is caught while run-to-run drift of about 1 % is not.
//! - [`Rule::noise_factor`] (default 3): the threshold of a metric widens to `noise_factor`
//!   times the baseline's own noise, the larger of the robust relative spread of its samples
//!   (1.4826 x MAD / median) and, for baselines kept over several runs, the largest deviation
//!   of one run's median from the median of all runs. A metric whose samples scatter by 2 %
//!   therefore needs a change of about 6 % before it is called.
//! - [`Rule::alpha`] (default 0.05): the false-discovery rate of the Mann-Whitney tests,
//!   controlled over the whole suite with Benjamini-Hochberg; a change must also be
//!   significant after this correction.
//!
//! Per-metric overrides of the threshold and the noise factor come from `gpubench.toml`.

use regex::Regex;
use serde::Serialize;

/// Parameters of the verdict rule (defaults documented on each field and in the README).
#[derive(Debug, Clone, Serialize)]
pub struct Rule {
    /// Smallest relative change of the median called REGRESSED or IMPROVED (default 0.02).
    pub threshold: f64,
    /// The threshold widens to this many times the baseline's relative noise (default 3).
    pub noise_factor: f64,
    /// False-discovery rate of the rank tests over the suite (default 0.05).
    pub alpha: f64,
    /// Confidence level of the bootstrap interval of the ratio of medians (default 0.99).
    pub confidence: f64,
    /// Bootstrap resamples per metric (default 2000).
    pub resamples: usize,
    /// Relative difference of the effective clocks of the two sides above which clock-normalised
    /// values are compared when both sides have them (default 0.01).
    pub clock_tolerance: f64,
    /// Fewest samples per side for a statistical verdict (default 5).
    pub min_samples: usize,
    /// Facts that differ are REGRESSED only when both inferences are at least this confident
    /// (default 0.9); otherwise INCONCLUSIVE.
    pub min_fact_confidence: f64,
    /// Seed of the bootstrap (mixed with each metric's name), for reproducible verdicts.
    pub seed: u64,
    /// Per-metric overrides, first match wins.
    pub overrides: Vec<MetricOverride>,
}

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
    #[serde(skip)]
    regex: Option<Regex>,
}

impl MetricOverride {
    /// Compiles `pattern`; the error is one line.
    pub fn new(pattern: &str, threshold: Option<f64>, noise_factor: Option<f64>) -> Result<Self, String> {
        let regex =
            Regex::new(pattern).map_err(|e| format!("bad pattern `{pattern}`: {}", first_line(&e.to_string())))?;
        Ok(MetricOverride { pattern: pattern.to_string(), threshold, noise_factor, regex: Some(regex) })
    }

    fn matches(&self, key: &str) -> bool {
        self.regex.as_ref().is_some_and(|r| r.is_match(key))
    }
}

impl Default for Rule {
    fn default() -> Self {
        Rule {
            threshold: 0.02,
            noise_factor: 3.0,
            alpha: 0.05,
            confidence: 0.99,
            resamples: 2000,
            clock_tolerance: 0.01,
            min_samples: 5,
            min_fact_confidence: 0.9,
            seed: 0,
            overrides: Vec::new(),
        }
    }
}

impl Rule {
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
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err(format!("alpha = {} must be between 0 and 1", self.alpha));
        }
        if !(self.confidence >= 0.5 && self.confidence < 1.0) {
            return Err(format!("confidence = {} must be in [0.5, 1)", self.confidence));
        }
        if !(100..=MAX_RESAMPLES).contains(&self.resamples) {
            return Err(format!("resamples = {} is outside [100, {MAX_RESAMPLES}]", self.resamples));
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
        }
        Ok(())
    }
}

/// Largest accepted threshold: a change of 50 % or more is never "within noise".
pub const MAX_THRESHOLD: f64 = 0.5;
/// Most bootstrap resamples per metric (more only costs time and memory).
pub const MAX_RESAMPLES: usize = 1_000_000;
/// Largest accepted `min_samples`: above it every metric would be INCONCLUSIVE.
pub const MAX_MIN_SAMPLES: usize = 1000;

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
        assert_eq!(rule.for_metric("latency/ca/32MiB:cycles_per_access"), (0.1, 3.0));
        assert_eq!(rule.for_metric("latency/ca/64MiB:cycles_per_access"), (0.05, 4.0));
        assert_eq!(rule.for_metric("stream/copy:bandwidth"), (0.02, 3.0));
        assert!(rule.validate().is_ok());
    }

    #[test]
    fn out_of_range_parameters_are_named() {
        let rule = Rule { threshold: 1.5, ..Rule::default() };
        assert!(rule.validate().unwrap_err().contains("threshold"));
        let rule = Rule { alpha: 0.0, ..Rule::default() };
        assert!(rule.validate().unwrap_err().contains("alpha"));
        let rule = Rule { resamples: 10, ..Rule::default() };
        assert!(rule.validate().unwrap_err().contains("resamples"));
        assert!(MetricOverride::new("(", None, None).unwrap_err().contains("bad pattern"));
    }
}
