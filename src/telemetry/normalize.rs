//! Clock normalisation: dividing a metric by the clock of its domain, so that a card that ran
//! at a lower clock is not mistaken for a slower one.

use crate::results::ClockDomain;

/// How a unit changes under normalisation and by what factor, for a clock in MHz.
///
/// - already per clock ("cycles", "op/clk", "B/clk", ...): unchanged;
/// - a time ("ns") in the SM domain: times the clock, giving cycles;
/// - a rate ("X/s", "GB/s") in the SM domain: per SM clock ("X/clk", "B/clk");
/// - a rate in the memory domain: per memory clock ("B/memclk");
/// - anything else (no clock domain, percentages): not normalised.
pub fn normalized_unit(unit: &str, domain: ClockDomain) -> Option<String> {
    if is_per_clock(unit) {
        return Some(unit.to_string());
    }
    let clk = match domain {
        ClockDomain::Sm => "clk",
        ClockDomain::Memory => "memclk",
        ClockDomain::None => return None,
    };
    match unit {
        "ns" if domain == ClockDomain::Sm => Some("cycles".into()),
        "GB/s" => Some(format!("B/{clk}")),
        u => u.strip_suffix("/s").map(|base| format!("{base}/{clk}")),
    }
}

/// Normalises one value measured at `clock_mhz`; `None` where the unit does not normalise.
pub fn normalize(value: f64, unit: &str, domain: ClockDomain, clock_mhz: f64) -> Option<f64> {
    if is_per_clock(unit) {
        return Some(value);
    }
    if clock_mhz <= 0.0 || !clock_mhz.is_finite() || domain == ClockDomain::None {
        return None;
    }
    let hz = clock_mhz * 1e6;
    match unit {
        "ns" if domain == ClockDomain::Sm => Some(value * 1e-9 * hz),
        "GB/s" => Some(value * 1e9 / hz),
        u if u.ends_with("/s") => Some(value / hz),
        _ => None,
    }
}

fn is_per_clock(unit: &str) -> bool {
    unit == "cycles" || unit.ends_with("/clk") || unit.ends_with("/memclk") || unit.contains("/clk/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_in_ns_becomes_cycles_at_the_sm_clock() {
        assert_eq!(normalized_unit("ns", ClockDomain::Sm).as_deref(), Some("cycles"));
        // 145 ns at 1980 MHz = 287.1 cycles
        assert!((normalize(145.0, "ns", ClockDomain::Sm, 1980.0).unwrap() - 287.1).abs() < 1e-9);
    }

    #[test]
    fn rates_become_per_clock() {
        assert_eq!(normalized_unit("op/s", ClockDomain::Sm).as_deref(), Some("op/clk"));
        assert_eq!(normalize(1.98e9, "op/s", ClockDomain::Sm, 1980.0), Some(1.0));
        assert_eq!(normalized_unit("GB/s", ClockDomain::Memory).as_deref(), Some("B/memclk"));
        // 4000 GB/s at a 3201 MHz memory clock = 1249.6 bytes per memory clock
        assert!((normalize(4000.0, "GB/s", ClockDomain::Memory, 3201.0).unwrap() - 1249.609).abs() < 1e-3);
    }

    #[test]
    fn per_clock_units_are_already_normalised() {
        assert_eq!(normalized_unit("cycles", ClockDomain::Sm).as_deref(), Some("cycles"));
        assert_eq!(normalize(29.15, "cycles", ClockDomain::Sm, 1000.0), Some(29.15));
        assert_eq!(normalize(6.8, "op/clk", ClockDomain::Sm, f64::NAN), Some(6.8));
        assert_eq!(normalize(120.0, "B/clk/SM", ClockDomain::Sm, 1500.0), Some(120.0));
    }

    #[test]
    fn no_domain_or_unknown_unit_does_not_normalise() {
        assert_eq!(normalized_unit("bytes", ClockDomain::None), None);
        assert_eq!(normalize(1.0, "%", ClockDomain::Sm, 1980.0), None);
        assert_eq!(normalize(1.0, "ns", ClockDomain::Sm, 0.0), None);
    }
}
