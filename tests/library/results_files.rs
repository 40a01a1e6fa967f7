//! The results document on disk: round trip, atomic writes, and refusal of bad files.

use gpubench::error::exit;
use gpubench::results::{RESULTS_SCHEMA, ResultsDocument};

use crate::fixture;

#[test]
fn recorded_device_results_round_trip_unchanged() {
    let doc = ResultsDocument::read(&fixture("h200-default-run.json")).unwrap();
    assert_eq!(doc.schema, RESULTS_SCHEMA);
    assert_eq!(doc.gpu.name, "NVIDIA H200");
    assert_eq!(doc.benchmarks.len(), 53);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/out.json");
    doc.write(&path).unwrap();
    let again = ResultsDocument::read(&path).unwrap();
    assert_eq!(again, doc);
    // the temporary file of the atomic write is gone
    let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().flatten().collect();
    assert_eq!(leftovers.len(), 1);
}

#[test]
fn every_metric_of_the_recording_has_one_value_per_sample() {
    let doc = ResultsDocument::read(&fixture("h200-default-run.json")).unwrap();
    for b in &doc.benchmarks {
        assert_eq!(b.time_ns.len(), doc.settings.sample_size, "{}", b.id);
        for m in &b.metrics {
            assert_eq!(m.samples.len(), b.time_ns.len(), "{} {}", b.id, m.name);
            assert_eq!(m.summary.n, m.samples.len());
        }
    }
}

#[test]
fn truncated_corrupt_and_foreign_files_are_data_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(fixture("h200-quick-run.json")).unwrap();
    let cases = [
        ("truncated.json", good[..good.len() / 2].to_string(), "truncated JSON"),
        ("garbage.json", "not json at all".to_string(), "not valid JSON"),
        ("foreign.json", good.replace(RESULTS_SCHEMA, "gpubench.results/99"), "schema is `gpubench.results/99`"),
        ("noschema.json", "{\"a\": 1}".to_string(), "no `schema` field"),
        ("shape.json", format!("{{\"schema\": \"{RESULTS_SCHEMA}\", \"gpu\": 3}}"), "does not match schema"),
    ];
    for (name, text, expected) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, &text).unwrap();
        let err = ResultsDocument::read(&path).unwrap_err();
        assert_eq!(err.exit_code(), exit::DATA, "{name}: {err}");
        let msg = err.to_string();
        assert!(msg.contains(expected) && msg.contains(name), "{name}: {msg}");
        assert!(!msg.contains('\n'), "one line: {msg}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "{name} was left as it was");
    }
}

#[test]
fn a_missing_file_names_the_path() {
    let err = ResultsDocument::read(std::path::Path::new("/nonexistent/results.json")).unwrap_err();
    assert!(err.to_string().starts_with("/nonexistent/results.json: "), "{err}");
}
