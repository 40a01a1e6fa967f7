//! Load bandwidth of the memories inside an SM (L1 data cache, shared memory) in bytes per clock
//! per SM, measured with per-SM windows: the part `l1_bandwidth` and `shared_bandwidth` share.
//!
//! A configuration is an access width (4, 8, 16 bytes per lane), an ILP (independent loads per
//! warp in flight) and a number of resident warps per SM. The regression set is one benchmark
//! per width at the configuration a short search on the device picks; the full profile adds the
//! whole sweep, one benchmark per (variant, width, ILP) with one metric per warp count.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, PushKernelArg};

use super::launch_size;
use super::per_sm::{self, Residency, SmTotals, SmWindows};
use super::sample::SampleSum;
use super::search::{self, Trial};
use crate::device::{CompiledKernels, EventTimer, Gpu};
use crate::error::{CudaResultExt, Result};
use crate::harness::{Bench, Profile, Sample, Suite};
use crate::kernels::KernelSource;
use crate::results::{Better, ClockDomain, GpuIdentity};

/// Access widths, bytes per lane.
pub const WIDTHS: [u32; 3] = [4, 8, 16];
/// Loads per warp in flight.
pub const ILPS: [u32; 4] = [1, 2, 4, 8];
/// Resident warps per SM.
pub const WARPS: [u32; 5] = [4, 8, 16, 32, 64];
/// ILPs the regression set's search tries (ILP 1 is latency- or issue-bound by construction).
pub const SEARCH_ILPS: [u32; 3] = [2, 4, 8];
/// Warps per SM the regression set's search tries, most first.
pub const SEARCH_WARPS: [u32; 4] = [64, 32, 16, 8];
/// Bytes every kernel of the family reads round after round: ILP 8 x 32 lanes x 16 bytes.
pub const FOOTPRINT_BYTES: usize = 4096;

/// Cycles one launch of a benchmark keeps an SM busy at the limit (about 2 ms at 2 GHz): long
/// against the start and end of the per-SM window (`launch_size::MIN_WINDOW_CYCLES`).
pub const BENCH_CYCLES: u64 = launch_size::MIN_WINDOW_CYCLES;
/// Cycles of one launch of the configuration search.
pub const SEARCH_CYCLES: u64 = 1 << 16;
/// Repeats per configuration in the search.
pub const SEARCH_REPEATS: usize = 3;
/// A configuration within this fraction of the best is as good (simpler ones come first).
pub const SEARCH_TOLERANCE: f64 = 0.005;
/// Value no load result is compared equal to in practice; the kernels store on equality.
pub const SENTINEL: u32 = 0x9e37_79b9;

/// One family: which memory, its kernel source, and the per-arch limit.
pub struct Spec {
    /// Family name, for messages.
    pub family: &'static str,
    /// Kernel source of the regression set (the search space) and the fold kernel.
    pub source: KernelSource,
    /// Kernel source of the rest of the sweep, compiled under the full profile only.
    pub sweep_source: Option<KernelSource>,
    /// Name of the fold kernel in that source.
    pub fold: &'static str,
    /// Kernel variants (cache operators); empty name for one without variants.
    pub variants: &'static [&'static str],
    /// Kernel name for (variant, width, ILP).
    pub kernel: fn(&str, u32, u32) -> String,
    /// Whether the kernels read a global buffer (L1) rather than their own shared array.
    pub global: bool,
    /// Bytes per clock per SM the hardware can deliver, if documented for this GPU.
    pub limit: fn(&GpuIdentity) -> Option<f64>,
}

/// One point of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Index into [`Spec::variants`].
    pub variant: usize,
    /// Bytes per lane per load.
    pub width: u32,
    /// Loads per warp in flight.
    pub ilp: u32,
    /// Resident warps per SM.
    pub warps_per_sm: u32,
}

impl Config {
    /// Bytes one warp loads per round.
    pub fn bytes_per_round(&self, warp_size: u32) -> u64 {
        self.ilp as u64 * warp_size as u64 * self.width as u64
    }
}

/// "128bit": the benchmark name of a width.
pub fn width_label(width: u32) -> String {
    format!("{}bit", width * 8)
}

/// The configurations the search tries for one width, in order of preference: most warps first
/// (a configuration inside the plateau, least sensitive to latency), then lower ILP; plain loads
/// only. Configurations that cannot be resident are measured as NaN and skipped.
pub fn search_space(width: u32) -> Vec<Config> {
    let mut v = Vec::new();
    for &warps_per_sm in &SEARCH_WARPS {
        for &ilp in &SEARCH_ILPS {
            v.push(Config { variant: 0, width, ilp, warps_per_sm });
        }
    }
    v
}

/// Bytes per clock per SM of a sample, from its totals: the median over SMs.
pub fn bytes_per_clock(totals: &SmTotals) -> f64 {
    totals.rate_per_clock().map(|r| r.median).unwrap_or(f64::NAN)
}

struct Target {
    compiled: Arc<CompiledKernels>,
    sweep: Option<Arc<CompiledKernels>>,
    buf: Option<CudaSlice<u8>>,
    sink: CudaSlice<u32>,
    seed: u32,
    warp_size: u32,
    limit_for_sizing: f64,
}

impl Target {
    /// The kernel of `c`, from the regression source or else the sweep source.
    fn function(&self, spec: &Spec, c: &Config) -> Result<CudaFunction> {
        let name = (spec.kernel)(spec.variants.get(c.variant).copied().unwrap_or(""), c.width, c.ilp);
        match (self.compiled.function(&name), &self.sweep) {
            (Ok(f), _) => Ok(f),
            (Err(_), Some(sweep)) => sweep.function(&name),
            (Err(e), None) => Err(e),
        }
    }

    fn provenance(&self) -> Vec<&crate::results::KernelProvenance> {
        std::iter::once(&self.compiled.provenance).chain(self.sweep.as_ref().map(|s| &s.provenance)).collect()
    }

    fn rounds(&self, c: &Config, target_cycles: u64) -> u32 {
        per_sm::rounds_for(target_cycles, self.limit_for_sizing, c.warps_per_sm, c.bytes_per_round(self.warp_size), 4)
    }

    fn launch(&self, gpu: &Gpu, f: &CudaFunction, c: &Config, rounds: u32, windows: &SmWindows) -> Result<()> {
        let cfg = Residency::new(c.warps_per_sm, self.warp_size).launch(gpu.identity(), 0);
        let zmask = 0u32;
        let slots = windows.slots();
        let mut l = gpu.stream().launch_builder(f);
        match &self.buf {
            Some(buf) => l.arg(buf),
            None => l.arg(&self.seed),
        };
        l.arg(&zmask).arg(&rounds).arg(windows.buffer()).arg(&slots).arg(&self.sink).arg(&SENTINEL);
        // SAFETY: (const char* | u32 seed, u32 zmask, u32 rounds, gb_sm_window*, u32, u32* sink,
        // u32); zmask = 0 keeps every address inside the 4 KiB footprint; the sink holds one word
        // per thread of the grid.
        unsafe { l.launch(cfg) }.cuda_context(|| "launching a bandwidth kernel".into())?;
        Ok(())
    }

    /// Bytes per clock per SM of one launch of `c`, or NaN when `c` cannot be resident.
    fn measure(&self, gpu: &Gpu, spec: &Spec, c: &Config, windows: &mut SmWindows) -> Result<f64> {
        let f = self.function(spec, c)?;
        if !Residency::new(c.warps_per_sm, self.warp_size).fits(&f, 0)? {
            return Ok(f64::NAN);
        }
        let rounds = self.rounds(c, SEARCH_CYCLES);
        windows.reset(gpu)?;
        self.launch(gpu, &f, c, rounds, windows)?;
        windows.fold(gpu)?;
        Ok(bytes_per_clock(&windows.read(gpu)?))
    }
}

fn work_per_launch(gpu: &GpuIdentity, c: &Config, rounds: u32) -> u64 {
    let r = Residency::new(c.warps_per_sm, gpu.warp_size);
    gpu.sm_count as u64 * r.blocks_per_sm as u64 * r.threads_per_block as u64 / gpu.warp_size as u64
        * rounds as u64
        * c.bytes_per_round(gpu.warp_size)
}

/// Runs the family: the regression set, and the sweep under the full profile.
pub fn run(suite: &mut Suite, spec: &Spec) -> Result<()> {
    let widths: Vec<u32> = match suite.profile() {
        Profile::Quick => vec![16],
        Profile::Default | Profile::Full => WIDTHS.to_vec(),
    };
    if suite.profile() != Profile::Full && !widths.iter().any(|w| suite.wants(&width_label(*w))) {
        return Ok(());
    }
    let gpu = suite.gpu();
    let identity = gpu.identity().clone();
    let compiled = gpu.kernels(&spec.source)?;
    let fold = compiled.function(spec.fold)?;
    let limit = (spec.limit)(&identity);
    let buf = if spec.global {
        let data: Vec<u8> =
            (0..FOOTPRINT_BYTES).map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3]).collect();
        Some(gpu.upload(&data, "the L1 footprint")?)
    } else {
        None
    };
    let max_threads = identity.sm_count as usize * 2 * 1024;
    let sweep_kernels = match (suite.profile(), &spec.sweep_source) {
        (Profile::Full, Some(src)) => Some(gpu.kernels(src)?),
        _ => None,
    };
    let target = Target {
        compiled: compiled.clone(),
        sweep: sweep_kernels,
        buf,
        sink: gpu.alloc_zeros::<u32>(max_threads, "the result sink")?,
        seed: 0x1234_5678,
        warp_size: identity.warp_size,
        limit_for_sizing: limit.unwrap_or(128.0),
    };
    let mut windows = SmWindows::new(gpu, fold.clone())?;

    for width in widths {
        let name = width_label(width);
        if !suite.wants(&name) {
            continue;
        }
        let gpu = suite.gpu();
        let space = search_space(width);
        let (trials, best) = search::run_and_choose(
            &format!("{}/{name}", spec.family),
            &space,
            SEARCH_REPEATS,
            SEARCH_TOLERANCE,
            |c| target.measure(gpu, spec, c, &mut windows),
        )?;
        let c = trials[best].config;
        bench_config(suite, spec, &target, &mut windows, &name, c, limit, Some(&trials))?;
    }

    if suite.profile() == Profile::Full {
        sweep(suite, spec, &target, limit)?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn bench_config(
    suite: &mut Suite,
    spec: &Spec,
    target: &Target,
    windows: &mut SmWindows,
    name: &str,
    c: Config,
    limit: Option<f64>,
    trials: Option<&[Trial<Config>]>,
) -> Result<()> {
    let gpu = suite.gpu();
    let identity = gpu.identity().clone();
    let f = target.function(spec, &c)?;
    let rounds = target.rounds(&c, launch_size::scaled_window(BENCH_CYCLES));
    let residency = Residency::new(c.warps_per_sm, identity.warp_size);
    let timer = EventTimer::new(gpu.stream())?;
    let variant = spec.variants.get(c.variant).copied().unwrap_or("");
    let searched = trials.is_some();
    let mut bench = Bench::new(name)
        .param("width_bytes", c.width)
        .setting(searched, "ilp", c.ilp)
        .setting(searched, "warps_per_sm", c.warps_per_sm)
        .setting(searched, "threads_per_block", residency.threads_per_block)
        .setting(searched, "blocks", identity.sm_count * residency.blocks_per_sm)
        .setting(searched, "rounds_per_launch", rounds)
        .param("footprint_bytes", FOOTPRINT_BYTES as u64)
        .param(launch_size::WINDOW_PARAM, launch_size::scaled_window(BENCH_CYCLES))
        .metric("bytes_per_clk_per_sm", "B/clk/SM", Better::Higher, ClockDomain::Sm);
    if !variant.is_empty() {
        bench = bench.setting(searched, "cache_op", variant);
    }
    if let Some(l) = limit {
        bench = bench.param("limit_bytes_per_clk_per_sm", l).metric("efficiency", "%", Better::Higher, ClockDomain::Sm);
    }
    let label = |c: &Config| {
        let v = spec.variants.get(c.variant).map(|v| format!("{v}/")).unwrap_or_default();
        format!("{v}ilp={}/warps={}", c.ilp, c.warps_per_sm)
    };
    bench = bench.setting(searched, "config", label(&c));
    if let Some(t) = trials {
        bench = bench.chosen("search", search::to_json(t, label));
    }
    bench = bench.kernels(&[&target.compiled.provenance]);
    let per_launch = work_per_launch(&identity, &c, rounds);
    let what = format!("{}/{name}", spec.family);
    suite.bench(bench, |gpu, iters| {
        let (elapsed, totals) = per_sm::sample(gpu, windows, &timer, iters, per_launch, &what, |gpu, w| {
            target.launch(gpu, &f, &c, rounds, w)
        })?;
        let rate = bytes_per_clock(&totals);
        let mut values = vec![rate];
        if let Some(l) = limit {
            values.push(super::limits::efficiency_percent(rate, Some(l)));
        }
        Ok(Sample::clocked(elapsed, values, totals.clock()))
    })
}

fn sweep(suite: &mut Suite, spec: &Spec, target: &Target, limit: Option<f64>) -> Result<()> {
    let variants: Vec<&str> = if spec.variants.is_empty() { vec![""] } else { spec.variants.to_vec() };
    for (vi, variant) in variants.iter().enumerate() {
        for &width in &WIDTHS {
            for &ilp in &ILPS {
                let v = if variant.is_empty() { String::new() } else { format!("{variant}/") };
                let name = format!("sweep/{v}{}/ilp={ilp}", width_label(width));
                if !suite.wants(&name) {
                    continue;
                }
                let gpu = suite.gpu();
                let identity = gpu.identity().clone();
                let mut points = Vec::new();
                for &warps_per_sm in &WARPS {
                    let c = Config { variant: vi, width, ilp, warps_per_sm };
                    let f = target.function(spec, &c)?;
                    if Residency::new(warps_per_sm, identity.warp_size).fits(&f, 0)? {
                        let fold = target.compiled.function(spec.fold)?;
                        points.push((
                            c,
                            f,
                            SmWindows::new(gpu, fold)?,
                            target.rounds(&c, launch_size::scaled_window(BENCH_CYCLES)),
                        ));
                    }
                }
                if points.is_empty() {
                    continue;
                }
                let timer = EventTimer::new(gpu.stream())?;
                let mut bench = Bench::new(name.clone())
                    .param("width_bytes", width)
                    .param("ilp", ilp)
                    .param(launch_size::WINDOW_PARAM, launch_size::scaled_window(BENCH_CYCLES));
                if !variant.is_empty() {
                    bench = bench.param("cache_op", *variant);
                }
                if let Some(l) = limit {
                    bench = bench.param("limit_bytes_per_clk_per_sm", l);
                }
                for (c, ..) in &points {
                    bench =
                        bench.metric(format!("warps={}", c.warps_per_sm), "B/clk/SM", Better::Higher, ClockDomain::Sm);
                }
                bench = bench.kernels(&target.provenance());
                let what = format!("{}/{name}", spec.family);
                suite.bench(bench, |gpu, iters| {
                    let mut sum = SampleSum::with_capacity(points.len());
                    for (c, f, w, rounds) in points.iter_mut() {
                        let per_launch = work_per_launch(gpu.identity(), c, *rounds);
                        let (t, totals) = per_sm::sample(gpu, w, &timer, iters, per_launch, &what, |gpu, w| {
                            target.launch(gpu, f, c, *rounds, w)
                        })?;
                        sum.add(t, totals.clock());
                        sum.push(bytes_per_clock(&totals));
                    }
                    Ok(sum.finish())
                })?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_space_lists_preferred_configurations_first() {
        let s = search_space(16);
        assert_eq!(s.len(), SEARCH_WARPS.len() * SEARCH_ILPS.len());
        assert_eq!(s[0], Config { variant: 0, width: 16, ilp: 2, warps_per_sm: 64 });
        assert_eq!(s[1], Config { variant: 0, width: 16, ilp: 4, warps_per_sm: 64 });
        assert_eq!(s.last().unwrap(), &Config { variant: 0, width: 16, ilp: 8, warps_per_sm: 8 });
        // the search space is part of the sweep
        assert!(s.iter().all(|c| ILPS.contains(&c.ilp) && WARPS.contains(&c.warps_per_sm)));
    }

    #[test]
    fn bytes_counted_per_launch_are_warps_times_rounds_times_round_bytes() {
        let g = crate::families::test_identity();
        let c = Config { variant: 0, width: 16, ilp: 4, warps_per_sm: 64 };
        // a round: 4 loads x 32 lanes x 16 B = 2 KiB
        assert_eq!(c.bytes_per_round(32), 2048);
        // 132 SMs x 64 warps x 100 rounds x 2 KiB
        assert_eq!(work_per_launch(&g, &c, 100), 132 * 64 * 100 * 2048);
        let c = Config { variant: 0, width: 4, ilp: 1, warps_per_sm: 8 };
        assert_eq!(work_per_launch(&g, &c, 4), 132 * 8 * 4 * 128);
    }

    #[test]
    fn footprint_holds_the_widest_round() {
        let c = Config {
            variant: 0,
            width: *WIDTHS.iter().max().unwrap(),
            ilp: *ILPS.iter().max().unwrap(),
            warps_per_sm: 1,
        };
        assert_eq!(c.bytes_per_round(32) as usize, FOOTPRINT_BYTES);
    }

    #[test]
    fn widths_are_named_in_bits() {
        assert_eq!(WIDTHS.map(width_label), ["32bit", "64bit", "128bit"]);
    }

    #[test]
    fn host_constants_match_the_kernels() {
        use crate::families::kernel_define;
        assert_eq!(kernel_define(&crate::kernels::SHARED_BANDWIDTH, "SMEM_BYTES"), Some(FOOTPRINT_BYTES as u64));
        // every configuration of the sweep has a kernel in one of the two L1 sources
        let l1 = crate::families::l1_bandwidth::spec();
        for op in l1.variants {
            for w in WIDTHS {
                for k in ILPS {
                    let name = (l1.kernel)(op, w, k);
                    let (a, b) = (l1.source.text, l1.sweep_source.unwrap().text);
                    let defined = |t: &str| {
                        t.contains(&format!("GB_L1_KERNEL({op}, {w}, {k})"))
                            || t.contains(&format!("GB_L1_ALL_ILPS({op}, {w})"))
                            || (op == &"ld" && k > 1 && t.contains(&format!("GB_L1_REGRESSION({w})")))
                    };
                    assert!(defined(a) || defined(b), "{name}");
                }
            }
        }
        // the search space is in the regression source
        for c in search_space(16) {
            assert!(l1.source.text.contains(&format!("GB_L1_KERNEL(ld, W, {})", c.ilp)), "{c:?}");
        }
    }
}
