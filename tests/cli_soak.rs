//! `soak --model FILE`: the soak's long run of changing mixes on a glTF
//! file's rig and clips (a file built here), at a count of characters
//! the built-in run does not use, with the device lost mid-run in a frame
//! loop that never waits; a short soak that checks its first and last
//! frames; and a file that cannot be read, refused with exit 2 and one
//! line.
#![cfg(feature = "gltf")]

#[path = "common/gltf_builder.rs"]
mod gltf_builder;
#[path = "common/sample_cli.rs"]
mod sample_cli;

use std::path::{Path, PathBuf};
use std::process::Command;

use gltf_builder::*;
use sample_cli::{example_binary, gpu_ran, stderr, stdout};
use serde_json::json;

/// A chain of four nodes (the second a mesh of two morph targets) with
/// two animations: "walk" moves the root and the mesh's weights, "turn"
/// turns the third node.
fn asset(dir: &Path) -> PathBuf {
    let mut b = Builder::new();
    let mesh = b.mesh_with_targets(2);
    let nodes: Vec<usize> = (0..4)
        .map(|k| b.node(if k == 1 { Some(mesh) } else { None }))
        .collect();
    for k in 0..3 {
        b.nodes[nodes[k]]["children"] = json!([nodes[k + 1]]);
        b.nodes[nodes[k + 1]]["translation"] = json!([0.0, 1.0, 0.0]);
    }
    let times = b.accessor_f32(&[0.0, 0.5, 1.0], "SCALAR");
    let t = b.accessor_f32(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 2.0], "VEC3");
    let w = b.accessor_f32(&[1.0, 0.0, 0.5, 0.5, 0.0, 1.0], "SCALAR");
    b.animation(
        "walk",
        &[(times, t, "LINEAR"), (times, w, "LINEAR")],
        &[(0, nodes[0], "translation"), (1, nodes[1], "weights")],
    );
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let r = b.accessor_f32(
        &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, h, h, 0.0, 0.0, 1.0, 0.0],
        "VEC4",
    );
    b.animation(
        "turn",
        &[(times, r, "LINEAR")],
        &[(0, nodes[2], "rotation")],
    );
    let mut root = b.json(None);
    root["scenes"] = json!([{"nodes": [nodes[0]]}]);
    let path = dir.join("soak.glb");
    std::fs::write(
        &path,
        glb(&serde_json::to_vec(&root).unwrap(), Some(&b.bin)),
    )
    .unwrap();
    path
}

fn soak(args: &[&str]) -> std::process::Output {
    Command::new(example_binary("soak"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_files_rig_soaks_with_a_loss_seen_within_two_frames() {
    let name = "a_files_rig_soaks_with_a_loss_seen_within_two_frames";
    let dir = temp_dir(name);
    let file = asset(&dir);
    let o = soak(&[
        "--frames",
        "1100",
        "--lose-device-at",
        "600",
        "--no-wait",
        "--instances",
        "300",
        "--model",
        file.to_str().unwrap(),
    ]);
    if !gpu_ran(name, &o) {
        return;
    }
    let out = stdout(&o);
    let last = out.lines().last().unwrap_or_default();
    assert!(o.status.success(), "{last}\n{}", stderr(&o));
    // Four twin checks (the first frame, frame 999, the rebuilt device's
    // first frame and the last frame), all equal; the loss reported in
    // the frame it happened.
    for part in [
        "frames=1100 ",
        "validation_errors=0 ",
        "twin_checks=4/4 ",
        "device_lost=1 ",
        "rebuilt=1 ",
        "detected_after=0",
    ] {
        assert!(last.contains(part), "{part:?} not in {last:?}");
    }
}

/// A soak of ten frames is a real check: its first and last frames are
/// compared with the twin, and its memory is measured after the
/// warm-up (the first frame's pipelines and readback are not growth).
#[test]
fn a_short_soak_checks_its_first_and_last_frames() {
    let name = "a_short_soak_checks_its_first_and_last_frames";
    let o = soak(&["--frames", "10", "--instances", "300"]);
    if !gpu_ran(name, &o) {
        return;
    }
    let out = stdout(&o);
    let last = out.lines().last().unwrap_or_default();
    assert!(o.status.success(), "{last}\n{}", stderr(&o));
    for part in ["frames=10 ", "validation_errors=0 ", "twin_checks=2/2 "] {
        assert!(last.contains(part), "{part:?} not in {last:?}");
    }
}

#[test]
fn a_model_that_cannot_be_read_is_refused_in_one_line() {
    let name = "a_model_that_cannot_be_read_is_refused_in_one_line";
    let dir = temp_dir(name);
    let missing = dir.join("missing.glb");
    let o = soak(&["--frames", "10", "--model", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("--model") && err.contains("missing.glb"),
        "{err}"
    );
    assert!(stdout(&o).is_empty());
}
