//! `cargo gpubench dissect`: the memory hierarchy inferred from latency sweeps and per-access
//! traces (seeds 000, 001, 002), each value with a confidence.
//!
//! Layers: [`data`] (the raw sweeps, saved as JSON), [`backend`] (what a machine must answer),
//! [`plan`] (which sweeps to run, derived from the device), [`gpu`] (the kernels),
//! [`sim`] (a cache simulator of known geometry), [`infer`] (pure inference: facts from
//! sweeps), [`report`] and [`plot`] (table, JSON, SVG).

pub mod backend;
pub mod data;
pub mod infer;
pub mod plan;
pub mod sim;
