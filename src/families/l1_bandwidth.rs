//! L1 data-cache load bandwidth in bytes per clock per SM (Chips and Cheese), against the 128 B/clk/SM
//! of the L1 data path: 32-, 64- and 128-bit loads swept over ILP and resident warps, with three
//! PTX cache operators (plain `ld.global`, `.ca`, `.nc`). Kernels: `kernels/l1_bandwidth.cu`.

use crate::error::Result;
use crate::harness::Suite;
use crate::kernels;
use crate::measure::limits;
use crate::measure::sm_bandwidth::{self, Spec};

/// Cache operators of the loads: plain `ld.global` (LDG.E, cached in L1), `.ca`
/// (LDG.E.STRONG.SM) and `.nc` (LDG.E.CONSTANT, the read-only path).
pub const CACHE_OPS: [&str; 3] = ["ld", "ca", "nc"];

/// "l1_ld_w16_ilp4".
pub fn kernel_name(op: &str, width: u32, ilp: u32) -> String {
    format!("l1_{op}_w{width}_ilp{ilp}")
}

/// The family's description for [`sm_bandwidth::run`].
pub fn spec() -> Spec {
    Spec {
        family: "l1_bandwidth",
        source: kernels::L1_BANDWIDTH,
        sweep_source: Some(kernels::L1_BANDWIDTH_SWEEP),
        fold: "l1_fold",
        variants: &CACHE_OPS,
        kernel: kernel_name,
        global: true,
        limit: limits::l1_bytes_per_clk_per_sm,
    }
}

/// The L1 bandwidth family: `l1_bandwidth/<32|64|128>bit` at the best configuration found on
/// the device; under the full profile also `l1_bandwidth/sweep/<op>/<width>/ilp=<k>`.
pub fn run(suite: &mut Suite) -> Result<()> {
    sm_bandwidth::run(suite, &spec())
}
