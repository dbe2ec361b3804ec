//! [`BindError`]: a library that cannot be bound to a rig, and why a
//! track was left unbound ([`Unbound`]).

use std::fmt;

use super::Error;
use crate::kinds::Property;

/// Why a track was left unbound.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unbound {
    /// The rig has no node of the track's name.
    MissingName,
    /// The track's node has no name and the clip comes from another file
    /// than the rig: an index means nothing there.
    Unnamed,
    /// A morph-weights track whose node in this rig has no mesh, or a mesh
    /// with another number of morph targets (`None`: no mesh).
    MorphTargets {
        /// The morph targets of the node's mesh in the rig.
        rig: Option<u32>,
        /// The weights per key of the track.
        track: u32,
    },
}

impl fmt::Display for Unbound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unbound::MissingName => f.write_str("no node of that name in the rig"),
            Unbound::Unnamed => f.write_str("an unnamed node of another file"),
            Unbound::MorphTargets { rig: None, track } => {
                write!(f, "{track} weights, but the node has no mesh in the rig")
            }
            Unbound::MorphTargets {
                rig: Some(r),
                track,
            } => write!(
                f,
                "{track} weights, but the node's mesh has {r} morph targets"
            ),
        }
    }
}

/// Why a library cannot be bound to a rig: wrapped in [`Error::Bind`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BindError {
    /// The track's node name appears several times in the rig, and not
    /// exactly one of those nodes has the track's name path.
    #[error("clip {clip}, track {track}: node name {name:?} ({path}) is ambiguous in the rig: candidates {}", candidates.join(", "))]
    Ambiguous {
        /// The clip.
        clip: usize,
        /// The track.
        track: usize,
        /// The name.
        name: String,
        /// The track's name path.
        path: String,
        /// The name paths of the rig's nodes of that name.
        candidates: Vec<String>,
    },
    /// Too few of a clip's node tracks bind to the rig: none by default,
    /// or less than `BindOptions::min_bound_share`.
    #[error("clip {clip} ({clip_name:?}): {bound} of {node_tracks} node tracks bind to {rig}; first unbound: {} (BindOptions::with_min_bound_share(0.0) takes it anyway)", unbound.join(", "))]
    TooFewBound {
        /// The clip.
        clip: usize,
        /// The clip's name.
        clip_name: String,
        /// The rig, described by its root's name and node count.
        rig: String,
        /// Node tracks that bound.
        bound: u32,
        /// The clip's node tracks.
        node_tracks: u32,
        /// The first unbound targets (at most five), as the clip names them.
        unbound: Vec<String>,
    },
    /// With `BindOptions::strict`: a track the rig cannot take.
    #[error("clip {clip}, track {track}: {target}: {why}")]
    Unbound {
        /// The clip.
        clip: usize,
        /// The track.
        track: usize,
        /// The target as the clip names it.
        target: String,
        /// Why it is unbound.
        why: Unbound,
    },
    /// A track bound by index names a node the rig does not have.
    #[error(
        "clip {clip}, track {track}: node {node} is out of range ({node_count} nodes in the rig)"
    )]
    NodeOutOfRange {
        /// The clip.
        clip: usize,
        /// The track.
        track: usize,
        /// The node index.
        node: u32,
        /// Nodes of the rig.
        node_count: usize,
    },
    /// Two tracks of one clip bind to the same property of the same node.
    #[error(
        "clip {clip}, track {track}: node {node} {property:?} is already animated by track {first}"
    )]
    DuplicateChannel {
        /// The clip.
        clip: usize,
        /// The later track.
        track: usize,
        /// The earlier track.
        first: usize,
        /// The rig node.
        node: u32,
        /// The property.
        property: Property,
    },
    /// A weights track bound by index targets a node without a mesh.
    #[error("clip {clip}, track {track}: weights on node {node}, which has no mesh")]
    WeightsWithoutMesh {
        /// The clip.
        clip: usize,
        /// The track.
        track: usize,
        /// The node.
        node: u32,
    },
    /// A weights track bound by index has another width than its node's
    /// mesh has morph targets.
    #[error("clip {clip}, track {track}: {found} weights for node {node}, whose mesh {mesh} has {expected} morph targets")]
    WeightsWidthMismatch {
        /// The clip.
        clip: usize,
        /// The track.
        track: usize,
        /// The node.
        node: u32,
        /// Its mesh.
        mesh: u32,
        /// The mesh's morph targets.
        expected: u32,
        /// The track's width.
        found: u32,
    },
    /// A bone map (`BoneMap`) names a bone the rig lacks, or a name
    /// several of the rig's nodes have (`side`: `"target"` or
    /// `"source"`).
    #[error("bone map: {side} bone {name:?} {why}")]
    MapUnknownBone {
        /// `"target"` or `"source"`: the rig it should be in.
        side: &'static str,
        /// The name.
        name: String,
        /// What is wrong with it.
        why: String,
    },
    /// A bone map maps two target bones to one source bone, or one
    /// target bone twice (`side` says which side repeats).
    #[error("bone map: {side} bone {name:?} is mapped twice: {first:?} and {second:?}")]
    MapBoneTwice {
        /// `"target"` or `"source"`: the side whose bone repeats.
        side: &'static str,
        /// The bone that repeats.
        name: String,
        /// The bone of the other side of its first pair.
        first: String,
        /// The bone of the other side of its second pair.
        second: String,
    },
    /// A bone map's root is not one of its target bones.
    #[error("bone map: the root {root:?} is not one of the mapped target bones")]
    MapRootUnmapped {
        /// The root as the map names it.
        root: String,
    },
    /// A bone map breaks the hierarchy: `bone`'s nearest mapped ancestor
    /// in the target rig maps to a source bone that is not an ancestor of
    /// `bone`'s source bone.
    #[error("bone map: target bone {bone:?} maps to {source_bone:?}, but its nearest mapped ancestor {ancestor:?} maps to {ancestor_source:?}, which is not an ancestor of {source_bone:?} in the source rig")]
    MapHierarchy {
        /// The target bone.
        bone: String,
        /// The source bone it maps to.
        source_bone: String,
        /// Its nearest mapped ancestor in the target rig.
        ancestor: String,
        /// The source bone that ancestor maps to.
        ancestor_source: String,
    },
    /// The root's translation cannot be carried over: a rest height
    /// (the root's rest world position along the map's up axis) of zero, a ratio of heights
    /// that is not finite and positive, or a parent whose rest world
    /// matrix cannot be inverted.
    #[error("bone map: root {root:?}: {why}")]
    MapRoot {
        /// The target root.
        root: String,
        /// What is wrong.
        why: String,
    },
    /// A bone map's up axis (`BoneMap::up`, the direction along which the
    /// roots' rest heights are measured) is not a unit vector: zero, of
    /// another length, or not finite.
    #[error("bone map: up axis {up:?} is not a unit vector (its length is {length}): the roots' rest heights are measured along it")]
    MapUpAxis {
        /// The axis as the map gives it.
        up: [f32; 3],
        /// Its length.
        length: f32,
    },
    /// A bone map's JSON is not `{"root": NAME, "bones": {TARGET:
    /// SOURCE, ...}}`, with an optional `"up": [X, Y, Z]`.
    #[error("bone map JSON: {what}")]
    MapJson {
        /// What is wrong, and where.
        what: String,
    },
}

impl From<BindError> for Error {
    fn from(e: BindError) -> Self {
        Error::Bind(e)
    }
}
