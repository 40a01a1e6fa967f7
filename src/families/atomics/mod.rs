//! The atomics family, one bench target (`benches/atomics.rs`), two kernel sources:
//! - [`add`]: global atomicAdd throughput on one address, a sector, a line, a word per thread
//!   (`kernels/atomics.cu`);
//! - [`variants`], [`latency`], [`global_latency`], [`shared`]: contention, 64-bit and
//!   floating-point adds, CAS, dependent-chain latency (shared memory from one thread, global
//!   memory from every SM at once) and shared-memory atomics (`kernels/atomics_variants.cu`).

pub mod add;
pub mod batch;
pub mod global_latency;
pub mod latency;
pub mod shared;
pub mod variants;

pub use add::{Pattern, expected_sum, rates};

use super::full_grid;
use crate::error::Result;
use crate::harness::{Profile, Suite};
use crate::kernels;

/// The atomics family: `atomics/add_u32/<pattern>`, then the variants (contention, types, CAS,
/// latency, shared memory).
pub fn run(suite: &mut Suite) -> Result<()> {
    add::run(suite)?;
    run_variants(suite)
}

/// The variants: contention, types, CAS, latency, shared memory, and under the full profile the
/// contention sweeps.
fn run_variants(suite: &mut Suite) -> Result<()> {
    let profile = suite.profile();
    let names: &[&str] = match profile {
        Profile::Quick => &["latency", "global_latency"],
        Profile::Default => &["contention", "types", "cas", "latency", "global_latency", "shared_add"],
        Profile::Full => &[
            "contention",
            "types",
            "cas",
            "latency",
            "global_latency",
            "shared_add",
            "contention_sweep",
            "contention_interleaved",
        ],
    };
    if !names.iter().any(|n| suite.wants(n)) {
        return Ok(());
    }
    let gpu = suite.gpu();
    let cfg = full_grid(gpu.identity(), variants::THREADS);
    let ctx = variants::Ctx {
        compiled: gpu.kernels(&kernels::ATOMICS_VARIANTS)?,
        cfg,
        threads: cfg.grid_dim.0 as u64 * cfg.block_dim.0 as u64,
    };
    for &name in names {
        if !suite.wants(name) {
            continue;
        }
        match name {
            "contention" => variants::contention(suite, &ctx, name, &variants::CONTENTION_K, false)?,
            "contention_sweep" => {
                let ks: Vec<u32> = std::iter::successors(Some(1u32), |k| Some(k * 2))
                    .take_while(|k| (*k as u64) < ctx.threads)
                    .chain([0])
                    .collect();
                variants::contention(suite, &ctx, name, &ks, false)?
            }
            "contention_interleaved" => variants::contention(suite, &ctx, name, &variants::CONTENTION_K, true)?,
            "types" => variants::types(suite, &ctx)?,
            "cas" => variants::cas(suite, &ctx)?,
            "latency" => latency::run(suite, &ctx)?,
            "global_latency" => global_latency::run(suite, &ctx)?,
            _ => shared::run(suite, &ctx)?,
        }
    }
    Ok(())
}
