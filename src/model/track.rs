//! Host-side animation data: [`Track`], [`Clip`], their enums, and the
//! validation that every track passes before it reaches a GPU buffer.

use crate::error::TrackError;
use std::sync::Arc;

use crate::error::Error;

use crate::kinds::{Interpolation, PointerType, Property, ValueKind, QUAT_UNIT_TOLERANCE};
use crate::model::target::{NodeName, SourceId};

/// The largest magnitude of an `int` pointer value: integers up to 2^24
/// are exact in `f32`, the sampler's storage.
pub(crate) const MAX_EXACT_INT: f32 = 16_777_216.0;

/// Rotation keys whose length is within this of 1 are already unit as far
/// as `f32` goes and are kept bit for bit, so that a time on such a key
/// returns exactly the stored value.
pub(crate) const QUAT_RENORMALIZE_EPSILON: f32 = 1e-6;

/// Normalizes the value elements (not CUBICSPLINE tangents) of a rotation
/// track's flat `values` whose length differs from 1 by more than
/// [`QUAT_RENORMALIZE_EPSILON`]; others are kept bit for bit. Does nothing
/// for other properties. Zero-length keys are left as they are (validation
/// refuses them).
pub(crate) fn normalize_rotation_keys(
    property: Property,
    interpolation: Interpolation,
    values: &mut [f32],
) {
    if property != Property::Rotation {
        return;
    }
    let per_key = interpolation.elements_per_key();
    for (e, q) in values.chunks_exact_mut(4).enumerate() {
        if per_key == 3 && e % 3 != 1 {
            continue;
        }
        // Length in f64 so the decision and the result do not depend on
        // f32 summation order.
        let len = q
            .iter()
            .map(|&c| f64::from(c) * f64::from(c))
            .sum::<f64>()
            .sqrt();
        if len > 0.0 && (len - 1.0).abs() > f64::from(QUAT_RENORMALIZE_EPSILON) {
            for c in q.iter_mut() {
                *c = (f64::from(*c) / len) as f32;
            }
        }
    }
}

/// A property outside the node hierarchy that [`Property::Pointer`]
/// tracks animate: host data only (the sampler sees its width and
/// [`ValueKind`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PointerTarget {
    /// The JSON pointer (RFC 6901) into the glTF document, e.g.
    /// `/materials/0/pbrMetallicRoughness/baseColorFactor`; the library
    /// gives each distinct pointer one output slot.
    pub pointer: String,
    /// Its type.
    pub ty: PointerType,
    /// Its value where an instance's clip does not animate it (the
    /// document's value, or the spec's default): `ty.width()` numbers.
    pub rest: Vec<f32>,
}

impl PointerTarget {
    /// A target from its pointer, type and rest value.
    #[must_use]
    pub fn new(pointer: impl Into<String>, ty: PointerType, rest: Vec<f32>) -> Self {
        PointerTarget {
            pointer: pointer.into(),
            ty,
            rest,
        }
    }
}

/// How an instance's playback time maps to clip time.
///
/// The mapping is done on the host in `f64` and the
/// shader receives clip-local `f32` time, so that times far from zero stay
/// exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WrapMode {
    /// Times before 0 and after the clip's end are passed on unchanged and so
    /// hold the first and last keys.
    #[default]
    Clamp,
    /// Loops: time modulo the clip duration.
    Repeat,
    /// Plays forwards then backwards: period twice the clip duration.
    PingPong,
}

impl WrapMode {
    /// Maps playback `time` (seconds, f64) to clip-local time for a clip of
    /// length `duration` (its largest key time).
    ///
    /// - `Clamp`: `time`, saturated to the finite `f32` range so that huge
    ///   times stay finite (anything outside the keys clamps to the first or
    ///   last key anyway, wherever the keys start).
    /// - `Repeat`: `time - floor(time / duration) * duration`, in `[0, duration)`.
    /// - `PingPong`: `p = time mod 2 duration`; `p` if `p <= duration`, else
    ///   `2 duration - p`.
    ///
    /// When `duration <= 0` (every track has a single key at time 0 or
    /// before) `Repeat` and `PingPong` return 0. A non-finite `time` gives a
    /// non-finite result; the sampler refuses such times before calling this.
    #[must_use]
    pub(crate) fn clip_time(self, time: f64, duration: f32) -> f32 {
        let d = f64::from(duration);
        match self {
            WrapMode::Clamp => time.clamp(f64::from(f32::MIN), f64::from(f32::MAX)) as f32,
            WrapMode::Repeat => {
                if d <= 0.0 {
                    0.0
                } else {
                    // `+ 0.0` turns the -0.0 of an exact negative multiple
                    // (-2.5 mod 2.5) into 0.0.
                    (time.rem_euclid(d) + 0.0) as f32
                }
            }
            WrapMode::PingPong => {
                if d <= 0.0 {
                    0.0
                } else {
                    let p = time.rem_euclid(2.0 * d) + 0.0;
                    (if p <= d { p } else { 2.0 * d - p }) as f32
                }
            }
        }
    }
}

/// One animated property: of one node, or (with [`Property::Pointer`]) the
/// [`PointerTarget`] in `pointer`; key times and values.
///
/// `values` is flat: for key `k` and component `c`, the value is
/// `values[k * width + c]`; for CUBICSPLINE each key holds three elements
/// (in-tangent, value, out-tangent), so element `e` of key `k` is at
/// `values[(3 * k + e) * width + c]`, exactly like a glTF output accessor.
///
/// `times` is an [`Arc`] so that tracks sharing one glTF input accessor share
/// one allocation; the library stores such times once on the GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Track {
    /// The target node (glTF node index, or any id the caller chooses).
    pub node: u32,
    /// The animated property.
    pub property: Property,
    /// The interpolation mode.
    pub interpolation: Interpolation,
    /// Components per value element: 3, 4, 3, or the morph-target count.
    pub width: u32,
    /// Key times in seconds, strictly increasing.
    pub times: Arc<[f32]>,
    /// Key values, flat (see the type's documentation).
    pub values: Vec<f32>,
    /// The target of a [`Property::Pointer`] track; `None` for node
    /// properties.
    pub pointer: Option<Arc<PointerTarget>>,
    /// The target node by name, for binding to a rig of another file
    /// ([`AnimationLibrary::bind`](crate::AnimationLibrary::bind)): set by
    /// the glTF importer for every named node, `None` for an unnamed node
    /// and for tracks built in code unless set here.
    pub target: Option<Arc<NodeName>>,
}

impl Track {
    /// A track for a property of fixed width (translation, rotation, scale).
    /// For weights use [`Track::weights`]. Nothing is validated here; see
    /// [`Track::validate`].
    #[must_use]
    pub fn new(
        node: u32,
        property: Property,
        interpolation: Interpolation,
        times: impl Into<Arc<[f32]>>,
        values: Vec<f32>,
    ) -> Self {
        Track {
            node,
            property,
            interpolation,
            width: property.fixed_width().unwrap_or(1),
            times: times.into(),
            values,
            pointer: None,
            target: None,
        }
    }

    /// A morph-weights track with `targets` weights per key.
    #[must_use]
    pub fn weights(
        node: u32,
        targets: u32,
        interpolation: Interpolation,
        times: impl Into<Arc<[f32]>>,
        values: Vec<f32>,
    ) -> Self {
        Track {
            width: targets,
            ..Track::new(node, Property::Weights, interpolation, times, values)
        }
    }

    /// A track animating a [`PointerTarget`] ([`Property::Pointer`]), of
    /// the target type's width. `node` is set to 0 and not used.
    #[must_use]
    pub fn for_pointer(
        target: impl Into<Arc<PointerTarget>>,
        interpolation: Interpolation,
        times: impl Into<Arc<[f32]>>,
        values: Vec<f32>,
    ) -> Self {
        let target = target.into();
        Track {
            width: target.ty.width(),
            pointer: Some(target),
            ..Track::new(0, Property::Pointer, interpolation, times, values)
        }
    }

    /// The same track naming its target node, so that it binds by name
    /// to rigs of other files.
    #[must_use]
    pub(crate) fn with_target(self, target: impl Into<Arc<NodeName>>) -> Self {
        Track {
            target: Some(target.into()),
            ..self
        }
    }

    /// How the sampler interpolates this track's values: a rotation,
    /// the pointer type's kind, or a vector.
    #[must_use]
    pub(crate) fn value_kind(&self) -> ValueKind {
        match (self.property, &self.pointer) {
            (Property::Rotation, _) => ValueKind::Rotation,
            (Property::Pointer, Some(p)) => p.ty.value_kind(),
            _ => ValueKind::Vector,
        }
    }

    /// Number of keys (`times.len()`).
    pub(crate) fn key_count(&self) -> usize {
        self.times.len()
    }

    /// The largest key time (the track's end), or `None` without keys.
    #[must_use]
    pub(crate) fn end_time(&self) -> Option<f32> {
        self.times.last().copied()
    }

    /// Checks the glTF rules: at least one key; finite, strictly increasing
    /// times; `key_count * elements_per_key * width` finite values; at least
    /// two keys for CUBICSPLINE; a width that fits the property; rotation
    /// value elements of non-zero length within [`QUAT_UNIT_TOLERANCE`] of 1.
    ///
    /// # Errors
    /// The first rule broken, with the key it was found at.
    pub fn validate(&self) -> Result<(), TrackError> {
        self.check_pointer()?;
        self.check_width()?;
        self.check_times()?;
        let keys = self.times.len();
        if self.interpolation == Interpolation::CubicSpline && keys < 2 {
            return Err(TrackError::CubicSplineTooFewKeys { keys });
        }
        self.check_value_count()?;
        self.check_values_finite()?;
        self.check_discrete_values()?;
        self.check_rotations()
    }

    /// A pointer track has a target of its width, with a finite rest
    /// value of that width, and is STEP when discrete; a node track has
    /// no pointer.
    fn check_pointer(&self) -> Result<(), TrackError> {
        match (self.property, &self.pointer) {
            (Property::Pointer, None) => Err(TrackError::PointerMissing),
            (Property::Pointer, Some(target)) => {
                if self.width != target.ty.width() {
                    return Err(TrackError::BadWidth {
                        property: self.property,
                        width: self.width,
                    });
                }
                if target.rest.len() != self.width as usize
                    || target.rest.iter().any(|v| !v.is_finite())
                {
                    return Err(TrackError::BadPointerRest {
                        pointer: target.pointer.clone(),
                        found: target.rest.len(),
                        width: self.width,
                    });
                }
                if target.ty.value_kind() == ValueKind::Discrete
                    && self.interpolation != Interpolation::Step
                {
                    return Err(TrackError::DiscreteNotStep {
                        pointer: target.pointer.clone(),
                        ty: target.ty,
                        interpolation: self.interpolation,
                    });
                }
                Ok(())
            }
            (property, Some(target)) => Err(TrackError::PointerOnNodeProperty {
                property,
                pointer: target.pointer.clone(),
            }),
            (_, None) => Ok(()),
        }
    }

    /// The width is the property's own, or at least 1 where the property
    /// has none.
    fn check_width(&self) -> Result<(), TrackError> {
        let fits = match self.property.fixed_width() {
            Some(w) => w == self.width,
            None => self.width != 0,
        };
        if !fits {
            return Err(TrackError::BadWidth {
                property: self.property,
                width: self.width,
            });
        }
        Ok(())
    }

    /// At least one key; times finite and strictly increasing.
    fn check_times(&self) -> Result<(), TrackError> {
        if self.times.is_empty() {
            return Err(TrackError::NoKeys);
        }
        for (key, &time) in self.times.iter().enumerate() {
            if !time.is_finite() {
                return Err(TrackError::TimeNotFinite { key, time });
            }
            if key > 0 && time <= self.times[key - 1] {
                return Err(TrackError::TimesNotIncreasing {
                    key,
                    previous: self.times[key - 1],
                    time,
                });
            }
        }
        Ok(())
    }

    /// `key_count * elements_per_key * width` values.
    fn check_value_count(&self) -> Result<(), TrackError> {
        let keys = self.times.len();
        let per_key = self.interpolation.elements_per_key();
        let expected = keys
            .checked_mul(per_key)
            .and_then(|n| n.checked_mul(self.width as usize))
            .unwrap_or(usize::MAX);
        if self.values.len() != expected {
            return Err(TrackError::ValueCountMismatch {
                keys,
                per_key,
                width: self.width,
                expected,
                found: self.values.len(),
            });
        }
        Ok(())
    }

    /// Every value finite.
    fn check_values_finite(&self) -> Result<(), TrackError> {
        let per_key_floats = self.interpolation.elements_per_key() * self.width as usize;
        for (i, &value) in self.values.iter().enumerate() {
            if !value.is_finite() {
                return Err(TrackError::ValueNotFinite {
                    key: i / per_key_floats,
                    component: i % per_key_floats,
                    value,
                });
            }
        }
        Ok(())
    }

    /// A `bool` pointer track's values are 0 or 1, an `int` one's whole
    /// numbers within [`MAX_EXACT_INT`].
    fn check_discrete_values(&self) -> Result<(), TrackError> {
        let Some(target) = self
            .pointer
            .as_ref()
            .filter(|_| self.property == Property::Pointer)
        else {
            return Ok(());
        };
        let allowed = |v: f32| match target.ty {
            PointerType::Bool => v == 0.0 || v == 1.0,
            PointerType::Int => v.fract() == 0.0 && v.abs() <= MAX_EXACT_INT,
            _ => true,
        };
        if let Some((key, &value)) = self.values.iter().enumerate().find(|(_, &v)| !allowed(v)) {
            return Err(TrackError::BadDiscreteValue {
                key,
                ty: target.ty,
                value,
            });
        }
        Ok(())
    }

    /// A rotation track's value elements (not CUBICSPLINE tangents) have a
    /// non-zero length within [`QUAT_UNIT_TOLERANCE`] of 1.
    fn check_rotations(&self) -> Result<(), TrackError> {
        if self.property != Property::Rotation {
            return Ok(());
        }
        let per_key = self.interpolation.elements_per_key();
        for (e, q) in self.values.chunks_exact(4).enumerate() {
            // Tangents of a CUBICSPLINE rotation may legitimately be zero.
            let is_value = per_key == 1 || e % 3 == 1;
            let len2: f32 = q.iter().map(|c| c * c).sum();
            if is_value && len2 == 0.0 {
                return Err(TrackError::ZeroQuaternion { key: e / per_key });
            }
            let length = len2.sqrt();
            if is_value && (length - 1.0).abs() > QUAT_UNIT_TOLERANCE {
                return Err(TrackError::QuaternionNotUnit {
                    key: e / per_key,
                    length,
                });
            }
        }
        Ok(())
    }
}

/// A named set of tracks played together (a glTF animation).
///
/// Equality (`==`) compares the name and the tracks, not where the clip
/// came from ([`Clip::source`]).
#[derive(Debug, Clone, Default)]
pub struct Clip {
    /// The clip's name (for error messages and tools).
    pub name: String,
    /// Its tracks; their order is the order of their outputs.
    pub tracks: Vec<Track>,
    /// The file the clip was read from (set by the glTF importer; `None`
    /// for clips built in code). On the rig of the same file its tracks
    /// bind by node index, exactly as the file says.
    pub source: Option<SourceId>,
    /// Named instants of the clip (footsteps, sound cues), by time: given
    /// in code (pushed here, in any order) or read by the glTF importer from
    /// the animation's `extras` (`{"markers": [{"name": ..., "time":
    /// ...}]}`). The playback layer reports them when a playhead crosses
    /// them (`playback`).
    pub markers: Vec<Marker>,
}

/// A named instant of a clip (a footstep, a sound cue).
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    /// The clip time, in seconds (finite, `>= 0`).
    pub time: f64,
    /// The name reported with each crossing.
    pub name: Arc<str>,
}

impl PartialEq for Clip {
    fn eq(&self, other: &Clip) -> bool {
        self.name == other.name && self.tracks == other.tracks
    }
}

impl Clip {
    /// A clip from a name and tracks.
    #[must_use]
    pub fn new(name: impl Into<String>, tracks: Vec<Track>) -> Self {
        Clip {
            name: name.into(),
            tracks,
            source: None,
            markers: Vec::new(),
        }
    }

    /// The same clip, marked as read from `source`.
    #[must_use]
    pub(crate) fn with_source(self, source: SourceId) -> Self {
        Clip {
            source: Some(source),
            ..self
        }
    }

    /// The clip's duration: the largest key time of its tracks (0 when it
    /// has no keys, or when every key is at or before 0).
    #[must_use]
    pub fn duration(&self) -> f32 {
        self.tracks
            .iter()
            .filter_map(Track::end_time)
            .fold(0.0, f32::max)
    }

    /// Validates every track, and that no two tracks animate the same
    /// pointer; `index` is the clip's index, used in errors.
    ///
    /// # Errors
    /// [`Error::EmptyClip`] or the first [`Error::InvalidTrack`].
    pub(crate) fn validate(&self, index: usize) -> Result<(), Error> {
        if self.tracks.is_empty() {
            return Err(Error::EmptyClip {
                clip: index,
                clip_name: self.name.clone(),
            });
        }
        let mut pointers: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (t, track) in self.tracks.iter().enumerate() {
            let invalid = |kind| Error::InvalidTrack {
                clip: index,
                clip_name: self.name.clone(),
                track: t,
                kind,
            };
            track.validate().map_err(invalid)?;
            if let Some(target) = &track.pointer {
                if let Some(&first) = pointers.get(target.pointer.as_str()) {
                    return Err(invalid(TrackError::DuplicatePointer {
                        pointer: target.pointer.clone(),
                        first,
                    }));
                }
                pointers.insert(&target.pointer, t);
            }
        }
        if let Some(m) = self
            .markers
            .iter()
            .find(|m| !(m.time.is_finite() && m.time >= 0.0))
        {
            return Err(Error::BadMarker {
                clip: index,
                clip_name: self.name.clone(),
                marker: m.name.to_string(),
                time: m.time,
            });
        }
        Ok(())
    }
}
