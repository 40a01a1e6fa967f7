//! `atomics/latency`: dependent chains of shared-memory add and CAS in one thread, cycles per
//! operation. The chain stays in its SM's shared memory, so every SM reads alike; the global
//! chains, whose result depends on the SM, are [`super::global_latency`].
//! Kernels: `atomv_lat_shared_*` of `kernels/atomics_variants.cu`.

use cudarc::driver::{LaunchConfig, PushKernelArg};

use super::variants::{Ctx, LATENCY_OPS, check, latency_sum};
use crate::device::EventTimer;
use crate::error::{CudaResultExt, Result};
use crate::harness::{Bench, Probe, Suite};
use crate::measure::SampleSum;
use crate::placement::Placements;
use crate::results::{Better, ClockDomain};

/// The `latency` benchmark.
pub(super) fn run(suite: &mut Suite, ctx: &Ctx) -> Result<()> {
    let gpu = suite.gpu();
    let mut runs = Vec::new();
    for label in ["shared_add", "shared_cas"] {
        let f = ctx.f(&format!("atomv_lat_{label}"))?;
        runs.push((label, f, Placements::<u32>::new(gpu, 1, 1, "latency words")?, Probe::new(gpu)?));
    }
    let mut bench = Bench::new("latency").param("ops_per_launch", LATENCY_OPS).kernels(&[&ctx.compiled.provenance]);
    for (label, ..) in &runs {
        bench = bench.metric(*label, "cycles", Better::Lower, ClockDomain::Sm);
    }
    let timer = EventTimer::new(gpu.stream())?;
    let one = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
    let mut launches = 0u64;
    suite.bench(bench, |gpu, iters| {
        let mut sum = SampleSum::new();
        timer.start()?;
        for (label, f, words, probe) in runs.iter_mut() {
            // keeps the sink: the failed CAS comparisons of every launch so far
            probe.reset_counters(gpu)?;
            let (mask, n) = (0u32, LATENCY_OPS);
            for _ in 0..iters {
                let copy = words.next_view();
                // SAFETY: atomv_lat_shared_*(u32*, u32 mask, u32 n, gb_probe*) reads and writes
                // the one word of `copy`.
                unsafe { gpu.stream().launch_builder(f).arg(&copy).arg(&mask).arg(&n).arg(probe.buffer()).launch(one) }
                    .cuda_context(|| format!("launching atomv_lat_{label}"))?;
            }
            let r = probe.read(gpu)?;
            sum.push(if r.count > 0 { r.cycles as f64 / r.count as f64 } else { f64::NAN });
            sum.clock(r.clock());
        }
        launches += iters;
        Ok(sum.finish_after(timer.stop_ns()?))
    })?;
    let gpu = suite.gpu();
    for (label, _, words, probe) in &runs {
        let failed = probe.read(gpu)?.sink;
        let expected = latency_sum(1, LATENCY_OPS as u64, launches, failed);
        check(&format!("atomics/latency/{label}"), ctx.sum_copies(gpu, "u32", words)?, expected)?;
    }
    Ok(())
}
