//! The one object a renderer holds: `Animator` takes the instance table
//! once, records sampling, pose and skin passes, and its readback is
//! indexed by instance, node, skin and mesh. Checked against the CPU twin
//! and against matrices built by hand.

mod common;

use glam::{Mat4, Quat, Vec3};
use keyframe_gpu::NodeTransform;
use keyframe_gpu::{
    AnimationLibrary, Animator, Clip, Error, Instance, Interpolation, Property, Rig, Track,
};

/// A chain j0 -> j1 -> j2 (unit steps up y) skinned on a mesh node at
/// x = 2 whose mesh has two morph targets; clip "bend" turns j1 from the
/// identity to 90 degrees about z over one second and fades the weights
/// from (0, 1) to (1, 0); clip "lift" moves j0 up by 3 over two seconds.
fn model() -> (Rig, AnimationLibrary) {
    let mut b = Rig::builder();
    let j0 = b.node(None, NodeTransform::IDENTITY);
    let j1 = b.node(Some(j0), NodeTransform::translation([0.0, 1.0, 0.0]));
    let j2 = b.node(Some(j1), NodeTransform::translation([0.0, 1.0, 0.0]));
    let mesh_node = b.node(None, NodeTransform::translation([2.0, 0.0, 0.0]));
    b.name(j2, "tip");
    let mesh = b.mesh(2, vec![0.25, 0.75]);
    let ibm = |k: f32| Mat4::from_translation(Vec3::new(0.0, -k, 0.0)).to_cols_array();
    let skin = b.skin(vec![j0, j1, j2], vec![ibm(0.0), ibm(1.0), ibm(2.0)]);
    b.attach(mesh_node, mesh, Some(skin));
    let rig = b.build().unwrap();
    let q = |r: Quat| r.to_array().to_vec();
    let bend = Clip::new(
        "bend",
        vec![
            Track::new(
                j1,
                Property::Rotation,
                Interpolation::Linear,
                vec![0.0, 1.0],
                [
                    q(Quat::IDENTITY),
                    q(Quat::from_rotation_z(std::f32::consts::FRAC_PI_2)),
                ]
                .concat(),
            ),
            Track::weights(
                mesh_node,
                2,
                Interpolation::Linear,
                vec![0.0, 1.0],
                vec![0.0, 1.0, 1.0, 0.0],
            ),
        ],
    );
    let lift = Clip::new(
        "lift",
        vec![Track::new(
            j0,
            Property::Translation,
            Interpolation::Linear,
            vec![0.0, 2.0],
            vec![0.0, 0.0, 0.0, 0.0, 3.0, 0.0],
        )],
    );
    (rig, AnimationLibrary::new(vec![bend, lift]).unwrap())
}

fn close(a: &[f32], b: &[f32], tol: f32) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
}

#[test]
fn one_instance_table_drives_every_pass_and_matches_the_cpu_twin() {
    let Some(h) = common::gpu("one_instance_table_drives_every_pass_and_matches_the_cpu_twin")
    else {
        return;
    };
    let (rig, lib) = model();
    let mut animator = Animator::new(&h.device, &h.queue, &lib.bind(&rig).unwrap(), 8).unwrap();
    let bend = lib.clip_by_name("bend").unwrap();
    let lift = lib.clip_by_name("lift").unwrap();
    let tip = rig.node_by_name("tip").unwrap();
    let instances = [
        Instance::new(bend, 1.0),
        Instance::new(lift, 1.0),
        Instance::new(bend, 0.5),
    ];
    animator.set_instances(&h.queue, &instances).unwrap();
    let mut encoder = h.device.create_command_encoder(&Default::default());
    animator.record(&mut encoder);
    h.queue.submit([encoder.finish()]);
    let poses = animator.read_back(&h.device, &h.queue).unwrap();
    assert_eq!(poses.instance_count(), 3);

    // By hand: instance 0 has j1 turned 90 degrees about z, so the tip
    // (one unit up j1's y axis) sits at (-1, 1, 0).
    let tip0 = poses.world(0, tip).unwrap().to_cols_array();
    let want = Mat4::from_translation(Vec3::new(0.0, 1.0, 0.0))
        * Mat4::from_quat(Quat::from_rotation_z(std::f32::consts::FRAC_PI_2))
        * Mat4::from_translation(Vec3::new(0.0, 1.0, 0.0));
    assert!(close(&tip0, &want.to_cols_array(), 1e-5), "{tip0:?}");
    // Instance 1 lifts j0 by 1.5 (half of 3 at half the clip): the tip is
    // at y = 3.5, and the joint matrix of j0 is mesh_inverse * T(0, 1.5, 0).
    let tip1 = poses.world(1, tip).unwrap().to_cols_array();
    assert!(close(&tip1[12..15], &[0.0, 3.5, 0.0], 1e-6), "{tip1:?}");
    let joints1 = poses.joints(1, 0).unwrap();
    assert_eq!(joints1.len(), 3);
    let want_j0 = Mat4::from_translation(Vec3::new(-2.0, 1.5, 0.0));
    assert!(close(
        &joints1[0].to_cols_array(),
        &want_j0.to_cols_array(),
        1e-6
    ));
    // Morph weights, by mesh node: bend at 0.5 is halfway between (0, 1)
    // and (1, 0); lift does not animate them, so the mesh's defaults hold.
    let mesh_node = rig.parts()[0].node;
    assert_eq!(poses.morph_weights(2, mesh_node).unwrap(), [0.5, 0.5]);
    assert_eq!(poses.morph_weights(1, mesh_node).unwrap(), [0.25, 0.75]);
    // A node without a mesh has no weights.
    assert!(poses.morph_weights(1, tip).is_none());

    // Everything against the CPU twin.
    let cpu = keyframe_gpu::cpu::poses(&lib.bind(&rig).unwrap(), &instances).unwrap();
    let c = poses.compare(&cpu).unwrap();
    assert!(c.within(), "GPU against the twin: {:?}", c.worst);
    let sampled = keyframe_gpu::cpu::sample(&lib, &instances).unwrap();
    let stride = lib.output_stride() as usize;
    for i in 0..3u32 {
        let got = poses.samples(i).unwrap();
        let want = &sampled[i as usize * stride..][..stride];
        // The part of the block the instance's clip writes.
        let clip = instances[i as usize].clip;
        let used = (0..lib.clips()[clip as usize].tracks.len() as u32)
            .filter_map(|t| lib.track_output(clip, t))
            .map(|(offset, width)| (offset + width) as usize)
            .max()
            .unwrap_or(0);
        assert!(close(&got[..used], &want[..used], 2e-5), "{i}");
    }

    // Out of range: None, never a panic.
    assert!(poses.world(3, 0).is_none());
    assert!(poses.world(0, 99).is_none());
    assert!(poses.joints(0, 1).is_none());
    assert!(poses.morph_weights(3, 0).is_none());
    assert!(poses.samples(3).is_none());

    // A new table alone re-poses every pass: instance 0 now plays lift at
    // 2 s, the tip at y = 3 + 2.
    animator
        .set_instances(&h.queue, &[Instance::new(lift, 2.0)])
        .unwrap();
    let mut encoder = h.device.create_command_encoder(&Default::default());
    animator.record(&mut encoder);
    h.queue.submit([encoder.finish()]);
    let poses = animator.read_back(&h.device, &h.queue).unwrap();
    assert_eq!(poses.instance_count(), 1);
    assert!(close(
        &poses.world(0, tip).unwrap().w_axis.truncate().to_array(),
        &[0.0, 5.0, 0.0],
        1e-6
    ));
}

#[test]
fn refused_instances_leave_the_previous_frame_in_place() {
    let Some(h) = common::gpu("refused_instances_leave_the_previous_frame_in_place") else {
        return;
    };
    let (rig, lib) = model();
    let mut animator = Animator::new(&h.device, &h.queue, &lib.bind(&rig).unwrap(), 2).unwrap();
    animator
        .set_instances(&h.queue, &[Instance::new(1, 2.0)])
        .unwrap();
    let too_many = [Instance::new(0, 0.0); 3];
    assert!(matches!(
        animator.set_instances(&h.queue, &too_many),
        Err(Error::TooManyInstances {
            requested: 3,
            capacity: 2
        })
    ));
    assert!(matches!(
        animator.set_instances(&h.queue, &[Instance::new(0, 0.0), Instance::new(7, 0.0)]),
        Err(Error::ClipOutOfRange {
            instance: 1,
            clip: 7,
            ..
        })
    ));
    assert!(matches!(
        animator.set_instances(&h.queue, &[Instance::new(0, f64::NAN)]),
        Err(Error::InstanceTimeNotFinite { instance: 0, .. })
    ));
    let mut encoder = h.device.create_command_encoder(&Default::default());
    animator.record(&mut encoder);
    h.queue.submit([encoder.finish()]);
    let poses = animator.read_back(&h.device, &h.queue).unwrap();
    assert_eq!(poses.instance_count(), 1);
    let tip = rig.node_by_name("tip").unwrap();
    assert!(close(
        &poses.world(0, tip).unwrap().w_axis.truncate().to_array(),
        &[0.0, 5.0, 0.0],
        1e-6
    ));
}

#[test]
fn without_a_rig_the_animator_samples_only() {
    let Some(h) = common::gpu("without_a_rig_the_animator_samples_only") else {
        return;
    };
    let (_, lib) = model();
    let mut animator = Animator::sampler_only(&h.device, &h.queue, &lib, 4).unwrap();
    assert!(animator.rig().is_none() && animator.bound().is_none());
    assert!(animator.chunks()[0].joint_matrix_buffer().is_none());
    assert!(animator.chunks()[0].output_bind_group().is_none());
    animator
        .set_instances(&h.queue, &[Instance::new(1, 1.0)])
        .unwrap();
    let mut encoder = h.device.create_command_encoder(&Default::default());
    animator.record(&mut encoder);
    h.queue.submit([encoder.finish()]);
    let poses = animator.read_back(&h.device, &h.queue).unwrap();
    // lift at 1 s: j0's translation halfway to (0, 3, 0).
    assert_eq!(&poses.samples(0).unwrap()[..3], &[0.0, 1.5, 0.0]);
    assert!(poses.world(0, 0).is_none());
    assert!(poses.joints(0, 0).is_none());
}
