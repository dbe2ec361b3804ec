//! The file the `sample --play` tests play: a small skinned rig with
//! root motion on "hips" and clips of known motion, built here.
#![allow(dead_code, reason = "each test binary uses a subset")]

use std::path::{Path, PathBuf};

use serde_json::json;

use super::gltf_builder::*;

/// Nodes "hips" (a root) -> "spine" -> a skinned mesh node; animations
/// over [0, 1] s, LINEAR: 0 "walk" moves the hips from (0,0,0) to
/// (2,0,0) and bends the spine (0 to 90 degrees about z); 1 "run" moves
/// the hips from (0,0,0) to (0,0,4); 2 "wave" turns the spine 0 to 90
/// degrees about x.
pub fn asset(dir: &Path) -> PathBuf {
    let mut b = Builder::new();
    let mesh = b.mesh_with_targets(0);
    let hips = b.node(None);
    let spine = b.node(None);
    let body = b.node(Some(mesh));
    b.nodes[hips]["name"] = json!("hips");
    b.nodes[spine]["name"] = json!("spine");
    b.nodes[hips]["children"] = json!([spine]);
    b.nodes[spine]["translation"] = json!([0.0, 1.0, 0.0]);
    let ibm = b.accessor_f32(
        &[
            [
                1.0f32, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
            ],
            [
                1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, -1.0, 0.0, 1.0,
            ],
        ]
        .concat(),
        "MAT4",
    );
    b.skins
        .push(json!({"joints": [hips, spine], "inverseBindMatrices": ibm}));
    b.nodes[body]["skin"] = json!(0);
    let times = b.accessor_f32(&[0.0, 1.0], "SCALAR");
    let walk = b.accessor_f32(&[0.0, 0.0, 0.0, 2.0, 0.0, 0.0], "VEC3");
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let bend = b.accessor_f32(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, h, h], "VEC4");
    b.animation(
        "walk",
        &[(times, walk, "LINEAR"), (times, bend, "LINEAR")],
        &[(0, hips, "translation"), (1, spine, "rotation")],
    );
    let run = b.accessor_f32(&[0.0, 0.0, 0.0, 0.0, 0.0, 4.0], "VEC3");
    b.animation(
        "run",
        &[(times, run, "LINEAR")],
        &[(0, hips, "translation")],
    );
    let wave = b.accessor_f32(&[0.0, 0.0, 0.0, 1.0, h, 0.0, 0.0, h], "VEC4");
    b.animation(
        "wave",
        &[(times, wave, "LINEAR")],
        &[(0, spine, "rotation")],
    );
    let mut root = b.json(None);
    root["scenes"] = json!([{"nodes": [hips, body]}]);
    let path = dir.join("play.glb");
    std::fs::write(
        &path,
        glb(&serde_json::to_vec(&root).unwrap(), Some(&b.bin)),
    )
    .unwrap();
    path
}

/// The per-action commands of a 4-instance script (dt 0.125): 0 fades
/// walk in over 0.5, crossfades at run's clip time 0.5 over 0.25 in
/// frame 1 and fades run out over 0.5 in frame 3; 1 plays walk
/// repeating twice; 2 plays run ping-pong backwards from 0; 3 plays walk
/// with run's wrap set to once before it comes in frame 1.
pub fn per_action_commands(frame: usize) -> Vec<serde_json::Value> {
    match frame {
        0 => vec![
            json!({"instance": 0, "fade_in": {"animation": 0, "duration": 0.5}}),
            json!({"instance": 1, "play": 0, "repetitions": 2}),
            json!({"instance": 2, "play": 1, "wrap": "pingpong", "speed": -1}),
            json!({"instance": 3, "play": 0, "animation": 1, "wrap": "once"}),
        ],
        1 => vec![
            json!({"instance": 0, "crossfade_at": {"to": 1, "duration": 0.25, "at": 0.5}}),
            json!({"instance": 3, "crossfade": {"to": 1, "duration": 0.25}}),
        ],
        3 => vec![json!({"instance": 0, "fade_out": {"animation": 1, "duration": 0.5}})],
        _ => vec![],
    }
}
