//! [`GpuSkinner`]: the morph pass and the skin pass (local pose, hierarchy
//! and joint matrices fused; one invocation per instance on CPU adapters,
//! one workgroup per instance on GPUs: [`SkinStrategy`]), recorded after
//! [`GpuSampler::record`](crate::GpuSampler::record) into the caller's
//! encoder. They read the sampler's output buffer directly (no readback)
//! and leave global matrices, joint matrices (`array<mat4x4<f32>>`) and
//! morph weights (`array<f32>`) in storage buffers that a renderer binds in
//! its own pipeline ([`GpuSkinner::output_bind_group_layout`]). Local
//! matrices live only in registers or workgroup memory (the CPU twin still
//! reports them: [`crate::cpu_skin::SkinOutput::locals`]).

use std::num::NonZeroU64;

use super::{read_mapped, scoped};
use crate::error::{Error, Result};
use crate::layout::Binding;
pub use crate::layout::{
    MAX_PARALLEL_NODES, POSE_BINDINGS, SKIN_BINDINGS, SKIN_WORKGROUP_SIZE, UNIFORM_HEAD,
};
use crate::rig::{GpuJoint, GpuNode, GpuSkinParams, RigError, SkinJoints, SkinTables};

/// How the skin pass spreads its work over the device. Both give the same
/// results up to rounding (the hierarchy's products are associated
/// differently); both are checked against the CPU twin by the tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SkinStrategy {
    /// [`PerNode`](Self::PerNode) on adapters that are not CPUs, for rigs
    /// of at most [`MAX_PARALLEL_NODES`] nodes;
    /// [`PerInstance`](Self::PerInstance) otherwise.
    #[default]
    Auto,
    /// One invocation per instance walks the instance's nodes in order
    /// (`skin_main`): the fastest on the CPU fallback adapters, where the
    /// SIMD lanes are few and a barrier is expensive. On a GPU it keeps
    /// one lane per instance busy: 1,000 instances of a 64-joint chain
    /// took 24x their sampling on an H200.
    PerInstance,
    /// One workgroup per instance, one lane per node (`skin_nodes_main`):
    /// locals in workgroup memory, the hierarchy by pointer jumping in
    /// `ceil(log2(nodes))` rounds, one lane per joint slot. For GPUs; not
    /// yet timed on one. Refused for rigs of more than
    /// [`MAX_PARALLEL_NODES`] nodes.
    PerNode,
}

/// WGSL of the morph-weight stage: `prelude.wgsl`, `pose.wgsl` (entry point
/// `morph_main`).
pub const POSE_WGSL: &str = concat!(
    include_str!("../../shaders/prelude.wgsl"),
    "\n",
    include_str!("../../shaders/pose.wgsl")
);

/// WGSL of the skin stage: `prelude.wgsl`, `quat.wgsl`, `skin.wgsl` (entry
/// points `skin_main` and `skin_nodes_main`, with the same bindings: local
/// pose, hierarchy and joint matrices; see [`SkinStrategy`]).
pub const SKIN_WGSL: &str = concat!(
    include_str!("../../shaders/prelude.wgsl"),
    "\n",
    include_str!("../../shaders/quat.wgsl"),
    "\n",
    include_str!("../../shaders/skin.wgsl")
);

/// One compute pass: its entry point, which module it is in (`false`:
/// [`POSE_WGSL`], `true`: [`SKIN_WGSL`]) and the bindings it uses; its bind
/// group layout holds exactly these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pass {
    /// The entry point.
    pub entry: &'static str,
    /// In [`SKIN_WGSL`] (else [`POSE_WGSL`]).
    pub skin_module: bool,
    /// Binding numbers it uses.
    pub bindings: &'static [u32],
}

/// The passes, in recording order: morph weights, then the skin pass
/// (local pose, hierarchy and joint matrices in one invocation per
/// instance; see `shaders/skin.wgsl`).
pub const PASSES: [Pass; 2] = [
    Pass {
        entry: "morph_main",
        skin_module: false,
        bindings: &[0, 1, 2, 3, 4, 5, 6],
    },
    Pass {
        entry: "skin_main",
        skin_module: true,
        bindings: &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    },
];

/// Layout entry with which a pipeline binds a skinner output buffer
/// ([`GpuSkinner::joint_matrix_buffer`], [`GpuSkinner::global_buffer`]:
/// `var<storage, read> ...: array<mat4x4<f32>>`, `min_size` 64;
/// [`GpuSkinner::morph_weight_buffer`]: `array<f32>`, `min_size` 4)
/// read-only.
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

fn check_storage(limits: &wgpu::Limits, what: &'static str, bytes: u64) -> Result<()> {
    let limit = limits.max_storage_buffer_binding_size;
    if bytes > limit {
        return Err(Error::LimitExceeded {
            what,
            needed: bytes,
            limit_name: "max_storage_buffer_binding_size",
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

/// Computes local poses, morph weights, global transforms and joint
/// matrices on the GPU for many instances, from a [`GpuSampler`]'s output.
///
/// Tables ([`SkinTables`]: rest pose, track-to-node map, skins, inverse
/// binds) are uploaded once by [`new`](Self::new). Per frame:
/// [`GpuSampler::set_instances`], [`prepare`](Self::prepare) with that
/// sampler, then [`GpuSampler::record`] and [`record`](Self::record) into
/// the same encoder. The passes read each instance's clip from the
/// sampler's instance table: instances are given once.
///
/// Output layouts are those of [`SkinTables`]. Two dispatches: morph
/// weights (one invocation per instance and mesh) and the skin pass, one
/// invocation per instance that visits the nodes in index order, computes
/// each node's local matrix from the sampler's output in registers (no
/// locals buffer) and its global with one matrix product from its
/// parent's when the table lists parents first (O(nodes) per instance, one
/// dispatch for any depth; a child listed before its parent walks up to an
/// ancestor already done) and writes the globals. With at most
/// [`MAX_FUSED_SKINS`](crate::rig::MAX_FUSED_SKINS) skins it first
/// inverts each skin's mesh node's global (computed on its own from the
/// locals up to the root) and writes each joint matrix right after its
/// joint node's global, from the global still in registers
/// ([`GpuNode::first_joint`] and [`GpuJoint::next_joint`] link a node to
/// its slots); with more skins a loop after the walk computes the joint
/// matrices from the globals it wrote. The node, joint and inverse-bind
/// tables are also uploaded as uniform copies of their first
/// [`UNIFORM_HEAD`] entries, which the fallback adapter reads much faster
/// than storage buffers; see `shaders/skin.wgsl`.
///
/// That is [`SkinStrategy::PerInstance`], which suits the CPU fallback
/// adapters; on a large GPU with fewer instances than lanes it leaves most
/// of the chip idle (the walk is serial per instance), so on GPUs
/// [`new`](Self::new) picks [`SkinStrategy::PerNode`] (one workgroup per
/// instance) for rigs of up to [`MAX_PARALLEL_NODES`] nodes.
///
/// [`GpuSampler`]: crate::GpuSampler
/// [`GpuSampler::set_instances`]: crate::GpuSampler::set_instances
/// [`GpuSampler::record`]: crate::GpuSampler::record
#[derive(Debug)]
pub struct GpuSkinner {
    pipelines: Vec<wgpu::ComputePipeline>,
    layouts: Vec<wgpu::BindGroupLayout>,
    bind_groups: Vec<wgpu::BindGroup>,
    params: wgpu::Buffer,
    /// The sampler's instance table, bound by the passes: identifies the
    /// sampler that [`prepare`](Self::prepare) must be given.
    sampler_instances: wgpu::Buffer,
    globals: wgpu::Buffer,
    joint_matrices: wgpu::Buffer,
    morph_weights: wgpu::Buffer,
    output_layout: wgpu::BindGroupLayout,
    output_bind_group: wgpu::BindGroup,
    tables: SkinTables,
    capacity: u32,
    instance_count: u32,
    groups: [(u32, u32); 2],
    max_dim: u32,
    strategy: SkinStrategy,
}

impl GpuSkinner {
    /// Uploads `tables` and builds the two pipelines for up to
    /// `sampler.capacity()` instances, reading `sampler`'s output buffer.
    ///
    /// # Errors
    /// [`RigError::LibraryMismatch`] when the tables were built for a
    /// library with another output stride or clip count than the
    /// sampler's; [`Error::LimitExceeded`] when a buffer passes the
    /// device's storage limits or a dispatch its workgroup-count limit;
    /// [`Error::Gpu`] when wgpu reports an error.
    pub fn new(
        device: &wgpu::Device,
        sampler: &crate::GpuSampler,
        tables: &SkinTables,
    ) -> Result<Self> {
        Self::with_strategy(device, sampler, tables, SkinStrategy::Auto)
    }

    /// [`new`](Self::new) with the skin pass's [`SkinStrategy`] chosen by
    /// the caller ([`strategy`](Self::strategy) tells which one `Auto`
    /// picked).
    ///
    /// # Errors
    /// As [`new`](Self::new); [`Error::LimitExceeded`] also for
    /// [`SkinStrategy::PerNode`] with a rig of more than
    /// [`MAX_PARALLEL_NODES`] nodes.
    pub fn with_strategy(
        device: &wgpu::Device,
        sampler: &crate::GpuSampler,
        tables: &SkinTables,
        strategy: SkinStrategy,
    ) -> Result<Self> {
        let lib = sampler.library();
        if lib.output_stride() != tables.output_stride()
            || lib.clips().len() != tables.clip_count() as usize
        {
            return Err(RigError::LibraryMismatch {
                tables_stride: tables.output_stride(),
                tables_clips: tables.clip_count() as usize,
                sampler_stride: lib.output_stride(),
                sampler_clips: lib.clips().len(),
            }
            .into());
        }
        let limits = device.limits();
        let capacity = sampler.capacity().max(1);
        let cap = u64::from(capacity);
        let nodes = u64::from(tables.node_count());
        let joints = u64::from(tables.joint_count());
        let meshes = u64::from(tables.mesh_count());
        let matrices_bytes = (cap * nodes * 64).max(64);
        let joint_bytes = (cap * joints * 64).max(64);
        let morph_bytes = (cap * u64::from(tables.morph_stride()) * 4).max(4);
        check_storage(&limits, "global matrices", matrices_bytes)?;
        check_storage(&limits, "joint matrices", joint_bytes)?;
        check_storage(&limits, "morph weights", morph_bytes)?;
        check_storage(
            &limits,
            "pose channel table",
            std::mem::size_of_val(tables.channels()) as u64,
        )?;
        let head_bytes = u64::from(UNIFORM_HEAD) * 64;
        if head_bytes > limits.max_uniform_buffer_binding_size {
            return Err(Error::LimitExceeded {
                what: "node and inverse-bind tables (uniform copies)",
                needed: head_bytes,
                limit_name: "max_uniform_buffer_binding_size",
                limit: limits.max_uniform_buffer_binding_size,
            });
        }
        let strategy = match strategy {
            SkinStrategy::Auto => {
                if device.adapter_info().device_type == wgpu::DeviceType::Cpu
                    || tables.node_count() > MAX_PARALLEL_NODES
                {
                    SkinStrategy::PerInstance
                } else {
                    SkinStrategy::PerNode
                }
            }
            SkinStrategy::PerNode if tables.node_count() > MAX_PARALLEL_NODES => {
                return Err(Error::LimitExceeded {
                    what: "rig nodes (SkinStrategy::PerNode)",
                    needed: u64::from(tables.node_count()),
                    limit_name: "MAX_PARALLEL_NODES",
                    limit: u64::from(MAX_PARALLEL_NODES),
                });
            }
            chosen => chosen,
        };
        let skin_lanes = Self::skin_lanes(strategy);
        let max_dim = limits.max_compute_workgroups_per_dimension.max(1);
        let max_inv = u64::from(max_dim) * u64::from(max_dim) * u64::from(SKIN_WORKGROUP_SIZE);
        // The skin pass runs one invocation (PerInstance) or one workgroup
        // (PerNode) per instance, the morph pass one invocation per
        // (instance, mesh).
        for (what, per) in [
            ("dispatch (instances)", u64::from(skin_lanes)),
            ("dispatch (instances x meshes)", meshes),
        ] {
            if cap * per > max_inv.min(u64::from(u32::MAX)) {
                return Err(Error::LimitExceeded {
                    what,
                    needed: cap * per,
                    limit_name: "max_compute_workgroups_per_dimension",
                    limit: u64::from(max_dim),
                });
            }
        }

        scoped(device, "GpuSkinner::new", || {
            let init = |label: &'static str, contents: &[u8], min: usize| {
                let zeros;
                let contents = if contents.is_empty() {
                    zeros = vec![0u8; min];
                    &zeros[..]
                } else {
                    contents
                };
                super::buffer_init(device, label, contents, wgpu::BufferUsages::STORAGE)
            };
            let empty = |label: &str, size: u64, usage: wgpu::BufferUsages| {
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(label),
                    size,
                    usage,
                    mapped_at_creation: false,
                })
            };
            let out_usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
            let node_buf = init(
                "keyframe-gpu.skin.nodes",
                bytemuck::cast_slice(tables.nodes()),
                64,
            )?;
            let channels = init(
                "keyframe-gpu.skin.channels",
                bytemuck::cast_slice(tables.channels()),
                16,
            )?;
            let mesh_buf = init(
                "keyframe-gpu.skin.meshes",
                bytemuck::cast_slice(tables.meshes()),
                16,
            )?;
            let defaults = init(
                "keyframe-gpu.skin.default_weights",
                bytemuck::cast_slice(tables.default_weights()),
                4,
            )?;
            let morph_channels = init(
                "keyframe-gpu.skin.morph_channels",
                bytemuck::cast_slice(tables.morph_channels()),
                4,
            )?;
            let joint_buf = init(
                "keyframe-gpu.skin.joints",
                bytemuck::cast_slice(tables.joints()),
                16,
            )?;
            let inverse_binds = init(
                "keyframe-gpu.skin.inverse_binds",
                bytemuck::cast_slice(tables.inverse_binds()),
                64,
            )?;
            // The first UNIFORM_HEAD entries of a table, zero-padded.
            let head = |label: &'static str, table: &[u8], entry: usize| {
                let mut bytes = vec![0u8; UNIFORM_HEAD as usize * entry];
                let len = table.len().min(bytes.len());
                bytes[..len].copy_from_slice(&table[..len]);
                super::buffer_init(device, label, &bytes, wgpu::BufferUsages::UNIFORM)
            };
            let inverse_binds_head = head(
                "keyframe-gpu.skin.inverse_binds_head",
                bytemuck::cast_slice(tables.inverse_binds()),
                64,
            )?;
            let nodes_head = head(
                "keyframe-gpu.skin.nodes_head",
                bytemuck::cast_slice(tables.nodes()),
                std::mem::size_of::<GpuNode>(),
            )?;
            let joints_head = head(
                "keyframe-gpu.skin.joints_head",
                bytemuck::cast_slice(tables.joints()),
                std::mem::size_of::<GpuJoint>(),
            )?;
            let channels_head = head(
                "keyframe-gpu.skin.channels_head",
                bytemuck::cast_slice(tables.channels()),
                16,
            )?;
            let params = empty(
                "keyframe-gpu.skin.params",
                std::mem::size_of::<GpuSkinParams>() as u64,
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            );
            let globals = empty("keyframe-gpu.skin.globals", matrices_bytes, out_usage);
            let joint_matrices = empty("keyframe-gpu.skin.joint_matrices", joint_bytes, out_usage);
            let morph_weights = empty("keyframe-gpu.skin.morph_weights", morph_bytes, out_usage);

            // (binding number, resource) of each module: paired with the
            // binding tables by number (super::bind).
            let pose_resources = [
                (0, params.as_entire_binding()),
                (1, sampler.output_buffer().as_entire_binding()),
                (2, sampler.instance_buffer().as_entire_binding()),
                (3, mesh_buf.as_entire_binding()),
                (4, defaults.as_entire_binding()),
                (5, morph_channels.as_entire_binding()),
                (6, morph_weights.as_entire_binding()),
            ];
            let skin_resources = [
                (0, params.as_entire_binding()),
                (1, node_buf.as_entire_binding()),
                (2, channels.as_entire_binding()),
                (3, sampler.output_buffer().as_entire_binding()),
                (4, sampler.instance_buffer().as_entire_binding()),
                (5, globals.as_entire_binding()),
                (6, joint_buf.as_entire_binding()),
                (7, inverse_binds.as_entire_binding()),
                (8, joint_matrices.as_entire_binding()),
                (9, inverse_binds_head.as_entire_binding()),
                (10, nodes_head.as_entire_binding()),
                (11, joints_head.as_entire_binding()),
                (12, channels_head.as_entire_binding()),
            ];
            let pose_module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("keyframe-gpu.pose.wgsl (morph weights)"),
                source: wgpu::ShaderSource::Wgsl(POSE_WGSL.into()),
            });
            let skin_module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("keyframe-gpu.skin.wgsl"),
                source: wgpu::ShaderSource::Wgsl(SKIN_WGSL.into()),
            });
            let parents_first = tables
                .nodes()
                .iter()
                .enumerate()
                .all(|(n, node)| node.parent < n as i32);
            let mut pipelines = Vec::new();
            let mut layouts = Vec::new();
            let mut bind_groups = Vec::new();
            for pass in PASSES {
                let (table, resources, module): (&[Binding], &[(u32, wgpu::BindingResource)], _) =
                    if pass.skin_module {
                        (&SKIN_BINDINGS, &skin_resources, &skin_module)
                    } else {
                        (&POSE_BINDINGS, &pose_resources, &pose_module)
                    };
                let layout = super::bind::layout(device, pass.entry, table, pass.bindings)?;
                let resources: Vec<_> = resources
                    .iter()
                    .filter(|(n, _)| pass.bindings.contains(n))
                    .cloned()
                    .collect();
                let bind_group =
                    super::bind::group(device, pass.entry, &layout, pass.bindings, &resources)?;
                let pipeline_layout =
                    device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                        label: Some(pass.entry),
                        bind_group_layouts: &[Some(&layout)],
                        immediate_size: 0,
                    });
                // The skin pass leaves out the recomputation of ancestors
                // listed after their children when no node has one.
                let parents_first = [("PARENTS_FIRST", if parents_first { 1.0 } else { 0.0 })];
                let constants: &[(&str, f64)] = if pass.skin_module {
                    &parents_first
                } else {
                    &[]
                };
                // Both skin entry points bind the same tables.
                let entry = if pass.skin_module && strategy == SkinStrategy::PerNode {
                    "skin_nodes_main"
                } else {
                    pass.entry
                };
                let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(entry),
                    layout: Some(&pipeline_layout),
                    module,
                    entry_point: Some(entry),
                    compilation_options: wgpu::PipelineCompilationOptions {
                        constants,
                        ..Default::default()
                    },
                    cache: None,
                });
                pipelines.push(pipeline);
                layouts.push(layout);
                bind_groups.push(bind_group);
            }
            let vis = wgpu::ShaderStages::VERTEX_FRAGMENT | wgpu::ShaderStages::COMPUTE;
            let output_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("keyframe-gpu.skin.outputs"),
                entries: &[
                    output_layout_entry(0, vis, 64),
                    output_layout_entry(1, vis, 4),
                    output_layout_entry(2, vis, 64),
                ],
            });
            let output_bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("keyframe-gpu.skin.outputs"),
                layout: &output_layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: joint_matrices.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: morph_weights.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 2,
                        resource: globals.as_entire_binding(),
                    },
                ],
            });
            Ok(GpuSkinner {
                pipelines,
                layouts,
                bind_groups,
                params,
                sampler_instances: sampler.instance_buffer().clone(),
                globals,
                joint_matrices,
                morph_weights,
                output_layout,
                output_bind_group,
                tables: tables.clone(),
                capacity,
                instance_count: 0,
                groups: [(0, 0); 2],
                max_dim,
                strategy,
            })
        })?
    }

    /// The tables this skinner was built from.
    #[must_use]
    pub fn tables(&self) -> &SkinTables {
        &self.tables
    }

    /// The skin pass's strategy: the one asked for, or the one
    /// [`SkinStrategy::Auto`] picked.
    #[must_use]
    pub fn strategy(&self) -> SkinStrategy {
        self.strategy
    }

    /// Invocations of the skin pass per instance.
    fn skin_lanes(strategy: SkinStrategy) -> u32 {
        if strategy == SkinStrategy::PerNode {
            SKIN_WORKGROUP_SIZE
        } else {
            1
        }
    }

    /// The most instances one dispatch handles (the sampler's capacity).
    #[must_use]
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Instances in the current table.
    #[must_use]
    pub fn instance_count(&self) -> u32 {
        self.instance_count
    }

    /// Prepares the next dispatches for the instances of `sampler`'s
    /// current table (set by [`GpuSampler::set_instances`]): writes the
    /// dispatch parameters only. The passes read the clip of each instance
    /// from the sampler's own instance table, so instances are given once.
    /// Call it after each `set_instances`, before [`record`](Self::record).
    ///
    /// # Errors
    /// [`RigError::OtherSampler`] when `sampler` is not the one this
    /// skinner was built from (its buffers are the ones bound); nothing is
    /// written then.
    ///
    /// [`GpuSampler::set_instances`]: crate::GpuSampler::set_instances
    pub fn prepare(&mut self, queue: &wgpu::Queue, sampler: &crate::GpuSampler) -> Result<()> {
        if sampler.instance_buffer() != &self.sampler_instances {
            return Err(RigError::OtherSampler.into());
        }
        // At most the sampler's capacity, which is this skinner's.
        let n = sampler.instance_count().min(self.capacity);
        queue.write_buffer(&self.params, 0, bytemuck::bytes_of(&self.tables.params(n)));
        let t = &self.tables;
        // The morph pass runs one invocation per (instance, mesh), none when
        // no mesh has morph targets (it would write nothing); the skin pass
        // one per instance (walking the instance's nodes, then joints).
        let morph_per = if t.morph_stride() > 0 {
            t.mesh_count()
        } else {
            0
        };
        let per_pass = [
            morph_per,
            u32::from(t.node_count() > 0) * Self::skin_lanes(self.strategy),
        ];
        for (g, per) in self.groups.iter_mut().zip(per_pass) {
            // Fits: checked against the capacity in new().
            *g = super::dispatch_grid(n * per, SKIN_WORKGROUP_SIZE, self.max_dim);
        }
        self.instance_count = n;
        Ok(())
    }

    /// Records the two dispatches into `encoder`, in one compute pass labelled
    /// `keyframe-gpu.skin`. Record it after the sampler's dispatch.
    pub fn record(&self, encoder: &mut wgpu::CommandEncoder) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("keyframe-gpu.skin"),
            timestamp_writes: None,
        });
        self.record_pass(&mut pass);
    }

    /// Records the two dispatches (morph weights; skin: local pose,
    /// hierarchy and joint matrices) into a compute pass the caller owns,
    /// after the sampler's dispatch.
    pub fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        for ((pipeline, bind_group), &(x, y)) in self
            .pipelines
            .iter()
            .zip(&self.bind_groups)
            .zip(&self.groups)
        {
            if x == 0 || y == 0 {
                continue;
            }
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, bind_group, &[]);
            pass.dispatch_workgroups(x, y, 1);
        }
    }

    /// Joint matrices, `array<mat4x4<f32>>`: instance `i`, joint slot `j`
    /// at `i * joint_count + j` (slots: see [`SkinTables::skin_offsets`]).
    #[must_use]
    pub fn joint_matrix_buffer(&self) -> &wgpu::Buffer {
        &self.joint_matrices
    }

    /// Morph weights, `array<f32>`: `i * morph_stride + weights_offset + k`.
    #[must_use]
    pub fn morph_weight_buffer(&self) -> &wgpu::Buffer {
        &self.morph_weights
    }

    /// Global node matrices, `array<mat4x4<f32>>`: `i * node_count + node`
    /// (a renderer takes the mesh node's model matrix from here).
    #[must_use]
    pub fn global_buffer(&self) -> &wgpu::Buffer {
        &self.globals
    }

    /// The bind group layouts of the two compute passes, in [`PASSES`]
    /// order.
    #[must_use]
    pub fn pass_layouts(&self) -> &[wgpu::BindGroupLayout] {
        &self.layouts
    }

    /// A read-only layout of the outputs for a renderer, visible to vertex,
    /// fragment and compute stages: binding 0 joint matrices, 1 morph
    /// weights, 2 global matrices.
    #[must_use]
    pub fn output_bind_group_layout(&self) -> &wgpu::BindGroupLayout {
        &self.output_layout
    }

    /// The bind group for [`output_bind_group_layout`](Self::output_bind_group_layout).
    #[must_use]
    pub fn output_bind_group(&self) -> &wgpu::BindGroup {
        &self.output_bind_group
    }

    fn read(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        buffer: &wgpu::Buffer,
        per_instance: u64,
    ) -> Result<Vec<f32>> {
        let bytes = u64::from(self.instance_count) * per_instance;
        if bytes == 0 {
            return Ok(Vec::new());
        }
        let staging = scoped(device, "GpuSkinner read back (copy)", || {
            let staging = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("keyframe-gpu.skin.readback"),
                size: bytes,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("keyframe-gpu.skin.readback"),
            });
            encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, bytes);
            queue.submit([encoder.finish()]);
            staging
        })?;
        read_mapped(device, &staging, bytes)
    }

    /// Optional readback of the joint matrices of the current instances:
    /// `instance_count * joint_count * 16` floats, column-major.
    ///
    /// # Errors
    /// [`Error::Readback`] or [`Error::Gpu`].
    pub fn read_back_joints(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Vec<f32>> {
        let per = u64::from(self.tables.joint_count()) * 64;
        self.read(device, queue, &self.joint_matrices, per)
    }

    /// Optional readback of every current instance's joint matrices, split
    /// per skin (column-major, in each skin's joint order, with the skin's
    /// mesh node): entry `i` is instance `i`. The GPU twin of
    /// [`crate::cpu_skin::joint_matrices`].
    ///
    /// # Errors
    /// [`Error::Readback`] or [`Error::Gpu`].
    pub fn read_back_skin_joints(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
    ) -> Result<Vec<Vec<SkinJoints>>> {
        let flat = self.read_back_joints(device, queue)?;
        let mats: Vec<[f32; 16]> = flat
            .chunks_exact(16)
            .map(|c| {
                let mut m = [0.0; 16];
                m.copy_from_slice(c);
                m
            })
            .collect();
        let per = self.tables.joint_count() as usize;
        Ok((0..self.instance_count as usize)
            .map(|i| {
                let block = mats.get(i * per..(i + 1) * per).unwrap_or(&[]);
                self.tables.split_joints(block)
            })
            .collect())
    }

    /// Optional readback of the global matrices (`instance_count *
    /// node_count * 16` floats).
    ///
    /// # Errors
    /// [`Error::Readback`] or [`Error::Gpu`].
    pub fn read_back_globals(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
    ) -> Result<Vec<f32>> {
        let per = u64::from(self.tables.node_count()) * 64;
        self.read(device, queue, &self.globals, per)
    }

    /// Optional readback of the morph weights (`instance_count *
    /// morph_stride` floats).
    ///
    /// # Errors
    /// [`Error::Readback`] or [`Error::Gpu`].
    pub fn read_back_morph_weights(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
    ) -> Result<Vec<f32>> {
        let per = u64::from(self.tables.morph_stride()) * 4;
        self.read(device, queue, &self.morph_weights, per)
    }
}
