//! The plain enums of the compressed format that its errors name: how a
//! stream's elements are stored ([`Encoding`]) and which stream of a track
//! ([`Stream`]). Leaves: they import only the layout's constants.

use crate::layout::{ENC_FRAMED, ENC_RAW, ENC_SMALLEST_THREE, ENC_VECTOR};

/// How a stream's elements are stored (the [`compress`](crate::compress)
/// module's "The format"): what the compression report gives per track
/// ([`TrackCompression::encoding`](crate::compress::TrackCompression::encoding)),
/// and what an [`Error::Compressed`](crate::Error::Compressed) names. The
/// discriminants are the WGSL `ENC_*` constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Encoding {
    /// Each component an unsigned field of `bits` bits (1 to 24) against
    /// its component's offset, on a grid of `step`.
    Vector = ENC_VECTOR,
    /// A unit quaternion's three smallest components, each of `bits` bits
    /// (1 to 15: at most 48 bits a key), with the index and sign of the
    /// dropped one.
    SmallestThree = ENC_SMALLEST_THREE,
    /// Each component an `f32` as it is (`bits` is 32): lossless.
    Raw = ENC_RAW,
    /// A unit quaternion as the vector part of a rotation in the track's
    /// frame (a rotation before and one after it), with bits per component
    /// of its own (`bits` is their sum, 0 to 48).
    Framed = ENC_FRAMED,
}

/// Which stream of a track a [`CompressError`](crate::compress::CompressError) is about.
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
