//! The twin of each skin-stage entry point and its steps, element by
//! element as the shaders compute them: what the crate's own tests
//! compare the passes with.

use super::twins::{SkinJoints, TestSkinTables};
use crate::cpu::sample::sample_resolved;
pub(crate) use crate::cpu::skin::*;
use crate::error::Result;
use crate::model::instance::Instance;
use crate::model::library::AnimationLibrary;
use crate::model::rig::Rig;
use crate::tables::instance::resolve_instances;
use crate::tables::rig::SkinTables;
use crate::tests::Derived;
use glam::{Mat4, Vec4};

/// WGSL `a * b` for 4x4 matrices.
#[must_use]
pub(crate) fn mat_mul(a: Mat4, b: Mat4) -> Mat4 {
    let col = |v: Vec4| a.x_axis * v.x + a.y_axis * v.y + a.z_axis * v.z + a.w_axis * v.w;
    Mat4::from_cols(col(b.x_axis), col(b.y_axis), col(b.z_axis), col(b.w_axis))
}

/// [`pose_resolved`] with the per-instance strategy's kernels:
/// [`morph_main`] and [`skin_main`] for every invocation (no locals:
/// [`SkinOutput::locals`] is empty). Its globals equal the staged ones bit
/// for bit (the same operations); its joint matrices differ by rounding
/// where a mesh node is not a root (step 1 builds the mesh node's global on
/// its own, another association of the same products).
#[must_use]
pub(crate) fn per_instance_resolved(
    tables: &SkinTables,
    samples: &[f32],
    instance_clips: &[u32],
) -> SkinOutput {
    let samples = padded(tables, samples, instance_clips.len());
    let count = instance_clips.len() as u32;
    let morph_weights = morph_weights(tables, &samples, instance_clips);
    let mut globals = vec![IDENTITY; (count * tables.node_count()) as usize];
    let mut joint_matrices = vec![IDENTITY; (count * tables.joint_count()) as usize];
    for i in 0..count {
        skin_main(
            tables,
            &samples,
            instance_clips,
            i,
            &mut globals,
            &mut joint_matrices,
        );
    }
    SkinOutput {
        locals: Vec::new(),
        globals,
        joints: joint_matrices,
        morph_weights,
        properties: Vec::new(),
    }
}

/// Samples `instances` on the CPU ([`crate::cpu`]) and runs the staged
/// pose and skin passes on the result ([`pose_resolved`]).
///
/// # Errors
/// The instance errors of the sampler (clip out of range, time not finite).
pub(crate) fn skin(
    tables: &SkinTables,
    library: &AnimationLibrary,
    instances: &[Instance],
) -> Result<SkinOutput> {
    let resolved = resolve_instances(library, instances)?;
    let mut samples = vec![0.0; resolved.len() * library.output_stride() as usize];
    sample_resolved(library.tables(), &resolved, &mut samples);
    let clips: Vec<u32> = resolved.iter().map(|r| r.clip).collect();
    Ok(pose_resolved(tables, &samples, &clips))
}

/// Each skin's joint matrices (column-major, in the skin's joint order)
/// with clip `clip` of `library` played on `rig` at `time` seconds,
/// clamped to the clip (glTF rule): `inverse(global(node)) *
/// global(joint) * inverseBindMatrix`, where `node` is the skin's mesh node
/// and every local transform comes from the clip at that time (rest values
/// where not animated).
///
/// Builds the tables on each call; to sample many times, build
/// [`SkinTables`] once and call `joint_matrices_with`.
///
/// # Errors
/// Those of [`SkinTables::new`] and [`skin`].
pub(crate) fn joint_matrices(
    rig: &Rig,
    library: &AnimationLibrary,
    clip: u32,
    time: f64,
) -> Result<Vec<SkinJoints>> {
    let tables = SkinTables::new(rig, library)?;
    joint_matrices_with(&tables, library, clip, time)
}

/// [`joint_matrices`] with tables built once.
///
/// # Errors
/// Those of [`skin`].
pub(crate) fn joint_matrices_with(
    tables: &SkinTables,
    library: &AnimationLibrary,
    clip: u32,
    time: f64,
) -> Result<Vec<SkinJoints>> {
    let out = skin(tables, library, &[Instance::new(clip, time)])?;
    let block: Vec<[f32; 16]> = out.joints.iter().map(Mat4::to_cols_array).collect();
    Ok(tables.split_joints(&block))
}
