//! SVG of a group's envelope: per metric (x), the class range relative to the class median
//! (grey bar) and each card as a point (its value relative to the median, %), outliers in red.

use std::path::Path;

use plotters::prelude::*;

use super::analysis::GroupReport;
use crate::error::Result;
use crate::report::svg::{draw_err, legend_and_present};

/// Relative changes beyond this (percent) are drawn at the edge.
const CLIP_PCT: f64 = 40.0;

/// File name of a group's plot: "<class>.<driver>.<profile>.svg".
pub fn file_name(g: &GroupReport) -> String {
    let raw = format!("fleet-{}-driver{}-{}", g.key.class, g.key.driver, g.key.profile);
    let stem: String =
        raw.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' }).collect();
    format!("{stem}.svg")
}

/// Writes the envelope plot of `g` to `path`.
pub fn envelope_svg(path: &Path, g: &GroupReport) -> Result<()> {
    let width = (200 + 6 * g.envelope.len() as u32).clamp(900, 4000);
    let root = SVGBackend::new(path, (width, 520)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| draw_err(path, e))?;
    let n = g.envelope.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("{}: {} cards, value / class median", g.key.describe(), g.cards.len()), ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(-1.0..n, -CLIP_PCT..CLIP_PCT)
        .map_err(|e| draw_err(path, e))?;
    chart
        .configure_mesh()
        .x_desc("metric (order of the report)")
        .y_desc("change from the class median (%)")
        .draw()
        .map_err(|e| draw_err(path, e))?;
    let rel = |v: f64, m: f64| if m != 0.0 { (100.0 * (v - m) / m.abs()).clamp(-CLIP_PCT, CLIP_PCT) } else { 0.0 };
    let bars = g.envelope.iter().enumerate().map(|(i, r)| {
        PathElement::new(
            vec![(i as f64, rel(r.min, r.median)), (i as f64, rel(r.max, r.median))],
            RGBColor(170, 170, 170).stroke_width(3),
        )
    });
    chart.draw_series(bars).map_err(|e| draw_err(path, e))?;
    chart.draw_series(LineSeries::new(vec![(-1.0, 0.0), (n, 0.0)], BLACK)).map_err(|e| draw_err(path, e))?;
    for (ci, c) in g.cards.iter().enumerate() {
        let color = if c.outlier { RED.to_rgba() } else { Palette99::pick(ci + 1).to_rgba() };
        let pts: Vec<(f64, f64)> = g
            .envelope
            .iter()
            .enumerate()
            .filter_map(|(i, r)| c.values.get(&r.key).map(|v| (i as f64, rel(*v, r.median))))
            .collect();
        let short: String = c.uuid.chars().take(12).collect();
        chart
            .draw_series(pts.iter().map(|p| Circle::new(*p, 3, color.filled())))
            .map_err(|e| draw_err(path, e))?
            .label(format!("{short} {}", c.hosts.join(",")))
            .legend(move |(x, y)| Circle::new((x, y), 4, color.filled()));
    }
    legend_and_present(&mut chart, &root, path)
}
