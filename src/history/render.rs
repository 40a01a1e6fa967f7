//! The history report as a terminal table, Markdown (a CI step summary) and JSON.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, ContentArrangement, Table};

use super::analysis::HistoryReport;
use crate::report::utc_time;

fn short_card(uuid: &str) -> &str {
    uuid.get(..12).unwrap_or(uuid)
}

fn headline(r: &HistoryReport) -> String {
    let runs: usize = r.cards.iter().map(|c| c.runs).sum();
    let cps = r.change_points().count();
    let recent = r.change_points().filter(|(_, c)| c.recent).count();
    let mut s = format!(
        "{} series over {runs} runs on {} card{}: {cps} change point{} (steps of {:.1} % or more, or the metric's threshold)",
        r.series.len(),
        r.cards.len(),
        if r.cards.len() == 1 { "" } else { "s" },
        if cps == 1 { "" } else { "s" },
        100.0 * r.params.min_effect
    );
    if r.params.recent > 0 {
        s.push_str(&format!(", {recent} in the newest {} runs", r.params.recent));
    }
    s
}

fn fmt_value(v: f64) -> String {
    crate::report::format_value(v)
}

fn rows(r: &HistoryReport) -> Vec<[String; 8]> {
    r.change_points()
        .map(|(s, c)| {
            let norm = c.normalized_step_rel.map_or("-".into(), |n| format!("{:+.2} %", 100.0 * n));
            [
                short_card(&s.series.key.card).to_string(),
                s.series.key.label(),
                format!("{}{}", utc_time(c.created_unix_s.max(0) as u64), if c.recent { " (recent)" } else { "" }),
                format!("{} -> {}", fmt_value(c.before), fmt_value(c.after)),
                format!("{:+.2} % {}", 100.0 * c.step_rel, c.direction),
                norm,
                c.cause.name().to_string(),
                if c.changes.is_empty() { "nothing recorded".into() } else { c.changes.join("; ") },
            ]
        })
        .collect()
}

const HEADER: [&str; 8] =
    ["card", "metric", "first run after", "before -> after", "step", "normalised", "cause", "what changed"];

/// The change points as a terminal table, after a one-line summary.
pub fn history_table(r: &HistoryReport) -> String {
    let mut out = headline(r);
    let rows = rows(r);
    if !rows.is_empty() {
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
        t.set_header(HEADER.to_vec());
        for row in rows {
            t.add_row(row.into_iter().map(Cell::new).collect::<Vec<_>>());
        }
        out.push('\n');
        out.push_str(&t.to_string());
    }
    out
}

/// The change points as Markdown; `plots` are (title, link) pairs shown as images after it.
pub fn history_markdown(r: &HistoryReport, plots: &[(String, String)]) -> String {
    let mut out = format!("## gpubench history\n\n{}\n", headline(r));
    let rows = rows(r);
    if !rows.is_empty() {
        out.push_str(&format!("\n| {} |\n|{}\n", HEADER.join(" | "), " --- |".repeat(HEADER.len())));
        for row in rows {
            let cells: Vec<String> = row.iter().map(|c| c.replace('|', "\\|")).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
    }
    if !plots.is_empty() {
        out.push_str("\n### Trends\n\n");
        for (title, link) in plots {
            out.push_str(&format!("![{title}]({link})\n\n"));
        }
    }
    out
}

/// The whole report as pretty JSON.
pub fn history_json(r: &HistoryReport) -> String {
    serde_json::to_string_pretty(r).expect("the history report serialises")
}
