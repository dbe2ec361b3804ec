//! The crowd's buffers are made again while characters are drawn: when
//! a character arrives past a model's capacity, or the first character
//! of another model. Every character already there stays drawn and
//! animated through it, and the new ones are drawn from the frame they
//! are set up.

mod common;

use std::sync::{Arc, Mutex};

use bevy::camera::RenderTarget;
use bevy::gltf::GltfAssetLabel;
use bevy::prelude::*;
use bevy::world_serialization::WorldAssetRoot;
use common::gltf::{column, temp_dir, Column};
use common::{
    differing, held, painted, render_with, save, shoot, skip, Animate, Command, Picture, Placed,
    HEIGHT, WIDTH,
};
use keyframe_gpu_bevy::GpuAnimationPlayer;

/// Characters spawned after the first: with it, one past the 64 a
/// model's buffers are first made for, so that they grow.
const MORE: usize = 64;
/// Ready frames of the first character before the others are spawned.
const SPAWN_AT: u32 = 3;
/// Frames shot one by one from the frame the others are spawned.
const SHOTS: u32 = 12;
/// At most this many pixels of a frame with every character set up may
/// differ from the last frame (by more than 12 of 255 in a channel): a
/// few edge pixels. One column seen from above covers about 140.
const SAME_PIXELS: usize = 20;
/// The first column alone, seen from above, paints about 290 red pixels:
/// a frame with fewer lacks it.
const FIRST_RED: usize = 200;

fn is_red(c: [u8; 3]) -> bool {
    i32::from(c[0]) - i32::from(c[1].max(c[2])) > 60
}

fn is_blue(c: [u8; 3]) -> bool {
    i32::from(c[2]) - i32::from(c[0].max(c[1])) > 60
}

/// A character spawned by [`spawn_later_and_shoot`]: the file's name in
/// the test's folder and where it stands. It holds `bend` at 0.5 s.
struct Later {
    file: String,
    at: Vec3,
}

/// Per frame shot: (the frame, characters set up in it, the picture).
type Shots = Arc<Mutex<Vec<(u32, usize, Picture)>>>;

/// Once the first character is set up, spawns the `later` characters,
/// then shoots the next [`SHOTS`] frames one by one. Runs in `Last`, so
/// that it counts the characters set up in the frame it shoots.
fn spawn_later_and_shoot(
    shots: Shots,
    later: Vec<Later>,
) -> impl FnMut(Commands, Res<AssetServer>, Query<&GpuAnimationPlayer>, Query<&RenderTarget>, Local<u32>)
{
    move |mut commands, assets, players, targets, mut frames| {
        let ready = players.iter().filter(|p| p.is_ready()).count();
        if *frames == 0 && ready == 0 {
            return;
        }
        *frames += 1;
        if *frames == SPAWN_AT {
            for l in &later {
                let scene = assets.load(GltfAssetLabel::Scene(0).from_asset(l.file.clone()));
                let mut player = GpuAnimationPlayer::new();
                player.play("bend").seek(0.5).set_paused(true);
                commands.spawn((
                    WorldAssetRoot(scene),
                    Transform::from_translation(l.at),
                    player,
                ));
            }
        }
        let Some(shot) = frames.checked_sub(SPAWN_AT).filter(|&s| s < SHOTS) else {
            return;
        };
        let shots = shots.clone();
        shoot(&mut commands, &targets, move |picture| {
            let mut shots = shots.lock().unwrap_or_else(|e| e.into_inner());
            shots.push((shot, ready, picture));
        });
    }
}

#[test]
fn characters_are_drawn_in_every_frame_while_the_buffers_grow() {
    let dir = temp_dir("growth");
    let file = column(&dir, "red", &Column::red());
    let scenes = vec![Placed {
        file: file.clone(),
        at: Vec3::ZERO,
        animate: held("bend", 0.5),
    }];
    // From above: every column of the grid is in the picture, none
    // behind another.
    let (eye, at) = (Vec3::new(0.0, 22.0, 8.0), Vec3::new(0.0, 0.0, -7.0));
    let shots = Shots::default();
    // A grid beside the first, each held at the first's pose.
    let later = (0..MORE)
        .map(|i| {
            let (row, column) = ((i / 8) as f32, (i % 8) as f32);
            Later {
                file: file_name(&file),
                at: Vec3::new(2.0 * column - 7.0, 0.0, -2.0 - 2.0 * row),
            }
        })
        .collect();
    let system = spawn_later_and_shoot(shots.clone(), later);
    // The harness's own shot comes once every character is set up, after
    // the frames shot here: every character in its held pose.
    let Some(last) = render_with(scenes, eye, at, SHOTS + 5, 1.0 / 60.0, |app| {
        app.add_systems(Last, system);
    }) else {
        return skip();
    };
    save(&last, &dir.join("last.png"));
    let pixels = f64::from(WIDTH * HEIGHT);
    let drawn = |p: &Picture| painted(p, is_red) as f64 / pixels;
    assert!(drawn(&last) > 0.01, "the columns are not drawn at the end");
    let shots = shots.lock().unwrap_or_else(|e| e.into_inner());
    for (frame, ready, picture) in shots.iter() {
        save(picture, &dir.join(format!("frame{frame}_{ready}.png")));
    }
    let all = MORE + 1;
    let report: Vec<String> = shots
        .iter()
        .map(|(frame, ready, p)| {
            let (d, red) = (differing(p, &last, 12), painted(p, is_red));
            format!("frame {frame}: {ready} set up, {red} red pixels, {d} unlike the end")
        })
        .collect();
    eprintln!("{}", report.join("\n"));
    assert!(
        shots.len() as u32 >= SHOTS - 2,
        "only {} of {SHOTS} frames were shot",
        shots.len()
    );
    // The first column is drawn while the others come and the buffers
    // grow ...
    let missing: Vec<u32> = shots
        .iter()
        .filter(|(_, _, p)| painted(p, is_red) < FIRST_RED)
        .map(|(frame, _, _)| *frame)
        .collect();
    assert!(
        missing.is_empty(),
        "the first column is not drawn in frames {missing:?} ({})",
        dir.display()
    );
    // ... and from the frame every character is set up, every one is
    // drawn in its pose: the picture is the last one.
    let first_all = shots.iter().position(|(_, ready, _)| *ready == all);
    assert!(
        first_all.is_some(),
        "no frame shot had all {all} characters set up:\n{}",
        report.join("\n")
    );
    for (frame, _, picture) in shots.iter().filter(|(_, ready, _)| *ready == all) {
        let d = differing(picture, &last, 12);
        assert!(
            d <= SAME_PIXELS,
            "frame {frame}, every character set up, differs from the end by {d} pixels ({})",
            dir.display()
        );
    }
}

fn file_name(path: &std::path::Path) -> String {
    path.file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[test]
fn a_model_keeps_moving_when_another_model_comes() {
    let dir = temp_dir("another_model");
    let red = column(&dir, "red", &Column::red());
    let blue = column(
        &dir,
        "blue",
        &Column {
            color: [0.1, 0.1, 0.8, 1.0],
            ..Column::red()
        },
    );
    // The red column bends on and on: its pose differs from frame to
    // frame.
    let scenes = vec![Placed {
        file: red.clone(),
        at: Vec3::new(-1.5, 0.0, 0.0),
        animate: Animate::Gpu(vec![Command::Play("bend".into())]),
    }];
    let shots = Shots::default();
    let later = vec![Later {
        file: file_name(&blue),
        at: Vec3::new(1.5, 0.0, 0.0),
    }];
    let system = spawn_later_and_shoot(shots.clone(), later);
    let (eye, at) = (Vec3::new(0.0, 2.0, 7.0), Vec3::new(0.0, 1.6, 0.0));
    let Some(last) = render_with(scenes, eye, at, SHOTS + 5, 1.0 / 60.0, |app| {
        app.add_systems(Last, system);
    }) else {
        return skip();
    };
    save(&last, &dir.join("last.png"));
    let shots = shots.lock().unwrap_or_else(|e| e.into_inner());
    for (frame, ready, picture) in shots.iter() {
        save(picture, &dir.join(format!("frame{frame}_{ready}.png")));
    }
    let both: Vec<&(u32, usize, Picture)> = shots.iter().filter(|(_, r, _)| *r == 2).collect();
    assert!(
        both.len() >= 6,
        "only {} frames shot with both columns set up",
        both.len()
    );
    for (frame, ready, p) in shots.iter() {
        let (red, blue) = (painted(p, is_red), painted(p, is_blue));
        eprintln!("frame {frame}: {ready} set up, {red} red pixels, {blue} blue");
        assert!(
            red > 500,
            "frame {frame}: the red column is not drawn ({})",
            dir.display()
        );
        assert!(
            *ready < 2 || blue > 500,
            "frame {frame}: the blue column is set up and not drawn ({})",
            dir.display()
        );
    }
    // The blue column is held: what differs between two frames is the
    // red column's pose, a quarter of its bend apart at least.
    let (first, _, a) = both[0];
    let (then, _, b) = both[both.len() - 1];
    let moved = differing(a, b, 12);
    eprintln!("frames {first} and {then}, both models set up: {moved} pixels differ");
    assert!(
        moved > 300,
        "the red column stood still from frame {first} to {then} once the blue one came: \
         {moved} pixels differ ({})",
        dir.display()
    );
}

/// A character that plays and crossfades keeps its phase while its
/// model's buffers grow (its playback state lives on the GPU, and the
/// buffers grow in place): its frames after the growth are those of the
/// same run without one.
#[test]
fn a_playing_character_keeps_its_phase_when_the_buffers_grow() {
    let dir = temp_dir("growth_phase");
    let file = column(&dir, "red", &Column::red());
    let (eye, at) = (Vec3::new(0.0, 2.0, 7.0), Vec3::new(0.0, 1.6, 0.0));
    // Bending, then half a second into a crossfade to swaying when the
    // others come: the growth falls inside the crossfade.
    let animate = || {
        Animate::Gpu(vec![
            Command::Play("bend".into()),
            Command::Crossfade("sway".into(), 1.0),
        ])
    };
    let run = |later: Vec<Later>| {
        let shots = Shots::default();
        let system = spawn_later_and_shoot(shots.clone(), later);
        let scenes = vec![Placed {
            file: file.clone(),
            at: Vec3::ZERO,
            animate: animate(),
        }];
        render_with(scenes, eye, at, SHOTS + 5, 1.0 / 60.0, |app| {
            app.add_systems(Last, system);
        })?;
        let shots = shots.lock().unwrap_or_else(|e| e.into_inner()).clone();
        Some(shots)
    };
    // The others stand behind the camera: the pictures show the first
    // alone.
    let later = (0..MORE)
        .map(|i| Later {
            file: file_name(&file),
            at: Vec3::new(i as f32 - 32.0, 0.0, 40.0),
        })
        .collect();
    let Some(grown) = run(later) else {
        return skip();
    };
    let Some(alone) = run(Vec::new()) else {
        return skip();
    };
    let Some((f_grown, ready, a)) = grown.iter().max_by_key(|s| s.0).cloned() else {
        panic!("no frame shot");
    };
    assert_eq!(ready, MORE + 1, "every character set up by the last shot");
    save(&a, &dir.join("grown.png"));
    // The frame of the run without the others that the grown run's last
    // frame looks like most: its own, when the phase is kept.
    let mut apart: Vec<(u32, usize)> = alone
        .iter()
        .map(|(frame, _, p)| (*frame, differing(&a, p, 12)))
        .collect();
    apart.sort_by_key(|&(frame, _)| frame);
    eprintln!("grown frame {f_grown} against the frames alone: {apart:?}");
    let same = apart.iter().find(|(frame, _)| *frame == f_grown);
    let Some(&(_, d)) = same else {
        panic!("frame {f_grown} was not shot alone: {apart:?}");
    };
    assert!(
        d <= SAME_PIXELS,
        "the character's pose after the growth is not the one without it: {d} pixels ({})",
        dir.display()
    );
    // It moves: the first frame shot alone differs from it.
    let moved = apart.first().map_or(0, |&(_, d)| d);
    assert!(moved > 300, "the column stood still: {moved} pixels");
}

/// Pauses every player set up, once, in the `at`th frame that starts
/// with one set up (before the others come at [`SPAWN_AT`]).
fn pause_at(at: u32) -> impl FnMut(Query<&mut GpuAnimationPlayer>, Local<u32>) {
    move |mut players, mut frames| {
        if !players.iter().any(|p| p.is_ready()) {
            return;
        }
        *frames += 1;
        if *frames == at {
            for mut p in &mut players {
                p.set_paused(true);
            }
        }
    }
}

/// A character paused mid-crossfade (its actions, weights, fades and
/// playheads on the GPU) keeps that state while its model's buffers
/// grow: its picture after the growth is that of the same run without
/// one, and it is not the rest pose.
#[test]
fn a_character_paused_mid_crossfade_keeps_its_state_when_the_buffers_grow() {
    let dir = temp_dir("growth_state");
    let file = column(&dir, "red", &Column::red());
    let (eye, at) = (Vec3::new(0.0, 2.0, 7.0), Vec3::new(0.0, 1.6, 0.0));
    let run = |later: Vec<Later>| {
        let shots = Shots::default();
        let system = spawn_later_and_shoot(shots.clone(), later);
        let scenes = vec![Placed {
            file: file.clone(),
            at: Vec3::ZERO,
            animate: Animate::Gpu(vec![
                Command::Play("bend".into()),
                Command::Seek(0.5),
                Command::Crossfade("sway".into(), 1.0),
            ]),
        }];
        render_with(scenes, eye, at, SHOTS + 5, 1.0 / 60.0, |app| {
            app.add_systems(Last, system)
                .add_systems(Update, pause_at(SPAWN_AT - 1));
        })
    };
    let later = (0..MORE)
        .map(|i| Later {
            file: file_name(&file),
            at: Vec3::new(i as f32 - 32.0, 0.0, 40.0),
        })
        .collect();
    let Some(grown) = run(later) else {
        return skip();
    };
    let Some(alone) = run(Vec::new()) else {
        return skip();
    };
    let Some(rest) = render_with(
        vec![Placed {
            file: file.clone(),
            at: Vec3::ZERO,
            animate: held("bend", 0.0),
        }],
        eye,
        at,
        5,
        1.0 / 60.0,
        |_| {},
    ) else {
        return skip();
    };
    save(&grown, &dir.join("grown.png"));
    save(&alone, &dir.join("alone.png"));
    save(&rest, &dir.join("rest.png"));
    let d = differing(&grown, &alone, 12);
    let moved = differing(&alone, &rest, 12);
    eprintln!("grown vs alone: {d} pixels differ; alone vs rest: {moved}");
    assert!(
        d <= SAME_PIXELS,
        "the paused character's pose after the growth is not the one without it: {d} pixels ({})",
        dir.display()
    );
    assert!(
        moved > 300,
        "the paused pose is the rest pose: {moved} pixels"
    );
}
