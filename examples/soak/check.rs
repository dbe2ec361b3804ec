//! The twin check: a frame read back from the GPU against the CPU twin
//! (`cpu::mixed_poses`) of the same table, every node's local transform
//! (rotations up to sign) and world matrix, every skin's joint matrices
//! and every mesh's morph weights, within the mixer tests' tolerance
//! (src/tests/mixer.rs: 1e-4 per element, GPU against CPU). A large
//! frame is checked on a sample of its characters.

use keyframe_gpu::{Action, Difference, Error, Poses};

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
/// twin's `cpu` (its character `k` is the GPU's `chosen[k]`) with the
/// element where the frames are farthest apart, or why they cannot be
/// compared (`Poses::compare_instances`).
pub fn max_diff(
    gpu: &Poses,
    chosen: &[u32],
    cpu: &Poses,
) -> Result<(f32, Option<Difference>), Error> {
    let c = gpu.compare_instances(chosen, cpu)?;
    Ok((c.max_abs.into_iter().fold(0.0, f32::max), c.worst))
}
