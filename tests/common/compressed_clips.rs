//! Helpers of the compression tests, shared by the public-API tests
//! (`tests/compressed.rs`) and those that build the compressed format by
//! hand inside the crate (`src/tests/compressed.rs`), included by path
//! next to `examples/common/mocap.rs` (as `super::mocap`).

use std::sync::Arc;

use keyframe_gpu::{
    cpu, AnimationLibrary, Clip, Instance, Interpolation, NodeTransform, PointerTarget,
    PointerType, Property, Rig, Track,
};

use super::mocap::{axis_angle, quat_mul, unit, Rng};

/// Samples `library` on the CPU twin at each of `times` for clip `clip`:
/// `times.len() * output_stride` floats.
pub fn sample_at(library: &AnimationLibrary, clip: u32, times: &[f32]) -> Vec<f32> {
    let instances: Vec<Instance> = times
        .iter()
        .map(|&t| Instance::new(clip, f64::from(t)))
        .collect();
    cpu::sample(library, &instances).unwrap()
}

/// A library with every interpolation, property and value kind.
pub fn mixed_clips(rng: &mut Rng) -> (Rig, Vec<Clip>) {
    let mut b = Rig::builder();
    let mut parent = None;
    for i in 0..5 {
        let n = b.node(
            parent,
            NodeTransform::translation([0.0, 0.3, 0.05 * i as f32]),
        );
        b.name(n, format!("n{i}"));
        parent = Some(n);
    }
    let six = b.mesh(6, vec![0.0; 6]);
    let four = b.mesh(4, vec![0.0; 4]);
    let m6 = b.node(Some(0), NodeTransform::IDENTITY);
    b.attach(m6, six, None);
    let m4 = b.node(Some(1), NodeTransform::IDENTITY);
    b.attach(m4, four, None);
    let rig = b.build().unwrap();
    let irregular: Arc<[f32]> = Arc::from(
        (0..24)
            .scan(0.0f32, |t, _| {
                *t += 0.02 + 0.05 * rng.next();
                Some(*t)
            })
            .collect::<Vec<f32>>(),
    );
    let uniform: Arc<[f32]> = (0..40).map(|k| k as f32 / 30.0).collect();
    let n = irregular.len();
    let m = uniform.len();
    // Consecutive keys on opposite hemispheres and nearly opposite
    // rotations: q, then -q' with q' a few degrees from q.
    let mut near_opposite = Vec::new();
    let mut q = unit([0.3, -0.2, 0.5, 0.8]);
    for k in 0..m {
        let turn = axis_angle([0.0, 0.0, 1.0], 0.05 + 0.02 * rng.signed());
        q = unit(quat_mul(q, turn));
        let sign = if k % 2 == 1 { -1.0 } else { 1.0 };
        near_opposite.extend(q.map(|x| x * sign));
    }
    let cubic_rotation: Vec<f32> = (0..n)
        .flat_map(|k| {
            let q = axis_angle(
                unit([1.0, 0.5, 0.2, 0.0])[..3].try_into().unwrap(),
                0.1 * k as f32,
            );
            let tangent = [
                0.1 * rng.signed(),
                0.1 * rng.signed(),
                0.1 * rng.signed(),
                0.0,
            ];
            let out_tangent = [0.1 * rng.signed(), 0.0, 0.05, 0.1 * rng.signed()];
            [tangent, q, out_tangent].concat()
        })
        .collect();
    let vectors = |len: usize, per: usize, rng: &mut Rng| -> Vec<f32> {
        (0..len * per)
            .map(|i| (i as f32 * 0.37).sin() + 0.01 * rng.signed())
            .collect()
    };
    let emissive = Arc::new(PointerTarget::new(
        "/materials/0/emissiveFactor",
        PointerType::Float3,
        vec![0.0; 3],
    ));
    let visible = Arc::new(PointerTarget::new(
        "/nodes/0/extensions/KHR_node_visibility/visible",
        PointerType::Bool,
        vec![1.0],
    ));
    let clip_a = Clip::new(
        "mixed",
        vec![
            Track::new(
                0,
                Property::Translation,
                Interpolation::Linear,
                irregular.clone(),
                vectors(n, 3, rng),
            ),
            Track::new(
                1,
                Property::Rotation,
                Interpolation::Linear,
                uniform.clone(),
                near_opposite,
            ),
            Track::new(
                2,
                Property::Rotation,
                Interpolation::CubicSpline,
                irregular.clone(),
                cubic_rotation,
            ),
            Track::new(
                3,
                Property::Scale,
                Interpolation::CubicSpline,
                uniform.clone(),
                vectors(m, 9, rng),
            ),
            Track::new(
                4,
                Property::Rotation,
                Interpolation::Step,
                uniform.clone(),
                {
                    (0..m)
                        .flat_map(|k| axis_angle([0.0, 1.0, 0.0], 0.3 * k as f32))
                        .collect()
                },
            ),
            Track::weights(
                m6,
                6,
                Interpolation::Linear,
                uniform.clone(),
                vectors(m, 6, rng).iter().map(|x| x.abs()).collect(),
            ),
            Track::weights(
                m4,
                4,
                Interpolation::CubicSpline,
                irregular.clone(),
                vectors(n, 12, rng),
            ),
            Track::for_pointer(
                emissive,
                Interpolation::Linear,
                uniform.clone(),
                vectors(m, 3, rng),
            ),
        ],
    );
    let clip_b = Clip::new(
        "smooth",
        vec![
            // Constant, and exactly linear: one key, and two.
            Track::new(
                0,
                Property::Rotation,
                Interpolation::Linear,
                uniform.clone(),
                axis_angle([1.0, 0.0, 0.0], 0.4).repeat(m),
            ),
            Track::new(
                1,
                Property::Translation,
                Interpolation::Linear,
                uniform.clone(),
                (0..m).flat_map(|k| [0.1 * k as f32, 0.0, 1.0]).collect(),
            ),
            Track::weights(
                m6,
                6,
                Interpolation::Step,
                irregular.clone(),
                vectors(n, 6, rng),
            ),
            Track::for_pointer(
                visible,
                Interpolation::Step,
                irregular.clone(),
                (0..n).map(|k| (k % 2) as f32).collect(),
            ),
        ],
    );
    (rig, vec![clip_a, clip_b])
}

/// Times before, on, between (midpoints and elsewhere) and after the keys
/// of every track of `clip`.
pub fn probe_times(clip: &Clip) -> Vec<f32> {
    let mut times = vec![-0.5, 0.0, clip.duration() + 1.0];
    for t in &clip.tracks {
        for w in t.times.windows(2) {
            times.extend([w[0], w[1], 0.5 * (w[0] + w[1]), w[0] + 0.3 * (w[1] - w[0])]);
        }
    }
    times
}
