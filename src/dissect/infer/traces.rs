//! Fine-grained traces (Mei & Chu): which accesses of a lap missed, recorded one by one.
//!
//! With the footprint one fetch unit beyond the capacity, exactly one set holds one line too
//! many. Its lines are the ones that miss: they come in runs of one line's bytes (the eviction
//! unit), there are ways + 1 of them, and they are equally spaced by the set count when the set
//! mapping is modulo (bit-defined for a power of two) and irregular when it is hashed. Under
//! LRU (and FIFO) the overfull set misses on every line in every lap, so the pattern repeats
//! lap after lap; any other policy makes it change between laps.

use std::collections::BTreeSet;

pub use super::sets::{SetStructure, policy, policy_probes, set_structure};
use super::strays;
use crate::dissect::data::Trace;

/// A value with its confidence and method.
#[derive(Debug, Clone, PartialEq)]
pub struct Found<T> {
    /// The value.
    pub value: T,
    /// Confidence, 0 to 1.
    pub confidence: f64,
    /// One line: how.
    pub method: String,
}

pub(crate) fn is_miss(latency: u32, window: (f64, f64)) -> bool {
    let l = latency as f64;
    l >= window.0 && l <= window.1
}

/// Positions (access index within the lap) that missed, per complete recorded lap.
pub fn missed_per_lap(trace: &Trace, window: (f64, f64)) -> Vec<BTreeSet<u64>> {
    let lap = trace.lap() as usize;
    trace
        .latencies
        .chunks(lap)
        .filter(|c| c.len() == lap)
        .map(|c| c.iter().enumerate().filter(|(_, l)| is_miss(**l, window)).map(|(i, _)| i as u64).collect())
        .collect()
}

/// Positions that were slower than the window (a stray on top of a hit or of a miss), per
/// complete recorded lap.
fn slow_per_lap(trace: &Trace, window: (f64, f64)) -> Vec<BTreeSet<u64>> {
    let lap = trace.lap() as usize;
    trace
        .latencies
        .chunks(lap)
        .filter(|c| c.len() == lap)
        .map(|c| c.iter().enumerate().filter(|(_, l)| **l as f64 > window.1).map(|(i, _)| i as u64).collect())
        .collect()
}

/// The misses of a set of traces, strays set aside.
#[derive(Debug, Clone, PartialEq)]
pub struct Laps {
    /// Missed positions per lap.
    pub laps: Vec<BTreeSet<u64>>,
    /// Misses set aside as strays (isolated and not repeated: see [`strays`]).
    pub strays: usize,
    /// Accesses slower than the window counted as misses: inside a run of misses of their lap,
    /// or at a position that misses in at least half the laps.
    pub imputed: usize,
    /// Lone misses kept: far more than the stray rate explains.
    pub kept: usize,
}

impl Laps {
    /// ", 3 stray misses set aside" or nothing.
    pub fn note(&self) -> String {
        let mut s = String::new();
        if self.strays > 0 {
            s.push_str(&format!(", {} isolated unrepeated misses set aside as strays", self.strays));
        }
        if self.kept > 0 {
            s.push_str(&format!(", {} isolated unrepeated misses kept: more than strays explain", self.kept));
        }
        if self.imputed > 0 {
            s.push_str(&format!(", {} accesses slower than a miss counted as misses", self.imputed));
        }
        s
    }
}

/// Laps of `traces` that share the first trace's footprint and stride, as missed positions,
/// with the stray misses set aside ([`strays::without_strays`]). An access slower than the
/// window is a stray too, on top of a hit or of a miss: it counts as a miss where both its
/// neighbours in the lap missed or where its position misses in at least half the laps.
pub fn pooled_laps(traces: &[&Trace], window: (f64, f64), rate: Option<f64>) -> Laps {
    let Some(first) = traces.first() else { return Laps { laps: Vec::new(), strays: 0, imputed: 0, kept: 0 } };
    let same: Vec<&&Trace> = traces
        .iter()
        .filter(|t| t.stride_bytes == first.stride_bytes && t.footprint_bytes == first.footprint_bytes)
        .collect();
    let raw: Vec<BTreeSet<u64>> = same.iter().flat_map(|t| missed_per_lap(t, window)).collect();
    let slow: Vec<BTreeSet<u64>> = same.iter().flat_map(|t| slow_per_lap(t, window)).collect();
    let cleaned = strays::without_strays(&raw, first.lap(), rate);
    let mut count: std::collections::BTreeMap<u64, usize> = std::collections::BTreeMap::new();
    for &i in cleaned.laps.iter().flatten() {
        *count.entry(i).or_default() += 1;
    }
    let n = cleaned.laps.len();
    let mut imputed = 0;
    let laps = cleaned
        .laps
        .iter()
        .zip(&slow)
        .map(|(m, s)| {
            let mut m = m.clone();
            let add: Vec<u64> = s
                .iter()
                .copied()
                .filter(|&i| {
                    let inside = i > 0 && m.contains(&(i - 1)) && m.contains(&(i + 1));
                    inside || (n >= 2 && 2 * count.get(&i).copied().unwrap_or(0) >= n)
                })
                .collect();
            imputed += add.len();
            m.extend(add);
            m
        })
        .collect();
    Laps { laps, strays: cleaned.strays, imputed, kept: cleaned.kept }
}

/// The stray rate of the kernel whose footprint sweep is `curve`, for traces judged with
/// `window`: the share of its accesses in the window where its first level serves everything
/// (see [`strays::rate_below_knee`]).
pub fn stray_rate(curve: &crate::dissect::data::Curve, overhead: f64, window: (f64, f64)) -> Option<f64> {
    let fit = super::levels::fit(curve, overhead);
    let knee = fit.levels.first()?.capacity.as_ref()?.last_clean;
    strays::rate_below_knee(&curve.points, knee, window)
}

/// Whether a capacity probe (traces of one footprint, several laps) missed: a miss is left
/// once the strays are set aside (a miss beside another one, or one at a position that misses
/// in more laps than strays explain). A single lap cannot show repetition: there every miss
/// counts, unless most come in runs.
pub fn probe_missed(traces: &[&Trace], window: (f64, f64), rate: Option<f64>) -> bool {
    pooled_laps(traces, window, rate).laps.iter().any(|m| !m.is_empty())
}

/// Smallest share of touched blocks that must be missed whole for a block size to be a line.
const WHOLE_SHARE: f64 = 0.9;

/// The eviction unit (line size) from traces at the fetch granularity one unit over capacity:
/// an evicted line misses on every access to it in the next lap, so misses fill whole aligned
/// blocks of the line's size, and not (in general) blocks twice as large.
pub fn line_bytes(traces: &[&Trace], window: (f64, f64), rate: Option<f64>) -> Option<Found<u64>> {
    let first = traces.first()?;
    let pooled = pooled_laps(traces, window, rate);
    let laps = &pooled.laps;
    let lap = first.lap();
    let misses: usize = laps.iter().map(|l| l.len()).sum();
    if misses < 4 {
        return None;
    }
    // For each block size u (accesses, a power of two): blocks with a miss, and those missed whole.
    let whole_share = |u: u64| -> (f64, usize) {
        let blocks = lap / u;
        let (mut touched, mut whole) = (0usize, 0usize);
        for missed in laps {
            let mut per_block: std::collections::BTreeMap<u64, u64> = std::collections::BTreeMap::new();
            for &i in missed.iter().filter(|&&i| i / u < blocks) {
                *per_block.entry(i / u).or_default() += 1;
            }
            touched += per_block.len();
            whole += per_block.values().filter(|&&n| n == u).count();
        }
        (if touched == 0 { 0.0 } else { whole as f64 / touched as f64 }, touched)
    };
    // Blocks missed only in part, at the same place in at least half the laps (and two): a
    // structure, not stray slow accesses. A line evicts whole, so a block of `u` accesses that
    // keeps missing in part is not one line: consecutive smaller lines share a set (the
    // texture-cache organisation of Mei & Chu), and runs of whole misses overstate the line.
    let persistent_partial = |u: u64| -> usize {
        let blocks = lap / u;
        let mut partial: std::collections::BTreeMap<u64, usize> = std::collections::BTreeMap::new();
        for missed in laps {
            let mut per_block: std::collections::BTreeMap<u64, u64> = std::collections::BTreeMap::new();
            for &i in missed.iter().filter(|&&i| i / u < blocks) {
                *per_block.entry(i / u).or_default() += 1;
            }
            for (b, _) in per_block.iter().filter(|(_, n)| **n < u) {
                *partial.entry(*b).or_default() += 1;
            }
        }
        partial.values().filter(|&&n| n >= 2 && 2 * n >= laps.len()).count()
    };
    let mut unit = 1u64;
    let mut contradicted = None;
    while 2 * unit <= lap / 2 && whole_share(2 * unit).0 >= WHOLE_SHARE {
        let p = persistent_partial(2 * unit);
        if p > 0 {
            contradicted = Some((2 * unit, p));
            break;
        }
        unit *= 2;
    }
    if 2 * unit > lap / 2 {
        // Every access of the lap missed: the misses do not show where lines end.
        return None;
    }
    let (share, touched) = whole_share(unit);
    let (next, _) = whole_share(2 * unit);
    let mut confidence = share * (1.0 - next) * (1.0 - 1.0 / (1.0 + touched as f64));
    let mut method = format!(
        "{}: {touched} missed blocks at stride {} B over {} laps: {:.0}% of {} B blocks missed whole, {:.0}% of {} B blocks",
        first.id,
        first.stride_bytes,
        laps.len(),
        100.0 * share,
        unit * first.stride_bytes,
        100.0 * next,
        2 * unit * first.stride_bytes
    );
    method.push_str(&pooled.note());
    if let Some((u, p)) = contradicted {
        // Most larger blocks miss whole, yet some miss in part lap after lap: the line is the
        // smaller unit, and the whole misses are neighbouring lines of one set.
        confidence *= 0.5;
        method.push_str(&format!(
            "; {:.0}% of {} B blocks miss whole but {p} miss only in part in every lap: consecutive {} B lines share a set",
            100.0 * whole_share(u).0,
            u * first.stride_bytes,
            unit * first.stride_bytes
        ));
    }
    Some(Found { value: unit * first.stride_bytes, confidence, method })
}

/// Share of laps that must miss on the whole overfull set for the policy to count as LRU.
const PERIODIC_SHARE: f64 = 0.9;

/// Whether the misses of a cyclic chase repeat lap after lap ("lru": LRU and FIFO keep a cyclic
/// pattern's misses periodic, whatever the set mapping) or change ("non-lru").
pub fn periodicity(traces: &[&Trace], window: (f64, f64), rate: Option<f64>) -> Option<Found<String>> {
    let first = traces.first()?;
    periodicity_of(&first.id, &pooled_laps(traces, window, rate))
}

/// [`periodicity`] of laps already pooled from the traces `id` starts.
pub fn periodicity_of(id: &str, pooled: &Laps) -> Option<Found<String>> {
    let laps = &pooled.laps;
    if laps.len() < 2 {
        return None;
    }
    let union: BTreeSet<u64> = laps.iter().flatten().copied().collect();
    if union.is_empty() {
        return None;
    }
    // Stray slow accesses (interruptions) add a miss to one lap here and there: positions
    // missed in under a tenth of the laps are strays; a periodic lap misses on every position
    // of the core (missed in at least half the laps) and on nothing else but strays.
    let mut count: std::collections::BTreeMap<u64, usize> = std::collections::BTreeMap::new();
    for &i in laps.iter().flatten() {
        *count.entry(i).or_default() += 1;
    }
    let n = laps.len() as f64;
    let core: BTreeSet<u64> = count.iter().filter(|(_, c)| **c as f64 >= 0.5 * n).map(|(i, _)| *i).collect();
    let stray = |i: &u64| (count[i] as f64) < 0.1 * n;
    let periodic = |m: &BTreeSet<u64>| !core.is_empty() && core.is_subset(m) && m.difference(&core).all(stray);
    let full = laps.iter().filter(|m| periodic(m)).count() as f64 / n;
    let union = if full >= PERIODIC_SHARE { core } else { union };
    Some(if full >= PERIODIC_SHARE {
        Found {
            value: "lru".to_string(),
            confidence: full * (1.0 - 1.0 / n),
            method: format!(
                "{id}: the same {} lines missed in {:.0}% of {} laps{}",
                union.len(),
                100.0 * full,
                laps.len(),
                pooled.note()
            ),
        }
    } else {
        let distinct = laps.iter().collect::<BTreeSet<_>>().len();
        Found {
            value: "non-lru".to_string(),
            confidence: (1.0 - 1.0 / n) * ((1.0 - full) / (1.0 - PERIODIC_SHARE)).min(1.0),
            method: format!(
                "{id}: the missed lines changed between laps ({distinct} different patterns in {} laps){}",
                laps.len(),
                pooled.note()
            ),
        }
    })
}

/// Cold-miss granularity: the spacing in bytes between misses of a cold sequential trace.
pub fn cold_miss_bytes(trace: &Trace, window: (f64, f64)) -> Option<Found<u64>> {
    let missed: Vec<u64> =
        trace.latencies.iter().enumerate().filter(|(_, l)| is_miss(**l, window)).map(|(i, _)| i as u64).collect();
    if missed.len() < 3 {
        return None;
    }
    let mut gaps: Vec<u64> = missed.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort();
    let median = gaps[gaps.len() / 2];
    let agree = gaps.iter().filter(|&&g| g == median).count() as f64 / gaps.len() as f64;
    Some(Found {
        value: median * trace.stride_bytes,
        confidence: agree,
        method: format!(
            "{}: a cold miss every {median} accesses at stride {} B ({:.0}% of gaps)",
            trace.id,
            trace.stride_bytes,
            100.0 * agree
        ),
    })
}

/// Hardware prefetch: in a cold trace at the cold-miss granularity every access would miss
/// without prefetch. Returns "yes" or "no" and, for "yes", the bytes served per cold miss.
pub fn prefetch(trace: &Trace, window: (f64, f64)) -> Option<(Found<String>, Option<u64>)> {
    let n = trace.latencies.len();
    if n < 16 {
        return None;
    }
    let missed = (0..n).filter(|&i| is_miss(trace.latencies[i], window)).count().max(1);
    let share = missed as f64 / n as f64;
    let yes = share < NO_PREFETCH_SHARE;
    let per_miss = trace.stride_bytes as f64 / share;
    let block = yes.then(|| 1u64 << (per_miss.log2().round() as u32));
    let confidence = if yes {
        ((NO_PREFETCH_SHARE - share) / 0.2).clamp(0.0, 1.0)
    } else {
        ((share - 0.8) / (NO_PREFETCH_SHARE - 0.8)).clamp(0.0, 1.0)
    };
    Some((
        Found {
            value: if yes { "yes" } else { "no" }.to_string(),
            confidence,
            method: format!(
                "{}: {:.1}% of cold accesses at stride {} B missed ({per_miss:.0} B served per miss)",
                trace.id,
                100.0 * share,
                trace.stride_bytes
            ),
        },
        block,
    ))
}

/// Without prefetch, at least this share of a cold trace at the cold-miss granularity misses.
const NO_PREFETCH_SHARE: f64 = 0.9;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dissect::data::Path;

    const W: (f64, f64) = (100.0, 1000.0);
    const C: (f64, f64) = (500.0, 1500.0);

    fn trace(stride: u64, footprint: u64, latencies: Vec<u32>) -> Trace {
        Trace {
            id: "t".into(),
            path: Path::Ca,
            footprint_bytes: footprint,
            stride_bytes: stride,
            warm_steps: 0,
            cold: false,
            carveout_percent: None,
            latencies,
            order: Vec::new(),
        }
    }

    fn laps(lap: u64, missed: &[&[u64]]) -> Vec<u32> {
        missed.iter().flat_map(|m| (0..lap).map(move |i| if m.contains(&i) { 300 } else { 40 })).collect()
    }

    #[test]
    fn runs_of_four_sectors_make_a_128_byte_line() {
        let lap = 40u64;
        let lat: Vec<u32> =
            (0..3 * lap).map(|i| if matches!(i % lap, 0..=3 | 16..=19 | 32..=35) { 300 } else { 40 }).collect();
        let f = line_bytes(&[&trace(32, lap * 32, lat)], W, None).unwrap();
        assert_eq!(f.value, 128);
        assert!(f.confidence > 0.8, "{f:?}");
    }

    /// Seed 001's texture cache: four consecutive 32 B lines map to one set. One access over
    /// capacity, the overfull set misses on runs of four lines and on one single line, lap after
    /// lap: the single one rules out a 128 B line.
    #[test]
    fn a_single_line_missing_in_every_lap_rules_out_a_larger_line() {
        let lap = 192u64;
        let runs: Vec<u64> = (0..10).flat_map(|k| 16 * k..16 * k + 4).collect();
        let mut missed = runs.clone();
        missed.push(176);
        let lat = laps(lap, &[&missed, &missed, &missed, &missed]);
        let f = line_bytes(&[&trace(32, lap * 32, lat)], W, None).unwrap();
        assert_eq!(f.value, 32, "{f:?}");
        assert!(f.confidence <= 0.5 && f.method.contains("share a set"), "{f:?}");
        // One stray partial block in one lap of four is noise, not structure.
        let mut stray = runs.clone();
        stray.push(176);
        let noisy = laps(lap, &[&runs, &stray, &runs, &runs]);
        let f = line_bytes(&[&trace(32, lap * 32, noisy)], W, None).unwrap();
        assert_eq!(f.value, 128, "{f:?}");
        assert!(f.confidence > 0.8, "{f:?}");
    }

    #[test]
    fn neighbouring_lines_evicted_together_still_make_one_line() {
        // Random replacement: lines 0 and 1 (sectors 0..8) both missed in one lap of three.
        let lat = laps(64, &[&[0, 1, 2, 3, 4, 5, 6, 7], &[8, 9, 10, 11], &[40, 41, 42, 43, 20, 21, 22, 23]]);
        let f = line_bytes(&[&trace(32, 64 * 32, lat)], W, None).unwrap();
        assert_eq!(f.value, 128, "{f:?}");
    }

    #[test]
    fn traces_without_misses_or_with_nothing_but_misses_give_no_line() {
        // The H200's first traces: hits at two latencies, no miss at all.
        let hits: Vec<u32> = (0..700).map(|i| if i % 8 == 0 { 42 } else { 50 }).collect();
        assert!(line_bytes(&[&trace(32, 70 * 32, hits)], W, None).is_none());
        let all = vec![300u32; 200];
        assert!(line_bytes(&[&trace(32, 50 * 32, all)], W, None).is_none());
    }

    #[test]
    fn periodic_equally_spaced_misses_are_lru_bit_defined() {
        // 4 sets x 2 ways of 128 B: capacity 1 KiB, footprint 9 lines; set 0 holds lines 0, 4, 8.
        let lap = 9u64;
        let lat: Vec<u32> = (0..4 * lap).map(|i| if (i % lap).is_multiple_of(4) { 300 } else { 40 }).collect();
        let t = trace(128, lap * 128, lat);
        let s = set_structure(&[&t], 1024, W, None).unwrap();
        assert_eq!((s.ways.value, s.sets.value), (2, 4));
        assert_eq!(s.mapping.unwrap().value, "bit-defined");
        assert_eq!(s.policy.value, "lru");
        assert_eq!(s.conflict_lines, vec![0, 4, 8]);
    }

    #[test]
    fn a_stray_miss_in_one_lap_keeps_a_periodic_pattern() {
        let core: &[u64] = &[0, 4, 8];
        let mut v: Vec<&[u64]> = vec![core; 19];
        v.push(&[0, 4, 8, 5]);
        let f = periodicity(&[&trace(128, 9 * 128, laps(9, &v))], W, None).unwrap();
        assert_eq!(f.value, "lru", "{f:?}");
        // Changing patterns stay non-LRU.
        let changing: Vec<&[u64]> = vec![&[0, 4], &[4, 8], &[0, 8], &[0, 4], &[4, 8], &[0, 8]];
        assert_eq!(periodicity(&[&trace(128, 9 * 128, laps(9, &changing))], W, None).unwrap().value, "non-lru");
    }

    #[test]
    fn changing_irregular_misses_are_non_lru_hashed() {
        let lap = 9u64;
        let pattern = [vec![0u64, 5], vec![5, 7], vec![0, 7], vec![0, 5]];
        let lat: Vec<u32> =
            pattern.iter().flat_map(|m| (0..lap).map(move |i| if m.contains(&i) { 300 } else { 40 })).collect();
        let s = set_structure(&[&trace(128, lap * 128, lat)], 1024, W, None).unwrap();
        assert_eq!(s.ways.value, 2);
        assert_eq!(s.mapping.unwrap().value, "hashed");
        assert_eq!(s.policy.value, "non-lru");
    }

    #[test]
    fn misses_that_are_not_one_sets_lines_give_no_structure() {
        // New lines keep missing in later laps: not one set's lines.
        let lat = laps(400, &[&[0, 5], &[5, 9], &[9, 13], &[13, 17], &[17, 21], &[21, 25]]);
        let t = trace(128, 400 * 128, lat);
        assert!(set_structure(&[&t], 399 * 128, W, None).is_none());
        assert_eq!(periodicity(&[&t], W, None).unwrap().value, "non-lru");
        // More than three quarters of the lap missed.
        let most: &[u64] = &[0, 1, 2, 3, 4, 5, 6];
        let lat = laps(8, &[most, most, most, most]);
        assert!(set_structure(&[&trace(128, 8 * 128, lat)], 896, W, None).is_none());
    }

    #[test]
    fn probes_revisit_lines_at_other_words() {
        let (x, y) = policy_probes(&[0, 4, 8, 12, 16], 128).unwrap();
        assert_eq!(x, vec![0, 512, 1024, 1536, 1024 + 4, 1536 + 4, 4, 2048, 512 + 8]);
        assert_eq!(y, vec![0, 512, 1024, 1536, 4, 2048, 8]);
        assert!(policy_probes(&[0, 4], 128).is_none());
    }

    #[test]
    fn cold_granularity_and_prefetch() {
        let lat: Vec<u32> = (0..256).map(|i| if i % 8 == 0 { 700 } else { 290 }).collect();
        assert_eq!(cold_miss_bytes(&trace(4, 1 << 20, lat), C).unwrap().value, 32);
        let all: Vec<u32> = vec![700; 64];
        assert_eq!(prefetch(&trace(32, 1 << 20, all), C).unwrap().0.value, "no");
        let some: Vec<u32> = (0..64).map(|i| if i % 4 == 0 { 700 } else { 290 }).collect();
        let (p, block) = prefetch(&trace(32, 1 << 20, some), C).unwrap();
        assert_eq!((p.value.as_str(), block), ("yes", Some(128)));
        let half: Vec<u32> = (0..64).map(|i| if i % 8 < 4 { 700 } else { 290 }).collect();
        assert_eq!(prefetch(&trace(32, 1 << 20, half), C).unwrap().1, Some(64));
    }
}
