//! [`RigError`]: a rig that cannot be built.

use super::Error;

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
}

impl From<RigError> for Error {
    fn from(e: RigError) -> Self {
        Error::Rig(e)
    }
}
