//! A trace-driven cache simulator with known geometry, and a [`Backend`] built from it.
//!
//! [`Cache`] models one set-associative cache: sets (any count), ways, line size, sectored
//! lines (a miss fills one sector; a present line with an absent sector misses again), LRU,
//! FIFO, tree pseudo-LRU or random replacement, and modulo, XOR-hashed or pseudo-random set
//! mappings. [`SimGpu`] strings caches into the hierarchy the GPU paths go through (L1 /
//! read-only / texture caches, an L2 with a near part and the whole or two partitions that each
//! home half the lines, DRAM, two TLB levels, constant caches) and answers the same chase and
//! trace requests as the GPU, with latency noise, so that the real sweep plan and inference run
//! on it unchanged. Every request is also turned into the GPU's kernel launches and checked
//! ([`super::launch`]): a plan that would launch out of bounds fails here too.

use super::backend::{Backend, ChaseRequest, TraceRequest};
use super::data::{DeviceInfo, HIST_BIN_CYCLES, Histogram, Path, Point};
use super::launch;
use crate::error::{Error, Result};
use crate::results::GpuIdentity;

/// Replacement policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Least recently used.
    Lru,
    /// First in, first out (hits do not refresh).
    Fifo,
    /// Tree pseudo-LRU (ways must be a power of two).
    TreePlru,
    /// A pseudo-random victim.
    Random,
}

/// Which set a line goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mapping {
    /// `line % sets`: bit-defined for a power-of-two set count.
    Modulo,
    /// Low bits XOR-ed with the next two groups of bits (power-of-two set counts only): a
    /// permutation of the sets within every aligned block of `sets` lines.
    XorHash,
    /// A pseudo-random function of the line (any set count): sets fill unevenly, so that the
    /// first set overflows before the cache is full, as on real hashed caches.
    Hashed,
    /// `(line / n) % sets`: `n` consecutive lines map to one set (seed 001's texture cache, four
    /// 32 B lines per set).
    Consecutive(u64),
}

/// Geometry and policy of one cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// Number of sets.
    pub sets: u64,
    /// Ways per set.
    pub ways: u64,
    /// Line (tag) size, bytes.
    pub line: u64,
    /// Sector (fill) size, bytes; equal to `line` for unsectored caches.
    pub sector: u64,
    /// Replacement policy.
    pub policy: Policy,
    /// Set mapping.
    pub mapping: Mapping,
}

impl Geometry {
    /// Capacity in bytes.
    pub fn bytes(&self) -> u64 {
        self.sets * self.ways * self.line
    }

    /// A fully associative LRU cache of `entries` lines of `line` bytes (a TLB).
    pub fn fully_associative(entries: u64, line: u64) -> Self {
        Geometry { sets: 1, ways: entries, line, sector: line, policy: Policy::Lru, mapping: Mapping::Modulo }
    }
}

#[derive(Debug, Clone, Copy)]
struct Way {
    line: u64,
    sectors: u64,
    stamp: u64,
}

/// One simulated cache.
#[derive(Debug, Clone)]
pub struct Cache {
    geom: Geometry,
    sets: Vec<Vec<Way>>,
    plru: Vec<u64>,
    clock: u64,
    rng: u64,
}

impl Cache {
    /// An empty cache.
    pub fn new(geom: Geometry, seed: u64) -> Self {
        assert!(geom.sets > 0 && geom.ways > 0 && geom.line >= geom.sector && geom.sector > 0);
        if geom.policy == Policy::TreePlru {
            assert!(geom.ways.is_power_of_two(), "tree pseudo-LRU needs a power-of-two way count");
        }
        if geom.mapping == Mapping::XorHash {
            assert!(geom.sets.is_power_of_two(), "the XOR hash needs a power-of-two set count");
        }
        Cache {
            geom,
            sets: vec![Vec::with_capacity(geom.ways as usize); geom.sets as usize],
            plru: vec![0; geom.sets as usize],
            clock: 0,
            rng: seed | 1,
        }
    }

    /// The geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geom
    }

    /// Drops every line.
    pub fn flush(&mut self) {
        for s in &mut self.sets {
            s.clear();
        }
        self.plru.iter_mut().for_each(|b| *b = 0);
    }

    /// The set `line` maps to.
    pub fn set_of(&self, line: u64) -> usize {
        let s = self.geom.sets;
        match self.geom.mapping {
            Mapping::Modulo => (line % s) as usize,
            Mapping::XorHash => {
                let b = s.trailing_zeros();
                ((line ^ (line >> b) ^ (line >> (2 * b))) & (s - 1)) as usize
            }
            Mapping::Hashed => (mix(line) % s) as usize,
            Mapping::Consecutive(n) => ((line / n.max(1)) % s) as usize,
        }
    }

    fn next_random(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    fn touch_plru(&mut self, set: usize, way: usize) {
        // Each internal node's bit points away from the most recently used half.
        let ways = self.geom.ways as usize;
        let (mut node, mut lo, mut hi) = (1usize, 0usize, ways);
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if way < mid {
                self.plru[set] |= 1 << node;
                node *= 2;
                hi = mid;
            } else {
                self.plru[set] &= !(1 << node);
                node = 2 * node + 1;
                lo = mid;
            }
        }
    }

    fn plru_victim(&self, set: usize) -> usize {
        let ways = self.geom.ways as usize;
        let (mut node, mut lo, mut hi) = (1usize, 0usize, ways);
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if self.plru[set] & (1 << node) != 0 {
                node = 2 * node + 1;
                lo = mid;
            } else {
                node *= 2;
                hi = mid;
            }
        }
        lo
    }

    /// Accesses the byte at `addr`; returns whether it hit. A miss fills the sector.
    pub fn access(&mut self, addr: u64) -> bool {
        self.clock += 1;
        let line = addr / self.geom.line;
        let sector_bit = 1u64 << ((addr % self.geom.line) / self.geom.sector);
        let set = self.set_of(line);
        let policy = self.geom.policy;
        let clock = self.clock;
        if let Some(i) = self.sets[set].iter().position(|w| w.line == line) {
            let hit = self.sets[set][i].sectors & sector_bit != 0;
            self.sets[set][i].sectors |= sector_bit;
            if policy == Policy::Lru {
                self.sets[set][i].stamp = clock;
            }
            if policy == Policy::TreePlru {
                self.touch_plru(set, i);
            }
            return hit;
        }
        let fresh = Way { line, sectors: sector_bit, stamp: clock };
        if (self.sets[set].len() as u64) < self.geom.ways {
            self.sets[set].push(fresh);
            let i = self.sets[set].len() - 1;
            if policy == Policy::TreePlru {
                self.touch_plru(set, i);
            }
            return false;
        }
        let victim = match policy {
            Policy::Lru | Policy::Fifo => {
                // A plain loop: this is the simulator's hottest path (every miss of a full set).
                let mut victim = 0;
                let mut oldest = u64::MAX;
                for (i, w) in self.sets[set].iter().enumerate() {
                    if w.stamp < oldest {
                        oldest = w.stamp;
                        victim = i;
                    }
                }
                victim
            }
            Policy::TreePlru => self.plru_victim(set),
            Policy::Random => (self.next_random() % self.geom.ways) as usize,
        };
        self.sets[set][victim] = fresh;
        if policy == Policy::TreePlru {
            self.touch_plru(set, victim);
        }
        false
    }
}

/// A 64-bit finaliser (splitmix64): a fixed pseudo-random function of `x`.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// An L2 of two partitions (seen from one SM): each line has a home partition (half the lines
/// each, by a hash of the line); the near partition also keeps copies of the far-homed lines the
/// SM reads. A near miss of a far-homed line is served by the far partition or, missing there,
/// by DRAM behind it; a near miss of a near-homed line goes to DRAM.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Partitions {
    /// Geometry of each partition.
    pub partition: Geometry,
    /// Cycles of a near-partition hit.
    pub near_cycles: f64,
    /// Cycles of a far-partition hit.
    pub far_cycles: f64,
    /// Cycles of a DRAM access behind the near partition.
    pub dram_near_cycles: f64,
    /// Cycles of a DRAM access behind the far partition.
    pub dram_far_cycles: f64,
}

impl Partitions {
    /// Whether `line` (address / line size) is homed in the far partition.
    pub fn far_homed(line: u64) -> bool {
        mix(line ^ 0x5151_5151) & 1 == 1
    }
}

/// A cache level of a simulated path and the latency of a hit in it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Level {
    /// Geometry.
    pub geom: Geometry,
    /// Cycles of a hit.
    pub hit_cycles: f64,
}

/// A planted GPU: every geometry and latency the simulator answers with.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Name used in test messages.
    pub name: &'static str,
    /// The identity the plan derives its sizes from.
    pub identity: GpuIdentity,
    /// Free memory the plan may use, bytes.
    pub free_bytes: u64,
    /// Trace records per launch.
    pub max_trace_steps: u64,
    /// Constant memory, bytes.
    pub const_bytes: u64,
    /// L1 data cache (`ca`), with no preferred carveout.
    pub l1: Level,
    /// L1 ways by preferred carveout: (up to this percent, ways).
    pub l1_ways_by_carveout: Vec<(u32, u64)>,
    /// L1 ways while a trace kernel holds its shared memory.
    pub l1_ways_in_trace: u64,
    /// Read-only path cache (`nc`).
    pub ro: Level,
    /// Texture cache.
    pub tex: Level,
    /// L2 as a whole (hits beyond the near part cost this level's latency).
    pub l2: Level,
    /// The near part of the L2, if the L2 is partitioned.
    pub l2_near: Option<Level>,
    /// Cycles of a DRAM access.
    pub dram_cycles: f64,
    /// An L2 of two partitions instead of `l2` and `l2_near`.
    pub l2_partitions: Option<Partitions>,
    /// Relative jitter of DRAM accesses (uniform, +/-), wider than the caches'.
    pub dram_jitter: f64,
    /// Lines fetched together on a DRAM miss (adjacent-line prefetch), 1 for none.
    pub dram_fetch_lines: u64,
    /// TLB levels (line = page size) and the cycles each adds on a miss in it.
    pub tlbs: Vec<(Geometry, f64)>,
    /// Constant caches, nearest first.
    pub constant: Vec<Level>,
    /// Shared memory: banks, bank width in bytes, cycles of a conflict-free access, cycles
    /// per extra way of conflict.
    pub smem: (u32, u32, f64, f64),
    /// Cycles the timing brackets add.
    pub timer_overhead: f64,
    /// Relative jitter of every latency (uniform, +/-).
    pub jitter: f64,
    /// Probability of a stray slow access.
    pub outlier_rate: f64,
}

impl SimConfig {
    /// A small GPU: 16 KiB of shared memory per SM, a 16 KiB L1 (32 sets x 4 ways of 128 B
    /// lines, 32 B sectors, LRU, bit-defined), a 256 KiB L2 (XOR-hashed, LRU) with a 128 KiB
    /// near part, 512 KiB pages with 16- and 64-entry TLBs, 32 banks of 4 B, 512 B and 4 KiB
    /// constant caches. Tests plant other geometries by changing fields.
    pub fn small(name: &'static str) -> Self {
        let l1 = Geometry { sets: 32, ways: 4, line: 128, sector: 32, policy: Policy::Lru, mapping: Mapping::Modulo };
        let mut identity = crate::results::GpuIdentity {
            name: format!("simulated {name}"),
            uuid: "GPU-00000000-0000-0000-0000-000000000000".into(),
            ordinal: 0,
            pci_bus_id: String::new(),
            cc_major: 0,
            cc_minor: 0,
            sm_count: 1,
            l2_bytes: 256 << 10,
            smem_per_block_optin: 16 << 10,
            smem_per_sm: 16 << 10,
            max_threads_per_sm: 1024,
            regs_per_sm: 65536,
            warp_size: 32,
            sm_clock_max_khz: 1_000_000,
            mem_clock_khz: 1_000_000,
            bus_width_bits: 64,
            total_mem_bytes: 8 << 30,
            ecc_enabled: false,
        };
        identity.name = format!("simulated {name}");
        SimConfig {
            name,
            identity,
            free_bytes: 4 << 30,
            max_trace_steps: 4096,
            const_bytes: 16 << 10,
            l1: Level { geom: l1, hit_cycles: 30.0 },
            l1_ways_by_carveout: vec![(0, 4), (25, 3), (50, 2), (100, 1)],
            l1_ways_in_trace: 3,
            ro: Level { geom: l1, hit_cycles: 32.0 },
            tex: Level { geom: l1, hit_cycles: 60.0 },
            l2: Level {
                geom: Geometry {
                    sets: 128,
                    ways: 16,
                    line: 128,
                    sector: 32,
                    policy: Policy::Lru,
                    mapping: Mapping::XorHash,
                },
                hit_cycles: 350.0,
            },
            l2_near: Some(Level {
                geom: Geometry {
                    sets: 64,
                    ways: 16,
                    line: 128,
                    sector: 32,
                    policy: Policy::Lru,
                    mapping: Mapping::XorHash,
                },
                hit_cycles: 220.0,
            }),
            dram_cycles: 600.0,
            l2_partitions: None,
            dram_jitter: 0.02,
            dram_fetch_lines: 1,
            tlbs: vec![
                (Geometry::fully_associative(16, 512 << 10), 80.0),
                (Geometry::fully_associative(64, 512 << 10), 300.0),
            ],
            constant: vec![
                Level {
                    geom: Geometry {
                        sets: 4,
                        ways: 2,
                        line: 64,
                        sector: 64,
                        policy: Policy::Lru,
                        mapping: Mapping::Modulo,
                    },
                    hit_cycles: 20.0,
                },
                Level {
                    geom: Geometry {
                        sets: 8,
                        ways: 4,
                        line: 128,
                        sector: 128,
                        policy: Policy::Lru,
                        mapping: Mapping::Modulo,
                    },
                    hit_cycles: 70.0,
                },
            ],
            smem: (32, 4, 30.0, 2.0),
            timer_overhead: 6.0,
            jitter: 0.02,
            outlier_rate: 1e-4,
        }
    }
}

/// The simulated GPU.
pub struct SimGpu {
    cfg: SimConfig,
    device: DeviceInfo,
    l1: Cache,
    ro: Cache,
    tex: Cache,
    l2: Cache,
    l2_near: Option<Cache>,
    partitions: Option<(Cache, Cache)>,
    tlbs: Vec<Cache>,
    constant: Vec<Cache>,
    rng: u64,
}

/// What one access cost, and how much its latency varies.
#[derive(Debug, Clone, Copy)]
struct Served {
    cycles: f64,
    jitter: f64,
}

impl SimGpu {
    /// A simulated GPU with empty caches.
    pub fn new(cfg: SimConfig) -> Self {
        let device = DeviceInfo {
            identity: cfg.identity.clone(),
            free_bytes: cfg.free_bytes,
            max_trace_steps: cfg.max_trace_steps,
            const_bytes: cfg.const_bytes,
            max_texture_elements: Some(1 << 27),
        };
        SimGpu {
            l1: Cache::new(cfg.l1.geom, 11),
            ro: Cache::new(cfg.ro.geom, 13),
            tex: Cache::new(cfg.tex.geom, 17),
            l2: Cache::new(cfg.l2.geom, 19),
            l2_near: cfg.l2_near.map(|l| Cache::new(l.geom, 23)),
            partitions: cfg.l2_partitions.map(|p| (Cache::new(p.partition, 41), Cache::new(p.partition, 43))),
            tlbs: cfg.tlbs.iter().map(|(g, _)| Cache::new(*g, 29)).collect(),
            constant: cfg.constant.iter().map(|l| Cache::new(l.geom, 31)).collect(),
            rng: 0x9E37_79B9_7F4A_7C15,
            device,
            cfg,
        }
    }

    /// The planted configuration.
    pub fn config(&self) -> &SimConfig {
        &self.cfg
    }

    fn uniform(&mut self) -> f64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        (self.rng >> 11) as f64 / (1u64 << 53) as f64
    }

    fn noisy(&mut self, served: Served) -> u32 {
        let cycles = served.cycles;
        let j = (2.0 * self.uniform() - 1.0) * served.jitter * cycles;
        let outlier = if self.uniform() < self.cfg.outlier_rate { 3.0 * cycles + 500.0 } else { 0.0 };
        (cycles + j + outlier + self.cfg.timer_overhead).round().max(1.0) as u32
    }

    fn translate(&mut self, addr: u64) -> f64 {
        let mut extra = 0.0;
        for i in 0..self.tlbs.len() {
            if self.tlbs[i].access(addr) {
                return extra;
            }
            extra = self.cfg.tlbs[i].1;
        }
        extra
    }

    /// An access that missed the L1-like caches: cycles and whether DRAM served it.
    fn beyond_l1(&mut self, addr: u64) -> (f64, bool) {
        let tlb = self.translate(addr);
        if let (Some((near, far)), Some(p)) = (&mut self.partitions, self.cfg.l2_partitions) {
            let line = addr / p.partition.line;
            let (cycles, dram) = if near.access(addr) {
                (p.near_cycles, false)
            } else if !Partitions::far_homed(line) {
                (p.dram_near_cycles, true)
            } else if far.access(addr) {
                (p.far_cycles, false)
            } else {
                (p.dram_far_cycles, true)
            };
            return (cycles + tlb, dram);
        }
        let near_hit = match &mut self.l2_near {
            Some(near) => near.access(addr),
            None => false,
        };
        let whole_hit = self.l2.access(addr);
        let (cycles, dram) = if near_hit {
            (self.cfg.l2_near.map(|l| l.hit_cycles).unwrap_or(self.cfg.l2.hit_cycles), false)
        } else if whole_hit {
            (self.cfg.l2.hit_cycles, false)
        } else {
            let line = self.cfg.l2.geom.line;
            let sector = self.cfg.l2.geom.sector;
            for k in 1..self.cfg.dram_fetch_lines {
                for s in 0..line / sector {
                    let neighbour = (addr / line + k) * line + s * sector;
                    self.l2.access(neighbour);
                    if let Some(near) = &mut self.l2_near {
                        near.access(neighbour);
                    }
                }
            }
            (self.cfg.dram_cycles, true)
        };
        (cycles + tlb, dram)
    }

    /// The L2 as the GPU's initialisation kernel leaves it: every SM writes, so each line is in
    /// its home partition (the near part of a split L2 holds only the near-homed ones).
    fn l2_fill(&mut self, addr: u64) {
        if let (Some((near, far)), Some(p)) = (&mut self.partitions, self.cfg.l2_partitions) {
            if Partitions::far_homed(addr / p.partition.line) {
                far.access(addr);
            } else {
                near.access(addr);
            }
            return;
        }
        self.l2.access(addr);
        if let Some(near) = &mut self.l2_near {
            near.access(addr);
        }
    }

    fn l2_flush(&mut self) {
        self.l2.flush();
        if let Some(near) = &mut self.l2_near {
            near.flush();
        }
        if let Some((near, far)) = &mut self.partitions {
            near.flush();
            far.flush();
        }
    }

    fn access(&mut self, path: Path, addr: u64) -> Served {
        let jitter = self.cfg.jitter;
        let beyond = |me: &mut Self| {
            let (cycles, dram) = me.beyond_l1(addr);
            Served { cycles, jitter: if dram { me.cfg.dram_jitter } else { jitter } }
        };
        match path {
            Path::Ca | Path::Nc | Path::Tex => {
                let (cache, level) = match path {
                    Path::Ca => (&mut self.l1, self.cfg.l1),
                    Path::Nc => (&mut self.ro, self.cfg.ro),
                    _ => (&mut self.tex, self.cfg.tex),
                };
                if cache.access(addr) { Served { cycles: level.hit_cycles, jitter } } else { beyond(self) }
            }
            Path::Cg => beyond(self),
            // The TLB sweeps touch few lines; the model keeps them in the L2.
            Path::Tlb => Served { cycles: self.translate(addr) + self.cfg.l2.hit_cycles, jitter },
            Path::Const => {
                for i in 0..self.constant.len() {
                    if self.constant[i].access(addr) {
                        return Served { cycles: self.cfg.constant[i].hit_cycles, jitter };
                    }
                }
                beyond(self)
            }
        }
    }

    fn l1_with_ways(&mut self, path: Path, ways: Option<u64>) {
        let (cache, level) = match path {
            Path::Ca => (&mut self.l1, self.cfg.l1),
            Path::Nc => (&mut self.ro, self.cfg.ro),
            Path::Tex => (&mut self.tex, self.cfg.tex),
            _ => return,
        };
        let mut geom = level.geom;
        if let Some(w) = ways {
            geom.ways = w;
        }
        *cache = Cache::new(geom, 37);
    }

    /// Initialises the visited elements (they pass through the L2, as the GPU's init kernel's
    /// stores do) and resets the per-launch caches.
    fn launch(&mut self, path: Path, footprint: u64, stride: u64, ways: Option<u64>) -> Result<()> {
        if stride == 0 || footprint < stride || !footprint.is_multiple_of(stride) {
            return Err(Error::Usage(format!("simulated chase: footprint {footprint} is not a multiple of {stride}")));
        }
        if path == Path::Const {
            for c in &mut self.constant {
                c.flush();
            }
        } else if path != Path::Tlb {
            // Only the last stores can still be in the L2 (LRU): the last four L2 sizes' worth.
            let lap = footprint / stride;
            let from = lap.saturating_sub(4 * self.cfg.identity.l2_bytes.max(1) / stride);
            for k in from..lap {
                self.l2_fill(k * stride);
            }
        }
        self.l1_with_ways(path, ways);
        Ok(())
    }

    fn carveout_ways(&self, percent: Option<u32>) -> Option<u64> {
        let p = percent?;
        self.cfg.l1_ways_by_carveout.iter().find(|(upto, _)| p <= *upto).map(|(_, w)| *w)
    }

    /// Byte address of visit `k` of a chase (the TLB chase scatters its visits inside their
    /// stride blocks, as `dissect_init64` does).
    fn visit(path: Path, k: u64, stride: u64) -> u64 {
        if path == Path::Tlb {
            let el = path.element_bytes();
            k * stride + launch::scatter(k, stride / el, launch::SCATTER_ELEMENTS) * el
        } else {
            k * stride
        }
    }

    fn run(&mut self, path: Path, footprint: u64, stride: u64, warm: u64, steps: u64) -> Vec<u32> {
        let lap = footprint / stride;
        let mut k = 0u64;
        for _ in 0..warm {
            self.access(path, Self::visit(path, k, stride));
            k = (k + 1) % lap;
        }
        // The TLBs are fully associative LRU caches: after a lap of a cyclic chase their state
        // repeats every lap, so later laps repeat the simulated ones.
        let exact = if path == Path::Tlb { steps.min(2 * lap) } else { steps };
        let mut served: Vec<Served> = Vec::with_capacity(steps as usize);
        for i in 0..steps {
            let s =
                if i < exact { self.access(path, Self::visit(path, k, stride)) } else { served[(i - lap) as usize] };
            served.push(s);
            k = (k + 1) % lap;
        }
        served.into_iter().map(|s| self.noisy(s)).collect()
    }
}

impl Backend for SimGpu {
    fn device(&self) -> &DeviceInfo {
        &self.device
    }

    fn timer_overhead(&mut self) -> Result<f64> {
        launch::check(&self.device, &launch::timer(256, 8192))?;
        Ok(self.cfg.timer_overhead)
    }

    fn chase(&mut self, req: &ChaseRequest) -> Result<Point> {
        launch::chase(&self.device, req, 0)?;
        let ways = if req.path == Path::Ca { self.carveout_ways(req.carveout_percent) } else { None };
        self.launch(req.path, req.footprint, req.stride, ways)?;
        let lat = self.run(req.path, req.footprint, req.stride, req.warm_steps, req.steps);
        let mean = lat.iter().map(|&l| l as f64).sum::<f64>() / lat.len().max(1) as f64;
        Ok(Point {
            x: req.footprint,
            steps: req.steps,
            mean_cycles: mean,
            hist: Histogram::of_latencies(HIST_BIN_CYCLES, &lat),
        })
    }

    fn trace(&mut self, req: &TraceRequest) -> Result<Vec<u32>> {
        launch::trace(&self.device, req, 0)?;
        let ways = matches!(req.path, Path::Ca | Path::Nc | Path::Tex).then_some(self.cfg.l1_ways_in_trace);
        let ways = if req.path == Path::Ca { ways } else { None };
        self.launch(req.path, req.footprint, req.stride, ways)?;
        if req.cold {
            self.l2_flush();
        }
        Ok(self.run(req.path, req.footprint, req.stride, req.warm_steps, req.steps))
    }

    fn sequence_trace(
        &mut self,
        path: Path,
        footprint: u64,
        offsets: &[u64],
        carveout: Option<u32>,
    ) -> Result<Vec<u32>> {
        launch::sequence(&self.device, path, footprint, offsets, carveout, 0)?;
        let ways = (path == Path::Ca).then_some(self.cfg.l1_ways_in_trace);
        self.l1_with_ways(path, ways);
        for &o in offsets {
            self.l2_fill(o);
        }
        let mut out = Vec::with_capacity(offsets.len());
        for &o in offsets {
            let s = self.access(path, o);
            out.push(self.noisy(s));
        }
        Ok(out)
    }

    fn smem_stride(&mut self, stride_words: u32) -> Result<f64> {
        launch::smem_chase(&self.device, stride_words, 1024)?;
        let (banks, width, base, per_way) = self.cfg.smem;
        let mut words_per_bank: Vec<Vec<u64>> = vec![Vec::new(); banks as usize];
        for t in 0..32u64 {
            let byte = t * stride_words as u64 * 4;
            let word = byte / width as u64;
            let bank = (word % banks as u64) as usize;
            if !words_per_bank[bank].contains(&word) {
                words_per_bank[bank].push(word);
            }
        }
        let ways = words_per_bank.iter().map(|w| w.len()).max().unwrap_or(1) as f64;
        let c = base + per_way * (ways - 1.0);
        Ok(c + (2.0 * self.uniform() - 1.0) * self.cfg.jitter * c * 0.1)
    }

    fn const_divergent(&mut self, distinct: u32) -> Result<f64> {
        launch::const_divergent(&self.device, distinct, 1024)?;
        let base = self.cfg.constant.first().map(|l| l.hit_cycles).unwrap_or(self.cfg.l2.hit_cycles);
        let c = base * distinct as f64;
        Ok(c + (2.0 * self.uniform() - 1.0) * self.cfg.jitter * c * 0.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geom(sets: u64, ways: u64, policy: Policy, mapping: Mapping) -> Geometry {
        Geometry { sets, ways, line: 128, sector: 32, policy, mapping }
    }

    #[test]
    fn lru_set_thrashes_with_one_line_too_many() {
        let mut c = Cache::new(geom(4, 2, Policy::Lru, Mapping::Modulo), 1);
        let lines = [0u64, 4, 8]; // three lines of set 0
        for _ in 0..3 {
            for l in lines {
                c.access(l * 128);
            }
        }
        assert!(lines.iter().all(|l| !c.access(l * 128)), "cyclic access of ways + 1 lines always misses under LRU");
    }

    #[test]
    fn sectors_fill_one_at_a_time() {
        let mut c = Cache::new(geom(4, 2, Policy::Lru, Mapping::Modulo), 1);
        assert!(!c.access(0));
        assert!(c.access(4));
        assert!(!c.access(32), "another sector of a present line misses");
        assert!(c.access(36));
    }

    #[test]
    fn fifo_ignores_hits_lru_does_not() {
        for (policy, survivor_hits) in [(Policy::Lru, true), (Policy::Fifo, false)] {
            let mut c = Cache::new(geom(1, 2, policy, Mapping::Modulo), 1);
            c.access(0);
            c.access(128);
            c.access(0); // refreshes line 0 under LRU only
            c.access(256); // evicts line 1 (LRU) or line 0 (FIFO)
            assert_eq!(c.access(0), survivor_hits, "{policy:?}");
        }
    }

    #[test]
    fn xor_hash_permutes_sets_within_an_aligned_block() {
        let c = Cache::new(geom(16, 2, Policy::Lru, Mapping::XorHash), 1);
        for block in 0..8u64 {
            let mut seen: Vec<usize> = (0..16).map(|i| c.set_of(block * 16 + i)).collect();
            seen.sort();
            assert_eq!(seen, (0..16).collect::<Vec<_>>());
        }
        assert_ne!(c.set_of(16), c.set_of(0), "the hash is not the modulo mapping");
    }

    #[test]
    fn consecutive_lines_share_a_set() {
        let c = Cache::new(
            Geometry { sets: 4, ways: 2, line: 32, sector: 32, policy: Policy::Lru, mapping: Mapping::Consecutive(4) },
            1,
        );
        let sets: Vec<usize> = (0..20).map(|l| c.set_of(l)).collect();
        assert_eq!(sets, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 0, 0, 0, 0]);
    }

    #[test]
    fn tree_plru_and_random_keep_capacity() {
        for policy in [Policy::TreePlru, Policy::Random] {
            let mut c = Cache::new(geom(2, 4, policy, Mapping::Modulo), 7);
            for _ in 0..3 {
                for l in 0..8u64 {
                    c.access(l * 128);
                }
            }
            assert!((0..8u64).all(|l| c.access(l * 128)), "{policy:?}: 8 lines fit 2 sets x 4 ways");
        }
    }
}
