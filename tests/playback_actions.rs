//! The playback layer's second step (issue 56), device-free: fades that
//! aim where the fades before them were going, wrap and repetitions per
//! action, actions started backwards as three.js's `AnimationAction`
//! plays them, override layers, root motion in the model's space and
//! `in_place` on the rig's ground plane, clip handles that belong to
//! their `Clips`, and the state a player shows. Every expected value is
//! worked out by hand from the clips built here.

use std::sync::Arc;

use glam::{Quat, Vec3};
use keyframe_gpu::playback::{ClipHandle, Clips, Command, Layer, PlaybackError, Player};
use keyframe_gpu::{
    AnimationLibrary, Clip, Error, Interpolation, NodeTransform, Property, Rig, Track, WrapMode,
};

const EPS: f64 = 1e-6;

/// Clips on node 0 of a one-node rig, over `[0, 1]` s: 0 "walk":
/// translation (0,0,0) -> (2,0,0); 1 "run": (0,0,0) -> (0,0,6); 2
/// "jump": (0,0,0) -> (0,1,0).
fn library() -> AnimationLibrary {
    let tr = |to: [f32; 3]| {
        Track::new(
            0,
            Property::Translation,
            Interpolation::Linear,
            vec![0.0, 1.0],
            vec![0.0, 0.0, 0.0, to[0], to[1], to[2]],
        )
    };
    AnimationLibrary::new(vec![
        Clip::new("walk", vec![tr([2.0, 0.0, 0.0])]),
        Clip::new("run", vec![tr([0.0, 0.0, 6.0])]),
        Clip::new("jump", vec![tr([0.0, 1.0, 0.0])]),
    ])
    .unwrap()
}

fn one_node() -> Rig {
    let mut b = Rig::builder();
    b.node(None, NodeTransform::IDENTITY);
    b.build().unwrap()
}

fn player() -> Player {
    Player::new(&Arc::new(Clips::new(&library())))
}

fn rooted() -> Player {
    let bound = library().bind(&one_node()).unwrap();
    Player::new(&Arc::new(Clips::with_root(&bound, 0).unwrap()))
}

fn clip(p: &Player, name: &str) -> ClipHandle {
    p.clip(name).unwrap()
}

/// (clip index, weight) of the last frame's table.
fn weights(p: &Player) -> Vec<(u32, f32)> {
    p.frame()
        .actions
        .iter()
        .map(|a| (a.clip, a.weight))
        .collect()
}

fn close(got: &[(u32, f32)], want: &[(u32, f32)]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            g.0 == w.0 && (g.1 - w.1).abs() < 1e-6,
            "{got:?} vs {want:?}"
        );
    }
}

#[test]
fn a_crossfade_during_a_fade_in_ends_where_the_fade_in_was_going() {
    // fade_in(walk, 0.5); 0.25 s later walk weighs 0.5 and heads for 1.
    // crossfade(run, 0.5): walk ramps 0.5 -> 0 and run 0 -> 1 (the sum of
    // where the base was heading), so s seconds in walk weighs
    // 0.5 * (1 - s / 0.5) and run s / 0.5; the pose ends at run alone at
    // weight 1, not at 0.5 (half the rest pose).
    let mut p = player();
    p.command(Command::FadeIn(clip(&p, "walk"), 0.5)).unwrap();
    p.advance(0.25).unwrap();
    close(&weights(&p), &[(0, 0.5)]);
    p.command(Command::Crossfade(clip(&p, "run"), 0.5)).unwrap();
    let state: Vec<(u32, f32, f32, f64)> = p
        .actions()
        .map(|a| (a.clip.index(), a.weight, a.target, a.fade_left))
        .collect();
    assert_eq!(state, [(0, 0.5, 0.0, 0.5), (1, 0.0, 1.0, 0.5)]);
    p.advance(0.25).unwrap();
    close(&weights(&p), &[(0, 0.25), (1, 0.5)]);
    p.advance(0.25).unwrap();
    close(&weights(&p), &[(1, 1.0)]);
    p.advance(2.0).unwrap();
    close(&weights(&p), &[(1, 1.0)]);
    // After a fade-out (heading for 0), a crossfade brings the character
    // back to weight 1.
    let mut p = player();
    p.command(Command::Play(clip(&p, "walk"))).unwrap();
    p.command(Command::FadeOut(clip(&p, "walk"), 1.0)).unwrap();
    p.advance(0.5).unwrap();
    close(&weights(&p), &[(0, 0.5)]);
    p.command(Command::Crossfade(clip(&p, "run"), 0.5)).unwrap();
    p.advance(0.25).unwrap();
    close(&weights(&p), &[(0, 0.25), (1, 0.5)]);
    p.advance(0.25).unwrap();
    close(&weights(&p), &[(1, 1.0)]);
}

#[test]
fn each_action_keeps_its_own_wrap_through_a_crossfade() {
    // A one-shot jump, 0.7 s in, crossfades back to a looping run; the
    // wrap set right after the crossfade is the run's: the jump goes on
    // from 0.7 (no restart) and stops at its end, played once.
    let mut p = player();
    let (jump, run) = (clip(&p, "jump"), clip(&p, "run"));
    p.command(Command::Play(jump)).unwrap();
    p.command(Command::SetWrap(WrapMode::Clamp)).unwrap();
    p.advance(0.7).unwrap();
    p.command(Command::Crossfade(run, 1.0)).unwrap();
    p.command(Command::SetWrap(WrapMode::Repeat)).unwrap();
    let f = p.advance(0.1).unwrap();
    assert!((f.actions[0].time - 0.8).abs() < EPS, "{f:?}");
    p.advance(0.4).unwrap();
    let s: Vec<(u32, WrapMode, f64, bool)> = p
        .actions()
        .map(|a| (a.clip.index(), a.wrap, a.time, a.finished))
        .collect();
    assert_eq!(s[0].0, 2);
    assert_eq!((s[0].1, s[0].2, s[0].3), (WrapMode::Clamp, 1.0, true));
    assert_eq!((s[1].0, s[1].1, s[1].3), (1, WrapMode::Repeat, false));
    assert!((s[1].2 - 0.5).abs() < EPS);
    // The run loops on; the jump, started again, is still played once.
    p.advance(1.0).unwrap();
    assert_eq!(p.current().unwrap().loops, 1);
    p.command(Command::Crossfade(jump, 0.25)).unwrap();
    let current = |p: &Player| p.actions().filter(|a| a.layer.is_none()).last().unwrap();
    assert_eq!(current(&p).wrap, WrapMode::Clamp);
    p.advance(1.5).unwrap();
    assert!(p.current().unwrap().finished);
    assert_eq!(p.current().map(|a| (a.clip, a.time)), Some((jump, 1.0)));
    // A clip's wrap and repetitions set before it plays: it starts with
    // them; the others keep theirs.
    p.command(Command::SetClipWrap(clip(&p, "walk"), WrapMode::PingPong))
        .unwrap();
    p.command(Command::SetClipRepetitions(clip(&p, "walk"), Some(3)))
        .unwrap();
    p.command(Command::Crossfade(clip(&p, "walk"), 0.1))
        .unwrap();
    let walk = current(&p);
    assert_eq!((walk.wrap, walk.repetitions), (WrapMode::PingPong, Some(3)));
    let jump_state = p.actions().find(|a| a.clip == jump).unwrap();
    assert_eq!(
        (jump_state.wrap, jump_state.repetitions),
        (WrapMode::Clamp, None)
    );
}

#[test]
fn ping_pong_started_backwards_plays_its_first_pass_from_the_end() {
    // walk (1 s) ping-pong at speed -1 from 0, as three.js plays it: from
    // the end backwards (0.9, 0.8, ...), its passage through 0 no loop;
    // at 0 it turns (a loop) and comes back up.
    let mut p = player();
    p.command(Command::Play(clip(&p, "walk"))).unwrap();
    p.command(Command::SetWrap(WrapMode::PingPong)).unwrap();
    p.command(Command::SetSpeed(-1.0)).unwrap();
    for k in 1..=10 {
        let f = p.advance(0.1).unwrap();
        let want = 1.0 - 0.1 * f64::from(k);
        assert!((f.actions[0].time - want).abs() < 1e-9, "step {k}: {f:?}");
        assert_eq!(p.current().unwrap().loops, 0, "step {k}");
    }
    let f = p.advance(0.1).unwrap();
    assert!((f.actions[0].time - 0.1).abs() < 1e-9, "{f:?}");
    assert_eq!(p.current().unwrap().loops, 1);
    // Two repetitions from 0 backwards: the pass from the end back to 0,
    // then out again to the end, where it stops (2 s of play).
    let mut p = player();
    p.command(Command::Play(clip(&p, "walk"))).unwrap();
    p.command(Command::SetWrap(WrapMode::PingPong)).unwrap();
    p.command(Command::SetRepetitions(Some(2))).unwrap();
    p.command(Command::SetSpeed(-1.0)).unwrap();
    p.advance(1.5).unwrap();
    assert!((p.current().unwrap().time - 0.5).abs() < EPS);
    assert!(!p.current().unwrap().finished);
    let f = p.advance(1.0).unwrap();
    assert_eq!(f.actions[0].time, 1.0);
    assert!(p.current().unwrap().finished);
    assert_eq!(p.current().unwrap().loops, 2);
}

#[test]
fn repetitions_started_backwards_count_from_the_first_pass() {
    // walk repeating once at speed -1 from 0: the first pass runs from
    // the end back to 0 (1 s), then it stops there; the root moves back
    // by the whole clip, 2 along x.
    let mut p = rooted();
    p.command(Command::Play(clip(&p, "walk"))).unwrap();
    p.command(Command::SetRepetitions(Some(1))).unwrap();
    p.command(Command::SetSpeed(-1.0)).unwrap();
    let f = p.advance(0.5).unwrap();
    assert!((f.actions[0].time - 0.5).abs() < EPS);
    assert!((f.root_motion.translation.x + 1.0).abs() < 1e-5, "{f:?}");
    assert!(!p.current().unwrap().finished);
    let f = p.advance(0.75).unwrap();
    assert_eq!(f.actions[0].time, 0.0);
    assert!((f.root_motion.translation.x + 1.0).abs() < 1e-5, "{f:?}");
    assert!(p.current().unwrap().finished);
    assert_eq!(p.current().unwrap().loops, 1);
    // Forwards, one repetition is one pass: it stops at the end.
    let mut p = player();
    p.command(Command::Play(clip(&p, "walk"))).unwrap();
    p.command(Command::SetRepetitions(Some(1))).unwrap();
    p.advance(1.25).unwrap();
    assert_eq!(p.current().unwrap().time, 1.0);
    assert!(p.current().unwrap().finished);
}

#[test]
fn an_override_layer_replaces_the_base_and_its_root_motion() {
    // walk (2 along x a second) under an override layer of run (6 along
    // z): at weight 1 the root moves as run alone, (0, 0, 3) over 0.5 s;
    // at 0.5, mix((1, 0, 0), (0, 0, 3), 0.5) = (0.5, 0, 1.5). The twin's
    // pose of the frame's table moves by as much.
    let bound = library().bind(&one_node()).unwrap();
    for (weight, want) in [
        (1.0, Vec3::new(0.0, 0.0, 3.0)),
        (0.5, Vec3::new(0.5, 0.0, 1.5)),
    ] {
        let mut p = rooted();
        p.command(Command::Play(clip(&p, "walk"))).unwrap();
        p.command(Command::SetWrap(WrapMode::Clamp)).unwrap();
        let over = Layer {
            weight,
            overrides: true,
            wrap: WrapMode::Clamp,
            ..Layer::default()
        };
        let layer = p.add_layer(clip(&p, "run"), over).unwrap();
        let before = p.advance(0.2).unwrap().actions.clone();
        assert!(before[1].overrides && !before[0].overrides);
        let motion = p.advance(0.5).unwrap().root_motion;
        assert!((motion.translation - want).length() < 1e-5, "{motion:?}");
        let after = p.frame().actions.clone();
        let pose = |acts: &[keyframe_gpu::Action]| {
            let poses =
                keyframe_gpu::cpu::mixed_poses(&bound, &[], acts, &[acts.len() as u32]).unwrap();
            poses.local(0, 0).unwrap().translation
        };
        let moved = pose(&after) - pose(&before);
        assert!((moved - motion.translation).length() < 1e-5, "{moved}");
        let state = p.layer(layer).unwrap();
        assert!(state.overrides && state.additive.is_none());
        assert_eq!(state.weight, weight);
    }
    // An override at weight 1 poses the root as its clip alone.
    let mut p = player();
    p.command(Command::Play(clip(&p, "walk"))).unwrap();
    p.add_layer(
        clip(&p, "run"),
        Layer {
            overrides: true,
            ..Layer::default()
        },
    )
    .unwrap();
    let acts = p.advance(0.25).unwrap().actions.clone();
    let poses = keyframe_gpu::cpu::mixed_poses(&bound, &[], &acts, &[2]).unwrap();
    assert_eq!(
        poses.local(0, 0).unwrap().translation,
        Vec3::new(0.0, 0.0, 1.5)
    );
    // Additive and override at once is refused; nothing changes.
    let both = Layer {
        overrides: true,
        additive: Some(0.0),
        ..Layer::default()
    };
    assert!(matches!(
        p.add_layer(clip(&p, "jump"), both),
        Err(Error::Playback(PlaybackError::AdditiveOverride {
            command: "add_layer",
            ..
        }))
    ));
    assert_eq!(p.actions().count(), 2);
}

#[test]
fn set_layer_changes_a_layer_and_keeps_its_playhead() {
    let mut p = player();
    p.command(Command::Play(clip(&p, "walk"))).unwrap();
    let layer = p.add_layer(clip(&p, "run"), Layer::default()).unwrap();
    p.advance(0.25).unwrap();
    p.command(Command::FadeLayer(layer, 0.0, 1.0)).unwrap();
    let changed = Layer {
        weight: 0.75,
        overrides: true,
        ..Layer::default()
    };
    p.command(Command::SetLayer(layer, changed)).unwrap();
    let f = p.advance(0.25).unwrap();
    // No fade any more, its weight 0.75, its playhead on at 0.5.
    assert_eq!(f.actions[1].weight, 0.75);
    assert!(f.actions[1].overrides);
    assert!((f.actions[1].time - 0.5).abs() < EPS);
    assert_eq!(p.layer(layer).unwrap().fade_left, 0.0);
}

/// A rig as Fox.glb's: node 0, the armature, turned -90 degrees about x
/// and scaled by 2; node 1, the hips, its child at rest (1, 2, 3). The
/// armature turns the hips' local (x, y, z) into the model's
/// 2 * (x, z, -y): the hips' local z is the model's up.
fn turned_rig() -> Rig {
    let mut b = Rig::builder();
    let q = Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2);
    let armature = b.node(
        None,
        NodeTransform::Trs {
            translation: [0.0; 3],
            rotation: q.to_array(),
            scale: [2.0; 3],
        },
    );
    b.node(Some(armature), NodeTransform::translation([1.0, 2.0, 3.0]));
    b.build().unwrap()
}

/// On the turned rig: 0 "stride" moves the hips from (1, 2, 3) to
/// (4, 6, 5) over 1 s, LINEAR; 1 "turn" turns them 90 degrees about their
/// local z (the model's up) over 1 s; 2 "hop", CUBICSPLINE, from (1, 2,
/// 3) to (1, 2, 5) with in- and out-tangents (1, 1, 1).
fn turned_library() -> AnimationLibrary {
    let stride = Track::new(
        1,
        Property::Translation,
        Interpolation::Linear,
        vec![0.0, 1.0],
        vec![1.0, 2.0, 3.0, 4.0, 6.0, 5.0],
    );
    let quarter = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    let turn = Track::new(
        1,
        Property::Rotation,
        Interpolation::Linear,
        vec![0.0, 1.0],
        [Quat::IDENTITY.to_array(), quarter.to_array()].concat(),
    );
    let one = [1.0f32; 3];
    let hop = Track::new(
        1,
        Property::Translation,
        Interpolation::CubicSpline,
        vec![0.0, 1.0],
        [one, [1.0, 2.0, 3.0], one, one, [1.0, 2.0, 5.0], one].concat(),
    );
    AnimationLibrary::new(vec![
        Clip::new("stride", vec![stride]),
        Clip::new("turn", vec![turn]),
        Clip::new("hop", vec![hop]),
    ])
    .unwrap()
}

fn near(a: Vec3, b: Vec3) -> bool {
    (a - b).length() < 1e-5
}

#[test]
fn rest_world_composes_the_rest_transforms_from_the_root() {
    let rig = turned_rig();
    // The hips' rest (1, 2, 3) in the model: 2 * (1, 3, -2).
    let hips = rig.rest_world(1).unwrap();
    assert!(
        near(hips.w_axis.truncate(), Vec3::new(2.0, 6.0, -4.0)),
        "{hips}"
    );
    // Its local z is the model's up, twice as long.
    assert!(near(
        hips.transform_vector3(Vec3::Z),
        Vec3::new(0.0, 2.0, 0.0)
    ));
    assert_eq!(rig.rest_world(0), rig.rest_world(0));
    assert!(rig.rest_world(2).is_none());
}

#[test]
fn root_motion_is_in_the_models_space() {
    // stride moves the hips by local (3, 4, 2) a second: in the model
    // 2 * (3, 2, -4) = (6, 4, -8), so (3, 2, -4) over 0.5 s. The twin's
    // world pose of the hips moves by as much.
    let bound = turned_library().bind(&turned_rig()).unwrap();
    let clips = Arc::new(Clips::with_root(&bound, 1).unwrap());
    let mut p = Player::new(&clips);
    p.command(Command::Play(clips.clip("stride").unwrap()))
        .unwrap();
    p.command(Command::SetWrap(WrapMode::Clamp)).unwrap();
    let before = p.advance(0.25).unwrap().actions.clone();
    let m = p.advance(0.5).unwrap().root_motion;
    assert!(near(m.translation, Vec3::new(3.0, 2.0, -4.0)), "{m:?}");
    let after = p.frame().actions.clone();
    let world = |acts: &[keyframe_gpu::Action]| {
        let poses =
            keyframe_gpu::cpu::mixed_poses(&bound, &[], acts, &[acts.len() as u32]).unwrap();
        poses.world(0, 1).unwrap().w_axis.truncate()
    };
    assert!(near(world(&after) - world(&before), m.translation));
    // turn: 45 degrees about the hips' local z in 0.5 s is 45 degrees
    // about the model's up, +Y.
    let mut p = Player::new(&clips);
    p.command(Command::Play(clips.clip("turn").unwrap()))
        .unwrap();
    let m = p.advance(0.5).unwrap().root_motion;
    let want = Quat::from_rotation_y(std::f32::consts::FRAC_PI_4);
    assert!(m.rotation.dot(want).abs() > 1.0 - 1e-6, "{m:?}");
}

#[test]
fn in_place_finds_the_ground_plane_from_the_rig() {
    // The model's up is +Y, the hips' local z: in place, the hips keep
    // their rest local x and y (1, 2) and their animated z. stride at
    // 0.5 s is (2.5, 4, 4) in the file, (1, 2, 4) in place: in the model
    // the rest's ground place (2, _, -4) at the animated height 8.
    let bound = turned_library().bind(&turned_rig()).unwrap();
    let still = keyframe_gpu::playback::in_place(&bound, 1).unwrap();
    let poses = |b: &keyframe_gpu::BoundLibrary| {
        keyframe_gpu::cpu::poses(b, &[keyframe_gpu::Instance::new(0, 0.5)]).unwrap()
    };
    let (moving, kept) = (poses(&bound), poses(&still));
    assert!(near(
        moving.local(0, 1).unwrap().translation,
        Vec3::new(2.5, 4.0, 4.0)
    ));
    assert!(near(
        kept.local(0, 1).unwrap().translation,
        Vec3::new(1.0, 2.0, 4.0)
    ));
    assert!(near(
        kept.world(0, 1).unwrap().w_axis.truncate(),
        Vec3::new(2.0, 8.0, -4.0)
    ));
    // hop's CUBICSPLINE tangents (1, 1, 1) keep their part along the up
    // axis alone, local (0, 0, 1); its values their local z.
    let values = &still.library().clips()[2].tracks[0].values;
    let want = [
        [0.0, 0.0, 1.0],
        [1.0, 2.0, 3.0],
        [0.0, 0.0, 1.0],
        [0.0, 0.0, 1.0],
        [1.0, 2.0, 5.0],
        [0.0, 0.0, 1.0],
    ];
    for (k, (got, want)) in values.chunks_exact(3).zip(want).enumerate() {
        assert!(
            near(Vec3::from_slice(got), Vec3::from(want)),
            "element {k}: {got:?}"
        );
    }
    // The turn (no translation track) is untouched.
    assert_eq!(
        still.library().clips()[1].tracks,
        bound.library().clips()[1].tracks
    );
}

#[test]
fn clip_handles_belong_to_their_clips() {
    let lib = library();
    let clips = Arc::new(Clips::new(&lib));
    let run = clips.clip("run").unwrap();
    assert_eq!(run.index(), 1);
    assert_eq!(run.clips(), clips.id());
    assert_eq!(clips.clip_at(1).unwrap(), run);
    // A clone is the same clips; new clips of the same library are not.
    let twin = Arc::new((*clips).clone());
    assert_eq!(twin.id(), clips.id());
    let again = Arc::new(Clips::new(&lib));
    assert_ne!(again.id(), clips.id());
    let mut p = Player::new(&twin).with_character(4);
    p.command(Command::Play(run)).unwrap();
    assert_eq!(p.current().map(|a| (a.clip, a.time)), Some((run, 0.0)));
    assert_eq!(p.clip("run").unwrap(), run);
    // Names the library lacks are refused, naming them.
    let e = p.clip("swim").unwrap_err();
    assert!(matches!(
        e,
        Error::Playback(PlaybackError::NoClipNamed { ref name, clip_count: 3 }) if name == "swim"
    ));
    assert_eq!(
        e.to_string(),
        "no clip is named \"swim\" (the library has 3 clips)"
    );
    // Another library's clip: refused by every command that takes one,
    // naming the character, the command and both clips.
    let other_lib = AnimationLibrary::new(vec![library().clips()[2].clone()]).unwrap();
    let other = Clips::new(&other_lib);
    let foreign = other.clip_at(0).unwrap();
    let e = p.command(Command::Crossfade(foreign, 0.5)).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "character 4, crossfade: clip 0 belongs to clips #{}, not to this player's clips #{}",
            other.id().get(),
            clips.id().get()
        )
    );
    for r in [
        p.command(Command::Play(foreign)),
        p.command(Command::FadeIn(foreign, 0.5)),
        p.command(Command::FadeOut(foreign, 0.5)),
        p.command(Command::CrossfadeAt(foreign, 0.5, 0.0)),
        p.command(Command::SetClipWrap(foreign, WrapMode::Clamp)),
        p.command(Command::SetClipRepetitions(foreign, None)),
        p.add_layer(foreign, Layer::default()).map(|_| ()),
    ] {
        assert!(matches!(
            r,
            Err(Error::Playback(PlaybackError::ClipOfOtherLibrary {
                character: 4,
                ..
            }))
        ));
    }
    assert_eq!(p.current().map(|a| (a.clip, a.time)), Some((run, 0.0)));
    assert_eq!(p.actions().count(), 1);
    // A layer of another player is unknown here, even with the same
    // number.
    let mut q = Player::new(&clips);
    let theirs = q.add_layer(run, Layer::default()).unwrap();
    let mine = p.add_layer(run, Layer::default()).unwrap();
    assert_eq!(theirs.index(), mine.index());
    assert!(p.layer(theirs).is_none());
    assert!(matches!(
        p.command(Command::RemoveLayer(theirs)),
        Err(Error::Playback(PlaybackError::UnknownLayer {
            layer: 0,
            ..
        }))
    ));
    p.command(Command::RemoveLayer(mine)).unwrap();
    // Events name their clip by handle.
    let mut clips = Clips::new(&lib);
    clips.add_marker(1, 0.25, "step").unwrap();
    let clips = Arc::new(clips);
    let mut p = Player::new(&clips);
    p.command(Command::Play(clips.clip("run").unwrap()))
        .unwrap();
    let e = &p.advance(0.5).unwrap().events[0];
    assert_eq!(e.clip, clips.clip("run").unwrap());
}

#[test]
fn a_player_shows_each_actions_state() {
    let mut p = player();
    let (walk, run, jump) = (clip(&p, "walk"), clip(&p, "run"), clip(&p, "jump"));
    p.command(Command::Play(walk)).unwrap();
    p.command(Command::SetSpeed(2.0)).unwrap();
    p.command(Command::Crossfade(run, 1.0)).unwrap();
    let layer = p
        .add_layer(
            jump,
            Layer {
                weight: 0.5,
                additive: Some(0.25),
                speed: 0.5,
                wrap: WrapMode::PingPong,
                repetitions: Some(4),
                ..Layer::default()
            },
        )
        .unwrap();
    p.advance(0.25).unwrap();
    let all: Vec<_> = p.actions().collect();
    assert_eq!(all.len(), 3);
    // walk: 0.5 s played (speed 2), weight 0.75 heading for 0, 0.75 s of
    // fade left; run the same way up; jump's layer at a quarter speed.
    let (w, r, j) = (all[0], all[1], all[2]);
    assert_eq!((w.clip, w.layer, w.speed), (walk, None, 2.0));
    assert!((w.time - 0.5).abs() < EPS && (w.weight - 0.75).abs() < 1e-6);
    assert_eq!((w.target, w.fade_left), (0.0, 0.75));
    assert_eq!((r.clip, r.target, r.fade_left), (run, 1.0, 0.75));
    assert!((r.weight - 0.25).abs() < 1e-6);
    assert_eq!((j.clip, j.layer, j.speed), (jump, Some(layer), 1.0));
    assert_eq!((j.weight, j.target, j.fade_left), (0.5, 0.5, 0.0));
    assert_eq!(
        (j.wrap, j.repetitions, j.additive, j.overrides),
        (WrapMode::PingPong, Some(4), Some(0.25), false)
    );
    assert!((j.time - 0.25).abs() < EPS);
    assert_eq!(p.current().map(|a| (a.clip, a.time)), Some((run, r.time)));
    assert_eq!(p.layer(layer), Some(j));
}
