//! Sweep points and what earlier sweeps settle for later ones: geometric sizes, the granularity
//! of a path, the miss window of a curve.

use super::*;

/// Footprints from `lo` to `hi`, `per_octave` per octave, multiples of `stride`.
pub fn geometric(lo: u64, hi: u64, per_octave: u32, stride: u64) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    let mut k = 0u32;
    loop {
        let f = lo as f64 * 2f64.powf(k as f64 / per_octave as f64);
        if f > hi as f64 * 1.0001 {
            break;
        }
        let x = ((f as u64) / stride).max(1) * stride;
        if out.last() != Some(&x) {
            out.push(x);
        }
        k += 1;
    }
    out
}

/// The granularity a path's stride sweep found, or 128 bytes when it found none.
pub fn granularity_of(sweeps: &Sweeps, path: Path) -> u64 {
    sweeps
        .curve(&format!("stride/{}", path.label()))
        .and_then(granularity::fetch_granularity)
        .map(|g| g.bytes.max(path.element_bytes()))
        .unwrap_or(128)
}

/// The hit/miss boundary and the miss ceiling for a path's first level, from its footprint
/// sweep (see [`levels::miss_window`]).
pub fn miss_window(sweeps: &Sweeps, id: &str) -> Option<(f64, f64)> {
    levels::miss_window(sweeps.curve(id)?)
}
