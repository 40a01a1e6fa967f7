//! The clock under a sustained load: tensor-core MMAs and a memory stream on every SM, in
//! back-to-back launches, until the card holds its clock down for power or heat (or the time is
//! up). One warp measures meanwhile: a shared-memory pointer chase whose latency in ns (raw)
//! moves with the clock while its latency in cycles (normalised) holds. The card's settings are not
//! touched: the load alone moves the clock.

use std::time::{Duration, Instant};

use cudarc::driver::PushKernelArg;
use serde::{Deserialize, Serialize};

use crate::device::{EventTimer, Gpu};
use crate::error::{CudaResultExt, Result};
use crate::families::full_grid;
use crate::harness::Probe;
use crate::results::Summary;
use crate::telemetry::{Sampler, reasons};

/// FLOPs of one `mma.sync.m16n8k16` (16 x 8 x 16 multiply-adds).
pub const FLOP_PER_MMA: f64 = 2.0 * 16.0 * 8.0 * 16.0;
/// MMAs per warp per loop iteration of `power_load` (2 rounds x 4 accumulator sets).
pub const MMAS_PER_ITERATION: f64 = 8.0;

/// Settings of the experiment.
#[derive(Debug, Clone, Copy)]
pub struct LoadSettings {
    /// How long to keep the load on.
    pub duration: Duration,
    /// Aimed length of one launch.
    pub launch: Duration,
}

impl Default for LoadSettings {
    fn default() -> Self {
        LoadSettings { duration: Duration::from_secs(20), launch: Duration::from_millis(20) }
    }
}

/// One launch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadPoint {
    /// Time since the load started, ms.
    pub at_ms: f64,
    /// Effective SM clock of the launch, MHz.
    pub kernel_mhz: f64,
    /// NVML's SM clock during the launch, MHz.
    pub nvml_mhz: Option<f64>,
    /// Board power during the launch, W.
    pub power_w: Option<f64>,
    /// GPU temperature, C.
    pub temp_c: Option<f64>,
    /// Slowdown reasons seen during the launch.
    pub reasons: Vec<String>,
    /// Tensor throughput of the load, TFLOP/s (memory traffic shares the time, so this is a
    /// load figure, not a clock-bound one).
    pub tflops: f64,
    /// Raw latency of the measuring chase, ns per access.
    pub ns_per_access: f64,
    /// Normalised latency of the chase, cycles per access.
    pub cycles_per_access: f64,
}

/// The trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadTrace {
    /// GPU name.
    pub gpu: String,
    /// Maximum SM clock, MHz.
    pub max_sm_mhz: f64,
    /// Power limit in force, W (NVML).
    pub power_limit_w: Option<f64>,
    /// One point per launch.
    pub points: Vec<LoadPoint>,
}

/// What the trace shows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LoadSummary {
    /// Lowest effective SM clock, MHz.
    pub clock_min_mhz: f64,
    /// Highest effective SM clock, MHz.
    pub clock_max_mhz: f64,
    /// Highest power, W.
    pub power_max_w: Option<f64>,
    /// Launches with a slowdown reason or an effective clock below 90% of the maximum.
    pub throttled: usize,
    /// Launches.
    pub launches: usize,
    /// Spread of the raw latency, ns (max / min - 1), %.
    pub raw_spread_pct: f64,
    /// Spread of the normalised latency, cycles, %.
    pub normalized_spread_pct: f64,
    /// Raw ns per access at the lowest clock.
    pub ns_at_min_clock: f64,
    /// Raw ns per access at the highest clock.
    pub ns_at_max_clock: f64,
    /// Median cycles per access.
    pub cycles_median: f64,
}

/// Runs the load on `gpu` for `settings.duration`.
pub fn run(gpu: &Gpu, settings: LoadSettings) -> Result<LoadTrace> {
    let id = gpu.identity().clone();
    let k = gpu.kernels(&crate::kernels::POWER)?;
    let f = k.function("power_load")?;
    let n4: u64 = (512u64 << 20) / 16;
    let host: Vec<f32> = (0..n4 * 4).map(|i| (i % 1021) as f32 * 0.001 + 0.5).collect();
    let stream = gpu.upload(&host, "the load's stream array")?;
    drop(host);
    let sink = gpu.alloc_zeros::<f32>(1, "the load's sink")?;
    let mut chase_steps = 256u32;
    let mut probe = Probe::new(gpu)?;
    let timer = EventTimer::new(gpu.stream())?;
    let cfg = full_grid(&id, 256);
    let warps = (cfg.grid_dim.0 * cfg.block_dim.0 / id.warp_size) as f64;
    let launch = |iters: u32, steps: u32, probe: &Probe| -> Result<f64> {
        timer.start()?;
        // SAFETY: power_load(const float4*, u64, u32, gb_probe*, float*, u32); stream indices
        // stay below n4.
        unsafe {
            gpu.stream()
                .launch_builder(&f)
                .arg(&stream)
                .arg(&n4)
                .arg(&iters)
                .arg(probe.buffer())
                .arg(&sink)
                .arg(&steps)
                .launch(cfg)
        }
        .cuda_context(|| "launching power_load".into())?;
        timer.stop_ns()
    };
    // calibrate the launch length
    let trial_iters = 2000u32;
    let trial_ns = launch(trial_iters, chase_steps, &probe)?;
    let iters = ((trial_iters as f64 * settings.launch.as_nanos() as f64 / trial_ns).round() as u32).max(100);
    // the chase should end before the load: 70% of a launch at the trial's latency
    let trial = probe.read(gpu)?;
    let ns_per_step = trial.ns as f64 / trial.count.max(1) as f64;
    chase_steps = ((0.7 * settings.launch.as_nanos() as f64 / ns_per_step.max(1.0)) as u32).max(64);
    // one launch at the final sizes, so that the clock controller sees the full load
    launch(iters, chase_steps, &probe)?;
    let sampler = Sampler::start(&id.uuid, Duration::from_millis(10));
    let power_limit_w = crate::telemetry::device_status(&id.uuid).ok().and_then(|s| s.power_limit_w);
    let max_mhz = id.sm_clock_max_khz as f64 / 1e3;
    let start = Instant::now();
    let mut points = Vec::new();
    while start.elapsed() < settings.duration {
        probe.reset_counters(gpu)?;
        let t0 = Instant::now();
        let ns = launch(iters, chase_steps, &probe)?;
        let t1 = Instant::now();
        let r = probe.read(gpu)?;
        let kernel_mhz = r.clock().and_then(|c| c.mhz()).unwrap_or(f64::NAN);
        let window = sampler.window(t0, t1).unwrap_or_default();
        let verdict = reasons::classify(
            window.reasons_mask,
            window.power_violation_ns,
            window.thermal_violation_ns,
            Some(kernel_mhz),
            max_mhz,
        );
        let flop = (warps - 1.0) * iters as f64 * MMAS_PER_ITERATION * FLOP_PER_MMA;
        let accesses = r.count.max(1) as f64;
        points.push(LoadPoint {
            at_ms: (t0 - start).as_secs_f64() * 1e3,
            kernel_mhz,
            nvml_mhz: window.sm_mhz,
            power_w: window.power_w,
            temp_c: window.temp_c,
            reasons: verdict.reasons,
            tflops: flop / ns * 1e-3,
            ns_per_access: r.ns as f64 / accesses,
            cycles_per_access: r.cycles as f64 / accesses,
        });
    }
    Ok(LoadTrace { gpu: id.name.clone(), max_sm_mhz: max_mhz, power_limit_w, points })
}

/// How far the clock, the raw and the normalised figures moved.
pub fn summarize(trace: &LoadTrace) -> Option<LoadSummary> {
    let p = &trace.points;
    let slowest = p.iter().min_by(|a, b| a.kernel_mhz.total_cmp(&b.kernel_mhz))?;
    let fastest = p.iter().max_by(|a, b| a.kernel_mhz.total_cmp(&b.kernel_mhz))?;
    let spread = |v: Vec<f64>| {
        let s = Summary::of(&v);
        100.0 * (s.max / s.min - 1.0)
    };
    Some(LoadSummary {
        clock_min_mhz: slowest.kernel_mhz,
        clock_max_mhz: fastest.kernel_mhz,
        power_max_w: p.iter().filter_map(|x| x.power_w).reduce(f64::max),
        throttled: p.iter().filter(|x| !x.reasons.is_empty()).count(),
        launches: p.len(),
        raw_spread_pct: spread(p.iter().map(|x| x.ns_per_access).collect()),
        normalized_spread_pct: spread(p.iter().map(|x| x.cycles_per_access).collect()),
        ns_at_min_clock: slowest.ns_per_access,
        ns_at_max_clock: fastest.ns_per_access,
        cycles_median: Summary::of(&p.iter().map(|x| x.cycles_per_access).collect::<Vec<_>>()).median,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(mhz: f64, reasons: &[&str]) -> LoadPoint {
        LoadPoint {
            at_ms: 0.0,
            kernel_mhz: mhz,
            nvml_mhz: Some(mhz),
            power_w: Some(650.0),
            temp_c: Some(60.0),
            reasons: reasons.iter().map(|r| r.to_string()).collect(),
            tflops: 280.0,
            ns_per_access: 287.0 / mhz * 1e3,
            cycles_per_access: 287.0,
        }
    }

    #[test]
    fn a_power_capped_trace_moves_raw_latency_not_cycles() {
        let trace = LoadTrace {
            gpu: "x".into(),
            max_sm_mhz: 1980.0,
            power_limit_w: Some(700.0),
            points: vec![point(1980.0, &[]), point(1755.0, &["sw_power_cap"]), point(1605.0, &["sw_power_cap"])],
        };
        let s = summarize(&trace).unwrap();
        assert_eq!((s.clock_min_mhz, s.clock_max_mhz), (1605.0, 1980.0));
        assert_eq!((s.throttled, s.launches), (2, 3));
        assert!((s.raw_spread_pct - 100.0 * (1980.0 / 1605.0 - 1.0)).abs() < 1e-9);
        assert_eq!(s.normalized_spread_pct, 0.0);
        assert_eq!(s.cycles_median, 287.0);
        assert!((s.ns_at_min_clock / s.ns_at_max_clock - 1980.0 / 1605.0).abs() < 1e-9);
    }

    #[test]
    fn one_mma_is_4096_flop() {
        assert_eq!(FLOP_PER_MMA, 4096.0);
    }
}
