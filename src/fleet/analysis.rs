//! The fleet judgement: groups of cards, the class envelope of every metric, robust z-scores per
//! card and metric, outlier cards.

use std::collections::BTreeMap;

use serde::Serialize;

use super::input::{Loaded, LoadedRun, NodeStatus};
use super::sm::{self, ClassMap, SmFlag};
use crate::results::Better;
use crate::stats::{mad, median, modified_z};
use crate::verdict::Rule;

/// How cards are judged (defaults documented per field and in the docs, "Fleets").
#[derive(Debug, Clone, Serialize)]
pub struct FleetRule {
    /// A card's metric is an outlier beyond this robust z-score in the bad direction (3.5).
    pub z_limit: f64,
    /// MAD floor relative to the class median (0.01): near-identical cards do not give huge z.
    pub mad_floor: f64,
    /// Smallest relative change from the class median called an outlier (0.05); a larger
    /// per-metric `threshold` of the verdict rule (gpubench.toml) wins.
    pub min_effect: f64,
    /// Smallest relative change of one SM from its card's median called an outlier SM (0.10).
    pub sm_min_effect: f64,
    /// Fewest cards in a group for a judgement (3).
    pub min_cards: usize,
    /// Chip maps whose interquartile range over the SMs exceeds this share of their median
    /// (0.10) are not searched for outlier SMs: at footprints between two cache levels each SM
    /// sees its own mix of near and far hits, so a wide spread there is the layout, not a defect.
    pub sm_map_max_iqr: f64,
    /// The verdict rule whose per-metric thresholds widen `min_effect`.
    #[serde(skip)]
    pub verdict: Rule,
}

impl Default for FleetRule {
    fn default() -> Self {
        FleetRule {
            z_limit: 3.5,
            mad_floor: 0.01,
            min_effect: 0.05,
            sm_min_effect: 0.10,
            min_cards: 3,
            sm_map_max_iqr: 0.10,
            verdict: Rule::default(),
        }
    }
}

impl FleetRule {
    /// MAD floor of the metric `key`, relative to the class median: [`FleetRule::mad_floor`]
    /// (the cards' own spread is measured from the fleet itself).
    pub fn mad_floor_for(&self, _key: &str) -> f64 {
        self.mad_floor
    }

    /// The minimum relative effect of metric `key` ("<benchmark id>:<metric>").
    pub fn min_effect_for(&self, key: &str) -> f64 {
        self.min_effect.max(self.verdict.minimum_for(key))
    }
}

/// What groups cards: GPU class and software stack (and profile, since runs of different
/// profiles measure different sweeps). Cards of another stack are grouped apart, not judged
/// against this one.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct GroupKey {
    /// Class slug, e.g. "nvidia-h200-cc90-132sm-140gib".
    pub class: String,
    /// Driver version ("unknown" without NVML).
    pub driver: String,
    /// NVRTC version.
    pub nvrtc: String,
    /// Profile of the runs.
    pub profile: String,
}

impl GroupKey {
    /// "nvidia-h200-... driver 580.159.04 NVRTC 13.0 default".
    pub fn describe(&self) -> String {
        format!("{} driver {} NVRTC {} ({} profile)", self.class, self.driver, self.nvrtc, self.profile)
    }
}

/// One metric's envelope over the cards of a group.
#[derive(Debug, Clone, Serialize)]
pub struct EnvelopeRow {
    /// "<benchmark id>:<metric>".
    pub key: String,
    /// Unit.
    pub unit: String,
    /// Good direction.
    pub better: Better,
    /// Cards that measured it.
    pub cards: usize,
    /// Median of the card values.
    pub median: f64,
    /// Median absolute deviation of the card values.
    pub mad: f64,
    /// Smallest card value.
    pub min: f64,
    /// Largest card value.
    pub max: f64,
    /// The benchmark settings (its parameters) of the cards in the envelope: the settings most
    /// cards measured the metric with. Cards that measured it otherwise are not comparable.
    #[serde(skip)]
    pub settings: String,
}

/// A metric of a card outside its class envelope.
#[derive(Debug, Clone, Serialize)]
pub struct MetricFlag {
    /// "<benchmark id>:<metric>".
    pub key: String,
    /// Unit.
    pub unit: String,
    /// The card's value (median of its runs' medians).
    pub value: f64,
    /// The class median.
    pub class_median: f64,
    /// Relative change from the class median, signed (0.2 = 20 % above).
    pub change: f64,
    /// Robust z-score, signed so that positive is worse.
    pub z: f64,
}

/// One card's judgement.
#[derive(Debug, Clone, Serialize)]
pub struct CardReport {
    /// GPU UUID.
    pub uuid: String,
    /// Marketing name.
    pub name: String,
    /// Host(s) the card's files came from.
    pub hosts: Vec<String>,
    /// The files its runs came from.
    pub sources: Vec<String>,
    /// Runs read.
    pub runs: usize,
    /// Overall outlier score: the largest robust z-score in the bad direction over its metrics
    /// (0 when every metric is at or better than the class median).
    pub score: f64,
    /// The metric with that score.
    pub worst_metric: Option<String>,
    /// Metrics beyond the z limit and the minimum effect, worst first.
    pub flagged: Vec<MetricFlag>,
    /// Outlier SMs found in its chip maps.
    pub outlier_sms: Vec<SmFlag>,
    /// Whether the card is an outlier (a flagged metric or an outlier SM).
    pub outlier: bool,
    /// Robust z-score (positive = worse) of every metric.
    pub z: BTreeMap<String, f64>,
    /// The card's value of every metric (median of its runs' medians).
    pub values: BTreeMap<String, f64>,
    /// Metrics the card measured with other benchmark settings than the envelope's (another
    /// version of the benchmark): left out of its judgement.
    pub not_comparable: Vec<String>,
}

/// One group's envelope and cards.
#[derive(Debug, Clone, Serialize)]
pub struct GroupReport {
    /// What the cards share.
    pub key: GroupKey,
    /// Whether the group has enough cards to be judged ([`FleetRule::min_cards`]).
    pub judged: bool,
    /// Metric envelopes, in the order the metrics were first seen.
    pub envelope: Vec<EnvelopeRow>,
    /// Cards, by UUID.
    pub cards: Vec<CardReport>,
}

/// The whole fleet report.
#[derive(Debug, Clone, Serialize)]
pub struct FleetReport {
    /// Rule in force.
    pub rule: FleetRule,
    /// Groups, largest first.
    pub groups: Vec<GroupReport>,
    /// Nodes whose run failed (from node status files), with their reasons.
    pub failed_nodes: Vec<NodeStatus>,
    /// Files skipped in folders, with why.
    pub skipped: Vec<(String, String)>,
}

impl FleetReport {
    /// Every outlier card, with its group.
    pub fn outliers(&self) -> impl Iterator<Item = (&GroupReport, &CardReport)> {
        self.groups.iter().flat_map(|g| g.cards.iter().filter(|c| c.outlier).map(move |c| (g, c)))
    }

    /// Whether anything needs attention: an outlier card or a failed node.
    pub fn has_findings(&self) -> bool {
        self.outliers().next().is_some() || !self.failed_nodes.is_empty()
    }
}

/// One card's runs condensed: per metric the median of its runs' medians.
pub(crate) struct Card<'a> {
    pub(crate) uuid: String,
    pub(crate) runs: Vec<&'a LoadedRun>,
    pub(crate) values: BTreeMap<String, f64>,
    /// Per metric, the benchmark settings its value was measured with.
    pub(crate) settings: BTreeMap<String, String>,
}

fn group_key(run: &LoadedRun) -> GroupKey {
    let d = &run.doc;
    GroupKey {
        class: d.gpu.class_key().slug(),
        driver: d.stack.driver_version.clone().unwrap_or_else(|| "unknown".into()),
        nvrtc: d.stack.nvrtc_version.clone(),
        profile: d.settings.profile.clone(),
    }
}

/// Splits runs into groups (by [`GroupKey`]) and each group into cards (by UUID).
pub fn groups(loaded: &Loaded) -> BTreeMap<GroupKey, BTreeMap<String, Vec<&LoadedRun>>> {
    let mut out: BTreeMap<GroupKey, BTreeMap<String, Vec<&LoadedRun>>> = BTreeMap::new();
    for run in &loaded.runs {
        out.entry(group_key(run)).or_default().entry(run.doc.gpu.uuid.clone()).or_default().push(run);
    }
    out
}

/// Per benchmark id, the parameter names every run of `runs` that has the benchmark records.
type CommonParams = BTreeMap<String, std::collections::BTreeSet<String>>;

fn common_params<'a>(runs: impl IntoIterator<Item = &'a LoadedRun>) -> CommonParams {
    let mut common: CommonParams = BTreeMap::new();
    for r in runs {
        for b in &r.doc.benchmarks {
            let keys: std::collections::BTreeSet<String> = b.params.keys().cloned().collect();
            common.entry(b.id.clone()).and_modify(|c| c.retain(|k| keys.contains(k))).or_insert(keys);
        }
    }
    common
}

/// The settings of a benchmark that make two measurements of it comparable: the values of the
/// parameters every run records (what a configuration search chose is kept apart, in `chosen`;
/// a parameter only newer or older files record does not count).
fn settings_of(b: &crate::results::BenchmarkResult, common: &CommonParams) -> String {
    let keys = common.get(&b.id);
    let kept: BTreeMap<&String, &serde_json::Value> =
        b.params.iter().filter(|(k, _)| keys.is_some_and(|c| c.contains(*k))).collect();
    serde_json::to_string(&kept).unwrap_or_default()
}

/// A card's value per metric: the median of its runs' medians, over the runs measured with the
/// settings of its newest run that has the metric.
fn condense<'a>(
    uuid: &str,
    runs: Vec<&'a LoadedRun>,
    common: &CommonParams,
    order: &mut Vec<(String, String, Better)>,
) -> Card<'a> {
    let mut per_metric: BTreeMap<String, Vec<(String, f64)>> = BTreeMap::new();
    for r in &runs {
        for b in &r.doc.benchmarks {
            let settings = settings_of(b, common);
            for m in &b.metrics {
                let key = format!("{}:{}", b.id, m.name);
                if !per_metric.contains_key(&key) && !order.iter().any(|o| o.0 == key) {
                    order.push((key.clone(), m.unit.clone(), m.better));
                }
                per_metric.entry(key).or_default().push((settings.clone(), m.summary.median));
            }
        }
    }
    let mut values = BTreeMap::new();
    let mut settings = BTreeMap::new();
    for (k, v) in per_metric {
        // runs are read in file order; the newest run decides the settings
        let latest = runs.iter().max_by_key(|r| r.doc.created_unix_s).and_then(|r| {
            r.doc.benchmarks.iter().find(|b| k.starts_with(&format!("{}:", b.id))).map(|b| settings_of(b, common))
        });
        let chosen = latest.unwrap_or_else(|| v[0].0.clone());
        let same: Vec<f64> = v.iter().filter(|(s, _)| *s == chosen).map(|(_, x)| *x).collect();
        let x = median(&same).unwrap_or(f64::NAN);
        if x.is_finite() {
            values.insert(k.clone(), x);
            settings.insert(k, chosen);
        }
    }
    Card { uuid: uuid.to_string(), runs, values, settings }
}

/// Judges every group of `loaded` under `rule`.
pub fn analyse(loaded: &Loaded, rule: &FleetRule) -> FleetReport {
    let mut reports = Vec::new();
    for (key, cards) in groups(loaded) {
        let mut order = Vec::new();
        let common = common_params(cards.values().flatten().copied());
        let cards: Vec<Card> = cards.into_iter().map(|(u, runs)| condense(&u, runs, &common, &mut order)).collect();
        reports.push(judge_group(key, &cards, &order, rule));
    }
    reports.sort_by(|a, b| b.cards.len().cmp(&a.cards.len()).then(a.key.cmp(&b.key)));
    let failed_nodes = loaded.nodes.iter().filter(|n| n.exit_code != 0).cloned().collect();
    FleetReport { rule: rule.clone(), groups: reports, failed_nodes, skipped: loaded.skipped.clone() }
}

fn judge_group(key: GroupKey, cards: &[Card], order: &[(String, String, Better)], rule: &FleetRule) -> GroupReport {
    let judged = cards.len() >= rule.min_cards;
    let mut envelope = Vec::new();
    for (k, unit, better) in order {
        // the settings most cards measured this metric with (ties: the first card's)
        let mut counts: Vec<(&str, usize)> = Vec::new();
        for s in cards.iter().filter_map(|c| c.settings.get(k)) {
            match counts.iter_mut().find(|(x, _)| *x == s.as_str()) {
                Some(e) => e.1 += 1,
                None => counts.push((s.as_str(), 1)),
            }
        }
        let Some(settings) = counts.iter().rev().max_by_key(|(_, n)| *n).map(|(s, _)| s.to_string()) else {
            continue;
        };
        let xs: Vec<f64> = cards
            .iter()
            .filter(|c| c.settings.get(k) == Some(&settings))
            .filter_map(|c| c.values.get(k).copied())
            .collect();
        if xs.is_empty() {
            continue;
        }
        let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
        envelope.push(EnvelopeRow {
            key: k.clone(),
            unit: unit.clone(),
            better: *better,
            cards: xs.len(),
            median: median(&xs).unwrap_or(f64::NAN),
            mad: mad(&xs).unwrap_or(f64::NAN),
            min,
            max,
            settings,
        });
    }
    let class_maps = sm::class_maps(cards);
    let reports = cards.iter().map(|c| judge_card(c, &envelope, &class_maps, judged, rule)).collect();
    GroupReport { key, judged, envelope, cards: reports }
}

fn judge_card(
    card: &Card,
    envelope: &[EnvelopeRow],
    class_maps: &BTreeMap<String, ClassMap>,
    judged: bool,
    rule: &FleetRule,
) -> CardReport {
    let mut z = BTreeMap::new();
    let mut flagged = Vec::new();
    let (mut score, mut worst) = (0.0f64, None);
    let mut not_comparable = Vec::new();
    for row in envelope {
        let Some(&x) = card.values.get(&row.key) else { continue };
        if card.settings.get(&row.key) != Some(&row.settings) {
            not_comparable.push(row.key.clone());
            continue;
        }
        let sign = if row.better == Better::Lower { 1.0 } else { -1.0 };
        let zz = sign * modified_z(x, row.median, row.mad, rule.mad_floor_for(&row.key));
        z.insert(row.key.clone(), zz);
        if zz > score {
            score = zz;
            worst = Some(row.key.clone());
        }
        let change = if row.median != 0.0 { (x - row.median) / row.median.abs() } else { 0.0 };
        if judged && zz > rule.z_limit && change.abs() > rule.min_effect_for(&row.key) {
            flagged.push(MetricFlag {
                key: row.key.clone(),
                unit: row.unit.clone(),
                value: x,
                class_median: row.median,
                change,
                z: zz,
            });
        }
    }
    flagged.sort_by(|a, b| b.z.total_cmp(&a.z));
    let outlier_sms = sm::outlier_sms(card, class_maps, rule);
    let mut hosts: Vec<String> = card.runs.iter().filter_map(|r| r.host.clone()).collect();
    hosts.sort();
    hosts.dedup();
    let mut sources: Vec<String> = card.runs.iter().map(|r| r.origin.clone()).collect();
    sources.dedup();
    let first = card.runs[0];
    CardReport {
        uuid: card.uuid.clone(),
        name: first.doc.gpu.name.clone(),
        hosts,
        sources,
        runs: card.runs.len(),
        score,
        worst_metric: worst,
        outlier: !flagged.is_empty() || !outlier_sms.is_empty(),
        flagged,
        outlier_sms,
        z,
        values: card.values.clone(),
        not_comparable,
    }
}

/// Judges one new run (`candidate`, e.g. a health check's) against the envelope of the cards in
/// `envelope` (runs of other stacks and profiles included: health is about the hardware). Only
/// the metrics the candidate measured count. Returns the card's report and how many cards the
/// envelope held.
pub fn judge_one(envelope: &[LoadedRun], candidate: &LoadedRun, rule: &FleetRule) -> (CardReport, usize) {
    let class = candidate.doc.gpu.class_key();
    let mut by_card: BTreeMap<String, Vec<&LoadedRun>> = BTreeMap::new();
    for r in envelope.iter().filter(|r| r.doc.gpu.class_key() == class) {
        by_card.entry(r.doc.gpu.uuid.clone()).or_default().push(r);
    }
    let mut order = Vec::new();
    let common = common_params(by_card.values().flatten().copied().chain(std::iter::once(candidate)));
    let cand = condense(&candidate.doc.gpu.uuid, vec![candidate], &common, &mut order);
    let mut ignored = Vec::new();
    let cards: Vec<Card> = by_card.into_iter().map(|(u, runs)| condense(&u, runs, &common, &mut ignored)).collect();
    let n = cards.len();
    let rows = judge_group(GroupKey { class: class.slug(), ..Default::default() }, &cards, &order, rule).envelope;
    let class_maps = sm::class_maps(&cards);
    (judge_card(&cand, &rows, &class_maps, n > 0, rule), n)
}
