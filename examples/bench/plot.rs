//! A small PNG chart writer: log-log line plots in panels side by side,
//! drawn on the examples' shared canvas (`examples/common/canvas.rs`).

use std::path::Path;

use crate::canvas::{Canvas, Rgb, GRID, TEXT as INK, WHITE};

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
/// "0.1", "0.01", ... below 1.
fn decade_label(e: i32) -> String {
    match e {
        e if e < 0 => format!("{}", 10f64.powi(e)),
        0..=2 => format!("{}", 10i64.pow(e as u32)),
        3..=5 => format!("{}K", 10i64.pow(e as u32 - 3)),
        6..=8 => format!("{}M", 10i64.pow(e as u32 - 6)),
        _ => format!("1E{e}"),
    }
}

fn draw_panel(cv: &mut Canvas, p: &Panel, ox: i64, oy: i64, w: i64, h: i64) {
    let s = 2;
    let (left, right, top, bottom) = (70, 20, 40, 50);
    let (x0, x1, y0, y1) = (ox + left, ox + w - right, oy + top, oy + h - bottom);
    let pts = p.series.iter().flat_map(|s| s.points.iter());
    let (mut xmin, mut xmax, mut ymin, mut ymax) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in pts.filter(|(x, y)| *x > 0.0 && *y > 0.0 && y.is_finite()) {
        xmin = xmin.min(x);
        xmax = xmax.max(x);
        ymin = ymin.min(y);
        ymax = ymax.max(y);
    }
    if xmin > xmax {
        return;
    }
    let (ex0, ex1) = (xmin.log10().floor() as i32, xmax.log10().ceil() as i32);
    let (ey0, ey1) = (ymin.log10().floor() as i32, ymax.log10().ceil() as i32);
    let (ex1, ey1) = (ex1.max(ex0 + 1), ey1.max(ey0 + 1));
    let px = |x: f64| {
        x0 + ((x.log10() - f64::from(ex0)) / f64::from(ex1 - ex0) * (x1 - x0) as f64) as i64
    };
    let py = |y: f64| {
        y1 - ((y.log10() - f64::from(ey0)) / f64::from(ey1 - ey0) * (y1 - y0) as f64) as i64
    };
    for e in ex0..=ex1 {
        let x = px(10f64.powi(e));
        cv.line(x, y0, x, y1, GRID);
        let label = decade_label(e);
        cv.text(x - label.len() as i64 * 4, y1 + 8, &label, s, INK);
    }
    for e in ey0..=ey1 {
        let y = py(10f64.powi(e));
        cv.line(x0, y, x1, y, GRID);
        let label = decade_label(e);
        cv.text(x0 - 8 - label.len() as i64 * 8, y - 5, &label, s, INK);
    }
    cv.line(x0, y1, x1, y1, INK);
    cv.line(x0, y0, x0, y1, INK);
    cv.text(x0, oy + 10, &p.title, s, INK);
    let xl = p.x_label.len() as i64 * 8;
    cv.text((x0 + x1) / 2 - xl / 2, y1 + 28, p.x_label, s, INK);
    cv.text_up(
        ox + 8,
        (y0 + y1) / 2 + p.y_label.len() as i64 * 4,
        p.y_label,
        s,
        INK,
    );
    for series in &p.series {
        let mut prev: Option<(i64, i64)> = None;
        for &(x, y) in &series.points {
            if !(x > 0.0 && y > 0.0 && y.is_finite()) {
                prev = None;
                continue;
            }
            let q = (px(x), py(y));
            if let Some(p0) = prev {
                cv.thick_line(p0.0, p0.1, q.0, q.1, series.color, 2);
            }
            cv.fill(q.0 - 3, q.1 - 3, q.0 + 3, q.1 + 3, series.color);
            prev = Some(q);
        }
    }
    for (k, series) in p.series.iter().enumerate() {
        // legend, top right, on a white box so that lines do not cross it
        let ly = y0 + 8 + k as i64 * 16;
        cv.fill(x1 - 156, ly - 4, x1 - 2, ly + 13, WHITE);
        cv.fill(x1 - 150, ly, x1 - 135, ly + 9, series.color);
        cv.text(x1 - 128, ly, series.name, s, INK);
    }
}

/// Writes the panels side by side into an RGB PNG.
pub fn write_png(path: &Path, panels: &[Panel]) -> Result<(), String> {
    let (pw, ph) = (640i64, 480i64);
    let mut cv = Canvas::new(pw as usize * panels.len().max(1), ph as usize, WHITE);
    for (i, p) in panels.iter().enumerate() {
        draw_panel(&mut cv, p, i as i64 * pw, 0, pw, ph);
    }
    cv.save_png(path)
}
