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

    let notable: Vec<&MetricVerdict> = sorted(&c.metrics).into_iter().filter(|m| m.verdict != Verdict::Pass).collect();
    let notable_facts: Vec<_> = c.facts.iter().filter(|f| f.verdict != Verdict::Pass).collect();
    if notable.is_empty() && notable_facts.is_empty() {
        s.push_str("Every metric PASS.\n\n");
    } else {
        s.push_str("### Not PASS\n\n");
        metric_table(&mut s, &notable);
        for f in notable_facts {
            s.push_str(&format!("- **{}** fact `{}`: {}\n", f.verdict.label(), escape(&f.name), escape(&f.reason)));
        }
        s.push('\n');
    }
    let mut all = format!("<details><summary>All {} metrics</summary>\n\n", c.metrics.len());
    metric_table(&mut all, &c.metrics.iter().collect::<Vec<_>>());
    all.push_str("\n</details>\n");
    if s.len() + all.len() <= MAX_MARKDOWN_CHARS {
        s.push_str(&all);
    } else {
        s.push_str(&format!(
            "The table of all {} metrics is left out to keep this summary under {MAX_MARKDOWN_CHARS} characters (what a pull-request comment or a step summary takes): `--verdicts-json` writes every metric.\n",
            c.metrics.len()
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
