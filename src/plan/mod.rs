//! What runs where: the one place where the crate chooses how its work is
//! laid out on a device, as values built without a device. Every choice
//! changes speed only, never a result: each plan is tested against the
//! same CPU twin.
//!
//! A [`Plan`] is built from a bound library, the capacity and a
//! [`DeviceProfile`] (what the device is good at: the only thing a plan
//! asks of it). It lists the dispatches the animator records, in order,
//! each with its WGSL entry point, its typed overrides
//! (`SampleOverrides`, `RigOverrides`), its workgroups at full
//! capacity and the tables it reads; it prints (`Display`), and
//! `Animator::from_plan` builds exactly what it lists.
//!
//! The sampler has three plans. [`SamplerPlan::Reference`] is the plain
//! one, and what a reader should read first: one dispatch samples every
//! track of every instance (`GROUP_ALL`), and the key search bisects the
//! track's keys from the middle one. [`SamplerPlan::Grouped`] makes one
//! dispatch per track group, each compiled without the other groups'
//! code, starts the key search from a bucket table or from the direct
//! index of uniformly spaced keys, reads and writes values as vec4s where
//! a group's tracks are aligned to 4 floats (`vec4_group`), and in the
//! STEP and vector groups samples two rows per invocation whose key
//! searches and loads run side by side (`invocation_rows`).
//! [`SamplerPlan::ClipBlocks`] is the grouped plan with the instances
//! sorted by clip each frame and a workgroup per block of 64 instances of
//! one clip and a run of up to 32 of its track rows (`block_row_run`),
//! so that the clip and row reads are the same for every lane and each
//! lane reads its instance once per run. Every plan runs on every device.
//!
//! What `Auto` picks is device-specific: on CPU adapters the choices of
//! `cpu_adapter` (the grouped or clip-blocks plan, the per-instance
//! skin walk, uniform copies of the small tables, 64-bit accesses where
//! `SHADER_INT64` is on), measured on lavapipe; on GPUs the reference
//! plan and the per-node skin strategy, with no CPU-adapter trick, until
//! a measurement on a GPU (`scripts/gpu_check`) says otherwise.

pub(crate) mod cpu_adapter;
mod overrides;
pub(crate) mod passes;
mod profile;
pub(crate) mod schedule;

pub(crate) use overrides::{RigOverrides, SampleOverrides};
pub use passes::SkinStrategy;
pub use profile::{DeviceLimits, DeviceProfile};
pub(crate) use schedule::dispatch_grid;
pub(crate) use schedule::{
    block_workgroups as schedule_block_workgroups, lanes_per_instance, Overrides,
};
pub use schedule::{Dispatch, Plan, PlanChoices, Stage, TableUse};

use crate::compress::format::{block_header, block_offsets_and_frame};
use crate::layout::{
    GpuClip, GpuSampleRow, GpuTrack, DECODE_HEAD, DECODE_HEAD_ALIGN, GROUP_ALL, SAMPLE_GROUPS,
    WORKGROUP_SIZE,
};
use crate::model::library::AnimationLibrary;

/// How the sampling pass lays out its dispatches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SamplerPlan {
    /// What the device profile picks: on CPU adapters
    /// `cpu_adapter::sampler_plan` ([`ClipBlocks`](Self::ClipBlocks) or
    /// [`Grouped`](Self::Grouped)); [`Reference`](Self::Reference) on
    /// GPUs, until a measurement on a GPU says otherwise.
    #[default]
    Auto,
    /// One dispatch over every track of every instance, with every
    /// interpolation compiled in, and a key search that bisects the keys
    /// from the middle one.
    Reference,
    /// One dispatch per track group (LINEAR rotations, other LINEAR
    /// tracks, STEP, CUBICSPLINE rotations, other CUBICSPLINE), each
    /// compiled without the other groups' code; the key search starts from
    /// the library's bucket tables and direct indices (and goes on
    /// searching from there when a guess misses).
    Grouped,
    /// The track groups and key search of [`Grouped`](Self::Grouped),
    /// with the instances sorted by clip on the host each frame (a
    /// counting sort) and one workgroup per block of up to 64 instances of
    /// one clip and a run of up to `MAX_BLOCK_ROW_RUN` of its track rows
    /// (`block_row_run`), each lane sampling its instance's rows in
    /// turn: the block and the rows are read at workgroup-uniform indices,
    /// and each lane reads only its instance's time (once per run), the
    /// key search's texels and its values. Each row's key search starts
    /// from a bucket table of its run of rows (one bucket per lane and run,
    /// then the row's own key texel), or, where every row of a run has the
    /// same key times, one search serves the run: the same results, fewer
    /// and smaller texel reads than the rows' own tables (about 1/16 of
    /// their texture memory more). Outputs stay where the instance table
    /// puts them.
    ClipBlocks,
}

impl SamplerPlan {
    /// This plan, with [`Auto`](Self::Auto) resolved for `library` and up
    /// to `max_instances` instances on a device of `profile`: the
    /// `cpu_adapter` choice on CPU adapters, [`Reference`](Self::Reference)
    /// on GPUs.
    #[must_use]
    pub(crate) fn resolve(
        self,
        profile: &DeviceProfile,
        library: &AnimationLibrary,
        max_instances: u32,
    ) -> SamplerPlan {
        match self {
            SamplerPlan::Auto if profile.cpu_adapter => {
                cpu_adapter::sampler_plan(profile, library, max_instances)
            }
            SamplerPlan::Auto => SamplerPlan::Reference,
            chosen => chosen,
        }
    }

    /// The plan's name, as `Debug` writes it.
    #[must_use]
    pub(crate) fn name(self) -> &'static str {
        match self {
            SamplerPlan::Auto => "Auto",
            SamplerPlan::Reference => "Reference",
            SamplerPlan::Grouped => "Grouped",
            SamplerPlan::ClipBlocks => "ClipBlocks",
        }
    }
}

/// The most blocks the clip-blocks plan makes of `capacity` instances of
/// up to `clip_count` clips, per track group: every clip's instances in
/// blocks of at most [`WORKGROUP_SIZE`], the last block of each clip
/// partly filled.
#[must_use]
pub(crate) fn max_blocks(capacity: u32, clip_count: usize) -> u32 {
    let w = u64::from(WORKGROUP_SIZE);
    let clips = (clip_count as u64).min(u64::from(capacity));
    let blocks = (u64::from(capacity) + (w - 1) * clips) / w;
    u32::try_from(blocks).unwrap_or(u32::MAX)
}

/// Whether every track row of track group `g` starts its values and its
/// output at a multiple of 4 floats and is a multiple of 4 wide, in a
/// library whose output stride is one too: the tuned plans then read and
/// write the group's values as vec4s (the shader's override `ALIGNED4`).
/// Never for `GROUP_ALL` (the reference plan reads and writes floats).
/// Never for a compressed library, whose values are decoded.
#[must_use]
pub(crate) fn vec4_group(library: &AnimationLibrary, g: u32) -> bool {
    g != GROUP_ALL
        && !library.is_compressed()
        && library.output_stride().is_multiple_of(4)
        && library
            .tables()
            .tracks()
            .iter()
            .filter(|t| t.group() == g)
            .all(|t| {
                t.values_offset.is_multiple_of(4)
                    && t.width.is_multiple_of(4)
                    && t.output_offset.is_multiple_of(4)
            })
}

/// Whether every track group of `library` is [`vec4_group`]: rotations
/// and morph weights of multiples of 4 targets, no translation or scale.
#[must_use]
pub(crate) fn vec4_library(library: &AnimationLibrary) -> bool {
    (0..SAMPLE_GROUPS as u32).all(|g| vec4_group(library, g))
}

/// Whether a sampler of `max_instances` instances of `library` has at
/// least [`WORKGROUP_SIZE`] (64) of them per clip on average, so that the
/// clip-blocks plan's blocks would be full: on a CPU adapter, where the
/// library has 3-float tracks, the clip-blocks plan is faster than the
/// grouped plan with full blocks and slower with mostly idle lanes.
#[must_use]
pub(crate) fn full_blocks(library: &AnimationLibrary, max_instances: u32) -> bool {
    let clips = library.tables().clip_table().len() as u64;
    clips > 0 && u64::from(max_instances) >= u64::from(WORKGROUP_SIZE) * clips
}

/// The most track rows one workgroup of the clip-blocks plan samples
/// (see [`block_row_run`]).
pub(crate) const MAX_BLOCK_ROW_RUN: u32 = 32;

/// How many consecutive track rows of a group one workgroup of the
/// [`ClipBlocks`](SamplerPlan::ClipBlocks) plan samples, each lane
/// sampling its instance's rows one after the other (the shader's override
/// `ROW_RUN`), for a group of `group_rows` rows in its largest clip: all of
/// them up to [`MAX_BLOCK_ROW_RUN`], so a dispatch has
/// `ceil(group_rows / run)` workgroups per block of instances.
///
/// A lane then reads its sorted entry once per run rather than once per
/// row, and a workgroup does 16 to 32 times the work, which pays for the
/// CPU adapters' per-workgroup cost. The cap keeps some workgroups per
/// block for devices with more cores.
#[must_use]
pub(crate) fn block_row_run(group_rows: u32) -> u32 {
    group_rows.clamp(1, MAX_BLOCK_ROW_RUN)
}

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
/// `packed` words ([`SampleTables::decode_heads`]), whose verbatim
/// tracks start at `verbatim_start`.
fn decode_head(packed: &[u32], verbatim_start: u32, track: &GpuTrack) -> [[u32; 4]; 4] {
    let header = block_header(packed, verbatim_start, track).unwrap_or([0; 4]);
    let (offsets, frame) = block_offsets_and_frame(packed, verbatim_start, track);
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

/// Track rows of group `g` one invocation of the
/// [`Grouped`](SamplerPlan::Grouped) plan samples (the shader's
/// override `ROW_RUN` in `sample_main`): two consecutive rows of its
/// instance for the STEP, LINEAR-vector and CUBICSPLINE-vector groups of
/// two or more rows in a clip, one otherwise.
///
/// Two rows' key searches then run side by side in one loop
/// (`find_segment_pair`), and for LINEAR and CUBICSPLINE vectors their
/// key loads too, component by component (`blend_pair`, `spline_pair`):
/// each search's texel read and each track's first key load is likely a
/// cache miss, and side by side two wait for memory together, where one
/// row after the other they waited in turn. The rotation groups are left
/// single: `sample_main` holds both rows' track rows per lane, and with
/// the slerp's or the normalization's arithmetic between their loads the
/// pairs were slower on the CPU adapters. The clip-blocks plan, whose rows
/// are uniform, pairs every group's rows (its runs).
#[must_use]
pub(crate) fn invocation_rows(g: u32, group_rows: u32) -> u32 {
    if g == crate::layout::GROUP_STEP
        || g == crate::layout::GROUP_CUBIC
        || g == crate::layout::GROUP_BLEND
    {
        group_rows.clamp(1, 2)
    } else {
        1
    }
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
        library: &AnimationLibrary,
        plan: SamplerPlan,
        texture_texels: u64,
        uniform_heads: bool,
    ) -> SampleTables {
        let dispatches: Vec<(u32, u32)> = match plan {
            SamplerPlan::Grouped | SamplerPlan::ClipBlocks => (0..SAMPLE_GROUPS)
                .map(|g| (g as u32, library.tables().group_tracks_per_instance(g)))
                .filter(|&(_, per)| per > 0)
                .collect(),
            _ => vec![(GROUP_ALL, library.tracks_per_instance())],
        };
        let run_base = library.tables().search_keys().len() as u64;
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
        };
        if plan == SamplerPlan::ClipBlocks {
            tables.add_clip_blocks(library, texture_texels, uniform_heads);
        } else {
            tables.texels = library.tables().key_windows();
        }
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
        library: &AnimationLibrary,
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
            .tables()
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
                let windows = windows.get_or_insert_with(|| library.tables().key_windows());
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
        let mut texels = windows.unwrap_or_else(|| library.tables().key_windows());
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
    fn add_compressed_runs(&mut self, library: &AnimationLibrary, uniform_heads: bool) {
        use crate::tables::run_keys::{self, GroupRunKeys, RunKeys};
        self.rows = library
            .tables()
            .tracks()
            .iter()
            .map(GpuSampleRow::of)
            .collect();
        self.texels = library.tables().key_windows();
        let packed = library.tables().packed().unwrap_or(&[]);
        let verbatim = library.tables().verbatim_start();
        // The key interval of a block's uniform times (its header's dt,
        // which the spline reads from the run's first row).
        let dt = |t: &GpuTrack| block_header(packed, verbatim, t).map(|h| h[3]);
        if uniform_heads {
            self.head_windows = self
                .dispatches
                .iter()
                .map(|&(g, _)| head_windows(library.tables().clip_table(), g).unwrap_or_default())
                .collect();
        }
        if self.head_windows.iter().any(|w| !w.is_empty()) {
            self.decode_heads = library
                .tables()
                .tracks()
                .iter()
                .map(|t| decode_head(packed, verbatim, t))
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
