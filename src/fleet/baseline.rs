//! A class baseline from a fleet group: the runs of every card of the group, in the baseline
//! file format of `--save-baseline` ([`crate::baseline::Baseline`]), so that a new card is
//! judged against what the class does.

use super::analysis::GroupKey;
use super::input::Loaded;
use crate::baseline::{Baseline, BaselineKey};
use crate::error::{Error, Result};

/// Builds the class baseline of `group` (default: the largest group) from the runs in
/// `loaded`, oldest first, named `name` (`None`: the class's default baseline).
pub fn class_baseline(loaded: &Loaded, group: &GroupKey, name: Option<&str>, now_unix_s: u64) -> Result<Baseline> {
    let mut runs: Vec<_> = super::analysis::groups(loaded)
        .remove(group)
        .ok_or_else(|| Error::Usage(format!("no runs of {}", group.describe())))?
        .into_values()
        .flatten()
        .map(|r| r.doc.clone())
        .collect();
    runs.sort_by_key(|r| r.created_unix_s);
    let first = runs.first().ok_or_else(|| Error::Usage("no runs to make a baseline of".into()))?;
    let key = BaselineKey::for_gpu(&first.gpu, name, false)?;
    Baseline::from_runs(&key, runs, now_unix_s)
}

/// Builds the class baseline of `group` and writes it to `path` through the guard of every
/// baseline save ([`crate::baseline::guard`], [`crate::baseline::check_baseline`]): refused
/// (nothing written) when a statistic would not be finite, and, unless `force`, when a run was
/// measured beside another GPU process, throttled, given twice or of another configuration.
/// The file is written atomically and read back before it replaces the old one, which is kept
/// as `<path>.previous`. Returns the baseline and what the replaced file held ("16 runs of 8
/// cards"), if there was one.
pub fn save_class_baseline(
    loaded: &Loaded,
    group: &GroupKey,
    path: &std::path::Path,
    force: bool,
    now_unix_s: u64,
) -> Result<(Baseline, Option<String>)> {
    use crate::baseline::guard;
    let refused = |why: String| Error::data(path, format!("refused to save: {why}; nothing was written"));
    let baseline = class_baseline(loaded, group, None, now_unix_s)?;
    crate::baseline::check_baseline(&baseline).map_err(&refused)?;
    let old = match crate::results::read_document(path) {
        Ok(bytes) => Baseline::parse(path, &bytes).ok(),
        Err(_) => None,
    };
    let problems = guard::problems(&baseline.runs, None, false);
    if let Some(first) = problems.first()
        && !force
    {
        let more =
            if problems.len() > 1 { format!(" (and {} more problems)", problems.len() - 1) } else { String::new() };
        return Err(refused(format!("{first}{more} (--force saves anyway)")));
    }
    let mut bytes = crate::results::to_json_bytes(&baseline, false).map_err(|e| refused(e.to_string()))?;
    bytes.push(b'\n');
    let bytes = crate::results::stored_as(path, bytes);
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file()) {
        let raw = crate::results::read_to_end_limited(
            path,
            crate::results::open_regular(path)?,
            crate::results::document_limit(),
            "the file",
        )?;
        crate::results::write_atomic(&crate::baseline::previous_path(path), &raw)?;
    }
    crate::results::write_atomic_checked(path, &bytes, |back| {
        let read = Baseline::parse(path, back).map_err(|e| refused(format!("it would not read back: {e}")))?;
        crate::baseline::check_baseline(&read).map_err(|why| refused(format!("it would not read back: {why}")))
    })?;
    Ok((baseline, old.map(|b| guard::describe_runs(&b.runs))))
}
