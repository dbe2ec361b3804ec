//! Seeded random workloads built in code: a tiny xorshift generator and the
//! clip builders of the named workloads.

use std::sync::Arc;

use keyframe_gpu::{Clip, Instance, Interpolation, Property, Track, WrapMode};

/// xorshift64* (Vigna): small, seeded, reproducible on every machine.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [0, 1).
    pub fn f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.f32()
    }

    /// Uniform in [0, n).
    pub fn below(&mut self, n: u32) -> u32 {
        (((self.next_u64() >> 32) * u64::from(n)) >> 32) as u32
    }

    pub fn unit_quat(&mut self) -> [f32; 4] {
        loop {
            let q = [
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
            ];
            let n2: f32 = q.iter().map(|c| c * c).sum();
            if n2 > 0.01 && n2 <= 1.0 {
                let n = n2.sqrt();
                return q.map(|c| c / n);
            }
        }
    }
}

/// How key times are spaced.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Spacing {
    /// Baked at 30 frames per second (`k / 30` rounded to f32), as
    /// exporters write sampled clips.
    Uniform30,
    /// Random intervals of 0.5 to 1.5 frames at 30 fps: hand-keyed clips.
    Irregular,
}

pub fn key_times(rng: &mut Rng, keys: usize, spacing: Spacing) -> Arc<[f32]> {
    match spacing {
        Spacing::Uniform30 => (0..keys).map(|k| k as f32 / 30.0).collect(),
        Spacing::Irregular => {
            let mut t = 0.0f64;
            let mut v = Vec::with_capacity(keys);
            for _ in 0..keys {
                v.push(t as f32);
                t += f64::from(rng.range(0.5, 1.5)) / 30.0;
            }
            v.into()
        }
    }
}

/// A random walk of unit quaternions: consecutive keys are close, as in
/// real motion, and most pairs take the slerp branch (dot < 0.9995).
fn rotation_values(rng: &mut Rng, keys: usize, elements: usize) -> Vec<f32> {
    let mut q = rng.unit_quat();
    let mut v = Vec::with_capacity(keys * elements * 4);
    for _ in 0..keys {
        for e in 0..elements {
            if elements == 3 && e != 1 {
                // CUBICSPLINE tangents: small, any direction.
                for _ in 0..4 {
                    v.push(rng.range(-0.5, 0.5));
                }
            } else {
                v.extend_from_slice(&q);
            }
        }
        let step = [
            rng.range(-0.1, 0.1),
            rng.range(-0.1, 0.1),
            rng.range(-0.1, 0.1),
            rng.range(-0.1, 0.1),
        ];
        let p = [
            q[0] + step[0],
            q[1] + step[1],
            q[2] + step[2],
            q[3] + step[3],
        ];
        let n = p.iter().map(|c| c * c).sum::<f32>().sqrt();
        q = p.map(|c| c / n);
    }
    v
}

fn vector_values(rng: &mut Rng, keys: usize, width: usize, elements: usize) -> Vec<f32> {
    (0..keys * width * elements)
        .map(|_| rng.range(-2.0, 2.0))
        .collect()
}

pub fn track(
    rng: &mut Rng,
    node: u32,
    property: Property,
    interpolation: Interpolation,
    times: Arc<[f32]>,
) -> Track {
    let keys = times.len();
    let elements = interpolation.elements_per_key();
    let values = match property {
        Property::Rotation => rotation_values(rng, keys, elements),
        Property::Translation | Property::Scale => vector_values(rng, keys, 3, elements),
        Property::Weights | Property::Pointer => {
            unreachable!("weights tracks are built by morph_clips; the bench has no pointer tracks")
        }
    };
    Track::new(node, property, interpolation, times, values)
}

/// `clips` clips of `tracks` LINEAR rotation tracks with `keys` keys each;
/// every track has its own key times (its own `Arc`; with
/// `Spacing::Uniform30` their contents are equal, and the library stores
/// them once).
pub fn rotation_clips(
    rng: &mut Rng,
    clips: usize,
    tracks: usize,
    keys: usize,
    spacing: Spacing,
) -> Vec<Clip> {
    (0..clips)
        .map(|c| {
            let tracks = (0..tracks)
                .map(|j| {
                    let times = key_times(rng, keys, spacing);
                    track(
                        rng,
                        j as u32,
                        Property::Rotation,
                        Interpolation::Linear,
                        times,
                    )
                })
                .collect();
            Clip::new(format!("rot{c}"), tracks)
        })
        .collect()
}

/// `clips` clips of 24 nodes x (translation, rotation, scale), `keys` keys,
/// interpolation cycling STEP, LINEAR, CUBICSPLINE over the tracks.
pub fn mixed_clips(rng: &mut Rng, clips: usize, nodes: usize, keys: usize) -> Vec<Clip> {
    let modes = [
        Interpolation::Step,
        Interpolation::Linear,
        Interpolation::CubicSpline,
    ];
    (0..clips)
        .map(|c| {
            let mut tracks = Vec::with_capacity(nodes * 3);
            for (p, property) in [Property::Translation, Property::Rotation, Property::Scale]
                .into_iter()
                .enumerate()
            {
                for n in 0..nodes {
                    let times = key_times(rng, keys, Spacing::Irregular);
                    let interp = modes[(p * nodes + n) % 3];
                    tracks.push(track(rng, n as u32, property, interp, times));
                }
            }
            Clip::new(format!("mixed{c}"), tracks)
        })
        .collect()
}

/// `clips` clips of one LINEAR weights track with `targets` targets.
pub fn morph_clips(rng: &mut Rng, clips: usize, targets: u32, keys: usize) -> Vec<Clip> {
    (0..clips)
        .map(|c| {
            let times = key_times(rng, keys, Spacing::Irregular);
            let values = (0..keys * targets as usize).map(|_| rng.f32()).collect();
            Clip::new(
                format!("morph{c}"),
                vec![Track::weights(
                    0,
                    targets,
                    Interpolation::Linear,
                    times,
                    values,
                )],
            )
        })
        .collect()
}

/// `n` instances, each of a random clip at a random time inside it.
pub fn random_instances(
    rng: &mut Rng,
    n: usize,
    durations: &[f32],
    wrap: WrapMode,
) -> Vec<Instance> {
    (0..n)
        .map(|_| {
            let clip = rng.below(durations.len() as u32);
            let time = f64::from(rng.range(0.0, durations[clip as usize]));
            Instance::new(clip, time).with_wrap(wrap)
        })
        .collect()
}

/// A chain of `joints` nodes (each 0.1 above its parent), skinned by a mesh
/// node of its own, and `clips` clips that rotate every joint (LINEAR,
/// `keys` irregular keys per track).
pub fn skin_chain(
    rng: &mut Rng,
    clips: usize,
    joints: u32,
    keys: usize,
) -> (keyframe_gpu::Rig, Vec<Clip>) {
    use keyframe_gpu::{NodeTransform, Rig};
    let mut b = Rig::builder();
    let mut parent = None;
    let mut nodes = Vec::with_capacity(joints as usize);
    for _ in 0..joints {
        let n = b.node(parent, NodeTransform::translation([0.0, 0.1, 0.0]));
        nodes.push(n);
        parent = Some(n);
    }
    let mesh_node = b.node(None, NodeTransform::IDENTITY);
    let mesh = b.mesh(0, vec![]);
    // Bind pose: joint k sits at (0, 0.1 (k + 1), 0); its inverse bind
    // matrix translates back (column-major).
    let ibms = (0..joints)
        .map(|k| {
            let mut m = [0.0f32; 16];
            m[0] = 1.0;
            m[5] = 1.0;
            m[10] = 1.0;
            m[15] = 1.0;
            m[13] = -0.1 * (k + 1) as f32;
            m
        })
        .collect();
    let skin = b.skin(nodes.clone(), ibms);
    b.attach(mesh_node, mesh, Some(skin));
    let rig = match b.build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("bench: skin_chain rig: {e}");
            std::process::exit(2);
        }
    };
    let clips = (0..clips)
        .map(|c| {
            let tracks = nodes
                .iter()
                .map(|&n| {
                    let times = key_times(rng, keys, Spacing::Irregular);
                    track(rng, n, Property::Rotation, Interpolation::Linear, times)
                })
                .collect();
            Clip::new(format!("chain{c}"), tracks)
        })
        .collect();
    (rig, clips)
}
