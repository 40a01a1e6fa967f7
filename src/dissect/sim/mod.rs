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

mod cache;
mod config;

pub use cache::{Cache, Geometry, Mapping, Partitions, Policy};
pub use config::{Level, SimConfig};

use super::backend::{Backend, ChaseRequest, TraceRequest};
use super::data::{DeviceInfo, HIST_BIN_CYCLES, Histogram, Path, Point};
use super::launch;
use crate::error::{Error, Result};

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
    /// The SM the current request runs on.
    sm: usize,
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
            sm: 0,
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
        let outlier = if self.uniform() < self.cfg.outlier_rate {
            let (lo, hi) = self.cfg.outlier_cycles;
            lo.max(1.0) * (hi.max(lo) / lo.max(1.0)).powf(self.uniform())
        } else {
            0.0
        };
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
        let tlb = self.translate(addr) + self.cfg.sm_extra_cycles.get(self.sm).copied().unwrap_or(0.0);
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
        self.run_from(path, footprint, stride, 0, warm, steps)
    }

    /// A chase from visit `first` of the lap.
    fn run_from(&mut self, path: Path, footprint: u64, stride: u64, first: u64, warm: u64, steps: u64) -> Vec<u32> {
        let lap = footprint / stride;
        let mut k = first % lap.max(1);
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

/// The histogram point of a chase whose accesses took `lat` cycles.
fn point(req: &ChaseRequest, lat: &[u32]) -> Point {
    let mean = lat.iter().map(|&l| l as f64).sum::<f64>() / lat.len().max(1) as f64;
    Point { x: req.footprint, steps: req.steps, mean_cycles: mean, hist: Histogram::of_latencies(HIST_BIN_CYCLES, lat) }
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
        Ok(point(req, &lat))
    }

    fn chase_on_sm(&mut self, req: &ChaseRequest, sm: u32, start: u64) -> Result<Option<Point>> {
        let slots = launch::fixed_capacity(&self.device, launch::Buf::Claims).unwrap_or(0) as u32;
        let cold = req.warm_steps == 0;
        launch::chase_on_sm(&self.device, req, launch::OnSm { sm, start, slots, launch: 1, cold })?;
        if sm >= self.device.identity.sm_count {
            return Ok(None);
        }
        self.launch(req.path, req.footprint, req.stride, None)?;
        if cold {
            self.l2_flush();
        }
        self.sm = sm as usize;
        let lat = self.run_from(req.path, req.footprint, req.stride, start / req.stride, req.warm_steps, req.steps);
        self.sm = 0;
        Ok(Some(point(req, &lat)))
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
