//! Comparisons that must not be made: a per-card baseline and another card, or another GPU
//! class unless asked for.

use crate::error::{Error, Result};
use crate::results::{GpuIdentity, ResultsDocument};

/// Refuses a comparison that must not be made, with [`Error::Mismatch`] (exit code 10): a
/// per-card baseline (`baseline_uuid` set) and a new run measured on another card (`gpu`), or
/// a GPU of another class than the baseline's newest run unless `allow_other_class`. Takes the
/// GPU rather than the run, so that a run can be refused before it is measured.
pub fn check_comparable(
    baseline_uuid: Option<&str>,
    baseline: &[ResultsDocument],
    gpu: &GpuIdentity,
    allow_other_class: bool,
) -> Result<()> {
    if let Some(uuid) = baseline_uuid
        && gpu.uuid != uuid
    {
        return Err(Error::Mismatch(format!(
            "the baseline is for one card ({uuid}) and the new run is on {}: compare with a class baseline, or save a per-card baseline on this card",
            gpu.uuid
        )));
    }
    if let Some(old) = baseline.last() {
        let (a, b) = (old.gpu.class_key(), gpu.class_key());
        if a != b && !allow_other_class {
            return Err(Error::Mismatch(format!(
                "the baseline is for {} and the new run is on {}: pass --allow-other-class to compare them anyway",
                a.slug(),
                b.slug()
            )));
        }
    }
    Ok(())
}
