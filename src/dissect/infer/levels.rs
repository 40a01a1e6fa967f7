//! Levels of a latency-vs-footprint curve. Every latency cluster that serves a large share of
//! some point's accesses is a level. A level whose share rises to a plateau and then falls is a
//! cache; its capacity is the change point where its share leaves the plateau, i.e. the largest
//! footprint it still serves entirely (Meltzer et al.'s knee). A level whose share holds to the
//! largest footprint backs the others (the L2 of an L1 sweep, DRAM).
//!
//! A level need not serve every access on its plateau: seen from one SM, a two-partition L2
//! serves half of a footprint beyond the near partition from the far one while the other half
//! already comes from DRAM. Its knee is then where its own share leaves its plateau value, tested
//! against the binomial noise of that share; a level that serves every access is tested, like
//! Meltzer et al.'s curves, on the share of accesses at or below its latency against the stray slow
//! accesses seen where it is clean.

use super::cluster::{self, Clusters};
use crate::dissect::data::{Curve, Histogram, Point};
use crate::stats::median_element;

/// A cluster must serve at least this share of some point's accesses to be a level.
const LEVEL_SHARE: f64 = 0.2;
/// A level whose plateau share is at least this serves every access there (a pure level).
const PURE_SHARE: f64 = 0.9;
/// Relative drop of a mixture level's share that counts, beyond its noise.
const MIXTURE_DROP: f64 = 0.02;
/// Standard deviations of binomial noise a drop must exceed.
const Z_DIRTY: f64 = 4.0;
/// Relative distance from the knee to the point where the level has lost half its share, beyond
/// which the knee's confidence falls: about what a direct-mapped LRU cache shows.
const MAX_BREADTH: f64 = 0.35;

/// Where a level's capacity ends.
#[derive(Debug, Clone, PartialEq)]
pub struct Knee {
    /// Largest footprint served entirely by the level (and those below it).
    pub last_clean: u64,
    /// Smallest footprint above it that is not.
    pub first_dirty: u64,
    /// The reported capacity: `last_clean` where the bracket is one sweep step wide, else the
    /// roundest of the footprints the bracket leaves possible.
    pub value: u64,
    /// Confidence in `value`, 0 to 1.
    pub confidence: f64,
    /// Footprints the bracket leaves possible for the capacity, one sweep step apart (1 where
    /// the bracket is one step wide).
    pub candidates: u64,
    /// The confidence were the bracket one step wide (what other evidence that picks one of
    /// the candidates may restore).
    pub pinned_confidence: f64,
    /// Latency that separated served from not served, cycles.
    pub boundary_cycles: f64,
    /// Footprints around the point where the level has lost half of the share it loses by the
    /// largest footprint.
    pub half: Option<(u64, u64)>,
}

/// What a level does over the curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Its share rises to a plateau and falls again: a cache with a capacity.
    Cache,
    /// Its share holds to the largest footprint: the level behind the others.
    Backing,
    /// Neither (a level the sweep catches only in passing).
    Transient,
}

/// One level of a curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    /// Index of its (first) latency cluster.
    pub cluster: usize,
    /// Index of its last latency cluster (several when its latency has several modes).
    pub last_cluster: usize,
    /// Latency of a hit, cycles, timer overhead removed.
    pub latency_cycles: f64,
    /// Median latency at each point the level serves (its plateau), overhead removed.
    pub samples: Vec<f64>,
    /// Share of accesses it serves on its plateau.
    pub plateau_share: f64,
    /// Cache, backing level or transient.
    pub role: Role,
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
    /// Median latency of all accesses at the points the backing levels serve entirely
    /// (overhead removed), with one sample per such point.
    pub backing: Option<(f64, Vec<f64>)>,
}

impl CurveFit {
    /// The levels with a capacity role, fastest first.
    pub fn caches(&self) -> impl Iterator<Item = &Level> {
        self.levels.iter().filter(|l| l.role == Role::Cache)
    }
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

/// Share of `h`'s accesses in clusters `lo..=hi`.
fn share_in(clusters: &Clusters, h: &Histogram, lo: usize, hi: usize) -> f64 {
    clusters.shares(h)[lo..=hi].iter().sum()
}

/// Fits the levels of `points` (ascending footprints, multiples of `resolution` bytes) with
/// given clusters. Neighbouring caches that each serve only part of the accesses but together
/// serve all of them on one plateau are one level whose latency has several modes (L2 slices
/// at different distances): their shares are summed.
pub fn fit_with(points: &[Point], clusters: Clusters, overhead: f64, resolution: u64) -> CurveFit {
    let mut levels: Vec<Level> =
        (0..clusters.centers.len()).filter_map(|c| level_over(points, &clusters, c, c, overhead, resolution)).collect();
    let partial = |l: &Level| l.role != Role::Backing && l.plateau_share < PURE_SHARE;
    let mut i = 0;
    while i + 1 < levels.len() {
        let (a, b) = (&levels[i], &levels[i + 1]);
        let merged = (partial(a) && partial(b) && b.cluster == a.last_cluster + 1)
            .then(|| level_over(points, &clusters, a.cluster, b.last_cluster, overhead, resolution))
            .flatten()
            .filter(|m| m.role == Role::Cache && m.plateau_share >= PURE_SHARE);
        match merged {
            Some(m) => {
                levels[i] = m;
                levels.remove(i + 1);
            }
            None => i += 1,
        }
    }
    let backing = backing_latency(points, &clusters, &levels, overhead);
    CurveFit { clusters, levels, backing }
}

/// Shares of clusters `lo..=hi` at every point.
fn shares_over(points: &[Point], clusters: &Clusters, lo: usize, hi: usize) -> Vec<f64> {
    points.iter().map(|p| share_in(clusters, &p.hist, lo, hi)).collect()
}

/// The level made of clusters `lo..=hi`, if it serves a large share somewhere.
fn level_over(
    points: &[Point],
    clusters: &Clusters,
    lo: usize,
    hi: usize,
    overhead: f64,
    resolution: u64,
) -> Option<Level> {
    let own = shares_over(points, clusters, lo, hi);
    let top = own.iter().copied().fold(0.0, f64::max);
    if top < LEVEL_SHARE {
        return None;
    }
    let plateau_share = plateau(&own, top);
    let on_plateau: Vec<bool> = own.iter().map(|s| *s >= 0.9 * plateau_share).collect();
    let from = if lo == 0 { 0.0 } else { clusters.bounds[lo - 1] };
    let to = clusters.bounds.get(hi).copied().unwrap_or(f64::INFINITY);
    let medians: Vec<f64> = points
        .iter()
        .zip(&on_plateau)
        .filter(|(_, on)| **on)
        .filter_map(|(p, _)| p.hist.median_between(from, to))
        .collect();
    let samples: Vec<f64> = medians.iter().map(|m| m - overhead).collect();
    let latency = median_element(&medians).unwrap_or(clusters.centers[lo]) - overhead;
    let start = on_plateau.iter().position(|&b| b).unwrap_or(0);
    // A level that still serves its plateau share at the largest footprint backs the others;
    // one that has lost part of it for good is a cache with a knee.
    let dirty = dirty_points(points, clusters, lo, hi, plateau_share);
    let capacity = knee(points, clusters, (lo, hi), plateau_share, start, resolution);
    let role = match (dirty.last(), &capacity) {
        (Some(false), _) | (None, _) => Role::Backing,
        (Some(true), Some(_)) => Role::Cache,
        (Some(true), None) => Role::Transient,
    };
    let capacity = if role == Role::Cache { capacity } else { None };
    Some(Level { cluster: lo, last_cluster: hi, latency_cycles: latency, samples, plateau_share, role, capacity })
}

/// A level's plateau share: the median of its shares that come within 10% of the highest.
fn plateau(own: &[f64], top: f64) -> f64 {
    let high: Vec<f64> = own.iter().copied().filter(|s| *s >= 0.9 * top).collect();
    median_element(&high).unwrap_or(f64::NAN)
}

fn backing_latency(points: &[Point], clusters: &Clusters, levels: &[Level], overhead: f64) -> Option<(f64, Vec<f64>)> {
    let backing: Vec<usize> = levels.iter().filter(|l| l.role == Role::Backing).map(|l| l.cluster).collect();
    let first = *backing.first()?;
    let lo = if first == 0 { 0.0 } else { clusters.bounds[first - 1] };
    let samples: Vec<f64> = points
        .iter()
        .filter(|p| share_in(clusters, &p.hist, first, clusters.centers.len() - 1) >= PURE_SHARE)
        .filter_map(|p| p.hist.median_between(lo, f64::INFINITY))
        .map(|m| m - overhead)
        .collect();
    Some((median_element(&samples)?, samples))
}

/// Whether each point has lost part of the share of the level of clusters `lo..=hi`: for a pure
/// level, more accesses above its latency than the stray slow ones seen where it is clean; for
/// a mixture level, a drop of its own share beyond binomial noise and [`MIXTURE_DROP`].
fn dirty_points(points: &[Point], clusters: &Clusters, lo: usize, hi: usize, plateau_share: f64) -> Vec<bool> {
    if plateau_share >= PURE_SHARE {
        let deficit: Vec<f64> = points.iter().map(|p| 1.0 - share_in(clusters, &p.hist, 0, hi)).collect();
        // Stray slow accesses: the typical deficit before the level clearly runs out.
        let end = deficit.iter().position(|d| *d > 0.05).unwrap_or(deficit.len());
        let floor = median_element(&deficit[..end]).unwrap_or(0.0);
        points
            .iter()
            .zip(&deficit)
            .map(|(p, d)| {
                let n = p.hist.total() as f64;
                let expected = floor * n;
                d * n > expected + Z_DIRTY * (expected + 1.0).sqrt() + 2.0
            })
            .collect()
    } else {
        points
            .iter()
            .map(|p| {
                let n = p.hist.total().max(1) as f64;
                let s = share_in(clusters, &p.hist, lo, hi);
                let drop = plateau_share - s;
                let sd = (plateau_share * (1.0 - plateau_share) / n).sqrt();
                drop > Z_DIRTY * sd && drop > MIXTURE_DROP * plateau_share
            })
            .collect()
    }
}

/// The knee of the cache level of clusters `lo..=hi` (plateau share `plateau_share`, first on
/// its plateau at point `start`): the change point where its share leaves the plateau. A bracket
/// no wider than `resolution` bytes (the sweep's stride) is as sharp as the sweep can be.
pub fn knee(
    points: &[Point],
    clusters: &Clusters,
    (lo, hi): (usize, usize),
    plateau_share: f64,
    start: usize,
    resolution: u64,
) -> Option<Knee> {
    let dirty = dirty_points(points, clusters, lo, hi, plateau_share);
    let n = points.len();
    let first = (start..n).find(|&i| dirty[i] && (i + 1 == n || dirty[i + 1]))?;
    let last_clean = (start..first).rev().find(|&i| !dirty[i])?;
    let violations = (start..first).filter(|&i| dirty[i]).count() + (first..n).filter(|&i| !dirty[i]).count();
    let (x0, x1) = (points[last_clean].x, points[first].x);
    // The capacity is a footprint the level still serves entirely: from the last clean point up
    // to one step below the first dirty one. The roundest of them is a guess where there are
    // several, and the confidence says so.
    let step = resolution.max(1);
    let candidates = (x1.saturating_sub(x0) / step).max(1);
    let value = if candidates == 1 { x0 } else { roundest(x0, x1 - step, 0.0) };
    let own = shares_over(points, clusters, lo, hi);
    let separation = clusters.centers.get(hi + 1).map(|n| n / clusters.centers[hi]).unwrap_or(2.0);
    let s_sep = ((separation - 1.0) / 0.25).clamp(0.0, 1.0);
    let width = x1 as f64 / x0 as f64 - 1.0;
    let s_width = if candidates == 1 {
        1.0
    } else {
        let relative = if width <= 0.02 { 1.0 } else { (0.02 / width).sqrt() };
        (0.75 / (candidates as f64).sqrt()).min(relative).clamp(0.3, 0.75)
    };
    let s_clean = 1.0 / (1.0 + violations as f64);
    let depth = own[first..].iter().map(|s| 1.0 - s / plateau_share).fold(0.0, f64::max);
    let s_depth = (depth / 0.5).min(1.0);
    // Half of the share the level loses by the largest footprint.
    let target = 0.5 * (plateau_share + own[n - 1]);
    let half =
        (last_clean..n - 1).find(|&i| own[i] >= target && own[i + 1] < target).map(|i| (points[i].x, points[i + 1].x));
    // A set-associative LRU cache loses half its share within a third of its capacity beyond
    // the knee (a direct-mapped one; more ways, sooner); a broader fall means sets that fill
    // unevenly or a policy that keeps lines, and a knee that understates the capacity.
    let breadth = half.map(|(a, b)| ((a as f64 * b as f64).sqrt() / x0 as f64 - 1.0).max(0.0)).unwrap_or(0.0);
    let s_breadth = if breadth <= MAX_BREADTH { 1.0 } else { MAX_BREADTH / breadth };
    let boundary_cycles = clusters.bounds.get(hi).copied().unwrap_or(f64::INFINITY);
    let pinned_confidence = s_sep * s_clean * s_depth * s_breadth;
    Some(Knee {
        last_clean: x0,
        first_dirty: x1,
        value,
        confidence: pinned_confidence * s_width,
        candidates,
        pinned_confidence,
        boundary_cycles,
        half,
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

/// The hit/miss window of a footprint curve's first level, for per-access traces: latencies
/// from the boundary above every cluster already present at the smallest footprint (where the
/// level certainly holds everything) up to twice the slowest cluster's latency (slower
/// accesses are stray interruptions).
pub fn miss_window(curve: &Curve) -> Option<(f64, f64)> {
    let hists: Vec<&Histogram> = curve.points.iter().map(|p| &p.hist).collect();
    let k = cluster::find(&hists);
    let first = curve.points.first()?;
    let hits = k.shares(&first.hist).iter().rposition(|s| *s >= 0.01)?;
    Some((*k.bounds.get(hits)?, 2.0 * k.centers.last()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dissect::data::{Axis, Path};

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
        assert_eq!((f.levels[0].role, f.levels[1].role), (Role::Cache, Role::Backing));
        assert!((f.levels[0].latency_cycles - 32.0).abs() < 3.0, "{:?}", f.levels[0]);
        let k = f.levels[0].capacity.as_ref().unwrap();
        assert_eq!((k.last_clean, k.first_dirty, k.value), (24 << 10, (24 << 10) + 32, 24 << 10));
        assert_eq!(k.half, Some(((24 << 10) + 32, 32 << 10)));
        assert!(k.confidence > 0.9, "{k:?}");
        assert!(f.levels[1].capacity.is_none());
        assert!(zoom_brackets(&c, 10.0, 0.01).is_empty());
        assert!((f.backing.unwrap().0 - 292.0).abs() < 5.0);
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

    /// Seen from one SM, a two-partition L2: near hits up to the near capacity, then half the
    /// lines are far hits and half DRAM through the near side, then all DRAM. The far level's
    /// capacity is where its own share leaves its plateau of one half, not where the first DRAM
    /// access appears.
    #[test]
    fn a_level_that_serves_half_the_accesses_has_its_own_knee() {
        let mb = 1u64 << 20;
        let c = curve(vec![
            point(8 * mb, &[(280, 4000)]),
            point(16 * mb, &[(280, 4000)]),
            point(24 * mb, &[(280, 4000)]),
            point(32 * mb, &[(280, 600), (460, 1700), (560, 1700)]),
            point(40 * mb, &[(460, 2000), (560, 2000)]),
            point(48 * mb, &[(460, 2000), (560, 2000)]),
            point(56 * mb, &[(460, 1990), (560, 2000), (740, 10)]),
            point(60 * mb, &[(460, 1700), (560, 2000), (740, 300)]),
            point(64 * mb, &[(560, 2000), (740, 2000)]),
            point(128 * mb, &[(560, 2000), (740, 2000)]),
        ]);
        let f = fit(&c, 0.0);
        let caches: Vec<&Level> = f.caches().collect();
        assert_eq!(caches.len(), 2, "{:#?}", f.levels);
        let near = caches[0].capacity.as_ref().unwrap();
        assert_eq!((near.last_clean, near.first_dirty), (24 * mb, 32 * mb));
        let far = caches[1].capacity.as_ref().unwrap();
        assert_eq!((far.last_clean, far.first_dirty), (56 * mb, 60 * mb), "{far:?}");
        assert!((caches[1].plateau_share - 0.5).abs() < 0.02);
        assert_eq!(far.half, Some((60 * mb, 64 * mb)));
        let backing: Vec<Role> = f.levels.iter().skip(2).map(|l| l.role).collect();
        assert_eq!(backing, vec![Role::Backing, Role::Backing]);
        assert!((f.backing.unwrap().0 - 650.0).abs() < 100.0);
    }

    #[test]
    fn two_modes_of_one_level_are_one_cache() {
        // Near-L2 hits at two latencies whose ratio drifts with the footprint: the clusters do
        // not co-vary closely enough to merge, but they end at one knee.
        let mb = 1u64 << 20;
        let c = curve(vec![
            point(8 * mb, &[(262, 3000), (306, 1000)]),
            point(16 * mb, &[(262, 2000), (306, 2000)]),
            point(24 * mb, &[(262, 1500), (306, 2500)]),
            point(32 * mb, &[(700, 4000)]),
            point(64 * mb, &[(700, 4000)]),
        ]);
        let f = fit(&c, 0.0);
        let caches: Vec<&Level> = f.caches().collect();
        assert_eq!(caches.len(), 1, "{:#?}", f.levels);
        assert_eq!((caches[0].cluster, caches[0].last_cluster), (0, 1));
        let k = caches[0].capacity.as_ref().unwrap();
        assert_eq!((k.last_clean, k.first_dirty), (24 * mb, 32 * mb));
    }

    #[test]
    fn the_miss_window_skips_every_cluster_present_where_everything_hits() {
        // A trace kernel's hits come at two latencies (42 and 50); misses at 290.
        let c = curve(vec![
            point(20 << 10, &[(42, 150), (50, 1000)]),
            point(21 << 10, &[(42, 150), (50, 1000)]),
            point(22 << 10, &[(42, 140), (50, 900), (290, 110)]),
        ]);
        let (lo, hi) = miss_window(&c).unwrap();
        assert!(lo > 56.0 && lo < 280.0 && hi > 560.0, "{lo} {hi}");
    }
}
