//! What the families share to measure: per-SM timing windows ([`per_sm`]), the configuration
//! search on sweep data ([`search`]), documented hardware limits ([`limits`]), the work of one
//! event-timed launch ([`launch_size`]), the load
//! bandwidth inside an SM that `l1_bandwidth` and `shared_bandwidth` both measure
//! ([`sm_bandwidth`]), and the accumulator of a sample made of several kernels ([`sample`]).
//! None of these is a family; [`crate::families`] holds those.

pub mod launch_size;
pub mod limits;
pub mod per_sm;
pub mod sample;
pub mod search;
pub mod sm_bandwidth;

pub use sample::{SampleSum, merge_clock};
