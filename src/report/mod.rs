//! Reports for people (tables, Markdown, an HTML page) and machines (JSON, JUnit XML). Pure functions over
//! the results and comparison types: no I/O, no GPU.

pub mod baseline;
pub mod calibration;
pub mod chipmap;
pub mod device;
pub mod header;
pub mod html;
pub mod junit;
pub mod markdown;
pub mod svg;
pub mod table;
pub mod verdict_table;

pub use baseline::{baseline_list_table, baseline_report};
pub use calibration::calibration_markdown;
pub use device::{info_table, load_table, ramp_table};
pub use header::{header_lines, utc_time};
pub use html::html;
pub use junit::junit;
pub use markdown::markdown;
pub use table::{format_value, median_clock_mhz, median_nvml_mhz, median_power_w, provenance_table, summary_table};
pub use verdict_table::{TableOptions, verdict_report, verdict_table};

/// The comparison as pretty JSON (schema `gpubench.comparison/1`).
pub fn comparison_json(c: &crate::verdict::Comparison) -> String {
    let mut s = serde_json::to_string_pretty(c).expect("comparisons always serialise");
    s.push('\n');
    s
}
