//! Turning a benchmark's measured samples into its [`BenchmarkResult`]: per-sample metrics,
//! the clocks they ran at, throttle classification and clock-normalised values. Pure: no GPU.

use super::{Bench, Sample};
use std::collections::BTreeMap;

use crate::results::{
    BenchmarkResult, ClockDomain, KernelClock, Metric, NormalizedMetric, SampleTelemetry, SmMap, Summary,
};
use crate::telemetry::{normalize, normalized_unit, reasons};

/// One criterion sample as the harness saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredSample {
    /// Iterations criterion asked for.
    pub iters: u64,
    /// What the routine returned.
    pub sample: Sample,
    /// NVML's view of the sample's window, when NVML is available.
    pub telemetry: Option<SampleTelemetry>,
}

impl MeasuredSample {
    /// The SM clock of the sample: the kernel's own (exact) when it reports one, else NVML's.
    pub fn sm_mhz(&self) -> Option<f64> {
        self.sample.clock.and_then(|c| c.mhz()).or_else(|| self.telemetry.as_ref().and_then(|t| t.sm_mhz))
    }

    /// The memory clock of the sample (NVML).
    pub fn mem_mhz(&self) -> Option<f64> {
        self.telemetry.as_ref().and_then(|t| t.mem_mhz)
    }
}

/// How throttled samples are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ThrottlePolicy {
    /// Keep them, marked, and normalise (default: a card at a lower steady clock still yields
    /// results).
    #[default]
    Normalize,
    /// Drop them (unless every sample is throttled, which would leave nothing).
    Discard,
}

/// Builds the benchmark's result from its measured samples.
pub fn build_result(
    family: &str,
    bench: &Bench,
    measured: &[MeasuredSample],
    max_sm_mhz: f64,
    policy: ThrottlePolicy,
) -> BenchmarkResult {
    let mut classified: Vec<(MeasuredSample, bool)> = measured
        .iter()
        .map(|m| {
            let mut m = m.clone();
            let t = m.telemetry.get_or_insert_with(SampleTelemetry::default);
            let kernel_mhz = m.sample.clock.and_then(|c| c.mhz());
            let v = reasons::classify(
                t.reasons_mask,
                t.power_violation_ns,
                t.thermal_violation_ns,
                kernel_mhz.or(t.sm_mhz),
                max_sm_mhz,
            );
            t.throttled = v.throttled;
            t.slowdown = v.reasons;
            let throttled = v.throttled;
            if m.telemetry.as_ref().is_some_and(|t| *t == SampleTelemetry::default()) {
                m.telemetry = None;
            }
            (m, throttled)
        })
        .collect();
    if policy == ThrottlePolicy::Discard && classified.iter().any(|(_, t)| !*t) {
        classified.retain(|(_, t)| !*t);
    }
    let kept: Vec<MeasuredSample> = classified.into_iter().map(|(m, _)| m).collect();
    let sm_clocks = sm_clocks(&kept);

    let metrics = bench
        .metrics
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            let points: Vec<(f64, &MeasuredSample, Option<f64>)> = kept
                .iter()
                .zip(&sm_clocks)
                .map(|(m, c)| (m.sample.values[i], m, *c))
                .filter(|(v, ..)| v.is_finite())
                .collect();
            let raw: Vec<f64> = points.iter().map(|(v, ..)| *v).collect();
            let mut metric = Metric::new(spec.name.clone(), spec.unit.clone(), spec.better, spec.domain, raw);
            metric.normalized = normalized_series(&spec.unit, spec.domain, &points);
            metric
        })
        .collect();

    BenchmarkResult {
        id: format!("{family}/{}", bench.name),
        family: family.to_string(),
        params: bench.params.clone(),
        chosen: bench.chosen.clone(),
        time_ns: kept.iter().map(|m| m.sample.elapsed_ns / m.iters.max(1) as f64).collect(),
        clocks: kept.iter().filter_map(|m| m.sample.clock).collect::<Vec<KernelClock>>(),
        metrics,
        kernels: bench.kernels.clone(),
        criterion: None,
        telemetry: kept.iter().filter_map(|m| m.telemetry.clone()).collect(),
        sm_maps: sm_maps(bench, &kept),
    }
}

/// One chip map per metric that reported per-SM values: each SM's median over the samples.
fn sm_maps(bench: &Bench, kept: &[MeasuredSample]) -> Vec<SmMap> {
    let mut per_metric: BTreeMap<usize, BTreeMap<u32, Vec<f64>>> = BTreeMap::new();
    for m in kept {
        for (metric, pairs) in &m.sample.per_sm {
            let sms = per_metric.entry(*metric).or_default();
            for &(sm, v) in pairs.iter().filter(|p| p.1.is_finite()) {
                sms.entry(sm).or_default().push(v);
            }
        }
    }
    per_metric
        .into_iter()
        .filter_map(|(i, sms)| {
            let spec = bench.metrics.get(i)?;
            let pairs = sms.into_iter().filter_map(|(sm, v)| Some((sm, crate::stats::median(&v)?))).collect();
            let mut map = SmMap::new(spec.name.clone(), spec.unit.clone(), pairs);
            let group_of = |sm: &u32| bench.sm_groups.iter().find(|g| g.0 == *sm).map(|g| g.1);
            if !bench.sm_groups.is_empty() && map.sm.iter().all(|sm| group_of(sm).is_some()) {
                map.group = map.sm.iter().filter_map(group_of).collect();
            }
            Some(map)
        })
        .collect()
}

/// The SM clock each sample is normalised with. Samples that did not throttle share one clock:
/// the kernels' cycles over their %globaltimer ns summed over all such samples, a window long
/// enough that the timer's granularity does not matter, so that normalising adds no noise where
/// the clock held. A throttled sample keeps its own clock (kernel's, else NVML's): there the
/// clock moved and the correction is the point.
pub fn sm_clocks(samples: &[MeasuredSample]) -> Vec<Option<f64>> {
    let throttled = |m: &MeasuredSample| m.telemetry.as_ref().is_some_and(|t| t.throttled);
    let (cycles, ns) = samples
        .iter()
        .filter(|m| !throttled(m))
        .filter_map(|m| m.sample.clock)
        .fold((0.0, 0.0), |(c, t), k| (c + k.cycles, t + k.ns));
    let steady = (ns > 0.0).then_some(cycles / ns * 1e3);
    samples
        .iter()
        .map(|m| match (throttled(m), m.sample.clock.is_some(), steady) {
            (false, true, Some(mhz)) => Some(mhz),
            _ => m.sm_mhz(),
        })
        .collect()
}

fn normalized_series(
    unit: &str,
    domain: ClockDomain,
    points: &[(f64, &MeasuredSample, Option<f64>)],
) -> Option<NormalizedMetric> {
    let norm_unit = normalized_unit(unit, domain)?;
    let samples: Option<Vec<f64>> = points
        .iter()
        .map(|(v, m, sm_mhz)| {
            let clock = match domain {
                ClockDomain::Sm => *sm_mhz,
                ClockDomain::Memory => m.mem_mhz(),
                ClockDomain::None => None,
            };
            normalize(*v, unit, domain, clock.unwrap_or(f64::NAN))
        })
        .collect();
    let samples = samples?;
    if samples.is_empty() {
        return None;
    }
    Some(NormalizedMetric { unit: norm_unit, summary: Summary::of(&samples), samples })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Better;

    fn bench() -> Bench {
        Bench::new("x")
            .metric("ns_per_access", "ns", Better::Lower, ClockDomain::Sm)
            .metric("bandwidth", "GB/s", Better::Higher, ClockDomain::Memory)
            .metric("cycles_per_access", "cycles", Better::Lower, ClockDomain::Sm)
    }

    fn sample(mhz: f64, ns_per_access: f64, gbps: f64, mask: u64) -> MeasuredSample {
        // a kernel window of 1 ms at `mhz`
        let clock = KernelClock { cycles: mhz * 1e3, ns: 1e6 };
        MeasuredSample {
            iters: 4,
            sample: Sample::clocked(4000.0, vec![ns_per_access, gbps, 287.0], Some(clock)),
            telemetry: Some(SampleTelemetry {
                sm_mhz: Some(mhz),
                mem_mhz: Some(3201.0),
                reasons_mask: mask,
                readings: 3,
                ..Default::default()
            }),
        }
    }

    #[test]
    fn only_a_changed_placement_count_is_a_parameter() {
        let default = build_result(
            "atomics",
            &bench().placements(crate::placement::DEFAULT_PLACEMENTS),
            &[],
            1980.0,
            ThrottlePolicy::Normalize,
        );
        assert!(!default.params.contains_key("placements"), "{:?}", default.params);
        let wide = build_result("atomics", &bench().placements(4096), &[], 1980.0, ThrottlePolicy::Normalize);
        assert_eq!(wide.params.get("placements"), Some(&serde_json::json!(4096)));
    }

    #[test]
    fn a_ramping_clock_moves_the_raw_value_but_not_the_normalised_one() {
        // 287 cycles per access at 990, 1485 and 1980 MHz
        let m: Vec<MeasuredSample> =
            [990.0, 1485.0, 1980.0].iter().map(|&f| sample(f, 287.0 / f * 1e3, 4000.0, 0)).collect();
        let r = build_result("latency", &bench(), &m, 1980.0, ThrottlePolicy::Normalize);
        let ns = &r.metrics[0];
        assert!((ns.summary.max / ns.summary.min - 2.0).abs() < 1e-9, "raw ns halves as the clock doubles");
        let norm = ns.normalized.as_ref().unwrap();
        assert_eq!(norm.unit, "cycles");
        assert!(norm.samples.iter().all(|c| (c - 287.0).abs() < 1e-9), "{:?}", norm.samples);
        // the two slow samples are below 90% of the maximum clock
        let throttled: Vec<bool> = r.telemetry.iter().map(|t| t.throttled).collect();
        assert_eq!(throttled, vec![true, true, false]);
        assert_eq!(r.telemetry[0].slowdown, vec!["clock_below_max"]);
    }

    #[test]
    fn memory_bandwidth_normalises_by_the_memory_clock_and_cycles_stay() {
        let r = build_result("s", &bench(), &[sample(1980.0, 145.0, 4000.0, 0)], 1980.0, ThrottlePolicy::Normalize);
        let bw = r.metrics[1].normalized.as_ref().unwrap();
        assert_eq!(bw.unit, "B/memclk");
        assert!((bw.samples[0] - 4000.0e9 / 3201.0e6).abs() < 1e-9);
        assert_eq!(r.metrics[2].normalized.as_ref().unwrap().samples, vec![287.0]);
        assert_eq!(r.time_ns, vec![1000.0]);
    }

    #[test]
    fn discarding_drops_throttled_samples_but_never_all_of_them() {
        let m = vec![sample(1980.0, 145.0, 4000.0, 0), sample(1980.0, 150.0, 3900.0, 0x4)];
        let kept = build_result("s", &bench(), &m, 1980.0, ThrottlePolicy::Discard);
        assert_eq!(kept.metrics[0].samples, vec![145.0]);
        let normalized = build_result("s", &bench(), &m, 1980.0, ThrottlePolicy::Normalize);
        assert_eq!(normalized.metrics[0].samples.len(), 2);
        assert_eq!(normalized.telemetry[1].slowdown, vec!["sw_power_cap"]);
        let all_throttled = vec![sample(1980.0, 150.0, 3900.0, 0x4)];
        assert_eq!(
            build_result("s", &bench(), &all_throttled, 1980.0, ThrottlePolicy::Discard).metrics[0].samples.len(),
            1
        );
    }

    #[test]
    fn steady_samples_share_one_clock_so_normalising_adds_no_noise() {
        // timer jitter: the same 1980 MHz read as 1975 and 1985 over short windows
        let mut a = sample(1980.0, 145.0, 4000.0, 0);
        a.sample.clock = Some(KernelClock { cycles: 1975.0 * 1e3, ns: 1e6 });
        let mut b = sample(1980.0, 145.0, 4000.0, 0);
        b.sample.clock = Some(KernelClock { cycles: 1985.0 * 1e3, ns: 1e6 });
        let r = build_result("x", &bench(), &[a.clone(), b.clone()], 1980.0, ThrottlePolicy::Normalize);
        let n = r.metrics[0].normalized.as_ref().unwrap();
        assert_eq!(n.samples[0], n.samples[1], "equal raw values stay equal: {:?}", n.samples);
        assert!((n.samples[0] - 145.0 * 1.98).abs() < 1e-9);
        // a throttled sample keeps its own clock
        let slow = sample(1200.0, 145.0 * 1980.0 / 1200.0, 4000.0, 0x4);
        let r = build_result("x", &bench(), &[a, b, slow], 1980.0, ThrottlePolicy::Normalize);
        let n = r.metrics[0].normalized.as_ref().unwrap();
        assert!((n.samples[2] - 145.0 * 1.98).abs() < 1e-9, "{:?}", n.samples);
        assert!(r.telemetry[2].throttled);
    }

    #[test]
    fn per_sm_values_become_a_map_of_medians_over_samples() {
        let mut a = sample(1980.0, 145.0, 4000.0, 0);
        a.sample = a.sample.with_sm_values(2, vec![(1, 290.0), (0, 280.0), (2, 300.0)]);
        let mut b = sample(1980.0, 145.0, 4000.0, 0);
        b.sample = b.sample.with_sm_values(2, vec![(0, 282.0), (1, 292.0), (2, 302.0)]);
        let mut c = sample(1980.0, 145.0, 4000.0, 0);
        c.sample = c.sample.with_sm_values(2, vec![(0, 281.0), (1, f64::NAN), (2, 301.0)]);
        let r = build_result("latency", &bench(), &[a, b, c], 1980.0, ThrottlePolicy::Normalize);
        assert_eq!(r.sm_maps.len(), 1);
        let map = &r.sm_maps[0];
        assert_eq!(map.metric, "cycles_per_access");
        assert_eq!(map.sm, vec![0, 1, 2]);
        assert_eq!(map.values, vec![281.0, 291.0, 301.0]);
        assert_eq!((map.spread.min, map.spread.median, map.spread.max), (281.0, 291.0, 301.0));
        assert_eq!(r.sm_map("cycles_per_access").and_then(|m| m.value(2)), Some(301.0));
    }

    #[test]
    fn without_nvml_memory_metrics_have_no_normalised_series() {
        let mut s = sample(1980.0, 145.0, 4000.0, 0);
        s.telemetry = None;
        let r = build_result("s", &bench(), &[s], 1980.0, ThrottlePolicy::Normalize);
        assert!(r.metrics[1].normalized.is_none());
        assert!(r.metrics[0].normalized.is_some(), "the kernel's own clock still normalises SM metrics");
        assert!(r.telemetry.is_empty());
    }
}
