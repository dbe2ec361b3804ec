//! Compressed clips built by hand in the crate's own format (which only
//! the compressor makes outside the crate): the format decoded against
//! keys packed here (the CPU twin, against values computed here in f64),
//! a lossless compressed library against the uncompressed one bit for
//! bit, hostile compressed data refused, the GPU against the twin on
//! every sampler plan (run on Vulkan and on GL by CI), and baked runs of
//! uniform key times. The tests of the compressor through the public API
//! are `tests/compressed.rs`; the helpers both use,
//! `tests/common/compressed_clips.rs`.

use crate::tests::Derived;
use std::sync::Arc;

use super::common;
#[path = "../../tests/common/compressed_clips.rs"]
mod clips;
#[path = "../../examples/common/mocap.rs"]
mod mocap;

use clips::{mixed_clips, probe_times, sample_at};
use keyframe_gpu::compress::format::{BitWriter, CompressedTrack, Frame, KeyTimes, Quantized};
use keyframe_gpu::compress::{CompressError, CompressOptions, Encoding};
use keyframe_gpu::{
    cpu, AnimationLibrary, Clip, DeviceProfile, Error, Instance, Interpolation, Plan,
    PointerTarget, PointerType, Property, SamplerPlan, Track,
};
use mocap::{axis_angle, mocap_clip, skeleton, Rng};

/// A one-track library of `track` compressed as `compressed`.
fn one_track(track: Track, compressed: CompressedTrack) -> AnimationLibrary {
    AnimationLibrary::from_compressed(vec![Clip::new("c", vec![track])], vec![vec![compressed]])
        .unwrap()
}

fn close(a: f64, b: f32, tol: f64, what: &str) {
    assert!(
        (a - f64::from(b)).abs() <= tol,
        "{what}: expected {a}, got {b}"
    );
}

// ------------------------------------------------------------ hand-packed

/// Three keys of a 3-wide translation at 4 keys per second, on a grid of
/// 1/4 with 5-bit fields against offsets (-8, 0, 4): every field written
/// by hand, bit by bit, LSB first.
#[test]
fn hand_packed_vector_keys_decode_to_their_grid_values() {
    // Grid indices per key and component, offsets subtracted.
    let fields: [[u32; 3]; 3] = [[0, 31, 1], [8, 0, 2], [16, 5, 30]];
    let mut bits: Vec<bool> = Vec::new();
    for key in fields {
        for f in key {
            for b in 0..5 {
                bits.push(f >> b & 1 == 1);
            }
        }
    }
    let mut words = vec![0u32; bits.len().div_ceil(32)];
    for (i, &b) in bits.iter().enumerate() {
        words[i / 32] |= u32::from(b) << (i % 32);
    }
    assert_eq!(words.len(), 2, "45 bits");
    let offsets = [-8, 0, 4];
    let value = |k: usize, c: usize| f64::from(fields[k][c] as i32 + offsets[c]) * 0.25;
    let track = Track::new(
        0,
        Property::Translation,
        Interpolation::Linear,
        vec![0.5, 0.75, 1.0],
        vec![0.0; 9],
    );
    let compressed = CompressedTrack {
        times: KeyTimes::Uniform {
            start: 0.5,
            rate: 4.0,
            count: 3,
        },
        values: Quantized {
            encoding: Encoding::Vector,
            bits: 5,
            step: 0.25,
            offsets: offsets.to_vec(),
            frame: None,
            words,
        },
        tangents: None,
    };
    let library = one_track(track, compressed);
    // Before, on each key (u = (T - 0.5) * 4 exactly 0, 1, 2), between,
    // after: the grid values, exactly, and their blend.
    let times = [0.0, 0.5, 0.75, 1.0, 0.625, 0.9375, 9.0];
    let out = sample_at(&library, 0, &times);
    for c in 0..3 {
        for (i, k) in [(0, 0), (1, 0), (2, 1), (3, 2), (6, 2)] {
            assert_eq!(
                f64::from(out[3 * i + c]),
                value(k, c),
                "key {k}, component {c}"
            );
        }
        close(
            0.5 * value(0, c) + 0.5 * value(1, c),
            out[3 * 4 + c],
            1e-6,
            "between 0 and 1",
        );
        let t = 0.75;
        close(
            (1.0 - t) * value(1, c) + t * value(2, c),
            out[3 * 5 + c],
            1e-5,
            "between 1 and 2",
        );
    }
}

/// Writes smallest-three keys by hand: the dropped component's index and
/// sign, then the three others' fields.
fn smallest_three(keys: &[(u32, bool, [u32; 3])], bits: u32) -> Vec<u32> {
    let mut w = BitWriter::new();
    for (idx, negative, fields) in keys {
        w.push(*idx, 2);
        w.push(u32::from(*negative), 1);
        for f in fields {
            w.push(*f, bits);
        }
    }
    w.finish()
}

/// Two smallest-three keys of 10 bits on a grid of 2^-10 (one dropping w,
/// one dropping x, negative), then sampled on and between the keys and
/// compared with the quaternions rebuilt here in f64 and slerped.
#[test]
fn hand_packed_smallest_three_keys_decode_and_slerp() {
    let step = 1.0 / 1024.0;
    let offsets = [-100, -50, 0, -900];
    let keys = [(3u32, false, [100u32, 250, 300]), (0, true, [60, 50, 800])];
    let words = smallest_three(&keys, 10);
    // Key 0: x, y, z from fields; w = sqrt(1 - ...). Key 1: y, z, w from
    // fields; x = -sqrt(1 - ...).
    let grid = |f: u32, c: usize| f64::from(f as i32 + offsets[c]) * f64::from(step);
    let rebuilt = |(idx, negative, fields): (u32, bool, [u32; 3])| {
        let others: Vec<usize> = (0..4).filter(|&c| c != idx as usize).collect();
        let mut q = [0.0f64; 4];
        for (f, &c) in fields.iter().zip(&others) {
            q[c] = grid(*f, c);
        }
        let d = (1.0 - others.iter().map(|&c| q[c] * q[c]).sum::<f64>())
            .max(0.0)
            .sqrt();
        q[idx as usize] = if negative { -d } else { d };
        q
    };
    let q0 = rebuilt(keys[0]);
    let q1 = rebuilt(keys[1]);
    let track = identity_keys(Interpolation::Linear);
    let compressed = CompressedTrack {
        times: KeyTimes::List(Arc::from([0.0f32, 1.0])),
        values: Quantized {
            encoding: Encoding::SmallestThree,
            bits: 10,
            step,
            offsets: offsets.to_vec(),
            frame: None,
            words,
        },
        tangents: None,
    };
    let library = one_track(track, compressed);
    let out = sample_at(&library, 0, &[0.0, 1.0, 0.25, 0.5]);
    for c in 0..4 {
        close(q0[c], out[c], 1e-7, "key 0");
        close(q1[c], out[4 + c], 1e-7, "key 1");
    }
    // Shortest-path slerp in f64 (the keys are on opposite sides: the
    // second is negated).
    let dot: f64 = (0..4).map(|c| q0[c] * q1[c]).sum();
    let s = if dot < 0.0 { -1.0 } else { 1.0 };
    let theta = dot.abs().min(1.0).acos();
    for (i, t) in [(2usize, 0.25f64), (3, 0.5)] {
        let w0 = ((1.0 - t) * theta).sin();
        let w1 = (t * theta).sin();
        let q: Vec<f64> = (0..4).map(|c| w0 * q0[c] + w1 * s * q1[c]).collect();
        let n = q.iter().map(|x| x * x).sum::<f64>().sqrt();
        for c in 0..4 {
            close(q[c] / n, out[4 * i + c], 2e-6, "slerp");
        }
    }
}

/// The framed rotation of the track's keys, as written in the format:
/// two keys with fields of 6, 0 and 3 bits on a grid of 2^-8 against
/// offsets (-20, 5, -2), in the frame left = 90 degrees about z,
/// right = 90 degrees about x; rebuilt here in f64 as left * r * right.
#[test]
fn hand_packed_framed_keys_decode_in_their_frame() {
    let step = 1.0 / 256.0;
    let offsets = [-20, 5, -2];
    let bits = [6u32, 0, 3];
    let fields = [[50u32, 0, 7], [3, 0, 1]];
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let left = [0.0, 0.0, h, h];
    let right = [h, 0.0, 0.0, h];
    let mut w = BitWriter::new();
    for key in &fields {
        for c in [0, 2] {
            w.push(key[c], bits[c]);
        }
    }
    let hamilton = |a: [f64; 4], b: [f64; 4]| {
        [
            a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
            a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
            a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
            a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
        ]
    };
    let wide = |q: [f32; 4]| q.map(f64::from);
    let rebuilt = |key: [u32; 3]| {
        let v: Vec<f64> = (0..3)
            .map(|c| f64::from(key[c] as i32 + offsets[c]) * f64::from(step))
            .collect();
        let r = [
            v[0],
            v[1],
            v[2],
            (1.0 - v.iter().map(|x| x * x).sum::<f64>()).sqrt(),
        ];
        hamilton(hamilton(wide(left), r), wide(right))
    };
    let track = identity_keys(Interpolation::Step);
    let compressed = CompressedTrack {
        times: TWO_KEYS,
        values: Quantized {
            encoding: Encoding::Framed,
            bits: 9,
            step,
            offsets: offsets.to_vec(),
            frame: Some(Frame { left, right, bits }),
            words: w.finish(),
        },
        tangents: None,
    };
    let library = one_track(track, compressed);
    // STEP: key 0 on [0, 1), key 1 from 1 on.
    let out = sample_at(&library, 0, &[0.0, 0.5, 1.0, 3.0]);
    for (i, key) in [0usize, 0, 1, 1].into_iter().enumerate() {
        let q = rebuilt(fields[key]);
        for c in 0..4 {
            close(q[c], out[4 * i + c], 2e-7, &format!("sample {i}"));
        }
    }
    // The first key by hand: x = 30/256, y = 5/256, z = 5/256 in the frame.
    let r0 = [30.0 / 256.0, 5.0 / 256.0, 5.0 / 256.0];
    let w0 = (1.0f64 - r0.iter().map(|x| x * x).sum::<f64>()).sqrt();
    let q0 = hamilton(hamilton(wide(left), [r0[0], r0[1], r0[2], w0]), wide(right));
    assert!((0..4).all(|c| (q0[c] - f64::from(out[c])).abs() <= 2e-7));
}

/// A CUBICSPLINE translation of two keys: values and tangents each on a
/// grid of their own (2^-4 and 2^-2), packed by hand; the spline at
/// t = 0.5 against the glTF formula in f64.
#[test]
fn hand_packed_cubic_keys_use_their_tangents() {
    let vector = |fields: &[[u32; 3]], bits: u32| {
        let mut w = BitWriter::new();
        for key in fields {
            for f in key {
                w.push(*f, bits);
            }
        }
        w.finish()
    };
    let vf = [[1u32, 2, 3], [17, 0, 9]];
    let tf = [[0u32, 4, 7], [3, 3, 3], [5, 6, 1], [2, 0, 7]];
    let track = Track::new(
        0,
        Property::Translation,
        Interpolation::CubicSpline,
        vec![0.0, 2.0],
        vec![0.0; 18],
    );
    let (voff, toff) = ([0, -2, 4], [-3, -3, -3]);
    let compressed = CompressedTrack {
        times: KeyTimes::Uniform {
            start: 0.0,
            rate: 0.5,
            count: 2,
        },
        values: Quantized {
            encoding: Encoding::Vector,
            bits: 5,
            step: 0.0625,
            offsets: voff.to_vec(),
            frame: None,
            words: vector(&vf, 5),
        },
        tangents: Some(Quantized {
            encoding: Encoding::Vector,
            bits: 3,
            step: 0.25,
            offsets: toff.to_vec(),
            frame: None,
            words: vector(&tf, 3),
        }),
    };
    let library = one_track(track, compressed);
    let out = sample_at(&library, 0, &[0.0, 2.0, 1.0]);
    let v = |k: usize, c: usize| f64::from(vf[k][c] as i32 + voff[c]) * 0.0625;
    let tan = |e: usize, c: usize| f64::from(tf[e][c] as i32 + toff[c]) * 0.25;
    let (t, dt) = (0.5f64, 2.0f64);
    for c in 0..3 {
        assert_eq!(f64::from(out[c]), v(0, c));
        assert_eq!(f64::from(out[3 + c]), v(1, c));
        // out-tangent of key 0: element 1; in-tangent of key 1: element 2.
        let p = (2.0 * t.powi(3) - 3.0 * t * t + 1.0) * v(0, c)
            + dt * (t.powi(3) - 2.0 * t * t + t) * tan(1, c)
            + (-2.0 * t.powi(3) + 3.0 * t * t) * v(1, c)
            + dt * (t.powi(3) - t * t) * tan(2, c);
        close(p, out[6 + c], 1e-6, "spline");
    }
}

/// A morph-weights track of 6 targets (wider than 4: decoded component by
/// component) with a list of irregular times, and raw values.
#[test]
fn hand_packed_wide_weights_and_listed_times() {
    let fields: Vec<u32> = (0..18).map(|i| (i * 7 % 64) as u32).collect();
    let mut w = BitWriter::new();
    for f in &fields {
        w.push(*f, 6);
    }
    let step = 1.0 / 64.0;
    let track = Track::weights(
        0,
        6,
        Interpolation::Linear,
        vec![0.0, 0.3, 1.0],
        vec![0.0; 18],
    );
    let compressed = CompressedTrack {
        times: KeyTimes::List(Arc::from([0.0f32, 0.3, 1.0])),
        values: Quantized {
            encoding: Encoding::Vector,
            bits: 6,
            step,
            offsets: vec![0; 6],
            frame: None,
            words: w.finish(),
        },
        tangents: None,
    };
    let library = one_track(track, compressed);
    let out = sample_at(&library, 0, &[0.3, 0.65]);
    for c in 0..6 {
        let v = |k: usize| f64::from(fields[6 * k + c]) * f64::from(step);
        assert_eq!(f64::from(out[c]), v(1));
        let t = f64::from((0.65f32 - 0.3) / (1.0f32 - 0.3));
        close((1.0 - t) * v(1) + t * v(2), out[6 + c], 1e-6, "weights");
    }
    // The same keys raw: exactly the floats given.
    let values: Vec<f32> = (0..18).map(|i| i as f32 * 0.05).collect();
    let track = Track::weights(
        0,
        6,
        Interpolation::Step,
        vec![0.0, 0.3, 1.0],
        values.clone(),
    );
    let raw = CompressedTrack::lossless(&track);
    assert_eq!(raw.values.encoding, Encoding::Raw);
    let library = one_track(track, raw);
    let out = sample_at(&library, 0, &[0.5]);
    assert_eq!(&out[..6], &values[6..12]);
}

// ------------------------------------------------------------ lossless

/// Every track stored losslessly samples bit for bit as the uncompressed
/// library does: the raw decode and listed times change nothing.
#[test]
fn a_lossless_compressed_library_samples_bit_for_bit() {
    let (_, clips) = mixed_clips(&mut Rng::new(1));
    let plain = AnimationLibrary::new(clips.clone()).unwrap();
    let tracks = clips
        .iter()
        .map(|c| c.tracks.iter().map(CompressedTrack::lossless).collect())
        .collect();
    let packed = AnimationLibrary::from_compressed(clips.clone(), tracks).unwrap();
    assert!(packed.is_compressed() && !plain.is_compressed());
    for (c, clip) in clips.iter().enumerate() {
        let times = probe_times(clip);
        let a = sample_at(&plain, c as u32, &times);
        let b = sample_at(&packed, c as u32, &times);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
        assert_eq!(bits(&a), bits(&b), "clip {c}");
    }
}

// ------------------------------------------------------------ verbatim

/// Keys of unit quaternions about `axis`, one per time, at angles
/// `0.4 k + noise`.
fn turning(rng: &mut Rng, axis: [f32; 3], keys: usize) -> Vec<[f32; 4]> {
    (0..keys)
        .map(|k| axis_angle(axis, 0.4 * k as f32 + 0.2 * rng.signed()))
        .collect()
}

/// A clip of tracks stored verbatim beside two blocks, with the
/// compressed tracks: (0) a LINEAR rotation on irregular times, (1) a
/// LINEAR translation of 8 keys at 4 per second as a rate, (2) a
/// CUBICSPLINE scale and (3) a CUBICSPLINE rotation on the irregular
/// times, (4) a constant STEP translation of one key as a rate, (5) 6
/// morph weights on the irregular times; then blocks: (6) a raw
/// CUBICSPLINE translation of 4 keys as a rate (its spline needs the key
/// interval of a header) and (7) a quantized translation
/// (`vector_track`).
fn verbatim_clip() -> (Clip, Vec<CompressedTrack>) {
    let mut rng = Rng::new(31);
    let irregular: Arc<[f32]> = Arc::from([0.0f32, 0.13, 0.4, 0.45, 1.1]);
    let n = irregular.len();
    let noise = |rng: &mut Rng, count: usize| -> Vec<f32> {
        (0..count).map(|_| 0.5 * rng.signed()).collect()
    };
    let rotation: Vec<f32> = turning(&mut rng, [0.0, 0.6, 0.8], n).concat();
    // [in, value, out] per key: a unit value between free tangents.
    let spline_rotation: Vec<f32> = turning(&mut rng, [1.0, 0.0, 0.0], n)
        .into_iter()
        .flat_map(|q| [noise(&mut rng, 4), q.to_vec(), noise(&mut rng, 4)].concat())
        .collect();
    let eighths: Vec<f32> = (0..8).map(|k| k as f32 / 4.0).collect();
    let quarters: Vec<f32> = (0..4).map(|k| k as f32 / 4.0).collect();
    let (quantized, quantized_ct) = vector_track();
    let tracks = vec![
        Track::new(
            0,
            Property::Rotation,
            Interpolation::Linear,
            irregular.clone(),
            rotation,
        ),
        Track::new(
            0,
            Property::Translation,
            Interpolation::Linear,
            eighths,
            noise(&mut rng, 24),
        ),
        Track::new(
            1,
            Property::Scale,
            Interpolation::CubicSpline,
            irregular.clone(),
            noise(&mut rng, 45),
        ),
        Track::new(
            2,
            Property::Rotation,
            Interpolation::CubicSpline,
            irregular.clone(),
            spline_rotation,
        ),
        Track::new(
            3,
            Property::Translation,
            Interpolation::Step,
            vec![0.0],
            vec![1.0, 2.0, 3.0],
        ),
        Track::weights(
            4,
            6,
            Interpolation::Linear,
            irregular.clone(),
            noise(&mut rng, 30),
        ),
        Track::new(
            5,
            Property::Translation,
            Interpolation::CubicSpline,
            quarters,
            noise(&mut rng, 36),
        ),
        Track {
            node: 6,
            ..quantized
        },
    ];
    let rate = |t: &Track| CompressedTrack {
        times: KeyTimes::uniform_of(&t.times).unwrap(),
        ..CompressedTrack::lossless(t)
    };
    let compressed = vec![
        CompressedTrack::lossless(&tracks[0]),
        rate(&tracks[1]),
        CompressedTrack::lossless(&tracks[2]),
        CompressedTrack::lossless(&tracks[3]),
        rate(&tracks[4]),
        CompressedTrack::lossless(&tracks[5]),
        rate(&tracks[6]),
        quantized_ct,
    ];
    (Clip::new("verbatim", tracks), compressed)
}

/// Tracks stored verbatim lie after every block, each its floats as the
/// uncompressed library stores them (values, then CUBICSPLINE tangents
/// in, out per key) with no header: the blocks take 48 words (a raw
/// CUBICSPLINE translation of 4 keys: 4 of header, 2 x 4 of offsets, 12
/// of values, 24 of tangents) and 12 (the quantized one: 4 + 4 + 1, to a
/// multiple of 4), so the verbatim words start at 60 and run for
/// 20 + 24 + 45 + 60 + 3 + 30 words (keys x width, x 3 for CUBICSPLINE);
/// the library stores those and the 5 irregular times. The twin samples the verbatim tracks on listed times bit for bit
/// as the uncompressed library does (the one on a rate within 1e-6), and
/// every sampler plan on the GPU as the twin does.
#[test]
fn verbatim_tracks_are_their_floats_and_decode_alike_on_the_gpu() {
    let (clip, compressed) = verbatim_clip();
    let plain = AnimationLibrary::new(vec![clip.clone()]).unwrap();
    let library = AnimationLibrary::from_compressed(vec![clip.clone()], vec![compressed]).unwrap();
    assert_eq!(library.tables().verbatim_start(), 60);
    let packed = library.tables().packed().unwrap().words();
    assert_eq!(packed.len(), 60 + 20 + 24 + 45 + 60 + 3 + 30);
    assert_eq!(library.stored_bytes(), 4 * (5 + packed.len() as u64));
    for (t, track) in clip.tracks.iter().enumerate() {
        let row = library.tables().tracks()[library.tables().track_row(0, t).unwrap()];
        let verbatim = row.values_offset >= library.tables().verbatim_start();
        assert_eq!(verbatim, t < 6, "track {t}: {row:?}");
        if !verbatim {
            continue;
        }
        // The uncompressed library's floats, values first, then tangents.
        let plain_row = plain.tables().tracks()[plain.tables().track_row(0, t).unwrap()];
        let w = track.width as usize;
        let n = track.key_count();
        let at = |e: usize| &plain.values()[plain_row.values_offset as usize + e * w..][..w];
        let mut want: Vec<f32> = Vec::new();
        if track.interpolation == Interpolation::CubicSpline {
            (0..n).for_each(|k| want.extend_from_slice(at(3 * k + 1)));
            for k in 0..n {
                want.extend_from_slice(at(3 * k));
                want.extend_from_slice(at(3 * k + 2));
            }
        } else {
            (0..n).for_each(|k| want.extend_from_slice(at(k)));
        }
        let got = &packed[row.values_offset as usize..][..want.len()];
        let bits: Vec<u32> = want.iter().map(|x| x.to_bits()).collect();
        assert_eq!(got, &bits[..], "track {t}");
    }
    let times = probe_times(&clip);
    let a = sample_at(&plain, 0, &times);
    let b = sample_at(&library, 0, &times);
    let stride = plain.output_stride() as usize;
    for t in 0..6u32 {
        let (o, w) = plain.track_output(0, t).unwrap();
        for i in 0..times.len() {
            let x = &a[i * stride + o as usize..][..w as usize];
            let y = &b[i * stride + o as usize..][..w as usize];
            if t == 1 {
                let d = x
                    .iter()
                    .zip(y)
                    .map(|(p, q)| (p - q).abs())
                    .fold(0.0, f32::max);
                assert!(d <= 1e-6, "track 1 at {}: {x:?} {y:?}", times[i]);
            } else {
                assert_eq!(x, y, "track {t} at {}", times[i]);
            }
        }
    }
    let Some(h) = common::gpu("verbatim_tracks_are_their_floats_and_decode_alike_on_the_gpu")
    else {
        return;
    };
    let instances: Vec<Instance> = times
        .iter()
        .map(|&t| Instance::new(0, f64::from(t)))
        .collect();
    let want = cpu::sample(&library, &instances).unwrap();
    for plan in EVERY_PLAN {
        let described = Plan::sampling(&library, 64, &DeviceProfile::cpu_adapter(), plan)
            .unwrap()
            .to_string();
        assert!(described.contains("VERBATIM_START=60"), "{described}");
    }
    assert_every_plan_matches(&h, &library, &instances, &want, "verbatim");
}

/// Every sampler plan, [`SamplerPlan::Auto`] included.
const EVERY_PLAN: [SamplerPlan; 4] = [
    SamplerPlan::Reference,
    SamplerPlan::Grouped,
    SamplerPlan::ClipBlocks,
    SamplerPlan::Auto,
];

/// Samples `instances` of `library` on the device under every plan and
/// checks each output within 2e-5 of the CPU twin's `want`; `name` names
/// the library in the failure messages.
fn assert_every_plan_matches(
    h: &crate::tests::common::headless::Headless,
    library: &AnimationLibrary,
    instances: &[Instance],
    want: &[f32],
    name: &str,
) {
    let clips: Vec<u32> = instances.iter().map(|i| i.clip).collect();
    for plan in EVERY_PLAN {
        let mut sampler =
            super::sampler_with(&h.device, &h.queue, library, instances.len() as u32, plan)
                .unwrap();
        let got = sampler.sample(&h.device, &h.queue, instances).unwrap();
        let report = crate::tests::common::track_diff::compare(library, &clips, &got, want);
        assert!(
            report.max_abs_err() <= 2e-5,
            "{name}, {plan:?} ({:?}): {report:?}",
            sampler.plan()
        );
    }
}

// ------------------------------------------------------------ hostile data

fn vector_track() -> (Track, CompressedTrack) {
    let track = Track::new(
        0,
        Property::Translation,
        Interpolation::Linear,
        vec![0.0, 1.0],
        vec![0.0; 6],
    );
    let mut w = BitWriter::new();
    for f in [1u32, 2, 3, 4, 5, 6] {
        w.push(f, 4);
    }
    let good = CompressedTrack {
        times: TWO_KEYS,
        values: Quantized {
            encoding: Encoding::Vector,
            bits: 4,
            step: 0.5,
            offsets: vec![0, 0, 0],
            frame: None,
            words: w.finish(),
        },
        tangents: None,
    };
    (track, good)
}

fn refused(track: &Track, bad: CompressedTrack) -> CompressError {
    let result = AnimationLibrary::from_compressed(
        vec![Clip::new("c", vec![track.clone()])],
        vec![vec![bad]],
    );
    match result {
        Err(Error::Compressed {
            clip: 0,
            track: Some(0),
            kind,
        }) => kind,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Compressed data is validated before a library is built from it: each
/// broken rule is a typed error naming the clip and track, and nothing
/// panics.
#[test]
fn hostile_compressed_data_is_refused() {
    let (track, good) = vector_track();
    AnimationLibrary::from_compressed(
        vec![Clip::new("c", vec![track.clone()])],
        vec![vec![good.clone()]],
    )
    .unwrap();
    let with = |f: &dyn Fn(&mut CompressedTrack)| altered(&good, f);
    // Bit counts out of range.
    for bits in [0u32, 25, 32, 255] {
        let e = refused(&track, with(&|t| t.values.bits = bits));
        assert!(matches!(e, CompressError::Bits { .. }), "{bits}: {e:?}");
    }
    // Ranges with NaN, infinities, a step that is not a power of two.
    for step in [f32::NAN, f32::INFINITY, 0.0, -0.5, 0.3, 1e-40, 2e38] {
        let e = refused(&track, with(&|t| t.values.step = step));
        assert!(matches!(e, CompressError::Step { .. }), "{step}: {e:?}");
    }
    // Offsets: too few, or past 2^24 with the fields.
    let e = refused(&track, with(&|t| t.values.offsets = vec![0, 0]));
    assert!(
        matches!(
            e,
            CompressError::OffsetCount {
                expected: 3,
                found: 2,
                ..
            }
        ),
        "{e:?}"
    );
    let e = refused(&track, with(&|t| t.values.offsets = vec![0, 1 << 24, 0]));
    assert!(
        matches!(e, CompressError::Offset { component: 1, .. }),
        "{e:?}"
    );
    let e = refused(&track, with(&|t| t.values.offsets = vec![i32::MIN, 0, 0]));
    assert!(
        matches!(e, CompressError::Offset { component: 0, .. }),
        "{e:?}"
    );
    // Words that do not match the keys.
    let e = refused(&track, with(&|t| t.values.words.push(0)));
    assert!(
        matches!(
            e,
            CompressError::WordCount {
                expected: 1,
                found: 2,
                ..
            }
        ),
        "{e:?}"
    );
    let e = refused(&track, with(&|t| t.values.words.clear()));
    assert!(matches!(e, CompressError::WordCount { .. }), "{e:?}");
}

/// `good` with `f` applied.
fn altered(good: &CompressedTrack, f: &dyn Fn(&mut CompressedTrack)) -> CompressedTrack {
    let mut t = good.clone();
    f(&mut t);
    t
}

/// A LINEAR rotation track of node 0 with one key, the identity.
fn one_key_rotation() -> Track {
    Track::new(
        0,
        Property::Rotation,
        Interpolation::Linear,
        vec![0.0],
        vec![0.0, 0.0, 0.0, 1.0],
    )
}

#[test]
fn compressed_key_times_that_break_the_rules_are_refused() {
    let (track, good) = vector_track();
    let with = |f: &dyn Fn(&mut CompressedTrack)| altered(&good, f);
    // A key count the words do not hold; times that break the rules.
    let e = refused(
        &track,
        with(&|t| {
            t.times = KeyTimes::Uniform {
                start: 0.0,
                rate: 1.0,
                count: 40,
            }
        }),
    );
    assert!(matches!(e, CompressError::WordCount { .. }), "{e:?}");
    for (start, rate, count) in [
        (f32::NAN, 1.0, 2),
        (0.0, 0.0, 2),
        (0.0, f32::NAN, 2),
        (0.0, -1.0, 2),
        (0.0, 1.0, 0),
        (f32::MAX, 1e-30, 2),
    ] {
        let e = refused(
            &track,
            with(&|t| t.times = KeyTimes::Uniform { start, rate, count }),
        );
        assert!(
            matches!(e, CompressError::Rate { .. }),
            "{start} {rate} {count}: {e:?}"
        );
    }
    for list in [vec![], vec![0.0, f32::NAN], vec![1.0, 0.5], vec![0.0, 0.0]] {
        let e = refused(
            &track,
            with(&|t| t.times = KeyTimes::List(Arc::from(list.clone()))),
        );
        assert!(
            matches!(e, CompressError::NoKeys | CompressError::Time { .. }),
            "{list:?}: {e:?}"
        );
    }
}

#[test]
fn compressed_encodings_and_raw_values_that_do_not_fit_are_refused() {
    let (track, good) = vector_track();
    let with = |f: &dyn Fn(&mut CompressedTrack)| altered(&good, f);
    // Encodings the track cannot take; tangents where there are none.
    let e = refused(
        &track,
        with(&|t| t.values.encoding = Encoding::SmallestThree),
    );
    assert!(matches!(e, CompressError::Encoding { .. }), "{e:?}");
    let e = refused(&track, with(&|t| t.tangents = Some(t.values.clone())));
    assert!(
        matches!(e, CompressError::Tangents { given: true, .. }),
        "{e:?}"
    );
    // Raw values that are not finite; raw rotation keys far from unit.
    let raw = |v: &[f32]| Quantized::raw(v, 3);
    let e = refused(
        &track,
        with(&|t| t.values = raw(&[0.0, 1.0, f32::NAN, 0.0, 0.0, 0.0])),
    );
    assert!(
        matches!(
            e,
            CompressError::RawValue {
                element: 0,
                component: 2,
                ..
            }
        ),
        "{e:?}"
    );
    let rotation = one_key_rotation();
    let zero = CompressedTrack {
        times: KeyTimes::Uniform {
            start: 0.0,
            rate: 1.0,
            count: 1,
        },
        values: Quantized::raw(&[0.0; 4], 4),
        tangents: None,
    };
    let e = refused(&rotation, zero);
    assert!(
        matches!(e, CompressError::RotationKey { key: 0, .. }),
        "{e:?}"
    );
    // A discrete (bool) track must stay raw.
    let visible = Arc::new(PointerTarget::new(
        "/nodes/0/extensions/KHR_node_visibility/visible",
        PointerType::Bool,
        vec![1.0],
    ));
    let flag = Track::for_pointer(visible, Interpolation::Step, vec![0.0, 1.0], vec![0.0, 1.0]);
    let mut q = BitWriter::new();
    q.push(0, 1);
    q.push(1, 1);
    let quantized = CompressedTrack {
        times: TWO_KEYS,
        values: Quantized {
            encoding: Encoding::Vector,
            bits: 1,
            step: 1.0,
            offsets: vec![0],
            frame: None,
            words: q.finish(),
        },
        tangents: None,
    };
    let e = refused(&flag, quantized);
    assert!(matches!(e, CompressError::Encoding { .. }), "{e:?}");
}

#[test]
fn compressed_frames_that_break_the_rules_are_refused() {
    let (track, good) = vector_track();
    let with = |f: &dyn Fn(&mut CompressedTrack)| altered(&good, f);
    let rotation = one_key_rotation();
    // Framed streams: only rotation values, with a unit frame whose field
    // bits are at most 16 and sum to the stream's bits.
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let framed = |frame: Option<Frame>, bits: u32, words: usize| CompressedTrack {
        times: KeyTimes::Uniform {
            start: 0.0,
            rate: 1.0,
            count: 1,
        },
        values: Quantized {
            encoding: Encoding::Framed,
            bits,
            step: 0.5,
            offsets: vec![0, 0, 0],
            frame,
            words: vec![0; words],
        },
        tangents: None,
    };
    let unit = Frame {
        left: [0.0, 0.0, h, h],
        right: [0.0, 0.0, 0.0, 1.0],
        bits: [4, 2, 0],
    };
    AnimationLibrary::from_compressed(
        vec![Clip::new("c", vec![rotation.clone()])],
        vec![vec![framed(Some(unit), 6, 1)]],
    )
    .unwrap();
    let bad_frames = [
        (None, 6),
        (
            Some(Frame {
                left: [0.0, 0.0, 0.0, 2.0],
                ..unit
            }),
            6,
        ),
        (
            Some(Frame {
                right: [f32::NAN, 0.0, 0.0, 1.0],
                ..unit
            }),
            6,
        ),
        (
            Some(Frame {
                bits: [17, 0, 0],
                ..unit
            }),
            17,
        ),
        (Some(unit), 7),
    ];
    for (frame, bits) in bad_frames {
        let e = refused(&rotation, framed(frame, bits, 1));
        assert!(matches!(e, CompressError::Frame { .. }), "{frame:?}: {e:?}");
    }
    let e = refused(&track, with(&|t| t.values.frame = Some(unit)));
    assert!(matches!(e, CompressError::Frame { .. }), "{e:?}");
    let e = refused(
        &track,
        with(&|t| {
            t.values.encoding = Encoding::Framed;
            t.values.frame = Some(unit);
        }),
    );
    assert!(matches!(e, CompressError::Encoding { .. }), "{e:?}");
}

#[test]
fn compressed_counts_and_options_that_do_not_match_are_refused() {
    let (track, good) = vector_track();
    // Counts of compressed tracks and clips that do not match.
    let two = AnimationLibrary::from_compressed(
        vec![Clip::new("c", vec![track.clone()])],
        vec![vec![good.clone(), good.clone()]],
    );
    assert!(matches!(
        two,
        Err(Error::Compressed {
            kind: CompressError::TrackCount {
                expected: 1,
                found: 2
            },
            ..
        })
    ));
    let none = AnimationLibrary::from_compressed(vec![Clip::new("c", vec![track.clone()])], vec![]);
    assert!(matches!(
        none,
        Err(Error::Compressed {
            kind: CompressError::TrackCount { .. },
            ..
        })
    ));
    // Compressing twice, and options that are not finite and positive.
    let library =
        AnimationLibrary::from_compressed(vec![Clip::new("c", vec![track])], vec![vec![good]])
            .unwrap();
    assert!(matches!(
        library.compress(&CompressOptions::default()),
        Err(Error::Compressed {
            kind: CompressError::AlreadyCompressed,
            ..
        })
    ));
    let plain = AnimationLibrary::new(vec![Clip::new("c", vec![vector_track().0])]).unwrap();
    for bound in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        assert!(matches!(
            plain.compress(&CompressOptions::with_bound(bound)),
            Err(Error::Compressed {
                kind: CompressError::Options { .. },
                ..
            })
        ));
    }
}

// ------------------------------------------------------------ GPU

/// The compressed libraries of these tests: the mixed library bound and
/// compressed at two bounds, compressed without a rig, stored losslessly;
/// and motion-capture-like clips.
fn compressed_libraries() -> Vec<(&'static str, AnimationLibrary)> {
    let (rig, clips) = mixed_clips(&mut Rng::new(5));
    let plain = AnimationLibrary::new(clips.clone()).unwrap();
    let bound = plain.bind(&rig).unwrap();
    let lossless = AnimationLibrary::from_compressed(
        clips.clone(),
        clips
            .iter()
            .map(|c| c.tracks.iter().map(CompressedTrack::lossless).collect())
            .collect(),
    )
    .unwrap();
    let (skeleton, rest) = skeleton(16, 1.0);
    let mut rng = Rng::new(9);
    let takes: Vec<Clip> = (0..3)
        .map(|i| mocap_clip(&mut rng, &format!("t{i}"), &rest, 1.0, 40, 0.003))
        .collect();
    let mocap = AnimationLibrary::new(takes)
        .unwrap()
        .bind(&skeleton)
        .unwrap();
    // The mocap library takes framed rotations (and smallest-three where
    // they are smaller), so the GPU decodes every rotation encoding here.
    let (packed, report) = mocap.compress(&CompressOptions::default()).unwrap();
    assert!(
        report
            .tracks
            .iter()
            .flatten()
            .any(|t| t.encoding == Encoding::Framed),
        "no framed track in the mocap library"
    );
    let framed = packed.library().clone();
    vec![
        (
            "mixed, default bound",
            bound
                .compress(&CompressOptions::default())
                .unwrap()
                .0
                .library()
                .clone(),
        ),
        (
            "mixed, bound 1e-2",
            bound
                .compress(&CompressOptions::with_bound(1e-2))
                .unwrap()
                .0
                .library()
                .clone(),
        ),
        (
            "mixed, no rig",
            plain
                .compress(&CompressOptions::with_bound(1e-3))
                .unwrap()
                .0,
        ),
        ("mixed, lossless", lossless),
        ("mocap", framed),
    ]
}

/// Every sampler plan decodes a compressed library as the CPU twin does,
/// within 2e-5 (the decode's sums and square root, and the slerp, may
/// round differently on the device), at times before, on, between and
/// after keys, instances of every clip in every block.
#[test]
fn gpu_decodes_as_the_twin_on_every_plan() {
    let Some(h) = common::gpu("gpu_decodes_as_the_twin_on_every_plan") else {
        return;
    };
    // The decode's paths by the encodings of a dispatch's streams
    // (ENCODINGS: 8 framed alone, 1, 4 or 5 vectors and raw alone, else
    // every one): each is taken by some dispatch here.
    let mut paths = std::collections::BTreeSet::new();
    for (name, library) in compressed_libraries() {
        for plan in [SamplerPlan::Grouped, SamplerPlan::ClipBlocks] {
            let plan = Plan::sampling(&library, 64, &DeviceProfile::cpu_adapter(), plan).unwrap();
            for line in plan
                .to_string()
                .lines()
                .filter(|l| l.contains("ENCODINGS="))
            {
                let mask: u32 = line
                    .split("ENCODINGS=")
                    .nth(1)
                    .unwrap()
                    .split(' ')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                paths.insert(match mask {
                    8 => "framed",
                    1 | 4 | 5 => "vectors",
                    _ => "every",
                });
            }
        }
        let mut instances = Vec::new();
        for (c, clip) in library.clips().iter().enumerate() {
            for t in probe_times(clip) {
                instances.push(Instance::new(c as u32, f64::from(t)));
            }
        }
        let want = cpu::sample(&library, &instances).unwrap();
        assert_every_plan_matches(&h, &library, &instances, &want, name);
    }
    assert_eq!(paths.len(), 3, "{paths:?}");
}

/// A baked library's clip-blocks runs find one segment per run and
/// compute their rows from the first two: translations and scales with
/// all the keys, one key (constant) or a prefix of the keys (a track that
/// stops early), rotations, CUBICSPLINE scales with all or a prefix of
/// the keys, all at 32 fps (exact in f32). The plan
/// says so (run keys shared, regular segments), and the GPU samples as
/// the twin does before, on, between and after every row's keys (a row
/// read past its last key would read the next block). A library whose
/// rows differ in their first key time gets neither, and samples the same.
/// The block heads come from their uniform copies on CPU adapters, in a
/// library of more rows than one window of them holds from one window
/// per part of each dispatch.
#[test]
fn baked_runs_share_their_segment_and_compute_their_rows() {
    let gpu = common::gpu("baked_runs_share_their_segment_and_compute_their_rows");
    // (first key of row 7, shared runs, clips): the last has more rows
    // than one window of the block heads' uniform copies holds
    // (DECODE_HEAD), so its dispatches run in parts, one per window.
    for (shift, shared, count) in [(0, true, 2), (15, false, 2), (0, true, 70)] {
        let library = baked_library(shift, 3, count);
        assert_baked_plans(&library, shared, count);
        let Some(h) = &gpu else {
            continue;
        };
        let instances = baked_probe_instances(&library, count);
        let want = cpu::sample(&library, &instances).unwrap();
        let clips: Vec<u32> = instances.iter().map(|i| i.clip).collect();
        let mut sampler = super::sampler_with(
            &h.device,
            &h.queue,
            &library,
            instances.len() as u32,
            SamplerPlan::ClipBlocks,
        )
        .unwrap();
        let got = sampler.sample(&h.device, &h.queue, &instances).unwrap();
        let report = crate::tests::common::track_diff::compare(&library, &clips, &got, &want);
        assert!(
            report.max_abs_err() <= 2e-5,
            "shift {shift}, {count} clips: {report:?}"
        );
    }
}

/// `count` clips of baked keys (1/32 s apart): 10 LINEAR rotations of 40
/// keys, 10 LINEAR translations of 40, 1 or 25 keys (row 7's times
/// starting `shift` keys later), 10 CUBICSPLINE scales of 40 or 20; their
/// values random from `seed`, compressed losslessly with uniform times.
fn baked_library(shift: usize, seed: u64, count: usize) -> AnimationLibrary {
    let mut rng = Rng::new(seed);
    let times = |n: usize, first: usize| -> Arc<[f32]> {
        (first..first + n).map(|k| k as f32 / 32.0).collect()
    };
    let mut clips = Vec::new();
    for c in 0..count {
        let mut tracks = Vec::new();
        for j in 0..10u32 {
            let q: Vec<f32> = (0..40)
                .flat_map(|k| axis_angle([0.0, 1.0, 0.0], 0.05 * k as f32 + rng.signed()))
                .collect();
            tracks.push(Track::new(
                j,
                Property::Rotation,
                Interpolation::Linear,
                times(40, 0),
                q,
            ));
        }
        for j in 0..10u32 {
            let n = match j {
                0 => 40,
                1..=4 => 1,
                _ => 25,
            };
            // One row's times start later where `shift` is given.
            let first = if j == 7 { shift } else { 0 };
            let v = (0..n * 3).map(|_| rng.signed()).collect();
            tracks.push(Track::new(
                j,
                Property::Translation,
                Interpolation::Linear,
                times(n, first),
                v,
            ));
        }
        for j in 0..10u32 {
            let n = if j < 5 { 40 } else { 20 };
            let v = (0..n * 9).map(|_| 1.0 + 0.1 * rng.signed()).collect();
            tracks.push(Track::new(
                j,
                Property::Scale,
                Interpolation::CubicSpline,
                times(n, 0),
                v,
            ));
        }
        clips.push(Clip::new(format!("take{c}"), tracks));
    }
    let packed = clips
        .iter()
        .map(|c| {
            c.tracks
                .iter()
                .map(|t| CompressedTrack {
                    times: KeyTimes::uniform_of(&t.times).unwrap(),
                    ..CompressedTrack::lossless(t)
                })
                .collect()
        })
        .collect();
    AnimationLibrary::from_compressed(clips, packed).unwrap()
}

/// The clip-blocks plans of `library` (`count` clips): on a CPU adapter,
/// three dispatches whose runs share their segment and compute their rows
/// (translations too where `shared`), the block heads in uniform copies,
/// in two windows each from 70 clips (2,100 rows); on a GPU, no copies.
fn assert_baked_plans(library: &AnimationLibrary, shared: bool, count: usize) {
    let plan = Plan::sampling(
        library,
        64,
        &DeviceProfile::cpu_adapter(),
        SamplerPlan::ClipBlocks,
    )
    .unwrap()
    .to_string();
    let dispatches: Vec<&str> = plan
        .lines()
        .filter(|l| l.contains("sample_blocks_main"))
        .collect();
    assert_eq!(dispatches.len(), 3, "{plan}");
    for d in &dispatches {
        let translations = d.contains("GROUP=2 ");
        let expect = shared || !translations;
        assert_eq!(d.contains("RUN_KEYS=1 "), expect, "{plan}");
        assert_eq!(!d.contains("REGULAR_SEGMENT=0 "), expect, "{plan}");
        assert!(d.contains("HEADS_IN_UNIFORM=1"), "{plan}");
        assert_eq!(d.contains("2 parts, block heads"), count >= 70, "{plan}");
    }
    assert!(plan.contains("decode heads"), "{plan}");
    // A GPU reads the heads from the packed words: no copies made.
    let on_gpu = Plan::sampling(library, 64, &DeviceProfile::gpu(), SamplerPlan::ClipBlocks)
        .unwrap()
        .to_string();
    assert!(!on_gpu.contains("HEADS_IN_UNIFORM=1"), "{on_gpu}");
    assert!(!on_gpu.contains("decode heads"), "{on_gpu}");
}

/// Per clip of `library`: times around its keys (before, at, after; with
/// 70 clips or more, just before, at 0 and after the end) and on, between
/// and off the baked keys.
fn baked_probe_instances(library: &AnimationLibrary, count: usize) -> Vec<Instance> {
    let mut instances = Vec::new();
    for (c, clip) in library.clips().iter().enumerate() {
        let mut times = vec![-0.5, 0.0, clip.duration() + 1.0];
        if count < 70 {
            times = probe_times(clip);
        }
        times.extend(
            (0..40).flat_map(|k| [k as f32, k as f32 + 0.5, k as f32 + 0.3].map(|x| x / 32.0)),
        );
        for t in times {
            instances.push(Instance::new(c as u32, f64::from(t)));
        }
    }
    instances
}

// ------------------------------------------------- block heads in windows

/// `clips` motion-capture-like takes of a `joints`-joint skeleton (per
/// joint a LINEAR rotation, translation and scale) of `keys` keys at 30
/// fps, bound and compressed at the default bound: framed rotations,
/// constant tracks stored verbatim, the root's moving translation.
fn large_mocap(joints: u32, clips: usize, keys: usize) -> AnimationLibrary {
    let (rig, rest) = skeleton(joints, 1.0);
    let mut rng = Rng::new(u64::from(joints));
    let takes: Vec<Clip> = (0..clips)
        .map(|c| mocap_clip(&mut rng, &format!("take{c}"), &rest, 1.0, keys, 0.003))
        .collect();
    let bound = AnimationLibrary::new(takes).unwrap().bind(&rig).unwrap();
    let (packed, report) = bound.compress(&CompressOptions::default()).unwrap();
    let tracks: Vec<_> = report.tracks.iter().flatten().collect();
    assert!(tracks.iter().any(|t| t.encoding == Encoding::Framed));
    assert!(tracks.iter().any(|t| t.verbatim));
    assert!(tracks
        .iter()
        .any(|t| !t.verbatim && t.encoding != Encoding::Framed));
    packed.library().clone()
}

/// The clip-blocks plan's dispatch lines of `library` on a CPU adapter.
fn block_dispatches(library: &AnimationLibrary) -> Vec<String> {
    let plan = Plan::sampling(
        library,
        256,
        &DeviceProfile::cpu_adapter(),
        SamplerPlan::ClipBlocks,
    )
    .unwrap();
    // A GPU reads the heads from the packed words, in one part.
    let on_gpu = Plan::sampling(library, 256, &DeviceProfile::gpu(), SamplerPlan::ClipBlocks)
        .unwrap()
        .to_string();
    assert!(!on_gpu.contains("HEADS_IN_UNIFORM=1"), "{on_gpu}");
    assert!(!on_gpu.contains("parts"), "{on_gpu}");
    plan.to_string()
        .lines()
        .filter(|l| l.contains("sample_blocks_main"))
        .map(str::to_string)
        .collect()
}

/// Per clip of `library` (keys at 30 fps): times before, on, between
/// and after its keys.
fn probes(library: &AnimationLibrary) -> Vec<Instance> {
    let mut instances = Vec::new();
    for (c, clip) in library.clips().iter().enumerate() {
        let keys = (clip.duration() * 30.0).round() as usize + 1;
        let mut times = vec![-0.5, clip.duration() + 1.0];
        times.extend((0..keys).flat_map(|k| [k as f32, k as f32 + 0.4].map(|x| x / 30.0)));
        for t in times {
            instances.push(Instance::new(c as u32, f64::from(t)));
        }
    }
    instances
}

/// `library` sampled on the adapter through the clip-blocks plan equals
/// the twin within 2e-5 (as `gpu_decodes_as_the_twin_on_every_plan`);
/// returns the sampler's dispatches (parts included) with instances.
fn assert_blocks_match_twin(
    h: &crate::tests::common::headless::Headless,
    library: &AnimationLibrary,
    what: &str,
) -> usize {
    let instances = probes(library);
    let want = cpu::sample(library, &instances).unwrap();
    let clips: Vec<u32> = instances.iter().map(|i| i.clip).collect();
    let mut sampler = super::sampler_with(
        &h.device,
        &h.queue,
        library,
        instances.len() as u32,
        SamplerPlan::ClipBlocks,
    )
    .unwrap();
    let got = sampler.sample(&h.device, &h.queue, &instances).unwrap();
    let report = crate::tests::common::track_diff::compare(library, &clips, &got, &want);
    let worst = report
        .tracks
        .iter()
        .max_by(|a, b| a.max_abs_err.total_cmp(&b.max_abs_err));
    assert!(report.max_abs_err() <= 2e-5, "{what}: worst {worst:?}");
    sampler.workgroups().filter(|(_, w)| w.0 > 0).count()
}

/// A compressed library of more tracks than one window of the block
/// heads' uniform copies holds (8 clips of 390 tracks: 3,120 rows, where
/// a window holds 2,048) keeps them on CPU adapters: each clip-blocks
/// dispatch reads its heads from uniform windows, in one part per window,
/// and samples as the twin does.
#[test]
fn a_library_past_one_window_reads_its_heads_in_windows() {
    let library = large_mocap(130, 8, 24);
    assert_eq!(library.tables().tracks().len(), 3120);
    let dispatches = block_dispatches(&library);
    // Rotations (130 a clip: 2,730 rows from the first clip's to the last
    // clip's end) and the other LINEAR tracks (260 a clip) need two
    // windows each.
    assert_eq!(dispatches.len(), 2, "{dispatches:#?}");
    for d in &dispatches {
        assert!(d.contains("HEADS_IN_UNIFORM=1"), "{d}");
        assert!(d.contains("2 parts, block heads in uniform windows"), "{d}");
    }
    let Some(h) = common::gpu("a_library_past_one_window_reads_its_heads_in_windows") else {
        return;
    };
    // Every clip has instances: both parts of both dispatches run.
    assert_eq!(assert_blocks_match_twin(&h, &library, "3,120 rows"), 4);
}

/// A clip of more rows of one group than a window holds (1,030 joints:
/// 2,060 translations and scales) reads that group's heads from the
/// packed words, and its rotations' (1,030) from a window; both sample
/// as the twin does.
#[test]
fn a_clip_past_one_window_reads_its_heads_packed() {
    let library = large_mocap(1030, 1, 6);
    let dispatches = block_dispatches(&library);
    assert_eq!(dispatches.len(), 2, "{dispatches:#?}");
    for d in &dispatches {
        let rotations = d.contains("GROUP=0 ");
        assert_eq!(d.contains("HEADS_IN_UNIFORM=1"), rotations, "{d}");
        assert!(!d.contains("parts"), "{d}");
    }
    let Some(h) = common::gpu("a_clip_past_one_window_reads_its_heads_packed") else {
        return;
    };
    assert_eq!(assert_blocks_match_twin(&h, &library, "one clip"), 2);
}

/// A rotation track of node 0 with two identity keys, at 0 s and 1 s.
fn identity_keys(interpolation: Interpolation) -> Track {
    let values = vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    Track::new(0, Property::Rotation, interpolation, vec![0.0, 1.0], values)
}

/// Two keys, at 0 s and 1 s, as uniform times.
const TWO_KEYS: KeyTimes = KeyTimes::Uniform {
    start: 0.0,
    rate: 1.0,
    count: 2,
};
