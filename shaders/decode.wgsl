// Compressed tracks: the sampler's reads of a compressed library's packed
// words (the format: src/model/compressed.rs). Built after sample.wgsl in
// the sample module. Every function here is reached only where the
// override COMPRESSED is set (a compressed library's pipelines), so an
// uncompressed pipeline compiles sample.wgsl's code alone.
// CPU twin: src/cpu/decode.rs, function by function.

// Whether the library is compressed: every track row's values_offset is
// then the first word of its block in `packed` (a multiple of 4), and a
// row with lookup_scale < 0 has uniform key times (key k at lookup_origin
// + k / -lookup_scale) and no search texels.
override COMPRESSED: bool = false;

// The packed words (the values buffer, bound as vec4<u32>s): a block per
// track, then 8 words of zeros (packed_window reads up to 7 words past the
// word it is given).
@group(0) @binding(17) var<storage, read> packed: array<vec4<u32>>;

// One stream of a track's block: the value elements, or the CUBICSPLINE
// tangents (in-tangent, out-tangent per key).
struct Stream {
    offsets: u32,    // word of its first per-component offset (a multiple of 4)
    data: u32,       // word of its first element
    encoding: u32,   // ENC_*
    bits: u32,       // bits per component field
    stride: u32,     // bits per element
    step: f32,       // the grid step, a power of two
}

// Word i of the packed words.
fn packed_word(i: u32) -> u32 {
    return packed[i >> 2u][i & 3u];
}

// Words i .. i + 3, from the two vec4s that hold them.
fn packed_window(i: u32) -> vec4<u32> {
    let a = packed[i >> 2u];
    let b = packed[(i >> 2u) + 1u];
    let r = i & 3u;
    let low = select(a, vec4<u32>(a.yzw, b.x), r == 1u);
    let high = select(vec4<u32>(a.zw, b.xy), vec4<u32>(a.w, b.xyz), r == 3u);
    return select(low, high, r >= 2u);
}

// The low `count` bits of v (count up to 32).
fn low_bits(v: u32, count: u32) -> u32 {
    return select(v & ((1u << (count & 31u)) - 1u), v, count >= 32u);
}

// Bits [at, at + count) of the 64 bits hi:lo (at + count up to 64).
fn bits64(lo: u32, hi: u32, at: u32, count: u32) -> u32 {
    let s = at & 31u;
    let low = (lo >> s) | select(0u, hi << ((32u - s) & 31u), s != 0u);
    return low_bits(select(low, hi >> s, at >= 32u), count);
}

// Bits [at, at + count) of the 96 bits w.z:w.y:w.x (count up to 32).
fn field96(w: vec3<u32>, at: u32, count: u32) -> u32 {
    let j = at >> 5u;
    let lo = select(select(w.x, w.y, j == 1u), w.z, j >= 2u);
    let hi = select(select(w.y, w.z, j == 1u), 0u, j >= 2u);
    return bits64(lo, hi, at & 31u, count);
}

// The 96 bits of stream s from bit `bit` of its data on (an element is at
// most 96 bits).
fn stream_bits(s: Stream, bit: u32) -> vec3<u32> {
    let w = packed_window(s.data + (bit >> 5u));
    let sh = bit & 31u;
    return vec3<u32>(bits64(w.x, w.y, sh, 32u), bits64(w.y, w.z, sh, 32u), bits64(w.z, w.w, sh, 32u));
}

// Bits per element of a stream of `width` components.
fn element_stride(encoding: u32, bits: u32, width: u32) -> u32 {
    let vector = select(width * bits, bits, encoding == ENC_FRAMED);
    return select(vector, 3u + 3u * bits, encoding == ENC_SMALLEST_THREE);
}

// Words of a stream's frame after its offsets (framed streams only).
fn frame_words(encoding: u32) -> u32 {
    return select(0u, FRAME_WORDS, encoding == ENC_FRAMED);
}

// The value stream of `track`, whose header is h = [meta, value step,
// tangent step, dt]: its offsets after the header, its elements after the
// offsets of both streams (each padded to a multiple of 4 words).
fn value_stream(track: Track, h: vec4<u32>) -> Stream {
    let pad = ((track.width + 3u) >> 2u) << 2u;
    let tangents = select(0u, pad, track.interpolation == INTERP_CUBICSPLINE);
    let encoding = h.x & 0xffu;
    let bits = (h.x >> 8u) & 0xffu;
    let offsets = track.values_offset + COMPRESS_HEADER_WORDS;
    return Stream(offsets, offsets + pad + frame_words(encoding) + tangents, encoding, bits,
        element_stride(encoding, bits, track.width), bitcast<f32>(h.y));
}

// The tangent stream of a CUBICSPLINE `track`: its offsets after the value
// offsets, its elements after the value elements.
fn tangent_stream(track: Track, h: vec4<u32>, values: Stream) -> Stream {
    let pad = ((track.width + 3u) >> 2u) << 2u;
    let encoding = (h.x >> 16u) & 0xffu;
    let bits = h.x >> 24u;
    let words = (track.key_count * values.stride + 31u) >> 5u;
    return Stream(values.offsets + pad + frame_words(values.encoding), values.data + words, encoding, bits,
        element_stride(encoding, bits, track.width), bitcast<f32>(h.z));
}

// Element e of stream s of a track of `width` (at most 4) components, as a
// vec4 (components past the width 0): raw f32s; a smallest-three rotation
// (the dropped component sqrt(max(0, 1 - (a a + b b + c c))), its sign
// from its bit); or quantized components f32(field + offset) * step, exact
// (the grid step is a power of two and |field + offset| <= 2^24).
fn stream_element(s: Stream, e: u32, width: u32) -> vec4<f32> {
    let lanes = vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(width);
    if (s.encoding == ENC_RAW) {
        return select(vec4<f32>(0.0), bitcast<vec4<f32>>(packed_window(s.data + e * width)), lanes);
    }
    let f = stream_bits(s, e * s.stride);
    let o = bitcast<vec4<i32>>(packed[s.offsets >> 2u]);
    if (s.encoding == ENC_FRAMED) {
        return in_frame(s, framed_element(s, e));
    }
    if (s.encoding == ENC_SMALLEST_THREE) {
        let idx = f.x & 3u;
        let negative = (f.x & 4u) != 0u;
        let a = f32(i32(field96(f, 3u, s.bits)) + select(o.x, o.y, idx == 0u)) * s.step;
        let b = f32(i32(field96(f, 3u + s.bits, s.bits)) + select(o.y, o.z, idx <= 1u)) * s.step;
        let c = f32(i32(field96(f, 3u + 2u * s.bits, s.bits)) + select(o.z, o.w, idx <= 2u)) * s.step;
        let d0 = sqrt(max(0.0, 1.0 - (a * a + b * b + c * c)));
        let d = select(d0, -d0, negative);
        return vec4<f32>(select(a, d, idx == 0u), select(select(b, a, idx == 0u), d, idx == 1u),
            select(select(c, b, idx < 2u), d, idx == 2u), select(c, d, idx == 3u));
    }
    let q = vec4<u32>(field96(f, 0u, s.bits), field96(f, s.bits, s.bits),
        field96(f, 2u * s.bits, s.bits), field96(f, 3u * s.bits, s.bits));
    return select(vec4<f32>(0.0), vec4<f32>(vec4<i32>(q) + o) * s.step, lanes);
}

// Element e of a framed stream s: the rotation r in the track's frame,
// x, y, z from fields whose bits sit in the offsets' fourth word, w from
// the unit length.
fn framed_element(s: Stream, e: u32) -> vec4<f32> {
    let f = stream_bits(s, e * s.stride);
    let o = bitcast<vec4<i32>>(packed[s.offsets >> 2u]);
    let b = vec3<u32>(u32(o.w) & 0xffu, (u32(o.w) >> 8u) & 0xffu, (u32(o.w) >> 16u) & 0xffu);
    let x = f32(i32(field96(f, 0u, b.x)) + o.x) * s.step;
    let y = f32(i32(field96(f, b.x, b.y)) + o.y) * s.step;
    let z = f32(i32(field96(f, b.x + b.y, b.z)) + o.z) * s.step;
    return vec4<f32>(x, y, z, sqrt(max(0.0, 1.0 - (x * x + y * y + z * z))));
}

// A rotation r in the frame of framed stream s as the key it stands for:
// left * r * right.
fn in_frame(s: Stream, r: vec4<f32>) -> vec4<f32> {
    let left = bitcast<vec4<f32>>(packed[(s.offsets >> 2u) + 1u]);
    let right = bitcast<vec4<f32>>(packed[(s.offsets >> 2u) + 2u]);
    return quat_mul(quat_mul(left, r), right);
}

// Component c of element e of a vector or raw stream s (tracks wider than
// 4 components: morph weights).
fn stream_component(s: Stream, e: u32, c: u32) -> f32 {
    let bit = e * s.stride + c * s.bits;
    let w = packed_window(s.data + (bit >> 5u));
    let q = low_bits(bits64(w.x, w.y, bit & 31u, 32u), s.bits);
    if (s.encoding == ENC_RAW) {
        return bitcast<f32>(q);
    }
    return f32(i32(q) + bitcast<i32>(packed_word(s.offsets + c))) * s.step;
}

// A time whose key position u is within RATE_SNAP * max(u, 1) of a whole
// number is on that key: (t_k - t_0) * rate computed in f32 from a key
// time t_k = k / 30 rounded to f32 can miss k by an ulp or two (k = 63
// gives 62.999996), which would give a STEP track key k - 1's value on
// its own key. 2^-21: a few ulps of u.
const RATE_SNAP: f32 = 4.76837158203125e-7;

// The segment of `time` in a compressed track's uniform key times
// (lookup_scale < 0): u = (time - t_0) * rate (one subtraction and one
// multiplication, the same on every device); on key round(u) where u is
// within RATE_SNAP of it, else k = floor(u) and t = u - k; exact before
// the first key, at or after the last and on a key. dt, the key interval,
// is the block header's.
fn rate_segment(track: Track, time: f32) -> Segment {
    let last = track.key_count - 1u;
    let u = (time - track.lookup_origin) * -track.lookup_scale;
    let nearest = floor(u + 0.5);
    let on_key = abs(u - nearest) <= max(u, 1.0) * RATE_SNAP;
    let kf = select(floor(u), nearest, on_key);
    let k = u32(clamp(kf, 0.0, f32(last)));
    let t = u - kf;
    let dt = bitcast<f32>(packed_word(track.values_offset + 3u));
    if (u <= 0.0 || kf >= f32(last) || on_key) {
        return Segment(k, 0.0, dt, true);
    }
    return Segment(k, t, dt, false);
}

// sample_segment for a compressed library, the one path every plan takes:
// the track's header once, then its elements decoded as vec4s (tracks of
// up to 4 components) or component by component (wider morph weights),
// with sample_segment's rules: key k's value as is when not moving (STEP,
// on a key, clamped); for LINEAR rotations the slerp, for CUBICSPLINE the
// spline (rotations normalized), otherwise the blend.
fn sample_compressed(track: Track, seg: Segment, out: u32) {
    let spline_group = GROUP == GROUP_CUBIC || GROUP == GROUP_CUBIC_ROTATION;
    let cubic = spline_group || (GROUP == GROUP_ALL && track.interpolation == INTERP_CUBICSPLINE);
    let stepped = GROUP == GROUP_STEP || (GROUP == GROUP_ALL && track.interpolation == INTERP_STEP);
    let moving = !(seg.exact || stepped);
    var rotation = track.kind == KIND_ROTATION;
    if (GROUP == GROUP_SLERP || GROUP == GROUP_CUBIC_ROTATION) {
        rotation = true;
    } else if (GROUP == GROUP_CUBIC) {
        rotation = false;
    }
    let h = packed[track.values_offset >> 2u];
    let vs = value_stream(track, h);
    let k = seg.k;
    let t = seg.t;
    if (moving && rotation && !cubic && vs.encoding == ENC_FRAMED) {
        // The slerp of two keys in one frame, put in the frame once: the
        // frame keeps dot products, so it is the keys' slerp.
        let v = in_frame(vs, quat_slerp(framed_element(vs, k), framed_element(vs, k + 1u), t));
        for (var c = 0u; c < 4u; c++) {
            output[out + c] = v[c];
        }
        return;
    }
    if (track.width <= 4u) {
        var v = stream_element(vs, k, track.width);
        if (moving && cubic) {
            let ts = tangent_stream(track, h, vs);
            v = hermite4(v, stream_element(ts, 2u * k + 1u, track.width),
                stream_element(vs, k + 1u, track.width), stream_element(ts, 2u * k + 2u, track.width),
                t, seg.dt);
            if (rotation) {
                v = quat_normalize(v);
            }
        } else if (moving && rotation) {
            v = quat_slerp(v, stream_element(vs, k + 1u, 4u), t);
        } else if (moving) {
            v = (1.0 - t) * v + t * stream_element(vs, k + 1u, track.width);
        }
        for (var c = 0u; c < track.width; c++) {
            output[out + c] = v[c];
        }
        return;
    }
    for (var c = 0u; c < track.width; c++) {
        var v = stream_component(vs, k, c);
        if (moving && cubic) {
            let ts = tangent_stream(track, h, vs);
            v = hermite(v, stream_component(ts, 2u * k + 1u, c), stream_component(vs, k + 1u, c),
                stream_component(ts, 2u * k + 2u, c), t, seg.dt);
        } else if (moving) {
            v = (1.0 - t) * v + t * stream_component(vs, k + 1u, c);
        }
        output[out + c] = v;
    }
}
