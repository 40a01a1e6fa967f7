//! `cargo gpubench --device all` / `--device 0,2,5`: every listed GPU of the node at once, one
//! process per GPU (each the single-GPU run, with its own per-UUID lock), one results file per
//! GPU named by UUID, a combined table, and the worst of the GPUs' exit codes. With
//! `--save-baseline NAME --per-gpu` each GPU's process saves its own per-card baseline.

use std::ffi::OsString;
use std::path::PathBuf;

use gpubench::error::{Error, Result};
use gpubench::fleet::report::{devices_table, side_by_side};
use gpubench::results::ResultsDocument;
use gpubench::runner::devices::worst_exit_code;
use gpubench::runner::fanout::{DeviceRun, run_devices};
use gpubench::runner::{self, archive};

use crate::cli::RunArgs;
use gpubench::pipeline::judge;

pub fn run_many(args: RunArgs) -> Result<i32> {
    // With --per-gpu every GPU's process saves its own card's baseline (the before/after form
    // of an upgrade); a class baseline comes from several GPUs' results through `fleet`.
    if args.save_baseline.is_some() && !args.baseline.per_gpu {
        return Err(Error::Usage(
            "--save-baseline saves one GPU's run; for several GPUs, add --per-gpu (one baseline per card), or save a class baseline from their results with `cargo gpubench fleet DIR --save-envelope PATH`".into(),
        ));
    }
    if args.outputs.files().any() {
        return Err(Error::Usage(
            "--markdown, --junit, --verdicts-json and --html name one file: with several GPUs, use `cargo gpubench fleet` on the results folder".into(),
        ));
    }
    super::run::judge_request(&args).check_names()?;
    gpubench::device::preflight()?;
    let visible = gpubench::device::device_count()?;
    let ordinals = args.device.resolve(visible)?;
    let uuids = ordinals.iter().map(|&n| gpubench::device::uuid_without_context(n)).collect::<Result<Vec<_>>>()?;

    // Build or unpack once, so that the GPUs' processes only run.
    let (child_archive, default_dir): (Option<PathBuf>, PathBuf) = match &args.archive {
        Some(path) => {
            let root = judge::current_dir()?;
            let unpacked = root.join("gpubench-unpacked");
            archive::open(path, &unpacked)?;
            (Some(if path.is_dir() { path.clone() } else { unpacked }), root.join("gpubench-results"))
        }
        None => {
            let ws = runner::workspace(args.manifest_path.as_deref())?;
            eprintln!("building the bench targets (cargo bench --no-run; cargo's progress follows)");
            runner::build_benches(args.manifest_path.as_deref(), &args.benches, &args.cargo.options())?;
            (None, ws.target_dir.join("gpubench").join("devices"))
        }
    };
    let dir = args.output.clone().unwrap_or(default_dir);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let runs: Vec<DeviceRun> =
        ordinals.iter().zip(&uuids).map(|(&ordinal, uuid)| DeviceRun::in_dir(ordinal, uuid, &dir)).collect();
    eprintln!("measuring {} GPUs at once ({}), results in {}", runs.len(), uuids.join(", "), dir.display());
    // Ctrl-C reaches the GPUs' processes too: they stop after writing what finished, and this
    // process waits for them and reports (exit code 130).
    super::run::install_interrupt_handler();
    let exe = std::env::current_exe().map_err(|e| Error::io("current executable", e))?;
    let parent_args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let outcomes = run_devices(&exe, &parent_args, &runs, child_archive.as_deref())?;

    let docs: Vec<&ResultsDocument> = outcomes.iter().filter_map(|o| o.doc.as_ref()).collect();
    if args.format.json {
        crate::output::emit(serde_json::to_string_pretty(&docs).expect("results serialise"));
    } else {
        if !docs.is_empty() {
            crate::output::emit(side_by_side(&docs));
        }
        crate::output::emit(devices_table(&outcomes));
    }
    eprintln!("results: {} (one <UUID>.json and <UUID>.log per GPU)", dir.display());
    Ok(worst_exit_code(&outcomes.iter().map(|o| o.code).collect::<Vec<_>>()))
}
