//! What changed at a change point, and which change explains it.
//!
//! Between the runs on either side of a change point we compare the software stack (driver,
//! CUDA, NVRTC, cudarc, gpubench), the benchmark's generated code (kernel hash), the clock of
//! the metric's domain, the power limit, the throttled share of samples and foreign processes.
//! The cause is the first that fits of:
//! 1. clock: the clock-normalised value stays flat (its step is at most half of the raw step)
//!    while the raw value moved: the card ran at another clock, the software did not change;
//! 2. software: a stack field or the generated code changed;
//! 3. throttle: the throttled share of samples changed by 5 points or more;
//! 4. contention: the count of foreign processes changed;
//! 5. unexplained: nothing recorded changed (the card, its environment, or noise).

use std::collections::BTreeMap;

use serde::Serialize;

use super::changepoint::Segmentation;
use super::series::{RunInfo, Series};
use crate::stats::median;

/// Why a change point happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// The clock moved; the clock-normalised value did not.
    Clock,
    /// The software stack or the generated code changed.
    Software,
    /// The card throttled more or less.
    Throttle,
    /// Other processes used the GPU.
    Contention,
    /// No recorded change explains it.
    Unexplained,
}

impl Cause {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Cause::Clock => "clock",
            Cause::Software => "software",
            Cause::Throttle => "throttle",
            Cause::Contention => "contention",
            Cause::Unexplained => "unexplained",
        }
    }
}

/// A step of a series, annotated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChangePoint {
    /// Index in the series of the first run after the step.
    pub index: usize,
    /// Row id of that run.
    pub run_id: i64,
    /// Its start time.
    pub created_unix_s: i64,
    /// Mean of the segment before.
    pub before: f64,
    /// Mean of the segment after.
    pub after: f64,
    /// after / before - 1.
    pub step_rel: f64,
    /// The same for the clock-normalised values, where every run of both segments has one.
    pub normalized_step_rel: Option<f64>,
    /// Median clock of the (up to three) runs before and after, MHz.
    pub clock_mhz: Option<(f64, f64)>,
    /// "regressed" or "improved" (direction of the metric).
    pub direction: &'static str,
    /// Which change explains it.
    pub cause: Cause,
    /// Everything that changed between the runs on either side.
    pub changes: Vec<String>,
    /// Whether it falls in the newest runs (`--fail-recent`).
    pub recent: bool,
}

/// Runs on either side of a change point whose clocks and throttling are compared.
const NEAR: usize = 3;

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn rel(before: f64, after: f64) -> f64 {
    if before == 0.0 { 0.0 } else { after / before - 1.0 }
}

/// Annotates the change points of `series` (found by `seg`) whose size is at least
/// `min_effect` (relative); `recent` is how many of the newest runs count as recent.
pub fn annotate(
    series: &Series,
    seg: &Segmentation,
    runs: &BTreeMap<i64, RunInfo>,
    min_effect: f64,
    recent: usize,
) -> Vec<ChangePoint> {
    let pts = &series.points;
    let n = pts.len();
    let mut bounds = vec![0];
    bounds.extend(seg.change_points.iter().copied());
    bounds.push(n);
    let mut out = Vec::new();
    for w in bounds.windows(3) {
        let (a, k, b) = (w[0], w[1], w[2]);
        let (left, right) = (&pts[a..k], &pts[k..b]);
        let before = mean(&left.iter().map(|p| p.value).collect::<Vec<_>>());
        let after = mean(&right.iter().map(|p| p.value).collect::<Vec<_>>());
        let step_rel = rel(before, after);
        if step_rel.abs() < min_effect {
            continue;
        }
        let norm = |s: &[super::series::Point]| s.iter().map(|p| p.normalized).collect::<Option<Vec<f64>>>();
        let normalized_step_rel = match (norm(left), norm(right)) {
            (Some(l), Some(r)) => Some(rel(mean(&l), mean(&r))),
            _ => None,
        };
        let clock = |s: &[super::series::Point]| median(&s.iter().filter_map(|p| p.clock_mhz).collect::<Vec<_>>());
        // Clocks and throttling are compared over at most three runs on either side, within
        // the two segments: a later change elsewhere in a long segment does not blur them.
        let (near_left, near_right) = (&pts[a.max(k.saturating_sub(NEAR))..k], &pts[k..b.min(k + NEAR)]);
        let clock_mhz = clock(near_left).zip(clock(near_right));
        let direction = match (series.better.as_str(), step_rel > 0.0) {
            ("higher", true) | ("lower", false) => "improved",
            _ => "regressed",
        };
        let mut changes = Vec::new();
        let (prev, next) = (&pts[k - 1], &pts[k]);
        let (run_before, run_after) = (runs.get(&prev.run_id), runs.get(&next.run_id));
        let mut software = false;
        if let (Some(rb), Some(ra)) = (run_before, run_after) {
            let stack = ra.stack_changes(rb);
            software |= !stack.is_empty();
            changes.extend(stack);
        }
        if prev.kernel_hash != next.kernel_hash {
            software = true;
            changes.push(format!(
                "generated code of {} {} -> {}",
                series.key.benchmark,
                prev.kernel_hash.as_deref().unwrap_or("none"),
                next.kernel_hash.as_deref().unwrap_or("none")
            ));
        }
        if let Some((cb, ca)) = clock_mhz
            && rel(cb, ca).abs() >= 0.01
        {
            let which = if series.domain == "memory" { "memory clock" } else { "SM clock" };
            changes.push(format!("{which} {cb:.0} -> {ca:.0} MHz ({:+.1} %)", 100.0 * rel(cb, ca)));
        }
        let mut throttle = false;
        let share = |s: &[super::series::Point]| {
            let v: Vec<f64> = s.iter().filter_map(|p| p.throttle_share).collect();
            (!v.is_empty()).then(|| mean(&v))
        };
        if let (Some(tb), Some(ta)) = (share(near_left), share(near_right))
            && (ta - tb).abs() >= 0.05
        {
            throttle = true;
            changes.push(format!("throttled samples {:.0} % -> {:.0} %", 100.0 * tb, 100.0 * ta));
        }
        let mut contention = false;
        if let (Some(rb), Some(ra)) = (run_before, run_after) {
            if rb.power_limit_w != ra.power_limit_w
                && let (Some(pb), Some(pa)) = (rb.power_limit_w, ra.power_limit_w)
            {
                changes.push(format!("power limit {pb:.0} -> {pa:.0} W"));
            }
            if rb.foreign_processes.unwrap_or(0) != ra.foreign_processes.unwrap_or(0) {
                contention = true;
                changes.push(format!(
                    "foreign processes {} -> {}",
                    rb.foreign_processes.unwrap_or(0),
                    ra.foreign_processes.unwrap_or(0)
                ));
            }
            if rb.profile != ra.profile {
                changes.push(format!("profile {} -> {}", rb.profile, ra.profile));
            }
        }
        let clock_explains = normalized_step_rel.is_some_and(|ns| ns.abs() <= 0.5 * step_rel.abs());
        let cause = if clock_explains {
            Cause::Clock
        } else if software {
            Cause::Software
        } else if throttle {
            Cause::Throttle
        } else if contention {
            Cause::Contention
        } else {
            Cause::Unexplained
        };
        out.push(ChangePoint {
            index: k,
            run_id: next.run_id,
            created_unix_s: next.created_unix_s,
            before,
            after,
            step_rel,
            normalized_step_rel,
            clock_mhz,
            direction,
            cause,
            changes,
            recent: k + recent >= n && recent > 0,
        });
    }
    out
}

/// Indices (in `run_ids`, time order) of the runs whose software stack differs from the run
/// before, with the changes: the stack changes plots mark.
pub fn stack_changes(run_ids: &[i64], runs: &BTreeMap<i64, RunInfo>) -> Vec<(usize, Vec<String>)> {
    run_ids
        .windows(2)
        .enumerate()
        .filter_map(|(i, w)| {
            let (a, b) = (runs.get(&w[0])?, runs.get(&w[1])?);
            let c = b.stack_changes(a);
            (!c.is_empty()).then_some((i + 1, c))
        })
        .collect()
}
