//! The compressed track format (documented for users in
//! [`crate::compress`], "The format"): what a compressed
//! `AnimationLibrary` stores per track instead of `f32` key times and
//! values, how a track's block is laid out in the packed words, and the
//! constants `shaders/decode.wgsl` shares (the layout re-exports them for
//! the WGSL contract). The sampler and its CPU twin (`src/cpu/decode.rs`)
//! decode it. Host data, below the model: no device, no track.

use std::sync::Arc;

use crate::error::CompressError;
use crate::kinds::QUAT_UNIT_TOLERANCE;
use crate::kinds::{Encoding, Stream};
use crate::kinds::{Interpolation, ValueKind};

/// Words of a compressed track's header in the packed words (WGSL
/// `COMPRESS_HEADER_WORDS`): `[meta, value step, tangent step, dt]`, then
/// the per-component offsets ([`packed_block`]).
pub(crate) const COMPRESS_HEADER_WORDS: u32 = 4;
/// A compressed stream of quantized vectors (WGSL `ENC_VECTOR`).
pub(crate) const ENC_VECTOR: u32 = Encoding::Vector as u32;
/// A compressed stream of smallest-three rotations (WGSL
/// `ENC_SMALLEST_THREE`).
pub(crate) const ENC_SMALLEST_THREE: u32 = Encoding::SmallestThree as u32;
/// A compressed stream of raw `f32`s (WGSL `ENC_RAW`).
pub(crate) const ENC_RAW: u32 = Encoding::Raw as u32;
/// A compressed stream of rotations in a frame of their own (WGSL
/// `ENC_FRAMED`).
pub(crate) const ENC_FRAMED: u32 = Encoding::Framed as u32;
/// Words of a framed stream's frame after its offsets: two quaternions.
pub(crate) const FRAME_WORDS: u32 = 8;
/// The meta word the decoder takes for a verbatim track, which has no
/// block (WGSL `VERBATIM_META`): raw values and raw tangents, 32 bits a
/// component.
pub(crate) const VERBATIM_META: u32 = ENC_RAW | (32 << 8) | (ENC_RAW << 16) | (32 << 24);

/// The most keys of a track whose times are a rate: key indices stay
/// exact in `f32`.
pub(crate) const MAX_RATE_KEYS: u32 = 1 << 24;

/// How close (relative to `max(u, 1)`) a time's key position
/// `u = (T - start) * rate` must be to a whole number `k` to be on key
/// `k` (WGSL `RATE_SNAP`, 2^-21): a few `f32` roundings, so that a key
/// time baked as `k / 30` rounded to `f32`, whose `u` can miss `k` by an
/// ulp or two, is on key `k`.
pub(crate) const RATE_SNAP: f32 = 4.768_371_6e-7;

/// The key position of `time` in uniform key times: `Some(k)` when it is
/// on key `k` (within [`RATE_SNAP`]), computed as the sampler computes it.
#[must_use]
pub(crate) fn rate_key(time: f32, start: f32, rate: f32) -> Option<f32> {
    let u = (time - start) * rate;
    let nearest = (u + 0.5).floor();
    ((u - nearest).abs() <= u.max(1.0) * RATE_SNAP).then_some(nearest)
}

/// The largest `|offset| + 2^bits - 1` of a quantized component: integers
/// up to 2^24 are exact in `f32`.
pub(crate) const MAX_QUANTIZED: i64 = 1 << 24;

/// The largest grid step (2^100): every decoded value stays finite.
pub(crate) const MAX_STEP: f32 = 1.267_650_6e30;

impl Encoding {
    /// The bits a component field may have: `1..=24`, `1..=15`, `32`;
    /// for [`Encoding::Framed`] the sum of its three fields' (each at most
    /// [`MAX_FRAMED_BITS`]).
    #[must_use]
    pub(crate) fn bit_range(self) -> std::ops::RangeInclusive<u32> {
        match self {
            Encoding::Vector => 1..=24,
            Encoding::SmallestThree => 1..=15,
            Encoding::Raw => 32..=32,
            Encoding::Framed => 0..=3 * MAX_FRAMED_BITS,
        }
    }

    /// Bits per element of `width` components with fields of `bits` bits.
    #[must_use]
    pub(crate) fn stride(self, width: u32, bits: u32) -> u64 {
        match self {
            Encoding::SmallestThree => 3 + 3 * u64::from(bits),
            Encoding::Framed => u64::from(bits),
            Encoding::Vector | Encoding::Raw => u64::from(width) * u64::from(bits),
        }
    }
}

/// Where a track's keys are in time.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum KeyTimes {
    /// `count` keys, key `k` at `start + k / rate`: stored as the rate,
    /// not a list. The sampler finds the key of clip time `T` as
    /// `u = (T - start) * rate` (one `f32` subtraction and one
    /// multiplication, the same on every device); within [`RATE_SNAP`] of
    /// a whole number `k` it is exactly on key `k`, otherwise between
    /// `k = floor(u)` and `k + 1` at `t = u - k`; `u <= 0` is key 0,
    /// `u >= count - 1` the last key.
    Uniform {
        /// The first key's time.
        start: f32,
        /// Keys per second, finite and positive.
        rate: f32,
        /// Keys, `1..=MAX_RATE_KEYS`.
        count: u32,
    },
    /// Key times as a list (strictly increasing, finite), searched as an
    /// uncompressed track's are; lists with the same bits are stored once.
    List(Arc<[f32]>),
}

impl KeyTimes {
    /// The number of keys.
    #[must_use]
    pub(crate) fn count(&self) -> usize {
        match self {
            KeyTimes::Uniform { count, .. } => *count as usize,
            KeyTimes::List(t) => t.len(),
        }
    }

    /// The uniform form of `times` when it reproduces every key: each
    /// `t_i` is on key `i` (`rate_key`), so that a time on an original
    /// key is on the same key of the compressed track. The rate tried is
    /// `(n - 1) / (t_last - t_0)`, and that rounded to a whole number when
    /// it is within 1e-3 of one (keys baked at 30 fps).
    #[must_use]
    pub(crate) fn uniform_of(times: &[f32]) -> Option<KeyTimes> {
        let n = times.len();
        let count = u32::try_from(n).ok().filter(|&c| c <= MAX_RATE_KEYS)?;
        let start = *times.first()?;
        if n == 1 {
            return Some(KeyTimes::Uniform {
                start,
                rate: 1.0,
                count,
            });
        }
        let span = f64::from(times[n - 1]) - f64::from(start);
        let exact = (n - 1) as f64 / span;
        let mut candidates = vec![exact as f32];
        if (exact - exact.round()).abs() < 1e-3 && exact.round() > 0.0 {
            candidates.insert(0, exact.round() as f32);
        }
        candidates.into_iter().find_map(|rate| {
            let fits = rate.is_finite()
                && rate > 0.0
                && times
                    .iter()
                    .enumerate()
                    .all(|(i, &t)| rate_key(t, start, rate) == Some(i as f32));
            fits.then_some(KeyTimes::Uniform { start, rate, count })
        })
    }

    fn validate(&self) -> Result<(), CompressError> {
        match *self {
            KeyTimes::Uniform { start, rate, count } => {
                let last = f64::from(start) + f64::from(count.saturating_sub(1)) / f64::from(rate);
                let good = start.is_finite()
                    && rate.is_finite()
                    && rate > 0.0
                    && (1..=MAX_RATE_KEYS).contains(&count)
                    && last.is_finite()
                    && last.abs() <= f64::from(f32::MAX);
                if !good {
                    return Err(CompressError::Rate { start, rate, count });
                }
                Ok(())
            }
            KeyTimes::List(ref times) => {
                if times.is_empty() {
                    return Err(CompressError::NoKeys);
                }
                for (key, w) in times.iter().enumerate() {
                    if !w.is_finite() {
                        return Err(CompressError::Time { key, time: *w });
                    }
                    if key > 0 && times[key - 1] >= *w {
                        return Err(CompressError::Time { key, time: *w });
                    }
                }
                Ok(())
            }
        }
    }
}

/// The most bits of one field of a framed rotation.
pub(crate) const MAX_FRAMED_BITS: u32 = 16;

/// The frame of an [`Encoding::Framed`] stream: a key is
/// `left * r * right` (Hamilton products, `x y z w`), `r` the decoded
/// rotation. The compressor takes `left = q_ref * p` and
/// `right = conjugate(p)`, `q_ref` the keys' mean and `p` the turn that
/// puts their principal axes of motion on x, y and z.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Frame {
    /// The left factor, a unit quaternion.
    pub(crate) left: [f32; 4],
    /// The right factor, a unit quaternion.
    pub(crate) right: [f32; 4],
    /// Bits of the x, y and z fields (0 to [`MAX_FRAMED_BITS`]; 0: the
    /// component is its offset times the step).
    pub(crate) bits: [u32; 3],
}

/// One stream of a compressed track: its elements, quantized.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Quantized {
    /// How each element is stored.
    pub(crate) encoding: Encoding,
    /// Bits per component field ([`Encoding::bit_range`]).
    pub(crate) bits: u32,
    /// The grid step: a power of two, at most [`MAX_STEP`] (1 for
    /// [`Encoding::Raw`], which does not use it).
    pub(crate) step: f32,
    /// Per component of the track, the grid index its fields count from
    /// (`width` of them, 3 for [`Encoding::Framed`]; zeros for
    /// [`Encoding::Raw`]).
    pub(crate) offsets: Vec<i32>,
    /// [`Encoding::Framed`] only: its frame and bits per field.
    pub(crate) frame: Option<Frame>,
    /// The elements, bit-packed (see the module's documentation):
    /// `ceil(elements * stride / 32)` words.
    pub(crate) words: Vec<u32>,
}

/// A track's key times and values in the compressed format; see the
/// module's documentation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CompressedTrack {
    /// The key times.
    pub(crate) times: KeyTimes,
    /// The value elements: one per key.
    pub(crate) values: Quantized,
    /// CUBICSPLINE only: two elements per key, its in-tangent and its
    /// out-tangent (the glTF order without the value between them).
    pub(crate) tangents: Option<Quantized>,
}

fn is_grid_step(step: f32) -> bool {
    step.is_normal() && step > 0.0 && step <= MAX_STEP && step.to_bits() & 0x007f_ffff == 0
}

impl Quantized {
    /// `values` (elements of `width` floats) stored as they are.
    #[must_use]
    pub(crate) fn raw(values: &[f32], width: u32) -> Quantized {
        Quantized {
            encoding: Encoding::Raw,
            bits: 32,
            step: 1.0,
            offsets: vec![0; width as usize],
            frame: None,
            words: values.iter().map(|v| v.to_bits()).collect(),
        }
    }

    /// Bits per element of a track of `width` components.
    #[must_use]
    pub(crate) fn stride(&self, width: u32) -> u64 {
        self.encoding.stride(width, self.bits)
    }

    /// A framed stream's bits per field, after checking its frame (unit
    /// quaternions, fields of at most [`MAX_FRAMED_BITS`] summing to
    /// `bits`); empty for the other encodings, which must have no frame.
    fn field_bits(&self, stream: Stream) -> Result<Vec<u32>, CompressError> {
        let Some(frame) = &self.frame else {
            if self.encoding == Encoding::Framed {
                return Err(CompressError::Frame {
                    stream,
                    why: "no frame given",
                });
            }
            return Ok(Vec::new());
        };
        if self.encoding != Encoding::Framed {
            return Err(CompressError::Frame {
                stream,
                why: "a frame on a stream that is not framed",
            });
        }
        let unit = |q: &[f32; 4]| {
            let length = q.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>().sqrt();
            q.iter().all(|x| x.is_finite())
                && (length - 1.0).abs() <= f64::from(QUAT_UNIT_TOLERANCE)
        };
        if !unit(&frame.left) || !unit(&frame.right) {
            return Err(CompressError::Frame {
                stream,
                why: "a factor that is not a finite unit quaternion",
            });
        }
        if frame.bits.iter().any(|&b| b > MAX_FRAMED_BITS)
            || frame.bits.iter().sum::<u32>() != self.bits
        {
            return Err(CompressError::Frame {
                stream,
                why: "field bits past 16 or not summing to the stream's bits",
            });
        }
        Ok(frame.bits.to_vec())
    }

    fn validate(
        &self,
        stream: Stream,
        kind: ValueKind,
        width: u32,
        elements: usize,
    ) -> Result<(), CompressError> {
        let allowed = match (stream, kind) {
            (_, ValueKind::Discrete) => self.encoding == Encoding::Raw,
            (Stream::Values, ValueKind::Rotation) => true,
            _ => !matches!(self.encoding, Encoding::SmallestThree | Encoding::Framed),
        };
        if !allowed {
            return Err(CompressError::Encoding {
                stream,
                encoding: self.encoding,
                kind,
            });
        }
        let range = self.encoding.bit_range();
        if !range.contains(&self.bits) {
            return Err(CompressError::Bits {
                stream,
                encoding: self.encoding,
                bits: self.bits,
                range,
            });
        }
        if !is_grid_step(self.step) {
            return Err(CompressError::Step {
                stream,
                step: self.step,
            });
        }
        let components = if self.encoding == Encoding::Framed {
            3
        } else {
            width as usize
        };
        if self.offsets.len() != components {
            return Err(CompressError::OffsetCount {
                stream,
                expected: components,
                found: self.offsets.len(),
            });
        }
        let field_bits = self.field_bits(stream)?;
        if self.encoding != Encoding::Raw {
            for (component, &offset) in self.offsets.iter().enumerate() {
                let bits = field_bits.get(component).copied().unwrap_or(self.bits);
                let span = (1i64 << bits) - 1;
                if i64::from(offset).abs() + span > MAX_QUANTIZED {
                    return Err(CompressError::Offset {
                        stream,
                        component,
                        offset,
                        bits,
                    });
                }
            }
        }
        let bits = elements as u64 * self.stride(width);
        if bits > u64::from(u32::MAX) - 63 {
            return Err(CompressError::StreamTooLong { stream, bits });
        }
        let expected = bits.div_ceil(32);
        if self.words.len() as u64 != expected {
            return Err(CompressError::WordCount {
                stream,
                expected,
                found: self.words.len(),
            });
        }
        if self.encoding == Encoding::Raw {
            self.validate_raw_words(stream, kind, width)?;
        }
        Ok(())
    }

    /// Checks a raw stream's words: every value finite, and every rotation
    /// key of a values stream a unit quaternion.
    fn validate_raw_words(
        &self,
        stream: Stream,
        kind: ValueKind,
        width: u32,
    ) -> Result<(), CompressError> {
        for (i, w) in self.words.iter().enumerate() {
            let value = f32::from_bits(*w);
            if !value.is_finite() {
                let width = width.max(1) as usize;
                return Err(CompressError::RawValue {
                    stream,
                    element: i / width,
                    component: i % width,
                    value,
                });
            }
        }
        if stream == Stream::Values && kind == ValueKind::Rotation {
            for (key, q) in self.words.chunks_exact(4).enumerate() {
                let length = q
                    .iter()
                    .map(|&w| f64::from(f32::from_bits(w)).powi(2))
                    .sum::<f64>()
                    .sqrt();
                let unit = (length - 1.0).abs() <= f64::from(QUAT_UNIT_TOLERANCE);
                if !unit {
                    return Err(CompressError::RotationKey {
                        key,
                        length: length as f32,
                    });
                }
            }
        }
        Ok(())
    }
}

impl CompressedTrack {
    /// A track of one key at `time` whose value (`width` floats) is stored
    /// raw: verbatim, without a block (a pointer target's rest value in a
    /// compressed library).
    #[must_use]
    pub(crate) fn constant_raw(time: f32, value: &[f32], width: u32) -> CompressedTrack {
        CompressedTrack {
            times: KeyTimes::Uniform {
                start: time,
                rate: 1.0,
                count: 1,
            },
            values: Quantized::raw(value, width),
            tangents: None,
        }
    }

    /// The number of keys.
    #[must_use]
    pub(crate) fn key_count(&self) -> usize {
        self.times.count()
    }

    /// Checks that this can stand for a track of values of `kind`,
    /// `width` components a key and `interpolation` (its own keys) and be
    /// decoded in bounds to finite values.
    ///
    /// # Errors
    /// The first rule broken.
    pub(crate) fn validate(
        &self,
        kind: ValueKind,
        width: u32,
        interpolation: Interpolation,
    ) -> Result<(), CompressError> {
        self.times.validate()?;
        let keys = self.key_count();
        self.values.validate(Stream::Values, kind, width, keys)?;
        let cubic = interpolation == Interpolation::CubicSpline;
        match (&self.tangents, cubic) {
            (Some(t), true) => t.validate(Stream::Tangents, kind, width, 2 * keys),
            (None, false) => Ok(()),
            (given, _) => Err(CompressError::Tangents {
                given: given.is_some(),
                interpolation,
            }),
        }
    }

    /// Bytes of its key times: 4 a key for a list, 0 for a rate.
    #[must_use]
    pub(crate) fn times_bytes(&self) -> u64 {
        match &self.times {
            KeyTimes::Uniform { .. } => 0,
            KeyTimes::List(t) => t.len() as u64 * 4,
        }
    }

    /// Bytes of its values in the packed words: its block (header,
    /// offsets, frame, elements and padding to 16 bytes), or for a
    /// verbatim track its `f32`s alone.
    #[must_use]
    pub(crate) fn data_bytes(&self, width: u32, interpolation: Interpolation) -> u64 {
        let words = if self.is_verbatim(interpolation) {
            self.verbatim_words().len()
        } else {
            block_words(self, width)
        };
        words as u64 * 4
    }

    /// Whether the track is stored verbatim, without a block: its values
    /// (and CUBICSPLINE tangents) are [`Encoding::Raw`], and its key times
    /// a list or, but for a CUBICSPLINE track of two keys or more (whose
    /// spline needs the key interval of a block's header), a rate.
    #[must_use]
    pub(crate) fn is_verbatim(&self, interpolation: Interpolation) -> bool {
        let raw = |q: &Quantized| q.encoding == Encoding::Raw;
        let uniform_spline = interpolation == Interpolation::CubicSpline
            && matches!(self.times, KeyTimes::Uniform { count, .. } if count > 1);
        raw(&self.values) && self.tangents.as_ref().is_none_or(raw) && !uniform_spline
    }

    /// A verbatim track's words in the packed words: its values' `f32`
    /// bits, then its tangents' (CUBICSPLINE: in-tangent, out-tangent per
    /// key).
    #[must_use]
    pub(crate) fn verbatim_words(&self) -> Vec<u32> {
        let mut words = self.values.words.clone();
        if let Some(t) = &self.tangents {
            words.extend_from_slice(&t.words);
        }
        words
    }
}

/// Splits CUBICSPLINE values `[a_k, v_k, b_k]*` of `width` floats into the
/// value elements and the tangents `[a_k, b_k]*`.
#[must_use]
pub(crate) fn split_cubic(values: &[f32], width: usize) -> (Vec<f32>, Vec<f32>) {
    let mut v = Vec::with_capacity(values.len() / 3);
    let mut t = Vec::with_capacity(values.len() * 2 / 3);
    for (e, chunk) in values.chunks_exact(width.max(1)).enumerate() {
        if e % 3 == 1 {
            v.extend_from_slice(chunk);
        } else {
            t.extend_from_slice(chunk);
        }
    }
    (v, t)
}

/// Words of the per-component offsets of one stream: `width` rounded up to
/// a multiple of 4, so that each stream's offsets start a `vec4`.
#[must_use]
pub(crate) fn offset_words(width: u32) -> u32 {
    width.div_ceil(4) * 4
}

fn block_words(track: &CompressedTrack, width: u32) -> usize {
    let streams = 1 + usize::from(track.tangents.is_some());
    let data = track.values.words.len() + track.tangents.as_ref().map_or(0, |t| t.words.len());
    let frame = if track.values.frame.is_some() {
        FRAME_WORDS as usize
    } else {
        0
    };
    let words =
        COMPRESS_HEADER_WORDS as usize + streams * offset_words(width) as usize + frame + data;
    words.div_ceil(4) * 4
}

/// The packed words of a validated compressed track of `width`
/// components, as the sampler reads them at the track's `values_offset`
/// (a multiple of 4): the header `[meta, value step, tangent step, dt]`
/// (`meta` = value encoding | value bits << 8 | tangent encoding << 16 |
/// tangent bits << 24; `dt` the interval `1 / rate` of uniform keys, 0 for
/// a list), the value offsets, the tangent offsets (CUBICSPLINE), each
/// padded to [`offset_words`] (a framed stream's: its three offsets, its
/// field bits `bits[0] | bits[1] << 8 | bits[2] << 16`, then its frame,
/// `left` and `right`), the value stream's words, the tangent
/// stream's, and zeros to a multiple of 4 words.
#[must_use]
pub(crate) fn packed_block(track: &CompressedTrack, width: u32) -> Vec<u32> {
    let mut out = Vec::with_capacity(block_words(track, width));
    let (t_enc, t_bits, t_step) = track
        .tangents
        .as_ref()
        .map_or((0, 0, 0.0), |t| (t.encoding as u32, t.bits, t.step));
    let dt = match track.times {
        KeyTimes::Uniform { rate, .. } => 1.0 / rate,
        KeyTimes::List(_) => 0.0,
    };
    out.push(
        track.values.encoding as u32 | (track.values.bits << 8) | (t_enc << 16) | (t_bits << 24),
    );
    out.push(track.values.step.to_bits());
    out.push(f32::to_bits(t_step));
    out.push(f32::to_bits(dt));
    let pad = offset_words(width) as usize;
    let streams: Vec<&Quantized> = std::iter::once(&track.values)
        .chain(track.tangents.as_ref())
        .collect();
    for s in &streams {
        let start = out.len();
        out.extend(s.offsets.iter().map(|&o| o as u32));
        out.resize(start + pad, 0);
        if let Some(frame) = &s.frame {
            // The field bits in the offsets' fourth word, then the frame.
            out[start + 3] = frame.bits[0] | (frame.bits[1] << 8) | (frame.bits[2] << 16);
            out.extend(frame.left.iter().chain(&frame.right).map(|x| x.to_bits()));
        }
    }
    for s in &streams {
        out.extend_from_slice(&s.words);
    }
    out.resize(out.len().div_ceil(4) * 4, 0);
    out
}

/// Appends `bits` bits of `value` to a bit stream (LSB first).
#[derive(Debug, Default)]
pub(crate) struct BitWriter {
    words: Vec<u32>,
    len: u64,
}

impl BitWriter {
    /// An empty stream.
    #[must_use]
    pub(crate) fn new() -> Self {
        BitWriter::default()
    }

    /// Appends the low `bits` bits (at most 32) of `value`.
    pub(crate) fn push(&mut self, value: u32, bits: u32) {
        let mut value = u64::from(value) & ((1u64 << bits) - 1);
        let mut left = u64::from(bits);
        while left > 0 {
            let at = (self.len % 32) as u32;
            if at == 0 {
                self.words.push(0);
            }
            let take = left.min(u64::from(32 - at));
            if let Some(w) = self.words.last_mut() {
                *w |= ((value & ((1u64 << take) - 1)) as u32) << at;
            }
            value >>= take;
            left -= take;
            self.len += take;
        }
    }

    /// The words written.
    #[must_use]
    pub(crate) fn finish(self) -> Vec<u32> {
        self.words
    }
}
