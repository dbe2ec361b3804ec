// Skinning in the vertex shader, from the buffers the compute passes wrote:
// joint matrices, morph weights and global node matrices (group 0, the
// skinner's output bind group), plus this draw's parameters and the morph
// targets' position deltas (group 1).

struct Draw {
    view_proj: mat4x4<f32>,
    light_dir: vec4<f32>,
    instance: u32,          // which animated instance this frame shows
    joint_stride: u32,      // joint matrices per instance (all skins)
    joint_offset: u32,      // the skin's first slot
    skin_joint_count: u32,
    node_count: u32,
    mesh_node: u32,
    morph_stride: u32,
    weights_offset: u32,
    target_count: u32,
    vertex_count: u32,
    mode: u32,              // 0: skinned, 1: rigid (mesh node's global), 2: bind pose
    _pad: u32,
}

@group(0) @binding(0) var<storage, read> joint_matrices: array<mat4x4<f32>>;
@group(0) @binding(1) var<storage, read> morph_weights: array<f32>;
@group(0) @binding(2) var<storage, read> globals: array<mat4x4<f32>>;
@group(1) @binding(0) var<uniform> draw: Draw;
@group(1) @binding(1) var<storage, read> morph_deltas: array<vec4<f32>>;

struct VertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) color: vec3<f32>,
}

fn joint_color(j: u32) -> vec3<f32> {
    let palette = array<vec3<f32>, 6>(
        vec3<f32>(0.95, 0.45, 0.25), vec3<f32>(0.30, 0.70, 0.95), vec3<f32>(0.45, 0.85, 0.35),
        vec3<f32>(0.95, 0.80, 0.25), vec3<f32>(0.75, 0.45, 0.90), vec3<f32>(0.35, 0.85, 0.80));
    return palette[j % 6u];
}

fn joint(j: u32) -> mat4x4<f32> {
    let k = min(j, max(draw.skin_joint_count, 1u) - 1u);
    return joint_matrices[draw.instance * draw.joint_stride + draw.joint_offset + k];
}

@vertex
fn vs_main(@location(0) position: vec3<f32>, @location(1) joints: vec4<u32>,
           @location(2) weights: vec4<f32>, @builtin(vertex_index) v: u32) -> VertexOut {
    var p = position;
    if (draw.mode != 2u) {
        for (var k = 0u; k < draw.target_count; k++) {
            let w = morph_weights[draw.instance * draw.morph_stride + draw.weights_offset + k];
            p += w * morph_deltas[k * draw.vertex_count + v].xyz;
        }
    }
    let model = globals[draw.instance * draw.node_count + draw.mesh_node];
    var world = vec4<f32>(p, 1.0);
    if (draw.mode == 0u) {
        let skin = weights.x * joint(joints.x) + weights.y * joint(joints.y)
            + weights.z * joint(joints.z) + weights.w * joint(joints.w);
        world = model * skin * world;
    } else if (draw.mode == 1u) {
        world = model * world;
    }
    var out: VertexOut;
    out.clip = draw.view_proj * world;
    out.world = world.xyz;
    out.color = weights.x * joint_color(joints.x) + weights.y * joint_color(joints.y)
        + weights.z * joint_color(joints.z) + weights.w * joint_color(joints.w);
    return out;
}

@fragment
fn fs_main(in: VertexOut) -> @location(0) vec4<f32> {
    // Flat shading from screen-space derivatives: no normals needed.
    let n = normalize(cross(dpdx(in.world), dpdy(in.world)));
    let light = 0.25 + 0.75 * abs(dot(n, normalize(draw.light_dir.xyz)));
    return vec4<f32>(in.color * light, 1.0);
}
