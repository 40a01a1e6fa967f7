//! Fetch granularity from a latency-vs-stride sweep (Meltzer et al.'s line-size plateau): over a
//! footprint that does not fit the level, a stride `s` below the granularity `g` misses on
//! `s / g` of the accesses and hits the rest; from `g` on every access misses.

use super::cluster;
use crate::dissect::data::Curve;

/// Miss share from which a stride counts as "every access misses".
const PLATEAU: f64 = 0.9;
/// Share of the smallest stride's accesses a cluster must serve to count as the level's hits.
const HIT_SHARE: f64 = 0.2;

/// The inferred granularity.
#[derive(Debug, Clone, PartialEq)]
pub struct Granularity {
    /// Bytes.
    pub bytes: u64,
    /// Confidence, 0 to 1.
    pub confidence: f64,
    /// How it was found.
    pub method: String,
    /// Miss share per stride.
    pub miss_share: Vec<(u64, f64)>,
}

fn nearest_power_of_two(x: f64) -> u64 {
    let lg = x.max(1.0).log2().round();
    1u64 << (lg as u32).min(62)
}

/// Infers the fetch granularity of a stride curve, if it shows one.
pub fn fetch_granularity(curve: &Curve) -> Option<Granularity> {
    let hists: Vec<_> = curve.points.iter().map(|p| &p.hist).collect();
    let clusters = cluster::find(&hists);
    // Hits: the clusters that serve a large share at the smallest stride, where the level hits
    // most (a level's hits may come at several latencies); misses: everything slower.
    let first = curve.points.first()?;
    let hits = clusters.shares(&first.hist).iter().rposition(|s| *s >= HIT_SHARE)?;
    let boundary = *clusters.bounds.get(hits)?;
    let miss: Vec<(u64, f64)> = curve.points.iter().map(|p| (p.x, 1.0 - p.hist.fraction_below(boundary))).collect();
    // The plateau: every access misses from this stride on (the next stride too; at the largest
    // strides a footprint of few lines may let a level keep some).
    let plateau_at =
        (0..miss.len()).find(|&i| miss[i].1 >= PLATEAU && miss.get(i + 1).is_none_or(|m| m.1 >= PLATEAU - 0.1))?;
    let g_plateau = miss[plateau_at].0;
    let mut ratio: Vec<u64> =
        miss[..plateau_at].iter().filter(|m| m.1 >= 0.03).map(|m| nearest_power_of_two(m.0 as f64 / m.1)).collect();
    ratio.sort();
    let (bytes, confidence, method) = if ratio.is_empty() {
        let c = if plateau_at == 0 { 0.5 } else { 0.7 };
        (g_plateau, c, format!("{}: every access misses from stride {g_plateau} B on", curve.id))
    } else {
        let agree = ratio.iter().filter(|&&r| r == g_plateau).count() as f64 / ratio.len() as f64;
        if agree >= 0.5 {
            (
                g_plateau,
                0.6 + 0.4 * agree,
                format!("{}: miss share s/{g_plateau} below stride {g_plateau} B, all above", curve.id),
            )
        } else {
            (g_plateau, 0.4, format!("{}: misses plateau at stride {g_plateau} B; the ramp below disagrees", curve.id))
        }
    };
    Some(Granularity { bytes, confidence, method, miss_share: miss })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dissect::data::{Axis, Histogram, Path, Point};

    fn stride_curve(g: u64, strides: &[u64]) -> Curve {
        let points = strides
            .iter()
            .map(|&s| {
                let per_line = (g / s).max(1);
                let lat: Vec<u32> = (0..4096u64).map(|i| if i % per_line == 0 { 300 } else { 40 }).collect();
                Point { x: s, steps: 4096, mean_cycles: 0.0, hist: Histogram::of_latencies(2, &lat) }
            })
            .collect();
        Curve {
            id: "stride/ca".into(),
            path: Path::Ca,
            axis: Axis::Stride,
            stride_bytes: 0,
            footprint_bytes: 1 << 20,
            carveout_percent: None,
            points,
        }
    }

    #[test]
    fn finds_the_sector_from_ramp_and_plateau() {
        let g = fetch_granularity(&stride_curve(32, &[4, 8, 16, 32, 64, 128, 256])).unwrap();
        assert_eq!(g.bytes, 32);
        assert!(g.confidence > 0.9);
        assert_eq!(fetch_granularity(&stride_curve(128, &[4, 8, 16, 32, 64, 128, 256])).unwrap().bytes, 128);
    }

    #[test]
    fn all_hits_or_all_misses_give_no_answer() {
        let all_hit = Curve {
            points: stride_curve(4, &[4, 8])
                .points
                .into_iter()
                .map(|mut p| {
                    p.hist = Histogram::of_latencies(2, &[40; 100]);
                    p
                })
                .collect(),
            ..stride_curve(4, &[4])
        };
        assert!(fetch_granularity(&all_hit).is_none());
    }
}
