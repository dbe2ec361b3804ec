//! [`AnimationLibrary`]: validated clips flattened into the arrays that the
//! GPU and the CPU twin read.

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::layout::{GpuClip, GpuTrack};
use crate::track::{normalize_rotation_keys, Clip};

/// Many clips, validated and flattened into GPU-ready arrays.
///
/// Output layout (stable): every instance owns a block of
/// [`output_stride`](Self::output_stride) `f32`s. Track `j` of the
/// instance's clip writes its `width` components at
/// `instance * output_stride + track_output_offset(clip, j)`, in track
/// order, with no padding between tracks. Components past the clip's
/// `output_width` are never written.
#[derive(Debug, Clone)]
pub struct AnimationLibrary {
    clips: Vec<Clip>,
    times: Vec<f32>,
    values: Vec<f32>,
    tracks: Vec<GpuTrack>,
    clip_table: Vec<GpuClip>,
    output_stride: u32,
    tracks_per_instance: u32,
}

fn to_u32(n: usize, what: &'static str) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::LimitExceeded {
        what,
        needed: n as u64 * 4,
        limit_name: "u32 indexing",
        limit: u64::from(u32::MAX),
    })
}

/// The largest key count indexed directly: the sampler's guess
/// `(time - t_0) * key_scale` stays within 1/8 of a key of the exact value
/// in `f32` up to here.
const MAX_DIRECT_KEYS: usize = 1 << 20;

/// Keys per second for direct key indexing (`GpuTrack::key_scale`), or 0
/// when the keys must be searched.
///
/// Direct indexing guesses the key of time `T` as
/// `c = u32(clamp((T - t_0) * s, 0, last))` and searches only
/// `[c - 1, c + 1]`. That finds the right key `k` (the largest with
/// `t_k <= T`) when every key's own guess is `k` or `k - 1`: the guess is
/// monotonic in `T` (a correctly rounded subtraction and multiplication,
/// as WGSL requires), so for `t_k <= T < t_(k+1)` it lies between the
/// guesses of `t_k` and `t_(k+1)`, that is in `[k - 1, k + 1]`. This checks,
/// in `f64` from the `f32` inputs, that `(t_k - t_0) s` is within 0.75 of
/// `k` for every key, which leaves more than the `f32` rounding of the
/// product (under 0.2 for up to [`MAX_DIRECT_KEYS`] keys) to spare. Keys
/// baked at a fixed rate (`k / 30` rounded to `f32`) pass; irregular keys do
/// not and are searched.
fn uniform_key_scale(times: &[f32]) -> f32 {
    let n = times.len();
    if !(3..=MAX_DIRECT_KEYS).contains(&n) {
        return 0.0;
    }
    let t0 = f64::from(times[0]);
    let span = f64::from(times[n - 1]) - t0;
    if span <= 0.0 || !span.is_finite() {
        return 0.0;
    }
    let s = ((n - 1) as f64 / span) as f32;
    if !s.is_finite() || s <= 0.0 || s > 1e30 {
        return 0.0;
    }
    let uniform = times.iter().enumerate().all(|(k, &t)| {
        let guess = (f64::from(t) - t0) * f64::from(s);
        (guess - k as f64).abs() <= 0.75
    });
    if uniform {
        s
    } else {
        0.0
    }
}

impl AnimationLibrary {
    /// Validates every clip and flattens them. Key times shared between
    /// tracks (the same [`std::sync::Arc`]) are stored once. Rotation keys
    /// within [`QUAT_UNIT_TOLERANCE`](crate::QUAT_UNIT_TOLERANCE) of unit
    /// length are stored normalized ([`normalize_rotation_keys`]); the
    /// clips returned by [`clips`](Self::clips) keep the values as given.
    ///
    /// # Errors
    /// [`Error::EmptyLibrary`], [`Error::EmptyClip`], [`Error::InvalidTrack`]
    /// (naming clip, track and key), or [`Error::LimitExceeded`] when an
    /// index does not fit in `u32`. Nothing is built on error.
    pub fn new(clips: Vec<Clip>) -> Result<Self> {
        if clips.is_empty() {
            return Err(Error::EmptyLibrary);
        }
        for (i, clip) in clips.iter().enumerate() {
            clip.validate(i)?;
        }
        let mut times = Vec::new();
        let mut values = Vec::new();
        let mut tracks = Vec::new();
        let mut clip_table = Vec::with_capacity(clips.len());
        // Shared inputs, keyed by the address and length of their allocation.
        let mut shared: HashMap<(usize, usize), u32> = HashMap::new();
        let mut output_stride = 0u32;
        let mut tracks_per_instance = 0u32;
        for clip in &clips {
            let track_offset = to_u32(tracks.len(), "track table")?;
            let mut output_offset = 0u32;
            for track in &clip.tracks {
                let key = (track.times.as_ptr() as usize, track.times.len());
                let times_offset = match shared.get(&key) {
                    Some(&o) => o,
                    None => {
                        let o = to_u32(times.len(), "key times")?;
                        times.extend_from_slice(&track.times);
                        shared.insert(key, o);
                        o
                    }
                };
                let values_offset = to_u32(values.len(), "key values")?;
                let start = values.len();
                values.extend_from_slice(&track.values);
                normalize_rotation_keys(track.property, track.interpolation, &mut values[start..]);
                tracks.push(GpuTrack {
                    times_offset,
                    key_count: to_u32(track.times.len(), "key times")?,
                    values_offset,
                    width: track.width,
                    interpolation: track.interpolation as u32,
                    property: track.property as u32,
                    output_offset,
                    node: track.node,
                    key_scale: uniform_key_scale(&track.times),
                });
                output_offset =
                    output_offset
                        .checked_add(track.width)
                        .ok_or(Error::LimitExceeded {
                            what: "output block of one instance",
                            needed: u64::from(output_offset) * 4 + u64::from(track.width) * 4,
                            limit_name: "u32 indexing",
                            limit: u64::from(u32::MAX),
                        })?;
            }
            let track_count = to_u32(clip.tracks.len(), "track table")?;
            clip_table.push(GpuClip {
                track_offset,
                track_count,
                output_width: output_offset,
                duration: clip.duration(),
            });
            output_stride = output_stride.max(output_offset);
            tracks_per_instance = tracks_per_instance.max(track_count);
        }
        to_u32(values.len(), "key values")?;
        to_u32(tracks.len(), "track table")?;
        Ok(AnimationLibrary {
            clips,
            times,
            values,
            tracks,
            clip_table,
            output_stride,
            tracks_per_instance,
        })
    }

    /// The clips, as given.
    #[must_use]
    pub fn clips(&self) -> &[Clip] {
        &self.clips
    }

    /// All key times, shared inputs stored once.
    #[must_use]
    pub fn times(&self) -> &[f32] {
        &self.times
    }

    /// All key values, track after track.
    #[must_use]
    pub fn values(&self) -> &[f32] {
        &self.values
    }

    /// The track table, clip after clip.
    #[must_use]
    pub fn tracks(&self) -> &[GpuTrack] {
        &self.tracks
    }

    /// The clip table.
    #[must_use]
    pub fn clip_table(&self) -> &[GpuClip] {
        &self.clip_table
    }

    /// `f32`s per instance in the output: the largest clip output width.
    #[must_use]
    pub fn output_stride(&self) -> u32 {
        self.output_stride
    }

    /// The largest track count of any clip: invocations per instance.
    #[must_use]
    pub fn tracks_per_instance(&self) -> u32 {
        self.tracks_per_instance
    }

    /// Where track `track` of clip `clip` writes inside an instance's output
    /// block: `(offset, width)`, or `None` if either index is out of range.
    #[must_use]
    pub fn track_output(&self, clip: usize, track: usize) -> Option<(u32, u32)> {
        let c = self.clip_table.get(clip)?;
        if track >= c.track_count as usize {
            return None;
        }
        let t = self.tracks.get(c.track_offset as usize + track)?;
        Some((t.output_offset, t.width))
    }
}
