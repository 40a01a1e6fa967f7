//! `cargo gpubench report`: the summary of a results file.

use gpubench::error::{Result, exit};
use gpubench::report::summary_table;
use gpubench::results::ResultsDocument;

use crate::cli::ReportArgs;

pub fn report(args: ReportArgs) -> Result<i32> {
    let doc = ResultsDocument::read_checked(&args.results)?;
    if args.format.json {
        crate::output::emit(format!("{}", serde_json::to_string_pretty(&doc).expect("results serialise")));
    } else {
        crate::output::emit(format!("{}", summary_table(&doc)));
        crate::output::emit(format!(
            "{} ({} SMs, cc {}.{}), driver {}, CUDA {}, NVRTC {}; profile {}; {} benchmarks in {:.1} s",
            doc.gpu.name,
            doc.gpu.sm_count,
            doc.gpu.cc_major,
            doc.gpu.cc_minor,
            doc.stack.driver_version.as_deref().unwrap_or("unknown"),
            doc.stack.cuda_driver_api,
            doc.stack.nvrtc_version,
            doc.settings.profile,
            doc.benchmarks.len(),
            doc.wall_time_s
        ));
    }
    Ok(exit::OK)
}
