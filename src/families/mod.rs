//! The microbenchmark families: host code that sets up buffers, launches the kernels of
//! `kernels/`, and turns probe readings into metrics. Each family is one criterion bench target
//! (`benches/<family>.rs` calls its `run`); [`REGISTRY`] lists every family with its bench, host
//! code and kernel files. What families share to measure is in [`crate::measure`].

pub mod access_patterns;
pub mod atomics;
pub mod constant_memory;
pub mod dram;
pub mod instructions;
pub mod l1_bandwidth;
pub mod l2_bandwidth;
pub mod latency;
mod registry;
pub mod shared_bandwidth;
pub mod shared_banks;
pub mod spilling;
pub mod stream;

pub use registry::{Family, NOT_FAMILIES, REGISTRY, family};

use cudarc::driver::LaunchConfig;

use crate::results::GpuIdentity;

/// A grid that fills every SM with `threads`-thread blocks at full occupancy by thread count.
pub fn full_grid(gpu: &GpuIdentity, threads: u32) -> LaunchConfig {
    let blocks_per_sm = (gpu.max_threads_per_sm / threads).max(1);
    LaunchConfig { grid_dim: (gpu.sm_count * blocks_per_sm, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 }
}

/// One thread in one block.
pub const SINGLE_THREAD: LaunchConfig = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };

/// "4KiB", "2MiB", "1GiB": a size as it appears in benchmark ids.
pub fn size_label(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (scale, unit) in UNITS {
        if bytes >= scale && bytes % scale == 0 {
            return format!("{}{unit}", bytes / scale);
        }
    }
    format!("{bytes}B")
}

/// An H100 SXM's identity, for tests of the host arithmetic.
#[cfg(test)]
pub(crate) fn test_identity() -> GpuIdentity {
    GpuIdentity {
        name: "NVIDIA H100 80GB HBM3".into(),
        uuid: "GPU-00000000-0000-0000-0000-000000000000".into(),
        ordinal: 0,
        pci_bus_id: String::new(),
        cc_major: 9,
        cc_minor: 0,
        sm_count: 132,
        l2_bytes: 50 << 20,
        smem_per_block_optin: 227 << 10,
        smem_per_sm: 228 << 10,
        max_threads_per_sm: 2048,
        regs_per_sm: 65536,
        warp_size: 32,
        sm_clock_max_khz: 1_980_000,
        mem_clock_khz: 2_619_000,
        bus_width_bits: 5120,
        total_mem_bytes: 80 << 30,
        ecc_enabled: true,
        board_part_number: None,
        vbios_version: None,
    }
}

/// The value of `#define NAME <integer>` in a kernel source, for tests that host constants
/// match the kernels.
#[cfg(test)]
pub(crate) fn kernel_define(source: &crate::kernels::KernelSource, name: &str) -> Option<u64> {
    source.text.lines().find_map(|l| {
        let mut w = l.split_whitespace();
        (w.next() == Some("#define") && w.next() == Some(name)).then(|| w.next()?.parse().ok()).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_labelled_in_the_largest_exact_unit() {
        assert_eq!(size_label(4096), "4KiB");
        assert_eq!(size_label(3 << 20), "3MiB");
        assert_eq!(size_label(1 << 30), "1GiB");
        assert_eq!(size_label(1536), "1536B");
        assert_eq!(size_label((1 << 20) + (1 << 10)), "1025KiB");
    }
}
