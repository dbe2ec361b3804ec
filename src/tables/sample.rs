//! What a sampler uploads for a library under a resolved plan
//! ([`SampleTables`]), computed without a device: its dispatches, how each
//! group's rows find their keys, the clip-blocks plan's row table and
//! computed segments, the runs stored key by key, the key search
//! texture's texels, and a compressed library's block heads in windows
//! of their uniform copies.

use std::sync::Arc;

use crate::compress::packed::Packed;
use crate::kinds::SamplerPlan;
use crate::layout::{
    GpuClip, GpuSampleRow, GpuTrack, DECODE_HEAD, DECODE_HEAD_ALIGN, GROUP_ALL, SAMPLE_GROUPS,
};
use crate::tables::blocks::block_row_run;
use crate::tables::library::LibraryTables;

/// The shortest segment worth computing (see [`regular_segments`]): below
/// it the two rows a segment reads are all its rows.
pub(crate) const MIN_REGULAR_SEGMENT: u32 = 4;

/// How a clip-blocks group's runs of `run` rows (each run's rows as
/// `runs` gives them, in the row table's order) are computed rather than
/// read (the shader's overrides `REGULAR_SEGMENT` and `REGULAR_SEARCH`):
/// `(segment, search)`, every run being segments of `segment` consecutive
/// rows from its first, each regular as
/// [`GpuSampleRow::is_regular_run`] says (`search`) or but for its search
/// offsets ([`GpuSampleRow::is_regular_but_search`]: each row's is then
/// read); `(0, true)` when no such segments exist and every row is read.
///
/// The longest segment that divides the run (or the run itself) and is
/// even, so that the two rows sampled side by side share one; segments
/// with regular search offsets first. A group's rows are sorted by
/// property, so a run holding two properties' rows (translations then
/// scales) is regular in segments of one property where the whole run is
/// not. Per segment the shader reads two rows (a gather per field on the
/// CPU adapters, though every lane reads the same row) where it would
/// read one per row.
#[must_use]
pub(crate) fn regular_segments(runs: &[&[GpuSampleRow]], run: u32) -> (u32, bool) {
    let run = run.max(1);
    let lengths = (MIN_REGULAR_SEGMENT.min(run)..=run)
        .rev()
        .filter(|&l| l == run || (l.is_multiple_of(2) && run.is_multiple_of(l)));
    for search in [true, false] {
        for l in lengths.clone() {
            let regular = |segment: &[GpuSampleRow]| {
                if search {
                    GpuSampleRow::is_regular_run(segment)
                } else {
                    GpuSampleRow::is_regular_but_search(segment)
                }
            };
            if runs.iter().all(|rows| rows.chunks(l as usize).all(regular)) {
                return (l, search);
            }
        }
    }
    (0, true)
}

/// The uniform copy of `track`'s block head in a compressed library's
/// `packed` words ([`SampleTables::decode_heads`]).
fn decode_head(packed: &Packed, track: &GpuTrack) -> [[u32; 4]; 4] {
    let header = packed.header(track.values_offset).unwrap_or([0; 4]);
    let (offsets, frame) = packed.offsets_and_frame(track.values_offset, track.width);
    let [left, right] = frame.unwrap_or([[0; 4]; 2]);
    [
        [header[0], header[1], track.values_offset, track.key_count],
        offsets,
        left,
        right,
    ]
}

/// A window of a compressed library's block heads in their uniform
/// copies ([`SampleTables::decode_heads`]): the `DECODE_HEAD` rows from
/// `first_row` (a multiple of `DECODE_HEAD_ALIGN`, so that its binding's
/// offset is aligned on every device), which hold one track group's rows
/// of the clips `clip_begin..clip_end`. A uniform binding holds
/// `DECODE_HEAD` rows; where a group's rows span more, its clip-blocks
/// dispatch is recorded in parts, one per window, each over its clips'
/// blocks with its window bound (the shader reads row `r` at `r -
/// first_row`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HeadWindow {
    /// The window's first row.
    pub first_row: u32,
    /// Its first clip.
    pub clip_begin: u32,
    /// One past its last clip.
    pub clip_end: u32,
}

/// The windows of group `g`'s block heads over `clips` (in the track
/// table's order: a clip's rows of a group are consecutive, and the
/// clips follow each other), fewest first: each window takes clips while
/// their rows of `g` end within it, and the clips without rows of `g`
/// where they fall; together they cover every clip. `None` where one
/// clip's rows of `g` are more than a window holds (its dispatch reads
/// the heads from the packed words), or `g` has no rows.
pub(crate) fn head_windows(clips: &[GpuClip], g: u32) -> Option<Vec<HeadWindow>> {
    let mut windows: Vec<HeadWindow> = Vec::new();
    for (c, clip) in (0u32..).zip(clips) {
        let (first, count) = clip.group_rows(g);
        if count == 0 {
            continue;
        }
        let end = u64::from(first) + u64::from(count);
        let begin = match windows.last_mut() {
            Some(w) if end <= u64::from(w.first_row) + u64::from(DECODE_HEAD) => continue,
            Some(w) => {
                w.clip_end = c;
                c
            }
            None => 0,
        };
        let first_row = first - first % DECODE_HEAD_ALIGN;
        if end > u64::from(first_row) + u64::from(DECODE_HEAD) {
            return None;
        }
        windows.push(HeadWindow {
            first_row,
            clip_begin: begin,
            clip_end: begin,
        });
    }
    windows.last_mut()?.clip_end = u32::try_from(clips.len()).ok()?;
    Some(windows)
}

/// What a sampler uploads for a library under a resolved plan, computed
/// without a device: its dispatches (one per track group with tracks, or
/// one over every track), how each group's rows find their keys, the
/// clip-blocks plan's row table, the runs whose values are stored key by
/// key, and the key search texture's texels.
#[derive(Debug, Clone)]
pub(crate) struct SampleTables {
    /// The plan (never [`SamplerPlan::Auto`]).
    pub plan: SamplerPlan,
    /// Per dispatch: its track group and its rows per instance.
    pub dispatches: Vec<(u32, u32)>,
    /// Per dispatch: the clip-blocks plan's run keys (`PER_ROW` elsewhere).
    pub run_keys: Vec<crate::tables::run_keys::GroupRunKeys>,
    /// Per dispatch: the rows per regular segment (0: rows are read) and
    /// whether their search offsets are computed ([`regular_segments`]).
    pub regular: Vec<(u32, bool)>,
    /// The clip-blocks plan's LINEAR rotation runs stored key by key.
    pub interleaved: Vec<crate::tables::run_values::InterleavedRun>,
    /// The clip-blocks plan's row table (empty in the other plans).
    pub rows: Vec<GpuSampleRow>,
    /// A compressed library's block heads per row, for their uniform
    /// copies (`DECODE_HEAD` rows a binding): `[meta, value step, values
    /// offset, key count]`, the value stream's first four offsets, and a
    /// framed value stream's `left` and `right` (zeros otherwise). Empty
    /// where the library is not compressed, the plan is not clip-blocks,
    /// the device is not a CPU adapter, or no dispatch has windows.
    pub decode_heads: Vec<[[u32; 4]; 4]>,
    /// Per dispatch: the windows of [`decode_heads`](Self::decode_heads)
    /// it binds, one part of the dispatch each ([`head_windows`]); empty
    /// where it reads the heads from the packed words.
    pub head_windows: Vec<Vec<HeadWindow>>,
    /// The key search texture: the library's search texels, then the run
    /// keys' tables and key copies from texel `run_base`.
    pub texels: Vec<[u32; 4]>,
    /// Where the run keys' texels start.
    pub run_base: u64,
    /// The library's tables these were made from, which the sampler
    /// uploads and reads each frame.
    pub library: Arc<LibraryTables>,
}

impl SampleTables {
    /// The rows of each of the block heads' two uniform regions (heads,
    /// then frames): room for every row and every window's `DECODE_HEAD`
    /// rows, a multiple of `DECODE_HEAD_ALIGN` (so that the frames' region
    /// starts aligned), at least one window's.
    pub(crate) fn decode_head_rows(&self) -> u32 {
        let rows = u32::try_from(self.decode_heads.len()).unwrap_or(u32::MAX);
        self.head_windows
            .iter()
            .flatten()
            .map(|w| w.first_row.saturating_add(DECODE_HEAD))
            .fold(DECODE_HEAD.max(rows), u32::max)
            .next_multiple_of(DECODE_HEAD_ALIGN)
    }

    /// The dispatch parts: one per window of each dispatch's block
    /// heads, one for each dispatch without windows.
    pub(crate) fn parts(&self) -> usize {
        self.head_windows.iter().map(|w| w.len().max(1)).sum()
    }

    /// The tables of `library` under `plan` (resolved), within a key
    /// search texture of `texture_texels` texels; with `uniform_heads`
    /// (CPU adapters: `cpu_adapter::uniform_heads`) a compressed library's
    /// block heads for their uniform copies.
    pub(crate) fn build(
        library: LibraryTables,
        plan: SamplerPlan,
        texture_texels: u64,
        uniform_heads: bool,
    ) -> SampleTables {
        let dispatches: Vec<(u32, u32)> = match plan {
            SamplerPlan::Grouped | SamplerPlan::ClipBlocks => (0..SAMPLE_GROUPS)
                .map(|g| (g as u32, library.group_tracks_per_instance(g)))
                .filter(|&(_, per)| per > 0)
                .collect(),
            _ => vec![(GROUP_ALL, library.tracks_per_instance())],
        };
        let run_base = library.search_keys().len() as u64;
        let mut tables = SampleTables {
            plan,
            head_windows: vec![Vec::new(); dispatches.len()],
            run_keys: vec![crate::tables::run_keys::GroupRunKeys::PER_ROW; dispatches.len()],
            regular: vec![(0, true); dispatches.len()],
            dispatches,
            interleaved: Vec::new(),
            rows: Vec::new(),
            decode_heads: Vec::new(),
            texels: Vec::new(),
            run_base,
            library: Arc::new(LibraryTables::default()),
        };
        if plan == SamplerPlan::ClipBlocks {
            tables.add_clip_blocks(&library, texture_texels, uniform_heads);
        } else {
            tables.texels = library.key_windows();
        }
        tables.library = Arc::new(library);
        tables
    }

    /// The clip-blocks plan's part: run keys (`crate::tables::run_keys`), the
    /// LINEAR rotation runs stored key by key where every run of the group
    /// shares its key times (`crate::tables::run_values`), the row table, and per
    /// dispatch the segments of its runs whose rows the shader computes
    /// from their first two; where only the search offsets step unevenly,
    /// copies of the rows' key texels after the run tables make them step
    /// evenly too (`crate::tables::run_keys::key_copies`).
    ///
    /// A compressed library's values stay packed and it has no run
    /// tables: see [`SampleTables::add_compressed_runs`].
    fn add_clip_blocks(
        &mut self,
        library: &LibraryTables,
        texture_texels: u64,
        uniform_heads: bool,
    ) {
        use crate::tables::run_keys::{self, RunKeys};
        if library.is_compressed() {
            self.add_compressed_runs(library, uniform_heads);
            return;
        }
        let runs: Vec<(u32, u32)> = self
            .dispatches
            .iter()
            .map(|&(g, per)| (g, block_row_run(per)))
            .collect();
        let keys = run_keys::build(library, &runs, self.run_base, texture_texels);
        self.run_keys = keys.groups;
        let mut extra = keys.texels;
        let slerp = self
            .dispatches
            .iter()
            .position(|&(g, _)| g == crate::layout::GROUP_SLERP);
        if let Some(slot) = slerp {
            if self.run_keys[slot].mode == RunKeys::Shared {
                let run = block_row_run(self.dispatches[slot].1);
                self.interleaved = crate::tables::run_values::interleaved_runs(library, run);
            }
        }
        // Rows of groups with run tables name their key texels directly.
        let key_groups: Vec<u32> = self
            .dispatches
            .iter()
            .zip(&self.run_keys)
            .filter(|(_, k)| k.mode as u32 >= RunKeys::Table as u32)
            .map(|(&(g, _), _)| g)
            .collect();
        let mut rows: Vec<GpuSampleRow> = library
            .tracks()
            .iter()
            .map(|t| {
                if key_groups.contains(&t.group()) {
                    GpuSampleRow::of_key_texels(t)
                } else {
                    GpuSampleRow::of(t)
                }
            })
            .collect();
        for run in &self.interleaved {
            run.point_rows(&mut rows);
        }
        let segments = |rows: &[GpuSampleRow], g: u32, run: u32| {
            let runs: Option<Vec<&[GpuSampleRow]>> = run_keys::runs_of(library, g, run)
                .iter()
                .map(|&(first, r)| rows.get(first..first + r.len()))
                .collect();
            runs.map_or((0, true), |runs| regular_segments(&runs, run))
        };
        // The library's search texels, built once where copies need them.
        let mut windows: Option<Vec<[u32; 4]>> = None;
        for (slot, &(g, per)) in self.dispatches.iter().enumerate() {
            let run = block_row_run(per);
            let mut found = segments(&rows, g, run);
            if found.0 > 0 && !found.1 && key_groups.contains(&g) {
                let windows = windows.get_or_insert_with(|| library.key_windows());
                let base = self.run_base + extra.len() as u64;
                if let Some(copies) =
                    run_keys::key_copies(library, windows, &mut rows, g, run, base, texture_texels)
                {
                    extra.extend_from_slice(&copies);
                    found = segments(&rows, g, run);
                }
            }
            // Only sample_run (run keys) computes rows.
            if self.run_keys[slot].mode != RunKeys::PerRow {
                self.regular[slot] = found;
            }
        }
        let mut texels = windows.unwrap_or_else(|| library.key_windows());
        texels.extend_from_slice(&extra);
        self.texels = texels;
        self.rows = rows;
    }

    /// The clip-blocks plan's part for a compressed library: its rows, and
    /// for each group whose every run shares its first row's uniform key
    /// times (baked clips: every track at one rate over the clip; a row
    /// with fewer keys, such as a constant track's one key, has a prefix
    /// of them) the run keys [`Shared`](crate::tables::run_keys::RunKeys::Shared):
    /// a run's segment is found once, from its first row, for all its rows
    /// (the shader clamps it to each row's last key, which gives each
    /// row's own segment). Then the segments of its runs whose rows the
    /// shader computes from their first two: a compressed block has a
    /// size of its own and rows differ in key counts, so regularity is
    /// judged without values offsets, key counts and lookups, and the
    /// shader reads each row's values offset and key count (two words,
    /// where a row is eight; the lookups only the first row's search
    /// reads). With `uniform_heads`, the rows' block heads for their
    /// uniform copies, and each dispatch's windows of them.
    fn add_compressed_runs(&mut self, library: &LibraryTables, uniform_heads: bool) {
        use crate::tables::run_keys::{self, GroupRunKeys, RunKeys};
        self.rows = library.tracks().iter().map(GpuSampleRow::of).collect();
        self.texels = library.key_windows();
        let none = Packed::default();
        let packed = library.packed().unwrap_or(&none);
        // The key interval of a block's uniform times (its header's dt,
        // which the spline reads from the run's first row).
        let dt = |t: &GpuTrack| packed.interval_bits(t.values_offset);
        if uniform_heads {
            self.head_windows = self
                .dispatches
                .iter()
                .map(|&(g, _)| head_windows(library.clip_table(), g).unwrap_or_default())
                .collect();
        }
        if self.head_windows.iter().any(|w| !w.is_empty()) {
            self.decode_heads = library
                .tracks()
                .iter()
                .map(|t| decode_head(packed, t))
                .collect();
        }
        let judged: Vec<GpuSampleRow> = self
            .rows
            .iter()
            .map(|r| GpuSampleRow {
                values_offset: 0,
                key_count: 0,
                lookup_scale: 0.0,
                lookup_origin: 0.0,
                ..*r
            })
            .collect();
        for (slot, &(g, per)) in self.dispatches.iter().enumerate() {
            let run = block_row_run(per);
            if run < 2 {
                continue;
            }
            let runs = run_keys::runs_of(library, g, run);
            // Only the spline reads the key interval (a verbatim row's
            // is 0: it has none).
            let spline = matches!(
                g,
                crate::layout::GROUP_CUBIC | crate::layout::GROUP_CUBIC_ROTATION | GROUP_ALL
            );
            let shared = runs.iter().all(|(_, rows)| {
                let r0 = &rows[0];
                r0.lookup_scale < 0.0
                    && rows.iter().all(|t| {
                        t.lookup_scale < 0.0
                            && (t.key_count == 1
                                || (t.key_count <= r0.key_count
                                    && t.lookup_scale.to_bits() == r0.lookup_scale.to_bits()
                                    && t.lookup_origin.to_bits() == r0.lookup_origin.to_bits()
                                    && dt(t).is_some()
                                    && (!spline || dt(t) == dt(r0))))
                    })
            });
            if !shared {
                continue;
            }
            self.run_keys[slot] = GroupRunKeys {
                mode: RunKeys::Shared,
                ..GroupRunKeys::PER_ROW
            };
            let rows: Option<Vec<&[GpuSampleRow]>> = runs
                .iter()
                .map(|&(first, r)| judged.get(first..first + r.len()))
                .collect();
            self.regular[slot] = rows.map_or((0, true), |rows| regular_segments(&rows, run));
        }
    }
}
