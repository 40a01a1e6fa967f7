//! SVG trend plots, one per card and bench family: every metric of the family relative to its
//! own median over the runs, change points (red, with their cause) and software stack changes
//! (grey) marked; below, the effective clock and the throttled share of samples of the same runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::analysis::{AnalysedSeries, HistoryReport};
use super::attribution::stack_changes;
use crate::error::{Error, Result};
use crate::report::svg::draw_err;
use crate::stats::median;

const SIZE: (u32, u32) = (1000, 640);
/// Series beyond this many are drawn without a legend entry.
const LEGEND_MAX: usize = 12;
/// Changes beyond this many percent are drawn at the edge of the plot: a run whose median is
/// huge (but finite) relative to its series would otherwise stretch the axis beyond what a
/// float holds, and the axis never ends.
const CLIP_PCT: f64 = 1000.0;
/// Clocks beyond this many MHz are drawn at the edge of the lower plot.
const CLIP_MHZ: f64 = 100_000.0;

/// File name of the plot of `family` on `card`: "GPU-df5b3884-latency.svg".
pub fn file_name(card: &str, family: &str) -> String {
    let safe = |s: &str| -> String {
        s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect()
    };
    format!("{}-{}.svg", safe(card.get(..12).unwrap_or(card)), safe(family))
}

/// Writes one plot per card and family with two runs or more into `dir`; returns (title,
/// file) pairs.
pub fn write_plots(dir: &Path, report: &HistoryReport) -> Result<Vec<(String, PathBuf)>> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut groups: BTreeMap<(&str, &str), Vec<&AnalysedSeries>> = BTreeMap::new();
    for s in &report.series {
        groups.entry((s.series.key.card.as_str(), s.series.family.as_str())).or_default().push(s);
    }
    let mut written = Vec::new();
    for ((card, family), series) in groups {
        let mut runs: Vec<i64> = series.iter().flat_map(|s| s.series.points.iter().map(|p| p.run_id)).collect();
        runs.sort_unstable();
        runs.dedup();
        if runs.len() < 2 {
            continue;
        }
        let path = dir.join(file_name(card, family));
        let title = format!("{family} on {}", card.get(..12).unwrap_or(card));
        family_plot(&path, &title, &series, report)?;
        written.push((title, path));
    }
    Ok(written)
}

/// "11-22 02:39" for Unix seconds.
fn short_time(unix_s: i64) -> String {
    let full = crate::report::utc_time(unix_s.max(0) as u64);
    full.get(5..16).unwrap_or(&full).to_string()
}

fn family_plot(path: &Path, title: &str, series: &[&AnalysedSeries], report: &HistoryReport) -> Result<()> {
    let e = |err| draw_err(path, err);
    // The runs of this family on this card, in time order.
    let mut run_ids: Vec<(i64, i64)> =
        series.iter().flat_map(|s| s.series.points.iter().map(|p| (p.created_unix_s, p.run_id))).collect();
    run_ids.sort_unstable();
    run_ids.dedup();
    let index: BTreeMap<i64, usize> = run_ids.iter().enumerate().map(|(i, r)| (r.1, i)).collect();
    let times: Vec<i64> = run_ids.iter().map(|r| r.0).collect();
    let n = run_ids.len().max(2);
    let ids: Vec<i64> = run_ids.iter().map(|r| r.1).collect();

    let lines: Vec<(String, Vec<(f64, f64)>)> = series
        .iter()
        .map(|s| {
            let values: Vec<f64> = s.series.points.iter().map(|p| p.value).collect();
            let m = median(&values).unwrap_or(1.0);
            let pts = s
                .series
                .points
                .iter()
                .filter(|_| m != 0.0 && m.is_finite())
                .map(|p| (index[&p.run_id] as f64, 100.0 * (p.value / m - 1.0)))
                .filter(|p| !p.1.is_nan())
                .map(|(x, y)| (x, y.clamp(-CLIP_PCT, CLIP_PCT)))
                .collect();
            (format!("{}/{}", s.series.key.benchmark, s.series.key.metric), pts)
        })
        .collect();
    let (mut lo, mut hi) = (-1.0f64, 1.0f64);
    for (_, pts) in &lines {
        for p in pts.iter().filter(|p| p.1.is_finite()) {
            lo = lo.min(p.1);
            hi = hi.max(p.1);
        }
    }
    let pad = 0.1 * (hi - lo);
    let (lo, hi) = (lo - pad, hi + pad);

    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(e)?;
    let (top, bottom) = root.split_vertically(SIZE.1 * 64 / 100);
    let x_range = -0.5..(n as f64 - 0.5);
    let x_fmt = |v: &f64| {
        let i = v.round();
        if (v - i).abs() > 1e-6 || i < 0.0 {
            String::new()
        } else {
            times.get(i as usize).map(|t| short_time(*t)).unwrap_or_default()
        }
    };
    let mut chart = ChartBuilder::on(&top)
        .caption(
            format!(
                "{title}: {} metrics, run medians relative to their median{}",
                lines.len(),
                if lines.len() > LEGEND_MAX { format!(" (legend: first {LEGEND_MAX})") } else { String::new() }
            ),
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(x_range.clone(), lo..hi)
        .map_err(e)?;
    chart.configure_mesh().x_labels(n.min(12)).x_label_formatter(&x_fmt).y_desc("% from median").draw().map_err(e)?;
    for (i, (label, pts)) in lines.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let drawn = chart.draw_series(LineSeries::new(pts.clone(), color.stroke_width(1))).map_err(e)?;
        if i < LEGEND_MAX {
            drawn.label(label.clone()).legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], color));
        }
        chart.draw_series(pts.iter().map(|p| Circle::new(*p, 2, color.filled()))).map_err(e)?;
    }
    // Stack changes (grey) and change points (red), at the boundary before the run.
    for (i, changes) in stack_changes(&ids, &report.runs) {
        let x = i as f64 - 0.5;
        chart
            .draw_series(DashedLineSeries::new(vec![(x, lo), (x, hi)], 4, 4, BLACK.mix(0.5).stroke_width(1)))
            .map_err(e)?;
        chart
            .draw_series(std::iter::once(Text::new(changes.join(", "), (x, hi), ("sans-serif", 12).into_font())))
            .map_err(e)?;
    }
    let mut marked: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
    for s in series {
        for c in &s.change_points {
            let run = s.series.points[c.index].run_id;
            marked.entry(index[&run]).or_default().push(c.cause.name());
        }
    }
    for (i, causes) in marked {
        let x = i as f64 - 0.5;
        chart.draw_series(DashedLineSeries::new(vec![(x, lo), (x, hi)], 6, 3, RED.stroke_width(2))).map_err(e)?;
        let mut causes = causes;
        causes.sort_unstable();
        causes.dedup();
        let at = (x, lo + 0.06 * (hi - lo));
        chart
            .draw_series(std::iter::once(Text::new(causes.join("/"), at, ("sans-serif", 13).into_font().color(&RED))))
            .map_err(e)?;
    }
    {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(("sans-serif", 10))
            .draw()
            .map_err(e)?;
    }

    // Clock and throttled share per run (median over the family's benchmarks).
    let mut clocks: Vec<Vec<f64>> = vec![Vec::new(); run_ids.len()];
    let mut shares: Vec<Vec<f64>> = vec![Vec::new(); run_ids.len()];
    for s in series {
        for p in &s.series.points {
            let i = index[&p.run_id];
            if let Some(c) = p.clock_mhz {
                clocks[i].push(c);
            }
            if let Some(t) = p.throttle_share {
                shares[i].push(t);
            }
        }
    }
    let clock_pts: Vec<(f64, f64)> = clocks
        .iter()
        .enumerate()
        .filter_map(|(i, v)| median(v).filter(|m| !m.is_nan()).map(|m| (i as f64, m.clamp(0.0, CLIP_MHZ))))
        .collect();
    let share_pts: Vec<(f64, f64)> = shares
        .iter()
        .enumerate()
        .filter_map(|(i, v)| median(v).filter(|m| !m.is_nan()).map(|m| (i as f64, (100.0 * m).clamp(0.0, 100.0))))
        .collect();
    let (c_lo, c_hi) = clock_pts.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, p| (a.0.min(p.1), a.1.max(p.1)));
    let (c_lo, c_hi) = if c_lo.is_finite() && c_hi > c_lo {
        (c_lo * 0.95, c_hi * 1.02)
    } else if c_lo.is_finite() {
        (c_lo * 0.95, c_lo * 1.05 + 1.0)
    } else {
        (0.0, 1.0)
    };
    let mut lower = ChartBuilder::on(&bottom)
        .caption("clock of the metrics' domain (blue, MHz) and throttled samples (orange, %)", ("sans-serif", 14))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .right_y_label_area_size(50)
        .build_cartesian_2d(x_range.clone(), c_lo..c_hi)
        .map_err(e)?
        .set_secondary_coord(x_range, 0.0..100.0);
    lower.configure_mesh().x_labels(n.min(12)).x_label_formatter(&x_fmt).y_desc("MHz").draw().map_err(e)?;
    lower.configure_secondary_axes().y_desc("% throttled").draw().map_err(e)?;
    lower.draw_series(LineSeries::new(clock_pts.clone(), BLUE.stroke_width(2))).map_err(e)?;
    lower.draw_series(clock_pts.iter().map(|p| Circle::new(*p, 3, BLUE.filled()))).map_err(e)?;
    let orange = RGBColor(230, 120, 0);
    lower.draw_secondary_series(LineSeries::new(share_pts.clone(), orange.stroke_width(2))).map_err(e)?;
    lower.draw_secondary_series(share_pts.iter().map(|p| Circle::new(*p, 3, orange.filled()))).map_err(e)?;
    root.present().map_err(e)?;
    Ok(())
}
