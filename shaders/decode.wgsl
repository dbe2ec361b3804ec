// Compressed tracks: the sampler's reads of a compressed library's packed
// words (the format: src/model/compressed.rs). Built after sample.wgsl in
// the sample module. Every function here is reached only where the
// override COMPRESSED is set (a compressed library's pipelines), so an
// uncompressed pipeline compiles sample.wgsl's code alone.
// CPU twin: src/cpu/decode.rs, function by function.

// Whether the library is compressed: every track row's values_offset is
// then the first word of its block in `packed` (a multiple of 4), or of
// its words where it is verbatim (VERBATIM_START), and a row with
// lookup_scale < 0 has uniform key times (key k at lookup_origin + k /
// -lookup_scale) and no search texels.
override COMPRESSED: bool = false;

// The first word of a compressed library's verbatim tracks in `packed`,
// after every block: a row whose values_offset is at least this has no
// block, its values are f32s from values_offset (width a key), then for
// CUBICSPLINE its tangents (in-tangent, out-tangent a key), and the
// decoder takes VERBATIM_META for its header (is_verbatim). Such a row's
// uniform key times (a rate) have no key interval: it has one key, or it
// is not CUBICSPLINE.
override VERBATIM_START: u32 = 4294967295u;

// Whether `track` is stored verbatim (VERBATIM_START).
fn is_verbatim(track: Track) -> bool {
    return track.values_offset >= VERBATIM_START;
}

// Whether every row of a compressed library's dispatch has uniform key
// times: every search is done before it starts (rate_segment), and the
// search loop is compiled out.
override UNIFORM_TIMES: bool = false;

// Whether some row of a compressed library's dispatch has more than 4
// components (morph weights): sample_compressed's loop over the
// components past the fourth is left out where none has (the CPU
// adapters run a loop's body, its loads and decodes, at least once).
override WIDE_ROWS: bool = true;

// The encodings of the dispatch's compressed streams, bit 1 << ENC_*
// (the host's, per dispatch; every one by default): element_at compiles
// in only theirs, not every encoding's arithmetic.
override ENCODINGS: u32 = 15u;

// Whether a compressed library's block heads are read from their uniform
// copies (the clip-blocks plan on CPU adapters): a window of DECODE_HEAD
// rows from BlockParams.head_first, where row r is at i = r - head_first:
// its [meta, value step, values offset, key count] and its value
// stream's first four offsets in decode_heads[2i], [2i + 1], a framed
// value stream's left and right in decode_frames[2i], [2i + 1]. Every
// lane of a clip-blocks workgroup samples the same row, so these reads
// are at workgroup-uniform indices (plan/cpu_adapter.rs, uniform_heads,
// says when the plan uses them). A Track's times_offset is then i
// (block_track).
override HEADS_IN_UNIFORM: bool = false;
@group(0) @binding(18) var<uniform> decode_heads: array<vec4<u32>, 2u * DECODE_HEAD>;
@group(0) @binding(19) var<uniform> decode_frames: array<vec4<f32>, 2u * DECODE_HEAD>;

// Vec4 i (0 or 1) of the uniform head at place r of the window.
fn decode_head(r: u32, i: u32) -> vec4<u32> {
    return decode_heads[2u * min(r, DECODE_HEAD - 1u) + i];
}

// Whether some stream of the dispatch has encoding e.
fn has_encoding(e: u32) -> bool {
    return (ENCODINGS & (1u << e)) != 0u;
}

// The packed words (the values buffer, bound as vec4<u32>s): a block per
// track, then 8 words of zeros (packed_window reads up to 3 words past the
// last word of a stream).
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

// Word i of the packed words. The reads here load each word they use on
// its own, and the words only some lanes need are loaded in a branch.
fn packed_word(i: u32) -> u32 {
    return packed[i >> 2u][i & 3u];
}

// Words i .. i + 3, each loaded alone (four words, where the two vec4s
// that hold them would be eight).
fn packed_window(i: u32) -> vec4<u32> {
    return vec4<u32>(packed_word(i), packed_word(i + 1u), packed_word(i + 2u), packed_word(i + 3u));
}

// The low `count` bits of v (count up to 32).
fn low_bits(v: u32, count: u32) -> u32 {
    return select(v & ((1u << (count & 31u)) - 1u), v, count >= 32u);
}

// Bits [at, at + count) of the 128 bits w.w:w.z:w.y:w.x (count up to 32,
// at + count up to 128): the word holding bit `at` shifted down, the next
// word's low bits above it ((hi << 1) << (31 - s): nothing when s is 0).
// A field that would end past bit 128 comes out as garbage, never out of
// range.
fn field128(w: vec4<u32>, at: u32, count: u32) -> u32 {
    let j = at >> 5u;
    let s = at & 31u;
    let lo = select(select(w.x, w.y, j == 1u), select(w.z, w.w, j >= 3u), j >= 2u);
    let hi = select(select(w.y, w.z, j == 1u), w.w, j >= 2u);
    return low_bits((lo >> s) | ((hi << 1u) << (31u - s)), count);
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

// The value stream of `track`, whose header's first two words are `info`
// and `step` (the header: [info, value step, tangent step, dt]): its
// offsets after the header, its elements after the offsets of both
// streams (each padded to a multiple of 4 words); a verbatim track's
// elements at its values_offset (info is then VERBATIM_META: raw, no
// offsets read).
fn value_stream(track: Track, info: u32, step: u32) -> Stream {
    let pad = ((track.width + 3u) >> 2u) << 2u;
    let tangents = select(0u, pad, track.interpolation == INTERP_CUBICSPLINE);
    let encoding = info & 0xffu;
    let bits = (info >> 8u) & 0xffu;
    let offsets = track.values_offset + COMPRESS_HEADER_WORDS;
    let data = select(offsets + pad + frame_words(encoding) + tangents, track.values_offset,
        is_verbatim(track));
    return Stream(offsets, data, encoding, bits, element_stride(encoding, bits, track.width),
        bitcast<f32>(step));
}

// The tangent stream of a CUBICSPLINE `track` (header words `info` and
// `step`, its third): its offsets after the value offsets, its elements
// after the value elements.
fn tangent_stream(track: Track, info: u32, step: u32, values: Stream) -> Stream {
    let pad = ((track.width + 3u) >> 2u) << 2u;
    let encoding = (info >> 16u) & 0xffu;
    let bits = info >> 24u;
    let words = (track.key_count * values.stride + 31u) >> 5u;
    return Stream(values.offsets + pad + frame_words(values.encoding), values.data + words, encoding, bits,
        element_stride(encoding, bits, track.width), bitcast<f32>(step));
}

// Components 0 .. 3 of the element of stream s that starts at bit `at`
// of the window w of its words (at + its bits up to 128), as a vec4
// (components outside `lanes` 0), o the offsets of those components: raw
// f32s; a smallest-three rotation (the dropped component
// sqrt(max(0, 1 - (a a + b b + c c))), its sign from its bit); or
// quantized components f32(field + offset) * step, exact (the grid step
// is a power of two and |field + offset| <= 2^24); or a framed rotation in
// its frame (framed_element). A dispatch of framed streams alone, or of
// vectors and raw streams alone (ENCODINGS), decodes theirs; otherwise
// one path for every encoding, the result selected by it (the CPU
// adapters would run a branch per encoding anyway); the other encodings'
// fields are garbage and selected away.
fn element_at(s: Stream, w: vec4<u32>, at: u32, o: vec4<i32>, lanes: vec4<bool>) -> vec4<f32> {
    if (ENCODINGS == (1u << ENC_FRAMED)) {
        return framed_element(s, w, at, o);
    }
    if (!has_encoding(ENC_SMALLEST_THREE) && !has_encoding(ENC_FRAMED)) {
        return vector_element(s, w, at, o, lanes);
    }
    let three = s.encoding == ENC_SMALLEST_THREE;
    let f0 = at + select(0u, 3u, three);
    let q = vec4<u32>(field128(w, f0, s.bits), field128(w, f0 + s.bits, s.bits),
        field128(w, f0 + 2u * s.bits, s.bits), field128(w, f0 + 3u * s.bits, s.bits));
    let g = vec4<f32>(bitcast<vec4<i32>>(q) + o) * s.step;
    let vector = select(vec4<f32>(0.0), select(g, bitcast<vec4<f32>>(q), s.encoding == ENC_RAW), lanes);
    let head = field128(w, at, 3u);
    let idx = head & 3u;
    let negative = (head & 4u) != 0u;
    let a = f32(i32(q.x) + select(o.x, o.y, idx == 0u)) * s.step;
    let b = f32(i32(q.y) + select(o.y, o.z, idx <= 1u)) * s.step;
    let c = f32(i32(q.z) + select(o.z, o.w, idx <= 2u)) * s.step;
    let d0 = sqrt(max(0.0, 1.0 - (a * a + b * b + c * c)));
    let d = select(d0, -d0, negative);
    let rotation = vec4<f32>(select(a, d, idx == 0u), select(select(b, a, idx == 0u), d, idx == 1u),
        select(select(c, b, idx < 2u), d, idx == 2u), select(c, d, idx == 3u));
    let framed = framed_element(s, w, at, o);
    return select(select(vector, rotation, three), framed, s.encoding == ENC_FRAMED);
}

// element_at of a vector or raw stream: its components (those of
// `lanes`), quantized or raw.
fn vector_element(s: Stream, w: vec4<u32>, at: u32, o: vec4<i32>, lanes: vec4<bool>) -> vec4<f32> {
    let q = vec4<u32>(field128(w, at, s.bits), field128(w, at + s.bits, s.bits),
        field128(w, at + 2u * s.bits, s.bits), field128(w, at + 3u * s.bits, s.bits));
    let g = vec4<f32>(bitcast<vec4<i32>>(q) + o) * s.step;
    return select(vec4<f32>(0.0), select(g, bitcast<vec4<f32>>(q), s.encoding == ENC_RAW), lanes);
}

// element_at of a framed stream: the rotation in its frame (x, y, z from
// fields of the bits in o.w, w from the unit length; in_frame gives the
// key).
fn framed_element(s: Stream, w: vec4<u32>, at: u32, o: vec4<i32>) -> vec4<f32> {
    let fb = vec3<u32>(u32(o.w) & 0xffu, (u32(o.w) >> 8u) & 0xffu, (u32(o.w) >> 16u) & 0xffu);
    let x = f32(i32(field128(w, at, fb.x)) + o.x) * s.step;
    let y = f32(i32(field128(w, at + fb.x, fb.y)) + o.y) * s.step;
    let z = f32(i32(field128(w, at + fb.x + fb.y, fb.z)) + o.z) * s.step;
    return vec4<f32>(x, y, z, sqrt(max(0.0, 1.0 - (x * x + y * y + z * z))));
}

// A rotation r in the frame of `track`'s framed value stream s as the key
// it stands for: left * r * right.
fn in_frame(track: Track, s: Stream, r: vec4<f32>) -> vec4<f32> {
    var left: vec4<f32>;
    var right: vec4<f32>;
    if (HEADS_IN_UNIFORM) {
        let i = 2u * min(track.times_offset, DECODE_HEAD - 1u);
        left = decode_frames[i];
        right = decode_frames[i + 1u];
    } else {
        left = bitcast<vec4<f32>>(packed[(s.offsets >> 2u) + 1u]);
        right = bitcast<vec4<f32>>(packed[(s.offsets >> 2u) + 2u]);
    }
    return quat_mul(quat_mul(left, r), right);
}

struct Elements {
    a: vec4<f32>,
    b: vec4<f32>,
}

// Components 0 .. 3 (those of `lanes`) of element e of stream s and,
// where `moving`, of element e + 1 (else element e again), o the offsets
// of those components (zeros for raw streams). Element e is decoded from
// the window of its first bit's word; element e + 1 from the same window
// where two elements fit in it from any bit (2 stride <= 96:
// smallest-three rotations, vectors of up to 48 bits), else from its own
// window, whose words are loaded only on the lanes that need them. One
// decode per element: the window and the bit are selected, not the
// decode branched on.

fn stream_pair(s: Stream, e: u32, o: vec4<i32>, lanes: vec4<bool>, moving: bool) -> Elements {
    let at = e * s.stride;
    let w = packed_window(s.data + (at >> 5u));
    let a = element_at(s, w, at & 31u, o, lanes);
    var b = a;
    if (moving) {
        let fits = 2u * s.stride <= 96u;
        let next = at + s.stride;
        var wb = w;
        if (!fits) {
            wb = packed_window(s.data + (next >> 5u));
        }
        b = element_at(s, wb, select(next & 31u, (at & 31u) + s.stride, fits), o, lanes);
    }
    return Elements(a, b);
}

// The offsets of components 0 .. 3 of stream s: zeros for a raw stream,
// whose offsets are not read.
fn stream_offsets(s: Stream) -> vec4<i32> {
    var o = vec4<i32>(0);
    if (s.encoding != ENC_RAW) {
        o = bitcast<vec4<i32>>(packed[s.offsets >> 2u]);
    }
    return o;
}

// Component c of element e of a vector or raw stream s (components past
// the fourth of morph weights).
fn stream_component(s: Stream, e: u32, c: u32) -> f32 {
    let bit = e * s.stride + c * s.bits;
    let word = s.data + (bit >> 5u);
    let w = vec4<u32>(packed_word(word), packed_word(word + 1u), 0u, 0u);
    let q = field128(w, bit & 31u, s.bits);
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
// is the block header's (0 for a verbatim track, which has no header and
// whose spline never reads it).
fn rate_segment(track: Track, time: f32) -> Segment {
    let last = track.key_count - 1u;
    let u = (time - track.lookup_origin) * -track.lookup_scale;
    let nearest = floor(u + 0.5);
    let on_key = abs(u - nearest) <= max(u, 1.0) * RATE_SNAP;
    let kf = select(floor(u), nearest, on_key);
    let k = u32(clamp(kf, 0.0, f32(last)));
    let t = u - kf;
    var dt = 0.0;
    if (!is_verbatim(track)) {
        dt = bitcast<f32>(packed_word(track.values_offset + 3u));
    }
    if (u <= 0.0 || kf >= f32(last) || on_key) {
        return Segment(k, 0.0, dt, true);
    }
    return Segment(k, t, dt, false);
}

// sample_segment for a compressed library, the one path every plan
// takes: the track's header once, then its first four components as
// vec4s (key k's element, and where moving key k + 1's, for CUBICSPLINE
// also the out-tangent of k and the in-tangent of k + 1: stream_pair),
// the components past the fourth (wider morph weights) one at a time,
// with sample_segment's rules: key k's value as is when not moving (STEP,
// on a key, clamped); for LINEAR rotations the slerp, for CUBICSPLINE the
// spline (rotations normalized), otherwise the blend, written out for up
// to four components with no loop over groups of four.
fn sample_compressed(track: Track, seg: Segment, out: u32) {
    let spline_group = GROUP == GROUP_CUBIC || GROUP == GROUP_CUBIC_ROTATION;
    let cubic = spline_group || (GROUP == GROUP_ALL && track.interpolation == INTERP_CUBICSPLINE);
    let stepped = GROUP == GROUP_STEP || (GROUP == GROUP_ALL && track.interpolation == INTERP_STEP);
    let moving = !(seg.exact || stepped);
    var rotation = track.kind == KIND_ROTATION;
    // Rotations have four components: a rotation group's dispatch has no
    // components past the fourth.
    var width = track.width;
    if (GROUP == GROUP_SLERP || GROUP == GROUP_CUBIC_ROTATION) {
        rotation = true;
        width = 4u;
    } else if (GROUP == GROUP_CUBIC) {
        rotation = false;
    }
    // The header [meta, value step, tangent step, dt] and the value
    // offsets, from the uniform copies where HEADS_IN_UNIFORM (without the
    // tangent step, which the spline reads from the header); a verbatim
    // track's meta is VERBATIM_META (raw streams read no step and no
    // offsets).
    let verbatim = is_verbatim(track);
    var h: vec4<u32>;
    if (HEADS_IN_UNIFORM) {
        h = vec4<u32>(decode_head(track.times_offset, 0u).xy, 0u, 0u);
    } else if (!verbatim) {
        h = packed[track.values_offset >> 2u];
    }
    if (verbatim) {
        h.x = VERBATIM_META;
    }
    let vs = value_stream(track, h.x, h.y);
    var offsets: vec4<i32>;
    if (HEADS_IN_UNIFORM) {
        offsets = bitcast<vec4<i32>>(decode_head(track.times_offset, 1u));
    } else {
        offsets = stream_offsets(vs);
    }
    if (HEADS_IN_UNIFORM && cubic && !verbatim) {
        h.z = packed_word(track.values_offset + 2u);
    }
    let k = seg.k;
    let t = seg.t;
    let lanes = vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(width);
    let e = stream_pair(vs, k, offsets, lanes, moving);
    // A framed stream's elements are rotations in its frame: the slerp of
    // two of them, put in the frame once, is the keys' slerp (the frame
    // keeps dot products); the spline takes the keys themselves.
    let framed = has_encoding(ENC_FRAMED) && vs.encoding == ENC_FRAMED;
    var v = e.a;
    if (moving && cubic) {
        let ts = tangent_stream(track, h.x, h.z, vs);
        let g = stream_pair(ts, 2u * k + 1u, stream_offsets(ts), lanes, true);
        var b = e.b;
        if (framed) {
            v = in_frame(track, vs, v);
            b = in_frame(track, vs, b);
        }
        v = hermite4(v, g.a, b, g.b, t, seg.dt);
        if (rotation) {
            v = quat_normalize(v);
        }
    } else {
        if (moving && rotation) {
            v = quat_slerp(v, e.b, t);
        } else if (moving) {
            v = (1.0 - t) * v + t * e.b;
        }
        if (framed) {
            v = in_frame(track, vs, v);
        }
    }
    for (var c = 0u; c < min(width, 4u); c++) {
        output[out + c] = v[c];
    }
    if (!WIDE_ROWS) {
        return;
    }
    for (var c = 4u; c < width; c++) {
        var x = stream_component(vs, k, c);
        if (moving && cubic) {
            let ts = tangent_stream(track, h.x, h.z, vs);
            x = hermite(x, stream_component(ts, 2u * k + 1u, c), stream_component(vs, k + 1u, c),
                stream_component(ts, 2u * k + 2u, c), t, seg.dt);
        } else if (moving) {
            x = (1.0 - t) * x + t * stream_component(vs, k + 1u, c);
        }
        output[out + c] = x;
    }
}
