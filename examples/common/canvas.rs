//! A tiny RGB canvas for the examples' charts: lines, markers, a 3x5 pixel
//! font, and PNG output through the `png` crate. No plotting library.
#![allow(dead_code, reason = "each example uses a subset")]

use std::io::BufWriter;
use std::path::Path;

/// An RGB colour.
pub type Rgb = [u8; 3];

pub const WHITE: Rgb = [255, 255, 255];
pub const BLACK: Rgb = [0, 0, 0];
pub const GRID: Rgb = [225, 225, 225];
pub const FRAME: Rgb = [150, 150, 150];
pub const TEXT: Rgb = [40, 40, 40];

/// Colours for series: x red, y green, z blue, w orange, then more.
pub const PALETTE: [Rgb; 8] = [
    [214, 39, 40],
    [44, 160, 44],
    [31, 119, 180],
    [255, 127, 14],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
    [23, 190, 207],
];

/// A width x height RGB image.
pub struct Canvas {
    pub width: usize,
    pub height: usize,
    pixels: Vec<u8>,
}

impl Canvas {
    pub fn new(width: usize, height: usize, background: Rgb) -> Self {
        let mut pixels = Vec::with_capacity(width * height * 3);
        for _ in 0..width * height {
            pixels.extend_from_slice(&background);
        }
        Canvas {
            width,
            height,
            pixels,
        }
    }

    /// Sets one pixel; coordinates outside the canvas are ignored.
    pub fn set(&mut self, x: i64, y: i64, c: Rgb) {
        if x < 0 || y < 0 || x >= self.width as i64 || y >= self.height as i64 {
            return;
        }
        let i = (y as usize * self.width + x as usize) * 3;
        self.pixels[i..i + 3].copy_from_slice(&c);
    }

    /// A 1-pixel line (Bresenham) between two points.
    pub fn line(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, c: Rgb) {
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let (mut x, mut y, mut err) = (x0, y0, dx + dy);
        // Bounded: at most dx + dy + 1 steps.
        for _ in 0..=(dx - dy) {
            self.set(x, y, c);
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

    /// A line from floating-point coordinates (rounded; far-away points
    /// are clamped so that the loop stays short).
    pub fn line_f(&mut self, x0: f64, y0: f64, x1: f64, y1: f64, c: Rgb) {
        let lim = 4.0 * (self.width + self.height) as f64;
        let r = |v: f64| {
            if v.is_finite() {
                v.clamp(-lim, lim).round() as i64
            } else {
                0
            }
        };
        self.line(r(x0), r(y0), r(x1), r(y1), c);
    }

    /// Outline of a rectangle.
    pub fn rect(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, c: Rgb) {
        self.line(x0, y0, x1, y0, c);
        self.line(x1, y0, x1, y1, c);
        self.line(x1, y1, x0, y1, c);
        self.line(x0, y1, x0, y0, c);
    }

    /// A filled rectangle, corners included.
    pub fn fill(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, c: Rgb) {
        for y in y0..=y1 {
            for x in x0..=x1 {
                self.set(x, y, c);
            }
        }
    }

    /// A line `thick` pixels wide (Bresenham with a square brush).
    pub fn thick_line(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, c: Rgb, thick: i64) {
        if thick <= 1 {
            self.line(x0, y0, x1, y1, c);
            return;
        }
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let (mut x, mut y, mut err) = (x0, y0, dx + dy);
        let r = thick / 2;
        for _ in 0..=(dx - dy) {
            self.fill(x - r, y - r, x - r + thick - 1, y - r + thick - 1, c);
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

    /// A hollow square marker of half-size 2 centred on (x, y).
    pub fn marker(&mut self, x: f64, y: f64, c: Rgb) {
        if !(x.is_finite() && y.is_finite()) {
            return;
        }
        let (x, y) = (x.round() as i64, y.round() as i64);
        self.rect(x - 2, y - 2, x + 2, y + 2, c);
    }

    /// Text in the 3x5 font, scaled by `scale`, top-left at (x, y).
    /// Lowercase letters are drawn as capitals; unknown characters as '?'.
    pub fn text(&mut self, x: i64, y: i64, s: &str, scale: i64, c: Rgb) {
        let mut cx = x;
        for ch in s.chars() {
            let g = glyph(ch.to_ascii_uppercase());
            for (row, bits) in g.iter().enumerate() {
                for col in 0..3 {
                    if bits & (0b100 >> col) != 0 {
                        for dy in 0..scale {
                            for dx in 0..scale {
                                self.set(
                                    cx + col as i64 * scale + dx,
                                    y + row as i64 * scale + dy,
                                    c,
                                );
                            }
                        }
                    }
                }
            }
            cx += 4 * scale;
        }
    }

    /// Text turned 90 degrees counter-clockwise, read bottom to top, its
    /// first glyph's bottom-left corner at (x, y).
    pub fn text_up(&mut self, x: i64, y: i64, s: &str, scale: i64, c: Rgb) {
        let mut cy = y;
        for ch in s.chars() {
            let g = glyph(ch.to_ascii_uppercase());
            for (row, bits) in g.iter().enumerate() {
                for col in 0..3 {
                    if bits & (0b100 >> col) != 0 {
                        let px = x + row as i64 * scale;
                        let py = cy - col as i64 * scale;
                        self.fill(px, py, px + scale - 1, py + scale - 1, c);
                    }
                }
            }
            cy -= 4 * scale;
        }
    }

    /// Width in pixels of `s` drawn with [`Canvas::text`].
    pub fn text_width(s: &str, scale: i64) -> i64 {
        s.chars().count() as i64 * 4 * scale
    }

    /// Writes the canvas as an 8-bit RGB PNG.
    pub fn save_png(&self, path: &Path) -> Result<(), String> {
        let file = std::fs::File::create(path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        let mut enc =
            png::Encoder::new(BufWriter::new(file), self.width as u32, self.height as u32);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc
            .write_header()
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        w.write_image_data(&self.pixels)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        w.finish()
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

/// The 3x5 glyph of `c`: five rows, three bits each (0b100 is the left column).
fn glyph(c: char) -> [u8; 5] {
    match c {
        '0' => [0b111, 0b101, 0b101, 0b101, 0b111],
        '1' => [0b010, 0b110, 0b010, 0b010, 0b111],
        '2' => [0b111, 0b001, 0b111, 0b100, 0b111],
        '3' => [0b111, 0b001, 0b111, 0b001, 0b111],
        '4' => [0b101, 0b101, 0b111, 0b001, 0b001],
        '5' => [0b111, 0b100, 0b111, 0b001, 0b111],
        '6' => [0b111, 0b100, 0b111, 0b101, 0b111],
        '7' => [0b111, 0b001, 0b001, 0b001, 0b001],
        '8' => [0b111, 0b101, 0b111, 0b101, 0b111],
        '9' => [0b111, 0b101, 0b111, 0b001, 0b111],
        'A' => [0b010, 0b101, 0b111, 0b101, 0b101],
        'B' => [0b110, 0b101, 0b110, 0b101, 0b110],
        'C' => [0b011, 0b100, 0b100, 0b100, 0b011],
        'D' => [0b110, 0b101, 0b101, 0b101, 0b110],
        'E' => [0b111, 0b100, 0b110, 0b100, 0b111],
        'F' => [0b111, 0b100, 0b110, 0b100, 0b100],
        'G' => [0b011, 0b100, 0b101, 0b101, 0b011],
        'H' => [0b101, 0b101, 0b111, 0b101, 0b101],
        'I' => [0b111, 0b010, 0b010, 0b010, 0b111],
        'J' => [0b001, 0b001, 0b001, 0b101, 0b010],
        'K' => [0b101, 0b101, 0b110, 0b101, 0b101],
        'L' => [0b100, 0b100, 0b100, 0b100, 0b111],
        'M' => [0b101, 0b111, 0b111, 0b101, 0b101],
        'N' => [0b110, 0b101, 0b101, 0b101, 0b101],
        'O' => [0b010, 0b101, 0b101, 0b101, 0b010],
        'P' => [0b110, 0b101, 0b110, 0b100, 0b100],
        'Q' => [0b010, 0b101, 0b101, 0b110, 0b011],
        'R' => [0b110, 0b101, 0b110, 0b101, 0b101],
        'S' => [0b011, 0b100, 0b010, 0b001, 0b110],
        'T' => [0b111, 0b010, 0b010, 0b010, 0b010],
        'U' => [0b101, 0b101, 0b101, 0b101, 0b111],
        'V' => [0b101, 0b101, 0b101, 0b101, 0b010],
        'W' => [0b101, 0b101, 0b111, 0b111, 0b101],
        'X' => [0b101, 0b101, 0b010, 0b101, 0b101],
        'Y' => [0b101, 0b101, 0b010, 0b010, 0b010],
        'Z' => [0b111, 0b001, 0b010, 0b100, 0b111],
        ' ' => [0, 0, 0, 0, 0],
        '.' => [0, 0, 0, 0, 0b010],
        ',' => [0, 0, 0, 0b010, 0b100],
        '-' => [0, 0, 0b111, 0, 0],
        '+' => [0, 0b010, 0b111, 0b010, 0],
        ':' => [0, 0b010, 0, 0b010, 0],
        '#' => [0b101, 0b111, 0b101, 0b111, 0b101],
        '=' => [0, 0b111, 0, 0b111, 0],
        '/' => [0b001, 0b001, 0b010, 0b100, 0b100],
        '(' => [0b010, 0b100, 0b100, 0b100, 0b010],
        ')' => [0b010, 0b001, 0b001, 0b001, 0b010],
        '_' => [0, 0, 0, 0, 0b111],
        '"' => [0b101, 0b101, 0, 0, 0],
        '×' => [0, 0b101, 0b010, 0b101, 0],
        _ => [0b111, 0b001, 0b010, 0, 0b010],
    }
}
