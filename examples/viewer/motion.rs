//! `--root-motion`: characters moved across the floor by their clips' root
//! motion, as a game moves its entities.
//!
//! The root is a node named on the command line, or else the node with a
//! translation track nearest the top of the hierarchy (the fewest
//! ancestors; the lowest index of equals): a Mixamo rig's hips, a walk
//! cycle's body. The crowd poses the characters from
//! [`playback::in_place`]: the root's translation holds its rest value on
//! the axes that are horizontal in the world (those its parent's rest
//! transform turns less than 60 degrees from the floor), so the pose
//! walks on the spot, while the playback layer ([`Clips::with_root`] of
//! the clips as the file has them) reports how far the root moved each
//! frame. Each character's place moves by that step on those axes, turned
//! and scaled into the world by the root's parent's rest transform. The
//! root's rotation stays in the pose: the character does not turn.
//!
//! Within a clip's first pass a character so moved stands exactly where
//! the clip alone would put it; past the loop end it walks on instead of
//! jumping back. A character that leaves the grid's area comes back in on
//! the other side (the floor wraps around), so a crowd walks on in view.
//!
//! [`Clips::with_root`]: keyframe_gpu::playback::Clips::with_root

use glam::{Mat3, Mat4, Quat, Vec3};
use keyframe_gpu::playback::{self, RootMotion};
use keyframe_gpu::{BoundLibrary, Property, Rig};

/// How a model's root motion moves its characters.
#[derive(Debug, Clone)]
pub struct Root {
    /// The root node.
    pub node: u32,
    /// Its name, or `node N`.
    pub name: String,
    /// Which of the root's translation axes (x, y, z, in its parent's
    /// space) move the character rather than the pose.
    axes: [bool; 3],
    /// The parent's rest transform, turning a step into the world.
    to_world: Mat3,
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
        let parent = rig.nodes()[node as usize]
            .parent
            .map_or(Mat4::IDENTITY, |p| rest_world(rig, p));
        let to_world = Mat3::from_mat4(parent);
        let axes = [Vec3::X, Vec3::Y, Vec3::Z].map(|axis| {
            let w = to_world * axis;
            // Horizontal: less than 60 degrees from the floor.
            w.length() > 0.0 && (w.normalize().y.abs()) < 0.5
        });
        let name = rig.nodes()[node as usize]
            .name
            .clone()
            .unwrap_or_else(|| format!("node {node}"));
        Ok(Root {
            node,
            name,
            axes,
            to_world,
        })
    }

    /// `bound` with the root's horizontal translation held at rest: what
    /// the crowd poses.
    pub fn in_place(&self, bound: &BoundLibrary) -> Result<BoundLibrary, String> {
        playback::in_place(bound, self.node, self.axes).map_err(|e| e.to_string())
    }

    /// How far a frame's root motion moves the character, in the world.
    pub fn world_step(&self, motion: &RootMotion) -> Vec3 {
        let t = motion.translation;
        let kept = Vec3::new(
            if self.axes[0] { t.x } else { 0.0 },
            if self.axes[1] { t.y } else { 0.0 },
            if self.axes[2] { t.z } else { 0.0 },
        );
        self.to_world * kept
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

/// Node `n`'s world matrix in the rest pose.
fn rest_world(rig: &Rig, mut n: u32) -> Mat4 {
    let mut m = Mat4::IDENTITY;
    while let Some(node) = rig.nodes().get(n as usize) {
        let local = Mat4::from_scale_rotation_translation(
            Vec3::from(node.scale),
            Quat::from_array(node.rotation),
            Vec3::from(node.translation),
        );
        m = local * m;
        match node.parent {
            Some(p) => n = p,
            None => break,
        }
    }
    m
}

/// `x` brought into `[-half, half)` by whole periods of `2 * half` (a
/// floor that wraps around); `x` itself for a `half` of 0.
pub fn wrap(x: f32, half: f32) -> f32 {
    if half <= 0.0 {
        return x;
    }
    (x + half).rem_euclid(2.0 * half) - half
}
