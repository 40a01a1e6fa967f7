//! Fleet analysis on recorded runs of three H200 cards (tests/fixtures/recorded/h200-aa/set{1,2,3}-runs.tar.xz,
//! six default-profile runs each), with synthetic defects planted into copies of them.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use gpubench::baseline::Baseline;
use gpubench::fleet::{FleetRule, Loaded, LoadedRun, analyse, baseline::class_baseline, load, report};
use gpubench::results::{ResultsDocument, SmMap, Summary};

const CARD1: &str = "GPU-2e3c43b6-4873-6342-8cfd-b5dc12500dec";
const CARD2: &str = "GPU-1bbcf8a4-fea1-88af-b76f-b2c385cd36e8";
const CARD3: &str = "GPU-df5b3884-f54a-2124-4ed3-bcfdc14ff990";
const L2_MAP: &str = "latency/cg/2MiB";

fn aa_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/recorded/h200-aa")
}

fn tarballs() -> Vec<PathBuf> {
    (1..=3).map(|s| aa_dir().join(format!("set{s}-runs.tar.xz"))).collect()
}

/// The family on which the recorded cards differ as cards of a class do: CARD2 reads CAS of a
/// whole warp on one word 13 % below the two others, atomics on a float per thread and
/// contention on eight threads per word 6-7 % below, in every run (cards of the class fall in
/// groups on atomics). `fleet_names_the_card_of_another_group_on_atomics` shows that the fleet
/// names it; the tests of planted defects leave the family out, so that each tests what it
/// plants.
const GROUPED: &str = "atomics";

/// Everything in the tarballs, read once: 18 default-profile runs, one quick run (set 2), and
/// comparison JSON files (skipped); without the [`GROUPED`] family.
fn all_recorded() -> &'static Loaded {
    static L: OnceLock<Loaded> = OnceLock::new();
    L.get_or_init(|| {
        let mut l = load(&tarballs()).expect("the committed tarballs load");
        for r in &mut l.runs {
            r.doc.benchmarks.retain(|b| b.family != GROUPED);
        }
        l
    })
}

#[test]
fn fleet_names_the_card_of_another_group_on_atomics() {
    let rep = analyse(&load(&tarballs()).unwrap(), &rule());
    let outliers: Vec<_> = rep.outliers().map(|(_, c)| c).collect();
    assert_eq!(outliers.len(), 1, "{:?}", outliers.iter().map(|c| &c.uuid).collect::<Vec<_>>());
    assert_eq!(outliers[0].uuid, CARD2);
    assert!(outliers[0].flagged.iter().all(|f| f.key.starts_with("atomics/")), "{:?}", outliers[0].flagged);
    assert!(outliers[0].flagged.iter().any(|f| f.key == "atomics/cas:warp_contended"), "{:?}", outliers[0].flagged);
}

/// The 18 default-profile runs.
fn recorded() -> &'static Loaded {
    static L: OnceLock<Loaded> = OnceLock::new();
    L.get_or_init(|| {
        let mut l = all_recorded().clone();
        l.runs.retain(|r| r.doc.settings.profile == "default");
        l
    })
}

fn rule() -> FleetRule {
    FleetRule::default()
}

fn scale_metrics(doc: &mut ResultsDocument, bench_prefix: &str, metric: &str, factor: f64) {
    for b in doc.benchmarks.iter_mut().filter(|b| b.id.starts_with(bench_prefix)) {
        for m in b.metrics.iter_mut().filter(|m| m.name == metric) {
            m.samples.iter_mut().for_each(|v| *v *= factor);
            m.summary = Summary::of(&m.samples);
        }
    }
}

/// A plausible per-SM L2 latency map: 276-308 cycles by a fixed per-SM pattern (the chip's
/// layout, the same on every card), a small per-card wobble, and optional planted slow SMs.
fn plant_l2_map(doc: &mut ResultsDocument, card_seed: u32, slow: &[(u32, f64)]) {
    let pairs: Vec<(u32, f64)> = (0..132u32)
        .map(|sm| {
            let layout = ((sm.wrapping_mul(2654435761) >> 7) % 1000) as f64 / 1000.0;
            let wobble = (((sm + 7 * card_seed).wrapping_mul(40503) >> 3) % 100) as f64 / 100.0 - 0.5;
            let mut v = 276.0 + 32.0 * layout + 0.6 * wobble;
            if let Some((_, f)) = slow.iter().find(|(s, _)| *s == sm) {
                v *= f;
            }
            (sm, v)
        })
        .collect();
    let b = doc.benchmarks.iter_mut().find(|b| b.id == L2_MAP).expect("the runs measured latency/cg/2MiB");
    b.sm_maps = vec![SmMap::new("cycles_per_access", "cycles", pairs)];
}

/// Copies of the recorded runs with every card given an L2 chip map; `edit` changes them.
fn planted(edit: impl Fn(&mut LoadedRun)) -> Loaded {
    let mut l = recorded().clone();
    for r in &mut l.runs {
        let seed = match r.doc.gpu.uuid.as_str() {
            CARD1 => 1,
            CARD2 => 2,
            _ => 3,
        };
        plant_l2_map(&mut r.doc, seed, &[]);
        edit(r);
    }
    l
}

#[test]
fn three_recorded_h200_cards_give_an_envelope_and_no_outlier() {
    let rep = analyse(recorded(), &rule());
    assert_eq!(rep.groups.len(), 1);
    let g = &rep.groups[0];
    assert!(g.judged);
    assert_eq!(g.key.class, "nvidia-h200-cc90-132sm-140gib");
    assert_eq!(g.cards.len(), 3);
    assert!(g.cards.iter().all(|c| c.runs == 6), "six runs per card");
    // 301 metrics less the 35 atomics.
    assert_eq!(g.envelope.len(), 266);
    let triad = g.envelope.iter().find(|r| r.key == "dram/triad:bandwidth").unwrap();
    assert_eq!(triad.cards, 3);
    assert!(triad.min <= triad.median && triad.median <= triad.max);
    assert!((4000.0..4300.0).contains(&triad.median), "triad median {}", triad.median);
    let outliers: Vec<_> = rep.outliers().map(|(_, c)| (c.uuid.clone(), report::card_reason(c))).collect();
    assert!(outliers.is_empty(), "outliers among identical cards: {outliers:?}");
    assert!(!rep.has_findings());
    // The quick run of set 2 is a group of its own, too small to judge.
    let all = analyse(all_recorded(), &rule());
    assert_eq!(all.groups.len(), 2);
    assert_eq!((all.groups[1].key.profile.as_str(), all.groups[1].judged), ("quick", false));
    assert!(all.skipped.iter().any(|(f, why)| f.ends_with("runs/v1.json") && why.contains("gpubench.comparison/1")));
    // Hosts come from the archive names.
    assert!(g.cards.iter().any(|c| c.hosts == vec!["set2-runs".to_string()] && c.uuid == CARD2));
}

#[test]
fn a_card_measured_with_other_benchmark_settings_is_not_comparable_not_an_outlier() {
    // Card 3's triad ran at other settings (another version of the benchmark) and 30 % slower:
    // its triad is left out of its judgement, never flagged, and the report says so.
    let l = planted(|r| {
        if r.doc.gpu.uuid == CARD3 {
            for b in r.doc.benchmarks.iter_mut().filter(|b| b.id == "dram/triad") {
                b.params.insert("array_bytes".into(), serde_json::json!(1));
            }
            scale_metrics(&mut r.doc, "dram/triad", "bandwidth", 0.7);
        }
    });
    let rep = analyse(&l, &rule());
    assert!(rep.outliers().next().is_none());
    let c = rep.groups[0].cards.iter().find(|c| c.uuid == CARD3).unwrap();
    assert!(c.not_comparable.contains(&"dram/triad:bandwidth".to_string()), "{:?}", c.not_comparable);
    assert!(report::card_reason(c).contains("other settings"));
    let triad = rep.groups[0].envelope.iter().find(|r| r.key == "dram/triad:bandwidth").unwrap();
    assert_eq!(triad.cards, 2, "the envelope holds the two cards of the common settings");
    // The other cards are judged as before.
    let other = rep.groups[0].cards.iter().find(|c| c.uuid == CARD1).unwrap();
    assert!(other.not_comparable.is_empty());
}

#[test]
fn a_card_20_percent_slower_on_dram_bandwidth_is_flagged_by_name() {
    let l = planted(|r| {
        if r.doc.gpu.uuid == CARD3 {
            scale_metrics(&mut r.doc, "dram/", "bandwidth", 0.8);
        }
    });
    let rep = analyse(&l, &rule());
    let outliers: Vec<_> = rep.outliers().map(|(_, c)| c).collect();
    assert_eq!(outliers.len(), 1, "{:?}", outliers.iter().map(|c| &c.uuid).collect::<Vec<_>>());
    let c = outliers[0];
    assert_eq!(c.uuid, CARD3);
    assert!(c.flagged.iter().any(|f| f.key == "dram/triad:bandwidth" && (f.change + 0.2).abs() < 0.03));
    assert!(c.flagged.iter().all(|f| f.key.starts_with("dram/")), "only DRAM metrics: {:?}", c.flagged);
    assert!(c.outlier_sms.is_empty());
    assert!(c.score > 3.5);
    let text = report::text(&rep, false);
    assert!(text.contains(CARD3) && text.contains("OUTLIER") && text.contains("dram/"));
    let (drains, refused) = report::drain_commands(&rep);
    assert_eq!(drains.len(), 1);
    assert!(refused.is_empty());
    assert!(
        drains[0]
            .starts_with("scontrol update 'nodename=set3-runs' state=drain 'reason=gpubench: outlier GPU-df5b3884"),
        "{drains:?}"
    );
}

#[test]
fn one_sm_30_percent_slower_on_l2_latency_is_flagged_by_card_and_sm() {
    let l = planted(|r| {
        if r.doc.gpu.uuid == CARD1 {
            plant_l2_map(&mut r.doc, 1, &[(17, 1.3)]);
        }
    });
    let rep = analyse(&l, &rule());
    let outliers: Vec<_> = rep.outliers().map(|(_, c)| c).collect();
    assert_eq!(outliers.len(), 1);
    let c = outliers[0];
    assert_eq!(c.uuid, CARD1);
    assert!(c.flagged.is_empty(), "no card-level metric moved: {:?}", c.flagged);
    assert_eq!(c.outlier_sms.len(), 1, "{:?}", c.outlier_sms);
    let s = &c.outlier_sms[0];
    assert_eq!((s.map.as_str(), s.sm), ("latency/cg/2MiB:cycles_per_access", 17));
    assert!(s.change > 0.2 && s.z_card > 3.5 && s.z_class.unwrap() > 3.5);
    assert!(report::card_reason(c).contains("SM 17"));
}

#[test]
fn an_sm_slow_on_every_card_is_layout_not_a_defect() {
    // SM 40 is 15 % slower on all three cards: within each card it stands out, against the
    // class's own SM 40 it does not.
    let l = planted(|r| {
        let seed = if r.doc.gpu.uuid == CARD1 {
            1
        } else if r.doc.gpu.uuid == CARD2 {
            2
        } else {
            3
        };
        plant_l2_map(&mut r.doc, seed, &[(40, 1.15)]);
    });
    let rep = analyse(&l, &rule());
    assert_eq!(rep.outliers().count(), 0);
    // With one card only, the within-card test alone flags it.
    let mut one = l.clone();
    one.runs.retain(|r| r.doc.gpu.uuid == CARD1);
    let rep = analyse(&one, &rule());
    assert!(!rep.groups[0].judged);
    assert_eq!(rep.groups[0].cards[0].outlier_sms.iter().map(|s| s.sm).collect::<Vec<_>>(), vec![40]);
}

#[test]
fn a_card_of_another_driver_is_grouped_apart_not_an_outlier() {
    let mut l = recorded().clone();
    let mut foreign: Vec<LoadedRun> = l.runs.iter().filter(|r| r.doc.gpu.uuid == CARD2).cloned().collect();
    for r in &mut foreign {
        r.doc.stack.driver_version = Some("570.86.15".into());
        r.doc.gpu.uuid = "GPU-00000000-1111-2222-3333-444444444444".into();
        r.host = Some("node-old-driver".into());
        scale_metrics(&mut r.doc, "dram/", "bandwidth", 0.8);
    }
    l.runs.extend(foreign);
    let rep = analyse(&l, &rule());
    assert_eq!(rep.groups.len(), 2);
    assert_eq!(rep.groups[0].cards.len(), 3);
    assert_eq!(rep.groups[0].key.driver, "580.159.04");
    assert_eq!(rep.groups[1].key.driver, "570.86.15");
    assert!(!rep.groups[1].judged);
    assert_eq!(rep.outliers().count(), 0);
    assert!(report::text(&rep, false).contains("not judged"));
}

#[test]
fn reports_in_every_format_name_the_outlier() {
    let l = planted(|r| {
        if r.doc.gpu.uuid == CARD3 {
            scale_metrics(&mut r.doc, "dram/", "bandwidth", 0.8);
        }
    });
    let mut l = l;
    l.nodes.push(gpubench::fleet::NodeStatus {
        schema: gpubench::fleet::NODE_SCHEMA.into(),
        host: "node7".into(),
        exit_code: 3,
        reason: "no CUDA GPU: the driver sees no device".into(),
    });
    let rep = analyse(&l, &rule());
    let md = report::markdown(&rep);
    assert!(md.contains(&format!("`{CARD3}`")) && md.contains("| node7 | 3 |"));
    let xml = gpubench::report::junit::fleet(&rep);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let cases: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("testcase")).collect();
    assert_eq!(cases.len(), 4, "{xml}");
    assert_eq!(doc.descendants().filter(|n| n.has_tag_name("failure")).count(), 2);
    assert_eq!(doc.root_element().attribute("failures"), Some("2"));
    let json: serde_json::Value = serde_json::from_str(&report::json(&rep)).unwrap();
    assert_eq!(json["groups"][0]["cards"].as_array().unwrap().len(), 3);
    assert_eq!(json["failed_nodes"][0]["host"], "node7");
    let (drains, _) = report::drain_commands(&rep);
    assert!(drains.iter().any(|d| d.contains("'nodename=node7'") && d.contains("run failed (exit 3)")));
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join(gpubench::fleet::plot::file_name(&rep.groups[0]));
    gpubench::fleet::plot::envelope_svg(&svg, &rep.groups[0]).unwrap();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.contains("GPU-df5b3884"));
}

#[test]
fn class_baseline_from_the_cards_round_trips() {
    // Set 1's runs predate the split of search results out of the parameters (see the aa
    // README): a baseline cannot mix them with the others, and says so.
    let key = analyse(recorded(), &rule()).groups[0].key.clone();
    let e = class_baseline(recorded(), &key, None, 1_800_000_000).unwrap_err();
    assert_eq!(e.exit_code(), gpubench::error::exit::USAGE);
    let mut l = recorded().clone();
    l.runs.retain(|r| r.doc.gpu.uuid != CARD1);
    let b = class_baseline(&l, &key, None, 1_800_000_000).unwrap();
    assert_eq!(b.runs.len(), 12);
    assert!(b.gpu_uuid.is_none());
    let uuids: std::collections::BTreeSet<_> = b.runs.iter().map(|r| r.gpu.uuid.clone()).collect();
    assert_eq!(uuids.len(), 2);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("class.json");
    gpubench::results::write_json_compact(&path, &b).unwrap();
    assert_eq!(Baseline::read(&path).unwrap().metrics.len(), b.metrics.len());
}

#[test]
fn folders_skip_foreign_json_and_read_node_status() {
    let dir = tempfile::tempdir().unwrap();
    let node = dir.path().join("nodeA");
    std::fs::create_dir_all(&node).unwrap();
    std::fs::write(node.join("other.json"), r#"{"schema":"someone.else/1"}"#).unwrap();
    std::fs::write(
        node.join("node.json"),
        r#"{"schema":"gpubench.node/1","host":"nodeA","exit_code":3,"reason":"no CUDA GPU"}"#,
    )
    .unwrap();
    std::fs::copy(aa_dir().join("set1-runs.tar.xz"), node.join("runs.tar.xz")).unwrap();
    let l = load(&[dir.path().to_path_buf()]).unwrap();
    assert_eq!(l.runs.len(), 6);
    assert_eq!(l.skipped.len(), 1);
    assert_eq!(l.nodes[0].exit_code, 3);
    // A corrupt file of ours is an error, named.
    std::fs::write(node.join("bad.json"), b"{\"schema\":\"gpubench.results/1\",").unwrap();
    let e = load(&[dir.path().to_path_buf()]).unwrap_err();
    assert_eq!(e.exit_code(), gpubench::error::exit::DATA);
    assert!(e.to_string().contains("bad.json"));
}

#[test]
fn health_runs_are_judged_against_the_class_envelope() {
    use gpubench::fleet::{analysis::judge_one, health};
    let re = regex::Regex::new(health::FILTER).unwrap();
    let env = &recorded().runs;
    let mut cand = env.iter().find(|r| r.doc.gpu.uuid == CARD2).unwrap().clone();
    cand.doc.benchmarks.retain(|b| re.is_match(&b.id));
    // The health profile's five benchmarks less its atomics (the family is left out here).
    assert_eq!(cand.doc.benchmarks.len(), 4);
    let (card, n) = judge_one(env, &cand, &rule());
    assert_eq!(n, 3);
    let line = health::verdict_line(0, &card, n);
    assert!(line.starts_with(&format!("PASS GPU 0 {CARD2}: ")), "{line}");
    scale_metrics(&mut cand.doc, "dram/triad", "bandwidth", 0.8);
    let (card, n) = judge_one(env, &cand, &rule());
    let line = health::verdict_line(3, &card, n);
    println!("{line}");
    assert!(line.starts_with(&format!("FAIL GPU 3 {CARD2}: dram/triad:bandwidth -19.7%")), "{line}");
}
