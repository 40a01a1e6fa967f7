//! Medians, percentiles and robust spread.

/// Percentile `p` (0 to 1) of sorted values, interpolating linearly between the two closest
/// ranks (Hyndman and Fan's type 7, the default of R and NumPy). `sorted` must be non-empty.
pub fn percentile_sorted(sorted: &[f64], p: f64) -> f64 {
    debug_assert!(!sorted.is_empty());
    let p = p.clamp(0.0, 1.0);
    let h = p * (sorted.len() - 1) as f64;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// Percentile `p` (0 to 1) of `values`; `None` for an empty slice.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    Some(percentile_sorted(&sorted, p))
}

/// Median of sorted values: the middle one, or the mean of the middle two. `sorted` must be
/// non-empty.
pub fn median_sorted(sorted: &[f64]) -> f64 {
    debug_assert!(!sorted.is_empty());
    let n = sorted.len();
    if n % 2 == 1 { sorted[n / 2] } else { 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]) }
}

/// Median of `values`; `None` for an empty slice. The one median of the crate: every median,
/// MAD and robust z-score goes through it.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    Some(median_sorted(&sorted))
}

/// The upper of the middle values (the median of an odd count): a median that is one of the
/// values, for where an observed value must stand for the set (a step height, a count of
/// entries). `None` for an empty slice.
pub fn median_element(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied()
}

/// Median absolute deviation from the median; `None` for an empty slice.
pub fn mad(values: &[f64]) -> Option<f64> {
    let m = median(values)?;
    let deviations: Vec<f64> = values.iter().map(|v| (v - m).abs()).collect();
    median(&deviations)
}

/// A robust relative spread: 1.4826 x MAD / |median|, which equals the relative standard
/// deviation for normally distributed values but ignores a few outliers. `None` for an empty
/// slice or a zero median.
pub fn robust_relative_spread(values: &[f64]) -> Option<f64> {
    let m = median(values)?;
    if m == 0.0 || !m.is_finite() {
        return None;
    }
    Some(1.4826 * mad(values)? / m.abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        // The mean of the middle two, rounded once: 0.1 and 0.2 give 0.15000000000000002.
        assert_eq!(median(&[0.2, 0.1]), Some(0.5 * (0.1 + 0.2)));
        assert_eq!(median_sorted(&[1.0, 2.0, 10.0, 11.0]), 6.0);
        assert_eq!(median(&[1.0, f64::INFINITY, 3.0]), Some(3.0));
        assert_eq!(median_element(&[8.0, 4.0]), Some(8.0));
        assert_eq!(median_element(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median_element(&[]), None);
    }

    #[test]
    fn percentiles_interpolate_between_ranks() {
        let v = [10.0, 20.0, 30.0, 40.0, 50.0];
        assert_eq!(percentile(&v, 0.0), Some(10.0));
        assert_eq!(percentile(&v, 1.0), Some(50.0));
        assert_eq!(percentile(&v, 0.25), Some(20.0));
        assert!((percentile(&v, 0.1).unwrap() - 14.0).abs() < 1e-12);
        assert!((percentile(&[1.0, 2.0], 0.9).unwrap() - 1.9).abs() < 1e-12);
    }

    #[test]
    fn mad_ignores_an_outlier() {
        let v = [1.0, 2.0, 3.0, 4.0, 100.0];
        assert_eq!(mad(&v), Some(1.0));
        let s = robust_relative_spread(&v).unwrap();
        assert!((s - 1.4826 / 3.0).abs() < 1e-12);
        assert_eq!(robust_relative_spread(&[0.0, 0.0]), None);
    }
}
