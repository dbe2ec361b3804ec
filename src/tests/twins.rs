//! Test-only pieces of the twin: references the tests compare the
//! implementation with, and views of the tables that only tests need.

use glam::Vec4;

use crate::cpu::mix::{mix_with_samples, quat_conj, quat_mix, Blend};
use crate::cpu::quat::quat_mul;
use crate::cpu::skin::SkinOutput;
use crate::error::Result;
use crate::model::library::AnimationLibrary;
use crate::model::mix::{Action, Mask};
use crate::model::rig::Rig;
use crate::tables::blocks::Part;
use crate::tables::rig::SkinTables;

/// One skin's joint matrices for one instance, in the skin's joint order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SkinJoints {
    /// The skin's index.
    pub skin: u32,
    /// Its mesh node (lowest-index node using it), if any.
    pub node: Option<u32>,
    /// Column-major joint matrices.
    pub joints: Vec<[f32; 16]>,
}

/// What the tests inspect of [`SkinTables`].
pub(crate) trait TestSkinTables: Sized {
    /// Binds `library` to `rig` and builds the tables of the result.
    fn new(rig: &Rig, library: &AnimationLibrary) -> Result<Self>;
    /// First joint slot of each skin.
    fn skin_offsets(&self) -> &[u32];
    /// Each skin's mesh node (lowest-index node using it).
    fn skin_nodes(&self) -> &[Option<u32>];
    /// Splits one instance's block of joint matrices per skin.
    fn split_joints(&self, block: &[[f32; 16]]) -> Vec<SkinJoints>;
}

impl TestSkinTables for SkinTables {
    /// Binds `library` to `rig` ([`AnimationLibrary::bind`]) and builds the
    /// tables of the result (`SkinTables::of`).
    ///
    /// # Errors
    /// Those of [`AnimationLibrary::bind`] and `SkinTables::of`.
    fn new(rig: &Rig, library: &AnimationLibrary) -> Result<Self> {
        SkinTables::of(&library.bind(rig)?)
    }

    /// First joint slot of each skin.
    fn skin_offsets(&self) -> &[u32] {
        &self.skin_offsets
    }

    /// Each skin's mesh node (lowest-index node using it).
    fn skin_nodes(&self) -> &[Option<u32>] {
        &self.skin_nodes
    }

    /// Splits one instance's block of joint matrices
    /// (`joint_count` matrices) per skin. Missing matrices (a short block)
    /// are left out.
    fn split_joints(&self, block: &[[f32; 16]]) -> Vec<SkinJoints> {
        let mut out = Vec::with_capacity(self.skin_offsets().len());
        for (s, &start) in self.skin_offsets().iter().enumerate() {
            let end = self
                .skin_offsets
                .get(s + 1)
                .copied()
                .unwrap_or(self.joints().len() as u32);
            let joints = block
                .get(start as usize..(end as usize).min(block.len()))
                .unwrap_or(&[])
                .to_vec();
            out.push(SkinJoints {
                skin: s as u32,
                node: self.skin_nodes()[s],
                joints,
            });
        }
        out
    }
}

/// Rule 3 for a rotation: `add = quat_mix(add, add * conj(r) * v, w)`.
/// The shader has no function of its own for it: `blend_rotation`, which
/// it uses, equals this for an additive action (tested).
#[must_use]
pub(crate) fn add_quat(b: Blend, v: Vec4, r: Vec4, w: f32) -> Blend {
    let mut out = b;
    let delta = quat_mul(quat_conj(r), v);
    out.add = quat_mix(b.add, quat_mul(b.add, delta), w);
    out.added = true;
    out
}

/// `mix_with_samples` without the sampled rows.
pub(crate) fn mix(
    tables: &SkinTables,
    library: &AnimationLibrary,
    masks: &[Mask],
    actions: &[Action],
    counts: &[u32],
) -> Result<SkinOutput> {
    Ok(mix_with_samples(tables, library, masks, actions, counts)?.0)
}

/// Group `group` over every clip, without a window.
pub(crate) fn whole_part(group: u32) -> Part {
    Part {
        group,
        clip_begin: 0,
        clip_end: u32::MAX,
        head_first: 0,
    }
}
