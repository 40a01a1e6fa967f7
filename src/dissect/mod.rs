//! `cargo gpubench dissect`: the memory hierarchy inferred from latency sweeps and per-access
//! traces (Meltzer et al., Mei & Chu, Qiu et al.), each value with a confidence.
//!
//! Layers: [`data`] (the raw sweeps, saved as JSON), [`backend`] (what a machine must answer),
//! [`plan`] (which sweeps to run, derived from the device), [`launch`] (every kernel launch as
//! data, checked on the host), [`gpu`] (the kernels of `kernels/dissect.cu`), [`sim`] (a
//! trace-driven cache simulator of known geometry that answers like the GPU and checks the same
//! launches), [`infer`] (pure inference: facts from sweeps), [`output`] and [`plot`] (tables,
//! JSON documents, SVG).
//!
//! Measured with: per-access cycle histograms of dependent chases (`ld.ca`, `ld.cg`, `ld.nc`,
//! texture, constant, 64-bit `ld.cg` for the TLBs), per-access traces recorded in shared memory,
//! one warp's shared-memory and constant-memory latencies. The family `latency`'s `Chaser` times
//! a whole window per launch for criterion; the dissection needs each access's latency, chases
//! initialised only where they go (TLB footprints of tens of GiB), 64-bit indices and the
//! texture and constant paths, hence its own kernels.

pub mod backend;
pub mod data;
pub mod gpu;
pub mod infer;
pub mod launch;
pub mod output;
pub mod plan;
pub mod plot;
/// The cache simulator, for tests only (cargo feature `sim`).
#[cfg(any(test, feature = "sim"))]
pub mod sim;

use std::time::{SystemTime, UNIX_EPOCH};

pub use data::Sweeps;
pub use infer::{Dissection, analyze};
pub use output::{facts_from_folder, read_sweeps, recorded_facts, write_folder};
pub use plan::{Options, Progress};

use crate::device::Gpu;
use crate::error::Result;

/// Runs every sweep of the plan on `gpu`; on a failure the outcome keeps what was measured.
pub fn measure(gpu: &Gpu, opts: Options, progress: &mut dyn FnMut(&Progress)) -> Result<plan::Outcome> {
    let mut backend = gpu::GpuBackend::new(gpu)?;
    let created = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let mut out = plan::run_all(&mut backend, opts, created, Some(gpu.stack().clone()), progress);
    out.sweeps.kernels = backend.provenance();
    Ok(out)
}
