//! One sample of a benchmark made of several kernels: their GPU times and clock windows add up,
//! their metric values are listed in declaration order.

use crate::harness::Sample;
use crate::results::KernelClock;

/// Adds two clock windows (cycles and ns summed), so that a sample made of several kernels
/// reports the clock over all of them.
pub fn merge_clock(a: Option<KernelClock>, b: Option<KernelClock>) -> Option<KernelClock> {
    match (a, b) {
        (Some(a), Some(b)) => Some(KernelClock { cycles: a.cycles + b.cycles, ns: a.ns + b.ns }),
        (a, None) => a,
        (None, b) => b,
    }
}

/// What the kernels of one sample measured so far: the sum of their GPU times, the sum of their
/// clock windows and the metric values.
#[derive(Debug, Clone, Default)]
pub struct SampleSum {
    elapsed_ns: f64,
    clock: Option<KernelClock>,
    values: Vec<f64>,
    per_sm: Vec<(usize, Vec<(u32, f64)>)>,
}

impl SampleSum {
    /// An empty sample.
    pub fn new() -> Self {
        SampleSum::default()
    }

    /// An empty sample with room for `n` values.
    pub fn with_capacity(n: usize) -> Self {
        SampleSum { values: Vec::with_capacity(n), ..SampleSum::default() }
    }

    /// One kernel's GPU time (ns) and clock window.
    pub fn add(&mut self, elapsed_ns: f64, clock: Option<KernelClock>) {
        self.elapsed_ns += elapsed_ns;
        self.clock(clock);
    }

    /// One kernel's clock window, for kernels timed together by one outer timer.
    pub fn clock(&mut self, clock: Option<KernelClock>) {
        self.clock = merge_clock(self.clock, clock);
    }

    /// The next metric value.
    pub fn push(&mut self, value: f64) {
        self.values.push(value);
    }

    /// The next metric values.
    pub fn extend(&mut self, values: impl IntoIterator<Item = f64>) {
        self.values.extend(values);
    }

    /// The per-SM values of the metric pushed last, for a chip map.
    pub fn sm_values(&mut self, pairs: Vec<(u32, f64)>) {
        let metric = self.values.len().saturating_sub(1);
        self.per_sm.push((metric, pairs));
    }

    /// The values so far.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// The sample, timed by the sum of the kernels' times.
    pub fn finish(self) -> Sample {
        let elapsed_ns = self.elapsed_ns;
        self.into_sample(elapsed_ns)
    }

    /// The sample, timed by an outer timer that covered every kernel (`elapsed_ns`) plus the
    /// kernels' times added so far.
    pub fn finish_after(self, elapsed_ns: f64) -> Sample {
        let elapsed_ns = elapsed_ns + self.elapsed_ns;
        self.into_sample(elapsed_ns)
    }

    fn into_sample(self, elapsed_ns: f64) -> Sample {
        let sample = Sample::clocked(elapsed_ns, self.values, self.clock);
        self.per_sm.into_iter().fold(sample, |s, (metric, pairs)| s.with_sm_values(metric, pairs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_of_several_kernels_add_up() {
        let a = Some(KernelClock { cycles: 2000.0, ns: 1000.0 });
        let b = Some(KernelClock { cycles: 1000.0, ns: 1000.0 });
        assert_eq!(merge_clock(a, b).unwrap().mhz(), Some(1500.0));
        assert_eq!(merge_clock(None, b), b);
        assert_eq!(merge_clock(a, None), a);
    }

    #[test]
    fn a_sample_sums_times_and_clocks_and_keeps_values_in_order() {
        let mut s = SampleSum::new();
        s.add(10.0, Some(KernelClock { cycles: 20.0, ns: 10.0 }));
        s.push(1.0);
        s.add(5.0, None);
        s.extend([2.0, 3.0]);
        s.clock(Some(KernelClock { cycles: 10.0, ns: 10.0 }));
        assert_eq!(s.values(), &[1.0, 2.0, 3.0]);
        let sample = s.finish_after(100.0);
        assert_eq!(sample.elapsed_ns, 115.0);
        assert_eq!(sample.values, vec![1.0, 2.0, 3.0]);
        assert_eq!(sample.clock, Some(KernelClock { cycles: 30.0, ns: 20.0 }));
    }

    #[test]
    fn per_sm_values_belong_to_the_metric_pushed_last() {
        let mut s = SampleSum::new();
        s.push(1.0);
        s.push(2.0);
        s.sm_values(vec![(0, 1.5), (3, 2.5)]);
        s.push(3.0);
        let sample = s.finish();
        assert_eq!(sample.per_sm, vec![(1, vec![(0, 1.5), (3, 2.5)])]);
    }
}
