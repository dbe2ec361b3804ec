//! The model the viewer shows without a file, built in code as a glTF
//! binary (GLB) and loaded like any file: an arm on a plinth with a part of
//! every kind the viewer draws.
//!
//! | node | what | material |
//! |---|---|---|
//! | `plinth` | rigid box, 2.4 x 0.4 x 2.4, top at y = 0 | 8 x 8 checker PNG, nearest magnification, repeated twice per face |
//! | `bone0`..`bone3` | a joint chain along +Y, one unit apart | |
//! | `arm` | a tube of radius 0.3 along the chain (y = 0 to 4), skinned to the four bones, a "bulge" morph target | white, vertex colours from orange (bottom) to teal (top) |
//! | `head` | rigid box under `bone3`, centred 1.25 above it | red paint |
//! | `bulb` | sphere under `head` | glass: blended, alpha 0.4, glowing |
//! | `flag` | a strip beside the arm, a second skin (`bone2`, `bone3`) | yellow, double-sided |
//! | `sign` | a quad in front of the arm's foot | keyframe diamonds on a PNG with holes: alpha mask, double-sided |
//!
//! Clips, 4 s each: "bend" (joints 1 to 3 to +35, 0, -35, 0 degrees about
//! +Z at t = 1, 2, 3, 4; the bulge 0, 1, 0, 1, 0; the head turns about +Y
//! by up to 30 degrees), "curl" (every joint above the root to 30 degrees
//! and back over 4 s), "wiggle" (the top joint swings +-40 degrees once a
//! second; the bulge pulses by 0.6).

use std::f32::consts::{PI, TAU};

use glam::{Quat, Vec3};
use serde_json::{json, Value};

use crate::image::Image;

/// Bones of the arm, one unit apart.
const BONES: usize = 4;
/// The arm's radius.
const RADIUS: f32 = 0.3;

/// The demo as GLB bytes.
///
/// # Errors
/// Only if encoding its textures as PNG fails (in memory: never).
pub fn glb() -> Result<Vec<u8>, String> {
    let mut g = Glb::default();
    let plinth = g.mesh(
        &box_mesh(Vec3::new(0.0, -0.2, 0.0), Vec3::new(2.4, 0.4, 2.4), 2.0),
        0,
    );
    let arm = g.arm_mesh();
    let head = g.mesh(&box_mesh(Vec3::ZERO, Vec3::new(0.9, 0.5, 0.9), 1.0), 2);
    let bulb = g.mesh(&sphere(0.38, 12, 24), 3);
    let flag = g.flag_mesh();
    let sign = g.mesh(&quad(Vec3::new(0.0, 0.3, 1.25), 2.4, 0.6), 5);
    g.nodes = vec![
        json!({"name": "plinth", "mesh": plinth}),
        json!({"name": "bone0", "children": [2]}),
        json!({"name": "bone1", "translation": [0.0, 1.0, 0.0], "children": [3]}),
        json!({"name": "bone2", "translation": [0.0, 1.0, 0.0], "children": [4]}),
        json!({"name": "bone3", "translation": [0.0, 1.0, 0.0], "children": [5]}),
        json!({"name": "head", "mesh": head, "translation": [0.0, 1.25, 0.0], "children": [6]}),
        json!({"name": "bulb", "mesh": bulb, "translation": [0.0, 0.6, 0.0]}),
        json!({"name": "arm", "mesh": arm, "skin": 0}),
        json!({"name": "flag", "mesh": flag, "skin": 1}),
        json!({"name": "sign", "mesh": sign}),
    ];
    let ibm = |bones: &[usize]| -> Vec<f32> {
        bones
            .iter()
            .flat_map(|&b| {
                glam::Mat4::from_translation(Vec3::new(0.0, -(b as f32), 0.0)).to_cols_array()
            })
            .collect()
    };
    let arm_ibm = g.floats(&ibm(&[0, 1, 2, 3]), "MAT4");
    let flag_ibm = g.floats(&ibm(&[2, 3]), "MAT4");
    g.skins = vec![
        json!({"name": "arm", "joints": [1, 2, 3, 4], "inverseBindMatrices": arm_ibm}),
        json!({"name": "flag", "joints": [3, 4], "inverseBindMatrices": flag_ibm}),
    ];
    g.materials()?;
    g.animations();
    Ok(g.finish())
}

/// Positions, normals, texture coordinates and triangles of a shape.
#[derive(Debug, Default)]
struct Shape {
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    uvs: Vec<[f32; 2]>,
    indices: Vec<u32>,
}

/// A box centred on `centre`, each face's UVs from 0 to `repeat`.
fn box_mesh(centre: Vec3, size: Vec3, repeat: f32) -> Shape {
    let mut s = Shape::default();
    let h = size * 0.5;
    for axis in 0..3 {
        for sign in [1.0f32, -1.0] {
            let n = Vec3::from_array(std::array::from_fn(|i| if i == axis { sign } else { 0.0 }));
            // Two directions across the face, so that u x v = n.
            let u = Vec3::from_array(std::array::from_fn(|i| {
                if i == (axis + 1) % 3 {
                    1.0
                } else {
                    0.0
                }
            }));
            let v = n.cross(u);
            let base = s.positions.len() as u32;
            for (a, b) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                let p = centre + n * h + u * h * a + v * h * b;
                s.positions.push(p.to_array());
                s.normals.push(n.to_array());
                s.uvs
                    .push([(a + 1.0) * 0.5 * repeat, (1.0 - b) * 0.5 * repeat]);
            }
            s.indices
                .extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
        }
    }
    s
}

/// A sphere of `rings` x `segments` quads centred on the origin.
fn sphere(radius: f32, rings: u32, segments: u32) -> Shape {
    let mut s = Shape::default();
    for r in 0..=rings {
        let theta = PI * r as f32 / rings as f32;
        for k in 0..=segments {
            let phi = TAU * k as f32 / segments as f32;
            let n = Vec3::new(
                theta.sin() * phi.cos(),
                theta.cos(),
                -theta.sin() * phi.sin(),
            );
            s.positions.push((n * radius).to_array());
            s.normals.push(n.to_array());
            s.uvs
                .push([k as f32 / segments as f32, r as f32 / rings as f32]);
        }
    }
    let row = segments + 1;
    for r in 0..rings {
        for k in 0..segments {
            let (a, b) = (r * row + k, r * row + k + 1);
            s.indices
                .extend_from_slice(&[a, a + row, b, b, a + row, b + row]);
        }
    }
    s
}

/// A quad in the XY plane facing +Z, `width` x `height`, centred on
/// `centre`, UVs (0, 0) at its top left.
fn quad(centre: Vec3, width: f32, height: f32) -> Shape {
    let (w, h) = (width * 0.5, height * 0.5);
    Shape {
        positions: [(-w, h), (w, h), (w, -h), (-w, -h)]
            .iter()
            .map(|&(x, y)| (centre + Vec3::new(x, y, 0.0)).to_array())
            .collect(),
        normals: vec![[0.0, 0.0, 1.0]; 4],
        uvs: vec![[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]],
        indices: vec![0, 3, 2, 0, 2, 1],
    }
}

/// Bones and weights of a point at height `y` of the arm: bone `b` spans
/// `[b, b + 1]`; within 0.25 of a joint the two bones blend linearly.
fn arm_weights(y: f32) -> ([u16; 4], [f32; 4]) {
    let last = BONES - 1;
    let b = (y.floor().max(0.0) as usize).min(last);
    let f = y - b as f32;
    let (b16, w) = (b as u16, 0.5 + 2.0 * f.min(1.0 - f));
    if f < 0.25 && b > 0 {
        return ([b16, b16 - 1, 0, 0], [w, 1.0 - w, 0.0, 0.0]);
    }
    if f > 0.75 && b < last {
        return ([b16, b16 + 1, 0, 0], [w, 1.0 - w, 0.0, 0.0]);
    }
    ([b16, 0, 0, 0], [1.0, 0.0, 0.0, 0.0])
}

/// Linear-light colour of the arm at height `y`: orange at the bottom,
/// teal at the top.
fn arm_color(y: f32) -> [f32; 4] {
    let t = (y / BONES as f32).clamp(0.0, 1.0);
    let (bottom, top) = (Vec3::new(0.9, 0.3, 0.05), Vec3::new(0.02, 0.45, 0.5));
    bottom.lerp(top, t).extend(1.0).to_array()
}

/// The GLB under construction: JSON arrays and one binary buffer.
#[derive(Debug, Default)]
struct Glb {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
    meshes: Vec<Value>,
    nodes: Vec<Value>,
    skins: Vec<Value>,
    materials: Vec<Value>,
    textures: Vec<Value>,
    images: Vec<Value>,
    samplers: Vec<Value>,
    animations: Vec<Value>,
}

impl Glb {
    fn view(&mut self, bytes: &[u8]) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        self.views
            .push(json!({"buffer": 0, "byteOffset": self.bin.len(), "byteLength": bytes.len()}));
        self.bin.extend_from_slice(bytes);
        self.views.len() - 1
    }

    /// A FLOAT accessor (with bounds, which glTF wants for positions and
    /// key times).
    fn floats(&mut self, data: &[f32], ty: &str) -> usize {
        let width = match ty {
            "SCALAR" => 1,
            "VEC2" => 2,
            "VEC3" => 3,
            "VEC4" => 4,
            _ => 16,
        };
        let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
        let view = self.view(&bytes);
        let mut a = json!({"bufferView": view, "componentType": 5126, "count": data.len() / width, "type": ty});
        if width <= 3 {
            let (mut lo, mut hi) = (vec![f32::INFINITY; width], vec![f32::NEG_INFINITY; width]);
            for e in data.chunks_exact(width) {
                for c in 0..width {
                    lo[c] = lo[c].min(e[c]);
                    hi[c] = hi[c].max(e[c]);
                }
            }
            a["min"] = json!(lo);
            a["max"] = json!(hi);
        }
        self.accessors.push(a);
        self.accessors.len() - 1
    }

    /// An integer accessor: `UNSIGNED_SHORT` (5123) or `UNSIGNED_INT` (5125).
    fn ints(&mut self, data: &[u32], component_type: u32, ty: &str, width: usize) -> usize {
        let bytes: Vec<u8> = if component_type == 5123 {
            data.iter()
                .flat_map(|&x| (x as u16).to_le_bytes())
                .collect()
        } else {
            data.iter().flat_map(|x| x.to_le_bytes()).collect()
        };
        let view = self.view(&bytes);
        self.accessors
            .push(json!({"bufferView": view, "componentType": component_type,
                                   "count": data.len() / width, "type": ty}));
        self.accessors.len() - 1
    }

    /// The attributes of `shape` as a primitive's.
    fn attributes(&mut self, shape: &Shape) -> Value {
        let pos = self.floats(&shape.positions.concat(), "VEC3");
        let nrm = self.floats(&shape.normals.concat(), "VEC3");
        let uv = self.floats(&shape.uvs.concat(), "VEC2");
        json!({"POSITION": pos, "NORMAL": nrm, "TEXCOORD_0": uv})
    }

    /// A rigid mesh of one primitive.
    fn mesh(&mut self, shape: &Shape, material: usize) -> usize {
        let attributes = self.attributes(shape);
        let indices = self.ints(&shape.indices, 5125, "SCALAR", 1);
        self.meshes.push(json!({"primitives": [{"attributes": attributes, "indices": indices, "material": material}]}));
        self.meshes.len() - 1
    }

    /// The arm: a tube with caps, skinned to the four bones, vertex
    /// colours, a "bulge" morph target.
    fn arm_mesh(&mut self) -> usize {
        const RINGS: u32 = 41;
        const SEGMENTS: u32 = 24;
        let height = BONES as f32;
        let mut s = Shape::default();
        let (mut joints, mut weights, mut colors, mut bulge) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut vertex = |s: &mut Shape, p: Vec3, n: Vec3, out: Vec3| {
            let (j, w) = arm_weights(p.y);
            s.positions.push(p.to_array());
            s.normals.push(n.to_array());
            s.uvs.push([0.0, 0.0]);
            joints.extend(j.map(u32::from));
            weights.extend(w);
            colors.extend(arm_color(p.y));
            bulge.extend(out.to_array());
        };
        for r in 0..RINGS {
            let y = height * r as f32 / (RINGS - 1) as f32;
            let out = 0.25 * (PI * y / height).sin();
            for k in 0..SEGMENTS {
                let phi = TAU * k as f32 / SEGMENTS as f32;
                let n = Vec3::new(phi.cos(), 0.0, -phi.sin());
                vertex(&mut s, n * RADIUS + Vec3::Y * y, n, n * out);
            }
        }
        for r in 0..RINGS - 1 {
            for k in 0..SEGMENTS {
                let a = r * SEGMENTS + k;
                let b = r * SEGMENTS + (k + 1) % SEGMENTS;
                s.indices
                    .extend_from_slice(&[a, b, a + SEGMENTS, b, b + SEGMENTS, a + SEGMENTS]);
            }
        }
        // Caps: their own ring (flat normals) fanned from a centre.
        for (y, n) in [(0.0, -Vec3::Y), (height, Vec3::Y)] {
            let centre = s.positions.len() as u32;
            vertex(&mut s, Vec3::Y * y, n, Vec3::ZERO);
            for k in 0..SEGMENTS {
                let phi = TAU * k as f32 / SEGMENTS as f32;
                let d = Vec3::new(phi.cos(), 0.0, -phi.sin());
                vertex(&mut s, d * RADIUS + Vec3::Y * y, n, Vec3::ZERO);
            }
            for k in 0..SEGMENTS {
                let (a, b) = (centre + 1 + k, centre + 1 + (k + 1) % SEGMENTS);
                let tri = if n.y > 0.0 {
                    [centre, a, b]
                } else {
                    [centre, b, a]
                };
                s.indices.extend_from_slice(&tri);
            }
        }
        let mut attributes = self.attributes(&s);
        attributes["JOINTS_0"] = json!(self.ints(&joints, 5123, "VEC4", 4));
        attributes["WEIGHTS_0"] = json!(self.floats(&weights, "VEC4"));
        attributes["COLOR_0"] = json!(self.floats(&colors, "VEC4"));
        let target = self.floats(&bulge, "VEC3");
        let indices = self.ints(&s.indices, 5125, "SCALAR", 1);
        self.meshes.push(json!({
            "name": "arm",
            "primitives": [{"attributes": attributes, "indices": indices, "material": 1,
                            "targets": [{"POSITION": target}]}],
            "weights": [0.0],
            "extras": {"targetNames": ["bulge"]},
        }));
        self.meshes.len() - 1
    }

    /// The flag: a strip from x = 0.3 to 1.5, y = 2.2 to 3.6, skinned to
    /// bones 2 and 3 (the second skin's joints 0 and 1).
    fn flag_mesh(&mut self) -> usize {
        let (cols, rows) = (6u32, 8u32);
        let mut s = Shape::default();
        let (mut joints, mut weights) = (Vec::new(), Vec::new());
        for r in 0..=rows {
            let y = 2.2 + 1.4 * r as f32 / rows as f32;
            // Bone 2 below 2.75, bone 3 above 3.25, blended between.
            let up = ((y - 2.75) / 0.5).clamp(0.0, 1.0);
            for c in 0..=cols {
                let x = 0.3 + 1.2 * c as f32 / cols as f32;
                // A little wave, so that the light shows the cloth.
                let z = 0.06 * (x * 7.0).sin();
                s.positions.push([x, y, z]);
                s.normals.push(
                    Vec3::new(-0.42 * (x * 7.0).cos(), 0.0, 1.0)
                        .normalize()
                        .to_array(),
                );
                s.uvs.push([0.0, 0.0]);
                joints.extend([0, 1, 0, 0]);
                weights.extend([1.0 - up, up, 0.0, 0.0]);
            }
        }
        let row = cols + 1;
        for r in 0..rows {
            for c in 0..cols {
                let a = r * row + c;
                s.indices
                    .extend_from_slice(&[a, a + 1, a + row + 1, a, a + row + 1, a + row]);
            }
        }
        let mut attributes = self.attributes(&s);
        attributes["JOINTS_0"] = json!(self.ints(&joints, 5123, "VEC4", 4));
        attributes["WEIGHTS_0"] = json!(self.floats(&weights, "VEC4"));
        let indices = self.ints(&s.indices, 5125, "SCALAR", 1);
        self.meshes.push(json!({"name": "flag", "primitives": [{"attributes": attributes, "indices": indices, "material": 4}]}));
        self.meshes.len() - 1
    }

    /// An image as a PNG in a buffer view.
    fn png(&mut self, image: &Image) -> Result<usize, String> {
        let mut bytes = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut bytes, image.width, image.height);
            enc.set_color(png::ColorType::Rgba);
            enc.set_depth(png::BitDepth::Eight);
            let mut w = enc.write_header().map_err(|e| format!("demo PNG: {e}"))?;
            w.write_image_data(&image.rgba)
                .map_err(|e| format!("demo PNG: {e}"))?;
        }
        let view = self.view(&bytes);
        self.images
            .push(json!({"bufferView": view, "mimeType": "image/png"}));
        Ok(self.images.len() - 1)
    }

    /// Materials 0 to 5: checker, arm, paint, glass, flag, sign.
    fn materials(&mut self) -> Result<(), String> {
        let checker = self.png(&checker_image())?;
        let diamonds = self.png(&diamonds_image())?;
        // 9728 NEAREST, 9729 LINEAR, 9987 LINEAR_MIPMAP_LINEAR, 10497
        // REPEAT, 33071 CLAMP_TO_EDGE.
        self.samplers = vec![
            json!({"magFilter": 9728, "minFilter": 9987, "wrapS": 10497, "wrapT": 10497}),
            json!({"magFilter": 9729, "minFilter": 9987, "wrapS": 33071, "wrapT": 33071}),
        ];
        self.textures = vec![
            json!({"source": checker, "sampler": 0}),
            json!({"source": diamonds, "sampler": 1}),
        ];
        let color = |c: [f32; 4]| json!({"baseColorFactor": c, "metallicFactor": 0.0});
        self.materials = vec![
            json!({"name": "checker", "pbrMetallicRoughness": {"baseColorTexture": {"index": 0}, "metallicFactor": 0.0}}),
            json!({"name": "arm", "pbrMetallicRoughness": color([1.0, 1.0, 1.0, 1.0])}),
            json!({"name": "paint", "pbrMetallicRoughness": color([0.75, 0.08, 0.06, 1.0])}),
            json!({"name": "glass", "pbrMetallicRoughness": color([0.4, 0.8, 1.0, 0.4]), "alphaMode": "BLEND",
                   "emissiveFactor": [0.1, 0.3, 0.4]}),
            json!({"name": "flag", "pbrMetallicRoughness": color([1.0, 0.7, 0.05, 1.0]), "doubleSided": true}),
            json!({"name": "sign", "pbrMetallicRoughness": {"baseColorTexture": {"index": 1}, "metallicFactor": 0.0},
                   "alphaMode": "MASK", "alphaCutoff": 0.5, "doubleSided": true}),
        ];
        Ok(())
    }

    /// A LINEAR rotation track: the sampler and the channel on `node`.
    fn rotations(
        &mut self,
        times: usize,
        node: usize,
        axis: Vec3,
        degrees: &[f32],
    ) -> (Value, Value) {
        let q: Vec<f32> = degrees
            .iter()
            .flat_map(|d| Quat::from_axis_angle(axis, d.to_radians()).to_array())
            .collect();
        let out = self.floats(&q, "VEC4");
        (
            json!({"input": times, "output": out, "interpolation": "LINEAR"}),
            json!({"target": {"node": node, "path": "rotation"}}),
        )
    }

    /// Clips "bend", "curl" and "wiggle" (see the module's documentation).
    fn animations(&mut self) {
        let (a, c, w) = (35.0, 30.0, 40.0);
        let t5 = self.floats(&[0.0, 1.0, 2.0, 3.0, 4.0], "SCALAR");
        let t3 = self.floats(&[0.0, 2.0, 4.0], "SCALAR");
        let wiggle_times: Vec<f32> = (0..17).map(|k| k as f32 * 0.25).collect();
        let t17 = self.floats(&wiggle_times, "SCALAR");
        let mut bend: Vec<(Value, Value)> = (2..=4)
            .map(|n| self.rotations(t5, n, Vec3::Z, &[0.0, a, 0.0, -a, 0.0]))
            .collect();
        bend.push(self.rotations(t5, 5, Vec3::Y, &[0.0, 30.0, 0.0, -30.0, 0.0]));
        bend.push(self.weights(t5, &[0.0, 1.0, 0.0, 1.0, 0.0]));
        let curl: Vec<(Value, Value)> = (2..=4)
            .map(|n| self.rotations(t3, n, Vec3::Z, &[0.0, c, 0.0]))
            .collect();
        let swing: Vec<f32> = (0..17).map(|k| [0.0, w, 0.0, -w][k % 4]).collect();
        let pulse: Vec<f32> = (0..17).map(|k| [0.0, 0.6][k % 2]).collect();
        let wiggle = vec![
            self.rotations(t17, 4, Vec3::Z, &swing),
            self.weights(t17, &pulse),
        ];
        for (name, tracks) in [("bend", bend), ("curl", curl), ("wiggle", wiggle)] {
            let (samplers, mut channels): (Vec<Value>, Vec<Value>) = tracks.into_iter().unzip();
            for (i, ch) in channels.iter_mut().enumerate() {
                ch["sampler"] = json!(i);
            }
            self.animations
                .push(json!({"name": name, "samplers": samplers, "channels": channels}));
        }
    }

    /// A LINEAR weights track on the arm's node (7).
    fn weights(&mut self, times: usize, values: &[f32]) -> (Value, Value) {
        let out = self.floats(values, "SCALAR");
        (
            json!({"input": times, "output": out, "interpolation": "LINEAR"}),
            json!({"target": {"node": 7, "path": "weights"}}),
        )
    }

    /// The GLB container.
    fn finish(mut self) -> Vec<u8> {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let root = json!({
            "asset": {"version": "2.0", "generator": "keyframe-gpu viewer demo"},
            "scene": 0,
            "scenes": [{"nodes": [0, 1, 7, 8, 9]}],
            "nodes": self.nodes,
            "meshes": self.meshes,
            "skins": self.skins,
            "materials": self.materials,
            "textures": self.textures,
            "images": self.images,
            "samplers": self.samplers,
            "animations": self.animations,
            "accessors": self.accessors,
            "bufferViews": self.views,
            "buffers": [{"byteLength": self.bin.len()}],
        });
        let mut text = root.to_string().into_bytes();
        while !text.len().is_multiple_of(4) {
            text.push(b' ');
        }
        let total = 12 + 8 + text.len() + 8 + self.bin.len();
        let mut out = Vec::with_capacity(total);
        out.extend_from_slice(b"glTF");
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&(total as u32).to_le_bytes());
        out.extend_from_slice(&(text.len() as u32).to_le_bytes());
        out.extend_from_slice(b"JSON");
        out.extend_from_slice(&text);
        out.extend_from_slice(&(self.bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&self.bin);
        out
    }
}

/// 8 x 8 cells of warm light grey and slate.
fn checker_image() -> Image {
    let rgba = (0..64)
        .flat_map(|i| {
            if (i % 8 + i / 8) % 2 == 0 {
                [206, 196, 176, 255]
            } else {
                [84, 92, 108, 255]
            }
        })
        .collect();
    Image {
        width: 8,
        height: 8,
        rgba,
    }
}

/// 128 x 32: a timeline bar with four keyframe diamonds in four colours,
/// transparent elsewhere (the mask's holes).
fn diamonds_image() -> Image {
    let colors = [
        [240, 120, 40],
        [40, 190, 180],
        [250, 210, 50],
        [230, 90, 160],
    ];
    let mut rgba = vec![0u8; 128 * 32 * 4];
    for y in 0..32i32 {
        for x in 0..128i32 {
            let k = (x / 32) as usize;
            let (cx, cy) = (32 * k as i32 + 16, 16);
            let px = if (x - cx).abs() + (y - cy).abs() <= 13 {
                Some(colors[k])
            } else if (y - cy).abs() <= 2 {
                Some([235, 235, 235])
            } else {
                None
            };
            if let Some([r, g, b]) = px {
                let at = ((y * 128 + x) * 4) as usize;
                rgba[at..at + 4].copy_from_slice(&[r, g, b, 255]);
            }
        }
    }
    Image {
        width: 128,
        height: 32,
        rgba,
    }
}
