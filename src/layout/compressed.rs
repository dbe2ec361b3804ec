//! The compressed format's constants that `decode.wgsl` shares: the
//! block header, the stream encodings and the verbatim meta word
//! (the format itself: [`crate::compress::format`]).

/// Words of a compressed track's header in the packed words (WGSL
/// `COMPRESS_HEADER_WORDS`): `[meta, value step, tangent step, dt]`, then
/// the per-component offsets (`crate::compress::format`).
pub(crate) const COMPRESS_HEADER_WORDS: u32 = 4;
/// A compressed stream of quantized vectors (WGSL `ENC_VECTOR`).
pub(crate) const ENC_VECTOR: u32 = 0;
/// A compressed stream of smallest-three rotations (WGSL
/// `ENC_SMALLEST_THREE`).
pub(crate) const ENC_SMALLEST_THREE: u32 = 1;
/// A compressed stream of raw `f32`s (WGSL `ENC_RAW`).
pub(crate) const ENC_RAW: u32 = 2;
/// A compressed stream of rotations in a frame of their own (WGSL
/// `ENC_FRAMED`).
pub(crate) const ENC_FRAMED: u32 = 3;
/// Words of a framed stream's frame after its offsets: two quaternions.
pub(crate) const FRAME_WORDS: u32 = 8;
/// The meta word the decoder takes for a verbatim track, which has no
/// block (WGSL `VERBATIM_META`): raw values and raw tangents, 32 bits a
/// component.
pub(crate) const VERBATIM_META: u32 = ENC_RAW | (32 << 8) | (ENC_RAW << 16) | (32 << 24);
