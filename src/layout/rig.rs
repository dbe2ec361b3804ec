//! The rig passes' side of the layout (pose, morph, hierarchy and joint
//! matrices): the node, mesh, joint, local-pose and parameter structs, the
//! rig constants, and the bindings of `pose.wgsl` and `skin.wgsl`.

use std::mem::size_of;

use bytemuck::{Pod, Zeroable};

use super::{binding, Binding, BindingKind, GpuInstance};

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

/// [`GpuMesh::node`] of a mesh no node uses (WGSL `NO_NODE`).
pub(crate) const NO_NODE: u32 = u32::MAX;
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

const _: () = assert!(std::mem::size_of::<GpuNode>() == 64);
const _: () = assert!(std::mem::offset_of!(GpuNode, parent) == 48);
const _: () = assert!(std::mem::size_of::<GpuMesh>() == 16);
const _: () = assert!(std::mem::size_of::<GpuJoint>() == 16);
const _: () = assert!(std::mem::size_of::<GpuSkinParams>() == 64);
const _: () = assert!(std::mem::size_of::<GpuLocalPose>() == 48);

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
