//! The cost of register spilling (Kolpakova): one computation that keeps 64 floats live, compiled
//! without a register cap and under caps that force values into local memory; FMAs per clock
//! per SM (per-SM windows) of each, all at the same residency, and the slowdown of the capped
//! ones. The results must be equal bit for bit. Kernels: `kernels/spilling.cu`.

use cudarc::driver::{CudaFunction, CudaSlice, PushKernelArg};

use crate::device::EventTimer;
use crate::error::{CudaResultExt, Error, Result};
use crate::harness::{Bench, Profile, Suite};
use crate::kernels;
use crate::measure::SampleSum;
use crate::measure::launch_size;
use crate::measure::per_sm::{self, Residency, SmWindows};
use crate::results::{Better, ClockDomain};

/// Values each thread keeps live (`SPILL_N`).
pub const LIVE_VALUES: u32 = 64;
/// Threads per block (`__launch_bounds__(256, B)`).
pub const THREADS: u32 = 256;
/// Kernels: name and the register cap its launch bounds impose (None: no cap).
pub const VARIANTS: [(&str, Option<u32>); 6] = [
    ("none", None),
    ("regs128", Some(128)),
    ("regs64", Some(64)),
    ("regs51", Some(51)),
    ("regs42", Some(42)),
    ("regs32", Some(32)),
];
/// Variants of the regression set.
pub const REGRESSION: [&str; 2] = ["none", "regs32"];
/// Cycles a launch of the uncapped kernel aims at (`launch_size::MIN_WINDOW_CYCLES`).
pub const TARGET_CYCLES: u64 = launch_size::MIN_WINDOW_CYCLES;
/// FMAs per clock per SM assumed for sizing (the FP32 rate of recent parts).
pub const SIZING_RATE: f64 = 128.0;

/// Register cap of `__launch_bounds__(threads, blocks)` on a file of `regs_per_sm` registers.
pub fn cap_for(regs_per_sm: u32, threads: u32, blocks: u32) -> u32 {
    regs_per_sm / (threads * blocks).max(1)
}

/// Whether a kernel that must spill does: the uncapped build needs more registers than the cap
/// allows, and the capped build stays within it.
pub fn spills(uncapped_regs: u32, capped_regs: u32, cap: u32) -> bool {
    uncapped_regs > cap && capped_regs <= cap
}

struct Variant {
    label: &'static str,
    cap: Option<u32>,
    f: CudaFunction,
    regs: u32,
    local_bytes: u32,
    out: Option<CudaSlice<f32>>,
    windows: SmWindows,
}

/// The spilling family: `spilling/fma_ring` (no cap and a 32-register cap; all caps under the
/// full profile).
pub fn run(suite: &mut Suite) -> Result<()> {
    if !suite.wants("fma_ring") {
        return Ok(());
    }
    let full = suite.profile() == Profile::Full;
    let gpu = suite.gpu();
    let identity = gpu.identity().clone();
    let compiled = gpu.kernels(&kernels::SPILLING)?;
    let fold = compiled.function("spill_fold")?;
    let mut variants = Vec::new();
    let mut residency: Option<Residency> = None;
    for (label, cap) in VARIANTS {
        if !full && !REGRESSION.contains(&label) {
            continue;
        }
        let f = compiled.function(&format!("spill_{label}"))?;
        let regs = f.num_regs().cuda_context(|| "reading a kernel's register count".into())? as u32;
        let local_bytes = f.local_size_bytes().cuda_context(|| "reading a kernel's local memory".into())? as u32;
        let per_sm = f
            .occupancy_max_active_blocks_per_multiprocessor(THREADS, 0, None)
            .cuda_context(|| "asking the driver for a kernel's occupancy".into())?;
        let r = Residency {
            warps_per_sm: per_sm * THREADS / identity.warp_size,
            threads_per_block: THREADS,
            blocks_per_sm: per_sm,
        };
        residency = Some(match residency {
            Some(old) if old.blocks_per_sm <= r.blocks_per_sm => old,
            _ => r,
        });
        variants.push(Variant {
            label,
            cap,
            f,
            regs,
            local_bytes,
            out: None,
            windows: SmWindows::new(gpu, fold.clone())?,
        });
    }
    let residency = residency.filter(|r| r.blocks_per_sm > 0).ok_or_else(|| Error::Verification {
        what: "spilling/fma_ring".into(),
        detail: "no variant fits on an SM".into(),
    })?;
    let uncapped = variants.iter().find(|v| v.cap.is_none()).map(|v| v.regs).unwrap_or(0);
    for v in &variants {
        if let Some(cap) = v.cap.filter(|cap| *cap < LIVE_VALUES && !spills(uncapped, v.regs, *cap)) {
            return Err(Error::Verification {
                what: format!("spilling/{}", v.label),
                detail: format!(
                    "expected a spilling build: uncapped {uncapped} registers, capped {} for a cap of {cap}",
                    v.regs
                ),
            });
        }
    }
    let cfg = residency.launch(&identity, 0);
    let threads = cfg.grid_dim.0 as usize * THREADS as usize;
    for v in variants.iter_mut() {
        v.out = Some(gpu.alloc_zeros::<f32>(threads, "a spill output")?);
    }
    let rounds = per_sm::rounds_for(
        launch_size::scaled_window(TARGET_CYCLES),
        SIZING_RATE,
        residency.warps_per_sm,
        (LIVE_VALUES * identity.warp_size) as u64,
        1,
    );
    let warps = identity.sm_count as u64 * residency.warps_per_sm as u64;
    let work = warps * rounds as u64 * LIVE_VALUES as u64 * identity.warp_size as u64;
    let a: f32 = 0.999;
    let mut bench = Bench::new("fma_ring")
        .param("live_values", LIVE_VALUES)
        .param("threads_per_block", THREADS)
        .param("warps_per_sm", residency.warps_per_sm)
        .param("rounds_per_launch", rounds)
        .param(launch_size::WINDOW_PARAM, launch_size::scaled_window(TARGET_CYCLES))
        .kernels(&[&compiled.provenance]);
    for v in &variants {
        bench = bench
            .param(&format!("{}_registers", v.label), v.regs)
            .param(&format!("{}_local_bytes", v.label), v.local_bytes)
            .metric(v.label, "op/clk/SM", Better::Higher, ClockDomain::Sm);
    }
    for v in variants.iter().filter(|v| v.cap.is_some()) {
        bench = bench.metric(format!("{}_slowdown", v.label), "x", Better::Lower, ClockDomain::Sm);
    }
    let timer = EventTimer::new(gpu.stream())?;
    suite.bench(bench, |gpu, iters| {
        let mut sum = SampleSum::new();
        for v in variants.iter_mut() {
            let what = format!("spilling/{}", v.label);
            let (f, out) = (&v.f, v.out.as_ref().expect("allocated above"));
            let (t, totals) = per_sm::sample(gpu, &mut v.windows, &timer, iters, work, &what, |gpu, w| {
                let slots = w.slots();
                // SAFETY: spill_*(float, u32, float*, gb_sm_window*, u32); `out` holds a float
                // per thread of the grid.
                unsafe {
                    gpu.stream().launch_builder(f).arg(&a).arg(&rounds).arg(out).arg(w.buffer()).arg(&slots).launch(cfg)
                }
                .cuda_context(|| "launching a spilling kernel".into())?;
                Ok(())
            })?;
            sum.add(t, totals.clock());
            sum.push(totals.rate_per_clock().map(|r| r.median).unwrap_or(f64::NAN));
        }
        let base = sum.values()[0];
        let slowdowns: Vec<f64> = sum.values()[1..].iter().map(|r| base / r).collect();
        sum.extend(slowdowns);
        Ok(sum.finish())
    })?;
    // every build computed the same floats
    let gpu = suite.gpu();
    let outputs = variants
        .iter()
        .map(|v| v.out.as_ref().map(|o| gpu.download(o, "the spill outputs")).transpose())
        .collect::<Result<Vec<_>>>()?;
    let reference = outputs[0].as_deref().unwrap_or_default();
    for (v, got) in variants.iter().zip(&outputs).skip(1) {
        let got = got.as_deref().unwrap_or_default();
        if let Some(i) = reference.iter().zip(got.iter()).position(|(a, b)| a.to_bits() != b.to_bits()) {
            return Err(Error::Verification {
                what: format!("spilling/{}", v.label),
                detail: format!("thread {i} computed {} where the uncapped build computed {}", got[i], reference[i]),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_bounds_caps_follow_the_register_file() {
        // 64 Ki registers, 256 threads: 1 block -> 256 (the hardware cap is 255), 8 blocks -> 32
        assert_eq!(cap_for(65536, 256, 8), 32);
        assert_eq!(cap_for(65536, 256, 4), 64);
        assert_eq!(cap_for(65536, 256, 5), 51);
        assert_eq!(cap_for(65536, 256, 6), 42);
        assert_eq!(cap_for(65536, 256, 2), 128);
    }

    #[test]
    fn a_spilling_build_is_recognised_by_its_register_counts() {
        assert!(spills(74, 32, 32));
        assert!(!spills(30, 30, 32), "fits without spilling");
        assert!(!spills(74, 40, 32), "the cap was not applied");
    }

    #[test]
    fn variant_caps_match_the_kernel_launch_bounds() {
        // __launch_bounds__(256, B) for B = 2, 4, 5, 6, 8 in kernels/spilling.cu
        let caps: Vec<u32> = VARIANTS.iter().filter_map(|(_, c)| *c).collect();
        let bounds: Vec<u32> = [2, 4, 5, 6, 8].iter().map(|b| cap_for(65536, THREADS, *b)).collect();
        assert_eq!(caps, bounds);
        for (label, cap) in VARIANTS.iter().filter_map(|(l, c)| c.map(|c| (l, c))) {
            assert_eq!(*label, format!("regs{cap}"));
        }
    }

    #[test]
    fn host_constants_match_the_kernel() {
        use crate::families::kernel_define;
        assert_eq!(kernel_define(&kernels::SPILLING, "SPILL_N"), Some(LIVE_VALUES as u64));
        for (label, _) in VARIANTS {
            assert!(kernels::SPILLING.text.contains(&format!("GB_SPILL_KERNEL(spill_{label},")), "{label}");
        }
    }
}
