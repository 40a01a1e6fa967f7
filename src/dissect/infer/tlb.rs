//! TLBs from footprint sweeps at large strides (seeds 000, 001 section 4.4).
//!
//! At stride `s`, a TLB of `E` entries over pages of `P` bytes stops covering the footprint at
//! `E * max(s, P)`: below the page size the knee stays at the reach `E * P`, from the page size
//! on it grows with the stride. So the knee divided by the stride is flat (= `E`) for the
//! largest strides, and the reach at small strides divided by `E` is the page size.

use super::cluster;
use super::levels::knee;
use super::traces::Found;
use crate::dissect::data::Curve;

/// One TLB level.
#[derive(Debug, Clone, PartialEq)]
pub struct TlbLevel {
    /// Entries.
    pub entries: Found<u64>,
    /// Bytes it covers (entries x page).
    pub reach: Found<u64>,
    /// Cycles a miss in it adds.
    pub miss_penalty_cycles: f64,
}

/// What the TLB sweeps show.
#[derive(Debug, Clone, PartialEq)]
pub struct TlbFit {
    /// Page size.
    pub page: Found<u64>,
    /// TLB levels, nearest first.
    pub levels: Vec<TlbLevel>,
    /// Per stride: the knee footprint of each level (None where the sweep did not reach it).
    pub knees: Vec<(u64, Vec<Option<u64>>)>,
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Fits the TLB curves (one footprint curve per stride).
pub fn fit(curves: &[&Curve]) -> Option<TlbFit> {
    let mut curves: Vec<&Curve> = curves.to_vec();
    curves.sort_by_key(|c| c.stride_bytes);
    let hists: Vec<_> = curves.iter().flat_map(|c| c.points.iter().map(|p| &p.hist)).collect();
    let clusters = cluster::find(&hists);
    if clusters.bounds.is_empty() {
        return None;
    }
    let knees: Vec<(u64, Vec<Option<u64>>)> = curves
        .iter()
        .map(|c| {
            let k = (0..clusters.bounds.len())
                .map(|i| knee(&c.points, clusters.bounds[i], &clusters, i, c.stride_bytes).map(|k| k.value))
                .collect();
            (c.stride_bytes, k)
        })
        .collect();
    let level0 = level_entries(&knees, 0)?;
    let (entries0, flat_from, reach_small) = level0;
    let page_raw = reach_small.map(|r| r / entries0 as f64);
    let page = match page_raw {
        Some(p) => {
            let lg = p.log2();
            let off = (lg - lg.round()).abs();
            let value = 1u64 << (lg.round().max(0.0) as u32);
            Found {
                value,
                confidence: (1.0 - 2.0 * off).clamp(0.0, 1.0),
                method: format!(
                    "reach at strides below {flat_from} B ({:.0} B) / {entries0} entries from the larger strides",
                    p * entries0 as f64
                ),
            }
        }
        None => Found {
            value: flat_from,
            confidence: 0.3,
            method: format!("knees grow with every stride swept: page at most {flat_from} B"),
        },
    };
    let mut levels = Vec::new();
    for i in 0..clusters.bounds.len() {
        let Some((entries, _, _)) = level_entries(&knees, i) else { break };
        let confidence = page.confidence.min(0.95);
        levels.push(TlbLevel {
            entries: Found {
                value: entries,
                confidence,
                method: format!("TLB level {}: knee / stride, flat over the largest strides", i + 1),
            },
            reach: Found {
                value: entries * page.value,
                confidence,
                method: format!("{entries} entries x {} B pages", page.value),
            },
            miss_penalty_cycles: clusters.centers.get(i + 1).map(|c| c - clusters.centers[i]).unwrap_or(f64::NAN),
        });
    }
    Some(TlbFit { page, levels, knees })
}

/// Entries of level `i` (knee / stride over the flat large-stride group), the smallest stride of
/// that group, and the median knee of the strides below it (the reach), if any.
fn level_entries(knees: &[(u64, Vec<Option<u64>>)], i: usize) -> Option<(u64, u64, Option<f64>)> {
    let pts: Vec<(u64, f64)> =
        knees.iter().filter_map(|(s, k)| k.get(i).copied().flatten().map(|k| (*s, k as f64))).collect();
    if pts.is_empty() {
        return None;
    }
    let ratio: Vec<f64> = pts.iter().map(|(s, k)| k / *s as f64).collect();
    let last = ratio.len() - 1;
    let mut start = last;
    while start > 0 && (ratio[start - 1] / ratio[last] - 1.0).abs() < 0.1 {
        start -= 1;
    }
    let mut flat: Vec<f64> = ratio[start..].to_vec();
    let entries = median(&mut flat).round().max(1.0) as u64;
    let mut small: Vec<f64> = pts[..start].iter().map(|p| p.1).collect();
    let reach = (!small.is_empty()).then(|| median(&mut small));
    Some((entries, pts[start].0, reach))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dissect::data::{Axis, Histogram, Path, Point};

    /// Latency of a chase at stride `s` over `f` bytes with 2 TLB levels (16 and 64 entries) of
    /// 2 MiB pages, LRU: base 300, +100 on an L1 TLB miss, +400 on an L2 TLB miss.
    fn tlb_curve(s: u64) -> Curve {
        let page = 2u64 << 20;
        let points = (0..40)
            .map(|k| 4 * s * (1u64 << (k / 4)) + (k % 4) * s * (1u64 << (k / 4)))
            .filter(|f| f / s <= 1 << 15)
            .map(|f| {
                let pages = f / s.max(page);
                let per_page = (page / s).max(1);
                let extra = if pages > 64 {
                    500
                } else if pages > 16 {
                    100
                } else {
                    0
                };
                let lat: Vec<u32> =
                    (0..2048u64).map(|i| if extra > 0 && i % per_page == 0 { 300 + extra } else { 300 }).collect();
                Point { x: f, steps: 2048, mean_cycles: 0.0, hist: Histogram::of_latencies(2, &lat) }
            })
            .collect();
        Curve {
            id: format!("tlb/stride={s}"),
            path: Path::Tlb,
            axis: Axis::Footprint,
            stride_bytes: s,
            footprint_bytes: 0,
            carveout_percent: None,
            points,
        }
    }

    #[test]
    fn page_and_entries_from_knees() {
        let curves: Vec<Curve> = (16..=25).map(|k| tlb_curve(1 << k)).collect();
        let refs: Vec<&Curve> = curves.iter().collect();
        let f = fit(&refs).unwrap();
        assert_eq!(f.page.value, 2 << 20, "{f:?}");
        assert_eq!(f.levels[0].entries.value, 16);
        assert_eq!(f.levels[0].reach.value, 32 << 20);
        assert_eq!(f.levels[1].entries.value, 64);
        assert!(f.page.confidence > 0.8);
    }
}
