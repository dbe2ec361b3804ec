//! The soak's model: built in code (an eight-node character with a
//! skinned mesh of two morph targets, five clips), or read from a glTF
//! file (`--model`), with the mixer's two masks (the upper body and the
//! rest). Device-free: it outlives a lost device, and the animator is
//! rebuilt from it.

use std::path::Path;

use glam::Quat;
use keyframe_gpu::{
    AnimationLibrary, BoundLibrary, Clip, Interpolation, Mask, MaskId, MixerDesc, Property, Track,
};

use crate::frames::Story;
use keyframe_gpu::{NodeTransform, Rig};

/// Node indices.
pub const SPINE: u32 = 2;
const NODES: [(Option<usize>, [f32; 3]); 8] = [
    (None, [0.0, 0.0, 0.0]),     // 0 root
    (Some(0), [0.0, 1.0, 0.0]),  // 1 hips
    (Some(1), [0.0, 0.3, 0.0]),  // 2 spine
    (Some(2), [0.0, 0.5, 0.0]),  // 3 head
    (Some(2), [-0.3, 0.4, 0.0]), // 4 left arm
    (Some(4), [-0.3, 0.0, 0.0]), // 5 left hand
    (Some(2), [0.3, 0.4, 0.0]),  // 6 right arm
    (Some(6), [0.3, 0.0, 0.0]),  // 7 right hand
];

/// Clip indices.
pub const CLIPS: u32 = 5;
pub const WALK: u32 = 0;
pub const RUN: u32 = 1;
pub const WAVE: u32 = 2;
pub const BREATHE: u32 = 3;
pub const IDLE: u32 = 4;

/// Mask ids, in the order [`mixer`] adds them.
const UPPER: u32 = 0;
const LOWER: u32 = 1;

/// The built-in model's story: its clips, its masks.
pub fn story() -> Story {
    Story {
        clips: CLIPS,
        walk: WALK,
        run: RUN,
        wave: WAVE,
        breathe: BREATHE,
        idle: IDLE,
        upper: MaskId::new(UPPER),
        lower: MaskId::new(LOWER),
    }
}

/// A file's rig and clips (`--model`), and its story: the first five
/// clips play its parts (fewer clips are played again), the mask of the
/// upper body is the subtree of the middle node.
pub fn from_file(path: &Path) -> Result<(Rig, AnimationLibrary, Story, u32), String> {
    let shown = path.display();
    let imported = keyframe_gpu::gltf::load(path).map_err(|e| format!("--model {shown}: {e}"))?;
    let rig =
        Rig::from_document(&imported.document).map_err(|e| format!("--model {shown}: {e}"))?;
    let clips = imported.library.clips().len() as u32;
    if clips == 0 {
        return Err(format!(
            "--model {shown}: the file has no animation to play"
        ));
    }
    let part = |k: u32| k % clips;
    let story = Story {
        clips,
        walk: part(0),
        run: part(1),
        wave: part(2),
        breathe: part(3),
        idle: part(4),
        upper: MaskId::new(UPPER),
        lower: MaskId::new(LOWER),
    };
    let split = rig.nodes().len() as u32 / 2;
    Ok((rig, imported.library, story, split))
}

/// The rig: the nodes above, a mesh of two morph targets on the spine
/// skinned over every node (identity inverse binds).
pub fn rig() -> Result<Rig, keyframe_gpu::Error> {
    let mut b = Rig::builder();
    let mut ids = Vec::new();
    for (parent, t) in NODES {
        let id = b.node(
            parent.map(|p| ids[p]),
            NodeTransform::Trs {
                translation: t,
                rotation: [0.0, 0.0, 0.0, 1.0],
                scale: [1.0; 3],
            },
        );
        ids.push(id);
    }
    let mesh = b.mesh(2, vec![0.0, 0.0]);
    let skin = b.skin(
        ids.clone(),
        vec![glam::Mat4::IDENTITY.to_cols_array(); NODES.len()],
    );
    b.attach(ids[SPINE as usize], mesh, Some(skin));
    b.build().map_err(keyframe_gpu::Error::Rig)
}

fn rotations(node: u32, times: &[f32], qs: &[Quat]) -> Track {
    Track::new(
        node,
        Property::Rotation,
        Interpolation::Linear,
        times.to_vec(),
        qs.iter().flat_map(|q| q.to_array()).collect(),
    )
}

/// Walk, run (faster, other keys), wave (the right arm and hand), breathe
/// (spine and morph weights: played additive), idle (STEP and
/// CUBICSPLINE keys, so that every interpolation runs).
pub fn library() -> Result<AnimationLibrary, keyframe_gpu::Error> {
    let t4 = [0.0, 0.25, 0.5, 1.0];
    let swing = |a: f32, axis: fn(f32) -> Quat| [axis(a), axis(-a), axis(a * 0.5), axis(a)];
    let walk = Clip::new(
        "walk",
        vec![
            Track::new(
                1,
                Property::Translation,
                Interpolation::Linear,
                t4.to_vec(),
                vec![0.0, 1.0, 0.0, 0.2, 1.05, 0.0, 0.4, 1.0, 0.0, 0.8, 1.0, 0.0],
            ),
            rotations(4, &t4, &swing(0.6, Quat::from_rotation_x)),
            rotations(6, &t4, &swing(-0.6, Quat::from_rotation_x)),
            rotations(2, &t4, &swing(0.1, Quat::from_rotation_y)),
        ],
    );
    let t3 = [0.0, 0.3, 0.6];
    let run = Clip::new(
        "run",
        vec![
            Track::new(
                1,
                Property::Translation,
                Interpolation::Linear,
                t3.to_vec(),
                vec![0.0, 1.0, 0.0, 0.9, 1.2, 0.0, 1.8, 1.0, 0.0],
            ),
            rotations(
                4,
                &t3,
                &[
                    Quat::from_rotation_x(1.1),
                    Quat::from_rotation_x(-1.1),
                    Quat::from_rotation_x(1.1),
                ],
            ),
            rotations(
                6,
                &t3,
                &[
                    Quat::from_rotation_x(-1.1),
                    Quat::from_rotation_x(1.1),
                    Quat::from_rotation_x(-1.1),
                ],
            ),
            rotations(
                2,
                &t3,
                &[
                    Quat::from_rotation_x(0.3),
                    Quat::from_rotation_x(0.25),
                    Quat::from_rotation_x(0.3),
                ],
            ),
        ],
    );
    let wave = Clip::new(
        "wave",
        vec![
            rotations(
                6,
                &t3,
                &[
                    Quat::from_rotation_z(2.0),
                    Quat::from_rotation_z(2.6),
                    Quat::from_rotation_z(2.0),
                ],
            ),
            rotations(
                7,
                &t3,
                &[Quat::IDENTITY, Quat::from_rotation_y(0.8), Quat::IDENTITY],
            ),
        ],
    );
    let breathe = Clip::new(
        "breathe",
        vec![
            rotations(
                2,
                &[0.0, 1.0, 2.0],
                &[Quat::IDENTITY, Quat::from_rotation_x(0.08), Quat::IDENTITY],
            ),
            Track::weights(
                SPINE,
                2,
                Interpolation::Linear,
                vec![0.0, 1.0, 2.0],
                vec![0.0, 0.0, 0.6, 0.3, 0.0, 0.0],
            ),
        ],
    );
    let idle = Clip::new(
        "idle",
        vec![
            Track::new(
                3,
                Property::Rotation,
                Interpolation::Step,
                vec![0.0, 1.5],
                [Quat::from_rotation_y(0.3), Quat::from_rotation_y(-0.3)]
                    .iter()
                    .flat_map(|q| q.to_array())
                    .collect(),
            ),
            // CUBICSPLINE: (in-tangent, value, out-tangent) per key.
            Track::new(
                1,
                Property::Translation,
                Interpolation::CubicSpline,
                vec![0.0, 1.5, 3.0],
                vec![
                    0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.1, 0.0, //
                    0.0, 0.0, 0.0, 0.0, 1.05, 0.0, 0.0, 0.0, 0.0, //
                    0.0, -0.1, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0,
                ],
            ),
        ],
    );
    AnimationLibrary::new(vec![walk, run, wave, breathe, idle])
}

/// The mixer for up to `characters` characters of up to four actions:
/// mask [`UPPER`] (the subtree of node `split`: the built-in model's
/// spine) and [`LOWER`] (its complement).
pub fn mixer(
    bound: &BoundLibrary,
    characters: u32,
    split: u32,
) -> Result<MixerDesc, keyframe_gpu::Error> {
    let mut desc = MixerDesc::new(characters, 4);
    let upper = Mask::subtree(bound.rig(), split)?;
    desc.add_mask(upper.clone());
    desc.add_mask(upper.inverted());
    Ok(desc)
}
