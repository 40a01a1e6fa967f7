//! The DRAM family's operations and configurations: the six streams, the search space
//! (threads per block, unroll, cache hint, grid shape), array sizes, and the choice among the
//! search's finalists. Pure functions, tested without a GPU.

use crate::measure::launch_size;
use crate::measure::search::Trial;
use crate::results::GpuIdentity;

/// Scalar of scale and triad.
pub const SCALAR: f64 = 3.0;
/// Initial values of a, b, c.
pub const INITIAL: [f64; 3] = [1.0, 2.0, 0.0];
/// Value the write-only stream stores.
pub const WRITE_VALUE: f64 = 7.0;

/// The six streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// c = a
    Copy,
    /// b = q c
    Scale,
    /// c = a + b
    Add,
    /// a = b + q c
    Triad,
    /// sum of the words of a
    Read,
    /// c = w
    Write,
}

impl Op {
    /// All six, in run order.
    pub const ALL: [Op; 6] = [Op::Copy, Op::Scale, Op::Add, Op::Triad, Op::Read, Op::Write];

    /// "triad".
    pub fn label(self) -> &'static str {
        match self {
            Op::Copy => "copy",
            Op::Scale => "scale",
            Op::Add => "add",
            Op::Triad => "triad",
            Op::Read => "read",
            Op::Write => "write",
        }
    }

    /// Arrays read plus arrays written per element.
    pub fn arrays_touched(self) -> u64 {
        match self {
            Op::Copy | Op::Scale => 2,
            Op::Add | Op::Triad => 3,
            Op::Read | Op::Write => 1,
        }
    }

    /// Bytes one pass over `n` doubles moves (reads plus writes).
    pub fn bytes(self, n: u64) -> u64 {
        self.arrays_touched() * n * 8
    }

    /// Values of (a, b, c) after a pass on uniform arrays, and the index of the array written.
    pub fn apply(self, [a, b, c]: [f64; 3]) -> ([f64; 3], Option<usize>) {
        match self {
            Op::Copy => ([a, b, a], Some(2)),
            Op::Scale => ([a, SCALAR * c, c], Some(1)),
            Op::Add => ([a, b, a + b], Some(2)),
            Op::Triad => ([b + SCALAR * c, b, c], Some(0)),
            Op::Read => ([a, b, c], None),
            Op::Write => ([a, b, WRITE_VALUE], Some(2)),
        }
    }
}

/// How the grid covers the arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GridShape {
    /// As many blocks as fit on the SMs at once (one wave), each looping over tiles.
    Persistent,
    /// One block per tile: the grid covers the arrays once, blocks start as others retire.
    Flat,
}

impl GridShape {
    /// Both shapes, persistent first.
    pub const ALL: [GridShape; 2] = [GridShape::Persistent, GridShape::Flat];

    /// "persistent" or "flat".
    pub fn label(self) -> &'static str {
        match self {
            GridShape::Persistent => "persistent",
            GridShape::Flat => "flat",
        }
    }
}

/// One configuration: threads per block, vectors per thread per tile, cache hint, grid shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Threads per block.
    pub threads: u32,
    /// 16-byte vectors each thread loads per array before using them.
    pub unroll: u32,
    /// 0: plain accesses; 1: evict-first (`ld/st.global.cs`); 2: loads that skip L1 and fetch
    /// 256-byte blocks into L2 (`ld.global.L1::no_allocate.L2::256B`), plain stores.
    pub hint: u32,
    /// Persistent grid-stride blocks or one block per tile.
    pub shape: GridShape,
}

impl Config {
    /// "threads=256/unroll=4/plain" (persistent) or "threads=256/unroll=4/plain/flat".
    pub fn label(&self) -> String {
        let base = format!("threads={}/unroll={}/{}", self.threads, self.unroll, hint_label(self.hint));
        match self.shape {
            GridShape::Persistent => base,
            GridShape::Flat => format!("{base}/flat"),
        }
    }
}

/// Cache hints, in search order.
pub const HINTS: [u32; 3] = [0, 1, 2];

/// "plain", "evict_first" or "l2_prefetch_256b".
pub fn hint_label(hint: u32) -> &'static str {
    match hint {
        0 => "plain",
        1 => "evict_first",
        _ => "l2_prefetch_256b",
    }
}

/// Kernel of `op` at `c`: "dram_triad_u4_h1".
pub fn kernel_name(op: Op, c: &Config) -> String {
    format!("dram_{}_u{}_h{}", op.label(), c.unroll, c.hint)
}

/// Threads per block the search tries.
pub const SEARCH_THREADS: [u32; 4] = [128, 256, 512, 1024];
/// Unrolls the search tries (in `kernels/dram.cu`).
pub const SEARCH_UNROLLS: [u32; 3] = [2, 4, 8];
/// Threads per block of the full sweep.
pub const SWEEP_THREADS: [u32; 6] = [32, 64, 128, 256, 512, 1024];
/// Unrolls of the full sweep (unroll 1 is in `kernels/dram_sweep.cu`).
pub const SWEEP_UNROLLS: [u32; 4] = [1, 2, 4, 8];
/// Repeats per configuration in the search.
pub const SEARCH_REPEATS: usize = 3;
/// A configuration within this fraction of the best is as good (simpler ones come first).
pub const SEARCH_TOLERANCE: f64 = 0.0025;
/// Smallest array of the size sweep, doubles (8 MiB, as Qiu et al.'s 2^20 elements).
pub const SWEEP_MIN_ELEMENTS: u64 = 1 << 20;

/// The search space, simplest first: persistent before flat grids, fewer threads, smaller
/// unroll, plain before the hints.
pub fn search_space() -> Vec<Config> {
    let mut v = Vec::new();
    for shape in GridShape::ALL {
        for threads in SEARCH_THREADS {
            for unroll in SEARCH_UNROLLS {
                for hint in HINTS {
                    v.push(Config { threads, unroll, hint, shape });
                }
            }
        }
    }
    v
}

/// Doubles per array: 32 L2s, at least 256 MiB and at most 2 GiB, and no more than a quarter
/// of the free memory (three arrays); a multiple of 2^18 doubles (2 MiB).
pub fn array_len(gpu: &GpuIdentity, free_bytes: u64) -> u64 {
    let want = (32 * gpu.l2_bytes).clamp(256 << 20, 2 << 30).min(free_bytes / 4);
    (want / 8) / (1 << 18) * (1 << 18)
}

/// Doubles per array of the full profile: [`SWEEP_MAX_ARRAY_BYTES`], or a quarter of the free
/// memory, or [`array_len`] where that is larger.
pub fn sweep_array_len(gpu: &GpuIdentity, free_bytes: u64) -> u64 {
    let want = SWEEP_MAX_ARRAY_BYTES.min(free_bytes / 4);
    ((want / 8) / (1 << 18) * (1 << 18)).max(array_len(gpu, free_bytes))
}

/// Largest array of the full profile's size sweep: twice STREAM's customary 2^28 doubles, so
/// that the sweep shows whether longer kernels still gain.
pub const SWEEP_MAX_ARRAY_BYTES: u64 = 4 << 30;

/// Array lengths of the size sweep: powers of two from [`SWEEP_MIN_ELEMENTS`] below `n`, then `n`.
pub fn sweep_sizes(n: u64) -> Vec<u64> {
    let mut v: Vec<u64> =
        std::iter::successors(Some(SWEEP_MIN_ELEMENTS), |s| Some(s * 2)).take_while(|s| *s < n).collect();
    v.push(n);
    v
}

/// GB/s of `bytes` moved in `ns`.
pub fn gbps(bytes: u64, ns: f64) -> f64 {
    bytes as f64 / ns
}

/// Sum of the 32-bit words of `elements` doubles of value `v` (all the passes of the read
/// stream together), wrapping as the kernel does.
pub fn read_checksum(v: f64, elements: u128) -> u32 {
    let bits = v.to_bits();
    let per_element = (bits as u32).wrapping_add((bits >> 32) as u32) as u128;
    ((per_element * elements) % (1u128 << 32)) as u32
}

/// Blocks of a grid of `shape` over `passes` passes of `n` doubles: `per_sm` resident blocks on
/// every SM, or one block per tile of `unroll` x `threads` 16-byte vectors of every pass.
pub fn grid_blocks(
    shape: GridShape,
    sm_count: u32,
    per_sm: u32,
    n: u64,
    threads: u32,
    unroll: u32,
    passes: u32,
) -> u32 {
    match shape {
        GridShape::Persistent => sm_count * per_sm,
        GridShape::Flat => {
            let tiles = (n / 2).div_ceil(u64::from(threads) * u64::from(unroll));
            (tiles * u64::from(passes.max(1))).clamp(1, u32::MAX as u64 / 2) as u32
        }
    }
}

/// Passes over `n` doubles per launch of `op` ([`launch_size::passes_for`] at the device's
/// theoretical bandwidth).
pub fn passes(gpu: &GpuIdentity, op: Op, n: u64) -> u32 {
    launch_size::passes_for(op.bytes(n), gpu.peak_dram_bytes_per_s())
}

/// Configurations the search measures again, as the benchmark runs them, before choosing.
pub const REFINE_CANDIDATES: usize = 4;
/// Back-to-back launches per measurement of a finalist.
pub const REFINE_LAUNCHES: u32 = 4;

/// Indices of the `k` best-scoring trials (ties to the earlier), in sweep order.
pub fn finalists<C>(trials: &[Trial<C>], k: usize) -> Vec<usize> {
    let mut scored: Vec<(usize, f64)> = trials.iter().enumerate().filter_map(|(i, t)| Some((i, t.score()?))).collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut v: Vec<usize> = scored.into_iter().take(k).map(|(i, _)| i).collect();
    v.sort_unstable();
    v
}

/// Words the read stream adds its blocks' sums to (`DRAM_READ_SLOTS` in `kernels/dram_ops.cuh`),
/// and the distance between them in words (one 128-byte line).
pub const READ_SLOTS: usize = 256;
/// See [`READ_SLOTS`].
pub const READ_SLOT_STRIDE: usize = 32;

/// The read stream's checksum: the wrapping sum of its slots.
pub fn sum_slots(words: &[u32]) -> u32 {
    words.iter().fold(0u32, |a, w| a.wrapping_add(*w))
}
