//! Shared-memory latency under bank conflicts: Qiu et al.'s table of threads x stride, in cycles
//! per access. One benchmark per thread count; each sample runs every stride.

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg, sys::CUfunction_attribute};

use crate::device::EventTimer;
use crate::error::{CudaResultExt, Result};
use crate::harness::{Bench, Probe, Profile, Sample, Suite};
use crate::kernels;
use crate::results::{Better, ClockDomain, GpuIdentity};

/// Strides of the table, in 4-byte words.
pub const STRIDES: [u32; 6] = [1, 2, 4, 8, 16, 32];

/// Block sizes of the table.
pub fn thread_counts(profile: Profile) -> Vec<u32> {
    match profile {
        Profile::Default | Profile::Full => (0..=10).map(|k| 1u32 << k).collect(),
        Profile::Quick => vec![1, 32, 1024],
    }
}

/// Words of the chase array: the largest power of two that fits the block's opt-in shared
/// memory, up to 32768 (enough for 1024 threads x stride 32 without wrapping).
pub fn array_words(gpu: &GpuIdentity) -> u32 {
    let words = (gpu.smem_per_block_optin / 4).clamp(1, 32768) as u32;
    1 << (31 - words.leading_zeros())
}

/// Strides whose threads x stride fits the array without wrapping onto other threads' words.
pub fn strides_for(threads: u32, words: u32) -> Vec<u32> {
    STRIDES.iter().copied().filter(|s| threads as u64 * *s as u64 <= words as u64).collect()
}

/// The ways of bank conflict a stride causes among `threads` threads of one warp on a memory of
/// `banks` 4-byte banks: how many of the warp's threads share the busiest bank.
pub fn conflict_ways(threads: u32, stride: u32, banks: u32) -> u32 {
    let warp = threads.min(32);
    let mut per_bank = vec![0u32; banks as usize];
    for t in 0..warp {
        per_bank[((t * stride) % banks) as usize] += 1;
    }
    per_bank.into_iter().max().unwrap_or(0)
}

struct StrideRun {
    stride: u32,
    probe: Probe,
    max_cycles: CudaSlice<u64>,
}

/// The bank-conflict family: `shared_banks/threads=<T>`, metrics `stride=<S>` in cycles.
pub fn run(suite: &mut Suite) -> Result<()> {
    let gpu = suite.gpu();
    let compiled = gpu.kernels(&kernels::SHARED_BANKS)?;
    let f: CudaFunction = compiled.function("smem_chase")?;
    let words = array_words(gpu.identity());
    let smem_bytes = words * 4;
    f.set_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem_bytes as i32)
        .cuda_context(|| format!("allowing {smem_bytes} bytes of dynamic shared memory"))?;
    let steps: u32 = 1024;
    for threads in thread_counts(suite.profile()) {
        let name = format!("threads={threads}");
        if !suite.wants(&name) {
            continue;
        }
        let gpu = suite.gpu();
        let strides = strides_for(threads, words);
        let mut runs = Vec::new();
        for &stride in &strides {
            runs.push(StrideRun {
                stride,
                probe: Probe::new(gpu)?,
                max_cycles: gpu.alloc_zeros::<u64>(1, "the max-cycles counter")?,
            });
        }
        let timer = EventTimer::new(gpu.stream())?;
        let mut clock_probe = Probe::new(gpu)?;
        let mut bench = Bench::new(name)
            .param("threads", threads)
            .param("array_words", words)
            .param("steps", steps)
            .kernels(&[&compiled.provenance]);
        for s in &strides {
            bench = bench.metric(format!("stride={s}"), "cycles", Better::Lower, ClockDomain::Sm);
        }
        let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: smem_bytes };
        suite.bench(bench, |gpu, iters| {
            for r in runs.iter_mut() {
                r.probe.set(gpu, 0)?;
            }
            clock_probe.set(gpu, 0)?;
            timer.start()?;
            for _ in 0..iters {
                for r in &runs {
                    // SAFETY: smem_chase(u32, u32, u32, gb_probe*, u64*, gb_probe*); all indices < words.
                    unsafe {
                        gpu.stream()
                            .launch_builder(&f)
                            .arg(&r.stride)
                            .arg(&words)
                            .arg(&steps)
                            .arg(r.probe.buffer())
                            .arg(&r.max_cycles)
                            .arg(clock_probe.buffer())
                            .launch(cfg)
                    }
                    .cuda_context(|| "launching smem_chase".into())?;
                }
            }
            let elapsed = timer.stop_ns()?;
            let mut values = Vec::with_capacity(runs.len());
            for r in &runs {
                let p = r.probe.read(gpu)?;
                values.push(if p.count > 0 { p.cycles as f64 / p.count as f64 } else { f64::NAN });
            }
            Ok(Sample::clocked(elapsed, values, clock_probe.read(gpu)?.clock()))
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_seed_002s_rows_and_columns() {
        assert_eq!(thread_counts(Profile::Default), vec![1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]);
        assert_eq!(STRIDES, [1, 2, 4, 8, 16, 32]);
    }

    #[test]
    fn array_fits_the_opt_in_shared_memory() {
        let mut g = crate::families::test_identity();
        assert_eq!(array_words(&g), 32768); // 227 KiB opt-in: capped at 128 KiB
        g.smem_per_block_optin = 99 << 10; // consumer parts
        assert_eq!(array_words(&g), 16384);
        g.smem_per_block_optin = 48 << 10;
        assert_eq!(array_words(&g), 8192);
    }

    #[test]
    fn cells_that_would_wrap_are_left_out() {
        assert_eq!(strides_for(1024, 32768), STRIDES.to_vec());
        assert_eq!(strides_for(1024, 16384), vec![1, 2, 4, 8, 16]);
        assert_eq!(strides_for(32, 8192), STRIDES.to_vec());
    }

    #[test]
    fn conflict_ways_match_seed_002s_diagonal() {
        // 32 threads: stride 2^k gives 2^k-way conflicts on 32 banks
        let ways: Vec<u32> = STRIDES.iter().map(|&s| conflict_ways(32, s, 32)).collect();
        assert_eq!(ways, vec![1, 2, 4, 8, 16, 32]);
        // 8 threads at stride 32: all in bank 0, 8-way
        assert_eq!(conflict_ways(8, 32, 32), 8);
        // odd strides never conflict
        assert_eq!(conflict_ways(32, 3, 32), 1);
    }
}
