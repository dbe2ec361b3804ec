//! The playback layer (`keyframe_gpu::playback`), device-free: weights of
//! crossfades and fades against the linear ramps of the contract, frame
//! by frame; speed, pause, seek, backwards play, wraps, loop counts and
//! the finished flag; root motion summed over loops against the clip's
//! displacement, forwards and backwards, and against the CPU twin's pose;
//! markers crossed at varied steps; bad input refused with nothing
//! advanced. Every expected value is worked out by hand from the clips
//! built here.

use std::sync::Arc;

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use glam::{Quat, Vec3};
use keyframe_gpu::playback::{ClipHandle, Clips, Command, Layer, PlaybackError, Player};
use keyframe_gpu::{
    AnimationLibrary, Clip, Error, Interpolation, Marker, NodeTransform, Property, Rig, Track,
    WrapMode,
};

/// Every player's last frame in one table, `counts[c]` actions player
/// `c`'s (what `Animator::set_actions` takes), into vectors cleared first.
fn gather<'a>(
    players: impl IntoIterator<Item = &'a Player>,
    actions: &mut Vec<keyframe_gpu::Action>,
    counts: &mut Vec<u32>,
) {
    actions.clear();
    counts.clear();
    for p in players {
        actions.extend_from_slice(&p.frame().actions);
        counts.push(p.frame().actions.len() as u32);
    }
}

const EPS: f64 = 1e-6;

/// Clips on node 0 of a one-node rig, each over `[0, 1]` s unless said:
/// 0 "walk": translation (0,0,0) -> (2,0,0); 1 "run": (0,0,0) ->
/// (0,0,6); 2 "turn": rotation 0 -> 90 degrees about y; 3 "long":
/// translation (0,0,0) -> (4,0,0) over 2 s.
fn library() -> AnimationLibrary {
    let tr = |to: [f32; 3], end: f32| {
        Track::new(
            0,
            Property::Translation,
            Interpolation::Linear,
            vec![0.0, end],
            vec![0.0, 0.0, 0.0, to[0], to[1], to[2]],
        )
    };
    let q = Quat::from_rotation_y(std::f32::consts::FRAC_PI_2);
    let turn = Track::new(
        0,
        Property::Rotation,
        Interpolation::Linear,
        vec![0.0, 1.0],
        [Quat::IDENTITY.to_array(), q.to_array()].concat(),
    );
    AnimationLibrary::new(vec![
        Clip::new("walk", vec![tr([2.0, 0.0, 0.0], 1.0)]),
        Clip::new("run", vec![tr([0.0, 0.0, 6.0], 1.0)]),
        Clip::new("turn", vec![turn]),
        Clip::new("long", vec![tr([4.0, 0.0, 0.0], 2.0)]),
    ])
    .unwrap()
}

fn rig() -> Rig {
    let mut b = Rig::builder();
    b.node(None, NodeTransform::IDENTITY);
    b.build().unwrap()
}

fn player() -> Player {
    Player::new(&Arc::new(Clips::new(&library())))
}

/// Clip `index` of `p`'s clips.
fn c(p: &Player, index: u32) -> ClipHandle {
    p.clips().clip_at(index).unwrap()
}

fn weights(p: &Player) -> Vec<(u32, f32)> {
    p.frame()
        .actions
        .iter()
        .map(|a| (a.clip, a.weight))
        .collect()
}

#[test]
fn crossfade_weights_ramp_linearly_and_sum_to_one() {
    let mut p = player();
    p.command(Command::Play(c(&p, 0))).unwrap();
    p.advance(0.1).unwrap();
    p.command(Command::Crossfade(c(&p, 1), 0.3)).unwrap();
    // Frame k after the crossfade, dt = 0.05: the fade is k * 0.05 / 0.3
    // of the way, walk at 1 - that, run at that, until the end, where
    // walk is gone.
    for k in 1..=8u32 {
        p.advance(0.05).unwrap();
        let f = (f64::from(k) * 0.05 / 0.3).min(1.0);
        let w = weights(&p);
        if f < 1.0 {
            assert_eq!(w.len(), 2, "frame {k}: {w:?}");
            assert_eq!((w[0].0, w[1].0), (0, 1));
            assert!(
                (f64::from(w[0].1) - (1.0 - f)).abs() < EPS,
                "frame {k}: {w:?}"
            );
            assert!((f64::from(w[1].1) - f).abs() < EPS, "frame {k}: {w:?}");
            assert!((w[0].1 + w[1].1 - 1.0).abs() < 1e-6);
        } else {
            assert_eq!(w, [(1, 1.0)], "frame {k}");
        }
    }
    // The incoming clip started at 0 and has played 8 * 0.05 s.
    let a = &p.frame().actions[0];
    assert!((a.time - 0.4).abs() < EPS, "{}", a.time);
}

#[test]
fn a_crossfade_during_a_fade_starts_from_the_current_weights() {
    let mut p = player();
    p.command(Command::Play(c(&p, 0))).unwrap();
    p.command(Command::Crossfade(c(&p, 1), 0.4)).unwrap();
    p.advance(0.1).unwrap(); // walk 0.75, run 0.25
    p.command(Command::Crossfade(c(&p, 2), 0.2)).unwrap();
    p.advance(0.05).unwrap();
    // Each ramps from where it was to 0, turn from 0 to 0.75 + 0.25.
    let w = weights(&p);
    assert_eq!(w.len(), 3, "{w:?}");
    let expect = [(0, 0.75 * 0.75), (1, 0.25 * 0.75), (2, 0.25)];
    for ((c, got), (ec, want)) in w.iter().zip(expect) {
        assert_eq!(*c, ec);
        assert!((got - want).abs() < 1e-6, "{w:?}");
    }
    p.advance(0.15).unwrap();
    assert_eq!(weights(&p), [(2, 1.0)]);
}

#[test]
fn fades_layers_and_gather() {
    let mut p = player();
    p.command(Command::FadeIn(c(&p, 0), 0.5)).unwrap();
    p.advance(0.25).unwrap();
    assert_eq!(weights(&p), [(0, 0.5)]);
    let layer = p
        .add_layer(
            c(&p, 2),
            Layer {
                weight: 0.5,
                additive: Some(0.0),
                ..Layer::default()
            },
        )
        .unwrap();
    p.advance(0.25).unwrap();
    assert_eq!(weights(&p), [(0, 1.0), (2, 0.5)]);
    assert_eq!(p.frame().actions[1].reference_time, Some(0.0));
    p.command(Command::FadeLayer(layer, 0.0, 0.1)).unwrap();
    p.command(Command::FadeOut(c(&p, 0), 0.2)).unwrap();
    p.advance(0.1).unwrap();
    // The layer reached 0 and is gone; the base is halfway out.
    assert_eq!(weights(&p), [(0, 0.5)]);
    let mut q = player();
    q.command(Command::Play(c(&q, 3))).unwrap();
    q.advance(0.0).unwrap();
    let (mut actions, mut counts) = (Vec::new(), Vec::new());
    gather([&p, &q], &mut actions, &mut counts);
    assert_eq!(counts, [1, 1]);
    assert_eq!(actions.iter().map(|a| a.clip).collect::<Vec<_>>(), [0, 3]);
    assert!(matches!(
        p.command(Command::FadeLayer(layer, 1.0, 0.1)),
        Err(Error::Playback(PlaybackError::UnknownLayer {
            layer: 0,
            ..
        }))
    ));
}

#[test]
fn speed_pause_seek_backwards_and_wraps() {
    let mut p = player();
    p.command(Command::Play(c(&p, 3))).unwrap(); // 2 s, repeat
    p.command(Command::SetSpeed(2.0)).unwrap();
    p.advance(0.25).unwrap();
    assert!((p.current().unwrap().time - 0.5).abs() < EPS);
    p.command(Command::SetPaused(true)).unwrap();
    p.advance(1.0).unwrap();
    assert!((p.current().unwrap().time - 0.5).abs() < EPS);
    assert_eq!(p.frame().root_motion, Default::default());
    p.command(Command::SetPaused(false)).unwrap();
    p.command(Command::SetSpeed(-1.0)).unwrap();
    p.advance(1.0).unwrap();
    // 0.5 - 1.0 = -0.5: 1.5 after folding, one loop end crossed.
    assert!((p.current().unwrap().time - 1.5).abs() < EPS);
    assert_eq!(p.current().unwrap().loops, 1);
    p.command(Command::Seek(0.25)).unwrap();
    assert!((p.current().unwrap().time - 0.25).abs() < EPS);
    // Once: clamped at the end, finished.
    p.command(Command::SetSpeed(1.0)).unwrap();
    p.command(Command::SetWrap(WrapMode::Clamp)).unwrap();
    p.advance(5.0).unwrap();
    assert_eq!(p.current().unwrap().time, 2.0);
    assert!(p.current().unwrap().finished);
    // Ping-pong: out to 2, back to 1.5.
    let mut p = player();
    p.command(Command::Play(c(&p, 3))).unwrap();
    p.command(Command::SetWrap(WrapMode::PingPong)).unwrap();
    p.advance(2.5).unwrap();
    assert!((p.current().unwrap().time - 1.5).abs() < EPS);
    assert_eq!(p.current().unwrap().loops, 1);
    // The action the animator takes holds that clip time.
    let a = p.frame().actions[0];
    assert_eq!(
        (a.wrap, a.time),
        (WrapMode::Clamp, p.current().unwrap().time)
    );
}

fn rooted() -> Player {
    let lib = library();
    let bound = lib.bind(&rig()).unwrap();
    Player::new(&Arc::new(Clips::with_root(&bound, 0).unwrap()))
}

#[test]
fn root_motion_adds_the_whole_loop_at_each_loop_end() {
    // walk moves 2 per second: 2.5 s in steps of 0.25 is 5 along x, over
    // two loop ends; backwards 1 s is -2.
    let mut p = rooted();
    p.command(Command::Play(c(&p, 0))).unwrap();
    let mut sum = Vec3::ZERO;
    for _ in 0..10 {
        let f = p.advance(0.25).unwrap();
        assert!((f.root_motion.translation - Vec3::new(0.5, 0.0, 0.0)).length() < 1e-5);
        sum += f.root_motion.translation;
    }
    assert!((sum - Vec3::new(5.0, 0.0, 0.0)).length() < 1e-4, "{sum}");
    assert_eq!(p.current().unwrap().loops, 2);
    // One step over several loops at once.
    let f = p.advance(3.5).unwrap();
    assert!((f.root_motion.translation.x - 7.0).abs() < 1e-4);
    p.command(Command::SetSpeed(-1.0)).unwrap();
    let f = p.advance(1.0).unwrap();
    assert!((f.root_motion.translation.x + 2.0).abs() < 1e-4);
    // Turning 90 degrees a second about y: 2.5 s is 225 degrees.
    let mut p = rooted();
    p.command(Command::Play(c(&p, 2))).unwrap();
    let mut total = Quat::IDENTITY;
    for _ in 0..10 {
        total *= p.advance(0.25).unwrap().root_motion.rotation;
    }
    let want = Quat::from_rotation_y(2.5 * std::f32::consts::FRAC_PI_2);
    assert!(total.dot(want).abs() > 1.0 - 1e-5, "{total:?} vs {want:?}");
}

#[test]
fn blended_root_motion_follows_the_mixer_rules_and_the_twins_pose() {
    // walk (2 along x per second) and run (6 along z) at weight 1 each:
    // their average, per 0.1 s (0.1, 0, 0.3).
    let mut p = rooted();
    p.command(Command::Play(c(&p, 0))).unwrap();
    p.add_layer(c(&p, 1), Layer::default()).unwrap();
    let f = p.advance(0.1).unwrap();
    let want = Vec3::new(0.1, 0.0, 0.3);
    assert!(
        (f.root_motion.translation - want).length() < 1e-5,
        "{:?}",
        f.root_motion
    );
    // walk alone fading out over 0.2 s: at weight 0.5 after 0.1 s, half
    // of its 0.2 (the rest of the weight is no motion).
    let mut p = rooted();
    p.command(Command::Play(c(&p, 0))).unwrap();
    p.command(Command::FadeOut(c(&p, 0), 0.2)).unwrap();
    let f = p.advance(0.1).unwrap();
    assert!((f.root_motion.translation - Vec3::new(0.1, 0.0, 0.0)).length() < 1e-5);

    // The twin's pose of the player's actions moves by the root motion
    // between two frames (no loop end between them).
    let lib = library();
    let bound = lib.bind(&rig()).unwrap();
    let mut p = rooted();
    p.command(Command::Play(c(&p, 0))).unwrap();
    p.command(Command::SetWrap(WrapMode::Clamp)).unwrap();
    let before = p.advance(0.2).unwrap().actions.clone();
    let motion = p.advance(0.5).unwrap().root_motion;
    let after = p.frame().actions.clone();
    let pose = |acts: &[keyframe_gpu::Action]| {
        let poses =
            keyframe_gpu::cpu::mixed_poses(&bound, &[], acts, &[acts.len() as u32]).unwrap();
        poses.local(0, 0).unwrap().translation
    };
    let moved = pose(&after) - pose(&before);
    assert!(
        (moved - motion.translation).length() < 1e-5,
        "{moved} vs {motion:?}"
    );
    assert!((moved.x - 1.0).abs() < 1e-5);
}

#[test]
fn markers_are_reported_once_per_crossing_in_order() {
    let lib = library();
    let mut clips = Clips::new(&lib);
    clips.add_marker(0, 0.75, "right").unwrap();
    clips.add_marker(0, 0.25, "left").unwrap();
    let clips = Arc::new(clips);
    let names = |p: &Player| -> Vec<String> {
        p.frame()
            .events
            .iter()
            .map(|e| e.name.to_string())
            .collect()
    };
    // Steps of 0.3 from 0: 0.3 (left), 0.6, 0.9 (right), 1.2 (left at
    // 1.25? no: 1.2), 1.5 (left at 1.25).
    let mut p = Player::new(&clips);
    p.command(Command::Play(c(&p, 0))).unwrap();
    let mut seen = Vec::new();
    for _ in 0..5 {
        p.advance(0.3).unwrap();
        seen.push(names(&p));
    }
    assert_eq!(
        seen,
        [vec!["left"], vec![], vec!["right"], vec![], vec!["left"]]
    );
    // A step longer than the clip: from 0.1 by 2.6 s crosses 0.25, 0.75,
    // 1.25, 1.75 and 2.25, in that order.
    let mut p = Player::new(&clips);
    p.command(Command::Play(c(&p, 0))).unwrap();
    p.command(Command::Seek(0.1)).unwrap();
    p.advance(2.6).unwrap();
    assert_eq!(names(&p), ["left", "right", "left", "right", "left"]);
    // A marker where the step starts is not crossed again; backwards,
    // [after, before).
    let mut p = Player::new(&clips);
    p.command(Command::Play(c(&p, 0))).unwrap();
    p.command(Command::Seek(0.25)).unwrap();
    p.advance(0.1).unwrap();
    assert!(names(&p).is_empty());
    p.command(Command::SetSpeed(-1.0)).unwrap();
    p.advance(0.3).unwrap(); // 0.35 -> 0.05
    assert_eq!(names(&p), ["left"]);
    // Paused, or at speed 0: none.
    p.command(Command::SetPaused(true)).unwrap();
    p.advance(5.0).unwrap();
    assert!(names(&p).is_empty());
    p.command(Command::SetPaused(false)).unwrap();
    p.command(Command::SetSpeed(0.0)).unwrap();
    p.advance(5.0).unwrap();
    assert!(names(&p).is_empty());
}

#[test]
fn bad_input_is_refused_and_nothing_advances() {
    let mut p = player().with_character(7);
    p.command(Command::Play(c(&p, 0))).unwrap();
    p.advance(0.25).unwrap();
    for dt in [f64::NAN, -0.1, f64::INFINITY] {
        match p.advance(dt) {
            Err(Error::Playback(PlaybackError::BadNumber {
                character: 7,
                command: "advance",
                ..
            })) => {}
            other => panic!("dt {dt}: {other:?}"),
        }
        assert!((p.current().unwrap().time - 0.25).abs() < EPS);
    }
    match p.clips().clip_at(9) {
        Err(Error::Playback(PlaybackError::UnknownClip {
            clip: 9,
            clip_count: 4,
        })) => {}
        other => panic!("{other:?}"),
    }
    // A clip of another Clips (here of the same library, made again) is
    // refused, naming the clip and both.
    let other = player();
    match p.command(Command::Play(c(&other, 1))) {
        Err(Error::Playback(PlaybackError::ClipOfOtherLibrary {
            character: 7,
            command: "play",
            clip: 1,
            clips,
            own,
        })) => {
            assert_eq!(clips, other.clips().id().get());
            assert_eq!(own, p.clips().id().get());
            assert_ne!(clips, own);
        }
        other => panic!("{other:?}"),
    }
    for d in [0.0, -1.0, f64::NAN] {
        assert!(matches!(
            p.command(Command::Crossfade(c(&p, 1), d)),
            Err(Error::Playback(PlaybackError::BadDuration { .. }))
        ));
    }
    assert!(p.command(Command::SetSpeed(f64::NAN)).is_err());
    assert!(p.command(Command::Seek(f64::INFINITY)).is_err());
    // Still playing walk alone, where it was.
    p.advance(0.0).unwrap();
    assert_eq!(weights(&p), [(0, 1.0)]);
    let mut clips = Clips::new(&library());
    assert!(clips.add_marker(9, 0.0, "x").is_err());
    assert!(clips.add_marker(0, f64::NAN, "x").is_err());
    let mut nan = Clip::new("x", library().clips()[0].tracks.clone());
    nan.markers.push(Marker {
        time: f64::NAN,
        name: "m".into(),
    });
    assert!(matches!(
        AnimationLibrary::new(vec![nan]),
        Err(Error::BadMarker { clip: 0, .. })
    ));
    let bound = library().bind(&rig()).unwrap();
    assert!(matches!(
        Clips::with_root(&bound, 5),
        Err(Error::Playback(PlaybackError::UnknownRoot { node: 5, .. }))
    ));
}

#[test]
fn in_place_keeps_the_root_at_rest_on_the_ground_plane() {
    let bound = library().bind(&rig()).unwrap();
    let still = keyframe_gpu::playback::in_place(&bound, 0).unwrap();
    let at = |b: &keyframe_gpu::BoundLibrary, clip: u32, t: f64| {
        let poses = keyframe_gpu::cpu::poses(b, &[keyframe_gpu::Instance::new(clip, t)]).unwrap();
        poses.local(0, 0).unwrap().translation
    };
    // The root is a root of the rig: its space is the model's, whose
    // ground plane (square to +Y) is x and z. walk moves along x, run
    // along z: in place both stay at the rest translation (0).
    assert_eq!(at(&bound, 0, 0.5), Vec3::new(1.0, 0.0, 0.0));
    assert_eq!(at(&still, 0, 0.5), Vec3::ZERO);
    assert_eq!(at(&bound, 1, 0.5), Vec3::new(0.0, 0.0, 3.0));
    assert_eq!(at(&still, 1, 0.5), Vec3::ZERO);
    // With +Z up, the ground is x and y: run's z stays animated.
    let z_up = keyframe_gpu::playback::in_place_with_up(&bound, 0, Vec3::Z).unwrap();
    assert_eq!(at(&z_up, 1, 0.5), Vec3::new(0.0, 0.0, 3.0));
    assert_eq!(at(&z_up, 0, 0.5), Vec3::ZERO);
    // Root motion still comes from the original.
    let mut p = rooted();
    p.command(Command::Play(c(&p, 0))).unwrap();
    let m = p.advance(0.5).unwrap().root_motion;
    assert!((m.translation - Vec3::new(1.0, 0.0, 0.0)).length() < 1e-5);
    assert!(matches!(
        keyframe_gpu::playback::in_place(&bound, 3),
        Err(Error::Playback(PlaybackError::UnknownRoot { node: 3, .. }))
    ));
    for up in [Vec3::ZERO, Vec3::new(f32::NAN, 1.0, 0.0)] {
        assert!(matches!(
            keyframe_gpu::playback::in_place_with_up(&bound, 0, up),
            Err(Error::Playback(PlaybackError::BadGround { node: 0, .. }))
        ));
    }
}

#[test]
fn gathering_a_crowds_players_allocates_nothing_once_sized() {
    counting_alloc::no_lib_backtraces();
    // 100 players, each crossfading two clips; frames without root motion
    // or markers.
    let clips = Arc::new(Clips::new(&library()));
    let mut players: Vec<Player> = (0..100).map(|_| Player::new(&clips)).collect();
    for p in &mut players {
        p.command(Command::Play(c(p, 0))).unwrap();
        p.command(Command::Crossfade(c(p, 1), 10.0)).unwrap();
    }
    let (mut actions, mut counts) = (Vec::new(), Vec::new());
    for p in &mut players {
        p.advance(0.016).unwrap();
    }
    gather(&players, &mut actions, &mut counts);
    let (n, ()) = counting_alloc::count(|| {
        for _ in 0..10 {
            for p in &mut players {
                p.advance(0.016).unwrap();
            }
            gather(&players, &mut actions, &mut counts);
        }
    });
    assert_eq!(n, 0, "advancing and gathering allocated");
    assert_eq!(counts, vec![2; 100]);
    assert_eq!(actions.len(), 200);
}

/// The twin's local pose of node 0 for one character playing `actions`.
fn twin_root(bound: &keyframe_gpu::BoundLibrary, actions: &[keyframe_gpu::Action]) -> (Vec3, Quat) {
    let poses =
        keyframe_gpu::cpu::mixed_poses(bound, &[], actions, &[actions.len() as u32]).unwrap();
    let local = poses.local(0, 0).unwrap();
    (local.translation, local.rotation)
}

#[test]
fn root_motion_blends_each_property_over_the_actions_whose_clips_animate_it() {
    // walk (translation only, 2 along x per second) with an unmasked
    // layer of turn (rotation only, 90 degrees a second about y), both at
    // weight 1, played once. The mixer blends the root's translation over
    // walk alone and its rotation over turn alone, so from 0.2 s to 0.7 s
    // the root moves by (1, 0, 0) and turns 45 degrees about y.
    let bound = library().bind(&rig()).unwrap();
    let mut p = rooted();
    p.command(Command::Play(c(&p, 0))).unwrap();
    p.command(Command::SetWrap(WrapMode::Clamp)).unwrap();
    p.add_layer(
        c(&p, 2),
        Layer {
            wrap: WrapMode::Clamp,
            ..Layer::default()
        },
    )
    .unwrap();
    let before = p.advance(0.2).unwrap().actions.clone();
    let motion = p.advance(0.5).unwrap().root_motion;
    let after = p.frame().actions.clone();
    assert!(
        (motion.translation - Vec3::new(1.0, 0.0, 0.0)).length() < 1e-5,
        "{motion:?}"
    );
    let quarter_turn = Quat::from_rotation_y(std::f32::consts::FRAC_PI_4);
    assert!(
        motion.rotation.dot(quarter_turn).abs() > 1.0 - 1e-6,
        "{motion:?}"
    );
    // The twin's pose moved and turned by as much.
    let ((t0, r0), (t1, r1)) = (twin_root(&bound, &before), twin_root(&bound, &after));
    assert!((t1 - t0 - motion.translation).length() < 1e-5);
    assert!((r0.conjugate() * r1).dot(motion.rotation).abs() > 1.0 - 1e-6);
}

#[test]
fn an_action_that_stands_still_weighs_in_root_motion_with_no_motion() {
    // walk at weight 1 with a layer of run at weight 1 and speed 0 (held
    // at its start): the pose's root is the average of the two, so it
    // moves half as far as walk: from 0.2 s to 0.7 s, (0.5, 0, 0).
    let bound = library().bind(&rig()).unwrap();
    let mut p = rooted();
    p.command(Command::Play(c(&p, 0))).unwrap();
    p.command(Command::SetWrap(WrapMode::Clamp)).unwrap();
    p.add_layer(
        c(&p, 1),
        Layer {
            speed: 0.0,
            wrap: WrapMode::Clamp,
            ..Layer::default()
        },
    )
    .unwrap();
    let before = p.advance(0.2).unwrap().actions.clone();
    let motion = p.advance(0.5).unwrap().root_motion;
    let after = p.frame().actions.clone();
    assert!(
        (motion.translation - Vec3::new(0.5, 0.0, 0.0)).length() < 1e-5,
        "{motion:?}"
    );
    let moved = twin_root(&bound, &after).0 - twin_root(&bound, &before).0;
    assert!((moved - motion.translation).length() < 1e-5, "{moved}");
}

#[test]
fn loops_finished_and_current_follow_the_action_a_crossfade_goes_to() {
    // walk (1 s) half played, then a crossfade to long (2 s) over 1 s:
    // 0.75 s later walk has passed its loop end, long has not.
    let mut p = player();
    p.command(Command::Play(c(&p, 0))).unwrap();
    p.advance(0.5).unwrap();
    p.command(Command::Crossfade(c(&p, 3), 1.0)).unwrap();
    assert_eq!(p.current().map(|a| (a.clip, a.time)), Some((c(&p, 3), 0.0)));
    p.advance(0.75).unwrap();
    let a = p.current().unwrap();
    let (clip, time) = (a.clip, a.time);
    assert_eq!(clip, c(&p, 3));
    assert!((time - 0.75).abs() < EPS, "{time}");
    assert_eq!(p.current().unwrap().loops, 0);
    p.advance(1.5).unwrap(); // long at 2.25: one loop end
    assert_eq!(p.current().unwrap().loops, 1);
    // Played once: walk reaches its end first, long has not finished.
    // Each action has its own wrap: long is played once too.
    let mut p = player();
    p.command(Command::Play(c(&p, 0))).unwrap();
    p.command(Command::SetWrap(WrapMode::Clamp)).unwrap();
    p.command(Command::Crossfade(c(&p, 3), 1.5)).unwrap();
    p.command(Command::SetWrap(WrapMode::Clamp)).unwrap();
    p.advance(1.0).unwrap();
    assert!(!p.current().unwrap().finished);
    p.advance(1.0).unwrap();
    assert!(p.current().unwrap().finished);
    assert_eq!(p.current().map(|a| (a.clip, a.time)), Some((c(&p, 3), 2.0)));
    // fade_in starts a new current action.
    p.command(Command::FadeIn(c(&p, 1), 0.5)).unwrap();
    assert!(!p.current().unwrap().finished);
    assert_eq!(p.current().map(|a| (a.clip, a.time)), Some((c(&p, 1), 0.0)));
}

#[test]
fn ping_pong_after_another_wrap_moves_forwards_again() {
    // walk (1 s) ping-pong: 1.5 s is 0.5 on the way back. Repeat from
    // there moves forward to 0.75; ping-pong again goes on forwards.
    let mut p = player();
    p.command(Command::Play(c(&p, 0))).unwrap();
    p.command(Command::SetWrap(WrapMode::PingPong)).unwrap();
    p.advance(1.5).unwrap();
    p.advance(0.125).unwrap();
    assert!((p.current().unwrap().time - 0.375).abs() < EPS);
    p.command(Command::SetWrap(WrapMode::Repeat)).unwrap();
    p.advance(0.375).unwrap();
    assert!((p.current().unwrap().time - 0.75).abs() < EPS);
    p.command(Command::SetWrap(WrapMode::PingPong)).unwrap();
    p.advance(0.125).unwrap();
    assert!((p.current().unwrap().time - 0.875).abs() < EPS);
}

#[test]
fn frames_with_root_motion_and_markers_allocate_nothing_once_sized() {
    counting_alloc::no_lib_backtraces();
    // 50 players crossfading walk into run over 10 s, with root motion
    // and two markers per clip, 0.3 s a frame: most frames cross one.
    let bound = library().bind(&rig()).unwrap();
    let mut clips = Clips::with_root(&bound, 0).unwrap();
    for clip in [0, 1] {
        clips.add_marker(clip, 0.25, "left").unwrap();
        clips.add_marker(clip, 0.75, "right").unwrap();
    }
    let clips = Arc::new(clips);
    let mut players: Vec<Player> = (0..50).map(|_| Player::new(&clips)).collect();
    for p in &mut players {
        p.command(Command::Play(c(p, 0))).unwrap();
        p.command(Command::Crossfade(c(p, 1), 10.0)).unwrap();
    }
    let (mut actions, mut counts) = (Vec::new(), Vec::new());
    // Ten frames of 0.3 s cover every phase the markers are met in.
    for _ in 0..10 {
        for p in &mut players {
            p.advance(0.3).unwrap();
        }
        gather(&players, &mut actions, &mut counts);
    }
    let (n, events) = counting_alloc::count(|| {
        let mut events = 0;
        for _ in 0..10 {
            for p in &mut players {
                events += p.advance(0.3).unwrap().events.len();
            }
            gather(&players, &mut actions, &mut counts);
        }
        events
    });
    assert_eq!(n, 0, "advancing with root motion and markers allocated");
    // 3 s of two clips with two markers a second each: 12 per player.
    assert_eq!(events, 50 * 12);
    assert!(players[0].frame().root_motion.translation.length() > 0.0);
}

#[test]
fn huge_steps_keep_every_playhead_in_its_clip_and_never_panic() {
    // Steps far past f64's integer precision, forwards and backwards, on
    // every wrap, with root motion and a marker: the playhead stays a clip
    // time in [0, 2], the motion finite, the events capped.
    let bound = library().bind(&rig()).unwrap();
    let mut clips = Clips::with_root(&bound, 0).unwrap();
    clips.add_marker(3, 0.5, "m").unwrap();
    let clips = Arc::new(clips);
    for wrap in [WrapMode::Repeat, WrapMode::PingPong, WrapMode::Clamp] {
        let mut p = Player::new(&clips);
        p.command(Command::Play(c(&p, 3))).unwrap(); // long: 2 s
        p.command(Command::SetWrap(wrap)).unwrap();
        for (dt, speed) in [(1e300, 1.0), (1e300, -1.0), (1e19, 1.0), (3e18, -1.0)] {
            p.command(Command::SetSpeed(speed)).unwrap();
            for _ in 0..3 {
                let f = p.advance(dt).unwrap();
                let time = f.actions[0].time;
                assert!((0.0..=2.0).contains(&time), "{wrap:?} {dt} {speed}: {time}");
                assert!(f.root_motion.translation.is_finite(), "{wrap:?}");
                assert!(f.events.len() <= keyframe_gpu::playback::MAX_EVENTS_PER_STEP);
            }
        }
        // A step whose dt * speed is past f64's range is refused.
        p.command(Command::SetSpeed(1e300)).unwrap();
        let before = p.current();
        assert!(matches!(
            p.advance(1e300),
            Err(Error::Playback(PlaybackError::BadNumber {
                command: "advance",
                ..
            }))
        ));
        assert_eq!(p.current(), before);
    }
}

#[test]
fn players_can_advance_on_other_threads() {
    // A crowd's players split across threads, as a game's job system
    // would: Player and Clips are Send and Sync.
    fn shareable<T: Send + Sync>() {}
    shareable::<Player>();
    shareable::<Clips>();
    let clips = Arc::new(Clips::new(&library()));
    let mut players: Vec<Player> = (0..8).map(|_| Player::new(&clips)).collect();
    std::thread::scope(|s| {
        for chunk in players.chunks_mut(4) {
            s.spawn(move || {
                for p in chunk {
                    p.command(Command::Play(c(p, 0))).unwrap();
                    p.advance(0.25).unwrap();
                }
            });
        }
    });
    for p in &players {
        assert!((p.current().unwrap().time - 0.25).abs() < EPS);
    }
}

#[test]
fn events_carry_the_weight_of_the_action_that_crossed_them() {
    // walk crossfading into run over 1 s, each with a step at 0.25 s:
    // 0.3 s in, both crossed it; walk weighs 1 - 0.3, run 0.3.
    let mut clips = Clips::new(&library());
    clips.add_marker(0, 0.25, "walk step").unwrap();
    clips.add_marker(1, 0.25, "run step").unwrap();
    let mut p = Player::new(&Arc::new(clips));
    p.command(Command::Play(c(&p, 0))).unwrap();
    p.command(Command::Crossfade(c(&p, 1), 1.0)).unwrap();
    let events = &p.advance(0.3).unwrap().events;
    let got: Vec<(&str, u32, f32)> = events
        .iter()
        .map(|e| (&*e.name, e.clip.index(), e.weight))
        .collect();
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!((got[0].0, got[0].1), ("walk step", 0));
    assert_eq!((got[1].0, got[1].1), ("run step", 1));
    assert!(
        (got[0].2 - 0.7).abs() < 1e-6 && (got[1].2 - 0.3).abs() < 1e-6,
        "{got:?}"
    );
}

#[test]
fn repetitions_stop_an_action_at_the_end_of_its_last_pass() {
    // walk (1 s, 2 along x a second) repeating twice, with markers at
    // 0.5 ("mid") and 1.0 ("end", the instant a loop starts again).
    let bound = library().bind(&rig()).unwrap();
    let mut clips = Clips::with_root(&bound, 0).unwrap();
    clips.add_marker(0, 0.5, "mid").unwrap();
    clips.add_marker(0, 1.0, "end").unwrap();
    let clips = Arc::new(clips);
    let names = |f: &keyframe_gpu::playback::Frame| -> Vec<String> {
        f.events.iter().map(|e| e.name.to_string()).collect()
    };
    let mut p = Player::new(&clips);
    p.command(Command::SetRepetitions(Some(2))).unwrap();
    p.command(Command::Play(c(&p, 0))).unwrap();
    // 0 -> 0.75; 0.75 -> 1.75 (one loop end); then 1.75 -> 2.75 stops at
    // 2.0, the end of the second loop: clip time 1, 0.25 s of motion.
    let f = p.advance(0.75).unwrap();
    assert_eq!(names(f), ["mid"]);
    let f = p.advance(1.0).unwrap();
    assert_eq!(names(f), ["end", "mid"]);
    assert!((f.root_motion.translation.x - 2.0).abs() < 1e-5);
    assert!(!p.current().unwrap().finished);
    let f = p.advance(1.0).unwrap();
    assert_eq!(names(f), ["end"]);
    assert!((f.root_motion.translation.x - 0.5).abs() < 1e-5, "{f:?}");
    assert_eq!(f.actions[0].time, 1.0);
    assert!(p.current().unwrap().finished);
    assert_eq!(p.current().unwrap().loops, 2);
    // It holds: no motion, no event.
    let f = p.advance(1.0).unwrap();
    assert!(f.events.is_empty());
    assert_eq!(f.root_motion.translation, Vec3::ZERO);
    assert_eq!(f.actions[0].time, 1.0);
    // A seek plays it again, counting from there: one pass left of a
    // limit of 1 from 0.5 ends at 1.0.
    p.command(Command::SetRepetitions(Some(1))).unwrap();
    p.command(Command::Seek(0.5)).unwrap();
    assert!(!p.current().unwrap().finished);
    p.advance(0.25).unwrap();
    assert!(!p.current().unwrap().finished);
    let f = p.advance(0.5).unwrap();
    assert!((f.root_motion.translation.x - 0.5).abs() < 1e-5);
    assert!(p.current().unwrap().finished);
}

#[test]
fn repetitions_sought_backwards_enter_their_first_pass_at_the_start() {
    let bound = library().bind(&rig()).unwrap();
    let clips = Arc::new(Clips::with_root(&bound, 0).unwrap());
    // Backwards from 0.5 with one repetition: as three.js's
    // AnimationAction, the passage through 0 of an action started (or
    // sought) backwards enters its first pass and is no repetition; that
    // pass runs from 1 back to 0. 0.75 s: 0.5 -> 0 -> 0.75, moved back by
    // 1.5, one pass to go; 1 s more stops at 0 after 0.75 s (back 1.5).
    let mut p = Player::new(&clips);
    p.command(Command::SetRepetitions(Some(1))).unwrap();
    p.command(Command::Play(c(&p, 0))).unwrap();
    p.command(Command::Seek(0.5)).unwrap();
    p.command(Command::SetSpeed(-1.0)).unwrap();
    let f = p.advance(0.75).unwrap();
    assert!((f.actions[0].time - 0.75).abs() < EPS, "{f:?}");
    assert!((f.root_motion.translation.x + 1.5).abs() < 1e-5, "{f:?}");
    assert!(!p.current().unwrap().finished);
    assert_eq!(p.current().unwrap().loops, 0);
    let f = p.advance(1.0).unwrap();
    assert_eq!(f.actions[0].time, 0.0);
    assert!((f.root_motion.translation.x + 1.5).abs() < 1e-5, "{f:?}");
    assert!(p.current().unwrap().finished);
    assert_eq!(p.current().unwrap().loops, 1);
}

#[test]
fn repetitions_stop_ping_pong_and_layers_at_the_end_of_their_last_pass() {
    let bound = library().bind(&rig()).unwrap();
    let clips = Arc::new(Clips::with_root(&bound, 0).unwrap());
    // Ping-pong, three passes: out, back, out, stopping at the clip's
    // end. 2.5 s is halfway through the third pass; one more second
    // stops at its end, 0.5 s later.
    let mut p = Player::new(&clips);
    p.command(Command::SetRepetitions(Some(3))).unwrap();
    p.command(Command::SetWrap(WrapMode::PingPong)).unwrap();
    p.command(Command::Play(c(&p, 0))).unwrap();
    p.advance(2.5).unwrap();
    assert!((p.current().unwrap().time - 0.5).abs() < EPS);
    assert!(!p.current().unwrap().finished);
    let f = p.advance(1.0).unwrap();
    assert_eq!(f.actions[0].time, 1.0);
    assert!((f.root_motion.translation.x - 1.0).abs() < 1e-5);
    assert!(p.current().unwrap().finished);
    assert_eq!(p.current().unwrap().loops, 3);

    // A layer's own limit; a limit below the passes played stops the
    // base where it stands.
    let mut p = Player::new(&clips);
    p.command(Command::Play(c(&p, 0))).unwrap();
    p.add_layer(
        c(&p, 1),
        Layer {
            repetitions: Some(1),
            ..Layer::default()
        },
    )
    .unwrap();
    p.advance(1.25).unwrap();
    assert!((p.current().unwrap().time - 0.25).abs() < EPS);
    p.command(Command::SetRepetitions(Some(1))).unwrap();
    p.advance(0.5).unwrap();
    let times: Vec<f64> = p.frame().actions.iter().map(|a| a.time).collect();
    assert!(
        (times[0] - 0.25).abs() < EPS && times[1] == 1.0,
        "{times:?}"
    );
    assert!(p.current().unwrap().finished);
}

#[test]
fn a_masked_action_moves_the_root_by_its_masks_factor_there() {
    // walk at weight 1 and a layer of run (6 along z a second) through a
    // mask of factor 0.5 at the root: the mixer's weights there are 1 and
    // 0.5, so the root moves by 2/3 of walk's and 1/3 of run's motion:
    // over 0.5 s, 2/3 * (1, 0, 0) + 1/3 * (0, 0, 3) = (2/3, 0, 1).
    let bound = library().bind(&rig()).unwrap();
    let masks = [keyframe_gpu::Mask::filled(bound.rig(), 0.5).unwrap()];
    let mut clips = Clips::with_root(&bound, 0).unwrap();
    clips.set_masks(&bound, &masks).unwrap();
    let mut p = Player::new(&Arc::new(clips));
    p.command(Command::Play(c(&p, 0))).unwrap();
    p.command(Command::SetWrap(WrapMode::Clamp)).unwrap();
    p.add_layer(
        c(&p, 1),
        Layer {
            mask: Some(keyframe_gpu::MaskId::new(0)),
            wrap: WrapMode::Clamp,
            ..Layer::default()
        },
    )
    .unwrap();
    let before = p.advance(0.25).unwrap().actions.clone();
    let motion = p.advance(0.5).unwrap().root_motion;
    let after = p.frame().actions.clone();
    let want = Vec3::new(2.0 / 3.0, 0.0, 1.0);
    assert!((motion.translation - want).length() < 1e-5, "{motion:?}");
    let pose = |acts: &[keyframe_gpu::Action]| {
        let poses =
            keyframe_gpu::cpu::mixed_poses(&bound, &masks, acts, &[acts.len() as u32]).unwrap();
        poses.local(0, 0).unwrap().translation
    };
    let moved = pose(&after) - pose(&before);
    assert!((moved - motion.translation).length() < 1e-5, "{moved}");
    // Without the masks, a masked layer moves no root: walk's alone.
    let mut p = rooted();
    p.command(Command::Play(c(&p, 0))).unwrap();
    p.add_layer(
        c(&p, 1),
        Layer {
            mask: Some(keyframe_gpu::MaskId::new(0)),
            ..Layer::default()
        },
    )
    .unwrap();
    let motion = p.advance(0.5).unwrap().root_motion;
    assert!((motion.translation - Vec3::new(1.0, 0.0, 0.0)).length() < 1e-5);
    // Masks of another rig are refused.
    let mut b = Rig::builder();
    b.node(None, NodeTransform::IDENTITY);
    b.node(Some(0), NodeTransform::IDENTITY);
    let other = b.build().unwrap();
    let foreign = [keyframe_gpu::Mask::filled(&other, 1.0).unwrap()];
    let mut clips = Clips::with_root(&bound, 0).unwrap();
    assert!(matches!(
        clips.set_masks(&bound, &foreign),
        Err(Error::Mix(_))
    ));
}

#[test]
fn a_full_table_drops_its_lightest_base_action_and_keeps_the_weights_sum() {
    // At most 3 actions. walk, crossfades to run then turn 0.25 s apart
    // (1 s each): walk 0.75 * 0.75, run 0.25 * 0.75, turn 0.25 when the
    // crossfade to long comes. The table is full: run (the lightest) goes,
    // and its 0.1875 is long's start, ramping to the sum 1. Half a second
    // later: walk 0.5625 * 0.5, turn 0.25 * 0.5, long 0.1875 + 0.8125 *
    // 0.5, summing to 1.
    let mut p = player().with_max_actions(3).with_character(2);
    p.command(Command::Play(c(&p, 0))).unwrap();
    p.command(Command::Crossfade(c(&p, 1), 1.0)).unwrap();
    p.advance(0.25).unwrap();
    p.command(Command::Crossfade(c(&p, 2), 1.0)).unwrap();
    p.advance(0.25).unwrap();
    p.command(Command::Crossfade(c(&p, 3), 1.0)).unwrap();
    p.advance(0.5).unwrap();
    let w = weights(&p);
    let want = [(0, 0.28125), (2, 0.125), (3, 0.59375)];
    assert_eq!(w.len(), 3, "{w:?}");
    for ((c, got), (ec, e)) in w.iter().zip(want) {
        assert_eq!(*c, ec, "{w:?}");
        assert!((got - e).abs() < 1e-6, "{w:?}");
    }
    // A fade-in drops the lightest too (turn, at 0.125).
    p.command(Command::FadeIn(c(&p, 1), 0.5)).unwrap();
    let clips: Vec<u32> = p
        .advance(0.0)
        .unwrap()
        .actions
        .iter()
        .map(|a| a.clip)
        .collect();
    assert_eq!(clips, [0, 3, 1]);
    // Layers are never dropped: a table the layers fill refuses more.
    let mut p = player().with_max_actions(2).with_character(2);
    p.command(Command::Play(c(&p, 0))).unwrap();
    p.add_layer(c(&p, 1), Layer::default()).unwrap();
    let full = |r: Result<_, Error>, command: &str| match r {
        Err(Error::Playback(PlaybackError::TooManyActions {
            character: 2,
            command: c,
            max: 2,
        })) if c == command => {}
        other => panic!("{command}: {other:?}"),
    };
    full(
        p.add_layer(c(&p, 2), Layer::default()).map(|_| ()),
        "add_layer",
    );
    p.command(Command::Crossfade(c(&p, 2), 1.0)).unwrap(); // walk goes, turn comes
    assert_eq!(
        p.advance(0.0)
            .unwrap()
            .actions
            .iter()
            .map(|a| a.clip)
            .collect::<Vec<_>>(),
        [2, 1]
    );
    let mut p = player().with_max_actions(1);
    p.add_layer(c(&p, 1), Layer::default()).unwrap();
    assert!(matches!(
        p.command(Command::Play(c(&p, 0))),
        Err(Error::Playback(PlaybackError::TooManyActions { .. }))
    ));
    assert!(matches!(
        p.command(Command::Crossfade(c(&p, 0), 1.0)),
        Err(Error::Playback(PlaybackError::TooManyActions { .. }))
    ));
    // Nothing changed: the layer alone.
    let clips: Vec<u32> = p
        .advance(0.0)
        .unwrap()
        .actions
        .iter()
        .map(|a| a.clip)
        .collect();
    assert_eq!(clips, [1]);
}

#[test]
fn crossfade_at_starts_the_incoming_clip_at_the_time_given() {
    // walk (1 s) plays from 0; at 0.25 s a crossfade over 0.5 s to run
    // (1 s) at clip time 2.75 (folded by repeat: 0.75).
    let mut p = player();
    p.command(Command::Play(c(&p, 0))).unwrap();
    p.advance(0.25).unwrap();
    p.command(Command::CrossfadeAt(c(&p, 1), 0.5, 2.75))
        .unwrap();
    assert_eq!(p.current().map(|c| c.clip.index()), Some(1));
    assert!((p.current().unwrap().time - 0.75).abs() < EPS);
    // 0.1 s later: walk at 0.35 weighing 1 - 0.1 / 0.5 = 0.8, run at
    // 0.85 weighing 0.2.
    let f = p.advance(0.1).unwrap();
    let got: Vec<(u32, f64, f32)> = f
        .actions
        .iter()
        .map(|a| (a.clip, a.time, a.weight))
        .collect();
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0].0, 0);
    assert!((got[0].1 - 0.35).abs() < EPS && (got[0].2 - 0.8).abs() < 1e-6);
    assert_eq!(got[1].0, 1);
    assert!((got[1].1 - 0.85).abs() < EPS && (got[1].2 - 0.2).abs() < 1e-6);
    // A clip already playing moves to the time given too: back to walk,
    // at 0.5 (walk stood at 0.35).
    p.command(Command::CrossfadeAt(c(&p, 0), 0.5, 0.5)).unwrap();
    assert_eq!(p.current().map(|c| c.clip.index()), Some(0));
    assert!((p.current().unwrap().time - 0.5).abs() < EPS);
}

#[test]
fn crossfade_at_refuses_a_time_that_is_not_finite_and_changes_nothing() {
    let mut p = player();
    p.command(Command::Play(c(&p, 0))).unwrap();
    p.advance(0.25).unwrap();
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let e = p
            .command(Command::CrossfadeAt(c(&p, 1), 0.5, bad))
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::Playback(PlaybackError::BadNumber {
                    command: "crossfade_at",
                    what: "time",
                    ..
                })
            ),
            "{e}"
        );
        assert_eq!(weights(&p), [(0, 1.0)]);
        assert_eq!(p.current().map(|c| c.clip.index()), Some(0));
    }
    // Its other errors name it too.
    let e = p
        .command(Command::CrossfadeAt(c(&player(), 1), 0.5, 0.0))
        .unwrap_err();
    assert!(e.to_string().contains("crossfade_at"), "{e}");
    let e = p
        .command(Command::CrossfadeAt(c(&p, 1), 0.0, 0.0))
        .unwrap_err();
    assert!(e.to_string().contains("crossfade_at"), "{e}");
}

/// A clip that does not animate the root node (here: only the child's
/// rotation) is accepted by `Clips::with_root` and moves the root by
/// nothing, while the clip that walks it still reports its walk: 2 units
/// along x per second, so 0.5 s is (1, 0, 0).
#[test]
fn a_clip_that_leaves_the_root_alone_moves_it_by_nothing() {
    let walk = Track::new(
        0,
        Property::Translation,
        Interpolation::Linear,
        vec![0.0, 1.0],
        vec![0.0, 0.0, 0.0, 2.0, 0.0, 0.0],
    );
    let q = Quat::from_rotation_z(0.5);
    let wave = Track::new(
        1,
        Property::Rotation,
        Interpolation::Linear,
        vec![0.0, 1.0],
        [Quat::IDENTITY.to_array(), q.to_array()].concat(),
    );
    let lib = AnimationLibrary::new(vec![
        Clip::new("walk", vec![walk]),
        Clip::new("wave", vec![wave]),
    ])
    .unwrap();
    let mut b = Rig::builder();
    let root = b.node(None, NodeTransform::IDENTITY);
    b.node(Some(root), NodeTransform::IDENTITY);
    let bound = lib.bind(&b.build().unwrap()).unwrap();
    let clips = Arc::new(Clips::with_root(&bound, 0).unwrap());
    let mut p = Player::new(&clips);
    p.command(Command::Play(c(&p, 1))).unwrap();
    let f = p.advance(0.5).unwrap();
    assert_eq!(f.root_motion.translation, Vec3::ZERO);
    assert_eq!(f.root_motion.rotation, Quat::IDENTITY);
    let mut p = Player::new(&clips);
    p.command(Command::Play(c(&p, 0))).unwrap();
    let f = p.advance(0.5).unwrap();
    assert!((f.root_motion.translation - Vec3::new(1.0, 0.0, 0.0)).length() < 1e-5);
}

/// Ticks a second of a playhead (`docs/USAGE.md`, "Playback"): 2^16
/// flicks of 1/705,600,000 s.
const TICKS: u128 = 705_600_000 << 16;

#[test]
fn a_character_looped_for_days_keeps_its_phase_exactly() {
    // 10^7 s (115 days) of play in uneven steps of whole 1/1024 s (each
    // an exact f64 and a whole number of ticks, as the steps of the
    // common frame rates and whole milliseconds are), on a clip of
    // 1.5416666 s (f32), forwards and backwards. The playhead is ticks:
    // each step is dt * TICKS ticks and the clip d * TICKS ticks (exact
    // for an f32 duration of at least 0.25 s), so the phase after the run
    // is the sum of the steps modulo the clip, computed here in integers.
    let d = 1.541_666_6_f32;
    let lib = AnimationLibrary::new(vec![Clip::new(
        "loop",
        vec![Track::new(
            0,
            Property::Translation,
            Interpolation::Linear,
            vec![0.0, d],
            vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0],
        )],
    )])
    .unwrap();
    // d as an exact fraction: its f32 bits' mantissa over a power of two.
    let bits = d.to_bits();
    let mantissa = u128::from((bits & 0x7f_ffff) | 0x80_0000);
    let shift = 150 - ((bits >> 23) & 0xff); // d = mantissa / 2^shift
    let clip_ticks = (mantissa * TICKS) >> shift;
    assert_eq!(
        clip_ticks << shift,
        mantissa * TICKS,
        "the clip is whole ticks"
    );
    for speed in [1.0, -1.0] {
        let clips = Arc::new(Clips::new(&lib));
        let mut p = Player::new(&clips);
        p.command(Command::Play(clips.clip("loop").unwrap()))
            .unwrap();
        p.command(Command::SetSpeed(speed)).unwrap();
        let mut total: u128 = 0; // in 1/1024 s
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        while total < 10_000_000 * 1024 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let k = 300 * 1024 + x % (400 * 1024); // 300 to 700 s
            p.advance(k as f64 / 1024.0).unwrap();
            total += u128::from(k);
        }
        let total = total * (TICKS / 1024);
        let (time, loops) = if speed > 0.0 {
            (total % clip_ticks, total / clip_ticks)
        } else {
            // Backwards from 0: the first passage through 0 enters the
            // first pass (no loop), as three.js counts.
            let back = (clip_ticks - total % clip_ticks) % clip_ticks;
            (back, total.div_ceil(clip_ticks) - 1)
        };
        let got = p.current().unwrap();
        assert_eq!(got.time, time as f64 / TICKS as f64, "speed {speed}");
        assert_eq!(u128::from(got.loops), loops, "speed {speed}");
    }
}

#[test]
fn blend_space_frames_allocate_nothing_once_sized() {
    use keyframe_gpu::playback::{BlendMode, BlendSpace, BlendSync};
    counting_alloc::no_lib_backtraces();
    // 20 players in a marker-synced walk (1 s) / long (2 s) space with
    // root motion, smoothing and markers, the parameter changing every
    // frame.
    let bound = library().bind(&rig()).unwrap();
    let mut clips = Clips::with_root(&bound, 0).unwrap();
    for (clip, d) in [(0, 1.0), (3, 2.0)] {
        clips.add_marker(clip, 0.25 * d, "left").unwrap();
        clips.add_marker(clip, 0.75 * d, "right").unwrap();
    }
    let (walk, long) = (clips.clip_at(0).unwrap(), clips.clip_at(3).unwrap());
    let space = clips
        .add_blend_space(BlendSpace {
            name: "loco".into(),
            kind: BlendMode::OneD,
            clips: vec![(walk, glam::Vec2::ZERO), (long, glam::Vec2::X)],
            smoothing: Some(2.0),
            sync: BlendSync::Markers,
        })
        .unwrap();
    let clips = Arc::new(clips);
    let mut players: Vec<Player> = (0..20).map(|_| Player::new(&clips)).collect();
    for p in &mut players {
        p.command(Command::PlayBlendSpace(space, 0.5)).unwrap();
    }
    let frame = |players: &mut Vec<Player>, n: usize| {
        let mut events = 0;
        for (k, p) in players.iter_mut().enumerate() {
            let x = ((n + k) % 10) as f32 / 10.0;
            p.command(Command::SetBlendParams(space, glam::Vec2::new(x, 0.0)))
                .unwrap();
            events += p.advance(0.1).unwrap().events.len();
        }
        events
    };
    for n in 0..30 {
        frame(&mut players, n);
    }
    let (n, events) =
        counting_alloc::count(|| (30..60).map(|n| frame(&mut players, n)).sum::<usize>());
    assert_eq!(n, 0, "advancing blend spaces allocated");
    assert!(events > 0);
    assert!(players[0].frame().root_motion.translation.length() > 0.0);
}
