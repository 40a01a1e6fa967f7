//! Tables about the device itself: `info` and the clock-ramp experiment.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};

use crate::experiments::clock_load::LoadTrace;
use crate::experiments::clock_ramp::RampTrace;
use crate::results::{GpuIdentity, Stack};
use crate::telemetry::DeviceStatus;

/// Key / value table of the GPU's identity, software stack and current state.
pub fn info_table(gpu: &GpuIdentity, stack: &Stack, status: Option<&DeviceStatus>) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    let mut rows: Vec<(&str, String)> = vec![
        ("name", gpu.name.clone()),
        ("uuid", gpu.uuid.clone()),
        ("pci bus", gpu.pci_bus_id.clone()),
        ("class", gpu.class_key().slug()),
        ("board part number", opt(gpu.board_part_number.clone())),
        ("VBIOS", opt(gpu.vbios_version.clone())),
        ("compute capability", format!("{}.{}", gpu.cc_major, gpu.cc_minor)),
        ("SMs", gpu.sm_count.to_string()),
        ("L2", format!("{} KiB", gpu.l2_bytes >> 10)),
        (
            "shared memory per SM / block opt-in",
            format!("{} / {} KiB", gpu.smem_per_sm >> 10, gpu.smem_per_block_optin >> 10),
        ),
        (
            "memory",
            format!("{:.1} GiB, {}-bit bus", gpu.total_mem_bytes as f64 / (1u64 << 30) as f64, gpu.bus_width_bits),
        ),
        ("theoretical DRAM bandwidth", format!("{:.0} GB/s", gpu.peak_dram_bytes_per_s() / 1e9)),
        ("driver", opt(stack.driver_version.clone())),
        ("CUDA driver API", stack.cuda_driver_api.clone()),
        ("NVRTC", stack.nvrtc_version.clone()),
        ("bindings", stack.cudarc_feature.clone()),
    ];
    let mhz = |v: Option<u32>| v.map(|x| format!("{x} MHz"));
    match status {
        Some(s) => rows.extend([
            ("SM clock now / max", format!("{} / {}", opt(mhz(s.sm_mhz)), opt(mhz(s.sm_max_mhz)))),
            ("SM application clock", opt(mhz(s.sm_app_mhz))),
            ("memory clock now / max", format!("{} / {}", opt(mhz(s.mem_mhz)), opt(mhz(s.mem_max_mhz)))),
            (
                "power now / limit",
                format!(
                    "{} / {}",
                    opt(s.power_w.map(|w| format!("{w:.0} W"))),
                    opt(s.power_limit_w.map(|w| format!("{w:.0} W")))
                ),
            ),
            ("temperature", opt(s.temp_c.map(|c| format!("{c} C")))),
            ("performance state", opt(s.pstate.map(|p| format!("P{p}")))),
            ("ECC", opt(s.ecc_enabled.map(|e| if e { "on".into() } else { "off".into() }))),
            ("MIG", opt(s.mig_enabled.map(|e| if e { "on".into() } else { "off".into() }))),
            ("persistence mode", opt(s.persistence.map(|e| if e { "on".into() } else { "off".into() }))),
            ("clock event reasons now", if s.reasons.is_empty() { "none".into() } else { s.reasons.join(", ") }),
        ]),
        None => rows.push(("NVML", "unavailable".into())),
    }
    for (k, v) in rows {
        t.add_row(vec![k.to_string(), v]);
    }
    t
}

/// The clock-ramp trace, thinned to at most 25 rows (every launch while the clock moves).
pub fn ramp_table(trace: &RampTrace) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    t.set_header(vec!["launch", "ms", "kernel MHz", "NVML MHz", "ns/access", "cycles/access", ""]);
    let n = trace.points.len();
    let step = n.div_ceil(25).max(1);
    for (i, p) in trace.points.iter().enumerate() {
        let moving = i > 0 && (p.kernel_mhz - trace.points[i - 1].kernel_mhz).abs() > 5.0;
        if i % step != 0 && !moving && i + 1 != n {
            continue;
        }
        t.add_row(vec![
            p.launch.to_string(),
            format!("{:.2}", p.at_ms),
            format!("{:.0}", p.kernel_mhz),
            p.nvml_mhz.map(|m| format!("{m:.0}")).unwrap_or_else(|| "-".into()),
            format!("{:.2}", p.ns_per_access),
            format!("{:.2}", p.cycles_per_access),
            if p.cold { "cold lap".into() } else { String::new() },
        ]);
    }
    t
}

/// The load trace, thinned to about 30 rows (every launch whose reasons change is kept).
pub fn load_table(trace: &LoadTrace) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    t.set_header(vec!["s", "kernel MHz", "NVML MHz", "W", "C", "TFLOP/s", "ns/access", "cycles/access", "reasons"]);
    let n = trace.points.len();
    let step = n.div_ceil(30).max(1);
    let opt = |v: Option<f64>, d: usize| v.map(|x| format!("{x:.d$}")).unwrap_or_else(|| "-".into());
    for (i, p) in trace.points.iter().enumerate() {
        let changed = i > 0 && p.reasons != trace.points[i - 1].reasons;
        if i % step != 0 && !changed && i + 1 != n {
            continue;
        }
        t.add_row(vec![
            format!("{:.2}", p.at_ms / 1e3),
            format!("{:.0}", p.kernel_mhz),
            opt(p.nvml_mhz, 0),
            opt(p.power_w, 0),
            opt(p.temp_c, 0),
            format!("{:.1}", p.tflops),
            format!("{:.2}", p.ns_per_access),
            format!("{:.2}", p.cycles_per_access),
            p.reasons.join(", "),
        ]);
    }
    t
}
