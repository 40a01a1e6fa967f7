//! TLBs from footprint sweeps at large strides (Meltzer et al., Mei & Chu section 4.4).
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
use crate::stats::median_element;

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
    /// The unit one entry of the first level covers: a page, or several pages one entry maps
    /// (latencies cannot tell which).
    pub unit: Found<u64>,
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
    let d: Vec<f64> = y.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    if d.is_empty() {
        return MIN_NOISE;
    }
    (1.4826 * median_element(&d).unwrap_or(0.0) / 2f64.sqrt()).max(MIN_NOISE)
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

/// The middle value of a non-empty set (the upper one of an even count).
fn median(v: &[f64]) -> f64 {
    median_element(v).unwrap_or(f64::NAN)
}

/// True when `a` and `b` lie within `FLAT` of each other (relative to `b`).
fn near(a: f64, b: f64) -> bool {
    (a / b - 1.0).abs() < FLAT
}

/// One level's flat group: the strides (at or above `from`) whose knee / stride agree on
/// `entries`.
struct Flat {
    entries: u64,
    /// Smallest stride of the group.
    from: u64,
    /// Per matched stride: stride, its step.
    matched: Vec<(u64, Step)>,
    /// Strides of the group's range that show steps, none of them at `entries` x stride.
    mismatched: usize,
}

/// The flat group of a level from the steps each stride offers it (`eligible[i]`: the steps of
/// stride `per_stride[i].0` beyond the previous level's knee). At and above the unit every
/// stride puts the level's knee at entries x stride; below the unit the knee stays at the
/// reach. Each ratio knee / stride a step offers is a candidate; a candidate's score over the
/// strides from some stride up is the strides that match it less the strides that show steps
/// but none at that ratio (a stride without a step says nothing: its step may lie beyond its
/// largest footprint or below its noise). A step that matches by chance at a small stride
/// does not pull the group down: the strides between it and the true group count against it.
fn flat_group(per_stride: &[(u64, Vec<Step>)], eligible: &[Vec<Step>]) -> Option<Flat> {
    let ratio = |i: usize, st: &Step| st.knee() as f64 / per_stride[i].0 as f64;
    let mut groups: Vec<(i64, Flat)> = Vec::new();
    for (ci, steps) in eligible.iter().enumerate() {
        for cand in steps {
            let e = ratio(ci, cand);
            // Lower ends of the group: every stride at or below the candidate's own.
            for lo in 0..=ci {
                let (mut matched, mut mismatched) = (Vec::new(), 0usize);
                for (i, st) in eligible.iter().enumerate().skip(lo) {
                    match st.iter().find(|x| near(ratio(i, x), e)) {
                        Some(x) => matched.push((per_stride[i].0, x.clone())),
                        None if !st.is_empty() => mismatched += 1,
                        None => {}
                    }
                }
                if matched.len() < 2 || matched[0].0 != per_stride[lo].0 || matched.len() <= mismatched {
                    continue;
                }
                let ratios: Vec<f64> = matched.iter().map(|(s, x)| x.knee() as f64 / *s as f64).collect();
                let entries = median(&ratios).round().max(1.0) as u64;
                let from = matched[0].0;
                groups.push((matched.len() as i64 - mismatched as i64, Flat { entries, from, matched, mismatched }));
            }
        }
    }
    // The nearest level first: the fewest entries any credible group agrees on; among the
    // groups at that ratio, the best score, then the most strides.
    let fewest = groups.iter().map(|(_, f)| f.entries).min()?;
    groups
        .into_iter()
        .filter(|(_, f)| near(f.entries as f64, fewest as f64))
        .max_by(|(a, f), (b, g)| (a, f.matched.len()).cmp(&(b, g.matched.len())))
        .map(|(_, f)| f)
}

/// The unit one entry of the first level covers, from the strides below its flat group: below
/// the unit their knees stay at the reach, entries x unit (stride over page, Meltzer et al., Mei & Chu),
/// and their steps shrink to stride / unit of the full height. Without such strides the unit
/// is bounded by the group's smallest stride only.
fn unit_of(per_stride: &[(u64, Vec<Step>)], flat: &Flat, height0: f64) -> Found<u64> {
    let e = flat.entries as f64;
    // Steps below the group whose knee lies beyond entries x stride (a unit above the stride)
    // and at most at entries x the group's smallest stride.
    let below: Vec<(u64, Vec<&Step>)> = per_stride
        .iter()
        .filter(|(s, st)| *s < flat.from && !st.is_empty())
        .map(|(s, st)| {
            let k: Vec<&Step> = st
                .iter()
                .filter(|x| {
                    let k = x.knee() as f64;
                    k > e * *s as f64 * (1.0 + FLAT) && k <= e * flat.from as f64 * (1.0 + FLAT)
                })
                .collect();
            (*s, k)
        })
        .collect();
    // The reach most strides agree on (within FLAT of each other).
    let mut best: Option<(usize, Vec<(u64, &Step)>)> = None;
    for (_, ks) in &below {
        for k in ks {
            let support: Vec<(u64, &Step)> = below
                .iter()
                .filter_map(|(s2, ks2)| ks2.iter().find(|x| near(x.knee() as f64, k.knee() as f64)).map(|x| (*s2, *x)))
                .collect();
            if best.as_ref().is_none_or(|(n, _)| support.len() > *n) {
                best = Some((support.len(), support));
            }
        }
    }
    let showing = below.iter().filter(|(_, st)| !st.is_empty()).count();
    let Some((n, support)) = best else {
        return Found {
            value: flat.from,
            confidence: 0.3 * flat_confidence(flat.matched.len()),
            method: format!(
                "no stride below {} B shows a knee at the reach: the unit is at most {} B",
                flat.from, flat.from
            ),
        };
    };
    let knees: Vec<f64> = support.iter().map(|(_, x)| x.knee() as f64).collect();
    let reach = median(&knees);
    let lg = (reach / e).log2();
    let value = 1u64 << (lg.round().max(0.0) as u32);
    let off = (lg - lg.round()).abs();
    // Heights: a stride s below the unit misses on s / unit of its accesses.
    let heights_agree = support
        .iter()
        .filter(|(s, x)| {
            let expect = height0 * *s as f64 / value as f64;
            (x.height / expect).log2().abs() <= 1.0
        })
        .count();
    let confidence = (1.0 - 2.0 * off).clamp(0.0, 1.0)
        * match n {
            1 => 0.6,
            2 => 0.9,
            _ => 1.0,
        }
        * (n as f64 / below.len().max(1) as f64).max(0.5)
        * if 2 * heights_agree >= n { 1.0 } else { 0.6 }
        * flat_confidence(flat.matched.len());
    let strides: Vec<String> = support.iter().map(|(s, x)| format!("{s} B: {} B", x.knee())).collect();
    Found {
        value,
        confidence,
        method: format!(
            "{n} of {} strides below {} B keep the knee at the reach ({}), {reach:.0} B / {} entries; {heights_agree} of their steps have stride / unit of the full {height0:.1} cycles",
            below.len().max(showing),
            flat.from,
            strides.join(", "),
            flat.entries
        ),
    }
}

/// Fits the TLB curves (one footprint curve per stride). A level is reported only where at
/// least two strides agree on its entries.
pub fn fit(curves: &[&Curve]) -> Option<TlbFit> {
    let mut curves: Vec<&Curve> = curves.to_vec();
    curves.sort_by_key(|c| c.stride_bytes);
    let per_stride: Vec<(u64, Vec<Step>)> = curves.iter().map(|c| (c.stride_bytes, steps(c))).collect();
    let mut eligible: Vec<Vec<Step>> = per_stride.iter().map(|(_, st)| st.clone()).collect();
    let mut flats: Vec<Flat> = Vec::new();
    let mut knees: Vec<(u64, Vec<Option<u64>>)> = per_stride.iter().map(|(s, _)| (*s, Vec::new())).collect();
    let mut first: Option<(Found<u64>, f64)> = None;
    while let Some(flat) = flat_group(&per_stride, &eligible) {
        // The unit, from the first level: below it that level's knee stays at the reach.
        let unit = match &first {
            Some((u, _)) => u.value,
            None => {
                let heights: Vec<f64> = flat.matched.iter().map(|(_, x)| x.height).collect();
                let height0 = median(&heights);
                let u = unit_of(&per_stride, &flat, height0);
                let v = u.value;
                first = Some((u, height0));
                v
            }
        };
        // The next level: steps beyond this level's knee (the knee found, or entries x the
        // larger of stride and unit).
        for (i, (s, st)) in per_stride.iter().enumerate() {
            let expect = flat.entries * (*s).max(unit);
            let at = flat.matched.iter().find(|(m, _)| m == s).map(|(_, x)| x.knee()).or_else(|| {
                st.iter().find(|x| flats.is_empty() && near(x.knee() as f64, expect as f64)).map(|x| x.knee())
            });
            knees[i].1.push(at);
            let floor = at.unwrap_or(0).max(expect) as f64 * (1.0 + FLAT);
            eligible[i].retain(|x| x.knee() as f64 > floor);
        }
        flats.push(flat);
        if flats.len() >= 4 {
            break;
        }
    }
    let (unit, _) = first?;
    let levels = flats
        .iter()
        .enumerate()
        .map(|(i, flat)| {
            let n = flat.matched.len();
            let h: Vec<f64> = flat.matched.iter().map(|(_, x)| x.height).collect();
            let height = median(&h);
            let against = if flat.mismatched > 0 {
                format!(", {} stride(s) in that range with steps elsewhere", flat.mismatched)
            } else {
                String::new()
            };
            let agreement = n as f64 / (n + flat.mismatched) as f64;
            TlbLevel {
                entries: Found {
                    value: flat.entries,
                    confidence: 0.95 * flat_confidence(n) * agreement,
                    method: format!(
                        "TLB level {}: knee / stride flat at {} over {n} strides from {} B up{against} (+{height:.1} cycles)",
                        i + 1,
                        flat.entries,
                        flat.from
                    ),
                },
                // Entries come from the flat knee / stride ratio, whatever the unit; the reach
                // needs the unit too.
                reach: Found {
                    value: flat.entries * unit.value,
                    confidence: unit.confidence.min(0.95) * flat_confidence(n) * agreement,
                    method: format!("{} entries x {} B (tlb.unit_bytes)", flat.entries, unit.value),
                },
                miss_penalty_cycles: height,
            }
        })
        .collect();
    Some(TlbFit { unit, levels, knees })
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
        assert_eq!(f.unit.value, 2 << 20, "{f:?}");
        assert_eq!(f.levels[0].entries.value, 16);
        assert_eq!(f.levels[0].reach.value, 32 << 20);
        assert_eq!(f.levels[1].entries.value, 64);
        assert!(f.unit.confidence > 0.8, "{:?}", f.unit);
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
