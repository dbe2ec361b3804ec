//! The plain enums that every layer may name, importing nothing of the
//! crate (the lowest layer, `docs/ARCHITECTURE.md`, "The layers"): what a
//! track is (its interpolation, its property, the kind of its values, a
//! pointer target's type) and the rotation keys' unit tolerance; how a
//! compressed stream is stored and which stream it is; which plan the
//! sampler runs.

/// The glTF spellings: `Display` writes what the file says.
macro_rules! display_as {
    ($($ty:ty => $method:ident),*) => {$(
        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.$method())
            }
        }
    )*};
}
display_as!(Interpolation => as_gltf_str, Property => as_gltf_str, PointerType => as_str);

/// How values between keys are computed (glTF `animation.sampler.interpolation`).
///
/// The discriminants are the `INTERP_*` constants of `shaders/sample.wgsl`;
/// a test checks that they agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Interpolation {
    /// The value of the key at or before the time (zero-order hold).
    Step = 0,
    /// Component-wise lerp; shortest-path slerp for rotations.
    Linear = 1,
    /// Cubic Hermite spline with in/out tangents scaled by the key interval.
    CubicSpline = 2,
}

impl Interpolation {
    /// Value elements stored per key: 3 (in-tangent, value, out-tangent)
    /// for CUBICSPLINE, 1 otherwise.
    #[must_use]
    pub fn elements_per_key(self) -> usize {
        match self {
            Interpolation::CubicSpline => 3,
            _ => 1,
        }
    }

    /// The glTF spelling: `"STEP"`, `"LINEAR"` or `"CUBICSPLINE"` (what
    /// `Display` writes).
    #[must_use]
    pub(crate) fn as_gltf_str(self) -> &'static str {
        match self {
            Interpolation::Step => "STEP",
            Interpolation::Linear => "LINEAR",
            Interpolation::CubicSpline => "CUBICSPLINE",
        }
    }
}

/// What a track animates (glTF `channel.target.path`): a property of a
/// node, which the pose stage reads, or [`Property::Pointer`], a property
/// elsewhere in the document named by the track's `PointerTarget`.
///
/// The node properties' discriminants are the `PROP_*` constants of
/// `shaders/prelude.wgsl`: the slots of the pose stage's channel table.
/// The sampler never sees a property, only the [`ValueKind`] it implies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Property {
    /// `translation`: 3 components.
    Translation = 0,
    /// `rotation`: a unit quaternion x, y, z, w.
    Rotation = 1,
    /// `scale`: 3 components.
    Scale = 2,
    /// `weights`: one component per morph target.
    Weights = 3,
    /// `pointer` (`KHR_animation_pointer`): a property outside the node
    /// hierarchy (a material factor, a light, a camera, a node's
    /// visibility), named by `Track::pointer`. Such tracks do not feed
    /// the pose stage and their `node` is not used; they write to the
    /// library's slot of their target (`AnimationLibrary::pointer_targets`).
    Pointer = 4,
}

impl Property {
    /// The glTF spelling: `"translation"`, `"rotation"`, `"scale"`,
    /// `"weights"`, `"pointer"` (what `Display` writes).
    #[must_use]
    pub(crate) fn as_gltf_str(self) -> &'static str {
        match self {
            Property::Translation => "translation",
            Property::Rotation => "rotation",
            Property::Scale => "scale",
            Property::Weights => "weights",
            Property::Pointer => "pointer",
        }
    }

    /// The width this property must have: `Some(3)`, `Some(4)`, `Some(3)`,
    /// or `None` for weights (any count of morph targets >= 1) and pointers
    /// (the width of the target's [`PointerType`]).
    #[must_use]
    pub(crate) fn fixed_width(self) -> Option<u32> {
        match self {
            Property::Translation | Property::Scale => Some(3),
            Property::Rotation => Some(4),
            Property::Weights | Property::Pointer => None,
        }
    }
}

/// How the sampler interpolates a track's values: all it sees of a track
/// besides its keys, its interpolation, its width and where it writes. A
/// new kind of target needs no shader change as long as its values are one
/// of these.
///
/// The discriminants are the `KIND_*` constants of `shaders/prelude.wgsl`
/// (the track table's `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ValueKind {
    /// A vector of `width` floats, each component interpolated on its own
    /// (translation, scale, morph weights, every `float*` pointer target).
    Vector = 0,
    /// A unit quaternion x, y, z, w: slerped (LINEAR) or normalized after
    /// the spline (CUBICSPLINE).
    Rotation = 1,
    /// A value that is not interpolated (`int` and `bool` pointer targets):
    /// STEP only, written as stored (integers exact up to 2^24, booleans 0
    /// or 1). A mixer replaces such a value rather than blending it.
    Discrete = 2,
}

/// The type of a pointer target, by the glTF Object Model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PointerType {
    /// `bool`: one component, 0 (false) or 1 (true); STEP only.
    Bool,
    /// `int`: one integer component; STEP only.
    Int,
    /// `float`: one component.
    Float,
    /// `float2`.
    Float2,
    /// `float3`.
    Float3,
    /// `float4`.
    Float4,
}

impl PointerType {
    /// Components per value: 1, 1, 1, 2, 3 or 4.
    #[must_use]
    pub fn width(self) -> u32 {
        match self {
            PointerType::Bool | PointerType::Int | PointerType::Float => 1,
            PointerType::Float2 => 2,
            PointerType::Float3 => 3,
            PointerType::Float4 => 4,
        }
    }

    /// How the sampler treats it: [`ValueKind::Discrete`] for `bool` and
    /// `int`, [`ValueKind::Vector`] otherwise.
    #[must_use]
    pub(crate) fn value_kind(self) -> ValueKind {
        match self {
            PointerType::Bool | PointerType::Int => ValueKind::Discrete,
            _ => ValueKind::Vector,
        }
    }

    /// The Object Model's spelling: `"bool"`, `"int"`, `"float"`,
    /// `"float2"`, `"float3"`, `"float4"` (what `Display` writes).
    #[must_use]
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            PointerType::Bool => "bool",
            PointerType::Int => "int",
            PointerType::Float => "float",
            PointerType::Float2 => "float2",
            PointerType::Float3 => "float3",
            PointerType::Float4 => "float4",
        }
    }
}

/// How far from 1 a rotation key's length may be. glTF requires unit
/// quaternions; exporters and quantized (normalized-integer) accessors
/// deliver lengths slightly off (an 8-bit quantized key can be off by up to
/// about 0.008). Keys within this tolerance are normalized when the
/// `AnimationLibrary` is built (see
/// `normalize_rotation_keys`); keys further off are refused with
/// `TrackError::QuaternionNotUnit`. CUBICSPLINE tangents are not
/// quaternions and are left alone.
pub const QUAT_UNIT_TOLERANCE: f32 = 0.01;

/// How a stream's elements are stored (the `compress`
/// module's "The format"): what the compression report gives per track
/// (`TrackCompression::encoding`),
/// and what an `Error::Compressed` names. The
/// discriminants are the WGSL `ENC_*` constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Encoding {
    /// Each component an unsigned field of `bits` bits (1 to 24) against
    /// its component's offset, on a grid of `step`.
    Vector = 0,
    /// A unit quaternion's three smallest components, each of `bits` bits
    /// (1 to 15: at most 48 bits a key), with the index and sign of the
    /// dropped one.
    SmallestThree = 1,
    /// Each component an `f32` as it is (`bits` is 32): lossless.
    Raw = 2,
    /// A unit quaternion as the vector part of a rotation in the track's
    /// frame (a rotation before and one after it), with bits per component
    /// of its own (`bits` is their sum, 0 to 48).
    Framed = 3,
}

/// Which stream of a track a `CompressError` is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// The value elements.
    Values,
    /// The CUBICSPLINE tangents.
    Tangents,
}

impl std::fmt::Display for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stream::Values => "values",
            Stream::Tangents => "tangents",
        })
    }
}

/// How the sampling pass lays out its dispatches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SamplerPlan {
    /// What the device profile picks: on CPU adapters
    /// `cpu_adapter::sampler_plan` ([`ClipBlocks`](Self::ClipBlocks) or
    /// [`Grouped`](Self::Grouped)); [`Reference`](Self::Reference) on
    /// GPUs, until a measurement on a GPU says otherwise.
    #[default]
    Auto,
    /// One dispatch over every track of every instance, with every
    /// interpolation compiled in, and a key search that bisects the keys
    /// from the middle one.
    Reference,
    /// One dispatch per track group (LINEAR rotations, other LINEAR
    /// tracks, STEP, CUBICSPLINE rotations, other CUBICSPLINE), each
    /// compiled without the other groups' code; the key search starts from
    /// the library's bucket tables and direct indices (and goes on
    /// searching from there when a guess misses).
    Grouped,
    /// The track groups and key search of [`Grouped`](Self::Grouped),
    /// with the instances sorted by clip on the host each frame (a
    /// counting sort) and one workgroup per block of up to 64 instances of
    /// one clip and a run of up to `MAX_BLOCK_ROW_RUN` of its track rows
    /// (`block_row_run`), each lane sampling its instance's rows in
    /// turn: the block and the rows are read at workgroup-uniform indices,
    /// and each lane reads only its instance's time (once per run), the
    /// key search's texels and its values. Each row's key search starts
    /// from a bucket table of its run of rows (one bucket per lane and run,
    /// then the row's own key texel), or, where every row of a run has the
    /// same key times, one search serves the run: the same results, fewer
    /// and smaller texel reads than the rows' own tables (about 1/16 of
    /// their texture memory more). Outputs stay where the instance table
    /// puts them.
    ClipBlocks,
}
