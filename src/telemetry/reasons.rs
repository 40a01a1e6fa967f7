//! NVML clock-event ("throttle") reasons, and which of them slow the SM clock down.

/// NVML reason bits (nvmlClocksEventReason*), with the names we report.
pub const REASONS: [(u64, &str); 10] = [
    (0x1, "gpu_idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
    (0x200, "user_defined_clocks"),
];

/// Reasons that mean the clock was held below what the load asked for: power and thermal caps,
/// hardware slowdowns, and sync boost. Idle, application/user clock settings and display
/// settings are states of the card, not slowdowns during a benchmark.
pub const SLOWDOWN_MASK: u64 = 0x4 | 0x8 | 0x10 | 0x20 | 0x40 | 0x80;

/// Name of the pseudo-reason for an effective SM clock well below the maximum.
pub const CLOCK_BELOW_MAX: &str = "clock_below_max";

/// Fraction of the maximum SM clock below which a sample counts as throttled even without a
/// reason bit (a card held at a lower steady clock).
pub const CLOCK_BELOW_MAX_FRACTION: f64 = 0.9;

/// Names of the reasons set in `mask`.
pub fn names(mask: u64) -> Vec<String> {
    REASONS.iter().filter(|(bit, _)| mask & bit != 0).map(|(_, n)| n.to_string()).collect()
}

/// Names of the slowdown reasons in `mask`.
pub fn slowdown_names(mask: u64) -> Vec<String> {
    names(mask & SLOWDOWN_MASK)
}

/// What made a sample count as throttled.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Verdict {
    /// Whether it is throttled.
    pub throttled: bool,
    /// Slowdown reasons, the violation counters that grew, and [`CLOCK_BELOW_MAX`].
    pub reasons: Vec<String>,
}

/// Classifies one sample from its NVML reason bits, the growth of the power and thermal
/// violation counters during it, and its effective SM clock against the maximum.
pub fn classify(
    reasons_mask: u64,
    power_violation_ns: Option<f64>,
    thermal_violation_ns: Option<f64>,
    effective_mhz: Option<f64>,
    max_mhz: f64,
) -> Verdict {
    let mut reasons = slowdown_names(reasons_mask);
    if power_violation_ns.is_some_and(|v| v > 0.0) {
        reasons.push("power_violation".into());
    }
    if thermal_violation_ns.is_some_and(|v| v > 0.0) {
        reasons.push("thermal_violation".into());
    }
    if let Some(mhz) = effective_mhz {
        if max_mhz > 0.0 && mhz < CLOCK_BELOW_MAX_FRACTION * max_mhz {
            reasons.push(CLOCK_BELOW_MAX.into());
        }
    }
    Verdict { throttled: !reasons.is_empty(), reasons }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_and_settings_are_not_slowdowns() {
        assert!(slowdown_names(0x1 | 0x2 | 0x100 | 0x200).is_empty());
        assert_eq!(slowdown_names(0x4 | 0x1), vec!["sw_power_cap"]);
        assert_eq!(names(0x41), vec!["gpu_idle", "hw_thermal_slowdown"]);
    }

    #[test]
    fn a_power_cap_bit_throttles() {
        let v = classify(0x4, Some(0.0), Some(0.0), Some(1980.0), 1980.0);
        assert!(v.throttled);
        assert_eq!(v.reasons, vec!["sw_power_cap"]);
    }

    #[test]
    fn violation_time_alone_throttles() {
        let v = classify(0, Some(2.0e6), None, Some(1980.0), 1980.0);
        assert_eq!(v.reasons, vec!["power_violation"]);
    }

    #[test]
    fn a_low_steady_clock_throttles_without_reason_bits() {
        let v = classify(0, None, None, Some(1500.0), 1980.0);
        assert_eq!(v.reasons, vec![CLOCK_BELOW_MAX]);
        assert!(!classify(0, None, None, Some(1900.0), 1980.0).throttled);
        assert!(!classify(0, None, None, None, 1980.0).throttled);
    }
}
