//! Global atomic throughput (Kolpakova): atomicAdd from a full grid on one address, on the words
//! of one 32-byte sector, of one 128-byte line, and on a distinct word per thread.
//!
//! Which L2 slices a few addresses hash to moves their throughput by several percent from one
//! allocation to the next, so every target has [`DEFAULT_PLACEMENTS`] copies spread over pages
//! and each launch uses the next one: a sample averages over placements.

use cudarc::driver::{CudaView, PushKernelArg};

use super::batch;
use crate::device::{EventTimer, Gpu};
use crate::error::{CudaResultExt, Error, Result};
use crate::families::full_grid;
use crate::harness::{Bench, Probe, Profile, Sample, Suite};
use crate::kernels;
use crate::measure::launch_size;
use crate::placement::{DEFAULT_PLACEMENTS, Placements};

/// Which addresses the grid's atomics hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Every thread on one word.
    SameAddress,
    /// Eight words of one 32-byte sector.
    SameSector,
    /// Thirty-two words of one 128-byte line.
    SameLine,
    /// One word per thread (a warp covers one 128-byte line).
    Distinct,
}

impl Pattern {
    /// All patterns.
    pub const ALL: [Pattern; 4] = [Pattern::SameAddress, Pattern::SameSector, Pattern::SameLine, Pattern::Distinct];

    /// "same_address".
    pub fn label(self) -> &'static str {
        match self {
            Pattern::SameAddress => "same_address",
            Pattern::SameSector => "same_sector",
            Pattern::SameLine => "same_line",
            Pattern::Distinct => "distinct",
        }
    }

    /// Mask applied to the thread index to pick the word.
    pub fn mask(self) -> u32 {
        match self {
            Pattern::SameAddress => 0,
            Pattern::SameSector => 7,
            Pattern::SameLine => 31,
            Pattern::Distinct => u32::MAX,
        }
    }

    /// Words the pattern touches for `threads` threads.
    pub fn words(self, threads: u64) -> u64 {
        match self {
            Pattern::Distinct => threads,
            p => (p.mask() as u64 + 1).min(threads),
        }
    }
}

/// Sum over all words after `launches` launches of `threads` threads doing `iters` additions
/// each, with every word wrapping modulo 2^32 as the hardware does.
pub fn expected_sum(pattern: Pattern, threads: u64, iters: u64, launches: u64) -> u64 {
    let words = pattern.words(threads);
    let per_word = (threads / words) as u128 * iters as u128 * launches as u128;
    words * (per_word % (1u128 << 32)) as u64
}

/// Operations per second and per SM clock from a sample.
pub fn rates(ops: f64, elapsed_ns: f64, sm_mhz: Option<f64>) -> (f64, f64) {
    let per_s = ops / (elapsed_ns * 1e-9);
    let per_clock = sm_mhz.map(|mhz| per_s / (mhz * 1e6)).unwrap_or(f64::NAN);
    (per_s, per_clock)
}

fn verify(
    gpu: &Gpu,
    sum: &cudarc::driver::CudaFunction,
    target: &CudaView<'_, u32>,
    words: u64,
    expected: u64,
    what: &str,
) -> Result<()> {
    let total = gpu.alloc_zeros::<u64>(1, "the sum")?;
    let cfg = full_grid(gpu.identity(), 256);
    // SAFETY: sum_words(const u32*, u64, u64*).
    unsafe { gpu.stream().launch_builder(sum).arg(target).arg(&words).arg(&total).launch(cfg) }
        .cuda_context(|| "launching sum_words".into())?;
    let got = gpu.download(&total, "the sum")?[0];
    if got != expected {
        return Err(Error::Verification {
            what: what.into(),
            detail: format!("words sum to {got}, expected {expected}"),
        });
    }
    Ok(())
}

/// The `atomics/add_u32/<pattern>` benchmarks.
pub fn run(suite: &mut Suite) -> Result<()> {
    let gpu = suite.gpu();
    let compiled = gpu.kernels(&kernels::ATOMICS)?;
    let f = compiled.function("atomic_add_u32")?;
    let sum = compiled.function("sum_words")?;
    let cfg = full_grid(gpu.identity(), 256);
    let threads = cfg.grid_dim.0 as u64 * cfg.block_dim.0 as u64;
    let base_iters: u32 = match suite.profile() {
        Profile::Quick => 16,
        Profile::Default | Profile::Full => 64,
    };
    for pattern in Pattern::ALL {
        let name = format!("add_u32/{}", pattern.label());
        if !suite.wants(&name) {
            continue;
        }
        let gpu = suite.gpu();
        let words = pattern.words(threads);
        let mut target = Placements::<u32>::new(gpu, words, DEFAULT_PLACEMENTS, "the atomic targets")?;
        let mut probe = Probe::new(gpu)?;
        let timer = EventTimer::new(gpu.stream())?;
        let mask = pattern.mask();
        let launch = |gpu: &Gpu, target: &mut Placements<u32>, probe: &Probe, iters: u32| -> Result<()> {
            let copy = target.next_view();
            // SAFETY: atomic_add_u32(u32*, u32, u32, gb_probe*); every index < words, the
            // length of each copy.
            unsafe {
                gpu.stream().launch_builder(&f).arg(&copy).arg(&mask).arg(&iters).arg(probe.buffer()).launch(cfg)
            }
            .cuda_context(|| "launching atomic_add_u32".into())?;
            Ok(())
        };
        let min_us = batch::min_iteration_us();
        let sizing = batch::size(&timer, base_iters, min_us, |n| launch(gpu, &mut target, &probe, n))?;
        target.reset(gpu)?;
        let (iters_per_thread, per_iteration) = (sizing.iters, sizing.launches);
        let ops_per_launch = threads * iters_per_thread as u64;
        let bench = Bench::new(name.clone())
            .param("pattern", pattern.label())
            .param("threads", threads)
            .param("words", words)
            .param(launch_size::LAUNCH_PARAM, launch_size::MIN_LAUNCH_US)
            .param("iteration_us", min_us)
            .chosen("atomics_per_thread", iters_per_thread)
            .chosen("launches_per_iteration", per_iteration)
            .placements(target.count)
            .metric("ops_per_s", "op/s", crate::results::Better::Higher, crate::results::ClockDomain::Sm)
            .metric("ops_per_clock", "op/clk", crate::results::Better::Higher, crate::results::ClockDomain::Sm)
            .kernels(&[&compiled.provenance]);
        suite.bench(bench, |gpu, iters| {
            probe.reset_counters(gpu)?;
            let launches = iters * per_iteration;
            timer.start()?;
            for _ in 0..launches {
                launch(gpu, &mut target, &probe, iters_per_thread)?;
            }
            let elapsed = timer.stop_ns()?;
            let clock = probe.read(gpu)?.clock();
            let (per_s, per_clock) = rates((ops_per_launch * launches) as f64, elapsed, clock.and_then(|c| c.mhz()));
            Ok(Sample::clocked(elapsed, vec![per_s, per_clock], clock))
        })?;
        // each copy received its own share of the launches, and its words wrap on their own
        for (i, launches) in target.launches_per_copy().into_iter().enumerate() {
            let expected = expected_sum(pattern, threads, iters_per_thread as u64, launches);
            let what = format!("atomics/{name} (placement {i})");
            verify(suite.gpu(), &sum, &target.copy(i as u64), words, expected, &what)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_touch_the_documented_words() {
        assert_eq!(Pattern::SameAddress.words(1 << 20), 1);
        assert_eq!(Pattern::SameSector.words(1 << 20), 8);
        assert_eq!(Pattern::SameLine.words(1 << 20), 32);
        assert_eq!(Pattern::Distinct.words(1 << 20), 1 << 20);
        // 8 words x 4 bytes = one 32-byte sector; 32 x 4 = one 128-byte line
        assert_eq!(Pattern::SameSector.words(1 << 20) * 4, 32);
        assert_eq!(Pattern::SameLine.words(1 << 20) * 4, 128);
    }

    #[test]
    fn expected_sum_wraps_each_word_like_the_hardware() {
        // one word, 270336 threads x 64 adds x 300 launches overflows u32
        let per_word = 270_336u64 * 64 * 300;
        assert!(per_word > u32::MAX as u64);
        assert_eq!(expected_sum(Pattern::SameAddress, 270_336, 64, 300), per_word % (1 << 32));
        // distinct words never wrap at these counts
        assert_eq!(expected_sum(Pattern::Distinct, 1024, 64, 3), 1024 * 64 * 3);
    }

    #[test]
    fn rates_divide_by_time_and_clock() {
        let (per_s, per_clk) = rates(2.0e9, 1.0e9, Some(2000.0));
        assert_eq!(per_s, 2.0e9);
        assert_eq!(per_clk, 1.0);
        assert!(rates(1.0, 1.0, None).1.is_nan());
    }
}
