//! The harness is never the measurement: what each benchmark's fixed per-launch costs are worth
//! against what it times, from recorded runs.
//!
//! Three ways a family times its work, each with its own fixed cost:
//! - **events** (`stream`, `dram`, the atomics throughput benchmarks): CUDA events around a
//!   batch of launches; every launch adds the gap between back-to-back kernels on the GPU
//!   ([`FixedCosts::launch_ns`]).
//! - **cycles** (`latency`, `shared_banks`, dependent-chain latencies, per-SM windows): the
//!   kernel's own clock reads bracket the timed work; a window adds one empty bracket (two clock
//!   reads, [`FixedCosts::bracket_cycles`]). The window's close atomics come after its end stamp
//!   and are outside it. A per-SM window of many warps also pays for the warps that start after
//!   the first and end before the last, and for whatever the warps do after their own end
//!   while others still run: that cost is not modelled here but measured, by timing the same
//!   benchmarks with windows several times longer ([`window_fixed_share`];
//!   `tests/harness_overhead.rs` holds it below [`LIMIT`] on recorded runs).
//! - **GPU-wide span** (`l2_bandwidth`, `access_patterns`): %globaltimer from the earliest warp's
//!   start to the latest warp's end; each end is off by up to one tick of the timer
//!   ([`FixedCosts::timer_tick_ns`]).
//!
//! The span a launch (or window) times comes from the run: the time per iteration over the
//! launches per iteration, the steps or operations per launch times the measured cycles per
//! step, or, for the per-SM windows, the cycles their launches are sized to.

use std::collections::BTreeMap;

use crate::families::{access_patterns, instructions, l2_bandwidth};
use crate::measure::launch_size;
use crate::results::{BenchmarkResult, Better, ResultsDocument};
use crate::stats::median;

/// The largest share of a timed span the fixed costs may take.
pub const LIMIT: f64 = 0.002;

/// Fixed costs of the harness, measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FixedCosts {
    /// GPU time a launch adds beyond its kernel's timed work, ns.
    pub launch_ns: f64,
    /// Cycles of an empty timing bracket (clock read to clock read).
    pub bracket_cycles: f64,
    /// Resolution of %globaltimer, ns.
    pub timer_tick_ns: f64,
}

/// The launch cost a run shows: over the `latency` benchmarks (one launch per iteration), the
/// smallest excess of the GPU time per iteration over the chase it timed (steps per launch,
/// warm-up included, times the ns per access). It includes the kernel's own untimed prologue,
/// so it bounds the launch gap from above. Returns the cost and the benchmark it came from.
pub fn launch_ns(run: &ResultsDocument) -> Option<(f64, String)> {
    run.benchmarks
        .iter()
        .filter(|b| b.family == "latency")
        .filter_map(|b| {
            let steps = param(b, "steps_per_launch")? + param(b, "warm_steps_per_launch").unwrap_or(0.0);
            let ns = b.metric("ns_per_access")?.summary.median;
            let excess = median(&b.time_ns)? - steps * ns;
            (excess > 0.0).then(|| (excess, b.id.clone()))
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))
}

/// The %globaltimer tick a run shows: the largest power of two dividing every ns reading.
pub fn timer_tick_ns(run: &ResultsDocument) -> Option<f64> {
    let readings: Vec<u64> =
        run.benchmarks.iter().flat_map(|b| &b.clocks).map(|c| c.ns as u64).filter(|&n| n > 0).collect();
    let mut tick = 1u64 << 20;
    for n in &readings {
        while tick > 1 && n % tick != 0 {
            tick /= 2;
        }
    }
    (!readings.is_empty()).then_some(tick as f64)
}

/// How a metric's span is timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Timed {
    /// CUDA events around launches: span and fixed cost in ns.
    Events,
    /// In-kernel clock brackets: span and fixed cost in SM cycles.
    Cycles,
    /// %globaltimer over the GPU-wide span of a launch: ns.
    GpuSpan,
}

impl Timed {
    /// "events", "cycles", "GPU-wide span".
    pub fn label(self) -> &'static str {
        match self {
            Timed::Events => "events (launch gap per launch)",
            Timed::Cycles => "in-kernel clock (empty bracket per window)",
            Timed::GpuSpan => "%globaltimer span (a tick at each end)",
        }
    }

    /// The unit of span and fixed cost.
    pub fn unit(self) -> &'static str {
        match self {
            Timed::Events | Timed::GpuSpan => "ns",
            Timed::Cycles => "cycles",
        }
    }
}

/// One metric's share.
#[derive(Debug, Clone, PartialEq)]
pub struct Share {
    /// "<benchmark>:<metric>".
    pub key: String,
    /// Bench family.
    pub family: String,
    /// How it is timed.
    pub timed: Timed,
    /// What one launch (or window) times, in [`Timed::unit`].
    pub span: f64,
    /// The fixed cost per launch (or window), same unit.
    pub fixed: f64,
}

impl Share {
    /// Fixed cost over span.
    pub fn share(&self) -> f64 {
        self.fixed / self.span
    }
}

/// Every modelled metric's share in `run`. Derived metrics (efficiencies, slowdowns, attempts
/// per success) share their source's launches and are left out.
pub fn shares(run: &ResultsDocument, costs: &FixedCosts) -> Vec<Share> {
    let mhz =
        run.telemetry.as_ref().and_then(|t| t.throttle.median_sm_mhz).unwrap_or(run.gpu.sm_clock_max_khz as f64 / 1e3);
    let span_fixed_ns = 2.0 * costs.timer_tick_ns + costs.bracket_cycles / (mhz / 1e3);
    let mut out = Vec::new();
    for b in &run.benchmarks {
        for m in &b.metrics {
            let name = m.name.as_str();
            if name.ends_with("efficiency") || name.ends_with("slowdown") || name.ends_with("per_success") {
                continue;
            }
            let Some((timed, span)) = span_of(b, name, m.summary.median, (run.gpu.sm_count as f64, mhz)) else {
                continue;
            };
            let fixed = match timed {
                Timed::Events => costs.launch_ns,
                Timed::Cycles => costs.bracket_cycles,
                Timed::GpuSpan => span_fixed_ns,
            };
            out.push(Share { key: format!("{}:{name}", b.id), family: b.family.clone(), timed, span, fixed });
        }
    }
    out
}

/// What one launch or window of metric `metric` (median `value`) of `b` times, on a GPU of
/// `sms` SMs running at `mhz`.
fn span_of(b: &BenchmarkResult, metric: &str, value: f64, (sms, mhz): (f64, f64)) -> Option<(Timed, f64)> {
    let id = b.id.as_str();
    let cycles = |steps: f64| Some((Timed::Cycles, steps * value));
    match b.family.as_str() {
        "stream" | "dram" => Some((Timed::Events, median(&b.time_ns)?)),
        "latency" if metric == "cycles_per_access" => cycles(param(b, "steps_per_launch")?),
        "latency" => None,
        "shared_banks" => cycles(param(b, "steps")?),
        "constant_memory" if id.ends_with("/latency") => cycles(param(b, "steps_per_launch")?),
        "constant_memory" => Some((Timed::Cycles, window(b, LEGACY_CONSTANT_MEMORY_CYCLES))),
        "atomics" if id.ends_with("/latency") || id.ends_with("/global_latency") => cycles(param(b, "ops_per_launch")?),
        "atomics" if id.ends_with("/shared_add") => {
            // ops per SM per launch over the measured ops per clock per SM
            let per_sm = param(b, "blocks")? * param(b, "threads_per_block")? / sms.max(1.0);
            let key = format!("{metric}_atomics_per_thread");
            let ops = per_sm * chosen(b, &key).or_else(|| param(b, &key))?;
            Some((Timed::Cycles, ops / value))
        }
        "atomics" => Some((Timed::Events, atomics_launch_ns(b, metric, value, mhz)?)),
        "instructions" if id.ends_with("/latency") => cycles(param(b, &format!("{metric}_ops_per_launch"))?),
        "instructions" if metric.ends_with("_latency") => cycles(instructions::LATENCY_OPS[1] as f64),
        "instructions" | "l1_bandwidth" | "shared_bandwidth" | "spilling" => {
            Some((Timed::Cycles, window(b, LEGACY_WINDOW_CYCLES)))
        }
        "l2_bandwidth" => Some((Timed::GpuSpan, l2_bandwidth::TARGET_NS)),
        "access_patterns" => Some((Timed::GpuSpan, access_patterns::TARGET_NS)),
        _ => None,
    }
}

/// Cycles the per-SM windows of the throughput families were sized to before runs recorded it
/// ([`launch_size::WINDOW_PARAM`]), and those of `constant_memory`.
const LEGACY_WINDOW_CYCLES: f64 = (1u64 << 18) as f64;
const LEGACY_CONSTANT_MEMORY_CYCLES: f64 = (1u64 << 16) as f64;

/// The cycles `b`'s per-SM windows were sized to: as recorded, or `legacy` for runs made
/// before they were recorded.
fn window(b: &BenchmarkResult, legacy: f64) -> f64 {
    param(b, launch_size::WINDOW_PARAM).unwrap_or(legacy)
}

/// The share of a per-SM window that its start and end take, from a metric measured with
/// windows of two lengths, `scale` times apart: `short` and `long` are its values (rates, or
/// cycles where lower is better). A window of `s` units lasts `c + s·T` (a fixed cost `c`, `T`
/// per unit), so a rate is proportional to `s / (c + s·T)`, and with `q` the short windows' rate
/// over the long ones', the short windows' fixed share `c / (c + T)` is `scale · (1 − q) /
/// (scale − 1)`. Zero where the short windows are not slower (no fixed cost to see); `None`
/// for values that are not positive or a scale that is not above one.
pub fn window_fixed_share(short: f64, long: f64, scale: f64, better: Better) -> Option<f64> {
    if !(short > 0.0 && long > 0.0 && scale > 1.0 && short.is_finite() && long.is_finite()) {
        return None;
    }
    let q = match better {
        Better::Higher => short / long,
        Better::Lower => long / short,
    };
    Some((scale * (1.0 - q) / (scale - 1.0)).max(0.0))
}

/// One launch of an atomics throughput kernel, ns: its operations (threads times operations
/// per thread) over the measured rate (per second, or per clock at `mhz`). Runs that did not
/// record the operations per thread give the least the batching allowed: the minimum iteration
/// over the launches per iteration.
fn atomics_launch_ns(b: &BenchmarkResult, metric: &str, value: f64, mhz: f64) -> Option<f64> {
    let per_thread = [
        "atomics_per_thread".to_string(),
        format!("{metric}_atomics_per_thread"),
        format!("{metric}_successes_per_thread"),
    ]
    .iter()
    .find_map(|k| chosen(b, k).or_else(|| param(b, k)));
    if let (Some(per_thread), Some(threads)) = (per_thread, param(b, "threads")) {
        let ops = threads * per_thread;
        return Some(if metric == "ops_per_s" { ops / value * 1e9 } else { ops / value / mhz * 1e3 });
    }
    let lpi = chosen(b, &format!("{metric}_launches_per_iteration")).or_else(|| chosen(b, "launches_per_iteration"))?;
    Some(param(b, "iteration_us")? * 1e3 / lpi.max(1.0))
}

fn param(b: &BenchmarkResult, key: &str) -> Option<f64> {
    b.params.get(key).and_then(serde_json::Value::as_f64)
}

fn chosen(b: &BenchmarkResult, key: &str) -> Option<f64> {
    b.chosen.get(key).and_then(serde_json::Value::as_f64)
}

/// A family's worst metric.
#[derive(Debug, Clone, PartialEq)]
pub struct FamilyShare {
    /// The family.
    pub family: String,
    /// Its metric with the largest share.
    pub worst: Share,
    /// Metrics modelled.
    pub metrics: usize,
}

impl FamilyShare {
    /// Whether the worst share is within [`LIMIT`].
    pub fn passes(&self) -> bool {
        self.worst.share() < LIMIT
    }

    /// The span one launch (window) must time for the fixed cost to stay within [`LIMIT`].
    pub fn needed_span(&self) -> f64 {
        self.worst.fixed / LIMIT
    }
}

/// The worst share of each family, by family name.
pub fn by_family(shares: &[Share]) -> Vec<FamilyShare> {
    let mut out: BTreeMap<&str, FamilyShare> = BTreeMap::new();
    for s in shares {
        let e = out.entry(&s.family).or_insert_with(|| FamilyShare {
            family: s.family.clone(),
            worst: s.clone(),
            metrics: 0,
        });
        e.metrics += 1;
        if s.share() > e.worst.share() {
            e.worst = s.clone();
        }
    }
    out.into_values().collect()
}

/// The families as a Markdown table.
pub fn markdown(families: &[FamilyShare]) -> String {
    let mut s = String::from(
        "| family | timed by | worst metric | span per launch | fixed cost | share | within 0.2 % | span needed |\n\
         | --- | --- | --- | ---: | ---: | ---: | --- | ---: |\n",
    );
    for f in families {
        let u = f.worst.timed.unit();
        s.push_str(&format!(
            "| {} | {} | `{}` | {:.0} {u} | {:.1} {u} | {:.3} % | {} | {} |\n",
            f.family,
            f.worst.timed.label(),
            f.worst.key,
            f.worst.span,
            f.worst.fixed,
            100.0 * f.worst.share(),
            if f.passes() { "yes" } else { "no" },
            if f.passes() { "-".to_string() } else { format!("{:.0} {u}", f.needed_span()) },
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixed_share_of_a_window_comes_from_two_window_lengths() {
        // c = 1000 cycles, T = 9000 per unit: a 10 % share at one unit; rates s / (c + s·T).
        let rate = |s: f64| s / (1000.0 + s * 9000.0);
        let share = window_fixed_share(rate(1.0), rate(4.0), 4.0, Better::Higher).unwrap();
        assert!((share - 0.1).abs() < 1e-12, "{share}");
        // the same in cycles per unit, where lower is better
        let cycles = |s: f64| 1.0 / rate(s);
        let share = window_fixed_share(cycles(1.0), cycles(16.0), 16.0, Better::Lower).unwrap();
        assert!((share - 0.1).abs() < 1e-12, "{share}");
        // short windows faster than long ones: nothing to see
        assert_eq!(window_fixed_share(1.01, 1.0, 4.0, Better::Higher), Some(0.0));
        assert_eq!(window_fixed_share(0.0, 1.0, 4.0, Better::Higher), None);
        assert_eq!(window_fixed_share(1.0, 1.0, 1.0, Better::Higher), None);
    }
}
