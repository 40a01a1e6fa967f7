//! The main job: flags in, [`gpubench::pipeline::run`] over them, shown on the terminal.

use std::time::Duration;

use gpubench::error::{Result, exit};
use gpubench::harness::Profile;
use gpubench::pipeline::{self, JudgeRequest, Request};
use gpubench::runner::interrupt;
use gpubench::runner::lock::WaitPolicy;

use crate::cli::RunArgs;
use crate::render::Terminal;

pub fn run(args: RunArgs) -> Result<i32> {
    if let Some(f) = &args.filter {
        gpubench::harness::validate_filter(f)?;
    }
    let Some(device) = args.device.single() else {
        return super::devices::run_many(args);
    };
    install_interrupt_handler();
    let mut terminal = Terminal::new(args.verbose, args.format.json, args.outputs.all);
    pipeline::run(&request(&args, device), &mut terminal)
}

/// The pipeline's request for GPU `device`.
fn request(args: &RunArgs, device: usize) -> Request {
    Request {
        profile: match (args.quick, args.full) {
            (true, _) => Profile::Quick,
            (_, true) => Profile::Full,
            _ => Profile::Default,
        },
        filter: args.filter.clone(),
        device,
        benches: args.benches.clone(),
        archive: args.archive.clone(),
        manifest_path: args.manifest_path.clone(),
        cargo: args.cargo.options(),
        output: args.output.clone(),
        timeout: Duration::from_secs(args.timeout),
        discard_throttled: args.discard_throttled,
        exclusive: args.exclusive,
        wait: if args.no_wait { WaitPolicy::NoWait } else { WaitPolicy::Wait },
        history: args.history.clone(),
        judge: judge_request(args),
        reports: args.outputs.files(),
        fail_on: args.outputs.fail_on.unwrap_or_default(),
    }
}

/// What the run is judged against.
pub(super) fn judge_request(args: &RunArgs) -> JudgeRequest {
    JudgeRequest {
        place: args.place.get(),
        baseline: args.baseline.baseline.clone(),
        no_baseline: args.baseline.no_baseline,
        per_gpu: args.baseline.per_gpu,
        save_baseline: args.save_baseline.clone(),
        append: args.append,
        allow_other_class: args.outputs.allow_other_class,
    }
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
