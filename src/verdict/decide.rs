//! One metric's verdict from what [`super::compare`] assessed: the change against the
//! threshold, the verdict of its family as a whole, and the validity gates.

use super::family::{FamilyVerdict, Member};
use super::gate::ClockScaling;
use super::level::Level;
use super::{MetricVerdict, Verdict};
use crate::results::Better;

/// How the gate judged the pair of sides.
#[derive(Debug, Clone)]
pub(super) enum Gate {
    /// Nothing to worry about.
    Clean,
    /// Clock-normalised values are compared, because of `0`.
    Normalized(String),
    /// A side throttled as a whole (`0` says which and why) and no normalised values exist.
    Throttled(String),
    /// The clocks differ: `0` is the new side's clock over the baseline's. A verdict must
    /// exceed the threshold even after allowing the whole clock difference in the direction
    /// the metric's unit can follow ([`ClockScaling`]). `1` describes the clocks.
    Clock(f64, String),
}

/// Why a same-card change is INCONCLUSIVE where no run-to-run spread is known.
pub(super) const ONE_RUN_EACH: &str = "one run of this card on each side and no run-to-run spread learned: a process's own level cannot be told from a change";

/// The normal quantile of 90 % power: the detectable effect is the threshold plus this many
/// standard deviations of the new side's median.
pub(super) const DETECTION_POWER_Z: f64 = 1.281_551_565_5;

/// What the verdict of one metric is decided from.
#[derive(Debug, Clone)]
pub(super) struct Stats {
    pub(super) ratio: f64,
    /// Minimum effect.
    pub(super) minimum: f64,
    /// Threshold: the minimum effect or the prediction band, whichever is wider.
    pub(super) threshold: f64,
    /// The smallest change caught nine times in ten.
    pub(super) detectable: f64,
    pub(super) level: Level,
    /// Reference values (runs or cards).
    pub(super) k: usize,
    pub(super) gate: Gate,
    /// Why an SM-clock verdict cannot rule out a clock change (no kernel clock on a side).
    pub(super) no_kernel_clock: Option<String>,
    pub(super) excluded_note: Option<String>,
    /// Bench family.
    pub(super) family: String,
    /// A class comparison of a card whose board the baseline holds no card of.
    pub(super) unseen_board: Option<String>,
    /// A same-card comparison with no run-to-run spread of the metric, learned or of the new
    /// side's runs ([`super::level::Learned::run_spread_unknown`]).
    pub(super) run_spread_unknown: bool,
    /// The metric's share in its family's verdict ([`super::family`]), where its gate
    /// leaves the values as measured (no throttling, clocks within the tolerance).
    pub(super) family_member: Option<Member>,
    /// What its band is built from, to build it again at another level
    /// ([`super::multiplicity`]).
    pub(super) band_inputs: BandInputs,
    /// The chance that its change passes the minimum effect in a healthy run
    /// ([`super::multiplicity::chance_beyond`]).
    pub(super) chance: f64,
}

/// What a metric's prediction band is built from ([`super::level::band`]).
#[derive(Debug, Clone)]
pub(super) struct BandInputs {
    pub(super) reference: super::level::Reference,
    /// New runs (one card in a class comparison).
    pub(super) n_new: usize,
    /// Floor of the relative spreads.
    pub(super) floor: f64,
    pub(super) learned: super::level::Learned,
}

impl BandInputs {
    /// The band at two-sided `confidence`; `None` where the reference's centre is not positive.
    pub(super) fn band(&self, confidence: f64) -> Option<super::level::Band> {
        super::level::band(&self.reference, self.n_new, confidence, self.floor, self.learned)
    }
}

/// The verdict from the change, the threshold, the family's verdict and the gates.
///
/// A metric beyond its own band is REGRESSED or IMPROVED whatever its family did. One within
/// its own band but beyond the minimum effect takes the verdict of its family when the family as
/// a whole moved the same way ([`super::family`]): a family adds power, it never takes a
/// verdict away. A metric within its band whose detectable effect exceeds the rule's
/// `max_detectable` is INSENSITIVE: the comparison could not have seen a change that size.
pub(super) fn decide(
    mut r: MetricVerdict,
    st: &Stats,
    family: Option<&FamilyVerdict>,
    max_detectable: f64,
) -> MetricVerdict {
    // "Worse" factor: > 1 means worse, whatever the metric's direction.
    let worse = match r.better {
        Better::Lower => st.ratio,
        Better::Higher => 1.0 / st.ratio,
    };
    let bound = 1.0 + st.threshold;
    let min_bound = 1.0 + st.minimum;
    let mut verdict = verdict_of(worse, st.threshold, st.minimum);
    let unit = st.level.unit();
    let of_board = if st.band_inputs.reference.board.is_some() { " of its board" } else { "" };
    let against = format!("{} {unit}{}{of_board}", st.k, if st.k == 1 { "" } else { "s" });
    let change = format!("{:+.2}% vs {against} ({})", (st.ratio - 1.0) * 100.0, st.level.label());
    // The bound on the side of the change: a ratio beyond 1 + t or below 1 / (1 + t), so a
    // fall of 8.3 % already passes a threshold of 9 %.
    let edge = if st.ratio < 1.0 { 1.0 / (1.0 + st.threshold) - 1.0 } else { st.threshold };
    let limit = if st.threshold > st.minimum {
        format!("{:+.1}% (minimum ±{:.1}%, widened by the {unit}-to-{unit} spread)", edge * 100.0, st.minimum * 100.0)
    } else {
        format!("{:+.1}%", edge * 100.0)
    };
    let mut reason = match verdict {
        Verdict::Regressed | Verdict::Improved => format!("{change} beyond {limit}"),
        Verdict::Pass => format!("{change} within {limit}"),
        _ => format!("{change}: beyond the minimum effect but within {limit}"),
    };
    let own_decision = matches!(verdict, Verdict::Regressed | Verdict::Improved);
    let family = family.filter(|f| f.decided());
    let moved_with_family = family.is_some_and(|f| match f.verdict {
        Verdict::Regressed => worse > min_bound,
        Verdict::Improved => worse < 1.0 / min_bound,
        _ => false,
    });
    let mut by_family = false;
    if let (false, true, Some(f)) = (own_decision, moved_with_family, family) {
        reason = format!(
            "{change}: beyond the minimum effect ±{:.1}% though within the spread of healthy cards ({:+.1}%), and {}",
            st.minimum * 100.0,
            edge * 100.0,
            f.summary()
        );
        verdict = f.verdict;
        by_family = true;
    }
    let decided = matches!(verdict, Verdict::Regressed | Verdict::Improved);
    if decided && st.level == Level::OtherCard {
        reason = format!("the baseline holds one other card, between-card spread unknown: {reason}");
        verdict = Verdict::Inconclusive;
    }
    if decided && st.run_spread_unknown {
        reason = format!("{ONE_RUN_EACH}: {reason}");
        verdict = Verdict::Inconclusive;
    }
    if let (true, Some(board)) = (decided, &st.unseen_board) {
        reason = format!(
            "the class baseline holds cards of one other board only, so how board {board} differs is unknown: {reason}"
        );
        verdict = Verdict::Inconclusive;
    }
    // Blind by noise, not by policy: a band wider than the minimum effect.
    if !decided && st.threshold > st.minimum && st.detectable > max_detectable {
        reason = format!(
            "could not see a change below {:.1}% (limit {:.1}%): {reason}",
            st.detectable * 100.0,
            max_detectable * 100.0
        );
        verdict = Verdict::Insensitive;
    }
    // A verdict carried by the family only needs the minimum effect beyond the clock's reach.
    let bound = if by_family { min_bound } else { bound };
    match &st.gate {
        Gate::Clean => {}
        Gate::Normalized(why) => reason = format!("clock-normalised ({why}): {reason}"),
        Gate::Throttled(why) => {
            if verdict != Verdict::Pass {
                reason = format!("{why}, no clock-normalised values: {reason}");
                verdict = Verdict::Inconclusive;
            } else {
                reason = format!("{reason}; {why}");
            }
        }
        Gate::Clock(ratio, why) => {
            let (worsening, improvement) = ClockScaling::of_unit(&r.unit).explains(*ratio);
            let holds = match verdict {
                Verdict::Regressed => worse / worsening > bound,
                Verdict::Improved => worse * improvement < 1.0 / bound,
                _ => true,
            };
            if !holds {
                reason = format!("{why} could explain {}: {reason}", verdict.label());
                verdict = Verdict::Inconclusive;
            }
        }
    }
    if let Some(why) = &st.no_kernel_clock
        && matches!(verdict, Verdict::Regressed | Verdict::Improved)
    {
        reason = format!("{why}: {reason}");
        verdict = Verdict::Inconclusive;
    }
    if let Some(note) = &st.excluded_note {
        reason = format!("{reason}; {note}");
    }
    r.verdict = verdict;
    r.reason = reason;
    r
}

/// The verdict on a change by the factor `worse` (above 1 worse, whatever the direction of
/// the metric): REGRESSED beyond `1 + threshold`, IMPROVED below its inverse, INCONCLUSIVE
/// beyond the minimum effect either way, else PASS.
fn verdict_of(worse: f64, threshold: f64, minimum: f64) -> Verdict {
    let (bound, min_bound) = (1.0 + threshold, 1.0 + minimum);
    if worse > bound {
        Verdict::Regressed
    } else if worse < 1.0 / bound {
        Verdict::Improved
    } else if worse > min_bound || worse < 1.0 / min_bound {
        Verdict::Inconclusive
    } else {
        Verdict::Pass
    }
}
