//! What the card did while it was measured: NVML polling on a background thread, throttle
//! classification, clock normalisation, and a status snapshot for `cargo gpubench info`.
//!
//! NVML is optional: without it, telemetry is recorded as absent and nothing aborts. The
//! exact clock correction comes from the kernels themselves (clock64 over %globaltimer);
//! NVML is the cross-check and the source of power, temperature, memory clock and reasons.

pub mod normalize;
pub mod processes;
pub mod reasons;
mod sampler;
mod status;
mod summary;
mod window;

pub use normalize::{normalize, normalized_unit};
pub use sampler::{DEFAULT_PERIOD, Sampler, read};
pub use status::{DeviceStatus, device_status};
pub use summary::{describe, run_summary};
pub use window::{Reading, summarize};

use nvml_wrapper::Nvml;

/// What NVML says of a board: its part number and VBIOS (each `None` where NVML does not answer).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BoardIdentity {
    /// Board part number, "692-2G520-0282-001".
    pub part_number: Option<String>,
    /// VBIOS version, "96.00.A5.00.1A".
    pub vbios_version: Option<String>,
}

/// Reads the board identity of the GPU with `uuid`; empty where NVML is unavailable.
pub fn board_identity(uuid: &str) -> BoardIdentity {
    let Ok(nvml) = Nvml::init() else { return BoardIdentity::default() };
    let Ok(device) = nvml.device_by_uuid(uuid) else { return BoardIdentity::default() };
    let clean = |s: String| Some(s.trim().to_string()).filter(|s| !s.is_empty() && s != "N/A");
    BoardIdentity {
        part_number: device.board_part_number().ok().and_then(clean),
        vbios_version: device.vbios_version().ok().and_then(clean),
    }
}

/// The NVIDIA driver release ("580.159.04"), or `None` where NVML is unavailable.
pub fn driver_release() -> Option<String> {
    Nvml::init().ok()?.sys_driver_version().ok()
}
