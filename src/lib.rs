//! # keyframe-gpu
//!
//! Samples glTF 2.0 animations on the GPU and poses skinned models with
//! them. Key times and values are uploaded once; per frame only a small
//! instance table (a clip and a time per instance) changes, and compute
//! passes sample every track of every instance with STEP, LINEAR (lerp;
//! shortest-path slerp with an nlerp fallback for rotations) or
//! CUBICSPLINE, then compute each instance's local pose, world transforms,
//! joint matrices and morph weights. The results stay in storage buffers
//! that your renderer binds directly; reading them back is optional. A CPU
//! twin of every shader ([`cpu`]) gives the same results, so any GPU
//! result can be checked element by element.
//!
//! ## What to call, in order
//!
//! 1. **The model** (no device). Load a character with
//!    [`Rig::from_document`] (any glTF file with nodes, feature `gltf`)
//!    and clips with [`gltf::load`] (an [`AnimationLibrary`]), from the
//!    same file or another; or build them in code ([`Track::new`],
//!    [`Clip::new`], [`AnimationLibrary::new`], [`Rig::builder`]).
//! 2. **Binding.** [`AnimationLibrary::bind`] resolves every track to a
//!    node of the rig: by index for the rig's own file, by node name (and
//!    name path where names repeat) for another, with a [`BindReport`] of
//!    what bound and what did not. Clips made on another skeleton (other
//!    bone names, rest orientations or proportions) are retargeted
//!    instead ([`AnimationLibrary::retarget`] through a [`BoneMap`]).
//!    Everything that poses takes the [`BoundLibrary`].
//! 3. **Device.** Request your device with [`required_limits`] and
//!    [`required_features`] (wgpu's defaults for downlevel devices allow too
//!    few storage buffers per stage), and those of [`optional_features`]
//!    the adapter has (faster paths where the device has them).
//! 4. **Once.** [`Animator::new`] uploads the bound library and builds the
//!    passes ([`Animator::with_mixer`] to blend actions).
//! 5. **Every frame.** [`Animator::set_instances`] with one [`Instance`]
//!    per character (clip, playback time, [`WrapMode`]), then
//!    [`Animator::record`] into your command encoder, before your render
//!    pass.
//! 6. **Draw.** Each of the rig's [`Rig::parts`] (every mesh node: its mesh,
//!    its skin or none, where its matrices and morph weights sit) from
//!    each chunk's buffers ([`Animator::chunks`], one unless the device's
//!    limits split the animator): [`AnimatorChunk::joint_matrix_buffer`],
//!    [`AnimatorChunk::world_matrix_buffer`] and
//!    [`AnimatorChunk::morph_weight_buffer`]. Optionally read a frame back
//!    as [`Poses`] ([`Animator::read_back`]; [`cpu::poses`] gives the same
//!    from the CPU twin), or every frame without stalling with
//!    [`ReadbackRing`]; time the passes with [`PassTimer`].
//!
//! ```no_run
//! use keyframe_gpu::{Animator, Instance, WrapMode};
//! # fn f(device: &wgpu::Device, queue: &wgpu::Queue) -> Result<(), keyframe_gpu::Error> {
//! let file = keyframe_gpu::gltf::load("Fox.glb")?;
//! let rig = keyframe_gpu::Rig::from_document(&file.document)?;
//! let bound = file.library.bind(&rig)?;
//! let mut animator = Animator::new(device, queue, &bound, 1_000)?;
//! let run = file.library.clip_by_name("Run").unwrap_or(0);
//!
//! // Every frame:
//! let instances: Vec<Instance> = (0..1_000)
//!     .map(|i| Instance::new(run, 0.016 * i as f64).with_wrap(WrapMode::Repeat))
//!     .collect();
//! animator.set_instances(queue, &instances)?;
//! let mut encoder = device.create_command_encoder(&Default::default());
//! animator.record(&mut encoder);
//! // ... your render pass draws rig.parts() from each chunk's buffers ...
//! queue.submit([encoder.finish()]);
//! # Ok(()) }
//! ```
//!
//! ## Blending: crossfades, layers, masks, additive clips
//!
//! [`Animator::with_mixer`] gives each character an ordered list of
//! [`Action`]s per frame instead of one clip: a clip, a time, a weight,
//! optionally a [`Mask`] (a factor per node), and normal, additive with a
//! reference time, or override (it replaces the pose under it on its
//! mask's nodes). [`Animator::set_actions`] takes one flat table and a count per
//! character; the mixer blends per node on the GPU by the rules of
//! three.js's `AnimationMixer` (`docs/USAGE.md`, "Blending"), and the
//! hierarchy and joint stages read the blended pose. Its CPU twin is
//! [`cpu::mixed_poses`].
//!
//! ## Several kinds of character
//!
//! A [`Crowd`] holds several models, each a library bound to a rig with
//! its own [`Animator`]: clips are named through their model
//! (`crowd.models().clip(model, name)` gives a [`ClipRef`]), each [`CrowdInstance`] names its
//! model, and a clip of one model given to an instance of another is
//! refused ([`Error::ClipOfOtherModel`]). Models bound to one library
//! share its upload. One [`Crowd::set_instances`] per frame for every
//! character (or, for models added with a mixer, one
//! [`Crowd::set_actions`] that blends each character's actions), one
//! [`Crowd::record`]; each model's buffers are drawn with its own meshes.
//! Models come, grow and go in place ([`Crowd::grow_model`],
//! [`Crowd::remove_model`]), and a character added with
//! [`Crowd::add_character`] keeps its slot while others come and go.
//! [`cpu::crowd_poses`] and [`cpu::crowd_mixed_poses`] are the crowd's
//! twins. An animator (and each model of a crowd) past what one chunk
//! holds on the device ([`plan::chunk_capacity`]) is split into chunks.
//!
//! ## Faults
//!
//! A lost device (a driver reset, `device.destroy()`) makes every
//! fallible call on the objects made on it return [`Error::DeviceLost`]
//! from the first call after the loss, in a frame loop that never waits
//! as in one that does: nothing waits forever and no readback passes an earlier frame off as
//! current; recording records nothing. Resources past the device's limits
//! or memory are refused with [`Error::LimitExceeded`] or
//! [`Error::OutOfMemory`] before anything is written. The model (the
//! library, the rig, the [`BoundLibrary`], a [`MixerDesc`]) holds no GPU
//! object: [`Animator`]'s "Device loss" example rebuilds from it on a new
//! device.
//!
//! ## The lower-level pieces
//!
//! An [`Animator`] without a rig ([`Animator::sampler_only`]) samples
//! tracks into an output buffer alone (layout on [`AnimationLibrary`]);
//! with a rig it runs the pose and skin passes on those samples. How each
//! is laid out on the device is chosen in one
//! place, [`plan`]: the reference plan on GPUs, a plan tuned for the CPU
//! fallback adapters (lavapipe, llvmpipe) on those. Every refusal is an
//! [`Error`] naming what is wrong and where. The repository's
//! `docs/ARCHITECTURE.md` describes the stages, the data each reads and
//! writes, and how the Rust/WGSL contract is enforced.
#![deny(missing_docs)]
// Error paths are linked explicitly (`[`Error::Gpu`](crate::Error::Gpu)`) so
// that a doc comment reads the same wherever `Error` is or is not imported;
// rustdoc calls the link redundant where it is.
#![allow(rustdoc::redundant_explicit_links)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod compress;
mod compressor;
pub mod cpu;
mod error;
#[cfg(feature = "gltf")]
#[cfg_attr(docsrs, doc(cfg(feature = "gltf")))]
pub mod gltf;
pub mod gpu;
pub(crate) mod kinds;
pub(crate) mod model;
pub mod plan;
pub mod playback;
pub(crate) mod tables;

// The API: the model, binding and results; the animator and the crowd;
// the plan; errors.
pub use error::{
    bind::{BindError, Unbound},
    mix::MixError,
    rig::RigError,
    track::TrackError,
    Error, FitError, Result,
};
#[cfg(feature = "gltf")]
#[cfg_attr(docsrs, doc(cfg(feature = "gltf")))]
pub use gltf::ImportErrorKind;
pub use gpu::{
    optional_features, required_features, required_limits, Animator, AnimatorChunk, Crowd,
    PassTimer, ReadbackRing,
};
pub use kinds::{
    Interpolation, PointerType, Property, SamplerPlan, ValueKind, QUAT_UNIT_TOLERANCE,
};
pub use model::{
    binding::{BindOptions, BindReport, BoundLibrary, ClipReport, UnboundTrack},
    crowd::{
        CharacterId, ClipRef, CrowdCharacter, CrowdInstance, CrowdModels, CrowdPoses, ModelId,
    },
    instance::Instance,
    library::{AnimationLibrary, PointerOutput},
    mix::{Action, Mask, MaskId, MixerDesc, MAX_ACTIONS},
    poses::{Comparison, Difference, OutputLayout, Part, Poses, Quantity, Transform},
    retarget::BoneMap,
    rig::{NodeTransform, Rig, RigBuilder, RigMesh, RigNode, RigSkin},
    target::{NodeName, SourceId},
    track::{Clip, Marker, PointerTarget, Track, WrapMode},
};
pub use plan::{DeviceProfile, Plan, SkinStrategy};

/// The implementation's pieces that the repository's examples and the
/// integration tests that cannot run inside the crate (those with a
/// counting global allocator) reach: hidden from the docs, not part of the
/// API, free to change in any release.
#[doc(hidden)]
pub mod internals {
    pub use crate::{
        cpu::sample::sample_resolved,
        gpu::key_textures::KeyTextures,
        layout::{
            rig::GpuSkinParams,
            sample::{GpuInstance, GpuParams, WORKGROUP_SIZE},
            shaders::PRELUDE_WGSL,
        },
        plan::schedule::dispatch_grid,
        tables::{instance::resolve_instances_into, library::LibraryTables, mix::Packer},
    };

    /// Records one stage of `crowd`'s passes into `pass`, so that the bench
    /// times the stages apart: 0 the playback passes, 1 every chunk's
    /// sampling, 2 every chunk's pose, mix and skin passes (`Crowd::record`
    /// records all three in this order); any other number records nothing.
    pub fn record_stage(crowd: &crate::Crowd, stage: usize, pass: &mut wgpu::ComputePass<'_>) {
        use crate::gpu::CrowdStage::{Playback, Posing, Sampling};
        if let Some(&stage) = [Playback, Sampling, Posing].get(stage) {
            crowd.record_stage(stage, pass);
        }
    }
}

pub(crate) mod layout;

// The tests that reach the implementation's pieces (the layout structs
// against naga's view of the shaders, the twin's per-stage functions, the
// skin stage) run inside the crate, where those stay private.
#[cfg(test)]
extern crate self as keyframe_gpu;
#[cfg(test)]
mod tests;

/// The README's Rust examples, compiled as doctests so that they cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
