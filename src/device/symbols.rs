//! A libcuda or libnvrtc that loads but lacks an entry point (an old, stub or mismatched
//! library): cudarc's dynamic loader panics ("Missing symbol NAME") on the first call to it.
//! Here the entry points gpubench needs are looked up before any call, and a panic that gets
//! through anyway is turned into the same one-line environment error (exit code 3).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a missing-symbol panic was seen: the library failed, and clean-up must not call
/// into it again ([`library_failed`]).
static FAILED: AtomicBool = AtomicBool::new(false);

/// Whether a libcuda or libnvrtc entry point was found missing in this process.
pub fn library_failed() -> bool {
    FAILED.load(Ordering::SeqCst)
}

use crate::error::{Error, Result};

/// Driver entry points gpubench calls, directly or through cudarc (present in every driver
/// gpubench supports, R570+): every run's, and those of clean-up (cudarc's `Drop` of contexts,
/// streams, events, modules and buffers). A symbol missing here would be called unchecked, and
/// cudarc panics on a missing symbol; a panic inside clean-up while another one unwinds
/// aborts the process. `tests` below and `faults_cli.rs` (a stub libcuda exporting exactly
/// this list) keep it complete.
pub const DRIVER_SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetAttribute",
    "cuDeviceGetName",
    "cuDeviceGetUuid",
    "cuDeviceGetUuid_v2",
    "cuDeviceTotalMem_v2",
    "cuDeviceGetPCIBusId",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxGetCurrent",
    "cuCtxSetCurrent",
    "cuCtxSynchronize",
    "cuModuleLoadData",
    "cuModuleGetFunction",
    "cuModuleGetGlobal_v2",
    "cuModuleUnload",
    "cuFuncGetAttribute",
    "cuFuncSetAttribute",
    "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
    "cuLaunchKernel",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemAllocAsync",
    "cuMemFreeAsync",
    "cuMemGetInfo_v2",
    "cuMemsetD8Async",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuStreamCreate",
    "cuStreamDestroy_v2",
    "cuStreamSynchronize",
    "cuStreamWaitEvent",
    "cuEventCreate",
    "cuEventDestroy_v2",
    "cuEventRecord",
    "cuEventQuery",
    "cuEventSynchronize",
    "cuEventElapsedTime_v2",
    "cuGetErrorName",
];

/// NVRTC entry points every kernel compile calls.
pub const NVRTC_SYMBOLS: &[&str] = &[
    "nvrtcVersion",
    "nvrtcCreateProgram",
    "nvrtcCompileProgram",
    "nvrtcGetProgramLogSize",
    "nvrtcGetProgramLog",
    "nvrtcGetPTXSize",
    "nvrtcGetPTX",
    "nvrtcGetCUBINSize",
    "nvrtcGetCUBIN",
    "nvrtcDestroyProgram",
];

/// The first of `symbols` that `has` does not find.
pub fn first_missing<'a>(symbols: &[&'a str], has: impl Fn(&str) -> bool) -> Option<&'a str> {
    symbols.iter().copied().find(|s| !has(s))
}

/// Checks that the loaded libcuda has every [`DRIVER_SYMBOLS`] entry. Call only once
/// `is_culib_present()` said the library loads.
pub fn check_driver() -> Result<()> {
    // SAFETY: the library loads (checked by the caller); looking a symbol up calls nothing.
    let lib = unsafe { cudarc::driver::sys::culib() };
    let has = |name: &str| unsafe { lib.get::<*const ()>(name.as_bytes()).is_ok() };
    match first_missing(DRIVER_SYMBOLS, has) {
        Some(name) => Err(Error::DriverSymbol(name.to_string())),
        None => Ok(()),
    }
}

/// Checks that the loaded libnvrtc has every [`NVRTC_SYMBOLS`] entry. Call only once
/// `is_culib_present()` said the library loads.
pub fn check_nvrtc() -> Result<()> {
    // SAFETY: as in check_driver.
    let lib = unsafe { cudarc::nvrtc::sys::culib() };
    let has = |name: &str| unsafe { lib.get::<*const ()>(name.as_bytes()).is_ok() };
    match first_missing(NVRTC_SYMBOLS, has) {
        Some(name) => Err(Error::NvrtcSymbol(name.to_string())),
        None => Ok(()),
    }
}

/// The symbol a cudarc loader panic names ("Missing symbol cuFoo: ..."), if it is one.
pub fn missing_symbol(panic_message: &str) -> Option<&str> {
    let rest = panic_message.strip_prefix("Missing symbol ")?;
    let name = rest.split([':', ' ']).next()?;
    (!name.is_empty()).then_some(name)
}

/// The error for a missing `symbol`: the driver's or NVRTC's, told apart by its prefix.
pub fn symbol_error(symbol: &str) -> Error {
    if symbol.starts_with("nvrtc") {
        Error::NvrtcSymbol(symbol.to_string())
    } else {
        Error::DriverSymbol(symbol.to_string())
    }
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> Option<&str> {
    payload.downcast_ref::<String>().map(String::as_str).or_else(|| payload.downcast_ref::<&str>().copied())
}

/// Runs `f`; a missing-symbol panic inside it becomes [`Error::DriverSymbol`] or
/// [`Error::NvrtcSymbol`] (printed by nobody but the caller), any other panic goes on.
pub fn catch_missing_symbols<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    quiet_missing_symbol_panics();
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => match panic_text(payload.as_ref()).and_then(missing_symbol) {
            Some(symbol) => {
                FAILED.store(true, Ordering::SeqCst);
                Err(symbol_error(symbol))
            }
            None => std::panic::resume_unwind(payload),
        },
    }
}

/// Keeps the default panic message off stderr for missing-symbol panics (they become one
/// error line); every other panic is reported as before.
fn quiet_missing_symbol_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if panic_text(info.payload()).and_then(missing_symbol).is_none() {
                previous(info);
            } else {
                FAILED.store(true, Ordering::SeqCst);
            }
        }));
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::exit;

    #[test]
    fn the_first_absent_symbol_is_named() {
        let present = ["cuInit", "cuDriverGetVersion"];
        assert_eq!(first_missing(DRIVER_SYMBOLS, |s| present.contains(&s)), Some("cuDeviceGetCount"));
        assert_eq!(first_missing(NVRTC_SYMBOLS, |_| true), None);
    }

    #[test]
    fn loader_panics_become_environment_errors() {
        assert_eq!(missing_symbol("Missing symbol cuLaunchKernel: undefined symbol"), Some("cuLaunchKernel"));
        assert_eq!(missing_symbol("index out of bounds"), None);
        let e = catch_missing_symbols::<()>(|| {
            panic!("Missing symbol cuEventElapsedTime_v2: /lib/libcuda.so.1: undefined symbol")
        })
        .unwrap_err();
        assert_eq!(e.exit_code(), exit::ENVIRONMENT);
        assert!(
            e.to_string().starts_with("no usable CUDA driver: libcuda.so.1 loads but lacks cuEventElapsedTime_v2"),
            "{e}"
        );
        let e = catch_missing_symbols::<()>(|| panic!("Missing symbol nvrtcGetCUBIN: x")).unwrap_err();
        assert!(matches!(e, Error::NvrtcSymbol(ref s) if s == "nvrtcGetCUBIN"));
        assert_eq!(catch_missing_symbols(|| Ok(7)).unwrap(), 7);
    }

    #[test]
    fn every_symbol_of_the_calls_and_their_clean_up_is_checked() {
        // What cudarc 0.19 calls for the methods gpubench uses (CudaContext::new and its Drop,
        // streams, events, modules, buffers, launches, occupancy, globals), as its sources show.
        let used = [
            "cuInit",
            "cuDeviceGet",
            "cuDevicePrimaryCtxRetain",
            "cuDevicePrimaryCtxRelease_v2",
            "cuDeviceGetAttribute",
            "cuCtxGetCurrent",
            "cuCtxSetCurrent",
            "cuStreamCreate",
            "cuStreamDestroy_v2",
            "cuEventCreate",
            "cuEventDestroy_v2",
            "cuModuleUnload",
            "cuMemAllocAsync",
            "cuMemFreeAsync",
            "cuMemsetD8Async",
            "cuMemcpyHtoDAsync_v2",
            "cuMemcpyDtoHAsync_v2",
            "cuModuleGetGlobal_v2",
            "cuFuncSetAttribute",
            "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
            "cuMemGetInfo_v2",
        ];
        for s in used {
            assert!(DRIVER_SYMBOLS.contains(&s), "{s} is called but not checked at start-up");
        }
        let mut sorted = DRIVER_SYMBOLS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), DRIVER_SYMBOLS.len(), "no symbol twice");
    }

    #[test]
    fn other_panics_are_not_swallowed() {
        let r = std::panic::catch_unwind(|| catch_missing_symbols::<()>(|| panic!("something else")));
        assert!(r.is_err());
    }
}
