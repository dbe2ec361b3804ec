//! `playback::GpuPlayers`, through the public API: characters of a crowd
//! model played on the GPU next to a model played from the host; twins
//! subscribed mid-run equal to the GPU's state read back over many frames
//! of uneven steps with commands (actions, weights, root motion, events);
//! the mixer fed by the playback pass equal to the CPU twin's mixer on the
//! twins' tables; characters that come and go; every refusal.

mod common;

#[path = "common/crowd_models.rs"]
mod crowd_models;

use std::sync::Arc;

use crowd_models::{model_a, model_b};
use keyframe_gpu::playback::{
    ActionState, BlendMode, BlendSpace, BlendSync, Clips, Command, GpuPlayers, Layer,
    PlaybackError, Player,
};
use keyframe_gpu::{cpu, CharacterId, Crowd, CrowdCharacter, Error, MixerDesc, ModelId, WrapMode};

/// Two actions' states alike: the same clip, flags and counts; times and
/// weights within 1e-6 (the GPU's f32 weights against the twin's).
fn same_action(a: &ActionState, b: &ActionState, at: &str) {
    assert_eq!(
        (
            a.clip,
            a.wrap,
            a.repetitions,
            a.loops,
            a.finished,
            a.layer,
            a.overrides
        ),
        (
            b.clip,
            b.wrap,
            b.repetitions,
            b.loops,
            b.finished,
            b.layer,
            b.overrides
        ),
        "{at}"
    );
    assert_eq!(a.time, b.time, "{at}: the playheads are the same ticks");
    assert!((a.weight - b.weight).abs() <= 1e-6, "{at}: {a:?} vs {b:?}");
    assert!((a.target - b.target).abs() <= 1e-6, "{at}");
}

fn same_player(gpu: &Player, twin: &Player, at: &str) {
    let (g, t): (Vec<_>, Vec<_>) = (gpu.actions().collect(), twin.actions().collect());
    assert_eq!(g.len(), t.len(), "{at}: {g:?} vs {t:?}");
    for (k, (a, b)) in g.iter().zip(&t).enumerate() {
        same_action(a, b, &format!("{at}, action {k}"));
    }
    assert_eq!((gpu.speed(), gpu.paused()), (twin.speed(), twin.paused()));
    let (gm, tm) = (gpu.frame().root_motion, twin.frame().root_motion);
    assert!(
        (gm.translation - tm.translation).length() < 1e-5,
        "{at}: {gm:?} vs {tm:?}"
    );
    assert!(gm.rotation.dot(tm.rotation).abs() > 1.0 - 1e-6, "{at}");
    let names = |p: &Player| -> Vec<(String, f64)> {
        p.frame()
            .events
            .iter()
            .map(|e| (e.name.to_string(), e.time))
            .collect()
    };
    assert_eq!(names(gpu), names(twin), "{at}: events");
}

struct Scene {
    crowd: Crowd,
    played: ModelId,
    other: ModelId,
    players: GpuPlayers,
    clips: Arc<Clips>,
    characters: Vec<CharacterId>,
}

/// A crowd of model A played on the GPU (root motion of its first joint,
/// markers on "bend") and model B mixed from the host.
fn scene(h: &common::headless::Headless, characters: u32) -> Scene {
    let (device, queue) = (&h.device, &h.queue);
    let (rig_a, lib_a) = model_a();
    let (rig_b, lib_b) = model_b();
    let (bound_a, bound_b) = (lib_a.bind(&rig_a).unwrap(), lib_b.bind(&rig_b).unwrap());
    let mut crowd = Crowd::new().with_chunk_limit(8);
    let desc = MixerDesc::new(characters, 3);
    let played = crowd
        .add_mixed_model(device, queue, "a", &bound_a, &desc)
        .unwrap();
    let other = crowd
        .add_mixed_model(device, queue, "b", &bound_b, &MixerDesc::new(4, 2))
        .unwrap();
    let mut clips = Clips::with_root(&bound_a, 0).unwrap();
    clips.add_marker(1, 0.5, "half").unwrap();
    clips.add_marker(2, 1.5, "high").unwrap();
    let clips = Arc::new(clips);
    let players = GpuPlayers::new(device, queue, &mut crowd, played, &clips).unwrap();
    let characters = (0..characters)
        .map(|_| crowd.add_character(played).unwrap())
        .collect();
    Scene {
        crowd,
        played,
        other,
        players,
        clips,
        characters,
    }
}

/// [`scene`] with every character subscribed from the start.
fn subscribed_scene(h: &common::headless::Headless, characters: u32) -> Scene {
    let mut s = scene(h, characters);
    for &c in &s.characters {
        s.players
            .subscribe(&h.device, &h.queue, &s.crowd, c)
            .unwrap();
    }
    s
}

/// The commands of frame `f` for character `i` (every kind, on a
/// schedule).
fn commands(s: &mut Scene, f: usize, i: usize) {
    let c = s.characters[i];
    let clip = |k: u32| s.clips.clip_at(k).unwrap();
    let p = &mut s.players;
    match (f + 3 * i) % 23 {
        0 => p.command(c, Command::Play(clip((i % 3) as u32))).unwrap(),
        3 => p
            .command(c, Command::Crossfade(clip(((f + i) % 3) as u32), 0.3))
            .unwrap(),
        6 => p
            .command(c, Command::SetSpeed([1.0, -0.5, 2.0][i % 3]))
            .unwrap(),
        8 => {
            let layer = Layer {
                weight: 0.5,
                overrides: i.is_multiple_of(2),
                ..Layer::default()
            };
            p.add_layer(c, clip(1), layer).unwrap();
        }
        11 => p
            .command(
                c,
                Command::SetWrap([WrapMode::PingPong, WrapMode::Clamp][i % 2]),
            )
            .unwrap(),
        13 => p.command(c, Command::FadeIn(clip(2), 0.2)).unwrap(),
        15 => p
            .command(c, Command::SetClipRepetitions(clip(0), Some(2)))
            .unwrap(),
        17 => p.command(c, Command::Seek(0.4)).unwrap(),
        19 => p
            .command(c, Command::CrossfadeAt(clip(1), 0.15, 0.25))
            .unwrap(),
        21 => p
            .command(c, Command::SetPaused(f.is_multiple_of(2)))
            .unwrap(),
        _ => {}
    }
}

fn frame(h: &common::headless::Headless, s: &mut Scene, dt: f64) {
    s.players
        .advance(&h.device, &h.queue, &mut s.crowd, dt)
        .unwrap();
    let mut encoder = h.device.create_command_encoder(&Default::default());
    s.crowd.record(&mut encoder);
    h.queue.submit([encoder.finish()]);
}

/// The crowd's poses of the played model: those of the CPU twin's mixer
/// on the subscribed characters' tables (every character subscribed).
fn poses_are_the_twins(h: &common::headless::Headless, s: &Scene) {
    let got = s.crowd.read_back(&h.device, &h.queue).unwrap();
    let poses = got.model(s.played).unwrap();
    let mut counts = vec![0u32; poses.instance_count() as usize];
    let mut actions = Vec::new();
    for slot in 0..counts.len() as u32 {
        if let Some(c) = s.characters.iter().find(|c| c.slot() == slot) {
            let twin = s.players.subscribed(*c).unwrap();
            counts[slot as usize] = twin.frame().actions.len() as u32;
            actions.extend_from_slice(&twin.frame().actions);
        }
    }
    let bound = s.crowd.models().bound(s.played).unwrap();
    let want = cpu::mixed_poses(bound, &[], &actions, &counts).unwrap();
    let c = poses.compare(&want).unwrap();
    let worst = c.max_abs.iter().fold(0.0f32, |m, &d| m.max(d));
    assert!(worst < 1e-4, "poses differ by {worst}");
}

#[test]
fn twins_subscribed_mid_run_equal_the_gpu_frame_after_frame() {
    let Some(h) = common::gpu("gpu_players twins") else {
        return;
    };
    let (device, queue) = (&h.device, &h.queue);
    let mut s = scene(&h, 20);
    assert_eq!(s.crowd.model(s.played).map(|a| a.chunks().len()), Some(3));
    let mut x: u64 = 0x1234_5678_9abc_def1;
    let mut uneven = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % 1000) as f64 / 1000.0 * 0.07
    };
    let mut events = 0;
    for f in 0..240 {
        for i in 0..s.characters.len() {
            commands(&mut s, f, i);
        }
        // Subscribed from frame 40 on, one more every ten frames: each
        // twin starts from the GPU's state then.
        if f >= 40 && f % 10 == 0 && f / 10 - 4 < s.characters.len() {
            let c = s.characters[f / 10 - 4];
            s.players.subscribe(device, queue, &s.crowd, c).unwrap();
        }
        frame(&h, &mut s, uneven());
        let got = s
            .players
            .read_back(device, queue, &s.crowd, &s.characters)
            .unwrap();
        for (c, g) in s.characters.iter().zip(&got) {
            if let Some(twin) = s.players.subscribed(*c) {
                same_player(g, twin, &format!("frame {f}, character {}", c.slot()));
                events += twin.frame().events.len();
            }
        }
    }
    assert!(events > 20, "{events} events compared");
    assert_eq!(
        s.characters
            .iter()
            .filter(|c| s.players.subscribed(**c).is_some())
            .count(),
        20
    );
    // The poses the mixer gives from the pass's tables: those of the CPU
    // twin's mixer on the twins' tables.
    poses_are_the_twins(&h, &s);
}

#[test]
fn characters_that_come_and_go_start_at_rest() {
    let Some(h) = common::gpu("gpu_players come and go") else {
        return;
    };
    let (device, queue) = (&h.device, &h.queue);
    let mut s = scene(&h, 6);
    for i in 0..6 {
        s.players
            .command(s.characters[i], Command::Play(s.clips.clip_at(2).unwrap()))
            .unwrap();
    }
    frame(&h, &mut s, 0.5);
    // Character 2 goes, a new one takes its slot: at rest, its own.
    let gone = s.characters[2];
    s.crowd.remove_character(gone).unwrap();
    let new = s.crowd.add_character(s.played).unwrap();
    assert_eq!(new.slot(), gone.slot());
    let snap = s
        .players
        .read_back(device, queue, &s.crowd, &[new])
        .unwrap();
    assert_eq!(snap[0].actions().count(), 0, "a new character is at rest");
    // A command of the one gone is refused with nothing written; the
    // others' go on.
    s.players
        .command(gone, Command::Play(s.clips.clip_at(0).unwrap()))
        .unwrap();
    s.players
        .command(s.characters[0], Command::SetSpeed(2.0))
        .unwrap();
    let e = s.players.advance(device, queue, &mut s.crowd, 0.25);
    assert!(matches!(e, Err(Error::UnknownCharacter { .. })), "{e:?}");
    frame(&h, &mut s, 0.25);
    let snap = s
        .players
        .read_back(device, queue, &s.crowd, &[s.characters[0], new])
        .unwrap();
    assert_eq!(snap[0].speed(), 2.0, "the other commands stayed");
    assert_eq!(
        snap[0].current().unwrap().time,
        1.0,
        "0.5 + 0.25 * 2 on lift"
    );
    assert_eq!(snap[1].actions().count(), 0, "the new one is still at rest");
}

#[test]
fn refusals_name_what_is_wrong() {
    let Some(h) = common::gpu("gpu_players refusals") else {
        return;
    };
    let (device, queue) = (&h.device, &h.queue);
    let mut s = scene(&h, 2);
    let c = s.characters[0];
    // Clips of another library.
    let other_clips = Arc::new(Clips::new(s.crowd.models().library(s.other).unwrap()));
    let foreign = other_clips.clip_at(0).unwrap();
    assert!(matches!(
        s.players.command(c, Command::Play(foreign)),
        Err(Error::Playback(PlaybackError::ClipOfOtherLibrary {
            command: "play",
            ..
        }))
    ));
    assert!(matches!(
        GpuPlayers::new(device, queue, &mut s.crowd, s.played, &other_clips),
        Err(Error::Playback(PlaybackError::ClipsOfOtherModel { .. }))
    ));
    // Bad numbers and durations, a layer never given.
    let walk = s.clips.clip_at(0).unwrap();
    assert!(s.players.command(c, Command::Crossfade(walk, 0.0)).is_err());
    assert!(s.players.command(c, Command::SetSpeed(f64::NAN)).is_err());
    assert!(s.players.command(c, Command::Seek(f64::INFINITY)).is_err());
    let mut lone = Player::new(&s.clips);
    let id = lone.add_layer(walk, Layer::default()).unwrap();
    assert!(matches!(
        s.players.command(c, Command::RemoveLayer(id)),
        Err(Error::Playback(PlaybackError::UnknownLayer { .. }))
    ));
    assert!(matches!(
        s.players.advance(device, queue, &mut s.crowd, -1.0),
        Err(Error::Playback(PlaybackError::BadNumber { .. }))
    ));
    // Blend spaces play on the CPU Player alone for now.
    let mut spaced = (*s.clips).clone();
    let space = spaced
        .add_blend_space(BlendSpace {
            name: "walk".into(),
            kind: BlendMode::OneD,
            clips: vec![(walk, glam::Vec2::ZERO)],
            smoothing: None,
            sync: BlendSync::Phase,
        })
        .unwrap();
    for cmd in [
        Command::PlayBlendSpace(space, 0.0),
        Command::SetBlendParams(space, glam::Vec2::ZERO),
    ] {
        assert!(matches!(
            s.players.command(c, cmd),
            Err(Error::Playback(PlaybackError::NotOnGpu { .. }))
        ));
    }
    // A character of another model.
    let b = s.crowd.add_character(s.other).unwrap();
    assert!(matches!(
        s.players.command(b, Command::Play(walk)),
        Err(Error::UnknownCharacter { .. })
    ));
    // The played model takes no frames from the host; the other still
    // does.
    let e = s.crowd.set_actions(queue, &[CrowdCharacter::of(c, 0)], &[]);
    assert!(
        matches!(e, Err(Error::PlayedOnGpu { entry: 0, .. })),
        "{e:?}"
    );
    s.crowd
        .set_actions(queue, &[CrowdCharacter::of(b, 0)], &[])
        .unwrap();
}

#[test]
fn a_device_short_of_the_pass_limits_is_refused_and_the_model_kept() {
    let Some(h) = common::gpu("gpu_players: a device of 8 storage buffers a stage") else {
        return;
    };
    // What required_limits asks of an adapter offering WebGPU's default
    // 8 storage buffers a stage (the sampler's and skinner's need), and
    // of one offering 16 (the playback pass's 12).
    let with = |n| wgpu::Limits {
        max_storage_buffers_per_shader_stage: n,
        ..h.adapter.limits()
    };
    let limits = keyframe_gpu::required_limits(&with(8));
    assert_eq!(limits.max_storage_buffers_per_shader_stage, 8);
    let more = keyframe_gpu::required_limits(&with(16));
    assert_eq!(more.max_storage_buffers_per_shader_stage, 12);
    let (device, queue) = pollster::block_on(h.adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("gpu_players: 8 storage buffers"),
        required_limits: limits,
        ..Default::default()
    }))
    .expect("the adapter offers the limits it reported");
    let (rig, lib) = model_a();
    let bound = lib.bind(&rig).unwrap();
    let mut crowd = Crowd::new();
    let model = crowd
        .add_mixed_model(&device, &queue, "a", &bound, &MixerDesc::new(4, 2))
        .unwrap();
    let clips = Arc::new(Clips::new(bound.library()));
    match GpuPlayers::new(&device, &queue, &mut crowd, model, &clips) {
        Err(Error::DeviceLimit {
            limit_name,
            needed,
            limit,
        }) => {
            assert_eq!(limit_name, "max_storage_buffers_per_shader_stage");
            assert_eq!((needed, limit), (12, 8));
        }
        other => panic!("expected Error::DeviceLimit, got {other:?}"),
    }
    // Nothing changed: the model is still mixed from the host.
    let c = crowd.add_character(model).unwrap();
    let frame = [CrowdCharacter::of(c, 1)];
    let actions = [keyframe_gpu::Action::new(0, 0.25)];
    crowd.set_actions(&queue, &frame, &actions).unwrap();
}

/// A frame loop that never waits for the GPU (each frame's commands
/// written, recorded and submitted back to back, the device polled
/// without blocking): the state the GPU reaches after it is the twins'.
#[test]
fn a_frame_loop_that_never_waits_ends_where_the_twins_do() {
    let Some(h) = common::gpu("gpu_players back to back") else {
        return;
    };
    let (device, queue) = (&h.device, &h.queue);
    let mut s = subscribed_scene(&h, 12);
    for f in 0..150 {
        for i in 0..s.characters.len() {
            commands(&mut s, f, i);
        }
        frame(&h, &mut s, [1.0 / 60.0, 0.05, 0.0, 1.0 / 30.0][f % 4]);
        device.poll(wgpu::PollType::Poll).unwrap();
    }
    let got = s
        .players
        .read_back(device, queue, &s.crowd, &s.characters)
        .unwrap();
    let mut actions = 0;
    for (c, g) in s.characters.iter().zip(&got) {
        let twin = s.players.subscribed(*c).unwrap();
        same_player(
            g,
            twin,
            &format!("after 150 frames, character {}", c.slot()),
        );
        actions += twin.actions().count();
    }
    assert!(actions >= s.characters.len(), "{actions} actions compared");
}

/// A model that grows while its characters play: the characters it held
/// go on from where they were (their twins' state), and the new ones
/// start at rest.
#[test]
fn a_model_grown_mid_run_keeps_its_characters_state() {
    let Some(h) = common::gpu("gpu_players growth") else {
        return;
    };
    let (device, queue) = (&h.device, &h.queue);
    let mut s = subscribed_scene(&h, 8);
    for f in 0..40 {
        for i in 0..s.characters.len() {
            commands(&mut s, f, i);
        }
        frame(&h, &mut s, 1.0 / 60.0);
        if f == 20 {
            s.crowd.grow_model(device, s.played, 20).unwrap();
            for _ in 0..6 {
                let c = s.crowd.add_character(s.played).unwrap();
                s.players.subscribe(device, queue, &s.crowd, c).unwrap();
                s.characters.push(c);
            }
        }
        let got = s
            .players
            .read_back(device, queue, &s.crowd, &s.characters)
            .unwrap();
        for (c, g) in s.characters.iter().zip(&got) {
            let twin = s.players.subscribed(*c).unwrap();
            same_player(g, twin, &format!("frame {f}, character {}", c.slot()));
        }
    }
    // The poses of every character, the old and the new: those of the
    // CPU twin's mixer on the twins' tables.
    poses_are_the_twins(&h, &s);
}

/// A character removed and another added in its slot in one frame: the
/// slot is reset once, and the frame's count of commands is of those
/// written, so the GPU applies nothing left in its buffer from an earlier
/// frame (here a `Seek` of character 0, which would move its playhead
/// back) and every character keeps its twin's state.
#[test]
fn a_slot_emptied_and_taken_in_one_frame_disturbs_no_other_character() {
    let Some(h) = common::gpu("gpu_players slot taken again") else {
        return;
    };
    let (device, queue) = (&h.device, &h.queue);
    let mut s = subscribed_scene(&h, 8);
    let (first, seek) = (s.characters[0], s.clips.clip_at(1).unwrap());
    s.players.command(first, Command::Play(seek)).unwrap();
    s.players.command(first, Command::Seek(0.4)).unwrap();
    frame(&h, &mut s, 1.0 / 60.0);
    // The next frame: no command, one slot emptied and taken again.
    let gone = s.characters[5];
    s.crowd.remove_character(gone).unwrap();
    let again = s.crowd.add_character(s.played).unwrap();
    assert_eq!(
        again.slot(),
        gone.slot(),
        "the new character takes the slot"
    );
    s.players.subscribe(device, queue, &s.crowd, again).unwrap();
    s.characters[5] = again;
    for f in 0..4 {
        frame(&h, &mut s, 1.0 / 60.0);
        let got = s
            .players
            .read_back(device, queue, &s.crowd, &s.characters)
            .unwrap();
        for (c, g) in s.characters.iter().zip(&got) {
            let twin = s.players.subscribed(*c).unwrap();
            same_player(g, twin, &format!("frame {f}, character {}", c.slot()));
        }
    }
    let time = s
        .players
        .subscribed(first)
        .unwrap()
        .actions()
        .next()
        .unwrap()
        .time;
    assert!(time > 0.45, "character 0 plays on from 0.4: {time}");
}
