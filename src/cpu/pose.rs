//! The CPU twin of `shaders/pose.wgsl`, the pose stage: each instance's
//! local pose per node ([`local_pose`]: sampled or rest translation,
//! rotation and scale) and morph weights per mesh
//! ([`write_morph_weights`]).
//!
//! One function per WGSL function, same names and argument order, the same
//! `f32` operations in the same order, reading the same flat tables
//! ([`SkinTables`]) and the sampler's output. [`pose_main`] and
//! [`morph_main`] are one invocation of the kernels of the same names;
//! `instance_clips[i]` stands for WGSL's `instances[i].clip` (the clip of
//! the resolved instance, as the sampler's instance table holds it).
//!
//! # Panics
//! Like the shader, the functions index the flat tables directly and panic
//! on offsets outside them; tables built by [`SkinTables::of`] with the
//! sampler output of the same library are always in range.

use glam::{Vec3, Vec4};

use crate::cpu::quat::quat_normalize;
use crate::layout::GpuLocalPose;
use crate::layout::GpuNode;
use crate::tables::rig::SkinTables;

/// Node `n` (WGSL `node_at`, which reads the first
/// [`UNIFORM_HEAD`](crate::layout::UNIFORM_HEAD) nodes from a uniform
/// copy, the same values).
#[must_use]
pub(crate) fn node_at(tables: &SkinTables, n: u32) -> GpuNode {
    tables.nodes()[n as usize]
}

/// Pose channel `c`, `clip * node_count + node` (WGSL `channel_at`, like
/// [`node_at`]).
#[must_use]
pub(crate) fn channel_at(tables: &SkinTables, c: u32) -> [i32; 4] {
    tables.channels()[c as usize]
}

/// WGSL `sample_vec3`: three floats of the sampler's output from `at`
/// (pose.wgsl's, which the mix shader is built with too).
pub(crate) fn sample_vec3(samples: &[f32], at: usize) -> Vec3 {
    Vec3::new(samples[at], samples[at + 1], samples[at + 2])
}

/// WGSL `sample_vec4`: four floats of the sampler's output from `at`
/// (shared with the mix shader, as `sample_vec3`).
pub(crate) fn sample_vec4(samples: &[f32], at: usize) -> Vec4 {
    Vec4::new(
        samples[at],
        samples[at + 1],
        samples[at + 2],
        samples[at + 3],
    )
}

/// The local pose of node `n` for instance `i`, whose clip is `clip`
/// (WGSL `local_pose`): the sampler's output where a track of the clip
/// animates a property, the node's rest value otherwise; the rotation
/// normalized.
#[must_use]
pub(crate) fn local_pose(
    tables: &SkinTables,
    samples: &[f32],
    i: u32,
    clip: u32,
    n: u32,
) -> GpuLocalPose {
    let node = node_at(tables, n);
    let mut t = Vec3::from_slice(&node.translation[..3]);
    let mut r = Vec4::from_array(node.rotation);
    let mut s = Vec3::from_slice(&node.scale[..3]);
    if clip < tables.clip_count() {
        let ch = channel_at(tables, clip * tables.node_count() + n);
        let base = (i * tables.output_stride()) as usize;
        if ch[0] >= 0 {
            t = sample_vec3(samples, base + ch[0] as usize);
        }
        if ch[1] >= 0 {
            r = sample_vec4(samples, base + ch[1] as usize);
        }
        if ch[2] >= 0 {
            s = sample_vec3(samples, base + ch[2] as usize);
        }
    }
    GpuLocalPose {
        translation: t.extend(0.0).to_array(),
        rotation: quat_normalize(r).to_array(),
        scale: s.extend(0.0).to_array(),
    }
}

/// Writes mesh `m`'s weights for instance `i` into `morph_weights` (WGSL
/// `write_morph_weights`).
pub(crate) fn write_morph_weights(
    tables: &SkinTables,
    samples: &[f32],
    instance_clips: &[u32],
    i: u32,
    m: u32,
    morph_weights: &mut [f32],
) {
    let mesh = tables.meshes()[m as usize];
    let out = (i * tables.morph_stride() + mesh.weights_offset) as usize;
    let clip = instance_clips[i as usize];
    let mut src = -1;
    if clip < tables.clip_count() {
        src = tables.morph_channels()[(clip * tables.mesh_count() + m) as usize];
    }
    for k in 0..mesh.target_count as usize {
        if src >= 0 {
            morph_weights[out + k] =
                samples[(i * tables.output_stride()) as usize + src as usize + k];
        } else {
            morph_weights[out + k] = tables.default_weights()[mesh.defaults_offset as usize + k];
        }
    }
}

/// Invocation `index` of WGSL `pose_main`: the local pose of node
/// `index % node_count` of instance `index / node_count`, into
/// `locals[index]`.
pub(crate) fn pose_main(
    tables: &SkinTables,
    samples: &[f32],
    instance_clips: &[u32],
    index: u32,
    locals: &mut [GpuLocalPose],
) {
    let nodes = tables.node_count();
    if nodes == 0 || index >= instance_clips.len() as u32 * nodes {
        return;
    }
    let i = index / nodes;
    locals[index as usize] = local_pose(
        tables,
        samples,
        i,
        instance_clips[i as usize],
        index % nodes,
    );
}

/// Invocation `index` of WGSL `morph_main`: mesh `index % mesh_count` of
/// instance `index / mesh_count`.
pub(crate) fn morph_main(
    tables: &SkinTables,
    samples: &[f32],
    instance_clips: &[u32],
    index: u32,
    morph_weights: &mut [f32],
) {
    let meshes = tables.mesh_count();
    if meshes == 0 || index >= instance_clips.len() as u32 * meshes {
        return;
    }
    write_morph_weights(
        tables,
        samples,
        instance_clips,
        index / meshes,
        index % meshes,
        morph_weights,
    );
}
