//! gpubench: GPU microbenchmarks as criterion benches, with in-kernel clocks, NVML telemetry,
//! per-GPU baselines and regression verdicts for driver and toolkit upgrades.
//!
//! Layers, each in its own module:
//! - measurement: [`device`] (GPU, NVRTC, events), [`kernels`] (embedded CUDA sources),
//!   [`harness`] (the criterion side of a bench target), [`families`] (the microbenchmarks, one
//!   module each, listed in [`families::REGISTRY`]), [`measure`] (what families share: per-SM
//!   windows, search, limits, the sample accumulator), [`telemetry`] (NVML), [`placement`],
//!   [`dissect`] (memory-hierarchy inference), [`experiments`] (clock ramp and load);
//! - data: [`results`] (the results document and its files), [`baseline`] (per-GPU baselines),
//!   [`config`] (`gpubench.toml`);
//! - analysis: [`stats`] (pure statistics), [`verdict`] (per-metric regression verdicts),
//!   [`history`] (runs over time in SQLite, change points and their causes);
//! - reporting: [`report`] (tables, Markdown, JUnit XML, JSON);
//! - orchestration: [`protocol`] (what a bench process and the runner agree on), [`runner`]
//!   (build benches through cargo, run them, merge their records, one run per GPU), [`fleet`];
//! - the main job: [`pipeline`] (plan, build, run and collect, write, compare, save), what
//!   `cargo gpubench` runs and a library user can call; [`upgrade`], two software stacks run
//!   alternately on the same GPUs and judged against each other, with the machine code compared.
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
pub mod upgrade;
pub mod verdict;

pub use error::{Error, Result};
