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
use keyframe_gpu::{
    cpu, AnimationLibrary, BoundLibrary, Clip, Instance, Interpolation, Property, Track, WrapMode,
};
use mocap::{axis_angle, mocap_clip, skeleton, Rng};

// ------------------------------------------------------------ the bound

/// The diagonal of the bounding box of a rig's node origins in the rest
/// pose, for a rig of translations alone (as `skeleton` makes): each
/// origin the sum of the rest translations from the root, in `f64`.
fn rest_diagonal(rig: &keyframe_gpu::Rig) -> f64 {
    let nodes = rig.nodes();
    let origin = |mut n: usize| {
        let mut at = glam::DVec3::ZERO;
        loop {
            assert_eq!(nodes[n].rotation, [0.0, 0.0, 0.0, 1.0]);
            at += glam::Vec3::from(nodes[n].translation).as_dvec3();
            match nodes[n].parent {
                Some(p) => n = p as usize,
                None => return at,
            }
        }
    };
    let origins: Vec<glam::DVec3> = (0..nodes.len()).map(origin).collect();
    let lo = origins.iter().fold(glam::DVec3::INFINITY, |a, &b| a.min(b));
    let hi = origins
        .iter()
        .fold(glam::DVec3::NEG_INFINITY, |a, &b| a.max(b));
    (hi - lo).length()
}

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
    let diagonal = rest_diagonal(&rig);
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
    assert_within_value_bounds(&plain, &lossy, &clips);
}

/// `lossy` samples every track of `clips` within the default value bound
/// of `plain` at each clip's probe times: rotations within 5.6e-5 rad,
/// other values within 5.6e-5 of the track's largest magnitude.
fn assert_within_value_bounds(plain: &AnimationLibrary, lossy: &AnimationLibrary, clips: &[Clip]) {
    let stride = plain.output_stride() as usize;
    for (c, clip) in clips.iter().enumerate() {
        let times = probe_times(clip);
        let a = sample_at(plain, c as u32, &times);
        let b = sample_at(lossy, c as u32, &times);
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
                        let tol = 5.6e-5 * f64::from(largest) + 1e-9;
                        assert!(d <= tol, "clip {c} track {t}: {d}");
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

// ------------------------------------------------------------ size

/// Clips of tiny tracks (one to three keys, where a block's header would
/// outweigh the values), as small real files have them: per node `n` of
/// the first 6 of a 12-node chain a 2-key LINEAR rotation, a 3-key STEP
/// translation on irregular times, a constant (equal keys) 3-key LINEAR
/// scale, and a 2-key CUBICSPLINE translation of node `n + 6`; two clips,
/// so that lists of times are shared within and across clips.
fn tiny_clips(rng: &mut Rng) -> Vec<Clip> {
    (0..2)
        .map(|c| {
            let two: std::sync::Arc<[f32]> = std::sync::Arc::from([0.0f32, 0.5 + c as f32]);
            let three: std::sync::Arc<[f32]> = std::sync::Arc::from([0.0f32, 0.2, 0.9]);
            let mut tracks = Vec::new();
            for n in 0..6u32 {
                let q0 = axis_angle([0.0, 0.0, 1.0], 0.3 * rng.signed());
                let q1 = axis_angle([1.0, 0.0, 0.0], 0.3 * rng.signed());
                tracks.push(Track::new(
                    n,
                    Property::Rotation,
                    Interpolation::Linear,
                    two.clone(),
                    [q0, q1].concat(),
                ));
                let t: Vec<f32> = (0..9).map(|_| 0.3 * rng.signed()).collect();
                tracks.push(Track::new(
                    n,
                    Property::Translation,
                    Interpolation::Step,
                    three.clone(),
                    t,
                ));
                tracks.push(Track::new(
                    n,
                    Property::Scale,
                    Interpolation::Linear,
                    three.clone(),
                    [1.0, 1.0, 1.0].repeat(3),
                ));
                // [in, value, out] per key.
                let v: Vec<f32> = (0..18).map(|_| 0.2 * rng.signed()).collect();
                tracks.push(Track::new(
                    n + 6,
                    Property::Translation,
                    Interpolation::CubicSpline,
                    two.clone(),
                    v,
                ));
            }
            Clip::new(format!("tiny{c}"), tracks)
        })
        .collect()
}

/// A library of tiny tracks is never stored larger than raw: every
/// track's bytes are at most its raw values' (`4 keys width` bytes, three
/// elements a key for CUBICSPLINE), a track kept whole costs exactly those
/// (no header), a constant one the bytes of its one key, and the library
/// at most the uncompressed one's (ratio at least 1), which is its
/// distinct lists of times and its values: `4 (2 + 3 + 2)` bytes of times
/// (the 2-key lists differ between the clips) and `2 * 6 * 4 (8 + 9 + 9 +
/// 18)` of values. Posed, it stays within the bound of the uncompressed
/// library, with a rig and without.
#[test]
fn tiny_tracks_never_take_more_than_raw() {
    let (rig, _) = skeleton(12, 1.0);
    let clips = tiny_clips(&mut Rng::new(21));
    let plain = AnimationLibrary::new(clips.clone()).unwrap();
    let values = 2 * 6 * 4 * (8 + 9 + 9 + 18);
    assert_eq!(plain.stored_bytes(), 4 * (2 + 3 + 2) + values);
    let raw = plain.bind(&rig).unwrap();
    let (lossy, report) = raw.compress(&CompressOptions::default()).unwrap();
    let (unbound, unbound_report) = plain.compress(&CompressOptions::default()).unwrap();
    for (name, report, library) in [
        ("bound", &report, lossy.library()),
        ("no rig", &unbound_report, &unbound),
    ] {
        assert_eq!(report.uncompressed_bytes, plain.stored_bytes(), "{name}");
        assert_eq!(report.compressed_bytes, library.stored_bytes(), "{name}");
        assert!(
            report.compressed_bytes <= report.uncompressed_bytes,
            "{name}: {} > {}",
            report.compressed_bytes,
            report.uncompressed_bytes
        );
        assert!(report.ratio() >= 1.0, "{name}: ratio {}", report.ratio());
        for (c, clip) in clips.iter().enumerate() {
            for (t, (track, tr)) in clip.tracks.iter().zip(&report.tracks[c]).enumerate() {
                let per_key = match track.interpolation {
                    Interpolation::CubicSpline => 3,
                    _ => 1,
                };
                let raw_bytes = 4 * track.times.len() as u64 * u64::from(track.width) * per_key;
                assert_eq!(tr.raw_bytes, raw_bytes, "{name} clip {c} track {t}");
                assert!(
                    tr.bytes <= tr.raw_bytes,
                    "{name} clip {c} track {t}: {tr:?}"
                );
                if tr.verbatim && tr.keys == tr.source_keys {
                    assert_eq!(tr.bytes, raw_bytes, "{name} clip {c} track {t}: {tr:?}");
                }
                if tr.keys == 1 {
                    assert!(tr.verbatim, "{name} clip {c} track {t}: {tr:?}");
                    let one = 4 * u64::from(track.width) * per_key;
                    assert_eq!(tr.bytes, one, "{name} clip {c} track {t}: {tr:?}");
                }
                if track.property == Property::Scale {
                    assert_eq!(tr.keys, 1, "{name}: constant scale {tr:?}");
                }
            }
        }
    }
    // A 2-key rotation is 32 bytes raw; the smallest block (a 16-byte
    // header, 16 bytes of offsets and a word of elements, padded to 16
    // bytes) is 48: every one stays whole and verbatim.
    for tracks in &report.tracks {
        for tr in tracks.iter().step_by(4) {
            assert!(tr.verbatim && tr.keys == 2 && tr.bytes == 32, "{tr:?}");
        }
    }
    for c in 0..2 {
        let e = world_error(&raw, &lossy, c, report.distance);
        assert!(e <= report.bound, "clip {c}: {e} > {}", report.bound);
    }
    // Without a rig: each value within its value bound.
    assert_within_value_bounds(&plain, &unbound, &clips);
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
            let d = common::track_diff::max_abs_diff(&a.to_cols_array(), &b.to_cols_array());
            assert!(d <= 1e-4, "instance {i} node {n}: {d}");
        }
    }
}
