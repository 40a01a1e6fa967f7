//! Per-SM timing windows (Mei & Chu section 6.1, Chips and Cheese): the host side of `gb_sm_window`,
//! `gb_sm_total` and the fold kernel of `kernels/common.cuh`.
//!
//! A kernel's warps publish their span and work into their SM's window; after every launch the
//! fold kernel adds each window into running totals and empties it. Per SM, work / cycles is the
//! SM's throughput per clock of its own counter, and cycles / ns its effective clock; the extra
//! GPU-wide total holds the span from the first warp start to the last warp end of each launch
//! (one %globaltimer for the whole GPU), for rates of shared resources such as L2.

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use crate::device::Gpu;
use crate::error::{CudaResultExt, Error, Result};
use crate::results::{GpuIdentity, KernelClock};

/// u64 fields of one `gb_sm_window`.
const WINDOW_WORDS: usize = 5;
/// u64 fields of one `gb_sm_total`.
const TOTAL_WORDS: usize = 4;

/// Window slots to allocate: SM ids (`%smid`) run below the SM count on the parts we know, but
/// are not guaranteed to be contiguous, so leave room; an id beyond the slots loses its work,
/// which [`SmTotals::check_work`] reports.
pub fn slots_for(gpu: &GpuIdentity) -> u32 {
    (2 * gpu.sm_count).next_power_of_two().max(256)
}

/// What one SM (or the whole GPU) accumulated over a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SmTotal {
    /// SM id (`%smid`, the window's slot); the slot count for the GPU-wide total.
    pub sm: u32,
    /// Sum over launches of the span, clock64 cycles (0 for the GPU-wide total).
    pub cycles: u64,
    /// Sum over launches of the span, ns.
    pub ns: u64,
    /// Work the warps reported (bytes, operations).
    pub work: u64,
    /// Launches that contributed.
    pub windows: u64,
}

impl SmTotal {
    /// Work per cycle of this SM's clock.
    pub fn per_clock(&self) -> Option<f64> {
        (self.cycles > 0).then(|| self.work as f64 / self.cycles as f64)
    }
}

/// Per-SM and GPU-wide totals of a sample.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SmTotals {
    /// One entry per SM that ran work (slots without work are left out).
    pub per_sm: Vec<SmTotal>,
    /// GPU-wide: span from the earliest warp start to the latest warp end of each launch, ns.
    pub gpu: SmTotal,
}

/// Distribution of a per-SM rate over the SMs of a sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerSmRate {
    /// Median over SMs.
    pub median: f64,
    /// Mean over SMs.
    pub mean: f64,
    /// Lowest SM.
    pub min: f64,
    /// Highest SM (Mei & Chu keeps the largest).
    pub max: f64,
    /// SMs that ran work.
    pub sms: usize,
}

impl SmTotals {
    /// Parses the downloaded buffer: `slots` per-SM totals followed by the GPU-wide one.
    pub fn from_words(words: &[u64], slots: u32) -> Result<Self> {
        let expected = (slots as usize + 1) * TOTAL_WORDS;
        if words.len() != expected {
            return Err(Error::Verification {
                what: "the per-SM totals".into(),
                detail: format!("{} words read back, {expected} expected", words.len()),
            });
        }
        let total = |i: usize| {
            let w = &words[i * TOTAL_WORDS..(i + 1) * TOTAL_WORDS];
            SmTotal { sm: i as u32, cycles: w[0], ns: w[1], work: w[2], windows: w[3] }
        };
        let per_sm = (0..slots as usize).map(total).filter(|t| t.work > 0).collect();
        Ok(SmTotals { per_sm, gpu: total(slots as usize) })
    }

    /// Work per clock per SM over the SMs that ran, or `None` if none did.
    pub fn rate_per_clock(&self) -> Option<PerSmRate> {
        let mut rates: Vec<f64> = self.per_sm.iter().filter_map(SmTotal::per_clock).collect();
        if rates.is_empty() {
            return None;
        }
        rates.sort_by(f64::total_cmp);
        let n = rates.len();
        let median = crate::stats::median_sorted(&rates);
        let mean = rates.iter().sum::<f64>() / n as f64;
        Some(PerSmRate { median, mean, min: rates[0], max: rates[n - 1], sms: n })
    }

    /// Mean span of one SM's window, cycles: every SM's cycles over every SM's windows (`None`
    /// when no SM reported).
    pub fn mean_window_cycles(&self) -> Option<f64> {
        let cycles: u64 = self.per_sm.iter().map(|t| t.cycles).sum();
        let windows: u64 = self.per_sm.iter().map(|t| t.windows).sum();
        (windows > 0 && cycles > 0).then(|| cycles as f64 / windows as f64)
    }

    /// Work per clock of each SM that ran: (SM id, rate), for a chip map.
    pub fn per_clock_by_sm(&self) -> Vec<(u32, f64)> {
        self.per_sm.iter().filter_map(|t| Some((t.sm, t.per_clock()?))).collect()
    }

    /// The SMs' clock over their windows: all their cycles over all their ns.
    pub fn clock(&self) -> Option<KernelClock> {
        let cycles: u64 = self.per_sm.iter().map(|t| t.cycles).sum();
        let ns: u64 = self.per_sm.iter().map(|t| t.ns).sum();
        (ns > 0).then_some(KernelClock { cycles: cycles as f64, ns: ns as f64 })
    }

    /// GPU-wide work per second over the launches' spans.
    pub fn gpu_rate_per_s(&self) -> Option<f64> {
        (self.gpu.ns > 0).then(|| self.gpu.work as f64 / (self.gpu.ns as f64 * 1e-9))
    }

    /// GPU-wide work per SM clock: the GPU-wide rate divided by the SMs' effective clock.
    pub fn gpu_rate_per_clock(&self) -> Option<f64> {
        let mhz = self.clock()?.mhz()?;
        Some(self.gpu_rate_per_s()? / (mhz * 1e6))
    }

    /// Checks that the windows hold exactly the work the launches did: every warp reported, and
    /// into a slot that exists.
    pub fn check_work(&self, expected: u64, what: &str) -> Result<()> {
        let per_sm: u64 = self.per_sm.iter().map(|t| t.work).sum();
        if per_sm != expected || self.gpu.work != expected {
            return Err(Error::Verification {
                what: what.into(),
                detail: format!(
                    "the SM windows hold {per_sm} work items (GPU-wide {}), the launches did {expected}",
                    self.gpu.work
                ),
            });
        }
        Ok(())
    }
}

/// Device buffers of the windows and totals, and the fold kernel of the family's module.
pub struct SmWindows {
    windows: CudaSlice<u64>,
    totals: CudaSlice<u64>,
    slots: u32,
    fold: CudaFunction,
}

impl SmWindows {
    /// Allocates empty windows and zero totals; `fold` is the family's `GB_SM_FOLD_KERNEL`.
    pub fn new(gpu: &Gpu, fold: CudaFunction) -> Result<Self> {
        let slots = slots_for(gpu.identity());
        let windows = gpu.upload(&empty_windows(slots), "the per-SM windows")?;
        let totals = gpu.alloc_zeros::<u64>((slots as usize + 1) * TOTAL_WORDS, "the per-SM totals")?;
        Ok(SmWindows { windows, totals, slots, fold })
    }

    /// The windows buffer, to pass as the kernel's `gb_sm_window*`.
    pub fn buffer(&self) -> &CudaSlice<u64> {
        &self.windows
    }

    /// Number of slots, to pass as the kernel's `slots`.
    pub fn slots(&self) -> u32 {
        self.slots
    }

    /// Empties the windows and zeroes the totals (queued on the stream).
    pub fn reset(&mut self, gpu: &Gpu) -> Result<()> {
        gpu.stream()
            .memcpy_htod(&empty_windows(self.slots), &mut self.windows)
            .cuda_context(|| "resetting the per-SM windows".into())?;
        gpu.zero(&mut self.totals, "the per-SM totals")
    }

    /// Queues the fold kernel: adds the windows of the launch just queued to the totals.
    pub fn fold(&self, gpu: &Gpu) -> Result<()> {
        let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: GB_SM_FOLD_KERNEL(gb_sm_window*, gb_sm_total*, u32); the buffers hold `slots`
        // windows and `slots + 1` totals.
        unsafe {
            gpu.stream().launch_builder(&self.fold).arg(&self.windows).arg(&self.totals).arg(&self.slots).launch(cfg)
        }
        .cuda_context(|| "launching the per-SM fold".into())?;
        Ok(())
    }

    /// Reads the totals (synchronises the stream).
    pub fn read(&self, gpu: &Gpu) -> Result<SmTotals> {
        SmTotals::from_words(&gpu.download(&self.totals, "the per-SM totals")?, self.slots)
    }
}

/// Threads per block and blocks per SM that put a number of warps on every SM: one block of up
/// to 32 warps, or several 1024-thread blocks. With a grid of `sm_count * blocks_per_sm` the
/// block scheduler places them breadth-first, `blocks_per_sm` on each SM; the windows record the
/// work each SM actually got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Residency {
    /// Warps per SM.
    pub warps_per_sm: u32,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Blocks per SM.
    pub blocks_per_sm: u32,
}

impl Residency {
    /// `warps_per_sm` warps of `warp_size` threads per SM (at least one warp).
    pub fn new(warps_per_sm: u32, warp_size: u32) -> Self {
        let warps = warps_per_sm.max(1);
        let per_block = warps.min(1024 / warp_size.max(1));
        Residency {
            warps_per_sm: warps,
            threads_per_block: per_block * warp_size,
            blocks_per_sm: warps.div_ceil(per_block),
        }
    }

    /// The launch: `blocks_per_sm` blocks for every SM.
    pub fn launch(&self, gpu: &GpuIdentity, shared_mem_bytes: u32) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (gpu.sm_count * self.blocks_per_sm, 1, 1),
            block_dim: (self.threads_per_block, 1, 1),
            shared_mem_bytes,
        }
    }

    /// Whether `blocks_per_sm` blocks of `f` fit on one SM at once (registers, shared memory).
    pub fn fits(&self, f: &CudaFunction, shared_mem_bytes: u32) -> Result<bool> {
        let blocks = f
            .occupancy_max_active_blocks_per_multiprocessor(self.threads_per_block, shared_mem_bytes as usize, None)
            .cuda_context(|| "asking the driver for a kernel's occupancy".into())?;
        Ok(blocks >= self.blocks_per_sm)
    }
}

/// Timed rounds per launch for a kernel whose warps each move `work_per_round` items per round
/// so that an SM at `limit_per_clk` would be busy for `target_cycles`: rounded up to a multiple
/// of `multiple` (the kernel's unroll), at least one multiple. Sizing only; the measurement
/// divides the work by the cycles it really took.
pub fn rounds_for(
    target_cycles: u64,
    limit_per_clk: f64,
    warps_per_sm: u32,
    work_per_round: u64,
    multiple: u32,
) -> u32 {
    let multiple = multiple.max(1);
    let per_sm_round = (warps_per_sm as u64 * work_per_round).max(1) as f64;
    let rounds = (target_cycles as f64 * limit_per_clk / per_sm_round).ceil();
    let rounds = rounds.clamp(multiple as f64, (u32::MAX - multiple) as f64) as u32;
    rounds.next_multiple_of(multiple)
}

/// Runs one sample of a windowed kernel: resets the windows, queues `iters` times
/// (`launch`, fold), and returns the GPU time (CUDA events) and the totals after checking that
/// they hold `iters * work_per_launch`.
pub fn sample(
    gpu: &Gpu,
    windows: &mut SmWindows,
    timer: &crate::device::EventTimer,
    iters: u64,
    work_per_launch: u64,
    what: &str,
    mut launch: impl FnMut(&Gpu, &SmWindows) -> Result<()>,
) -> Result<(f64, SmTotals)> {
    windows.reset(gpu)?;
    timer.start()?;
    for _ in 0..iters {
        launch(gpu, windows)?;
        windows.fold(gpu)?;
    }
    let elapsed = timer.stop_ns()?;
    let totals = windows.read(gpu)?;
    totals.check_work(iters * work_per_launch, what)?;
    Ok((elapsed, totals))
}

fn empty_windows(slots: u32) -> Vec<u64> {
    let mut v = Vec::with_capacity(slots as usize * WINDOW_WORDS);
    for _ in 0..slots {
        v.extend_from_slice(&[u64::MAX, 0, u64::MAX, 0, 0]);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(per_sm: &[(u64, u64, u64, u64)], slots: u32, gpu: (u64, u64, u64, u64)) -> Vec<u64> {
        let mut w = vec![0u64; (slots as usize + 1) * TOTAL_WORDS];
        for (i, t) in per_sm.iter().enumerate() {
            w[i * 4..i * 4 + 4].copy_from_slice(&[t.0, t.1, t.2, t.3]);
        }
        let g = slots as usize * 4;
        w[g..g + 4].copy_from_slice(&[gpu.0, gpu.1, gpu.2, gpu.3]);
        w
    }

    #[test]
    fn slots_leave_room_beyond_the_sm_count() {
        let mut g = crate::families::test_identity();
        assert_eq!(slots_for(&g), 512); // 132 SMs -> 264 -> 512
        g.sm_count = 24;
        assert_eq!(slots_for(&g), 256);
    }

    #[test]
    fn per_sm_rate_is_work_over_own_cycles_and_idle_slots_are_ignored() {
        // three SMs at 120, 128 and 126 B/clk; slot 3 idle
        let w = words(
            &[(1000, 500, 120_000, 2), (2000, 1000, 256_000, 2), (1000, 500, 126_000, 2), (0, 0, 0, 0)],
            8,
            (0, 2100, 502_000, 2),
        );
        let t = SmTotals::from_words(&w, 8).unwrap();
        assert_eq!(t.per_sm.len(), 3);
        let r = t.rate_per_clock().unwrap();
        assert_eq!((r.min, r.median, r.max, r.sms), (120.0, 126.0, 128.0, 3));
        assert!((r.mean - (120.0 + 128.0 + 126.0) / 3.0).abs() < 1e-12);
        assert_eq!(t.per_clock_by_sm(), vec![(0, 120.0), (1, 128.0), (2, 126.0)]);
        // 4000 cycles over 2000 ns: 2 GHz
        assert_eq!(t.clock().unwrap().mhz(), Some(2000.0));
        // 502000 bytes over 2100 ns
        let per_s = t.gpu_rate_per_s().unwrap();
        assert!((per_s - 502_000.0 / 2.1e-6).abs() / per_s < 1e-12);
        assert!((t.gpu_rate_per_clock().unwrap() - per_s / 2e9).abs() < 1e-6);
        // 4000 cycles over 6 windows
        assert!((t.mean_window_cycles().unwrap() - 4000.0 / 6.0).abs() < 1e-12);
        assert_eq!(SmTotals::default().mean_window_cycles(), None);
    }

    #[test]
    fn an_even_number_of_sms_takes_the_mean_of_the_middle_two() {
        let w = words(&[(10, 5, 100, 1), (10, 5, 200, 1)], 2, (0, 5, 300, 1));
        let r = SmTotals::from_words(&w, 2).unwrap().rate_per_clock().unwrap();
        assert_eq!(r.median, 15.0);
    }

    #[test]
    fn no_work_gives_no_rate_and_a_short_buffer_is_an_error() {
        let t = SmTotals::from_words(&[0; 12], 2).unwrap();
        assert!(t.rate_per_clock().is_none());
        assert!(t.clock().is_none());
        assert!(t.gpu_rate_per_s().is_none());
        assert!(SmTotals::from_words(&[0; 7], 2).is_err());
    }

    #[test]
    fn lost_work_is_reported() {
        let w = words(&[(10, 5, 100, 1), (10, 5, 200, 1)], 2, (0, 5, 300, 1));
        let t = SmTotals::from_words(&w, 2).unwrap();
        assert!(t.check_work(300, "x").is_ok());
        let e = t.check_work(400, "l1_bandwidth/w16").unwrap_err();
        assert!(e.to_string().contains("hold 300 work items"), "{e}");
        assert_eq!(e.exit_code(), crate::error::exit::BENCH_FAILURE);
    }

    #[test]
    fn residency_uses_one_block_up_to_32_warps_then_full_blocks() {
        assert_eq!(Residency::new(8, 32), Residency { warps_per_sm: 8, threads_per_block: 256, blocks_per_sm: 1 });
        assert_eq!(Residency::new(32, 32), Residency { warps_per_sm: 32, threads_per_block: 1024, blocks_per_sm: 1 });
        assert_eq!(Residency::new(64, 32), Residency { warps_per_sm: 64, threads_per_block: 1024, blocks_per_sm: 2 });
        assert_eq!(Residency::new(0, 32).warps_per_sm, 1);
        let g = crate::families::test_identity();
        let l = Residency::new(64, 32).launch(&g, 0);
        assert_eq!((l.grid_dim.0, l.block_dim.0), (264, 1024));
    }

    #[test]
    fn rounds_fill_the_target_cycles_at_the_limit() {
        // 128 B/clk for 2^18 cycles = 32 MiB per SM; 32 warps x 4 KiB per round = 128 KiB -> 256
        assert_eq!(rounds_for(1 << 18, 128.0, 32, 4096, 4), 256);
        // rounded up to a multiple, never below one multiple
        assert_eq!(rounds_for(1000, 128.0, 32, 4096, 4), 4);
        assert_eq!(rounds_for(1 << 18, 128.0, 33, 4096, 4) % 4, 0);
        assert_eq!(rounds_for(1 << 18, 128.0, 33, 4096, 1), 249);
    }

    #[test]
    fn empty_windows_are_max_start_zero_end() {
        let w = empty_windows(2);
        assert_eq!(w, vec![u64::MAX, 0, u64::MAX, 0, 0, u64::MAX, 0, u64::MAX, 0, 0]);
    }
}
