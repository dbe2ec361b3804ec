//! The CPU twin of `shaders/sample.wgsl`.
//!
//! One function per WGSL function, same names, same argument order, same
//! `f32` operations in the same order and the same constants, reading the
//! same flat arrays ([`AnimationLibrary`](crate::AnimationLibrary)'s
//! tables) and producing the same output
//! layout. It is the reference every GPU result is compared with; the tests
//! check it in turn against values computed by hand from the formulas in
//! `docs/ARCHITECTURE.md` ("The contract"), and against glam's independent slerp.
//!
//! # Panics
//! The per-function twins (`find_segment`, `sample_track`, ...) index the
//! flat arrays exactly as the shader does and panic on offsets outside them;
//! arrays and tracks taken from one library's tables are always in range.
//! [`cpu::sample`](fn@super::sample) checks its instances and never panics.
#![allow(
    clippy::needless_range_loop,
    reason = "keeps the code easy to compare with the shader"
)]

use glam::Vec4;

use super::quat::{quat_normalize, quat_slerp};
use crate::layout::{
    GpuInstance, GpuTrack, GROUP_ALL, INTERP_CUBICSPLINE, INTERP_LINEAR, INTERP_STEP, KIND_ROTATION,
};
use crate::tables::library::LibraryTables;

/// A key interval: exactly on key `k` (`exact`), or between `k` and `k + 1`
/// at factor `t`. Mirrors WGSL `Segment`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Segment {
    /// The key at or before the time.
    pub(crate) k: u32,
    /// Interpolation factor in `(0, 1)` when not exact, else 0.
    pub(crate) t: f32,
    /// `t_(k+1) - t_k` (0 at the last key).
    pub(crate) dt: f32,
    /// The time is on key `k` or clamped to it: use its value as is.
    pub(crate) exact: bool,
}

/// The segment of `time` given `k`, the largest key index with
/// `times[k] <= time` (0 when `time` is before the first key), and the key
/// times `t0 = times[k]` and `t1 = times[min(k + 1, last)]`: `time <= t0`
/// means clamped before the first key or exactly on key `k`; `k == last`
/// means at or after the last key; otherwise `time` is strictly inside
/// `(t0, t1)`.
#[must_use]
pub(crate) fn segment_of(k: u32, last: u32, t0: f32, t1: f32, time: f32) -> Segment {
    segment_at(k, t0, t1, time, k >= last)
}

/// [`segment_of`] with `end` standing for `k >= last` (the shader's
/// `segment_at`): exact when `time <= t0` or at the end.
fn segment_at(k: u32, t0: f32, t1: f32, time: f32, end: bool) -> Segment {
    let dt = t1 - t0;
    if time <= t0 || end {
        return Segment {
            k,
            t: 0.0,
            dt,
            exact: true,
        };
    }
    Segment {
        k,
        t: (time - t0) / dt,
        dt,
        exact: false,
    }
}

#[doc(hidden)]
/// Finds the key interval of `time` among `times[times_offset..][..key_count]`
/// by a search over all keys (the largest `k` with `t_k <= time`, 0 when
/// there is none): the reference that [`find_segment_track`] is tested
/// against.
#[cfg(test)]
#[must_use]
pub(crate) fn find_segment(times: &[f32], times_offset: u32, key_count: u32, time: f32) -> Segment {
    let times = &times[times_offset as usize..][..key_count as usize];
    let last = key_count - 1;
    let k = (times.partition_point(|&t| t <= time).max(1) - 1) as u32;
    segment_of(
        k,
        last,
        times[k as usize],
        times[(k + 1).min(last) as usize],
        time,
    )
}

use crate::tables::key_lookup::key_texel;
pub(crate) use crate::tables::key_lookup::lookup_bucket;

#[doc(hidden)]
/// The shader's `find_segment_track`, step for step, over the library's
/// search texels ([`LibraryTables::key_windows`],
/// each built here from its key, `search_keys[j]`, and the key times, as
/// the upload builds them):
/// the first texel from the track's bucket table (`lookup_scale > 0`),
/// its direct guess (`lookup_scale < 0`) or its middle key; each step
/// compares the time with the texel's three key times and either finds
/// the segment or narrows `[lo, hi]`. The result is [`find_segment`]'s.
#[must_use]
pub(crate) fn find_segment_track(
    times: &[f32],
    search_keys: &[u32],
    track: &GpuTrack,
    time: f32,
) -> Segment {
    let n = track.key_count;
    let times = &times[track.times_offset as usize..][..n as usize];
    let last = n - 1;
    let keys = track.key_texels();
    let mut idx = keys + last / 2;
    if track.lookup_scale > 0.0 {
        idx = track.search_offset
            + lookup_bucket(time, track.lookup_origin, track.lookup_scale, 2 * last);
    } else if track.lookup_scale < 0.0 {
        let c = (((time - track.lookup_origin) * -track.lookup_scale).clamp(0.0, last as f32)
            as u32)
            .min(last);
        idx = keys + c;
    }
    find_segment_from(times, search_keys, track, idx, time)
}

#[doc(hidden)]
/// [`find_segment_track`]'s steps from search texel `first_texel` instead
/// of the track's own first guess: the shader's `search_pair` from given
/// texels (the clip-blocks plan's run keys start each row's search at the
/// key texel that its run's bucket table names). `times` are the track's
/// own key times. The result is [`find_segment`]'s from any of the
/// track's search texels.
#[must_use]
pub(crate) fn find_segment_from(
    times: &[f32],
    search_keys: &[u32],
    track: &GpuTrack,
    first_texel: u32,
    time: f32,
) -> Segment {
    let last = track.key_count - 1;
    let keys = track.key_texels();
    let (mut lo, mut hi) = (0, last);
    let mut idx = first_texel;
    let mut first = true;
    // The shader's bound on the steps.
    for _ in 0..crate::layout::SEARCH_STEPS {
        let w = key_texel(times, search_keys[idx as usize] as usize);
        let p = w[0];
        let (tp, ta, tb) = (
            f32::from_bits(w[1]),
            f32::from_bits(w[2]),
            f32::from_bits(w[3]),
        );
        let below = time < tp && p > 0;
        let above = time >= tb && p + 2 <= last && !below;
        if !(below || above) {
            let second = time >= ta && p < last;
            let k = if second { p + 1 } else { p };
            let (t0, t1) = if second { (ta, tb) } else { (tp, ta) };
            return segment_of(k, last, t0, t1, time);
        }
        if below {
            hi = p - 1;
        }
        if above {
            lo = p + 2;
        }
        let near = if below { hi.max(lo + 1) - 1 } else { lo };
        idx = keys + if first { near } else { lo + (hi - lo) / 2 };
        first = false;
    }
    Segment {
        k: 0,
        t: 0.0,
        dt: 0.0,
        exact: true,
    }
}

#[doc(hidden)]
/// The segment of `time` among `times` (a track's key times, two at
/// least) when it is known to be key `p`'s or key `p + 1`'s, `p` before
/// the last key: the decision of one search step on key `p`'s search
/// texel, without its miss arithmetic and without the key count. The
/// shader's `first_segment`, which the clip-blocks plan's exact run tables
/// (`crate::tables::run_keys`, mode 3) take as the whole search. Past the last key
/// the texel's two last times are equal (indices clamp to the last key),
/// so a zero interval marks the exact end instead of `k >= last`. Equal
/// to [`find_segment`]'s result whenever `times[p] <= time` (or `p` is 0)
/// and `time < times[p + 2]` (or `p + 2` is past the last key).
#[cfg(test)]
#[must_use]
pub(crate) fn first_segment(times: &[f32], p: u32, time: f32) -> Segment {
    let w = key_texel(times, p as usize);
    let (tp, ta, tb) = (
        f32::from_bits(w[1]),
        f32::from_bits(w[2]),
        f32::from_bits(w[3]),
    );
    let second = time >= ta;
    let k = if second { p + 1 } else { p };
    let (t0, t1) = if second { (ta, tb) } else { (tp, ta) };
    segment_at(k, t0, t1, time, t1 - t0 <= 0.0)
}

fn value_at(values: &[f32], track: &GpuTrack, e: u32, c: u32) -> f32 {
    values[(track.values_offset + e * track.width + c) as usize]
}

fn quat_at(values: &[f32], track: &GpuTrack, e: u32) -> Vec4 {
    let b = (track.values_offset + e * 4) as usize;
    Vec4::new(values[b], values[b + 1], values[b + 2], values[b + 3])
}

/// The glTF cubic Hermite spline for one component:
/// `h00 v0 + dt h10 b0 + h01 v1 + dt h11 a1`.
#[must_use]
pub(crate) fn hermite(v0: f32, b0: f32, v1: f32, a1: f32, t: f32, dt: f32) -> f32 {
    let t2 = t * t;
    let t3 = t2 * t;
    let h00 = 2.0 * t3 - 3.0 * t2 + 1.0;
    let h10 = t3 - 2.0 * t2 + t;
    let h01 = -2.0 * t3 + 3.0 * t2;
    let h11 = t3 - t2;
    h00 * v0 + dt * h10 * b0 + h01 * v1 + dt * h11 * a1
}

#[doc(hidden)]
/// Samples one track at clip time `time` into `out[..width]`.
pub(crate) fn sample_track(
    times: &[f32],
    search_keys: &[u32],
    values: &[f32],
    track: &GpuTrack,
    time: f32,
    out: &mut [f32],
) {
    let seg = find_segment_track(times, search_keys, track, time);
    let cubic = track.interpolation == INTERP_CUBICSPLINE;
    let moving = !(seg.exact || track.interpolation == INTERP_STEP);
    let rotation = track.kind == KIND_ROTATION;
    let k = seg.k;
    // The shader's HAS_* specialization only removes blocks no track
    // reaches, so the twin has every block.
    if rotation && track.interpolation == INTERP_LINEAR {
        let q0 = quat_at(values, track, k);
        let mut q = q0;
        if moving {
            q = quat_slerp(q0, quat_at(values, track, k + 1), seg.t);
        }
        for c in 0..4 {
            out[c] = q[c];
        }
        return;
    }
    let width = track.width;
    if cubic {
        // One loop for every property, as in the shader: key k's value
        // (element 3k + 1) as is when not moving, else the spline;
        // rotations are normalized after it.
        let e = 3 * k + 1;
        let mut q = Vec4::ZERO;
        for c in 0..width {
            let mut v = value_at(values, track, e, c);
            if moving {
                v = hermite(
                    v,
                    value_at(values, track, e + 1, c),
                    value_at(values, track, e + 3, c),
                    value_at(values, track, e + 2, c),
                    seg.t,
                    seg.dt,
                );
            }
            q[c.min(3) as usize] = v;
            out[c as usize] = v;
        }
        if rotation && moving {
            q = quat_normalize(q);
            for c in 0..4 {
                out[c] = q[c];
            }
        }
        return;
    }
    // The blend: key k's value and the next key's.
    let t = seg.t;
    for c in 0..width {
        // Key k's value as is when not moving (STEP, on a key, clamped):
        // the next key's is not read.
        let mut v = value_at(values, track, k, c);
        if moving {
            v = (1.0 - t) * v + t * value_at(values, track, k + 1, c);
        }
        out[c as usize] = v;
    }
}

#[doc(hidden)]
/// Samples one track of a compressed library (`packed`, its packed words,
/// and where its verbatim tracks start in them) at clip time `time` into
/// `out[..width]`: the shader's
/// `find_segment_track` (a track with uniform key times: `rate_segment`,
/// no texel), then `sample_compressed`.
pub(crate) fn sample_track_compressed(
    times: &[f32],
    search_keys: &[u32],
    (packed, verbatim_start): (&[u32], u32),
    track: &GpuTrack,
    time: f32,
    out: &mut [f32],
) {
    let seg = if track.lookup_scale < 0.0 {
        super::decode::rate_segment(packed, verbatim_start, track, time)
    } else {
        find_segment_track(times, search_keys, track, time)
    };
    super::decode::sample_compressed(packed, verbatim_start, track, seg, out);
}

#[doc(hidden)]
/// Samples every track of every resolved instance: the body of
/// `sample_main`, looped over all invocations, over a library's tables
/// (`LibraryTables::of`). `output` must hold
/// `instances.len() * library.output_stride()` floats.
pub fn sample_resolved(library: &LibraryTables, instances: &[GpuInstance], output: &mut [f32]) {
    sample_group(library, instances, GROUP_ALL, 0..u32::MAX, output);
}

/// What one sampler dispatch computes (`sample_main` with the override
/// `GROUP`, or a part of `sample_blocks_main`): the tracks of group
/// `group` (every track for `GROUP_ALL`) of every resolved instance whose
/// clip is in `clips`, into `output` as [`sample_resolved`] writes them.
pub(crate) fn sample_group(
    library: &LibraryTables,
    instances: &[GpuInstance],
    group: u32,
    clips: std::ops::Range<u32>,
    output: &mut [f32],
) {
    let stride = library.output_stride() as usize;
    let table = library.clip_table();
    for (i, inst) in instances.iter().enumerate() {
        let Some(clip) = table.get(inst.clip as usize) else {
            continue;
        };
        if !clips.contains(&inst.clip) {
            continue;
        }
        for j in 0..clip.track_count {
            let track = &library.tracks()[(clip.track_offset + j) as usize];
            if group != GROUP_ALL && track.group() != group {
                continue;
            }
            let out = i * stride + track.output_offset as usize;
            let out = &mut output[out..out + track.width as usize];
            match library.packed() {
                Some(packed) => sample_track_compressed(
                    library.times(),
                    library.search_keys(),
                    (packed.words(), packed.verbatim_start()),
                    track,
                    inst.time,
                    out,
                ),
                None => sample_track(
                    library.times(),
                    library.search_keys(),
                    library.values(),
                    track,
                    inst.time,
                    out,
                ),
            }
        }
    }
}
