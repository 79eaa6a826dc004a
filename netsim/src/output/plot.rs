//! Plots with `plotters`: throughput, congestion window and smoothed RTT over time, one line per path.
//!
//! [`write_plots`] writes each quantity twice into a directory: `throughput.svg`, `cwnd.svg`, `rtt.svg` and
//! `throughput.png`, `cwnd.png`, `rtt.png` (960 × 540 pixels, 8-bit RGB).
//!
//! [`write_metric_plots`] draws controller metrics by name (`cc_<name>.svg` and `.png`), for
//! `mpquic-sim run --plot DIR --plot-cc rtt_mid,beta` and the like.
//!
//! A flow that reports its receiver also gets `receiver_<flow>.svg` and `.png` (960 × 810): three panels
//! over the same time axis, the congestion window and the smoothed RTT of each of its paths above the
//! receiving end's reassembly buffer (out-of-order bytes) and unread bytes, so that head-of-line blocking
//! can be read against the path that caused it.
//!
//! Text on the PNGs is rasterised by plotters' `ab_glyph` feature (pure Rust) with a font compiled into the
//! binary: Ubuntu Light from the `epaint_default_fonts` crate (egui's default fonts), so no system font,
//! fontconfig or freetype is needed. The same font gives plotters the text extents it lays out the SVGs
//! with; the SVG text itself names `sans-serif` and is rendered by the viewer. The bitmap is drawn into
//! memory and encoded with the `png` crate.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::OutputError;
use crate::metrics::PathSeries;

/// Width and height of every plot, in pixels (SVG user units and PNG pixels alike).
pub const SIZE: (u32, u32) = (960, 540);

/// The font family every label names.
pub const FONT: &str = "sans-serif";

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

/// One line of a plot: its legend and its points.
type Line = (String, Vec<(f64, f64)>);

/// Registers the built-in font with plotters (once per process); the error says why it could not be.
pub fn register_font() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            plotters::style::register_font(FONT, FontStyle::Normal, epaint_default_fonts::UBUNTU_LIGHT)
                .map_err(|_| "the built-in font (Ubuntu Light) could not be parsed".to_owned())
        })
        .clone()
}

/// Draws `lines` on `root` with the caption `title: stem` and the value axis `axis`.
fn draw_named<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    stem: &str,
    axis: &str,
    lines: &[Line],
) -> Result<(), String> {
    let x_max = lines
        .iter()
        .flat_map(|(_, p)| p.iter().map(|(t, _)| *t))
        .fold(0.0_f64, f64::max)
        .max(1e-3);
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let caption = format!("{title}: {stem}");
    draw_panel(root, &caption, axis, lines, x_max, &WHOLE)?;
    root.present().map_err(|e| e.to_string())
}

/// Sizes of a chart: a whole picture or one panel of several.
struct Style {
    caption: u32,
    margin: u32,
    x_labels: u32,
    labels: u32,
    axis: u32,
}

/// A chart that fills its picture.
const WHOLE: Style = Style {
    caption: 22,
    margin: 12,
    x_labels: 40,
    labels: 14,
    axis: 16,
};

/// One panel of a stacked picture.
const PANEL: Style = Style {
    caption: 18,
    margin: 10,
    x_labels: 34,
    labels: 13,
    axis: 14,
};

fn lines(quantity: Quantity, series: &[PathSeries]) -> Vec<Line> {
    series.iter().map(|s| (s.label(), quantity.points(s))).collect()
}

fn plot_error(path: &Path, message: String) -> OutputError {
    OutputError::Plot {
        path: path.display().to_string(),
        message,
    }
}

/// Draws one quantity for every series into an SVG file.
pub fn write_svg(
    path: &Path,
    title: &str,
    quantity: Quantity,
    series: &[PathSeries],
) -> Result<(), OutputError> {
    write_svg_lines(
        path,
        title,
        quantity.stem(),
        quantity.axis(),
        &lines(quantity, series),
    )
}

/// Draws `lines` into an SVG file with the caption `title: stem` and value axis `axis`.
fn write_svg_lines(
    path: &Path,
    title: &str,
    stem: &str,
    axis: &str,
    lines: &[Line],
) -> Result<(), OutputError> {
    register_font().map_err(|e| plot_error(path, e))?;
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    draw_named(&root, title, stem, axis, lines).map_err(|e| plot_error(path, e))
}

/// Draws one quantity for every series into a PNG file ([`SIZE`], 8-bit RGB).
pub fn write_png(
    path: &Path,
    title: &str,
    quantity: Quantity,
    series: &[PathSeries],
) -> Result<(), OutputError> {
    write_png_lines(
        path,
        title,
        quantity.stem(),
        quantity.axis(),
        &lines(quantity, series),
    )
}

/// Draws `lines` into a PNG file ([`SIZE`], 8-bit RGB) with the caption `title: stem` and value axis `axis`.
fn write_png_lines(
    path: &Path,
    title: &str,
    stem: &str,
    axis: &str,
    lines: &[Line],
) -> Result<(), OutputError> {
    register_font().map_err(|e| plot_error(path, e))?;
    let (w, h) = SIZE;
    let len = usize::try_from(u64::from(w) * u64::from(h) * 3).unwrap_or(usize::MAX);
    let mut pixels = vec![0u8; len];
    {
        let backend = BitMapBackend::<plotters::backend::RGBPixel>::with_buffer_and_format(&mut pixels, SIZE)
            .map_err(|e| plot_error(path, e.to_string()))?;
        let root = backend.into_drawing_area();
        draw_named(&root, title, stem, axis, lines).map_err(|e| plot_error(path, e))?;
    }
    encode_png(path, &pixels, SIZE)
}

/// Writes 8-bit RGB `pixels` of `size` (width, height) as a PNG file.
pub fn encode_png(path: &Path, pixels: &[u8], size: (u32, u32)) -> Result<(), OutputError> {
    let (w, h) = size;
    let file = std::fs::File::create(path).map_err(|e| OutputError::io(path, e))?;
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder
        .write_header()
        .map_err(|e| plot_error(path, e.to_string()))?;
    writer
        .write_image_data(pixels)
        .map_err(|e| plot_error(path, e.to_string()))?;
    writer.finish().map_err(|e| plot_error(path, e.to_string()))
}

/// Writes `<quantity>.svg` and `<quantity>.png` for throughput, cwnd and RTT into `dir` (created if needed),
/// then `receiver_<flow>.svg` and `.png` for each flow that reports its receiver; returns the files, each
/// SVG followed by its PNG.
pub fn write_plots(dir: &Path, title: &str, series: &[PathSeries]) -> Result<Vec<PathBuf>, OutputError> {
    std::fs::create_dir_all(dir).map_err(|e| OutputError::io(dir, e))?;
    let mut files = Vec::with_capacity(Quantity::ALL.len() * 2);
    for q in Quantity::ALL {
        let svg = dir.join(format!("{}.svg", q.stem()));
        write_svg(&svg, title, q, series)?;
        files.push(svg);
        let png = dir.join(format!("{}.png", q.stem()));
        write_png(&png, title, q, series)?;
        files.push(png);
    }
    files.extend(write_receiver_plots(dir, title, series)?);
    Ok(files)
}

/// The points of controller metric `name` in `series` (time in s, the metric's value as the controller
/// reports it); samples without the metric are skipped.
pub fn metric_points(series: &PathSeries, name: &str) -> Vec<(f64, f64)> {
    series
        .samples
        .iter()
        .filter_map(|s| {
            let (_, v) = s.cc.iter().find(|(n, _)| n == name)?;
            Some((s.time.since_epoch().as_secs_f64(), *v))
        })
        .collect()
}

/// The names of the controller metrics `series` report, sorted and without repeats.
pub fn metric_names(series: &[PathSeries]) -> Vec<String> {
    let mut names: Vec<String> = series
        .iter()
        .flat_map(|s| s.samples.iter().flat_map(|x| x.cc.iter().map(|(n, _)| n.clone())))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Writes `cc_<name>.svg` and `cc_<name>.png` into `dir` (created if needed) for each controller metric in
/// `names` (the extras a controller reports per path, e.g. D-OLIA's `rtt_mid` and `beta`; the CSV files'
/// `cc.<name>` columns), one line per path that reports it, in the metric's own unit. A name that no path
/// reports is an error that lists the names the run has.
pub fn write_metric_plots(
    dir: &Path,
    title: &str,
    series: &[PathSeries],
    names: &[String],
) -> Result<Vec<PathBuf>, OutputError> {
    std::fs::create_dir_all(dir).map_err(|e| OutputError::io(dir, e))?;
    let mut files = Vec::with_capacity(names.len() * 2);
    for name in names {
        let lines: Vec<Line> = series
            .iter()
            .map(|s| (s.label(), metric_points(s, name)))
            .filter(|(_, p)| !p.is_empty())
            .collect();
        let stem = format!("cc_{name}");
        if lines.is_empty() {
            return Err(plot_error(
                &dir.join(format!("{stem}.svg")),
                format!(
                    "no path reports the controller metric `{name}` (this run's metrics: {})",
                    metric_names(series).join(", ")
                ),
            ));
        }
        let axis = format!("cc.{name}");
        let svg = dir.join(format!("{stem}.svg"));
        write_svg_lines(&svg, title, &stem, &axis, &lines)?;
        files.push(svg);
        let png = dir.join(format!("{stem}.png"));
        write_png_lines(&png, title, &stem, &axis, &lines)?;
        files.push(png);
    }
    Ok(files)
}

/// Size of a receiver plot: three panels of the width of the others.
pub const RECEIVER_SIZE: (u32, u32) = (960, 810);

/// The flows (in order) whose series carry receiver samples.
fn receiver_flows(series: &[PathSeries]) -> Vec<&str> {
    let mut flows: Vec<&str> = Vec::new();
    for s in series {
        if s.samples.iter().any(|x| x.receiver.is_some()) && !flows.contains(&s.flow.as_str()) {
            flows.push(&s.flow);
        }
    }
    flows
}

/// The receiver's lines of `flow`: out-of-order and unread kB, from its first path's series that has them.
fn receiver_lines(series: &[PathSeries], flow: &str) -> Vec<Line> {
    let Some(s) = series
        .iter()
        .find(|s| s.flow == flow && s.samples.iter().any(|x| x.receiver.is_some()))
    else {
        return Vec::new();
    };
    #[allow(clippy::cast_precision_loss)]
    let pick = |f: fn(&crate::metrics::ReceiverSample) -> u64| -> Vec<(f64, f64)> {
        s.samples
            .iter()
            .filter_map(|x| {
                Some((
                    x.time.since_epoch().as_secs_f64(),
                    f(x.receiver.as_ref()?) as f64 / 1e3,
                ))
            })
            .collect()
    };
    vec![
        (
            "out-of-order (reassembly)".to_owned(),
            pick(|r| r.out_of_order_bytes),
        ),
        ("unread".to_owned(), pick(|r| r.unread_bytes)),
    ]
}

/// One panel: `lines` against time, titled `caption`, y axis `axis`.
fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    caption: &str,
    axis: &str,
    lines: &[Line],
    x_max: f64,
    style: &Style,
) -> Result<(), String> {
    let msg = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let y_max = lines
        .iter()
        .flat_map(|(_, p)| p.iter().map(|(_, v)| *v))
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max);
    let y_max = if y_max > 0.0 { y_max * 1.1 } else { 1.0 };
    let mut chart = ChartBuilder::on(area)
        .caption(caption, (FONT, style.caption))
        .margin(style.margin)
        .x_label_area_size(style.x_labels)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(msg)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc(axis)
        .label_style((FONT, style.labels))
        .axis_desc_style((FONT, style.axis))
        .draw()
        .map_err(msg)?;
    for (i, (name, points)) in lines.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(points.iter().copied(), color.stroke_width(2)))
            .map_err(msg)?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .label_font((FONT, style.labels))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(msg)
}

/// Draws the receiver plot of `flow` (see the module documentation) on `root`.
fn draw_receiver<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    flow: &str,
    series: &[PathSeries],
) -> Result<(), String> {
    let msg = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(msg)?;
    let own: Vec<PathSeries> = series.iter().filter(|s| s.flow == flow).cloned().collect();
    let rx = receiver_lines(series, flow);
    let x_max = own
        .iter()
        .flat_map(|s| s.samples.iter().map(|x| x.time.since_epoch().as_secs_f64()))
        .fold(0.0_f64, f64::max)
        .max(1e-3);
    let (top, rest) = root.split_vertically(40);
    top.titled(&format!("{title}: {flow}, paths and receiver"), (FONT, 22))
        .map_err(msg)?;
    let panels = rest.split_evenly((3, 1));
    let (Some(cwnd), Some(rtt), Some(buf)) = (panels.first(), panels.get(1), panels.get(2)) else {
        return Err("no room for the panels".to_owned());
    };
    draw_panel(
        cwnd,
        "congestion window",
        "cwnd (kB)",
        &lines(Quantity::Cwnd, &own),
        x_max,
        &PANEL,
    )?;
    draw_panel(
        rtt,
        "smoothed RTT",
        "RTT (ms)",
        &lines(Quantity::Rtt, &own),
        x_max,
        &PANEL,
    )?;
    draw_panel(buf, "receiver", "bytes (kB)", &rx, x_max, &PANEL)?;
    root.present().map_err(msg)
}

/// Writes `receiver_<flow>.svg` and `.png` for each flow whose series carry receiver samples.
pub fn write_receiver_plots(
    dir: &Path,
    title: &str,
    series: &[PathSeries],
) -> Result<Vec<PathBuf>, OutputError> {
    let mut files = Vec::new();
    for flow in receiver_flows(series) {
        let svg = dir.join(format!("receiver_{flow}.svg"));
        register_font().map_err(|e| plot_error(&svg, e))?;
        {
            let root = SVGBackend::new(&svg, RECEIVER_SIZE).into_drawing_area();
            draw_receiver(&root, title, flow, series).map_err(|e| plot_error(&svg, e))?;
        }
        files.push(svg);
        let png = dir.join(format!("receiver_{flow}.png"));
        let (w, h) = RECEIVER_SIZE;
        let len = usize::try_from(u64::from(w) * u64::from(h) * 3).unwrap_or(usize::MAX);
        let mut pixels = vec![0u8; len];
        {
            let backend = BitMapBackend::<plotters::backend::RGBPixel>::with_buffer_and_format(
                &mut pixels,
                RECEIVER_SIZE,
            )
            .map_err(|e| plot_error(&png, e.to_string()))?;
            draw_receiver(&backend.into_drawing_area(), title, flow, series)
                .map_err(|e| plot_error(&png, e))?;
        }
        encode_png(&png, &pixels, RECEIVER_SIZE)?;
        files.push(png);
    }
    Ok(files)
}
