//! Two small models for the crowd tests, built in code so that their
//! poses are known by hand.

use glam::{Mat4, Quat, Vec3};
use keyframe_gpu::{AnimationLibrary, Clip, Interpolation, NodeTransform, Property, Rig, Track};

/// Model A: a chain j0 -> j1 -> j2 (unit steps up y) skinned on a mesh
/// node at the origin. Clips: "idle" (j0 stays at the origin), "bend" (j1
/// from the identity to 90 degrees about z over 1 s), "lift" (j0 up by 3
/// over 2 s).
pub fn model_a() -> (Rig, AnimationLibrary) {
    let mut b = Rig::builder();
    let j0 = b.node(None, NodeTransform::IDENTITY);
    let j1 = b.node(Some(j0), NodeTransform::translation([0.0, 1.0, 0.0]));
    let j2 = b.node(Some(j1), NodeTransform::translation([0.0, 1.0, 0.0]));
    let mesh_node = b.node(None, NodeTransform::IDENTITY);
    b.name(j2, "tip");
    let mesh = b.mesh(0, vec![]);
    let ibm = |k: f32| Mat4::from_translation(Vec3::new(0.0, -k, 0.0)).to_cols_array();
    let skin = b.skin(vec![j0, j1, j2], vec![ibm(0.0), ibm(1.0), ibm(2.0)]);
    b.attach(mesh_node, mesh, Some(skin));
    let rig = b.build().unwrap();
    let q = |r: Quat| r.to_array().to_vec();
    let translate = |node, to: [f32; 3], end: f32| {
        Track::new(
            node,
            Property::Translation,
            Interpolation::Linear,
            vec![0.0, end],
            vec![0.0, 0.0, 0.0, to[0], to[1], to[2]],
        )
    };
    let idle = Clip::new("idle", vec![translate(j0, [0.0, 0.0, 0.0], 1.0)]);
    let bend = Clip::new(
        "bend",
        vec![Track::new(
            j1,
            Property::Rotation,
            Interpolation::Linear,
            vec![0.0, 1.0],
            [
                q(Quat::IDENTITY),
                q(Quat::from_rotation_z(std::f32::consts::FRAC_PI_2)),
            ]
            .concat(),
        )],
    );
    let lift = Clip::new("lift", vec![translate(j0, [0.0, 3.0, 0.0], 2.0)]);
    (rig, AnimationLibrary::new(vec![idle, bend, lift]).unwrap())
}

/// Model B: r0 at x = 5 with a child r1 one unit further along x, skinned
/// (identity inverse binds) on a mesh node at the origin. Its node indices
/// 0 and 1 are in range of model A too: exactly the mix-up a crowd must
/// refuse. Clips: "slide" (r0 from (5, 0, 0) to (5, 0, 4) over 1 s),
/// "turn" (r0 from the identity to 180 degrees about z over 2 s), "idle"
/// (r1 stays where it is): the same name as A's first clip, another clip.
pub fn model_b() -> (Rig, AnimationLibrary) {
    let mut b = Rig::builder();
    let r0 = b.node(None, NodeTransform::translation([5.0, 0.0, 0.0]));
    let r1 = b.node(Some(r0), NodeTransform::translation([1.0, 0.0, 0.0]));
    let mesh_node = b.node(None, NodeTransform::IDENTITY);
    b.name(r1, "hand");
    let mesh = b.mesh(0, vec![]);
    let id = Mat4::IDENTITY.to_cols_array();
    let skin = b.skin(vec![r0, r1], vec![id, id]);
    b.attach(mesh_node, mesh, Some(skin));
    let rig = b.build().unwrap();
    let slide = Clip::new(
        "slide",
        vec![Track::new(
            r0,
            Property::Translation,
            Interpolation::Linear,
            vec![0.0, 1.0],
            vec![5.0, 0.0, 0.0, 5.0, 0.0, 4.0],
        )],
    );
    let turn = Clip::new(
        "turn",
        vec![Track::new(
            r0,
            Property::Rotation,
            Interpolation::Linear,
            vec![0.0, 2.0],
            vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0],
        )],
    );
    let idle = Clip::new(
        "idle",
        vec![Track::new(
            r1,
            Property::Translation,
            Interpolation::Step,
            vec![0.0],
            vec![1.0, 0.0, 0.0],
        )],
    );
    (rig, AnimationLibrary::new(vec![slide, turn, idle]).unwrap())
}
