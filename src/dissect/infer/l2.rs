//! The L2 from the step structure of its footprint sweep (`size/cg`), one meaning per fact.
//!
//! Seen from one SM, a two-partition L2 (Hopper) serves a footprint in three regimes: every
//! access hits the near partition (which also keeps copies of far-homed lines) up to its
//! capacity; beyond, the near-homed share comes from DRAM and the far-homed share still hits
//! the far partition; beyond the whole L2 every access comes from DRAM. An L2 with a near part
//! in front of the whole behaves the same with a far share of 1, and an L2 of one level has no
//! middle regime. Three shares per point tell the regimes apart:
//!
//! - near: accesses faster than the boundary above the curve's fastest level;
//! - L2: accesses faster than the DRAM floor, the 1st percentile of the largest footprint
//!   (which the plan sizes at four times the L2, so DRAM serves all of it);
//! - far: L2 minus near.
//!
//! Each step is where a share falls through half of its plateau and stays below: its bracket
//! (the sweep points either side) bounds it, its crossing is interpolated in log footprint;
//! its value is the roundest number between the start of the fall (or 5 % below the crossing)
//! and 1 % above the crossing; its confidence falls with the width of the crossing's bracket
//! and of the fall (a hashed cache's capacity is not pinned by its curve). Facts: `l2.near.size_bytes` (the near step), `l2.size_bytes` (the last L2
//! step: no access hits the L2 beyond it) and `l2.far.size_bytes` (the far share of the
//! footprint at the whole-L2 step, the share rounded to 1/k: what the far partition holds).
//! Where the sweep shows no step for a fact, the fact says "unknown" and why.

use super::cluster;
use super::levels::{self, roundest};
use crate::dissect::data::{Curve, Histogram, Point};
use crate::stats::median_element;

/// Relative tolerance above the crossing for the rounded value of a step.
const STEP_ROUND: f64 = 0.01;
/// The value of a step lies at most this far (relative) below its crossing.
const FALL_SPAN: f64 = 0.05;
/// Share of the plateau a point must keep to be before the fall.
const FULL: f64 = 0.98;
/// A far level must serve at least this share of some point's accesses.
const MIN_FAR_SHARE: f64 = 0.1;
/// Share of the largest footprint below which the DRAM floor lies.
const FLOOR_QUANTILE: f64 = 0.01;
/// A single step below this fraction of the L2 size the device reports is not the whole L2.
const REPORTED_SHARE: f64 = 0.75;

/// A fall of a share through half of its plateau.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Last footprint at or above half the plateau.
    pub before: u64,
    /// First footprint below it (and every larger one too).
    pub after: u64,
    /// The crossing of half the plateau, interpolated in log footprint.
    pub crossing: f64,
    /// The last footprint before the crossing with (almost) the whole plateau.
    pub fall_start: f64,
    /// The reported value (see the module's doc).
    pub value: u64,
    /// The share's plateau.
    pub plateau: f64,
    /// The share's highest value.
    pub top: f64,
    /// Confidence in `value`, 0 to 1.
    pub confidence: f64,
}

/// What the L2 sweep shows.
#[derive(Debug, Clone, PartialEq)]
pub struct L2Fit {
    /// Boundary between near hits and slower accesses, cycles (timer overhead included).
    pub near_bound: f64,
    /// DRAM floor, cycles (timer overhead included).
    pub floor: f64,
    /// The near step.
    pub near: Option<Step>,
    /// The far step (the whole L2 when there is a far level).
    pub far: Option<Step>,
    /// Whether some point has a far share of at least [`MIN_FAR_SHARE`].
    pub far_seen: bool,
    /// Per point: (footprint, near share, far share).
    pub shares: Vec<(u64, f64, f64)>,
    /// Near-hit latency per point on the near plateau, overhead removed.
    pub near_samples: Vec<f64>,
    /// Far-hit latency per point on the far plateau, overhead removed.
    pub far_samples: Vec<f64>,
    /// Latency of all accesses per point served by DRAM alone, overhead removed.
    pub dram_samples: Vec<f64>,
}

/// The latency below which a share `q` of `h`'s accesses lie.
fn quantile(h: &Histogram, q: f64) -> Option<f64> {
    let total = h.total();
    if total == 0 {
        return None;
    }
    let mut seen = 0u64;
    for (c, n) in h.bins() {
        seen += n;
        if seen as f64 >= q * total as f64 {
            return Some(c);
        }
    }
    None
}

fn share_between(h: &Histogram, lo: f64, hi: f64) -> f64 {
    let total = h.total();
    if total == 0 {
        return 0.0;
    }
    h.bins().filter(|(c, _)| *c >= lo && *c < hi).map(|(_, n)| n).sum::<u64>() as f64 / total as f64
}

/// The step of `shares` (ascending footprints `xs`): where the share falls through half its
/// plateau for good, the last point being at most a quarter of the plateau. None when the
/// share never reaches a plateau of `min_plateau` or the sweep ends before it falls.
pub fn step(xs: &[u64], shares: &[f64], min_plateau: f64) -> Option<Step> {
    let top = shares.iter().copied().fold(0.0, f64::max);
    if top < min_plateau {
        return None;
    }
    let high: Vec<f64> = shares.iter().copied().filter(|s| *s >= 0.9 * top).collect();
    let plateau = median_element(&high)?;
    let half = 0.5 * plateau;
    let n = shares.len();
    if *shares.last()? > 0.25 * plateau {
        return None;
    }
    let start = shares.iter().position(|s| *s >= 0.9 * plateau)?;
    // The last point at or above half the plateau: every later one is below.
    let i = (start..n).rev().find(|&i| shares[i] >= half)?;
    if i + 1 >= n {
        return None;
    }
    let (x0, x1) = (xs[i] as f64, xs[i + 1] as f64);
    let (s0, s1) = (shares[i], shares[i + 1]);
    let t = if s0 > s1 { ((s0 - half) / (s0 - s1)).clamp(0.0, 1.0) } else { 0.5 };
    let crossing = (x0.ln() + t * (x1.ln() - x0.ln())).exp();
    // Where the fall starts: the last point before the crossing that still has (almost) the
    // whole plateau. An LRU cache of W ways loses half its share about 1 / (2W + 2) beyond its
    // capacity, a hashed one starts missing before it is full: the capacity lies between.
    let fall_start = (start..=i).rev().find(|&k| shares[k] >= FULL * plateau).map(|k| xs[k] as f64).unwrap_or(x0);
    let lo = fall_start.max(crossing * (1.0 - FALL_SPAN)).min(crossing);
    let value = roundest(lo as u64, (crossing * (1.0 + STEP_ROUND)) as u64, 0.0);
    let width = x1 / x0 - 1.0;
    let s_width = if width <= 0.02 { 1.0 } else { (0.02 / width).sqrt().max(0.3) };
    let fall = crossing / fall_start - 1.0;
    let s_fall = if fall <= 0.03 { 1.0 } else { (0.03 / fall).sqrt().max(0.3) };
    // Points on the wrong side of the step between the plateau and the end of the sweep.
    let wrong = (start..i).filter(|&k| shares[k] < half).count();
    let s_clean = 1.0 / (1.0 + wrong as f64);
    let depth = 1.0 - shares[n - 1] / plateau;
    let s_depth = (depth / 0.9).min(1.0);
    Some(Step {
        before: xs[i],
        after: xs[i + 1],
        crossing,
        fall_start,
        value,
        plateau,
        top,
        confidence: s_width * s_fall * s_clean * s_depth,
    })
}

/// Fits the L2 steps of the `size/cg` curve.
pub fn fit(curve: &Curve, overhead: f64) -> Option<L2Fit> {
    let points: &[Point] = &curve.points;
    let last = points.last()?;
    let hists: Vec<&Histogram> = points.iter().map(|p| &p.hist).collect();
    let clusters = cluster::find(&hists);
    let lf = levels::fit_with(points, clusters, overhead, curve.stride_bytes);
    let near_level = lf.levels.first()?;
    let near_bound = lf.clusters.bounds.get(near_level.last_cluster).copied()?;
    let floor = quantile(&last.hist, FLOOR_QUANTILE)?.max(near_bound);
    let xs: Vec<u64> = points.iter().map(|p| p.x).collect();
    let near: Vec<f64> = points.iter().map(|p| share_between(&p.hist, 0.0, near_bound)).collect();
    let far: Vec<f64> = points.iter().map(|p| share_between(&p.hist, near_bound, floor)).collect();
    let near_step = step(&xs, &near, 0.5);
    let far_seen = far.iter().any(|s| *s >= MIN_FAR_SHARE);
    let far_step = if far_seen { step(&xs, &far, MIN_FAR_SHARE) } else { None };
    let near_plateau = near_step.as_ref().map(|s| s.plateau).unwrap_or(1.0);
    let near_samples = points
        .iter()
        .zip(&near)
        .filter(|(_, s)| **s >= 0.9 * near_plateau)
        .filter_map(|(p, _)| p.hist.median_between(0.0, near_bound))
        .map(|m| m - overhead)
        .collect();
    let far_top = far.iter().copied().fold(0.0, f64::max);
    let far_samples = if far_seen {
        points
            .iter()
            .zip(&far)
            .filter(|(_, s)| **s >= 0.9 * far_top)
            .filter_map(|(p, _)| p.hist.median_between(near_bound, floor))
            .map(|m| m - overhead)
            .collect()
    } else {
        Vec::new()
    };
    let dram_samples: Vec<f64> = points
        .iter()
        .zip(near.iter().zip(&far))
        .filter(|(_, (a, b))| *a + *b <= 0.02)
        .filter_map(|(p, _)| p.hist.median_between(0.0, f64::INFINITY))
        .map(|m| m - overhead)
        .collect();
    Some(L2Fit {
        near_bound,
        floor,
        near: near_step,
        far: far_step,
        far_seen,
        shares: xs.iter().zip(near.iter().zip(&far)).map(|(x, (a, b))| (*x, *a, *b)).collect(),
        near_samples,
        far_samples,
        dram_samples,
    })
}

/// Facts' values: a number with its confidence and method, or "unknown" with the reason.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Bytes, confidence, method.
    Bytes(u64, f64, String),
    /// Why the sweep cannot tell.
    Unknown(String),
}

/// The three L2 facts: (`l2.near.size_bytes`, `l2.far.size_bytes`, `l2.size_bytes`).
/// `reported_bytes`: the L2 size the device reports, used only to refuse calling a single step
/// far below it the whole L2.
pub fn answers(fit: &L2Fit, id: &str, reported_bytes: u64) -> (Answer, Answer, Answer) {
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    let describe = |what: &str, s: &Step| {
        format!(
            "{id}: {what} falls from its plateau ({:.0}% of accesses) after {:.3} MiB, through half of it between {:.3} and {:.3} MiB (~{:.2} MiB)",
            100.0 * s.plateau,
            s.fall_start / (1u64 << 20) as f64,
            mib(s.before),
            mib(s.after),
            s.crossing / (1u64 << 20) as f64
        )
    };
    let near = match &fit.near {
        Some(s) => Answer::Bytes(
            s.value,
            s.confidence,
            format!("{}; near hits under {:.0} cycles", describe("the near-hit share", s), fit.near_bound),
        ),
        None => Answer::Unknown(format!(
            "{id}: the share of near hits (under {:.0} cycles) never falls below half: the sweep ends before the near partition overflows",
            fit.near_bound
        )),
    };
    let window = format!("between {:.0} and the DRAM floor {:.0} cycles", fit.near_bound, fit.floor);
    let (far, whole) = match (&fit.far, &fit.near) {
        (Some(f), _) => {
            // The far-homed share of the lines: its highest share, as a simple fraction.
            let k = (1.0 / f.top).round().max(1.0);
            let fit_share = 1.0 - ((f.top * k) - 1.0).abs().min(1.0);
            let held = roundest(f.value / k as u64, f.value / k as u64, STEP_ROUND);
            (
                Answer::Bytes(
                    held,
                    f.confidence * fit_share,
                    format!(
                        "{}: the far level serves up to {:.0}% (~1/{k:.0}) of the footprint, so it holds 1/{k:.0} of the whole-L2 step",
                        describe(&format!("the far-hit share ({window})"), f),
                        100.0 * f.top
                    ),
                ),
                Answer::Bytes(
                    f.value,
                    f.confidence,
                    describe(&format!("the share of L2 hits beyond the near step ({window})"), f),
                ),
            )
        }
        (None, _) if fit.far_seen => {
            let why = format!(
                "{id}: a far level ({window}) serves part of the accesses but its share does not fall by the largest footprint ({:.1} MiB): the sweep ends before the whole L2 overflows",
                mib(fit.shares.last().map(|s| s.0).unwrap_or(0))
            );
            (Answer::Unknown(why.clone()), Answer::Unknown(why))
        }
        (None, Some(n)) if (n.value as f64) < REPORTED_SHARE * reported_bytes as f64 => {
            let why = format!(
                "{id}: one step at {:.1} MiB, under {:.0}% of the {:.1} MiB the device reports, and no level {window}: the rest of the L2 is not seen from this SM",
                mib(n.value),
                100.0 * REPORTED_SHARE,
                mib(reported_bytes)
            );
            (Answer::Unknown(why.clone()), Answer::Unknown(why))
        }
        (None, Some(n)) => (
            Answer::Unknown(format!("{id}: no level {window}: one L2 level, no far partition")),
            Answer::Bytes(n.value, n.confidence, format!("{}; one L2 level", describe("the share of L2 hits", n))),
        ),
        (None, None) => {
            let why = format!("{id}: no L2 step in the sweep");
            (Answer::Unknown(why.clone()), Answer::Unknown(why))
        }
    };
    (near, far, whole)
}

/// An L2 level measured from every SM: its name in the every-SM curves' ids
/// (`every-sm/cg/<name>`) and the latency fact it gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmLevel {
    /// Near-partition hits.
    Near,
    /// Far-partition hits.
    Far,
    /// DRAM.
    Dram,
}

impl SmLevel {
    /// All three, in the order the plan measures them.
    pub const ALL: [SmLevel; 3] = [SmLevel::Near, SmLevel::Far, SmLevel::Dram];

    /// "near", "far", "dram".
    pub fn label(self) -> &'static str {
        match self {
            SmLevel::Near => "near",
            SmLevel::Far => "far",
            SmLevel::Dram => "dram",
        }
    }

    /// The id of the every-SM curve of this level.
    pub fn curve_id(self) -> String {
        format!("every-sm/cg/{}", self.label())
    }
}

/// The footprints at which every SM measures the L2 latencies, from the single-SM sweep's fit:
/// for the near level the near-plateau point nearest an eighth of where the near share starts
/// to fall (deep inside the plateau, and a short warm lap); for the far level the point with
/// the highest far share; for DRAM the largest footprint, where DRAM serves (almost) every
/// access. A level the sweep does not show has no footprint.
pub fn every_sm_footprints(fit: &L2Fit) -> Vec<(SmLevel, u64)> {
    let mut out = Vec::new();
    let plateau = fit.near.as_ref().map(|s| s.plateau).unwrap_or(1.0);
    let near: Vec<u64> = fit.shares.iter().filter(|s| s.1 >= FULL * plateau).map(|s| s.0).collect();
    let target = match &fit.near {
        Some(s) => s.fall_start / 8.0,
        None => near.get(near.len() / 2).copied().unwrap_or(0) as f64,
    };
    let nearest = near.iter().copied().min_by(|a, b| {
        let d = |x: u64| ((x as f64).ln() - target.max(1.0).ln()).abs();
        d(*a).total_cmp(&d(*b))
    });
    if let Some(x) = nearest {
        out.push((SmLevel::Near, x));
    }
    if fit.far_seen
        && let Some(s) = fit.shares.iter().max_by(|a, b| a.2.total_cmp(&b.2))
    {
        out.push((SmLevel::Far, s.0));
    }
    if let Some(s) = fit.shares.last().filter(|s| s.1 + s.2 <= 0.02) {
        out.push((SmLevel::Dram, s.0));
    }
    out
}

/// Each SM's latency of `level` from its every-SM curve, overhead removed: the median of its
/// near hits (under the fit's near bound, where they are at least half the accesses), of its
/// far hits (between the near bound and the DRAM floor, where they are at least
/// [`MIN_FAR_SHARE`]), or of all its accesses for DRAM.
pub fn per_sm_latencies(curve: &Curve, fit: &L2Fit, level: SmLevel, overhead: f64) -> Vec<(u64, f64)> {
    curve
        .points
        .iter()
        .filter_map(|p| {
            let h = &p.hist;
            let m = match level {
                SmLevel::Near if share_between(h, 0.0, fit.near_bound) >= 0.5 => h.median_between(0.0, fit.near_bound),
                SmLevel::Far if share_between(h, fit.near_bound, fit.floor) >= MIN_FAR_SHARE => {
                    h.median_between(fit.near_bound, fit.floor)
                }
                SmLevel::Dram => h.median_between(0.0, f64::INFINITY),
                _ => None,
            }?;
            Some((p.x, m - overhead))
        })
        .collect()
}

/// Brackets of the L2 steps wider than `resolution` (relative), for the plan to refine.
pub fn zoom_brackets(curve: &Curve, overhead: f64, resolution: f64) -> Vec<(u64, u64)> {
    let Some(f) = fit(curve, overhead) else { return Vec::new() };
    [f.near, f.far]
        .into_iter()
        .flatten()
        .filter(|s| s.after as f64 > s.before as f64 * (1.0 + resolution))
        .map(|s| (s.before, s.after))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_is_the_crossing_of_half_the_plateau() {
        let mib = 1u64 << 20;
        let xs: Vec<u64> = [16, 24, 26, 27, 32, 38, 45, 54, 64, 76].iter().map(|x| x * mib).collect();
        let near = [1.0, 1.0, 0.97, 0.94, 0.14, 0.0, 0.0, 0.0, 0.0, 0.0];
        let s = step(&xs, &near, 0.5).unwrap();
        assert_eq!((s.before, s.after), (27 * mib, 32 * mib));
        assert_eq!(s.fall_start, (24 * mib) as f64, "the last point with the whole plateau");
        assert!(s.crossing > 29.5 * mib as f64 && s.crossing < 29.7 * mib as f64, "{s:?}");
        assert_eq!(s.value, 29 * mib, "{s:?}");
        assert!(s.confidence < 0.5, "a 19 % bracket is not sure: {s:?}");
        let far = [0.0, 0.0, 0.01, 0.03, 0.45, 0.5, 0.5, 0.48, 0.0, 0.0];
        let f = step(&xs, &far, 0.1).unwrap();
        assert_eq!((f.before, f.after), (54 * mib, 64 * mib));
        assert!((f.plateau - 0.5).abs() < 0.03);
        // No fall by the end of the sweep: no step.
        assert!(step(&xs[..8], &far[..8], 0.1).is_none());
        // A sharp bracket is sure.
        let xs2 = [100, 200, 256, 258, 300].map(|x| x << 10);
        let s2 = step(&xs2, &[1.0, 1.0, 1.0, 0.0, 0.0], 0.5).unwrap();
        assert_eq!(s2.value, 256 << 10);
        assert!(s2.confidence > 0.95, "{s2:?}");
    }
}
