//! The verdict reports (terminal, Markdown, JUnit XML, JSON) of a comparison of recorded H200
//! results with an injected regression, a throttled benchmark and a stack upgrade.

#[path = "support/junit_xml.rs"]
mod junit_xml;
#[path = "support/shifted.rs"]
mod shifted;

use gpubench::report::{TableOptions, comparison_json, junit, markdown, verdict_report};
use gpubench::results::SampleTelemetry;
use gpubench::verdict::{Comparison, Rule, Side, Verdict, compare};
use shifted::{quick_run, worsen};

/// stream/triad 5 % slower (REGRESSED), stream/copy 5 % slower but throttled (INCONCLUSIVE),
/// driver and NVRTC upgraded, latency.cu's code changed.
#[path = "support/second_run.rs"]
mod second_run;
use second_run::two_runs;

fn comparison() -> Comparison {
    let old = quick_run();
    let mut new = old.clone();
    worsen(&mut new, "stream/triad", 0.05);
    worsen(&mut new, "stream/copy", 0.05);
    let copy = new.benchmarks.iter_mut().find(|b| b.id == "stream/copy").unwrap();
    copy.telemetry = (0..10)
        .map(|_| SampleTelemetry {
            throttled: true,
            slowdown: vec!["hw_thermal_slowdown".into()],
            ..Default::default()
        })
        .collect();
    new.stack.driver_version = Some("590.10.01".into());
    new.stack.nvrtc_version = "13.1".into();
    for b in new.benchmarks.iter_mut().filter(|b| b.family == "latency") {
        for k in &mut b.kernels {
            k.ptx_sha256 = "1".repeat(64);
            k.cubin_sha256 = "2".repeat(64);
        }
    }
    let (old, new) = (two_runs(&old), vec![new]);
    compare(
        Side::of("baselines/nvidia-h200-cc90-132sm-140gib.json", &old),
        Side::of("this run", &new),
        &Rule::default(),
    )
    .unwrap()
}

#[test]
fn the_comparison_has_one_regression_and_one_inconclusive() {
    let c = comparison();
    assert_eq!((c.counts.regressed, c.counts.inconclusive), (1, 1), "{}", c.counts.line());
    assert_eq!(c.metric("stream/triad", "bandwidth").unwrap().verdict, Verdict::Regressed);
    assert_eq!(c.metric("stream/copy", "bandwidth").unwrap().verdict, Verdict::Inconclusive);
    assert_eq!(c.exit_code(), 1);
}

#[test]
fn terminal_report_shows_the_upgrade_and_the_verdicts() {
    let c = comparison();
    let plain = verdict_report(&c, TableOptions { color: false, all: false });
    assert!(!plain.contains('\u{1b}'), "no colour off a terminal");
    let lines: Vec<&str> = plain.lines().collect();
    assert!(lines[0].starts_with("baseline: baselines/nvidia-h200-cc90-132sm-140gib.json (NVIDIA H200 GPU-0ecb8783"));
    assert!(lines.contains(&"stack:    driver 580.159.04 -> 590.10.01, NVRTC 13.0 -> 13.1"), "{plain}");
    assert!(lines.contains(&"code:     generated code changed: latency.cu (PTX, cubin)"), "{plain}");
    assert!(plain.contains("REGRESSED") && plain.contains("stream/triad"));
    assert!(plain.contains("hw_thermal_slowdown"));
    assert!(!plain.contains("stream/scale"), "PASS rows are hidden by default");
    assert!(plain.contains(&format!("({} PASS rows not shown; --all lists them)", c.counts.pass)));
    assert_eq!(
        lines[lines.len() - 2],
        format!("verdicts: 1 REGRESSED, 0 IMPROVED, 1 INCONCLUSIVE, {} PASS of {}", c.counts.pass, c.metrics.len())
    );
    // The last line counts the metrics by what they could detect, and says what that cost: the
    // new side's runs and their wall time.
    assert!(lines.last().unwrap().starts_with("detects:  judged to "), "{plain}");
    let seconds = quick_run().wall_time_s;
    assert!(seconds > 0.0);
    assert!(lines.last().unwrap().ends_with(&format!("; from 1 run of {seconds:.0} s")), "{plain}");
    let all = verdict_report(&c, TableOptions { color: false, all: true });
    assert!(all.contains("stream/scale"));
    // The regression is listed before the PASS rows.
    assert!(all.find("stream/triad").unwrap() < all.find("stream/scale").unwrap());
    let coloured = verdict_report(&c, TableOptions { color: true, all: false });
    assert!(coloured.contains("\u{1b}["), "colour on a terminal");
}

#[test]
fn markdown_summarises_for_a_ci_step() {
    let c = comparison();
    let md = markdown(&c);
    assert!(md.starts_with("## gpubench: REGRESSED\n"));
    assert!(md.contains(&format!("**1 REGRESSED, 0 IMPROVED, 1 INCONCLUSIVE, {} PASS**", c.counts.pass)));
    assert!(md.contains("| driver | 580.159.04 | **590.10.01** |"), "{md}");
    assert!(md.contains("| NVRTC | 13.0 | **13.1** |"));
    assert!(md.contains("Generated code changed: `latency.cu` (PTX, cubin)."));
    assert!(md.contains("### REGRESSED (1)") && md.contains("### Not judged (1)"), "{md}");
    assert!(md.contains(&format!("| PASS | {} | 0 |", c.counts.pass)), "counts by verdict: {md}");
    let regressed_row =
        md.lines().find(|l| l.starts_with("| **REGRESSED** | `stream/triad`")).expect("a row for the regression");
    assert!(regressed_row.contains("-4.77%"), "{regressed_row}");
    assert!(md.contains(&format!("<details><summary>All {} metrics</summary>", c.metrics.len())));
    // Every table row has the same number of cells.
    for line in md.lines().filter(|l| l.starts_with("| **") || l.starts_with("| PASS | `")) {
        assert_eq!(line.matches(" | ").count(), 8, "{line}");
    }
}

#[test]
fn junit_has_one_case_per_metric_and_fails_the_regression() {
    let c = comparison();
    let read = junit_xml::cases(&junit(&c));
    assert_eq!(read.len(), c.metrics.len());
    assert_eq!(junit_xml::tally(&read, "failure:REGRESSED"), 1);
    assert_eq!(junit_xml::tally(&read, "skipped"), 1);
    let triad = read.iter().find(|r| r.name == "stream/triad:bandwidth").unwrap();
    assert_eq!((triad.classname.as_str(), triad.outcome.as_str()), ("gpubench.stream", "failure:REGRESSED"));
    assert!(triad.message.starts_with("REGRESSED: -4.77%"), "{}", triad.message);
    let xml = junit(&c);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let stack = doc.descendants().find(|n| n.attribute("name") == Some("stack")).unwrap();
    assert_eq!(stack.attribute("value"), Some("driver 580.159.04 -> 590.10.01, NVRTC 13.0 -> 13.1"));
}

#[test]
fn json_carries_every_verdict_and_the_rule() {
    let c = comparison();
    let v: serde_json::Value = serde_json::from_str(&comparison_json(&c)).unwrap();
    assert_eq!(v["schema"], "gpubench.comparison/1");
    assert_eq!(v["counts"]["regressed"], 1);
    assert_eq!(v["rule"]["threshold"], 0.02);
    let metrics = v["metrics"].as_array().unwrap();
    assert_eq!(metrics.len(), c.metrics.len());
    let triad = metrics.iter().find(|m| m["benchmark"] == "stream/triad").unwrap();
    assert_eq!(triad["verdict"], "REGRESSED");
    assert_eq!(triad["better"], "higher");
    assert!(triad["ci"]["hi"].as_f64().unwrap() < 0.98);
    assert_eq!(v["upgrade"]["kernels"].as_array().unwrap().len(), 4);
}

/// A default run judged against the committed H100 class baseline (307 metrics, with every
/// non-PASS row and a detects column) gives a Markdown summary a pull-request comment takes.
#[test]
fn the_markdown_of_a_default_run_fits_a_pull_request_comment() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let class = "nvidia-h100-80gb-hbm3-cc90-132sm-79gib";
    let b = gpubench::baseline::Baseline::read(&root.join(format!("baselines/{class}/class.json.xz"))).unwrap();
    let corpus = root.join(format!("tests/corpus/{class}/runs-GPU-24386ad7.tar.xz"));
    let (_, run) = gpubench::verdict::corpus::gather(&[corpus]).unwrap().runs.into_iter().next().unwrap();
    for shift in [0.0, 0.05] {
        let new = gpubench::verdict::calibrate::shifted(&run, shift);
        let c = compare(
            Side { label: "baseline", runs: &b.runs, noise: b.noise.as_ref() },
            Side::of("new", std::slice::from_ref(&new)),
            &gpubench::verdict::Rule::default(),
        )
        .unwrap();
        let md = markdown(&c);
        assert!(md.len() <= gpubench::report::markdown::MAX_MARKDOWN_CHARS, "{} characters", md.len());
        assert!(md.contains("Detectable effects: judged to"), "{md}");
    }
}
