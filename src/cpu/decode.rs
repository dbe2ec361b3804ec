//! The CPU twin of `shaders/decode.wgsl`: a compressed library's packed
//! words decoded with the shader's operations, function by function (same
//! names, same argument order, same `f32` arithmetic; integer steps may be
//! written with branches where the shader selects, with the same results).
//!
//! # Panics
//! As the other twins, these index the packed words as the shader does;
//! words and rows of one validated compressed library are always in
//! range.
#![allow(
    clippy::needless_range_loop,
    reason = "keeps the code easy to compare with the shader"
)]

use glam::Vec4;

use super::mix::quat_mul;
use super::sample::{hermite, quat_normalize, quat_slerp, Segment};
use crate::layout::{
    GpuTrack, COMPRESS_HEADER_WORDS, ENC_FRAMED, ENC_RAW, ENC_SMALLEST_THREE, FRAME_WORDS,
};
pub(crate) use crate::model::compressed::RATE_SNAP;
use crate::track::{Interpolation, ValueKind};

const INTERP_STEP: u32 = Interpolation::Step as u32;
const INTERP_CUBICSPLINE: u32 = Interpolation::CubicSpline as u32;
const KIND_ROTATION: u32 = ValueKind::Rotation as u32;

/// One stream of a track's block (WGSL `Stream`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Stream {
    /// Word of its first per-component offset (a multiple of 4).
    pub(crate) offsets: u32,
    /// Word of its first element.
    pub(crate) data: u32,
    /// `ENC_*`.
    pub(crate) encoding: u32,
    /// Bits per component field.
    pub(crate) bits: u32,
    /// Bits per element.
    pub(crate) stride: u32,
    /// The grid step.
    pub(crate) step: f32,
}

/// Word `i` of the packed words.
#[must_use]
pub(crate) fn packed_word(packed: &[u32], i: u32) -> u32 {
    packed[i as usize]
}

/// The `vec4` of words `4i .. 4i + 4` (WGSL `packed[i]`).
fn packed4(packed: &[u32], i: u32) -> [u32; 4] {
    let b = 4 * i as usize;
    [packed[b], packed[b + 1], packed[b + 2], packed[b + 3]]
}

/// Words `i .. i + 3`, from the two `vec4`s that hold them.
#[must_use]
pub(crate) fn packed_window(packed: &[u32], i: u32) -> [u32; 4] {
    let a = packed4(packed, i >> 2);
    let b = packed4(packed, (i >> 2) + 1);
    let all = [a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]];
    let r = (i & 3) as usize;
    [all[r], all[r + 1], all[r + 2], all[r + 3]]
}

/// The low `count` bits of `v` (`count` up to 32).
#[must_use]
pub(crate) fn low_bits(v: u32, count: u32) -> u32 {
    if count >= 32 {
        v
    } else {
        v & ((1u32 << count) - 1)
    }
}

/// Bits `[at, at + count)` of the 64 bits `hi:lo` (`at + count` up to 64).
#[must_use]
pub(crate) fn bits64(lo: u32, hi: u32, at: u32, count: u32) -> u32 {
    let v = ((u64::from(hi) << 32) | u64::from(lo)) >> at;
    low_bits(v as u32, count)
}

/// Bits `[at, at + count)` of the 96 bits `w[2]:w[1]:w[0]`.
#[must_use]
pub(crate) fn field96(w: [u32; 3], at: u32, count: u32) -> u32 {
    let j = (at >> 5) as usize;
    let lo = w[j];
    let hi = if j + 1 < 3 { w[j + 1] } else { 0 };
    bits64(lo, hi, at & 31, count)
}

/// The 96 bits of stream `s` from bit `bit` of its data on.
#[must_use]
pub(crate) fn stream_bits(packed: &[u32], s: &Stream, bit: u32) -> [u32; 3] {
    let w = packed_window(packed, s.data + (bit >> 5));
    let sh = bit & 31;
    [
        bits64(w[0], w[1], sh, 32),
        bits64(w[1], w[2], sh, 32),
        bits64(w[2], w[3], sh, 32),
    ]
}

/// Bits per element of a stream of `width` components.
#[must_use]
pub(crate) fn element_stride(encoding: u32, bits: u32, width: u32) -> u32 {
    if encoding == ENC_SMALLEST_THREE {
        3 + 3 * bits
    } else if encoding == ENC_FRAMED {
        bits
    } else {
        width * bits
    }
}

/// Words of a stream's frame after its offsets: [`FRAME_WORDS`] for a
/// framed stream, else 0.
#[must_use]
pub(crate) fn frame_words(encoding: u32) -> u32 {
    if encoding == ENC_FRAMED {
        FRAME_WORDS
    } else {
        0
    }
}

/// The header `[meta, value step, tangent step, dt]` of `track`'s block
/// (WGSL `packed[track.values_offset >> 2]`).
#[must_use]
pub(crate) fn track_header(packed: &[u32], track: &GpuTrack) -> [u32; 4] {
    packed4(packed, track.values_offset >> 2)
}

/// The value stream of `track`, whose header is `h`.
#[must_use]
pub(crate) fn value_stream(track: &GpuTrack, h: [u32; 4]) -> Stream {
    let pad = ((track.width + 3) >> 2) << 2;
    let tangents = if track.interpolation == INTERP_CUBICSPLINE {
        pad
    } else {
        0
    };
    let encoding = h[0] & 0xff;
    let bits = (h[0] >> 8) & 0xff;
    let offsets = track.values_offset + COMPRESS_HEADER_WORDS;
    Stream {
        offsets,
        data: offsets + pad + frame_words(encoding) + tangents,
        encoding,
        bits,
        stride: element_stride(encoding, bits, track.width),
        step: f32::from_bits(h[1]),
    }
}

/// The tangent stream of a CUBICSPLINE `track`.
#[must_use]
pub(crate) fn tangent_stream(track: &GpuTrack, h: [u32; 4], values: &Stream) -> Stream {
    let pad = ((track.width + 3) >> 2) << 2;
    let encoding = (h[0] >> 16) & 0xff;
    let bits = h[0] >> 24;
    let words = (track.key_count * values.stride + 31) >> 5;
    Stream {
        offsets: values.offsets + pad + frame_words(values.encoding),
        data: values.data + words,
        encoding,
        bits,
        stride: element_stride(encoding, bits, track.width),
        step: f32::from_bits(h[2]),
    }
}

/// Element `e` of stream `s` of a track of `width` (at most 4)
/// components, as four floats (components past the width 0).
#[must_use]
pub(crate) fn stream_element(packed: &[u32], s: &Stream, e: u32, width: u32) -> Vec4 {
    let lane = |c: u32, v: f32| if c < width { v } else { 0.0 };
    if s.encoding == ENC_RAW {
        let w = packed_window(packed, s.data + e * width);
        return Vec4::new(
            lane(0, f32::from_bits(w[0])),
            lane(1, f32::from_bits(w[1])),
            lane(2, f32::from_bits(w[2])),
            lane(3, f32::from_bits(w[3])),
        );
    }
    let f = stream_bits(packed, s, e * s.stride);
    let o = packed4(packed, s.offsets >> 2).map(|w| w as i32);
    let grid = |q: u32, offset: i32| (q as i32 + offset) as f32 * s.step;
    if s.encoding == ENC_FRAMED {
        return in_frame(packed, s, framed_element(packed, s, e));
    }
    if s.encoding == ENC_SMALLEST_THREE {
        let idx = f[0] & 3;
        let negative = (f[0] & 4) != 0;
        let a = grid(field96(f, 3, s.bits), if idx == 0 { o[1] } else { o[0] });
        let b = grid(
            field96(f, 3 + s.bits, s.bits),
            if idx <= 1 { o[2] } else { o[1] },
        );
        let c = grid(
            field96(f, 3 + 2 * s.bits, s.bits),
            if idx <= 2 { o[3] } else { o[2] },
        );
        let d0 = (1.0 - (a * a + b * b + c * c)).max(0.0).sqrt();
        let d = if negative { -d0 } else { d0 };
        return Vec4::new(
            if idx == 0 { d } else { a },
            if idx == 1 {
                d
            } else if idx == 0 {
                a
            } else {
                b
            },
            if idx == 2 {
                d
            } else if idx < 2 {
                b
            } else {
                c
            },
            if idx == 3 { d } else { c },
        );
    }
    Vec4::new(
        lane(0, grid(field96(f, 0, s.bits), o[0])),
        lane(1, grid(field96(f, s.bits, s.bits), o[1])),
        lane(2, grid(field96(f, 2 * s.bits, s.bits), o[2])),
        lane(3, grid(field96(f, 3 * s.bits, s.bits), o[3])),
    )
}

/// Element `e` of a framed stream `s`: the rotation in the track's frame.
#[must_use]
pub(crate) fn framed_element(packed: &[u32], s: &Stream, e: u32) -> Vec4 {
    let f = stream_bits(packed, s, e * s.stride);
    let o = packed4(packed, s.offsets >> 2).map(|w| w as i32);
    let grid = |q: u32, offset: i32| (q as i32 + offset) as f32 * s.step;
    let b = o[3] as u32;
    let (b0, b1, b2) = (b & 0xff, (b >> 8) & 0xff, (b >> 16) & 0xff);
    let x = grid(field96(f, 0, b0), o[0]);
    let y = grid(field96(f, b0, b1), o[1]);
    let z = grid(field96(f, b0 + b1, b2), o[2]);
    Vec4::new(x, y, z, (1.0 - (x * x + y * y + z * z)).max(0.0).sqrt())
}

/// A rotation `r` in the frame of framed stream `s` as its key:
/// `left * r * right`.
#[must_use]
pub(crate) fn in_frame(packed: &[u32], s: &Stream, r: Vec4) -> Vec4 {
    let left = Vec4::from_array(packed4(packed, (s.offsets >> 2) + 1).map(f32::from_bits));
    let right = Vec4::from_array(packed4(packed, (s.offsets >> 2) + 2).map(f32::from_bits));
    quat_mul(quat_mul(left, r), right)
}

/// Component `c` of element `e` of a vector or raw stream `s`.
#[must_use]
pub(crate) fn stream_component(packed: &[u32], s: &Stream, e: u32, c: u32) -> f32 {
    let bit = e * s.stride + c * s.bits;
    let w = packed_window(packed, s.data + (bit >> 5));
    let q = low_bits(bits64(w[0], w[1], bit & 31, 32), s.bits);
    if s.encoding == ENC_RAW {
        return f32::from_bits(q);
    }
    (q as i32 + packed_word(packed, s.offsets + c) as i32) as f32 * s.step
}

/// The segment of `time` in a compressed track's uniform key times
/// (`lookup_scale < 0`): `u = (time - t_0) * rate`; on key `round(u)`
/// where `u` is within [`RATE_SNAP`] of it, else `k = floor(u)`,
/// `t = u - k`; exact before the first key, at or after the last, and on
/// a key.
#[must_use]
pub(crate) fn rate_segment(packed: &[u32], track: &GpuTrack, time: f32) -> Segment {
    let last = track.key_count - 1;
    let u = (time - track.lookup_origin) * -track.lookup_scale;
    let nearest = (u + 0.5).floor();
    let on_key = (u - nearest).abs() <= u.max(1.0) * RATE_SNAP;
    let kf = if on_key { nearest } else { u.floor() };
    // WGSL: u32(clamp(kf, 0.0, f32(last)))
    let k = kf.clamp(0.0, last as f32) as u32;
    let t = u - kf;
    let dt = f32::from_bits(packed_word(packed, track.values_offset + 3));
    if u <= 0.0 || kf >= last as f32 || on_key {
        return Segment {
            k,
            t: 0.0,
            dt,
            exact: true,
        };
    }
    Segment {
        k,
        t,
        dt,
        exact: false,
    }
}

/// [`crate::cpu::sample::sample_track`]'s interpolation for a
/// compressed library (WGSL `sample_compressed`), into `out[..width]`.
pub(crate) fn sample_compressed(packed: &[u32], track: &GpuTrack, seg: Segment, out: &mut [f32]) {
    let cubic = track.interpolation == INTERP_CUBICSPLINE;
    let stepped = track.interpolation == INTERP_STEP;
    let moving = !(seg.exact || stepped);
    let rotation = track.kind == KIND_ROTATION;
    let h = track_header(packed, track);
    let vs = value_stream(track, h);
    let (k, t) = (seg.k, seg.t);
    if moving && rotation && !cubic && vs.encoding == ENC_FRAMED {
        // WGSL: the slerp in the frame, put in the frame once.
        let r0 = framed_element(packed, &vs, k);
        let r1 = framed_element(packed, &vs, k + 1);
        let v = in_frame(packed, &vs, quat_slerp(r0, r1, t));
        out[..4].copy_from_slice(&v.to_array());
        return;
    }
    if track.width <= 4 {
        let mut v = stream_element(packed, &vs, k, track.width);
        if moving && cubic {
            let ts = tangent_stream(track, h, &vs);
            let b0 = stream_element(packed, &ts, 2 * k + 1, track.width);
            let v1 = stream_element(packed, &vs, k + 1, track.width);
            let a1 = stream_element(packed, &ts, 2 * k + 2, track.width);
            // WGSL hermite4: hermite's operations on each component.
            for c in 0..4 {
                v[c] = hermite(v[c], b0[c], v1[c], a1[c], t, seg.dt);
            }
            if rotation {
                v = quat_normalize(v);
            }
        } else if moving && rotation {
            v = quat_slerp(v, stream_element(packed, &vs, k + 1, 4), t);
        } else if moving {
            v = (1.0 - t) * v + t * stream_element(packed, &vs, k + 1, track.width);
        }
        for c in 0..track.width as usize {
            out[c] = v[c];
        }
        return;
    }
    for c in 0..track.width {
        let mut v = stream_component(packed, &vs, k, c);
        if moving && cubic {
            let ts = tangent_stream(track, h, &vs);
            v = hermite(
                v,
                stream_component(packed, &ts, 2 * k + 1, c),
                stream_component(packed, &vs, k + 1, c),
                stream_component(packed, &ts, 2 * k + 2, c),
                t,
                seg.dt,
            );
        } else if moving {
            v = (1.0 - t) * v + t * stream_component(packed, &vs, k + 1, c);
        }
        out[c as usize] = v;
    }
}
