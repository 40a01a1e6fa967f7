//! The main job: build (or unpack) the benches, run them on the GPU, write and show the results.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use gpubench::device::Gpu;
use gpubench::error::{Error, Result, exit};
use gpubench::harness::Profile;
use gpubench::report::summary_table;
use gpubench::results::Settings;
use gpubench::runner::{self, ExecOptions, RunHeader, archive};

use crate::cli::RunArgs;
use crate::progress::Progress;

pub fn run(args: RunArgs) -> Result<i32> {
    if let Some(f) = &args.filter {
        regex_check(f)?;
    }
    let profile = match (args.quick, args.full) {
        (true, _) => Profile::Quick,
        (_, true) => Profile::Full,
        _ => Profile::Default,
    };
    // Fail fast, before any build, when there is no GPU to measure.
    let gpu = Gpu::open(args.device)?;
    let (identity, stack) = (gpu.identity().clone(), gpu.stack().clone());
    drop(gpu);

    let (binaries, work_dir, default_output) = match &args.archive {
        Some(path) => {
            let base = std::env::current_dir().map_err(|e| Error::io(".", e))?;
            let bins = archive::open(path, &base.join("gpubench-unpacked"))?;
            (bins, base.join("gpubench-work"), base.join("gpubench-results.json"))
        }
        None => {
            let ws = runner::workspace(args.manifest_path.as_deref())?;
            let bins = runner::build_benches(args.manifest_path.as_deref(), &args.benches)?;
            let dir = ws.target_dir.join("gpubench");
            (bins, dir.join("work"), dir.join("results.json"))
        }
    };
    let binaries: Vec<_> =
        binaries.into_iter().filter(|b| args.benches.is_empty() || args.benches.contains(&b.name)).collect();
    if binaries.is_empty() {
        return Err(Error::Usage("no bench targets to run".into()));
    }
    let opts = ExecOptions {
        profile,
        filter: args.filter.clone(),
        device: args.device,
        work_dir,
        timeout: Duration::from_secs(args.timeout),
        discard_throttled: args.discard_throttled,
    };
    let header = RunHeader {
        gpu: identity,
        stack,
        settings: Settings {
            profile: profile.name().into(),
            filter: args.filter.clone(),
            sample_size: profile.sample_size(),
            warm_up_s: profile.warm_up().as_secs_f64(),
            measurement_s: profile.measurement().as_secs_f64(),
        },
        created_unix_s: SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
    };
    let mut progress = Progress::new(args.verbose);
    let (doc, failure) = runner::run_all(&binaries, &opts, header, &mut |e| progress.event(e));
    progress.finish();

    let output: PathBuf = args.output.clone().unwrap_or(default_output);
    doc.write(&output)?;
    if args.json {
        crate::output::emit(format!("{}", serde_json::to_string_pretty(&doc).expect("results serialise")));
    } else {
        crate::output::emit(format!("{}", summary_table(&doc)));
        crate::output::emit(format!(
            "{} on {} (driver {}, CUDA {}, NVRTC {}): {} benchmarks in {:.1} s",
            if failure.is_some() { "stopped" } else { "measured" },
            doc.gpu.name,
            doc.stack.driver_version.as_deref().unwrap_or("unknown"),
            doc.stack.cuda_driver_api,
            doc.stack.nvrtc_version,
            doc.benchmarks.len(),
            doc.wall_time_s
        ));
        if let Some(t) = &doc.telemetry {
            crate::output::emit(format!("telemetry: {}", gpubench::telemetry::describe(t)));
        }
    }
    eprintln!("results: {}", output.display());
    match failure {
        Some(e) => Err(e),
        None => Ok(exit::OK),
    }
}

fn regex_check(filter: &str) -> Result<()> {
    gpubench::harness::validate_filter(filter)
}
