//! Reads a JUnit XML report back with a real XML parser: every test case with what it ended
//! as, after checking that each suite's and the document's counts are those of its cases.

/// One test case as read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub classname: String,
    pub name: String,
    /// "pass", "skipped", "failure:<type>" or "error:<type>".
    pub outcome: String,
    /// The failure's, error's or skip's message, else the case's output.
    pub message: String,
}

fn count(node: roxmltree::Node, attr: &str) -> usize {
    node.attribute(attr).unwrap_or("0").parse().unwrap_or_else(|_| panic!("{attr} is not a number"))
}

fn outcome(case: roxmltree::Node) -> (String, String) {
    for child in case.children().filter(|c| c.is_element()) {
        let tag = child.tag_name().name();
        let message = child.attribute("message").unwrap_or("").to_string();
        match tag {
            "failure" | "error" => return (format!("{tag}:{}", child.attribute("type").unwrap_or("")), message),
            "skipped" => return ("skipped".into(), message),
            _ => {}
        }
    }
    let out = case.children().find(|c| c.has_tag_name("system-out")).and_then(|c| c.text()).unwrap_or("");
    ("pass".into(), out.to_string())
}

/// Parses `xml` (panicking on a document that is not XML or whose counts disagree) and returns
/// its test cases in order.
pub fn cases(xml: &str) -> Vec<Case> {
    let doc = roxmltree::Document::parse(xml).unwrap_or_else(|e| panic!("not XML: {e}\n{xml}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let mut all = Vec::new();
    for suite in root.children().filter(|c| c.has_tag_name("testsuite")) {
        let mine: Vec<Case> = suite
            .children()
            .filter(|c| c.has_tag_name("testcase"))
            .map(|c| {
                let (outcome, message) = outcome(c);
                Case {
                    classname: c.attribute("classname").unwrap_or("").into(),
                    name: c.attribute("name").expect("a test case has a name").into(),
                    outcome,
                    message,
                }
            })
            .collect();
        let n = |prefix: &str| mine.iter().filter(|c| c.outcome.starts_with(prefix)).count();
        assert_eq!(count(suite, "tests"), mine.len(), "tests of {:?}", suite.attribute("name"));
        assert_eq!(count(suite, "failures"), n("failure:"));
        assert_eq!(count(suite, "errors"), n("error:"));
        assert_eq!(count(suite, "disabled").max(count(suite, "skipped")), n("skipped"));
        all.extend(mine);
    }
    let n = |prefix: &str| all.iter().filter(|c| c.outcome.starts_with(prefix)).count();
    assert_eq!(count(root, "tests"), all.len());
    assert_eq!(count(root, "failures"), n("failure:"));
    assert_eq!(count(root, "errors"), n("error:"));
    all
}

/// How many cases ended as `outcome`.
pub fn tally(cases: &[Case], outcome: &str) -> usize {
    cases.iter().filter(|c| c.outcome == outcome).count()
}

/// A name with what breaks hand-written XML: control characters, an ANSI colour, markup,
/// quotes and non-ASCII.
#[allow(dead_code)]
pub const NASTY: &str = "a\u{1}b\u{1b}[31m <&>\"' µs 雷 ✓";

/// What survives of [`NASTY`] in a well-written report: the text without the control
/// characters (and the colour code they start).
#[allow(dead_code)]
pub fn survives(text: &str) -> bool {
    ["<&>\"'", "µs 雷 ✓"].iter().all(|part| text.contains(part)) && !text.contains('\u{1}') && !text.contains('\u{1b}')
}
