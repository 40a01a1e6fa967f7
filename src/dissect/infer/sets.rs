//! The sets of a cache from traces one line over its capacity (Mei & Chu): the lines of the one
//! overfull set are the ones that miss. There are ways + 1 of them. Their layout gives the set
//! mapping: equally spaced lines (every `sets` lines) for a modulo mapping (bit-defined for a
//! power-of-two set count); runs of `n` consecutive lines, the runs equally spaced by `n x
//! sets` lines, where each set takes `n` consecutive lines (Mei & Chu's texture cache, four
//! 32 B lines per set); anything else is hashed.
//!
//! A regular mapping also says where the first set overflows: with `n` consecutive lines per
//! set, a footprint fills the sets block by block, and the first overflow comes after `n x sets
//! x (ways / n) + ways % n` lines: before the cache is full unless `n` divides the ways. The
//! capacity measured (the first overflow) is checked against it, and a first overflow measured
//! with other ways (another kernel, another carveout) is turned into those ways and the
//! capacity they give.

use std::collections::BTreeSet;

use super::traces::{Found, Laps, is_miss, periodicity_of, pooled_laps};
use crate::dissect::data::Trace;

/// Sets, ways, mapping and policy of a cache, from traces at the line stride whose footprint
/// is one line beyond `capacity`.
#[derive(Debug, Clone, PartialEq)]
pub struct SetStructure {
    /// Ways per set.
    pub ways: Found<u64>,
    /// Number of sets.
    pub sets: Found<u64>,
    /// "bit-defined", "modulo" or "hashed"; none for a single set.
    pub mapping: Option<Found<String>>,
    /// Consecutive lines that map to one set, where the mapping is regular (1 for a cache
    /// whose neighbouring lines go to neighbouring sets).
    pub block: Option<Found<u64>>,
    /// Whether the capacity the traces ran at is the first overflow the regular mapping
    /// predicts (then sets x ways x line is the capacity).
    pub consistent: bool,
    /// "lru" (periodic: every line of the overfull set misses every lap) or "non-lru".
    pub policy: Found<String>,
    /// Lines of the overfull set, in lap order.
    pub conflict_lines: Vec<u64>,
}

/// Lines after which the first set of a cache of `sets` sets of `ways` ways, `block`
/// consecutive lines to a set, holds one line too many: the largest footprint without a miss,
/// in lines.
pub fn first_overflow_lines(sets: u64, ways: u64, block: u64) -> u64 {
    let n = block.max(1);
    n * sets * (ways / n) + ways % n
}

/// The ways that make the first overflow of `sets` sets (`block` consecutive lines to a set)
/// come after `lines` lines, if any do.
pub fn ways_for_first_overflow(lines: u64, sets: u64, block: u64) -> Option<u64> {
    let n = block.max(1);
    let period = n * sets;
    let (q, r) = (lines / period, lines % period);
    (r < n && (q > 0 || r > 0)).then_some(n * q + r)
}

/// The largest footprint a cyclic chase at `stride` bytes keeps without a miss, in a cache of
/// `sets` sets of `ways` ways with `block` consecutive `line`-byte lines to a set: the sets fill
/// as the chase reaches their lines, and the first that needs one way too many ends it. None
/// when that takes more than `limit` accesses.
pub fn first_overflow_at_stride(sets: u64, ways: u64, block: u64, line: u64, stride: u64, limit: u64) -> Option<u64> {
    let (line, stride, block) = (line.max(1), stride.max(1), block.max(1));
    let mut held: Vec<(u64, u64)> = vec![(u64::MAX, 0); sets.max(1) as usize];
    for k in 0..limit {
        let l = k * stride / line;
        let set = &mut held[((l / block) % sets.max(1)) as usize];
        if set.0 != l {
            *set = (l, set.1 + 1);
            if set.1 > ways {
                return Some(k * stride);
            }
        }
    }
    None
}

/// A regular layout of the overfull set's lines: (sets, consecutive lines per set).
fn regular(lines: &[u64]) -> Option<(u64, u64)> {
    // Runs of consecutive lines: (first line, length).
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for &l in lines {
        match runs.last_mut() {
            Some((s, n)) if *s + *n == l => *n += 1,
            _ => runs.push((l, 1)),
        }
    }
    let n = runs.iter().map(|r| r.1).max()?;
    if runs.len() < 2 {
        return None;
    }
    // Every run is a whole block of `n` lines, but the last, which the footprint cuts short.
    if runs[..runs.len() - 1].iter().any(|r| r.1 != n) {
        return None;
    }
    let period = runs[1].0 - runs[0].0;
    if runs.windows(2).any(|w| w[1].0 - w[0].0 != period) || !period.is_multiple_of(n) {
        return None;
    }
    Some((period / n, n))
}

/// Infers the set structure from `traces` (same footprint and stride). The reading assumes one
/// overfull set; it is refused (None) when the misses do not look like one: fewer than four
/// laps, missed lines that keep changing after half the laps (not one set's lines), or more
/// than three quarters of the lap missed.
pub fn set_structure(traces: &[&Trace], capacity: u64, window: (f64, f64), rate: Option<f64>) -> Option<SetStructure> {
    let first = traces.first()?;
    let line = first.stride_bytes;
    let pooled: Laps = pooled_laps(traces, window, rate);
    let laps = &pooled.laps;
    if laps.len() < 4 {
        return None;
    }
    let union: BTreeSet<u64> = laps.iter().flatten().copied().collect();
    // One set's lines: with two sets, a little over half the lap; more means most lines miss.
    if union.len() < 2 || 4 * union.len() as u64 > 3 * first.lap() {
        return None;
    }
    // Non-LRU policies reveal the set's lines over several laps; the union must stop growing.
    let half: BTreeSet<u64> = laps[..laps.len() / 2].iter().flatten().copied().collect();
    if half.len() != union.len() {
        return None;
    }
    let policy = periodicity_of(&first.id, &pooled)?;
    // Under a periodic policy the set's lines miss in (nearly) every lap: a leftover stray
    // that struck one position twice is not one of them.
    let union = if policy.value == "lru" {
        let core: BTreeSet<u64> =
            union.iter().copied().filter(|i| 2 * laps.iter().filter(|m| m.contains(i)).count() >= laps.len()).collect();
        if core.len() >= 2 { core } else { union }
    } else {
        union
    };
    let ways = union.len() as u64 - 1;
    let lines: Vec<u64> = union.iter().copied().collect();
    let gaps: Vec<u64> = lines.windows(2).map(|w| w[1] - w[0]).collect();
    let note = pooled.note();
    let capacity_lines = capacity / line.max(1);
    let on_lines = capacity.is_multiple_of(line.max(1));
    let layout = regular(&lines).filter(|(sets, _)| *sets >= 2);
    let Some((sets, block)) = layout else {
        return Some(irregular(first, capacity, ways, &lines, &gaps, policy, &pooled));
    };
    if !on_lines || first_overflow_lines(sets, ways, block) != capacity_lines {
        // Evenly laid out, yet not where such a mapping first overflows: a hash that happens
        // to space this set's lines evenly (an XOR of address bits does), or a capacity
        // measured wrong. Neither reading is sure.
        let mut s = irregular(first, capacity, ways, &lines, &gaps, policy, &pooled);
        if let Some(m) = s.mapping.as_mut() {
            m.confidence = m.confidence.min(0.6);
            m.method = format!(
                "{}: the overfull set's lines are evenly laid out ({gaps:?} lines), but {} sets of {ways} ways would first overflow after {} B, not {capacity} B",
                first.id,
                sets,
                line * first_overflow_lines(sets, ways, block)
            );
        }
        return Some(s);
    }
    let word = if sets.is_power_of_two() { "bit-defined" } else { "modulo" };
    let many = if block > 1 { lines.len() as u64 > block + 1 } else { lines.len() >= 3 };
    let layout_conf = if many { 0.95 } else { 0.6 };
    let spacing = if block > 1 {
        format!("runs of {block} consecutive lines, {} lines apart", block * sets)
    } else {
        format!("{sets} lines apart, one way's worth")
    };
    let check = format!("; the first overflow at {capacity} B is the one {sets} sets of {ways} ways predict");
    Some(SetStructure {
        ways: Found {
            value: ways,
            confidence: 1.0,
            method: format!(
                "{}: {} lines of one set miss at one line over capacity ({} laps{note})",
                first.id,
                union.len(),
                laps.len()
            ),
        },
        sets: Found {
            value: sets,
            confidence: if many { 1.0 } else { 0.6 },
            method: format!("{}: the overfull set's lines are {spacing}{check}", first.id),
        },
        mapping: Some(Found {
            value: word.to_string(),
            confidence: layout_conf,
            method: format!("{}: the overfull set's lines are {spacing}{check}", first.id),
        }),
        block: Some(Found {
            value: block,
            confidence: layout_conf,
            method: if block > 1 {
                format!(
                    "{}: the overfull set's lines come in runs of {block} consecutive {line} B lines{check}",
                    first.id
                )
            } else {
                format!("{}: no two neighbouring lines of the overfull set", first.id)
            },
        }),
        consistent: true,
        policy,
        conflict_lines: lines,
    })
}

/// The set structure of an overfull set whose lines follow no regular layout: hashed sets.
/// They fill unevenly, so the capacity seen (the first overflow) may fall short of sets x ways
/// x line, and the set count from it is a lower bound.
fn irregular(
    first: &Trace,
    capacity: u64,
    ways: u64,
    lines: &[u64],
    gaps: &[u64],
    policy: Found<String>,
    pooled: &Laps,
) -> SetStructure {
    let line = first.stride_bytes;
    let sets_exact = capacity.is_multiple_of(ways * line);
    let sets_value = (capacity as f64 / (ways * line) as f64).round().max(1.0) as u64;
    // Under a policy whose misses change from lap to lap, the union of missed lines may hold
    // lines of more than one lap's victims: irregular gaps are then weaker evidence.
    let steady = policy.value != "non-lru";
    let mapping = (sets_value >= 2).then(|| Found {
        value: "hashed".to_string(),
        confidence: if lines.len() >= 3 { 0.9 } else { 0.5 } * if steady { 1.0 } else { 0.6 },
        method: format!(
            "{}: the overfull set's lines are irregularly spaced ({gaps:?} lines){}",
            first.id,
            if steady { "" } else { ", under misses that change from lap to lap" }
        ),
    });
    // Misses that change from lap to lap may not have shown every line of the set, or may
    // hold a stray the cleaning kept: the count of lines is then less sure.
    let ways_conf: f64 = if sets_exact && steady { 1.0 } else { 0.6 };
    let (sets_conf, sets_note) = if mapping.is_some() {
        ((ways_conf * if sets_exact { 1.0 } else { 0.5 }).min(0.3), "; a lower bound where sets are hashed")
    } else {
        (ways_conf * if sets_exact { 1.0 } else { 0.5 }, "")
    };
    SetStructure {
        ways: Found {
            value: ways,
            confidence: ways_conf,
            method: format!(
                "{}: {} lines of one set miss at one line over capacity ({} laps{})",
                first.id,
                lines.len(),
                pooled.laps.len(),
                pooled.note()
            ),
        },
        sets: Found {
            value: sets_value,
            confidence: sets_conf,
            method: format!("capacity {capacity} B / ({ways} ways x {line} B lines){sets_note}"),
        },
        mapping,
        block: None,
        consistent: false,
        policy,
        conflict_lines: lines.to_vec(),
    }
}

/// The two policy probes over the lines of one set (`lines`: ways + 1 line indices, `line`
/// bytes each), as byte offsets visited once each from a cold cache. Both first fill the set
/// with the first `ways` lines. Probe X touches the second half of them again, then the first
/// line, brings in the extra line and reads the second line: LRU has evicted it (miss), FIFO
/// evicted the first line and tree pseudo-LRU one of the second half (hit). Probe Y touches the
/// first line again, brings in the extra line and reads the first line: only FIFO has evicted
/// it. Returns None for fewer than two ways.
pub fn policy_probes(lines: &[u64], line: u64) -> Option<(Vec<u64>, Vec<u64>)> {
    let w = lines.len().checked_sub(1)?;
    if w < 2 || line < 12 {
        return None;
    }
    let at = |k: usize, word: u64| lines[k] * line + 4 * word;
    let fill: Vec<u64> = (0..w).map(|k| at(k, 0)).collect();
    let mut x = fill.clone();
    x.extend((w / 2..w).map(|k| at(k, 1)));
    x.extend([at(0, 1), at(w, 0), at(1, 2)]);
    let mut y = fill;
    y.extend([at(0, 1), at(w, 0), at(0, 2)]);
    Some((x, y))
}

/// The replacement policy from the cyclic traces' periodicity and the probes' last accesses.
pub fn policy(cyclic: &Found<String>, x: &[&Trace], y: &[&Trace], window: (f64, f64)) -> Found<String> {
    if cyclic.value != "lru" || x.is_empty() || y.is_empty() {
        return cyclic.clone();
    }
    // A last access slower than the window is a stray on top of a hit or a miss: that run says
    // nothing.
    let last_missed = |ts: &[&Trace]| {
        let told: Vec<u32> =
            ts.iter().filter_map(|t| t.latencies.last().copied()).filter(|l| *l as f64 <= window.1).collect();
        if told.is_empty() {
            return 0.5;
        }
        told.iter().filter(|l| is_miss(**l, window)).count() as f64 / told.len() as f64
    };
    // The fill of a cold set must miss on every line (or be slower still: a stray on top of a
    // miss); otherwise the probe says nothing.
    let ways = y[0].order.len().saturating_sub(3);
    let filled =
        x.iter().chain(y).all(|t| t.latencies.iter().take(ways).all(|l| is_miss(*l, window) || *l as f64 > window.1));
    let (xm, ym) = (last_missed(x), last_missed(y));
    let decided = |v: f64| (2.0 * (v - 0.5)).abs();
    let (value, agree) = if ym >= 0.75 {
        ("fifo", decided(ym))
    } else if xm >= 0.75 && ym <= 0.25 {
        ("lru", decided(xm).min(decided(ym)))
    } else if xm <= 0.25 && ym <= 0.25 {
        ("plru", decided(xm).min(decided(ym)))
    } else {
        ("lru", 0.3)
    };
    Found {
        value: value.to_string(),
        confidence: cyclic.confidence * agree * if filled { 1.0 } else { 0.3 },
        method: format!(
            "{}; probes: re-used line evicted in {:.0}% (FIFO test), second line evicted in {:.0}% (LRU vs pseudo-LRU) of {} runs",
            cyclic.method,
            100.0 * ym,
            100.0 * xm,
            x.len()
        ),
    }
}
