//! What the sweep plan needs from a machine: chases with latency histograms, per-access traces,
//! the shared-memory stride table and the constant-cache divergence table. The GPU implements
//! it with kernels ([`super::gpu`]); the cache simulator ([`super::sim`]) implements it with a
//! model of known geometry, so that CI runs the same plan and inference on simulated data.

use super::data::{DeviceInfo, Path, Point};
use crate::error::Result;

/// One histogram chase: `a[i] = (i + stride) % n` over `footprint` bytes, starting at element 0,
/// `warm_steps` untimed accesses in the same launch, then `steps` timed ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChaseRequest {
    /// Load path.
    pub path: Path,
    /// Footprint, bytes (a multiple of `stride`).
    pub footprint: u64,
    /// Stride, bytes (a multiple of the element size).
    pub stride: u64,
    /// Untimed accesses before timing.
    pub warm_steps: u64,
    /// Timed accesses.
    pub steps: u64,
    /// Preferred shared-memory carveout, percent; `None` leaves the driver's choice.
    pub carveout_percent: Option<u32>,
}

/// One per-access trace; like [`ChaseRequest`], recording every timed access. Every trace
/// launch reserves the same shared memory for its record, so that all traces of a run see the
/// same L1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRequest {
    /// Load path.
    pub path: Path,
    /// Footprint, bytes.
    pub footprint: u64,
    /// Stride, bytes.
    pub stride: u64,
    /// Untimed accesses before the recorded ones.
    pub warm_steps: u64,
    /// Recorded accesses (at most [`DeviceInfo::max_trace_steps`]).
    pub steps: u64,
    /// Flush the caches (L2 included) after initialising the array and before the launch.
    pub cold: bool,
    /// Preferred shared-memory carveout, percent; `None` leaves the driver's choice.
    pub carveout_percent: Option<u32>,
}

/// A machine the dissect plan can measure.
pub trait Backend {
    /// The device facts the plan derives its sizes from.
    fn device(&self) -> &DeviceInfo;

    /// Cycles the per-access timing adds, measured around no load.
    fn timer_overhead(&mut self) -> Result<f64>;

    /// Runs a histogram chase; the point's `x` is the footprint.
    fn chase(&mut self, req: &ChaseRequest) -> Result<Point>;

    /// Runs a histogram chase of the L2 path on SM `sm` alone, from byte offset `start` (a
    /// multiple of the stride; the point's `x` is the footprint); `None` when no block of the
    /// launch reached that SM. A chase without a warm lap starts with the L2 evicted.
    fn chase_on_sm(&mut self, req: &ChaseRequest, sm: u32, start: u64) -> Result<Option<Point>>;

    /// Runs a per-access trace and returns each recorded access's cycles.
    fn trace(&mut self, req: &TraceRequest) -> Result<Vec<u32>>;

    /// Records one pass over `offsets` (bytes, visited in order, each at most once) in a
    /// freshly launched kernel: the policy probes' access sequences.
    fn sequence_trace(
        &mut self,
        path: Path,
        footprint: u64,
        offsets: &[u64],
        carveout: Option<u32>,
    ) -> Result<Vec<u32>>;

    /// Cycles per shared-memory access of one warp whose threads are `stride_words` 4-byte
    /// words apart.
    fn smem_stride(&mut self, stride_words: u32) -> Result<f64>;

    /// Cycles per constant-memory access of one warp whose threads read `distinct` different
    /// addresses (all within the constant caches).
    fn const_divergent(&mut self, distinct: u32) -> Result<f64>;
}
