//! `cargo gpubench calibrate PATH...`: leave-one-run-out and leave-one-card-out A/A and
//! injected shifts over recorded runs, no GPU needed.

use gpubench::error::Result;
use gpubench::report::calibration_markdown;
use gpubench::verdict::calibrate::calibrate as run_calibration;
use gpubench::verdict::corpus::gather;

use crate::cli::{BaselinePlace, CalibrateArgs};
use gpubench::pipeline::judge;

pub fn calibrate(args: CalibrateArgs) -> Result<i32> {
    let place = BaselinePlace { baseline_dir: None, config: args.config.clone() };
    let config = place.get().config(&judge::current_dir()?)?;
    let corpus = gather(&args.paths)?;
    for s in &corpus.skipped {
        eprintln!("skipped {s}");
    }
    let c = run_calibration(corpus.runs, &config.rule)?;
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
