//! The comparison as JUnit XML: one test case per metric and fact, REGRESSED as a failure,
//! INCONCLUSIVE and NOT MEASURED as skipped, so that CI systems show regressions like failing
//! tests. The suite properties say which kind of baseline the run was compared with.

use std::collections::BTreeMap;

use super::table::format_value;
use crate::verdict::{Comparison, MetricVerdict, Verdict};

/// The JUnit XML document.
pub fn junit(c: &Comparison) -> String {
    let mut families: BTreeMap<&str, Vec<&MetricVerdict>> = BTreeMap::new();
    for m in &c.metrics {
        families.entry(m.family.as_str()).or_default().push(m);
    }
    let failures = c.counts.regressed;
    let skipped = c.counts.inconclusive + c.counts.not_measured;
    let tests = c.metrics.len() + c.facts.len();
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    x.push_str(&format!(
        "<testsuites name=\"gpubench\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">\n"
    ));
    for (family, metrics) in &families {
        let count = |v: Verdict| metrics.iter().filter(|m| m.verdict == v).count();
        x.push_str(&format!(
            "  <testsuite name=\"gpubench.{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">\n",
            esc(family),
            metrics.len(),
            count(Verdict::Regressed),
            count(Verdict::Inconclusive) + count(Verdict::NotMeasured) + count(Verdict::Insensitive)
        ));
        properties(&mut x, c);
        for m in metrics {
            let detail = format!(
                "baseline {} {unit}, new {} {unit}, detects {}",
                m.baseline.map(|s| format_value(s.median)).unwrap_or_else(|| "-".into()),
                m.candidate.map(|s| format_value(s.median)).unwrap_or_else(|| "-".into()),
                super::verdict_table::detectable_text(m),
                unit = m.unit
            );
            case(&mut x, family, &m.key(), m.verdict, &m.reason, &detail);
        }
        x.push_str("  </testsuite>\n");
    }
    if !c.facts.is_empty() {
        let count = |v: Verdict| c.facts.iter().filter(|f| f.verdict == v).count();
        x.push_str(&format!(
            "  <testsuite name=\"gpubench.facts\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">\n",
            c.facts.len(),
            count(Verdict::Regressed),
            count(Verdict::Inconclusive)
        ));
        for f in &c.facts {
            case(&mut x, "facts", &f.name, f.verdict, &f.reason, &f.reason);
        }
        x.push_str("  </testsuite>\n");
    }
    x.push_str("</testsuites>\n");
    x
}

fn properties(x: &mut String, c: &Comparison) {
    x.push_str("    <properties>\n");
    let mut prop = |name: &str, value: &str| {
        x.push_str(&format!("      <property name=\"{}\" value=\"{}\"/>\n", esc(name), esc(value)));
    };
    prop("gpu", &c.candidate.gpu.name);
    prop("baseline", &c.baseline.label);
    prop("baseline_kind", &c.baseline_kind.describe());
    prop("baseline_level", c.baseline_kind.level.label());
    prop("baseline_cards", &c.baseline_kind.cards.to_string());
    prop("baseline_runs", &c.baseline_kind.runs.to_string());
    if let Some(board) = &c.baseline_kind.board {
        prop("baseline_board", board);
    }
    prop("stack", &c.upgrade.stack_line());
    prop("code", &c.upgrade.kernels_line());
    prop("detectable", &c.sensitivity().line());
    x.push_str("    </properties>\n");
}

fn case(x: &mut String, family: &str, name: &str, verdict: Verdict, reason: &str, detail: &str) {
    x.push_str(&format!("    <testcase classname=\"gpubench.{}\" name=\"{}\" time=\"0\"", esc(family), esc(name)));
    let message = format!("{}: {reason}", verdict.label());
    match verdict {
        Verdict::Regressed => x.push_str(&format!(
            ">\n      <failure type=\"REGRESSED\" message=\"{}\">{}</failure>\n    </testcase>\n",
            esc(&message),
            esc(detail)
        )),
        Verdict::Inconclusive | Verdict::NotMeasured | Verdict::Insensitive => {
            x.push_str(&format!(">\n      <skipped message=\"{}\"/>\n    </testcase>\n", esc(&message)))
        }
        Verdict::Pass | Verdict::Improved => x.push_str(&format!(
            ">\n      <system-out>{}</system-out>\n    </testcase>\n",
            esc(&format!("{message} ({detail})"))
        )),
    }
}

/// XML text and attribute escaping; control characters other than tab are dropped.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' => out.push(ch),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::esc;

    #[test]
    fn escapes_markup_and_drops_control_characters() {
        assert_eq!(esc("a<b & \"c\" 'd'>\u{1}"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
    }
}
