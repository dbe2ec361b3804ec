//! `gpu::ReadbackRing`: frames read through the ring equal the CPU twin and
//! the blocking `read_back`, come back in order with their frame numbers and
//! instance counts, a full ring refuses to record (and overwrites nothing),
//! misuse is a typed error, and the steady state allocates no more than the
//! bare wgpu calls the ring makes.
//!
//! Tolerance against the CPU twin: src/tests/gpu_vs_cpu.rs argues 1e-5 relative
//! (2e-5 for unit-quaternion components, compared up to sign); every value
//! here has magnitude at most 6, so 6e-5 absolute covers both.

mod common;

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::count;

use keyframe_gpu::gpu::{ReadbackFrame, ReadbackRing, RingError};
use keyframe_gpu::{
    cpu, AnimationLibrary, Animator, Clip, Error, Instance, Interpolation, Property, Track,
    WrapMode,
};

const TOL: f32 = 6e-5;

fn ok<T>(what: &str, r: Result<T, Error>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => panic!("{what}: {e}"),
    }
}

/// Two clips of different widths: translation (linear), rotation (linear,
/// slerp), scale (step); and a clip with a cubic-spline translation alone.
fn library() -> AnimationLibrary {
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let t = Track::new(
        0,
        Property::Translation,
        Interpolation::Linear,
        vec![0.0, 1.0, 2.0],
        vec![0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    );
    let r = Track::new(
        1,
        Property::Rotation,
        Interpolation::Linear,
        vec![0.0, 2.0],
        vec![0.0, 0.0, 0.0, 1.0, 0.0, s, 0.0, s],
    );
    let sc = Track::new(
        2,
        Property::Scale,
        Interpolation::Step,
        vec![0.0, 0.5, 1.5],
        vec![1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 0.5, 0.5, 0.5],
    );
    let cubic = Track::new(
        0,
        Property::Translation,
        Interpolation::CubicSpline,
        vec![0.0, 1.0],
        vec![
            0.0, 0.0, 0.0, 1.0, -1.0, 0.5, 0.0, 1.0, 0.0, //
            0.0, 0.0, 0.0, 3.0, 2.0, -1.0, 0.0, -1.0, 0.0,
        ],
    );
    ok(
        "library",
        AnimationLibrary::new(vec![
            Clip::new("trs", vec![t, r, sc]),
            Clip::new("cubic", vec![cubic]),
        ]),
    )
}

/// Frame `f`'s instances: a count that changes per frame, times that move.
fn instances(f: u32) -> Vec<Instance> {
    let n = 5 + (f * 7) % 23;
    let wraps = [WrapMode::Clamp, WrapMode::Repeat, WrapMode::PingPong];
    (0..n)
        .map(|i| {
            Instance::new(i % 2, f64::from(f) * 0.37 + f64::from(i) * 0.11)
                .with_wrap(wraps[(i % 3) as usize])
        })
        .collect()
}

const CAPACITY: u32 = 40;

fn assert_cpu(lib: &AnimationLibrary, insts: &[Instance], gpu: &[f32], what: &str) {
    let cpu = ok("cpu sample", cpu::sample(lib, insts));
    assert_eq!(gpu.len(), cpu.len(), "{what}: length");
    let clips: Vec<u32> = insts.iter().map(|i| i.clip).collect();
    let err = common::track_diff::compare(lib, &clips, gpu, &cpu).max_abs_err();
    assert!(err <= TOL, "{what}: max |gpu - cpu| = {err}");
}

/// Sets frame `f`'s instances, records the dispatch and the ring copy,
/// submits and maps. Returns the ticket's frame number.
fn submit_frame(
    h: &common::headless::Headless,
    sampler: &mut Animator,
    ring: &mut ReadbackRing,
    insts: &[Instance],
) -> Result<u64, Error> {
    ok("set_instances", sampler.set_instances(&h.queue, insts));
    let mut encoder = h.device.create_command_encoder(&Default::default());
    sampler.record(&mut encoder);
    let recorded = ring.record(&mut encoder, &sampler.chunks()[0]);
    let submission = h.queue.submit([encoder.finish()]);
    let ticket = recorded?;
    ring.map(ticket, submission)?;
    Ok(ticket.frame())
}

#[test]
fn every_frame_equals_cpu_twin_and_blocking_read_back() {
    counting_alloc::no_lib_backtraces();
    let Some(h) = common::gpu("every_frame_equals_cpu_twin_and_blocking_read_back") else {
        return;
    };
    let lib = library();
    let mut sampler = ok(
        "sampler",
        Animator::sampler_only(&h.device, &h.queue, &lib, CAPACITY),
    );
    let mut ring = ok(
        "ring",
        ReadbackRing::for_chunk(&h.device, &sampler.chunks()[0], 3),
    );
    let stride = lib.output_stride() as usize;
    let mut out = Vec::with_capacity(CAPACITY as usize * stride);
    for f in 0..8u32 {
        let insts = instances(f);
        let frame = ok("submit", submit_frame(&h, &mut sampler, &mut ring, &insts));
        assert_eq!(frame, u64::from(f));
        // The blocking path, on the same output before the next frame.
        let poses = ok("read_back", sampler.read_back(&h.device, &h.queue));
        let blocking: Vec<f32> = (0..poses.instance_count())
            .flat_map(|i| poses.samples(i).unwrap_or(&[]).to_vec())
            .collect();
        let got = ok("wait", ring.wait(&h.device, &mut out));
        assert_eq!(
            got,
            Some(ReadbackFrame {
                frame: u64::from(f),
                count: insts.len() as u32,
                len: insts.len() * stride,
            })
        );
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&out), bits(&blocking), "frame {f}: ring vs read_back");
        assert_cpu(&lib, &insts, &out, &format!("frame {f}"));
    }
    assert_eq!(ring.in_flight(), 0);
    assert_eq!(ok("wait on empty", ring.wait(&h.device, &mut out)), None);
}

#[test]
fn pipelined_frames_come_back_in_order_and_match_cpu() {
    counting_alloc::no_lib_backtraces();
    let Some(h) = common::gpu("pipelined_frames_come_back_in_order_and_match_cpu") else {
        return;
    };
    let lib = library();
    let mut sampler = ok(
        "sampler",
        Animator::sampler_only(&h.device, &h.queue, &lib, CAPACITY),
    );
    let mut ring = ok(
        "ring",
        ReadbackRing::for_chunk(&h.device, &sampler.chunks()[0], 2),
    );
    let stride = lib.output_stride() as usize;
    let mut out = Vec::with_capacity(CAPACITY as usize * stride);
    let frames: Vec<Vec<Instance>> = (0..12).map(instances).collect();
    let mut seen = Vec::new();
    let check = |got: ReadbackFrame, out: &[f32], seen: &mut Vec<u64>| {
        let insts = &frames[got.frame as usize];
        assert_eq!(got.count as usize, insts.len(), "frame {}", got.frame);
        assert_eq!(got.len, insts.len() * stride);
        assert_cpu(&lib, insts, out, &format!("frame {}", got.frame));
        seen.push(got.frame);
    };
    let mut waits = 0;
    for insts in &frames {
        // The documented way to use a full ring: wait for the oldest frame.
        if ring.in_flight() == ring.slots() {
            let got = ok("wait", ring.wait(&h.device, &mut out));
            let Some(got) = got else {
                panic!("a full ring had nothing to wait for")
            };
            check(got, &out, &mut seen);
            waits += 1;
        }
        ok("submit", submit_frame(&h, &mut sampler, &mut ring, insts));
        while let Some(got) = ok("try_read", ring.try_read(&h.device, &mut out)) {
            check(got, &out, &mut seen);
        }
    }
    while let Some(got) = ok("wait", ring.wait(&h.device, &mut out)) {
        check(got, &out, &mut seen);
    }
    eprintln!("pipelined: {waits} of 12 frames found the ring full");
    assert_eq!(seen, (0..12).collect::<Vec<u64>>());
}

#[test]
fn a_full_ring_refuses_to_record_and_overwrites_nothing() {
    counting_alloc::no_lib_backtraces();
    let Some(h) = common::gpu("a_full_ring_refuses_to_record_and_overwrites_nothing") else {
        return;
    };
    let lib = library();
    let mut sampler = ok(
        "sampler",
        Animator::sampler_only(&h.device, &h.queue, &lib, CAPACITY),
    );
    let mut ring = ok(
        "ring",
        ReadbackRing::for_chunk(&h.device, &sampler.chunks()[0], 2),
    );
    let mut out = Vec::new();
    let (a, b, c) = (instances(1), instances(2), instances(3));
    ok("frame 0", submit_frame(&h, &mut sampler, &mut ring, &a));
    ok("frame 1", submit_frame(&h, &mut sampler, &mut ring, &b));
    // Frame 2's dispatch runs and overwrites the sampler's output, but the
    // ring has no free slot: it must refuse, not reuse frame 0's slot.
    match submit_frame(&h, &mut sampler, &mut ring, &c) {
        Err(Error::Ring(RingError::Full {
            slots: 2,
            oldest_frame: 0,
        })) => {}
        other => panic!("expected RingError::Full for frame 0, got {other:?}"),
    }
    assert_eq!(ring.in_flight(), 2);
    let got = ok("wait", ring.wait(&h.device, &mut out));
    assert_eq!(got.map(|g| (g.frame, g.count)), Some((0, a.len() as u32)));
    assert_cpu(&lib, &a, &out, "frame 0 after a refused record");
    // A slot is free again; the refused frame did not take a number.
    assert_eq!(
        ok("frame 2", submit_frame(&h, &mut sampler, &mut ring, &c)),
        2
    );
    let got = ok("wait", ring.wait(&h.device, &mut out));
    assert_eq!(got.map(|g| g.frame), Some(1));
    assert_cpu(&lib, &b, &out, "frame 1");
    let got = ok("wait", ring.wait(&h.device, &mut out));
    assert_eq!(got.map(|g| g.frame), Some(2));
    assert_cpu(&lib, &c, &out, "frame 2");
}

#[test]
fn misuse_is_a_typed_error() {
    counting_alloc::no_lib_backtraces();
    let Some(h) = common::gpu("misuse_is_a_typed_error") else {
        return;
    };
    let device = &h.device;
    let lib = library();
    let mut sampler = ok(
        "sampler",
        Animator::sampler_only(device, &h.queue, &lib, CAPACITY),
    );
    for slots in [0, keyframe_gpu::gpu::MAX_SLOTS + 1] {
        match ReadbackRing::for_chunk(device, &sampler.chunks()[0], slots) {
            Err(Error::Ring(RingError::SlotCount { requested, .. })) => {
                assert_eq!(requested, slots)
            }
            other => panic!("{slots} slots: {other:?}"),
        }
    }
    let limit = device.limits().max_buffer_size;
    match ReadbackRing::new(device, limit + 1, 2) {
        Err(Error::LimitExceeded {
            limit_name: "max_buffer_size",
            needed,
            limit: l,
            ..
        }) => assert!(needed > limit && l == limit, "needed {needed}, limit {l}"),
        other => panic!("past max_buffer_size: {other:?}"),
    }

    let mut ring = ok(
        "ring",
        ReadbackRing::for_chunk(device, &sampler.chunks()[0], 2),
    );
    let mut out = Vec::new();
    // A copy larger than a slot, one from a buffer without COPY_SRC.
    let mut encoder = device.create_command_encoder(&Default::default());
    let big = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback_ring.big"),
        size: ring.slot_bytes() + 4,
        usage: wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let no_src = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback_ring.no_src"),
        size: 64,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    for (buffer, bytes) in [(&big, ring.slot_bytes() + 4), (&no_src, 64), (&no_src, 6)] {
        match ring.record_buffer(&mut encoder, buffer, bytes, 1) {
            Err(Error::Ring(RingError::BadCopy { .. })) => {}
            other => panic!("bad copy of {bytes} bytes: {other:?}"),
        }
    }
    assert_eq!(ring.in_flight(), 0, "a refused copy took a slot");

    // Waiting for a frame that was never mapped; mapping twice; discarding
    // a frame that is not the newest.
    ok("set", sampler.set_instances(&h.queue, &instances(0)));
    sampler.record(&mut encoder);
    let t0 = ok("record", ring.record(&mut encoder, &sampler.chunks()[0]));
    match ring.wait(device, &mut out) {
        Err(Error::Ring(RingError::NotMapped { frame: 0 })) => {}
        other => panic!("wait before map: {other:?}"),
    }
    assert_eq!(
        ok("try_read before map", ring.try_read(device, &mut out)),
        None
    );
    let t1 = ok("record", ring.record(&mut encoder, &sampler.chunks()[0]));
    match ring.discard(t0) {
        Err(Error::Ring(RingError::NotNewest { frame: 0 })) => {}
        other => panic!("discard of the older frame: {other:?}"),
    }
    let submission = h.queue.submit([encoder.finish()]);
    ok("map", ring.map(t0, submission.clone()));
    match ring.map(t0, submission.clone()) {
        Err(Error::Ring(RingError::NotRecorded { frame: 0 })) => {}
        other => panic!("second map: {other:?}"),
    }
    // Frame 1 stands for an encoder that was dropped: discard it.
    ok("discard", ring.discard(t1));
    assert_eq!(ring.in_flight(), 1);
    let got = ok("wait", ring.wait(device, &mut out));
    assert_eq!(got.map(|g| g.frame), Some(0));
    assert_cpu(&lib, &instances(0), &out, "frame 0");
    assert_eq!(ok("drained", ring.wait(device, &mut out)), None);

    // An empty instance table: a frame of no floats, still numbered.
    ok("set empty", sampler.set_instances(&h.queue, &[]));
    let mut encoder = device.create_command_encoder(&Default::default());
    sampler.record(&mut encoder);
    let t = ok(
        "record empty",
        ring.record(&mut encoder, &sampler.chunks()[0]),
    );
    let submission = h.queue.submit([encoder.finish()]);
    ok("map empty", ring.map(t, submission));
    out.push(1.0);
    let got = ok("wait empty", ring.wait(device, &mut out));
    assert_eq!(
        got,
        Some(ReadbackFrame {
            frame: 2,
            count: 0,
            len: 0
        })
    );
    assert!(out.is_empty());
}

/// Steady state, per frame: `record` allocates nothing; `map` as much as
/// a bare `map_async` whose callback holds an `Arc` (wgpu boxes the
/// callback; the bare call varies by one between frames); `map` and `wait`
/// together a constant number that does not depend on the instance
/// count (wgpu's `poll`, mapped view and `unmap`); the caller's vector keeps
/// its allocation. The bare wgpu calls of `wait` (a `poll` for one
/// submission, a mapped view, `unmap`) on a buffer of the same size are
/// measured in the same run and printed; they are not an upper bound here:
/// on lavapipe `wait` measured one allocation more than the bare calls (15
/// vs 14): traced by allocation size, a Vec inside wgpu (224, 448, 896
/// bytes) grows once more, to 1792; the ring's own part (mapped view, copy
/// into the caller's vector, `unmap`), measured alone, allocated the same 10
/// as the bare calls.
#[test]
fn steady_state_allocates_nothing_of_its_own() {
    counting_alloc::no_lib_backtraces();
    let Some(h) = common::gpu("steady_state_allocates_nothing_of_its_own") else {
        return;
    };
    let (device, queue) = (&h.device, &h.queue);
    let lib = library();
    let mut sampler = ok(
        "sampler",
        Animator::sampler_only(device, queue, &lib, CAPACITY),
    );
    let mut ring = ok(
        "ring",
        ReadbackRing::for_chunk(device, &sampler.chunks()[0], 2),
    );
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback_ring.baseline"),
        size: ring.slot_bytes(),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicU8::new(0));
    let mut out: Vec<f32> = Vec::with_capacity(ring.slot_bytes() as usize / 4);
    let ptr = out.as_ptr();
    let many: Vec<Instance> = (0..CAPACITY)
        .map(|i| Instance::new(i % 2, f64::from(i) * 0.1))
        .collect();
    let few = &many[..5];
    // Frames 0..20: the ring with every instance; 20..40: the bare wgpu
    // calls; 40..60: the ring with 5 instances. The first 10 frames of each
    // phase warm up.
    let (mut full, mut bare, mut small) = (Vec::new(), Vec::new(), Vec::new());
    let mut next_frame = 0;
    for f in 0..60 {
        let insts = if f < 40 { &many[..] } else { few };
        ok("set", sampler.set_instances(queue, insts));
        let bytes = insts.len() as u64 * u64::from(lib.output_stride()) * 4;
        let mut encoder = device.create_command_encoder(&Default::default());
        sampler.record(&mut encoder);
        let counts = if (20..40).contains(&f) {
            let (rec, ()) = count(|| {
                encoder.copy_buffer_to_buffer(
                    sampler.chunks()[0].sample_buffer(),
                    0,
                    &staging,
                    0,
                    bytes,
                )
            });
            let submission = queue.submit([encoder.finish()]);
            let (map, ()) = count(|| {
                let flag = std::sync::Arc::clone(&flag);
                staging
                    .slice(..bytes)
                    .map_async(wgpu::MapMode::Read, move |r| {
                        flag.store(u8::from(r.is_ok()), std::sync::atomic::Ordering::Release);
                    });
            });
            let (read, ()) = count(|| {
                let polled = device.poll(wgpu::PollType::Wait {
                    submission_index: Some(submission),
                    timeout: None,
                });
                assert!(polled.is_ok());
                {
                    let Ok(view) = staging.slice(..bytes).get_mapped_range() else {
                        panic!("baseline view")
                    };
                    out.clear();
                    out.extend_from_slice(bytemuck::cast_slice(&view));
                }
                staging.unmap();
            });
            [rec, map, read]
        } else {
            let (rec, t) = count(|| ring.record(&mut encoder, &sampler.chunks()[0]));
            let t = ok("record", t);
            let submission = queue.submit([encoder.finish()]);
            let (map, r) = count(|| ring.map(t, submission));
            ok("map", r);
            let (read, r) = count(|| ring.wait(device, &mut out));
            let got = ok("wait", r);
            assert_eq!(
                got.map(|g| (g.frame, g.count)),
                Some((next_frame, insts.len() as u32))
            );
            next_frame += 1;
            [rec, map, read]
        };
        match f {
            10..20 => full.push(counts),
            30..40 => bare.push(counts),
            50..60 => small.push(counts),
            _ => {}
        }
    }
    assert_eq!(out.as_ptr(), ptr, "the caller's vector was reallocated");
    assert_cpu(&lib, few, &out, "last frame");
    eprintln!("ring, {CAPACITY} instances [record, map, wait]: {full:?}");
    eprintln!("ring, 5 instances [record, map, wait]: {small:?}");
    eprintln!("bare wgpu calls [copy, map_async, poll+view+unmap]: {bare:?}");
    let step = |v: &[[u64; 3]], k: usize| -> Vec<u64> { v.iter().map(|c| c[k]).collect() };
    let most = |v: Vec<u64>| v.into_iter().max().unwrap_or(0);
    let least = |v: Vec<u64>| v.into_iter().min().unwrap_or(0);
    for v in [&full, &small] {
        assert_eq!(most(step(v, 0)), 0, "record allocated");
        // A bare map_async itself varies by one from frame to frame (6 or
        // 7 on lavapipe), so the bound is the bare call's least plus one.
        assert!(
            most(step(v, 1)) <= least(step(&bare, 1)) + 1,
            "map allocated more than a bare map_async: {v:?} vs {bare:?}"
        );
    }
    // map + wait: the same small constant for every frame and every instance
    // count. The two are summed because where one of wgpu's allocations
    // lands depends on timing: when the copy has already finished at
    // map_async, the callback's bookkeeping moves from wait to map (seen on
    // a loaded host: [0, 2, 6] among [0, 3, 5]).
    let waits: Vec<u64> = full.iter().chain(&small).map(|c| c[1] + c[2]).collect();
    assert_eq!(
        most(waits.clone()),
        least(waits.clone()),
        "map + wait allocations vary from frame to frame or with the instance count: {full:?} {small:?}"
    );
}

/// The ring is generic over "a buffer and a byte length": the animator's
/// joint matrices (`Animator::joint_matrix_buffer`) read through
/// `record_buffer` equal the blocking `Animator::read_back` bit for bit and
/// the CPU twin (`cpu::poses`) within 1e-4 per element (the tolerance
/// src/tests/skinning.rs argues), frame after frame.
#[test]
fn skinner_joint_matrices_through_the_ring() {
    counting_alloc::no_lib_backtraces();
    use glam::{Mat4, Quat, Vec3};
    use keyframe_gpu::{Animator, NodeTransform, Rig};

    let Some(h) = common::gpu("skinner_joint_matrices_through_the_ring") else {
        return;
    };
    // Three joints in a chain, the middle one bending; a skinned mesh node.
    let mut b = Rig::builder();
    let j0 = b.node(None, NodeTransform::IDENTITY);
    let j1 = b.node(Some(j0), NodeTransform::translation([0.0, 1.0, 0.0]));
    let j2 = b.node(Some(j1), NodeTransform::translation([0.0, 1.0, 0.0]));
    let mesh_node = b.node(None, NodeTransform::translation([2.0, 0.0, 0.0]));
    let mesh = b.mesh(0, vec![]);
    let ibm = |k: f32| Mat4::from_translation(Vec3::new(0.0, -k, 0.0)).to_cols_array();
    let skin = b.skin(vec![j0, j1, j2], vec![ibm(0.0), ibm(1.0), ibm(2.0)]);
    b.attach(mesh_node, mesh, Some(skin));
    let rig = ok("rig", b.build().map_err(Error::from));
    let bend = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    let rot = Track::new(
        j1,
        Property::Rotation,
        Interpolation::Linear,
        vec![0.0, 1.0],
        [Quat::IDENTITY, bend]
            .iter()
            .flat_map(|q| q.to_array())
            .collect(),
    );
    let lib = ok(
        "library",
        AnimationLibrary::new(vec![Clip::new("bend", vec![rot])]),
    );
    let bound = ok("bind", lib.bind(&rig));
    let joints = rig.output_layout().joints() as usize;
    assert_eq!(joints, 3);
    let mut animator = ok("animator", Animator::new(&h.device, &h.queue, &bound, 8));
    let mut ring = ok(
        "ring",
        ReadbackRing::new(&h.device, 8 * joints as u64 * 64, 2),
    );
    let mut out = Vec::with_capacity(8 * joints * 16);
    for f in 0..5u32 {
        let insts: Vec<Instance> = (0..3 + f)
            .map(|i| Instance::new(0, f64::from(f) * 0.23 + f64::from(i) * 0.1))
            .collect();
        ok("set_instances", animator.set_instances(&h.queue, &insts));
        let mut encoder = h.device.create_command_encoder(&Default::default());
        animator.record(&mut encoder);
        let bytes = u64::from(animator.instance_count()) * joints as u64 * 64;
        let Some(joint_buffer) = animator.chunks()[0].joint_matrix_buffer() else {
            panic!("a skinned rig's animator has a joint matrix buffer")
        };
        let ticket = ok(
            "record_buffer",
            ring.record_buffer(&mut encoder, joint_buffer, bytes, animator.instance_count()),
        );
        let submission = h.queue.submit([encoder.finish()]);
        ok("map", ring.map(ticket, submission));
        let poses = ok("read_back", animator.read_back(&h.device, &h.queue));
        let blocking: Vec<f32> = (0..poses.instance_count())
            .flat_map(|i| poses.joints(i, 0).unwrap_or(&[]).iter())
            .flat_map(|m| m.to_cols_array())
            .collect();
        let got = ok("wait", ring.wait(&h.device, &mut out));
        assert_eq!(
            got.map(|g| (g.frame, g.count, g.len)),
            Some((u64::from(f), insts.len() as u32, insts.len() * joints * 16))
        );
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&out), bits(&blocking), "frame {f}: ring vs read_back");
        let cpu = ok("cpu poses", cpu::poses(&bound, &insts));
        for i in 0..insts.len() {
            let want: Vec<f32> = cpu
                .joints(i as u32, 0)
                .unwrap_or(&[])
                .iter()
                .flat_map(|m| m.to_cols_array())
                .collect();
            assert_eq!(want.len(), joints * 16);
            let got = &out[i * joints * 16..(i + 1) * joints * 16];
            let d = common::track_diff::max_abs_diff(got, &want);
            assert!(d <= 1e-4, "frame {f} instance {i}: max |gpu - cpu| = {d}");
        }
    }
}
