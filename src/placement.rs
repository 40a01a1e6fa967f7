//! Where on the chip a measurement runs.
//!
//! A latency measured from one block lands on whichever SM the scheduler picks, and the L2 slices
//! that a few atomic addresses hash to depend on the physical pages of the allocation: both move a
//! result by several percent between cards and runs while nothing is wrong. The tools here measure
//! over placements instead:
//!
//! - [`SmClaims`]: one thread per SM, on every SM. A grid of one-thread blocks, several per SM, is
//!   launched; on each SM the first block of a launch claims the SM (kernels/latency.cu,
//!   `GB_CHASE_SM_KERNEL`) and the others leave, so every SM runs the timed work once per launch.
//! - [`SmProbes`]: one `gb_probe` per SM slot, read back as per-SM readings.
//! - [`Placements`]: a buffer holding several copies of an atomic target, spread over pages, one
//!   used per launch in turn, so that a sample averages over where the target lies.

use cudarc::driver::{CudaSlice, CudaView, DeviceRepr, LaunchConfig, ValidAsZeroBits};

use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::harness::ProbeReading;
use crate::measure::per_sm::slots_for;
use crate::results::{GpuIdentity, KernelClock};

/// `target_sm` value that runs the work on every SM at once.
pub const EVERY_SM: u32 = u32::MAX;

/// One-thread blocks launched per SM so that every SM receives at least one.
const BLOCKS_PER_SM: u32 = 8;

/// Per-SM claims of a launch: the grid to launch and the launch counter the kernel compares
/// against.
pub struct SmClaims {
    claims: CudaSlice<u32>,
    slots: u32,
    launch: u32,
    grid: LaunchConfig,
}

impl SmClaims {
    /// Claims for every SM slot of `gpu`.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        let slots = slots_for(gpu.identity());
        Ok(SmClaims {
            claims: gpu.alloc_zeros::<u32>(slots as usize, "the per-SM claims")?,
            slots,
            launch: 0,
            grid: claim_grid(gpu.identity()),
        })
    }

    /// The grid of one-thread blocks.
    pub fn grid(&self) -> LaunchConfig {
        self.grid
    }

    /// SM slots (the kernels ignore SM ids at or beyond this).
    pub fn slots(&self) -> u32 {
        self.slots
    }

    /// The device buffer of claims.
    pub fn buffer(&self) -> &CudaSlice<u32> {
        &self.claims
    }

    /// The id of the next launch (strictly increasing; a claim succeeds once per SM per id).
    pub fn next_launch(&mut self) -> u32 {
        self.launch += 1;
        self.launch
    }
}

/// A grid of one-thread blocks, [`BLOCKS_PER_SM`] per SM: small enough to be resident at once, so
/// the block scheduler spreads it over every SM.
pub fn claim_grid(gpu: &GpuIdentity) -> LaunchConfig {
    LaunchConfig { grid_dim: (gpu.sm_count.max(1) * BLOCKS_PER_SM, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 }
}

/// One `gb_probe { cycles, ns, count, sink }` per SM slot.
pub struct SmProbes {
    buf: CudaSlice<u64>,
    slots: u32,
}

/// What one SM's probe held.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SmReading {
    /// SM id.
    pub sm: u32,
    /// The probe.
    pub reading: ProbeReading,
}

impl SmProbes {
    /// Zeroed probes for `slots` SMs.
    pub fn new(gpu: &Gpu, slots: u32) -> Result<Self> {
        Ok(SmProbes { buf: gpu.alloc_zeros::<u64>(4 * slots as usize, "the per-SM probes")?, slots })
    }

    /// The device buffer, to pass as the kernel's `gb_probe*`.
    pub fn buffer(&self) -> &CudaSlice<u64> {
        &self.buf
    }

    /// Sets every probe's counters to zero and its sink to `sink(sm)` (where a chase starts).
    pub fn set(&mut self, gpu: &Gpu, sink: impl Fn(u32) -> u64) -> Result<()> {
        let words: Vec<u64> = (0..self.slots).flat_map(|sm| [0, 0, 0, sink(sm)]).collect();
        gpu.stream().memcpy_htod(&words, &mut self.buf).map_err(|e| Error::cuda("writing the per-SM probes", e))
    }

    /// Clears cycles, ns and count of every probe; keeps the sinks.
    pub fn reset_counters(&mut self, gpu: &Gpu) -> Result<()> {
        let sinks: Vec<u64> = self.read_all(gpu)?.iter().map(|r| r.reading.sink).collect();
        self.set(gpu, |sm| sinks[sm as usize])
    }

    /// Every slot's probe (synchronises the stream).
    fn read_all(&self, gpu: &Gpu) -> Result<Vec<SmReading>> {
        let v = gpu.download(&self.buf, "the per-SM probes")?;
        Ok(v.chunks_exact(4)
            .enumerate()
            .map(|(sm, w)| SmReading {
                sm: sm as u32,
                reading: ProbeReading { cycles: w[0], ns: w[1], count: w[2], sink: w[3] },
            })
            .collect())
    }

    /// The probes of the SMs that did timed work (count > 0).
    pub fn read(&self, gpu: &Gpu) -> Result<Vec<SmReading>> {
        Ok(self.read_all(gpu)?.into_iter().filter(|r| r.reading.count > 0).collect())
    }
}

/// Per-SM latency of a sample: cycles and ns per timed item on each SM, their medians over the
/// SMs, and the clock summed over every SM's window.
#[derive(Debug, Clone, PartialEq)]
pub struct SmLatencies {
    /// (SM, cycles per item).
    pub cycles: Vec<(u32, f64)>,
    /// (SM, ns per item).
    pub ns: Vec<(u32, f64)>,
    /// Median over SMs of cycles per item (NaN when no SM reported).
    pub median_cycles: f64,
    /// Median over SMs of ns per item.
    pub median_ns: f64,
    /// Cycles and ns summed over the SMs' windows.
    pub clock: Option<KernelClock>,
}

impl SmLatencies {
    /// Per-item latencies from per-SM readings.
    pub fn from_readings(readings: &[SmReading]) -> Self {
        let per = |f: fn(&ProbeReading) -> u64| -> Vec<(u32, f64)> {
            readings
                .iter()
                .filter(|r| r.reading.count > 0)
                .map(|r| (r.sm, f(&r.reading) as f64 / r.reading.count as f64))
                .collect()
        };
        let cycles = per(|r| r.cycles);
        let ns = per(|r| r.ns);
        let med =
            |v: &[(u32, f64)]| crate::stats::median(&v.iter().map(|p| p.1).collect::<Vec<_>>()).unwrap_or(f64::NAN);
        let (c, t) = readings.iter().fold((0u64, 0u64), |(c, t), r| (c + r.reading.cycles, t + r.reading.ns));
        SmLatencies {
            median_cycles: med(&cycles),
            median_ns: med(&ns),
            cycles,
            ns,
            clock: (t > 0).then(|| KernelClock { cycles: c as f64, ns: t as f64 }),
        }
    }
}

/// Several copies of an atomic target in one buffer, each starting on its own page-sized stride
/// plus a shift of a few L2 lines, so that the copies hash to different L2 slices and physical
/// pages. Launch `i` uses copy `i % count`.
pub struct Placements<T> {
    buf: CudaSlice<T>,
    /// Words of one copy.
    pub words: u64,
    /// Words between the starts of two copies.
    pub stride: u64,
    /// Number of copies.
    pub count: u64,
    next: u64,
}

/// Copies of a target per [`Placements`] by default.
pub const DEFAULT_PLACEMENTS: u64 = 256;

/// Distance between copies: an odd number of 2 MiB pages (the fewest that hold a copy) plus
/// 384 bytes (three 128-byte lines), so that neither the page nor the position within a page
/// repeats. An odd page count makes the copies' first pages differ in every low bit of the page
/// number: copies of 32 MiB at 16 pages apart shared bits 21-24 of their addresses, and on an
/// H100 all 16 of them read a private L2 footprint as one placement did.
pub fn placement_stride_bytes(copy_bytes: u64) -> u64 {
    let page = 2u64 << 20;
    (copy_bytes.div_ceil(page).max(1) | 1) * page + 384
}

/// Environment variable that overrides the number of copies of every [`Placements`] (1 to
/// 4096), for measuring how the spread of a placement-dependent metric falls with more copies.
pub const PLACEMENTS_ENV: &str = "GPUBENCH_PLACEMENTS";

/// The copies to use when `count` are asked for: [`PLACEMENTS_ENV`] when set to a number in
/// 1..=4096 and more than one copy is asked for, else `count`.
pub fn placement_count(count: u64) -> u64 {
    if count <= 1 {
        return count;
    }
    std::env::var(PLACEMENTS_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|n| (1..=4096).contains(n))
        .unwrap_or(count)
}

impl<T: DeviceRepr + ValidAsZeroBits> Placements<T> {
    /// `count` zeroed copies of `words` words ([`PLACEMENTS_ENV`] can override `count`).
    pub fn new(gpu: &Gpu, words: u64, count: u64, what: &str) -> Result<Self> {
        let count = placement_count(count).max(1);
        let size = std::mem::size_of::<T>() as u64;
        let stride = placement_stride_bytes(words * size).div_ceil(size);
        let total = stride * (count - 1) + words;
        Ok(Placements { buf: gpu.alloc_zeros::<T>(total as usize, what)?, words, stride, count, next: 0 })
    }

    /// Zeroes every copy and restarts the rotation.
    pub fn reset(&mut self, gpu: &Gpu) -> Result<()> {
        self.next = 0;
        gpu.zero(&mut self.buf, "the atomic targets")
    }
}

impl<T> Placements<T> {
    /// The copy the next launch uses, and advances.
    pub fn next_view(&mut self) -> CudaView<'_, T> {
        let i = self.next % self.count;
        self.next += 1;
        self.copy(i)
    }

    /// Copy `i`.
    pub fn copy(&self, i: u64) -> CudaView<'_, T> {
        let start = (i * self.stride) as usize;
        self.buf.slice(start..start + self.words as usize)
    }

    /// Launches so far on each copy.
    pub fn launches_per_copy(&self) -> Vec<u64> {
        launches_per_copy(self.next, self.count)
    }

    /// The whole buffer.
    pub fn buffer(&self) -> &CudaSlice<T> {
        &self.buf
    }
}

/// Launches that each of `count` copies received after `launches` launches in rotation.
pub fn launches_per_copy(launches: u64, count: u64) -> Vec<u64> {
    (0..count).map(|i| launches / count + u64::from(i < launches % count)).collect()
}

/// SMs that thread-block clusters co-schedule, as groups: `observations` are (SM id, cluster key)
/// pairs, where blocks of one cluster of one launch share a key. SMs seen together in any cluster
/// are joined (union-find); each group is numbered by its lowest SM id's rank. Returns (SM, group)
/// sorted by SM.
pub fn groups_from_clusters(observations: &[(u32, u64)]) -> Vec<(u32, u32)> {
    use std::collections::BTreeMap;
    let sms: Vec<u32> = {
        let mut v: Vec<u32> = observations.iter().map(|o| o.0).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let index: BTreeMap<u32, usize> = sms.iter().enumerate().map(|(i, &s)| (s, i)).collect();
    let mut parent: Vec<usize> = (0..sms.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut first_of_cluster: BTreeMap<u64, usize> = BTreeMap::new();
    for &(sm, key) in observations {
        let i = index[&sm];
        let j = *first_of_cluster.entry(key).or_insert(i);
        let (ri, rj) = (root(&mut parent, i), root(&mut parent, j));
        if ri != rj {
            parent[ri.max(rj)] = ri.min(rj);
        }
    }
    let mut numbers: BTreeMap<usize, u32> = BTreeMap::new();
    (0..sms.len())
        .map(|i| {
            let r = root(&mut parent, i);
            let next = numbers.len() as u32;
            (sms[i], *numbers.entry(r).or_insert(next))
        })
        .collect()
}

/// Cluster sizes the GPC probe launches: every size from 2 to 16, so that clusters of different
/// sizes overlap and join the SMs that a deterministic scheduler always pairs among themselves.
pub const CLUSTER_SIZES: std::ops::RangeInclusive<u32> = 2..=16;

/// Groups the SMs of `gpu` by GPC with thread-block clusters (cc >= 9.0; empty before, or when the
/// driver refuses every cluster launch). `f` is `cluster_sms` of kernels/latency.cu.
pub fn sm_groups(gpu: &Gpu, f: &cudarc::driver::CudaFunction) -> Result<Vec<(u32, u32)>> {
    use cudarc::driver::DevicePtr;
    use cudarc::driver::sys;
    let id = gpu.identity();
    if id.cc_major < 9 {
        return Ok(Vec::new());
    }
    // one block per SM: more than half of the SM's shared memory
    let smem = ((id.smem_per_sm / 2 + 1024).min(id.smem_per_block_optin)) as u32;
    let attr = sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
    f.set_attribute(attr, smem as i32).map_err(|e| Error::cuda("sizing the cluster probe's shared memory", e))?;
    let non_portable = sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED;
    let large_ok = f.set_attribute(non_portable, 1).is_ok();
    let mut observations: Vec<(u32, u64)> = Vec::new();
    for cs in CLUSTER_SIZES.filter(|&cs| cs <= 8 || large_ok) {
        let grid = cs * (id.sm_count / cs);
        if grid == 0 {
            continue;
        }
        let out = gpu.upload(&vec![u32::MAX; 2 * grid as usize], "the cluster probe's output")?;
        let status = {
            let (ptr, _sync) = out.device_ptr(gpu.stream());
            let mut ptr_arg = ptr;
            let mut params = [&mut ptr_arg as *mut _ as *mut std::ffi::c_void];
            let mut attr = sys::CUlaunchAttribute {
                id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
                pad: [0; 4],
                value: sys::CUlaunchAttributeValue { pad: [0; 64] },
            };
            attr.value.clusterDim = sys::CUlaunchAttributeValue_union__bindgen_ty_1 { x: cs, y: 1, z: 1 };
            let cfg = sys::CUlaunchConfig {
                gridDimX: grid,
                gridDimY: 1,
                gridDimZ: 1,
                blockDimX: 32,
                blockDimY: 1,
                blockDimZ: 1,
                sharedMemBytes: smem,
                hStream: gpu.stream().cu_stream(),
                attrs: &mut attr,
                numAttrs: 1,
            };
            // SAFETY: cluster_sms(u32* out) writes 2 words per block of `out`, which holds 2 x grid.
            unsafe { sys::cuLaunchKernelEx(&cfg, f.cu_function(), params.as_mut_ptr(), std::ptr::null_mut()) }
        };
        if status != sys::CUresult::CUDA_SUCCESS {
            continue; // a size the driver refuses (too large for a GPC): the other sizes remain
        }
        let words = gpu.download(&out, "the cluster probe's output")?;
        observations.extend(
            words.chunks_exact(2).filter(|w| w[0] != u32::MAX).map(|w| (w[0], ((cs as u64) << 32) | w[1] as u64)),
        );
    }
    Ok(groups_from_clusters(&observations))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(sm: u32, cycles: u64, ns: u64, count: u64) -> SmReading {
        SmReading { sm, reading: ProbeReading { cycles, ns, count, sink: 0 } }
    }

    #[test]
    fn per_sm_latency_is_the_median_over_the_sms_that_ran() {
        let r = [
            reading(0, 280_000, 140_000, 1000),
            reading(1, 300_000, 150_000, 1000),
            reading(2, 290_000, 145_000, 1000),
            reading(7, 0, 0, 0),
        ];
        let l = SmLatencies::from_readings(&r);
        assert_eq!(l.cycles, vec![(0, 280.0), (1, 300.0), (2, 290.0)]);
        assert_eq!(l.median_cycles, 290.0);
        assert_eq!(l.median_ns, 145.0);
        let clock = l.clock.unwrap();
        assert_eq!(clock.mhz(), Some(2000.0));
        assert!(SmLatencies::from_readings(&[]).median_cycles.is_nan());
    }

    #[test]
    fn placements_start_on_distinct_pages_and_offsets() {
        let stride = placement_stride_bytes(4);
        assert_eq!(stride, (2 << 20) + 384);
        let offsets: Vec<u64> = (0..32).map(|i| (i * stride) % (2 << 20)).collect();
        let mut unique = offsets.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 32, "every copy sits at another offset within its page");
        // a copy larger than a page gets its own pages, an odd number of them, so that copy i
        // starts on page 17 i: every residue of the page number modulo 16 within 16 copies
        assert_eq!(placement_stride_bytes(3 << 20), (6 << 20) + 384);
        let stride = placement_stride_bytes(32 << 20);
        assert_eq!(stride, (34 << 20) + 384);
        let mut pages: Vec<u64> = (0..16).map(|i| ((i * stride) >> 21) % 16).collect();
        pages.sort();
        pages.dedup();
        assert_eq!(pages.len(), 16, "copies of 32 MiB start on pages of every residue modulo 16");
    }

    #[test]
    fn rotation_spreads_launches_evenly_over_copies() {
        assert_eq!(launches_per_copy(10, 4), vec![3, 3, 2, 2]);
        assert_eq!(launches_per_copy(3, 4), vec![1, 1, 1, 0]);
        assert_eq!(launches_per_copy(64, 32).iter().sum::<u64>(), 64);
    }

    #[test]
    fn clusters_that_overlap_join_whole_gpcs() {
        // two GPCs: SMs 0..6 and 6..12 (ids interleaved as hardware does: GPC = sm % 2)
        let gpc = |sm: u32| sm % 2;
        let mut obs = Vec::new();
        // size-2 clusters always pair the same SMs; size-4 clusters link the pairs
        for (key, pair) in [[0u32, 2], [4, 6], [8, 10], [1, 3], [5, 7], [9, 11]].iter().enumerate() {
            obs.extend(pair.iter().map(|&s| (s, (2u64 << 32) | key as u64)));
        }
        for (key, quad) in [[0u32, 2, 4, 6], [1, 3, 5, 7]].iter().enumerate() {
            obs.extend(quad.iter().map(|&s| (s, (4u64 << 32) | key as u64)));
        }
        let without_links = obs.len();
        obs.extend([8u32, 10, 6].iter().map(|&s| (s, 3u64 << 32)));
        obs.extend([9u32, 11, 7].iter().map(|&s| (s, (3u64 << 32) | 1)));
        let groups = groups_from_clusters(&obs);
        assert_eq!(groups.len(), 12);
        for &(sm, g) in &groups {
            // group numbers follow the lowest SM: SM 0's GPC is 0, SM 1's is 1
            assert_eq!(g, gpc(sm), "SM {sm}");
        }
        // SMs 8 and 10 only ever met each other: without the size-3 cluster they stay apart
        let apart = groups_from_clusters(&obs[..without_links]);
        let g = |sm: u32| apart.iter().find(|p| p.0 == sm).unwrap().1;
        assert_eq!(g(8), g(10));
        assert_ne!(g(8), g(0));
    }

    #[test]
    fn the_claim_grid_gives_every_sm_several_blocks() {
        let g = crate::families::test_identity();
        let grid = claim_grid(&g);
        assert_eq!(grid.grid_dim.0, g.sm_count * BLOCKS_PER_SM);
        assert_eq!(grid.block_dim.0, 1);
    }
}
