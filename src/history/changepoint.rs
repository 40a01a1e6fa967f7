//! Change points in a series of run medians: PELT (optimal partitioning with pruning) over a
//! Gaussian mean-shift cost, with a penalty calibrated from the series' own run-to-run noise.
//!
//! Noise: the median absolute successive difference, scaled to a standard deviation
//! (`median |x[i+1] - x[i]| / (0.6745 * sqrt 2)`): a step adds one large difference and leaves
//! the estimate alone. It is floored at a fraction of the series' median, so that a metric that
//! repeats to the last digit (a cycle count) does not turn a rounding step into a change.
//! Penalty per change point: `penalty_factor * sigma^2 * max(ln n, 2)`.

use serde::Serialize;

use crate::stats::median;

/// How change points are found.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DetectParams {
    /// Penalty per change point in units of `sigma^2 * max(ln n, 2)`.
    pub penalty_factor: f64,
    /// Floor of the noise estimate, relative to the series' median.
    pub noise_floor_rel: f64,
}

impl Default for DetectParams {
    fn default() -> Self {
        DetectParams { penalty_factor: 4.0, noise_floor_rel: 0.002 }
    }
}

/// The change points of one series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Segmentation {
    /// Index of the first value of each new segment, ascending (never 0).
    pub change_points: Vec<usize>,
    /// Noise estimate (standard deviation of one run's median), after the floor.
    pub sigma: f64,
    /// Penalty per change point used.
    pub penalty: f64,
}

/// Robust run-to-run noise of `values` with a floor of `floor_rel * |median|`.
pub fn noise_sigma(values: &[f64], floor_rel: f64) -> f64 {
    let floor = floor_rel * median(values).unwrap_or(0.0).abs();
    let diffs: Vec<f64> = values.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    let sigma = median(&diffs).map_or(0.0, |m| m / (0.674_489_75 * std::f64::consts::SQRT_2));
    let sigma = sigma.max(floor);
    if sigma > 0.0 { sigma } else { f64::MIN_POSITIVE.sqrt() }
}

/// Finds the change points of `values` (NaN-free, time order).
pub fn detect(values: &[f64], p: &DetectParams) -> Segmentation {
    let sigma = noise_sigma(values, p.noise_floor_rel);
    let n = values.len();
    let penalty = p.penalty_factor * sigma * sigma * (n.max(1) as f64).ln().max(2.0);
    Segmentation { change_points: pelt(values, penalty), sigma, penalty }
}

/// PELT with the squared-error cost of a constant mean per segment and `penalty` per change:
/// the partition that minimises total cost + penalty x changes. Returns the starts of the
/// segments after the first.
pub fn pelt(values: &[f64], penalty: f64) -> Vec<usize> {
    let n = values.len();
    if n < 2 {
        return Vec::new();
    }
    let mut s1 = vec![0.0; n + 1];
    let mut s2 = vec![0.0; n + 1];
    for (i, v) in values.iter().enumerate() {
        s1[i + 1] = s1[i] + v;
        s2[i + 1] = s2[i] + v * v;
    }
    // Cost of values[a..b].
    let cost = |a: usize, b: usize| {
        let len = (b - a) as f64;
        let s = s1[b] - s1[a];
        (s2[b] - s2[a] - s * s / len).max(0.0)
    };
    let mut f = vec![0.0; n + 1];
    f[0] = -penalty;
    let mut last = vec![0usize; n + 1];
    let mut candidates = vec![0usize];
    for t in 1..=n {
        let (best_s, best) = candidates
            .iter()
            .map(|&s| (s, f[s] + cost(s, t) + penalty))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .expect("candidates are never empty");
        f[t] = best;
        last[t] = best_s;
        candidates.retain(|&s| f[s] + cost(s, t) <= f[t]);
        candidates.push(t);
    }
    let mut cps = Vec::new();
    let mut t = n;
    while last[t] > 0 {
        cps.push(last[t]);
        t = last[t];
    }
    cps.reverse();
    cps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_step_where_it_is() {
        let mut v: Vec<f64> = (0..20).map(|i| 100.0 + [0.1, -0.1, 0.05, -0.05][i % 4]).collect();
        for x in v.iter_mut().skip(12) {
            *x *= 1.03;
        }
        let s = detect(&v, &DetectParams::default());
        assert_eq!(s.change_points, vec![12]);
    }

    #[test]
    fn flat_noise_has_no_change_point() {
        let v: Vec<f64> = (0..30).map(|i| 50.0 + 0.05 * ((i * 7 % 11) as f64 - 5.0)).collect();
        assert!(detect(&v, &DetectParams::default()).change_points.is_empty());
    }

    #[test]
    fn pelt_finds_two_steps_and_noise_ignores_them() {
        let v = [1.0, 1.0, 1.0, 1.0, 5.0, 5.0, 5.0, 5.0, 2.0, 2.0, 2.0];
        assert_eq!(pelt(&v, 1.0), vec![4, 8]);
        // Two steps among ten differences: the median difference stays 0, the floor applies.
        assert!((noise_sigma(&v, 0.01) - 0.02).abs() < 1e-12);
    }

    #[test]
    fn a_step_at_the_newest_run_is_found() {
        let mut v = vec![10.0; 8];
        v.push(10.5);
        assert_eq!(detect(&v, &DetectParams::default()).change_points, vec![8]);
    }
}
