//! Robust z-scores: how far a value lies from the median of its set, in units of the set's
//! median absolute deviation (MAD), so that a few outliers do not hide themselves by inflating a
//! standard deviation.

use super::quantile::{mad, median};

/// 0.6745 (x - median) / MAD for every value (Iglewicz and Hoaglin's modified z-score). The MAD
/// is floored at `rel_floor` x |median|, so that a set of nearly identical values does not turn
/// a tiny difference into a huge score. Empty input gives an empty vector.
pub fn robust_z(values: &[f64], rel_floor: f64) -> Vec<f64> {
    let (Some(med), Some(m)) = (median(values), mad(values)) else {
        return Vec::new();
    };
    let scale = m.max(rel_floor * med.abs()).max(f64::MIN_POSITIVE);
    values.iter().map(|v| 0.6745 * (v - med) / scale).collect()
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
    }
}
