//! [`AnimationLibrary`]: validated clips, with the output layout every
//! instance's samples follow. The flat tables the sampler and the CPU
//! twin read are derived from it in `src/tables/` (`LibraryTables::of`),
//! never kept here.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use crate::compress::format::{CompressedTrack, KeyTimes};
use crate::error::CompressError;
use crate::error::TrackError;
use crate::error::{index_u32, Error, Result};
use crate::kinds::{Interpolation, PointerType, Property, ValueKind};
use crate::model::target::SourceId;
use crate::model::track::{Clip, PointerTarget, Track};
use std::collections::HashSet;

/// Many clips, validated, with the layout of every instance's output.
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
/// `Animator` keeps a handle to the library it
/// was built from rather than a copy of its keys.
#[derive(Debug, Clone)]
pub struct AnimationLibrary {
    data: Arc<LibraryData>,
}

/// An [`AnimationLibrary`]'s identity ([`AnimationLibrary::identity`]),
/// held weakly. While it lives, no other library can have its address: it
/// names that library and its clones only, and only while one of them is
/// alive.
#[derive(Debug, Clone)]
pub(crate) struct LibraryIdentity(Weak<LibraryData>);

impl LibraryIdentity {
    /// Whether `library` is the library named (or a clone of it), alive.
    pub(crate) fn is(&self, library: &AnimationLibrary) -> bool {
        self.alive() && std::ptr::eq(self.0.as_ptr(), Arc::as_ptr(&library.data))
    }

    /// Whether the library named (or a clone) is still alive.
    pub(crate) fn alive(&self) -> bool {
        self.0.strong_count() > 0
    }
}

/// What an [`AnimationLibrary`] holds, built once and never changed.
#[derive(Debug)]
struct LibraryData {
    clips: Vec<Clip>,
    pointer_targets: Vec<PointerOutput>,
    /// Per clip, a constant STEP track of the rest value of each pointer
    /// target it does not animate, sampled after its own tracks (not in
    /// `clips`).
    rest: Vec<Vec<Track>>,
    /// A compressed library's tracks: per clip, one per track of the clip,
    /// then one per rest-value track (stored raw); `None` uncompressed.
    compressed: Option<Vec<Vec<CompressedTrack>>>,
    /// Per clip, where its tracks (then its rest-value tracks) write.
    outputs: Vec<ClipOutput>,
    /// Per clip, its duration ([`Clip::duration`]).
    durations: Vec<f32>,
    output_stride: u32,
    tracks_per_instance: u32,
    stored_bytes: u64,
}

/// Where a clip's tracks write in an instance's output block: each track's
/// first component (the clip's own tracks, then its rest-value tracks; a
/// pointer track its target's slot), and the end of what the clip writes.
#[derive(Debug)]
pub(crate) struct ClipOutput {
    /// Per track, its offset.
    pub(crate) offsets: Vec<u32>,
    /// One past the last component any of its tracks writes.
    pub(crate) width: u32,
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
        Self::build(clips, None)
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
    /// This is what the compressor builds, and the only way to a
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
        Self::build(clips, Some(tracks))
    }

    /// Validates `clips` (and their `compressed` tracks) and lays out their
    /// output: [`new`](Self::new) and
    /// [`from_compressed`](Self::from_compressed).
    fn build(clips: Vec<Clip>, compressed: Option<Vec<Vec<CompressedTrack>>>) -> Result<Self> {
        if clips.is_empty() {
            return Err(Error::EmptyLibrary);
        }
        for (i, clip) in clips.iter().enumerate() {
            clip.validate(i)?;
        }
        if let Some(tracks) = &compressed {
            check_compressed(&clips, tracks)?;
        }
        let targets = Targets::collect(&clips)?;
        let pointer_targets = targets.outputs()?;
        check_rest_track_count(clips.len(), targets.list.len())?;
        let rest = rest_value_tracks(&clips, &targets.list);
        let slot = |p: &str| targets.slot(p, &pointer_targets);
        let outputs = clips
            .iter()
            .zip(&rest)
            .map(|(clip, rest)| ClipOutput::of(clip, rest, slot))
            .collect::<Result<Vec<_>>>()?;
        // A compressed library stores its rest values raw.
        let compressed = compressed.map(|mut tracks| {
            for (own, rest) in tracks.iter_mut().zip(&rest) {
                own.extend(rest.iter().map(|t| {
                    let time = t.times.first().copied().unwrap_or(0.0);
                    CompressedTrack::constant_raw(time, &t.values, t.width)
                }));
            }
            tracks
        });
        let mut tracks_per_instance = 0;
        for (clip, rest) in clips.iter().zip(&rest) {
            let count = index_u32(clip.tracks.len() + rest.len(), "track table")?;
            tracks_per_instance = count.max(tracks_per_instance);
        }
        let stored_bytes = stored_bytes(&clips, &rest, compressed.as_deref())?;
        Ok(AnimationLibrary {
            data: Arc::new(LibraryData {
                durations: clips.iter().map(Clip::duration).collect(),
                output_stride: outputs.iter().map(|o| o.width).max().unwrap_or(0),
                tracks_per_instance,
                stored_bytes,
                clips,
                pointer_targets,
                rest,
                compressed,
                outputs,
            }),
        })
    }

    /// Whether the library is compressed (`compress`,
    /// `BoundLibrary::compress`).
    pub(crate) fn is_compressed(&self) -> bool {
        self.data.compressed.is_some()
    }

    /// The bytes of key times and values the library puts on the device:
    /// `f32` times (each distinct list once) and values, or for a
    /// compressed library its times and packed words (block headers,
    /// offsets and padding included). The key search's texels, the track
    /// and clip tables, and the zeros the device's buffer holds after the
    /// last word (as many for either library) are not counted.
    #[must_use]
    pub fn stored_bytes(&self) -> u64 {
        self.data.stored_bytes
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

    /// Whether `other` is this library or a clone of it (the same clips,
    /// and so the same upload).
    pub(crate) fn same_data(&self, other: &AnimationLibrary) -> bool {
        Arc::ptr_eq(&self.data, &other.data)
    }

    /// This library's identity, held weakly: what a cache of something
    /// derived from it (outside the model) keys its entries by, without
    /// keeping the library alive.
    pub(crate) fn identity(&self) -> LibraryIdentity {
        LibraryIdentity(Arc::downgrade(&self.data))
    }

    /// The clips, as given.
    #[must_use]
    pub fn clips(&self) -> &[Clip] {
        &self.data.clips
    }

    /// The index of the first clip named `name` (an [`Instance`]'s clip),
    /// or `None` when no clip has that name. Names may repeat in a library
    /// joined from several files (every Mixamo clip is
    /// `Armature|mixamo.com|Layer0`): [`clip_in`](Self::clip_in) tells
    /// them apart.
    ///
    /// [`Instance`]: crate::Instance
    #[must_use]
    pub fn clip_by_name(&self, name: &str) -> Option<u32> {
        let index = self.data.clips.iter().position(|c| c.name == name)?;
        u32::try_from(index).ok()
    }

    /// The index of the first clip named `name` read from the file
    /// `source` ([`Clip::source`]; a glTF import's `document.source`):
    /// where names repeat across the files of a joined library, the file
    /// tells them apart (a clip's file and name are its `clips()` entry's
    /// `source` and `name`).
    #[must_use]
    pub fn clip_in(&self, source: SourceId, name: &str) -> Option<u32> {
        let index = self
            .data
            .clips
            .iter()
            .position(|c| c.source == Some(source) && c.name == name)?;
        u32::try_from(index).ok()
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

    /// `f32`s per instance in the output: the largest clip output width.
    #[must_use]
    pub fn output_stride(&self) -> u32 {
        self.data.output_stride
    }

    /// The largest track count of any clip (its rest-value tracks
    /// included): invocations per instance.
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
        let t = self.data.clips.get(clip)?.tracks.get(track)?;
        let offset = *self.data.outputs.get(clip)?.offsets.get(track)?;
        Some((offset, t.width))
    }

    /// Clip `clip`'s rest-value tracks, sampled after its own: a constant
    /// STEP track of the rest value of each pointer target of the library
    /// the clip does not animate.
    pub(crate) fn rest_tracks(&self, clip: usize) -> &[Track] {
        self.data.rest.get(clip).map_or(&[], Vec::as_slice)
    }

    /// A compressed library's tracks: per clip, one per track of the clip,
    /// then one per rest-value track; `None` for an uncompressed library.
    pub(crate) fn compressed_tracks(&self) -> Option<&[Vec<CompressedTrack>]> {
        self.data.compressed.as_deref()
    }

    /// Where each clip's tracks write ([`ClipOutput`]), by clip index.
    pub(crate) fn clip_outputs(&self) -> &[ClipOutput] {
        &self.data.outputs
    }

    /// Each clip's duration ([`Clip::duration`]), by clip index.
    pub(crate) fn durations(&self) -> &[f32] {
        &self.data.durations
    }
}

impl ClipOutput {
    /// Where the tracks of `clip`, then its `rest` tracks, write: node
    /// tracks one after another in track order from 0, pointer tracks at
    /// their target's `slot`.
    fn of(clip: &Clip, rest: &[Track], slot: impl Fn(&str) -> u32) -> Result<ClipOutput> {
        let mut offsets = Vec::with_capacity(clip.tracks.len() + rest.len());
        let (mut next, mut width) = (0u32, 0u32);
        for track in clip.tracks.iter().chain(rest) {
            let pointer = track.property == Property::Pointer;
            let at = match &track.pointer {
                Some(target) if pointer => slot(&target.pointer),
                _ => next,
            };
            let end = at.checked_add(track.width).ok_or(Error::LimitExceeded {
                what: "output block of one instance",
                needed: u64::from(at) * 4 + u64::from(track.width) * 4,
                limit_name: "u32 indexing",
                limit: u64::from(u32::MAX),
            })?;
            offsets.push(at);
            width = width.max(end);
            if !pointer {
                next = end;
            }
        }
        Ok(ClipOutput { offsets, width })
    }
}

/// The bytes of key times and values a library puts on the device
/// ([`AnimationLibrary::stored_bytes`]): each distinct list of key times
/// once (by its bits), and every track's values (`clips`' and their
/// `rest` tracks') or, compressed, every track's packed words.
///
/// # Errors
/// [`Error::LimitExceeded`] when the times or the values cannot be indexed
/// with `u32`.
fn stored_bytes(
    clips: &[Clip],
    rest: &[Vec<Track>],
    compressed: Option<&[Vec<CompressedTrack>]>,
) -> Result<u64> {
    let tracks = || {
        clips
            .iter()
            .zip(rest)
            .flat_map(|(c, r)| c.tracks.iter().chain(r))
    };
    let mut lists: HashSet<Vec<u32>> = HashSet::new();
    let mut times = 0usize;
    let mut note = |list: &[f32]| {
        if lists.insert(list.iter().map(|t| t.to_bits()).collect()) {
            times += list.len();
        }
    };
    let values = match compressed {
        None => {
            tracks().for_each(|t| note(&t.times));
            index_u32(tracks().map(|t| t.values.len()).sum(), "key values")?
        }
        Some(compressed) => {
            let mut words = 0u64;
            for (track, ct) in tracks().zip(compressed.iter().flatten()) {
                if let KeyTimes::List(list) = &ct.times {
                    note(list);
                }
                words += ct.data_bytes(track.width, track.interpolation) / 4;
            }
            index_u32(usize::try_from(words).unwrap_or(usize::MAX), "packed words")?
        }
    };
    index_u32(times, "key times")?;
    Ok((times as u64 + u64::from(values)) * 4)
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
            let width = index_u32(width as usize, "output block of one instance")?;
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
                offset: index_u32(slot_end as usize, "output block of one instance")?,
                width,
                rest: target.rest.clone(),
            });
            slot_end += u64::from(width);
        }
        index_u32(slot_end as usize, "output block of one instance")?;
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

/// Checks that `tracks` holds one compressed track per track of `clips`,
/// each fitting its track.
fn check_compressed(clips: &[Clip], tracks: &[Vec<CompressedTrack>]) -> Result<()> {
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
    for (c, (clip, compressed)) in clips.iter().zip(tracks).enumerate() {
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
            let shape = (track.value_kind(), track.width, track.interpolation);
            ct.validate(shape.0, shape.1, shape.2)
                .map_err(|kind| Error::Compressed {
                    clip: c,
                    track: Some(t),
                    kind,
                })?;
        }
    }
    Ok(())
}
