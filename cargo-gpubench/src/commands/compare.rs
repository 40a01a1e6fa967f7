//! `cargo gpubench compare OLD NEW`: verdicts between two recorded files, no GPU needed.

use gpubench::baseline::RunsFile;
use gpubench::error::Result;
use gpubench::report::comparison_json;
use gpubench::verdict::{Side, check_comparable, compare as judge};

use crate::cli::{BaselinePlace, CompareArgs};
use gpubench::pipeline::judge;

pub fn compare(args: CompareArgs) -> Result<i32> {
    let place = BaselinePlace { baseline_dir: None, config: args.config.clone() };
    let config = place.get().config(&judge::current_dir()?)?;
    let old_file = RunsFile::read(&args.old)?;
    let per_card = match &old_file {
        RunsFile::Baseline(b) => b.gpu_uuid.clone(),
        RunsFile::Results(_) => None,
    };
    let noise = old_file.noise_model();
    let old = old_file.into_runs();
    let new = RunsFile::read(&args.new)?.into_runs();
    if let Some(newest) = new.last() {
        check_comparable(per_card.as_deref(), &old, &newest.gpu, args.outputs.allow_other_class)?;
    }
    let (old_label, new_label) = (args.old.display().to_string(), args.new.display().to_string());
    let old_side = Side { label: &old_label, runs: &old, noise: noise.as_ref() };
    let c = judge(old_side, Side::of(&new_label, &new), &config.rule)?;
    if args.format.json {
        crate::output::emit_raw(comparison_json(&c));
    }
    crate::render::verdicts(&c, args.outputs.all, args.format.json);
    args.outputs.files().write(&c, &mut crate::render::Notes)?;
    Ok(c.exit_code_with(args.outputs.fail_on.unwrap_or_default()))
}
