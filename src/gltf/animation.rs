//! Animations: [`Document::animations`] maps every channel into one
//! [`Track`] (times, values, width from the morph-target count), one
//! [`Clip`] per animation.

use std::collections::HashMap;
use std::sync::Arc;

use ::gltf::json;
use json::accessor::{ComponentType, GenericComponentType, Type};
use json::validation::Checked;

use super::accessor::{bad_component, check_type};
use super::error::{import_err, out_of_range};
use super::pointer::{self, ChannelSlot};
use super::Document;
use crate::error::{Error, Result};
use crate::error::{ImportErrorKind, PointerProblem};
use crate::kinds::{Interpolation, PointerType, Property, ValueKind};
use crate::model::library::AnimationLibrary;
use crate::model::track::{Clip, Marker, PointerTarget, Track};
use crate::model::NodeName;

/// The most key values (`f32`s, all channels of all animations together)
/// one import decodes: 2^24, 64 MiB (far above any real clip: Fox.glb has
/// about 4,000). Outputs are decoded once per channel, so a file whose many
/// channels share one large accessor would otherwise multiply its size;
/// past this the import is refused. Sampling such a file on the GPU holds
/// the values a few times over (library, upload, driver copies: about 490
/// MiB peak at this limit on lavapipe), which keeps any accepted file under
/// 1 GiB.
pub(crate) const MAX_IMPORTED_VALUES: u64 = 1 << 24;

/// Where a channel of an imported animation came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelInfo {
    /// The glTF node index of the channel's target (`usize::MAX` for a
    /// pointer channel whose target is not a node).
    pub node: usize,
    /// The target path.
    pub property: Property,
    /// The sampler's interpolation.
    pub interpolation: Interpolation,
    /// Index of the sampler inside the animation.
    pub sampler: usize,
    /// The sampler's input (key times) accessor.
    pub input: usize,
    /// The sampler's output (key values) accessor.
    pub output: usize,
    /// A `KHR_animation_pointer` channel's pointer, as written; `None` for
    /// a core channel. A pointer to a node property (`/nodes/0/rotation`)
    /// gives a node track, with `node` and `property` set as for a core
    /// channel; any other gives a [`Property::Pointer`] track and `node`
    /// is `usize::MAX`.
    pub pointer: Option<String>,
}

/// What a channel's sampler gives it: the sampler's index in its
/// animation, its interpolation and its input and output accessors.
#[derive(Debug, Clone, Copy)]
struct SamplerKeys {
    sampler: usize,
    interpolation: Interpolation,
    input: usize,
    output: usize,
}

impl SamplerKeys {
    /// `track`, read through these keys, checked against their accessors
    /// ([`Document::checked`]), with the info of its channel, which targets
    /// `node`'s `property` or, with a `pointer`, what the pointer names.
    fn imported(
        self,
        track: Track,
        node: usize,
        property: Property,
        pointer: Option<String>,
    ) -> ChannelResult<(Track, ChannelInfo)> {
        let track = Document::checked(track, self.input, self.output)?;
        Ok((
            track,
            ChannelInfo {
                node,
                property,
                interpolation: self.interpolation,
                sampler: self.sampler,
                input: self.input,
                output: self.output,
                pointer,
            },
        ))
    }
}

/// Where an imported clip came from: one entry per glTF animation.
#[derive(Debug, Clone, PartialEq)]
pub struct AnimationInfo {
    /// The animation's name, if it has one.
    pub name: Option<String>,
    /// One entry per channel, in the order of the `channels` array; entry
    /// `j` describes track `j` of the clip.
    pub channels: Vec<ChannelInfo>,
}

impl Document {
    /// The morph-target count of mesh `mesh`: the primitives' common target
    /// count, or the length of the mesh's default `weights`.
    ///
    /// # Errors
    /// [`ImportErrorKind::MorphTargets`] when the mesh has no targets or its
    /// primitives and weights disagree; an out-of-range error for a bad index.
    pub(crate) fn morph_target_count(
        &self,
        mesh: usize,
    ) -> std::result::Result<u32, ImportErrorKind> {
        let m = self
            .root
            .meshes
            .get(mesh)
            .ok_or_else(|| out_of_range("mesh", mesh, self.root.meshes.len()))?;
        let targets = primitive_target_count(mesh, m)?;
        let weights = m.weights.as_ref().map(Vec::len);
        let count = match weights {
            Some(w) if targets > 0 && w != targets => {
                return Err(ImportErrorKind::MorphTargets {
                    mesh,
                    reason: format!(
                        "default weights has {w} entries but the primitives have {targets} morph targets"
                    ),
                })
            }
            Some(w) if targets == 0 => w,
            _ => targets,
        };
        if count == 0 {
            return Err(ImportErrorKind::MorphTargets {
                mesh,
                reason: "no morph targets".into(),
            });
        }
        u32::try_from(count).map_err(|_| ImportErrorKind::MorphTargets {
            mesh,
            reason: format!("{count} morph targets"),
        })
    }

    /// Every node's name and name path from its root ([`NodeName`]), as
    /// tracks carry them; `None` for a node without a name. Parents come
    /// from `children`; in a broken hierarchy (a node listed twice, a
    /// cycle) the first parent counts and the walk stops after as many
    /// steps as there are nodes.
    pub(crate) fn node_names(&self) -> Vec<Option<Arc<NodeName>>> {
        let nodes = &self.root.nodes;
        let mut parent: Vec<Option<usize>> = vec![None; nodes.len()];
        for (p, node) in nodes.iter().enumerate() {
            for child in node.children.iter().flatten() {
                if let Some(slot) = parent.get_mut(child.value()) {
                    slot.get_or_insert(p);
                }
            }
        }
        (0..nodes.len())
            .map(|n| {
                nodes[n].name.as_ref()?;
                let mut path = Vec::new();
                let mut at = Some(n);
                while let Some(i) = at.filter(|_| path.len() <= nodes.len()) {
                    path.push(nodes[i].name.clone());
                    at = parent[i];
                }
                path.reverse();
                NodeName::from_path(path).map(Arc::new)
            })
            .collect()
    }

    /// Imports every animation: one [`Clip`] per animation, one [`Track`]
    /// per channel in `channels` order (core and `KHR_animation_pointer`
    /// channels alike), validated into an [`AnimationLibrary`].
    ///
    /// # Errors
    /// [`Error::Import`] naming the animation, channel and accessor;
    /// [`ImportErrorKind::NoAnimations`] when there is none;
    /// [`ImportErrorKind::Pointer`] naming the pointer of a pointer channel
    /// that is refused.
    pub fn animations(&self) -> Result<(AnimationLibrary, Vec<AnimationInfo>)> {
        if self.root.animations.is_empty() {
            return Err(import_err(ImportErrorKind::NoAnimations));
        }
        let mut inputs: HashMap<usize, Arc<[f32]>> = HashMap::new();
        let mut budget = MAX_IMPORTED_VALUES;
        let names = self.node_names();
        let mut clips = Vec::with_capacity(self.root.animations.len());
        let mut infos = Vec::with_capacity(self.root.animations.len());
        for (a, anim) in self.root.animations.iter().enumerate() {
            let order = self.pointers.channels(a);
            let count = order.map_or(anim.channels.len(), <[ChannelSlot]>::len);
            let mut tracks = Vec::with_capacity(count);
            let mut channels = Vec::with_capacity(count);
            // With pointer channels: each target's first channel, to refuse
            // a property targeted twice when a pointer is involved.
            let mut seen: HashMap<Target, (usize, Option<String>)> = HashMap::new();
            for c in 0..count {
                let located = |(accessor, kind)| Error::Import {
                    animation: Some(a),
                    channel: Some(c),
                    skin: None,
                    accessor,
                    kind,
                };
                let (track, info) = match order.and_then(|o| o.get(c)) {
                    None => self.channel(a, c, &mut inputs, &mut budget),
                    Some(ChannelSlot::Core(i)) => self.channel(a, *i, &mut inputs, &mut budget),
                    Some(ChannelSlot::Pointer(raw)) => {
                        self.pointer_channel(a, raw, &mut inputs, &mut budget)
                    }
                }
                .map_err(located)?;
                let track = match (&track.pointer, names.get(info.node)) {
                    (None, Some(Some(name))) => track.with_target(Arc::clone(name)),
                    _ => track,
                };
                if order.is_some() {
                    note_target(&mut seen, c, &track, &info).map_err(|k| located((None, k)))?;
                }
                tracks.push(track);
                channels.push(info);
            }
            let name = anim.name.clone();
            let mut clip = Clip::new(
                name.clone().unwrap_or_else(|| format!("animation {a}")),
                tracks,
            )
            .with_source(self.source);
            clip.markers = markers(anim.extras.as_deref()).map_err(|reason| Error::Import {
                animation: Some(a),
                channel: None,
                skin: None,
                accessor: None,
                kind: ImportErrorKind::BadMarkers { reason },
            })?;
            clips.push(clip);
            infos.push(AnimationInfo { name, channels });
        }
        let library = AnimationLibrary::new(clips)?;
        Ok((library, infos))
    }

    /// The interpolation, input and output accessors and key times of
    /// sampler `s` of animation `a`; key times are shared between channels.
    fn sampler_keys(
        &self,
        a: usize,
        s: usize,
        inputs: &mut HashMap<usize, Arc<[f32]>>,
    ) -> ChannelResult<(SamplerKeys, Arc<[f32]>)> {
        let anim = &self.root.animations[a];
        let sampler = anim
            .samplers
            .get(s)
            .ok_or_else(|| (None, out_of_range("sampler", s, anim.samplers.len())))?;
        let interpolation = match sampler.interpolation {
            Checked::Valid(json::animation::Interpolation::Step) => Interpolation::Step,
            Checked::Valid(json::animation::Interpolation::Linear) => Interpolation::Linear,
            Checked::Valid(json::animation::Interpolation::CubicSpline) => {
                Interpolation::CubicSpline
            }
            Checked::Invalid => return Err((None, ImportErrorKind::UnknownInterpolation)),
        };
        let input = sampler.input.value();
        let keys = SamplerKeys {
            sampler: s,
            interpolation,
            input,
            output: sampler.output.value(),
        };
        Ok((keys, self.key_times(input, inputs)?))
    }

    /// Input accessor `input`: SCALAR FLOAT key times, read once.
    fn key_times(
        &self,
        input: usize,
        inputs: &mut HashMap<usize, Arc<[f32]>>,
    ) -> ChannelResult<Arc<[f32]>> {
        let in_acc = self
            .source()
            .accessor(input)
            .map_err(|k| (Some(input), k))?;
        check_type(in_acc, Type::Scalar).map_err(|k| (Some(input), k))?;
        if !matches!(
            in_acc.component_type,
            Checked::Valid(GenericComponentType(ComponentType::F32))
        ) {
            return Err((
                Some(input),
                bad_component(in_acc, "animation input (key times)"),
            ));
        }
        Ok(match inputs.get(&input) {
            Some(t) => t.clone(),
            None => {
                let data = self.source().read(input).map_err(|k| (Some(input), k))?;
                let t: Arc<[f32]> = data.values.into();
                inputs.insert(input, t.clone());
                t
            }
        })
    }

    /// Reads output accessor `output` (type already checked): `elements`
    /// elements of `floats` numbers in all, counted against the budget.
    fn output_values(
        &self,
        output: usize,
        keys: u64,
        expected: u64,
        floats: u64,
        budget: &mut u64,
    ) -> ChannelResult<Vec<f32>> {
        let out_acc = self
            .source()
            .accessor(output)
            .map_err(|k| (Some(output), k))?;
        if out_acc.count.0 != expected {
            return Err((
                Some(output),
                ImportErrorKind::CountMismatch {
                    input: keys,
                    output: out_acc.count.0,
                    expected,
                },
            ));
        }
        if floats > *budget {
            return Err((
                Some(output),
                ImportErrorKind::TooLarge {
                    what: "key values of all channels",
                    count: (MAX_IMPORTED_VALUES - *budget).saturating_add(floats),
                    limit: MAX_IMPORTED_VALUES,
                },
            ));
        }
        *budget -= floats;
        Ok(self
            .source()
            .read(output)
            .map_err(|k| (Some(output), k))?
            .values)
    }

    /// Validates a decoded track (errors name the input or the output
    /// accessor) and refuses a negative first key time.
    fn checked(track: Track, input: usize, output: usize) -> ChannelResult<Track> {
        track.validate().map_err(|kind| {
            let accessor = match kind {
                crate::TrackError::NoKeys
                | crate::TrackError::TimeNotFinite { .. }
                | crate::TrackError::TimesNotIncreasing { .. }
                | crate::TrackError::CubicSplineTooFewKeys { .. } => input,
                _ => output,
            };
            (Some(accessor), ImportErrorKind::InvalidTrack(kind))
        })?;
        // Strictly increasing, so only the first key can be the negative one.
        if let Some(&time) = track.times.first().filter(|t| **t < 0.0) {
            return Err((Some(input), ImportErrorKind::NegativeTime { key: 0, time }));
        }
        Ok(track)
    }

    /// Imports core channel `c` of `root.animations[a]`. Errors carry the
    /// accessor involved, if any.
    fn channel(
        &self,
        a: usize,
        c: usize,
        inputs: &mut HashMap<usize, Arc<[f32]>>,
        budget: &mut u64,
    ) -> ChannelResult<(Track, ChannelInfo)> {
        let anim = &self.root.animations[a];
        let channel = &anim.channels[c];
        let s = channel.sampler.value();
        let sampler = anim
            .samplers
            .get(s)
            .ok_or_else(|| (None, out_of_range("sampler", s, anim.samplers.len())))?;
        let node = channel.target.node.value();
        self.root
            .nodes
            .get(node)
            .ok_or_else(|| (None, out_of_range("node", node, self.root.nodes.len())))?;
        let property = core_property(channel)?;
        if matches!(sampler.interpolation, Checked::Invalid) {
            return Err((None, ImportErrorKind::UnknownInterpolation));
        }
        let width = self.node_width(node, property)?;
        let (keys, times) = self.sampler_keys(a, s, inputs)?;
        let SamplerKeys {
            interpolation,
            output,
            ..
        } = keys;
        self.check_core_output(output, property)?;
        let (expected, floats) = counts(times.len(), interpolation, property, width);
        let values = self.output_values(output, times.len() as u64, expected, floats, budget)?;
        let track = node_track(node, property, interpolation, width, times, values);
        keys.imported(track, node, property, None)
    }

    /// Components per value of `property` on node `node`: the property's
    /// own width, or for weights the morph-target count of the node's mesh.
    fn node_width(&self, node: usize, property: Property) -> ChannelResult<u32> {
        match property.fixed_width() {
            Some(w) => Ok(w),
            None => {
                let mesh = self
                    .root
                    .nodes
                    .get(node)
                    .and_then(|n| n.mesh)
                    .ok_or((None, ImportErrorKind::NodeWithoutMesh { node }))?;
                self.morph_target_count(mesh.value()).map_err(|k| (None, k))
            }
        }
    }

    /// Checks a core channel's output accessor `output`: the type and the
    /// component type that `property` allows (the count is checked when
    /// it is read).
    fn check_core_output(&self, output: usize, property: Property) -> ChannelResult<()> {
        let out_acc = self
            .source()
            .accessor(output)
            .map_err(|k| (Some(output), k))?;
        let (ty, usage, ints_allowed) = match property {
            Property::Translation => (Type::Vec3, "translation output", false),
            Property::Scale => (Type::Vec3, "scale output", false),
            Property::Rotation => (Type::Vec4, "rotation output", true),
            Property::Weights | Property::Pointer => (Type::Scalar, "weights output", true),
        };
        check_type(out_acc, ty).map_err(|k| (Some(output), k))?;
        let ct_ok = match out_acc.component_type {
            Checked::Valid(GenericComponentType(ComponentType::F32)) => true,
            Checked::Valid(GenericComponentType(
                ComponentType::I8 | ComponentType::U8 | ComponentType::I16 | ComponentType::U16,
            )) => ints_allowed && out_acc.normalized,
            _ => false,
        };
        if !ct_ok {
            return Err((Some(output), bad_component(out_acc, usage)));
        }
        Ok(())
    }

    /// Imports a `KHR_animation_pointer` channel of animation `a` from its
    /// JSON object: the pointer resolved against the document, the output
    /// read by the extension's rules (any component type for `float*`
    /// targets, normalized integers decoded; non-normalized integers for
    /// `int`; unsigned bytes for `bool`, 0 false and anything else true).
    fn pointer_channel(
        &self,
        a: usize,
        raw: &::gltf::json::Value,
        inputs: &mut HashMap<usize, Arc<[f32]>>,
        budget: &mut u64,
    ) -> ChannelResult<(Track, ChannelInfo)> {
        let pointer = channel_pointer(raw)?;
        let refuse = |problem| refused(pointer, problem);
        if let Some(node) = raw.get("target").and_then(|t| t.get("node")) {
            return Err(refuse(PointerProblem::NodeSet {
                node: node.to_string(),
            }));
        }
        let s = channel_sampler(raw)?;
        let tokens = pointer::tokens(pointer).map_err(refuse)?;
        let resolved = self.resolve_pointer(&tokens).map_err(refuse)?;
        let anim = &self.root.animations[a];
        let sampler = anim
            .samplers
            .get(s)
            .ok_or_else(|| (None, out_of_range("sampler", s, anim.samplers.len())))?;
        // Discrete targets must be STEP: known before any accessor is read.
        check_discrete_step(sampler, &resolved).map_err(refuse)?;
        let (property, node, width, pointer_ty) = self.pointer_shape(&resolved)?;
        let (keys, times) = self.sampler_keys(a, s, inputs)?;
        let SamplerKeys {
            interpolation,
            output,
            ..
        } = keys;
        let out_acc = self
            .source()
            .accessor(output)
            .map_err(|k| (Some(output), k))?;
        check_pointer_output(out_acc, pointer_ty).map_err(|p| (Some(output), refuse(p).1))?;
        let (expected, floats) = counts(times.len(), interpolation, property, width);
        let mut values =
            self.output_values(output, times.len() as u64, expected, floats, budget)?;
        if pointer_ty == PointerType::Bool {
            to_bools(&mut values);
        }
        let track = match resolved {
            pointer::Resolved::Node { node, property } => {
                node_track(node, property, interpolation, width, times, values)
            }
            pointer::Resolved::Other { ty, rest } => Track::for_pointer(
                PointerTarget::new(pointer::canonical(&tokens), ty, rest),
                interpolation,
                times,
                values,
            ),
        };
        keys.imported(track, node, property, Some(pointer.to_string()))
    }

    /// Resolves a pointer's `tokens` against the document's JSON.
    fn resolve_pointer(
        &self,
        tokens: &[String],
    ) -> std::result::Result<pointer::Resolved, PointerProblem> {
        let json = self.pointers.json().ok_or_else(|| {
            PointerProblem::Unresolved("the document was not read for pointers".into())
        })?;
        pointer::resolve(json, tokens)
    }

    /// What a resolved pointer channel writes: `(property, node, width,
    /// type)`, `node` `usize::MAX` for a target that is not a node.
    fn pointer_shape(
        &self,
        resolved: &pointer::Resolved,
    ) -> ChannelResult<(Property, usize, u32, PointerType)> {
        match resolved {
            pointer::Resolved::Node { node, property } => {
                let width = self.node_width(*node, *property)?;
                let ty = match property {
                    Property::Translation | Property::Scale => PointerType::Float3,
                    Property::Rotation => PointerType::Float4,
                    _ => PointerType::Float,
                };
                Ok((*property, *node, width, ty))
            }
            pointer::Resolved::Other { ty, .. } => {
                Ok((Property::Pointer, usize::MAX, ty.width(), *ty))
            }
        }
    }
}

/// What a channel can fail with: the accessor involved, if any, and why.
type ChannelResult<T> = std::result::Result<T, (Option<usize>, ImportErrorKind)>;

/// What a channel targets, for finding a property targeted twice.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Target {
    Node(usize, Property),
    Pointer(String),
}

/// Records channel `c`'s target in `seen` (each target's first channel
/// and its pointer); refuses a property targeted twice when a pointer
/// channel is involved.
fn note_target(
    seen: &mut HashMap<Target, (usize, Option<String>)>,
    c: usize,
    track: &Track,
    info: &ChannelInfo,
) -> std::result::Result<(), ImportErrorKind> {
    let key = match &track.pointer {
        Some(target) => Target::Pointer(target.pointer.clone()),
        None => Target::Node(info.node, info.property),
    };
    match seen.get(&key) {
        Some((first, first_pointer)) if info.pointer.is_some() || first_pointer.is_some() => {
            let pointer = info
                .pointer
                .clone()
                .or_else(|| first_pointer.clone())
                .unwrap_or_default();
            Err(ImportErrorKind::Pointer {
                pointer,
                problem: Box::new(PointerProblem::Duplicate { first: *first }),
            })
        }
        Some(_) => Ok(()),
        None => {
            seen.insert(key, (c, info.pointer.clone()));
            Ok(())
        }
    }
}

/// The property a core channel's `target.path` names.
fn core_property(channel: &json::animation::Channel) -> ChannelResult<Property> {
    match channel.target.path {
        Checked::Valid(json::animation::Property::Translation) => Ok(Property::Translation),
        Checked::Valid(json::animation::Property::Rotation) => Ok(Property::Rotation),
        Checked::Valid(json::animation::Property::Scale) => Ok(Property::Scale),
        Checked::Valid(json::animation::Property::MorphTargetWeights) => Ok(Property::Weights),
        Checked::Invalid => Err((None, ImportErrorKind::UnknownPath)),
    }
}

/// A track of node `node`'s `property`, without a target name.
fn node_track(
    node: usize,
    property: Property,
    interpolation: Interpolation,
    width: u32,
    times: Arc<[f32]>,
    values: Vec<f32>,
) -> Track {
    Track {
        node: node as u32,
        property,
        interpolation,
        width,
        times,
        values,
        pointer: None,
        target: None,
    }
}

/// The pointer of a `KHR_animation_pointer` channel's JSON object.
fn channel_pointer(raw: &json::Value) -> ChannelResult<&str> {
    raw.get("target")
        .and_then(|t| t.get("extensions"))
        .and_then(|e| e.get(pointer::EXTENSION))
        .and_then(|p| p.get("pointer"))
        .and_then(json::Value::as_str)
        .ok_or((None, ImportErrorKind::PointerExtensionMissing))
}

/// The sampler index of a pointer channel's JSON object.
fn channel_sampler(raw: &json::Value) -> ChannelResult<usize> {
    raw.get("sampler")
        .and_then(json::Value::as_u64)
        .and_then(|s| usize::try_from(s).ok())
        .ok_or_else(|| {
            (
                None,
                ImportErrorKind::Json(
                    "animation channel: \"sampler\" is missing or not an index".into(),
                ),
            )
        })
}

/// The error of a pointer channel refused for `problem`.
fn refused(pointer: &str, problem: PointerProblem) -> (Option<usize>, ImportErrorKind) {
    (
        None,
        ImportErrorKind::Pointer {
            pointer: pointer.to_string(),
            problem: Box::new(problem),
        },
    )
}

/// Refuses a sampler other than STEP for a discrete (`int`, `bool`)
/// pointer target.
fn check_discrete_step(
    sampler: &json::animation::Sampler,
    resolved: &pointer::Resolved,
) -> std::result::Result<(), PointerProblem> {
    if let pointer::Resolved::Other { ty, .. } = resolved {
        let interpolation = match sampler.interpolation {
            Checked::Valid(json::animation::Interpolation::Linear) => Interpolation::Linear,
            Checked::Valid(json::animation::Interpolation::CubicSpline) => {
                Interpolation::CubicSpline
            }
            _ => Interpolation::Step,
        };
        if ty.value_kind() == ValueKind::Discrete && interpolation != Interpolation::Step {
            return Err(PointerProblem::NotStep {
                ty: *ty,
                interpolation,
            });
        }
    }
    Ok(())
}

/// Checks a pointer channel's output accessor against the target's type:
/// its accessor type, and the component types the extension allows.
fn check_pointer_output(
    out_acc: &json::Accessor,
    pointer_ty: PointerType,
) -> std::result::Result<(), PointerProblem> {
    let (ty_ok, expected_ty) = match pointer_ty {
        PointerType::Float2 => (Type::Vec2, "VEC2"),
        PointerType::Float3 => (Type::Vec3, "VEC3"),
        PointerType::Float4 => (Type::Vec4, "VEC4"),
        _ => (Type::Scalar, "SCALAR"),
    };
    let ct = match out_acc.component_type {
        Checked::Valid(GenericComponentType(ct)) => Some(ct),
        Checked::Invalid => None,
    };
    let (ct_ok, expected_ct) = match pointer_ty {
        PointerType::Bool => (ct == Some(ComponentType::U8), "UNSIGNED_BYTE"),
        PointerType::Int => (
            ct.is_some_and(|c| c != ComponentType::F32) && !out_acc.normalized,
            "a non-normalized integer component type",
        ),
        _ => (
            ct.is_some_and(|c| c != ComponentType::U32 || !out_acc.normalized),
            "FLOAT or an integer component type",
        ),
    };
    let type_fits = matches!(out_acc.type_, Checked::Valid(t) if t == ty_ok);
    if !(type_fits && ct_ok) {
        return Err(PointerProblem::OutputType {
            ty: pointer_ty,
            expected: if type_fits { expected_ct } else { expected_ty },
            found: describe_accessor(out_acc),
        });
    }
    Ok(())
}

/// `bool` key values as the extension reads them: 0 is false, any other
/// value true (normalized or not, a non-zero byte decodes to a non-zero
/// number).
fn to_bools(values: &mut [f32]) {
    for v in values {
        *v = if *v != 0.0 { 1.0 } else { 0.0 };
    }
}

/// Output elements and `f32`s a channel of `keys` keys needs: weights
/// count `width` elements per key element, other properties one element
/// of `width` numbers.
fn counts(keys: usize, interpolation: Interpolation, property: Property, width: u32) -> (u64, u64) {
    let elements = (keys as u64).saturating_mul(interpolation.elements_per_key() as u64);
    if property == Property::Weights {
        let e = elements.saturating_mul(u64::from(width));
        (e, e)
    } else {
        (elements, elements.saturating_mul(u64::from(width)))
    }
}

/// `"VEC2 of FLOAT"`, `"SCALAR of normalized UNSIGNED_BYTE"`, ...
fn describe_accessor(acc: &json::Accessor) -> String {
    let ty = match acc.type_ {
        Checked::Valid(t) => format!("{t:?}").to_uppercase(),
        Checked::Invalid => "an unknown type".into(),
    };
    let ct = match bad_component(acc, "") {
        ImportErrorKind::BadComponentType { found, .. } => found,
        _ => String::new(),
    };
    format!(
        "{ty} of {}{ct}",
        if acc.normalized { "normalized " } else { "" }
    )
}

/// The morph-target count that every primitive of mesh `mesh` has (0 for a
/// mesh without primitives), shared by the animation and rig imports.
///
/// # Errors
/// [`ImportErrorKind::MorphTargets`] when two primitives disagree.
pub(super) fn primitive_target_count(
    mesh: usize,
    m: &json::Mesh,
) -> std::result::Result<usize, ImportErrorKind> {
    let mut targets: Option<usize> = None;
    for (p, prim) in m.primitives.iter().enumerate() {
        let n = prim.targets.as_ref().map_or(0, Vec::len);
        match targets {
            Some(t) if t != n => {
                return Err(ImportErrorKind::MorphTargets {
                    mesh,
                    reason: format!("primitive {p} has {n} morph targets, the ones before it {t}"),
                })
            }
            _ => targets = Some(n),
        }
    }
    Ok(targets.unwrap_or(0))
}

/// The markers of an animation's `extras`: `{"markers": [{"name": S,
/// "time": T}, ...]}`, by time; none without extras or without
/// `"markers"`. Other fields of the extras are the file's own and left
/// alone.
fn markers(extras: Option<&gltf::json::extras::RawValue>) -> Result<Vec<Marker>, String> {
    use gltf::json::Value;
    let Some(raw) = extras else {
        return Ok(Vec::new());
    };
    let value: Value = gltf::json::deserialize::from_str(raw.get())
        .map_err(|e| format!("extras are not valid JSON: {e}"))?;
    let Some(list) = value.get("markers") else {
        return Ok(Vec::new());
    };
    let Some(list) = list.as_array() else {
        return Err("extras.markers is not an array".into());
    };
    let mut out = Vec::with_capacity(list.len());
    for (m, item) in list.iter().enumerate() {
        let name = item
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("extras.markers[{m}].name is missing or not a string"))?;
        let time = item
            .get("time")
            .and_then(Value::as_f64)
            .filter(|t| t.is_finite() && *t >= 0.0)
            .ok_or_else(|| {
                format!("extras.markers[{m}].time is missing or not a finite number >= 0")
            })?;
        out.push(Marker {
            time,
            name: name.into(),
        });
    }
    out.sort_by(|a, b| a.time.total_cmp(&b.time));
    Ok(out)
}
