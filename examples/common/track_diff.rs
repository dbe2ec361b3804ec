//! The examples' and the tests' comparison of two sampled outputs (the
//! GPU's against the CPU twin's, laid out as `AnimationLibrary` describes):
//! the largest absolute error per track, rotations up to sign. The crate's
//! own comparison of results is `Poses::compare`; this one reads the
//! sampler's flat output. Included by path (`#[path]`).
#![allow(dead_code, reason = "each example and test uses a subset")]

use keyframe_gpu::{AnimationLibrary, Property};

/// The largest error of one track of one clip, over all compared instances.
#[derive(Debug, Clone, PartialEq)]
pub struct TrackDiff {
    /// Clip index.
    pub clip: usize,
    /// Track index inside the clip.
    pub track: usize,
    /// The track's property.
    pub property: Property,
    /// The largest absolute component difference (rotations up to sign).
    pub max_abs_err: f32,
}

/// Per-track errors between two outputs of the same instances.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Report {
    /// One entry per (clip, track) that at least one instance played.
    pub tracks: Vec<TrackDiff>,
}

impl Report {
    /// The largest error over every track (0 for an empty report; NaN if
    /// any compared component was NaN on one side only).
    #[must_use]
    pub fn max_abs_err(&self) -> f32 {
        self.tracks.iter().fold(0.0, |m, t| {
            if t.max_abs_err.is_nan() || m.is_nan() {
                f32::NAN
            } else {
                m.max(t.max_abs_err)
            }
        })
    }
}

/// Largest absolute difference of two component slices; a NaN on either side
/// that is not matched by a NaN on the other counts as NaN (a failure).
#[must_use]
pub fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).fold(0.0, |m: f32, (&x, &y)| {
        let d = if x.is_nan() && y.is_nan() {
            0.0
        } else {
            (x - y).abs()
        };
        if d.is_nan() || m.is_nan() {
            f32::NAN
        } else {
            m.max(d)
        }
    })
}

/// Quaternion difference up to sign: `min(|a - b|, |a + b|)` per component
/// maximum, choosing the sign by the dot product.
#[must_use]
pub fn quat_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    let d: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    if d < 0.0 {
        let neg: Vec<f32> = b.iter().map(|y| -y).collect();
        max_abs_diff(a, &neg)
    } else {
        max_abs_diff(a, b)
    }
}

/// Compares two outputs of `clips.len()` instances (instance `i` played clip
/// `clips[i]`) laid out as described on `AnimationLibrary`.
#[must_use]
pub fn compare(library: &AnimationLibrary, clips: &[u32], a: &[f32], b: &[f32]) -> Report {
    let stride = library.output_stride() as usize;
    let mut report = Report::default();
    let mut index = std::collections::BTreeMap::new();
    for (i, &clip) in clips.iter().enumerate() {
        let Some(c) = library.clips().get(clip as usize) else {
            continue;
        };
        for (j, track) in c.tracks.iter().enumerate() {
            let Some((offset, width)) = library.track_output(clip, j as u32) else {
                continue;
            };
            let start = i * stride + offset as usize;
            let end = start + width as usize;
            let (Some(x), Some(y)) = (a.get(start..end), b.get(start..end)) else {
                continue;
            };
            let err = if track.property == Property::Rotation {
                quat_abs_diff(x, y)
            } else {
                max_abs_diff(x, y)
            };
            let slot = *index.entry((clip as usize, j)).or_insert_with(|| {
                report.tracks.push(TrackDiff {
                    clip: clip as usize,
                    track: j,
                    property: track.property,
                    max_abs_err: 0.0,
                });
                report.tracks.len() - 1
            });
            let e = &mut report.tracks[slot].max_abs_err;
            *e = if err.is_nan() || e.is_nan() {
                f32::NAN
            } else {
                e.max(err)
            };
        }
    }
    report
}
