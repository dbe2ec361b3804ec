//! `Poses::compare`: two frames element by element against the README's
//! tolerances, with the worst element and where it is; rotations up to
//! sign; frames of other shapes refused. Device-free (CPU twin frames).

use keyframe_gpu::{
    cpu, AnimationLibrary, BoundLibrary, Clip, Error, Instance, Interpolation, NodeTransform,
    Property, Quantity, Rig, Track,
};

/// Node 0 (a root) and node 1 (its child, one unit up); clip 0 moves node
/// 0 from (0,0,0) to (1,0,0) over 1 s; clip 1 holds node 0's rotation at
/// (0,0,0,1), clip 2 at (0,0,0,-1): the same rotation, other sign.
fn bound() -> keyframe_gpu::BoundLibrary {
    let mut b = Rig::builder();
    let root = b.node(None, NodeTransform::IDENTITY);
    b.node(Some(root), NodeTransform::translation([0.0, 1.0, 0.0]));
    let rig = b.build().unwrap();
    let t = Track::new(
        0,
        Property::Translation,
        Interpolation::Linear,
        vec![0.0, 1.0],
        vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0],
    );
    let r = |w: f32| {
        Track::new(
            0,
            Property::Rotation,
            Interpolation::Step,
            vec![0.0],
            vec![0.0, 0.0, 0.0, w],
        )
    };
    AnimationLibrary::new(vec![
        Clip::new("move", vec![t]),
        Clip::new("plus", vec![r(1.0)]),
        Clip::new("minus", vec![r(-1.0)]),
    ])
    .unwrap()
    .bind(&rig)
    .unwrap()
}

#[test]
fn equal_frames_are_within_and_a_difference_is_found_where_it_is() {
    let b = bound();
    let at = |clip: u32, t: f64| {
        cpu::poses(&b, &[Instance::new(0, 0.0), Instance::new(clip, t)]).unwrap()
    };
    let same = at(0, 0.5).compare(&at(0, 0.5)).unwrap();
    assert!(same.within());
    assert_eq!(same.max_abs, [0.0; 4]);
    // Instance 1 at 0.5002 s instead of 0.5: node 0's x differs by 2e-4,
    // 20 times the 1e-5 tolerance of a translation (the worst), and node
    // 0's and 1's world matrices by 2e-4 at element 12 (2x their 1e-4).
    let c = at(0, 0.5).compare(&at(0, 0.5002)).unwrap();
    assert!(!c.within());
    let w = c.worst.unwrap();
    assert_eq!(
        (w.quantity, w.instance, w.index, w.element),
        (Quantity::Local, 1, 0, 0)
    );
    assert!((w.left - 0.5).abs() < 1e-6 && (w.right - 0.5002).abs() < 1e-6);
    assert!((w.excess - 20.0).abs() < 0.5, "{w}");
    assert!((c.max_abs[1] - 2e-4).abs() < 1e-5, "{:?}", c.max_abs);
    // No skin, no mesh: nothing else to differ.
    assert_eq!(c.max_abs[2], 0.0);
    assert_eq!(c.max_abs[3], 0.0);
    // The same rotation with the other sign is no difference.
    let c = at(1, 0.0).compare(&at(2, 0.0)).unwrap();
    assert!(c.within(), "{:?}", c.worst);
    assert_eq!(c.max_abs[0], 0.0);
}

#[test]
fn frames_of_another_shape_are_refused() {
    let b = bound();
    let one = cpu::poses(&b, &[Instance::new(0, 0.0)]).unwrap();
    let two = cpu::poses(&b, &[Instance::new(0, 0.0), Instance::new(0, 0.5)]).unwrap();
    match one.compare(&two) {
        Err(e @ Error::PosesDiffer { .. }) => {
            assert!(e.to_string().contains("(1, 2, 0, 0)"), "{e}")
        }
        other => panic!("{other:?}"),
    }
}

/// Node 0 (a root joint), node 1 (a joint under it, one unit up) and node
/// 2 (a root holding a mesh of 2 morph targets, skinned by joints 0 and 1
/// with inverse bind matrices identity and a translation of
/// `(0, -ibm_y, 0)`). Clip 0 moves node 1 from (0,1,0) to (0,3,0) over
/// 1 s; clip 1 ramps the weights from (0, 0) to (1, 0.5) over 1 s.
fn skinned(ibm_y: f32) -> BoundLibrary {
    let mut b = Rig::builder();
    let root = b.node(None, NodeTransform::IDENTITY);
    b.node(Some(root), NodeTransform::translation([0.0, 1.0, 0.0]));
    let holder = b.node(None, NodeTransform::IDENTITY);
    let mesh = b.mesh(2, vec![]);
    let mut up = glam::Mat4::IDENTITY.to_cols_array();
    up[13] = -ibm_y;
    let skin = b.skin(vec![0, 1], vec![glam::Mat4::IDENTITY.to_cols_array(), up]);
    b.attach(holder, mesh, Some(skin));
    let rig = b.build().unwrap();
    let t = Track::new(
        1,
        Property::Translation,
        Interpolation::Linear,
        vec![0.0, 1.0],
        vec![0.0, 1.0, 0.0, 0.0, 3.0, 0.0],
    );
    let w = Track::weights(
        2,
        2,
        Interpolation::Linear,
        vec![0.0, 1.0],
        vec![0.0, 0.0, 1.0, 0.5],
    );
    AnimationLibrary::new(vec![
        Clip::new("lift", vec![t]),
        Clip::new("weigh", vec![w]),
    ])
    .unwrap()
    .bind(&rig)
    .unwrap()
}

#[test]
fn joint_matrices_and_morph_weights_are_found_where_they_differ() {
    // Morph weights at 0.5 s, (0.5, 0.25), against 0.5004 s, (0.5004,
    // 0.2502): slot 0 differs by 4e-4, 40 times its 1e-5 tolerance, slot 1
    // by 2e-4 (20 times). Nothing else moves.
    let b = skinned(1.0);
    let at = |t: f64| cpu::poses(&b, &[Instance::new(0, 0.0), Instance::new(1, t)]).unwrap();
    let c = at(0.5).compare(&at(0.5004)).unwrap();
    let w = c.worst.unwrap();
    assert_eq!(
        (w.quantity, w.instance, w.index, w.element),
        (Quantity::MorphWeights, 1, 0, 0),
        "{w}"
    );
    assert!((w.excess - 40.0).abs() < 0.1, "{w}");
    assert!((c.max_abs[3] - 4e-4).abs() < 1e-6, "{:?}", c.max_abs);
    assert_eq!(&c.max_abs[..3], &[0.0; 3]);

    // The same frame on a rig whose joint 1 binds at 1.0003 instead of 1:
    // at 0.5 s node 1 stands at y = 2, so its joint matrix translates by
    // 2 - 1 = 1 against 2 - 1.0003 = 0.9997 (element 13, column 3's y):
    // 3e-4, three times the 1e-4 tolerance. Transforms are the same.
    let (b1, b2) = (skinned(1.0), skinned(1.0003));
    let frame = |b: &BoundLibrary| cpu::poses(b, &[Instance::new(0, 0.5)]).unwrap();
    let c = frame(&b1).compare(&frame(&b2)).unwrap();
    let w = c.worst.unwrap();
    assert_eq!(
        (w.quantity, w.instance, w.index, w.element),
        (Quantity::Joints, 0, 1, 13),
        "{w}"
    );
    assert!(
        (w.left - 1.0).abs() < 1e-6 && (w.right - 0.9997).abs() < 1e-6,
        "{w}"
    );
    assert!((w.excess - 3.0).abs() < 0.01, "{w}");
    assert!(!c.within());
    assert_eq!([c.max_abs[0], c.max_abs[1], c.max_abs[3]], [0.0; 3]);
}

#[test]
fn rotations_are_held_to_2e_5_per_component() {
    // Node 0 turned about z by 2a: (0, 0, sin a, cos a). At a = 0.3 and
    // a + 3e-5, z differs by about cos(0.3) * 3e-5 = 2.866e-5 (1.43 times
    // 2e-5) and w by sin(0.3) * 3e-5 = 8.87e-6; the world matrix's
    // cos(2a) and sin(2a) by about 2 * 3e-5 * sin(0.6) = 3.4e-5 and
    // 2 * 3e-5 * cos(0.6) = 5.0e-5, inside their 1e-4. At a + 1e-5 z
    // differs by 9.55e-6, within.
    let turn = |a: f64| {
        let mut b = Rig::builder();
        b.node(None, NodeTransform::IDENTITY);
        let rig = b.build().unwrap();
        let r = Track::new(
            0,
            Property::Rotation,
            Interpolation::Step,
            vec![0.0],
            vec![0.0, 0.0, a.sin() as f32, a.cos() as f32],
        );
        let bound = AnimationLibrary::new(vec![Clip::new("turn", vec![r])])
            .unwrap()
            .bind(&rig)
            .unwrap();
        cpu::poses(&bound, &[Instance::new(0, 0.0)]).unwrap()
    };
    let c = turn(0.3).compare(&turn(0.3 + 3e-5)).unwrap();
    let w = c.worst.unwrap();
    assert_eq!(
        (w.quantity, w.index, w.element),
        (Quantity::Local, 0, 5),
        "{w}"
    );
    let want = (0.3 + 3e-5f64).sin() - 0.3f64.sin();
    assert!(
        (f64::from(w.excess) - want / 2e-5).abs() < 0.02,
        "{w}, want {}",
        want / 2e-5
    );
    assert!(!c.within());
    assert!(
        c.max_abs[1] > 3e-5 && c.max_abs[1] < 6e-5,
        "{:?}",
        c.max_abs
    );
    let c = turn(0.3).compare(&turn(0.3 + 1e-5)).unwrap();
    assert!(c.within(), "{:?}", c.worst);
}

#[test]
fn a_sample_of_a_large_frame_compares_instance_by_instance() {
    // Four instances of the move clip at 0, 0.25, 0.5 and 0.75 s (node 0
    // at x = the time); the other frame holds 0.75 and 0.25 s.
    let b = bound();
    let times = |ts: &[f64]| {
        let instances: Vec<Instance> = ts.iter().map(|&t| Instance::new(0, t)).collect();
        cpu::poses(&b, &instances).unwrap()
    };
    let large = times(&[0.0, 0.25, 0.5, 0.75]);
    let c = large
        .compare_instances(&[3, 1], &times(&[0.75, 0.25]))
        .unwrap();
    assert!(c.within(), "{:?}", c.worst);
    assert_eq!(c.max_abs, [0.0; 4]);
    // Instances 1 and 3 (0.25 and 0.75 s) against 0.75 and 0.5 s: 0.5 and
    // 0.25 apart; the worst is this frame's instance 1, 0.5 / 1e-5 times
    // the tolerance.
    let c = large
        .compare_instances(&[1, 3], &times(&[0.75, 0.5]))
        .unwrap();
    let w = c.worst.unwrap();
    assert_eq!(
        (w.quantity, w.instance, w.index, w.element),
        (Quantity::Local, 1, 0, 0),
        "{w}"
    );
    assert!((w.excess - 5e4).abs() < 5.0, "{w}");
    // An instance the frame does not have, and a count that does not match.
    match large.compare_instances(&[4], &times(&[0.0])) {
        Err(Error::NoSuchInstance {
            instance: 4,
            instance_count: 4,
        }) => {}
        other => panic!("{other:?}"),
    }
    match large.compare_instances(&[0, 1, 2], &times(&[0.0, 0.25])) {
        Err(e @ Error::PosesDiffer { .. }) => {
            assert!(
                e.to_string().contains("(3, 2, 0, 0) vs (2, 2, 0, 0)"),
                "{e}"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn infinities_equal_themselves_and_a_nan_is_never_within() {
    // A root scaled by 10 and a child 3e38 along x: the child's world x
    // is 3e39, past f32 (infinity). A grandchild at -3e38 adds -infinity
    // to it: NaN.
    let mut b = Rig::builder();
    let root = b.node(
        None,
        NodeTransform::Trs {
            translation: [0.0; 3],
            rotation: [0.0, 0.0, 0.0, 1.0],
            scale: [10.0; 3],
        },
    );
    let far = b.node(Some(root), NodeTransform::translation([3e38, 0.0, 0.0]));
    let rig = b.build().unwrap();
    let mut b2 = Rig::builder();
    let root2 = b2.node(
        None,
        NodeTransform::Trs {
            translation: [0.0; 3],
            rotation: [0.0, 0.0, 0.0, 1.0],
            scale: [10.0; 3],
        },
    );
    let far2 = b2.node(Some(root2), NodeTransform::translation([3e38, 0.0, 0.0]));
    b2.node(Some(far2), NodeTransform::translation([-3e38, 0.0, 0.0]));
    let nan_rig = b2.build().unwrap();
    let frame = |rig: &Rig| {
        let hold = Track::new(
            0,
            Property::Scale,
            Interpolation::Step,
            vec![0.0],
            vec![10.0; 3],
        );
        let bound = AnimationLibrary::new(vec![Clip::new("hold", vec![hold])])
            .unwrap()
            .bind(rig)
            .unwrap();
        cpu::poses(&bound, &[Instance::new(0, 0.0)]).unwrap()
    };
    let inf = frame(&rig);
    assert_eq!(inf.world(0, far).unwrap().w_axis.x, f32::INFINITY);
    let c = inf.compare(&inf).unwrap();
    assert!(c.within(), "{:?}", c.worst);
    assert_eq!(c.max_abs, [0.0; 4]);

    let nan = frame(&nan_rig);
    assert!(nan.world(0, 2).unwrap().w_axis.x.is_nan());
    let c = nan.compare(&nan).unwrap();
    assert!(!c.within());
    let w = c.worst.unwrap();
    assert_eq!(
        (w.quantity, w.index, w.element, w.excess),
        (Quantity::World, 2, 12, f32::INFINITY),
        "{w}"
    );
    assert_eq!(c.max_abs[1], f32::INFINITY);
}
