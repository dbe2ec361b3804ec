//! [`Rig`]: the node hierarchy, rest pose, skins and morph-target meshes of
//! a scene, and `SkinTables` (`tables::rig`), the flat form of a rig plus an
//! [`AnimationLibrary`](crate::AnimationLibrary) that the morph and skin
//! passes (GPU and CPU twin) read.
//!
//! Nodes keep their glTF indices (a [`crate::Track`]'s `node` is one of
//! them). [`Rig::order`] lists them parents before children, whatever order
//! the file used; the passes themselves do not depend on the order (see
//! `shaders/skin.wgsl`).

use crate::error::RigError;
use glam::{Mat4, Quat, Vec3};

use crate::error::Result;
use crate::model::target::{NodeName, SourceId};

/// A node's rest transform, as a glTF node gives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NodeTransform {
    /// Translation, rotation (unit quaternion x, y, z, w) and scale.
    Trs {
        /// Translation.
        translation: [f32; 3],
        /// Rotation, x, y, z, w.
        rotation: [f32; 4],
        /// Scale.
        scale: [f32; 3],
    },
    /// A column-major 4x4 matrix (glTF `matrix`), decomposed into TRS when
    /// the rig is built.
    Matrix([f32; 16]),
}

impl NodeTransform {
    /// The identity: no translation, no rotation, unit scale.
    pub const IDENTITY: NodeTransform = NodeTransform::Trs {
        translation: [0.0; 3],
        rotation: [0.0, 0.0, 0.0, 1.0],
        scale: [1.0; 3],
    };

    /// A translation only.
    #[must_use]
    pub fn translation(t: [f32; 3]) -> Self {
        NodeTransform::Trs {
            translation: t,
            rotation: [0.0, 0.0, 0.0, 1.0],
            scale: [1.0; 3],
        }
    }
}

/// One node of a [`Rig`], with its rest pose as translation, rotation,
/// scale (matrix nodes already decomposed).
#[derive(Debug, Clone, PartialEq)]
pub struct RigNode {
    /// The node's name, if any.
    pub name: Option<String>,
    /// The parent node, `None` for a root.
    pub parent: Option<u32>,
    /// Rest translation.
    pub translation: [f32; 3],
    /// Rest rotation, x, y, z, w.
    pub rotation: [f32; 4],
    /// Rest scale.
    pub scale: [f32; 3],
    /// The mesh this node instantiates.
    pub mesh: Option<u32>,
    /// The skin its mesh uses.
    pub skin: Option<u32>,
}

/// A skin: joint nodes and their inverse bind matrices.
#[derive(Debug, Clone, PartialEq)]
pub struct RigSkin {
    /// The skin's name, if any.
    pub name: Option<String>,
    /// Joint nodes, in the skin's order (the order of its joint matrices).
    pub joints: Vec<u32>,
    /// One column-major inverse bind matrix per joint.
    pub inverse_bind_matrices: Vec<[f32; 16]>,
    /// The skinned mesh node: the lowest-index node that uses this skin,
    /// `None` if no node does (its joint matrices then omit the inverse of
    /// the mesh node's global transform).
    pub mesh_node: Option<u32>,
}

/// A mesh as far as animation is concerned: its morph targets.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RigMesh {
    /// Number of morph targets (0 if none).
    pub target_count: u32,
    /// Default weights (`target_count` of them); zeros when the file gives
    /// none.
    pub default_weights: Vec<f32>,
}

/// The node hierarchy, rest pose, skins and meshes of a scene.
///
/// Build one in code with [`RigBuilder`], or from a glTF file with `Rig::from_document`
/// (feature `gltf`, in `gltf`).
///
/// A rig has an identity: the masks made for it ([`crate::Mask`]) are
/// refused on any other rig. A clone is the same rig. Equality (`==`)
/// compares the structure (nodes, skins, meshes), not the identity.
#[derive(Debug, Clone)]
pub struct Rig {
    nodes: Vec<RigNode>,
    skins: Vec<RigSkin>,
    meshes: Vec<RigMesh>,
    order: Vec<u32>,
    id: RigId,
    source: Option<SourceId>,
}

impl PartialEq for Rig {
    fn eq(&self, other: &Rig) -> bool {
        self.nodes == other.nodes && self.skins == other.skins && self.meshes == other.meshes
    }
}

/// The identity of a [`Rig`]: every rig built gets its own, its clones
/// share it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct RigId(u64);

impl RigId {
    fn next() -> RigId {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        RigId(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

fn finite(v: &[f32]) -> bool {
    v.iter().all(|x| x.is_finite())
}

/// Translation, rotation (x, y, z, w), scale.
type Trs = ([f32; 3], [f32; 4], [f32; 3]);

/// Decomposes a column-major TRS matrix (glam's decomposition; a negative
/// determinant becomes a negative x scale).
pub(crate) fn decompose(node: u32, m: &[f32; 16]) -> Result<Trs, RigError> {
    if !finite(m) {
        return Err(RigError::BadRestTransform {
            node,
            what: "matrix",
        });
    }
    if m[3] != 0.0 || m[7] != 0.0 || m[11] != 0.0 || m[15] != 1.0 {
        return Err(RigError::MatrixNotDecomposable { node });
    }
    let mat = Mat4::from_cols_array(m);
    if mat.determinant() == 0.0 {
        return Err(RigError::MatrixNotDecomposable { node });
    }
    let (s, r, t) = mat.to_scale_rotation_translation();
    let (s, r, t) = (s.to_array(), r.to_array(), t.to_array());
    if !finite(&s) || !finite(&r) || !finite(&t) {
        return Err(RigError::MatrixNotDecomposable { node });
    }
    Ok((t, r, s))
}

/// Builds a [`Rig`] in code. Nodes are created with their parent, which must
/// already exist, so the result is ordered parents first.
#[derive(Debug, Clone, Default)]
pub struct RigBuilder {
    /// Per node: parent, rest transform, mesh, skin.
    #[allow(clippy::type_complexity, reason = "private, documented here")]
    nodes: Vec<(Option<u32>, NodeTransform, Option<u32>, Option<u32>)>,
    skins: Vec<(Vec<u32>, Vec<[f32; 16]>)>,
    meshes: Vec<RigMesh>,
    /// Names given with [`RigBuilder::name`], by node.
    names: Vec<(u32, String)>,
}

impl RigBuilder {
    /// Adds a node under `parent` (or a root) and returns its index.
    pub fn node(&mut self, parent: Option<u32>, transform: NodeTransform) -> u32 {
        self.nodes.push((parent, transform, None, None));
        (self.nodes.len() - 1) as u32
    }

    /// Names `node` (for [`Rig::node_by_name`]); a later name replaces an
    /// earlier one.
    pub fn name(&mut self, node: u32, name: impl Into<String>) {
        self.names.retain(|(n, _)| *n != node);
        self.names.push((node, name.into()));
    }

    /// Adds a mesh with `target_count` morph targets and its default
    /// weights (empty for zeros) and returns its index.
    pub fn mesh(&mut self, target_count: u32, default_weights: Vec<f32>) -> u32 {
        self.meshes.push(RigMesh {
            target_count,
            default_weights,
        });
        (self.meshes.len() - 1) as u32
    }

    /// Adds a skin (joint nodes and one inverse bind matrix per joint) and
    /// returns its index.
    pub fn skin(&mut self, joints: Vec<u32>, inverse_bind_matrices: Vec<[f32; 16]>) -> u32 {
        self.skins.push((joints, inverse_bind_matrices));
        (self.skins.len() - 1) as u32
    }

    /// Makes `node` instantiate `mesh`, skinned by `skin` if given. Unknown
    /// nodes are ignored here and meshes/skins are checked by
    /// [`build`](Self::build).
    pub fn attach(&mut self, node: u32, mesh: u32, skin: Option<u32>) {
        if let Some(n) = self.nodes.get_mut(node as usize) {
            n.2 = Some(mesh);
            n.3 = skin;
        }
    }

    /// Validates and builds the rig.
    ///
    /// # Errors
    /// [`RigError::NoNodes`], a parent, mesh, skin or joint out of range, a
    /// cycle, non-finite rest values or a zero rotation, inverse bind
    /// matrices not matching the joints, default weights not matching the
    /// target count; [`RigError::MatrixNotDecomposable`] and
    /// [`RigError::BadRestTransform`] for matrix nodes.
    pub fn build(self) -> Result<Rig, RigError> {
        let mut nodes = Vec::with_capacity(self.nodes.len());
        for (i, (parent, transform, mesh, skin)) in self.nodes.into_iter().enumerate() {
            let (translation, rotation, scale) = match transform {
                NodeTransform::Trs {
                    translation,
                    rotation,
                    scale,
                } => (translation, rotation, scale),
                NodeTransform::Matrix(m) => decompose(i as u32, &m)?,
            };
            let name = self
                .names
                .iter()
                .find(|(n, _)| *n as usize == i)
                .map(|(_, name)| name.clone());
            nodes.push(RigNode {
                name,
                parent,
                translation,
                rotation,
                scale,
                mesh,
                skin,
            });
        }
        let skins = self
            .skins
            .into_iter()
            .map(|(joints, inverse_bind_matrices)| RigSkin {
                name: None,
                joints,
                inverse_bind_matrices,
                mesh_node: None,
            })
            .collect();
        Rig::from_parts(nodes, skins, self.meshes)
    }
}

impl Rig {
    /// A [`RigBuilder`].
    #[must_use]
    pub fn builder() -> RigBuilder {
        RigBuilder::default()
    }

    /// Validates the parts and builds a rig. Nodes may come in any order
    /// (a parent after its child is fine): [`order`](Self::order) is
    /// computed. Each skin's `mesh_node` is recomputed as the lowest-index
    /// node that uses it. Meshes with no default weights get zeros.
    ///
    /// # Errors
    /// [`RigError::NoNodes`], a parent, mesh, skin or joint out of range, a
    /// cycle, non-finite rest values or a zero rotation, inverse bind
    /// matrices not matching the joints, default weights not matching the
    /// target count.
    pub(crate) fn from_parts(
        nodes: Vec<RigNode>,
        mut skins: Vec<RigSkin>,
        mut meshes: Vec<RigMesh>,
    ) -> Result<Rig, RigError> {
        if nodes.is_empty() {
            return Err(RigError::NoNodes);
        }
        for (i, node) in nodes.iter().enumerate() {
            check_node(i as u32, node, nodes.len(), meshes.len(), skins.len())?;
        }
        let depth = node_depths(&nodes)?;
        let mut order: Vec<u32> = (0..nodes.len() as u32).collect();
        order.sort_by_key(|&i| depth[i as usize]); // stable: ties keep file order
        for (s, skin) in skins.iter_mut().enumerate() {
            let s = s as u32;
            check_skin(s, skin, nodes.len())?;
            skin.mesh_node = nodes
                .iter()
                .position(|node| node.skin == Some(s))
                .map(|p| p as u32);
        }
        for (m, mesh) in meshes.iter_mut().enumerate() {
            fill_default_weights(m as u32, mesh)?;
        }
        Ok(Rig {
            nodes,
            skins,
            meshes,
            order,
            id: RigId::next(),
            source: None,
        })
    }

    /// The same rig, marked as read from `source` (the glTF importer does
    /// this): clips of the same source bind to it by node index.
    #[must_use]
    pub(crate) fn with_source(self, source: SourceId) -> Rig {
        Rig {
            source: Some(source),
            ..self
        }
    }

    /// The file the rig was read from, if it was.
    #[must_use]
    pub fn source(&self) -> Option<SourceId> {
        self.source
    }

    pub(crate) fn id(&self) -> RigId {
        self.id
    }

    /// The names from the root down to `node` (its own last), `None` for
    /// nodes without a name; empty for a node out of range.
    #[must_use]
    pub(crate) fn name_path(&self, node: u32) -> Vec<Option<&str>> {
        let mut path = Vec::new();
        let mut at = self.nodes.get(node as usize).map(|_| node);
        // Parents form a forest (checked at build): the walk ends.
        while let Some(n) = at {
            let node = &self.nodes[n as usize];
            path.push(node.name.as_deref());
            at = node.parent;
        }
        path.reverse();
        path
    }

    /// Node `node` named as a track of another file would name it: its
    /// name and name path; `None` for a node without a name or out of
    /// range.
    #[must_use]
    pub fn node_name(&self, node: u32) -> Option<NodeName> {
        NodeName::from_path(
            self.name_path(node)
                .into_iter()
                .map(|n| n.map(str::to_owned))
                .collect(),
        )
    }

    /// The index of the first node named `name`, or `None` when no node
    /// has that name.
    #[must_use]
    pub fn node_by_name(&self, name: &str) -> Option<u32> {
        let index = self
            .nodes
            .iter()
            .position(|n| n.name.as_deref() == Some(name))?;
        u32::try_from(index).ok()
    }

    /// The nodes, indexed as in the file (or as the builder returned them).
    #[must_use]
    pub fn nodes(&self) -> &[RigNode] {
        &self.nodes
    }

    /// The skins.
    #[must_use]
    pub fn skins(&self) -> &[RigSkin] {
        &self.skins
    }

    /// The meshes.
    #[must_use]
    pub fn meshes(&self) -> &[RigMesh] {
        &self.meshes
    }

    /// Node indices ordered parents before children (by depth, ties in
    /// index order).
    #[must_use]
    pub fn order(&self) -> &[u32] {
        &self.order
    }

    /// The rest local matrix of `node` (`T * R * S`, computed with glam, for
    /// tools; the passes and their twin compose it as the shader does,
    /// `compose_trs` in `src/cpu/skin.rs`). `None` if out of range.
    #[must_use]
    pub(crate) fn rest_local(&self, node: u32) -> Option<Mat4> {
        let n = self.nodes.get(node as usize)?;
        Some(Mat4::from_scale_rotation_translation(
            Vec3::from_array(n.scale),
            Quat::from_array(n.rotation).normalize(),
            Vec3::from_array(n.translation),
        ))
    }

    /// Node `node`'s world matrix in the rest pose: its rest local matrix
    /// (`T * R * S`) after those of its ancestors, root first, in the
    /// space the rig's roots are in (the model's space). `None` if out of
    /// range.
    #[must_use]
    pub fn rest_world(&self, node: u32) -> Option<Mat4> {
        let mut m = self.rest_local(node)?;
        let mut at = self.nodes[node as usize].parent;
        // A rig's parents form a forest (checked when it is built), so
        // the walk ends within `nodes.len()` steps.
        for _ in 0..self.nodes.len() {
            let Some(p) = at else { break };
            m = self.rest_local(p)? * m;
            at = self.nodes[p as usize].parent;
        }
        Some(m)
    }
}

/// Checks node `i` of `n`: its parent, mesh and skin in range, its rest
/// transform finite with a non-zero rotation.
fn check_node(
    i: u32,
    node: &RigNode,
    n: usize,
    mesh_count: usize,
    skin_count: usize,
) -> Result<(), RigError> {
    if let Some(p) = node.parent {
        if p as usize >= n {
            return Err(RigError::ParentOutOfRange {
                node: i,
                parent: p,
                node_count: n,
            });
        }
    }
    let q = node.rotation;
    if !finite(&node.translation) {
        return Err(RigError::BadRestTransform {
            node: i,
            what: "translation",
        });
    }
    if !finite(&q) || q.iter().map(|c| c * c).sum::<f32>() == 0.0 {
        return Err(RigError::BadRestTransform {
            node: i,
            what: "rotation",
        });
    }
    if !finite(&node.scale) {
        return Err(RigError::BadRestTransform {
            node: i,
            what: "scale",
        });
    }
    if let Some(m) = node.mesh {
        if m as usize >= mesh_count {
            return Err(RigError::MeshOutOfRange {
                node: i,
                mesh: m,
                mesh_count,
            });
        }
    }
    if let Some(s) = node.skin {
        if s as usize >= skin_count {
            return Err(RigError::SkinOutOfRange {
                node: i,
                skin: s,
                skin_count,
            });
        }
    }
    Ok(())
}

/// Each node's depth, by walking up its parents; a walk longer than the
/// node count is a cycle.
fn node_depths(nodes: &[RigNode]) -> Result<Vec<u32>, RigError> {
    let n = nodes.len();
    let mut depth = vec![0u32; n];
    for (i, d) in depth.iter_mut().enumerate() {
        let mut steps = 0usize;
        let mut p = nodes[i].parent;
        while let Some(q) = p {
            steps += 1;
            if steps > n {
                return Err(RigError::Cycle { node: i as u32 });
            }
            p = nodes[q as usize].parent;
        }
        *d = steps as u32;
    }
    Ok(depth)
}

/// Checks skin `s`: joints present and among the `n` nodes, one finite
/// inverse bind matrix per joint.
fn check_skin(s: u32, skin: &RigSkin, n: usize) -> Result<(), RigError> {
    if skin.joints.is_empty() {
        return Err(RigError::NoJoints { skin: s });
    }
    for (j, &node) in skin.joints.iter().enumerate() {
        if node as usize >= n {
            return Err(RigError::JointOutOfRange {
                skin: s,
                joint: j,
                node,
                node_count: n,
            });
        }
    }
    if skin.inverse_bind_matrices.len() != skin.joints.len() {
        return Err(RigError::InverseBindCount {
            skin: s,
            expected: skin.joints.len(),
            found: skin.inverse_bind_matrices.len(),
        });
    }
    for (j, m) in skin.inverse_bind_matrices.iter().enumerate() {
        if !finite(m) {
            return Err(RigError::InverseBindNotFinite { skin: s, joint: j });
        }
    }
    Ok(())
}

/// Gives mesh `m` zeros as default weights when it has none, then checks
/// that they are finite, one per morph target.
fn fill_default_weights(m: u32, mesh: &mut RigMesh) -> Result<(), RigError> {
    if mesh.default_weights.is_empty() {
        mesh.default_weights = vec![0.0; mesh.target_count as usize];
    }
    if mesh.default_weights.len() != mesh.target_count as usize || !finite(&mesh.default_weights) {
        return Err(RigError::DefaultWeightsCount {
            mesh: m,
            expected: mesh.target_count,
            found: mesh.default_weights.len(),
        });
    }
    Ok(())
}
