//! The L1-like paths (ld.ca, ld.nc, texture): the capacity from the footprint sweep; from the
//! traces the capacity the trace kernel sees, the line, the sets, ways, set mapping and policy.
//!
//! The footprint sweeps and the trace kernel see the first miss, which is the capacity only
//! where every set fills evenly. A regular set mapping found by the traces (modulo, or `n`
//! consecutive lines per set) says where the first set overflows for any number of ways, so
//! each first miss is turned into the ways and the capacity (sets x ways x line) it implies; a
//! first miss that no whole number of ways explains is reported as measured, with a confidence
//! that says it was not explained. Hashed sets fill unevenly: their first miss bounds the
//! capacity from below only.

use super::analyze::{Dissection, Row, fetch, knee_method, level_title};
use super::levels::{self, Knee};
use super::line_check;
use super::sets::{self, SetStructure};
use super::traces::{self, Found};
use crate::dissect::data::{Curve, Path, Point, Sweeps, Trace};

/// The highest confidence of a capacity where the sets are hashed: the first miss may come
/// before the cache is full.
const HASHED_CAPACITY: f64 = 0.7;

/// A regular set layout the traces found: the first overflow of any number of ways follows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Layout {
    /// Sets.
    pub sets: u64,
    /// Consecutive lines per set.
    pub block: u64,
    /// Line, bytes.
    pub line: u64,
    /// Confidence in the layout.
    pub confidence: f64,
}

/// What the traces say about how a capacity should be read.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Reading {
    /// A regular layout (the first overflow of any number of ways follows from it).
    pub layout: Option<Layout>,
    /// Hashed sets: they fill unevenly, the first miss bounds the capacity from below.
    pub hashed: bool,
    /// Misses that change from lap to lap (not LRU, not FIFO): a set one line over its ways
    /// may miss only now and then, and the first miss a sweep sees may come late.
    pub late: bool,
    /// Whether the traces showed one set's lines at all.
    pub shown: bool,
}

/// The highest confidence of a capacity where the traces did not show how the sets fill.
const UNSHOWN_CAPACITY: f64 = 0.75;

/// The highest confidence of a capacity where misses change from lap to lap.
const LATE_CAPACITY: f64 = 0.7;

/// A capacity from a first miss, and how it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct Capacity {
    /// Bytes.
    pub bytes: u64,
    /// Confidence.
    pub confidence: f64,
    /// What the reading adds to the knee's method ("" when nothing).
    pub note: String,
    /// The ways the first miss implies, where a regular layout explains it.
    pub ways: Option<u64>,
}

/// The capacity the first miss bracketed by `k` (sweep step `step` bytes) gives under
/// `reading`.
pub fn capacity(k: &Knee, step: u64, reading: Reading) -> Capacity {
    let mut c = read(k, step, &reading);
    if reading.late && c.confidence > LATE_CAPACITY {
        c.confidence = LATE_CAPACITY;
        c.note.push_str("; misses change from lap to lap: the first miss may come late");
    }
    c
}

fn read(k: &Knee, step: u64, reading: &Reading) -> Capacity {
    let as_measured = Capacity { bytes: k.value, confidence: k.confidence, note: String::new(), ways: None };
    if !reading.shown {
        return Capacity {
            confidence: k.confidence.min(UNSHOWN_CAPACITY),
            note: "; the traces did not show how the sets fill: the first miss is the capacity only where they fill evenly".into(),
            ..as_measured
        };
    }
    if reading.hashed {
        return Capacity {
            confidence: k.confidence.min(HASHED_CAPACITY),
            note: "; hashed sets fill unevenly: the first miss bounds the capacity from below".into(),
            ..as_measured
        };
    }
    let Some(layout) = reading.layout else { return as_measured };
    // Every footprint the bracket leaves possible for the first miss, and the ways it implies.
    let step = step.max(1);
    let mut fits: Vec<(u64, u64)> = Vec::new();
    let mut c = k.last_clean;
    while c < k.first_dirty.max(k.last_clean + 1) && fits.len() < 64 && c < k.last_clean + 4096 * step {
        if c.is_multiple_of(layout.line)
            && let Some(w) = sets::ways_for_first_overflow(c / layout.line, layout.sets, layout.block)
            && fits.last().is_none_or(|f| f.1 != w)
        {
            fits.push((c, w));
        }
        c += step;
    }
    let shape = if layout.block > 1 {
        format!("{} sets of {} consecutive {} B lines", layout.sets, layout.block, layout.line)
    } else {
        format!("{} sets of {} B lines", layout.sets, layout.line)
    };
    let Some(&(at, ways)) = fits.iter().min_by_key(|(c, _)| c.abs_diff(k.value)) else {
        return Capacity {
            confidence: k.confidence.min(0.5),
            note: format!("; no whole number of ways of {shape} first overflows there"),
            ..as_measured
        };
    };
    let bytes = layout.sets * ways * layout.line;
    let pinned = k.pinned_confidence.min(layout.confidence);
    let confidence = if fits.len() == 1 { pinned } else { pinned * (0.75 / (fits.len() as f64).sqrt()) };
    let note = if bytes == at && fits.len() == 1 && k.candidates == 1 {
        String::new()
    } else if bytes == at {
        format!("; {ways} ways of {shape} fill at {at} B")
    } else {
        format!("; {ways} ways of {shape} first overflow after {at} B and hold {bytes} B")
    };
    Capacity { bytes, confidence, note, ways: Some(ways) }
}

/// How the traces read capacities, from a set structure (lines of `line` bytes) and the
/// periodicity of the misses one line over capacity.
pub fn reading(s: Option<&SetStructure>, line: u64, periodic: Option<&Found<String>>) -> Reading {
    let late = periodic.or(s.map(|s| &s.policy)).is_some_and(|p| p.value == "non-lru");
    let Some(s) = s else { return Reading { late, ..Reading::default() } };
    let hashed = s.mapping.as_ref().is_some_and(|m| m.value == "hashed");
    let layout = match (&s.mapping, &s.block) {
        (Some(m), Some(b)) if s.consistent && !hashed => {
            Some(Layout { sets: s.sets.value, block: b.value, line, confidence: m.confidence.min(s.sets.confidence) })
        }
        _ => None,
    };
    Reading { layout, hashed, late, shown: true }
}

/// The highest confidence of what a layout gives where it does not explain every sweep.
const DOUBTED: f64 = 0.5;

/// Where the layout `l`, with the `ways` of the sweeps' kernel, does not predict the first miss
/// of the line check: why. None where it does, or where the check shows no first miss.
fn contradicted_by_check(check: &Curve, overhead: f64, l: Layout, ways: u64) -> Option<String> {
    let fit = levels::fit(check, overhead);
    let k = fit.levels.first()?.capacity.as_ref()?;
    let step = check.stride_bytes.max(1);
    let limit = 4 * (k.first_dirty / step) + 64;
    let predicted = sets::first_overflow_at_stride(l.sets, ways, l.block, l.line, step, limit);
    if predicted.is_some_and(|p| p >= k.last_clean && p < k.first_dirty) {
        return None;
    }
    let at = predicted.map(|p| format!("after {p} B")).unwrap_or_else(|| format!("beyond {} B", limit * step));
    Some(format!(
        "; but {} sets of {ways} ways of {} consecutive {} B lines would first miss {at} at stride {step} B, and {} missed first between {} and {} B",
        l.sets, l.block, l.line, check.id, k.last_clean, k.first_dirty
    ))
}

/// The capacity the trace kernel sees: the largest footprint whose probe showed no miss, and
/// the smallest larger one that did. A probe whose traces were kept (`probe/<path>/...`) is
/// judged on its misses with strays set aside; the others on their histograms (two accesses
/// in the miss window).
fn trace_capacity(sweeps: &Sweeps, curve: &Curve, window: (f64, f64), rate: Option<f64>) -> Option<(u64, u64)> {
    let label = curve.path.label();
    let kept: Vec<&Trace> = sweeps.traces_with(&format!("probe/{label}/"));
    let missed = |p: &Point| -> bool {
        let own: Vec<&Trace> = kept.iter().copied().filter(|t| t.footprint_bytes == p.x).collect();
        if own.is_empty() {
            p.hist.bins().filter(|(c, _)| *c >= window.0 && *c <= window.1).map(|(_, n)| n).sum::<u64>() >= 2
        } else {
            traces::probe_missed(&own, window, rate)
        }
    };
    let judged: Vec<(u64, bool)> = curve.points.iter().map(|p| (p.x, missed(p))).collect();
    let last_clean = judged.iter().filter(|(_, m)| !m).map(|(x, _)| *x).max()?;
    let first_dirty = judged.iter().filter(|(x, m)| *m && *x > last_clean).map(|(x, _)| *x).min()?;
    Some((last_clean, first_dirty))
}

/// The facts of one L1-like path; returns how its traces read capacities.
pub(super) fn l1_path(d: &mut Dissection, sweeps: &Sweeps, path: Path, overhead: f64) -> Reading {
    let prefix = path.level_prefix();
    let label = path.label();
    let mut row = Row { level: level_title(path).into(), ..Row::default() };
    row.fetch_bytes = fetch(d, sweeps, path);
    let size_curve = sweeps.curve(&format!("size/{label}"));
    let mut size_knee = None;
    if let Some(curve) = size_curve {
        let fit = levels::fit(curve, overhead);
        if let Some(first) = fit.levels.first() {
            row.latency_cycles = Some(first.latency_cycles);
            d.latency(&format!("{prefix}.hit"), first);
            if let Some(k) = &first.capacity {
                size_knee = Some((curve, first.clone(), k.clone()));
            }
        }
    }
    // The trace facts come after the size, which they may explain: gathered here first.
    let mut later = Dissection::default();
    let mut reading_found = Reading::default();
    let mut doubt: Option<String> = None;
    // Trace analysis: capacity with the trace kernel, line, sets, ways, mapping, policy. The
    // hit/miss window is the size sweep's, as in the plan that chose the traces.
    let window = size_curve.and_then(levels::miss_window);
    // How often strays look like misses, from the size sweep's points where everything hits.
    let rate = size_curve.zip(window).and_then(|(c, w)| traces::stray_rate(c, overhead, w));
    let cap_id = format!("trace-capacity/{label}");
    let capacity_found = sweeps
        .curve(&cap_id)
        .zip(window)
        .and_then(|(c, w)| trace_capacity(sweeps, c, w, rate).map(|(clean, dirty)| (clean, dirty, c.stride_bytes)));
    if let (Some(b), Some((cap, dirty, unit))) = (window, capacity_found) {
        d.mark(&cap_id, cap, format!("{cap} B"));
        let set_traces = sweeps.traces_with(&format!("sets/{label}/"));
        let structure = traces::set_structure(&set_traces, cap, b, rate);
        let set_line = set_traces.first().map(|t| t.stride_bytes).unwrap_or(unit);
        let periodic = traces::periodicity(&set_traces, b, rate);
        reading_found = reading(structure.as_ref(), set_line, periodic.as_ref());
        // The layout and the ways the size sweep's first miss implies must also predict the
        // first miss of the line check, a sweep at a stride of several lines.
        let ways_swept = size_knee.as_ref().and_then(|(c, _, k)| capacity(k, c.stride_bytes, reading_found).ways);
        let check = sweeps.curve(&format!("line-check/{label}"));
        doubt = reading_found
            .layout
            .zip(ways_swept)
            .zip(check)
            .and_then(|((l, w), check)| contradicted_by_check(check, overhead, l, w));
        // The trace kernel's capacity: sets x ways x line where the traces explain its first
        // miss; the first miss itself otherwise.
        let sharp = if dirty - cap <= unit { 1.0f64 } else { 0.5 };
        let method = format!(
            "{cap_id}: largest footprint without misses for the trace kernel (not at {dirty} B), whose shared memory shrinks the L1"
        );
        let trace_size = match (&structure, reading_found) {
            (Some(s), Reading { layout: Some(l), .. }) => Found {
                value: l.sets * s.ways.value * l.line,
                confidence: sharp.min(l.confidence).min(s.ways.confidence),
                method: format!("{method}; sets x ways x line: {} x {} x {} B", l.sets, s.ways.value, l.line),
            },
            (_, Reading { hashed: true, .. }) => Found {
                value: cap,
                confidence: sharp.min(HASHED_CAPACITY),
                method: format!(
                    "{method}; hashed sets fill unevenly: the first miss bounds sets x ways x line from below"
                ),
            },
            (_, Reading { late: true, .. }) => Found {
                value: cap,
                confidence: sharp.min(LATE_CAPACITY),
                method: format!("{method}; misses change from lap to lap: the first miss may come late"),
            },
            _ => {
                // The first miss of the trace kernel is the size sweep's knee again: a broad
                // knee (sets that fill unevenly) understates sets x ways x line here too.
                let knee = size_knee.as_ref().map(|(_, _, k)| k.pinned_confidence).unwrap_or(1.0);
                Found {
                    value: cap,
                    confidence: sharp.min(knee).min(if structure.is_some() { 0.6 } else { UNSHOWN_CAPACITY }),
                    method: format!("{method}; the first miss, taken for sets x ways x line"),
                }
            }
        };
        later.found_number(&format!("{prefix}.trace_size_bytes"), &trace_size, "bytes");
        row.trace_size_bytes = Some(trace_size.value);
        let line_traces = sweeps.traces_with(&format!("line/{label}"));
        let fine = line_traces.first().map(|t| t.stride_bytes).zip(row.fetch_bytes).filter(|(s, g)| s < g);
        if let Some((step, fetch)) = fine {
            // Input check: below the fetch granularity the first access to each fetched unit
            // misses and the next ones hit, whatever the line: the trace cannot show a line.
            later.unknown_fact(
                &format!("{prefix}.line_bytes"),
                "bytes",
                format!(
                    "line/{label}: the trace steps {step} B, finer than the {fetch} B fetch granularity of stride/{label}: refused (its misses would mark fetches, not lines)"
                ),
            );
        } else if let Some(mut line) = traces::line_bytes(&line_traces, b, rate) {
            let check = sweeps.curve(&format!("line-check/{label}"));
            if let (Some(size), Some(check), Some(fetch)) = (size_curve, check, row.fetch_bytes) {
                line = line_check::check(line, size, check, overhead, fetch);
            }
            later.found_number(&format!("{prefix}.line_bytes"), &line, "bytes");
            row.line_bytes = Some(line.value);
        }
        if let Some(s) = structure {
            later.found_number(&format!("{prefix}.ways"), &s.ways, "ways");
            later.found_number(&format!("{prefix}.sets"), &s.sets, "sets");
            if let Some(m) = &s.mapping {
                later.found_text(&format!("{prefix}.set_mapping"), m);
                row.mapping = Some(m.value.clone());
            }
            if let Some(n) = &s.block {
                later.found_number(&format!("{prefix}.consecutive_lines"), n, "lines");
            }
            let xs = sweeps.traces_with(&format!("policy-x/{label}/"));
            let ys = sweeps.traces_with(&format!("policy-y/{label}/"));
            let policy = traces::policy(&s.policy, &xs, &ys, b);
            later.found_text(&format!("{prefix}.replacement"), &policy);
            for t in &set_traces {
                for &l in &s.conflict_lines {
                    d.mark(&t.id, l, String::new());
                }
            }
            row.ways = Some(s.ways.value);
            row.sets = Some(s.sets.value);
            row.policy = Some(policy.value.clone());
        } else if let Some(p) = periodic.filter(|p| p.value == "non-lru") {
            // No one set's lines to count, but misses that change from lap to lap are not LRU.
            later.found_text(&format!("{prefix}.replacement"), &p);
            row.policy = Some(p.value.clone());
        }
    }
    if let Some((curve, level, k)) = &size_knee {
        let mut c = capacity(k, curve.stride_bytes, reading_found);
        if let Some(why) = &doubt {
            c.confidence = c.confidence.min(DOUBTED);
            c.note.push_str(why);
        }
        d.number_fact(
            &format!("{prefix}.size_bytes"),
            c.bytes,
            "bytes",
            c.confidence,
            format!("{}{}", knee_method(curve, level, k), c.note),
        );
        d.mark(&curve.id, c.bytes, format!("{} B", c.bytes));
        row.size_bytes = Some(c.bytes);
        row.half_bytes = k.half;
    }
    if let Some(why) = &doubt {
        // The layout does not explain every sweep: nothing read from it is sure, the policy
        // probes (built on the overfull set's lines) included.
        let doubted =
            ["line_bytes", "ways", "sets", "set_mapping", "consecutive_lines", "trace_size_bytes", "replacement"];
        for f in later.facts.iter_mut().filter(|f| doubted.iter().any(|n| f.name == format!("{prefix}.{n}"))) {
            f.confidence = f.confidence.min(DOUBTED);
            f.method.push_str(why);
        }
    }
    d.facts.extend(later.facts);
    if row != (Row { level: row.level.clone(), ..Row::default() }) {
        d.rows.push(row);
    }
    reading_found
}
