//! The Mann-Whitney U test (Wilcoxon rank-sum): do two samples come from one distribution?
//!
//! Rank tests suit benchmark samples: they make no assumption of normality and a few outliers
//! move them little. Small samples without ties use the exact distribution of U; otherwise the
//! normal approximation with the tie correction of the variance and a continuity correction.

use super::normal::normal_sf;

/// Largest `n1 * n2` for which the exact distribution of U is computed.
const EXACT_LIMIT: usize = 2500;

/// Outcome of a two-sided Mann-Whitney U test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// U of the first sample: pairs (a, b) with a > b, plus half the tied pairs.
    pub u: f64,
    /// Standardised statistic of the normal approximation (0 where the variance is 0).
    pub z: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Whether `p` comes from the exact distribution.
    pub exact: bool,
}

/// Two-sided Mann-Whitney U test of `a` against `b` (finite values). `None` when either
/// sample is empty.
pub fn mann_whitney_u(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let mut pooled: Vec<(f64, bool)> = a.iter().map(|&v| (v, true)).chain(b.iter().map(|&v| (v, false))).collect();
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = pooled.len();
    let mut rank_sum_a = 0.0;
    let mut tie_term = 0.0; // sum of t^3 - t over groups of tied values
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && pooled[j].0 == pooled[i].0 {
            j += 1;
        }
        let t = (j - i) as f64;
        let mid_rank = (i + j + 1) as f64 / 2.0; // ranks i+1 ..= j
        rank_sum_a += mid_rank * pooled[i..j].iter().filter(|x| x.1).count() as f64;
        tie_term += t * t * t - t;
        i = j;
    }
    let (n1f, n2f, nf) = (n1 as f64, n2 as f64, n as f64);
    let u = rank_sum_a - n1f * (n1f + 1.0) / 2.0;
    let mean = n1f * n2f / 2.0;
    let variance = n1f * n2f / 12.0 * ((nf + 1.0) - tie_term / (nf * (nf - 1.0)).max(1.0));
    let z =
        if variance > 0.0 { ((u - mean).abs() - 0.5).max(0.0) / variance.sqrt() * (u - mean).signum() } else { 0.0 };
    if tie_term == 0.0 && n1 * n2 <= EXACT_LIMIT {
        let cdf = exact_cdf(n1, n2);
        let k = u.round() as usize;
        let lower = cdf[k.min(n1 * n2 - k)];
        return Some(MannWhitney { u, z, p: (2.0 * lower).min(1.0), exact: true });
    }
    let p = if variance > 0.0 { (2.0 * normal_sf(z.abs())).min(1.0) } else { 1.0 };
    Some(MannWhitney { u, z, p, exact: false })
}

/// P(U <= k) for k = 0 ..= n1*n2 under the null hypothesis, without ties.
///
/// The number of arrangements with U = k is the coefficient of q^k in the Gaussian binomial
/// coefficient [n1 + n2 choose n1]_q = prod_{i=1..n1} (1 - q^(n2+i)) / (1 - q^i); multiplying
/// and dividing factor by factor keeps every intermediate polynomial a Gaussian binomial.
fn exact_cdf(n1: usize, n2: usize) -> Vec<f64> {
    let len = n1 * n2 + 1;
    let mut poly = vec![0.0f64; len];
    poly[0] = 1.0;
    for i in 1..=n1 {
        let up = n2 + i;
        for k in (up..len).rev() {
            poly[k] -= poly[k - up];
        }
        for k in i..len {
            poly[k] += poly[k - i];
        }
    }
    let total: f64 = poly.iter().sum();
    let mut acc = 0.0;
    poly.iter()
        .map(|c| {
            acc += c / total;
            acc
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_distribution_counts_arrangements() {
        // n1 = n2 = 3: 20 arrangements; U = 0 once, U = 1 once, U = 2 twice, U = 3 three times.
        let cdf = exact_cdf(3, 3);
        let counts: Vec<f64> = cdf
            .iter()
            .scan(0.0, |prev, &c| {
                let d = (c - *prev) * 20.0;
                *prev = c;
                Some(d.round())
            })
            .collect();
        assert_eq!(counts, vec![1.0, 1.0, 2.0, 3.0, 3.0, 3.0, 3.0, 2.0, 1.0, 1.0]);
    }

    #[test]
    fn complete_separation_small_samples_is_exact() {
        let r = mann_whitney_u(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert_eq!(r.u, 0.0);
        assert!(r.exact);
        assert!((r.p - 0.1).abs() < 1e-12, "{}", r.p);
        // Swapping the samples mirrors U and keeps p.
        let s = mann_whitney_u(&[4.0, 5.0, 6.0], &[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(s.u, 9.0);
        assert!((s.p - r.p).abs() < 1e-12);
    }

    #[test]
    fn exact_p_of_interleaved_samples() {
        // a = {1, 3, 5, 7}, b = {2, 4, 6, 8}: U = 6; P(U <= 6) = 24/70 by enumeration.
        let r = mann_whitney_u(&[1.0, 3.0, 5.0, 7.0], &[2.0, 4.0, 6.0, 8.0]).unwrap();
        assert_eq!(r.u, 6.0);
        assert!((r.p - 48.0 / 70.0).abs() < 1e-12, "{}", r.p);
    }

    #[test]
    fn ties_use_the_corrected_normal_approximation() {
        // a = {1, 1, 2}, b = {2, 3, 3}: mid-ranks 1.5, 1.5, 3.5 | 3.5, 5.5, 5.5; U = 0.5;
        // tie term 3 x (8 - 2) = 18; var = 9/12 x (7 - 18/30) = 4.8; z = -(4 - 0.5)/sqrt(4.8).
        let r = mann_whitney_u(&[1.0, 1.0, 2.0], &[2.0, 3.0, 3.0]).unwrap();
        assert_eq!(r.u, 0.5);
        assert!(!r.exact);
        let z = -3.5 / 4.8f64.sqrt();
        assert!((r.z - z).abs() < 1e-12);
        assert!((r.p - 2.0 * normal_sf(-z)).abs() < 1e-12);
    }

    #[test]
    fn identical_samples_are_not_different() {
        let r = mann_whitney_u(&[29.15; 20], &[29.15; 20]).unwrap();
        assert_eq!(r.p, 1.0);
        assert_eq!(r.z, 0.0);
    }

    #[test]
    fn large_samples_far_apart_give_tiny_p() {
        let a: Vec<f64> = (0..60).map(|i| 100.0 + i as f64 * 0.01).collect();
        let b: Vec<f64> = (0..60).map(|i| 103.0 + i as f64 * 0.01).collect();
        let r = mann_whitney_u(&a, &b).unwrap();
        assert!(!r.exact);
        assert!(r.p < 1e-15, "{}", r.p);
        assert_eq!(mann_whitney_u(&[], &b), None);
    }
}
