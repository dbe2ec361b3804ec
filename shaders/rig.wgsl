// Rig tables shared by pose.wgsl and skin.wgsl (prepended by the host).
// Rust twins: GpuNode, GpuMesh, GpuJoint, GpuSkinParams in src/rig.rs.

struct Node {
    translation: vec4<f32>,  // xyz used
    rotation: vec4<f32>,     // x, y, z, w
    scale: vec4<f32>,        // xyz used
    parent: i32,             // -1: root
    mesh: i32,               // -1: none
    first_joint: i32,        // first joint slot whose joint node this is, -1: none
    _pad1: u32,
}

struct Mesh {
    weights_offset: u32,     // in an instance's morph-weight block
    target_count: u32,
    defaults_offset: u32,    // in default_weights
    _pad: u32,
}

struct Joint {
    node: u32,               // the joint node
    mesh_node: i32,          // the skin's mesh node, -1: none
    skin: u32,
    next_joint: i32,         // next slot with the same joint node, -1: none
}

struct SkinParams {
    instance_count: u32,
    node_count: u32,
    joint_count: u32,
    mesh_count: u32,
    morph_stride: u32,
    output_stride: u32,      // the sampler's floats per instance
    clip_count: u32,
    skin_count: u32,
    mesh_nodes: vec4<i32>,   // skins 0..3's mesh nodes (-1: none) when
                             // skin_count <= MAX_FUSED_SKINS
}

// Rigs with at most this many skins get their joint matrices inside the
// hierarchy walk (skin.wgsl); more skins take a separate joint loop.
const MAX_FUSED_SKINS: u32 = 4u;

const SKIN_WORKGROUP_SIZE: u32 = 64u;

// Flat invocation index of a (possibly 2D) dispatch.
fn flat_index(gid: vec3<u32>, groups: vec3<u32>) -> u32 {
    return gid.y * (groups.x * SKIN_WORKGROUP_SIZE) + gid.x;
}
