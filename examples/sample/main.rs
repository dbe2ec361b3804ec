//! `sample`: look at what an animation does at given times.
//!
//! ```text
//! cargo run --release --example sample                       # built-in demo
//! cargo run --release --example sample -- FILE [options]     # a .gltf/.glb
//! ```
//!
//! Without FILE it builds a demo library in code (one clip per
//! interpolation mode x property), samples it on the GPU at a few times,
//! prints the adapter, a table, and as its last line `max_abs_err=<value>`
//! (the largest GPU-vs-CPU difference).
//!
//! With FILE: `--animation I` (default 0) or `--all-animations`,
//! `--times T0,T1,...` (default: every key time of the clip plus the
//! midpoints), `--backend gpu|cpu`, `--json`, `--compare` with `--tol`,
//! `--plot FILE.png`. `--json` prints one object per animation, one per
//! line, and nothing else:
//! `{"file": "Fox.glb", "animation": 0, "backend": "gpu", "samples":
//! [{"time": 0.5, "channels": [{"node": 3, "path": "rotation", "value":
//! [x, y, z, w]}, ...]}, ...]}`, channels in the glTF `channels` order.
//! Times outside the clip clamp per channel (no looping). A
//! `KHR_animation_pointer` channel is `{"pointer": "/materials/0/emissiveFactor",
//! "value": [r, g, b]}` instead (a bool `[0]` or `[1]`, an int `[n]`, a
//! float `[x]`), in its place in the channel order.
//!
//! `--joints` prints each skin's joint matrices instead of channels: with
//! `--json`, one object per animation and line,
//! `{"file": "Fox.glb", "animation": 0, "samples": [{"time": 0.5,
//! "skins": [{"skin": 0, "node": 2, "joints": [[16 numbers], ...]}]}]}`,
//! where `node` is the lowest-index node that uses the skin (`null` if
//! none does) and each matrix, column-major and in the order of the skin's
//! `joints`, is `inverse(global(node)) * global(joint) *
//! inverseBindMatrix` with every node's local transform taken from the
//! animation at that time (rest values where not animated). `--backend gpu`
//! poses on the GPU (`Animator`, read back as `Poses`), `--backend cpu`
//! with the CPU twin (`cpu::poses`); `--compare` runs both and prints the
//! largest error per skin (default `--tol` 1e-4 with `--joints`). A file
//! without skins is an error.
//!
//! `--clips FILE` (repeatable) adds the clips of another file (an
//! animation pack), bound to FILE's rig by node name; `--animation` and
//! `--mix` index FILE's clips first, then each `--clips` file's, `node` in
//! the output is FILE's node index, and a track that binds to no node of
//! FILE is left out. FILE needs no animations of its own then.
//!
//! `--retarget MAP.json` (with `--clips`) retargets each `--clips` file's
//! clips from its own rig onto FILE's through the bone map
//! (`{"root": NAME, "bones": {FILE_NODE: CLIPS_NODE, ...}}`, optionally
//! `"up": [x, y, z]`, `keyframe_gpu::BoneMap`) instead, and prints every node's local pose at
//! each time: `--json` gives `{"file": ..., "animation": 0, "backend":
//! ..., "samples": [{"time": 0.5, "nodes": [...]}]}`, the nodes as `--mix
//! --json` prints them; `--joints` the joint matrices as above; see
//! `retarget.rs`.
//!
//! `--mix MIX.json` blends actions (crossfades, masks, additive clips)
//! per sample instead: see `mix.rs` for the file's schema. `--json` prints
//! `{"file": "Fox.glb", "backend": "gpu", "samples": [{"nodes": [{"node":
//! 0, "translation": [x, y, z], "rotation": [x, y, z, w], "scale": [x, y,
//! z]}, ...]}]}` (every node in index order, the blended local pose,
//! `"weights"` for nodes whose mesh has morph targets); with `--joints`,
//! `{"file": ..., "backend": ..., "samples": [{"skins": [...]}]}`, the
//! skins as `--joints` prints them. `--compare` checks GPU against CPU
//! (default `--tol` 1e-4).
//!
//! `--compress [BOUND]` compresses the clips first (`keyframe_gpu::compress`,
//! BOUND relative to the rest pose's bounding-box diagonal, default
//! 5.6e-5) and samples the compressed library, with the same output; it
//! prints `compressed: R:1, max error E (bound B)` on stderr (E and B in
//! the file's units).
//!
//! Exit codes: 0 success, 1 `--compare` found an error above `--tol`,
//! 2 any error (one line on stderr).

//! Modules: `args` (the command line), `source` (file or demo, animations,
//! times), `engine` (GPU or CPU; the device from examples/common/headless.rs), `demo`,
//! `table` and `json` (output), `compare` (`--compare`), `joints`
//! (`--joints`), `plot` (`--plot`), `retarget` (`--retarget`; the map
//! read and the clips retargeted in examples/common/bone_map.rs, shared
//! with the viewer).

use std::io::Write;
use std::process::ExitCode;

mod args;
// The one module shared with another example (bench's plot): Cargo has no
// library target for examples, so it is included by path, not copied.
#[path = "../common/bone_map.rs"]
mod bone_map;
#[path = "../common/canvas.rs"]
mod canvas;
#[path = "../common/cli.rs"]
mod cli;
use cli::one_line;
mod compare;
mod demo;
mod engine;
mod gpu_play;
#[path = "../common/headless.rs"]
mod headless;
mod joints;
mod json;
mod mix;
mod play;
mod play_file;
mod plot;
mod retarget;
mod source;
mod table;
#[path = "../common/track_diff.rs"]
mod track_diff;

use args::{Backend, Cli};
use engine::Engine;

fn main() -> ExitCode {
    let cli: Cli = match cli::start() {
        Ok(c) => c,
        Err(code) => return code,
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = run(&cli, &mut out);
    let flushed = out.flush();
    match result {
        Ok(code) => match flushed {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                eprintln!("error: writing output: {}", one_line(&e.to_string()));
                ExitCode::from(2)
            }
            _ => code,
        },
        Err(Failure::BrokenPipe) => ExitCode::SUCCESS,
        Err(Failure::Message(m)) => {
            eprintln!("error: {}", one_line(&m));
            ExitCode::from(2)
        }
    }
}

/// Why a run stopped: printed as one line on stderr, exit code 2.
enum Failure {
    /// stdout was closed (e.g. `| head`): stop quietly.
    BrokenPipe,
    Message(String),
}

impl From<String> for Failure {
    fn from(s: String) -> Self {
        Failure::Message(s)
    }
}

impl From<keyframe_gpu::Error> for Failure {
    fn from(e: keyframe_gpu::Error) -> Self {
        Failure::Message(e.to_string())
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            Failure::BrokenPipe
        } else {
            Failure::Message(format!("writing output: {e}"))
        }
    }
}

/// `--plan`: the plan for this file on this adapter's profile, for
/// `--instances` instances (a mixer's, with `--mix`: its masks and most
/// actions per character from MIX.json); a file whose nodes cannot be
/// posed (or the demo) gets the sampler's plan alone.
fn print_plan(
    cli: &Cli,
    source: &source::Source,
    out: &mut impl Write,
) -> Result<ExitCode, Failure> {
    use keyframe_gpu::{DeviceProfile, Plan, SamplerPlan};
    let mut engine = Engine::new(&source.library);
    let profile = DeviceProfile::of(&engine.device()?.device);
    writeln!(out, "adapter: {}", engine.describe()?)?;
    let plan = match (source.bound("--plan"), &cli.mix) {
        (Ok(bound), Some(path)) => {
            let desc = mix::desc(path, &bound, cli.instances)?;
            Plan::for_mixer(&bound, &desc, &profile, SamplerPlan::Auto)?
        }
        (Ok(bound), None) => Plan::new(&bound, cli.instances, &profile)?,
        (Err(_), _) => Plan::sampling(&source.library, cli.instances, &profile, SamplerPlan::Auto)?,
    };
    write!(out, "{plan}")?;
    Ok(ExitCode::SUCCESS)
}

/// The first flag of `clash` that is set, refused: it cannot be
/// combined with `option` (`why` says why).
fn refuse_clash(clash: &[(bool, &str)], option: &str, why: &str) -> Result<(), Failure> {
    match clash.iter().find(|(on, _)| *on) {
        Some((_, flag)) => Err(Failure::Message(format!(
            "{flag} cannot be combined with {option} ({why})"
        ))),
        None => Ok(()),
    }
}

/// Checks the options that need no file: finite times, a valid
/// tolerance, flags that cannot be combined, a positive compression
/// bound. Returns the tolerance.
fn check_options(cli: &Cli) -> Result<f32, Failure> {
    if let Some(t) = cli.times.iter().flatten().find(|t| !t.is_finite()) {
        return Err(Failure::Message(format!(
            "--times: {t} is not a finite number"
        )));
    }
    let tol = cli.tol.unwrap_or(if cli.joints { 1e-4 } else { 2e-5 });
    if tol.is_nan() || tol < 0.0 {
        return Err(Failure::Message(format!(
            "--tol: {tol} is not a valid tolerance"
        )));
    }
    if cli.mix.is_some() {
        // MIX.json names the animations and times of every sample.
        let clash = [
            (cli.plot.is_some(), "--plot"),
            (cli.times.is_some(), "--times"),
            (cli.all_animations, "--all-animations"),
            (cli.animation != 0, "--animation"),
        ];
        refuse_clash(
            &clash,
            "--mix",
            "MIX.json gives each sample's animations and times",
        )?;
    }
    if cli.play.is_some() {
        // PLAY.json names the animations and steps of every frame.
        let clash = [
            (cli.mix.is_some(), "--mix"),
            (cli.plot.is_some(), "--plot"),
            (cli.times.is_some(), "--times"),
            (cli.all_animations, "--all-animations"),
            (cli.compare, "--compare"),
            (cli.plan, "--plan"),
        ];
        refuse_clash(&clash, "--play", "PLAY.json drives every frame")?;
    }
    if cli.gpu_playback && cli.play.is_none() {
        return Err(Failure::Message(
            "--gpu-playback needs --play (it plays PLAY.json's characters on the GPU)".into(),
        ));
    }
    if cli.gpu_playback && cli.backend == Backend::Cpu {
        return Err(Failure::Message(
            "--gpu-playback plays on the GPU: it cannot be combined with --backend cpu".into(),
        ));
    }
    if cli.nodes && cli.play.is_none() {
        return Err(Failure::Message(
            "--nodes needs --play (--mix --json prints the nodes of a mix)".into(),
        ));
    }
    if cli.retarget.is_some() {
        if cli.clips.is_empty() {
            return Err(Failure::Message(
                "--retarget needs --clips (the files whose clips it retargets onto FILE)".into(),
            ));
        }
        refuse_clash(
            &[(cli.plot.is_some(), "--plot")],
            "--retarget",
            "it prints every node's pose, not the clips' channels",
        )?;
    }
    if cli.joints && cli.plot.is_some() {
        return Err(Failure::Message(
            "--plot cannot be combined with --joints".into(),
        ));
    }
    if let Some(bound) = cli.compress {
        if !(bound.is_finite() && bound > 0.0) {
            return Err(Failure::Message(format!(
                "--compress: {bound} is not a positive bound"
            )));
        }
    }
    Ok(tol)
}

/// The source the options name: FILE (with `--clips`), or the built-in
/// demo where the options need no file.
fn load_source(cli: &Cli) -> Result<source::Source, Failure> {
    Ok(match &cli.file {
        None if !cli.clips.is_empty() => {
            return Err(Failure::Message(
                "--clips needs a FILE (the model the clips are bound to)".into(),
            ))
        }
        None if cli.mix.is_some() => {
            return Err(Failure::Message(
                "--mix needs a FILE (a glTF file with nodes)".into(),
            ))
        }
        None if cli.joints => {
            return Err(Failure::Message(
                "--joints needs a FILE (the built-in demo has no skins)".into(),
            ))
        }
        None => demo::source()?,
        Some(path) => source::load(
            path,
            cli.asset_root.as_deref(),
            &cli.clips,
            cli.retarget.as_deref(),
        )?,
    })
}

/// Samples animation `a` at the options' times and prints its channels
/// (a table, or JSON); with `--compare`, on both backends, printing the
/// verdict. Returns whether the comparison failed.
fn sample_animation(
    cli: &Cli,
    source: &source::Source,
    engine: &mut Engine<'_>,
    a: usize,
    tol: f32,
    out: &mut impl Write,
) -> Result<bool, Failure> {
    let mut failed = false;
    let times = source::times(cli, &source.library.clips()[a]);
    let instances = source::instances(a, &times);
    if cli.compare {
        let gpu = engine.sample(Backend::Gpu, &instances)?;
        let cpu = engine.sample(Backend::Cpu, &instances)?;
        let verdict = compare::channels(source, a, times.len(), &gpu, &cpu, tol);
        failed = verdict.failed;
        verdict.print(cli.json, out)?;
        if cli.json {
            let values = if cli.backend == Backend::Gpu {
                &gpu
            } else {
                &cpu
            };
            writeln!(
                out,
                "{}",
                json::channels(source, a, cli.backend, &times, values)
            )?;
        }
    } else {
        let values = engine.sample(cli.backend, &instances)?;
        if cli.json {
            writeln!(
                out,
                "{}",
                json::channels(source, a, cli.backend, &times, &values)
            )?;
        } else {
            table::channels(source, a, &times, &values, out)?;
        }
    }
    Ok(failed)
}

/// Checks the options, loads the source and samples the selected
/// animations (or runs the demo, or `--joints`).
fn run(cli: &Cli, out: &mut impl Write) -> Result<ExitCode, Failure> {
    let tol = check_options(cli)?;
    let mut source = load_source(cli)?;
    if let Some(bound) = cli.compress {
        let report = source.compress(bound)?;
        eprintln!(
            "compressed: {:.2}:1, max error {:.3e} (bound {:.3e})",
            report.ratio(),
            report.max_error,
            report.bound
        );
    }
    if cli.plan {
        return print_plan(cli, &source, out);
    }
    if let Some(path) = &cli.mix {
        return mix::run(cli, path, &source, cli.tol.unwrap_or(1e-4), out);
    }
    if let Some(path) = cli.play.as_ref().filter(|_| cli.gpu_playback) {
        gpu_play::run(cli, path, &source, out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(path) = &cli.play {
        play::run(cli, path, &source, out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if cli.joints {
        return joints::run(cli, &source, tol, out);
    }
    if cli.retarget.is_some() {
        return retarget::run(cli, &source, cli.tol.unwrap_or(1e-4), out);
    }
    let clip_count = source.library.clips().len();
    let anims = source::selected(cli, clip_count)?;
    let mut engine = Engine::new(&source.library);
    let demo_table = cli.file.is_none() && !cli.json && !cli.compare && cli.plot.is_none();
    if demo_table {
        return demo::run(&source, &mut engine, cli.times.as_deref(), out);
    }
    let mut code = ExitCode::SUCCESS;
    if !cli.json {
        writeln!(out, "file: {}  ({clip_count} animation(s))", source.name)?;
        if cli.uses_gpu() {
            writeln!(out, "adapter: {}", engine.describe()?)?;
        }
        writeln!(out, "backend: {}", cli.backend_label())?;
    }
    for &a in &anims {
        if sample_animation(cli, &source, &mut engine, a, tol, out)? {
            code = ExitCode::from(1);
        }
        if let Some(plot_path) = &cli.plot {
            let path = if anims.len() > 1 {
                plot::numbered(plot_path, a)
            } else {
                plot_path.clone()
            };
            plot::plot(&source, a, cli.backend, &mut engine, &path)?;
            if !cli.json {
                writeln!(out, "plot: {}", path.display())?;
            }
        }
    }
    Ok(code)
}
