//! The calibration of the verdict rule as Markdown tables: false alarms and detection power.

use crate::verdict::calibrate::{BaselineScope, Calibration, LevelCalibration, MetricClass, Missed};

/// The false-alarm table and one power table per level, as Markdown.
pub fn calibration_markdown(c: &Calibration) -> String {
    let mut s = String::new();
    let cards: Vec<String> =
        c.cards.iter().map(|(u, n)| format!("`{}` ({n})", u.chars().take(12).collect::<String>())).collect();
    s.push_str(&format!(
        "Runs: {} profile `{}`, {} cards: {}.\n\n",
        c.gpu_class,
        c.profile,
        c.cards.len(),
        cards.join(", ")
    ));
    s.push_str(
        "| A/A | comparisons | metric verdicts | REGRESSED | IMPROVED | INCONCLUSIVE | INSENSITIVE | PASS | detectable to 5 % | median detectable |\n",
    );
    s.push_str("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for l in [&c.same_card, &c.same_card_in_class, &c.class].into_iter().flatten() {
        let a = &l.aa;
        let total = a.regressed + a.improved + a.inconclusive + a.pass + a.not_measured + a.insensitive;
        let d = &l.sensitivity;
        s.push_str(&format!(
            "| {} | {} | {total} | {} | {} | {} | {} | {} | {:.1} % | {} |\n",
            title(l),
            l.comparisons,
            a.regressed,
            a.improved,
            a.inconclusive,
            a.insensitive,
            a.pass,
            100.0 * d.within_5_percent as f64 / d.judged.max(1) as f64,
            d.median.map(|m| format!("{:.2} %", m * 100.0)).unwrap_or_else(|| "-".into())
        ));
    }
    for l in [&c.same_card, &c.same_card_in_class, &c.class].into_iter().flatten() {
        s.push_str(&format!("\nDetection power, {} (share of metric verdicts REGRESSED):\n\n", title(l)));
        shares_table(
            &mut s,
            &["class", "verdicts", "A/A not PASS"],
            &c.shifts,
            l.power.iter().map(|r| {
                (vec![r.class.label().to_string(), r.verdicts.to_string(), r.aa_not_pass.to_string()], &r.detected)
            }),
        );
        s.push_str(&format!(
            "\nEach metric shifted alone (families' verdicts off), {} (share REGRESSED):\n\n",
            title(l)
        ));
        shares_table(
            &mut s,
            &["class", "verdicts"],
            &c.shifts,
            l.single_metrics.iter().map(|r| (vec![r.class.label().to_string(), r.verdicts.to_string()], &r.detected)),
        );
        if !l.families.is_empty() {
            s.push_str("\nFamilies judged as a whole (share of comparisons in which the family was REGRESSED):\n\n");
            shares_table(
                &mut s,
                &["family", "comparisons", "A/A REGRESSED", "A/A not PASS"],
                &c.shifts,
                l.families.iter().map(|(name, f)| {
                    let cells = [
                        name.clone(),
                        f.comparisons.to_string(),
                        f.aa_regressed.to_string(),
                        f.aa_not_pass.to_string(),
                    ];
                    (cells.to_vec(), &f.detected)
                }),
            );
        }
        if !l.false_alarms.is_empty() {
            let list: Vec<String> = l.false_alarms.iter().map(|(k, n)| format!("`{k}` ({n})")).collect();
            s.push_str(&format!("\nA/A REGRESSED: {}.\n", list.join(", ")));
        }
        s.push_str(&missed_list(l));
    }
    if let Some(l) = c.class.as_ref().filter(|l| l.by_board > 0) {
        s.push_str(&format!(
            "\nClass comparisons against the cards of the candidate's board: {} of {} (the rest against the class whole).\n",
            l.by_board, l.comparisons
        ));
    }
    s
}

/// A Markdown table: the `head` columns (the first left-aligned, the rest right-aligned), then one
/// column per shift, of rows of `head` cells and a share per shift.
fn shares_table<'a>(
    s: &mut String,
    head: &[&str],
    shifts: &[f64],
    rows: impl Iterator<Item = (Vec<String>, &'a Vec<f64>)>,
) {
    s.push_str(&format!("| {} |", head.join(" | ")));
    for shift in shifts {
        s.push_str(&format!(" {:.0} % |", shift * 100.0));
    }
    s.push_str(&format!("\n| --- |{}", " ---: |".repeat(head.len() - 1 + shifts.len())));
    s.push('\n');
    for (cells, shares) in rows {
        s.push_str(&format!("| {} |", cells.join(" | ")));
        for d in shares {
            s.push_str(&format!(" {:.0} % |", d * 100.0));
        }
        s.push('\n');
    }
}

/// The metrics that most often escaped the target shift of their class, worst first (at most
/// [`MISSED_SHOWN`]).
fn missed_list(l: &LevelCalibration) -> String {
    if l.missed.is_empty() {
        return String::new();
    }
    let mut v: Vec<(&String, &Missed)> = l.missed.iter().collect();
    v.sort_by(|a, b| (b.1.missed * a.1.of).cmp(&(a.1.missed * b.1.of)).then(a.0.cmp(b.0)));
    let shown: Vec<String> =
        v.iter().take(MISSED_SHOWN).map(|(k, m)| format!("`{k}` ({} of {})", m.missed, m.of)).collect();
    let more = v.len().saturating_sub(MISSED_SHOWN);
    let (most, atomics) = (MetricClass::Latency.target_shift(l.level), MetricClass::Atomics.target_shift(l.level));
    let at = if most == atomics {
        format!("{:.0} %", most * 100.0)
    } else {
        format!("{:.0} %, atomics at {:.0} %", most * 100.0, atomics * 100.0)
    };
    format!(
        "\nNot REGRESSED at {at} ({} metrics): {}{}.\n",
        v.len(),
        shown.join(", "),
        if more > 0 { format!(" and {more} more") } else { String::new() }
    )
}

/// Metrics named in the Markdown list of misses.
const MISSED_SHOWN: usize = 12;

fn title(l: &LevelCalibration) -> &'static str {
    match (l.level, l.baseline) {
        (crate::verdict::Level::Class, _) => "class, leave one card out",
        (_, BaselineScope::Card) => "same card, per-card baseline of the card's other runs (class prior)",
        (_, BaselineScope::Class) => "same card, class baseline of every other run",
    }
}
