//! Run-time compilation of our CUDA sources with NVRTC, for the GPU's own architecture.

use std::ffi::{CString, c_char};
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaModule};
use cudarc::nvrtc::{result as nvrtc, sys};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::kernels::KernelSource;
use crate::results::KernelProvenance;

/// A compiled and loaded kernel source.
pub struct CompiledKernels {
    pub(super) module: Arc<CudaModule>,
    /// How it was built.
    pub provenance: KernelProvenance,
}

/// The output of one NVRTC compilation.
pub struct Compiled {
    /// Source text as compiled (common header prepended).
    pub source: String,
    /// PTX text.
    pub ptx: Vec<u8>,
    /// Machine code for the target.
    pub cubin: Vec<u8>,
    /// Provenance record.
    pub provenance: KernelProvenance,
}

/// NVRTC's version, "13.0". Needs libnvrtc (see [`super::preflight`]).
pub fn nvrtc_version() -> Result<String> {
    if !unsafe { sys::is_culib_present() } {
        return Err(Error::NoNvrtc);
    }
    super::symbols::check_nvrtc()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two valid out-pointers.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|e| Error::Cuda { context: "asking NVRTC for its version".into(), message: format!("{e:?}") })?;
    Ok(format!("{major}.{minor}"))
}

/// Compiles `source` for `arch` ("sm_90"). Needs only libnvrtc, no GPU.
pub fn compile(source: &KernelSource, arch: &str) -> Result<Compiled> {
    let nvrtc_ver = nvrtc_version()?;
    let text = source.full_text();
    let csrc = CString::new(text.clone()).expect("kernel sources contain no NUL");
    let cname = CString::new(source.file_name()).expect("kernel names contain no NUL");
    let nvrtc_err = |what: &str, e: nvrtc::NvrtcError| Error::Cuda {
        context: format!("{what} {}", source.file_name()),
        message: format!("{e:?}"),
    };
    let prog = nvrtc::create_program(&csrc, Some(&cname)).map_err(|e| nvrtc_err("creating NVRTC program for", e))?;
    let options = [format!("--gpu-architecture={arch}"), "-std=c++17".to_string(), "-default-device".to_string()];
    // SAFETY: `prog` is alive until destroy_program below; the buffers outlive each call.
    let outcome = unsafe {
        let compiled = nvrtc::compile_program(prog, &options);
        let log = nvrtc::get_program_log(prog).map(|l| c_chars_to_string(&l)).unwrap_or_default();
        match compiled {
            Err(_) => Err(compile_error(source, &nvrtc_ver, arch, log)),
            Ok(()) => {
                let ptx = nvrtc::get_ptx(prog).map_err(|e| nvrtc_err("reading PTX of", e))?;
                let cubin = get_cubin(prog).map_err(|e| nvrtc_err("reading cubin of", e))?;
                Ok((ptx.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect::<Vec<u8>>(), cubin))
            }
        }
    };
    // SAFETY: created above, destroyed once.
    let _ = unsafe { nvrtc::destroy_program(prog) };
    let (ptx, cubin) = outcome?;
    let provenance = KernelProvenance {
        source: source.file_name(),
        arch: arch.to_string(),
        nvrtc_version: nvrtc_ver,
        source_sha256: sha256_hex(text.as_bytes()),
        ptx_sha256: sha256_hex(&ptx),
        cubin_sha256: sha256_hex(&cubin),
    };
    Ok(Compiled { source: text, ptx, cubin, provenance })
}

/// Compiles `source` and loads its machine code into `ctx`.
pub(super) fn compile_and_load(ctx: &Arc<CudaContext>, source: &KernelSource, arch: &str) -> Result<CompiledKernels> {
    load(ctx, source, compile(source, arch)?)
}

/// Loads machine code compiled earlier into `ctx`.
pub(super) fn load(ctx: &Arc<CudaContext>, source: &KernelSource, compiled: Compiled) -> Result<CompiledKernels> {
    let module = ctx
        .load_module(cudarc::nvrtc::Ptx::from_binary(compiled.cubin))
        .map_err(|e| Error::cuda(format!("loading the machine code of {}", source.file_name()), e))?;
    Ok(CompiledKernels { module, provenance: compiled.provenance })
}

unsafe fn get_cubin(prog: sys::nvrtcProgram) -> std::result::Result<Vec<u8>, nvrtc::NvrtcError> {
    let mut size = 0usize;
    // SAFETY: caller guarantees `prog` is a compiled program.
    unsafe {
        sys::nvrtcGetCUBINSize(prog, &mut size).result()?;
        let mut buf = vec![0u8; size];
        sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr() as *mut c_char).result()?;
        Ok(buf)
    }
}

fn compile_error(source: &KernelSource, nvrtc: &str, arch: &str, log: String) -> Error {
    let first_line = log
        .lines()
        .find(|l| l.contains("error"))
        .or_else(|| log.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or("no compiler log")
        .trim()
        .to_string();
    Error::KernelCompile { source_name: source.file_name(), nvrtc: nvrtc.into(), arch: arch.into(), first_line, log }
}

fn c_chars_to_string(chars: &[c_char]) -> String {
    let bytes: Vec<u8> = chars.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}
