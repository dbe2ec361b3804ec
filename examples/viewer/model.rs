//! The model the viewer shows, as its author made it: the rig and every
//! mesh node of the file's default scene (rigid and skinned parts, the
//! crate's [`Part`] list), each primitive with its material, the decoded
//! base colour images, and the clips: the file's own, then those of each
//! `--clips` file, joined into one library (`AnimationLibrary::join`)
//! bound to the model's rig (the file's own clips by node index, the
//! others by node name, or, with `--retarget MAP.json`, retargeted onto
//! the rig through the bone map and bound by node index).

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use glam::{Mat4, Vec3};
use keyframe_gpu::gltf::{Document, LoadOptions};
use keyframe_gpu::{AnimationLibrary, BoneMap, BoundLibrary, Instance, Part, Rig};

use crate::bone_map;
use crate::image::{self, Image};
use crate::material::{read_materials, Material, Sampling};
use crate::mesh::{read_meshes, Mesh};

/// Poses per clip that the bounds are taken from.
const BOUNDS_SAMPLES: u32 = 9;

/// What the viewer draws and animates.
#[derive(Debug)]
pub struct Model {
    /// Its name in the title: the file's name, or the demo's.
    pub name: String,
    /// The clips, bound to the rig.
    pub bound: BoundLibrary,
    /// Every mesh of the file.
    pub meshes: Vec<Mesh>,
    /// Every material of the file.
    pub materials: Vec<Material>,
    /// Per image of the file: decoded where a material uses it and its
    /// format is PNG or JPEG.
    pub images: Vec<Option<Image>>,
    /// Per sampler of the file, and last the default one.
    pub samplers: Vec<Sampling>,
    /// The mesh nodes of the default scene.
    pub parts: Vec<Part>,
    /// What the viewer could not draw as the file says (printed on stderr).
    pub notes: Vec<String>,
}

/// Clips of a `--clips` file.
#[derive(Debug)]
pub struct ClipFile {
    /// The file.
    pub path: PathBuf,
    /// Its clips.
    pub library: AnimationLibrary,
    /// With `--retarget`: the file (its rig is the clips' source) and the
    /// bone map with its path.
    retarget: Option<(Document, BoneMap, PathBuf)>,
}

impl ClipFile {
    /// Reads every animation of `path`; with `map` (a bone map and its
    /// file) its clips are retargeted onto each model's rig.
    ///
    /// # Errors
    /// The import's error, after the path.
    pub fn load(
        path: &Path,
        options: &LoadOptions,
        map: Option<&(BoneMap, PathBuf)>,
    ) -> Result<ClipFile, String> {
        let imported = keyframe_gpu::gltf::load_with(path, options)
            .map_err(|e| format!("--clips {}: {e}", path.display()))?;
        Ok(ClipFile {
            path: path.to_path_buf(),
            library: imported.library,
            retarget: map.map(|(map, at)| (imported.document, map.clone(), at.clone())),
        })
    }

    /// The clips as they play on `rig`: retargeted onto it with
    /// `--retarget`, else as the file has them (bound by node name).
    fn for_rig(&self, rig: &Rig) -> Result<Cow<'_, AnimationLibrary>, String> {
        match &self.retarget {
            Some((document, map, at)) => {
                bone_map::retargeted((&self.library, document, &self.path), rig, (map, at))
                    .map(Cow::Owned)
            }
            None => Ok(Cow::Borrowed(&self.library)),
        }
    }
}

impl Model {
    /// The model of the file at `path`, animated by its own clips and then
    /// those of `clip_files`.
    ///
    /// # Errors
    /// A message: the file fails to import or has nothing to draw, nothing
    /// animates it, a `--clips` file none of whose tracks binds to it, an
    /// accessor, material or image that cannot be read.
    pub fn load(
        path: &Path,
        options: &LoadOptions,
        clip_files: &[ClipFile],
    ) -> Result<Model, String> {
        let doc = Document::load_with(path, options).map_err(|e| e.to_string())?;
        let base = path.parent().unwrap_or_else(|| Path::new("."));
        let name = path.file_name().unwrap_or(path.as_os_str());
        Model::from_document(
            &name.to_string_lossy(),
            &doc,
            Some(base),
            options,
            clip_files,
        )
    }

    /// The model of a glTF file held in memory (no external URIs).
    ///
    /// # Errors
    /// As [`Model::load`].
    pub fn from_bytes(name: &str, bytes: &[u8], clip_files: &[ClipFile]) -> Result<Model, String> {
        let doc = Document::from_slice(bytes, None).map_err(|e| e.to_string())?;
        Model::from_document(name, &doc, None, &LoadOptions::default(), clip_files)
    }

    fn from_document(
        name: &str,
        doc: &Document,
        base_dir: Option<&Path>,
        options: &LoadOptions,
        clip_files: &[ClipFile],
    ) -> Result<Model, String> {
        let rig = Rig::from_document(doc).map_err(|e| e.to_string())?;
        if rig.nodes().len() != doc.root.nodes.len() {
            return Err(format!(
                "the rig has {} nodes, the file {}",
                rig.nodes().len(),
                doc.root.nodes.len()
            ));
        }
        let bound = bind_clips(doc, &rig, clip_files)?;
        let in_scene = default_scene(doc, &rig);
        let parts: Vec<Part> = rig
            .parts()
            .into_iter()
            .filter(|p| in_scene[p.node as usize])
            .collect();
        if parts.is_empty() {
            return Err("the default scene has no mesh to draw".into());
        }
        let materials = read_materials(doc)?;
        let uv_set = |m: Option<usize>| {
            m.and_then(|m| materials.get(m))
                .and_then(|m| m.texture)
                .map_or(0, |t| t.tex_coord)
        };
        let meshes = read_meshes(doc, uv_set)?;
        let mut notes = Vec::new();
        let images = read_images(doc, &materials, base_dir, options, &mut notes)?;
        let mut samplers: Vec<Sampling> = (0..doc.root.samplers.len())
            .map(|s| Sampling::of(doc, Some(s)))
            .collect();
        samplers.push(Sampling::of(doc, None));
        Ok(Model {
            name: name.to_string(),
            bound,
            meshes,
            materials,
            images,
            samplers,
            parts,
            notes,
        })
    }

    /// The rig.
    pub fn rig(&self) -> &Rig {
        self.bound.rig()
    }

    /// The clips.
    pub fn library(&self) -> &AnimationLibrary {
        self.bound.library()
    }

    /// Bounds of one instance over every clip: each primitive's box (its
    /// positions with morph weights in [0, 1]) placed by the world matrix
    /// of its node (rigid) or, for each joint that moves some of its
    /// vertices, the box of those vertices placed by that joint's matrix
    /// (skinned: a blend of joint matrices puts a vertex inside the hull
    /// of its joints' placements), posed on the CPU twin at
    /// [`BOUNDS_SAMPLES`] times per clip.
    pub fn bounds(&self) -> Result<(Vec3, Vec3), String> {
        let mut instances = Vec::new();
        for (c, clip) in self.library().clips().iter().enumerate() {
            let d = f64::from(clip.duration());
            for k in 0..BOUNDS_SAMPLES {
                let t = d * f64::from(k) / f64::from(BOUNDS_SAMPLES - 1);
                instances.push(Instance::new(c as u32, t));
            }
        }
        let poses = keyframe_gpu::cpu::poses(&self.bound, &instances).map_err(|e| e.to_string())?;
        let boxes = self.part_boxes();
        let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
        for i in 0..instances.len() as u32 {
            for b in &boxes {
                let m = match b.joint {
                    None => poses.world(i, b.node),
                    Some((skin, j)) => poses
                        .joints(i, skin)
                        .and_then(|js| js.get(j as usize))
                        .map(|jm| poses.world(i, b.node).unwrap_or(Mat4::IDENTITY) * *jm),
                };
                let m = m.unwrap_or(Mat4::IDENTITY);
                for corner in 0..8 {
                    let pick = |bit: u32, l: f32, h: f32| if corner & bit == 0 { l } else { h };
                    let p = Vec3::new(
                        pick(1, b.lo.x, b.hi.x),
                        pick(2, b.lo.y, b.hi.y),
                        pick(4, b.lo.z, b.hi.z),
                    );
                    let w = m.transform_point3(p);
                    lo = lo.min(w);
                    hi = hi.max(w);
                }
            }
        }
        if !lo.is_finite() || !hi.is_finite() {
            return Err("the posed model has no finite bounds".into());
        }
        Ok((lo, hi))
    }

    /// The boxes [`bounds`](Self::bounds) places.
    fn part_boxes(&self) -> Vec<PartBox> {
        let mut boxes = Vec::new();
        for part in &self.parts {
            let Some(mesh) = self.meshes.get(part.mesh as usize) else {
                continue;
            };
            for prim in &mesh.primitives {
                let space = part.skin.zip(part.skin_node);
                let Some((skin, node)) = space else {
                    boxes.push(PartBox {
                        node: part.node,
                        joint: None,
                        lo: prim.lo,
                        hi: prim.hi,
                    });
                    continue;
                };
                // Per joint, the box of the vertices it moves.
                let joints = self.rig().skins()[skin as usize].joints.len().max(1);
                let mut per_joint =
                    vec![(Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)); joints];
                for (i, v) in prim.vertices.iter().enumerate() {
                    let (lo, hi) = prim.reach(i);
                    for (&j, &w) in v.joints.iter().zip(&v.weights) {
                        if w != 0.0 {
                            let b = &mut per_joint[(j as usize).min(joints - 1)];
                            b.0 = b.0.min(lo);
                            b.1 = b.1.max(hi);
                        }
                    }
                }
                for (j, (l, h)) in per_joint.into_iter().enumerate() {
                    if l.is_finite() {
                        boxes.push(PartBox {
                            node,
                            joint: Some((skin, j as u32)),
                            lo: l,
                            hi: h,
                        });
                    }
                }
            }
        }
        boxes
    }
}

/// A box of bind-pose positions and what places it.
#[derive(Debug, Clone, Copy)]
struct PartBox {
    /// The node whose world matrix places it (a skin's mesh node for a
    /// joint's box).
    node: u32,
    /// For a skinned part: the skin and the joint's slot in it.
    joint: Option<(u32, u32)>,
    lo: Vec3,
    hi: Vec3,
}

/// One library of the model file's clips then each `--clips` file's, bound
/// to `rig`; a `--clips` file none of whose node tracks binds is refused.
fn bind_clips(doc: &Document, rig: &Rig, clip_files: &[ClipFile]) -> Result<BoundLibrary, String> {
    let own = if doc.root.animations.is_empty() {
        None
    } else {
        Some(doc.animations().map_err(|e| e.to_string())?.0)
    };
    if own.is_none() && clip_files.is_empty() {
        return Err("the file has no animations (give clips with --clips FILE)".into());
    }
    let theirs = clip_files
        .iter()
        .map(|f| f.for_rig(rig))
        .collect::<Result<Vec<_>, _>>()?;
    let library = AnimationLibrary::join(own.iter().chain(theirs.iter().map(|l| l.as_ref())))
        .map_err(|e| e.to_string())?;
    let own = own.map_or(0, |l| l.clips().len());
    // A clip that binds nothing is refused below, by file, with an example.
    let options = keyframe_gpu::BindOptions::default().with_min_bound_share(0.0);
    let bound = library
        .bind_with(rig, &options)
        .map_err(|e| e.to_string())?;
    let report = bound.report().clips();
    let mut at = own;
    for f in clip_files {
        let n = f.library.clips().len();
        let mine = &report[at..at + n];
        at += n;
        if mine.iter().map(|r| r.bound()).sum::<u32>() == 0 {
            let example = mine
                .iter()
                .flat_map(|r| r.unbound.first())
                .next()
                .map_or(String::new(), |u| {
                    format!(" (e.g. {}: {})", u.target, u.why)
                });
            return Err(format!(
                "--clips {}: none of its tracks binds to a node of the model{example}",
                f.path.display()
            ));
        }
    }
    Ok(bound)
}

/// Which nodes belong to the file's default scene (`scene`, else scene 0;
/// every node when the file has no scene).
fn default_scene(doc: &Document, rig: &Rig) -> Vec<bool> {
    let scene = doc
        .root
        .scene
        .map(|s| s.value())
        .or((!doc.root.scenes.is_empty()).then_some(0))
        .and_then(|s| doc.root.scenes.get(s));
    let Some(scene) = scene else {
        return vec![true; rig.nodes().len()];
    };
    let mut is_root = vec![false; rig.nodes().len()];
    for n in &scene.nodes {
        if let Some(r) = is_root.get_mut(n.value()) {
            *r = true;
        }
    }
    (0..rig.nodes().len())
        .map(|n| {
            // The root of n's tree (the rig has no cycles).
            let mut r = n;
            while let Some(p) = rig.nodes()[r].parent {
                r = p as usize;
            }
            is_root[r]
        })
        .collect()
}

/// Decodes every image a material's base colour texture uses; a format
/// the viewer cannot decode becomes a note and an untextured material.
fn read_images(
    doc: &Document,
    materials: &[Material],
    base_dir: Option<&Path>,
    options: &LoadOptions,
    notes: &mut Vec<String>,
) -> Result<Vec<Option<Image>>, String> {
    let mut images: Vec<Option<Image>> = vec![None; doc.root.images.len()];
    let mut tried = vec![false; images.len()];
    for t in materials.iter().filter_map(|m| m.texture) {
        if std::mem::replace(&mut tried[t.image], true) {
            continue;
        }
        match image::read(doc, t.image, base_dir, options)? {
            image::Read::Image(img) => images[t.image] = Some(img),
            image::Read::Unsupported(kind) => notes.push(format!(
                "image {} is {kind}, which the viewer does not decode: its materials are drawn without it",
                t.image
            )),
        }
    }
    Ok(images)
}
