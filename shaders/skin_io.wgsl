// The skin stage's matrix outputs and inverse-bind reads, 32 bits a
// component: global_at(), store_global(), store_joint() and
// inverse_bind(), with the bindings they use. The host puts this file
// between pose.wgsl and skin.wgsl, or skin_io_wide.wgsl instead (the same
// functions and node_at() with 64-bit stores and reads, where the plan
// says: Plan::wide_accesses).

// Global matrices, each as its four columns' first three rows (a vec3 has
// a stride of 16 bytes: the buffer holds mat4x4s, column by column). Every
// global is affine; its last row, 0, 0, 0, 1, is in the buffer from its
// creation (the host fills it with identity matrices) and no kernel here
// writes it.
@group(0) @binding(12) var<storage, read_write> globals: array<vec3<f32>>;
// Joint matrices, like `globals`: the first three rows of each column. The
// last row of joint slot j's matrix is its inverse bind's (every other
// factor is affine), the same in every pose: the host writes it when it
// creates the buffer.
@group(0) @binding(15) var<storage, read_write> joint_matrices: array<vec3<f32>>;
// The first UNIFORM_HEAD entries of `inverse_binds` again (see "Tables" in
// skin.wgsl; the host zero-pads them).
@group(0) @binding(16) var<uniform> inverse_binds_head: array<mat4x4<f32>, UNIFORM_HEAD>;

// Inverse bind matrix of joint slot j, like node_at().
fn inverse_bind(j: u32) -> mat4x4<f32> {
    var m = inverse_binds_head[min(j, UNIFORM_HEAD - 1u)];
    if (!JOINTS_IN_HEAD && j >= UNIFORM_HEAD) {
        m = inverse_binds[j];
    }
    return m;
}

// Global g (instance * node_count + node): its three stored rows and the
// affine last row.
fn global_at(g: u32) -> mat4x4<f32> {
    return mat4x4<f32>(vec4<f32>(globals[4u * g], 0.0), vec4<f32>(globals[4u * g + 1u], 0.0),
        vec4<f32>(globals[4u * g + 2u], 0.0), vec4<f32>(globals[4u * g + 3u], 1.0));
}

// Stores global g, an affine matrix: the first three rows of its columns,
// one vec3 store each (its last row is in the buffer already). On the CPU
// adapters a storage store is a loop over the lanes with a bounds check
// per component: three components where a mat4x4 column writes four, the
// fourth a constant.
fn store_global(g: u32, m: mat4x4<f32>) {
    globals[4u * g] = m[0].xyz;
    globals[4u * g + 1u] = m[1].xyz;
    globals[4u * g + 2u] = m[2].xyz;
    globals[4u * g + 3u] = m[3].xyz;
}

// Stores joint matrix j (instance * joint_count + slot) like store_global:
// its last row, its inverse bind's, is in the buffer already.
fn store_joint(j: u32, m: mat4x4<f32>) {
    joint_matrices[4u * j] = m[0].xyz;
    joint_matrices[4u * j + 1u] = m[1].xyz;
    joint_matrices[4u * j + 2u] = m[2].xyz;
    joint_matrices[4u * j + 3u] = m[3].xyz;
}
