//! [`GpuSampler`]: the sampling dispatches of one library for up to a
//! capacity of instances. Construction reads top-down: the plan (resolved
//! from the device and the library), the tables it needs (computed
//! without a device: [`SampleTables`]), their upload ([`SampleUpload`],
//! shared by every sampler of the same library and plan), then this
//! sampler's own buffers, bind groups and pipelines, one per dispatch.

use std::num::NonZeroU64;
use std::sync::Arc;

use super::bind;
use super::key_textures::KeyTextures;
use super::{buffer_filled, buffer_init, check_size, dispatch_grid, read_buffer, scoped, Health};
use crate::error::{Error, Result};
use crate::layout::{
    GpuBlockParams, GpuInstance, GpuParams, GpuSampleBlock, GpuSampleRow, BLOCK_HEAD, DECODE_HEAD,
    ROW_HEAD, SAMPLE_BINDINGS, SAMPLE_BLOCKS_USES, SAMPLE_USES, SAMPLE_WGSL, WORKGROUP_SIZE,
};
use crate::model::instance::Instance;
use crate::model::library::AnimationLibrary;
use crate::plan::{Plan, SamplerPlan, Stage};
use crate::tables::blocks::{max_blocks, ClipSort, Part};
use crate::tables::instance::resolve_instances_into;
use crate::tables::library::LibraryTables;
use crate::tables::sample::SampleTables;

/// Samples an [`AnimationLibrary`] for many instances with one compute
/// dispatch.
///
/// Keys, values, the track and clip tables are uploaded once by
/// [`from_plan`](Self::from_plan) (the key search's tables as textures:
/// [`KeyTextures`]). Per frame, [`write_instances`](Self::write_instances)
/// writes the small instance table (one `queue.write_buffer`) and
/// [`record_pass`](Self::record_pass) records the dispatches into the
/// caller's pass.
/// Results stay on the GPU in [`output_buffer`](Self::output_buffer)
/// (layout: see [`AnimationLibrary`]); [`read_back`](Self::read_back) is a
/// separate, optional step.
///
/// The sampler never creates a device: it uses the caller's. Once that
/// device is lost, every fallible call returns
/// [`Error::DeviceLost`] and [`record_pass`](Self::record_pass) records nothing
/// (`docs/USAGE.md`, "Faults").
///
/// How the work is laid out is its [`SamplerPlan`]: one dispatch over
/// every track ([`SamplerPlan::Reference`], GPUs) or one per track group
/// ([`SamplerPlan::Grouped`] and [`SamplerPlan::ClipBlocks`], the CPU
/// fallback adapters), all in the same compute pass. Whatever the plan,
/// instance `i`'s outputs are at `i * output_stride`.
#[derive(Debug)]
pub(crate) struct GpuSampler {
    /// The device, to tell whether it is lost.
    health: Health,
    upload: Arc<SampleUpload>,
    groups: Vec<GroupDispatch>,
    instances: wgpu::Buffer,
    params: wgpu::Buffer,
    params_stride: usize,
    params_bytes: Vec<u8>,
    output: wgpu::Buffer,
    capacity: u32,
    instance_count: u32,
    max_workgroups_per_dim: u32,
    scratch: Vec<GpuInstance>,
    /// [`SamplerPlan::ClipBlocks`]: the sort and its tables.
    blocks: Option<BlockTables>,
}

/// What a sampler uploads once for a library under a plan: the key search
/// texture and the track and clip textures, the values, the clip table
/// and the clip-blocks plan's row table, with the tables they were made
/// from. Samplers of the same library and plan share one
/// ([`GpuSampler::sharing`]), whatever their capacities.
#[derive(Debug)]
pub(crate) struct SampleUpload {
    library: AnimationLibrary,
    tables: Arc<SampleTables>,
    keys: KeyTextures,
    /// The key values, or a compressed library's packed words.
    values: wgpu::Buffer,
    clips: wgpu::Buffer,
    /// The clip-blocks plan's row table (`None` in the other plans).
    rows: Option<wgpu::Buffer>,
    /// The clip-blocks plan's uniform copies of a compressed library's
    /// block heads, then of their frames ([`SampleTables::decode_heads`]:
    /// two regions of [`SampleTables::decode_head_rows`] rows of 32 bytes
    /// each, of which a dispatch part binds a window of `DECODE_HEAD`
    /// rows), or one region of zeros that both bindings take where there
    /// are none.
    decode_heads: wgpu::Buffer,
}

/// What [`SamplerPlan::ClipBlocks`] adds: the host's sort, the sorted
/// instance and block tables it writes each frame, and the dispatches'
/// parameters (one uniform slot per dispatch part, at `params_stride`).
#[derive(Debug)]
struct BlockTables {
    sort: ClipSort,
    /// Each dispatch part's group and clips, in recording order.
    parts: Vec<Part>,
    sorted: wgpu::Buffer,
    blocks: wgpu::Buffer,
    params: wgpu::Buffer,
    params_bytes: Vec<u8>,
}

/// The dispatch of one track group, or of one part of it (the clips of
/// one window of the block heads: [`crate::tables::sample::HeadWindow`]): its
/// pipeline (WGSL override `GROUP`), its bind group (whose `params` is the
/// part's slot of the params buffer, and whose block heads are its
/// window) and its grid for the current instance table.
#[derive(Debug)]
struct GroupDispatch {
    /// Its track group, clips and block heads' window.
    part: Part,
    per_instance: u32,
    /// The rows one invocation samples (`ROW_RUN`): the clip-blocks plan's
    /// run, the CPU-adapter plan's pair, 1 in the reference plan.
    row_run: u32,
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    workgroups: (u32, u32, u32),
}

/// The buffers one sampler owns, for its capacity.
struct OwnBuffers {
    instances: wgpu::Buffer,
    params: wgpu::Buffer,
    output: wgpu::Buffer,
    /// The clip-blocks plan's sorted instances, blocks and block params.
    blocks: Option<(wgpu::Buffer, wgpu::Buffer, wgpu::Buffer)>,
}

/// The sizes a sampler of `capacity` instances needs, checked against the
/// device's limits before anything is created.
struct Sizes {
    capacity: u32,
    instances: u64,
    output: u64,
    /// The clip-blocks plan's block table (at least its uniform head).
    block_bytes: u64,
    params_stride: usize,
}

impl GpuSampler {
    /// The sampler `plan` lists: its tables uploaded, then its own buffers
    /// and dispatches.
    pub(crate) fn from_plan(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        library: &AnimationLibrary,
        plan: &Plan,
    ) -> Result<Self> {
        let health = Health::of(device);
        health.check("GpuSampler::new")?;
        let upload = SampleUpload::new(device, queue, library, Arc::clone(&plan.sample_tables))?;
        Self::with_upload(device, health, Arc::new(upload), plan)
    }

    /// A sampler of `plan` (of the same library and sampler plan as
    /// `self`) that shares `self`'s upload: the keys, values and tables are
    /// on the device once for both.
    pub(crate) fn sharing(&self, device: &wgpu::Device, plan: &Plan) -> Result<Self> {
        let health = self.health.clone();
        health.check("GpuSampler::new")?;
        Self::with_upload(device, health, Arc::clone(&self.upload), plan)
    }

    /// Whether a sampler of `plan` over `library` can share this sampler's
    /// upload.
    pub(crate) fn can_share(&self, library: &AnimationLibrary, plan: &Plan) -> bool {
        self.upload.library.same_data(library) && self.upload.tables.plan == plan.sampler
    }

    /// This sampler's own buffers, bind groups and pipelines over `upload`,
    /// for `plan`'s rows and dispatches.
    fn with_upload(
        device: &wgpu::Device,
        health: Health,
        upload: Arc<SampleUpload>,
        plan: &Plan,
    ) -> Result<Self> {
        let limits = device.limits();
        let capacity = plan.rows;
        let sizes = Sizes::check(&limits, &upload, capacity)?;
        let max_dim = limits.max_compute_workgroups_per_dimension.max(1);
        scoped(device, "GpuSampler::new", || {
            let own = OwnBuffers::new(device, &upload, &sizes);
            let groups = upload.dispatches(device, &own, &sizes, plan)?;
            let parts = groups.len();
            let blocks = own.blocks.map(|(sorted, blocks, params)| BlockTables {
                sort: ClipSort::new(
                    capacity,
                    upload.tables.library.clip_table().len(),
                    upload.tables.dispatches.len(),
                    parts,
                ),
                parts: groups.iter().map(|d| d.part).collect(),
                sorted,
                blocks,
                params,
                params_bytes: vec![0; sizes.params_stride * parts.max(1)],
            });
            Ok(GpuSampler {
                health,
                groups,
                instances: own.instances,
                params: own.params,
                params_stride: sizes.params_stride,
                params_bytes: vec![0; sizes.params_stride * parts.max(1)],
                output: own.output,
                capacity,
                instance_count: 0,
                max_workgroups_per_dim: max_dim,
                scratch: Vec::with_capacity(capacity as usize),
                blocks,
                upload,
            })
        })?
    }
}

impl Sizes {
    /// The sizes of a sampler of `capacity` over `upload`, each checked
    /// against `limits`, with the dispatch's grid.
    fn check(limits: &wgpu::Limits, upload: &SampleUpload, capacity: u32) -> Result<Sizes> {
        let library = &upload.library;
        let tables = &upload.tables;
        let stride = u64::from(library.output_stride());
        let instances = u64::from(capacity) * std::mem::size_of::<GpuInstance>() as u64;
        // Whole vec4s: also bound as `output4`.
        let output = (u64::from(capacity) * stride * 4).div_ceil(16).max(1) * 16;
        check_size(limits, "instance table", instances, false)?;
        check_size(limits, "output buffer", output, false)?;
        let max_dim = limits.max_compute_workgroups_per_dimension.max(1);
        let clip_blocks = tables.plan == SamplerPlan::ClipBlocks;
        let group_blocks = max_blocks(capacity, tables.library.clip_table().len());
        let block_entries = u64::from(group_blocks) * tables.dispatches.len() as u64;
        let block_bytes = (block_entries * std::mem::size_of::<GpuSampleBlock>() as u64)
            .max(u64::from(BLOCK_HEAD) * std::mem::size_of::<GpuSampleBlock>() as u64);
        if clip_blocks {
            check_size(limits, "clip-blocks block table", block_bytes, false)?;
            check_size(
                limits,
                "sorted instance table",
                u64::from(capacity) * 8,
                false,
            )?;
            let needed = crate::plan::schedule_block_workgroups(&tables.library, capacity);
            let max_grid = u64::from(max_dim) * u64::from(max_dim);
            if needed > max_grid.min(u64::from(u32::MAX)) {
                return Err(Error::LimitExceeded {
                    what: "clip-blocks dispatch (blocks x row runs per block)",
                    needed,
                    limit_name: "max_compute_workgroups_per_dimension",
                    limit: u64::from(max_dim),
                });
            }
        } else {
            let most = tables
                .dispatches
                .iter()
                .map(|&(_, per)| per)
                .max()
                .unwrap_or(0);
            let invocations = u64::from(capacity) * u64::from(most);
            let max_invocations =
                u64::from(max_dim) * u64::from(max_dim) * u64::from(WORKGROUP_SIZE);
            if invocations > max_invocations.min(u64::from(u32::MAX)) {
                return Err(Error::LimitExceeded {
                    what: "dispatch (instances x tracks per instance)",
                    needed: invocations,
                    limit_name: "max_compute_workgroups_per_dimension",
                    limit: u64::from(max_dim),
                });
            }
        }
        Ok(Sizes {
            capacity,
            instances,
            output,
            block_bytes,
            // One params slot per group, at the uniform offset alignment.
            params_stride: (limits.min_uniform_buffer_offset_alignment as usize)
                .max(std::mem::size_of::<GpuParams>()),
        })
    }
}

impl SampleUpload {
    /// Uploads `library`'s keys, values and tables as `tables` lays them
    /// out.
    fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        library: &AnimationLibrary,
        tables: Arc<SampleTables>,
    ) -> Result<SampleUpload> {
        let limits = device.limits();
        // A compressed library's packed words take the values' place (the
        // buffer is bound as `packed` too).
        let flat = Arc::clone(&tables.library);
        let value_bytes: &[u8] = match flat.packed() {
            Some(p) => bytemuck::cast_slice(p.words()),
            None => bytemuck::cast_slice(flat.values()),
        };
        let values_bytes = value_bytes.len() as u64;
        let clips_bytes = std::mem::size_of_val(flat.clip_table()) as u64;
        check_size(&limits, "key values", values_bytes, false)?;
        check_size(&limits, "clip table", clips_bytes, false)?;
        let rows_bytes = (flat.tracks().len() as u64 * std::mem::size_of::<GpuSampleRow>() as u64)
            .max(u64::from(ROW_HEAD) * std::mem::size_of::<GpuSampleRow>() as u64);
        if tables.plan == SamplerPlan::ClipBlocks {
            check_size(&limits, "clip-blocks row table", rows_bytes, false)?;
        }
        let keys = KeyTextures::with_texels(device, queue, &flat, tables.texels.clone())?;
        scoped(device, "GpuSampler::new (upload)", || {
            // Whole vec4s: also bound as `values4`; and one vec4 of zeros
            // after the last value, which the clip-blocks plan's exact run
            // tables read (unused) past a last key instead of reading the
            // key count to clamp (slerp_pair).
            let values = buffer_filled(
                device,
                "keyframe-gpu.values",
                (value_bytes.len() as u64).div_ceil(16) * 16 + 16,
                wgpu::BufferUsages::STORAGE,
                |view| {
                    view.slice(..value_bytes.len()).copy_from_slice(value_bytes);
                    for run in &tables.interleaved {
                        run.write(value_bytes, |at, bytes| {
                            view.slice(at..at + bytes.len()).copy_from_slice(bytes);
                        });
                    }
                },
            )?;
            let clips = buffer_init(
                device,
                "keyframe-gpu.clips",
                bytemuck::cast_slice(flat.clip_table()),
                wgpu::BufferUsages::STORAGE,
            )?;
            // The rows, bound as storage and, for their head, as a uniform.
            let rows = if tables.plan == SamplerPlan::ClipBlocks {
                let mut row_bytes = vec![0u8; rows_bytes as usize];
                let used = std::mem::size_of_val(tables.rows.as_slice());
                row_bytes[..used].copy_from_slice(bytemuck::cast_slice(&tables.rows));
                Some(buffer_init(
                    device,
                    "keyframe-gpu.sample.rows",
                    &row_bytes,
                    wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::UNIFORM,
                )?)
            } else {
                None
            };
            let decode_heads = buffer_init(
                device,
                "keyframe-gpu.sample.decode_heads",
                &decode_head_bytes(&tables.decode_heads, tables.decode_head_rows()),
                wgpu::BufferUsages::UNIFORM,
            )?;
            Ok(SampleUpload {
                library: library.clone(),
                tables,
                keys,
                values,
                clips,
                rows,
                decode_heads,
            })
        })?
    }

    /// One dispatch per track group of the plan: its bind group over the
    /// upload and `own` buffers (the params binding is the group's slot)
    /// and its pipeline with the group's overrides.
    fn dispatches(
        &self,
        device: &wgpu::Device,
        own: &OwnBuffers,
        sizes: &Sizes,
        plan: &Plan,
    ) -> Result<Vec<GroupDispatch>> {
        let clip_blocks = self.tables.plan == SamplerPlan::ClipBlocks;
        let uses: &[u32] = if clip_blocks {
            &SAMPLE_BLOCKS_USES
        } else {
            &SAMPLE_USES
        };
        let layout = bind::layout(device, "keyframe-gpu.sample.layout", &SAMPLE_BINDINGS, uses)?;
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("keyframe-gpu.sample.wgsl"),
            source: wgpu::ShaderSource::Wgsl(SAMPLE_WGSL.into()),
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("keyframe-gpu.sample.pipeline_layout"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let planned = plan.dispatches.iter().filter(|d| d.stage == Stage::Sample);
        let clip_count = u32::try_from(self.tables.library.clip_table().len()).unwrap_or(u32::MAX);
        let mut groups = Vec::with_capacity(self.tables.parts());
        for (slot, d) in planned.enumerate() {
            let constants = d.overrides.constants(d.module);
            let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("keyframe-gpu.sample"),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(d.entry_point),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &constants,
                    ..Default::default()
                },
                cache: None,
            });
            let group = d.group.unwrap_or(0);
            // One part over every clip, or one per window of the heads.
            let whole = [crate::tables::sample::HeadWindow {
                first_row: 0,
                clip_begin: 0,
                clip_end: clip_count,
            }];
            let windows = match self.tables.head_windows.get(slot) {
                Some(w) if !w.is_empty() => &w[..],
                _ => &whole[..],
            };
            for w in windows {
                let part = Part {
                    group,
                    clip_begin: w.clip_begin,
                    clip_end: w.clip_end,
                    head_first: w.first_row,
                };
                let bind_group =
                    self.bind_group(device, &layout, own, groups.len(), sizes, part)?;
                groups.push(GroupDispatch {
                    part,
                    per_instance: d.per_instance,
                    row_run: d.row_run,
                    pipeline: pipeline.clone(),
                    bind_group,
                    workgroups: (0, 0, 0),
                });
            }
        }
        Ok(groups)
    }

    /// Dispatch part `slot`'s bind group, paired with `SAMPLE_BINDINGS` by
    /// number; its params binding is the part's slot of the params buffer,
    /// and its block heads the window of `part`.
    fn bind_group(
        &self,
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        own: &OwnBuffers,
        slot: usize,
        sizes: &Sizes,
        part: Part,
    ) -> Result<wgpu::BindGroup> {
        let keys = &self.keys;
        let slot_of = |buffer, size: usize| {
            wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer,
                offset: (slot * sizes.params_stride) as u64,
                size: NonZeroU64::new(size as u64),
            })
        };
        // The part's window of each region (a multiple of 256 bytes).
        let window = u64::from(DECODE_HEAD) * 32;
        let heads_at = u64::from(part.head_first) * 32;
        let frames_at = if self.tables.decode_heads.is_empty() {
            0
        } else {
            u64::from(self.tables.decode_head_rows()) * 32 + heads_at
        };
        let head_at = |offset: u64| {
            wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &self.decode_heads,
                offset,
                size: NonZeroU64::new(window),
            })
        };
        let (Some(rows), Some((sorted, blocks, block_params))) = (&self.rows, &own.blocks) else {
            return bind::group(
                device,
                "keyframe-gpu.sample.bind_group",
                layout,
                &SAMPLE_USES,
                &[
                    (0, wgpu::BindingResource::TextureView(keys.key_windows())),
                    (1, self.values.as_entire_binding()),
                    (3, self.clips.as_entire_binding()),
                    (4, own.instances.as_entire_binding()),
                    (5, slot_of(&own.params, std::mem::size_of::<GpuParams>())),
                    (6, own.output.as_entire_binding()),
                    (7, wgpu::BindingResource::TextureView(keys.clip_groups())),
                    (8, wgpu::BindingResource::TextureView(keys.track_search())),
                    (15, self.values.as_entire_binding()),
                    (16, own.output.as_entire_binding()),
                    (17, self.values.as_entire_binding()),
                    (18, head_at(heads_at)),
                    (19, head_at(frames_at)),
                ],
            );
        };
        let head = |buffer, bytes: u64| {
            wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer,
                offset: 0,
                size: NonZeroU64::new(bytes),
            })
        };
        let block_head = u64::from(BLOCK_HEAD) * std::mem::size_of::<GpuSampleBlock>() as u64;
        let row_head = u64::from(ROW_HEAD) * std::mem::size_of::<GpuSampleRow>() as u64;

        bind::group(
            device,
            "keyframe-gpu.sample.blocks_bind_group",
            layout,
            &SAMPLE_BLOCKS_USES,
            &[
                (0, wgpu::BindingResource::TextureView(keys.key_windows())),
                (1, self.values.as_entire_binding()),
                (6, own.output.as_entire_binding()),
                (9, sorted.as_entire_binding()),
                (10, head(blocks, block_head)),
                (11, blocks.as_entire_binding()),
                (12, head(rows, row_head)),
                (13, rows.as_entire_binding()),
                (
                    14,
                    slot_of(block_params, std::mem::size_of::<GpuBlockParams>()),
                ),
                (15, self.values.as_entire_binding()),
                (16, own.output.as_entire_binding()),
                (17, self.values.as_entire_binding()),
                (18, head_at(heads_at)),
                (19, head_at(frames_at)),
            ],
        )
    }
}

/// The bytes of the clip-blocks plan's uniform copies of `heads`: a
/// region of `rows` rows of 32 bytes for the heads (meta word and
/// offsets), one for the frames; one region of zeros where there are no
/// heads, which both bindings take.
fn decode_head_bytes(heads: &[[[u32; 4]; 4]], rows: u32) -> Vec<u8> {
    let region = rows as usize * 32;
    let regions = if heads.is_empty() { 1 } else { 2 };
    let mut bytes = vec![0u8; regions * region];
    for (r, head) in heads.iter().enumerate().take(rows as usize) {
        let words: &[u8] = bytemuck::cast_slice(head);
        bytes[r * 32..r * 32 + 32].copy_from_slice(&words[..32]);
        bytes[region + r * 32..region + r * 32 + 32].copy_from_slice(&words[32..]);
    }
    bytes
}

impl OwnBuffers {
    /// The instance table, params slots and output of a sampler of
    /// `sizes`; with the clip-blocks plan also its sorted instances,
    /// blocks and block params (written per frame).
    fn new(device: &wgpu::Device, upload: &SampleUpload, sizes: &Sizes) -> OwnBuffers {
        let buffer = |label, size, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            })
        };
        use wgpu::BufferUsages as U;
        let slots = (sizes.params_stride * upload.tables.parts().max(1)) as u64;
        let blocks = (upload.tables.plan == SamplerPlan::ClipBlocks).then(|| {
            (
                buffer(
                    "keyframe-gpu.sample.sorted_instances",
                    u64::from(sizes.capacity) * 8,
                    U::STORAGE | U::COPY_DST,
                ),
                buffer(
                    "keyframe-gpu.sample.blocks",
                    sizes.block_bytes,
                    U::STORAGE | U::UNIFORM | U::COPY_DST,
                ),
                buffer(
                    "keyframe-gpu.sample.block_params",
                    slots,
                    U::UNIFORM | U::COPY_DST,
                ),
            )
        });
        OwnBuffers {
            // Also written by the playback pass (and read back by its
            // tests).
            instances: buffer(
                "keyframe-gpu.instances",
                sizes.instances,
                U::STORAGE | U::COPY_DST | U::COPY_SRC,
            ),
            params: buffer("keyframe-gpu.params", slots, U::UNIFORM | U::COPY_DST),
            output: buffer(
                "keyframe-gpu.output",
                sizes.output,
                U::STORAGE | U::COPY_SRC | U::COPY_DST,
            ),
            blocks,
        }
    }
}

impl GpuSampler {
    /// The device this sampler was made on, to tell whether it is lost.
    pub(crate) fn health(&self) -> &Health {
        &self.health
    }

    /// The identity of this sampler's upload: equal for samplers that
    /// share one ([`GpuSampler::sharing`]).
    pub(crate) fn upload_id(&self) -> usize {
        Arc::as_ptr(&self.upload) as usize
    }

    /// The current frame's instances, resolved (clip and clip time).
    pub(crate) fn resolved(&self) -> &[GpuInstance] {
        &self.scratch
    }

    /// The library this sampler was built from.
    #[must_use]
    pub(crate) fn library(&self) -> &AnimationLibrary {
        &self.upload.library
    }

    /// The most instances one dispatch can sample.
    #[must_use]
    pub(crate) fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Instances in the current instance table.
    #[must_use]
    pub(crate) fn instance_count(&self) -> u32 {
        self.instance_count
    }

    /// Writes the instance table, without the device check (the objects
    /// that hold a sampler check first).
    pub(crate) fn write_instances(
        &mut self,
        queue: &wgpu::Queue,
        instances: &[Instance],
    ) -> Result<()> {
        if instances.len() > self.capacity as usize {
            return Err(Error::TooManyInstances {
                requested: instances.len(),
                capacity: self.capacity,
            });
        }
        resolve_instances_into(&self.upload.library, instances, &mut self.scratch)?;
        self.write_table(queue);
        Ok(())
    }

    fn write_table(&mut self, queue: &wgpu::Queue) {
        let n = self.scratch.len() as u32;
        if let Some(b) = &mut self.blocks {
            b.write(
                queue,
                &self.scratch,
                &self.upload.tables.library,
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
        self.set_grids(n);
        if n > 0 {
            queue.write_buffer(&self.instances, 0, bytemuck::cast_slice(&self.scratch));
        }
        queue.write_buffer(&self.params, 0, &self.params_bytes);
        self.instance_count = n;
    }

    /// Each dispatch's parameters and grid for `n` rows (the plans
    /// without the clip-blocks sort).
    fn set_grids(&mut self, n: u32) {
        for (slot, d) in self.groups.iter_mut().enumerate() {
            let invocations = n * d.per_instance.div_ceil(d.row_run); // fits: checked against capacity in new()
            let (x, y) = dispatch_grid(invocations, WORKGROUP_SIZE, self.max_workgroups_per_dim);
            let params = GpuParams {
                instance_count: n,
                tracks_per_instance: d.per_instance,
                output_stride: self.upload.library.output_stride(),
                row_invocations: x * WORKGROUP_SIZE,
            };
            let at = slot * self.params_stride;
            self.params_bytes[at..at + std::mem::size_of::<GpuParams>()]
                .copy_from_slice(bytemuck::bytes_of(&params));
            d.workgroups = (x, y, 1);
        }
    }

    /// Samples `n` rows (at most the capacity) that another pass writes
    /// into the instance table (the playback pass): only the parameters
    /// are written. `false` (nothing written) for the clip-blocks plan,
    /// whose sort of the rows is the host's.
    pub(crate) fn drive_rows(&mut self, queue: &wgpu::Queue, n: u32) -> bool {
        if self.blocks.is_some() {
            return false;
        }
        let n = n.min(self.capacity);
        self.scratch.clear();
        self.set_grids(n);
        queue.write_buffer(&self.params, 0, &self.params_bytes);
        self.instance_count = n;
        true
    }

    /// Records the sampling dispatches, one per track group with tracks,
    /// into a compute pass the caller owns. Does nothing when the instance
    /// table is empty, or once the device is known lost.
    pub(crate) fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        if self.health.is_lost() {
            return;
        }
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

    /// The output storage buffer: `capacity * output_stride` `f32`s, layout
    /// described on [`AnimationLibrary`]. Bind it read-only in your own
    /// pipeline with [`output_layout_entry`](super::output_layout_entry).
    #[must_use]
    pub(crate) fn output_buffer(&self) -> &wgpu::Buffer {
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
    /// floats. Call it after the encoder holding
    /// [`record_pass`](Self::record_pass) was submitted.
    ///
    /// It blocks until the GPU has finished everything submitted so far;
    /// to read results every frame without that stall, see [`ReadbackRing`](super::ReadbackRing).
    ///
    /// # Errors
    /// [`Error::DeviceLost`] once the device is lost (never the last
    /// results it computed); [`Error::Readback`] if mapping fails;
    /// [`Error::Gpu`] for a wgpu error during the copy.
    pub(crate) fn read_back(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Vec<f32>> {
        self.health.check("GpuSampler::read_back")?;
        let bytes =
            u64::from(self.instance_count) * u64::from(self.upload.library.output_stride()) * 4;
        if bytes == 0 {
            return Ok(Vec::new());
        }
        read_buffer(&self.health, device, queue, &self.output, bytes)
    }
}

impl BlockTables {
    /// Sorts the resolved instances by clip, writes the sorted and block
    /// tables and each group's parameters, and sets each group's grid.
    fn write(
        &mut self,
        queue: &wgpu::Queue,
        resolved: &[GpuInstance],
        library: &LibraryTables,
        groups: &mut [GroupDispatch],
        params_stride: usize,
        max_dim: u32,
    ) {
        let sort = &mut self.sort;
        sort.sort(resolved, library.clip_table(), &self.parts);
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
                head_first: d.part.head_first,
                _pad0: 0,
                _pad1: 0,
                _pad2: 0,
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

/// What the crate's own tests inspect and drive directly.
#[cfg(test)]
impl GpuSampler {
    /// The plan the sampler runs ([`SamplerPlan::Auto`] resolved).
    #[must_use]
    pub(crate) fn plan(&self) -> SamplerPlan {
        self.upload.tables.plan
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
    /// previous table stays in effect. [`Error::DeviceLost`] once the
    /// device is lost (checked first, with a poll that does not block).
    pub(crate) fn set_instances(
        &mut self,
        queue: &wgpu::Queue,
        instances: &[Instance],
    ) -> Result<()> {
        self.health.check("GpuSampler::set_instances")?;
        self.write_instances(queue, instances)
    }

    /// Records the sampling dispatches into `encoder` (in a compute pass of
    /// its own, labelled `keyframe-gpu.sample`). Records nothing once the
    /// device is known lost: the fallible calls report the loss.
    pub(crate) fn record(&self, encoder: &mut wgpu::CommandEncoder) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("keyframe-gpu.sample"),
            timestamp_writes: None,
        });
        self.record_pass(&mut pass);
    }

    /// The dispatches of the next frame: for each one its track group
    /// (`GROUP_ALL` in the reference plan; in the CPU-adapter plan each
    /// group with tracks: `crate::layout::GROUP_SLERP`, `GROUP_CUBIC`,
    /// `GROUP_BLEND`, `GROUP_CUBIC_ROTATION`, `GROUP_STEP`) and its
    /// workgroup counts `(x, y, z)`: `z` is 1, and `y` more than 1 once
    /// the count passes `max_compute_workgroups_per_dimension` (in the
    /// clip-blocks plan the count is blocks x the group's most rows in a
    /// clip, rows varying fastest).
    pub(crate) fn workgroups(&self) -> impl Iterator<Item = (u32, (u32, u32, u32))> + '_ {
        self.groups.iter().map(|d| (d.part.group, d.workgroups))
    }

    #[doc(hidden)]
    /// For each dispatch, its track group and how the clip-blocks plan's
    /// run keys find its rows' keys: `(group, mode, bits)`, mode 0 each row
    /// from its own table (every other plan), 1 one search per run of rows
    /// sharing their key times, 2 from the run's bucket table of `bits`-bit
    /// entries, 3 from an exact one (one step, no search loop;
    /// `src/tables/run_keys.rs`). For tests that must know which path they
    /// exercised.
    pub(crate) fn run_keys(&self) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        // A part's run keys are its plan dispatch's (one per group).
        let keys = &self.upload.tables.run_keys;
        self.groups.iter().filter_map(|d| {
            let k = keys.get(self.slot_of(d.part.group)?)?;
            Some((d.part.group, k.mode as u32, k.bits))
        })
    }

    #[doc(hidden)]
    /// For each dispatch whose clip-blocks runs compute their rows from
    /// the first two of each segment ([`crate::tables::sample::regular_segments`]),
    /// `(group, segment, search)`: its track group, the rows per segment
    /// and whether the search offsets are computed too (else read per
    /// row); none in the other plans. For tests that must know which path
    /// they exercised.
    pub(crate) fn regular_segments(&self) -> impl Iterator<Item = (u32, u32, bool)> + '_ {
        // The clip-blocks plan's regular segments of each dispatch's runs,
        // whose rows are computed from their first two (`REGULAR_SEGMENT`,
        // 0 where the rows are read), and whether their search offsets are
        // too (`REGULAR_SEARCH`): `crate::tables::sample::regular_segments`.
        let regular = &self.upload.tables.regular;
        self.groups.iter().filter_map(|d| {
            let r = regular
                .get(self.slot_of(d.part.group)?)
                .filter(|r| r.0 > 0)?;
            Some((d.part.group, r.0, r.1))
        })
    }

    /// The plan's dispatch of track group `group` (one per group).
    fn slot_of(&self, group: u32) -> Option<usize> {
        self.upload
            .tables
            .dispatches
            .iter()
            .position(|&(g, _)| g == group)
    }

    #[doc(hidden)]
    /// How many runs of LINEAR rotation rows the clip-blocks plan stores
    /// key by key (rows sharing their key times: `src/tables/run_values.rs`); 0 in
    /// every other plan. For tests that must know which path they
    /// exercised.
    pub(crate) fn interleaved_runs(&self) -> usize {
        self.upload.tables.interleaved.len()
    }

    /// Convenience for tools and tests: sets the instances, records and
    /// submits the dispatch, and reads the result back.
    ///
    /// # Errors
    /// Those of [`set_instances`](Self::set_instances) and
    /// [`read_back`](Self::read_back).
    pub(crate) fn sample(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        instances: &[Instance],
    ) -> Result<Vec<f32>> {
        self.set_instances(queue, instances)?;
        super::submit_now(device, queue, "GpuSampler::sample (dispatch)", |encoder| {
            self.record(encoder);
        })?;
        self.read_back(device, queue)
    }
}
