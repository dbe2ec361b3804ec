// Rig tables shared by pose.wgsl and skin.wgsl (prepended by the host).
// Rust twins: GpuNode, GpuMesh, GpuJoint, GpuSkinParams in src/rig.rs.

struct Node {
    translation: vec4<f32>,  // xyz used
    rotation: vec4<f32>,     // x, y, z, w
    scale: vec4<f32>,        // xyz used
    parent: i32,             // -1: root
    mesh: i32,               // -1: none
    _pad0: u32,
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
    _pad: u32,
}

struct SkinParams {
    instance_count: u32,
    node_count: u32,
    joint_count: u32,
    mesh_count: u32,
    morph_stride: u32,
    output_stride: u32,      // the sampler's floats per instance
    clip_count: u32,
    _pad: u32,
}

const SKIN_WORKGROUP_SIZE: u32 = 64u;

// Flat invocation index of a (possibly 2D) dispatch.
fn flat_index(gid: vec3<u32>, groups: vec3<u32>) -> u32 {
    return gid.y * (groups.x * SKIN_WORKGROUP_SIZE) + gid.x;
}
