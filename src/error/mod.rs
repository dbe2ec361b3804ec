//! The umbrella [`Error`]: every refusal names what is wrong and where.
//! Every error type of the crate is here: each domain's in a file of its
//! own ([`TrackError`], [`MixError`], [`RigError`], [`BindError`], the
//! import's [`ImportErrorKind`], [`PlaybackError`], [`CompressError`]),
//! and the readback ring's [`RingError`]
//! and the skin stage's [`FitError`] below. `Error` wraps them with the
//! location. They name only the plain enums of `crate::kinds`, which
//! import nothing of the crate.

// Each domain's errors; the public paths are the crate root's and the
// domain modules' re-exports.
pub(crate) mod bind;
pub(crate) mod compress;
#[cfg(feature = "gltf")]
pub(crate) mod import;
pub(crate) mod mix;
pub(crate) mod playback;
pub(crate) mod rig;
pub(crate) mod track;

pub(crate) use bind::{BindError, Unbound};
pub(crate) use compress::CompressError;
#[cfg(feature = "gltf")]
pub(crate) use import::import_location;
#[cfg(feature = "gltf")]
pub(crate) use import::{ImportErrorKind, PointerProblem, UriEscape};
pub(crate) use mix::MixError;
pub(crate) use playback::PlaybackError;
pub(crate) use rig::RigError;
pub(crate) use track::TrackError;

/// Every error the crate returns.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A track of a clip breaks the glTF rules.
    #[error("clip {clip} ({clip_name:?}), track {track}: {kind}")]
    InvalidTrack {
        /// Index of the clip in the library.
        clip: usize,
        /// Name of the clip.
        clip_name: String,
        /// Index of the track inside the clip.
        track: usize,
        /// What is wrong.
        kind: TrackError,
    },
    /// Compressed data is invalid, or a library cannot be compressed
    /// (`track` is `None` for what is not about one track).
    #[error("clip {clip}{}: {kind}", .track.map(|t| format!(", track {t}")).unwrap_or_default())]
    Compressed {
        /// Index of the clip in the library (0 for what is about the
        /// whole library).
        clip: usize,
        /// Index of the track inside the clip.
        track: Option<usize>,
        /// What is wrong.
        kind: CompressError,
    },
    /// A clip has no tracks.
    #[error("clip {clip} ({clip_name:?}) has no tracks")]
    EmptyClip {
        /// Index of the clip in the library.
        clip: usize,
        /// Name of the clip.
        clip_name: String,
    },
    /// A clip's marker is at a time that is NaN, infinite or negative.
    #[error(
        "clip {clip} ({clip_name:?}): marker {marker:?} at {time} is not at a finite time >= 0"
    )]
    BadMarker {
        /// Index of the clip in the library.
        clip: usize,
        /// Name of the clip.
        clip_name: String,
        /// The marker's name.
        marker: String,
        /// Its time.
        time: f64,
    },
    /// The library holds no clip.
    #[error("the animation library holds no clip")]
    EmptyLibrary,
    /// Two frames compared (`Poses::compare`,
    /// `Poses::compare_instances`)
    /// differ in shape: (instances, nodes, joints, morph weights).
    #[error(
        "the frames differ in shape: {left} vs {right} (instances, nodes, joints, morph weights)"
    )]
    PosesDiffer {
        /// This frame's shape (the instances chosen, where they are).
        left: String,
        /// The other's.
        right: String,
    },
    /// An instance compared
    /// (`Poses::compare_instances`) is
    /// not in the frame.
    #[error("instance {instance} is not in the frame ({instance_count} instances)")]
    NoSuchInstance {
        /// The instance asked for.
        instance: u32,
        /// The frame's instances.
        instance_count: u32,
    },
    /// An instance names a clip the library does not have.
    #[error("instance {instance}: clip index {clip} is out of range (the library has {clip_count} clips)")]
    ClipOutOfRange {
        /// Index of the instance.
        instance: usize,
        /// The clip index it names.
        clip: u32,
        /// Number of clips in the library.
        clip_count: usize,
    },
    /// An instance's playback time is NaN or infinite.
    #[error("instance {instance}: playback time {time} is not finite")]
    InstanceTimeNotFinite {
        /// Index of the instance.
        instance: usize,
        /// The offending time.
        time: f64,
    },
    /// More instances than the sampler was created for.
    #[error("{requested} instances requested, but the sampler was created for at most {capacity}")]
    TooManyInstances {
        /// Number of instances passed.
        requested: usize,
        /// The sampler's capacity.
        capacity: u32,
    },
    /// The mixer refused its description or a frame's actions (naming the
    /// character and the action).
    #[error(transparent)]
    Mix(#[from] MixError),
    /// The playback layer refused a command or a step (naming the
    /// character and the command).
    #[error(transparent)]
    Playback(#[from] PlaybackError),
    /// A crowd's frame entry (an instance or a character), or a call
    /// about a character, names a model that is not one of the crowd's
    /// (an id of another `Crowd`, or of a removed model).
    #[error("crowd {what}{}: model {model} is not a model of this crowd (removed, or of another crowd)", at(*.entry))]
    UnknownModel {
        /// `"instance"` or `"character"`: what the call takes.
        what: &'static str,
        /// Index of the entry in the frame; `None` outside a frame.
        entry: Option<usize>,
        /// The model index it names.
        model: usize,
    },
    /// A crowd's frame entry, or a call, names a character the crowd does
    /// not hold: removed (`Crowd::remove_character`),
    /// or of another crowd.
    #[error("crowd {what}{}: the character of model {model} at slot {slot} is not in this crowd (removed, or of another crowd)", at(*.entry))]
    UnknownCharacter {
        /// `"instance"` or `"character"`: what the call takes.
        what: &'static str,
        /// Index of the entry in the frame; `None` outside a frame.
        entry: Option<usize>,
        /// The character's model index.
        model: usize,
        /// The character's slot.
        slot: u32,
    },
    /// Two entries of a crowd's frame name the same character.
    #[error("crowd {what} {entry}: the character of model {model} at slot {slot} is already {what} {first} of this frame")]
    CharacterTwice {
        /// `"instance"` or `"character"`: what the call takes.
        what: &'static str,
        /// Index of the second entry in the frame.
        entry: usize,
        /// Index of the first.
        first: usize,
        /// The character's model index.
        model: usize,
        /// The character's slot.
        slot: u32,
    },
    /// A crowd instance plays a clip of another model than its own.
    #[error("crowd instance {instance}: an instance of model {instance_model} ({instance_model_name:?}) is given a clip of model {clip_model} ({clip_model_name:?})")]
    ClipOfOtherModel {
        /// Index of the instance in the crowd's table.
        instance: usize,
        /// The instance's model (its index in the crowd).
        instance_model: usize,
        /// The instance's model's name.
        instance_model_name: String,
        /// The model the clip belongs to (its index in its crowd).
        clip_model: usize,
        /// That model's name (`"a model of another crowd"` when the clip
        /// is of another crowd).
        clip_model_name: String,
    },
    /// A character of a crowd's mixed frame is of a model added without
    /// a mixer.
    #[error("crowd character {character}: model {model:?} was added without a mixer (Crowd::add_mixed_model), so it takes instances, not actions")]
    ModelWithoutMixer {
        /// Index of the character in the frame.
        character: usize,
        /// The model's name.
        model: String,
    },
    /// A crowd frame holds more instances (characters) of a model than
    /// the model was added for, counting the characters that hold its
    /// slots (`Crowd::add_character`); or
    /// a character is added to a full model.
    #[error("{} of model {model} ({name:?}) requested, but it was added for at most {capacity}", count(*.requested as u64, what))]
    ModelFull {
        /// The model's index in the crowd.
        model: usize,
        /// The model's name.
        name: String,
        /// `"instance"` or `"character"`: what the call takes.
        what: &'static str,
        /// Slots the frame (or the new character) needs.
        requested: usize,
        /// The model's capacity.
        capacity: u32,
    },
    /// A crowd already has a model of this name.
    #[error("the crowd already has a model named {name:?}")]
    DuplicateModel {
        /// The name.
        name: String,
    },
    /// A size exceeds a limit of the device (or of 32-bit indexing).
    #[error("{what} needs {needed} bytes, past the device limit {limit_name} = {limit}")]
    LimitExceeded {
        /// What is too big.
        what: &'static str,
        /// Bytes needed.
        needed: u64,
        /// The limit's name in `wgpu::Limits`.
        limit_name: &'static str,
        /// The limit's value.
        limit: u64,
    },
    /// The device was created with a limit lower than the crate's passes
    /// need; request it with `required_limits`.
    #[error("the device's {limit_name} is {limit}, the crate needs at least {needed} (request the device with keyframe_gpu::required_limits)")]
    DeviceLimit {
        /// The limit's name in `wgpu::Limits`.
        limit_name: &'static str,
        /// The least value the crate needs.
        needed: u64,
        /// The device's value.
        limit: u64,
    },
    /// A table of the key search needs more texture rows than the device's
    /// `max_texture_dimension_2d` (`gpu::KeyTextures`).
    #[error(
        "{what} needs {rows} texture rows of {width} texels, past the device limit max_texture_dimension_2d = {limit}"
    )]
    TextureRowsExceeded {
        /// Which table.
        what: &'static str,
        /// Rows needed.
        rows: u64,
        /// Texels per row.
        width: u32,
        /// The limit's value.
        limit: u32,
    },
    /// wgpu reported an error for a call of this crate (validation,
    /// internal), caught with an error scope.
    #[error("GPU error during {during}: {message}")]
    Gpu {
        /// The operation that caused it.
        during: &'static str,
        /// wgpu's message.
        message: String,
    },
    /// The device ran out of memory creating this crate's resources (wgpu's
    /// out-of-memory error, caught with an error scope). The object was not
    /// created; the device stays usable, and a smaller capacity or library
    /// may fit.
    #[error("out of GPU memory during {during}: {message}")]
    OutOfMemory {
        /// The operation that caused it.
        during: &'static str,
        /// wgpu's message.
        message: String,
    },
    /// The device is lost (`Device::destroy`, a driver reset, a removed
    /// GPU): the call did nothing, and every later call on an object made
    /// on that device returns this error. The device-free model (the
    /// library, the rig, the `BoundLibrary`, a
    /// `MixerDesc`) is untouched: make a new device and
    /// build the objects again from it (`docs/USAGE.md`, "Faults").
    #[error("the GPU device is lost (seen by {during}): rebuild on a new device")]
    DeviceLost {
        /// The call that saw it.
        during: &'static str,
    },
    /// Mapping a readback buffer failed, or waiting for the device did.
    #[error("GPU readback failed: {0}")]
    Readback(String),
    /// A `ReadbackRing` is full or misused.
    #[error("readback ring: {0}")]
    Ring(RingError),
    /// A rig is invalid.
    #[error("rig: {0}")]
    Rig(RigError),
    /// A library cannot be bound to a rig
    /// (`AnimationLibrary::bind`).
    #[error("binding: {0}")]
    Bind(BindError),
    /// The skin stage was given a sampler it was not built for.
    #[error("library on rig: {0}")]
    Fit(FitError),
    /// A glTF file could not be imported: what is wrong, and where (the
    /// animation, channel, skin and accessor, as far as they are known).
    #[cfg(feature = "gltf")]
    #[cfg_attr(docsrs, doc(cfg(feature = "gltf")))]
    #[error("glTF import{}: {kind}", import_location(*.animation, *.channel, *.skin, *.accessor))]
    Import {
        /// Index of the glTF animation, when the problem is inside one.
        animation: Option<usize>,
        /// Index of the channel inside that animation.
        channel: Option<usize>,
        /// Index of the skin, when the problem is in one (its inverse bind
        /// matrices).
        skin: Option<usize>,
        /// Index of the accessor being read.
        accessor: Option<usize>,
        /// What is wrong.
        kind: ImportErrorKind,
    },
}

/// Shorthand for `Result<T, keyframe_gpu::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A misuse of a `ReadbackRing`, or a ring with every slot in flight.
/// Wrapped in [`Error::Ring`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RingError {
    /// Every slot holds a frame that was not read yet; nothing was recorded.
    /// Read or `wait` for the oldest frame first.
    #[error("every one of the {slots} readback slots is in flight (oldest: frame {oldest_frame})")]
    Full {
        /// Slots of the ring.
        slots: usize,
        /// The frame that must be read to free a slot.
        oldest_frame: u64,
    },
    /// A ring needs between 1 and `MAX_SLOTS` slots.
    #[error("a readback ring needs 1 to {max} slots, {requested} requested")]
    SlotCount {
        /// Slots asked for.
        requested: usize,
        /// `MAX_SLOTS`.
        max: usize,
    },
    /// A copy larger than a slot, not a multiple of 4 bytes, longer than its
    /// source, or from a buffer without `COPY_SRC` usage.
    #[error("cannot copy {bytes} bytes into a readback slot of {slot_bytes} bytes: {reason}")]
    BadCopy {
        /// Bytes asked for.
        bytes: u64,
        /// Bytes of one slot.
        slot_bytes: u64,
        /// What is wrong.
        reason: &'static str,
    },
    /// `map` or `discard` of a
    /// ticket whose frame is not recorded-and-unmapped (mapped already, read
    /// or discarded).
    #[error("frame {frame} is not a recorded, unmapped frame of this ring")]
    NotRecorded {
        /// The ticket's frame.
        frame: u64,
    },
    /// `wait` for the oldest frame, which was recorded
    /// but never mapped: it could never complete.
    #[error("frame {frame} was recorded but not mapped; call map after submitting it")]
    NotMapped {
        /// The oldest frame.
        frame: u64,
    },
    /// `discard` of a frame that is not the newest.
    #[error("only the newest frame can be discarded, frame {frame} is not")]
    NotNewest {
        /// The ticket's frame.
        frame: u64,
    },
}

impl From<RingError> for Error {
    fn from(e: RingError) -> Self {
        Error::Ring(e)
    }
}

/// A skin stage given a sampler it was not built for. (A library that
/// does not fit a rig is refused when it is bound:
/// [`BindError`].)
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FitError {
    /// Skin tables built for one library were given a sampler of another.
    #[error("skin tables were built for a library with output stride {tables_stride} and {tables_clips} clips, the sampler's has {sampler_stride} and {sampler_clips}")]
    LibraryMismatch {
        /// The tables' output stride.
        tables_stride: u32,
        /// The tables' clip count.
        tables_clips: usize,
        /// The sampler library's output stride.
        sampler_stride: u32,
        /// The sampler library's clip count.
        sampler_clips: usize,
    },
    /// A skinner was given another sampler than the one it was built
    /// from (it reads that sampler's buffers).
    #[error("the skinner was given another sampler than the one it was built from")]
    OtherSampler,
}

impl From<FitError> for Error {
    fn from(e: FitError) -> Self {
        Error::Fit(e)
    }
}

/// `" N"` for the index of a frame's entry, nothing outside a frame.
fn at(entry: Option<usize>) -> String {
    entry.map(|e| format!(" {e}")).unwrap_or_default()
}

/// `n` as a `u32` index, or [`Error::LimitExceeded`] naming `what` (`n`
/// elements of 4 bytes).
pub(crate) fn index_u32(n: usize, what: &'static str) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::LimitExceeded {
        what,
        needed: n as u64 * 4,
        limit_name: "u32 indexing",
        limit: u64::from(u32::MAX),
    })
}

/// `n` followed by `noun`, in the plural unless `n` is 1 ("1 clip",
/// "3 clips"): messages agree in number. `noun` takes an `s` in the
/// plural (every noun the messages count does).
pub(crate) fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
