// The one prelude every kernel is built from (the crate's stages and the
// bench's kernels alike): every struct that crosses the Rust/WGSL boundary
// and every constant both languages use. Rust twins: src/layout.rs; the
// naga test in tests/layout.rs compares every struct member by member and
// every constant by value, so a change on one side only fails `cargo test`.

// ---------------------------------------------------------------- sampling

struct Track {
    times_offset: u32,
    key_count: u32,
    values_offset: u32,
    width: u32,
    interpolation: u32,
    kind: u32,               // KIND_*: how to interpolate, never what is targeted
    output_offset: u32,
    node: u32,
    lookup_scale: f32,
    lookup_origin: f32,
    search_offset: u32,      // first texel in key_windows (layout.rs, GpuTrack)
}

struct Clip {
    track_offset: u32,
    track_count: u32,
    output_width: u32,
    duration: f32,
    // Per track group (GROUP_SLERP .. GROUP_STEP): its first row in the
    // track table and its number of tracks.
    group_first: array<u32, SAMPLE_GROUPS>,
    group_count: array<u32, SAMPLE_GROUPS>,
}

struct Instance {
    clip: u32,
    time: f32,
    _pad0: u32,
    _pad1: u32,
}

struct Params {
    instance_count: u32,
    tracks_per_instance: u32,
    output_stride: u32,
    row_invocations: u32,
}

// The clip-blocks plan (src/plan.rs, `SamplerPlan::ClipBlocks`): instances
// sorted by clip on the host, one workgroup per block of at most
// WORKGROUP_SIZE instances of one clip and one track row of the dispatch's
// group, so that the block and the row are read at workgroup-uniform
// indices (from uniform copies of their tables' first BLOCK_HEAD and
// ROW_HEAD entries).
struct SampleBlock {
    first: u32,              // its first entry in the sorted instance table
    count: u32,              // its instances, 1 ..= WORKGROUP_SIZE
    row_first: u32,          // the dispatch group's first track row of the clip
    row_count: u32,          // the group's track rows in the clip
}

// The fields of track row r that the clip-blocks plan reads, at row r of
// its row table (the track table's order). In a group with run tables
// (RUN_KEYS 2, 3) search_offset is the row's first key texel and the
// lookup scale and origin are 0 (GpuSampleRow::of_key_texels).
struct SampleRow {
    values_offset: u32,
    output_offset: u32,
    search_offset: u32,
    key_count: u32,
    lookup_scale: f32,
    lookup_origin: f32,
    width: u32,
    interpolation: u32,
}

// A clip-blocks dispatch's parameters (a uniform, one slot per group, or
// per window of a compressed library's block heads).
struct BlockParams {
    block_base: u32,         // the group's first block in the block table
    block_count: u32,        // the group's blocks
    output_stride: u32,
    grid_width: u32,         // workgroups.x of the (x, y) grid
    head_first: u32,         // the first row of the bound decode_heads window
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

// Entries of the block and row tables that the clip-blocks plan reads
// from uniform buffers (32 KiB each).
const BLOCK_HEAD: u32 = 2048u;
const ROW_HEAD: u32 = 1024u;
// Rows of a compressed library's block heads in their uniform copies
// (decode.wgsl's decode_heads and decode_frames, 64 KiB each): a window
// of them, from row BlockParams.head_first, where the library has more.
const DECODE_HEAD: u32 = 2048u;

const INTERP_STEP: u32 = 0u;
const INTERP_LINEAR: u32 = 1u;
const INTERP_CUBICSPLINE: u32 = 2u;

// How the sampler interpolates a track's values (Track.kind).
const KIND_VECTOR: u32 = 0u;
const KIND_ROTATION: u32 = 1u;
const KIND_DISCRETE: u32 = 2u;

// Node properties: the slots of the pose stage's channel table.
const PROP_TRANSLATION: u32 = 0u;
const PROP_ROTATION: u32 = 1u;
const PROP_SCALE: u32 = 2u;
const PROP_WEIGHTS: u32 = 3u;

const WORKGROUP_SIZE: u32 = 64u;

// Track groups: each clip's tracks are grouped in the track table as
// [LINEAR rotations | CUBICSPLINE but rotations | other LINEAR tracks |
// CUBICSPLINE rotations | STEP], in GROUP_* order; the clip table holds
// each group's first row and count. The reference plan samples every track
// in one dispatch (override GROUP = GROUP_ALL); the CPU-adapter plan
// dispatches each non-empty group with a pipeline compiled for it alone
// (src/plan.rs).
const GROUP_SLERP: u32 = 0u;
const GROUP_CUBIC: u32 = 1u;
const GROUP_BLEND: u32 = 2u;
const GROUP_CUBIC_ROTATION: u32 = 3u;
const GROUP_STEP: u32 = 4u;
const GROUP_ALL: u32 = 5u;
const SAMPLE_GROUPS: u32 = 5u;

// Compressed tracks (src/model/compressed.rs, decode.wgsl): a track's
// block in the packed words starts with COMPRESS_HEADER_WORDS words
// [meta, value step, tangent step, dt]; each stream's elements are stored
// as quantized vectors, smallest-three rotations, raw f32s or rotations
// in a frame of their own (then FRAME_WORDS words of frame after the
// stream's offsets).
const COMPRESS_HEADER_WORDS: u32 = 4u;
const ENC_VECTOR: u32 = 0u;
const ENC_SMALLEST_THREE: u32 = 1u;
const ENC_RAW: u32 = 2u;
const ENC_FRAMED: u32 = 3u;
const FRAME_WORDS: u32 = 8u;
// A verbatim track (decode.wgsl's VERBATIM_START) has no block: the
// decoder takes this meta word for it, raw values and raw tangents of 32
// bits (ENC_RAW | 32 << 8 | ENC_RAW << 16 | 32 << 24).
const VERBATIM_META: u32 = 0x20022002u;

// The key search's tables are 2D textures 2^KEY_TEXTURE_ROW_SHIFT texels
// wide (less on a device with a smaller max_texture_dimension_2d: the
// sampler's override ROW_SHIFT).
const KEY_TEXTURE_ROW_SHIFT: u32 = 12u;

// The key search's bound on its steps: each bisecting step that does not
// end a search halves its key range (the first guess and its neighbour
// need not), so a search ends within 2 + 33 steps for any u32 key count;
// the bound only guards against a loop that never ends.
const SEARCH_STEPS: u32 = 64u;

// ---------------------------------------------------------------- rig

struct Node {
    translation: vec4<f32>,  // xyz used
    rotation: vec4<f32>,     // x, y, z, w
    scale: vec4<f32>,        // xyz used
    parent: i32,             // -1: root
    mesh: i32,               // -1: none
    first_joint: i32,        // first joint slot whose joint node this is, -1: none
    chain: u32,              // nodes from this one on, each the child of the one before (>= 1)
}

struct Mesh {
    weights_offset: u32,     // in an instance's morph-weight block
    target_count: u32,
    defaults_offset: u32,    // in default_weights
    node: u32,               // the lowest-index node using the mesh (the
                             // node a mask factor is read for), NO_NODE: none
}

struct Joint {
    node: u32,               // the joint node
    mesh_node: i32,          // the skin's mesh node, -1: none
    skin: u32,
    next_joint: i32,         // next slot with the same joint node, -1: none
}

// The local pose of one node of one instance: the pose stage's output
// (pose.wgsl, `locals`, at instance * node_count + node) and the hierarchy
// stage's input. Rotation is a unit quaternion (the pose stage normalizes
// it; the hierarchy stage does not).
struct LocalPose {
    translation: vec4<f32>,  // xyz used, w = 0
    rotation: vec4<f32>,     // x, y, z, w
    scale: vec4<f32>,        // xyz used, w = 0
}

struct SkinParams {
    instance_count: u32,
    node_count: u32,
    joint_count: u32,
    mesh_count: u32,
    morph_stride: u32,
    output_stride: u32,      // the sampler's floats per instance
    clip_count: u32,
    skin_count: u32,
    mesh_nodes: vec4<i32>,   // skins 0..3's mesh nodes (-1: none) when
                             // skin_count <= MAX_FUSED_SKINS
    pointer_count: u32,      // pointer targets of the library (the mixer's
                             // property pass: one invocation per target)
    property_stride: u32,    // floats of blended pointer properties per
                             // character (mix.wgsl's `properties`)
    _pad0: u32,
    _pad1: u32,
}

// ---------------------------------------------------------------- mixer

// One action of a character in the mixer's action table (mix.wgsl): a
// sampled row of the sampler's output blended into the character's pose.
struct MixAction {
    row: u32,                // the sampler row holding the action's values
    reference_row: u32,      // additive: the row of its reference time;
                             // NO_ROW: a normal action
    clip: u32,               // the row's clip (its pose channels)
    mask: u32,               // the mask (factors per node), NO_MASK: none
    weight: f32,             // finite, >= 0
    blend: u32,              // BLEND_MIX, BLEND_ADDITIVE or BLEND_OVERRIDE
}

// How an action blends (MixAction.blend): weighed among the normal actions
// (rule 1), added on top (rules 4-5: reference_row holds its reference
// time), or replacing what lies under it by its weight (rule 3).
const BLEND_MIX: u32 = 0u;
const BLEND_ADDITIVE: u32 = 1u;
const BLEND_OVERRIDE: u32 = 2u;

const NO_ROW: u32 = 0xffffffffu;
const NO_MASK: u32 = 0xffffffffu;
const NO_NODE: u32 = 0xffffffffu;

// The hard maximum of actions per character (the mixer's loop bound).
const MAX_ACTIONS: u32 = 16u;

// Rigs with at most this many skins get their joint matrices inside the
// hierarchy walk (skin.wgsl); more skins take a separate joint loop.
const MAX_FUSED_SKINS: u32 = 4u;

// skin_main writes a node's joint slots in straight code when no node has
// more than this many (NODE_SLOTS in skin.wgsl), in a loop otherwise.
const MAX_UNROLLED_SLOTS: u32 = 4u;

const SKIN_WORKGROUP_SIZE: u32 = 64u;

// Flat invocation index of a (possibly 2D) dispatch.
fn flat_index(gid: vec3<u32>, groups: vec3<u32>) -> u32 {
    return gid.y * (groups.x * SKIN_WORKGROUP_SIZE) + gid.x;
}

// Entries of the node, joint, inverse-bind and pose-channel tables that the
// pose and skin passes read from uniform copies (the first UNIFORM_HEAD of
// each).
const UNIFORM_HEAD: u32 = 256u;

// The most nodes a rig may have for the per-node skin strategy (one
// workgroup per instance, a workgroup matrix per node).
const MAX_PARALLEL_NODES: u32 = 128u;
