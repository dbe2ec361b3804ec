//! # keyframe-gpu
//!
//! Samples glTF 2.0 animations on the GPU. Key times and values are
//! uploaded once ([`AnimationLibrary`], [`GpuSampler::new`]); per frame only
//! a small instance table changes, and one compute dispatch samples every
//! track of every instance, each at its own time, with STEP, LINEAR (lerp,
//! shortest-path slerp with an nlerp fallback for rotations) or CUBICSPLINE.
//! The results stay in a storage buffer that a skinning pass can bind
//! directly; reading them back is optional.
//!
//! [`cpu`] is the CPU twin of the shader: the same functions, the same `f32`
//! arithmetic, the same output layout, so every GPU result can be checked
//! element by element ([`compare`]).
//!
//! ```no_run
//! use keyframe_gpu::{AnimationLibrary, Clip, GpuSampler, Instance, Interpolation, Property, Track};
//! # fn main() -> Result<(), keyframe_gpu::Error> {
//! # let h = keyframe_gpu::gpu::headless::request_device(keyframe_gpu::gpu::headless::AdapterChoice::Fallback)?;
//! # let (device, queue) = (&h.device, &h.queue);
//! let track = Track::new(0, Property::Translation, Interpolation::Linear,
//!     vec![0.0, 1.0], vec![0.0, 0.0, 0.0, 2.0, 4.0, 6.0]);
//! let library = AnimationLibrary::new(vec![Clip::new("move", vec![track])])?;
//! let mut sampler = GpuSampler::new(device, queue, &library, 1024)?;
//! sampler.set_instances(queue, &[Instance::new(0, 0.25)])?;
//! let mut encoder = device.create_command_encoder(&Default::default());
//! sampler.record(&mut encoder);
//! queue.submit([encoder.finish()]);
//! let out = sampler.read_back(device, queue)?; // [0.5, 1.0, 1.5]
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod compare;
pub mod cpu;
#[doc(hidden)]
pub use cpu::skin as cpu_skin;
mod error;
#[cfg(feature = "gltf")]
pub mod gltf;
pub mod gpu;
mod instance;
pub mod layout;
mod library;
pub mod rig;
mod track;

pub use error::{Error, Result, TrackError};
#[cfg(feature = "gltf")]
pub use gltf::ImportErrorKind;
pub use gpu::GpuSampler;
pub use instance::{resolve_instances, resolve_instances_into, Instance};
pub use library::AnimationLibrary;
pub use track::{
    normalize_rotation_keys, Clip, Interpolation, Property, Track, WrapMode,
    QUAT_RENORMALIZE_EPSILON, QUAT_UNIT_TOLERANCE,
};

/// The README's Rust examples, compiled as doctests so that they cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
