//! A background thread that polls NVML for the GPU under test.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nvml_wrapper::Device;
use nvml_wrapper::enum_wrappers::device::{Clock, ClockId, PerformancePolicy, TemperatureSensor};

use super::processes::{self, ProcessReading};
use super::window::{Reading, summarize};
use crate::results::SampleTelemetry;

/// Default polling period (NVML's own counters update every 10-100 ms).
pub const DEFAULT_PERIOD: Duration = Duration::from_millis(10);

/// Polls NVML every period on its own thread; absent NVML makes an inert sampler, never an
/// error.
pub struct Sampler {
    readings: Arc<Mutex<Vec<Reading>>>,
    processes: Arc<Mutex<Vec<ProcessReading>>>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
    unavailable: Option<String>,
}

impl Sampler {
    /// Starts polling the device with this UUID ("GPU-..."; NVML's order is not CUDA's, so
    /// the device is found by UUID).
    pub fn start(uuid: &str, period: Duration) -> Sampler {
        let readings = Arc::new(Mutex::new(Vec::new()));
        let processes = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = mpsc::channel::<Option<String>>();
        let (r, p, s, uuid) = (readings.clone(), processes.clone(), stop.clone(), uuid.to_string());
        let handle = std::thread::Builder::new()
            .name("gpubench-nvml".into())
            .spawn(move || poll(&uuid, period, &r, &p, &s, ready_tx))
            .ok();
        let unavailable = match ready_rx.recv_timeout(Duration::from_secs(5)) {
            Ok(None) => None,
            Ok(Some(why)) => Some(why),
            Err(_) => Some("NVML did not answer within 5 s".into()),
        };
        Sampler { readings, processes, stop, handle, unavailable }
    }

    /// A sampler that records nothing (NVML not wanted).
    pub fn disabled(why: &str) -> Sampler {
        Sampler {
            readings: Arc::default(),
            processes: Arc::default(),
            stop: Arc::default(),
            handle: None,
            unavailable: Some(why.to_string()),
        }
    }

    /// Why there is no telemetry, if there is none.
    pub fn unavailable(&self) -> Option<&str> {
        self.unavailable.as_deref()
    }

    /// Summary of the readings between `start` and `end`, or `None` without NVML.
    pub fn window(&self, start: Instant, end: Instant) -> Option<SampleTelemetry> {
        if self.unavailable.is_some() {
            return None;
        }
        let readings = self.readings.lock().unwrap_or_else(|p| p.into_inner());
        let mut t = summarize(&readings, start, end);
        let procs = self.processes.lock().unwrap_or_else(|p| p.into_inner());
        let (foreign, unknown) = processes::window(&procs, start, end, &processes::own_pids(), &processes::proc_name);
        t.foreign_processes = foreign;
        t.processes_unknown = unknown;
        Some(t)
    }

    /// Drops readings older than `keep_after` (keeping one before it for counter deltas).
    pub fn forget_before(&self, keep_after: Instant) {
        let mut readings = self.readings.lock().unwrap_or_else(|p| p.into_inner());
        let first_kept = readings.iter().position(|r| r.at >= keep_after).unwrap_or(readings.len());
        readings.drain(..first_kept.saturating_sub(1));
        let mut procs = self.processes.lock().unwrap_or_else(|p| p.into_inner());
        let first_kept = procs.iter().position(|r| r.at >= keep_after).unwrap_or(procs.len());
        procs.drain(..first_kept.saturating_sub(1));
    }

    /// A copy of every reading so far.
    pub fn readings(&self) -> Vec<Reading> {
        self.readings.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn poll(
    uuid: &str,
    period: Duration,
    out: &Mutex<Vec<Reading>>,
    procs: &Mutex<Vec<ProcessReading>>,
    stop: &AtomicBool,
    ready: mpsc::Sender<Option<String>>,
) {
    let nvml = match nvml_wrapper::Nvml::init() {
        Ok(n) => n,
        Err(e) => {
            let _ = ready.send(Some(format!("NVML unavailable: {e}")));
            return;
        }
    };
    let device = match nvml.device_by_uuid(uuid) {
        Ok(d) => d,
        Err(e) => {
            let _ = ready.send(Some(format!("NVML does not know GPU {uuid}: {e}")));
            return;
        }
    };
    let _ = ready.send(None);
    let mut last_full = read(&device);
    let (first, mut util_since) = processes::read(&device, 0);
    procs.lock().unwrap_or_else(|p| p.into_inner()).push(first);
    let mut tick = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let started = Instant::now();
        tick += 1;
        let r = if tick % SLOW_FIELDS_EVERY == 0 {
            last_full = read(&device);
            let (p, newest) = processes::read(&device, util_since);
            util_since = newest;
            procs.lock().unwrap_or_else(|p| p.into_inner()).push(p);
            last_full
        } else {
            read_fast(&device, &last_full)
        };
        out.lock().unwrap_or_else(|p| p.into_inner()).push(r);
        std::thread::sleep(period.saturating_sub(started.elapsed()));
    }
}

/// Every this many polls, the slowly changing fields (memory clock, temperature, performance
/// state, energy and violation counters) and the GPU's process lists are read too; the others
/// carry the last values.
/// Each NVML query costs about a millisecond, so reading everything every time would stretch
/// a 10 ms period to about 30 ms.
const SLOW_FIELDS_EVERY: u64 = 5;

/// The fields that move within milliseconds (SM clock, reasons, power), the rest from `last`.
fn read_fast(device: &Device<'_>, last: &Reading) -> Reading {
    Reading {
        at: Instant::now(),
        sm_mhz: device.clock(Clock::SM, ClockId::Current).ok().map(f64::from),
        reasons_mask: device.current_throttle_reasons().map(|r| r.bits()).unwrap_or(0),
        power_w: device.power_usage().ok().map(|mw| mw as f64 / 1e3),
        ..*last
    }
}

/// One reading of every field NVML offers; unsupported fields are `None`.
pub fn read(device: &Device<'_>) -> Reading {
    let at = Instant::now();
    Reading {
        at,
        sm_mhz: device.clock(Clock::SM, ClockId::Current).ok().map(f64::from),
        mem_mhz: device.clock(Clock::Memory, ClockId::Current).ok().map(f64::from),
        power_w: device.power_usage().ok().map(|mw| mw as f64 / 1e3),
        temp_c: device.temperature(TemperatureSensor::Gpu).ok().map(f64::from),
        pstate: device.performance_state().ok().map(|p| p.as_c() as u32),
        reasons_mask: device.current_throttle_reasons().map(|r| r.bits()).unwrap_or(0),
        energy_mj: device.total_energy_consumption().ok().map(|e| e as f64),
        power_violation_ns: device.violation_status(PerformancePolicy::Power).ok().map(|v| v.violation_time as f64),
        thermal_violation_ns: device.violation_status(PerformancePolicy::Thermal).ok().map(|v| v.violation_time as f64),
    }
}
