//! `atomics/shared_add`: shared-memory atomicAdd, k threads per word, ops per clock per SM:
//! the mean over SMs of each SM's rate (per-SM windows), each SM's rate kept as a chip map.
//! Kernels: `atomv_shared` and `atomv_fold` of `kernels/atomics_variants.cu`.
//!
//! Each setting's operations per thread are the least power of two times its base that makes
//! an SM's window last [`launch_size::MIN_WINDOW_CYCLES`], measured on one window before the
//! samples and recorded as a chosen setting: at every thread of a block on one word, the base
//! work made windows of about 5.1k cycles on an H200, where the empty clock bracket is 0.3 %.
//!
//! The mean, not the median: at one and two threads per word the SMs of a card run at a few
//! distinct rates (H100: most SMs within a few percent of each other, in one or two groups
//! about 10 % apart, and a tenth of them 30-50 % faster; a few up to 2.9 times), and how many
//! SMs fall in each group differs from card to card. The median lands in one group or
//! another, so cards differed by up to 10 % on it; the mean over SMs agreed within a few
//! tenths of a percent on the cards measured (`results/*/atomics-sm-maps-2026-11-25.md`).

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::variants::{Ctx, SHARED_K, check, iters_for, k_label, zeros};
use crate::device::EventTimer;
use crate::error::{CudaResultExt, Result};
use crate::harness::{Bench, Suite};
use crate::measure::per_sm::{self, Residency, SmWindows};
use crate::measure::{SampleSum, launch_size};
use crate::results::{Better, ClockDomain};

/// The `shared_add` benchmark.
pub(super) fn run(suite: &mut Suite, ctx: &Ctx) -> Result<()> {
    let gpu = suite.gpu();
    let identity = gpu.identity().clone();
    let f = ctx.f("atomv_shared")?;
    let fold = ctx.f("atomv_fold")?;
    let residency = Residency::new(identity.max_threads_per_sm / identity.warp_size, identity.warp_size);
    let smem = residency.threads_per_block * 4;
    let residency = if residency.fits(&f, smem)? { residency } else { Residency::new(32, identity.warp_size) };
    let cfg = residency.launch(&identity, smem);
    let threads = cfg.grid_dim.0 as u64 * cfg.block_dim.0 as u64;
    let timer = EventTimer::new(gpu.stream())?;
    let launch = |gpu: &crate::device::Gpu, w: &SmWindows, k: u32, iters: u32, total: &CudaSlice<u64>| {
        let slots = w.slots();
        // SAFETY: atomv_shared(u32 k, u32 iters, gb_sm_window*, u32, unsigned long long*) with
        // blockDim words of dynamic shared memory.
        unsafe {
            gpu.stream().launch_builder(&f).arg(&k).arg(&iters).arg(w.buffer()).arg(&slots).arg(total).launch(cfg)
        }
        .cuda_context(|| "launching atomv_shared".into())?;
        Ok::<(), crate::error::Error>(())
    };
    let mut runs = Vec::new();
    for k in SHARED_K {
        let kk = if k == 0 { residency.threads_per_block } else { k };
        let base = iters_for(kk as u64).max(16) * 4;
        // One window at the base work, then the least power of two more that makes each SM's
        // window last MIN_WINDOW_CYCLES: a block's threads on one word take ~25 times longer per
        // operation than a word per thread.
        let mut windows = SmWindows::new(gpu, fold.clone())?;
        let probe = zeros::<u64>(gpu, 1, "the shared-atomic total")?;
        let what = format!("sizing atomics/shared_add/{}", k_label(k));
        let (_, totals) = per_sm::sample(gpu, &mut windows, &timer, 1, threads * base as u64, &what, |gpu, w| {
            launch(gpu, w, kk, base, &probe)
        })?;
        let scale = launch_size::window_scale(totals.mean_window_cycles().unwrap_or(f64::NAN));
        runs.push((
            k_label(k),
            kk,
            base.saturating_mul(scale),
            windows,
            zeros::<u64>(gpu, 1, "the shared-atomic total")?,
        ));
    }
    let mut bench = Bench::new("shared_add")
        .param("over_sms", "mean")
        .param("threads_per_block", residency.threads_per_block)
        .param("blocks", cfg.grid_dim.0)
        .param(launch_size::WINDOW_PARAM, launch_size::scaled_window(launch_size::MIN_WINDOW_CYCLES))
        .kernels(&[&ctx.compiled.provenance]);
    for (label, _, iters, ..) in &runs {
        bench = bench.chosen(&format!("{label}_atomics_per_thread"), *iters).metric(
            label.clone(),
            "op/clk/SM",
            Better::Higher,
            ClockDomain::Sm,
        );
    }
    let mut launches = 0u64;
    suite.bench(bench, |gpu, n| {
        let mut sum = SampleSum::new();
        for (label, k, iters, windows, total) in runs.iter_mut() {
            let work = threads * *iters as u64;
            let what = format!("atomics/shared_add/{label}");
            let (t, totals) =
                per_sm::sample(gpu, windows, &timer, n, work, &what, |gpu, w| launch(gpu, w, *k, *iters, total))?;
            sum.add(t, totals.clock());
            sum.push(totals.rate_per_clock().map(|r| r.mean).unwrap_or(f64::NAN));
            sum.sm_values(totals.per_clock_by_sm());
        }
        launches += n;
        Ok(sum.finish())
    })?;
    let gpu = suite.gpu();
    for (label, _, iters, _, total) in &runs {
        let got = gpu.download(total, "the shared-atomic total")?[0];
        check(&format!("atomics/shared_add/{label}"), got, threads * *iters as u64 * launches)?;
    }
    Ok(())
}
