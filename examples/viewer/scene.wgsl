// The viewer's draw: every primitive of every mesh node, from the buffers
// the animation passes wrote (group 0, the animator's output bind group:
// joint matrices, morph weights, world matrices), with no readback.
//
// One draw per (part, primitive), instanced: instance k reads animated
// instance k's matrices and stands at its place (an instance-rate vertex
// attribute: its place on the grid, moved by its root motion). A rigid part
// is placed by its node's world matrix; a skinned part by the world matrix
// of its skin's mesh node times the blend of its joint matrices (which
// include the inverse of that node's world matrix). Morph targets add
// their position deltas first.
//
// The fragment shader works in linear light: the base colour factor,
// COLOR_0 and the base colour texture (an sRGB texture, decoded by the
// sampler) multiply, a hemisphere ambient and one diffuse light from the
// camera's side light it (unless the material is unlit), and the colour is
// written to an sRGB target, or encoded here when the target is not sRGB
// (frame.flags). With FALSE_COLOR it shows joint weights (skinned) or the
// node (rigid) in a colour ramp instead of the material.

struct Frame {
    view_proj: mat4x4<f32>,
    eye: vec4<f32>,         // the camera's position
    light: vec4<f32>,       // towards the light (unit)
    node_stride: u32,       // world matrices per instance
    joint_stride: u32,      // joint matrices per instance
    morph_stride: u32,      // morph weights per instance
    flags: u32,             // FALSE_COLOR | ENCODE_SRGB
}

// One (part, primitive).
struct Item {
    node: u32,              // the world matrix that places it
    joint_offset: u32,      // its skin's first joint matrix in an instance's block
    joint_count: u32,       // its skin's joints; 0: rigid
    morph_offset: u32,      // its mesh's first morph weight in an instance's block
    targets: u32,           // morph targets
    delta_base: u32,        // its first morph delta
    first_vertex: u32,      // its first vertex in the vertex buffer
    vertex_count: u32,
}

struct Material {
    base_color: vec4<f32>,
    uv_u: vec4<f32>,        // u' = dot(uv_u.xyz, (u, v, 1)): KHR_texture_transform
    uv_v: vec4<f32>,        // v' = dot(uv_v.xyz, (u, v, 1))
    emissive: vec4<f32>,
    alpha_mode: u32,        // ALPHA_OPAQUE, ALPHA_MASK, ALPHA_BLEND
    alpha_cutoff: f32,
    unlit: u32,
    pad: u32,
}

const FALSE_COLOR: u32 = 1u;
const ENCODE_SRGB: u32 = 2u;
const ALPHA_OPAQUE: u32 = 0u;
const ALPHA_MASK: u32 = 1u;
const ALPHA_BLEND: u32 = 2u;

@group(0) @binding(0) var<storage, read> joint_matrices: array<mat4x4<f32>>;
@group(0) @binding(1) var<storage, read> morph_weights: array<f32>;
@group(0) @binding(2) var<storage, read> world_matrices: array<mat4x4<f32>>;
@group(1) @binding(0) var<uniform> frame: Frame;
@group(1) @binding(1) var<uniform> item: Item;
@group(1) @binding(2) var<storage, read> morph_deltas: array<vec4<f32>>;
@group(2) @binding(0) var<uniform> material: Material;
@group(2) @binding(1) var base_texture: texture_2d<f32>;
@group(2) @binding(2) var base_sampler: sampler;

struct VertexIn {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) uv: vec2<f32>,
    @location(3) color: vec4<f32>,
    @location(4) joints: vec4<u32>,
    @location(5) weights: vec4<f32>,
    @location(6) place: vec4<f32>,  // per instance: where it stands (xyz)
}

struct VertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) uv: vec2<f32>,
    @location(3) color: vec4<f32>,
    @location(4) ramp: vec3<f32>,
}

// The false-colour ramp (display values, decoded to linear light).
fn ramp_color(i: u32) -> vec3<f32> {
    let palette = array<vec3<f32>, 6>(
        vec3<f32>(0.95, 0.45, 0.25), vec3<f32>(0.30, 0.70, 0.95), vec3<f32>(0.45, 0.85, 0.35),
        vec3<f32>(0.95, 0.80, 0.25), vec3<f32>(0.75, 0.45, 0.90), vec3<f32>(0.35, 0.85, 0.80));
    return decode_srgb(palette[i % 6u]);
}

fn decode_srgb(c: vec3<f32>) -> vec3<f32> {
    return select(pow((c + 0.055) / 1.055, vec3<f32>(2.4)), c / 12.92, c <= vec3<f32>(0.04045));
}

fn encode_srgb(linear: vec3<f32>) -> vec3<f32> {
    let c = clamp(linear, vec3<f32>(0.0), vec3<f32>(1.0));
    return select(1.055 * pow(c, vec3<f32>(1.0 / 2.4)) - 0.055, 12.92 * c, c <= vec3<f32>(0.0031308));
}

fn joint(instance: u32, j: u32) -> mat4x4<f32> {
    let k = min(j, item.joint_count - 1u);
    return joint_matrices[instance * frame.joint_stride + item.joint_offset + k];
}

// The matrix that turns normals: the cofactors of the upper 3 x 3 (the
// inverse transpose times the determinant; normalized later, so scaled and
// sheared parts are lit right).
fn normal_matrix(m: mat4x4<f32>) -> mat3x3<f32> {
    let a = m[0].xyz;
    let b = m[1].xyz;
    let c = m[2].xyz;
    return mat3x3<f32>(cross(b, c), cross(c, a), cross(a, b));
}

@vertex
fn vs_main(in: VertexIn, @builtin(vertex_index) v: u32,
           @builtin(instance_index) k: u32) -> VertexOut {
    var p = in.position;
    let local = v - item.first_vertex;
    for (var t = 0u; t < item.targets; t++) {
        let w = morph_weights[k * frame.morph_stride + item.morph_offset + t];
        p += w * morph_deltas[item.delta_base + t * item.vertex_count + local].xyz;
    }
    var model = world_matrices[k * frame.node_stride + item.node];
    var ramp = ramp_color(item.node);
    if (item.joint_count > 0u) {
        let w = in.weights;
        let j = in.joints;
        model = model * (w.x * joint(k, j.x) + w.y * joint(k, j.y)
            + w.z * joint(k, j.z) + w.w * joint(k, j.w));
        ramp = w.x * ramp_color(j.x) + w.y * ramp_color(j.y)
            + w.z * ramp_color(j.z) + w.w * ramp_color(j.w);
    }
    let world = (model * vec4<f32>(p, 1.0)).xyz + in.place.xyz;
    var out: VertexOut;
    out.clip = frame.view_proj * vec4<f32>(world, 1.0);
    out.world = world;
    out.normal = normal_matrix(model) * in.normal;
    out.uv = in.uv;
    out.color = in.color;
    out.ramp = ramp;
    return out;
}

@fragment
fn fs_main(in: VertexOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    let uv3 = vec3<f32>(in.uv, 1.0);
    let uv = vec2<f32>(dot(material.uv_u.xyz, uv3), dot(material.uv_v.xyz, uv3));
    // Sampled and differentiated before any branch (uniform control flow).
    let texel = textureSample(base_texture, base_sampler, uv);
    let face = cross(dpdx(in.world), dpdy(in.world));
    var base = material.base_color * in.color * texel;
    if ((frame.flags & FALSE_COLOR) != 0u) {
        base = vec4<f32>(in.ramp, 1.0);
    }
    if (material.alpha_mode == ALPHA_MASK) {
        if (base.a < material.alpha_cutoff) {
            discard;
        }
        base.a = 1.0;
    } else if (material.alpha_mode == ALPHA_OPAQUE) {
        base.a = 1.0;
    }
    // The vertex normal, turned to the side seen; without one, the flat
    // face's, turned to the camera.
    var n = in.normal;
    if (dot(n, n) > 1e-12) {
        n = normalize(n);
        if (!front) {
            n = -n;
        }
    } else {
        n = normalize(face);
        if (dot(n, frame.eye.xyz - in.world) < 0.0) {
            n = -n;
        }
    }
    var color = base.rgb;
    if (material.unlit == 0u || (frame.flags & FALSE_COLOR) != 0u) {
        let ambient = mix(0.18, 0.38, 0.5 + 0.5 * n.y);
        let diffuse = 0.8 * max(dot(n, frame.light.xyz), 0.0);
        color = base.rgb * (ambient + diffuse) + material.emissive.rgb;
    }
    if ((frame.flags & ENCODE_SRGB) != 0u) {
        color = encode_srgb(color);
    }
    return vec4<f32>(color, base.a);
}
