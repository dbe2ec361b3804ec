//! The twin check: a frame read back from the GPU against the CPU twin
//! (`cpu::mixed_poses`) of the same table, every node's local transform
//! (rotations up to sign), world matrix, every joint matrix and morph
//! weight, within the mixer tests' tolerance (src/tests/mixer.rs: 1e-4 per
//! element, GPU against CPU).

use keyframe_gpu::{Poses, Rig};

/// Largest GPU-vs-CPU difference allowed per element.
pub const TOL: f32 = 1e-4;

/// The largest difference between `gpu` and `cpu`, or why they cannot be
/// compared.
pub fn max_diff(rig: &Rig, gpu: &Poses, cpu: &Poses) -> Result<f32, String> {
    if gpu.instance_count() != cpu.instance_count() {
        return Err(format!(
            "{} characters on the GPU, {} on the CPU",
            gpu.instance_count(),
            cpu.instance_count()
        ));
    }
    let missing = |what: &str, i: u32| format!("character {i}: no {what}");
    let mut worst = 0.0f32;
    let mut diff = |a: &[f32], b: &[f32]| {
        worst = a
            .iter()
            .zip(b)
            .fold(worst, |w, (x, y)| w.max((x - y).abs()));
        if a.len() != b.len() {
            worst = f32::INFINITY;
        }
    };
    let layout = rig.output_layout();
    for i in 0..gpu.instance_count() {
        for n in 0..layout.nodes() {
            let (g, c) = (
                gpu.local(i, n).ok_or_else(|| missing("local", i))?,
                cpu.local(i, n).ok_or_else(|| missing("local", i))?,
            );
            diff(&g.translation.to_array(), &c.translation.to_array());
            diff(&g.scale.to_array(), &c.scale.to_array());
            let sign = if g.rotation.dot(c.rotation) < 0.0 {
                -1.0
            } else {
                1.0
            };
            diff(&(g.rotation * sign).to_array(), &c.rotation.to_array());
            let (g, c) = (
                gpu.world(i, n).ok_or_else(|| missing("world matrix", i))?,
                cpu.world(i, n).ok_or_else(|| missing("world matrix", i))?,
            );
            diff(&g.to_cols_array(), &c.to_cols_array());
        }
        let flat =
            |m: &[glam::Mat4]| -> Vec<f32> { m.iter().flat_map(|m| m.to_cols_array()).collect() };
        let (g, c) = (
            gpu.joints(i, 0).ok_or_else(|| missing("joints", i))?,
            cpu.joints(i, 0).ok_or_else(|| missing("joints", i))?,
        );
        diff(&flat(g), &flat(c));
        let spine = crate::model::SPINE;
        let (g, c) = (
            gpu.morph_weights(i, spine)
                .ok_or_else(|| missing("morph weights", i))?,
            cpu.morph_weights(i, spine)
                .ok_or_else(|| missing("morph weights", i))?,
        );
        diff(g, c);
    }
    Ok(worst)
}
