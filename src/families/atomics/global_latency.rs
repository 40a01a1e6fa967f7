//! `atomics/global_latency`: dependent chains of global atomicAdd and atomicCAS, one thread on
//! every SM at once, each walking lines of its own; cycles per operation, the mean over SMs, with
//! each SM's latency kept as a chip map. Kernels: `atomv_lat_sm_global_*` of
//! `kernels/atomics_variants.cu`.
//!
//! Every SM, not one: a single chain runs on whichever SM the scheduler picks, the same one run
//! after run on a card, and carries that SM's distance to the L2. On H100 the cards' one-SM
//! chains differed by up to 6 % (sd 1.3 % over 34 cards) where each card's runs agreed within
//! 0.1 % (docs, "What it measures").

use cudarc::driver::PushKernelArg;

use super::variants::{Ctx, LATENCY_LINES, LATENCY_OPS, LATENCY_STRIDE, check, latency_sum};
use crate::device::EventTimer;
use crate::error::{CudaResultExt, Result};
use crate::harness::{Bench, Suite};
use crate::measure::SampleSum;
use crate::placement::{Placements, SmClaims, SmLatencies, SmProbes, placement_count};
use crate::results::{Better, ClockDomain};

/// Copies of the every-SM chain words (each holds every SM's lines); launches rotate over them.
pub const GLOBAL_LATENCY_PLACEMENTS: u64 = 16;

/// Mean over SMs of per-SM values (NaN when there are none).
pub fn mean_over_sms(per_sm: &[(u32, f64)]) -> f64 {
    if per_sm.is_empty() { f64::NAN } else { per_sm.iter().map(|p| p.1).sum::<f64>() / per_sm.len() as f64 }
}

/// One chain kind: its label, kernel, words, probes and claims, and the chains it completed.
struct Chain {
    label: &'static str,
    f: cudarc::driver::CudaFunction,
    words: Placements<u32>,
    probes: SmProbes,
    claims: SmClaims,
    chains: u64,
}

/// The `global_latency` benchmark.
pub(super) fn run(suite: &mut Suite, ctx: &Ctx) -> Result<()> {
    let gpu = suite.gpu();
    let copies = placement_count(GLOBAL_LATENCY_PLACEMENTS);
    let mut chains = Vec::new();
    for label in ["add", "cas"] {
        let claims = SmClaims::new(gpu)?;
        let words_per_copy = claims.slots() as u64 * LATENCY_LINES * LATENCY_STRIDE;
        chains.push(Chain {
            label,
            f: ctx.f(&format!("atomv_lat_sm_global_{label}"))?,
            words: Placements::<u32>::new(gpu, words_per_copy, copies, "latency words")?,
            probes: SmProbes::new(gpu, claims.slots())?,
            claims,
            chains: 0,
        });
    }
    let mut bench = Bench::new("global_latency")
        .param("over_sms", "mean")
        .param("placement", "every SM at once")
        .param("ops_per_launch", LATENCY_OPS)
        .param("lines_per_sm", LATENCY_LINES)
        .placements(copies)
        .kernels(&[&ctx.compiled.provenance]);
    for c in &chains {
        bench = bench.metric(c.label, "cycles", Better::Lower, ClockDomain::Sm);
    }
    let timer = EventTimer::new(gpu.stream())?;
    suite.bench(bench, |gpu, iters| {
        let mut sum = SampleSum::new();
        timer.start()?;
        for c in chains.iter_mut() {
            // keeps the sinks: the failed CAS comparisons of every launch so far
            c.probes.reset_counters(gpu)?;
            let (mask, n, slots) = (0u32, LATENCY_OPS, c.claims.slots());
            for _ in 0..iters {
                let launch = c.claims.next_launch();
                let grid = c.claims.grid();
                let copy = c.words.next_view();
                // SAFETY: atomv_lat_sm_global_*(u32*, u32 mask, u32 n, gb_probe*, u32* claims,
                // u32 slots, u32 launch): SM s (< slots) walks words [s L S, (s + 1) L S) of the
                // copy, which holds slots L S words, and writes probe and claim s.
                unsafe {
                    gpu.stream()
                        .launch_builder(&c.f)
                        .arg(&copy)
                        .arg(&mask)
                        .arg(&n)
                        .arg(c.probes.buffer())
                        .arg(c.claims.buffer())
                        .arg(&slots)
                        .arg(&launch)
                        .launch(grid)
                }
                .cuda_context(|| format!("launching atomv_lat_sm_global_{}", c.label))?;
            }
            let readings = c.probes.read(gpu)?;
            c.chains += readings.iter().map(|r| r.reading.count / LATENCY_OPS as u64).sum::<u64>();
            let lat = SmLatencies::from_readings(&readings);
            sum.push(mean_over_sms(&lat.cycles));
            sum.sm_values(lat.cycles);
            sum.clock(lat.clock);
        }
        Ok(sum.finish_after(timer.stop_ns()?))
    })?;
    let gpu = suite.gpu();
    for c in &chains {
        let failed: u64 = c.probes.read(gpu)?.iter().map(|r| r.reading.sink).sum();
        let expected = latency_sum(LATENCY_LINES, LATENCY_OPS as u64, c.chains, failed);
        check(&format!("atomics/global_latency/{}", c.label), ctx.sum_copies(gpu, "u32", &c.words)?, expected)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_over_sms_weighs_every_sm_once() {
        assert!(mean_over_sms(&[]).is_nan());
        assert_eq!(mean_over_sms(&[(0, 400.0), (7, 440.0), (131, 420.0)]), 420.0);
    }
}
