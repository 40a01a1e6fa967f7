//! The JUnit XML of a comparison and of a fleet report, with names and messages that break
//! hand-written XML (control characters, an ANSI colour, markup, quotes, non-ASCII), read back
//! with a real XML parser: the document parses, the counts agree with the cases, and every
//! verdict keeps its kind of test result.

#[path = "support/junit_xml.rs"]
mod junit_xml;
#[path = "support/shifted.rs"]
mod shifted;

use gpubench::fleet::NodeStatus;
use gpubench::fleet::analysis::{CardReport, FleetReport, FleetRule, GroupKey, GroupReport};
use gpubench::report::junit;
use gpubench::verdict::{Comparison, Rule, Side, Verdict, compare};
use junit_xml::{NASTY, cases, survives, tally};
use shifted::{quick_run, worsen};

/// stream/triad 5 % slower (REGRESSED), stream/copy 5 % faster (IMPROVED), then one metric of
/// each kind that is not judged, the regression renamed with [`NASTY`].
#[path = "support/second_run.rs"]
mod second_run;
use second_run::two_runs;

fn comparison() -> Comparison {
    let old = quick_run();
    let mut new = old.clone();
    worsen(&mut new, "stream/triad", 0.05);
    worsen(&mut new, "stream/copy", -0.05);
    let (old, new) = (two_runs(&old), vec![new]);
    let mut c = compare(Side::of("baseline", &old), Side::of("new", &new), &Rule::default()).unwrap();
    let triad = c.metrics.iter_mut().find(|m| m.benchmark == "stream/triad").unwrap();
    assert_eq!(triad.verdict, Verdict::Regressed, "{}", triad.reason);
    triad.benchmark = format!("stream/{NASTY}");
    triad.reason = format!("slower: {NASTY}");
    let passing: Vec<usize> = (0..c.metrics.len()).filter(|&i| c.metrics[i].verdict == Verdict::Pass).collect();
    for (i, v) in passing.iter().zip([Verdict::Inconclusive, Verdict::NotMeasured, Verdict::Insensitive]) {
        c.metrics[*i].verdict = v;
        c.metrics[*i].reason = format!("{}: {NASTY}", v.label());
    }
    if let Some(f) = c.facts.first_mut() {
        f.name = format!("fact {NASTY}");
    }
    c.upgrade.stack.iter_mut().for_each(|f| f.new = format!("13.1 {NASTY}"));
    c.recount();
    c
}

#[test]
fn a_comparison_with_hostile_names_is_xml_with_its_verdicts_kept() {
    let c = comparison();
    let xml = junit(&c);
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
    let read = cases(&xml);
    assert_eq!(read.len(), c.metrics.len() + c.facts.len());
    assert_eq!(tally(&read, "failure:REGRESSED"), c.counts.regressed);
    assert_eq!(tally(&read, "failure:REGRESSED"), 1);
    assert_eq!(tally(&read, "skipped"), c.counts.inconclusive + c.counts.not_measured + c.counts.insensitive);
    assert_eq!(tally(&read, "skipped"), 3);
    assert_eq!(tally(&read, "pass"), c.counts.pass + c.counts.improved);

    let failed = read.iter().find(|r| r.outcome == "failure:REGRESSED").unwrap();
    assert!(survives(&failed.name), "{:?}", failed.name);
    assert!(failed.name.starts_with("stream/") && failed.name.ends_with(":bandwidth"), "{:?}", failed.name);
    assert_eq!(failed.classname, "gpubench.stream");
    assert!(failed.message.starts_with("REGRESSED: slower: ") && survives(&failed.message), "{:?}", failed.message);
    let improved = read.iter().find(|r| r.name == "stream/copy:bandwidth").unwrap();
    assert!(improved.outcome == "pass" && improved.message.starts_with("IMPROVED"), "{improved:?}");
    for skipped in read.iter().filter(|r| r.outcome == "skipped") {
        assert!(survives(&skipped.message), "{skipped:?}");
    }
    if !c.facts.is_empty() {
        assert!(read.iter().any(|r| r.classname == "gpubench.facts" && survives(&r.name)));
    }
    // The suite properties carry the stack change, markup and all, as text.
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let stack = doc.descendants().find(|n| n.attribute("name") == Some("stack")).unwrap();
    assert!(survives(stack.attribute("value").unwrap()), "{:?}", stack.attribute("value"));
}

#[test]
fn a_comparison_without_regressions_has_no_failure() {
    let old = vec![quick_run()];
    let c = compare(Side::of("baseline", &old), Side::of("new", &old), &Rule::default()).unwrap();
    let read = cases(&junit(&c));
    assert_eq!(read.len(), c.metrics.len() + c.facts.len());
    assert_eq!(read.iter().filter(|r| r.outcome.starts_with("failure")).count(), 0);
}

fn card(uuid: &str, host: &str, outlier: bool) -> CardReport {
    CardReport {
        uuid: uuid.into(),
        name: "NVIDIA H200".into(),
        hosts: vec![host.into()],
        sources: vec![],
        runs: 3,
        score: if outlier { 9.0 } else { 0.5 },
        worst_metric: None,
        flagged: vec![],
        outlier_sms: vec![],
        outlier,
        z: Default::default(),
        values: Default::default(),
        not_comparable: vec![],
    }
}

#[test]
fn a_fleet_report_with_hostile_hosts_is_xml_with_outliers_and_failed_nodes_failing() {
    let key = GroupKey { class: "h200".into(), driver: "580".into(), nvrtc: "13.0".into(), profile: "default".into() };
    let judged = GroupReport {
        key: key.clone(),
        judged: true,
        envelope: vec![],
        cards: vec![
            card("GPU-1", "n1", false),
            card("GPU-2", &format!("n2 {NASTY}"), true),
            card("GPU-3", "n3", false),
        ],
    };
    let small = GroupReport {
        key: GroupKey { driver: "590".into(), ..key },
        judged: false,
        envelope: vec![],
        cards: vec![card("GPU-4", "n4", false)],
    };
    let node = NodeStatus {
        schema: gpubench::fleet::NODE_SCHEMA.into(),
        host: format!("n5 {NASTY}"),
        exit_code: 3,
        reason: format!("no CUDA GPU {NASTY}"),
    };
    let rep = FleetReport {
        rule: FleetRule::default(),
        groups: vec![judged, small],
        failed_nodes: vec![node],
        skipped: vec![],
    };
    let read = cases(&junit::fleet(&rep));
    assert_eq!(read.len(), 5);
    assert_eq!(read.iter().filter(|r| r.outcome.starts_with("failure")).count(), 2);
    assert_eq!(tally(&read, "skipped"), 1);
    assert_eq!(tally(&read, "pass"), 2);
    let outlier = read.iter().find(|r| r.name.starts_with("GPU-2")).unwrap();
    assert!(outlier.outcome.starts_with("failure") && survives(&outlier.name), "{outlier:?}");
    let node = read.iter().find(|r| r.classname == "nodes").unwrap();
    assert!(node.outcome.starts_with("failure") && survives(&node.name), "{node:?}");
    assert!(node.message.starts_with("exit 3: no CUDA GPU") && survives(&node.message), "{node:?}");
    assert_eq!(read.iter().find(|r| r.name.starts_with("GPU-4")).unwrap().message, "too few cards");
}
