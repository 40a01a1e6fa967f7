//! Calibration of dissect's confidences: the real plan and inference run on simulated GPUs of
//! planted geometry (the `dissect_sim` geometries plus Mei & Chu's texture-cache organisation,
//! consecutive lines per set, 96 sets of 3, 5, 7 and 24 ways, tree pseudo-LRU), every fact
//! with a planted answer is graded, and the table of right answers per confidence band is
//! printed (`cargo test --test dissect_calibration -- --nocapture`; the README shows it).
//! Facts at confidence >= 0.8 must be right at least 95 % of the time.

use gpubench::dissect::infer::{Dissection, analyze};
use gpubench::dissect::plan::{self, Options};
use gpubench::dissect::sim::{Geometry, Mapping, Partitions, Policy, SimConfig, SimGpu};
use gpubench::results::FactValue;

/// A planted answer.
#[derive(Debug, Clone, PartialEq)]
enum Truth {
    Number(f64),
    Text(&'static str),
}

fn geometry(sets: u64, ways: u64, line: u64, sector: u64, policy: Policy, mapping: Mapping) -> Geometry {
    Geometry { sets, ways, line, sector, policy, mapping }
}

/// A small GPU with the L1 `g` (every carveout, `trace_ways` in the trace kernel).
fn with_l1(name: &'static str, g: Geometry, trace_ways: u64) -> SimConfig {
    let mut cfg = SimConfig::small(name);
    cfg.l1.geom = g;
    cfg.l1_ways_by_carveout = vec![(100, g.ways)];
    cfg.l1_ways_in_trace = trace_ways;
    // Room for the sweeps to pass the largest L1 (4 x shared memory per SM).
    let need = (g.bytes() / 2).next_power_of_two().max(16 << 10);
    cfg.identity.smem_per_sm = need;
    cfg.identity.smem_per_block_optin = need;
    cfg
}

/// The planted geometries.
fn configs() -> Vec<SimConfig> {
    use Mapping::*;
    use Policy::*;
    let mut v = vec![SimConfig::small("baseline")];
    for (name, g, tw) in [
        ("random", geometry(32, 4, 128, 32, Random, Modulo), 3),
        ("plru 4", geometry(32, 4, 128, 32, TreePlru, Modulo), 4),
        ("fifo", geometry(16, 6, 128, 32, Fifo, Modulo), 6),
        ("48 sets", geometry(48, 4, 128, 32, Lru, Modulo), 3),
        ("xor", geometry(32, 4, 128, 32, Lru, XorHash), 3),
        ("64 B lines", geometry(64, 4, 64, 32, Lru, Modulo), 3),
        ("unsectored", geometry(16, 8, 128, 128, Lru, Modulo), 6),
        ("16 ways", geometry(8, 16, 128, 32, Lru, Modulo), 12),
        ("hashed random", geometry(32, 4, 128, 32, Random, Hashed), 3),
        // Seed 001's texture cache: 4 sets, 4 consecutive 32 B lines per set (12 KiB).
        ("Mei & Chu texture", geometry(4, 96, 32, 32, Lru, Consecutive(4)), 96),
        ("4 lines per set, 96 x 24", geometry(96, 24, 32, 32, Lru, Consecutive(4)), 24),
        ("2 lines per set, 96 x 8", geometry(96, 8, 32, 32, Lru, Consecutive(2)), 8),
        ("96 x 3", geometry(96, 3, 128, 32, Lru, Modulo), 3),
        ("96 x 5", geometry(96, 5, 128, 32, Lru, Modulo), 4),
        ("96 x 7 of 64 B", geometry(96, 7, 64, 32, Lru, Modulo), 7),
        ("96 x 24 of 32 B", geometry(96, 24, 32, 32, Lru, Modulo), 24),
        ("96 x 3 hashed", geometry(96, 3, 128, 32, Lru, Hashed), 3),
        ("plru 8", geometry(96, 8, 128, 32, TreePlru, Modulo), 8),
        ("plru 16 hashed", geometry(32, 16, 128, 32, TreePlru, Hashed), 16),
    ] {
        v.push(with_l1(name, g, tw));
    }
    let mut parts = SimConfig::small("two partitions");
    parts.l2_partitions = Some(Partitions {
        partition: geometry(64, 16, 128, 32, Lru, Hashed),
        near_cycles: 220.0,
        far_cycles: 380.0,
        dram_near_cycles: 500.0,
        dram_far_cycles: 660.0,
    });
    parts.dram_jitter = 0.08;
    v.push(parts);
    let mut one = SimConfig::small("one-level L2 of 96 sets");
    one.l2.geom = geometry(96, 16, 128, 32, Lru, Modulo);
    one.l2_near = None;
    one.identity.l2_bytes = 192 << 10;
    v.push(one);
    let mut other = SimConfig::small("pages, banks, prefetch");
    other.tlbs =
        vec![(Geometry::fully_associative(8, 256 << 10), 60.0), (Geometry::fully_associative(32, 256 << 10), 250.0)];
    other.smem = (16, 8, 24.0, 3.0);
    other.dram_fetch_lines = 2;
    v.push(other);
    v
}

fn policy_word(p: Policy) -> &'static str {
    match p {
        Policy::Lru => "lru",
        Policy::Fifo => "fifo",
        Policy::TreePlru => "plru",
        Policy::Random => "non-lru",
    }
}

/// The planted answer for fact `name` of `cfg`, if the simulator plants one.
fn truth(cfg: &SimConfig, name: &str) -> Option<Truth> {
    use Truth::*;
    let n = |x: u64| Some(Number(x as f64));
    let g = cfg.l1.geom;
    let ways_at = |p: u32| cfg.l1_ways_by_carveout.iter().find(|(upto, _)| p <= *upto).map(|(_, w)| *w);
    if let Some(p) = name.strip_prefix("l1.carveout_").and_then(|r| r.strip_suffix(".size_bytes")) {
        return n(g.sets * ways_at(p.parse().ok()?)? * g.line);
    }
    let l2_line = cfg.l2.geom;
    let (near, far, whole) = match (&cfg.l2_partitions, &cfg.l2_near) {
        (Some(p), _) => (Some(p.partition.bytes()), Some(p.partition.bytes()), p.partition.bytes() * 2),
        (None, Some(nl)) => (Some(nl.geom.bytes()), Some(cfg.l2.geom.bytes()), cfg.l2.geom.bytes()),
        (None, None) => (Some(cfg.l2.geom.bytes()), None, cfg.l2.geom.bytes()),
    };
    match name {
        "l1.fetch_bytes" => n(g.sector),
        "l1.size_bytes" => n(g.sets * ways_at(0)? * g.line),
        "l1.line_bytes" => n(g.line),
        "l1.ways" => n(cfg.l1_ways_in_trace),
        "l1.sets" => n(g.sets),
        "l1.trace_size_bytes" => n(g.sets * cfg.l1_ways_in_trace * g.line),
        // Tree pseudo-LRU is not LRU: "non-lru" is right, if less precise than "plru".
        "l1.replacement" if g.policy == Policy::TreePlru => Some(Text("plru|non-lru")),
        "l1.replacement" => Some(Text(policy_word(g.policy))),
        "l1.set_mapping" => match g.mapping {
            Mapping::Modulo if g.sets.is_power_of_two() => Some(Text("bit-defined")),
            Mapping::Modulo => Some(Text("modulo")),
            Mapping::XorHash | Mapping::Hashed => Some(Text("hashed")),
            Mapping::Consecutive(_) => None,
        },
        "l2.near.size_bytes" => n(near?),
        "l2.far.size_bytes" => n(far?),
        "l2.size_bytes" => n(whole),
        "l2.fetch_bytes" => n(l2_line.sector),
        "l2.cold_miss_bytes" if cfg.dram_fetch_lines == 1 => n(l2_line.sector),
        "l2.prefetch" => Some(Text(if cfg.dram_fetch_lines > 1 { "yes" } else { "no" })),
        // The unit one entry covers: the simulator maps one page per entry.
        "tlb.unit_bytes" => n(cfg.tlbs.first()?.0.line),
        "smem.banks" => n(cfg.smem.0 as u64),
        "smem.bank_bytes" => n(cfg.smem.1 as u64),
        "const.fetch_bytes" => n(cfg.constant.first()?.geom.sector),
        "const.l1.size_bytes" => n(cfg.constant.first()?.geom.bytes()),
        "const.l1_5.size_bytes" => n(cfg.constant.get(1)?.geom.bytes()),
        "const.divergent_access" => Some(Text("serialized")),
        _ => {
            let level = name.strip_prefix("tlb.l")?;
            let (i, what) = level.split_once('.')?;
            let (geom, _) = cfg.tlbs.get(i.parse::<usize>().ok()?.checked_sub(1)?)?;
            match what {
                "entries" => n(geom.ways),
                "reach_bytes" => n(geom.ways * geom.line),
                _ => None,
            }
        }
    }
}

fn dissect(cfg: &SimConfig) -> Dissection {
    let mut gpu = SimGpu::new(cfg.clone());
    let sweeps = plan::run(&mut gpu, Options::DEFAULT, 0, None, &mut |_| {}).expect("simulated run");
    analyze(&sweeps)
}

/// Confidence bands of the table.
const BANDS: [(f64, f64); 4] = [(0.0, 0.3), (0.3, 0.5), (0.5, 0.8), (0.8, 1.01)];

#[test]
#[ignore = "calibration replay, run apart: cargo test --workspace --test calibration --test dissect_calibration -- --ignored"]
fn confident_facts_are_right_at_least_95_percent_of_the_time() {
    let cfgs = configs();
    let results: Vec<(String, Dissection)> = std::thread::scope(|s| {
        let chunks: Vec<Vec<&SimConfig>> = (0..2).map(|k| cfgs.iter().skip(k).step_by(2).collect()).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                s.spawn(move || chunk.into_iter().map(|c| (c.name.to_string(), dissect(c))).collect::<Vec<_>>())
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("a simulated run")).collect()
    });
    let mut graded = vec![(0usize, 0usize); BANDS.len()];
    let mut unknown = 0usize;
    let mut wrong_confident = Vec::new();
    let mut wrong_other = Vec::new();
    for (name, d) in &results {
        let cfg = cfgs.iter().find(|c| c.name == name).unwrap();
        for f in &d.facts {
            let Some(t) = truth(cfg, &f.name) else { continue };
            if f.value == FactValue::Text("unknown".into()) {
                unknown += 1;
                continue;
            }
            let right = match (&t, &f.value) {
                (Truth::Number(a), FactValue::Number(b)) => a == b,
                (Truth::Text(a), FactValue::Text(b)) => a.split('|').any(|a| a == b),
                _ => false,
            };
            let band = BANDS.iter().position(|(lo, hi)| f.confidence >= *lo && f.confidence < *hi).unwrap();
            graded[band].0 += 1;
            if right {
                graded[band].1 += 1;
            } else if f.confidence >= 0.8 {
                wrong_confident.push(format!(
                    "{name}: {} = {:?} ({:.2}), planted {t:?}: {}",
                    f.name, f.value, f.confidence, f.method
                ));
            } else {
                wrong_other.push(format!("{name}: {} = {:?} ({:.2}), planted {t:?}", f.name, f.value, f.confidence));
            }
        }
    }
    let mut table = vec!["| confidence | facts | right | share right |".to_string(), "|---|---|---|---|".to_string()];
    for ((lo, hi), (n, r)) in BANDS.iter().zip(&graded) {
        let share = if *n == 0 { "-".to_string() } else { format!("{:.0} %", 100.0 * *r as f64 / *n as f64) };
        let hi = if *hi > 1.0 { "1.0".to_string() } else { format!("{hi:.1}") };
        table.push(format!("| {lo:.1} - {hi} | {n} | {r} | {share} |"));
    }
    println!("{}", table.join("\n"));
    println!("{} geometries; {unknown} facts \"unknown\" (confidence 0) not graded", results.len());
    for w in &wrong_other {
        println!("wrong below 0.8: {w}");
    }
    for w in &wrong_confident {
        println!("WRONG at >= 0.8: {w}");
    }
    let (n, r) = graded[BANDS.len() - 1];
    assert!(n >= 200, "only {n} confident facts graded");
    assert!(r as f64 >= 0.95 * n as f64, "{r} of {n} confident facts right:\n{}", wrong_confident.join("\n"));
    // The book's table and count are this run's.
    let book = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/src/dissect.md")).unwrap();
    let in_book: Vec<&str> = book.lines().skip_while(|l| *l != table[0]).take_while(|l| l.starts_with('|')).collect();
    assert_eq!(in_book, table, "docs/src/dissect.md: regenerate the table with the command beside it");
    let prose = book.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(prose.contains(&format!("on {} simulated GPUs", results.len())), "docs/src/dissect.md: the GPU count");
}
