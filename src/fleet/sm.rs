//! Outlier SMs: per card, the SMs of a chip map ([`crate::results::SmMap`]) that stand out both
//! within the card (robust z over its SMs) and against the class's value for the same SM (robust
//! z over the cards), so that an SM slow on every card (the chip's layout) is not a defect.

use std::collections::BTreeMap;

use serde::Serialize;

use super::analysis::{Card, FleetRule};
use crate::results::Better;
use crate::stats::{mad, median, modified_z};

/// One SM of one card beyond the limits.
#[derive(Debug, Clone, Serialize)]
pub struct SmFlag {
    /// "<benchmark id>:<metric>" of the map.
    pub map: String,
    /// SM id (`%smid`).
    pub sm: u32,
    /// Its value (median over the card's runs).
    pub value: f64,
    /// Unit of the value.
    pub unit: String,
    /// The card's median over its SMs.
    pub card_median: f64,
    /// Relative change from the card's median, signed.
    pub change: f64,
    /// Robust z over the card's SMs, positive = worse.
    pub z_card: f64,
    /// Robust z against the class's values of this SM, positive = worse (absent when fewer
    /// than [`FleetRule::min_cards`] cards have the map).
    pub z_class: Option<f64>,
}

/// One chip map of one card: direction, unit and the per-SM median over its runs.
pub(crate) struct CardMap {
    better: Better,
    unit: String,
    per_sm: BTreeMap<u32, f64>,
}

/// The values of one chip map over the cards of a group: per SM, one value per card.
pub struct ClassMap {
    per_sm: BTreeMap<u32, Vec<f64>>,
    cards: usize,
}

/// Direction, unit, and every run's value per SM.
type RawMap = (Better, String, BTreeMap<u32, Vec<f64>>);

pub(crate) fn card_maps(card: &Card) -> BTreeMap<String, CardMap> {
    let mut raw: BTreeMap<String, RawMap> = BTreeMap::new();
    for r in &card.runs {
        // footprints between two levels mix near and far hits per SM (and runs recorded before
        // such footprints were chased one SM at a time also mix in the other SMs' lines)
        let l2 = r.doc.gpu.l2_bytes;
        let between_levels = |b: &crate::results::BenchmarkResult| {
            b.params.get("placement").and_then(|v| v.as_str()) == Some("each_sm")
                || b.params.get("bytes").and_then(|v| v.as_u64()).is_some_and(|bytes| {
                    crate::families::latency::Placement::for_footprint(bytes, l2)
                        == crate::families::latency::Placement::EachSmInTurn
                })
        };
        for b in r.doc.benchmarks.iter().filter(|b| !between_levels(b)) {
            for m in &b.sm_maps {
                // Direction from the metric of the same name; a map without one is a latency-like
                // quantity (cycles), lower being better.
                let better = b.metric(&m.metric).map(|x| x.better).unwrap_or(Better::Lower);
                let e =
                    raw.entry(format!("{}:{}", b.id, m.metric)).or_insert((better, m.unit.clone(), BTreeMap::new()));
                for (sm, v) in m.sm.iter().zip(&m.values) {
                    e.2.entry(*sm).or_default().push(*v);
                }
            }
        }
    }
    raw.into_iter()
        .map(|(k, (better, unit, per))| {
            let per_sm = per
                .into_iter()
                .map(|(sm, v)| (sm, median(&v).unwrap_or(f64::NAN)))
                .filter(|(_, v)| v.is_finite())
                .collect();
            (k, CardMap { better, unit, per_sm })
        })
        .collect()
}

pub(crate) fn class_maps(cards: &[Card]) -> BTreeMap<String, ClassMap> {
    let mut out: BTreeMap<String, ClassMap> = BTreeMap::new();
    for c in cards {
        for (k, m) in card_maps(c) {
            let e = out.entry(k).or_insert(ClassMap { per_sm: BTreeMap::new(), cards: 0 });
            e.cards += 1;
            for (sm, v) in m.per_sm {
                e.per_sm.entry(sm).or_default().push(v);
            }
        }
    }
    out
}

pub(crate) fn outlier_sms(card: &Card, class: &BTreeMap<String, ClassMap>, rule: &FleetRule) -> Vec<SmFlag> {
    let mut flags = Vec::new();
    for (key, map) in card_maps(card) {
        let values: Vec<f64> = map.per_sm.values().copied().collect();
        let quartiles = crate::results::Spread::of(&values);
        if !((quartiles.q3 - quartiles.q1) <= rule.sm_map_max_iqr * quartiles.median.abs()) {
            continue;
        }
        let (Some(med), Some(spread)) = (median(&values), mad(&values)) else { continue };
        let sign = if map.better == Better::Lower { 1.0 } else { -1.0 };
        let class_map = class.get(&key).filter(|c| c.cards >= rule.min_cards);
        for (&sm, &v) in &map.per_sm {
            let z_card = sign * modified_z(v, med, spread, rule.mad_floor);
            let change = if med != 0.0 { (v - med) / med.abs() } else { 0.0 };
            if z_card <= rule.z_limit || sign * change <= rule.sm_min_effect {
                continue;
            }
            let z_class = class_map.and_then(|c| c.per_sm.get(&sm)).filter(|xs| xs.len() >= rule.min_cards).map(|xs| {
                let (m, spread) = (median(xs).unwrap_or(f64::NAN), mad(xs).unwrap_or(f64::NAN));
                sign * modified_z(v, m, spread, rule.mad_floor)
            });
            if z_class.is_some_and(|z| z <= rule.z_limit) {
                continue;
            }
            flags.push(SmFlag {
                map: key.clone(),
                sm,
                value: v,
                unit: map.unit.clone(),
                card_median: med,
                change,
                z_card,
                z_class,
            });
        }
    }
    flags.sort_by(|a, b| b.z_card.total_cmp(&a.z_card));
    flags
}
