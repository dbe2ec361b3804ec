// Skinning in the vertex shader, from the buffers the compute passes wrote:
// joint matrices, morph weights and global node matrices (group 0, the
// animator's output bind group), plus this draw's parameters and the morph
// targets' position deltas (group 1).
//
// With draw.shade = 1 the fragment shader colours by a material whose
// factors KHR_animation_pointer tracks animate: it reads the base colour,
// emissive strength and texture offset of its instance from the sampler's
// output (group 1, binding 2) at the slots the library gives them
// (draw.material), and a procedural checker stands in for the base colour
// texture, looked up at the tube's cylindrical UVs plus the offset. The
// output is written as is (an Rgba8Unorm target: no sRGB encoding).
//
// Instance k of a draw shows animated instance draw.instance + k and
// stands at its place on the draw's grid (x, z spacing, columns, rows).

struct Draw {
    view_proj: mat4x4<f32>,
    light_dir: vec4<f32>,
    grid: vec4<f32>,        // column spacing (x), row spacing (z), columns, rows
    instance: u32,          // the animated instance the draw's instance 0 shows
    joint_stride: u32,      // joint matrices per instance (all skins)
    joint_offset: u32,      // the skin's first slot
    skin_joint_count: u32,
    node_count: u32,
    morph_stride: u32,
    vertex_count: u32,
    mode: u32,              // 0: skinned, 1: rigid (each part's node's global), 2: bind pose
    material: vec4<u32>,    // slots in an instance's sampled block: base colour (4 floats),
                            // emissive strength (1), texture offset (2); w: the block's stride
    emissive: vec3<f32>,    // the material's emissiveFactor (not animated)
    shade: u32,             // 0: colour by joint weights, 1: by the animated material
}

@group(0) @binding(0) var<storage, read> joint_matrices: array<mat4x4<f32>>;
@group(0) @binding(1) var<storage, read> morph_weights: array<f32>;
@group(0) @binding(2) var<storage, read> globals: array<mat4x4<f32>>;
@group(1) @binding(0) var<uniform> draw: Draw;
@group(1) @binding(1) var<storage, read> morph_deltas: array<vec4<f32>>;
@group(1) @binding(2) var<storage, read> samples: array<f32>;

struct VertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) color: vec3<f32>,
    @location(2) stored: vec3<f32>,                     // the stored position (for UVs)
    @location(3) @interpolate(flat) instance: u32,      // the animated instance
}

fn joint_color(j: u32) -> vec3<f32> {
    let palette = array<vec3<f32>, 6>(
        vec3<f32>(0.95, 0.45, 0.25), vec3<f32>(0.30, 0.70, 0.95), vec3<f32>(0.45, 0.85, 0.35),
        vec3<f32>(0.95, 0.80, 0.25), vec3<f32>(0.75, 0.45, 0.90), vec3<f32>(0.35, 0.85, 0.80));
    return palette[j % 6u];
}

fn joint(instance: u32, j: u32) -> mat4x4<f32> {
    let k = min(j, max(draw.skin_joint_count, 1u) - 1u);
    return joint_matrices[instance * draw.joint_stride + draw.joint_offset + k];
}

fn grid_offset(k: u32) -> vec3<f32> {
    let cols = max(u32(draw.grid.z), 1u);
    let col = f32(k % cols) - 0.5 * (draw.grid.z - 1.0);
    let row = f32(k / cols) - 0.5 * (draw.grid.w - 1.0);
    return vec3<f32>(col * draw.grid.x, 0.0, row * draw.grid.y);
}

// part: the part's node, its mesh's first morph weight, its target count.
@vertex
fn vs_main(@location(0) position: vec3<f32>, @location(1) joints: vec4<u32>,
           @location(2) weights: vec4<f32>, @location(3) part: vec4<u32>,
           @builtin(vertex_index) v: u32, @builtin(instance_index) k: u32) -> VertexOut {
    let instance = draw.instance + k;
    var p = position;
    if (draw.mode != 2u) {
        for (var t = 0u; t < part.z; t++) {
            let w = morph_weights[instance * draw.morph_stride + part.y + t];
            p += w * morph_deltas[t * draw.vertex_count + v].xyz;
        }
    }
    let model = globals[instance * draw.node_count + part.x];
    var world = vec4<f32>(p, 1.0);
    var color = weights.x * joint_color(joints.x) + weights.y * joint_color(joints.y)
        + weights.z * joint_color(joints.z) + weights.w * joint_color(joints.w);
    if (draw.mode == 0u) {
        let skin = weights.x * joint(instance, joints.x) + weights.y * joint(instance, joints.y)
            + weights.z * joint(instance, joints.z) + weights.w * joint(instance, joints.w);
        world = model * skin * world;
    } else if (draw.mode == 1u) {
        world = model * world;
        color = joint_color(part.x);
    }
    world += vec4<f32>(grid_offset(k), 0.0);
    var out: VertexOut;
    out.clip = draw.view_proj * world;
    out.world = world.xyz;
    out.color = color;
    out.stored = position;
    out.instance = instance;
    return out;
}

// The tube's texture coordinates: u around +Y (0 at +X, 1/4 at +Z), v up
// its height of 4.
fn tube_uv(p: vec3<f32>) -> vec2<f32> {
    return vec2<f32>(fract(atan2(p.z, p.x) / 6.2831853), p.y / 4.0);
}

// The base colour texture: a checker of 6 x 8 cells, 1 on even cells and
// 0.35 on odd ones.
fn checker(uv: vec2<f32>) -> f32 {
    let cell = floor(uv * vec2<f32>(6.0, 8.0));
    return select(0.35, 1.0, fract(0.5 * (cell.x + cell.y)) < 0.25);
}

// The material's colour: base colour x texture, lit, plus emissive.
fn material_color(instance: u32, stored: vec3<f32>, light: f32) -> vec3<f32> {
    let at = instance * draw.material.w;
    let c = at + draw.material.x;
    let base = vec3<f32>(samples[c], samples[c + 1u], samples[c + 2u]);
    let strength = samples[at + draw.material.y];
    let o = at + draw.material.z;
    let offset = vec2<f32>(samples[o], samples[o + 1u]);
    // KHR_texture_transform with scale 1 and rotation 0: uv + offset.
    let albedo = base * checker(tube_uv(stored) + offset);
    return albedo * light + draw.emissive * strength;
}

@fragment
fn fs_main(in: VertexOut) -> @location(0) vec4<f32> {
    // Flat shading from screen-space derivatives: no normals needed.
    let n = normalize(cross(dpdx(in.world), dpdy(in.world)));
    let light = 0.25 + 0.75 * abs(dot(n, normalize(draw.light_dir.xyz)));
    if (draw.shade == 1u) {
        return vec4<f32>(material_color(in.instance, in.stored, light), 1.0);
    }
    return vec4<f32>(in.color * light, 1.0);
}
