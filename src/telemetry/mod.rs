//! What the card did while it was measured, read through NVML.

use nvml_wrapper::Nvml;

/// The NVIDIA driver release ("580.159.04"), or `None` where NVML is unavailable.
pub fn driver_release() -> Option<String> {
    Nvml::init().ok()?.sys_driver_version().ok()
}
