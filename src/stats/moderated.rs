//! Empirical-Bayes moderated variances (Smyth 2004, the `limma` method): many metrics measured
//! on the same few runs each give a variance with few degrees of freedom; their spread across
//! metrics gives a prior (a scaled inverse χ² with `d0` degrees of freedom around `s0²`), and
//! each metric's variance is shrunk towards it: `s̃² = (d0·s0² + d·s²) / (d0 + d)`, with
//! `d0 + d` degrees of freedom for Student's t. `d0` is estimated from how much more the log
//! variances scatter than `d` degrees of freedom alone explain: metrics that agree give a large
//! `d0` (much borrowed), metrics that differ a small one (little borrowed).

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

/// ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9).
pub fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The digamma function ψ(x) for x > 0 (recurrence to x >= 10, then the asymptotic series).
pub fn digamma(mut x: f64) -> f64 {
    let mut r = 0.0;
    while x < 10.0 {
        r -= 1.0 / x;
        x += 1.0;
    }
    let f = 1.0 / (x * x);
    r + x.ln() - 0.5 / x - f * (1.0 / 12.0 - f * (1.0 / 120.0 - f * (1.0 / 252.0 - f * (1.0 / 240.0 - f / 132.0))))
}

/// The trigamma function ψ'(x) for x > 0.
pub fn trigamma(mut x: f64) -> f64 {
    let mut r = 0.0;
    while x < 10.0 {
        r += 1.0 / (x * x);
        x += 1.0;
    }
    let f = 1.0 / (x * x);
    r + 1.0 / x + f / 2.0 + f / x * (1.0 / 6.0 - f * (1.0 / 30.0 - f * (1.0 / 42.0 - f / 30.0)))
}

/// The x > 0 with ψ'(x) = y (Newton's method as in limma's `trigammaInverse`).
pub fn trigamma_inverse(y: f64) -> f64 {
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

/// The regularized incomplete beta function I_x(a, b) (continued fraction, modified Lentz).
pub fn beta_reg(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - beta_reg(1.0 - x, b, a);
    }
    let tiny = 1e-300;
    let (mut c, mut d) = (1.0, 1.0 - (a + b) * x / (a + 1.0));
    if d.abs() < tiny {
        d = tiny;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..10_000 {
        let m = f64::from(m);
        for num in [
            m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)),
        ] {
            d = 1.0 + num * d;
            if d.abs() < tiny {
                d = tiny;
            }
            c = 1.0 + num / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-14 {
            break;
        }
    }
    (ln_front.exp() * h / a).clamp(0.0, 1.0)
}

/// P(F > f) for the F distribution with `d1` and `d2` degrees of freedom.
pub fn f_upper_tail(f: f64, d1: f64, d2: f64) -> f64 {
    if !(f > 0.0) {
        return 1.0;
    }
    beta_reg(d2 / (d2 + d1 * f), d2 / 2.0, d1 / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_functions_match_tables() {
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-10);
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-10);
        // ψ(1) = −γ, ψ'(1) = π²/6.
        assert!((digamma(1.0) + 0.577_215_664_901_532_9).abs() < 1e-10);
        assert!((trigamma(1.0) - std::f64::consts::PI.powi(2) / 6.0).abs() < 1e-10);
        for x in [0.3, 1.0, 2.5, 40.0] {
            assert!((trigamma_inverse(trigamma(x)) - x).abs() < 1e-6 * x, "{x}");
        }
        // F(2, 10) upper 5 % point 4.103; F(1, 1): P(F > 1) = 1/2.
        assert!((f_upper_tail(4.1028, 2.0, 10.0) - 0.05).abs() < 1e-4);
        assert!((f_upper_tail(1.0, 1.0, 1.0) - 0.5).abs() < 1e-9);
        assert!((beta_reg(0.3, 2.0, 3.0) - 0.3483).abs() < 1e-4);
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
