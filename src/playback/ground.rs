//! [`in_place`]: a bound library whose pose keeps a root node on the
//! spot over the ground plane, found from the rig (an up axis in the
//! model's space), while [`Clips::with_root`](super::Clips::with_root) of
//! the original reports the motion.

use glam::{Mat3, Vec3};

use crate::error::{PlaybackError, Result};
use crate::kinds::{Interpolation, Property};
use crate::model::library::AnimationLibrary;
use crate::model::BoundLibrary;

/// `bound` with root motion stripped from the pose over the ground: every
/// translation track of rig node `root` keeps the node's rest place on
/// the ground plane of the model's space (the plane square to +Y) and its
/// animated height along +Y, so the GPU pose walks on the spot and still
/// rises and falls. See [`in_place_with_up`] for another up axis.
///
/// # Errors
/// Those of [`in_place_with_up`].
pub fn in_place(bound: &BoundLibrary, root: u32) -> Result<BoundLibrary> {
    in_place_with_up(bound, root, Vec3::Y)
}

/// [`in_place`] with the model's up axis `up` (any length): each key of
/// the root's translation tracks, turned into the model's space by the
/// linear part `L` of its parent's rest world matrix
/// ([`Rig::rest_world`](crate::Rig::rest_world)), keeps its component
/// along `up` and takes the rest translation's components across it,
/// then goes back to the parent's space by `L⁻¹`; a CUBICSPLINE tangent
/// keeps its component along `up` alone. The axes are the model's, not
/// the node's: a root whose parent is turned (Fox.glb's hips, under a
/// node turned -90 degrees about x) is held on its local x and y. The
/// result is uncompressed: compress it afterwards if needed.
///
/// # Errors
/// [`PlaybackError::UnknownRoot`] for a node the rig does not have;
/// [`PlaybackError::BadGround`] for an `up` that is zero or not finite, or
/// a parent whose rest transform cannot be inverted; the library's own
/// errors (none for a library that was valid).
pub fn in_place_with_up(bound: &BoundLibrary, root: u32, up: Vec3) -> Result<BoundLibrary> {
    let rig = bound.rig();
    let Some(node) = rig.nodes().get(root as usize) else {
        return Err(PlaybackError::UnknownRoot {
            node: root,
            node_count: rig.nodes().len(),
        }
        .into());
    };
    let bad = |reason| PlaybackError::BadGround { node: root, reason };
    if !up.is_finite() || up.length_squared() == 0.0 {
        return Err(bad("the up axis is zero or not finite").into());
    }
    let up = up.normalize();
    let parent = node
        .parent
        .and_then(|p| rig.rest_world(p))
        .unwrap_or(glam::Mat4::IDENTITY);
    let to_model = Mat3::from_mat4(parent);
    let det = to_model.determinant();
    if !det.is_finite() || det == 0.0 {
        return Err(bad("its parent's rest transform cannot be inverted").into());
    }
    let to_parent = to_model.inverse();
    let rest = to_model * Vec3::from_array(node.translation);
    let ground = rest - up * rest.dot(up);
    // A value keeps its height and takes the rest's ground place; a
    // tangent keeps its height's rate alone.
    let value = |v: Vec3| to_parent * (ground + up * (to_model * v).dot(up));
    let tangent = |v: Vec3| to_parent * (up * (to_model * v).dot(up));
    let mut clips = bound.library().clips().to_vec();
    for (c, clip) in clips.iter_mut().enumerate() {
        for (t, track) in clip.tracks.iter_mut().enumerate() {
            if track.property != Property::Translation
                || bound.node(c as u32, t as u32) != Some(root)
            {
                continue;
            }
            let cubic = track.interpolation == Interpolation::CubicSpline;
            for (e, v) in track.values.chunks_exact_mut(3).enumerate() {
                // CUBICSPLINE elements: in-tangent, value, out-tangent.
                let is_value = !cubic || e % 3 == 1;
                let x = Vec3::from_slice(v);
                let y = if is_value { value(x) } else { tangent(x) };
                v.copy_from_slice(&y.to_array());
            }
        }
    }
    let library = AnimationLibrary::new(clips)?;
    Ok(bound.with_same_tracks(library))
}
