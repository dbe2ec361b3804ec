//! A motion-capture-like model built in code: a branching skeleton of
//! named joints and clips of dense keys with noise. Shared by the bench's
//! `compressed` workload and the compression tests (`tests/compressed.rs`,
//! `src/tests/compressed.rs`), included by path: examples have no library
//! target.
#![allow(dead_code, reason = "each user takes a subset")]

use std::sync::Arc;

use keyframe_gpu::{Clip, Interpolation, NodeTransform, Property, Rig, Track};

/// A small deterministic generator (xorshift), so that the data needs no
/// crate.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// Uniform in [0, 1).
    pub fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
    /// Uniform in [-1, 1).
    pub fn signed(&mut self) -> f32 {
        2.0 * self.next() - 1.0
    }
}

/// A skeleton of `joints` joints (at least 2): a spine from the root, then
/// limbs of 4 joints branching from spine joints in turn; bones of
/// `scale` * 0.1 to 0.2 units. Returns the rig and its joints' rest
/// translations.
pub fn skeleton(joints: u32, scale: f32) -> (Rig, Vec<[f32; 3]>) {
    let mut b = Rig::builder();
    let mut rest = Vec::new();
    let mut spine = Vec::new();
    let root = b.node(None, NodeTransform::translation([0.0, 1.0 * scale, 0.0]));
    b.name(root, "root");
    rest.push([0.0, 1.0 * scale, 0.0]);
    spine.push(root);
    let spine_len = (joints / 5).clamp(1, 6);
    for i in 1..=spine_len.min(joints - 1) {
        let t = [0.0, 0.12 * scale, 0.01 * scale];
        let n = b.node(Some(spine[spine.len() - 1]), NodeTransform::translation(t));
        b.name(n, format!("spine{i}"));
        rest.push(t);
        spine.push(n);
    }
    let mut made = spine.len() as u32;
    let mut limb = 0u32;
    while made < joints {
        let from = spine[(limb as usize * 3 + 1) % spine.len()];
        let side = if limb.is_multiple_of(2) { 1.0 } else { -1.0 };
        let mut parent = from;
        for j in 0..4 {
            if made >= joints {
                break;
            }
            let t = [side * 0.15 * scale, -0.12 * scale * j as f32, 0.02 * scale];
            let n = b.node(Some(parent), NodeTransform::translation(t));
            b.name(n, format!("limb{limb}_{j}"));
            rest.push(t);
            parent = n;
            made += 1;
        }
        limb += 1;
    }
    (b.build().expect("skeleton"), rest)
}

/// A rotation about a unit axis by `angle` radians, x y z w.
pub fn axis_angle(axis: [f32; 3], angle: f32) -> [f32; 4] {
    let (s, c) = (0.5 * angle).sin_cos();
    [axis[0] * s, axis[1] * s, axis[2] * s, c]
}

/// The Hamilton product a * b of quaternions x y z w.
pub fn quat_mul(a: [f32; 4], b: [f32; 4]) -> [f32; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

/// Normalized.
pub fn unit(q: [f32; 4]) -> [f32; 4] {
    let n = q.iter().map(|x| x * x).sum::<f32>().sqrt();
    q.map(|x| x / n)
}

/// A clip of `frames` keys at 30 fps (times `k / 30` in `f32`) for every
/// joint of a skeleton of `rest` translations, as an exporter bakes a
/// motion-capture take: per joint a LINEAR rotation (smooth swings of a
/// few tens of degrees plus noise of `noise` radians), a translation (the
/// root's moving, the others constant at their rest value) and a
/// constant unit scale. `scale` is the skeleton's (the root's motion is
/// scaled with it).
pub fn mocap_clip(
    rng: &mut Rng,
    name: &str,
    rest: &[[f32; 3]],
    scale: f32,
    frames: usize,
    noise: f32,
) -> Clip {
    let times: Arc<[f32]> = (0..frames).map(|k| k as f32 / 30.0).collect();
    let mut tracks = Vec::new();
    for (j, t) in rest.iter().enumerate() {
        let node = j as u32;
        let axis = {
            let a = [rng.signed(), rng.signed(), rng.signed()];
            let n = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt().max(1e-3);
            a.map(|x| x / n)
        };
        let amplitude = 0.2 + 0.5 * rng.next();
        let speed = 1.0 + 3.0 * rng.next();
        let phase = std::f32::consts::TAU * rng.next();
        let base = axis_angle([0.0, 1.0, 0.0], rng.signed());
        let mut values = Vec::with_capacity(frames * 4);
        for k in 0..frames {
            let time = k as f32 / 30.0;
            let swing = amplitude * (speed * time + phase).sin();
            let jitter = axis_angle(
                unit([rng.signed(), rng.signed(), rng.signed(), 0.0])[..3]
                    .try_into()
                    .unwrap_or([1.0, 0.0, 0.0]),
                noise * rng.signed(),
            );
            let q = unit(quat_mul(quat_mul(base, axis_angle(axis, swing)), jitter));
            values.extend_from_slice(&q);
        }
        tracks.push(Track::new(
            node,
            Property::Rotation,
            Interpolation::Linear,
            times.clone(),
            values,
        ));
        let translation: Vec<f32> = if j == 0 {
            (0..frames)
                .flat_map(|k| {
                    let time = k as f32 / 30.0;
                    [
                        scale * (0.8 * time + 0.002 * rng.signed()),
                        t[1] + scale * (0.05 * (6.0 * time).sin() + 0.002 * rng.signed()),
                        scale * 0.1 * (2.0 * time).cos(),
                    ]
                })
                .collect()
        } else {
            (0..frames).flat_map(|_| *t).collect()
        };
        tracks.push(Track::new(
            node,
            Property::Translation,
            Interpolation::Linear,
            times.clone(),
            translation,
        ));
        tracks.push(Track::new(
            node,
            Property::Scale,
            Interpolation::Linear,
            times.clone(),
            [1.0f32; 3].repeat(frames),
        ));
    }
    Clip::new(name, tracks)
}
