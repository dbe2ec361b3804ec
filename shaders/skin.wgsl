// The hierarchy and joint-matrix stage: global transforms from the local
// poses, then joint matrices. Needs prelude.wgsl, quat.wgsl, pose.wgsl
// (the fused kernels call its local_pose(), and its bindings are this
// module's too) and either pose_nodes.wgsl and skin_io.wgsl or
// skin_io_wide.wgsl (node_at(), inverse_bind() and the matrix stores),
// prepended by the host. CPU twin: src/cpu/skin.rs.
//
// Three kernels, one per SkinStrategy, the same results up to rounding:
//
// hierarchy_main (Staged, the reference): one invocation per instance,
//   reading the local poses that pose_main (pose.wgsl) stored in `locals`
//   (or the mixer, mix.wgsl): the three steps below, each local read
//   (stored_local, stored_global, stored_mesh_inverse) where skin_main
//   computes it.
// skin_main (PerInstance): the pose stage fused in: one invocation per
//   instance computes each local where it uses it, from local_pose(), in
//   registers (no locals buffer written and read back, one dispatch
//   fewer), in the three steps below.
// skin_nodes_main (PerNode): one workgroup per instance, for GPUs; see
//   its own comment at the end.
//
// 1. Mesh-node inverses (mesh_node_inverse), when the rig has at most
//    MAX_FUSED_SKINS skins: for each skin, the inverse of its mesh node's
//    global (the identity when it has none), the global computed on its
//    own by walking up the mesh node's ancestors and multiplying their
//    locals (mesh_global: one local for a root mesh node, the usual case).
//    Kept in a private array for step 2. (hierarchy_main:
//    stored_mesh_inverse, the same from the stored locals.)
//
// 2. Hierarchy and (up to MAX_FUSED_SKINS skins) joint matrices, the
//    nodes in index order.
//    Local matrix (local_matrix): T * R * S of the node's local pose.
//    Hierarchy (global_matrix): global[n] = global[p] * L(a_k) * ... *
//    L(a_1) * L(n), where a_1.. are n's ancestors up to the first one, p,
//    with a smaller index (already done by this invocation). When the node
//    table lists parents before children (RigBuilder always does,
//    exporters nearly always do), p is the parent and every node costs one
//    matrix product: O(nodes) per instance, so a 64-deep chain costs 64
//    products, not 64 * 65 / 2 as when every node walked up to the root on
//    its own. A child listed before its parent walks up until such an
//    ancestor (or the root), using those ancestors' locals again, so any
//    order is right. The host refuses cyclic rigs; the node_count bound
//    only keeps a corrupt table from looping forever. The previous node's
//    global stays in registers, so a node listed right after its parent
//    (every node of a chain) reads no global back. Every global is written
//    to `globals` (a renderer takes mesh nodes' model matrices from there).
//    skin_main walks a parents-first rig chain by chain instead
//    (Node.chain, set by the host: the nodes from a chain's first on, each
//    the child of the one before): the same products, with no parent read
//    and no branch for the nodes after each chain's first; so does
//    hierarchy_main, which writes step 2's joint matrices during the walk
//    as skin_main does, so that it reads no global back.
//    Joint matrices (joint_matrix), right after global n: for each joint
//    slot j whose joint node is n (nodes[n].first_joint, then
//    joints[j].next_joint: usually none or one, two when skins share a
//    joint node; straight code for up to NODE_SLOTS of them),
//    joint = mesh_inverse[skin] * global(n) * inverse_bind[j], from the
//    global still in registers: no global is read back. Every matrix
//    product here has an affine left factor (affine_mul), and all but
//    the one with a non-affine inverse bind an affine right factor too
//    (affine_mul_affine).
//
// 3. Joint matrices of rigs with more than MAX_FUSED_SKINS skins, over
//    the joint slots after the walk
//    (joints_from_globals): the same product, reading back the globals
//    that step 2 wrote, the mesh node's inverse computed once per run of
//    slots with the same mesh node (once per skin). Its loop runs no
//    iteration for rigs that step 2 handles, and step 2's slot loop none
//    for the others.
//
// Tables: node n, joint slot j and inverse bind j are read through
// node_at(), joint_at() and inverse_bind(): from uniform copies of the
// first UNIFORM_HEAD entries (16 KiB each at most), from the storage
// buffers beyond (plan/cpu_adapter.rs, uniform_heads, says when). With
// wide reads (skin_io_wide.wgsl) node_at() and inverse_bind() read their
// uniform copies 64 bits per component, in half as many components.
//
// skin_main, one invocation per instance, one dispatch (PerInstance):
// locals in registers instead of a locals buffer written and read back,
// two dispatches and barriers fewer than the staged passes, and joint
// matrices from the global still in registers: the work of an instance
// is serial, so with fewer instances than lanes most lanes are idle,
// which skin_nodes_main (PerNode) addresses.

// Bindings 0..11 are pose.wgsl's (10 declared with node_at()). Bindings
// 12 (`globals`), 15 (`joint_matrices`) and 16 (`inverse_binds_head`)
// are declared, with global_at(), store_global(), store_joint() and
// inverse_bind(), by skin_io.wgsl or skin_io_wide.wgsl, one of which the
// host puts before this file.
@group(0) @binding(13) var<storage, read> joints: array<Joint>;
@group(0) @binding(14) var<storage, read> inverse_binds: array<mat4x4<f32>>;
// The first UNIFORM_HEAD entries of `joints` again, in a uniform buffer
// (see "Tables" above; the host zero-pads it), and likewise
// `inverse_binds` (binding 16, in skin_io.wgsl).
@group(0) @binding(17) var<uniform> joints_head: array<Joint, UNIFORM_HEAD>;

// True when every node's parent has a smaller index (set by the host from
// the node table): global_matrix() then never recomputes an ancestor, and
// its loop is compiled out.
override PARENTS_FIRST: bool = false;

const IDENTITY = mat4x4<f32>(
    vec4<f32>(1.0, 0.0, 0.0, 0.0),
    vec4<f32>(0.0, 1.0, 0.0, 0.0),
    vec4<f32>(0.0, 0.0, 1.0, 0.0),
    vec4<f32>(0.0, 0.0, 0.0, 1.0));

// Whether every joint slot and inverse bind matrix fits in the uniform
// copies (set by the host, like NODES_IN_HEAD in pose.wgsl).
override JOINTS_IN_HEAD: bool = false;

// Joint slot j, like node_at().
fn joint_at(j: u32) -> Joint {
    var v = joints_head[min(j, UNIFORM_HEAD - 1u)];
    if (!JOINTS_IN_HEAD && j >= UNIFORM_HEAD) {
        v = joints[j];
    }
    return v;
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

// a * b for an affine a (last row 0, 0, 0, 1: every local, global and
// mesh-node inverse here), any b: the product's last row is b's, and its
// other rows leave out a's last row's zeros. The same sums in the same
// order as the full product (a[0] b.x + a[1] b.y + a[2] b.z + a[3] b.w per
// column), whose last-row terms are exact zeros and ones: the same values
// on finite input (bit for bit unless a device fuses the multiply-adds
// differently), with 48 multiplications instead of 64 and none for the
// last row. CPU twin: cpu::skin::affine_mul.
fn affine_mul(a: mat4x4<f32>, b: mat4x4<f32>) -> mat4x4<f32> {
    return mat4x4<f32>(affine_apply(a, b[0]), affine_apply(a, b[1]), affine_apply(a, b[2]),
        affine_apply(a, b[3]));
}

// a * v for an affine a: column v of affine_mul.
fn affine_apply(a: mat4x4<f32>, v: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(a[0].xyz * v.x + a[1].xyz * v.y + a[2].xyz * v.z + a[3].xyz * v.w, v.w);
}

// a * b for affine a and b (every local, global and mesh-node inverse
// here, and inverse binds where INVERSE_BINDS_AFFINE): affine_mul
// without the terms of b's last row, a[3].xyz * 0 in columns 0..2 and
// a[3].xyz * 1 in column 3, and with the last row written as 0, 0, 0, 1.
// The same sums in the same order otherwise, so the same values on finite
// input but for the sign of a zero (x + a * 0 turns a -0 sum into +0
// when a >= 0), with 36 multiplications where affine_mul makes 48, and 27
// additions where it makes 36. CPU twin: cpu::skin::affine_mul_affine.
fn affine_mul_affine(a: mat4x4<f32>, b: mat4x4<f32>) -> mat4x4<f32> {
    return mat4x4<f32>(vec4<f32>(linear_apply(a, b[0].xyz), 0.0),
        vec4<f32>(linear_apply(a, b[1].xyz), 0.0), vec4<f32>(linear_apply(a, b[2].xyz), 0.0),
        vec4<f32>(linear_apply(a, b[3].xyz) + a[3].xyz, 1.0));
}

// The 3x3 part of a times v.
fn linear_apply(a: mat4x4<f32>, v: vec3<f32>) -> vec3<f32> {
    return a[0].xyz * v.x + a[1].xyz * v.y + a[2].xyz * v.z;
}

// The local matrix of a local pose: T * R * S (the rotation is already
// unit).
fn local_matrix(pose: LocalPose) -> mat4x4<f32> {
    return compose_trs(pose.translation.xyz, pose.rotation, pose.scale.xyz);
}

// The local matrix of node n for instance i, whose clip is `clip`
// (instances[i].clip), from the pose stage's local_pose() (the fused
// kernels: no locals buffer).
fn posed_local(i: u32, clip: u32, n: u32) -> mat4x4<f32> {
    return local_matrix(local_pose(i, clip, n));
}

// The local matrix of node n for instance i from the locals the pose
// stage stored (hierarchy_main).
fn stored_local(i: u32, n: u32) -> mat4x4<f32> {
    return local_matrix(locals[i * params.node_count + n]);
}

// The global matrix of node n for instance i, given its local matrix
// `local`, the globals of this instance's nodes 0..n-1 in `globals` and
// node n-1's in `previous` (kept in registers so that a node right after
// its parent does not read it back). Ancestors with an index >= n (a child
// listed before its parent) have their locals recomputed (posed_local).
fn global_matrix(i: u32, clip: u32, n: u32, local: mat4x4<f32>,
                 previous: mat4x4<f32>) -> mat4x4<f32> {
    let base = i * params.node_count;
    var m = local;
    var p = node_at(n).parent;
    for (var step = 0u; !PARENTS_FIRST && step < params.node_count && p >= i32(n); step++) {
        m = affine_mul_affine(posed_local(i, clip, u32(p)), m);
        p = node_at(u32(p)).parent;
    }
    if (p >= 0 && p + 1 == i32(n)) {
        m = affine_mul_affine(previous, m);
    } else if (p >= 0 && p < i32(n)) {
        m = affine_mul_affine(global_at(base + u32(p)), m);
    }
    return m;
}

// global_matrix() for hierarchy_main: node n's and its ancestors' locals
// read from `locals` (stored_local) instead of computed.
fn stored_global(i: u32, n: u32, previous: mat4x4<f32>) -> mat4x4<f32> {
    let base = i * params.node_count;
    var m = stored_local(i, n);
    var p = node_at(n).parent;
    for (var step = 0u; !PARENTS_FIRST && step < params.node_count && p >= i32(n); step++) {
        m = affine_mul_affine(stored_local(i, u32(p)), m);
        p = node_at(u32(p)).parent;
    }
    if (p >= 0 && p + 1 == i32(n)) {
        m = affine_mul_affine(previous, m);
    } else if (p >= 0 && p < i32(n)) {
        m = affine_mul_affine(global_at(base + u32(p)), m);
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

// The global of node n for instance i computed on its own: the product of
// the locals of n and its ancestors, root first (used for mesh nodes before
// the walk; the node_count bound only keeps a corrupt table from looping).
fn mesh_global(i: u32, clip: u32, n: u32) -> mat4x4<f32> {
    var m = posed_local(i, clip, n);
    var p = node_at(n).parent;
    for (var step = 0u; step < params.node_count && p >= 0; step++) {
        m = affine_mul_affine(posed_local(i, clip, u32(p)), m);
        p = node_at(u32(p)).parent;
    }
    return m;
}

// Inverse of mesh node `node`'s global for instance i, the identity for -1
// (a skin without mesh node).
fn mesh_node_inverse(i: u32, clip: u32, node: i32) -> mat4x4<f32> {
    if (node < 0) {
        return IDENTITY;
    }
    return affine_inverse(mesh_global(i, clip, u32(node)));
}

// mesh_node_inverse() for hierarchy_main: the locals read from `locals`
// (stored_local) instead of computed.
fn stored_mesh_inverse(i: u32, node: i32) -> mat4x4<f32> {
    if (node < 0) {
        return IDENTITY;
    }
    var m = stored_local(i, u32(node));
    var p = node_at(u32(node)).parent;
    for (var step = 0u; step < params.node_count && p >= 0; step++) {
        m = affine_mul_affine(stored_local(i, u32(p)), m);
        p = node_at(u32(p)).parent;
    }
    return affine_inverse(m);
}

// Element `skin` of the mesh-node inverses of the fused kernels, by selects
// over constant indices (skin < MAX_FUSED_SKINS, which this unrolls).
const_assert MAX_FUSED_SKINS == 4u;
fn fused_inverse(m: array<mat4x4<f32>, MAX_FUSED_SKINS>, skin: u32) -> mat4x4<f32> {
    let low = select_matrix(m[0], m[1], skin == 1u);
    let high = select_matrix(m[2], m[3], skin == 3u);
    return select_matrix(low, high, skin >= 2u);
}

// WGSL's select() for matrices, column by column.
fn select_matrix(f: mat4x4<f32>, t: mat4x4<f32>, c: bool) -> mat4x4<f32> {
    return mat4x4<f32>(select(f[0], t[0], c), select(f[1], t[1], c), select(f[2], t[2], c),
        select(f[3], t[3], c));
}

// Whether every skin's mesh-node inverse is the identity in every pose
// (set by the host: SkinTables::mesh_inverses_are_identity); joint_matrix()
// then leaves out the product with it, and skin_main the inverses.
override MESH_INVERSES_IDENTITY: bool = false;

// Whether every inverse bind matrix is affine, last row exactly 0, 0, 0, 1
// (set by the host: SkinTables::inverse_binds_are_affine; glTF exporters
// write affine ones); joint_matrix() then multiplies by it with
// affine_mul_affine.
override INVERSE_BINDS_AFFINE: bool = false;

// Joint matrix of joint slot j, given the global of its joint node and the
// inverse of the global of its mesh node (the identity when it has none).
fn joint_matrix(j: u32, mesh_inverse: mat4x4<f32>, global: mat4x4<f32>) -> mat4x4<f32> {
    var m = global;
    if (!MESH_INVERSES_IDENTITY) {
        m = affine_mul_affine(mesh_inverse, global);
    }
    if (INVERSE_BINDS_AFFINE) {
        return affine_mul_affine(m, inverse_bind(j));
    }
    return affine_mul(m, inverse_bind(j));
}

// Step 3: joint matrices of instance i's slots first.. from the globals
// written by the walk, the mesh node's inverse computed once per run of
// slots with the same mesh node.
fn joints_from_globals(i: u32, first: u32) {
    let base = i * params.node_count;
    let out = i * params.joint_count;
    var mesh_node = -1;
    var inverse = IDENTITY;
    for (var j = first; j < params.joint_count; j++) {
        let joint = joint_at(j);
        if (joint.mesh_node != mesh_node) {
            mesh_node = joint.mesh_node;
            inverse = IDENTITY;
            if (mesh_node >= 0) {
                inverse = affine_inverse(global_at(base + u32(mesh_node)));
            }
        }
        store_joint(out + j, joint_matrix(j, inverse, global_at(base + joint.node)));
    }
}

// Staged (and the mixer's chain): the hierarchy and joint matrices from the
// stored locals.
@compute @workgroup_size(SKIN_WORKGROUP_SIZE)
fn hierarchy_main(@builtin(global_invocation_id) gid: vec3<u32>,
                  @builtin(num_workgroups) groups: vec3<u32>) {
    let i = flat_index(gid, groups);
    if (i >= params.instance_count) {
        return;
    }
    let base = i * params.node_count;
    let out = i * params.joint_count;
    let fused = params.skin_count <= MAX_FUSED_SKINS;
    // skin_main's three steps, each local read from `locals` instead of
    // computed (the header: step 2's joint matrices spare reading every
    // global back).
    var mesh_inverse: array<mat4x4<f32>, MAX_FUSED_SKINS>;
    for (var s = 0u; s < select(0u, params.skin_count, fused && !MESH_INVERSES_IDENTITY); s++) {
        mesh_inverse[s] = stored_mesh_inverse(i, params.mesh_nodes[s]);
    }
    let inverses = mesh_inverse;
    if (PARENTS_FIRST) {
        // Chain by chain, as in skin_main. (Written twice: one function
        // for both kernels would reference the sampler's output and the
        // instance table, which this pass does not bind, even on the side
        // of a branch it never takes.)
        var n = 0u;
        for (var step = 0u; step < params.node_count && n < params.node_count; step++) {
            let head = node_at(n);
            var global = stored_local(i, n);
            if (head.parent >= 0) {
                global = affine_mul_affine(global_at(base + u32(head.parent)), global);
            }
            let end = min(n + max(head.chain, 1u), params.node_count);
            loop {
                store_global(base + n, global);
                store_node_joints(out, n, inverses, global, fused);
                n++;
                if (n >= end) {
                    break;
                }
                global = affine_mul_affine(global, stored_local(i, n));
            }
        }
    } else {
        var previous = IDENTITY;
        for (var n = 0u; n < params.node_count; n++) {
            previous = stored_global(i, n, previous);
            store_global(base + n, previous);
            store_node_joints(out, n, inverses, previous, fused);
        }
    }
    joints_from_globals(i, select(0u, params.joint_count, fused));
}

// The most joint slots of one node (SkinTables::max_slots_per_node: skins
// that share a joint node give it a slot each; 1 for most rigs), set by
// the host. Up to MAX_UNROLLED_SLOTS, skin_main writes a node's slots in
// that many blocks of straight code instead of a loop: the fallback
// adapters step through a loop's body at least once and pay its mask
// bookkeeping on top, on every node of the walk. More slots take the
// loop.
override NODE_SLOTS: u32 = 0xffffffffu;
const_assert MAX_UNROLLED_SLOTS == 4u; // skin_main's four blocks

// Step 2's joint matrix of joint slot j (a fused skin's), from its joint
// node's global `global`; returns the node's next slot.
fn store_fused_joint(out: u32, j: u32, inverses: array<mat4x4<f32>, MAX_FUSED_SKINS>,
                     global: mat4x4<f32>) -> i32 {
    let joint = joint_at(j);
    store_joint(out + j, joint_matrix(j, fused_inverse(inverses, joint.skin), global));
    return joint.next_joint;
}

@compute @workgroup_size(SKIN_WORKGROUP_SIZE)
fn skin_main(@builtin(global_invocation_id) gid: vec3<u32>,
             @builtin(num_workgroups) groups: vec3<u32>) {
    let i = flat_index(gid, groups);
    if (i >= params.instance_count) {
        return;
    }
    let base = i * params.node_count;
    let out = i * params.joint_count;
    let clip = instances[i].clip;
    let fused = params.skin_count <= MAX_FUSED_SKINS;
    // Step 1: mesh-node inverses (no iteration unless fused).
    var mesh_inverse: array<mat4x4<f32>, MAX_FUSED_SKINS>;
    for (var s = 0u; s < select(0u, params.skin_count, fused && !MESH_INVERSES_IDENTITY); s++) {
        mesh_inverse[s] = mesh_node_inverse(i, clip, params.mesh_nodes[s]);
    }
    // Each joint takes its skin's inverse by selects, not by indexing the
    // array at run time.
    let inverses = mesh_inverse;
    // Step 2: locals, globals and (fused) joint matrices. With parents
    // first, chain by chain (Node.chain: the nodes from a chain's first on,
    // each the child of the one before): the chain's first node multiplies
    // its parent's global, read back from `globals` (none for a root), and
    // each node after it the global before it, in registers, with no
    // parent read and no branch per node. The same products in the same
    // order as global_matrix.
    if (PARENTS_FIRST) {
        var n = 0u;
        for (var step = 0u; step < params.node_count && n < params.node_count; step++) {
            let head = node_at(n);
            var global = posed_local(i, clip, n);
            if (head.parent >= 0) {
                global = affine_mul_affine(global_at(base + u32(head.parent)), global);
            }
            let end = min(n + max(head.chain, 1u), params.node_count);
            loop {
                store_global(base + n, global);
                store_node_joints(out, n, inverses, global, fused);
                n++;
                if (n >= end) {
                    break;
                }
                global = affine_mul_affine(global, posed_local(i, clip, n));
            }
        }
    } else {
        var previous = IDENTITY;
        for (var n = 0u; n < params.node_count; n++) {
            previous = global_matrix(i, clip, n, posed_local(i, clip, n), previous);
            store_global(base + n, previous);
            store_node_joints(out, n, inverses, previous, fused);
        }
    }
    // Step 3: joint matrices of rigs with more skins (no iteration when
    // fused).
    joints_from_globals(i, select(0u, params.joint_count, fused));
}

// Step 2's joint matrices of node n (fused skins only), from its global.
fn store_node_joints(out: u32, n: u32, inverses: array<mat4x4<f32>, MAX_FUSED_SKINS>,
                     global: mat4x4<f32>, fused: bool) {
    var j = select(-1, node_at(n).first_joint, fused);
    if (NODE_SLOTS <= MAX_UNROLLED_SLOTS) {
        if (NODE_SLOTS >= 1u && j >= 0) {
            j = store_fused_joint(out, u32(j), inverses, global);
        }
        if (NODE_SLOTS >= 2u && j >= 0) {
            j = store_fused_joint(out, u32(j), inverses, global);
        }
        if (NODE_SLOTS >= 3u && j >= 0) {
            j = store_fused_joint(out, u32(j), inverses, global);
        }
        if (NODE_SLOTS >= 4u && j >= 0) {
            j = store_fused_joint(out, u32(j), inverses, global);
        }
    } else {
        for (var step = 0u; step < params.joint_count && j >= 0; step++) {
            j = store_fused_joint(out, u32(j), inverses, global);
        }
    }
}

// skin_nodes_main: the same results as skin_main, one workgroup per
// instance, for GPUs (GpuSkinner picks it on adapters that are not CPUs,
// for rigs of at most MAX_PARALLEL_NODES nodes; see SkinStrategy).
// skin_main runs one invocation per instance, which leaves most of a large
// GPU idle: a thousand instances are a thousand lanes.
//
// 1. Each lane computes the local matrices of nodes lane, lane + 64, ...
//    (posed_local: the pose stage fused in) into workgroup memory, with
//    each node's parent.
// 2. Pointer jumping: every round, node n's matrix becomes
//    matrix[up[n]] * matrix[n] and up[n] becomes up[up[n]], so after r
//    rounds matrix[n] is the product of the locals of n and its 2^r - 1
//    nearest ancestors. ceil(log2(node_count)) rounds give every global,
//    in any node order: 6 rounds and 6 x 2 barriers for a 64-deep chain
//    instead of 64 products in a row. The products are associated
//    differently from skin_main's walk (same values up to rounding).
// 3. Globals are written; then each lane computes joint slots lane,
//    lane + 64, ...: mesh_inverse * global(joint node) * inverse_bind, with
//    the mesh node's global from workgroup memory.
const NODES_PER_LANE: u32 = MAX_PARALLEL_NODES / SKIN_WORKGROUP_SIZE;

var<workgroup> wg_matrix: array<mat4x4<f32>, MAX_PARALLEL_NODES>;
var<workgroup> wg_up: array<i32, MAX_PARALLEL_NODES>;

@compute @workgroup_size(SKIN_WORKGROUP_SIZE)
fn skin_nodes_main(@builtin(workgroup_id) wid: vec3<u32>,
                   @builtin(num_workgroups) groups: vec3<u32>,
                   @builtin(local_invocation_index) lane: u32) {
    // One instance per workgroup: i is the same for every lane, so the
    // early return keeps the barriers below in uniform control flow.
    let i = wid.y * groups.x + wid.x;
    if (i >= params.instance_count) {
        return;
    }
    let count = min(params.node_count, MAX_PARALLEL_NODES);
    let clip = instances[i].clip;
    for (var s = 0u; s < NODES_PER_LANE; s++) {
        let n = lane + s * SKIN_WORKGROUP_SIZE;
        if (n < count) {
            wg_matrix[n] = posed_local(i, clip, n);
            wg_up[n] = node_at(n).parent;
        }
    }
    workgroupBarrier();
    for (var reach = 1u; reach < count; reach *= 2u) {
        var m: array<mat4x4<f32>, NODES_PER_LANE>;
        var up: array<i32, NODES_PER_LANE>;
        for (var s = 0u; s < NODES_PER_LANE; s++) {
            let n = lane + s * SKIN_WORKGROUP_SIZE;
            if (n < count) {
                let p = wg_up[n];
                m[s] = wg_matrix[n];
                up[s] = p;
                if (p >= 0 && u32(p) < count) {
                    m[s] = affine_mul_affine(wg_matrix[p], m[s]);
                    up[s] = wg_up[p];
                }
            }
        }
        workgroupBarrier();
        for (var s = 0u; s < NODES_PER_LANE; s++) {
            let n = lane + s * SKIN_WORKGROUP_SIZE;
            if (n < count) {
                wg_matrix[n] = m[s];
                wg_up[n] = up[s];
            }
        }
        workgroupBarrier();
    }
    let base = i * params.node_count;
    for (var s = 0u; s < NODES_PER_LANE; s++) {
        let n = lane + s * SKIN_WORKGROUP_SIZE;
        if (n < count) {
            store_global(base + n, wg_matrix[n]);
        }
    }
    let out = i * params.joint_count;
    for (var j = lane; j < params.joint_count; j += SKIN_WORKGROUP_SIZE) {
        let joint = joint_at(j);
        var inverse = IDENTITY;
        if (joint.mesh_node >= 0) {
            inverse = affine_inverse(wg_matrix[min(u32(joint.mesh_node), count - 1u)]);
        }
        store_joint(out + j, joint_matrix(j, inverse, wg_matrix[min(joint.node, count - 1u)]));
    }
}
