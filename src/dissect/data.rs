//! The raw measurements of a dissect run, as saved in `sweeps.json`: latency histograms per
//! sweep point, per-access traces, the shared-memory stride table and the constant-cache
//! divergence table. Inference reads only this, so a saved folder can be analysed again offline.

use serde::{Deserialize, Serialize};

use crate::results::{GpuIdentity, Stack};

/// Schema tag of [`Sweeps`].
pub const SWEEPS_SCHEMA: &str = "gpubench.dissect-sweeps/1";

/// Width of a latency-histogram bin, cycles (the kernels' `DISSECT_BIN_SHIFT`).
pub const HIST_BIN_CYCLES: u32 = 2;

/// Bins of a kernel's latency histogram; the last one also counts everything slower.
pub const HIST_BINS: usize = 2048;

/// The load path a chase goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Path {
    /// `ld.global.ca`: L1 data cache, then L2.
    Ca,
    /// `ld.global.cg`: L2 only.
    Cg,
    /// `ld.global.nc`: the read-only data path.
    Nc,
    /// `tex.1d` fetches through a texture object over linear memory.
    Tex,
    /// `ld.const`: the constant caches, uniform across the warp.
    Const,
    /// `ld.global.cg` of 64-bit indices over large footprints: the TLBs.
    Tlb,
}

impl Path {
    /// Short label: "ca".
    pub fn label(self) -> &'static str {
        match self {
            Path::Ca => "ca",
            Path::Cg => "cg",
            Path::Nc => "nc",
            Path::Tex => "tex",
            Path::Const => "const",
            Path::Tlb => "tlb",
        }
    }

    /// Prefix of the facts about the first cache level this path reaches: "l1", "ro", ...
    pub fn level_prefix(self) -> &'static str {
        match self {
            Path::Ca => "l1",
            Path::Cg => "l2",
            Path::Nc => "ro",
            Path::Tex => "tex",
            Path::Const => "const",
            Path::Tlb => "tlb",
        }
    }

    /// Bytes per chase element.
    pub fn element_bytes(self) -> u64 {
        if self == Path::Tlb { 8 } else { 4 }
    }
}

/// A latency histogram: `counts` holds (bin, count) pairs of the non-empty bins; bin `b`
/// covers `[b * bin_cycles, (b + 1) * bin_cycles)`, the last bin also everything above.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    /// Width of one bin, cycles.
    pub bin_cycles: u32,
    /// Non-empty bins as `[bin, count]`, ascending.
    pub counts: Vec<[u64; 2]>,
}

impl Histogram {
    /// A histogram from dense bin counts.
    pub fn from_dense(bin_cycles: u32, dense: &[u64]) -> Self {
        let counts = dense.iter().enumerate().filter(|(_, c)| **c > 0).map(|(b, c)| [b as u64, *c]).collect();
        Histogram { bin_cycles, counts }
    }

    /// A histogram of per-access latencies.
    pub fn of_latencies(bin_cycles: u32, latencies: &[u32]) -> Self {
        let mut dense: Vec<u64> = Vec::new();
        for &l in latencies {
            let b = (l / bin_cycles.max(1)) as usize;
            if b >= dense.len() {
                dense.resize(b + 1, 0);
            }
            dense[b] += 1;
        }
        Self::from_dense(bin_cycles, &dense)
    }

    /// Number of accesses.
    pub fn total(&self) -> u64 {
        self.counts.iter().map(|c| c[1]).sum()
    }

    /// (bin centre in cycles, count) for every non-empty bin.
    pub fn bins(&self) -> impl Iterator<Item = (f64, u64)> + '_ {
        let w = self.bin_cycles as f64;
        self.counts.iter().map(move |c| ((c[0] as f64 + 0.5) * w, c[1]))
    }

    /// Fraction of accesses whose bin centre lies below `cycles` (0 when empty).
    pub fn fraction_below(&self, cycles: f64) -> f64 {
        let total = self.total();
        if total == 0 {
            return 0.0;
        }
        let below: u64 = self.bins().filter(|(c, _)| *c < cycles).map(|(_, n)| n).sum();
        below as f64 / total as f64
    }

    /// Mean of the bin centres (cycles), weighted by count.
    pub fn mean(&self) -> f64 {
        let total = self.total();
        if total == 0 {
            return f64::NAN;
        }
        self.bins().map(|(c, n)| c * n as f64).sum::<f64>() / total as f64
    }

    /// Median bin centre of the accesses between `lo` and `hi` cycles.
    pub fn median_between(&self, lo: f64, hi: f64) -> Option<f64> {
        let inside: Vec<(f64, u64)> = self.bins().filter(|(c, _)| *c >= lo && *c < hi).collect();
        let total: u64 = inside.iter().map(|b| b.1).sum();
        let mut seen = 0;
        for (c, n) in inside {
            seen += n;
            if 2 * seen >= total {
                return Some(c);
            }
        }
        None
    }
}

/// One point of a sweep: a chase at one footprint (or stride).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Footprint in bytes for a size sweep, stride in bytes for a stride sweep.
    pub x: u64,
    /// Timed accesses.
    pub steps: u64,
    /// Mean cycles per access over the timed window (timer overhead included).
    pub mean_cycles: f64,
    /// Per-access latencies (timer overhead included).
    pub hist: Histogram,
}

/// What a curve's x axis varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    /// Footprint in bytes, stride fixed.
    Footprint,
    /// Stride in bytes, footprint fixed.
    Stride,
    /// SM id, footprint and stride fixed: one chase from each SM in turn.
    Sm,
}

/// A sweep: latency histograms along one axis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Curve {
    /// "size/ca", "stride/cg", "tlb/stride=2MiB", "carveout=50/ca", "trace-capacity/ca",
    /// "every-sm/cg/near".
    pub id: String,
    /// Load path.
    pub path: Path,
    /// What varies.
    pub axis: Axis,
    /// Stride of a footprint or SM sweep, bytes (0 for a stride sweep).
    pub stride_bytes: u64,
    /// Footprint of a stride or SM sweep, bytes (0 for a footprint sweep).
    pub footprint_bytes: u64,
    /// Preferred shared-memory carveout the kernel ran with, percent, if set.
    #[serde(default)]
    pub carveout_percent: Option<u32>,
    /// Points, ascending in `x`.
    pub points: Vec<Point>,
}

impl Curve {
    /// Inserts a point keeping `points` sorted by `x` (a point at an existing `x` replaces it).
    pub fn insert(&mut self, p: Point) {
        match self.points.binary_search_by_key(&p.x, |q| q.x) {
            Ok(i) => self.points[i] = p,
            Err(i) => self.points.insert(i, p),
        }
    }

    /// Whether a point at `x` exists.
    pub fn has(&self, x: u64) -> bool {
        self.points.binary_search_by_key(&x, |q| q.x).is_ok()
    }
}

/// A per-access latency trace (Mei & Chu's fine-grained pointer chase).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// "line/ca", "sets/ca/0", "cold/cg/4", ...
    pub id: String,
    /// Load path.
    pub path: Path,
    /// Footprint, bytes.
    pub footprint_bytes: u64,
    /// Stride, bytes.
    pub stride_bytes: u64,
    /// Untimed accesses before the first recorded one (whole laps, so record `i` is access
    /// `i % lap` of a lap).
    pub warm_steps: u64,
    /// Whether the caches were flushed before the launch (cold-miss traces).
    pub cold: bool,
    /// Preferred shared-memory carveout the trace kernel ran with, percent, if set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carveout_percent: Option<u32>,
    /// Cycles of each recorded access (timer overhead included).
    pub latencies: Vec<u32>,
    /// Byte offsets visited in order, for a sequence trace (empty for a strided chase).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order: Vec<u64>,
}

impl Trace {
    /// Accesses per lap.
    pub fn lap(&self) -> u64 {
        (self.footprint_bytes / self.stride_bytes.max(1)).max(1)
    }
}

/// Shared-memory latency of one warp chasing at a stride.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BankPoint {
    /// Stride between the threads' words, in 4-byte words.
    pub stride_words: u32,
    /// Cycles per access.
    pub cycles: f64,
}

/// Constant-cache latency when the warp's threads read `distinct` different addresses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DivergencePoint {
    /// Distinct addresses per warp access.
    pub distinct: u32,
    /// Cycles per warp access.
    pub cycles: f64,
}

/// The device facts a sweep plan is derived from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// Identity read from the driver.
    pub identity: GpuIdentity,
    /// Free device memory when the run started, bytes.
    pub free_bytes: u64,
    /// Per-access records one trace launch holds.
    pub max_trace_steps: u64,
    /// Constant memory a kernel may use, bytes.
    pub const_bytes: u64,
    /// Elements a texture object over linear memory may span (absent in older records).
    #[serde(default)]
    pub max_texture_elements: Option<u64>,
}

/// Everything a dissect run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sweeps {
    /// Always [`SWEEPS_SCHEMA`].
    pub schema: String,
    /// Seconds since the Unix epoch at the start.
    pub created_unix_s: u64,
    /// The device.
    pub device: DeviceInfo,
    /// Driver and compiler versions (absent for simulated data).
    #[serde(default)]
    pub stack: Option<Stack>,
    /// Wall time of the measurements, seconds.
    pub wall_time_s: f64,
    /// Cycles the timing brackets add to every recorded access (measured around no load).
    pub timer_overhead_cycles: f64,
    /// Latency sweeps.
    pub curves: Vec<Curve>,
    /// Per-access traces.
    pub traces: Vec<Trace>,
    /// Shared-memory stride table (one warp).
    #[serde(default)]
    pub banks: Vec<BankPoint>,
    /// Constant-cache divergence table.
    #[serde(default)]
    pub const_divergence: Vec<DivergencePoint>,
    /// Kernel sources the sweeps ran, and how they were built.
    #[serde(default)]
    pub kernels: Vec<crate::results::KernelProvenance>,
}

impl Sweeps {
    /// An empty record for `device`.
    pub fn new(device: DeviceInfo, stack: Option<Stack>, created_unix_s: u64) -> Self {
        Sweeps {
            schema: SWEEPS_SCHEMA.into(),
            created_unix_s,
            device,
            stack,
            wall_time_s: 0.0,
            timer_overhead_cycles: 0.0,
            curves: Vec::new(),
            traces: Vec::new(),
            banks: Vec::new(),
            const_divergence: Vec::new(),
            kernels: Vec::new(),
        }
    }

    /// The curve called `id`.
    pub fn curve(&self, id: &str) -> Option<&Curve> {
        self.curves.iter().find(|c| c.id == id)
    }

    /// Traces whose id starts with `prefix`.
    pub fn traces_with(&self, prefix: &str) -> Vec<&Trace> {
        self.traces.iter().filter(|t| t.id.starts_with(prefix)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_fractions_and_medians() {
        let h = Histogram::of_latencies(4, &[40, 41, 42, 300, 301, 302, 303, 40]);
        assert_eq!(h.total(), 8);
        assert_eq!(h.fraction_below(100.0), 0.5);
        assert_eq!(h.median_between(0.0, 100.0), Some(42.0));
        assert_eq!(h.median_between(100.0, 1000.0), Some(302.0));
        assert!(Histogram::default().mean().is_nan());
    }

    #[test]
    fn curve_points_stay_sorted() {
        let mut c = Curve {
            id: "x".into(),
            path: Path::Ca,
            axis: Axis::Footprint,
            stride_bytes: 32,
            footprint_bytes: 0,
            carveout_percent: None,
            points: vec![],
        };
        for x in [64, 16, 32, 16] {
            c.insert(Point { x, steps: 1, mean_cycles: x as f64, hist: Histogram::default() });
        }
        assert_eq!(c.points.iter().map(|p| p.x).collect::<Vec<_>>(), vec![16, 32, 64]);
        assert!(c.has(32) && !c.has(48));
    }
}
