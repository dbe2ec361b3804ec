//! [`TrackError`]: what is wrong with one track.

use crate::kinds::{Interpolation, PointerType, Property, QUAT_UNIT_TOLERANCE};

/// What is wrong with one track. Wrapped in [`Error::InvalidTrack`](super::Error::InvalidTrack), which
/// adds the clip and track that it belongs to.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TrackError {
    /// The track has no keys at all.
    #[error("track has no keys")]
    NoKeys,
    /// A key time is NaN or infinite.
    #[error("key {key}: time {time} is not finite")]
    TimeNotFinite {
        /// Index of the key.
        key: usize,
        /// The offending time.
        time: f32,
    },
    /// Key times are not strictly increasing.
    #[error("key {key}: time {time} is not greater than the previous key's time {previous}")]
    TimesNotIncreasing {
        /// Index of the key whose time is not greater than the one before.
        key: usize,
        /// Time of key `key - 1`.
        previous: f32,
        /// Time of key `key`.
        time: f32,
    },
    /// The number of values does not match the key count (x3 for CUBICSPLINE)
    /// times the width.
    #[error("expected {expected} values ({keys} keys x {per_key} elements x width {width}), found {found}")]
    ValueCountMismatch {
        /// Number of keys.
        keys: usize,
        /// Value elements per key: 1, or 3 for CUBICSPLINE.
        per_key: usize,
        /// Components per element.
        width: u32,
        /// Expected number of `f32`s.
        expected: usize,
        /// Number of `f32`s found.
        found: usize,
    },
    /// CUBICSPLINE needs at least two keys (glTF 2.0, 3.11).
    #[error("CUBICSPLINE needs at least 2 keys, found {keys}")]
    CubicSplineTooFewKeys {
        /// Number of keys found.
        keys: usize,
    },
    /// A value component is NaN or infinite.
    #[error("key {key}: value component {component} is not finite ({value})")]
    ValueNotFinite {
        /// Index of the key.
        key: usize,
        /// Index of the component inside the key's values.
        component: usize,
        /// The offending value.
        value: f32,
    },
    /// A rotation key (or CUBICSPLINE rotation value element) has zero length.
    #[error("key {key}: rotation quaternion has zero length")]
    ZeroQuaternion {
        /// Index of the key.
        key: usize,
    },
    /// A rotation key's length is further than
    /// [`QUAT_UNIT_TOLERANCE`] from 1 (keys closer
    /// than that are normalized when the library is built).
    #[error("key {key}: rotation quaternion has length {length}, not within {tolerance} of 1", tolerance = QUAT_UNIT_TOLERANCE)]
    QuaternionNotUnit {
        /// Index of the key.
        key: usize,
        /// Its length.
        length: f32,
    },
    /// A [`Property::Pointer`] track without a `PointerTarget`.
    #[error("a pointer track has no pointer target")]
    PointerMissing,
    /// A node-property track carries a `PointerTarget`.
    #[error("a {property:?} track carries the pointer target {pointer:?}")]
    PointerOnNodeProperty {
        /// The track's property.
        property: Property,
        /// The pointer it carries.
        pointer: String,
    },
    /// A pointer target's rest value does not have the target's width, or
    /// is not finite.
    #[error("pointer {pointer:?}: rest value has {found} numbers, expected {width} finite ones")]
    BadPointerRest {
        /// The pointer.
        pointer: String,
        /// Numbers given.
        found: usize,
        /// The target's width.
        width: u32,
    },
    /// An `int` or `bool` target is interpolated with something else than
    /// STEP.
    #[error("pointer {pointer:?}: {} targets need STEP interpolation, not {}", ty.as_str(), interpolation.as_gltf_str())]
    DiscreteNotStep {
        /// The pointer.
        pointer: String,
        /// Its type.
        ty: PointerType,
        /// The interpolation given.
        interpolation: Interpolation,
    },
    /// A key value of a `bool` target is not 0 or 1, or of an `int` target
    /// not an integer of magnitude at most 2^24.
    #[error("value {key}: {value} is not a valid {}", ty.as_str())]
    BadDiscreteValue {
        /// Index of the value in `values`.
        key: usize,
        /// The target's type.
        ty: PointerType,
        /// The value.
        value: f32,
    },
    /// Two tracks of one clip animate the same pointer (glTF: a property is
    /// targeted at most once per animation).
    #[error("pointer {pointer:?} is already animated by track {first}")]
    DuplicatePointer {
        /// The pointer.
        pointer: String,
        /// The track that animates it first.
        first: usize,
    },
    /// A pointer is animated with a different type in another clip of the
    /// library (each pointer has one output slot, of one type; its rest
    /// value is the first track's).
    #[error("pointer {pointer:?} is a {} here but a {} in clip {clip}", ty.as_str(), first.as_str())]
    PointerTypeConflict {
        /// The pointer.
        pointer: String,
        /// Its type in this track.
        ty: PointerType,
        /// Its type where the library met it first.
        first: PointerType,
        /// The clip where the library met it first.
        clip: usize,
    },
    /// The width does not fit the property (3 for translation and scale, 4
    /// for rotation, at least 1 for weights, the target type's for pointers).
    #[error("{property:?} cannot have width {width}")]
    BadWidth {
        /// The track's property.
        property: Property,
        /// The width given.
        width: u32,
    },
}
