//! A small PNG chart writer: log-log line plots in panels side by side,
//! drawn with plotters (font, colours and PNG encoding shared with sample's
//! plot in `examples/common/canvas.rs`).

use std::path::Path;

use plotters::prelude::*;

use crate::canvas::{register_font, save_png, FONT, FRAME, GRID, TEXT as INK};

/// An RGB colour.
pub type Rgb = [u8; 3];

/// One line of a panel: a name, a colour and (x, y) points, x and y > 0.
pub struct Series {
    pub name: &'static str,
    pub color: Rgb,
    pub points: Vec<(f64, f64)>,
}

/// One panel: a title, axis labels and its series.
pub struct Panel {
    pub title: String,
    pub x_label: &'static str,
    pub y_label: &'static str,
    pub series: Vec<Series>,
}

/// "1", "10", "100", "1K", "10K", "100K", "1M", ... for powers of ten;
/// "0.1", "0.01", ... below 1; other values (ticks between decades) with
/// the same suffixes.
fn axis_label(v: f64) -> String {
    let e = v.log10().round() as i32;
    if (v - 10f64.powi(e)).abs() > 1e-9 * v {
        return match v {
            v if v >= 1e6 => format!("{}M", v / 1e6),
            v if v >= 1e3 => format!("{}K", v / 1e3),
            v => format!("{}", (v * 1e3).round() / 1e3),
        };
    }
    match e {
        e if e < 0 => format!("{}", 10f64.powi(e)),
        0..=2 => format!("{}", 10i64.pow(e as u32)),
        3..=5 => format!("{}K", 10i64.pow(e as u32 - 3)),
        6..=8 => format!("{}M", 10i64.pow(e as u32 - 6)),
        _ => format!("1E{e}"),
    }
}

/// Whether a point can be drawn on log-log axes.
fn drawable(&(x, y): &(f64, f64)) -> bool {
    x > 0.0 && y > 0.0 && x.is_finite() && y.is_finite()
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    p: &Panel,
) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("drawing the chart: {e}");
    let pts = p
        .series
        .iter()
        .flat_map(|s| s.points.iter())
        .filter(|p| drawable(p));
    let (mut xmin, mut xmax, mut ymin, mut ymax) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in pts {
        xmin = xmin.min(x);
        xmax = xmax.max(x);
        ymin = ymin.min(y);
        ymax = ymax.max(y);
    }
    if xmin > xmax {
        return Ok(());
    }
    // Whole decades, at least one on each axis.
    let decades = |lo: f64, hi: f64| {
        let (e0, e1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        (10f64.powi(e0), 10f64.powi(e1.max(e0 + 1)))
    };
    let ((x0, x1), (y0, y1)) = (decades(xmin, xmax), decades(ymin, ymax));
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, (FONT, 16).into_font().color(&INK))
        .margin(12)
        .margin_right(20)
        .x_label_area_size(46)
        .y_label_area_size(64)
        .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
        .map_err(err)?;
    let label = |v: &f64| axis_label(*v);
    chart
        .configure_mesh()
        .bold_line_style(GRID)
        .max_light_lines(0)
        .axis_style(FRAME)
        .label_style((FONT, 13).into_font().color(&INK))
        .axis_desc_style((FONT, 14).into_font().color(&INK))
        .x_desc(p.x_label)
        .y_desc(p.y_label)
        .x_label_formatter(&label)
        .y_label_formatter(&label)
        .draw()
        .map_err(err)?;
    for series in &p.series {
        let [r, g, b] = series.color;
        let color = RGBColor(r, g, b);
        let points = series.points.iter().copied().filter(drawable);
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)).point_size(3))
            .map_err(err)?
            .label(series.name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 15, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE)
        .border_style(FRAME)
        .label_font((FONT, 13).into_font().color(&INK))
        .draw()
        .map_err(err)
}

/// Writes the panels side by side into an RGB PNG.
pub fn write_png(path: &Path, panels: &[Panel]) -> Result<(), String> {
    register_font()?;
    let (pw, ph) = (640u32, 480u32);
    let (w, h) = (pw * panels.len().max(1) as u32, ph);
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        let err = |e| format!("drawing the chart: {e}");
        root.fill(&WHITE).map_err(err)?;
        for (p, area) in panels
            .iter()
            .zip(root.split_evenly((1, panels.len().max(1))))
        {
            draw_panel(&area, p)?;
        }
        root.present().map_err(err)?;
    }
    save_png(path, w, h, &rgb)
}
