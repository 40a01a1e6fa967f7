//! The SM clock ramping up after the GPU sat idle, seen through an L2-hit pointer chase: the
//! raw latency in ns moves with the clock while the latency in cycles (the normalised figure)
//! holds. Nothing about the card's settings is touched: the kernels are compiled first (NVRTC
//! needs no GPU), the process idles without a CUDA context while NVML watches the clock, then
//! opens the GPU and launches at once, back to back. The first lap of the chase misses in L2
//! and is marked cold; the others hit.

use std::time::{Duration, Instant};

use cudarc::driver::PushKernelArg;
use serde::{Deserialize, Serialize};

use crate::device::Gpu;
use crate::error::{CudaResultExt, Result};
use crate::families::SINGLE_THREAD;
use crate::families::latency::{CacheOp, Chaser};
use crate::results::Summary;
use crate::telemetry::{Sampler, summarize};

/// Settings of the experiment.
#[derive(Debug, Clone, Copy)]
pub struct RampSettings {
    /// How long the GPU sits idle before the launches.
    pub idle: Duration,
    /// Back-to-back launches after the idle period.
    pub launches: usize,
    /// Chase steps per launch.
    pub steps: u32,
    /// Footprint of the chase (resident in L2).
    pub footprint_bytes: u64,
}

impl Default for RampSettings {
    fn default() -> Self {
        RampSettings { idle: Duration::from_secs(3), launches: 400, steps: 256, footprint_bytes: 32 << 10 }
    }
}

/// One launch of the experiment.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RampPoint {
    /// Launch number.
    pub launch: usize,
    /// Host time of the launch's completion since the first launch was queued, ms.
    pub at_ms: f64,
    /// Effective SM clock of the launch (clock64 over %globaltimer), MHz.
    pub kernel_mhz: f64,
    /// SM clock NVML reported nearest to the launch, MHz.
    pub nvml_mhz: Option<f64>,
    /// Raw latency, ns per access.
    pub ns_per_access: f64,
    /// Normalised latency, cycles per access.
    pub cycles_per_access: f64,
    /// Whether the launch made first-lap (cold) accesses.
    #[serde(default)]
    pub cold: bool,
}

/// The whole trace and its settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RampTrace {
    /// GPU name.
    pub gpu: String,
    /// Idle time before the launches, ms.
    pub idle_ms: u64,
    /// Median SM clock NVML reported during the idle period, MHz.
    pub idle_nvml_mhz: Option<f64>,
    /// Time from the end of the idle period to the first launch (context, module, set-up), ms.
    pub setup_ms: f64,
    /// NVML's SM clock from the end of the idle period on: (ms since then, MHz).
    #[serde(default)]
    pub nvml_after_idle: Vec<(f64, f64)>,
    /// Steps per launch.
    pub steps: u32,
    /// One point per launch.
    pub points: Vec<RampPoint>,
}

/// What the trace shows: how far the raw and the normalised figures moved.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RampSummary {
    /// Lowest and highest kernel clock, MHz.
    pub clock_min_mhz: f64,
    /// Highest kernel clock, MHz.
    pub clock_max_mhz: f64,
    /// Raw ns per access at the lowest and at the highest clock.
    pub ns_at_min_clock: f64,
    /// Raw ns per access at the highest clock.
    pub ns_at_max_clock: f64,
    /// Spread (max/min - 1) of the raw figure over the trace, %.
    pub raw_spread_pct: f64,
    /// Spread of the normalised figure over the trace, %.
    pub normalized_spread_pct: f64,
    /// Median cycles per access.
    pub cycles_median: f64,
}

/// Runs the experiment on GPU `ordinal`.
pub fn run(ordinal: usize, settings: RampSettings) -> Result<RampTrace> {
    let uuid = crate::device::uuid_without_context(ordinal)?;
    let compiled = crate::device::compile(&crate::kernels::LATENCY, &crate::device::arch_without_context(ordinal)?)?;
    let sampler = Sampler::start(&uuid, Duration::from_millis(5));
    let idle_start = Instant::now();
    std::thread::sleep(settings.idle);
    let idle_end = Instant::now();
    let idle_nvml_mhz = sampler.window(idle_start, idle_end).and_then(|t| t.sm_mhz);
    let gpu = Gpu::open(ordinal)?;
    let gpu = &gpu;
    gpu.load_compiled(&crate::kernels::LATENCY, compiled)?;
    let chaser = Chaser::new(gpu)?;
    let arr = chaser.array(gpu, settings.footprint_bytes, 128)?;
    let f = chaser.function(CacheOp::Cg)?;
    let probes = gpu.alloc_zeros::<u64>(4 * settings.launches, "the per-launch probes")?;
    let t0 = Instant::now();
    for i in 0..settings.launches {
        let slot = probes.slice(4 * i..4 * i + 4);
        let zero = 0u32;
        // SAFETY: chase_cg(const u32*, u32 warm, u32 steps, gb_probe*); the slot holds one probe.
        unsafe {
            gpu.stream()
                .launch_builder(&f)
                .arg(arr.buffer())
                .arg(&zero)
                .arg(&settings.steps)
                .arg(&slot)
                .launch(SINGLE_THREAD)
        }
        .cuda_context(|| "launching the ramp chase".into())?;
    }
    let raw = gpu.download(&probes, "the per-launch probes")?;
    let t_end = Instant::now();
    std::thread::sleep(Duration::from_millis(50));
    let readings = sampler.readings();
    drop(sampler);
    let nvml_after_idle = readings
        .iter()
        .filter(|r| r.at >= idle_end && r.at <= t_end)
        .filter_map(|r| r.sm_mhz.map(|m| ((r.at - idle_end).as_secs_f64() * 1e3, m)))
        .collect();
    let lap = arr.lap();
    let total_ns: f64 = (0..settings.launches).map(|i| raw[4 * i + 1] as f64).sum();
    let mut elapsed_ns = 0.0;
    let mut points = Vec::with_capacity(settings.launches);
    for i in 0..settings.launches {
        let (cycles, ns, count) = (raw[4 * i] as f64, raw[4 * i + 1] as f64, raw[4 * i + 2] as f64);
        elapsed_ns += ns;
        // place the launch on the host timeline in proportion to the GPU time spent so far
        let frac = if total_ns > 0.0 { elapsed_ns / total_ns } else { 0.0 };
        let at = t0 + (t_end - t0).mul_f64(frac);
        let nvml_mhz = summarize(&readings, at, at).sm_mhz;
        points.push(RampPoint {
            launch: i,
            at_ms: (at - t0).as_secs_f64() * 1e3,
            kernel_mhz: if ns > 0.0 { cycles / ns * 1e3 } else { f64::NAN },
            nvml_mhz,
            ns_per_access: ns / count.max(1.0),
            cycles_per_access: cycles / count.max(1.0),
            cold: (i as u64) * (settings.steps as u64) < lap,
        });
    }
    Ok(RampTrace {
        gpu: gpu.identity().name.clone(),
        idle_ms: settings.idle.as_millis() as u64,
        idle_nvml_mhz,
        setup_ms: (t0 - idle_end).as_secs_f64() * 1e3,
        nvml_after_idle,
        steps: settings.steps,
        points,
    })
}

/// How far the raw and normalised figures moved over the warm (L2-hit) launches of the trace.
pub fn summarize_trace(trace: &RampTrace) -> Option<RampSummary> {
    let pts: Vec<&RampPoint> = trace.points.iter().filter(|p| !p.cold).collect();
    let slowest = *pts.iter().min_by(|a, b| a.kernel_mhz.total_cmp(&b.kernel_mhz))?;
    let fastest = *pts.iter().max_by(|a, b| a.kernel_mhz.total_cmp(&b.kernel_mhz))?;
    let spread = |f: &dyn Fn(&RampPoint) -> f64| {
        let s = Summary::of(&pts.iter().map(|p| f(p)).collect::<Vec<_>>());
        100.0 * (s.max / s.min - 1.0)
    };
    Some(RampSummary {
        clock_min_mhz: slowest.kernel_mhz,
        clock_max_mhz: fastest.kernel_mhz,
        ns_at_min_clock: slowest.ns_per_access,
        ns_at_max_clock: fastest.ns_per_access,
        raw_spread_pct: spread(&|p| p.ns_per_access),
        normalized_spread_pct: spread(&|p| p.cycles_per_access),
        cycles_median: Summary::of(&pts.iter().map(|p| p.cycles_per_access).collect::<Vec<_>>()).median,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_contrasts_raw_and_normalised_spread() {
        let points = [(345.0, 287.0), (1200.0, 287.5), (1980.0, 287.2)]
            .iter()
            .enumerate()
            .map(|(i, &(mhz, cyc))| RampPoint {
                launch: i,
                at_ms: i as f64,
                kernel_mhz: mhz,
                nvml_mhz: None,
                ns_per_access: cyc / mhz * 1e3,
                cycles_per_access: cyc,
                cold: false,
            })
            .collect();
        let trace = RampTrace {
            gpu: "x".into(),
            idle_ms: 0,
            idle_nvml_mhz: None,
            setup_ms: 0.0,
            nvml_after_idle: Vec::new(),
            steps: 8,
            points,
        };
        let s = summarize_trace(&trace).unwrap();
        assert_eq!((s.clock_min_mhz, s.clock_max_mhz), (345.0, 1980.0));
        assert!(s.raw_spread_pct > 400.0, "{}", s.raw_spread_pct);
        assert!(s.normalized_spread_pct < 0.2, "{}", s.normalized_spread_pct);
        assert_eq!(s.cycles_median, 287.2);
    }
}
