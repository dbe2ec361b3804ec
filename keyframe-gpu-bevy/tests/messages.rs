//! Root motion and marker events arrive as messages in the frame they
//! happen, from the playback layer; an attachment follows its joint from
//! the CPU twin (no readback either way).

mod common;

use std::sync::{Arc, Mutex};

use bevy::prelude::*;
use common::gltf::{column, temp_dir, Column, STEP_TIME, WALK_DISTANCE};
use common::{render_with, Animate, Command, Placed};
use keyframe_gpu_bevy::{GpuAnimationEvent, GpuRootMotion};

/// One frame: the root motion along Z, the names of the events.
type Frame = (f32, Vec<String>);

#[derive(Resource, Clone, Default)]
struct Seen(Arc<Mutex<Vec<Frame>>>);

/// Per frame of a player: its root motion along Z and its events.
fn collect(
    mut motion: MessageReader<GpuRootMotion>,
    mut events: MessageReader<GpuAnimationEvent>,
    seen: Res<Seen>,
) {
    let moved: f32 = motion.read().map(|m| m.translation.z).sum();
    let names: Vec<String> = events.read().map(|e| e.name.to_string()).collect();
    let mut seen = seen.0.lock().unwrap_or_else(|e| e.into_inner());
    seen.push((moved, names));
}

#[test]
fn root_motion_and_markers_are_messages_of_the_frame() {
    let dir = temp_dir("messages");
    let file = column(
        &dir,
        "walker",
        &Column {
            color: [0.8, 0.1, 0.1, 1.0],
            joints: 2,
            segments: 2,
            walker: true,
        },
    );
    let seen = Seen::default();
    let step = 0.1;
    let frames = 25;
    let seen_in_app = seen.clone();
    let picture = render_with(
        vec![Placed {
            file,
            at: Vec3::ZERO,
            animate: Animate::Gpu(vec![
                // The root motion of the node `armature` is reported.
                Command::RootMotion("armature".into()),
                Command::Play("walk".into()),
            ]),
        }],
        Vec3::new(0.0, 2.0, 7.0),
        Vec3::ZERO,
        frames,
        step,
        move |app| {
            app.insert_resource(seen_in_app).add_systems(
                PostUpdate,
                collect.after(keyframe_gpu_bevy::KeyframeGpuSystems::Playback),
            );
        },
    );
    if picture.is_none() {
        common::skip();
        return;
    }
    let seen = seen.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
    // The frames where the player ran: each moves the root by
    // WALK_DISTANCE per second of playback, across loop ends too.
    let running: Vec<&Frame> = seen.iter().filter(|(z, _)| *z != 0.0).collect();
    assert!(
        running.len() >= 10,
        "too few frames with root motion: {seen:?}"
    );
    for (z, _) in &running {
        let expected = WALK_DISTANCE * step as f32;
        assert!(
            (z - expected).abs() < 1e-4,
            "a frame moved {z}, expected {expected}"
        );
    }
    // One `step` per second of playback, in the frame that crosses it.
    let steps: Vec<usize> = seen
        .iter()
        .enumerate()
        .filter(|(_, (_, names))| names.iter().any(|n| n == "step"))
        .map(|(i, _)| i)
        .collect();
    let first_running = seen.iter().position(|(z, _)| *z != 0.0).unwrap_or(0);
    let playing_frames = seen.len() - first_running;
    let expected = ((playing_frames as f32 * step as f32 - STEP_TIME) / 1.0).floor() as usize + 1;
    assert!(
        steps.len() == expected || steps.len() + 1 == expected,
        "{} step events over {playing_frames} frames of {step} s, expected about {expected}",
        steps.len()
    );
    // Ten frames of 0.1 s apart (one either way where a sum of tenths
    // lands a rounding short of the marker).
    for pair in steps.windows(2) {
        let apart = pair[1] - pair[0];
        assert!(
            (9..=11).contains(&apart),
            "steps one second apart: {steps:?}"
        );
    }
}

#[derive(Resource, Clone, Default)]
struct HandAt(Arc<Mutex<Option<Vec3>>>);

#[derive(Component)]
struct Hand;

fn attach_once(
    mut commands: Commands,
    players: Query<Entity, With<keyframe_gpu_bevy::GpuAnimationPlayer>>,
    hands: Query<(), With<Hand>>,
) {
    if hands.is_empty() {
        for p in &players {
            commands.spawn((
                Hand,
                keyframe_gpu_bevy::GpuAttachment::new("j2"),
                Transform::default(),
                ChildOf(p),
            ));
        }
    }
}

fn read_hand(hands: Query<&Transform, With<Hand>>, placed: Res<HandAt>) {
    if let Some(t) = hands.iter().next() {
        *placed.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(t.translation);
    }
}

/// An attachment at joint `j2` of the column held at `bend`'s peak: both
/// joints above the first turn 0.5 rad about +Z, so `j2` (one unit above
/// `j1`, itself one unit above the origin) is at
/// `(-sin 0.5, 1 + cos 0.5, 0)` in the scene.
#[test]
fn an_attachment_follows_its_joint_from_the_cpu_twin() {
    let dir = temp_dir("attachment");
    let file = column(&dir, "red", &Column::red());
    let placed = HandAt::default();
    let in_app = placed.clone();
    let picture = render_with(
        vec![Placed {
            file,
            at: Vec3::ZERO,
            animate: Animate::Gpu(vec![
                Command::Play("bend".into()),
                Command::Seek(0.5),
                Command::Paused(true),
            ]),
        }],
        Vec3::new(0.0, 2.0, 7.0),
        Vec3::ZERO,
        5,
        1.0 / 60.0,
        move |app| {
            app.insert_resource(in_app)
                .add_systems(Update, attach_once)
                .add_systems(
                    PostUpdate,
                    read_hand.after(keyframe_gpu_bevy::KeyframeGpuSystems::Playback),
                );
        },
    );
    if picture.is_none() {
        common::skip();
        return;
    }
    let at = placed
        .0
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .expect("the attachment was placed");
    let expected = Vec3::new(-(0.5f32.sin()), 1.0 + 0.5f32.cos(), 0.0);
    assert!(
        (at - expected).length() < 1e-4,
        "the attachment is at {at}, the joint at {expected}"
    );
}

/// Frames of the walker playing `walk` for 25 frames of 0.1 s (two
/// `step` markers at least), with `extra` given to its player first.
fn walker_frames(name: &str, extra: Vec<Command>) -> Option<Vec<Frame>> {
    let dir = temp_dir(name);
    let file = column(
        &dir,
        "walker",
        &Column {
            color: [0.8, 0.1, 0.1, 1.0],
            joints: 2,
            segments: 2,
            walker: true,
        },
    );
    let seen = Seen::default();
    let seen_in_app = seen.clone();
    let mut commands = extra;
    commands.push(Command::Play("walk".into()));
    render_with(
        vec![Placed {
            file,
            at: Vec3::ZERO,
            animate: Animate::Gpu(commands),
        }],
        Vec3::new(0.0, 2.0, 7.0),
        Vec3::ZERO,
        25,
        0.1,
        move |app| {
            app.insert_resource(seen_in_app).add_systems(
                PostUpdate,
                collect.after(keyframe_gpu_bevy::KeyframeGpuSystems::Playback),
            );
        },
    )?;
    let frames = seen.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Some(frames)
}

/// Markers come from the CPU twin: a character made `with_cpu_twin`
/// reports them (and no root motion, which it was not asked for); one
/// played on the GPU alone reports none.
#[test]
fn markers_are_reported_for_characters_with_a_cpu_twin_only() {
    let Some(twin) = walker_frames("markers_twin", vec![Command::CpuTwin]) else {
        common::skip();
        return;
    };
    let steps = |frames: &[Frame]| {
        frames
            .iter()
            .flat_map(|(_, names)| names)
            .filter(|n| *n == "step")
            .count()
    };
    assert!(steps(&twin) >= 2, "the twin's markers: {twin:?}");
    assert!(
        twin.iter().all(|(z, _)| *z == 0.0),
        "root motion without with_root_motion: {twin:?}"
    );
    let Some(alone) = walker_frames("markers_gpu_alone", Vec::new()) else {
        common::skip();
        return;
    };
    assert!(alone.len() >= 25, "the app ran {} frames", alone.len());
    assert_eq!(steps(&alone), 0, "markers without a twin: {alone:?}");
}
