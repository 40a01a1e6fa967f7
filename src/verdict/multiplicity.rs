//! The confidence of a whole comparison, shared among its metrics.
//!
//! A comparison judges some 300 metrics. At a confidence of 0.99 for each, a healthy run that
//! repeats the baseline would raise a false REGRESSED or IMPROVED in about three of them if
//! every band were what decides; most are not, because a change must also pass the minimum
//! effect, and a metric whose runs stray by 0.3 % passes 2 % by chance about never. What a CI
//! job needs is the chance that a healthy run fails it at all.
//!
//! Each metric's chance of passing its minimum effect by chance, `q`, follows from the
//! prediction band it was judged with ([`chance_beyond`]). Judged at level `a`, its chance of a
//! false verdict is `min(q, a)`, and by the union bound the comparison's is at most their sum.
//! [`per_metric_alpha`] finds the largest `a`, at most `1 − confidence`, whose sum stays within
//! `1 − confidence` (Bonferroni, with Tarone's idea that a test which cannot err takes no
//! share): the noisy metrics split the budget; the quiet ones keep the rule's band and lose
//! nothing. The price is power: on the committed corpus the share of metrics detectable to 5 %
//! against a class falls by 8-30 points (docs, "Baselines and verdicts"), so it is the rule's
//! `confidence_scope = "comparison"`, not its default.

use super::level::quantile;
use crate::stats::t_two_sided_tail;

/// The chance that a metric whose band at `confidence` is `half_width`, on `df` degrees of
/// freedom (0: the normal quantile), passes its minimum effect `minimum` by chance: the
/// metric's change is taken as Student's t scaled so that the band holds it with
/// probability `confidence`.
pub fn chance_beyond(minimum: f64, half_width: f64, df: f64, confidence: f64) -> f64 {
    if !(half_width > 0.0) {
        return 0.0;
    }
    t_two_sided_tail(minimum * quantile(confidence, df) / half_width, df)
}

/// The two-sided level each metric is judged at so that the chances of a false verdict of all
/// of them add up to at most `alpha`: the largest `a` in `(0, alpha]` with
/// `Σ min(chance, a) <= alpha`.
pub fn per_metric_alpha(chance: &[f64], alpha: f64) -> f64 {
    let mut q: Vec<f64> = chance.iter().map(|c| if c.is_finite() { c.clamp(0.0, 1.0) } else { 1.0 }).collect();
    if q.iter().map(|c| c.min(alpha)).sum::<f64>() <= alpha {
        return alpha;
    }
    q.sort_by(f64::total_cmp);
    let n = q.len();
    let mut below = 0.0;
    for (j, c) in q.iter().enumerate() {
        // The metrics from j on take `a` each, those before it their own chance.
        let a = (alpha - below) / (n - j) as f64;
        if a <= *c {
            return a;
        }
        below += c;
    }
    alpha
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_metrics_take_no_share_and_noisy_ones_split_it() {
        // 300 metrics that cannot pass the minimum effect by chance: the rule's own level.
        assert_eq!(per_metric_alpha(&[1e-12; 300], 0.01), 0.01);
        // Ten that pass it half the time: a tenth each.
        let mut chance = vec![1e-12; 300];
        chance.extend([0.5; 10]);
        let a = per_metric_alpha(&chance, 0.01);
        assert!((a - (0.01 - 300.0 * 1e-12) / 10.0).abs() < 1e-12, "{a}");
        // The sum holds: the quiet ones their own, the rest `a`.
        let total: f64 = chance.iter().map(|c| c.min(a)).sum();
        assert!((total - 0.01).abs() < 1e-12, "{total}");
        // One in between takes its own chance.
        let a = per_metric_alpha(&[0.5, 0.5, 0.002], 0.01);
        assert!((a - 0.004).abs() < 1e-12, "{a}");
    }

    #[test]
    fn the_chance_beyond_the_minimum_is_the_bands_own_tail() {
        // A band of exactly the minimum effect: the chance is one minus the confidence.
        assert!((chance_beyond(0.02, 0.02, 5.0, 0.99) - 0.01).abs() < 1e-9);
        // A band a tenth of it: about never; one twice it: often.
        assert!(chance_beyond(0.02, 0.002, 20.0, 0.99) < 1e-9);
        assert!(chance_beyond(0.02, 0.04, 20.0, 0.99) > 0.1);
        assert_eq!(chance_beyond(0.02, 0.0, 5.0, 0.99), 0.0);
    }
}
