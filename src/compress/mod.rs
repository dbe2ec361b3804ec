//! Compressed clips: a library stored in a fraction of the memory, decoded
//! on the GPU (and in the CPU twin) where the sampler reads its values,
//! within an error bound. Device-free: the library is compressed on the
//! host. This module is the format's one home (what a compressed track
//! stores, its blocks and packed words) with the compressor's options and
//! report; the compressor itself checks its candidates through the CPU
//! twin, above it.
//!
//! `BoundLibrary::compress` compresses a library bound to a rig and
//! returns the compressed library bound to the same rig, with a
//! [`CompressionReport`]; the animator, the mixer, the crowd and every
//! sampler plan take it as they take the uncompressed one.
//! `AnimationLibrary::compress` does the same without a rig.
//!
//! # The error bound
//!
//! The bound is ACL's: the largest displacement, in world space, of a
//! virtual point at distance `D` from each node (its origin and the points
//! at `D` along its three axes), between the pose of the uncompressed clip
//! and that of the compressed one, over the whole clip. It is checked at
//! every key of every track and at the midpoint of every key interval,
//! through the CPU twin, which decodes as the GPU does. Both figures are
//! relative to the rig's size, the diagonal of the bounding box of its
//! nodes in the rest pose, so a bound means the same for a file in metres
//! or in centimetres. The default ([`CompressOptions::default`]) is ACL's
//! 0.01 cm at `D` = 3 cm on a 180 cm human: 5.6e-5 of the diagonal, with
//! `D` = 1.7% of it.
//!
//! Tracks the world check does not cover are held to a value bound of
//! their own: morph weights, pointer targets and tracks left unbound, and
//! every track of a library compressed without a rig. A rotation may then
//! turn by at most `bound` radians; any other value may move by at most
//! `bound` times its largest magnitude in the track (morph weights in
//! `[0, 1]`: `bound` itself).
//!
//! # What the compressor does
//!
//! Per track, a tolerance that the track may use alone (for a node's
//! rotation the bound over the distance from the node to its farthest
//! virtual point, descendants included; for a translation the bound over
//! the parent's scale), then the smallest candidate within it, each
//! sampled through the twin at the check times: one key where the track
//! is constant within it; otherwise the values on the coarsest
//! power-of-two grid that meets it (the fewest bits: smallest-three for
//! rotations, a range per component for the rest, CUBICSPLINE tangents on
//! a grid of their own), key times as a rate where the rate reproduces
//! every key exactly, and, for LINEAR and STEP tracks, without the keys
//! that interpolation reproduces where the list of times that costs is
//! smaller than the keys it saves; and of those, the smallest
//! ("Size" below), or the track stored losslessly where none is smaller.
//! Errors of tracks on one chain add up,
//! so each clip is then checked as a whole: where a node's virtual points
//! move too far, the tolerance of the tracks on its chain from the root
//! that move them most is multiplied by 1/sqrt(2) and those tracks compressed again, until
//! every node holds (a track whose tolerance reaches 2^-12 of its first
//! is stored losslessly).
//!
//! # Size
//!
//! No track is stored larger than raw, so a compressed library is never
//! larger than the uncompressed one: [`CompressionReport::ratio`] is at
//! least 1. Both sizes are `AnimationLibrary::stored_bytes`: every
//! distinct list of key times once (tracks whose times have the same bits
//! share one list, in either library), plus the values as `f32`s
//! uncompressed, or the packed words compressed (each block's header,
//! offsets, frame and padding included). The key search tables and the
//! track and clip tables, the same in both, are not counted. Per track,
//! [`TrackCompression::raw_bytes`] is its values as `f32`s (CUBICSPLINE
//! tangents included) and [`TrackCompression::bytes`] what it takes
//! compressed, counted alike: its block, or its `f32`s where it is stored
//! verbatim, plus its list of key times only where the uncompressed track
//! does not have that list (keys dropped). A track stored losslessly is
//! stored verbatim and takes exactly its raw bytes; the compressor keeps
//! another candidate only where it takes fewer bytes (of two alike, the
//! one with uniform key times, which needs no key search). Summed over the
//! tracks, with each list of times counted once, that bounds the library.
//!
//! # The format
//!
//! Compressed tracks come only from the compressor; their layout is the
//! crate's own, described here so that the report ([`TrackCompression`])
//! and the errors ([`CompressError`]) can be read. A compressed track is
//! its key times (a rate, or a list) and one or two streams ([`Stream`])
//! of quantized elements: the values, and for CUBICSPLINE the tangents
//! (per key its in-tangent, then its out-tangent). A stream's elements
//! are bit-packed, LSB first: bit `i` of the stream is bit `i % 32` of
//! `words[i / 32]`; element `e` occupies bits
//! `[e * stride, (e + 1) * stride)`:
//! - [`Encoding::Vector`]: `width` unsigned fields of `bits` bits,
//!   component `c` at `c * bits`; the value is
//!   `f32(field + offsets[c]) * step` (stride `width * bits`). Rotations
//!   take it (four components) only where smallest-three would need more
//!   than 15 bits a component;
//! - [`Encoding::SmallestThree`] (rotations): 2 bits naming the dropped
//!   component `i` (the largest), 1 bit its sign (1: negative), then the
//!   three other components in order, each a field of `bits` bits decoded
//!   as above with its component's offset; the dropped one is
//!   `sqrt(max(0, 1 - (a a + b b + c c)))` (stride `3 + 3 bits`);
//! - [`Encoding::Raw`]: each component an `f32`'s bits (stride `32 width`).
//!   A track whose streams are all raw is stored verbatim (no block, see
//!   below) unless it is CUBICSPLINE with two keys or more and its key
//!   times are a rate (its spline needs the key interval of a header).
//! - [`Encoding::Framed`] (rotations): three fields of `bits[0]`,
//!   `bits[1]` and `bits[2]` bits (0 to 16 each; the stream's `bits` is
//!   their sum, the stride), decoded as above with the first three
//!   offsets to the vector part `(x, y, z)` of a rotation `r` in the
//!   track's frame, `w = sqrt(max(0, 1 - (x x + y y + z z)))`; the key is
//!   `left * r * right`, the unit quaternions `left` and `right` the
//!   track's frame. A track whose keys stay near one rotation and turn
//!   mostly about one axis has two small components there, which take
//!   few bits.
//!
//! `step` is a power of two and `|offset| + 2^bits - 1 <= 2^24`, so that
//! `f32(field + offset)` and the product are exact: every device decodes a
//! vector component to the same bits.
//!
//! A track's block is a header of 4 words, each stream's per-component
//! offsets (padded to a multiple of 4 words; a framed stream's frame after
//! them), then the streams' words, padded to a multiple of 4 words: 32
//! bytes and more besides the elements. A verbatim track has no block:
//! its values' `f32`s, then its tangents' (in-tangent, out-tangent per
//! key), after every block, as the uncompressed library stores its
//! values ([`TrackCompression::verbatim`]).
//!
//! Every compressed track is validated before a library is built from it:
//! anything a decoder could not read in bounds or that would decode to a
//! non-finite value is refused with an [`Error::Compressed`] naming the
//! clip, the track and the [`CompressError`].

pub(crate) mod encode;
pub(crate) mod format;
pub(crate) mod packed;

pub use crate::{
    error::compress::CompressError,
    kinds::{Encoding, Stream},
};

use crate::error::{Error, Result};

/// The default bound: 0.01 cm on a 180 cm human's diagonal.
pub(crate) const DEFAULT_BOUND: f32 = 5.6e-5;
/// The default distance of the virtual points: 3 cm on a 180 cm human.
pub(crate) const DEFAULT_DISTANCE: f32 = 0.017;

/// How much error compression may add; see the module's documentation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompressOptions {
    /// The largest displacement of a virtual point, relative to the rest
    /// pose's bounding-box diagonal (default 5.6e-5: 0.01 cm on a 180 cm
    /// human); for value-bound tracks, their relative bound.
    pub bound: f32,
    /// The virtual points' distance from their node, relative to the same
    /// diagonal (default 0.017: 3 cm on a 180 cm human).
    pub distance: f32,
}

impl Default for CompressOptions {
    fn default() -> Self {
        CompressOptions {
            bound: DEFAULT_BOUND,
            distance: DEFAULT_DISTANCE,
        }
    }
}

impl CompressOptions {
    /// The default options with another relative bound.
    #[must_use]
    pub fn with_bound(bound: f32) -> Self {
        CompressOptions {
            bound,
            ..CompressOptions::default()
        }
    }

    /// Checks that both figures are finite and positive.
    pub(crate) fn check(&self) -> Result<()> {
        let good = |x: f32| x.is_finite() && x > 0.0;
        if good(self.bound) && good(self.distance) {
            return Ok(());
        }
        Err(Error::Compressed {
            clip: 0,
            track: None,
            kind: CompressError::Options {
                bound: self.bound,
                distance: self.distance,
            },
        })
    }
}

/// How a track's error is measured against its tolerance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// The angle between the rotations, in radians.
    Angle,
    /// The distance between the vectors.
    Distance,
    /// The largest difference of one component.
    Component,
}

/// What the compressor did with one track.
#[derive(Debug, Clone, PartialEq)]
pub struct TrackCompression {
    /// How its error was measured.
    pub metric: Metric,
    /// The tolerance it was given alone (radians, or the values' units).
    pub tolerance: f64,
    /// Its error alone, sampled at the check times.
    pub error: f64,
    /// Its values' encoding.
    pub encoding: Encoding,
    /// Bits per value component.
    pub bits: u32,
    /// Bits per tangent component (CUBICSPLINE).
    pub tangent_bits: Option<u32>,
    /// Keys kept.
    pub keys: usize,
    /// Keys of the uncompressed track.
    pub source_keys: usize,
    /// Whether its key times are stored as a rate.
    pub uniform: bool,
    /// How many times its tolerance was multiplied by 1/sqrt(2) for its
    /// clip to hold the bound (24: stored losslessly).
    pub tightenings: u32,
    /// Whether it is stored verbatim: its values (and tangents) as the
    /// uncompressed library's `f32`s, without a block header.
    pub verbatim: bool,
    /// Bytes of its values in the uncompressed library: every `f32` of
    /// its values (CUBICSPLINE tangents included), 4 bytes each. Its key
    /// times are not counted: a list of times is stored once for every
    /// track that has it, in either library.
    pub raw_bytes: u64,
    /// Bytes it takes in the compressed library, counted as
    /// [`raw_bytes`](Self::raw_bytes) is: its block (header, offsets,
    /// frame, elements, padding to 16 bytes) or its verbatim `f32`s,
    /// plus its key times where they are a list that the uncompressed
    /// track does not have (after keys were dropped). Never more than
    /// [`raw_bytes`](Self::raw_bytes).
    pub bytes: u64,
}

/// What the compressor did with one clip.
#[derive(Debug, Clone, PartialEq)]
pub struct ClipCompression {
    /// The clip's name.
    pub name: String,
    /// The largest error measured, in the bound's units (see
    /// [`CompressionReport::max_error`]).
    pub max_error: f64,
    /// The most times one of its tracks' tolerance was tightened for the
    /// clip to hold the bound (24: stored losslessly).
    pub tightenings: u32,
}

/// What `BoundLibrary::compress` (or `AnimationLibrary::compress`)
/// did.
#[derive(Debug, Clone, PartialEq)]
pub struct CompressionReport {
    /// The rest pose's bounding-box diagonal the relative figures are of
    /// (1 without a rig, or for a rig whose nodes sit at one point).
    pub diagonal: f64,
    /// The bound, in the rig's units.
    pub bound: f64,
    /// The virtual points' distance, in the rig's units.
    pub distance: f64,
    /// The largest error measured: the world displacement of a virtual
    /// point; for value-bound tracks their error times the bound over
    /// their tolerance. At most [`bound`](Self::bound).
    pub max_error: f64,
    /// Bytes of key times and values uncompressed
    /// (`AnimationLibrary::stored_bytes`): every distinct list of key
    /// times once and every value, as `f32`s.
    pub uncompressed_bytes: u64,
    /// Bytes of key times and packed words compressed
    /// (`AnimationLibrary::stored_bytes` of the compressed library):
    /// every distinct list of key times once, every block and every
    /// verbatim track's `f32`s. Never more than
    /// [`uncompressed_bytes`](Self::uncompressed_bytes).
    pub compressed_bytes: u64,
    /// Per clip.
    pub clips: Vec<ClipCompression>,
    /// Per clip, per track.
    pub tracks: Vec<Vec<TrackCompression>>,
}

impl CompressionReport {
    /// Uncompressed bytes over compressed bytes: at least 1, since no
    /// track is stored larger than its raw values (module documentation,
    /// "Size").
    #[must_use]
    pub fn ratio(&self) -> f64 {
        self.uncompressed_bytes as f64 / self.compressed_bytes.max(1) as f64
    }
}
