//! Turning results into text for people (tables) and machines (JSON). Pure functions over the
//! results types: no I/O, no GPU.

pub mod device;
pub mod table;

pub use device::{info_table, ramp_table};
pub use table::{format_value, median_clock_mhz, median_nvml_mhz, median_power_w, provenance_table, summary_table};
