//! [`AnimationLibrary`]: validated clips flattened into the arrays that the
//! GPU and the CPU twin read.

use std::collections::HashMap;
use std::sync::Arc;

use super::compressed::{packed_block, CompressError, CompressedTrack, KeyTimes, Quantized};
use crate::error::{Error, Result};
use crate::key_lookup::{key_lookup, key_texel, search_texel_count, uniform_key_scale};
use crate::layout::{GpuClip, GpuTrack, SAMPLE_GROUPS};
use crate::model::target::SourceId;
use crate::model::track::{
    normalize_rotation_keys, Clip, Interpolation, PointerTarget, PointerType, Property, Track,
    TrackError, ValueKind,
};
use std::collections::HashSet;

/// Many clips, validated and flattened into GPU-ready arrays.
///
/// Output layout (stable): every instance owns a block of
/// [`output_stride`](Self::output_stride) `f32`s. Track `j` of the
/// instance's clip writes its `width` components at
/// `instance * output_stride + track_output(clip, j).0`:
/// - node-property tracks first, in track order, with no padding between
///   them (pointer tracks skipped), from offset 0; components past the
///   clip's node tracks and before the pointer slots are never written;
/// - then one slot per pointer target of the whole library
///   ([`pointer_targets`](Self::pointer_targets)), the same offset in
///   every clip, in the order the targets first appear (clip order, then
///   track order). Every instance writes every slot: the animated value
///   where its clip animates the target, the target's rest value
///   otherwise (a constant STEP track the library adds to the clip). A
///   renderer binds or copies a slot without knowing the clip.
///
/// A library without pointer tracks has no slots: its layout is the node
/// tracks' alone.
///
/// Cloning is cheap: the arrays are shared behind an [`Arc`], so a
/// [`Animator`](crate::Animator) keeps a handle to the library it
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
    search_keys: Vec<u32>,
    values: Vec<f32>,
    tracks: Vec<GpuTrack>,
    clip_table: Vec<GpuClip>,
    output_stride: u32,
    tracks_per_instance: u32,
    group_tracks: [u32; SAMPLE_GROUPS],
    track_rows: Vec<u32>,
    pointer_targets: Vec<PointerOutput>,
    /// A compressed library's packed words (`values` is then empty): per
    /// track its block ([`packed_block`]) at its row's `values_offset`,
    /// every block before `verbatim_start`, then the verbatim tracks'
    /// words ([`CompressedTrack::is_verbatim`]).
    packed: Option<Vec<u32>>,
    /// The first word of the verbatim tracks in `packed` (its length when
    /// there are none): a row whose `values_offset` is at least this is
    /// verbatim.
    verbatim_start: u32,
}

/// Where a pointer target's value lands in every instance's output block:
/// an entry of [`AnimationLibrary::pointer_targets`]. A renderer binds the
/// output buffer at `instance * output_stride + offset` (in `f32`s) and
/// reads `width` numbers there, whatever clip the instance plays.
#[derive(Debug, Clone, PartialEq)]
pub struct PointerOutput {
    /// The JSON pointer, e.g. `/materials/0/pbrMetallicRoughness/baseColorFactor`.
    pub pointer: String,
    /// Its Object Model type.
    pub ty: PointerType,
    /// How the sampler treats it, and how a mixer blends it: vectors
    /// component-wise, [`ValueKind::Discrete`] (`int`, `bool`) by taking
    /// the incoming value when its factor is at least 0.5.
    pub kind: ValueKind,
    /// Offset of its first component in an instance's output block.
    pub offset: u32,
    /// Its components: `ty.width()`.
    pub width: u32,
    /// What instances whose clip does not animate it read there.
    pub rest: Vec<f32>,
}

/// The most rest-value tracks (clips times pointer targets) a library
/// adds; see [`AnimationLibrary::new`].
const MAX_REST_TRACKS: u64 = 1 << 20;

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
    /// tracks are stored once, with one set of search texels: the same
    /// [`std::sync::Arc`], or arrays with the same contents bit for bit
    /// (exporters often write one input accessor per channel, all baked at
    /// the same frames; sharing them keeps the search's working set in
    /// cache). Rotation keys
    /// within [`QUAT_UNIT_TOLERANCE`](crate::QUAT_UNIT_TOLERANCE) of unit
    /// length are stored normalized (`normalize_rotation_keys`); the
    /// clips returned by [`clips`](Self::clips) keep the values as given.
    ///
    /// Pointer tracks write to their target's slot
    /// ([`pointer_targets`](Self::pointer_targets)); each clip that does
    /// not animate a target of the library gets a constant STEP track of
    /// the target's rest value after its own tracks, so that every slot is
    /// written whatever the clip (these tracks are not in
    /// [`clips`](Self::clips)).
    ///
    /// # Errors
    /// [`Error::EmptyLibrary`], [`Error::EmptyClip`], [`Error::InvalidTrack`]
    /// (naming clip, track and key; [`TrackError::PointerTypeConflict`] for
    /// a pointer animated with two types), or [`Error::LimitExceeded`] when
    /// an index does not fit in `u32`. Nothing is built on error.
    pub fn new(clips: Vec<Clip>) -> Result<Self> {
        if clips.is_empty() {
            return Err(Error::EmptyLibrary);
        }
        for (i, clip) in clips.iter().enumerate() {
            clip.validate(i)?;
        }
        let targets = Targets::collect(&clips)?;
        let pointer_targets = targets.outputs()?;
        check_rest_track_count(clips.len(), targets.list.len())?;
        let fillers = rest_value_tracks(&clips, &targets.list);
        let mut flat = Flattener::default();
        for (clip, rest_tracks) in clips.iter().zip(&fillers) {
            flat.add_clip(clip, rest_tracks, None, |p| {
                targets.slot(p, &pointer_targets)
            })?;
        }
        flat.finish(clips, pointer_targets)
    }

    /// A compressed library: `clips` (validated as [`new`](Self::new)
    /// validates them: their tracks give each compressed track its
    /// target, property, interpolation and width, and each clip its
    /// duration) with `tracks[c][t]` in place of the keys of track `t` of
    /// clip `c` on the device. The sampler and the CPU twin decode them
    /// (`docs/ARCHITECTURE.md`, "Compressed clips"); every sampler plan,
    /// the animator, the mixer and the crowd take such a library as they
    /// take any other. Pointer rest values are stored raw. The host keeps
    /// `clips` as given ([`clips`](Self::clips)).
    ///
    /// This is what [`crate::compress`] builds, and the only way to a
    /// compressed library; each compressed track is validated here
    /// ([`CompressedTrack::validate`]) before anything is built from it.
    ///
    /// # Errors
    /// Those of [`new`](Self::new); [`Error::Compressed`] for a count of
    /// compressed tracks that does not match, or the first compressed
    /// track that does not fit its track or cannot be decoded.
    pub(crate) fn from_compressed(
        clips: Vec<Clip>,
        tracks: Vec<Vec<CompressedTrack>>,
    ) -> Result<Self> {
        if clips.is_empty() {
            return Err(Error::EmptyLibrary);
        }
        for (i, clip) in clips.iter().enumerate() {
            clip.validate(i)?;
        }
        if tracks.len() != clips.len() {
            return Err(Error::Compressed {
                clip: 0,
                track: None,
                kind: CompressError::TrackCount {
                    expected: clips.len(),
                    found: tracks.len(),
                },
            });
        }
        for (c, (clip, compressed)) in clips.iter().zip(&tracks).enumerate() {
            if compressed.len() != clip.tracks.len() {
                return Err(Error::Compressed {
                    clip: c,
                    track: None,
                    kind: CompressError::TrackCount {
                        expected: clip.tracks.len(),
                        found: compressed.len(),
                    },
                });
            }
            for (t, (track, ct)) in clip.tracks.iter().zip(compressed).enumerate() {
                ct.validate(track).map_err(|kind| Error::Compressed {
                    clip: c,
                    track: Some(t),
                    kind,
                })?;
            }
        }
        let targets = Targets::collect(&clips)?;
        let pointer_targets = targets.outputs()?;
        check_rest_track_count(clips.len(), targets.list.len())?;
        let fillers = rest_value_tracks(&clips, &targets.list);
        let rest: Vec<Vec<CompressedTrack>> = fillers
            .iter()
            .map(|r| r.iter().map(rest_value_block).collect())
            .collect();
        // Every block first, then the verbatim tracks' words.
        let mut block_words = 0u64;
        for ((clip, rest_tracks), (compressed, rest)) in
            clips.iter().zip(&fillers).zip(tracks.iter().zip(&rest))
        {
            for (track, ct) in clip
                .tracks
                .iter()
                .chain(rest_tracks)
                .zip(compressed.iter().chain(rest))
            {
                if !ct.is_verbatim(track.interpolation) {
                    block_words += ct.data_bytes(track) / 4;
                }
            }
        }
        let verbatim_start = u32::try_from(block_words).map_err(|_| Error::LimitExceeded {
            what: "packed words",
            needed: block_words * 4,
            limit_name: "u32 indexing",
            limit: u64::from(u32::MAX),
        })?;
        let mut flat = Flattener {
            packed: Some(Vec::new()),
            verbatim_start,
            ..Flattener::default()
        };
        for ((clip, rest_tracks), (compressed, rest)) in
            clips.iter().zip(&fillers).zip(tracks.iter().zip(&rest))
        {
            let all: Vec<&CompressedTrack> = compressed.iter().chain(rest).collect();
            flat.add_clip(clip, rest_tracks, Some(&all), |p| {
                targets.slot(p, &pointer_targets)
            })?;
        }
        flat.finish(clips, pointer_targets)
    }

    /// Whether the library is compressed ([`compress`](Self::compress),
    /// [`BoundLibrary::compress`](crate::BoundLibrary::compress)).
    #[must_use]
    pub fn is_compressed(&self) -> bool {
        self.data.packed.is_some()
    }

    /// The bytes of key times and values the library puts on the device:
    /// `f32` times (each distinct list once) and values, or for a
    /// compressed library its times and packed words (block headers,
    /// offsets and padding included). The key search's texels, the track
    /// and clip tables, and the zeros the device's buffer holds after the
    /// last word (as many for either library) are not counted.
    #[must_use]
    pub fn stored_bytes(&self) -> u64 {
        let values = match &self.data.packed {
            Some(p) => p.len(),
            None => self.data.values.len(),
        };
        (self.data.times.len() + values) as u64 * 4
    }

    /// A compressed library's packed words (a block per track at its row's
    /// `values_offset`, then the verbatim tracks' words); `None` for an
    /// uncompressed library. The decoder reads up to 3 words past the last
    /// one: the device's buffer has zeros there, and the CPU twin reads
    /// zeros.
    #[must_use]
    pub(crate) fn packed(&self) -> Option<&[u32]> {
        self.data.packed.as_deref()
    }

    /// The first word of a compressed library's verbatim tracks in its
    /// packed words: a row whose `values_offset` is at least this is
    /// verbatim, its values (then its tangents) `f32`s from there without
    /// a block (WGSL override `VERBATIM_START`). The length of the packed
    /// words where no track is verbatim; 0 for an uncompressed library.
    #[must_use]
    pub(crate) fn verbatim_start(&self) -> u32 {
        self.data.verbatim_start
    }

    /// Every pointer target of the library's clips, in the order they
    /// first appear (clip order, then track order), each with its slot in
    /// every instance's output block. Empty for a library without pointer
    /// tracks.
    #[must_use]
    pub fn pointer_targets(&self) -> &[PointerOutput] {
        &self.data.pointer_targets
    }

    /// The slot of the pointer target `pointer` (compared as written,
    /// e.g. `/materials/0/emissiveFactor`), or `None` when no clip
    /// animates it.
    #[must_use]
    pub fn pointer_target(&self, pointer: &str) -> Option<&PointerOutput> {
        self.data
            .pointer_targets
            .iter()
            .find(|p| p.pointer == pointer)
    }

    /// Whether `other` is this library or a clone of it (the same arrays,
    /// and so the same upload).
    pub(crate) fn same_data(&self, other: &AnimationLibrary) -> bool {
        Arc::ptr_eq(&self.data, &other.data)
    }

    /// The clips, as given.
    #[must_use]
    pub fn clips(&self) -> &[Clip] {
        &self.data.clips
    }

    /// The index of the first clip named `name` (an [`Instance`]'s clip),
    /// or `None` when no clip has that name. Names may repeat in a library
    /// joined from several files (every Mixamo clip is
    /// `Armature|mixamo.com|Layer0`): [`clip_in`](Self::clip_in) and
    /// [`ClipId`] tell them apart.
    ///
    /// [`Instance`]: crate::Instance
    #[must_use]
    pub fn clip_by_name(&self, name: &str) -> Option<u32> {
        let index = self.data.clips.iter().position(|c| c.name == name)?;
        u32::try_from(index).ok()
    }

    /// The index of the first clip named `name` read from the file
    /// `source` ([`Clip::source`]; a glTF import's `document.source`).
    #[must_use]
    pub fn clip_in(&self, source: SourceId, name: &str) -> Option<u32> {
        self.clip_by_id(&ClipId {
            source: Some(source),
            name: name.to_owned(),
        })
    }

    /// The index of the first clip of `id`'s file and name.
    #[must_use]
    pub fn clip_by_id(&self, id: &ClipId) -> Option<u32> {
        let index = self
            .data
            .clips
            .iter()
            .position(|c| c.source == id.source && c.name == id.name)?;
        u32::try_from(index).ok()
    }

    /// Clip `clip`'s file and name; `None` out of range.
    #[must_use]
    pub fn clip_id(&self, clip: u32) -> Option<ClipId> {
        let c = self.data.clips.get(clip as usize)?;
        Some(ClipId {
            source: c.source,
            name: c.name.clone(),
        })
    }

    /// One library of the clips of `libraries`, in order: the first
    /// library's clips keep their indices, the second's follow, and so on.
    /// Each clip keeps its file ([`Clip::source`]), name and markers, so
    /// [`clip_in`](Self::clip_in) finds a clip by file and name where
    /// names repeat across files. Compressed libraries join as the clips
    /// they were made from: compress the joined library.
    ///
    /// ```no_run
    /// # fn f() -> Result<(), keyframe_gpu::Error> {
    /// use keyframe_gpu::{gltf, AnimationLibrary};
    /// let xbot = gltf::load("Xbot.glb")?;
    /// let ely = gltf::load("Ely.glb")?;
    /// let clips = AnimationLibrary::join([&xbot.library, &ely.library])?;
    /// let dance = clips.clip_in(ely.document.source, "Armature|mixamo.com|Layer0");
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// Those of [`AnimationLibrary::new`] ([`Error::EmptyLibrary`] when
    /// there is no clip at all).
    pub fn join<'a>(
        libraries: impl IntoIterator<Item = &'a AnimationLibrary>,
    ) -> Result<AnimationLibrary> {
        let clips: Vec<Clip> = libraries
            .into_iter()
            .flat_map(|l| l.clips().iter().cloned())
            .collect();
        AnimationLibrary::new(clips)
    }

    #[doc(hidden)]
    /// All key times, shared inputs stored once.
    #[must_use]
    pub fn times(&self) -> &[f32] {
        &self.data.times
    }

    #[doc(hidden)]
    /// The key of each search texel ([`GpuTrack::search_offset`]): per
    /// distinct key times, from their `search_offset`, the key each of the
    /// `2 (key_count - 1)` buckets tries first when they have a bucket
    /// table (`lookup_scale > 0`), then `0..key_count`. Texel `j` of a
    /// track is [`key_texel`] of that key: see [`key_windows`](Self::key_windows).
    #[must_use]
    pub(crate) fn search_keys(&self) -> &[u32] {
        &self.data.search_keys
    }

    #[doc(hidden)]
    /// The key search's texels, as the sampler's `key_windows` texture
    /// holds them: texel `j` is `[p, t_p, t_(p+1), t_(p+2)]` (the times as
    /// their bits, indices clamped to the last key) for
    /// `p = search_keys()[j]` and the key times of the track whose texels
    /// those are. Built for the upload, not stored.
    #[must_use]
    pub(crate) fn key_windows(&self) -> Vec<[u32; 4]> {
        let keys = &self.data.search_keys;
        let mut texels = vec![[0u32; 4]; keys.len()];
        let mut done = HashSet::new();
        for track in &self.data.tracks {
            // A compressed track with uniform times has no texels.
            if self.is_compressed() && track.lookup_scale < 0.0 {
                continue;
            }
            if !done.insert(track.search_offset) {
                continue;
            }
            let times = self.track_times(track);
            let start = track.search_offset as usize;
            let end = start + search_texel_count(track);
            for (texel, &p) in texels[start..end].iter_mut().zip(&keys[start..end]) {
                *texel = key_texel(times, p as usize);
            }
        }
        texels
    }

    /// The key times of `track`.
    fn track_times(&self, track: &GpuTrack) -> &[f32] {
        &self.data.times[track.times_offset as usize..][..track.key_count as usize]
    }

    #[doc(hidden)]
    /// All key values, track after track (empty for a compressed library:
    /// see [`packed`](Self::packed)).
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
    pub(crate) fn tracks(&self) -> &[GpuTrack] {
        &self.data.tracks
    }

    #[doc(hidden)]
    /// The clip table.
    #[must_use]
    pub(crate) fn clip_table(&self) -> &[GpuClip] {
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
    pub(crate) fn track_row(&self, clip: usize, track: usize) -> Option<usize> {
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
    pub(crate) fn group_tracks_per_instance(&self, group: usize) -> u32 {
        self.data.group_tracks.get(group).copied().unwrap_or(0)
    }

    /// The largest track count of any clip: invocations per instance.
    #[must_use]
    pub fn tracks_per_instance(&self) -> u32 {
        self.data.tracks_per_instance
    }

    /// Where track `track` of clip `clip` writes inside an instance's output
    /// block: `(offset, width)` (a pointer track: its target's slot), or
    /// `None` if either index is out of range.
    #[must_use]
    pub fn track_output(&self, clip: u32, track: u32) -> Option<(u32, u32)> {
        let (clip, track) = (clip as usize, track as usize);
        if track >= self.data.clips.get(clip)?.tracks.len() {
            return None;
        }
        let t = self.data.tracks.get(self.track_row(clip, track)?)?;
        Some((t.output_offset, t.width))
    }
}

/// The pointer targets of a library's clips in order of first appearance,
/// each with the clip that introduced it, and the node tracks' widest
/// block.
struct Targets<'a> {
    list: Vec<(Arc<PointerTarget>, usize)>,
    index: HashMap<&'a str, usize>,
    node_stride: u32,
}

impl<'a> Targets<'a> {
    /// Gathers the targets and the node tracks' widest block of `clips`.
    fn collect(clips: &'a [Clip]) -> Result<Self> {
        let mut targets = Targets {
            list: Vec::new(),
            index: HashMap::new(),
            node_stride: 0,
        };
        for (c, clip) in clips.iter().enumerate() {
            let mut width = 0u64;
            for (t, track) in clip.tracks.iter().enumerate() {
                match track.pointer.as_ref() {
                    Some(target) => targets.note(c, clip, t, target)?,
                    None => width += u64::from(track.width),
                }
            }
            let width = to_u32(width as usize, "output block of one instance")?;
            targets.node_stride = targets.node_stride.max(width);
        }
        Ok(targets)
    }

    /// Adds `target` (of track `t` of clip `c`) when it is new; a known
    /// pointer must keep the type it was first animated with.
    fn note(
        &mut self,
        c: usize,
        clip: &Clip,
        t: usize,
        target: &'a Arc<PointerTarget>,
    ) -> Result<()> {
        match self.index.get(target.pointer.as_str()) {
            Some(&i) if self.list[i].0.ty != target.ty => Err(Error::InvalidTrack {
                clip: c,
                clip_name: clip.name.clone(),
                track: t,
                kind: TrackError::PointerTypeConflict {
                    pointer: target.pointer.clone(),
                    ty: target.ty,
                    first: self.list[i].0.ty,
                    clip: self.list[i].1,
                },
            }),
            Some(_) => Ok(()),
            None => {
                self.index.insert(&target.pointer, self.list.len());
                self.list.push((target.clone(), c));
                Ok(())
            }
        }
    }

    /// Each target's slot, one after another after the node tracks' block.
    fn outputs(&self) -> Result<Vec<PointerOutput>> {
        let mut outputs = Vec::with_capacity(self.list.len());
        let mut slot_end = u64::from(self.node_stride);
        for (target, _) in &self.list {
            let width = target.ty.width();
            outputs.push(PointerOutput {
                pointer: target.pointer.clone(),
                ty: target.ty,
                kind: target.ty.value_kind(),
                offset: to_u32(slot_end as usize, "output block of one instance")?,
                width,
                rest: target.rest.clone(),
            });
            slot_end += u64::from(width);
        }
        to_u32(slot_end as usize, "output block of one instance")?;
        Ok(outputs)
    }

    /// The offset in `outputs` (built by [`outputs`](Self::outputs)) of
    /// `pointer`'s slot; 0 for a pointer that is not a target.
    fn slot(&self, pointer: &str, outputs: &[PointerOutput]) -> u32 {
        self.index
            .get(pointer)
            .and_then(|&i| outputs.get(i))
            .map_or(0, |o| o.offset)
    }
}

/// Fails when the rest-value tracks (one per clip and target it does not
/// animate) could pass [`MAX_REST_TRACKS`]: bounded, so that a small file
/// of many animations and many targets cannot make the library allocate
/// without limit.
fn check_rest_track_count(clips: usize, targets: usize) -> Result<()> {
    let rest_tracks = (clips as u64).saturating_mul(targets as u64);
    if rest_tracks > MAX_REST_TRACKS {
        return Err(Error::LimitExceeded {
            what: "pointer rest-value tracks (clips x pointer targets)",
            needed: rest_tracks,
            limit_name: "MAX_REST_TRACKS",
            limit: MAX_REST_TRACKS,
        });
    }
    Ok(())
}

/// For each clip, a constant STEP track of the rest value of every target
/// the clip does not animate: one key at time 0 (which leaves every clip's
/// duration as it is), all sharing one key time array.
fn rest_value_tracks(clips: &[Clip], targets: &[(Arc<PointerTarget>, usize)]) -> Vec<Vec<Track>> {
    let rest_times: Arc<[f32]> = Arc::from([0.0f32]);
    clips
        .iter()
        .map(|clip| {
            let animated: HashSet<&str> = clip
                .tracks
                .iter()
                .filter_map(|t| t.pointer.as_ref().map(|p| p.pointer.as_str()))
                .collect();
            targets
                .iter()
                .filter(|(t, _)| !animated.contains(t.pointer.as_str()))
                .map(|(t, _)| {
                    Track::for_pointer(
                        t.clone(),
                        Interpolation::Step,
                        rest_times.clone(),
                        t.rest.clone(),
                    )
                })
                .collect()
        })
        .collect()
}

/// Where a track's key times are stored: `(times_offset, lookup_scale,
/// search_offset)` of its [`GpuTrack`].
type StoredTimes = (u32, f32, u32);

/// Where a row's key times are: `(times_offset, lookup_scale,
/// lookup_origin, search_offset)` of its [`GpuTrack`].
type RowTimes = (u32, f32, f32, u32);

/// The arrays of a library while [`AnimationLibrary::new`] fills them,
/// clip after clip.
#[derive(Default)]
struct Flattener {
    times: Vec<f32>,
    values: Vec<f32>,
    tracks: Vec<GpuTrack>,
    clip_table: Vec<GpuClip>,
    search_keys: Vec<u32>,
    /// Stored key times by the address and length of their allocation.
    shared: HashMap<(usize, usize), StoredTimes>,
    /// Stored key times by a hash of their bits (confirmed by comparing
    /// them).
    by_contents: HashMap<u64, Vec<StoredTimes>>,
    output_stride: u32,
    tracks_per_instance: u32,
    group_tracks: [u32; SAMPLE_GROUPS],
    track_rows: Vec<u32>,
    /// A compressed library's packed words (`None`: uncompressed): its
    /// blocks.
    packed: Option<Vec<u32>>,
    /// Where the verbatim tracks' words start in the packed words: after
    /// every block.
    verbatim_start: u32,
    /// The verbatim tracks' words, appended to the blocks by `finish`.
    verbatim: Vec<u32>,
}

/// A rest-value track (one key, STEP) as a compressed track: uniform
/// times, the value raw (stored verbatim).
fn rest_value_block(track: &Track) -> CompressedTrack {
    CompressedTrack {
        times: KeyTimes::Uniform {
            start: track.times.first().copied().unwrap_or(0.0),
            rate: 1.0,
            count: 1,
        },
        values: Quantized::raw(&track.values, track.width),
        tangents: None,
    }
}

impl Flattener {
    /// Appends `clip`'s tracks, then its `rest_tracks`, grouped, and its
    /// clip table entry; `slot_of` gives a pointer target's slot. In a
    /// compressed library `compressed` holds one compressed track per
    /// track (the clip's, then the rest tracks').
    fn add_clip(
        &mut self,
        clip: &Clip,
        rest_tracks: &[Track],
        compressed: Option<&[&CompressedTrack]>,
        slot_of: impl Fn(&str) -> u32,
    ) -> Result<()> {
        let track_offset = to_u32(self.tracks.len(), "track table")?;
        let mut output_offset = 0u32;
        let mut output_width = 0u32;
        let mut properties = Vec::new();
        for (i, track) in clip.tracks.iter().chain(rest_tracks).enumerate() {
            let pointer = track.property == Property::Pointer;
            let track_output = match &track.pointer {
                Some(target) if pointer => slot_of(&target.pointer),
                _ => output_offset,
            };
            properties.push(track.property);
            let end = match compressed.and_then(|c| c.get(i)) {
                Some(ct) => self.add_compressed_track(track, ct, track_output)?,
                None => self.add_track(track, track_output)?,
            };
            output_width = output_width.max(end);
            if !pointer {
                output_offset = end;
            }
        }
        let counts = self.group_rows(track_offset, &properties);
        let track_count = to_u32(clip.tracks.len() + rest_tracks.len(), "track table")?;
        self.clip_table.push(GpuClip {
            track_offset,
            track_count,
            output_width,
            duration: clip.duration(),
            group_first: std::array::from_fn(|g| track_offset + counts[..g].iter().sum::<u32>()),
            group_count: counts,
        });
        self.output_stride = self.output_stride.max(output_width);
        self.tracks_per_instance = self.tracks_per_instance.max(track_count);
        Ok(())
    }

    /// Appends `track`'s keys and its row, writing at `output`; returns the
    /// end of what it writes.
    fn add_track(&mut self, track: &Track, output: u32) -> Result<u32> {
        let times = self.row_times(&track.times)?;
        let values_offset = to_u32(self.values.len(), "key values")?;
        let start = self.values.len();
        self.values.extend_from_slice(&track.values);
        normalize_rotation_keys(
            track.property,
            track.interpolation,
            &mut self.values[start..],
        );
        self.push_row(track, times, track.times.len(), values_offset, output)
    }

    /// Appends a compressed track's block to the packed words (or its
    /// words to the verbatim ones), its times when they are a list, and
    /// its row, writing at `output`; returns the end of what it writes. A row with uniform times has no search
    /// texels: its lookup scale is the negated rate, its origin the first
    /// key's time.
    fn add_compressed_track(
        &mut self,
        track: &Track,
        compressed: &CompressedTrack,
        output: u32,
    ) -> Result<u32> {
        let times = match &compressed.times {
            KeyTimes::Uniform { start, rate, .. } => (0, -rate, *start, 0),
            KeyTimes::List(times) => self.row_times(times)?,
        };
        let packed = self.packed.get_or_insert_with(Vec::new);
        let values_offset = if compressed.is_verbatim(track.interpolation) {
            let at = u64::from(self.verbatim_start) + self.verbatim.len() as u64;
            self.verbatim.extend(compressed.verbatim_words());
            to_u32(at as usize, "packed words")?
        } else {
            let at = to_u32(packed.len(), "packed words")?;
            packed.extend(packed_block(compressed, track.width));
            at
        };
        self.push_row(track, times, compressed.key_count(), values_offset, output)
    }

    /// Appends the row of `track`, whose `key_count` keys have their times
    /// at `times` and their values at `values_offset`, writing at
    /// `output`; returns the end of what it writes.
    fn push_row(
        &mut self,
        track: &Track,
        times: RowTimes,
        key_count: usize,
        values_offset: u32,
        output: u32,
    ) -> Result<u32> {
        let (times_offset, lookup_scale, lookup_origin, search_offset) = times;
        let pointer = track.property == Property::Pointer;
        self.tracks.push(GpuTrack {
            times_offset,
            key_count: to_u32(key_count, "key times")?,
            values_offset,
            width: track.width,
            interpolation: track.interpolation as u32,
            kind: track.value_kind() as u32,
            output_offset: output,
            node: if pointer { 0 } else { track.node },
            lookup_scale,
            lookup_origin,
            search_offset,
        });
        output.checked_add(track.width).ok_or(Error::LimitExceeded {
            what: "output block of one instance",
            needed: u64::from(output) * 4 + u64::from(track.width) * 4,
            limit_name: "u32 indexing",
            limit: u64::from(u32::MAX),
        })
    }

    /// [`Self::key_times`] of a row's key times, with the row's lookup
    /// origin: the first key time where they have a lookup (a scale other
    /// than 0), else 0.
    fn row_times(&mut self, times: &[f32]) -> Result<RowTimes> {
        let (offset, scale, search) = self.key_times(times)?;
        let origin = if scale != 0.0 { times[0] } else { 0.0 };
        Ok((offset, scale, origin, search))
    }

    /// Where `times` are stored, storing them (and their search texels)
    /// unless the same allocation or the same bits already are.
    fn key_times(&mut self, times: &[f32]) -> Result<StoredTimes> {
        let key = (times.as_ptr() as usize, times.len());
        let bits = times_hash(times);
        if let Some(found) = self.find_times(key, bits, times) {
            return Ok(found);
        }
        let stored = self.store_times(times)?;
        self.shared.insert(key, stored);
        self.by_contents.entry(bits).or_default().push(stored);
        Ok(stored)
    }

    /// Stored key times from the allocation `key`, or else with the hash
    /// `bits` and the same bits as `times`.
    fn find_times(&self, key: (usize, usize), bits: u64, times: &[f32]) -> Option<StoredTimes> {
        let same = |&&(o, _, _): &&StoredTimes| {
            let stored = &self.times[o as usize..];
            stored.len() >= times.len()
                && stored[..times.len()]
                    .iter()
                    .zip(times.iter())
                    .all(|(a, b)| a.to_bits() == b.to_bits())
        };
        self.shared.get(&key).copied().or_else(|| {
            self.by_contents
                .get(&bits)
                .and_then(|c| c.iter().find(same).copied())
        })
    }

    /// Appends `times` and their search texels: the buckets' first (a
    /// track with a table), then one per key.
    fn store_times(&mut self, times: &[f32]) -> Result<StoredTimes> {
        let o = to_u32(self.times.len(), "key times")?;
        self.times.extend_from_slice(times);
        let search = to_u32(self.search_keys.len(), "key search table")?;
        // In a compressed library a negative scale means uniform times
        // without texels: lists there search from a table or the middle.
        let direct = if self.packed.is_some() {
            0.0
        } else {
            uniform_key_scale(times)
        };
        let scale = match key_lookup(times) {
            _ if direct > 0.0 => -direct,
            Some((scale, first)) => {
                self.search_keys.extend_from_slice(&first);
                scale
            }
            None => 0.0,
        };
        self.search_keys
            .extend(0..to_u32(times.len(), "key times")?);
        Ok((o, scale, search))
    }

    /// Sorts the clip's rows (from `track_offset`, with `properties` in
    /// clip order) by shader block, then by property within a group (so
    /// that SIMD lanes and GPU warps side by side have the same width;
    /// stable otherwise); records in `track_rows` each clip track's row.
    /// Returns the rows of each group.
    fn group_rows(&mut self, track_offset: u32, properties: &[Property]) -> [u32; SAMPLE_GROUPS] {
        let rows = &mut self.tracks[track_offset as usize..];
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by_key(|&j| (rows[j].group(), properties[j] as u32));
        let grouped: Vec<GpuTrack> = order.iter().map(|&j| rows[j]).collect();
        rows.copy_from_slice(&grouped);
        let mut row_of = vec![0u32; order.len()];
        for (row, &j) in order.iter().enumerate() {
            row_of[j] = track_offset + row as u32;
        }
        self.track_rows.extend_from_slice(&row_of);
        let mut counts = [0u32; SAMPLE_GROUPS];
        for t in &grouped {
            counts[t.group() as usize] += 1;
        }
        for (most, count) in self.group_tracks.iter_mut().zip(counts) {
            *most = (*most).max(count);
        }
        counts
    }

    /// Checks that the arrays can be indexed with `u32` and makes the
    /// library.
    fn finish(
        self,
        clips: Vec<Clip>,
        pointer_targets: Vec<PointerOutput>,
    ) -> Result<AnimationLibrary> {
        to_u32(self.values.len(), "key values")?;
        to_u32(self.search_keys.len(), "key search table")?;
        to_u32(self.tracks.len(), "track table")?;
        let verbatim = self.verbatim;
        let packed = self.packed.map(|mut p| {
            p.extend_from_slice(&verbatim);
            p
        });
        if let Some(p) = &packed {
            to_u32(p.len(), "packed words")?;
        }
        Ok(AnimationLibrary {
            data: Arc::new(LibraryData {
                clips,
                times: self.times,
                search_keys: self.search_keys,
                values: self.values,
                tracks: self.tracks,
                clip_table: self.clip_table,
                output_stride: self.output_stride,
                tracks_per_instance: self.tracks_per_instance,
                group_tracks: self.group_tracks,
                track_rows: self.track_rows,
                pointer_targets,
                packed,
                verbatim_start: self.verbatim_start,
            }),
        })
    }
}

/// A clip named by its file and its name: unique across the files of a
/// joined library where the names alone repeat
/// ([`AnimationLibrary::clip_by_id`], [`AnimationLibrary::clip_id`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClipId {
    /// The file the clip was read from (`None`: built in code).
    pub source: Option<SourceId>,
    /// The clip's name.
    pub name: String,
}
