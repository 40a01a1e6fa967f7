//! The host side of `gb_probe` (kernels/common.cuh): clock deltas and counts a kernel reports.

use cudarc::driver::CudaSlice;

use crate::device::Gpu;
use crate::error::Result;
use crate::results::KernelClock;

/// Device buffer holding one `gb_probe { cycles, ns, count, sink }`.
pub struct Probe {
    buf: CudaSlice<u64>,
}

/// What a probe held after a sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProbeReading {
    /// Sum of clock64() deltas.
    pub cycles: u64,
    /// Sum of %globaltimer deltas, ns.
    pub ns: u64,
    /// Kernel-specific count of timed work items.
    pub count: u64,
    /// Data-dependent value the kernel left.
    pub sink: u64,
}

impl ProbeReading {
    /// The SM cycles and ns of the window, if the kernel stamped any.
    pub fn clock(&self) -> Option<KernelClock> {
        (self.ns > 0).then(|| KernelClock { cycles: self.cycles as f64, ns: self.ns as f64 })
    }
}

impl Probe {
    /// Allocates a zeroed probe.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        Ok(Probe { buf: gpu.alloc_zeros::<u64>(4, "a clock probe")? })
    }

    /// The device buffer, to pass as the kernel's `gb_probe*`.
    pub fn buffer(&self) -> &CudaSlice<u64> {
        &self.buf
    }

    /// Clears cycles, ns and count; keeps `sink` (a chase resumes from it).
    pub fn reset_counters(&mut self, gpu: &Gpu) -> Result<()> {
        let sink = self.read(gpu)?.sink;
        self.set(gpu, sink)
    }

    /// Sets the probe to zero counters and the given sink.
    pub fn set(&mut self, gpu: &Gpu, sink: u64) -> Result<()> {
        gpu.stream()
            .memcpy_htod(&[0u64, 0, 0, sink], &mut self.buf)
            .map_err(|e| crate::error::Error::cuda("writing a clock probe", e))
    }

    /// Reads the probe (synchronises the stream).
    pub fn read(&self, gpu: &Gpu) -> Result<ProbeReading> {
        let v = gpu.download(&self.buf, "a clock probe")?;
        Ok(ProbeReading { cycles: v[0], ns: v[1], count: v[2], sink: v[3] })
    }
}
