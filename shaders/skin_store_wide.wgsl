// skin_store.wgsl's functions and bindings with 64-bit stores and loads:
// the same buffers, bytes and values, a matrix written (and read) as two
// vec4<u64>s, two columns each, each u64 the bits of two floats, the
// first in its low half (little-endian, as every wgpu backend is). Needs
// SHADER_INT64; the host uses it on CPU adapters that have it
// (GpuSkinner::wide_matrix_stores).
//
// Why: on the CPU adapters every storage access is a loop over the lanes,
// one per store or load instruction, whatever its width, and a store or
// load is at most four components: a vec4<u64> moves two columns where a
// vec3<f32> moves a column's three rows. Measured: skin_chain's whole
// chain / sampling 3.21 -> 2.91 on lavapipe (medians of four alternated
// rounds), where 64-bit stores of the same count (a vec2<u64> a column)
// measured level.
//
// Every column is written whole, its last row included, with the values
// the host put there: 0, 0, 0, 1 in a global, and in a joint matrix where
// every inverse bind is affine (INVERSE_BINDS_AFFINE), as literals (the
// products' own last rows are the same values, but storing them measured
// 0.15-0.25 slower: 3.15-3.24 against 3.00-3.05); the product's last row,
// its inverse bind's, in a joint matrix otherwise.

// Global matrices: mat4x4s, two columns per element.
@group(0) @binding(12) var<storage, read_write> globals: array<vec4<u64>>;
// Joint matrices, the same way.
@group(0) @binding(15) var<storage, read_write> joint_matrices: array<vec4<u64>>;

// The bits of a (low half) and b (high half).
fn pack_pair(a: f32, b: f32) -> u64 {
    return u64(bitcast<u32>(a)) | (u64(bitcast<u32>(b)) << 32u);
}

// Columns c and d, their rows packed in pairs, with last rows cw and dw.
fn pack_columns(c: vec4<f32>, cw: f32, d: vec4<f32>, dw: f32) -> vec4<u64> {
    return vec4<u64>(pack_pair(c.x, c.y), pack_pair(c.z, cw), pack_pair(d.x, d.y),
        pack_pair(d.z, dw));
}

// The two floats of v (low half first).
fn unpack_pair(v: u64) -> vec2<f32> {
    return vec2<f32>(bitcast<f32>(u32(v & 0xfffffffflu)), bitcast<f32>(u32(v >> 32u)));
}

// Global g (instance * node_count + node).
fn global_at(g: u32) -> mat4x4<f32> {
    let a = globals[2u * g];
    let b = globals[2u * g + 1u];
    return mat4x4<f32>(vec4<f32>(unpack_pair(a.x), unpack_pair(a.y)),
        vec4<f32>(unpack_pair(a.z), unpack_pair(a.w)), vec4<f32>(unpack_pair(b.x), unpack_pair(b.y)),
        vec4<f32>(unpack_pair(b.z), unpack_pair(b.w)));
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
