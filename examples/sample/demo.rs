//! The built-in demo: one clip per interpolation mode x property, sampled
//! on the GPU and the CPU, printed as a table that ends with
//! `max_abs_err=<value>`.

use std::io::Write;
use std::process::ExitCode;

use keyframe_gpu::{AnimationLibrary, Clip, Instance, Interpolation, Property, Track};

use crate::track_diff as compare;

use crate::args::Backend;
use crate::engine::Engine;
use crate::source::Source;
use crate::Failure;

/// The demo's source.
pub fn source() -> Result<Source, Failure> {
    Ok(Source::demo("demo".into(), library()?))
}

/// One clip per interpolation x property: keys at 0, 1 and 2.5 s (unequal
/// intervals, so CUBICSPLINE tangent scaling shows), a rotation pair with a
/// negative dot product (shortest path), 3 morph weights.
fn library() -> Result<AnimationLibrary, Failure> {
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
        let name = |p: &str| format!("{interp} {p}");
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

/// Samples every demo clip at `times` (default -0.5 to 3 s) on the GPU and
/// the CPU and prints the table.
pub fn run(
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
        let (offset, width) = lib.track_output(c as u32, 0).unwrap_or((0, 0));
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
