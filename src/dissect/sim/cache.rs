//! One set-associative cache: geometry, replacement policy, set mapping, sectors.

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
    /// `(line / n) % sets`: `n` consecutive lines map to one set (Mei & Chu's texture cache, four
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
