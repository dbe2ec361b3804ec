// Local pose and morph weights. Needs quat.wgsl and rig.wgsl (prepended by
// the host). CPU twin: src/cpu_skin.rs.
//
// pose_main: one invocation per (instance, node). Each of translation,
// rotation and scale is the sampler's output where a track of the
// instance's clip animates it (channels[clip * node_count + node] holds the
// output offset, -1 for rest), the node's rest value otherwise. The local
// matrix is T * R * S, with the rotation normalized first.
//
// morph_main: one invocation per (instance, mesh): the mesh's weights, from
// the weights track that drives it in the instance's clip, or its defaults.

@group(0) @binding(0) var<uniform> params: SkinParams;
@group(0) @binding(1) var<storage, read> nodes: array<Node>;
@group(0) @binding(2) var<storage, read> channels: array<vec4<i32>>;
@group(0) @binding(3) var<storage, read> samples: array<f32>;
@group(0) @binding(4) var<storage, read> instance_clips: array<u32>;
@group(0) @binding(5) var<storage, read_write> locals: array<mat4x4<f32>>;
@group(0) @binding(6) var<storage, read> meshes: array<Mesh>;
@group(0) @binding(7) var<storage, read> default_weights: array<f32>;
@group(0) @binding(8) var<storage, read> morph_channels: array<i32>;
@group(0) @binding(9) var<storage, read_write> morph_weights: array<f32>;

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

// The local matrix of node n for instance i.
fn local_matrix(i: u32, n: u32) -> mat4x4<f32> {
    let node = nodes[n];
    var t = node.translation.xyz;
    var r = node.rotation;
    var s = node.scale.xyz;
    let clip = instance_clips[i];
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

@compute @workgroup_size(SKIN_WORKGROUP_SIZE)
fn pose_main(@builtin(global_invocation_id) gid: vec3<u32>,
             @builtin(num_workgroups) groups: vec3<u32>) {
    let index = flat_index(gid, groups);
    if (params.node_count == 0u || index >= params.instance_count * params.node_count) {
        return;
    }
    let i = index / params.node_count;
    let n = index % params.node_count;
    locals[index] = local_matrix(i, n);
}

// Writes mesh m's weights for instance i.
fn write_morph_weights(i: u32, m: u32) {
    let mesh = meshes[m];
    let out = i * params.morph_stride + mesh.weights_offset;
    let clip = instance_clips[i];
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
