//! Faults: a lost device and a device that is too small.
//!
//! - After `Device::destroy` (wgpu's way to lose a device), every fallible
//!   call on the crate's GPU objects (animator, mixer, sampling-only animator, crowd,
//!   readback ring, headless helper) returns `Error::DeviceLost`, with no
//!   panic and no stale frame: a ring frame mapped before the loss is not
//!   handed back, a readback of a frame in flight at the loss is an error.
//!   Recording records nothing and does not panic.
//! - The device-free model (library, rig, bound library, mixer
//!   description) survives: the objects rebuilt from it on a new device
//!   give the CPU twin's results (tolerance 1e-4 per element, as the mixer
//!   tests: src/tests/mixer.rs).
//! - A capacity past the device's limits is refused with a typed error
//!   before anything is created, and the device still works.
//!
//! No test here can hang: every call after a loss returns at once or
//! waits only for the work queued before it (wgpu's wait on a destroyed
//! device, checked on lavapipe and llvmpipe), and the waits are the
//! crate's own, not timers in the test. Runs on the backend
//! `WGPU_BACKEND` picks (CI runs Vulkan and GL).

mod common;

use common::headless::Headless;
use glam::Quat;
use keyframe_gpu::gpu::{is_device_lost, ReadbackRing};
use keyframe_gpu::{
    Action, AnimationLibrary, Animator, BoundLibrary, Clip, Crowd, CrowdInstance, Error, Instance,
    Interpolation, Mask, MixerDesc, Poses, Property, Track, WrapMode,
};
use keyframe_gpu::{NodeTransform, Rig};

/// Four nodes: 0 root, 1 spine (child of 0, a mesh of two morph targets
/// skinned over every node), 2 head and 3 arm (children of 1).
fn rig() -> Rig {
    let mut b = Rig::builder();
    let at = |t: [f32; 3]| NodeTransform::Trs {
        translation: t,
        rotation: [0.0, 0.0, 0.0, 1.0],
        scale: [1.0; 3],
    };
    let root = b.node(None, at([0.0, 0.0, 0.0]));
    let spine = b.node(Some(root), at([0.0, 1.0, 0.0]));
    let head = b.node(Some(spine), at([0.0, 0.5, 0.0]));
    let arm = b.node(Some(spine), at([0.4, 0.3, 0.0]));
    let mesh = b.mesh(2, vec![0.0, 0.0]);
    let skin = b.skin(
        vec![root, spine, head, arm],
        vec![glam::Mat4::IDENTITY.to_cols_array(); 4],
    );
    b.attach(spine, mesh, Some(skin));
    b.build().expect("a valid rig")
}

fn quats(qs: &[Quat]) -> Vec<f32> {
    qs.iter().flat_map(|q| q.to_array()).collect()
}

/// Clips 0 walk, 1 run, 2 wave (the arm only), 3 breathe (played
/// additive): three keys over one second.
fn library() -> AnimationLibrary {
    let times = vec![0.0, 0.5, 1.0];
    let t = |node, values: Vec<f32>| {
        Track::new(
            node,
            Property::Translation,
            Interpolation::Linear,
            times.clone(),
            values,
        )
    };
    let r = |node, qs: &[Quat]| {
        Track::new(
            node,
            Property::Rotation,
            Interpolation::Linear,
            times.clone(),
            quats(qs),
        )
    };
    let w = Track::weights(
        1,
        2,
        Interpolation::Linear,
        times.clone(),
        vec![0.0, 1.0, 0.5, 0.5, 1.0, 0.0],
    );
    let clips = vec![
        Clip::new(
            "walk",
            vec![
                t(0, vec![0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0]),
                r(
                    1,
                    &[
                        Quat::from_rotation_z(-0.2),
                        Quat::from_rotation_z(0.2),
                        Quat::from_rotation_z(-0.2),
                    ],
                ),
                r(
                    2,
                    &[Quat::IDENTITY, Quat::from_rotation_y(0.4), Quat::IDENTITY],
                ),
                w,
            ],
        ),
        Clip::new(
            "run",
            vec![
                t(0, vec![0.0, 0.0, 0.0, 1.5, 0.2, 0.0, 3.0, 0.0, 0.0]),
                r(
                    1,
                    &[
                        Quat::from_rotation_x(0.5),
                        Quat::from_rotation_x(-0.5),
                        Quat::from_rotation_x(0.5),
                    ],
                ),
            ],
        ),
        Clip::new(
            "wave",
            vec![r(
                3,
                &[
                    Quat::from_rotation_z(1.0),
                    Quat::from_rotation_z(2.0),
                    Quat::from_rotation_z(1.0),
                ],
            )],
        ),
        Clip::new(
            "breathe",
            vec![r(
                1,
                &[Quat::IDENTITY, Quat::from_rotation_x(0.1), Quat::IDENTITY],
            )],
        ),
    ];
    AnimationLibrary::new(clips).expect("a valid library")
}

/// The mixer: two masks, the arm and everything else.
fn mixer(rig: &Rig, characters: u32) -> MixerDesc {
    let mut desc = MixerDesc::new(characters, 4);
    let arm = Mask::subtree(rig, 3).expect("node 3 is in the rig");
    desc.add_mask(arm.inverted());
    desc.add_mask(arm);
    desc
}

/// A frame of `n` characters: a crossfade from walk to run, the arm
/// waving over it (masked), breathing added on top.
fn actions(n: u32, time: f64) -> (Vec<Action>, Vec<u32>) {
    let desc_masks = (keyframe_gpu::MaskId::new(0), keyframe_gpu::MaskId::new(1));
    let mut actions = Vec::new();
    let mut counts = Vec::new();
    for c in 0..n {
        let t = time + f64::from(c) * 0.13;
        let fade = (f64::from(c) / f64::from(n.max(1))) as f32;
        actions.push(
            Action::new(0, t)
                .with_weight(1.0 - fade)
                .with_wrap(WrapMode::Repeat)
                .with_mask(desc_masks.0),
        );
        actions.push(
            Action::new(1, t)
                .with_weight(fade)
                .with_wrap(WrapMode::Repeat)
                .with_mask(desc_masks.0),
        );
        actions.push(
            Action::new(2, t)
                .with_wrap(WrapMode::PingPong)
                .with_mask(desc_masks.1),
        );
        actions.push(
            Action::new(3, t)
                .with_wrap(WrapMode::Repeat)
                .additive(0.0)
                .with_weight(0.5),
        );
        counts.push(4);
    }
    (actions, counts)
}

fn instances(n: u32, time: f64) -> Vec<Instance> {
    (0..n)
        .map(|i| Instance::new(i % 4, time + f64::from(i) * 0.07).with_wrap(WrapMode::Repeat))
        .collect()
}

/// Records `animator`'s passes, submits them and reads the frame back.
fn frame(h: &Headless, animator: &Animator) -> Result<Poses, Error> {
    let mut encoder = h.device.create_command_encoder(&Default::default());
    animator.record(&mut encoder);
    h.queue.submit([encoder.finish()]);
    animator.read_back(&h.device, &h.queue)
}

/// Every world matrix, local transform (rotations up to sign), joint
/// matrix and morph weight of `gpu` within the README's tolerance of
/// `cpu` (`Poses::compare`).
fn assert_close(label: &str, gpu: &Poses, cpu: &Poses) {
    let c = gpu.compare(cpu).unwrap_or_else(|e| panic!("{label}: {e}"));
    assert!(
        c.within(),
        "{label}: GPU and CPU differ past the tolerance (largest per quantity {:?}); worst element: {}",
        c.max_abs,
        c.worst.map_or_else(String::new, |w| w.to_string())
    );
}

/// `result` is `Error::DeviceLost`.
#[track_caller]
fn assert_lost<T: std::fmt::Debug>(what: &str, result: Result<T, Error>) {
    match result {
        Err(Error::DeviceLost { .. }) => {}
        other => panic!("{what} after the loss: {other:?}, not DeviceLost"),
    }
}

/// Everything built on one device: the model's objects, a frame run, a
/// readback ring with a frame mapped and not read.
struct OnDevice {
    plain: Animator,
    mixed: Animator,
    sampler: Animator,
    crowd: Crowd,
    ring: ReadbackRing,
}

const N: u32 = 12;

fn build(h: &Headless, bound: &BoundLibrary, desc: &MixerDesc) -> OnDevice {
    let (device, queue) = (&h.device, &h.queue);
    let mut plain = Animator::new(device, queue, bound, N).unwrap();
    let mut mixed = Animator::with_mixer(device, queue, bound, desc).unwrap();
    let mut sampler = Animator::sampler_only(device, queue, bound.library(), N).unwrap();
    let mut crowd = Crowd::new();
    let model = crowd.add_model(device, queue, "hero", bound, N).unwrap();
    plain.set_instances(queue, &instances(N, 0.3)).unwrap();
    let (acts, counts) = actions(N, 0.3);
    mixed.set_actions(queue, &acts, &counts).unwrap();
    sampler.set_instances(queue, &instances(N, 0.3)).unwrap();
    let walk = crowd.models().clip(model, "walk").unwrap();
    crowd
        .set_instances(queue, &[CrowdInstance::new(model, walk, 0.25)])
        .unwrap();
    let mut ring = ReadbackRing::for_chunk(device, &sampler.chunks()[0], 2).unwrap();
    let mut encoder = device.create_command_encoder(&Default::default());
    plain.record(&mut encoder);
    mixed.record(&mut encoder);
    sampler.record(&mut encoder);
    crowd.record(&mut encoder);
    let ticket = ring.record(&mut encoder, &sampler.chunks()[0]).unwrap();
    let submission = queue.submit([encoder.finish()]);
    ring.map(ticket, submission).unwrap();
    OnDevice {
        plain,
        mixed,
        sampler,
        crowd,
        ring,
    }
}

#[test]
fn after_a_device_loss_every_call_says_so_and_the_model_rebuilds_on_a_new_device() {
    let name = "after_a_device_loss_every_call_says_so_and_the_model_rebuilds_on_a_new_device";
    let Some(h) = common::gpu(name) else {
        return;
    };
    let rig = rig();
    let bound = library().bind(&rig).unwrap();
    let desc = mixer(&rig, N);
    let mut objects = build(&h, &bound, &desc);
    // Everything queued is done, the ring's frame mapped: what a loss
    // must not hand back.
    h.wait().unwrap();
    assert!(!is_device_lost(&h.device));
    h.device.destroy();

    let (device, queue) = (&h.device, &h.queue);
    let o = &mut objects;
    // The first call after the loss sees it.
    assert_lost(
        "Animator::set_instances",
        o.plain.set_instances(queue, &instances(N, 0.5)),
    );
    let (acts, counts) = actions(N, 0.5);
    assert_lost(
        "Animator::set_actions",
        o.mixed.set_actions(queue, &acts, &counts),
    );
    assert_lost(
        "mixed Animator::set_instances",
        o.mixed.set_instances(queue, &instances(N, 0.5)),
    );
    assert_lost(
        "Animator::set_instances (sampling only)",
        o.sampler.set_instances(queue, &instances(N, 0.5)),
    );
    let model = o.crowd.models().model_ids().next().unwrap();
    let walk = o.crowd.models().clip(model, "walk").unwrap();
    assert_lost(
        "Crowd::set_instances",
        o.crowd
            .set_instances(queue, &[CrowdInstance::new(model, walk, 0.5)]),
    );
    // Recording cannot fail: it records nothing, and submitting the
    // encoder of a lost device does not panic.
    let mut encoder = device.create_command_encoder(&Default::default());
    o.plain.record(&mut encoder);
    o.mixed.record(&mut encoder);
    o.sampler.record(&mut encoder);
    o.crowd.record(&mut encoder);
    assert_lost(
        "ReadbackRing::record",
        o.ring.record(&mut encoder, &o.sampler.chunks()[0]),
    );
    queue.submit([encoder.finish()]);
    // No stale results: no readback, not the frame mapped before the loss.
    assert_lost("Animator::read_back", o.plain.read_back(device, queue));
    assert_lost(
        "mixed Animator::read_back",
        o.mixed.read_back(device, queue),
    );
    assert_lost(
        "Animator::read_back (sampling only)",
        o.sampler.read_back(device, queue),
    );
    assert_lost("Crowd::read_back", o.crowd.read_back(device, queue));
    let mut out = vec![-1.0];
    assert_lost("ReadbackRing::try_read", o.ring.try_read(device, &mut out));
    assert_lost("ReadbackRing::wait", o.ring.wait(device, &mut out));
    assert_eq!(out, [-1.0], "nothing written into the caller's vector");
    // The tests' device helper hears of it through is_device_lost.
    assert_eq!(
        h.wait(),
        Err("Headless::wait: the device is lost".to_owned())
    );
    // New objects on the lost device.
    assert_lost("Animator::new", Animator::new(device, queue, &bound, N));
    assert_lost(
        "Animator::with_mixer",
        Animator::with_mixer(device, queue, &bound, &desc),
    );
    assert_lost(
        "Animator::sampler_only",
        Animator::sampler_only(device, queue, bound.library(), N),
    );
    assert_lost("ReadbackRing::new", ReadbackRing::new(device, 64, 2));
    assert_lost(
        "Crowd::add_model",
        o.crowd.add_model(device, queue, "villain", &bound, N),
    );
    assert!(keyframe_gpu::PassTimer::new(device, queue).is_none());
    assert!(is_device_lost(device));

    // The model survived: rebuild on a new device, from the same bound
    // library and mixer description, and check against the CPU twin.
    let Some(fresh) = common::gpu(name) else {
        return;
    };
    let (device, queue) = (&fresh.device, &fresh.queue);
    let mut plain = Animator::new(device, queue, &bound, N).unwrap();
    let mut mixed = Animator::with_mixer(device, queue, &bound, &desc).unwrap();
    for time in [0.0, 0.4, 1.7] {
        let inst = instances(N, time);
        plain.set_instances(queue, &inst).unwrap();
        let gpu = frame(&fresh, &plain).unwrap();
        let cpu = keyframe_gpu::cpu::poses(&bound, &inst).unwrap();
        assert_close(&format!("rebuilt animator at {time}"), &gpu, &cpu);

        let (acts, counts) = actions(N, time);
        mixed.set_actions(queue, &acts, &counts).unwrap();
        let gpu = frame(&fresh, &mixed).unwrap();
        let cpu = keyframe_gpu::cpu::mixed_poses(&bound, &desc.masks, &acts, &counts).unwrap();
        assert_close(&format!("rebuilt mixer at {time}"), &gpu, &cpu);
    }
    assert!(!is_device_lost(device));
}

#[test]
fn a_loss_with_work_in_flight_is_an_error_never_the_last_frame() {
    let name = "a_loss_with_work_in_flight_is_an_error_never_the_last_frame";
    let Some(h) = common::gpu(name) else {
        return;
    };
    let rig = rig();
    let bound = library().bind(&rig).unwrap();
    let desc = mixer(&rig, N);
    let (device, queue) = (&h.device, &h.queue);
    let mut mixed = Animator::with_mixer(device, queue, &bound, &desc).unwrap();
    let mut sampler = Animator::sampler_only(device, queue, bound.library(), N).unwrap();
    let mut ring = ReadbackRing::for_chunk(device, &sampler.chunks()[0], 2).unwrap();
    // A frame that runs and reads back: the objects work.
    let (acts, counts) = actions(N, 0.2);
    mixed.set_actions(queue, &acts, &counts).unwrap();
    frame(&h, &mixed).unwrap();
    // The next frame is submitted, the device destroyed before its results
    // are read: the frame never comes back.
    let (acts, counts) = actions(N, 0.6);
    mixed.set_actions(queue, &acts, &counts).unwrap();
    sampler.set_instances(queue, &instances(N, 0.6)).unwrap();
    let mut encoder = device.create_command_encoder(&Default::default());
    mixed.record(&mut encoder);
    sampler.record(&mut encoder);
    let ticket = ring.record(&mut encoder, &sampler.chunks()[0]).unwrap();
    let submission = queue.submit([encoder.finish()]);
    ring.map(ticket, submission).unwrap();
    h.device.destroy();
    assert_lost("Animator::read_back", mixed.read_back(device, queue));
    let mut out = Vec::new();
    assert_lost("ReadbackRing::wait", ring.wait(device, &mut out));
    assert!(out.is_empty());
    assert_lost(
        "Animator::set_actions",
        mixed.set_actions(queue, &acts, &counts),
    );
}

#[test]
fn a_capacity_past_the_device_limits_is_refused_before_anything_is_created() {
    let name = "a_capacity_past_the_device_limits_is_refused_before_anything_is_created";
    // A device whose storage bindings hold 64 KiB: the joint matrices of
    // 1,000 characters of four joints (256 KiB) do not fit.
    let options = common::headless::DeviceOptions::new(common::headless::AdapterChoice::Fallback);
    let Some(h) = common::gpu_with(name, &options) else {
        return;
    };
    let adapter_limits = h.adapter.limits();
    let limits = wgpu::Limits {
        max_storage_buffer_binding_size: 64 * 1024,
        ..keyframe_gpu::required_limits(&adapter_limits)
    };
    let (device, queue) = pollster::block_on(h.adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some(name),
        required_limits: limits,
        ..Default::default()
    }))
    .expect("the adapter offers lower limits");
    let rig = rig();
    let bound = library().bind(&rig).unwrap();
    // Caught by a validation scope if anything were created and refused by
    // wgpu: nothing is, the refusal is the crate's own.
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let profile = keyframe_gpu::DeviceProfile::of(&device);
    let one_chunk = keyframe_gpu::Plan::new(&bound, 1_000, &profile).unwrap();
    match Animator::from_plan(&device, &queue, &one_chunk) {
        Err(Error::LimitExceeded { limit_name, .. }) => {
            assert_eq!(limit_name, "max_storage_buffer_binding_size");
        }
        Err(e) => panic!("1,000 characters in one chunk on 64 KiB bindings: {e}"),
        Ok(_) => panic!("1,000 characters in one chunk on 64 KiB bindings were taken"),
    }
    let mixed = keyframe_gpu::Plan::for_mixer(
        &bound,
        &mixer(&rig, 1_000),
        &profile,
        keyframe_gpu::SamplerPlan::Auto,
    )
    .unwrap();
    match Animator::from_plan(&device, &queue, &mixed) {
        Err(Error::LimitExceeded { .. }) => {}
        Err(e) => panic!("a mixer of 1,000 characters in one chunk on 64 KiB bindings: {e}"),
        Ok(_) => panic!("a mixer of 1,000 characters in one chunk was taken"),
    }
    // Without a plan, the animator splits them into chunks that fit.
    let chunked = Animator::new(&device, &queue, &bound, 1_000).unwrap();
    assert!(chunked.chunks().len() > 1);
    assert!(pollster::block_on(scope.pop()).is_none());
    // The device is still good: a capacity that fits runs, as the twin.
    let h = Headless {
        adapter: h.adapter,
        device,
        queue,
    };
    let mut animator = Animator::new(&h.device, &h.queue, &bound, N).unwrap();
    let inst = instances(N, 0.8);
    animator.set_instances(&h.queue, &inst).unwrap();
    let gpu = frame(&h, &animator).unwrap();
    let cpu = keyframe_gpu::cpu::poses(&bound, &inst).unwrap();
    assert_close("after the refusal", &gpu, &cpu);
}

/// How many characters the frame-loop tests drive: enough work that the
/// CPU adapter is still busy with the frames submitted before the loss
/// when the next frame's calls run (a loss that waited for the queue to
/// empty would be seen frames late).
const LOOP_N: u32 = 500;

/// Frames submitted back to back before the loss.
const LOSS_AT: u64 = 6;

/// The first frame (counted from the loss: 0 is the loss's own frame) at
/// which each object's fallible call returned `DeviceLost`.
#[derive(Debug, Default)]
struct Detected {
    plain: Option<u64>,
    mixed: Option<u64>,
    sampler: Option<u64>,
    crowd: Option<u64>,
    ring: Option<u64>,
}

/// `Some(frame - LOSS_AT)` the first time `result` is `DeviceLost`;
/// any other error fails the test.
#[track_caller]
fn seen<T: std::fmt::Debug>(
    slot: &mut Option<u64>,
    frame: u64,
    what: &str,
    result: Result<T, Error>,
) {
    match result {
        Ok(_) => assert!(
            frame < LOSS_AT || slot.is_none(),
            "{what} worked at frame {frame}, after the loss was reported"
        ),
        Err(Error::DeviceLost { .. }) => {
            assert!(
                frame >= LOSS_AT,
                "{what} reported a loss at frame {frame}, before it"
            );
            slot.get_or_insert(frame - LOSS_AT);
        }
        Err(Error::Ring(keyframe_gpu::gpu::RingError::Full { .. })) => {}
        Err(e) => panic!("{what} at frame {frame}: {e}"),
    }
}

#[test]
fn a_frame_loop_that_never_waits_sees_a_loss_within_two_frames() {
    let name = "a_frame_loop_that_never_waits_sees_a_loss_within_two_frames";
    let Some(h) = common::gpu(name) else {
        return;
    };
    let rig = rig();
    let bound = library().bind(&rig).unwrap();
    let desc = mixer(&rig, LOOP_N);
    let (device, queue) = (&h.device, &h.queue);
    let mut plain = Animator::new(device, queue, &bound, LOOP_N).unwrap();
    let mut mixed = Animator::with_mixer(device, queue, &bound, &desc).unwrap();
    let mut sampler = Animator::sampler_only(device, queue, bound.library(), LOOP_N).unwrap();
    let mut crowd = Crowd::new();
    let hero = crowd
        .add_model(device, queue, "hero", &bound, LOOP_N)
        .unwrap();
    let extra = crowd
        .add_model(device, queue, "extra", &bound, LOOP_N)
        .unwrap();
    let (walk, run) = (
        crowd.models().clip(hero, "walk").unwrap(),
        crowd.models().clip(extra, "run").unwrap(),
    );
    // A ring of its own (not the animator's), so that it sees the loss
    // through its own calls.
    let bytes = sampler.chunks()[0].sample_buffer().size();
    let mut ring = ReadbackRing::new(device, bytes, 3).unwrap();
    let mut out = Vec::new();
    let mut d = Detected::default();

    // A game's loop: every frame new times, recorded into one encoder,
    // submitted, a non-blocking poll; never a wait.
    for f in 0..LOSS_AT + 4 {
        if f == LOSS_AT {
            device.destroy();
        }
        let time = 0.016 * f as f64;
        if d.plain.is_none() {
            seen(
                &mut d.plain,
                f,
                "Animator::set_instances",
                plain.set_instances(queue, &instances(LOOP_N, time)),
            );
        }
        if d.mixed.is_none() {
            let (acts, counts) = actions(LOOP_N, time);
            seen(
                &mut d.mixed,
                f,
                "Animator::set_actions",
                mixed.set_actions(queue, &acts, &counts),
            );
        }
        if d.sampler.is_none() {
            seen(
                &mut d.sampler,
                f,
                "Animator::set_instances (sampling only)",
                sampler.set_instances(queue, &instances(LOOP_N, time)),
            );
        }
        if d.crowd.is_none() {
            let people: Vec<CrowdInstance> = (0..LOOP_N)
                .map(|i| {
                    let t = time + f64::from(i) * 0.01;
                    if i % 2 == 0 {
                        CrowdInstance::new(hero, walk, t)
                    } else {
                        CrowdInstance::new(extra, run, t)
                    }
                })
                .collect();
            seen(
                &mut d.crowd,
                f,
                "Crowd::set_instances",
                crowd.set_instances(queue, &people),
            );
        }
        let mut encoder = device.create_command_encoder(&Default::default());
        plain.record(&mut encoder);
        mixed.record(&mut encoder);
        sampler.record(&mut encoder);
        crowd.record(&mut encoder);
        let ticket = if d.ring.is_none() {
            let t = ring.record_buffer(
                &mut encoder,
                sampler.chunks()[0].sample_buffer(),
                bytes,
                LOOP_N,
            );
            let ok = t.as_ref().ok().copied();
            seen(&mut d.ring, f, "ReadbackRing::record_buffer", t);
            ok
        } else {
            None
        };
        let submission = queue.submit([encoder.finish()]);
        if let Some(ticket) = ticket {
            seen(
                &mut d.ring,
                f,
                "ReadbackRing::map",
                ring.map(ticket, submission),
            );
        }
        let _ = device.poll(wgpu::PollType::Poll);
        if d.ring.is_none() {
            seen(
                &mut d.ring,
                f,
                "ReadbackRing::try_read",
                ring.try_read(device, &mut out),
            );
        }
    }
    for (what, frames) in [
        ("Animator::set_instances", d.plain),
        ("Animator::set_actions", d.mixed),
        ("Animator::set_instances (sampling only)", d.sampler),
        ("Crowd::set_instances", d.crowd),
        ("ReadbackRing", d.ring),
    ] {
        match frames {
            Some(n) => assert!(n < 2, "{what} saw the loss {n} frames after it (at most 1)"),
            None => panic!("{what} never saw the loss in 4 frames: {d:?}"),
        }
    }
}

#[test]
fn a_loss_seen_by_read_back_is_reported_by_every_call_and_a_rebuild_equals_the_twin() {
    let name = "a_loss_seen_by_read_back_is_reported_by_every_call_and_a_rebuild_equals_the_twin";
    let Some(h) = common::gpu(name) else {
        return;
    };
    let rig = rig();
    let bound = library().bind(&rig).unwrap();
    let desc = mixer(&rig, LOOP_N);
    let (device, queue) = (&h.device, &h.queue);
    let mut mixed = Animator::with_mixer(device, queue, &bound, &desc).unwrap();
    // Frames in flight, never waited for.
    for f in 0..LOSS_AT {
        let (acts, counts) = actions(LOOP_N, 0.016 * f as f64);
        mixed.set_actions(queue, &acts, &counts).unwrap();
        let mut encoder = device.create_command_encoder(&Default::default());
        mixed.record(&mut encoder);
        queue.submit([encoder.finish()]);
        let _ = device.poll(wgpu::PollType::Poll);
    }
    device.destroy();
    // The readback sees the loss; every call after it says so too.
    assert_lost("Animator::read_back", mixed.read_back(device, queue));
    let (acts, counts) = actions(LOOP_N, 1.0);
    assert_lost(
        "Animator::set_actions after read_back",
        mixed.set_actions(queue, &acts, &counts),
    );
    assert_lost(
        "Animator::set_instances after read_back",
        mixed.set_instances(queue, &instances(LOOP_N, 1.0)),
    );
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let mut encoder = device.create_command_encoder(&Default::default());
    mixed.record(&mut encoder);
    queue.submit([encoder.finish()]);
    assert!(pollster::block_on(scope.pop()).is_none());
    assert_lost("Animator::read_back again", mixed.read_back(device, queue));

    // The model rebuilds on a new device; its first frame is the twin's.
    let Some(fresh) = common::gpu(name) else {
        return;
    };
    let mut mixed = Animator::with_mixer(&fresh.device, &fresh.queue, &bound, &desc).unwrap();
    mixed.set_actions(&fresh.queue, &acts, &counts).unwrap();
    let gpu = frame(&fresh, &mixed).unwrap();
    let cpu = keyframe_gpu::cpu::mixed_poses(&bound, &desc.masks, &acts, &counts).unwrap();
    assert_close("the rebuilt mixer's first frame", &gpu, &cpu);
}
