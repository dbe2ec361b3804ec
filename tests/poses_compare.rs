//! `Poses::compare`: two frames element by element against the README's
//! tolerances, with the worst element and where it is; rotations up to
//! sign; frames of other shapes refused. Device-free (CPU twin frames).

use keyframe_gpu::{
    cpu, AnimationLibrary, Clip, Error, Instance, Interpolation, NodeTransform, Property, Quantity,
    Rig, Track,
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
    assert_eq!(c.max_abs[2], 0.0); // no skin
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
