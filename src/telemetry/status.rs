//! A snapshot of the card's state for `cargo gpubench info`: clocks, power, ECC, MIG, reasons.

use nvml_wrapper::enum_wrappers::device::{Clock, ClockId, TemperatureSensor};
use serde::{Deserialize, Serialize};

/// What NVML says about the device right now. Fields NVML does not support are `None`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DeviceStatus {
    /// Driver release.
    pub driver_version: Option<String>,
    /// CUDA version of the driver per NVML, e.g. "13.0".
    pub nvml_cuda_version: Option<String>,
    /// Current SM clock, MHz.
    pub sm_mhz: Option<u32>,
    /// Maximum SM clock, MHz.
    pub sm_max_mhz: Option<u32>,
    /// Current memory clock, MHz.
    pub mem_mhz: Option<u32>,
    /// Maximum memory clock, MHz.
    pub mem_max_mhz: Option<u32>,
    /// Application SM clock target, MHz.
    pub sm_app_mhz: Option<u32>,
    /// Board power now, W.
    pub power_w: Option<f64>,
    /// Power limit in force, W.
    pub power_limit_w: Option<f64>,
    /// GPU temperature, degrees C.
    pub temp_c: Option<u32>,
    /// Performance state (0 = P0).
    pub pstate: Option<u32>,
    /// ECC currently on.
    pub ecc_enabled: Option<bool>,
    /// MIG mode currently on.
    pub mig_enabled: Option<bool>,
    /// Persistence mode on.
    pub persistence: Option<bool>,
    /// Clock-event reasons now.
    pub reasons: Vec<String>,
}

/// Reads the status of the device with `uuid`; `Err` with a one-line reason without NVML.
pub fn device_status(uuid: &str) -> Result<DeviceStatus, String> {
    let nvml = nvml_wrapper::Nvml::init().map_err(|e| format!("NVML unavailable: {e}"))?;
    let d = nvml.device_by_uuid(uuid).map_err(|e| format!("NVML does not know GPU {uuid}: {e}"))?;
    let cuda = nvml.sys_cuda_driver_version().ok().map(|v| format!("{}.{}", v / 1000, (v % 1000) / 10));
    Ok(DeviceStatus {
        driver_version: nvml.sys_driver_version().ok(),
        nvml_cuda_version: cuda,
        sm_mhz: d.clock(Clock::SM, ClockId::Current).ok(),
        sm_max_mhz: d.max_clock_info(Clock::SM).ok(),
        mem_mhz: d.clock(Clock::Memory, ClockId::Current).ok(),
        mem_max_mhz: d.max_clock_info(Clock::Memory).ok(),
        sm_app_mhz: d.applications_clock(Clock::SM).ok(),
        power_w: d.power_usage().ok().map(|mw| mw as f64 / 1e3),
        power_limit_w: d.enforced_power_limit().ok().map(|mw| mw as f64 / 1e3),
        temp_c: d.temperature(TemperatureSensor::Gpu).ok(),
        pstate: d.performance_state().ok().map(|p| p.as_c() as u32),
        ecc_enabled: d.is_ecc_enabled().ok().map(|e| e.currently_enabled),
        mig_enabled: d.mig_mode().ok().map(|m| m.current != 0),
        persistence: d.is_in_persistent_mode().ok(),
        reasons: d.current_throttle_reasons().map(|r| super::reasons::names(r.bits())).unwrap_or_default(),
    })
}
