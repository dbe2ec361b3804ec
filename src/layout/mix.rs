//! The mixer's side of the layout: its action struct and constants, and
//! the bindings of `mix.wgsl`.

use std::mem::size_of;

use bytemuck::{Pod, Zeroable};

use super::{binding, Binding, BindingKind, POSE_BINDINGS};

/// One action of a character in the mixer's action table (WGSL
/// `MixAction`, `shaders/mix.wgsl`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub(crate) struct GpuMixAction {
    /// The sampler row (instance slot of the sampler's table) holding the
    /// action's sampled values.
    pub(crate) row: u32,
    /// Additive actions: the row of the action's clip sampled at its
    /// reference time; [`NO_ROW`] for a normal action.
    pub(crate) reference_row: u32,
    /// The row's clip.
    pub(crate) clip: u32,
    /// The action's mask, [`NO_MASK`] for none.
    pub(crate) mask: u32,
    /// The action's weight (finite, `>= 0`).
    pub(crate) weight: f32,
    /// How it blends: [`BLEND_MIX`], [`BLEND_ADDITIVE`] or
    /// [`BLEND_OVERRIDE`].
    pub(crate) blend: u32,
}

/// [`GpuMixAction::blend`] of a normal action (WGSL `BLEND_MIX`).
pub(crate) const BLEND_MIX: u32 = 0;
/// [`GpuMixAction::blend`] of an additive action (WGSL `BLEND_ADDITIVE`).
pub(crate) const BLEND_ADDITIVE: u32 = 1;
/// [`GpuMixAction::blend`] of an override action (WGSL `BLEND_OVERRIDE`).
pub(crate) const BLEND_OVERRIDE: u32 = 2;

/// [`GpuMixAction::reference_row`] of a normal (not additive) action
/// (WGSL `NO_ROW`).
pub(crate) const NO_ROW: u32 = u32::MAX;
/// [`GpuMixAction::mask`] of an action without a mask (WGSL `NO_MASK`).
pub(crate) const NO_MASK: u32 = u32::MAX;
/// The hard maximum of actions per character (WGSL `MAX_ACTIONS`), the
/// model's.
pub(crate) use crate::model::mix::MAX_ACTIONS;

const _: () = assert!(std::mem::size_of::<GpuMixAction>() == 24);

/// The bindings declared by `shaders/mix.wgsl`, group 0, numbered after
/// [`SKIN_BINDINGS`](super::SKIN_BINDINGS). The mix module, built on pose.wgsl, has
/// [`POSE_BINDINGS`] and these: [`MIX_MODULE_BINDINGS`].
pub(crate) const MIX_BINDINGS: [Binding; 7] = [
    binding(
        18,
        "mix_actions",
        BindingKind::StorageRead,
        size_of::<GpuMixAction>(),
    ),
    binding(19, "characters", BindingKind::StorageRead, 8),
    binding(20, "masks", BindingKind::StorageRead, 4),
    binding(21, "pointer_channels", BindingKind::StorageRead, 4),
    binding(22, "pointer_targets", BindingKind::StorageRead, 16),
    binding(23, "pointer_rest", BindingKind::StorageRead, 4),
    binding(24, "properties", BindingKind::StorageReadWrite, 4),
];

/// Every binding of the mix module (pose.wgsl's, then mix.wgsl's).
pub(crate) const MIX_MODULE_BINDINGS: [Binding; POSE_BINDINGS.len() + MIX_BINDINGS.len()] = {
    let mut out = [POSE_BINDINGS[0]; POSE_BINDINGS.len() + MIX_BINDINGS.len()];
    let mut k = 0;
    while k < POSE_BINDINGS.len() {
        out[k] = POSE_BINDINGS[k];
        k += 1;
    }
    while k < out.len() {
        out[k] = MIX_BINDINGS[k - POSE_BINDINGS.len()];
        k += 1;
    }
    out
};
