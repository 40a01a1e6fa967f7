//! Which sweeps a dissect run makes, derived from the device (L2 size, shared memory per SM,
//! free memory, constant memory), and the loop that runs them on any [`Backend`].
//!
//! Order: timer overhead; stride sweeps (fetch granularity of each path); footprint sweeps at
//! that granularity, refined around every knee; the L2 and DRAM latencies from every SM
//! ([`every_sm`]); per-access traces of the L1-like paths (their
//! capacity with the trace kernel's shared memory, the line, the sets); cold L2 traces; TLB
//! sweeps at strides 64 KiB .. 256 MiB; the L1 capacity under preferred carveouts; the shared
//! memory stride table; the constant caches.
//!
//! The L1-path kernels (ld.ca, ld.nc, texture) run at the preferred carveout
//! [`MAX_L1_CARVEOUT`]: the L1 and shared memory share one array, and without a preference the
//! driver may give a kernel that uses a little shared memory a small L1.

mod every_sm;
mod l1_traces;
mod points;

pub use points::{geometric, granularity_of, miss_window};

use super::backend::{Backend, ChaseRequest, TraceRequest};
use super::data::{Axis, BankPoint, Curve, DivergencePoint, HIST_BIN_CYCLES, Histogram, Path, Point, Sweeps, Trace};
use super::infer::{granularity, l2, levels, line_check, tlb, traces};
use crate::error::Result;

/// Preferred shared-memory carveout (percent of the most shared memory a block may have) of the
/// L1-path sweeps and traces: 0 asks for as much L1 as the kernel's own shared memory leaves.
pub const MAX_L1_CARVEOUT: u32 = 0;

/// The carveout a path's kernels run with: [`MAX_L1_CARVEOUT`] for the L1-like paths.
pub fn carveout_for(path: Path) -> Option<u32> {
    matches!(path, Path::Ca | Path::Nc | Path::Tex).then_some(MAX_L1_CARVEOUT)
}

/// How thorough a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Footprint points per octave of the coarse sweeps.
    pub points_per_octave: u32,
    /// Refinement rounds around each knee.
    pub zoom_rounds: u32,
    /// Points added between a knee's bracketing points per round.
    pub zoom_points: u64,
    /// Trace launches for the set analysis.
    pub set_traces: u32,
    /// Preferred carveouts, percent.
    pub carveouts: &'static [u32],
    /// log2 of the smallest and largest TLB strides.
    pub tlb_strides_log2: (u32, u32),
}

impl Options {
    /// The full characterisation.
    pub const DEFAULT: Options = Options {
        points_per_octave: 4,
        zoom_rounds: 2,
        zoom_points: 6,
        set_traces: 4,
        carveouts: &[0, 25, 50, 75, 100],
        tlb_strides_log2: (16, 28),
    };
    /// A smoke run: coarse grids, one refinement round.
    pub const QUICK: Options = Options {
        points_per_octave: 2,
        zoom_rounds: 1,
        zoom_points: 4,
        set_traces: 2,
        carveouts: &[0, 100],
        tlb_strides_log2: (18, 24),
    };
}

/// Where the run is, for a progress display.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Stage number, from 0.
    pub stage: usize,
    /// Number of stages.
    pub stages: usize,
    /// What is being measured.
    pub label: String,
}

/// Stage names, in order.
pub const STAGES: [&str; 9] = [
    "stride sweeps",
    "footprint sweeps",
    "every-SM latencies",
    "L1-path traces",
    "cold L2 traces",
    "TLB",
    "carveout",
    "shared memory",
    "constant",
];

/// Timed accesses of a chase point: a lap, at least 4096, at most 32768.
const MIN_STEPS: u64 = 4096;
const MAX_STEPS: u64 = 32768;
/// Timed accesses of a stride-sweep point.
const STRIDE_STEPS: u64 = 8192;
/// Rounds of bisection of the knees of a footprint sweep after its refinement.
const MAX_BISECTIONS: usize = 16;

struct Runner<'a, B: Backend> {
    b: &'a mut B,
    opts: Options,
    sweeps: Sweeps,
    progress: &'a mut dyn FnMut(&Progress),
    stage: usize,
}

/// What a run measured, and the error that stopped it early, if one did (the sweeps then
/// hold everything measured before it, so that nothing measured is lost).
pub struct Outcome {
    /// The sweeps.
    pub sweeps: Sweeps,
    /// The error that ended the run early.
    pub error: Option<crate::error::Error>,
}

/// Runs every sweep of the plan on `backend`.
pub fn run<B: Backend>(
    backend: &mut B,
    opts: Options,
    created_unix_s: u64,
    stack: Option<crate::results::Stack>,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Sweeps> {
    let out = run_all(backend, opts, created_unix_s, stack, progress);
    match out.error {
        Some(e) => Err(e),
        None => Ok(out.sweeps),
    }
}

/// Like [`run`], but keeps what was measured when a stage fails.
pub fn run_all<B: Backend>(
    backend: &mut B,
    opts: Options,
    created_unix_s: u64,
    stack: Option<crate::results::Stack>,
    progress: &mut dyn FnMut(&Progress),
) -> Outcome {
    let started = std::time::Instant::now();
    let device = backend.device().clone();
    let mut r = Runner { b: backend, opts, sweeps: Sweeps::new(device, stack, created_unix_s), progress, stage: 0 };
    let error = r.stages().err();
    r.sweeps.wall_time_s = started.elapsed().as_secs_f64();
    Outcome { sweeps: r.sweeps, error }
}

impl<B: Backend> Runner<'_, B> {
    fn stages(&mut self) -> Result<()> {
        self.sweeps.timer_overhead_cycles = self.b.timer_overhead()?;
        self.stride_sweeps()?;
        self.stage = 1;
        self.footprint_sweeps()?;
        self.stage = 2;
        self.every_sm()?;
        self.stage = 3;
        for path in [Path::Ca, Path::Nc, Path::Tex] {
            self.l1_traces(path)?;
        }
        self.stage = 4;
        self.cold_traces()?;
        self.stage = 5;
        self.tlb()?;
        self.stage = 6;
        self.carveouts()?;
        self.stage = 7;
        self.banks()?;
        self.stage = 8;
        self.constant()
    }

    fn tell(&mut self, label: String) {
        (self.progress)(&Progress { stage: self.stage, stages: STAGES.len(), label });
    }

    fn identity(&self) -> &crate::results::GpuIdentity {
        &self.sweeps.device.identity
    }

    fn chase(&mut self, path: Path, footprint: u64, stride: u64, carveout: Option<u32>) -> Result<Point> {
        let lap = footprint / stride;
        let l1_scale = footprint <= 2 * self.identity().smem_per_sm.max(1);
        let l2 = self.identity().l2_bytes.max(1);
        let warm = if path == Path::Const || l1_scale {
            2 * lap
        } else if footprint <= 2 * l2 {
            lap
        } else {
            0
        };
        let steps = lap.clamp(MIN_STEPS, MAX_STEPS);
        let carveout_percent = carveout.or(carveout_for(path));
        let req = ChaseRequest { path, footprint, stride, warm_steps: warm, steps, carveout_percent };
        self.b.chase(&req)
    }

    fn stride_sweeps(&mut self) -> Result<()> {
        let smem = self.identity().smem_per_sm.max(4096);
        let l2 = self.identity().l2_bytes.max(4096);
        let const_bytes = self.sweeps.device.const_bytes;
        // Even at the largest stride the lines visited must overflow the level many times over
        // (the initialisation touches only visited elements, and a level that does not replace
        // by LRU keeps some lines of a footprint only a few times its size): 64 x the shared
        // memory for the L1-like paths (8 x an L1 of 128-byte lines at a 1 KiB stride), 16 x
        // the L2 for the L2.
        let free = self.sweeps.device.free_bytes;
        let l1_span = (64 * smem).next_power_of_two();
        let l2_span = (16 * l2).next_power_of_two().min((free / 4).max(1).next_power_of_two() / 2);
        let plan = [
            (Path::Ca, l1_span),
            (Path::Nc, l1_span),
            (Path::Tex, l1_span),
            (Path::Cg, l2_span),
            (Path::Const, const_bytes),
        ];
        for (path, footprint) in plan {
            if footprint == 0 {
                continue;
            }
            let mut curve = Curve {
                id: format!("stride/{}", path.label()),
                path,
                axis: Axis::Stride,
                stride_bytes: 0,
                footprint_bytes: footprint,
                carveout_percent: carveout_for(path),
                points: Vec::new(),
            };
            let mut s = 4u64;
            while s <= 1024 && s < footprint {
                self.tell(format!("{} stride {s} B over {footprint} B", path.label()));
                let lap = footprint / s;
                let warm = if path == Path::Cg { 0 } else { lap.min(1 << 15) };
                let steps = lap.min(STRIDE_STEPS);
                let carveout_percent = carveout_for(path);
                let req = ChaseRequest { path, footprint, stride: s, warm_steps: warm, steps, carveout_percent };
                let mut p = self.b.chase(&req)?;
                p.x = s;
                curve.insert(p);
                s *= 2;
            }
            self.sweeps.curves.push(curve);
        }
        Ok(())
    }

    fn footprint_sweep(&mut self, id: String, path: Path, lo: u64, hi: u64, carveout: Option<u32>) -> Result<()> {
        let stride = granularity_of(&self.sweeps, path);
        self.footprint_sweep_at(id, path, lo, hi, carveout, stride)
    }

    fn footprint_sweep_at(
        &mut self,
        id: String,
        path: Path,
        lo: u64,
        hi: u64,
        carveout: Option<u32>,
        stride: u64,
    ) -> Result<()> {
        let mut curve = Curve {
            id: id.clone(),
            path,
            axis: Axis::Footprint,
            stride_bytes: stride,
            footprint_bytes: 0,
            carveout_percent: carveout.or(carveout_for(path)),
            points: Vec::new(),
        };
        for f in geometric(lo.max(stride), hi, self.opts.points_per_octave, stride) {
            self.tell(format!("{id} {f} B"));
            curve.insert(self.chase(path, f, stride, carveout)?);
        }
        for _ in 0..self.opts.zoom_rounds {
            let overhead = self.sweeps.timer_overhead_cycles;
            let mut brackets = levels::zoom_brackets(&curve, overhead, 0.005);
            if path == Path::Cg {
                // The L2 facts are the steps of the near and far shares: refine those too.
                brackets.extend(l2::zoom_brackets(&curve, overhead, 0.005));
                brackets.sort_unstable();
                brackets.dedup();
            }
            for (a, b) in brackets {
                let n = self.opts.zoom_points + 1;
                for k in 1..n {
                    let f = (a + (b - a) * k / n) / stride * stride;
                    if f <= a || curve.has(f) {
                        continue;
                    }
                    self.tell(format!("{id} {f} B (refining)"));
                    curve.insert(self.chase(path, f, stride, carveout)?);
                }
            }
        }
        if path != Path::Cg {
            // Every knee bisected down to one step: its last clean point is then the capacity,
            // not a guess among the footprints the bracket leaves possible.
            for _ in 0..MAX_BISECTIONS {
                let overhead = self.sweeps.timer_overhead_cycles;
                let mids: Vec<u64> = levels::fit(&curve, overhead)
                    .levels
                    .iter()
                    .filter_map(|l| l.capacity.as_ref())
                    .map(|k| (k.last_clean + (k.first_dirty - k.last_clean) / 2) / stride * stride)
                    .filter(|&f| !curve.has(f))
                    .collect();
                if mids.is_empty() {
                    break;
                }
                for f in mids {
                    self.tell(format!("{id} {f} B (bisecting)"));
                    curve.insert(self.chase(path, f, stride, carveout)?);
                }
            }
        }
        self.sweeps.curves.push(curve);
        Ok(())
    }

    fn footprint_sweeps(&mut self) -> Result<()> {
        let smem = self.identity().smem_per_sm.max(4096);
        let l2 = self.identity().l2_bytes.max(4096);
        let l1_top = (4 * smem).next_power_of_two();
        for path in [Path::Ca, Path::Nc, Path::Tex] {
            self.footprint_sweep(format!("size/{}", path.label()), path, 1024, l1_top, None)?;
        }
        self.footprint_sweep("size/cg".into(), Path::Cg, smem.next_power_of_two(), (4 * l2).next_power_of_two(), None)
    }

    fn trace(&mut self, req: TraceRequest, id: String) -> Result<Trace> {
        let latencies = self.b.trace(&req)?;
        Ok(Trace {
            id,
            path: req.path,
            footprint_bytes: req.footprint,
            stride_bytes: req.stride,
            warm_steps: req.warm_steps,
            cold: req.cold,
            carveout_percent: req.carveout_percent,
            latencies,
            order: Vec::new(),
        })
    }

    fn cold_traces(&mut self) -> Result<()> {
        let max = self.sweeps.device.max_trace_steps;
        self.tell("cold L2 trace at 4 B".into());
        let req = TraceRequest {
            path: Path::Cg,
            footprint: max * 4,
            stride: 4,
            warm_steps: 0,
            steps: max,
            cold: true,
            carveout_percent: None,
        };
        let t = self.trace(req, "cold/cg".into())?;
        let window = miss_window(&self.sweeps, "size/cg");
        let gran = window.and_then(|w| traces::cold_miss_bytes(&t, w)).map(|f| f.value).unwrap_or(32);
        self.sweeps.traces.push(t);
        self.tell(format!("cold L2 trace at {gran} B"));
        let req = TraceRequest { footprint: max * gran, stride: gran, ..req };
        let t = self.trace(req, "prefetch/cg".into())?;
        self.sweeps.traces.push(t);
        Ok(())
    }

    fn tlb(&mut self) -> Result<()> {
        let free = self.sweeps.device.free_bytes;
        let l2_lines = (self.identity().l2_bytes / 256).max(64);
        for k in self.opts.tlb_strides_log2.0..=self.opts.tlb_strides_log2.1 {
            let s = 1u64 << k;
            let top = (free / 2).min(s * l2_lines.min(1 << 16)) / s * s;
            if top < 8 * s {
                continue;
            }
            let id = format!("tlb/stride={s}");
            let mut curve = Curve {
                id: id.clone(),
                path: Path::Tlb,
                axis: Axis::Footprint,
                stride_bytes: s,
                footprint_bytes: 0,
                carveout_percent: None,
                points: Vec::new(),
            };
            let run = |r: &mut Self, curve: &mut Curve, f: u64| -> Result<()> {
                r.tell(format!("TLB stride {s} B over {f} B"));
                let lap = f / s;
                let req = ChaseRequest {
                    path: Path::Tlb,
                    footprint: f,
                    stride: s,
                    warm_steps: lap,
                    steps: lap.clamp(2048, 8192),
                    carveout_percent: None,
                };
                curve.insert(r.b.chase(&req)?);
                Ok(())
            };
            for f in geometric(4 * s, top, self.opts.points_per_octave, s) {
                run(self, &mut curve, f)?;
            }
            for _ in 0..self.opts.zoom_rounds {
                for (a, b) in tlb::zoom_brackets(&curve) {
                    let n = self.opts.zoom_points + 1;
                    for j in 1..n {
                        let f = (a + (b - a) * j / n) / s * s;
                        if f > a && !curve.has(f) {
                            run(self, &mut curve, f)?;
                        }
                    }
                }
            }
            self.sweeps.curves.push(curve);
        }
        Ok(())
    }

    fn carveouts(&mut self) -> Result<()> {
        let top = (2 * self.identity().smem_per_sm.max(4096)).next_power_of_two();
        for &p in self.opts.carveouts {
            self.footprint_sweep(format!("carveout={p}/ca"), Path::Ca, 1024, top, Some(p))?;
        }
        Ok(())
    }

    fn banks(&mut self) -> Result<()> {
        for s in 1..=64u32 {
            self.tell(format!("shared memory stride {s} words"));
            let cycles = self.b.smem_stride(s)?;
            self.sweeps.banks.push(BankPoint { stride_words: s, cycles });
        }
        Ok(())
    }

    fn constant(&mut self) -> Result<()> {
        let bytes = self.sweeps.device.const_bytes;
        if bytes < 1024 {
            return Ok(());
        }
        self.footprint_sweep("size/const".into(), Path::Const, 256, bytes, None)?;
        for d in [1u32, 2, 4, 8, 16, 32] {
            self.tell(format!("constant divergence {d}"));
            let cycles = self.b.const_divergent(d)?;
            self.sweeps.const_divergence.push(DivergencePoint { distinct: d, cycles });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
