//! Text shared by the verdict reports: who was compared with whom, the upgrade view, the rule.

use crate::verdict::{Comparison, ConfidenceScope, SideInfo};

/// "2025-11-22 01:23 UTC" for Unix seconds (0: "unknown time").
pub fn utc_time(unix_s: u64) -> String {
    if unix_s == 0 {
        return "unknown time".into();
    }
    let days = (unix_s / 86_400) as i64;
    let secs = unix_s % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02} UTC", secs / 3600, secs % 3600 / 60)
}

/// Proleptic Gregorian date of a day count since 1970-01-01 (the era-based conversion: 400-year
/// eras of 146097 days, years starting in March so that the leap day comes last).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// "NVIDIA H200 GPU-0ecb8783, 3 runs, newest at 2025-11-22 01:23 UTC, profile default".
pub fn side_line(s: &SideInfo) -> String {
    let uuid: String = s.gpu.uuid.chars().take(12).collect();
    let runs = if s.runs == 1 { "1 run at".to_string() } else { format!("{} runs, newest at", s.runs) };
    format!("{} {uuid}, {runs} {}, profile {}", s.gpu.name, utc_time(s.created_unix_s), s.settings.profile)
}

/// "minimum effect ±2.0%, widened by 99% prediction bands from the baseline's learned
/// spreads; insensitive above 10.0%".
pub fn rule_line(c: &Comparison) -> String {
    let r = &c.rule;
    let overrides = match r.overrides.len() {
        0 => String::new(),
        n => format!(", {n} per-metric override{}", if n == 1 { "" } else { "s" }),
    };
    let bands = match r.confidence_scope {
        ConfidenceScope::Metric => format!("{:.0}% prediction bands", r.confidence * 100.0),
        ConfidenceScope::Comparison => format!(
            "prediction bands at {:.0}% for the comparison ({:.3}% per metric, shared by {} that could pass the minimum by chance)",
            r.confidence * 100.0,
            c.metric_confidence.confidence * 100.0,
            c.metric_confidence.at_risk
        ),
    };
    format!(
        "minimum effect ±{:.1}%, widened by {bands} from the baseline's learned spreads; insensitive above {:.1}%{overrides}",
        r.threshold * 100.0,
        r.max_detectable * 100.0
    )
}

/// The header lines every report starts with.
pub fn header_lines(c: &Comparison) -> Vec<String> {
    let mut lines = vec![
        format!("baseline: {} ({})", c.baseline.label, side_line(&c.baseline)),
        format!("new:      {} ({})", c.candidate.label, side_line(&c.candidate)),
        format!("stack:    {}", c.upgrade.stack_line()),
        format!("code:     {}", c.upgrade.kernels_line()),
        format!("rule:     {}", rule_line(c)),
        format!("against:  {}", c.baseline_kind.describe()),
    ];
    if !c.not_run.is_empty() {
        lines.push(format!("not run:  {} baseline metrics (name filter or families not selected)", c.not_run.len()));
    }
    if !c.not_in_baseline.is_empty() {
        lines.push(format!("new:      {} metrics have no baseline yet", c.not_in_baseline.len()));
    }
    lines.extend(c.families.iter().map(|f| format!("family:   {} {}", f.verdict.label(), f.reason)));
    lines.extend(c.warnings.iter().map(|w| format!("warning:  {w}")));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_of_known_days() {
        assert_eq!(utc_time(1), "1970-01-01 00:00 UTC");
        assert_eq!(utc_time(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(utc_time(1_763_774_580), "2025-11-22 01:23 UTC");
        assert_eq!(utc_time(4_107_542_400), "2100-03-01 00:00 UTC");
        assert_eq!(utc_time(0), "unknown time");
    }
}
