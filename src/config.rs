//! The workspace configuration file, `gpubench.toml`: verdict thresholds, per-metric
//! overrides, and where baselines live. Every key is optional; unknown keys are errors.
//!
//! ```toml
//! [verdict]
//! threshold = 0.02        # minimum effect called REGRESSED or IMPROVED
//! noise_factor = 1.0      # multiplies the run-level prediction band that widens it
//! confidence = 0.99       # two-sided level of the run-level prediction interval
//! spread_floor = 0.002    # floor of the run-to-run (or card-to-card) relative spread
//! card_spread_floor = 0.01  # floor of the card-to-card spread in class comparisons
//! clock_tolerance = 0.01  # clock difference above which clock-normalised values are compared
//! min_samples = 5         # fewest samples per side for a statistical verdict
//! min_fact_confidence = 0.9
//! seed = 0
//!
//! [[verdict.metric]]      # first match wins; the pattern is a regex on "<benchmark>:<metric>"
//! match = "latency/.*/32MiB:"
//! threshold = 0.10
//! gpu_class = "nvidia-h200"  # optional: only for GPU classes whose key contains this
//!
//! [baseline]
//! dir = "baselines"       # relative to this file
//! max_runs = 5            # runs per card an --append baseline keeps
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Result};
#[cfg(test)]
use crate::verdict::Scope;
use crate::verdict::{KeyPattern, MetricOverride, Rule};

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

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct VerdictSection {
    threshold: Option<f64>,
    noise_factor: Option<f64>,
    confidence: Option<f64>,
    spread_floor: Option<f64>,
    card_spread_floor: Option<f64>,
    clock_tolerance: Option<f64>,
    min_samples: Option<usize>,
    min_fact_confidence: Option<f64>,
    pool_run_spread: Option<bool>,
    cycled_samples: Option<String>,
    family_verdicts: Option<String>,
    same_card_family_verdicts: Option<String>,
    family_run_spread: Option<f64>,
    family_run_spread_df: Option<f64>,
    seed: Option<u64>,
    #[serde(default)]
    metric: Vec<MetricSection>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MetricSection {
    #[serde(rename = "match")]
    pattern: String,
    threshold: Option<f64>,
    noise_factor: Option<f64>,
    card_spread: Option<f64>,
    run_spread: Option<f64>,
    run_spread_df: Option<f64>,
    card_spread_df: Option<f64>,
    card_spread_across_boards: Option<bool>,
    cards_in_groups: Option<bool>,
    gpu_class: Option<String>,
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
        let d = Rule::default();
        let mut overrides = Vec::new();
        for m in v.metric {
            let mut o = MetricOverride::new(&m.pattern, m.threshold, m.noise_factor).map_err(bad)?;
            o.card_spread = m.card_spread;
            o.run_spread = m.run_spread;
            o.run_spread_df = m.run_spread_df;
            o.card_spread_df = m.card_spread_df;
            o.card_spread_across_boards = m.card_spread_across_boards.unwrap_or(false);
            o.cards_in_groups = m.cards_in_groups.unwrap_or(false);
            o.gpu_class = m.gpu_class;
            overrides.push(o);
        }
        let rule = Rule {
            threshold: v.threshold.unwrap_or(d.threshold),
            noise_factor: v.noise_factor.unwrap_or(d.noise_factor),
            confidence: v.confidence.unwrap_or(d.confidence),
            spread_floor: v.spread_floor.unwrap_or(d.spread_floor),
            card_spread_floor: v.card_spread_floor.unwrap_or(d.card_spread_floor),
            clock_tolerance: v.clock_tolerance.unwrap_or(d.clock_tolerance),
            min_samples: v.min_samples.unwrap_or(d.min_samples),
            min_fact_confidence: v.min_fact_confidence.unwrap_or(d.min_fact_confidence),
            pool_run_spread: v.pool_run_spread.unwrap_or(d.pool_run_spread),
            seed: v.seed.unwrap_or(d.seed),
            overrides,
            cycled_samples: v.cycled_samples.as_deref().map(KeyPattern::new).transpose().map_err(bad)?,
            // An empty pattern turns family verdicts off.
            family_verdicts: family_pattern(v.family_verdicts.as_deref(), &d.family_verdicts).map_err(bad)?,
            same_card_family_verdicts: family_pattern(
                v.same_card_family_verdicts.as_deref(),
                &d.same_card_family_verdicts,
            )
            .map_err(bad)?,
            family_run_spread: match (v.family_run_spread, v.family_run_spread_df) {
                (Some(s), Some(df)) => Some((s, df)),
                (None, None) => None,
                _ => return Err(bad("family_run_spread and family_run_spread_df go together".to_string())),
            },
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
        assert_eq!(c.max_runs, DEFAULT_MAX_RUNS);
        assert_eq!(c.baseline_dir, None);
    }

    #[test]
    fn values_and_overrides_are_read() {
        let text = r#"
[verdict]
threshold = 0.03
spread_floor = 0.001
pool_run_spread = true
cycled_samples = "^atomics/contention:"

[[verdict.metric]]
match = "latency/.*/32MiB:"
threshold = 0.1

[[verdict.metric]]
match = "^cache:"
run_spread = 0.01
run_spread_df = 19
card_spread = 0.02

[[verdict.metric]]
match = "^dram:"
card_spread = 0.02
card_spread_df = 3
card_spread_across_boards = true
cards_in_groups = true

[baseline]
dir = "ci/baselines"
max_runs = 3
"#;
        let c = Config::parse(text, Path::new("/w/gpubench.toml")).unwrap();
        assert_eq!(c.rule.threshold, 0.03);
        assert_eq!(c.rule.spread_floor, 0.001);
        assert!(c.rule.pool_run_spread);
        assert!(!Config::parse("", Path::new("/w/gpubench.toml")).unwrap().rule.pool_run_spread);
        assert_eq!(c.rule.for_metric("latency/ca/32MiB:ns_per_access"), (0.1, 1.0));
        let prior = c.rule.measured_prior("cache:reused", Scope::SameCard).unwrap();
        assert!((prior.s0_sq - 1e-4).abs() < 1e-12 && prior.d0 == 19.0, "{prior:?}");
        assert_eq!(c.rule.measured_prior("cache:reused", Scope::Class), None, "no card_spread_df");
        assert_eq!(c.rule.measured_prior("latency/ca/32MiB:x", Scope::SameCard), None);
        // A card spread measured across boards serves a class taken whole, not one split by board.
        assert!(c.rule.measured_prior("dram:latency", Scope::Class).is_some());
        assert_eq!(c.rule.measured_prior("dram:latency", Scope::ClassByBoard), None);
        assert_eq!(c.rule.card_floor("dram:latency", true), c.rule.card_spread_floor);
        assert_eq!(c.rule.card_floor("dram:latency", false), 0.02);
        assert!(c.rule.cards_in_groups("dram:latency") && !c.rule.cards_in_groups("cache:reused"));
        assert!(c.rule.cycled_samples("atomics/contention:k=1024") && !c.rule.cycled_samples("latency/ca/32MiB:x"));
        // Families judged as a whole: atomics unless the file says otherwise; "" for none.
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
            ("[[verdict.metric]]\nmatch = \"(\"\n", "bad pattern `(`"),
            ("[verdict]\ncycled_samples = \"[\"\n", "bad pattern `[`"),
            ("[verdict]\nfamily_verdicts = \"(\"\n", "bad pattern `(`"),
            ("[verdict]\nfamily_run_spread = 0.001\n", "family_run_spread and family_run_spread_df go together"),
            (
                "[verdict]\nfamily_run_spread = 0.001\nfamily_run_spread_df = 0.5\n",
                "family_run_spread_df = 0.5 is outside",
            ),
            ("[verdict\n", "line 1"),
            ("[baseline]\nmax_runs = 0\n", "max_runs = 0 is outside [1, 1000]"),
            ("[[verdict.metric]]\nmatch = \"x\"\nrun_spread_df = 4\n", "run_spread_df of `x` needs a run_spread"),
            ("[[verdict.metric]]\nmatch = \"x\"\ncard_spread = 0.01\ncard_spread_df = 0.5\n", "card_spread_df of `x`"),
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
