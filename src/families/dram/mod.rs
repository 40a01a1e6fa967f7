//! DRAM bandwidth (Qiu et al. section V): STREAM copy, scale, add and triad, a read-only and a
//! write-only stream, on arrays far larger than the L2, each at the configuration (threads per
//! block, unroll, cache hint) a short search on the device finds best; results verified. Under
//! the full profile, sweeps over threads per block, array size and unroll x hint. A launch makes
//! as many passes over the arrays as last [`launch_size::MIN_LAUNCH_US`] at the theoretical
//! bandwidth ([`passes`]).
//! Kernels: `kernels/dram_ops.cuh`.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::full_grid;
use crate::device::{CompiledKernels, EventTimer, Gpu};
use crate::error::{CudaResultExt, Error, Result};
use crate::harness::{Bench, Probe, Profile, Sample, Suite};
use crate::kernels;
use crate::measure::launch_size;
use crate::measure::search::{self, Trial};
use crate::results::{Better, ClockDomain, GpuIdentity};

mod config;
#[cfg(test)]
mod tests;

pub use config::*;

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

/// How one launch covers the arrays: its grid and the passes it makes over `n` doubles.
#[derive(Debug, Clone, Copy)]
struct Launch {
    cfg: LaunchConfig,
    n: u64,
    passes: u32,
}

impl Launch {
    /// Bytes one launch of `op` moves: every pass's.
    fn bytes(&self, op: Op) -> u64 {
        op.bytes(self.n) * u64::from(self.passes)
    }

    /// Doubles one launch covers, counting every pass.
    fn elements(&self) -> u128 {
        u128::from(self.passes) * self.n as u128
    }
}

/// The launch of `f` (the kernel of `op`) at `c` over `n` doubles, with [`passes`] passes, or
/// `None` when no block fits on an SM.
fn grid(gpu: &GpuIdentity, f: &CudaFunction, c: &Config, op: Op, n: u64) -> Result<Option<Launch>> {
    let passes = passes(gpu, op, n);
    let per_sm = f
        .occupancy_max_active_blocks_per_multiprocessor(c.threads, 0, None)
        .cuda_context(|| "asking the driver for a kernel's occupancy".into())?;
    Ok((per_sm > 0).then_some(Launch {
        cfg: LaunchConfig {
            grid_dim: (grid_blocks(c.shape, gpu.sm_count, per_sm, n, c.threads, c.unroll, passes), 1, 1),
            block_dim: (c.threads, 1, 1),
            shared_mem_bytes: 0,
        },
        n,
        passes,
    }))
}

fn launch(gpu: &Gpu, f: &CudaFunction, op: Op, arrays: &Arrays, at: Launch, probe: &Probe) -> Result<()> {
    let n2 = at.n / 2;
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
    l.arg(&n2).arg(&at.passes).arg(probe.buffer());
    // SAFETY: the argument lists match kernels/dram_ops.cuh; n2 vectors lie inside every array.
    unsafe { l.launch(at.cfg) }.cuda_context(|| format!("launching dram_{}", op.label()))?;
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
    let Some(at) = grid(gpu.identity(), &f, c, op, arrays.n)? else {
        return Ok(f64::NAN);
    };
    timer.start()?;
    for _ in 0..launches.max(1) {
        launch(gpu, &f, op, arrays, at, probe)?;
    }
    Ok(gbps(at.bytes(op) * u64::from(launches.max(1)), timer.stop_ns()?))
}

fn verify(gpu: &Gpu, compiled: &CompiledKernels, arrays: &mut Arrays, op: Op, elements_read: u128) -> Result<()> {
    let what = format!("dram/{}", op.label());
    if op == Op::Read {
        let got = sum_slots(&gpu.download(&arrays.total, "the read checksum")?);
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
        total: gpu.alloc_zeros::<u32>(READ_SLOTS * READ_SLOT_STRIDE, "the read checksum")?,
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
    let at = grid(gpu.identity(), &f, &c, op, arrays.n)?.ok_or_else(|| Error::Verification {
        what: format!("dram/{}", op.label()),
        detail: format!("the chosen configuration {} no longer fits on an SM", c.label()),
    })?;
    let mut probe = Probe::new(gpu)?;
    let timer = EventTimer::new(gpu.stream())?;
    let bench = Bench::new(op.label())
        .param("array_bytes", arrays.n * 8)
        .param("bytes_per_pass", op.bytes(arrays.n))
        .param("passes_per_launch", at.passes)
        .param(launch_size::LAUNCH_PARAM, launch_size::MIN_LAUNCH_US)
        .param("peak_gbps", peak)
        .chosen("threads_per_block", c.threads)
        .chosen("unroll", c.unroll)
        .chosen("hint", hint_label(c.hint))
        .chosen("grid", c.shape.label())
        .chosen("blocks", at.cfg.grid_dim.0)
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
            launch(gpu, &f, op, arrays, at, &probe)?;
        }
        let elapsed = timer.stop_ns()?;
        launches += iters;
        let bw = gbps(at.bytes(op) * iters, elapsed);
        Ok(Sample::clocked(elapsed, vec![bw, 100.0 * bw / peak], probe.read(gpu)?.clock()))
    })?;
    Ok(launches as u128 * at.elements())
}

/// One sweep point: a kernel and how a launch of it covers the arrays.
struct Point {
    label: String,
    f: CudaFunction,
    at: Launch,
}

/// The full profile's sweeps of `op` around `best`; returns the elements their launches covered.
fn sweeps(suite: &mut Suite, streams: &Streams, arrays: &Arrays, op: Op, best: Config, peak: f64) -> Result<u128> {
    let mut elements = 0u128;
    let identity = suite.gpu().identity().clone();
    let at = |f: &CudaFunction, c: &Config, n: u64| grid(&identity, f, c, op, n);
    let mut threads = Vec::new();
    for t in SWEEP_THREADS {
        let c = Config { threads: t, ..best };
        let f = streams.function(op, &c)?;
        if let Some(at) = at(&f, &c, arrays.n)? {
            threads.push(Point { label: format!("threads={t}"), f, at });
        }
    }
    let mut sizes = Vec::new();
    let f = streams.function(op, &best)?;
    for n in sweep_sizes(arrays.n) {
        if let Some(at) = at(&f, &best, n)? {
            sizes.push(Point { label: format!("bytes={}", super::size_label(n * 8)), f: f.clone(), at });
        }
    }
    let mut unrolls = Vec::new();
    for unroll in SWEEP_UNROLLS {
        for hint in HINTS {
            let c = Config { unroll, hint, ..best };
            let f = streams.function(op, &c)?;
            if let Some(at) = at(&f, &c, arrays.n)? {
                unrolls.push(Point { label: format!("unroll={unroll}/{}", hint_label(hint)), f, at });
            }
        }
    }
    let mut shapes = Vec::new();
    for shape in GridShape::ALL {
        let c = Config { shape, ..best };
        if let Some(at) = at(&f, &c, arrays.n)? {
            shapes.push(Point { label: format!("grid={}", shape.label()), f: f.clone(), at });
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
            .param(launch_size::LAUNCH_PARAM, launch_size::MIN_LAUNCH_US)
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
                    launch(gpu, &p.f, op, arrays, p.at, &probe)?;
                }
                let t = timer.stop_ns()?;
                elapsed += t;
                elements += iters as u128 * p.at.elements();
                values.push(gbps(p.at.bytes(op) * iters, t));
            }
            Ok(Sample::clocked(elapsed, values, probe.read(gpu)?.clock()))
        })?;
    }
    Ok(elements)
}
