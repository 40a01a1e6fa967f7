//! A baseline for people: where and on what it was taken, its kernels, and the noise of its
//! metrics (which sets how large a change must be before it is called).

use std::collections::BTreeMap;

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};

use super::header::utc_time;
use super::table::{format_value, provenance_table};
use crate::baseline::{Baseline, Listed};
use crate::verdict::Rule;

/// The report of `baseline show`: header, kernels, noise per family and, with `all`, per
/// metric. Thresholds are those `rule` would apply.
pub fn baseline_report(b: &Baseline, label: &str, rule: &Rule, all: bool) -> String {
    let mut out = String::new();
    let c = &b.gpu_class;
    let first = b.runs.first().map(|r| r.created_unix_s).unwrap_or(0);
    let last = b.newest().created_unix_s;
    out.push_str(&format!("baseline:  {label}\n"));
    out.push_str(&format!("name:      {}\n", b.name.as_deref().unwrap_or("(default)")));
    out.push_str(&format!(
        "GPU class: {}, cc {}, {} SMs, {} GiB{}\n",
        c.name,
        c.cc,
        c.sm_count,
        c.memory_gib,
        b.gpu_uuid.as_ref().map(|u| format!(" (only {u})")).unwrap_or_default()
    ));
    out.push_str(&format!(
        "runs:      {} ({} to {}), profile {}, {} samples per benchmark\n",
        b.runs.len(),
        utc_time(first),
        utc_time(last),
        b.settings.profile,
        b.settings.sample_size
    ));
    let s = &b.stack;
    out.push_str(&format!(
        "stack:     driver {}, CUDA {}, NVRTC {}, cudarc {}, gpubench {}\n",
        s.driver_version.as_deref().unwrap_or("unknown"),
        s.cuda_driver_api,
        s.nvrtc_version,
        s.cudarc_feature,
        s.tool_version
    ));
    let t = &b.telemetry;
    out.push_str(&format!(
        "telemetry: median SM clock {}, NVML in {} of {} runs, {} of {} sampled windows throttled\n",
        t.throttle.median_sm_mhz.map(|m| format!("{m:.0} MHz")).unwrap_or_else(|| "unknown".into()),
        t.runs_with_nvml,
        b.runs.len(),
        t.throttle.throttled_samples,
        t.throttle.samples
    ));
    if let Some(line) = boards_line(b) {
        out.push_str(&line);
    }
    out.push_str(&format!("{}\n", provenance_table(&b.kernels)));
    out.push_str(&format!("{}\n", family_noise_table(b, rule)));
    if all {
        out.push_str(&format!("{}\n", metric_noise_table(b, rule)));
    }
    out
}

/// "learned:   21 cards (11 of board 692-2G520-0282-000, ...); 99 metrics judged by board", where
/// the baseline learned from cards of several boards ([`crate::verdict::noise::NoiseModel::card_boards`]).
fn boards_line(b: &Baseline) -> Option<String> {
    let model = b.noise_model();
    if model.card_boards.len() < 2 {
        return None;
    }
    let boards: Vec<String> = model.card_boards.iter().map(|(board, n)| format!("{n} of board {board}")).collect();
    Some(format!(
        "learned:   {} cards ({}); {} metrics on which the boards differ, judged against the cards of the new card's board\n",
        model.cards,
        boards.join(", "),
        model.boards.len()
    ))
}

/// What the baseline learned per family: the typical and largest run-to-run and between-card
/// spreads its verdicts use ([`crate::verdict::noise`]), and the minimum effect of `rule`.
pub fn family_noise_table(b: &Baseline, rule: &Rule) -> Table {
    let model = b.noise_model();
    let mut families: BTreeMap<&str, Vec<(Option<f64>, Option<f64>, f64)>> = BTreeMap::new();
    for m in &b.metrics {
        let key = format!("{}:{}", m.benchmark, m.metric);
        let s = model.spreads(&key, false).copied().unwrap_or_default();
        let run = s.run_model.or(s.run).map(|x| x.sd);
        let card = s.card_model.or(s.card).map(|x| x.sd);
        families.entry(&m.family).or_default().push((run, card, rule.minimum_for(&key)));
    }
    let mut t = table(vec![
        "family",
        "metrics",
        "median run spread",
        "max run spread",
        "median card spread",
        "max card spread",
        "minimum effect",
    ]);
    for (family, v) in families {
        let run: Vec<f64> = v.iter().filter_map(|x| x.0).collect();
        let card: Vec<f64> = v.iter().filter_map(|x| x.1).collect();
        let min: Vec<f64> = v.iter().map(|x| x.2).collect();
        t.add_row(vec![
            Cell::new(family),
            right(v.len().to_string()),
            right(pct(crate::stats::median(&run))),
            right(pct(max(&run))),
            right(pct(crate::stats::median(&card))),
            right(pct(max(&card))),
            right(pct(crate::stats::median(&min))),
        ]);
    }
    t
}

fn pct(x: Option<f64>) -> String {
    x.map(|x| format!("{:.3}%", x * 100.0)).unwrap_or_else(|| "-".into())
}

fn max(x: &[f64]) -> Option<f64> {
    x.iter().copied().reduce(f64::max)
}

/// One row per metric: median, the learned spreads with their degrees of freedom, and the
/// largest change between two runs of one card (the floor of a same-card band).
pub fn metric_noise_table(b: &Baseline, rule: &Rule) -> Table {
    let model = b.noise_model();
    let mut t = table(vec![
        "benchmark",
        "metric",
        "median",
        "unit",
        "runs",
        "run spread (df)",
        "largest run change",
        "card spread (df)",
        "minimum effect",
    ]);
    let spread = |s: Option<crate::verdict::noise::Spread>| {
        s.map(|s| format!("{:.3}% ({:.0})", s.sd * 100.0, s.df)).unwrap_or_else(|| "-".into())
    };
    for m in &b.metrics {
        let key = format!("{}:{}", m.benchmark, m.metric);
        let s = model.spreads(&key, false).copied().unwrap_or_default();
        t.add_row(vec![
            Cell::new(&m.benchmark),
            Cell::new(&m.metric),
            right(format_value(m.summary.median)),
            Cell::new(&m.unit),
            right(m.run_medians.len().to_string()),
            right(spread(s.run_model.or(s.run))),
            right(pct(s.run_envelope)),
            right(spread(s.card_model.or(s.card))),
            right(format!("{:.1}%", rule.minimum_for(&key) * 100.0)),
        ]);
    }
    t
}

/// The table of `baseline list`.
pub fn baseline_list_table(listed: &[Listed]) -> Table {
    let mut t = table(vec!["file", "GPU class", "name", "GPU", "runs", "profile", "driver", "NVRTC", "updated"]);
    for l in listed {
        let file = l.relative.display().to_string();
        match &l.baseline {
            Ok(b) => t.add_row(vec![
                Cell::new(file),
                Cell::new(b.gpu_class.slug()),
                Cell::new(b.name.as_deref().unwrap_or("(default)")),
                Cell::new(b.gpu_uuid.as_deref().unwrap_or("any")),
                right(b.runs.len().to_string()),
                Cell::new(&b.settings.profile),
                Cell::new(b.stack.driver_version.as_deref().unwrap_or("unknown")),
                Cell::new(&b.stack.nvrtc_version),
                Cell::new(utc_time(b.updated_unix_s)),
            ]),
            Err(e) => t.add_row(vec![Cell::new(file), Cell::new(format!("unreadable: {e}"))]),
        };
    }
    t
}

fn table(header: Vec<&str>) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    t.set_header(header);
    t
}

fn right(s: String) -> Cell {
    Cell::new(s).set_alignment(CellAlignment::Right)
}
