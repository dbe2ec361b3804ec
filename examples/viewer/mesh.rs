//! The vertex data of a glTF file as the viewer draws it: every triangle
//! primitive of every mesh, its vertices in one layout ([`Vertex`]), its
//! triangle-list indices and its morph targets' position deltas.
//!
//! Every accessor goes through the crate's checked reader
//! (`Document::read_accessor`: ranges, strides, sparse accessors,
//! normalized integers), so a broken file ends in an error naming the mesh
//! and primitive, never in a panic.

use glam::Vec3;
use gltf::json;
use json::mesh::{Mode, Semantic};
use json::validation::Checked;
use keyframe_gpu::gltf::Document;

/// One vertex as the vertex shader reads it (`scene.wgsl`'s `VertexIn`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Vertex {
    /// Bind-pose position.
    pub position: [f32; 3],
    /// Normal; zero when the primitive has none (the shader then lights the
    /// flat face).
    pub normal: [f32; 3],
    /// The texture coordinates the material's base colour texture uses.
    pub uv: [f32; 2],
    /// `COLOR_0` (linear RGBA), white when absent.
    pub color: [f32; 4],
    /// `JOINTS_0`: indices into the skin's joint list.
    pub joints: [u32; 4],
    /// `WEIGHTS_0`.
    pub weights: [f32; 4],
}

/// One triangle primitive, ready to upload.
#[derive(Debug, Clone, Default)]
pub struct Primitive {
    /// Its vertices.
    pub vertices: Vec<Vertex>,
    /// Triangle list, indices into `vertices`.
    pub indices: Vec<u32>,
    /// Morph targets.
    pub targets: u32,
    /// Target `t`'s position delta of vertex `v` at `t * vertices.len() + v`
    /// (w = 0).
    pub deltas: Vec<[f32; 4]>,
    /// Its material (`None`: glTF's default material).
    pub material: Option<usize>,
    /// Bounds of its positions with morph weights anywhere in [0, 1]
    /// (the union of [`Primitive::reach`] over its vertices).
    pub lo: Vec3,
    /// Upper bounds.
    pub hi: Vec3,
}

impl Primitive {
    /// Where vertex `v` can be with morph weights anywhere in [0, 1]: its
    /// position plus, per axis, the sum of its targets' negative deltas
    /// (low) or positive ones (high).
    pub fn reach(&self, v: usize) -> (Vec3, Vec3) {
        let p = Vec3::from(self.vertices[v].position);
        let n = self.vertices.len();
        let (mut lo, mut hi) = (p, p);
        for t in 0..self.targets as usize {
            let d = self.deltas[t * n + v];
            let d = Vec3::new(d[0], d[1], d[2]);
            lo += d.min(Vec3::ZERO);
            hi += d.max(Vec3::ZERO);
        }
        (lo, hi)
    }
}

/// A glTF mesh: its triangle primitives (points and lines are left out).
#[derive(Debug, Clone, Default)]
pub struct Mesh {
    /// The primitives drawn.
    pub primitives: Vec<Primitive>,
}

/// Reads every mesh of `doc`. `uv_set(material)` names the texture
/// coordinate set a primitive of that material samples its base colour
/// texture with.
///
/// # Errors
/// A message naming the mesh, primitive and attribute: an accessor the
/// reader refuses, of the wrong width, or of another count than POSITION;
/// an index out of range.
pub fn read_meshes(
    doc: &Document,
    uv_set: impl Fn(Option<usize>) -> u32,
) -> Result<Vec<Mesh>, String> {
    doc.root
        .meshes
        .iter()
        .enumerate()
        .map(|(m, mesh)| {
            let mut primitives = Vec::new();
            for (p, prim) in mesh.primitives.iter().enumerate() {
                let material = prim.material.map(|i| i.value());
                let read = read_primitive(doc, prim, uv_set(material))
                    .map_err(|e| format!("mesh {m}, primitive {p}: {e}"))?;
                if let Some(mut read) = read {
                    read.material = material;
                    primitives.push(read);
                }
            }
            Ok(Mesh { primitives })
        })
        .collect()
}

/// An accessor of `doc` decoded to `f32`, checked to have one of `widths`
/// components per element and, with `count`, that many elements.
fn floats(
    doc: &Document,
    accessor: usize,
    what: &str,
    widths: &[usize],
    count: Option<usize>,
) -> Result<keyframe_gpu::gltf::AccessorData, String> {
    let data = doc
        .read_accessor(accessor)
        .map_err(|e| format!("{what}: {e}"))?;
    if !widths.contains(&data.components) {
        return Err(format!(
            "{what}: accessor {accessor} has {} components per element, expected {}",
            data.components,
            widths
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(" or ")
        ));
    }
    if let Some(n) = count.filter(|&n| n != data.count) {
        return Err(format!(
            "{what}: accessor {accessor} has {} elements, POSITION has {n}",
            data.count
        ));
    }
    Ok(data)
}

/// The accessor of attribute `semantic`, if the primitive has it.
fn attribute(prim: &json::mesh::Primitive, semantic: Semantic) -> Option<usize> {
    prim.attributes
        .get(&Checked::Valid(semantic))
        .map(|i| i.value())
}

/// Reads one primitive; `None` for points, lines and a primitive without
/// vertices, which the viewer does not draw.
fn read_primitive(
    doc: &Document,
    prim: &json::mesh::Primitive,
    uv_set: u32,
) -> Result<Option<Primitive>, String> {
    let mode = match prim.mode {
        Checked::Valid(m) => m,
        Checked::Invalid => return Err("unknown primitive mode".into()),
    };
    if !matches!(
        mode,
        Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan
    ) {
        return Ok(None);
    }
    let Some(pos) = attribute(prim, Semantic::Positions) else {
        return Ok(None);
    };
    let positions = floats(doc, pos, "POSITION", &[3], None)?;
    let n = positions.count;
    if n == 0 {
        return Ok(None);
    }
    let mut vertices: Vec<Vertex> = positions
        .values
        .chunks_exact(3)
        .map(|p| Vertex {
            position: [p[0], p[1], p[2]],
            normal: [0.0; 3],
            uv: [0.0; 2],
            color: [1.0; 4],
            joints: [0; 4],
            weights: [1.0, 0.0, 0.0, 0.0],
        })
        .collect();
    read_attributes(doc, prim, uv_set, &mut vertices)?;
    let order: Vec<u32> = match prim.indices {
        Some(i) => floats(doc, i.value(), "indices", &[1], None)?
            .values
            .iter()
            .map(|&x| x as u32)
            .collect(),
        None => (0..n as u32).collect(),
    };
    if let Some(i) = order.iter().find(|&&i| i as usize >= n) {
        return Err(format!("index {i} is out of range ({n} vertices)"));
    }
    let indices = triangle_list(mode, &order);
    let (targets, deltas) = read_targets(doc, prim, n)?;
    let mut prim = Primitive {
        vertices,
        indices,
        targets,
        deltas,
        material: None,
        lo: Vec3::splat(f32::INFINITY),
        hi: Vec3::splat(f32::NEG_INFINITY),
    };
    for v in 0..n {
        let (lo, hi) = prim.reach(v);
        prim.lo = prim.lo.min(lo);
        prim.hi = prim.hi.max(hi);
    }
    if !(prim.lo.is_finite() && prim.hi.is_finite()) {
        return Err("its positions and morph targets hold no finite bounds".into());
    }
    Ok(Some(prim))
}

/// Reads the attributes other than POSITION into `vertices`: NORMAL,
/// TEXCOORD_`uv_set`, COLOR_0, JOINTS_0 and WEIGHTS_0, each where the
/// primitive has it.
fn read_attributes(
    doc: &Document,
    prim: &json::mesh::Primitive,
    uv_set: u32,
    vertices: &mut [Vertex],
) -> Result<(), String> {
    let n = vertices.len();
    if let Some(a) = attribute(prim, Semantic::Normals) {
        let d = floats(doc, a, "NORMAL", &[3], Some(n))?;
        for (v, c) in vertices.iter_mut().zip(d.values.chunks_exact(3)) {
            v.normal = [c[0], c[1], c[2]];
        }
    }
    if let Some(a) = attribute(prim, Semantic::TexCoords(uv_set)) {
        let d = floats(doc, a, &format!("TEXCOORD_{uv_set}"), &[2], Some(n))?;
        for (v, c) in vertices.iter_mut().zip(d.values.chunks_exact(2)) {
            v.uv = [c[0], c[1]];
        }
    }
    if let Some(a) = attribute(prim, Semantic::Colors(0)) {
        let d = floats(doc, a, "COLOR_0", &[3, 4], Some(n))?;
        let w = d.components;
        for (v, c) in vertices.iter_mut().zip(d.values.chunks_exact(w)) {
            v.color = [c[0], c[1], c[2], if w == 4 { c[3] } else { 1.0 }];
        }
    }
    if let Some(a) = attribute(prim, Semantic::Joints(0)) {
        let d = floats(doc, a, "JOINTS_0", &[4], Some(n))?;
        for (v, c) in vertices.iter_mut().zip(d.values.chunks_exact(4)) {
            // Stored as unsigned integers: exact in f32 below 2^24.
            v.joints = [c[0] as u32, c[1] as u32, c[2] as u32, c[3] as u32];
        }
    }
    if let Some(a) = attribute(prim, Semantic::Weights(0)) {
        let d = floats(doc, a, "WEIGHTS_0", &[4], Some(n))?;
        for (v, c) in vertices.iter_mut().zip(d.values.chunks_exact(4)) {
            v.weights = [c[0], c[1], c[2], c[3]];
        }
    }
    Ok(())
}

/// The morph targets' count and position deltas (`n` per target, zero for
/// a target without POSITION).
fn read_targets(
    doc: &Document,
    prim: &json::mesh::Primitive,
    n: usize,
) -> Result<(u32, Vec<[f32; 4]>), String> {
    let targets = prim.targets.as_deref().unwrap_or_default();
    let mut deltas = Vec::with_capacity(targets.len() * n);
    for (t, target) in targets.iter().enumerate() {
        let Some(a) = target.positions.map(|i| i.value()) else {
            deltas.extend(std::iter::repeat_n([0.0; 4], n));
            continue;
        };
        let d = floats(doc, a, &format!("target {t} POSITION"), &[3], Some(n))?;
        deltas.extend(d.values.chunks_exact(3).map(|c| [c[0], c[1], c[2], 0.0]));
    }
    Ok((targets.len() as u32, deltas))
}

/// `order` (indices or vertex numbers, checked) as a triangle list.
fn triangle_list(mode: Mode, order: &[u32]) -> Vec<u32> {
    match mode {
        Mode::TriangleStrip => (2..order.len())
            .flat_map(|i| {
                // Every other triangle swaps two corners to keep the winding.
                if i % 2 == 0 {
                    [order[i - 2], order[i - 1], order[i]]
                } else {
                    [order[i - 1], order[i - 2], order[i]]
                }
            })
            .collect(),
        Mode::TriangleFan => (2..order.len())
            .flat_map(|i| [order[0], order[i - 1], order[i]])
            .collect(),
        _ => order[..order.len() / 3 * 3].to_vec(),
    }
}
