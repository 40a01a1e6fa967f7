//! The Markdown summary of a default run fits a pull-request comment (under 60,000 characters;
//! GitHub takes 65,536) however many metrics are flagged, and still names every REGRESSED
//! metric.

use std::path::Path;

use gpubench::report::markdown;
use gpubench::report::markdown::MAX_MARKDOWN_CHARS;
use gpubench::results::ResultsDocument;
use gpubench::verdict::calibrate::shifted;
use gpubench::verdict::{Comparison, Rule, Side, Verdict, compare};

#[path = "support/second_run.rs"]
mod second_run;
use second_run::two_runs;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The recorded default-profile run of an H200.
fn h200_default() -> ResultsDocument {
    ResultsDocument::read(&root().join("tests/fixtures/recorded/h200-default.json.gz")).unwrap()
}

fn judged(old: &ResultsDocument, new: &ResultsDocument) -> Comparison {
    compare(Side::of("baseline", &two_runs(old)), Side::of("new", std::slice::from_ref(new)), &Rule::default()).unwrap()
}

/// The summary's length in characters, and that every REGRESSED metric is named in it.
fn check(c: &Comparison) -> String {
    let md = markdown(c);
    let chars = md.chars().count();
    assert!(chars < MAX_MARKDOWN_CHARS, "{chars} characters");
    for m in c.metrics.iter().filter(|m| m.verdict == Verdict::Regressed) {
        assert!(md.contains(&format!("`{}`", m.key())) || md.contains(&format!("`{}`", m.benchmark)), "{}", m.key());
    }
    assert!(
        md.contains(&format!(
            "| REGRESSED | {} |",
            c.metrics.iter().filter(|m| m.verdict == Verdict::Regressed).count()
        )) || c.counts.regressed == 0
    );
    md
}

#[test]
fn a_default_run_slower_everywhere_names_every_regression_within_the_limit() {
    let run = h200_default();
    let c = judged(&run, &shifted(&run, 0.10));
    assert!(c.metrics.len() > 200, "{} metrics: not a default run", c.metrics.len());
    assert!(c.counts.regressed > 100, "{}", c.counts.line());
    let md = check(&c);
    assert!(
        md.contains(&format!(
            "### REGRESSED ({}",
            c.metrics.iter().filter(|m| m.verdict == Verdict::Regressed).count()
        ))
    );
}

#[test]
fn long_reasons_shorten_the_tables_to_one_line_per_metric_and_point_to_the_full_reports() {
    let run = h200_default();
    let mut c = judged(&run, &shifted(&run, 0.10));
    // Reasons ten times as long as usual: the full tables no longer fit.
    for m in &mut c.metrics {
        m.reason = format!("{} {}", m.reason, "x".repeat(400));
    }
    let md = check(&c);
    assert!(md.contains("one line each"), "the REGRESSED section is shortened");
    assert!(!md.contains("<details><summary>All"), "the table of all metrics is left out");
    assert!(md.contains("`--verdicts-json`") && md.contains("HTML page"), "a pointer to the full reports");
}

#[test]
fn a_default_run_with_a_few_changes_keeps_every_table() {
    let run = h200_default();
    let mut new = run.clone();
    let changed: Vec<String> = new.benchmarks.iter().take(3).map(|b| b.id.clone()).collect();
    new.benchmarks =
        new.benchmarks.iter().map(|b| if changed.contains(&b.id) { shifted_bench(b) } else { b.clone() }).collect();
    let c = judged(&run, &new);
    let md = check(&c);
    assert!(md.contains(&format!("<details><summary>All {} metrics</summary>", c.metrics.len())), "{md}");
    assert!(!md.contains("one line each"));
}

fn shifted_bench(b: &gpubench::results::BenchmarkResult) -> gpubench::results::BenchmarkResult {
    let mut doc = h200_default();
    doc.benchmarks = vec![b.clone()];
    shifted(&doc, 0.2).benchmarks.remove(0)
}
