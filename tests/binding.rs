//! Binding clips to rigs by name: a character and an animation pack built
//! in code (`common/pack.rs`), the same skeleton names in other orders.
//! Each rule of the contract (`docs/ARCHITECTURE.md`, "Binding") with the
//! report it gives, every refusal, the bound pose against the animation
//! file sampled on its own node by node, the rig's rest pose where the
//! clip is silent, the GPU against the CPU twin, and one upload for two
//! rigs.
#![cfg(feature = "gltf")]

mod common;
#[path = "common/gltf_builder.rs"]
mod gltf_builder;
#[path = "common/pack.rs"]
mod pack;

use std::sync::Arc;

use glam::{Quat, Vec3};
use keyframe_gpu::gltf::{self, Document};
use keyframe_gpu::Unbound;
use keyframe_gpu::{
    cpu, AnimationLibrary, Animator, BindError, BindOptions, Clip, Crowd, CrowdInstance, Error,
    Instance, Interpolation, Mask, MixError, MixerDesc, NodeName, NodeTransform, Poses, Property,
    Rig, Track,
};

struct Pack {
    character: Rig,
    run: gltf::Imported,
    idle: gltf::Imported,
}

fn pack() -> Pack {
    let dir = gltf_builder::temp_dir("binding");
    let (character, run, idle) = pack::write(&dir);
    let character = Rig::from_document(&Document::load(&character).unwrap()).unwrap();
    Pack {
        character,
        run: gltf::load(&run).unwrap(),
        idle: gltf::load(&idle).unwrap(),
    }
}

/// The character's node of name path `path` (`a/b/c`).
fn node_at(rig: &Rig, path: &str) -> u32 {
    (0..rig.nodes().len() as u32)
        .find(|&n| rig.node_name(n).is_some_and(|p| p.to_string() == path))
        .unwrap_or_else(|| panic!("no node {path}"))
}

const LEFT_HAND: &str = "Armature/Hips/Spine/LeftArm/Hand";
const RIGHT_HAND: &str = "Armature/Hips/Spine/RightArm/Hand";

/// Options that refuse any track the rig cannot take.
fn strict() -> BindOptions {
    let mut options = BindOptions::default();
    options.strict = true;
    options
}

/// A track built in code naming its target node.
trait Targeted {
    fn with_target(self, target: impl Into<Arc<NodeName>>) -> Self;
}

impl Targeted for Track {
    fn with_target(self, target: impl Into<Arc<NodeName>>) -> Self {
        Track {
            target: Some(target.into()),
            ..self
        }
    }
}

#[test]
fn an_animation_file_binds_by_name_and_path_and_reports_what_it_skipped() {
    let p = pack();
    let bound = p.run.library.bind(&p.character).unwrap();
    let report = &bound.report().clips()[0];
    assert_eq!(report.name, "Run");
    // Hips and Spine by their unique names, the two Hands by their paths.
    assert_eq!((report.by_index, report.by_name, report.by_path), (0, 2, 2));
    // Tail is not in the character; the unnamed node means nothing there.
    let unbound: Vec<(u32, &str, &Unbound)> = report
        .unbound
        .iter()
        .map(|u| (u.track, u.target.as_str(), &u.why))
        .collect();
    assert_eq!(
        unbound,
        [
            (4, "Armature/Hips/Tail", &Unbound::MissingName),
            (5, "node 9", &Unbound::Unnamed),
        ]
    );
    let c = &p.character;
    assert_eq!(bound.node(0, 0), Some(node_at(c, "Armature/Hips")));
    assert_eq!(bound.node(0, 1), Some(node_at(c, "Armature/Hips/Spine")));
    assert_eq!(bound.node(0, 2), Some(node_at(c, LEFT_HAND)));
    assert_eq!(bound.node(0, 3), Some(node_at(c, RIGHT_HAND)));
    assert_eq!(bound.node(0, 4), None);
    assert_eq!(bound.node(0, 5), None);
    // The report prints a line per clip.
    let text = bound.report().to_string();
    assert!(text.contains("2 by name, 2 by path, 2 unbound"), "{text}");
    assert!(text.contains("Armature/Hips/Tail"), "{text}");
    // Strict binding refuses the first unbound track.
    match p.run.library.bind_with(&p.character, &strict()) {
        Err(Error::Bind(BindError::Unbound {
            clip: 0,
            track: 4,
            why: Unbound::MissingName,
            ..
        })) => {}
        other => panic!("expected Unbound, got {other:?}"),
    }
}

/// Every node's local transform of the character at `times`, by the CPU
/// twin.
fn poses(bound: &keyframe_gpu::BoundLibrary, clip: u32, times: &[f64]) -> Poses {
    let instances: Vec<Instance> = times.iter().map(|&t| Instance::new(clip, t)).collect();
    cpu::poses(bound, &instances).unwrap()
}

#[test]
fn the_bound_pose_is_the_animation_file_sampled_node_by_name() {
    let p = pack();
    let bound = p.run.library.bind(&p.character).unwrap();
    // The animation file on its own rig: every track by index.
    let run_rig = Rig::from_document(&p.run.document).unwrap();
    let own = p.run.library.bind(&run_rig).unwrap();
    assert_eq!(own.report().clips()[0].by_index, 6);
    let times = [0.0, 0.2, 0.5, 0.7, 1.0, 1.5];
    let on_character = poses(&bound, 0, &times);
    let on_file = poses(&own, 0, &times);
    let close = |a: Vec3, b: Vec3| (a - b).abs().max_element() <= 1e-6;
    let same_rotation = |a: Quat, b: Quat| a.dot(b).abs() >= 1.0 - 1e-6;
    for i in 0..times.len() as u32 {
        // Animated properties: the file's values, node by name.
        for (track, property) in [
            (0, Property::Translation),
            (1, Property::Rotation),
            (2, Property::Rotation),
            (3, Property::Rotation),
        ] {
            let here = on_character
                .local(i, bound.node(0, track).unwrap())
                .unwrap();
            let there = on_file.local(i, own.node(0, track).unwrap()).unwrap();
            match property {
                Property::Translation => {
                    assert!(close(here.translation, there.translation), "{i} {track}")
                }
                _ => assert!(same_rotation(here.rotation, there.rotation), "{i} {track}"),
            }
        }
        // What the clip does not animate keeps the character's rest pose,
        // not the animation file's (twice the character's translations).
        let rest = |path: &str| {
            let n = node_at(&p.character, path);
            let node = &p.character.nodes()[n as usize];
            (n, Vec3::from(node.translation))
        };
        for path in [
            "Armature/Hips/Spine",
            "Armature/Hips/Spine/Head",
            LEFT_HAND,
            "Armature/Hips/Spine/RightArm/Hand/Sword",
        ] {
            let (n, t) = rest(path);
            let got = on_character.local(i, n).unwrap();
            assert!(close(got.translation, t), "{path} at {i}: {got:?}");
        }
        let (head, _) = rest("Armature/Hips/Spine/Head");
        assert_eq!(
            on_character.local(i, head).unwrap().rotation,
            Quat::IDENTITY
        );
    }
    // By hand at 0.5 s: Hips halfway to (0, 2.4, 0.2); Spine on its 30
    // degree key exactly; the right Hand's STEP key.
    let hips = on_character
        .local(2, node_at(&p.character, "Armature/Hips"))
        .unwrap();
    assert!(close(hips.translation, Vec3::new(0.0, 2.2, 0.1)));
    let spine = on_character
        .local(2, node_at(&p.character, "Armature/Hips/Spine"))
        .unwrap();
    // (The pose stage normalizes a rotation: within rounding of the key.)
    let key = |axis, deg| Quat::from_array(pack::quat(axis, deg));
    assert!(same_rotation(spine.rotation, key([0.0, 0.0, 1.0], 30.0)));
    let right = on_character
        .local(2, node_at(&p.character, RIGHT_HAND))
        .unwrap();
    assert!(same_rotation(right.rotation, key([0.0, 1.0, 0.0], 45.0)));
    // Just before the STEP key: still the first key, the identity.
    let before = poses(&bound, 0, &[0.49]);
    let right = before.local(0, node_at(&p.character, RIGHT_HAND)).unwrap();
    assert!(same_rotation(right.rotation, Quat::IDENTITY));
}

#[test]
fn a_clip_on_its_own_files_rig_binds_by_index_even_where_names_repeat() {
    let p = pack();
    // The run file repeats "Hand" too, and has an unnamed node: by index
    // every track binds, as the file says.
    let rig = Rig::from_document(&p.run.document).unwrap();
    let bound = p.run.library.bind(&rig).unwrap();
    let r = &bound.report().clips()[0];
    assert_eq!(
        (r.by_index, r.by_name, r.by_path, r.unbound.len()),
        (6, 0, 0, 0)
    );
    for t in 0..6 {
        assert_eq!(
            bound.node(0, t),
            Some(p.run.library.clips()[0].tracks[t as usize].node)
        );
    }
    // The same file loaded again is the same source.
    let again = gltf::from_slice(&std::fs::read(pack_path("run.glb")).unwrap(), None).unwrap();
    let rig_again = Rig::from_document(&again.document).unwrap();
    assert_eq!(rig_again.source(), rig.source());
    assert_eq!(
        p.run.library.bind(&rig_again).unwrap().report().clips()[0].by_index,
        6
    );
}

fn pack_path(name: &str) -> std::path::PathBuf {
    let dir = gltf_builder::temp_dir("binding-path");
    pack::write(&dir);
    dir.join(name)
}

#[test]
fn a_repeated_name_without_a_matching_path_is_refused_with_its_candidates() {
    let p = pack();
    // A clip made in code naming "Hand" under a path the character lacks.
    let hand = NodeName::from_path(vec![Some("Armature".into()), Some("Hand".into())]).unwrap();
    let track = Track::new(
        0,
        Property::Rotation,
        Interpolation::Step,
        vec![0.0],
        vec![0.0, 0.0, 0.0, 1.0],
    )
    .with_target(hand);
    let library = AnimationLibrary::new(vec![Clip::new("wave", vec![track])]).unwrap();
    match library.bind(&p.character) {
        Err(Error::Bind(BindError::Ambiguous {
            name, candidates, ..
        })) => {
            assert_eq!(name, "Hand");
            assert_eq!(candidates, [LEFT_HAND, RIGHT_HAND]);
        }
        other => panic!("expected Ambiguous, got {other:?}"),
    }
    // With the path it binds; a unique name binds whatever its path.
    let left = p
        .character
        .node_name(node_at(&p.character, LEFT_HAND))
        .unwrap();
    let sword = NodeName::new("Sword");
    let tracks = vec![
        Track::new(
            0,
            Property::Rotation,
            Interpolation::Step,
            vec![0.0],
            vec![0.0, 0.0, 0.0, 1.0],
        )
        .with_target(left),
        Track::new(
            0,
            Property::Translation,
            Interpolation::Step,
            vec![0.0],
            vec![0.0; 3],
        )
        .with_target(sword),
    ];
    let library = AnimationLibrary::new(vec![Clip::new("grip", tracks)]).unwrap();
    let bound = library.bind(&p.character).unwrap();
    let r = &bound.report().clips()[0];
    assert_eq!((r.by_name, r.by_path), (1, 1));
    assert_eq!(bound.node(0, 0), Some(node_at(&p.character, LEFT_HAND)));
    let sword = node_at(&p.character, "Armature/Hips/Spine/RightArm/Hand/Sword");
    assert_eq!(bound.node(0, 1), Some(sword));
}

#[test]
fn every_refusal_names_what_is_wrong() {
    let p = pack();
    let rot = |node| {
        Track::new(
            node,
            Property::Rotation,
            Interpolation::Step,
            vec![0.0],
            vec![0.0, 0.0, 0.0, 1.0],
        )
    };
    // By index (a clip built in code): a node out of range, two tracks on
    // one property.
    let lib = |tracks| AnimationLibrary::new(vec![Clip::new("c", tracks)]).unwrap();
    assert!(matches!(
        lib(vec![rot(99)]).bind(&p.character),
        Err(Error::Bind(BindError::NodeOutOfRange { node: 99, .. }))
    ));
    assert!(matches!(
        lib(vec![rot(2), rot(2)]).bind(&p.character),
        Err(Error::Bind(BindError::DuplicateChannel {
            track: 1,
            first: 0,
            node: 2,
            ..
        }))
    ));
    // By name: two tracks on the same node of the rig.
    let named = |name: &str| rot(0).with_target(NodeName::new(name));
    assert!(matches!(
        lib(vec![named("Spine"), named("Spine")]).bind(&p.character),
        Err(Error::Bind(BindError::DuplicateChannel { track: 1, .. }))
    ));
    // By name: a weights track on a node without a matching mesh is
    // unbound, not an error; by index it is refused.
    let weights = |node| Track::weights(node, 2, Interpolation::Step, vec![0.0], vec![0.0; 2]);
    let body = || lib(vec![weights(0).with_target(NodeName::new("Body"))]);
    // A clip of which nothing binds is refused by default, naming the
    // clip, the rig and what did not bind...
    match body().bind(&p.character) {
        Err(Error::Bind(BindError::TooFewBound {
            clip: 0,
            bound: 0,
            node_tracks: 1,
            rig,
            unbound,
            ..
        })) => {
            assert!(rig.contains("10 nodes"), "{rig}");
            assert_eq!(unbound, ["Body"]);
        }
        other => panic!("a clip that binds nothing: {other:?}"),
    }
    // ...and taken when asked.
    let bound = body()
        .bind_with(
            &p.character,
            &BindOptions::default().with_min_bound_share(0.0),
        )
        .unwrap();
    assert_eq!(
        bound.report().clips()[0].unbound[0].why,
        Unbound::MorphTargets {
            rig: Some(0),
            track: 2
        }
    );
    assert!(matches!(
        lib(vec![weights(0)]).bind(&p.character),
        Err(Error::Bind(BindError::WeightsWidthMismatch {
            expected: 0,
            found: 2,
            ..
        }))
    ));
    assert!(matches!(
        lib(vec![weights(2)]).bind(&p.character),
        Err(Error::Bind(BindError::WeightsWithoutMesh { node: 2, .. }))
    ));
    // A mask made for one rig is refused by a mixer of another, even one
    // with as many nodes.
    let run_rig = Rig::from_document(&p.run.document).unwrap();
    assert_eq!(run_rig.nodes().len(), p.character.nodes().len());
    let mut desc = MixerDesc::new(1, 2);
    desc.add_mask(Mask::subtree(&run_rig, 3).unwrap());
    let bound = p.run.library.bind(&p.character).unwrap();
    assert!(matches!(
        cpu::mixed_poses(&bound, &desc.masks, &[], &[0]),
        Err(Error::Mix(MixError::MaskOfOtherRig { mask: 0 }))
    ));
}

#[test]
fn a_mask_and_its_complement_add_up_to_one() {
    let p = pack();
    let c = &p.character;
    let arm = Mask::subtree(c, node_at(c, "Armature/Hips/Spine/RightArm")).unwrap();
    let rest = arm.inverted();
    assert_eq!(arm.factors().len(), c.nodes().len());
    for (a, r) in arm.factors().iter().zip(rest.factors()) {
        assert_eq!(a + r, 1.0);
    }
    assert_eq!(rest.factors()[node_at(c, RIGHT_HAND) as usize], 0.0);
    assert_eq!(rest.factors()[node_at(c, LEFT_HAND) as usize], 1.0);
    // The run over the whole body, the idle's Spine scale only on the arm's
    // complement: with the arm's mask the Spine is not in it, so the base
    // takes it whole.
    let library = AnimationLibrary::new(
        p.run
            .library
            .clips()
            .iter()
            .chain(p.idle.library.clips())
            .cloned()
            .collect(),
    )
    .unwrap();
    let bound = library.bind(c).unwrap();
    let mut desc = MixerDesc::new(1, 2);
    let arm_id = desc.add_mask(arm);
    let rest_id = desc.add_mask(rest);
    let actions = [
        keyframe_gpu::Action::new(0, 0.5).with_mask(arm_id),
        keyframe_gpu::Action::new(1, 1.0).with_mask(rest_id),
    ];
    let mixed = cpu::mixed_poses(&bound, &desc.masks, &actions, &[2]).unwrap();
    let spine = node_at(c, "Armature/Hips/Spine");
    let idle_alone = poses(&bound, 1, &[1.0]);
    assert_eq!(
        mixed.local(0, spine).unwrap().scale,
        idle_alone.local(0, spine).unwrap().scale
    );
    let right = node_at(c, RIGHT_HAND);
    let run_alone = poses(&bound, 0, &[0.5]);
    assert_eq!(
        mixed.local(0, right).unwrap().rotation,
        run_alone.local(0, right).unwrap().rotation
    );
}

#[test]
fn gpu_poses_a_foreign_clip_as_the_twin_does() {
    let Some(h) = common::gpu("gpu_poses_a_foreign_clip_as_the_twin_does") else {
        return;
    };
    let p = pack();
    let library = AnimationLibrary::new(
        p.run
            .library
            .clips()
            .iter()
            .chain(p.idle.library.clips())
            .cloned()
            .collect(),
    )
    .unwrap();
    let bound = library.bind(&p.character).unwrap();
    let mut animator = Animator::new(&h.device, &h.queue, &bound, 16).unwrap();
    let instances: Vec<Instance> = (0..16)
        .map(|i| Instance::new(i % 2, f64::from(i) * 0.13))
        .collect();
    animator.set_instances(&h.queue, &instances).unwrap();
    let mut encoder = h.device.create_command_encoder(&Default::default());
    animator.record(&mut encoder);
    h.queue.submit([encoder.finish()]);
    let gpu = animator.read_back(&h.device, &h.queue).unwrap();
    let twin = cpu::poses(&bound, &instances).unwrap();
    let nodes = p.character.nodes().len() as u32;
    for i in 0..16 {
        for n in 0..nodes {
            let (g, t) = (gpu.local(i, n).unwrap(), twin.local(i, n).unwrap());
            assert!(g.translation.abs_diff_eq(t.translation, 1e-6), "{i} {n}");
            assert!(g.rotation.dot(t.rotation).abs() >= 1.0 - 2e-6, "{i} {n}");
            let (gw, tw) = (gpu.world(i, n).unwrap(), twin.world(i, n).unwrap());
            assert!(gw.abs_diff_eq(tw, 1e-5), "{i} {n}");
        }
        let (gj, tj) = (gpu.joints(i, 0).unwrap(), twin.joints(i, 0).unwrap());
        assert_eq!(gj.len(), pack::CHARACTER_JOINTS.len());
        for (a, b) in gj.iter().zip(tj) {
            assert!(a.abs_diff_eq(*b, 1e-4), "{i}");
        }
    }
    // The part list names the one skinned mesh node and its joints.
    let parts = animator.rig().map(Rig::parts).unwrap_or_default();
    assert_eq!(parts.len(), 1);
    assert_eq!((parts[0].node, parts[0].skin), (0, Some(0)));
    assert_eq!(parts[0].joints, Some(0..7));
    assert_eq!(
        parts[0].skin_node,
        Some(0),
        "the skin's mesh node places it"
    );
}

#[test]
fn one_upload_serves_two_rigs_of_the_same_names() {
    let Some(h) = common::gpu("one_upload_serves_two_rigs_of_the_same_names") else {
        return;
    };
    let p = pack();
    // A second character from another "file": the same names, its nodes
    // in reverse order, a longer spine.
    let mut b = Rig::builder();
    let order = [9usize, 8, 7, 6, 5, 4, 3, 2, 1, 0];
    let mut index = [0u32; 10];
    // Parents before children: build from the root down, then name.
    let nodes = pack::character_nodes();
    let mut parent = [None; 10];
    for (i, n) in nodes.iter().enumerate() {
        for &c in &n.children {
            parent[c] = Some(i);
        }
    }
    for &i in order.iter().rev() {
        let mut t = nodes[i].translation;
        t[1] *= 1.5;
        index[i] = b.node(parent[i].map(|p| index[p]), NodeTransform::translation(t));
    }
    for (i, n) in nodes.iter().enumerate() {
        b.name(index[i], n.name.unwrap());
    }
    let other = b.build().unwrap();
    let library = p.run.library.clone();
    let first = library.bind(&p.character).unwrap();
    let second = library.bind(&other).unwrap();
    assert_eq!(second.report().clips()[0].bound(), 4);
    let mut crowd = Crowd::new();
    let a = crowd
        .add_model(&h.device, &h.queue, "a", &first, 4)
        .unwrap();
    let b = crowd
        .add_model(&h.device, &h.queue, "b", &second, 4)
        .unwrap();
    assert_eq!(crowd.uploads(), 1, "one library, one upload");
    // A third model with a library of its own makes a second upload.
    let idle = p.idle.library.bind(&p.character).unwrap();
    crowd.add_model(&h.device, &h.queue, "c", &idle, 1).unwrap();
    assert_eq!(crowd.uploads(), 2);
    let run_a = crowd.models().clip(a, "Run").unwrap();
    let run_b = crowd.models().clip(b, "Run").unwrap();
    crowd
        .set_instances(
            &h.queue,
            &[
                CrowdInstance::new(a, run_a, 0.3),
                CrowdInstance::new(b, run_b, 0.3),
            ],
        )
        .unwrap();
    let mut encoder = h.device.create_command_encoder(&Default::default());
    crowd.record(&mut encoder);
    h.queue.submit([encoder.finish()]);
    let got = crowd.read_back(&h.device, &h.queue).unwrap();
    for (i, bound) in [(0usize, &first), (1, &second)] {
        let twin = poses(bound, 0, &[0.3]);
        for n in 0..10 {
            let (model, slot) = got.instance(i).unwrap();
            let (g, t) = (model.world(slot, n).unwrap(), twin.world(0, n).unwrap());
            assert!(g.abs_diff_eq(t, 1e-5), "model {i} node {n}");
        }
    }
}

#[test]
fn a_minimum_bound_share_refuses_clips_made_for_another_skeleton() {
    let p = pack();
    let rot = |name: &str| {
        Track::new(
            0,
            Property::Rotation,
            Interpolation::Step,
            vec![0.0],
            vec![0.0, 0.0, 0.0, 1.0],
        )
        .with_target(NodeName::new(name))
    };
    // One of three node tracks names a node of the rig.
    let clip = || {
        AnimationLibrary::new(vec![Clip::new(
            "mostly foreign",
            vec![rot("Spine"), rot("Tail"), rot("Wing")],
        )])
        .unwrap()
    };
    // By default one bound track is enough: the rest are reported.
    let bound = clip().bind(&p.character).unwrap();
    assert_eq!(bound.report().clips()[0].bound(), 1);
    assert_eq!(bound.report().clips()[0].unbound.len(), 2);
    // A share of a half refuses it, naming what did not bind.
    let half = BindOptions::default().with_min_bound_share(0.5);
    match clip().bind_with(&p.character, &half) {
        Err(Error::Bind(e @ BindError::TooFewBound { .. })) => {
            let text = e.to_string();
            assert!(text.contains("\"mostly foreign\""), "{text}");
            assert!(text.contains("1 of 3"), "{text}");
            assert!(text.contains("Tail, Wing"), "{text}");
        }
        other => panic!("1 of 3 bound at a share of 0.5: {other:?}"),
    }
    // A third is enough for a share of a third.
    let third = BindOptions::default().with_min_bound_share(1.0 / 3.0);
    assert!(clip().bind_with(&p.character, &third).is_ok());
    // Strict still refuses the first unbound track.
    assert!(matches!(
        clip().bind_with(&p.character, &strict()),
        Err(Error::Bind(BindError::Unbound { track: 1, .. }))
    ));
}

#[test]
fn a_share_of_k_in_n_takes_k_bound_tracks_of_n() {
    // Thirteen named nodes; a clip of `n` rotation tracks of which the
    // first `k` name nodes of the rig. A share of k/n (the nearest f32, as
    // a decimal literal gives it) takes k bound tracks of n and refuses
    // k - 1.
    let mut b = Rig::builder();
    for n in 0..13 {
        let node = b.node(None, NodeTransform::IDENTITY);
        b.name(node, format!("n{n}"));
    }
    let rig = b.build().unwrap();
    let clip = |k: usize, n: usize| {
        let tracks = (0..n)
            .map(|t| {
                let name = if t < k {
                    format!("n{t}")
                } else {
                    format!("x{t}")
                };
                Track::new(
                    0,
                    Property::Rotation,
                    Interpolation::Step,
                    vec![0.0],
                    vec![0.0, 0.0, 0.0, 1.0],
                )
                .with_target(NodeName::new(&name))
            })
            .collect();
        AnimationLibrary::new(vec![Clip::new("part", tracks)]).unwrap()
    };
    let tenths = [0.1f32, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0];
    let cases = tenths
        .iter()
        .enumerate()
        .map(|(i, &s)| (i + 1, 10, s))
        // 7 of 13: a share whose product with 13 rounds above 7 in f32.
        .chain([(7, 13, 7.0f32 / 13.0), (1, 3, 1.0 / 3.0), (2, 3, 2.0 / 3.0)]);
    for (k, n, share) in cases {
        let options = BindOptions::default().with_min_bound_share(share);
        let bound = clip(k, n).bind_with(&rig, &options);
        assert!(bound.is_ok(), "{k} of {n} at a share of {share}: {bound:?}");
        match clip(k - 1, n).bind_with(&rig, &options) {
            Err(Error::Bind(BindError::TooFewBound {
                bound,
                node_tracks,
                rig,
                ..
            })) => {
                assert_eq!((bound, node_tracks), (k as u32 - 1, n as u32));
                // Thirteen roots: the first named, and twelve more.
                assert_eq!(rig, "the rig of roots \"n0\" and 12 more (13 nodes)");
            }
            other => panic!("{} of {n} at a share of {share}: {other:?}", k - 1),
        }
    }
}
