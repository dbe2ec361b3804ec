//! Models for the viewer's tests, on top of [`Builder`]: quads with texture
//! coordinates, vertex colours and skin weights, materials (unlit, so that
//! a pixel's colour is the material's, encoded to sRGB, with no lighting
//! in between), PNG images in a buffer view, a `data:` URI or a file, and
//! skins. Include it after `gltf_builder`:
//! `#[path = "common/scene_builder.rs"] mod scene_builder;`.
#![allow(dead_code, reason = "each test binary uses a subset")]

use serde_json::{json, Value};

use crate::gltf_builder::{base64, Builder, FLOAT, UNSIGNED_SHORT};

/// One triangle primitive.
#[derive(Debug, Clone, Default)]
pub struct Prim {
    pub positions: Vec<[f32; 3]>,
    pub uvs: Vec<[f32; 2]>,
    pub colors: Vec<[f32; 4]>,
    pub joints: Vec<[u16; 4]>,
    pub weights: Vec<[f32; 4]>,
    pub indices: Vec<u32>,
    pub material: Option<usize>,
}

/// A quad in the plane `z`, from (x0, y0) (bottom left) to (x1, y1),
/// facing +Z (counter-clockwise seen from +Z), texture coordinates (0, 0)
/// at its top left and (`uv_max`, `uv_max`) at its bottom right.
pub fn quad(x0: f32, y0: f32, x1: f32, y1: f32, z: f32, uv_max: f32) -> Prim {
    Prim {
        positions: vec![[x0, y1, z], [x1, y1, z], [x1, y0, z], [x0, y0, z]],
        uvs: vec![[0.0, 0.0], [uv_max, 0.0], [uv_max, uv_max], [0.0, uv_max]],
        indices: vec![0, 3, 2, 0, 2, 1],
        ..Prim::default()
    }
}

impl Prim {
    /// The same quad facing -Z (its triangles turned).
    pub fn flipped(mut self) -> Prim {
        for t in self.indices.chunks_exact_mut(3) {
            t.swap(1, 2);
        }
        self
    }

    /// With material `m`.
    pub fn with_material(mut self, m: usize) -> Prim {
        self.material = Some(m);
        self
    }

    /// Every vertex skinned to joint slot `j` alone.
    pub fn on_joint(mut self, j: u16) -> Prim {
        self.joints = vec![[j, 0, 0, 0]; self.positions.len()];
        self.weights = vec![[1.0, 0.0, 0.0, 0.0]; self.positions.len()];
        self
    }

    /// Every vertex coloured `c` (COLOR_0, linear RGBA).
    pub fn colored(mut self, c: [f32; 4]) -> Prim {
        self.colors = vec![c; self.positions.len()];
        self
    }
}

/// An RGBA8 image as PNG bytes.
pub fn png(width: u32, height: u32, rgba: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut bytes, width, height);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header().unwrap();
        w.write_image_data(rgba).unwrap();
    }
    bytes
}

/// A `size` x `size` image of four quadrants: `colors` top left, top
/// right, bottom left, bottom right (RGBA8).
pub fn quadrants(size: u32, colors: [[u8; 4]; 4]) -> Vec<u8> {
    let half = size / 2;
    (0..size * size)
        .flat_map(|i| {
            let (x, y) = (i % size, i / size);
            colors[(usize::from(y >= half) * 2) + usize::from(x >= half)]
        })
        .collect()
}

fn flat<const N: usize>(v: &[[f32; N]]) -> Vec<f32> {
    v.iter().flatten().copied().collect()
}

impl Builder {
    /// A mesh of `prims`.
    pub fn mesh_of(&mut self, prims: &[Prim]) -> usize {
        let mut out = Vec::new();
        for p in prims {
            let pos = self.accessor_f32(&flat(&p.positions), "VEC3");
            let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
            for v in &p.positions {
                for c in 0..3 {
                    lo[c] = lo[c].min(v[c]);
                    hi[c] = hi[c].max(v[c]);
                }
            }
            self.accessors[pos]["min"] = json!(lo);
            self.accessors[pos]["max"] = json!(hi);
            let mut attributes = json!({"POSITION": pos});
            if !p.uvs.is_empty() {
                attributes["TEXCOORD_0"] = json!(self.accessor_f32(&flat(&p.uvs), "VEC2"));
            }
            if !p.colors.is_empty() {
                attributes["COLOR_0"] = json!(self.accessor_f32(&flat(&p.colors), "VEC4"));
            }
            if !p.joints.is_empty() {
                let bytes: Vec<u8> = p
                    .joints
                    .iter()
                    .flatten()
                    .flat_map(|j| j.to_le_bytes())
                    .collect();
                attributes["JOINTS_0"] =
                    json!(self.accessor_raw(&bytes, UNSIGNED_SHORT, false, p.joints.len(), "VEC4"));
                attributes["WEIGHTS_0"] = json!(self.accessor_f32(&flat(&p.weights), "VEC4"));
            }
            let bytes: Vec<u8> = p.indices.iter().flat_map(|i| i.to_le_bytes()).collect();
            let indices = self.accessor_raw(&bytes, 5125, false, p.indices.len(), "SCALAR");
            let mut prim = json!({"attributes": attributes, "indices": indices});
            if let Some(m) = p.material {
                prim["material"] = json!(m);
            }
            out.push(prim);
        }
        self.meshes.push(json!({ "primitives": out }));
        self.meshes.len() - 1
    }

    /// A named node with a mesh (or none), a translation and children.
    pub fn named(
        &mut self,
        name: &str,
        mesh: Option<usize>,
        translation: [f32; 3],
        children: &[usize],
    ) -> usize {
        let mut n = json!({"name": name, "translation": translation});
        if let Some(m) = mesh {
            n["mesh"] = json!(m);
        }
        if !children.is_empty() {
            n["children"] = json!(children);
        }
        self.nodes.push(n);
        self.nodes.len() - 1
    }

    /// An unlit material (`KHR_materials_unlit`) of base colour `color`,
    /// with `texture` (a texture index, `extra` merged into its info) and
    /// any further properties in `more` (`alphaMode`, `doubleSided`, ...).
    pub fn unlit(
        &mut self,
        color: [f32; 4],
        texture: Option<(usize, Value)>,
        more: Value,
    ) -> usize {
        let mut pbr = json!({"baseColorFactor": color, "metallicFactor": 0.0});
        if let Some((index, extra)) = texture {
            let mut info = json!({ "index": index });
            if let (Some(info), Some(extra)) = (info.as_object_mut(), extra.as_object()) {
                info.extend(extra.clone());
            }
            pbr["baseColorTexture"] = info;
        }
        let mut m = json!({"pbrMetallicRoughness": pbr, "extensions": {"KHR_materials_unlit": {}}});
        if let (Some(m), Some(more)) = (m.as_object_mut(), more.as_object()) {
            m.extend(more.clone());
        }
        if !self
            .extensions_used
            .iter()
            .any(|e| e == "KHR_materials_unlit")
        {
            self.extensions_used.push("KHR_materials_unlit".into());
        }
        self.materials.push(m);
        self.materials.len() - 1
    }

    /// An image whose PNG bytes lie in a buffer view.
    pub fn image_in_view(&mut self, png: &[u8]) -> usize {
        let view = self.view(png, None);
        self.images
            .push(json!({"bufferView": view, "mimeType": "image/png"}));
        self.images.len() - 1
    }

    /// An image as a base64 `data:` URI.
    pub fn image_data_uri(&mut self, png: &[u8]) -> usize {
        self.images
            .push(json!({"uri": format!("data:image/png;base64,{}", base64(png))}));
        self.images.len() - 1
    }

    /// An image at a URI (a file beside the model).
    pub fn image_uri(&mut self, uri: &str) -> usize {
        self.images.push(json!({ "uri": uri }));
        self.images.len() - 1
    }

    /// A texture of `image`, with a sampler of these glTF enums (mag,
    /// min, wrap S, wrap T), or none (the default sampler).
    pub fn texture(&mut self, image: usize, sampler: Option<[u32; 4]>) -> usize {
        let mut t = json!({ "source": image });
        if let Some([mag, min, s, tt]) = sampler {
            self.samplers
                .push(json!({"magFilter": mag, "minFilter": min, "wrapS": s, "wrapT": tt}));
            t["sampler"] = json!(self.samplers.len() - 1);
        }
        self.textures.push(t);
        self.textures.len() - 1
    }

    /// A skin of `joints` with the inverse bind matrices of their rest
    /// translations `at` (no rotation or scale in the rest pose).
    pub fn skin_of(&mut self, joints: &[usize], at: &[[f32; 3]]) -> usize {
        let ibms: Vec<f32> = at
            .iter()
            .flat_map(|t| {
                let mut m = [0.0f32; 16];
                m[0] = 1.0;
                m[5] = 1.0;
                m[10] = 1.0;
                m[15] = 1.0;
                m[12] = -t[0];
                m[13] = -t[1];
                m[14] = -t[2];
                m
            })
            .collect();
        let acc = self.accessor_raw(
            &crate::gltf_builder::f32_bytes(&ibms),
            FLOAT,
            false,
            at.len(),
            "MAT4",
        );
        self.skins
            .push(json!({"joints": joints, "inverseBindMatrices": acc}));
        self.skins.len() - 1
    }

    /// A LINEAR translation animation `name` of `node` from `from` at t = 0
    /// to `to` at t = 1.
    pub fn slide(&mut self, name: &str, node: usize, from: [f32; 3], to: [f32; 3]) -> usize {
        let times = self.accessor_f32(&[0.0, 1.0], "SCALAR");
        self.accessors[times]["min"] = json!([0.0]);
        self.accessors[times]["max"] = json!([1.0]);
        let mut v = from.to_vec();
        v.extend_from_slice(&to);
        let values = self.accessor_f32(&v, "VEC3");
        self.animation(
            name,
            &[(times, values, "LINEAR")],
            &[(0, node, "translation")],
        )
    }
}
