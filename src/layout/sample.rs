//! The sampling stage's side of the layout: the track, clip and instance
//! tables, the clip-blocks plan's blocks, rows and parameters, the track
//! groups, the key search's constants, and `sample.wgsl`'s bindings.

use std::mem::size_of;

use bytemuck::{Pod, Zeroable};

use super::{binding, Binding, BindingKind};

/// One track in the track table (WGSL `Track`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub(crate) struct GpuTrack {
    /// Index of the track's first key time in the `times` array.
    pub(crate) times_offset: u32,
    /// Number of keys.
    pub(crate) key_count: u32,
    /// Index of the track's first value in the `values` array.
    pub(crate) values_offset: u32,
    /// Components per value element.
    pub(crate) width: u32,
    /// [`crate::Interpolation`] as `u32`.
    pub(crate) interpolation: u32,
    /// [`crate::ValueKind`] as `u32` (WGSL `KIND_VECTOR`, `KIND_ROTATION`,
    /// `KIND_DISCRETE`): how the sampler interpolates the values. What
    /// the track targets is host data ([`crate::Track`]).
    pub(crate) kind: u32,
    /// Offset of the track's first output component inside an instance's
    /// output block.
    pub(crate) output_offset: u32,
    /// The target node for node-property tracks, 0 for pointer tracks
    /// (informational: the sampler does not read it; the pose stage finds
    /// its channels in `tables::rig::SkinTables`).
    pub(crate) node: u32,
    /// Buckets per second of the track's bucket table; or, negated, keys
    /// per second of uniformly spaced keys, indexed directly without a
    /// table (the search tries key `c = (time - t_0) * |lookup_scale|`
    /// first); or 0 when the search starts from the middle key (fewer
    /// than 3 keys, more than [`MAX_LOOKUP_KEYS`]). The table has
    /// `2 (key_count - 1)` buckets that split `[t_0, t_last]` evenly;
    /// bucket `b`'s texel, `key_windows[search_offset + b]`, is the search
    /// texel of the key that answers most times in that bucket. Set by
    /// [`AnimationLibrary`](crate::AnimationLibrary), which explains why
    /// that key is the answer or next to it.
    pub(crate) lookup_scale: f32,
    /// The first key time `t_0`, where bucket 0 or the direct guess starts
    /// (0 when `lookup_scale` is 0).
    pub(crate) lookup_origin: f32,
    /// Index of the track's first texel in the key search table
    /// (`LibraryTables::key_windows`,
    /// the `key_windows` texture): its bucket texels when `lookup_scale >
    /// 0`, then one texel `[p, t_p, t_(p+1), t_(p+2)]` per key `p`.
    pub(crate) search_offset: u32,
}

/// One clip in the clip table (WGSL `Clip`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub(crate) struct GpuClip {
    /// Index of the clip's first track in the track table.
    pub(crate) track_offset: u32,
    /// Number of tracks.
    pub(crate) track_count: u32,
    /// Sum of the widths of its tracks: the used part of an output block.
    pub(crate) output_width: u32,
    /// The clip's duration in seconds (largest key time).
    pub(crate) duration: f32,
    /// Track group `g`'s first row in the track table: the clip's rows are
    /// grouped as [`GROUP_SLERP`] (LINEAR rotations), [`GROUP_CUBIC`]
    /// (CUBICSPLINE, not rotations), [`GROUP_BLEND`] (other LINEAR
    /// tracks), [`GROUP_CUBIC_ROTATION`], [`GROUP_STEP`], in that order, so
    /// `group_first[0] == track_offset`.
    pub(crate) group_first: [u32; SAMPLE_GROUPS],
    /// Track group `g`'s number of tracks; they add up to `track_count`.
    /// With `group_first`, a group's dispatch reads two words of the clip
    /// where it would add three counts up.
    pub(crate) group_count: [u32; SAMPLE_GROUPS],
}

/// One instance in the per-frame instance table (WGSL `Instance`).
///
/// `time` is clip-local: the host has already applied the wrap mode in `f64`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct GpuInstance {
    /// Clip index.
    pub clip: u32,
    /// Clip-local time in seconds.
    pub time: f32,
    /// Padding (16-byte rows).
    pub(crate) _pad0: u32,
    /// Padding (16-byte rows).
    pub(crate) _pad1: u32,
}

/// Dispatch parameters (WGSL `Params`, a uniform).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub struct GpuParams {
    /// Number of instances in the instance table.
    pub instance_count: u32,
    /// Invocations per instance: the largest track count of any clip.
    pub tracks_per_instance: u32,
    /// `f32`s per instance in the output buffer.
    pub output_stride: u32,
    /// Invocations per row of a 2D dispatch (`workgroups.x * WORKGROUP_SIZE`).
    pub row_invocations: u32,
}

/// One block of the clip-blocks plan (WGSL `SampleBlock`): up to
/// [`WORKGROUP_SIZE`] instances of one clip, consecutive in the sorted
/// instance table, and the rows of one track group of that clip. Written
/// per frame by `GpuSampler` under
/// `SamplerPlan::ClipBlocks`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct GpuSampleBlock {
    /// The block's first entry in the sorted instance table.
    pub(crate) first: u32,
    /// Its instances, `1..=WORKGROUP_SIZE`.
    pub(crate) count: u32,
    /// The dispatch group's first row of the clip in the track table.
    pub(crate) row_first: u32,
    /// The group's rows in the clip.
    pub(crate) row_count: u32,
}

/// The fields of one track row that the clip-blocks plan reads (WGSL
/// `SampleRow`), row `r` of its row table for row `r` of the track table:
/// 32 bytes where a [`GpuTrack`] is 40, in a uniform buffer's 16-byte
/// rows.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub(crate) struct GpuSampleRow {
    /// [`GpuTrack::values_offset`].
    pub(crate) values_offset: u32,
    /// [`GpuTrack::output_offset`].
    pub(crate) output_offset: u32,
    /// [`GpuTrack::search_offset`]; in a group with run tables, the
    /// track's first key texel ([`GpuSampleRow::of_key_texels`]).
    pub(crate) search_offset: u32,
    /// [`GpuTrack::key_count`].
    pub(crate) key_count: u32,
    /// [`GpuTrack::lookup_scale`]; 0 in a group with run tables.
    pub(crate) lookup_scale: f32,
    /// [`GpuTrack::lookup_origin`]; 0 in a group with run tables.
    pub(crate) lookup_origin: f32,
    /// [`GpuTrack::width`].
    pub(crate) width: u32,
    /// [`GpuTrack::interpolation`].
    pub(crate) interpolation: u32,
}

impl GpuSampleRow {
    /// The row of `track`.
    #[must_use]
    pub(crate) fn of(track: &GpuTrack) -> Self {
        GpuSampleRow {
            values_offset: track.values_offset,
            output_offset: track.output_offset,
            search_offset: track.search_offset,
            key_count: track.key_count,
            lookup_scale: track.lookup_scale,
            lookup_origin: track.lookup_origin,
            width: track.width,
            interpolation: track.interpolation,
        }
    }

    /// The row of `track` in a group whose run keys start every row's
    /// search at one of its key texels (run tables): the first key texel
    /// ([`GpuTrack::key_texels`]) as its search offset and no bucket table
    /// (lookup scale and origin 0), which those searches never read. The
    /// shader then finds the key texels without reading the lookup scale
    /// (one uniform read fewer per row, a gather per lane on the CPU
    /// adapters).
    #[must_use]
    pub(crate) fn of_key_texels(track: &GpuTrack) -> Self {
        GpuSampleRow {
            search_offset: track.key_texels(),
            lookup_scale: 0.0,
            lookup_origin: 0.0,
            ..GpuSampleRow::of(track)
        }
    }

    /// Whether the rows of one run of the clip-blocks plan follow from its
    /// first two: row `i`'s values, output and search offsets are the first
    /// row's plus `i` times the second's minus the first's (in wrapping
    /// `u32` arithmetic, as the shader computes them), and its key count,
    /// lookup, width and interpolation are the first row's (so a run of one
    /// row is regular, and a run of two whose other fields agree). Where
    /// every run of a group is regular, or every segment of its runs (see
    /// `tables::sample::regular_segments`), the shader (override
    /// `REGULAR_SEGMENT`) reads two rows per segment and computes the
    /// others, instead of reading each row: libraries whose tracks have
    /// equal key counts (keys baked at one rate, crowd_rot's 64 keys a
    /// track) are laid out so.
    #[must_use]
    pub(crate) fn is_regular_run(rows: &[GpuSampleRow]) -> bool {
        Self::is_regular_but_search(rows) && Self::steps_evenly(rows, |r| r.search_offset)
    }

    /// [`is_regular_run`](Self::is_regular_run) but for the search offsets,
    /// which may step unevenly: tracks indexed directly among tracks with
    /// bucket tables are so (a bucket table's texels come before a track's
    /// key texels). In a group with run tables the sampler then copies the
    /// rows' key texels in step where its budget allows
    /// (`src/tables/run_keys.rs`, `key_copies`); otherwise the shader (without
    /// override `REGULAR_SEARCH`) computes the rest of each row and reads
    /// its search offset.
    #[must_use]
    pub(crate) fn is_regular_but_search(rows: &[GpuSampleRow]) -> bool {
        let Some(r0) = rows.first() else {
            return true;
        };
        Self::steps_evenly(rows, |r| r.values_offset)
            && Self::steps_evenly(rows, |r| r.output_offset)
            && rows.iter().all(|r| {
                r.key_count == r0.key_count
                    && r.lookup_scale.to_bits() == r0.lookup_scale.to_bits()
                    && r.lookup_origin.to_bits() == r0.lookup_origin.to_bits()
                    && r.width == r0.width
                    && r.interpolation == r0.interpolation
            })
    }

    /// Whether `field` of row `i` is the first row's plus `i` times the
    /// second's minus the first's, in wrapping `u32` arithmetic.
    fn steps_evenly(rows: &[GpuSampleRow], field: impl Fn(&GpuSampleRow) -> u32) -> bool {
        let (Some(r0), Some(r1)) = (rows.first(), rows.get(1)) else {
            return true;
        };
        let (a, b) = (field(r0), field(r1));
        let step = b.wrapping_sub(a);
        rows.iter()
            .zip(0u32..)
            .all(|(r, i)| field(r) == a.wrapping_add(i.wrapping_mul(step)))
    }
}

/// A clip-blocks dispatch's parameters (WGSL `BlockParams`, a uniform; one
/// slot per track group, or per window of its block heads:
/// `tables::sample::HeadWindow`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct GpuBlockParams {
    /// The group's first block in the block table.
    pub(crate) block_base: u32,
    /// The group's blocks this frame.
    pub(crate) block_count: u32,
    /// `f32`s per instance in the output buffer.
    pub(crate) output_stride: u32,
    /// Workgroups in x of the dispatch's grid: workgroup `(x, y)` is
    /// number `w = y * grid_width + x`, which samples run `w % runs` of
    /// the rows of block `w / runs`: `runs = ceil(GROUP_ROWS / ROW_RUN)`
    /// (WGSL overrides: the group's most rows in a clip, and
    /// `plan::block_row_run` of it), rows `[run ROW_RUN, (run + 1)
    /// ROW_RUN)` of the block's clip.
    pub(crate) grid_width: u32,
    /// The first row of the window of the block heads' uniform copies
    /// that the dispatch binds (`DECODE_HEAD` rows from it; 0 where the
    /// heads are not read from them).
    pub(crate) head_first: u32,
    /// Padding to a multiple of 16 bytes.
    pub(crate) _pad0: u32,
    /// Padding.
    pub(crate) _pad1: u32,
    /// Padding.
    pub(crate) _pad2: u32,
}

/// Entries of the clip-blocks plan's block table read from a uniform
/// binding of the same buffer (WGSL `BLOCK_HEAD`; 32 KiB).
pub(crate) const BLOCK_HEAD: u32 = 2048;
/// Entries of its row table read from a uniform binding (WGSL
/// `ROW_HEAD`; 32 KiB).
pub(crate) const ROW_HEAD: u32 = 1024;
/// Rows of a compressed library whose block heads the clip-blocks plan
/// reads from uniform copies on CPU adapters (WGSL `DECODE_HEAD`): per row
/// two `vec4<u32>` in `decode_heads` (`[meta, value step, values offset,
/// key count]`, the value stream's first four offsets) and two in
/// `decode_frames` (a framed stream's `left` and `right`); 64 KiB each.
/// A library of more rows binds a window of them per dispatch
/// (`tables::sample::HeadWindow`).
pub(crate) const DECODE_HEAD: u32 = 2048;
/// The rows a window of the block heads' uniform copies starts at a
/// multiple of: 256 bytes, the largest `min_uniform_buffer_offset_alignment`
/// a device may have (WebGPU's default limit).
pub(crate) const DECODE_HEAD_ALIGN: u32 = 8;

/// The largest key count that gets a bucket table (`2 (n - 1)` texels of
/// 16 bytes each besides the keys' own); longer irregular tracks are
/// searched from their middle key.
pub(crate) const MAX_LOOKUP_KEYS: usize = 1 << 24;

/// A unit quaternion, slerped or normalized after the spline (WGSL
/// `KIND_ROTATION`, [`crate::ValueKind::Rotation`]).
pub(crate) const KIND_ROTATION: u32 = crate::ValueKind::Rotation as u32;

/// [`crate::Interpolation::Step`] as `u32` (WGSL `INTERP_STEP`).
pub(crate) const INTERP_STEP: u32 = crate::Interpolation::Step as u32;

/// [`crate::Interpolation::Linear`] as `u32` (WGSL `INTERP_LINEAR`).
pub(crate) const INTERP_LINEAR: u32 = crate::Interpolation::Linear as u32;

/// [`crate::Interpolation::CubicSpline`] as `u32` (WGSL
/// `INTERP_CUBICSPLINE`).
pub(crate) const INTERP_CUBICSPLINE: u32 = crate::Interpolation::CubicSpline as u32;

/// Group of LINEAR rotation tracks (WGSL `GROUP_SLERP`): sampled by slerp.
pub(crate) const GROUP_SLERP: u32 = 0;
/// Group of CUBICSPLINE tracks other than rotations (WGSL `GROUP_CUBIC`).
pub(crate) const GROUP_CUBIC: u32 = 1;
/// Group of LINEAR translation, scale and weights tracks (WGSL
/// `GROUP_BLEND`), sampled by `(1 - t) a + t b`.
pub(crate) const GROUP_BLEND: u32 = 2;
/// Group of CUBICSPLINE rotation tracks (WGSL `GROUP_CUBIC_ROTATION`):
/// the spline, then a normalization, which the other CUBICSPLINE tracks'
/// dispatch then leaves out.
pub(crate) const GROUP_CUBIC_ROTATION: u32 = 3;
/// Group of STEP tracks (WGSL `GROUP_STEP`): key k's value, which the
/// blend block returns as is; their dispatch reads neither the
/// interpolation nor the next key.
pub(crate) const GROUP_STEP: u32 = 4;
/// The shader's default `GROUP` (WGSL `GROUP_ALL`): one dispatch over every
/// track of a clip, with every block compiled in.
pub(crate) const GROUP_ALL: u32 = 5;
/// The number of track groups. `GpuSampler` records one
/// dispatch per group that has tracks, each with a pipeline compiled for
/// that group only (the WGSL override `GROUP`): the branches of the other
/// groups are compiled out, which SIMD-on-CPU adapters such as lavapipe,
/// which step through both sides of a divergent branch, run much faster.
pub(crate) const SAMPLE_GROUPS: usize = 5;

impl GpuTrack {
    /// The first of the track's key texels in the search texture: its
    /// search texels start with its bucket texels, `2 (key_count - 1)` of
    /// them, when it has a bucket table (`lookup_scale > 0`), with its key
    /// texels otherwise (WGSL `key_texels`).
    #[must_use]
    pub(crate) fn key_texels(&self) -> u32 {
        self.search_offset
            + if self.lookup_scale > 0.0 {
                2 * (self.key_count - 1)
            } else {
                0
            }
    }

    /// The track's group: [`GROUP_SLERP`], [`GROUP_CUBIC`],
    /// [`GROUP_BLEND`], [`GROUP_CUBIC_ROTATION`] or [`GROUP_STEP`].
    #[must_use]
    pub(crate) fn group(&self) -> u32 {
        use crate::kinds::Interpolation;
        if self.interpolation == Interpolation::CubicSpline as u32 {
            if self.kind == KIND_ROTATION {
                GROUP_CUBIC_ROTATION
            } else {
                GROUP_CUBIC
            }
        } else if self.interpolation == Interpolation::Step as u32 {
            GROUP_STEP
        } else if self.kind == KIND_ROTATION {
            GROUP_SLERP
        } else {
            GROUP_BLEND
        }
    }
}

impl GpuClip {
    /// Track group `g`'s (first row, row count) in the track table; (0, 0)
    /// for a group number past the table.
    #[must_use]
    pub(crate) fn group_rows(&self, g: u32) -> (u32, u32) {
        let g = g as usize;
        match (self.group_first.get(g), self.group_count.get(g)) {
            (Some(&f), Some(&n)) => (f, n),
            _ => (0, 0),
        }
    }
}

/// Workgroup size of the sampling kernel (`@workgroup_size` in the shader).
pub const WORKGROUP_SIZE: u32 = 64;

const _: () = assert!(std::mem::size_of::<GpuTrack>() == 44);
const _: () = assert!(std::mem::offset_of!(GpuTrack, lookup_origin) == 36);
const _: () = assert!(std::mem::offset_of!(GpuTrack, lookup_scale) == 32);
const _: () = assert!(std::mem::offset_of!(GpuTrack, key_count) == 4);
const _: () = assert!(std::mem::offset_of!(GpuTrack, output_offset) == 24);
const _: () = assert!(std::mem::size_of::<GpuClip>() == 56);
const _: () = assert!(std::mem::offset_of!(GpuClip, duration) == 12);
const _: () = assert!(std::mem::size_of::<GpuInstance>() == 16);
const _: () = assert!(std::mem::size_of::<GpuParams>() == 16);
const _: () = assert!(std::mem::size_of::<GpuSampleBlock>() == 16);
const _: () = assert!(std::mem::size_of::<GpuSampleRow>() == 32);
const _: () = assert!(std::mem::size_of::<GpuBlockParams>() == 32);

/// The bindings of `shaders/sample.wgsl`, group 0: the one table the bind
/// group layout is built from, checked against the shader by a naga test.
pub(crate) const SAMPLE_BINDINGS: [Binding; 19] = [
    binding(0, "key_windows", BindingKind::TextureUint, 0),
    binding(1, "values", BindingKind::StorageRead, 4),
    binding(3, "clips", BindingKind::StorageRead, size_of::<GpuClip>()),
    binding(
        4,
        "instances",
        BindingKind::StorageRead,
        size_of::<GpuInstance>(),
    ),
    binding(5, "params", BindingKind::Uniform, size_of::<GpuParams>()),
    binding(6, "output", BindingKind::StorageReadWrite, 4),
    binding(7, "clip_groups", BindingKind::TextureUint, 0),
    binding(8, "track_search", BindingKind::TextureUint, 0),
    binding(9, "sorted_instances", BindingKind::StorageRead, 8),
    binding(
        10,
        "blocks_head",
        BindingKind::Uniform,
        BLOCK_HEAD as usize * size_of::<GpuSampleBlock>(),
    ),
    binding(
        11,
        "blocks",
        BindingKind::StorageRead,
        size_of::<GpuSampleBlock>(),
    ),
    binding(
        12,
        "rows_head",
        BindingKind::Uniform,
        ROW_HEAD as usize * size_of::<GpuSampleRow>(),
    ),
    binding(
        13,
        "rows",
        BindingKind::StorageRead,
        size_of::<GpuSampleRow>(),
    ),
    binding(
        14,
        "block_params",
        BindingKind::Uniform,
        size_of::<GpuBlockParams>(),
    ),
    binding(15, "values4", BindingKind::StorageRead, 16),
    binding(16, "output4", BindingKind::StorageReadWrite, 16),
    // A compressed library's packed words (the values buffer again, as
    // vec4<u32>s): `shaders/decode.wgsl`.
    binding(17, "packed", BindingKind::StorageRead, 16),
    // Uniform copies of a compressed library's block heads and frames
    // (`DECODE_HEAD`), read by the clip-blocks plan on CPU adapters.
    binding(
        18,
        "decode_heads",
        BindingKind::Uniform,
        DECODE_HEAD as usize * 32,
    ),
    binding(
        19,
        "decode_frames",
        BindingKind::Uniform,
        DECODE_HEAD as usize * 32,
    ),
];

/// The bindings of [`SAMPLE_BINDINGS`] that `sample_main` uses (the
/// reference and CPU-adapter plans' layout).
pub(crate) const SAMPLE_USES: [u32; 13] = [0, 1, 3, 4, 5, 6, 7, 8, 15, 16, 17, 18, 19];

/// The bindings of [`SAMPLE_BINDINGS`] that `sample_blocks_main` uses (the
/// clip-blocks plan's layout).
pub(crate) const SAMPLE_BLOCKS_USES: [u32; 14] =
    [0, 1, 6, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19];

/// The key search's tables live in 2D textures (`gpu::key_textures::KeyTextures`):
/// element `i` of a table is texel `(i & (w - 1), i >> s)` of a texture
/// `w = 2^s` texels wide. `s` is this, or less on a device whose
/// `max_texture_dimension_2d` is below 4096 (WGSL override `ROW_SHIFT`).
pub(crate) const KEY_TEXTURE_ROW_SHIFT: u32 = 12;

/// The key search's bound on its steps (WGSL `SEARCH_STEPS`, and the CPU
/// twin's): a search ends within 2 + 33 steps for any `u32` key count, so
/// the bound only guards against a loop that never ends.
pub(crate) const SEARCH_STEPS: u32 = 64;
