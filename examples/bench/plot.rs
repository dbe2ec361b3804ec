//! A small PNG chart writer: log-log line plots in panels side by side,
//! drawn with a hand-rolled rasterizer and a 3x5 bitmap font.

use std::path::Path;

/// One line of a panel: a name, a colour and (x, y) points, x and y > 0.
pub struct Series {
    pub name: &'static str,
    pub color: [u8; 3],
    pub points: Vec<(f64, f64)>,
}

/// One panel: a title, axis labels and its series.
pub struct Panel {
    pub title: String,
    pub x_label: &'static str,
    pub y_label: &'static str,
    pub series: Vec<Series>,
}

struct Canvas {
    w: usize,
    h: usize,
    px: Vec<u8>,
}

impl Canvas {
    fn new(w: usize, h: usize) -> Self {
        Canvas {
            w,
            h,
            px: vec![255; w * h * 3],
        }
    }

    fn set(&mut self, x: i64, y: i64, c: [u8; 3]) {
        if x >= 0 && y >= 0 && (x as usize) < self.w && (y as usize) < self.h {
            let i = (y as usize * self.w + x as usize) * 3;
            self.px[i..i + 3].copy_from_slice(&c);
        }
    }

    fn rect(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, c: [u8; 3]) {
        for y in y0..=y1 {
            for x in x0..=x1 {
                self.set(x, y, c);
            }
        }
    }

    /// A line `thick` pixels wide (Bresenham with a square brush).
    fn line(&mut self, (x0, y0): (i64, i64), (x1, y1): (i64, i64), c: [u8; 3], thick: i64) {
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let (mut x, mut y, mut err) = (x0, y0, dx + dy);
        let r = thick / 2;
        loop {
            self.rect(x - r, y - r, x - r + thick - 1, y - r + thick - 1, c);
            if x == x1 && y == y1 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
        }
    }

    /// Text in the 3x5 font at `scale` pixels per font pixel; returns the width.
    fn text(&mut self, x: i64, y: i64, s: &str, c: [u8; 3], scale: i64) -> i64 {
        let mut cx = x;
        for ch in s.chars() {
            let g = glyph(ch.to_ascii_uppercase());
            for (row, bits) in g.iter().enumerate() {
                for (col, b) in bits.bytes().enumerate() {
                    if b == b'#' {
                        let px = cx + col as i64 * scale;
                        let py = y + row as i64 * scale;
                        self.rect(px, py, px + scale - 1, py + scale - 1, c);
                    }
                }
            }
            cx += 4 * scale;
        }
        cx - x
    }

    /// Vertical text, bottom to top, one glyph under another rotated.
    fn text_up(&mut self, x: i64, y: i64, s: &str, c: [u8; 3], scale: i64) {
        let mut cy = y;
        for ch in s.chars() {
            let g = glyph(ch.to_ascii_uppercase());
            for (row, bits) in g.iter().enumerate() {
                for (col, b) in bits.bytes().enumerate() {
                    if b == b'#' {
                        // rotate 90 degrees counter-clockwise
                        let px = x + row as i64 * scale;
                        let py = cy - col as i64 * scale;
                        self.rect(px, py, px + scale - 1, py + scale - 1, c);
                    }
                }
            }
            cy -= 4 * scale;
        }
    }
}

fn glyph(c: char) -> [&'static str; 5] {
    match c {
        '0' => ["###", "#.#", "#.#", "#.#", "###"],
        '1' => [".#.", "##.", ".#.", ".#.", "###"],
        '2' => ["###", "..#", "###", "#..", "###"],
        '3' => ["###", "..#", ".##", "..#", "###"],
        '4' => ["#.#", "#.#", "###", "..#", "..#"],
        '5' => ["###", "#..", "###", "..#", "###"],
        '6' => ["###", "#..", "###", "#.#", "###"],
        '7' => ["###", "..#", ".#.", ".#.", ".#."],
        '8' => ["###", "#.#", "###", "#.#", "###"],
        '9' => ["###", "#.#", "###", "..#", "###"],
        'A' => [".#.", "#.#", "###", "#.#", "#.#"],
        'B' => ["##.", "#.#", "##.", "#.#", "##."],
        'C' => [".##", "#..", "#..", "#..", ".##"],
        'D' => ["##.", "#.#", "#.#", "#.#", "##."],
        'E' => ["###", "#..", "##.", "#..", "###"],
        'F' => ["###", "#..", "##.", "#..", "#.."],
        'G' => [".##", "#..", "#.#", "#.#", ".##"],
        'H' => ["#.#", "#.#", "###", "#.#", "#.#"],
        'I' => ["###", ".#.", ".#.", ".#.", "###"],
        'J' => ["..#", "..#", "..#", "#.#", ".#."],
        'K' => ["#.#", "#.#", "##.", "#.#", "#.#"],
        'L' => ["#..", "#..", "#..", "#..", "###"],
        'M' => ["#.#", "###", "###", "#.#", "#.#"],
        'N' => ["##.", "#.#", "#.#", "#.#", "#.#"],
        'O' => [".#.", "#.#", "#.#", "#.#", ".#."],
        'P' => ["##.", "#.#", "##.", "#..", "#.."],
        'Q' => [".#.", "#.#", "#.#", "##.", ".##"],
        'R' => ["##.", "#.#", "##.", "#.#", "#.#"],
        'S' => [".##", "#..", ".#.", "..#", "##."],
        'T' => ["###", ".#.", ".#.", ".#.", ".#."],
        'U' => ["#.#", "#.#", "#.#", "#.#", "###"],
        'V' => ["#.#", "#.#", "#.#", "#.#", ".#."],
        'W' => ["#.#", "#.#", "###", "###", "#.#"],
        'X' => ["#.#", "#.#", ".#.", "#.#", "#.#"],
        'Y' => ["#.#", "#.#", ".#.", ".#.", ".#."],
        'Z' => ["###", "..#", ".#.", "#..", "###"],
        '.' => ["...", "...", "...", "...", ".#."],
        ',' => ["...", "...", "...", ".#.", "#.."],
        '-' => ["...", "...", "###", "...", "..."],
        '/' => ["..#", "..#", ".#.", "#..", "#.."],
        '(' => [".#.", "#..", "#..", "#..", ".#."],
        ')' => [".#.", "..#", "..#", "..#", ".#."],
        ':' => ["...", ".#.", "...", ".#.", "..."],
        '=' => ["...", "###", "...", "###", "..."],
        'x' => ["...", "#.#", ".#.", "#.#", "..."],
        _ => ["...", "...", "...", "...", "..."],
    }
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

const GRID: [u8; 3] = [225, 225, 225];
const INK: [u8; 3] = [40, 40, 40];

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
        cv.line((x, y0), (x, y1), GRID, 1);
        let label = decade_label(e);
        cv.text(x - label.len() as i64 * 4, y1 + 8, &label, INK, s);
    }
    for e in ey0..=ey1 {
        let y = py(10f64.powi(e));
        cv.line((x0, y), (x1, y), GRID, 1);
        let label = decade_label(e);
        cv.text(x0 - 8 - label.len() as i64 * 8, y - 5, &label, INK, s);
    }
    cv.line((x0, y1), (x1, y1), INK, 1);
    cv.line((x0, y0), (x0, y1), INK, 1);
    cv.text(x0, oy + 10, &p.title, INK, s);
    let xl = p.x_label.len() as i64 * 8;
    cv.text((x0 + x1) / 2 - xl / 2, y1 + 28, p.x_label, INK, s);
    cv.text_up(
        ox + 8,
        (y0 + y1) / 2 + p.y_label.len() as i64 * 4,
        p.y_label,
        INK,
        s,
    );
    for series in &p.series {
        let mut prev = None;
        for &(x, y) in &series.points {
            if !(x > 0.0 && y > 0.0 && y.is_finite()) {
                prev = None;
                continue;
            }
            let q = (px(x), py(y));
            if let Some(p0) = prev {
                cv.line(p0, q, series.color, 2);
            }
            cv.rect(q.0 - 3, q.1 - 3, q.0 + 3, q.1 + 3, series.color);
            prev = Some(q);
        }
    }
    for (k, series) in p.series.iter().enumerate() {
        // legend, top right, on a white box so that lines do not cross it
        let ly = y0 + 8 + k as i64 * 16;
        cv.rect(x1 - 156, ly - 4, x1 - 2, ly + 13, [255, 255, 255]);
        cv.rect(x1 - 150, ly, x1 - 135, ly + 9, series.color);
        cv.text(x1 - 128, ly, series.name, INK, s);
    }
}

/// Writes the panels side by side into an RGB PNG.
pub fn write_png(path: &Path, panels: &[Panel]) -> Result<(), String> {
    let (pw, ph) = (640i64, 480i64);
    let mut cv = Canvas::new(pw as usize * panels.len().max(1), ph as usize);
    for (i, p) in panels.iter().enumerate() {
        draw_panel(&mut cv, p, i as i64 * pw, 0, pw, ph);
    }
    let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), cv.w as u32, cv.h as u32);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc
        .write_header()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    writer
        .write_image_data(&cv.px)
        .map_err(|e| format!("{}: {e}", path.display()))
}
