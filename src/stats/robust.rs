//! Robust z-scores: how far a value lies from the median of its set, in units of the set's
//! median absolute deviation (MAD), so that a few outliers do not hide themselves by inflating a
//! standard deviation.

use super::quantile::{mad, median};

/// 0.6745 (x - median) / MAD (Iglewicz and Hoaglin's modified z-score) of `x` in a set of that
/// `median` and `mad`. The MAD is floored at `rel_floor` x |median|, so that a set of nearly
/// identical values does not turn a tiny difference into a huge score.
pub fn modified_z(x: f64, median: f64, mad: f64, rel_floor: f64) -> f64 {
    let scale = mad.max(rel_floor * median.abs()).max(f64::MIN_POSITIVE);
    0.6745 * (x - median) / scale
}

/// [`modified_z`] of every value in its own set. Empty input gives an empty vector.
pub fn robust_z(values: &[f64], rel_floor: f64) -> Vec<f64> {
    let (Some(med), Some(m)) = (median(values), mad(values)) else {
        return Vec::new();
    };
    values.iter().map(|&v| modified_z(v, med, m, rel_floor)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_outlier_scores_high_and_the_rest_stay_low() {
        let mut v: Vec<f64> = (0..100).map(|i| 288.0 + (i % 7) as f64).collect();
        v[42] = 288.0 * 1.3;
        let z = robust_z(&v, 0.001);
        assert!(z[42] > 20.0, "{}", z[42]);
        assert!(z.iter().enumerate().filter(|(i, _)| *i != 42).all(|(_, z)| z.abs() < 3.5));
    }

    #[test]
    fn identical_values_use_the_floor() {
        let mut v = vec![100.0; 10];
        v[3] = 100.5;
        let z = robust_z(&v, 0.01);
        // MAD 0, floor 1.0: 0.6745 * 0.5
        assert!((z[3] - 0.33725).abs() < 1e-9, "{}", z[3]);
        assert!(robust_z(&[], 0.01).is_empty());
        // MAD 4 above the floor of 1: 0.6745 * -10 / 4.
        assert!((modified_z(90.0, 100.0, 4.0, 0.01) + 1.68625).abs() < 1e-12);
        assert!(modified_z(1.0, 0.0, 0.0, 0.01).is_finite(), "a zero median and MAD stay finite");
    }
}
