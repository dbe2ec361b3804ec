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
//! Times outside the clip clamp per channel (no looping).
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
//! samples and skins on the GPU (`GpuSampler` + `GpuSkinner`, read back),
//! `--backend cpu` uses `cpu_skin`; `--compare` runs both and prints the
//! largest error per skin (default `--tol` 1e-4 with `--joints`). A file
//! without skins is an error.
//!
//! Exit codes: 0 success, 1 `--compare` found an error above `--tol`,
//! 2 any error (one line on stderr).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use keyframe_gpu::gpu::headless::{request_device, AdapterChoice, Headless};
use keyframe_gpu::gpu::skin::GpuSkinner;
use keyframe_gpu::rig::{Rig, SkinJoints, SkinTables};
use keyframe_gpu::{
    compare, cpu, cpu_skin, AnimationLibrary, Clip, GpuSampler, Instance, Interpolation, Property,
    Track, WrapMode,
};

#[path = "../common/canvas.rs"]
mod canvas;

use canvas::{Canvas, FRAME, GRID, PALETTE, TEXT, WHITE};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Backend {
    Gpu,
    Cpu,
}

impl Backend {
    fn name(self) -> &'static str {
        match self {
            Backend::Gpu => "gpu",
            Backend::Cpu => "cpu",
        }
    }
}

/// Samples glTF animations on the GPU (or the CPU reference) and prints
/// the values, as a table or as JSON.
#[derive(Debug, Parser)]
#[command(name = "sample", version)]
struct Cli {
    /// A .gltf or .glb file; without it, a built-in demo.
    file: Option<PathBuf>,
    /// Index of the animation to sample.
    #[arg(long, default_value_t = 0)]
    animation: usize,
    /// Sample every animation (with --json: one object per line).
    #[arg(long)]
    all_animations: bool,
    /// Times in seconds, comma separated (default: every key time of the
    /// clip plus the midpoints between them).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    times: Option<Vec<f64>>,
    /// Where to sample.
    #[arg(long, value_enum, default_value_t = Backend::Gpu)]
    backend: Backend,
    /// Print JSON (one object per animation and line) and nothing else.
    #[arg(long)]
    json: bool,
    /// Sample on the GPU and the CPU and print the largest error per
    /// channel; exit 1 if any exceeds --tol.
    #[arg(long)]
    compare: bool,
    /// Tolerance for --compare (absolute; rotations up to sign; default
    /// 2e-5, or 1e-4 per matrix element with --joints).
    #[arg(long)]
    tol: Option<f32>,
    /// Print each skin's joint matrices instead of the channels.
    #[arg(long)]
    joints: bool,
    /// Write a chart of every channel over the clip to this PNG file
    /// (with --all-animations: FILE-<i>.png per animation).
    #[arg(long)]
    plot: Option<PathBuf>,
}

/// One line, whatever the message held.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn main() -> ExitCode {
    // Mesa's Vulkan and EGL drivers look for a Wayland display and print
    // "XDG_RUNTIME_DIR is invalid or not set" on headless machines; point
    // the variable at the temp folder (only when unset, while the process
    // is still single-threaded) so that stderr carries this tool's own
    // messages only.
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        std::env::set_var("XDG_RUNTIME_DIR", std::env::temp_dir());
    }
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("error: internal error{at}: {}", one_line(&msg));
        std::process::exit(2);
    }));
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                print!("{e}");
                return ExitCode::SUCCESS;
            }
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("invalid arguments");
            eprintln!("{}", one_line(first));
            return ExitCode::from(2);
        }
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

/// What is being sampled: a library and, per clip, where its channels point.
struct Source {
    /// Shown as `"file"` in JSON.
    name: String,
    library: AnimationLibrary,
    /// The parsed file (None for the demo), for `--joints`.
    document: Option<keyframe_gpu::gltf::Document>,
}

/// Samples instances on the GPU or the CPU; the device and the sampler are
/// created on first use.
struct Engine<'a> {
    library: &'a AnimationLibrary,
    headless: Option<Headless>,
    sampler: Option<GpuSampler>,
    skinner: Option<GpuSkinner>,
    capacity: usize,
}

impl<'a> Engine<'a> {
    fn new(library: &'a AnimationLibrary) -> Self {
        // At most 64 MiB of output per dispatch, at most 4096 instances.
        let stride = (library.output_stride() as usize).max(1);
        let capacity = ((64usize << 20) / (stride * 4)).clamp(1, 4096);
        Engine {
            library,
            headless: None,
            sampler: None,
            skinner: None,
            capacity,
        }
    }

    fn device(&mut self) -> Result<&Headless, Failure> {
        if self.headless.is_none() {
            self.headless = Some(request_device(AdapterChoice::PreferHardware)?);
        }
        self.headless
            .as_ref()
            .ok_or_else(|| Failure::Message("no device".into()))
    }

    fn describe(&mut self) -> Result<String, Failure> {
        let h = self.device()?;
        let info = h.adapter.get_info();
        Ok(format!(
            "{} (backend {:?}, {:?})",
            info.name, info.backend, info.device_type
        ))
    }

    fn sample(&mut self, backend: Backend, instances: &[Instance]) -> Result<Vec<f32>, Failure> {
        match backend {
            Backend::Cpu => Ok(cpu::sample(self.library, instances)?),
            Backend::Gpu => {
                self.device()?;
                let (Some(h), library) = (self.headless.as_ref(), self.library) else {
                    return Err(Failure::Message("no device".into()));
                };
                if self.sampler.is_none() {
                    self.sampler = Some(GpuSampler::new(
                        &h.device,
                        &h.queue,
                        library,
                        self.capacity as u32,
                    )?);
                }
                let Some(sampler) = self.sampler.as_mut() else {
                    return Err(Failure::Message("no sampler".into()));
                };
                let mut out = Vec::new();
                for chunk in instances.chunks(self.capacity) {
                    out.extend(sampler.sample(&h.device, &h.queue, chunk)?);
                }
                Ok(out)
            }
        }
    }
    /// Keeps the node, global and joint matrices of one dispatch under
    /// 64 MiB each too. Call before the first GPU sampling.
    fn limit_for_skinning(&mut self, tables: &SkinTables) {
        let per = (tables.node_count().max(tables.joint_count()) as usize).max(1) * 64;
        self.capacity = self.capacity.min(((64usize << 20) / per).max(1));
    }

    /// Each instance's joint matrices per skin (entry `i`: instance `i`).
    fn joints(
        &mut self,
        backend: Backend,
        tables: &SkinTables,
        instances: &[Instance],
    ) -> Result<Vec<Vec<SkinJoints>>, Failure> {
        match backend {
            Backend::Cpu => {
                let out = cpu_skin::skin(tables, self.library, instances)?;
                let per = tables.joint_count() as usize;
                let block: Vec<[f32; 16]> = out.joints.iter().map(|m| m.to_cols_array()).collect();
                Ok((0..instances.len())
                    .map(|i| tables.split_joints(block.get(i * per..(i + 1) * per).unwrap_or(&[])))
                    .collect())
            }
            Backend::Gpu => {
                self.device()?;
                let (Some(h), library) = (self.headless.as_ref(), self.library) else {
                    return Err(Failure::Message("no device".into()));
                };
                if self.sampler.is_none() {
                    self.sampler = Some(GpuSampler::new(
                        &h.device,
                        &h.queue,
                        library,
                        self.capacity as u32,
                    )?);
                }
                let Some(sampler) = self.sampler.as_mut() else {
                    return Err(Failure::Message("no sampler".into()));
                };
                if self.skinner.is_none() {
                    self.skinner = Some(GpuSkinner::new(&h.device, sampler, tables)?);
                }
                let Some(skinner) = self.skinner.as_mut() else {
                    return Err(Failure::Message("no skinner".into()));
                };
                let mut out = Vec::with_capacity(instances.len());
                for chunk in instances.chunks(self.capacity) {
                    sampler.set_instances(&h.queue, chunk)?;
                    skinner.set_instances(&h.queue, chunk)?;
                    let mut encoder =
                        h.device
                            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                                label: Some("sample --joints"),
                            });
                    sampler.record(&mut encoder);
                    skinner.record(&mut encoder);
                    h.queue.submit([encoder.finish()]);
                    out.extend(skinner.read_back_skin_joints(&h.device, &h.queue)?);
                }
                Ok(out)
            }
        }
    }
}

fn run(cli: &Cli, out: &mut impl Write) -> Result<ExitCode, Failure> {
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
    if cli.joints && cli.plot.is_some() {
        return Err(Failure::Message(
            "--plot cannot be combined with --joints".into(),
        ));
    }
    let source = match &cli.file {
        None if cli.joints => {
            return Err(Failure::Message(
                "--joints needs a FILE (the built-in demo has no skins)".into(),
            ))
        }
        None => Source {
            name: "demo".into(),
            library: demo_library()?,
            document: None,
        },
        Some(path) => load(path)?,
    };
    if cli.joints {
        return run_joints(cli, &source, tol, out);
    }
    let clip_count = source.library.clips().len();
    let anims = selected(cli, clip_count)?;
    let mut engine = Engine::new(&source.library);
    let demo_table = cli.file.is_none() && !cli.json && !cli.compare && cli.plot.is_none();
    if demo_table {
        return demo(&source, &mut engine, cli.times.as_deref(), out);
    }
    let mut code = ExitCode::SUCCESS;
    if !cli.json {
        let backend = if cli.compare {
            "gpu and cpu".to_string()
        } else {
            cli.backend.name().to_string()
        };
        writeln!(out, "file: {}  ({clip_count} animation(s))", source.name)?;
        if cli.compare || cli.backend == Backend::Gpu {
            writeln!(out, "adapter: {}", engine.describe()?)?;
        }
        writeln!(out, "backend: {backend}")?;
    }
    for &a in &anims {
        let clip = &source.library.clips()[a];
        let times = match &cli.times {
            Some(t) => t.clone(),
            None => default_times(clip),
        };
        let instances: Vec<Instance> = times
            .iter()
            .map(|&t| Instance::new(a as u32, t).with_wrap(WrapMode::Clamp))
            .collect();
        if cli.compare {
            let gpu = engine.sample(Backend::Gpu, &instances)?;
            let cpu = engine.sample(Backend::Cpu, &instances)?;
            let clips = vec![a as u32; instances.len()];
            let report = compare::compare(&source.library, &clips, &gpu, &cpu);
            let worst = report.max_abs_err();
            let failed = report
                .tracks
                .iter()
                .any(|t| t.max_abs_err.is_nan() || t.max_abs_err > tol);
            if failed {
                code = ExitCode::from(1);
            }
            let mut text = String::new();
            text.push_str(&format!(
                "animation {a} ({:?}): {} channel(s), {} time(s), GPU vs CPU\n",
                clip.name,
                clip.tracks.len(),
                times.len()
            ));
            text.push_str("  ch   node  path         interp       max_abs_err\n");
            for t in &report.tracks {
                let track = &clip.tracks[t.track];
                let flag = if t.max_abs_err.is_nan() || t.max_abs_err > tol {
                    "  > tol"
                } else {
                    ""
                };
                text.push_str(&format!(
                    "  {:<4} {:<5} {:<12} {:<12} {:.3e}{flag}\n",
                    t.track,
                    track.node,
                    track.property.as_gltf_str(),
                    track.interpolation.as_gltf_str(),
                    t.max_abs_err
                ));
            }
            text.push_str(&format!(
                "max_abs_err={worst:e} tol={tol:e} {}\n",
                if failed { "FAIL" } else { "ok" }
            ));
            if cli.json {
                // stdout is reserved for the JSON.
                eprint!("{text}");
            } else {
                write!(out, "{text}")?;
            }
            if cli.json {
                let values = if cli.backend == Backend::Gpu {
                    &gpu
                } else {
                    &cpu
                };
                writeln!(out, "{}", json(&source, a, cli.backend, &times, values))?;
            }
        } else {
            let values = engine.sample(cli.backend, &instances)?;
            if cli.json {
                writeln!(out, "{}", json(&source, a, cli.backend, &times, &values))?;
            } else {
                table(&source, a, &times, &values, out)?;
            }
        }
        if let Some(plot_path) = &cli.plot {
            let path = if anims.len() > 1 {
                numbered(plot_path, a)
            } else {
                plot_path.clone()
            };
            plot(&source, a, cli.backend, &mut engine, &path)?;
            if !cli.json {
                writeln!(out, "plot: {}", path.display())?;
            }
        }
    }
    Ok(code)
}

fn load(path: &Path) -> Result<Source, Failure> {
    let imported = keyframe_gpu::gltf::load(path)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    Ok(Source {
        name,
        library: imported.library,
        document: Some(imported.document),
    })
}

/// The animations that `--animation` / `--all-animations` select.
fn selected(cli: &Cli, clip_count: usize) -> Result<Vec<usize>, Failure> {
    if cli.all_animations {
        Ok((0..clip_count).collect())
    } else if cli.animation < clip_count {
        Ok(vec![cli.animation])
    } else {
        Err(Failure::Message(format!(
            "--animation {} is out of range: the file has {clip_count} animation(s)",
            cli.animation
        )))
    }
}

/// `--joints`: each skin's joint matrices at each time.
fn run_joints(
    cli: &Cli,
    source: &Source,
    tol: f32,
    out: &mut impl Write,
) -> Result<ExitCode, Failure> {
    let shown = cli
        .file
        .as_deref()
        .map_or_else(|| source.name.clone(), |p| p.display().to_string());
    let Some(document) = &source.document else {
        return Err(Failure::Message(format!("no skins in {shown}")));
    };
    let rig = Rig::from_document(document).map_err(keyframe_gpu::Error::from)?;
    if rig.skins().is_empty() {
        return Err(Failure::Message(format!("no skins in {shown}")));
    }
    let tables = SkinTables::new(&rig, &source.library)?;
    let lib = &source.library;
    let anims = selected(cli, lib.clips().len())?;
    let mut engine = Engine::new(lib);
    engine.limit_for_skinning(&tables);
    let mut code = ExitCode::SUCCESS;
    if !cli.json {
        writeln!(
            out,
            "file: {}  ({} animation(s), {} skin(s))",
            source.name,
            lib.clips().len(),
            rig.skins().len()
        )?;
        if cli.compare || cli.backend == Backend::Gpu {
            writeln!(out, "adapter: {}", engine.describe()?)?;
        }
        let backend = if cli.compare {
            "gpu and cpu"
        } else {
            cli.backend.name()
        };
        writeln!(out, "backend: {backend}")?;
    }
    for &a in &anims {
        let clip = &lib.clips()[a];
        let times = match &cli.times {
            Some(t) => t.clone(),
            None => default_times(clip),
        };
        let instances: Vec<Instance> = times
            .iter()
            .map(|&t| Instance::new(a as u32, t).with_wrap(WrapMode::Clamp))
            .collect();
        let values = if cli.compare {
            let gpu = engine.joints(Backend::Gpu, &tables, &instances)?;
            let cpu = engine.joints(Backend::Cpu, &tables, &instances)?;
            let errors = skin_errors(rig.skins().len(), &gpu, &cpu);
            let failed = errors.iter().any(|e| e.is_nan() || *e > tol);
            if failed {
                code = ExitCode::from(1);
            }
            let worst = errors.iter().copied().fold(0.0f32, |m, e| {
                if e.is_nan() || m.is_nan() {
                    f32::NAN
                } else {
                    m.max(e)
                }
            });
            let mut text = format!(
                "animation {a} ({:?}): {} skin(s), {} time(s), joint matrices GPU vs CPU\n  skin  node   joints  max_abs_err\n",
                clip.name,
                errors.len(),
                times.len()
            );
            for (s, (e, skin)) in errors.iter().zip(rig.skins()).enumerate() {
                let flag = if e.is_nan() || *e > tol {
                    "  > tol"
                } else {
                    ""
                };
                text.push_str(&format!(
                    "  {s:<5} {:<6} {:<7} {e:.3e}{flag}\n",
                    skin.mesh_node.map_or_else(|| "-".into(), |n| n.to_string()),
                    skin.joints.len()
                ));
            }
            text.push_str(&format!(
                "max_abs_err={worst:e} tol={tol:e} {}\n",
                if failed { "FAIL" } else { "ok" }
            ));
            if cli.json {
                // stdout is reserved for the JSON.
                eprint!("{text}");
            } else {
                write!(out, "{text}")?;
            }
            if cli.backend == Backend::Gpu {
                gpu
            } else {
                cpu
            }
        } else {
            engine.joints(cli.backend, &tables, &instances)?
        };
        if cli.json {
            writeln!(out, "{}", joints_json(source, a, &times, &values))?;
        } else if !cli.compare {
            joints_table(source, a, &times, &values, out)?;
        }
    }
    Ok(code)
}

/// The largest absolute difference per skin over every time (NaN when a
/// value is not finite or the shapes differ).
fn skin_errors(skins: usize, a: &[Vec<SkinJoints>], b: &[Vec<SkinJoints>]) -> Vec<f32> {
    let mut err = vec![0.0f32; skins];
    if a.len() != b.len() {
        return vec![f32::NAN; skins];
    }
    for (ta, tb) in a.iter().zip(b) {
        for (s, e) in err.iter_mut().enumerate() {
            let (Some(sa), Some(sb)) = (ta.get(s), tb.get(s)) else {
                *e = f32::NAN;
                continue;
            };
            if sa.joints.len() != sb.joints.len() {
                *e = f32::NAN;
                continue;
            }
            for (ma, mb) in sa.joints.iter().zip(&sb.joints) {
                for (x, y) in ma.iter().zip(mb) {
                    let d = (x - y).abs();
                    if d.is_nan() || e.is_nan() {
                        *e = f32::NAN;
                    } else {
                        *e = e.max(d);
                    }
                }
            }
        }
    }
    err
}

fn joints_json(source: &Source, a: usize, times: &[f64], values: &[Vec<SkinJoints>]) -> String {
    let mut s = format!(
        "{{\"file\": {}, \"animation\": {a}, \"samples\": [",
        serde_json::to_string(&source.name).unwrap_or_else(|_| "\"?\"".into())
    );
    for (i, &t) in times.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(&format!("{{\"time\": {}, \"skins\": [", time_str(t)));
        let skins = values.get(i).map_or(&[][..], Vec::as_slice);
        for (k, skin) in skins.iter().enumerate() {
            if k > 0 {
                s.push_str(", ");
            }
            let node = skin.node.map_or_else(|| "null".into(), |n| n.to_string());
            let mats: Vec<String> = skin
                .joints
                .iter()
                .map(|m| {
                    let nums: Vec<String> = m.iter().map(|&x| num32(x)).collect();
                    format!("[{}]", nums.join(", "))
                })
                .collect();
            s.push_str(&format!(
                "{{\"skin\": {}, \"node\": {node}, \"joints\": [{}]}}",
                skin.skin,
                mats.join(", ")
            ));
        }
        s.push_str("]}");
    }
    s.push_str("]}");
    s
}

fn joints_table(
    source: &Source,
    a: usize,
    times: &[f64],
    values: &[Vec<SkinJoints>],
    out: &mut impl Write,
) -> Result<(), Failure> {
    let clip = &source.library.clips()[a];
    writeln!(
        out,
        "animation {a} ({:?}): {} time(s), joint matrices (inverse(global(node)) * global(joint) * inverseBindMatrix)",
        clip.name,
        times.len()
    )?;
    for (i, &t) in times.iter().enumerate() {
        writeln!(out, "time {}", time_str(t))?;
        for skin in values.get(i).map_or(&[][..], Vec::as_slice) {
            let largest = skin
                .joints
                .iter()
                .flat_map(|m| m.iter())
                .fold(0.0f32, |m, x| m.max(x.abs()));
            writeln!(
                out,
                "  skin {}  node {}  {} joint(s)  max|element| {largest:.5}",
                skin.skin,
                skin.node.map_or_else(|| "-".into(), |n| n.to_string()),
                skin.joints.len()
            )?;
            if let Some(m) = skin.joints.first() {
                writeln!(out, "    joint 0 (rows):")?;
                for r in 0..4 {
                    let row: Vec<f32> = (0..4).map(|c| m[4 * c + r]).collect();
                    writeln!(out, "      {}", fmt_values(&row))?;
                }
            }
        }
    }
    Ok(())
}

/// Every key time of the clip's tracks, sorted, plus the midpoints.
fn default_times(clip: &Clip) -> Vec<f64> {
    let mut keys: Vec<f32> = clip
        .tracks
        .iter()
        .flat_map(|t| t.times.iter().copied())
        .collect();
    keys.sort_by(f32::total_cmp);
    keys.dedup();
    let mut times = Vec::with_capacity(keys.len() * 2);
    for (i, &k) in keys.iter().enumerate() {
        if i > 0 {
            times.push((f64::from(keys[i - 1]) + f64::from(k)) / 2.0);
        }
        times.push(f64::from(k));
    }
    times
}

/// A number for JSON: the shortest decimal that reads back to the same
/// `f32` (`null` if not finite).
fn num32(v: f32) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        "null".into()
    }
}

/// A time for JSON: as the `f32` it is when it is one (key times), else as
/// the `f64` that was asked for.
fn time_str(t: f64) -> String {
    if f64::from(t as f32) == t {
        num32(t as f32)
    } else {
        format!("{t}")
    }
}

fn json(source: &Source, a: usize, backend: Backend, times: &[f64], values: &[f32]) -> String {
    let lib = &source.library;
    let clip = &lib.clips()[a];
    let stride = lib.output_stride() as usize;
    let mut s = String::new();
    s.push_str(&format!(
        "{{\"file\": {}, \"animation\": {a}, \"backend\": \"{}\", \"samples\": [",
        serde_json::to_string(&source.name).unwrap_or_else(|_| "\"?\"".into()),
        backend.name()
    ));
    for (i, &t) in times.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(&format!("{{\"time\": {}, \"channels\": [", time_str(t)));
        for (j, track) in clip.tracks.iter().enumerate() {
            if j > 0 {
                s.push_str(", ");
            }
            let (offset, width) = lib.track_output(a, j).unwrap_or((0, 0));
            let start = i * stride + offset as usize;
            let v = values
                .get(start..start + width as usize)
                .unwrap_or_default();
            let nums: Vec<String> = v.iter().map(|&x| num32(x)).collect();
            s.push_str(&format!(
                "{{\"node\": {}, \"path\": \"{}\", \"value\": [{}]}}",
                track.node,
                track.property.as_gltf_str(),
                nums.join(", ")
            ));
        }
        s.push_str("]}");
    }
    s.push_str("]}");
    s
}

fn fmt_values(v: &[f32]) -> String {
    let parts: Vec<String> = v.iter().map(|x| format!("{x:>9.5}")).collect();
    format!("[{}]", parts.join(", "))
}

fn table(
    source: &Source,
    a: usize,
    times: &[f64],
    values: &[f32],
    out: &mut impl Write,
) -> Result<(), Failure> {
    let lib = &source.library;
    let clip = &lib.clips()[a];
    let stride = lib.output_stride() as usize;
    writeln!(
        out,
        "animation {a} ({:?}): {} channel(s), keys from {} s to {} s",
        clip.name,
        clip.tracks.len(),
        clip.tracks
            .iter()
            .filter_map(|t| t.times.first().copied())
            .fold(f32::INFINITY, f32::min),
        clip.duration()
    )?;
    for (i, &t) in times.iter().enumerate() {
        writeln!(out, "time {}", time_str(t))?;
        writeln!(out, "  ch   node  path         interp       value")?;
        for (j, track) in clip.tracks.iter().enumerate() {
            let (offset, width) = lib.track_output(a, j).unwrap_or((0, 0));
            let start = i * stride + offset as usize;
            let v = values
                .get(start..start + width as usize)
                .unwrap_or_default();
            writeln!(
                out,
                "  {:<4} {:<5} {:<12} {:<12} {}",
                j,
                track.node,
                track.property.as_gltf_str(),
                track.interpolation.as_gltf_str(),
                fmt_values(v)
            )?;
        }
    }
    Ok(())
}

fn numbered(path: &Path, a: usize) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "plot".into());
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_else(|| "png".into());
    path.with_file_name(format!("{stem}-{a}.{ext}"))
}

// ---------------------------------------------------------------------------
// The demo.

/// One clip per interpolation x property: keys at 0, 1 and 2.5 s (unequal
/// intervals, so CUBICSPLINE tangent scaling shows), a rotation pair with a
/// negative dot product (shortest path), 3 morph weights.
fn demo_library() -> Result<AnimationLibrary, Failure> {
    let times = vec![0.0f32, 1.0, 2.5];
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let (s60, c60) = (0.866_025_4_f32, 0.5_f32);
    let translation = [0.0, 0.0, 0.0, 1.0, 2.0, -1.0, 3.0, -1.0, 0.5];
    let rotation = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, s, s, -s60, 0.0, 0.0, -c60];
    let scale = [1.0, 1.0, 1.0, 2.0, 0.5, 1.0, 0.5, 1.5, 3.0];
    let weights = [0.0, 0.5, 1.0, 1.0, 0.0, 0.25, 0.2, 0.8, 0.0];
    // CUBICSPLINE: (in-tangent, value, out-tangent) per key.
    let cubic = |values: &[f32], width: usize, tangent: f32| -> Vec<f32> {
        let mut v = Vec::new();
        for (k, key) in values.chunks(width).enumerate() {
            let t: Vec<f32> = (0..width)
                .map(|c| tangent * (1.0 + c as f32) * if k % 2 == 0 { 1.0 } else { -1.0 })
                .collect();
            v.extend_from_slice(&t);
            v.extend_from_slice(key);
            v.extend(t.iter().map(|x| x * 0.5));
        }
        v
    };
    let mut clips = Vec::new();
    for interp in [
        Interpolation::Step,
        Interpolation::Linear,
        Interpolation::CubicSpline,
    ] {
        let c = interp == Interpolation::CubicSpline;
        let pick = |values: &[f32], width: usize, tangent: f32| {
            if c {
                cubic(values, width, tangent)
            } else {
                values.to_vec()
            }
        };
        let name = |p: &str| format!("{} {p}", interp.as_gltf_str());
        clips.push(Clip::new(
            name("translation"),
            vec![Track::new(
                0,
                Property::Translation,
                interp,
                times.clone(),
                pick(&translation, 3, 1.5),
            )],
        ));
        clips.push(Clip::new(
            name("rotation"),
            vec![Track::new(
                1,
                Property::Rotation,
                interp,
                times.clone(),
                pick(&rotation, 4, 0.25),
            )],
        ));
        clips.push(Clip::new(
            name("scale"),
            vec![Track::new(
                2,
                Property::Scale,
                interp,
                times.clone(),
                pick(&scale, 3, 0.75),
            )],
        ));
        clips.push(Clip::new(
            name("weights"),
            vec![Track::weights(
                3,
                3,
                interp,
                times.clone(),
                pick(&weights, 3, 0.5),
            )],
        ));
    }
    Ok(AnimationLibrary::new(clips)?)
}

fn demo(
    source: &Source,
    engine: &mut Engine<'_>,
    times: Option<&[f64]>,
    out: &mut impl Write,
) -> Result<ExitCode, Failure> {
    let times = times.map_or_else(|| vec![-0.5, 0.0, 0.4, 1.0, 1.6, 2.5, 3.0], <[f64]>::to_vec);
    let lib = &source.library;
    writeln!(
        out,
        "keyframe-gpu demo: {} clips (STEP, LINEAR, CUBICSPLINE x translation, rotation, scale, weights), keys at 0, 1, 2.5 s",
        lib.clips().len()
    )?;
    writeln!(out, "adapter: {}", engine.describe()?)?;
    let mut instances = Vec::new();
    for c in 0..lib.clips().len() {
        for &t in &times {
            instances.push(Instance::new(c as u32, t));
        }
    }
    let gpu = engine.sample(Backend::Gpu, &instances)?;
    let cpu = engine.sample(Backend::Cpu, &instances)?;
    let stride = lib.output_stride() as usize;
    writeln!(
        out,
        "{:<24} {:>6}  {:<48} {:>9}",
        "clip", "time", "gpu value", "|gpu-cpu|"
    )?;
    for (i, inst) in instances.iter().enumerate() {
        let c = inst.clip as usize;
        let (offset, width) = lib.track_output(c, 0).unwrap_or((0, 0));
        let range = i * stride + offset as usize..i * stride + (offset + width) as usize;
        let (g, r) = (
            gpu.get(range.clone()).unwrap_or_default(),
            cpu.get(range).unwrap_or_default(),
        );
        let err = if lib.clips()[c].tracks[0].property == Property::Rotation {
            compare::quat_abs_diff(g, r)
        } else {
            compare::max_abs_diff(g, r)
        };
        let vals: Vec<String> = g.iter().map(|x| format!("{x:8.5}")).collect();
        writeln!(
            out,
            "{:<24} {:>6.2}  {:<48} {:>9.2e}",
            lib.clips()[c].name,
            inst.time,
            format!("[{}]", vals.join(", ")),
            err
        )?;
    }
    let clips: Vec<u32> = instances.iter().map(|i| i.clip).collect();
    let report = compare::compare(lib, &clips, &gpu, &cpu);
    writeln!(out, "max_abs_err={:e}", report.max_abs_err())?;
    Ok(ExitCode::SUCCESS)
}

// ---------------------------------------------------------------------------
// The plot.

const PANEL_W: usize = 360;
const PANEL_H: usize = 210;
const DENSE: usize = 480;

fn plot(
    source: &Source,
    a: usize,
    backend: Backend,
    engine: &mut Engine<'_>,
    path: &Path,
) -> Result<(), Failure> {
    let lib = &source.library;
    let clip = &lib.clips()[a];
    let n = clip.tracks.len();
    let start = clip
        .tracks
        .iter()
        .filter_map(|t| t.times.first().copied())
        .fold(f32::INFINITY, f32::min);
    let end = clip.duration();
    let (t0, t1) = if start.is_finite() && end > start {
        (f64::from(start), f64::from(end))
    } else {
        (f64::from(end) - 0.5, f64::from(end) + 0.5)
    };
    let times: Vec<f64> = (0..DENSE)
        .map(|i| t0 + (t1 - t0) * i as f64 / (DENSE - 1) as f64)
        .collect();
    let instances: Vec<Instance> = times
        .iter()
        .map(|&t| Instance::new(a as u32, t).with_wrap(WrapMode::Clamp))
        .collect();
    let values = engine.sample(backend, &instances)?;
    let stride = lib.output_stride() as usize;

    let cols = ((n as f64 * 1.5).sqrt().ceil() as usize)
        .clamp(1, 6)
        .min(n.max(1));
    let rows = n.div_ceil(cols);
    let header = 24usize;
    let heading = format!(
        "{}  animation {a} {:?}  {} channels  t = {} .. {} s  ({})",
        source.name,
        clip.name,
        n,
        short(t0),
        short(t1),
        backend.name()
    );
    let heading_w = Canvas::text_width(&heading, 2) as usize + 12;
    let mut canvas = Canvas::new(
        (cols * PANEL_W).max(heading_w.min(4096)),
        header + rows * PANEL_H,
        WHITE,
    );
    canvas.text(6, 6, &heading, 2, TEXT);
    for (j, track) in clip.tracks.iter().enumerate() {
        let (offset, width) = lib.track_output(a, j).unwrap_or((0, 0));
        let width = width as usize;
        let series: Vec<&[f32]> = (0..DENSE)
            .map(|i| {
                let s = i * stride + offset as usize;
                values.get(s..s + width).unwrap_or_default()
            })
            .collect();
        // Keys: the value element of each key (never a tangent).
        let per_key = track.interpolation.elements_per_key();
        let value_el = if per_key == 3 { 1 } else { 0 };
        let keys: Vec<(f32, &[f32])> = track
            .times
            .iter()
            .enumerate()
            .map(|(k, &t)| {
                let s = (k * per_key + value_el) * width;
                (t, track.values.get(s..s + width).unwrap_or_default())
            })
            .collect();
        let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
        for v in series
            .iter()
            .flat_map(|s| s.iter())
            .chain(keys.iter().flat_map(|k| k.1.iter()))
        {
            if v.is_finite() {
                lo = lo.min(*v);
                hi = hi.max(*v);
            }
        }
        if !(lo.is_finite() && hi.is_finite()) {
            (lo, hi) = (-1.0, 1.0);
        }
        if hi - lo < 1e-6 {
            (lo, hi) = (lo - 0.5, hi + 0.5);
        }
        let pad = (hi - lo) * 0.06;
        let (lo, hi) = (f64::from(lo - pad), f64::from(hi + pad));

        let px = (j % cols) * PANEL_W;
        let py = header + (j / cols) * PANEL_H;
        let (left, right) = (px as f64 + 60.0, (px + PANEL_W) as f64 - 10.0);
        let (top, bottom) = (py as f64 + 26.0, (py + PANEL_H) as f64 - 22.0);
        let x_of = |t: f64| left + (t - t0) / (t1 - t0) * (right - left);
        let y_of = |v: f64| bottom - (v - lo) / (hi - lo) * (bottom - top);
        let title = format!(
            "#{j} node {} {} {}",
            track.node,
            track.property.as_gltf_str(),
            track.interpolation.as_gltf_str()
        );
        canvas.text(px as i64 + 6, py as i64 + 6, &title, 2, TEXT);
        // Many keys (baked clips): thin ticks instead of grid lines and boxes.
        let sparse_keys = keys.len() <= 40;
        if lo < 0.0 && hi > 0.0 {
            canvas.line_f(left, y_of(0.0), right, y_of(0.0), GRID);
        }
        for &(t, _) in &keys {
            let x = x_of(f64::from(t));
            if sparse_keys && x >= left && x <= right {
                canvas.line_f(x, top, x, bottom, GRID);
            } else if x >= left && x <= right {
                canvas.line_f(x, bottom - 4.0, x, bottom, FRAME);
            }
        }
        canvas.rect(left as i64, top as i64, right as i64, bottom as i64, FRAME);
        canvas.text(px as i64 + 4, top as i64, &short(hi), 2, TEXT);
        canvas.text(px as i64 + 4, bottom as i64 - 10, &short(lo), 2, TEXT);
        canvas.text(left as i64, bottom as i64 + 6, &short(t0), 2, TEXT);
        let t1s = short(t1);
        canvas.text(
            right as i64 - Canvas::text_width(&t1s, 2),
            bottom as i64 + 6,
            &t1s,
            2,
            TEXT,
        );
        for c in 0..width {
            let color = PALETTE[c % PALETTE.len()];
            for i in 1..DENSE {
                let (Some(&v0), Some(&v1)) = (series[i - 1].get(c), series[i].get(c)) else {
                    continue;
                };
                canvas.line_f(
                    x_of(times[i - 1]),
                    y_of(f64::from(v0)),
                    x_of(times[i]),
                    y_of(f64::from(v1)),
                    color,
                );
            }
            for &(t, v) in &keys {
                if let Some(&v) = v.get(c).filter(|_| sparse_keys) {
                    canvas.marker(x_of(f64::from(t)), y_of(f64::from(v)), color);
                }
            }
        }
    }
    canvas.save_png(path)?;
    Ok(())
}

/// A short label for an axis value.
fn short(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}
