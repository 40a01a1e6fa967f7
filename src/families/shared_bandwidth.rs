//! Shared-memory load bandwidth in bytes per clock per SM (Mei & Chu section 6.1, Chips and Cheese),
//! against the 128 B/clk/SM of 32 four-byte banks: 32-, 64- and 128-bit `ld.shared` swept over
//! ILP and resident warps. Kernels: `kernels/shared_bandwidth.cu`.

use crate::error::Result;
use crate::harness::Suite;
use crate::kernels;
use crate::measure::limits;
use crate::measure::sm_bandwidth::{self, Spec};

/// "smem_w16_ilp4".
pub fn kernel_name(_variant: &str, width: u32, ilp: u32) -> String {
    format!("smem_w{width}_ilp{ilp}")
}

/// The family's description for [`sm_bandwidth::run`].
pub fn spec() -> Spec {
    Spec {
        family: "shared_bandwidth",
        source: kernels::SHARED_BANDWIDTH,
        sweep_source: None,
        fold: "smem_fold",
        variants: &[],
        kernel: kernel_name,
        global: false,
        limit: limits::shared_bytes_per_clk_per_sm,
    }
}

/// The shared-memory bandwidth family: `shared_bandwidth/<32|64|128>bit` at the best
/// configuration found on the device; under the full profile also
/// `shared_bandwidth/sweep/<width>/ilp=<k>`.
pub fn run(suite: &mut Suite) -> Result<()> {
    sm_bandwidth::run(suite, &spec())
}
