//! Chip maps: a metric measured on every SM (latency of an L2 hit, of a DRAM access), summarised,
//! its outlier SMs flagged by robust z-score, drawn as an SVG with SMs in id order, grouped where a
//! probe found groups (GPCs).

use std::path::Path;

use comfy_table::{Cell, Table, presets::UTF8_FULL_CONDENSED};
use plotters::prelude::*;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::results::{ResultsDocument, SmMap, Spread};
use crate::stats::robust_z;

/// Robust z-score beyond which an SM is an outlier (Iglewicz and Hoaglin's 3.5).
pub const OUTLIER_Z: f64 = 3.5;
/// Floor of the MAD, relative to the median, for outlier scores: an SM must stray at least about
/// 0.2 % x z / 0.6745 from the median before it can be flagged, however tight the others are.
pub const MAD_FLOOR: f64 = 0.002;

/// One SM far from the others.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SmOutlier {
    /// SM id.
    pub sm: u32,
    /// Its value.
    pub value: f64,
    /// Robust z-score against the card's SMs.
    pub z: f64,
}

/// A chip map's summary.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ChipMapSummary {
    /// Benchmark id.
    pub benchmark: String,
    /// Metric.
    pub metric: String,
    /// Unit.
    pub unit: String,
    /// Spread over SMs.
    pub spread: Spread,
    /// (max - min) / median, percent.
    pub range_pct: f64,
    /// SMs with |z| above the threshold, worst first.
    pub outliers: Vec<SmOutlier>,
    /// Number of SM groups (GPCs) the cluster probe found; 0 when unknown.
    pub groups: usize,
    /// Share of the variance over SMs that the groups explain (between-group sum of squares over
    /// the total), when groups are known.
    pub group_variance_share: Option<f64>,
}

/// Between-group sum of squares over the total sum of squares of `values` grouped by `group`.
pub fn group_variance_share(values: &[f64], group: &[u32]) -> Option<f64> {
    if values.len() != group.len() || values.len() < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let total: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
    let mut sums: std::collections::BTreeMap<u32, (f64, usize)> = Default::default();
    for (v, g) in values.iter().zip(group) {
        let e = sums.entry(*g).or_default();
        e.0 += v;
        e.1 += 1;
    }
    let between: f64 = sums.values().map(|(s, n)| *n as f64 * (s / *n as f64 - mean).powi(2)).sum();
    (total > 0.0).then_some(between / total)
}

/// SMs of `map` whose robust z-score exceeds `z_limit` in either direction, worst first.
pub fn outlier_sms(map: &SmMap, z_limit: f64) -> Vec<SmOutlier> {
    let z = robust_z(&map.values, MAD_FLOOR);
    let mut out: Vec<SmOutlier> = map
        .sm
        .iter()
        .zip(&map.values)
        .zip(&z)
        .filter(|(_, z)| z.abs() > z_limit)
        .map(|((&sm, &value), &z)| SmOutlier { sm, value, z })
        .collect();
    out.sort_by(|a, b| b.z.abs().total_cmp(&a.z.abs()));
    out
}

/// Every chip map of `doc` whose benchmark id matches `filter` (all when `None`).
pub fn summaries(doc: &ResultsDocument, filter: Option<&regex::Regex>, z_limit: f64) -> Vec<ChipMapSummary> {
    doc.benchmarks
        .iter()
        .filter(|b| filter.is_none_or(|f| f.is_match(&b.id)))
        .flat_map(|b| {
            b.sm_maps.iter().map(move |m| ChipMapSummary {
                benchmark: b.id.clone(),
                metric: m.metric.clone(),
                unit: m.unit.clone(),
                spread: m.spread,
                range_pct: m.spread.relative_range() * 100.0,
                outliers: outlier_sms(m, z_limit),
                groups: m.group.iter().collect::<std::collections::BTreeSet<_>>().len(),
                group_variance_share: group_variance_share(&m.values, &m.group),
            })
        })
        .collect()
}

/// The summaries as a table.
pub fn chipmap_table(rows: &[ChipMapSummary]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(["benchmark", "metric", "SMs", "median", "min", "max", "IQR", "range", "GPCs", "outlier SMs (z)"]);
    for r in rows {
        let s = &r.spread;
        let outliers: Vec<String> = r.outliers.iter().take(6).map(|o| format!("{} ({:+.1})", o.sm, o.z)).collect();
        let more = r.outliers.len().saturating_sub(6);
        t.add_row(vec![
            Cell::new(&r.benchmark),
            Cell::new(&r.metric),
            Cell::new(s.n),
            Cell::new(format!("{:.1}", s.median)),
            Cell::new(format!("{:.1}", s.min)),
            Cell::new(format!("{:.1}", s.max)),
            Cell::new(format!("{:.1}-{:.1}", s.q1, s.q3)),
            Cell::new(format!("{:.1}%", r.range_pct)),
            Cell::new(match r.group_variance_share {
                Some(share) => format!("{} ({:.0}% of var.)", r.groups, share * 100.0),
                None => "-".into(),
            }),
            Cell::new(if outliers.is_empty() {
                "none".to_string()
            } else if more > 0 {
                format!("{} +{more}", outliers.join(", "))
            } else {
                outliers.join(", ")
            }),
        ]);
    }
    t
}

/// Order in which the SMs are drawn: by group (when known), then by SM id; with the group of each.
fn draw_order(map: &SmMap) -> Vec<(usize, Option<u32>)> {
    let mut idx: Vec<(usize, Option<u32>)> = (0..map.sm.len()).map(|i| (i, map.group.get(i).copied())).collect();
    idx.sort_by_key(|&(i, g)| (g.unwrap_or(0), map.sm[i]));
    idx
}

fn draw_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::data(path, format!("could not draw the chip map ({e})"))
}

/// Draws `map` to `path`: one bar per SM (id order, grouped when groups are known), the median and
/// the outlier band as lines, outlier SMs in red.
pub fn write_svg(path: &Path, title: &str, map: &SmMap, z_limit: f64) -> Result<()> {
    let root = SVGBackend::new(path, (1100, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| draw_err(path, e))?;
    let order = draw_order(map);
    let outliers: Vec<u32> = outlier_sms(map, z_limit).iter().map(|o| o.sm).collect();
    let s = map.spread;
    let pad = ((s.max - s.min) * 0.15).max(s.median * 0.01);
    let (y0, y1) = (s.min - pad, s.max + pad);
    let n = order.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..n, y0..y1)
        .map_err(|e| draw_err(path, e))?;
    let by_group = map.group.len() == map.sm.len() && !map.group.is_empty();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc(if by_group { "SMs, grouped by GPC (cluster co-scheduling), id order within" } else { "SM id" })
        .y_desc(format!("{} ({})", map.metric, map.unit))
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            order.get(i).map(|&(k, _)| map.sm[k].to_string()).unwrap_or_default()
        })
        .draw()
        .map_err(|e| draw_err(path, e))?;
    let palette = [RGBColor(70, 110, 180), RGBColor(110, 160, 210)];
    chart
        .draw_series(order.iter().enumerate().map(|(x, &(k, g))| {
            let color = if outliers.contains(&map.sm[k]) { RED } else { palette[g.unwrap_or(0) as usize % 2] };
            Rectangle::new([(x as f64 + 0.1, y0), (x as f64 + 0.9, map.values[k])], color.filled())
        }))
        .map_err(|e| draw_err(path, e))?;
    let line = |y: f64| vec![(0.0, y), (n, y)];
    chart.draw_series(LineSeries::new(line(s.median), BLACK.stroke_width(2))).map_err(|e| draw_err(path, e))?;
    for y in [s.q1, s.q3] {
        chart
            .draw_series(DashedLineSeries::new(line(y), 6, 4, BLACK.stroke_width(1)))
            .map_err(|e| draw_err(path, e))?;
    }
    root.present().map_err(|e| draw_err(path, e))
}

/// A file name for a chip map: "latency/cg/4MiB" + "cycles_per_access" -> "latency_cg_4MiB.svg".
pub fn file_name(benchmark: &str, metric: &str) -> String {
    // Both come from the results file: only letters, digits and inner dots may reach the
    // name, so that no value can name a path outside the output folder (or a hidden file).
    let safe = |s: &str| -> String {
        let mut out: String =
            s.chars().take(100).map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '_' }).collect();
        if out.starts_with('.') {
            out.replace_range(..1, "_");
        }
        out
    };
    let stem = safe(benchmark);
    match metric {
        "cycles_per_access" => format!("{stem}.svg"),
        m => format!("{stem}_{}.svg", safe(m)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_from_data_stay_in_the_folder() {
        assert_eq!(file_name("latency/cg/4MiB", "cycles_per_access"), "latency_cg_4MiB.svg");
        assert_eq!(file_name("latency/cg/4MiB", "ns"), "latency_cg_4MiB_ns.svg");
        for (b, m) in [("x", "../../../tmp/evil"), ("../..", "ns"), ("x", "/etc/passwd"), ("..", "cycles_per_access")] {
            let name = file_name(b, m);
            assert!(!name.contains('/') && !name.starts_with('.'), "{b} {m}: {name}");
            assert_eq!(std::path::Path::new(&name).components().count(), 1, "{name}");
        }
        assert!(file_name(&"a".repeat(10_000), &"b".repeat(10_000)).len() < 255);
    }

    fn map() -> SmMap {
        let pairs: Vec<(u32, f64)> = (0..132).map(|sm| (sm, 280.0 + (sm % 16) as f64 * 1.5)).collect();
        let mut m = SmMap::new("cycles_per_access", "cycles", pairs);
        let i = m.sm.iter().position(|&s| s == 77).unwrap();
        m.values[i] *= 1.3;
        m.spread = Spread::of(&m.values);
        m
    }

    #[test]
    fn a_slow_sm_is_flagged_by_name_and_no_other() {
        let out = outlier_sms(&map(), OUTLIER_Z);
        assert_eq!(out.iter().map(|o| o.sm).collect::<Vec<_>>(), vec![77]);
        assert!(out[0].z > OUTLIER_Z);
    }

    #[test]
    fn the_svg_is_written_and_names_the_metric() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(file_name("latency/cg/4MiB", "cycles_per_access"));
        assert!(path.ends_with("latency_cg_4MiB.svg"));
        write_svg(&path, "L2 hit latency per SM", &map(), OUTLIER_Z).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.contains("cycles_per_access (cycles)"));
        assert!(svg.contains("L2 hit latency per SM"));
    }

    #[test]
    fn groups_that_differ_explain_the_variance() {
        let values = [1.0, 1.0, 3.0, 3.0];
        assert_eq!(group_variance_share(&values, &[0, 0, 1, 1]), Some(1.0));
        assert_eq!(group_variance_share(&values, &[0, 1, 0, 1]), Some(0.0));
        assert_eq!(group_variance_share(&values, &[0, 1]), None);
    }

    #[test]
    fn grouped_maps_draw_group_by_group() {
        let mut m = map();
        m.group = m.sm.iter().map(|s| s % 2).collect();
        let order = draw_order(&m);
        let first_odd = order.iter().position(|(_, g)| *g == Some(1)).unwrap();
        assert!(order[..first_odd].iter().all(|(_, g)| *g == Some(0)));
        assert_eq!(order.len(), 132);
    }
}
