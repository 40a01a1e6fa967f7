//! The step around a run that judges it: before the run, read the configuration and the
//! baseline (so that a bad file fails before minutes of measuring); after it, compare and save.

use std::path::Path;

use gpubench::baseline::{BaselineKey, RunsFile, SaveMode, Store, validate_name};
use gpubench::config::Config;
use gpubench::error::{Error, Result, exit};
use gpubench::results::{GpuIdentity, ResultsDocument};
use gpubench::runner::interrupt;
use gpubench::verdict::{Side, check_comparable, compare};

use super::baseline::now;
use super::verdicts::{self, is_file_argument};
use crate::cli::RunArgs;

/// Checks the baseline names before anything runs.
pub fn check_args(args: &RunArgs) -> Result<()> {
    if let Some(name) = args.save_baseline.as_deref().filter(|n| !n.is_empty()) {
        validate_name(name)?;
    }
    if let Some(name) = args.baseline.as_deref().filter(|n| !n.is_empty() && !is_file_argument(n)) {
        validate_name(name)?;
    }
    Ok(())
}

/// What the run will be judged against, read before it starts.
pub struct Judge {
    config: Config,
    store: Store,
    /// Label, runs, and the card a per-card baseline is for.
    baseline: Option<(String, Vec<ResultsDocument>, Option<String>)>,
    save_key: Option<BaselineKey>,
}

/// Reads the configuration, the baseline to compare with and (to refuse early) the baseline
/// a save would update, for a run on `gpu` in the workspace `root`.
pub fn prepare(args: &RunArgs, gpu: &GpuIdentity, root: &Path) -> Result<Judge> {
    let config = verdicts::config(&args.place, root)?;
    let store = verdicts::store(&args.place, &config, root);
    let baseline = if args.no_baseline {
        None
    } else {
        match args.baseline.as_deref() {
            Some(file) if is_file_argument(file) => {
                let read = RunsFile::read(Path::new(file))?;
                let per_card = match &read {
                    RunsFile::Baseline(b) => b.gpu_uuid.clone(),
                    RunsFile::Results(_) => None,
                };
                Some((file.to_string(), read.into_runs(), per_card))
            }
            requested => {
                let key = BaselineKey::for_gpu(gpu, requested.filter(|n| !n.is_empty()), args.per_gpu)?;
                match store.load(&key)? {
                    Some((path, b)) => Some((verdicts::shown(&path), b.runs, b.gpu_uuid)),
                    None if requested.is_some() => {
                        return Err(Error::Usage(format!(
                            "no {} in {} (`cargo gpubench baseline list` shows what there is)",
                            key.describe(),
                            verdicts::shown(store.dir())
                        )));
                    }
                    None => {
                        eprintln!(
                            "no {} in {}: the run will not be compared (save one with --save-baseline)",
                            key.describe(),
                            verdicts::shown(store.dir())
                        );
                        None
                    }
                }
            }
        }
    };
    // Refuse another card or class before minutes of measuring.
    if let Some((_, runs, per_card)) = &baseline {
        check_comparable(per_card.as_deref(), runs, gpu, args.outputs.allow_other_class)?;
    }
    let save_key = match &args.save_baseline {
        Some(name) => {
            let key = BaselineKey::for_gpu(gpu, Some(name), args.per_gpu)?;
            store.load(&key)?;
            Some(key)
        }
        None => None,
    };
    Ok(Judge { config, store, baseline, save_key })
}

impl Judge {
    /// Compares `doc` with the baseline, then saves it as a baseline when asked. Returns 1
    /// when a metric REGRESSED (or a verdict named by `--fail-on` occurred), else 0.
    pub fn finish(self, args: &RunArgs, doc: &ResultsDocument) -> Result<i32> {
        let mut code = exit::OK;
        if let Some((label, runs, _)) = &self.baseline {
            let current = [doc.clone()];
            let c = compare(Side { label, runs }, Side { label: "this run", runs: &current }, &self.config.rule)?;
            verdicts::emit(&c, &args.outputs, args.json)?;
            code = c.exit_code_with(args.outputs.fail_on.unwrap_or_default());
        }
        if let Some(key) = &self.save_key {
            let mode =
                if args.append { SaveMode::Append { max_runs: self.config.max_runs } } else { SaveMode::Replace };
            let (path, b) = self.store.save(key, vec![doc.clone()], mode, now())?;
            let runs = b.runs.len();
            eprintln!(
                "saved the {} ({runs} run{}) to {}",
                key.describe(),
                if runs == 1 { "" } else { "s" },
                verdicts::shown(&path)
            );
        }
        if interrupt::requested() {
            return Err(Error::Interrupted);
        }
        Ok(code)
    }
}
