//! Every typed error of `Track::validate`, `AnimationLibrary::new` and
//! instance resolution (`cpu::sample`, the same check as `set_instances`):
//! the exact variant, its fields (clip, track, key, ...) and a Display
//! message that names them.

use keyframe_gpu::{
    cpu, AnimationLibrary, Clip, Error, Instance, Interpolation, Property, Track, TrackError,
    WrapMode,
};

fn translation(interp: Interpolation, times: Vec<f32>, values: Vec<f32>) -> Track {
    Track::new(0, Property::Translation, interp, times, values)
}

/// A valid LINEAR translation track with `keys` keys at 0, 1, 2, ...
fn good(keys: usize) -> Track {
    translation(
        Interpolation::Linear,
        (0..keys).map(|k| k as f32).collect(),
        (0..keys * 3).map(|i| i as f32).collect(),
    )
}

/// Puts `bad` as track 2 of clip 1 ("walk") in a library of three clips,
/// and returns the library's error.
fn library_error(bad: Track) -> Error {
    let clips = vec![
        Clip::new("idle", vec![good(2)]),
        Clip::new("walk", vec![good(3), good(1), bad, good(2)]),
        Clip::new("run", vec![good(4)]),
    ];
    match AnimationLibrary::new(clips) {
        Ok(_) => panic!("library with an invalid track was accepted"),
        Err(e) => e,
    }
}

/// Checks that `bad` is refused as track 2 of clip 1 ("walk") with `kind`
/// (compared by `check_kind`), and that the message names clip, track and
/// every fragment of `names`.
fn assert_invalid(bad: Track, check_kind: impl Fn(&TrackError), names: &[&str]) {
    // Track::validate alone.
    let kind = bad.validate().expect_err("track should be invalid");
    check_kind(&kind);
    let kind_msg = kind.to_string();
    for n in names {
        assert!(kind_msg.contains(n), "{kind_msg:?} should name {n:?}");
    }
    // Through the library: clip and track are added.
    let err = library_error(bad);
    let msg = err.to_string();
    match &err {
        Error::InvalidTrack {
            clip,
            clip_name,
            track,
            kind,
        } => {
            assert_eq!(
                (*clip, clip_name.as_str(), *track),
                (1, "walk", 2),
                "{err:?}"
            );
            check_kind(kind);
        }
        other => panic!("expected InvalidTrack, got {other:?}"),
    }
    for n in ["clip 1", "\"walk\"", "track 2"].iter().chain(names) {
        assert!(msg.contains(n), "{msg:?} should name {n:?}");
    }
}

#[test]
fn times_not_strictly_increasing() {
    // Equal times at key 2.
    assert_invalid(
        translation(
            Interpolation::Linear,
            vec![0.0, 1.0, 1.0, 2.0],
            vec![0.0; 12],
        ),
        |k| {
            assert_eq!(
                *k,
                TrackError::TimesNotIncreasing {
                    key: 2,
                    previous: 1.0,
                    time: 1.0
                }
            )
        },
        &["key 2", "time 1", "previous key's time 1"],
    );
    // Decreasing at key 3.
    assert_invalid(
        translation(Interpolation::Step, vec![0.0, 1.0, 2.0, 1.5], vec![0.0; 12]),
        |k| {
            assert_eq!(
                *k,
                TrackError::TimesNotIncreasing {
                    key: 3,
                    previous: 2.0,
                    time: 1.5
                }
            )
        },
        &["key 3", "time 1.5", "time 2"],
    );
}

#[test]
fn times_not_finite() {
    assert_invalid(
        translation(
            Interpolation::Linear,
            vec![0.0, 1.0, f32::NAN],
            vec![0.0; 9],
        ),
        |k| {
            assert!(
                matches!(k, TrackError::TimeNotFinite { key: 2, time } if time.is_nan()),
                "{k:?}"
            )
        },
        &["key 2", "NaN"],
    );
    assert_invalid(
        translation(Interpolation::Linear, vec![f32::INFINITY], vec![0.0; 3]),
        |k| {
            assert_eq!(
                *k,
                TrackError::TimeNotFinite {
                    key: 0,
                    time: f32::INFINITY
                }
            )
        },
        &["key 0", "inf"],
    );
    assert_invalid(
        translation(
            Interpolation::Linear,
            vec![0.0, f32::NEG_INFINITY],
            vec![0.0; 6],
        ),
        |k| {
            assert_eq!(
                *k,
                TrackError::TimeNotFinite {
                    key: 1,
                    time: f32::NEG_INFINITY
                }
            )
        },
        &["key 1", "-inf"],
    );
}

#[test]
fn value_count_mismatch() {
    // LINEAR: 2 keys x 1 x 3 = 6 expected, 5 found.
    assert_invalid(
        translation(Interpolation::Linear, vec![0.0, 1.0], vec![0.0; 5]),
        |k| {
            assert_eq!(
                *k,
                TrackError::ValueCountMismatch {
                    keys: 2,
                    per_key: 1,
                    width: 3,
                    expected: 6,
                    found: 5
                }
            )
        },
        &["expected 6", "found 5", "2 keys"],
    );
    // CUBICSPLINE needs x3: 2 keys x 3 x 3 = 18; giving the LINEAR count (6)
    // is refused.
    assert_invalid(
        translation(Interpolation::CubicSpline, vec![0.0, 1.0], vec![0.0; 6]),
        |k| {
            assert_eq!(
                *k,
                TrackError::ValueCountMismatch {
                    keys: 2,
                    per_key: 3,
                    width: 3,
                    expected: 18,
                    found: 6
                }
            )
        },
        &["expected 18", "found 6", "3 elements"],
    );
    // Weights with 2 targets, 3 keys, CUBICSPLINE: 3 x 3 x 2 = 18, 19 found.
    assert_invalid(
        Track::weights(
            0,
            2,
            Interpolation::CubicSpline,
            vec![0.0, 1.0, 2.0],
            vec![0.0; 19],
        ),
        |k| {
            assert_eq!(
                *k,
                TrackError::ValueCountMismatch {
                    keys: 3,
                    per_key: 3,
                    width: 2,
                    expected: 18,
                    found: 19
                }
            )
        },
        &["expected 18", "found 19", "width 2"],
    );
    // Rotation: 4 per key.
    assert_invalid(
        Track::new(
            0,
            Property::Rotation,
            Interpolation::Step,
            vec![0.0],
            vec![0.0, 0.0, 1.0],
        ),
        |k| {
            assert_eq!(
                *k,
                TrackError::ValueCountMismatch {
                    keys: 1,
                    per_key: 1,
                    width: 4,
                    expected: 4,
                    found: 3
                }
            )
        },
        &["expected 4", "found 3"],
    );
}

#[test]
fn cubicspline_with_one_key() {
    // Even with a correct count for one key (3 elements x 3), one key is
    // not enough (glTF 2.0: at least two keyframes).
    assert_invalid(
        translation(Interpolation::CubicSpline, vec![0.5], vec![0.0; 9]),
        |k| assert_eq!(*k, TrackError::CubicSplineTooFewKeys { keys: 1 }),
        &["CUBICSPLINE", "2 keys", "found 1"],
    );
}

#[test]
fn no_keys() {
    assert_invalid(
        translation(Interpolation::Linear, vec![], vec![]),
        |k| assert_eq!(*k, TrackError::NoKeys),
        &["no keys"],
    );
}

#[test]
fn values_not_finite() {
    // Key 1, component 2 of a LINEAR translation: index 5.
    let mut v = vec![0.0; 9];
    v[5] = f32::NAN;
    assert_invalid(
        translation(Interpolation::Linear, vec![0.0, 1.0, 2.0], v),
        |k| {
            assert!(
                matches!(
                    k,
                    TrackError::ValueNotFinite { key: 1, component: 2, value } if value.is_nan()
                ),
                "{k:?}"
            )
        },
        &["key 1", "component 2", "NaN"],
    );
    // CUBICSPLINE: key 1's out-tangent (element 2 of its triple), component
    // 0 -> index (3 * 1 + 2) * 3 + 0 = 15; inside the key's 9 floats it is
    // component 6. Tangents must be finite too.
    let mut v = vec![0.0; 18];
    v[15] = f32::INFINITY;
    assert_invalid(
        translation(Interpolation::CubicSpline, vec![0.0, 1.0], v),
        |k| {
            assert_eq!(
                *k,
                TrackError::ValueNotFinite {
                    key: 1,
                    component: 6,
                    value: f32::INFINITY
                }
            )
        },
        &["key 1", "component 6", "inf"],
    );
    // Weights, 3 targets, key 0 component 1.
    assert_invalid(
        Track::weights(
            0,
            3,
            Interpolation::Step,
            vec![0.0, 1.0],
            vec![0.0, f32::NEG_INFINITY, 0.0, 0.0, 0.0, 0.0],
        ),
        |k| {
            assert_eq!(
                *k,
                TrackError::ValueNotFinite {
                    key: 0,
                    component: 1,
                    value: f32::NEG_INFINITY
                }
            )
        },
        &["key 0", "component 1", "-inf"],
    );
}

#[test]
fn zero_quaternion() {
    let id = [0.0f32, 0.0, 0.0, 1.0];
    let zero = [0.0f32; 4];
    // LINEAR: key 2 is zero.
    assert_invalid(
        Track::new(
            0,
            Property::Rotation,
            Interpolation::Linear,
            vec![0.0, 1.0, 2.0],
            [id, id, zero].concat(),
        ),
        |k| assert_eq!(*k, TrackError::ZeroQuaternion { key: 2 }),
        &["key 2", "zero length"],
    );
    // CUBICSPLINE: key 1's value element is zero.
    assert_invalid(
        Track::new(
            0,
            Property::Rotation,
            Interpolation::CubicSpline,
            vec![0.0, 1.0],
            [zero, id, zero, zero, zero, zero].concat(),
        ),
        |k| assert_eq!(*k, TrackError::ZeroQuaternion { key: 1 }),
        &["key 1", "zero length"],
    );
    // Zero tangents are legitimate (a flat spline).
    let flat = Track::new(
        0,
        Property::Rotation,
        Interpolation::CubicSpline,
        vec![0.0, 1.0],
        [zero, id, zero, zero, id, zero].concat(),
    );
    assert_eq!(flat.validate(), Ok(()));
    // A zero translation is fine: only rotations must have length.
    assert_eq!(
        translation(Interpolation::Linear, vec![0.0], vec![0.0; 3]).validate(),
        Ok(())
    );
}

/// A rotation key further than `QUAT_UNIT_TOLERANCE` (0.01) from unit
/// length is refused; CUBICSPLINE tangents are not quaternions and may have
/// any length.
#[test]
fn quaternion_not_unit() {
    let id = [0.0f32, 0.0, 0.0, 1.0];
    assert_eq!(keyframe_gpu::QUAT_UNIT_TOLERANCE, 0.01);
    // Key 1 has length 0.5 (exact in f32).
    assert_invalid(
        Track::new(
            0,
            Property::Rotation,
            Interpolation::Linear,
            vec![0.0, 1.0],
            [id, [0.0, 0.3, 0.0, 0.4]].concat(),
        ),
        |k| {
            assert_eq!(
                *k,
                TrackError::QuaternionNotUnit {
                    key: 1,
                    length: 0.5
                }
            )
        },
        &["key 1", "length 0.5", "0.01"],
    );
    // CUBICSPLINE, key 0's value has length 2; tangents of length 3 are fine.
    let t3 = [3.0f32, 0.0, 0.0, 0.0];
    assert_invalid(
        Track::new(
            0,
            Property::Rotation,
            Interpolation::CubicSpline,
            vec![0.0, 1.0],
            [t3, [0.0, 0.0, 0.0, 2.0], t3, t3, id, t3].concat(),
        ),
        |k| {
            assert_eq!(
                *k,
                TrackError::QuaternionNotUnit {
                    key: 0,
                    length: 2.0
                }
            )
        },
        &["key 0", "length 2"],
    );
    let tangents_long = Track::new(
        0,
        Property::Rotation,
        Interpolation::CubicSpline,
        vec![0.0, 1.0],
        [t3, id, t3, t3, id, t3].concat(),
    );
    assert_eq!(tangents_long.validate(), Ok(()));
}

#[test]
fn bad_width() {
    for (property, width) in [
        (Property::Translation, 4),
        (Property::Rotation, 3),
        (Property::Scale, 1),
    ] {
        let mut t = Track::new(
            0,
            property,
            Interpolation::Linear,
            vec![0.0],
            vec![0.0; width as usize],
        );
        t.width = width;
        assert_invalid(
            t,
            |k| assert_eq!(*k, TrackError::BadWidth { property, width }),
            &[&format!("{property:?}"), &format!("width {width}")],
        );
    }
    assert_invalid(
        Track::weights(0, 0, Interpolation::Linear, vec![0.0], vec![]),
        |k| {
            assert_eq!(
                *k,
                TrackError::BadWidth {
                    property: Property::Weights,
                    width: 0
                }
            )
        },
        &["Weights", "width 0"],
    );
}

#[test]
fn empty_clip_and_empty_library() {
    let err = AnimationLibrary::new(vec![
        Clip::new("idle", vec![good(2)]),
        Clip::new("jump", vec![good(2)]),
        Clip::new("nothing", vec![]),
    ])
    .expect_err("empty clip accepted");
    match &err {
        Error::EmptyClip { clip, clip_name } => {
            assert_eq!((*clip, clip_name.as_str()), (2, "nothing"));
        }
        other => panic!("expected EmptyClip, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("clip 2") && msg.contains("\"nothing\""),
        "{msg}"
    );

    let err = AnimationLibrary::new(vec![]).expect_err("empty library accepted");
    assert!(matches!(err, Error::EmptyLibrary), "{err:?}");
    assert!(err.to_string().contains("no clip"), "{err}");
}

/// The first invalid track is reported, in clip then track order.
#[test]
fn first_error_wins() {
    let mut bad_values = good(2);
    bad_values.values[1] = f32::NAN;
    let bad_times = translation(Interpolation::Linear, vec![1.0, 0.0], vec![0.0; 6]);
    let err = AnimationLibrary::new(vec![
        Clip::new("a", vec![good(2), good(3)]),
        Clip::new("b", vec![good(2), bad_times, bad_values.clone()]),
        Clip::new("c", vec![bad_values]),
    ])
    .expect_err("invalid accepted");
    match err {
        Error::InvalidTrack {
            clip: 1,
            track: 1,
            kind: TrackError::TimesNotIncreasing { key: 1, .. },
            ..
        } => {}
        other => panic!("expected clip 1 track 1 key 1, got {other:?}"),
    }
}

fn two_clip_library() -> AnimationLibrary {
    AnimationLibrary::new(vec![
        Clip::new("a", vec![good(2)]),
        Clip::new("b", vec![good(3)]),
    ])
    .expect("valid")
}

#[test]
fn instance_clip_out_of_range() {
    let lib = two_clip_library();
    let instances = [
        Instance::new(0, 0.5),
        Instance::new(1, 0.5),
        Instance::new(2, 0.5),
        Instance::new(7, f64::NAN),
    ];
    let err = cpu::sample(&lib, &instances).expect_err("out of range accepted");
    match &err {
        Error::ClipOutOfRange {
            instance,
            clip,
            clip_count,
        } => assert_eq!((*instance, *clip, *clip_count), (2, 2, 2)),
        other => panic!("expected ClipOutOfRange, got {other:?}"),
    }
    let msg = err.to_string();
    for n in ["instance 2", "clip index 2", "2 clips"] {
        assert!(msg.contains(n), "{msg:?} should name {n:?}");
    }
    // u32::MAX is out of range too.
    let err = cpu::sample(&lib, &[Instance::new(u32::MAX, 0.0)]).expect_err("accepted");
    assert!(
        matches!(
            err,
            Error::ClipOutOfRange {
                instance: 0,
                clip: u32::MAX,
                clip_count: 2
            }
        ),
        "{err:?}"
    );
}

#[test]
fn instance_time_not_finite() {
    let lib = two_clip_library();
    for (time, name) in [
        (f64::NAN, "NaN"),
        (f64::INFINITY, "inf"),
        (f64::NEG_INFINITY, "-inf"),
    ] {
        for wrap in [WrapMode::Clamp, WrapMode::Repeat, WrapMode::PingPong] {
            let instances = [
                Instance::new(1, 1e9).with_wrap(wrap),
                Instance::new(0, time).with_wrap(wrap),
            ];
            let err = cpu::sample(&lib, &instances).expect_err("non-finite accepted");
            match &err {
                Error::InstanceTimeNotFinite {
                    instance: 1,
                    time: t,
                } if t.to_bits() == time.to_bits() => {}
                other => panic!("expected InstanceTimeNotFinite for instance 1, got {other:?}"),
            }
            let msg = err.to_string();
            assert!(
                msg.contains("instance 1") && msg.contains(name),
                "{msg:?} should name instance 1 and {name}"
            );
        }
    }
    // Huge but finite times are fine in every mode.
    for wrap in [WrapMode::Clamp, WrapMode::Repeat, WrapMode::PingPong] {
        let sampled =
            cpu::sample(&lib, &[Instance::new(0, f64::MAX).with_wrap(wrap)]).expect("finite");
        assert!(
            sampled.iter().all(|v| v.is_finite()),
            "{wrap:?}: {sampled:?}"
        );
    }
}
