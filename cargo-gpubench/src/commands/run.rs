//! The main job: build (or unpack) the benches, run them on the GPU, write and show the results.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use gpubench::device::Gpu;
use gpubench::error::{Error, Result, exit};
use gpubench::harness::Profile;
use gpubench::report::summary_table;
use gpubench::results::Settings;
use gpubench::runner::lock::{GpuLock, WaitPolicy, lock_dir};
use gpubench::runner::{self, ExecOptions, RunHeader, archive, interrupt};

use crate::cli::RunArgs;
use crate::progress::Progress;

use super::{judge_run, verdicts};

pub fn run(args: RunArgs) -> Result<i32> {
    if let Some(f) = &args.filter {
        regex_check(f)?;
    }
    let Some(device) = args.device.single() else {
        return super::devices::run_many(args);
    };
    let profile = match (args.quick, args.full) {
        (true, _) => Profile::Quick,
        (_, true) => Profile::Full,
        _ => Profile::Default,
    };
    judge_run::check_args(&args)?;
    // A history database that cannot be opened fails here, before minutes of measuring.
    if let Some(db) = &args.history {
        gpubench::history::HistoryStore::open(db)?;
    }
    install_interrupt_handler();
    // Fail fast, before any build, when there is no GPU to measure.
    let gpu = Gpu::open(device)?;
    let (identity, stack) = (gpu.identity().clone(), gpu.stack().clone());
    drop(gpu);
    if args.exclusive {
        exclusive_check(&identity.uuid)?;
    }

    // The workspace (or, with --archive, the current folder) holds gpubench.toml and baselines/;
    // a bad configuration or baseline fails here, before the GPU is taken and minutes spent.
    let workspace = match &args.archive {
        Some(_) => None,
        None => Some(runner::workspace(args.manifest_path.as_deref())?),
    };
    let root = match &workspace {
        Some(ws) => ws.root.clone(),
        None => verdicts::current_dir()?,
    };
    let judge = judge_run::prepare(&args, &identity, &root)?;
    // One run per GPU: a second one waits here (or refuses with --no-wait).
    let policy = if args.no_wait { WaitPolicy::NoWait } else { WaitPolicy::Wait };
    let _lock = GpuLock::acquire(&lock_dir(), &identity.uuid, policy, &mut |holder| {
        eprintln!(
            "GPU {} is in use by another gpubench run ({holder}); waiting for it (Ctrl-C to give up)",
            identity.uuid
        )
    })?;

    let (binaries, work_dir, default_output) = match (&args.archive, workspace) {
        (Some(path), _) => {
            let bins = archive::open(path, &root.join("gpubench-unpacked"))?;
            (bins, root.join(work_name("gpubench-work", device)), root.join("gpubench-results.json"))
        }
        (None, None) => return Err(Error::Usage("no cargo workspace and no --archive: nothing to run".into())),
        (None, Some(ws)) => {
            let bins = runner::build_benches(args.manifest_path.as_deref(), &args.benches)
                .map_err(|e| if interrupt::requested() { Error::Interrupted } else { e })?;
            let dir = ws.target_dir.join("gpubench");
            (bins, dir.join(work_name("work", device)), dir.join("results.json"))
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
        device,
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
    if let Some(e) = failure {
        return Err(e);
    }
    let code = judge.finish(&args, &doc)?;
    if let Some(db) = &args.history {
        super::history::append(db, &doc)?;
    }
    Ok(code)
}

/// Ctrl-C or a termination signal stops the run after writing what finished (exit code 130);
/// a second Ctrl-C exits at once.
pub(super) fn install_interrupt_handler() {
    let _ = ctrlc::set_handler(|| {
        if interrupt::requested() {
            std::process::exit(exit::INTERRUPTED);
        }
        interrupt::request();
    });
}

/// `--exclusive`: another process on the GPU (or no way to tell) fails the run before it starts.
fn exclusive_check(uuid: &str) -> Result<()> {
    let processes = match gpubench::telemetry::processes::foreign_now(uuid) {
        Ok(found) if found.is_empty() => return Ok(()),
        Ok(found) => format!("{} holds it", gpubench::telemetry::processes::describe_all(&found)),
        Err(why) => format!("{why}, so no other process can be ruled out"),
    };
    Err(Error::GpuShared { uuid: uuid.to_string(), processes })
}

/// The scratch folder of GPU `device`: GPUs other than 0 get their own, so that several runs
/// (`--device all`) do not clear each other's records.
fn work_name(base: &str, device: usize) -> String {
    if device == 0 { base.to_string() } else { format!("{base}-{device}") }
}

fn regex_check(filter: &str) -> Result<()> {
    gpubench::harness::validate_filter(filter)
}
