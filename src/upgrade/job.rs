//! The upgrade job from start to end: check the stacks, find the GPUs, compile and disassemble
//! each stack's kernels, run the rounds, judge each card, write the reports. And the same
//! judging over a job's folder without a GPU (`--from`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::code::Disassembler;
use super::judge::{CardJudgement, StackInfo, UPGRADE_SCHEMA, UpgradeReport, judge_card, overall};
use super::listings::{self, Listings};
use super::rounds::{Card, RoundPlan, RunOutcome, read_card, run_rounds};
use super::stacks::{self, PreparedStack, StackSpec};
use crate::baseline::{BaselineKey, Store};
use crate::error::{Error, Result};
use crate::results::{read_json, write_atomic, write_json};
use crate::runner::devices::DeviceSelection;
use crate::runner::{self, archive, interrupt};
use crate::verdict::{FailOn, Rule};

/// Schema tag of the job's `stacks.json`.
pub const PLAN_SCHEMA: &str = "gpubench.upgrade-plan/1";

/// What the job was asked: kept in `stacks.json` so that `--from` reports the same stacks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanFile {
    /// Always [`PLAN_SCHEMA`].
    pub schema: String,
    /// A's and B's descriptions.
    pub stacks: [String; 2],
    /// Rounds.
    pub rounds: usize,
    /// The before/after form: A is the per-card baseline of this name.
    pub before: Option<String>,
    /// How machine code was compared, when no disassembler was found.
    pub code_note: Option<String>,
}

/// The job's request, every flag validated.
#[derive(Debug, Clone)]
pub struct JobRequest {
    /// A and B; A is ignored in the before/after form.
    pub stacks: [StackSpec; 2],
    /// Before/after on the same card: A is each card's per-GPU baseline of this name, saved
    /// before the upgrade (`--save-baseline NAME --per-gpu`); only B runs.
    pub before: Option<String>,
    /// Rounds.
    pub rounds: usize,
    /// The GPUs.
    pub device: DeviceSelection,
    /// Output folder.
    pub out: PathBuf,
    /// Arguments every run gets (profile, filter, benches, timeout).
    pub run_args: Vec<OsString>,
    /// The workspace, when a stack is built from it.
    pub manifest_path: Option<PathBuf>,
    /// Bench targets to build for such a stack.
    pub benches: Vec<String>,
    /// Cargo's flags for that build.
    pub cargo: crate::runner::CargoOptions,
    /// Disassemble the kernels (off: cubin hashes only).
    pub disassemble: bool,
}

/// What the job tells as it goes.
pub trait JobObserver {
    /// A one-line note.
    fn note(&mut self, _line: &str) {}
    /// A run ended.
    fn run(&mut self, _outcome: &RunOutcome) {}
}

/// Runs the job: the stacks alternately on every card, then the judgement. Failing runs stop
/// the job with the run's own error and exit code.
pub fn run(
    req: &JobRequest,
    rule: &Rule,
    fail_on: FailOn,
    store: &Store,
    obs: &mut dyn JobObserver,
) -> Result<UpgradeReport> {
    if req.rounds == 0 {
        return Err(Error::Usage("--rounds must be at least 1".into()));
    }
    let measured: Vec<&StackSpec> =
        if req.before.is_some() { vec![&req.stacks[1]] } else { req.stacks.iter().collect() };
    for s in &measured {
        stacks::check(s)?;
    }
    crate::device::preflight()?;
    let ordinals = req.device.resolve(crate::device::device_count()?)?;
    let cards: Vec<Card> = ordinals
        .iter()
        .map(|&n| Ok(Card { ordinal: n, uuid: crate::device::uuid_without_context(n)? }))
        .collect::<Result<_>>()?;
    let archs: Vec<String> = ordinals.iter().map(|&n| crate::device::arch_without_context(n)).collect::<Result<_>>()?;
    run_on(req, &cards, &archs, rule, fail_on, store, obs)
}

/// The job on `cards` (of the architectures `archs`), found by [`run`].
pub fn run_on(
    req: &JobRequest,
    cards: &[Card],
    archs: &[String],
    rule: &Rule,
    fail_on: FailOn,
    store: &Store,
    obs: &mut dyn JobObserver,
) -> Result<UpgradeReport> {
    let mut archs = archs.to_vec();
    archs.sort();
    archs.dedup();
    let measured: Vec<&StackSpec> =
        if req.before.is_some() { vec![&req.stacks[1]] } else { req.stacks.iter().collect() };
    std::fs::create_dir_all(&req.out).map_err(|e| Error::io(&req.out, e))?;
    // Runs start in their card's folder: every path they get is absolute.
    let out = std::fs::canonicalize(&req.out).map_err(|e| Error::io(&req.out, e))?;
    let req = &JobRequest { out, ..req.clone() };
    let workspace = if measured.iter().any(|s| s.archive.is_none()) {
        obs.note("building the workspace's bench targets into an archive for the stacks without one");
        let bins = runner::build_benches(req.manifest_path.as_deref(), &req.benches, &req.cargo)?;
        let exe = std::env::current_exe().map_err(|e| Error::io("current executable", e))?;
        let path = req.out.join("workspace-archive.tar.gz");
        archive::create(&path, &bins, Some(&exe))?;
        Some(path)
    } else {
        None
    };
    let prepared: Vec<PreparedStack> =
        measured.iter().map(|s| stacks::prepare(s, &req.out, workspace.as_deref())).collect::<Result<_>>()?;

    let runs = req.out.join("runs");
    if runs.exists() {
        std::fs::remove_dir_all(&runs).map_err(|e| Error::io(&runs, e))?;
    }
    let code_note = listings_for(req, &prepared, &archs, obs)?;
    let plan_file = PlanFile {
        schema: PLAN_SCHEMA.into(),
        stacks: [describe_a(req), req.stacks[1].describe()],
        rounds: req.rounds,
        before: req.before.clone(),
        code_note,
    };
    write_json(&req.out.join("stacks.json"), &plan_file)?;

    let outcomes = if req.before.is_some() {
        run_rounds_b_only(req, &prepared[0], cards, obs)?
    } else {
        let plan = RoundPlan {
            stacks: [&prepared[0], &prepared[1]],
            cards,
            rounds: req.rounds,
            out: &req.out,
            run_args: &req.run_args,
        };
        run_rounds(&plan, &mut |o| obs.run(o))?
    };
    if let Some(failed) = outcomes.iter().find(|o| o.code != 0) {
        return Err(Error::BenchProcess {
            bench: format!(
                "stack {} round {} on GPU {} ({})",
                failed.stack, failed.round, failed.card.ordinal, failed.card.uuid
            ),
            reason: failed.reason.clone().unwrap_or_else(|| format!("exit {}", failed.code)),
            code: failed.code,
        });
    }
    if interrupt::requested() {
        return Err(Error::Interrupted);
    }
    judge_folder(&req.out, rule, fail_on, store)
}

fn describe_a(req: &JobRequest) -> String {
    match &req.before {
        Some(name) => format!("per-card baselines `{name}` (before the upgrade)"),
        None => req.stacks[0].describe(),
    }
}

/// B alone, round after round (the before/after form).
fn run_rounds_b_only(
    req: &JobRequest,
    b: &PreparedStack,
    cards: &[Card],
    obs: &mut dyn JobObserver,
) -> Result<Vec<RunOutcome>> {
    let plan = RoundPlan { stacks: [b, b], cards, rounds: req.rounds, out: &req.out, run_args: &req.run_args };
    let mut all = Vec::new();
    for round in 1..=req.rounds {
        let step = super::rounds::run_one(&plan, b, round)?;
        let failed = step.iter().any(|o| o.code != 0);
        for o in &step {
            obs.run(o);
        }
        all.extend(step);
        if failed || interrupt::requested() {
            break;
        }
    }
    Ok(all)
}

/// Compiles and disassembles each measured stack's kernels for each architecture; the note to
/// report when no disassembler is found (or disassembly is off).
fn listings_for(
    req: &JobRequest,
    prepared: &[PreparedStack],
    archs: &[String],
    obs: &mut dyn JobObserver,
) -> Result<Option<String>> {
    let code = req.out.join("code");
    if code.exists() {
        std::fs::remove_dir_all(&code).map_err(|e| Error::io(&code, e))?;
    }
    if !req.disassemble {
        return Ok(Some("--no-disassemble: machine code compared by cubin SHA-256 only".into()));
    }
    if req.before.is_some() {
        return Ok(Some(
            "before/after: the old stack's kernels cannot be compiled again; machine code compared by cubin SHA-256"
                .into(),
        ));
    }
    let Some(tool) = Disassembler::find() else {
        return Ok(Some(
            "no cuobjdump or nvdisasm on PATH, in $CUDA_HOME/bin or $CUDA_PATH/bin: machine code compared by cubin SHA-256 only".into(),
        ));
    };
    for arch in archs {
        for s in prepared {
            obs.note(&format!(
                "compiling stack {}'s kernels for {arch} and disassembling them ({})",
                s.label,
                tool.path.display()
            ));
            listings::compile(s, arch, &listings::dir(&req.out, arch, &s.label), &tool)?;
        }
    }
    Ok(None)
}

/// Judges the runs of a job's folder (`runs/<UUID>/a-N.json`, `b-N.json`) with the listings of
/// `code/<arch>/<a|b>` where present, writes `upgrade.json`, `upgrade.md` and
/// `upgrade-junit.xml` into it, and returns the report. In the before/after form (`stacks.json`
/// names the baseline), A is each card's per-GPU baseline of that name in `store`.
pub fn judge_folder(out: &Path, rule: &Rule, fail_on: FailOn, store: &Store) -> Result<UpgradeReport> {
    let plan_path = out.join("stacks.json");
    let plan: Option<PlanFile> = if plan_path.is_file() { Some(read_json(&plan_path, PLAN_SCHEMA)?) } else { None };
    let runs_dir = out.join("runs");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&runs_dir)
        .map_err(|e| Error::io(&runs_dir, e))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let before = plan.as_ref().and_then(|p| p.before.clone());
    let mut cards: Vec<CardJudgement> = Vec::new();
    let (mut all_a, mut all_b) = (Vec::new(), Vec::new());
    for dir in &dirs {
        let (mut a, b) = read_card(dir)?;
        let uuid = b.last().or(a.last()).map(|r| r.gpu.uuid.clone());
        let uuid = uuid.unwrap_or_else(|| dir.file_name().unwrap_or_default().to_string_lossy().into_owned());
        if let (Some(name), Some(newest)) = (&before, b.last()) {
            let key = BaselineKey::for_gpu(&newest.gpu, Some(name), true)?;
            a = match store.load(&key)? {
                Some((_, baseline)) => baseline.runs.into_iter().filter(|r| r.gpu.uuid == newest.gpu.uuid).collect(),
                None => Vec::new(),
            };
        }
        let arch = b.last().or(a.last()).map(|r| r.gpu.arch()).unwrap_or_default();
        let la = Listings::read(&listings::dir(out, &arch, "A"))?;
        let lb = Listings::read(&listings::dir(out, &arch, "B"))?;
        let pair = la.as_ref().zip(lb.as_ref());
        let class = match b.last().or(a.last()) {
            Some(run) => {
                let key = BaselineKey { class: run.gpu.class_key(), uuid: None, name: None };
                store.load(&key).ok().flatten().map(|(_, c)| c.noise_model())
            }
            None => None,
        };
        cards.push(judge_card(&uuid, &a, &b, rule, fail_on, pair, class.as_ref()));
        all_a.extend(a);
        all_b.extend(b);
    }
    let descriptions =
        plan.as_ref().map(|p| p.stacks.clone()).unwrap_or_else(|| ["runs a-N.json".into(), "runs b-N.json".into()]);
    let stacks =
        [StackInfo::of("A", &descriptions[0], all_a.iter()), StackInfo::of("B", &descriptions[1], all_b.iter())];
    let mut notes = Vec::new();
    if descriptions.iter().all(|d| d.contains("NVRTC ")) && stacks[0].nvrtc == stacks[1].nvrtc {
        notes.push(format!(
            "both stacks loaded NVRTC {}: check the NVRTC library paths (a library of the same version?)",
            stacks[0].nvrtc.join("/")
        ));
    }
    let mut stale: Vec<&str> = cards
        .iter()
        .flat_map(|c| &c.kernels)
        .filter(|k| k.by.contains("not the cubin the runs loaded"))
        .map(|k| k.source.as_str())
        .collect();
    stale.sort();
    stale.dedup();
    if !stale.is_empty() {
        notes.push(format!(
            "the compiled listings of {} are not of the cubins the runs loaded (did the runs load another NVRTC?): compared by cubin hash",
            stale.join(", ")
        ));
    }
    let by_sass = cards.iter().any(|c| c.kernels.iter().any(|k| k.by == "SASS"));
    let code_by = match (by_sass, plan.as_ref().and_then(|p| p.code_note.clone())) {
        (true, _) => "SASS listings of both stacks: inner loops compared where the cubins differ".to_string(),
        (false, Some(note)) => note,
        (false, None) => "cubin SHA-256 (no listings in the job's folder)".to_string(),
    };
    let outcome = overall(&cards);
    let report = UpgradeReport {
        schema: UPGRADE_SCHEMA.into(),
        stacks,
        rounds: plan.as_ref().map_or_else(|| cards.iter().map(|c| c.runs[1]).max().unwrap_or(0), |p| p.rounds),
        code_by,
        notes,
        cards,
        outcome,
    };
    write_atomic(&out.join("upgrade.json"), report.json().as_bytes())?;
    write_atomic(&out.join("upgrade.md"), super::report::markdown(&report).as_bytes())?;
    write_atomic(&out.join("upgrade-junit.xml"), crate::report::junit::upgrade(&report).as_bytes())?;
    Ok(report)
}
