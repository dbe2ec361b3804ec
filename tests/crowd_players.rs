//! A crowd of players in one call: `Crowd::player` makes a `Player` for a
//! crowd model (the mixer's limit its own, its clips checked against the
//! model's), and `Crowd::set_players` sets the crowd's frame from its
//! characters' players. A held-out program of two models (crossfades, a
//! masked layer, an override layer, an additive layer, a character
//! removed and one added mid-run) is checked frame by frame: the table
//! the call built against one gathered by hand from the same players, the
//! GPU frame against the CPU twin, and one pose against values worked out
//! by hand. Refusals (a player of the other model, of another crowd, of
//! `Player::new`, a removed character) leave the frame in effect as it was.

mod common;

#[path = "common/crowd_models.rs"]
mod crowd_models;

use std::sync::Arc;

use common::headless::Headless;
use crowd_models::{model_a, model_b};
use keyframe_gpu::playback::{ClipHandle, Clips, Command, Layer, PlaybackError, Player};
use keyframe_gpu::{
    cpu, Action, CharacterId, Crowd, CrowdCharacter, CrowdPoses, Error, Mask, MixerDesc, ModelId,
};

fn run(h: &Headless, crowd: &Crowd) -> CrowdPoses {
    let mut encoder = h.device.create_command_encoder(&Default::default());
    crowd.record(&mut encoder);
    h.queue.submit([encoder.finish()]);
    crowd.read_back(&h.device, &h.queue).unwrap()
}

/// The table gathered by hand: per pair `CrowdCharacter::of(character,
/// n)` and the player's `n` actions, one player after another.
fn by_hand(cast: &[(CharacterId, Player)]) -> (Vec<CrowdCharacter>, Vec<Action>) {
    let mut characters = Vec::new();
    let mut actions = Vec::new();
    for (c, p) in cast {
        characters.push(CrowdCharacter::of(*c, p.frame().actions.len() as u32));
        actions.extend_from_slice(&p.frame().actions);
    }
    (characters, actions)
}

/// Sets the frame from `cast`, checks the table it built against the one
/// gathered by hand, and returns the twin's poses of it.
#[track_caller]
fn set(h: &Headless, crowd: &mut Crowd, cast: &[(CharacterId, Player)]) -> CrowdPoses {
    let (models, characters, actions) = crowd
        .set_players(&h.queue, cast.iter().map(|(c, p)| (*c, p)))
        .unwrap();
    let (want_characters, want_actions) = by_hand(cast);
    assert_eq!(characters, want_characters.as_slice());
    assert_eq!(actions, want_actions.as_slice());
    cpu::crowd_mixed_poses(models, characters, actions).unwrap()
}

#[track_caller]
fn assert_twin(label: &str, gpu: &CrowdPoses, cpu: &CrowdPoses) {
    let c = gpu.compare(cpu).unwrap();
    assert!(c.within(), "{label}: {:?}, worst {:?}", c.max_abs, c.worst);
}

/// Two frames read back from the same table: every value the same.
#[track_caller]
fn assert_same(label: &str, now: &CrowdPoses, before: &CrowdPoses) {
    let c = now.compare(before).unwrap();
    assert_eq!(c.max_abs, [0.0; 4], "{label}: the frame in effect changed");
}

/// The two mixed models: A (chain j0 -> j1 -> j2, clips idle, bend,
/// lift; up to 3 actions per character, a mask on j1's subtree) and B
/// (r0 -> r1, clips slide, turn, idle; up to 2, a mask on r1).
struct Scene {
    crowd: Crowd,
    a: ModelId,
    b: ModelId,
    clips_a: Arc<Clips>,
    clips_b: Arc<Clips>,
    upper: keyframe_gpu::MaskId,
    hand: keyframe_gpu::MaskId,
    tip: u32,
}

fn scene(h: &Headless) -> Scene {
    let (rig_a, lib_a) = model_a();
    let (rig_b, lib_b) = model_b();
    let (bound_a, bound_b) = (lib_a.bind(&rig_a).unwrap(), lib_b.bind(&rig_b).unwrap());
    let (d, q) = (&h.device, &h.queue);
    let mut desc_a = MixerDesc::new(4, 3);
    let upper = desc_a.add_mask(Mask::subtree(&rig_a, 1).unwrap());
    let mut desc_b = MixerDesc::new(3, 2);
    let hand = desc_b.add_mask(Mask::subtree(&rig_b, 1).unwrap());
    // Chunks of two: the characters of A span two chunks.
    let mut crowd = Crowd::new().with_chunk_limit(2);
    let a = crowd.add_mixed_model(d, q, "a", &bound_a, &desc_a).unwrap();
    let b = crowd.add_mixed_model(d, q, "b", &bound_b, &desc_b).unwrap();
    Scene {
        crowd,
        a,
        b,
        clips_a: Arc::new(Clips::new(&lib_a)),
        clips_b: Arc::new(Clips::new(&lib_b)),
        upper,
        hand,
        tip: rig_a.node_by_name("tip").unwrap(),
    }
}

fn clip(clips: &Clips, name: &str) -> ClipHandle {
    clips.clip(name).unwrap()
}

/// The held-out program: 30 frames of 0.1 s of five characters (A0, B0,
/// A1, B1, A2 in that order), A2 removed at frame 12 and A3 added at
/// frame 15; every frame's table against the hand-gathered one and the
/// GPU against the twin; A0's j0 and tip at frame 10 against the clip by
/// hand.
#[test]
fn a_crowd_program_of_players_equals_the_twin_frame_by_frame() {
    let name = "a_crowd_program_of_players_equals_the_twin_frame_by_frame";
    let Some(h) = common::gpu(name) else {
        return;
    };
    let mut s = scene(&h);
    let (ca, cb) = (Arc::clone(&s.clips_a), Arc::clone(&s.clips_b));
    let (a, b) = (s.a, s.b);
    let mut make = |model: ModelId, clips: &Arc<Clips>| {
        let id = s.crowd.add_character(model).unwrap();
        (id, s.crowd.player(model, clips).unwrap())
    };
    let mut cast = vec![make(a, &ca), make(b, &cb), make(a, &ca), make(b, &cb)];
    cast.push(make(a, &ca));
    let removed = cast[4].0;
    // A0: idle with bend masked to j1's subtree (mixed in, weight 1).
    cast[0].1.command(Command::Play(clip(&ca, "idle"))).unwrap();
    let masked = Layer {
        mask: Some(s.upper),
        ..Layer::default()
    };
    cast[0].1.add_layer(clip(&ca, "bend"), masked).unwrap();
    // B0: slide, with idle overriding r1's subtree.
    cast[1]
        .1
        .command(Command::Play(clip(&cb, "slide")))
        .unwrap();
    let over_hand = Layer {
        mask: Some(s.hand),
        overrides: true,
        ..Layer::default()
    };
    cast[1].1.add_layer(clip(&cb, "idle"), over_hand).unwrap();
    // A1: bend; B1: turn; A2: lift fading in under an additive bend.
    cast[2].1.command(Command::Play(clip(&ca, "bend"))).unwrap();
    cast[3].1.command(Command::Play(clip(&cb, "turn"))).unwrap();
    cast[4]
        .1
        .command(Command::FadeIn(clip(&ca, "lift"), 0.3))
        .unwrap();
    let additive = Layer {
        weight: 0.5,
        additive: Some(0.0),
        ..Layer::default()
    };
    cast[4].1.add_layer(clip(&ca, "bend"), additive).unwrap();
    let mut checked_by_hand = false;
    for f in 0..30 {
        match f {
            2 => cast[0]
                .1
                .command(Command::Crossfade(clip(&ca, "lift"), 0.5))
                .unwrap(),
            3 => {
                // An override layer of A over every node, at 0.6.
                let over = Layer {
                    weight: 0.6,
                    overrides: true,
                    ..Layer::default()
                };
                cast[2].1.add_layer(clip(&ca, "lift"), over).unwrap();
            }
            4 => cast[1]
                .1
                .command(Command::Crossfade(clip(&cb, "turn"), 0.6))
                .unwrap(),
            5 => cast[2]
                .1
                .command(Command::Crossfade(clip(&ca, "idle"), 0.4))
                .unwrap(),
            8 => cast[3]
                .1
                .command(Command::Crossfade(clip(&cb, "slide"), 0.3))
                .unwrap(),
            12 => {
                s.crowd.remove_character(removed).unwrap();
                cast.remove(4);
            }
            14 => cast[3]
                .1
                .command(Command::CrossfadeAt(clip(&cb, "turn"), 0.2, 1.5))
                .unwrap(),
            15 => {
                let id = s.crowd.add_character(a).unwrap();
                let mut p = s.crowd.player(a, &ca).unwrap();
                p.command(Command::Play(clip(&ca, "lift"))).unwrap();
                cast.push((id, p));
            }
            20 => cast[4]
                .1
                .command(Command::Crossfade(clip(&ca, "bend"), 0.3))
                .unwrap(),
            _ => {}
        }
        for (_, p) in &mut cast {
            p.advance(0.1).unwrap();
        }
        let twin = set(&h, &mut s.crowd, &cast);
        let gpu = run(&h, &s.crowd);
        assert_twin(&format!("frame {f}"), &gpu, &twin);
        assert_eq!(gpu.instance_count(), cast.len(), "frame {f}");
        for (k, (id, _)) in cast.iter().enumerate() {
            assert_eq!(s.crowd.slot(k), Some((id.model(), id.slot())), "frame {f}");
        }
        if f == 8 {
            // By hand: A0's crossfade into lift (0 -> 3 up y over 2 s)
            // started at frame 2 and ended at frame 6: lift alone, at
            // clip time 0.1 * 7 = 0.7 s: j0 at (0, 1.05, 0). Its bend
            // layer, masked to j1's subtree, leaves j0 alone and turns j1
            // about z (bend at 0.9 s: 81 degrees, whatever share of it
            // the mix keeps past half), so the tip leans towards -x.
            let (poses, slot) = gpu.character(cast[0].0).unwrap();
            let j0 = poses.world(slot, 0).unwrap().w_axis;
            assert!(
                (j0.x.abs() + (j0.y - 1.05).abs() + j0.z.abs()) < 1e-4,
                "{j0:?}"
            );
            let tip = poses.world(slot, s.tip).unwrap().w_axis;
            assert!(tip.x < -0.3 && (tip - j0).length() <= 2.0 + 1e-4, "{tip:?}");
            checked_by_hand = true;
        }
    }
    assert!(checked_by_hand);
    // The new character took the removed one's slot; the others kept
    // theirs.
    assert_eq!(cast[4].0.slot(), removed.slot());
}

/// `Crowd::player` takes the model's mixer limit: A's players hold at most
/// 3 actions, a crossfade into a full table drops the lightest base
/// action; a `Player::new` of the same clips holds 4 after the same
/// commands.
#[test]
fn a_crowd_models_player_takes_its_mixers_limit() {
    let name = "a_crowd_models_player_takes_its_mixers_limit";
    let Some(h) = common::gpu(name) else {
        return;
    };
    let s = scene(&h);
    let crowd_player = s.crowd.player(s.a, &s.clips_a).unwrap();
    let plain = Player::new(&s.clips_a);
    let mut counts = Vec::new();
    for mut p in [crowd_player, plain] {
        p.command(Command::Play(clip(&s.clips_a, "idle"))).unwrap();
        p.advance(0.1).unwrap();
        p.command(Command::Crossfade(clip(&s.clips_a, "bend"), 1.0))
            .unwrap();
        p.advance(0.1).unwrap();
        p.command(Command::Crossfade(clip(&s.clips_a, "lift"), 1.0))
            .unwrap();
        p.advance(0.1).unwrap();
        p.command(Command::FadeIn(clip(&s.clips_a, "idle"), 1.0))
            .unwrap();
        p.advance(0.1).unwrap();
        counts.push(p.frame().actions.len());
    }
    assert_eq!(counts, [3, 4]);
}

/// Every refusal names what is wrong and leaves the frame in effect: a
/// player of the other model, of another crowd and of `Player::new`, and
/// a removed character; `Crowd::player` refuses the other model's clips,
/// a model without a mixer and a removed model.
#[test]
fn refused_players_leave_the_frame_in_effect() {
    let name = "refused_players_leave_the_frame_in_effect";
    let Some(h) = common::gpu(name) else {
        return;
    };
    let mut s = scene(&h);
    let (ca, cb) = (Arc::clone(&s.clips_a), Arc::clone(&s.clips_b));
    let (a, b) = (s.a, s.b);
    let mut cast = Vec::new();
    for (model, clips, first) in [(a, &ca, "lift"), (b, &cb, "slide"), (a, &ca, "bend")] {
        let id = s.crowd.add_character(model).unwrap();
        let mut p = s.crowd.player(model, clips).unwrap();
        p.command(Command::Play(clip(clips, first))).unwrap();
        p.advance(0.4).unwrap();
        cast.push((id, p));
    }
    let twin = set(&h, &mut s.crowd, &cast);
    let before = run(&h, &s.crowd);
    assert_twin("before", &before, &twin);

    // A character of A given B's player (entry 2).
    let mut wrong = cast.clone();
    wrong[2].1 = cast[1].1.clone();
    match s
        .crowd
        .set_players(&h.queue, wrong.iter().map(|(c, p)| (*c, p)))
    {
        Err(Error::Playback(PlaybackError::PlayerOfOtherModel {
            entry: 2,
            ref name,
            slot,
            ref player,
            ..
        })) => {
            assert_eq!(name, "a");
            assert_eq!(slot, cast[2].0.slot());
            assert!(player.contains("\"b\""), "{player}");
        }
        other => panic!("a player of the other model: {other:?}"),
    }
    // A player of Player::new (entry 0), and one of another crowd's model
    // of the same clips (entry 1).
    let mut wrong = cast.clone();
    wrong[0].1 = Player::new(&ca);
    match s
        .crowd
        .set_players(&h.queue, wrong.iter().map(|(c, p)| (*c, p)))
    {
        Err(Error::Playback(PlaybackError::PlayerOfOtherModel {
            entry: 0,
            ref player,
            ..
        })) => assert!(player.contains("Player::new"), "{player}"),
        other => panic!("a player of Player::new: {other:?}"),
    }
    let other = scene(&h);
    let mut wrong = cast.clone();
    wrong[1].1 = other.crowd.player(other.b, &cb).unwrap();
    let refused = s
        .crowd
        .set_players(&h.queue, wrong.iter().map(|(c, p)| (*c, p)));
    assert!(
        matches!(
            refused,
            Err(Error::Playback(PlaybackError::PlayerOfOtherModel {
                entry: 1,
                ..
            }))
        ),
        "a player of another crowd: {refused:?}"
    );
    assert_same("after the wrong players", &run(&h, &s.crowd), &before);

    // A removed character (entry 1): its slot no longer its own.
    s.crowd.remove_character(cast[1].0).unwrap();
    match s
        .crowd
        .set_players(&h.queue, cast.iter().map(|(c, p)| (*c, p)))
    {
        Err(Error::UnknownCharacter {
            entry: Some(1),
            slot,
            ..
        }) => assert_eq!(slot, cast[1].0.slot()),
        other => panic!("a removed character: {other:?}"),
    }
    assert_same("after the removed character", &run(&h, &s.crowd), &before);

    // Crowd::player: B's clips for A, a model without a mixer, a removed
    // model.
    match s.crowd.player(a, &cb) {
        Err(Error::Playback(PlaybackError::NoPlayerForModel { ref name, .. })) => {
            assert_eq!(name, "a");
        }
        other => panic!("B's clips for A: {other:?}"),
    }
    let (rig_b, lib_b) = model_b();
    let plain = s
        .crowd
        .add_model(
            &h.device,
            &h.queue,
            "plain",
            &lib_b.bind(&rig_b).unwrap(),
            2,
        )
        .unwrap();
    assert!(matches!(
        s.crowd.player(plain, &cb),
        Err(Error::Playback(PlaybackError::NoPlayerForModel { .. }))
    ));
    assert!(s.crowd.player(b, &cb).is_ok());
    assert!(s.crowd.remove_model(b));
    assert!(matches!(
        s.crowd.player(b, &cb),
        Err(Error::UnknownModel { .. })
    ));

    // The characters left set their frame again: the table is the hand
    // gathered one without entry 1, and the frame is the twin's.
    cast.remove(1);
    let twin = set(&h, &mut s.crowd, &cast);
    assert_twin("after", &run(&h, &s.crowd), &twin);
}
