//! How the instructions family launches and times its operations: latency chains in one warp,
//! throughput over per-SM windows, and the benchmarks built from them.

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::{
    Group, OPS, Op, REGRESSION_ILP, REGRESSION_WARPS, SENTINEL, SWEEP_ILPS, SWEEP_WARPS, cycles_per_op,
    latency_ops_per_round, latency_rounds, limit, rounds_for, source, throughput_work,
};
use crate::device::{CompiledKernels, EventTimer, Gpu};
use crate::error::{CudaResultExt, Result};
use crate::harness::{Bench, Probe, Profile, Suite};
use crate::kernels;
use crate::measure::SampleSum;
use crate::measure::per_sm::{self, Residency, SmWindows};
use crate::measure::{launch_size, limits};
use crate::results::{Better, ClockDomain, GpuIdentity, KernelClock};

struct Latency {
    op: Op,
    f: CudaFunction,
    rounds: u32,
    probe: Probe,
}

struct Throughput {
    op: Op,
    f: CudaFunction,
    residency: Residency,
    rounds: u32,
    windows: SmWindows,
    limit: Option<f64>,
}

struct Kernels {
    sink: CudaSlice<u64>,
}

impl Kernels {
    fn latency(&self, gpu: &Gpu, l: &Latency) -> Result<()> {
        let cfg =
            LaunchConfig { grid_dim: (1, 1, 1), block_dim: (gpu.identity().warp_size, 1, 1), shared_mem_bytes: 0 };
        let (a, b) = (l.op.a.bits(), l.op.b.bits());
        // SAFETY: inst_lat_<op>(u64, u64, u32, gb_probe*, u64*, u64); the sink holds a word per thread.
        unsafe {
            gpu.stream()
                .launch_builder(&l.f)
                .arg(&a)
                .arg(&b)
                .arg(&l.rounds)
                .arg(l.probe.buffer())
                .arg(&self.sink)
                .arg(&SENTINEL)
                .launch(cfg)
        }
        .cuda_context(|| format!("launching inst_lat_{}", l.op.name))?;
        Ok(())
    }

    fn throughput(
        &self,
        gpu: &Gpu,
        op: &Op,
        f: &CudaFunction,
        r: &Residency,
        rounds: u32,
        windows: &SmWindows,
    ) -> Result<()> {
        let cfg = r.launch(gpu.identity(), 0);
        let (a, b) = (op.a.bits(), op.b.bits());
        let slots = windows.slots();
        // SAFETY: inst_thr_<op>_ilp<k>(u64, u64, u32, gb_sm_window*, u32, u64*, u64); the sink
        // holds a word per thread of the largest grid (64 warps per SM).
        unsafe {
            gpu.stream()
                .launch_builder(f)
                .arg(&a)
                .arg(&b)
                .arg(&rounds)
                .arg(windows.buffer())
                .arg(&slots)
                .arg(&self.sink)
                .arg(&SENTINEL)
                .launch(cfg)
        }
        .cuda_context(|| format!("launching inst_thr_{}", op.name))?;
        Ok(())
    }
}

/// The instructions family: `instructions/latency` and `instructions/throughput` (single
/// instructions), `instructions/ieee` (division and square root; not in the quick profile), and
/// under the full profile `instructions/sweep/<op>` over ILP x warps.
pub fn run(suite: &mut Suite) -> Result<()> {
    let profile = suite.profile();
    let gpu = suite.gpu();
    let identity = gpu.identity().clone();
    let max_threads = identity.sm_count as usize * 2048;
    let k = Kernels { sink: gpu.alloc_zeros::<u64>(max_threads, "the result sink")? };

    let single: Vec<Op> = OPS.iter().copied().filter(|o| o.group == Group::Single).collect();
    let ieee: Vec<Op> = OPS.iter().copied().filter(|o| o.group == Group::Ieee).collect();

    if suite.wants("latency") {
        let compiled = suite.gpu().kernels(&source(Group::Single))?;
        latency_bench(suite, &k, "latency", &single, &compiled)?;
    }
    if suite.wants("throughput") {
        let compiled = suite.gpu().kernels(&source(Group::Single))?;
        throughput_bench(suite, &k, "throughput", &single, &compiled)?;
    }
    if profile != Profile::Quick && suite.wants("ieee") {
        let compiled = suite.gpu().kernels(&source(Group::Ieee))?;
        ieee_bench(suite, &k, &ieee, &compiled)?;
    }
    if profile == Profile::Full {
        for op in OPS {
            let name = format!("sweep/{}", op.name);
            if suite.wants(&name) {
                sweep_bench(suite, &k, &name, op)?;
            }
        }
    }
    Ok(())
}

fn make_latency(gpu: &Gpu, compiled: &CompiledKernels, op: Op) -> Result<Latency> {
    Ok(Latency {
        op,
        f: compiled.function(&format!("inst_lat_{}", op.name))?,
        rounds: latency_rounds(&op),
        probe: Probe::new(gpu)?,
    })
}

/// The largest of [`REGRESSION_WARPS`] at which `f` is resident, with its residency.
fn widest_residency(gpu: &GpuIdentity, f: &CudaFunction) -> Result<Option<Residency>> {
    for w in REGRESSION_WARPS {
        let r = Residency::new(w, gpu.warp_size);
        if r.fits(f, 0)? {
            return Ok(Some(r));
        }
    }
    Ok(None)
}

fn make_throughput(gpu: &Gpu, compiled: &CompiledKernels, op: Op, ilp: u32) -> Result<Option<Throughput>> {
    let identity = gpu.identity();
    let f = compiled.function(&format!("inst_thr_{}_ilp{ilp}", op.name))?;
    let fold =
        compiled.function("inst_fold").or_else(|_| gpu.kernels(&kernels::INSTRUCTIONS)?.function("inst_fold"))?;
    let Some(residency) = widest_residency(identity, &f)? else {
        return Ok(None);
    };
    let lim = limit(identity, &op);
    Ok(Some(Throughput {
        op,
        rounds: rounds_for(identity, &op, &residency, lim),
        f,
        residency,
        windows: SmWindows::new(gpu, fold)?,
        limit: lim,
    }))
}

fn run_latency(gpu: &Gpu, k: &Kernels, l: &mut Latency, iters: u64) -> Result<(f64, Option<KernelClock>)> {
    l.probe.reset_counters(gpu)?;
    for _ in 0..iters {
        k.latency(gpu, l)?;
    }
    let r = l.probe.read(gpu)?;
    Ok((cycles_per_op(r.cycles, r.count), r.clock()))
}

fn run_throughput(
    gpu: &Gpu,
    k: &Kernels,
    t: &mut Throughput,
    timer: &EventTimer,
    iters: u64,
) -> Result<(f64, f64, Option<KernelClock>)> {
    let Throughput { op, f, residency, rounds, windows, .. } = t;
    let work = throughput_work(gpu.identity(), op, residency, *rounds);
    let what = format!("instructions/{}", op.name);
    let (elapsed, totals) = per_sm::sample(gpu, windows, timer, iters, work, &what, |gpu, w| {
        k.throughput(gpu, op, f, residency, *rounds, w)
    })?;
    let rate = totals.rate_per_clock().map(|r| r.median).unwrap_or(f64::NAN);
    Ok((elapsed, rate, totals.clock()))
}

fn latency_bench(suite: &mut Suite, k: &Kernels, name: &str, ops: &[Op], compiled: &CompiledKernels) -> Result<()> {
    let gpu = suite.gpu();
    let mut lats = ops.iter().map(|o| make_latency(gpu, compiled, *o)).collect::<Result<Vec<_>>>()?;
    let timer = EventTimer::new(gpu.stream())?;
    let mut bench = Bench::new(name).param("warps", 1).kernels(&[&compiled.provenance]);
    for l in &lats {
        bench = bench
            .param(&format!("{}_ops_per_launch", l.op.name), l.rounds as u64 * latency_ops_per_round(&l.op) as u64);
        bench = bench.metric(l.op.name, "cycles", Better::Lower, ClockDomain::Sm);
    }
    suite.bench(bench, |gpu, iters| {
        timer.start()?;
        let mut sum = SampleSum::with_capacity(lats.len());
        for l in lats.iter_mut() {
            let (v, c) = run_latency(gpu, k, l, iters)?;
            sum.push(v);
            sum.clock(c);
        }
        Ok(sum.finish_after(timer.stop_ns()?))
    })
}

fn throughput_bench(suite: &mut Suite, k: &Kernels, name: &str, ops: &[Op], compiled: &CompiledKernels) -> Result<()> {
    let gpu = suite.gpu();
    let mut thrs = Vec::new();
    for op in ops {
        if let Some(t) = make_throughput(gpu, compiled, *op, REGRESSION_ILP)? {
            thrs.push(t);
        }
    }
    let timer = EventTimer::new(gpu.stream())?;
    let mut bench = Bench::new(name)
        .param("ilp", REGRESSION_ILP)
        .param(launch_size::WINDOW_PARAM, launch_size::scaled_window(super::THROUGHPUT_CYCLES))
        .kernels(&[&compiled.provenance]);
    for t in &thrs {
        bench = bench.param(&format!("{}_warps_per_sm", t.op.name), t.residency.warps_per_sm).metric(
            t.op.name,
            "op/clk/SM",
            Better::Higher,
            ClockDomain::Sm,
        );
        if let Some(l) = t.limit {
            bench = bench.param(&format!("{}_limit", t.op.name), l).metric(
                format!("{}_efficiency", t.op.name),
                "%",
                Better::Higher,
                ClockDomain::Sm,
            );
        }
    }
    suite.bench(bench, |gpu, iters| {
        let mut sum = SampleSum::new();
        for t in thrs.iter_mut() {
            let (e, rate, c) = run_throughput(gpu, k, t, &timer, iters)?;
            sum.add(e, c);
            sum.push(rate);
            if let Some(l) = t.limit {
                sum.push(limits::efficiency_percent(rate, Some(l)));
            }
        }
        Ok(sum.finish())
    })
}

fn ieee_bench(suite: &mut Suite, k: &Kernels, ops: &[Op], compiled: &CompiledKernels) -> Result<()> {
    let gpu = suite.gpu();
    let mut lats = ops.iter().map(|o| make_latency(gpu, compiled, *o)).collect::<Result<Vec<_>>>()?;
    let mut thrs = Vec::new();
    for op in ops {
        if let Some(t) = make_throughput(gpu, compiled, *op, REGRESSION_ILP)? {
            thrs.push(t);
        }
    }
    let timer = EventTimer::new(gpu.stream())?;
    let mut bench = Bench::new("ieee")
        .param("ilp", REGRESSION_ILP)
        .param(launch_size::WINDOW_PARAM, launch_size::scaled_window(super::THROUGHPUT_CYCLES))
        .kernels(&[&compiled.provenance]);
    for l in &lats {
        bench = bench.metric(format!("{}_latency", l.op.name), "cycles", Better::Lower, ClockDomain::Sm);
    }
    for t in &thrs {
        bench = bench.param(&format!("{}_warps_per_sm", t.op.name), t.residency.warps_per_sm).metric(
            format!("{}_throughput", t.op.name),
            "op/clk/SM",
            Better::Higher,
            ClockDomain::Sm,
        );
    }
    suite.bench(bench, |gpu, iters| {
        let mut sum = SampleSum::new();
        timer.start()?;
        for l in lats.iter_mut() {
            let (v, c) = run_latency(gpu, k, l, iters)?;
            sum.push(v);
            sum.clock(c);
        }
        sum.add(timer.stop_ns()?, None);
        for t in thrs.iter_mut() {
            let (e, rate, c) = run_throughput(gpu, k, t, &timer, iters)?;
            sum.add(e, c);
            sum.push(rate);
        }
        Ok(sum.finish())
    })
}

fn sweep_bench(suite: &mut Suite, k: &Kernels, name: &str, op: Op) -> Result<()> {
    let gpu = suite.gpu();
    let identity = gpu.identity().clone();
    let regression = gpu.kernels(&source(op.group))?;
    let sweep = gpu.kernels(&kernels::INSTRUCTIONS_SWEEP)?;
    let fold = gpu.kernels(&kernels::INSTRUCTIONS)?.function("inst_fold")?;
    let lim = limit(&identity, &op);
    let mut points = Vec::new();
    for ilp in SWEEP_ILPS {
        let kernel = format!("inst_thr_{}_ilp{ilp}", op.name);
        let f = regression.function(&kernel).or_else(|_| sweep.function(&kernel))?;
        for warps in SWEEP_WARPS {
            let residency = Residency::new(warps, identity.warp_size);
            if residency.fits(&f, 0)? {
                let t = Throughput {
                    op,
                    f: f.clone(),
                    residency,
                    rounds: rounds_for(&identity, &op, &residency, lim),
                    windows: SmWindows::new(gpu, fold.clone())?,
                    limit: lim,
                };
                points.push((ilp, t));
            }
        }
    }
    if points.is_empty() {
        return Ok(());
    }
    let timer = EventTimer::new(gpu.stream())?;
    let mut bench = Bench::new(name).kernels(&[&regression.provenance, &sweep.provenance]);
    if let Some(l) = lim {
        bench = bench.param("limit", l);
    }
    for (ilp, t) in &points {
        bench = bench.metric(
            format!("ilp={ilp}/warps={}", t.residency.warps_per_sm),
            "op/clk/SM",
            Better::Higher,
            ClockDomain::Sm,
        );
    }
    suite.bench(bench, |gpu, iters| {
        let mut sum = SampleSum::with_capacity(points.len());
        for (_, t) in points.iter_mut() {
            let (e, rate, c) = run_throughput(gpu, k, t, &timer, iters)?;
            sum.add(e, c);
            sum.push(rate);
        }
        Ok(sum.finish())
    })
}
