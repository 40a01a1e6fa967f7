//! TLBs from footprint sweeps at large strides (seeds 000, 001 section 4.4).
//!
//! The chase keeps its few lines in the L2, so a TLB miss shows as a step up of the mean latency
//! (a few cycles on a hit of a few hundred when the next TLB level holds the translation). Steps
//! are found per stride by binary segmentation of the per-point mean latency, tested against the
//! curve's own point-to-point noise. At stride `s`, a TLB of `E` entries over `P`-byte units
//! stops covering the footprint at `E * max(s, P)`: the knee divided by the stride is flat (= `E`)
//! for the largest strides; below the unit size the knee stays at the reach `E * P` and the step
//! shrinks to `s / P` of its full height (one access in `P / s` changes unit).

use super::levels::roundest;
use super::traces::Found;
use crate::dissect::data::{Curve, Point};

/// Steps must exceed this many standard errors of the difference of the segment means (the
/// noise estimate ignores slow drifts, so the bar is high).
const MIN_T: f64 = 20.0;
/// Steps must also exceed this many standard deviations of one point.
const MIN_SIGMAS: f64 = 3.0;
/// Smallest step height, cycles.
const MIN_HEIGHT: f64 = 1.0;
/// Floor of the point-to-point noise, cycles.
const MIN_NOISE: f64 = 0.25;
/// Ratios of knee / stride within this relative spread count as flat.
const FLAT: f64 = 0.1;

/// One TLB level.
#[derive(Debug, Clone, PartialEq)]
pub struct TlbLevel {
    /// Entries.
    pub entries: Found<u64>,
    /// Bytes it covers (entries x unit).
    pub reach: Found<u64>,
    /// Cycles a miss in it adds.
    pub miss_penalty_cycles: f64,
}

/// What the TLB sweeps show.
#[derive(Debug, Clone, PartialEq)]
pub struct TlbFit {
    /// The unit one entry of the first level covers (the page, as that level sees it).
    pub page: Found<u64>,
    /// TLB levels, nearest first.
    pub levels: Vec<TlbLevel>,
    /// Per stride: the knee footprint of each level (None where the sweep did not show it).
    pub knees: Vec<(u64, Vec<Option<u64>>)>,
}

/// A step up of a curve's mean latency.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Last footprint before the step.
    pub before: u64,
    /// First footprint after it.
    pub after: u64,
    /// Cycles it adds.
    pub height: f64,
    /// Height over its standard error.
    pub t: f64,
}

impl Step {
    /// The knee: the roundest footprint in the bracket.
    pub fn knee(&self) -> u64 {
        roundest(self.before, self.after, 0.0)
    }
}

/// Share of a point's slowest accesses left out of its mean: stray interruptions, not misses
/// (a TLB level whose misses are rarer than this is beyond what the sweep can show).
const STRAY_SHARE: f64 = 0.005;

/// Mean latency of a point's accesses but the slowest 0.5 % (see `STRAY_SHARE`).
pub fn level_of(p: &Point) -> f64 {
    let total = p.hist.total() as f64;
    let keep = total * (1.0 - STRAY_SHARE);
    let (mut sum, mut n) = (0.0, 0.0);
    for (c, k) in p.hist.bins() {
        let take = (k as f64).min(keep - n);
        if take <= 0.0 {
            break;
        }
        sum += c * take;
        n += take;
    }
    if n > 0.0 { sum / n } else { f64::NAN }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Point-to-point noise of a curve: the median absolute first difference, scaled to a standard
/// deviation of one point (robust to the steps themselves).
fn noise(y: &[f64]) -> f64 {
    let mut d: Vec<f64> = y.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    if d.is_empty() {
        return MIN_NOISE;
    }
    d.sort_by(f64::total_cmp);
    (1.4826 * d[d.len() / 2] / 2f64.sqrt()).max(MIN_NOISE)
}

/// The significant upward steps of a footprint curve, by footprint.
pub fn steps(curve: &Curve) -> Vec<Step> {
    let y: Vec<f64> = curve.points.iter().map(level_of).collect();
    if y.len() < 3 || y.iter().any(|v| !v.is_finite()) {
        return Vec::new();
    }
    let sigma = noise(&y);
    let mut found = Vec::new();
    let mut todo = vec![(0usize, y.len())];
    while let Some((a, b)) = todo.pop() {
        let best = (a + 1..b)
            .map(|k| {
                let (l, r) = (mean(&y[a..k]), mean(&y[k..b]));
                let se = sigma * (1.0 / (k - a) as f64 + 1.0 / (b - k) as f64).sqrt();
                (k, r - l, (r - l) / se)
            })
            .max_by(|x, z| x.2.total_cmp(&z.2));
        let Some((k, height, t)) = best else { continue };
        if t < MIN_T || height < MIN_HEIGHT.max(MIN_SIGMAS * sigma) {
            continue;
        }
        found.push((k, Step { before: curve.points[k - 1].x, after: curve.points[k].x, height, t }));
        todo.push((a, k));
        todo.push((k, b));
    }
    found.sort_by_key(|(k, _)| *k);
    found.into_iter().map(|(_, s)| s).collect()
}

/// Footprint brackets of a curve's steps that more points would sharpen.
pub fn zoom_brackets(curve: &Curve) -> Vec<(u64, u64)> {
    steps(curve).iter().filter(|s| s.after - s.before > curve.stride_bytes).map(|s| (s.before, s.after)).collect()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Entries of level `i`: knee / stride over the flat group of the largest strides, that group's
/// smallest stride, and the median step height there.
fn level_entries(per_stride: &[(u64, Vec<Step>)], i: usize) -> Option<(u64, u64, f64, usize)> {
    let pts: Vec<(u64, f64, f64)> =
        per_stride.iter().filter_map(|(s, st)| st.get(i).map(|st| (*s, st.knee() as f64, st.height))).collect();
    let last = pts.len().checked_sub(1)?;
    let ratio: Vec<f64> = pts.iter().map(|(s, k, _)| k / *s as f64).collect();
    let mut start = last;
    while start > 0 && (ratio[start - 1] / ratio[last] - 1.0).abs() < FLAT {
        start -= 1;
    }
    let mut flat = ratio[start..].to_vec();
    let mut heights: Vec<f64> = pts[start..].iter().map(|p| p.2).collect();
    let entries = median(&mut flat).round().max(1.0) as u64;
    Some((entries, pts[start].0, median(&mut heights), pts.len() - start))
}

/// Fits the TLB curves (one footprint curve per stride). A level is reported only where at
/// least two strides agree on its entries.
pub fn fit(curves: &[&Curve]) -> Option<TlbFit> {
    let mut curves: Vec<&Curve> = curves.to_vec();
    curves.sort_by_key(|c| c.stride_bytes);
    let per_stride: Vec<(u64, Vec<Step>)> = curves.iter().map(|c| (c.stride_bytes, steps(c))).collect();
    let (entries0, flat_from, height0, flat_n) = level_entries(&per_stride, 0).filter(|l| l.3 >= 2)?;
    // The unit: the largest stride below the flat group that shows the first step has its knee
    // at the reach (entries x unit); its step height, a share stride / unit of the full one,
    // says the same independently.
    let below: Vec<&(u64, Vec<Step>)> = per_stride.iter().filter(|(s, st)| *s < flat_from && !st.is_empty()).collect();
    let page = match below.last() {
        Some((s, st)) => {
            let by_knee = st[0].knee() as f64 / entries0 as f64;
            let by_height = *s as f64 * height0 / st[0].height.max(1e-9);
            let lg = by_knee.log2();
            let off = (lg - lg.round()).abs();
            let agree = (by_knee.log2() - by_height.log2()).abs();
            let value = 1u64 << (lg.round().max(0.0) as u32);
            // Every smaller stride's first knee should sit at the same reach.
            let reach = (entries0 * value) as f64;
            let consistent = below.iter().filter(|(_, st)| (st[0].knee() as f64 / reach).log2().abs() <= 0.35).count();
            let share = consistent as f64 / below.len() as f64;
            // The stride-over-page method needs strides below the unit whose knees stay at the
            // reach: one such stride alone (the others too fine to show the step) does not
            // separate the page from the entries' coverage.
            let confidence = (1.0 - 2.0 * off).clamp(0.0, 1.0)
                * if agree <= 0.6 { 1.0 } else { 0.5 }
                * share.max(0.25)
                * if consistent >= 2 { 1.0 } else { 0.6 }
                * flat_confidence(flat_n);
            Found {
                value,
                confidence,
                method: format!(
                    "knee at stride {s} B ({} B) / {entries0} entries; its step, {:.1} of {height0:.1} cycles, puts the unit at {:.0} B; {consistent} of {} smaller strides with a step agree (two needed to separate page from coverage)",
                    st[0].knee(),
                    st[0].height,
                    by_height,
                    below.len()
                ),
            }
        }
        None => Found {
            value: flat_from,
            confidence: 0.3 * flat_confidence(flat_n),
            method: format!("knees grow with every stride that shows one: the unit is at most {flat_from} B"),
        },
    };
    let mut levels = Vec::new();
    for i in 0.. {
        let Some((entries, _, height, n)) = level_entries(&per_stride, i).filter(|l| l.3 >= 2) else { break };
        // Entries come from the flat knee / stride ratio at strides above the unit, whatever
        // the unit; the reach needs the unit too.
        let confidence = page.confidence.min(0.95) * flat_confidence(n);
        levels.push(TlbLevel {
            entries: Found {
                value: entries,
                confidence: 0.95 * flat_confidence(n),
                method: format!(
                    "TLB level {}: knee / stride flat at {entries} over the {n} largest strides that show it (+{height:.1} cycles)",
                    i + 1
                ),
            },
            reach: Found {
                value: entries * page.value,
                confidence,
                method: format!("{entries} entries x {} B", page.value),
            },
            miss_penalty_cycles: height,
        });
    }
    let knees = per_stride.iter().map(|(s, st)| (*s, st.iter().map(|x| Some(x.knee())).collect())).collect();
    Some(TlbFit { page, levels, knees })
}

/// Confidence from how many strides agree on a flat ratio: one alone is weak evidence.
fn flat_confidence(n: usize) -> f64 {
    match n {
        0 | 1 => 0.4,
        2 => 0.75,
        _ => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dissect::data::{Axis, Histogram, Path};

    /// Latency of a chase at stride `s` over `f` bytes with 2 TLB levels (16 and 64 entries) of
    /// 2 MiB units, LRU: base 300 (+ up to `2 x jitter`), +`small` on an L1 TLB miss, + `small +
    /// big` on an L2 TLB miss.
    fn tlb_curve(s: u64, small: u32, big: u32, jitter: u32) -> Curve {
        let page = 2u64 << 20;
        let points = (0..40)
            .map(|k| 4 * s * (1u64 << (k / 4)) + (k % 4) * s * (1u64 << (k / 4)))
            .filter(|f| f / s <= 1 << 15)
            .map(|f| {
                let pages = f / s.max(page);
                let per_page = (page / s).max(1);
                let extra = if pages > 64 && big > 0 {
                    small + big
                } else if pages > 16 {
                    small
                } else {
                    0
                };
                let lat: Vec<u32> = (0..2048u64)
                    .map(|i| {
                        let base = 300 + (i * 7 + f / s) as u32 % (2 * jitter + 1);
                        if extra > 0 && i % per_page == 0 { base + extra } else { base }
                    })
                    .collect();
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
        let curves: Vec<Curve> = (16..=25).map(|k| tlb_curve(1 << k, 100, 400, 0)).collect();
        let refs: Vec<&Curve> = curves.iter().collect();
        let f = fit(&refs).unwrap();
        assert_eq!(f.page.value, 2 << 20, "{f:?}");
        assert_eq!(f.levels[0].entries.value, 16);
        assert_eq!(f.levels[0].reach.value, 32 << 20);
        assert_eq!(f.levels[1].entries.value, 64);
        assert!(f.page.confidence > 0.8, "{:?}", f.page);
        assert!((f.levels[0].miss_penalty_cycles - 100.0).abs() < 5.0);
    }

    #[test]
    fn a_small_step_in_noise_is_found_and_flat_noise_is_not() {
        // A 12-cycle step over up to 8 cycles of per-access jitter (the H200's first level).
        let steps_found = steps(&tlb_curve(16 << 20, 12, 0, 4));
        assert_eq!(steps_found.len(), 1, "{steps_found:?}");
        assert_eq!(steps_found[0].knee(), 16 * (16 << 20));
        let mut flat = tlb_curve(16 << 20, 0, 0, 4);
        flat.points.truncate(10);
        assert!(steps(&flat).is_empty());
    }
}
