//! Robust statistics of a fleet: median, MAD and the modified z-score with a MAD floor.

/// Median of the finite values (NaN when there are none).
pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if !n.is_multiple_of(2) { v[n / 2] } else { 0.5 * (v[n / 2 - 1] + v[n / 2]) }
}

/// Median absolute deviation from the median (unscaled).
pub fn mad(values: &[f64]) -> f64 {
    let m = median(values);
    let dev: Vec<f64> = values.iter().map(|x| (x - m).abs()).collect();
    median(&dev)
}

/// The MAD used as a scale: never below `floor` times |median|, so that near-identical cards
/// (MAD close to 0) do not give huge z-scores for differences of a fraction of a percent.
pub fn floored_mad(mad: f64, median: f64, floor: f64) -> f64 {
    mad.max(floor * median.abs()).max(f64::MIN_POSITIVE)
}

/// Modified z-score (Iglewicz and Hoaglin): 0.6745 (x - median) / MAD.
pub fn z_score(x: f64, median: f64, scale: f64) -> f64 {
    0.6745 * (x - median) / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_mad_of_known_values() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
        // deviations from 3: 2, 1, 0, 1, 97 -> MAD 1
        assert_eq!(mad(&[1.0, 2.0, 3.0, 4.0, 100.0]), 1.0);
    }

    #[test]
    fn floor_bounds_the_z_score_of_identical_cards() {
        let scale = floored_mad(0.0, 100.0, 0.01);
        assert_eq!(scale, 1.0);
        assert!((z_score(100.5, 100.0, scale) - 0.33725).abs() < 1e-12);
        assert!((z_score(90.0, 100.0, floored_mad(4.0, 100.0, 0.01)) + 1.68625).abs() < 1e-12);
    }
}
