//! The GPU as a dissect [`Backend`]: the kernels of `kernels/dissect.cu` (and the shared-memory
//! chase of `kernels/shared_banks.cu`) over buffers that grow as the plan needs them.

use cudarc::driver::sys::{self, CUfunction_attribute as FA};
use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, LaunchConfig, PushKernelArg};

use super::backend::{Backend, ChaseRequest, TraceRequest};
use super::data::{DeviceInfo, HIST_BIN_CYCLES, HIST_BINS, Histogram, Path, Point};
use crate::device::{CompiledKernels, Gpu};
use crate::error::{CudaResultExt, Error, Result};
use crate::families::{SINGLE_THREAD, full_grid, shared_banks};
use crate::harness::Probe;
use crate::kernels;

/// Elements of the kernels' `__constant__` array.
const CONST_ELEMENTS: u64 = 16384;
/// Per-access records a trace launch keeps in shared memory: with the kernel's static sink word
/// they stay under the 48 KiB a block may use without opting in.
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
    out: CudaSlice<u32>,
    probe: Probe,
    max_tex_elements: u64,
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
        let device = DeviceInfo {
            identity: gpu.identity().clone(),
            free_bytes: free as u64,
            max_trace_steps: TRACE_RECORDS.min(gpu.identity().smem_per_block_optin / 8),
            const_bytes,
        };
        Ok(GpuBackend {
            gpu,
            hist: gpu.alloc_zeros::<u64>(HIST_BINS, "the latency histogram")?,
            out: gpu.alloc_zeros::<u32>(TRACE_RECORDS as usize, "the trace record")?,
            probe: Probe::new(gpu)?,
            device,
            k,
            smem,
            buf: None,
            buf64: None,
            flush: None,
            max_tex_elements,
        })
    }

    /// Provenance of the kernel sources used.
    pub fn provenance(&self) -> Vec<crate::results::KernelProvenance> {
        vec![self.k.provenance.clone(), self.smem.provenance.clone()]
    }

    fn f(&self, name: &str) -> Result<CudaFunction> {
        self.k.function(name)
    }

    /// A u32 buffer of at least `elements`, initialised for a chase at `stride` elements over `n`.
    fn chase_array(&mut self, n: u64, stride: u64) -> Result<()> {
        if self.buf.as_ref().is_none_or(|b| (b.len() as u64) < n) {
            self.buf = None;
            self.buf = Some(self.gpu.alloc_zeros::<u32>(n as usize, "the chase array")?);
        }
        let init = self.f("dissect_init")?;
        let cfg = full_grid(self.gpu.identity(), 256);
        let buf = self.buf.as_ref().expect("allocated above");
        // SAFETY: dissect_init(u32*, u64 n, u64 stride) writes elements k * stride < n.
        unsafe { self.gpu.stream().launch_builder(&init).arg(buf).arg(&n).arg(&stride).launch(cfg) }
            .map(|_| ())
            .cuda_context(|| "launching dissect_init".into())
    }

    fn chase_array64(&mut self, n: u64, stride: u64) -> Result<()> {
        if self.buf64.as_ref().is_none_or(|b| (b.len() as u64) < n) {
            self.buf64 = None;
            self.buf64 = Some(self.gpu.alloc_zeros::<u64>(n as usize, "the TLB chase array")?);
        }
        let init = self.f("dissect_init64")?;
        let cfg = full_grid(self.gpu.identity(), 256);
        let buf = self.buf64.as_ref().expect("allocated above");
        // SAFETY: dissect_init64(u64*, u64 n, u64 stride) writes elements k * stride < n.
        unsafe { self.gpu.stream().launch_builder(&init).arg(buf).arg(&n).arg(&stride).launch(cfg) }
            .map(|_| ())
            .cuda_context(|| "launching dissect_init64".into())
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
        self.gpu.stream().memcpy_htod(&bytes, &mut sym).cuda_context(|| "writing the constant array".into())
    }

    fn texture(&self, n: u64) -> Result<Texture> {
        if n > self.max_tex_elements {
            return Err(Error::Usage(format!(
                "a texture of {n} elements exceeds the device's linear texture width {}",
                self.max_tex_elements
            )));
        }
        let buf = self.buf.as_ref().expect("the chase array exists before its texture");
        let (ptr, _sync) = buf.device_ptr(self.gpu.stream());
        Texture::create(ptr, n * 4)
    }

    fn flush_l2(&mut self) -> Result<()> {
        let n = (4 * self.device.identity.l2_bytes / 4).max(1 << 20);
        if self.flush.is_none() {
            self.flush = Some(self.gpu.alloc_zeros::<u32>(n as usize, "the L2 flush buffer")?);
        }
        let f = self.f("dissect_flush")?;
        let cfg = full_grid(self.gpu.identity(), 256);
        let buf = self.flush.as_ref().expect("allocated above");
        // SAFETY: dissect_flush(const u32*, u64, gb_probe*) reads n elements.
        unsafe { self.gpu.stream().launch_builder(&f).arg(buf).arg(&n).arg(self.probe.buffer()).launch(cfg) }
            .map(|_| ())
            .cuda_context(|| "launching dissect_flush".into())
    }

    fn set_carveout(&self, f: &CudaFunction, percent: Option<u32>) -> Result<()> {
        let v = percent.map(|p| p.min(100) as i32).unwrap_or(-1);
        f.set_attribute(FA::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, v)
            .cuda_context(|| format!("setting the preferred shared-memory carveout to {v}"))
    }

    /// Launches the trace kernel of `path` over the first `n` elements of the chase array,
    /// starting at element `start`.
    fn run_trace(
        &mut self,
        path: Path,
        n: u64,
        start: u32,
        warm_steps: u64,
        steps: u64,
        cold: bool,
    ) -> Result<Vec<u32>> {
        if steps > self.device.max_trace_steps {
            return Err(Error::Usage(format!("a trace of {steps} records exceeds {}", self.device.max_trace_steps)));
        }
        let name = match path {
            Path::Ca => "dissect_trace_ca",
            Path::Cg => "dissect_trace_cg",
            Path::Nc => "dissect_trace_nc",
            Path::Tex => "dissect_trace_tex",
            Path::Const | Path::Tlb => {
                return Err(Error::Usage(format!("no trace kernel for the {} path", path.label())));
            }
        };
        let f = self.f(name)?;
        self.probe.set(self.gpu, 0)?;
        if cold {
            self.flush_l2()?;
        }
        let (warm, steps) = (warm_steps, steps as u32);
        let cfg = one_thread(steps * 4);
        let stream = self.gpu.stream().clone();
        let launched = if path == Path::Tex {
            let tex = self.texture(n)?;
            let handle: u64 = tex.0;
            // SAFETY: dissect_trace_tex(u64, u32, u64, u32, u32* out[steps], gb_probe*).
            let r = unsafe {
                stream
                    .launch_builder(&f)
                    .arg(&handle)
                    .arg(&start)
                    .arg(&warm)
                    .arg(&steps)
                    .arg(&self.out)
                    .arg(self.probe.buffer())
                    .launch(cfg)
            };
            self.gpu.synchronize("a texture trace")?;
            r
        } else {
            let buf = self.buf.as_ref().expect("allocated");
            // SAFETY: dissect_trace_*(const u32*, u32, u64, u32, u32* out[steps], gb_probe*).
            unsafe {
                stream
                    .launch_builder(&f)
                    .arg(buf)
                    .arg(&start)
                    .arg(&warm)
                    .arg(&steps)
                    .arg(&self.out)
                    .arg(self.probe.buffer())
                    .launch(cfg)
            }
        };
        launched.cuda_context(|| format!("launching {name}"))?;
        let mut out = self.gpu.download(&self.out, "the trace record")?;
        out.truncate(steps as usize);
        Ok(out)
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

fn one_thread(smem: u32) -> LaunchConfig {
    LaunchConfig { shared_mem_bytes: smem, ..SINGLE_THREAD }
}

impl Backend for GpuBackend<'_> {
    fn device(&self) -> &DeviceInfo {
        &self.device
    }

    fn timer_overhead(&mut self) -> Result<f64> {
        self.reset()?;
        let f = self.f("dissect_timer")?;
        let (warm, steps) = (256u64, 8192u64);
        // SAFETY: dissect_timer(u64, u64, u64* hist[2048], gb_probe*).
        unsafe {
            self.gpu
                .stream()
                .launch_builder(&f)
                .arg(&warm)
                .arg(&steps)
                .arg(&self.hist)
                .arg(self.probe.buffer())
                .launch(one_thread(0))
        }
        .cuda_context(|| "launching dissect_timer".into())?;
        let (h, _, _) = self.read_hist()?;
        Ok(h.median_between(0.0, f64::INFINITY).unwrap_or(0.0))
    }

    fn chase(&mut self, req: &ChaseRequest) -> Result<Point> {
        let el = req.path.element_bytes();
        let (n, stride) = (req.footprint / el, (req.stride / el).max(1));
        self.reset()?;
        let name = match req.path {
            Path::Ca => "dissect_hist_ca",
            Path::Cg => "dissect_hist_cg",
            Path::Nc => "dissect_hist_nc",
            Path::Tex => "dissect_hist_tex",
            Path::Const => "dissect_hist_const",
            Path::Tlb => "dissect_hist_tlb",
        };
        let f = self.f(name)?;
        self.set_carveout(&f, req.carveout_percent)?;
        let (warm, steps) = (req.warm_steps, req.steps);
        let stream = self.gpu.stream().clone();
        let launched = match req.path {
            Path::Const => {
                if n > CONST_ELEMENTS {
                    return Err(Error::Usage(format!("a constant footprint of {} bytes is too large", req.footprint)));
                }
                self.const_pattern(n, stride, false)?;
                // SAFETY: dissect_hist_const(u64, u64, u64*, gb_probe*); indices < n <= 16384.
                unsafe {
                    stream
                        .launch_builder(&f)
                        .arg(&warm)
                        .arg(&steps)
                        .arg(&self.hist)
                        .arg(self.probe.buffer())
                        .launch(one_thread(0))
                }
            }
            Path::Tlb => {
                self.chase_array64(n, stride)?;
                let buf = self.buf64.as_ref().expect("allocated");
                // SAFETY: dissect_hist_tlb(const u64*, u64, u64, u64*, gb_probe*); indices < n.
                unsafe {
                    stream
                        .launch_builder(&f)
                        .arg(buf)
                        .arg(&warm)
                        .arg(&steps)
                        .arg(&self.hist)
                        .arg(self.probe.buffer())
                        .launch(one_thread(0))
                }
            }
            Path::Tex => {
                self.chase_array(n, stride)?;
                let tex = self.texture(n)?;
                let handle: u64 = tex.0;
                // SAFETY: dissect_hist_tex(u64 tex, u64, u64, u64*, gb_probe*); fetches < n.
                let r = unsafe {
                    stream
                        .launch_builder(&f)
                        .arg(&handle)
                        .arg(&warm)
                        .arg(&steps)
                        .arg(&self.hist)
                        .arg(self.probe.buffer())
                        .launch(one_thread(0))
                };
                self.gpu.synchronize("a texture chase")?;
                drop(tex);
                r
            }
            Path::Ca | Path::Cg | Path::Nc => {
                self.chase_array(n, stride)?;
                let buf = self.buf.as_ref().expect("allocated");
                // SAFETY: dissect_hist_*(const u32*, u64, u64, u64*, gb_probe*); indices < n.
                unsafe {
                    stream
                        .launch_builder(&f)
                        .arg(buf)
                        .arg(&warm)
                        .arg(&steps)
                        .arg(&self.hist)
                        .arg(self.probe.buffer())
                        .launch(one_thread(0))
                }
            }
        };
        launched.cuda_context(|| format!("launching {name}"))?;
        let (hist, cycles, count) = self.read_hist()?;
        self.set_carveout(&f, None)?;
        Ok(Point { x: req.footprint, steps, mean_cycles: cycles as f64 / count.max(1) as f64, hist })
    }

    fn trace(&mut self, req: &TraceRequest) -> Result<Vec<u32>> {
        let (n, stride) = (req.footprint / 4, (req.stride / 4).max(1));
        self.chase_array(n, stride)?;
        self.run_trace(req.path, n, 0, req.warm_steps, req.steps, req.cold)
    }

    fn sequence_trace(&mut self, path: Path, footprint: u64, offsets: &[u64]) -> Result<Vec<u32>> {
        let n = footprint / 4;
        if offsets.is_empty() || offsets.iter().any(|o| o / 4 >= n) {
            return Err(Error::Usage("a probe sequence must lie inside its footprint".into()));
        }
        if self.buf.as_ref().is_none_or(|b| (b.len() as u64) < n) {
            self.buf = None;
            self.buf = Some(self.gpu.alloc_zeros::<u32>(n as usize, "the chase array")?);
        }
        let mut host = vec![0u32; n as usize];
        for (k, o) in offsets.iter().enumerate() {
            host[(o / 4) as usize] = (offsets[(k + 1) % offsets.len()] / 4) as u32;
        }
        let buf = self.buf.as_mut().expect("allocated above");
        let mut view = buf.slice_mut(0..n as usize);
        self.gpu.stream().memcpy_htod(&host, &mut view).cuda_context(|| "writing a probe sequence".into())?;
        self.run_trace(path, n, (offsets[0] / 4) as u32, 0, offsets.len() as u64, false)
    }

    fn smem_stride(&mut self, stride_words: u32) -> Result<f64> {
        let f = self.smem.function("smem_chase")?;
        let words = shared_banks::array_words(self.gpu.identity());
        let smem_bytes = words * 4;
        f.set_attribute(FA::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem_bytes as i32)
            .cuda_context(|| format!("allowing {smem_bytes} bytes of dynamic shared memory"))?;
        let max = self.gpu.alloc_zeros::<u64>(1, "the max-cycles counter")?;
        self.probe.set(self.gpu, 0)?;
        let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: smem_bytes };
        let steps = TABLE_STEPS;
        // SAFETY: smem_chase(u32 stride, u32 n, u32 steps, gb_probe*, u64*); indices < words.
        unsafe {
            self.gpu
                .stream()
                .launch_builder(&f)
                .arg(&stride_words)
                .arg(&words)
                .arg(&steps)
                .arg(self.probe.buffer())
                .arg(&max)
                .launch(cfg)
        }
        .cuda_context(|| "launching smem_chase".into())?;
        let r = self.probe.read(self.gpu)?;
        Ok(r.cycles as f64 / r.count.max(1) as f64)
    }

    fn const_divergent(&mut self, distinct: u32) -> Result<f64> {
        let f = self.f("dissect_const_divergent")?;
        self.const_pattern(CONST_ELEMENTS, 1, true)?;
        self.probe.set(self.gpu, 0)?;
        let spacing: u32 = 16;
        let steps = TABLE_STEPS;
        let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: dissect_const_divergent(u32, u32, u32, gb_probe*); indices < 32 * 16.
        unsafe {
            self.gpu
                .stream()
                .launch_builder(&f)
                .arg(&distinct)
                .arg(&spacing)
                .arg(&steps)
                .arg(self.probe.buffer())
                .launch(cfg)
        }
        .cuda_context(|| "launching dissect_const_divergent".into())?;
        let r = self.probe.read(self.gpu)?;
        Ok(r.cycles as f64 / r.count.max(1) as f64)
    }
}
