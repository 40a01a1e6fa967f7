//! Presenting a fleet report: terminal tables, Markdown, JSON (JUnit XML is
//! `report::junit::fleet`), and the Slurm drain commands for the nodes that need attention.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};

use super::analysis::{CardReport, FleetReport, GroupReport};
use crate::report::format_value;

fn pct(change: f64) -> String {
    format!("{:+.1}%", 100.0 * change)
}

/// "OUTLIER", "ok" or "not judged" (too few cards).
pub fn card_verdict(g: &GroupReport, c: &CardReport) -> &'static str {
    match (c.outlier, g.judged) {
        (true, _) => "OUTLIER",
        (false, true) => "ok",
        (false, false) => "not judged",
    }
}

/// One line naming why a card is an outlier (its worst metric and worst SM) and what it could
/// not be judged on.
pub fn card_reason(c: &CardReport) -> String {
    let mut parts = Vec::new();
    if let Some(f) = c.flagged.first() {
        parts.push(format!("{} {} (z {:.1})", f.key, pct(f.change), f.z));
    }
    if c.flagged.len() > 1 {
        parts.push(format!("{} more metrics", c.flagged.len() - 1));
    }
    if let Some(s) = c.outlier_sms.first() {
        parts.push(format!("SM {} {} {}", s.sm, s.map, pct(s.change)));
    }
    if c.outlier_sms.len() > 1 {
        parts.push(format!("{} more SMs", c.outlier_sms.len() - 1));
    }
    if !c.not_comparable.is_empty() {
        parts.push(format!("{} metrics measured with other settings, not judged", c.not_comparable.len()));
    }
    parts.join("; ")
}

/// One row per card: UUID, host, runs, outlier score, worst metric, what was flagged.
pub fn cards_table(g: &GroupReport) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    t.set_header(vec!["card", "host", "runs", "score", "worst metric", "verdict", "why"]);
    for c in &g.cards {
        t.add_row(vec![
            Cell::new(&c.uuid),
            Cell::new(c.hosts.join(",")),
            Cell::new(c.runs).set_alignment(CellAlignment::Right),
            Cell::new(format!("{:.2}", c.score)).set_alignment(CellAlignment::Right),
            Cell::new(c.worst_metric.as_deref().unwrap_or("-")),
            Cell::new(card_verdict(g, c)),
            Cell::new(card_reason(c)),
        ]);
    }
    t
}

/// The class envelope: one row per metric (all of them, or only those a card is flagged on).
pub fn envelope_table(g: &GroupReport, all: bool) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    t.set_header(vec!["metric", "unit", "cards", "median", "MAD", "min", "max", "range %"]);
    let flagged = |k: &str| g.cards.iter().any(|c| c.flagged.iter().any(|f| f.key == k));
    for r in g.envelope.iter().filter(|r| all || flagged(&r.key)) {
        let right = |v: String| Cell::new(v).set_alignment(CellAlignment::Right);
        let range =
            if r.median != 0.0 { format!("{:.2}", 100.0 * (r.max - r.min) / r.median.abs()) } else { "-".into() };
        t.add_row(vec![
            Cell::new(&r.key),
            Cell::new(&r.unit),
            right(r.cards.to_string()),
            right(format_value(r.median)),
            right(format_value(r.mad)),
            right(format_value(r.min)),
            right(format_value(r.max)),
            right(range),
        ]);
    }
    t
}

/// The terminal report: per group a heading, its cards and (the flagged part of) its envelope,
/// then the failed nodes and a one-line total.
pub fn text(report: &FleetReport, all: bool) -> String {
    let mut out = String::new();
    for g in &report.groups {
        out.push_str(&format!(
            "{}: {} cards, {} metrics{}\n",
            g.key.describe(),
            g.cards.len(),
            g.envelope.len(),
            if g.judged { String::new() } else { format!(" (fewer than {} cards: not judged)", report.rule.min_cards) }
        ));
        out.push_str(&format!("{}\n", cards_table(g)));
        let env = envelope_table(g, all);
        if env.row_iter().next().is_some() {
            out.push_str(&format!("{env}\n"));
        }
    }
    for n in &report.failed_nodes {
        out.push_str(&format!("node {} FAILED (exit {}): {}\n", n.host, n.exit_code, n.reason));
    }
    out.push_str(&summary_line(report));
    out.push('\n');
    out
}

/// "3 cards in 1 group: 0 outlier cards, 0 failed nodes".
pub fn summary_line(report: &FleetReport) -> String {
    let cards: usize = report.groups.iter().map(|g| g.cards.len()).sum();
    format!(
        "{cards} cards in {} groups: {} outlier cards, {} failed nodes",
        report.groups.len(),
        report.outliers().count(),
        report.failed_nodes.len()
    )
}

/// Markdown for a CI step summary.
pub fn markdown(report: &FleetReport) -> String {
    let mut md = String::from("## gpubench fleet\n\n");
    md.push_str(&format!("{}\n\n", summary_line(report)));
    for g in &report.groups {
        md.push_str(&format!("### {}\n\n", g.key.describe()));
        md.push_str("| card | host | runs | score | verdict | why |\n| --- | --- | ---: | ---: | --- | --- |\n");
        for c in &g.cards {
            md.push_str(&format!(
                "| `{}` | {} | {} | {:.2} | {} | {} |\n",
                c.uuid,
                c.hosts.join(", "),
                c.runs,
                c.score,
                card_verdict(g, c),
                card_reason(c).replace('|', "/")
            ));
        }
        md.push('\n');
    }
    if !report.failed_nodes.is_empty() {
        md.push_str("### Failed nodes\n\n| node | exit | reason |\n| --- | ---: | --- |\n");
        for n in &report.failed_nodes {
            md.push_str(&format!("| {} | {} | {} |\n", n.host, n.exit_code, n.reason.replace('|', "/")));
        }
    }
    md
}

/// The report as pretty JSON.
pub fn json(report: &FleetReport) -> String {
    serde_json::to_string_pretty(report).expect("fleet reports serialise")
}

/// A drain reason Slurm accepts in one quoted word: no quotes, no control characters, at
/// most 200 characters.
pub fn drain_reason(text: &str) -> String {
    let clean: String = text.chars().map(|c| if c == '"' || c == '\'' || c.is_control() { ' ' } else { c }).collect();
    clean.chars().take(200).collect()
}

/// `value` as one word for a POSIX shell: in single quotes, each `'` written as `'\''`.
pub fn sh_quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', "'\\''"))
}

/// The `scontrol` line that drains `host` with `reason`, every value quoted for a POSIX
/// shell. The host must be a valid host name ([`crate::fleet::input::valid_host_name`]); the
/// caller refuses others.
pub fn drain_command(host: &str, reason: &str) -> String {
    format!(
        "scontrol update {} state=drain {}",
        sh_quote(&format!("nodename={host}")),
        sh_quote(&format!("reason={}", drain_reason(reason)))
    )
}

/// One drain command per node that needs attention: the hosts of outlier cards, and nodes
/// whose run failed. Printed for an operator (or a later job step), never run here. Hosts
/// that are not valid host names (a folder or archive name chosen by anyone who can write to
/// the shared folder) get no command: they are returned apart, to be reported.
pub fn drain_commands(report: &FleetReport) -> (Vec<String>, Vec<String>) {
    let mut lines = Vec::new();
    let mut refused = Vec::new();
    let mut add = |host: &str, reason: String| {
        if crate::fleet::input::valid_host_name(host) {
            lines.push(drain_command(host, &reason));
        } else {
            refused.push(format!("no drain command for {host:?}: not a valid host name"));
        }
    };
    for (_, c) in report.outliers() {
        for h in &c.hosts {
            add(h, format!("gpubench: outlier {} {}", c.uuid, card_reason(c)));
        }
    }
    for n in &report.failed_nodes {
        add(&n.host, format!("gpubench: run failed (exit {}): {}", n.exit_code, n.reason));
    }
    (lines, refused)
}

/// The combined table of a multi-GPU run: one row per GPU with how its process ended.
pub fn devices_table(outcomes: &[crate::runner::fanout::DeviceOutcome]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    t.set_header(vec!["GPU", "UUID", "exit", "benchmarks", "wall s", "results / error"]);
    for o in outcomes {
        let right = |v: String| Cell::new(v).set_alignment(CellAlignment::Right);
        let what = match &o.reason {
            Some(r) => r.clone(),
            None => o.run.results.display().to_string(),
        };
        t.add_row(vec![
            right(o.run.ordinal.to_string()),
            Cell::new(&o.run.uuid),
            right(o.code.to_string()),
            right(o.doc.as_ref().map(|d| d.benchmarks.len().to_string()).unwrap_or_else(|| "-".into())),
            right(format!("{:.1}", o.seconds)),
            Cell::new(what),
        ]);
    }
    t
}

/// Every metric's median side by side, one column per GPU (in the order given).
pub fn side_by_side(docs: &[&crate::results::ResultsDocument]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    let mut header = vec!["metric".to_string(), "unit".to_string()];
    header.extend(
        docs.iter().map(|d| format!("GPU {} ({})", d.gpu.ordinal, d.gpu.uuid.chars().take(12).collect::<String>())),
    );
    t.set_header(header);
    let Some(first) = docs.first() else { return t };
    for b in &first.benchmarks {
        for m in &b.metrics {
            let mut row = vec![Cell::new(format!("{}:{}", b.id, m.name)), Cell::new(&m.unit)];
            for d in docs {
                let v = d.benchmark(&b.id).and_then(|x| x.metric(&m.name)).map(|x| format_value(x.summary.median));
                row.push(Cell::new(v.unwrap_or_else(|| "-".into())).set_alignment(CellAlignment::Right));
            }
            t.add_row(row);
        }
    }
    t
}
