//! The CPU twin of the shaders. Its entry points are [`sample()`] (every
//! instance's sampled values), [`poses`] (a frame's [`Poses`], as
//! [`Animator::read_back`](crate::Animator::read_back) gives them) and
//! [`mixed_poses`] (a mixer's frame).
//!
//! Inside (crate-private), one module per shader stage, named like the
//! stage (`shaders/sample.wgsl` -> `sample`,
//! `shaders/pose.wgsl` -> `pose`, `shaders/skin.wgsl` -> `skin`,
//! `shaders/mix.wgsl` -> `mix`; `shaders/decode.wgsl`, the compressed
//! tracks' reads, -> `decode`). Each
//! function mirrors the WGSL function of the same name: the same `f32`
//! operations in the same order, the same constants, the same flat arrays.
//! It is the reference every GPU result is compared with; the tests check
//! it in turn against values computed by hand from the formulas of the
//! contract (`docs/ARCHITECTURE.md`).

// The per-stage twins, function by function: implementation, reached by
// the crate's tests and (through `internals`) its tools.
pub(crate) mod decode;
pub(crate) mod mix;
pub(crate) mod pose;
pub(crate) mod sample;
pub(crate) mod skin;

pub use sample::sample;
pub(crate) use sample::sample_resolved;
#[cfg(test)]
pub(crate) use sample::*;

use crate::error::Result;
use crate::instance::{resolve_instances, Instance};
use crate::mix::{check_masks, Action, Mask};
use crate::model::poses::Flat;
use crate::model::{BoundLibrary, Poses};
use crate::rig::SkinTables;

/// The CPU reference of [`Animator::read_back`](crate::Animator::read_back):
/// samples `instances` of the bound library and poses its rig (the staged
/// pose, morph and hierarchy passes), in the same [`Poses`] as the GPU
/// gives.
///
/// # Errors
/// The instance errors of the sampler (clip out of range, time not
/// finite), naming the first bad instance.
pub fn poses(bound: &BoundLibrary, instances: &[Instance]) -> Result<Poses> {
    let tables = SkinTables::of(bound)?;
    let library = bound.library();
    let resolved = resolve_instances(library, instances)?;
    let mut samples = vec![0.0; resolved.len() * library.output_stride() as usize];
    sample_resolved(library, &resolved, &mut samples);
    let clips: Vec<u32> = resolved.iter().map(|r| r.clip).collect();
    let out = skin::pose_resolved(&tables, &samples, &clips);
    Ok(Poses::new(
        bound.rig(),
        &tables,
        library,
        Flat {
            instance_count: instances.len() as u32,
            samples,
            locals: out.locals,
            world: out.globals,
            joints: out.joints,
            morph_weights: out.morph_weights,
            properties: None,
        },
    ))
}

/// The CPU reference of a mixer's frame
/// ([`Animator::set_actions`](crate::Animator::set_actions), then
/// [`read_back`](crate::Animator::read_back)): `counts[c]` consecutive
/// actions are character `c`'s, blended by the mixer's rules with
/// `masks` (the [`MixerDesc`](crate::MixerDesc)'s), in the same [`Poses`]
/// as the GPU gives, one "instance" per character.
///
/// # Errors
/// [`Error::Mix`](crate::Error::Mix) for a mask of another rig or a
/// refused action, as the GPU mixer refuses it.
pub fn mixed_poses(
    bound: &BoundLibrary,
    masks: &[Mask],
    actions: &[Action],
    counts: &[u32],
) -> Result<Poses> {
    check_masks(bound.rig(), masks)?;
    let tables = SkinTables::of(bound)?;
    let library = bound.library();
    let (out, samples) = mix::mix_with_samples(&tables, library, masks, actions, counts)?;
    Ok(Poses::new(
        bound.rig(),
        &tables,
        library,
        Flat {
            instance_count: counts.len() as u32,
            samples,
            locals: out.locals,
            world: out.globals,
            joints: out.joints,
            morph_weights: out.morph_weights,
            properties: Some(out.properties),
        },
    ))
}
