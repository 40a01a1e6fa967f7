//! Pointer-chase latency over a footprint sweep (Meltzer et al., Mei & Chu, Qiu et al.).
//!
//! One thread follows `j = a[j]` through `a[i] = (i + stride) % n` with loads of one cache
//! operator: `ld.global.ca` (through L1), `.cg` (L2 only), `.cv` (no caching: memory), `.nc`
//! (read-only path). The chase continues across launches, so a footprint that fits a level hits
//! in it once one lap is done; the timed steps report cycles (clock64) and ns (%globaltimer) per
//! access, and thereby the SM clock they ran at.

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::{SINGLE_THREAD, full_grid, size_label};
use crate::device::{CompiledKernels, EventTimer, Gpu};
use crate::error::{CudaResultExt, Result};
use crate::harness::{Bench, Probe, Profile, Sample, Suite};
use crate::kernels;
use crate::placement::{EVERY_SM, SmClaims, SmLatencies, SmProbes};
use crate::results::{Better, ClockDomain, GpuIdentity};

/// Distance between consecutive accesses of the size sweep, bytes: one 128-byte L1 line, so
/// every access of a lap touches a new line.
pub const SWEEP_STRIDE_BYTES: u64 = 128;

/// PTX cache operator of the chase loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOp {
    /// `ld.global.ca`: cache at all levels (L1 and L2).
    Ca,
    /// `ld.global.cg`: cache in L2, not L1.
    Cg,
    /// `ld.global.cv`: volatile, fetch again from memory.
    Cv,
    /// `ld.global.nc`: the read-only (non-coherent) data path.
    Nc,
}

impl CacheOp {
    /// Short name used in benchmark ids: "ca".
    pub fn label(self) -> &'static str {
        match self {
            CacheOp::Ca => "ca",
            CacheOp::Cg => "cg",
            CacheOp::Cv => "cv",
            CacheOp::Nc => "nc",
        }
    }

    fn kernel(self) -> &'static str {
        match self {
            CacheOp::Ca => "chase_ca",
            CacheOp::Cg => "chase_cg",
            CacheOp::Cv => "chase_cv",
            CacheOp::Nc => "chase_nc",
        }
    }

    fn sm_kernel(self) -> &'static str {
        match self {
            CacheOp::Ca => "chase_sm_ca",
            CacheOp::Cg => "chase_sm_cg",
            CacheOp::Cv => "chase_sm_cv",
            CacheOp::Nc => "chase_sm_nc",
        }
    }
}

/// Where the chases of a sample run. Every SM chases the same array from its own start, a
/// 1/SMs of a lap apart, so that the L2 sees each line again after one lap's worth of accesses,
/// as it would from one chaser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Every SM at once. Right where the footprint fits the L2 many times over or overflows it
    /// many times over; in between, SMs running at their own speeds drift into each other's
    /// recent lines and hit where one chaser would miss.
    EverySmAtOnce,
    /// One SM per launch, in turn (a quarter of the steps per launch): the SMs advance in step,
    /// so the reuse distance stays one lap, whatever the footprint.
    EachSmInTurn,
}

impl Placement {
    /// The mode for a footprint of `bytes` on a GPU with an L2 of `l2_bytes`: one SM at a time
    /// between a quarter and four times the L2, where a capacity decides the result.
    pub fn for_footprint(bytes: u64, l2_bytes: u64) -> Placement {
        if bytes > l2_bytes / 4 && bytes < 4 * l2_bytes { Placement::EachSmInTurn } else { Placement::EverySmAtOnce }
    }

    /// "all_sms" / "each_sm".
    pub fn label(self) -> &'static str {
        match self {
            Placement::EverySmAtOnce => "all_sms",
            Placement::EachSmInTurn => "each_sm",
        }
    }
}

/// A chase array on the GPU: `n` 32-bit indices with `a[i] = (i + stride) % n`.
pub struct ChaseArray {
    buf: CudaSlice<u32>,
    /// Elements.
    pub n: u64,
    /// Stride in elements.
    pub stride: u64,
}

impl ChaseArray {
    /// Footprint in bytes.
    pub fn bytes(&self) -> u64 {
        self.n * 4
    }

    /// The device buffer.
    pub fn buffer(&self) -> &CudaSlice<u32> {
        &self.buf
    }

    /// Distinct elements one lap visits.
    pub fn lap(&self) -> u64 {
        self.n / gcd(self.n, self.stride)
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Launches the chase kernels of `kernels/latency.cu`.
pub struct Chaser {
    kernels: std::sync::Arc<CompiledKernels>,
    init: CudaFunction,
}

/// Per-access latency of a chase window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChaseLatency {
    /// SM cycles per access.
    pub cycles: f64,
    /// Nanoseconds per access.
    pub ns: f64,
}

impl Chaser {
    /// Compiles (once per process) and loads the chase kernels.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        let kernels = gpu.kernels(&kernels::LATENCY)?;
        let init = kernels.function("chase_init")?;
        Ok(Chaser { kernels, init })
    }

    /// The compiled source.
    pub fn kernels(&self) -> &CompiledKernels {
        &self.kernels
    }

    /// Allocates and initialises a chase array of `bytes` with a stride of `stride_bytes`.
    pub fn array(&self, gpu: &Gpu, bytes: u64, stride_bytes: u64) -> Result<ChaseArray> {
        let n = (bytes / 4).max(1);
        let stride = (stride_bytes / 4).max(1);
        let buf = gpu.alloc_zeros::<u32>(n as usize, &format!("a {} chase array", size_label(bytes)))?;
        let cfg = full_grid(gpu.identity(), 256);
        // SAFETY: chase_init(u32*, u64, u64) writes n elements of `buf`.
        unsafe { gpu.stream().launch_builder(&self.init).arg(&buf).arg(&n).arg(&stride).launch(cfg) }
            .cuda_context(|| "launching chase_init".into())?;
        Ok(ChaseArray { buf, n, stride })
    }

    /// The chase kernel for `op`.
    pub fn function(&self, op: CacheOp) -> Result<CudaFunction> {
        self.kernels.function(op.kernel())
    }

    /// Queues one launch that chases `warm` untimed accesses, then `steps` (a multiple of 8)
    /// timed ones, resuming where the probe's `sink` says and adding cycles, ns and steps to
    /// the probe.
    pub fn launch(
        &self,
        gpu: &Gpu,
        f: &CudaFunction,
        arr: &ChaseArray,
        warm: u32,
        steps: u32,
        probe: &Probe,
    ) -> Result<()> {
        let cfg: LaunchConfig = SINGLE_THREAD;
        // SAFETY: chase_*(const u32*, u32, u32, gb_probe*) reads indices < n of `arr`.
        unsafe { gpu.stream().launch_builder(f).arg(&arr.buf).arg(&warm).arg(&steps).arg(probe.buffer()).launch(cfg) }
            .cuda_context(|| "launching a chase kernel".into())?;
        Ok(())
    }

    /// The every-SM chase kernel for `op`.
    pub fn sm_function(&self, op: CacheOp) -> Result<CudaFunction> {
        self.kernels.function(op.sm_kernel())
    }

    /// Queues one launch of the every-SM chase (`f` from [`Chaser::sm_function`]): each SM (or
    /// only `target_sm`, unless it is [`EVERY_SM`]) chases `warm` untimed then `steps` timed
    /// accesses from where its own probe's sink says.
    #[allow(clippy::too_many_arguments)]
    pub fn launch_sm(
        &self,
        gpu: &Gpu,
        f: &CudaFunction,
        arr: &ChaseArray,
        warm: u32,
        steps: u32,
        probes: &SmProbes,
        claims: &mut SmClaims,
        target_sm: u32,
    ) -> Result<()> {
        let (slots, launch, cfg) = (claims.slots(), claims.next_launch(), claims.grid());
        // SAFETY: chase_sm_*(const u32*, u32, u32, gb_probe*, u32*, u32, u32, u32) reads indices
        // < n of `arr`, and writes probes and claims below `slots`, which both buffers hold.
        unsafe {
            gpu.stream()
                .launch_builder(f)
                .arg(&arr.buf)
                .arg(&warm)
                .arg(&steps)
                .arg(probes.buffer())
                .arg(claims.buffer())
                .arg(&slots)
                .arg(&launch)
                .arg(&target_sm)
                .launch(cfg)
        }
        .cuda_context(|| "launching an every-SM chase kernel".into())?;
        Ok(())
    }

    /// Untimed accesses each launch makes before timing: one lap when the footprint is at
    /// most twice the SM's unified L1/shared array (L1 starts cold in every launch), else none.
    pub fn in_launch_warm(&self, gpu: &GpuIdentity, arr: &ChaseArray) -> u32 {
        let l1_bound = 2 * gpu.smem_per_sm;
        if arr.bytes() <= l1_bound { arr.lap().min(u32::MAX as u64) as u32 } else { 0 }
    }

    /// Runs one lap of the array (at most `max_steps`) so that a footprint that fits a cache
    /// is resident before timing.
    pub fn warm(&self, gpu: &Gpu, f: &CudaFunction, arr: &ChaseArray, max_steps: u64, probe: &Probe) -> Result<()> {
        let steps_per_launch = 1u32 << 16;
        let laps = arr.lap().min(max_steps).div_ceil(steps_per_launch as u64);
        for _ in 0..laps {
            self.launch(gpu, f, arr, 0, steps_per_launch, probe)?;
        }
        gpu.synchronize("the warm-up chase")
    }
}

/// Footprints of the size sweep: powers of two from 4 KiB to the first one at least four
/// times the L2 (read from the device). The quick profile keeps three: one in L1, one in L2,
/// one beyond it.
pub fn sweep_sizes(gpu: &GpuIdentity, profile: Profile) -> Vec<u64> {
    let top = (4 * gpu.l2_bytes).next_power_of_two().max(1 << 20);
    let all: Vec<u64> = std::iter::successors(Some(4096u64), |s| (*s < top).then_some(s * 2)).collect();
    match profile {
        Profile::Default | Profile::Full => all,
        Profile::Quick => {
            let l2_point = (gpu.l2_bytes / 16).max(1 << 16).next_power_of_two() / 2;
            vec![16 << 10, l2_point.max(32 << 10), top]
        }
    }
}

/// Converts a probe window to per-access latency.
pub fn per_access(cycles: u64, ns: u64, accesses: u64) -> Option<ChaseLatency> {
    (accesses > 0).then(|| ChaseLatency { cycles: cycles as f64 / accesses as f64, ns: ns as f64 / accesses as f64 })
}

/// Where SM `sm` starts its chase in an array of `lap` elements per lap: the `sms` SMs start
/// evenly spread over the lap, so that a line comes back after a whole lap's worth of accesses.
pub fn start_index(arr_n: u64, stride: u64, lap: u64, sm: u32, sms: u32) -> u64 {
    let sms = sms.max(1) as u64;
    let step = (lap / sms).max(1);
    ((sm as u64 % sms) * step % lap.max(1)) * stride % arr_n.max(1)
}

/// The latency family: `latency/<op>/<size>` for ca and cg over the size sweep, every SM chasing
/// ([`Placement::for_footprint`] says whether at once or in turn); the metrics are medians over
/// SMs and each benchmark keeps the per-SM map. The full profile adds
/// `latency/placement/cg/<size>/<mode>`: an L2, a just-beyond-L2 and a DRAM footprint chased
/// both ways, which shows where chasing at once changes the figure.
pub fn run(suite: &mut Suite) -> Result<()> {
    let chaser = Chaser::new(suite.gpu())?;
    let identity = suite.gpu().identity().clone();
    let steps: u32 = match suite.profile() {
        Profile::Quick => 2048,
        Profile::Default | Profile::Full => 4096,
    };
    let mut cases: Vec<(String, CacheOp, u64, Placement)> = Vec::new();
    for op in [CacheOp::Ca, CacheOp::Cg] {
        for bytes in sweep_sizes(&identity, suite.profile()) {
            let mode = Placement::for_footprint(bytes, identity.l2_bytes);
            cases.push((format!("{}/{}", op.label(), size_label(bytes)), op, bytes, mode));
        }
    }
    if suite.profile() == Profile::Full {
        for bytes in placement_check_sizes(&identity) {
            for mode in [Placement::EverySmAtOnce, Placement::EachSmInTurn] {
                let name = format!("placement/cg/{}/{}", size_label(bytes), mode.label());
                cases.push((name, CacheOp::Cg, bytes, mode));
            }
        }
    }
    cases.retain(|c| suite.wants(&c.0));
    // which SMs share a GPC, for the chip maps (an empty list where clusters do not exist)
    let groups = match cases.is_empty() {
        true => Vec::new(),
        false => crate::placement::sm_groups(suite.gpu(), &chaser.kernels().function("cluster_sms")?)?,
    };
    for (name, op, bytes, placement) in cases {
        chase_bench(suite, &chaser, name, op, bytes, placement, steps, &groups)?;
    }
    Ok(())
}

/// An L2-resident footprint (an eighth of the L2), one just beyond the L2 and one four times
/// beyond it.
pub fn placement_check_sizes(gpu: &GpuIdentity) -> [u64; 3] {
    [
        (gpu.l2_bytes / 8).next_power_of_two().max(1 << 20),
        (gpu.l2_bytes + gpu.l2_bytes / 4).next_power_of_two(),
        (4 * gpu.l2_bytes).next_power_of_two(),
    ]
}

#[allow(clippy::too_many_arguments)]
fn chase_bench(
    suite: &mut Suite,
    chaser: &Chaser,
    name: String,
    op: CacheOp,
    bytes: u64,
    placement: Placement,
    steps: u32,
    groups: &[(u32, u32)],
) -> Result<()> {
    let identity = suite.gpu().identity().clone();
    let warm_cap = 2 * identity.l2_bytes / SWEEP_STRIDE_BYTES;
    let gpu = suite.gpu();
    let arr = chaser.array(gpu, bytes, SWEEP_STRIDE_BYTES)?;
    // an L2-filling warm lap from one SM, then every SM's first lap through its own L1
    chaser.warm(gpu, &chaser.function(op)?, &arr, warm_cap, &Probe::new(gpu)?)?;
    let f = chaser.sm_function(op)?;
    let mut claims = SmClaims::new(gpu)?;
    let mut probes = SmProbes::new(gpu, claims.slots())?;
    let (n, stride, lap, sms) = (arr.n, arr.stride, arr.lap(), identity.sm_count);
    probes.set(gpu, |sm| start_index(n, stride, lap, sm, sms))?;
    let timer = EventTimer::new(gpu.stream())?;
    let warm = chaser.in_launch_warm(&identity, &arr);
    // each SM in turn: one launch per iteration, on the next SM of those a first launch found
    let mut sms: Vec<u32> = Vec::new();
    let mut turn = 0usize;
    let steps = if placement == Placement::EachSmInTurn { (steps / 4).max(8) } else { steps };
    if placement == Placement::EachSmInTurn {
        chaser.launch_sm(gpu, &f, &arr, 0, 8, &probes, &mut claims, EVERY_SM)?;
        sms = probes.read(gpu)?.iter().map(|r| r.sm).collect();
        probes.reset_counters(gpu)?;
    }
    let bench = Bench::new(name)
        .param("bytes", bytes)
        .param("stride_bytes", SWEEP_STRIDE_BYTES)
        .param("cache_op", op.label())
        .param("steps_per_launch", steps)
        .param("warm_steps_per_launch", warm)
        .param("placement", placement.label())
        .sm_groups(groups)
        .metric("cycles_per_access", "cycles", Better::Lower, ClockDomain::Sm)
        .metric("ns_per_access", "ns", Better::Lower, ClockDomain::Sm)
        .kernels(&[&chaser.kernels().provenance]);
    suite.bench(bench, |gpu, iters| {
        probes.reset_counters(gpu)?;
        timer.start()?;
        for _ in 0..iters {
            match placement {
                Placement::EverySmAtOnce => {
                    chaser.launch_sm(gpu, &f, &arr, warm, steps, &probes, &mut claims, EVERY_SM)?
                }
                Placement::EachSmInTurn => {
                    let sm = sms.get(turn % sms.len().max(1)).copied().unwrap_or(EVERY_SM);
                    turn += 1;
                    chaser.launch_sm(gpu, &f, &arr, warm, steps, &probes, &mut claims, sm)?;
                }
            }
        }
        let elapsed = timer.stop_ns()?;
        let lat = SmLatencies::from_readings(&probes.read(gpu)?);
        Ok(Sample::clocked(elapsed, vec![lat.median_cycles, lat.median_ns], lat.clock)
            .with_sm_values(0, lat.cycles)
            .with_sm_values(1, lat.ns))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100_like() -> GpuIdentity {
        crate::families::test_identity()
    }

    #[test]
    fn sweep_reaches_four_times_the_l2_from_the_device() {
        let sizes = sweep_sizes(&h100_like(), Profile::Default);
        assert_eq!(sizes.first(), Some(&4096));
        assert_eq!(sizes.last(), Some(&(256 << 20)));
        assert!(sizes.windows(2).all(|w| w[1] == 2 * w[0]));
        let mut small = h100_like();
        small.l2_bytes = 4 << 20;
        assert_eq!(sweep_sizes(&small, Profile::Default).last(), Some(&(16 << 20)));
    }

    #[test]
    fn quick_sweep_has_an_l1_an_l2_and_a_memory_point() {
        let g = h100_like();
        let sizes = sweep_sizes(&g, Profile::Quick);
        assert_eq!(sizes.len(), 3);
        assert_eq!(sizes[0], 16 << 10);
        assert!(sizes[1] > 256 << 10 && sizes[1] < g.l2_bytes, "{}", sizes[1]);
        assert!(sizes[2] >= 4 * g.l2_bytes);
    }

    #[test]
    fn per_access_divides_the_window_by_the_accesses() {
        let l = per_access(40_960, 20_480, 1024).unwrap();
        assert_eq!(l.cycles, 40.0);
        assert_eq!(l.ns, 20.0);
        assert!(per_access(1, 1, 0).is_none());
    }

    #[test]
    fn sms_start_spread_over_the_lap() {
        // 1024 elements, stride 32 elements: a lap of 32 elements, 256 slots
        let starts: Vec<u64> = (0..4).map(|sm| start_index(1024, 32, 32, sm, 132)).collect();
        assert!(starts.iter().all(|s| s % 32 == 0 && *s < 1024), "{starts:?}");
        // 132 SMs over a lap of 2^15 lines: 248 lines apart, the last one a gap short of the first
        let starts: Vec<u64> = (0..132).map(|sm| start_index(1 << 20, 32, 1 << 15, sm, 132)).collect();
        let mut unique = starts.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 132, "every SM starts at its own line");
        assert_eq!(starts[1] - starts[0], 248 * 32);
        assert!((1 << 20) - starts[131] >= 248 * 32);
    }

    #[test]
    fn placement_check_covers_l2_and_memory() {
        let g = h100_like();
        let [l2, beyond, dram] = placement_check_sizes(&g);
        assert!(l2 < g.l2_bytes / 4, "{l2}");
        assert!(beyond > g.l2_bytes && beyond < 4 * g.l2_bytes, "{beyond}");
        assert!(dram >= 4 * g.l2_bytes);
        assert_eq!(Placement::for_footprint(l2, g.l2_bytes), Placement::EverySmAtOnce);
        assert_eq!(Placement::for_footprint(beyond, g.l2_bytes), Placement::EachSmInTurn);
        assert_eq!(Placement::for_footprint(dram, g.l2_bytes), Placement::EverySmAtOnce);
    }

    #[test]
    fn a_lap_visits_n_over_gcd_elements() {
        assert_eq!(gcd(1024, 32), 32);
        assert_eq!(gcd(1000, 32), 8);
    }
}
