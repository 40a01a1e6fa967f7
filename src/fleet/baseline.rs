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
