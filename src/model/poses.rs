//! Results in plain types: one frame's [`Poses`] (local transforms, world
//! matrices, joint matrices, morph weights, pointer properties), the same
//! from the GPU (`Animator::read_back`) and
//! from the CPU twin (`cpu::poses`, `cpu::mixed_poses`);
//! and where a rig's results sit in the output buffers ([`OutputLayout`],
//! [`Part`]), for a renderer that binds them.

use std::ops::Range;

use glam::{Mat4, Quat, Vec3};

use super::library::AnimationLibrary;
use super::rig::Rig;

/// A node's local transform: translation, unit rotation, scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transform {
    /// Translation.
    pub translation: Vec3,
    /// Unit rotation.
    pub rotation: Quat,
    /// Scale.
    pub scale: Vec3,
}

impl Transform {
    /// The matrix `T * R * S`.
    #[must_use]
    pub fn to_matrix(&self) -> Mat4 {
        Mat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }
}

/// Where one instance's results sit in the output buffers of a rig, in
/// elements (matrices or floats) from the start of the instance's block.
/// Instance `i`'s block of world matrices starts at `i * nodes()`, of
/// joint matrices at `i * joints()`, of morph weights at
/// `i * morph_weights()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputLayout {
    nodes: u32,
    joints: u32,
    morph_weights: u32,
    skins: Vec<Range<u32>>,
    meshes: Vec<Range<u32>>,
}

impl OutputLayout {
    /// The layout of `rig`'s outputs.
    #[must_use]
    pub(crate) fn of(rig: &Rig) -> OutputLayout {
        let mut at = 0u32;
        let skins = rig
            .skins()
            .iter()
            .map(|s| {
                let start = at;
                at = at.saturating_add(s.joints.len() as u32);
                start..at
            })
            .collect();
        let joints = at;
        at = 0;
        let meshes = rig
            .meshes()
            .iter()
            .map(|m| {
                let start = at;
                at = at.saturating_add(m.target_count);
                start..at
            })
            .collect();
        OutputLayout {
            nodes: rig.nodes().len() as u32,
            joints,
            morph_weights: at,
            skins,
            meshes,
        }
    }

    /// World matrices per instance: one per node of the rig.
    #[must_use]
    pub fn nodes(&self) -> u32 {
        self.nodes
    }

    /// Joint matrices per instance: every skin's, one skin after another.
    #[must_use]
    pub fn joints(&self) -> u32 {
        self.joints
    }

    /// Morph weights per instance: every mesh's, one mesh after another.
    #[must_use]
    pub fn morph_weights(&self) -> u32 {
        self.morph_weights
    }

    /// The joint matrices of skin `skin` within an instance's block.
    #[must_use]
    pub fn skin_joints(&self, skin: u32) -> Option<Range<u32>> {
        self.skins.get(skin as usize).cloned()
    }

    /// The morph weights of mesh `mesh` within an instance's block (empty
    /// for a mesh without morph targets).
    #[must_use]
    pub fn mesh_weights(&self, mesh: u32) -> Option<Range<u32>> {
        self.meshes.get(mesh as usize).cloned()
    }
}

/// A mesh node of a rig and what draws it: the list
/// ([`Rig::parts`]) a renderer walks to draw the whole model from the
/// crate's buffers, rigid parts and every skin.
///
/// A rigid part draws with its node's world matrix, element
/// `i * layout.nodes() + node` of the world-matrix buffer
/// (`Animator::world_matrix_buffer`)
/// for instance `i`. A skinned part ignores its own node's transform
/// (glTF); it draws with `world(skin_node) * joint`, the joint matrices
/// at `i * layout.joints() + joints`: each joint matrix is
/// `inverse(world(skin_node)) * world(joint) * inverse_bind`, so the
/// world matrix of [`skin_node`](Self::skin_node) brings it back to the
/// model's space (it is the identity where that node rests at the
/// origin). Its morph weights are at
/// `i * layout.morph_weights() + morph_weights`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// The mesh node.
    pub node: u32,
    /// Its mesh.
    pub mesh: u32,
    /// Its skin, if it is skinned.
    pub skin: Option<u32>,
    /// Its skin's joint matrices within an instance's block.
    pub joints: Option<Range<u32>>,
    /// For a skinned part, the node whose world matrix times a joint
    /// matrix places a vertex: the skin's mesh node, the lowest-index node
    /// that uses the skin (its inverse world matrix is in the joint
    /// matrices).
    pub skin_node: Option<u32>,
    /// Its mesh's morph weights within an instance's block (empty for a
    /// mesh without morph targets).
    pub morph_weights: Range<u32>,
}

impl Rig {
    /// Where this rig's results sit in the output buffers.
    #[must_use]
    pub fn output_layout(&self) -> OutputLayout {
        OutputLayout::of(self)
    }

    /// Every node with a mesh, in node order, with where its matrices and
    /// morph weights sit in the output buffers.
    #[must_use]
    pub fn parts(&self) -> Vec<Part> {
        let layout = self.output_layout();
        self.nodes()
            .iter()
            .enumerate()
            .filter_map(|(n, node)| {
                let mesh = node.mesh?;
                Some(Part {
                    node: n as u32,
                    mesh,
                    skin: node.skin,
                    joints: node.skin.and_then(|s| layout.skin_joints(s)),
                    skin_node: node
                        .skin
                        .and_then(|s| self.skins().get(s as usize)?.mesh_node),
                    morph_weights: layout.mesh_weights(mesh).unwrap_or(0..0),
                })
            })
            .collect()
    }
}

/// One frame's results, indexed by instance, node, skin and mesh node, in
/// `glam` types. The GPU readback and the CPU twin give the same type with
/// the same indices, so results compare element by element.
///
/// With a mixer an "instance" is a character.
#[derive(Debug, Clone, PartialEq)]
pub struct Poses {
    instance_count: u32,
    layout: OutputLayout,
    /// The mesh of each node, for morph weights by node.
    node_meshes: Vec<Option<u32>>,
    locals: Vec<Transform>,
    world: Vec<Mat4>,
    joints: Vec<Mat4>,
    morph_weights: Vec<f32>,
    samples: Vec<f32>,
    output_stride: u32,
    /// Pointer targets: (pointer, offset, width) in `properties` blocks of
    /// `property_stride`, or in the sampled blocks without a mixer.
    pointers: Vec<(String, u32, u32)>,
    properties: Vec<f32>,
    property_stride: u32,
}

/// One frame's results, instance after instance, as [`Poses`] keeps them
/// (`tables::poses` makes them from what the passes write).
pub(crate) struct Results {
    pub instance_count: u32,
    pub samples: Vec<f32>,
    pub locals: Vec<Transform>,
    pub world: Vec<Mat4>,
    pub joints: Vec<Mat4>,
    pub morph_weights: Vec<f32>,
    /// With a mixer, its blended pointer properties; `None` without one
    /// (the pointers are then read from the sampled values).
    pub properties: Option<Properties>,
}

/// A mixer's blended pointer properties: the values, each pointer's
/// (pointer, offset, width) in a character's block, and the block's
/// stride.
pub(crate) struct Properties {
    pub values: Vec<f32>,
    pub pointers: Vec<(String, u32, u32)>,
    pub stride: u32,
}

impl Poses {
    /// Results of a frame of `library` posed on `rig`.
    pub(crate) fn new(rig: &Rig, library: &AnimationLibrary, flat: Results) -> Poses {
        let (pointers, properties, property_stride) = match flat.properties {
            Some(p) => (p.pointers, p.values, p.stride),
            None => (
                library
                    .pointer_targets()
                    .iter()
                    .map(|t| (t.pointer.clone(), t.offset, t.width))
                    .collect(),
                Vec::new(),
                0,
            ),
        };
        Poses {
            instance_count: flat.instance_count,
            layout: rig.output_layout(),
            node_meshes: rig.nodes().iter().map(|n| n.mesh).collect(),
            locals: flat.locals,
            world: flat.world,
            joints: flat.joints,
            morph_weights: flat.morph_weights,
            samples: flat.samples,
            output_stride: library.output_stride(),
            pointers,
            properties,
            property_stride,
        }
    }

    /// Appends `other`'s instances after this one's: the results of the
    /// next chunk of the same model (the same layout, strides and
    /// targets), so that a chunked model reads back as one.
    pub(crate) fn append(&mut self, other: Poses) {
        self.instance_count += other.instance_count;
        self.locals.extend(other.locals);
        self.world.extend(other.world);
        self.joints.extend(other.joints);
        self.morph_weights.extend(other.morph_weights);
        self.samples.extend(other.samples);
        self.properties.extend(other.properties);
    }

    /// Results of a frame sampled without a rig: only the sampled values
    /// and the pointer properties in them.
    pub(crate) fn unposed(
        library: &AnimationLibrary,
        instance_count: u32,
        samples: Vec<f32>,
    ) -> Poses {
        Poses {
            instance_count,
            layout: OutputLayout {
                nodes: 0,
                joints: 0,
                morph_weights: 0,
                skins: Vec::new(),
                meshes: Vec::new(),
            },
            node_meshes: Vec::new(),
            locals: Vec::new(),
            world: Vec::new(),
            joints: Vec::new(),
            morph_weights: Vec::new(),
            samples,
            output_stride: library.output_stride(),
            pointers: library
                .pointer_targets()
                .iter()
                .map(|t| (t.pointer.clone(), t.offset, t.width))
                .collect(),
            properties: Vec::new(),
            property_stride: 0,
        }
    }

    /// Instances (or, with a mixer, characters) in the frame.
    #[must_use]
    pub fn instance_count(&self) -> u32 {
        self.instance_count
    }

    fn node_index(&self, i: u32, node: u32) -> Option<usize> {
        (i < self.instance_count && node < self.layout.nodes)
            .then(|| i as usize * self.layout.nodes as usize + node as usize)
    }

    /// Instance `i`'s local transform of `node` (with a mixer: the blended
    /// one); `None` out of range.
    #[must_use]
    pub fn local(&self, i: u32, node: u32) -> Option<Transform> {
        self.locals.get(self.node_index(i, node)?).copied()
    }

    /// Instance `i`'s world matrix of `node` (its global transform in the
    /// model's space, for attaching an object to a bone); `None` out of
    /// range.
    #[must_use]
    pub fn world(&self, i: u32, node: u32) -> Option<Mat4> {
        self.world.get(self.node_index(i, node)?).copied()
    }

    /// Instance `i`'s joint matrices of skin `skin`, in the skin's joint
    /// order; `None` out of range.
    #[must_use]
    pub fn joints(&self, i: u32, skin: u32) -> Option<&[Mat4]> {
        if i >= self.instance_count {
            return None;
        }
        let r = self.layout.skin_joints(skin)?;
        let base = i as usize * self.layout.joints as usize;
        self.joints
            .get(base + r.start as usize..base + r.end as usize)
    }

    /// Instance `i`'s morph weights of the mesh of node `node`; `None` for
    /// a node without a mesh or out of range (empty for a mesh without
    /// morph targets).
    #[must_use]
    pub fn morph_weights(&self, i: u32, node: u32) -> Option<&[f32]> {
        if i >= self.instance_count {
            return None;
        }
        let mesh = (*self.node_meshes.get(node as usize)?)?;
        let r = self.layout.mesh_weights(mesh)?;
        let base = i as usize * self.layout.morph_weights as usize;
        self.morph_weights
            .get(base + r.start as usize..base + r.end as usize)
    }

    /// Instance `i`'s value of the pointer target `pointer` (e.g.
    /// `/materials/0/pbrMetallicRoughness/baseColorFactor`; with a mixer,
    /// the blended value); `None` for a pointer no clip animates, or out of
    /// range.
    #[must_use]
    pub fn property(&self, i: u32, pointer: &str) -> Option<&[f32]> {
        if i >= self.instance_count {
            return None;
        }
        let &(_, at, width) = self.pointers.iter().find(|(p, _, _)| p == pointer)?;
        let (values, stride) = if self.property_stride > 0 {
            (&self.properties, self.property_stride)
        } else {
            (&self.samples, self.output_stride)
        };
        let start = i as usize * stride as usize + at as usize;
        values.get(start..start + width as usize)
    }

    /// Row `i`'s block of sampled values (the sampler's output: instance
    /// `i`, or with a mixer the `i`-th action of the frame in flat order).
    #[must_use]
    pub fn samples(&self, i: u32) -> Option<&[f32]> {
        let stride = self.output_stride as usize;
        self.samples
            .get(i as usize * stride..(i as usize + 1) * stride)
    }
}

/// What [`Poses::compare`] compares, numbered as [`Comparison::max_abs`]
/// is indexed (`quantity as usize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// A node's local transform: translation (elements 0-2), rotation
    /// (3-6, x y z w, up to sign), scale (7-9).
    Local = 0,
    /// A node's world matrix, column-major.
    World = 1,
    /// A joint matrix (index: the joint's slot in the instance's joint
    /// block), column-major.
    Joints = 2,
    /// A morph weight (index: its slot in the instance's weight block).
    MorphWeights = 3,
}

/// One element of two frames, and how far apart they are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Difference {
    /// What it is.
    pub quantity: Quantity,
    /// The instance (or character).
    pub instance: u32,
    /// The node, joint slot or weight slot.
    pub index: u32,
    /// The element within it.
    pub element: u32,
    /// This frame's value.
    pub left: f32,
    /// The other frame's value.
    pub right: f32,
    /// `|left - right|` over the element's tolerance: at most 1 is within
    /// it.
    pub excess: f32,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "instance {}, {:?} {} element {}: {} vs {} ({:.2}x the tolerance)",
            self.instance,
            self.quantity,
            self.index,
            self.element,
            self.left,
            self.right,
            self.excess
        )
    }
}

/// The result of [`Poses::compare`] and [`Poses::compare_instances`]: the
/// largest difference of each quantity, and the worst element measured
/// against its tolerance.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Comparison {
    /// The largest absolute difference per quantity: local transforms,
    /// world matrices, joint matrices, morph weights (indexed as
    /// [`Quantity`] is numbered). A NaN on either side counts as infinity.
    pub max_abs: [f32; 4],
    /// The element farthest outside (or least inside) its tolerance;
    /// `None` for frames with nothing to compare.
    pub worst: Option<Difference>,
}

impl Comparison {
    /// Whether every element is within its tolerance.
    #[must_use]
    pub fn within(&self) -> bool {
        self.worst.is_none_or(|d| d.excess <= 1.0)
    }
}

/// The tolerance of one element, the README's ("Tests"): rotations
/// 2e-5 per component; translations, scales and morph weights 1e-5; world
/// and joint matrices 1e-4 per element; all but rotations relative above
/// 1 (times the larger of 1 and the other frame's value).
fn tolerance(q: Quantity, element: u32, right: f32) -> f32 {
    let scale = right.abs().max(1.0);
    match q {
        Quantity::Local if (3..7).contains(&element) => 2e-5,
        Quantity::Local | Quantity::MorphWeights => 1e-5 * scale,
        Quantity::World | Quantity::Joints => 1e-4 * scale,
    }
}

impl Comparison {
    /// Notes elements `a` (this frame's) and `b` (the other's) of
    /// `quantity` at `instance`, `index`. Equal values (infinities
    /// included) differ by 0; a NaN on either side differs by infinity, so
    /// it is never within a tolerance.
    fn note(&mut self, quantity: Quantity, instance: u32, index: u32, a: &[f32], b: &[f32]) {
        for (e, (&l, &r)) in a.iter().zip(b).enumerate() {
            let abs = if l == r { 0.0 } else { (l - r).abs() };
            let abs = if abs.is_nan() { f32::INFINITY } else { abs };
            let slot = quantity as usize;
            self.max_abs[slot] = self.max_abs[slot].max(abs);
            let excess = abs / tolerance(quantity, e as u32, r);
            let excess = if excess.is_nan() {
                f32::INFINITY
            } else {
                excess
            };
            if self.worst.is_none_or(|w| excess > w.excess) {
                self.worst = Some(Difference {
                    quantity,
                    instance,
                    index,
                    element: e as u32,
                    left: l,
                    right: r,
                    excess,
                });
            }
        }
    }
}

/// Instance `i`'s block of `stride` elements of `v` (empty where `v` is
/// shorter).
fn block<T>(v: &[T], i: u32, stride: u32) -> &[T] {
    let (i, stride) = (i as usize, stride as usize);
    v.get(i * stride..(i + 1) * stride).unwrap_or(&[])
}

/// A local transform as the 10 elements [`Quantity::Local`] numbers, its
/// rotation multiplied by `sign`.
fn local_elements(t: &Transform, sign: f32) -> [f32; 10] {
    let mut v = [0.0f32; 10];
    v[..3].copy_from_slice(&t.translation.to_array());
    v[3..7].copy_from_slice(&(t.rotation * sign).to_array());
    v[7..].copy_from_slice(&t.scale.to_array());
    v
}

impl Poses {
    /// Compares this frame with `other` (the GPU's with the CPU twin's,
    /// say) element by element: every node's local transform (rotations
    /// up to sign) and world matrix, every joint matrix, every morph
    /// weight, each against the README's tolerance for it: rotations 2e-5
    /// per component; world and joint matrices 1e-4 per element;
    /// translations, scales and morph weights 1e-5; all but rotations
    /// relative above 1 (times the larger of 1 and `other`'s value).
    ///
    /// ```
    /// # fn f(gpu: &keyframe_gpu::Poses, cpu: &keyframe_gpu::Poses) {
    /// let c = gpu.compare(cpu).expect("frames of the same shape");
    /// assert!(c.within(), "worst: {:?}", c.worst);
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::PosesDiffer`](crate::Error::PosesDiffer) when the frames
    /// do not have the same shape (instances, nodes, joints, weights).
    pub fn compare(&self, other: &Poses) -> crate::error::Result<Comparison> {
        self.check_shape(self.instance_count, other)?;
        Ok(self.compare_pairs((0..self.instance_count).map(|i| (i, i)), other))
    }

    /// Compares this frame's instances `chosen` with every instance of
    /// `other`: instance `chosen[k]` here with instance `k` there, as
    /// [`compare`](Self::compare) does. A large frame read back from the
    /// GPU is checked this way against the CPU twin of a sample of its
    /// instances. A [`Difference`]'s instance is this frame's.
    ///
    /// # Errors
    /// [`Error::PosesDiffer`](crate::Error::PosesDiffer) when `other` has
    /// another number of instances than `chosen`, or another rig's shape
    /// (nodes, joints, weights);
    /// [`Error::NoSuchInstance`](crate::Error::NoSuchInstance) when an
    /// instance of `chosen` is not in this frame.
    pub fn compare_instances(
        &self,
        chosen: &[u32],
        other: &Poses,
    ) -> crate::error::Result<Comparison> {
        self.check_shape(u32::try_from(chosen.len()).unwrap_or(u32::MAX), other)?;
        if let Some(&instance) = chosen.iter().find(|&&i| i >= self.instance_count) {
            return Err(crate::error::Error::NoSuchInstance {
                instance,
                instance_count: self.instance_count,
            });
        }
        Ok(self.compare_pairs(chosen.iter().copied().zip(0..), other))
    }

    /// [`Error::PosesDiffer`](crate::Error::PosesDiffer) unless `other`
    /// has `instances` instances and this frame's nodes, joints and
    /// weights per instance.
    fn check_shape(&self, instances: u32, other: &Poses) -> crate::error::Result<()> {
        let shape =
            |n: u32, p: &Poses| (n, p.layout.nodes, p.layout.joints, p.layout.morph_weights);
        let (left, right) = (shape(instances, self), shape(other.instance_count, other));
        if left == right {
            return Ok(());
        }
        Err(crate::error::Error::PosesDiffer {
            left: format!("{left:?}"),
            right: format!("{right:?}"),
        })
    }

    /// Compares this frame's instance `i` with `other`'s `k` for each
    /// pair `(i, k)`; the shapes are checked.
    fn compare_pairs(&self, pairs: impl Iterator<Item = (u32, u32)>, other: &Poses) -> Comparison {
        let mut c = Comparison::default();
        let (nodes, joints, weights) = (
            self.layout.nodes,
            self.layout.joints,
            self.layout.morph_weights,
        );
        for (i, k) in pairs {
            let locals = block(&self.locals, i, nodes).iter();
            let world = block(&self.world, i, nodes).iter();
            let theirs = block(&other.locals, k, nodes)
                .iter()
                .zip(block(&other.world, k, nodes));
            for (n, ((a, wa), (b, wb))) in locals.zip(world).zip(theirs).enumerate() {
                let sign = if a.rotation.dot(b.rotation) < 0.0 {
                    -1.0
                } else {
                    1.0
                };
                let n = n as u32;
                let (a, b) = (local_elements(a, sign), local_elements(b, 1.0));
                c.note(Quantity::Local, i, n, &a, &b);
                let (a, b) = (wa.to_cols_array(), wb.to_cols_array());
                c.note(Quantity::World, i, n, &a, &b);
            }
            let theirs = block(&other.joints, k, joints);
            for (j, (a, b)) in block(&self.joints, i, joints)
                .iter()
                .zip(theirs)
                .enumerate()
            {
                let (a, b) = (a.to_cols_array(), b.to_cols_array());
                c.note(Quantity::Joints, i, j as u32, &a, &b);
            }
            let theirs = block(&other.morph_weights, k, weights);
            for (w, (a, b)) in block(&self.morph_weights, i, weights)
                .iter()
                .zip(theirs)
                .enumerate()
            {
                c.note(Quantity::MorphWeights, i, w as u32, &[*a], &[*b]);
            }
        }
        c
    }
}
