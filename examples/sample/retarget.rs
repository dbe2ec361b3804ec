//! `--retarget MAP.json`: the `--clips` files' clips retargeted onto
//! FILE's rig (`AnimationLibrary::retarget`, done when the source is
//! loaded), sampled at the options' times: every node's local pose per
//! time, as a table or as JSON,
//! `{"file": "character.glb", "animation": 1, "backend": "gpu",
//! "samples": [{"time": 0.5, "nodes": [{"node": 0, "translation": [x, y,
//! z], "rotation": [x, y, z, w], "scale": [x, y, z]}, ...]}]}` (each
//! sample's nodes as `--mix --json` prints them). `--joints` prints the
//! joint matrices instead (`joints.rs`), `--compare` checks the GPU
//! against the CPU twin (default `--tol` 1e-4).

use std::io::Write;
use std::process::ExitCode;

use glam::Vec4;
use keyframe_gpu::{Instance, Transform};

use crate::args::{Backend, Cli};
use crate::engine::Engine;
use crate::json::time_str;
use crate::source::{self, Source};
use crate::table::fmt_values;
use crate::Failure;

/// One backend's results: per instance, every node's local pose and its
/// `--mix --json` form.
#[derive(Default)]
struct Nodes {
    locals: Vec<Vec<Transform>>,
    json: Vec<String>,
}

fn pose(
    engine: &mut Engine<'_>,
    backend: Backend,
    source: &Source,
    instances: &[Instance],
) -> Result<Nodes, Failure> {
    let bound = source.bound("--retarget")?;
    let rig = bound.rig();
    let mut nodes = Nodes::default();
    engine.poses(backend, &bound, instances, |poses| {
        for i in 0..poses.instance_count() {
            let missing = || Failure::Message(format!("no pose for instance {i}"));
            let locals = (0..rig.nodes().len() as u32)
                .map(|n| poses.local(i, n).ok_or_else(missing))
                .collect::<Result<Vec<_>, _>>()?;
            nodes.locals.push(locals);
            nodes
                .json
                .push(crate::mix::nodes_json(rig, poses, i).ok_or_else(missing)?);
        }
        Ok(())
    })?;
    Ok(nodes)
}

/// The largest difference between two results' local poses (rotations
/// up to sign, per component); NaN where either side has one.
fn difference(a: &Nodes, b: &Nodes) -> f32 {
    let mut worst = 0.0f32;
    let mut see = |d: f32| {
        if d.is_nan() || d > worst {
            worst = if worst.is_nan() { worst } else { d };
        }
    };
    for (x, y) in a.locals.iter().flatten().zip(b.locals.iter().flatten()) {
        let (qx, qy) = (Vec4::from(x.rotation), Vec4::from(y.rotation));
        let r = (qx - qy).abs().max_element();
        let flipped = (qx + qy).abs().max_element();
        see((x.translation - y.translation).abs().max_element());
        see((x.scale - y.scale).abs().max_element());
        see(if r.is_nan() { r } else { r.min(flipped) });
    }
    worst
}

/// Runs `--retarget` over the selected animations.
pub fn run(
    cli: &Cli,
    source: &Source,
    tol: f32,
    out: &mut impl Write,
) -> Result<ExitCode, Failure> {
    let lib = &source.library;
    let anims = source::selected(cli, lib.clips().len())?;
    let mut engine = Engine::new(lib);
    engine.limit_for_skinning(source.bound("--retarget")?.rig());
    let mut code = ExitCode::SUCCESS;
    if !cli.json {
        writeln!(
            out,
            "file: {}  ({} animation(s))",
            source.name,
            lib.clips().len()
        )?;
        if cli.uses_gpu() {
            writeln!(out, "adapter: {}", engine.describe()?)?;
        }
        writeln!(out, "backend: {}", cli.backend_label())?;
    }
    for &a in &anims {
        let times = source::times(cli, &lib.clips()[a]);
        let instances = source::instances(a, &times);
        let shown = if cli.compare {
            let gpu = pose(&mut engine, Backend::Gpu, source, &instances)?;
            let cpu = pose(&mut engine, Backend::Cpu, source, &instances)?;
            let worst = difference(&gpu, &cpu);
            let failed = worst.is_nan() || worst > tol;
            if failed {
                code = ExitCode::from(1);
            }
            let verdict = format!(
                "animation {a}: compare gpu/cpu: local poses max_abs_err={worst:e} (tol {tol:e}): {}",
                if failed { "FAIL" } else { "ok" }
            );
            if cli.json {
                eprintln!("{verdict}");
            } else {
                writeln!(out, "{verdict}")?;
            }
            if cli.backend == Backend::Gpu {
                gpu
            } else {
                cpu
            }
        } else {
            pose(&mut engine, cli.backend, source, &instances)?
        };
        if cli.json {
            let file = serde_json::to_string(&source.name).unwrap_or_else(|_| "\"?\"".into());
            let samples: Vec<String> = times
                .iter()
                .zip(&shown.json)
                .map(|(&t, nodes)| format!("{{\"time\": {}, \"nodes\": {nodes}}}", time_str(t)))
                .collect();
            writeln!(
                out,
                "{{\"file\": {file}, \"animation\": {a}, \"backend\": \"{}\", \"samples\": [{}]}}",
                cli.backend.name(),
                samples.join(", ")
            )?;
        } else {
            for (t, locals) in times.iter().zip(&shown.locals) {
                writeln!(out, "animation {a} at {t}:")?;
                for (n, p) in locals.iter().enumerate() {
                    writeln!(
                        out,
                        "  node {n}: T {}  R {}  S {}",
                        fmt_values(&p.translation.to_array()),
                        fmt_values(&p.rotation.to_array()),
                        fmt_values(&p.scale.to_array())
                    )?;
                }
            }
        }
    }
    Ok(code)
}
