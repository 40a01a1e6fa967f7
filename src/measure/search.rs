//! Configuration search on sweep data: which block size, unroll or ILP to keep.
//!
//! A sweep measures each configuration a few times ([`Trial`]); [`choose`] keeps the first
//! configuration, in sweep order, whose score (median of its repeats) is within a tolerance of
//! the best score. Sweeps list the configurations in order of preference, so that noise between
//! near-equal configurations does not make the choice flip from run to run. The choice is a pure
//! function of the recorded values; [`run`] only gathers them, and [`to_json`] / [`from_json`]
//! keep them in a benchmark's parameters so that a recorded search can be replayed.

use crate::error::{Error, Result};

/// One configuration of a sweep and what its repeats measured (higher is better).
#[derive(Debug, Clone, PartialEq)]
pub struct Trial<C> {
    /// The configuration.
    pub config: C,
    /// One value per repeat; non-finite values (a configuration that could not run) are ignored.
    pub values: Vec<f64>,
}

impl<C> Trial<C> {
    /// Median of the finite values, if any.
    pub fn score(&self) -> Option<f64> {
        let finite: Vec<f64> = self.values.iter().copied().filter(|x| x.is_finite()).collect();
        crate::stats::median(&finite)
    }
}

/// Index of the configuration to keep: the first trial whose score is at least
/// `(1 - tolerance)` times the best score. `None` when no trial has a score.
pub fn choose<C>(trials: &[Trial<C>], tolerance: f64) -> Option<usize> {
    let best = trials.iter().filter_map(Trial::score).fold(f64::NEG_INFINITY, f64::max);
    if !best.is_finite() {
        return None;
    }
    let bar = best - tolerance.max(0.0) * best.abs();
    trials.iter().position(|t| t.score().is_some_and(|s| s >= bar))
}

/// Measures every configuration `repeats` times with `measure` (which returns NaN for a
/// configuration that cannot run on this GPU) and returns the trials in sweep order.
pub fn run<C: Clone>(
    configs: &[C],
    repeats: usize,
    mut measure: impl FnMut(&C) -> Result<f64>,
) -> Result<Vec<Trial<C>>> {
    let mut trials = Vec::with_capacity(configs.len());
    for c in configs {
        let mut values = Vec::with_capacity(repeats);
        for _ in 0..repeats.max(1) {
            values.push(measure(c)?);
        }
        trials.push(Trial { config: c.clone(), values });
    }
    Ok(trials)
}

/// [`run`] then [`choose`]: the trials and the index of the kept configuration; an error when
/// no configuration produced a value.
pub fn run_and_choose<C: Clone>(
    what: &str,
    configs: &[C],
    repeats: usize,
    tolerance: f64,
    measure: impl FnMut(&C) -> Result<f64>,
) -> Result<(Vec<Trial<C>>, usize)> {
    let trials = run(configs, repeats, measure)?;
    let best = choose(&trials, tolerance).ok_or_else(|| Error::Verification {
        what: what.into(),
        detail: format!("none of the {} configurations of the search produced a measurement", configs.len()),
    })?;
    Ok((trials, best))
}

/// The trials as a JSON array of `{"config": label, "score": median}` in sweep order (an
/// unscored configuration has a null score), for a benchmark's parameters.
pub fn to_json<C>(trials: &[Trial<C>], label: impl Fn(&C) -> String) -> serde_json::Value {
    trials
        .iter()
        .map(|t| serde_json::json!({ "config": label(&t.config), "score": t.score() }))
        .collect::<Vec<_>>()
        .into()
}

/// Reads back what [`to_json`] wrote: one trial per entry, labelled, with its score as the
/// single value (NaN when null). `None` when the value is not such an array.
pub fn from_json(v: &serde_json::Value) -> Option<Vec<Trial<String>>> {
    v.as_array()?
        .iter()
        .map(|e| {
            let config = e.get("config")?.as_str()?.to_string();
            let score = match e.get("score")? {
                serde_json::Value::Null => f64::NAN,
                s => s.as_f64()?,
            };
            Some(Trial { config, values: vec![score] })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trials(scores: &[(u32, &[f64])]) -> Vec<Trial<u32>> {
        scores.iter().map(|(c, v)| Trial { config: *c, values: v.to_vec() }).collect()
    }

    /// DRAM triad over threads per block, shaped like Qiu et al.'s figure 7(a): a knee, a plateau
    /// with noise, a dip at the largest block. GB/s, three repeats each.
    fn threads_sweep() -> Vec<Trial<u32>> {
        trials(&[
            (32, &[1210.0, 1206.0, 1214.0]),
            (64, &[2290.0, 2301.0, 2297.0]),
            (128, &[3890.0, 3902.0, 3895.0]),
            (256, &[4402.0, 4398.0, 4405.0]),
            (512, &[4409.0, 4415.0, 4380.0]),
            (1024, &[4350.0, 4361.0, 4344.0]),
        ])
    }

    #[test]
    fn score_is_the_median_of_finite_repeats() {
        let t = Trial { config: 0, values: vec![3.0, f64::NAN, 1.0, 2.0] };
        assert_eq!(t.score(), Some(2.0));
        let t = Trial { config: 0, values: vec![4.0, 1.0, 2.0, 3.0] };
        assert_eq!(t.score(), Some(2.5));
        assert_eq!(Trial { config: 0, values: vec![f64::NAN] }.score(), None);
    }

    #[test]
    fn zero_tolerance_keeps_the_best_median() {
        let t = threads_sweep();
        assert_eq!(t[choose(&t, 0.0).unwrap()].config, 512);
    }

    #[test]
    fn within_tolerance_the_simpler_configuration_wins() {
        // 256 threads (4402) is within 0.5% of 512 threads (4409): keep 256
        let t = threads_sweep();
        assert_eq!(t[choose(&t, 0.005).unwrap()].config, 256);
        // a 1% noise swing on 512 does not change the choice
        let mut noisy = threads_sweep();
        noisy[4].values = vec![4450.0, 4452.0, 4449.0];
        assert_eq!(noisy[choose(&noisy, 0.005).unwrap()].config, 512);
        noisy[4].values = vec![4420.0, 4425.0, 4419.0];
        assert_eq!(noisy[choose(&noisy, 0.005).unwrap()].config, 256);
    }

    #[test]
    fn one_outlier_repeat_does_not_move_the_choice() {
        let mut t = threads_sweep();
        t[5].values = vec![4350.0, 9000.0, 4344.0];
        assert_eq!(t[choose(&t, 0.0).unwrap()].config, 512);
    }

    #[test]
    fn configurations_that_cannot_run_are_skipped() {
        let t = trials(&[(1, &[f64::NAN]), (2, &[5.0]), (3, &[f64::NAN, f64::NAN])]);
        assert_eq!(choose(&t, 0.0), Some(1));
        let none = trials(&[(1, &[f64::NAN])]);
        assert_eq!(choose(&none, 0.0), None);
        assert_eq!(choose::<u32>(&[], 0.0), None);
    }

    #[test]
    fn run_measures_each_configuration_repeatedly_in_order() {
        let mut calls = Vec::new();
        let t = run(&[10u32, 20], 3, |c| {
            calls.push(*c);
            Ok(*c as f64)
        })
        .unwrap();
        assert_eq!(calls, vec![10, 10, 10, 20, 20, 20]);
        assert_eq!(t[1].values, vec![20.0; 3]);
    }

    #[test]
    fn a_search_without_any_value_is_an_error() {
        let e = run_and_choose("dram/triad", &[1u32, 2], 2, 0.0, |_| Ok(f64::NAN)).unwrap_err();
        assert!(e.to_string().contains("none of the 2 configurations"), "{e}");
        let (t, i) = run_and_choose("x", &[1u32, 2, 3], 1, 0.0, |c| Ok(-((*c as f64) - 2.0).abs())).unwrap();
        assert_eq!(t[i].config, 2);
    }

    #[test]
    fn trials_are_recorded_in_order_with_their_scores() {
        let t = trials(&[(512, &[1.0, 3.0]), (256, &[f64::NAN])]);
        let j = to_json(&t, |c| format!("threads={c}"));
        assert_eq!(j[0]["config"], "threads=512");
        assert_eq!(j[0]["score"], 2.0);
        assert!(j[1]["score"].is_null());
        assert!(from_json(&serde_json::json!({"a": 1})).is_none());
    }

    #[test]
    fn a_recorded_search_replays_to_the_same_choice() {
        let t = threads_sweep();
        let recorded = to_json(&t, |c| format!("threads={c}"));
        // through the results file: text and back
        let text = serde_json::to_string(&recorded).unwrap();
        let replayed = from_json(&serde_json::from_str(&text).unwrap()).unwrap();
        for tol in [0.0, 0.005, 0.02] {
            let original = t[choose(&t, tol).unwrap()].config;
            assert_eq!(replayed[choose(&replayed, tol).unwrap()].config, format!("threads={original}"));
        }
    }
}
