//! The upgrade report for people (terminal, Markdown) and CI (JUnit XML): per card, the verdicts
//! of B against A with a `code` column saying whether the machine code that ran changed.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, ContentArrangement, Table};

use super::judge::{CardJudgement, Outcome, UpgradeReport};
use crate::report::format_value;
use crate::report::header::rule_line;
use crate::report::junit::esc;
use crate::report::markdown::{escape, metric_cells as markdown_cells};
use crate::report::verdict_table::{change_text, metric_cells, sorted};
use crate::verdict::{MetricVerdict, SideStats, Verdict};

fn median(s: Option<SideStats>) -> String {
    s.map(|s| format_value(s.median)).unwrap_or_else(|| "-".into())
}

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

/// JUnit XML: a suite per card, a test case per metric. REGRESSED fails with type
/// `REGRESSED_CODE_CHANGED` or `REGRESSED_SAME_CODE`; a card that could not be judged is one
/// test case with an error of type `NOT_JUDGED`; INCONCLUSIVE, INSENSITIVE and NOT MEASURED
/// are skipped.
pub fn junit(r: &UpgradeReport) -> String {
    let mut body = String::new();
    let (mut tests, mut failures, mut errors, mut skipped) = (0, 0, 0, 0);
    for card in &r.cards {
        let suite = format!("gpubench.upgrade.{}", card.uuid);
        let mut cases = String::new();
        let (mut t, mut f, mut e, mut sk) = (0, 0, 0, 0);
        match &card.comparison {
            None => {
                t += 1;
                e += 1;
                let why = card.not_judged.clone().unwrap_or_default();
                cases.push_str(&format!(
                    "    <testcase classname=\"{suite}\" name=\"judged\" time=\"0\">\n      <error type=\"NOT_JUDGED\" message=\"{}\"/>\n    </testcase>\n",
                    esc(&format!("could not judge: {why}"))
                ));
            }
            Some(c) => {
                for m in &c.metrics {
                    t += 1;
                    let code = card.code_of(&m.key());
                    let code_line = code.map(|k| k.line.clone()).unwrap_or_else(|| "code change not known".into());
                    let message = format!("{}: {} ({code_line})", m.verdict.label(), m.reason);
                    cases.push_str(&format!(
                        "    <testcase classname=\"{}.{}\" name=\"{}\" time=\"0\">\n",
                        esc(&suite),
                        esc(&m.family),
                        esc(&m.key())
                    ));
                    match m.verdict {
                        Verdict::Regressed => {
                            f += 1;
                            let same = code.is_some_and(|k| k.verdict.same_measured_code());
                            let kind = if same { "REGRESSED_SAME_CODE" } else { "REGRESSED_CODE_CHANGED" };
                            cases.push_str(&format!(
                                "      <failure type=\"{kind}\" message=\"{}\">{}</failure>\n",
                                esc(&message),
                                esc(&format!(
                                    "A {}, B {} {}, change {}",
                                    median(m.baseline),
                                    median(m.candidate),
                                    m.unit,
                                    change_text(m)
                                ))
                            ));
                        }
                        Verdict::Inconclusive | Verdict::NotMeasured | Verdict::Insensitive => {
                            sk += 1;
                            cases.push_str(&format!("      <skipped message=\"{}\"/>\n", esc(&message)));
                        }
                        Verdict::Pass | Verdict::Improved => {
                            cases.push_str(&format!("      <system-out>{}</system-out>\n", esc(&message)));
                        }
                    }
                    cases.push_str("    </testcase>\n");
                }
                if card.outcome == Outcome::NotJudged {
                    t += 1;
                    e += 1;
                    cases.push_str(&format!(
                        "    <testcase classname=\"{suite}\" name=\"judged\" time=\"0\">\n      <error type=\"NOT_JUDGED\" message=\"{}\"/>\n    </testcase>\n",
                        esc(card.not_judged.as_deref().unwrap_or("could not judge"))
                    ));
                }
            }
        }
        body.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{t}\" failures=\"{f}\" errors=\"{e}\" skipped=\"{sk}\">\n    <properties>\n",
            esc(&suite)
        ));
        for (name, value) in [
            ("gpu", card.name.clone()),
            ("outcome", card.outcome.line().to_string()),
            ("stack_a", r.stacks[0].line()),
            ("stack_b", r.stacks[1].line()),
            ("code_by", r.code_by.clone()),
        ] {
            body.push_str(&format!("      <property name=\"{name}\" value=\"{}\"/>\n", esc(&value)));
        }
        body.push_str("    </properties>\n");
        body.push_str(&cases);
        body.push_str("  </testsuite>\n");
        (tests, failures, errors, skipped) = (tests + t, failures + f, errors + e, skipped + sk);
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"gpubench upgrade\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">\n{body}</testsuites>\n"
    )
}
