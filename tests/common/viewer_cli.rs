//! Runs the `viewer` example as a user does, in an X window under
//! `xvfb-run` or offscreen (no display), and reads its `--screenshot` PNGs.
//! Include it after `sample_cli`:
//! `#[path = "common/viewer_cli.rs"] mod viewer_cli;`.
#![allow(dead_code, reason = "each test binary uses a subset")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::sample_cli::example_binary;

/// The viewer binary, built once per test binary.
pub fn viewer() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| example_binary("viewer"))
}

/// Where the viewer renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// An X window under `xvfb-run`.
    Window,
    /// No display at all: the offscreen path.
    Offscreen,
}

impl Route {
    /// `viewer ARGS` by this route.
    pub fn run(self, args: &[&str]) -> Output {
        match self {
            Route::Window => run_in_window(args),
            Route::Offscreen => run_headless(args),
        }
    }
}

/// `viewer ARGS` with no display at all.
pub fn run_headless(args: &[&str]) -> Output {
    Command::new(viewer())
        .args(args)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("WAYLAND_SOCKET")
        .output()
        .unwrap()
}

/// `viewer ARGS` in an X window under `xvfb-run`.
pub fn run_in_window(args: &[&str]) -> Output {
    Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 640x480x24"])
        .arg(viewer())
        .args(args)
        .output()
        .unwrap()
}

/// True when `KEYFRAME_GPU_REQUIRE_ADAPTER=1`.
pub fn require_adapter() -> bool {
    std::env::var("KEYFRAME_GPU_REQUIRE_ADAPTER").as_deref() == Ok("1")
}

/// True if `xvfb-run` exists; else a SKIP line for `test` (a failure with
/// KEYFRAME_GPU_REQUIRE_ADAPTER=1).
pub fn has_xvfb(test: &str) -> bool {
    if Command::new("xvfb-run").arg("--help").output().is_ok() {
        return true;
    }
    assert!(
        !require_adapter(),
        "{test}: KEYFRAME_GPU_REQUIRE_ADAPTER=1 but xvfb-run is not installed"
    );
    println!("SKIP {test}: xvfb-run is not installed (Debian: apt-get install xvfb)");
    false
}

/// RGBA8 pixels of a PNG, and its size.
pub fn read_png(path: &Path) -> (Vec<[u8; 4]>, u32, u32) {
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgba, "{}", path.display());
    assert_eq!(info.bit_depth, png::BitDepth::Eight, "{}", path.display());
    let px = buf[..info.buffer_size()]
        .chunks_exact(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect();
    (px, info.width, info.height)
}

/// Pixels of `a` and `b` that differ by more than 8 levels in a channel.
pub fn differing_much(a: &Path, b: &Path) -> usize {
    let (pa, _, _) = read_png(a);
    let (pb, _, _) = read_png(b);
    pa.iter()
        .zip(&pb)
        .filter(|(x, y)| x.iter().zip(y.iter()).any(|(p, q)| p.abs_diff(*q) > 8))
        .count()
}
