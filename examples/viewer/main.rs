//! `viewer`: a glTF model as its author made it, in a window: every mesh
//! node of the file's default scene (rigid parts moved by their animated
//! world matrices, skinned parts by their skin's joint matrices, morph
//! targets), with its materials (base colour factor and texture, vertex
//! colours, opaque, masked and blended parts, double-sided), animated on
//! the GPU by one [`keyframe_gpu::Animator`] for every instance and drawn
//! from the buffers its compute passes wrote, with no readback. This is
//! the reference for wiring the crate into a frame loop: see `player.rs`
//! (what a frame records), `draw.rs` (the draw of every part) and
//! `window.rs` (winit and the surface).
//!
//! ```text
//! cargo run --release --example viewer                          # the demo arm, built in code
//! cargo run --release --example viewer -- Fox.glb --instances 100
//! cargo run --release --example viewer -- character.glb --clips run.glb --clips jump.glb
//! cargo run --release --example viewer -- Xbot.glb Ybot.glb --clips walk.glb --root-motion
//! cargo run --release --example viewer -- robot.glb --clips mocap.glb --retarget map.json
//! cargo run --example viewer -- --screenshot shot.png --frames 5 # write the 5th frame and exit
//! ```
//!
//! Without a file it shows a model built in code (`demo.rs`): a skinned
//! arm on a textured plinth with rigid parts under its bones, a second
//! skin, a blended bulb and a masked sign. `--clips FILE` (repeatable)
//! adds the clips of an animation-only file, bound to the model by node
//! name (a file none of whose tracks binds is refused); clips are numbered
//! the model's own first, then each file's in order. Several files make
//! one crowd: each model's characters (`--instances` of each) alternate
//! on one grid, animated by one [`keyframe_gpu::Crowd`], and each
//! `--clips` file binds to every model. `--retarget MAP.json` retargets
//! the `--clips` files' clips onto each model through a bone map instead
//! of binding them by name (`keyframe_gpu::AnimationLibrary::retarget`;
//! the map's format as for `sample --retarget`): clips of a rig with
//! other bone names, rest frames and proportions. `--false-color` shows joint
//! weights (skinned parts) or nodes (rigid parts) in a colour ramp instead
//! of the materials. Characters stand on a grid, each at its own time;
//! with `--root-motion` they walk across it, moved by their clips' root
//! motion (`motion.rs`), and with `--screenshot` the last lines say how
//! far the first character of each model walked.
//!
//! Keys: 1-9 crossfade to clip k over 0.3 s (the playback layer:
//! `player.rs`),
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
//! `--yaw` and `--pitch` set the camera's direction (degrees).
//!
//! Exit codes: 0 success, 2 any error (one line on stderr): a file that
//! fails to import, a model with nothing animated or nothing to draw, a
//! `--clips` file that does not bind, `--retarget` without `--clips`, a
//! bone map that cannot be read or does not fit the rigs, an image that
//! cannot be read, no adapter, no display without `--screenshot`.
//!
//! Modules: `model` (what is drawn and animated, from the file),
//! `motion` (root motion), `mesh`,
//! `material` and `image` (reading the file's vertices, materials and
//! images), `demo` (the model built in code), `player` (the frame:
//! instance table, animation passes, draw; no window), `draw` and
//! `scene.wgsl` (the draw), `uniforms` (the shader's structs), `window`
//! (winit), `offscreen`, `camera` (orbit), `capture` (frame to PNG).

#[path = "../common/bone_map.rs"]
mod bone_map;
mod camera;
mod capture;
#[path = "../common/cli.rs"]
mod cli;
mod demo;
mod draw;
#[path = "../common/gfx.rs"]
mod gfx;
mod image;
mod material;
mod mesh;
mod model;
mod motion;
mod offscreen;
mod player;
mod uniforms;
mod window;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use keyframe_gpu::gltf::LoadOptions;

use model::{ClipFile, Model};

#[derive(Parser, Debug)]
#[command(
    about = "A glTF model (or a demo built in code) with its materials, animated on the GPU, in a window"
)]
struct Cli {
    /// .gltf or .glb files, one crowd of all (default: a demo model built
    /// in code).
    files: Vec<PathBuf>,
    /// An animation-only .gltf or .glb whose clips play on every model,
    /// bound by node name; may be repeated.
    #[arg(long, value_name = "FILE")]
    clips: Vec<PathBuf>,
    /// Retarget the --clips files' clips onto each model through this
    /// bone map (JSON: {"root": TARGET, "bones": {TARGET: SOURCE, ...}},
    /// optionally "up": [x, y, z]), instead of binding them by node name.
    #[arg(long, value_name = "MAP.json")]
    retarget: Option<PathBuf>,
    /// The folder external buffer and image URIs may resolve inside
    /// (default: each file's own folder; a glTF file's URIs may not leave
    /// it).
    #[arg(long, value_name = "DIR")]
    asset_root: Option<PathBuf>,
    /// Characters of each model, on a grid, each at its own time.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=65_536))]
    instances: u32,
    /// The clip played first (0-based, the model's own clips first, then
    /// each --clips file's; keys 1-9 switch later).
    #[arg(long, default_value_t = 0)]
    animation: u32,
    /// Show joint weights (skinned parts) or nodes (rigid parts) in a
    /// colour ramp instead of the materials.
    #[arg(long)]
    false_color: bool,
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
    /// The camera's direction about the vertical, in degrees (0: from +Z).
    #[arg(long, default_value_t = 28.6, value_parser = parse_degrees)]
    yaw: f32,
    /// The camera's height above the horizontal, in degrees (-85 to 85).
    #[arg(long, default_value_t = 17.2, value_parser = parse_degrees)]
    pitch: f32,
    /// Use only a CPU fallback adapter (default: a hardware GPU if any).
    #[arg(long)]
    fallback: bool,
    /// Crossfade to clip CLIP (0-based, as --animation) at playback time
    /// SECONDS, as keys 1-9 do; may be repeated.
    #[arg(long, value_name = "SECONDS:CLIP", value_parser = parse_switch)]
    switch_at: Vec<(f64, u32)>,
    /// Move the characters by their clips' root motion: that of node
    /// NODE (given as --root-motion=NODE), or of the node with a
    /// translation track nearest the top of the hierarchy.
    #[arg(long, value_name = "NODE", num_args = 0..=1, require_equals = true)]
    root_motion: Option<Option<String>>,
    /// Split each model's characters into chunks of at most N, each with
    /// buffers of its own, drawn one by one (default: as many as one
    /// storage binding of the device holds).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    chunk_limit: Option<u32>,
    /// For fault tests: at redraw N resize the window to WIDTHxHEIGHT
    /// (0x0: minimised); repeatable.
    #[arg(long, value_name = "N:WxH", value_parser = parse_resize)]
    resize_at: Vec<(u32, (u32, u32))>,
    /// For fault tests: at redraw N the surface is lost (made again).
    #[arg(long, value_name = "N")]
    lose_surface_at: Option<u32>,
    /// For fault tests: at redraw N the device is destroyed (rebuilt from
    /// the model on a new one).
    #[arg(long, value_name = "N")]
    lose_device_at: Option<u32>,
}

/// What the window, the offscreen path and the player need of the command line.
#[derive(Debug)]
pub struct Options {
    /// Characters per model.
    pub instances: u32,
    /// The most characters per chunk.
    pub chunk_limit: Option<u32>,
    /// Root motion: of the named node, or (`Some(None)`) the default
    /// root.
    pub root_motion: Option<Option<String>>,
    /// The clip played first.
    pub clip: u32,
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
    /// The camera's yaw and pitch, in degrees.
    pub yaw: f32,
    /// Pitch.
    pub pitch: f32,
    /// The colour ramp instead of the materials.
    pub false_color: bool,
    /// CPU fallback adapter only.
    pub fallback: bool,
    /// Clip changes (playback time, clip), as `--switch-at` gave them.
    pub switches: Vec<(f64, u32)>,
    /// Window resizes (redraw, size), as `--resize-at` gave them.
    pub resize_at: Vec<(u32, (u32, u32))>,
    /// The redraw at which the surface is lost.
    pub lose_surface_at: Option<u32>,
    /// The redraw at which the device is destroyed.
    pub lose_device_at: Option<u32>,
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

fn parse_degrees(s: &str) -> Result<f32, String> {
    s.trim()
        .parse::<f32>()
        .ok()
        .filter(|d| d.is_finite() && d.abs() <= 360.0)
        .ok_or_else(|| format!("{s}: expected degrees from -360 to 360"))
}

fn parse_resize(s: &str) -> Result<(u32, (u32, u32)), String> {
    let usage = || format!("{s}: expected N:WIDTHxHEIGHT, e.g. 10:0x0");
    let (n, size) = s.split_once(':').ok_or_else(usage)?;
    let n = n.trim().parse::<u32>().map_err(|_| usage())?;
    let (w, h) = size.split_once('x').ok_or_else(usage)?;
    let side = |v: &str| {
        v.trim()
            .parse::<u32>()
            .ok()
            .filter(|&x| x <= 8192)
            .ok_or_else(usage)
    };
    Ok((n, (side(w)?, side(h)?)))
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

/// The models to show: the files', or the demo; each with the `--clips`
/// files' clips after its own, under a name of its own.
fn load(cli: &Cli) -> Result<Vec<Model>, String> {
    let mut options = LoadOptions::default();
    if let Some(root) = &cli.asset_root {
        options = options.with_asset_root(root);
    }
    if cli.retarget.is_some() && cli.clips.is_empty() {
        return Err(
            "--retarget needs --clips (the files whose clips it retargets onto each model)".into(),
        );
    }
    let map = match &cli.retarget {
        Some(path) => Some((bone_map::read_map(path)?, path.clone())),
        None => None,
    };
    let clips = cli
        .clips
        .iter()
        .map(|path| ClipFile::load(path, &options, map.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    let mut models = Vec::new();
    for path in &cli.files {
        let mut model =
            Model::load(path, &options, &clips).map_err(|e| format!("{}: {e}", path.display()))?;
        // The crowd tells its models apart by name.
        let copy = format!("{} (", model.name);
        let same = models
            .iter()
            .filter(|m: &&Model| m.name == model.name || m.name.starts_with(&copy))
            .count();
        if same > 0 {
            model.name = format!("{} ({})", model.name, same + 1);
        }
        models.push(model);
    }
    if models.is_empty() {
        models.push(Model::from_bytes(
            "demo (built in code)",
            &demo::glb()?,
            &clips,
        )?);
    }
    for model in &models {
        let count = model.library().clips().len();
        if cli.animation as usize >= count {
            return Err(format!(
                "animation {} does not exist ({count} animations{})",
                cli.animation,
                of_model(&models, model)
            ));
        }
    }
    let most = models
        .iter()
        .map(|m| m.library().clips().len())
        .max()
        .unwrap_or(0);
    if let Some((_, clip)) = cli.switch_at.iter().find(|s| s.1 as usize >= most) {
        return Err(format!(
            "--switch-at: clip {clip} does not exist ({most} animations)"
        ));
    }
    Ok(models)
}

/// ` in NAME` when there are several models.
fn of_model(models: &[Model], model: &Model) -> String {
    if models.len() > 1 {
        format!(" in {}", model.name)
    } else {
        String::new()
    }
}

/// The clips bound by name (those of `--clips` files) on stdout, one line
/// each, and what the viewer could not draw as the file says on stderr.
fn describe(models: &[Model], model: &Model) {
    for (c, r) in model.bound.report().clips().iter().enumerate() {
        if r.by_name + r.by_path > 0 || !r.unbound.is_empty() {
            println!(
                "clip {}{} {:?}: {} tracks bound by name, {} unbound",
                c + 1,
                of_model(models, model),
                r.name,
                r.by_name + r.by_path,
                r.unbound.len()
            );
        }
    }
    for note in &model.notes {
        eprintln!("note: {}", cli::one_line(note));
    }
}

fn run(cli: &Cli) -> Result<(), String> {
    if !cli.time.is_finite() {
        return Err("--time must be a finite number of seconds".into());
    }
    let models = load(cli)?;
    for model in &models {
        describe(&models, model);
    }
    let options = Options {
        instances: cli.instances,
        chunk_limit: cli.chunk_limit,
        root_motion: cli.root_motion.clone(),
        clip: cli.animation,
        time: cli.time,
        fixed_step: cli.screenshot.as_ref().map(|_| 1.0 / 30.0),
        screenshot: cli.screenshot.clone(),
        frames: cli.frames,
        size: cli.size,
        yaw: cli.yaw,
        pitch: cli.pitch,
        false_color: cli.false_color,
        fallback: cli.fallback,
        switches: cli.switch_at.clone(),
        resize_at: cli.resize_at.clone(),
        lose_surface_at: cli.lose_surface_at,
        lose_device_at: cli.lose_device_at,
    };
    match winit::event_loop::EventLoop::new() {
        Ok(event_loop) => window::run(event_loop, models, &options),
        Err(e) => {
            // winit's message starts with where in winit it failed.
            let msg = e.to_string();
            let why = format!(
                "no display ({})",
                cli::one_line(msg.rsplit(": ").next().unwrap_or(&msg))
            );
            match &options.screenshot {
                Some(path) => offscreen::run(models, &options, path, &why),
                None => Err(format!(
                    "cannot open a window: {why}; --screenshot PATH --frames N renders offscreen without one"
                )),
            }
        }
    }
}

fn main() -> ExitCode {
    cli::main_with::<Cli>(run)
}
