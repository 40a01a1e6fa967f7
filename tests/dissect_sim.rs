//! The dissect plan and inference on simulated GPUs of planted geometry: what comes out must
//! be what was planted.

use gpubench::dissect::infer::{Dissection, analyze};
use gpubench::dissect::plan::{self, Options};
use gpubench::dissect::sim::{Geometry, Mapping, Policy, SimConfig, SimGpu};

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
    expect(&d, "l2.near_bytes", (128 << 10) as f64);
    expect(&d, "l2.fetch_bytes", 32.0);
    expect(&d, "l2.cold_miss_bytes", 32.0);
    expect_text(&d, "l2.prefetch", "no");
    expect(&d, "tlb.page_bytes", (512 << 10) as f64);
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
    assert!(d.fact("l2.near_bytes").is_none(), "{:?}", d.fact("l2.near_bytes"));
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
    expect(&d, "tlb.page_bytes", (256 << 10) as f64);
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
