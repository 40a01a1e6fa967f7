//! Turning results into text for people (tables) and machines (JSON). Pure functions over the
//! results types: no I/O, no GPU.

pub mod table;

pub use table::{format_value, median_clock_mhz, provenance_table, summary_table};
