//! The CPU reference (`keyframe_gpu::cpu`) against values computed by hand
//! from the formulas of the contract (docs/ARCHITECTURE.md, "The contract").
//!
//! The oracle here is written from the contract, not from `src/cpu/`: it
//! works in `f64` with the standard library's `sin`/`acos`, finds the key
//! interval by a linear scan (the crate does a binary search), and never
//! calls a function of the crate under test. A few results are also written
//! out as literal numbers worked out by hand, so that the oracle itself is
//! anchored.
//!
//! Tolerances (each assertion names the one it uses):
//! - STEP, exact keys, clamping and single-key tracks: bit-exact (the spec
//!   says the key value "MUST be used as-is").
//! - LINEAR lerp: `1e-6 * max(|v_k|, |v_k+1|)` per component. The f32 lerp
//!   rounds `t` (the interval division), `1 - t`, two products and a sum:
//!   a few units in the last place of the larger endpoint (2^-24 ~ 6e-8 each),
//!   so 1e-6 relative to the endpoints leaves margin; the error is relative
//!   to the endpoints, not to the result, which can cancel to ~0.
//! - slerp / nlerp: `2e-6` absolute per unit-quaternion component vs f64. The
//!   crate's polynomial acos and sin are within 2.5e-7 and 3e-7 in f32 (checked below), the
//!   rest is a handful of f32 roundings of numbers <= 1.
//! - CUBICSPLINE: `2e-6 * (|v_k| + dt |b_k| + |v_k+1| + dt |a_k+1|)` per
//!   component: the basis polynomials are evaluated in f32 with
//!   intermediates up to 3, each term carries a few ulp of its operand's
//!   magnitude. Rotations (normalized) use `2e-6` absolute with data whose
//!   spline value has a length near 1.

use crate::tests::Derived;
use std::f64::consts::PI;

use super::key_value;
use crate::tables::instance::resolve_instances;
use keyframe_gpu::{
    cpu, AnimationLibrary, Clip, Instance, Interpolation, Property, Track, WrapMode,
};

// ---------------------------------------------------------------------------
// The f64 oracle, from the contract.
// ---------------------------------------------------------------------------

/// What a sample must be.
#[derive(Debug)]
enum Expect {
    /// Bit for bit these `f32`s.
    Exact(Vec<f32>),
    /// Within `tol[c]` of `value[c]`.
    Near { value: Vec<f64>, tol: Vec<f64> },
}

/// Element `e` of the flat value array, widened to f64.
fn element64(track: &Track, e: usize) -> Vec<f64> {
    let w = track.width as usize;
    track.values[e * w..(e + 1) * w]
        .iter()
        .map(|&v| f64::from(v))
        .collect()
}

fn dot64(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn normalize64(q: &[f64]) -> Vec<f64> {
    let len = dot64(q, q).sqrt();
    q.iter().map(|c| c / len).collect()
}

/// slerp from `q0` to `q1` exactly as written, with no shortest-path flip
/// and no nlerp fallback: `(sin((1-t) theta) q0 + sin(t theta) q1) / sin theta`,
/// normalized.
fn slerp_raw64(q0: &[f64], q1: &[f64], t: f64) -> Vec<f64> {
    let theta = dot64(q0, q1).clamp(-1.0, 1.0).acos();
    let s0 = ((1.0 - t) * theta).sin();
    let s1 = (t * theta).sin();
    let s = theta.sin();
    let q: Vec<f64> = (0..4).map(|c| (s0 * q0[c] + s1 * q1[c]) / s).collect();
    normalize64(&q)
}

/// normalize((1 - t) q0 + t q1).
fn nlerp64(q0: &[f64], q1: &[f64], t: f64) -> Vec<f64> {
    let q: Vec<f64> = (0..4).map(|c| (1.0 - t) * q0[c] + t * q1[c]).collect();
    normalize64(&q)
}

/// The contract's LINEAR rotation rule: flip to the shortest path, nlerp above
/// a dot of 0.9995, slerp otherwise.
fn slerp64(q0: &[f64], q1: &[f64], t: f64) -> Vec<f64> {
    let mut q1 = q1.to_vec();
    let mut d = dot64(q0, &q1);
    if d < 0.0 {
        q1.iter_mut().for_each(|c| *c = -*c);
        d = -d;
    }
    if d > 0.9995 {
        nlerp64(q0, &q1, t)
    } else {
        slerp_raw64(q0, &q1, t)
    }
}

/// The glTF cubic Hermite spline for one component, in f64, returning the
/// value and the magnitude scale used for its tolerance.
fn hermite64(v0: f64, b0: f64, v1: f64, a1: f64, t: f64, dt: f64) -> (f64, f64) {
    let (t2, t3) = (t * t, t * t * t);
    let p = (2.0 * t3 - 3.0 * t2 + 1.0) * v0
        + dt * (t3 - 2.0 * t2 + t) * b0
        + (-2.0 * t3 + 3.0 * t2) * v1
        + dt * (t3 - t2) * a1;
    (p, v0.abs() + dt * b0.abs() + v1.abs() + dt * a1.abs())
}

/// The expected sample of `track` at clip time `time`, from the contract.
fn oracle(track: &Track, time: f32) -> Expect {
    let times = &track.times;
    let n = times.len();
    if n == 1 || time <= times[0] {
        return Expect::Exact(key_value(track, 0));
    }
    if time >= times[n - 1] {
        return Expect::Exact(key_value(track, n - 1));
    }
    // Largest k with t_k <= time: a linear scan.
    let k = (0..n).rev().find(|&k| times[k] <= time).unwrap();
    if times[k] == time || track.interpolation == Interpolation::Step {
        return Expect::Exact(key_value(track, k));
    }
    let (tk, tk1) = (f64::from(times[k]), f64::from(times[k + 1]));
    let t = (f64::from(time) - tk) / (tk1 - tk);
    let rotation = track.property == Property::Rotation;
    match track.interpolation {
        Interpolation::Linear if rotation => Expect::Near {
            value: slerp64(&element64(track, k), &element64(track, k + 1), t),
            tol: vec![2e-6; 4],
        },
        Interpolation::Linear => {
            let (a, b) = (element64(track, k), element64(track, k + 1));
            Expect::Near {
                value: (0..a.len()).map(|c| (1.0 - t) * a[c] + t * b[c]).collect(),
                tol: (0..a.len())
                    .map(|c| 1e-6 * a[c].abs().max(b[c].abs()))
                    .collect(),
            }
        }
        Interpolation::CubicSpline => {
            let dt = tk1 - tk;
            let v0 = element64(track, 3 * k + 1);
            let b0 = element64(track, 3 * k + 2);
            let a1 = element64(track, 3 * k + 3);
            let v1 = element64(track, 3 * k + 4);
            let (value, scale): (Vec<f64>, Vec<f64>) = (0..v0.len())
                .map(|c| hermite64(v0[c], b0[c], v1[c], a1[c], t, dt))
                .unzip();
            if rotation {
                Expect::Near {
                    value: normalize64(&value),
                    tol: vec![2e-6; 4],
                }
            } else {
                Expect::Near {
                    value,
                    tol: scale.iter().map(|s| 2e-6 * s).collect(),
                }
            }
        }
        Interpolation::Step => unreachable!(),
    }
}

// ---------------------------------------------------------------------------
// Running the crate.
// ---------------------------------------------------------------------------

fn library(track: Track) -> AnimationLibrary {
    AnimationLibrary::new(vec![Clip::new("test", vec![track])]).expect("valid test track")
}

/// The crate's sample at raw clip time `time` (no wrap mode).
fn sample_raw(lib: &AnimationLibrary, time: f32) -> Vec<f32> {
    let track = &lib.tables().tracks()[0];
    let mut out = vec![f32::NAN; track.width as usize];
    cpu::sample::sample_track(
        lib.times(),
        lib.tables().search_keys(),
        lib.values(),
        track,
        time,
        &mut out,
    );
    out
}

/// The crate's sample through the public entry point, an instance with
/// playback time `time` and `wrap`.
fn sample_instance(lib: &AnimationLibrary, time: f64, wrap: WrapMode) -> Vec<f32> {
    cpu::sample(lib, &[Instance::new(0, time).with_wrap(wrap)]).expect("valid instance")
}

/// Asserts `got` against `expect`; returns the largest error relative to its
/// tolerance (0 for exact matches).
fn check(what: &str, got: &[f32], expect: &Expect) -> f64 {
    match expect {
        Expect::Exact(v) => {
            let same =
                got.len() == v.len() && got.iter().zip(v).all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same, "{what}: got {got:?}, expected exactly {v:?}");
            0.0
        }
        Expect::Near { value, tol } => {
            assert_eq!(got.len(), value.len(), "{what}: width");
            let mut worst = 0.0f64;
            for c in 0..value.len() {
                let err = (f64::from(got[c]) - value[c]).abs();
                assert!(
                    err <= tol[c],
                    "{what}: component {c}: got {}, expected {} (error {err:e} > tolerance {:e})",
                    got[c],
                    value[c],
                    tol[c]
                );
                if tol[c] > 0.0 {
                    worst = worst.max(err / tol[c]);
                }
            }
            worst
        }
    }
}

/// Times to probe for a track: far before, before, on every key (and one
/// ulp either side), a sweep between keys, after, far after.
fn probe_times(times: &[f32]) -> Vec<f32> {
    let mut out = vec![-1e30, -10.0, -1.0, -0.0, 0.0];
    let first = times[0];
    let last = times[times.len() - 1];
    out.extend([first - 1.0, first - 0.001]);
    for &t in times {
        out.extend([t.next_down(), t, t.next_up()]);
    }
    for w in times.windows(2) {
        for i in 1..40 {
            out.push(w[0] + (w[1] - w[0]) * (i as f32 / 40.0));
        }
    }
    out.extend([last + 0.001, last + 1.0, 1e4, 1e30]);
    out
}

/// Checks `track` at every probe time, raw and through an instance in
/// clamp mode (which must give the same result). Returns the worst
/// error/tolerance ratio.
fn check_track(name: &str, track: Track) -> f64 {
    let lib = library(track.clone());
    let mut worst = 0.0f64;
    for time in probe_times(&track.times) {
        let expect = oracle(&track, time);
        let raw = sample_raw(&lib, time);
        worst = worst.max(check(&format!("{name} at {time}"), &raw, &expect));
        // Through an instance: clamp mode passes a finite f32 time through.
        let inst = sample_instance(&lib, f64::from(time), WrapMode::Clamp);
        check(
            &format!("{name} via instance at {time}"),
            &inst,
            &oracle(&track, time),
        );
    }
    println!("{name}: worst error / tolerance = {worst:.3}");
    worst
}

// ---------------------------------------------------------------------------
// Test data.
// ---------------------------------------------------------------------------

/// Unit quaternion (x, y, z, w) for `angle` radians about `axis`, in f32.
fn axis_angle(axis: [f64; 3], angle: f64) -> [f32; 4] {
    let n = dot64(&axis, &axis).sqrt();
    let s = (angle / 2.0).sin() / n;
    [
        (axis[0] * s) as f32,
        (axis[1] * s) as f32,
        (axis[2] * s) as f32,
        (angle / 2.0).cos() as f32,
    ]
}

fn q64(q: [f32; 4]) -> Vec<f64> {
    q.iter().map(|&c| f64::from(c)).collect()
}

/// Keys that start after 0 with unequal intervals.
const TIMES: [f32; 4] = [0.5, 1.5, 2.0, 4.0];

fn vec3_values() -> Vec<f32> {
    vec![
        1.0, -2.0, 3.0, //
        -4.5, 0.25, 8.0, //
        2.0, 2.0, -1.0, //
        0.0, 100.0, -0.125,
    ]
}

/// Rotations with consecutive dots: moderate, negative, nearly equal (nlerp
/// branch), large angle.
fn rotation_values() -> Vec<f32> {
    let q0 = axis_angle([1.0, 2.0, 3.0], 0.3);
    let q1 = axis_angle([0.0, 1.0, 0.0], 1.9);
    // A rotation near q1 stored with the opposite sign: dot(q1, q2) < 0, the
    // shortest path goes to -q2.
    let q2 = axis_angle([0.0, 1.0, 0.3], 2.2).map(|c| -c);
    // q3 is nearly q2 (0.01 rad further, same sign): dot = cos(0.005) > 0.9995.
    let q3 = axis_angle([0.0, 1.0, 0.3], 2.21).map(|c| -c);
    [q0, q1, q2, q3].concat()
}

fn weights_values(m: usize) -> Vec<f32> {
    (0..TIMES.len() * m)
        .map(|i| ((i * 7 % 11) as f32) * 0.25 - 1.0)
        .collect()
}

fn cubic_values(width: usize, keys: usize) -> Vec<f32> {
    // (in-tangent, value, out-tangent) per key, all different and nonzero.
    (0..keys * 3 * width)
        .map(|i| ((i * 5 % 13) as f32) * 0.5 - 3.0)
        .collect()
}

fn cubic_rotation_values() -> Vec<f32> {
    let q = [
        axis_angle([1.0, 0.0, 0.0], 0.2),
        axis_angle([1.0, 1.0, 0.0], 0.9),
        axis_angle([0.0, 0.0, 1.0], 0.4),
        axis_angle([0.0, 1.0, 1.0], 1.1),
    ];
    let tangents = [
        [0.1f32, -0.2, 0.05, 0.0],
        [0.3, 0.1, -0.1, -0.05],
        [-0.2, 0.2, 0.1, 0.02],
        [0.05, 0.05, -0.3, 0.1],
    ];
    let mut v = Vec::new();
    for k in 0..4 {
        v.extend(tangents[k]);
        v.extend(q[k]);
        v.extend(tangents[(k + 1) % 4].map(|c| -c));
    }
    v
}

// ---------------------------------------------------------------------------
// Every interpolation x property at times before, on, between, after keys.
// ---------------------------------------------------------------------------

#[test]
fn step_every_property() {
    for property in [Property::Translation, Property::Scale] {
        let t = Track::new(0, property, Interpolation::Step, TIMES, vec3_values());
        check_track(&format!("STEP {property:?}"), t);
    }
    let t = Track::new(
        0,
        Property::Rotation,
        Interpolation::Step,
        TIMES,
        rotation_values(),
    );
    check_track("STEP rotation", t);
    let t = Track::weights(0, 3, Interpolation::Step, TIMES, weights_values(3));
    check_track("STEP weights m=3", t);
}

#[test]
fn step_holds_previous_key_by_hand() {
    let lib = library(Track::new(
        0,
        Property::Translation,
        Interpolation::Step,
        [1.0, 2.0],
        vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    ));
    assert_eq!(sample_raw(&lib, 0.0), [1.0, 2.0, 3.0]);
    assert_eq!(sample_raw(&lib, 1.999), [1.0, 2.0, 3.0]);
    assert_eq!(sample_raw(&lib, 2.0), [4.0, 5.0, 6.0]);
    assert_eq!(sample_raw(&lib, 7.0), [4.0, 5.0, 6.0]);
}

#[test]
fn linear_every_property() {
    for property in [Property::Translation, Property::Scale] {
        let t = Track::new(0, property, Interpolation::Linear, TIMES, vec3_values());
        check_track(&format!("LINEAR {property:?}"), t);
    }
    let t = Track::new(
        0,
        Property::Rotation,
        Interpolation::Linear,
        TIMES,
        rotation_values(),
    );
    check_track("LINEAR rotation", t);
    let t = Track::weights(0, 3, Interpolation::Linear, TIMES, weights_values(3));
    check_track("LINEAR weights m=3", t);
    let t = Track::weights(
        0,
        2,
        Interpolation::Linear,
        [0.0, 1.0],
        vec![0.0, 1.0, 1.0, 0.0],
    );
    check_track("LINEAR weights m=2", t);
}

#[test]
fn linear_by_hand() {
    // (1 - t) v0 + t v1 with t = (1.25 - 0.5) / (3.5 - 0.5) = 0.25:
    // [0, 0, 0] -> [2, 4, -6] gives [0.5, 1, -1.5] (all exact in f32).
    let lib = library(Track::new(
        0,
        Property::Translation,
        Interpolation::Linear,
        [0.5, 3.5],
        vec![0.0, 0.0, 0.0, 2.0, 4.0, -6.0],
    ));
    assert_eq!(sample_raw(&lib, 1.25), [0.5, 1.0, -1.5]);
    // Weights, each on its own: [1, 0] -> [0, 4] at t = 0.75 gives [0.25, 3].
    let lib = library(Track::weights(
        0,
        2,
        Interpolation::Linear,
        [0.0, 1.0],
        vec![1.0, 0.0, 0.0, 4.0],
    ));
    assert_eq!(sample_raw(&lib, 0.75), [0.25, 3.0]);
}

#[test]
fn cubicspline_every_property() {
    for property in [Property::Translation, Property::Scale] {
        let t = Track::new(
            0,
            property,
            Interpolation::CubicSpline,
            TIMES,
            cubic_values(3, TIMES.len()),
        );
        check_track(&format!("CUBICSPLINE {property:?}"), t);
    }
    let t = Track::new(
        0,
        Property::Rotation,
        Interpolation::CubicSpline,
        TIMES,
        cubic_rotation_values(),
    );
    check_track("CUBICSPLINE rotation", t);
    let t = Track::weights(
        0,
        2,
        Interpolation::CubicSpline,
        TIMES,
        cubic_values(2, TIMES.len()),
    );
    check_track("CUBICSPLINE weights m=2", t);
}

/// On a key CUBICSPLINE returns the value element, never a tangent; before
/// the first and after the last key likewise.
#[test]
fn cubicspline_exact_keys_are_value_elements() {
    let times = [0.0f32, 1.0, 3.0];
    // Triples (a, v, b) with tangents far from the values.
    let values = vec![
        -100.0, 1.0, 100.0, //
        -200.0, 2.0, 200.0, //
        -300.0, 3.0, 300.0,
    ];
    let lib = library(Track::weights(
        0,
        1,
        Interpolation::CubicSpline,
        times,
        values,
    ));
    for (time, v) in [
        (-5.0, 1.0),
        (0.0, 1.0),
        (1.0, 2.0),
        (3.0, 3.0),
        (3.5, 3.0),
        (1e30, 3.0),
    ] {
        assert_eq!(sample_raw(&lib, time), [v], "at {time}");
    }
}

/// A time exactly on an interior key returns the stored value bit for bit,
/// with no interpolation arithmetic. Only a rotation shows the difference:
/// a key of length 1 + 5e-7 (inside `QUAT_RENORMALIZE_EPSILON`, so the
/// library stores it as given) must come back as stored, where a slerp or
/// nlerp at t = 0 would renormalize it in f32.
#[test]
fn exact_interior_rotation_key_is_not_renormalized() {
    let s = 1.000_000_5f32;
    let q1 = [0.0, 0.6 * s, 0.0, 0.8 * s];
    // Normalizing in f32 changes these bits: the test can tell.
    let len = q1.iter().map(|c| c * c).sum::<f32>().sqrt();
    assert_ne!(q1.map(|c| (c / len).to_bits()), q1.map(f32::to_bits));
    let q0 = axis_angle([1.0, 0.0, 0.0], 0.5);
    let q2 = axis_angle([0.0, 0.0, 1.0], 0.7);
    let z = [0.0f32; 4];
    for (interp, values) in [
        (Interpolation::Linear, [q0, q1, q2].concat()),
        (Interpolation::Step, [q0, q1, q2].concat()),
        (
            Interpolation::CubicSpline,
            [z, q0, z, z, q1, z, z, q2, z].concat(),
        ),
    ] {
        let track = Track::new(0, Property::Rotation, interp, [0.0, 1.0, 2.5], values);
        let lib = library(track);
        assert_eq!(
            sample_raw(&lib, 1.0)
                .iter()
                .map(|c| c.to_bits())
                .collect::<Vec<_>>(),
            q1.map(f32::to_bits),
            "{interp:?} on key 1"
        );
    }
}

/// Tangents are scaled by the key interval dt. Keys at 0, 1, 3: the second
/// interval has dt = 2.
#[test]
fn cubicspline_tangent_scaling_unequal_intervals_by_hand() {
    // One component. Key 1: v = 1, out-tangent b = 2. Key 2: in-tangent
    // a = -2, v = 3. At time 2: t = (2 - 1) / 2 = 0.5, and
    //   h00 = 2/8 - 3/4 + 1 = 0.5, h10 = 1/8 - 2/4 + 1/2 = 0.125,
    //   h01 = -2/8 + 3/4 = 0.5,    h11 = 1/8 - 1/4 = -0.125,
    //   p = 0.5*1 + 2*0.125*2 + 0.5*3 + 2*(-0.125)*(-2) = 0.5 + 0.5 + 1.5 + 0.5 = 3.
    // Without the dt factor it would be 2.5.
    // At time 1.5: t = 0.25,
    //   h00 = 2/64 - 3/16 + 1 = 0.84375, h10 = 1/64 - 2/16 + 1/4 = 0.140625,
    //   h01 = -2/64 + 3/16 = 0.15625,    h11 = 1/64 - 1/16 = -0.046875,
    //   p = 0.84375 + 2*0.140625*2 + 0.15625*3 + 2*(-0.046875)*(-2)
    //     = 0.84375 + 0.5625 + 0.46875 + 0.1875 = 2.0625.
    // (Without dt: 0.84375 + 0.28125 + 0.46875 + 0.09375 = 1.6875.)
    // First interval (dt = 1), time 0.5, t = 0.5: key 0 v = 0, b = 4; key 1
    // a = 1, v = 1: p = 0 + 0.125*4 + 0.5*1 - 0.125*1 = 0.875.
    let values = vec![
        9.0, 0.0, 4.0, // key 0: a (unused), v, b
        1.0, 1.0, 2.0, // key 1
        -2.0, 3.0, 9.0, // key 2: b unused
    ];
    let track = Track::weights(0, 1, Interpolation::CubicSpline, [0.0, 1.0, 3.0], values);
    let lib = library(track.clone());
    // Every number above is exact in binary, and so is every f32 step for
    // these inputs; 2e-6 * scale still applies as documented at the top.
    for (time, p, scale) in [
        (2.0f32, 3.0f64, 1.0 + 4.0 + 3.0 + 4.0),
        (1.5, 2.0625, 12.0),
        (0.5, 0.875, 0.0 + 4.0 + 1.0 + 1.0),
    ] {
        let got = sample_raw(&lib, time);
        check(
            &format!("cubic by hand at {time}"),
            &got,
            &Expect::Near {
                value: vec![p],
                tol: vec![2e-6 * scale],
            },
        );
        // The oracle agrees with the hand computation.
        let Expect::Near { value, .. } = oracle(&track, time) else {
            panic!("oracle should interpolate at {time}");
        };
        assert!((value[0] - p).abs() < 1e-12, "oracle {value:?} vs {p}");
    }
    // The dt factor is visible at the tolerance: without it the sample at
    // time 2 would be 2.5, far outside 2e-6 * 12 of 3.
    assert!((f64::from(sample_raw(&lib, 2.0)[0]) - 2.5).abs() > 0.1);
}

#[test]
fn cubicspline_rotation_is_normalized() {
    // Values 0 -> identity scaled down: the spline between two unit
    // quaternions with tangents passes through a non-unit point.
    let q0 = [0.0f32, 0.0, 0.0, 1.0];
    let q1 = axis_angle([0.0, 0.0, 1.0], 1.0);
    let values = [
        [0.0f32, 0.0, 0.0, 0.0],
        q0,
        [0.0, 0.0, 0.5, 0.0],
        [0.0, 0.0, 0.5, 0.0],
        q1,
        [0.0, 0.0, 0.0, 0.0],
    ]
    .concat();
    let track = Track::new(
        0,
        Property::Rotation,
        Interpolation::CubicSpline,
        [0.0, 2.0],
        values,
    );
    let lib = library(track.clone());
    for time in [0.3f32, 1.0, 1.7] {
        let got = sample_raw(&lib, time);
        let len2: f64 = got.iter().map(|&c| f64::from(c) * f64::from(c)).sum();
        assert!((len2 - 1.0).abs() < 1e-6, "at {time}: |q|^2 = {len2}");
        check(
            &format!("cubic rotation at {time}"),
            &got,
            &oracle(&track, time),
        );
    }
    // The unnormalized spline at t = 0.5 (dt = 2, h = 0.5, 0.125, 0.5, -0.125):
    // z = 0.5*0 + 2*0.125*0.5 + 0.5*sin(0.5) - 2*0.125*0.5; its length is
    // not 1, so normalization is what the check above observes.
    let raw_w = 0.5 * 1.0 + 0.5 * f64::from(q1[3]);
    let raw_z = 0.5 * f64::from(q1[2]);
    assert!((raw_w * raw_w + raw_z * raw_z - 1.0).abs() > 1e-3);
}

// ---------------------------------------------------------------------------
// Quaternions: shortest path, nlerp branch, slerp vs f64 and glam.
// ---------------------------------------------------------------------------

fn rotation_track(q0: [f32; 4], q1: [f32; 4]) -> Track {
    Track::new(
        0,
        Property::Rotation,
        Interpolation::Linear,
        [0.0, 1.0],
        [q0, q1].concat(),
    )
}

#[test]
fn slerp_by_hand() {
    // Identity to 90 degrees about z: halfway is 45 degrees about z,
    // (0, 0, sin 22.5deg, cos 22.5deg) = (0, 0, 0.3826834324, 0.9238795325).
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let lib = library(rotation_track([0.0, 0.0, 0.0, 1.0], [0.0, 0.0, h, h]));
    let got = sample_raw(&lib, 0.5);
    let want = Expect::Near {
        value: vec![0.0, 0.0, 0.382_683_432_4, 0.923_879_532_5],
        tol: vec![2e-6; 4],
    };
    check("slerp 90deg at 0.5", &got, &want);
    // A third of the way: 30 degrees, (0, 0, sin 15deg, cos 15deg).
    let got = sample_raw(&lib, 1.0 / 3.0);
    let want = Expect::Near {
        value: vec![0.0, 0.0, (PI / 12.0).sin(), (PI / 12.0).cos()],
        tol: vec![2e-6; 4],
    };
    check("slerp 90deg at 1/3", &got, &want);
}

#[test]
fn negative_dot_takes_shortest_path() {
    let q0 = axis_angle([1.0, 0.0, 0.0], 0.4);
    let q1 = axis_angle([0.0, 1.0, 1.0], 1.2).map(|c| -c);
    assert!(
        dot64(&q64(q0), &q64(q1)) < 0.0,
        "test data: dot must be negative"
    );
    let lib = library(rotation_track(q0, q1));
    let neg_q1: Vec<f64> = q64(q1).iter().map(|c| -c).collect();
    for time in [0.1f32, 0.25, 0.5, 0.9] {
        let got = sample_raw(&lib, time);
        // Expected: slerp toward -q1, written without any flip.
        let short = slerp_raw64(&q64(q0), &neg_q1, f64::from(time));
        check(
            &format!("negative dot at {time}"),
            &got,
            &Expect::Near {
                value: short,
                tol: vec![2e-6; 4],
            },
        );
        // And the long way round is clearly something else.
        let long = slerp_raw64(&q64(q0), &q64(q1), f64::from(time));
        let diff: f64 = long
            .iter()
            .zip(&got)
            .map(|(a, &b)| (a - f64::from(b)).abs())
            .fold(0.0, f64::max);
        assert!(diff > 0.1, "long path should differ, max diff {diff}");
    }
    // By hand: identity to -(90 deg about z) = (0, 0, -h, -h): halfway is
    // still +45 deg about z.
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let lib = library(rotation_track([0.0, 0.0, 0.0, 1.0], [0.0, 0.0, -h, -h]));
    check(
        "negative dot by hand",
        &sample_raw(&lib, 0.5),
        &Expect::Near {
            value: vec![0.0, 0.0, 0.382_683_432_4, 0.923_879_532_5],
            tol: vec![2e-6; 4],
        },
    );
}

#[test]
fn nearly_equal_quaternions_use_nlerp() {
    // 0.02 rad apart: dot = cos(0.01) ~ 0.99995 > 0.9995. Also with a
    // negative sign on q1 (dot ~ -0.99995, flipped into the nlerp branch).
    let q0 = axis_angle([0.3, -1.0, 0.2], 1.0);
    for sign in [1.0f32, -1.0] {
        let q1 = axis_angle([0.3, -1.0, 0.2], 1.02).map(|c| sign * c);
        let d = dot64(&q64(q0), &q64(q1)).abs();
        assert!(d > 0.9996, "test data: |dot| = {d}");
        let lib = library(rotation_track(q0, q1));
        let q1_short: Vec<f64> = q64(q1).iter().map(|c| f64::from(sign) * c).collect();
        for time in [0.2f32, 0.5, 0.77] {
            let want = nlerp64(&q64(q0), &q1_short, f64::from(time));
            // nlerp is a few f32 roundings of numbers <= 1: 2e-6 absolute.
            check(
                &format!("nlerp sign {sign} at {time}"),
                &sample_raw(&lib, time),
                &Expect::Near {
                    value: want,
                    tol: vec![2e-6; 4],
                },
            );
        }
    }
    // Just below the threshold: 0.065 rad apart, dot = cos(0.0325) ~ 0.99947,
    // so the slerp branch.
    let q1 = axis_angle([0.3, -1.0, 0.2], 1.065);
    let d = dot64(&q64(q0), &q64(q1));
    assert!(d < 0.99949 && d > 0.9994, "test data: dot = {d}");
    let lib = library(rotation_track(q0, q1));
    for time in [0.2f32, 0.5, 0.77] {
        check(
            &format!("slerp below threshold at {time}"),
            &sample_raw(&lib, time),
            &Expect::Near {
                value: slerp_raw64(&q64(q0), &q64(q1), f64::from(time)),
                tol: vec![2e-6; 4],
            },
        );
    }
}

/// Many quaternion pairs (angles up to 180 degrees, both signs) against the
/// f64 slerp, and against glam's `Quat::slerp` as an independent check.
#[test]
fn slerp_against_f64_and_glam() {
    let mut worst_f64 = 0.0f64;
    let mut worst_glam = 0.0f64;
    let mut pairs = 0;
    for i in 0..24 {
        for j in 0..16 {
            let a = f64::from(i);
            let b = f64::from(j);
            let q0 = axis_angle([a.sin(), a.cos(), 0.3], 0.1 + 0.13 * a);
            // Angles between q0 and q1 sweep 0 .. ~360 degrees of rotation.
            let q1 = axis_angle([(a + b).cos(), 0.5, (a * b).sin()], 0.4 * b - 2.0);
            let lib = library(rotation_track(q0, q1));
            let gq0 = glam::Quat::from_array(q0);
            let gq1 = glam::Quat::from_array(q1);
            for time in [0.05f32, 0.3, 0.5, 0.61, 0.95] {
                let got = sample_raw(&lib, time);
                let want = slerp64(&q64(q0), &q64(q1), f64::from(time));
                for c in 0..4 {
                    let err = (f64::from(got[c]) - want[c]).abs();
                    worst_f64 = worst_f64.max(err);
                    // 2e-6 absolute vs f64 (see the top of the file).
                    assert!(
                        err <= 2e-6,
                        "pair ({i},{j}) at {time}: {got:?} vs f64 {want:?}"
                    );
                }
                // glam is an independent f32 implementation with other
                // choices: it slerps up to a dot of 1 - f32::EPSILON (we
                // nlerp above 0.9995; the two differ by up to ~1e-6 there),
                // does not renormalize, and uses std sin. Both should be
                // within a few 1e-7 of the truth elsewhere; 1e-5 leaves room
                // for those differences and still catches any formula error
                // (a wrong path or factor moves components by >= 1e-3).
                let g = gq0.slerp(gq1, time).to_array();
                for c in 0..4 {
                    let err = f64::from((got[c] - g[c]).abs());
                    worst_glam = worst_glam.max(err);
                    assert!(
                        err <= 1e-5,
                        "pair ({i},{j}) at {time}: {got:?} vs glam {g:?}"
                    );
                }
                pairs += 1;
            }
        }
    }
    println!("{pairs} slerps: max |err| vs f64 {worst_f64:e}, vs glam {worst_glam:e}");
}

// ---------------------------------------------------------------------------
// Single-key tracks.
// ---------------------------------------------------------------------------

#[test]
fn single_key_track_is_constant() {
    let rot = axis_angle([1.0, 1.0, 1.0], 0.7);
    let tracks = [
        Track::new(
            0,
            Property::Translation,
            Interpolation::Linear,
            [0.75],
            vec![1.5, -2.0, 0.1],
        ),
        Track::new(
            0,
            Property::Scale,
            Interpolation::Step,
            [0.0],
            vec![2.0, 2.0, 0.3],
        ),
        Track::new(
            0,
            Property::Rotation,
            Interpolation::Linear,
            [2.0],
            rot.to_vec(),
        ),
        Track::weights(0, 2, Interpolation::Linear, [0.25], vec![0.3, 0.7]),
    ];
    for track in tracks {
        let lib = library(track.clone());
        let want = Expect::Exact(track.values.clone());
        for time in [-1e30f32, -3.0, -1.0, 0.0, 0.25, 0.75, 2.0, 5.0, 1e30] {
            check(
                &format!("{:?} single key at {time}", track.property),
                &sample_raw(&lib, time),
                &want,
            );
        }
        for wrap in [WrapMode::Clamp, WrapMode::Repeat, WrapMode::PingPong] {
            for time in [-7.5f64, -1.0, 0.0, 0.3, 1e9] {
                check(
                    &format!("{:?} single key, {wrap:?} at {time}", track.property),
                    &sample_instance(&lib, time, wrap),
                    &want,
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Wrap modes.
// ---------------------------------------------------------------------------

#[test]
fn clip_time_by_hand() {
    use WrapMode::{Clamp, PingPong, Repeat};
    // (mode, playback time, duration, clip time worked out by hand)
    let cases: &[(WrapMode, f64, f32, f32)] = &[
        // Clamp: unchanged (rounded to f32), saturated to the finite f32 range.
        (Clamp, 0.3, 2.0, 0.3),
        (Clamp, -0.5, 2.0, -0.5),
        (Clamp, 2.75, 2.0, 2.75),
        (Clamp, -5.0, 2.0, -5.0),
        (Clamp, 1e9, 2.0, 1e9),
        (Clamp, 1e300, 2.0, f32::MAX),
        (Clamp, -1e300, 2.0, f32::MIN),
        // Repeat, d = 2.5: t - floor(t / 2.5) * 2.5.
        (Repeat, 0.0, 2.5, 0.0),
        (Repeat, 1.0, 2.5, 1.0),
        (Repeat, 2.5, 2.5, 0.0),
        (Repeat, 3.0, 2.5, 0.5),
        (Repeat, 5.0, 2.5, 0.0),
        (Repeat, 7.25, 2.5, 2.25),
        (Repeat, -0.5, 2.5, 2.0),
        (Repeat, -2.5, 2.5, 0.0),
        (Repeat, -5.0, 2.5, 0.0),
        (Repeat, -6.0, 2.5, 1.5),
        // PingPong, d = 2 (period 4): p = t mod 4; p if p <= 2 else 4 - p.
        (PingPong, 0.0, 2.0, 0.0),
        (PingPong, 1.5, 2.0, 1.5),
        (PingPong, 2.0, 2.0, 2.0), // the turn-around: the end, once
        (PingPong, 2.5, 2.0, 1.5),
        (PingPong, 3.0, 2.0, 1.0),
        (PingPong, 4.0, 2.0, 0.0),
        (PingPong, 5.0, 2.0, 1.0),
        (PingPong, 6.0, 2.0, 2.0),
        (PingPong, -1.0, 2.0, 1.0),
        (PingPong, -2.0, 2.0, 2.0),
        (PingPong, -3.5, 2.0, 0.5),
        // Zero duration (a single key at 0): repeat and ping-pong give 0.
        (Repeat, 12.0, 0.0, 0.0),
        (PingPong, 12.0, 0.0, 0.0),
    ];
    assert_clip_times(cases);
}

/// Checks `mode.clip_time(time, duration)` bit for bit against `want` for
/// every `(mode, time, duration, want)` of `cases`.
fn assert_clip_times(cases: &[(WrapMode, f64, f32, f32)]) {
    for &(mode, time, duration, want) in cases {
        let got = mode.clip_time(time, duration);
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "{mode:?}.clip_time({time}, {duration}) = {got}, expected {want}"
        );
    }
}

/// Times far from zero stay exact in repeat and ping-pong: the host wraps in
/// f64 (where 1e9 + 0.25 is exact) before rounding to f32 (where it is not:
/// the f32 spacing near 1e9 is 64).
#[test]
fn huge_times_stay_exact() {
    use WrapMode::{PingPong, Repeat};
    // d = 2.5 divides 1e9 exactly (4e8 periods); d = 2 for ping-pong divides
    // it too (period 4, 2.5e8 periods). T - 1e9 is exact in f64 (Sterbenz),
    // so these expectations are exact f64 arithmetic rounded once to f32.
    let big = 1e9f64;
    let cases: &[(WrapMode, f64, f32, f64)] = &[
        (Repeat, big, 2.5, 0.0),
        (Repeat, big + 0.25, 2.5, 0.25),
        (Repeat, big + 1.3, 2.5, (big + 1.3) - big),
        (Repeat, big + 2.5, 2.5, 0.0),
        (Repeat, -big + 0.25, 2.5, 0.25),
        (Repeat, -big - 0.5, 2.5, 2.0),
        (PingPong, big + 0.5, 2.0, 0.5),
        (PingPong, big + 2.0, 2.0, 2.0),
        (PingPong, big + 3.0, 2.0, 1.0),
        (PingPong, big + 3.7, 2.0, 4.0 - ((big + 3.7) - big)),
        (PingPong, -big - 0.5, 2.0, 0.5),
    ];
    // 1e9 + 0.25 is not representable in f32: the reason for f64.
    assert_eq!(1e9f32 + 0.25, 1e9f32);
    let rounded: Vec<_> = cases
        .iter()
        .map(|&(mode, time, duration, want)| (mode, time, duration, want as f32))
        .collect();
    assert_clip_times(&rounded);
}

/// Wrap modes through instances: the resolved clip time and the sampled
/// value both match the hand-computed clip time. The clip's keys start
/// after 0, so repeat maps part of each period before the first key.
#[test]
fn wrap_modes_through_instances() {
    use WrapMode::{Clamp, PingPong, Repeat};
    // [0, 1, -1] -> [8, 1, 7] on keys 0.5 .. 2.5; duration 2.5.
    let track = Track::new(
        0,
        Property::Translation,
        Interpolation::Linear,
        [0.5, 2.5],
        vec![0.0, 1.0, -1.0, 8.0, 1.0, 7.0],
    );
    let lib = library(track.clone());
    let cases: &[(WrapMode, f64, f32)] = &[
        (Clamp, -3.0, -3.0),
        (Clamp, 0.25, 0.25),
        (Clamp, 1.5, 1.5),
        (Clamp, 2.5, 2.5),
        (Clamp, 100.0, 100.0),
        (Repeat, 1.5, 1.5),
        (Repeat, 2.5, 0.0),
        (Repeat, 3.0, 0.5),
        (Repeat, 4.0, 1.5),
        (Repeat, 5.0, 0.0),
        (Repeat, -1.0, 1.5),
        (Repeat, -2.5, 0.0),
        (Repeat, 1e9 + 1.5, 1.5),
        (PingPong, 1.0, 1.0),
        (PingPong, 2.5, 2.5),
        (PingPong, 3.0, 2.0),
        (PingPong, 4.5, 0.5),
        (PingPong, 5.0, 0.0),
        (PingPong, -1.0, 1.0),
        (PingPong, 1e9 + 3.0, 2.0),
    ];
    for &(wrap, time, clip_time) in cases {
        let inst = Instance::new(0, time).with_wrap(wrap);
        let resolved = resolve_instances(&lib, &[inst]).expect("valid instance");
        assert_eq!(
            resolved[0].time.to_bits(),
            clip_time.to_bits(),
            "{wrap:?} at {time}: clip time {}, expected {clip_time}",
            resolved[0].time
        );
        check(
            &format!("{wrap:?} instance at {time}"),
            &sample_instance(&lib, time, wrap),
            &oracle(&track, clip_time),
        );
    }
    // By hand: repeat at 4.0 -> clip time 1.5 -> t = 0.5 -> [4, 1, 3].
    assert_eq!(sample_instance(&lib, 4.0, Repeat), [4.0, 1.0, 3.0]);
}

/// Several instances of several clips in one call write their own blocks of
/// the output (stride = widest clip), in track order.
#[test]
fn many_instances_output_layout() {
    let a = Track::new(
        0,
        Property::Translation,
        Interpolation::Linear,
        [0.0, 1.0],
        vec![0.0, 0.0, 0.0, 1.0, 2.0, 3.0],
    );
    let b = Track::weights(
        1,
        2,
        Interpolation::Step,
        [0.0, 1.0],
        vec![5.0, 6.0, 7.0, 8.0],
    );
    let c = Track::new(
        2,
        Property::Scale,
        Interpolation::Linear,
        [0.0, 4.0],
        vec![1.0, 1.0, 1.0, 3.0, 5.0, 9.0],
    );
    let lib = AnimationLibrary::new(vec![Clip::new("ab", vec![a, b]), Clip::new("c", vec![c])])
        .expect("valid");
    assert_eq!(lib.output_stride(), 5);
    let out = cpu::sample(
        &lib,
        &[
            Instance::new(1, 1.0),
            Instance::new(0, 0.5),
            Instance::new(0, 7.0).with_wrap(WrapMode::Repeat), // clip time 0
        ],
    )
    .expect("valid");
    #[rustfmt::skip]
    let want = [
        1.5, 2.0, 3.0, 0.0, 0.0, // clip c at 1: 1 + (v1 - 1) / 4; unwritten 0s
        0.5, 1.0, 1.5, 5.0, 6.0, // clip ab at 0.5: lerp, STEP key 0
        0.0, 0.0, 0.0, 5.0, 6.0, // clip ab at 7 mod 1 = 0: key 0
    ];
    assert_eq!(out, want);
}

// ---------------------------------------------------------------------------
// The polynomial sin and acos.
// ---------------------------------------------------------------------------

/// `kf_sin` over its domain [0, pi/2] against f64 `sin`. Measured here (a
/// scratch f64 evaluation of the same polynomial): the Taylor remainder is
/// 5.6e-8 ((pi/2)^13 / 13!), the f32 rounding of the coefficients brings it
/// to 7.1e-8, and evaluating in f32 (the rounding of x^2 and of five Horner
/// steps and the final product, on values up to 1.57 with ulp 6e-8 to
/// 1.2e-7) to 2.03e-7 at x = 1.5555, about 3.4 ulp of the result. Bound
/// 2.5e-7: tight enough that a wrong or missing coefficient (the x^11 term
/// alone is 3.7e-6 at pi/2) fails.
#[test]
fn kf_sin_accuracy() {
    let n = 200_000;
    let mut worst = (0.0f64, 0.0f32);
    for i in 0..=n {
        let x =
            (std::f32::consts::FRAC_PI_2 * (i as f32 / n as f32)).min(std::f32::consts::FRAC_PI_2);
        let err = (f64::from(cpu::quat::kf_sin(x)) - f64::from(x).sin()).abs();
        if err > worst.0 {
            worst = (err, x);
        }
    }
    println!("kf_sin: max |err| = {:e} at x = {}", worst.0, worst.1);
    assert!(
        worst.0 < 2.5e-7,
        "kf_sin error {:e} at {}",
        worst.0,
        worst.1
    );
    assert_eq!(cpu::quat::kf_sin(0.0), 0.0);
}

/// `kf_acos` over its domain [0, 1] against f64 `acos`. Measured here: A&S
/// 4.4.46 is within 2.2e-8 in exact arithmetic; rounding its coefficients to
/// f32 (1.5707963050 becomes 1.5707963705) brings that to 7.5e-8, and the f32
/// evaluation (eight Horner steps, sqrt and the product, on results up to
/// pi/2 where the ulp is 1.2e-7) to 2.36e-7 at x = 0.1336, about 2 ulp.
/// Bound 3e-7: a wrong coefficient moves it by far more (the c^7 term is
/// 1.3e-3 at c = 1 before the sqrt factor). Inputs outside [0, 1] are
/// clamped.
#[test]
fn kf_acos_accuracy() {
    let n = 200_000;
    let mut worst = (0.0f64, 0.0f32);
    let mut xs: Vec<f32> = (0..=n).map(|i| i as f32 / n as f32).collect();
    // Near 1, where acos is steep: the last 1000 f32s below 1.
    xs.extend((1..1000).map(|k| f32::from_bits(1.0f32.to_bits() - k)));
    for x in xs {
        let err = (f64::from(cpu::quat::kf_acos(x)) - f64::from(x).acos()).abs();
        if err > worst.0 {
            worst = (err, x);
        }
    }
    println!("kf_acos: max |err| = {:e} at x = {}", worst.0, worst.1);
    assert!(worst.0 < 3e-7, "kf_acos error {:e} at {}", worst.0, worst.1);
    assert_eq!(cpu::quat::kf_acos(1.0), 0.0);
    assert_eq!(cpu::quat::kf_acos(1.5), 0.0);
    assert_eq!(cpu::quat::kf_acos(-0.5), cpu::quat::kf_acos(0.0));
}
