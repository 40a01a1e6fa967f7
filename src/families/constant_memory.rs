//! Constant memory (Kolpakova): a `__constant__` table read uniformly (a warp on one word, served
//! by one broadcast) and divergently (a warp on 32 words, served one address at a time), as
//! thread loads per clock per SM (per-SM windows) and as the latency of a dependent chase in one
//! warp. Kernels: `kernels/constant_memory.cu`.

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use crate::device::{CompiledKernels, EventTimer, Gpu};
use crate::error::{CudaResultExt, Error, Result};
use crate::harness::{Bench, Probe, Suite};
use crate::kernels;
use crate::measure::SampleSum;
use crate::measure::launch_size;
use crate::measure::per_sm::{self, Residency, SmWindows};
use crate::results::{Better, ClockDomain};

/// Words of the table (`CMEM_WORDS`).
pub const WORDS: u32 = 256;
/// Loads per round per thread (`CMEM_ILP`).
pub const ILP: u32 = 4;
/// Warps per SM of the throughput runs.
pub const WARPS_PER_SM: u32 = 32;
/// Lane strides: 0 puts a warp on one word, 33 (odd) on 32 distinct words.
pub const ACCESSES: [(&str, u32); 2] = [("uniform", 0), ("divergent", 33)];
/// Cycles a uniform throughput launch aims at (divergent ones take up to 32 times longer): a
/// quarter of `launch_size::MIN_WINDOW_CYCLES`, whose fixed cost per window is then 0.04 %.
pub const TARGET_CYCLES: u64 = launch_size::MIN_WINDOW_CYCLES / 4;
/// Thread loads per clock per SM assumed for sizing: one warp broadcast per clock.
pub const SIZING_RATE: f64 = 32.0;
/// Dependent loads per latency launch.
pub const LATENCY_STEPS: u32 = 4096;
/// Value no result is compared equal to in practice.
pub const SENTINEL: u32 = 0x9e37_79b9;

/// The table: t[i] = (5 i + 1) mod WORDS, one cycle through all words.
pub fn table() -> Vec<u32> {
    (0..WORDS).map(|i| (5 * i + 1) % WORDS).collect()
}

/// Distinct words the lanes of a warp start on for a lane stride.
pub fn distinct_words(lane_stride: u32, lanes: u32) -> usize {
    let mut w: Vec<u32> = (0..lanes).map(|l| (l * lane_stride) % WORDS).collect();
    w.sort_unstable();
    w.dedup();
    w.len()
}

fn upload_table(gpu: &Gpu, compiled: &CompiledKernels) -> Result<()> {
    let t = table();
    let mut symbol = compiled
        .module()
        .get_global("cmem_table", gpu.stream())
        .cuda_context(|| "finding the constant table".into())?;
    if symbol.len() != t.len() * 4 {
        return Err(Error::Verification {
            what: "constant_memory".into(),
            detail: format!("the constant table holds {} bytes, expected {}", symbol.len(), t.len() * 4),
        });
    }
    // SAFETY: the symbol is WORDS u32 words long (checked above).
    let mut words = unsafe { symbol.transmute_mut::<u32>(t.len()) }.ok_or_else(|| Error::Verification {
        what: "constant_memory".into(),
        detail: "the constant table is not word-sized".into(),
    })?;
    gpu.stream().memcpy_htod(&t, &mut words).cuda_context(|| "writing the constant table".into())?;
    Ok(())
}

struct Throughput {
    label: &'static str,
    lane_stride: u32,
    rounds: u32,
    windows: SmWindows,
}

/// The constant-memory family: `constant_memory/throughput` and `constant_memory/latency`.
pub fn run(suite: &mut Suite) -> Result<()> {
    if !suite.wants("throughput") && !suite.wants("latency") {
        return Ok(());
    }
    let gpu = suite.gpu();
    let identity = gpu.identity().clone();
    let compiled = gpu.kernels(&kernels::CONSTANT_MEMORY)?;
    upload_table(gpu, &compiled)?;
    let sink: CudaSlice<u32> = gpu.alloc_zeros(identity.sm_count as usize * 2048, "the result sink")?;

    if suite.wants("throughput") {
        let gpu = suite.gpu();
        let f: CudaFunction = compiled.function("cmem_throughput")?;
        let fold = compiled.function("cmem_fold")?;
        let residency = Residency::new(WARPS_PER_SM, identity.warp_size);
        let cfg = residency.launch(&identity, 0);
        let rounds = per_sm::rounds_for(
            launch_size::scaled_window(TARGET_CYCLES),
            SIZING_RATE,
            WARPS_PER_SM,
            (ILP * identity.warp_size) as u64,
            4,
        );
        let mut runs = ACCESSES
            .iter()
            .map(|&(label, lane_stride)| {
                Ok(Throughput { label, lane_stride, rounds, windows: SmWindows::new(gpu, fold.clone())? })
            })
            .collect::<Result<Vec<_>>>()?;
        let warps = identity.sm_count as u64 * WARPS_PER_SM as u64;
        let work = warps * rounds as u64 * ILP as u64 * identity.warp_size as u64;
        let mut bench = Bench::new("throughput")
            .param("table_bytes", WORDS * 4)
            .param("warps_per_sm", WARPS_PER_SM)
            .param("ilp", ILP)
            .param(launch_size::WINDOW_PARAM, launch_size::scaled_window(TARGET_CYCLES))
            .kernels(&[&compiled.provenance]);
        for (label, stride) in ACCESSES {
            bench = bench
                .param(&format!("{label}_words_per_warp"), distinct_words(stride, identity.warp_size) as u64)
                .metric(label, "loads/clk/SM", Better::Higher, ClockDomain::Sm);
        }
        bench = bench.metric("divergent_slowdown", "x", Better::Lower, ClockDomain::Sm);
        let timer = EventTimer::new(gpu.stream())?;
        suite.bench(bench, |gpu, iters| {
            let mut sum = SampleSum::new();
            for r in runs.iter_mut() {
                let what = format!("constant_memory/{}", r.label);
                let (lane_stride, rounds) = (r.lane_stride, r.rounds);
                let (t, totals) = per_sm::sample(gpu, &mut r.windows, &timer, iters, work, &what, |gpu, w| {
                    let (zmask, slots) = (0u32, w.slots());
                    // SAFETY: cmem_throughput(u32, u32, u32, gb_sm_window*, u32, u32*, u32); the
                    // sink holds a word per thread of the grid.
                    unsafe {
                        gpu.stream()
                            .launch_builder(&f)
                            .arg(&lane_stride)
                            .arg(&zmask)
                            .arg(&rounds)
                            .arg(w.buffer())
                            .arg(&slots)
                            .arg(&sink)
                            .arg(&SENTINEL)
                            .launch(cfg)
                    }
                    .cuda_context(|| "launching cmem_throughput".into())?;
                    Ok(())
                })?;
                sum.add(t, totals.clock());
                sum.push(totals.rate_per_clock().map(|r| r.median).unwrap_or(f64::NAN));
            }
            sum.push(sum.values()[0] / sum.values()[1]);
            Ok(sum.finish())
        })?;
    }

    if suite.wants("latency") {
        let gpu = suite.gpu();
        let f = compiled.function("cmem_latency")?;
        let mut probes = ACCESSES.iter().map(|_| Probe::new(gpu)).collect::<Result<Vec<_>>>()?;
        let one_warp = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (identity.warp_size, 1, 1), shared_mem_bytes: 0 };
        let mut bench = Bench::new("latency").param("steps_per_launch", LATENCY_STEPS).kernels(&[&compiled.provenance]);
        for (label, _) in ACCESSES {
            bench = bench.metric(label, "cycles", Better::Lower, ClockDomain::Sm);
        }
        let timer = EventTimer::new(gpu.stream())?;
        suite.bench(bench, |gpu, iters| {
            let mut sum = SampleSum::new();
            timer.start()?;
            for ((_, lane_stride), probe) in ACCESSES.iter().zip(probes.iter_mut()) {
                probe.reset_counters(gpu)?;
                for _ in 0..iters {
                    // SAFETY: cmem_latency(u32, u32, gb_probe*, u32*, u32); one warp.
                    unsafe {
                        gpu.stream()
                            .launch_builder(&f)
                            .arg(lane_stride)
                            .arg(&LATENCY_STEPS)
                            .arg(probe.buffer())
                            .arg(&sink)
                            .arg(&SENTINEL)
                            .launch(one_warp)
                    }
                    .cuda_context(|| "launching cmem_latency".into())?;
                }
                let r = probe.read(gpu)?;
                sum.push(if r.count > 0 { r.cycles as f64 / r.count as f64 } else { f64::NAN });
                sum.clock(r.clock());
            }
            Ok(sum.finish_after(timer.stop_ns()?))
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_one_cycle_through_every_word() {
        let t = table();
        let mut j = 0u32;
        let mut seen = vec![false; WORDS as usize];
        for _ in 0..WORDS {
            assert!(!seen[j as usize], "word {j} visited twice");
            seen[j as usize] = true;
            j = t[j as usize];
        }
        assert_eq!(j, 0);
        assert!(seen.iter().all(|s| *s));
    }

    #[test]
    fn uniform_is_one_word_and_divergent_is_32() {
        assert_eq!(distinct_words(0, 32), 1);
        assert_eq!(distinct_words(33, 32), 32);
        // an even stride would fold lanes onto fewer words
        assert_eq!(distinct_words(128, 32), 2);
    }

    #[test]
    fn host_constants_match_the_kernel() {
        use crate::families::kernel_define;
        assert_eq!(kernel_define(&kernels::CONSTANT_MEMORY, "CMEM_WORDS"), Some(WORDS as u64));
        assert_eq!(kernel_define(&kernels::CONSTANT_MEMORY, "CMEM_ILP"), Some(ILP as u64));
    }
}
