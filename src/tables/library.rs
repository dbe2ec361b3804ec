//! The flat form of an [`AnimationLibrary`] that the sampler and the CPU
//! twin read: the track and clip tables, the key times stored once per
//! distinct list with their search texels, the key values (or a
//! compressed library's packed words). Derived from the library
//! ([`LibraryTables::of`]) by whoever reads them: a plan keeps them for
//! its sampler; the twin takes them from a small cache, per thread, of the
//! libraries it sampled last ([`LibraryTables::cached`]), so that a frame
//! of the twin does not derive them again.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::compress::format::{CompressedTrack, KeyTimes};
use crate::compress::packed::Packed;
use crate::error::{index_u32, Result};
use crate::kinds::Property;
use crate::layout::{GpuClip, GpuTrack, SAMPLE_GROUPS};
use crate::model::library::{AnimationLibrary, LibraryIdentity};
use crate::model::track::{normalize_rotation_keys, Track};
use crate::tables::key_lookup::{key_lookup, key_texel, search_texel_count, uniform_key_scale};

/// How many libraries' tables the twin keeps ([`LibraryTables::cached`]).
pub(crate) const RECENT_LIBRARIES: usize = 8;

thread_local! {
    /// The tables of the libraries the twin sampled last on this thread,
    /// oldest first.
    static RECENT: RefCell<Vec<(LibraryIdentity, Arc<LibraryTables>)>> =
        const { RefCell::new(Vec::new()) };
}

/// A library's flat tables; see [`AnimationLibrary`] for the output layout
/// they encode.
#[derive(Debug, Default)]
pub struct LibraryTables {
    times: Vec<f32>,
    search_keys: Vec<u32>,
    values: Vec<f32>,
    tracks: Vec<GpuTrack>,
    clip_table: Vec<GpuClip>,
    output_stride: u32,
    tracks_per_instance: u32,
    group_tracks: [u32; SAMPLE_GROUPS],
    track_rows: Vec<u32>,
    /// A compressed library's packed words (`None`: uncompressed).
    packed: Option<Packed>,
}

impl LibraryTables {
    /// The tables of `library`: each clip's tracks, then its rest-value
    /// tracks, written where the library's output layout puts them; for a
    /// compressed library its compressed tracks in place of their keys,
    /// every block first in the packed words, then the verbatim tracks'
    /// words.
    ///
    /// # Errors
    /// [`Error::LimitExceeded`](crate::error::Error::LimitExceeded) when a table cannot be indexed with `u32`.
    pub fn of(library: &AnimationLibrary) -> Result<LibraryTables> {
        let mut flat = Flattener::default();
        let mut offsets = Vec::new();
        if let Some(compressed) = library.compressed_tracks() {
            let tracks = library
                .clips()
                .iter()
                .enumerate()
                .flat_map(|(c, clip)| clip.tracks.iter().chain(library.rest_tracks(c)));
            let all = tracks
                .zip(compressed.iter().flatten())
                .map(|(t, ct)| (ct, t.width, t.interpolation));
            let (packed, at) = Packed::new(all)?;
            flat.tables.packed = Some(packed);
            offsets = at;
        }
        let mut offsets = offsets.into_iter();
        for c in 0..library.clips().len() {
            flat.add_clip(library, c, &mut offsets)?;
        }
        flat.tables.output_stride = library.output_stride();
        flat.tables.tracks_per_instance = library.tracks_per_instance();
        flat.finish()
    }

    /// `library`'s tables for the CPU twin: those of one of the last
    /// [`RECENT_LIBRARIES`] libraries the twin sampled on this thread, when
    /// `library` is one of them (or a clone), else derived now
    /// ([`LibraryTables::of`]) and kept in place of the oldest. The cache
    /// is the thread's own (the twin's calls on one thread, a frame loop or
    /// a test, meet no other thread's), keyed by the library's identity,
    /// held weakly: it never keeps a library alive nor mistakes a new
    /// library for a dropped one, and drops a dropped library's tables at
    /// its next call. The model owns none of it.
    ///
    /// # Errors
    /// Those of [`LibraryTables::of`].
    pub(crate) fn cached(library: &AnimationLibrary) -> Result<Arc<LibraryTables>> {
        let found = RECENT.try_with(|recent| {
            let mut recent = recent.borrow_mut();
            recent.retain(|(id, _)| id.alive());
            recent
                .iter()
                .find(|(id, _)| id.is(library))
                .map(|(_, tables)| Arc::clone(tables))
        });
        if let Ok(Some(tables)) = found {
            return Ok(tables);
        }
        let tables = Arc::new(LibraryTables::of(library)?);
        // A thread whose locals are being torn down keeps nothing.
        let _ = RECENT.try_with(|recent| {
            let mut recent = recent.borrow_mut();
            if recent.len() >= RECENT_LIBRARIES {
                recent.remove(0);
            }
            recent.push((library.identity(), Arc::clone(&tables)));
        });
        Ok(tables)
    }

    /// All key times, shared inputs stored once.
    #[must_use]
    pub(crate) fn times(&self) -> &[f32] {
        &self.times
    }

    /// The key of each search texel ([`GpuTrack::search_offset`]): per
    /// distinct key times, from their `search_offset`, the key each of the
    /// `2 (key_count - 1)` buckets tries first when they have a bucket
    /// table (`lookup_scale > 0`), then `0..key_count`. Texel `j` of a
    /// track is [`key_texel`] of that key: see [`key_windows`](Self::key_windows).
    #[must_use]
    pub(crate) fn search_keys(&self) -> &[u32] {
        &self.search_keys
    }

    /// The key search's texels, as the sampler's `key_windows` texture
    /// holds them: texel `j` is `[p, t_p, t_(p+1), t_(p+2)]` (the times as
    /// their bits, indices clamped to the last key) for
    /// `p = search_keys()[j]` and the key times of the track whose texels
    /// those are. Built for the upload, not stored.
    #[must_use]
    pub(crate) fn key_windows(&self) -> Vec<[u32; 4]> {
        let keys = &self.search_keys;
        let mut texels = vec![[0u32; 4]; keys.len()];
        let mut done = HashSet::new();
        for track in &self.tracks {
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
        &self.times[track.times_offset as usize..][..track.key_count as usize]
    }

    /// All key values, track after track (empty for a compressed library:
    /// see `packed`).
    #[must_use]
    pub fn values(&self) -> &[f32] {
        &self.values
    }

    /// The track table, clip after clip; within a clip, its tracks grouped
    /// by the shader block that samples them (LINEAR rotations, then
    /// CUBICSPLINE tracks other than rotations, other LINEAR tracks,
    /// CUBICSPLINE rotations, STEP tracks; see [`GpuClip`] and
    /// [`crate::layout::SAMPLE_GROUPS`]; the group fixes the
    /// interpolation), then by property within a group, in clip order
    /// otherwise (a stable sort).
    /// `track_row` finds a clip track's row.
    #[must_use]
    pub(crate) fn tracks(&self) -> &[GpuTrack] {
        &self.tracks
    }

    /// The clip table.
    #[must_use]
    pub(crate) fn clip_table(&self) -> &[GpuClip] {
        &self.clip_table
    }

    /// The row in [`tracks`](Self::tracks) of track `track` of clip
    /// `clip`, or `None` if either index is out of range.
    #[cfg(test)]
    #[must_use]
    pub(crate) fn track_row(&self, clip: usize, track: usize) -> Option<usize> {
        let c = self.clip_table.get(clip)?;
        if track >= c.track_count as usize {
            return None;
        }
        self.track_rows
            .get(c.track_offset as usize + track)
            .map(|&r| r as usize)
    }

    /// The largest number of tracks of group `group` (a
    /// [`crate::layout::SAMPLE_GROUPS`] index) in any clip: invocations per
    /// instance of that group's dispatch; 0 for a group out of range.
    #[must_use]
    pub(crate) fn group_tracks_per_instance(&self, group: usize) -> u32 {
        self.group_tracks.get(group).copied().unwrap_or(0)
    }

    /// A compressed library's packed words (a block per track at its row's
    /// `values_offset`, then the verbatim tracks' words); `None` for an
    /// uncompressed library.
    #[must_use]
    pub(crate) fn packed(&self) -> Option<&Packed> {
        self.packed.as_ref()
    }

    /// Whether the library is compressed.
    #[must_use]
    pub(crate) fn is_compressed(&self) -> bool {
        self.packed.is_some()
    }

    /// [`Packed::verbatim_start`] of a compressed library's packed words;
    /// 0 for an uncompressed library.
    #[must_use]
    pub(crate) fn verbatim_start(&self) -> u32 {
        self.packed.as_ref().map_or(0, Packed::verbatim_start)
    }

    /// `f32`s per instance in the output: the largest clip output width.
    #[must_use]
    pub(crate) fn output_stride(&self) -> u32 {
        self.output_stride
    }

    /// The largest track count of any clip: invocations per instance.
    #[must_use]
    pub(crate) fn tracks_per_instance(&self) -> u32 {
        self.tracks_per_instance
    }
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

/// Where a track's key times are stored: `(times_offset, lookup_scale,
/// search_offset)` of its [`GpuTrack`].
type StoredTimes = (u32, f32, u32);

/// Where a row's key times are: `(times_offset, lookup_scale,
/// lookup_origin, search_offset)` of its [`GpuTrack`].
type RowTimes = (u32, f32, f32, u32);

/// The arrays of a library while [`LibraryTables::of`] fills them, clip
/// after clip.
#[derive(Default)]
struct Flattener {
    /// The tables so far.
    tables: LibraryTables,
    /// Stored key times by the address and length of their allocation.
    shared: HashMap<(usize, usize), StoredTimes>,
    /// Stored key times by a hash of their bits (confirmed by comparing
    /// them).
    by_contents: HashMap<u64, Vec<StoredTimes>>,
}

impl Flattener {
    /// Appends clip `c` of `library`'s tracks, then its rest-value tracks,
    /// grouped, and its clip table entry. In a compressed library
    /// `values_offsets` gives each compressed track's place in the packed
    /// words, track after track.
    fn add_clip(
        &mut self,
        library: &AnimationLibrary,
        c: usize,
        values_offsets: &mut impl Iterator<Item = u32>,
    ) -> Result<()> {
        let clip = &library.clips()[c];
        let rest_tracks = library.rest_tracks(c);
        let compressed = library.compressed_tracks().and_then(|t| t.get(c));
        let output = &library.clip_outputs()[c];
        let track_offset = index_u32(self.tables.tracks.len(), "track table")?;
        let mut properties = Vec::new();
        for (i, track) in clip.tracks.iter().chain(rest_tracks).enumerate() {
            properties.push(track.property);
            let at = output.offsets[i];
            match compressed.and_then(|c| c.get(i)).zip(values_offsets.next()) {
                Some((ct, values_offset)) => {
                    self.add_compressed_track(track, ct, values_offset, at)?;
                }
                None => self.add_track(track, at)?,
            }
        }
        let counts = self.group_rows(track_offset, &properties);
        let track_count = index_u32(clip.tracks.len() + rest_tracks.len(), "track table")?;
        self.tables.clip_table.push(GpuClip {
            track_offset,
            track_count,
            output_width: output.width,
            duration: library.durations()[c],
            group_first: std::array::from_fn(|g| track_offset + counts[..g].iter().sum::<u32>()),
            group_count: counts,
        });
        Ok(())
    }

    /// Appends `track`'s keys and its row, writing at `output`.
    fn add_track(&mut self, track: &Track, output: u32) -> Result<()> {
        let times = self.row_times(&track.times)?;
        let values_offset = index_u32(self.tables.values.len(), "key values")?;
        let start = self.tables.values.len();
        self.tables.values.extend_from_slice(&track.values);
        normalize_rotation_keys(
            track.property,
            track.interpolation,
            &mut self.tables.values[start..],
        );
        self.push_row(track, times, track.times.len(), values_offset, output)
    }

    /// Appends a compressed track's row, whose block (or verbatim words)
    /// is at `values_offset` in the packed words, and its times when they
    /// are a list, writing at `output`. A row with uniform times has no
    /// search texels: its lookup scale is the negated rate, its origin the
    /// first key's time.
    fn add_compressed_track(
        &mut self,
        track: &Track,
        compressed: &CompressedTrack,
        values_offset: u32,
        output: u32,
    ) -> Result<()> {
        let times = match &compressed.times {
            KeyTimes::Uniform { start, rate, .. } => (0, -rate, *start, 0),
            KeyTimes::List(times) => self.row_times(times)?,
        };
        self.push_row(track, times, compressed.key_count(), values_offset, output)
    }

    /// Appends the row of `track`, whose `key_count` keys have their times
    /// at `times` and their values at `values_offset`, writing at
    /// `output`.
    fn push_row(
        &mut self,
        track: &Track,
        times: RowTimes,
        key_count: usize,
        values_offset: u32,
        output: u32,
    ) -> Result<()> {
        let (times_offset, lookup_scale, lookup_origin, search_offset) = times;
        let pointer = track.property == Property::Pointer;
        self.tables.tracks.push(GpuTrack {
            times_offset,
            key_count: index_u32(key_count, "key times")?,
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
        Ok(())
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
            let stored = &self.tables.times[o as usize..];
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
        let o = index_u32(self.tables.times.len(), "key times")?;
        self.tables.times.extend_from_slice(times);
        let search = index_u32(self.tables.search_keys.len(), "key search table")?;
        // In a compressed library a negative scale means uniform times
        // without texels: lists there search from a table or the middle.
        let direct = if self.tables.is_compressed() {
            0.0
        } else {
            uniform_key_scale(times)
        };
        let scale = match key_lookup(times) {
            _ if direct > 0.0 => -direct,
            Some((scale, first)) => {
                self.tables.search_keys.extend_from_slice(&first);
                scale
            }
            None => 0.0,
        };
        self.tables
            .search_keys
            .extend(0..index_u32(times.len(), "key times")?);
        Ok((o, scale, search))
    }

    /// Sorts the clip's rows (from `track_offset`, with `properties` in
    /// clip order) by shader block, then by property within a group (so
    /// that SIMD lanes and GPU warps side by side have the same width;
    /// stable otherwise); records in `track_rows` each clip track's row.
    /// Returns the rows of each group.
    fn group_rows(&mut self, track_offset: u32, properties: &[Property]) -> [u32; SAMPLE_GROUPS] {
        let rows = &mut self.tables.tracks[track_offset as usize..];
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by_key(|&j| (rows[j].group(), properties[j] as u32));
        let grouped: Vec<GpuTrack> = order.iter().map(|&j| rows[j]).collect();
        rows.copy_from_slice(&grouped);
        let mut row_of = vec![0u32; order.len()];
        for (row, &j) in order.iter().enumerate() {
            row_of[j] = track_offset + row as u32;
        }
        self.tables.track_rows.extend_from_slice(&row_of);
        let mut counts = [0u32; SAMPLE_GROUPS];
        for t in &grouped {
            counts[t.group() as usize] += 1;
        }
        for (most, count) in self.tables.group_tracks.iter_mut().zip(counts) {
            *most = (*most).max(count);
        }
        counts
    }

    /// Checks that the arrays can be indexed with `u32` and makes the
    /// tables.
    fn finish(self) -> Result<LibraryTables> {
        let tables = self.tables;
        index_u32(tables.values.len(), "key values")?;
        index_u32(tables.search_keys.len(), "key search table")?;
        index_u32(tables.tracks.len(), "track table")?;
        Ok(tables)
    }
}
