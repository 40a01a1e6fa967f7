//! `cargo gpubench info`: what GPU this is and what state it is in.

use gpubench::device::Gpu;
use gpubench::error::{Result, exit};
use gpubench::report::info_table;
use gpubench::telemetry::device_status;

use crate::cli::InfoArgs;
use crate::output::emit;

pub fn info(args: InfoArgs) -> Result<i32> {
    let gpu = Gpu::open(args.gpu.device)?;
    let status = device_status(&gpu.identity().uuid);
    if args.format.json {
        let json = serde_json::json!({
            "gpu": gpu.identity(),
            "class": gpu.identity().class_key().slug(),
            "stack": gpu.stack(),
            "status": status.as_ref().ok(),
            "status_unavailable": status.as_ref().err(),
        });
        emit(serde_json::to_string_pretty(&json).expect("info serialises"));
    } else {
        emit(info_table(gpu.identity(), gpu.stack(), status.as_ref().ok()));
        if let Err(why) = &status {
            eprintln!("note: {why}");
        }
    }
    Ok(exit::OK)
}
