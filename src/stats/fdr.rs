//! Benjamini-Hochberg control of the false discovery rate over many tests.

/// Benjamini-Hochberg adjusted p-values (q-values), in the order of `p`: a test is a discovery
/// at false-discovery rate `alpha` when its q-value is below `alpha`. A NaN p-value counts as 1.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let clean = |v: f64| if v.is_nan() { 1.0 } else { v.clamp(0.0, 1.0) };
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| clean(p[a]).total_cmp(&clean(p[b])));
    let mut q = vec![1.0; m];
    let mut running = 1.0f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        running = running.min(clean(p[i]) * m as f64 / (rank + 1) as f64);
        q[i] = running.min(1.0);
    }
    q
}

#[cfg(test)]
mod tests {
    use super::benjamini_hochberg;

    #[test]
    fn adjusts_like_the_step_up_procedure() {
        // Worked by hand: sorted p = .01 .02 .03 .04 .05 with m = 5 gives p*m/rank = .05 each.
        let q = benjamini_hochberg(&[0.05, 0.01, 0.03, 0.02, 0.04]);
        for v in q {
            assert!((v - 0.05).abs() < 1e-12);
        }
        // Monotone step-up: q of the smallest p is bounded by later ranks.
        let q = benjamini_hochberg(&[0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205, 0.212, 0.216]);
        let expect = [0.01, 0.04, 0.084, 0.084, 0.084, 0.1, 0.105_714_285_7, 0.216, 0.216, 0.216];
        for (a, b) in q.iter().zip(expect) {
            assert!((a - b).abs() < 1e-9, "{a} vs {b}");
        }
    }

    #[test]
    fn nan_counts_as_one_and_empty_is_empty() {
        assert_eq!(benjamini_hochberg(&[f64::NAN]), vec![1.0]);
        assert!(benjamini_hochberg(&[]).is_empty());
    }
}
