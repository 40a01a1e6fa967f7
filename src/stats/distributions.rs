//! The distributions of the verdicts, from `statrs`: quantiles of Student's t and the normal
//! distribution turn a spread estimated from a handful of runs into a prediction interval for
//! the next run; the F distribution's upper tail tests whether variances differ.

use statrs::distribution::{ContinuousCDF, FisherSnedecor, Normal, StudentsT};

/// Degrees of freedom above which the normal distribution stands in for Student's t (its
/// 97.5 % quantile is then 0.12 % above the normal's).
const NORMAL_DF: u32 = 1000;

/// Largest probability a quantile is asked for: the quantile of 1 is infinite.
const MAX_P: f64 = 1.0 - 1e-12;

/// The upper quantile `t` with P(T <= t) = `p` (0.5 <= p < 1, clamped) of Student's t with
/// `df` degrees of freedom (at least 1); the normal quantile above 1000 degrees of freedom.
pub fn t_quantile(p: f64, df: u32) -> f64 {
    if df > NORMAL_DF {
        return normal_quantile(p);
    }
    let t =
        StudentsT::new(0.0, 1.0, f64::from(df.max(1))).expect("a location of 0, a scale of 1 and df >= 1 are valid");
    t.inverse_cdf(p.clamp(0.5, MAX_P))
}

/// P(|T| > x) for Student's t on `df` degrees of freedom (the normal distribution below one
/// degree of freedom or above the tabulated ones); 1 where `x` is not positive.
pub fn t_two_sided_tail(x: f64, df: f64) -> f64 {
    if !(x > 0.0) {
        return 1.0;
    }
    if df >= 1.0 && df <= f64::from(NORMAL_DF) {
        let t = StudentsT::new(0.0, 1.0, df.floor()).expect("a location of 0, a scale of 1 and df >= 1 are valid");
        2.0 * t.sf(x)
    } else {
        2.0 * Normal::standard().sf(x)
    }
}

/// The upper quantile `z` with P(Z <= z) = `p` (0.5 <= p < 1, clamped) of the standard
/// normal distribution.
pub fn normal_quantile(p: f64) -> f64 {
    Normal::standard().inverse_cdf(p.clamp(0.5, MAX_P))
}

/// P(F > f) for the F distribution with `d1` and `d2` degrees of freedom; 1 (no evidence)
/// where `f` is not positive or a degree of freedom is not positive and finite.
pub fn f_upper_tail(f: f64, d1: f64, d2: f64) -> f64 {
    match FisherSnedecor::new(d1, d2) {
        Ok(dist) if f > 0.0 => dist.sf(f),
        _ => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_sided_tails_invert_the_quantiles() {
        assert!((t_two_sided_tail(t_quantile(0.995, 4), 4.0) - 0.01).abs() < 1e-9);
        assert!((t_two_sided_tail(normal_quantile(0.975), 0.0) - 0.05).abs() < 1e-9);
        assert_eq!(t_two_sided_tail(0.0, 3.0), 1.0);
    }

    #[test]
    fn quantiles_match_published_tables() {
        // Upper quantiles of Student's t from statistical tables.
        let cases = [
            (0.975, 1, 12.706_2),
            (0.975, 2, 4.302_7),
            (0.975, 4, 2.776_4),
            (0.975, 10, 2.228_1),
            (0.995, 5, 4.032_1),
            (0.995, 11, 3.105_8),
            (0.9995, 4, 8.610_3),
            (0.95, 30, 1.697_3),
            (0.975, 120, 1.979_9),
        ];
        for (p, df, t) in cases {
            let q = t_quantile(p, df);
            assert!((q - t).abs() < 1e-4, "t({p}, {df}) = {q}, expected {t}");
        }
        // Upper quantiles of the standard normal distribution.
        for (p, z) in [(0.5, 0.0), (0.84134475, 1.0), (0.95, 1.644_854), (0.975, 1.959_964), (0.995, 2.575_829)] {
            let q = normal_quantile(p);
            assert!((q - z).abs() < 1e-6, "z({p}) = {q}, expected {z}");
        }
    }

    #[test]
    fn many_degrees_of_freedom_give_the_normal_quantile() {
        assert_eq!(t_quantile(0.975, 1001), normal_quantile(0.975));
        assert_eq!(t_quantile(0.975, u32::MAX), normal_quantile(0.975));
        // Below the switch Student's t is wider than the normal: 1.9623 at 1000 (tables).
        let (t, z) = (t_quantile(0.975, 1000), normal_quantile(0.975));
        assert!((t - 1.962_34).abs() < 1e-5 && t > z, "{t} vs {z}");
        assert!(t_quantile(0.995, 2) > t_quantile(0.995, 20));
        // Zero degrees of freedom count as one; probabilities outside [0.5, 1) are clamped.
        assert_eq!(t_quantile(0.975, 0), t_quantile(0.975, 1));
        assert_eq!(t_quantile(0.2, 5), 0.0);
        assert!(t_quantile(1.0, 5).is_finite());
    }

    #[test]
    fn f_upper_tail_matches_published_tables() {
        // Upper 5 % and 1 % points of F from statistical tables.
        for (f, d1, d2, p) in [(4.1028, 2.0, 10.0, 0.05), (3.3258, 5.0, 10.0, 0.05), (7.5594, 2.0, 10.0, 0.01)] {
            let q = f_upper_tail(f, d1, d2);
            assert!((q - p).abs() < 1e-4, "P(F({d1}, {d2}) > {f}) = {q}, expected {p}");
        }
        // F(1, 1): P(F > 1) = 1/2; fractional degrees of freedom (a fitted prior) are fine.
        assert!((f_upper_tail(1.0, 1.0, 1.0) - 0.5).abs() < 1e-12);
        assert!(f_upper_tail(2.0, 2.0, 3.7) < f_upper_tail(2.0, 2.0, 3.6));
        assert_eq!(f_upper_tail(f64::INFINITY, 2.0, 10.0), 0.0);
        for (f, d1, d2) in [(0.0, 2.0, 10.0), (f64::NAN, 2.0, 10.0), (1.0, 0.0, 10.0), (1.0, 2.0, f64::INFINITY)] {
            assert_eq!(f_upper_tail(f, d1, d2), 1.0, "{f} {d1} {d2}");
        }
    }
}
