//! Renders a skinned, animated mesh headless and writes a contact sheet of
//! frames across its clip.
//!
//! ```text
//! cargo run --release --example skinning                      # tube built in code
//! cargo run --release --example skinning -- Fox.glb --out fox.png --animation 2
//! cargo run --release --example skinning -- --crossfade bend,curl --out fade.png
//! cargo run --release --example skinning -- --crossfade bend,curl --additive wiggle
//! cargo run --release --example skinning -- Fox.glb --crossfade Walk,Run
//! cargo run --release --example skinning -- --material-demo --out material.png
//! ```
//!
//! Sampling, local pose, hierarchy, joint matrices and morph weights run as
//! compute passes ([`keyframe_gpu::Animator`]); the vertex shader
//! (`render.wgsl`) skins from the joint-matrix storage buffer they wrote,
//! in the same command encoder, with no readback: only the finished image
//! comes back. Each frame of the sheet is one animated instance.
//!
//! `--material-demo` shades the tube by a material whose base colour,
//! emissive strength and texture offset `KHR_animation_pointer` tracks
//! (built in code) animate: the fragment shader reads them from the
//! sampler's output buffer at the library's pointer slots.

#[path = "../common/cli.rs"]
mod cli;
#[path = "../common/gfx.rs"]
mod gfx;
#[path = "../common/headless.rs"]
mod headless;
mod render;

use std::path::PathBuf;
use std::process::ExitCode;

use crate::headless::{request_device, AdapterChoice};
use clap::Parser;

#[derive(Parser, Debug)]
#[command(about = "Headless GPU skinning: a contact sheet of frames across a clip")]
struct Cli {
    /// A .gltf or .glb file (default: a bending tube built in code).
    file: Option<PathBuf>,
    /// Output PNG.
    #[arg(long, default_value = "skinning.png")]
    out: PathBuf,
    /// Number of frames, evenly spaced over the clip (first at 0, last at
    /// the end).
    #[arg(long, default_value_t = 8)]
    frames: u32,
    /// Frames per row of the sheet.
    #[arg(long, default_value_t = 4)]
    cols: u32,
    /// Frame size in pixels.
    #[arg(long, default_value_t = 256)]
    size: u32,
    /// Animation (clip) index.
    #[arg(long, default_value_t = 0)]
    animation: u32,
    /// Use only the CPU fallback adapter (default: a hardware GPU if any).
    #[arg(long)]
    fallback: bool,
    /// Crossfade from one clip to another over the sheet's frames (names
    /// or indices, `FROM,TO`): frame k of n plays both at the same time
    /// with weights 1 - k/(n-1) and k/(n-1) (the mixer). Without FILE the
    /// tube's clips are `bend`, `curl` and `wiggle`.
    #[arg(long, value_delimiter = ',', value_name = "FROM,TO")]
    crossfade: Option<Vec<String>>,
    /// Add a clip on top as an additive layer (name or index; relative to
    /// its pose at 0 s, weight 1): alone, or over `--crossfade`.
    #[arg(long, value_name = "CLIP")]
    additive: Option<String>,
    /// Also time the compute passes (sampling + pose + hierarchy + joints)
    /// for this many instances at spread-out times, and print the median
    /// over 20 runs after 3 warm-up runs.
    #[arg(long)]
    time_instances: Option<u32>,
    /// Render the tube with a material animated by pointer channels built
    /// in code (base colour, emissive strength, texture offset), read by
    /// the fragment shader from the sampler's output.
    #[arg(long, conflicts_with_all = ["file", "crossfade", "additive", "animation"])]
    material_demo: bool,
}

/// Median wall times of sampling alone and of sampling + skinning `n`
/// instances (submit and wait), in ms.
fn time_compute(
    h: &crate::headless::Headless,
    scene: &render::Scene,
    n: u32,
) -> Result<(f64, f64), String> {
    use keyframe_gpu::{Animator, Instance, Plan, WrapMode};
    let bound = scene.bound()?;
    let animator = Animator::new(&h.device, &h.queue, &bound, n).map_err(|e| e.to_string())?;
    // The same sampler plan without the rig: the sampling pass alone.
    let plan = animator.plan();
    let alone = Plan::sampling(bound.library(), n, &plan.profile, plan.sampler)
        .map_err(|e| e.to_string())?;
    let sampling = Animator::from_plan(&h.device, &h.queue, &alone).map_err(|e| e.to_string())?;
    let inst: Vec<Instance> = (0..n)
        .map(|i| Instance::new(scene.clip, f64::from(i) * 0.013).with_wrap(WrapMode::Repeat))
        .collect();
    let mut animators = [sampling, animator];
    for a in &mut animators {
        a.set_instances(&h.queue, &inst)
            .map_err(|e| e.to_string())?;
    }
    let median = |skin: bool| -> Result<f64, String> {
        let mut samples = Vec::new();
        for run in 0..23 {
            let start = std::time::Instant::now();
            let mut encoder = h.device.create_command_encoder(&Default::default());
            animators[usize::from(skin)].record(&mut encoder);
            h.queue.submit([encoder.finish()]);
            h.wait().map_err(|e| e.to_string())?;
            if run >= 3 {
                samples.push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
        samples.sort_by(f64::total_cmp);
        Ok(samples[samples.len() / 2])
    };
    Ok((median(false)?, median(true)?))
}

/// A clip by name or index.
fn clip_named(scene: &render::Scene, name: &str) -> Result<u32, String> {
    let lib = &scene.library;
    if let Some(c) = lib.clip_by_name(name) {
        return Ok(c);
    }
    match name.parse::<u32>() {
        Ok(i) if (i as usize) < lib.clips().len() => Ok(i),
        _ => Err(format!(
            "no clip named {name:?} (clips: {})",
            lib.clips()
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{i} {:?}", c.name))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// What the sheet plays: `times` of the scene's clip, or with
/// `--crossfade` / `--additive` a mix per frame (and a line describing it).
fn play(
    cli: &Cli,
    scene: &render::Scene,
    times: &[f64],
) -> Result<(render::Play, Option<String>), String> {
    use keyframe_gpu::{Action, WrapMode};
    if cli.crossfade.is_none() && cli.additive.is_none() {
        return Ok((render::Play::Times(times.to_vec()), None));
    }
    let fade = match &cli.crossfade {
        Some(names) if names.len() == 2 => {
            Some((clip_named(scene, &names[0])?, clip_named(scene, &names[1])?))
        }
        Some(names) => {
            return Err(format!(
                "--crossfade takes two clips, FROM,TO ({} given)",
                names.len()
            ))
        }
        None => None,
    };
    let add = match &cli.additive {
        Some(name) => Some(clip_named(scene, name)?),
        None => None,
    };
    let lib = &scene.library;
    let d = [fade.map(|f| f.0), fade.map(|f| f.1), add]
        .into_iter()
        .flatten()
        .map(|c| f64::from(lib.clips()[c as usize].duration()))
        .fold(0.0, f64::max);
    let n = times.len();
    let mut actions = Vec::new();
    let mut counts = Vec::new();
    for k in 0..n {
        let f = if n == 1 {
            0.0
        } else {
            k as f64 / (n - 1) as f64
        };
        let t = d * f;
        let mut count = 0;
        let base = match fade {
            Some((from, to)) => {
                actions.push(Action::new(from, t).with_weight(1.0 - f as f32));
                actions.push(Action::new(to, t).with_weight(f as f32));
                count += 2;
                None
            }
            None => Some(scene.clip),
        };
        if let Some(c) = base {
            actions.push(Action::new(c, t));
            count += 1;
        }
        if let Some(a) = add {
            actions.push(Action::new(a, t).with_wrap(WrapMode::Repeat).additive(0.0));
            count += 1;
        }
        counts.push(count);
    }
    let name = |c: u32| lib.clips()[c as usize].name.clone();
    let mut line = String::from("mix: ");
    match fade {
        Some((a, b)) => line.push_str(&format!(
            "crossfade {:?} -> {:?} over the {n} frames ({d:.3} s)",
            name(a),
            name(b)
        )),
        None => line.push_str(&format!("{:?}", name(scene.clip))),
    }
    if let Some(a) = add {
        line.push_str(&format!(", {:?} added on top (reference 0 s)", name(a)));
    }
    Ok((
        render::Play::Mix {
            actions,
            counts,
            masks: Vec::new(),
        },
        Some(line),
    ))
}

fn run(cli: &Cli) -> Result<(), String> {
    if cli.frames == 0 || cli.size == 0 || cli.size > 2048 {
        return Err("--frames must be at least 1 and --size between 1 and 2048".into());
    }
    let scene = match &cli.file {
        #[cfg(feature = "gltf")]
        Some(path) => render::gltf_scene(path, cli.animation, None)?,
        #[cfg(not(feature = "gltf"))]
        Some(path) => {
            return Err(format!(
                "{}: reading glTF needs the `gltf` feature",
                path.display()
            ))
        }
        None if cli.material_demo => render::material_scene(),
        None => render::tube_scene(),
    };
    let choice = if cli.fallback {
        AdapterChoice::Fallback
    } else {
        AdapterChoice::PreferHardware
    };
    let h = request_device(choice).map_err(|e| e.to_string())?;
    println!("adapter: {}", h.describe());
    let d = f64::from(scene.duration());
    let n = cli.frames;
    let times: Vec<f64> = (0..n)
        .map(|k| {
            if n == 1 {
                0.0
            } else {
                d * f64::from(k) / f64::from(n - 1)
            }
        })
        .collect();
    let (play, mix_line) = play(cli, &scene, &times)?;
    let camera = render::fit_camera_play(&scene, &play)?;
    let sheet = render::render_play(
        &h,
        &scene,
        &play,
        camera,
        cli.size,
        cli.cols,
        render::Pose::Animated,
    )?;
    if let Some(line) = mix_line {
        println!("{line}");
    }
    if let Some(m) = &scene.material {
        let slots = m.slots(&scene.library)?;
        println!(
            "material {}: base colour, emissive strength and texture offset read by the \
             fragment shader at floats {}, {} and {} of each instance's {}-float block",
            m.index, slots[0], slots[1], slots[2], slots[3]
        );
    }
    sheet.write_png(&cli.out)?;
    let skin = scene
        .skin
        .map_or("none (rigid)".to_string(), |s| s.to_string());
    println!(
        "{}: clip {} ({:.3} s), mesh node {}, skin {}, {} vertices, {} morph targets",
        scene.name,
        scene.clip,
        d,
        scene.mesh_node,
        skin,
        scene.mesh.positions.len(),
        scene.mesh.morph_deltas.len()
    );
    println!(
        "times: {}",
        times
            .iter()
            .map(|t| format!("{t:.3}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "wrote {} ({}x{}, {} frames)",
        cli.out.display(),
        sheet.width,
        sheet.height,
        sheet.frames
    );
    if let Some(n) = cli.time_instances {
        let (sample_ms, all_ms) = time_compute(&h, &scene, n.max(1))?;
        println!(
            "{} instances ({} nodes, {} joint matrices each): median {sample_ms:.3} ms sampling alone, {all_ms:.3} ms sampling + pose + hierarchy + joints",
            n.max(1),
            scene.rig.nodes().len(),
            scene
                .rig
                .skins()
                .iter()
                .map(|s| s.joints.len())
                .sum::<usize>()
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    cli::main_with::<Cli>(run)
}
