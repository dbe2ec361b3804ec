//! `--root-motion`: characters moved across the floor by their clips' root
//! motion, as a game moves its entities.
//!
//! The root is a node named on the command line, or else the node with a
//! translation track nearest the top of the hierarchy (the fewest
//! ancestors; the lowest index of equals): a Mixamo rig's hips, a walk
//! cycle's body. The crowd poses the characters from
//! [`playback::in_place`]: the root holds its rest place on the model's
//! ground plane (square to +Y, found through its parent's rest transform),
//! so the pose walks on the spot, while the playback layer
//! ([`Clips::with_root`] of the clips as the file has them) reports how
//! far the root moved each frame, in the model's space. Each character's
//! place moves by that step across the floor. The root's rotation stays
//! in the pose: the character does not turn.
//!
//! Within a clip's first pass a character so moved stands exactly where
//! the clip alone would put it; past the loop end it walks on instead of
//! jumping back. A character that leaves the grid's area comes back in on
//! the other side (the floor wraps around), so a crowd walks on in view.
//!
//! [`Clips::with_root`]: keyframe_gpu::playback::Clips::with_root

use glam::Vec3;
use keyframe_gpu::playback::{self, RootMotion};
use keyframe_gpu::{BoundLibrary, Property};

/// How a model's root motion moves its characters.
#[derive(Debug, Clone)]
pub struct Root {
    /// The root node.
    pub node: u32,
    /// Its name, or `node N`.
    pub name: String,
}

impl Root {
    /// The root of `bound`'s rig: the node named `name`, or the default
    /// (see the module). `model` names the model in errors.
    pub fn choose(bound: &BoundLibrary, name: Option<&str>, model: &str) -> Result<Root, String> {
        let rig = bound.rig();
        let node = match name {
            Some(name) => rig
                .nodes()
                .iter()
                .position(|n| n.name.as_deref() == Some(name))
                .ok_or_else(|| format!("--root-motion: {model} has no node named {name:?}"))?
                as u32,
            None => default_root(bound).ok_or_else(|| {
                format!("--root-motion: no node of {model} has a translation track")
            })?,
        };
        let name = rig.nodes()[node as usize]
            .name
            .clone()
            .unwrap_or_else(|| format!("node {node}"));
        Ok(Root { node, name })
    }

    /// `bound` with the root held at rest on the ground plane: what the
    /// crowd poses.
    pub fn in_place(&self, bound: &BoundLibrary) -> Result<BoundLibrary, String> {
        playback::in_place(bound, self.node).map_err(|e| e.to_string())
    }

    /// How far a frame's root motion moves the character across the floor
    /// (the motion is in the model's space, whose floor is x and z).
    pub fn world_step(&self, motion: &RootMotion) -> Vec3 {
        let t = motion.translation;
        Vec3::new(t.x, 0.0, t.z)
    }
}

/// The node with a translation track nearest the top of the hierarchy
/// (the lowest index of equals).
fn default_root(bound: &BoundLibrary) -> Option<u32> {
    let rig = bound.rig();
    let depth = |mut n: u32| {
        let mut d = 0u32;
        while let Some(p) = rig.nodes().get(n as usize).and_then(|x| x.parent) {
            n = p;
            d += 1;
        }
        d
    };
    let mut best: Option<(u32, u32)> = None;
    for (c, clip) in bound.library().clips().iter().enumerate() {
        for (t, track) in clip.tracks.iter().enumerate() {
            if track.property != Property::Translation {
                continue;
            }
            let Some(node) = bound.node(c as u32, t as u32) else {
                continue;
            };
            let key = (depth(node), node);
            if best.is_none_or(|b| key < b) {
                best = Some(key);
            }
        }
    }
    best.map(|(_, node)| node)
}

/// `x` brought into `[-half, half)` by whole periods of `2 * half` (a
/// floor that wraps around); `x` itself for a `half` of 0.
pub fn wrap(x: f32, half: f32) -> f32 {
    if half <= 0.0 {
        return x;
    }
    (x + half).rem_euclid(2.0 * half) - half
}
