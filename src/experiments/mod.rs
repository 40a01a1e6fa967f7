//! One-off experiments that are not criterion benchmarks.

pub mod clock_load;
pub mod clock_ramp;
