//! SVG plots of every sweep with the inferred knees marked: latency vs footprint and vs stride
//! (log x axis), per-access traces, the TLB curves, the shared-memory and constant tables.

use std::path::Path as FsPath;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::data::{Axis, Curve, Point, Sweeps, Trace};
use super::infer::{Dissection, tlb};
use crate::error::{Error, Result};
use crate::report::svg::{draw_err, legend_and_present};

const SIZE: (u32, u32) = (900, 520);
/// Accesses of a trace drawn at most.
const TRACE_POINTS: usize = 4000;

/// A file name for a curve or trace id: "size/ca" -> "size_ca.svg".
pub fn file_name(id: &str) -> String {
    let stem: String =
        id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' }).collect();
    format!("{stem}.svg")
}

/// Writes every plot into `dir`; returns the files written.
pub fn write_all(dir: &FsPath, sweeps: &Sweeps, d: &Dissection) -> Result<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut written = Vec::new();
    let overhead = sweeps.timer_overhead_cycles;
    for c in sweeps.curves.iter().filter(|c| c.axis == Axis::Sm) {
        let path = dir.join(file_name(&c.id));
        let pts: Vec<(f64, f64)> = c.points.iter().map(|p| (p.x as f64, per_access(p, overhead))).collect();
        let title = format!(
            "{}: latency per SM, footprint {}, stride {} B",
            c.id,
            human(c.footprint_bytes as f64),
            c.stride_bytes
        );
        table_plot(&path, &title, x_label(c.axis), &pts)?;
        written.push(path);
    }
    for c in sweeps.curves.iter().filter(|c| !c.id.starts_with("tlb/") && c.axis != Axis::Sm) {
        let path = dir.join(file_name(&c.id));
        let knees = d.marks.iter().find(|m| m.id == c.id).map(|m| m.knees.clone()).unwrap_or_default();
        curve_plot(&path, c, &knees, overhead)?;
        written.push(path);
    }
    let tlb: Vec<&Curve> = sweeps.curves.iter().filter(|c| c.id.starts_with("tlb/")).collect();
    if !tlb.is_empty() {
        let path = dir.join("tlb.svg");
        tlb_plot(&path, &tlb, d, overhead)?;
        written.push(path);
    }
    // Every trace but the short policy probes and all but the first set trace of a path.
    let plotted = |t: &&Trace| !t.id.starts_with("policy-") && (!t.id.starts_with("sets/") || t.id.ends_with("/0"));
    for t in sweeps.traces.iter().filter(plotted) {
        let path = dir.join(file_name(&format!("trace/{}", t.id)));
        let marks: Vec<u64> =
            d.marks.iter().find(|m| m.id == t.id).map(|m| m.knees.iter().map(|k| k.0).collect()).unwrap_or_default();
        trace_plot(&path, t, &marks)?;
        written.push(path);
    }
    if !sweeps.banks.is_empty() {
        let path = dir.join("smem_banks.svg");
        let pts: Vec<(f64, f64)> = sweeps.banks.iter().map(|p| (p.stride_words as f64, p.cycles)).collect();
        table_plot(&path, "shared memory: one warp, stride between threads", "stride (4-byte words)", &pts)?;
        written.push(path);
    }
    if !sweeps.const_divergence.is_empty() {
        let path = dir.join("const_divergence.svg");
        let pts: Vec<(f64, f64)> = sweeps.const_divergence.iter().map(|p| (p.distinct as f64, p.cycles)).collect();
        table_plot(&path, "constant memory: distinct addresses per warp access", "distinct addresses", &pts)?;
        written.push(path);
    }
    Ok(written)
}

fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    (lo, if hi > lo { hi } else { lo + 1.0 })
}

fn x_label(axis: Axis) -> &'static str {
    match axis {
        Axis::Footprint => "footprint (bytes)",
        Axis::Stride => "stride (bytes)",
        Axis::Sm => "SM",
    }
}

/// Per-access latency of a point, timer overhead removed: the mean of its histogram (the
/// kernel's own loop time per step, `mean_cycles`, also counts the histogram's bookkeeping).
fn per_access(p: &Point, overhead: f64) -> f64 {
    p.hist.mean() - overhead
}

fn curve_plot(path: &FsPath, c: &Curve, knees: &[(u64, String)], overhead: f64) -> Result<()> {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| draw_err(path, e))?;
    let pts: Vec<(f64, f64)> = c.points.iter().map(|p| (p.x as f64, per_access(p, overhead))).collect();
    let (x0, x1) = bounds(pts.iter().map(|p| p.0));
    let (_, y1) = bounds(pts.iter().map(|p| p.1));
    let title = match c.axis {
        Axis::Footprint => format!("{}: latency vs footprint, stride {} B", c.id, c.stride_bytes),
        Axis::Stride | Axis::Sm => format!("{}: latency vs stride, footprint {} B", c.id, c.footprint_bytes),
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((x0 * 0.9..x1 * 1.1).log_scale(), 0.0..y1 * 1.1)
        .map_err(|e| draw_err(path, e))?;
    chart
        .configure_mesh()
        .x_desc(x_label(c.axis))
        .y_desc("cycles per access (mean)")
        .x_label_formatter(&|v| human(*v))
        .draw()
        .map_err(|e| draw_err(path, e))?;
    chart.draw_series(LineSeries::new(pts.clone(), &BLUE)).map_err(|e| draw_err(path, e))?;
    chart.draw_series(pts.iter().map(|p| Circle::new(*p, 2, BLUE.filled()))).map_err(|e| draw_err(path, e))?;
    for (x, _) in knees {
        let x = *x as f64;
        chart
            .draw_series(DashedLineSeries::new(vec![(x, 0.0), (x, y1 * 1.05)], 6, 4, RED.stroke_width(2)))
            .map_err(|e| draw_err(path, e))?;
        chart
            .draw_series(std::iter::once(Text::new(
                human(x),
                (x, y1 * 1.06),
                ("sans-serif", 14).into_font().color(&RED),
            )))
            .map_err(|e| draw_err(path, e))?;
    }
    root.present().map_err(|e| draw_err(path, e))
}

fn tlb_plot(path: &FsPath, curves: &[&Curve], d: &Dissection, overhead: f64) -> Result<()> {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| draw_err(path, e))?;
    let all = curves.iter().flat_map(|c| c.points.iter());
    let (x0, x1) = bounds(all.clone().map(|p| p.x as f64));
    let (y0, y1) = bounds(all.map(|p| tlb::level_of(p) - overhead));
    let mut chart = ChartBuilder::on(&root)
        .caption("TLB: latency vs footprint at large strides (x: knee)", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((x0 * 0.9..x1 * 1.1).log_scale(), (y0 - 0.05 * (y1 - y0))..(y1 + 0.1 * (y1 - y0)))
        .map_err(|e| draw_err(path, e))?;
    chart
        .configure_mesh()
        .x_desc("footprint (bytes)")
        .y_desc("cycles per access (mean of the fastest 99.5%)")
        .x_label_formatter(&|v| human(*v))
        .draw()
        .map_err(|e| draw_err(path, e))?;
    for (i, c) in curves.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let pts: Vec<(f64, f64)> = c.points.iter().map(|p| (p.x as f64, tlb::level_of(p) - overhead)).collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(|e| draw_err(path, e))?
            .label(format!("stride {}", human(c.stride_bytes as f64)))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
        if let Some(m) = d.marks.iter().find(|m| m.id == c.id) {
            for (x, _) in &m.knees {
                let y = c.points.iter().find(|p| p.x >= *x).map(|p| tlb::level_of(p) - overhead).unwrap_or(y0);
                chart
                    .draw_series(std::iter::once(Cross::new((*x as f64, y), 6, color.stroke_width(2))))
                    .map_err(|e| draw_err(path, e))?;
            }
        }
    }
    legend_and_present(&mut chart, &root, path)
}

fn trace_plot(path: &FsPath, t: &Trace, marked_positions: &[u64]) -> Result<()> {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| draw_err(path, e))?;
    let n = t.latencies.len().min(TRACE_POINTS);
    // The scale follows the accesses, not a rare interruption thousands of cycles long.
    let mut sorted: Vec<u32> = t.latencies[..n].to_vec();
    sorted.sort_unstable();
    let y1 = sorted.get(sorted.len() * 999 / 1000).map(|&l| l as f64).unwrap_or(1.0).max(1.0);
    let lap = t.lap();
    let caption = format!(
        "{}: per-access latency, footprint {} B, stride {} B{}",
        t.id,
        t.footprint_bytes,
        t.stride_bytes,
        if t.cold { ", cold" } else { "" }
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..n.max(1) as f64, 0f64..y1 * 1.2)
        .map_err(|e| draw_err(path, e))?;
    chart.configure_mesh().x_desc("recorded access").y_desc("cycles").draw().map_err(|e| draw_err(path, e))?;
    let marked = |i: usize| marked_positions.contains(&(i as u64 % lap));
    chart
        .draw_series(t.latencies[..n].iter().enumerate().map(|(i, &l)| {
            let style = if marked(i) { RED.filled() } else { BLUE.filled() };
            Circle::new((i as f64, (l as f64).min(y1 * 1.19)), 1, style)
        }))
        .map_err(|e| draw_err(path, e))?;
    root.present().map_err(|e| draw_err(path, e))
}

fn table_plot(path: &FsPath, title: &str, x_desc: &str, pts: &[(f64, f64)]) -> Result<()> {
    let root: DrawingArea<SVGBackend, Shift> = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| draw_err(path, e))?;
    let (x0, x1) = bounds(pts.iter().map(|p| p.0));
    let (_, y1) = bounds(pts.iter().map(|p| p.1));
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x0 - 1.0..x1 + 1.0, 0.0..y1 * 1.1)
        .map_err(|e| draw_err(path, e))?;
    chart.configure_mesh().x_desc(x_desc).y_desc("cycles per access").draw().map_err(|e| draw_err(path, e))?;
    chart.draw_series(LineSeries::new(pts.to_vec(), &BLUE)).map_err(|e| draw_err(path, e))?;
    chart.draw_series(pts.iter().map(|p| Circle::new(*p, 3, BLUE.filled()))).map_err(|e| draw_err(path, e))?;
    root.present().map_err(|e| draw_err(path, e))
}

/// "4 KiB", "60 MiB": a byte count for axis labels.
pub fn human(v: f64) -> String {
    let units = [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")];
    for (shift, unit) in units {
        let scale = (1u64 << shift) as f64;
        if v >= scale {
            let x = v / scale;
            return if (x - x.round()).abs() < 0.05 {
                format!("{x:.0} {unit}")
            } else if x < 100.0 {
                format!("{x:.1} {unit}")
            } else {
                format!("{x:.0} {unit}")
            };
        }
    }
    format!("{v:.0} B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_labels() {
        assert_eq!(file_name("tlb/stride=2097152"), "tlb_stride_2097152.svg");
        assert_eq!(human(4096.0), "4 KiB");
        assert_eq!(human(62914560.0), "60 MiB");
        assert_eq!(human(1536.0), "1.5 KiB");
        assert_eq!(human(100.0), "100 B");
    }
}
