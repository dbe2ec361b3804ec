//! [`Rig`]: the node hierarchy, rest pose, skins and morph-target meshes of
//! a scene, and [`SkinTables`], the flat form of a rig plus an
//! [`AnimationLibrary`] that the morph and skin passes (GPU and CPU twin)
//! read.
//!
//! Nodes keep their glTF indices (a [`crate::Track`]'s `node` is one of
//! them). [`Rig::order`] lists them parents before children, whatever order
//! the file used; the passes themselves do not depend on the order (see
//! `shaders/skin.wgsl`).

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Quat, Vec3};

use crate::error::{Error, Result};
use crate::library::AnimationLibrary;
use crate::track::Property;

/// What is wrong with a rig, or with an animation library played on it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RigError {
    /// The rig has no node.
    #[error("the rig has no node")]
    NoNodes,
    /// A node's parent index is out of range.
    #[error("node {node}: parent {parent} is out of range ({node_count} nodes)")]
    ParentOutOfRange {
        /// The node.
        node: u32,
        /// Its parent index.
        parent: u32,
        /// Number of nodes.
        node_count: usize,
    },
    /// A node is listed as the child of two nodes (glTF: nodes form trees).
    #[error("node {node} is a child of both node {first} and node {second}")]
    MultipleParents {
        /// The node.
        node: u32,
        /// The first parent found.
        first: u32,
        /// The second parent found.
        second: u32,
    },
    /// Following parents from this node comes back to it.
    #[error("node {node} is its own ancestor (the hierarchy has a cycle)")]
    Cycle {
        /// A node on the cycle.
        node: u32,
    },
    /// A rest translation, rotation, scale or matrix is not finite, or a
    /// rotation has zero length.
    #[error("node {node}: rest {what} is not finite or not usable")]
    BadRestTransform {
        /// The node.
        node: u32,
        /// `"translation"`, `"rotation"`, `"scale"` or `"matrix"`.
        what: &'static str,
    },
    /// A node matrix cannot be decomposed into translation, rotation and
    /// scale (singular 3x3 part, or a last row other than 0, 0, 0, 1).
    #[error("node {node}: matrix is not a decomposable TRS matrix")]
    MatrixNotDecomposable {
        /// The node.
        node: u32,
    },
    /// A node names a mesh that does not exist.
    #[error("node {node}: mesh {mesh} is out of range ({mesh_count} meshes)")]
    MeshOutOfRange {
        /// The node.
        node: u32,
        /// The mesh index.
        mesh: u32,
        /// Number of meshes.
        mesh_count: usize,
    },
    /// A node names a skin that does not exist.
    #[error("node {node}: skin {skin} is out of range ({skin_count} skins)")]
    SkinOutOfRange {
        /// The node.
        node: u32,
        /// The skin index.
        skin: u32,
        /// Number of skins.
        skin_count: usize,
    },
    /// A skin has no joint.
    #[error("skin {skin} has no joint")]
    NoJoints {
        /// The skin.
        skin: u32,
    },
    /// A skin's joint is not a node of the rig.
    #[error("skin {skin}: joint {joint} names node {node}, out of range ({node_count} nodes)")]
    JointOutOfRange {
        /// The skin.
        skin: u32,
        /// Index in the skin's joint list.
        joint: usize,
        /// The node index it names.
        node: u32,
        /// Number of nodes.
        node_count: usize,
    },
    /// A skin's inverse bind matrices do not match its joints in number.
    #[error("skin {skin}: {found} inverse bind matrices for {expected} joints")]
    InverseBindCount {
        /// The skin.
        skin: u32,
        /// Number of joints.
        expected: usize,
        /// Number of matrices.
        found: usize,
    },
    /// An inverse bind matrix holds NaN or infinity.
    #[error("skin {skin}: inverse bind matrix {joint} is not finite")]
    InverseBindNotFinite {
        /// The skin.
        skin: u32,
        /// Index of the joint.
        joint: usize,
    },
    /// The inverse bind matrices accessor of a skin cannot be read.
    #[error("skin {skin}: inverse bind matrices accessor {accessor}: {reason}")]
    Accessor {
        /// The skin.
        skin: u32,
        /// The accessor index.
        accessor: usize,
        /// What is wrong.
        reason: String,
    },
    /// The glTF document does not pass the `gltf` crate's validation
    /// (indices out of range, missing required properties, ...).
    #[error("invalid glTF document: {reason}")]
    InvalidDocument {
        /// The validator's message.
        reason: String,
    },
    /// A mesh's default weights do not match its morph-target count.
    #[error("mesh {mesh}: {found} default weights for {expected} morph targets")]
    DefaultWeightsCount {
        /// The mesh.
        mesh: u32,
        /// Number of morph targets.
        expected: u32,
        /// Number of default weights.
        found: usize,
    },
    /// The primitives of a mesh have different morph-target counts.
    #[error(
        "mesh {mesh}: primitive {primitive} has {found} morph targets, primitive 0 has {expected}"
    )]
    TargetCountMismatch {
        /// The mesh.
        mesh: u32,
        /// The primitive.
        primitive: usize,
        /// Targets of primitive 0.
        expected: u32,
        /// Targets of this primitive.
        found: u32,
    },
    /// Skin tables built for one library were given a sampler of another.
    #[error("skin tables were built for a library with output stride {tables_stride} and {tables_clips} clips, the sampler's has {sampler_stride} and {sampler_clips}")]
    LibraryMismatch {
        /// The tables' output stride.
        tables_stride: u32,
        /// The tables' clip count.
        tables_clips: usize,
        /// The sampler library's output stride.
        sampler_stride: u32,
        /// The sampler library's clip count.
        sampler_clips: usize,
    },
    /// A track animates a node that the rig does not have.
    #[error(
        "clip {clip}, track {track}: node {node} is out of range ({node_count} nodes in the rig)"
    )]
    TrackNodeOutOfRange {
        /// The clip.
        clip: usize,
        /// The track in the clip.
        track: usize,
        /// The node it names.
        node: u32,
        /// Number of nodes in the rig.
        node_count: usize,
    },
    /// Two tracks of one clip animate the same property of the same node
    /// (glTF: each target is used at most once per animation).
    #[error(
        "clip {clip}, track {track}: node {node} {property:?} is already animated by track {first}"
    )]
    DuplicateChannel {
        /// The clip.
        clip: usize,
        /// The second track.
        track: usize,
        /// The track found first.
        first: usize,
        /// The node.
        node: u32,
        /// The property.
        property: Property,
    },
    /// A weights track targets a node without a mesh.
    #[error("clip {clip}, track {track}: weights on node {node}, which has no mesh")]
    WeightsWithoutMesh {
        /// The clip.
        clip: usize,
        /// The track.
        track: usize,
        /// The node.
        node: u32,
    },
    /// A weights track's width is not the mesh's morph-target count.
    #[error("clip {clip}, track {track}: {found} weights for node {node}, whose mesh {mesh} has {expected} morph targets")]
    WeightsWidthMismatch {
        /// The clip.
        clip: usize,
        /// The track.
        track: usize,
        /// The node.
        node: u32,
        /// The node's mesh.
        mesh: u32,
        /// The mesh's morph-target count.
        expected: u32,
        /// The track's width.
        found: u32,
    },
}

impl From<RigError> for Error {
    fn from(e: RigError) -> Self {
        Error::Rig(e)
    }
}

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
/// Build one in code with [`RigBuilder`], from parts with
/// [`Rig::from_parts`], or from a glTF document with `Rig::from_gltf`
/// (feature `gltf`).
#[derive(Debug, Clone, PartialEq)]
pub struct Rig {
    nodes: Vec<RigNode>,
    skins: Vec<RigSkin>,
    meshes: Vec<RigMesh>,
    order: Vec<u32>,
    depth: Vec<u32>,
}

fn finite(v: &[f32]) -> bool {
    v.iter().all(|x| x.is_finite())
}

/// Translation, rotation (x, y, z, w), scale.
type Trs = ([f32; 3], [f32; 4], [f32; 3]);

/// Decomposes a column-major TRS matrix (glam's decomposition; a negative
/// determinant becomes a negative x scale).
fn decompose(node: u32, m: &[f32; 16]) -> Result<Trs, RigError> {
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
}

impl RigBuilder {
    /// An empty builder.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a node under `parent` (or a root) and returns its index.
    pub fn node(&mut self, parent: Option<u32>, transform: NodeTransform) -> u32 {
        self.nodes.push((parent, transform, None, None));
        (self.nodes.len() - 1) as u32
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
    /// As [`Rig::from_parts`], plus [`RigError::MatrixNotDecomposable`] and
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
            nodes.push(RigNode {
                name: None,
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
        RigBuilder::new()
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
    pub fn from_parts(
        nodes: Vec<RigNode>,
        mut skins: Vec<RigSkin>,
        mut meshes: Vec<RigMesh>,
    ) -> Result<Rig, RigError> {
        let n = nodes.len();
        if n == 0 {
            return Err(RigError::NoNodes);
        }
        for (i, node) in nodes.iter().enumerate() {
            let i = i as u32;
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
                if m as usize >= meshes.len() {
                    return Err(RigError::MeshOutOfRange {
                        node: i,
                        mesh: m,
                        mesh_count: meshes.len(),
                    });
                }
            }
            if let Some(s) = node.skin {
                if s as usize >= skins.len() {
                    return Err(RigError::SkinOutOfRange {
                        node: i,
                        skin: s,
                        skin_count: skins.len(),
                    });
                }
            }
        }
        // Depth of each node by walking up; a walk longer than n is a cycle.
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
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by_key(|&i| depth[i as usize]); // stable: ties keep file order
        for (s, skin) in skins.iter_mut().enumerate() {
            let s = s as u32;
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
            skin.mesh_node = nodes
                .iter()
                .position(|node| node.skin == Some(s))
                .map(|p| p as u32);
        }
        for (m, mesh) in meshes.iter_mut().enumerate() {
            if mesh.default_weights.is_empty() {
                mesh.default_weights = vec![0.0; mesh.target_count as usize];
            }
            if mesh.default_weights.len() != mesh.target_count as usize
                || !finite(&mesh.default_weights)
            {
                return Err(RigError::DefaultWeightsCount {
                    mesh: m as u32,
                    expected: mesh.target_count,
                    found: mesh.default_weights.len(),
                });
            }
        }
        Ok(Rig {
            nodes,
            skins,
            meshes,
            order,
            depth,
        })
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

    /// Depth of each node (0 for a root).
    #[must_use]
    pub fn depth(&self) -> &[u32] {
        &self.depth
    }

    /// The rest local matrix of `node` (`T * R * S`, computed with glam, for
    /// tools; the passes use [`crate::cpu_skin::compose_trs`]). `None` if out
    /// of range.
    #[must_use]
    pub fn rest_local(&self, node: u32) -> Option<Mat4> {
        let n = self.nodes.get(node as usize)?;
        Some(Mat4::from_scale_rotation_translation(
            Vec3::from_array(n.scale),
            Quat::from_array(n.rotation).normalize(),
            Vec3::from_array(n.translation),
        ))
    }
}

#[cfg(feature = "gltf")]
mod from_gltf {
    use super::{decompose, Rig, RigError, RigMesh, RigNode, RigSkin};

    fn read_f32(bytes: &[u8], at: usize) -> Option<f32> {
        let b = bytes.get(at..at.checked_add(4)?)?;
        Some(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// The bytes of a buffer view, checked against the loaded buffer.
    fn view_bytes<'b, B: AsRef<[u8]>>(
        view: &gltf::buffer::View<'_>,
        buffers: &'b [B],
    ) -> Result<&'b [u8], String> {
        let b = view.buffer().index();
        let data = buffers
            .get(b)
            .ok_or_else(|| format!("buffer {b} is not loaded"))?
            .as_ref();
        let start = view.offset();
        let end = start
            .checked_add(view.length())
            .ok_or("buffer view range overflows")?;
        data.get(start..end).ok_or_else(|| {
            format!(
                "buffer view {} (bytes {start}..{end}) runs past the end of buffer {b} ({} bytes)",
                view.index(),
                data.len()
            )
        })
    }

    /// Reads a MAT4 FLOAT accessor (dense part, then sparse substitution),
    /// with every range checked.
    pub(super) fn read_mat4<B: AsRef<[u8]>>(
        accessor: &gltf::Accessor<'_>,
        buffers: &[B],
    ) -> Result<Vec<[f32; 16]>, String> {
        use gltf::accessor::{DataType, Dimensions};
        if accessor.dimensions() != Dimensions::Mat4 || accessor.data_type() != DataType::F32 {
            return Err(format!(
                "expected MAT4 of FLOAT, found {:?} of {:?}",
                accessor.dimensions(),
                accessor.data_type()
            ));
        }
        if accessor.normalized() {
            return Err("a FLOAT accessor cannot be normalized".into());
        }
        let count = accessor.count();
        let mut out = vec![[0.0f32; 16]; count];
        if let Some(view) = accessor.view() {
            let bytes = view_bytes(&view, buffers)?;
            let stride = view.stride().unwrap_or(64);
            if stride < 64 {
                return Err(format!("byte stride {stride} is smaller than a MAT4 (64)"));
            }
            for (e, m) in out.iter_mut().enumerate() {
                let base = e
                    .checked_mul(stride)
                    .and_then(|x| x.checked_add(accessor.offset()))
                    .ok_or("element offset overflows")?;
                for (c, v) in m.iter_mut().enumerate() {
                    *v = read_f32(bytes, base + 4 * c).ok_or_else(|| {
                        format!(
                            "element {e} runs past the end of buffer view {}",
                            view.index()
                        )
                    })?;
                }
            }
        }
        if let Some(sparse) = accessor.sparse() {
            let n = sparse.count();
            let idx = sparse.indices();
            let idx_bytes = view_bytes(&idx.view(), buffers)?;
            let size = match idx.index_type() {
                gltf::accessor::sparse::IndexType::U8 => 1,
                gltf::accessor::sparse::IndexType::U16 => 2,
                gltf::accessor::sparse::IndexType::U32 => 4,
            };
            let vals = sparse.values();
            let val_bytes = view_bytes(&vals.view(), buffers)?;
            for s in 0..n {
                let at = idx.offset() + s * size;
                let b = idx_bytes
                    .get(at..at + size)
                    .ok_or_else(|| format!("sparse index {s} runs past its buffer view"))?;
                let index = match size {
                    1 => usize::from(b[0]),
                    2 => usize::from(u16::from_le_bytes([b[0], b[1]])),
                    _ => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize,
                };
                let m = out.get_mut(index).ok_or_else(|| {
                    format!("sparse index {s} = {index} is out of range ({count} elements)")
                })?;
                for (c, v) in m.iter_mut().enumerate() {
                    *v = read_f32(val_bytes, vals.offset() + s * 64 + 4 * c)
                        .ok_or_else(|| format!("sparse value {s} runs past its buffer view"))?;
                }
            }
        }
        Ok(out)
    }

    impl Rig {
        /// Builds the rig of a glTF document: every node (hierarchy from
        /// `children`, rest TRS, matrices decomposed), every skin (inverse
        /// bind matrices read from their accessor with bounds checks,
        /// identity when absent), every mesh's morph-target count and
        /// default weights. `buffers[i]` holds the bytes of buffer `i`.
        ///
        /// `document` must come from the `gltf` crate's validating
        /// constructors (`Gltf::from_slice`, `Document::from_json`): the
        /// crate's own accessors assume valid indices. Byte ranges are
        /// checked here against the buffers actually given. For a file
        /// loaded with [`crate::gltf`], use [`Rig::from_document`].
        ///
        /// # Errors
        /// [`RigError`] naming the node, skin, mesh or accessor at fault.
        pub fn from_gltf<B: AsRef<[u8]>>(
            document: &gltf::Document,
            buffers: &[B],
        ) -> Result<Rig, RigError> {
            let mut parents: Vec<Option<u32>> = vec![None; document.nodes().len()];
            for node in document.nodes() {
                for child in node.children() {
                    let c = child.index();
                    if let Some(first) = parents[c] {
                        return Err(RigError::MultipleParents {
                            node: c as u32,
                            first,
                            second: node.index() as u32,
                        });
                    }
                    parents[c] = Some(node.index() as u32);
                }
            }
            let mut nodes = Vec::with_capacity(parents.len());
            for node in document.nodes() {
                let i = node.index() as u32;
                let (translation, rotation, scale) = match node.transform() {
                    gltf::scene::Transform::Matrix { matrix } => {
                        let mut m = [0.0f32; 16];
                        for (c, col) in matrix.iter().enumerate() {
                            m[4 * c..4 * c + 4].copy_from_slice(col);
                        }
                        decompose(i, &m)?
                    }
                    gltf::scene::Transform::Decomposed {
                        translation,
                        rotation,
                        scale,
                    } => (translation, rotation, scale),
                };
                nodes.push(RigNode {
                    name: node.name().map(str::to_owned),
                    parent: parents[i as usize],
                    translation,
                    rotation,
                    scale,
                    mesh: node.mesh().map(|m| m.index() as u32),
                    skin: node.skin().map(|s| s.index() as u32),
                });
            }
            let mut meshes = Vec::new();
            for mesh in document.meshes() {
                let m = mesh.index() as u32;
                let mut target_count = None;
                for (p, prim) in mesh.primitives().enumerate() {
                    let t = prim.morph_targets().len() as u32;
                    match target_count {
                        None => target_count = Some(t),
                        Some(e) if e != t => {
                            return Err(RigError::TargetCountMismatch {
                                mesh: m,
                                primitive: p,
                                expected: e,
                                found: t,
                            })
                        }
                        Some(_) => {}
                    }
                }
                meshes.push(RigMesh {
                    target_count: target_count.unwrap_or(0),
                    default_weights: mesh.weights().map(<[f32]>::to_vec).unwrap_or_default(),
                });
            }
            let mut skins = Vec::new();
            for skin in document.skins() {
                let s = skin.index() as u32;
                let joints: Vec<u32> = skin.joints().map(|j| j.index() as u32).collect();
                let inverse_bind_matrices = match skin.inverse_bind_matrices() {
                    Some(acc) => read_mat4(&acc, buffers).map_err(|reason| RigError::Accessor {
                        skin: s,
                        accessor: acc.index(),
                        reason,
                    })?,
                    None => vec![glam::Mat4::IDENTITY.to_cols_array(); joints.len()],
                };
                skins.push(RigSkin {
                    name: skin.name().map(str::to_owned),
                    joints,
                    inverse_bind_matrices,
                    mesh_node: None,
                });
            }
            Rig::from_parts(nodes, skins, meshes)
        }

        /// Builds the rig of a file loaded by [`crate::gltf`]: validates its
        /// JSON with the `gltf` crate (so that no index is out of range),
        /// then [`Rig::from_gltf`] with its buffers. Faults that concern only
        /// vertex data the rig never reads (a primitive without POSITION, or
        /// a POSITION accessor without `min`/`max`, which that validation
        /// requires) do not stop it; a POSITION index out of range does.
        ///
        /// # Errors
        /// [`RigError::InvalidDocument`], or those of [`Rig::from_gltf`].
        pub fn from_document(document: &crate::gltf::Document) -> Result<Rig, RigError> {
            let root = document.root.clone();
            // The gltf crate's validation indexes `accessors` with each
            // primitive's POSITION index before checking it (a panic when
            // out of range): check those indices first.
            let accessor_count = root.accessors.len();
            let key = gltf::json::validation::Checked::Valid(gltf::json::mesh::Semantic::Positions);
            for (m, mesh) in root.meshes.iter().enumerate() {
                for (p, prim) in mesh.primitives.iter().enumerate() {
                    if let Some(a) = prim.attributes.get(&key).map(|i| i.value()) {
                        if a >= accessor_count {
                            return Err(RigError::InvalidDocument {
                                reason: format!(
                                    "meshes[{m}].primitives[{p}].attributes.POSITION: accessor {a} is out of range ({accessor_count} accessors)"
                                ),
                            });
                        }
                    }
                }
            }
            // It also requires a POSITION attribute with `min` and `max`
            // (vertex data, which the rig never reads): a document whose only
            // faults are those is used as is; any other fault is an error.
            let position_only = |path: &str| {
                path.starts_with("meshes[")
                    && ["\"POSITION\"]", "\"POSITION\"].min", "\"POSITION\"].max"]
                        .iter()
                        .any(|end| path.ends_with(&format!(".attributes[{end}")))
            };
            let doc = match gltf::Document::from_json(root.clone()) {
                Ok(doc) => doc,
                Err(gltf::Error::Validation(errors))
                    if errors
                        .iter()
                        .all(|(path, _)| position_only(&path.to_string())) =>
                {
                    gltf::Document::from_json_without_validation(root)
                }
                Err(e) => {
                    return Err(RigError::InvalidDocument {
                        reason: e.to_string(),
                    })
                }
            };
            Rig::from_gltf(&doc, &document.buffers)
        }
    }
}

// ---------------------------------------------------------------------------
// The flat form read by shaders/pose.wgsl, shaders/skin.wgsl and
// crate::cpu_skin.

/// A node in the node table (WGSL `Node`): rest TRS, parent and mesh.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct GpuNode {
    /// Rest translation (x, y, z, unused).
    pub translation: [f32; 4],
    /// Rest rotation (x, y, z, w).
    pub rotation: [f32; 4],
    /// Rest scale (x, y, z, unused).
    pub scale: [f32; 4],
    /// Parent node, -1 for a root.
    pub parent: i32,
    /// Mesh index, -1 for none.
    pub mesh: i32,
    /// The first joint slot whose joint node this is, -1 for none; the
    /// others follow through [`GpuJoint::next_joint`].
    pub first_joint: i32,
    /// Padding (16-byte rows).
    pub _pad1: u32,
}

/// A mesh in the mesh table (WGSL `Mesh`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub struct GpuMesh {
    /// Offset of the mesh's first weight inside an instance's morph-weight
    /// block.
    pub weights_offset: u32,
    /// Number of morph targets.
    pub target_count: u32,
    /// Offset of its default weights in the default-weights array.
    pub defaults_offset: u32,
    /// Padding.
    pub _pad: u32,
}

/// A joint slot in the joint table (WGSL `Joint`): slot `j` writes joint
/// matrix `j` of an instance's block and uses inverse bind matrix `j`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub struct GpuJoint {
    /// The joint node.
    pub node: u32,
    /// The skin's mesh node, -1 for none.
    pub mesh_node: i32,
    /// The skin this slot belongs to.
    pub skin: u32,
    /// The next slot (higher index) with the same joint node, -1 for none.
    pub next_joint: i32,
}

/// Dispatch parameters of the morph and skin passes (WGSL `SkinParams`, a
/// uniform).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub struct GpuSkinParams {
    /// Instances in the table.
    pub instance_count: u32,
    /// Nodes in the rig.
    pub node_count: u32,
    /// Joint slots per instance (all skins).
    pub joint_count: u32,
    /// Meshes in the rig.
    pub mesh_count: u32,
    /// Morph weights per instance (all meshes).
    pub morph_stride: u32,
    /// The sampler's output stride (floats per instance).
    pub output_stride: u32,
    /// Clips in the library.
    pub clip_count: u32,
    /// Skins in the rig.
    pub skin_count: u32,
    /// Skins `0..4`'s mesh nodes (-1 for none or beyond `skin_count`);
    /// read only when `skin_count <= MAX_FUSED_SKINS`.
    pub mesh_nodes: [i32; MAX_FUSED_SKINS as usize],
}

/// Rigs with at most this many skins get their joint matrices inside the
/// skin pass's hierarchy walk, from the global still in registers (WGSL
/// `MAX_FUSED_SKINS`); rigs with more take a separate loop over the joint
/// slots that reads the globals back.
pub const MAX_FUSED_SKINS: u32 = 4;

const _: () = assert!(std::mem::size_of::<GpuNode>() == 64);
const _: () = assert!(std::mem::offset_of!(GpuNode, parent) == 48);
const _: () = assert!(std::mem::size_of::<GpuMesh>() == 16);
const _: () = assert!(std::mem::size_of::<GpuJoint>() == 16);
const _: () = assert!(std::mem::size_of::<GpuSkinParams>() == 48);

/// "Not animated: use the rest value" in [`SkinTables::channels`].
pub const REST: i32 = -1;

/// One skin's joint matrices for one instance, in the skin's joint order.
#[derive(Debug, Clone, PartialEq)]
pub struct SkinJoints {
    /// The skin's index.
    pub skin: u32,
    /// Its mesh node (lowest-index node using it), if any.
    pub node: Option<u32>,
    /// Column-major joint matrices.
    pub joints: Vec<[f32; 16]>,
}

/// A [`Rig`] and an [`AnimationLibrary`] flattened for the morph and skin
/// passes: uploaded once by [`crate::gpu::skin::GpuSkinner`], read as is by
/// [`crate::cpu_skin`].
///
/// Output layouts (stable), per instance `i`:
/// - global matrices (and the CPU twin's local matrices, which the GPU
///   keeps in registers): `i * node_count + node`;
/// - joint matrices: `i * joint_count + skin_offsets[skin] + joint`, in the
///   skin's joint order;
/// - morph weights: `i * morph_stride + meshes[mesh].weights_offset + k`.
#[derive(Debug, Clone, PartialEq)]
pub struct SkinTables {
    nodes: Vec<GpuNode>,
    channels: Vec<[i32; 4]>,
    meshes: Vec<GpuMesh>,
    default_weights: Vec<f32>,
    morph_channels: Vec<i32>,
    joints: Vec<GpuJoint>,
    inverse_binds: Vec<[f32; 16]>,
    skin_offsets: Vec<u32>,
    skin_nodes: Vec<Option<u32>>,
    morph_stride: u32,
    output_stride: u32,
    clip_count: u32,
}

fn offset_i32(offset: u32) -> Result<i32> {
    i32::try_from(offset).map_err(|_| Error::LimitExceeded {
        what: "sampler output offset",
        needed: u64::from(offset) * 4,
        limit_name: "i32 indexing",
        limit: i32::MAX as u64,
    })
}

impl SkinTables {
    /// Flattens `rig` and maps every track of every clip of `library` to
    /// the node property (or mesh weights) it animates.
    ///
    /// For each (clip, node) the table holds the output offset of the
    /// track animating translation, rotation, scale and weights, or
    /// [`REST`]. A mesh's animated weights come from the weights track on
    /// the lowest-index node that uses the mesh; meshes without one use
    /// their default weights.
    ///
    /// # Errors
    /// [`RigError::TrackNodeOutOfRange`], [`RigError::DuplicateChannel`],
    /// [`RigError::WeightsWithoutMesh`], [`RigError::WeightsWidthMismatch`]
    /// (naming clip and track), or [`Error::LimitExceeded`] when a count
    /// does not fit the tables' 32-bit indexing.
    pub fn new(rig: &Rig, library: &AnimationLibrary) -> Result<Self> {
        let node_count = rig.nodes.len();
        let mesh_count = rig.meshes.len();
        let clip_count = library.clips().len();
        let nodes = rig
            .nodes
            .iter()
            .map(|n| GpuNode {
                translation: [n.translation[0], n.translation[1], n.translation[2], 0.0],
                rotation: n.rotation,
                scale: [n.scale[0], n.scale[1], n.scale[2], 0.0],
                parent: n.parent.map_or(-1, |p| p as i32),
                mesh: n.mesh.map_or(-1, |m| m as i32),
                first_joint: -1,
                _pad1: 0,
            })
            .collect::<Vec<_>>();
        let too_big = |what: &'static str, n: usize| Error::LimitExceeded {
            what,
            needed: n as u64,
            limit_name: "u32 indexing",
            limit: u64::from(u32::MAX),
        };
        let mut meshes = Vec::with_capacity(mesh_count);
        let mut default_weights = Vec::new();
        let mut morph_stride = 0u32;
        for m in &rig.meshes {
            meshes.push(GpuMesh {
                weights_offset: morph_stride,
                target_count: m.target_count,
                defaults_offset: u32::try_from(default_weights.len())
                    .map_err(|_| too_big("default weights", default_weights.len()))?,
                _pad: 0,
            });
            default_weights.extend_from_slice(&m.default_weights);
            morph_stride = morph_stride
                .checked_add(m.target_count)
                .ok_or_else(|| too_big("morph weights per instance", usize::MAX))?;
        }
        let table_len = clip_count
            .checked_mul(node_count)
            .ok_or_else(|| too_big("pose channel table", usize::MAX))?;
        let mut channels = vec![[REST; 4]; table_len];
        let mut channel_track = vec![[usize::MAX; 4]; table_len];
        let mut morph_channels = vec![REST; clip_count * mesh_count];
        let mut morph_node = vec![u32::MAX; clip_count * mesh_count];
        for (c, clip) in library.clips().iter().enumerate() {
            for (t, track) in clip.tracks.iter().enumerate() {
                let node = track.node;
                let Some(rn) = rig.nodes.get(node as usize) else {
                    return Err(RigError::TrackNodeOutOfRange {
                        clip: c,
                        track: t,
                        node,
                        node_count,
                    }
                    .into());
                };
                let slot = c * node_count + node as usize;
                let p = track.property as usize;
                if channel_track[slot][p] != usize::MAX {
                    return Err(RigError::DuplicateChannel {
                        clip: c,
                        track: t,
                        first: channel_track[slot][p],
                        node,
                        property: track.property,
                    }
                    .into());
                }
                let (offset, width) = library
                    .track_output(c, t)
                    .ok_or_else(|| too_big("track table", t))?;
                let offset = offset_i32(offset)?;
                if track.property == Property::Weights {
                    let Some(mesh) = rn.mesh else {
                        return Err(RigError::WeightsWithoutMesh {
                            clip: c,
                            track: t,
                            node,
                        }
                        .into());
                    };
                    let expected = rig.meshes[mesh as usize].target_count;
                    if width != expected {
                        return Err(RigError::WeightsWidthMismatch {
                            clip: c,
                            track: t,
                            node,
                            mesh,
                            expected,
                            found: width,
                        }
                        .into());
                    }
                    let ms = c * mesh_count + mesh as usize;
                    if node < morph_node[ms] {
                        morph_node[ms] = node;
                        morph_channels[ms] = offset;
                    }
                }
                channel_track[slot][p] = t;
                channels[slot][p] = offset;
            }
        }
        let mut joints = Vec::new();
        let mut inverse_binds = Vec::new();
        let mut skin_offsets = Vec::with_capacity(rig.skins.len());
        let mut skin_nodes = Vec::with_capacity(rig.skins.len());
        for (s, skin) in rig.skins.iter().enumerate() {
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
        let joint_count =
            i32::try_from(joints.len()).map_err(|_| too_big("joint table", joints.len()))?;
        // Link each node to its slots, in slot order (back to front, so
        // each slot's successor is already linked).
        let mut nodes = nodes;
        for j in (0..joint_count).rev() {
            let joint = &mut joints[j as usize];
            if let Some(node) = nodes.get_mut(joint.node as usize) {
                joint.next_joint = node.first_joint;
                node.first_joint = j;
            }
        }
        u32::try_from(node_count).map_err(|_| too_big("node table", node_count))?;
        Ok(SkinTables {
            nodes,
            channels,
            meshes,
            default_weights,
            morph_channels,
            joints,
            inverse_binds,
            skin_offsets,
            skin_nodes,
            morph_stride,
            output_stride: library.output_stride(),
            clip_count: u32::try_from(clip_count).map_err(|_| too_big("clip table", clip_count))?,
        })
    }

    /// The node table, in rig (glTF) index order.
    #[must_use]
    pub fn nodes(&self) -> &[GpuNode] {
        &self.nodes
    }

    /// Per (clip, node), at `clip * node_count + node`: the sampler output
    /// offsets of the tracks animating translation, rotation, scale and
    /// weights ([`crate::Property`] order), or [`REST`].
    #[must_use]
    pub fn channels(&self) -> &[[i32; 4]] {
        &self.channels
    }

    /// The mesh table.
    #[must_use]
    pub fn meshes(&self) -> &[GpuMesh] {
        &self.meshes
    }

    /// All meshes' default weights, mesh after mesh.
    #[must_use]
    pub fn default_weights(&self) -> &[f32] {
        &self.default_weights
    }

    /// Per (clip, mesh), at `clip * mesh_count + mesh`: the output offset of
    /// the weights track that drives the mesh, or [`REST`] for the defaults.
    #[must_use]
    pub fn morph_channels(&self) -> &[i32] {
        &self.morph_channels
    }

    /// The joint table: all skins' joints, skin after skin.
    #[must_use]
    pub fn joints(&self) -> &[GpuJoint] {
        &self.joints
    }

    /// One inverse bind matrix per joint slot (column-major).
    #[must_use]
    pub fn inverse_binds(&self) -> &[[f32; 16]] {
        &self.inverse_binds
    }

    /// First joint slot of each skin.
    #[must_use]
    pub fn skin_offsets(&self) -> &[u32] {
        &self.skin_offsets
    }

    /// Each skin's mesh node (lowest-index node using it).
    #[must_use]
    pub fn skin_nodes(&self) -> &[Option<u32>] {
        &self.skin_nodes
    }

    /// Nodes in the rig.
    #[must_use]
    pub fn node_count(&self) -> u32 {
        self.nodes.len() as u32
    }

    /// Meshes in the rig.
    #[must_use]
    pub fn mesh_count(&self) -> u32 {
        self.meshes.len() as u32
    }

    /// Joint slots per instance (all skins).
    #[must_use]
    pub fn joint_count(&self) -> u32 {
        self.joints.len() as u32
    }

    /// Morph weights per instance (all meshes).
    #[must_use]
    pub fn morph_stride(&self) -> u32 {
        self.morph_stride
    }

    /// The library's output stride.
    #[must_use]
    pub fn output_stride(&self) -> u32 {
        self.output_stride
    }

    /// Clips in the library.
    #[must_use]
    pub fn clip_count(&self) -> u32 {
        self.clip_count
    }

    /// The dispatch parameters for `instance_count` instances.
    #[must_use]
    pub fn params(&self, instance_count: u32) -> GpuSkinParams {
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
        }
    }

    /// Splits one instance's block of joint matrices
    /// (`joint_count` matrices) per skin. Missing matrices (a short block)
    /// are left out.
    #[must_use]
    pub fn split_joints(&self, block: &[[f32; 16]]) -> Vec<SkinJoints> {
        let mut out = Vec::with_capacity(self.skin_offsets.len());
        for (s, &start) in self.skin_offsets.iter().enumerate() {
            let end = self
                .skin_offsets
                .get(s + 1)
                .copied()
                .unwrap_or(self.joints.len() as u32);
            let joints = block
                .get(start as usize..(end as usize).min(block.len()))
                .unwrap_or(&[])
                .to_vec();
            out.push(SkinJoints {
                skin: s as u32,
                node: self.skin_nodes[s],
                joints,
            });
        }
        out
    }
}
