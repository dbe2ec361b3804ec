//! `viewer`: a skinned, animated model in a window, animated on the GPU by
//! one [`keyframe_gpu::Animator`] for every instance and drawn instanced
//! from the joint matrices its compute passes wrote, with no readback. This
//! is the reference for wiring the crate into a frame loop: see
//! `player.rs` (what a frame records) and `window.rs` (winit and the
//! surface).
//!
//! ```text
//! cargo run --release --example viewer                          # the bending tube, built in code
//! cargo run --release --example viewer -- Fox.glb --instances 100
//! cargo run --example viewer -- --screenshot shot.png --frames 5 # write the 5th frame and exit
//! ```
//!
//! With a file it shows the file's first skinned mesh, or, when no node is
//! skinned, every node with a mesh, each moved by its node's animation;
//! morph targets apply. Instances stand on a grid, each at its own time.
//!
//! Keys: 1-9 crossfade to clip k over 0.3 s (the mixer: `player.rs`),
//! space pause, + and - speed, R random times, Esc quit. Mouse: drag to
//! turn the camera, wheel to zoom. The title shows the clip ("A -> B"
//! during a fade), the instance count, the frame time and the GPU time of
//! the animation passes (timestamp queries; "n/a" where the adapter has
//! none).
//!
//! `--screenshot PATH --frames N` renders N frames, writes the last to PATH
//! as PNG and exits; its clock steps 1/30 s per frame from `--time`, so
//! frame N shows time `--time + (N - 1) / 30` and the file is reproducible.
//! With a display the frames are the window's own (the surface texture is
//! copied); without one (no `DISPLAY`) they are rendered offscreen, the same
//! way, into a texture of `--size`, and the last line says so.
//! `--switch-at SECONDS:CLIP` (repeatable) changes clip at a playback time
//! as a key would, so a screenshot can show a crossfade, reproducibly: the
//! fade starts at SECONDS itself, not at the first frame after it.
//!
//! Exit codes: 0 success, 2 any error (one line on stderr): a file that
//! fails to import, a model with nothing animated, no adapter, no display
//! without `--screenshot`.
//!
//! Modules: `player` (the frame: instance table, animation passes, draw;
//! no window), `window` (winit), `offscreen`, `camera` (orbit), `timer`
//! (timestamp queries read back without stalling), `capture` (frame to
//! PNG), and the skinning example's `render` (scene, mesh renderer).

mod camera;
mod capture;
#[path = "../common/cli.rs"]
mod cli;
mod offscreen;
mod player;
#[path = "../skinning/render.rs"]
mod render;
mod timer;
mod window;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

#[derive(Parser, Debug)]
#[command(
    about = "A skinned glTF model (or a tube built in code) animated on the GPU, in a window"
)]
struct Cli {
    /// A .gltf or .glb file (default: a bending tube built in code).
    file: Option<PathBuf>,
    /// The folder external buffer URIs may resolve inside (default: the
    /// file's own folder; a glTF file's URIs may not leave it).
    #[arg(long, value_name = "DIR")]
    asset_root: Option<PathBuf>,
    /// Copies of the model, on a grid, each at its own time.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=65_536))]
    instances: u32,
    /// The clip played first (0-based; keys 1-9 switch later).
    #[arg(long, default_value_t = 0)]
    animation: u32,
    /// Write the last of --frames frames to this PNG and exit.
    #[arg(long, value_name = "PATH")]
    screenshot: Option<PathBuf>,
    /// Frames to render with --screenshot.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    frames: u32,
    /// Playback time of the first frame, in seconds.
    #[arg(long, default_value_t = 0.0)]
    time: f64,
    /// Window (or offscreen image) size, WIDTHxHEIGHT.
    #[arg(long, default_value = "960x640", value_parser = parse_size)]
    size: (u32, u32),
    /// Use only a CPU fallback adapter (default: a hardware GPU if any).
    #[arg(long)]
    fallback: bool,
    /// Crossfade to clip CLIP (0-based, as --animation) at playback time
    /// SECONDS, as keys 1-9 do; may be repeated.
    #[arg(long, value_name = "SECONDS:CLIP", value_parser = parse_switch)]
    switch_at: Vec<(f64, u32)>,
}

/// What the window, the offscreen path and the player need of the command line.
#[derive(Debug)]
pub struct Options {
    /// Instance count.
    pub instances: u32,
    /// Playback time of the first frame.
    pub time: f64,
    /// Playback seconds per frame; `None`: the wall time between frames.
    pub fixed_step: Option<f64>,
    /// Where to write the last frame.
    pub screenshot: Option<PathBuf>,
    /// Frames before the screenshot.
    pub frames: u32,
    /// Window size.
    pub size: (u32, u32),
    /// CPU fallback adapter only.
    pub fallback: bool,
    /// Clip changes (playback time, clip), as `--switch-at` gave them.
    pub switches: Vec<(f64, u32)>,
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once('x')
        .ok_or_else(|| format!("{s}: expected WIDTHxHEIGHT, e.g. 960x640"))?;
    let parse = |v: &str| {
        v.trim()
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=8192).contains(n))
            .ok_or_else(|| format!("{s}: each side must be 1 to 8192 pixels"))
    };
    Ok((parse(w)?, parse(h)?))
}

fn parse_switch(s: &str) -> Result<(f64, u32), String> {
    let usage = || format!("{s}: expected SECONDS:CLIP, e.g. 1.5:2");
    let (t, c) = s.split_once(':').ok_or_else(usage)?;
    let t = t
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|t| t.is_finite())
        .ok_or_else(usage)?;
    let c = c.trim().parse::<u32>().map_err(|_| usage())?;
    Ok((t, c))
}

/// The scene to show: the file's, or the tube.
fn load(cli: &Cli) -> Result<render::Scene, String> {
    let scene = match &cli.file {
        Some(path) => render::gltf_scene(path, cli.animation, cli.asset_root.as_deref())
            .map_err(|e| format!("{}: {e}", path.display()))?,
        None => render::tube_scene(),
    };
    if cli.file.is_none() && cli.animation as usize >= scene.library.clips().len() {
        return Err(format!(
            "animation {} does not exist ({} animations)",
            cli.animation,
            scene.library.clips().len()
        ));
    }
    Ok(render::Scene {
        clip: cli.animation,
        ..scene
    })
}

fn run(cli: &Cli) -> Result<(), String> {
    if !cli.time.is_finite() {
        return Err("--time must be a finite number of seconds".into());
    }
    let scene = load(cli)?;
    let clip_count = scene.library.clips().len();
    if let Some((_, clip)) = cli.switch_at.iter().find(|s| s.1 as usize >= clip_count) {
        return Err(format!(
            "--switch-at: clip {clip} does not exist ({clip_count} animations)"
        ));
    }
    let options = Options {
        instances: cli.instances,
        time: cli.time,
        fixed_step: cli.screenshot.as_ref().map(|_| 1.0 / 30.0),
        screenshot: cli.screenshot.clone(),
        frames: cli.frames,
        size: cli.size,
        fallback: cli.fallback,
        switches: cli.switch_at.clone(),
    };
    match winit::event_loop::EventLoop::new() {
        Ok(event_loop) => window::run(event_loop, scene, &options),
        Err(e) => {
            // winit's message starts with where in winit it failed.
            let msg = e.to_string();
            let why = format!(
                "no display ({})",
                cli::one_line(msg.rsplit(": ").next().unwrap_or(&msg))
            );
            match &options.screenshot {
                Some(path) => offscreen::run(scene, &options, path, &why),
                None => Err(format!(
                    "cannot open a window: {why}; --screenshot PATH --frames N renders offscreen without one"
                )),
            }
        }
    }
}

fn main() -> ExitCode {
    cli::quiet_mesa();
    cli::one_line_panics();
    let cli: Cli = match cli::parse() {
        Ok(c) => c,
        Err(code) => return code,
    };
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", cli::one_line(&e));
            ExitCode::from(2)
        }
    }
}
