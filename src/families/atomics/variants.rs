//! Atomics beyond the 32-bit add patterns of [`super::add`] (Kolpakova), run by the same
//! bench target:
//! - `contention`: atomicAdd with k consecutive threads per address, ops per SM clock;
//! - `types`: 64-bit integer, single and double adds, on one address and on a word per thread;
//! - `cas`: compare-and-swap increments, uncontended and with a warp per word;
//! - `latency`: dependent chains of shared add and CAS in one thread, cycles per op;
//! - `global_latency`: dependent chains of global add and CAS on every SM at once, the mean over SMs;
//! - `shared`: shared-memory atomicAdd, k threads per word, ops per clock per SM (per-SM windows);
//! - under the full profile, `contention_sweep` and `contention_interleaved` over more k.
//!
//! Every kernel's result is verified: the words must sum to the number of operations.
//! Kernels: `kernels/atomics_variants.cu`.

use cudarc::driver::{CudaFunction, CudaView, DeviceRepr, LaunchConfig, PushKernelArg, ValidAsZeroBits};

use super::add::rates;
use super::batch;
use crate::device::{CompiledKernels, EventTimer, Gpu};
use crate::error::{CudaResultExt, Error, Result};
use crate::families::full_grid;
use crate::harness::{Bench, Probe, Suite};
use crate::measure::{SampleSum, launch_size};
use crate::placement::{DEFAULT_PLACEMENTS, Placements, placement_count};
use crate::results::{Better, ClockDomain, KernelClock};

/// Threads per block of the global-atomic kernels.
pub const THREADS: u32 = 256;
/// Threads per address of the contention benchmark (0 stands for the whole grid).
pub const CONTENTION_K: [u32; 9] = [1, 2, 4, 8, 16, 32, 64, 1024, 0];
/// Threads per word of the shared-memory benchmark (0 stands for the whole block).
pub const SHARED_K: [u32; 4] = [1, 2, 32, 0];
/// Dependent atomics per latency launch.
pub const LATENCY_OPS: u32 = 1024;

/// Base additions per thread for `threads_per_word` threads on each word, before the launch is
/// sized ([`batch::size`]): fewer where they serialise on one address, so that the sizing launch
/// lasts between about 10 µs and a few ms.
pub fn iters_for(threads_per_word: u64) -> u32 {
    match threads_per_word {
        0..=32 => 64,
        33..=1024 => 16,
        _ => 4,
    }
}

/// "k=32", or "k=all" for the whole grid / block.
pub fn k_label(k: u32) -> String {
    if k == 0 { "k=all".into() } else { format!("k={k}") }
}

/// Words `threads` threads touch with `k` consecutive threads per word (0: one word).
pub fn words_for(threads: u64, k: u32) -> u64 {
    if k == 0 { 1 } else { threads.div_ceil(k as u64) }
}

/// Words a global latency chain walks, 128 bytes apart (`LAT_LINES`); a shared chain uses one.
pub const LATENCY_LINES: u64 = 256;
/// Distance between the words of a global latency chain, in words (`LAT_STRIDE`).
pub const LATENCY_STRIDE: u64 = 32;

/// Sum of a latency chain's words after `launches` launches of a warm lap of `lines` operations
/// and `n` timed ones, of which `failed` CAS comparisons changed nothing.
pub fn latency_sum(lines: u64, n: u64, launches: u64, failed: u64) -> u64 {
    (launches * (lines + n)).saturating_sub(failed)
}

/// Integer value type of a typed add and its kernel names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `unsigned long long`
    U64,
    /// `float`
    F32,
    /// `double`
    F64,
}

impl Kind {
    /// All three.
    pub const ALL: [Kind; 3] = [Kind::U64, Kind::F32, Kind::F64];

    /// "u64".
    pub fn label(self) -> &'static str {
        match self {
            Kind::U64 => "u64",
            Kind::F32 => "f32",
            Kind::F64 => "f64",
        }
    }

    /// Largest count a word of this type holds exactly (2^24 for single precision).
    pub fn exact_limit(self) -> u64 {
        match self {
            Kind::U64 => u64::MAX,
            Kind::F32 => 1 << 24,
            Kind::F64 => 1 << 53,
        }
    }
}

/// Additions per thread of the verification launch of a typed add: the timed count, reduced so
/// that no word exceeds what the type holds exactly.
pub fn verify_iters(kind: Kind, threads_per_word: u64, iters: u32) -> u32 {
    let cap = (kind.exact_limit() / threads_per_word.max(1)).clamp(1, u32::MAX as u64) as u32;
    iters.min(cap)
}

pub(super) struct Ctx {
    pub(super) compiled: std::sync::Arc<CompiledKernels>,
    pub(super) cfg: LaunchConfig,
    pub(super) threads: u64,
}

impl Ctx {
    pub(super) fn f(&self, name: &str) -> Result<CudaFunction> {
        self.compiled.function(name)
    }

    /// Sums the words of every copy of `target` on the device with `atomv_sum_<ty>`.
    pub(super) fn sum_copies<T: DeviceRepr>(&self, gpu: &Gpu, ty: &str, target: &Placements<T>) -> Result<u64> {
        (0..target.count).map(|i| self.sum(gpu, ty, &target.copy(i), target.words)).sum()
    }

    /// Sums `n` words of `buf` on the device with `atomv_sum_<ty>`.
    fn sum<T: DeviceRepr>(&self, gpu: &Gpu, ty: &str, buf: &CudaView<'_, T>, n: u64) -> Result<u64> {
        let f = self.f(&format!("atomv_sum_{ty}"))?;
        let total = gpu.alloc_zeros::<u64>(1, "the sum")?;
        // SAFETY: atomv_sum_<ty>(const T*, u64, unsigned long long*) reads n words of `buf`.
        unsafe { gpu.stream().launch_builder(&f).arg(buf).arg(&n).arg(&total).launch(full_grid(gpu.identity(), 256)) }
            .cuda_context(|| format!("launching atomv_sum_{ty}"))?;
        Ok(gpu.download(&total, "the sum")?[0])
    }
}

pub(super) fn check(what: &str, got: u64, expected: u64) -> Result<()> {
    if got == expected {
        Ok(())
    } else {
        Err(Error::Verification { what: what.into(), detail: format!("the words sum to {got}, expected {expected}") })
    }
}

pub(super) fn zeros<T: DeviceRepr + ValidAsZeroBits>(
    gpu: &Gpu,
    n: u64,
    what: &str,
) -> Result<cudarc::driver::CudaSlice<T>> {
    gpu.alloc_zeros::<T>(n as usize, what)
}

/// [`DEFAULT_PLACEMENTS`] zeroed copies of an atomic target of `n` words.
fn targets<T: DeviceRepr + ValidAsZeroBits>(gpu: &Gpu, n: u64, what: &str) -> Result<Placements<T>> {
    Placements::new(gpu, n, DEFAULT_PLACEMENTS, what)
}

/// Sizes every run ([`GlobalRun::size`]) for [`batch::min_iteration_us`]; returns that minimum,
/// µs.
fn size_runs<'a, T: DeviceRepr + ValidAsZeroBits + 'a>(
    runs: impl IntoIterator<Item = &'a mut GlobalRun<T>>,
    gpu: &Gpu,
    cfg: LaunchConfig,
    timer: &EventTimer,
) -> Result<u64> {
    let min_us = batch::min_iteration_us();
    for r in runs {
        r.size(gpu, cfg, timer, min_us)?;
    }
    Ok(min_us)
}

/// A timed global-atomic kernel: its arguments after the target, its operations per thread
/// (the base, then as sized), the target's copies (each launch uses the next one, so a sample
/// averages over placements), and its launches per iteration ([`batch`]).
struct GlobalRun<T> {
    label: String,
    f: CudaFunction,
    target: Placements<T>,
    words: u64,
    arg: u32,
    iters: u32,
    probe: Probe,
    batch: u64,
}

impl<T: DeviceRepr + ValidAsZeroBits> GlobalRun<T> {
    /// Sizes the work per launch and the launches per iteration ([`batch::size`]) and empties
    /// the targets the sizing launches touched.
    fn size(&mut self, gpu: &Gpu, cfg: LaunchConfig, timer: &EventTimer, min_us: u64) -> Result<()> {
        let sizing = batch::size(timer, self.iters, min_us, |n| self.launch(gpu, cfg, n))?;
        (self.iters, self.batch) = (sizing.iters, sizing.launches);
        self.target.reset(gpu)
    }
}

impl<T: DeviceRepr> GlobalRun<T> {
    fn launch(&mut self, gpu: &Gpu, cfg: LaunchConfig, iters: u32) -> Result<()> {
        let target = self.target.next_view();
        // SAFETY: every global kernel of atomics_variants.cu takes (T*, u32, u32, gb_probe*) and
        // touches words below `words`, the length of each copy.
        unsafe {
            gpu.stream()
                .launch_builder(&self.f)
                .arg(&target)
                .arg(&self.arg)
                .arg(&iters)
                .arg(self.probe.buffer())
                .launch(cfg)
        }
        .cuda_context(|| format!("launching an atomics kernel ({})", self.label))?;
        Ok(())
    }

    /// Ops per second and per SM clock over `iters` iterations of [`Self::batch`] launches.
    fn sample(
        &mut self,
        gpu: &Gpu,
        cfg: LaunchConfig,
        threads: u64,
        timer: &EventTimer,
        iters: u64,
    ) -> Result<(f64, [f64; 2], Option<KernelClock>)> {
        self.probe.set(gpu, 0)?;
        let launches = iters * self.batch;
        timer.start()?;
        for _ in 0..launches {
            self.launch(gpu, cfg, self.iters)?;
        }
        let elapsed = timer.stop_ns()?;
        let clock = self.probe.read(gpu)?.clock();
        let (per_s, per_clk) =
            rates((threads * self.iters as u64 * launches) as f64, elapsed, clock.and_then(|c| c.mhz()));
        Ok((elapsed, [per_s, per_clk], clock))
    }
}

pub(super) fn contention(suite: &mut Suite, ctx: &Ctx, name: &str, ks: &[u32], interleaved: bool) -> Result<()> {
    let gpu = suite.gpu();
    let mut runs = Vec::new();
    for &k in ks {
        let per_word = if k == 0 { ctx.threads } else { k as u64 };
        let words = words_for(ctx.threads, k);
        let (f, arg) = if interleaved {
            (ctx.f("atomv_interleaved")?, words as u32)
        } else {
            (ctx.f("atomv_contention")?, if k == 0 { u32::MAX } else { k })
        };
        runs.push(GlobalRun {
            label: k_label(k),
            f,
            target: targets::<u32>(gpu, words, "the atomic targets")?,
            words,
            arg,
            iters: iters_for(per_word),
            probe: Probe::new(gpu)?,
            batch: 1,
        });
    }
    let timer = EventTimer::new(gpu.stream())?;
    let min_us = size_runs(runs.iter_mut(), gpu, ctx.cfg, &timer)?;
    let mut bench = Bench::new(name)
        .placements(placement_count(DEFAULT_PLACEMENTS))
        .param(launch_size::LAUNCH_PARAM, launch_size::MIN_LAUNCH_US)
        .param("iteration_us", min_us)
        .param("threads", ctx.threads)
        .param("threads_per_block", THREADS)
        .param("layout", if interleaved { "interleaved" } else { "consecutive" })
        .kernels(&[&ctx.compiled.provenance]);
    for r in &runs {
        bench = bench
            .chosen(&format!("{}_atomics_per_thread", r.label), r.iters)
            .chosen(&format!("{}_launches_per_iteration", r.label), r.batch)
            .metric(r.label.clone(), "op/clk", Better::Higher, ClockDomain::Sm);
    }
    suite.bench(bench, |gpu, iters| {
        let mut sum = SampleSum::new();
        for r in runs.iter_mut() {
            let (t, [_, per_clk], c) = r.sample(gpu, ctx.cfg, ctx.threads, &timer, iters)?;
            sum.add(t, c);
            sum.push(per_clk);
        }
        Ok(sum.finish())
    })?;
    // every word of every copy wraps modulo 2^32 on its own
    let gpu = suite.gpu();
    for r in &runs {
        let per_word = |w: u64, launches: u64| -> u64 {
            let threads_on_w = if interleaved {
                ctx.threads / r.words + u64::from(w < ctx.threads % r.words)
            } else if r.arg == u32::MAX {
                ctx.threads
            } else {
                (ctx.threads - w * r.arg as u64).min(r.arg as u64)
            };
            ((threads_on_w as u128 * r.iters as u128 * launches as u128) % (1u128 << 32)) as u64
        };
        let expected: u64 =
            r.target.launches_per_copy().iter().map(|&l| (0..r.words).map(|w| per_word(w, l)).sum::<u64>()).sum();
        let got = ctx.sum_copies(gpu, "u32", &r.target)?;
        check(&format!("atomics/{name}/{}", r.label), got, expected)?;
    }
    Ok(())
}

/// Timed typed adds, then a fresh launch per kind and pattern whose sum is checked exactly.
pub(super) fn types(suite: &mut Suite, ctx: &Ctx) -> Result<()> {
    let gpu = suite.gpu();
    struct TypedRun {
        kind: Kind,
        same: bool,
        run: GlobalRun<u64>,
    }
    let mut runs = Vec::new();
    for kind in Kind::ALL {
        for same in [true, false] {
            let words = if same { 1 } else { ctx.threads };
            let per_word = if same { ctx.threads } else { 1 };
            // u64 and f64 words are 8 bytes, f32 words 4: one u64 buffer of `words` fits all.
            runs.push(TypedRun {
                kind,
                same,
                run: GlobalRun {
                    label: format!("{}/{}", kind.label(), if same { "same_address" } else { "distinct" }),
                    f: ctx.f(&format!("atomv_add_{}", kind.label()))?,
                    target: targets::<u64>(gpu, words, "the atomic targets")?,
                    words,
                    arg: if same { 0 } else { u32::MAX },
                    iters: iters_for(per_word),
                    probe: Probe::new(gpu)?,
                    batch: 1,
                },
            });
        }
    }
    let timer = EventTimer::new(gpu.stream())?;
    let min_us = size_runs(runs.iter_mut().map(|r| &mut r.run), gpu, ctx.cfg, &timer)?;
    let mut bench = Bench::new("types")
        .param("threads", ctx.threads)
        .param(launch_size::LAUNCH_PARAM, launch_size::MIN_LAUNCH_US)
        .param("iteration_us", min_us)
        .placements(placement_count(DEFAULT_PLACEMENTS))
        .kernels(&[&ctx.compiled.provenance]);
    for r in &runs {
        bench = bench
            .chosen(&format!("{}_atomics_per_thread", r.run.label), r.run.iters)
            .chosen(&format!("{}_launches_per_iteration", r.run.label), r.run.batch)
            .metric(r.run.label.clone(), "op/clk", Better::Higher, ClockDomain::Sm);
    }
    suite.bench(bench, |gpu, iters| {
        let mut sum = SampleSum::new();
        for r in runs.iter_mut() {
            let (t, [_, per_clk], c) = r.run.sample(gpu, ctx.cfg, ctx.threads, &timer, iters)?;
            sum.add(t, c);
            sum.push(per_clk);
        }
        Ok(sum.finish())
    })?;
    let gpu = suite.gpu();
    for r in runs.iter_mut() {
        let per_word = if r.same { ctx.threads } else { 1 };
        let n = verify_iters(r.kind, per_word, r.run.iters);
        r.run.target.reset(gpu)?;
        r.run.launch(gpu, ctx.cfg, n)?;
        let copy = r.run.target.copy(0);
        let got = match r.kind {
            Kind::U64 => ctx.sum(gpu, "u64", &copy, r.run.words)?,
            Kind::F64 => ctx.sum(gpu, "f64", &copy, r.run.words)?,
            // the f32 words are the first `words` 4-byte words of the buffer
            Kind::F32 => {
                // SAFETY: the buffer holds at least `words` 4-byte words.
                let view = unsafe { copy.transmute::<f32>(r.run.words as usize) }.ok_or_else(|| {
                    Error::Verification { what: "atomics/types".into(), detail: "target buffer too small".into() }
                })?;
                let f = ctx.f("atomv_sum_f32")?;
                let total = gpu.alloc_zeros::<u64>(1, "the sum")?;
                let words = r.run.words;
                // SAFETY: atomv_sum_f32(const float*, u64, unsigned long long*).
                unsafe {
                    gpu.stream()
                        .launch_builder(&f)
                        .arg(&view)
                        .arg(&words)
                        .arg(&total)
                        .launch(full_grid(gpu.identity(), 256))
                }
                .cuda_context(|| "launching atomv_sum_f32".into())?;
                gpu.download(&total, "the sum")?[0]
            }
        };
        check(&format!("atomics/types/{}", r.run.label), got, ctx.threads * n as u64)?;
    }
    Ok(())
}

pub(super) fn cas(suite: &mut Suite, ctx: &Ctx) -> Result<()> {
    let gpu = suite.gpu();
    let mut runs = Vec::new();
    for (label, k) in [("distinct", 1u32), ("warp_contended", 32)] {
        let words = words_for(ctx.threads, k);
        runs.push(GlobalRun {
            label: label.into(),
            f: ctx.f("atomv_cas")?,
            target: targets::<u32>(gpu, words, "the CAS targets")?,
            words,
            arg: k,
            iters: if k == 1 { 64 } else { 4 },
            probe: Probe::new(gpu)?,
            batch: 1,
        });
    }
    let timer = EventTimer::new(gpu.stream())?;
    let min_us = size_runs(runs.iter_mut(), gpu, ctx.cfg, &timer)?;
    let mut bench = Bench::new("cas")
        .param("threads", ctx.threads)
        .param(launch_size::LAUNCH_PARAM, launch_size::MIN_LAUNCH_US)
        .param("iteration_us", min_us)
        .placements(placement_count(DEFAULT_PLACEMENTS))
        .kernels(&[&ctx.compiled.provenance]);
    for r in &runs {
        bench = bench
            .chosen(&format!("{}_successes_per_thread", r.label), r.iters)
            .chosen(&format!("{}_launches_per_iteration", r.label), r.batch)
            .metric(r.label.clone(), "op/clk", Better::Higher, ClockDomain::Sm)
            .metric(format!("{}_attempts_per_success", r.label), "attempts", Better::Lower, ClockDomain::None);
    }
    suite.bench(bench, |gpu, iters| {
        let mut sum = SampleSum::new();
        for r in runs.iter_mut() {
            let (t, [_, per_clk], c) = r.sample(gpu, ctx.cfg, ctx.threads, &timer, iters)?;
            let failed = r.probe.read(gpu)?.sink;
            let successes = ctx.threads * r.iters as u64 * iters * r.batch;
            sum.add(t, c);
            sum.push(per_clk);
            sum.push((successes + failed) as f64 / successes as f64);
        }
        Ok(sum.finish())
    })?;
    let gpu = suite.gpu();
    for r in &runs {
        let launches: u64 = r.target.launches_per_copy().iter().sum();
        let expected = ctx.threads * r.iters as u64 * launches;
        check(&format!("atomics/cas/{}", r.label), ctx.sum_copies(gpu, "u32", &r.target)?, expected)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_labels_follow_k() {
        assert_eq!(words_for(270_336, 1), 270_336);
        assert_eq!(words_for(270_336, 32), 8448);
        assert_eq!(words_for(100, 32), 4);
        assert_eq!(words_for(270_336, 0), 1);
        assert_eq!(k_label(0), "k=all");
        assert_eq!(k_label(64), "k=64");
    }

    #[test]
    fn serialised_words_get_fewer_additions() {
        assert_eq!(iters_for(1), 64);
        assert_eq!(iters_for(32), 64);
        assert_eq!(iters_for(1024), 16);
        assert_eq!(iters_for(270_336), 4);
    }

    #[test]
    fn latency_words_hold_every_successful_operation() {
        // adds: a warm lap of 256 and 1024 timed, three launches
        assert_eq!(latency_sum(LATENCY_LINES, 1024, 3, 0), 3 * 1280);
        // CAS: failed comparisons change nothing
        assert_eq!(latency_sum(1, 1024, 3, 1500), 3 * 1025 - 1500);
        assert_eq!(latency_sum(1, 1024, 0, 0), 0);
        // the global chain spans 256 lines of 128 bytes
        assert_eq!(LATENCY_LINES * LATENCY_STRIDE * 4, 32 << 10);
    }

    #[test]
    fn float_verification_stays_exact() {
        // one address for 270k threads: a single float holds 2^24 exactly, so 62 adds each at most
        assert_eq!(verify_iters(Kind::F32, 270_336, 4), 4);
        assert_eq!(verify_iters(Kind::F32, 270_336, 64), 62);
        assert!(270_336u64 * verify_iters(Kind::F32, 270_336, 64) as u64 <= 1 << 24);
        assert_eq!(verify_iters(Kind::F64, 270_336, 64), 64);
        assert_eq!(verify_iters(Kind::F32, 1, 64), 64);
    }

    #[test]
    fn host_constants_match_the_kernel() {
        use crate::families::kernel_define;
        assert_eq!(kernel_define(&crate::kernels::ATOMICS_VARIANTS, "LAT_LINES"), Some(LATENCY_LINES));
        assert_eq!(kernel_define(&crate::kernels::ATOMICS_VARIANTS, "LAT_STRIDE"), Some(LATENCY_STRIDE));
    }
}
