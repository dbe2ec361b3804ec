//! [`Crowd`]: several models (rigs, each with the library of clips made
//! for it) in one object. A clip is named through its model ([`ClipRef`]),
//! an instance names its model ([`CrowdInstance`]), and a clip of one model
//! given to an instance of another is refused. Each model keeps its own
//! [`Animator`]; per frame the crowd's instance table is split per model on
//! the host (no allocation in steady state) and every model's passes are
//! recorded into one compute pass.

use std::sync::atomic::{AtomicU64, Ordering};

use super::animator::Animator;
use crate::error::{Error, Result};
use crate::instance::Instance;
use crate::library::AnimationLibrary;
use crate::model::{BoundLibrary, Poses};
use crate::track::WrapMode;

/// Tells crowds apart, so that an id of one crowd is never taken for a
/// model of another.
static NEXT_CROWD: AtomicU64 = AtomicU64::new(0);

/// A model of a [`Crowd`], as returned by [`Crowd::add_model`]. Only valid
/// in the crowd that made it: another crowd refuses it as unknown.
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

/// A clip of one model of a [`Crowd`]: made by [`Crowd::clip`] or
/// [`Crowd::clip_at`], so it always says which model it belongs to.
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

    /// The clip's index in its model's [`AnimationLibrary`].
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

/// One model of the crowd and its per-frame scratch.
#[derive(Debug)]
struct Model {
    name: String,
    animator: Animator,
    /// This frame's instances of the model, in crowd order; capacity
    /// reserved up front (the animator's), so never grown.
    scratch: Vec<Instance>,
}

/// Several models animated together: each model is a library bound to a
/// rig ([`BoundLibrary`]; or a library alone, to sample only), with its
/// own [`Animator`] inside. Models whose libraries are the same library
/// (two characters from different files with the same skeleton names,
/// bound to one library of clips) share one upload of it. The one object a renderer of a crowd with
/// more than one kind of character holds.
///
/// Once: [`Crowd::new`], then [`add_model`](Self::add_model) per model.
/// Per frame: [`set_instances`](Self::set_instances) with every character
/// of every model in one slice (split per model on the host, no allocation
/// in steady state), [`record`](Self::record) into your encoder, then draw
/// each model with its own mesh, binding that model's buffers
/// ([`model`](Self::model)`(id)?.joint_matrix_buffer()`); crowd instance
/// `i` is at [`slot`](Self::slot)`(i)` of its model's buffers.
///
/// ```no_run
/// # fn f(device: &wgpu::Device, queue: &wgpu::Queue,
/// #      knight_clips: &keyframe_gpu::AnimationLibrary, knight: &keyframe_gpu::Rig,
/// #      horse_clips: &keyframe_gpu::AnimationLibrary, horse: &keyframe_gpu::Rig)
/// #      -> Result<(), keyframe_gpu::Error> {
/// use keyframe_gpu::{Crowd, CrowdInstance};
/// let mut crowd = Crowd::new();
/// let k = crowd.add_model(device, queue, "knight", &knight_clips.bind(knight)?, 500)?;
/// let h = crowd.add_model(device, queue, "horse", &horse_clips.bind(horse)?, 100)?;
/// let walk = crowd.clip(k, "walk").expect("the knight walks");
/// let gallop = crowd.clip(h, "gallop").expect("the horse gallops");
/// let frame = [CrowdInstance::new(k, walk, 0.5), CrowdInstance::new(h, gallop, 0.25)];
/// crowd.set_instances(queue, &frame)?;
/// let mut encoder = device.create_command_encoder(&Default::default());
/// crowd.record(&mut encoder);
/// queue.submit([encoder.finish()]);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Crowd {
    id: u64,
    models: Vec<Model>,
    /// Per model: instances counted in the validation pass.
    counts: Vec<usize>,
    /// Per crowd instance of the last frame set: (model index, slot).
    slots: Vec<(u32, u32)>,
}

impl Default for Crowd {
    fn default() -> Self {
        Self::new()
    }
}

impl Crowd {
    /// A crowd with no model yet. It holds no GPU object of its own (each
    /// model's [`Animator`] holds its buffers), so it needs no device.
    #[must_use]
    pub fn new() -> Self {
        Crowd {
            id: NEXT_CROWD.fetch_add(1, Ordering::Relaxed),
            models: Vec::new(),
            counts: Vec::new(),
            slots: Vec::new(),
        }
    }

    /// Adds a model named `name`: `bound` is the library of its clips bound
    /// to its rig, for up to `max_instances` instances of this model per
    /// frame. A model whose library is an earlier model's shares that
    /// model's upload of it ([`Animator::sharing`]).
    ///
    /// # Errors
    /// [`Error::DuplicateModel`] when the crowd already has a model of that
    /// name; those of [`Animator::new`] (device limits, a lost device). On
    /// error the crowd is unchanged.
    pub fn add_model(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        name: &str,
        bound: &BoundLibrary,
        max_instances: u32,
    ) -> Result<ModelId> {
        self.check_name(name)?;
        let mut shared = None;
        for m in &self.models {
            if let Some(a) = Animator::sharing(device, &m.animator, bound, max_instances)? {
                shared = Some(a);
                break;
            }
        }
        let animator = match shared {
            Some(a) => a,
            None => Animator::new(device, queue, bound, max_instances)?,
        };
        self.push(name, animator)
    }

    /// Adds a model that only samples `library` (no rig), for up to
    /// `max_instances` instances per frame.
    ///
    /// # Errors
    /// As [`add_model`](Self::add_model).
    pub fn add_sampled_model(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        name: &str,
        library: &AnimationLibrary,
        max_instances: u32,
    ) -> Result<ModelId> {
        self.check_name(name)?;
        let animator = Animator::sampler_only(device, queue, library, max_instances)?;
        self.push(name, animator)
    }

    /// How many uploads of clip libraries the crowd's models hold: models
    /// whose bound libraries are the same library share one.
    #[must_use]
    pub fn uploads(&self) -> usize {
        let mut ids: Vec<usize> = self
            .models
            .iter()
            .map(|m| m.animator.sampler.upload_id())
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids.len()
    }

    fn check_name(&self, name: &str) -> Result<()> {
        if self.models.iter().any(|m| m.name == name) {
            return Err(Error::DuplicateModel {
                name: name.to_owned(),
            });
        }
        Ok(())
    }

    fn push(&mut self, name: &str, animator: Animator) -> Result<ModelId> {
        let index = u32::try_from(self.models.len()).map_err(|_| Error::LimitExceeded {
            what: "models in a crowd",
            needed: self.models.len() as u64 + 1,
            limit_name: "u32::MAX",
            limit: u64::from(u32::MAX),
        })?;
        // Every per-frame vector gets its largest size now: a model never
        // holds more than its capacity, the crowd never more than the sum.
        let capacity = animator.sampler.capacity() as usize;
        let total = capacity
            + self
                .models
                .iter()
                .map(|m| m.scratch.capacity())
                .sum::<usize>();
        self.slots.reserve(total.saturating_sub(self.slots.len()));
        self.counts.push(0);
        self.models.push(Model {
            name: name.to_owned(),
            animator,
            scratch: Vec::with_capacity(capacity),
        });
        Ok(ModelId {
            crowd: self.id,
            index,
        })
    }

    /// The model's index, when `id` is a model of this crowd.
    fn index(&self, id: ModelId) -> Option<usize> {
        (id.crowd == self.id && (id.index as usize) < self.models.len())
            .then_some(id.index as usize)
    }

    /// The models' ids, in the order they were added.
    pub fn model_ids(&self) -> impl Iterator<Item = ModelId> + '_ {
        (0..self.models.len() as u32).map(|index| ModelId {
            crowd: self.id,
            index,
        })
    }

    /// The model named `name`.
    #[must_use]
    pub fn model_by_name(&self, name: &str) -> Option<ModelId> {
        self.models
            .iter()
            .position(|m| m.name == name)
            .map(|index| ModelId {
                crowd: self.id,
                index: index as u32,
            })
    }

    /// The model's name; `None` when `id` is not a model of this crowd.
    #[must_use]
    pub fn model_name(&self, id: ModelId) -> Option<&str> {
        Some(self.models[self.index(id)?].name.as_str())
    }

    /// The model's [`Animator`]: its buffers (joint matrices, globals,
    /// morph weights, sampled values) hold this model's instances of the
    /// last frame set, at the slots [`slot`](Self::slot) gives. `None` when
    /// `id` is not a model of this crowd.
    #[must_use]
    pub fn model(&self, id: ModelId) -> Option<&Animator> {
        Some(&self.models[self.index(id)?].animator)
    }

    /// The clip named `name` of model `model`; `None` when the model has no
    /// such clip (or is not a model of this crowd).
    #[must_use]
    pub fn clip(&self, model: ModelId, name: &str) -> Option<ClipRef> {
        let m = &self.models[self.index(model)?];
        let clip = m.animator.library().clip_by_name(name)?;
        Some(ClipRef { model, clip })
    }

    /// Clip `index` of model `model`'s library; `None` out of range.
    #[must_use]
    pub fn clip_at(&self, model: ModelId, index: u32) -> Option<ClipRef> {
        let m = &self.models[self.index(model)?];
        ((index as usize) < m.animator.library().clip_table().len())
            .then_some(ClipRef { model, clip: index })
    }

    /// Crowd instances in the last frame set.
    #[must_use]
    pub fn instance_count(&self) -> usize {
        self.slots.len()
    }

    /// Where crowd instance `instance` of the last frame set landed: its
    /// model and its index in that model's buffers (the instance index of
    /// the model's [`Animator`] and [`Poses`]). Instances of a model keep
    /// their crowd order. `None` past the last instance.
    #[must_use]
    pub fn slot(&self, instance: usize) -> Option<(ModelId, u32)> {
        let &(index, slot) = self.slots.get(instance)?;
        Some((
            ModelId {
                crowd: self.id,
                index,
            },
            slot,
        ))
    }

    /// Writes this frame's instances of every model: each model's
    /// [`Animator`] gets the table of its own instances, in crowd order.
    /// Every instance is checked before anything is written, so errors
    /// name the index in `instances`.
    ///
    /// Allocates nothing in steady state: the split goes through vectors
    /// sized when the models were added.
    ///
    /// # Errors
    /// Naming the first bad instance: [`Error::UnknownModel`] (an id of
    /// another crowd), [`Error::ClipOfOtherModel`] (a clip of another model
    /// than the instance's), [`Error::ClipOutOfRange`],
    /// [`Error::InstanceTimeNotFinite`]; and [`Error::ModelFull`] when a
    /// model gets more instances than it was added for. On error nothing
    /// is written: every model keeps its previous table, and
    /// [`slot`](Self::slot) the previous frame's mapping.
    /// [`Error::DeviceLost`] once a model's device is lost (checked first).
    pub fn set_instances(
        &mut self,
        queue: &wgpu::Queue,
        instances: &[CrowdInstance],
    ) -> Result<()> {
        self.check_devices("Crowd::set_instances")?;
        self.validate(instances)?;
        for m in &mut self.models {
            m.scratch.clear();
        }
        self.slots.clear();
        for inst in instances {
            // Checked by validate(): the model is this crowd's.
            let index = inst.model.index as usize;
            if let Some(m) = self.models.get_mut(index) {
                self.slots.push((inst.model.index, m.scratch.len() as u32));
                m.scratch.push(Instance {
                    clip: inst.clip.clip,
                    time: inst.time,
                    wrap: inst.wrap,
                });
            }
        }
        for m in &mut self.models {
            // Cannot fail: validate() checked what the animator checks,
            // check_devices() the devices.
            m.animator.write_instances(queue, &m.scratch)?;
        }
        Ok(())
    }

    /// [`Error::DeviceLost`] when a model's device is lost: one poll (a
    /// crowd's models are on one device), then each model's probe.
    fn check_devices(&self, during: &'static str) -> Result<()> {
        for (i, m) in self.models.iter().enumerate() {
            let health = m.animator.sampler.health();
            if i == 0 {
                health.check(during)?;
            } else {
                health.probe(during)?;
            }
        }
        Ok(())
    }

    /// Everything [`set_instances`](Self::set_instances) and the models'
    /// animators refuse, with the crowd's instance index; writes only the
    /// per-model counts.
    fn validate(&mut self, instances: &[CrowdInstance]) -> Result<()> {
        self.counts.iter_mut().for_each(|c| *c = 0);
        for (i, inst) in instances.iter().enumerate() {
            let model = self.index(inst.model).ok_or(Error::UnknownModel {
                instance: i,
                model: inst.model.index(),
            })?;
            if inst.clip.model != inst.model {
                return Err(Error::ClipOfOtherModel {
                    instance: i,
                    instance_model: model,
                    clip_model: inst.clip.model.index(),
                });
            }
            let m = &self.models[model];
            let clip_count = m.animator.library().clip_table().len();
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
            self.counts[model] += 1;
        }
        for (model, (m, &requested)) in self.models.iter().zip(&self.counts).enumerate() {
            let capacity = m.animator.sampler.capacity();
            if requested > capacity as usize {
                return Err(Error::ModelFull {
                    model,
                    name: m.name.clone(),
                    requested,
                    capacity,
                });
            }
        }
        Ok(())
    }

    /// Records every model's passes into `encoder`, in one compute pass
    /// labelled `keyframe-gpu.crowd`. Records nothing once the device is
    /// known lost (see [`Animator::record`]).
    pub fn record(&self, encoder: &mut wgpu::CommandEncoder) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("keyframe-gpu.crowd"),
            timestamp_writes: None,
        });
        self.record_pass(&mut pass);
    }

    /// Records every model's passes into a compute pass the caller owns
    /// (a model without instances this frame records nothing).
    pub fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        for m in &self.models {
            m.animator.record_pass(pass);
        }
    }

    /// Reads the current frame's results of every model back (blocking;
    /// see [`Animator::read_back`]), indexed by crowd instance.
    ///
    /// # Errors
    /// Those of [`Animator::read_back`]: [`Error::DeviceLost`] once the
    /// device is lost.
    pub fn read_back(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<CrowdPoses> {
        self.check_devices("Crowd::read_back")?;
        let models = self
            .models
            .iter()
            .map(|m| m.animator.read_back(device, queue))
            .collect::<Result<Vec<_>>>()?;
        Ok(CrowdPoses {
            models,
            slots: self.slots.clone(),
        })
    }
}

/// One frame of a [`Crowd`] read back by [`Crowd::read_back`]: each
/// model's [`Poses`], and accessors by crowd instance.
#[derive(Debug, Clone)]
pub struct CrowdPoses {
    models: Vec<Poses>,
    slots: Vec<(u32, u32)>,
}

impl CrowdPoses {
    /// Crowd instances in the frame.
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
