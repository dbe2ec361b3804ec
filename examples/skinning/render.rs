//! Skinned rendering shared by the `skinning` example (a headless contact
//! sheet), `tests/skin_render.rs` and `tests/material_render.rs`: a scene
//! (rig, clips, mesh), and a [`MeshRenderer`] whose vertex shader skins
//! from the joint-matrix buffer an [`Animator`]'s compute passes wrote,
//! recorded in the same command encoder, with no readback. It draws one
//! skinned mesh (or a file's rigid mesh nodes) in a false-colour ramp; the
//! `viewer` example has its own draw of whole models with their materials
//! (`examples/viewer/draw.rs`).
//!
//! Each draw shows one or more animated instances: instance `k` of a draw
//! reads the joint matrices, globals and morph weights of animated instance
//! `first + k` and stands on a grid ([`Grid`]). The contact sheet draws one
//! instance per frame.
#![allow(dead_code, reason = "shared with the tests; each uses part of it")]

use std::path::Path;

use crate::headless::Headless;
use glam::{Mat4, Quat, Vec3, Vec4};
use keyframe_gpu::{
    Action, AnimationLibrary, Animator, Clip, Instance, Interpolation, Mask, MixerDesc, Property,
    Track,
};
use keyframe_gpu::{NodeTransform, Rig};

/// What each frame of a sheet plays: the scene's clip at a time per frame,
/// or a mix of actions per frame (the mixer: crossfades, additive layers).
#[derive(Debug, Clone)]
pub enum Play {
    /// One frame per time (clip-local seconds, clamped).
    Times(Vec<f64>),
    /// One frame per character: `counts[f]` consecutive actions of
    /// `actions` are frame `f`'s.
    Mix {
        actions: Vec<Action>,
        counts: Vec<u32>,
        masks: Vec<Mask>,
    },
}

impl Play {
    /// Frames of the sheet.
    pub fn frames(&self) -> usize {
        match self {
            Play::Times(t) => t.len(),
            Play::Mix { counts, .. } => counts.len(),
        }
    }

    /// The animator for these frames, with its frames set.
    fn animator(&self, h: &Headless, scene: &Scene) -> Result<Animator, String> {
        let n = self.frames() as u32;
        match self {
            Play::Times(times) => {
                let mut animator = Animator::new(&h.device, &h.queue, &scene.bound()?, n)
                    .map_err(|e| e.to_string())?;
                let inst: Vec<Instance> = times
                    .iter()
                    .map(|&t| Instance::new(scene.clip, t))
                    .collect();
                animator
                    .set_instances(&h.queue, &inst)
                    .map_err(|e| e.to_string())?;
                Ok(animator)
            }
            Play::Mix {
                actions,
                counts,
                masks,
            } => {
                let desc = MixerDesc {
                    characters: n,
                    actions_per_character: counts.iter().copied().max().unwrap_or(1).max(1),
                    masks: masks.clone(),
                };
                let mut animator =
                    Animator::with_mixer(&h.device, &h.queue, &scene.bound()?, &desc)
                        .map_err(|e| e.to_string())?;
                animator
                    .set_actions(&h.queue, actions, counts)
                    .map_err(|e| e.to_string())?;
                Ok(animator)
            }
        }
    }

    /// The same poses on the CPU twin.
    fn cpu(&self, scene: &Scene) -> Result<keyframe_gpu::Poses, String> {
        let bound = scene.bound()?;
        match self {
            Play::Times(times) => {
                let inst: Vec<Instance> = times
                    .iter()
                    .map(|&t| Instance::new(scene.clip, t))
                    .collect();
                keyframe_gpu::cpu::poses(&bound, &inst).map_err(|e| e.to_string())
            }
            Play::Mix {
                actions,
                counts,
                masks,
            } => keyframe_gpu::cpu::mixed_poses(&bound, masks, actions, counts)
                .map_err(|e| e.to_string()),
        }
    }
}

/// A run of the mesh's vertices that one node instantiates (one glTF mesh,
/// its triangle primitives merged).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    /// The node: its global transform places the part (rigid), or it is the
    /// skinned mesh's node.
    pub node: u32,
    /// Its mesh in the rig (where its morph weights are).
    pub rig_mesh: u32,
    /// First vertex.
    pub first_vertex: u32,
    /// Number of vertices.
    pub vertex_count: u32,
}

/// Mesh data the render needs: every part's vertices in one array.
#[derive(Debug, Clone, Default)]
pub struct MeshData {
    /// Bind-pose positions.
    pub positions: Vec<[f32; 3]>,
    /// JOINTS_0 (indices into the skin's joint list).
    pub joints: Vec<[u32; 4]>,
    /// WEIGHTS_0.
    pub weights: Vec<[f32; 4]>,
    /// Triangle list.
    pub indices: Vec<u32>,
    /// Per morph target, one position delta per vertex (zero for the
    /// vertices of a part whose mesh has fewer targets).
    pub morph_deltas: Vec<Vec<[f32; 3]>>,
    /// The parts, in vertex order, covering every vertex.
    pub parts: Vec<Part>,
}

/// What to render.
#[derive(Debug, Clone)]
pub struct Scene {
    /// For messages.
    pub name: String,
    /// The rig.
    pub rig: Rig,
    /// The clips.
    pub library: AnimationLibrary,
    /// The clip played first.
    pub clip: u32,
    /// The mesh drawn.
    pub mesh: MeshData,
    /// The node of the first part (the skinned mesh's node when skinned).
    pub mesh_node: u32,
    /// The first part's mesh index in the rig.
    pub rig_mesh: u32,
    /// The skin, if skinned (then the mesh is one part).
    pub skin: Option<u32>,
    /// Shade by this material's animated factors instead of by joint
    /// weights (the tube's material demo, [`material_scene`]).
    pub material: Option<Material>,
}

impl Scene {
    /// The clips bound to the rig.
    pub fn bound(&self) -> Result<keyframe_gpu::BoundLibrary, String> {
        self.library.bind(&self.rig).map_err(|e| e.to_string())
    }
}

/// A material whose factors `KHR_animation_pointer` tracks drive: the
/// fragment shader reads its base colour, emissive strength and base colour
/// texture offset for its instance from the sampler's output buffer, at the
/// slots [`AnimationLibrary::pointer_target`] gives (no readback). The
/// texture is procedural: a checker over the tube's cylindrical UVs
/// (`render.wgsl`, `tube_uv`), so only the tube scene uses it. Sheets of
/// [`Play::Times`] only: the mixer's sampler rows are per action, not per
/// frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Material {
    /// Its index in the document (`/materials/{index}/...`).
    pub index: u32,
    /// Its `emissiveFactor` (not animated), scaled by the animated
    /// strength.
    pub emissive_factor: [f32; 3],
}

impl Material {
    /// `/materials/{index}/pbrMetallicRoughness/baseColorFactor` (float4).
    pub fn base_color_pointer(&self) -> String {
        format!(
            "/materials/{}/pbrMetallicRoughness/baseColorFactor",
            self.index
        )
    }

    /// `/materials/{index}/extensions/KHR_materials_emissive_strength/emissiveStrength`
    /// (float).
    pub fn emissive_strength_pointer(&self) -> String {
        format!(
            "/materials/{}/extensions/KHR_materials_emissive_strength/emissiveStrength",
            self.index
        )
    }

    /// `/materials/{index}/pbrMetallicRoughness/baseColorTexture/extensions/KHR_texture_transform/offset`
    /// (float2).
    pub fn texture_offset_pointer(&self) -> String {
        format!(
            "/materials/{}/pbrMetallicRoughness/baseColorTexture/extensions/KHR_texture_transform/offset",
            self.index
        )
    }

    /// `[base colour, emissive strength, texture offset, stride]`: where
    /// each factor's first float lies in an instance's block of `library`'s
    /// output, and the block's size (`render.wgsl`'s `Draw.material`).
    ///
    /// # Errors
    /// When `library` has no slot for one of them, or one of another width.
    pub fn slots(&self, library: &AnimationLibrary) -> Result<[u32; 4], String> {
        let slot = |pointer: String, width: u32| {
            let t = library
                .pointer_target(&pointer)
                .ok_or_else(|| format!("no clip animates {pointer}"))?;
            if t.width != width {
                return Err(format!("{pointer}: {} floats, expected {width}", t.width));
            }
            Ok(t.offset)
        };
        Ok([
            slot(self.base_color_pointer(), 4)?,
            slot(self.emissive_strength_pointer(), 1)?,
            slot(self.texture_offset_pointer(), 2)?,
            library.output_stride(),
        ])
    }
}

impl Scene {
    /// The played clip's duration.
    pub fn duration(&self) -> f32 {
        self.library.clips()[self.clip as usize].duration()
    }
}

/// Number of bones of the tube and its height (one unit per bone).
pub const TUBE_BONES: u32 = 4;
/// Tube radius.
pub const TUBE_RADIUS: f32 = 0.3;
/// Bend of each joint above the root at the clip's extremes, in degrees.
pub const TUBE_BEND_DEGREES: f32 = 35.0;

/// Weights of the bones for a point at height `y` of the tube: bone `b`
/// spans `[b, b + 1]`; within 0.25 of a joint the two bones blend linearly
/// (0.5 / 0.5 at the joint).
fn tube_weights(y: f32) -> ([u32; 4], [f32; 4]) {
    let last = TUBE_BONES - 1;
    let b = (y.floor().max(0.0) as u32).min(last);
    let f = y - b as f32;
    if f < 0.25 && b > 0 {
        let w = 0.5 + 2.0 * f;
        return ([b, b - 1, 0, 0], [w, 1.0 - w, 0.0, 0.0]);
    }
    if f > 0.75 && b < last {
        let w = 0.5 + 2.0 * (1.0 - f);
        return ([b, b + 1, 0, 0], [w, 1.0 - w, 0.0, 0.0]);
    }
    ([b, 0, 0, 0], [1.0, 0.0, 0.0, 0.0])
}

/// A tube (cylinder with caps) along +Y from 0 to 4, skinned to a 4-bone
/// chain (joints at y = 0, 1, 2, 3), with one "bulge" morph target. The
/// clip (4 s) bends joints 1 to 3 about +Z to +35, 0, -35, 0 degrees at
/// t = 1, 2, 3, 4 and drives the bulge 0, 1, 0, 1, 0. It starts at rest:
/// at t = 0 the pose is the bind pose and the bulge weight is 0.
pub fn tube_scene() -> Scene {
    let mut b = Rig::builder();
    let mut joints = Vec::new();
    let mut parent = None;
    for k in 0..TUBE_BONES {
        let t = if k == 0 { [0.0; 3] } else { [0.0, 1.0, 0.0] };
        let n = b.node(parent, NodeTransform::translation(t));
        joints.push(n);
        parent = Some(n);
    }
    let mesh_node = b.node(None, NodeTransform::IDENTITY);
    let rig_mesh = b.mesh(1, vec![0.0]);
    let ibms = (0..TUBE_BONES)
        .map(|k| Mat4::from_translation(Vec3::new(0.0, -(k as f32), 0.0)).to_cols_array())
        .collect();
    let skin = b.skin(joints.clone(), ibms);
    b.attach(mesh_node, rig_mesh, Some(skin));
    // Built in code from valid parts: cannot fail.
    let rig = b.build().expect("the tube rig is valid");
    Scene {
        name: "tube (built in code)".into(),
        rig,
        library: tube_clips(&joints, mesh_node),
        clip: 0,
        mesh: tube_mesh(mesh_node, rig_mesh),
        mesh_node,
        rig_mesh,
        skin: Some(skin),
        material: None,
    }
}

/// A LINEAR rotation track of `node` about +Z: at `times[k]`, `angles[k]`
/// radians.
fn z_rotation_track(node: u32, times: impl Into<std::sync::Arc<[f32]>>, angles: &[f32]) -> Track {
    Track::new(
        node,
        Property::Rotation,
        Interpolation::Linear,
        times,
        angles
            .iter()
            .flat_map(|&x| Quat::from_rotation_z(x).to_array())
            .collect(),
    )
}

/// The tube's clips ("bend", "curl", "wiggle"; see [`tube_scene`]) over
/// its `joints` and the bulge weight of `mesh_node`.
fn tube_clips(joints: &[u32], mesh_node: u32) -> AnimationLibrary {
    let times: std::sync::Arc<[f32]> = vec![0.0, 1.0, 2.0, 3.0, 4.0].into();
    let a = TUBE_BEND_DEGREES.to_radians();
    let angles = [0.0, a, 0.0, -a, 0.0];
    let mut tracks: Vec<Track> = joints[1..]
        .iter()
        .map(|&j| z_rotation_track(j, times.clone(), &angles))
        .collect();
    tracks.push(Track::weights(
        mesh_node,
        1,
        Interpolation::Linear,
        times,
        vec![0.0, 1.0, 0.0, 1.0, 0.0],
    ));
    // "curl": every joint above the root turns the same way, 0 to 40 to 0
    // degrees about +Z over 4 s (a C); with "bend", a crossfade target.
    let c = 40f32.to_radians();
    let curl: Vec<Track> = joints[1..]
        .iter()
        .map(|&j| z_rotation_track(j, vec![0.0, 2.0, 4.0], &[0.0, c, 0.0]))
        .collect();
    // "wiggle", meant as an additive layer (reference time 0, at rest): the
    // top joint swings +-40 degrees about +Z once a second, and the bulge
    // pulses by 0.6.
    let steps = 17;
    let wiggle_times: Vec<f32> = (0..steps).map(|k| k as f32 * 0.25).collect();
    let swing = 40f32.to_radians();
    let swings: Vec<f32> = (0..steps)
        .map(|k| [0.0, swing, 0.0, -swing][k % 4])
        .collect();
    let wiggle = vec![
        z_rotation_track(
            joints[TUBE_BONES as usize - 1],
            wiggle_times.clone(),
            &swings,
        ),
        Track::weights(
            mesh_node,
            1,
            Interpolation::Linear,
            wiggle_times,
            (0..steps).map(|k| [0.0, 0.6][k % 2]).collect(),
        ),
    ];
    AnimationLibrary::new(vec![
        Clip::new("bend", tracks),
        Clip::new("curl", curl),
        Clip::new("wiggle", wiggle),
    ])
    .expect("the tube clips are valid")
}

/// The tube's mesh: rings of vertices up the tube, weighted to its
/// joints, capped at both ends, with the "bulge" morph target; one part,
/// drawn at `mesh_node` as mesh `rig_mesh`.
fn tube_mesh(mesh_node: u32, rig_mesh: u32) -> MeshData {
    const RINGS: u32 = 41;
    const SEGMENTS: u32 = 24;
    let height = TUBE_BONES as f32;
    let mut mesh = MeshData::default();
    let mut bulge = Vec::new();
    for r in 0..RINGS {
        let y = height * r as f32 / (RINGS - 1) as f32;
        let (j, w) = tube_weights(y);
        let out = 0.25 * (std::f32::consts::PI * y / height).sin();
        for s in 0..SEGMENTS {
            let phi = std::f32::consts::TAU * s as f32 / SEGMENTS as f32;
            let (sin, cos) = phi.sin_cos();
            mesh.positions
                .push([TUBE_RADIUS * cos, y, TUBE_RADIUS * sin]);
            mesh.joints.push(j);
            mesh.weights.push(w);
            bulge.push([out * cos, 0.0, out * sin]);
        }
    }
    for r in 0..RINGS - 1 {
        for s in 0..SEGMENTS {
            let a = r * SEGMENTS + s;
            let b = r * SEGMENTS + (s + 1) % SEGMENTS;
            let (c, d) = (a + SEGMENTS, b + SEGMENTS);
            mesh.indices.extend_from_slice(&[a, c, b, b, c, d]);
        }
    }
    // Caps: a centre vertex at each end, fanned to its ring.
    for (ring, y) in [(0, 0.0), (RINGS - 1, height)] {
        let centre = mesh.positions.len() as u32;
        let (j, w) = tube_weights(y);
        mesh.positions.push([0.0, y, 0.0]);
        mesh.joints.push(j);
        mesh.weights.push(w);
        bulge.push([0.0; 3]);
        for s in 0..SEGMENTS {
            let a = ring * SEGMENTS + s;
            let b = ring * SEGMENTS + (s + 1) % SEGMENTS;
            mesh.indices.extend_from_slice(&[centre, a, b]);
        }
    }
    mesh.morph_deltas.push(bulge);
    mesh.parts.push(Part {
        node: mesh_node,
        rig_mesh,
        first_vertex: 0,
        vertex_count: mesh.positions.len() as u32,
    });
    mesh
}

/// The tube of [`tube_scene`] with a material animated by pointer
/// channels built in code, shaded by them ([`Material`], index 0, emissive
/// factor (0.25, 0.1, 0.02)). Its one clip, "material" (4 s), bends the
/// tube like "bend" (joints 1 to 3 to +35, 0, -35, 0 degrees at t = 1, 2,
/// 3, 4; no bulge) and animates, all LINEAR:
///
/// | pointer | keys |
/// |---|---|
/// | `/materials/0/pbrMetallicRoughness/baseColorFactor` | t = 0: (0.1, 0.55, 0.9, 1); 2: (0.95, 0.8, 0.1, 1); 4: (0.85, 0.15, 0.35, 1) |
/// | `.../KHR_materials_emissive_strength/emissiveStrength` | t = 0: 0; 2: 2; 4: 0 |
/// | `.../baseColorTexture/extensions/KHR_texture_transform/offset` | t = 0: (0, 0); 4: (2/3, 1/4) |
///
/// The checker (6 cells around, 8 up the tube, looked up at UV + offset)
/// thus turns a third of the way round and slides down two cells (one
/// world unit) over the clip, while the colour goes from blue through
/// yellow to red and glows at t = 2.
pub fn material_scene() -> Scene {
    use keyframe_gpu::{PointerTarget, PointerType};
    let tube = tube_scene();
    let material = Material {
        index: 0,
        emissive_factor: [0.25, 0.1, 0.02],
    };
    // The bend's rotations without its bulge: below y = 0.75 the tube then
    // stays in its bind pose at every time (tests/material_render.rs).
    let mut tracks: Vec<Track> = tube.library.clips()[0]
        .tracks
        .iter()
        .filter(|t| t.property == Property::Rotation)
        .cloned()
        .collect();
    let target = |pointer: String, ty, rest: Vec<f32>| {
        std::sync::Arc::new(PointerTarget::new(pointer, ty, rest))
    };
    tracks.push(Track::for_pointer(
        target(
            material.base_color_pointer(),
            PointerType::Float4,
            vec![1.0; 4],
        ),
        Interpolation::Linear,
        vec![0.0, 2.0, 4.0],
        vec![
            0.1, 0.55, 0.9, 1.0, //
            0.95, 0.8, 0.1, 1.0, //
            0.85, 0.15, 0.35, 1.0,
        ],
    ));
    tracks.push(Track::for_pointer(
        target(
            material.emissive_strength_pointer(),
            PointerType::Float,
            vec![1.0],
        ),
        Interpolation::Linear,
        vec![0.0, 2.0, 4.0],
        vec![0.0, 2.0, 0.0],
    ));
    tracks.push(Track::for_pointer(
        target(
            material.texture_offset_pointer(),
            PointerType::Float2,
            vec![0.0; 2],
        ),
        Interpolation::Linear,
        vec![0.0, 4.0],
        vec![0.0, 0.0, 2.0 / 3.0, 0.25],
    ));
    let library = AnimationLibrary::new(vec![Clip::new("material", tracks)])
        .expect("the material clip is valid");
    Scene {
        name: "tube with an animated material (built in code)".into(),
        library,
        clip: 0,
        material: Some(material),
        ..tube
    }
}

/// A scene from a glTF file, animated by animation `animation`: the first
/// skinned mesh (the lowest-index node with a mesh and a skin) or, when no
/// node is skinned, every node with a mesh, each placed rigidly by its
/// global transform.
#[cfg(feature = "gltf")]
pub fn gltf_scene(path: &Path, animation: u32, asset_root: Option<&Path>) -> Result<Scene, String> {
    let mut options = keyframe_gpu::gltf::LoadOptions::default();
    if let Some(root) = asset_root {
        options = options.with_asset_root(root);
    }
    let imported = keyframe_gpu::gltf::load_with(path, &options).map_err(|e| e.to_string())?;
    let rig = Rig::from_document(&imported.document).map_err(|e| e.to_string())?;
    let library = imported.library;
    if animation as usize >= library.clips().len() {
        return Err(format!(
            "animation {animation} does not exist ({} animations)",
            library.clips().len()
        ));
    }
    let doc =
        gltf::Document::from_json(imported.document.root.clone()).map_err(|e| e.to_string())?;
    let buffers = &imported.document.buffers;
    let nodes = rig.nodes();
    let skinned = nodes
        .iter()
        .position(|n| n.mesh.is_some() && n.skin.is_some());
    let drawn: Vec<(u32, u32)> = nodes
        .iter()
        .enumerate()
        .filter(|&(i, _)| skinned.is_none_or(|s| s == i))
        .filter_map(|(i, n)| Some((i as u32, n.mesh?)))
        .collect();
    let &(mesh_node, rig_mesh) = drawn.first().ok_or("the file has no mesh")?;
    let targets = drawn
        .iter()
        .map(|&(_, m)| rig.meshes()[m as usize].target_count as usize)
        .max()
        .unwrap_or(0);
    let mut mesh = MeshData {
        morph_deltas: vec![Vec::new(); targets],
        ..MeshData::default()
    };
    for &(node, rig_mesh) in &drawn {
        let gmesh = doc.meshes().nth(rig_mesh as usize).ok_or("mesh missing")?;
        let first_vertex = mesh.positions.len() as u32;
        append_primitives(&mut mesh, &gmesh, buffers);
        mesh.parts.push(Part {
            node,
            rig_mesh,
            first_vertex,
            vertex_count: mesh.positions.len() as u32 - first_vertex,
        });
    }
    if mesh.indices.is_empty() {
        return Err("the mesh has no triangles".into());
    }
    let vertex_count = mesh.positions.len() as u32;
    if let Some(i) = mesh.indices.iter().find(|&&i| i >= vertex_count) {
        return Err(format!(
            "index {i} is out of range ({vertex_count} vertices)"
        ));
    }
    Ok(Scene {
        name: path.display().to_string(),
        skin: skinned.and_then(|n| nodes[n].skin),
        rig,
        library,
        clip: animation,
        mesh,
        mesh_node,
        rig_mesh,
        material: None,
    })
}

/// Appends the triangle primitives of `gmesh` to `mesh`: positions,
/// joints and weights (defaults where absent), indices, and one delta per
/// vertex for each of `mesh`'s morph targets (zero where the primitive has
/// fewer).
#[cfg(feature = "gltf")]
fn append_primitives(mesh: &mut MeshData, gmesh: &gltf::Mesh<'_>, buffers: &[Vec<u8>]) {
    for prim in gmesh.primitives() {
        if prim.mode() != gltf::mesh::Mode::Triangles {
            continue;
        }
        let reader = prim.reader(|b| buffers.get(b.index()).map(Vec::as_slice));
        let Some(positions) = reader.read_positions() else {
            continue;
        };
        let base = mesh.positions.len() as u32;
        let positions: Vec<[f32; 3]> = positions.collect();
        let n = positions.len();
        mesh.positions.extend_from_slice(&positions);
        match reader.read_joints(0) {
            Some(j) => mesh.joints.extend(
                j.into_u16()
                    .map(|j| j.map(u32::from))
                    .chain(std::iter::repeat([0; 4]))
                    .take(n),
            ),
            None => mesh.joints.extend(std::iter::repeat_n([0; 4], n)),
        }
        match reader.read_weights(0) {
            Some(w) => mesh.weights.extend(
                w.into_f32()
                    .chain(std::iter::repeat([1.0, 0.0, 0.0, 0.0]))
                    .take(n),
            ),
            None => mesh
                .weights
                .extend(std::iter::repeat_n([1.0, 0.0, 0.0, 0.0], n)),
        }
        match reader.read_indices() {
            Some(i) => mesh.indices.extend(i.into_u32().map(|i| base + i)),
            None => mesh.indices.extend(base..base + n as u32),
        }
        let mut read_targets = reader.read_morph_targets();
        for deltas in mesh.morph_deltas.iter_mut() {
            let d: Vec<[f32; 3]> = read_targets
                .next()
                .and_then(|(p, _, _)| p)
                .map(|p| p.collect())
                .unwrap_or_default();
            deltas.extend(d.into_iter().chain(std::iter::repeat([0.0; 3])).take(n));
        }
    }
}

/// An RGBA8 contact sheet: `cols` columns of `frame` x `frame` pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct Sheet {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Frame size in pixels.
    pub frame: u32,
    /// Frames per row.
    pub cols: u32,
    /// Number of frames.
    pub frames: u32,
    /// RGBA8 rows, top to bottom, `width * 4` bytes each.
    pub rgba: Vec<u8>,
}

impl Sheet {
    /// Pixel `(x, y)` (from the top left) of frame `f`.
    pub fn pixel(&self, f: u32, x: u32, y: u32) -> [u8; 4] {
        let px = (f % self.cols) * self.frame + x;
        let py = (f / self.cols) * self.frame + y;
        let at = ((py * self.width + px) * 4) as usize;
        [
            self.rgba[at],
            self.rgba[at + 1],
            self.rgba[at + 2],
            self.rgba[at + 3],
        ]
    }

    /// Writes the sheet as a PNG.
    pub fn write_png(&self, path: &Path) -> Result<(), String> {
        let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut enc = png::Encoder::new(std::io::BufWriter::new(file), self.width, self.height);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header().map_err(|e| e.to_string())?;
        w.write_image_data(&self.rgba).map_err(|e| e.to_string())
    }
}

/// Background colour of the render (RGBA8).
pub const BACKGROUND: [u8; 4] = [20, 20, 26, 255];

/// How vertices are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pose {
    /// Skinned by the joint matrices (or moved by the mesh node's global
    /// transform when the mesh has no skin), morph targets applied.
    Animated,
    /// Positions as stored (the bind pose), no joints, no morphing.
    Bind,
}

/// A right-handed orthographic projection to wgpu's clip space (depth 0..1).
pub fn orthographic(left: f32, right: f32, bottom: f32, top: f32, near: f32, far: f32) -> Mat4 {
    let (w, h, r) = (
        1.0 / (right - left),
        1.0 / (top - bottom),
        1.0 / (near - far),
    );
    Mat4::from_cols(
        Vec4::new(2.0 * w, 0.0, 0.0, 0.0),
        Vec4::new(0.0, 2.0 * h, 0.0, 0.0),
        Vec4::new(0.0, 0.0, r, 0.0),
        Vec4::new(-(left + right) * w, -(top + bottom) * h, r * near, 1.0),
    )
}

/// A camera for the tube: orthographic, looking down -Z at the square
/// `[-half, half]` around `(0, centre_y)`.
pub fn front_ortho(centre_y: f32, half: f32) -> Mat4 {
    orthographic(-half, half, -half, half, 0.1, 20.0)
        * crate::gfx::look_at(
            Vec3::new(0.0, centre_y, 10.0),
            Vec3::new(0.0, centre_y, 0.0),
            Vec3::Y,
        )
}

/// World positions of every vertex at each instance (clip and time), posed
/// on the CPU twin as the vertex shader poses them (morph targets, then the
/// skin or the part's node): instance 0's vertices, then instance 1's, ...
pub fn pose_on_cpu(scene: &Scene, instances: &[Instance]) -> Result<Vec<Vec3>, String> {
    let poses = keyframe_gpu::cpu::poses(&scene.bound()?, instances).map_err(|e| e.to_string())?;
    Ok(posed_points(scene, &poses))
}

/// [`pose_on_cpu`] from the CPU twin's poses, every instance of them.
fn posed_points(scene: &Scene, poses: &keyframe_gpu::Poses) -> Vec<Vec3> {
    let m = &scene.mesh;
    let frames = poses.instance_count();
    let mut points = Vec::with_capacity(frames as usize * m.positions.len());
    for i in 0..frames {
        let joints = scene.skin.and_then(|s| poses.joints(i, s));
        for part in &m.parts {
            let model = poses.world(i, part.node).unwrap_or(Mat4::IDENTITY);
            let weights = poses.morph_weights(i, part.node).unwrap_or(&[]);
            for v in part.first_vertex..part.first_vertex + part.vertex_count {
                let v = v as usize;
                let mut p = Vec3::from(m.positions[v]);
                for (w, deltas) in weights.iter().zip(&m.morph_deltas) {
                    p += *w * Vec3::from(deltas[v]);
                }
                let world = match joints {
                    Some(joints) => {
                        let mut skin = Mat4::ZERO;
                        for c in 0..4 {
                            let j = m.joints[v][c] as usize;
                            let jm = joints.get(j).copied().unwrap_or(Mat4::IDENTITY);
                            skin += jm * m.weights[v][c];
                        }
                        model * skin * p.extend(1.0)
                    }
                    None => model * p.extend(1.0),
                };
                points.push(world.truncate());
            }
        }
    }
    points
}

/// A perspective camera that sees every frame of the animation: bounds of
/// the mesh posed on the CPU twin at each time.
pub fn fit_camera(scene: &Scene, times: &[f64]) -> Result<Mat4, String> {
    fit_camera_play(scene, &Play::Times(times.to_vec()))
}

/// [`fit_camera`] for any [`Play`].
pub fn fit_camera_play(scene: &Scene, play: &Play) -> Result<Mat4, String> {
    let poses = play.cpu(scene)?;
    let points = posed_points(scene, &poses);
    let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
    for p in &points {
        lo = lo.min(*p);
        hi = hi.max(*p);
    }
    if !lo.is_finite() || !hi.is_finite() {
        return Err("the posed mesh has no finite bounds".into());
    }
    let centre = (lo + hi) * 0.5;
    let radius = ((hi - lo).length() * 0.5).max(1e-3);
    let fov = 40f32.to_radians();
    let dist = radius / (fov * 0.5).sin() * 1.05;
    let dir = Vec3::new(0.55, 0.35, 1.0).normalize();
    let view = crate::gfx::look_at(centre + dir * dist, centre, Vec3::Y);
    let near = (dist - radius * 1.5).max(dist * 0.01);
    let proj = crate::gfx::perspective(fov, 1.0, near, dist + radius * 1.5) * view;
    // Zoom in clip space so that the posed mesh fills 90% of the frame.
    let (mut nlo, mut nhi) = (
        glam::Vec2::splat(f32::INFINITY),
        glam::Vec2::splat(-f32::INFINITY),
    );
    for p in &points {
        let c = proj * p.extend(1.0);
        let ndc = glam::Vec2::new(c.x, c.y) / c.w;
        nlo = nlo.min(ndc);
        nhi = nhi.max(ndc);
    }
    let extent = (nhi - nlo).max_element();
    if !extent.is_finite() || extent <= 0.0 {
        return Ok(proj);
    }
    let s = 1.8 / extent;
    let c = (nlo + nhi) * 0.5;
    let zoom = Mat4::from_cols(
        Vec4::new(s, 0.0, 0.0, 0.0),
        Vec4::new(0.0, s, 0.0, 0.0),
        Vec4::new(0.0, 0.0, 1.0, 0.0),
        Vec4::new(-s * c.x, -s * c.y, 0.0, 1.0),
    );
    Ok(zoom * proj)
}

/// Where the instances of one draw stand: a grid in the XZ plane centred on
/// the origin, instance `k` of the draw in column `k % cols`, row
/// `k / cols` (the vertex shader computes the same offset).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grid {
    /// Distance between columns (along X) and rows (along Z).
    pub spacing: [f32; 2],
    /// Columns.
    pub cols: u32,
    /// Rows.
    pub rows: u32,
}

impl Grid {
    /// One instance at the origin.
    pub const SINGLE: Grid = Grid {
        spacing: [0.0; 2],
        cols: 1,
        rows: 1,
    };

    /// A near-square grid for `n` instances (at least one).
    pub fn for_instances(n: u32, spacing: [f32; 2]) -> Grid {
        let n = n.max(1);
        let cols = (f64::from(n).sqrt().ceil() as u32).max(1);
        Grid {
            spacing,
            cols,
            rows: n.div_ceil(cols),
        }
    }

    /// Offset of instance `k` of the draw.
    pub fn offset(&self, k: u32) -> Vec3 {
        let (col, row) = ((k % self.cols) as f32, (k / self.cols) as f32);
        Vec3::new(
            (col - 0.5 * (self.cols as f32 - 1.0)) * self.spacing[0],
            0.0,
            (row - 0.5 * (self.rows as f32 - 1.0)) * self.spacing[1],
        )
    }

    /// Half the grid's extent along X and Z (the offsets' largest size).
    pub fn half_extent(&self) -> Vec3 {
        Vec3::new(
            0.5 * (self.cols as f32 - 1.0) * self.spacing[0],
            0.0,
            0.5 * (self.rows as f32 - 1.0) * self.spacing[1],
        )
    }
}

#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Vertex {
    position: [f32; 3],
    joints: [u32; 4],
    weights: [f32; 4],
    /// The part's node, its mesh's first morph weight, its target count, 0.
    part: [u32; 4],
}

/// `render.wgsl`'s `Draw`.
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Draw {
    view_proj: [f32; 16],
    light_dir: [f32; 4],
    grid: [f32; 4],
    instance: u32,
    joint_stride: u32,
    joint_offset: u32,
    skin_joint_count: u32,
    node_count: u32,
    morph_stride: u32,
    vertex_count: u32,
    mode: u32,
    /// [`Material::slots`]: base colour, emissive strength and texture
    /// offset slots, output stride.
    material: [u32; 4],
    emissive: [f32; 3],
    /// 0: colour by joint weights; 1: by [`Scene::material`].
    shade: u32,
}
const _: () = assert!(std::mem::size_of::<Draw>() == 160);

/// Byte offsets of [`Draw`]'s members by name, and its size: for the test
/// that compares them with `render.wgsl`'s `Draw` (naga's layouter).
pub fn draw_layout() -> (Vec<(&'static str, usize)>, usize) {
    use std::mem::offset_of;
    (
        vec![
            ("view_proj", offset_of!(Draw, view_proj)),
            ("light_dir", offset_of!(Draw, light_dir)),
            ("grid", offset_of!(Draw, grid)),
            ("instance", offset_of!(Draw, instance)),
            ("joint_stride", offset_of!(Draw, joint_stride)),
            ("joint_offset", offset_of!(Draw, joint_offset)),
            ("skin_joint_count", offset_of!(Draw, skin_joint_count)),
            ("node_count", offset_of!(Draw, node_count)),
            ("morph_stride", offset_of!(Draw, morph_stride)),
            ("vertex_count", offset_of!(Draw, vertex_count)),
            ("mode", offset_of!(Draw, mode)),
            ("material", offset_of!(Draw, material)),
            ("emissive", offset_of!(Draw, emissive)),
            ("shade", offset_of!(Draw, shade)),
        ],
        std::mem::size_of::<Draw>(),
    )
}

/// The depth attachment's format in the passes a [`MeshRenderer`] draws in.
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// Errors unless the adapter lets a vertex shader read the four storage
/// buffers the skinning draw binds, and a fragment shader the sampler's
/// output (the animated material).
pub fn check_vertex_storage(adapter: &wgpu::Adapter, device: &wgpu::Device) -> Result<(), String> {
    let flags = adapter.get_downlevel_capabilities().flags;
    let limits = device.limits();
    let stages = wgpu::DownlevelFlags::VERTEX_STORAGE | wgpu::DownlevelFlags::FRAGMENT_STORAGE;
    if !flags.contains(stages) || limits.max_storage_buffers_per_shader_stage < 4 {
        return Err(format!(
            "this adapter cannot read storage buffers in a vertex and a fragment shader \
             (VERTEX_STORAGE: {}, FRAGMENT_STORAGE: {}, max_storage_buffers_per_shader_stage: {})",
            flags.contains(wgpu::DownlevelFlags::VERTEX_STORAGE),
            flags.contains(wgpu::DownlevelFlags::FRAGMENT_STORAGE),
            limits.max_storage_buffers_per_shader_stage
        ));
    }
    Ok(())
}

/// Draws a scene's mesh skinned by an [`Animator`]'s outputs: the mesh's
/// buffers, the pipeline (`render.wgsl`), and `slots` draw-parameter blocks
/// (camera, first instance, grid), each written with
/// [`write_draw`](Self::write_draw) and used by [`draw`](Self::draw).
#[derive(Debug)]
pub struct MeshRenderer {
    pipeline: wgpu::RenderPipeline,
    draw_buf: wgpu::Buffer,
    draw_group: wgpu::BindGroup,
    vertices: wgpu::Buffer,
    indices: wgpu::Buffer,
    index_count: u32,
    align: u64,
    slots: u32,
    base: Draw,
}

impl MeshRenderer {
    /// Uploads `scene`'s mesh and builds the pipeline for colour targets of
    /// `color_format` (depth [`DEPTH_FORMAT`]), binding `animator`'s output
    /// layout as group 0 and its sampler's output buffer to the fragment
    /// stage (group 1, binding 2: [`Scene::material`]'s animated factors).
    ///
    /// # Errors
    /// When the adapter cannot read storage buffers in both stages
    /// ([`check_vertex_storage`]), the animator has no rig or more than one
    /// chunk (a sheet's few frames always fit one), or the scene's
    /// material has no slot in the library ([`Material::slots`]).
    pub fn new(
        device: &wgpu::Device,
        adapter: &wgpu::Adapter,
        scene: &Scene,
        animator: &Animator,
        color_format: wgpu::TextureFormat,
        slots: u32,
        pose: Pose,
    ) -> Result<Self, String> {
        check_vertex_storage(adapter, device)?;
        let [chunk] = animator.chunks() else {
            return Err(format!(
                "the animator has {} chunks: the sheet draws one",
                animator.chunks().len()
            ));
        };
        let (outputs_layout, _) = chunk.output_bind_group().ok_or("the animator has no rig")?;
        // Where the rig's results sit (joint slots per skin, strides).
        let layout = animator
            .rig()
            .map(Rig::output_layout)
            .ok_or("the animator has no rig")?;
        let vertices = vertices(scene, &layout)?;
        let (material, emissive) = match &scene.material {
            Some(m) => (m.slots(animator.library())?, m.emissive_factor),
            None => ([0; 4], [0.0; 3]),
        };
        let (joint_offset, skin_joint_count) = match scene.skin {
            Some(s) => {
                let joints = layout.skin_joints(s).ok_or("no such skin")?;
                (joints.start, joints.end - joints.start)
            }
            None => (0, 0),
        };
        let base = Draw {
            view_proj: Mat4::IDENTITY.to_cols_array(),
            light_dir: Vec4::new(0.4, 0.7, 0.6, 0.0).to_array(),
            grid: [0.0, 0.0, 1.0, 1.0],
            instance: 0,
            joint_stride: layout.joints(),
            joint_offset,
            skin_joint_count,
            node_count: layout.nodes(),
            morph_stride: layout.morph_weights(),
            vertex_count: vertices.len() as u32,
            mode: match (pose, scene.skin) {
                (Pose::Bind, _) => 2,
                (Pose::Animated, Some(_)) => 0,
                (Pose::Animated, None) => 1,
            },
            material,
            emissive,
            shade: u32::from(scene.material.is_some()),
        };
        let slots = slots.max(1);
        let align = u64::from(device.limits().min_uniform_buffer_offset_alignment).max(256);
        let draws = DrawBindings::new(device, scene, animator, align, slots);
        let pipeline = pipeline(device, outputs_layout, &draws.layout, color_format);
        let (vbuf, ibuf) = mesh_buffers(device, &vertices, &scene.mesh.indices);
        Ok(MeshRenderer {
            pipeline,
            draw_buf: draws.buffer,
            draw_group: draws.group,
            vertices: vbuf,
            indices: ibuf,
            index_count: scene.mesh.indices.len() as u32,
            align,
            slots,
            base,
        })
    }

    /// Writes draw block `slot` (below the `slots` given to
    /// [`new`](Self::new)): the camera, the first animated instance it
    /// shows and where its instances stand.
    pub fn write_draw(
        &self,
        queue: &wgpu::Queue,
        slot: u32,
        view_proj: Mat4,
        first_instance: u32,
        grid: Grid,
    ) {
        assert!(slot < self.slots, "draw slot {slot} of {}", self.slots);
        let d = Draw {
            view_proj: view_proj.to_cols_array(),
            grid: [
                grid.spacing[0],
                grid.spacing[1],
                grid.cols as f32,
                grid.rows as f32,
            ],
            instance: first_instance,
            ..self.base
        };
        queue.write_buffer(
            &self.draw_buf,
            self.align * u64::from(slot),
            bytemuck::bytes_of(&d),
        );
    }

    /// Draws `instances` instances with draw block `slot`, skinned from
    /// `animator`'s outputs (its bind group as group 0).
    pub fn draw(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        animator: &Animator,
        slot: u32,
        instances: u32,
    ) {
        // One chunk: checked by `new`.
        let Some((_, outputs)) = animator.chunks()[0].output_bind_group() else {
            return;
        };
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, outputs, &[]);
        pass.set_bind_group(
            1,
            &self.draw_group,
            &[(self.align * u64::from(slot)) as u32],
        );
        pass.set_vertex_buffer(0, self.vertices.slice(..));
        pass.set_index_buffer(self.indices.slice(..), wgpu::IndexFormat::Uint32);
        pass.draw_indexed(0..self.index_count, 0, 0..instances);
    }
}

/// Renders one frame per time (clip-local seconds, clamped) into a contact
/// sheet of `cols` columns of `frame` x `frame` pixels. Sampling, pose,
/// hierarchy, joint matrices and the draws are recorded into one encoder.
pub fn render(
    h: &Headless,
    scene: &Scene,
    times: &[f64],
    view_proj: Mat4,
    frame: u32,
    cols: u32,
    pose: Pose,
) -> Result<Sheet, String> {
    let play = Play::Times(times.to_vec());
    render_play(h, scene, &play, view_proj, frame, cols, pose)
}

/// [`render`] for any [`Play`]: one frame per time, or per mix.
pub fn render_play(
    h: &Headless,
    scene: &Scene,
    play: &Play,
    view_proj: Mat4,
    frame: u32,
    cols: u32,
    pose: Pose,
) -> Result<Sheet, String> {
    let device = &h.device;
    let count = play.frames() as u32;
    if count == 0 {
        return Err("no frame to render".into());
    }
    let cols = cols.clamp(1, count);
    let rows = count.div_ceil(cols);
    let (width, height) = (cols * frame, rows * frame);

    // The one object a renderer holds: sampling, pose (or mixer) and skin
    // passes.
    let animator = play.animator(h, scene)?;
    let color_format = wgpu::TextureFormat::Rgba8Unorm;
    let renderer = MeshRenderer::new(
        device,
        &h.adapter,
        scene,
        &animator,
        color_format,
        count,
        pose,
    )?;
    for f in 0..count {
        renderer.write_draw(&h.queue, f, view_proj, f, Grid::SINGLE);
    }
    let target = crate::gfx::texture_2d(
        device,
        "skinning.target",
        (width, height),
        color_format,
        wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
    );
    let depth = crate::gfx::texture_2d(
        device,
        "skinning.depth",
        (width, height),
        DEPTH_FORMAT,
        wgpu::TextureUsages::RENDER_ATTACHMENT,
    );
    let row_bytes = (width * 4).div_ceil(256) * 256;
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("skinning.readback"),
        size: u64::from(row_bytes) * u64::from(height),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });

    let mut encoder = device.create_command_encoder(&Default::default());
    animator.record(&mut encoder);
    {
        let color_view = target.create_view(&Default::default());
        let depth_view = depth.create_view(&Default::default());
        let mut pass = begin_pass(&mut encoder, &color_view, &depth_view, "skinning.render");
        for f in 0..count {
            let (x, y) = ((f % cols) * frame, (f / cols) * frame);
            pass.set_viewport(x as f32, y as f32, frame as f32, frame as f32, 0.0, 1.0);
            pass.set_scissor_rect(x, y, frame, frame);
            renderer.draw(&mut pass, &animator, f, 1);
        }
    }
    encoder.copy_texture_to_buffer(
        wgpu::TexelCopyTextureInfo {
            texture: &target,
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        wgpu::TexelCopyBufferInfo {
            buffer: &readback,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(row_bytes),
                rows_per_image: Some(height),
            },
        },
        target.size(),
    );
    h.queue.submit([encoder.finish()]);
    let bytes = h.read_buffer(&readback).map_err(|e| e.to_string())?;
    let mut rgba = Vec::with_capacity((width * height * 4) as usize);
    for row in 0..height as usize {
        let start = row * row_bytes as usize;
        rgba.extend_from_slice(&bytes[start..start + (width * 4) as usize]);
    }
    Ok(Sheet {
        width,
        height,
        frame,
        cols,
        frames: count,
        rgba,
    })
}

/// Begins a render pass that clears `color` to [`BACKGROUND`] and `depth`
/// to 1.
pub fn begin_pass<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    color: &wgpu::TextureView,
    depth: &wgpu::TextureView,
    label: &str,
) -> wgpu::RenderPass<'e> {
    let bg = BACKGROUND.map(|c| f64::from(c) / 255.0);
    crate::gfx::clear_pass(encoder, label, color, depth, [bg[0], bg[1], bg[2]])
}

/// The mesh's vertices with their part word (node, first morph weight and
/// target count in the morph weight block of `layout`).
fn vertices(scene: &Scene, layout: &keyframe_gpu::OutputLayout) -> Result<Vec<Vertex>, String> {
    let m = &scene.mesh;
    let mut vertices = Vec::with_capacity(m.positions.len());
    for part in &m.parts {
        let morph = layout.mesh_weights(part.rig_mesh);
        let targets = morph
            .as_ref()
            .map_or(0, |w| w.len().min(m.morph_deltas.len()) as u32);
        let part_word = [part.node, morph.map_or(0, |w| w.start), targets, 0];
        for v in part.first_vertex..part.first_vertex + part.vertex_count {
            let v = v as usize;
            vertices.push(Vertex {
                position: m.positions[v],
                joints: m.joints[v],
                weights: m.weights[v],
                part: part_word,
            });
        }
    }
    if vertices.len() != m.positions.len() {
        return Err("the mesh's parts do not cover its vertices".into());
    }
    Ok(vertices)
}

/// The vertex and index buffers.
fn mesh_buffers(
    device: &wgpu::Device,
    vertices: &[Vertex],
    indices: &[u32],
) -> (wgpu::Buffer, wgpu::Buffer) {
    use wgpu::util::DeviceExt;
    let vbuf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("skinning.vertices"),
        contents: bytemuck::cast_slice(vertices),
        usage: wgpu::BufferUsages::VERTEX,
    });
    let ibuf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("skinning.indices"),
        contents: bytemuck::cast_slice(indices),
        usage: wgpu::BufferUsages::INDEX,
    });
    (vbuf, ibuf)
}

/// Group 1 of the render pipeline: the draw blocks (one per slot, at a
/// dynamic offset), the morph deltas and the sampler's output (animated
/// material factors).
struct DrawBindings {
    layout: wgpu::BindGroupLayout,
    group: wgpu::BindGroup,
    buffer: wgpu::Buffer,
}

impl DrawBindings {
    fn new(
        device: &wgpu::Device,
        scene: &Scene,
        animator: &Animator,
        align: u64,
        slots: u32,
    ) -> DrawBindings {
        use wgpu::util::DeviceExt;
        let mut deltas: Vec<[f32; 4]> = scene
            .mesh
            .morph_deltas
            .iter()
            .flat_map(|t| t.iter().map(|d| [d[0], d[1], d[2], 0.0]))
            .collect();
        if deltas.is_empty() {
            deltas.push([0.0; 4]);
        }
        let morph_buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("skinning.morph_deltas"),
            contents: bytemuck::cast_slice(&deltas),
            usage: wgpu::BufferUsages::STORAGE,
        });
        let draw_size = std::mem::size_of::<Draw>() as u64;
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("skinning.draws"),
            size: align * u64::from(slots),
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("skinning.draw"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: true,
                        min_binding_size: std::num::NonZeroU64::new(draw_size),
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::VERTEX,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Storage { read_only: true },
                        has_dynamic_offset: false,
                        min_binding_size: std::num::NonZeroU64::new(16),
                    },
                    count: None,
                },
                // The sampler's output (animated material factors).
                keyframe_gpu::gpu::output_layout_entry(2, wgpu::ShaderStages::FRAGMENT, 4),
            ],
        });
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("skinning.draw"),
            layout: &layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: &buffer,
                        offset: 0,
                        size: std::num::NonZeroU64::new(draw_size),
                    }),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: morph_buf.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: animator.chunks()[0].sample_buffer().as_entire_binding(),
                },
            ],
        });
        DrawBindings {
            layout,
            group,
            buffer,
        }
    }
}

/// The render pipeline: the animator's outputs as group 0, the draw
/// bindings as group 1, colour targets of `color_format`, depth
/// [`DEPTH_FORMAT`].
fn pipeline(
    device: &wgpu::Device,
    outputs_layout: &wgpu::BindGroupLayout,
    draw_layout: &wgpu::BindGroupLayout,
    color_format: wgpu::TextureFormat,
) -> wgpu::RenderPipeline {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("skinning.render.wgsl"),
        source: wgpu::ShaderSource::Wgsl(include_str!("render.wgsl").into()),
    });
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("skinning.render"),
        bind_group_layouts: &[Some(outputs_layout), Some(draw_layout)],
        immediate_size: 0,
    });
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("skinning.render"),
        layout: Some(&layout),
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs_main"),
            compilation_options: Default::default(),
            buffers: &[Some(wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<Vertex>() as u64,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &wgpu::vertex_attr_array![
                    0 => Float32x3, 1 => Uint32x4, 2 => Float32x4, 3 => Uint32x4
                ],
            })],
        },
        primitive: wgpu::PrimitiveState::default(),
        depth_stencil: Some(wgpu::DepthStencilState {
            format: DEPTH_FORMAT,
            depth_write_enabled: Some(true),
            depth_compare: Some(wgpu::CompareFunction::Less),
            stencil: Default::default(),
            bias: Default::default(),
        }),
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs_main"),
            compilation_options: Default::default(),
            targets: &[Some(color_format.into())],
        }),
        multiview_mask: None,
        cache: None,
    })
}
