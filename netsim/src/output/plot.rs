//! Plots with `plotters`: throughput, congestion window and smoothed RTT over time, one line per path.
//!
//! [`write_plots`] writes `throughput.svg`, `cwnd.svg` and `rtt.svg` into a directory. **SVG only**: plotters'
//! bitmap (PNG) backend builds without system libraries, but rendering text into a bitmap needs a font
//! rasteriser, either its `ttf` feature (fontconfig and freetype system libraries) or `ab_glyph` (a font
//! file shipped with the program); without one, drawing a label on a bitmap panics. SVG text is rendered by
//! the viewer. Convert with any SVG tool (`rsvg-convert -o x.png x.svg`) when a PNG is needed.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::OutputError;
use crate::metrics::PathSeries;

/// One quantity to plot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// Goodput over each interval, Mbit/s.
    Throughput,
    /// Congestion window, kB.
    Cwnd,
    /// Smoothed RTT, ms.
    Rtt,
}

impl Quantity {
    /// Every quantity, in file order.
    pub const ALL: [Quantity; 3] = [Quantity::Throughput, Quantity::Cwnd, Quantity::Rtt];

    /// File stem (`throughput`, `cwnd`, `rtt`).
    pub fn stem(self) -> &'static str {
        match self {
            Quantity::Throughput => "throughput",
            Quantity::Cwnd => "cwnd",
            Quantity::Rtt => "rtt",
        }
    }

    fn axis(self) -> &'static str {
        match self {
            Quantity::Throughput => "throughput (Mbit/s)",
            Quantity::Cwnd => "cwnd (kB)",
            Quantity::Rtt => "smoothed RTT (ms)",
        }
    }

    /// The series' points: (time in s, value in this quantity's unit).
    pub fn points(self, series: &PathSeries) -> Vec<(f64, f64)> {
        series
            .samples
            .iter()
            .map(|s| {
                let t = s.time.since_epoch().as_secs_f64();
                #[allow(clippy::cast_precision_loss)]
                let v = match self {
                    Quantity::Throughput => s.throughput_bps / 1e6,
                    Quantity::Cwnd => s.cwnd as f64 / 1e3,
                    Quantity::Rtt => s.srtt.as_secs_f64() * 1e3,
                };
                (t, v)
            })
            .collect()
    }
}

/// Draws one quantity for every series into an SVG file.
pub fn write_svg(
    path: &Path,
    title: &str,
    quantity: Quantity,
    series: &[PathSeries],
) -> Result<(), OutputError> {
    let lines: Vec<(String, Vec<(f64, f64)>)> =
        series.iter().map(|s| (s.label(), quantity.points(s))).collect();
    let x_max = lines
        .iter()
        .flat_map(|(_, p)| p.iter().map(|(t, _)| *t))
        .fold(0.0_f64, f64::max)
        .max(1e-3);
    let y_max = lines
        .iter()
        .flat_map(|(_, p)| p.iter().map(|(_, v)| *v))
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max);
    let y_max = if y_max > 0.0 { y_max * 1.1 } else { 1.0 };
    let err = |e: &dyn std::fmt::Display| OutputError::Plot {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let root = SVGBackend::new(path, (960, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("{title}: {}", quantity.stem()), ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc(quantity.axis())
        .draw()
        .map_err(|e| err(&e))?;
    for (i, (name, points)) in lines.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(points.iter().copied(), color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// Writes `throughput.svg`, `cwnd.svg` and `rtt.svg` into `dir` (created if needed); returns the files.
pub fn write_plots(dir: &Path, title: &str, series: &[PathSeries]) -> Result<Vec<PathBuf>, OutputError> {
    std::fs::create_dir_all(dir).map_err(|e| OutputError::io(dir, e))?;
    let mut files = Vec::with_capacity(Quantity::ALL.len());
    for q in Quantity::ALL {
        let path = dir.join(format!("{}.svg", q.stem()));
        write_svg(&path, title, q, series)?;
        files.push(path);
    }
    Ok(files)
}
