//! L2 read bandwidth (Qiu et al. section III): `ld.global.cg` streams over a footprint the L2
//! holds, GPU-wide GB/s over the launch's span (first warp start to last warp end, one
//! %globaltimer) and bytes per SM clock; and its scaling with the number of blocks. Four
//! footprints: `read`, every block over a quarter of the L2; `private`, every block over its own
//! slice (no line shared between SMs, so no request can be served together with another SM's);
//! `whole`, every block over three quarters of the L2 (more than one partition of a
//! two-partition L2); and `peak`, one 1024-thread block per SM, all reading the same footprint in
//! the same order, so that the L2 serves each line to many SMs at once: the most the L2 delivers
//! to the SMs, and the figure quoted as "L2 bandwidth" (the footprint is searched, see
//! [`peak_footprints`]).
//! Under the full profile, a footprint sweep from 1 MiB to beyond the L2 and a finer block sweep.
//!
//! Placement: the regression footprints have [`l2_placements`] copies spread over pages, and
//! each sample reads the next copy (after one untimed launch that loads it into the L2), so that
//! a run's median is taken over placements. The footprint sweep reads one buffer. What still
//! moves `private` from one process to the next is which SM reads which slice: block `b` reads
//! slice `b`, and the SM a block lands on differs between processes (slices given by `%smid`
//! leave runs 0.40 % apart where these take levels 1.39 % apart; docs, "How the verdict rule was
//! calibrated").
//! Kernels: `kernels/l2_bandwidth.cu`.

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::{full_grid, size_label};
use crate::device::{CompiledKernels, EventTimer, Gpu};
use crate::error::{CudaResultExt, Result};
use crate::harness::{Bench, Profile, Suite};
use crate::kernels;
use crate::measure::SampleSum;
use crate::measure::per_sm::{self, SmTotals, SmWindows};
use crate::measure::search;
use crate::placement::{Placements, placement_count};
use crate::results::{Better, ClockDomain, GpuIdentity};

/// Threads per block.
pub const THREADS: u32 = 256;
/// Threads per block of `l2_bandwidth/peak` (one block per SM: its warps ask for each line
/// together).
pub const PEAK_THREADS: u32 = 1024;
/// ILPs the search tries.
pub const SEARCH_ILPS: [u32; 3] = [2, 4, 8];
/// GPU-wide bytes per SM per clock assumed for sizing launches (about twice what L2 delivers, so
/// launches last about twice [`TARGET_NS`]).
pub const SIZING_BYTES_PER_CLK_PER_SM: f64 = 64.0;
/// Wall time one launch aims at at the sizing rate.
pub const TARGET_NS: f64 = 100_000.0;
/// Bit pattern no result is compared equal to in practice.
pub const SENTINEL: u32 = 0x9e37_79b9;
/// Copies of the regression footprints that samples rotate over: one per measured sample, so
/// that the measured samples (the last calls, after criterion's warm-up) read every copy once
/// (`GPUBENCH_PLACEMENTS` overrides it). One process read `l2_bandwidth/private` within 0.01 %
/// over its samples while processes on one card differed by 1.3-3.8 %, in a few discrete
/// levels: which SM reads which slice, not the footprint's pages (see the module's doc).
pub fn l2_placements(sample_size: usize) -> u64 {
    placement_count(sample_size.max(2) as u64)
}

/// Footprint of the regression set: the largest power of two at most a quarter of the L2, so
/// that it stays resident whatever the L2's partitioning and replacement.
pub fn regression_footprint(gpu: &GpuIdentity) -> u64 {
    let quarter = (gpu.l2_bytes / 4).max(1 << 16);
    1 << (63 - quarter.leading_zeros())
}

/// Footprint of `l2_bandwidth/whole`: the largest power of two at most three quarters of the L2,
/// larger than one partition of a two-partition L2, so that SMs also read lines homed in the far
/// partition.
pub fn whole_footprint(gpu: &GpuIdentity) -> u64 {
    let most = (gpu.l2_bytes / 4 * 3).max(1 << 16);
    1 << (63 - most.leading_zeros())
}

/// Vectors of each block's private slice in `l2_bandwidth/private`: the largest power of two such
/// that `blocks` slices fit in a quarter of the L2 (at least one vector per thread).
pub fn private_slice_vectors(gpu: &GpuIdentity, blocks: u32) -> u32 {
    let per_block = (gpu.l2_bytes / 4 / 16 / u64::from(blocks.max(1))).max(u64::from(THREADS));
    1 << (63 - per_block.leading_zeros())
}

/// Footprints the `peak` search tries: powers of two from 512 KiB, four times larger each, up to
/// the regression footprint (a quarter of the L2).
pub fn peak_footprints(gpu: &GpuIdentity) -> Vec<u64> {
    let top = regression_footprint(gpu);
    let mut v: Vec<u64> =
        std::iter::successors(Some(512u64 << 10), |s| Some(s * 4)).take_while(|s| *s <= top).collect();
    if v.is_empty() {
        v.push(top);
    }
    v
}

/// Footprints of the full sweep: powers of two from 1 MiB to the first at least four L2s.
pub fn sweep_footprints(gpu: &GpuIdentity) -> Vec<u64> {
    let top = (4 * gpu.l2_bytes).next_power_of_two().max(1 << 21);
    std::iter::successors(Some(1u64 << 20), |s| (*s < top).then_some(s * 2)).collect()
}

/// Block counts of the scaling benchmark: one block, a quarter, half, one and two blocks per SM,
/// and the full grid (`full` blocks), without duplicates.
pub fn regression_blocks(sm_count: u32, full: u32) -> Vec<u32> {
    let mut v = vec![1, (sm_count / 4).max(1), (sm_count / 2).max(1), sm_count, 2 * sm_count, full];
    v.retain(|b| *b <= full);
    v.sort_unstable();
    v.dedup();
    v
}

/// Block counts of the full sweep: powers of two up to the full grid, the SM multiples, the full grid.
pub fn sweep_blocks(sm_count: u32, full: u32) -> Vec<u32> {
    let mut v: Vec<u32> = std::iter::successors(Some(1u32), |b| Some(b * 2)).take_while(|b| *b < full).collect();
    v.extend((1..=full / sm_count.max(1)).map(|k| k * sm_count));
    v.push(full);
    v.sort_unstable();
    v.dedup();
    v
}

/// Iterations per launch so that `threads` threads at ILP `ilp` move about `target_bytes`.
pub fn iters_for(target_bytes: f64, threads: u64, ilp: u32) -> u32 {
    (target_bytes / (threads as f64 * ilp as f64 * 16.0)).ceil().clamp(1.0, u32::MAX as f64) as u32
}

/// The three metrics of a sample: GPU-wide GB/s, GPU-wide bytes per SM clock, median bytes per
/// clock per SM.
pub fn metrics(t: &SmTotals) -> [f64; 3] {
    [
        t.gpu_rate_per_s().map(|r| r / 1e9).unwrap_or(f64::NAN),
        t.gpu_rate_per_clock().unwrap_or(f64::NAN),
        t.rate_per_clock().map(|r| r.median).unwrap_or(f64::NAN),
    ]
}

struct Reader {
    compiled: std::sync::Arc<CompiledKernels>,
    fold: CudaFunction,
    /// Copies of the largest regression footprint; samples rotate over them.
    copies: Placements<u8>,
    /// The footprint sweep's buffer (full profile only), read in place.
    sweep: Option<CudaSlice<u8>>,
    sink: CudaSlice<u32>,
    warp_size: u32,
    target_bytes: f64,
    max_blocks: u32,
    sm_count: u32,
}

/// Who reads which lines: see `kernels/l2_bandwidth.cu`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The grid sweeps one footprint.
    Grid,
    /// Each block reads its own slice.
    Private,
    /// Every block reads the same slice in the same order.
    Shared,
}

/// One launch shape: kernel, grid, footprint (GPU-wide, or each block's slice), iterations.
struct Shape {
    f: CudaFunction,
    ilp: u32,
    blocks: u32,
    threads: u32,
    /// Vectors of the footprint (GPU-wide) or of each block's slice.
    vectors: u32,
    iters: u32,
    mode: Mode,
    /// Reads the sweep buffer instead of a copy.
    swept: bool,
}

/// Which buffer a launch reads: copy `i` of the regression footprints, or the sweep buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Copy(u64),
    Sweep,
}

impl Reader {
    fn shape(&self, ilp: u32, blocks: u32, footprint: u64) -> Result<Shape> {
        let threads = blocks as u64 * THREADS as u64;
        let full_threads = self.max_blocks as u64 * THREADS as u64;
        Ok(Shape {
            f: self.compiled.function(&format!("l2_read_ilp{ilp}"))?,
            ilp,
            blocks,
            threads: THREADS,
            vectors: (footprint / 16) as u32,
            // per-thread work of the full grid, so that small grids run as long per thread
            iters: iters_for(self.target_bytes, full_threads.max(threads), ilp),
            mode: Mode::Grid,
            swept: footprint > self.copies.words,
        })
    }

    /// `blocks` blocks, each reading only its own slice of `slice_vectors` vectors.
    fn local_shape(&self, ilp: u32, blocks: u32, slice_vectors: u32) -> Result<Shape> {
        self.slice_shape(Mode::Private, "l2_read_local_ilp", ilp, blocks, THREADS, slice_vectors)
    }

    /// One block of [`PEAK_THREADS`] per SM, all reading the same `footprint` bytes.
    fn peak_shape(&self, ilp: u32, footprint: u64) -> Result<Shape> {
        self.slice_shape(Mode::Shared, "l2_read_shared_ilp", ilp, self.sm_count, PEAK_THREADS, (footprint / 16) as u32)
    }

    fn slice_shape(
        &self,
        mode: Mode,
        kernel: &str,
        ilp: u32,
        blocks: u32,
        threads: u32,
        vectors: u32,
    ) -> Result<Shape> {
        Ok(Shape {
            f: self.compiled.function(&format!("{kernel}{ilp}"))?,
            ilp,
            blocks,
            threads,
            vectors,
            iters: iters_for(self.target_bytes, blocks as u64 * threads as u64, ilp),
            mode,
            swept: false,
        })
    }

    fn work(&self, s: &Shape) -> u64 {
        s.blocks as u64 * s.threads as u64 / self.warp_size as u64 * s.iters as u64 * s.ilp as u64 * 32 * 16
    }

    fn source(&self, s: &Shape, copy: u64) -> Source {
        if s.swept { Source::Sweep } else { Source::Copy(copy % self.copies.count) }
    }

    fn launch(&self, gpu: &Gpu, s: &Shape, source: Source, w: &SmWindows) -> Result<()> {
        let cfg = LaunchConfig { grid_dim: (s.blocks, 1, 1), block_dim: (s.threads, 1, 1), shared_mem_bytes: 0 };
        let vmask = s.vectors - 1;
        let slots = w.slots();
        let footprint =
            if s.mode == Mode::Private { s.blocks as u64 * s.vectors as u64 } else { s.vectors as u64 } * 16;
        let mut builder = gpu.stream().launch_builder(&s.f);
        let copy;
        match (source, &self.sweep) {
            (Source::Sweep, Some(sweep)) => {
                debug_assert!(footprint <= sweep.len() as u64);
                builder.arg(sweep);
            }
            (Source::Sweep, None) => {
                return Err(crate::error::Error::Usage(
                    "an L2 footprint beyond the copies without a sweep buffer".into(),
                ));
            }
            (Source::Copy(i), _) => {
                debug_assert!(footprint <= self.copies.words);
                copy = self.copies.copy(i);
                builder.arg(&copy);
            }
        }
        // SAFETY: l2_read_ilp<k> / l2_read_local_ilp<k> / l2_read_shared_ilp<k>(const uint4*, u32 mask, u32,
        // gb_sm_window*, u32, u32*, u32); every index is masked into the footprint (or into the
        // block's slice, and blocks x slice lies within a quarter of the L2), which lies inside
        // the copy (or the sweep buffer); the sink holds a word per thread of the largest grid.
        unsafe {
            builder.arg(&vmask).arg(&s.iters).arg(w.buffer()).arg(&slots).arg(&self.sink).arg(&SENTINEL).launch(cfg)
        }
        .cuda_context(|| "launching l2_read".into())?;
        Ok(())
    }

    /// GB/s of one launch (after one warm launch), for the search.
    fn measure(&self, gpu: &Gpu, s: &Shape, w: &mut SmWindows) -> Result<f64> {
        let source = self.source(s, 0);
        self.launch(gpu, s, source, w)?;
        w.reset(gpu)?;
        self.launch(gpu, s, source, w)?;
        w.fold(gpu)?;
        Ok(metrics(&w.read(gpu)?)[0])
    }
}

/// The L2 family: `l2_bandwidth/read` and `l2_bandwidth/scaling` at a footprint of a quarter of
/// the L2; under the full profile also `l2_bandwidth/footprint` and `l2_bandwidth/scaling_sweep`.
pub fn run(suite: &mut Suite) -> Result<()> {
    let profile = suite.profile();
    let names: &[&str] = match profile {
        Profile::Quick => &["read"],
        Profile::Default => &["read", "private", "whole", "peak", "scaling"],
        Profile::Full => &["read", "private", "whole", "peak", "scaling", "footprint", "scaling_sweep"],
    };
    if !names.iter().any(|n| suite.wants(n)) {
        return Ok(());
    }
    let gpu = suite.gpu();
    let identity = gpu.identity().clone();
    let compiled = gpu.kernels(&kernels::L2_BANDWIDTH)?;
    let full = full_grid(&identity, THREADS).grid_dim.0;
    let fill = compiled.function("l2_fill")?;
    let fill_all = |buf: &CudaSlice<u8>| -> Result<()> {
        let n = (buf.len() / 16) as u32;
        // SAFETY: l2_fill(uint4*, u32) writes n vectors of `buf`.
        unsafe { gpu.stream().launch_builder(&fill).arg(buf).arg(&n).launch(full_grid(&identity, 256)) }
            .cuda_context(|| "launching l2_fill".into())?;
        Ok(())
    };
    let copy_bytes = regression_footprint(&identity)
        .max(whole_footprint(&identity))
        .max(full as u64 * private_slice_vectors(&identity, full) as u64 * 16);
    let copies = Placements::<u8>::new(gpu, copy_bytes, l2_placements(suite.sample_size()), "the L2 footprints")?;
    fill_all(copies.buffer())?;
    let sweep = if profile == Profile::Full {
        let max_footprint = *sweep_footprints(&identity).last().unwrap_or(&(1 << 21));
        let buf = gpu.alloc_zeros::<u8>(max_footprint as usize, "the L2 footprint sweep")?;
        fill_all(&buf)?;
        Some(buf)
    } else {
        None
    };
    let reader = Reader {
        fold: compiled.function("l2_fold")?,
        compiled,
        copies,
        sweep,
        sink: gpu.alloc_zeros::<u32>(
            (full as usize * THREADS as usize).max(identity.sm_count as usize * PEAK_THREADS as usize),
            "the result sink",
        )?,
        sm_count: identity.sm_count,
        warp_size: identity.warp_size,
        target_bytes: SIZING_BYTES_PER_CLK_PER_SM
            * identity.sm_count as f64
            * identity.sm_clock_max_khz as f64
            * 1e3
            * TARGET_NS
            * 1e-9,
        max_blocks: full,
    };
    let footprint = regression_footprint(&identity);
    let mut windows = SmWindows::new(gpu, reader.fold.clone())?;
    let (ilp, search_json) = search_ilp(gpu, &reader, &mut windows, "read", |i| reader.shape(i, full, footprint))?;
    if suite.wants("read") {
        let s = reader.shape(ilp, full, footprint)?;
        let bench = read_bench("read", &[("footprint_bytes", footprint)], ilp, &s, search_json);
        points_bench(suite, &reader, bench, vec![(None, s)], true)?;
    }
    if profile != Profile::Quick && suite.wants("private") {
        let slice = private_slice_vectors(&identity, full);
        let make = |i| reader.local_shape(i, full, slice);
        let (best, search) = search_ilp(suite.gpu(), &reader, &mut windows, "private", make)?;
        let s = make(best)?;
        let params =
            [("footprint_bytes", full as u64 * slice as u64 * 16), ("slice_bytes_per_block", slice as u64 * 16)];
        points_bench(suite, &reader, read_bench("private", &params, best, &s, search), vec![(None, s)], true)?;
    }
    if profile != Profile::Quick && suite.wants("whole") {
        let fp = whole_footprint(&identity);
        let make = |i| reader.shape(i, full, fp);
        let (best, search) = search_ilp(suite.gpu(), &reader, &mut windows, "whole", make)?;
        let s = make(best)?;
        points_bench(
            suite,
            &reader,
            read_bench("whole", &[("footprint_bytes", fp)], best, &s, search),
            vec![(None, s)],
            true,
        )?;
    }
    if profile != Profile::Quick && suite.wants("peak") {
        peak(suite, &reader, &mut windows, &identity)?;
    }
    let scaling: Vec<(&str, Vec<u32>, Vec<u64>)> = match profile {
        Profile::Quick => vec![],
        Profile::Default => vec![("scaling", regression_blocks(identity.sm_count, full), vec![footprint])],
        Profile::Full => vec![
            ("scaling", regression_blocks(identity.sm_count, full), vec![footprint]),
            ("scaling_sweep", sweep_blocks(identity.sm_count, full), vec![footprint]),
            ("footprint", vec![full], sweep_footprints(&identity)),
        ],
    };
    for (name, blocks, footprints) in scaling {
        if !suite.wants(name) {
            continue;
        }
        let mut bench = Bench::new(name).chosen("ilp", ilp).param("threads_per_block", THREADS);
        let mut points = Vec::new();
        for &fp in &footprints {
            for &b in &blocks {
                let label = if footprints.len() > 1 { size_label(fp) } else { format!("blocks={b}") };
                bench = bench.metric(label.clone(), "GB/s", Better::Higher, ClockDomain::Sm);
                points.push((Some(label), reader.shape(ilp, b, fp)?));
            }
        }
        if footprints.len() == 1 {
            bench = bench.param("footprint_bytes", footprints[0]);
        } else {
            bench = bench.param("blocks", full);
        }
        points_bench(suite, &reader, bench, points, false)?;
    }
    Ok(())
}

/// The ILP of [`SEARCH_ILPS`] that reads fastest in the shapes `make` gives (single launches
/// after a warm one), and the search as JSON.
fn search_ilp(
    gpu: &Gpu,
    reader: &Reader,
    windows: &mut SmWindows,
    name: &str,
    make: impl Fn(u32) -> Result<Shape>,
) -> Result<(u32, serde_json::Value)> {
    let shapes = SEARCH_ILPS.iter().map(|&i| make(i)).collect::<Result<Vec<_>>>()?;
    let (trials, best) = search::run_and_choose(&format!("l2_bandwidth/{name}"), &SEARCH_ILPS, 3, 0.005, |i| {
        let s = &shapes[SEARCH_ILPS.iter().position(|x| x == i).unwrap_or(0)];
        reader.measure(gpu, s, windows)
    })?;
    Ok((trials[best].config, search::to_json(&trials, |i| format!("ilp={i}"))))
}

/// `l2_bandwidth/peak`: the (footprint, ILP) of [`peak_footprints`] x [`SEARCH_ILPS`] that reads
/// fastest, then measured like the others.
fn peak(suite: &mut Suite, reader: &Reader, windows: &mut SmWindows, identity: &GpuIdentity) -> Result<()> {
    let configs: Vec<(u64, u32)> =
        peak_footprints(identity).into_iter().flat_map(|f| SEARCH_ILPS.map(|i| (f, i))).collect();
    let shapes = configs.iter().map(|&(f, i)| reader.peak_shape(i, f)).collect::<Result<Vec<_>>>()?;
    let gpu = suite.gpu();
    let (trials, best) = search::run_and_choose("l2_bandwidth/peak", &configs, 3, 0.005, |c| {
        let s = &shapes[configs.iter().position(|x| x == c).unwrap_or(0)];
        reader.measure(gpu, s, windows)
    })?;
    let (footprint, ilp) = trials[best].config;
    let search = search::to_json(&trials, |(f, i)| format!("footprint={}/ilp={i}", size_label(*f)));
    let s = reader.peak_shape(ilp, footprint)?;
    // The footprint is chosen like the ILP: runs that chose different ones stay comparable.
    let bench = read_bench("peak", &[], ilp, &s, search)
        .param("threads_per_block", PEAK_THREADS)
        .chosen("footprint_bytes", footprint)
        .chosen("config", format!("footprint={}/ilp={ilp}", size_label(footprint)));
    points_bench(suite, reader, bench, vec![(None, s)], true)
}

/// A read benchmark of one launch shape at the searched `ilp`, with the three metrics of
/// [`metrics`].
fn read_bench(name: &str, params: &[(&str, u64)], ilp: u32, s: &Shape, search: serde_json::Value) -> Bench {
    let mut bench = Bench::new(name);
    for (k, v) in params {
        bench = bench.param(k, *v);
    }
    bench
        .chosen("ilp", ilp)
        .param("threads_per_block", THREADS)
        .param("blocks", s.blocks)
        .chosen("iters_per_launch", s.iters)
        .chosen("config", format!("ilp={ilp}"))
        .chosen("search", search)
        .metric("bandwidth", "GB/s", Better::Higher, ClockDomain::Sm)
        .metric("bytes_per_clk", "B/clk", Better::Higher, ClockDomain::Sm)
        .metric("bytes_per_clk_per_sm", "B/clk/SM", Better::Higher, ClockDomain::Sm)
}

/// One benchmark over several launch shapes; with `all_metrics` one shape reports the three
/// metrics of [`metrics`], otherwise each shape reports its GB/s. Each sample reads the next copy
/// of the footprints, loaded into the L2 by one untimed launch of each shape first.
fn points_bench(
    suite: &mut Suite,
    reader: &Reader,
    bench: Bench,
    points: Vec<(Option<String>, Shape)>,
    all_metrics: bool,
) -> Result<()> {
    let gpu = suite.gpu();
    let timer = EventTimer::new(gpu.stream())?;
    let mut runs = points
        .into_iter()
        .map(|(_, s)| Ok((SmWindows::new(gpu, reader.fold.clone())?, s)))
        .collect::<Result<Vec<_>>>()?;
    let rotates = runs.iter().any(|(_, s)| !s.swept);
    let mut bench = bench.kernels(&[&reader.compiled.provenance]);
    if rotates {
        bench = bench.param("placements", reader.copies.count);
    }
    let mut sample_index = 0u64;
    suite.bench(bench, |gpu, iters| {
        let copy = sample_index;
        sample_index += 1;
        let mut sum = SampleSum::new();
        for (w, s) in runs.iter_mut() {
            let work = reader.work(s);
            let source = reader.source(s, copy);
            if source != Source::Sweep && reader.copies.count > 1 {
                reader.launch(gpu, s, source, w)?;
            }
            let (t, totals) =
                per_sm::sample(gpu, w, &timer, iters, work, "l2_bandwidth", |gpu, w| reader.launch(gpu, s, source, w))?;
            sum.add(t, totals.clock());
            let m = metrics(&totals);
            if all_metrics {
                sum.extend(m);
            } else {
                sum.push(m[0]);
            }
        }
        Ok(sum.finish())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regression_footprint_is_a_power_of_two_within_a_quarter_of_the_l2() {
        let mut g = crate::families::test_identity();
        g.l2_bytes = 50 << 20;
        assert_eq!(regression_footprint(&g), 8 << 20);
        g.l2_bytes = 60 << 20;
        assert_eq!(regression_footprint(&g), 8 << 20);
        g.l2_bytes = 40 << 20;
        assert_eq!(regression_footprint(&g), 8 << 20);
        g.l2_bytes = 6 << 20;
        assert_eq!(regression_footprint(&g), 1 << 20);
    }

    #[test]
    fn whole_footprint_exceeds_a_partition_and_private_slices_fit_a_quarter() {
        let mut g = crate::families::test_identity();
        g.l2_bytes = 50 << 20;
        assert_eq!(whole_footprint(&g), 32 << 20);
        // 1056 blocks: a quarter of 50 MiB is 12.1 KiB a block, so 8 KiB slices (8.25 MiB)
        assert_eq!(private_slice_vectors(&g, 1056) * 16, 8 << 10);
        g.l2_bytes = 60 << 20;
        assert_eq!(whole_footprint(&g), 32 << 20);
        assert_eq!(private_slice_vectors(&g, 1056) * 16, 8 << 10);
        g.l2_bytes = 40 << 20;
        assert_eq!(whole_footprint(&g), 16 << 20);
        // a tiny L2 still gives every thread a vector
        g.l2_bytes = 1 << 20;
        assert_eq!(private_slice_vectors(&g, 1056), THREADS);
    }

    #[test]
    fn peak_footprints_grow_fourfold_up_to_a_quarter_of_the_l2() {
        let mut g = crate::families::test_identity();
        g.l2_bytes = 50 << 20;
        assert_eq!(peak_footprints(&g), vec![512 << 10, 2 << 20, 8 << 20]);
        g.l2_bytes = 4 << 20;
        assert_eq!(peak_footprints(&g), vec![512 << 10]);
        // an L2 smaller than four times the first candidate: its quarter
        g.l2_bytes = 1 << 20;
        assert_eq!(peak_footprints(&g), vec![256 << 10]);
    }

    #[test]
    fn footprint_sweep_reaches_four_l2s() {
        let g = crate::families::test_identity();
        let f = sweep_footprints(&g);
        assert_eq!(f.first(), Some(&(1 << 20)));
        assert_eq!(f.last(), Some(&(256 << 20)));
        assert!(f.windows(2).all(|w| w[1] == 2 * w[0]));
    }

    #[test]
    fn block_counts_are_sorted_distinct_and_end_at_the_full_grid() {
        assert_eq!(regression_blocks(132, 1056), vec![1, 33, 66, 132, 264, 1056]);
        assert_eq!(regression_blocks(2, 16), vec![1, 2, 4, 16]);
        let s = sweep_blocks(132, 1056);
        assert_eq!(s.first(), Some(&1));
        assert_eq!(s.last(), Some(&1056));
        assert!(s.contains(&512) && s.contains(&132) && s.contains(&924));
        assert!(s.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn iterations_cover_the_target_bytes() {
        // 1056 blocks x 256 threads x ILP 4 x 16 B = 17.3 MB per iteration
        assert_eq!(iters_for(1.0e9, 1056 * 256, 4), 58);
        assert_eq!(iters_for(1.0, 1056 * 256, 4), 1);
    }

    #[test]
    fn metrics_are_gpu_wide_and_per_sm() {
        // two SMs at 2 GHz: 4000 cycles / 2000 ns each; 1 MB over a 2000 ns GPU-wide span
        let mut w = vec![0u64; 3 * 4];
        w[0..4].copy_from_slice(&[4000, 2000, 500_000, 1]);
        w[4..8].copy_from_slice(&[4000, 2000, 500_000, 1]);
        w[8..12].copy_from_slice(&[0, 2000, 1_000_000, 1]);
        let t = SmTotals::from_words(&w, 2).unwrap();
        let [gbps, per_clk, per_sm] = metrics(&t);
        assert!((gbps - 500.0).abs() < 1e-9);
        assert!((per_clk - 250.0).abs() < 1e-9);
        assert_eq!(per_sm, 125.0);
    }
}
