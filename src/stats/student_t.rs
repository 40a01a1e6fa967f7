//! Student's t distribution for integer degrees of freedom: the quantile that turns a spread
//! estimated from a handful of runs into a prediction interval for the next run.

use std::f64::consts::PI;

/// Degrees of freedom above which the normal distribution stands in for Student's t (the
/// quantiles differ by less than 0.1 %).
const NORMAL_DF: u32 = 1000;

/// P(|T| <= t) for Student's t with `df` >= 1 degrees of freedom, from the closed forms in
/// the angle θ = atan(t / √df) (Abramowitz and Stegun 26.7.3 and 26.7.4); the normal
/// distribution above 1000 degrees of freedom.
pub fn t_two_sided_cdf(t: f64, df: u32) -> f64 {
    let df = df.max(1);
    let t = t.abs();
    if df > NORMAL_DF {
        return 2.0 * crate::stats::normal_cdf(t) - 1.0;
    }
    let theta = (t / f64::from(df).sqrt()).atan();
    let (s, c) = theta.sin_cos();
    let c2 = c * c;
    if df % 2 == 1 {
        // (2/π) (θ + sinθ (cosθ + 2/3 cos³θ + ... + (2·4…(df−3))/(1·3…(df−2)) cos^(df−2)θ))
        let mut term = c;
        let mut sum = if df > 1 { c } else { 0.0 };
        let mut k = 1;
        while k + 2 < df {
            term *= c2 * f64::from(k + 1) / f64::from(k + 2);
            sum += term;
            k += 2;
        }
        (2.0 / PI) * (theta + s * sum)
    } else {
        // sinθ (1 + 1/2 cos²θ + (1·3)/(2·4) cos⁴θ + ... )
        let mut term = 1.0;
        let mut sum = 1.0;
        let mut k = 1;
        while k + 1 < df {
            term *= c2 * f64::from(k) / f64::from(k + 1);
            sum += term;
            k += 2;
        }
        s * sum
    }
}

/// The upper quantile `t` with P(T <= t) = `p` (0.5 < p < 1) of Student's t with `df`
/// degrees of freedom, by bisection on [`t_two_sided_cdf`].
pub fn t_quantile(p: f64, df: u32) -> f64 {
    let p = p.clamp(0.5, 1.0 - 1e-12);
    let target = 2.0 * p - 1.0;
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    while t_two_sided_cdf(hi, df) < target {
        hi *= 2.0;
        if hi > 1e12 {
            return hi;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_two_sided_cdf(mid, df) < target {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-12 * hi.max(1.0) {
            break;
        }
    }
    0.5 * (lo + hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_match_tables() {
        // Upper quantiles of Student's t from statistical tables.
        let cases = [
            (0.975, 1, 12.706_2),
            (0.975, 2, 4.302_7),
            (0.975, 4, 2.776_4),
            (0.995, 5, 4.032_1),
            (0.995, 11, 3.105_8),
            (0.9995, 4, 8.610_3),
            (0.95, 30, 1.697_3),
        ];
        for (p, df, t) in cases {
            let q = t_quantile(p, df);
            assert!((q - t).abs() < 1e-3 * t, "t({p}, {df}) = {q}, expected {t}");
        }
    }

    #[test]
    fn cdf_is_a_probability_and_approaches_the_normal() {
        assert_eq!(t_two_sided_cdf(0.0, 3), 0.0);
        assert!((t_two_sided_cdf(1.0, 1) - 0.5).abs() < 1e-12, "Cauchy: P(|T|<=1) = 1/2");
        let normal = 2.0 * crate::stats::normal_cdf(1.96) - 1.0;
        assert!((t_two_sided_cdf(1.96, 2000) - normal).abs() < 1e-3);
        assert!(t_quantile(0.995, 2) > t_quantile(0.995, 20));
    }
}
