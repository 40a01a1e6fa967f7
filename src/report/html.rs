//! The comparison as one self-contained HTML page (no scripts, no files beside it): the
//! summary counts, the two sides, the verdict table with every metric, the clock and throttle
//! telemetry behind each verdict, and the facts. Every text is escaped, and the page is also
//! well-formed XML (every tag closed), so that any parser reads it.

use super::header::{rule_line, utc_time};
use super::table::format_value;
use super::verdict_table::{change_text, detectable_text, sorted};
use crate::verdict::{Comparison, MetricVerdict, SideStats, Verdict};

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222}\
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:2px 8px;text-align:left}\
td.n{text-align:right;font-variant-numeric:tabular-nums}tr.regressed{background:#fdd}\
tr.improved{background:#dfd}tr.inconclusive,tr.not-measured,tr.insensitive{background:#ffd}";

/// Text escaped for HTML (and XML) text and attribute values; control characters other than
/// tab and newline are dropped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' => out.push(ch),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// A table: header cells, then rows of (class, cells); cells are escaped here, a cell starting
/// with '\u{0}' is numeric (right-aligned).
fn table(id: &str, header: &[&str], rows: &[(String, Vec<String>)]) -> String {
    let mut t = format!("<table id=\"{id}\">\n<thead><tr>");
    for h in header {
        t.push_str(&format!("<th>{}</th>", escape(h)));
    }
    t.push_str("</tr></thead>\n<tbody>\n");
    for (class, cells) in rows {
        t.push_str(&format!("<tr class=\"{}\">", escape(class)));
        for c in cells {
            match c.strip_prefix('\u{0}') {
                Some(n) => t.push_str(&format!("<td class=\"n\">{}</td>", escape(n))),
                None => t.push_str(&format!("<td>{}</td>", escape(c))),
            }
        }
        t.push_str("</tr>\n");
    }
    t.push_str("</tbody>\n</table>\n");
    t
}

fn num(text: String) -> String {
    format!("\u{0}{text}")
}

fn class_of(v: Verdict) -> String {
    v.label().to_lowercase().replace(' ', "-")
}

fn median(s: Option<SideStats>) -> String {
    s.map(|s| format_value(s.median)).unwrap_or_else(|| "-".into())
}

/// The whole page.
pub fn html(c: &Comparison) -> String {
    let status = if c.regressed() { "REGRESSED" } else { "no regression" };
    let mut p = String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n");
    p.push_str(&format!("<title>gpubench: {status}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"));
    p.push_str(&format!("<h1>gpubench: {status}</h1>\n"));
    p.push_str(&format!(
        "<p><strong>{}</strong> of {} metrics and facts.</p>\n",
        escape(&c.counts.line()),
        c.metrics.len() + c.facts.len()
    ));
    p.push_str(&counts(c));
    p.push_str(&format!("<p>Compared with a {}.</p>\n", escape(&c.baseline_kind.describe())));
    p.push_str(&format!("<p>Detectable effects: {}.</p>\n", escape(&c.sensitivity().line())));
    p.push_str(&format!("<p>Rule: {}.</p>\n", escape(&rule_line(c))));
    for w in &c.warnings {
        p.push_str(&format!("<p class=\"warning\"><strong>Warning:</strong> {}</p>\n", escape(w)));
    }
    p.push_str("<h2>Sides</h2>\n");
    p.push_str(&sides(c));
    p.push_str("<h2>Verdicts</h2>\n");
    let rows: Vec<(String, Vec<String>)> = sorted(&c.metrics).into_iter().map(verdict_row).collect();
    let header = ["verdict", "benchmark", "metric", "baseline", "new", "unit", "change", "detects", "why"];
    p.push_str(&table("verdicts", &header, &rows));
    for f in &c.families {
        p.push_str(&format!(
            "<p>Family judged as a whole: <strong>{}</strong> {}.</p>\n",
            f.verdict.label(),
            escape(&f.reason)
        ));
    }
    if !c.facts.is_empty() {
        p.push_str("<h2>Facts</h2>\n");
        let rows: Vec<(String, Vec<String>)> = c
            .facts
            .iter()
            .map(|f| (class_of(f.verdict), vec![f.verdict.label().into(), f.name.clone(), f.reason.clone()]))
            .collect();
        p.push_str(&table("facts", &["verdict", "fact", "why"], &rows));
    }
    p.push_str("<h2>Telemetry</h2>\n<p>Median effective clock of each metric's samples and the throttled samples left out.</p>\n");
    let rows: Vec<(String, Vec<String>)> = sorted(&c.metrics).into_iter().map(telemetry_row).collect();
    let header =
        ["metric", "baseline MHz", "new MHz", "baseline throttled left out", "new throttled left out", "too throttled"];
    p.push_str(&table("telemetry", &header, &rows));
    p.push_str("</body>\n</html>\n");
    p
}

/// One row per verdict that occurs: metrics and facts.
fn counts(c: &Comparison) -> String {
    let rows: Vec<(String, Vec<String>)> = super::markdown::counts_by_verdict(c)
        .into_iter()
        .map(|(v, m, f)| (class_of(v), vec![v.label().into(), num(m.to_string()), num(f.to_string())]))
        .collect();
    table("counts", &["verdict", "metrics", "facts"], &rows)
}

fn sides(c: &Comparison) -> String {
    let (b, n) = (&c.baseline, &c.candidate);
    let mut rows = vec![
        (
            "".to_string(),
            vec!["source".into(), format!("{} ({} runs)", b.label, b.runs), format!("{} ({} runs)", n.label, n.runs)],
        ),
        (
            "".to_string(),
            vec!["GPU".into(), format!("{} {}", b.gpu.name, b.gpu.uuid), format!("{} {}", n.gpu.name, n.gpu.uuid)],
        ),
    ];
    for f in &c.upgrade.stack {
        let class = if f.changed() { "changed" } else { "" };
        rows.push((class.into(), vec![f.field.clone(), f.old.clone(), f.new.clone()]));
    }
    rows.push(("".into(), vec!["profile".into(), b.settings.profile.clone(), n.settings.profile.clone()]));
    rows.push(("".into(), vec!["measured".into(), utc_time(b.created_unix_s), utc_time(n.created_unix_s)]));
    table("sides", &["", "baseline", "new"], &rows)
}

fn verdict_row(m: &MetricVerdict) -> (String, Vec<String>) {
    let cells = vec![
        m.verdict.label().into(),
        m.benchmark.clone(),
        m.metric.clone(),
        num(median(m.baseline)),
        num(median(m.candidate)),
        m.unit.clone(),
        num(change_text(m)),
        num(detectable_text(m)),
        m.reason.clone(),
    ];
    (class_of(m.verdict), cells)
}

fn telemetry_row(m: &MetricVerdict) -> (String, Vec<String>) {
    let clock =
        |s: Option<SideStats>| s.and_then(|s| s.clock_mhz).map(|v| format!("{v:.0}")).unwrap_or_else(|| "-".into());
    let excluded = |s: Option<SideStats>| {
        s.map(|s| format!("{} of {}", s.excluded, s.n + s.excluded)).unwrap_or_else(|| "-".into())
    };
    let throttled = [m.baseline, m.candidate].iter().any(|s| s.is_some_and(|s| s.throttled));
    let cells = vec![
        m.key(),
        num(clock(m.baseline)),
        num(clock(m.candidate)),
        num(excluded(m.baseline)),
        num(excluded(m.candidate)),
        if throttled { "yes".into() } else { "no".into() },
    ];
    (class_of(m.verdict), cells)
}
