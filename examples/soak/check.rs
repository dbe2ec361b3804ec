//! The twin check: a frame read back from the GPU against the CPU twin
//! (`cpu::mixed_poses`) of the same table, every node's local transform
//! (rotations up to sign) and world matrix, every skin's joint matrices
//! and every mesh's morph weights, within the mixer tests' tolerance
//! (src/tests/mixer.rs: 1e-4 per element, GPU against CPU). A large
//! frame is checked on a sample of its characters.

use keyframe_gpu::{Action, Poses, Rig};

/// Largest GPU-vs-CPU difference allowed per element.
pub const TOL: f32 = 1e-4;

/// The most characters one check compares.
const SAMPLED: usize = 64;

/// The characters a check compares (every one of a small frame, evenly
/// spread ones of a large frame) and their table, for the twin:
/// `(characters, actions, counts)`.
pub fn sample(actions: &[Action], counts: &[u32]) -> (Vec<u32>, Vec<Action>, Vec<u32>) {
    let step = counts.len().div_ceil(SAMPLED).max(1);
    let mut firsts = Vec::with_capacity(counts.len());
    let mut at = 0usize;
    for &n in counts {
        firsts.push(at);
        at += n as usize;
    }
    let (mut chosen, mut acts, mut per) = (Vec::new(), Vec::new(), Vec::new());
    for c in (0..counts.len()).step_by(step) {
        chosen.push(c as u32);
        acts.extend_from_slice(&actions[firsts[c]..firsts[c] + counts[c] as usize]);
        per.push(counts[c]);
    }
    (chosen, acts, per)
}

/// The largest difference between the GPU's characters `chosen` and the
/// twin's `cpu` (its character `k` is the GPU's `chosen[k]`), or why they
/// cannot be compared.
pub fn max_diff(rig: &Rig, gpu: &Poses, chosen: &[u32], cpu: &Poses) -> Result<f32, String> {
    if chosen.len() != cpu.instance_count() as usize {
        return Err(format!(
            "{} characters chosen, {} on the CPU",
            chosen.len(),
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
    let flat =
        |m: &[glam::Mat4]| -> Vec<f32> { m.iter().flat_map(|m| m.to_cols_array()).collect() };
    for (k, &i) in chosen.iter().enumerate() {
        let k = k as u32;
        for n in 0..layout.nodes() {
            let (g, c) = (
                gpu.local(i, n).ok_or_else(|| missing("local", i))?,
                cpu.local(k, n).ok_or_else(|| missing("local", i))?,
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
                cpu.world(k, n).ok_or_else(|| missing("world matrix", i))?,
            );
            diff(&g.to_cols_array(), &c.to_cols_array());
            match (gpu.morph_weights(i, n), cpu.morph_weights(k, n)) {
                (Some(g), Some(c)) => diff(g, c),
                (None, None) => {}
                _ => return Err(missing("morph weights on one side", i)),
            }
        }
        for skin in 0..rig.skins().len() as u32 {
            let (g, c) = (
                gpu.joints(i, skin).ok_or_else(|| missing("joints", i))?,
                cpu.joints(k, skin).ok_or_else(|| missing("joints", i))?,
            );
            diff(&flat(g), &flat(c));
        }
    }
    Ok(worst)
}
