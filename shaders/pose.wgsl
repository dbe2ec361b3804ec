// The pose stage: each instance's local pose, per node (translation,
// rotation, scale: the sampled value where a track of the instance's clip
// animates it, the rest value otherwise) and per mesh (morph weights, also
// part of the pose). Needs prelude.wgsl and quat.wgsl (prepended by the
// host). CPU twin: src/cpu/pose.rs.
//
// pose_main: one invocation per (instance, node): local_pose() into
//   `locals` (SkinStrategy::Staged; the hierarchy stage, hierarchy_main in
//   skin.wgsl, reads them back).
// morph_main: one invocation per (instance, mesh): the mesh's weights, from
//   the weights track that drives it in the instance's clip, or its
//   defaults (every strategy).
//
// The fused skin kernels (skin_main, skin_nodes_main in skin.wgsl) call
// local_pose() themselves where they use a local, instead of reading
// `locals`: the same function, so the same values.

@group(0) @binding(0) var<uniform> params: SkinParams;
@group(0) @binding(1) var<storage, read> nodes: array<Node>;
@group(0) @binding(2) var<storage, read> channels: array<vec4<i32>>;
// The sampler's output, as vec4s (its buffer is a whole number of them):
// read a float at a time (sample_at), or a vec4 where a rotation is
// 4-float aligned (sample_rotation).
@group(0) @binding(3) var<storage, read> samples: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> instances: array<Instance>;
@group(0) @binding(5) var<storage, read_write> locals: array<LocalPose>;
@group(0) @binding(6) var<storage, read> meshes: array<Mesh>;
@group(0) @binding(7) var<storage, read> default_weights: array<f32>;
@group(0) @binding(8) var<storage, read> morph_channels: array<i32>;
@group(0) @binding(9) var<storage, read_write> morph_weights: array<f32>;
// The first UNIFORM_HEAD entries of `channels` again, in a uniform buffer
// (the host zero-pads it), and likewise `nodes` (binding 10, declared
// with node_at() by pose_nodes.wgsl, or by skin_io_wide.wgsl in the skin
// module with wide reads). The plan says whether the small tables are
// read from these copies (plan/cpu_adapter.rs, uniform_heads).
@group(0) @binding(11) var<uniform> channels_head: array<vec4<i32>, UNIFORM_HEAD>;

// Whether every node (NODES_IN_HEAD) and every pose channel
// (CHANNELS_IN_HEAD) fits in the uniform copies; the host sets them from
// the rig's tables. Then node_at() and channel_at() compile out their
// storage reads, branch included (JOINTS_IN_HEAD does the same for
// skin.wgsl's joint table).
override NODES_IN_HEAD: bool = false;
override CHANNELS_IN_HEAD: bool = false;

// The rig's node, mesh and pointer-target counts as constants (the same
// numbers as params.node_count, mesh_count and pointer_count), the
// divisors of the passes with one invocation per (instance, node), mesh
// or target: the compiler turns a division by a constant into a
// multiplication.
override NODE_COUNT: u32 = 1u;
override MESH_COUNT: u32 = 1u;
override POINTER_COUNT: u32 = 1u;

// Pose channel c (clip * node_count + node): from the uniform copy for
// the first UNIFORM_HEAD channels, from storage beyond.
fn channel_at(c: u32) -> vec4<i32> {
    var v = channels_head[min(c, UNIFORM_HEAD - 1u)];
    if (!CHANNELS_IN_HEAD && c >= UNIFORM_HEAD) {
        v = channels[c];
    }
    return v;
}

// Float `at` of the sampler's output.
fn sample_at(at: u32) -> f32 {
    return samples[at >> 2u][at & 3u];
}

fn sample_vec3(at: u32) -> vec3<f32> {
    return vec3<f32>(sample_at(at), sample_at(at + 1u), sample_at(at + 2u));
}

fn sample_vec4(at: u32) -> vec4<f32> {
    return vec4<f32>(sample_at(at), sample_at(at + 1u), sample_at(at + 2u), sample_at(at + 3u));
}

// Whether every sampled rotation the pose channels name starts at a
// multiple of 4 floats in an instance's output block, whose stride is a
// multiple of 4 too (set by the host: SkinTables::rotations_aligned4; a
// library of rotations only, or with each clip's rotations first).
// sample_rotation() then reads one vec4 where it would read four floats.
override ROTATIONS_ALIGNED4: bool = false;

// Whether some pose channel of the library animates a translation
// (ANIMATED_TRANSLATIONS) or a scale (ANIMATED_SCALES), set by the host
// (SkinTables::animates_translations, animates_scales): where none does,
// the pose and the mixer leave out those reads, which the fallback
// adapters make on every node with the lanes masked (a rig animated by
// rotations only, as most skeletal clips are, reads neither).
override ANIMATED_TRANSLATIONS: bool = true;
override ANIMATED_SCALES: bool = true;

// The sampled rotation at output float `at` (a pose channel's rotation).
fn sample_rotation(at: u32) -> vec4<f32> {
    if (ROTATIONS_ALIGNED4) {
        return samples[at >> 2u];
    }
    return sample_vec4(at);
}

// The local pose of node n for instance i, whose clip is `clip`
// (instances[i].clip, read once per instance by the caller): translation,
// rotation and scale are the sampler's output where a track of the clip
// animates them (channels[clip * node_count + node] holds the output
// offset, -1 for rest), the node's rest value otherwise; the rotation is
// normalized.
fn local_pose(i: u32, clip: u32, n: u32) -> LocalPose {
    let node = node_at(n);
    var t = node.translation.xyz;
    var r = node.rotation;
    var s = node.scale.xyz;
    if (clip < params.clip_count) {
        let ch = channel_at(clip * params.node_count + n);
        let base = i * params.output_stride;
        if (ANIMATED_TRANSLATIONS && ch.x >= 0) {
            t = sample_vec3(base + u32(ch.x));
        }
        if (ch.y >= 0) {
            r = sample_rotation(base + u32(ch.y));
        }
        if (ANIMATED_SCALES && ch.z >= 0) {
            s = sample_vec3(base + u32(ch.z));
        }
    }
    return LocalPose(vec4<f32>(t, 0.0), quat_normalize(r), vec4<f32>(s, 0.0));
}

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
            morph_weights[out + k] = sample_at(i * params.output_stride + u32(src) + k);
        } else {
            morph_weights[out + k] = default_weights[mesh.defaults_offset + k];
        }
    }
}

@compute @workgroup_size(SKIN_WORKGROUP_SIZE)
fn pose_main(@builtin(global_invocation_id) gid: vec3<u32>,
             @builtin(num_workgroups) groups: vec3<u32>) {
    let index = flat_index(gid, groups);
    if (params.node_count == 0u || index >= params.instance_count * params.node_count) {
        return;
    }
    let i = index / NODE_COUNT;
    locals[index] = local_pose(i, instances[i].clip, index % NODE_COUNT);
}

@compute @workgroup_size(SKIN_WORKGROUP_SIZE)
fn morph_main(@builtin(global_invocation_id) gid: vec3<u32>,
              @builtin(num_workgroups) groups: vec3<u32>) {
    let index = flat_index(gid, groups);
    if (params.mesh_count == 0u || index >= params.instance_count * params.mesh_count) {
        return;
    }
    write_morph_weights(index / MESH_COUNT, index % MESH_COUNT);
}
