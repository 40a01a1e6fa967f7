//! STREAM copy / scale / add / triad on doubles (Qiu et al. section V; McCalpin's STREAM,
//! verified like BabelStream). Arrays are four times the L2 or larger, so every pass goes to
//! DRAM; bandwidth counts the bytes each kernel must read and write. A launch makes as many
//! passes as last [`launch_size::MIN_LAUNCH_US`] at the theoretical bandwidth.

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::full_grid;
use crate::device::{EventTimer, Gpu};
use crate::error::{CudaResultExt, Error, Result};
use crate::harness::{Bench, Probe, Sample, Suite};
use crate::kernels;
use crate::measure::launch_size;
use crate::results::{Better, ClockDomain, GpuIdentity};

pub use super::dram::{INITIAL, Op, SCALAR, passes};

/// The four STREAM kernels of this family, in STREAM's order.
pub const OPS: [Op; 4] = [Op::Copy, Op::Scale, Op::Add, Op::Triad];

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

fn launch_op(
    gpu: &Gpu,
    f: &CudaFunction,
    op: Op,
    arrays: &Arrays,
    cfg: LaunchConfig,
    passes: u32,
    probe: &Probe,
) -> Result<()> {
    let n2 = arrays.n / 2;
    let [a, b, c] = &arrays.bufs;
    let mut l = gpu.stream().launch_builder(f);
    match op {
        Op::Copy => l.arg(a).arg(c).arg(&n2),
        Op::Scale => l.arg(b).arg(c).arg(&SCALAR).arg(&n2),
        Op::Add => l.arg(a).arg(b).arg(c).arg(&n2),
        Op::Triad => l.arg(a).arg(b).arg(c).arg(&SCALAR).arg(&n2),
        Op::Read | Op::Write => unreachable!("the stream family runs the four STREAM kernels only"),
    };
    l.arg(&passes).arg(probe.buffer());
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
    if !OPS.iter().any(|op| suite.wants(op.label())) {
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
    for op in OPS {
        if !suite.wants(op.label()) {
            continue;
        }
        let gpu = suite.gpu();
        let f = compiled.function(&format!("stream_{}", op.label()))?;
        let mut probe = Probe::new(gpu)?;
        let timer = EventTimer::new(gpu.stream())?;
        let bytes = op.bytes(n);
        let passes = passes(&identity, op, n);
        let bench = Bench::new(op.label())
            .param("array_bytes", n * 8)
            .param("bytes_per_pass", bytes)
            .param("passes_per_launch", passes)
            .param(launch_size::LAUNCH_PARAM, launch_size::MIN_LAUNCH_US)
            .param("peak_gbps", peak)
            .param("threads_per_block", cfg.block_dim.0)
            .param("blocks", cfg.grid_dim.0)
            .metric("bandwidth", "GB/s", Better::Higher, ClockDomain::Memory)
            .kernels(&[&compiled.provenance]);
        suite.bench(bench, |gpu, iters| {
            probe.reset_counters(gpu)?;
            timer.start()?;
            for _ in 0..iters {
                launch_op(gpu, &f, op, &arrays, cfg, passes, &probe)?;
            }
            let elapsed = timer.stop_ns()?;
            let r = probe.read(gpu)?;
            let moved = bytes as f64 * passes as f64 * iters as f64;
            Ok(Sample::clocked(elapsed, vec![moved / elapsed], r.clock()))
        })?;
        let (values, written) = op.apply(arrays.values);
        arrays.values = values;
        let written = written.expect("every STREAM kernel writes an array");
        let gpu = suite.gpu();
        verify(gpu, &check, &arrays.bufs[written], n, values[written], &format!("stream/{}", op.label()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_family_runs_the_four_stream_kernels_in_order() {
        assert_eq!(OPS.map(|o| o.label()), ["copy", "scale", "add", "triad"]);
        assert!(OPS.iter().all(|o| o.apply(INITIAL).1.is_some()));
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
    fn a_launch_lasts_the_minimum_at_peak_bandwidth() {
        let g = crate::families::test_identity();
        for op in OPS {
            let p = passes(&g, op, array_len(&g)) as f64;
            let at_peak_ns = p * op.bytes(array_len(&g)) as f64 / peak_gbps(&g);
            assert!(at_peak_ns >= launch_size::MIN_LAUNCH_US as f64 * 1e3, "{op:?}: {at_peak_ns} ns");
            assert!(at_peak_ns < 2.0 * launch_size::MIN_LAUNCH_US as f64 * 1e3, "{op:?}: {at_peak_ns} ns");
        }
    }

    #[test]
    fn peak_is_bus_width_times_double_data_rate_clock() {
        let g = crate::families::test_identity();
        // H100 SXM: 5120-bit bus, 2619 MHz -> 3352 GB/s
        assert!((peak_gbps(&g) - 3352.32).abs() < 0.01);
    }
}
