//! Compressed clips through the public API: the compressor's bound on
//! generated clips (motion-capture-like, near-opposite quaternions,
//! CUBICSPLINE, morph weights, pointers) measured here independently, the
//! same relative bound at two scales, and the animator posing a
//! compressed library as the CPU twin does (run on Vulkan and on GL by
//! CI). The tests that build the compressed format by hand run inside the
//! crate (`src/tests/compressed.rs`).

#[path = "common/compressed_clips.rs"]
mod clips;
mod common;
#[path = "../examples/common/mocap.rs"]
mod mocap;

use clips::{mixed_clips, probe_times, sample_at};
use glam::Mat4;
use keyframe_gpu::compress::{CompressOptions, Encoding};
use keyframe_gpu::{cpu, AnimationLibrary, BoundLibrary, Clip, Instance, Property, WrapMode};
use mocap::{mocap_clip, skeleton, Rng};

// ------------------------------------------------------------ the bound

/// The largest displacement of a node's origin or of its virtual points
/// at `d` along its axes between two poses, over every node and every key
/// and midpoint of `clip`: the bound's measure, computed here from the
/// twin's world matrices, independently of the compressor.
fn world_error(raw: &BoundLibrary, lossy: &BoundLibrary, c: u32, d: f64) -> f64 {
    let clip = &raw.library().clips()[c as usize];
    let mut times: Vec<f32> = Vec::new();
    for t in &clip.tracks {
        times.extend_from_slice(&t.times);
        for w in t.times.windows(2) {
            times.push(w[0] + 0.5 * (w[1] - w[0]));
        }
    }
    let instances: Vec<Instance> = times
        .iter()
        .map(|&t| Instance::new(c, f64::from(t)).with_wrap(WrapMode::Clamp))
        .collect();
    let a = cpu::poses(raw, &instances).unwrap();
    let b = cpu::poses(lossy, &instances).unwrap();
    let mut worst = 0.0f64;
    for i in 0..instances.len() as u32 {
        for n in 0..raw.rig().nodes().len() as u32 {
            let (ga, gb): (Mat4, Mat4) = (a.world(i, n).unwrap(), b.world(i, n).unwrap());
            for p in [[0.0, 0.0, 0.0], [d, 0.0, 0.0], [0.0, d, 0.0], [0.0, 0.0, d]] {
                let p = glam::DVec3::from_array(p);
                let pa = ga.as_dmat4().transform_point3(p);
                let pb = gb.as_dmat4().transform_point3(p);
                worst = worst.max((pa - pb).length());
            }
        }
    }
    worst
}

/// Generated motion-capture-like clips compressed at the default bound
/// hold it at every key and midpoint, measured here; the report agrees,
/// and the memory is a fraction of the uncompressed library's.
#[test]
fn compressed_mocap_clips_hold_the_default_bound() {
    let (rig, rest) = skeleton(24, 1.0);
    let mut rng = Rng::new(7);
    let clips: Vec<Clip> = (0..2)
        .map(|i| mocap_clip(&mut rng, &format!("take{i}"), &rest, 1.0, 90, 0.003))
        .collect();
    let raw = AnimationLibrary::new(clips).unwrap().bind(&rig).unwrap();
    let (lossy, report) = raw.compress(&CompressOptions::default()).unwrap();
    let diagonal = keyframe_gpu::compress::rest_diagonal(&rig);
    assert!((report.bound / (5.6e-5 * diagonal) - 1.0).abs() < 1e-6);
    assert!((report.distance / (0.017 * diagonal) - 1.0).abs() < 1e-6);
    for c in 0..2 {
        let e = world_error(&raw, &lossy, c, report.distance);
        assert!(
            e <= report.bound,
            "clip {c}: error {e} over the bound {}",
            report.bound
        );
        assert!(
            e <= report.max_error + 1e-12,
            "the report's {} under {e}",
            report.max_error
        );
    }
    assert!(report.max_error <= report.bound);
    assert!(report.ratio() > 3.0, "ratio {}", report.ratio());
    assert_eq!(report.compressed_bytes, lossy.library().stored_bytes());
    // Rotations are framed or smallest-three, at most 48 bits a key (or
    // four components where smallest-three needs more than 15 bits);
    // constant translations and scales one key. These joints swing about
    // one axis each: most rotations take their own frame.
    let mut framed = 0;
    let mut rotations = 0;
    for (t, tr) in report.tracks[0].iter().enumerate() {
        let property = raw.library().clips()[0].tracks[t].property;
        if property == Property::Scale || (property == Property::Translation && t > 1) {
            assert_eq!(tr.keys, 1, "track {t}: {tr:?}");
        }
        if property == Property::Rotation {
            rotations += 1;
            assert!(tr.uniform, "track {t}: {tr:?}");
            match tr.encoding {
                Encoding::Framed => {
                    framed += 1;
                    assert!(tr.bits <= 48, "track {t}: {tr:?}");
                }
                Encoding::SmallestThree => assert!(tr.bits <= 15, "track {t}: {tr:?}"),
                Encoding::Vector => {}
                Encoding::Raw => panic!("track {t} stored raw: {tr:?}"),
            }
        }
    }
    assert!(
        2 * framed > rotations,
        "{framed} of {rotations} rotations framed"
    );
}

/// The same skeleton and motion in metres and in centimetres compresses
/// to the same bits: the bound is relative to the rig's size.
#[test]
fn the_bound_is_relative_to_the_rig() {
    let mut bits = Vec::new();
    for scale in [1.0f32, 100.0] {
        let (rig, rest) = skeleton(12, scale);
        let clip = mocap_clip(&mut Rng::new(3), "take", &rest, scale, 45, 0.003);
        let raw = AnimationLibrary::new(vec![clip])
            .unwrap()
            .bind(&rig)
            .unwrap();
        let (lossy, report) = raw.compress(&CompressOptions::default()).unwrap();
        assert!(world_error(&raw, &lossy, 0, report.distance) <= report.bound);
        bits.push(
            report.tracks[0]
                .iter()
                .map(|t| (t.encoding, t.bits, t.keys))
                .collect::<Vec<_>>(),
        );
    }
    let same = bits[0].iter().zip(&bits[1]).filter(|(a, b)| a == b).count();
    // Grids are powers of two: a track near a step's edge may take one
    // more or one less bit at the other scale.
    assert!(
        same * 10 >= bits[0].len() * 8,
        "{same} of {} tracks alike",
        bits[0].len()
    );
}

/// Every kind of track (near-opposite quaternions, STEP rotations,
/// CUBICSPLINE rotations and vectors, morph weights, pointers) holds the
/// bound when bound to a rig, and a tighter one when the bound is
/// tighter; the value-bound tracks stay within their own tolerance.
#[test]
fn every_track_kind_holds_the_bound() {
    let (rig, clips) = mixed_clips(&mut Rng::new(2));
    let raw = AnimationLibrary::new(clips.clone())
        .unwrap()
        .bind(&rig)
        .unwrap();
    for bound in [5.6e-5f32, 1e-3] {
        let options = CompressOptions::with_bound(bound);
        let (lossy, report) = raw.compress(&options).unwrap();
        for c in 0..clips.len() as u32 {
            let e = world_error(&raw, &lossy, c, report.distance);
            assert!(
                e <= report.bound,
                "bound {bound}, clip {c}: {e} > {}",
                report.bound
            );
        }
        // Value-bound tracks (weights, pointers): each within its own
        // tolerance at every probe time.
        for (c, clip) in clips.iter().enumerate() {
            let times = probe_times(clip);
            let a = sample_at(raw.library(), c as u32, &times);
            let b = sample_at(lossy.library(), c as u32, &times);
            let stride = raw.library().output_stride() as usize;
            for (t, track) in clip.tracks.iter().enumerate() {
                if !matches!(track.property, Property::Weights | Property::Pointer) {
                    continue;
                }
                let (o, w) = raw.library().track_output(c as u32, t as u32).unwrap();
                let largest = track.values.iter().fold(0.0f32, |m, v| m.max(v.abs()));
                let tol = f64::from(bound) * f64::from(largest) + 1e-9;
                for (i, time) in times.iter().enumerate() {
                    for k in 0..w as usize {
                        let at = i * stride + o as usize + k;
                        let d = (f64::from(a[at]) - f64::from(b[at])).abs();
                        assert!(d <= tol, "clip {c} track {t} time {time}: {d} > {tol}");
                    }
                }
            }
        }
    }
}

/// Without a rig, every track is held to its value bound; constant and
/// exactly linear tracks lose their keys.
#[test]
fn a_library_without_a_rig_holds_value_bounds() {
    let (_, clips) = mixed_clips(&mut Rng::new(4));
    let plain = AnimationLibrary::new(clips.clone()).unwrap();
    let (lossy, report) = plain.compress(&CompressOptions::default()).unwrap();
    assert!(report.max_error <= report.bound, "{report:?}");
    let smooth = &report.tracks[1];
    assert_eq!(smooth[0].keys, 1, "constant rotation: {:?}", smooth[0]);
    assert_eq!(smooth[1].keys, 2, "a line: {:?}", smooth[1]);
    assert!(!smooth[1].uniform);
    for (c, clip) in clips.iter().enumerate() {
        let times = probe_times(clip);
        let a = sample_at(&plain, c as u32, &times);
        let b = sample_at(&lossy, c as u32, &times);
        let stride = plain.output_stride() as usize;
        for (t, track) in clip.tracks.iter().enumerate() {
            let (o, w) = plain.track_output(c as u32, t as u32).unwrap();
            for i in 0..times.len() {
                let x = &a[i * stride + o as usize..][..w as usize];
                let y = &b[i * stride + o as usize..][..w as usize];
                if track.property == Property::Rotation {
                    let angle = angle_between(x, y);
                    assert!(angle <= 5.6e-5, "clip {c} track {t}: {angle} rad");
                } else {
                    let largest = track.values.iter().fold(0.0f32, |m, v| m.max(v.abs()));
                    for (p, q) in x.iter().zip(y) {
                        let d = (f64::from(*p) - f64::from(*q)).abs();
                        assert!(
                            d <= 5.6e-5 * f64::from(largest) + 1e-9,
                            "clip {c} track {t}: {d}"
                        );
                    }
                }
            }
        }
    }
}

/// The angle between two rotations given as quaternions of either sign,
/// each normalized in f64: `4 asin(|a - b| / 2)` for the nearer sign (an
/// `acos` of the dot product loses small angles to rounding).
fn angle_between(a: &[f32], b: &[f32]) -> f64 {
    let unit = |q: &[f32]| {
        let v: Vec<f64> = q.iter().map(|&x| f64::from(x)).collect();
        let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.into_iter().map(|x| x / n).collect::<Vec<f64>>()
    };
    let (a, b) = (unit(a), unit(b));
    let dot: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    let s = if dot < 0.0 { -1.0 } else { 1.0 };
    let d = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - s * y).powi(2))
        .sum::<f64>()
        .sqrt();
    4.0 * (d / 2.0).min(1.0).asin()
}

// ------------------------------------------------------------ GPU

/// The animator poses a compressed bound library as the twin does.
#[test]
fn gpu_poses_a_compressed_library_as_the_twin() {
    let Some(h) = common::gpu("gpu_poses_a_compressed_library_as_the_twin") else {
        return;
    };
    let (rig, rest) = skeleton(16, 1.0);
    let mut rng = Rng::new(11);
    let takes: Vec<Clip> = (0..2)
        .map(|i| mocap_clip(&mut rng, &format!("t{i}"), &rest, 1.0, 40, 0.003))
        .collect();
    let raw = AnimationLibrary::new(takes).unwrap().bind(&rig).unwrap();
    let (bound, _) = raw.compress(&CompressOptions::default()).unwrap();
    let instances: Vec<Instance> = (0..100)
        .map(|i| Instance::new(i % 2, f64::from(i) * 0.013).with_wrap(WrapMode::Repeat))
        .collect();
    let mut animator = keyframe_gpu::Animator::new(&h.device, &h.queue, &bound, 100).unwrap();
    animator.set_instances(&h.queue, &instances).unwrap();
    let mut encoder = h.device.create_command_encoder(&Default::default());
    animator.record(&mut encoder);
    h.queue.submit([encoder.finish()]);
    let got = animator.read_back(&h.device, &h.queue).unwrap();
    let want = cpu::poses(&bound, &instances).unwrap();
    for i in 0..100 {
        for n in 0..rig.nodes().len() as u32 {
            let (a, b) = (got.world(i, n).unwrap(), want.world(i, n).unwrap());
            let d = keyframe_gpu::compare::max_abs_diff(&a.to_cols_array(), &b.to_cols_array());
            assert!(d <= 1e-4, "instance {i} node {n}: {d}");
        }
    }
}
