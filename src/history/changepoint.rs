//! Change points in a series of run medians: optimal partitioning over a Gaussian mean-shift
//! cost, segments of at least two runs, with a penalty calibrated from the series' own run-to-run noise.
//!
//! Noise: the median absolute successive difference, scaled to a standard deviation
//! (`median |x[i+1] - x[i]| / (0.6745 * sqrt 2)`): a step adds one large difference and leaves
//! the estimate alone. It is floored at a fraction of the series' median, so that a metric that
//! repeats to the last digit (a cycle count) does not turn a rounding step into a change.
//! Penalty per change point: `penalty_factor * sigma^2 * max(ln n, 2)`.
//!
//! No crate is used: those on crates.io (`changepoint`, `augurs-changepoint`) do Bayesian
//! online detection, not an exact penalised mean-shift split of a short series with a minimum
//! segment length and a noise-calibrated penalty, which is all this needs and fits in one
//! small function ([`partition`]).

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
fn noise_sigma(values: &[f64], floor_rel: f64) -> f64 {
    let floor = floor_rel * median(values).unwrap_or(0.0).abs();
    let diffs: Vec<f64> = values.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    let sigma = median(&diffs).map_or(0.0, |m| m / (0.674_489_75 * std::f64::consts::SQRT_2));
    let sigma = sigma.max(floor);
    if sigma > 0.0 { sigma } else { f64::MIN_POSITIVE.sqrt() }
}

/// Smallest step between the means of two neighbouring segments, in standard errors of that
/// difference (pooled spread within the segments, floored at the noise estimate): a "step" that
/// the segments' own scatter explains is an outlier run or two, not a change of level.
const MIN_STEP_T: f64 = 4.0;

/// Finds the change points of `values` (NaN-free, time order).
pub fn detect(values: &[f64], p: &DetectParams) -> Segmentation {
    let sigma = noise_sigma(values, p.noise_floor_rel);
    let n = values.len();
    let penalty = p.penalty_factor * sigma * sigma * (n.max(1) as f64).ln().max(2.0);
    let change_points = keep_clear_steps(values, partition(values, penalty), sigma);
    Segmentation { change_points, sigma, penalty }
}

/// Drops, weakest first, change points whose step is below [`MIN_STEP_T`] standard errors.
fn keep_clear_steps(values: &[f64], mut cps: Vec<usize>, sigma: f64) -> Vec<usize> {
    loop {
        let bounds: Vec<usize> = std::iter::once(0).chain(cps.iter().copied()).chain([values.len()]).collect();
        let segs: Vec<&[f64]> = bounds.windows(2).map(|w| &values[w[0]..w[1]]).collect();
        let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
        let (ss, dof) = segs.iter().fold((0.0, 0usize), |(ss, d), x| {
            let m = mean(x);
            (ss + x.iter().map(|v| (v - m).powi(2)).sum::<f64>(), d + x.len() - 1)
        });
        let spread = if dof > 0 { (ss / dof as f64).sqrt() } else { 0.0 }.max(sigma);
        let weakest = (0..cps.len())
            .map(|i| {
                let (a, b) = (segs[i], segs[i + 1]);
                let se = spread * (1.0 / a.len() as f64 + 1.0 / b.len() as f64).sqrt();
                (i, (mean(b) - mean(a)).abs() / se)
            })
            .min_by(|x, y| x.1.total_cmp(&y.1));
        match weakest {
            Some((i, t)) if t < MIN_STEP_T => {
                cps.remove(i);
            }
            _ => return cps,
        }
    }
}

/// Fewest runs in a segment: one run away from its neighbours is an outlier run (the verdict's
/// business), not a level the metric moved to; a step needs two runs to show.
const MIN_SEGMENT: usize = 2;

/// Optimal partitioning with the squared-error cost of a constant mean per segment, `penalty`
/// per change and segments of at least [`MIN_SEGMENT`] runs: the partition that minimises total
/// cost + penalty x changes (exact; O(n^2), n being runs of one card). Returns the starts of the
/// segments after the first.
fn partition(values: &[f64], penalty: f64) -> Vec<usize> {
    let n = values.len();
    let m = MIN_SEGMENT;
    if n < 2 * m {
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
    let mut f = vec![f64::INFINITY; n + 1];
    f[0] = -penalty;
    let mut last = vec![0usize; n + 1];
    for t in m..=n {
        for s in (0..=t - m).filter(|&s| s == 0 || s >= m) {
            let c = f[s] + cost(s, t) + penalty;
            if c < f[t] {
                f[t] = c;
                last[t] = s;
            }
        }
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
    fn one_outlier_run_is_not_a_change_but_two_runs_at_a_new_level_are() {
        let mut v = vec![100.0; 12];
        v[5] = 106.0;
        assert!(detect(&v, &DetectParams::default()).change_points.is_empty());
        v[5] = 100.0;
        v[10] = 105.0;
        v[11] = 105.0;
        assert_eq!(detect(&v, &DetectParams::default()).change_points, vec![10]);
        v[10] = 100.0;
        assert!(detect(&v, &DetectParams::default()).change_points.is_empty(), "the newest run alone");
    }

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
    fn partition_finds_two_steps_and_noise_ignores_them() {
        let v = [1.0, 1.0, 1.0, 1.0, 5.0, 5.0, 5.0, 5.0, 2.0, 2.0, 2.0];
        assert_eq!(partition(&v, 1.0), vec![4, 8]);
        // A penalty larger than the whole series' cost keeps it one segment; too few runs for
        // two segments of two give none.
        assert!(partition(&v, 1e6).is_empty());
        assert!(partition(&[1.0, 9.0, 9.0], 0.0).is_empty());
        // Segments of one run are never made, however cheap: the outlier joins a neighbour.
        let cps = partition(&[1.0, 1.0, 7.0, 1.0, 1.0], 0.01);
        let bounds: Vec<usize> = std::iter::once(0).chain(cps.iter().copied()).chain([5]).collect();
        assert!(!cps.is_empty() && bounds.windows(2).all(|w| w[1] - w[0] >= MIN_SEGMENT), "{cps:?}");
        // Two steps among ten differences: the median difference stays 0, the floor applies.
        assert!((noise_sigma(&v, 0.01) - 0.02).abs() < 1e-12);
    }

    #[test]
    fn a_step_in_the_newest_two_runs_is_found() {
        let mut v = vec![10.0; 8];
        v.extend([10.5, 10.5]);
        assert_eq!(detect(&v, &DetectParams::default()).change_points, vec![8]);
    }
}
