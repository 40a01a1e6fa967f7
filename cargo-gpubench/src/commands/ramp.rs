//! `cargo gpubench ramp`: the clock ramp after idle, raw against normalised latency.

use std::time::Duration;

use gpubench::error::{Result, exit};
use gpubench::experiments::clock_ramp::{self, RampSettings};
use gpubench::report::ramp_table;

use crate::cli::RampArgs;
use crate::output::emit;

pub fn ramp(args: RampArgs) -> Result<i32> {
    gpubench::device::preflight()?;
    let settings = RampSettings {
        idle: Duration::from_millis(args.idle_ms),
        launches: args.launches.max(1),
        ..Default::default()
    };
    eprintln!(
        "idling {} ms without a CUDA context, then {} launches of an L2-hit pointer chase",
        args.idle_ms, settings.launches
    );
    let trace = clock_ramp::run(args.gpu.device, settings)?;
    let summary = clock_ramp::summarize_trace(&trace);
    if !crate::output::save_and_emit_json(&trace, &summary, args.output.as_deref(), args.format.json)? {
        emit(ramp_table(&trace));
        emit(format!(
            "idle: NVML SM clock {} MHz; {:.0} ms from the end of idling to the first launch",
            trace.idle_nvml_mhz.map(|m| format!("{m:.0}")).unwrap_or_else(|| "-".into()),
            trace.setup_ms
        ));
        let nvml: Vec<String> =
            trace.nvml_after_idle.iter().take(12).map(|(ms, mhz)| format!("{ms:.0} ms: {mhz:.0}")).collect();
        if !nvml.is_empty() {
            emit(format!("NVML SM clock after idling (ms since the end of idling: MHz): {}", nvml.join(", ")));
        }
        if let Some(s) = summary {
            emit(format!(
                "SM clock {:.0} -> {:.0} MHz: raw latency {:.1} -> {:.1} ns per access (spread {:.1}%), \
                 normalised {:.1} cycles (spread {:.2}%)",
                s.clock_min_mhz,
                s.clock_max_mhz,
                s.ns_at_min_clock,
                s.ns_at_max_clock,
                s.raw_spread_pct,
                s.cycles_median,
                s.normalized_spread_pct
            ));
        }
    }
    Ok(exit::OK)
}
