//! The workspace configuration file, `gpubench.toml`: verdict thresholds, per-metric
//! overrides, and where baselines live. Every key is optional; unknown keys are errors.
//!
//! Policy only: how sure a verdict must be and how large a change is worth reporting. Every
//! measured spread comes from the baseline file ([`crate::verdict::noise`]), so a comparison
//! gives the same verdicts with or without this file wherever it states the defaults.
//!
//! ```toml
//! [verdict]
//! threshold = 0.02        # minimum effect called REGRESSED or IMPROVED
//! confidence = 0.99       # how sure a REGRESSED or IMPROVED must be
//! confidence_scope = "metric"  # of each metric, or "comparison": of the whole comparison
//! max_detectable = 0.10   # a metric that cannot see a change this large is INSENSITIVE
//! clock_tolerance = 0.01  # clock difference above which clock-normalised values are compared
//! min_samples = 5         # fewest samples per side for a statistical verdict
//! min_fact_confidence = 0.9
//! family_verdicts = "^atomics$"                            # families also judged as a whole
//! same_card_family_verdicts = "^(atomics|access_patterns)$"
//!
//! [[verdict.metric]]      # first match wins; the pattern is a regex on "<benchmark>:<metric>"
//! match = "latency/.*/32MiB:"
//! threshold = 0.10        # this metric's minimum effect
//!
//! [baseline]
//! dir = "baselines"       # relative to this file
//! max_runs = 5            # runs per card an --append baseline keeps
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::verdict::{ConfidenceScope, KeyPattern, MetricOverride, Rule};

/// File name looked up in the workspace (and its parents).
pub const CONFIG_FILE: &str = "gpubench.toml";

/// Runs per card an appended baseline keeps by default.
pub const DEFAULT_MAX_RUNS: usize = 5;

/// Most runs a baseline may keep (each holds every raw sample of a run).
pub const MAX_RUNS_LIMIT: usize = 1000;

/// The configuration in force.
#[derive(Debug, Clone)]
pub struct Config {
    /// The verdict rule.
    pub rule: Rule,
    /// Baselines folder from the file (absolute, resolved against the file's folder).
    pub baseline_dir: Option<PathBuf>,
    /// Runs per card an appended baseline keeps.
    pub max_runs: usize,
    /// The file it came from; `None` for the built-in defaults.
    pub source: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Config { rule: Rule::default(), baseline_dir: None, max_runs: DEFAULT_MAX_RUNS, source: None }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    #[serde(default)]
    verdict: VerdictSection,
    #[serde(default)]
    baseline: BaselineSection,
}

/// Keys of earlier versions that held measured spreads or widened bands: a verdict now learns
/// every spread from the baseline's runs, and a configuration that still sets one is refused
/// with this word rather than silently ignored.
const LEARNED_NOW: &str =
    "spreads are learned from the baseline's runs now (docs, \"Baselines and verdicts\"): remove it";

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct VerdictSection {
    threshold: Option<f64>,
    confidence: Option<f64>,
    confidence_scope: Option<String>,
    max_detectable: Option<f64>,
    clock_tolerance: Option<f64>,
    min_samples: Option<usize>,
    min_fact_confidence: Option<f64>,
    family_verdicts: Option<String>,
    same_card_family_verdicts: Option<String>,
    #[serde(default)]
    metric: Vec<MetricSection>,
    // Keys of earlier versions, refused by name.
    noise_factor: Option<toml::Value>,
    spread_floor: Option<toml::Value>,
    card_spread_floor: Option<toml::Value>,
    pool_run_spread: Option<toml::Value>,
    cycled_samples: Option<toml::Value>,
    family_run_spread: Option<toml::Value>,
    family_run_spread_df: Option<toml::Value>,
    seed: Option<toml::Value>,
}

impl VerdictSection {
    /// The first key of an earlier version that is set.
    fn retired(&self) -> Option<&'static str> {
        [
            ("noise_factor", self.noise_factor.is_some()),
            ("spread_floor", self.spread_floor.is_some()),
            ("card_spread_floor", self.card_spread_floor.is_some()),
            ("pool_run_spread", self.pool_run_spread.is_some()),
            ("cycled_samples", self.cycled_samples.is_some()),
            ("family_run_spread", self.family_run_spread.is_some()),
            ("family_run_spread_df", self.family_run_spread_df.is_some()),
            ("seed", self.seed.is_some()),
        ]
        .into_iter()
        .find(|(_, set)| *set)
        .map(|(k, _)| k)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MetricSection {
    #[serde(rename = "match")]
    pattern: String,
    threshold: Option<f64>,
    // Keys of earlier versions, refused by name.
    noise_factor: Option<toml::Value>,
    card_spread: Option<toml::Value>,
    run_spread: Option<toml::Value>,
    run_spread_df: Option<toml::Value>,
    card_spread_df: Option<toml::Value>,
    card_spread_across_boards: Option<toml::Value>,
    cards_in_groups: Option<toml::Value>,
    gpu_class: Option<toml::Value>,
}

impl MetricSection {
    fn retired(&self) -> Option<&'static str> {
        [
            ("noise_factor", self.noise_factor.is_some()),
            ("card_spread", self.card_spread.is_some()),
            ("run_spread", self.run_spread.is_some()),
            ("run_spread_df", self.run_spread_df.is_some()),
            ("card_spread_df", self.card_spread_df.is_some()),
            ("card_spread_across_boards", self.card_spread_across_boards.is_some()),
            ("cards_in_groups", self.cards_in_groups.is_some()),
            ("gpu_class", self.gpu_class.is_some()),
        ]
        .into_iter()
        .find(|(_, set)| *set)
        .map(|(k, _)| k)
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct BaselineSection {
    dir: Option<PathBuf>,
    max_runs: Option<usize>,
}

impl Config {
    /// Reads `path`. A missing or unreadable file, bad TOML, an unknown key or a value out of
    /// range is a usage error (exit code 2) naming the file.
    pub fn load(path: &Path) -> Result<Self> {
        crate::results::check_regular_file(path).map_err(|e| Error::Usage(format!("configuration {e}")))?;
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Usage(format!("{}: cannot read the configuration: {e}", path.display())))?;
        Self::parse(&text, path)
    }

    /// The nearest `gpubench.toml` in `start` or one of its parents, or the defaults when
    /// there is none.
    pub fn discover(start: &Path) -> Result<Self> {
        for dir in start.ancestors() {
            let candidate = dir.join(CONFIG_FILE);
            if candidate.is_file() {
                return Self::load(&candidate);
            }
        }
        Ok(Config::default())
    }

    /// Parses configuration text (`path` names it in errors and anchors relative folders).
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let bad = |msg: String| Error::Usage(format!("{}: {msg}", path.display()));
        let file: FileConfig = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            let msg = e.message().lines().next().unwrap_or("invalid TOML").to_string();
            match line {
                Some(l) => bad(format!("line {l}: {msg}")),
                None => bad(msg),
            }
        })?;
        let v = file.verdict;
        if let Some(key) = v.retired() {
            return Err(bad(format!("[verdict] {key}: {LEARNED_NOW}")));
        }
        let d = Rule::default();
        let mut overrides = Vec::new();
        for m in v.metric {
            if let Some(key) = m.retired() {
                return Err(bad(format!("[[verdict.metric]] `{}`: {key}: {LEARNED_NOW}", m.pattern)));
            }
            let Some(threshold) = m.threshold else {
                return Err(bad(format!("[[verdict.metric]] `{}` sets no threshold", m.pattern)));
            };
            overrides.push(MetricOverride::new(&m.pattern, threshold).map_err(bad)?);
        }
        let rule = Rule {
            threshold: v.threshold.unwrap_or(d.threshold),
            confidence: v.confidence.unwrap_or(d.confidence),
            confidence_scope: match v.confidence_scope.as_deref() {
                Some(s) => ConfidenceScope::parse(s).map_err(bad)?,
                None => d.confidence_scope,
            },
            max_detectable: v.max_detectable.unwrap_or(d.max_detectable),
            spread_floor: d.spread_floor,
            clock_tolerance: v.clock_tolerance.unwrap_or(d.clock_tolerance),
            min_samples: v.min_samples.unwrap_or(d.min_samples),
            min_fact_confidence: v.min_fact_confidence.unwrap_or(d.min_fact_confidence),
            overrides,
            family_verdicts: family_pattern(v.family_verdicts.as_deref(), &d.family_verdicts).map_err(bad)?,
            same_card_family_verdicts: family_pattern(
                v.same_card_family_verdicts.as_deref(),
                &d.same_card_family_verdicts,
            )
            .map_err(bad)?,
        };
        rule.validate().map_err(bad)?;
        let max_runs = file.baseline.max_runs.unwrap_or(DEFAULT_MAX_RUNS);
        if max_runs == 0 || max_runs > MAX_RUNS_LIMIT {
            return Err(bad(format!("baseline.max_runs = {max_runs} is outside [1, {MAX_RUNS_LIMIT}]")));
        }
        let base = path.parent().unwrap_or(Path::new("."));
        Ok(Config {
            rule,
            baseline_dir: file.baseline.dir.map(|d| base.join(d)),
            max_runs,
            source: Some(path.to_path_buf()),
        })
    }
}

/// A family pattern as written (`""`: none), or `default` where the file has none.
fn family_pattern(
    written: Option<&str>,
    default: &Option<KeyPattern>,
) -> std::result::Result<Option<KeyPattern>, String> {
    match written {
        None => Ok(default.clone()),
        Some("") => Ok(None),
        Some(p) => KeyPattern::new(p).map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Level;

    #[test]
    fn an_empty_file_gives_the_defaults() {
        let c = Config::parse("", Path::new("/w/gpubench.toml")).unwrap();
        assert_eq!(c.rule.threshold, 0.02);
        assert_eq!(c.rule.confidence_scope, ConfidenceScope::Metric);
        assert_eq!(c.max_runs, DEFAULT_MAX_RUNS);
        assert_eq!(c.baseline_dir, None);
    }

    #[test]
    fn values_and_overrides_are_read() {
        let text = r#"
[verdict]
threshold = 0.03
max_detectable = 0.08
confidence_scope = "comparison"

[[verdict.metric]]
match = "latency/.*/32MiB:"
threshold = 0.1

[baseline]
dir = "ci/baselines"
max_runs = 3
"#;
        let c = Config::parse(text, Path::new("/w/gpubench.toml")).unwrap();
        assert_eq!(c.rule.threshold, 0.03);
        assert_eq!(c.rule.max_detectable, 0.08);
        assert_eq!(c.rule.confidence_scope, ConfidenceScope::Comparison);
        assert_eq!(c.rule.minimum_for("latency/ca/32MiB:ns_per_access"), 0.1);
        assert_eq!(c.rule.minimum_for("latency/ca/4MiB:ns_per_access"), 0.03);
        let (class, same) = (Level::Class, Level::SameCard);
        assert!(c.rule.family_verdict("atomics", class) && !c.rule.family_verdict("access_patterns", class));
        assert!(c.rule.family_verdict("access_patterns", same) && !c.rule.family_verdict("l2_bandwidth", same));
        assert!(!c.rule.family_verdict("atomics", Level::OtherCard));
        let all = Config::parse("[verdict]\nfamily_verdicts = \".\"\n", Path::new("/w/g.toml")).unwrap();
        assert!(all.rule.family_verdict("access_patterns", class));
        let none = "[verdict]\nfamily_verdicts = \"\"\nsame_card_family_verdicts = \"\"\n";
        let none = Config::parse(none, Path::new("/w/g.toml")).unwrap();
        assert!(!none.rule.family_verdict("atomics", class) && !none.rule.family_verdict("atomics", same));
        assert_eq!(c.baseline_dir, Some(PathBuf::from("/w/ci/baselines")));
        assert_eq!(c.max_runs, 3);
    }

    #[test]
    fn mistakes_are_one_line_usage_errors_with_the_line() {
        let cases = [
            ("[verdict]\nthreshhold = 0.02\n", "line 2: unknown field `threshhold`"),
            ("[verdict]\nthreshold = \"2%\"\n", "line 2"),
            ("[verdict]\nthreshold = 2.0\n", "threshold = 2 is outside"),
            ("[[verdict.metric]]\nmatch = \"(\"\nthreshold = 0.1\n", "bad pattern `(`"),
            ("[[verdict.metric]]\nmatch = \"x\"\n", "`x` sets no threshold"),
            ("[verdict]\nfamily_verdicts = \"(\"\n", "bad pattern `(`"),
            ("[verdict\n", "line 1"),
            ("[baseline]\nmax_runs = 0\n", "max_runs = 0 is outside [1, 1000]"),
            // Settings under which nothing can fail are refused.
            ("[verdict]\nmax_detectable = 0.001\n", "max_detectable = 0.001 is outside"),
            ("[verdict]\nconfidence_scope = \"run\"\n", "confidence_scope = \"run\" must be"),
            ("[verdict]\nclock_tolerance = 0.9\n", "clock_tolerance = 0.9 is outside"),
            ("[verdict]\nmin_samples = 100000\n", "min_samples = 100000 is outside"),
            // Measured values of earlier versions are refused by name.
            ("[verdict]\nnoise_factor = 99\n", "noise_factor: spreads are learned"),
            ("[verdict]\nspread_floor = 0.6\n", "spread_floor: spreads are learned"),
            ("[verdict]\nfamily_run_spread = 0.001\n", "family_run_spread: spreads are learned"),
            ("[[verdict.metric]]\nmatch = \"x\"\nrun_spread = 0.01\n", "`x`: run_spread: spreads are learned"),
            ("[[verdict.metric]]\nmatch = \"x\"\ncards_in_groups = true\n", "cards_in_groups: spreads are learned"),
            ("[[verdict.metric]]\nmatch = \"x\"\ngpu_class = \"h100\"\n", "gpu_class: spreads are learned"),
        ];
        for (text, expect) in cases {
            let e = Config::parse(text, Path::new("gpubench.toml")).unwrap_err();
            let msg = e.to_string();
            assert!(matches!(e, Error::Usage(_)), "{msg}");
            assert_eq!(e.exit_code(), crate::error::exit::USAGE);
            assert!(msg.starts_with("gpubench.toml: ") && msg.contains(expect), "{msg}");
            assert!(!msg.contains('\n'), "{msg}");
        }
    }

    #[test]
    fn discovery_walks_up_to_the_nearest_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(CONFIG_FILE), "[verdict]\nthreshold = 0.04\n").unwrap();
        let deep = dir.path().join("a/b");
        std::fs::create_dir_all(&deep).unwrap();
        let c = Config::discover(&deep).unwrap();
        assert_eq!(c.rule.threshold, 0.04);
        assert_eq!(c.source, Some(dir.path().join(CONFIG_FILE)));
    }
}
