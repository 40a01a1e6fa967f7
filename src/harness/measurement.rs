//! A criterion [`Measurement`] that times GPU work with CUDA events, so that `cargo bench`
//! reports GPU time rather than host time.

use std::sync::Arc;

use criterion::Throughput;
use criterion::measurement::{Measurement, ValueFormatter};
use cudarc::driver::{CudaEvent, CudaStream, sys::CUevent_flags};

/// GPU time between two CUDA events recorded on one stream, in nanoseconds.
///
/// With `b.iter(|| launch())` the launches are timed on the GPU; with `b.iter_custom`, return
/// the GPU nanoseconds of the `iters` launches.
pub struct GpuTime {
    stream: Arc<CudaStream>,
}

impl GpuTime {
    /// Times work queued on `stream`.
    pub fn new(stream: Arc<CudaStream>) -> Self {
        GpuTime { stream }
    }

    fn event(&self) -> Option<CudaEvent> {
        let e = self.stream.context().new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).ok()?;
        e.record(&self.stream).ok()?;
        Some(e)
    }
}

impl Measurement for GpuTime {
    type Intermediate = Option<CudaEvent>;
    type Value = f64;

    fn start(&self) -> Self::Intermediate {
        self.event()
    }

    fn end(&self, start: Self::Intermediate) -> Self::Value {
        match (start, self.event()) {
            (Some(s), Some(e)) => s.elapsed_ms(&e).map(|ms| ms as f64 * 1e6).unwrap_or(f64::NAN),
            _ => f64::NAN,
        }
    }

    fn add(&self, v1: &f64, v2: &f64) -> f64 {
        v1 + v2
    }

    fn zero(&self) -> f64 {
        0.0
    }

    fn to_f64(&self, value: &f64) -> f64 {
        *value
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        &GpuTimeFormatter
    }
}

/// Formats nanoseconds as ns / µs / ms / s.
pub struct GpuTimeFormatter;

impl GpuTimeFormatter {
    fn scale(typical_ns: f64) -> (f64, &'static str) {
        match typical_ns {
            t if t < 1e3 => (1.0, "ns"),
            t if t < 1e6 => (1e-3, "µs"),
            t if t < 1e9 => (1e-6, "ms"),
            _ => (1e-9, "s"),
        }
    }
}

impl ValueFormatter for GpuTimeFormatter {
    fn scale_values(&self, typical_value: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = Self::scale(typical_value);
        values.iter_mut().for_each(|v| *v *= factor);
        unit
    }

    fn scale_throughputs(&self, _typical: f64, throughput: &Throughput, values: &mut [f64]) -> &'static str {
        let (per_iter, unit) = match *throughput {
            Throughput::Bytes(b) | Throughput::BytesDecimal(b) => (b as f64, "GB/s"),
            Throughput::Elements(e) => (e as f64, "Gelem/s"),
            Throughput::Bits(b) => (b as f64, "Gbit/s"),
            Throughput::ElementsAndBytes { elements, .. } => (elements as f64, "Gelem/s"),
        };
        // per-iteration amount / ns = G-units per second
        values.iter_mut().for_each(|ns| *ns = per_iter / *ns);
        unit
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatter_picks_the_unit_from_the_typical_value() {
        let mut v = [1500.0, 2500.0];
        assert_eq!(GpuTimeFormatter.scale_values(2000.0, &mut v), "µs");
        assert_eq!(v, [1.5, 2.5]);
        let mut v = [3.0e6];
        assert_eq!(GpuTimeFormatter.scale_values(3.0e6, &mut v), "ms");
        assert_eq!(v, [3.0]);
    }

    #[test]
    fn throughput_in_bytes_becomes_gigabytes_per_second() {
        let mut v = [1.0e6]; // 1 ms per iteration
        let unit = GpuTimeFormatter.scale_throughputs(1.0e6, &Throughput::Bytes(4_000_000_000), &mut v);
        assert_eq!(unit, "GB/s");
        assert!((v[0] - 4000.0).abs() < 1e-9);
    }
}
