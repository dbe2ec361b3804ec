//! A character and its animation pack, built in code: what binding by name
//! is for.
//!
//! - `character.glb`: a skinned mesh and its skeleton, no animation.
//!   Nodes (in this order): Body (mesh, skin), Armature -> Hips -> Spine
//!   -> {Head, LeftArm -> Hand, RightArm -> Hand -> Sword}. "Hand" is there
//!   twice: only its name path tells them apart. Sword is the character's
//!   own (no clip animates it).
//! - `run.glb`: animation only (no mesh, no skin), the same skeleton with
//!   its nodes in another order, other rest values, an unnamed node and a
//!   Tail the character lacks; one clip "Run".
//! - `idle.glb`: animation only, nodes in a third order; one clip "Idle".
#![allow(dead_code, reason = "each test binary uses a subset")]

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::gltf_builder::{f32_bytes, glb, Builder};

/// A node: its name (`None`: unnamed), children, rest translation.
pub struct PackNode {
    pub name: Option<&'static str>,
    pub children: Vec<usize>,
    pub translation: [f32; 3],
}

fn node(name: &'static str, children: &[usize], t: [f32; 3]) -> PackNode {
    PackNode {
        name: Some(name),
        children: children.to_vec(),
        translation: t,
    }
}

/// The character's nodes. Indices: 0 Body, 1 Armature, 2 Hips, 3 Spine,
/// 4 Head, 5 LeftArm, 6 RightArm, 7 Hand (left), 8 Hand (right), 9 Sword.
pub fn character_nodes() -> Vec<PackNode> {
    vec![
        node("Body", &[], [0.0; 3]),
        node("Armature", &[2], [0.0; 3]),
        node("Hips", &[3], [0.0, 1.0, 0.0]),
        node("Spine", &[4, 5, 6], [0.0, 0.5, 0.0]),
        node("Head", &[], [0.0, 0.5, 0.0]),
        node("LeftArm", &[7], [-0.3, 0.4, 0.0]),
        node("RightArm", &[8], [0.3, 0.4, 0.0]),
        node("Hand", &[], [-0.3, 0.0, 0.0]),
        node("Hand", &[9], [0.3, 0.0, 0.0]),
        node("Sword", &[], [0.0, -0.2, 0.0]),
    ]
}

/// The run file's nodes, in another order, each rest translation twice the
/// character's (so that a rest value taken from this file would show).
/// Indices: 0 Hips, 1 Armature, 2 Tail, 3 Spine, 4 RightArm, 5 Hand
/// (right), 6 LeftArm, 7 Hand (left), 8 Head, 9 an unnamed node under
/// Hips.
pub fn run_nodes() -> Vec<PackNode> {
    vec![
        node("Hips", &[3, 2, 9], [0.0, 2.0, 0.0]),
        node("Armature", &[0], [0.0; 3]),
        node("Tail", &[], [0.0, -0.5, -0.5]),
        node("Spine", &[8, 6, 4], [0.0, 1.0, 0.0]),
        node("RightArm", &[5], [0.6, 0.8, 0.0]),
        node("Hand", &[], [0.6, 0.0, 0.0]),
        node("LeftArm", &[7], [-0.6, 0.8, 0.0]),
        node("Hand", &[], [-0.6, 0.0, 0.0]),
        node("Head", &[], [0.0, 1.0, 0.0]),
        PackNode {
            name: None,
            children: vec![],
            translation: [0.0, 0.1, 0.0],
        },
    ]
}

/// The idle file's nodes: Armature -> Hips -> Spine -> Head only, in
/// reverse order.
pub fn idle_nodes() -> Vec<PackNode> {
    vec![
        node("Head", &[], [0.0, 0.5, 0.0]),
        node("Spine", &[0], [0.0, 0.5, 0.0]),
        node("Hips", &[1], [0.0, 1.0, 0.0]),
        node("Armature", &[2], [0.0; 3]),
    ]
}

/// A rotation about an axis, as glTF's (x, y, z, w).
pub fn quat(axis: [f32; 3], degrees: f32) -> [f32; 4] {
    let h = degrees.to_radians() * 0.5;
    let (s, c) = h.sin_cos();
    [axis[0] * s, axis[1] * s, axis[2] * s, c]
}

/// One channel of a pack clip: target node index (in its file), path,
/// interpolation, key times, values (flat).
pub struct PackChannel {
    pub node: usize,
    pub path: &'static str,
    pub interpolation: &'static str,
    pub times: Vec<f32>,
    pub values: Vec<f32>,
}

fn channel(
    node: usize,
    path: &'static str,
    interpolation: &'static str,
    times: &[f32],
    values: &[&[f32]],
) -> PackChannel {
    PackChannel {
        node,
        path,
        interpolation,
        times: times.to_vec(),
        values: values.concat(),
    }
}

/// "Run" (run file indices): Hips translation, Spine rotation, both
/// Hands' rotations (the right one STEP), Tail rotation, and a
/// translation of the unnamed node.
pub fn run_channels() -> Vec<PackChannel> {
    let id = [0.0, 0.0, 0.0, 1.0];
    vec![
        channel(
            0,
            "translation",
            "LINEAR",
            &[0.0, 1.0],
            &[&[0.0, 2.0, 0.0], &[0.0, 2.4, 0.2]],
        ),
        channel(
            3,
            "rotation",
            "LINEAR",
            &[0.0, 0.5, 1.0],
            &[
                &id,
                &quat([0.0, 0.0, 1.0], 30.0),
                &quat([0.0, 0.0, 1.0], -20.0),
            ],
        ),
        channel(
            7,
            "rotation",
            "LINEAR",
            &[0.0, 1.0],
            &[&id, &quat([1.0, 0.0, 0.0], 90.0)],
        ),
        channel(
            5,
            "rotation",
            "STEP",
            &[0.0, 0.5],
            &[&id, &quat([0.0, 1.0, 0.0], 45.0)],
        ),
        channel(
            2,
            "rotation",
            "LINEAR",
            &[0.0, 1.0],
            &[&id, &quat([1.0, 0.0, 0.0], 60.0)],
        ),
        channel(
            9,
            "translation",
            "LINEAR",
            &[0.0, 1.0],
            &[&[0.0, 0.1, 0.0], &[0.0, 0.3, 0.0]],
        ),
    ]
}

/// "Idle" (idle file indices): Head rotation, Spine scale.
pub fn idle_channels() -> Vec<PackChannel> {
    vec![
        channel(
            0,
            "rotation",
            "LINEAR",
            &[0.0, 2.0],
            &[&quat([0.0, 1.0, 0.0], -15.0), &quat([0.0, 1.0, 0.0], 15.0)],
        ),
        channel(
            1,
            "scale",
            "LINEAR",
            &[0.0, 2.0],
            &[&[1.0, 1.0, 1.0], &[1.1, 0.9, 1.1]],
        ),
    ]
}

/// A file of `nodes` with clip `clip` of `channels` (none: no animation),
/// and with `skinned` a mesh on node 0 skinned to `joints`.
pub fn file(
    nodes: &[PackNode],
    clip: Option<(&str, &[PackChannel])>,
    skinned: Option<&[usize]>,
) -> Vec<u8> {
    let mut b = Builder::new();
    let mut node_json: Vec<Value> = nodes
        .iter()
        .map(|n| {
            let mut v = json!({"translation": n.translation});
            if let Some(name) = n.name {
                v["name"] = json!(name);
            }
            if !n.children.is_empty() {
                v["children"] = json!(n.children);
            }
            v
        })
        .collect();
    let mut skins = Vec::new();
    if let Some(joints) = skinned {
        let mesh = b.mesh_with_targets(0);
        // Joint weights for the mesh's three vertices: all on joint 0.
        let j = b.view(&[0u8; 12], None);
        let w = b.view(&f32_bytes(&[1.0, 0.0, 0.0, 0.0].repeat(3)), None);
        let ja = b.accessor_json(
            json!({"bufferView": j, "componentType": 5121, "count": 3, "type": "VEC4"}),
        );
        let wa = b.accessor_json(
            json!({"bufferView": w, "componentType": 5126, "count": 3, "type": "VEC4"}),
        );
        b.meshes[mesh]["primitives"][0]["attributes"]["JOINTS_0"] = json!(ja);
        b.meshes[mesh]["primitives"][0]["attributes"]["WEIGHTS_0"] = json!(wa);
        node_json[0]["mesh"] = json!(mesh);
        node_json[0]["skin"] = json!(0);
        skins.push(json!({"joints": joints}));
    }
    if let Some((name, channels)) = clip {
        let mut samplers = Vec::new();
        let mut targets = Vec::new();
        for c in channels {
            let input = b.accessor_f32(&c.times, "SCALAR");
            b.accessors[input]["min"] = json!([c.times[0]]);
            b.accessors[input]["max"] = json!([c.times[c.times.len() - 1]]);
            let ty = if c.path == "rotation" { "VEC4" } else { "VEC3" };
            let output = b.accessor_f32(&c.values, ty);
            samplers.push((input, output, c.interpolation));
            targets.push((samplers.len() - 1, c.node, c.path));
        }
        b.animation(name, &samplers, &targets);
    }
    b.nodes = node_json;
    let mut root = b.json(None);
    let mut is_child = vec![false; nodes.len()];
    for n in nodes {
        for &c in &n.children {
            is_child[c] = true;
        }
    }
    let roots: Vec<usize> = (0..nodes.len()).filter(|&i| !is_child[i]).collect();
    root["scenes"] = json!([{"nodes": roots}]);
    if !skins.is_empty() {
        root["skins"] = json!(skins);
    }
    if root["meshes"].as_array().is_some_and(Vec::is_empty) {
        root.as_object_mut().unwrap().remove("meshes");
    }
    if root["animations"].as_array().is_some_and(Vec::is_empty) {
        root.as_object_mut().unwrap().remove("animations");
    }
    glb(&serde_json::to_vec(&root).unwrap(), Some(&b.bin))
}

/// The character's skin joints: Hips, Spine, Head, both arms and hands.
pub const CHARACTER_JOINTS: [usize; 7] = [2, 3, 4, 5, 6, 7, 8];

/// Writes the three files into `dir`: (character, run, idle).
pub fn write(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let character = dir.join("character.glb");
    let run = dir.join("run.glb");
    let idle = dir.join("idle.glb");
    std::fs::write(
        &character,
        file(&character_nodes(), None, Some(&CHARACTER_JOINTS)),
    )
    .unwrap();
    std::fs::write(
        &run,
        file(&run_nodes(), Some(("Run", &run_channels())), None),
    )
    .unwrap();
    std::fs::write(
        &idle,
        file(&idle_nodes(), Some(("Idle", &idle_channels())), None),
    )
    .unwrap();
    (character, run, idle)
}
