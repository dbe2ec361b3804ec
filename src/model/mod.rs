//! The model: everything that describes an animation and what it plays
//! on, with no device in it. Clips and their tracks ([`Clip`], [`Track`]),
//! the validated and flattened [`AnimationLibrary`], rigs ([`Rig`]),
//! instances, actions and masks. Nothing here names a `wgpu` type: the
//! model is built, checked and kept (and survives a lost device) without
//! an adapter; `tests/model_layer.rs` checks that no file of this module
//! mentions `wgpu`.

pub mod binding;
pub mod compressed;
pub(crate) mod instance;
pub(crate) mod library;
pub mod mix;
pub(crate) mod poses;
pub mod rig;
pub(crate) mod target;
pub(crate) mod track;

pub use binding::{
    BindError, BindOptions, BindReport, BoundLibrary, ClipReport, Unbound, UnboundTrack,
};
pub use instance::Instance;
#[doc(hidden)]
pub use instance::{resolve_instances, resolve_instances_into};
pub use library::{AnimationLibrary, PointerOutput};
pub use mix::{Action, Mask, MaskId, MixError, MixerDesc, MAX_ACTIONS};
pub use poses::{OutputLayout, Part, Poses, Transform};
pub use rig::{NodeTransform, Rig, RigBuilder};
pub use target::{NodeName, SourceId};
pub use track::{
    normalize_rotation_keys, Clip, Interpolation, PointerTarget, PointerType, Property, Track,
    TrackError, ValueKind, WrapMode, MAX_EXACT_INT, QUAT_RENORMALIZE_EPSILON, QUAT_UNIT_TOLERANCE,
};
