//! The health profile: a handful of quick benchmarks that show a sick GPU (L2 and DRAM latency,
//! DRAM bandwidth, a global atomic, FP32 FMA throughput), short enough for Slurm's
//! `HealthCheckProgram` (killed after 60 s), and the one-line verdicts it prints.

use super::analysis::CardReport;
use super::report::{card_reason, drain_reason};

/// Bench targets the health profile runs.
pub const BENCHES: [&str; 4] = ["latency", "dram", "atomics", "instructions"];

/// Benchmark ids it keeps (a regular expression on "family/name").
pub const FILTER: &str = r"^(latency/cg/(2MiB|256MiB)|dram/triad|atomics/add_u32/distinct|instructions/throughput)$";

/// The arguments of the run the health check starts (quick profile, no baseline comparison).
pub fn run_args(timeout_s: u64) -> Vec<String> {
    let mut a = vec!["--quick".to_string(), "--no-baseline".into(), "--timeout".into(), timeout_s.to_string()];
    for b in BENCHES {
        a.push("--bench".into());
        a.push(b.into());
    }
    a.push(FILTER.into());
    a
}

/// "PASS GPU 0 GPU-...: 57 metrics within the class envelope of 3 cards" or
/// "FAIL GPU 0 GPU-...: dram/triad:bandwidth -20.0% (z 9.1)".
pub fn verdict_line(ordinal: usize, card: &CardReport, envelope_cards: usize) -> String {
    if card.outlier {
        format!("FAIL GPU {ordinal} {}: {}", card.uuid, card_reason(card))
    } else {
        format!(
            "PASS GPU {ordinal} {}: {} metrics within the class envelope of {envelope_cards} cards",
            card.uuid,
            card.z.len()
        )
    }
}

/// The drain reason for a failed health check: "gpubench health: <first failure>".
pub fn drain_text(first_failure: &str) -> String {
    drain_reason(&format!("gpubench health: {first_failure}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_keeps_exactly_the_health_benchmarks() {
        let re = regex::Regex::new(FILTER).unwrap();
        for id in [
            "latency/cg/2MiB",
            "latency/cg/256MiB",
            "dram/triad",
            "atomics/add_u32/distinct",
            "instructions/throughput",
        ] {
            assert!(re.is_match(id), "{id}");
        }
        for id in
            ["latency/ca/2MiB", "dram/copy", "atomics/add_u32/same_address", "instructions/latency", "stream/triad"]
        {
            assert!(!re.is_match(id), "{id}");
        }
        let args = run_args(50);
        assert_eq!(&args[..4], ["--quick", "--no-baseline", "--timeout", "50"]);
        assert_eq!(args.last().map(String::as_str), Some(FILTER));
    }

    #[test]
    fn drain_text_is_one_quoted_word_safe_line() {
        let t = drain_text("no CUDA GPU: \"x\"\nsecond line");
        assert!(t.starts_with("gpubench health: no CUDA GPU:"));
        assert!(!t.contains('"') && !t.contains('\n'));
    }
}
