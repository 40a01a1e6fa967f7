//! The summary table, rendered from committed device results.

use gpubench::report::{format_value, summary_table};
use gpubench::results::ResultsDocument;

use crate::fixture;

#[test]
fn the_table_has_a_row_per_metric_with_medians_and_clocks() {
    let doc = ResultsDocument::read(&fixture("h200-quick-run.json")).unwrap();
    let text = summary_table(&doc).to_string();
    let rows = doc.benchmarks.iter().map(|b| b.metrics.len()).sum::<usize>();
    // header + rows; condensed preset: no separators between rows
    let body_lines = text.lines().filter(|l| l.starts_with('│')).count();
    assert_eq!(body_lines, rows + 1, "{text}");
    let triad = doc.benchmark("stream/triad").unwrap();
    let bw = triad.metric("bandwidth").unwrap();
    let line = text.lines().find(|l| l.contains("stream/triad")).unwrap();
    assert!(line.contains(&format_value(bw.summary.median)), "{line}");
    // % of the theoretical peak from the device's bus width and memory clock
    let pct = 100.0 * bw.summary.median / (doc.gpu.peak_dram_bytes_per_s() / 1e9);
    assert!(line.contains(&format!("{pct:.1}%")), "{line}");
    assert!(line.contains("1978") || line.contains("1980"), "kernel SM clock: {line}");
    let smem = text.lines().find(|l| l.contains("shared_banks/threads=32") && l.contains("stride=32 ")).unwrap();
    assert!(smem.contains("91.10"), "{smem}");
}
