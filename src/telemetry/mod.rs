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

/// The NVIDIA driver release ("580.159.04"), or `None` where NVML is unavailable.
pub fn driver_release() -> Option<String> {
    Nvml::init().ok()?.sys_driver_version().ok()
}
