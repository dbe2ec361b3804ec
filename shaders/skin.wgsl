// Global transforms and joint matrices. Needs rig.wgsl (prepended by the
// host). CPU twin: src/cpu_skin.rs.
//
// hierarchy_main: one invocation per instance. It visits the nodes in index
// order and computes global[n] = global[p] * L(a_k) * ... * L(a_1) * L(n),
// where a_1.. are n's ancestors up to the first one, p, with a smaller
// index (already done by this invocation). When the node table lists
// parents before children (RigBuilder always does, exporters nearly always
// do), p is the parent and every node costs one matrix product: O(nodes)
// per instance, so a 64-deep chain costs 64 products, not 64 * 65 / 2 as
// when every node walked up to the root on its own. A child listed before
// its parent walks up until such an ancestor (or the root), so any order is
// right. The host refuses cyclic rigs; the node_count bound only keeps a
// corrupt table from looping forever.
//
// The previous node's global stays in registers, so a node listed right
// after its parent (every node of a chain) reads no global back.
//
// joints_main: one invocation per instance, over its joint slots:
// joint = inverse(global(mesh node)) * global(joint node) * inverse bind.
// The inverse is computed once per run of slots with the same mesh node
// (once per skin), not once per joint.
//
// Both run one invocation per instance: on the fallback adapter (lavapipe)
// that measured faster than one per (instance, node or joint), because
// table reads indexed by the loop counter are the same for every lane.

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

// The global matrix of node n for instance i, given the globals of this
// instance's nodes 0..n-1 (`previous`: node n-1's, kept in registers so that
// a node right after its parent does not read it back).
fn global_matrix(i: u32, n: u32, previous: mat4x4<f32>) -> mat4x4<f32> {
    let base = i * params.node_count;
    var m = locals[base + n];
    var p = nodes[n].parent;
    for (var step = 0u; step < params.node_count && p >= i32(n); step++) {
        m = locals[base + u32(p)] * m;
        p = nodes[u32(p)].parent;
    }
    if (p >= 0 && p + 1 == i32(n)) {
        m = previous * m;
    } else if (p >= 0 && p < i32(n)) {
        m = globals[base + u32(p)] * m;
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
    let i = flat_index(gid, groups);
    if (i >= params.instance_count) {
        return;
    }
    var previous = IDENTITY;
    for (var n = 0u; n < params.node_count; n++) {
        previous = global_matrix(i, n, previous);
        globals[i * params.node_count + n] = previous;
    }
}

// Joint matrix of joint slot j for instance i, given the inverse of the
// global of the joint's mesh node (the identity when it has none).
fn joint_matrix(i: u32, j: u32, mesh_inverse: mat4x4<f32>) -> mat4x4<f32> {
    let base = i * params.node_count;
    return mesh_inverse * globals[base + joints[j].node] * inverse_binds[j];
}

@compute @workgroup_size(SKIN_WORKGROUP_SIZE)
fn joints_main(@builtin(global_invocation_id) gid: vec3<u32>,
               @builtin(num_workgroups) groups: vec3<u32>) {
    let i = flat_index(gid, groups);
    if (i >= params.instance_count) {
        return;
    }
    let base = i * params.node_count;
    var mesh_node = -1;
    var mesh_inverse = IDENTITY;
    for (var j = 0u; j < params.joint_count; j++) {
        let node = joints[j].mesh_node;
        if (node != mesh_node) {
            mesh_node = node;
            mesh_inverse = IDENTITY;
            if (node >= 0) {
                mesh_inverse = affine_inverse(globals[base + u32(node)]);
            }
        }
        joint_matrices[i * params.joint_count + j] = joint_matrix(i, j, mesh_inverse);
    }
}
