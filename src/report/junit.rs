//! Every JUnit XML report, written with `quick-junit` (which escapes markup and drops what XML
//! cannot hold, such as control characters), so that CI systems show regressions like failing
//! tests:
//! - [`junit`]: a comparison, a test case per metric and fact; REGRESSED fails (type
//!   `REGRESSED`), INCONCLUSIVE, INSENSITIVE and NOT MEASURED are skipped. The suite properties
//!   say which kind of baseline the run was compared with.
//! - [`fleet`]: a test case per card (an outlier fails, a card of a group too small to judge is
//!   skipped) and per failed node (a failure).
//! - [`upgrade`]: a suite per card, a test case per metric; REGRESSED fails with type
//!   `REGRESSED_CODE_CHANGED` or `REGRESSED_SAME_CODE`, a card that could not be judged is a
//!   test case with an error of type `NOT_JUDGED`.

use std::collections::BTreeMap;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use super::table::format_value;
use super::verdict_table::{change_text, detectable_text};
use crate::fleet::analysis::{FleetReport, GroupReport};
use crate::fleet::report::card_reason;
use crate::upgrade::judge::{CardJudgement, Outcome, UpgradeReport};
use crate::verdict::{Comparison, MetricVerdict, SideStats, Verdict};

fn median(s: Option<SideStats>) -> String {
    s.map(|s| format_value(s.median)).unwrap_or_else(|| "-".into())
}

/// The document as text.
fn render(report: &Report) -> String {
    report.to_string().expect("writing XML to memory does not fail")
}

/// A test case of `classname` with `status`, timed 0 (the measurements have their own clocks).
fn case(classname: &str, name: &str, status: TestCaseStatus) -> TestCase {
    let mut t = TestCase::new(name, status);
    t.set_classname(classname).set_time(Duration::ZERO);
    t
}

fn status(kind: Option<NonSuccessKind>, ty: &str, message: &str, description: Option<&str>) -> TestCaseStatus {
    let mut s = match kind {
        Some(kind) => TestCaseStatus::non_success(kind),
        None => TestCaseStatus::skipped(),
    };
    s.set_message(message);
    if !ty.is_empty() {
        s.set_type(ty);
    }
    if let Some(d) = description {
        s.set_description(d);
    }
    s
}

/// The case of one verdict: REGRESSED fails with `regressed_type`, the verdicts that do not
/// judge are skipped, PASS and IMPROVED pass with the message as output.
fn verdict_case(classname: &str, name: &str, verdict: Verdict, message: &str, detail: &str, ty: &str) -> TestCase {
    match verdict {
        Verdict::Regressed => case(classname, name, status(Some(NonSuccessKind::Failure), ty, message, Some(detail))),
        Verdict::Inconclusive | Verdict::NotMeasured | Verdict::Insensitive => {
            case(classname, name, status(None, "", message, None))
        }
        Verdict::Pass | Verdict::Improved => {
            let mut t = case(classname, name, TestCaseStatus::success());
            t.set_system_out(if detail.is_empty() { message.to_string() } else { format!("{message} ({detail})") });
            t
        }
    }
}

/// The comparison: a suite per bench family (and one for the facts).
pub fn junit(c: &Comparison) -> String {
    let mut families: BTreeMap<&str, Vec<&MetricVerdict>> = BTreeMap::new();
    for m in &c.metrics {
        families.entry(m.family.as_str()).or_default().push(m);
    }
    let mut report = Report::new("gpubench");
    for (family, metrics) in &families {
        let classname = format!("gpubench.{family}");
        let mut suite = TestSuite::new(classname.as_str());
        suite.add_properties(properties(c));
        for m in metrics {
            let detail = format!(
                "baseline {} {unit}, new {} {unit}, detects {}",
                median(m.baseline),
                median(m.candidate),
                detectable_text(m),
                unit = m.unit
            );
            let message = format!("{}: {}", m.verdict.label(), m.reason);
            suite.add_test_case(verdict_case(&classname, &m.key(), m.verdict, &message, &detail, "REGRESSED"));
        }
        report.add_test_suite(suite);
    }
    if !c.facts.is_empty() {
        let mut suite = TestSuite::new("gpubench.facts");
        for f in &c.facts {
            let message = format!("{}: {}", f.verdict.label(), f.reason);
            suite.add_test_case(verdict_case("gpubench.facts", &f.name, f.verdict, &message, &f.reason, "REGRESSED"));
        }
        report.add_test_suite(suite);
    }
    render(&report)
}

fn properties(c: &Comparison) -> Vec<Property> {
    let mut p = vec![
        Property::new("gpu", c.candidate.gpu.name.as_str()),
        Property::new("baseline", c.baseline.label.as_str()),
        Property::new("baseline_kind", c.baseline_kind.describe()),
        Property::new("baseline_level", c.baseline_kind.level.label()),
        Property::new("baseline_cards", c.baseline_kind.cards.to_string()),
        Property::new("baseline_runs", c.baseline_kind.runs.to_string()),
    ];
    if let Some(board) = &c.baseline_kind.board {
        p.push(Property::new("baseline_board", board.as_str()));
    }
    p.push(Property::new("stack", c.upgrade.stack_line()));
    p.push(Property::new("code", c.upgrade.kernels_line()));
    p.push(Property::new("detectable", c.sensitivity().line()));
    p
}

/// The fleet report: a suite per group of like cards, and one for the failed nodes.
pub fn fleet(report: &FleetReport) -> String {
    let mut out = Report::new("gpubench.fleet");
    for g in &report.groups {
        let mut suite = TestSuite::new(g.key.describe());
        suite.add_test_cases(g.cards.iter().map(|c| card_case(g, c)));
        out.add_test_suite(suite);
    }
    if !report.failed_nodes.is_empty() {
        let mut suite = TestSuite::new("nodes");
        for n in &report.failed_nodes {
            let message = format!("exit {}: {}", n.exit_code, n.reason);
            suite.add_test_case(case("nodes", &n.host, status(Some(NonSuccessKind::Failure), "", &message, None)));
        }
        out.add_test_suite(suite);
    }
    render(&out)
}

fn card_case(g: &GroupReport, c: &crate::fleet::analysis::CardReport) -> TestCase {
    let name = format!("{} ({})", c.uuid, c.hosts.join(","));
    let s = if c.outlier {
        status(Some(NonSuccessKind::Failure), "OUTLIER", &card_reason(c), None)
    } else if !g.judged {
        status(None, "", "too few cards", None)
    } else {
        TestCaseStatus::success()
    };
    case("fleet", &name, s)
}

/// The upgrade report: a suite per card.
pub fn upgrade(r: &UpgradeReport) -> String {
    let mut out = Report::new("gpubench upgrade");
    for card in &r.cards {
        let name = format!("gpubench.upgrade.{}", card.uuid);
        let mut suite = TestSuite::new(name.as_str());
        suite.add_properties([
            Property::new("gpu", card.name.as_str()),
            Property::new("outcome", card.outcome.line()),
            Property::new("stack_a", r.stacks[0].line()),
            Property::new("stack_b", r.stacks[1].line()),
            Property::new("code_by", r.code_by.as_str()),
        ]);
        match &card.comparison {
            None => {
                let why = format!("could not judge: {}", card.not_judged.as_deref().unwrap_or_default());
                suite.add_test_case(not_judged(&name, &why));
            }
            Some(c) => {
                suite.add_test_cases(c.metrics.iter().map(|m| upgrade_case(&name, card, m)));
                if card.outcome == Outcome::NotJudged {
                    suite.add_test_case(not_judged(&name, card.not_judged.as_deref().unwrap_or("could not judge")));
                }
            }
        }
        out.add_test_suite(suite);
    }
    render(&out)
}

fn not_judged(suite: &str, why: &str) -> TestCase {
    case(suite, "judged", status(Some(NonSuccessKind::Error), "NOT_JUDGED", why, None))
}

fn upgrade_case(suite: &str, card: &CardJudgement, m: &MetricVerdict) -> TestCase {
    let code = card.code_of(&m.key());
    let code_line = code.map(|k| k.line.clone()).unwrap_or_else(|| "code change not known".into());
    let message = format!("{}: {} ({code_line})", m.verdict.label(), m.reason);
    let same = code.is_some_and(|k| k.verdict.same_measured_code());
    let ty = if same { "REGRESSED_SAME_CODE" } else { "REGRESSED_CODE_CHANGED" };
    let detail = if m.verdict == Verdict::Regressed {
        format!("A {}, B {} {}, change {}", median(m.baseline), median(m.candidate), m.unit, change_text(m))
    } else {
        String::new()
    };
    verdict_case(&format!("{suite}.{}", m.family), &m.key(), m.verdict, &message, &detail, ty)
}
