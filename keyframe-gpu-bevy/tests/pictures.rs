//! The plugin's pictures against bevy_animation's, on whatever adapter
//! Bevy picks (lavapipe on a machine without a GPU; CI runs them under
//! `xvfb-run` with `WGPU_BACKEND=vulkan`). The files are built in code.

mod common;

use bevy::prelude::Vec3;
use common::gltf::{column, leaning_column, temp_dir, Column};
use common::{
    differing, held, painted, render, render_chunked, render_one, save, skip, Animate, Command,
    Picture, Placed, HEIGHT, WIDTH,
};

/// A pixel differs when a channel differs by more than this (of 255): the
/// GPU and bevy_animation's CPU arithmetic differ in the last bits of a
/// matrix, which moves an edge pixel's coverage, not a colour.
const TOLERANCE: u8 = 12;
/// At most this share of the pixels may differ between two pictures of
/// the same pose (edges a rounding apart).
const SAME_SHARE: f64 = 0.004;
/// At least this share differs between two poses that must differ.
const MOVED_SHARE: f64 = 0.005;

const PIXELS: f64 = (WIDTH * HEIGHT) as f64;

fn eye() -> (Vec3, Vec3) {
    (Vec3::new(0.0, 2.0, 7.0), Vec3::new(0.0, 1.6, 0.0))
}

fn red() -> Column {
    Column {
        color: [0.8, 0.1, 0.1, 1.0],
        joints: 3,
        segments: 6,
        walker: false,
    }
}

fn is_red(c: [u8; 3]) -> bool {
    i32::from(c[0]) - i32::from(c[1].max(c[2])) > 60
}

fn is_blue(c: [u8; 3]) -> bool {
    i32::from(c[2]) - i32::from(c[0].max(c[1])) > 60
}

/// One scene at the origin, drawn after `frames` frames of `step`
/// seconds.
fn one(file: &std::path::Path, animate: Animate, frames: u32, step: f64) -> Option<Picture> {
    render_one(file, animate, eye(), frames, step)
}

fn share(n: usize) -> f64 {
    n as f64 / PIXELS
}

/// `clip` of `file` at 0.5 s drawn by the plugin and by bevy_animation,
/// and at 0 s by the plugin, each after 5 frames, saved in `dir` (`None`:
/// no adapter).
fn three_pictures(
    file: &std::path::Path,
    clip: &str,
    dir: &std::path::Path,
) -> Option<(Picture, Picture, Picture)> {
    let bevy = Animate::Bevy {
        clip: clip.into(),
        time: 0.5,
    };
    let gpu = one(file, held(clip, 0.5), 5, 1.0 / 60.0)?;
    let cpu = one(file, bevy, 5, 1.0 / 60.0)?;
    let rest = one(file, held(clip, 0.0), 5, 1.0 / 60.0)?;
    save(&gpu, &dir.join("gpu.png"));
    save(&cpu, &dir.join("bevy.png"));
    save(&rest, &dir.join("rest.png"));
    Some((gpu, cpu, rest))
}

#[test]
fn the_plugin_draws_the_pose_bevy_animation_draws() {
    let dir = temp_dir("same_pose");
    let file = column(&dir, "red", &red());
    let Some((gpu, cpu, rest)) = three_pictures(&file, "bend", &dir) else {
        return skip();
    };
    // The column is in the picture, and bending moves it.
    assert!(
        share(painted(&gpu, is_red)) > 0.01,
        "the column is not drawn: {}",
        dir.display()
    );
    let moved = differing(&gpu, &rest, TOLERANCE);
    assert!(
        share(moved) > MOVED_SHARE,
        "bent and straight look alike: {moved} pixels"
    );
    let diff = differing(&gpu, &cpu, TOLERANCE);
    eprintln!(
        "plugin vs bevy_animation: {diff} of {PIXELS} pixels differ; bent vs straight: {moved}"
    );
    assert!(
        share(diff) <= SAME_SHARE,
        "{diff} pixels differ between the plugin and bevy_animation ({})",
        dir.display()
    );
}

#[test]
fn the_plugin_weights_morph_targets_as_bevy_animation_does() {
    let dir = temp_dir("morph");
    let file = leaning_column(&dir, "red", &red());
    // Halfway through `lean`: the target at weight 0.5, the column's top
    // a quarter of a unit to the right of its rest place.
    let Some((gpu, cpu, rest)) = three_pictures(&file, "lean", &dir) else {
        return skip();
    };
    assert!(
        share(painted(&gpu, is_red)) > 0.01,
        "the column is not drawn: {}",
        dir.display()
    );
    // The leant column covers more pixels right of its rest outline.
    let right_of_rest = |p: &Picture| {
        p.pixels
            .chunks(4)
            .enumerate()
            .filter(|(i, c)| (*i as u32 % WIDTH) >= WIDTH / 2 && is_red([c[0], c[1], c[2]]))
            .count()
    };
    assert!(
        right_of_rest(&gpu) > right_of_rest(&rest),
        "the leant column reaches no farther right than the straight one"
    );
    let moved = differing(&gpu, &rest, TOLERANCE);
    assert!(
        share(moved) > MOVED_SHARE,
        "leant and straight look alike: {moved} pixels"
    );
    let diff = differing(&gpu, &cpu, TOLERANCE);
    eprintln!(
        "morph, plugin vs bevy_animation: {diff} of {PIXELS} pixels differ; leant vs straight: {moved}"
    );
    assert!(
        share(diff) <= SAME_SHARE,
        "{diff} pixels differ between the plugin and bevy_animation ({})",
        dir.display()
    );
}

#[test]
fn a_crossfade_ends_on_the_new_clip_and_blends_on_the_way() {
    let dir = temp_dir("crossfade");
    let file = column(&dir, "red", &red());
    let step = 0.05;
    let frames = 16; // 0.8 s
    let run = |commands: Vec<Command>| one(&file, Animate::Gpu(commands), frames, step);
    // bend fades into sway over 0.2 s, long before the shot: the picture
    // is sway's at the same playhead.
    let Some(faded) = run(vec![
        Command::Play("bend".into()),
        Command::Crossfade("sway".into(), 0.2),
    ]) else {
        return skip();
    };
    let Some(sway) = run(vec![Command::Play("sway".into())]) else {
        return skip();
    };
    let Some(bend) = run(vec![Command::Play("bend".into())]) else {
        return skip();
    };
    // Halfway through a fade of 1.6 s: neither clip alone.
    let Some(half) = run(vec![
        Command::Play("bend".into()),
        Command::Crossfade("sway".into(), 1.6),
    ]) else {
        return skip();
    };
    for (name, p) in [
        ("faded", &faded),
        ("sway", &sway),
        ("bend", &bend),
        ("half", &half),
    ] {
        save(p, &dir.join(format!("{name}.png")));
    }
    let d = differing(&faded, &sway, TOLERANCE);
    assert!(
        share(d) <= SAME_SHARE,
        "after the fade: {d} pixels differ from sway"
    );
    let d = differing(&sway, &bend, TOLERANCE);
    assert!(
        share(d) > MOVED_SHARE,
        "sway and bend look alike: {d} pixels"
    );
    for (name, other) in [("sway", &sway), ("bend", &bend)] {
        let d = differing(&half, other, TOLERANCE);
        assert!(
            share(d) > MOVED_SHARE / 4.0,
            "halfway looks like {name} alone: {d} pixels"
        );
    }
}

#[test]
fn two_models_are_drawn_as_bevy_animation_draws_them() {
    let dir = temp_dir("two_models");
    let red_file = column(&dir, "red", &red());
    let blue_file = column(
        &dir,
        "blue",
        &Column {
            color: [0.1, 0.2, 0.9, 1.0],
            joints: 4,
            segments: 4,
            walker: false,
        },
    );
    let (eye, at) = eye();
    let scenes = |gpu: bool| {
        let animate = |clip: &str, time: f32| {
            if gpu {
                held(clip, f64::from(time))
            } else {
                Animate::Bevy {
                    clip: clip.into(),
                    time,
                }
            }
        };
        vec![
            Placed {
                file: red_file.clone(),
                at: Vec3::new(-1.2, 0.0, 0.0),
                animate: animate("bend", 0.5),
            },
            Placed {
                file: blue_file.clone(),
                at: Vec3::new(1.2, 0.0, 0.0),
                animate: animate("sway", 0.7),
            },
        ]
    };
    let Some(gpu) = render(scenes(true), eye, at, 5, 1.0 / 60.0) else {
        return skip();
    };
    let Some(cpu) = render(scenes(false), eye, at, 5, 1.0 / 60.0) else {
        return skip();
    };
    save(&gpu, &dir.join("gpu.png"));
    save(&cpu, &dir.join("bevy.png"));
    assert!(
        share(painted(&gpu, is_red)) > 0.005,
        "the red column is missing"
    );
    assert!(
        share(painted(&gpu, is_blue)) > 0.005,
        "the blue column is missing"
    );
    let d = differing(&gpu, &cpu, TOLERANCE);
    eprintln!("two models, plugin vs bevy_animation: {d} of {PIXELS} pixels differ");
    assert!(
        share(d) <= SAME_SHARE,
        "{d} pixels differ ({})",
        dir.display()
    );
}

#[test]
fn clips_of_another_file_bind_by_name() {
    let dir = temp_dir("other_file");
    let file = column(&dir, "red", &red());
    // A file of another rig (one joint more) whose `sway` is renamed
    // `wave`: its tracks on `j1` and `j2` bind to the red column's joints
    // of those names (`j3` has none there), and turn them as red's own
    // `sway` does.
    let other = column(
        &dir,
        "clips",
        &Column {
            color: [0.1, 0.2, 0.9, 1.0],
            joints: 4,
            segments: 1,
            walker: false,
        },
    );
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&other).expect("the clips file")).expect("json");
    for a in json["animations"].as_array_mut().expect("animations") {
        if a["name"] == "sway" {
            a["name"] = "wave".into();
        }
    }
    std::fs::write(&other, serde_json::to_vec(&json).expect("json")).expect("write");
    let (eye, at) = eye();
    let with_other = |clip: &str| {
        render(
            vec![Placed {
                file: file.clone(),
                at: Vec3::ZERO,
                animate: Animate::Gpu(vec![
                    Command::ClipsFrom(other.clone()),
                    Command::Play(clip.into()),
                    Command::Seek(0.7),
                    Command::Paused(true),
                ]),
            }],
            eye,
            at,
            5,
            1.0 / 60.0,
        )
    };
    let Some(wave) = with_other("wave") else {
        return skip();
    };
    let Some(sway) = with_other("sway") else {
        return skip();
    };
    let Some(bend) = with_other("bend") else {
        return skip();
    };
    save(&wave, &dir.join("wave.png"));
    save(&sway, &dir.join("sway.png"));
    let d = differing(&wave, &sway, TOLERANCE);
    assert!(
        share(d) <= SAME_SHARE,
        "the other file's clip: {d} pixels differ"
    );
    let moved = differing(&wave, &bend, TOLERANCE);
    assert!(
        share(moved) > MOVED_SHARE,
        "wave looks like bend: {moved} pixels"
    );
}

/// Three characters of one model in chunks of two (the plugin's
/// `chunk_limit`): the third is in the second chunk, with buffers and a
/// material of its own, and is drawn in its pose as bevy_animation draws
/// it.
#[test]
fn characters_past_the_first_chunk_are_drawn_as_bevy_animation_draws_them() {
    let dir = temp_dir("chunks");
    let file = column(&dir, "red", &red());
    let (eye, at) = eye();
    let poses = [(-1.5, "bend", 0.5), (0.0, "sway", 0.7), (1.5, "bend", 0.25)];
    let scenes = |gpu: bool| {
        poses
            .iter()
            .map(|&(x, clip, time)| Placed {
                file: file.clone(),
                at: Vec3::new(x, 0.0, 0.0),
                animate: if gpu {
                    held(clip, f64::from(time))
                } else {
                    Animate::Bevy {
                        clip: clip.into(),
                        time,
                    }
                },
            })
            .collect::<Vec<_>>()
    };
    let Some(gpu) = render_chunked(scenes(true), eye, at, 2) else {
        return skip();
    };
    let Some(cpu) = render(scenes(false), eye, at, 5, 1.0 / 60.0) else {
        return skip();
    };
    save(&gpu, &dir.join("gpu.png"));
    save(&cpu, &dir.join("bevy.png"));
    // Each column in its third of the picture.
    for third in 0..3 {
        let red_in_third = gpu
            .pixels
            .chunks(4)
            .enumerate()
            .filter(|(i, c)| (*i as u32 % WIDTH) * 3 / WIDTH == third && is_red([c[0], c[1], c[2]]))
            .count();
        assert!(
            share(red_in_third) > 0.003,
            "no column in third {third} of the picture ({})",
            dir.display()
        );
    }
    let d = differing(&gpu, &cpu, TOLERANCE);
    eprintln!("three characters in chunks of two, plugin vs bevy_animation: {d} of {PIXELS} pixels differ");
    assert!(
        share(d) <= SAME_SHARE,
        "{d} pixels differ ({})",
        dir.display()
    );
}

/// Gives every ready player `bend` held at 0.5 s, once, two frames after
/// the players are set up.
fn command_later(
    mut players: bevy::prelude::Query<&mut keyframe_gpu_bevy::GpuAnimationPlayer>,
    mut frames: bevy::prelude::Local<u32>,
) {
    if !players.iter().all(|p| p.is_ready()) {
        return;
    }
    *frames += 1;
    if *frames == 2 {
        for mut p in &mut players {
            p.play("bend").seek(0.5).set_paused(true);
        }
    }
}

/// A command given to a character standing at rest, frames after its
/// scene is set up, reaches the GPU (only the changed player's commands
/// go to the render world): the pose is the one bevy_animation draws.
#[test]
fn a_command_given_later_reaches_the_gpu() {
    let dir = temp_dir("command_later");
    let file = column(&dir, "red", &red());
    let scene = Placed {
        file: file.clone(),
        at: Vec3::ZERO,
        animate: Animate::Gpu(Vec::new()),
    };
    let Some(gpu) = common::render_with(vec![scene], eye().0, eye().1, 6, 1.0 / 60.0, |app| {
        app.add_systems(bevy::prelude::Update, command_later);
    }) else {
        return skip();
    };
    let bevy = Animate::Bevy {
        clip: "bend".into(),
        time: 0.5,
    };
    let Some(cpu) = one(&file, bevy, 6, 1.0 / 60.0) else {
        return skip();
    };
    let Some(rest) = one(&file, Animate::Gpu(Vec::new()), 6, 1.0 / 60.0) else {
        return skip();
    };
    save(&gpu, &dir.join("gpu.png"));
    save(&cpu, &dir.join("bevy.png"));
    save(&rest, &dir.join("rest.png"));
    let moved = differing(&gpu, &rest, TOLERANCE);
    assert!(
        share(moved) > MOVED_SHARE,
        "the command did not move the column: {moved} pixels"
    );
    let diff = differing(&gpu, &cpu, TOLERANCE);
    assert!(
        share(diff) <= SAME_SHARE,
        "{diff} pixels differ between the plugin and bevy_animation ({})",
        dir.display()
    );
}
