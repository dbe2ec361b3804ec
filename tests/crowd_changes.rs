//! A `Crowd` that changes in place: a model grows (chunks appended, the
//! other models' buffers and uploads the same objects, nothing uploaded
//! again), models come and go, characters added with `add_character`
//! keep their slots while others come and go, a character over its
//! mixer's action limit drops its lightest base action (the others'
//! frame goes on), `CrowdPoses::compare` names the crowd's entry, and the
//! crowd's messages name characters as characters, agreeing in number.
//! Every frame is checked against the CPU twin, and where the pose is
//! simple, against values computed by hand.

mod common;

#[path = "common/crowd_models.rs"]
mod crowd_models;

use common::headless::Headless;
use crowd_models::{model_a, model_b};
use keyframe_gpu::{
    cpu, Action, CharacterId, Crowd, CrowdCharacter, CrowdInstance, CrowdPoses, Error, Mask,
    MixError, MixerDesc, ModelId, WrapMode,
};

fn run(h: &Headless, crowd: &Crowd) -> CrowdPoses {
    let mut encoder = h.device.create_command_encoder(&Default::default());
    crowd.record(&mut encoder);
    h.queue.submit([encoder.finish()]);
    crowd.read_back(&h.device, &h.queue).unwrap()
}

/// The GPU frame within every tolerance of the twin's.
#[track_caller]
fn assert_twin(label: &str, gpu: &CrowdPoses, cpu: &CrowdPoses) {
    let c = gpu.compare(cpu).unwrap();
    assert!(c.within(), "{label}: {:?}, worst {:?}", c.max_abs, c.worst);
}

/// The translation of crowd entry `i`'s world matrix of `node`.
fn at(poses: &CrowdPoses, i: usize, node: u32) -> [f32; 3] {
    let (p, slot) = poses.instance(i).unwrap();
    let m = p.world(slot, node).unwrap().to_cols_array();
    [m[12], m[13], m[14]]
}

#[track_caller]
fn assert_near(got: [f32; 3], want: [f32; 3]) {
    let d = got.iter().zip(want).map(|(a, b)| (a - b).abs());
    assert!(d.fold(0.0, f32::max) <= 1e-4, "{got:?}, by hand {want:?}");
}

/// Every buffer of every chunk of `id`: world matrices, joint matrices,
/// sampled values (a clone of each handle: wgpu compares them by
/// identity).
fn buffers(crowd: &Crowd, id: ModelId) -> Vec<wgpu::Buffer> {
    let mut out = Vec::new();
    for k in 0..crowd.model(id).map(|m| m.chunks().len()).unwrap() {
        let c = crowd.model(id).and_then(|m| m.chunks().get(k)).unwrap();
        out.push(c.sample_buffer().clone());
        out.extend(c.world_matrix_buffer().cloned());
        out.extend(c.joint_matrix_buffer().cloned());
    }
    out
}

/// `n` instances of `id` playing its clips in turn, at times spread over
/// and past them.
fn instances(crowd: &Crowd, id: ModelId, n: usize) -> Vec<CrowdInstance> {
    (0..n)
        .map(|k| {
            let clip = crowd.models().clip_at(id, (k % 3) as u32).unwrap();
            CrowdInstance::new(id, clip, 0.29 * k as f64).with_wrap(WrapMode::Repeat)
        })
        .collect()
}

/// Model A in chunks of two grows from 3 to 7 instances, then its mixed
/// twin from 2 to 5 characters: chunks are appended, the chunks that were
/// there and every other model keep their buffers (the same objects), no
/// library is uploaded again, and every frame equals the twin.
#[test]
fn a_model_grows_in_place_and_the_others_keep_their_buffers_and_uploads() {
    let name = "a_model_grows_in_place_and_the_others_keep_their_buffers_and_uploads";
    let Some(h) = common::gpu(name) else {
        return;
    };
    let (rig_a, lib_a) = model_a();
    let (rig_b, lib_b) = model_b();
    let (bound_a, bound_b) = (lib_a.bind(&rig_a).unwrap(), lib_b.bind(&rig_b).unwrap());
    let (d, q) = (&h.device, &h.queue);
    let mut crowd = Crowd::new().with_chunk_limit(2);
    let a = crowd.add_model(d, q, "a", &bound_a, 3).unwrap();
    let b = crowd.add_model(d, q, "b", &bound_b, 2).unwrap();
    let m = crowd
        .add_mixed_model(d, q, "m", &bound_a, &MixerDesc::new(2, 2))
        .unwrap();
    let s = crowd.add_sampled_model(d, q, "s", &lib_b, 2).unwrap();
    assert_eq!(crowd.model(a).map(|m| m.chunks().len()), Some(2));
    let uploads = crowd.uploads();
    assert_eq!(uploads, 4, "a, b, the mixer's own and the sampled model's");
    let before: Vec<Vec<wgpu::Buffer>> = [a, b, m, s].map(|id| buffers(&crowd, id)).into();
    let frame = |crowd: &Crowd, n: usize| {
        let mut f = instances(crowd, a, n);
        f.extend(instances(crowd, b, 2));
        f.extend(instances(crowd, s, 2));
        f
    };
    let f = frame(&crowd, 3);
    crowd.set_instances(q, &f).unwrap();
    assert_twin(
        "before",
        &run(&h, &crowd),
        &cpu::crowd_poses(crowd.models(), &f).unwrap(),
    );

    crowd.grow_model(d, a, 7).unwrap();
    assert_eq!(crowd.model(a).map(|m| m.chunks().len()), Some(4));
    assert_eq!(crowd.model(a).map(|m| m.chunk_capacity()), Some(2));
    assert_eq!(crowd.uploads(), uploads, "the new chunks share a's upload");
    let grown = buffers(&crowd, a);
    assert_eq!(
        grown[..before[0].len()],
        before[0][..],
        "a's first chunks stay"
    );
    assert!(grown[before[0].len()..]
        .iter()
        .all(|g| !before[0].contains(g)));
    for (k, id) in [b, m, s].into_iter().enumerate() {
        assert_eq!(buffers(&crowd, id), before[k + 1], "{k}");
    }
    // A capacity not above the model's changes nothing.
    crowd.grow_model(d, a, 5).unwrap();
    assert_eq!(crowd.model(a).map(|m| m.chunks().len()), Some(4));
    let f = frame(&crowd, 7);
    crowd.set_instances(q, &f).unwrap();
    // Slot 6 of chunks of 2: the first of the fourth chunk.
    assert_eq!(crowd.slot(6), Some((a, 6)));
    assert_twin(
        "grown",
        &run(&h, &crowd),
        &cpu::crowd_poses(crowd.models(), &f).unwrap(),
    );

    crowd.grow_model(d, m, 5).unwrap();
    assert_eq!(crowd.model(m).map(|m| m.chunks().len()), Some(3));
    assert_eq!(
        crowd.uploads(),
        uploads,
        "the mixer's chunks share its upload"
    );
    assert_eq!(buffers(&crowd, b), before[1]);
    let (lift, bend) = (
        crowd.models().clip(m, "lift").unwrap(),
        crowd.models().clip(m, "bend").unwrap(),
    );
    let mut actions = Vec::new();
    let mut characters = Vec::new();
    for k in 0..5 {
        let t = 0.4 * f64::from(k);
        actions.push(Action::new(lift.clip(), t).with_weight(0.6));
        actions.push(Action::new(bend.clip(), t).with_weight(0.4));
        characters.push(CrowdCharacter::new(m, 2));
    }
    crowd.set_actions(q, &characters, &actions).unwrap();
    let cpu = cpu::crowd_mixed_poses(crowd.models(), &characters, &actions).unwrap();
    assert_twin("the mixer grown", &run(&h, &crowd), &cpu);
    let other = Crowd::new().add_model(d, q, "x", &bound_a, 1);
    let x = other.unwrap();
    assert!(matches!(
        crowd.grow_model(d, x, 9),
        Err(Error::UnknownModel { .. })
    ));
}

/// Model A goes: its id, clips and characters are refused, model B keeps
/// its buffers and upload; a model of A's name comes back with a new id
/// and index, and the frame equals the twin.
#[test]
fn models_come_and_go_in_place() {
    let Some(h) = common::gpu("models_come_and_go_in_place") else {
        return;
    };
    let (rig_a, lib_a) = model_a();
    let (rig_b, lib_b) = model_b();
    let (bound_a, bound_b) = (lib_a.bind(&rig_a).unwrap(), lib_b.bind(&rig_b).unwrap());
    let (d, q) = (&h.device, &h.queue);
    let mut crowd = Crowd::new();
    let a = crowd.add_model(d, q, "a", &bound_a, 2).unwrap();
    let b = crowd.add_model(d, q, "b", &bound_b, 2).unwrap();
    let hero = crowd.add_character(a).unwrap();
    let kept = buffers(&crowd, b);
    let bend = crowd.models().clip(a, "bend").unwrap();
    let f = [
        CrowdInstance::of(hero, bend, 1.0),
        CrowdInstance::new(b, crowd.models().clip(b, "slide").unwrap(), 0.5),
    ];
    crowd.set_instances(q, &f).unwrap();
    let first = run(&h, &crowd);
    assert!(crowd.remove_model(a));
    assert!(!crowd.remove_model(a));
    assert_eq!(crowd.models().model_ids().collect::<Vec<_>>(), [b]);
    assert!(crowd.model(a).is_none() && crowd.models().clip(a, "bend").is_none());
    assert_eq!(buffers(&crowd, b), kept);
    assert_eq!(crowd.uploads(), 1);
    // The frame in effect keeps B's entry where it was; A's reads nothing.
    assert_eq!(crowd.slot(1), Some((b, 0)));
    let (removed, _) = crowd.slot(0).unwrap();
    assert!(removed == a && crowd.model(removed).is_none());
    let after = run(&h, &crowd);
    assert!(after.instance(0).is_none() && after.model(a).is_none());
    assert_eq!(at(&after, 1, 1), at(&first, 1, 1));
    match crowd.set_instances(q, &f) {
        Err(Error::UnknownModel {
            what: "instance",
            entry: Some(0),
            model: 0,
        }) => {}
        other => panic!("an instance of a removed model: {other:?}"),
    }
    assert!(matches!(
        crowd.remove_character(hero),
        Err(Error::UnknownCharacter { slot: 0, .. })
    ));
    let a2 = crowd.add_model(d, q, "a", &bound_a, 2).unwrap();
    // The removed model's id is never given again.
    assert_ne!(a2, a);
    assert_eq!(buffers(&crowd, b), kept);
    assert_eq!(crowd.uploads(), 2);
    let f = [
        CrowdInstance::new(b, crowd.models().clip(b, "turn").unwrap(), 2.0),
        CrowdInstance::new(a2, crowd.models().clip(a2, "lift").unwrap(), 1.0),
    ];
    crowd.set_instances(q, &f).unwrap();
    let gpu = run(&h, &crowd);
    assert_twin(
        "after",
        &gpu,
        &cpu::crowd_poses(crowd.models(), &f).unwrap(),
    );
    // By hand: B's r0 turned 180 degrees puts the hand at x = 4; A's j0
    // lifted by 1.5 puts the tip at y = 3.5.
    assert_near(at(&gpu, 0, 1), [4.0, 0.0, 0.0]);
    assert_near(at(&gpu, 1, 2), [0.0, 3.5, 0.0]);
}

/// Three characters of A hold slots 0, 1, 2; entries without a
/// character fill the slots no character holds; removing character 1
/// moves nobody, its slot goes to the next entry without a character and
/// then to the next character added; a removed character's handle stays
/// refused.
#[test]
fn characters_keep_their_slots_while_others_come_and_go() {
    let name = "characters_keep_their_slots_while_others_come_and_go";
    let Some(h) = common::gpu(name) else {
        return;
    };
    let (rig_a, lib_a) = model_a();
    let (rig_b, lib_b) = model_b();
    let (bound_a, bound_b) = (lib_a.bind(&rig_a).unwrap(), lib_b.bind(&rig_b).unwrap());
    let (d, q) = (&h.device, &h.queue);
    let mut crowd = Crowd::new().with_chunk_limit(2);
    let a = crowd.add_model(d, q, "a", &bound_a, 5).unwrap();
    let b = crowd.add_model(d, q, "b", &bound_b, 3).unwrap();
    let c: Vec<_> = (0..3).map(|_| crowd.add_character(a).unwrap()).collect();
    assert_eq!(c.iter().map(|c| c.slot()).collect::<Vec<_>>(), [0, 1, 2]);
    let clip = |n: &str| crowd.models().clip(a, n).unwrap();
    let (idle, bend, lift) = (clip("idle"), clip("bend"), clip("lift"));
    let slide = crowd.models().clip(b, "slide").unwrap();
    let f = [
        CrowdInstance::of(c[2], bend, 1.0),
        CrowdInstance::new(a, lift, 1.0),
        CrowdInstance::of(c[0], idle, 0.0),
        CrowdInstance::new(b, slide, 0.5),
        CrowdInstance::of(c[1], lift, 2.0),
    ];
    crowd.set_instances(q, &f).unwrap();
    let slots: Vec<_> = (0..5).map(|i| crowd.slot(i).unwrap()).collect();
    assert_eq!(slots, [(a, 2), (a, 3), (a, 0), (b, 0), (a, 1)]);
    let gpu = run(&h, &crowd);
    assert_twin(
        "three characters",
        &gpu,
        &cpu::crowd_poses(crowd.models(), &f).unwrap(),
    );
    // By hand (A's tip): bent 90 degrees at j1: (-1, 1, 0); lifted 1.5:
    // (0, 3.5, 0); at rest (0, 2, 0); lifted 3: (0, 5, 0).
    let tip = rig_a.node_by_name("tip").unwrap();
    assert_near(at(&gpu, 0, tip), [-1.0, 1.0, 0.0]);
    assert_near(at(&gpu, 1, tip), [0.0, 3.5, 0.0]);
    assert_near(at(&gpu, 4, tip), [0.0, 5.0, 0.0]);
    let (p, slot) = gpu.character(c[2]).unwrap();
    assert_eq!(slot, 2);
    let g = p.world(slot, tip).unwrap().to_cols_array();
    assert_near([g[12], g[13], g[14]], [-1.0, 1.0, 0.0]);

    crowd.remove_character(c[1]).unwrap();
    assert_eq!((c[0].slot(), c[2].slot()), (0, 2));
    let f = [
        CrowdInstance::new(a, bend, 1.0),
        CrowdInstance::of(c[2], lift, 2.0),
        CrowdInstance::of(c[0], bend, 1.0),
    ];
    crowd.set_instances(q, &f).unwrap();
    assert_eq!(crowd.slot(0), Some((a, 1)), "the freed slot");
    assert_eq!(crowd.slot(1), Some((a, 2)));
    let gpu = run(&h, &crowd);
    assert_twin(
        "one removed",
        &gpu,
        &cpu::crowd_poses(crowd.models(), &f).unwrap(),
    );
    assert_near(at(&gpu, 1, tip), [0.0, 5.0, 0.0]);
    assert_near(at(&gpu, 2, tip), [-1.0, 1.0, 0.0]);

    refusals_and_new_characters(&h, &mut crowd, a, &c, &gpu);
}

/// A mixer of two actions per character: a character given three drops
/// its lightest base action (the frame's other characters go on), as the
/// twin does and as the same character given the two kept actions; a
/// dropped action is still checked, and an error after a drop names the
/// action by its index in the character's own list.
#[test]
fn a_character_over_its_mixers_limit_drops_its_lightest_base_action() {
    let name = "a_character_over_its_mixers_limit_drops_its_lightest_base_action";
    let Some(h) = common::gpu(name) else {
        return;
    };
    let (rig_a, lib_a) = model_a();
    let bound = lib_a.bind(&rig_a).unwrap();
    let (d, q) = (&h.device, &h.queue);
    let mut desc = MixerDesc::new(4, 2);
    let upper = desc.add_mask(Mask::subtree(&rig_a, 1).unwrap());
    let mut crowd = Crowd::new().with_chunk_limit(2);
    let a = crowd.add_mixed_model(d, q, "a", &bound, &desc).unwrap();
    let hero = crowd.add_character(a).unwrap();
    let clip = |n: &str| crowd.models().clip(a, n).unwrap().clip();
    let (idle, bend, lift) = (clip("idle"), clip("bend"), clip("lift"));
    let actions = [
        // Character 0 (the hero): idle 0.5, lift 0.75, bend 0.25 (dropped).
        Action::new(idle, 1.0).with_weight(0.5),
        Action::new(lift, 1.0).with_weight(0.75),
        Action::new(bend, 1.0).with_weight(0.25),
        // Character 1: lift alone.
        Action::new(lift, 2.0),
        // Character 2: bend masked to j1 (kept), lift 0.2 (dropped: the
        // lightest base action), idle 0.6.
        Action::new(bend, 1.0).with_mask(upper),
        Action::new(lift, 1.0).with_weight(0.2),
        Action::new(idle, 0.0).with_weight(0.6),
    ];
    let characters = [
        CrowdCharacter::of(hero, 3),
        CrowdCharacter::new(a, 1),
        CrowdCharacter::new(a, 3),
    ];
    crowd.set_actions(q, &characters, &actions).unwrap();
    let gpu = run(&h, &crowd);
    let twin = cpu::crowd_mixed_poses(crowd.models(), &characters, &actions).unwrap();
    assert_twin("drops", &gpu, &twin);
    // The same characters given only the actions they keep.
    let kept = [0, 1, 3, 4, 6].map(|k| actions[k]);
    let by_hand = cpu::mixed_poses(&bound, &desc.masks, &kept, &[2, 1, 2]).unwrap();
    let c = gpu.model(a).unwrap().compare(&by_hand).unwrap();
    assert!(c.within(), "{:?}", c.worst);
    // By hand: the hero's j0 = lift at 1 s (0, 1.5, 0) weighted 0.75 of
    // 1.25 = (0, 0.9, 0), the tip two above; character 1 lifted 3.
    let tip = rig_a.node_by_name("tip").unwrap();
    assert_near(at(&gpu, 0, tip), [0.0, 2.9, 0.0]);
    assert_near(at(&gpu, 1, tip), [0.0, 5.0, 0.0]);

    // A dropped action with a clip the model lacks is refused, naming it.
    let mut bad = actions;
    bad[2] = Action::new(99, 0.0).with_weight(0.1);
    match crowd.set_actions(q, &characters, &bad) {
        Err(Error::Mix(MixError::UnknownClip {
            character: 0,
            action: 2,
            clip: 99,
            ..
        })) => {}
        other => panic!("a dropped unknown clip: {other:?}"),
    }
    // After character 2's drop, its third action is its second kept one:
    // named by its own index, 2.
    let mut bad = actions;
    bad[6].time = f64::NAN;
    match crowd.set_actions(q, &characters, &bad) {
        Err(Error::Mix(MixError::TimeNotFinite {
            character: 2,
            action: 2,
            ..
        })) => {}
        other => panic!("a NaN time after a drop: {other:?}"),
    }
    assert_twin("the frame in effect", &run(&h, &crowd), &twin);
}

/// `CrowdPoses::compare`: two frames of the same entries differ only in
/// entry 3's time: the worst difference names entry 3, not its slot;
/// frames of other entries are refused.
#[test]
fn crowd_poses_compare_names_the_crowd_entry() {
    let Some(h) = common::gpu("crowd_poses_compare_names_the_crowd_entry") else {
        return;
    };
    let (rig_a, lib_a) = model_a();
    let (rig_b, lib_b) = model_b();
    let (d, q) = (&h.device, &h.queue);
    let mut crowd = Crowd::new();
    let a = crowd
        .add_model(d, q, "a", &lib_a.bind(&rig_a).unwrap(), 3)
        .unwrap();
    let b = crowd
        .add_model(d, q, "b", &lib_b.bind(&rig_b).unwrap(), 3)
        .unwrap();
    let mut f = instances(&crowd, a, 2);
    f.extend(instances(&crowd, b, 2));
    crowd.set_instances(q, &f).unwrap();
    let gpu = run(&h, &crowd);
    let twin = cpu::crowd_poses(crowd.models(), &f).unwrap();
    assert!(gpu.compare(&twin).unwrap().within());
    let mut moved = f.clone();
    moved[3].time += 0.25;
    let other = cpu::crowd_poses(crowd.models(), &moved).unwrap();
    let c = twin.compare(&other).unwrap();
    assert!(!c.within());
    assert_eq!(c.worst.unwrap().instance, 3, "entry 3 is B's slot 1");
    let fewer = cpu::crowd_poses(crowd.models(), &f[..3]).unwrap();
    assert!(matches!(
        twin.compare(&fewer),
        Err(Error::PosesDiffer { .. })
    ));
}

/// Messages name what the call takes (characters in a characters call),
/// and counts agree in number.
#[test]
fn crowd_messages_name_characters_and_agree_in_number() {
    let Some(h) = common::gpu("crowd_messages_name_characters_and_agree_in_number") else {
        return;
    };
    let (rig_a, lib_a) = model_a();
    let bound = lib_a.bind(&rig_a).unwrap();
    let (d, q) = (&h.device, &h.queue);
    let mut crowd = Crowd::new();
    let a = crowd
        .add_mixed_model(d, q, "a", &bound, &MixerDesc::new(1, 1))
        .unwrap();
    let none = crowd.add_model(d, q, "none", &bound, 0).unwrap();
    let foreign = Crowd::new()
        .add_mixed_model(d, q, "x", &bound, &MixerDesc::new(1, 1))
        .unwrap();
    let act = [Action::new(0, 0.0), Action::new(0, 0.0)];
    let message = |r: keyframe_gpu::Result<()>| r.unwrap_err().to_string();
    let two = [CrowdCharacter::new(a, 1), CrowdCharacter::new(a, 1)];
    assert_eq!(
        message(crowd.set_actions(q, &two, &act)),
        "2 characters of model 0 (\"a\") requested, but it was added for at most 1"
    );
    let idle = crowd.models().clip(none, "idle").unwrap();
    assert_eq!(
        message(crowd.set_instances(q, &[CrowdInstance::new(none, idle, 0.0)])),
        "1 instance of model 1 (\"none\") requested, but it was added for at most 0"
    );
    let unknown = [CrowdCharacter::new(a, 1), CrowdCharacter::new(foreign, 1)];
    let text = message(crowd.set_actions(q, &unknown, &act));
    assert!(
        text.starts_with("crowd character 1: model 0 is not"),
        "{text}"
    );
}

/// Continues `characters_keep_their_slots_while_others_come_and_go`
/// (characters `c[0]` and `c[2]` of A held, `c[1]` removed, `gpu` the
/// frame in effect): refusals name the entry and write nothing; the freed
/// slot goes to the next character, and the old handle stays refused; a
/// character not named in a frame is at rest.
fn refusals_and_new_characters(
    h: &Headless,
    crowd: &mut Crowd,
    a: ModelId,
    c: &[CharacterId],
    gpu: &CrowdPoses,
) {
    let q = &h.queue;
    let (idle, lift) = (
        crowd.models().clip(a, "idle").unwrap(),
        crowd.models().clip(a, "lift").unwrap(),
    );
    let tip = 2;
    // Refusals name the entry; nothing is written.
    let stale = [
        CrowdInstance::new(a, idle, 0.0),
        CrowdInstance::of(c[1], idle, 0.0),
    ];
    match crowd.set_instances(q, &stale) {
        Err(Error::UnknownCharacter {
            what: "instance",
            entry: Some(1),
            model: 0,
            slot: 1,
        }) => {}
        other => panic!("a removed character: {other:?}"),
    }
    let twice = [
        CrowdInstance::of(c[0], idle, 0.0),
        CrowdInstance::of(c[0], lift, 0.0),
    ];
    match crowd.set_instances(q, &twice) {
        Err(Error::CharacterTwice {
            entry: 1, first: 0, ..
        }) => {}
        other => panic!("a character twice: {other:?}"),
    }
    let full = [CrowdInstance::new(a, idle, 0.0); 4];
    match crowd.set_instances(q, &full) {
        Err(Error::ModelFull {
            requested: 6,
            capacity: 5,
            ..
        }) => {}
        other => panic!("two characters and four entries in five slots: {other:?}"),
    }
    assert_eq!(crowd.slot(0), Some((a, 1)));
    let again = run(h, crowd);
    assert_eq!(at(&again, 2, tip), at(gpu, 2, tip));

    // The freed slot goes to the next character; the old handle stays
    // refused.
    let c3 = crowd.add_character(a).unwrap();
    assert_eq!(c3.slot(), 1);
    assert_ne!(c3, c[1]);
    assert!(crowd.remove_character(c[1]).is_err());
    let c4 = crowd.add_character(a).unwrap();
    let c5 = crowd.add_character(a).unwrap();
    assert_eq!((c4.slot(), c5.slot()), (3, 4));
    match crowd.add_character(a) {
        Err(Error::ModelFull {
            what: "character",
            requested: 6,
            capacity: 5,
            ..
        }) => {}
        other => panic!("a sixth character of five slots: {other:?}"),
    }
    // A character not named this frame is at rest (clip 0 at time 0).
    let f = [CrowdInstance::of(c5, lift, 1.0)];
    crowd.set_instances(q, &f).unwrap();
    let gpu = run(h, crowd);
    assert_twin(
        "unnamed at rest",
        &gpu,
        &cpu::crowd_poses(crowd.models(), &f).unwrap(),
    );
    let (p, slot) = gpu.character(c3).unwrap();
    let g = p.world(slot, tip).unwrap().to_cols_array();
    assert_near([g[12], g[13], g[14]], [0.0, 2.0, 0.0]);
    assert_eq!(gpu.model(a).unwrap().instance_count(), 5);
}
