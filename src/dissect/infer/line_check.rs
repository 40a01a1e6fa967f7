//! The line from the traces, checked by capacity at a stride of one line (seed 001's
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
    // power of two, and no smaller than a fetch.
    let implied = ((line.value as f64 / ratio).log2().round().exp2() as u64).max(fetch);
    Found {
        value: implied,
        confidence: 0.9 * c1.min(c2).min(line.confidence.max(0.5)),
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
