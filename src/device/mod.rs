//! The GPU: opening it, its identity, compiled kernels, memory and timing.
//!
//! Everything that touches the CUDA driver goes through here, so that a missing library or an
//! absent GPU becomes an [`Error`] with a documented exit code rather than a panic.

mod compile;
mod identity;
mod symbols;
mod timer;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DeviceRepr, ValidAsZeroBits};

pub use compile::{Compiled, CompiledKernels, compile, nvrtc_version};
pub use identity::driver_api_version;
pub use symbols::{DRIVER_SYMBOLS, NVRTC_SYMBOLS, catch_missing_symbols, library_failed};
pub use timer::EventTimer;

/// The CUDA bindings gpubench is built on (same version and features), so that a bench of your
/// own launches its kernels (`gpu.stream().launch_builder(..)`) without a cudarc dependency of
/// its own.
pub use cudarc;

use crate::error::{CudaResultExt, Error, Result};
use crate::kernels::KernelSource;
use crate::results::{GpuIdentity, KernelProvenance, Stack};

/// The cudarc CUDA feature this build uses (recorded in every results document).
pub const CUDARC_FEATURE: &str = "cuda-13000";

/// Oldest CUDA driver API version the bindings call into (cuEventElapsedTime_v2 is 12.8).
pub const MIN_DRIVER_API: (u32, u32) = (12, 8);

/// Checks that libcuda and libnvrtc load, the driver is new enough and at least one GPU is
/// visible. Call before anything else in cudarc: its dynamic loader panics on a missing library.
pub fn preflight() -> Result<()> {
    // SAFETY: only tries to open the libraries.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(Error::NoDriverLibrary);
    }
    symbols::check_driver()?;
    let (major, minor) = driver_api_version()?;
    if (major, minor) < MIN_DRIVER_API {
        return Err(Error::DriverTooOld {
            found: format!("{major}.{minor}"),
            needed: format!("{}.{}", MIN_DRIVER_API.0, MIN_DRIVER_API.1),
        });
    }
    device_count()?;
    // SAFETY: only tries to open the library.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(Error::NoNvrtc);
    }
    symbols::check_nvrtc()
}

/// Number of visible CUDA devices; an error when there is none.
pub fn device_count() -> Result<usize> {
    cudarc::driver::result::init().map_err(|e| {
        let name = e.error_name().ok().and_then(|c| c.to_str().ok()).unwrap_or("unknown error");
        Error::NoGpu(format!("the CUDA driver did not initialise ({name})"))
    })?;
    let n = CudaContext::device_count().cuda_context(|| "counting devices".into())?;
    if n <= 0 {
        return Err(Error::NoGpu("the driver sees no device (check CUDA_VISIBLE_DEVICES)".into()));
    }
    Ok(n as usize)
}

/// The UUID of GPU `ordinal` ("GPU-..."), read without creating a CUDA context (so that an
/// idle GPU stays idle).
pub fn uuid_without_context(ordinal: usize) -> Result<String> {
    preflight()?;
    let dev = cudarc::driver::result::device::get(ordinal as i32).cuda_context(|| format!("finding GPU {ordinal}"))?;
    let uuid = cudarc::driver::result::device::get_uuid(dev).cuda_context(|| "reading the device UUID".into())?;
    Ok(identity::format_uuid(&uuid.bytes.map(|b| b as u8)))
}

/// The NVRTC target of GPU `ordinal` ("sm_90"), read without creating a CUDA context.
pub fn arch_without_context(ordinal: usize) -> Result<String> {
    use cudarc::driver::sys::CUdevice_attribute as A;
    preflight()?;
    let dev = cudarc::driver::result::device::get(ordinal as i32).cuda_context(|| format!("finding GPU {ordinal}"))?;
    let attr = |a: A| {
        // SAFETY: a valid device handle and attribute.
        unsafe { cudarc::driver::result::device::get_attribute(dev, a) }
            .cuda_context(|| "reading the compute capability".into())
    };
    Ok(format!(
        "sm_{}{}",
        attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
        attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?
    ))
}

/// One opened GPU: its context, the stream all benchmarks use, its identity and the kernels
/// compiled for it so far (each source is compiled once per process).
pub struct Gpu {
    // Dropped by hand: not at all once the library failed (see `Drop for Gpu`).
    ctx: std::mem::ManuallyDrop<Arc<CudaContext>>,
    stream: std::mem::ManuallyDrop<Arc<CudaStream>>,
    identity: GpuIdentity,
    stack: Stack,
    modules: Mutex<HashMap<&'static str, Arc<CompiledKernels>>>,
}

impl Gpu {
    /// Opens GPU `ordinal` after [`preflight`].
    pub fn open(ordinal: usize) -> Result<Gpu> {
        preflight()?;
        let count = device_count()?;
        if ordinal >= count {
            return Err(Error::NoGpu(format!("GPU {ordinal} requested, {count} visible")));
        }
        let ctx = CudaContext::new(ordinal).cuda_context(|| format!("opening GPU {ordinal}"))?;
        // One stream, ordered by us: cudarc's per-buffer event tracking would only add work.
        // SAFETY: every buffer and launch of this process uses the one stream below.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().cuda_context(|| "creating a stream".into())?;
        let mut identity = identity::read(&ctx, ordinal)?;
        if let Some(parent) = std::env::var(crate::protocol::ENV_ORDINAL).ok().and_then(|s| s.parse().ok()) {
            identity.ordinal = parent;
        }
        let board = crate::telemetry::board_identity(&identity.uuid);
        identity.board_part_number = board.part_number;
        identity.vbios_version = board.vbios_version;
        let (api_major, api_minor) = driver_api_version()?;
        let stack = Stack {
            driver_version: crate::telemetry::driver_release(),
            cuda_driver_api: format!("{api_major}.{api_minor}"),
            nvrtc_version: nvrtc_version()?,
            cudarc_feature: CUDARC_FEATURE.into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
        };
        Ok(Gpu {
            ctx: std::mem::ManuallyDrop::new(ctx),
            stream: std::mem::ManuallyDrop::new(stream),
            identity,
            stack,
            modules: Mutex::new(HashMap::new()),
        })
    }

    /// Identity and fixed properties.
    pub fn identity(&self) -> &GpuIdentity {
        &self.identity
    }

    /// Driver and compiler versions.
    pub fn stack(&self) -> &Stack {
        &self.stack
    }

    /// The stream every launch and copy of this process goes to.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The CUDA context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// Compiles `source` for this GPU (once per process) and loads it.
    pub fn kernels(&self, source: &KernelSource) -> Result<Arc<CompiledKernels>> {
        let mut cache = self.modules.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(k) = cache.get(source.name) {
            return Ok(k.clone());
        }
        let compiled = Arc::new(compile::compile_and_load(&self.ctx, source, &self.identity.arch())?);
        cache.insert(source.name, compiled.clone());
        Ok(compiled)
    }

    /// Loads `compiled` (from [`compile`], done before the GPU was opened) as the module of
    /// `source`, so that later [`Gpu::kernels`] calls find it.
    pub fn load_compiled(&self, source: &KernelSource, compiled: Compiled) -> Result<Arc<CompiledKernels>> {
        let loaded = Arc::new(compile::load(&self.ctx, source, compiled)?);
        let mut cache = self.modules.lock().unwrap_or_else(|p| p.into_inner());
        cache.insert(source.name, loaded.clone());
        Ok(loaded)
    }

    /// Provenance of every kernel source compiled so far.
    pub fn provenance(&self) -> Vec<KernelProvenance> {
        let cache = self.modules.lock().unwrap_or_else(|p| p.into_inner());
        let mut v: Vec<_> = cache.values().map(|k| k.provenance.clone()).collect();
        v.sort_by(|a, b| a.source.cmp(&b.source));
        v
    }

    /// Allocates `len` zeroed elements; an out-of-memory failure says what it was for.
    pub fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize, what: &str) -> Result<CudaSlice<T>> {
        let bytes = len * std::mem::size_of::<T>();
        self.stream.alloc_zeros::<T>(len).map_err(|e| Error::cuda_alloc(format!("allocating {what}"), e, bytes))
    }

    /// Copies host data to a new device buffer.
    pub fn upload<T: DeviceRepr>(&self, data: &[T], what: &str) -> Result<CudaSlice<T>> {
        let bytes = std::mem::size_of_val(data);
        self.stream.clone_htod(data).map_err(|e| Error::cuda_alloc(format!("uploading {what}"), e, bytes))
    }

    /// Copies a device buffer back to the host (synchronises the stream).
    pub fn download<T: DeviceRepr + Default + Clone>(&self, buf: &CudaSlice<T>, what: &str) -> Result<Vec<T>> {
        self.stream.clone_dtoh(buf).cuda_context(|| format!("reading back {what}"))
    }

    /// Sets a buffer to zero (asynchronously, on the stream).
    pub fn zero<T: DeviceRepr + ValidAsZeroBits>(&self, buf: &mut CudaSlice<T>, what: &str) -> Result<()> {
        self.stream.memset_zeros(buf).cuda_context(|| format!("clearing {what}"))
    }

    /// Waits for all queued work; launch failures surface here.
    pub fn synchronize(&self, what: &str) -> Result<()> {
        self.stream.synchronize().cuda_context(|| format!("running {what}"))
    }

    /// Free and total device memory, bytes.
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        self.ctx.mem_get_info().cuda_context(|| "reading free memory".into())
    }
}

impl Drop for Gpu {
    /// Releases the modules, stream and context, unless the driver library failed (an entry
    /// point was missing) or a panic unwinds: clean-up calls into the library again, and a
    /// second panic while unwinding aborts the process. The process is ending then anyway; the
    /// driver releases what it holds.
    fn drop(&mut self) {
        if std::thread::panicking() || symbols::library_failed() {
            let modules = std::mem::take(self.modules.get_mut().unwrap_or_else(|p| p.into_inner()));
            std::mem::forget(modules);
            return;
        }
        // SAFETY: each field is dropped once, here, and not used after.
        unsafe {
            std::mem::ManuallyDrop::drop(&mut self.stream);
            std::mem::ManuallyDrop::drop(&mut self.ctx);
        }
    }
}

/// A loaded kernel module with its provenance.
impl CompiledKernels {
    /// The kernel `name` (an `extern "C"` function of the source).
    pub fn function(&self, name: &str) -> Result<CudaFunction> {
        self.module
            .load_function(name)
            .cuda_context(|| format!("finding kernel `{name}` in {}", self.provenance.source))
    }

    /// The loaded module.
    pub fn module(&self) -> &Arc<CudaModule> {
        &self.module
    }
}
