//! The flat form of a [`Rig`] and an [`AnimationLibrary`] that the pose,
//! morph and skin passes read ([`SkinTables`]; the `#[repr(C)]` twins of
//! the WGSL rig structs are in [`crate::layout`]).

use crate::error::{Error, Result};
use crate::kinds::Property;
use crate::layout::{GpuJoint, GpuMesh, GpuNode, GpuSkinParams, NO_NODE};
use crate::model::library::AnimationLibrary;
use crate::model::rig::Rig;
use crate::model::BoundLibrary;

/// "Not animated: use the rest value" in [`SkinTables::channels`].
pub(crate) const REST: i32 = -1;

/// A [`Rig`] and an [`AnimationLibrary`] flattened for the morph and skin
/// passes: uploaded once by the skin stage, read as is by the CPU twin
/// (`src/cpu/skin.rs`).
///
/// Output layouts (stable), per instance `i`:
/// - local poses (the staged pose pass's `locals`, and the CPU twin's
///   `SkinOutput::locals`) and
///   global matrices: `i * node_count + node`;
/// - joint matrices: `i * joint_count + skin_offsets[skin] + joint`, in the
///   skin's joint order;
/// - morph weights: `i * morph_stride + meshes[mesh].weights_offset + k`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SkinTables {
    nodes: Vec<GpuNode>,
    channels: Vec<[i32; 4]>,
    meshes: Vec<GpuMesh>,
    default_weights: Vec<f32>,
    morph_channels: Vec<i32>,
    joints: Vec<GpuJoint>,
    inverse_binds: Vec<[f32; 16]>,
    pub(crate) skin_offsets: Vec<u32>,
    pub(crate) skin_nodes: Vec<Option<u32>>,
    morph_stride: u32,
    output_stride: u32,
    clip_count: u32,
    pointer_channels: Vec<i32>,
    pointer_targets: Vec<[u32; 4]>,
    pointer_rest: Vec<f32>,
    mesh_inverses_identity: bool,
    inverse_binds_affine: bool,
    parents_first: bool,
}

/// Whether every skin's mesh-node inverse is the identity in every pose:
/// each skin has no mesh node, or one that, with all its ancestors, rests
/// at the identity (translation 0, rotation (0, 0, 0, 1), scale 1) and is
/// animated by no track of any clip (`channels` holds [`REST`] for its
/// translation, rotation and scale in every clip). A node table with a
/// cycle (refused elsewhere) answers false.
fn mesh_inverses_identity(
    nodes: &[GpuNode],
    channels: &[[i32; 4]],
    skin_nodes: &[Option<u32>],
) -> bool {
    let node_count = nodes.len();
    let still = |n: usize| {
        let node = &nodes[n];
        node.translation[..3] == [0.0; 3]
            && node.rotation == [0.0, 0.0, 0.0, 1.0]
            && node.scale[..3] == [1.0; 3]
            && channels
                .iter()
                .skip(n)
                .step_by(node_count.max(1))
                .all(|c| c[..3] == [REST; 3])
    };
    skin_nodes.iter().all(|mesh| {
        let mut at = mesh.map(|m| m as i64);
        for _ in 0..=node_count {
            match at {
                None => return true,
                Some(n) if n < 0 => return true,
                Some(n) => {
                    let n = n as usize;
                    if n >= node_count || !still(n) {
                        return false;
                    }
                    at = Some(i64::from(nodes[n].parent));
                }
            }
        }
        false
    })
}

fn offset_i32(offset: u32) -> Result<i32> {
    i32::try_from(offset).map_err(|_| Error::LimitExceeded {
        what: "sampler output offset",
        needed: u64::from(offset) * 4,
        limit_name: "i32 indexing",
        limit: i32::MAX as u64,
    })
}

/// The limit error for a count of `what` that does not fit `u32`.
fn too_big(what: &'static str, n: usize) -> Error {
    Error::LimitExceeded {
        what,
        needed: n as u64,
        limit_name: "u32 indexing",
        limit: u64::from(u32::MAX),
    }
}

/// The rig's nodes as the passes read them, each with the length of the
/// parent-to-child chain it heads and no joint slot linked yet.
fn gpu_nodes(rig: &Rig) -> Vec<GpuNode> {
    let mut nodes = rig
        .nodes()
        .iter()
        .map(|n| GpuNode {
            translation: [n.translation[0], n.translation[1], n.translation[2], 0.0],
            rotation: n.rotation,
            scale: [n.scale[0], n.scale[1], n.scale[2], 0.0],
            parent: n.parent.map_or(-1, |p| p as i32),
            mesh: n.mesh.map_or(-1, |m| m as i32),
            first_joint: -1,
            chain: 1,
        })
        .collect::<Vec<_>>();
    // Back to front: a node whose next node is its child heads one
    // node more than that child does.
    for n in (0..nodes.len().saturating_sub(1)).rev() {
        if nodes[n + 1].parent == n as i32 {
            nodes[n].chain = nodes[n + 1].chain.saturating_add(1);
        }
    }
    nodes
}

/// The rig's meshes (their `node` not yet set), all default weights one
/// after another, and the morph weights per instance.
fn mesh_tables(rig: &Rig) -> Result<(Vec<GpuMesh>, Vec<f32>, u32)> {
    let mut meshes = Vec::with_capacity(rig.meshes().len());
    let mut default_weights = Vec::new();
    let mut morph_stride = 0u32;
    for m in rig.meshes() {
        meshes.push(GpuMesh {
            weights_offset: morph_stride,
            target_count: m.target_count,
            defaults_offset: u32::try_from(default_weights.len())
                .map_err(|_| too_big("default weights", default_weights.len()))?,
            node: NO_NODE,
        });
        default_weights.extend_from_slice(&m.default_weights);
        morph_stride = morph_stride
            .checked_add(m.target_count)
            .ok_or_else(|| too_big("morph weights per instance", usize::MAX))?;
    }
    Ok((meshes, default_weights, morph_stride))
}

/// Per (clip, node), the output offset of the tracks animating each node
/// property; per (clip, mesh), the offset of the weights track on the
/// lowest-index node using the mesh. [`REST`] where there is none.
fn channel_tables(bound: &BoundLibrary) -> Result<(Vec<[i32; 4]>, Vec<i32>)> {
    let (rig, library) = (bound.rig(), bound.library());
    let (node_count, mesh_count) = (rig.nodes().len(), rig.meshes().len());
    let clip_count = library.clips().len();
    let table_len = clip_count
        .checked_mul(node_count)
        .ok_or_else(|| too_big("pose channel table", usize::MAX))?;
    let mut channels = vec![[REST; 4]; table_len];
    let mut morph_channels = vec![REST; clip_count * mesh_count];
    let mut morph_node = vec![u32::MAX; clip_count * mesh_count];
    for (c, clip) in library.clips().iter().enumerate() {
        for t in 0..clip.tracks.len() {
            // Pointer tracks and unbound tracks pose no node.
            let Some(node) = bound.node(c as u32, t as u32) else {
                continue;
            };
            let property = clip.tracks[t].property;
            let (offset, _) = library
                .track_output(c as u32, t as u32)
                .ok_or_else(|| too_big("track table", t))?;
            let offset = offset_i32(offset)?;
            if property == Property::Weights {
                // Binding checked that the node's mesh fits the track.
                if let Some(mesh) = rig.nodes()[node as usize].mesh {
                    let ms = c * mesh_count + mesh as usize;
                    if node < morph_node[ms] {
                        morph_node[ms] = node;
                        morph_channels[ms] = offset;
                    }
                }
            }
            channels[c * node_count + node as usize][property as usize] = offset;
        }
    }
    Ok((channels, morph_channels))
}

/// The rig's skins flattened: every skin's joint slots one after another.
struct SkinJointTables {
    joints: Vec<GpuJoint>,
    inverse_binds: Vec<[f32; 16]>,
    skin_offsets: Vec<u32>,
    skin_nodes: Vec<Option<u32>>,
}

impl SkinJointTables {
    /// The joint slots of `rig`'s skins (not yet linked to their nodes),
    /// their inverse bind matrices, and each skin's first slot and mesh
    /// node.
    fn of(rig: &Rig) -> Result<Self> {
        let mut joints = Vec::new();
        let mut inverse_binds = Vec::new();
        let mut skin_offsets = Vec::with_capacity(rig.skins().len());
        let mut skin_nodes = Vec::with_capacity(rig.skins().len());
        for (s, skin) in rig.skins().iter().enumerate() {
            skin_offsets.push(
                u32::try_from(joints.len()).map_err(|_| too_big("joint table", joints.len()))?,
            );
            skin_nodes.push(skin.mesh_node);
            for &node in &skin.joints {
                joints.push(GpuJoint {
                    node,
                    mesh_node: skin.mesh_node.map_or(-1, |m| m as i32),
                    skin: s as u32,
                    next_joint: -1,
                });
            }
            inverse_binds.extend_from_slice(&skin.inverse_bind_matrices);
        }
        Ok(SkinJointTables {
            joints,
            inverse_binds,
            skin_offsets,
            skin_nodes,
        })
    }
}

/// Links each node to its joint slots, in slot order (back to front, so
/// each slot's successor is already linked).
fn link_joints(nodes: &mut [GpuNode], joints: &mut [GpuJoint]) -> Result<()> {
    let joint_count =
        i32::try_from(joints.len()).map_err(|_| too_big("joint table", joints.len()))?;
    for j in (0..joint_count).rev() {
        let joint = &mut joints[j as usize];
        if let Some(node) = nodes.get_mut(joint.node as usize) {
            joint.next_joint = node.first_joint;
            node.first_joint = j;
        }
    }
    Ok(())
}

impl SkinTables {
    /// Flattens the bound library's rig and maps every bound track of
    /// every clip to the node property (or mesh weights) it animates.
    ///
    /// For each (clip, node) the table holds the output offset of the
    /// track animating translation, rotation, scale and weights, or
    /// [`REST`]. A mesh's animated weights come from the weights track on
    /// the lowest-index node that uses the mesh; meshes without one use
    /// their default weights.
    ///
    /// # Errors
    /// [`Error::LimitExceeded`] when a count does not fit the tables'
    /// 32-bit indexing.
    pub(crate) fn of(bound: &BoundLibrary) -> Result<Self> {
        let (rig, library) = (bound.rig(), bound.library());
        let node_count = rig.nodes().len();
        let clip_count = library.clips().len();
        let mut nodes = gpu_nodes(rig);
        let (mut meshes, default_weights, morph_stride) = mesh_tables(rig)?;
        let (channels, morph_channels) = channel_tables(bound)?;
        let mut skins = SkinJointTables::of(rig)?;
        link_joints(&mut nodes, &mut skins.joints)?;
        u32::try_from(node_count).map_err(|_| too_big("node table", node_count))?;
        let (pointer_channels, pointer_targets, pointer_rest) = pointer_tables(library)?;
        // Each mesh's node for the mixer's masks: the lowest index using it.
        for (n, node) in rig.nodes().iter().enumerate().rev() {
            if let Some(mesh) = node.mesh.and_then(|m| meshes.get_mut(m as usize)) {
                mesh.node = n as u32;
            }
        }
        let mesh_inverses_identity = mesh_inverses_identity(&nodes, &channels, &skins.skin_nodes);
        // Column-major: the last row is elements 3, 7, 11 and 15.
        let inverse_binds_affine = skins
            .inverse_binds
            .iter()
            .all(|m| [m[3], m[7], m[11], m[15]] == [0.0, 0.0, 0.0, 1.0]);
        let parents_first = nodes
            .iter()
            .enumerate()
            .all(|(n, node)| node.parent < n as i32);
        Ok(SkinTables {
            mesh_inverses_identity,
            inverse_binds_affine,
            parents_first,
            nodes,
            channels,
            meshes,
            default_weights,
            morph_channels,
            joints: skins.joints,
            inverse_binds: skins.inverse_binds,
            skin_offsets: skins.skin_offsets,
            skin_nodes: skins.skin_nodes,
            morph_stride,
            output_stride: library.output_stride(),
            clip_count: u32::try_from(clip_count).map_err(|_| too_big("clip table", clip_count))?,
            pointer_channels,
            pointer_targets,
            pointer_rest,
        })
    }

    /// For the mixer, per (clip, pointer target) (`clip * pointer_count +
    /// target`, targets in [`AnimationLibrary::pointer_targets`] order):
    /// the offset of the target's slot in the clip's output block when the
    /// clip has a track for it, [`REST`] when it has not (the library's
    /// rest-value filler does not count: a mix treats the clip as not
    /// animating the target).
    #[must_use]
    pub(crate) fn pointer_channels(&self) -> &[i32] {
        &self.pointer_channels
    }

    /// Per pointer target: its slot offset in an instance's output block,
    /// its width, its [`ValueKind`](crate::ValueKind) and the offset of
    /// its values in a character's block of blended properties (and in
    /// [`pointer_rest`](Self::pointer_rest)).
    #[must_use]
    pub(crate) fn pointer_targets(&self) -> &[[u32; 4]] {
        &self.pointer_targets
    }

    /// Every pointer target's rest value, laid out as a character's block
    /// of blended properties.
    #[must_use]
    pub(crate) fn pointer_rest(&self) -> &[f32] {
        &self.pointer_rest
    }

    /// Floats of blended pointer properties per character.
    #[must_use]
    pub(crate) fn property_stride(&self) -> u32 {
        self.pointer_rest.len() as u32
    }

    /// The node table, in rig (glTF) index order.
    #[must_use]
    pub(crate) fn nodes(&self) -> &[GpuNode] {
        &self.nodes
    }

    /// Per (clip, node), at `clip * node_count + node`: the sampler output
    /// offsets of the tracks animating translation, rotation, scale and
    /// weights ([`crate::Property`] order), or [`REST`].
    #[must_use]
    pub(crate) fn channels(&self) -> &[[i32; 4]] {
        &self.channels
    }

    /// The mesh table.
    #[must_use]
    pub(crate) fn meshes(&self) -> &[GpuMesh] {
        &self.meshes
    }

    /// All meshes' default weights, mesh after mesh.
    #[must_use]
    pub(crate) fn default_weights(&self) -> &[f32] {
        &self.default_weights
    }

    /// Per (clip, mesh), at `clip * mesh_count + mesh`: the output offset of
    /// the weights track that drives the mesh, or [`REST`] for the defaults.
    #[must_use]
    pub(crate) fn morph_channels(&self) -> &[i32] {
        &self.morph_channels
    }

    /// The joint table: all skins' joints, skin after skin.
    #[must_use]
    pub(crate) fn joints(&self) -> &[GpuJoint] {
        &self.joints
    }

    /// One inverse bind matrix per joint slot (column-major).
    #[must_use]
    pub(crate) fn inverse_binds(&self) -> &[[f32; 16]] {
        &self.inverse_binds
    }

    /// Whether every skin's mesh-node inverse is the identity in every
    /// pose (no mesh node, or a mesh node that with its ancestors rests at
    /// the identity and is animated by no clip): the joint matrices are
    /// then `global * inverse_bind`, one matrix product fewer (WGSL
    /// override `MESH_INVERSES_IDENTITY`, and the CPU twin's
    /// `joint_matrix`). The results are the same numbers; only the sign of
    /// a zero can differ from the product with the identity.
    #[must_use]
    pub(crate) fn mesh_inverses_are_identity(&self) -> bool {
        self.mesh_inverses_identity
    }

    /// Whether every sampled rotation that the pose channels name starts at
    /// a multiple of 4 floats of an instance's output block, and the
    /// sampler's output stride is a multiple of 4 (a library of rotations
    /// only, or whose clips hold their rotations at such offsets): the
    /// pose and mixer stages then read each rotation as one `vec4` (WGSL
    /// override `ROTATIONS_ALIGNED4`), the same floats.
    #[must_use]
    pub(crate) fn rotations_aligned4(&self) -> bool {
        self.output_stride.is_multiple_of(4)
            && self
                .channels
                .iter()
                .all(|c| c[1] < 0 || c[1].unsigned_abs().is_multiple_of(4))
    }

    /// Whether every node's parent comes before it in the node table (what
    /// `RigBuilder` always writes): the skin walk then goes chain by chain
    /// ([`GpuNode::chain`]; WGSL override `PARENTS_FIRST`, and the CPU
    /// twin's `skin_main`).
    #[must_use]
    pub(crate) fn parents_first(&self) -> bool {
        self.parents_first
    }

    /// Whether some pose channel animates a node's translation: where none
    /// does, the pose and mixer stages leave out the translation reads
    /// (WGSL override `ANIMATED_TRANSLATIONS`).
    #[must_use]
    pub(crate) fn animates_translations(&self) -> bool {
        self.channels.iter().any(|c| c[0] >= 0)
    }

    /// Whether some pose channel animates a node's scale (WGSL override
    /// `ANIMATED_SCALES`, like [`SkinTables::animates_translations`]).
    #[must_use]
    pub(crate) fn animates_scales(&self) -> bool {
        self.channels.iter().any(|c| c[2] >= 0)
    }

    /// Whether every inverse bind matrix is affine, its last row 0, 0, 0, 1
    /// (true of what exporters write; a rig without skins answers true):
    /// the joint matrices then multiply by them with the product of two
    /// affine matrices, which leaves out the terms of the last row (WGSL
    /// override `INVERSE_BINDS_AFFINE`, and the CPU twin's
    /// `joint_matrix`). The results are the same numbers; only the sign of
    /// a zero can differ from the full product.
    #[must_use]
    pub(crate) fn inverse_binds_are_affine(&self) -> bool {
        self.inverse_binds_affine
    }

    /// The most joint slots of any one node: skins that share a joint node
    /// give it a slot each, so this is 1 for a rig whose skins share no
    /// joint, 0 for a rig without skins. The skin pass unrolls its loop
    /// over a node's slots to this many blocks (WGSL override
    /// `NODE_SLOTS`).
    #[must_use]
    pub(crate) fn max_slots_per_node(&self) -> u32 {
        let slots = |first: i32| {
            let mut count = 0u32;
            let mut j = first;
            // Bounded by the slot count: a corrupt chain cannot loop.
            while j >= 0 && (count as usize) < self.joints.len() {
                count += 1;
                j = self.joints.get(j as usize).map_or(-1, |s| s.next_joint);
            }
            count
        };
        self.nodes
            .iter()
            .map(|n| slots(n.first_joint))
            .max()
            .unwrap_or(0)
    }

    /// Nodes in the rig.
    #[must_use]
    pub(crate) fn node_count(&self) -> u32 {
        self.nodes.len() as u32
    }

    /// Meshes in the rig.
    #[must_use]
    pub(crate) fn mesh_count(&self) -> u32 {
        self.meshes.len() as u32
    }

    /// Joint slots per instance (all skins).
    #[must_use]
    pub(crate) fn joint_count(&self) -> u32 {
        self.joints.len() as u32
    }

    /// Morph weights per instance (all meshes).
    #[must_use]
    pub(crate) fn morph_stride(&self) -> u32 {
        self.morph_stride
    }

    /// The library's output stride.
    #[must_use]
    pub(crate) fn output_stride(&self) -> u32 {
        self.output_stride
    }

    /// Clips in the library.
    #[must_use]
    pub(crate) fn clip_count(&self) -> u32 {
        self.clip_count
    }

    /// The dispatch parameters for `instance_count` instances.
    #[must_use]
    pub(crate) fn params(&self, instance_count: u32) -> GpuSkinParams {
        GpuSkinParams {
            instance_count,
            node_count: self.node_count(),
            joint_count: self.joint_count(),
            mesh_count: self.mesh_count(),
            morph_stride: self.morph_stride,
            output_stride: self.output_stride,
            clip_count: self.clip_count,
            skin_count: self.skin_nodes.len() as u32,
            mesh_nodes: std::array::from_fn(|s| {
                self.skin_nodes
                    .get(s)
                    .copied()
                    .flatten()
                    .map_or(-1, |m| m as i32)
            }),
            pointer_count: self.pointer_targets.len() as u32,
            property_stride: self.property_stride(),
            _pad0: 0,
            _pad1: 0,
        }
    }
}

/// The mixer's pointer tables of `library`: per (clip, target) the slot
/// offset where the clip really animates the target, else [`REST`]; per
/// target (slot offset, width, kind, offset in a character's property
/// block); and the rest values in that block's layout.
#[allow(
    clippy::type_complexity,
    reason = "three tables built together, named at the call"
)]
fn pointer_tables(library: &AnimationLibrary) -> Result<(Vec<i32>, Vec<[u32; 4]>, Vec<f32>)> {
    let targets = library.pointer_targets();
    let mut table = Vec::with_capacity(targets.len());
    let mut rest = Vec::new();
    for t in targets {
        let start = rest.len();
        table.push([t.offset, t.width, t.kind as u32, start as u32]);
        rest.extend(t.rest.iter().copied().take(t.width as usize));
        rest.resize(start + t.width as usize, 0.0);
    }
    let mut channels = vec![REST; library.clips().len() * targets.len()];
    for (c, clip) in library.clips().iter().enumerate() {
        for track in &clip.tracks {
            let Some(p) = &track.pointer else { continue };
            if let Some(k) = targets.iter().position(|t| t.pointer == p.pointer) {
                channels[c * targets.len() + k] = offset_i32(targets[k].offset)?;
            }
        }
    }
    Ok((channels, table, rest))
}
