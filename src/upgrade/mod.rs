//! The upgrade job: did a driver or CUDA toolkit upgrade make anything slower on these GPUs, and
//! is the machine code that ran the reason?
//!
//! Two software stacks, A (before) and B (after), each an archive of the bench executables and
//! the CLI ([`stacks`]), an NVRTC library and extra environment, run alternately on the same
//! GPUs, A B A B ..., each run its own process ([`rounds`]). Per card, A's runs are the baseline
//! and B's the new side, judged with the run as the unit by [`crate::verdict::compare`]
//! ([`judge`]). Each flagged metric then says whether its code changed: both stacks compile
//! every kernel with their own NVRTC, `cuobjdump -sass` (or `nvdisasm`) disassembles the cubins
//! ([`listings`], [`sass`]), and the executed inner loop of each kernel is found and counted by
//! instruction class ([`loops`], [`code`]); where no disassembler exists the cubin hashes decide.
//!
//! A driver cannot change inside one job: its before/after form judges B's runs against per-card
//! baselines saved before the upgrade (`cargo gpubench --save-baseline NAME --per-gpu`).

pub mod code;
pub mod job;
pub mod judge;
pub mod listings;
pub mod loops;
pub mod report;
pub mod rounds;
pub mod sass;
pub mod stacks;

pub use code::{CodeVerdict, Disassembler, KernelCode, MetricCode};
pub use job::{JobObserver, JobRequest, judge_folder};
pub use judge::{CardJudgement, Outcome, UpgradeReport, judge_card};
pub use stacks::StackSpec;

/// Rounds of the job by default: three runs of each stack per card. The verdicts treat the run
/// as the unit; on three cards of `tests/corpus/`, three runs a side leave 3-6 of 307 metrics
/// INSENSITIVE (detectable effect above 10 %) where two leave 12-31
/// (`cargo test --test upgrade three_rounds -- --nocapture`). A default run takes about a minute
/// on an H100 or H200: three rounds are six minutes per card, the cards at once.
pub const DEFAULT_ROUNDS: usize = 3;
