//! The run summary as a terminal table.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};

use crate::results::{BenchmarkResult, ClockDomain, ResultsDocument};

/// Formats a value with four significant digits, switching to scientific notation for very
/// large or small magnitudes.
pub fn format_value(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e7).contains(&a) {
        return format!("{v:.3e}");
    }
    let digits = if a >= 1000.0 {
        0
    } else if a >= 100.0 {
        1
    } else if a >= 10.0 {
        2
    } else {
        3
    };
    format!("{v:.digits$}")
}

/// Median effective SM clock of a benchmark's samples, MHz.
pub fn median_clock_mhz(b: &BenchmarkResult) -> Option<f64> {
    median_of(b.clocks.iter().filter_map(|c| c.mhz()))
}

/// Median SM clock NVML reported over a benchmark's samples, MHz.
pub fn median_nvml_mhz(b: &BenchmarkResult) -> Option<f64> {
    median_of(b.telemetry.iter().filter_map(|t| t.sm_mhz))
}

/// Median board power over a benchmark's samples, W.
pub fn median_power_w(b: &BenchmarkResult) -> Option<f64> {
    median_of(b.telemetry.iter().filter_map(|t| t.power_w))
}

fn median_of(values: impl Iterator<Item = f64>) -> Option<f64> {
    crate::stats::median(&values.collect::<Vec<_>>())
}

/// One row per metric: benchmark, metric, median, unit, relative spread, samples, the
/// clock-normalised median, the SM clock the kernels ran at (their own clock64 / %globaltimer)
/// and NVML's, board power, throttled samples, and the share of the theoretical peak for DRAM
/// bandwidth.
pub fn summary_table(doc: &ResultsDocument) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    t.set_header(vec![
        "benchmark",
        "metric",
        "median",
        "unit",
        "± %",
        "n",
        "per clock",
        "SM MHz",
        "NVML MHz",
        "W",
        "thr",
        "of peak",
    ]);
    let peak_gbps = doc.gpu.peak_dram_bytes_per_s() / 1e9;
    let mhz = |v: Option<f64>| v.map(|c| format!("{c:.0}")).unwrap_or_else(|| "-".into());
    for b in &doc.benchmarks {
        let clock = mhz(median_clock_mhz(b));
        let nvml = mhz(median_nvml_mhz(b));
        let power = mhz(median_power_w(b));
        let throttled = b.telemetry.iter().filter(|t| t.throttled).count();
        let throttled = if b.telemetry.is_empty() { "-".to_string() } else { throttled.to_string() };
        for m in &b.metrics {
            let s = &m.summary;
            let spread = if s.median != 0.0 && s.n > 1 {
                format!("{:.2}", 100.0 * s.stdev / s.median.abs())
            } else {
                "-".into()
            };
            let of_peak = if m.domain == ClockDomain::Memory && m.unit == "GB/s" && peak_gbps > 0.0 {
                format!("{:.1}%", 100.0 * s.median / peak_gbps)
            } else {
                String::new()
            };
            let per_clock = match &m.normalized {
                Some(n) if n.unit != m.unit => format!("{} {}", format_value(n.summary.median), n.unit),
                _ => String::new(),
            };
            let right = |v: String| Cell::new(v).set_alignment(CellAlignment::Right);
            t.add_row(vec![
                Cell::new(&b.id),
                Cell::new(&m.name),
                right(format_value(s.median)),
                Cell::new(&m.unit),
                right(spread),
                right(s.n.to_string()),
                right(per_clock),
                right(clock.clone()),
                right(nvml.clone()),
                right(power.clone()),
                right(throttled.clone()),
                right(of_peak),
            ]);
        }
    }
    t
}

/// Kernel sources and the hashes of what NVRTC generated for them.
pub fn provenance_table(kernels: &[crate::results::KernelProvenance]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    t.set_header(vec!["source", "arch", "NVRTC", "source sha256", "PTX sha256", "cubin sha256"]);
    for k in kernels {
        let short = |h: &str| h.chars().take(12).collect::<String>();
        t.add_row(vec![
            k.source.clone(),
            k.arch.clone(),
            k.nvrtc_version.clone(),
            short(&k.source_sha256),
            short(&k.ptx_sha256),
            short(&k.cubin_sha256),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::format_value;

    #[test]
    fn values_keep_about_four_significant_digits() {
        assert_eq!(format_value(3012.44), "3012");
        assert_eq!(format_value(287.46), "287.5");
        assert_eq!(format_value(33.0), "33.00");
        assert_eq!(format_value(0.5), "0.500");
        assert_eq!(format_value(2.5e10), "2.500e10");
        assert_eq!(format_value(f64::NAN), "-");
    }
}
