// Keyframe sampling: one invocation per (instance, track).
// Needs quat.wgsl (prepended by the host). CPU twin: src/cpu.rs.

struct Track {
    times_offset: u32,
    key_count: u32,
    values_offset: u32,
    width: u32,
    interpolation: u32,
    property: u32,
    output_offset: u32,
    node: u32,
    key_scale: f32,
}

struct Clip {
    track_offset: u32,
    track_count: u32,
    output_width: u32,
    duration: f32,
}

struct Instance {
    clip: u32,
    time: f32,
    _pad0: u32,
    _pad1: u32,
}

struct Params {
    instance_count: u32,
    tracks_per_instance: u32,
    output_stride: u32,
    row_invocations: u32,
}

// A key interval: the time is exactly on key k (exact = true, use v_k as
// is), or between keys k and k + 1 at factor t.
struct Segment {
    k: u32,
    t: f32,
    exact: bool,
}

const INTERP_STEP: u32 = 0u;
const INTERP_LINEAR: u32 = 1u;
const INTERP_CUBICSPLINE: u32 = 2u;

const PROP_TRANSLATION: u32 = 0u;
const PROP_ROTATION: u32 = 1u;
const PROP_SCALE: u32 = 2u;
const PROP_WEIGHTS: u32 = 3u;

const WORKGROUP_SIZE: u32 = 64u;

@group(0) @binding(0) var<storage, read> times: array<f32>;
@group(0) @binding(1) var<storage, read> values: array<f32>;
@group(0) @binding(2) var<storage, read> tracks: array<Track>;
@group(0) @binding(3) var<storage, read> clips: array<Clip>;
@group(0) @binding(4) var<storage, read> instances: array<Instance>;
@group(0) @binding(5) var<uniform> params: Params;
@group(0) @binding(6) var<storage, read_write> output: array<f32>;

// The largest k in [lo, lo + len) with times[k] <= time, or lo when there
// is none. Branchless binary search: the trip count depends only on len, so
// neighbouring invocations stay in step.
fn search_keys(times_offset: u32, lo_in: u32, len_in: u32, time: f32) -> u32 {
    var lo = lo_in;
    var len = len_in;
    while (len > 1u) {
        let half = len / 2u;
        lo = select(lo, lo + half, times[times_offset + lo + half] <= time);
        len -= half;
    }
    return lo;
}

// The segment of `time` given k, the largest key index with
// times[k] <= time (0 when time is before the first key): time <= times[k]
// means clamped before the first key or exactly on key k; k == last means
// at or after the last key; otherwise time is strictly inside
// (times[k], times[k + 1]).
fn segment_at(times_offset: u32, key_count: u32, k: u32, time: f32) -> Segment {
    let t0 = times[times_offset + k];
    if (time <= t0 || k + 1u >= key_count) {
        return Segment(k, 0.0, true);
    }
    let t1 = times[times_offset + k + 1u];
    return Segment(k, (time - t0) / (t1 - t0), false);
}

// Finds the key interval of time `time` in a track's keys: one search over
// all keys.
fn find_segment(times_offset: u32, key_count: u32, time: f32) -> Segment {
    return segment_at(times_offset, key_count, search_keys(times_offset, 0u, key_count, time), time);
}

// As find_segment, for a track. Keys spaced uniformly enough (key_scale > 0,
// set by the host, src/library.rs) are indexed directly: the guess
// c = u32(clamp((time - times[0]) * key_scale, 0, last)) is within one key
// of the answer (the host checked that every key's own guess is its index
// or the one before, and the guess is monotonic in time), so a search over
// [c - 1, c + 1] finds the same k as the full search.
fn find_segment_track(track: Track, time: f32) -> Segment {
    if (track.key_scale > 0.0) {
        let o = track.times_offset;
        let last = track.key_count - 1u;
        let c = u32(clamp((time - times[o]) * track.key_scale, 0.0, f32(last)));
        let lo = max(c, 1u) - 1u;
        let hi = min(c + 1u, last);
        return segment_at(o, track.key_count, search_keys(o, lo, hi - lo + 1u, time), time);
    }
    return find_segment(track.times_offset, track.key_count, time);
}

// Component c of value element e (CUBICSPLINE: e = 3k + {0: in, 1: value, 2: out}).
fn value_at(track: Track, e: u32, c: u32) -> f32 {
    return values[track.values_offset + e * track.width + c];
}

fn quat_at(track: Track, e: u32) -> vec4<f32> {
    let b = track.values_offset + e * 4u;
    return vec4<f32>(values[b], values[b + 1u], values[b + 2u], values[b + 3u]);
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
fn sample_track(track: Track, time: f32, out: u32) {
    let seg = find_segment_track(track, time);
    let cubic = track.interpolation == INTERP_CUBICSPLINE;
    let width = track.width;
    if (seg.exact || track.interpolation == INTERP_STEP) {
        // On a key, clamped, or STEP: the key's value as is.
        var e = seg.k;
        if (cubic) {
            e = 3u * seg.k + 1u;
        }
        for (var c = 0u; c < width; c++) {
            output[out + c] = value_at(track, e, c);
        }
        return;
    }
    let k = seg.k;
    let t = seg.t;
    if (!cubic) {
        if (track.property == PROP_ROTATION) {
            let q = quat_slerp(quat_at(track, k), quat_at(track, k + 1u), t);
            for (var c = 0u; c < 4u; c++) {
                output[out + c] = q[c];
            }
            return;
        }
        for (var c = 0u; c < width; c++) {
            output[out + c] = (1.0 - t) * value_at(track, k, c) + t * value_at(track, k + 1u, c);
        }
        return;
    }
    let dt = times[track.times_offset + k + 1u] - times[track.times_offset + k];
    if (track.property == PROP_ROTATION) {
        var q = vec4<f32>(0.0);
        for (var c = 0u; c < 4u; c++) {
            q[c] = hermite(value_at(track, 3u * k + 1u, c), value_at(track, 3u * k + 2u, c),
                value_at(track, 3u * k + 4u, c), value_at(track, 3u * k + 3u, c), t, dt);
        }
        q = quat_normalize(q);
        for (var c = 0u; c < 4u; c++) {
            output[out + c] = q[c];
        }
        return;
    }
    for (var c = 0u; c < width; c++) {
        output[out + c] = hermite(value_at(track, 3u * k + 1u, c), value_at(track, 3u * k + 2u, c),
            value_at(track, 3u * k + 4u, c), value_at(track, 3u * k + 3u, c), t, dt);
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
    if (j >= clip.track_count) {
        return;
    }
    let track = tracks[clip.track_offset + j];
    sample_track(track, inst.time, i * params.output_stride + track.output_offset);
}
