//! Real glTF files that no one here made, drawn by the plugin and by
//! bevy_animation at the same clip and time. The files are the shared
//! sample assets in `../../shared/assets` (beside the repository); when
//! that folder is absent each test prints a skip line and passes, as the
//! keyframe-gpu crate's tests of those files do.
//!
//! Only files whose animated nodes all have names are compared: Bevy's
//! glTF loader drops the animation of a node whose path has an unnamed
//! node, so SimpleSkin, RiggedSimple, AnimatedTriangle and BoxAnimated
//! would show bevy_animation standing still.

mod common;

use std::path::{Path, PathBuf};

use bevy::prelude::Vec3;
use common::gltf::temp_dir;
use common::{differing, held, render_one, save, skip, Animate, Picture, HEIGHT, WIDTH};

/// As in `pictures.rs`: a channel differs by more than this (of 255).
const TOLERANCE: u8 = 12;
/// At most this share of the pixels may differ between the plugin's
/// picture and bevy_animation's.
const SAME_SHARE: f64 = 0.004;
/// At least this share differs between the pose and the clip's start.
const MOVED_SHARE: f64 = 0.005;

const PIXELS: f64 = (WIDTH * HEIGHT) as f64;

/// The shared file `name`, or `None` (and a skip line) when the folder
/// is not there.
fn shared(name: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/assets")
        .join(name);
    if path.is_file() {
        Some(path)
    } else {
        eprintln!(
            "skipped: {} is absent (the shared sample assets)",
            path.display()
        );
        None
    }
}

/// One scene at the origin, after 5 frames.
fn one(file: &Path, animate: Animate, eye: Vec3, at: Vec3) -> Option<Picture> {
    render_one(file, animate, (eye, at), 5, 1.0 / 60.0)
}

/// `clip` of the shared file `name` at `time`: the plugin's picture
/// matches bevy_animation's, and differs from the plugin's at 0 s (the
/// clip moves something in view).
fn compare(name: &str, clip: &str, time: f32, eye: Vec3, at: Vec3) {
    let Some(file) = shared(name) else {
        return;
    };
    let dir = temp_dir(&format!("real_{name}_{clip}").replace(['.', ' '], "_"));
    let Some(gpu) = one(&file, held(clip, f64::from(time)), eye, at) else {
        return skip();
    };
    let Some(cpu) = one(
        &file,
        Animate::Bevy {
            clip: clip.into(),
            time,
        },
        eye,
        at,
    ) else {
        return skip();
    };
    let Some(start) = one(&file, held(clip, 0.0), eye, at) else {
        return skip();
    };
    save(&gpu, &dir.join("gpu.png"));
    save(&cpu, &dir.join("bevy.png"));
    save(&start, &dir.join("start.png"));
    let moved = differing(&gpu, &start, TOLERANCE);
    let diff = differing(&gpu, &cpu, TOLERANCE);
    eprintln!(
        "{name} {clip} at {time} s: plugin vs bevy_animation {diff} of {PIXELS} pixels differ; \
         against 0 s {moved} ({})",
        dir.display()
    );
    assert!(
        moved as f64 / PIXELS > MOVED_SHARE,
        "{name}: {clip} at {time} s looks like 0 s ({moved} pixels; {})",
        dir.display()
    );
    assert!(
        diff as f64 / PIXELS <= SAME_SHARE,
        "{name}: {diff} pixels differ between the plugin and bevy_animation ({})",
        dir.display()
    );
}

#[test]
fn fox_runs_as_bevy_animation_runs_it() {
    // The fox is about 90 units tall and 155 long, running along z.
    compare(
        "Fox.glb",
        "Run",
        0.4,
        Vec3::new(230.0, 80.0, 0.0),
        Vec3::new(0.0, 40.0, -10.0),
    );
}

#[test]
fn fox_surveys_as_bevy_animation_does() {
    compare(
        "Fox.glb",
        "Survey",
        1.7,
        Vec3::new(230.0, 80.0, 0.0),
        Vec3::new(0.0, 40.0, -10.0),
    );
}

#[test]
fn rigged_figure_walks_as_bevy_animation_walks_it() {
    // Z-up under a root matrix; 1.45 units tall. Its animation has no
    // name.
    compare(
        "RiggedFigure.gltf",
        "animation 0",
        0.6,
        Vec3::new(0.0, 0.9, 3.0),
        Vec3::new(0.0, 0.7, 0.0),
    );
}

#[test]
fn morph_stress_test_waves_as_bevy_animation_does() {
    // Morph targets only (8 per primitive), no skin.
    compare(
        "MorphStressTest.gltf",
        "TheWave",
        0.5,
        Vec3::new(0.0, 3.0, 5.5),
        Vec3::new(0.0, 0.0, 0.0),
    );
}
