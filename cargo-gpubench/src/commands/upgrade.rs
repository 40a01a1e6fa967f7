//! `cargo gpubench upgrade`: two stacks alternately on the same GPUs, B judged against A per
//! card with the machine code compared ([`gpubench::upgrade`]); `--from DIR` judges a job's
//! folder again without a GPU.

use std::ffi::OsString;

use gpubench::baseline::validate_name;
use gpubench::error::Result;
use gpubench::pipeline::judge;
use gpubench::results::write_atomic;
use gpubench::upgrade::job::{self, JobObserver, JobRequest};
use gpubench::upgrade::rounds::RunOutcome;
use gpubench::upgrade::{StackSpec, UpgradeReport, judge_folder, report};

use crate::cli::UpgradeArgs;

pub fn upgrade(args: UpgradeArgs) -> Result<i32> {
    if let Some(name) = &args.before {
        validate_name(name)?;
    }
    if let Some(f) = &args.filter {
        gpubench::harness::validate_filter(f)?;
    }
    let root = judge::current_dir()?;
    let config = args.place.get().config(&root)?;
    let store = args.place.get().store(&config, &root);
    let fail_on = args.fail_on.unwrap_or_default();
    let report = match &args.from {
        Some(dir) => judge_folder(dir, &config.rule, fail_on, &store)?,
        None => {
            super::run::install_interrupt_handler();
            job::run(&request(&args), &config.rule, fail_on, &store, &mut Progress)?
        }
    };
    show(&args, &report)?;
    Ok(report.exit_code())
}

fn request(args: &UpgradeArgs) -> JobRequest {
    let stack = |label: &str,
                 archive: &Option<std::path::PathBuf>,
                 nvrtc: &Option<std::path::PathBuf>,
                 env: &[(String, String)]| {
        StackSpec {
            label: label.into(),
            archive: archive.clone().or_else(|| args.archive.clone()),
            nvrtc: nvrtc.clone(),
            env: env.to_vec(),
        }
    };
    let mut run_args: Vec<OsString> = Vec::new();
    if args.quick {
        run_args.push("--quick".into());
    }
    if args.full {
        run_args.push("--full".into());
    }
    for b in &args.benches {
        run_args.extend(["--bench".into(), OsString::from(b)]);
    }
    run_args.extend(["--timeout".into(), args.timeout.to_string().into()]);
    if let Some(f) = &args.filter {
        run_args.push(f.into());
    }
    JobRequest {
        stacks: [stack("A", &args.a, &args.a_nvrtc, &args.a_env), stack("B", &args.b, &args.b_nvrtc, &args.b_env)],
        before: args.before.clone(),
        rounds: args.rounds,
        device: args.device.clone(),
        out: args.out.clone(),
        run_args,
        manifest_path: args.manifest_path.clone(),
        benches: args.benches.clone(),
        cargo: args.cargo.options(),
        disassemble: !args.no_disassemble,
    }
}

fn show(args: &UpgradeArgs, r: &UpgradeReport) -> Result<()> {
    if args.format.json {
        crate::output::emit_raw(r.json());
    } else {
        crate::output::emit_raw(report::terminal(r, args.all));
    }
    type Render = fn(&UpgradeReport) -> String;
    let files: [(&Option<std::path::PathBuf>, Render); 3] = [
        (&args.markdown, report::markdown),
        (&args.junit, gpubench::report::junit::upgrade),
        (&args.verdicts_json, UpgradeReport::json),
    ];
    for (path, render) in files {
        if let Some(path) = path {
            write_atomic(path, render(r).as_bytes())?;
            eprintln!("wrote {}", path.display());
        }
    }
    let dir = args.from.as_ref().unwrap_or(&args.out);
    eprintln!("reports: {} (upgrade.json, upgrade.md, upgrade-junit.xml)", dir.display());
    Ok(())
}

/// Progress on stderr.
struct Progress;

impl JobObserver for Progress {
    fn note(&mut self, line: &str) {
        eprintln!("{line}");
    }

    fn run(&mut self, o: &RunOutcome) {
        let how = match &o.reason {
            None => "done".to_string(),
            Some(r) => format!("failed (exit {}): {r}", o.code),
        };
        eprintln!(
            "round {} stack {} on GPU {} ({}): {how}, {:.0} s",
            o.round, o.stack, o.card.ordinal, o.card.uuid, o.seconds
        );
    }
}
