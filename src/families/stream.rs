//! STREAM copy / scale / add / triad on doubles (seed 002 section V; McCalpin's STREAM,
//! verified like BabelStream). Arrays are four times the L2 or larger, so every pass goes to
//! DRAM; bandwidth counts the bytes each kernel must read and write.

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::full_grid;
use crate::device::{EventTimer, Gpu};
use crate::error::{CudaResultExt, Error, Result};
use crate::harness::{Bench, Probe, Sample, Suite};
use crate::kernels;
use crate::results::{Better, ClockDomain, GpuIdentity};

/// Scalar of scale and triad.
pub const SCALAR: f64 = 3.0;
/// Initial values of a, b, c (non-zero a and b: zeros hide unwritten outputs).
pub const INITIAL: [f64; 3] = [1.0, 2.0, 0.0];

/// The four STREAM kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// c = a
    Copy,
    /// b = q c
    Scale,
    /// c = a + b
    Add,
    /// a = b + q c
    Triad,
}

impl Op {
    /// All four, in STREAM's order.
    pub const ALL: [Op; 4] = [Op::Copy, Op::Scale, Op::Add, Op::Triad];

    /// "copy".
    pub fn label(self) -> &'static str {
        match self {
            Op::Copy => "copy",
            Op::Scale => "scale",
            Op::Add => "add",
            Op::Triad => "triad",
        }
    }

    /// Arrays the kernel touches per element: 2 (copy, scale) or 3 (add, triad).
    pub fn arrays_touched(self) -> u64 {
        match self {
            Op::Copy | Op::Scale => 2,
            Op::Add | Op::Triad => 3,
        }
    }

    /// Bytes moved by one pass over `n` doubles (reads plus writes).
    pub fn bytes(self, n: u64) -> u64 {
        self.arrays_touched() * n * 8
    }

    /// The (a, b, c) values after one pass on uniform arrays; index of the array written.
    pub fn apply(self, [a, b, c]: [f64; 3]) -> ([f64; 3], usize) {
        match self {
            Op::Copy => ([a, b, a], 2),
            Op::Scale => ([a, SCALAR * c, c], 1),
            Op::Add => ([a, b, a + b], 2),
            Op::Triad => ([b + SCALAR * c, b, c], 0),
        }
    }
}

/// Elements per array: at least four times the L2 and 64 MiB, a multiple of 2 (16-byte vectors).
pub fn array_len(gpu: &GpuIdentity) -> u64 {
    let bytes = (4 * gpu.l2_bytes).max(64 << 20);
    (bytes / 8).next_multiple_of(2)
}

/// Theoretical DRAM bandwidth of the device, GB/s.
pub fn peak_gbps(gpu: &GpuIdentity) -> f64 {
    gpu.peak_dram_bytes_per_s() / 1e9
}

struct Arrays {
    bufs: [CudaSlice<f64>; 3],
    n: u64,
    values: [f64; 3],
}

fn launch_op(gpu: &Gpu, f: &CudaFunction, op: Op, arrays: &Arrays, cfg: LaunchConfig, probe: &Probe) -> Result<()> {
    let n2 = arrays.n / 2;
    let [a, b, c] = &arrays.bufs;
    let mut l = gpu.stream().launch_builder(f);
    match op {
        Op::Copy => l.arg(a).arg(c).arg(&n2),
        Op::Scale => l.arg(b).arg(c).arg(&SCALAR).arg(&n2),
        Op::Add => l.arg(a).arg(b).arg(c).arg(&n2),
        Op::Triad => l.arg(a).arg(b).arg(c).arg(&SCALAR).arg(&n2),
    };
    l.arg(probe.buffer());
    // SAFETY: the argument lists match kernels/stream.cu; every index is < n.
    unsafe { l.launch(cfg) }.cuda_context(|| format!("launching stream_{}", op.label()))?;
    Ok(())
}

fn verify(gpu: &Gpu, check: &CudaFunction, buf: &CudaSlice<f64>, n: u64, expected: f64, what: &str) -> Result<()> {
    let bad = gpu.alloc_zeros::<u64>(1, "the mismatch counter")?;
    let cfg = full_grid(gpu.identity(), 256);
    // SAFETY: count_mismatches(const double*, u64, double, u64*).
    unsafe { gpu.stream().launch_builder(check).arg(buf).arg(&n).arg(&expected).arg(&bad).launch(cfg) }
        .cuda_context(|| "launching count_mismatches".into())?;
    let bad = gpu.download(&bad, "the mismatch counter")?[0];
    if bad != 0 {
        return Err(Error::Verification {
            what: what.into(),
            detail: format!("{bad} of {n} elements differ from {expected}"),
        });
    }
    Ok(())
}

/// The STREAM family: `stream/<op>` for the four kernels.
pub fn run(suite: &mut Suite) -> Result<()> {
    if !Op::ALL.iter().any(|op| suite.wants(op.label())) {
        return Ok(());
    }
    let gpu = suite.gpu();
    let identity = gpu.identity().clone();
    let compiled = gpu.kernels(&kernels::STREAM)?;
    let n = array_len(&identity);
    let bufs = [
        gpu.alloc_zeros::<f64>(n as usize, "STREAM array a")?,
        gpu.alloc_zeros::<f64>(n as usize, "STREAM array b")?,
        gpu.alloc_zeros::<f64>(n as usize, "STREAM array c")?,
    ];
    let cfg = full_grid(&identity, 256);
    let init = compiled.function("stream_init")?;
    let [va, vb, vc] = INITIAL;
    // SAFETY: stream_init(double*, double*, double*, u64, double, double, double).
    unsafe {
        gpu.stream()
            .launch_builder(&init)
            .arg(&bufs[0])
            .arg(&bufs[1])
            .arg(&bufs[2])
            .arg(&n)
            .arg(&va)
            .arg(&vb)
            .arg(&vc)
            .launch(cfg)
    }
    .cuda_context(|| "launching stream_init".into())?;
    let check = compiled.function("count_mismatches")?;
    let mut arrays = Arrays { bufs, n, values: INITIAL };
    let peak = peak_gbps(&identity);
    for op in Op::ALL {
        if !suite.wants(op.label()) {
            continue;
        }
        let gpu = suite.gpu();
        let f = compiled.function(&format!("stream_{}", op.label()))?;
        let mut probe = Probe::new(gpu)?;
        let timer = EventTimer::new(gpu.stream())?;
        let bytes = op.bytes(n);
        let bench = Bench::new(op.label())
            .param("array_bytes", n * 8)
            .param("bytes_per_pass", bytes)
            .param("peak_gbps", peak)
            .param("threads_per_block", cfg.block_dim.0)
            .param("blocks", cfg.grid_dim.0)
            .metric("bandwidth", "GB/s", Better::Higher, ClockDomain::Memory)
            .kernels(&[&compiled.provenance]);
        suite.bench(bench, |gpu, iters| {
            probe.reset_counters(gpu)?;
            timer.start()?;
            for _ in 0..iters {
                launch_op(gpu, &f, op, &arrays, cfg, &probe)?;
            }
            let elapsed = timer.stop_ns()?;
            let r = probe.read(gpu)?;
            Ok(Sample::clocked(elapsed, vec![bytes as f64 * iters as f64 / elapsed], r.clock()))
        })?;
        let (values, written) = op.apply(arrays.values);
        arrays.values = values;
        let gpu = suite.gpu();
        verify(gpu, &check, &arrays.bufs[written], n, values[written], &format!("stream/{}", op.label()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_count_reads_and_writes() {
        assert_eq!(Op::Copy.bytes(1000), 16_000);
        assert_eq!(Op::Scale.bytes(1000), 16_000);
        assert_eq!(Op::Add.bytes(1000), 24_000);
        assert_eq!(Op::Triad.bytes(1000), 24_000);
    }

    #[test]
    fn expected_values_follow_the_stream_recurrence() {
        let mut v = INITIAL;
        let mut written = Vec::new();
        for op in Op::ALL {
            let (next, w) = op.apply(v);
            v = next;
            written.push(w);
        }
        // copy c=1; scale b=3; add c=4; triad a=3+3*4=15
        assert_eq!(v, [15.0, 3.0, 4.0]);
        assert_eq!(written, vec![2, 1, 2, 0]);
        // each kernel alone is idempotent: applying it twice changes nothing more
        for op in Op::ALL {
            let once = op.apply(INITIAL).0;
            assert_eq!(op.apply(once).0, once);
        }
    }

    #[test]
    fn arrays_are_at_least_four_l2s_and_even() {
        let mut g = crate::families::test_identity();
        g.l2_bytes = 50 << 20;
        let n = array_len(&g);
        assert!(n * 8 >= 4 * g.l2_bytes);
        assert_eq!(n % 2, 0);
        g.l2_bytes = 1 << 20;
        assert_eq!(array_len(&g) * 8, 64 << 20);
    }

    #[test]
    fn peak_is_bus_width_times_double_data_rate_clock() {
        let g = crate::families::test_identity();
        // H100 SXM: 5120-bit bus, 2619 MHz -> 3352 GB/s
        assert!((peak_gbps(&g) - 3352.32).abs() < 0.01);
    }
}
