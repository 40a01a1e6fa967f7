//! gpubench: GPU microbenchmarks as criterion benches, with in-kernel clocks, NVML telemetry,
//! per-GPU baselines and regression verdicts for driver and toolkit upgrades.
//!
//! Layers, each in its own module:
//! - measurement: [`device`] (GPU, NVRTC, events), [`kernels`] (embedded CUDA sources),
//!   [`harness`] (the criterion side of a bench target), [`families`] (the microbenchmarks),
//!   [`telemetry`] (NVML);
//! - data: [`results`] (the results document and its files), [`baseline`] (per-GPU baselines),
//!   [`config`] (`gpubench.toml`);
//! - analysis: [`stats`] (pure statistics), [`verdict`] (per-metric regression verdicts),
//!   [`history`] (runs over time in SQLite, change points and their causes);
//! - reporting: [`report`] (tables, Markdown, JUnit XML, JSON);
//! - orchestration: [`runner`] (build benches through cargo, run them, merge their records, one
//!   run per GPU).
//!
//! Errors and exit codes are defined once, in [`error`].

pub mod baseline;
pub mod config;
pub mod device;
pub mod dissect;
pub mod error;
pub mod experiments;
pub mod families;
pub mod fleet;
pub mod harness;
pub mod history;
pub mod kernels;
pub mod measure;
pub mod pipeline;
pub mod placement;
pub mod protocol;
pub mod report;
pub mod results;
pub mod runner;
pub mod stats;
pub mod telemetry;
pub mod verdict;

pub use error::{Error, Result};
