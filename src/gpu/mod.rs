//! The GPU side: [`GpuSampler`] (pipelines, buffers, bind groups, recording,
//! blocking readback), [`ReadbackRing`] (readback that does not stall the
//! next frame) and a [`headless`] device helper for tools and tests.

mod animator;
mod bind;
mod blocks;
mod crowd;
pub mod headless;
mod key_textures;
mod limits;
pub mod readback;
pub mod skin;

pub use animator::{Animator, Poses};
pub use crowd::{ClipRef, Crowd, CrowdInstance, CrowdPoses, ModelId};
#[doc(hidden)]
pub use key_textures::{clip_group_texels, track_search_texels, KeyTextures};
pub(crate) use limits::check_device;
pub use limits::{optional_features, required_features, required_limits};
pub use readback::{ReadbackFrame, ReadbackRing, RingError, Ticket};

use std::num::NonZeroU64;

use crate::error::{Error, Result};
use crate::instance::{resolve_instances_into, Instance};
use crate::layout::{
    GpuBlockParams, GpuInstance, GpuParams, GpuSampleBlock, GpuSampleRow, BLOCK_HEAD, GROUP_ALL,
    GROUP_SLERP, ROW_HEAD, SAMPLE_BINDINGS, SAMPLE_BLOCKS_USES, SAMPLE_GROUPS, SAMPLE_USES,
    SAMPLE_WGSL, WORKGROUP_SIZE,
};
use crate::library::AnimationLibrary;
use crate::plan::SamplerPlan;
use blocks::{max_blocks, ClipSort};

/// The workgroup grid `(x, y)` of a dispatch of `invocations` invocations
/// in workgroups of `workgroup_size`: one row while the count fits in
/// `max_per_dim`, then rows of `max_per_dim` workgroups (the shaders
/// rebuild the flat index from the row width). `(0, 0)` for none.
#[must_use]
pub fn dispatch_grid(invocations: u32, workgroup_size: u32, max_per_dim: u32) -> (u32, u32) {
    let workgroups = invocations.div_ceil(workgroup_size);
    let x = workgroups.min(max_per_dim);
    let y = if x == 0 { 0 } else { workgroups.div_ceil(x) };
    (x, y)
}

/// Runs `f` inside validation and out-of-memory error scopes and turns what
/// they catch into [`Error::Gpu`].
pub(crate) fn scoped<T>(
    device: &wgpu::Device,
    during: &'static str,
    f: impl FnOnce() -> T,
) -> Result<T> {
    let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let value = f();
    let v = pollster::block_on(validation.pop());
    let o = pollster::block_on(oom.pop());
    match v.or(o) {
        Some(e) => Err(Error::Gpu {
            during,
            message: e.to_string(),
        }),
        None => Ok(value),
    }
}

/// `wgpu::util::DeviceExt::create_buffer_init` without its panic: wgpu's
/// helper `expect`s the mapping of a buffer created with
/// `mapped_at_creation`, and that mapping fails when the device is lost or
/// the buffer could not be allocated. Here that is an [`Error::Gpu`].
pub(crate) fn buffer_init(
    device: &wgpu::Device,
    label: &'static str,
    contents: &[u8],
    usage: wgpu::BufferUsages,
) -> Result<wgpu::Buffer> {
    buffer_init_aligned(device, label, contents, usage, wgpu::COPY_BUFFER_ALIGNMENT)
}

/// [`buffer_init`] with the size rounded up to a multiple of `align`
/// (itself a multiple of `wgpu::COPY_BUFFER_ALIGNMENT`), zero-padded.
pub(crate) fn buffer_init_aligned(
    device: &wgpu::Device,
    label: &'static str,
    contents: &[u8],
    usage: wgpu::BufferUsages,
    align: u64,
) -> Result<wgpu::Buffer> {
    let size = (contents.len() as u64).div_ceil(align).max(1) * align;
    buffer_filled(device, label, size, usage, |view| {
        view.slice(..contents.len()).copy_from_slice(contents);
    })
}

/// A buffer of `size` bytes, mapped at creation, written by `fill` (bytes
/// it leaves are zero), then unmapped.
pub(crate) fn buffer_filled(
    device: &wgpu::Device,
    label: &'static str,
    size: u64,
    usage: wgpu::BufferUsages,
    fill: impl FnOnce(&mut wgpu::BufferViewMut),
) -> Result<wgpu::Buffer> {
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage,
        mapped_at_creation: true,
    });
    {
        let mut view = buffer.get_mapped_range_mut(..).map_err(|e| Error::Gpu {
            during: label,
            message: e.to_string(),
        })?;
        fill(&mut view);
    }
    buffer.unmap();
    Ok(buffer)
}

/// Refuses a storage (or uniform) buffer of `bytes` past the device's
/// binding-size or buffer-size limit, naming the limit.
pub(crate) fn check_size(
    limits: &wgpu::Limits,
    what: &'static str,
    bytes: u64,
    is_uniform: bool,
) -> Result<()> {
    let (limit_name, limit) = if is_uniform {
        (
            "max_uniform_buffer_binding_size",
            limits.max_uniform_buffer_binding_size,
        )
    } else {
        (
            "max_storage_buffer_binding_size",
            limits.max_storage_buffer_binding_size,
        )
    };
    if bytes > limit {
        return Err(Error::LimitExceeded {
            what,
            needed: bytes,
            limit_name,
            limit,
        });
    }
    if bytes > limits.max_buffer_size {
        return Err(Error::LimitExceeded {
            what,
            needed: bytes,
            limit_name: "max_buffer_size",
            limit: limits.max_buffer_size,
        });
    }
    Ok(())
}

/// Layout entry with which another pipeline binds an output buffer
/// read-only, `min_size` bytes at least: the sampler's
/// ([`GpuSampler::output_buffer`], `var<storage, read> ...: array<f32>`,
/// `min_size` 4, for example in a skinning vertex shader) or a skinner's
/// ([`skin::GpuSkinner::joint_matrix_buffer`] and
/// [`skin::GpuSkinner::global_buffer`]: `array<mat4x4<f32>>`, 64;
/// [`skin::GpuSkinner::morph_weight_buffer`]: `array<f32>`, 4).
#[must_use]
pub fn output_layout_entry(
    binding: u32,
    visibility: wgpu::ShaderStages,
    min_size: u64,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only: true },
            has_dynamic_offset: false,
            min_binding_size: NonZeroU64::new(min_size),
        },
        count: None,
    }
}

/// Samples an [`AnimationLibrary`] for many instances with one compute
/// dispatch.
///
/// Keys, values, the track and clip tables are uploaded once by
/// [`GpuSampler::new`] (the key search's tables as textures:
/// [`KeyTextures`]). Per frame, [`set_instances`](Self::set_instances)
/// writes the small instance table (one `queue.write_buffer`) and
/// [`record`](Self::record) records the dispatch into the caller's encoder.
/// Results stay on the GPU in [`output_buffer`](Self::output_buffer)
/// (layout: see [`AnimationLibrary`]); [`read_back`](Self::read_back) is a
/// separate, optional step.
///
/// The sampler never creates a device: it uses the caller's.
///
/// How the work is laid out is its [`SamplerPlan`]: one dispatch over
/// every track ([`SamplerPlan::Reference`], GPUs) or one per track group
/// ([`SamplerPlan::CpuAdapter`] and [`SamplerPlan::ClipBlocks`], the CPU
/// fallback adapters), all in the same compute pass. Whatever the plan,
/// instance `i`'s outputs are at `i * output_stride`.
#[derive(Debug)]
pub struct GpuSampler {
    groups: Vec<GroupDispatch>,
    /// Kept alive with the bind groups that name its views.
    _keys: KeyTextures,
    instances: wgpu::Buffer,
    params: wgpu::Buffer,
    params_stride: usize,
    params_bytes: Vec<u8>,
    plan: SamplerPlan,
    output: wgpu::Buffer,
    library: AnimationLibrary,
    capacity: u32,
    instance_count: u32,
    max_workgroups_per_dim: u32,
    scratch: Vec<GpuInstance>,
    /// [`SamplerPlan::ClipBlocks`]: the sort and its tables.
    blocks: Option<BlockTables>,
    /// [`SamplerPlan::ClipBlocks`]: the runs of LINEAR rotations whose
    /// values are stored key by key (`src/run_values.rs`).
    interleaved_runs: usize,
}

/// What [`SamplerPlan::ClipBlocks`] adds: the host's sort, the sorted
/// instance and block tables it writes each frame, and the dispatches'
/// parameters (one uniform slot per group, at `params_stride`).
#[derive(Debug)]
struct BlockTables {
    sort: ClipSort,
    sorted: wgpu::Buffer,
    blocks: wgpu::Buffer,
    params: wgpu::Buffer,
    params_bytes: Vec<u8>,
}

/// The dispatch of one track group: its pipeline (WGSL override `GROUP`),
/// its bind group (whose `params` is the group's slot of the params
/// buffer) and its grid for the current instance table.
#[derive(Debug)]
struct GroupDispatch {
    group: u32,
    per_instance: u32,
    /// The rows one invocation samples (`ROW_RUN`): the clip-blocks plan's
    /// run, the CPU-adapter plan's pair, 1 in the reference plan.
    row_run: u32,
    /// The clip-blocks plan's run keys for this group.
    run_keys: crate::run_keys::GroupRunKeys,
    /// The clip-blocks plan's regular segments of its runs, whose rows
    /// are computed from their first two (`REGULAR_SEGMENT`, 0 where the
    /// rows are read), and whether their search offsets are too
    /// (`REGULAR_SEARCH`): [`crate::plan::regular_segments`].
    regular: (u32, bool),
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    workgroups: (u32, u32, u32),
}

impl GpuSampler {
    /// Uploads `library` (buffers created with their contents; the key
    /// search's textures written through `queue`) and builds the pipelines
    /// for up to `max_instances` instances per dispatch.
    ///
    /// # Errors
    /// [`Error::DeviceLimit`] when the device was created with lower limits
    /// than [`crate::required_limits`]; [`Error::LimitExceeded`] when a
    /// buffer would pass the device's storage-binding or buffer size limit,
    /// or the dispatch its workgroup-count limit;
    /// [`Error::TextureRowsExceeded`] when a key texture would pass
    /// `max_texture_dimension_2d`; [`Error::Gpu`] when wgpu reports an
    /// error (caught with error scopes).
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        library: &AnimationLibrary,
        max_instances: u32,
    ) -> Result<Self> {
        Self::with_plan(device, queue, library, max_instances, SamplerPlan::Auto)
    }

    /// [`new`](Self::new) with the [`SamplerPlan`] chosen by the caller
    /// ([`plan`](Self::plan) tells which one `Auto` picked). Every plan
    /// gives the same results.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn with_plan(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        library: &AnimationLibrary,
        max_instances: u32,
        plan: SamplerPlan,
    ) -> Result<Self> {
        check_device(device)?;
        let requested = plan;
        let capacity = max_instances.max(1);
        let mut plan = plan.resolve_for(&device.adapter_info(), library, capacity);
        let limits = device.limits();
        let max_dim = limits.max_compute_workgroups_per_dimension.max(1);
        // The clip-blocks plan: per group up to max_blocks blocks, a
        // workgroup per block and run of the group's rows
        // (plan::block_row_run), over x and then y; the largest group's.
        let group_blocks = max_blocks(capacity, library.clip_table().len());
        let block_workgroups = (0..SAMPLE_GROUPS)
            .map(|g| {
                let rows = library.group_tracks_per_instance(g);
                u64::from(group_blocks) * u64::from(rows.div_ceil(crate::plan::block_row_run(rows)))
            })
            .max()
            .unwrap_or(0);
        let block_grid_fits =
            block_workgroups <= (u64::from(max_dim) * u64::from(max_dim)).min(u64::from(u32::MAX));
        if requested == SamplerPlan::Auto && plan == SamplerPlan::ClipBlocks && !block_grid_fits {
            // A device with few workgroups per dimension: the CPU-adapter
            // plan needs fewer (64 invocations of one instance each).
            plan = SamplerPlan::CpuAdapter;
        }
        // (group, invocations per instance) of each dispatch.
        let dispatches: Vec<(u32, u32)> = match plan {
            SamplerPlan::CpuAdapter | SamplerPlan::ClipBlocks => (0..SAMPLE_GROUPS)
                .map(|g| (g as u32, library.group_tracks_per_instance(g)))
                .filter(|&(_, per)| per > 0)
                .collect(),
            _ => vec![(GROUP_ALL, library.tracks_per_instance())],
        };
        let stride = u64::from(library.output_stride());
        let values_bytes = library.values().len() as u64 * 4;
        let clips_bytes = std::mem::size_of_val(library.clip_table()) as u64;
        let instances_bytes = u64::from(capacity) * std::mem::size_of::<GpuInstance>() as u64;
        // Whole vec4s: also bound as `output4`.
        let output_bytes = (u64::from(capacity) * stride * 4).div_ceil(16).max(1) * 16;
        check_size(&limits, "key values", values_bytes, false)?;
        check_size(&limits, "clip table", clips_bytes, false)?;
        check_size(&limits, "instance table", instances_bytes, false)?;
        check_size(&limits, "output buffer", output_bytes, false)?;
        let most = dispatches.iter().map(|&(_, per)| per).max().unwrap_or(0);
        let invocations = u64::from(capacity) * u64::from(most);
        let max_invocations = u64::from(max_dim) * u64::from(max_dim) * u64::from(WORKGROUP_SIZE);
        // (The clip-blocks plan's grid is checked below, by its own shape.)
        if plan != SamplerPlan::ClipBlocks && invocations > max_invocations.min(u64::from(u32::MAX))
        {
            return Err(Error::LimitExceeded {
                what: "dispatch (instances x tracks per instance)",
                needed: invocations,
                limit_name: "max_compute_workgroups_per_dimension",
                limit: u64::from(max_dim),
            });
        }

        let clip_blocks = plan == SamplerPlan::ClipBlocks;
        let block_entries = u64::from(group_blocks) * dispatches.len() as u64;
        let block_bytes = (block_entries * std::mem::size_of::<GpuSampleBlock>() as u64)
            .max(u64::from(BLOCK_HEAD) * std::mem::size_of::<GpuSampleBlock>() as u64);
        let rows_bytes = (library.tracks().len() as u64
            * std::mem::size_of::<GpuSampleRow>() as u64)
            .max(u64::from(ROW_HEAD) * std::mem::size_of::<GpuSampleRow>() as u64);
        if clip_blocks {
            check_size(&limits, "clip-blocks block table", block_bytes, false)?;
            check_size(&limits, "clip-blocks row table", rows_bytes, false)?;
            check_size(
                &limits,
                "sorted instance table",
                u64::from(capacity) * 8,
                false,
            )?;
            if !block_grid_fits {
                return Err(Error::LimitExceeded {
                    what: "clip-blocks dispatch (blocks x row runs per block)",
                    needed: block_workgroups,
                    limit_name: "max_compute_workgroups_per_dimension",
                    limit: u64::from(max_dim),
                });
            }
        }

        // One params slot per group, at the uniform offset alignment.
        let params_stride = (limits.min_uniform_buffer_offset_alignment as usize)
            .max(std::mem::size_of::<GpuParams>());

        // The clip-blocks plan's run keys (crate::run_keys): per group how
        // its rows find their keys, their texels after the library's.
        let run_base = library.search_keys().len() as u64;
        let run_keys = if plan == SamplerPlan::ClipBlocks {
            let runs: Vec<(u32, u32)> = dispatches
                .iter()
                .map(|&(g, per)| (g, crate::plan::block_row_run(per)))
                .collect();
            crate::run_keys::build(library, &runs, run_base, KeyTextures::capacity(device))
        } else {
            crate::run_keys::RunKeyTexels::default()
        };
        // The clip-blocks plan's LINEAR rotation runs with shared key
        // times, stored key by key (crate::run_values), where every run of
        // the group shares them (run keys 1: key k + 1 is clamped to the
        // last key, never read past a run's region).
        let slerp = dispatches.iter().position(|&(g, _)| g == GROUP_SLERP);
        let interleaved = match slerp {
            Some(slot)
                if plan == SamplerPlan::ClipBlocks
                    && run_keys.groups.get(slot).map(|k| k.mode)
                        == Some(crate::run_keys::RunKeys::Shared) =>
            {
                let run = crate::plan::block_row_run(dispatches[slot].1);
                crate::run_values::interleaved_runs(library, run)
            }
            _ => Vec::new(),
        };
        // The clip-blocks plan's row table, and per dispatch the segments
        // of its runs whose rows the shader computes from their first two
        // (crate::plan::regular_segments): rows of groups with run tables
        // (run keys 2 and 3) name their key texels directly
        // (GpuSampleRow::of_key_texels), and where those step unevenly in
        // such a segment, copies of them do, after the run tables
        // (crate::run_keys::key_copies).
        let mut extra = run_keys.texels;
        // The library's search texels, built here once where copies need
        // them.
        let mut windows: Option<Vec<[u32; 4]>> = None;
        let (rows, regular) = if plan == SamplerPlan::ClipBlocks {
            let key_groups: Vec<u32> = dispatches
                .iter()
                .zip(&run_keys.groups)
                .filter(|(_, k)| k.mode as u32 >= crate::run_keys::RunKeys::Table as u32)
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
            for run in &interleaved {
                run.point_rows(&mut rows);
            }
            let segments = |rows: &[GpuSampleRow], g: u32, run: u32| {
                let runs: Option<Vec<&[GpuSampleRow]>> = crate::run_keys::runs_of(library, g, run)
                    .iter()
                    .map(|&(first, r)| rows.get(first..first + r.len()))
                    .collect();
                runs.map_or((0, true), |runs| crate::plan::regular_segments(&runs, run))
            };
            let mut regular = Vec::with_capacity(dispatches.len());
            for &(g, per) in &dispatches {
                let run = crate::plan::block_row_run(per);
                let mut found = segments(&rows, g, run);
                if found.0 > 0 && !found.1 && key_groups.contains(&g) {
                    let windows = windows.get_or_insert_with(|| library.key_windows());
                    let base = run_base + extra.len() as u64;
                    if let Some(copies) = crate::run_keys::key_copies(
                        library,
                        windows,
                        &mut rows,
                        g,
                        run,
                        base,
                        KeyTextures::capacity(device),
                    ) {
                        extra.extend_from_slice(&copies);
                        found = segments(&rows, g, run);
                    }
                }
                regular.push(found);
            }
            (rows, regular)
        } else {
            (Vec::new(), Vec::new())
        };
        let mut texels = windows.unwrap_or_else(|| library.key_windows());
        texels.extend_from_slice(&extra);
        let keys = KeyTextures::with_texels(device, queue, library, texels)?;
        scoped(device, "GpuSampler::new", || {
            let storage = |label: &'static str, contents: &[u8]| {
                buffer_init(device, label, contents, wgpu::BufferUsages::STORAGE)
            };
            // Whole vec4s: also bound as `values4`; and one vec4 of zeros
            // after the last value, which the clip-blocks plan's exact run
            // tables read (unused) past a last key instead of reading the
            // key count to clamp (slerp_pair).
            let value_bytes: &[u8] = bytemuck::cast_slice(library.values());
            let values = buffer_filled(
                device,
                "keyframe-gpu.values",
                (value_bytes.len() as u64).div_ceil(16) * 16 + 16,
                wgpu::BufferUsages::STORAGE,
                |view| {
                    view.slice(..value_bytes.len()).copy_from_slice(value_bytes);
                    for run in &interleaved {
                        run.write(value_bytes, |at, bytes| {
                            view.slice(at..at + bytes.len()).copy_from_slice(bytes);
                        });
                    }
                },
            )?;
            let clips = storage(
                "keyframe-gpu.clips",
                bytemuck::cast_slice(library.clip_table()),
            )?;
            let instances = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("keyframe-gpu.instances"),
                size: instances_bytes,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let params = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("keyframe-gpu.params"),
                size: (params_stride * dispatches.len().max(1)) as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let output = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("keyframe-gpu.output"),
                size: output_bytes,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let uses: &[u32] = if clip_blocks {
                &SAMPLE_BLOCKS_USES
            } else {
                &SAMPLE_USES
            };
            let bind_group_layout =
                bind::layout(device, "keyframe-gpu.sample.layout", &SAMPLE_BINDINGS, uses)?;
            // The clip-blocks plan's tables: the sorted instances and the
            // blocks (written per frame), the rows (once), each bound as
            // storage and, for its head, as a uniform.
            let block_tables = if clip_blocks {
                let mut row_bytes = vec![0u8; rows_bytes as usize];
                let used = std::mem::size_of_val(rows.as_slice());
                row_bytes[..used].copy_from_slice(bytemuck::cast_slice(&rows));
                let rows = buffer_init(
                    device,
                    "keyframe-gpu.sample.rows",
                    &row_bytes,
                    wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::UNIFORM,
                )?;
                let sorted = device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("keyframe-gpu.sample.sorted_instances"),
                    size: u64::from(capacity) * 8,
                    usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                let blocks = device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("keyframe-gpu.sample.blocks"),
                    size: block_bytes,
                    usage: wgpu::BufferUsages::STORAGE
                        | wgpu::BufferUsages::UNIFORM
                        | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                let params = device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("keyframe-gpu.sample.block_params"),
                    size: (params_stride * dispatches.len().max(1)) as u64,
                    usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                Some((rows, sorted, blocks, params, regular))
            } else {
                None
            };
            let blocks_in_uniform = block_entries <= u64::from(BLOCK_HEAD);
            let rows_in_uniform = library.tracks().len() as u64 <= u64::from(ROW_HEAD);
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("keyframe-gpu.sample.wgsl"),
                source: wgpu::ShaderSource::Wgsl(SAMPLE_WGSL.into()),
            });
            let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("keyframe-gpu.sample.pipeline_layout"),
                bind_group_layouts: &[Some(&bind_group_layout)],
                immediate_size: 0,
            });
            // The reference plan searches every key; the CPU-adapter plan
            // compiles in the lookup paths the library's tracks take.
            let tuned = plan != SamplerPlan::Reference;
            let has_table = tuned && library.tracks().iter().any(|t| t.lookup_scale > 0.0);
            let has_direct = tuned && library.tracks().iter().any(|t| t.lookup_scale < 0.0);
            let flag = |b: bool| if b { 1.0 } else { 0.0 };
            let mut groups = Vec::with_capacity(dispatches.len());
            for (slot, &(g, per_instance)) in dispatches.iter().enumerate() {
                let row_run = if clip_blocks {
                    crate::plan::block_row_run(per_instance)
                } else if tuned {
                    crate::plan::invocation_rows(g, per_instance)
                } else {
                    1
                };
                let run_mode = run_keys
                    .groups
                    .get(slot)
                    .copied()
                    .unwrap_or(crate::run_keys::GroupRunKeys::PER_ROW);
                // Only sample_run (run keys) computes rows.
                let regular = block_tables
                    .as_ref()
                    .and_then(|t| t.4.get(slot).copied())
                    .filter(|_| run_mode.mode != crate::run_keys::RunKeys::PerRow)
                    .unwrap_or((0, true));
                let params_binding = wgpu::BufferBinding {
                    buffer: &params,
                    offset: (slot * params_stride) as u64,
                    size: NonZeroU64::new(std::mem::size_of::<GpuParams>() as u64),
                };
                // Paired with SAMPLE_BINDINGS by number; the one uniform is
                // this group's slot of the params buffer.
                let bind_group = match &block_tables {
                    None => bind::group(
                        device,
                        "keyframe-gpu.sample.bind_group",
                        &bind_group_layout,
                        &SAMPLE_USES,
                        &[
                            (0, wgpu::BindingResource::TextureView(keys.key_windows())),
                            (1, values.as_entire_binding()),
                            (3, clips.as_entire_binding()),
                            (4, instances.as_entire_binding()),
                            (5, wgpu::BindingResource::Buffer(params_binding)),
                            (6, output.as_entire_binding()),
                            (7, wgpu::BindingResource::TextureView(keys.clip_groups())),
                            (8, wgpu::BindingResource::TextureView(keys.track_search())),
                            (15, values.as_entire_binding()),
                            (16, output.as_entire_binding()),
                        ],
                    )?,
                    Some((rows, sorted, blocks, block_params, _)) => {
                        let head = |buffer, bytes: u64| {
                            wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer,
                                offset: 0,
                                size: NonZeroU64::new(bytes),
                            })
                        };
                        let block_head =
                            u64::from(BLOCK_HEAD) * std::mem::size_of::<GpuSampleBlock>() as u64;
                        let row_head =
                            u64::from(ROW_HEAD) * std::mem::size_of::<GpuSampleRow>() as u64;
                        let slot_binding = wgpu::BufferBinding {
                            buffer: block_params,
                            offset: (slot * params_stride) as u64,
                            size: NonZeroU64::new(std::mem::size_of::<GpuBlockParams>() as u64),
                        };
                        bind::group(
                            device,
                            "keyframe-gpu.sample.blocks_bind_group",
                            &bind_group_layout,
                            &SAMPLE_BLOCKS_USES,
                            &[
                                (0, wgpu::BindingResource::TextureView(keys.key_windows())),
                                (1, values.as_entire_binding()),
                                (6, output.as_entire_binding()),
                                (9, sorted.as_entire_binding()),
                                (10, head(blocks, block_head)),
                                (11, blocks.as_entire_binding()),
                                (12, head(rows, row_head)),
                                (13, rows.as_entire_binding()),
                                (14, wgpu::BindingResource::Buffer(slot_binding)),
                                (15, values.as_entire_binding()),
                                (16, output.as_entire_binding()),
                            ],
                        )?
                    }
                };
                let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some("keyframe-gpu.sample"),
                    layout: Some(&pipeline_layout),
                    module: &module,
                    entry_point: Some(if clip_blocks {
                        "sample_blocks_main"
                    } else {
                        "sample_main"
                    }),
                    compilation_options: wgpu::PipelineCompilationOptions {
                        constants: &[
                            ("GROUP", f64::from(g)),
                            ("ROW_SHIFT", f64::from(keys.row_shift())),
                            ("HAS_TABLE", flag(has_table)),
                            ("HAS_DIRECT", flag(has_direct)),
                            ("BLOCKS_IN_UNIFORM", flag(blocks_in_uniform)),
                            ("ROWS_IN_UNIFORM", flag(rows_in_uniform)),
                            ("GROUP_ROWS", f64::from(per_instance.max(1))),
                            ("ROW_RUN", f64::from(row_run)),
                            ("RUN_KEYS", f64::from(run_mode.mode as u32)),
                            ("TABLE_BITS", f64::from(run_mode.bits.max(8))),
                            ("TABLE_TEXELS", f64::from(run_mode.table_texels.max(1))),
                            ("RUN_BASE", run_base as f64),
                            (
                                "ALIGNED4",
                                flag(tuned && crate::plan::vec4_group(library, g)),
                            ),
                            (
                                "INTERLEAVED",
                                flag(g == GROUP_SLERP && !interleaved.is_empty()),
                            ),
                            ("REGULAR_SEGMENT", f64::from(regular.0)),
                            ("REGULAR_SEARCH", flag(regular.1)),
                        ],
                        ..Default::default()
                    },
                    cache: None,
                });
                groups.push(GroupDispatch {
                    group: g,
                    per_instance,
                    row_run,
                    run_keys: run_mode,
                    regular,
                    pipeline,
                    bind_group,
                    workgroups: (0, 0, 0),
                });
            }
            let groups_of: Vec<u32> = dispatches.iter().map(|&(g, _)| g).collect();
            let blocks = block_tables.map(|(_rows, sorted, blocks, params, _)| BlockTables {
                sort: ClipSort::new(capacity, library.clip_table().len(), groups_of.len()),
                sorted,
                blocks,
                params,
                params_bytes: vec![0; params_stride * groups_of.len().max(1)],
            });
            Ok(GpuSampler {
                groups,
                _keys: keys,
                instances,
                params,
                params_stride,
                params_bytes: vec![0; params_stride * dispatches.len().max(1)],
                plan,
                output,
                library: library.clone(),
                capacity,
                instance_count: 0,
                max_workgroups_per_dim: max_dim,
                scratch: Vec::with_capacity(capacity as usize),
                blocks,
                interleaved_runs: interleaved.len(),
            })
        })?
    }

    /// The plan the sampler runs ([`SamplerPlan::Auto`] resolved).
    #[must_use]
    pub fn plan(&self) -> SamplerPlan {
        self.plan
    }

    /// The library this sampler was built from.
    #[must_use]
    pub fn library(&self) -> &AnimationLibrary {
        &self.library
    }

    /// The most instances one dispatch can sample.
    #[must_use]
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Instances in the current instance table.
    #[must_use]
    pub fn instance_count(&self) -> u32 {
        self.instance_count
    }

    /// Writes the instance table for the next dispatches (one
    /// `queue.write_buffer` of 16 bytes per instance, plus one of the
    /// dispatch parameters of every track group; the clip-blocks plan also
    /// sorts the instances by clip and writes the sorted table, 8 bytes per
    /// instance, and the block table, 16 bytes per block). Playback times
    /// are wrapped on the host in `f64`.
    ///
    /// # Errors
    /// [`Error::TooManyInstances`], [`Error::ClipOutOfRange`] or
    /// [`Error::InstanceTimeNotFinite`]; on error nothing is written and the
    /// previous table stays in effect.
    pub fn set_instances(&mut self, queue: &wgpu::Queue, instances: &[Instance]) -> Result<()> {
        if instances.len() > self.capacity as usize {
            return Err(Error::TooManyInstances {
                requested: instances.len(),
                capacity: self.capacity,
            });
        }
        resolve_instances_into(&self.library, instances, &mut self.scratch)?;
        self.write_table(queue);
        Ok(())
    }

    fn write_table(&mut self, queue: &wgpu::Queue) {
        let n = self.scratch.len() as u32;
        if let Some(b) = &mut self.blocks {
            b.write(
                queue,
                &self.scratch,
                &self.library,
                &mut self.groups,
                self.params_stride,
                self.max_workgroups_per_dim,
            );
            if n > 0 {
                queue.write_buffer(&self.instances, 0, bytemuck::cast_slice(&self.scratch));
            }
            self.instance_count = n;
            return;
        }
        for (slot, d) in self.groups.iter_mut().enumerate() {
            let invocations = n * d.per_instance.div_ceil(d.row_run); // fits: checked against capacity in new()
            let (x, y) = dispatch_grid(invocations, WORKGROUP_SIZE, self.max_workgroups_per_dim);
            let params = GpuParams {
                instance_count: n,
                tracks_per_instance: d.per_instance,
                output_stride: self.library.output_stride(),
                row_invocations: x * WORKGROUP_SIZE,
            };
            let at = slot * self.params_stride;
            self.params_bytes[at..at + std::mem::size_of::<GpuParams>()]
                .copy_from_slice(bytemuck::bytes_of(&params));
            d.workgroups = (x, y, 1);
        }
        if n > 0 {
            queue.write_buffer(&self.instances, 0, bytemuck::cast_slice(&self.scratch));
        }
        queue.write_buffer(&self.params, 0, &self.params_bytes);
        self.instance_count = n;
    }

    /// Records the sampling dispatches into `encoder` (in a compute pass of
    /// its own, labelled `keyframe-gpu.sample`).
    pub fn record(&self, encoder: &mut wgpu::CommandEncoder) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("keyframe-gpu.sample"),
            timestamp_writes: None,
        });
        self.record_pass(&mut pass);
    }

    /// Records the sampling dispatches, one per track group with tracks,
    /// into a compute pass the caller owns. Does nothing when the instance
    /// table is empty.
    pub fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        for d in &self.groups {
            let (x, y, z) = d.workgroups;
            if x == 0 || y == 0 || z == 0 {
                continue;
            }
            pass.set_pipeline(&d.pipeline);
            pass.set_bind_group(0, &d.bind_group, &[]);
            pass.dispatch_workgroups(x, y, z);
        }
    }

    /// The dispatches of the next frame: for each one its track group
    /// (`GROUP_ALL` in the reference plan; in the CPU-adapter plan each
    /// group with tracks: [`crate::layout::GROUP_SLERP`], `GROUP_CUBIC`,
    /// `GROUP_BLEND`, `GROUP_CUBIC_ROTATION`, `GROUP_STEP`) and its
    /// workgroup counts `(x, y, z)`: `z` is 1, and `y` more than 1 once
    /// the count passes `max_compute_workgroups_per_dimension` (in the
    /// clip-blocks plan the count is blocks x the group's most rows in a
    /// clip, rows varying fastest).
    pub fn workgroups(&self) -> impl Iterator<Item = (u32, (u32, u32, u32))> + '_ {
        self.groups.iter().map(|d| (d.group, d.workgroups))
    }

    #[doc(hidden)]
    /// For each dispatch, its track group and how the clip-blocks plan's
    /// run keys find its rows' keys: `(group, mode, bits)`, mode 0 each row
    /// from its own table (every other plan), 1 one search per run of rows
    /// sharing their key times, 2 from the run's bucket table of `bits`-bit
    /// entries, 3 from an exact one (one step, no search loop;
    /// `src/run_keys.rs`). For tests that must know which path they
    /// exercised.
    pub fn run_keys(&self) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        self.groups
            .iter()
            .map(|d| (d.group, d.run_keys.mode as u32, d.run_keys.bits))
    }

    #[doc(hidden)]
    /// For each dispatch whose clip-blocks runs compute their rows from
    /// the first two of each segment ([`crate::plan::regular_segments`]),
    /// `(group, segment, search)`: its track group, the rows per segment
    /// and whether the search offsets are computed too (else read per
    /// row); none in the other plans. For tests that must know which path
    /// they exercised.
    pub fn regular_segments(&self) -> impl Iterator<Item = (u32, u32, bool)> + '_ {
        self.groups
            .iter()
            .filter(|d| d.regular.0 > 0)
            .map(|d| (d.group, d.regular.0, d.regular.1))
    }

    #[doc(hidden)]
    /// How many runs of LINEAR rotation rows the clip-blocks plan stores
    /// key by key (rows sharing their key times: `src/run_values.rs`); 0 in
    /// every other plan. For tests that must know which path they
    /// exercised.
    pub fn interleaved_runs(&self) -> usize {
        self.interleaved_runs
    }

    /// The output storage buffer: `capacity * output_stride` `f32`s, layout
    /// described on [`AnimationLibrary`]. Bind it read-only in your own
    /// pipeline with [`output_layout_entry`].
    #[must_use]
    pub fn output_buffer(&self) -> &wgpu::Buffer {
        &self.output
    }

    /// The instance table (WGSL `array<Instance>`, [`GpuInstance`] rows:
    /// clip and clip-local time), which the skinner's passes read too.
    #[must_use]
    pub(crate) fn instance_buffer(&self) -> &wgpu::Buffer {
        &self.instances
    }

    /// Copies the current instances' outputs back to the host: submits a
    /// copy, waits for it, and returns `instance_count * output_stride`
    /// floats. Call it after the encoder holding [`record`](Self::record)
    /// was submitted.
    ///
    /// It blocks until the GPU has finished everything submitted so far;
    /// to read results every frame without that stall, see [`ReadbackRing`].
    ///
    /// # Errors
    /// [`Error::Readback`] if mapping fails or the device is lost;
    /// [`Error::Gpu`] for a wgpu error during the copy.
    pub fn read_back(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Vec<f32>> {
        let bytes = u64::from(self.instance_count) * u64::from(self.library.output_stride()) * 4;
        if bytes == 0 {
            return Ok(Vec::new());
        }
        read_buffer(device, queue, &self.output, bytes)
    }

    /// Convenience for tools and tests: sets the instances, records and
    /// submits the dispatch, and reads the result back.
    ///
    /// # Errors
    /// Those of [`set_instances`](Self::set_instances) and
    /// [`read_back`](Self::read_back).
    pub fn sample(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        instances: &[Instance],
    ) -> Result<Vec<f32>> {
        self.set_instances(queue, instances)?;
        scoped(device, "GpuSampler::sample (dispatch)", || {
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("keyframe-gpu.sample.encoder"),
            });
            self.record(&mut encoder);
            queue.submit([encoder.finish()]);
        })?;
        self.read_back(device, queue)
    }
}

/// Copies `buffer[..bytes]` into a staging buffer made for this one read
/// (a sampler or skinner that is never read back holds none), waits, and
/// returns it as `f32`s: the blocking readback of [`GpuSampler::read_back`]
/// and the skinner's. Per-frame readback goes through [`ReadbackRing`].
pub(crate) fn read_buffer(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    buffer: &wgpu::Buffer,
    bytes: u64,
) -> Result<Vec<f32>> {
    let staging = scoped(device, "blocking readback (copy)", || {
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("keyframe-gpu.readback"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("keyframe-gpu.readback"),
        });
        encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, bytes);
        queue.submit([encoder.finish()]);
        staging
    })?;
    read_mapped(device, &staging, bytes)
}

/// Maps `buffer[..bytes]`, waits, copies it out as `f32`s, unmaps.
pub(crate) fn read_mapped(
    device: &wgpu::Device,
    buffer: &wgpu::Buffer,
    bytes: u64,
) -> Result<Vec<f32>> {
    map_read(device, buffer, bytes, |view| {
        bytemuck::pod_collect_to_vec::<u8, f32>(view)
    })
}

/// Maps `buffer[..bytes]` (a `MAP_READ` buffer), waits for it, passes the
/// mapped bytes to `read`, unmaps: the one map-and-wait of the crate and
/// its tools.
pub(crate) fn map_read<T>(
    device: &wgpu::Device,
    buffer: &wgpu::Buffer,
    bytes: u64,
    read: impl FnOnce(&[u8]) -> T,
) -> Result<T> {
    let slice = buffer.slice(..bytes);
    let (tx, rx) = std::sync::mpsc::channel();
    // In an error scope: on a lost device the buffer is invalid, and wgpu
    // reports the failed map as an error rather than through the callback.
    scoped(device, "readback (map)", || {
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
    })?;
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| Error::Readback(e.to_string()))?;
    match rx.recv() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(Error::Readback(e.to_string())),
        Err(_) => return Err(Error::Readback("map callback was dropped".into())),
    }
    let out = {
        let view = slice
            .get_mapped_range()
            .map_err(|e| Error::Readback(e.to_string()))?;
        read(&view)
    };
    buffer.unmap();
    Ok(out)
}

impl BlockTables {
    /// Sorts the resolved instances by clip, writes the sorted and block
    /// tables and each group's parameters, and sets each group's grid.
    fn write(
        &mut self,
        queue: &wgpu::Queue,
        resolved: &[GpuInstance],
        library: &AnimationLibrary,
        groups: &mut [GroupDispatch],
        params_stride: usize,
        max_dim: u32,
    ) {
        let sort = &mut self.sort;
        // The group of each dispatch slot, without collecting them.
        let mut slots = [0u32; SAMPLE_GROUPS];
        for (s, d) in slots.iter_mut().zip(groups.iter()) {
            *s = d.group;
        }
        sort.sort(
            resolved,
            library.clip_table(),
            &slots[..groups.len().min(SAMPLE_GROUPS)],
        );
        for (slot, d) in groups.iter_mut().enumerate() {
            let (base, count) = sort.range(slot);
            // Fits: checked against max_blocks in new().
            let workgroups = count * d.per_instance.div_ceil(d.row_run);
            let x = workgroups.min(max_dim);
            let y = if x == 0 { 0 } else { workgroups.div_ceil(x) };
            let params = GpuBlockParams {
                block_base: base,
                block_count: count,
                output_stride: library.output_stride(),
                grid_width: x,
            };
            let at = slot * params_stride;
            self.params_bytes[at..at + std::mem::size_of::<GpuBlockParams>()]
                .copy_from_slice(bytemuck::bytes_of(&params));
            d.workgroups = (x, y, 1);
        }
        if !sort.sorted().is_empty() {
            queue.write_buffer(&self.sorted, 0, bytemuck::cast_slice(sort.sorted()));
        }
        if !sort.blocks().is_empty() {
            queue.write_buffer(&self.blocks, 0, bytemuck::cast_slice(sort.blocks()));
        }
        queue.write_buffer(&self.params, 0, &self.params_bytes);
    }
}
