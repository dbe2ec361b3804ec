//! The plugin's own compute pass after the crate's: world-space joint
//! matrices per character (`shaders/world_joints.wgsl`), so that the
//! vertex stage of a skinned mesh blends four matrices and is done, as
//! Bevy's own skinning is. The matrices a vertex would otherwise go
//! through (the entity's world matrix, the scene's rest placement, the
//! skin node's world matrix) are multiplied once per joint here instead
//! of once per vertex and pass.

use bevy::math::Mat4;
use keyframe_gpu::{AnimatorChunk, Rig};

const WORKGROUP: u32 = 64;
const MAX_GROUPS_X: u32 = 65_535;
const MATRIX_BYTES: u64 = 64;

/// The pass's pipeline, made once per device.
pub(crate) struct WorldJointsPipeline {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

/// One chunk's inputs and output.
pub(crate) struct ChunkWorldJoints {
    placements: wgpu::Buffer,
    /// The world-space joint matrices, which the materials bind.
    pub(crate) output: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    /// Characters of the chunk.
    characters: u32,
    groups: (u32, u32),
}

impl WorldJointsPipeline {
    pub(crate) fn new(device: &wgpu::Device) -> Self {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("keyframe_gpu_bevy.world_joints"),
            source: wgpu::ShaderSource::Wgsl(include_str!("shaders/world_joints.wgsl").into()),
        });
        let entry = |binding, ty| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let read = wgpu::BufferBindingType::Storage { read_only: true };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("keyframe_gpu_bevy.world_joints"),
            entries: &[
                entry(0, wgpu::BufferBindingType::Uniform),
                entry(1, read),
                entry(2, read),
                entry(3, read),
                entry(4, read),
                entry(5, wgpu::BufferBindingType::Storage { read_only: false }),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("keyframe_gpu_bevy.world_joints"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("keyframe_gpu_bevy.world_joints"),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some("main"),
            compilation_options: wgpu::PipelineCompilationOptions::default(),
            cache: None,
        });
        WorldJointsPipeline { pipeline, layout }
    }

    /// The pass's buffers for one chunk of `characters` characters of a
    /// model of rig `rig`, reading `animator`'s joint and world matrices.
    /// `None` when the animator has no rig outputs.
    pub(crate) fn chunk(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        rig: &Rig,
        animator: &AnimatorChunk,
        characters: u32,
    ) -> Option<ChunkWorldJoints> {
        let joints = animator.joint_matrix_buffer()?;
        let worlds = animator.world_matrix_buffer()?;
        let layout = rig.output_layout();
        let per_character = layout.joints().max(1);
        let storage = |label, size: u64, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: size.max(16),
                usage: wgpu::BufferUsages::STORAGE | usage,
                mapped_at_creation: false,
            })
        };
        let placements = storage(
            "keyframe_gpu_bevy.placements",
            u64::from(characters) * MATRIX_BYTES,
            wgpu::BufferUsages::COPY_DST,
        );
        // COPY_SRC: a game (or a test) may read the matrices back.
        let output = storage(
            "keyframe_gpu_bevy.world_joints",
            joints.size(),
            wgpu::BufferUsages::COPY_SRC,
        );
        let nodes = joint_nodes(rig, per_character);
        let joint_nodes = storage(
            "keyframe_gpu_bevy.joint_nodes",
            nodes.len() as u64 * 4,
            wgpu::BufferUsages::COPY_DST,
        );
        let invocations = characters.saturating_mul(per_character);
        let groups = invocations.div_ceil(WORKGROUP).max(1);
        let groups = (
            groups.min(MAX_GROUPS_X),
            groups.div_ceil(MAX_GROUPS_X).max(1),
        );
        let params = [characters, per_character, layout.nodes(), groups.0];
        let uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("keyframe_gpu_bevy.world_joints_params"),
            size: 16,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        // Written through the queue, not mapped at creation: on a device
        // that is lost but not yet known to be, a mapping panics in wgpu,
        // a write is an error Bevy's handler hears of.
        queue.write_buffer(&uniform, 0, bytemuck::cast_slice(&params));
        queue.write_buffer(&joint_nodes, 0, bytemuck::cast_slice(&nodes));
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("keyframe_gpu_bevy.world_joints"),
            layout: &self.layout,
            entries: &[
                bind(0, &uniform),
                bind(1, joints),
                bind(2, worlds),
                bind(3, &placements),
                bind(4, &joint_nodes),
                bind(5, &output),
            ],
        });
        Some(ChunkWorldJoints {
            placements,
            output,
            bind_group,
            characters,
            groups,
        })
    }

    /// Records the pass of every chunk in `chunks`.
    pub(crate) fn record<'a>(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        chunks: impl Iterator<Item = &'a ChunkWorldJoints>,
    ) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("keyframe_gpu_bevy.world_joints"),
            timestamp_writes: None,
        });
        pass.set_pipeline(&self.pipeline);
        for chunk in chunks {
            pass.set_bind_group(0, &chunk.bind_group, &[]);
            pass.dispatch_workgroups(chunk.groups.0, chunk.groups.1, 1);
        }
    }
}

impl ChunkWorldJoints {
    /// Writes the chunk's characters' placements: `placements` starts at
    /// the chunk's first character (missing ones are zero: not drawn).
    pub(crate) fn write(&self, queue: &wgpu::Queue, placements: &[Mat4], scratch: &mut Vec<f32>) {
        scratch.clear();
        scratch.extend(
            placements
                .iter()
                .take(self.characters as usize)
                .flat_map(Mat4::to_cols_array),
        );
        if !scratch.is_empty() {
            queue.write_buffer(&self.placements, 0, bytemuck::cast_slice(scratch));
        }
    }
}

fn bind(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: buffer.as_entire_binding(),
    }
}

/// Per joint of a character's block, the node whose world matrix places
/// its skin: the skin node of the part whose joints those are (0 for a
/// joint of no part, which no vertex reads).
fn joint_nodes(rig: &Rig, per_character: u32) -> Vec<u32> {
    let mut nodes = vec![0; per_character as usize];
    for part in rig.parts() {
        let Some(range) = part.joints else {
            continue;
        };
        let node = part.skin_node.unwrap_or(part.node);
        for j in range {
            if let Some(n) = nodes.get_mut(j as usize) {
                *n = node;
            }
        }
    }
    nodes
}
