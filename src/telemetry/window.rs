//! Summarising the NVML readings that fall inside one sample's time window.

use std::time::Instant;

use crate::results::{SampleTelemetry, Summary};

/// One poll of the device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    /// When it was taken.
    pub at: Instant,
    /// SM clock, MHz.
    pub sm_mhz: Option<f64>,
    /// Memory clock, MHz.
    pub mem_mhz: Option<f64>,
    /// Board power, W.
    pub power_w: Option<f64>,
    /// GPU temperature, degrees C.
    pub temp_c: Option<f64>,
    /// Performance state number.
    pub pstate: Option<u32>,
    /// Clock-event reasons bit mask.
    pub reasons_mask: u64,
    /// Cumulative energy, mJ.
    pub energy_mj: Option<f64>,
    /// Cumulative power-violation time, ns.
    pub power_violation_ns: Option<f64>,
    /// Cumulative thermal-violation time, ns.
    pub thermal_violation_ns: Option<f64>,
}

/// Summarises `readings` (in time order) over `[start, end]`: medians of clocks and power, the
/// highest temperature, the union of reason bits, and the growth of the cumulative counters
/// from the last reading at or before `start` to the last one at or before `end`. A window
/// shorter than the polling period takes the reading nearest to its middle.
pub fn summarize(readings: &[Reading], start: Instant, end: Instant) -> SampleTelemetry {
    let inside: Vec<&Reading> = readings.iter().filter(|r| r.at >= start && r.at <= end).collect();
    let chosen: Vec<&Reading> = if inside.is_empty() {
        let mid = start + (end.saturating_duration_since(start)) / 2;
        readings.iter().min_by_key(|r| if r.at > mid { r.at - mid } else { mid - r.at }).into_iter().collect()
    } else {
        inside.clone()
    };
    let median = |f: &dyn Fn(&Reading) -> Option<f64>| {
        let v: Vec<f64> = chosen.iter().filter_map(|r| f(r)).collect();
        let s = Summary::of(&v);
        (s.n > 0).then_some(s.median)
    };
    let before = readings.iter().rev().find(|r| r.at <= start);
    let last = readings.iter().rev().find(|r| r.at <= end);
    let delta = |f: &dyn Fn(&Reading) -> Option<f64>| match (before, last) {
        (Some(a), Some(b)) => Some((f(b)? - f(a)?).max(0.0)),
        _ => None,
    };
    let reasons_mask = chosen.iter().fold(0, |m, r| m | r.reasons_mask);
    SampleTelemetry {
        sm_mhz: median(&|r| r.sm_mhz),
        mem_mhz: median(&|r| r.mem_mhz),
        power_w: median(&|r| r.power_w),
        temp_c: chosen.iter().filter_map(|r| r.temp_c).reduce(f64::max),
        pstate: chosen.iter().filter_map(|r| r.pstate).min(),
        reasons_mask,
        slowdown: super::reasons::slowdown_names(reasons_mask),
        energy_mj: delta(&|r| r.energy_mj),
        power_violation_ns: delta(&|r| r.power_violation_ns),
        thermal_violation_ns: delta(&|r| r.thermal_violation_ns),
        readings: inside.len() as u32,
        throttled: false,
        foreign_processes: Vec::new(),
        processes_unknown: None,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::time::Duration;

    pub(crate) fn reading(t0: Instant, ms: u64, sm: f64, power: f64, mask: u64, energy: f64) -> Reading {
        Reading {
            at: t0 + Duration::from_millis(ms),
            sm_mhz: Some(sm),
            mem_mhz: Some(3201.0),
            power_w: Some(power),
            temp_c: Some(40.0 + ms as f64 / 100.0),
            pstate: Some(0),
            reasons_mask: mask,
            energy_mj: Some(energy),
            power_violation_ns: Some(0.0),
            thermal_violation_ns: Some(0.0),
        }
    }

    #[test]
    fn a_window_takes_medians_unions_and_counter_growth() {
        let t0 = Instant::now();
        let rs: Vec<Reading> =
            (0..10).map(|i| reading(t0, i * 10, 1980.0 - i as f64, 500.0 + i as f64, 0, i as f64 * 5.0)).collect();
        let mut with_cap = rs.clone();
        with_cap[5].reasons_mask = 0x4;
        let s = summarize(&with_cap, t0 + Duration::from_millis(25), t0 + Duration::from_millis(65));
        assert_eq!(s.readings, 4); // 30, 40, 50, 60 ms
        assert_eq!(s.sm_mhz, Some(1975.5));
        assert_eq!(s.power_w, Some(504.5));
        assert_eq!(s.reasons_mask, 0x4);
        assert_eq!(s.slowdown, vec!["sw_power_cap"]);
        // energy: last at or before 65 ms (60 ms: 30 mJ) minus last at or before 25 ms (20 ms: 10 mJ)
        assert_eq!(s.energy_mj, Some(20.0));
        assert_eq!(s.temp_c, Some(40.6));
    }

    #[test]
    fn a_window_shorter_than_the_period_takes_the_nearest_reading() {
        let t0 = Instant::now();
        let rs: Vec<Reading> = (0..5).map(|i| reading(t0, i * 20, 1000.0 + i as f64 * 100.0, 300.0, 0, 0.0)).collect();
        let s = summarize(&rs, t0 + Duration::from_millis(41), t0 + Duration::from_millis(43));
        assert_eq!(s.readings, 0);
        assert_eq!(s.sm_mhz, Some(1200.0)); // the 40 ms reading
    }

    #[test]
    fn no_readings_give_an_empty_summary() {
        let t0 = Instant::now();
        let s = summarize(&[], t0, t0 + Duration::from_millis(5));
        assert_eq!(s.sm_mhz, None);
        assert_eq!(s.energy_mj, None);
        assert_eq!(s.readings, 0);
    }
}
