//! The steps of [`super::run`], each usable on its own.

use std::path::PathBuf;

use super::{Judge, Observer, Request, judge};
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::results::{GpuIdentity, ResultsDocument, Settings, Stack};
use crate::runner::lock::{GpuLock, lock_dir};
use crate::runner::{self, BenchBinary, ExecOptions, RunHeader, archive, interrupt};

/// What [`plan`] settled before anything is built: the GPU, where things are, what the run will
/// be judged against, and the GPU's lock (held until the plan is dropped).
pub struct Plan {
    /// The GPU measured.
    pub gpu: GpuIdentity,
    /// Its driver and toolkit.
    pub stack: Stack,
    /// The workspace (None with an archive).
    pub workspace: Option<runner::Workspace>,
    /// The folder that holds gpubench.toml and baselines/: the workspace's root, or the current
    /// folder with an archive.
    pub root: PathBuf,
    /// The results file.
    pub output: PathBuf,
    /// Scratch folder of the bench processes.
    pub work_dir: PathBuf,
    /// Where an archive given as a .tar.gz is unpacked (one folder per GPU).
    pub unpack_dir: PathBuf,
    /// The baseline and configuration, read.
    pub judge: Judge,
    _lock: GpuLock,
}

/// Checks the request, opens the GPU (failing fast when there is none), finds the workspace or
/// archive, reads the configuration and the baseline, and takes the GPU's lock.
pub fn plan(req: &Request, obs: &mut dyn Observer) -> Result<Plan> {
    if let Some(f) = &req.filter {
        crate::harness::validate_filter(f)?;
    }
    req.judge.check_names()?;
    // A history database that cannot be opened fails here, before minutes of measuring.
    if let Some(db) = &req.history {
        crate::history::HistoryStore::open(db)?;
    }
    let gpu = Gpu::open(req.device)?;
    let (identity, stack) = (gpu.identity().clone(), gpu.stack().clone());
    drop(gpu);
    if req.exclusive {
        exclusive_check(&identity.uuid)?;
    }
    // The workspace (or, with an archive, the current folder) holds gpubench.toml and
    // baselines/; a bad configuration or baseline fails here, before the GPU is taken.
    let workspace = match &req.archive {
        Some(_) => None,
        None => Some(runner::workspace(req.manifest_path.as_deref())?),
    };
    let root = match &workspace {
        Some(ws) => ws.root.clone(),
        None => judge::current_dir()?,
    };
    let judge = Judge::prepare(&req.judge, &identity, &root, obs)?;
    // One run per GPU: a second one waits here (or refuses).
    let lock = GpuLock::acquire(&lock_dir(), &identity.uuid, req.wait, &mut |holder| {
        obs.waiting_for_gpu(&identity.uuid, holder)
    })?;
    let (work_dir, default_output) = match &workspace {
        Some(ws) => {
            let dir = ws.target_dir.join("gpubench");
            (dir.join(work_name("work", &identity.uuid)), dir.join("results.json"))
        }
        None => (root.join(work_name("gpubench-work", &identity.uuid)), root.join("gpubench-results.json")),
    };
    let output = req.output.clone().unwrap_or(default_output);
    let unpack_dir = root.join("gpubench-unpacked").join(work_name("gpu", &identity.uuid));
    Ok(Plan { gpu: identity, stack, workspace, root, output, work_dir, unpack_dir, judge, _lock: lock })
}

/// Builds the bench targets through cargo, or unpacks the archive; keeps the requested ones.
pub fn build(req: &Request, plan: &Plan) -> Result<Vec<BenchBinary>> {
    let binaries = match (&req.archive, &plan.workspace) {
        (Some(path), _) => archive::open(path, &plan.unpack_dir)?,
        (None, None) => return Err(Error::Usage("no cargo workspace and no --archive: nothing to run".into())),
        (None, Some(_)) => runner::build_benches(req.manifest_path.as_deref(), &req.benches, &req.cargo)
            .map_err(|e| if interrupt::requested() { Error::Interrupted } else { e })?,
    };
    let binaries: Vec<_> =
        binaries.into_iter().filter(|b| req.benches.is_empty() || req.benches.contains(&b.name)).collect();
    if binaries.is_empty() {
        return Err(Error::Usage("no bench targets to run".into()));
    }
    Ok(binaries)
}

/// Runs every bench executable and collects their records and criterion's estimates into one
/// results document; a failing bench stops the run and comes back beside what finished.
pub fn run_benches(
    req: &Request,
    plan: &Plan,
    binaries: &[BenchBinary],
    obs: &mut dyn Observer,
) -> (ResultsDocument, Option<Error>) {
    let opts = ExecOptions {
        profile: req.profile,
        filter: req.filter.clone(),
        device: req.device,
        work_dir: plan.work_dir.clone(),
        timeout: req.timeout,
        discard_throttled: req.discard_throttled,
    };
    let header = RunHeader {
        gpu: plan.gpu.clone(),
        stack: plan.stack.clone(),
        settings: Settings {
            profile: req.profile.name().into(),
            filter: req.filter.clone(),
            sample_size: req.profile.sample_size(),
            warm_up_s: req.profile.warm_up().as_secs_f64(),
            measurement_s: req.profile.measurement().as_secs_f64(),
        },
        created_unix_s: super::now_unix_s(),
    };
    let result = runner::run_all(binaries, &opts, header, &mut |e| obs.event(e));
    obs.benches_finished();
    result
}

/// Appends the run to the history database, when asked.
pub fn record_history(req: &Request, doc: &ResultsDocument, obs: &mut dyn Observer) -> Result<()> {
    let Some(db) = &req.history else { return Ok(()) };
    let o = crate::history::append_run(db, doc)?;
    let what = if o.added == 1 { "appended this run to" } else { "this run was already in" };
    obs.note(&format!("history: {what} {}", db.display()));
    Ok(())
}

/// Another process on the GPU (or no way to tell) fails the run before it starts.
fn exclusive_check(uuid: &str) -> Result<()> {
    let processes = match crate::telemetry::processes::foreign_now(uuid) {
        Ok(found) if found.is_empty() => return Ok(()),
        Ok(found) => format!("{} holds it", crate::telemetry::processes::describe_all(&found)),
        Err(why) => format!("{why}, so no other process can be ruled out"),
    };
    Err(Error::GpuShared { uuid: uuid.to_string(), processes })
}

/// A scratch folder of GPU `uuid` ("gpubench-work-GPU-..."): each GPU gets its own, which the
/// GPU's lock makes exclusive, so that runs on several GPUs from one folder (`--device all`, or
/// one command per GPU, which see their GPU as device 0 either way) do not clear each other's
/// records or unpack over each other.
fn work_name(base: &str, uuid: &str) -> String {
    let file = crate::runner::devices::results_file_name(uuid);
    format!("{base}-{}", file.trim_end_matches(".json"))
}

#[cfg(test)]
mod tests {
    use super::work_name;

    #[test]
    fn every_gpu_gets_its_own_scratch_folder_whatever_its_ordinal() {
        let a = work_name("gpubench-work", "GPU-40dec052-d4b3");
        let b = work_name("gpubench-work", "GPU-c0872886-8e44");
        assert_eq!(a, "gpubench-work-GPU-40dec052-d4b3");
        assert_ne!(a, b);
        // nothing in a UUID can leave the folder
        assert_eq!(work_name("work", "GPU/../x"), "work-GPU____x");
    }
}
