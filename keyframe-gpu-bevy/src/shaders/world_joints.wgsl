// World-space joint matrices: per character and joint, the character's
// placement in the world times its skin node's world matrix times the
// crate's joint matrix (relative to the skin node). The vertex stage of a
// skinned mesh then blends four of these and is done, as Bevy's own
// skinning is: no per-vertex matrix of the entity or of the skin node.

struct Params {
    characters: u32,
    joints_per_character: u32,
    nodes_per_character: u32,
    // Workgroups in x of the dispatch (a large one spills into y).
    groups_x: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> joints: array<mat4x4<f32>>;
@group(0) @binding(2) var<storage, read> worlds: array<mat4x4<f32>>;
// Per character: world(mesh entity) * inverse(rest(mesh node)), the
// scene root's world matrix.
@group(0) @binding(3) var<storage, read> placements: array<mat4x4<f32>>;
// Per joint of a character's block: the node whose world matrix places
// its skin (the part's skin node).
@group(0) @binding(4) var<storage, read> joint_nodes: array<u32>;
@group(0) @binding(5) var<storage, read_write> world_joints: array<mat4x4<f32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x + id.y * params.groups_x * 64u;
    if i >= params.characters * params.joints_per_character {
        return;
    }
    let character = i / params.joints_per_character;
    let joint = i % params.joints_per_character;
    let node = joint_nodes[joint];
    let skin_node = worlds[character * params.nodes_per_character + node];
    world_joints[i] = placements[character] * (skin_node * joints[i]);
}
