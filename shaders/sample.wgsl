// Stage "sample": key search + interpolation, one invocation per
// (instance, track). Built as prelude.wgsl + quat.wgsl + sample.wgsl.
// CPU twin: src/cpu/sample.rs.

// A key interval: the time is exactly on key k (exact = true, use v_k as
// is), or between keys k and k + 1 at factor t; dt = t_(k+1) - t_k.
struct Segment {
    k: u32,
    t: f32,
    dt: f32,
    exact: bool,
}

override GROUP: u32 = GROUP_ALL;
override HAS_SLERP: bool = GROUP == GROUP_SLERP || GROUP == GROUP_ALL;
override HAS_CUBIC: bool = GROUP == GROUP_CUBIC || GROUP == GROUP_CUBIC_ROTATION || GROUP == GROUP_ALL;
override HAS_BLEND: bool = GROUP == GROUP_BLEND || GROUP == GROUP_STEP || GROUP == GROUP_ALL;

// The key search's tables are textures (src/gpu/key_textures.rs): element
// i is texel (i & (2^ROW_SHIFT - 1), i >> ROW_SHIFT).
// Search texels (AnimationLibrary::key_windows): [p, bits of t_p, of
// t_(p+1), of t_(p+2)] per key p of each distinct key times, after the
// track's bucket texels when it has a bucket table.
@group(0) @binding(0) var key_windows: texture_2d<u32>;
@group(0) @binding(1) var<storage, read> values: array<f32>;
@group(0) @binding(3) var<storage, read> clips: array<Clip>;
@group(0) @binding(4) var<storage, read> instances: array<Instance>;
@group(0) @binding(5) var<uniform> params: Params;
@group(0) @binding(6) var<storage, read_write> output: array<f32>;
// Track row r in two texels (gpu::track_search_texels): 2r = [search_offset,
// key_count, bits of lookup_scale, bits of lookup_origin], 2r + 1 =
// [values_offset, output_offset, width, interpolation | kind << 16].
@group(0) @binding(8) var track_search: texture_2d<u32>;
// Clip c's track groups (gpu::clip_group_texels): texel
// c (SAMPLE_GROUPS + 1) + g = [first row, row count] of group g, of all the
// clip's rows for g = GROUP_ALL (= SAMPLE_GROUPS).
@group(0) @binding(7) var clip_groups: texture_2d<u32>;

// The clip-blocks plan's bindings (sample_blocks_main; it reads neither
// `clips`, `instances`, `params`, `clip_groups` nor `track_search`).
// Per instance, in clip order: [its index in the instance table (where its
// output block is), the bits of its clip-local time].
@group(0) @binding(9) var<storage, read> sorted_instances: array<vec2<u32>>;
// The block table, its first BLOCK_HEAD entries as a uniform too (the
// same buffer, bound twice), and the row table likewise.
@group(0) @binding(10) var<uniform> blocks_head: array<SampleBlock, BLOCK_HEAD>;
@group(0) @binding(11) var<storage, read> blocks: array<SampleBlock>;
@group(0) @binding(12) var<uniform> rows_head: array<SampleRow, ROW_HEAD>;
@group(0) @binding(13) var<storage, read> rows: array<SampleRow>;
@group(0) @binding(14) var<uniform> block_params: BlockParams;

// The values and the output again, as vec4s (the same buffers, bound a
// second time): read and written four floats at a time where ALIGNED4.
@group(0) @binding(15) var<storage, read> values4: array<vec4<f32>>;
@group(0) @binding(16) var<storage, read_write> output4: array<vec4<f32>>;

// Whether every track of the dispatch's group starts its values and its
// output at a multiple of 4 floats and is a multiple of 4 wide, with an
// output stride that is one too (rotations always are 4 wide; morph
// weights often are): values are then loaded and stored as vec4s, one
// storage access where there were four. The host decides per group.
override ALIGNED4: bool = false;

override ROW_SHIFT: u32 = KEY_TEXTURE_ROW_SHIFT;

// Whether every block (BLOCKS_IN_UNIFORM) and every row (ROWS_IN_UNIFORM)
// the sampler can hold fits in the uniform heads; the host decides from
// the capacity and the library, so no lane tests an index per frame.
override BLOCKS_IN_UNIFORM: bool = true;
// The dispatch's tracks per instance, its group's most rows in a clip
// (params.tracks_per_instance, as a constant): sample_main's invocations
// per instance; the clip-blocks plan samples them in runs of ROW_RUN.
override GROUP_ROWS: u32 = 1u;
override ROWS_IN_UNIFORM: bool = true;
// The track rows one invocation samples, consecutive rows of its
// instance: sample_main's 1, or 2 (plan::invocation_rows: a row pair,
// their searches side by side), the clip-blocks plan's run of up to 32
// (plan::block_row_run: the sorted entry read once for them all, the
// rows taken two at a time as in sample_main).
override ROW_RUN: u32 = 1u;

// The clip-blocks plan's run keys (src/run_keys.rs): where a run's rows'
// key searches start. 0: each row from its own bucket table or direct
// guess; 1: every row of the run has its first row's key times, whose one
// search is every row's; 2: from the run's bucket table, whose header texel
// is RUN_BASE + (the run's first row): [table offset, buckets, bits of
// lookup_scale, bits of lookup_origin]; per bucket TABLE_TEXELS texels of
// TABLE_BITS-bit entries, entry i the key whose search texel row i of the
// run starts from; 3: the same tables, with at most one key of any row in
// any bucket (the host doubles a run's buckets until that holds), so that
// the key the entry names or the next one is the answer: one step, no
// search loop (first_segment).
override RUN_KEYS: u32 = 0u;
// Whether the dispatch's runs are regular in segments (set by the host
// per group from GpuSampleRow::is_regular_run of every segment): each run
// is segments of REGULAR_SEGMENT consecutive rows from its first (0: the
// rows are read), row i of a segment having the values and output offsets
// (and where REGULAR_SEARCH the search offset) of the segment's first row
// plus i times its second's minus its first's, its other fields the first
// row's. sample_run then reads two rows per segment and computes the
// others (regular_row) instead of reading each (why:
// plan/cpu_adapter.rs). A
// group's rows are sorted by property, so a run holding rows of two
// properties (crowd_mixed's STEP group: translations, rotations, scales)
// is regular by segments where it is not as a whole. Without
// REGULAR_SEARCH each row's search offset is read, one gather (tracks
// indexed directly among tracks with bucket tables: their search texels
// take different space, so their offsets do not step evenly).
override REGULAR_SEGMENT: u32 = 0u;
override REGULAR_SEARCH: bool = true;
override TABLE_BITS: u32 = 8u;
override TABLE_TEXELS: u32 = 1u;
override RUN_BASE: u32 = 0u;

// Whether the library has tracks with a bucket table (lookup_scale >
// 0) and tracks indexed directly (lookup_scale < 0); the host sets them,
// and the search compiles out the path of a kind that no track has.
override HAS_TABLE: bool = true;
override HAS_DIRECT: bool = true;

fn texel(i: u32) -> vec2<u32> {
    return vec2<u32>(i & ((1u << ROW_SHIFT) - 1u), i >> ROW_SHIFT);
}

// Track row `row`, from its two texels of `track_search` (two texel
// fetches, one per texel).
fn track_row(row: u32) -> Track {
    let s = textureLoad(track_search, texel(2u * row), 0);
    let r = textureLoad(track_search, texel(2u * row + 1u), 0);
    return Track(0u, s.y, r.x, r.z, r.w & 0xffffu, r.w >> 16u, r.y, 0u, bitcast<f32>(s.z),
        bitcast<f32>(s.w), s.x);
}

// The segment of `time` given k, the largest key index with
// times[k] <= time (0 when time is before the first key), and the key times
// t0 = times[k] and t1 = times[min(k + 1, last)]: time <= t0 means clamped
// before the first key or exactly on key k; k == last means at or after
// the last key; otherwise time is strictly inside (t0, t1).
fn segment_of(k: u32, last: u32, t0: f32, t1: f32, time: f32) -> Segment {
    return segment_at(k, t0, t1, time, k >= last);
}

// segment_of with `end` standing for k >= last: exact when time <= t0 or
// at the end. CPU twin: cpu::sample::segment_at.
fn segment_at(k: u32, t0: f32, t1: f32, time: f32, end: bool) -> Segment {
    let dt = t1 - t0;
    if (time <= t0 || end) {
        return Segment(k, 0.0, dt, true);
    }
    return Segment(k, (time - t0) / dt, dt, false);
}

// The bucket of `time` in a bucket table of `buckets` buckets from t0,
// `scale` buckets per second. Mirrored, and used to build the tables, by
// cpu::lookup_bucket.
fn lookup_bucket(time: f32, t0: f32, scale: f32, buckets: u32) -> u32 {
    let last = buckets - 1u;
    return min(u32(clamp((time - t0) * scale, 0.0, f32(last))), last);
}

// The key search (find_segment_track): finds the key interval of time
// `time` in a track's keys: k, the largest key index with times[k] <= time
// (0 when there is none), and its segment.
//
// Every step reads one search texel [p, t_p, t_(p+1), t_(p+2)] and
// compares the time with its three key times: below t_p, k is before p;
// at or after t_(p+2), k is after p + 1; otherwise k is p or p + 1 and the
// texel holds both of the segment's key times. The first texel tried is
// the one the track's bucket table names for the time's bucket (irregular
// keys, lookup_scale > 0: with 2 (n - 1) buckets over [t_0, t_last] the
// answer is its key or the next one unless two keys share a bucket),
// that of the direct guess c = (time - t_0) * |s| (uniform keys,
// lookup_scale < 0), or the middle key's. A miss steps to the texel next
// to the first, then bisects what the comparisons left [lo, hi]. The
// comparisons are with the key times themselves, so the result is the
// full search's on any device, whatever the first guess (a device that
// rounds the bucket otherwise only takes longer). One texel read per step
// and one loop, the first try inside it (no read before the loop).
//
// A search in progress: the key range [lo, hi] left, the texel to read
// next, whether that is the first guess, and once done its segment.
struct Search {
    lo: u32,
    hi: u32,
    idx: u32,
    first: bool,
    done: bool,
    seg: Segment,
}

// The first texel of a track's search texels that holds a key's window
// (they follow the bucket texels of a track with a table, which a
// pipeline without HAS_TABLE still finds, and bisects).
fn key_texels(track: Track) -> u32 {
    return track.search_offset + select(0u, 2u * (track.key_count - 1u), track.lookup_scale > 0.0);
}

// The search of `time` in `track`'s keys before its first step: the
// whole key range, the first guess as the texel to read. A compressed
// track with uniform key times has no texels: its search is done before
// it starts (rate_segment).
fn search_start(track: Track, time: f32) -> Search {
    let last = track.key_count - 1u;
    let keys = key_texels(track);
    if (COMPRESSED && track.lookup_scale < 0.0) {
        return Search(0u, last, keys, true, true, rate_segment(track, time));
    }
    var idx = keys + last / 2u;
    if (HAS_TABLE && track.lookup_scale > 0.0) {
        idx = track.search_offset + lookup_bucket(time, track.lookup_origin, track.lookup_scale, 2u * last);
    } else if (HAS_DIRECT && track.lookup_scale < 0.0) {
        idx = keys + min(u32(clamp((time - track.lookup_origin) * -track.lookup_scale, 0.0, f32(last))), last);
    }
    return Search(0u, last, idx, true, false, Segment(0u, 0.0, 0.0, true));
}

// One step of the search: the comparisons with texel `w` (the one at
// `search.idx`), which either end it or narrow it and name the next texel.
fn search_step(track: Track, time: f32, w: vec4<u32>, search: Search) -> Search {
    var s = search;
    let last = track.key_count - 1u;
    let p = w.x;
    let tp = bitcast<f32>(w.y);
    let ta = bitcast<f32>(w.z);
    let tb = bitcast<f32>(w.w);
    let below = time < tp && p > 0u;
    let above = time >= tb && p + 2u <= last && !below;
    if (!(below || above)) {
        // k is p or p + 1 (p when before the first key or p is last).
        let second = time >= ta && p < last;
        let k = select(p, p + 1u, second);
        s.seg = segment_of(k, last, select(tp, ta, second), select(ta, tb, second), time);
        s.done = true;
        return s;
    }
    s.hi = select(s.hi, p - 1u, below);
    s.lo = select(s.lo, p + 2u, above);
    // After the first miss the neighbour (the guess was near), then the
    // middle of [lo, hi].
    let near = select(s.lo, max(s.hi, s.lo + 1u) - 1u, below);
    s.idx = key_texels(track) + select(s.lo + (s.hi - s.lo) / 2u, near, s.first);
    s.first = false;
    return s;
}

// The segment of `time` from search texel `w` of key `p` (w = [p, t_p,
// t_(p+1), t_(p+2)], indices clamped to the last key), when the answer is
// known to be p or p + 1 and p is before the last key: the search step's
// decision without its miss arithmetic and without the key count (run
// keys of mode 3; the host proves the precondition for every time of every
// bucket and keeps p before the last key). Past the last key the texel's
// two last times are equal, so a zero interval marks the exact end where
// segment_of tests k >= last. CPU twin: cpu::sample::first_segment.
fn first_segment(p: u32, w: vec4<u32>, time: f32) -> Segment {
    let tp = bitcast<f32>(w.y);
    let ta = bitcast<f32>(w.z);
    let tb = bitcast<f32>(w.w);
    let second = time >= ta;
    let k = select(p, p + 1u, second);
    let t0 = select(tp, ta, second);
    let t1 = select(ta, tb, second);
    return segment_at(k, t0, t1, time, t1 - t0 <= 0.0);
}

fn find_segment_track(track: Track, time: f32) -> Segment {
    var s = search_start(track, time);
    if (COMPRESSED && (UNIFORM_TIMES || s.done)) {
        return s.seg;
    }
    for (var step = 0u; step < SEARCH_STEPS; step++) {
        s = search_step(track, time, textureLoad(key_windows, texel(s.idx), 0), s);
        if (s.done) {
            break;
        }
    }
    return s.seg;
}

// The segments of two tracks at one time (find_segment_track of each):
// both searches in one loop, so that their texel reads, each a likely
// cache miss, are made side by side and wait for memory together rather
// than one after the other.
// A search that is done reads its last texel again until the other ends.
// Each result is find_segment_track's (CPU twin:
// cpu::sample::find_segment_track, the same steps).
struct SegmentPair {
    a: Segment,
    b: Segment,
}

fn find_segment_pair(ta: Track, tb: Track, time: f32) -> SegmentPair {
    return search_pair(ta, tb, search_start(ta, time), search_start(tb, time), time);
}

// find_segment_pair with the first texels given (the clip-blocks plan's
// run keys: those of the keys the run's bucket table names, in the rows'
// key texels).
fn find_segment_pair_from(ta: Track, tb: Track, ia: u32, ib: u32, time: f32) -> SegmentPair {
    let none = Segment(0u, 0.0, 0.0, true);
    return search_pair(ta, tb, Search(0u, ta.key_count - 1u, ia, true, false, none),
        Search(0u, tb.key_count - 1u, ib, true, false, none), time);
}

// The segments of two rows from keys ka and kb that their run's exact
// table names (RUN_KEYS 3: at most one key of a row in a bucket, so the
// answer is that key or the next): one texel each, one decision
// (first_segment), no search loop.
fn first_pair(ta: Track, tb: Track, ka: u32, kb: u32, time: f32) -> SegmentPair {
    let wa = textureLoad(key_windows, texel(key_texels(ta) + ka), 0);
    let wb = textureLoad(key_windows, texel(key_texels(tb) + kb), 0);
    return SegmentPair(first_segment(ka, wa, time), first_segment(kb, wb, time));
}

// The two searches of find_segment_pair from their first texels.
fn search_pair(ta: Track, tb: Track, start_a: Search, start_b: Search, time: f32) -> SegmentPair {
    var a = start_a;
    var b = start_b;
    if (COMPRESSED && (UNIFORM_TIMES || (a.done && b.done))) {
        return SegmentPair(a.seg, b.seg);
    }
    for (var step = 0u; step < SEARCH_STEPS; step++) {
        let wa = textureLoad(key_windows, texel(a.idx), 0);
        let wb = textureLoad(key_windows, texel(b.idx), 0);
        if (!a.done) {
            a = search_step(ta, time, wa, a);
        }
        if (!b.done) {
            b = search_step(tb, time, wb, b);
        }
        if (a.done && b.done) {
            break;
        }
    }
    return SegmentPair(a.seg, b.seg);
}

// Component c of value element e (CUBICSPLINE: e = 3k + {0: in, 1: value, 2: out}).
fn value_at(track: Track, e: u32, c: u32) -> f32 {
    return values[track.values_offset + e * track.width + c];
}

// Whether some LINEAR rotation rows of the clip-blocks plan have their
// run's values stored key by key (src/run_values.rs): a row's width is then
// its key stride in floats (4 for the others), which quat_at() steps by.
// Set by the host for the GROUP_SLERP dispatch only.
override INTERLEAVED: bool = false;

// Key (element) e of a rotation track.
fn quat_at(track: Track, e: u32) -> vec4<f32> {
    var stride = 4u;
    if (INTERLEAVED) {
        stride = track.width;
    }
    if (ALIGNED4) {
        return values4[(track.values_offset >> 2u) + e * (stride >> 2u)];
    }
    let b = track.values_offset + e * stride;
    return vec4<f32>(values[b], values[b + 1u], values[b + 2u], values[b + 3u]);
}

fn store_quat(out: u32, q: vec4<f32>) {
    if (ALIGNED4) {
        output4[out >> 2u] = q;
        return;
    }
    output[out] = q.x;
    output[out + 1u] = q.y;
    output[out + 2u] = q.z;
    output[out + 3u] = q.w;
}

// The cubic Hermite basis of the glTF spline at t: (h00, h10, h01, h11).
fn hermite_basis(t: f32) -> vec4<f32> {
    let t2 = t * t;
    let t3 = t2 * t;
    return vec4<f32>(2.0 * t3 - 3.0 * t2 + 1.0, t3 - 2.0 * t2 + t, -2.0 * t3 + 3.0 * t2, t3 - t2);
}

// The glTF spline for one component: p = h00 v_k + h10 dt b_k + h01 v_k1 + h11 dt a_k1.
fn hermite(v0: f32, b0: f32, v1: f32, a1: f32, t: f32, dt: f32) -> f32 {
    let h = hermite_basis(t);
    return h.x * v0 + dt * h.y * b0 + h.z * v1 + dt * h.w * a1;
}

// hermite for four components at once, the same operations on each.
fn hermite4(v0: vec4<f32>, b0: vec4<f32>, v1: vec4<f32>, a1: vec4<f32>, t: f32, dt: f32) -> vec4<f32> {
    let h = hermite_basis(t);
    return h.x * v0 + dt * h.y * b0 + h.z * v1 + dt * h.w * a1;
}

// Samples one track at clip time `time` into output[out..out + width]:
// its key search, then sample_segment.
fn sample_track(track: Track, time: f32, out: u32) {
    sample_segment(track, find_segment_track(track, time), out);
}

// The interpolation of one track for the segment `seg` of the time, into
// output[out..out + width]. Three blocks, each compiled in only when the
// library has such tracks (HAS_*): LINEAR rotations (slerp); CUBICSPLINE
// (the spline); and the blend (1 - t) v_k + t v_(k+1) for everything
// else. Each returns key k's value as is, without loading key k + 1's,
// when the time is on a key or clamped, and the blend for STEP tracks
// too. (The pair versions, slerp_pair, blend_pair and spline_pair, load
// key k + 1 in every case, clamped to the last key, and compute the same
// values.) A compressed library's tracks take sample_compressed
// (decode.wgsl) instead, the same rules on decoded elements.
fn sample_segment(track: Track, seg: Segment, out: u32) {
    if (COMPRESSED) {
        sample_compressed(track, seg, out);
        return;
    }
    // Every group but GROUP_ALL has one interpolation (and GROUP_SLERP,
    // GROUP_CUBIC and GROUP_CUBIC_ROTATION one value kind): their
    // dispatches read neither from the track row.
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
    let k = seg.k;
    if (HAS_SLERP && (GROUP == GROUP_SLERP || (rotation && track.interpolation == INTERP_LINEAR))) {
        let q0 = quat_at(track, k);
        var q = q0;
        if (moving) {
            q = quat_slerp(q0, quat_at(track, k + 1u), seg.t);
        }
        store_quat(out, q);
        return;
    }
    // Rotations have four components: a GROUP_CUBIC_ROTATION dispatch's
    // loop below has a fixed trip count and reads no width.
    var width = track.width;
    if (GROUP == GROUP_CUBIC_ROTATION) {
        width = 4u;
    }
    if (HAS_CUBIC && cubic && ALIGNED4) {
        spline_segment4(track, seg, out, width, moving, rotation);
        return;
    }
    if (HAS_CUBIC && cubic) {
        spline_segment(track, seg, out, width, moving, rotation);
        return;
    }
    if (HAS_BLEND && ALIGNED4) {
        blend_segment4(track, seg, out, width, moving);
        return;
    }
    if (HAS_BLEND) {
        blend_segment(track, seg, out, width, moving);
    }
}

// The spline of segment `seg` of `track`, four components at a time
// (ALIGNED4), into `out`: key k's value as is when not moving; a rotation
// normalized.
fn spline_segment4(track: Track, seg: Segment, out: u32, width: u32, moving: bool, rotation: bool) {
    let k = seg.k;
    // Four components at a time: the four elements the spline reads
    // (value, out-tangent of key k, in-tangent and value of key k + 1)
    // as vec4s, the same operations per component as below; a
    // rotation (width 4, one pass) is normalized when moving.
    let e = 3u * k + 1u;
    let w4 = width >> 2u;
    let v0 = (track.values_offset >> 2u) + e * w4;
    let o = out >> 2u;
    for (var c = 0u; c < w4; c++) {
        var v = values4[v0 + c];
        if (moving) {
            v = hermite4(v, values4[v0 + w4 + c], values4[v0 + 3u * w4 + c],
                values4[v0 + 2u * w4 + c], seg.t, seg.dt);
            if (rotation) {
                v = quat_normalize(v);
            }
        }
        output4[o + c] = v;
    }
}

// The spline of segment `seg` of `track`, component by component, into
// `out`: key k's value as is when not moving; a rotation normalized.
fn spline_segment(track: Track, seg: Segment, out: u32, width: u32, moving: bool, rotation: bool) {
    let k = seg.k;
    // One loop for every property: key k's value (element 3k + 1) as
    // is when not moving, else the spline; rotations are normalized
    // after it: one block of loads, not one per kind of row.
    let e = 3u * k + 1u;
    var q = vec4<f32>(0.0);
    for (var c = 0u; c < width; c++) {
        var v = value_at(track, e, c);
        if (moving) {
            v = hermite(v, value_at(track, e + 1u, c), value_at(track, e + 3u, c),
                value_at(track, e + 2u, c), seg.t, seg.dt);
        }
        q[min(c, 3u)] = v;
        output[out + c] = v;
    }
    if (rotation && moving) {
        store_quat(out, quat_normalize(q));
    }
}

// The blend of keys k and k + 1 of `track` at `seg`, four components at
// a time (ALIGNED4), into `out`: key k's value as is when not moving.
fn blend_segment4(track: Track, seg: Segment, out: u32, width: u32, moving: bool) {
    let k = seg.k;
    // Four components at a time, as below.
    let t = seg.t;
    let v0 = (track.values_offset >> 2u) + k * (width >> 2u);
    let o = out >> 2u;
    for (var c = 0u; c < (width >> 2u); c++) {
        var v = values4[v0 + c];
        if (moving) {
            v = (1.0 - t) * v + t * values4[v0 + (width >> 2u) + c];
        }
        output4[o + c] = v;
    }
}

// The blend of keys k and k + 1 of `track` at `seg`, component by
// component, into `out`: key k's value as is when not moving.
fn blend_segment(track: Track, seg: Segment, out: u32, width: u32, moving: bool) {
    let k = seg.k;
    let t = seg.t;
    for (var c = 0u; c < width; c++) {
        // Key k's value as is when not moving (STEP, on a key,
        // clamped): no load of the next key's.
        var v = value_at(track, k, c);
        if (moving) {
            v = (1.0 - t) * v + t * value_at(track, k + 1u, c);
        }
        output[out + c] = v;
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn sample_main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let index = gid.y * params.row_invocations + gid.x;
    // The dispatch's invocations per instance as a constant (from
    // GROUP_ROWS, the same number as params.tracks_per_instance, and
    // ROW_RUN, its rows per invocation): dividing by it is a
    // multiplication.
    let per_instance = (GROUP_ROWS + ROW_RUN - 1u) / ROW_RUN;
    if (index >= params.instance_count * per_instance) {
        return;
    }
    let i = index / per_instance;
    let j = (index % per_instance) * ROW_RUN;
    let inst = instances[i];
    if (inst.clip >= arrayLength(&clips)) {
        return;
    }
    // This dispatch's group: track rows [first, first + count), one texel
    // (GROUP_ALL is SAMPLE_GROUPS: every row of the clip).
    let group = textureLoad(clip_groups, texel(inst.clip * (SAMPLE_GROUPS + 1u) + min(GROUP, SAMPLE_GROUPS)), 0);
    let first = group.x;
    let count = group.y;
    if (j >= count) {
        return;
    }
    let out = i * params.output_stride;
    // One row (the reference plan, groups of one row), or rows j and
    // j + 1 with their searches side by side; an odd last row pairs with
    // itself and is stored once.
    if (ROW_RUN == 1u) {
        let track = track_row(first + j);
        sample_track(track, inst.time, out + track.output_offset);
        return;
    }
    let second = j + 1u < count;
    sample_pair(track_row(first + j), track_row(first + select(j, j + 1u, second)), inst.time,
        out, second);
}

// Tracks ta and tb of one instance at clip time `time` into its output
// block at `out`, tb's stored only if `second` (a row left over is paired
// with itself): their searches side by side (find_segment_pair), and for
// LINEAR rotations their key loads too (slerp_pair).
fn sample_pair(ta: Track, tb: Track, time: f32, out: u32, second: bool) {
    interpolate_pair(ta, tb, find_segment_pair(ta, tb, time), out, second);
}

// The interpolation of sample_pair, given the rows' segments.
fn interpolate_pair(ta: Track, tb: Track, segs: SegmentPair, out: u32, second: bool) {
    // A compressed library's rows are decoded one at a time
    // (sample_compressed, through sample_segment).
    if (GROUP == GROUP_SLERP && !COMPRESSED) {
        slerp_pair(ta, tb, segs, out + ta.output_offset, out + tb.output_offset, second);
    } else if (GROUP == GROUP_BLEND && !ALIGNED4 && !COMPRESSED) {
        blend_pair(ta, tb, segs, out + ta.output_offset, out + tb.output_offset, second);
    } else if (GROUP == GROUP_CUBIC && !ALIGNED4 && !COMPRESSED) {
        spline_pair(ta, tb, segs, out + ta.output_offset, out + tb.output_offset, second);
    } else {
        sample_segment(ta, segs.a, out + ta.output_offset);
        if (second) {
            sample_segment(tb, segs.b, out + tb.output_offset);
        }
    }
}

// The clip-blocks plan: workgroup number w = y * grid_width + x samples
// run w % RUNS (RUNS = ceil(GROUP_ROWS / ROW_RUN)) of the dispatch's
// group's track rows for the instances of block w / RUNS, one lane per
// instance: rows [run ROW_RUN, (run + 1) ROW_RUN) of the block's clip,
// each lane sampling its instance's rows one after the other. Runs vary
// fastest: the workgroups that run one after the other write the same
// instances' output blocks. The block and the row are the same for every
// lane, so they are read at workgroup-uniform indices, and the lanes of
// a warp read the same keys' neighbourhood. What each lane reads for itself is
// its sorted entry (index, time), once per run, the key search's texels
// (with run keys, RUN_KEYS > 0: its run table's entries once per run, then
// per row its key texels; sample_run) and its values.
@compute @workgroup_size(WORKGROUP_SIZE)
fn sample_blocks_main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let w = wg.y * block_params.grid_width + wg.x;
    let runs = (GROUP_ROWS + ROW_RUN - 1u) / ROW_RUN;
    let b = w / runs;
    let run = w % runs;
    if (b >= block_params.block_count) {
        return;
    }
    let at = block_params.block_base + b;
    var block: SampleBlock;
    if (BLOCKS_IN_UNIFORM) {
        block = blocks_head[min(at, BLOCK_HEAD - 1u)];
    } else {
        block = blocks[at];
    }
    if (lane >= block.count) {
        return;
    }
    let entry = sorted_instances[block.first + lane];
    let time = bitcast<f32>(entry.y);
    let out = entry.x * block_params.output_stride;
    // Every group fixes the value kind the interpolation needs (STEP and
    // the blend read none).
    var kind = KIND_VECTOR;
    if (GROUP == GROUP_SLERP || GROUP == GROUP_CUBIC_ROTATION) {
        kind = KIND_ROTATION;
    }
    if (ROW_RUN == 1u) {
        if (run < block.row_count) {
            let track = block_track(block.row_first + run, kind);
            sample_track(track, time, out + track.output_offset);
        }
        return;
    }
    if (RUN_KEYS != 0u) {
        sample_run(block, run, kind, time, out);
        return;
    }
    // The rows two at a time: the pair's searches side by side
    // (find_segment_pair). A run with an odd row left pairs it with
    // itself and stores it once.
    for (var i = 0u; i < ROW_RUN; i += 2u) {
        let j = run * ROW_RUN + i;
        if (j >= block.row_count) {
            break;
        }
        let second = i + 1u < ROW_RUN && j + 1u < block.row_count;
        sample_pair(block_track(block.row_first + j, kind),
            block_track(block.row_first + select(j, j + 1u, second), kind), time, out, second);
    }
}

// Run `run` of `block` with run keys (RUN_KEYS 1, 2 or 3), the rows two at a
// time as in sample_blocks_main: with shared key times the first row's one
// search for every row; with a run table, the time's bucket and its
// entries once per run, then each pair's searches side by side, each
// starting from its row's key texel of the key that the bucket names (the
// same steps as find_segment_pair after its first guess, so the same
// segments whatever the guess; src/run_keys.rs says why the guess is
// nearly always right, and cpu::sample::find_segment_from mirrors it), or
// with exact tables (mode 3) that key's texel's one decision
// (first_segment).
fn sample_run(block: SampleBlock, run: u32, kind: u32, time: f32, out: u32) {
    // A clip with fewer rows than the group's most has runs without rows:
    // no search (nor header) of theirs to read.
    if (run * ROW_RUN >= block.row_count) {
        return;
    }
    let first = block.row_first + run * ROW_RUN;
    var one = Segment(0u, 0.0, 0.0, true);
    var entries = BucketEntries(vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u));
    if (RUN_KEYS == 1u) {
        // Every row of the run has the first row's key times.
        one = find_segment_track(block_track(first, kind), time);
    } else {
        entries = bucket_entries(first, time);
    }
    // The run's segments (one of ROW_RUN rows when they are read), and in
    // each its rows two at a time.
    var seg_rows = ROW_RUN;
    if (REGULAR_SEGMENT > 0u) {
        seg_rows = REGULAR_SEGMENT;
    }
    for (var s = 0u; s < ROW_RUN; s += seg_rows) {
        let sj = run * ROW_RUN + s;
        if (sj >= block.row_count) {
            break;
        }
        // The segment's first two rows (the first again in a segment of
        // one row): with REGULAR_SEGMENT the others follow from them.
        let r0 = block_track(block.row_first + sj, kind);
        let r1 = block_track(block.row_first + select(sj, sj + 1u, sj + 1u < block.row_count), kind);
        for (var p = 0u; p < seg_rows; p += 2u) {
            let i = s + p;
            let j = sj + p;
            if (j >= block.row_count) {
                break;
            }
            let second = p + 1u < seg_rows && j + 1u < block.row_count;
            let ta = run_row(block, kind, r0, r1, p, j);
            let tb = run_row(block, kind, r0, r1, select(p, p + 1u, second), select(j, j + 1u, second));
            var segs = SegmentPair(one, one);
            if (RUN_KEYS >= 2u) {
                let keys = bucket_pair(entries, i, second);
                let ka = keys.x;
                let kb = keys.y;
                if (RUN_KEYS == 3u) {
                    segs = first_pair(ta, tb, ka, kb, time);
                } else {
                    segs = find_segment_pair_from(ta, tb, key_texels(ta) + ka, key_texels(tb) + kb, time);
                }
            }
            if (COMPRESSED && RUN_KEYS == 1u) {
                // The run's first row has the most keys, and the others
                // a prefix of its times.
                segs = SegmentPair(within_keys(ta, one), within_keys(tb, one));
            }
            interpolate_pair(ta, tb, segs, out, second);
        }
    }
}

// The entries of one bucket of a run table: TABLE_TEXELS texels (the rest
// zero).
struct BucketEntries {
    e0: vec4<u32>,
    e1: vec4<u32>,
    e2: vec4<u32>,
    e3: vec4<u32>,
}

// The entries of the bucket of `time` in the run table of the run whose
// first row is `first` (its header: [offset, buckets, scale, origin]).
fn bucket_entries(first: u32, time: f32) -> BucketEntries {
    var b = BucketEntries(vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u));
    let h = textureLoad(key_windows, texel(RUN_BASE + first), 0);
    let table = h.x + lookup_bucket(time, bitcast<f32>(h.w), bitcast<f32>(h.z), h.y) * TABLE_TEXELS;
    b.e0 = textureLoad(key_windows, texel(table), 0);
    if (TABLE_TEXELS > 1u) {
        b.e1 = textureLoad(key_windows, texel(table + 1u), 0);
    }
    if (TABLE_TEXELS > 2u) {
        b.e2 = textureLoad(key_windows, texel(table + 2u), 0);
    }
    if (TABLE_TEXELS > 3u) {
        b.e3 = textureLoad(key_windows, texel(table + 3u), 0);
    }
    return b;
}

// Entries i and i + 1 (i even) of a bucket (entry i again where there is
// no `second` row). They share a word: word i / e of the bucket's
// entries, e = 32 / TABLE_BITS per word; the texel and its component by
// selects (constant indices: no run-time indexing of a private array).
fn bucket_pair(b: BucketEntries, i: u32, second: bool) -> vec2<u32> {
    let w = i / (32u / TABLE_BITS);
    let v = select(select(b.e0, b.e1, w >= 4u), select(b.e2, b.e3, w >= 12u), w >= 8u);
    let c = w & 3u;
    let word = select(select(v.x, v.y, c >= 1u), select(v.z, v.w, c >= 3u), c >= 2u);
    let mask = (1u << TABLE_BITS) - 1u;
    let shift = TABLE_BITS * (i % (32u / TABLE_BITS));
    let ka = (word >> shift) & mask;
    let kb = select(ka, (word >> (shift + TABLE_BITS)) & mask, second);
    return vec2<u32>(ka, kb);
}

// Row `p` of a run's segment whose first two rows are `r0` and `r1`, row
// `j` of `block`: computed from them with REGULAR_SEGMENT (its search
// offset read unless REGULAR_SEARCH; a compressed row's values offset and
// key count read), else read.
fn run_row(block: SampleBlock, kind: u32, r0: Track, r1: Track, p: u32, j: u32) -> Track {
    var t = regular_row(r0, r1, p);
    if (REGULAR_SEGMENT == 0u) {
        t = block_track(block.row_first + j, kind);
    } else if (!REGULAR_SEARCH) {
        t.search_offset = block_track(block.row_first + j, kind).search_offset;
    }
    if (COMPRESSED && REGULAR_SEGMENT > 0u) {
        // A compressed block has a size of its own, and rows differ in
        // key counts: each row's are read (the host judged the rest
        // regular without them).
        let r = row_block(block.row_first + j);
        t.values_offset = r.x;
        t.key_count = r.y;
    }
    return t;
}

// A segment of a row with at least as many keys and the same first key
// times (RUN_KEYS 1) as the segment of `track`: key k's at or past the
// track's last key (rate_segment's clamp), else the same.
fn within_keys(track: Track, seg: Segment) -> Segment {
    let last = track.key_count - 1u;
    if (seg.k >= last) {
        return Segment(last, 0.0, seg.dt, true);
    }
    return seg;
}

// Row i of a regular segment (REGULAR_SEGMENT) from its rows 0 and 1:
// the offsets stepped i times (wrapping u32 arithmetic, as the host
// checked them) and its row (times_offset) row 0's plus i, the rest
// row 0's.
fn regular_row(r0: Track, r1: Track, i: u32) -> Track {
    var t = r0;
    t.values_offset = r0.values_offset + i * (r1.values_offset - r0.values_offset);
    t.output_offset = r0.output_offset + i * (r1.output_offset - r0.output_offset);
    t.search_offset = r0.search_offset + i * (r1.search_offset - r0.search_offset);
    t.times_offset = r0.times_offset + i;
    return t;
}

// sample_segment of two LINEAR vector tracks (GROUP_BLEND, floats: not
// ALIGNED4) at once, the second stored only if `store_b`: component by
// component, both tracks' key k and k + 1 loads side by side (key k + 1
// clamped to the last key and loaded whether or not the time is between
// keys, as in slerp_pair), then both blends. Tracks of different widths
// load their last component again past their width and store nothing
// there. The same operations per component as sample_segment.
fn blend_pair(ta: Track, tb: Track, segs: SegmentPair, oa: u32, ob: u32, store_b: bool) {
    let ma = !segs.a.exact;
    let mb = !segs.b.exact;
    let wa = ta.width;
    let wb = tb.width;
    let ka1 = min(segs.a.k + 1u, ta.key_count - 1u);
    let kb1 = min(segs.b.k + 1u, tb.key_count - 1u);
    for (var c = 0u; c < max(wa, wb); c++) {
        let ca = min(c, max(wa, 1u) - 1u);
        let cb = min(c, max(wb, 1u) - 1u);
        var va = value_at(ta, segs.a.k, ca);
        var vb = value_at(tb, segs.b.k, cb);
        let na = value_at(ta, ka1, ca);
        let nb = value_at(tb, kb1, cb);
        if (ma) {
            va = (1.0 - segs.a.t) * va + segs.a.t * na;
        }
        if (mb) {
            vb = (1.0 - segs.b.t) * vb + segs.b.t * nb;
        }
        if (c < wa) {
            output[oa + c] = va;
        }
        if (store_b && c < wb) {
            output[ob + c] = vb;
        }
    }
}

// sample_segment of two CUBICSPLINE vector tracks (GROUP_CUBIC, floats:
// not ALIGNED4) at once, as blend_pair: per component both tracks' four
// spline elements (value and out-tangent of key k, in-tangent and value of
// key k + 1, clamped to the track's last element) side by side, then both
// splines.
fn spline_pair(ta: Track, tb: Track, segs: SegmentPair, oa: u32, ob: u32, store_b: bool) {
    let ma = !segs.a.exact;
    let mb = !segs.b.exact;
    let wa = ta.width;
    let wb = tb.width;
    let ea = 3u * segs.a.k + 1u;
    let eb = 3u * segs.b.k + 1u;
    let la = 3u * ta.key_count - 1u;
    let lb = 3u * tb.key_count - 1u;
    for (var c = 0u; c < max(wa, wb); c++) {
        let ca = min(c, max(wa, 1u) - 1u);
        let cb = min(c, max(wb, 1u) - 1u);
        var va = value_at(ta, ea, ca);
        var vb = value_at(tb, eb, cb);
        let oa1 = value_at(ta, min(ea + 1u, la), ca);
        let ob1 = value_at(tb, min(eb + 1u, lb), cb);
        let ia1 = value_at(ta, min(ea + 2u, la), ca);
        let ib1 = value_at(tb, min(eb + 2u, lb), cb);
        let va1 = value_at(ta, min(ea + 3u, la), ca);
        let vb1 = value_at(tb, min(eb + 3u, lb), cb);
        if (ma) {
            va = hermite(va, oa1, va1, ia1, segs.a.t, segs.a.dt);
        }
        if (mb) {
            vb = hermite(vb, ob1, vb1, ib1, segs.b.t, segs.b.dt);
        }
        if (c < wa) {
            output[oa + c] = va;
        }
        if (store_b && c < wb) {
            output[ob + c] = vb;
        }
    }
}

// sample_segment of two LINEAR rotation tracks (GROUP_SLERP) at once, the
// second stored only if `store_b`: as with their searches, the four key
// loads side by side, then the two slerps.
fn slerp_pair(ta: Track, tb: Track, segs: SegmentPair, oa: u32, ob: u32, store_b: bool) {
    let qa0 = quat_at(ta, segs.a.k);
    let qb0 = quat_at(tb, segs.b.k);
    // Key k + 1 whether or not the time is between keys (a masked load
    // costs its lane loop all the same here), clamped to the last key;
    // with exact run tables (RUN_KEYS 3) not clamped, so that the key count
    // is not read: k is at most the last key, and key last + 1, unused
    // (the segment is exact there), is another track's first or the
    // values buffer's padding.
    var ka1 = segs.a.k + 1u;
    var kb1 = segs.b.k + 1u;
    if (RUN_KEYS != 3u) {
        ka1 = min(ka1, ta.key_count - 1u);
        kb1 = min(kb1, tb.key_count - 1u);
    }
    let qa1 = quat_at(ta, ka1);
    let qb1 = quat_at(tb, kb1);
    var qa = qa0;
    var qb = qb0;
    if (!segs.a.exact) {
        qa = quat_slerp(qa0, qa1, segs.a.t);
    }
    if (!segs.b.exact) {
        qb = quat_slerp(qb0, qb1, segs.b.t);
    }
    store_quat(oa, qa);
    if (store_b) {
        store_quat(ob, qb);
    }
}

// The values offset and the key count of row r of the clip-blocks plan's
// row table alone (two words where a row is eight; none read where the
// block heads' uniform copies hold them, at r's place in the dispatch's
// window).
fn row_block(r: u32) -> vec2<u32> {
    if (HEADS_IN_UNIFORM) {
        return decode_head(r - block_params.head_first, 0u).zw;
    }
    if (ROWS_IN_UNIFORM) {
        let i = min(r, ROW_HEAD - 1u);
        return vec2<u32>(rows_head[i].values_offset, rows_head[i].key_count);
    }
    return vec2<u32>(rows[r].values_offset, rows[r].key_count);
}

// Row r of the clip-blocks plan's row table as a Track of value kind
// `kind`, from the uniform head where it fits; its times_offset (which
// the shader does not read otherwise) is r's place in the dispatch's
// window of the block heads' uniform copies (HEADS_IN_UNIFORM), where
// decode_head finds them.
fn block_track(r: u32, kind: u32) -> Track {
    var row: SampleRow;
    if (ROWS_IN_UNIFORM) {
        row = rows_head[min(r, ROW_HEAD - 1u)];
    } else {
        row = rows[r];
    }
    if (RUN_KEYS >= 2u) {
        // Run tables: the row's search offset is its first key texel and
        // it has no bucket table (GpuSampleRow::of_key_texels), so that
        // key_texels() reads no lookup scale.
        return Track(r - block_params.head_first, row.key_count, row.values_offset, row.width,
            row.interpolation, kind, row.output_offset, 0u, 0.0, 0.0, row.search_offset);
    }
    return Track(r - block_params.head_first, row.key_count, row.values_offset, row.width,
        row.interpolation, kind, row.output_offset, 0u, row.lookup_scale, row.lookup_origin,
        row.search_offset);
}
