//! Retargeting: the clips of one rig played on another rig with other
//! bone names, other rest orientations and other proportions, through a
//! [`BoneMap`] (target bone -> source bone, by name, with the root named).
//!
//! The correction is the standard one (Godot's and Babylon.js's), computed
//! once when the map is resolved against the two rigs. For every mapped
//! target node `N` with source node `S`:
//!
//! ```text
//! rotation(N, t) = A_N * q_S(t) * B_N
//! A_N = Wt(parent N)^-1 * Ws(parent S)
//! B_N = Ws(S)^-1 * Wt(N)
//! ```
//!
//! where `W` is a node's rest world rotation: the product of the rest
//! local rotations of every node from its scene root down to it
//! (non-joint nodes such as an `Armature` included; scales are not part
//! of it), `Wt` in the target rig, `Ws` in the source rig, the identity
//! above a root. The root's translation keeps the source's motion:
//!
//! ```text
//! k = height(target root) / height(source root)
//! world(t) = Pt + k * (Ms(parent S) * tS(t) - Ps)
//! t(R, t) = Mt(parent R)^-1 * world(t)
//! ```
//!
//! with `height` a root's rest world position along the map's up axis
//! ([`BoneMap::up`], glTF's +Y unless the map says otherwise), `Ps` and `Pt` the two roots' rest world positions and `M` the
//! full rest world matrices of the roots' parents (rotation, scale and
//! translation: an armature scaled 0.01 is carried through). Every other
//! mapped bone keeps the target's rest translation and scale; unmapped
//! target nodes stay at rest.
//!
//! The correction is baked into a library bound to the target rig
//! ([`AnimationLibrary::retarget`]): each corrected track keeps its key
//! times and interpolation, and only its values change. A LINEAR rotation
//! track stays exact between keys: multiplying by unit quaternions on the
//! left and on the right keeps the dot product of any two keys (so the
//! sampler's shortest-path choice and its angle) and commutes with slerp,
//! nlerp and normalization, so slerping the corrected keys gives the
//! corrected slerp. CUBICSPLINE tangents are multiplied the same way
//! (`A * q * B` is linear in `q`), STEP keys as they are; the root's
//! translation keys go through the affine map above and its CUBICSPLINE
//! tangents through its linear part. Nothing is left for the frame.

use std::collections::HashMap;
use std::sync::Arc;

use glam::{DMat4, DQuat, DVec3};

use super::binding::{BindOptions, BoundLibrary};
use super::library::AnimationLibrary;
use super::rig::Rig;
use super::track::{Clip, Track};
use crate::error::{BindError, Result};
use crate::kinds::{Interpolation, Property};

/// Which bone of a source rig drives each bone of a target rig, by node
/// name, and which target bone is the root (the one whose translation
/// carries the clip's motion across the floor, usually the hips).
///
/// Built in code with [`BoneMap::new`], or parsed from its JSON form,
/// `{"root": TARGET_NAME, "bones": {TARGET_NAME: SOURCE_NAME, ...}}`,
/// with `text.parse::<BoneMap>()` (feature `gltf`; an optional `"up":
/// [X, Y, Z]` sets [`BoneMap::up`]). The names are checked against the
/// rigs by [`AnimationLibrary::retarget`]. Target bones left out of the
/// map stay at rest; source bones left out drive nothing.
///
/// ```
/// # fn f() -> Result<(), keyframe_gpu::Error> {
/// use keyframe_gpu::BoneMap;
/// let mut map = BoneMap::new(
///     "Hips",
///     [("Hips", "mixamorig:Hips"), ("Spine", "mixamorig:Spine")],
/// )?;
/// // Both rigs' scenes are Z-up: measure the roots' heights along +Z.
/// map.up = [0.0, 0.0, 1.0];
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct BoneMap {
    root: String,
    /// (target, source), by target name: two maps of the same pairs are
    /// equal whatever order they were given in.
    bones: Vec<(String, String)>,
    /// The up axis of both rigs' world space (their scene roots' space),
    /// a unit vector: the roots' rest heights, whose ratio scales the
    /// root's motion, are their rest world positions' components along
    /// it. `[0, 1, 0]` (glTF's up) unless set; `[0, 0, 1]` for rigs whose
    /// scenes are Z-up with no node turning them to Y-up. Checked by
    /// [`AnimationLibrary::retarget`] ([`BindError::MapUpAxis`] for an
    /// axis that is not of unit length within 1e-3).
    pub up: [f32; 3],
}

impl BoneMap {
    /// A map from `(target, source)` name pairs, with the target bone
    /// `root` as the root.
    ///
    /// # Errors
    /// [`BindError::MapBoneTwice`] for a target bone mapped twice or a
    /// source bone mapped from two target bones,
    /// [`BindError::MapRootUnmapped`] for a root that is not one of the
    /// target bones.
    pub fn new<T, S>(
        root: impl Into<String>,
        bones: impl IntoIterator<Item = (T, S)>,
    ) -> Result<BoneMap>
    where
        T: Into<String>,
        S: Into<String>,
    {
        let root = root.into();
        let bones: Vec<(String, String)> = bones
            .into_iter()
            .map(|(t, s)| (t.into(), s.into()))
            .collect();
        let mut targets: HashMap<&str, &str> = HashMap::new();
        let mut sources: HashMap<&str, &str> = HashMap::new();
        for (t, s) in &bones {
            let twice = |side, name: &str, first: &str, second: &str| BindError::MapBoneTwice {
                side,
                name: name.to_string(),
                first: first.to_string(),
                second: second.to_string(),
            };
            if let Some(first) = targets.insert(t, s) {
                return Err(twice("target", t, first, s).into());
            }
            if let Some(first) = sources.insert(s, t) {
                return Err(twice("source", s, first, t).into());
            }
        }
        if !targets.contains_key(root.as_str()) {
            return Err(BindError::MapRootUnmapped { root }.into());
        }
        let mut bones = bones;
        bones.sort_unstable();
        Ok(BoneMap {
            root,
            bones,
            up: [0.0, 1.0, 0.0],
        })
    }

    /// [`BoneMap::up`] as a unit vector in `f64`.
    ///
    /// # Errors
    /// [`BindError::MapUpAxis`] for an axis whose length is not 1 within
    /// 1e-3 (zero and non-finite included).
    pub(crate) fn up_axis(&self) -> Result<DVec3> {
        let up = dvec3(self.up);
        let length = up.length();
        if !(length.is_finite() && (length - 1.0).abs() <= 1e-3) {
            return Err(BindError::MapUpAxis {
                up: self.up,
                length: length as f32,
            }
            .into());
        }
        Ok(up / length)
    }
}

/// One mapped bone, by its source node: the target node it drives and
/// its two constant quaternions.
#[derive(Debug, Clone, Copy)]
struct Bone {
    target: u32,
    a: DQuat,
    b: DQuat,
}

/// A [`BoneMap`] resolved against a source and a target rig: everything
/// the correction needs, computed once.
#[derive(Debug)]
struct Correction {
    /// Per source node: the bone it drives, if mapped.
    bones: Vec<Option<Bone>>,
    /// The source root and the target root.
    root_source: u32,
    root_target: u32,
    /// Maps the source root's local translation to the target root's.
    root: DMat4,
}

/// The only node of `rig` named `name` (`side` names the rig in errors).
fn node_named(rig: &Rig, name: &str, side: &'static str) -> Result<u32> {
    let mut found = rig
        .nodes()
        .iter()
        .enumerate()
        .filter(|(_, n)| n.name.as_deref() == Some(name))
        .map(|(i, _)| i as u32);
    let unknown = |why: String| BindError::MapUnknownBone {
        side,
        name: name.to_string(),
        why,
    };
    match (found.next(), found.count()) {
        (Some(node), 0) => Ok(node),
        (None, _) => Err(unknown(format!("is not a node of the {side} rig")).into()),
        (Some(_), more) => {
            Err(unknown(format!("names {} nodes of the {side} rig", more + 1)).into())
        }
    }
}

fn dquat(q: [f32; 4]) -> DQuat {
    DQuat::from_xyzw(q[0].into(), q[1].into(), q[2].into(), q[3].into()).normalize()
}

fn dvec3(v: [f32; 3]) -> DVec3 {
    DVec3::new(v[0].into(), v[1].into(), v[2].into())
}

/// Every node's rest world rotation (the product of the rest local
/// rotations from its root down) and rest world matrix (`T * R * S` of
/// every ancestor), in `f64`.
fn rest_frames(rig: &Rig) -> (Vec<DQuat>, Vec<DMat4>) {
    let nodes = rig.nodes();
    let mut rotations = vec![DQuat::IDENTITY; nodes.len()];
    let mut matrices = vec![DMat4::IDENTITY; nodes.len()];
    // Parents before children: a parent's entries are final when read.
    for &n in rig.order() {
        let node = &nodes[n as usize];
        let r = dquat(node.rotation);
        let local =
            DMat4::from_scale_rotation_translation(dvec3(node.scale), r, dvec3(node.translation));
        let (pr, pm) = node.parent.map_or((DQuat::IDENTITY, DMat4::IDENTITY), |p| {
            (rotations[p as usize], matrices[p as usize])
        });
        rotations[n as usize] = (pr * r).normalize();
        matrices[n as usize] = pm * local;
    }
    (rotations, matrices)
}

/// Whether `ancestor` is a proper ancestor of `node` in `rig`.
fn is_ancestor(rig: &Rig, ancestor: u32, node: u32) -> bool {
    let nodes = rig.nodes();
    let mut at = nodes[node as usize].parent;
    // A rig's parents form a forest: the walk ends.
    for _ in 0..nodes.len() {
        match at {
            Some(p) if p == ancestor => return true,
            Some(p) => at = nodes[p as usize].parent,
            None => return false,
        }
    }
    false
}

/// The name of node `n` (every mapped node has one).
fn name_of(rig: &Rig, n: u32) -> String {
    rig.nodes()[n as usize].name.clone().unwrap_or_default()
}

impl Correction {
    /// Resolves `map` against the two rigs and computes the correction.
    ///
    /// # Errors
    /// [`BindError::MapUnknownBone`], [`BindError::MapHierarchy`],
    /// [`BindError::MapRoot`], [`BindError::MapUpAxis`].
    fn new(map: &BoneMap, source: &Rig, target: &Rig) -> Result<Correction> {
        // Target node -> source node.
        let mut pairs: HashMap<u32, u32> = HashMap::new();
        for (t, s) in &map.bones {
            pairs.insert(
                node_named(target, t, "target")?,
                node_named(source, s, "source")?,
            );
        }
        check_hierarchy(&pairs, source, target)?;
        let (ws, ms) = rest_frames(source);
        let (wt, mt) = rest_frames(target);
        let parent_rotation = |rig: &Rig, w: &[DQuat], n: u32| {
            rig.nodes()[n as usize]
                .parent
                .map_or(DQuat::IDENTITY, |p| w[p as usize])
        };
        let mut bones = vec![None; source.nodes().len()];
        for (&tn, &sn) in &pairs {
            let a = parent_rotation(target, &wt, tn).inverse() * parent_rotation(source, &ws, sn);
            let b = ws[sn as usize].inverse() * wt[tn as usize];
            bones[sn as usize] = Some(Bone { target: tn, a, b });
        }
        let root_target = node_named(target, &map.root, "target")?;
        let Some(&root_source) = pairs.get(&root_target) else {
            return Err(BindError::MapRootUnmapped {
                root: map.root.clone(),
            }
            .into());
        };
        let root = root_map(
            (&map.root, map.up_axis()?),
            (target, &mt, root_target),
            (source, &ms, root_source),
        )?;
        Ok(Correction {
            bones,
            root_source,
            root_target,
            root,
        })
    }
}

/// Refuses a mapped target bone whose nearest mapped ancestor maps to a
/// source bone that is not an ancestor of its own source bone.
fn check_hierarchy(pairs: &HashMap<u32, u32>, source: &Rig, target: &Rig) -> Result<()> {
    // In node order, so that the error names the same bone every run.
    let mut mapped: Vec<(u32, u32)> = pairs.iter().map(|(&t, &s)| (t, s)).collect();
    mapped.sort_unstable();
    for (tn, sn) in mapped {
        let mut at = target.nodes()[tn as usize].parent;
        let mut steps = 0;
        while let Some(p) = at {
            steps += 1;
            if steps > target.nodes().len() {
                break;
            }
            if let Some(&ps) = pairs.get(&p) {
                if !is_ancestor(source, ps, sn) {
                    return Err(BindError::MapHierarchy {
                        bone: name_of(target, tn),
                        source_bone: name_of(source, sn),
                        ancestor: name_of(target, p),
                        ancestor_source: name_of(source, ps),
                    }
                    .into());
                }
                break;
            }
            at = target.nodes()[p as usize].parent;
        }
    }
    Ok(())
}

/// The affine map from the source root's local translation to the target
/// root's: `Mt(parent R)^-1 * (Pt + k * (Ms(parent S) * t - Ps))`, `k` the
/// ratio of the roots' rest heights (their world positions along `up`).
fn root_map(
    (name, up): (&str, DVec3),
    (target, mt, rt): (&Rig, &[DMat4], u32),
    (source, ms, rs): (&Rig, &[DMat4], u32),
) -> Result<DMat4> {
    let refuse = |why: String| BindError::MapRoot {
        root: name.to_string(),
        why,
    };
    let parent = |rig: &Rig, m: &[DMat4], n: u32| {
        rig.nodes()[n as usize]
            .parent
            .map_or(DMat4::IDENTITY, |p| m[p as usize])
    };
    let pt = mt[rt as usize].w_axis.truncate();
    let ps = ms[rs as usize].w_axis.truncate();
    let (ht, hs) = (pt.dot(up), ps.dot(up));
    let k = ht / hs;
    if !(k.is_finite() && k > 0.0) {
        return Err(refuse(format!(
            "rest heights (along the up axis {:?}) {ht} in the target rig and {hs} in the source rig: their ratio scales the root's motion and must be finite and positive",
            up.to_array()
        ))
        .into());
    }
    let target_parent = parent(target, mt, rt);
    let det = target_parent.determinant();
    if !(det.is_finite() && det.abs() > f64::EPSILON * f64::EPSILON) {
        return Err(refuse(
            "its parent's rest world matrix in the target rig cannot be inverted".into(),
        )
        .into());
    }
    Ok(target_parent.inverse()
        * DMat4::from_translation(pt - k * ps)
        * DMat4::from_scale(DVec3::splat(k))
        * parent(source, ms, rs))
}

/// The Hamilton product `a * b` of two quaternions (x, y, z, w) of any
/// length (CUBICSPLINE tangents are not unit).
fn qmul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

/// `values` (rotations, 4 per element: keys or CUBICSPLINE tangents) as
/// `a * q * b`.
fn corrected_rotations(values: &[f32], a: DQuat, b: DQuat) -> Vec<f32> {
    let (a, b) = (a.to_array(), b.to_array());
    values
        .chunks_exact(4)
        .flat_map(|q| {
            let q = [q[0], q[1], q[2], q[3]].map(f64::from);
            qmul(qmul(a, q), b).map(|c| c as f32)
        })
        .collect()
}

/// `values` (translations, 3 per element) through `m`: key values as
/// points, CUBICSPLINE tangents (elements 0 and 2 of each key) as
/// vectors.
fn corrected_translations(values: &[f32], interpolation: Interpolation, m: &DMat4) -> Vec<f32> {
    let cubic = interpolation.elements_per_key() == 3;
    values
        .chunks_exact(3)
        .enumerate()
        .flat_map(|(e, v)| {
            let v = dvec3([v[0], v[1], v[2]]);
            let out = if cubic && e % 3 != 1 {
                m.transform_vector3(v)
            } else {
                m.transform_point3(v)
            };
            [out.x as f32, out.y as f32, out.z as f32]
        })
        .collect()
}

impl Correction {
    /// Clip `c` of `bound` (bound to the source rig) baked for the target
    /// rig: a corrected rotation track per rotation track of a mapped
    /// source bone, a corrected translation track for the source root's,
    /// nothing else; and, where that leaves the clip shorter than its
    /// source (or empty), a constant STEP track of the target root's rest
    /// scale at the source clip's end, so that the clip keeps its
    /// duration.
    fn bake_clip(&self, bound: &BoundLibrary, c: usize, target: &Rig) -> Clip {
        let clip = &bound.library().clips()[c];
        let name = |n: u32| {
            target
                .source()
                .and_then(|_| target.node_name(n))
                .map(Arc::new)
        };
        let mut tracks = Vec::new();
        for (t, track) in clip.tracks.iter().enumerate() {
            let Some(node) = bound.node(c as u32, t as u32) else {
                continue;
            };
            let (target_node, values) = match track.property {
                Property::Rotation => match self.bones.get(node as usize).copied().flatten() {
                    Some(bone) => (
                        bone.target,
                        corrected_rotations(&track.values, bone.a, bone.b),
                    ),
                    None => continue,
                },
                Property::Translation if node == self.root_source => (
                    self.root_target,
                    corrected_translations(&track.values, track.interpolation, &self.root),
                ),
                _ => continue,
            };
            tracks.push(Track {
                node: target_node,
                values,
                pointer: None,
                target: name(target_node),
                ..track.clone()
            });
        }
        let mut baked = Clip {
            name: clip.name.clone(),
            tracks,
            source: target.source(),
            markers: clip.markers.clone(),
        };
        let end = clip.duration();
        if baked.tracks.is_empty() || baked.duration() < end {
            let root = self.root_target;
            let scale = target.nodes()[root as usize].scale;
            let pad = Track::new(
                root,
                Property::Scale,
                Interpolation::Step,
                vec![end],
                scale.to_vec(),
            );
            baked.tracks.push(Track {
                target: name(root),
                ..pad
            });
        }
        baked
    }
}

impl AnimationLibrary {
    /// This library's clips, made on the rig `source`, retargeted onto
    /// the rig `target` through `map` and bound to it: a new library
    /// whose tracks animate `target`'s nodes with the corrected values
    /// (the module `crate::model::retarget` gives the correction;
    /// `docs/USAGE.md`, "Retargeting", what it assumes). It poses
    /// through everything a bound library poses through (the GPU, the
    /// CPU twin, the mixer, the compressor, the crowd, root motion and
    /// markers) at no cost per frame.
    ///
    /// Clip `i` of the result is clip `i` of this library, with its name,
    /// markers and duration. Its tracks: one rotation track per rotation
    /// track of a mapped source bone (on its target bone, same key times
    /// and interpolation), one translation track on the root from the
    /// source root's translation track; the source's other tracks
    /// (translations and scales of other bones, morph weights, pointers)
    /// are left out, and a bone the clip does not animate stays at rest.
    /// The clips bind to `target` by node index. A compressed library
    /// retargets the clips it was made from: compress the result.
    ///
    /// # Errors
    /// [`Error::Bind`](crate::Error::Bind): a bone name that is not one
    /// node of its rig ([`BindError::MapUnknownBone`]), a map that breaks
    /// the hierarchy ([`BindError::MapHierarchy`]), a root whose motion
    /// cannot be carried over ([`BindError::MapRoot`]), an up axis that is
    /// not a unit vector ([`BindError::MapUpAxis`]), or this library's
    /// binding to `source` refused (an ambiguous name); the library's
    /// errors for a clip the correction leaves invalid.
    pub fn retarget(&self, source: &Rig, target: &Rig, map: &BoneMap) -> Result<BoundLibrary> {
        let correction = Correction::new(map, source, target)?;
        let on_source =
            self.bind_with(source, &BindOptions::default().with_min_bound_share(0.0))?;
        let clips = (0..self.clips().len())
            .map(|c| correction.bake_clip(&on_source, c, target))
            .collect();
        AnimationLibrary::new(clips)?.bind(target)
    }
}
