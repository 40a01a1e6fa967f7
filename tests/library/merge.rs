//! Merging bench records with criterion's files.

use gpubench::results::{ResultsDocument, Settings};
use gpubench::runner::criterion_files::read_all;
use gpubench::runner::{BenchOutput, RunHeader, merge};

use crate::fixture;

fn header(doc: &ResultsDocument) -> RunHeader {
    RunHeader {
        gpu: doc.gpu.clone(),
        stack: doc.stack.clone(),
        settings: Settings {
            profile: "quick".into(),
            filter: None,
            sample_size: 10,
            warm_up_s: 0.03,
            measurement_s: 0.1,
        },
        created_unix_s: 1,
    }
}

fn write_criterion(home: &std::path::Path, group: &str, function: &str, iters: &[f64], times: &[f64]) {
    let dir = home.join(group).join(function).join("new");
    std::fs::create_dir_all(&dir).unwrap();
    let full_id = format!("{group}/{function}");
    std::fs::write(dir.join("benchmark.json"), format!(r#"{{"group_id":"{group}","function_id":"{function}","value_str":null,"throughput":null,"full_id":"{full_id}","directory_name":"{group}/{function}","title":"{full_id}"}}"#)).unwrap();
    let est = |v: f64| {
        format!(
            r#"{{"confidence_interval":{{"confidence_level":0.95,"lower_bound":{},"upper_bound":{}}},"point_estimate":{v},"standard_error":1.0}}"#,
            v - 1.0,
            v + 1.0
        )
    };
    std::fs::write(
        dir.join("estimates.json"),
        format!(
            r#"{{"mean":{},"median":{},"median_abs_dev":{},"slope":null,"std_dev":{}}}"#,
            est(100.0),
            est(99.0),
            est(1.0),
            est(2.0)
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("sample.json"),
        serde_json::json!({"sampling_mode": "Linear", "iters": iters, "times": times}).to_string(),
    )
    .unwrap();
}

#[test]
fn records_get_criterion_estimates_and_foreign_benches_get_a_time_metric() {
    let record = ResultsDocument::read(&fixture("h200-quick-run.json")).unwrap();
    let home = tempfile::tempdir().unwrap();
    write_criterion(home.path(), "stream", "triad", &[1.0, 2.0], &[200.0, 400.0]);
    write_criterion(home.path(), "mykernels", "saxpy", &[1.0, 2.0, 4.0], &[10.0, 22.0, 40.0]);
    let criterion = read_all(home.path());
    assert_eq!(criterion.len(), 2);
    let stream_record = ResultsDocument {
        benchmarks: record.benchmarks.iter().filter(|b| b.family == "stream").cloned().collect(),
        ..record.clone()
    };
    let outputs = vec![
        BenchOutput { bench: "stream".into(), record: Some(stream_record), criterion: criterion[1..].to_vec() },
        BenchOutput { bench: "user_bench".into(), record: None, criterion: criterion[..1].to_vec() },
    ];
    let doc = merge(header(&record), outputs, 12.5);
    assert_eq!(doc.wall_time_s, 12.5);
    let ids: Vec<&str> = doc.benchmarks.iter().map(|b| b.id.as_str()).collect();
    assert_eq!(ids, ["stream/copy", "stream/scale", "stream/add", "stream/triad", "mykernels/saxpy"]);
    let triad = doc.benchmark("stream/triad").unwrap();
    assert_eq!(triad.criterion.unwrap().median_ns, 99.0);
    assert!(doc.benchmark("stream/copy").unwrap().criterion.is_none());
    let saxpy = doc.benchmark("mykernels/saxpy").unwrap();
    assert_eq!(saxpy.family, "user_bench");
    assert_eq!(saxpy.metrics[0].name, "time");
    assert_eq!(saxpy.metrics[0].samples, vec![10.0, 11.0, 10.0]);
    assert_eq!(doc.telemetry.as_ref().unwrap().throttle.samples, 0, "the fixture predates NVML telemetry");
}
