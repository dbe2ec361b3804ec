//! `Crowd`: several models (rig + the clips made for it) in one object.
//! Instances of two models with different rigs, interleaved in one table,
//! checked per crowd instance against the CPU twin of their own model and
//! against values computed by hand; a clip of one model given to an
//! instance of another, an unknown model, a model past its capacity and a
//! non-finite time are refused naming the crowd instance, with the previous
//! frame left in place; and a steady-state frame allocates nothing of the
//! crowd's own.

mod common;

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::count;

#[path = "common/crowd_models.rs"]
mod crowd_models;

use crowd_models::{model_a, model_b};

use glam::{Mat4, Vec3};
use keyframe_gpu::{
    Action, AnimationLibrary, Animator, Crowd, CrowdCharacter, CrowdInstance, CrowdPoses, Error,
    Instance, MixError, MixerDesc, ModelId, Rig, WrapMode,
};

fn close(a: &[f32], b: &[f32], tol: f32) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
}

struct Scene {
    crowd: Crowd,
    a: ModelId,
    b: ModelId,
    rig_a: Rig,
    lib_a: AnimationLibrary,
    rig_b: Rig,
    lib_b: AnimationLibrary,
}

fn scene(h: &common::headless::Headless, cap_a: u32, cap_b: u32) -> Scene {
    scene_in(h, Crowd::new(), cap_a, cap_b)
}

/// Models A and B added to `crowd` for `cap_a` and `cap_b` instances.
fn scene_in(h: &common::headless::Headless, mut crowd: Crowd, cap_a: u32, cap_b: u32) -> Scene {
    let (rig_a, lib_a) = model_a();
    let (rig_b, lib_b) = model_b();
    let a = crowd
        .add_model(
            &h.device,
            &h.queue,
            "a",
            &lib_a.bind(&rig_a).unwrap(),
            cap_a,
        )
        .unwrap();
    let b = crowd
        .add_model(
            &h.device,
            &h.queue,
            "b",
            &lib_b.bind(&rig_b).unwrap(),
            cap_b,
        )
        .unwrap();
    Scene {
        crowd,
        a,
        b,
        rig_a,
        lib_a,
        rig_b,
        lib_b,
    }
}

fn run(h: &common::headless::Headless, crowd: &Crowd) -> CrowdPoses {
    let mut encoder = h.device.create_command_encoder(&Default::default());
    crowd.record(&mut encoder);
    h.queue.submit([encoder.finish()]);
    crowd.read_back(&h.device, &h.queue).unwrap()
}

/// Six interleaved instances: A bend 1 s, B slide 0.5 s, A lift 1 s, B turn
/// 2 s, B slide 1.5 s ping-pong (= 0.5 s), A idle 0 s.
fn frame(s: &Scene) -> Vec<CrowdInstance> {
    let c = &s.crowd;
    let (a, b) = (s.a, s.b);
    vec![
        CrowdInstance::new(a, c.models().clip(a, "bend").unwrap(), 1.0),
        CrowdInstance::new(b, c.models().clip(b, "slide").unwrap(), 0.5),
        CrowdInstance::new(a, c.models().clip(a, "lift").unwrap(), 1.0),
        CrowdInstance::new(b, c.models().clip(b, "turn").unwrap(), 2.0),
        CrowdInstance::new(b, c.models().clip(b, "slide").unwrap(), 1.5)
            .with_wrap(WrapMode::PingPong),
        CrowdInstance::new(a, c.models().clip(a, "idle").unwrap(), 0.0),
    ]
}

/// Crowd instance -> the tip of A or the hand of B, by hand.
fn position(p: &[f32; 16]) -> [f32; 3] {
    [p[12], p[13], p[14]]
}

#[test]
fn interleaved_instances_of_two_rigs_match_their_cpu_twins_and_hand_values() {
    counting_alloc::no_lib_backtraces();
    let Some(h) =
        common::gpu("interleaved_instances_of_two_rigs_match_their_cpu_twins_and_hand_values")
    else {
        return;
    };
    let mut s = scene(&h, 4, 4);
    let insts = frame(&s);
    s.crowd.set_instances(&h.queue, &insts).unwrap();
    let poses = run(&h, &s.crowd);
    assert_eq!(poses.instance_count(), 6);
    assert_eq!(s.crowd.instance_count(), 6);

    // Slots: each model's instances in crowd order.
    let slots: Vec<_> = (0..6).map(|i| s.crowd.slot(i).unwrap()).collect();
    let (a, b) = (s.a, s.b);
    assert_eq!(
        slots,
        [(a, 0), (b, 0), (a, 1), (b, 1), (b, 2), (a, 2)],
        "slot mapping"
    );
    assert_eq!(s.crowd.slot(6), None);
    for id in [a, b] {
        let count = s.crowd.model(id).unwrap().instance_count();
        assert_eq!(count, 3, "model {}", s.crowd.models().name(id).unwrap());
    }

    // By hand (globals of A's tip and B's hand).
    let tip = s.rig_a.node_by_name("tip").unwrap();
    let hand = s.rig_b.node_by_name("hand").unwrap();
    let want = [
        (0, tip, [-1.0, 1.0, 0.0]), // j1 turned 90 degrees: tip one unit along -x
        (1, hand, [6.0, 0.0, 2.0]), // r0 halfway to z = 4
        (2, tip, [0.0, 3.5, 0.0]),  // j0 lifted by 1.5
        (3, hand, [4.0, 0.0, 0.0]), // r0 turned 180 degrees: r1 at 5 - 1
        (4, hand, [6.0, 0.0, 2.0]), // ping-pong 1.5 s of a 1 s clip = 0.5 s
        (5, tip, [0.0, 2.0, 0.0]),  // rest pose
    ];
    for (i, node, p) in want {
        let g = world_of(&poses, i, node).unwrap();
        assert!(close(&position(&g), &p, 1e-5), "instance {i}: {g:?}");
    }
    // B's joint matrix of r1 (identity inverse binds, mesh at the origin)
    // is r1's global; A's of j0 for the lifted instance is T(0, 1.5, 0).
    let jb = joints_of(&poses, 1, 0).unwrap();
    assert_eq!(jb.len(), 2, "B's skin has two joints");
    let want_r1 = Mat4::from_translation(Vec3::new(6.0, 0.0, 2.0)).to_cols_array();
    assert!(close(&jb[1], &want_r1, 1e-5), "{:?}", jb[1]);
    let ja = joints_of(&poses, 2, 0).unwrap();
    assert_eq!(ja.len(), 3, "A's skin has three joints");
    let want_j0 = Mat4::from_translation(Vec3::new(0.0, 1.5, 0.0)).to_cols_array();
    assert!(close(&ja[0], &want_j0, 1e-6), "{:?}", ja[0]);
    // Node 2 is A's tip and does not exist in B (two nodes plus the mesh
    // node: 3 nodes, so node 3 is past B's end).
    assert!(world_of(&poses, 1, 3).is_none());
    assert!(world_of(&poses, 0, 3).is_some());
    assert!(world_of(&poses, 6, 0).is_none());

    // Against the CPU twin of each model, fed the model's own instances.
    for (id, rig, lib) in [(a, &s.rig_a, &s.lib_a), (b, &s.rig_b, &s.lib_b)] {
        let own: Vec<Instance> = insts
            .iter()
            .filter(|c| c.model == id)
            .map(|c| Instance::new(c.clip.clip(), c.time).with_wrap(c.wrap))
            .collect();
        let cpu = keyframe_gpu::cpu::poses(&lib.bind(rig).unwrap(), &own).unwrap();
        let nodes = rig.nodes().len();
        let mut checked = 0;
        for (i, inst) in insts.iter().enumerate() {
            let Some((m, slot)) = s.crowd.slot(i) else {
                panic!("no slot for {i}")
            };
            assert_eq!(m, inst.model);
            if m != id {
                continue;
            }
            for n in 0..nodes {
                let want = cpu.world(slot, n as u32).unwrap().to_cols_array();
                let got = world_of(&poses, i, n as u32).unwrap();
                assert!(close(&got, &want, 1e-5), "instance {i} node {n}");
            }
            let want_joints = cpu.joints(slot, 0).unwrap();
            assert_eq!(joints_of(&poses, i, 0).unwrap().len(), want_joints.len());
            for (j, got) in joints_of(&poses, i, 0).unwrap().iter().enumerate() {
                let want = want_joints[j].to_cols_array();
                assert!(close(got, &want, 1e-5), "instance {i} joint {j}");
            }
            checked += 1;
        }
        assert_eq!(checked, 3);
    }

    // The same name in two models is two clips.
    let idle_a = s.crowd.models().clip(a, "idle").unwrap();
    let idle_b = s.crowd.models().clip(b, "idle").unwrap();
    assert_ne!(idle_a, idle_b);
    assert_eq!((idle_a.model(), idle_a.clip()), (a, 0));
    assert_eq!((idle_b.model(), idle_b.clip()), (b, 2));
    assert_eq!(s.crowd.models().clip_at(b, 2), Some(idle_b));
    assert_eq!(s.crowd.models().clip_at(b, 3), None);
    assert_eq!(
        s.crowd.models().clip(a, "slide"),
        None,
        "slide is B's, not A's"
    );
    assert_eq!(s.crowd.models().model_by_name("b"), Some(b));
    assert_eq!(s.crowd.models().model_ids().collect::<Vec<_>>(), [a, b]);
}

#[test]
fn refusals_name_the_crowd_instance_and_keep_the_previous_frame() {
    counting_alloc::no_lib_backtraces();
    let Some(h) = common::gpu("refusals_name_the_crowd_instance_and_keep_the_previous_frame")
    else {
        return;
    };
    let mut s = scene(&h, 4, 3);
    let (a, b) = (s.a, s.b);
    let good = frame(&s);
    s.crowd.set_instances(&h.queue, &good).unwrap();
    let before = run(&h, &s.crowd);
    let tip = s.rig_a.node_by_name("tip").unwrap();

    let bend = s.crowd.models().clip(a, "bend").unwrap();
    let slide = s.crowd.models().clip(b, "slide").unwrap();
    // A clip of model B (index 0, in range of A's library, on nodes in
    // range of A's rig) given to an instance of model A.
    let wrong = [
        CrowdInstance::new(a, bend, 0.0),
        CrowdInstance::new(b, slide, 0.0),
        CrowdInstance::new(a, slide, 0.0),
    ];
    match s.crowd.set_instances(&h.queue, &wrong) {
        Err(Error::ClipOfOtherModel {
            instance: 2,
            instance_model: 0,
            instance_model_name,
            clip_model: 1,
            clip_model_name,
        }) if instance_model_name == "a" && clip_model_name == "b" => {}
        other => panic!("expected ClipOfOtherModel for instance 2, got {other:?}"),
    }
    // A non-finite time: named by its crowd index (2), not by its index
    // within model B (1).
    let nan = [
        CrowdInstance::new(a, bend, 0.0),
        CrowdInstance::new(b, slide, 0.0),
        CrowdInstance::new(b, slide, f64::INFINITY),
    ];
    assert!(matches!(
        s.crowd.set_instances(&h.queue, &nan),
        Err(Error::InstanceTimeNotFinite { instance: 2, .. })
    ));
    // Model B holds 3: four of B are refused although the crowd holds 7
    // and model A has room.
    let full = [CrowdInstance::new(b, slide, 0.0); 4];
    match s.crowd.set_instances(&h.queue, &full) {
        Err(Error::ModelFull {
            model: 1,
            what: "instance",
            requested: 4,
            capacity: 3,
            ref name,
        }) if name == "b" => {}
        other => panic!("expected ModelFull for b, got {other:?}"),
    }
    // Unknown models: ids of another crowd, whether or not their index is
    // in range here.
    let (rig_a, lib_a) = model_a();
    let mut other = Crowd::new();
    let o0 = other
        .add_model(&h.device, &h.queue, "x", &lib_a.bind(&rig_a).unwrap(), 1)
        .unwrap();
    let o1 = other
        .add_sampled_model(&h.device, &h.queue, "y", &lib_a, 1)
        .unwrap();
    let o2 = other
        .add_sampled_model(&h.device, &h.queue, "z", &lib_a, 1)
        .unwrap();
    let foreign_bend = other.models().clip(o0, "bend").unwrap();
    for (id, index) in [(o0, 0), (o2, 2)] {
        let unknown = [
            CrowdInstance::new(a, bend, 0.0),
            CrowdInstance::new(id, foreign_bend, 0.0),
        ];
        match s.crowd.set_instances(&h.queue, &unknown) {
            Err(Error::UnknownModel {
                what: "instance",
                entry: Some(1),
                model,
            }) if model == index => {}
            other => panic!("expected UnknownModel for instance 1, got {other:?}"),
        }
    }
    assert!(s.crowd.model(o1).is_none());
    assert!(s.crowd.models().clip(o0, "bend").is_none());
    // A clip of another crowd's model given to a model of this one.
    assert!(matches!(
        s.crowd
            .set_instances(&h.queue, &[CrowdInstance::new(a, foreign_bend, 0.0)]),
        Err(Error::ClipOfOtherModel { instance: 0, .. })
    ));
    // A duplicate name builds nothing and changes nothing.
    assert!(matches!(
        s.crowd
            .add_model(&h.device, &h.queue, "a", &lib_a.bind(&rig_a).unwrap(), 1),
        Err(Error::DuplicateModel { ref name }) if name == "a"
    ));
    assert_eq!(s.crowd.models().model_ids().count(), 2);

    // Nothing was written: same slots, same poses on a fresh dispatch.
    assert_eq!(s.crowd.instance_count(), 6);
    assert_eq!(s.crowd.slot(4), Some((b, 2)));
    let after = run(&h, &s.crowd);
    assert_eq!(after.instance_count(), 6);
    for i in 0..6 {
        let node = if s.crowd.slot(i).unwrap().0 == a {
            tip
        } else {
            1
        };
        assert_eq!(
            world_of(&after, i, node),
            world_of(&before, i, node),
            "instance {i}"
        );
    }
    assert!(close(
        &position(&world_of(&after, 0, tip).unwrap()),
        &[-1.0, 1.0, 0.0],
        1e-5
    ));
    for id in [a, b] {
        assert_eq!(s.crowd.model(id).unwrap().instance_count(), 3);
    }

    // A model with no instance this frame records nothing and is empty.
    s.crowd
        .set_instances(&h.queue, &[CrowdInstance::new(b, slide, 1.0)])
        .unwrap();
    let poses = run(&h, &s.crowd);
    assert_eq!(poses.model(a).unwrap().instance_count(), 0);
    assert_eq!(s.crowd.slot(0), Some((b, 0)));
    assert!(close(
        &position(&world_of(&poses, 0, 1).unwrap()),
        &[6.0, 0.0, 4.0],
        1e-5
    ));
}

#[test]
fn a_model_without_a_rig_samples_its_clips() {
    counting_alloc::no_lib_backtraces();
    let Some(h) = common::gpu("a_model_without_a_rig_samples_its_clips") else {
        return;
    };
    let (rig_a, lib_a) = model_a();
    let (_, lib_b) = model_b();
    let mut crowd = Crowd::new();
    let a = crowd
        .add_model(&h.device, &h.queue, "a", &lib_a.bind(&rig_a).unwrap(), 2)
        .unwrap();
    let b = crowd
        .add_sampled_model(&h.device, &h.queue, "b", &lib_b, 2)
        .unwrap();
    let slide = crowd.models().clip(b, "slide").unwrap();
    let lift = crowd.models().clip(a, "lift").unwrap();
    crowd
        .set_instances(
            &h.queue,
            &[
                CrowdInstance::new(b, slide, 0.25),
                CrowdInstance::new(a, lift, 2.0),
            ],
        )
        .unwrap();
    let poses = run(&h, &crowd);
    // slide at 0.25 s: (5, 0, 1), the first three floats of its block.
    assert!(close(&samples_of(&poses, 0)[..3], &[5.0, 0.0, 1.0], 1e-6));
    assert!(world_of(&poses, 0, 0).is_none(), "no rig, no globals");
    assert!(crowd.model(b).unwrap().chunks()[0]
        .joint_matrix_buffer()
        .is_none());
    assert!(close(&samples_of(&poses, 1)[..3], &[0.0, 3.0, 0.0], 1e-6));
    assert!(world_of(&poses, 1, 0).is_some());
}

#[test]
fn steady_state_frames_allocate_nothing_of_the_crowds_own() {
    counting_alloc::no_lib_backtraces();
    let Some(h) = common::gpu("steady_state_frames_allocate_nothing_of_the_crowds_own") else {
        return;
    };
    let (device, queue) = (&h.device, &h.queue);
    let mut s = scene(&h, 80, 80);
    let (a, b) = (s.a, s.b);
    let clips_a: Vec<_> = (0..3)
        .map(|c| s.crowd.models().clip_at(a, c).unwrap())
        .collect();
    let clips_b: Vec<_> = (0..3)
        .map(|c| s.crowd.models().clip_at(b, c).unwrap())
        .collect();
    // 100 instances, a third of them B, interleaved; times change per frame.
    let frames: Vec<Vec<CrowdInstance>> = (0..40)
        .map(|f| {
            (0..100u32)
                .map(|i| {
                    let t = f64::from(f) / 60.0 + f64::from(i) * 0.01;
                    let c = (i % 3) as usize;
                    if i % 3 == 1 {
                        CrowdInstance::new(b, clips_b[c], t).with_wrap(WrapMode::Repeat)
                    } else {
                        CrowdInstance::new(a, clips_a[c], t)
                    }
                })
                .collect()
        })
        .collect();
    // The baseline: two plain animators of the same models, given the
    // frame already split (what the crowd calls inside, without the split).
    let mut plain_a = Animator::new(device, queue, &s.lib_a.bind(&s.rig_a).unwrap(), 80).unwrap();
    let mut plain_b = Animator::new(device, queue, &s.lib_b.bind(&s.rig_b).unwrap(), 80).unwrap();
    let split = |insts: &[CrowdInstance], id: ModelId| -> Vec<Instance> {
        insts
            .iter()
            .filter(|c| c.model == id)
            .map(|c| Instance::new(c.clip.clip(), c.time).with_wrap(c.wrap))
            .collect()
    };
    let splits: Vec<(Vec<Instance>, Vec<Instance>)> =
        frames.iter().map(|f| (split(f, a), split(f, b))).collect();
    assert_eq!(splits[0].0.len(), 67);
    assert_eq!(splits[0].1.len(), 33);

    // The counter works: a first frame grows the vectors wgpu writes into.
    let (first, r) = count(|| s.crowd.set_instances(queue, &frames[0]));
    r.unwrap();
    assert!(first > 0, "the counter saw no allocation at all");

    // Measured alternately, each right after a submit (as in no_alloc.rs).
    let mut ours = Vec::new();
    let mut baseline = Vec::new();
    for (f, insts) in frames.iter().enumerate() {
        let mine = f % 2 == 0;
        let n = if mine {
            let (n, r) = count(|| s.crowd.set_instances(queue, insts));
            r.unwrap();
            n
        } else {
            let (sa, sb) = &splits[f];
            let (n, (ra, rb)) = count(|| {
                (
                    plain_a.set_instances(queue, sa),
                    plain_b.set_instances(queue, sb),
                )
            });
            ra.unwrap();
            rb.unwrap();
            s.crowd.set_instances(queue, insts).unwrap();
            n
        };
        let mut encoder = device.create_command_encoder(&Default::default());
        s.crowd.record(&mut encoder);
        queue.submit([encoder.finish()]);
        device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
        if f >= 10 {
            if mine {
                ours.push(n);
            } else {
                baseline.push(n);
            }
        }
    }
    eprintln!("crowd set_instances allocations: {ours:?}; two animators': {baseline:?}");
    let median = |v: &[u64]| {
        let mut v = v.to_vec();
        v.sort_unstable();
        v[v.len() / 2]
    };
    assert!(
        median(&ours) <= median(&baseline),
        "the crowd allocated {} (median frame), its two animators alone {}",
        median(&ours),
        median(&baseline)
    );
    // And the split really happened on the last frame.
    assert_eq!(s.crowd.instance_count(), 100);
    assert_eq!(s.crowd.slot(1), Some((b, 0)));
    assert_eq!(s.crowd.slot(99), Some((a, 66)));
}

/// Crowd instance `i`'s world matrix of `node`, column-major.
fn world_of(poses: &CrowdPoses, i: usize, node: u32) -> Option<[f32; 16]> {
    let (p, slot) = poses.instance(i)?;
    p.world(slot, node).map(|m| m.to_cols_array())
}

/// Crowd instance `i`'s sampled values.
fn samples_of(poses: &CrowdPoses, i: usize) -> &[f32] {
    let (p, slot) = poses.instance(i).expect("instance");
    p.samples(slot).expect("samples")
}

/// Crowd instance `i`'s joint matrices of skin `skin`, column-major.
fn joints_of(poses: &CrowdPoses, i: usize, skin: u32) -> Option<Vec<[f32; 16]>> {
    let (p, slot) = poses.instance(i)?;
    p.joints(slot, skin)
        .map(|m| m.iter().map(|m| m.to_cols_array()).collect())
}

/// Every element of every model's poses of `gpu` within `tol` of `cpu`
/// (`Poses::compare`), and the same slots.
fn assert_crowds_close(label: &str, gpu: &CrowdPoses, cpu: &CrowdPoses, tol: f32) {
    assert_eq!(gpu.instance_count(), cpu.instance_count(), "{label}");
    for i in 0..gpu.instance_count() {
        let ((_, gs), (_, cs)) = (gpu.instance(i).unwrap(), cpu.instance(i).unwrap());
        assert_eq!(gs, cs, "{label}: crowd character {i}'s slot");
    }
    assert!(gpu.instance_count() > 0, "{label}");
    // Model by model, every element (CrowdPoses::compare).
    let c = gpu.compare(cpu).unwrap();
    assert!(
        c.max_abs.iter().all(|&d| d <= tol),
        "{label}: {:?}, worst {:?}",
        c.max_abs,
        c.worst
    );
}

#[test]
fn two_models_with_mixers_blend_in_one_crowd_as_their_twins_and_hand_values() {
    let name = "two_models_with_mixers_blend_in_one_crowd_as_their_twins_and_hand_values";
    let Some(h) = common::gpu(name) else {
        return;
    };
    let (rig_a, lib_a) = model_a();
    let (rig_b, lib_b) = model_b();
    let (bound_a, bound_b) = (lib_a.bind(&rig_a).unwrap(), lib_b.bind(&rig_b).unwrap());
    let mut crowd = Crowd::new();
    let a = crowd
        .add_mixed_model(&h.device, &h.queue, "a", &bound_a, &MixerDesc::new(4, 2))
        .unwrap();
    let b = crowd
        .add_mixed_model(&h.device, &h.queue, "b", &bound_b, &MixerDesc::new(3, 2))
        .unwrap();
    let clip = |m: ModelId, n: &str| crowd.models().clip(m, n).unwrap().clip();
    let (idle, lift, bend) = (clip(a, "idle"), clip(a, "lift"), clip(a, "bend"));
    let (slide, turn) = (clip(b, "slide"), clip(b, "turn"));
    // Crowd characters, interleaved: A crossfading idle (0.25) into lift
    // (0.75) at 1 s; B sliding at weight 0.5 alone at 0.5 s; A bent at
    // 1 s; B turned at 2 s.
    let actions = [
        Action::new(idle, 1.0).with_weight(0.25),
        Action::new(lift, 1.0).with_weight(0.75),
        Action::new(slide, 0.5).with_weight(0.5),
        Action::new(bend, 1.0),
        Action::new(turn, 2.0),
    ];
    let characters = [
        CrowdCharacter::new(a, 2),
        CrowdCharacter::new(b, 1),
        CrowdCharacter::new(a, 1),
        CrowdCharacter::new(b, 1),
    ];
    crowd.set_actions(&h.queue, &characters, &actions).unwrap();
    let gpu = run(&h, &crowd);
    let cpu = keyframe_gpu::cpu::crowd_mixed_poses(crowd.models(), &characters, &actions).unwrap();
    assert_crowds_close("mixed crowd", &gpu, &cpu, 1e-4);

    // By hand (docs/USAGE.md, "Blending"): A's j0 = mix(idle (0,0,0), lift at
    // 1 s (0,1.5,0), 0.75 / 1.0) = (0, 1.125, 0), the tip two units above;
    // B's r0 = mix(slide at 0.5 s (5,0,2), rest (5,0,0), 1 - 0.5) =
    // (5, 0, 1), the hand one unit along x; A bent 90 degrees about z at
    // j1 = (0,1,0): tip (-1, 1, 0); B turned 180 degrees: hand (4, 0, 0).
    let (tip, hand) = (
        rig_a.node_by_name("tip").unwrap(),
        rig_b.node_by_name("hand").unwrap(),
    );
    let expected = [
        (tip, [0.0, 3.125, 0.0]),
        (hand, [6.0, 0.0, 1.0]),
        (tip, [-1.0, 1.0, 0.0]),
        (hand, [4.0, 0.0, 0.0]),
    ];
    for (i, (node, want)) in expected.iter().enumerate() {
        for poses in [&gpu, &cpu] {
            let (p, slot) = poses.instance(i).unwrap();
            let got = position(&p.world(slot, *node).unwrap().to_cols_array());
            assert!(
                close(&got, want, 1e-4),
                "character {i}: {got:?}, by hand {want:?}"
            );
        }
    }
    // Each model's characters are its own mixer's, in crowd order: the
    // single-model twin of A's two characters gives the same poses.
    let (p, _) = cpu.instance(2).unwrap();
    let alone = keyframe_gpu::cpu::mixed_poses(&bound_a, &[], &actions[..2], &[2]).unwrap();
    assert!(close(
        &p.world(0, tip).unwrap().to_cols_array(),
        &alone.world(0, tip).unwrap().to_cols_array(),
        0.0
    ));
    assert_eq!(crowd.slot(2), Some((a, 1)));

    // Refusals name the crowd's character; the frame in effect stays.
    let mut bad = actions;
    bad[4] = Action::new(7, 0.0);
    match crowd.set_actions(&h.queue, &characters, &bad) {
        Err(Error::Mix(MixError::UnknownClip {
            character: 3,
            action: 0,
            clip: 7,
            ..
        })) => {}
        other => panic!("an unknown clip of crowd character 3: {other:?}"),
    }
    bad = actions;
    bad[3] = bad[3].with_weight(f32::NAN);
    match crowd.set_actions(&h.queue, &characters, &bad) {
        Err(Error::Mix(MixError::BadWeight { character: 2, .. })) => {}
        other => panic!("a NaN weight of crowd character 2: {other:?}"),
    }
    match crowd.set_actions(&h.queue, &characters[..3], &actions) {
        Err(Error::Mix(MixError::CountMismatch {
            counted: 4,
            actions: 5,
        })) => {}
        other => panic!("counts that do not add up: {other:?}"),
    }
    let five_a = [CrowdCharacter::new(a, 1); 5];
    match crowd.set_actions(&h.queue, &five_a, &actions) {
        Err(Error::ModelFull {
            model: 0,
            what: "character",
            requested: 5,
            capacity: 4,
            ..
        }) => {}
        other => panic!("five characters of a model of four: {other:?}"),
    }
    let again = run(&h, &crowd);
    assert_crowds_close("after the refusals", &again, &gpu, 0.0);
    assert_eq!(crowd.slot(2), Some((a, 1)));

    // A model without a mixer takes no actions.
    let plain = crowd
        .add_model(&h.device, &h.queue, "plain", &bound_b, 2)
        .unwrap();
    match crowd.set_actions(&h.queue, &[CrowdCharacter::new(plain, 1)], &actions[..1]) {
        Err(Error::ModelWithoutMixer {
            character: 0,
            model,
        }) if model == "plain" => {}
        other => panic!("actions for a model without a mixer: {other:?}"),
    }

    // The mixed models take instances too (one clip per character, the
    // unblended pose), as their twin.
    let frame = [
        CrowdInstance::new(b, crowd.models().clip(b, "turn").unwrap(), 1.0),
        CrowdInstance::new(a, crowd.models().clip(a, "lift").unwrap(), 2.0),
        CrowdInstance::new(plain, crowd.models().clip(plain, "slide").unwrap(), 1.0),
    ];
    crowd.set_instances(&h.queue, &frame).unwrap();
    let gpu = run(&h, &crowd);
    let cpu = keyframe_gpu::cpu::crowd_poses(crowd.models(), &frame).unwrap();
    assert_crowds_close("mixed models given instances", &gpu, &cpu, 1e-4);
    let (p, slot) = gpu.instance(1).unwrap();
    let got = position(&p.world(slot, tip).unwrap().to_cols_array());
    assert!(
        close(&got, &[0.0, 5.0, 0.0], 1e-4),
        "lift at 2 s: tip {got:?}"
    );
}

#[test]
fn steady_state_mixed_frames_allocate_nothing_of_the_crowds_own() {
    counting_alloc::no_lib_backtraces();
    let name = "steady_state_mixed_frames_allocate_nothing_of_the_crowds_own";
    let Some(h) = common::gpu(name) else {
        return;
    };
    let (device, queue) = (&h.device, &h.queue);
    let (rig_a, lib_a) = model_a();
    let (rig_b, lib_b) = model_b();
    let (bound_a, bound_b) = (lib_a.bind(&rig_a).unwrap(), lib_b.bind(&rig_b).unwrap());
    let desc = MixerDesc::new(40, 2);
    let mut crowd = Crowd::new();
    let a = crowd
        .add_mixed_model(device, queue, "a", &bound_a, &desc)
        .unwrap();
    let b = crowd
        .add_mixed_model(device, queue, "b", &bound_b, &desc)
        .unwrap();
    let mut mixer_a = Animator::with_mixer(device, queue, &bound_a, &desc).unwrap();
    let mut mixer_b = Animator::with_mixer(device, queue, &bound_b, &desc).unwrap();
    // 60 characters, a third of them B, each crossfading two clips; the
    // same frame split per model for the baseline of two mixers.
    let frame = |f: u32| {
        let (mut chars, mut acts) = (Vec::new(), Vec::new());
        let mut split = [(Vec::new(), Vec::new()), (Vec::new(), Vec::new())];
        for i in 0..60u32 {
            let t = f64::from(f) / 60.0 + f64::from(i) * 0.01;
            let w = (i % 5) as f32 / 4.0;
            let (model, k) = if i % 3 == 1 { (b, 1) } else { (a, 0) };
            let pair = [
                Action::new(i % 3, t)
                    .with_weight(w)
                    .with_wrap(WrapMode::Repeat),
                Action::new((i + 1) % 3, t).with_weight(1.0 - w),
            ];
            chars.push(CrowdCharacter::new(model, 2));
            acts.extend_from_slice(&pair);
            split[k].0.extend_from_slice(&pair);
            split[k].1.push(2u32);
        }
        (chars, acts, split)
    };
    let frames: Vec<_> = (0..40).map(frame).collect();
    let (first, r) = count(|| crowd.set_actions(queue, &frames[0].0, &frames[0].1));
    r.unwrap();
    assert!(first > 0, "the counter saw no allocation at all");
    let (mut ours, mut baseline) = (Vec::new(), Vec::new());
    for (f, (chars, acts, split)) in frames.iter().enumerate() {
        let n = if f % 2 == 0 {
            let (n, r) = count(|| crowd.set_actions(queue, chars, acts));
            r.unwrap();
            n
        } else {
            let (n, (ra, rb)) = count(|| {
                (
                    mixer_a.set_actions(queue, &split[0].0, &split[0].1),
                    mixer_b.set_actions(queue, &split[1].0, &split[1].1),
                )
            });
            ra.unwrap();
            rb.unwrap();
            crowd.set_actions(queue, chars, acts).unwrap();
            n
        };
        let mut encoder = device.create_command_encoder(&Default::default());
        crowd.record(&mut encoder);
        queue.submit([encoder.finish()]);
        device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
        if f >= 10 {
            if f % 2 == 0 {
                ours.push(n);
            } else {
                baseline.push(n);
            }
        }
    }
    eprintln!("crowd set_actions allocations: {ours:?}; two mixers': {baseline:?}");
    let median = |v: &[u64]| {
        let mut v = v.to_vec();
        v.sort_unstable();
        v[v.len() / 2]
    };
    assert!(
        median(&ours) <= median(&baseline),
        "the crowd allocated {} (median frame), its two mixers alone {}",
        median(&ours),
        median(&baseline)
    );
    assert_eq!(crowd.instance_count(), 60);
    assert_eq!(crowd.slot(1), Some((b, 0)));
    assert_eq!(crowd.slot(59), Some((a, 39)));
}

/// `record_timed` records the same passes as `record` (the same poses)
/// and, on a device with timestamp queries, measures them: a time
/// arrives within a few frames. Without the feature there is no timer to
/// give it, which `tests/faults.rs` covers.
#[test]
fn record_timed_gives_the_poses_of_record_and_a_gpu_time() {
    let options = common::headless::DeviceOptions::new(common::headless::AdapterChoice::Fallback)
        .with_timestamps();
    let Some(h) = common::gpu_with("crowd record_timed", &options) else {
        return;
    };
    let Some(mut timer) = keyframe_gpu::PassTimer::new(&h.device, &h.queue) else {
        eprintln!("SKIP crowd record_timed: the adapter has no timestamp queries");
        return;
    };
    let mut s = scene(&h, 4, 4);
    let insts = frame(&s);
    s.crowd.set_instances(&h.queue, &insts).unwrap();
    let plain = run(&h, &s.crowd);
    let mut measured = None;
    for _ in 0..8 {
        let mut encoder = h.device.create_command_encoder(&Default::default());
        s.crowd.record_timed(&mut encoder, &mut timer);
        h.queue.submit([encoder.finish()]);
        timer.after_submit();
        h.device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
        if let Some(t) = timer.poll() {
            measured = Some(t);
            break;
        }
    }
    let timed = s.crowd.read_back(&h.device, &h.queue).unwrap();
    assert_crowds_close("record_timed vs record", &timed, &plain, 0.0);
    let t = measured.expect("no GPU time arrived in 8 timed frames");
    assert!(t.as_nanos() > 0, "{t:?}");
}

/// `n` instances of each model, alternating A, B, at times spread over
/// (and past) their clips, every wrap mode.
fn many(s: &Scene, n: usize) -> Vec<CrowdInstance> {
    let wraps = [WrapMode::Clamp, WrapMode::Repeat, WrapMode::PingPong];
    let mut out = Vec::new();
    for k in 0..n {
        let t = 0.37 * k as f64;
        let wrap = wraps[k % 3];
        for (m, clips) in [
            (s.a, ["idle", "bend", "lift"]),
            (s.b, ["slide", "turn", "idle"]),
        ] {
            let clip = s.crowd.models().clip(m, clips[k % 3]).unwrap();
            out.push(CrowdInstance::new(m, clip, t).with_wrap(wrap));
        }
    }
    out
}

/// Chunks of two: models of five instances are three chunks each, which
/// share their model's upload; every instance lands at `locate`'s chunk
/// and index (its model slot split by the chunk size), and the crowd
/// reads back equal to the twin and to the same crowd unchunked.
#[test]
fn chunked_models_equal_their_twins_and_the_unchunked_crowd() {
    let Some(h) = common::gpu("chunked_models_equal_their_twins_and_the_unchunked_crowd") else {
        return;
    };
    let mut s = scene_in(&h, Crowd::new().with_chunk_limit(2), 5, 5);
    let (a, b) = (s.a, s.b);
    for id in [a, b] {
        assert_eq!(s.crowd.model(id).map(|m| m.chunks().len()), Some(3));
        assert_eq!(s.crowd.model(id).map(|m| m.chunk_capacity()), Some(2));
    }
    assert_eq!(s.crowd.uploads(), 2, "a model's chunks share its upload");
    let insts = many(&s, 5);
    s.crowd.set_instances(&h.queue, &insts).unwrap();
    let gpu = run(&h, &s.crowd);
    for (i, inst) in insts.iter().enumerate() {
        let (m, slot) = s.crowd.slot(i).unwrap();
        // Alternating: the k-th pair is slot k of each model.
        assert_eq!((m, slot), (inst.model, (i / 2) as u32));
    }
    assert_eq!(s.crowd.slot(insts.len()), None);
    let counts: Vec<u32> = (0..3)
        .map(|k| {
            s.crowd
                .model(a)
                .and_then(|m| m.chunks().get(k))
                .unwrap()
                .instance_count()
        })
        .collect();
    assert_eq!(counts, [2, 2, 1]);
    let cpu = keyframe_gpu::cpu::crowd_poses(s.crowd.models(), &insts).unwrap();
    assert_crowds_close("chunks of 2 against the twin", &gpu, &cpu, 1e-5);
    let mut whole = scene(&h, 5, 5);
    assert_eq!(
        whole.crowd.model(whole.a).map(|m| m.chunks().len()),
        Some(1)
    );
    let insts_whole = many(&whole, 5);
    whole.crowd.set_instances(&h.queue, &insts_whole).unwrap();
    let one = run(&h, &whole.crowd);
    assert_crowds_close("chunks of 2 against one chunk", &gpu, &one, 0.0);
    // Fewer instances the next frame: the chunks past them record nothing
    // and the poses still equal the twin.
    let few = &insts[..3];
    s.crowd.set_instances(&h.queue, few).unwrap();
    let gpu = run(&h, &s.crowd);
    let cpu = keyframe_gpu::cpu::crowd_poses(s.crowd.models(), few).unwrap();
    assert_crowds_close("three instances", &gpu, &cpu, 1e-5);
    assert_eq!(
        s.crowd
            .model(a)
            .and_then(|m| m.chunks().get(1))
            .unwrap()
            .instance_count(),
        0
    );
}

/// Mixers in chunks of two: seven characters of A (two actions each, a
/// crossfade) and three of B, interleaved, equal the twin; a bad action in
/// the last chunk is refused naming the crowd's character, and the frame
/// in effect stays.
#[test]
fn chunked_mixers_equal_their_twins_and_refusals_name_the_crowd_character() {
    let Some(h) = common::gpu("chunked_mixers_equal_their_twins") else {
        return;
    };
    let (rig_a, lib_a) = model_a();
    let (rig_b, lib_b) = model_b();
    let (bound_a, bound_b) = (lib_a.bind(&rig_a).unwrap(), lib_b.bind(&rig_b).unwrap());
    let mut crowd = Crowd::new().with_chunk_limit(2);
    let a = crowd
        .add_mixed_model(&h.device, &h.queue, "a", &bound_a, &MixerDesc::new(7, 2))
        .unwrap();
    let b = crowd
        .add_mixed_model(&h.device, &h.queue, "b", &bound_b, &MixerDesc::new(3, 1))
        .unwrap();
    assert_eq!(crowd.model(a).map(|m| m.chunks().len()), Some(4));
    assert_eq!(crowd.model(b).map(|m| m.chunks().len()), Some(2));
    let clip = |m: ModelId, n: &str| crowd.models().clip(m, n).unwrap().clip();
    let (idle, lift, bend) = (clip(a, "idle"), clip(a, "lift"), clip(a, "bend"));
    let turn = clip(b, "turn");
    let mut actions = Vec::new();
    let mut characters = Vec::new();
    for k in 0..7 {
        let t = 0.3 * f64::from(k);
        let f = k as f32 / 6.0;
        actions.push(Action::new(if k % 2 == 0 { idle } else { bend }, t).with_weight(1.0 - f));
        actions.push(Action::new(lift, t).with_weight(f));
        characters.push(CrowdCharacter::new(a, 2));
        if k < 3 {
            actions.push(Action::new(turn, t + 0.1).with_wrap(WrapMode::Repeat));
            characters.push(CrowdCharacter::new(b, 1));
        }
    }
    crowd.set_actions(&h.queue, &characters, &actions).unwrap();
    let gpu = run(&h, &crowd);
    let cpu = keyframe_gpu::cpu::crowd_mixed_poses(crowd.models(), &characters, &actions).unwrap();
    assert_crowds_close("mixers in chunks of 2", &gpu, &cpu, 1e-4);
    // The last of A's characters is character 9 of the crowd (A, B
    // alternate for three pairs, then A alone): slot 6, the first of
    // chunk 3 in chunks of 2.
    assert_eq!(crowd.slot(9), Some((a, 6)));
    let mut bad = actions.clone();
    let last = bad.len() - 1;
    bad[last] = Action::new(9, 0.0);
    match crowd.set_actions(&h.queue, &characters, &bad) {
        Err(Error::Mix(MixError::UnknownClip {
            character: 9,
            action: 1,
            clip: 9,
            ..
        })) => {}
        other => panic!("an unknown clip of crowd character 9: {other:?}"),
    }
    let again = run(&h, &crowd);
    assert_crowds_close("the frame in effect", &again, &cpu, 1e-4);
}

/// A device whose storage bindings hold 16 KiB: a model of 300 instances
/// (A's 4 world matrices and 3 joint matrices per instance alone need
/// 300 * 256 bytes) is split as the device needs, with no limit given,
/// and equals the twin; the crowd's chunk size is the largest that fits
/// (`plan::chunk_capacity`), and an animator of the same model splits
/// the same way.
#[test]
fn a_model_past_one_binding_is_split_by_the_device_limit() {
    let name = "a_model_past_one_binding_is_split_by_the_device_limit";
    let options = common::headless::DeviceOptions::new(common::headless::AdapterChoice::Fallback);
    let Some(h) = common::gpu_with(name, &options) else {
        return;
    };
    let limits = wgpu::Limits {
        max_storage_buffer_binding_size: 16 * 1024,
        ..keyframe_gpu::required_limits(&h.adapter.limits())
    };
    let (device, queue) = pollster::block_on(h.adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some(name),
        required_limits: limits,
        ..Default::default()
    }))
    .expect("the adapter offers lower limits");
    let h = common::headless::Headless {
        adapter: h.adapter,
        device,
        queue,
    };
    let (rig_a, lib_a) = model_a();
    let bound = lib_a.bind(&rig_a).unwrap();
    let profile = keyframe_gpu::DeviceProfile::of(&h.device);
    // One chunk of 300 is refused by the binding limit.
    let plan = keyframe_gpu::Plan::new(&bound, 300, &profile).unwrap();
    match Animator::from_plan(&h.device, &h.queue, &plan) {
        Err(Error::LimitExceeded { limit_name, .. }) => {
            assert_eq!(limit_name, "max_storage_buffer_binding_size");
        }
        Err(other) => panic!("300 instances in one chunk on 16 KiB bindings: {other}"),
        Ok(_) => panic!("300 instances in one chunk on 16 KiB bindings were taken"),
    }
    let mut crowd = Crowd::new();
    let a = crowd
        .add_model(&h.device, &h.queue, "a", &bound, 300)
        .unwrap();
    let size = crowd.model(a).map(|m| m.chunk_capacity()).unwrap();
    let chunks = crowd.model(a).map(|m| m.chunks().len()).unwrap();
    assert!(
        chunks > 1 && chunks == 300usize.div_ceil(size as usize),
        "{chunks} of {size}"
    );
    let fit =
        keyframe_gpu::plan::chunk_capacity(keyframe_gpu::plan::ChunkModel::Bound(&bound), &profile)
            .unwrap();
    assert_eq!(size, fit);
    // The largest that fits: one more instance per chunk does not.
    let at = |n| keyframe_gpu::Plan::new(&bound, n, &profile).unwrap();
    assert!(Animator::from_plan(&h.device, &h.queue, &at(size)).is_ok());
    assert!(Animator::from_plan(&h.device, &h.queue, &at(size + 1)).is_err());
    let alone = Animator::new(&h.device, &h.queue, &bound, 300).unwrap();
    assert_eq!(
        (alone.chunks().len(), alone.chunk_capacity()),
        (chunks, size)
    );
    let clips = ["idle", "bend", "lift"];
    let insts: Vec<CrowdInstance> = (0..300)
        .map(|k| {
            let clip = crowd.models().clip(a, clips[k % 3]).unwrap();
            CrowdInstance::new(a, clip, 0.01 * k as f64).with_wrap(WrapMode::Repeat)
        })
        .collect();
    crowd.set_instances(&h.queue, &insts).unwrap();
    let gpu = run(&h, &crowd);
    let cpu = keyframe_gpu::cpu::crowd_poses(crowd.models(), &insts).unwrap();
    assert_crowds_close("split by the device", &gpu, &cpu, 1e-5);
}
