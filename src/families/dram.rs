//! DRAM bandwidth (seed 002 section V): STREAM copy, scale, add and triad, a read-only and a
//! write-only stream, on arrays far larger than the L2, each at the configuration (threads per
//! block, unroll, cache hint) a short search on the device finds best; results verified. Under
//! the full profile, sweeps over threads per block, array size and unroll x hint.
//! Kernels: `kernels/dram_ops.cuh`.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::full_grid;
use crate::device::{CompiledKernels, EventTimer, Gpu};
use crate::error::{CudaResultExt, Error, Result};
use crate::harness::{Bench, Probe, Profile, Sample, Suite};
use crate::kernels;
use crate::measure::search::{self, Trial};
use crate::results::{Better, ClockDomain, GpuIdentity};

/// Scalar of scale and triad.
pub const SCALAR: f64 = 3.0;
/// Initial values of a, b, c.
pub const INITIAL: [f64; 3] = [1.0, 2.0, 0.0];
/// Value the write-only stream stores.
pub const WRITE_VALUE: f64 = 7.0;

/// The six streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// c = a
    Copy,
    /// b = q c
    Scale,
    /// c = a + b
    Add,
    /// a = b + q c
    Triad,
    /// sum of the words of a
    Read,
    /// c = w
    Write,
}

impl Op {
    /// All six, in run order.
    pub const ALL: [Op; 6] = [Op::Copy, Op::Scale, Op::Add, Op::Triad, Op::Read, Op::Write];

    /// "triad".
    pub fn label(self) -> &'static str {
        match self {
            Op::Copy => "copy",
            Op::Scale => "scale",
            Op::Add => "add",
            Op::Triad => "triad",
            Op::Read => "read",
            Op::Write => "write",
        }
    }

    /// Arrays read plus arrays written per element.
    pub fn arrays_touched(self) -> u64 {
        match self {
            Op::Copy | Op::Scale => 2,
            Op::Add | Op::Triad => 3,
            Op::Read | Op::Write => 1,
        }
    }

    /// Bytes one pass over `n` doubles moves (reads plus writes).
    pub fn bytes(self, n: u64) -> u64 {
        self.arrays_touched() * n * 8
    }

    /// Values of (a, b, c) after a pass on uniform arrays, and the index of the array written.
    pub fn apply(self, [a, b, c]: [f64; 3]) -> ([f64; 3], Option<usize>) {
        match self {
            Op::Copy => ([a, b, a], Some(2)),
            Op::Scale => ([a, SCALAR * c, c], Some(1)),
            Op::Add => ([a, b, a + b], Some(2)),
            Op::Triad => ([b + SCALAR * c, b, c], Some(0)),
            Op::Read => ([a, b, c], None),
            Op::Write => ([a, b, WRITE_VALUE], Some(2)),
        }
    }
}

/// How the grid covers the arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GridShape {
    /// As many blocks as fit on the SMs at once (one wave), each looping over tiles.
    Persistent,
    /// One block per tile: the grid covers the arrays once, blocks start as others retire.
    Flat,
}

impl GridShape {
    /// Both shapes, persistent first.
    pub const ALL: [GridShape; 2] = [GridShape::Persistent, GridShape::Flat];

    /// "persistent" or "flat".
    pub fn label(self) -> &'static str {
        match self {
            GridShape::Persistent => "persistent",
            GridShape::Flat => "flat",
        }
    }
}

/// One configuration: threads per block, vectors per thread per tile, cache hint, grid shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Threads per block.
    pub threads: u32,
    /// 16-byte vectors each thread loads per array before using them.
    pub unroll: u32,
    /// 0: plain accesses; 1: evict-first (`ld/st.global.cs`); 2: loads that skip L1 and fetch
    /// 256-byte blocks into L2 (`ld.global.L1::no_allocate.L2::256B`), plain stores.
    pub hint: u32,
    /// Persistent grid-stride blocks or one block per tile.
    pub shape: GridShape,
}

impl Config {
    /// "threads=256/unroll=4/plain" (persistent) or "threads=256/unroll=4/plain/flat".
    pub fn label(&self) -> String {
        let base = format!("threads={}/unroll={}/{}", self.threads, self.unroll, hint_label(self.hint));
        match self.shape {
            GridShape::Persistent => base,
            GridShape::Flat => format!("{base}/flat"),
        }
    }
}

/// Cache hints, in search order.
pub const HINTS: [u32; 3] = [0, 1, 2];

/// "plain", "evict_first" or "l2_prefetch_256b".
pub fn hint_label(hint: u32) -> &'static str {
    match hint {
        0 => "plain",
        1 => "evict_first",
        _ => "l2_prefetch_256b",
    }
}

/// Kernel of `op` at `c`: "dram_triad_u4_h1".
pub fn kernel_name(op: Op, c: &Config) -> String {
    format!("dram_{}_u{}_h{}", op.label(), c.unroll, c.hint)
}

/// Threads per block the search tries.
pub const SEARCH_THREADS: [u32; 4] = [128, 256, 512, 1024];
/// Unrolls the search tries (in `kernels/dram.cu`).
pub const SEARCH_UNROLLS: [u32; 3] = [2, 4, 8];
/// Threads per block of the full sweep.
pub const SWEEP_THREADS: [u32; 6] = [32, 64, 128, 256, 512, 1024];
/// Unrolls of the full sweep (unroll 1 is in `kernels/dram_sweep.cu`).
pub const SWEEP_UNROLLS: [u32; 4] = [1, 2, 4, 8];
/// Repeats per configuration in the search.
pub const SEARCH_REPEATS: usize = 3;
/// A configuration within this fraction of the best is as good (simpler ones come first).
pub const SEARCH_TOLERANCE: f64 = 0.0025;
/// Smallest array of the size sweep, doubles (8 MiB, as seed 002's 2^20 elements).
pub const SWEEP_MIN_ELEMENTS: u64 = 1 << 20;

/// The search space, simplest first: persistent before flat grids, fewer threads, smaller
/// unroll, plain before the hints.
pub fn search_space() -> Vec<Config> {
    let mut v = Vec::new();
    for shape in GridShape::ALL {
        for threads in SEARCH_THREADS {
            for unroll in SEARCH_UNROLLS {
                for hint in HINTS {
                    v.push(Config { threads, unroll, hint, shape });
                }
            }
        }
    }
    v
}

/// Doubles per array: 32 L2s, at least 256 MiB and at most 2 GiB, and no more than a quarter
/// of the free memory (three arrays); a multiple of 2^18 doubles (2 MiB).
pub fn array_len(gpu: &GpuIdentity, free_bytes: u64) -> u64 {
    let want = (32 * gpu.l2_bytes).clamp(256 << 20, 2 << 30).min(free_bytes / 4);
    (want / 8) / (1 << 18) * (1 << 18)
}

/// Doubles per array of the full profile: [`SWEEP_MAX_ARRAY_BYTES`], or a quarter of the free
/// memory, or [`array_len`] where that is larger.
pub fn sweep_array_len(gpu: &GpuIdentity, free_bytes: u64) -> u64 {
    let want = SWEEP_MAX_ARRAY_BYTES.min(free_bytes / 4);
    ((want / 8) / (1 << 18) * (1 << 18)).max(array_len(gpu, free_bytes))
}

/// Largest array of the full profile's size sweep: twice STREAM's customary 2^28 doubles, so
/// that the sweep shows whether longer kernels still gain.
pub const SWEEP_MAX_ARRAY_BYTES: u64 = 4 << 30;

/// Array lengths of the size sweep: powers of two from [`SWEEP_MIN_ELEMENTS`] below `n`, then `n`.
pub fn sweep_sizes(n: u64) -> Vec<u64> {
    let mut v: Vec<u64> =
        std::iter::successors(Some(SWEEP_MIN_ELEMENTS), |s| Some(s * 2)).take_while(|s| *s < n).collect();
    v.push(n);
    v
}

/// GB/s of `bytes` moved in `ns`.
pub fn gbps(bytes: u64, ns: f64) -> f64 {
    bytes as f64 / ns
}

/// Sum of the 32-bit words of `elements` doubles of value `v` (all the passes of the read
/// stream together), wrapping as the kernel does.
pub fn read_checksum(v: f64, elements: u128) -> u32 {
    let bits = v.to_bits();
    let per_element = (bits as u32).wrapping_add((bits >> 32) as u32) as u128;
    ((per_element * elements) % (1u128 << 32)) as u32
}

/// The configuration search of one op: every configuration by single launches, then the
/// finalists by batched launches.
struct SearchRecord {
    trials: Vec<Trial<Config>>,
    refined: Vec<Trial<Config>>,
}

struct Arrays {
    bufs: [CudaSlice<f64>; 3],
    n: u64,
    values: [f64; 3],
    total: CudaSlice<u32>,
}

struct Streams {
    regression: Arc<CompiledKernels>,
    sweep: Option<Arc<CompiledKernels>>,
}

impl Streams {
    fn function(&self, op: Op, c: &Config) -> Result<CudaFunction> {
        let name = kernel_name(op, c);
        match (self.regression.function(&name), &self.sweep) {
            (Ok(f), _) => Ok(f),
            (Err(_), Some(s)) => s.function(&name),
            (Err(e), None) => Err(e),
        }
    }

    fn provenance(&self) -> Vec<&crate::results::KernelProvenance> {
        std::iter::once(&self.regression.provenance).chain(self.sweep.as_ref().map(|s| &s.provenance)).collect()
    }
}

/// Blocks of a grid of `shape` over `n` doubles: `per_sm` resident blocks on every SM, or one
/// block per tile of `unroll` x `threads` 16-byte vectors.
pub fn grid_blocks(shape: GridShape, sm_count: u32, per_sm: u32, n: u64, threads: u32, unroll: u32) -> u32 {
    match shape {
        GridShape::Persistent => sm_count * per_sm,
        GridShape::Flat => {
            (n / 2).div_ceil(u64::from(threads) * u64::from(unroll)).clamp(1, u32::MAX as u64 / 2) as u32
        }
    }
}

/// The grid of `f` at `c` over `n` doubles, or `None` when no block fits on an SM.
fn grid(gpu: &GpuIdentity, f: &CudaFunction, c: &Config, n: u64) -> Result<Option<LaunchConfig>> {
    let per_sm = f
        .occupancy_max_active_blocks_per_multiprocessor(c.threads, 0, None)
        .cuda_context(|| "asking the driver for a kernel's occupancy".into())?;
    Ok((per_sm > 0).then_some(LaunchConfig {
        grid_dim: (grid_blocks(c.shape, gpu.sm_count, per_sm, n, c.threads, c.unroll), 1, 1),
        block_dim: (c.threads, 1, 1),
        shared_mem_bytes: 0,
    }))
}

fn launch(
    gpu: &Gpu,
    f: &CudaFunction,
    op: Op,
    arrays: &Arrays,
    n: u64,
    cfg: LaunchConfig,
    probe: &Probe,
) -> Result<()> {
    let n2 = n / 2;
    let [a, b, c] = &arrays.bufs;
    let mut l = gpu.stream().launch_builder(f);
    match op {
        Op::Copy => l.arg(a).arg(c),
        Op::Scale => l.arg(b).arg(c).arg(&SCALAR),
        Op::Add => l.arg(a).arg(b).arg(c),
        Op::Triad => l.arg(a).arg(b).arg(c).arg(&SCALAR),
        Op::Read => l.arg(a).arg(&arrays.total),
        Op::Write => l.arg(c).arg(&WRITE_VALUE),
    };
    l.arg(&n2).arg(probe.buffer());
    // SAFETY: the argument lists match kernels/dram_ops.cuh; n2 vectors lie inside every array.
    unsafe { l.launch(cfg) }.cuda_context(|| format!("launching dram_{}", op.label()))?;
    Ok(())
}

/// GB/s of `launches` back-to-back launches of `op` at `c` over `n` doubles, or NaN when `c`
/// cannot run.
#[allow(clippy::too_many_arguments)]
fn measure(
    gpu: &Gpu,
    s: &Streams,
    op: Op,
    c: &Config,
    arrays: &Arrays,
    timer: &EventTimer,
    probe: &Probe,
    launches: u32,
) -> Result<f64> {
    let f = s.function(op, c)?;
    let Some(cfg) = grid(gpu.identity(), &f, c, arrays.n)? else {
        return Ok(f64::NAN);
    };
    timer.start()?;
    for _ in 0..launches.max(1) {
        launch(gpu, &f, op, arrays, arrays.n, cfg, probe)?;
    }
    Ok(gbps(op.bytes(arrays.n) * u64::from(launches.max(1)), timer.stop_ns()?))
}

/// Configurations the search measures again, as the benchmark runs them, before choosing.
pub const REFINE_CANDIDATES: usize = 4;
/// Back-to-back launches per measurement of a finalist.
pub const REFINE_LAUNCHES: u32 = 4;

/// Indices of the `k` best-scoring trials (ties to the earlier), in sweep order.
pub fn finalists<C>(trials: &[Trial<C>], k: usize) -> Vec<usize> {
    let mut scored: Vec<(usize, f64)> = trials.iter().enumerate().filter_map(|(i, t)| Some((i, t.score()?))).collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut v: Vec<usize> = scored.into_iter().take(k).map(|(i, _)| i).collect();
    v.sort_unstable();
    v
}

fn verify(gpu: &Gpu, compiled: &CompiledKernels, arrays: &mut Arrays, op: Op, elements_read: u128) -> Result<()> {
    let what = format!("dram/{}", op.label());
    if op == Op::Read {
        let got = gpu.download(&arrays.total, "the read checksum")?[0];
        let expected = read_checksum(arrays.values[0], elements_read);
        if got != expected {
            return Err(Error::Verification {
                what,
                detail: format!("the words of a sum to {got:#x} over {elements_read} elements, expected {expected:#x}"),
            });
        }
        return Ok(());
    }
    let (values, written) = op.apply(arrays.values);
    arrays.values = values;
    let Some(w) = written else { return Ok(()) };
    let check = compiled.function("dram_mismatches")?;
    let bad = gpu.alloc_zeros::<u64>(1, "the mismatch counter")?;
    let cfg = full_grid(gpu.identity(), 256);
    let (n, expected) = (arrays.n, values[w]);
    // SAFETY: dram_mismatches(const double*, u64, double, u64*).
    unsafe { gpu.stream().launch_builder(&check).arg(&arrays.bufs[w]).arg(&n).arg(&expected).arg(&bad).launch(cfg) }
        .cuda_context(|| "launching dram_mismatches".into())?;
    let bad = gpu.download(&bad, "the mismatch counter")?[0];
    if bad != 0 {
        return Err(Error::Verification { what, detail: format!("{bad} of {n} elements differ from {expected}") });
    }
    Ok(())
}

/// The DRAM family: `dram/<op>` for copy, scale, add, triad, read and write at the searched
/// configuration; under the full profile also `dram/<op>/threads`, `dram/<op>/size` and
/// `dram/<op>/unroll`.
pub fn run(suite: &mut Suite) -> Result<()> {
    let profile = suite.profile();
    let ops: Vec<Op> = match profile {
        Profile::Quick => vec![Op::Triad, Op::Read],
        Profile::Default | Profile::Full => Op::ALL.to_vec(),
    };
    if profile != Profile::Full && !ops.iter().any(|op| suite.wants(op.label())) {
        return Ok(());
    }
    let gpu = suite.gpu();
    let identity = gpu.identity().clone();
    let streams = Streams {
        regression: gpu.kernels(&kernels::DRAM)?,
        sweep: if profile == Profile::Full { Some(gpu.kernels(&kernels::DRAM_SWEEP)?) } else { None },
    };
    let (free, _) = gpu.memory_info()?;
    let n = match profile {
        Profile::Full => sweep_array_len(&identity, free as u64),
        _ => array_len(&identity, free as u64),
    };
    if n == 0 {
        return Err(Error::OutOfMemory { context: "sizing the DRAM arrays".into(), bytes: 3 * (256 << 20) });
    }
    let mut arrays = Arrays {
        bufs: [
            gpu.alloc_zeros::<f64>(n as usize, "DRAM array a")?,
            gpu.alloc_zeros::<f64>(n as usize, "DRAM array b")?,
            gpu.alloc_zeros::<f64>(n as usize, "DRAM array c")?,
        ],
        n,
        values: INITIAL,
        total: gpu.alloc_zeros::<u32>(1, "the read checksum")?,
    };
    let init = streams.regression.function("dram_init")?;
    let [va, vb, vc] = INITIAL;
    let cfg = full_grid(&identity, 256);
    // SAFETY: dram_init(double*, double*, double*, u64, double, double, double) writes n elements.
    unsafe {
        gpu.stream()
            .launch_builder(&init)
            .arg(&arrays.bufs[0])
            .arg(&arrays.bufs[1])
            .arg(&arrays.bufs[2])
            .arg(&n)
            .arg(&va)
            .arg(&vb)
            .arg(&vc)
            .launch(cfg)
    }
    .cuda_context(|| "launching dram_init".into())?;
    let peak = identity.peak_dram_bytes_per_s() / 1e9;

    for op in ops {
        let wanted = suite.wants(op.label());
        let sweeping = profile == Profile::Full
            && ["threads", "size", "unroll", "grid"].iter().any(|s| suite.wants(&format!("{}/{s}", op.label())));
        if !wanted && !sweeping {
            continue;
        }
        let gpu = suite.gpu();
        let probe = Probe::new(gpu)?;
        let timer = EventTimer::new(gpu.stream())?;
        let repeats = if profile == Profile::Quick { 1 } else { SEARCH_REPEATS };
        let what = format!("dram/{}", op.label());
        let (trials, _) = search::run_and_choose(&what, &search_space(), repeats, SEARCH_TOLERANCE, |c| {
            measure(gpu, &streams, op, c, &arrays, &timer, &probe, 1)
        })?;
        // Single launches rank near-equal configurations by noise, and a configuration can
        // time differently alone than back to back: the finalists are measured again the way
        // the benchmark runs them.
        let finals: Vec<Config> = finalists(&trials, REFINE_CANDIDATES).into_iter().map(|i| trials[i].config).collect();
        let (refined, best) = search::run_and_choose(&what, &finals, repeats.min(2), SEARCH_TOLERANCE, |c| {
            measure(gpu, &streams, op, c, &arrays, &timer, &probe, REFINE_LAUNCHES)
        })?;
        let best = refined[best].config;
        let search = SearchRecord { trials, refined };
        let mut elements_read = 0u128;
        gpu.zero(&mut arrays.total, "the read checksum")?;
        if wanted {
            elements_read += bench_op(suite, &streams, &arrays, op, best, peak, &search)?;
        }
        if sweeping {
            elements_read += sweeps(suite, &streams, &arrays, op, best, peak)?;
        }
        verify(suite.gpu(), &streams.regression, &mut arrays, op, elements_read)?;
    }
    Ok(())
}

/// The regression benchmark of `op` at `c`; returns the elements its launches covered.
fn bench_op(
    suite: &mut Suite,
    streams: &Streams,
    arrays: &Arrays,
    op: Op,
    c: Config,
    peak: f64,
    search: &SearchRecord,
) -> Result<u128> {
    let gpu = suite.gpu();
    let f = streams.function(op, &c)?;
    let cfg = grid(gpu.identity(), &f, &c, arrays.n)?.ok_or_else(|| Error::Verification {
        what: format!("dram/{}", op.label()),
        detail: format!("the chosen configuration {} no longer fits on an SM", c.label()),
    })?;
    let mut probe = Probe::new(gpu)?;
    let timer = EventTimer::new(gpu.stream())?;
    let bytes = op.bytes(arrays.n);
    let bench = Bench::new(op.label())
        .param("array_bytes", arrays.n * 8)
        .param("bytes_per_pass", bytes)
        .param("peak_gbps", peak)
        .chosen("threads_per_block", c.threads)
        .chosen("unroll", c.unroll)
        .chosen("hint", hint_label(c.hint))
        .chosen("grid", c.shape.label())
        .chosen("blocks", cfg.grid_dim.0)
        .chosen("config", c.label())
        .chosen("search", search::to_json(&search.trials, Config::label))
        .chosen("refined", search::to_json(&search.refined, Config::label))
        .metric("bandwidth", "GB/s", Better::Higher, ClockDomain::Memory)
        .metric("efficiency", "%", Better::Higher, ClockDomain::Memory)
        .kernels(&streams.provenance());
    let mut launches = 0u64;
    suite.bench(bench, |gpu, iters| {
        probe.reset_counters(gpu)?;
        timer.start()?;
        for _ in 0..iters {
            launch(gpu, &f, op, arrays, arrays.n, cfg, &probe)?;
        }
        let elapsed = timer.stop_ns()?;
        launches += iters;
        let bw = gbps(bytes * iters, elapsed);
        Ok(Sample::clocked(elapsed, vec![bw, 100.0 * bw / peak], probe.read(gpu)?.clock()))
    })?;
    Ok(launches as u128 * arrays.n as u128)
}

/// One sweep point: a kernel, its grid and the doubles it covers.
struct Point {
    label: String,
    f: CudaFunction,
    cfg: LaunchConfig,
    n: u64,
}

/// The full profile's sweeps of `op` around `best`; returns the elements their launches covered.
fn sweeps(suite: &mut Suite, streams: &Streams, arrays: &Arrays, op: Op, best: Config, peak: f64) -> Result<u128> {
    let mut elements = 0u128;
    let identity = suite.gpu().identity().clone();
    let mut threads = Vec::new();
    for t in SWEEP_THREADS {
        let c = Config { threads: t, ..best };
        let f = streams.function(op, &c)?;
        if let Some(cfg) = grid(&identity, &f, &c, arrays.n)? {
            threads.push(Point { label: format!("threads={t}"), f, cfg, n: arrays.n });
        }
    }
    let mut sizes = Vec::new();
    let f = streams.function(op, &best)?;
    for n in sweep_sizes(arrays.n) {
        if let Some(cfg) = grid(&identity, &f, &best, n)? {
            sizes.push(Point { label: format!("bytes={}", super::size_label(n * 8)), f: f.clone(), cfg, n });
        }
    }
    let mut unrolls = Vec::new();
    for unroll in SWEEP_UNROLLS {
        for hint in HINTS {
            let c = Config { unroll, hint, ..best };
            let f = streams.function(op, &c)?;
            if let Some(cfg) = grid(&identity, &f, &c, arrays.n)? {
                unrolls.push(Point { label: format!("unroll={unroll}/{}", hint_label(hint)), f, cfg, n: arrays.n });
            }
        }
    }
    let mut shapes = Vec::new();
    for shape in GridShape::ALL {
        let c = Config { shape, ..best };
        if let Some(cfg) = grid(&identity, &f, &c, arrays.n)? {
            shapes.push(Point { label: format!("grid={}", shape.label()), f: f.clone(), cfg, n: arrays.n });
        }
    }
    for (sweep, points) in [("threads", threads), ("size", sizes), ("unroll", unrolls), ("grid", shapes)] {
        let name = format!("{}/{sweep}", op.label());
        if !suite.wants(&name) || points.is_empty() {
            continue;
        }
        let gpu = suite.gpu();
        let mut probe = Probe::new(gpu)?;
        let timer = EventTimer::new(gpu.stream())?;
        let mut bench = Bench::new(name)
            .param("peak_gbps", peak)
            .param("threads_per_block", best.threads)
            .param("unroll", best.unroll)
            .param("hint", hint_label(best.hint))
            .param("grid", best.shape.label())
            .kernels(&streams.provenance());
        for p in &points {
            bench = bench.metric(p.label.clone(), "GB/s", Better::Higher, ClockDomain::Memory);
        }
        suite.bench(bench, |gpu, iters| {
            probe.reset_counters(gpu)?;
            let mut values = Vec::with_capacity(points.len());
            let mut elapsed = 0.0;
            for p in &points {
                timer.start()?;
                for _ in 0..iters {
                    launch(gpu, &p.f, op, arrays, p.n, p.cfg, &probe)?;
                }
                let t = timer.stop_ns()?;
                elapsed += t;
                elements += iters as u128 * p.n as u128;
                values.push(gbps(op.bytes(p.n) * iters, t));
            }
            Ok(Sample::clocked(elapsed, values, probe.read(gpu)?.clock()))
        })?;
    }
    Ok(elements)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_count_reads_and_writes() {
        assert_eq!(Op::Copy.bytes(1000), 16_000);
        assert_eq!(Op::Triad.bytes(1000), 24_000);
        assert_eq!(Op::Read.bytes(1000), 8_000);
        assert_eq!(Op::Write.bytes(1000), 8_000);
    }

    #[test]
    fn values_follow_the_stream_recurrence_and_every_op_is_idempotent() {
        let mut v = INITIAL;
        let mut written = Vec::new();
        for op in Op::ALL {
            let (next, w) = op.apply(v);
            v = next;
            written.push(w);
        }
        // copy c = 1; scale b = 3 c = 3; add c = 1 + 3 = 4; triad a = 3 + 3 * 4 = 15; write c = 7
        assert_eq!(v, [15.0, 3.0, 7.0]);
        assert_eq!(written, vec![Some(2), Some(1), Some(2), Some(0), None, Some(2)]);
        for op in Op::ALL {
            let once = op.apply(INITIAL).0;
            assert_eq!(op.apply(once).0, once, "{}", op.label());
        }
    }

    #[test]
    fn read_checksum_sums_words_modulo_2_32() {
        // 1.0 = 0x3ff00000_00000000: words 0 and 0x3ff00000
        assert_eq!(read_checksum(1.0, 1), 0x3ff0_0000);
        assert_eq!(read_checksum(1.0, 16), (0x3ff0_0000u64 * 16 % (1 << 32)) as u32);
        // many passes wrap like the kernel's u32 atomics
        let n = 1000u128 << 27;
        assert_eq!(read_checksum(15.0, n), ((15f64.to_bits() >> 32) as u128 * n % (1 << 32)) as u32);
        assert_eq!(read_checksum(0.0, n), 0);
    }

    #[test]
    fn arrays_are_large_against_the_l2_and_fit_free_memory() {
        let mut g = crate::families::test_identity();
        g.l2_bytes = 50 << 20;
        assert_eq!(array_len(&g, 80 << 30) * 8, 1600 << 20);
        g.l2_bytes = 60 << 20;
        assert_eq!(array_len(&g, 140 << 30) * 8, 1920 << 20);
        g.l2_bytes = 1 << 20;
        assert_eq!(array_len(&g, 80 << 30) * 8, 256 << 20);
        g.l2_bytes = 128 << 20;
        assert_eq!(array_len(&g, 80 << 30) * 8, 2 << 30);
        // a quarter of 2 GiB free: 512 MiB
        g.l2_bytes = 50 << 20;
        assert_eq!(array_len(&g, 2 << 30) * 8, 512 << 20);
        assert_eq!(array_len(&g, 2 << 30) % (1 << 18), 0);
    }

    #[test]
    fn size_sweep_doubles_up_to_the_array() {
        let s = sweep_sizes(200 << 20);
        assert_eq!(s.first(), Some(&(1 << 20)));
        assert_eq!(s.last(), Some(&(200 << 20)));
        assert_eq!(s.len(), 9); // 1, 2, ..., 128 Mi, then 200 Mi
    }

    #[test]
    fn search_space_is_ordered_simplest_first() {
        let s = search_space();
        assert_eq!(s.len(), 2 * SEARCH_THREADS.len() * SEARCH_UNROLLS.len() * HINTS.len());
        let p = GridShape::Persistent;
        assert_eq!(s[0], Config { threads: 128, unroll: 2, hint: 0, shape: p });
        assert_eq!(s[1], Config { threads: 128, unroll: 2, hint: 1, shape: p });
        assert_eq!(kernel_name(Op::Triad, &s[1]), "dram_triad_u2_h1");
        assert_eq!(s[1].label(), "threads=128/unroll=2/evict_first");
        assert_eq!(s[2].label(), "threads=128/unroll=2/l2_prefetch_256b");
        let flat = s.iter().position(|c| c.shape == GridShape::Flat).unwrap();
        assert_eq!(flat, s.len() / 2);
        assert_eq!(s[flat].label(), "threads=128/unroll=2/plain/flat");
    }

    #[test]
    fn finalists_are_the_best_scores_in_sweep_order() {
        let t = |v: f64| Trial { config: (), values: vec![v] };
        let trials = vec![t(1.0), t(5.0), t(f64::NAN), t(4.0), t(5.0), t(2.0)];
        assert_eq!(finalists(&trials, 2), vec![1, 4]);
        assert_eq!(finalists(&trials, 3), vec![1, 3, 4]);
        assert_eq!(finalists(&trials, 10), vec![0, 1, 3, 4, 5]);
        assert!(finalists(&trials[2..3], 4).is_empty());
    }

    #[test]
    fn a_flat_grid_has_one_block_per_tile_a_persistent_one_a_wave() {
        // 2^27 doubles = 2^26 vectors; tiles of 256 threads x 4 vectors
        assert_eq!(grid_blocks(GridShape::Flat, 132, 8, 1 << 27, 256, 4), 1 << 16);
        assert_eq!(grid_blocks(GridShape::Flat, 132, 8, 1 << 27 | 2, 256, 4), (1 << 16) + 1);
        assert_eq!(grid_blocks(GridShape::Persistent, 132, 8, 1 << 27, 256, 4), 1056);
        assert_eq!(grid_blocks(GridShape::Flat, 132, 8, 2, 256, 4), 1);
    }

    #[test]
    fn bandwidth_is_bytes_over_ns_and_efficiency_uses_the_device_peak() {
        // a triad pass over 1 GiB arrays in 1 ms on an H100 SXM (3352 GB/s)
        let n = (1u64 << 30) / 8;
        let bw = gbps(Op::Triad.bytes(n), 1.0e6);
        assert!((bw - 3221.225472).abs() < 1e-6, "{bw}");
        let peak = crate::families::test_identity().peak_dram_bytes_per_s() / 1e9;
        assert!((100.0 * bw / peak - 96.09).abs() < 0.01, "{}", 100.0 * bw / peak);
    }
}
