//! `cargo gpubench load`: the clock under a sustained load, raw against normalised throughput.

use std::time::Duration;

use gpubench::device::Gpu;
use gpubench::error::{Result, exit};
use gpubench::experiments::clock_load::{self, LoadSettings};
use gpubench::report::load_table;

use crate::cli::LoadArgs;
use crate::output::emit;

pub fn load(args: LoadArgs) -> Result<i32> {
    let gpu = Gpu::open(args.gpu.device)?;
    let settings = LoadSettings { duration: Duration::from_secs(args.seconds.max(1)), ..Default::default() };
    eprintln!("holding a tensor-core and memory load on {} for {} s", gpu.identity().name, args.seconds);
    let trace = clock_load::run(&gpu, settings)?;
    let summary = clock_load::summarize(&trace);
    if crate::output::save_and_emit_json(&trace, &summary, args.output.as_deref(), args.format.json)? {
        return Ok(exit::OK);
    }
    emit(load_table(&trace));
    if let Some(s) = summary {
        emit(format!(
            "{} of {} launches throttled; SM clock {:.0} .. {:.0} MHz, power up to {} W (limit {}): \
             shared-memory latency {:.1} .. {:.1} ns per access (spread {:.1}%), {:.1} cycles (spread {:.2}%)",
            s.throttled,
            s.launches,
            s.clock_min_mhz,
            s.clock_max_mhz,
            s.power_max_w.map(|w| format!("{w:.0}")).unwrap_or_else(|| "-".into()),
            trace.power_limit_w.map(|w| format!("{w:.0} W")).unwrap_or_else(|| "unknown".into()),
            s.ns_at_min_clock,
            s.ns_at_max_clock,
            s.raw_spread_pct,
            s.cycles_median,
            s.normalized_spread_pct
        ));
    }
    Ok(exit::OK)
}
