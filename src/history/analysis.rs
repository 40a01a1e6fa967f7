//! The history report: every series, its change points, and what explains each.

use std::collections::BTreeMap;

use serde::Serialize;

use super::attribution::{ChangePoint, annotate};
use super::changepoint::{DetectParams, detect};
use super::series::{RunInfo, Series, SeriesFilter, load_runs, load_series};
use super::store::HistoryStore;
use crate::error::Result;
use crate::verdict::Rule;

/// How the report is made.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AnalysisParams {
    /// Change point detection.
    pub detect: DetectParams,
    /// Change points smaller than this (relative) are not reported. With a verdict rule, a
    /// metric's own threshold (`gpubench.toml`, calibrated on A/A runs) applies where larger.
    pub min_effect: f64,
    /// Change points in the newest this many runs of a series are marked recent (0: none).
    pub recent: usize,
    /// Series with fewer runs are shown but not searched for change points.
    pub min_runs: usize,
}

impl Default for AnalysisParams {
    fn default() -> Self {
        AnalysisParams { detect: DetectParams::default(), min_effect: 0.01, recent: 0, min_runs: 3 }
    }
}

/// A series and what the analysis found in it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnalysedSeries {
    /// The data.
    pub series: Series,
    /// Run-to-run noise of the run medians (after the floor), relative to their median.
    pub noise_rel: f64,
    /// Smallest step reported for this series (relative).
    pub min_effect: f64,
    /// Reported change points.
    pub change_points: Vec<ChangePoint>,
}

/// One card in the history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CardSummary {
    /// GPU UUID.
    pub uuid: String,
    /// Marketing name.
    pub name: String,
    /// Stored runs of this card.
    pub runs: usize,
}

/// The whole analysis.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryReport {
    /// How it was made.
    pub params: AnalysisParams,
    /// Cards with runs in the selection.
    pub cards: Vec<CardSummary>,
    /// Every run of the database, by id.
    pub runs: BTreeMap<i64, RunInfo>,
    /// Every selected series.
    pub series: Vec<AnalysedSeries>,
}

impl HistoryReport {
    /// All reported change points, with their series.
    pub fn change_points(&self) -> impl Iterator<Item = (&AnalysedSeries, &ChangePoint)> {
        self.series.iter().flat_map(|s| s.change_points.iter().map(move |c| (s, c)))
    }

    /// Whether a change point falls in the newest runs.
    pub fn has_recent(&self) -> bool {
        self.change_points().any(|(_, c)| c.recent)
    }
}

/// Reads the series of `store` that pass `filter` and analyses them.
pub fn analyse_store(
    store: &HistoryStore,
    filter: &SeriesFilter,
    params: &AnalysisParams,
    rule: Option<&Rule>,
) -> Result<HistoryReport> {
    let runs = load_runs(store)?;
    let series = load_series(store, filter)?;
    Ok(analyse(series, runs, params, rule))
}

/// Analyses series already in memory (pure). `rule`, when given, supplies each metric's
/// threshold (the verdicts' per-metric minimum effect) as its reporting floor.
pub fn analyse(
    series: Vec<Series>,
    runs: BTreeMap<i64, RunInfo>,
    params: &AnalysisParams,
    rule: Option<&Rule>,
) -> HistoryReport {
    let mut cards: BTreeMap<String, CardSummary> = BTreeMap::new();
    for r in runs.values() {
        cards
            .entry(r.card_uuid.clone())
            .or_insert_with(|| CardSummary { uuid: r.card_uuid.clone(), name: r.gpu_name.clone(), runs: 0 })
            .runs += 1;
    }
    let selected: std::collections::BTreeSet<&str> = series.iter().map(|s| s.key.card.as_str()).collect();
    let cards = cards.into_values().filter(|c| selected.contains(c.uuid.as_str())).collect();
    let series = series
        .into_iter()
        .map(|s| {
            let values: Vec<f64> = s.points.iter().map(|p| p.value).collect();
            let seg = detect(&values, &params.detect);
            let centre = crate::stats::median(&values).unwrap_or(0.0).abs();
            let noise_rel = if centre > 0.0 { seg.sigma / centre } else { 0.0 };
            let key = format!("{}:{}", s.key.benchmark, s.key.metric);
            let min_effect = rule.map_or(params.min_effect, |r| r.minimum_for(&key).max(params.min_effect));
            let change_points = if values.len() >= params.min_runs {
                annotate(&s, &seg, &runs, min_effect, params.recent)
            } else {
                Vec::new()
            };
            AnalysedSeries { series: s, noise_rel, min_effect, change_points }
        })
        .collect();
    HistoryReport { params: *params, cards, runs, series }
}
