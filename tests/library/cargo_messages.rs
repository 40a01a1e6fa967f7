//! Picking bench executables out of a recorded `cargo bench --no-run --message-format json` run.

use gpubench::runner::parse_bench_artifacts;

use crate::fixture;

#[test]
fn the_recorded_build_yields_the_four_bench_executables() {
    let file = std::fs::File::open(fixture("cargo-bench-messages.jsonl")).unwrap();
    let benches = parse_bench_artifacts(std::io::BufReader::new(file)).unwrap();
    let mut names: Vec<&str> = benches.iter().map(|b| b.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["atomics", "latency", "shared_banks", "stream"]);
    for b in &benches {
        assert_eq!(b.package, "gpubench");
        let file = b.path.file_name().unwrap().to_str().unwrap();
        assert!(file.starts_with(&format!("{}-", b.name)), "{}", b.path.display());
        assert!(b.path.to_str().unwrap().contains("/release/deps/"), "{}", b.path.display());
    }
}

#[test]
fn libraries_and_build_scripts_are_not_benches() {
    let lib = r#"{"reason":"compiler-artifact","package_id":"path+file:///w#x@0.1.0","manifest_path":"/w/Cargo.toml","target":{"kind":["lib"],"crate_types":["lib"],"name":"x","src_path":"/w/src/lib.rs","edition":"2021","doc":true,"doctest":true,"test":true},"profile":{"opt_level":"3","debuginfo":0,"debug_assertions":false,"overflow_checks":false,"test":false},"features":[],"filenames":["/w/target/release/deps/libx.rlib"],"executable":null,"fresh":true}
{"reason":"build-finished","success":true}
"#;
    assert!(parse_bench_artifacts(lib.as_bytes()).unwrap().is_empty());
}

#[test]
fn a_broken_message_stream_is_an_error_not_a_panic() {
    let err = parse_bench_artifacts("{\"reason\":\"compiler-artifact\",\"package_id\":".as_bytes());
    // cargo_metadata passes unparsable lines through as text; either way no bench comes out
    assert!(err.map(|b| b.is_empty()).unwrap_or(true));
}
