//! The standard normal distribution, for the large-sample approximation of rank tests.

/// Complementary error function, erfc(x) = 1 - erf(x), with fractional error below 1.2e-7
/// everywhere (the Chebyshev fit in Press et al., Numerical Recipes, 2nd ed., section 6.2).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98 + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// P(Z <= x) for a standard normal Z.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_tabulated_values() {
        // Values of the standard normal distribution from statistical tables.
        let cases =
            [(0.0, 0.5), (1.0, 0.841_344_746), (1.959_963_985, 0.975), (-2.575_829_304, 0.005), (3.0, 0.998_650_102)];
        for (x, p) in cases {
            assert!((normal_cdf(x) - p).abs() < 1e-7, "cdf({x}) = {} vs {p}", normal_cdf(x));
        }
        // Far tail: P(Z < -6) = 9.8659e-10; relative accuracy matters there.
        let tail = normal_cdf(-6.0);
        assert!((tail / 9.865_876_45e-10 - 1.0).abs() < 1e-5, "{tail}");
        assert!((erfc(0.5) - 0.479_500_122).abs() < 1e-7);
        assert!((erfc(-0.5) - 1.520_499_878).abs() < 1e-7);
    }
}
