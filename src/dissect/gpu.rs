//! The GPU as a dissect [`Backend`]: the kernels of `kernels/dissect.cu` (and the shared-memory
//! chase of `kernels/shared_banks.cu`) over buffers that grow as the plan needs them. Every
//! launch comes from [`super::launch`] and is checked there (arguments against the kernel's
//! parameters, indices against the buffers) before it reaches the driver.

use cudarc::driver::sys::{self, CUfunction_attribute as FA};
use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, LaunchConfig, PushKernelArg};

use super::backend::{Backend, ChaseRequest, TraceRequest};
use super::data::{DeviceInfo, HIST_BIN_CYCLES, HIST_BINS, Histogram, Path, Point};
use super::launch::{self, Arg, Buf, CONST_ELEMENTS, Grid, Launch, Source};
use crate::device::{CompiledKernels, Gpu};
use crate::error::{CudaResultExt, Error, Result};
use crate::families::full_grid;
use crate::harness::Probe;
use crate::kernels;

/// Per-access records a trace launch keeps in shared memory (16-bit each, 24000 bytes).
const TRACE_RECORDS: u64 = 12000;
/// Timed accesses of a shared-memory stride point and of a constant-divergence point.
const TABLE_STEPS: u32 = 1024;

/// The GPU behind the dissect plan.
pub struct GpuBackend<'g> {
    gpu: &'g Gpu,
    device: DeviceInfo,
    k: std::sync::Arc<CompiledKernels>,
    smem: std::sync::Arc<CompiledKernels>,
    buf: Option<CudaSlice<u32>>,
    buf64: Option<CudaSlice<u64>>,
    flush: Option<CudaSlice<u32>>,
    hist: CudaSlice<u64>,
    out: CudaSlice<u16>,
    max_cycles: CudaSlice<u64>,
    claims: CudaSlice<u32>,
    claim_launch: u32,
    probe: Probe,
    clock: Probe,
}

impl<'g> GpuBackend<'g> {
    /// Compiles the kernels and reads the device facts the plan needs.
    pub fn new(gpu: &'g Gpu) -> Result<Self> {
        let k = gpu.kernels(&kernels::DISSECT)?;
        let smem = gpu.kernels(&kernels::SHARED_BANKS)?;
        let ctx = gpu.context();
        let attr = |a: sys::CUdevice_attribute| -> Result<u64> {
            ctx.attribute(a).map(|v| v.max(0) as u64).cuda_context(|| format!("reading device attribute {a:?}"))
        };
        let const_bytes =
            attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY)?.min(CONST_ELEMENTS * 4);
        let max_tex_elements = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH)?;
        let (free, _) = gpu.memory_info()?;
        let optin = gpu.identity().smem_per_block_optin;
        let device = DeviceInfo {
            identity: gpu.identity().clone(),
            free_bytes: free as u64,
            max_trace_steps: TRACE_RECORDS.min(optin / 4 / launch::RECORD_BYTES),
            const_bytes,
            max_texture_elements: Some(max_tex_elements),
        };
        Ok(GpuBackend {
            gpu,
            hist: gpu.alloc_zeros::<u64>(HIST_BINS, "the latency histogram")?,
            out: gpu.alloc_zeros::<u16>(device.max_trace_steps as usize, "the trace record")?,
            max_cycles: gpu.alloc_zeros::<u64>(1, "the max-cycles counter")?,
            claims: gpu
                .alloc_zeros::<u32>(crate::measure::per_sm::slots_for(gpu.identity()) as usize, "the per-SM claims")?,
            claim_launch: 0,
            probe: Probe::new(gpu)?,
            clock: Probe::new(gpu)?,
            device,
            k,
            smem,
            buf: None,
            buf64: None,
            flush: None,
        })
    }

    /// Provenance of the kernel sources used.
    pub fn provenance(&self) -> Vec<crate::results::KernelProvenance> {
        vec![self.k.provenance.clone(), self.smem.provenance.clone()]
    }

    fn function(&self, l: &Launch) -> Result<CudaFunction> {
        match l.source {
            Source::Dissect => self.k.function(l.kernel),
            Source::SharedBanks => self.smem.function(l.kernel),
        }
    }

    fn capacity(&self, b: Buf) -> u64 {
        let len = |n: Option<usize>| n.unwrap_or(0) as u64;
        match b {
            Buf::Chase => len(self.buf.as_ref().map(|b| b.len())),
            Buf::Chase64 => len(self.buf64.as_ref().map(|b| b.len())),
            Buf::Flush => len(self.flush.as_ref().map(|b| b.len())),
            Buf::Hist => self.hist.len() as u64,
            Buf::Trace => self.out.len() as u64,
            Buf::MaxCycles => self.max_cycles.len() as u64,
            Buf::Claims => self.claims.len() as u64,
            Buf::Probe | Buf::Clock => 1,
        }
    }

    /// Grows the chase arrays and the flush buffer to what `l` needs.
    fn ensure(&mut self, l: &Launch) -> Result<()> {
        for &(b, n) in &l.needs {
            if self.capacity(b) >= n {
                continue;
            }
            match b {
                Buf::Chase => {
                    self.buf = None;
                    self.buf = Some(self.gpu.alloc_zeros::<u32>(n as usize, "the chase array")?);
                }
                Buf::Chase64 => {
                    self.buf64 = None;
                    self.buf64 = Some(self.gpu.alloc_zeros::<u64>(n as usize, "the TLB chase array")?);
                }
                Buf::Flush => self.flush = Some(self.gpu.alloc_zeros::<u32>(n as usize, "the L2 flush buffer")?),
                _ => {}
            }
        }
        Ok(())
    }

    /// Launches `l` after checking it against the kernel's parameters and the buffers.
    fn run(&mut self, l: &Launch) -> Result<()> {
        self.ensure(l)?;
        l.check_signature()?;
        l.check_buffers(|b| self.capacity(b))?;
        let f = self.function(l)?;
        let carveout = l.carveout.map(|p| p.min(100) as i32).unwrap_or(-1);
        f.set_attribute(FA::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, carveout)
            .cuda_context(|| format!("setting the preferred shared-memory carveout of {} to {carveout}", l.kernel))?;
        if l.dynamic_smem > 0 {
            f.set_attribute(FA::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, l.dynamic_smem as i32)
                .cuda_context(|| format!("allowing {} B of dynamic shared memory to {}", l.dynamic_smem, l.kernel))?;
        }
        let grid_dim = match l.grid {
            Grid::One => (1, 1, 1),
            Grid::Full => full_grid(self.gpu.identity(), l.block).grid_dim,
            Grid::Claims => crate::placement::claim_grid(self.gpu.identity()).grid_dim,
        };
        let cfg = LaunchConfig { grid_dim, block_dim: (l.block, 1, 1), shared_mem_bytes: l.dynamic_smem };
        let u32s: Vec<u32> = l.args.iter().filter_map(|a| if let Arg::U32(v) = a { Some(*v) } else { None }).collect();
        let u64s: Vec<u64> = l.args.iter().filter_map(|a| if let Arg::U64(v) = a { Some(*v) } else { None }).collect();
        let (mut i32s, mut i64s) = (u32s.iter(), u64s.iter());
        let stream = self.gpu.stream().clone();
        let mut b = stream.launch_builder(&f);
        let missing =
            |what: &str| Error::Launch { kernel: l.kernel.into(), reason: format!("{what} is not allocated") };
        for a in &l.args {
            match a {
                Arg::U32(_) => b.arg(i32s.next().expect("counted above")),
                Arg::U64(_) => b.arg(i64s.next().expect("counted above")),
                Arg::Buf(Buf::Chase) => b.arg(self.buf.as_ref().ok_or_else(|| missing("the chase array"))?),
                Arg::Buf(Buf::Chase64) => b.arg(self.buf64.as_ref().ok_or_else(|| missing("the TLB chase array"))?),
                Arg::Buf(Buf::Flush) => b.arg(self.flush.as_ref().ok_or_else(|| missing("the flush buffer"))?),
                Arg::Buf(Buf::Hist) => b.arg(&self.hist),
                Arg::Buf(Buf::Trace) => b.arg(&self.out),
                Arg::Buf(Buf::MaxCycles) => b.arg(&self.max_cycles),
                Arg::Buf(Buf::Claims) => b.arg(&self.claims),
                Arg::Buf(Buf::Probe) => b.arg(self.probe.buffer()),
                Arg::Buf(Buf::Clock) => b.arg(self.clock.buffer()),
            };
        }
        // SAFETY: the arguments match the kernel's parameter list (checked above against the
        // source), and every buffer holds the elements the kernel indexes (checked above).
        unsafe { b.launch(cfg) }.map(|_| ()).cuda_context(|| format!("launching {}", l.kernel))
    }

    fn const_pattern(&mut self, n: u64, stride: u64, identity: bool) -> Result<()> {
        let mut host = vec![0u32; CONST_ELEMENTS as usize];
        for (i, v) in host.iter_mut().enumerate().take(n as usize) {
            *v = if identity { i as u32 } else { ((i as u64 + stride) % n) as u32 };
        }
        let bytes: Vec<u8> = host.iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut sym = self
            .k
            .module()
            .get_global("dissect_const", self.gpu.stream())
            .cuda_context(|| "finding the constant array".into())?;
        if (sym.len() as u64) < bytes.len() as u64 {
            return Err(Error::Launch {
                kernel: "dissect_hist_const".into(),
                reason: format!("the constant array holds {} B, not {}", sym.len(), bytes.len()),
            });
        }
        self.gpu.stream().memcpy_htod(&bytes, &mut sym).cuda_context(|| "writing the constant array".into())
    }

    /// A texture object over the first `n` elements of the chase array.
    fn texture(&self, n: u64) -> Result<Texture> {
        let buf = self.buf.as_ref().filter(|b| b.len() as u64 >= n).ok_or_else(|| Error::Launch {
            kernel: "a texture chase".into(),
            reason: format!("the chase array holds fewer than {n} elements"),
        })?;
        let (ptr, _sync) = buf.device_ptr(self.gpu.stream());
        Texture::create(ptr, n * 4)
    }

    fn read_hist(&mut self) -> Result<(Histogram, u64, u64)> {
        let dense = self.gpu.download(&self.hist, "the latency histogram")?;
        let r = self.probe.read(self.gpu)?;
        Ok((Histogram::from_dense(HIST_BIN_CYCLES, &dense), r.cycles, r.count))
    }

    fn reset(&mut self) -> Result<()> {
        self.gpu.zero(&mut self.hist, "the latency histogram")?;
        self.probe.set(self.gpu, 0)
    }

    /// Runs a trace launch (with a texture over the chase array where it reads one) and returns
    /// its records.
    fn run_trace(&mut self, plan: launch::TraceLaunches, rebuild: impl Fn(u64) -> Result<Launch>) -> Result<Vec<u32>> {
        self.probe.set(self.gpu, 0)?;
        for l in plan.init.iter().chain(plan.flush.iter()) {
            self.run(l)?;
        }
        let steps = plan.trace.needs.iter().find(|(b, _)| *b == Buf::Trace).map(|(_, n)| *n).unwrap_or(0) as usize;
        match plan.texture_elements {
            Some(n) => {
                self.ensure(&plan.trace)?;
                let tex = self.texture(n)?;
                self.run(&rebuild(tex.0)?)?;
                self.gpu.synchronize("a texture trace")?;
            }
            None => self.run(&plan.trace)?,
        }
        let mut out = self.gpu.download(&self.out, "the trace record")?;
        out.truncate(steps);
        Ok(out.into_iter().map(u32::from).collect())
    }
}

/// A texture object over linear memory of 32-bit unsigned integers, destroyed on drop.
struct Texture(sys::CUtexObject);

impl Texture {
    fn create(ptr: sys::CUdeviceptr, bytes: u64) -> Result<Self> {
        // SAFETY: plain-old-data descriptors, zero-initialised then filled as the driver API asks.
        unsafe {
            let mut res: sys::CUDA_RESOURCE_DESC = std::mem::zeroed();
            res.resType = sys::CUresourcetype::CU_RESOURCE_TYPE_LINEAR;
            res.res.linear.devPtr = ptr;
            res.res.linear.format = sys::CUarray_format::CU_AD_FORMAT_UNSIGNED_INT32;
            res.res.linear.numChannels = 1;
            res.res.linear.sizeInBytes = bytes as usize;
            let mut tex: sys::CUDA_TEXTURE_DESC = std::mem::zeroed();
            tex.addressMode = [sys::CUaddress_mode::CU_TR_ADDRESS_MODE_CLAMP; 3];
            tex.filterMode = sys::CUfilter_mode::CU_TR_FILTER_MODE_POINT;
            tex.flags = sys::CU_TRSF_READ_AS_INTEGER;
            let mut obj: sys::CUtexObject = 0;
            sys::cuTexObjectCreate(&mut obj, &res, &tex, std::ptr::null())
                .result()
                .cuda_context(|| "creating a texture object".into())?;
            Ok(Texture(obj))
        }
    }
}

impl Drop for Texture {
    fn drop(&mut self) {
        // SAFETY: created by cuTexObjectCreate, destroyed once.
        let _ = unsafe { sys::cuTexObjectDestroy(self.0) };
    }
}

impl Backend for GpuBackend<'_> {
    fn device(&self) -> &DeviceInfo {
        &self.device
    }

    fn timer_overhead(&mut self) -> Result<f64> {
        self.reset()?;
        self.run(&launch::timer(256, 8192))?;
        let (h, _, _) = self.read_hist()?;
        Ok(h.median_between(0.0, f64::INFINITY).unwrap_or(0.0))
    }

    fn chase(&mut self, req: &ChaseRequest) -> Result<Point> {
        let plan = launch::chase(&self.device, req, 0)?;
        self.reset()?;
        if let Some(init) = &plan.init {
            self.run(init)?;
        }
        if let Some((n, stride)) = plan.const_words {
            self.const_pattern(n, stride, false)?;
        }
        match plan.texture_elements {
            Some(n) => {
                self.ensure(&plan.hist)?;
                let tex = self.texture(n)?;
                self.run(&launch::chase(&self.device, req, tex.0)?.hist)?;
                self.gpu.synchronize("a texture chase")?;
            }
            None => self.run(&plan.hist)?,
        }
        let (hist, cycles, count) = self.read_hist()?;
        Ok(Point { x: req.footprint, steps: req.steps, mean_cycles: cycles as f64 / count.max(1) as f64, hist })
    }

    fn chase_on_sm(&mut self, req: &ChaseRequest, sm: u32, start: u64) -> Result<Option<Point>> {
        self.claim_launch += 1;
        let cold = req.warm_steps == 0;
        let on = launch::OnSm { sm, start, slots: self.claims.len() as u32, launch: self.claim_launch, cold };
        let plan = launch::chase_on_sm(&self.device, req, on)?;
        self.reset()?;
        for l in plan.init.iter().chain(plan.flush.iter()) {
            self.run(l)?;
        }
        self.run(&plan.hist)?;
        let (hist, cycles, count) = self.read_hist()?;
        if count == 0 {
            return Ok(None);
        }
        Ok(Some(Point { x: req.footprint, steps: req.steps, mean_cycles: cycles as f64 / count as f64, hist }))
    }

    fn trace(&mut self, req: &TraceRequest) -> Result<Vec<u32>> {
        let plan = launch::trace(&self.device, req, 0)?;
        let device = self.device.clone();
        self.run_trace(plan, |tex| Ok(launch::trace(&device, req, tex)?.trace))
    }

    fn sequence_trace(
        &mut self,
        path: Path,
        footprint: u64,
        offsets: &[u64],
        carveout: Option<u32>,
    ) -> Result<Vec<u32>> {
        let plan = launch::sequence(&self.device, path, footprint, offsets, carveout, 0)?;
        let n = footprint / 4;
        self.ensure(&plan.trace)?;
        let mut host = vec![0u32; n as usize];
        for (k, o) in offsets.iter().enumerate() {
            host[(o / 4) as usize] = (offsets[(k + 1) % offsets.len()] / 4) as u32;
        }
        let buf = self.buf.as_mut().expect("allocated by ensure");
        let mut view = buf.slice_mut(0..n as usize);
        self.gpu.stream().memcpy_htod(&host, &mut view).cuda_context(|| "writing a probe sequence".into())?;
        let device = self.device.clone();
        self.run_trace(plan, |tex| Ok(launch::sequence(&device, path, footprint, offsets, carveout, tex)?.trace))
    }

    fn smem_stride(&mut self, stride_words: u32) -> Result<f64> {
        let l = launch::smem_chase(&self.device, stride_words, TABLE_STEPS)?;
        self.probe.set(self.gpu, 0)?;
        self.clock.set(self.gpu, 0)?;
        self.gpu.zero(&mut self.max_cycles, "the max-cycles counter")?;
        self.run(&l)?;
        let r = self.probe.read(self.gpu)?;
        Ok(r.cycles as f64 / r.count.max(1) as f64)
    }

    fn const_divergent(&mut self, distinct: u32) -> Result<f64> {
        let l = launch::const_divergent(&self.device, distinct, TABLE_STEPS)?;
        self.const_pattern(CONST_ELEMENTS, 1, true)?;
        self.probe.set(self.gpu, 0)?;
        self.run(&l)?;
        let r = self.probe.read(self.gpu)?;
        Ok(r.cycles as f64 / r.count.max(1) as f64)
    }
}
