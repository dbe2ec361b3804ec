//! A frame's results as the passes (and the twin's stage functions) write
//! them, flat, turned into the model's [`Poses`].

use glam::{Mat4, Quat, Vec3};

use crate::layout::GpuLocalPose;
use crate::model::library::AnimationLibrary;
use crate::model::poses::{Poses, Properties, Results, Transform};
use crate::model::rig::Rig;
use crate::tables::rig::SkinTables;

/// The flat results of one frame, as the passes write them.
pub(crate) struct Flat {
    pub instance_count: u32,
    pub samples: Vec<f32>,
    pub locals: Vec<GpuLocalPose>,
    pub world: Vec<Mat4>,
    pub joints: Vec<Mat4>,
    pub morph_weights: Vec<f32>,
    /// The mixer's blended pointer properties; `None` without a mixer.
    pub properties: Option<Vec<f32>>,
}

/// The [`Poses`] of a frame posed on `rig` with `tables` (built from the
/// bound `library`), from the flat arrays the passes write.
pub(crate) fn poses(
    rig: &Rig,
    tables: &SkinTables,
    library: &AnimationLibrary,
    flat: Flat,
) -> Poses {
    let properties = flat.properties.map(|p| {
        let pointers = library
            .pointer_targets()
            .iter()
            .zip(tables.pointer_targets())
            .map(|(t, &[_, width, _, at])| (t.pointer.clone(), at, width))
            .collect();
        Properties {
            values: p,
            pointers,
            stride: tables.property_stride(),
        }
    });
    let results = Results {
        instance_count: flat.instance_count,
        samples: flat.samples,
        locals: flat.locals.iter().map(transform_of).collect(),
        world: flat.world,
        joints: flat.joints,
        morph_weights: flat.morph_weights,
        properties,
    };
    Poses::new(rig, library, results)
}

/// A local pose as the pose pass stores it, as a [`Transform`].
fn transform_of(pose: &GpuLocalPose) -> Transform {
    let [x, y, z, w] = pose.rotation;
    Transform {
        translation: Vec3::from_slice(&pose.translation[..3]),
        rotation: Quat::from_xyzw(x, y, z, w),
        scale: Vec3::from_slice(&pose.scale[..3]),
    }
}
