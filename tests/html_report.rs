//! The HTML page of a comparison, read back with an HTML5 parser (no parse errors, the expected
//! tables and rows) and an XML parser (every tag closed), with hostile names in it.

use std::path::Path;

use gpubench::report::html;
use gpubench::results::{Better, ResultsDocument, SampleTelemetry, Summary};
use gpubench::verdict::{Comparison, Rule, Side, Verdict, compare};
use scraper::{ElementRef, Html, Selector};

const HOSTILE: &str = "</td><script>alert(1)</script>\u{1}\u{1b}[31m &amp; \"q\" 'a' µs";

#[path = "support/second_run.rs"]
mod second_run;
use second_run::two_runs;

fn fixture() -> ResultsDocument {
    ResultsDocument::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h200-quick-run.json")).unwrap()
}

/// stream/triad 5 % slower (REGRESSED, renamed with [`HOSTILE`]), stream/copy 5 % slower but
/// throttled (INCONCLUSIVE), the new driver's name hostile too.
fn comparison() -> Comparison {
    let old = fixture();
    let mut new = old.clone();
    for id in ["stream/triad", "stream/copy"] {
        let b = new.benchmarks.iter_mut().find(|b| b.id == id).unwrap();
        for m in &mut b.metrics {
            let f = if m.better == Better::Lower { 1.05 } else { 1.0 / 1.05 };
            m.samples.iter_mut().for_each(|v| *v *= f);
            m.summary = Summary::of(&m.samples);
        }
    }
    let copy = new.benchmarks.iter_mut().find(|b| b.id == "stream/copy").unwrap();
    copy.telemetry = (0..10).map(|_| SampleTelemetry { throttled: true, ..Default::default() }).collect();
    new.stack.driver_version = Some(format!("590 {HOSTILE}"));
    let (old, new) = (two_runs(&old), vec![new]);
    let mut c = compare(Side::of("baseline", &old), Side::of("new", &new), &Rule::default()).unwrap();
    let triad = c.metrics.iter_mut().find(|m| m.benchmark == "stream/triad").unwrap();
    assert_eq!(triad.verdict, Verdict::Regressed);
    triad.reason = HOSTILE.into();
    c
}

fn select<'a>(doc: &'a Html, css: &str) -> Vec<ElementRef<'a>> {
    doc.select(&Selector::parse(css).unwrap()).collect()
}

fn cells(row: &ElementRef) -> Vec<String> {
    row.select(&Selector::parse("td").unwrap()).map(|td| td.text().collect::<String>()).collect()
}

/// What a hostile text reads as on the page: itself without its control characters.
fn shown(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).collect()
}

#[test]
fn the_page_parses_as_html_without_errors_and_has_a_row_per_metric() {
    let c = comparison();
    let page = html(&c);
    let doc = Html::parse_document(&page);
    assert!(doc.errors.is_empty(), "HTML parse errors: {:?}", doc.errors);
    assert!(select(&doc, "script").is_empty(), "a name became markup");
    assert!(select(&doc, "link, img, iframe").is_empty(), "self-contained");

    let rows = select(&doc, "table#verdicts tbody tr");
    assert_eq!(rows.len(), c.metrics.len());
    let regressed: Vec<_> = rows.iter().filter(|r| r.value().attr("class") == Some("regressed")).collect();
    assert_eq!(regressed.len(), 1);
    let cells_of = cells(regressed[0]);
    assert_eq!(&cells_of[..3], ["REGRESSED", "stream/triad", "bandwidth"]);
    assert_eq!(cells_of[6], "-4.77%");
    assert_eq!(cells_of[8], shown(HOSTILE));
    // Sorted by verdict: the regression first.
    assert_eq!(cells(&rows[0])[0], "REGRESSED");

    let counts: Vec<Vec<String>> = select(&doc, "table#counts tbody tr").iter().map(cells).collect();
    assert!(counts.contains(&vec!["REGRESSED".into(), "1".into(), "0".into()]), "{counts:?}");
    let pass = counts.iter().find(|r| r[0] == "PASS").unwrap();
    assert_eq!(pass[1], c.metrics.iter().filter(|m| m.verdict == Verdict::Pass).count().to_string());

    let telemetry = select(&doc, "table#telemetry tbody tr");
    assert_eq!(telemetry.len(), c.metrics.len());
    let copy = telemetry.iter().map(cells).find(|r| r[0] == "stream/copy:bandwidth").unwrap();
    assert!(copy[4].starts_with("10 of ") || copy[5] == "yes", "the throttled samples are shown: {copy:?}");
    let sides: Vec<Vec<String>> = select(&doc, "table#sides tbody tr").iter().map(cells).collect();
    assert!(sides.iter().any(|r| r[0] == "driver" && r[2] == shown(&format!("590 {HOSTILE}"))), "{sides:?}");
}

#[test]
fn the_page_is_well_formed_every_tag_closed() {
    let c = comparison();
    let page = html(&c);
    let opts = roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() };
    let doc = roxmltree::Document::parse_with_options(&page, opts).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(doc.root_element().tag_name().name(), "html");
    let tables = doc.descendants().filter(|n| n.has_tag_name("table")).count();
    assert_eq!(tables, 4 + usize::from(!c.facts.is_empty()), "counts, sides, verdicts, (facts,) telemetry");
    for row in doc.descendants().filter(|n| n.has_tag_name("tr")) {
        let n = row.children().filter(|c| c.is_element()).count();
        assert!(n > 0, "an empty row");
    }
}

#[test]
fn escaping_leaves_no_markup_and_no_control_characters() {
    let e = html::escape("<a href='x'>&\"\u{1}\u{1b}\t");
    assert_eq!(e, "&lt;a href=&#39;x&#39;&gt;&amp;&quot;\t");
}
