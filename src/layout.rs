//! The Rust side of `shaders/prelude.wgsl`: `#[repr(C)]` twins of every
//! WGSL struct that crosses the boundary, every constant both languages
//! use, and the binding tables the bind group layouts are built from. This
//! is the flat format that the shaders and the CPU twin ([`crate::cpu`])
//! read.
//!
//! A test (`src/tests/layout.rs`) parses the shaders with naga and compares
//! every struct's size and member offsets, every shared constant's value and
//! every binding with these, so a change on one side only fails
//! `cargo test`, without an adapter.

use std::mem::size_of;

use bytemuck::{Pod, Zeroable};

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
    /// its channels in [`crate::tables::rig::SkinTables`]).
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
    /// (`AnimationLibrary::key_windows`,
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
/// per frame by [`GpuSampler`](crate::gpu::GpuSampler) under
/// [`SamplerPlan::ClipBlocks`](crate::SamplerPlan::ClipBlocks).
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
    /// [`crate::tables::sample::regular_segments`]), the shader (override
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
/// [`crate::tables::sample::HeadWindow`]).
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
    /// [`crate::plan::block_row_run`] of it), rows `[run ROW_RUN, (run + 1)
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
/// ([`crate::tables::sample::HeadWindow`]).
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
/// The number of track groups. [`GpuSampler`](crate::gpu::GpuSampler) records one
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
        use crate::model::track::Interpolation;
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

/// How a binding of a shader is accessed; see [`SAMPLE_BINDINGS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BindingKind {
    /// `var<storage, read>`.
    StorageRead,
    /// `var<storage, read_write>`.
    StorageReadWrite,
    /// `var<uniform>`.
    Uniform,
    /// `texture_2d<f32>` of a non-filterable float format, read with
    /// `textureLoad` only.
    TextureFloat,
    /// `texture_2d<u32>`, read with `textureLoad`.
    TextureUint,
}

/// One `@group(0) @binding(n)` of a shader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Binding {
    /// The binding number.
    pub(crate) binding: u32,
    /// The WGSL variable's name.
    pub(crate) name: &'static str,
    /// How it is accessed.
    pub(crate) kind: BindingKind,
    /// The smallest buffer (or buffer range) the binding accepts, in bytes:
    /// one element of an array, the whole of a uniform; 0 for textures.
    pub(crate) min_size: u64,
}

const fn binding(binding: u32, name: &'static str, kind: BindingKind, min_size: usize) -> Binding {
    Binding {
        binding,
        name,
        kind,
        min_size: min_size as u64,
    }
}

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

/// Words of a compressed track's header in the packed words (WGSL
/// `COMPRESS_HEADER_WORDS`): `[meta, value step, tangent step, dt]`, then
/// the per-component offsets (`crate::compress::format`).
pub(crate) const COMPRESS_HEADER_WORDS: u32 = 4;
/// A compressed stream of quantized vectors (WGSL `ENC_VECTOR`).
pub(crate) const ENC_VECTOR: u32 = 0;
/// A compressed stream of smallest-three rotations (WGSL
/// `ENC_SMALLEST_THREE`).
pub(crate) const ENC_SMALLEST_THREE: u32 = 1;
/// A compressed stream of raw `f32`s (WGSL `ENC_RAW`).
pub(crate) const ENC_RAW: u32 = 2;
/// A compressed stream of rotations in a frame of their own (WGSL
/// `ENC_FRAMED`).
pub(crate) const ENC_FRAMED: u32 = 3;
/// Words of a framed stream's frame after its offsets: two quaternions.
pub(crate) const FRAME_WORDS: u32 = 8;
/// The meta word the decoder takes for a verbatim track, which has no
/// block (WGSL `VERBATIM_META`): raw values and raw tangents, 32 bits a
/// component.
pub(crate) const VERBATIM_META: u32 = ENC_RAW | (32 << 8) | (ENC_RAW << 16) | (32 << 24);

/// The key search's tables live in 2D textures ([`crate::gpu::key_textures::KeyTextures`]):
/// element `i` of a table is texel `(i & (w - 1), i >> s)` of a texture
/// `w = 2^s` texels wide. `s` is this, or less on a device whose
/// `max_texture_dimension_2d` is below 4096 (WGSL override `ROW_SHIFT`).
pub(crate) const KEY_TEXTURE_ROW_SHIFT: u32 = 12;

/// The key search's bound on its steps (WGSL `SEARCH_STEPS`, and the CPU
/// twin's): a search ends within 2 + 33 steps for any `u32` key count, so
/// the bound only guards against a loop that never ends.
pub(crate) const SEARCH_STEPS: u32 = 64;

// ---------------------------------------------------------------- rig

/// A node in the node table (WGSL `Node`): rest TRS, parent and mesh.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub(crate) struct GpuNode {
    /// Rest translation (x, y, z, unused).
    pub(crate) translation: [f32; 4],
    /// Rest rotation (x, y, z, w).
    pub(crate) rotation: [f32; 4],
    /// Rest scale (x, y, z, unused).
    pub(crate) scale: [f32; 4],
    /// Parent node, -1 for a root.
    pub(crate) parent: i32,
    /// Mesh index, -1 for none.
    pub(crate) mesh: i32,
    /// The first joint slot whose joint node this is, -1 for none; the
    /// others follow through [`GpuJoint::next_joint`].
    pub(crate) first_joint: i32,
    /// The nodes from this one on that form a chain, each the child of the
    /// one before it (at least 1: the node itself): the skin pass walks a
    /// rig whose parents come first chain by chain (`skin_main`), with no
    /// parent read for the nodes after a chain's first.
    pub(crate) chain: u32,
}

/// A mesh in the mesh table (WGSL `Mesh`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct GpuMesh {
    /// Offset of the mesh's first weight inside an instance's morph-weight
    /// block.
    pub weights_offset: u32,
    /// Number of morph targets.
    pub target_count: u32,
    /// Offset of its default weights in the default-weights array.
    pub(crate) defaults_offset: u32,
    /// The lowest-index node using the mesh (the node whose mask factor
    /// the mixer applies to its weights), [`NO_NODE`] for none.
    pub(crate) node: u32,
}

/// One action of a character in the mixer's action table (WGSL
/// `MixAction`, `shaders/mix.wgsl`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub(crate) struct GpuMixAction {
    /// The sampler row (instance slot of the sampler's table) holding the
    /// action's sampled values.
    pub(crate) row: u32,
    /// Additive actions: the row of the action's clip sampled at its
    /// reference time; [`NO_ROW`] for a normal action.
    pub(crate) reference_row: u32,
    /// The row's clip.
    pub(crate) clip: u32,
    /// The action's mask, [`NO_MASK`] for none.
    pub(crate) mask: u32,
    /// The action's weight (finite, `>= 0`).
    pub(crate) weight: f32,
}

/// [`GpuMixAction::reference_row`] of a normal (not additive) action
/// (WGSL `NO_ROW`).
pub(crate) const NO_ROW: u32 = u32::MAX;
/// [`GpuMixAction::mask`] of an action without a mask (WGSL `NO_MASK`).
pub(crate) const NO_MASK: u32 = u32::MAX;
/// [`GpuMesh::node`] of a mesh no node uses (WGSL `NO_NODE`).
pub(crate) const NO_NODE: u32 = u32::MAX;
/// The hard maximum of actions per character (WGSL `MAX_ACTIONS`), the
/// model's.
pub use crate::model::mix::MAX_ACTIONS;

/// A joint slot in the joint table (WGSL `Joint`): slot `j` writes joint
/// matrix `j` of an instance's block and uses inverse bind matrix `j`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct GpuJoint {
    /// The joint node.
    pub(crate) node: u32,
    /// The skin's mesh node, -1 for none.
    pub(crate) mesh_node: i32,
    /// The skin this slot belongs to.
    pub(crate) skin: u32,
    /// The next slot (higher index) with the same joint node, -1 for none.
    pub(crate) next_joint: i32,
}

/// The local pose of one node of one instance (WGSL `LocalPose`): what the
/// pose stage writes (`locals`, at `instance * node_count + node`) and the
/// hierarchy stage reads.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub(crate) struct GpuLocalPose {
    /// Translation (x, y, z, 0).
    pub(crate) translation: [f32; 4],
    /// Unit rotation (x, y, z, w); the hierarchy stage does not normalize
    /// it again.
    pub(crate) rotation: [f32; 4],
    /// Scale (x, y, z, 0).
    pub(crate) scale: [f32; 4],
}

/// Dispatch parameters of the morph and skin passes (WGSL `SkinParams`, a
/// uniform).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub struct GpuSkinParams {
    /// Instances in the table.
    pub(crate) instance_count: u32,
    /// Nodes in the rig.
    pub(crate) node_count: u32,
    /// Joint slots per instance (all skins).
    pub(crate) joint_count: u32,
    /// Meshes in the rig.
    pub(crate) mesh_count: u32,
    /// Morph weights per instance (all meshes).
    pub(crate) morph_stride: u32,
    /// The sampler's output stride (floats per instance).
    pub(crate) output_stride: u32,
    /// Clips in the library.
    pub(crate) clip_count: u32,
    /// Skins in the rig.
    pub(crate) skin_count: u32,
    /// Skins `0..4`'s mesh nodes (-1 for none or beyond `skin_count`);
    /// read only when `skin_count <= MAX_FUSED_SKINS`.
    pub(crate) mesh_nodes: [i32; MAX_FUSED_SKINS as usize],
    /// Pointer targets of the library (the mixer's property pass).
    pub(crate) pointer_count: u32,
    /// Floats of blended pointer properties per character.
    pub(crate) property_stride: u32,
    /// Padding (16-byte rows).
    pub(crate) _pad0: u32,
    /// Padding.
    pub(crate) _pad1: u32,
}

/// Rigs with at most this many skins get their joint matrices inside the
/// skin pass's hierarchy walk, from the global still in registers (WGSL
/// `MAX_FUSED_SKINS`); rigs with more take a separate loop over the joint
/// slots that reads the globals back.
pub(crate) const MAX_FUSED_SKINS: u32 = 4;

/// The skin pass writes a node's joint slots in straight code, not a
/// loop, when no node has more than this many
/// ([`SkinTables::max_slots_per_node`](crate::tables::rig::SkinTables::max_slots_per_node);
/// WGSL `MAX_UNROLLED_SLOTS`, and `NODE_SLOTS` in skin.wgsl).
#[cfg(test)]
pub(crate) const MAX_UNROLLED_SLOTS: u32 = 4;

const _: () = assert!(std::mem::size_of::<GpuNode>() == 64);
const _: () = assert!(std::mem::offset_of!(GpuNode, parent) == 48);
const _: () = assert!(std::mem::size_of::<GpuMesh>() == 16);
const _: () = assert!(std::mem::size_of::<GpuJoint>() == 16);
const _: () = assert!(std::mem::size_of::<GpuSkinParams>() == 64);
const _: () = assert!(std::mem::size_of::<GpuLocalPose>() == 48);
const _: () = assert!(std::mem::size_of::<GpuMixAction>() == 20);

/// Workgroup size of the morph and skin kernels (WGSL
/// `SKIN_WORKGROUP_SIZE`).
pub(crate) const SKIN_WORKGROUP_SIZE: u32 = 64;

/// The most nodes a rig may have for the per-node skin strategy (WGSL
/// `MAX_PARALLEL_NODES`: the workgroup holds one matrix per node, 8 KiB
/// for 128).
pub(crate) const MAX_PARALLEL_NODES: u32 = 128;

/// Entries of the node, joint, inverse-bind and pose channel tables that
/// the skin pass reads from uniform buffers (WGSL `UNIFORM_HEAD`): the
/// first 256 of each (at most 16 KiB, within every adapter's
/// `max_uniform_buffer_binding_size`), copied there besides the storage
/// buffers that hold all of them. The fallback adapter reads a uniform
/// once for all lanes, a storage buffer lane by lane.
pub(crate) const UNIFORM_HEAD: u32 = 256;

const HEAD: usize = UNIFORM_HEAD as usize;

/// The bindings declared by `shaders/pose.wgsl` and `pose_nodes.wgsl` (10;
/// `skin_io_wide.wgsl` in the wide skin module), group 0 (checked against
/// the shader by a naga test). The skin module, which is built on
/// pose.wgsl, has these and [`SKIN_BINDINGS`]: [`SKIN_MODULE_BINDINGS`].
pub(crate) const POSE_BINDINGS: [Binding; 12] = [
    binding(
        0,
        "params",
        BindingKind::Uniform,
        size_of::<GpuSkinParams>(),
    ),
    binding(1, "nodes", BindingKind::StorageRead, size_of::<GpuNode>()),
    binding(2, "channels", BindingKind::StorageRead, 16),
    // The sampler's output, as vec4s (whole ones: `GpuSampler` pads it).
    binding(3, "samples", BindingKind::StorageRead, 16),
    binding(
        4,
        "instances",
        BindingKind::StorageRead,
        size_of::<GpuInstance>(),
    ),
    binding(
        5,
        "locals",
        BindingKind::StorageReadWrite,
        size_of::<GpuLocalPose>(),
    ),
    binding(6, "meshes", BindingKind::StorageRead, size_of::<GpuMesh>()),
    binding(7, "default_weights", BindingKind::StorageRead, 4),
    binding(8, "morph_channels", BindingKind::StorageRead, 4),
    binding(9, "morph_weights", BindingKind::StorageReadWrite, 4),
    binding(
        10,
        "nodes_head",
        BindingKind::Uniform,
        HEAD * size_of::<GpuNode>(),
    ),
    binding(11, "channels_head", BindingKind::Uniform, HEAD * 16),
];

/// The bindings declared by `shaders/skin.wgsl` and the file before it
/// (`skin_io.wgsl` or `skin_io_wide.wgsl`: 12, 15 and 16), group 0,
/// numbered after [`POSE_BINDINGS`].
pub(crate) const SKIN_BINDINGS: [Binding; 6] = [
    // Matrices, column by column: written and read as the first three rows
    // of each column (vec3s of stride 16; the affine last row is filled in
    // when the buffer is created), or two columns per vec4<u64> (32 bytes:
    // the minimum size of both).
    binding(12, "globals", BindingKind::StorageReadWrite, 32),
    binding(
        13,
        "joints",
        BindingKind::StorageRead,
        size_of::<GpuJoint>(),
    ),
    binding(14, "inverse_binds", BindingKind::StorageRead, 64),
    // Like `globals`; each matrix's last row is its inverse bind's.
    binding(15, "joint_matrices", BindingKind::StorageReadWrite, 32),
    binding(16, "inverse_binds_head", BindingKind::Uniform, HEAD * 64),
    binding(
        17,
        "joints_head",
        BindingKind::Uniform,
        HEAD * size_of::<GpuJoint>(),
    ),
];

/// Every binding of the skin module (pose.wgsl's, then skin.wgsl's): the
/// table its passes' layouts are built from.
pub(crate) const SKIN_MODULE_BINDINGS: [Binding; POSE_BINDINGS.len() + SKIN_BINDINGS.len()] = {
    let mut out = [POSE_BINDINGS[0]; POSE_BINDINGS.len() + SKIN_BINDINGS.len()];
    let mut k = 0;
    while k < POSE_BINDINGS.len() {
        out[k] = POSE_BINDINGS[k];
        k += 1;
    }
    while k < out.len() {
        out[k] = SKIN_BINDINGS[k - POSE_BINDINGS.len()];
        k += 1;
    }
    out
};

/// The bindings declared by `shaders/mix.wgsl`, group 0, numbered after
/// [`SKIN_BINDINGS`]. The mix module, built on pose.wgsl, has
/// [`POSE_BINDINGS`] and these: [`MIX_MODULE_BINDINGS`].
pub(crate) const MIX_BINDINGS: [Binding; 7] = [
    binding(
        18,
        "mix_actions",
        BindingKind::StorageRead,
        size_of::<GpuMixAction>(),
    ),
    binding(19, "characters", BindingKind::StorageRead, 8),
    binding(20, "masks", BindingKind::StorageRead, 4),
    binding(21, "pointer_channels", BindingKind::StorageRead, 4),
    binding(22, "pointer_targets", BindingKind::StorageRead, 16),
    binding(23, "pointer_rest", BindingKind::StorageRead, 4),
    binding(24, "properties", BindingKind::StorageReadWrite, 4),
];

/// Every binding of the mix module (pose.wgsl's, then mix.wgsl's).
pub(crate) const MIX_MODULE_BINDINGS: [Binding; POSE_BINDINGS.len() + MIX_BINDINGS.len()] = {
    let mut out = [POSE_BINDINGS[0]; POSE_BINDINGS.len() + MIX_BINDINGS.len()];
    let mut k = 0;
    while k < POSE_BINDINGS.len() {
        out[k] = POSE_BINDINGS[k];
        k += 1;
    }
    while k < out.len() {
        out[k] = MIX_BINDINGS[k - POSE_BINDINGS.len()];
        k += 1;
    }
    out
};

/// WGSL of the prelude every kernel is built from: the structs twinned
/// here and the constants both languages use (`shaders/prelude.wgsl`).
pub const PRELUDE_WGSL: &str = include_str!("../shaders/prelude.wgsl");

/// WGSL source of the sampling stage: the prelude, `quat.wgsl`,
/// `sample.wgsl`, `decode.wgsl` (compressed tracks, compiled in only where
/// the override `COMPRESSED` is set).
pub(crate) const SAMPLE_WGSL: &str = concat!(
    include_str!("../shaders/prelude.wgsl"),
    "\n",
    include_str!("../shaders/quat.wgsl"),
    "\n",
    include_str!("../shaders/sample.wgsl"),
    "\n",
    include_str!("../shaders/decode.wgsl")
);

/// WGSL of the pose stage: `prelude.wgsl`, `quat.wgsl`, `pose_nodes.wgsl`,
/// `pose.wgsl` (entry points `pose_main` and `morph_main`).
pub(crate) const POSE_WGSL: &str = concat!(
    include_str!("../shaders/prelude.wgsl"),
    "\n",
    include_str!("../shaders/quat.wgsl"),
    "\n",
    include_str!("../shaders/pose_nodes.wgsl"),
    "\n",
    include_str!("../shaders/pose.wgsl")
);

/// WGSL of the hierarchy and joint-matrix stage: `prelude.wgsl`,
/// `quat.wgsl`, `pose_nodes.wgsl`, `pose.wgsl` (whose `local_pose` the
/// fused kernels call, and whose bindings are this module's too),
/// `skin_io.wgsl` (the matrix stores and inverse-bind reads), `skin.wgsl`
/// (entry points `hierarchy_main`, `skin_main` and `skin_nodes_main`; see
/// [`SkinStrategy`](crate::plan::SkinStrategy)).
pub(crate) const SKIN_WGSL: &str = concat!(
    include_str!("../shaders/prelude.wgsl"),
    "\n",
    include_str!("../shaders/quat.wgsl"),
    "\n",
    include_str!("../shaders/pose_nodes.wgsl"),
    "\n",
    include_str!("../shaders/pose.wgsl"),
    "\n",
    include_str!("../shaders/skin_io.wgsl"),
    "\n",
    include_str!("../shaders/skin.wgsl")
);

/// [`SKIN_WGSL`] with `skin_io_wide.wgsl` in place of `pose_nodes.wgsl` and
/// `skin_io.wgsl`: the matrices written and read two columns per
/// `vec4<u64>`, the node and inverse-bind tables' uniform copies read 64
/// bits a component. Needs `SHADER_INT64`; used on CPU adapters that have
/// it (`GpuSkinner::wide_accesses`).
pub(crate) const SKIN_WIDE_WGSL: &str = concat!(
    include_str!("../shaders/prelude.wgsl"),
    "\n",
    include_str!("../shaders/quat.wgsl"),
    "\n",
    include_str!("../shaders/pose.wgsl"),
    "\n",
    include_str!("../shaders/skin_io_wide.wgsl"),
    "\n",
    include_str!("../shaders/skin.wgsl")
);

/// WGSL of the mixer's pose stage: `prelude.wgsl`, `quat.wgsl`,
/// `pose_nodes.wgsl`, `pose.wgsl` (its bindings and table readers),
/// `mix.wgsl` (entry points `mix_main` and `mix_morph_main`).
pub(crate) const MIX_WGSL: &str = concat!(
    include_str!("../shaders/prelude.wgsl"),
    "\n",
    include_str!("../shaders/quat.wgsl"),
    "\n",
    include_str!("../shaders/pose_nodes.wgsl"),
    "\n",
    include_str!("../shaders/pose.wgsl"),
    "\n",
    include_str!("../shaders/mix.wgsl")
);
