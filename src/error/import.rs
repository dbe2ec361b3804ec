//! [`ImportErrorKind`]: what is wrong with a glTF file, and the location
//! [`Error::Import`](super::Error::Import) adds to its message.

use super::TrackError;
use crate::kinds::{Interpolation, PointerType};

/// Why a `KHR_animation_pointer` channel's pointer is refused: wrapped in
/// [`ImportErrorKind::Pointer`], which names the pointer, and
/// [`Error::Import`](super::Error::Import), which names the animation and channel.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PointerProblem {
    /// Not a JSON pointer (RFC 6901): no leading `/`, a `~` not followed
    /// by `0` or `1`, an array index with a leading zero.
    #[error("malformed JSON pointer: {0}")]
    Malformed(String),
    /// The pointer does not name a defined property of this document: an
    /// object that does not exist, or a property that is absent and has no
    /// default, or whose enclosing object is absent.
    #[error("does not resolve to a defined property: {0}")]
    Unresolved(String),
    /// The pointer names one component of a vector property (the Object
    /// Model resolves vectors only as a whole).
    #[error("names a single component of a vector property (animate the whole vector)")]
    VectorComponent,
    /// The pointer names something this crate does not animate (yet).
    #[error("not a property this importer supports")]
    Unsupported,
    /// The output accessor does not fit the property's type.
    #[error("a {} target needs {expected}, the output accessor is {found}", ty.as_str())]
    OutputType {
        /// The property's type.
        ty: PointerType,
        /// What it needs.
        expected: &'static str,
        /// What the accessor is.
        found: String,
    },
    /// An `int` or `bool` property with LINEAR or CUBICSPLINE interpolation.
    #[error("a {} target needs STEP interpolation, not {}", ty.as_str(), interpolation.as_gltf_str())]
    NotStep {
        /// The property's type.
        ty: PointerType,
        /// The sampler's interpolation.
        interpolation: Interpolation,
    },
    /// The same property is targeted by an earlier channel of the
    /// animation (with the same pointer, or a core channel on the same node
    /// property).
    #[error("the same property is already targeted by channel {first}")]
    Duplicate {
        /// The earlier channel.
        first: usize,
    },
    /// The channel sets `target.node`, which a pointer channel must not.
    #[error("a pointer channel must not set target.node (it sets {node})")]
    NodeSet {
        /// The node it names, as written.
        node: String,
    },
}

/// What is wrong with a glTF file. Wrapped in [`Error::Import`](super::Error::Import), which adds
/// the animation, channel, skin and accessor.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ImportErrorKind {
    /// A file could not be read.
    #[error("cannot read {path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The operating system's message.
        message: String,
    },
    /// The binary container (.glb) is malformed.
    #[error("malformed GLB: {0}")]
    Glb(String),
    /// The JSON is not valid glTF.
    #[error("invalid glTF JSON: {0}")]
    Json(String),
    /// The JSON does not pass the `gltf` crate's validation (indices out of
    /// range, missing required properties, ...), which
    /// `Rig::from_document` runs first.
    #[error("invalid glTF document: {reason}")]
    InvalidDocument {
        /// The validator's message.
        reason: String,
    },
    /// The file requires an extension this importer does not support.
    #[error("required extension {0:?} is not supported")]
    UnsupportedExtension(String),
    /// An animation's `extras.markers` is not a list of `{"name": string,
    /// "time": number >= 0}`.
    #[error("bad markers: {reason}")]
    BadMarkers {
        /// What is wrong.
        reason: String,
    },
    /// An index names an object the file does not have.
    #[error("{what} index {index} is out of range (the file has {count})")]
    IndexOutOfRange {
        /// The kind of object (`"accessor"`, `"bufferView"`, ...).
        what: &'static str,
        /// The index given.
        index: u64,
        /// How many such objects exist.
        count: usize,
    },
    /// A buffer's URI cannot be used (not base64, unsupported scheme, ...).
    #[error("buffer {buffer}: bad uri: {reason}")]
    BadUri {
        /// Index of the buffer.
        buffer: usize,
        /// Why.
        reason: String,
    },
    /// A buffer's URI names a file outside the asset root (see
    /// `LoadOptions`): refused before anything is
    /// read.
    #[error("buffer {buffer}: uri {uri:?} refused: {why}")]
    UnsafeUri {
        /// Index of the buffer.
        buffer: usize,
        /// The URI as the file writes it.
        uri: String,
        /// Why it is refused.
        why: UriEscape,
    },
    /// A buffer has no URI and there is no GLB binary chunk for it.
    #[error("buffer {buffer} has no uri and no GLB binary chunk")]
    MissingBuffer {
        /// Index of the buffer.
        buffer: usize,
    },
    /// A buffer holds fewer bytes than its `byteLength` declares.
    #[error("buffer {buffer} declares {declared} bytes but holds {actual}")]
    BufferTooShort {
        /// Index of the buffer.
        buffer: usize,
        /// Its `byteLength`.
        declared: u64,
        /// Bytes available.
        actual: u64,
    },
    /// A buffer view reaches past the end of its buffer.
    #[error(
        "bufferView {view} ends at byte {end}, past the end of buffer {buffer} ({length} bytes)"
    )]
    ViewOutOfRange {
        /// Index of the buffer view.
        view: usize,
        /// Index of its buffer.
        buffer: usize,
        /// One past its last byte.
        end: u64,
        /// The buffer's length.
        length: u64,
    },
    /// An accessor (or a sparse part of it) reaches past the end of its
    /// buffer view.
    #[error("{part} ends at byte {end}, past the end of bufferView {view} ({length} bytes)")]
    AccessorOutOfRange {
        /// `"accessor"`, `"sparse indices"` or `"sparse values"`.
        part: &'static str,
        /// Index of the buffer view.
        view: usize,
        /// One past the last byte read.
        end: u64,
        /// The view's length.
        length: u64,
    },
    /// A buffer view's `byteStride` is smaller than one element, or out of
    /// the range glTF allows (4 to 252, a multiple of 4).
    #[error(
        "byteStride {stride} of bufferView {view} does not fit elements of {element_size} bytes"
    )]
    BadStride {
        /// Index of the buffer view.
        view: usize,
        /// The stride given.
        stride: u64,
        /// Bytes per element of the accessor.
        element_size: u64,
    },
    /// A size computed from counts overflows, or passes the importer's limit
    /// on elements an accessor without buffer view may declare.
    #[error("{what} is too large ({count} elements, limit {limit})")]
    TooLarge {
        /// What.
        what: &'static str,
        /// Elements declared.
        count: u64,
        /// The limit.
        limit: u64,
    },
    /// An accessor has a type (SCALAR, VEC3, ...) the channel cannot use.
    #[error("accessor type is {found}, expected {expected}")]
    BadAccessorType {
        /// What the channel needs.
        expected: &'static str,
        /// What the accessor declares.
        found: String,
    },
    /// An accessor's component type is not allowed for its use.
    #[error("component type {found} (normalized: {normalized}) is not allowed for {usage}")]
    BadComponentType {
        /// Where the accessor is used (`"input"`, `"rotation output"`, ...).
        usage: &'static str,
        /// The component type, in glTF spelling (`"FLOAT"`, `"BYTE"`, ...).
        found: String,
        /// The accessor's `normalized` flag.
        normalized: bool,
    },
    /// A sparse accessor is inconsistent: more sparse entries than elements,
    /// indices not strictly increasing or out of range.
    #[error("sparse: {0}")]
    Sparse(String),
    /// A sampler's interpolation is not STEP, LINEAR or CUBICSPLINE.
    #[error("unknown interpolation")]
    UnknownInterpolation,
    /// A channel's target path is not translation, rotation, scale or weights.
    #[error("unknown target path")]
    UnknownPath,
    /// The output accessor's count does not match the input's.
    #[error("output has {output} elements, expected {expected} ({input} keys)")]
    CountMismatch {
        /// Input (key) count.
        input: u64,
        /// Output element count.
        output: u64,
        /// Expected output element count.
        expected: u64,
    },
    /// A weights channel targets a node without a mesh.
    #[error("weights channel targets node {node}, which has no mesh")]
    NodeWithoutMesh {
        /// The node.
        node: usize,
    },
    /// A weights channel's mesh has no morph targets, or its primitives and
    /// default weights disagree on their count.
    #[error("mesh {mesh}: {reason}")]
    MorphTargets {
        /// The mesh.
        mesh: usize,
        /// What is inconsistent.
        reason: String,
    },
    /// The decoded track breaks a glTF rule (times, values, counts).
    #[error("{0}")]
    InvalidTrack(TrackError),
    /// The file has no animation.
    #[error("the file has no animations")]
    NoAnimations,
    /// A node is listed among the children of two nodes, or twice among one
    /// node's (glTF: nodes form trees).
    #[error("node {node} is a child of both node {first} and node {second}")]
    MultipleParents {
        /// The node.
        node: usize,
        /// The first parent found.
        first: usize,
        /// The second parent found.
        second: usize,
    },
    /// A `KHR_animation_pointer` channel's pointer is refused.
    #[error("pointer {pointer:?}: {problem}")]
    Pointer {
        /// The pointer, as written.
        pointer: String,
        /// Why (boxed: keeps [`Error`](super::Error) small).
        problem: Box<PointerProblem>,
    },
    /// A channel's `target.path` is `"pointer"` but it has no
    /// `target.extensions.KHR_animation_pointer.pointer` string.
    #[error("target.path is \"pointer\" but target.extensions.KHR_animation_pointer.pointer is missing or not a string")]
    PointerExtensionMissing,
    /// A key time is negative (glTF: `time[0] >= 0`).
    #[error("key {key}: time {time} is negative")]
    NegativeTime {
        /// Index of the key.
        key: usize,
        /// The time.
        time: f32,
    },
}

/// The location suffix of [`Error::Import`](super::Error::Import)'s message: `" (animation 1,
/// channel 2, accessor 3)"`, `" (skin 0, accessor 5)"`, or nothing when no
/// location is known.
pub(crate) fn import_location(
    animation: Option<usize>,
    channel: Option<usize>,
    skin: Option<usize>,
    accessor: Option<usize>,
) -> String {
    let mut parts = Vec::new();
    if let Some(a) = animation {
        parts.push(format!("animation {a}"));
    }
    if let Some(c) = channel {
        parts.push(format!("channel {c}"));
    }
    if let Some(s) = skin {
        parts.push(format!("skin {s}"));
    }
    if let Some(a) = accessor {
        parts.push(format!("accessor {a}"));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

/// Why an external URI was refused: wrapped in
/// [`ImportErrorKind::UnsafeUri`], which
/// names the buffer and the URI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UriEscape {
    /// `..` segments (percent-encoded or not) leave the root folder.
    #[error(
        "its '..' segments leave the asset root (the file's folder, unless a wider one is given)"
    )]
    ParentSegments,
    /// A backslash, which some systems read as a separator.
    #[error("it contains a backslash (URIs separate segments with '/')")]
    Backslash,
    /// An absolute path (`/...`, `//host/...`, a drive letter).
    #[error("it is an absolute path")]
    Absolute,
    /// A `file:` URI.
    #[error("it is a file: URI")]
    FileScheme,
    /// A NUL or another control character.
    #[error("it contains a control character")]
    ControlCharacter,
    /// The path inside the root is a symlink (or passes through one) to a
    /// place outside it.
    #[error("it resolves through a symlink to a place outside the asset root (the file's folder, unless a wider one is given)")]
    Symlink,
    /// The file being loaded is not inside the asset root given.
    #[error("the file's own folder is not inside the asset root")]
    BaseOutsideRoot,
}
