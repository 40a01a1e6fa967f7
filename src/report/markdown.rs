//! The comparison as Markdown, for a CI job's step summary or a pull-request comment.

use super::header::{rule_line, utc_time};
use super::table::format_value;
use super::verdict_table::{change_text, detectable_text, sorted};
use crate::verdict::{Comparison, MetricVerdict, Verdict};

/// The whole Markdown report.
pub fn markdown(c: &Comparison) -> String {
    let mut s = String::new();
    let status = if c.regressed() { "REGRESSED" } else { "no regression" };
    s.push_str(&format!("## gpubench: {status}\n\n"));
    s.push_str(&format!("**{}** of {} metrics and facts.\n\n", c.counts.line(), c.metrics.len() + c.facts.len()));
    s.push_str(&counts_table(c));
    s.push_str(&format!("Compared with a {}.\n\n", escape(&c.baseline_kind.describe())));
    s.push_str(&format!("Detectable effects: {}.\n\n", c.sensitivity().line()));

    s.push_str("| | baseline | new |\n| --- | --- | --- |\n");
    let (b, n) = (&c.baseline, &c.candidate);
    row(
        &mut s,
        "source",
        &format!("`{}` ({} run{})", b.label, b.runs, plural(b.runs)),
        &format!("`{}` ({} run{})", n.label, n.runs, plural(n.runs)),
    );
    row(&mut s, "GPU", &format!("{} `{}`", b.gpu.name, b.gpu.uuid), &format!("{} `{}`", n.gpu.name, n.gpu.uuid));
    for f in &c.upgrade.stack {
        let new = if f.changed() { format!("**{}**", f.new) } else { f.new.clone() };
        row(&mut s, &f.field, &f.old, &new);
    }
    row(&mut s, "profile", &b.settings.profile, &n.settings.profile);
    row(&mut s, "measured", &utc_time(b.created_unix_s), &utc_time(n.created_unix_s));
    s.push('\n');

    let changed: Vec<String> = c.upgrade.kernel_changes().map(|k| format!("`{}` ({})", k.source, k.what())).collect();
    if changed.is_empty() {
        s.push_str(&format!("Generated code unchanged ({} kernel sources).\n\n", c.upgrade.kernels.len()));
    } else {
        s.push_str(&format!("Generated code changed: {}.\n\n", changed.join(", ")));
    }
    for w in &c.warnings {
        s.push_str(&format!("> **Warning:** {}\n\n", escape(w)));
    }
    s.push_str(&format!("Rule: {}.\n\n", rule_line(c)));
    for f in &c.families {
        s.push_str(&format!("Family judged as a whole: **{}** {}.\n\n", f.verdict.label(), escape(&f.reason)));
    }

    s.push_str(&sections(c, s.len()));
    s
}

/// The verdicts in the order a reader needs them.
const ORDER: [Verdict; 6] = [
    Verdict::Regressed,
    Verdict::Improved,
    Verdict::Inconclusive,
    Verdict::NotMeasured,
    Verdict::Insensitive,
    Verdict::Pass,
];

/// (verdict, metrics, facts) for each verdict that occurs, in [`ORDER`] (the Markdown and
/// HTML count tables).
pub(crate) fn counts_by_verdict(c: &Comparison) -> Vec<(Verdict, usize, usize)> {
    ORDER
        .into_iter()
        .map(|v| {
            (v, c.metrics.iter().filter(|m| m.verdict == v).count(), c.facts.iter().filter(|f| f.verdict == v).count())
        })
        .filter(|(_, metrics, facts)| metrics + facts > 0)
        .collect()
}

/// "| verdict | metrics | facts |", one row per verdict that occurs.
fn counts_table(c: &Comparison) -> String {
    let mut t = String::from("| verdict | metrics | facts |\n| --- | ---: | ---: |\n");
    for (v, metrics, facts) in counts_by_verdict(c) {
        t.push_str(&format!("| {} | {metrics} | {facts} |\n", v.label()));
    }
    t.push('\n');
    t
}

/// Where every metric is when the summary leaves some out.
const POINTER: &str =
    "Every metric, with its numbers, is in the JSON (`--verdicts-json`) and the HTML page written next to it.";

/// The metric sections after `used` characters: REGRESSED, IMPROVED and the verdicts that do
/// not judge (INCONCLUSIVE, NOT MEASURED, INSENSITIVE) each as a full table; a section that
/// would pass [`MAX_MARKDOWN_CHARS`] becomes one short line per metric (REGRESSED always keeps
/// its metrics, the others are then only counted); the table of all metrics comes last, folded,
/// when it still fits.
fn sections(c: &Comparison, used: usize) -> String {
    // Room kept for the facts, the pointer and the notes of what was left out.
    let reserve = 2_000 + 200 * c.facts.iter().filter(|f| f.verdict != Verdict::Pass).count();
    let budget = MAX_MARKDOWN_CHARS.saturating_sub(used + reserve);
    let mut s = String::new();
    let mut left_out = false;
    let groups: [(&str, &[Verdict]); 3] = [
        ("REGRESSED", &[Verdict::Regressed]),
        ("IMPROVED", &[Verdict::Improved]),
        ("Not judged", &[Verdict::Inconclusive, Verdict::NotMeasured, Verdict::Insensitive]),
    ];
    for (title, verdicts) in groups {
        let rows: Vec<&MetricVerdict> =
            sorted(&c.metrics).into_iter().filter(|m| verdicts.contains(&m.verdict)).collect();
        if rows.is_empty() {
            continue;
        }
        let mut full = format!("### {title} ({})\n\n", rows.len());
        metric_table(&mut full, &rows);
        full.push('\n');
        if s.len() + full.len() <= budget {
            s.push_str(&full);
            continue;
        }
        let mut short = format!("### {title} ({}, one line each)\n\n", rows.len());
        for m in &rows {
            short.push_str(&format!("- **{}** `{}` {}\n", m.verdict.label(), escape(&m.key()), change_text(m)));
        }
        short.push('\n');
        if verdicts.contains(&Verdict::Regressed) || s.len() + short.len() <= budget {
            s.push_str(&short);
        } else {
            s.push_str(&format!("### {title} ({})\n\nLeft out to fit a pull-request comment.\n\n", rows.len()));
        }
        left_out = true;
    }
    let facts: Vec<_> = c.facts.iter().filter(|f| f.verdict != Verdict::Pass).collect();
    if !facts.is_empty() {
        s.push_str("### Facts not PASS\n\n");
        for f in facts {
            s.push_str(&format!("- **{}** fact `{}`: {}\n", f.verdict.label(), escape(&f.name), escape(&f.reason)));
        }
        s.push('\n');
    }
    if c.metrics.iter().all(|m| m.verdict == Verdict::Pass) && c.facts.iter().all(|f| f.verdict == Verdict::Pass) {
        s.push_str("Every metric PASS.\n\n");
    }
    let mut all = format!("<details><summary>All {} metrics</summary>\n\n", c.metrics.len());
    metric_table(&mut all, &c.metrics.iter().collect::<Vec<_>>());
    all.push_str("\n</details>\n");
    if s.len() + all.len() <= budget {
        s.push_str(&all);
    } else {
        left_out = true;
    }
    if left_out {
        s.push_str(&format!(
            "Some tables are shortened to keep this summary under {MAX_MARKDOWN_CHARS} characters (what a pull-request comment or a step summary takes). {POINTER}\n"
        ));
    }
    s
}

/// Largest summary written: a pull-request comment or a CI step summary takes 65,536
/// characters.
pub const MAX_MARKDOWN_CHARS: usize = 60_000;

fn metric_table(s: &mut String, metrics: &[&MetricVerdict]) {
    s.push_str("| verdict | benchmark | metric | baseline | new | unit | change | detects | why |\n");
    s.push_str("| --- | --- | --- | ---: | ---: | --- | ---: | ---: | --- |\n");
    for m in metrics {
        let verdict = match m.verdict {
            Verdict::Pass => "PASS".to_string(),
            v => format!("**{}**", v.label()),
        };
        s.push_str(&format!("| {verdict} | {} | {} |\n", metric_cells(m), escape(&m.reason)));
    }
}

/// A metric's cells between its verdict and its reason, joined by " | ": benchmark, metric,
/// both medians, unit, change, detectable effect.
pub(crate) fn metric_cells(m: &MetricVerdict) -> String {
    let median = |x: Option<crate::verdict::SideStats>| x.map(|x| format_value(x.median)).unwrap_or_else(|| "-".into());
    format!(
        "`{}` | `{}` | {} | {} | {} | {} | {}",
        escape(&m.benchmark),
        escape(&m.metric),
        median(m.baseline),
        median(m.candidate),
        escape(&m.unit),
        change_text(m),
        detectable_text(m)
    )
}

fn row(s: &mut String, what: &str, old: &str, new: &str) {
    s.push_str(&format!("| {} | {} | {} |\n", escape(what), escape(old), escape(new)));
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Escapes what would break a table cell or start markup.
pub(crate) fn escape(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ").replace('<', "&lt;").replace('>', "&gt;")
}
