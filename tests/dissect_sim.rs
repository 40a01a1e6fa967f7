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
