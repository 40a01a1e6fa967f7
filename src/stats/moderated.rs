//! Empirical-Bayes moderated variances (Smyth 2004, the `limma` method): many metrics measured
//! on the same few runs each give a variance with few degrees of freedom; their spread across
//! metrics gives a prior (a scaled inverse χ² with `d0` degrees of freedom around `s0²`), and
//! each metric's variance is shrunk towards it: `s̃² = (d0·s0² + d·s²) / (d0 + d)`, with
//! `d0 + d` degrees of freedom for Student's t. `d0` is estimated from how much more the log
//! variances scatter than `d` degrees of freedom alone explain: metrics that agree give a large
//! `d0` (much borrowed), metrics that differ a small one (little borrowed).
//!
//! Digamma comes from `statrs`; trigamma and its inverse are written here because `statrs`
//! has neither.

use statrs::function::gamma::digamma;

use super::f_upper_tail;

/// Largest prior degrees of freedom: beyond it Student's t is the normal distribution.
pub const MAX_PRIOR_DF: f64 = 1000.0;

/// The prior of a group of variances.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VariancePrior {
    /// Prior variance `s0²`.
    pub s0_sq: f64,
    /// Prior degrees of freedom `d0` (at most [`MAX_PRIOR_DF`]).
    pub d0: f64,
    /// Variances the prior was fitted on.
    pub n: usize,
}

impl VariancePrior {
    /// The moderated variance of a variance `s_sq` on `d` degrees of freedom and its degrees of
    /// freedom, `((d0·s0² + d·s²) / (d0 + d), d0 + d)`.
    pub fn moderate(&self, s_sq: f64, d: f64) -> (f64, f64) {
        let df = self.d0 + d;
        ((self.d0 * self.s0_sq + d * s_sq) / df, df)
    }

    /// P(F(d, d0) > s²/s0²): how unlikely a variance this large is under the prior. A metric
    /// whose variance the prior cannot explain keeps its own.
    pub fn upper_tail(&self, s_sq: f64, d: f64) -> f64 {
        f_upper_tail(s_sq / self.s0_sq, d, self.d0)
    }
}

/// Fits the prior to `(variance, degrees of freedom)` pairs by the method of moments on log
/// variances (Smyth 2004, section 6.2), with `d0` at most the pairs' summed degrees of freedom.
/// Pairs with a variance that is not positive and finite or no degrees of freedom are ignored;
/// `None` with fewer than three left.
pub fn fit_variance_prior(variances: &[(f64, f64)]) -> Option<VariancePrior> {
    let ok: Vec<(f64, f64)> =
        variances.iter().copied().filter(|(s, d)| s.is_finite() && *s > 0.0 && d.is_finite() && *d > 0.0).collect();
    let n = ok.len();
    if n < 3 {
        return None;
    }
    let e: Vec<f64> = ok.iter().map(|(s, d)| s.ln() - digamma(d / 2.0) + (d / 2.0).ln()).collect();
    let mean = e.iter().sum::<f64>() / n as f64;
    let var = e.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
        - ok.iter().map(|(_, d)| trigamma(d / 2.0)).sum::<f64>() / n as f64;
    // A prior carries no more degrees of freedom than the variances it was fitted on: four
    // metrics of two runs each cannot make it as sure as a thousand runs would.
    let evidence: f64 = ok.iter().map(|(_, d)| d).sum();
    let d0_cap = evidence.min(MAX_PRIOR_DF);
    let d0 = if var > 0.0 { (2.0 * trigamma_inverse(var)).min(d0_cap) } else { d0_cap };
    let s0_sq = (mean + digamma(d0 / 2.0) - (d0 / 2.0).ln()).exp();
    Some(VariancePrior { s0_sq, d0, n })
}

/// The trigamma function ψ'(x) for x > 0 (recurrence to x >= 10, then the asymptotic series).
fn trigamma(mut x: f64) -> f64 {
    let mut r = 0.0;
    while x < 10.0 {
        r += 1.0 / (x * x);
        x += 1.0;
    }
    let f = 1.0 / (x * x);
    r + 1.0 / x + f / 2.0 + f / x * (1.0 / 6.0 - f * (1.0 / 30.0 - f * (1.0 / 42.0 - f / 30.0)))
}

/// The x > 0 with ψ'(x) = y (Newton's method as in limma's `trigammaInverse`).
fn trigamma_inverse(y: f64) -> f64 {
    if y > 1e7 {
        return 1.0 / y.sqrt();
    }
    if y < 1e-6 {
        return 1.0 / y;
    }
    let mut x = 0.5 + 1.0 / y;
    for _ in 0..100 {
        let tri = trigamma(x);
        // ψ''(x) by a central difference of ψ'.
        let h = 1e-5 * x.max(1e-3);
        let tetra = (trigamma(x + h) - trigamma(x - h)) / (2.0 * h);
        let step = tri * (1.0 - tri / y) / tetra;
        x += step;
        if -step / x < 1e-8 {
            break;
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigamma_matches_tables_and_inverts() {
        // ψ'(1) = π²/6, ψ'(1/2) = π²/2, ψ'(20) = 0.051270 (tables).
        assert!((trigamma(1.0) - std::f64::consts::PI.powi(2) / 6.0).abs() < 1e-10);
        assert!((trigamma(0.5) - std::f64::consts::PI.powi(2) / 2.0).abs() < 1e-10);
        assert!((trigamma(20.0) - 0.051_270_822_935_203).abs() < 1e-10);
        for x in [0.3, 1.0, 2.5, 40.0] {
            assert!((trigamma_inverse(trigamma(x)) - x).abs() < 1e-6 * x, "{x}");
        }
    }

    #[test]
    fn a_prior_from_agreeing_variances_is_strong_and_from_scattered_ones_weak() {
        // Variances drawn around 1 with 2 degrees of freedom (χ²₂/2 quantiles): d0 large.
        let agree: Vec<(f64, f64)> = (1..40).map(|i| (-(1.0 - f64::from(i) / 40.0f64).ln(), 2.0)).collect();
        let p = fit_variance_prior(&agree).unwrap();
        assert!(p.d0 > 20.0, "{p:?}");
        assert!((p.s0_sq - 1.0).abs() < 0.2, "{p:?}");
        // Variances spread over six orders of magnitude: d0 small.
        let scattered: Vec<(f64, f64)> = (0..40).map(|i| (10f64.powi(i % 7 - 3), 2.0)).collect();
        let p = fit_variance_prior(&scattered).unwrap();
        assert!(p.d0 < 1.0, "{p:?}");
        // Four agreeing variances on one degree of freedom each: d0 at most 4, not 1000.
        let few = fit_variance_prior(&[(1.0, 1.0), (1.1, 1.0), (0.9, 1.0), (1.05, 1.0)]).unwrap();
        assert!(few.d0 <= 4.0 && few.d0 > 0.0, "{few:?}");
        // Moderation: halfway with d0 = d.
        let prior = VariancePrior { s0_sq: 1.0, d0: 2.0, n: 3 };
        assert_eq!(prior.moderate(3.0, 2.0), (2.0, 4.0));
        assert!(fit_variance_prior(&[(1.0, 2.0), (0.0, 2.0), (1.0, 0.0)]).is_none());
    }
}
