//! GPU vs CPU twin, element by element, on the fallback adapter.
//!
//! Tolerances: STEP and times on or outside the keys are
//! bit-exact (the shader copies the stored value); unit-quaternion
//! components within 2e-5 absolute, compared up to sign; everything else
//! within 1e-5 relative (|gpu - cpu| <= 1e-5 * max(1, |cpu|)). The shader
//! and the CPU twin run the same f32 operations (polynomial sin/acos
//! included), so the remaining differences are the driver's rounding and FMA
//! contraction, a few ULPs.

use super::common;
use crate::tests::Derived;

use super::facades::GpuSampler;
use crate::tests::common::headless::{request_device_with, AdapterChoice, DeviceOptions, Headless};
use keyframe_gpu::tables::blocks::MAX_BLOCK_ROW_RUN;
use keyframe_gpu::{
    cpu, AnimationLibrary, Clip, Error, Instance, Interpolation, Property, SamplerPlan, Track,
    WrapMode,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// Checks every component of every instance against the CPU twin.
fn assert_matches(lib: &AnimationLibrary, instances: &[Instance], gpu: &[f32], cpu: &[f32]) {
    assert_eq!(gpu.len(), cpu.len(), "output length");
    super::each_track_output(lib, instances, gpu, cpu, |i, inst, j, track, g, c| {
        let gclip = lib.tables().clip_table()[inst.clip as usize];
        let ctx = format!(
            "instance {i} clip {} track {j} ({:?} {:?}) clip time {} (duration {}): gpu {g:?} cpu {c:?}",
            inst.clip, track.interpolation, track.property, inst.time, gclip.duration
        );
        super::assert_track_matches(track, inst.time, g, c, &ctx);
    });
}

fn quat(axis: [f32; 3], angle: f32) -> [f32; 4] {
    let n = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
    let (s, c) = (angle * 0.5).sin_cos();
    [axis[0] / n * s, axis[1] / n * s, axis[2] / n * s, c]
}

/// Values for `keys` keys of `property`, smooth but distinct per key;
/// rotations are unit quaternions, with a sign flip on odd keys so that
/// neighbouring keys have a negative dot product half of the time.
fn values_for(property: Property, width: u32, interp: Interpolation, keys: usize) -> Vec<f32> {
    let per = interp.elements_per_key();
    let mut v = Vec::new();
    for k in 0..keys {
        for e in 0..per {
            let is_value = per == 1 || e == 1;
            match property {
                Property::Rotation => {
                    let q = quat([1.0, 2.0 + k as f32, 0.5], 0.7 * k as f32 + 0.3 * e as f32);
                    let sign = if k % 2 == 1 { -1.0 } else { 1.0 };
                    if is_value {
                        v.extend(q.iter().map(|c| c * sign));
                    } else {
                        v.extend(q.iter().map(|c| 0.3 * c));
                    }
                }
                _ => {
                    for c in 0..width {
                        let x = (k as f32 * 1.3 + c as f32 * 0.7 + e as f32).sin() * 2.0;
                        v.push(if is_value { x } else { 0.5 * x - 0.25 });
                    }
                }
            }
        }
    }
    v
}

/// A track of `property` on `node` with values_for's values, `width`
/// floats per key for morph weights (the other properties' own width).
fn track_of(
    node: u32,
    property: Property,
    interp: Interpolation,
    times: Vec<f32>,
    weights: u32,
) -> Track {
    let width = property.fixed_width().unwrap_or(weights);
    let values = values_for(property, width, interp, times.len());
    let mut t = Track::new(node, property, interp, times, values);
    t.width = width;
    t
}

/// Every interpolation, for the libraries that take each.
const INTERPOLATIONS: [Interpolation; 3] = [
    Interpolation::Step,
    Interpolation::Linear,
    Interpolation::CubicSpline,
];

/// Every property of a node or mesh.
const PROPERTIES: [Property; 4] = [
    Property::Translation,
    Property::Rotation,
    Property::Scale,
    Property::Weights,
];

/// One clip per interpolation x property; keys with unequal intervals
/// starting after 0.
fn every_mode_library() -> AnimationLibrary {
    let times: Vec<f32> = vec![0.25, 0.5, 1.5, 1.75, 3.0];
    let mut clips = Vec::new();
    for interp in INTERPOLATIONS {
        let mut tracks = Vec::new();
        for (node, property) in PROPERTIES.into_iter().enumerate() {
            tracks.push(track_of(node as u32, property, interp, times.clone(), 5));
        }
        // A single-key track (constant) where the interpolation allows it.
        if interp != Interpolation::CubicSpline {
            tracks.push(Track::new(
                9,
                Property::Translation,
                interp,
                vec![1.0],
                vec![4.0, 5.0, 6.0],
            ));
        }
        clips.push(Clip::new(format!("{interp:?}"), tracks));
    }
    AnimationLibrary::new(clips).unwrap()
}

fn probe_times() -> Vec<f64> {
    // Before, on every key, between keys (incl. near both ends), after.
    vec![
        -1.0, 0.0, 0.25, 0.3, 0.375, 0.5, 0.5001, 1.0, 1.4999, 1.5, 1.6, 1.75, 2.2, 2.9999, 3.0,
        3.5, 100.0,
    ]
}

#[test]
fn every_interpolation_and_property_matches_cpu() {
    let Some(h) = common::gpu("every_interpolation_and_property_matches_cpu") else {
        return;
    };
    let lib = every_mode_library();
    let mut instances = Vec::new();
    for clip in 0..lib.clips().len() as u32 {
        for &t in &probe_times() {
            instances.push(Instance::new(clip, t));
        }
    }
    // Every plan, whatever the adapter would pick: the same results.
    every_plan_matches_cpu(&h, &lib, &instances);
}

/// Samples `instances` of `lib` with a sampler of each of [`PLANS`] and
/// compares every output with the CPU twin's.
fn every_plan_matches_cpu(h: &Headless, lib: &AnimationLibrary, instances: &[Instance]) {
    let cpu = cpu::sample(lib, instances).unwrap();
    for plan in PLANS {
        let mut sampler =
            super::sampler_with(&h.device, &h.queue, lib, instances.len() as u32, plan).unwrap();
        assert_eq!(sampler.plan(), plan);
        let gpu = sampler.sample(&h.device, &h.queue, instances).unwrap();
        assert_matches(lib, instances, &gpu, &cpu);
    }
}

/// The sampler's plans ([`SamplerPlan::Auto`] picks one of them).
const PLANS: [SamplerPlan; 3] = [
    SamplerPlan::Reference,
    SamplerPlan::Grouped,
    SamplerPlan::ClipBlocks,
];

/// The reference plan is one dispatch over every track; the CPU-adapter
/// and clip-blocks plans one per track group with tracks; Auto picks by
/// the adapter's kind and, on CPU adapters, the library's alignment and
/// the instances per clip.
#[test]
fn plans_dispatch_as_documented() {
    let Some(h) = common::gpu("plans_dispatch_as_documented") else {
        return;
    };
    let lib = every_mode_library();
    let instances = [Instance::new(0, 0.25), Instance::new(1, 0.5)];
    let mut reference =
        super::sampler_with(&h.device, &h.queue, &lib, 2, SamplerPlan::Reference).unwrap();
    reference.set_instances(&h.queue, &instances).unwrap();
    let groups: Vec<u32> = reference.workgroups().map(|(g, _)| g).collect();
    assert_eq!(groups, [keyframe_gpu::layout::GROUP_ALL]);
    let mut tuned =
        super::sampler_with(&h.device, &h.queue, &lib, 2, SamplerPlan::Grouped).unwrap();
    tuned.set_instances(&h.queue, &instances).unwrap();
    let groups: Vec<u32> = tuned.workgroups().map(|(g, _)| g).collect();
    // every_mode_library has tracks of all five groups.
    assert_eq!(groups, [0, 1, 2, 3, 4]);
    let auto = super::sampler(&h.device, &h.queue, &lib, 2).unwrap();
    let cpu_adapter = h.adapter.get_info().device_type == wgpu::DeviceType::Cpu;
    let want = if cpu_adapter {
        SamplerPlan::Grouped
    } else {
        SamplerPlan::Reference
    };
    assert_eq!(auto.plan(), want);
    // With 64 instances per clip (full blocks) Auto takes the clip-blocks
    // plan on CPU adapters whatever the library; one instance fewer, not.
    let clips = lib.tables().clip_table().len() as u32;
    assert!(!keyframe_gpu::plan::full_blocks(
        lib.tables(),
        64 * clips - 1
    ));
    assert!(keyframe_gpu::plan::full_blocks(lib.tables(), 64 * clips));
    let below = super::sampler(&h.device, &h.queue, &lib, 64 * clips - 1).unwrap();
    assert_eq!(below.plan(), want);
    let full = super::sampler(&h.device, &h.queue, &lib, 64 * clips).unwrap();
    let want_full = if cpu_adapter {
        SamplerPlan::ClipBlocks
    } else {
        SamplerPlan::Reference
    };
    assert_eq!(full.plan(), want_full);
    // The clip-blocks plan: the same groups; Auto picks it on CPU adapters
    // for a library whose every group is vec4-aligned (rotations only).
    let mut blocks =
        super::sampler_with(&h.device, &h.queue, &lib, 2, SamplerPlan::ClipBlocks).unwrap();
    blocks.set_instances(&h.queue, &instances).unwrap();
    let groups: Vec<u32> = blocks.workgroups().map(|(g, _)| g).collect();
    assert_eq!(groups, [0, 1, 2, 3, 4]);
    assert!(!keyframe_gpu::plan::vec4_library(lib.tables()));
    let rotations = AnimationLibrary::new(vec![Clip::new(
        "r",
        vec![Track::new(
            0,
            Property::Rotation,
            Interpolation::Linear,
            vec![0.0, 1.0],
            vec![0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0],
        )],
    )])
    .unwrap();
    assert!(keyframe_gpu::plan::vec4_library(rotations.tables()));
    let auto = super::sampler(&h.device, &h.queue, &rotations, 2).unwrap();
    let want = if cpu_adapter {
        SamplerPlan::ClipBlocks
    } else {
        SamplerPlan::Reference
    };
    assert_eq!(auto.plan(), want);
}

#[test]
fn clip_groups_partition_each_clips_rows() {
    // One clip of every interpolation x property, in an order that mixes
    // them, and the every-mode clips.
    let times = vec![0.0, 0.5, 1.0];
    let mut mixed = Vec::new();
    for (n, (property, interp)) in [
        (Property::Scale, Interpolation::Linear),
        (Property::Rotation, Interpolation::CubicSpline),
        (Property::Translation, Interpolation::Step),
        (Property::Rotation, Interpolation::Linear),
        (Property::Weights, Interpolation::Linear),
        (Property::Rotation, Interpolation::Step),
        (Property::Translation, Interpolation::CubicSpline),
        (Property::Rotation, Interpolation::Linear),
    ]
    .into_iter()
    .enumerate()
    {
        let width = property.fixed_width().unwrap_or(2);
        let values = values_for(property, width, interp, times.len());
        let mut t = Track::new(n as u32, property, interp, times.clone(), values);
        t.width = width;
        mixed.push(t);
    }
    let mut clips = every_mode_library().clips().to_vec();
    clips.push(Clip::new("mixed", mixed));
    let lib = AnimationLibrary::new(clips).unwrap();
    for (c, clip) in lib.tables().clip_table().iter().enumerate() {
        // The groups follow each other from the clip's first row and add
        // up to its tracks.
        assert_eq!(clip.group_first[0], clip.track_offset, "clip {c}");
        for g in 0..4 {
            assert_eq!(
                clip.group_first[g + 1],
                clip.group_first[g] + clip.group_count[g],
                "clip {c} group {g}"
            );
        }
        assert_eq!(
            clip.group_count.iter().sum::<u32>(),
            clip.track_count,
            "clip {c}"
        );
        // Each row is in its group by the definition: CUBICSPLINE
        // rotations in 3, other CUBICSPLINE tracks in 1, STEP in 4, LINEAR
        // rotations in 0, other LINEAR tracks in 2.
        for g in 0..5 {
            let first = clip.group_first[g] as usize;
            for row in &lib.tables().tracks()[first..first + clip.group_count[g] as usize] {
                let rotation = row.kind == keyframe_gpu::ValueKind::Rotation as u32;
                let want = if row.interpolation == Interpolation::CubicSpline as u32 {
                    if rotation {
                        3
                    } else {
                        1
                    }
                } else if row.interpolation == Interpolation::Step as u32 {
                    4
                } else if rotation {
                    0
                } else {
                    2
                };
                assert_eq!(want, g, "clip {c}: row {row:?} in group {g}");
            }
        }
    }
    let mixed = lib.tables().clip_table().last().unwrap();
    assert_eq!(mixed.group_count, [2, 1, 2, 1, 2]);
}

#[test]
fn sampler_shares_the_librarys_arrays_instead_of_copying_them() {
    let lib = every_mode_library();
    let copy = lib.clone();
    assert!(
        std::ptr::eq(lib.values(), copy.values()),
        "clone copied the values"
    );
    assert!(
        std::ptr::eq(lib.times(), copy.times()),
        "clone copied the times"
    );
    let Some(h) = common::gpu("sampler_shares_the_librarys_arrays_instead_of_copying_them") else {
        return;
    };
    let sampler = super::sampler(&h.device, &h.queue, &lib, 4).unwrap();
    assert!(
        std::ptr::eq(sampler.library().values(), lib.values()),
        "the sampler holds a copy of the library's values"
    );
    assert!(std::ptr::eq(
        sampler.library().tables().tracks(),
        lib.tables().tracks()
    ));
}

#[test]
fn quaternion_edge_cases_match_cpu() {
    let Some(h) = common::gpu("quaternion_edge_cases_match_cpu") else {
        return;
    };
    let q0 = quat([0.0, 1.0, 0.0], 0.2);
    let near = quat([0.0, 1.0, 0.0], 0.2 + 0.01); // dot > 0.9995: nlerp branch
    let opposite = quat([0.3, 1.0, 0.0], 2.5).map(|c| -c); // negative dot
    let half_turn = quat([1.0, 0.0, 0.0], 3.0); // large angle
    let mut values = Vec::new();
    for q in [q0, near, opposite, half_turn, q0] {
        values.extend(q);
    }
    let track = Track::new(
        0,
        Property::Rotation,
        Interpolation::Linear,
        vec![0.0, 1.0, 2.0, 3.0, 4.0],
        values,
    );
    let lib = AnimationLibrary::new(vec![Clip::new("quats", vec![track])]).unwrap();
    let instances: Vec<_> = (0..=64)
        .map(|i| Instance::new(0, i as f64 / 16.0))
        .collect();
    let mut sampler = super::sampler(&h.device, &h.queue, &lib, 128).unwrap();
    let gpu = sampler.sample(&h.device, &h.queue, &instances).unwrap();
    let cpu = cpu::sample(&lib, &instances).unwrap();
    assert_matches(&lib, &instances, &gpu, &cpu);
}

#[test]
fn wrap_modes_and_instance_updates_match_cpu() {
    let Some(h) = common::gpu("wrap_modes_and_instance_updates_match_cpu") else {
        return;
    };
    let lib = every_mode_library();
    let mut sampler = super::sampler(&h.device, &h.queue, &lib, 256).unwrap();
    for frame in 0..3 {
        let instances: Vec<_> = (0..200)
            .map(|i| {
                let wrap = [WrapMode::Clamp, WrapMode::Repeat, WrapMode::PingPong][i % 3];
                let t = (i as f64 - 50.0) * 0.173 + frame as f64 * 1e6;
                Instance::new((i % 3) as u32, t).with_wrap(wrap)
            })
            .collect();
        let gpu = sampler.sample(&h.device, &h.queue, &instances).unwrap();
        let cpu = cpu::sample(&lib, &instances).unwrap();
        assert_matches(&lib, &instances, &gpu, &cpu);
    }
}

fn arb_track(keys: usize) -> impl Strategy<Value = Track> {
    let interp = prop_oneof![
        Just(Interpolation::Step),
        Just(Interpolation::Linear),
        Just(Interpolation::CubicSpline)
    ];
    let prop = prop_oneof![
        Just(Property::Translation),
        Just(Property::Rotation),
        Just(Property::Scale),
        Just(Property::Weights)
    ];
    (
        interp,
        prop,
        1u32..6,
        proptest::collection::vec(0.01f32..1.0, keys),
        any::<u64>(),
        0.0f32..2.0,
    )
        .prop_map(move |(interp, property, m, gaps, seed, start)| {
            let interp = if keys < 2 && interp == Interpolation::CubicSpline {
                Interpolation::Linear
            } else {
                interp
            };
            let width = property.fixed_width().unwrap_or(m);
            let mut t = start;
            let times: Vec<f32> = gaps
                .iter()
                .map(|g| {
                    t += g;
                    t
                })
                .collect();
            let mut state = seed | 1;
            let mut rnd = move || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
            };
            let per = interp.elements_per_key();
            let mut values = Vec::new();
            for e in 0..keys * per {
                if property == Property::Rotation {
                    let mut q = [rnd(), rnd(), rnd(), rnd() + 0.1];
                    let n = q.iter().map(|c| c * c).sum::<f32>().sqrt();
                    let is_value = per == 1 || e % 3 == 1;
                    if is_value {
                        q.iter_mut().for_each(|c| *c /= n);
                    }
                    values.extend(q);
                } else {
                    values.extend((0..width).map(|_| rnd() * 10.0));
                }
            }
            let mut track = Track::new(0, property, interp, times, values);
            track.width = width;
            track
        })
}

fn arb_clip() -> impl Strategy<Value = Clip> {
    (1usize..40)
        .prop_flat_map(|keys| proptest::collection::vec(arb_track(keys), 1..6))
        .prop_map(|tracks| Clip::new("random", tracks))
}

#[test]
fn random_libraries_match_cpu() {
    let Some(h) = common::gpu("random_libraries_match_cpu") else {
        return;
    };
    let strategy = (
        proptest::collection::vec(arb_clip(), 1..5),
        proptest::collection::vec((any::<u32>(), -20.0f64..40.0, 0u8..3), 1..300),
    );
    let mut runner = TestRunner::new(Config {
        cases: 24,
        ..Config::default()
    });
    runner
        .run(&strategy, |(clips, raw)| {
            let lib = AnimationLibrary::new(clips).unwrap();
            let n = lib.clips().len() as u32;
            let instances: Vec<_> = raw
                .iter()
                .map(|&(c, t, w)| {
                    let wrap = [WrapMode::Clamp, WrapMode::Repeat, WrapMode::PingPong][w as usize];
                    Instance::new(c % n, t).with_wrap(wrap)
                })
                .collect();
            every_plan_matches_cpu(&h, &lib, &instances);
            Ok(())
        })
        .unwrap();
}

#[test]
fn dispatch_goes_2d_past_the_workgroup_limit() {
    // Lower the per-dimension workgroup limit to 4 so that a modest dispatch
    // needs a 2D grid; results must still match the CPU everywhere.
    let Ok(h) = request_device_with(&DeviceOptions::new(AdapterChoice::Fallback), |mut l| {
        l.max_compute_workgroups_per_dimension = 4;
        l
    }) else {
        // Same skip/require rule as common::gpu.
        common::gpu("dispatch_goes_2d_past_the_workgroup_limit");
        return;
    };
    let lib = every_mode_library();
    // 150 instances x 5 tracks = 750 invocations = 12 workgroups of 64.
    let instances: Vec<_> = (0..150)
        .map(|i| Instance::new(i % 3, i as f64 * 0.0123))
        .collect();
    let mut sampler = super::sampler(&h.device, &h.queue, &lib, 150).unwrap();
    let gpu = sampler.sample(&h.device, &h.queue, &instances).unwrap();
    assert_grids_capped(&sampler, &lib, 150);
    let cpu = cpu::sample(&lib, &instances).unwrap();
    assert_matches(&lib, &instances, &gpu, &cpu);
    clip_blocks_fill_a_2d_grid(&h);

    // Past even the 2D grid (4 x 4 workgroups of 64): refused, naming the limit.
    let err = super::sampler(&h.device, &h.queue, &lib, 1_000_000).unwrap_err();
    assert!(
        matches!(
            err,
            Error::LimitExceeded {
                limit_name: "max_compute_workgroups_per_dimension",
                ..
            }
        ),
        "{err}"
    );
}

/// Each of `sampler`'s grids (for `instances` instances of `lib`) is at
/// most 4 workgroups wide and covers its group's invocations, and one of
/// them uses a second dimension.
fn assert_grids_capped(sampler: &GpuSampler, lib: &AnimationLibrary, instances: u32) {
    // One dispatch per track group; each grid covers 150 x that group's
    // invocations per instance (its tracks per instance, two to an
    // invocation in the CPU-adapter plan) in workgroups of 64, at most 4
    // wide.
    let grids: Vec<_> = sampler.workgroups().collect();
    assert!(!grids.is_empty());
    for &(g, (x, y, z)) in &grids {
        assert_eq!(z, 1);
        let rows = lib.tables().group_tracks_per_instance(g as usize);
        let per_invocation = match sampler.plan() {
            SamplerPlan::Reference => 1,
            _ => keyframe_gpu::plan::invocation_rows(g, rows),
        };
        let invocations = instances * rows.div_ceil(per_invocation);
        let workgroups = invocations.div_ceil(64);
        assert_eq!(
            x,
            workgroups.min(4),
            "group {g}: grid width capped at the limit"
        );
        assert!(
            x * y >= workgroups && x * (y - 1) < workgroups,
            "group {g}: {x} x {y}"
        );
    }
    assert!(
        grids.iter().any(|&(_, (_, y, _))| y > 1),
        "a second grid dimension is used: {grids:?}"
    );
}

/// The clip-blocks plan on a device limited to 4 workgroups a dimension
/// lays its workgroups out in x then y, and refuses a capacity past the
/// grid.
fn clip_blocks_fill_a_2d_grid(h: &Headless) {
    // The clip-blocks plan: a workgroup per (block, run of up to
    // MAX_BLOCK_ROW_RUN rows), in x then y. Three clips of 70 rotation
    // tracks: 70 rows in the LINEAR-rotation group, in runs of 32, 32 and
    // 6, so three workgroups per block; 20 instances of each clip are one
    // block per clip, 9 workgroups, over 4 x 3. A capacity of 150 could
    // need 5 blocks (max_blocks), 15 workgroups: fits 4 x 4; 300, 7
    // blocks, 21 workgroups: refused.
    let rows = 70u32;
    assert!(rows > 2 * MAX_BLOCK_ROW_RUN && rows < 3 * MAX_BLOCK_ROW_RUN);
    let rotation = |j: u32| {
        Track::new(
            j,
            Property::Rotation,
            Interpolation::Linear,
            vec![0.0, 0.5, 1.0],
            [
                [0.0, 0.0, 0.0, 1.0],
                [0.0, 0.6, 0.0, 0.8],
                [0.8, 0.0, 0.0, 0.6],
            ]
            .concat(),
        )
    };
    let wide = AnimationLibrary::new(
        (0..3)
            .map(|c| Clip::new(format!("c{c}"), (0..rows).map(rotation).collect()))
            .collect(),
    )
    .unwrap();
    let refused = super::sampler_with(&h.device, &h.queue, &wide, 300, SamplerPlan::ClipBlocks);
    assert!(
        matches!(refused, Err(Error::LimitExceeded { .. })),
        "{refused:?}"
    );
    let few: Vec<Instance> = (0..60)
        .map(|i| Instance::new(i % 3, f64::from(i) * 0.0171))
        .collect();
    let mut blocks =
        super::sampler_with(&h.device, &h.queue, &wide, 150, SamplerPlan::ClipBlocks).unwrap();
    let gpu = blocks.sample(&h.device, &h.queue, &few).unwrap();
    assert_matches(&wide, &few, &gpu, &cpu::sample(&wide, &few).unwrap());
    let grids: Vec<_> = blocks.workgroups().collect();
    assert_eq!(grids.len(), 1, "one group: {grids:?}");
    let (_, (x, y, z)) = grids[0];
    assert_eq!((x, y, z), (4, 3, 1), "3 blocks x 3 runs over 4 x 3");
}

#[test]
fn storage_binding_limit_is_refused_with_numbers() {
    let Ok(h) = request_device_with(&DeviceOptions::new(AdapterChoice::Fallback), |mut l| {
        l.max_storage_buffer_binding_size = 1024;
        l
    }) else {
        common::gpu("storage_binding_limit_is_refused_with_numbers");
        return;
    };
    // 3600 bytes of values, in whole vec4s and one vec4 of zeros after
    // them (what the decoder's windows read past the end): a buffer of
    // 3616 bytes > 1024.
    let keys = 300;
    let times: Vec<f32> = (0..keys).map(|k| k as f32).collect();
    let track = Track::new(
        0,
        Property::Translation,
        Interpolation::Step,
        times,
        vec![0.0; keys * 3],
    );
    let lib = AnimationLibrary::new(vec![Clip::new("big", vec![track])]).unwrap();
    let err = super::sampler(&h.device, &h.queue, &lib, 1).unwrap_err();
    match &err {
        Error::LimitExceeded {
            what,
            needed,
            limit_name,
            limit,
        } => {
            assert_eq!(*what, "key values");
            assert_eq!(*needed, 3616);
            assert_eq!(*limit_name, "max_storage_buffer_binding_size");
            assert_eq!(*limit, 1024);
        }
        other => panic!("unexpected error {other}"),
    }
    assert!(err.to_string().contains("3616"), "{err}");
}

/// A library whose key textures span several rows: tracks of 300 keys,
/// irregular (odd keys 0.8 of an interval late: a bucket table)
/// and uniform (direct index), and one of two keys (searched from the
/// middle).
fn multi_row_library() -> AnimationLibrary {
    let irregular: Vec<f32> = (0..300)
        .map(|k| k as f32 * 0.01 + (k % 2) as f32 * 0.008)
        .collect();
    let uniform: Vec<f32> = (0..300).map(|k| k as f32 / 100.0).collect();
    let values = |n: usize| -> Vec<f32> { (0..n * 3).map(|i| (i as f32 * 0.37).sin()).collect() };
    let tracks = vec![
        Track::new(
            0,
            Property::Translation,
            Interpolation::Linear,
            irregular,
            values(300),
        ),
        Track::new(
            1,
            Property::Scale,
            Interpolation::Linear,
            uniform,
            values(300),
        ),
        Track::new(
            2,
            Property::Translation,
            Interpolation::Linear,
            vec![0.5, 2.5],
            values(2),
        ),
    ];
    AnimationLibrary::new(vec![Clip::new("rows", tracks)]).unwrap()
}

/// On a device whose `max_texture_dimension_2d` is 256, the key textures
/// are 256 texels wide (override ROW_SHIFT = 8) and the keys span several
/// rows: the results still match the CPU twin.
#[test]
fn key_textures_narrower_than_4096_match_cpu() {
    let Ok(h) = request_device_with(&DeviceOptions::new(AdapterChoice::Fallback), |mut l| {
        l.max_texture_dimension_2d = 256;
        l
    }) else {
        common::gpu("key_textures_narrower_than_4096_match_cpu");
        return;
    };
    let lib = multi_row_library();
    assert!(lib.times().len() > 2 * 256, "the times must span rows");
    let keys =
        crate::gpu::key_textures::KeyTextures::new(&h.device, &h.queue, lib.tables()).unwrap();
    assert_eq!(keys.row_shift(), 8);
    let instances: Vec<_> = (0..=400)
        .map(|i| Instance::new(0, f64::from(i) * 0.0075 - 0.1))
        .collect();
    let mut sampler = super::sampler(&h.device, &h.queue, &lib, instances.len() as u32).unwrap();
    let gpu = sampler.sample(&h.device, &h.queue, &instances).unwrap();
    let cpu = cpu::sample(&lib, &instances).unwrap();
    assert_matches(&lib, &instances, &gpu, &cpu);
}

/// Keys that need more texture rows than the device allows are refused
/// with the numbers, before anything is created.
#[test]
fn key_texture_rows_past_the_limit_are_refused_with_numbers() {
    let Ok(h) = request_device_with(&DeviceOptions::new(AdapterChoice::Fallback), |mut l| {
        l.max_texture_dimension_2d = 16;
        l
    }) else {
        common::gpu("key_texture_rows_past_the_limit_are_refused_with_numbers");
        return;
    };
    // Search texels: the irregular track's 2 * 299 buckets and 300 keys,
    // the uniform track's 300 keys (indexed directly, no buckets), the
    // 2-key track's 2: 1,200 texels in rows of 16, 75 rows > 16.
    let lib = multi_row_library();
    let scales: Vec<f32> = lib
        .tables()
        .tracks()
        .iter()
        .map(|t| t.lookup_scale)
        .collect();
    let kinds = |f: fn(&f32) -> bool| scales.iter().filter(|s| f(s)).count();
    assert_eq!(
        (
            kinds(|s| *s > 0.0),
            kinds(|s| *s < 0.0),
            kinds(|s| *s == 0.0)
        ),
        (1, 1, 1),
        "a table, a direct index, a middle start: {scales:?}"
    );
    let err = super::sampler(&h.device, &h.queue, &lib, 1).unwrap_err();
    match &err {
        Error::TextureRowsExceeded {
            what,
            rows,
            width,
            limit,
        } => {
            assert_eq!(*what, "key search table");
            assert_eq!(*rows, (2 * 299 + 300 + 300 + 2u64).div_ceil(16));
            assert_eq!(*width, 16);
            assert_eq!(*limit, 16);
        }
        other => panic!("unexpected error {other}"),
    }
    assert!(
        err.to_string().contains("max_texture_dimension_2d"),
        "{err}"
    );
}

#[test]
fn bad_instances_are_refused_and_keep_the_previous_table() {
    let Some(h) = common::gpu("bad_instances_are_refused_and_keep_the_previous_table") else {
        return;
    };
    let lib = every_mode_library();
    let mut sampler = super::sampler(&h.device, &h.queue, &lib, 4).unwrap();
    let good = [Instance::new(1, 0.4)];
    let before = sampler.sample(&h.device, &h.queue, &good).unwrap();
    for bad in [
        vec![Instance::new(7, 0.0)],
        vec![Instance::new(0, f64::NAN)],
        vec![Instance::new(0, f64::INFINITY)],
        vec![Instance::new(0, 0.0); 5],
    ] {
        assert!(sampler.set_instances(&h.queue, &bad).is_err());
        assert_eq!(sampler.instance_count(), 1);
    }
    let mut encoder = h.device.create_command_encoder(&Default::default());
    sampler.record(&mut encoder);
    h.queue.submit([encoder.finish()]);
    let after = sampler.read_back(&h.device, &h.queue).unwrap();
    assert_eq!(before, after);
}

/// The output buffer binds in a caller's own pipeline with no copy: a
/// caller kernel doubles every sampled value into its own buffer.
#[test]
fn output_buffer_binds_in_a_callers_pipeline() {
    let Some(h) = common::gpu("output_buffer_binds_in_a_callers_pipeline") else {
        return;
    };
    let (device, queue) = (&h.device, &h.queue);
    let lib = every_mode_library();
    let instances: Vec<_> = (0..3).map(|c| Instance::new(c, 0.8)).collect();
    let mut sampler = super::sampler(device, queue, &lib, 3).unwrap();
    sampler.set_instances(queue, &instances).unwrap();
    let n = (3 * lib.output_stride()) as u64;
    let dst = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("test.dst"),
        size: n * 4,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let read = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("test.read"),
        size: n * 4,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: None,
        entries: &[
            keyframe_gpu::gpu::output_layout_entry(0, wgpu::ShaderStages::COMPUTE, 4),
            wgpu::BindGroupLayoutEntry {
                binding: 1,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only: false },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            },
        ],
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(
            "@group(0) @binding(0) var<storage, read> src: array<f32>;
             @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
             @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                 if (g.x < arrayLength(&dst)) { dst[g.x] = 2.0 * src[g.x]; }
             }"
            .into(),
        ),
    });
    let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: None,
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: Some(&pl),
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let bg = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &layout,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: sampler.output_buffer().as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: dst.as_entire_binding(),
            },
        ],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    sampler.record(&mut encoder);
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bg, &[]);
        pass.dispatch_workgroups((n as u32).div_ceil(64), 1, 1);
    }
    encoder.copy_buffer_to_buffer(&dst, 0, &read, 0, n * 4);
    queue.submit([encoder.finish()]);
    let slice = read.slice(..);
    slice.map_async(wgpu::MapMode::Read, |r| r.unwrap());
    device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    let doubled: Vec<f32> = bytemuck::pod_collect_to_vec(&slice.get_mapped_range().unwrap());
    let cpu = cpu::sample(&lib, &instances).unwrap();
    for (i, (d, c)) in doubled.iter().zip(&cpu).enumerate() {
        assert!(
            (d - 2.0 * c).abs() <= 1e-5 * c.abs().max(1.0),
            "element {i}: {d} vs 2 x {c}"
        );
    }
}

/// A library whose every track is 4 or 8 floats wide (rotations, 8 morph
/// weights), in every interpolation: every track group's values and
/// outputs start at multiples of 4, so the tuned plans read and write them
/// as vec4s (`ALIGNED4`). Enough instances per clip for several blocks of
/// the clip-blocks plan, a partial one included, with the clips
/// interleaved in the instance table.
#[test]
fn vec4_aligned_libraries_match_cpu_in_every_plan() {
    let Some(h) = common::gpu("vec4_aligned_libraries_match_cpu_in_every_plan") else {
        return;
    };
    let times: Vec<f32> = vec![0.25, 0.5, 1.5, 1.75, 3.0];
    let mut clips = Vec::new();
    for interp in INTERPOLATIONS {
        let mut tracks = Vec::new();
        for (node, (property, width)) in [(Property::Rotation, 4), (Property::Weights, 8)]
            .into_iter()
            .enumerate()
        {
            let values = values_for(property, width, interp, times.len());
            let mut t = Track::new(node as u32, property, interp, times.clone(), values);
            t.width = width;
            tracks.push(t);
        }
        clips.push(Clip::new(format!("{interp:?}"), tracks));
    }
    let lib = AnimationLibrary::new(clips).unwrap();
    assert!(lib.output_stride().is_multiple_of(4));
    // Every group, CUBICSPLINE rotations and weights included, takes the
    // vec4 paths.
    assert!(keyframe_gpu::plan::vec4_library(lib.tables()));
    let probes = probe_times();
    let instances: Vec<Instance> = (0..300u32)
        .map(|i| Instance::new(i % 3, probes[(i / 3) as usize % probes.len()]))
        .collect();
    let cpu = cpu::sample(&lib, &instances).unwrap();
    for plan in PLANS {
        let mut sampler =
            super::sampler_with(&h.device, &h.queue, &lib, instances.len() as u32, plan).unwrap();
        let gpu = sampler.sample(&h.device, &h.queue, &instances).unwrap();
        assert_matches(&lib, &instances, &gpu, &cpu);
        // A second frame with fewer instances, all of one clip, reuses
        // the tables.
        let fewer: Vec<Instance> = instances.iter().filter(|i| i.clip == 1).copied().collect();
        let gpu = sampler.sample(&h.device, &h.queue, &fewer).unwrap();
        assert_matches(&lib, &fewer, &gpu, &cpu::sample(&lib, &fewer).unwrap());
    }
}

/// The clip-blocks plan past its uniform heads: a library of more track
/// rows than `ROW_HEAD` reads its rows from storage, and a capacity with
/// more possible blocks than `BLOCK_HEAD` its blocks (both decided when the
/// sampler is made, from the library and the capacity).
#[test]
fn clip_blocks_past_the_uniform_heads_match_cpu() {
    use keyframe_gpu::layout::{BLOCK_HEAD, ROW_HEAD};
    let Some(h) = common::gpu("clip_blocks_past_the_uniform_heads_match_cpu") else {
        return;
    };
    let rotation = |node: u32| {
        Track::new(
            node,
            Property::Rotation,
            Interpolation::Linear,
            vec![0.0, 0.5, 1.0 + node as f32 * 0.001],
            [
                quat([1.0, 0.0, 0.0], 0.1),
                quat([0.0, 1.0, 0.0], 1.0),
                quat([0.0, 0.0, 1.0], 2.0),
            ]
            .concat(),
        )
    };
    let instances: Vec<Instance> = (0..150)
        .map(|i| Instance::new(i % 2, f64::from(i) * 0.0071))
        .collect();
    // Rows: two clips of 600 tracks.
    let many_rows = AnimationLibrary::new(
        (0..2)
            .map(|c| Clip::new(format!("c{c}"), (0..600).map(rotation).collect()))
            .collect(),
    )
    .unwrap();
    assert!(many_rows.tables().tracks().len() > ROW_HEAD as usize);
    // Blocks: a capacity of more than BLOCK_HEAD blocks of 64.
    let many_blocks = AnimationLibrary::new(vec![
        Clip::new("a", vec![rotation(0)]),
        Clip::new("b", vec![rotation(1)]),
    ])
    .unwrap();
    let capacity = 64 * (BLOCK_HEAD + 10);
    for (lib, capacity) in [(&many_rows, 150), (&many_blocks, capacity)] {
        let mut sampler =
            super::sampler_with(&h.device, &h.queue, lib, capacity, SamplerPlan::ClipBlocks)
                .unwrap();
        let gpu = sampler.sample(&h.device, &h.queue, &instances).unwrap();
        assert_matches(
            lib,
            &instances,
            &gpu,
            &cpu::sample(lib, &instances).unwrap(),
        );
    }
}

/// The clip-blocks plan samples a run's rows two at a time, the pair's key
/// searches side by side (`find_segment_pair`, and `slerp_pair` for LINEAR
/// rotations): clips of 1, 2, 3, 5 and 35 LINEAR rotation tracks with
/// irregular keys different in every track, so that runs have an odd row
/// left (paired with itself), clips have fewer rows than the group's
/// largest, and a 35-row clip takes a second run of 3 rows. Every track's
/// keys and values differ, so a pair whose results were swapped or
/// shifted would not match the CPU twin.
#[test]
fn clip_blocks_row_pairs_with_odd_counts_match_cpu() {
    let Some(h) = common::gpu("clip_blocks_row_pairs_with_odd_counts_match_cpu") else {
        return;
    };
    let rotation = |clip: u32, node: u32| {
        let offset = (clip * 40 + node) as f32 * 0.013;
        let times: Vec<f32> = (0..6)
            .map(|k| k as f32 * 0.2 + (k % 2) as f32 * 0.07 + offset)
            .collect();
        let values: Vec<f32> = (0..6)
            .flat_map(|k| {
                quat(
                    [1.0, node as f32 * 0.1, clip as f32 * 0.2],
                    0.3 * k as f32 + 0.01 * node as f32,
                )
            })
            .collect();
        common::linear_rotation(node, times, values)
    };
    let counts = [1u32, 2, 3, 5, 35];
    let lib = AnimationLibrary::new(
        counts
            .iter()
            .enumerate()
            .map(|(c, &n)| {
                Clip::new(
                    format!("c{c}"),
                    (0..n).map(|j| rotation(c as u32, j)).collect(),
                )
            })
            .collect(),
    )
    .unwrap();
    assert_eq!(lib.tables().group_tracks_per_instance(0), 35);
    let mut instances = Vec::new();
    for c in 0..counts.len() as u32 {
        for (i, &t) in probe_times().iter().enumerate() {
            // Spread over [0, 1.5] as well as the probes, several blocks'
            // worth per clip.
            instances.push(Instance::new(c, t));
            instances.push(Instance::new(c, (i as f64 * 0.0917) % 1.5));
        }
    }
    every_plan_matches_cpu(&h, &lib, &instances);
}

/// Irregular key times for the run-keys test: `n` keys from `start`, gaps
/// of 0.02-0.07 s, some of them tiny (keys that no run table separates:
/// run keys of mode 2) unless `apart` (no keys closer than 0.02 s: exact
/// tables, mode 3).
fn run_key_times(seed: u32, start: f32, n: usize, apart: bool) -> Vec<f32> {
    let mut t = start;
    (0..n)
        .map(|k| {
            let at = t;
            let r = ((k as u32).wrapping_mul(2_654_435_761) ^ seed.wrapping_mul(40_503)) % 1000;
            let r = r as f32 / 1000.0;
            t += if r < 0.15 && !apart {
                1e-4 + r * 1e-3
            } else {
                0.02 + 0.05 * r
            };
            at
        })
        .collect()
}

/// The run-keys test's library of 8-bit entries: 40 LINEAR rotations (runs
/// of 32 and 8 rows, starting late and ending early), then every property
/// and interpolation, a few rows each, two sharing their key times.
fn run_keys_library(apart: bool) -> AnimationLibrary {
    let track = |node: u32, property: Property, interp: Interpolation, times: Vec<f32>| {
        track_of(node, property, interp, times, 4)
    };
    let mut clips = vec![Clip::new(
        "rotations",
        (0..40)
            .map(|r| {
                let start = 0.01 * (r % 5) as f32;
                let n = 2 + (r as usize * 7) % 60;
                let times = run_key_times(r, start, n, apart);
                track(r, Property::Rotation, Interpolation::Linear, times)
            })
            .collect(),
    )];
    let shared = run_key_times(99, 0.0, 12, apart);
    let mut mixed = Vec::new();
    for (i, interp) in INTERPOLATIONS.into_iter().enumerate() {
        for (j, property) in PROPERTIES.into_iter().enumerate() {
            for copy in 0..3u32 {
                let node = (i * 12 + j * 3) as u32 + copy;
                let times = if copy == 2 {
                    shared.clone()
                } else {
                    run_key_times(node + 7, 0.03 * copy as f32, 3 + node as usize % 20, apart)
                };
                mixed.push(track(node, property, interp, times));
            }
        }
    }
    clips.push(Clip::new("mixed", mixed));
    AnimationLibrary::new(clips).unwrap()
}

/// The run-keys test's library of 16-bit entries: 36 LINEAR rotations of
/// 257 to 316 keys.
fn long_run_keys_library(apart: bool) -> AnimationLibrary {
    AnimationLibrary::new(vec![Clip::new(
        "long",
        (0..36)
            .map(|r| {
                let times = run_key_times(r + 50, 0.0, 257 + (r as usize * 13) % 60, apart);
                track_of(r, Property::Rotation, Interpolation::Linear, times, 4)
            })
            .collect(),
    )])
    .unwrap()
}

/// The clip-blocks plan's run keys (the first guess of each row's key
/// search taken from one bucket table per run of rows; `src/tables/run_keys.rs`)
/// in each of their modes, against the CPU twin at every key time of every
/// row, the floats next to them, between keys, before and after: tables of
/// 8-bit entries (runs of 32 rows and a short run, rows that start late or
/// end early, keys closer than a bucket, every property and
/// interpolation), 16-bit entries (rows of 257 to 316 keys), the same two
/// with no keys closer than 0.02 s (exact tables: one step, no search
/// loop), rows of equal key counts (each run's rows computed from its
/// first two, with either table; in every group, in segments of one
/// property's rows, their search offsets computed, from copies of their
/// key texels, or read), and rows that
/// all share their key times
/// (one search per run, their values stored key by key:
/// `src/tables/run_values.rs`). A guess after the answer, a misread table entry,
/// a miscomputed row or a misplaced value would give another key's
/// values.
#[test]
fn clip_blocks_run_keys_match_cpu() {
    let Some(h) = common::gpu("clip_blocks_run_keys_match_cpu") else {
        return;
    };
    // (library, the run-keys mode its LINEAR rotations (group 0) must
    // take: 2 with 8- or 16-bit entries, 3 the same exact, 1 shared; how
    // many of their runs are stored key by key: the shared ones, a run of
    // 32 rows and one of 4; how their rows are computed, (rows per
    // segment, search offsets computed too), none when they are read (not
    // regular: unequal key counts); and whether every group's are so.)
    for (lib, want, interleaved, computed, every_group) in [
        (&run_keys_library(false), (2, 8), 0, None, false),
        (&long_run_keys_library(false), (2, 16), 0, None, false),
        (&run_keys_library(true), (3, 8), 0, None, false),
        (&long_run_keys_library(true), (3, 16), 0, None, false),
        (&regular_library(false), (2, 8), 0, Some((32, true)), true),
        (&regular_library(true), (3, 8), 0, Some((32, true)), true),
        (&regular_but_one_library(), (3, 8), 0, None, true),
        (&same_times_library(), (1, 0), 2, Some((32, true)), true),
        (&segments_library(0), (3, 8), 0, Some((8, true)), true),
        (&segments_library(1), (3, 8), 0, Some((8, true)), true),
        (&segments_library(2), (3, 8), 0, Some((8, false)), true),
    ] {
        let blocks =
            super::sampler_with(&h.device, &h.queue, lib, 1, SamplerPlan::ClipBlocks).unwrap();
        assert_run_key_modes(&blocks, want, interleaved, computed, every_group);
        every_plan_matches_cpu(&h, lib, &key_probe_instances(lib));
    }
}

/// 36 rows that all share their key times.
fn same_times_library() -> AnimationLibrary {
    AnimationLibrary::new(vec![Clip::new(
        "same",
        (0..36)
            .map(|r| {
                let times = run_key_times(99, 0.0, 12, false);
                track_of(r, Property::Rotation, Interpolation::Linear, times, 4)
            })
            .collect(),
    )])
    .unwrap()
}

/// Rows of equal key counts, laid out one after the other: every run
/// regular, its rows computed from its first two. (A gap of 0.6 s after
/// the first key keeps every row from direct indexing, whose rows have
/// no bucket texels and would break the layout's regular steps.)
fn regular_library(apart: bool) -> AnimationLibrary {
    AnimationLibrary::new(vec![Clip::new(
        "regular",
        (0..40)
            .map(|r| {
                let mut times = run_key_times(r + 200, 0.002 * r as f32, 30, apart);
                for t in &mut times[1..] {
                    *t += 0.6;
                }
                track_of(r, Property::Rotation, Interpolation::Linear, times, 4)
            })
            .collect(),
    )])
    .unwrap()
}

/// The clip of [`regular_library`] (keys apart) and one whose two rows
/// differ in key count: one run
/// not regular, so the group reads every row.
fn regular_but_one_library() -> AnimationLibrary {
    let mut clips = regular_library(true).clips().to_vec();
    clips.push(Clip::new(
        "uneven",
        (0..2)
            .map(|r| {
                let mut times = run_key_times(r + 300, 0.0, 30 + r as usize, true);
                for t in &mut times[1..] {
                    *t += 0.6;
                }
                track_of(r, Property::Rotation, Interpolation::Linear, times, 4)
            })
            .collect(),
    ));
    AnimationLibrary::new(clips).unwrap()
}

/// Every property (but weights) and interpolation, 8 nodes each, of 30
/// keys: each group's rows are sorted by property, so its runs (24 rows
/// of STEP translations, rotations and scales; 16 of LINEAR or
/// CUBICSPLINE translations and scales; 8 of rotations) are regular in
/// segments of 8, one property's rows, though not as a whole. With
/// `direct` of every three nodes' keys uniform (indexed directly: no
/// bucket texels before their key texels) the rows' key texels step
/// unevenly: with one, the sampler copies them in step (within the
/// bucket texels the run tables left unread); with two, the copies
/// would take more than those, and each row's search offset is read.
fn segments_library(direct: u32) -> AnimationLibrary {
    let mut tracks = Vec::new();
    for property in &PROPERTIES[..3] {
        for interp in INTERPOLATIONS {
            for n in 0..8u32 {
                let node = tracks.len() as u32;
                let times = if n % 3 < direct {
                    (0..30).map(|k| k as f32 / 30.0).collect()
                } else {
                    let mut t = run_key_times(node + 400, 0.001 * n as f32, 30, true);
                    for t in &mut t[1..] {
                        *t += 0.6;
                    }
                    t
                };
                tracks.push(track_of(node, *property, interp, times, 4));
            }
        }
    }
    AnimationLibrary::new(vec![Clip::new("segments", tracks)]).unwrap()
}

/// `blocks` takes run-keys mode `want` (mode, bits) for group 0, stores
/// `interleaved` runs key by key, and computes group 0's rows as
/// `computed` says (and every group's, with `every_group`).
fn assert_run_key_modes(
    blocks: &GpuSampler,
    want: (u32, u32),
    interleaved: usize,
    computed: Option<(u32, bool)>,
    every_group: bool,
) {
    let modes: Vec<(u32, u32, u32)> = blocks.run_keys().collect();
    assert!(modes.contains(&(0, want.0, want.1)), "{modes:?}");
    assert_eq!(blocks.interleaved_runs(), interleaved);
    let regular: Vec<(u32, u32, bool)> = blocks.regular_segments().collect();
    let of = |g: u32| {
        regular
            .iter()
            .find(|r| r.0 == g)
            .map(|&(_, rows, search)| (rows, search))
    };
    assert_eq!(of(0), computed, "{modes:?} {regular:?}");
    if every_group {
        for &(g, _, _) in &modes {
            assert_eq!(of(g), computed, "group {g}: {modes:?} {regular:?}");
        }
    }
}

/// Per clip of `lib`: instances before, at and far after its keys, at
/// every key time, the floats next to it, and between keys.
fn key_probe_instances(lib: &AnimationLibrary) -> Vec<Instance> {
    let mut instances = Vec::new();
    for (c, clip) in lib.clips().iter().enumerate() {
        let mut times: Vec<f32> = vec![-1.0, 0.0, 1e6];
        for t in &clip.tracks {
            for w in t.times.windows(2) {
                times.push(0.5 * (w[0] + w[1]));
            }
            for &k in t.times.iter() {
                times.extend([k, k.next_up(), k.next_down()]);
            }
        }
        instances.extend(
            times
                .into_iter()
                .map(|t| Instance::new(c as u32, f64::from(t))),
        );
    }
    instances
}
