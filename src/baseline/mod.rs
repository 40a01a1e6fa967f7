//! Baselines: the runs a new run is compared with, one file per GPU class under `baselines/`.
//!
//! A baseline holds whole results documents (raw per-sample values, clocks, telemetry, kernel
//! provenance) so that every verdict can be recomputed from it, plus summaries for people and
//! diffs: the stack it was taken on, the kernels' hashes, per-metric medians and noise, and
//! the telemetry. Driver and toolkit versions are attributes, not part of the key: comparing
//! across an upgrade is the point.
//!
//! Files are schema-versioned ([`BASELINE_SCHEMA`]), written atomically (temporary file, then
//! rename), and a file that is corrupt, truncated or of another schema is an error
//! ([`crate::Error::Data`], exit code 5) that is never overwritten or deleted.

mod document;
mod key;
mod store;

pub use document::{BASELINE_SCHEMA, Baseline, BaselineMetric, TelemetrySummary};
pub use key::{BaselineKey, validate_name};
pub use store::{Listed, SaveMode, Store};
