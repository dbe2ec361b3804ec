// Global transforms and joint matrices. Needs rig.wgsl (prepended by the
// host). CPU twin: src/cpu_skin.rs.
//
// hierarchy_main: one invocation per (instance, node). It walks up the
// parent chain, multiplying local matrices: global = L(root) * ... *
// L(parent) * L(node). O(depth) per node, no ordering of the node table
// needed and a single dispatch for any depth (a 64-deep chain costs 64
// matrix products for its deepest node). The host refuses cyclic rigs; the
// node_count bound only keeps a corrupt table from looping forever.
//
// joints_main: one invocation per (instance, joint slot):
// joint = inverse(global(mesh node)) * global(joint node) * inverse bind.

@group(0) @binding(0) var<uniform> params: SkinParams;
@group(0) @binding(1) var<storage, read> nodes: array<Node>;
@group(0) @binding(2) var<storage, read> locals: array<mat4x4<f32>>;
@group(0) @binding(3) var<storage, read_write> globals: array<mat4x4<f32>>;
@group(0) @binding(4) var<storage, read> joints: array<Joint>;
@group(0) @binding(5) var<storage, read> inverse_binds: array<mat4x4<f32>>;
@group(0) @binding(6) var<storage, read_write> joint_matrices: array<mat4x4<f32>>;

const IDENTITY = mat4x4<f32>(
    vec4<f32>(1.0, 0.0, 0.0, 0.0),
    vec4<f32>(0.0, 1.0, 0.0, 0.0),
    vec4<f32>(0.0, 0.0, 1.0, 0.0),
    vec4<f32>(0.0, 0.0, 0.0, 1.0));

// The global matrix of node n for instance i.
fn global_matrix(i: u32, n: u32) -> mat4x4<f32> {
    let base = i * params.node_count;
    var m = locals[base + n];
    var p = nodes[n].parent;
    for (var step = 0u; step < params.node_count && p >= 0; step++) {
        m = locals[base + u32(p)] * m;
        p = nodes[u32(p)].parent;
    }
    return m;
}

// Inverse of an affine matrix (last row 0, 0, 0, 1): the 3x3 part by
// cofactors (its inverse's rows are b x c, c x a, a x b over the
// determinant), then the translation. A singular 3x3 part (a zero scale)
// gives the identity.
fn affine_inverse(m: mat4x4<f32>) -> mat4x4<f32> {
    let a = m[0].xyz;
    let b = m[1].xyz;
    let c = m[2].xyz;
    let r0 = cross(b, c);
    let r1 = cross(c, a);
    let r2 = cross(a, b);
    let det = dot(a, r0);
    if (det == 0.0) {
        return IDENTITY;
    }
    let inv_det = 1.0 / det;
    let i0 = r0 * inv_det;
    let i1 = r1 * inv_det;
    let i2 = r2 * inv_det;
    let inv = mat3x3<f32>(
        vec3<f32>(i0.x, i1.x, i2.x),
        vec3<f32>(i0.y, i1.y, i2.y),
        vec3<f32>(i0.z, i1.z, i2.z));
    let t = -(inv * m[3].xyz);
    return mat4x4<f32>(vec4<f32>(inv[0], 0.0), vec4<f32>(inv[1], 0.0), vec4<f32>(inv[2], 0.0),
        vec4<f32>(t, 1.0));
}

@compute @workgroup_size(SKIN_WORKGROUP_SIZE)
fn hierarchy_main(@builtin(global_invocation_id) gid: vec3<u32>,
                  @builtin(num_workgroups) groups: vec3<u32>) {
    let index = flat_index(gid, groups);
    if (params.node_count == 0u || index >= params.instance_count * params.node_count) {
        return;
    }
    globals[index] = global_matrix(index / params.node_count, index % params.node_count);
}

// Joint matrix of joint slot j for instance i.
fn joint_matrix(i: u32, j: u32) -> mat4x4<f32> {
    let joint = joints[j];
    let base = i * params.node_count;
    var mesh_inverse = IDENTITY;
    if (joint.mesh_node >= 0) {
        mesh_inverse = affine_inverse(globals[base + u32(joint.mesh_node)]);
    }
    return mesh_inverse * globals[base + joint.node] * inverse_binds[j];
}

@compute @workgroup_size(SKIN_WORKGROUP_SIZE)
fn joints_main(@builtin(global_invocation_id) gid: vec3<u32>,
               @builtin(num_workgroups) groups: vec3<u32>) {
    let index = flat_index(gid, groups);
    if (params.joint_count == 0u || index >= params.instance_count * params.joint_count) {
        return;
    }
    joint_matrices[index] = joint_matrix(index / params.joint_count, index % params.joint_count);
}
