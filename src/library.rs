//! [`AnimationLibrary`]: validated clips flattened into the arrays that the
//! GPU and the CPU twin read.

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::key_lookup::{key_lookup, uniform_key_scale};
use crate::layout::{GpuClip, GpuTrack, SAMPLE_GROUPS};
use crate::track::{normalize_rotation_keys, Clip};

/// Many clips, validated and flattened into GPU-ready arrays.
///
/// Output layout (stable): every instance owns a block of
/// [`output_stride`](Self::output_stride) `f32`s. Track `j` of the
/// instance's clip writes its `width` components at
/// `instance * output_stride + track_output(clip, j).0`, in track
/// order, with no padding between tracks. Components past the clip's
/// `output_width` are never written.
///
/// Cloning is cheap: the arrays are shared behind an [`Arc`], so a
/// [`GpuSampler`](crate::gpu::GpuSampler) keeps a handle to the library it
/// was built from rather than a copy of its keys.
#[derive(Debug, Clone)]
pub struct AnimationLibrary {
    data: Arc<LibraryData>,
}

/// The arrays of an [`AnimationLibrary`], built once and never changed.
#[derive(Debug)]
struct LibraryData {
    clips: Vec<Clip>,
    times: Vec<f32>,
    key_lookup: Vec<u32>,
    values: Vec<f32>,
    tracks: Vec<GpuTrack>,
    clip_table: Vec<GpuClip>,
    output_stride: u32,
    tracks_per_instance: u32,
    group_tracks: [u32; SAMPLE_GROUPS],
    track_rows: Vec<u32>,
}

fn to_u32(n: usize, what: &'static str) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::LimitExceeded {
        what,
        needed: n as u64 * 4,
        limit_name: "u32 indexing",
        limit: u64::from(u32::MAX),
    })
}

/// A hash of the bits of a key time array and its length.
fn times_hash(times: &[f32]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    times.len().hash(&mut h);
    for t in times {
        t.to_bits().hash(&mut h);
    }
    h.finish()
}

impl AnimationLibrary {
    /// Validates every clip and flattens them. Key times shared between
    /// tracks are stored once, with one lookup table: the same
    /// [`std::sync::Arc`], or arrays with the same contents bit for bit
    /// (exporters often write one input accessor per channel, all baked at
    /// the same frames; sharing them keeps the search's working set in
    /// cache). Rotation keys
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
        let mut times: Vec<f32> = Vec::new();
        let mut values = Vec::new();
        let mut tracks = Vec::new();
        let mut clip_table = Vec::with_capacity(clips.len());
        // Shared inputs, keyed by the address and length of their
        // allocation, then by their contents (a hash of the bits, confirmed
        // by comparing them).
        let mut key_lookup_table = Vec::new();
        let mut shared: HashMap<(usize, usize), (u32, f32)> = HashMap::new();
        let mut by_contents: HashMap<u64, Vec<(u32, f32)>> = HashMap::new();
        let mut output_stride = 0u32;
        let mut tracks_per_instance = 0u32;
        let mut group_tracks = [0u32; SAMPLE_GROUPS];
        let mut track_rows = Vec::new();
        for clip in &clips {
            let track_offset = to_u32(tracks.len(), "track table")?;
            let mut output_offset = 0u32;
            for track in &clip.tracks {
                let key = (track.times.as_ptr() as usize, track.times.len());
                let bits = times_hash(&track.times);
                let same = |&&(o, _): &&(u32, f32)| {
                    let stored = &times[o as usize..];
                    stored.len() >= track.times.len()
                        && stored[..track.times.len()]
                            .iter()
                            .zip(track.times.iter())
                            .all(|(a, b)| a.to_bits() == b.to_bits())
                };
                let found = shared.get(&key).copied().or_else(|| {
                    by_contents
                        .get(&bits)
                        .and_then(|c| c.iter().find(same).copied())
                });
                let (times_offset, lookup_scale) = match found {
                    Some(shared) => shared,
                    None => {
                        let o = to_u32(times.len(), "key times")?;
                        times.extend_from_slice(&track.times);
                        // The lookup entries sit at twice the times' offset.
                        let direct = uniform_key_scale(&track.times);
                        let scale = match key_lookup(&track.times) {
                            _ if direct > 0.0 => {
                                key_lookup_table.resize(2 * times.len(), 0);
                                -direct
                            }
                            Some((scale, entries)) => {
                                key_lookup_table.extend_from_slice(&entries);
                                scale
                            }
                            None => {
                                key_lookup_table.resize(2 * times.len(), 0);
                                0.0
                            }
                        };
                        shared.insert(key, (o, scale));
                        by_contents.entry(bits).or_default().push((o, scale));
                        (o, scale)
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
                    lookup_scale,
                    lookup_origin: if lookup_scale != 0.0 {
                        track.times[0]
                    } else {
                        0.0
                    },
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
            // The clip's rows, grouped by shader block, then by property
            // within a group (so that SIMD lanes and GPU warps side by side
            // have the same width; stable otherwise); track_rows maps the
            // clip's track j to its row.
            let rows = &mut tracks[track_offset as usize..];
            let mut order: Vec<usize> = (0..rows.len()).collect();
            order.sort_by_key(|&j| (rows[j].group(), rows[j].property));
            let grouped: Vec<GpuTrack> = order.iter().map(|&j| rows[j]).collect();
            rows.copy_from_slice(&grouped);
            let mut row_of = vec![0u32; order.len()];
            for (row, &j) in order.iter().enumerate() {
                row_of[j] = track_offset + row as u32;
            }
            track_rows.extend_from_slice(&row_of);
            let mut counts = [0u32; SAMPLE_GROUPS];
            for t in &grouped {
                counts[t.group() as usize] += 1;
            }
            for (most, count) in group_tracks.iter_mut().zip(counts) {
                *most = (*most).max(count);
            }
            let track_count = to_u32(clip.tracks.len(), "track table")?;
            clip_table.push(GpuClip {
                track_offset,
                track_count,
                output_width: output_offset,
                duration: clip.duration(),
                group_first: std::array::from_fn(|g| {
                    track_offset + counts[..g].iter().sum::<u32>()
                }),
                group_count: counts,
            });
            output_stride = output_stride.max(output_offset);
            tracks_per_instance = tracks_per_instance.max(track_count);
        }
        to_u32(values.len(), "key values")?;
        to_u32(key_lookup_table.len(), "key lookup table")?;
        to_u32(tracks.len(), "track table")?;
        Ok(AnimationLibrary {
            data: Arc::new(LibraryData {
                clips,
                times,
                key_lookup: key_lookup_table,
                values,
                tracks,
                clip_table,
                output_stride,
                tracks_per_instance,
                group_tracks,
                track_rows,
            }),
        })
    }

    /// The clips, as given.
    #[must_use]
    pub fn clips(&self) -> &[Clip] {
        &self.data.clips
    }

    /// The index of the first clip named `name` (an [`Instance`]'s clip),
    /// or `None` when no clip has that name.
    ///
    /// [`Instance`]: crate::Instance
    #[must_use]
    pub fn clip_by_name(&self, name: &str) -> Option<u32> {
        let index = self.data.clips.iter().position(|c| c.name == name)?;
        u32::try_from(index).ok()
    }

    #[doc(hidden)]
    /// All key times, shared inputs stored once.
    #[must_use]
    pub fn times(&self) -> &[f32] {
        &self.data.times
    }

    #[doc(hidden)]
    /// The key lookup tables, two `u32`s per key time at twice the offsets
    /// of [`times`](Self::times): for a track with `lookup_scale > 0`, the
    /// entries of its `2 (key_count - 1)` buckets and two zeros (see
    /// [`GpuTrack::lookup_scale`]); zeros for tracks searched in full.
    #[must_use]
    pub fn key_lookup(&self) -> &[u32] {
        &self.data.key_lookup
    }

    #[doc(hidden)]
    /// All key values, track after track.
    #[must_use]
    pub fn values(&self) -> &[f32] {
        &self.data.values
    }

    #[doc(hidden)]
    /// The track table, clip after clip; within a clip, its tracks grouped
    /// by the shader block that samples them (LINEAR rotations, then
    /// CUBICSPLINE tracks other than rotations, other LINEAR tracks,
    /// CUBICSPLINE rotations, STEP tracks; see [`GpuClip`] and
    /// [`crate::layout::SAMPLE_GROUPS`]; the group fixes the
    /// interpolation), then by property within a group, in clip order
    /// otherwise (a stable sort).
    /// [`track_row`](Self::track_row) finds a clip track's row.
    #[must_use]
    pub fn tracks(&self) -> &[GpuTrack] {
        &self.data.tracks
    }

    #[doc(hidden)]
    /// The clip table.
    #[must_use]
    pub fn clip_table(&self) -> &[GpuClip] {
        &self.data.clip_table
    }

    /// `f32`s per instance in the output: the largest clip output width.
    #[must_use]
    pub fn output_stride(&self) -> u32 {
        self.data.output_stride
    }

    #[doc(hidden)]
    /// The row in [`tracks`](Self::tracks) of track `track` of clip
    /// `clip`, or `None` if either index is out of range.
    #[must_use]
    pub fn track_row(&self, clip: usize, track: usize) -> Option<usize> {
        let c = self.data.clip_table.get(clip)?;
        if track >= c.track_count as usize {
            return None;
        }
        self.data
            .track_rows
            .get(c.track_offset as usize + track)
            .map(|&r| r as usize)
    }

    #[doc(hidden)]
    /// The largest number of tracks of group `group` (a
    /// [`crate::layout::SAMPLE_GROUPS`] index) in any clip: invocations per
    /// instance of that group's dispatch; 0 for a group out of range.
    #[must_use]
    pub fn group_tracks_per_instance(&self, group: usize) -> u32 {
        self.data.group_tracks.get(group).copied().unwrap_or(0)
    }

    /// The largest track count of any clip: invocations per instance.
    #[must_use]
    pub fn tracks_per_instance(&self) -> u32 {
        self.data.tracks_per_instance
    }

    /// Where track `track` of clip `clip` writes inside an instance's output
    /// block: `(offset, width)`, or `None` if either index is out of range.
    #[must_use]
    pub fn track_output(&self, clip: usize, track: usize) -> Option<(u32, u32)> {
        let t = self.data.tracks.get(self.track_row(clip, track)?)?;
        Some((t.output_offset, t.width))
    }
}
