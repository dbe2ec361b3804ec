// Local pose, global transforms and joint matrices, in one pass. Needs
// quat.wgsl and rig.wgsl (prepended by the host). CPU twin:
// src/cpu_skin.rs.
//
// skin_main: one invocation per instance, in three steps.
//
// 1. Local pose (local_matrix): for each node, translation, rotation and
//    scale are the sampler's output where a track of the instance's clip
//    animates them (channels[clip * node_count + node] holds the output
//    offset, -1 for rest), the node's rest value otherwise. The local
//    matrix is T * R * S, with the rotation normalized first. Locals are
//    never stored: each is computed in registers where step 2 needs it
//    (more than once only for an ancestor listed after a descendant).
//
// 2. Hierarchy (global_matrix): the nodes in index order, global[n] =
//    global[p] * L(a_k) * ... * L(a_1) * L(n), where a_1.. are n's
//    ancestors up to the first one, p, with a smaller index (already done
//    by this invocation). When the node table lists parents before
//    children (RigBuilder always does, exporters nearly always do), p is
//    the parent and every node costs one matrix product: O(nodes) per
//    instance, so a 64-deep chain costs 64 products, not 64 * 65 / 2 as
//    when every node walked up to the root on its own. A child listed
//    before its parent walks up until such an ancestor (or the root),
//    recomputing those ancestors' locals, so any order is right. The host
//    refuses cyclic rigs; the node_count bound only keeps a corrupt table
//    from looping forever. The previous node's global stays in registers,
//    so a node listed right after its parent (every node of a chain) reads
//    no global back. Every global is written to `globals` (a renderer
//    takes mesh nodes' model matrices from there, and step 3 reads them).
//
// 3. Joint matrices (joint_matrix), over the joint slots: joint =
//    inverse(global(mesh node)) * global(joint node) * inverse bind, reading
//    back the globals this invocation wrote in step 2. The inverse is
//    computed once per run of slots with the same mesh node (once per
//    skin), not once per joint.
//
// One invocation per instance, one dispatch: on the fallback adapter
// (lavapipe) that measured faster than separate pose, hierarchy and joint
// passes (no locals buffer written and read back, two dispatches and
// barriers fewer) and faster than one invocation per (instance, node or
// joint), because table reads indexed by the loop counter are the same for
// every lane. On a GPU with many more lanes than instances it leaves most
// of the chip idle; see GpuSkinner's documentation.

@group(0) @binding(0) var<uniform> params: SkinParams;
@group(0) @binding(1) var<storage, read> nodes: array<Node>;
@group(0) @binding(2) var<storage, read> channels: array<vec4<i32>>;
@group(0) @binding(3) var<storage, read> samples: array<f32>;
@group(0) @binding(4) var<storage, read> instance_clips: array<u32>;
@group(0) @binding(5) var<storage, read_write> globals: array<mat4x4<f32>>;
@group(0) @binding(6) var<storage, read> joints: array<Joint>;
@group(0) @binding(7) var<storage, read> inverse_binds: array<mat4x4<f32>>;
@group(0) @binding(8) var<storage, read_write> joint_matrices: array<mat4x4<f32>>;

const IDENTITY = mat4x4<f32>(
    vec4<f32>(1.0, 0.0, 0.0, 0.0),
    vec4<f32>(0.0, 1.0, 0.0, 0.0),
    vec4<f32>(0.0, 0.0, 1.0, 0.0),
    vec4<f32>(0.0, 0.0, 0.0, 1.0));

fn sample_vec3(at: u32) -> vec3<f32> {
    return vec3<f32>(samples[at], samples[at + 1u], samples[at + 2u]);
}

fn sample_vec4(at: u32) -> vec4<f32> {
    return vec4<f32>(samples[at], samples[at + 1u], samples[at + 2u], samples[at + 3u]);
}

// T * R * S for translation t, unit quaternion q (x, y, z, w) and scale s.
fn compose_trs(t: vec3<f32>, q: vec4<f32>, s: vec3<f32>) -> mat4x4<f32> {
    let x2 = q.x + q.x;
    let y2 = q.y + q.y;
    let z2 = q.z + q.z;
    let xx = q.x * x2;
    let xy = q.x * y2;
    let xz = q.x * z2;
    let yy = q.y * y2;
    let yz = q.y * z2;
    let zz = q.z * z2;
    let wx = q.w * x2;
    let wy = q.w * y2;
    let wz = q.w * z2;
    return mat4x4<f32>(
        vec4<f32>((1.0 - (yy + zz)) * s.x, (xy + wz) * s.x, (xz - wy) * s.x, 0.0),
        vec4<f32>((xy - wz) * s.y, (1.0 - (xx + zz)) * s.y, (yz + wx) * s.y, 0.0),
        vec4<f32>((xz + wy) * s.z, (yz - wx) * s.z, (1.0 - (xx + yy)) * s.z, 0.0),
        vec4<f32>(t, 1.0));
}

// The local matrix of node n for instance i, whose clip is `clip`
// (instance_clips[i], read once per instance by the caller).
fn local_matrix(i: u32, clip: u32, n: u32) -> mat4x4<f32> {
    let node = nodes[n];
    var t = node.translation.xyz;
    var r = node.rotation;
    var s = node.scale.xyz;
    if (clip < params.clip_count) {
        let ch = channels[clip * params.node_count + n];
        let base = i * params.output_stride;
        if (ch.x >= 0) {
            t = sample_vec3(base + u32(ch.x));
        }
        if (ch.y >= 0) {
            r = sample_vec4(base + u32(ch.y));
        }
        if (ch.z >= 0) {
            s = sample_vec3(base + u32(ch.z));
        }
    }
    return compose_trs(t, quat_normalize(r), s);
}

// The global matrix of node n for instance i, given its local matrix
// `local`, the globals of this instance's nodes 0..n-1 in `globals` and
// node n-1's in `previous` (kept in registers so that a node right after
// its parent does not read it back). Ancestors with an index >= n (a child
// listed before its parent) have their locals recomputed.
fn global_matrix(i: u32, clip: u32, n: u32, local: mat4x4<f32>,
                 previous: mat4x4<f32>) -> mat4x4<f32> {
    let base = i * params.node_count;
    var m = local;
    var p = nodes[n].parent;
    for (var step = 0u; step < params.node_count && p >= i32(n); step++) {
        m = local_matrix(i, clip, u32(p)) * m;
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

// Joint matrix of joint slot j for instance i, given the inverse of the
// global of the joint's mesh node (the identity when it has none).
fn joint_matrix(i: u32, j: u32, mesh_inverse: mat4x4<f32>) -> mat4x4<f32> {
    let base = i * params.node_count;
    return mesh_inverse * globals[base + joints[j].node] * inverse_binds[j];
}

@compute @workgroup_size(SKIN_WORKGROUP_SIZE)
fn skin_main(@builtin(global_invocation_id) gid: vec3<u32>,
             @builtin(num_workgroups) groups: vec3<u32>) {
    let i = flat_index(gid, groups);
    if (i >= params.instance_count) {
        return;
    }
    let base = i * params.node_count;
    let clip = instance_clips[i];
    // Steps 1 and 2: locals and globals.
    var previous = IDENTITY;
    for (var n = 0u; n < params.node_count; n++) {
        previous = global_matrix(i, clip, n, local_matrix(i, clip, n), previous);
        globals[base + n] = previous;
    }
    // Step 3: joint matrices.
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
