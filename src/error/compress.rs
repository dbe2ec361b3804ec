//! [`CompressError`]: compressed data that does not fit its track, or a
//! library that was not compressed.

use crate::kinds::{Encoding, Stream};
use crate::kinds::{Interpolation, ValueKind};

/// What is wrong with compressed data (each compressed track is validated
/// before a library is built from it), or why a library was not
/// compressed. Wrapped in [`Error::Compressed`](crate::Error::Compressed)
/// with the clip and track.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CompressError {
    /// A list of key times is empty.
    #[error("no keys")]
    NoKeys,
    /// A key time is not finite, or not after the one before it.
    #[error("key {key}: time {time} is not finite or not increasing")]
    Time {
        /// The key.
        key: usize,
        /// Its time.
        time: f32,
    },
    /// Uniform key times with a start that is not finite, a rate that is
    /// not finite and positive, a count of 0 or past 2^24.
    #[error("uniform key times: start {start}, rate {rate}, {count} keys")]
    Rate {
        /// The first key's time.
        start: f32,
        /// Keys per second.
        rate: f32,
        /// Keys.
        count: u32,
    },
    /// An encoding the track's kind cannot use (smallest-three for
    /// anything but rotation values, a quantized discrete value).
    #[error("{stream}: {encoding:?} does not fit a {kind:?} track")]
    Encoding {
        /// The stream.
        stream: Stream,
        /// Its encoding.
        encoding: Encoding,
        /// The track's value kind.
        kind: ValueKind,
    },
    /// A field's bit count outside the encoding's range.
    #[error("{stream}: {bits} bits per component, outside {range:?} for {encoding:?}")]
    Bits {
        /// The stream.
        stream: Stream,
        /// The encoding.
        encoding: Encoding,
        /// The bits given.
        bits: u32,
        /// What the encoding allows.
        range: std::ops::RangeInclusive<u32>,
    },
    /// A grid step that is not a finite power of two up to 2^100 (NaN
    /// included).
    #[error("{stream}: step {step} is not a power of two in [2^-126, 2^100]")]
    Step {
        /// The stream.
        stream: Stream,
        /// The step.
        step: f32,
    },
    /// Not one offset per component.
    #[error("{stream}: {found} offsets for {expected} components")]
    OffsetCount {
        /// The stream.
        stream: Stream,
        /// The track's width.
        expected: usize,
        /// Offsets given.
        found: usize,
    },
    /// An offset whose fields would decode past 2^24 grid steps.
    #[error(
        "{stream}: component {component}'s offset {offset} with {bits}-bit fields passes 2^24"
    )]
    Offset {
        /// The stream.
        stream: Stream,
        /// The component.
        component: usize,
        /// Its offset.
        offset: i32,
        /// The bits per field.
        bits: u32,
    },
    /// A word count that does not match the elements.
    #[error("{stream}: {found} words for {expected}")]
    WordCount {
        /// The stream.
        stream: Stream,
        /// Words the elements need.
        expected: u64,
        /// Words given.
        found: usize,
    },
    /// A raw component that is not a finite `f32`.
    #[error("{stream}: element {element}, component {component} is {value}")]
    RawValue {
        /// The stream.
        stream: Stream,
        /// The element.
        element: usize,
        /// The component.
        component: usize,
        /// Its value.
        value: f32,
    },
    /// A raw rotation key whose length is not within
    /// [`QUAT_UNIT_TOLERANCE`](crate::QUAT_UNIT_TOLERANCE) of 1.
    #[error("rotation key {key} has length {length}")]
    RotationKey {
        /// The key.
        key: usize,
        /// Its length.
        length: f32,
    },
    /// A framed stream without a frame or with a bad one (a factor that is
    /// not a finite unit quaternion, fields past 16 bits or not summing to
    /// its bits), or a frame on another encoding.
    #[error("{stream}: frame: {why}")]
    Frame {
        /// The stream.
        stream: Stream,
        /// What is wrong.
        why: &'static str,
    },
    /// Tangents on a track that is not CUBICSPLINE, or none on one that is.
    #[error("tangents given: {given}, but the track is {interpolation:?}")]
    Tangents {
        /// Whether tangents were given.
        given: bool,
        /// The track's interpolation.
        interpolation: Interpolation,
    },
    /// A stream longer than 2^32 - 64 bits.
    #[error("{stream}: {bits} bits, past 2^32 - 64")]
    StreamTooLong {
        /// The stream.
        stream: Stream,
        /// Its bits.
        bits: u64,
    },
    /// Not one compressed track per track of the clip (or not one list
    /// per clip: `clip` is then the count of lists).
    #[error("{found} compressed tracks for {expected} tracks")]
    TrackCount {
        /// Tracks of the clip (clips of the library).
        expected: usize,
        /// Compressed tracks (lists) given.
        found: usize,
    },
    /// The library is compressed already.
    #[error("the library is compressed already")]
    AlreadyCompressed,
    /// Compression options out of range (a bound or distance that is not
    /// finite and positive).
    #[error("compression options: bound {bound}, distance {distance}")]
    Options {
        /// The relative bound.
        bound: f32,
        /// The relative distance.
        distance: f32,
    },
}
