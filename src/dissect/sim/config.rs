//! What a simulated GPU is made of: its cache levels, latencies and noise.

use super::cache::{Geometry, Mapping, Partitions, Policy};
use crate::results::GpuIdentity;

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
    /// Probability of a stray slow access (an interruption: other work on the GPU, ECC
    /// scrubbing, preemption), independently for every access.
    pub outlier_rate: f64,
    /// Cycles a stray adds: log-uniform between the two bounds, so that some strays land among
    /// the misses of a level and some far beyond every level.
    pub outlier_cycles: (f64, f64),
    /// Cycles an L2 or DRAM access from SM `i` adds (how far the SM sits from the L2); an SM
    /// beyond the list adds none. The plan's ordinary chases run on SM 0.
    pub sm_extra_cycles: Vec<f64>,
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
            board_part_number: None,
            vbios_version: None,
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
            outlier_cycles: (40.0, 8000.0),
            sm_extra_cycles: Vec::new(),
        }
    }
}
