//! `cargo gpubench dissect`: measure the memory hierarchy (or re-infer from saved sweeps) and
//! write the report, JSON and plots into a folder.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use gpubench::device::Gpu;
use gpubench::dissect::output::{self, DISSECT_FILE};
use gpubench::dissect::plan::STAGES;
use gpubench::dissect::{self, Options, Progress};
use gpubench::error::{Error, Result, exit};
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::DissectArgs;

pub fn dissect(args: DissectArgs) -> Result<i32> {
    let (sweeps, out, measured, failure) = match &args.from {
        Some(dir) => {
            let sweeps = output::read_sweeps(dir)?;
            (sweeps, args.out.clone().unwrap_or_else(|| dir.clone()), false, None)
        }
        None => {
            let gpu = Gpu::open(args.gpu.device)?;
            let opts = if args.quick { Options::QUICK } else { Options::DEFAULT };
            let out = args.out.clone().unwrap_or_else(default_folder);
            let bar = progress_bar();
            let mut last_stage = usize::MAX;
            let mut show = |p: &Progress| match &bar {
                Some(bar) => {
                    bar.set_position(p.stage as u64);
                    bar.set_message(p.label.clone());
                }
                None if p.stage != last_stage => {
                    last_stage = p.stage;
                    eprintln!("[{}/{}] {}", p.stage + 1, p.stages, STAGES[p.stage]);
                }
                None => {}
            };
            let outcome = dissect::measure(&gpu, opts, &mut show);
            if let Some(bar) = &bar {
                bar.finish_and_clear();
            }
            let outcome = outcome?;
            (outcome.sweeps, out, true, outcome.error)
        }
    };
    let d = dissect::analyze(&sweeps);
    let files = dissect::write_folder(&out, &sweeps, &d, measured)?;
    if args.format.json {
        let text = std::fs::read_to_string(out.join(DISSECT_FILE)).map_err(|e| Error::io(out.join(DISSECT_FILE), e))?;
        crate::output::emit_raw(&text);
    } else {
        crate::output::emit(output::report_text(&sweeps, &d));
    }
    eprintln!("{} files written under {}", files.len(), out.display());
    match failure {
        Some(e) => {
            eprintln!("the sweeps stopped early; the folder holds what was measured before:");
            Err(e)
        }
        None => Ok(exit::OK),
    }
}

fn default_folder() -> PathBuf {
    match gpubench::runner::workspace(None) {
        Ok(ws) => ws.target_dir.join("gpubench").join("dissect"),
        Err(_) => PathBuf::from("gpubench-dissect"),
    }
}

fn progress_bar() -> Option<ProgressBar> {
    std::io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::new(STAGES.len() as u64);
        bar.set_style(
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] stage {pos}/{len} {bar:20} {msg}")
                .expect("valid template"),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        bar
    })
}
