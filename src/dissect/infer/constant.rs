//! Constant-cache divergence from one warp reading 1..32 distinct constant addresses (the
//! evidence the `constant_memory` family uses): the constant cache broadcasts one address per
//! access, so a warp on `n` distinct addresses is served one address at a time and its latency
//! grows linearly with `n`, each extra address adding a fixed cost (a replay). The first access
//! carries fixed costs (issue, the timing bracket) that the extra ones do not, so the test is the
//! linear growth itself, not `cycles(n) = n x cycles(1)`.

use super::traces::Found;
use crate::dissect::data::DivergencePoint;

/// Smallest R² of the straight line through the points for a serialized verdict.
const MIN_R2: f64 = 0.95;
/// Growth from 1 to the most distinct addresses below which the accesses are not serialized.
const FLAT_GROWTH: f64 = 1.5;
/// Growth above which serialization is certain (given a straight line).
const CLEAR_GROWTH: f64 = 4.0;

/// The divergence verdict and the fitted cycles per extra distinct address.
#[derive(Debug, Clone, PartialEq)]
pub struct Divergence {
    /// "serialized" or "not-serialized".
    pub verdict: Found<String>,
    /// Least-squares cycles added by each distinct address beyond the first.
    pub cycles_per_address: f64,
    /// Per-point cycles added per extra address, (cycles(n) - cycles(1)) / (n - 1).
    pub slopes: Vec<f64>,
}

/// Infers whether divergent constant reads are serialized; None without at least three points
/// including the uniform one (1 distinct address).
pub fn divergence(points: &[DivergencePoint]) -> Option<Divergence> {
    let one = points.iter().find(|p| p.distinct == 1)?;
    if points.len() < 3 || one.cycles <= 0.0 {
        return None;
    }
    let most = points.iter().max_by_key(|p| p.distinct)?;
    let n = points.len() as f64;
    let xs: Vec<f64> = points.iter().map(|p| p.distinct as f64).collect();
    let ys: Vec<f64> = points.iter().map(|p| p.cycles).collect();
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let syy: f64 = ys.iter().map(|y| (y - my).powi(2)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let r2 = if syy > 0.0 { sxy * sxy / (sxx * syy) } else { 0.0 };
    let growth = most.cycles / one.cycles;
    let slopes: Vec<f64> =
        points.iter().filter(|p| p.distinct > 1).map(|p| (p.cycles - one.cycles) / (p.distinct - 1) as f64).collect();
    let serial = growth >= FLAT_GROWTH && slope > 0.0 && r2 >= MIN_R2;
    let confidence = if serial {
        let linear = ((r2 - MIN_R2) / (1.0 - MIN_R2)).clamp(0.0, 1.0);
        let clear = ((growth - FLAT_GROWTH) / (CLEAR_GROWTH - FLAT_GROWTH)).clamp(0.0, 1.0);
        (0.5 + 0.5 * linear.min(clear)).clamp(0.5, 1.0)
    } else if growth < FLAT_GROWTH {
        // The flatter, the surer.
        (1.0 - (growth - 1.0).max(0.0) / (FLAT_GROWTH - 1.0) * 0.5).clamp(0.5, 1.0)
    } else {
        // Growth without a straight line: neither model fits.
        0.3
    };
    let value = if serial { "serialized" } else { "not-serialized" };
    let method = format!(
        "one warp reading 1..{} distinct constant addresses: {:.1} cycles at 1, {:.1} at {} ({:.1}x), +{:.1} cycles per extra address (straight line, R² {:.3}); serialized = grows linearly with the distinct addresses",
        most.distinct, one.cycles, most.cycles, most.distinct, growth, slope, r2
    );
    Some(Divergence {
        verdict: Found { value: value.to_string(), confidence, method },
        cycles_per_address: slope,
        slopes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(f: impl Fn(u32) -> f64) -> Vec<DivergencePoint> {
        [1, 2, 4, 8, 16, 32].iter().map(|&d| DivergencePoint { distinct: d, cycles: f(d) }).collect()
    }

    /// The H200's table (tests/fixtures/dissect/h200-run2): 34 cycles uniform, +11 per extra
    /// address, 375 at 32 (11x; the family's throughput slowdown is 31.5x).
    #[test]
    fn a_fixed_cost_per_extra_address_is_serialized() {
        let h200 = [(1, 34.15625), (2, 45.15625), (4, 67.159), (8, 111.202), (16, 199.288), (32, 375.46)];
        let p: Vec<DivergencePoint> =
            h200.iter().map(|&(distinct, cycles)| DivergencePoint { distinct, cycles }).collect();
        let d = divergence(&p).unwrap();
        assert_eq!(d.verdict.value, "serialized");
        assert!(d.verdict.confidence >= 0.95, "{:?}", d.verdict);
        assert!((d.cycles_per_address - 11.0).abs() < 0.2, "{}", d.cycles_per_address);
        // Strict proportionality (the simulator's model) is serialized too.
        assert_eq!(divergence(&pts(|d| 20.0 * d as f64)).unwrap().verdict.value, "serialized");
    }

    #[test]
    fn flat_or_erratic_latency_is_not_serialized() {
        let flat = divergence(&pts(|d| 34.0 + 0.1 * d as f64)).unwrap();
        assert_eq!(flat.verdict.value, "not-serialized");
        assert!(flat.verdict.confidence >= 0.9, "{:?}", flat.verdict);
        // A jump at one point, flat elsewhere: grows, but not linearly; low confidence.
        let jump = divergence(&pts(|d| if d == 32 { 200.0 } else { 34.0 })).unwrap();
        assert_eq!(jump.verdict.value, "not-serialized");
        assert!(jump.verdict.confidence < 0.5);
        assert!(divergence(&pts(|d| d as f64)[1..]).is_none(), "no uniform point");
    }
}
