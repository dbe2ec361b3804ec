//! What both examples' `--plot` charts share: the font plotters draws text
//! with (read from a system font file at run time: no font is bundled and no
//! C font library is linked), the series colours and the PNG encoder.
#![allow(dead_code, reason = "each example uses a subset")]

use std::io::BufWriter;
use std::path::Path;
use std::sync::OnceLock;

use plotters::style::{FontStyle, RGBColor};

/// The family name every chart's text uses; [`register_font`] gives it a face.
pub const FONT: &str = "sans-serif";

/// DejaVu Sans where Debian/Ubuntu (`fonts-dejavu-core`), Fedora and Arch
/// install it.
const FONT_FILES: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
];

/// Colours for series: x red, y green, z blue, w orange, then more.
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];
pub const GRID: RGBColor = RGBColor(225, 225, 225);
pub const FRAME: RGBColor = RGBColor(150, 150, 150);
pub const TEXT: RGBColor = RGBColor(40, 40, 40);

/// Registers the first of `FONT_FILES` found as [`FONT`]; once per process.
///
/// # Errors
/// A one-line message naming the package to install when no file is found,
/// or the file when it is not a font.
pub fn register_font() -> Result<(), String> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        let Some((path, bytes)) = FONT_FILES
            .iter()
            .find_map(|p| std::fs::read(p).ok().map(|b| (p, b)))
        else {
            return Err(format!(
                "no font for the chart: install DejaVu Sans \
                 (Debian/Ubuntu: apt-get install fonts-dejavu-core; looked for {})",
                FONT_FILES[0]
            ));
        };
        // plotters keeps registered fonts for the life of the process.
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        plotters::style::register_font(FONT, FontStyle::Normal, bytes)
            .map_err(|_| format!("{path}: not a usable font file"))
    })
    .clone()
}

/// Writes an RGB8 buffer (what plotters' bitmap backend draws into) as a PNG.
pub fn save_png(path: &Path, width: u32, height: u32, rgb: &[u8]) -> Result<(), String> {
    let file = std::fs::File::create(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let mut enc = png::Encoder::new(BufWriter::new(file), width, height);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc
        .write_header()
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    w.write_image_data(rgb)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    w.finish()
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}
