//! Builds small glTF assets in code (hand-written JSON plus one binary
//! buffer) for the import, asset and CLI tests. Include it with
//! `#[path = "common/gltf_builder.rs"] mod gltf_builder;`.
#![allow(dead_code, reason = "each test binary uses a subset")]

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// glTF component type codes.
pub const BYTE: u32 = 5120;
/// glTF `UNSIGNED_BYTE`.
pub const UNSIGNED_BYTE: u32 = 5121;
/// glTF `SHORT`.
pub const SHORT: u32 = 5122;
/// glTF `UNSIGNED_SHORT`.
pub const UNSIGNED_SHORT: u32 = 5123;
/// glTF `UNSIGNED_INT`.
pub const UNSIGNED_INT: u32 = 5125;
/// glTF `FLOAT`.
pub const FLOAT: u32 = 5126;

/// An asset under construction: JSON arrays and one binary buffer.
#[derive(Debug, Clone, Default)]
pub struct Builder {
    pub bin: Vec<u8>,
    pub views: Vec<Value>,
    pub accessors: Vec<Value>,
    pub nodes: Vec<Value>,
    pub meshes: Vec<Value>,
    pub animations: Vec<Value>,
    pub extensions_required: Vec<String>,
    /// Materials, textures, images, samplers and skins (written only when
    /// not empty).
    pub materials: Vec<Value>,
    pub textures: Vec<Value>,
    pub images: Vec<Value>,
    pub samplers: Vec<Value>,
    pub skins: Vec<Value>,
    /// Extensions used but not required.
    pub extensions_used: Vec<String>,
    /// The scene's root nodes (`None`: every node).
    pub roots: Option<Vec<usize>>,
}

pub fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn i8_bytes(v: &[i8]) -> Vec<u8> {
    v.iter().map(|&x| x as u8).collect()
}
pub fn i16_bytes(v: &[i16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn u16_bytes(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn u32_bytes(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Standard base64 with padding (RFC 4648), written out here so that the
/// tests do not share the importer's decoder.
pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                s.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

pub fn components(ty: &str) -> usize {
    match ty {
        "SCALAR" => 1,
        "VEC2" => 2,
        "VEC3" => 3,
        "VEC4" => 4,
        "MAT4" => 16,
        other => panic!("unknown type {other}"),
    }
}

impl Builder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends `bytes` (4-byte aligned) as a new buffer view.
    pub fn view(&mut self, bytes: &[u8], stride: Option<usize>) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let offset = self.bin.len();
        self.bin.extend_from_slice(bytes);
        let mut v = json!({"buffer": 0, "byteOffset": offset, "byteLength": bytes.len()});
        if let Some(s) = stride {
            v["byteStride"] = json!(s);
        }
        self.views.push(v);
        self.views.len() - 1
    }

    pub fn accessor_json(&mut self, v: Value) -> usize {
        self.accessors.push(v);
        self.accessors.len() - 1
    }

    /// A tightly packed accessor over new bytes.
    pub fn accessor_raw(
        &mut self,
        bytes: &[u8],
        component_type: u32,
        normalized: bool,
        count: usize,
        ty: &str,
    ) -> usize {
        let view = self.view(bytes, None);
        let mut a = json!({"bufferView": view, "componentType": component_type,
                           "count": count, "type": ty});
        if normalized {
            a["normalized"] = json!(true);
        }
        self.accessor_json(a)
    }

    pub fn accessor_f32(&mut self, data: &[f32], ty: &str) -> usize {
        let count = data.len() / components(ty);
        self.accessor_raw(&f32_bytes(data), FLOAT, false, count, ty)
    }

    /// A node, with a mesh or not.
    pub fn node(&mut self, mesh: Option<usize>) -> usize {
        self.nodes.push(match mesh {
            Some(m) => json!({"mesh": m}),
            None => json!({}),
        });
        self.nodes.len() - 1
    }

    /// A mesh with one triangle primitive and `targets` morph targets (all
    /// pointing at one position accessor: never read by the importer).
    pub fn mesh_with_targets(&mut self, targets: usize) -> usize {
        let pos = self.accessor_f32(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0], "VEC3");
        let t: Vec<Value> = (0..targets).map(|_| json!({"POSITION": pos})).collect();
        self.meshes
            .push(json!({"primitives": [{"attributes": {"POSITION": pos}, "targets": t}]}));
        self.meshes.len() - 1
    }

    /// An animation: samplers as (input, output, interpolation), channels
    /// as (sampler, node, path).
    pub fn animation(
        &mut self,
        name: &str,
        samplers: &[(usize, usize, &str)],
        channels: &[(usize, usize, &str)],
    ) -> usize {
        let s: Vec<Value> = samplers
            .iter()
            .map(|&(i, o, interp)| json!({"input": i, "output": o, "interpolation": interp}))
            .collect();
        let c: Vec<Value> = channels
            .iter()
            .map(|&(s, n, p)| json!({"sampler": s, "target": {"node": n, "path": p}}))
            .collect();
        self.animations
            .push(json!({"name": name, "samplers": s, "channels": c}));
        self.animations.len() - 1
    }

    /// The glTF JSON, with buffer 0 at `uri` (None: the GLB chunk).
    pub fn json(&self, uri: Option<String>) -> Value {
        let mut buffer = json!({"byteLength": self.bin.len()});
        if let Some(u) = uri {
            buffer["uri"] = json!(u);
        }
        let mut root = json!({
            "asset": {"version": "2.0", "generator": "keyframe-gpu tests"},
            "buffers": [buffer],
            "bufferViews": self.views,
            "accessors": self.accessors,
            "nodes": self.nodes,
            "meshes": self.meshes,
            "animations": self.animations,
            "scenes": [{"nodes": self.roots.clone().unwrap_or_else(|| (0..self.nodes.len()).collect())}],
            "scene": 0,
        });
        for (key, values) in [
            ("materials", &self.materials),
            ("textures", &self.textures),
            ("images", &self.images),
            ("samplers", &self.samplers),
            ("skins", &self.skins),
        ] {
            if !values.is_empty() {
                root[key] = json!(values);
            }
        }
        if !self.extensions_required.is_empty() {
            root["extensionsRequired"] = json!(self.extensions_required);
        }
        let mut used = self.extensions_required.clone();
        used.extend(self.extensions_used.iter().cloned());
        if !used.is_empty() {
            root["extensionsUsed"] = json!(used);
        }
        root
    }

    /// A .gltf with the buffer as a base64 data URI.
    pub fn to_gltf_embedded(&self) -> Vec<u8> {
        let uri = format!("data:application/octet-stream;base64,{}", base64(&self.bin));
        serde_json::to_vec(&self.json(Some(uri))).unwrap()
    }

    /// A .glb: JSON chunk (space padded) and BIN chunk (zero padded).
    pub fn to_glb(&self) -> Vec<u8> {
        glb(
            &serde_json::to_vec(&self.json(None)).unwrap(),
            Some(&self.bin),
        )
    }

    /// Writes `<name>.gltf` and `<name>.bin` into `dir`; returns the .gltf path.
    pub fn write_external(&self, dir: &Path, name: &str) -> PathBuf {
        let bin_name = format!("{name}.bin");
        std::fs::write(dir.join(&bin_name), &self.bin).unwrap();
        let path = dir.join(format!("{name}.gltf"));
        std::fs::write(
            &path,
            serde_json::to_vec(&self.json(Some(bin_name))).unwrap(),
        )
        .unwrap();
        path
    }
}

/// A GLB container from JSON bytes and an optional BIN chunk.
pub fn glb(json: &[u8], bin: Option<&[u8]>) -> Vec<u8> {
    let mut j = json.to_vec();
    while !j.len().is_multiple_of(4) {
        j.push(b' ');
    }
    let mut chunks = Vec::new();
    chunks.extend_from_slice(&(j.len() as u32).to_le_bytes());
    chunks.extend_from_slice(&0x4E4F_534Au32.to_le_bytes());
    chunks.extend_from_slice(&j);
    if let Some(b) = bin {
        let mut b = b.to_vec();
        while !b.len().is_multiple_of(4) {
            b.push(0);
        }
        chunks.extend_from_slice(&(b.len() as u32).to_le_bytes());
        chunks.extend_from_slice(&0x004E_4942u32.to_le_bytes());
        chunks.extend_from_slice(&b);
    }
    let mut out = b"glTF".to_vec();
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(12 + chunks.len() as u32).to_le_bytes());
    out.extend_from_slice(&chunks);
    out
}

/// A fresh, empty temporary folder for one test.
pub fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "keyframe-gpu-{test}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

// ---------------------------------------------------------------------------
// The "every interpolation x path x component type" asset.

/// Key times of every channel of [`full_asset`], shared by all of its
/// channels of one animation (one input accessor per animation).
pub const FULL_TIMES: [f32; 3] = [0.0, 0.5, 1.25];

/// Output component types tested for each path.
pub fn component_types(path: &str) -> &'static [u32] {
    match path {
        "rotation" | "weights" => &[FLOAT, BYTE, UNSIGNED_BYTE, SHORT, UNSIGNED_SHORT],
        _ => &[FLOAT],
    }
}

/// What the test put into one output accessor: the stored integers (or
/// floats) and the floats the spec says they mean.
#[derive(Debug, Clone)]
pub struct Stored {
    pub path: &'static str,
    pub component_type: u32,
    pub interpolation: &'static str,
    pub node: usize,
    pub width: usize,
    /// The values as the spec decodes them (computed here from the spec's
    /// formulas, not by the importer).
    pub expected: Vec<f32>,
}

/// Raw rotation keys (`n` quaternions) of component type `ct` whose decoded
/// lengths are 1 or within 0.003 of it (glTF requires unit quaternions; the
/// library normalizes keys within `QUAT_UNIT_TOLERANCE`), plus the floats
/// they decode to by the spec's formulas. They use the extreme codes (+1,
/// and -128 / -32768, which clamp to -1) and a code near 1/sqrt(2).
pub fn raw_rotation_values(ct: u32, n: usize, seed: usize) -> (Vec<u8>, Vec<f32>) {
    let mut bytes = Vec::new();
    let mut floats = Vec::new();
    // Codes for 1, for -1 (or 1 for unsigned types), near 1/sqrt(2).
    let (one, minus, half): (i64, i64, i64) = match ct {
        FLOAT => (0, 0, 0), // unused: floats are written directly below
        BYTE => (127, -128, 90),
        UNSIGNED_BYTE => (255, 255, 180),
        SHORT => (32767, -32768, 23170),
        UNSIGNED_SHORT => (65535, 65535, 46341),
        _ => unreachable!(),
    };
    for i in 0..n {
        let k = (i + seed) % 4;
        let pattern = (i + seed) % 3;
        for c in 0..4 {
            let code = match pattern {
                0 if c == k => one,
                1 if c == k => minus,
                2 if c == k || c == (k + 1) % 4 => half,
                _ => 0,
            };
            match ct {
                FLOAT => {
                    let v = match pattern {
                        0 if c == k => 1.0,
                        1 if c == k => -1.0,
                        2 if c == k || c == (k + 1) % 4 => std::f32::consts::FRAC_1_SQRT_2,
                        _ => 0.0,
                    };
                    bytes.extend_from_slice(&v.to_le_bytes());
                    floats.push(v);
                }
                BYTE => {
                    bytes.push(code as i8 as u8);
                    floats.push((code as f32 / 127.0).max(-1.0));
                }
                UNSIGNED_BYTE => {
                    bytes.push(code as u8);
                    floats.push(code as f32 / 255.0);
                }
                SHORT => {
                    bytes.extend_from_slice(&(code as i16).to_le_bytes());
                    floats.push((code as f32 / 32767.0).max(-1.0));
                }
                _ => {
                    bytes.extend_from_slice(&(code as u16).to_le_bytes());
                    floats.push(code as f32 / 65535.0);
                }
            }
        }
    }
    (bytes, floats)
}

/// Raw output values for `n` floats of component type `ct`, plus the
/// floats they decode to by the spec's formulas. `seed` varies the values;
/// the extremes (-128, -32768, 255, 65535) are included.
pub fn raw_values(ct: u32, n: usize, seed: usize) -> (Vec<u8>, Vec<f32>) {
    let mut bytes = Vec::new();
    let mut floats = Vec::new();
    for i in 0..n {
        let k = (i * 7 + seed * 13) % 23;
        match ct {
            FLOAT => {
                let v = 0.25 + k as f32 * 0.125 - 1.0;
                bytes.extend_from_slice(&v.to_le_bytes());
                floats.push(v);
            }
            BYTE => {
                let c: i8 = [-128, -127, -64, 1, 5, 64, 100, 127][k % 8];
                bytes.push(c as u8);
                floats.push((f32::from(c) / 127.0).max(-1.0));
            }
            UNSIGNED_BYTE => {
                let c: u8 = [1, 17, 64, 128, 200, 255][k % 6];
                bytes.push(c);
                floats.push(f32::from(c) / 255.0);
            }
            SHORT => {
                let c: i16 = [-32768, -32767, -1000, 7, 1234, 32767][k % 6];
                bytes.extend_from_slice(&c.to_le_bytes());
                floats.push((f32::from(c) / 32767.0).max(-1.0));
            }
            UNSIGNED_SHORT => {
                let c: u16 = [3, 300, 32768, 40000, 65535][k % 5];
                bytes.extend_from_slice(&c.to_le_bytes());
                floats.push(f32::from(c) / 65535.0);
            }
            _ => unreachable!(),
        }
    }
    (bytes, floats)
}

/// Three animations (STEP, LINEAR, CUBICSPLINE); each has one channel per
/// (path, component type) on its own node, weights on nodes with a
/// 2-target mesh, all channels sharing one input accessor. Returns the
/// builder and, per animation, what each channel stores, in channel order.
pub fn full_asset() -> (Builder, Vec<Vec<Stored>>) {
    let mut b = Builder::new();
    let mesh = b.mesh_with_targets(2);
    let mut all = Vec::new();
    let mut seed = 0;
    for interp in ["STEP", "LINEAR", "CUBICSPLINE"] {
        let input = b.accessor_f32(&FULL_TIMES, "SCALAR");
        b.accessors[input]["min"] = json!([FULL_TIMES[0]]);
        b.accessors[input]["max"] = json!([FULL_TIMES[2]]);
        let per_key = if interp == "CUBICSPLINE" { 3 } else { 1 };
        let mut samplers = Vec::new();
        let mut channels = Vec::new();
        let mut stored = Vec::new();
        for path in ["translation", "rotation", "scale", "weights"] {
            for &ct in component_types(path) {
                let (width, ty) = match path {
                    "rotation" => (4, "VEC4"),
                    "weights" => (2, "SCALAR"),
                    _ => (3, "VEC3"),
                };
                let node = b.node(if path == "weights" { Some(mesh) } else { None });
                let elements = FULL_TIMES.len() * per_key;
                let (bytes, expected) = if path == "rotation" {
                    raw_rotation_values(ct, elements, seed)
                } else {
                    raw_values(ct, elements * width, seed)
                };
                seed += 1;
                let count = if path == "weights" {
                    elements * width
                } else {
                    elements
                };
                let out = b.accessor_raw(&bytes, ct, ct != FLOAT, count, ty);
                samplers.push((input, out, interp));
                channels.push((samplers.len() - 1, node, path));
                stored.push(Stored {
                    path,
                    component_type: ct,
                    interpolation: interp,
                    node,
                    width,
                    expected,
                });
            }
        }
        b.animation(interp, &samplers, &channels);
        all.push(stored);
    }
    (b, all)
}
