//! `cargo gpubench baseline list | show | save`.

use std::time::{SystemTime, UNIX_EPOCH};

use gpubench::baseline::{Baseline, BaselineKey, RunsFile, SaveMode, Store};
use gpubench::error::{Error, Result, exit};
use gpubench::report::{baseline_list_table, baseline_report};

use crate::cli::{
    BaselineCommand, BaselineListArgs, BaselineQuarantineArgs, BaselineRestoreArgs, BaselineSaveArgs, BaselineShowArgs,
};
use gpubench::pipeline::judge;

pub fn baseline(cmd: BaselineCommand) -> Result<i32> {
    match cmd {
        BaselineCommand::List(a) => list(a),
        BaselineCommand::Show(a) => show(a),
        BaselineCommand::Save(a) => save(a),
        BaselineCommand::Quarantine(a) => quarantine(a),
        BaselineCommand::Restore(a) => restore(a),
    }
}

fn restore(args: BaselineRestoreArgs) -> Result<i32> {
    let cwd = judge::current_dir()?;
    let config = args.place.get().config(&cwd)?;
    let store = args.place.get().store(&config, &cwd);
    let run = match RunsFile::read(&args.results)? {
        RunsFile::Results(r) => *r,
        RunsFile::Baseline(b) => b.newest().clone(),
    };
    let key = BaselineKey::for_gpu(&run.gpu, args.name.as_deref(), args.per_gpu)?;
    let (path, b) = store.restore(&key)?;
    eprintln!(
        "restored the {} ({}) to {}; the baseline it replaced is in {}",
        key.describe(),
        gpubench::baseline::guard::describe_runs(&b.runs),
        judge::shown(&path),
        judge::shown(&gpubench::baseline::previous_path(&path))
    );
    Ok(exit::OK)
}

fn quarantine(args: BaselineQuarantineArgs) -> Result<i32> {
    // Only a regular file is read (a named pipe would block) or moved.
    gpubench::results::check_regular_file(&args.file)?;
    let readable =
        gpubench::results::read_document(&args.file).is_ok_and(|bytes| Baseline::parse(&args.file, &bytes).is_ok());
    let moved = gpubench::baseline::quarantine(&args.file, now())?;
    let note = if readable { " (it was a readable baseline)" } else { "" };
    eprintln!("moved {} to {}{note}", judge::shown(&args.file), judge::shown(&moved));
    Ok(exit::OK)
}

fn list(args: BaselineListArgs) -> Result<i32> {
    let cwd = judge::current_dir()?;
    let config = args.place.get().config(&cwd)?;
    let store = args.place.get().store(&config, &cwd);
    let listed = store.list()?;
    let broken = listed.iter().filter(|l| l.baseline.is_err()).count();
    if args.format.json {
        let rows: Vec<serde_json::Value> = listed
            .iter()
            .map(|l| match &l.baseline {
                Ok(b) => serde_json::json!({
                    "path": l.path, "gpu_class": b.gpu_class.slug(), "name": b.name, "gpu_uuid": b.gpu_uuid,
                    "runs": b.runs.len(), "profile": b.settings.profile, "driver": b.stack.driver_version,
                    "nvrtc": b.stack.nvrtc_version, "updated_unix_s": b.updated_unix_s,
                }),
                Err(e) => serde_json::json!({ "path": l.path, "error": e.to_string() }),
            })
            .collect();
        crate::output::emit(serde_json::to_string_pretty(&rows).expect("rows serialise"));
    } else if listed.is_empty() {
        crate::output::emit(format!("no baselines in {}", judge::shown(store.dir())));
    } else {
        crate::output::emit(baseline_list_table(&listed));
    }
    for l in listed.iter().filter(|l| l.baseline.is_err()) {
        if let Err(e) = &l.baseline {
            eprintln!("error: {e}");
        }
    }
    Ok(if broken > 0 { exit::DATA } else { exit::OK })
}

fn show(args: BaselineShowArgs) -> Result<i32> {
    let cwd = judge::current_dir()?;
    let config = args.place.get().config(&cwd)?;
    let store = args.place.get().store(&config, &cwd);
    let (path, baseline) = find(&store, &args.target)?;
    if args.format.json {
        crate::output::emit(serde_json::to_string_pretty(&baseline).expect("baselines serialise"));
    } else {
        crate::output::emit_raw(baseline_report(&baseline, &judge::shown(&path), &config.rule, args.all));
    }
    Ok(exit::OK)
}

/// A baseline file by path, or in the folder by file stem, name or class slug.
fn find(store: &Store, target: &str) -> Result<(std::path::PathBuf, Baseline)> {
    let as_path = std::path::Path::new(target);
    if as_path.is_file() {
        let bytes = gpubench::results::read_document(as_path)?;
        return Ok((as_path.to_path_buf(), Baseline::parse(as_path, &bytes)?));
    }
    if judge::is_file_argument(target) || as_path.exists() {
        // A file that is missing or not a regular file: a data error (exit code 5).
        gpubench::results::check_regular_file(as_path)?;
    }
    let listed = store.list()?;
    let mut matches = Vec::new();
    for l in listed {
        let stem = l.path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let hit = stem == target
            || match &l.baseline {
                Ok(b) => {
                    b.name.as_deref() == Some(target)
                        || (b.name.is_none() && b.gpu_uuid.is_none() && b.gpu_class.slug() == target)
                }
                Err(_) => false,
            };
        if hit {
            matches.push(l);
        }
    }
    match matches.len() {
        0 => Err(Error::Usage(format!(
            "no baseline `{target}` in {} (`cargo gpubench baseline list` shows what there is)",
            judge::shown(store.dir())
        ))),
        1 => {
            let l = matches.pop().expect("one match");
            Ok((l.path, l.baseline?))
        }
        _ => {
            let names: Vec<String> = matches.iter().map(|l| l.path.display().to_string()).collect();
            Err(Error::Usage(format!("`{target}` matches several baselines: {}; give the file", names.join(", "))))
        }
    }
}

fn save(args: BaselineSaveArgs) -> Result<i32> {
    let cwd = judge::current_dir()?;
    let config = args.place.get().config(&cwd)?;
    let store = args.place.get().store(&config, &cwd);
    let mut runs = Vec::new();
    for path in &args.results {
        match RunsFile::read(path)? {
            RunsFile::Results(r) => runs.push(*r),
            RunsFile::Baseline(_) => {
                return Err(Error::Usage(format!("{} is a baseline; give results files", path.display())));
            }
        }
    }
    let first = runs.first().ok_or_else(|| Error::Usage("no results files given".into()))?;
    let key = BaselineKey::for_gpu(&first.gpu, args.name.as_deref(), args.per_gpu)?;
    let mode = if args.append { SaveMode::Append { max_runs: config.max_runs } } else { SaveMode::Replace };
    // A file that is not a readable baseline is reported by the save itself, untouched.
    let existing = store.load(&key).ok().flatten().map(|(_, b)| b);
    // Every run given is checked: with --cards the spreads are learned from all of them.
    let problems = gpubench::baseline::guard::problems(&runs, existing.as_ref(), args.append);
    if !problems.is_empty() && !args.force {
        let more =
            if problems.len() > 1 { format!(" (and {} more problems)", problems.len() - 1) } else { String::new() };
        return Err(Error::data(
            store.path(&key),
            format!("refused to save: {}{more}; the baseline was left as it is (--force saves anyway)", problems[0]),
        ));
    }
    for p in &problems {
        eprintln!("warning: saved anyway (--force): {p}");
    }
    let (path, b) = match args.cards {
        Some(n) => {
            let every = runs.clone();
            let measured = every.iter().map(|r| r.gpu.uuid.as_str()).collect::<std::collections::BTreeSet<_>>().len();
            let (keep, share) = gpubench::baseline::span::spanning_cards(&every, n as usize);
            runs.retain(|r| keep.contains(&r.gpu.uuid));
            eprintln!(
                "kept the runs of {} of {measured} cards ({}), which span {:.0} % of the range every card spans (mean over metrics); the spreads are learned from all {} runs of the {measured} cards",
                keep.len(),
                keep.join(", "),
                share * 100.0,
                every.len()
            );
            store.save_learned_from(&key, runs, &every, now())?
        }
        None => store.save(&key, runs, mode, now())?,
    };
    let before = match &existing {
        Some(old) => format!(
            ", replacing {} (kept in {}; `cargo gpubench baseline restore` puts it back)",
            gpubench::baseline::guard::describe_runs(&old.runs),
            judge::shown(&gpubench::baseline::previous_path(&path))
        ),
        None => String::new(),
    };
    eprintln!(
        "saved the {} ({} run{}) to {}: {}{before}",
        key.describe(),
        b.runs.len(),
        if b.runs.len() == 1 { "" } else { "s" },
        judge::shown(&path),
        gpubench::baseline::guard::describe_runs(&b.runs),
    );
    Ok(exit::OK)
}

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}
