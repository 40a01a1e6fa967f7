//! The book's pages as tests read them: a page, one of its tables, and a table a test or script
//! generates compared with the page's.

use std::path::Path;

/// The text of `page`, a path from the repository root ("docs/src/verdicts.md").
pub fn book(page: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(page)).unwrap()
}

/// The lines of the first table of `page` whose header starts with `header` (indented tables of
/// list items included), without the indentation.
pub fn table(page: &str, header: &str) -> Vec<String> {
    let text = book(page);
    let lines: Vec<String> = text
        .lines()
        .map(str::trim_start)
        .skip_while(|l| !l.starts_with(header))
        .take_while(|l| l.starts_with('|'))
        .map(str::to_owned)
        .collect();
    assert!(!lines.is_empty(), "{page} has no table headed {header:?}");
    lines
}

/// Asserts that the table of `page` headed `header` is `generated`, line for line.
#[allow(dead_code)]
pub fn assert_generated(page: &str, header: &str, generated: &str) {
    assert_eq!(
        table(page, header),
        generated.lines().collect::<Vec<_>>(),
        "regenerate the table with the command beside it"
    );
}
