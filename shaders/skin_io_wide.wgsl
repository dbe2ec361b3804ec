// skin_io.wgsl's functions and bindings, and pose_nodes.wgsl's, with
// 64-bit stores and reads: the same buffers, bytes and values, each u64
// the bits of two floats (or ints), the first in its low half
// (little-endian, as every wgpu backend is). Needs SHADER_INT64; the host
// uses it in the skin module where the plan says (Plan::wide_accesses;
// plan/cpu_adapter.rs says why).
//
// A store writes two matrix columns as one vec4<u64> (a column pair's
// first three rows and the pair's last rows), where skin_io.wgsl writes
// a column's three rows as one vec3<f32>; a node's rest translation,
// rotation and scale are read from their uniform copy in 6 components
// instead of 10, an affine inverse bind in 8 instead of 12.
//
// Every column is written whole, its last row included, with the values
// the host put there: 0, 0, 0, 1 in a global, and in a joint matrix where
// every inverse bind is affine (INVERSE_BINDS_AFFINE), as literals (the
// products' own last rows are the same values); the product's last row,
// its inverse bind's, in a joint matrix otherwise.

// The first UNIFORM_HEAD entries of `nodes` (pose.wgsl's binding 10): a
// Node (64 bytes) as two vec4<u64>s.
@group(0) @binding(10) var<uniform> nodes_head: array<array<vec4<u64>, 2>, UNIFORM_HEAD>;
// Global matrices: mat4x4s, two columns per element.
@group(0) @binding(12) var<storage, read_write> globals: array<vec4<u64>>;
// Joint matrices, the same way.
@group(0) @binding(15) var<storage, read_write> joint_matrices: array<vec4<u64>>;
// The first UNIFORM_HEAD entries of `inverse_binds`: a mat4x4 as two
// vec4<u64>s.
@group(0) @binding(16) var<uniform> inverse_binds_head: array<array<vec4<u64>, 2>, UNIFORM_HEAD>;

// The bits of a (low half) and b (high half).
fn pack_pair(a: f32, b: f32) -> u64 {
    return u64(bitcast<u32>(a)) | (u64(bitcast<u32>(b)) << 32u);
}

// Columns c and d, their rows packed in pairs, with last rows cw and dw.
fn pack_columns(c: vec4<f32>, cw: f32, d: vec4<f32>, dw: f32) -> vec4<u64> {
    return vec4<u64>(pack_pair(c.x, c.y), pack_pair(c.z, cw), pack_pair(d.x, d.y),
        pack_pair(d.z, dw));
}

// The low and high halves of v.
fn unpack_u32(v: u64) -> vec2<u32> {
    return vec2<u32>(u32(v & 0xfffffffflu), u32(v >> 32u));
}

// The two floats of v (low half first).
fn unpack_pair(v: u64) -> vec2<f32> {
    return bitcast<vec2<f32>>(unpack_u32(v));
}

// Two columns of a matrix, packed by pack_columns.
fn unpack_columns(v: vec4<u64>) -> array<vec4<f32>, 2> {
    return array<vec4<f32>, 2>(vec4<f32>(unpack_pair(v.x), unpack_pair(v.y)),
        vec4<f32>(unpack_pair(v.z), unpack_pair(v.w)));
}

// A matrix stored as two vec4<u64>s.
fn unpack_matrix(a: vec4<u64>, b: vec4<u64>) -> mat4x4<f32> {
    let low = unpack_columns(a);
    let high = unpack_columns(b);
    return mat4x4<f32>(low[0], low[1], high[0], high[1]);
}

// Node n, like pose_nodes.wgsl's.
fn node_at(n: u32) -> Node {
    let w = nodes_head[min(n, UNIFORM_HEAD - 1u)];
    let links = vec4<u32>(unpack_u32(w[1].z), unpack_u32(w[1].w));
    var v = Node(vec4<f32>(unpack_pair(w[0].x), unpack_pair(w[0].y)),
        vec4<f32>(unpack_pair(w[0].z), unpack_pair(w[0].w)),
        vec4<f32>(unpack_pair(w[1].x), unpack_pair(w[1].y)), bitcast<i32>(links.x),
        bitcast<i32>(links.y), bitcast<i32>(links.z), links.w);
    if (!NODES_IN_HEAD && n >= UNIFORM_HEAD) {
        v = nodes[n];
    }
    return v;
}

// Inverse bind matrix of joint slot j, like skin_io.wgsl's.
fn inverse_bind(j: u32) -> mat4x4<f32> {
    let w = inverse_binds_head[min(j, UNIFORM_HEAD - 1u)];
    var m = unpack_matrix(w[0], w[1]);
    if (!JOINTS_IN_HEAD && j >= UNIFORM_HEAD) {
        m = inverse_binds[j];
    }
    return m;
}

// Global g (instance * node_count + node).
fn global_at(g: u32) -> mat4x4<f32> {
    return unpack_matrix(globals[2u * g], globals[2u * g + 1u]);
}

// Stores global g.
fn store_global(g: u32, m: mat4x4<f32>) {
    globals[2u * g] = pack_columns(m[0], 0.0, m[1], 0.0);
    globals[2u * g + 1u] = pack_columns(m[2], 0.0, m[3], 1.0);
}

// Stores joint matrix j (instance * joint_count + slot).
fn store_joint(j: u32, m: mat4x4<f32>) {
    if (INVERSE_BINDS_AFFINE) {
        joint_matrices[2u * j] = pack_columns(m[0], 0.0, m[1], 0.0);
        joint_matrices[2u * j + 1u] = pack_columns(m[2], 0.0, m[3], 1.0);
    } else {
        joint_matrices[2u * j] = pack_columns(m[0], m[0].w, m[1], m[1].w);
        joint_matrices[2u * j + 1u] = pack_columns(m[2], m[2].w, m[3], m[3].w);
    }
}
