//! `viewer TARGET --clips SOURCE --retarget MAP.json`: a clip made on one
//! rig (other bone names, other rest rotations, hips twice as high) plays
//! on a model built here, offscreen with `--screenshot`. The retargeted
//! clip moves the model (two times differ, and differ from the rest pose,
//! which the model's own constant clip shows), its first key is the
//! model's rest (the correction maps rest to rest, where copying the
//! source's rotations would turn the parts), the same files without the
//! map are refused (no bone name binds), and bad options end in one line
//! and exit 2.
#![cfg(feature = "gltf")]

#[path = "common/gltf_builder.rs"]
mod gltf_builder;
#[path = "common/sample_cli.rs"]
mod sample_cli;
#[path = "common/viewer_cli.rs"]
mod viewer_cli;

use std::path::{Path, PathBuf};

use glam::Quat;
use gltf_builder::{temp_dir, Builder};
use sample_cli::{gpu_ran, s, stderr, stdout};
use serde_json::{json, Value};
use viewer_cli::{differing_much, read_png, run_headless};

/// Small frames keep the CPU adapter quick.
const SIZE: &str = "192x160";

/// The builder's JSON with node `i` given `fields` (name, rest values,
/// children), the scene's roots set and empty arrays dropped.
fn finish(b: &Builder, nodes: &[Value], roots: &[usize], path: &Path) -> PathBuf {
    let mut root = b.json(Some(format!(
        "data:application/octet-stream;base64,{}",
        gltf_builder::base64(&b.bin)
    )));
    for (i, fields) in nodes.iter().enumerate() {
        for (k, v) in fields.as_object().unwrap() {
            root["nodes"][i][k] = v.clone();
        }
    }
    root["scenes"][0]["nodes"] = json!(roots);
    let object = root.as_object_mut().unwrap();
    for key in ["meshes", "animations"] {
        if object[key].as_array().is_some_and(Vec::is_empty) {
            object.remove(key);
        }
    }
    // The gltf crate's validation (which the viewer's mesh reader runs)
    // wants POSITION's bounds.
    if let Some(pos) = root["meshes"][0]["primitives"][0]["attributes"]["POSITION"].as_u64() {
        root["accessors"][pos as usize]["min"] = json!([0.0, 0.0, 0.0]);
        root["accessors"][pos as usize]["max"] = json!([1.0, 1.0, 0.0]);
    }
    std::fs::write(path, serde_json::to_vec(&root).unwrap()).unwrap();
    path.to_path_buf()
}

/// The model: `Pelvis` at height 1 carrying a triangle, and under it `Arm`
/// half a unit along X carrying another, both with identity rests; its
/// own clip "still" holds the pelvis at its rest translation (the rest
/// pose, drawn through the same viewer).
fn robot(dir: &Path) -> PathBuf {
    let mut b = Builder::new();
    let mesh = b.mesh_with_targets(0);
    b.node(Some(mesh));
    b.node(Some(mesh));
    let times = b.accessor_f32(&[0.0, 1.0], "SCALAR");
    let held = b.accessor_f32(&[0.0, 1.0, 0.0, 0.0, 1.0, 0.0], "VEC3");
    b.animation(
        "still",
        &[(times, held, "LINEAR")],
        &[(0, 0, "translation")],
    );
    let nodes = [
        json!({"name": "Pelvis", "translation": [0.0, 1.0, 0.0], "children": [1]}),
        json!({"name": "Arm", "translation": [0.5, 0.0, 0.0]}),
    ];
    finish(&b, &nodes, &[0], &dir.join("robot.gltf"))
}

/// The source's rest rotations: the hips turned +90 degrees about X, the
/// arm -90 about X (so its world rest is the identity, as the model's).
fn hips_rest() -> Quat {
    Quat::from_rotation_x(std::f32::consts::FRAC_PI_2)
}

/// The clips' rig, with other names and rests and its hips at height 2,
/// no mesh; clip "wave": over 1 s the hips move 1 along +X and the arm
/// turns 90 degrees about the world's Z from its rest.
fn mocap(dir: &Path) -> PathBuf {
    let mut b = Builder::new();
    b.node(None);
    b.node(None);
    let arm_rest = hips_rest().inverse();
    // World Rz(90) on the arm, whose parent's world rotation is the hips'
    // rest: local = hips^-1 * Rz(90) * (hips * arm_rest).
    let turn = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    let arm_turned = hips_rest().inverse() * turn * hips_rest() * arm_rest;
    let times = b.accessor_f32(&[0.0, 1.0], "SCALAR");
    let moved = b.accessor_f32(&[0.0, 2.0, 0.0, 1.0, 2.0, 0.0], "VEC3");
    let keys: Vec<f32> = [arm_rest, arm_turned]
        .iter()
        .flat_map(|q| q.to_array())
        .collect();
    let turned = b.accessor_f32(&keys, "VEC4");
    b.animation(
        "wave",
        &[(times, moved, "LINEAR"), (times, turned, "LINEAR")],
        &[(0, 0, "translation"), (1, 1, "rotation")],
    );
    let nodes = [
        json!({"name": "mixamorig:Hips", "translation": [0.0, 2.0, 0.0],
               "rotation": hips_rest().to_array(), "children": [1]}),
        json!({"name": "mixamorig:Arm", "translation": [0.0, 0.0, -1.0],
               "rotation": arm_rest.to_array()}),
    ];
    finish(&b, &nodes, &[0], &dir.join("mocap.gltf"))
}

const MAP: &str =
    r#"{"root": "Pelvis", "bones": {"Pelvis": "mixamorig:Hips", "Arm": "mixamorig:Arm"}}"#;

/// Pixels that are not the background (the top-left pixel's colour).
fn model_pixels(path: &Path) -> usize {
    let (px, _, _) = read_png(path);
    px.iter().filter(|p| **p != px[0]).count()
}

#[test]
fn a_retargeted_clip_moves_the_model() {
    let dir = temp_dir("viewer_retarget");
    let (robot, mocap) = (robot(&dir), mocap(&dir));
    let map = dir.join("map.json");
    std::fs::write(&map, MAP).unwrap();
    // Every run loads the same clips, so that the camera frames the same
    // bounds: clip 0 is the model's "still", clip 1 the retargeted wave.
    let shot = |name: &str, animation: &str, time: &str| {
        let png = dir.join(format!("{name}.png"));
        let out = run_headless(&[
            s(&robot),
            "--clips",
            s(&mocap),
            "--retarget",
            s(&map),
            "--animation",
            animation,
            "--time",
            time,
            "--screenshot",
            s(&png),
            "--frames",
            "1",
            "--size",
            SIZE,
        ]);
        (out, png)
    };
    let (out, rest) = shot("rest", "0", "0");
    if !gpu_ran("viewer retarget", &out) {
        return;
    }
    assert!(out.status.success(), "{}", stderr(&out));
    let (px, _, _) = read_png(&rest);
    assert!(
        model_pixels(&rest) * 200 >= px.len(),
        "the rest pose shows too little of the model"
    );
    let mut shots = Vec::new();
    for (name, time) in [("start", "0"), ("mid", "0.5"), ("late", "0.9")] {
        let (out, png) = shot(name, "1", time);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        assert!(stdout(&out).contains("\"wave\""), "{}", stdout(&out));
        shots.push(png);
    }
    // At its first key the source is at its rest, so the model is at
    // its own (within a few pixels' rounding); copying the source's
    // rotations instead would turn both triangles by 90 degrees.
    let n = differing_much(&rest, &shots[0]);
    assert!(
        n * 500 <= px.len(),
        "{n} of {} pixels differ between the rest pose and the clip's start",
        px.len()
    );
    // Later it moves: each time differs from the rest and from the other.
    for (a, b) in [
        (&rest, &shots[1]),
        (&rest, &shots[2]),
        (&shots[1], &shots[2]),
    ] {
        let n = differing_much(a, b);
        assert!(
            n * 200 >= px.len(),
            "only {n} of {} pixels differ between {} and {}",
            px.len(),
            a.display(),
            b.display()
        );
    }
}

/// Runs `args` offscreen and checks it fails with exit 2 and one line
/// containing `needle`.
fn refused(args: &[String], needle: &str) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_headless(&args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
}

#[test]
fn bad_retarget_options_are_one_line_and_exit_2() {
    let dir = temp_dir("viewer_retarget_refusals");
    let (robot, mocap) = (robot(&dir), mocap(&dir));
    let png = dir.join("never.png");
    let with = |extra: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = [s(&robot), "--screenshot", s(&png), "--frames", "1"]
            .map(String::from)
            .to_vec();
        args.extend(extra.iter().map(|a| a.to_string()));
        args
    };
    let map = dir.join("map.json");
    std::fs::write(&map, MAP).unwrap();
    refused(&with(&["--retarget", s(&map)]), "--retarget needs --clips");
    let missing = dir.join("missing.json");
    refused(
        &with(&["--clips", s(&mocap), "--retarget", s(&missing)]),
        "cannot read",
    );
    let neck = dir.join("neck.json");
    std::fs::write(
        &neck,
        r#"{"root": "Pelvis", "bones": {"Pelvis": "mixamorig:Hips", "Neck": "mixamorig:Arm"}}"#,
    )
    .unwrap();
    refused(
        &with(&["--clips", s(&mocap), "--retarget", s(&neck)]),
        "target bone \"Neck\" is not a node of the target rig",
    );
    // Without the map no bone name of the clips is one of the model's.
    refused(
        &with(&["--clips", s(&mocap)]),
        "none of its tracks binds to a node of the model",
    );
    assert!(!png.exists());
}
