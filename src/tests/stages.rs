//! A frame of a plan on the GPU and on the CPU executor, dispatch by
//! dispatch: after each dispatch, every resource it writes is read back
//! and compared with the CPU executor's after the same dispatch's twin
//! (`cpu::exec`). Every sampler plan, every skin strategy and sampling
//! alone, a mixer, on a library compressed and not.
//!
//! Each executor runs its own chain (the CPU executor's inputs are its
//! own outputs), so a stage's difference is its own and what it read.
//! Tolerance: `|gpu - cpu| <= 1e-4 max(1, |cpu|)` per float, the
//! loosest of the per-stage checks elsewhere (world and joint matrices
//! within 1e-4, src/tests/plans.rs and skinning.rs; the sampler's values
//! within 1e-5 relative and rotations 2e-5, src/tests/gpu_vs_cpu.rs).

use super::common;

use keyframe_gpu::compress::CompressOptions;
use keyframe_gpu::cpu::exec::{twin, Memory};
use keyframe_gpu::gpu::AnimatorChunk;
use keyframe_gpu::plan::frame::HostFrame;
use keyframe_gpu::plan::passes::STAGE_TABLE;
use keyframe_gpu::plan::resources::{Count, Shape};
use keyframe_gpu::plan::{DeviceProfile, Plan, PlanChoices, SamplerPlan, SkinStrategy};
use keyframe_gpu::{
    Action, AnimationLibrary, BoundLibrary, Clip, Instance, Interpolation, MixerDesc,
    NodeTransform, Property, Rig, Track, WrapMode,
};

/// Per float, relative to `max(1, |cpu|)`.
const TOL: f32 = 1e-4;

/// What a frame gives a chunk.
#[derive(Clone, Copy)]
enum Frame<'a> {
    /// An instance table.
    Instances(&'a [Instance]),
    /// A mixer's actions and counts.
    Actions(&'a [Action], &'a [u32]),
}

/// One resource a dispatch wrote, compared.
#[derive(Debug)]
struct StageDiff {
    /// The dispatch's index and entry point.
    dispatch: usize,
    entry: &'static str,
    /// The resource.
    resource: &'static str,
    /// Floats compared.
    floats: usize,
    /// The largest `|gpu - cpu| / max(1, |cpu|)`.
    worst: f32,
    /// The largest `|cpu|`: a resource left zero compares trivially.
    largest: f32,
}

/// The host's half of `frame` of `plan`.
fn host_frame(plan: &Plan, frame: Frame<'_>) -> HostFrame {
    let mut host = HostFrame::new(plan);
    match frame {
        Frame::Instances(i) => host.set_instances(plan, i).unwrap(),
        Frame::Actions(a, c) => {
            host.pack_actions(plan, a, c).unwrap();
            host.take_actions(plan).unwrap();
        }
    }
    host
}

/// Runs `gpu` (a frame) of `plan` on the GPU and `cpu` on the CPU
/// executor, dispatch by dispatch, and compares every resource each
/// dispatch writes (its read-write bindings) over the frame's extent.
fn stage_diffs(
    h: &crate::tests::common::headless::Headless,
    plan: &Plan,
    gpu: Frame<'_>,
    cpu: Frame<'_>,
) -> Vec<StageDiff> {
    let mut chunk = AnimatorChunk::from_plan(&h.device, &h.queue, plan).unwrap();
    match gpu {
        Frame::Instances(i) => chunk.write_instances(&h.queue, i).unwrap(),
        Frame::Actions(a, c) => {
            chunk.pack_actions(a, c).unwrap();
            chunk.write_packed(&h.queue).unwrap();
        }
    }
    let host = host_frame(plan, cpu);
    let mut memory = Memory::new(plan, &host);
    let rows = host.resolved().len() as u64;
    let characters = u64::from(host.characters());
    let mut out = Vec::new();
    let mut first_part = 0;
    for (k, d) in plan.dispatches.iter().enumerate() {
        let parts = first_part..first_part + d.parts.len();
        first_part = parts.end;
        let mut encoder = h.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            chunk.record_range(&mut pass, parts);
        }
        h.queue.submit([encoder.finish()]);
        memory.run_dispatch(plan, d, &host);
        let mut written: Vec<_> = d
            .parts
            .iter()
            .flat_map(|p| &p.binds)
            .filter(|b| plan.writes(d, b.binding))
            .map(|b| b.resource)
            .collect();
        written.dedup();
        for id in written {
            let r = &plan.resources.all()[id.0];
            let Shape::Buffer(size) = r.shape else {
                panic!("{}: a dispatch writes a texture", r.name)
            };
            let n = match size.count {
                Count::Rows => rows,
                _ => characters,
            };
            let bytes = n * size.per;
            let gpu = chunk.read(&h.device, &h.queue, r.name, bytes).unwrap();
            let cpu: Vec<f32> = bytemuck::pod_collect_to_vec(&memory.bytes(id)[..bytes as usize]);
            assert_eq!(gpu.len(), cpu.len(), "{}: {}", d.entry_point, r.name);
            out.push(StageDiff {
                dispatch: k,
                entry: d.entry_point,
                resource: r.name,
                floats: cpu.len(),
                worst: worst(&gpu, &cpu),
                largest: cpu.iter().fold(0f32, |m, c| m.max(c.abs())),
            });
        }
    }
    out
}

/// The largest `|g - c| / max(1, |c|)` of the pairs; infinite where a
/// pair holds a NaN.
fn worst(gpu: &[f32], cpu: &[f32]) -> f32 {
    let mut worst = 0f32;
    for (g, c) in gpu.iter().zip(cpu) {
        let diff = (g - c).abs() / c.abs().max(1.0);
        worst = if diff.is_nan() {
            f32::INFINITY
        } else {
            worst.max(diff)
        };
    }
    worst
}

/// A chain of 5 nodes under a root, skinned, with a mesh of two morph
/// targets, and three clips: LINEAR rotations of every node (16 keys,
/// uniformly spaced), STEP translations with LINEAR morph weights, and
/// CUBICSPLINE scales and rotations.
fn model() -> BoundLibrary {
    let mut b = Rig::builder();
    let mut parent = None;
    let mut joints = Vec::new();
    for i in 0..5 {
        let n = b.node(
            parent,
            NodeTransform::translation([0.0, 0.5, 0.1 * i as f32]),
        );
        b.name(n, format!("n{i}"));
        joints.push(n);
        parent = Some(n);
    }
    let mesh_node = b.node(None, NodeTransform::IDENTITY);
    let mesh = b.mesh(2, vec![0.25, 0.0]);
    let ibm = |k: usize| glam::Mat4::from_translation(glam::Vec3::new(0.0, -0.5 * k as f32, 0.0));
    let binds = (0..joints.len()).map(|k| ibm(k).to_cols_array()).collect();
    let skin = b.skin(joints.clone(), binds);
    b.attach(mesh_node, mesh, Some(skin));
    let rig = b.build().unwrap();
    let times: Vec<f32> = (0..16).map(|k| k as f32 / 15.0).collect();
    let quat = |a: f32, axis: glam::Vec3| glam::Quat::from_axis_angle(axis, a).to_array();
    let bend: Vec<Track> = joints
        .iter()
        .enumerate()
        .map(|(j, &n)| {
            let values: Vec<f32> = times
                .iter()
                .flat_map(|t| quat((t * 5.0 + j as f32).sin() * 0.8, glam::Vec3::Z))
                .collect();
            Track::new(
                n,
                Property::Rotation,
                Interpolation::Linear,
                times.clone(),
                values,
            )
        })
        .collect();
    let mut moves: Vec<Track> = joints
        .iter()
        .take(3)
        .map(|&n| {
            let values = [0.0, 0.5, 0.0, 0.1, 0.6, 0.0, -0.1, 0.4, 0.2];
            Track::new(
                n,
                Property::Translation,
                Interpolation::Step,
                vec![0.0, 0.3, 0.7],
                values.to_vec(),
            )
        })
        .collect();
    moves.push(Track::weights(
        mesh_node,
        2,
        Interpolation::Linear,
        vec![0.0, 0.5, 1.0],
        vec![0.0, 1.0, 1.0, 0.0, 0.5, 0.5],
    ));
    let spline = |n, property, v: [[f32; 4]; 2]| {
        // Triplets (in-tangent, value, out-tangent) per key.
        let width = if property == Property::Rotation { 4 } else { 3 };
        let values: Vec<f32> = v
            .iter()
            .flat_map(|k| [[0.1; 4], *k, [-0.1; 4]])
            .flat_map(|x| x[..width].to_vec())
            .collect();
        Track::new(
            n,
            property,
            Interpolation::CubicSpline,
            vec![0.0, 1.0],
            values,
        )
    };
    let turn = [quat(0.0, glam::Vec3::X), quat(0.9, glam::Vec3::X)];
    let twist = vec![
        spline(
            joints[1],
            Property::Scale,
            [[1.0, 1.0, 1.0, 0.0], [1.5, 0.5, 1.0, 0.0]],
        ),
        spline(joints[2], Property::Rotation, turn),
    ];
    let library = AnimationLibrary::new(vec![
        Clip::new("bend", bend),
        Clip::new("move", moves),
        Clip::new("twist", twist),
    ])
    .unwrap();
    library.bind(&rig).unwrap()
}

/// Instances over the three clips at times that fall between keys, on
/// keys and past the end.
fn instances(n: u32) -> Vec<Instance> {
    (0..n)
        .map(|i| Instance::new(i % 3, f64::from(i) * 0.093).with_wrap(WrapMode::PingPong))
        .collect()
}

/// Per character a crossfade of two clips and, for every other one, an
/// additive third.
fn actions(characters: u32) -> (Vec<Action>, Vec<u32>) {
    let mut actions = Vec::new();
    let mut counts = Vec::new();
    for c in 0..characters {
        let t = 0.05 + 0.11 * f64::from(c);
        let w = (c % 4) as f32 / 3.0;
        actions.push(
            Action::new(0, t)
                .with_weight(1.0 - w)
                .with_wrap(WrapMode::Repeat),
        );
        actions.push(Action::new(1, t).with_weight(w));
        let mut n = 2;
        if c % 2 == 0 {
            actions.push(Action::new(2, t).with_weight(0.5).additive(0.0));
            n += 1;
        }
        counts.push(n);
    }
    (actions, counts)
}

/// Checks every diff of `plan`'s frame, naming `label`.
fn check(h: &crate::tests::common::headless::Headless, plan: &Plan, frame: Frame<'_>, label: &str) {
    let diffs = stage_diffs(h, plan, frame, frame);
    // Every dispatch wrote something, compared.
    for (k, d) in plan.dispatches.iter().enumerate() {
        assert!(
            diffs.iter().any(|x| x.dispatch == k),
            "{label}: dispatch {k} ({}) compared nothing",
            d.entry_point
        );
    }
    for x in &diffs {
        assert!(
            x.worst <= TOL,
            "{label}: dispatch {} ({}) wrote {} {} off the twin's ({} floats)",
            x.dispatch,
            x.entry,
            x.resource,
            x.worst,
            x.floats
        );
        // Nothing compares zeros with zeros only (a pointer-property pass
        // of a library without pointers writes no float at all).
        assert!(
            x.floats == 0 || x.largest > 0.0,
            "{label}: {} all zeros",
            x.resource
        );
    }
}

/// The stage-by-stage comparison, for every sampler plan with sampling
/// alone, every skin strategy and a mixer, on a library as made and
/// compressed.
#[test]
fn every_plan_runs_stage_by_stage_as_the_cpu_executor() {
    let Some(h) = common::gpu("every_plan_runs_stage_by_stage_as_the_cpu_executor") else {
        return;
    };
    let plain = model();
    let (compressed, _) = plain.compress(&CompressOptions::default()).unwrap();
    let mut profile = DeviceProfile::of(&h.device);
    profile.shader_int64 = h.device.features().contains(wgpu::Features::SHADER_INT64);
    let inst = instances(40);
    let (acts, counts) = actions(12);
    for (name, bound) in [("plain", &plain), ("compressed", &compressed)] {
        for sampler in [
            SamplerPlan::Reference,
            SamplerPlan::Grouped,
            SamplerPlan::ClipBlocks,
        ] {
            let label = format!("{name} {sampler:?}");
            let alone = Plan::sampling(bound.library(), 40, &profile, sampler).unwrap();
            check(
                &h,
                &alone,
                Frame::Instances(&inst),
                &format!("{label} sampling"),
            );
            for skin in [
                SkinStrategy::Staged,
                SkinStrategy::PerInstance,
                SkinStrategy::PerNode,
            ] {
                let choices = PlanChoices { sampler, skin };
                let plan = Plan::with_choices(bound, 40, &profile, choices).unwrap();
                check(
                    &h,
                    &plan,
                    Frame::Instances(&inst),
                    &format!("{label} {skin:?}"),
                );
            }
            let desc = MixerDesc::new(12, 3);
            let mixed = Plan::for_mixer(bound, &desc, &profile, sampler).unwrap();
            check(
                &h,
                &mixed,
                Frame::Actions(&acts, &counts),
                &format!("{label} mixer"),
            );
        }
    }
}

/// The comparison finds a stage that differs, and where: the GPU given
/// a frame and the CPU executor the same frame 0.31 s later differ from
/// the first dispatch on (the sampler's output), by more than the
/// tolerance; and the measure of a difference, by hand.
#[test]
fn a_stage_that_differs_is_found() {
    assert_eq!(worst(&[1.0, 2.5, -3.0], &[1.0, 2.0, -3.0]), 0.25);
    assert_eq!(worst(&[0.5], &[0.25]), 0.25);
    assert_eq!(worst(&[f32::NAN], &[0.0]), f32::INFINITY);
    assert_eq!(worst(&[0.0], &[f32::NAN]), f32::INFINITY);
    let Some(h) = common::gpu("a_stage_that_differs_is_found") else {
        return;
    };
    let bound = model();
    let plan = Plan::new(&bound, 8, &DeviceProfile::of(&h.device)).unwrap();
    let inst = instances(8);
    let later: Vec<Instance> = inst
        .iter()
        .map(|i| Instance::new(i.clip, i.time + 0.31))
        .collect();
    let diffs = stage_diffs(&h, &plan, Frame::Instances(&inst), Frame::Instances(&later));
    let first = diffs.iter().find(|x| x.worst > TOL).unwrap();
    assert_eq!(
        (first.dispatch, first.resource),
        (0, "output buffer"),
        "{diffs:?}"
    );
    let same = stage_diffs(&h, &plan, Frame::Instances(&inst), Frame::Instances(&inst));
    assert!(same.iter().all(|x| x.worst <= TOL), "{same:?}");
}

/// Every kernel of the stage table has a twin whose function exists
/// where its name says, the table is indexed by kernel, and no entry
/// point has two rows.
#[test]
fn every_kernel_has_a_twin() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for (k, row) in STAGE_TABLE.iter().enumerate() {
        assert_eq!(row.kernel as usize, k, "{}", row.entry);
        assert_eq!(
            STAGE_TABLE.iter().filter(|r| r.entry == row.entry).count(),
            1,
            "{}: one row per entry point",
            row.entry
        );
        let name = twin(row.kernel).name;
        let (file, function) = name.split_once("::").unwrap();
        let text = std::fs::read_to_string(root.join("src").join(file)).unwrap();
        assert!(
            text.contains(&format!("fn {function}(")),
            "{}: {name}",
            row.entry
        );
    }
}
