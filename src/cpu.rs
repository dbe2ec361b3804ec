//! The CPU twin of `shaders/quat.wgsl` and `shaders/sample.wgsl`.
//!
//! One function per WGSL function, same names, same argument order, same
//! `f32` operations in the same order and the same constants, reading the
//! same flat arrays ([`AnimationLibrary`]) and producing the same output
//! layout. It is the reference every GPU result is compared with; the tests
//! check it in turn against values computed by hand from the formulas in
//! DESIGN.md, and against glam's independent slerp.
//!
//! # Panics
//! The per-function twins (`find_segment`, `sample_track`, ...) index the
//! flat arrays exactly as the shader does and panic on offsets outside them;
//! arrays and tracks taken from one [`AnimationLibrary`] are always in range.
//! [`sample`] checks its instances and never panics.
#![allow(
    clippy::needless_range_loop,
    reason = "keeps the code easy to compare with the shader"
)]

use glam::Vec4;

use crate::error::Result;
use crate::instance::{resolve_instances, Instance};
use crate::layout::{GpuInstance, GpuTrack};
use crate::library::AnimationLibrary;
use crate::track::{Interpolation, Property};

/// Above this dot product slerp falls back to normalized lerp.
pub const SLERP_NLERP_THRESHOLD: f32 = 0.9995;

const INTERP_STEP: u32 = Interpolation::Step as u32;
const INTERP_CUBICSPLINE: u32 = Interpolation::CubicSpline as u32;
const PROP_ROTATION: u32 = Property::Rotation as u32;

/// `sin(x)` for `x` in `[0, pi/2]`: Taylor series to `x^11` (error < 6e-8 in
/// exact arithmetic; evaluated in `f32`, about 2.0e-7 measured, see `tests/cpu_reference.rs`).
#[must_use]
#[allow(clippy::excessive_precision, reason = "same literals as the WGSL")]
pub fn kf_sin(x: f32) -> f32 {
    let x2 = x * x;
    x * (1.0
        + x2 * (-0.16666667
            + x2 * (0.008333334
                + x2 * (-0.0001984127 + x2 * (0.0000027557319 + x2 * -0.000000025052108)))))
}

/// `acos(x)` for `x` in `[0, 1]` (Abramowitz & Stegun 4.4.46, error <= 2e-8
/// in exact arithmetic; evaluated in `f32`, about 2.4e-7 measured); `x` is clamped
/// to that range.
#[must_use]
#[allow(clippy::excessive_precision, reason = "same literals as the WGSL")]
pub fn kf_acos(x: f32) -> f32 {
    let c = x.clamp(0.0, 1.0);
    let p = 1.5707963050
        + c * (-0.2145988016
            + c * (0.0889789874
                + c * (-0.0501743046
                    + c * (0.0308918810
                        + c * (-0.0170881256 + c * (0.0066700901 + c * -0.0012624911))))));
    (1.0 - c).sqrt() * p
}

/// Normalizes `q`; a zero-length `q` is returned unchanged.
#[must_use]
pub fn quat_normalize(q: Vec4) -> Vec4 {
    let len2 = dot(q, q);
    if len2 > 0.0 {
        return q / len2.sqrt();
    }
    q
}

// WGSL's dot: ((x*x' + y*y') + z*z') + w*w'.
fn dot(a: Vec4, b: Vec4) -> f32 {
    a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w
}

/// Shortest-path slerp from `q0` to `q1` at `t`, with the nlerp fallback
/// above [`SLERP_NLERP_THRESHOLD`].
#[must_use]
pub fn quat_slerp(q0: Vec4, q1_in: Vec4, t: f32) -> Vec4 {
    let mut q1 = q1_in;
    let mut d = dot(q0, q1);
    if d < 0.0 {
        q1 = -q1;
        d = -d;
    }
    if d > SLERP_NLERP_THRESHOLD {
        return quat_normalize((1.0 - t) * q0 + t * q1);
    }
    // normalize(s0 q0 + s1 q1) equals normalize((s0 q0 + s1 q1) / sin(theta)):
    // the division is left out, as in the shader.
    let theta = kf_acos(d);
    let s0 = kf_sin((1.0 - t) * theta);
    let s1 = kf_sin(t * theta);
    quat_normalize(s0 * q0 + s1 * q1)
}

/// A key interval: exactly on key `k` (`exact`), or between `k` and `k + 1`
/// at factor `t`. Mirrors WGSL `Segment`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    /// The key at or before the time.
    pub k: u32,
    /// Interpolation factor in `(0, 1)` when not exact, else 0.
    pub t: f32,
    /// The time is on key `k` or clamped to it: use its value as is.
    pub exact: bool,
}

/// The largest `k` in `[lo, lo + len)` with `times[times_offset + k] <= time`,
/// or `lo` when there is none: a branchless binary search whose number of
/// steps depends only on `len`.
#[must_use]
pub fn search_keys(times: &[f32], times_offset: u32, lo_in: u32, len_in: u32, time: f32) -> u32 {
    let o = times_offset as usize;
    let mut lo = lo_in;
    let mut len = len_in;
    while len > 1 {
        let half = len / 2;
        // WGSL: select(lo, lo + half, cond)
        lo = if times[o + (lo + half) as usize] <= time {
            lo + half
        } else {
            lo
        };
        len -= half;
    }
    lo
}

/// The segment of `time` given `k`, the largest key index with
/// `times[k] <= time` (0 when `time` is before the first key): `time <=
/// times[k]` means clamped before the first key or exactly on key `k`;
/// `k == last` means at or after the last key; otherwise `time` is strictly
/// inside `(times[k], times[k + 1])`.
#[must_use]
pub fn segment_at(times: &[f32], times_offset: u32, key_count: u32, k: u32, time: f32) -> Segment {
    let o = times_offset as usize;
    let t0 = times[o + k as usize];
    if time <= t0 || k + 1 >= key_count {
        return Segment {
            k,
            t: 0.0,
            exact: true,
        };
    }
    let t1 = times[o + k as usize + 1];
    Segment {
        k,
        t: (time - t0) / (t1 - t0),
        exact: false,
    }
}

/// Finds the key interval of `time` among `times[times_offset..][..key_count]`:
/// one [`search_keys`] over all keys, then [`segment_at`].
#[must_use]
pub fn find_segment(times: &[f32], times_offset: u32, key_count: u32, time: f32) -> Segment {
    let k = search_keys(times, times_offset, 0, key_count, time);
    segment_at(times, times_offset, key_count, k, time)
}

/// As [`find_segment`], for a track: when the host found its keys uniformly
/// spaced (`key_scale > 0`, see [`AnimationLibrary`]) the key is guessed
/// directly and only `[c - 1, c + 1]` is searched; the result is the same
/// segment as the full search.
#[must_use]
pub fn find_segment_track(times: &[f32], track: &GpuTrack, time: f32) -> Segment {
    if track.key_scale > 0.0 {
        let o = track.times_offset;
        let last = track.key_count - 1;
        let c = ((time - times[o as usize]) * track.key_scale).clamp(0.0, last as f32) as u32;
        let lo = c.max(1) - 1;
        let hi = (c + 1).min(last);
        let k = search_keys(times, o, lo, hi - lo + 1, time);
        return segment_at(times, o, track.key_count, k, time);
    }
    find_segment(times, track.times_offset, track.key_count, time)
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
pub fn hermite(v0: f32, b0: f32, v1: f32, a1: f32, t: f32, dt: f32) -> f32 {
    let t2 = t * t;
    let t3 = t2 * t;
    let h00 = 2.0 * t3 - 3.0 * t2 + 1.0;
    let h10 = t3 - 2.0 * t2 + t;
    let h01 = -2.0 * t3 + 3.0 * t2;
    let h11 = t3 - t2;
    h00 * v0 + dt * h10 * b0 + h01 * v1 + dt * h11 * a1
}

/// Samples one track at clip time `time` into `out[..width]`.
pub fn sample_track(times: &[f32], values: &[f32], track: &GpuTrack, time: f32, out: &mut [f32]) {
    let seg = find_segment_track(times, track, time);
    let cubic = track.interpolation == INTERP_CUBICSPLINE;
    let width = track.width;
    if seg.exact || track.interpolation == INTERP_STEP {
        let mut e = seg.k;
        if cubic {
            e = 3 * seg.k + 1;
        }
        for c in 0..width {
            out[c as usize] = value_at(values, track, e, c);
        }
        return;
    }
    let k = seg.k;
    let t = seg.t;
    if !cubic {
        if track.property == PROP_ROTATION {
            let q = quat_slerp(quat_at(values, track, k), quat_at(values, track, k + 1), t);
            for c in 0..4 {
                out[c] = q[c];
            }
            return;
        }
        for c in 0..width {
            out[c as usize] =
                (1.0 - t) * value_at(values, track, k, c) + t * value_at(values, track, k + 1, c);
        }
        return;
    }
    let o = track.times_offset as usize;
    let dt = times[o + k as usize + 1] - times[o + k as usize];
    let h = |c: u32| {
        hermite(
            value_at(values, track, 3 * k + 1, c),
            value_at(values, track, 3 * k + 2, c),
            value_at(values, track, 3 * k + 4, c),
            value_at(values, track, 3 * k + 3, c),
            t,
            dt,
        )
    };
    if track.property == PROP_ROTATION {
        let mut q = Vec4::ZERO;
        for c in 0..4 {
            q[c] = h(c as u32);
        }
        q = quat_normalize(q);
        for c in 0..4 {
            out[c] = q[c];
        }
        return;
    }
    for c in 0..width {
        out[c as usize] = h(c);
    }
}

/// Samples every track of every resolved instance: the body of
/// `sample_main`, looped over all invocations. `output` must hold
/// `instances.len() * library.output_stride()` floats.
pub fn sample_resolved(library: &AnimationLibrary, instances: &[GpuInstance], output: &mut [f32]) {
    let stride = library.output_stride() as usize;
    let clips = library.clip_table();
    for (i, inst) in instances.iter().enumerate() {
        let Some(clip) = clips.get(inst.clip as usize) else {
            continue;
        };
        for j in 0..clip.track_count {
            let track = &library.tracks()[(clip.track_offset + j) as usize];
            let out = i * stride + track.output_offset as usize;
            sample_track(
                library.times(),
                library.values(),
                track,
                inst.time,
                &mut output[out..out + track.width as usize],
            );
        }
    }
}

/// Samples `instances` on the CPU into a new buffer with the GPU's output
/// layout (see [`AnimationLibrary`]); unwritten components are 0.
///
/// # Errors
/// The same instance errors as the GPU sampler: a clip index out of range,
/// a non-finite time.
pub fn sample(library: &AnimationLibrary, instances: &[Instance]) -> Result<Vec<f32>> {
    let resolved = resolve_instances(library, instances)?;
    let mut output = vec![0.0; resolved.len() * library.output_stride() as usize];
    sample_resolved(library, &resolved, &mut output);
    Ok(output)
}
