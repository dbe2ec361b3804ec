//! Retargeting (`AnimationLibrary::retarget`, `BoneMap`): a rig pair with
//! answers worked by hand (other names, rest rotations 90 degrees about
//! different axes, an armature scaled 0.01 against a root scaled 100),
//! the world-space motion kept at every time for every interpolation,
//! the identity map, the baked library on the GPU against the twin, and
//! every refusal.

mod common;

use std::f32::consts::FRAC_PI_2;

use glam::{Mat4, Quat, Vec3, Vec4};
use keyframe_gpu::{
    cpu, AnimationLibrary, Animator, BindError, BoneMap, Clip, Error, Instance, Interpolation,
    Marker, NodeTransform, Poses, Property, Rig, Track,
};

const S: f32 = std::f32::consts::FRAC_1_SQRT_2;

fn rx(a: f32) -> Quat {
    Quat::from_rotation_x(a)
}
fn ry(a: f32) -> Quat {
    Quat::from_rotation_y(a)
}
fn rz(a: f32) -> Quat {
    Quat::from_rotation_z(a)
}

fn trs(t: [f32; 3], r: Quat, s: f32) -> NodeTransform {
    NodeTransform::Trs {
        translation: t,
        rotation: r.to_array(),
        scale: [s; 3],
    }
}

/// The source: an `Armature` rotated +90 degrees about X and scaled 0.01
/// (as Blender exports), its hips 100 units below it on local -Z (so at
/// world height 1.0), rotated +90 about Y; the spine 10 units above the
/// hips, rotated +90 about Z; a head that the map leaves out.
fn source_rig() -> Rig {
    source_rig_at([0.0; 3])
}

/// [`source_rig`] with its armature moved to `at` (the roots' rest
/// positions then differ by more than the ratio of their heights).
fn source_rig_at(at: [f32; 3]) -> Rig {
    source_rig_turned(at, Quat::IDENTITY)
}

/// [`source_rig_at`] with its armature turned by `turn` in the world (a
/// file exported with another up axis: the turn in the top node's rest).
fn source_rig_turned(at: [f32; 3], turn: Quat) -> Rig {
    let mut b = Rig::builder();
    let arm = b.node(None, trs(at, turn * rx(FRAC_PI_2), 0.01));
    let hips = b.node(Some(arm), trs([0.0, 0.0, -100.0], ry(FRAC_PI_2), 1.0));
    let spine = b.node(Some(hips), trs([0.0, 10.0, 0.0], rz(FRAC_PI_2), 1.0));
    let head = b.node(Some(spine), trs([0.0, 10.0, 0.0], Quat::IDENTITY, 1.0));
    b.name(arm, "Armature");
    b.name(hips, "mixamorig:Hips");
    b.name(spine, "mixamorig:Spine");
    b.name(head, "mixamorig:Head");
    b.build().unwrap()
}

/// The target: a `Root` scaled 100, its pelvis at world height 0.9
/// rotated -90 degrees about Z, a chest rotated +90 about X, and a tail
/// no bone drives.
fn target_rig() -> Rig {
    target_rig_with_pelvis_at([0.0, 0.009, 0.0], Quat::IDENTITY)
}

/// [`target_rig`] with the pelvis at `at` in its root's space and the
/// root turned by `turn`.
fn target_rig_with_pelvis_at(at: [f32; 3], turn: Quat) -> Rig {
    let mut b = Rig::builder();
    let root = b.node(None, trs([0.0; 3], turn, 100.0));
    let pelvis = b.node(Some(root), trs(at, rz(-FRAC_PI_2), 1.0));
    let chest = b.node(Some(pelvis), trs([0.0, 0.001, 0.0], rx(FRAC_PI_2), 1.0));
    let tail = b.node(Some(pelvis), trs([0.0, -0.001, 0.0], ry(0.3), 1.0));
    b.name(root, "Root");
    b.name(pelvis, "Pelvis");
    b.name(chest, "Chest");
    b.name(tail, "Tail");
    b.build().unwrap()
}

fn map() -> BoneMap {
    BoneMap::new(
        "Pelvis",
        [("Pelvis", "mixamorig:Hips"), ("Chest", "mixamorig:Spine")],
    )
    .unwrap()
}

const HIPS: u32 = 1;
const SPINE: u32 = 2;
const HEAD: u32 = 3;
const PELVIS: u32 = 1;
const CHEST: u32 = 2;
const TAIL: u32 = 3;

fn quats(qs: &[Quat]) -> Vec<f32> {
    qs.iter().flat_map(|q| q.to_array()).collect()
}

/// The source hips' rotation that turns the character +90 degrees about
/// world Y: `Ws(Armature)^-1 * Ry(90) * Ws(Hips)` = `Rx(-90) Ry(90) Rx(90)
/// Ry(90)`, i.e. `Rz(-90) * Ry(90)`.
fn hips_turned() -> Quat {
    rx(-FRAC_PI_2) * ry(FRAC_PI_2) * rx(FRAC_PI_2) * ry(FRAC_PI_2)
}

/// The source spine's rotation that turns it +90 degrees about world Z
/// with the hips at rest: `Ws(Hips)^-1 * Rz(90) * Ws(Spine)`.
fn spine_bent() -> Quat {
    let ws_hips = rx(FRAC_PI_2) * ry(FRAC_PI_2);
    let ws_spine = ws_hips * rz(FRAC_PI_2);
    ws_hips.inverse() * rz(FRAC_PI_2) * ws_spine
}

/// The hand-worked clip: hips translation and rotation LINEAR, spine
/// rotation STEP, and tracks the retarget leaves out (the spine's
/// translation and scale, the unmapped head's rotation).
fn walk() -> Clip {
    let t3 = vec![0.0f32, 1.0, 2.0];
    let rest_hips = ry(FRAC_PI_2);
    let mut clip = Clip::new(
        "walk",
        vec![
            Track::new(
                HIPS,
                Property::Translation,
                Interpolation::Linear,
                t3.clone(),
                vec![0.0, 0.0, -100.0, 50.0, 0.0, -100.0, 0.0, 20.0, -100.0],
            ),
            Track::new(
                HIPS,
                Property::Rotation,
                Interpolation::Linear,
                t3.clone(),
                quats(&[rest_hips, hips_turned(), rest_hips]),
            ),
            Track::new(
                SPINE,
                Property::Rotation,
                Interpolation::Step,
                t3.clone(),
                quats(&[rz(FRAC_PI_2), spine_bent(), rz(FRAC_PI_2)]),
            ),
            Track::new(
                SPINE,
                Property::Translation,
                Interpolation::Linear,
                t3.clone(),
                vec![0.0, 10.0, 0.0, 0.0, 30.0, 0.0, 0.0, 10.0, 0.0],
            ),
            Track::new(
                SPINE,
                Property::Scale,
                Interpolation::Linear,
                t3.clone(),
                vec![1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 1.0, 1.0, 1.0],
            ),
            Track::new(
                HEAD,
                Property::Rotation,
                Interpolation::Linear,
                vec![0.0, 3.0],
                quats(&[Quat::IDENTITY, rx(1.0)]),
            ),
        ],
    );
    clip.markers.push(Marker {
        time: 1.5,
        name: "step".into(),
    });
    clip
}

fn poses_at(bound: &keyframe_gpu::BoundLibrary, clip: u32, times: &[f64]) -> Poses {
    let instances: Vec<Instance> = times.iter().map(|&t| Instance::new(clip, t)).collect();
    cpu::poses(bound, &instances).unwrap()
}

fn assert_quat(got: Quat, want: [f32; 4], tol: f32, what: &str) {
    let g = got.to_array();
    let d = |sign: f32| {
        g.iter()
            .zip(want)
            .map(|(a, b)| (a - sign * b).abs())
            .fold(0.0f32, f32::max)
    };
    assert!(
        d(1.0).min(d(-1.0)) <= tol,
        "{what}: {g:?}, expected {want:?} (up to sign)"
    );
}

fn assert_vec(got: Vec3, want: [f32; 3], tol: f32, what: &str) {
    let d = (got - Vec3::from_array(want)).abs().max_element();
    assert!(d <= tol, "{what}: {got:?}, expected {want:?}");
}

#[test]
fn hand_worked_rig_pair() {
    let (source, target) = (source_rig(), target_rig());
    let library = AnimationLibrary::new(vec![walk()]).unwrap();
    let bound = library.retarget(&source, &target, &map()).unwrap();
    let times = [0.0, 0.5, 1.0, 1.5, 2.0];
    let p = poses_at(&bound, 0, &times);
    let local = |i: u32, n: u32| p.local(i, n).unwrap();
    // Root translation: the source hips' world position is 0.01 * Rx(90)
    // * t, i.e. 0.01 * (x, -z, y): (0, 1, 0) at rest, (0.5, 1, 0) at 1 s,
    // (0, 1, 0.2) at 2 s, (0.25, 1, 0) at 0.5 s. The target keeps its own
    // rest height 0.9 and moves by 0.9 / 1.0 of the source's step, in
    // the space of its root scaled 100.
    let translations = [
        [0.0, 0.009, 0.0],
        [0.002_25, 0.009, 0.0],
        [0.0045, 0.009, 0.0],
        [0.002_25, 0.009, 0.0009],
        [0.0, 0.009, 0.0018],
    ];
    for (i, want) in translations.iter().enumerate() {
        assert_vec(
            local(i as u32, PELVIS).translation,
            *want,
            1e-7,
            &format!("pelvis translation at {} s", times[i]),
        );
    }
    // Pelvis rotation: at rest its own rest Rz(-90); turned +90 about
    // world Y at 1 s, Ry(90) * Rz(-90) = (-1/2, 1/2, -1/2, 1/2).
    assert_quat(
        local(0, PELVIS).rotation,
        [0.0, 0.0, -S, S],
        1e-6,
        "pelvis at 0 s",
    );
    assert_quat(
        local(2, PELVIS).rotation,
        [-0.5, 0.5, -0.5, 0.5],
        1e-6,
        "pelvis at 1 s",
    );
    assert_quat(
        local(4, PELVIS).rotation,
        [0.0, 0.0, -S, S],
        1e-6,
        "pelvis at 2 s",
    );
    // Chest: STEP; the spine bent +90 about world Z from 1 s to 2 s gives
    // Wt(Pelvis)^-1 * Rz(90) * Wt(Chest) = Rz(90) Rz(90) Rz(-90) Rx(90)
    // = (1/2, 1/2, 1/2, 1/2); its rest Rx(90) before.
    assert_quat(
        local(0, CHEST).rotation,
        [S, 0.0, 0.0, S],
        1e-6,
        "chest at 0 s",
    );
    assert_quat(
        local(1, CHEST).rotation,
        [S, 0.0, 0.0, S],
        1e-6,
        "chest at 0.5 s",
    );
    assert_quat(local(2, CHEST).rotation, [0.5; 4], 1e-6, "chest at 1 s");
    assert_quat(local(3, CHEST).rotation, [0.5; 4], 1e-6, "chest at 1.5 s");
    for i in 0..times.len() as u32 {
        // The chest keeps the target's rest translation and scale (the
        // spine's own are left out), the tail (unmapped) stays at rest
        // (the head's rotation drives nothing).
        assert_vec(
            local(i, CHEST).translation,
            [0.0, 0.001, 0.0],
            0.0,
            "chest translation",
        );
        assert_vec(local(i, CHEST).scale, [1.0; 3], 0.0, "chest scale");
        assert_vec(local(i, PELVIS).scale, [1.0; 3], 0.0, "pelvis scale");
        assert_quat(local(i, TAIL).rotation, ry(0.3).to_array(), 0.0, "tail");
        assert_vec(local(i, TAIL).translation, [0.0, -0.001, 0.0], 0.0, "tail");
        assert_quat(local(i, 0).rotation, [0.0, 0.0, 0.0, 1.0], 0.0, "root");
        assert_vec(local(i, 0).scale, [100.0; 3], 0.0, "root scale");
    }
    // The clip keeps its name, marker and duration (the head's track,
    // left out, ran to 3 s) and binds every track by index.
    let clip = &bound.library().clips()[0];
    assert_eq!(clip.name, "walk");
    assert_eq!(clip.markers.len(), 1);
    assert_eq!(clip.markers[0].time, 1.5);
    assert_eq!(clip.duration(), 3.0);
    assert_eq!(bound.report().clips()[0].unbound.len(), 0);
}

/// A clip of every interpolation on both mapped bones and the root's
/// translation, keys far apart (up to 170 degrees between keys).
fn every_interpolation() -> Clip {
    let times = vec![0.0f32, 0.7, 1.3, 2.0];
    let keys = [
        ry(FRAC_PI_2),
        ry(FRAC_PI_2) * rx(1.2),
        Quat::from_axis_angle(Vec3::new(1.0, 2.0, -0.5).normalize(), 2.97),
        rz(0.4) * ry(-1.0),
    ];
    let mut cubic = Vec::new();
    for (k, q) in keys.iter().enumerate() {
        let tangent = Quat::from_xyzw(0.3 * k as f32, -0.2, 0.1, 0.05 * k as f32);
        cubic.extend(tangent.to_array());
        cubic.extend(q.to_array());
        cubic.extend((tangent * -0.5).to_array());
    }
    let mut cubic_t = Vec::new();
    for k in 0..4 {
        let k = k as f32;
        cubic_t.extend([5.0 * k, -3.0, 1.0]);
        cubic_t.extend([10.0 * k, 2.0 * k, -100.0 + 7.0 * k]);
        cubic_t.extend([-4.0, 1.0 * k, 2.0]);
    }
    Clip::new(
        "every",
        vec![
            Track::new(
                HIPS,
                Property::Rotation,
                Interpolation::Linear,
                times.clone(),
                quats(&keys),
            ),
            Track::new(
                SPINE,
                Property::Rotation,
                Interpolation::CubicSpline,
                times.clone(),
                cubic,
            ),
            Track::new(
                HIPS,
                Property::Translation,
                Interpolation::CubicSpline,
                times.clone(),
                cubic_t,
            ),
        ],
    )
}

fn rotation_of(m: Mat4) -> Quat {
    m.to_scale_rotation_translation().1
}

#[test]
fn world_motion_is_kept_between_keys_for_every_interpolation() {
    // Both roots off their parents' origins in x and z, unlike the
    // ratio of their heights: the root's map has a translation part. The
    // target's root turned about its up axis: the correction goes through
    // every ancestor's rotation on both sides.
    let source = source_rig_at([0.3, 0.0, -0.2]);
    let target = target_rig_with_pelvis_at([0.002, 0.009, 0.001], ry(0.7));
    let step = Clip::new(
        "step",
        vec![Track::new(
            SPINE,
            Property::Rotation,
            Interpolation::Step,
            vec![0.0, 1.0],
            quats(&[rz(1.0), rx(2.5)]),
        )],
    );
    let library = AnimationLibrary::new(vec![every_interpolation(), step]).unwrap();
    let on_source = library.bind(&source).unwrap();
    let baked = library.retarget(&source, &target, &map()).unwrap();
    // Corrected tracks keep their keys: times shared, one value per key.
    let (src, out) = (&library.clips()[0], &baked.library().clips()[0]);
    for (a, b) in src.tracks.iter().zip(&out.tracks) {
        assert_eq!(a.times, b.times);
        assert_eq!(a.interpolation, b.interpolation);
        assert_eq!(a.values.len(), b.values.len());
    }
    let times: Vec<f64> = (0..=40).map(|i| f64::from(i) * 0.055).collect();
    let pairs = [(HIPS, PELVIS), (SPINE, CHEST)];
    let rest_s: Vec<Quat> = pairs
        .iter()
        .map(|&(s, _)| rotation_of(source.rest_world(s).unwrap()))
        .collect();
    let rest_t: Vec<Quat> = pairs
        .iter()
        .map(|&(_, t)| rotation_of(target.rest_world(t).unwrap()))
        .collect();
    let ps = source.rest_world(HIPS).unwrap().w_axis.truncate();
    let pt = target.rest_world(PELVIS).unwrap().w_axis.truncate();
    let k = pt.y / ps.y;
    for clip in 0..2 {
        let a = poses_at(&on_source, clip, &times);
        let b = poses_at(&baked, clip, &times);
        for i in 0..times.len() as u32 {
            for (j, &(s, t)) in pairs.iter().enumerate() {
                // The target bone turns in the world as the source bone
                // does: Wt'(N) Wt(N)^-1 = Ws'(S) Ws(S)^-1.
                let ds = rotation_of(a.world(i, s).unwrap()) * rest_s[j].inverse();
                let dt = rotation_of(b.world(i, t).unwrap()) * rest_t[j].inverse();
                assert_quat(
                    dt,
                    ds.to_array(),
                    2e-5,
                    &format!("clip {clip} node {t} at {}", times[i as usize]),
                );
            }
            // The root moves by k times the source's step from its rest.
            let step = a.world(i, HIPS).unwrap().w_axis.truncate() - ps;
            let want = pt + k * step;
            assert_vec(
                b.world(i, PELVIS).unwrap().w_axis.truncate(),
                want.to_array(),
                1e-5,
                "root world position",
            );
        }
    }
}

#[test]
fn the_same_rig_mapped_to_itself_is_the_original() {
    let source = source_rig();
    let names = [
        "Armature",
        "mixamorig:Hips",
        "mixamorig:Spine",
        "mixamorig:Head",
    ];
    let identity = BoneMap::new("mixamorig:Hips", names.map(|n| (n, n))).unwrap();
    let library = AnimationLibrary::new(vec![every_interpolation()]).unwrap();
    let baked = library.retarget(&source, &source, &identity).unwrap();
    let (src, out) = (&library.clips()[0], &baked.library().clips()[0]);
    assert_eq!(src.tracks.len(), out.tracks.len());
    for (a, b) in src.tracks.iter().zip(&out.tracks) {
        assert_eq!((a.node, a.property), (b.node, b.property));
        let worst = a
            .values
            .iter()
            .zip(&b.values)
            .map(|(x, y)| (x - y).abs() / x.abs().max(1.0))
            .fold(0.0f32, f32::max);
        assert!(worst <= 1e-7, "node {} {:?}: {worst}", a.node, a.property);
    }
    let times: Vec<f64> = (0..=20).map(|i| f64::from(i) * 0.1).collect();
    let a = poses_at(&library.bind(&source).unwrap(), 0, &times);
    let b = poses_at(&baked, 0, &times);
    for i in 0..times.len() as u32 {
        for n in 0..4 {
            let (x, y) = (a.local(i, n).unwrap(), b.local(i, n).unwrap());
            let rel = |u: Vec3, v: Vec3| ((u - v).abs() / u.abs().max(Vec3::ONE)).max_element();
            assert!(
                rel(x.translation, y.translation) <= 1e-7,
                "node {n} translation"
            );
            assert!(
                (Vec4::from(x.rotation) - Vec4::from(y.rotation))
                    .abs()
                    .max_element()
                    <= 1e-7,
                "node {n} rotation"
            );
            assert_eq!(x.scale, y.scale, "node {n} scale");
        }
    }
}

#[test]
fn baked_library_on_the_gpu_equals_the_twin() {
    let Some(h) = common::gpu("baked_library_on_the_gpu_equals_the_twin") else {
        return;
    };
    let (source, target) = (source_rig(), target_rig());
    let library = AnimationLibrary::new(vec![walk(), every_interpolation()]).unwrap();
    let bound = library.retarget(&source, &target, &map()).unwrap();
    let instances: Vec<Instance> = (0..64)
        .map(|i| Instance::new(i % 2, 0.037 * f64::from(i)))
        .collect();
    let mut animator = Animator::new(&h.device, &h.queue, &bound, 64).unwrap();
    animator.set_instances(&h.queue, &instances).unwrap();
    let mut encoder = h.device.create_command_encoder(&Default::default());
    animator.record(&mut encoder);
    h.queue.submit([encoder.finish()]);
    let gpu = animator.read_back(&h.device, &h.queue).unwrap();
    let twin = cpu::poses(&bound, &instances).unwrap();
    let c = gpu.compare(&twin).unwrap();
    assert!(c.within(), "worst: {:?}", c.worst);
}

fn refused(map: BoneMap, source: &Rig, target: &Rig) -> BindError {
    let library = AnimationLibrary::new(vec![walk()]).unwrap();
    match library.retarget(source, target, &map) {
        Err(Error::Bind(e)) => e,
        other => panic!("expected a bind error, got {other:?}"),
    }
}

#[test]
fn unknown_and_repeated_names_are_refused_naming_the_bone() {
    let (source, target) = (source_rig(), target_rig());
    let m = BoneMap::new(
        "Pelvis",
        [("Pelvis", "mixamorig:Hips"), ("Neck", "mixamorig:Spine")],
    )
    .unwrap();
    match refused(m, &source, &target) {
        BindError::MapUnknownBone { side, name, .. } => {
            assert_eq!((side, name.as_str()), ("target", "Neck"))
        }
        e => panic!("{e}"),
    }
    let m = BoneMap::new("Pelvis", [("Pelvis", "Hips")]).unwrap();
    let e = refused(m, &source, &target);
    assert!(
        matches!(&e, BindError::MapUnknownBone { side: "source", name, .. } if name == "Hips"),
        "{e}"
    );
    assert!(e.to_string().contains("\"Hips\""), "{e}");
    // A name two nodes of the rig have.
    let mut b = Rig::builder();
    let a = b.node(None, NodeTransform::translation([0.0, 1.0, 0.0]));
    let c = b.node(Some(a), NodeTransform::IDENTITY);
    b.name(a, "Pelvis");
    b.name(c, "Pelvis");
    let twice = b.build().unwrap();
    let m = BoneMap::new("Pelvis", [("Pelvis", "mixamorig:Hips")]).unwrap();
    let e = refused(m, &source, &twice);
    assert!(
        e.to_string().contains("names 2 nodes of the target rig"),
        "{e}"
    );
}

#[test]
fn maps_that_repeat_a_bone_or_leave_out_the_root_are_refused() {
    let e = BoneMap::new(
        "Pelvis",
        [("Pelvis", "mixamorig:Hips"), ("Chest", "mixamorig:Hips")],
    )
    .unwrap_err();
    assert!(
        matches!(&e, Error::Bind(BindError::MapBoneTwice { side: "source", name, first, second })
            if name == "mixamorig:Hips" && first == "Pelvis" && second == "Chest"),
        "{e}"
    );
    let e = BoneMap::new("Pelvis", [("Pelvis", "a"), ("Pelvis", "b")]).unwrap_err();
    assert!(
        matches!(&e, Error::Bind(BindError::MapBoneTwice { side: "target", name, .. }) if name == "Pelvis"),
        "{e}"
    );
    let e = BoneMap::new("Hips", [("Pelvis", "mixamorig:Hips")]).unwrap_err();
    assert!(
        matches!(&e, Error::Bind(BindError::MapRootUnmapped { root }) if root == "Hips"),
        "{e}"
    );
    let none: [(&str, &str); 0] = [];
    assert!(BoneMap::new("Pelvis", none).is_err());
}

#[test]
fn maps_that_break_the_hierarchy_are_refused_naming_the_bone() {
    let (source, target) = (source_rig(), target_rig());
    // The chest (under the pelvis) driven by the hips while the pelvis is
    // driven by the spine: the spine is not an ancestor of the hips.
    let m = BoneMap::new(
        "Pelvis",
        [("Pelvis", "mixamorig:Spine"), ("Chest", "mixamorig:Hips")],
    )
    .unwrap();
    match refused(m, &source, &target) {
        BindError::MapHierarchy {
            bone,
            source_bone,
            ancestor,
            ancestor_source,
        } => {
            assert_eq!(bone, "Chest");
            assert_eq!(source_bone, "mixamorig:Hips");
            assert_eq!(ancestor, "Pelvis");
            assert_eq!(ancestor_source, "mixamorig:Spine");
        }
        e => panic!("{e}"),
    }
    // Siblings in the target driven by a bone and its descendant: the
    // tail's nearest mapped ancestor is the pelvis, which maps to an
    // ancestor of the head: allowed.
    let m = BoneMap::new(
        "Pelvis",
        [
            ("Pelvis", "mixamorig:Hips"),
            ("Chest", "mixamorig:Spine"),
            ("Tail", "mixamorig:Head"),
        ],
    )
    .unwrap();
    let library = AnimationLibrary::new(vec![walk()]).unwrap();
    assert!(library.retarget(&source, &target, &m).is_ok());
}

#[test]
fn a_root_at_height_zero_is_refused() {
    let source = source_rig();
    let mut b = Rig::builder();
    let root = b.node(None, NodeTransform::IDENTITY);
    b.name(root, "Root");
    let flat = b.build().unwrap();
    let m = BoneMap::new("Root", [("Root", "mixamorig:Hips")]).unwrap();
    let e = refused(m, &source, &flat);
    assert!(
        matches!(&e, BindError::MapRoot { root, .. } if root == "Root"),
        "{e}"
    );
}

/// Rx(90) takes +Y to +Z: the hand-worked pair turned so that its up is
/// +Z, as a file exported Z-up with no node turning it back.
fn z_up_pair() -> (Rig, Rig) {
    (
        source_rig_turned([0.0; 3], rx(FRAC_PI_2)),
        target_rig_with_pelvis_at([0.0, 0.009, 0.0], rx(FRAC_PI_2)),
    )
}

#[test]
fn rigs_whose_up_is_z_retarget_with_the_maps_up_axis() {
    let library = AnimationLibrary::new(vec![walk(), every_interpolation()]).unwrap();
    let (source, target) = z_up_pair();
    // The roots' rest heights along +Y are 0 (the hips at (0, 0, 1), the
    // pelvis at (0, 0, 0.9)): without the axis the ratio is refused.
    let e = refused(map(), &source, &target);
    assert!(
        matches!(&e, BindError::MapRoot { root, why } if root == "Pelvis" && why.contains("[0.0, 1.0, 0.0]")),
        "{e}"
    );
    let mut z_map = map();
    z_map.up = [0.0, 0.0, 1.0];
    let z_up = library.retarget(&source, &target, &z_map).unwrap();
    let y_up = library
        .retarget(&source_rig(), &target_rig(), &map())
        .unwrap();
    let times: Vec<f64> = (0..=40).map(|i| f64::from(i) * 0.055).collect();
    let turn = Mat4::from_quat(rx(FRAC_PI_2));
    for clip in 0..2 {
        let (z, y) = (poses_at(&z_up, clip, &times), poses_at(&y_up, clip, &times));
        for i in 0..times.len() as u32 {
            for n in [0, PELVIS, CHEST, TAIL] {
                // Every node of the Z-up target sits where the Y-up one
                // does, turned.
                // Each column within 1e-5 of its length (the root's
                // scale 100 in the first three, metres in the last).
                let (got, want) = (z.world(i, n).unwrap(), turn * y.world(i, n).unwrap());
                for c in 0..4 {
                    let (g, w) = (got.col(c), want.col(c));
                    assert!(
                        (g - w).abs().max_element() <= 1e-5 * w.length().max(1.0),
                        "clip {clip} node {n} at {}: {got} vs {want}",
                        times[i as usize]
                    );
                }
            }
        }
    }
    // The scale factor is 0.9 / 1.0, the heights along +Z: the source
    // hips' world step at 1 s is (0.5, 0, 0) and at 2 s Rx(90) * (0, 0,
    // 0.2) = (0, -0.2, 0), so the pelvis goes from (0, 0, 0.9) to (0.45,
    // 0, 0.9) and (0, -0.18, 0.9).
    let p = poses_at(&z_up, 0, &[0.0, 1.0, 2.0]);
    let at = |i: u32| p.world(i, PELVIS).unwrap().w_axis.truncate();
    assert_vec(at(0), [0.0, 0.0, 0.9], 1e-6, "pelvis at rest");
    assert_vec(at(1), [0.45, 0.0, 0.9], 1e-6, "pelvis at 1 s");
    assert_vec(at(2), [0.0, -0.18, 0.9], 1e-6, "pelvis at 2 s");
}

#[test]
fn an_up_axis_that_is_not_a_unit_vector_is_refused() {
    let (source, target) = z_up_pair();
    for up in [[0.0, 0.0, 0.0], [0.0, 0.0, 2.0], [0.0, f32::NAN, 1.0]] {
        let mut m = map();
        m.up = up;
        let e = refused(m, &source, &target);
        assert!(
            matches!(&e, BindError::MapUpAxis { up: got, .. } if got.iter().zip(up).all(|(a, b)| a.to_bits() == b.to_bits())),
            "{up:?}: {e}"
        );
        assert!(e.to_string().contains("up axis"), "{e}");
    }
    // Within 1e-3 of unit length (1.0004 here): accepted.
    let mut m = map();
    m.up = [0.0, 0.6, 0.8005];
    let library = AnimationLibrary::new(vec![walk()]).unwrap();
    assert!(library.retarget(&source_rig(), &target_rig(), &m).is_ok());
}

#[cfg(feature = "gltf")]
#[test]
fn bone_maps_from_json() {
    let m: BoneMap =
        r#"{"root": "Pelvis", "bones": {"Pelvis": "mixamorig:Hips", "Chest": "mixamorig:Spine"}}"#
            .parse()
            .unwrap();
    assert_eq!(m, map());
    let bad = |text: &str, needle: &str| {
        let e = text.parse::<BoneMap>().unwrap_err();
        assert!(e.to_string().contains(needle), "{text}: {e}");
    };
    bad("{\"root\": ", "bone map JSON: EOF");
    bad("[]", "not an object");
    bad(r#"{"bones": {}}"#, "no \"root\"");
    bad(r#"{"root": 3, "bones": {}}"#, "\"root\" is not a string");
    bad(r#"{"root": "A"}"#, "no \"bones\"");
    bad(
        r#"{"root": "A", "bones": []}"#,
        "\"bones\" is not an object",
    );
    bad(r#"{"root": "A", "bones": {"A": 1}}"#, "the value of \"A\"");
    bad(
        r#"{"root": "A", "bones": {"A": "x"}, "scale": 2}"#,
        "unknown field \"scale\"",
    );
    bad(
        r#"{"root": "B", "bones": {"A": "x"}}"#,
        "the root \"B\" is not one of the mapped",
    );
    bad(
        r#"{"root": "A", "bones": {"A": "x", "B": "x"}}"#,
        "source bone \"x\" is mapped twice",
    );
    // The up axis: +Y unless given, three numbers of unit length.
    assert_eq!(m.up, [0.0, 1.0, 0.0]);
    let z: BoneMap = r#"{"root": "A", "bones": {"A": "x"}, "up": [0, 0, 1]}"#
        .parse()
        .unwrap();
    assert_eq!(z.up, [0.0, 0.0, 1.0]);
    for up in ["[0, 1]", "[0, 1, \"z\"]", "\"z\"", "[0, 0, 1, 0]"] {
        bad(
            &format!(r#"{{"root": "A", "bones": {{"A": "x"}}, "up": {up}}}"#),
            "\"up\" is not an array of three numbers",
        );
    }
    let e = r#"{"root": "A", "bones": {"A": "x"}, "up": [0, 0, 0]}"#
        .parse::<BoneMap>()
        .unwrap_err();
    assert!(
        matches!(&e, Error::Bind(BindError::MapUpAxis { up, .. }) if *up == [0.0; 3]),
        "{e}"
    );
}

#[test]
fn the_baked_library_plays_through_the_mixer_root_motion_markers_and_compression() {
    use keyframe_gpu::compress::CompressOptions;
    use keyframe_gpu::playback::{Clips, Command, Player};
    use keyframe_gpu::Action;
    use std::sync::Arc;

    let (source, target) = (source_rig(), target_rig());
    let library = AnimationLibrary::new(vec![walk(), every_interpolation()]).unwrap();
    let bound = library.retarget(&source, &target, &map()).unwrap();

    // The mixer: half of the walk at 1 s and half at 0 s blend the
    // pelvis's translation halfway: (0.0045 + 0) / 2 in x.
    let actions = [
        Action::new(0, 1.0).with_weight(0.5),
        Action::new(0, 0.0).with_weight(0.5),
    ];
    let mixed = cpu::mixed_poses(&bound, &[], &actions, &[2]).unwrap();
    assert_vec(
        mixed.local(0, PELVIS).unwrap().translation,
        [0.002_25, 0.009, 0.0],
        1e-7,
        "blended pelvis",
    );

    // Root motion and markers through the playback layer: over the
    // walk's first second the pelvis moves 0.9 times the source hips'
    // 0.5 along world x and turns +90 degrees about world Y; the marker
    // at 1.5 s is crossed in the next second.
    let clips = Arc::new(Clips::with_root(&bound, PELVIS).unwrap());
    let mut player = Player::new(&clips);
    let walk = player.clip("walk").unwrap();
    player.command(Command::Play(walk)).unwrap();
    player.advance(0.0).unwrap();
    let frame = player.advance(1.0).unwrap();
    assert_vec(
        frame.root_motion.translation,
        [0.45, 0.0, 0.0],
        1e-5,
        "root motion",
    );
    assert_quat(
        frame.root_motion.rotation,
        [0.0, S, 0.0, S],
        1e-5,
        "root turn",
    );
    assert!(frame.events.is_empty());
    let frame = player.advance(1.0).unwrap();
    let names: Vec<&str> = frame.events.iter().map(|e| &*e.name).collect();
    assert_eq!(names, ["step"]);

    // Compression: the compressor takes the baked library like any other,
    // and its poses stay within its bound of the baked library's.
    let (compressed, report) = bound.compress(&CompressOptions::with_bound(1e-4)).unwrap();
    assert!(report.max_error <= report.bound, "{report:?}");
    let times: Vec<f64> = (0..=20).map(|i| f64::from(i) * 0.1).collect();
    for clip in 0..2 {
        let a = poses_at(&bound, clip, &times);
        let b = poses_at(&compressed, clip, &times);
        for i in 0..times.len() as u32 {
            for n in 0..4 {
                let (pa, pb) = (a.world(i, n).unwrap(), b.world(i, n).unwrap());
                let d = (pa.w_axis - pb.w_axis).abs().max_element();
                assert!(d as f64 <= 2.0 * report.bound, "clip {clip} node {n}: {d}");
            }
        }
    }
}

/// A real file's rig (RiggedFigure, `../shared/assets`, skipped without
/// it) retargeted onto itself through every joint: every joint's rotation
/// and the root's translation are the original's, on the CPU and the GPU.
#[cfg(feature = "gltf")]
#[test]
fn a_real_rig_mapped_to_itself_plays_its_own_clip() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/assets/RiggedFigure.gltf");
    if !path.exists() {
        println!(
            "SKIP a_real_rig_mapped_to_itself_plays_its_own_clip: {} is absent",
            path.display()
        );
        return;
    }
    let file = keyframe_gpu::gltf::load(&path).unwrap();
    let rig = Rig::from_document(&file.document).unwrap();
    let joints = rig.skins()[0].joints.clone();
    let names: Vec<String> = joints
        .iter()
        .map(|&j| rig.nodes()[j as usize].name.clone().unwrap())
        .collect();
    let root = rig.node_by_name("torso_joint_1").unwrap();
    let map = BoneMap::new(
        "torso_joint_1",
        names.iter().map(|n| (n.as_str(), n.as_str())),
    )
    .unwrap();
    let baked = file.library.retarget(&rig, &rig, &map).unwrap();
    let original = file.library.bind(&rig).unwrap();
    let times: Vec<f64> = (0..=30).map(|i| f64::from(i) * 0.1).collect();
    let a = poses_at(&original, 0, &times);
    let b = poses_at(&baked, 0, &times);
    for i in 0..times.len() as u32 {
        for &j in &joints {
            let (x, y) = (a.local(i, j).unwrap(), b.local(i, j).unwrap());
            assert_quat(
                y.rotation,
                x.rotation.to_array(),
                1e-6,
                &format!("joint {j}"),
            );
        }
        let (x, y) = (a.local(i, root).unwrap(), b.local(i, root).unwrap());
        assert_vec(
            y.translation,
            x.translation.to_array(),
            1e-6,
            "root translation",
        );
    }
    let Some(h) = common::gpu("a_real_rig_mapped_to_itself_plays_its_own_clip") else {
        return;
    };
    let instances: Vec<Instance> = times.iter().map(|&t| Instance::new(0, t)).collect();
    let mut animator = Animator::new(&h.device, &h.queue, &baked, instances.len() as u32).unwrap();
    animator.set_instances(&h.queue, &instances).unwrap();
    let mut encoder = h.device.create_command_encoder(&Default::default());
    animator.record(&mut encoder);
    h.queue.submit([encoder.finish()]);
    let gpu = animator.read_back(&h.device, &h.queue).unwrap();
    let c = gpu.compare(&b).unwrap();
    assert!(c.within(), "worst: {:?}", c.worst);
}
