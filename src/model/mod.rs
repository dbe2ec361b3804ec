//! The model: everything that describes an animation and what it plays
//! on, with no device in it. Clips and their tracks
//! ([`Clip`](crate::Clip), [`Track`](crate::Track)), the validated and
//! flattened [`AnimationLibrary`](crate::AnimationLibrary), rigs
//! ([`Rig`](crate::Rig)),
//! instances, actions and masks. Nothing here names a `wgpu` type: the
//! model is built, checked and kept (and survives a lost device) without
//! an adapter; `tests/model_layer.rs` checks that no file of this module
//! mentions `wgpu`.

pub(crate) mod binding;
pub(crate) mod crowd;
pub(crate) mod instance;
pub(crate) mod library;
pub(crate) mod mix;
pub(crate) mod poses;
pub(crate) mod retarget;
pub(crate) mod rig;
pub(crate) mod target;
pub(crate) mod track;

pub(crate) use binding::BoundLibrary;
pub(crate) use poses::Poses;
#[cfg(feature = "gltf")]
pub(crate) use target::{NodeName, SourceId};
