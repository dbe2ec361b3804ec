//! The CPU twin of `shaders/decode.wgsl`: a compressed library's packed
//! words decoded with the shader's operations, function by function (same
//! names, same argument order, same `f32` arithmetic; integer steps may be
//! written with branches where the shader selects, with the same results).
//!
//! The packed words are read as the shader reads them; past their end
//! (the decoder reads up to 3 words past the last word of a stream) they
//! read as zeros, as the device's buffer holds there.
#![allow(
    clippy::needless_range_loop,
    reason = "keeps the code easy to compare with the shader"
)]

use glam::Vec4;

pub(crate) use crate::compress::format::RATE_SNAP;
use crate::cpu::quat::{quat_mul, quat_normalize, quat_slerp};
use crate::cpu::sample::{hermite, Segment};
use crate::layout::{
    GpuTrack, COMPRESS_HEADER_WORDS, ENC_FRAMED, ENC_RAW, ENC_SMALLEST_THREE, FRAME_WORDS,
    INTERP_CUBICSPLINE, INTERP_STEP, KIND_ROTATION, VERBATIM_META,
};

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

/// Word `i` of the packed words (0 past their end).
#[must_use]
pub(crate) fn packed_word(packed: &[u32], i: u32) -> u32 {
    packed.get(i as usize).copied().unwrap_or(0)
}

/// The `vec4` of words `4i .. 4i + 4` (WGSL `packed[i]`).
fn packed4(packed: &[u32], i: u32) -> [u32; 4] {
    let b = 4 * i;
    [0, 1, 2, 3].map(|j| packed_word(packed, b + j))
}

/// Whether `track` is stored verbatim: its values offset at or past
/// `verbatim_start` (WGSL `is_verbatim`, with the override
/// `VERBATIM_START`).
#[must_use]
pub(crate) fn is_verbatim(track: &GpuTrack, verbatim_start: u32) -> bool {
    track.values_offset >= verbatim_start
}

/// Words `i .. i + 3`.
#[must_use]
pub(crate) fn packed_window(packed: &[u32], i: u32) -> [u32; 4] {
    [
        packed_word(packed, i),
        packed_word(packed, i + 1),
        packed_word(packed, i + 2),
        packed_word(packed, i + 3),
    ]
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

/// Bits `[at, at + count)` of the 128 bits `w[3]:w[2]:w[1]:w[0]`
/// (`count` up to 32, `at + count` up to 128; a field that would end past
/// bit 128 is garbage, as the shader's, and unused).
#[must_use]
pub(crate) fn field128(w: [u32; 4], at: u32, count: u32) -> u32 {
    let j = (at >> 5).min(3) as usize;
    let lo = w[j];
    let hi = w[(j + 1).min(3)];
    let v = ((u64::from(hi) << 32) | u64::from(lo)) >> (at & 31);
    low_bits(v as u32, count)
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

/// The value stream of `track`, whose header's first two words are
/// `info` and `step`; a verbatim track's elements at its values offset.
#[must_use]
pub(crate) fn value_stream(track: &GpuTrack, verbatim_start: u32, info: u32, step: u32) -> Stream {
    let pad = ((track.width + 3) >> 2) << 2;
    let tangents = if track.interpolation == INTERP_CUBICSPLINE {
        pad
    } else {
        0
    };
    let encoding = info & 0xff;
    let bits = (info >> 8) & 0xff;
    let offsets = track.values_offset + COMPRESS_HEADER_WORDS;
    let data = if is_verbatim(track, verbatim_start) {
        track.values_offset
    } else {
        offsets + pad + frame_words(encoding) + tangents
    };
    Stream {
        offsets,
        data,
        encoding,
        bits,
        stride: element_stride(encoding, bits, track.width),
        step: f32::from_bits(step),
    }
}

/// The tangent stream of a CUBICSPLINE `track` (header words `info` and
/// `step`, its third).
#[must_use]
pub(crate) fn tangent_stream(track: &GpuTrack, info: u32, step: u32, values: &Stream) -> Stream {
    let pad = ((track.width + 3) >> 2) << 2;
    let encoding = (info >> 16) & 0xff;
    let bits = info >> 24;
    let words = (track.key_count * values.stride + 31) >> 5;
    Stream {
        offsets: values.offsets + pad + frame_words(values.encoding),
        data: values.data + words,
        encoding,
        bits,
        stride: element_stride(encoding, bits, track.width),
        step: f32::from_bits(step),
    }
}

/// Components `0 .. 3` of the element of stream `s` that starts at bit
/// `at` of the window `w`, as four floats (those from `lanes` on 0), `o`
/// the offsets of those components. The shader decodes every encoding and selects; this
/// branches, with the same results.
#[must_use]
pub(crate) fn element_at(s: &Stream, w: [u32; 4], at: u32, o: [i32; 4], lanes: u32) -> Vec4 {
    let lane = |c: u32, v: f32| if c < lanes { v } else { 0.0 };
    let grid = |q: u32, offset: i32| (q as i32).wrapping_add(offset) as f32 * s.step;
    if s.encoding == ENC_FRAMED {
        let b = o[3] as u32;
        let (b0, b1, b2) = (b & 0xff, (b >> 8) & 0xff, (b >> 16) & 0xff);
        let x = grid(field128(w, at, b0), o[0]);
        let y = grid(field128(w, at + b0, b1), o[1]);
        let z = grid(field128(w, at + b0 + b1, b2), o[2]);
        return Vec4::new(x, y, z, (1.0 - (x * x + y * y + z * z)).max(0.0).sqrt());
    }
    if s.encoding == ENC_SMALLEST_THREE {
        let head = field128(w, at, 3);
        let idx = head & 3;
        let negative = (head & 4) != 0;
        let f0 = at + 3;
        let a = grid(field128(w, f0, s.bits), if idx == 0 { o[1] } else { o[0] });
        let b = grid(
            field128(w, f0 + s.bits, s.bits),
            if idx <= 1 { o[2] } else { o[1] },
        );
        let c = grid(
            field128(w, f0 + 2 * s.bits, s.bits),
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
    let q: [u32; 4] = std::array::from_fn(|c| field128(w, at + c as u32 * s.bits, s.bits));
    let v: [f32; 4] = std::array::from_fn(|c| {
        let value = if s.encoding == ENC_RAW {
            f32::from_bits(q[c])
        } else {
            grid(q[c], o[c])
        };
        lane(c as u32, value)
    });
    Vec4::from_array(v)
}

/// Components `0 .. 3` (the first `lanes`) of element `e` of stream `s`
/// and, where `moving`, of element `e + 1` (else element `e` again), `o`
/// the offsets of those components: element `e + 1` from element `e`'s
/// window where two elements fit in it (`2 stride <= 96`), else from its
/// own.
#[must_use]
pub(crate) fn stream_pair(
    packed: &[u32],
    s: &Stream,
    e: u32,
    o: [i32; 4],
    lanes: u32,
    moving: bool,
) -> (Vec4, Vec4) {
    let at = e * s.stride;
    let w = packed_window(packed, s.data + (at >> 5));
    let a = element_at(s, w, at & 31, o, lanes);
    if !moving {
        return (a, a);
    }
    let next = at + s.stride;
    let b = if 2 * s.stride <= 96 {
        element_at(s, w, (at & 31) + s.stride, o, lanes)
    } else {
        element_at(
            s,
            packed_window(packed, s.data + (next >> 5)),
            next & 31,
            o,
            lanes,
        )
    };
    (a, b)
}

/// The offsets of components `0 .. 3` of stream `s` (zeros for a raw
/// stream).
#[must_use]
pub(crate) fn stream_offsets(packed: &[u32], s: &Stream) -> [i32; 4] {
    if s.encoding == ENC_RAW {
        [0; 4]
    } else {
        packed4(packed, s.offsets >> 2).map(|w| w as i32)
    }
}

/// A rotation `r` in the frame of framed stream `s` as its key:
/// `left * r * right`.
#[must_use]
pub(crate) fn in_frame(packed: &[u32], s: &Stream, r: Vec4) -> Vec4 {
    let left = Vec4::from_array(packed4(packed, (s.offsets >> 2) + 1).map(f32::from_bits));
    let right = Vec4::from_array(packed4(packed, (s.offsets >> 2) + 2).map(f32::from_bits));
    quat_mul(quat_mul(left, r), right)
}

/// Component `c` of element `e` of a vector or raw stream `s` (components
/// past the fourth of morph weights).
#[must_use]
pub(crate) fn stream_component(packed: &[u32], s: &Stream, e: u32, c: u32) -> f32 {
    let bit = e * s.stride + c * s.bits;
    let word = s.data + (bit >> 5);
    let w = [
        packed_word(packed, word),
        packed_word(packed, word + 1),
        0,
        0,
    ];
    let q = field128(w, bit & 31, s.bits);
    if s.encoding == ENC_RAW {
        return f32::from_bits(q);
    }
    (q as i32 + packed_word(packed, s.offsets + c) as i32) as f32 * s.step
}

/// The segment of `time` in a compressed track's uniform key times
/// (`lookup_scale < 0`): `u = (time - t_0) * rate`; on key `round(u)`
/// where `u` is within [`RATE_SNAP`] of it, else `k = floor(u)`,
/// `t = u - k`; exact before the first key, at or after the last, and on
/// a key. `dt` is the block header's, 0 for a verbatim track.
#[must_use]
pub(crate) fn rate_segment(
    packed: &[u32],
    verbatim_start: u32,
    track: &GpuTrack,
    time: f32,
) -> Segment {
    let last = track.key_count - 1;
    let u = (time - track.lookup_origin) * -track.lookup_scale;
    let nearest = (u + 0.5).floor();
    let on_key = (u - nearest).abs() <= u.max(1.0) * RATE_SNAP;
    let kf = if on_key { nearest } else { u.floor() };
    // WGSL: u32(clamp(kf, 0.0, f32(last)))
    let k = kf.clamp(0.0, last as f32) as u32;
    let t = u - kf;
    let dt = if is_verbatim(track, verbatim_start) {
        0.0
    } else {
        f32::from_bits(packed_word(packed, track.values_offset + 3))
    };
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
/// compressed library (WGSL `sample_compressed`), into `out[..width]`:
/// components 0 to 3 as four floats, the others (morph weights) one at a
/// time. Rows from `verbatim_start` on are verbatim.
pub(crate) fn sample_compressed(
    packed: &[u32],
    verbatim_start: u32,
    track: &GpuTrack,
    seg: Segment,
    out: &mut [f32],
) {
    let cubic = track.interpolation == INTERP_CUBICSPLINE;
    let stepped = track.interpolation == INTERP_STEP;
    let moving = !(seg.exact || stepped);
    let rotation = track.kind == KIND_ROTATION;
    let width = track.width;
    // A verbatim track has no header: raw streams read no step.
    let h = if is_verbatim(track, verbatim_start) {
        [VERBATIM_META, 0, 0, 0]
    } else {
        packed4(packed, track.values_offset >> 2)
    };
    let vs = value_stream(track, verbatim_start, h[0], h[1]);
    let (k, t) = (seg.k, seg.t);
    let lanes = width.min(4);
    let (v0, v1) = stream_pair(packed, &vs, k, stream_offsets(packed, &vs), lanes, moving);
    // WGSL: a framed stream's rotations slerp in their frame, put in it
    // once; the spline takes the keys themselves.
    let framed = vs.encoding == ENC_FRAMED;
    let mut v = v0;
    if moving && cubic {
        let ts = tangent_stream(track, h[0], h[2], &vs);
        let v1 = if framed {
            v = in_frame(packed, &vs, v);
            in_frame(packed, &vs, v1)
        } else {
            v1
        };
        let (b0, a1) = stream_pair(
            packed,
            &ts,
            2 * k + 1,
            stream_offsets(packed, &ts),
            lanes,
            true,
        );
        // WGSL hermite4: hermite's operations on each component.
        for c in 0..4 {
            v[c] = hermite(v[c], b0[c], v1[c], a1[c], t, seg.dt);
        }
        if rotation {
            v = quat_normalize(v);
        }
    } else {
        if moving && rotation {
            v = quat_slerp(v, v1, t);
        } else if moving {
            v = (1.0 - t) * v + t * v1;
        }
        if framed {
            v = in_frame(packed, &vs, v);
        }
    }
    for c in 0..lanes as usize {
        out[c] = v[c];
    }
    for c in 4..width {
        let mut x = stream_component(packed, &vs, k, c);
        if moving && cubic {
            let ts = tangent_stream(track, h[0], h[2], &vs);
            x = hermite(
                x,
                stream_component(packed, &ts, 2 * k + 1, c),
                stream_component(packed, &vs, k + 1, c),
                stream_component(packed, &ts, 2 * k + 2, c),
                t,
                seg.dt,
            );
        } else if moving {
            x = (1.0 - t) * x + t * stream_component(packed, &vs, k + 1, c);
        }
        out[c as usize] = x;
    }
}
