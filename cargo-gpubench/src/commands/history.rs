//! `cargo gpubench history`: import results into the history database, and show trends,
//! change points and their causes (no GPU).

use std::path::{Path, PathBuf};

use gpubench::config::Config;
use gpubench::error::{Error, Result, exit};
use gpubench::history::{self, AnalysisParams, DetectParams, HistoryStore, SeriesFilter, render};

use crate::cli::{HistoryArgs, HistoryCommand, HistoryImportArgs};

/// Runs `history` or `history import`.
pub fn history(args: HistoryArgs) -> Result<i32> {
    match args.command {
        Some(HistoryCommand::Import(i)) => import(i),
        None => show(args),
    }
}

fn import(args: HistoryImportArgs) -> Result<i32> {
    let found = history::import::collect(&args.paths)?;
    if found.records.is_empty() {
        return Err(Error::Usage(format!(
            "no results documents in {} ({} other JSON file{} skipped)",
            args.paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "),
            found.skipped.len(),
            if found.skipped.len() == 1 { "" } else { "s" }
        )));
    }
    let mut store = HistoryStore::open(&args.db)?;
    let o = store.add(&found.records)?;
    crate::output::emit(format!(
        "imported {} run{} into {} ({} already there, {} other JSON file{} skipped); it holds {} runs",
        o.added,
        if o.added == 1 { "" } else { "s" },
        args.db.display(),
        o.already,
        found.skipped.len(),
        if found.skipped.len() == 1 { "" } else { "s" },
        store.run_count()?
    ));
    Ok(exit::OK)
}

fn show(args: HistoryArgs) -> Result<i32> {
    let filter = SeriesFilter::new(args.metric.as_deref(), args.card.as_deref())?;
    if !(args.penalty > 0.0 && args.penalty.is_finite()) {
        return Err(Error::Usage("--penalty must be a positive number".into()));
    }
    let params = AnalysisParams {
        detect: DetectParams { penalty_factor: args.penalty, ..DetectParams::default() },
        min_effect: args.min_effect / 100.0,
        recent: args.fail_recent.unwrap_or(0),
        ..AnalysisParams::default()
    };
    let store = HistoryStore::open_existing(&args.db)?;
    let config = match &args.config {
        Some(path) => Config::load(path)?,
        None => Config::discover(&gpubench::pipeline::judge::current_dir()?)?,
    };
    let report = history::analyse_store(&store, &filter, &params, Some(&config.rule))?;
    if report.series.is_empty() {
        return Err(Error::Usage(format!("no series in {} match the --metric and --card given", args.db.display())));
    }
    let plots = match &args.plots {
        Some(dir) => history::plot::write_plots(dir, &report)?,
        None => Vec::new(),
    };
    if let Some(md) = &args.markdown {
        let links: Vec<(String, String)> = plots
            .iter()
            .map(|(title, file)| {
                let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                let link = match &args.plot_url {
                    Some(url) => format!("{}/{name}", url.trim_end_matches('/')),
                    None => relative_to(file, md.parent()),
                };
                (title.clone(), link)
            })
            .collect();
        gpubench::results::write_atomic(md, render::history_markdown(&report, &links).as_bytes())?;
    }
    if args.format.json {
        crate::output::emit(render::history_json(&report));
    } else {
        crate::output::emit(render::history_table(&report));
        if let Some(dir) = &args.plots {
            eprintln!("plots: {} in {}", plots.len(), dir.display());
        }
    }
    if args.fail_recent.is_some() && report.has_recent() {
        return Ok(exit::CHANGE_POINT);
    }
    Ok(exit::OK)
}

/// `file` as a path relative to `base` where it lies under it, else as given.
fn relative_to(file: &Path, base: Option<&Path>) -> String {
    let base: PathBuf = base.filter(|b| !b.as_os_str().is_empty()).map(Path::to_path_buf).unwrap_or_default();
    file.strip_prefix(&base).unwrap_or(file).display().to_string()
}
