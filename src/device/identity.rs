//! Reading a GPU's identity and fixed properties from the driver.

use std::ffi::c_char;
use std::sync::Arc;

use cudarc::driver::CudaContext;
use cudarc::driver::sys::{self, CUdevice_attribute as A};

use crate::error::{CudaResultExt, Error, Result};
use crate::results::GpuIdentity;

/// CUDA version the installed driver supports, as (major, minor).
pub fn driver_api_version() -> Result<(u32, u32)> {
    if !unsafe { sys::is_culib_present() } {
        return Err(Error::NoDriverLibrary);
    }
    super::symbols::check_driver()?;
    let mut v = 0i32;
    // SAFETY: a valid out-pointer; cuDriverGetVersion needs no cuInit.
    unsafe { sys::cuDriverGetVersion(&mut v) }
        .result()
        .cuda_context(|| "asking the driver for its CUDA version".into())?;
    Ok(((v / 1000) as u32, ((v % 1000) / 10) as u32))
}

/// Reads the identity of the device behind `ctx`.
pub(super) fn read(ctx: &Arc<CudaContext>, ordinal: usize) -> Result<GpuIdentity> {
    let attr = |a: A| -> Result<u32> {
        ctx.attribute(a).map(|v| v.max(0) as u32).cuda_context(|| format!("reading device attribute {a:?}"))
    };
    let name = ctx.name().cuda_context(|| "reading the device name".into())?;
    let uuid = ctx.uuid().cuda_context(|| "reading the device UUID".into())?;
    let (cc_major, cc_minor) = ctx.compute_capability().cuda_context(|| "reading the compute capability".into())?;
    let total_mem_bytes = ctx.total_mem().cuda_context(|| "reading the memory size".into())? as u64;
    Ok(GpuIdentity {
        name,
        uuid: format_uuid(&uuid.bytes.map(|b| b as u8)),
        ordinal: ordinal as u32,
        pci_bus_id: pci_bus_id(ctx.cu_device()).unwrap_or_default(),
        cc_major: cc_major as u32,
        cc_minor: cc_minor as u32,
        sm_count: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        l2_bytes: attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as u64,
        smem_per_block_optin: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)? as u64,
        smem_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)? as u64,
        max_threads_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
        regs_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)?,
        warp_size: attr(A::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?,
        sm_clock_max_khz: attr(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)?,
        mem_clock_khz: attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)?,
        bus_width_bits: attr(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?,
        total_mem_bytes,
        ecc_enabled: attr(A::CU_DEVICE_ATTRIBUTE_ECC_ENABLED)? != 0,
        board_part_number: None,
        vbios_version: None,
    })
}

/// Formats 16 UUID bytes the way NVML and nvidia-smi print them.
pub(crate) fn format_uuid(b: &[u8; 16]) -> String {
    let hex: Vec<String> = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        hex[0..4].concat(),
        hex[4..6].concat(),
        hex[6..8].concat(),
        hex[8..10].concat(),
        hex[10..16].concat()
    )
}

fn pci_bus_id(dev: sys::CUdevice) -> Option<String> {
    let mut buf = [0 as c_char; 32];
    // SAFETY: the buffer is 32 bytes and we pass its length.
    unsafe { sys::cuDeviceGetPCIBusId(buf.as_mut_ptr(), buf.len() as i32, dev) }.result().ok()?;
    let bytes: Vec<u8> = buf.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::format_uuid;

    #[test]
    fn uuid_is_formatted_like_nvidia_smi() {
        let bytes = [0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef];
        assert_eq!(format_uuid(&bytes), "GPU-12345678-9abc-def0-0123-456789abcdef");
    }
}
