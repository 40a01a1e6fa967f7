//! The upgrade report for people (terminal, Markdown; JUnit XML is `report::junit::upgrade`):
//! per card, the verdicts of B against A with a `code` column saying whether the machine code
//! that ran changed.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, ContentArrangement, Table};

use super::judge::{CardJudgement, UpgradeReport};
use crate::report::header::rule_line;
use crate::report::markdown::{escape, metric_cells as markdown_cells};
use crate::report::verdict_table::{metric_cells, sorted};
use crate::verdict::{MetricVerdict, Verdict};

/// The lines before the tables.
fn header(r: &UpgradeReport) -> Vec<String> {
    let mut lines: Vec<String> = r.stacks.iter().map(|s| format!("stack {}", s.line())).collect();
    lines.push(format!("rounds:  {} (A, B, A, B, ...), each run its own process", r.rounds));
    lines.push(format!("code:    {}", r.code_by));
    lines.extend(r.notes.iter().map(|n| format!("note:    {n}")));
    lines
}

/// The terminal report: per card, what is not PASS (or everything with `all`), and the outcome.
pub fn terminal(r: &UpgradeReport, all: bool) -> String {
    let mut out = header(r).join("\n");
    out.push('\n');
    for card in &r.cards {
        out.push_str(&format!("\n{} {}: {}\n", card.name, card.uuid, card_line(card)));
        let Some(c) = &card.comparison else { continue };
        out.push_str(&format!("against: {}\n", c.baseline_kind.describe()));
        for f in &c.families {
            out.push_str(&format!("family:  {} {}\n", f.verdict.label(), f.reason));
        }
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic).force_no_tty();
        t.set_header(vec!["verdict", "benchmark", "metric", "A", "B", "unit", "change", "detects", "code", "why"]);
        let rows: Vec<&MetricVerdict> =
            sorted(&c.metrics).into_iter().filter(|m| all || m.verdict != Verdict::Pass).collect();
        for m in &rows {
            let code = card.code_of(&m.key()).map(|k| k.cell()).unwrap_or_else(|| "-".into());
            let mut row = vec![Cell::new(m.verdict.label())];
            row.extend(metric_cells(m));
            row.extend([Cell::new(code), Cell::new(&m.reason)]);
            t.add_row(row);
        }
        if !rows.is_empty() {
            out.push_str(&t.to_string());
            out.push('\n');
        }
        for m in rows.iter().filter(|m| m.verdict == Verdict::Regressed) {
            if let Some(k) = card.code_of(&m.key()) {
                out.push_str(&format!("{}: {}\n", m.key(), k.line));
            }
        }
        if !all && c.counts.pass > 0 {
            out.push_str(&format!("({} PASS rows not shown; --all lists them)\n", c.counts.pass));
        }
        out.push_str(&format!("detects: {}\n", c.sensitivity().line()));
    }
    out.push_str(&format!("\nupgrade: {} (exit {})\n", r.outcome.line(), r.exit_code()));
    out
}

fn card_line(card: &CardJudgement) -> String {
    let runs = format!("{} runs of A, {} of B", card.runs[0], card.runs[1]);
    match (&card.comparison, &card.not_judged) {
        (Some(c), extra) => {
            let mut s = format!("{runs}; {}; {}", c.counts.line(), card.outcome.line());
            if let Some(e) = extra {
                s.push_str(&format!(" ({e})"));
            }
            s
        }
        (None, Some(why)) => format!("{runs}; could not judge: {why}"),
        (None, None) => runs,
    }
}

/// The Markdown report (a CI step summary).
pub fn markdown(r: &UpgradeReport) -> String {
    let mut s = format!("## gpubench upgrade: {}\n\n", r.outcome.line());
    for line in header(r) {
        s.push_str(&format!("- {}\n", escape(&line)));
    }
    s.push('\n');
    for card in &r.cards {
        s.push_str(&format!("### {} `{}`\n\n{}\n\n", escape(&card.name), card.uuid, escape(&card_line(card))));
        let Some(c) = &card.comparison else { continue };
        s.push_str(&format!("Rule: {}. Compared with a {}.\n\n", rule_line(c), escape(&c.baseline_kind.describe())));
        let changed: Vec<String> = card
            .kernels
            .iter()
            .filter(|k| !k.verdict.same_measured_code())
            .map(|k| format!("`{}` ({}, by {})", k.source, k.verdict.label(), k.by))
            .collect();
        if changed.is_empty() {
            s.push_str(&format!(
                "Machine code of all {} kernel sources identical on both stacks.\n\n",
                card.kernels.len()
            ));
        } else {
            s.push_str(&format!("Machine code changed: {}.\n\n", changed.join(", ")));
        }
        let notable: Vec<&MetricVerdict> =
            sorted(&c.metrics).into_iter().filter(|m| m.verdict != Verdict::Pass).collect();
        if notable.is_empty() {
            s.push_str("Every metric PASS.\n\n");
            continue;
        }
        s.push_str("| verdict | benchmark | metric | A | B | unit | change | detects | code | why |\n");
        s.push_str("| --- | --- | --- | ---: | ---: | --- | ---: | ---: | --- | --- |\n");
        for m in notable {
            let code = card.code_of(&m.key()).map(|k| k.line.clone()).unwrap_or_else(|| "-".into());
            s.push_str(&format!(
                "| **{}** | {} | {} | {} |\n",
                m.verdict.label(),
                markdown_cells(m),
                escape(&code),
                escape(&m.reason)
            ));
        }
        s.push('\n');
    }
    s
}
