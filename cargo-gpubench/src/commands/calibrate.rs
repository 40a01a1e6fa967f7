//! `cargo gpubench calibrate PATH...`: leave-one-run-out and leave-one-card-out A/A and
//! injected shifts over recorded runs, no GPU needed.

use gpubench::error::Result;
use gpubench::report::calibration_markdown;
use gpubench::verdict::calibrate::calibrate as run_calibration;

use crate::cli::{BaselinePlace, CalibrateArgs};
use gpubench::pipeline::judge;

pub fn calibrate(args: CalibrateArgs) -> Result<i32> {
    let place = BaselinePlace { baseline_dir: None, config: args.config.clone() };
    let config = place.get().config(&judge::current_dir()?)?;
    // Regular files only, symbolic links to folders not followed, each document within the
    // size limit, every run checked (finite statistics that agree with their samples).
    let (runs, skipped) = gpubench::results::scan::runs(&args.paths)?;
    for s in &skipped {
        eprintln!("skipped {s}");
    }
    if runs.is_empty() {
        return Err(gpubench::Error::Usage("no results or baseline files found in the given paths".into()));
    }
    let c = run_calibration(runs, &config.rule)?;
    for s in &c.skipped {
        eprintln!("left out {s}");
    }
    if args.format.json {
        let text = serde_json::to_string_pretty(&c).map_err(|e| gpubench::Error::Usage(e.to_string()))?;
        crate::output::emit(text);
    } else {
        crate::output::emit_raw(calibration_markdown(&c));
    }
    Ok(gpubench::error::exit::OK)
}
