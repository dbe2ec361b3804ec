//! The device-free side of a crowd: its models ([`CrowdModels`]: each a
//! library bound to a rig, or a library alone, with an optional mixer),
//! the handles that name them ([`ModelId`], [`ClipRef`]), one frame's
//! characters ([`CrowdInstance`], [`CrowdCharacter`]) and results
//! ([`CrowdPoses`]). The GPU `Crowd` holds a
//! [`CrowdModels`] beside its animators, and the CPU twin
//! (`cpu::crowd_poses`,
//! `cpu::crowd_mixed_poses`) takes the
//! same value, so both split a frame per model by the same checks.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::MixError;
use crate::error::{Error, Result};
use crate::model::instance::Instance;
use crate::model::library::AnimationLibrary;
use crate::model::mix::{Action, MixerDesc};
use crate::model::poses::Poses;
use crate::model::track::WrapMode;
use crate::model::BoundLibrary;

/// Tells crowds apart, so that an id of one crowd is never taken for a
/// model of another.
static NEXT_CROWD: AtomicU64 = AtomicU64::new(0);

/// A model of a `Crowd`, as returned by
/// `Crowd::add_model`. Only valid in the crowd
/// that made it: another crowd refuses it as unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ModelId {
    crowd: u64,
    index: u32,
}

impl ModelId {
    /// The model's index in its crowd, in the order the models were added.
    #[must_use]
    pub fn index(self) -> usize {
        self.index as usize
    }
}

/// A clip of one model of a `Crowd`: made by
/// `Crowd::clip` or [`CrowdModels::clip_at`], so it always says which
/// model it belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClipRef {
    model: ModelId,
    clip: u32,
}

impl ClipRef {
    /// The model the clip belongs to.
    #[must_use]
    pub fn model(self) -> ModelId {
        self.model
    }

    /// The clip's index in its model's [`AnimationLibrary`] (what an
    /// [`Action`] of that model names).
    #[must_use]
    pub fn clip(self) -> u32 {
        self.clip
    }
}

/// One character of a crowd for one frame: which model it is, which of
/// that model's clips it plays, at what time, and how the time wraps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CrowdInstance {
    /// The instance's model.
    pub model: ModelId,
    /// The clip it plays: must be a clip of `model`.
    pub clip: ClipRef,
    /// Playback time in seconds (see [`Instance::time`]).
    pub time: f64,
    /// How `time` maps to clip time.
    pub wrap: WrapMode,
}

impl CrowdInstance {
    /// An instance of `model` playing `clip` at `time` with
    /// [`WrapMode::Clamp`].
    #[must_use]
    pub fn new(model: ModelId, clip: ClipRef, time: f64) -> Self {
        CrowdInstance {
            model,
            clip,
            time,
            wrap: WrapMode::Clamp,
        }
    }

    /// The same instance with another wrap mode.
    #[must_use]
    pub fn with_wrap(self, wrap: WrapMode) -> Self {
        CrowdInstance { wrap, ..self }
    }
}

/// One character of a crowd's mixed frame
/// (`Crowd::set_actions`): its model (one
/// added with a mixer) and how many of the frame's actions, consecutive
/// and in list order, are its own. Its actions name clips of its model
/// ([`ClipRef::clip`]) and masks of its model's [`MixerDesc`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrowdCharacter {
    /// The character's model.
    pub model: ModelId,
    /// How many actions of the frame's list are the character's.
    pub actions: u32,
}

impl CrowdCharacter {
    /// A character of `model` with `actions` actions.
    #[must_use]
    pub fn new(model: ModelId, actions: u32) -> Self {
        CrowdCharacter { model, actions }
    }
}

/// What a model animates: a rig (posed, skinned) or, without one, the
/// sampled values alone.
#[derive(Debug, Clone)]
pub(crate) enum ModelSource {
    /// A library bound to the model's rig.
    Bound(BoundLibrary),
    /// A library sampled without a rig.
    Sampled(AnimationLibrary),
}

/// One model of a crowd: its name, what it animates, its mixer and its
/// capacity (instances, or with a mixer characters, per frame).
#[derive(Debug, Clone)]
pub(crate) struct CrowdModel {
    pub(crate) name: String,
    pub(crate) source: ModelSource,
    pub(crate) mixer: Option<MixerDesc>,
    pub(crate) capacity: u32,
}

impl CrowdModel {
    pub(crate) fn library(&self) -> &AnimationLibrary {
        match &self.source {
            ModelSource::Bound(b) => b.library(),
            ModelSource::Sampled(l) => l,
        }
    }
}

/// The models of a crowd, without a device: names, libraries (bound or
/// sampled alone), mixers and capacities. `Crowd::models`
/// gives a crowd's; the CPU twin takes it.
#[derive(Debug, Clone)]
pub struct CrowdModels {
    id: u64,
    pub(crate) models: Vec<CrowdModel>,
}

impl Default for CrowdModels {
    fn default() -> Self {
        Self::new()
    }
}

impl CrowdModels {
    /// No model yet, with an identity of its own (ids of other crowds are
    /// refused).
    #[must_use]
    pub(crate) fn new() -> Self {
        CrowdModels {
            id: NEXT_CROWD.fetch_add(1, Ordering::Relaxed),
            models: Vec::new(),
        }
    }

    /// [`Error::DuplicateModel`] when a model is named `name` already.
    pub(crate) fn check_name(&self, name: &str) -> Result<()> {
        if self.models.iter().any(|m| m.name == name) {
            return Err(Error::DuplicateModel {
                name: name.to_owned(),
            });
        }
        Ok(())
    }

    /// The id the next model added gets.
    pub(crate) fn next_id(&self) -> Result<ModelId> {
        let index = u32::try_from(self.models.len()).map_err(|_| Error::LimitExceeded {
            what: "models in a crowd",
            needed: self.models.len() as u64 + 1,
            limit_name: "u32::MAX",
            limit: u64::from(u32::MAX),
        })?;
        Ok(ModelId {
            crowd: self.id,
            index,
        })
    }

    /// Adds `model` (checked by the caller: its name is new).
    pub(crate) fn push(&mut self, model: CrowdModel) -> Result<ModelId> {
        let id = self.next_id()?;
        self.models.push(model);
        Ok(id)
    }

    /// Models in the crowd.
    #[must_use]
    pub fn len(&self) -> usize {
        self.models.len()
    }

    /// Whether the crowd has no model.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.models.is_empty()
    }

    /// The model's index, when `id` is a model of this crowd.
    pub(crate) fn index(&self, id: ModelId) -> Option<usize> {
        (id.crowd == self.id && (id.index as usize) < self.models.len())
            .then_some(id.index as usize)
    }

    /// The id of the model at `index`.
    pub(crate) fn id_at(&self, index: usize) -> ModelId {
        ModelId {
            crowd: self.id,
            index: index as u32,
        }
    }

    /// The models' ids, in the order they were added.
    pub fn model_ids(&self) -> impl Iterator<Item = ModelId> + '_ {
        (0..self.models.len()).map(|i| self.id_at(i))
    }

    /// The model named `name`.
    #[must_use]
    pub fn model_by_name(&self, name: &str) -> Option<ModelId> {
        let index = self.models.iter().position(|m| m.name == name)?;
        Some(self.id_at(index))
    }

    /// The model's name; `None` when `id` is not a model of this crowd.
    #[must_use]
    pub fn name(&self, id: ModelId) -> Option<&str> {
        Some(self.models[self.index(id)?].name.as_str())
    }

    /// The model's library (bound or sampled alone).
    #[must_use]
    pub fn library(&self, id: ModelId) -> Option<&AnimationLibrary> {
        Some(self.models[self.index(id)?].library())
    }

    /// The model's bound library; `None` for a model sampled without a
    /// rig, or an id of another crowd.
    #[must_use]
    pub fn bound(&self, id: ModelId) -> Option<&BoundLibrary> {
        match &self.models[self.index(id)?].source {
            ModelSource::Bound(b) => Some(b),
            ModelSource::Sampled(_) => None,
        }
    }

    /// The model's mixer; `None` for a model added without one.
    #[must_use]
    pub fn mixer(&self, id: ModelId) -> Option<&MixerDesc> {
        self.models[self.index(id)?].mixer.as_ref()
    }

    /// The clip named `name` of model `model`; `None` when the model has no
    /// such clip (or is not a model of this crowd).
    #[must_use]
    pub fn clip(&self, model: ModelId, name: &str) -> Option<ClipRef> {
        let m = &self.models[self.index(model)?];
        let clip = m.library().clip_by_name(name)?;
        Some(ClipRef { model, clip })
    }

    /// Clip `index` of model `model`'s library; `None` out of range.
    #[must_use]
    pub fn clip_at(&self, model: ModelId, index: u32) -> Option<ClipRef> {
        let m = &self.models[self.index(model)?];
        ((index as usize) < m.library().clips().len()).then_some(ClipRef { model, clip: index })
    }

    /// Checks a frame of instances and counts them per model into
    /// `counts` (one per model): every error names the instance's index in
    /// `instances`.
    pub(crate) fn check_instances(
        &self,
        instances: &[CrowdInstance],
        counts: &mut [usize],
    ) -> Result<()> {
        counts.iter_mut().for_each(|c| *c = 0);
        for (i, inst) in instances.iter().enumerate() {
            let model = self.index(inst.model).ok_or(Error::UnknownModel {
                instance: i,
                model: inst.model.index(),
            })?;
            if inst.clip.model != inst.model {
                let name = |id: ModelId| {
                    self.index(id).map_or_else(
                        || "a model of another crowd".to_owned(),
                        |k| self.models[k].name.clone(),
                    )
                };
                return Err(Error::ClipOfOtherModel {
                    instance: i,
                    instance_model: model,
                    instance_model_name: self.models[model].name.clone(),
                    clip_model: inst.clip.model.index(),
                    clip_model_name: name(inst.clip.model),
                });
            }
            let clip_count = self.models[model].library().clips().len();
            if inst.clip.clip as usize >= clip_count {
                return Err(Error::ClipOutOfRange {
                    instance: i,
                    clip: inst.clip.clip,
                    clip_count,
                });
            }
            if !inst.time.is_finite() {
                return Err(Error::InstanceTimeNotFinite {
                    instance: i,
                    time: inst.time,
                });
            }
            counts[model] += 1;
        }
        self.check_counts(counts)
    }

    /// Checks a mixed frame's characters (the actions themselves are each
    /// model's mixer's to check) and counts them per model into `counts`:
    /// every error names the character's index in `characters`.
    pub(crate) fn check_characters(
        &self,
        characters: &[CrowdCharacter],
        actions: usize,
        counts: &mut [usize],
    ) -> Result<()> {
        counts.iter_mut().for_each(|c| *c = 0);
        let mut counted = 0u64;
        for (c, ch) in characters.iter().enumerate() {
            let model = self.index(ch.model).ok_or(Error::UnknownModel {
                instance: c,
                model: ch.model.index(),
            })?;
            let m = &self.models[model];
            let Some(desc) = &m.mixer else {
                return Err(Error::ModelWithoutMixer {
                    character: c,
                    model: m.name.clone(),
                });
            };
            if ch.actions > desc.actions_per_character {
                return Err(MixError::TooManyActions {
                    character: c,
                    count: ch.actions,
                    capacity: desc.actions_per_character,
                }
                .into());
            }
            counted += u64::from(ch.actions);
            counts[model] += 1;
        }
        if counted != actions as u64 {
            return Err(MixError::CountMismatch { counted, actions }.into());
        }
        self.check_counts(counts)
    }

    /// [`Error::ModelFull`] for the first model given more than its
    /// capacity.
    fn check_counts(&self, counts: &[usize]) -> Result<()> {
        for (model, (m, &requested)) in self.models.iter().zip(counts).enumerate() {
            if requested > m.capacity as usize {
                return Err(Error::ModelFull {
                    model,
                    name: m.name.clone(),
                    requested,
                    capacity: m.capacity,
                });
            }
        }
        Ok(())
    }

    /// Splits a checked frame of instances per model, in crowd order:
    /// `tables[m]` gets model `m`'s instances, `slots` each crowd
    /// instance's (model, slot).
    pub(crate) fn split_instances(
        instances: &[CrowdInstance],
        tables: &mut [&mut Vec<Instance>],
        slots: &mut Vec<(u32, u32)>,
    ) {
        tables.iter_mut().for_each(|t| t.clear());
        slots.clear();
        for inst in instances {
            if let Some(t) = tables.get_mut(inst.model.index()) {
                slots.push((inst.model.index, t.len() as u32));
                t.push(Instance {
                    clip: inst.clip.clip,
                    time: inst.time,
                    wrap: inst.wrap,
                });
            }
        }
    }

    /// Splits a checked mixed frame per model, in crowd order:
    /// `tables[m]` gets model `m`'s actions and per-character counts,
    /// `characters[m]` the crowd index of each of its characters, `slots`
    /// each crowd character's (model, slot).
    pub(crate) fn split_actions(
        characters: &[CrowdCharacter],
        actions: &[Action],
        tables: &mut [(&mut Vec<Action>, &mut Vec<u32>, &mut Vec<usize>)],
        slots: &mut Vec<(u32, u32)>,
    ) {
        for (a, n, c) in tables.iter_mut() {
            a.clear();
            n.clear();
            c.clear();
        }
        slots.clear();
        let mut first = 0usize;
        for (c, ch) in characters.iter().enumerate() {
            let end = first + ch.actions as usize;
            if let (Some((a, n, crowd)), Some(own)) =
                (tables.get_mut(ch.model.index()), actions.get(first..end))
            {
                slots.push((ch.model.index, n.len() as u32));
                a.extend_from_slice(own);
                n.push(ch.actions);
                crowd.push(c);
            }
            first = end;
        }
    }
}

/// `e` with its character renamed from the model's index to the crowd's
/// (`crowd[k]` is the crowd index of the model's character `k`).
pub(crate) fn renumber(e: Error, crowd: &[usize]) -> Error {
    let at = |k: usize| crowd.get(k).copied().unwrap_or(k);
    match e {
        Error::Mix(m) => Error::Mix(match m {
            MixError::UnknownClip {
                character,
                action,
                clip,
                clip_count,
            } => MixError::UnknownClip {
                character: at(character),
                action,
                clip,
                clip_count,
            },
            MixError::UnknownMask {
                character,
                action,
                mask,
                mask_count,
            } => MixError::UnknownMask {
                character: at(character),
                action,
                mask,
                mask_count,
            },
            MixError::BadWeight {
                character,
                action,
                weight,
            } => MixError::BadWeight {
                character: at(character),
                action,
                weight,
            },
            MixError::TimeNotFinite {
                character,
                action,
                field,
                time,
            } => MixError::TimeNotFinite {
                character: at(character),
                action,
                field,
                time,
            },
            MixError::TooManyActions {
                character,
                count,
                capacity,
            } => MixError::TooManyActions {
                character: at(character),
                count,
                capacity,
            },
            other => other,
        }),
        other => other,
    }
}

/// One frame of a crowd, read back by `Crowd::read_back`
/// or computed by the twin: each model's [`Poses`], and accessors by crowd
/// instance (or character).
#[derive(Debug, Clone)]
pub struct CrowdPoses {
    pub(crate) models: Vec<Poses>,
    pub(crate) slots: Vec<(u32, u32)>,
}

impl CrowdPoses {
    /// Crowd instances (or characters) in the frame.
    #[must_use]
    pub fn instance_count(&self) -> usize {
        self.slots.len()
    }

    /// Model `index`'s poses ([`ModelId::index`]), indexed by slot.
    #[must_use]
    pub fn model(&self, index: usize) -> Option<&Poses> {
        self.models.get(index)
    }

    /// Crowd instance `instance`'s model's poses and its slot in them:
    /// `poses.world(slot, node)`, `poses.joints(slot, skin)` and the rest
    /// of [`Poses`] give that instance's results. `None` past the last
    /// instance.
    #[must_use]
    pub fn instance(&self, instance: usize) -> Option<(&Poses, u32)> {
        let &(model, slot) = self.slots.get(instance)?;
        Some((self.models.get(model as usize)?, slot))
    }
}
