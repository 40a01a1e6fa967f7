//! Inference: facts about the memory hierarchy from saved sweeps. Pure functions, no GPU.

pub mod analyze;
pub mod banks;
pub mod cluster;
pub mod constant;
pub mod granularity;
pub mod l1;
pub mod l2;
pub mod levels;
pub mod line_check;
pub mod sets;
pub mod strays;
pub mod tlb;
pub mod traces;

pub use analyze::{Dissection, analyze};
