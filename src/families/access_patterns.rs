//! Global-memory access patterns (Kolpakova), in useful GB/s (bytes the threads asked for, over
//! the launch's GPU-wide span):
//! - `coalescing`: 32-bit loads, coalesced, misaligned by one word, and strided by 2 to 32 words,
//!   over a footprint far beyond the L2;
//! - `width`: coalesced 8-, 16-, 32-, 64- and 128-bit loads over the same footprint;
//! - `cache_ops`: 128-bit loads with each PTX cache operator (plain, ca, cg, cs, cv, lu, nc) over
//!   a 64 KiB footprint every SM reads again and again (`reused`) and over the large one
//!   (`streamed`).
//!
//! Kernels: `kernels/access_patterns.cu`.

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::full_grid;
use crate::device::{CompiledKernels, EventTimer, Gpu};
use crate::error::{CudaResultExt, Result};
use crate::harness::{Bench, Profile, Suite};
use crate::kernels;
use crate::measure::SampleSum;
use crate::measure::per_sm::{self, SmWindows};
use crate::results::{Better, ClockDomain, GpuIdentity};

/// Threads per block (full occupancy by thread count).
pub const THREADS: u32 = 256;
/// Loads in flight per thread (`AP_ILP` in the kernel).
pub const ILP: u32 = 4;
/// Footprint of the `reused` cache-operator runs: L1-resident on every SM.
pub const REUSED_BYTES: u64 = 64 << 10;
/// Wall time one launch aims at, at the rate used for sizing.
pub const TARGET_NS: f64 = 100_000.0;
/// Bit pattern no result is compared equal to in practice.
pub const SENTINEL: u32 = 0x9e37_79b9;

/// A 32-bit access pattern: lanes `stride` words apart, starting `offset` words into a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pattern {
    /// Words between consecutive lanes.
    pub stride: u32,
    /// Words from the start of an aligned 128-byte line.
    pub offset: u32,
}

impl Pattern {
    /// "coalesced", "misaligned", "stride=8".
    pub fn label(&self) -> String {
        match (self.stride, self.offset) {
            (1, 0) => "coalesced".into(),
            (1, 1) => "misaligned".into(),
            (1, o) => format!("offset={o}"),
            (s, 0) => format!("stride={s}"),
            (s, o) => format!("stride={s}/offset={o}"),
        }
    }
}

/// The regression set's patterns.
pub const PATTERNS: [Pattern; 7] = [
    Pattern { stride: 1, offset: 0 },
    Pattern { stride: 1, offset: 1 },
    Pattern { stride: 2, offset: 0 },
    Pattern { stride: 4, offset: 0 },
    Pattern { stride: 8, offset: 0 },
    Pattern { stride: 16, offset: 0 },
    Pattern { stride: 32, offset: 0 },
];

/// Load widths, bytes.
pub const WIDTHS: [u32; 5] = [1, 2, 4, 8, 16];

/// PTX cache operators ("ld" is plain `ld.global`).
pub const CACHE_OPS: [&str; 7] = ["ld", "ca", "cg", "cs", "cv", "lu", "nc"];

/// Distinct 32-byte sectors and 128-byte lines one warp instruction touches when lane `l` reads
/// `width` bytes at element `l * stride + offset` (elements of `width` bytes).
pub fn sectors_and_lines(width: u32, stride: u32, offset: u32, lanes: u32) -> (u32, u32) {
    let mut sectors = std::collections::BTreeSet::new();
    let mut lines = std::collections::BTreeSet::new();
    for l in 0..lanes as u64 {
        let start = (l * stride as u64 + offset as u64) * width as u64;
        let end = start + width as u64 - 1;
        for b in [start, end] {
            sectors.insert(b / 32);
            lines.insert(b / 128);
        }
    }
    (sectors.len() as u32, lines.len() as u32)
}

/// Fraction of the bytes moved (whole sectors) that the warp asked for.
pub fn sector_efficiency(width: u32, stride: u32, offset: u32, lanes: u32) -> f64 {
    let (sectors, _) = sectors_and_lines(width, stride, offset, lanes);
    (lanes * width) as f64 / (sectors * 32) as f64
}

/// Footprint of the streamed runs: the first power of two at least four L2s.
pub fn streamed_bytes(gpu: &GpuIdentity) -> u64 {
    (4 * gpu.l2_bytes).next_power_of_two().max(64 << 20)
}

/// Iterations per launch so that `threads` threads at [`ILP`] ask for about `target_bytes` of
/// `width`-byte elements.
pub fn iters_for(target_bytes: f64, threads: u64, width: u32) -> u32 {
    (target_bytes / (threads as f64 * ILP as f64 * width as f64)).ceil().clamp(1.0, u32::MAX as f64) as u32
}

/// One launch shape.
struct Run {
    label: String,
    f: CudaFunction,
    width: u32,
    stride: u32,
    offset: u32,
    elements: u32,
    iters: u32,
    /// Launches so far; a footprint smaller than the buffer moves to the next of
    /// [`REUSED_PLACEMENTS`] places with every launch.
    launches: std::cell::Cell<u64>,
}

/// Places a small (`reused`) footprint takes in turn, one per launch: which L2 slices its lines
/// hash to otherwise moves the re-read bandwidth by several percent between runs.
pub const REUSED_PLACEMENTS: u64 = 32;

/// Byte offset of the footprint for launch `launch` of a run over `footprint` bytes in a buffer
/// of `buffer` bytes: 0 when the footprint fills the buffer, else the next of
/// [`REUSED_PLACEMENTS`] places spread over pages.
pub fn footprint_offset(footprint: u64, buffer: u64, launch: u64) -> u64 {
    let stride = crate::placement::placement_stride_bytes(footprint);
    if footprint >= buffer || stride * REUSED_PLACEMENTS + footprint > buffer {
        return 0;
    }
    (launch % REUSED_PLACEMENTS) * stride
}

struct Patterns {
    compiled: std::sync::Arc<CompiledKernels>,
    fold: CudaFunction,
    buf: CudaSlice<u8>,
    sink: CudaSlice<u32>,
    cfg: LaunchConfig,
    dram_bytes_per_launch: f64,
    l1_bytes_per_launch: f64,
}

impl Patterns {
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        gpu: &Gpu,
        label: String,
        kernel: &str,
        width: u32,
        p: Pattern,
        footprint: u64,
        target: f64,
    ) -> Result<(Run, SmWindows)> {
        let threads = self.cfg.grid_dim.0 as u64 * self.cfg.block_dim.0 as u64;
        let run = Run {
            label,
            f: self.compiled.function(kernel)?,
            width,
            stride: p.stride,
            offset: p.offset,
            elements: (footprint / width as u64) as u32,
            iters: iters_for(target, threads, width),
            launches: std::cell::Cell::new(0),
        };
        Ok((run, SmWindows::new(gpu, self.fold.clone())?))
    }

    fn work(&self, gpu: &GpuIdentity, r: &Run) -> u64 {
        let warps = self.cfg.grid_dim.0 as u64 * self.cfg.block_dim.0 as u64 / gpu.warp_size as u64;
        warps * r.iters as u64 * ILP as u64 * gpu.warp_size as u64 * r.width as u64
    }

    fn launch(&self, gpu: &Gpu, r: &Run, w: &SmWindows) -> Result<()> {
        let emask = r.elements - 1;
        let slots = w.slots();
        let footprint = r.elements as u64 * r.width as u64;
        let start = footprint_offset(footprint, self.buf.len() as u64, r.launches.get()) as usize;
        r.launches.set(r.launches.get() + 1);
        let buf = self.buf.slice(start..);
        // SAFETY: ap_*(const char*, u32 stride, u32 offset, u32 emask, u32 iters,
        // gb_sm_window*, u32, u32*, u32); every element index is masked into the footprint,
        // which lies inside `buf` from `start` on; the sink holds a word per thread of the grid.
        unsafe {
            gpu.stream()
                .launch_builder(&r.f)
                .arg(&buf)
                .arg(&r.stride)
                .arg(&r.offset)
                .arg(&emask)
                .arg(&r.iters)
                .arg(w.buffer())
                .arg(&slots)
                .arg(&self.sink)
                .arg(&SENTINEL)
                .launch(self.cfg)
        }
        .cuda_context(|| format!("launching an access-pattern kernel ({})", r.label))?;
        Ok(())
    }
}

/// The access-pattern family: `access_patterns/coalescing`, `width` and `cache_ops`; under the
/// full profile also `access_patterns/strides` (every stride from 1 to 32 words) and `offsets`.
pub fn run(suite: &mut Suite) -> Result<()> {
    let profile = suite.profile();
    let names: &[&str] = match profile {
        Profile::Quick => &["coalescing"],
        Profile::Default => &["coalescing", "width", "cache_ops"],
        Profile::Full => &["coalescing", "width", "cache_ops", "strides", "offsets"],
    };
    if !names.iter().any(|n| suite.wants(n)) {
        return Ok(());
    }
    let gpu = suite.gpu();
    let identity = gpu.identity().clone();
    let compiled = gpu.kernels(&kernels::ACCESS_PATTERNS)?;
    let streamed = streamed_bytes(&identity);
    let buf = gpu.alloc_zeros::<u8>(streamed as usize, "the access-pattern footprint")?;
    let fill = compiled.function("ap_fill")?;
    let words = (streamed / 4) as u32;
    // SAFETY: ap_fill(u32*, u32) writes `words` words of `buf`.
    unsafe { gpu.stream().launch_builder(&fill).arg(&buf).arg(&words).launch(full_grid(&identity, 256)) }
        .cuda_context(|| "launching ap_fill".into())?;
    let cfg = full_grid(&identity, THREADS);
    let clock_hz = identity.sm_clock_max_khz as f64 * 1e3;
    let p = Patterns {
        fold: compiled.function("ap_fold")?,
        compiled,
        buf,
        sink: gpu.alloc_zeros::<u32>(cfg.grid_dim.0 as usize * THREADS as usize, "the result sink")?,
        cfg,
        dram_bytes_per_launch: identity.peak_dram_bytes_per_s() * TARGET_NS * 1e-9,
        l1_bytes_per_launch: 128.0 * identity.sm_count as f64 * clock_hz * TARGET_NS * 1e-9,
    };
    let coalesced = Pattern { stride: 1, offset: 0 };

    for &name in names {
        if !suite.wants(name) {
            continue;
        }
        let gpu = suite.gpu();
        let mut bench = Bench::new(name).param("threads_per_block", THREADS).param("ilp", ILP);
        let mut runs = Vec::new();
        match name {
            "coalescing" | "strides" | "offsets" => {
                let patterns: Vec<Pattern> = match name {
                    "coalescing" => PATTERNS.to_vec(),
                    "strides" => (1..=32).map(|stride| Pattern { stride, offset: 0 }).collect(),
                    _ => (0..32).map(|offset| Pattern { stride: 1, offset }).collect(),
                };
                bench = bench.param("footprint_bytes", streamed).param("width_bytes", 4);
                for pat in patterns {
                    let label = pat.label();
                    bench = bench
                        .param(&format!("{label}_sector_efficiency"), sector_efficiency(4, pat.stride, pat.offset, 32));
                    runs.push(p.run(gpu, label, "ap_width_4", 4, pat, streamed, p.dram_bytes_per_launch)?);
                }
            }
            "width" => {
                bench = bench.param("footprint_bytes", streamed);
                for w in WIDTHS {
                    let k = format!("ap_width_{w}");
                    runs.push(p.run(
                        gpu,
                        format!("{}bit", w * 8),
                        &k,
                        w,
                        coalesced,
                        streamed,
                        p.dram_bytes_per_launch,
                    )?);
                }
            }
            _ => {
                bench = bench.param("reused_bytes", REUSED_BYTES).param("streamed_bytes", streamed);
                for op in CACHE_OPS {
                    let k = format!("ap_op_{op}");
                    runs.push(p.run(
                        gpu,
                        format!("{op}/reused"),
                        &k,
                        16,
                        coalesced,
                        REUSED_BYTES,
                        p.l1_bytes_per_launch,
                    )?);
                    runs.push(p.run(
                        gpu,
                        format!("{op}/streamed"),
                        &k,
                        16,
                        coalesced,
                        streamed,
                        p.dram_bytes_per_launch,
                    )?);
                }
            }
        }
        for (r, _) in &runs {
            // an L1-resident footprint moves with the SM clock, a streamed one with the memory clock
            let domain = if r.label.ends_with("/reused") { ClockDomain::Sm } else { ClockDomain::Memory };
            bench = bench.metric(r.label.clone(), "GB/s", Better::Higher, domain);
        }
        bench = bench.kernels(&[&p.compiled.provenance]);
        let timer = EventTimer::new(gpu.stream())?;
        let what = format!("access_patterns/{name}");
        suite.bench(bench, |gpu, iters| {
            let mut sum = SampleSum::with_capacity(runs.len());
            for (r, windows) in runs.iter_mut() {
                let work = p.work(gpu.identity(), r);
                let r = &*r;
                let (t, totals) =
                    per_sm::sample(gpu, windows, &timer, iters, work, &what, |gpu, w| p.launch(gpu, r, w))?;
                sum.add(t, totals.clock());
                sum.push(totals.gpu_rate_per_s().map(|b| b / 1e9).unwrap_or(f64::NAN));
            }
            Ok(sum.finish())
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_footprint_moves_over_pages_and_a_large_one_stays() {
        let buffer = 256u64 << 20;
        let offsets: Vec<u64> = (0..REUSED_PLACEMENTS).map(|l| footprint_offset(REUSED_BYTES, buffer, l)).collect();
        let mut unique = offsets.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len() as u64, REUSED_PLACEMENTS);
        assert!(offsets.iter().all(|o| o % 128 == 0 && o + REUSED_BYTES <= buffer));
        assert_eq!(footprint_offset(REUSED_BYTES, buffer, REUSED_PLACEMENTS), 0, "the rotation repeats");
        assert_eq!(footprint_offset(buffer, buffer, 5), 0);
        assert_eq!(footprint_offset(REUSED_BYTES, 1 << 20, 5), 0, "no room: no rotation");
    }

    #[test]
    fn a_coalesced_warp_touches_four_sectors_per_32_bytes_asked() {
        // 32 lanes x 4 B = 128 B: 4 sectors, 1 line
        assert_eq!(sectors_and_lines(4, 1, 0, 32), (4, 1));
        assert_eq!(sector_efficiency(4, 1, 0, 32), 1.0);
        // one word off: 5 sectors over 2 lines
        assert_eq!(sectors_and_lines(4, 1, 1, 32), (5, 2));
        assert!((sector_efficiency(4, 1, 1, 32) - 0.8).abs() < 1e-12);
    }

    #[test]
    fn strides_spread_a_warp_over_more_sectors() {
        assert_eq!(sectors_and_lines(4, 2, 0, 32), (8, 2));
        assert_eq!(sectors_and_lines(4, 8, 0, 32), (32, 8));
        // 32 words apart: every lane in its own line, 1/8 of each sector used
        assert_eq!(sectors_and_lines(4, 32, 0, 32), (32, 32));
        assert_eq!(sector_efficiency(4, 32, 0, 32), 0.125);
    }

    #[test]
    fn wide_loads_fill_whole_lines() {
        assert_eq!(sectors_and_lines(16, 1, 0, 32), (16, 4));
        assert_eq!(sectors_and_lines(1, 1, 0, 32), (1, 1));
        assert_eq!(sector_efficiency(1, 1, 0, 32), 1.0);
    }

    #[test]
    fn patterns_are_labelled_for_metrics() {
        let labels: Vec<String> = PATTERNS.iter().map(Pattern::label).collect();
        assert_eq!(labels, ["coalesced", "misaligned", "stride=2", "stride=4", "stride=8", "stride=16", "stride=32"]);
        assert_eq!(Pattern { stride: 1, offset: 5 }.label(), "offset=5");
    }

    #[test]
    fn streamed_footprint_is_beyond_the_l2_and_a_power_of_two() {
        let g = crate::families::test_identity();
        assert_eq!(streamed_bytes(&g), 256 << 20);
        assert!(streamed_bytes(&g) >= 4 * g.l2_bytes);
        // element counts stay below 2^32 for byte loads
        assert!(streamed_bytes(&g) < 1 << 32);
    }

    #[test]
    fn iterations_size_the_useful_bytes() {
        // 1056 x 256 threads x 4 loads x 4 B = 4.3 MB per iteration
        assert_eq!(iters_for(335.0e6, 1056 * 256, 4), 78);
        assert_eq!(iters_for(1.0, 1056 * 256, 16), 1);
    }

    #[test]
    fn host_constants_match_the_kernel() {
        use crate::families::kernel_define;
        assert_eq!(kernel_define(&kernels::ACCESS_PATTERNS, "AP_ILP"), Some(ILP as u64));
    }
}
