//! Pointer tracks in the data model: a track
//! that targets a property outside the node hierarchy is host data; the
//! sampler sees only how to interpolate it. The library gives every
//! pointer target one slot, at the same offset in every clip, written by
//! every instance (the rest value where its clip does not animate it).
//! Values are checked against numbers computed by hand from the
//! interpolation formulas, and the GPU against the CPU twin.

mod common;

use std::sync::Arc;

use keyframe_gpu::{
    cpu, AnimationLibrary, Clip, Error, Instance, Interpolation, PointerTarget, PointerType,
    Property, SamplerPlan, Track, TrackError, ValueKind,
};

const BASE_COLOR: &str = "/materials/0/pbrMetallicRoughness/baseColorFactor";
const VISIBLE: &str = "/nodes/0/extensions/KHR_node_visibility/visible";
const EMISSIVE: &str = "/materials/0/emissiveFactor";

fn target(pointer: &str, ty: PointerType, rest: &[f32]) -> Arc<PointerTarget> {
    Arc::new(PointerTarget::new(pointer, ty, rest.to_vec()))
}

/// Clip 0: translation, base colour (float4, LINEAR), visibility (bool,
/// STEP), rotation. Clip 1: scale, emissive factor (float3, LINEAR).
fn library() -> AnimationLibrary {
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let clip0 = Clip::new(
        "colour",
        vec![
            Track::new(
                0,
                Property::Translation,
                Interpolation::Linear,
                vec![0.0, 1.0],
                vec![0.0, 0.0, 0.0, 2.0, 4.0, 6.0],
            ),
            Track::for_pointer(
                target(BASE_COLOR, PointerType::Float4, &[1.0; 4]),
                Interpolation::Linear,
                vec![0.0, 2.0],
                vec![1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.5, 1.0],
            ),
            Track::for_pointer(
                target(VISIBLE, PointerType::Bool, &[1.0]),
                Interpolation::Step,
                vec![0.0, 0.5],
                vec![1.0, 0.0],
            ),
            Track::new(
                0,
                Property::Rotation,
                Interpolation::Linear,
                vec![0.0, 1.0],
                vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, h, h],
            ),
        ],
    );
    let clip1 = Clip::new(
        "glow",
        vec![
            Track::new(
                1,
                Property::Scale,
                Interpolation::Step,
                vec![0.0],
                vec![2.0, 2.0, 2.0],
            ),
            Track::for_pointer(
                target(EMISSIVE, PointerType::Float3, &[0.1, 0.2, 0.3]),
                Interpolation::Linear,
                vec![0.0, 1.0],
                vec![0.0, 0.0, 0.0, 1.0, 1.0, 1.0],
            ),
        ],
    );
    AnimationLibrary::new(vec![clip0, clip1]).unwrap()
}

#[test]
fn pointer_slots_follow_the_node_tracks_at_one_offset_in_every_clip() {
    let lib = library();
    // Node tracks: clip 0 has translation (3) and rotation (4), clip 1
    // scale (3): the node region is 7 wide; the slots follow in order of
    // first appearance.
    assert_eq!(lib.track_output(0, 0), Some((0, 3)));
    assert_eq!(lib.track_output(0, 3), Some((3, 4)));
    assert_eq!(lib.track_output(1, 0), Some((0, 3)));
    assert_eq!(lib.track_output(0, 1), Some((7, 4)));
    assert_eq!(lib.track_output(0, 2), Some((11, 1)));
    assert_eq!(lib.track_output(1, 1), Some((12, 3)));
    assert_eq!(lib.output_stride(), 15);
    // The rest-value tracks are the library's, not the clips'.
    assert_eq!(lib.track_output(0, 4), None);
    assert_eq!(lib.clips()[0].tracks.len(), 4);

    let targets = lib.pointer_targets();
    let listed: Vec<(&str, PointerType, ValueKind, u32, u32)> = targets
        .iter()
        .map(|t| (t.pointer.as_str(), t.ty, t.kind, t.offset, t.width))
        .collect();
    assert_eq!(
        listed,
        vec![
            (BASE_COLOR, PointerType::Float4, ValueKind::Vector, 7, 4),
            (VISIBLE, PointerType::Bool, ValueKind::Discrete, 11, 1),
            (EMISSIVE, PointerType::Float3, ValueKind::Vector, 12, 3),
        ]
    );
    let emissive = lib.pointer_target(EMISSIVE).unwrap();
    assert_eq!(
        (emissive.offset, emissive.rest.as_slice()),
        (12, &[0.1, 0.2, 0.3][..])
    );
    assert!(lib.pointer_target("/materials/1/emissiveFactor").is_none());
}

#[test]
fn a_library_without_pointers_keeps_its_layout() {
    let t = |node, p| Track::new(node, p, Interpolation::Step, vec![0.0], vec![0.0; 3]);
    let lib = AnimationLibrary::new(vec![Clip::new(
        "a",
        vec![t(0, Property::Translation), t(1, Property::Scale)],
    )])
    .unwrap();
    assert!(lib.pointer_targets().is_empty());
    assert_eq!(lib.track_output(0, 1), Some((3, 3)));
    assert_eq!(lib.output_stride(), 6);
    assert_eq!(lib.tracks_per_instance(), 2);
}

/// Every slot at (clip, time), computed by hand: LINEAR is
/// `(1 - t) a + t b` with `t = (T - t_k) / (t_(k+1) - t_k)`, STEP key k's
/// value, the rest value where the clip does not animate the target.
fn expected(clip: u32, time: f32) -> Vec<(u32, Vec<f32>)> {
    match (clip, time) {
        (0, 0.5) => vec![
            (0, vec![1.0, 2.0, 3.0]),
            // t = 0.25 on [0, 2]: 0.75 [1, 0, 0, 1] + 0.25 [0, 1, 0.5, 1].
            (7, vec![0.75, 0.25, 0.125, 1.0]),
            // On key 1 (0.5): false.
            (11, vec![0.0]),
            (12, vec![0.1, 0.2, 0.3]),
        ],
        (0, 0.25) => vec![
            (0, vec![0.5, 1.0, 1.5]),
            (7, vec![0.875, 0.125, 0.0625, 1.0]),
            (11, vec![1.0]),
            (12, vec![0.1, 0.2, 0.3]),
        ],
        (1, 0.5) => vec![
            (0, vec![2.0, 2.0, 2.0]),
            (7, vec![1.0, 1.0, 1.0, 1.0]),
            (11, vec![1.0]),
            (12, vec![0.5, 0.5, 0.5]),
        ],
        (1, 0.25) => vec![
            (0, vec![2.0, 2.0, 2.0]),
            (7, vec![1.0, 1.0, 1.0, 1.0]),
            (11, vec![1.0]),
            (12, vec![0.25, 0.25, 0.25]),
        ],
        _ => unreachable!(),
    }
}

const TIMES: [(u32, f32); 4] = [(0, 0.5), (1, 0.5), (0, 0.25), (1, 0.25)];

fn instances() -> Vec<Instance> {
    TIMES
        .iter()
        .map(|&(c, t)| Instance::new(c, f64::from(t)))
        .collect()
}

fn check_by_hand(what: &str, lib: &AnimationLibrary, out: &[f32]) {
    let stride = lib.output_stride() as usize;
    for (i, &(clip, time)) in TIMES.iter().enumerate() {
        for (offset, want) in expected(clip, time) {
            let at = i * stride + offset as usize;
            let got = &out[at..at + want.len()];
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    (g - w).abs() <= 1e-6,
                    "{what}: clip {clip} at {time}, offset {offset}: {got:?}, expected {want:?}"
                );
            }
        }
    }
}

#[test]
fn cpu_twin_writes_every_slot_by_hand() {
    let lib = library();
    let out = cpu::sample(&lib, &instances()).unwrap();
    check_by_hand("cpu", &lib, &out);
    // The rotation: t = 0.5 between identity and 90 degrees about z is 45
    // degrees: (0, 0, sin(pi/8), cos(pi/8)).
    let (s, c) = (
        std::f32::consts::FRAC_PI_8.sin(),
        std::f32::consts::FRAC_PI_8.cos(),
    );
    let q = &out[3..7];
    for (g, w) in q.iter().zip([0.0, 0.0, s, c]) {
        assert!((g - w).abs() <= 2e-5, "{q:?}");
    }
}

#[test]
fn gpu_matches_cpu_and_the_hand_values_for_pointer_slots() {
    let Some(h) = common::gpu("gpu_matches_cpu_and_the_hand_values_for_pointer_slots") else {
        return;
    };
    let lib = library();
    let inst = instances();
    let want = cpu::sample(&lib, &inst).unwrap();
    for plan in [SamplerPlan::Reference, SamplerPlan::Grouped] {
        let mut sampler =
            common::sampler_with_plan(&h.device, &h.queue, &lib, inst.len() as u32, plan).unwrap();
        // A frame of other clips first, so that a slot left unwritten
        // would hold the previous frame's value.
        let other: Vec<Instance> = inst
            .iter()
            .map(|i| Instance::new(1 - i.clip, 0.75))
            .collect();
        sampler.sample(&h.device, &h.queue, &other).unwrap();
        let got = sampler.sample(&h.device, &h.queue, &inst).unwrap();
        check_by_hand(&format!("gpu {plan:?}"), &lib, &got);
        let stride = lib.output_stride() as usize;
        for (i, (g, c)) in got.iter().zip(&want).enumerate() {
            // Only what the instance writes: its clip's node tracks (7
            // floats for clip 0, 3 for clip 1) and every slot (from 7).
            let node_width = if TIMES[i / stride].0 == 0 { 7 } else { 3 };
            if (node_width..7).contains(&(i % stride)) {
                continue;
            }
            // Vectors within 1e-6, the bool slot bit for bit.
            if i % stride == 11 {
                assert_eq!(g.to_bits(), c.to_bits(), "{plan:?}: float {i}");
            } else {
                assert!((g - c).abs() <= 1e-6, "{plan:?}: float {i}: {g} vs {c}");
            }
        }
    }
}

fn refused(clips: Vec<Clip>) -> (usize, usize, TrackError) {
    match AnimationLibrary::new(clips) {
        Err(Error::InvalidTrack {
            clip, track, kind, ..
        }) => (clip, track, kind),
        other => panic!("expected InvalidTrack, got {other:?}"),
    }
}

#[test]
fn pointer_tracks_are_validated() {
    let colour = || target(BASE_COLOR, PointerType::Float4, &[1.0; 4]);
    let flag = || target(VISIBLE, PointerType::Bool, &[1.0]);
    let count = || target("/x/count", PointerType::Int, &[0.0]);
    let one = |t: Track| vec![Clip::new("c", vec![t])];

    // int and bool targets are STEP only.
    let t = Track::for_pointer(
        flag(),
        Interpolation::Linear,
        vec![0.0, 1.0],
        vec![0.0, 1.0],
    );
    assert!(matches!(
        refused(one(t)),
        (
            0,
            0,
            TrackError::DiscreteNotStep {
                ty: PointerType::Bool,
                interpolation: Interpolation::Linear,
                ..
            }
        )
    ));
    // A bool is 0 or 1, an int an integer.
    let t = Track::for_pointer(flag(), Interpolation::Step, vec![0.0, 1.0], vec![0.0, 0.5]);
    assert!(matches!(
        refused(one(t)),
        (0, 0, TrackError::BadDiscreteValue { key: 1, .. })
    ));
    let t = Track::for_pointer(count(), Interpolation::Step, vec![0.0], vec![1.5]);
    assert!(matches!(
        refused(one(t)),
        (
            0,
            0,
            TrackError::BadDiscreteValue {
                key: 0,
                ty: PointerType::Int,
                ..
            }
        )
    ));
    let t = Track::for_pointer(count(), Interpolation::Step, vec![0.0], vec![-7.0]);
    AnimationLibrary::new(one(t)).unwrap();
    // The width is the type's.
    let mut t = Track::for_pointer(colour(), Interpolation::Step, vec![0.0], vec![0.0; 3]);
    t.width = 3;
    assert!(matches!(
        refused(one(t)),
        (0, 0, TrackError::BadWidth { .. })
    ));
    // A rest value of the type's width.
    let t = Track::for_pointer(
        target(BASE_COLOR, PointerType::Float4, &[1.0; 3]),
        Interpolation::Step,
        vec![0.0],
        vec![0.0; 4],
    );
    assert!(matches!(
        refused(one(t)),
        (0, 0, TrackError::BadPointerRest { found: 3, .. })
    ));
    // Pointer and property agree.
    let mut t = Track::for_pointer(colour(), Interpolation::Step, vec![0.0], vec![0.0; 4]);
    t.pointer = None;
    assert!(matches!(
        refused(one(t)),
        (0, 0, TrackError::PointerMissing)
    ));
    let mut t = Track::new(
        0,
        Property::Rotation,
        Interpolation::Step,
        vec![0.0],
        vec![0.0, 0.0, 0.0, 1.0],
    );
    t.pointer = Some(colour());
    assert!(matches!(
        refused(one(t)),
        (0, 0, TrackError::PointerOnNodeProperty { .. })
    ));
    // One pointer once per clip.
    let t = Track::for_pointer(colour(), Interpolation::Step, vec![0.0], vec![0.0; 4]);
    assert!(matches!(
        refused(vec![Clip::new("c", vec![t.clone(), t])]),
        (0, 1, TrackError::DuplicatePointer { first: 0, .. })
    ));
    // One type per pointer in the library.
    let a = Track::for_pointer(colour(), Interpolation::Step, vec![0.0], vec![0.0; 4]);
    let b = Track::for_pointer(
        target(BASE_COLOR, PointerType::Float3, &[1.0; 3]),
        Interpolation::Step,
        vec![0.0],
        vec![0.0; 3],
    );
    assert!(matches!(
        refused(vec![Clip::new("a", vec![a]), Clip::new("b", vec![b])]),
        (
            1,
            0,
            TrackError::PointerTypeConflict {
                ty: PointerType::Float3,
                first: PointerType::Float4,
                clip: 0,
                ..
            }
        )
    ));
}
