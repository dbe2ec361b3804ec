//! The plan as a value: built without a device from a bound library, a
//! capacity and a device profile, it lists the dispatches in order with
//! their entry points, typed overrides, workgroups and tables, and prints.
//! What `Auto` picks for a CPU adapter and for a GPU; then every sampler
//! plan and skin strategy under both profiles run on the adapter and
//! checked against the CPU twin.

use super::common;

use keyframe_gpu::plan::passes::Module;
use keyframe_gpu::plan::{
    DeviceProfile, Overrides, Plan, PlanChoices, SamplerPlan, SkinStrategy, Stage,
};
use keyframe_gpu::{
    cpu, AnimationLibrary, Animator, BoundLibrary, Clip, Instance, Interpolation, MixerDesc,
    NodeTransform, Property, Rig, Track, WrapMode,
};

/// A chain of `nodes` nodes, a skin over all of them on a mesh of two
/// morph targets, and two clips: LINEAR rotations on every node, and
/// translations with a weights track.
fn model(nodes: u32) -> BoundLibrary {
    let mut b = Rig::builder();
    let mut parent = None;
    let mut joints = Vec::new();
    for i in 0..nodes {
        let n = b.node(parent, NodeTransform::translation([0.0, 0.5, 0.0]));
        b.name(n, format!("n{i}"));
        joints.push(n);
        parent = Some(n);
    }
    let mesh_node = b.node(None, NodeTransform::IDENTITY);
    let mesh = b.mesh(2, vec![0.0, 0.0]);
    let binds = vec![glam::Mat4::IDENTITY.to_cols_array(); joints.len()];
    let skin = b.skin(joints.clone(), binds);
    b.attach(mesh_node, mesh, Some(skin));
    let rig = b.build().unwrap();
    let q = |a: f32| glam::Quat::from_rotation_z(a).to_array();
    let rotations: Vec<Track> = joints
        .iter()
        .map(|&n| {
            Track::new(
                n,
                Property::Rotation,
                Interpolation::Linear,
                vec![0.0, 0.5, 1.0],
                [q(0.0), q(0.4), q(-0.3)].concat(),
            )
        })
        .collect();
    let mut moves: Vec<Track> = joints
        .iter()
        .take(3)
        .map(|&n| {
            Track::new(
                n,
                Property::Translation,
                Interpolation::Step,
                vec![0.0, 0.25, 0.75],
                vec![0.0, 0.5, 0.0, 0.1, 0.6, 0.0, -0.1, 0.4, 0.2],
            )
        })
        .collect();
    moves.push(Track::weights(
        mesh_node,
        2,
        Interpolation::Linear,
        vec![0.0, 1.0],
        vec![0.0, 1.0, 1.0, 0.0],
    ));
    let library =
        AnimationLibrary::new(vec![Clip::new("bend", rotations), Clip::new("move", moves)])
            .unwrap();
    library.bind(&rig).unwrap()
}

fn entries(plan: &Plan) -> Vec<&'static str> {
    plan.dispatches.iter().map(|d| d.entry_point).collect()
}

#[test]
fn a_cpu_adapter_gets_the_tuned_plan_and_a_gpu_the_plain_one() {
    let bound = model(6);
    let cpu = Plan::new(&bound, 1000, &DeviceProfile::cpu_adapter()).unwrap();
    // 1,000 instances of 2 clips fill the blocks: the clip-blocks plan,
    // one dispatch per track group with tracks (LINEAR rotations, STEP
    // vectors, LINEAR vectors), then the per-instance walk.
    assert_eq!(cpu.sampler, SamplerPlan::ClipBlocks);
    assert_eq!(cpu.skin, Some(SkinStrategy::PerInstance));
    assert!(cpu.wide_accesses);
    assert_eq!(
        entries(&cpu),
        [
            "sample_blocks_main",
            "sample_blocks_main",
            "sample_blocks_main",
            "morph_main",
            "skin_main"
        ]
    );
    let gpu = Plan::new(&bound, 1000, &DeviceProfile::gpu()).unwrap();
    assert_eq!(gpu.sampler, SamplerPlan::Reference);
    assert_eq!(gpu.skin, Some(SkinStrategy::PerNode));
    assert!(!gpu.wide_accesses);
    assert_eq!(
        entries(&gpu),
        ["sample_main", "morph_main", "skin_nodes_main"]
    );
    // The reference plan: one invocation per (instance, track): clip
    // "bend" has 6 tracks, the most: 6,000 invocations, 94 workgroups of
    // 64.
    assert_eq!(gpu.dispatches[0].workgroups, (94, 1, 1));
    // The per-node pass: a workgroup per instance.
    assert_eq!(gpu.dispatches[2].workgroups, (1000, 1, 1));
    // Uniform copies of the small tables on the CPU adapter only, and
    // never for the per-node pass.
    let heads = |plan: &Plan, entry: &str| {
        let d = plan
            .dispatches
            .iter()
            .find(|d| d.entry_point == entry)
            .unwrap();
        match d.overrides {
            Overrides::Rig(r) => r.nodes_in_head && r.channels_in_head && r.joints_in_head,
            Overrides::Sample(s) => s.rows_in_uniform,
        }
    };
    assert!(heads(&cpu, "skin_main") && heads(&cpu, "sample_blocks_main"));
    assert!(!heads(&gpu, "skin_nodes_main") && !heads(&gpu, "morph_main"));
    // With few instances per clip the grouped plan; a rig past the
    // per-node limit walks per instance on a GPU too.
    let few = Plan::new(&bound, 10, &DeviceProfile::cpu_adapter()).unwrap();
    assert_eq!(few.sampler, SamplerPlan::Grouped);
    let big = model(200);
    let gpu_big = Plan::new(&big, 10, &DeviceProfile::gpu()).unwrap();
    assert_eq!(gpu_big.skin, Some(SkinStrategy::PerInstance));
    let forced = PlanChoices {
        skin: SkinStrategy::PerNode,
        ..PlanChoices::default()
    };
    assert!(Plan::with_choices(&big, 10, &DeviceProfile::gpu(), forced).is_err());
}

#[test]
fn a_small_workgroup_limit_turns_clip_blocks_into_grouped() {
    let bound = model(6);
    let mut profile = DeviceProfile::cpu_adapter();
    profile.limits.max_compute_workgroups_per_dimension = 4;
    let plan = Plan::new(&bound, 1000, &profile).unwrap();
    assert_eq!(plan.sampler, SamplerPlan::Grouped);
    // The grid wraps into a second dimension at the limit.
    let (x, y, _) = plan.dispatches[0].workgroups;
    assert!(x <= 4 && y > 1, "{:?}", plan.dispatches[0].workgroups);
}

#[test]
fn a_mixer_plan_and_the_printed_plan() {
    let bound = model(6);
    let desc = MixerDesc::new(100, 3);
    let plan = Plan::for_mixer(&bound, &desc, &DeviceProfile::gpu(), SamplerPlan::Auto).unwrap();
    assert_eq!(plan.rows, 600, "two sampler rows per action slot");
    assert_eq!(
        entries(&plan),
        [
            "sample_main",
            "mix_main",
            "mix_morph_main",
            "mix_props_main",
            "hierarchy_main"
        ]
    );
    assert_eq!(plan.dispatches[1].stage, Stage::Mix);
    assert_eq!(
        plan.dispatches[1].module,
        Module::Rig(keyframe_gpu::plan::passes::RigModule::Mix)
    );
    let text = plan.to_string();
    for needed in [
        "sample_main",
        "hierarchy_main",
        "GROUP=",
        "NODES_IN_HEAD=0",
        "workgroups",
        "key search texels",
    ] {
        assert!(text.contains(needed), "{needed:?} in {text}");
    }
    // A line per dispatch, then one per resource.
    assert_eq!(
        text.lines().count(),
        1 + plan.dispatches.len() + 1 + plan.resources.all().len(),
        "{text}"
    );
}

/// Runs `plan` on the adapter and compares every node's world matrix and
/// the joint matrices with the CPU twin.
fn check_against_twin(
    h: &crate::tests::common::headless::Headless,
    bound: &BoundLibrary,
    plan: &Plan,
    label: &str,
) {
    let mut animator = Animator::from_plan(&h.device, &h.queue, plan).unwrap();
    let n = plan.capacity.min(40);
    let instances: Vec<Instance> = (0..n)
        .map(|i| Instance::new(i % 2, f64::from(i) * 0.037).with_wrap(WrapMode::PingPong))
        .collect();
    animator.set_instances(&h.queue, &instances).unwrap();
    let mut encoder = h.device.create_command_encoder(&Default::default());
    animator.record(&mut encoder);
    h.queue.submit([encoder.finish()]);
    let gpu = animator.read_back(&h.device, &h.queue).unwrap();
    let twin = cpu::poses(bound, &instances).unwrap();
    let nodes = bound.rig().nodes().len() as u32;
    for i in 0..n {
        for node in 0..nodes {
            let (g, t) = (gpu.world(i, node).unwrap(), twin.world(i, node).unwrap());
            assert!(g.abs_diff_eq(t, 1e-4), "{label}: instance {i} node {node}");
        }
        for (a, b) in gpu
            .joints(i, 0)
            .unwrap()
            .iter()
            .zip(twin.joints(i, 0).unwrap())
        {
            assert!(a.abs_diff_eq(*b, 1e-4), "{label}: instance {i} joints");
        }
        let mesh_node = bound.rig().parts()[0].node;
        let (gw, tw) = (
            gpu.morph_weights(i, mesh_node).unwrap(),
            twin.morph_weights(i, mesh_node).unwrap(),
        );
        assert!(
            gw.iter().zip(tw).all(|(a, b)| (a - b).abs() <= 1e-5),
            "{label}: weights"
        );
    }
}

#[test]
fn every_plan_and_strategy_under_both_profiles_matches_the_twin() {
    let Some(h) = common::gpu("every_plan_and_strategy_under_both_profiles_matches_the_twin")
    else {
        return;
    };
    let bound = model(6);
    for profile in [DeviceProfile::cpu_adapter(), DeviceProfile::gpu()] {
        let mut profile = profile;
        // The adapter's own features decide what compiles.
        profile.shader_int64 = h.device.features().contains(wgpu::Features::SHADER_INT64);
        for sampler in [
            SamplerPlan::Reference,
            SamplerPlan::Grouped,
            SamplerPlan::ClipBlocks,
        ] {
            for skin in [
                SkinStrategy::Staged,
                SkinStrategy::PerInstance,
                SkinStrategy::PerNode,
            ] {
                let choices = PlanChoices { sampler, skin };
                let plan = Plan::with_choices(&bound, 64, &profile, choices).unwrap();
                let label = format!("{} {sampler:?} {skin:?}", profile);
                check_against_twin(&h, &bound, &plan, &label);
            }
        }
    }
}

/// `Animator::from_plan` given a mixer's plan builds that mixer: it takes
/// actions (an animator without a mixer refuses them) and blends them as
/// the CPU twin does.
#[test]
fn from_plan_builds_the_mixer_of_a_mixer_plan() {
    use keyframe_gpu::Action;
    let Some(h) = common::gpu("from_plan_builds_the_mixer_of_a_mixer_plan") else {
        return;
    };
    let bound = model(6);
    let desc = MixerDesc::new(3, 2);
    let profile = DeviceProfile::of(&h.device);
    let plan = Plan::for_mixer(&bound, &desc, &profile, SamplerPlan::Auto).unwrap();
    let mut animator = Animator::from_plan(&h.device, &h.queue, &plan).unwrap();
    // A crossfade of the two clips per character, at its own weight and time.
    let actions: Vec<Action> = (0..3u32)
        .flat_map(|c| {
            let t = 0.2 + 0.3 * f64::from(c);
            let w = 0.25 * (c + 1) as f32;
            [
                Action::new(0, t).with_weight(1.0 - w),
                Action::new(1, t).with_weight(w),
            ]
        })
        .collect();
    let counts = [2, 2, 2];
    animator
        .set_actions(&h.queue, &actions, &counts)
        .expect("a mixer plan's animator takes actions");
    let mut encoder = h.device.create_command_encoder(&Default::default());
    animator.record(&mut encoder);
    h.queue.submit([encoder.finish()]);
    let gpu = animator.read_back(&h.device, &h.queue).unwrap();
    let twin = cpu::mixed_poses(&bound, &desc.masks, &actions, &counts).unwrap();
    let nodes = bound.rig().nodes().len() as u32;
    for c in 0..3 {
        for node in 0..nodes {
            let (g, t) = (gpu.world(c, node).unwrap(), twin.world(c, node).unwrap());
            assert!(g.abs_diff_eq(t, 1e-4), "character {c} node {node}");
        }
    }
    // The plain plan's animator has no mixer.
    let plain = Plan::new(&bound, 3, &profile).unwrap();
    let mut plain = Animator::from_plan(&h.device, &h.queue, &plain).unwrap();
    assert!(plain.set_actions(&h.queue, &actions, &counts).is_err());
}
