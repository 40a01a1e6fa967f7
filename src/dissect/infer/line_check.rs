//! The line from the traces, checked by capacity at a stride of one line (Mei & Chu's
//! stride-over-line stage). A cache of `L`-byte lines holds one access per line at any stride
//! up to `L`, so its capacity in bytes of footprint is the same at stride `L` as at the fetch
//! granularity. A cache of smaller lines that maps several consecutive lines to one set (seed
//! 001's texture cache) misses on runs of `L` bytes at the fetch granularity, yet at stride `L`
//! each access holds only one small line: its capacity is `L / line` times larger.

use super::levels;
use super::traces::Found;
use crate::dissect::data::Curve;

/// Capacity ratios below this confirm the line.
const SAME: f64 = 1.5;

/// The capacity of a curve's first level and the confidence of its knee.
fn capacity(curve: &Curve, overhead: f64) -> Option<(u64, f64)> {
    let fit = levels::fit(curve, overhead);
    let k = fit.levels.first()?.capacity.as_ref()?;
    Some((k.value, k.confidence))
}

/// `line` checked against the capacities of `size` (stride: the fetch granularity `fetch`) and
/// `check` (stride: the line). Without a knee on either curve the line stands, its method says
/// it was not checked.
pub fn check(line: Found<u64>, size: &Curve, check: &Curve, overhead: f64, fetch: u64) -> Found<u64> {
    if let (Some((at_fetch, _)), None) = (capacity(size, overhead), capacity(check, overhead)) {
        // No knee at stride L: if the check's first level still serves every access at a
        // footprint well beyond the capacity at the fetch granularity, each access at stride L
        // holds less than L bytes of cache and the line is smaller than L, by at least that
        // factor.
        let fit = levels::fit(check, overhead);
        let last = check.points.last().map(|p| p.x).unwrap_or(0);
        let serves = fit.levels.first().is_some_and(|l| l.role == levels::Role::Backing && l.plateau_share >= 0.9);
        if serves && last as f64 >= SAME * at_fetch as f64 {
            let ratio = (last as f64 / at_fetch as f64).log2().ceil().exp2();
            let implied = ((line.value as f64 / ratio) as u64).max(fetch);
            return Found {
                value: implied,
                confidence: 0.3,
                method: format!(
                    "{}: every access hits up to {last} B at stride {} B, over {:.1}x the capacity at {} B ({at_fetch} B): each access holds under {} B, so the {} B runs of misses in the line traces are several smaller lines of one set (at most {implied} B)",
                    check.id,
                    check.stride_bytes,
                    last as f64 / at_fetch as f64,
                    size.stride_bytes,
                    (line.value as f64 * at_fetch as f64 / last as f64).round(),
                    line.value
                ),
            };
        }
    }
    let (Some((at_fetch, c1)), Some((at_line, c2))) = (capacity(size, overhead), capacity(check, overhead)) else {
        let mut l = line;
        l.method.push_str(&format!("; {}: no knee, line not checked by capacity", check.id));
        return l;
    };
    let ratio = at_line as f64 / at_fetch as f64;
    if ratio < SAME {
        let mut l = line;
        l.method.push_str(&format!(
            "; {}: capacity {at_line} B at stride {} B, {ratio:.2}x that at {} B: one access per line",
            check.id, check.stride_bytes, size.stride_bytes
        ));
        return l;
    }
    // Each access at stride L holds L / ratio bytes of cache: the line is that, rounded to a
    // power of two, and no smaller than a fetch. A ratio far from a power of two (sets that
    // take several lines each and ways that are not a multiple of them overflow early) leaves
    // the line between two powers.
    let lg = (line.value as f64 / ratio).log2();
    let off = (lg - lg.round()).abs();
    let implied = (lg.round().exp2() as u64).max(fetch);
    Found {
        value: implied,
        confidence: 0.9 * c1.min(c2).min(line.confidence.max(0.5)) * (1.0 - 2.0 * off).clamp(0.0, 1.0),
        method: format!(
            "{}: capacity {at_line} B at stride {} B is {ratio:.1}x that at {} B ({at_fetch} B): each access holds {implied} B, so the {} B runs of misses in the line traces are {} consecutive {implied} B lines of one set",
            check.id,
            check.stride_bytes,
            size.stride_bytes,
            line.value,
            line.value / implied.max(1)
        ),
    }
}
