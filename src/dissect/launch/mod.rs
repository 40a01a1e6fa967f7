//! Every kernel launch of the dissect backend, described as data and checked on the host before
//! it reaches the GPU: its arguments against the kernel's parameter list (read from the CUDA
//! source text), and the elements it will index against what its buffers, shared memory and
//! launch limits hold. The GPU backend launches only what these builders return; the simulator
//! builds and checks the same launches for every request it answers, so that every simulated
//! run (and so every CI test of the plan) checks every launch a GPU run would make.

mod bounds;
mod on_sm;
mod signature;

use bounds::probe_needs;
pub use bounds::{check, fixed_capacity};
pub use on_sm::{OnSm, chase_on_sm};
pub use signature::{parse_signatures, signature};

use std::collections::BTreeMap;
use std::sync::OnceLock;

use super::backend::{ChaseRequest, TraceRequest};
use super::data::{DeviceInfo, HIST_BINS, Path};
use crate::error::{Error, Result};
use crate::kernels;

/// Elements of the `__constant__` array of `kernels/dissect.cu`.
pub const CONST_ELEMENTS: u64 = 16384;
/// Largest number of timed accesses of one histogram launch (16-bit bins).
pub const MAX_HIST_STEPS: u64 = u16::MAX as u64;
/// Bytes of one trace record (16-bit cycle counts).
pub const RECORD_BYTES: u64 = 2;
/// Element unit of the TLB chase's scattered offsets: one 128-byte span of 8-byte elements.
pub const SCATTER_ELEMENTS: u64 = 16;
/// Threads per block of the grid-wide kernels (initialisation, flush).
pub const GRID_THREADS: u32 = 256;
/// Spacing, in 4-byte words, between the constant words one warp reads when divergent.
pub const CONST_SPACING: u32 = 16;

/// One kernel parameter as the ABI sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    /// A 32-bit integer.
    U32,
    /// A 64-bit integer (also a texture object).
    U64,
    /// A device pointer.
    Ptr,
}

/// The device buffers the backend owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Buf {
    /// The 32-bit chase array.
    Chase,
    /// The 64-bit chase array of the TLB sweeps.
    Chase64,
    /// The latency histogram (u64 bins).
    Hist,
    /// The trace record copied out of shared memory (u16).
    Trace,
    /// A clock probe (`gb_probe`).
    Probe,
    /// The clock probe of the shared-memory kernel's thread 0.
    Clock,
    /// The buffer read to flush the L2 (u32).
    Flush,
    /// The shared-memory kernel's maximum-cycles word (u64).
    MaxCycles,
    /// The per-SM claims of the one-SM chase (u32, one per SM slot).
    Claims,
}

/// One argument as the host passes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// A 32-bit integer.
    U32(u32),
    /// A 64-bit integer or texture object.
    U64(u64),
    /// A device buffer.
    Buf(Buf),
}

impl Arg {
    fn param(self) -> Param {
        match self {
            Arg::U32(_) => Param::U32,
            Arg::U64(_) => Param::U64,
            Arg::Buf(_) => Param::Ptr,
        }
    }
}

/// The CUDA source a kernel lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    /// `kernels/dissect.cu`.
    Dissect,
    /// `kernels/shared_banks.cu`.
    SharedBanks,
}

impl Source {
    /// The embedded source.
    pub fn kernels(self) -> &'static kernels::KernelSource {
        match self {
            Source::Dissect => &kernels::DISSECT,
            Source::SharedBanks => &kernels::SHARED_BANKS,
        }
    }
}

/// How many blocks a launch runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grid {
    /// One block.
    One,
    /// Enough blocks to fill every SM.
    Full,
    /// One-thread blocks, several per SM, small enough to be resident at once, so that every
    /// SM receives some (`crate::placement::claim_grid`).
    Claims,
}

/// One kernel launch.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    /// Where the kernel is defined.
    pub source: Source,
    /// Kernel name.
    pub kernel: &'static str,
    /// Arguments, in order.
    pub args: Vec<Arg>,
    /// Blocks.
    pub grid: Grid,
    /// Threads per block.
    pub block: u32,
    /// Dynamic shared memory, bytes.
    pub dynamic_smem: u32,
    /// Preferred shared-memory carveout in percent; `None` leaves the driver's choice.
    pub carveout: Option<u32>,
    /// Elements each buffer must hold for every index the kernel uses to lie inside it.
    pub needs: Vec<(Buf, u64)>,
}

/// The launches of one histogram chase.
#[derive(Debug, Clone, PartialEq)]
pub struct ChaseLaunches {
    /// Writes the chase (none for constant memory, whose pattern is copied from the host).
    pub init: Option<Launch>,
    /// Constant-memory words the host writes first (`a[i] = (i + stride) % n` over `n`).
    pub const_words: Option<(u64, u64)>,
    /// Texture elements the chase reads through a texture object over the chase array.
    pub texture_elements: Option<u64>,
    /// Evicts the L2 after the initialisation (a cold one-SM chase).
    pub flush: Option<Launch>,
    /// The timed chase.
    pub hist: Launch,
}

/// The launches of one per-access trace.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceLaunches {
    /// Writes the chase (none for a host-written probe sequence).
    pub init: Option<Launch>,
    /// Evicts the L2 before the trace.
    pub flush: Option<Launch>,
    /// Texture elements the trace reads through a texture object.
    pub texture_elements: Option<u64>,
    /// The recorded chase.
    pub trace: Launch,
}

fn refuse(kernel: &str, reason: impl Into<String>) -> Error {
    Error::Launch { kernel: kernel.into(), reason: reason.into() }
}

/// The element offset of visit `k` of a TLB chase inside its stride block (all in elements):
/// the host's copy of the kernels' `dissect_scatter`.
pub fn scatter(k: u64, stride: u64, unit: u64) -> u64 {
    if k == 0 || unit == 0 || stride < 2 * unit {
        return 0;
    }
    ((k.wrapping_mul(2654435761) & 0xFFFF_FFFF) % (stride / unit)) * unit
}

/// `a[i] = (i + stride) % n` over the visited elements.
pub fn init(path: Path, n: u64, stride: u64) -> Launch {
    let (kernel, buf, mut args) = if path == Path::Tlb {
        ("dissect_init64", Buf::Chase64, vec![Arg::Buf(Buf::Chase64), Arg::U64(n), Arg::U64(stride)])
    } else {
        ("dissect_init", Buf::Chase, vec![Arg::Buf(Buf::Chase), Arg::U64(n), Arg::U64(stride)])
    };
    if path == Path::Tlb {
        args.push(Arg::U64(SCATTER_ELEMENTS));
    }
    Launch {
        grid: Grid::Full,
        block: GRID_THREADS,
        needs: vec![(buf, n)],
        ..Launch::new(Source::Dissect, kernel, args)
    }
}

/// Reads `n` words of the flush buffer through the L2.
pub fn flush(n: u64) -> Launch {
    Launch {
        grid: Grid::Full,
        block: GRID_THREADS,
        needs: vec![(Buf::Flush, n), probe_needs()],
        ..Launch::new(Source::Dissect, "dissect_flush", vec![Arg::Buf(Buf::Flush), Arg::U64(n), Arg::Buf(Buf::Probe)])
    }
}

/// The timing bracket around no load.
pub fn timer(warm: u64, steps: u64) -> Launch {
    Launch {
        needs: vec![(Buf::Hist, HIST_BINS as u64), probe_needs()],
        ..Launch::new(
            Source::Dissect,
            "dissect_timer",
            vec![Arg::U64(warm), Arg::U64(steps), Arg::Buf(Buf::Hist), Arg::Buf(Buf::Probe)],
        )
    }
}

fn hist_kernel(path: Path) -> &'static str {
    match path {
        Path::Ca => "dissect_hist_ca",
        Path::Cg => "dissect_hist_cg",
        Path::Nc => "dissect_hist_nc",
        Path::Tex => "dissect_hist_tex",
        Path::Const => "dissect_hist_const",
        Path::Tlb => "dissect_hist_tlb",
    }
}

/// The launches of a histogram chase; `tex` is the texture object of a texture chase.
pub fn chase(device: &DeviceInfo, req: &ChaseRequest, tex: u64) -> Result<ChaseLaunches> {
    let kernel = hist_kernel(req.path);
    let el = req.path.element_bytes();
    if req.stride == 0 || !req.stride.is_multiple_of(el) || req.footprint < req.stride {
        return Err(refuse(kernel, format!("stride {} B over {} B", req.stride, req.footprint)));
    }
    if !req.footprint.is_multiple_of(req.stride) {
        return Err(refuse(
            kernel,
            format!("footprint {} B is not a multiple of the stride {} B", req.footprint, req.stride),
        ));
    }
    if req.steps == 0 || req.steps > MAX_HIST_STEPS {
        return Err(refuse(kernel, format!("{} timed accesses (1 to {MAX_HIST_STEPS})", req.steps)));
    }
    let (n, stride) = (req.footprint / el, req.stride / el);
    if req.path != Path::Tlb && n > u32::MAX as u64 {
        return Err(refuse(kernel, format!("{n} elements overflow the kernel's 32-bit index")));
    }
    let head = [Arg::U64(req.warm_steps), Arg::U64(req.steps), Arg::Buf(Buf::Hist), Arg::Buf(Buf::Probe)];
    let mut needs = vec![(Buf::Hist, HIST_BINS as u64), probe_needs()];
    let (init, const_words, texture_elements, args) = match req.path {
        Path::Const => {
            let limit = CONST_ELEMENTS.min(device.const_bytes / 4);
            if n > limit {
                return Err(refuse(kernel, format!("{n} constant words exceed the {limit} the kernel may read")));
            }
            (None, Some((n, stride)), None, head.to_vec())
        }
        Path::Tex => {
            if let Some(max) = device.max_texture_elements
                && n > max
            {
                return Err(refuse(kernel, format!("a texture of {n} elements exceeds the device's {max}")));
            }
            needs.push((Buf::Chase, n));
            let mut args = vec![Arg::U64(tex)];
            args.extend(head);
            (Some(init(req.path, n, stride)), None, Some(n), args)
        }
        Path::Ca | Path::Cg | Path::Nc | Path::Tlb => {
            let buf = if req.path == Path::Tlb { Buf::Chase64 } else { Buf::Chase };
            needs.push((buf, n));
            let mut args = vec![Arg::Buf(buf)];
            args.extend(head);
            (Some(init(req.path, n, stride)), None, None, args)
        }
    };
    let hist = Launch { needs, carveout: req.carveout_percent, ..Launch::new(Source::Dissect, kernel, args) };
    let out = ChaseLaunches { init, const_words, texture_elements, flush: None, hist };
    for l in out.init.iter().chain([&out.hist]) {
        check(device, l)?;
    }
    Ok(out)
}

fn trace_kernel(path: Path) -> Result<&'static str> {
    match path {
        Path::Ca => Ok("dissect_trace_ca"),
        Path::Cg => Ok("dissect_trace_cg"),
        Path::Nc => Ok("dissect_trace_nc"),
        Path::Tex => Ok("dissect_trace_tex"),
        Path::Const | Path::Tlb => {
            Err(refuse("dissect_trace", format!("no trace kernel for the {} path", path.label())))
        }
    }
}

/// Shared memory every trace launch reserves for its record, whatever its length: traces of one
/// run then see one L1 size.
pub fn trace_smem(device: &DeviceInfo) -> u32 {
    (device.max_trace_steps * RECORD_BYTES) as u32
}

/// Flushes the L2: a buffer four times its size, at least 4 MiB.
pub fn flush_words(device: &DeviceInfo) -> u64 {
    device.identity.l2_bytes.max(1 << 20)
}

#[allow(clippy::too_many_arguments)]
fn trace_launch(
    device: &DeviceInfo,
    path: Path,
    n: u64,
    start: u64,
    warm: u64,
    steps: u64,
    carveout: Option<u32>,
    tex: u64,
) -> Result<Launch> {
    let kernel = trace_kernel(path)?;
    if steps == 0 || steps > device.max_trace_steps {
        return Err(refuse(kernel, format!("{steps} records (1 to {})", device.max_trace_steps)));
    }
    if start >= n || n > u32::MAX as u64 {
        return Err(refuse(kernel, format!("start {start} of {n} elements")));
    }
    let tail =
        [Arg::U32(start as u32), Arg::U64(warm), Arg::U32(steps as u32), Arg::Buf(Buf::Trace), Arg::Buf(Buf::Probe)];
    let mut needs = vec![(Buf::Trace, steps), probe_needs()];
    let mut args = Vec::new();
    if path == Path::Tex {
        if let Some(max) = device.max_texture_elements
            && n > max
        {
            return Err(refuse(kernel, format!("a texture of {n} elements exceeds the device's {max}")));
        }
        args.push(Arg::U64(tex));
    } else {
        args.push(Arg::Buf(Buf::Chase));
    }
    needs.push((Buf::Chase, n));
    args.extend(tail);
    let l = Launch { needs, carveout, dynamic_smem: trace_smem(device), ..Launch::new(Source::Dissect, kernel, args) };
    check(device, &l)?;
    Ok(l)
}

/// The launches of a strided per-access trace.
pub fn trace(device: &DeviceInfo, req: &TraceRequest, tex: u64) -> Result<TraceLaunches> {
    let kernel = trace_kernel(req.path)?;
    if req.stride < 4 || !req.stride.is_multiple_of(4) || !req.footprint.is_multiple_of(req.stride) {
        return Err(refuse(kernel, format!("stride {} B over {} B", req.stride, req.footprint)));
    }
    let (n, stride) = (req.footprint / 4, req.stride / 4);
    let init = init(req.path, n, stride);
    check(device, &init)?;
    let flush = req.cold.then(|| flush(flush_words(device)));
    if let Some(f) = &flush {
        check(device, f)?;
    }
    let trace = trace_launch(device, req.path, n, 0, req.warm_steps, req.steps, req.carveout_percent, tex)?;
    Ok(TraceLaunches { init: Some(init), flush, texture_elements: (req.path == Path::Tex).then_some(n), trace })
}

/// The launch of a probe sequence (host-written chain over `offsets`, in bytes).
pub fn sequence(
    device: &DeviceInfo,
    path: Path,
    footprint: u64,
    offsets: &[u64],
    carveout: Option<u32>,
    tex: u64,
) -> Result<TraceLaunches> {
    let kernel = trace_kernel(path)?;
    let n = footprint / 4;
    if offsets.is_empty() || offsets.iter().any(|o| o / 4 >= n || !o.is_multiple_of(4)) {
        return Err(refuse(kernel, "a probe sequence must lie inside its footprint, word-aligned"));
    }
    let trace = trace_launch(device, path, n, offsets[0] / 4, 0, offsets.len() as u64, carveout, tex)?;
    Ok(TraceLaunches { init: None, flush: None, texture_elements: (path == Path::Tex).then_some(n), trace })
}

/// Words of the shared-memory chase array: the largest power of two that fits the block's
/// opt-in shared memory, up to 32768.
pub fn smem_words(device: &DeviceInfo) -> u32 {
    crate::families::shared_banks::array_words(&device.identity)
}

/// One warp chasing through shared memory at `stride_words`.
pub fn smem_chase(device: &DeviceInfo, stride_words: u32, steps: u32) -> Result<Launch> {
    let words = smem_words(device);
    if stride_words == 0 || steps == 0 || !steps.is_multiple_of(8) {
        return Err(refuse("smem_chase", format!("stride {stride_words}, {steps} steps (a multiple of 8)")));
    }
    let l = Launch {
        block: 32,
        dynamic_smem: words * 4,
        needs: vec![probe_needs(), (Buf::MaxCycles, 1), (Buf::Clock, 1)],
        ..Launch::new(
            Source::SharedBanks,
            "smem_chase",
            vec![
                Arg::U32(stride_words),
                Arg::U32(words),
                Arg::U32(steps),
                Arg::Buf(Buf::Probe),
                Arg::Buf(Buf::MaxCycles),
                Arg::Buf(Buf::Clock),
            ],
        )
    };
    check(device, &l)?;
    Ok(l)
}

/// One warp reading `distinct` different constant words per access.
pub fn const_divergent(device: &DeviceInfo, distinct: u32, steps: u32) -> Result<Launch> {
    let kernel = "dissect_const_divergent";
    let words = CONST_ELEMENTS.min(device.const_bytes / 4);
    if distinct == 0 || distinct > 32 || (distinct as u64 - 1) * CONST_SPACING as u64 >= words {
        return Err(refuse(kernel, format!("{distinct} distinct words {CONST_SPACING} apart in {words}")));
    }
    if steps == 0 || !steps.is_multiple_of(4) {
        return Err(refuse(kernel, format!("{steps} steps (a multiple of 4)")));
    }
    let l = Launch {
        block: 32,
        needs: vec![probe_needs()],
        ..Launch::new(
            Source::Dissect,
            kernel,
            vec![Arg::U32(distinct), Arg::U32(CONST_SPACING), Arg::U32(steps), Arg::Buf(Buf::Probe)],
        )
    };
    check(device, &l)?;
    Ok(l)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dissect::sim::SimConfig;

    fn device() -> DeviceInfo {
        let cfg = SimConfig::small("launch");
        DeviceInfo {
            identity: cfg.identity,
            free_bytes: cfg.free_bytes,
            max_trace_steps: cfg.max_trace_steps,
            const_bytes: cfg.const_bytes,
            max_texture_elements: Some(1 << 27),
        }
    }

    #[test]
    fn every_kernel_signature_is_read_from_the_sources() {
        let d = parse_signatures(kernels::DISSECT.text).unwrap();
        assert_eq!(d["dissect_hist_ca"], vec![Param::Ptr, Param::U64, Param::U64, Param::Ptr, Param::Ptr]);
        assert_eq!(
            d["dissect_trace_tex"],
            vec![Param::U64, Param::U32, Param::U64, Param::U32, Param::Ptr, Param::Ptr]
        );
        assert_eq!(d["dissect_init64"].len(), 4);
        let s = parse_signatures(kernels::SHARED_BANKS.text).unwrap();
        assert_eq!(s["smem_chase"].len(), 6, "stride, n, steps, probe, max cycles, clock probe");
        assert!(parse_signatures("__global__ void k(float x) {}").is_err());
    }

    #[test]
    fn the_source_constants_match_the_host() {
        let text = kernels::DISSECT.text;
        assert!(text.contains(&format!("__constant__ u32 dissect_const[{CONST_ELEMENTS}];")));
        assert!(text.contains(&format!("#define DISSECT_BINS {HIST_BINS}")));
        assert!(text.contains("__shared__ unsigned short h[DISSECT_BINS]"), "16-bit bins: MAX_HIST_STEPS");
        assert!(text.contains("extern __shared__ unsigned short rec[]"), "16-bit records: RECORD_BYTES");
    }

    #[test]
    fn a_missing_argument_is_refused_before_launch() {
        // The shared-memory chase once went out without its clock probe: the kernel then wrote
        // through whatever the missing parameter held.
        let mut l = smem_chase(&device(), 2, 1024).unwrap();
        l.args.pop();
        let e = l.check_signature().unwrap_err();
        assert!(e.to_string().contains("5 arguments") && e.to_string().contains("6 parameters"), "{e}");
        assert_eq!(e.exit_code(), crate::error::exit::BENCH_FAILURE);
    }

    #[test]
    fn every_builder_matches_its_kernel() {
        let dev = device();
        let mut launches = vec![timer(16, 64), flush(1 << 20), const_divergent(&dev, 32, 1024).unwrap()];
        launches.push(smem_chase(&dev, 33, 1024).unwrap());
        for path in [Path::Ca, Path::Cg, Path::Nc, Path::Tex, Path::Const, Path::Tlb] {
            let req = ChaseRequest {
                path,
                footprint: 4096,
                stride: 64,
                warm_steps: 64,
                steps: 64,
                carveout_percent: Some(0),
            };
            let c = chase(&dev, &req, 7).unwrap();
            launches.extend(c.init);
            launches.push(c.hist);
            if path != Path::Const && path != Path::Tlb {
                let t = TraceRequest {
                    path,
                    footprint: 4096,
                    stride: 64,
                    warm_steps: 64,
                    steps: 64,
                    cold: true,
                    carveout_percent: Some(0),
                };
                let t = trace(&dev, &t, 7).unwrap();
                launches.extend(t.init.into_iter().chain(t.flush).chain([t.trace]));
                launches.push(sequence(&dev, path, 4096, &[0, 128, 256], Some(0), 7).unwrap().trace);
            }
        }
        for l in &launches {
            l.check_signature().unwrap_or_else(|e| panic!("{e}"));
            check(&dev, l).unwrap();
        }
    }

    #[test]
    fn out_of_range_requests_are_refused() {
        let dev = device();
        let req = ChaseRequest {
            path: Path::Const,
            footprint: dev.const_bytes * 2,
            stride: 64,
            warm_steps: 0,
            steps: 64,
            carveout_percent: None,
        };
        assert!(chase(&dev, &req, 0).is_err(), "beyond the constant array");
        assert!(chase(&dev, &ChaseRequest { footprint: 4096 + 32, path: Path::Ca, ..req }, 0).is_err(), "ragged");
        assert!(chase(&dev, &ChaseRequest { steps: 1 << 16, footprint: 4096, path: Path::Ca, ..req }, 0).is_err());
        let t = TraceRequest {
            path: Path::Ca,
            footprint: 4096,
            stride: 32,
            warm_steps: 0,
            steps: dev.max_trace_steps + 1,
            cold: false,
            carveout_percent: None,
        };
        assert!(trace(&dev, &t, 0).is_err(), "more records than the buffer holds");
        assert!(sequence(&dev, Path::Ca, 4096, &[0, 4096], None, 0).is_err(), "outside the footprint");
        assert!(const_divergent(&dev, 33, 1024).is_err());
        assert!(trace(&dev, &TraceRequest { path: Path::Tlb, steps: 8, ..t }, 0).is_err());
    }

    #[test]
    fn scatter_stays_inside_the_stride_block() {
        for stride in [8u64, 16, 32, 8192, 1 << 22] {
            for k in 0..5000u64 {
                let o = scatter(k, stride, SCATTER_ELEMENTS);
                assert!(o < stride && o.is_multiple_of(SCATTER_ELEMENTS), "{k} {stride} {o}");
            }
        }
        assert_eq!(scatter(0, 1 << 22, SCATTER_ELEMENTS), 0, "the chase starts at element 0");
        let spread: std::collections::BTreeSet<u64> = (1..200).map(|k| scatter(k, 8192, 16)).collect();
        assert!(spread.len() > 100, "{} distinct offsets", spread.len());
    }
}
