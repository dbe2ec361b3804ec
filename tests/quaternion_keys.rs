//! Rotation keys that are not exactly unit length: normalized within
//! `QUAT_UNIT_TOLERANCE`, refused beyond it; tangents left alone.

use keyframe_gpu::internals::LibraryTables;
use keyframe_gpu::{
    cpu, AnimationLibrary, Clip, Error, Instance, Interpolation, Property, Track, TrackError,
    QUAT_UNIT_TOLERANCE,
};

fn normalized_f64(q: [f32; 4]) -> [f32; 4] {
    let len = q.iter().map(|&c| f64::from(c).powi(2)).sum::<f64>().sqrt();
    q.map(|c| (f64::from(c) / len) as f32)
}

#[test]
fn slightly_short_keys_are_normalized_and_returned_on_key() {
    // Like SimpleSkin's keys: length 0.99985.
    let a = [0.0, 0.0, 0.0, 0.99985];
    let b = [0.0, 0.706_96, 0.0, 0.706_96]; // length 0.99979
    let mut values = a.to_vec();
    values.extend(b);
    let track = Track::new(
        0,
        Property::Rotation,
        Interpolation::Linear,
        vec![0.0, 1.0],
        values,
    );
    let lib = AnimationLibrary::new(vec![Clip::new("c", vec![track])]).unwrap();
    let stored = LibraryTables::of(&lib).unwrap();
    assert_eq!(&stored.values()[0..4], &normalized_f64(a));
    assert_eq!(&stored.values()[4..8], &normalized_f64(b));
    // The clip as given keeps the stored values.
    assert_eq!(lib.clips()[0].tracks[0].values[3], 0.99985);
    let out = cpu::sample(&lib, &[Instance::new(0, 1.0)]).unwrap();
    assert_eq!(&out[..], &normalized_f64(b));
    assert_eq!(normalized_f64(b)[1], normalized_f64(b)[3]);
    assert!((normalized_f64(b)[1] - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-7);
}

#[test]
fn unit_keys_are_kept_bit_for_bit() {
    let h = std::f32::consts::FRAC_1_SQRT_2; // length differs from 1 by < 1e-7
    let values = vec![h, 0.0, 0.0, h, 0.0, 0.0, 0.0, 1.0];
    let track = Track::new(
        0,
        Property::Rotation,
        Interpolation::Step,
        vec![0.0, 1.0],
        values.clone(),
    );
    let lib = AnimationLibrary::new(vec![Clip::new("c", vec![track])]).unwrap();
    assert_eq!(LibraryTables::of(&lib).unwrap().values(), &values[..]);
}

#[test]
fn keys_far_from_unit_are_refused_with_the_key() {
    let values = vec![
        0.0,
        0.0,
        0.0,
        1.0,
        0.0,
        0.0,
        0.0,
        1.0 + 2.0 * QUAT_UNIT_TOLERANCE,
    ];
    let track = Track::new(
        0,
        Property::Rotation,
        Interpolation::Linear,
        vec![0.0, 1.0],
        values,
    );
    let err = AnimationLibrary::new(vec![Clip::new("c", vec![track])]).unwrap_err();
    match &err {
        Error::InvalidTrack {
            clip: 0,
            track: 0,
            kind: TrackError::QuaternionNotUnit { key: 1, length },
            ..
        } => {
            assert!((length - 1.02).abs() < 1e-6);
        }
        other => panic!("unexpected {other:?}"),
    }
    let msg = err.to_string();
    assert!(msg.contains("key 1") && msg.contains("1.02"), "{msg}");
}

#[test]
fn cubic_tangents_are_not_normalized() {
    // (in-tangent, value, out-tangent) per key; tangents of length 0.5 and 0.
    let key = |w: f32| [0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0, w, 0.0, 0.0, 0.0, 0.0];
    let mut values = key(0.995).to_vec();
    values.extend(key(1.0));
    let track = Track::new(
        0,
        Property::Rotation,
        Interpolation::CubicSpline,
        vec![0.0, 1.0],
        values,
    );
    let lib = AnimationLibrary::new(vec![Clip::new("c", vec![track])]).unwrap();
    let stored = LibraryTables::of(&lib).unwrap();
    let v = stored.values();
    assert_eq!(&v[0..4], &[0.0, 0.0, 0.5, 0.0], "in-tangent kept");
    assert_eq!(
        &v[4..8],
        &[0.0, 0.0, 0.0, 1.0],
        "value normalized (0.995 -> 1)"
    );
    assert_eq!(&v[8..12], &[0.0; 4], "zero out-tangent accepted and kept");
}
