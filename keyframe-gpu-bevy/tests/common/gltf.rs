//! Small skinned glTF files built in code: a column of boxes bent by a
//! chain of joints (and, in one, leant by a morph target), written with
//! embedded base64 buffers.

use std::path::{Path, PathBuf};

use base64::Engine;
use serde_json::{json, Value};

/// A glTF document under construction: one buffer of every byte, views
/// and accessors into it.
#[derive(Default)]
struct Doc {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Doc {
    fn push(&mut self, bytes: &[u8], target: Option<u32>) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let mut view =
            json!({"buffer": 0, "byteOffset": self.bin.len(), "byteLength": bytes.len()});
        if let Some(t) = target {
            view["target"] = json!(t);
        }
        self.bin.extend_from_slice(bytes);
        self.views.push(view);
        self.views.len() - 1
    }

    fn floats(&mut self, v: &[f32], ty: &str, width: usize, bounds: bool) -> usize {
        let bytes: Vec<u8> = v.iter().flat_map(|f| f.to_le_bytes()).collect();
        let view = self.push(&bytes, None);
        let mut acc = json!({"bufferView": view, "componentType": 5126, "count": v.len() / width, "type": ty});
        if bounds {
            let mut min = vec![f32::MAX; width];
            let mut max = vec![f32::MIN; width];
            for chunk in v.chunks(width) {
                for (k, &x) in chunk.iter().enumerate() {
                    min[k] = min[k].min(x);
                    max[k] = max[k].max(x);
                }
            }
            acc["min"] = json!(min);
            acc["max"] = json!(max);
        }
        self.accessors.push(acc);
        self.accessors.len() - 1
    }

    fn u16s(&mut self, v: &[u16], ty: &str, width: usize, target: Option<u32>) -> usize {
        let bytes: Vec<u8> = v.iter().flat_map(|f| f.to_le_bytes()).collect();
        let view = self.push(&bytes, target);
        self.accessors.push(json!({"bufferView": view, "componentType": 5123, "count": v.len() / width, "type": ty}));
        self.accessors.len() - 1
    }
}

/// What a column looks like and how it moves.
pub struct Column {
    /// Base colour (linear RGBA).
    pub color: [f32; 4],
    /// Joints in the chain (at least 2), one unit apart along +Y.
    pub joints: usize,
    /// Box segments per joint.
    pub segments: usize,
    /// Every clip has a translation track on `armature` (still in `bend`
    /// and `sway`): keyframe-gpu's root motion wants the root animated
    /// by every clip.
    pub walker: bool,
}

impl Column {
    /// The red column of three joints and six segments, no walker.
    pub fn red() -> Column {
        Column {
            color: [0.8, 0.1, 0.1, 1.0],
            joints: 3,
            segments: 6,
            walker: false,
        }
    }
}

/// How far the `walk` clip moves `armature` along +Z in its one second.
pub const WALK_DISTANCE: f32 = 2.0;
/// The clip time of `walk`'s marker `step`.
pub const STEP_TIME: f32 = 0.5;

/// Writes `name.gltf` in `dir`: a column of boxes 0.5 wide along +Y,
/// `column.joints` units tall, skinned to a chain of joints named
/// `j0`, `j1`, ... (each one unit above its parent, `j0` at the origin),
/// under a node `armature`; the mesh node `body` is a top-level node.
/// Two clips: `bend` turns every joint but the first about +Z by up to
/// 0.5 rad over one second; `sway` turns them about +X by up to -0.6 rad
/// over two seconds; `walk` moves `armature` along +Z by
/// [`WALK_DISTANCE`] over one second, with a marker `step` at
/// [`STEP_TIME`].
pub fn column(dir: &Path, name: &str, column: &Column) -> PathBuf {
    write(dir, name, column, false)
}

/// How far the morph target `lean` moves the top of a column along +X
/// (the column's width); each vertex moves in proportion to its height.
pub const LEAN: f32 = 0.5;

/// [`column`] whose mesh has one morph target, `lean` (POSITION only: a
/// vertex at height `y` moves by `LEAN * y / height` along +X), and a
/// fourth clip `lean` whose only track is the mesh node's `weights`, 0
/// to 1 over one second (LINEAR).
pub fn leaning_column(dir: &Path, name: &str, column: &Column) -> PathBuf {
    write(dir, name, column, true)
}

fn write(dir: &Path, name: &str, column: &Column, lean: bool) -> PathBuf {
    let mut doc = Doc::default();
    let height = column.joints as f32;
    let Geometry {
        pos,
        nrm,
        jnt,
        wgt,
        idx,
    } = geometry(column);
    let position = doc.floats(&pos, "VEC3", 3, true);
    let normal = doc.floats(&nrm, "VEC3", 3, false);
    let joints = doc.u16s(&jnt, "VEC4", 4, None);
    let weights = doc.floats(&wgt, "VEC4", 4, false);
    let indices = doc.u16s(&idx, "SCALAR", 1, Some(34963));
    let lean_target = lean.then(|| {
        let shift: Vec<f32> = pos
            .chunks(3)
            .flat_map(|p| [LEAN * p[1] / height, 0.0, 0.0])
            .collect();
        doc.floats(&shift, "VEC3", 3, true)
    });
    let ibm = inverse_binds(column.joints);
    let ibm = doc.floats(&ibm, "MAT4", 16, false);

    // Nodes: 0 body (mesh, skin), 1 armature, 2.. joints.
    let mut nodes = vec![
        json!({"name": "body", "mesh": 0, "skin": 0}),
        json!({"name": "armature", "children": [2]}),
    ];
    for j in 0..column.joints {
        let mut node = json!({"name": format!("j{j}")});
        if j > 0 {
            node["translation"] = json!([0.0, 1.0, 0.0]);
        }
        if j + 1 < column.joints {
            node["children"] = json!([j + 3]);
        }
        nodes.push(node);
    }
    let joint_nodes: Vec<usize> = (0..column.joints).map(|j| j + 2).collect();

    let animations = clips(&mut doc, column, lean);
    let mut primitive = json!({
        "attributes": {"POSITION": position, "NORMAL": normal, "JOINTS_0": joints, "WEIGHTS_0": weights},
        "indices": indices,
        "material": 0
    });
    let mut mesh = json!({"name": "column"});
    if let Some(target) = lean_target {
        primitive["targets"] = json!([{"POSITION": target}]);
        mesh["weights"] = json!([0.0]);
        mesh["extras"] = json!({"targetNames": ["lean"]});
    }
    mesh["primitives"] = json!([primitive]);
    let data = base64::engine::general_purpose::STANDARD.encode(&doc.bin);
    let gltf = json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0, 1]}],
        "nodes": nodes,
        "meshes": [mesh],
        "materials": [{"name": "paint", "pbrMetallicRoughness": {"baseColorFactor": column.color, "metallicFactor": 0.0, "roughnessFactor": 0.6}}],
        "skins": [{"joints": joint_nodes, "inverseBindMatrices": ibm, "skeleton": 2}],
        "animations": animations,
        "buffers": [{"byteLength": doc.bin.len(), "uri": format!("data:application/octet-stream;base64,{data}")}],
        "bufferViews": doc.views,
        "accessors": doc.accessors,
    });
    let path = dir.join(format!("{name}.gltf"));
    std::fs::write(&path, serde_json::to_vec_pretty(&gltf).expect("json")).expect("write the glTF");
    path
}

/// A fresh folder for a test's files.
pub fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("keyframe_gpu_bevy_{test}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A column's vertices (positions, normals, joints, weights) and
/// triangle indices.
#[derive(Default)]
struct Geometry {
    pos: Vec<f32>,
    nrm: Vec<f32>,
    jnt: Vec<u16>,
    wgt: Vec<f32>,
    idx: Vec<u16>,
}

/// The column's box: four faces of `rings` rows each, skinned to the two
/// joints nearest each row, and two end caps.
fn geometry(column: &Column) -> Geometry {
    let height = column.joints as f32;
    let rings = column.joints * column.segments + 1;
    let half = 0.25f32;
    // Four faces, each a strip of quads, with flat normals; two more
    // quads close the ends.
    let corners = [[-half, -half], [half, -half], [half, half], [-half, half]];
    let mut g = Geometry::default();
    let influence = |y: f32| -> ([u16; 4], [f32; 4]) {
        // Blend between the two joints nearest below and above.
        let f = (y - 0.5).clamp(0.0, height - 1.0);
        let j = (f.floor() as usize).min(column.joints - 1);
        let t = f - j as f32;
        let k = (j + 1).min(column.joints - 1);
        ([j as u16, k as u16, 0, 0], [1.0 - t, t, 0.0, 0.0])
    };
    for face in 0..4 {
        let a = corners[face];
        let b = corners[(face + 1) % 4];
        let mid = [(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0];
        let len = (mid[0] * mid[0] + mid[1] * mid[1]).sqrt();
        let normal = [mid[0] / len, 0.0, mid[1] / len];
        let first = (g.pos.len() / 3) as u16;
        for r in 0..rings {
            let y = r as f32 * height / (rings - 1) as f32;
            for c in [a, b] {
                g.pos.extend_from_slice(&[c[0], y, c[1]]);
                g.nrm.extend_from_slice(&normal);
                let (j, w) = influence(y);
                g.jnt.extend_from_slice(&j);
                g.wgt.extend_from_slice(&w);
            }
        }
        for r in 0..(rings - 1) as u16 {
            let v = first + 2 * r;
            // Counter-clockwise seen from outside.
            g.idx.extend_from_slice(&[v, v + 3, v + 1, v, v + 2, v + 3]);
        }
    }
    for (y, up) in [(0.0f32, -1.0f32), (height, 1.0)] {
        let first = (g.pos.len() / 3) as u16;
        for c in corners {
            g.pos.extend_from_slice(&[c[0], y, c[1]]);
            g.nrm.extend_from_slice(&[0.0, up, 0.0]);
            let (j, w) = influence(y);
            g.jnt.extend_from_slice(&j);
            g.wgt.extend_from_slice(&w);
        }
        if up > 0.0 {
            g.idx
                .extend_from_slice(&[first, first + 3, first + 2, first, first + 2, first + 1]);
        } else {
            g.idx
                .extend_from_slice(&[first, first + 1, first + 2, first, first + 2, first + 3]);
        }
    }
    g
}

/// The inverse bind matrices of the chain: joint `j` at (0, j, 0).
fn inverse_binds(joints: usize) -> Vec<f32> {
    let mut ibm = Vec::new();
    for j in 0..joints {
        // Inverse of a translation by (0, j, 0), column-major.
        ibm.extend_from_slice(&[
            1.0,
            0.0,
            0.0,
            0.0,
            0.0,
            1.0,
            0.0,
            0.0,
            0.0,
            0.0,
            1.0,
            0.0,
            0.0,
            -(j as f32),
            0.0,
            1.0,
        ]);
    }
    ibm
}

/// The column's clips (`bend`, `sway`, `walk`, and with `lean` its
/// morph clip), their keys written to `doc`.
fn clips(doc: &mut Doc, column: &Column, lean: bool) -> Vec<serde_json::Value> {
    let mut animations = Vec::new();
    for (clip, axis, angle, seconds) in [
        ("bend", [0.0f32, 0.0, 1.0], 0.5f32, 1.0f32),
        ("sway", [1.0, 0.0, 0.0], -0.6, 2.0),
    ] {
        let steps = 8;
        let times: Vec<f32> = (0..=steps)
            .map(|k| seconds * k as f32 / steps as f32)
            .collect();
        let input = doc.floats(&times, "SCALAR", 1, true);
        let mut samplers = Vec::new();
        let mut channels = Vec::new();
        for j in 1..column.joints {
            let mut rot = Vec::new();
            for k in 0..=steps {
                // Out and back: 0 at both ends, `angle` halfway.
                let s = (std::f32::consts::PI * k as f32 / steps as f32).sin();
                let half_angle = angle * s / 2.0;
                let (sn, cs) = half_angle.sin_cos();
                rot.extend_from_slice(&[axis[0] * sn, axis[1] * sn, axis[2] * sn, cs]);
            }
            let output = doc.floats(&rot, "VEC4", 4, false);
            samplers.push(json!({"input": input, "output": output, "interpolation": "LINEAR"}));
            channels.push(json!({"sampler": samplers.len() - 1, "target": {"node": j + 2, "path": "rotation"}}));
        }
        if column.walker {
            let still = doc.floats(&[0.0; 6], "VEC3", 3, false);
            let ends = doc.floats(&[0.0, seconds], "SCALAR", 1, true);
            samplers.push(json!({"input": ends, "output": still, "interpolation": "LINEAR"}));
            channels.push(json!({"sampler": samplers.len() - 1, "target": {"node": 1, "path": "translation"}}));
        }
        animations.push(json!({"name": clip, "samplers": samplers, "channels": channels}));
    }

    {
        let times = doc.floats(&[0.0, 1.0], "SCALAR", 1, true);
        let moves = doc.floats(&[0.0, 0.0, 0.0, 0.0, 0.0, WALK_DISTANCE], "VEC3", 3, false);
        animations.push(json!({
            "name": "walk",
            "samplers": [{"input": times, "output": moves, "interpolation": "LINEAR"}],
            "channels": [{"sampler": 0, "target": {"node": 1, "path": "translation"}}],
            "extras": {"markers": [{"name": "step", "time": STEP_TIME}]},
        }));
    }
    if lean {
        let times = doc.floats(&[0.0, 1.0], "SCALAR", 1, true);
        let weights = doc.floats(&[0.0, 1.0], "SCALAR", 1, false);
        animations.push(json!({
            "name": "lean",
            "samplers": [{"input": times, "output": weights, "interpolation": "LINEAR"}],
            "channels": [{"sampler": 0, "target": {"node": 0, "path": "weights"}}],
        }));
    }
    animations
}
