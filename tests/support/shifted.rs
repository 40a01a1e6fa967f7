//! The recorded H200 quick run, and copies of it with one benchmark made worse or better.

use std::path::Path;

use gpubench::results::{Better, ResultsDocument, Summary};

/// `tests/fixtures/h200-quick-run.json`.
pub fn quick_run() -> ResultsDocument {
    ResultsDocument::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h200-quick-run.json")).unwrap()
}

/// Every metric of benchmark `id` worse by `fraction` (better when negative), summaries
/// recomputed.
pub fn worsen(doc: &mut ResultsDocument, id: &str, fraction: f64) {
    let b = doc.benchmarks.iter_mut().find(|b| b.id == id).unwrap();
    for m in &mut b.metrics {
        let f = if m.better == Better::Lower { 1.0 + fraction } else { 1.0 / (1.0 + fraction) };
        m.samples.iter_mut().for_each(|v| *v *= f);
        m.summary = Summary::of(&m.samples);
    }
}
