//! The interleaved runs: round after round, stack A then stack B, each run one process of that
//! stack's CLI (`--archive ROOT --device N --no-baseline -o FILE`) per selected GPU, the GPUs at
//! once, so that the two stacks see the same card at the same temperature and the same drift.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use super::stacks::PreparedStack;
use crate::error::{Error, Result};
use crate::results::ResultsDocument;
use crate::runner::devices::{isolate, results_file_name};
use crate::runner::fanout::last_error_line;
use crate::runner::interrupt;

/// One selected GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    /// CUDA ordinal.
    pub ordinal: usize,
    /// GPU UUID.
    pub uuid: String,
}

/// The folder of a card's runs under the job's output folder: `runs/<UUID>`.
pub fn card_dir(out: &Path, uuid: &str) -> PathBuf {
    out.join("runs").join(results_file_name(uuid).trim_end_matches(".json"))
}

/// The results file of run `round` (from 1) of stack `label` ("A" or "B"): `a-1.json`.
pub fn run_file(card_dir: &Path, label: &str, round: usize) -> PathBuf {
    card_dir.join(format!("{}-{round}.json", label.to_ascii_lowercase()))
}

/// How one run ended.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// "A" or "B".
    pub stack: String,
    /// Round, from 1.
    pub round: usize,
    /// The card.
    pub card: Card,
    /// Its results file.
    pub results: PathBuf,
    /// Exit code (128 + signal when killed).
    pub code: i32,
    /// Its one-line error, when it failed.
    pub reason: Option<String>,
    /// Wall time, seconds.
    pub seconds: f64,
}

/// What the job runs: stacks, cards, rounds, and the arguments every run gets (profile, filter,
/// benches, timeout).
pub struct RoundPlan<'a> {
    /// A and B.
    pub stacks: [&'a PreparedStack; 2],
    /// The GPUs.
    pub cards: &'a [Card],
    /// Rounds (each runs A, then B).
    pub rounds: usize,
    /// The job's output folder.
    pub out: &'a Path,
    /// Arguments passed to every run.
    pub run_args: &'a [OsString],
}

/// The command line of one run (without the program), on the one card its process sees.
pub fn run_command(stack: &PreparedStack, results: &Path, run_args: &[OsString]) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![
        "--archive".into(),
        stack.root.clone().into(),
        // the run sees its card alone (see `run_one`)
        "--device".into(),
        "0".into(),
        "--no-baseline".into(),
        "--output".into(),
        results.as_os_str().to_owned(),
    ];
    args.extend(run_args.iter().cloned());
    args
}

/// Runs every round; `on_run` sees each run as it ends. Stops after the first step (one stack on
/// every card) in which a run failed, or when interrupted; what finished is returned.
pub fn run_rounds(plan: &RoundPlan<'_>, on_run: &mut dyn FnMut(&RunOutcome)) -> Result<Vec<RunOutcome>> {
    let mut outcomes = Vec::new();
    for round in 1..=plan.rounds {
        for stack in plan.stacks {
            let step = run_one(plan, stack, round)?;
            let failed = step.iter().any(|o| o.code != 0);
            for o in &step {
                on_run(o);
            }
            outcomes.extend(step);
            if failed || interrupt::requested() {
                return Ok(outcomes);
            }
        }
    }
    Ok(outcomes)
}

/// One run of `stack` on every card of the plan at once (round `round`).
pub fn run_one(plan: &RoundPlan<'_>, stack: &PreparedStack, round: usize) -> Result<Vec<RunOutcome>> {
    let mut children = Vec::new();
    for card in plan.cards {
        let dir = card_dir(plan.out, &card.uuid);
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        let results = run_file(&dir, &stack.label, round);
        let log_path = results.with_extension("log");
        let log = std::fs::File::create(&log_path).map_err(|e| Error::io(&log_path, e))?;
        let err = log.try_clone().map_err(|e| Error::io(&log_path, e))?;
        let _ = std::fs::remove_file(&results);
        let mut cmd = Command::new(&stack.cli);
        let child = isolate(&mut cmd, &card.uuid, card.ordinal)
            .args(run_command(stack, &results, plan.run_args))
            .envs(stack.envs())
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .map_err(|e| Error::io(&stack.cli, e))?;
        children.push((card.clone(), results, log_path, child, Instant::now()));
    }
    let mut out = Vec::new();
    for (card, results, log, mut child, t0) in children {
        let status = child.wait().map_err(|e| Error::io(&stack.cli, e))?;
        let code = status.code().unwrap_or_else(|| {
            use std::os::unix::process::ExitStatusExt;
            128 + status.signal().unwrap_or(0)
        });
        let reason = (code != 0).then(|| last_error_line(&log));
        out.push(RunOutcome {
            stack: stack.label.clone(),
            round,
            card,
            results,
            code,
            reason,
            seconds: t0.elapsed().as_secs_f64(),
        });
    }
    Ok(out)
}

/// The runs of a card's folder: (A's, B's), each in round order. Files that do not read as
/// results are errors (exit 5).
pub fn read_card(dir: &Path) -> Result<(Vec<ResultsDocument>, Vec<ResultsDocument>)> {
    let mut sides = (Vec::new(), Vec::new());
    for (label, side) in [("a", &mut sides.0), ("b", &mut sides.1)] {
        let mut round = 1;
        loop {
            let path = dir.join(format!("{label}-{round}.json"));
            if !path.is_file() {
                break;
            }
            side.push(ResultsDocument::read(&path)?);
            round += 1;
        }
    }
    Ok(sides)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_the_stack_cli_on_one_card_without_a_baseline() {
        let s = PreparedStack {
            label: "B".into(),
            description: String::new(),
            cli: "/x/bin/cargo-gpubench".into(),
            root: "/x".into(),
            env: Vec::new(),
            nvrtc: None,
        };
        let card = Card { ordinal: 3, uuid: "GPU-1".into() };
        let args = run_command(&s, Path::new("/o/b-2.json"), &["--quick".into()]);
        let args: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(args, ["--archive", "/x", "--device", "0", "--no-baseline", "--output", "/o/b-2.json", "--quick"]);
        assert_eq!(run_file(&card_dir(Path::new("/o"), &card.uuid), "B", 2), PathBuf::from("/o/runs/GPU-1/b-2.json"));
    }

    #[test]
    fn rounds_alternate_and_stop_after_a_failed_step() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("fake.sh");
        // Writes the order of runs to a shared file; stack B fails in round 2.
        std::fs::write(
            &exe,
            format!(
                "#!/bin/sh\nwhile [ $# -gt 0 ]; do case $1 in --output) o=$2;; esac; shift; done\n\
                 echo \"$STACK $(basename $o)\" >> {}/order\n\
                 if [ $STACK = B ] && [ $(basename $o) = b-2.json ]; then echo 'error: boom' >&2; exit 4; fi\n",
                dir.path().display()
            ),
        )
        .unwrap();
        std::process::Command::new("chmod").arg("+x").arg(&exe).status().unwrap();
        let stack = |l: &str| PreparedStack {
            label: l.into(),
            description: String::new(),
            cli: exe.clone(),
            root: dir.path().into(),
            env: vec![("STACK".into(), l.into())],
            nvrtc: None,
        };
        let (a, b) = (stack("A"), stack("B"));
        let cards = [Card { ordinal: 0, uuid: "GPU-0".into() }];
        let plan = RoundPlan { stacks: [&a, &b], cards: &cards, rounds: 3, out: dir.path(), run_args: &[] };
        let mut seen = 0;
        let out = run_rounds(&plan, &mut |_| seen += 1).unwrap();
        assert_eq!(seen, 4);
        assert_eq!(out.last().unwrap().code, 4);
        assert_eq!(out.last().unwrap().reason.as_deref(), Some("boom"));
        let order = std::fs::read_to_string(dir.path().join("order")).unwrap();
        assert_eq!(order, "A a-1.json\nB b-1.json\nA a-2.json\nB b-2.json\n");
    }
}
