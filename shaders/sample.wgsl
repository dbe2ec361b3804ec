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
// i is texel (i & (2^ROW_SHIFT - 1), i >> ROW_SHIFT). On CPU adapters a
// textureLoad is one SIMD gather where a storage load loops over the lanes.
@group(0) @binding(0) var times: texture_2d<f32>;
@group(0) @binding(1) var<storage, read> values: array<f32>;
@group(0) @binding(2) var<storage, read> tracks: array<Track>;
@group(0) @binding(3) var<storage, read> clips: array<Clip>;
@group(0) @binding(4) var<storage, read> instances: array<Instance>;
@group(0) @binding(5) var<uniform> params: Params;
@group(0) @binding(6) var<storage, read_write> output: array<f32>;
@group(0) @binding(7) var key_lookup: texture_2d<u32>;
// Texel r: [times_offset, key_count, bits of lookup_scale, bits of
// lookup_origin] of track row r, the fields only the search reads.
@group(0) @binding(8) var track_search: texture_2d<u32>;

// The clip-blocks plan's bindings (sample_blocks_main; it reads neither
// `tracks`, `clips`, `instances`, `params` nor `track_search`).
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
// storage access where there were four (each a loop over the lanes on the
// CPU adapters). The host decides per group.
override ALIGNED4: bool = false;

override ROW_SHIFT: u32 = KEY_TEXTURE_ROW_SHIFT;

// Whether every block (BLOCKS_IN_UNIFORM) and every row (ROWS_IN_UNIFORM)
// the sampler can hold fits in the uniform heads; the host decides from
// the capacity and the library, so no lane tests an index per frame.
override BLOCKS_IN_UNIFORM: bool = true;
// The clip-blocks plan: the dispatch group's most rows in a clip, the
// number of workgroups per block.
override GROUP_ROWS: u32 = 1u;
override ROWS_IN_UNIFORM: bool = true;

// Whether the library has tracks with a key lookup table (lookup_scale >
// 0) and tracks indexed directly (lookup_scale < 0); the host sets them,
// and the search leaves out the path of a kind that no track has (the
// fallback adapter runs both paths of a branch, whichever the lanes take).
override HAS_TABLE: bool = true;
override HAS_DIRECT: bool = true;

fn texel(i: u32) -> vec2<u32> {
    return vec2<u32>(i & ((1u << ROW_SHIFT) - 1u), i >> ROW_SHIFT);
}

fn time_at(i: u32) -> f32 {
    return textureLoad(times, texel(i), 0).x;
}

// Track row `row` with its search fields from `track_search`; the others
// are read from `tracks` where they are used.
fn track_row(row: u32) -> Track {
    var track = tracks[row];
    let s = textureLoad(track_search, texel(row), 0);
    track.times_offset = s.x;
    track.key_count = s.y;
    track.lookup_scale = bitcast<f32>(s.z);
    track.lookup_origin = bitcast<f32>(s.w);
    return track;
}

// The segment of `time` given k, the largest key index with
// times[k] <= time (0 when time is before the first key), and the key times
// t0 = times[k] and t1 = times[min(k + 1, last)]: time <= t0 means clamped
// before the first key or exactly on key k; k == last means at or after
// the last key; otherwise time is strictly inside (t0, t1).
fn segment_of(k: u32, last: u32, t0: f32, t1: f32, time: f32) -> Segment {
    let dt = t1 - t0;
    if (time <= t0 || k >= last) {
        return Segment(k, 0.0, dt, true);
    }
    return Segment(k, (time - t0) / dt, dt, false);
}

// The bucket of `time` in a key lookup table of `buckets` buckets from t0,
// `scale` buckets per second. Mirrored, and used to build the tables, by
// cpu::lookup_bucket.
fn lookup_bucket(time: f32, t0: f32, scale: f32, buckets: u32) -> u32 {
    let last = buckets - 1u;
    return min(u32(clamp((time - t0) * scale, 0.0, f32(last))), last);
}

// Finds the key interval of time `time` in a track's keys: k, the largest
// key index with times[k] <= time (0 when there is none), and its segment.
//
// A track with a key lookup table (lookup_scale > 0, built by the host:
// src/library.rs) starts from the window of keys named by its time's
// bucket (2 (n - 1) buckets over [t_0, t_last]); for keys no closer than
// half the average spacing that window holds one or two keys. A track of
// uniformly spaced keys (lookup_scale < 0) guesses c = (time - t_0) * |s|
// and starts from [c - 1, c + 1] without reading a table. Other tracks
// start from all keys. A binary search narrows the window to two keys at
// most; then two loads finish: t_(lo+1), which decides between lo and
// lo + 1 and is t_k or t_(k+1), and the segment's other key time.
//
// The host proved that the window holds k when this device rounds the
// bucket as the host does; t_k <= time < t_(k+1) confirms it, and
// otherwise the second round starts from all keys, so the result is the
// full search's on any device.
fn find_segment_track(track: Track, time: f32) -> Segment {
    let o = track.times_offset;
    let n = track.key_count;
    let last = n - 1u;
    var lo = 0u;
    var len = n;
    if (HAS_TABLE && track.lookup_scale > 0.0) {
        let b = lookup_bucket(time, track.lookup_origin, track.lookup_scale, 2u * last);
        let entry = textureLoad(key_lookup, texel(2u * o + b), 0).x;
        lo = min(entry >> LOOKUP_COUNT_BITS, last);
        // A saturated window (hundreds of keys in one bucket: rare) runs to
        // the last key; the binary search below narrows it in log2 steps.
        let count = entry & LOOKUP_COUNT_SATURATED;
        len = select(min(count, last - lo), last - lo, count == LOOKUP_COUNT_SATURATED) + 1u;
    } else if (HAS_DIRECT && track.lookup_scale < 0.0) {
        // Uniformly spaced keys: the guess c is within one key of k.
        let c = min(u32(clamp((time - track.lookup_origin) * -track.lookup_scale, 0.0, f32(last))), last);
        lo = max(c, 1u) - 1u;
        len = min(c + 1u, last) - lo + 1u;
    }
    var seg = Segment(0u, 0.0, 0.0, true);
    for (var round = 0u; round < 2u; round++) {
        // Binary search down to [lo, lo + len) with len <= 2; the trip
        // count depends only on len.
        while (len > 2u) {
            let half = len / 2u;
            lo = select(lo, lo + half, time_at(o + lo + half) <= time);
            len -= half;
        }
        // k is lo or lo + 1: t_(lo+1) decides, and is t_k or t_(k+1).
        let tb = time_at(o + min(lo + 1u, last));
        let second = len == 2u && tb <= time;
        let k = select(lo, lo + 1u, second);
        let other = time_at(o + select(lo, min(lo + 2u, last), second));
        let t0 = select(other, tb, second);
        let t1 = select(tb, other, second);
        seg = segment_of(k, last, t0, t1, time);
        if ((k == 0u || t0 <= time) && (k == last || time < t1)) {
            break;
        }
        lo = 0u;
        len = n;
    }
    return seg;
}

// Component c of value element e (CUBICSPLINE: e = 3k + {0: in, 1: value, 2: out}).
fn value_at(track: Track, e: u32, c: u32) -> f32 {
    return values[track.values_offset + e * track.width + c];
}

fn quat_at(track: Track, e: u32) -> vec4<f32> {
    if (ALIGNED4) {
        return values4[(track.values_offset >> 2u) + e];
    }
    let b = track.values_offset + e * 4u;
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

// Cubic Hermite basis for the glTF spline: p = h00 v_k + h10 dt b_k + h01 v_k1 + h11 dt a_k1.
fn hermite(v0: f32, b0: f32, v1: f32, a1: f32, t: f32, dt: f32) -> f32 {
    let t2 = t * t;
    let t3 = t2 * t;
    let h00 = 2.0 * t3 - 3.0 * t2 + 1.0;
    let h10 = t3 - 2.0 * t2 + t;
    let h01 = -2.0 * t3 + 3.0 * t2;
    let h11 = t3 - t2;
    return h00 * v0 + dt * h10 * b0 + h01 * v1 + dt * h11 * a1;
}

// Samples one track at clip time `time` into output[out..out + width].
//
// Three blocks, each compiled in only when the library has such tracks
// (HAS_*): LINEAR rotations (slerp); CUBICSPLINE (the spline); and the
// blend (1 - t) v_k + t v_(k+1) for everything else. Each returns key k's
// value as is, without loading key k + 1's, when the time is on a key or
// clamped, and the blend for STEP tracks too.
fn sample_track(track: Track, time: f32, out: u32) {
    let seg = find_segment_track(track, time);
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
    if (HAS_CUBIC && cubic) {
        // One loop for every property: key k's value (element 3k + 1) as
        // is when not moving, else the spline; rotations are normalized
        // after it. (The fallback adapter steps through every block of a
        // divergent branch, so separate rotation, vector and on-key blocks
        // cost their loads three times over.)
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
        return;
    }
    if (HAS_BLEND && ALIGNED4) {
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
        return;
    }
    if (HAS_BLEND) {
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
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn sample_main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let index = gid.y * params.row_invocations + gid.x;
    let per_instance = params.tracks_per_instance;
    if (per_instance == 0u || index >= params.instance_count * per_instance) {
        return;
    }
    let i = index / per_instance;
    let j = index % per_instance;
    let inst = instances[i];
    if (inst.clip >= arrayLength(&clips)) {
        return;
    }
    let clip = clips[inst.clip];
    // This dispatch's group: track rows [first, first + count), two reads
    // of the clip (each a loop over the lanes on the fallback adapter).
    var first = 0u;
    var count = 0u;
    if (GROUP == GROUP_ALL) {
        first = clip.track_offset;
        count = clip.track_count;
    } else {
        // (min: GROUP_ALL takes the branch above, but the index must be
        // in bounds in every pipeline.)
        first = clip.group_first[min(GROUP, SAMPLE_GROUPS - 1u)];
        count = clip.group_count[min(GROUP, SAMPLE_GROUPS - 1u)];
    }
    if (j >= count) {
        return;
    }
    let track = track_row(first + j);
    sample_track(track, inst.time, i * params.output_stride + track.output_offset);
}

// The clip-blocks plan: workgroup number w = y * grid_width + x samples
// track row w % GROUP_ROWS of the dispatch's group for the instances of
// block w / GROUP_ROWS, one lane per instance. Rows vary fastest: the
// workgroups that run one after the other write the same instances'
// output blocks (64 of them, 64 KiB for
// crowd_rot), which a cache then holds until they are whole; blocks
// fastest had each cache line of the output written a quarter at a time,
// a whole pass over the blocks apart. The block and the row are the same for every lane: on
// the CPU adapters a uniform read at such an index is one load where a
// storage read is one per lane, and on a GPU every lane of a warp reads
// the same keys' neighbourhood. What each lane reads for itself is its
// sorted entry (index, time), the key search's texels and its values.
@compute @workgroup_size(WORKGROUP_SIZE)
fn sample_blocks_main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let w = wg.y * block_params.grid_width + wg.x;
    let b = w / GROUP_ROWS;
    let j = w % GROUP_ROWS;
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
    if (j >= block.row_count || lane >= block.count) {
        return;
    }
    let r = block.row_first + j;
    var row: SampleRow;
    if (ROWS_IN_UNIFORM) {
        row = rows_head[min(r, ROW_HEAD - 1u)];
    } else {
        row = rows[r];
    }
    let entry = sorted_instances[block.first + lane];
    // Every group fixes the value kind the interpolation needs (STEP and
    // the blend read none).
    var kind = KIND_VECTOR;
    if (GROUP == GROUP_SLERP || GROUP == GROUP_CUBIC_ROTATION) {
        kind = KIND_ROTATION;
    }
    let track = Track(row.times_offset, row.key_count, row.values_offset, row.width,
        row.interpolation, kind, row.output_offset, 0u, row.lookup_scale, row.lookup_origin);
    sample_track(track, bitcast<f32>(entry.y), entry.x * block_params.output_stride + row.output_offset);
}
