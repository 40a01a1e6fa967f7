//! Levels of a latency-vs-footprint curve: each latency cluster that dominates somewhere is a
//! level; its capacity is the change point of the share of accesses served at or below it,
//! i.e. the largest footprint still served entirely by the level (seed 000's knee, found as
//! the point where the fraction curve leaves its plateau at 1).

use super::cluster::{self, Clusters};
use crate::dissect::data::{Curve, Point};

/// A cluster must serve at least this share of some point's accesses to be a level.
const LEVEL_SHARE: f64 = 0.3;
/// Smallest tolerance for stray slow accesses at a clean point.
const MIN_EPSILON: f64 = 0.002;
/// Relative tolerance when choosing the round value reported for a knee.
pub const ROUND_TOLERANCE: f64 = 0.01;

/// Where a level's capacity ends.
#[derive(Debug, Clone, PartialEq)]
pub struct Knee {
    /// Largest footprint served entirely by the level and those below it.
    pub last_clean: u64,
    /// Smallest footprint above it that is not.
    pub first_dirty: u64,
    /// The reported capacity: the roundest number near the bracket.
    pub value: u64,
    /// Confidence in `value`, 0 to 1.
    pub confidence: f64,
    /// Latency that separated served from not served, cycles.
    pub boundary_cycles: f64,
}

/// One level of a curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    /// Index of its latency cluster.
    pub cluster: usize,
    /// Latency of a hit, cycles, timer overhead removed.
    pub latency_cycles: f64,
    /// Median latency at each point the level serves (most accesses), overhead removed.
    pub samples: Vec<f64>,
    /// Where the level's capacity ends, if the curve shows it.
    pub capacity: Option<Knee>,
}

/// The levels of one curve.
#[derive(Debug, Clone, PartialEq)]
pub struct CurveFit {
    /// Latency clusters of the curve's points.
    pub clusters: Clusters,
    /// Levels, fastest first.
    pub levels: Vec<Level>,
}

/// The roundest number (most trailing zero bits) within `[lo, hi]` widened by `tolerance`.
pub fn roundest(lo: u64, hi: u64, tolerance: f64) -> u64 {
    let a = ((lo as f64) * (1.0 - tolerance)).ceil().max(1.0) as u64;
    let b = ((hi as f64) * (1.0 + tolerance)).floor() as u64;
    for k in (0..63).rev() {
        let m = 1u64 << k;
        let c = a.div_ceil(m) * m;
        if c <= b {
            return c;
        }
    }
    lo
}

/// Fits the levels of a footprint curve with its own clusters.
pub fn fit(curve: &Curve, overhead: f64) -> CurveFit {
    let hists: Vec<_> = curve.points.iter().map(|p| &p.hist).collect();
    fit_with(&curve.points, cluster::find(&hists), overhead, curve.stride_bytes)
}

/// Fits the levels of `points` (ascending footprints, multiples of `resolution` bytes) with
/// given clusters.
pub fn fit_with(points: &[Point], clusters: Clusters, overhead: f64, resolution: u64) -> CurveFit {
    let shares: Vec<Vec<f64>> = points.iter().map(|p| clusters.shares(&p.hist)).collect();
    let mut levels = Vec::new();
    for c in 0..clusters.centers.len() {
        let top = shares.iter().map(|s| s[c]).fold(0.0, f64::max);
        if top < LEVEL_SHARE {
            continue;
        }
        let lo = if c == 0 { 0.0 } else { clusters.bounds[c - 1] };
        let hi = clusters.bounds.get(c).copied().unwrap_or(f64::INFINITY);
        let mut medians: Vec<f64> = points
            .iter()
            .zip(&shares)
            .filter(|(_, s)| s[c] >= 0.5)
            .filter_map(|(p, _)| p.hist.median_between(lo, hi))
            .collect();
        let samples: Vec<f64> = medians.iter().map(|m| m - overhead).collect();
        medians.sort_by(f64::total_cmp);
        let latency = medians.get(medians.len() / 2).copied().unwrap_or(clusters.centers[c]) - overhead;
        let capacity = clusters.bounds.get(c).and_then(|&b| knee(points, b, &clusters, c, resolution));
        levels.push(Level { cluster: c, latency_cycles: latency, samples, capacity });
    }
    CurveFit { clusters, levels }
}

/// The change point of the share of accesses faster than `boundary` (the upper bound of
/// cluster `c`): the knee of the level that cluster belongs to. A bracket no wider than
/// `resolution` bytes (the sweep's stride) is as sharp as the sweep can be.
pub fn knee(points: &[Point], boundary: f64, clusters: &Clusters, c: usize, resolution: u64) -> Option<Knee> {
    let dirty: Vec<f64> = points.iter().map(|p| 1.0 - p.hist.fraction_below(boundary)).collect();
    let floor = dirty.iter().copied().fold(f64::INFINITY, f64::min);
    let eps = (3.0 * floor).max(MIN_EPSILON);
    let clean: Vec<bool> = dirty.iter().map(|d| *d <= eps).collect();
    let first = (0..points.len()).find(|&i| !clean[i] && (i + 1 == points.len() || !clean[i + 1]))?;
    let last_clean = (0..first).rev().find(|&i| clean[i])?;
    let violations = (0..first).filter(|&i| !clean[i]).count() + (first..points.len()).filter(|&i| clean[i]).count();
    let (lo, hi) = (points[last_clean].x, points[first].x);
    let value = roundest(lo, hi, ROUND_TOLERANCE);
    let separation = clusters.centers.get(c + 1).map(|n| n / clusters.centers[c]).unwrap_or(2.0);
    let s_sep = ((separation - 1.0) / 0.25).clamp(0.0, 1.0);
    let width = hi as f64 / lo as f64 - 1.0;
    let s_width = if width <= 0.02 || hi - lo <= resolution { 1.0 } else { (0.02 / width).sqrt().max(0.3) };
    let s_clean = 1.0 / (1.0 + violations as f64);
    let depth = dirty[first..].iter().copied().fold(0.0, f64::max);
    let s_depth = (depth / 0.5).min(1.0);
    let s_round = if (lo..=hi).contains(&value) { 1.0 } else { 0.85 };
    Some(Knee {
        last_clean: lo,
        first_dirty: hi,
        value,
        confidence: s_sep * s_width * s_clean * s_depth * s_round,
        boundary_cycles: boundary,
    })
}

/// Footprint brackets `(last_clean, first_dirty)` of a curve's knees that are wider than
/// `resolution` (relative): where more points would sharpen a capacity.
pub fn zoom_brackets(curve: &Curve, overhead: f64, resolution: f64) -> Vec<(u64, u64)> {
    fit(curve, overhead)
        .levels
        .iter()
        .filter_map(|l| l.capacity.as_ref())
        .filter(|k| k.first_dirty as f64 > k.last_clean as f64 * (1.0 + resolution))
        .map(|k| (k.last_clean, k.first_dirty))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dissect::data::{Axis, Histogram, Path};

    fn point(x: u64, parts: &[(u32, u64)]) -> Point {
        let mut lat = Vec::new();
        for &(c, n) in parts {
            for i in 0..n {
                lat.push(c + (i % 5) as u32);
            }
        }
        Point { x, steps: lat.len() as u64, mean_cycles: 0.0, hist: Histogram::of_latencies(2, &lat) }
    }

    fn curve(points: Vec<Point>) -> Curve {
        Curve {
            id: "size/ca".into(),
            path: Path::Ca,
            axis: Axis::Footprint,
            stride_bytes: 32,
            footprint_bytes: 0,
            carveout_percent: None,
            points,
        }
    }

    #[test]
    fn roundest_prefers_many_trailing_zeros() {
        assert_eq!(roundest(24576, 24608, 0.01), 24576);
        assert_eq!(roundest(61 << 20, (61 << 20) + 4096, 0.01), 61 << 20);
        assert_eq!(roundest(1000, 1001, 0.0), 1000);
        assert_eq!(roundest(62_000_000, 63_000_000, 0.01), 62_914_560); // 60 MiB
    }

    #[test]
    fn two_levels_and_their_knee() {
        let c = curve(vec![
            point(8 << 10, &[(40, 1000)]),
            point(16 << 10, &[(40, 1000)]),
            point(24 << 10, &[(40, 1000)]),
            point((24 << 10) + 32, &[(40, 900), (300, 100)]),
            point(32 << 10, &[(300, 1000)]),
            point(64 << 10, &[(300, 1000)]),
        ]);
        let f = fit(&c, 10.0);
        assert_eq!(f.levels.len(), 2);
        assert!((f.levels[0].latency_cycles - 32.0).abs() < 3.0, "{:?}", f.levels[0]);
        let k = f.levels[0].capacity.as_ref().unwrap();
        assert_eq!((k.last_clean, k.first_dirty, k.value), (24 << 10, (24 << 10) + 32, 24 << 10));
        assert!(k.confidence > 0.9, "{k:?}");
        assert!(f.levels[1].capacity.is_none());
        assert!(zoom_brackets(&c, 10.0, 0.01).is_empty());
    }

    #[test]
    fn a_coarse_bracket_asks_for_zoom_and_lowers_confidence() {
        let c =
            curve(vec![point(8 << 10, &[(40, 1000)]), point(16 << 10, &[(40, 1000)]), point(32 << 10, &[(300, 1000)])]);
        assert_eq!(zoom_brackets(&c, 0.0, 0.01), vec![(16 << 10, 32 << 10)]);
        assert!(fit(&c, 0.0).levels[0].capacity.as_ref().unwrap().confidence < 0.5);
    }

    #[test]
    fn no_knee_when_every_point_is_served_by_one_level() {
        let c = curve(vec![point(8 << 10, &[(40, 1000)]), point(16 << 10, &[(40, 1000)])]);
        let f = fit(&c, 0.0);
        assert_eq!(f.levels.len(), 1);
        assert!(f.levels[0].capacity.is_none());
    }

    #[test]
    fn an_isolated_noisy_point_is_not_the_knee() {
        let c = curve(vec![
            point(4 << 10, &[(40, 1000)]),
            point(8 << 10, &[(40, 950), (300, 50)]),
            point(16 << 10, &[(40, 1000)]),
            point(32 << 10, &[(300, 1000)]),
            point(64 << 10, &[(300, 1000)]),
        ]);
        let k = fit(&c, 0.0).levels[0].capacity.clone().unwrap();
        assert_eq!(k.last_clean, 16 << 10);
        assert!(k.confidence < 0.6);
    }
}
