//! The comparison as a terminal report: header, a table of verdicts, a closing count line.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, Color, ContentArrangement, Table};

use super::header::header_lines;
use super::table::format_value;
use crate::verdict::{Comparison, MetricVerdict, Verdict};

/// How the terminal report looks.
#[derive(Debug, Clone, Copy, Default)]
pub struct TableOptions {
    /// Colour the verdicts (only when printing to a terminal).
    pub color: bool,
    /// List PASS rows too, not only the others.
    pub all: bool,
}

/// Header, verdict table and the count line, as text.
pub fn verdict_report(c: &Comparison, opts: TableOptions) -> String {
    let mut out = header_lines(c).join("\n");
    out.push('\n');
    let table = verdict_table(c, opts);
    if table.row_count() > 0 {
        out.push_str(&table.to_string());
        out.push('\n');
    }
    let total = c.metrics.len() + c.facts.len();
    if !opts.all && c.counts.pass > 0 {
        out.push_str(&format!("({} PASS rows not shown; --all lists them)\n", c.counts.pass));
    }
    out.push_str(&format!("verdicts: {} of {total}\n", c.counts.line()));
    out.push_str(&format!("detects:  {}\n", c.sensitivity().line()));
    out
}

/// Metrics (most severe first, then in suite order) and facts, one row each.
pub fn verdict_table(c: &Comparison, opts: TableOptions) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    if opts.color {
        t.enforce_styling();
    } else {
        t.force_no_tty();
    }
    t.set_header(vec!["verdict", "benchmark", "metric", "baseline", "new", "unit", "change", "detects", "why"]);
    let color = |v: Verdict| match v {
        Verdict::Regressed => Some(Color::Red),
        Verdict::Improved => Some(Color::Green),
        Verdict::Inconclusive => Some(Color::Yellow),
        Verdict::NotMeasured | Verdict::Insensitive => Some(Color::Magenta),
        Verdict::Pass => None,
    };
    let verdict_cell = |v: Verdict| {
        let cell = Cell::new(v.label());
        match (opts.color, color(v)) {
            (true, Some(col)) => cell.fg(col),
            _ => cell,
        }
    };
    for m in sorted(&c.metrics).into_iter().filter(|m| opts.all || m.verdict != Verdict::Pass) {
        let mut row = vec![verdict_cell(m.verdict)];
        row.extend(metric_cells(m));
        row.push(Cell::new(&m.reason));
        t.add_row(row);
    }
    for f in c.facts.iter().filter(|f| opts.all || f.verdict != Verdict::Pass) {
        let show = |v: &Option<crate::results::FactValue>| {
            v.as_ref().map(|v| crate::verdict::show_fact(v, "")).unwrap_or_else(|| "-".into())
        };
        t.add_row(vec![
            verdict_cell(f.verdict),
            Cell::new("facts"),
            Cell::new(&f.name),
            Cell::new(show(&f.baseline)).set_alignment(CellAlignment::Right),
            Cell::new(show(&f.candidate)).set_alignment(CellAlignment::Right),
            Cell::new(&f.unit),
            Cell::new(""),
            Cell::new(""),
            Cell::new(&f.reason),
        ]);
    }
    t
}

/// The cells of a metric's row between its verdict and its reason: benchmark, metric, both
/// medians, unit, change, detectable effect.
pub fn metric_cells(m: &MetricVerdict) -> Vec<Cell> {
    let median = |s: Option<crate::verdict::SideStats>| s.map(|s| format_value(s.median)).unwrap_or_else(|| "-".into());
    vec![
        Cell::new(&m.benchmark),
        Cell::new(&m.metric),
        Cell::new(median(m.baseline)).set_alignment(CellAlignment::Right),
        Cell::new(median(m.candidate)).set_alignment(CellAlignment::Right),
        Cell::new(&m.unit),
        Cell::new(change_text(m)).set_alignment(CellAlignment::Right),
        Cell::new(detectable_text(m)).set_alignment(CellAlignment::Right),
    ]
}

/// "+3.02%", or "-" without a ratio.
pub fn change_text(m: &MetricVerdict) -> String {
    m.change().map(|c| format!("{:+.2}%", c * 100.0)).unwrap_or_else(|| "-".into())
}

/// "±2.3%": the smallest change the comparison catches nine times in ten; "-" where none was
/// judged.
pub fn detectable_text(m: &MetricVerdict) -> String {
    m.detectable.map(|d| format!("±{:.1}%", d * 100.0)).unwrap_or_else(|| "-".into())
}

/// Metrics ordered by severity (REGRESSED, IMPROVED, INCONCLUSIVE, NOT MEASURED, PASS), stable
/// otherwise.
pub fn sorted(metrics: &[MetricVerdict]) -> Vec<&MetricVerdict> {
    let mut v: Vec<&MetricVerdict> = metrics.iter().collect();
    v.sort_by_key(|m| m.verdict);
    v
}
