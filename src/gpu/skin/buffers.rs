//! The skinner's limits check and buffers: the tables uploaded once, the
//! outputs, and the `(binding, resource)` pairs the passes are bound with.

use crate::error::{Error, Result};
use crate::gpu::GpuSampler;
use crate::layout::{GpuJoint, GpuNode, GpuSkinParams};
use crate::layout::{GpuLocalPose, SKIN_WORKGROUP_SIZE, UNIFORM_HEAD};
use crate::tables::rig::SkinTables;

use crate::layout::GpuMixAction;
use crate::plan::lanes_per_instance;
use crate::plan::passes::{Lanes, Pass};

fn check_storage(limits: &wgpu::Limits, what: &'static str, bytes: u64) -> Result<()> {
    crate::gpu::check_size(limits, what, bytes, false)
}

/// Output sizes in bytes for `capacity` instances (at least one element
/// each, the bindings' minimum).
pub(super) struct Sizes {
    pub(crate) globals: u64,
    pub(crate) joints: u64,
    pub(crate) morph: u64,
    pub(crate) locals: u64,
}

impl Sizes {
    pub(crate) fn new(tables: &SkinTables, capacity: u32) -> Self {
        let cap = u64::from(capacity);
        let nodes = u64::from(tables.node_count());
        let pose = std::mem::size_of::<GpuLocalPose>() as u64;
        Sizes {
            globals: (cap * nodes * 64).max(64),
            joints: (cap * u64::from(tables.joint_count()) * 64).max(64),
            morph: (cap * u64::from(tables.morph_stride()) * 4).max(4),
            locals: (cap * nodes * pose).max(pose),
        }
    }
}

/// The mixer's capacity and masks, for the buffers of a skinner with a
/// mixer.
#[derive(Debug, Clone, Copy)]
pub(super) struct MixSpec<'a> {
    /// Actions per character.
    pub(crate) per_character: u32,
    /// Every mask's factors, mask after mask.
    pub(crate) masks: &'a [f32],
}

impl MixSpec<'_> {
    fn action_bytes(&self, capacity: u32) -> u64 {
        u64::from(capacity)
            * u64::from(self.per_character)
            * std::mem::size_of::<GpuMixAction>() as u64
    }
}

/// Checks every buffer of `passes` (locals when `staged`, the mixer's
/// tables with `mix`) against the storage and uniform limits and every
/// pass's dispatch against the workgroup-count limit, for `capacity`
/// instances, before anything is created.
pub(super) fn check_limits(
    limits: &wgpu::Limits,
    tables: &SkinTables,
    capacity: u32,
    passes: &[Pass],
    staged: bool,
    mix: Option<MixSpec<'_>>,
) -> Result<()> {
    let sizes = Sizes::new(tables, capacity);
    check_storage(limits, "global matrices", sizes.globals)?;
    check_storage(limits, "joint matrices", sizes.joints)?;
    check_storage(limits, "morph weights", sizes.morph)?;
    if staged {
        check_storage(limits, "local poses", sizes.locals)?;
    }
    if let Some(mix) = mix {
        check_storage(limits, "mixer actions", mix.action_bytes(capacity))?;
        check_storage(
            limits,
            "mixer masks",
            std::mem::size_of_val(mix.masks) as u64,
        )?;
    }
    check_storage(
        limits,
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
    let max_dim = limits.max_compute_workgroups_per_dimension.max(1);
    let max_inv = u64::from(max_dim) * u64::from(max_dim) * u64::from(SKIN_WORKGROUP_SIZE);
    for pass in passes {
        let what = match pass.lanes {
            Lanes::Node => "dispatch (instances x nodes)",
            Lanes::Mesh => "dispatch (instances x meshes)",
            Lanes::One | Lanes::Workgroup => "dispatch (instances)",
            Lanes::Pointer => "dispatch (characters x pointer targets)",
        };
        let needed = u64::from(capacity) * u64::from(lanes_per_instance(tables, pass.lanes));
        if needed > max_inv.min(u64::from(u32::MAX)) {
            return Err(Error::LimitExceeded {
                what,
                needed,
                limit_name: "max_compute_workgroups_per_dimension",
                limit: u64::from(max_dim),
            });
        }
    }
    Ok(())
}

/// A buffer of `size` bytes (a multiple of 64) of 4x4 matrices, matrix
/// `m` the identity with the last row of `last_rows[m % last_rows.len()]`
/// (the identity's own, 0, 0, 0, 1, when `last_rows` is empty). The skin
/// kernels write only the first three rows of the global and joint
/// matrices (`skin_io.wgsl`), or whole columns with the last row the
/// products give (`skin_io_wide.wgsl`): a global's last row is always
/// 0, 0, 0, 1, and a joint matrix's is its inverse bind's, the other
/// factors being affine (exactly 0, 0, 0, 1 where every inverse bind is
/// affine: the product writes those, +0 where an inverse bind stores -0).
/// The buffer holds those rows from the start, so both store files leave
/// the same bits.
fn matrices_with_last_rows(
    device: &wgpu::Device,
    label: &'static str,
    size: u64,
    usage: wgpu::BufferUsages,
    last_rows: &[[f32; 16]],
) -> Result<wgpu::Buffer> {
    let identity = glam::Mat4::IDENTITY.to_cols_array();
    let pattern: Vec<f32> = if last_rows.is_empty() {
        identity.to_vec()
    } else {
        last_rows
            .iter()
            .flat_map(|m| {
                let mut out = identity;
                for c in 0..4 {
                    out[4 * c + 3] = m[4 * c + 3];
                }
                out
            })
            .collect()
    };
    let pattern: &[u8] = bytemuck::cast_slice(&pattern);
    super::super::buffer_filled(device, label, size, usage, |view| {
        let len = view.len();
        for at in (0..len).step_by(pattern.len()) {
            let n = pattern.len().min(len - at);
            view.slice(at..at + n).copy_from_slice(&pattern[..n]);
        }
    })
}

/// Every buffer the passes bind, but the sampler's.
#[derive(Debug)]
pub(super) struct Buffers {
    pub(crate) params: wgpu::Buffer,
    nodes: wgpu::Buffer,
    channels: wgpu::Buffer,
    meshes: wgpu::Buffer,
    default_weights: wgpu::Buffer,
    morph_channels: wgpu::Buffer,
    joints: wgpu::Buffer,
    inverse_binds: wgpu::Buffer,
    nodes_head: wgpu::Buffer,
    channels_head: wgpu::Buffer,
    joints_head: wgpu::Buffer,
    inverse_binds_head: wgpu::Buffer,
    pub(crate) globals: wgpu::Buffer,
    pub(crate) joint_matrices: wgpu::Buffer,
    pub(crate) morph_weights: wgpu::Buffer,
    /// Staged only: the pose stage's output.
    pub(crate) locals: Option<wgpu::Buffer>,
    /// With a mixer: its tables.
    pub(crate) mix: Option<MixBuffers>,
}

/// The mixer's tables: actions and character ranges (written per frame)
/// and masks (uploaded once).
#[derive(Debug)]
pub(super) struct MixBuffers {
    pub(crate) actions: wgpu::Buffer,
    pub(crate) characters: wgpu::Buffer,
    masks: wgpu::Buffer,
    pointer_channels: wgpu::Buffer,
    pointer_targets: wgpu::Buffer,
    pointer_rest: wgpu::Buffer,
    /// The blended pointer properties (output).
    pub(crate) properties: wgpu::Buffer,
}

impl Buffers {
    /// Uploads `tables` and creates the outputs for `capacity` instances
    /// (the locals too when `staged`). Call inside an error scope.
    pub(crate) fn new(
        device: &wgpu::Device,
        tables: &SkinTables,
        capacity: u32,
        staged: bool,
        mix: Option<MixSpec<'_>>,
    ) -> Result<Self> {
        let out_usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
        let sizes = Sizes::new(tables, capacity);
        let node_size = std::mem::size_of::<GpuNode>();
        let joint_size = std::mem::size_of::<GpuJoint>();
        let nodes = bytemuck::cast_slice(tables.nodes());
        let channels = bytemuck::cast_slice(tables.channels());
        let joints = bytemuck::cast_slice(tables.joints());
        let inverse_binds = bytemuck::cast_slice(tables.inverse_binds());
        let init = |label: &'static str, contents: &[u8], min: usize| {
            storage_init(device, label, contents, min)
        };
        let head = |label: &'static str, table: &[u8], entry: usize| {
            uniform_head(device, label, table, entry)
        };
        Ok(Buffers {
            params: empty(
                device,
                "keyframe-gpu.skin.params",
                std::mem::size_of::<GpuSkinParams>() as u64,
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            ),
            nodes: init("keyframe-gpu.skin.nodes", nodes, node_size)?,
            channels: init("keyframe-gpu.skin.channels", channels, 16)?,
            meshes: init(
                "keyframe-gpu.skin.meshes",
                bytemuck::cast_slice(tables.meshes()),
                16,
            )?,
            default_weights: init(
                "keyframe-gpu.skin.default_weights",
                bytemuck::cast_slice(tables.default_weights()),
                4,
            )?,
            morph_channels: init(
                "keyframe-gpu.skin.morph_channels",
                bytemuck::cast_slice(tables.morph_channels()),
                4,
            )?,
            joints: init("keyframe-gpu.skin.joints", joints, joint_size)?,
            inverse_binds: init("keyframe-gpu.skin.inverse_binds", inverse_binds, 64)?,
            nodes_head: head("keyframe-gpu.skin.nodes_head", nodes, node_size)?,
            channels_head: head("keyframe-gpu.skin.channels_head", channels, 16)?,
            joints_head: head("keyframe-gpu.skin.joints_head", joints, joint_size)?,
            inverse_binds_head: head("keyframe-gpu.skin.inverse_binds_head", inverse_binds, 64)?,
            globals: matrices_with_last_rows(
                device,
                "keyframe-gpu.skin.globals",
                sizes.globals,
                out_usage,
                &[],
            )?,
            // Joint slot j of every instance: inverse bind j's last row
            // (0, 0, 0, 1 where they are all affine).
            joint_matrices: matrices_with_last_rows(
                device,
                "keyframe-gpu.skin.joint_matrices",
                sizes.joints,
                out_usage,
                if tables.inverse_binds_are_affine() {
                    &[]
                } else {
                    tables.inverse_binds()
                },
            )?,
            morph_weights: empty(
                device,
                "keyframe-gpu.skin.morph_weights",
                sizes.morph,
                out_usage,
            ),
            // Also written by the host or another pass (a mixer).
            locals: staged.then(|| {
                let usage = out_usage | wgpu::BufferUsages::COPY_DST;
                empty(device, "keyframe-gpu.skin.locals", sizes.locals, usage)
            }),
            mix: match mix {
                None => None,
                Some(spec) => Some(MixBuffers::new(device, tables, capacity, &spec)?),
            },
        })
    }

    /// `(binding number, resource)` of every binding of the skin module
    /// (pose.wgsl's and skin.wgsl's: `src/layout/`,
    /// `SKIN_MODULE_BINDINGS`), reading `sampler`'s output and instance
    /// table; `locals` only when it exists.
    pub(crate) fn resources<'a>(
        &'a self,
        sampler: &'a GpuSampler,
    ) -> Vec<(u32, wgpu::BindingResource<'a>)> {
        let mut all = vec![
            (0, self.params.as_entire_binding()),
            (1, self.nodes.as_entire_binding()),
            (2, self.channels.as_entire_binding()),
            (3, sampler.output_buffer().as_entire_binding()),
            (4, sampler.instance_buffer().as_entire_binding()),
            (6, self.meshes.as_entire_binding()),
            (7, self.default_weights.as_entire_binding()),
            (8, self.morph_channels.as_entire_binding()),
            (9, self.morph_weights.as_entire_binding()),
            (10, self.nodes_head.as_entire_binding()),
            (11, self.channels_head.as_entire_binding()),
            (12, self.globals.as_entire_binding()),
            (13, self.joints.as_entire_binding()),
            (14, self.inverse_binds.as_entire_binding()),
            (15, self.joint_matrices.as_entire_binding()),
            (16, self.inverse_binds_head.as_entire_binding()),
            (17, self.joints_head.as_entire_binding()),
        ];
        if let Some(locals) = &self.locals {
            all.push((5, locals.as_entire_binding()));
        }
        if let Some(mix) = &self.mix {
            all.push((18, mix.actions.as_entire_binding()));
            all.push((19, mix.characters.as_entire_binding()));
            all.push((20, mix.masks.as_entire_binding()));
            all.push((21, mix.pointer_channels.as_entire_binding()));
            all.push((22, mix.pointer_targets.as_entire_binding()));
            all.push((23, mix.pointer_rest.as_entire_binding()));
            all.push((24, mix.properties.as_entire_binding()));
        }
        all
    }
}

impl MixBuffers {
    /// The mixer's tables for `capacity` characters: the per-frame action
    /// and character tables (empty), the masks and the pointer tables
    /// (uploaded), and the blended properties (output).
    fn new(
        device: &wgpu::Device,
        tables: &SkinTables,
        capacity: u32,
        spec: &MixSpec<'_>,
    ) -> Result<Self> {
        // Also written by the playback pass (and read back by its tests).
        let table = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC;
        let out_usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
        let init = |label: &'static str, contents: &[u8], min: usize| {
            storage_init(device, label, contents, min)
        };
        Ok(MixBuffers {
            actions: empty(
                device,
                "keyframe-gpu.mix.actions",
                spec.action_bytes(capacity)
                    .max(std::mem::size_of::<GpuMixAction>() as u64),
                table,
            ),
            characters: empty(
                device,
                "keyframe-gpu.mix.characters",
                (u64::from(capacity) * 8).max(8),
                table,
            ),
            masks: init(
                "keyframe-gpu.mix.masks",
                bytemuck::cast_slice(spec.masks),
                4,
            )?,
            pointer_channels: init(
                "keyframe-gpu.mix.pointer_channels",
                bytemuck::cast_slice(tables.pointer_channels()),
                4,
            )?,
            pointer_targets: init(
                "keyframe-gpu.mix.pointer_targets",
                bytemuck::cast_slice(tables.pointer_targets()),
                16,
            )?,
            pointer_rest: init(
                "keyframe-gpu.mix.pointer_rest",
                bytemuck::cast_slice(tables.pointer_rest()),
                4,
            )?,
            properties: empty(
                device,
                "keyframe-gpu.mix.properties",
                (u64::from(capacity) * u64::from(tables.property_stride()) * 4).max(4),
                out_usage,
            ),
        })
    }
}

/// A storage table with `contents`, or `min` zero bytes when it is empty
/// (a binding is never zero-sized).
fn storage_init(
    device: &wgpu::Device,
    label: &'static str,
    contents: &[u8],
    min: usize,
) -> Result<wgpu::Buffer> {
    let zeros;
    let contents = if contents.is_empty() {
        zeros = vec![0u8; min];
        &zeros[..]
    } else {
        contents
    };
    super::super::buffer_init(device, label, contents, wgpu::BufferUsages::STORAGE)
}

/// A uniform copy of the first `UNIFORM_HEAD` entries (`entry` bytes each)
/// of `table`, zero-padded.
fn uniform_head(
    device: &wgpu::Device,
    label: &'static str,
    table: &[u8],
    entry: usize,
) -> Result<wgpu::Buffer> {
    let mut bytes = vec![0u8; UNIFORM_HEAD as usize * entry];
    let len = table.len().min(bytes.len());
    bytes[..len].copy_from_slice(&table[..len]);
    super::super::buffer_init(device, label, &bytes, wgpu::BufferUsages::UNIFORM)
}

/// An uninitialized buffer of `size` bytes.
fn empty(device: &wgpu::Device, label: &str, size: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage,
        mapped_at_creation: false,
    })
}
