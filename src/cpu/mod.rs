//! The CPU twin of the shaders. Its entry points are [`sample()`] (every
//! instance's sampled values), [`poses`] (a frame's [`Poses`], as
//! `Animator::read_back` gives them) and
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
// The CPU executor: a plan run through the twins, what the crate's tests
// compare the GPU executor with dispatch by dispatch.
#[cfg(test)]
pub(crate) mod exec;
pub(crate) mod mix;
pub(crate) mod playback;
pub(crate) mod pose;
pub(crate) mod quat;
pub(crate) mod sample;
pub(crate) mod skin;

pub(crate) use sample::sample_resolved;

use crate::error::Result;
use crate::model::crowd::{
    CrowdCharacter, CrowdInstance, CrowdModels, CrowdPoses, MixedFrame, ModelFrame, ModelSource,
    Placement,
};
use crate::model::instance::Instance;
use crate::model::library::AnimationLibrary;
use crate::model::mix::{check_masks, Action, Mask};
use crate::model::{BoundLibrary, Poses};
use crate::tables::instance::resolve_instances;
use crate::tables::library::LibraryTables;
use crate::tables::poses::Flat;
use crate::tables::rig::SkinTables;

/// Samples `instances` on the CPU into a new buffer with the GPU's output
/// layout (see [`AnimationLibrary`]); unwritten components are 0.
///
/// # Errors
/// The same instance errors as the GPU sampler: a clip index out of range,
/// a non-finite time.
pub fn sample(library: &AnimationLibrary, instances: &[Instance]) -> Result<Vec<f32>> {
    let resolved = resolve_instances(library, instances)?;
    let mut output = vec![0.0; resolved.len() * library.output_stride() as usize];
    sample_resolved(&*LibraryTables::cached(library)?, &resolved, &mut output);
    Ok(output)
}

/// The CPU reference of `Animator::read_back`:
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
    sample_resolved(&*LibraryTables::cached(library)?, &resolved, &mut samples);
    let clips: Vec<u32> = resolved.iter().map(|r| r.clip).collect();
    let out = skin::pose_resolved(&tables, &samples, &clips);
    Ok(crate::tables::poses::poses(
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
/// (`Animator::set_actions`, then
/// `read_back`): `counts[c]` consecutive
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
    Ok(crate::tables::poses::poses(
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

/// The CPU reference of a `Crowd`'s frame (`Crowd::set_instances`, then
/// `read_back`): `models` is the crowd's (`Crowd::models`), with its
/// characters; each model's instances, placed in its slots as the crowd
/// places them, posed as [`poses`] poses them (or only sampled, for a
/// model without a rig), in the same [`CrowdPoses`].
///
/// # Errors
/// Those of `Crowd::set_instances` that concern the frame (unknown model
/// or character, a clip of another model, clip out of range, time not
/// finite, a model given more than its free slots), naming the crowd
/// instance.
pub fn crowd_poses(models: &CrowdModels, instances: &[CrowdInstance]) -> Result<CrowdPoses> {
    let mut placement = Placement::default();
    placement.place_instances(models, instances)?;
    let mut out = Vec::with_capacity(models.models.len());
    let mut frame = ModelFrame::default();
    for (index, m) in models.models.iter().enumerate() {
        let Some(m) = m else {
            out.push(None);
            continue;
        };
        frame.fill_instances(&placement, index, instances);
        let table = &frame.instances;
        out.push(Some(match &m.source {
            ModelSource::Bound(bound) => poses(bound, table)?,
            ModelSource::Sampled(library) => {
                let samples = sample(library, table)?;
                Poses::unposed(library, table.len() as u32, samples)
            }
        }));
    }
    Ok(CrowdPoses {
        models: out,
        slots: placement.slots,
    })
}

/// The CPU reference of a `Crowd`'s mixed frame (`Crowd::set_actions`,
/// then `read_back`): `models` is the crowd's; each model with a mixer
/// blends its characters, placed in its slots as the crowd places them (a
/// character over its mixer's action limit dropping its lightest base
/// actions), as [`mixed_poses`] does with the model's masks; every other
/// model has no character.
///
/// # Errors
/// Those of `Crowd::set_actions`, naming
/// the crowd's character.
pub fn crowd_mixed_poses(
    models: &CrowdModels,
    characters: &[CrowdCharacter],
    actions: &[crate::model::mix::Action],
) -> Result<CrowdPoses> {
    let mut placement = Placement::default();
    placement.place_characters(models, characters, actions.len())?;
    let mut firsts = Vec::with_capacity(characters.len());
    MixedFrame::index(characters, &mut firsts);
    let given = MixedFrame {
        characters,
        actions,
        firsts: &firsts,
    };
    let mut out = Vec::with_capacity(models.models.len());
    let mut frame = ModelFrame::default();
    for (index, m) in models.models.iter().enumerate() {
        let Some(m) = m else {
            out.push(None);
            continue;
        };
        let p = match (&m.source, &m.mixer) {
            (ModelSource::Bound(bound), Some(desc)) => {
                let clips = m.library().clips().len();
                frame.fill_actions(&placement, index, &given, desc, clips)?;
                mixed_poses(bound, &desc.masks, &frame.actions, &frame.counts)
                    .map_err(|e| frame.rename(e))?
            }
            (ModelSource::Bound(bound), None) => poses(bound, &[])?,
            (ModelSource::Sampled(library), _) => Poses::unposed(library, 0, Vec::new()),
        };
        out.push(Some(p));
    }
    Ok(CrowdPoses {
        models: out,
        slots: placement.slots,
    })
}
