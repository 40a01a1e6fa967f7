//! The dissect plan and inference on simulated GPUs of planted geometry: what comes out must
//! be what was planted.

use gpubench::dissect::infer::{Dissection, analyze};
use gpubench::dissect::plan::{self, Options};
use gpubench::dissect::sim::{Geometry, Mapping, Partitions, Policy, SimConfig, SimGpu};

fn dissect(cfg: SimConfig) -> Dissection {
    let mut gpu = SimGpu::new(cfg);
    let sweeps = plan::run(&mut gpu, Options::DEFAULT, 0, None, &mut |_| {}).expect("simulated run");
    analyze(&sweeps)
}

fn expect(d: &Dissection, name: &str, value: f64) {
    let got = d.number(name);
    assert_eq!(got, Some(value), "{name}: {:?}\nfacts: {:#?}", d.fact(name), d.facts);
}

fn expect_text(d: &Dissection, name: &str, value: &str) {
    assert_eq!(d.text(name), Some(value), "{name}: {:?}", d.fact(name));
}

fn l1_geometry(sets: u64, ways: u64, line: u64, sector: u64, policy: Policy, mapping: Mapping) -> Geometry {
    Geometry { sets, ways, line, sector, policy, mapping }
}

/// Checks the L1 facts against the planted geometry (ways in the trace kernel: `trace_ways`).
fn check_l1(d: &Dissection, g: Geometry, trace_ways: u64, policy: &str, mapping: &str) {
    expect(d, "l1.fetch_bytes", g.sector as f64);
    expect(d, "l1.size_bytes", g.bytes() as f64);
    expect(d, "l1.line_bytes", g.line as f64);
    expect(d, "l1.ways", trace_ways as f64);
    expect(d, "l1.trace_size_bytes", (g.sets * trace_ways * g.line) as f64);
    expect(d, "l1.sets", g.sets as f64);
    expect_text(d, "l1.set_mapping", mapping);
    expect_text(d, "l1.replacement", policy);
}

#[test]
fn baseline_small_gpu() {
    let cfg = SimConfig::small("baseline");
    let g = cfg.l1.geom;
    let d = dissect(cfg);
    check_l1(&d, g, 3, "lru", "bit-defined");
    expect(&d, "l2.size_bytes", (256 << 10) as f64);
    expect(&d, "l2.near.size_bytes", (128 << 10) as f64);
    // A near part in front of the whole: beyond the near step the whole L2 serves every access.
    expect(&d, "l2.far.size_bytes", (256 << 10) as f64);
    expect(&d, "l2.fetch_bytes", 32.0);
    expect(&d, "l2.cold_miss_bytes", 32.0);
    expect_text(&d, "l2.prefetch", "no");
    expect(&d, "tlb.unit_bytes", (512 << 10) as f64);
    expect_text(&d, "tlb.page_bytes", "unknown");
    expect(&d, "tlb.l1.entries", 16.0);
    expect(&d, "tlb.l2.entries", 64.0);
    expect(&d, "smem.banks", 32.0);
    expect(&d, "smem.bank_bytes", 4.0);
    expect(&d, "l1.carveout_0.size_bytes", (16 << 10) as f64);
    expect(&d, "l1.carveout_25.size_bytes", (12 << 10) as f64);
    expect(&d, "l1.carveout_50.size_bytes", (8 << 10) as f64);
    expect(&d, "l1.carveout_100.size_bytes", (4 << 10) as f64);
    expect(&d, "const.fetch_bytes", 64.0);
    expect(&d, "const.l1.size_bytes", 512.0);
    expect(&d, "const.l1_5.size_bytes", 4096.0);
    expect_text(&d, "const.divergent_access", "serialized");
    expect(&d, "ro.size_bytes", (16 << 10) as f64);
    expect(&d, "tex.size_bytes", (16 << 10) as f64);
}

fn with_l1(name: &'static str, g: Geometry, carveout_ways: Vec<(u32, u64)>, trace_ways: u64) -> SimConfig {
    let mut cfg = SimConfig::small(name);
    cfg.l1.geom = g;
    cfg.l1_ways_by_carveout = carveout_ways;
    cfg.l1_ways_in_trace = trace_ways;
    cfg
}

#[test]
fn random_replacement_is_not_lru() {
    let g = l1_geometry(32, 4, 128, 32, Policy::Random, Mapping::Modulo);
    let d = dissect(with_l1("random", g, vec![(100, 4)], 3));
    check_l1(&d, g, 3, "non-lru", "bit-defined");
}

#[test]
fn tree_plru_is_told_from_lru_by_the_probes() {
    let g = l1_geometry(32, 4, 128, 32, Policy::TreePlru, Mapping::Modulo);
    let d = dissect(with_l1("plru", g, vec![(100, 4)], 4));
    check_l1(&d, g, 4, "plru", "bit-defined");
}

#[test]
fn fifo_is_told_from_lru_by_the_probes() {
    let g = l1_geometry(16, 6, 128, 32, Policy::Fifo, Mapping::Modulo);
    let d = dissect(with_l1("fifo", g, vec![(100, 6)], 6));
    check_l1(&d, g, 6, "fifo", "bit-defined");
}

#[test]
fn forty_eight_sets_map_by_modulo() {
    let g = l1_geometry(48, 4, 128, 32, Policy::Lru, Mapping::Modulo);
    let d = dissect(with_l1("48 sets", g, vec![(0, 4), (100, 2)], 3));
    check_l1(&d, g, 3, "lru", "modulo");
    expect(&d, "l1.carveout_100.size_bytes", (12 << 10) as f64);
}

#[test]
fn xor_hashed_sets_are_found_hashed() {
    let g = l1_geometry(32, 4, 128, 32, Policy::Lru, Mapping::XorHash);
    let d = dissect(with_l1("hashed", g, vec![(100, 4)], 3));
    check_l1(&d, g, 3, "lru", "hashed");
}

#[test]
fn sixty_four_byte_lines_of_two_sectors() {
    let g = l1_geometry(64, 4, 64, 32, Policy::Lru, Mapping::Modulo);
    let d = dissect(with_l1("64 B lines", g, vec![(100, 4)], 3));
    check_l1(&d, g, 3, "lru", "bit-defined");
}

#[test]
fn unsectored_lines_fetch_whole() {
    let g = l1_geometry(16, 8, 128, 128, Policy::Lru, Mapping::Modulo);
    let d = dissect(with_l1("unsectored", g, vec![(100, 8)], 6));
    check_l1(&d, g, 6, "lru", "bit-defined");
}

#[test]
fn many_ways_few_sets() {
    let g = l1_geometry(8, 16, 128, 32, Policy::Lru, Mapping::Modulo);
    let d = dissect(with_l1("16 ways", g, vec![(100, 16)], 12));
    check_l1(&d, g, 12, "lru", "bit-defined");
}

#[test]
fn unpartitioned_l2_of_ninety_six_sets() {
    let mut cfg = SimConfig::small("96-set L2");
    cfg.l2.geom = Geometry { sets: 96, ways: 16, line: 128, sector: 32, policy: Policy::Lru, mapping: Mapping::Modulo };
    cfg.l2_near = None;
    cfg.identity.l2_bytes = 192 << 10;
    let d = dissect(cfg);
    expect(&d, "l2.size_bytes", (192 << 10) as f64);
    // One level: the near step is the whole L2, and there is no far level.
    expect(&d, "l2.near.size_bytes", (192 << 10) as f64);
    expect_text(&d, "l2.far.size_bytes", "unknown");
    assert_eq!(d.fact("l2.far.size_bytes").unwrap().confidence, 0.0);
    expect(&d, "l1.size_bytes", (16 << 10) as f64);
}

#[test]
fn other_pages_banks_and_prefetch() {
    let mut cfg = SimConfig::small("pages, banks, prefetch");
    cfg.tlbs =
        vec![(Geometry::fully_associative(8, 256 << 10), 60.0), (Geometry::fully_associative(32, 256 << 10), 250.0)];
    cfg.smem = (16, 8, 24.0, 3.0);
    cfg.dram_fetch_lines = 2;
    let d = dissect(cfg);
    expect(&d, "tlb.unit_bytes", (256 << 10) as f64);
    expect(&d, "tlb.l1.entries", 8.0);
    expect(&d, "tlb.l1.reach_bytes", (2 << 20) as f64);
    expect(&d, "tlb.l2.entries", 32.0);
    expect(&d, "smem.banks", 16.0);
    expect(&d, "smem.bank_bytes", 8.0);
    expect_text(&d, "l2.prefetch", "yes");
}

#[test]
fn read_only_and_texture_caches_of_their_own() {
    let mut cfg = SimConfig::small("own ro and tex");
    cfg.ro.geom =
        Geometry { sets: 24, ways: 2, line: 128, sector: 32, policy: Policy::Random, mapping: Mapping::Modulo };
    cfg.tex.geom = Geometry { sets: 16, ways: 4, line: 32, sector: 32, policy: Policy::Lru, mapping: Mapping::Modulo };
    let d = dissect(cfg);
    expect(&d, "ro.size_bytes", (6 << 10) as f64);
    expect(&d, "ro.line_bytes", 128.0);
    expect(&d, "ro.ways", 2.0);
    expect(&d, "ro.sets", 24.0);
    expect_text(&d, "ro.replacement", "non-lru");
    expect_text(&d, "ro.set_mapping", "modulo");
    expect(&d, "tex.size_bytes", 2048.0);
    expect(&d, "tex.fetch_bytes", 32.0);
    expect(&d, "tex.line_bytes", 32.0);
    expect(&d, "tex.ways", 4.0);
    expect(&d, "tex.sets", 16.0);
}

/// Seen from one SM, an L2 of two partitions of 128 KiB with pseudo-randomly hashed sets (as
/// the H200's L2 behaves): the near partition holds every line the SM reads until it overflows;
/// beyond, the far-homed half hits in the far partition (which overflows at twice its size) and
/// the near-homed half comes from DRAM. DRAM latency is broad. The near capacity, the far/near
/// split and the whole L2 must come out, each at or below what was planted (a hashed cache
/// starts missing before it is full), never one taken for the other.
#[test]
fn two_partitions_seen_from_one_sm() {
    let mut cfg = SimConfig::small("two partitions");
    let partition =
        Geometry { sets: 64, ways: 16, line: 128, sector: 32, policy: Policy::Lru, mapping: Mapping::Hashed };
    cfg.l2_partitions = Some(Partitions {
        partition,
        near_cycles: 220.0,
        far_cycles: 380.0,
        dram_near_cycles: 500.0,
        dram_far_cycles: 660.0,
    });
    cfg.dram_jitter = 0.08;
    let d = dissect(cfg.clone());
    let near = d.number("l2.near.size_bytes").expect("near capacity");
    let far = d.number("l2.far.size_bytes").expect("far partition");
    let whole = d.number("l2.size_bytes").expect("whole L2");
    let part = partition.bytes() as f64;
    assert!(near <= 1.05 * part && near >= 0.5 * part, "near {near} of {part}: {:?}", d.fact("l2.near.size_bytes"));
    assert!(far <= 1.05 * part && far >= 0.5 * part, "far {far} of {part}: {:?}", d.fact("l2.far.size_bytes"));
    assert!(whole <= 2.1 * part && whole >= 1.0 * part, "whole {whole}: {:?}", d.fact("l2.size_bytes"));
    let latency = |name: &str| {
        let l = d.latencies.iter().find(|l| l.name == name).unwrap_or_else(|| panic!("no {name}: {:?}", d.latencies));
        let mut v = l.samples.clone();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2] + cfg.timer_overhead
    };
    assert!((latency("l2.near.hit") - 220.0).abs() < 10.0);
    assert!((latency("l2.far.hit") - 380.0).abs() < 15.0, "{}", latency("l2.far.hit"));
    let dram = latency("dram");
    assert!(dram > 480.0 && dram < 700.0, "{dram}");
    let far_fact = d.fact("l2.far.size_bytes").unwrap();
    assert!(far_fact.method.contains("(~1/2)"), "the far level serves half: {far_fact:?}");
    expect(&d, "l2.cold_miss_bytes", 32.0);
    expect_text(&d, "l2.prefetch", "no");
}

/// A pseudo-randomly hashed L1 with random replacement: the line comes out, the policy is not
/// LRU, and what the traces cannot pin down (the set count of a cache whose first set overflows
/// before it is full) is not reported with confidence.
#[test]
fn hashed_random_l1_is_not_read_with_false_confidence() {
    let g = l1_geometry(32, 4, 128, 32, Policy::Random, Mapping::Hashed);
    let d = dissect(with_l1("hashed random", g, vec![(100, 4)], 3));
    expect(&d, "l1.fetch_bytes", 32.0);
    expect(&d, "l1.line_bytes", 128.0);
    // Unevenly filled sets overflow long before the cache is full: the knee understates the
    // capacity, and says so by its confidence.
    let size = d.fact("l1.size_bytes").expect("a capacity");
    let bytes = d.number("l1.size_bytes").unwrap();
    assert!(bytes <= g.bytes() as f64, "{size:?}");
    assert!(bytes >= 0.5 * g.bytes() as f64 || size.confidence <= 0.3, "{size:?}");
    expect_text(&d, "l1.replacement", "non-lru");
    if let Some(w) = d.number("l1.ways") {
        assert_eq!(w, 3.0, "ways in the trace kernel");
    }
    if let Some(f) = d.fact("l1.sets") {
        let sets = d.number("l1.sets").unwrap();
        assert!(sets == 32.0 || f.confidence <= 0.3, "{f:?}");
    }
}

#[test]
fn every_fact_has_a_confidence_and_a_method() {
    let d = dissect(SimConfig::small("confidence"));
    assert!(d.facts.len() >= 30, "{} facts", d.facts.len());
    for f in &d.facts {
        assert!((0.0..=1.0).contains(&f.confidence), "{f:?}");
        assert!(!f.method.is_empty() && !f.method.contains('\n'), "{f:?}");
    }
    let names: std::collections::BTreeSet<&str> = d.facts.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names.len(), d.facts.len(), "fact names are unique");
}

/// An L2 or DRAM access takes longer from an SM farther from the L2: the latencies are the
/// median over every SM, not the latency of the SM the one-block sweeps ran on (SM 0 here).
#[test]
fn l2_and_dram_latencies_are_medians_over_every_sm() {
    let mut cfg = SimConfig::small("eight SMs");
    cfg.identity.sm_count = 8;
    cfg.sm_extra_cycles = (0..8).map(|sm| 4.0 * sm as f64).collect();
    let (near, whole, dram, overhead) =
        (cfg.l2_near.unwrap().hit_cycles, cfg.l2.hit_cycles, cfg.dram_cycles, cfg.timer_overhead);
    let mut gpu = SimGpu::new(cfg);
    let sweeps = plan::run(&mut gpu, Options::QUICK, 0, None, &mut |_| {}).expect("simulated run");
    for id in ["every-sm/cg/near", "every-sm/cg/far", "every-sm/cg/dram"] {
        let c = sweeps.curve(id).unwrap_or_else(|| panic!("{id} not measured"));
        assert_eq!(c.points.iter().map(|p| p.x).collect::<Vec<_>>(), (0..8).collect::<Vec<_>>(), "{id}");
    }
    let d = analyze(&sweeps);
    // The median SM adds 14 cycles (SMs 3 and 4 add 12 and 16); SM 0 adds none.
    let median_extra = 14.0;
    for (name, planted) in [("l2.near.hit", near), ("l2.far.hit", whole), ("dram", dram)] {
        let l = d.latencies.iter().find(|l| l.name == name).unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(l.samples.len(), 8, "{name}: one value per SM");
        let mut v = l.samples.clone();
        v.sort_by(f64::total_cmp);
        let median = 0.5 * (v[3] + v[4]);
        let expected = planted + median_extra;
        assert!((median - expected).abs() <= 0.03 * expected, "{name}: {median} vs {expected} (overhead {overhead})");
        assert!(v[7] - v[0] > 20.0, "{name}: the SMs differ: {v:?}");
    }
    let row = d.rows.iter().find(|r| r.level == "L2 near").unwrap();
    assert!(row.latency_from.as_deref().is_some_and(|s| s.starts_with("8 SMs")), "{row:?}");
}

/// Four consecutive 32 B lines to a set, 256 sets of 5 ways: the first set overflows after 4
/// x 256 + 1 lines, a fifth short of the 40 KiB the cache holds. The overfull set's lines come
/// in runs of four ([1, 1, 1, 1021] lines apart): a regular layout, not a hash, which turns the
/// first miss into the five ways and the whole capacity.
#[test]
fn block_mapped_sets_are_read_as_runs_of_lines() {
    let mut cfg = SimConfig::small("four lines to a set");
    cfg.tex.geom =
        Geometry { sets: 256, ways: 5, line: 32, sector: 32, policy: Policy::Lru, mapping: Mapping::Consecutive(4) };
    let d = dissect(cfg);
    expect(&d, "tex.line_bytes", 32.0);
    expect(&d, "tex.consecutive_lines", 4.0);
    expect(&d, "tex.sets", 256.0);
    expect(&d, "tex.ways", 5.0);
    expect_text(&d, "tex.set_mapping", "bit-defined");
    expect(&d, "tex.size_bytes", (40 << 10) as f64);
    expect(&d, "tex.trace_size_bytes", (40 << 10) as f64);
    for f in ["tex.sets", "tex.set_mapping", "tex.size_bytes"] {
        assert!(d.fact(f).unwrap().confidence >= 0.9, "{:?}", d.fact(f));
    }
}

/// One stray slow access in a thousand, of magnitudes that often land among the misses: the
/// line, the policy and the trace kernel's capacity stay what was planted.
#[test]
fn one_stray_in_a_thousand_is_set_aside() {
    let mut cfg = SimConfig::small("strays");
    cfg.outlier_rate = 1e-3;
    let g = cfg.l1.geom;
    let d = dissect(cfg);
    check_l1(&d, g, 3, "lru", "bit-defined");
    let line = d.fact("l1.line_bytes").unwrap();
    assert!(line.confidence >= 0.9 && line.method.contains("strays"), "{line:?}");
}
