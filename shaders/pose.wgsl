// Morph weights. Needs prelude.wgsl (prepended by the host). CPU twin:
// src/cpu/skin.rs. (The local pose, TRS per node, is computed inside the
// skin pass, shaders/skin.wgsl, where it is used.)
//
// morph_main: one invocation per (instance, mesh): the mesh's weights, from
// the weights track that drives it in the instance's clip, or its defaults.

@group(0) @binding(0) var<uniform> params: SkinParams;
@group(0) @binding(1) var<storage, read> samples: array<f32>;
@group(0) @binding(2) var<storage, read> instances: array<Instance>;
@group(0) @binding(3) var<storage, read> meshes: array<Mesh>;
@group(0) @binding(4) var<storage, read> default_weights: array<f32>;
@group(0) @binding(5) var<storage, read> morph_channels: array<i32>;
@group(0) @binding(6) var<storage, read_write> morph_weights: array<f32>;

// Writes mesh m's weights for instance i.
fn write_morph_weights(i: u32, m: u32) {
    let mesh = meshes[m];
    let out = i * params.morph_stride + mesh.weights_offset;
    let clip = instances[i].clip;
    var src = -1;
    if (clip < params.clip_count) {
        src = morph_channels[clip * params.mesh_count + m];
    }
    for (var k = 0u; k < mesh.target_count; k++) {
        if (src >= 0) {
            morph_weights[out + k] = samples[i * params.output_stride + u32(src) + k];
        } else {
            morph_weights[out + k] = default_weights[mesh.defaults_offset + k];
        }
    }
}

@compute @workgroup_size(SKIN_WORKGROUP_SIZE)
fn morph_main(@builtin(global_invocation_id) gid: vec3<u32>,
              @builtin(num_workgroups) groups: vec3<u32>) {
    let index = flat_index(gid, groups);
    if (params.mesh_count == 0u || index >= params.instance_count * params.mesh_count) {
        return;
    }
    write_morph_weights(index / params.mesh_count, index % params.mesh_count);
}
