//! What the SVG plots (history, fleet, dissection) share: their one error, and the legend box
//! and file write that end a chart.

use std::path::Path;

use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;

use crate::error::{Error, Result};

/// A plot that could not be drawn or written to `path`: a data error naming the file.
pub fn draw_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::data(path, format!("could not draw the plot ({e})"))
}

/// Draws the chart's legend (a white box with a black border) and writes the file.
pub fn legend_and_present<'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    root: &DrawingArea<SVGBackend<'a>, Shift>,
    path: &Path,
) -> Result<()> {
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| draw_err(path, e))?;
    root.present().map_err(|e| draw_err(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_with_a_legend_is_written_and_a_bad_path_is_a_data_error() {
        let dir = tempfile::tempdir().unwrap();
        let draw = |path: &Path| -> Result<()> {
            let root = SVGBackend::new(path, (200, 100)).into_drawing_area();
            root.fill(&WHITE).map_err(|e| draw_err(path, e))?;
            let mut chart =
                ChartBuilder::on(&root).build_cartesian_2d(0.0..1.0, 0.0..1.0).map_err(|e| draw_err(path, e))?;
            chart
                .draw_series(LineSeries::new([(0.0, 0.0), (1.0, 1.0)], BLUE))
                .map_err(|e| draw_err(path, e))?
                .label("rising");
            legend_and_present(&mut chart, &root, path)
        };
        let ok = dir.path().join("ok.svg");
        draw(&ok).unwrap();
        assert!(std::fs::read_to_string(&ok).unwrap().contains("rising"));
        let bad = dir.path().join("missing/folder/x.svg");
        let err = draw(&bad).unwrap_err().to_string();
        assert!(err.contains("could not draw the plot") && err.contains("x.svg"), "{err}");
    }
}
