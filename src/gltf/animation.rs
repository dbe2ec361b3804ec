//! Animations: [`Document::animations`] maps every channel into one
//! [`Track`] (times, values, width from the morph-target count), one
//! [`Clip`] per animation.

use std::collections::HashMap;
use std::sync::Arc;

use ::gltf::json;
use json::accessor::{ComponentType, GenericComponentType, Type};
use json::validation::Checked;

use super::accessor::{bad_component, check_type};
use super::error::{import_err, out_of_range, ImportErrorKind};
use super::Document;
use crate::error::{Error, Result};
use crate::library::AnimationLibrary;
use crate::track::{Clip, Interpolation, Property, Track};

/// The most key values (`f32`s, all channels of all animations together)
/// one import decodes: 2^24, 64 MiB (far above any real clip: Fox.glb has
/// about 4,000). Outputs are decoded once per channel, so a file whose many
/// channels share one large accessor would otherwise multiply its size;
/// past this the import is refused. Sampling such a file on the GPU holds
/// the values a few times over (library, upload, driver copies: about 490
/// MiB peak at this limit on lavapipe), which keeps any accepted file under
/// 1 GiB.
pub const MAX_IMPORTED_VALUES: u64 = 1 << 24;

/// Where a channel of an imported animation came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelInfo {
    /// The glTF node index of the channel's target.
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
    pub fn morph_target_count(&self, mesh: usize) -> std::result::Result<u32, ImportErrorKind> {
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

    /// Imports every animation: one [`Clip`] per animation, one [`Track`]
    /// per channel in `channels` order, validated into an
    /// [`AnimationLibrary`].
    ///
    /// # Errors
    /// [`Error::Import`] naming the animation, channel and accessor;
    /// [`ImportErrorKind::NoAnimations`] when there is none.
    pub fn animations(&self) -> Result<(AnimationLibrary, Vec<AnimationInfo>)> {
        if self.root.animations.is_empty() {
            return Err(import_err(ImportErrorKind::NoAnimations));
        }
        let mut inputs: HashMap<usize, Arc<[f32]>> = HashMap::new();
        let mut budget = MAX_IMPORTED_VALUES;
        let mut clips = Vec::with_capacity(self.root.animations.len());
        let mut infos = Vec::with_capacity(self.root.animations.len());
        for (a, anim) in self.root.animations.iter().enumerate() {
            let mut tracks = Vec::with_capacity(anim.channels.len());
            let mut channels = Vec::with_capacity(anim.channels.len());
            for c in 0..anim.channels.len() {
                let (track, info) =
                    self.channel(a, c, &mut inputs, &mut budget)
                        .map_err(|(accessor, kind)| Error::Import {
                            animation: Some(a),
                            channel: Some(c),
                            skin: None,
                            accessor,
                            kind,
                        })?;
                tracks.push(track);
                channels.push(info);
            }
            let name = anim.name.clone();
            clips.push(Clip::new(
                name.clone().unwrap_or_else(|| format!("animation {a}")),
                tracks,
            ));
            infos.push(AnimationInfo { name, channels });
        }
        let library = AnimationLibrary::new(clips)?;
        Ok((library, infos))
    }

    /// Imports channel `c` of animation `a`. Errors carry the accessor
    /// involved, if any.
    fn channel(
        &self,
        a: usize,
        c: usize,
        inputs: &mut HashMap<usize, Arc<[f32]>>,
        budget: &mut u64,
    ) -> std::result::Result<(Track, ChannelInfo), (Option<usize>, ImportErrorKind)> {
        let anim = &self.root.animations[a];
        let channel = &anim.channels[c];
        let s = channel.sampler.value();
        let sampler = anim
            .samplers
            .get(s)
            .ok_or_else(|| (None, out_of_range("sampler", s, anim.samplers.len())))?;
        let node = channel.target.node.value();
        let node_json = self
            .root
            .nodes
            .get(node)
            .ok_or_else(|| (None, out_of_range("node", node, self.root.nodes.len())))?;
        let property = match channel.target.path {
            Checked::Valid(json::animation::Property::Translation) => Property::Translation,
            Checked::Valid(json::animation::Property::Rotation) => Property::Rotation,
            Checked::Valid(json::animation::Property::Scale) => Property::Scale,
            Checked::Valid(json::animation::Property::MorphTargetWeights) => Property::Weights,
            Checked::Invalid => return Err((None, ImportErrorKind::UnknownPath)),
        };
        let interpolation = match sampler.interpolation {
            Checked::Valid(json::animation::Interpolation::Step) => Interpolation::Step,
            Checked::Valid(json::animation::Interpolation::Linear) => Interpolation::Linear,
            Checked::Valid(json::animation::Interpolation::CubicSpline) => {
                Interpolation::CubicSpline
            }
            Checked::Invalid => return Err((None, ImportErrorKind::UnknownInterpolation)),
        };
        let input = sampler.input.value();
        let output = sampler.output.value();
        let width = match property.fixed_width() {
            Some(w) => w,
            None => {
                let mesh = node_json
                    .mesh
                    .ok_or((None, ImportErrorKind::NodeWithoutMesh { node }))?;
                self.morph_target_count(mesh.value())
                    .map_err(|k| (None, k))?
            }
        };

        // Input: SCALAR FLOAT key times, shared between channels.
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
        let times = match inputs.get(&input) {
            Some(t) => t.clone(),
            None => {
                let data = self.source().read(input).map_err(|k| (Some(input), k))?;
                let t: Arc<[f32]> = data.values.into();
                inputs.insert(input, t.clone());
                t
            }
        };

        // Output: type and component type per path, count per interpolation.
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
        let keys = times.len() as u64;
        let per_key = interpolation.elements_per_key() as u64;
        let per_element = if property == Property::Weights {
            u64::from(width)
        } else {
            1
        };
        let expected = keys.saturating_mul(per_key).saturating_mul(per_element);
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
        let floats = expected.saturating_mul(if property == Property::Weights {
            1
        } else {
            u64::from(width)
        });
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
        let values = self
            .source()
            .read(output)
            .map_err(|k| (Some(output), k))?
            .values;
        let track = Track {
            node: node as u32,
            property,
            interpolation,
            width,
            times,
            values,
            pointer: None,
        };
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
        Ok((
            track,
            ChannelInfo {
                node,
                property,
                interpolation,
                sampler: s,
                input,
                output,
            },
        ))
    }
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
