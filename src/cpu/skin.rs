//! The CPU twin of `shaders/skin.wgsl`, the hierarchy and joint-matrix
//! stage: global transforms and joint matrices from the local poses of the
//! pose stage ([`crate::cpu::pose`]).
//!
//! One function per WGSL function, same names and argument order, the same
//! `f32` operations in the same order, reading the same flat tables
//! ([`SkinTables`]) and producing the same layouts. Matrix products are
//! written out as the shader computes them ([`affine_mul`]: every left
//! factor is affine, and column `c` of `a * b` is `a[0] b[c].x + a[1]
//! b[c].y + a[2] b[c].z + a[3] b[c].w` without `a`'s last row;
//! [`affine_mul_affine`] where the right factor is affine too, as every
//! one but a non-affine inverse bind is), not with glam's operators, so
//! that the twin does not depend on how glam orders its sums.
//!
//! Kernels and their twins (one invocation each):
//! - `hierarchy_main` ([`SkinStrategy::Staged`], the reference):
//!   [`hierarchy_main`], after [`pose_main`] for every (instance, node);
//!   [`pose_resolved`] runs the staged chain for every instance.
//! - `skin_main` ([`SkinStrategy::PerInstance`], the pose stage fused in):
//!   `skin_main`; `per_instance_resolved` runs it for every instance.
//! - `skin_nodes_main` ([`SkinStrategy::PerNode`]) has no twin of its
//!   scheduling (pointer jumping in workgroup memory): it computes the same
//!   stages, mirrored here per stage (`local_pose` through
//!   `posed_local`, [`affine_inverse`], [`joint_matrix`]); the tests
//!   compare it with the staged reference within 1e-4 per element.
//!
//! [`SkinStrategy::Staged`]: crate::SkinStrategy::Staged
//! [`SkinStrategy::PerInstance`]: crate::SkinStrategy::PerInstance
//! [`SkinStrategy::PerNode`]: crate::SkinStrategy::PerNode
//!
//! # Panics
//! Like the shader, the functions index the flat tables directly and panic on
//! offsets outside them; tables built by [`SkinTables::of`] with the
//! sampler output of the same library are always in range.
#![allow(
    clippy::needless_range_loop,
    reason = "keeps the code easy to compare with the shader"
)]

use bytemuck::Zeroable;
use glam::{Mat4, Vec3, Vec4};

use crate::cpu::pose::{morph_main, node_at, pose_main};
use crate::layout::GpuLocalPose;
use crate::layout::{GpuJoint, MAX_FUSED_SKINS};
use crate::tables::rig::SkinTables;

/// Everything the pose, morph and skin passes write, for a set of
/// instances, in the GPU layouts described on [`SkinTables`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SkinOutput {
    /// Local poses, `instance * node_count + node` (`local_pose` for
    /// every node): the staged pose pass's `locals` buffer
    /// (`GpuSkinner::locals_buffer`).
    /// Empty from `per_instance_resolved`, whose kernel keeps them in
    /// registers.
    pub(crate) locals: Vec<GpuLocalPose>,
    /// Global matrices, `instance * node_count + node`.
    pub(crate) globals: Vec<Mat4>,
    /// Joint matrices, `instance * joint_count + slot`.
    pub(crate) joints: Vec<Mat4>,
    /// Morph weights, `instance * morph_stride + weights_offset + k`.
    pub(crate) morph_weights: Vec<f32>,
    /// The mixer's blended pointer properties, `character *
    /// property_stride + offset` ([`SkinTables::pointer_targets`]); empty
    /// without a mixer (the sampler's output holds each instance's).
    pub(crate) properties: Vec<f32>,
}

/// WGSL `IDENTITY`.
pub(crate) const IDENTITY: Mat4 = Mat4::IDENTITY;

/// WGSL `affine_mul`: `a * b` for an affine `a` (last row 0, 0, 0, 1),
/// any `b`. Column `c` is `a[0].xyz b[c].x + a[1].xyz b[c].y + a[2].xyz
/// b[c].z + a[3].xyz b[c].w` with `b[c].w` as its last component: the sums
/// of `mat_mul` without the terms of `a`'s last row, which for an
/// affine `a` are exact zeros and `1 * b[c].w`, so the same values on
/// finite input (for a non-affine `a` it is not the product).
#[must_use]
pub(crate) fn affine_mul(a: Mat4, b: Mat4) -> Mat4 {
    let col = |v: Vec4| {
        (a.x_axis.truncate() * v.x
            + a.y_axis.truncate() * v.y
            + a.z_axis.truncate() * v.z
            + a.w_axis.truncate() * v.w)
            .extend(v.w)
    };
    Mat4::from_cols(col(b.x_axis), col(b.y_axis), col(b.z_axis), col(b.w_axis))
}

/// WGSL `affine_mul_affine`: `a * b` for affine `a` and `b` (last rows 0,
/// 0, 0, 1). [`affine_mul`] without the terms of `b`'s last row
/// (`a[3].xyz * 0` in columns 0 to 2, `a[3].xyz * 1` in column 3) and with
/// the last row written as 0, 0, 0, 1: the same sums in the same order otherwise,
/// so the same values on finite input but for the sign of a zero (for a
/// non-affine `b` it is not the product).
#[must_use]
pub(crate) fn affine_mul_affine(a: Mat4, b: Mat4) -> Mat4 {
    let linear =
        |v: Vec4| a.x_axis.truncate() * v.x + a.y_axis.truncate() * v.y + a.z_axis.truncate() * v.z;
    Mat4::from_cols(
        linear(b.x_axis).extend(0.0),
        linear(b.y_axis).extend(0.0),
        linear(b.z_axis).extend(0.0),
        (linear(b.w_axis) + a.w_axis.truncate()).extend(1.0),
    )
}

// WGSL cross and dot, written out.
fn cross(a: Vec3, b: Vec3) -> Vec3 {
    Vec3::new(
        a.y * b.z - a.z * b.y,
        a.z * b.x - a.x * b.z,
        a.x * b.y - a.y * b.x,
    )
}

fn dot3(a: Vec3, b: Vec3) -> f32 {
    a.x * b.x + a.y * b.y + a.z * b.z
}

/// Joint slot `j` (WGSL `joint_at`, like [`node_at`]).
#[must_use]
pub(crate) fn joint_at(tables: &SkinTables, j: u32) -> GpuJoint {
    tables.joints()[j as usize]
}

/// `T * R * S` for translation `t`, unit quaternion `q` (x, y, z, w) and
/// scale `s`.
#[must_use]
pub(crate) fn compose_trs(t: Vec3, q: Vec4, s: Vec3) -> Mat4 {
    let x2 = q.x + q.x;
    let y2 = q.y + q.y;
    let z2 = q.z + q.z;
    let xx = q.x * x2;
    let xy = q.x * y2;
    let xz = q.x * z2;
    let yy = q.y * y2;
    let yz = q.y * z2;
    let zz = q.z * z2;
    let wx = q.w * x2;
    let wy = q.w * y2;
    let wz = q.w * z2;
    Mat4::from_cols(
        Vec4::new(
            (1.0 - (yy + zz)) * s.x,
            (xy + wz) * s.x,
            (xz - wy) * s.x,
            0.0,
        ),
        Vec4::new(
            (xy - wz) * s.y,
            (1.0 - (xx + zz)) * s.y,
            (yz + wx) * s.y,
            0.0,
        ),
        Vec4::new(
            (xz + wy) * s.z,
            (yz - wx) * s.z,
            (1.0 - (xx + yy)) * s.z,
            0.0,
        ),
        t.extend(1.0),
    )
}

/// The local matrix of a local pose (WGSL `local_matrix`): `T * R * S`,
/// the rotation already unit.
#[must_use]
pub(crate) fn local_matrix(pose: GpuLocalPose) -> Mat4 {
    compose_trs(
        Vec3::from_slice(&pose.translation[..3]),
        Vec4::from_array(pose.rotation),
        Vec3::from_slice(&pose.scale[..3]),
    )
}

/// The local matrix of node `n` for instance `i` from the stored local
/// poses `locals` (WGSL `stored_local`, used by `hierarchy_main`).
#[must_use]
pub(crate) fn stored_local(tables: &SkinTables, locals: &[GpuLocalPose], i: u32, n: u32) -> Mat4 {
    local_matrix(locals[(i * tables.node_count() + n) as usize])
}

/// `global_matrix` for `hierarchy_main` (WGSL `stored_global`): node
/// `n`'s and its ancestors' locals read from `locals` ([`stored_local`]).
#[must_use]
pub(crate) fn stored_global(
    tables: &SkinTables,
    locals: &[GpuLocalPose],
    globals: &[Mat4],
    i: u32,
    n: u32,
    previous: Mat4,
) -> Mat4 {
    let local = stored_local(tables, locals, i, n);
    ancestors_times(tables, globals, i, n, local, previous, |p| {
        stored_local(tables, locals, i, p)
    })
}

/// The walk `global_matrix` and [`stored_global`] share (the shader
/// writes it in each): `local` times the local matrices of node `n`'s
/// ancestors with an index `>= n` (`local_of(a)`), times the global of the
/// first ancestor `p` with a smaller index (`previous` when `p` is
/// `n - 1`, else `globals[i * node_count + p]`), if any.
pub(crate) fn ancestors_times(
    tables: &SkinTables,
    globals: &[Mat4],
    i: u32,
    n: u32,
    local: Mat4,
    previous: Mat4,
    local_of: impl Fn(u32) -> Mat4,
) -> Mat4 {
    let base = (i * tables.node_count()) as usize;
    let mut m = local;
    let mut p = node_at(tables, n).parent;
    let mut step = 0u32;
    while step < tables.node_count() && p >= n as i32 {
        m = affine_mul_affine(local_of(p as u32), m);
        p = node_at(tables, p as u32).parent;
        step += 1;
    }
    if p >= 0 && p + 1 == n as i32 {
        m = affine_mul_affine(previous, m);
    } else if p >= 0 && p < n as i32 {
        m = affine_mul_affine(globals[base + p as usize], m);
    }
    m
}

/// Inverse of an affine matrix (WGSL `affine_inverse`); the identity when
/// the 3x3 part is singular.
#[must_use]
pub(crate) fn affine_inverse(m: Mat4) -> Mat4 {
    let a = m.x_axis.truncate();
    let b = m.y_axis.truncate();
    let c = m.z_axis.truncate();
    let r0 = cross(b, c);
    let r1 = cross(c, a);
    let r2 = cross(a, b);
    let det = dot3(a, r0);
    if det == 0.0 {
        return IDENTITY;
    }
    let inv_det = 1.0 / det;
    let i0 = r0 * inv_det;
    let i1 = r1 * inv_det;
    let i2 = r2 * inv_det;
    let inv = [
        Vec3::new(i0.x, i1.x, i2.x),
        Vec3::new(i0.y, i1.y, i2.y),
        Vec3::new(i0.z, i1.z, i2.z),
    ];
    let p = m.w_axis.truncate();
    let t = -(inv[0] * p.x + inv[1] * p.y + inv[2] * p.z);
    Mat4::from_cols(
        inv[0].extend(0.0),
        inv[1].extend(0.0),
        inv[2].extend(0.0),
        t.extend(1.0),
    )
}

/// `mesh_node_inverse` for `hierarchy_main` (WGSL
/// `stored_mesh_inverse`): the locals read from `locals`
/// ([`stored_local`]).
#[must_use]
pub(crate) fn stored_mesh_inverse(
    tables: &SkinTables,
    locals: &[GpuLocalPose],
    i: u32,
    node: i32,
) -> Mat4 {
    if node < 0 {
        return IDENTITY;
    }
    let mut m = stored_local(tables, locals, i, node as u32);
    let mut p = node_at(tables, node as u32).parent;
    let mut step = 0u32;
    while step < tables.node_count() && p >= 0 {
        m = affine_mul_affine(stored_local(tables, locals, i, p as u32), m);
        p = node_at(tables, p as u32).parent;
        step += 1;
    }
    affine_inverse(m)
}

/// Joint matrix of joint slot `j` (WGSL `joint_matrix`): `mesh_inverse *
/// global * inverse_bind`, where `global` is the joint node's global and
/// `mesh_inverse` the inverse of the global of the joint's mesh node (the
/// identity when it has none).
#[must_use]
pub(crate) fn joint_matrix(tables: &SkinTables, j: u32, mesh_inverse: Mat4, global: Mat4) -> Mat4 {
    // The shader's overrides MESH_INVERSES_IDENTITY (no product with it)
    // and INVERSE_BINDS_AFFINE.
    let mut m = global;
    if !tables.mesh_inverses_are_identity() {
        m = affine_mul_affine(mesh_inverse, global);
    }
    if tables.inverse_binds_are_affine() {
        return affine_mul_affine(m, inverse_bind(tables, j));
    }
    affine_mul(m, inverse_bind(tables, j))
}

/// Inverse bind matrix of joint slot `j` (WGSL `inverse_bind`, which reads
/// the first [`UNIFORM_HEAD`](crate::layout::UNIFORM_HEAD)
/// from a uniform copy, the same values).
#[must_use]
pub(crate) fn inverse_bind(tables: &SkinTables, j: u32) -> Mat4 {
    Mat4::from_cols_array(&tables.inverse_binds()[j as usize])
}

/// Step 3 (WGSL `joints_from_globals`): the joint matrices of instance
/// `i`'s slots `first..` from the globals written by the walk, the mesh
/// node's inverse computed once per run of slots with the same mesh node.
pub(crate) fn joints_from_globals(
    tables: &SkinTables,
    globals: &[Mat4],
    i: u32,
    first: u32,
    joint_matrices: &mut [Mat4],
) {
    let base = (i * tables.node_count()) as usize;
    let out = (i * tables.joint_count()) as usize;
    let mut mesh_node = -1;
    let mut inverse = IDENTITY;
    for j in first..tables.joint_count() {
        let joint = joint_at(tables, j);
        if joint.mesh_node != mesh_node {
            mesh_node = joint.mesh_node;
            inverse = IDENTITY;
            if mesh_node >= 0 {
                inverse = affine_inverse(globals[base + mesh_node as usize]);
            }
        }
        joint_matrices[out + j as usize] =
            joint_matrix(tables, j, inverse, globals[base + joint.node as usize]);
    }
}

/// One invocation of WGSL `hierarchy_main` (the staged strategy's second
/// pass, and the mixer's), for instance `i`: `skin_main`'s three steps
/// with every local read from the stored local poses `locals` where
/// `skin_main` computes it ([`stored_mesh_inverse`], [`stored_local`],
/// [`stored_global`]).
pub(crate) fn hierarchy_main(
    tables: &SkinTables,
    locals: &[GpuLocalPose],
    i: u32,
    globals: &mut [Mat4],
    joint_matrices: &mut [Mat4],
) {
    walk(
        tables,
        i,
        |node| stored_mesh_inverse(tables, locals, i, node),
        |n| stored_local(tables, locals, i, n),
        |globals, n, previous| stored_global(tables, locals, globals, i, n, previous),
        globals,
        joint_matrices,
    );
}

/// The three steps of `skin_main` and `hierarchy_main` for instance `i`,
/// given where the locals come from: `mesh_inverse(node)` (step 1),
/// `local(n)` (a chain's nodes, parents first) and `global(globals, n,
/// previous)` (any node order: `global_matrix` or [`stored_global`]).
pub(crate) fn walk(
    tables: &SkinTables,
    i: u32,
    mesh_inverse: impl Fn(i32) -> Mat4,
    local: impl Fn(u32) -> Mat4,
    global: impl Fn(&[Mat4], u32, Mat4) -> Mat4,
    globals: &mut [Mat4],
    joint_matrices: &mut [Mat4],
) {
    let params = tables.params(0);
    let base = (i * tables.node_count()) as usize;
    let out = (i * tables.joint_count()) as usize;
    let fused = params.skin_count <= MAX_FUSED_SKINS;
    // Step 1: mesh-node inverses (no iteration unless fused).
    let mut inverses = [IDENTITY; MAX_FUSED_SKINS as usize];
    for s in 0..if fused { params.skin_count } else { 0 } {
        inverses[s as usize] = mesh_inverse(params.mesh_nodes[s as usize]);
    }
    // Step 2: locals, globals and (fused) joint matrices. With parents
    // first, chain by chain (`GpuNode::chain`): a chain's first node
    // multiplies its parent's global (none for a root), each node after it
    // the global before it; the same products as global_matrix.
    let node_count = tables.node_count();
    let joints = |n: u32, global: Mat4, joint_matrices: &mut [Mat4]| {
        let mut j = if fused {
            node_at(tables, n).first_joint
        } else {
            -1
        };
        let mut step = 0u32;
        while step < tables.joint_count() && j >= 0 {
            let joint = joint_at(tables, j as u32);
            joint_matrices[out + j as usize] =
                joint_matrix(tables, j as u32, inverses[joint.skin as usize], global);
            j = joint.next_joint;
            step += 1;
        }
    };
    if tables.parents_first() {
        let mut n = 0u32;
        let mut step = 0u32;
        while step < node_count && n < node_count {
            let head = node_at(tables, n);
            let mut g = local(n);
            if head.parent >= 0 {
                g = affine_mul_affine(globals[base + head.parent as usize], g);
            }
            let end = (n + head.chain.max(1)).min(node_count);
            loop {
                globals[base + n as usize] = g;
                joints(n, g, joint_matrices);
                n += 1;
                if n >= end {
                    break;
                }
                g = affine_mul_affine(g, local(n));
            }
            step += 1;
        }
    } else {
        let mut previous = IDENTITY;
        for n in 0..node_count {
            previous = global(globals, n, previous);
            globals[base + n as usize] = previous;
            joints(n, previous, joint_matrices);
        }
    }
    // Step 3: joint matrices of rigs with more skins (no iteration when
    // fused).
    let first = if fused { tables.joint_count() } else { 0 };
    joints_from_globals(tables, globals, i, first, joint_matrices);
}

// The fused kernels' twins (`skin_main` and the functions only it
// calls): what the crate's tests and its CPU executor (`cpu::exec`) run
// for `skin_main` and `skin_nodes_main`; the library's own reference
// (`pose_resolved`) is the staged chain.
#[cfg(test)]
use crate::cpu::pose::local_pose;

#[cfg(test)]
/// The local matrix of node `n` for instance `i`, whose clip is `clip`,
/// from the pose stage's [`local_pose`] (WGSL `posed_local`, used by the
/// fused kernels).
#[must_use]
pub(crate) fn posed_local(tables: &SkinTables, samples: &[f32], i: u32, clip: u32, n: u32) -> Mat4 {
    local_matrix(local_pose(tables, samples, i, clip, n))
}

#[cfg(test)]
/// The global matrix of node `n` for instance `i` (WGSL `global_matrix`),
/// given its local matrix `local`, the globals of this instance's nodes
/// `0..n` in `globals` (`instance * node_count + node`) and node `n - 1`'s
/// in `previous`: `global[p] * L(a_k) * ... * L(a_1) * L(n)`, where
/// `a_1..` are `n`'s ancestors up to the first one, `p`, with a smaller
/// index (the parent, when the table lists parents first). The locals of
/// ancestors with an index `>= n` are recomputed ([`posed_local`]).
#[allow(clippy::too_many_arguments, reason = "the WGSL function's arguments")]
#[must_use]
pub(crate) fn global_matrix(
    tables: &SkinTables,
    samples: &[f32],
    globals: &[Mat4],
    i: u32,
    clip: u32,
    n: u32,
    local: Mat4,
    previous: Mat4,
) -> Mat4 {
    ancestors_times(tables, globals, i, n, local, previous, |p| {
        posed_local(tables, samples, i, clip, p)
    })
}

#[cfg(test)]
/// The global of node `n` for instance `i` computed on its own (WGSL
/// `mesh_global`): the product of the locals of `n` and its ancestors,
/// root first, multiplied from `n` upwards.
#[must_use]
pub(crate) fn mesh_global(tables: &SkinTables, samples: &[f32], i: u32, clip: u32, n: u32) -> Mat4 {
    let mut m = posed_local(tables, samples, i, clip, n);
    let mut p = node_at(tables, n).parent;
    let mut step = 0u32;
    while step < tables.node_count() && p >= 0 {
        m = affine_mul_affine(posed_local(tables, samples, i, clip, p as u32), m);
        p = node_at(tables, p as u32).parent;
        step += 1;
    }
    m
}

#[cfg(test)]
/// Inverse of mesh node `node`'s global for instance `i` (WGSL
/// `mesh_node_inverse`); the identity for -1 (a skin without mesh node).
#[must_use]
pub(crate) fn mesh_node_inverse(
    tables: &SkinTables,
    samples: &[f32],
    i: u32,
    clip: u32,
    node: i32,
) -> Mat4 {
    if node < 0 {
        return IDENTITY;
    }
    affine_inverse(mesh_global(tables, samples, i, clip, node as u32))
}

#[cfg(test)]
/// One invocation of WGSL `skin_main` (the per-instance strategy, the pose
/// stage fused in), for instance `i`. With at most [`MAX_FUSED_SKINS`]
/// skins: each skin's mesh-node inverse first ([`mesh_node_inverse`]), then
/// the nodes in index order (chain by chain when every parent comes before
/// its children: [`GpuNode::chain`](crate::layout::GpuNode::chain), else
/// through [`global_matrix`]), each local computed where it is used
/// ([`posed_local`]), each global written to `globals` and, right after
/// it, the joint matrices of the slots whose joint node it is (from the
/// global in hand). With more skins: the walk writes the globals only,
/// then [`joints_from_globals`].
pub(crate) fn skin_main(
    tables: &SkinTables,
    samples: &[f32],
    instance_clips: &[u32],
    i: u32,
    globals: &mut [Mat4],
    joint_matrices: &mut [Mat4],
) {
    let clip = instance_clips[i as usize];
    walk(
        tables,
        i,
        |node| mesh_node_inverse(tables, samples, i, clip, node),
        |n| posed_local(tables, samples, i, clip, n),
        |globals, n, previous| {
            let local = posed_local(tables, samples, i, clip, n);
            global_matrix(tables, samples, globals, i, clip, n, local, previous)
        },
        globals,
        joint_matrices,
    );
}

/// `samples` padded with zeros to `instances * output_stride` floats.
pub(crate) fn padded<'a>(
    tables: &SkinTables,
    samples: &'a [f32],
    instances: usize,
) -> std::borrow::Cow<'a, [f32]> {
    let needed = instances * tables.output_stride() as usize;
    if samples.len() < needed {
        let mut v = samples.to_vec();
        v.resize(needed, 0.0);
        std::borrow::Cow::Owned(v)
    } else {
        std::borrow::Cow::Borrowed(samples)
    }
}

/// Every invocation of `morph_main` for `instance_clips.len()` instances.
pub(crate) fn morph_weights(
    tables: &SkinTables,
    samples: &[f32],
    instance_clips: &[u32],
) -> Vec<f32> {
    let count = instance_clips.len() as u32;
    let mut morph_weights = vec![0.0; (count * tables.morph_stride()) as usize];
    for index in 0..count * tables.mesh_count() {
        morph_main(tables, samples, instance_clips, index, &mut morph_weights);
    }
    morph_weights
}

/// The staged chain, the reference every strategy is compared with, for
/// every instance, from the sampler's output `samples`
/// (`instance_clips.len() * output_stride` floats) and each instance's clip:
/// `pose_main` and `morph_main` for every invocation, then
/// `hierarchy_main` for every instance. A short `samples` is read as if
/// padded with zeros; an instance whose clip is out of range gets the rest
/// pose and default weights (as on the GPU).
#[must_use]
pub(crate) fn pose_resolved(
    tables: &SkinTables,
    samples: &[f32],
    instance_clips: &[u32],
) -> SkinOutput {
    let samples = padded(tables, samples, instance_clips.len());
    let count = instance_clips.len() as u32;
    let nodes = tables.node_count();
    let mut locals = vec![GpuLocalPose::zeroed(); (count * nodes) as usize];
    for index in 0..count * nodes {
        pose_main(tables, &samples, instance_clips, index, &mut locals);
    }
    let morph_weights = morph_weights(tables, &samples, instance_clips);
    with_hierarchy(tables, count, locals, morph_weights, Vec::new())
}

/// A chain's output: `locals`, `morph_weights` and `properties` as given,
/// with the globals and joint matrices that [`hierarchy_main`] computes
/// from `locals` for each of `count` instances (or a mixer's characters).
pub(crate) fn with_hierarchy(
    tables: &SkinTables,
    count: u32,
    locals: Vec<GpuLocalPose>,
    morph_weights: Vec<f32>,
    properties: Vec<f32>,
) -> SkinOutput {
    let mut globals = vec![IDENTITY; locals.len()];
    let mut joints = vec![IDENTITY; (count * tables.joint_count()) as usize];
    for i in 0..count {
        hierarchy_main(tables, &locals, i, &mut globals, &mut joints);
    }
    SkinOutput {
        locals,
        globals,
        joints,
        morph_weights,
        properties,
    }
}
