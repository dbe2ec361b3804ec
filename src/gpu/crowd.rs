//! [`Crowd`]: several models (rigs, each with the library of clips made
//! for it) in one object. A clip is named through its model ([`ClipRef`]),
//! an instance names its model ([`CrowdInstance`]), and a clip of one model
//! given to an instance of another is refused. Each model keeps its own
//! [`Animator`]; per frame the crowd's instance table is split per model on
//! the host (no allocation in steady state) and every model's passes are
//! recorded into one compute pass.

use super::animator::Animator;
use super::timer::PassTimer;
use crate::error::Result;
use crate::model::crowd::{renumber, CrowdModel, ModelSource};
pub use crate::model::crowd::{
    ClipRef, CrowdCharacter, CrowdInstance, CrowdModels, CrowdPoses, ModelId,
};
use crate::model::instance::Instance;
use crate::model::library::AnimationLibrary;
use crate::model::mix::{Action, MixerDesc};
use crate::model::BoundLibrary;

/// One model's GPU side and its per-frame scratch.
#[derive(Debug)]
struct Model {
    animator: Animator,
    /// This frame's instances of the model, in crowd order; capacity
    /// reserved up front (the animator's), so never grown.
    scratch: Vec<Instance>,
    /// With a mixer: this frame's actions of the model's characters, their
    /// counts, and each character's index in the crowd's frame; capacities
    /// reserved up front.
    actions: Vec<Action>,
    counts: Vec<u32>,
    crowd_index: Vec<usize>,
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
    /// The device-free description: names, libraries, mixers, capacities.
    desc: CrowdModels,
    models: Vec<Model>,
    /// Per model: instances counted in the validation pass.
    counts: Vec<usize>,
    /// Per crowd instance of the last frame set: (model index, slot).
    slots: Vec<(u32, u32)>,
    /// The next mixed frame's slots, swapped in once it is accepted.
    next_slots: Vec<(u32, u32)>,
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
            desc: CrowdModels::new(),
            models: Vec::new(),
            counts: Vec::new(),
            slots: Vec::new(),
            next_slots: Vec::new(),
        }
    }

    /// The crowd's models without their GPU objects: what the CPU twin
    /// ([`cpu::crowd_poses`](crate::cpu::crowd_poses),
    /// [`cpu::crowd_mixed_poses`](crate::cpu::crowd_mixed_poses)) takes.
    #[must_use]
    pub fn models(&self) -> &CrowdModels {
        &self.desc
    }

    /// Adds a model named `name`: `bound` is the library of its clips bound
    /// to its rig, for up to `max_instances` instances of this model per
    /// frame. A model whose library is an earlier model's shares that
    /// model's upload of it ([`Animator::sharing`]).
    ///
    /// # Errors
    /// [`Error::DuplicateModel`](crate::Error::DuplicateModel) when the crowd already has a model of that
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
        self.desc.check_name(name)?;
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
        let model = CrowdModel {
            name: name.to_owned(),
            source: ModelSource::Bound(bound.clone()),
            mixer: None,
            capacity: max_instances,
        };
        self.push(model, animator)
    }

    /// Adds a model named `name` whose characters each blend several
    /// actions ([`Animator::with_mixer`]): `bound` is the library of its
    /// clips bound to its rig, `mixer` its capacity (characters, actions
    /// per character) and masks. Its characters take actions through
    /// [`set_actions`](Self::set_actions), or one clip each through
    /// [`set_instances`](Self::set_instances). A mixer's model uploads
    /// its library on its own (no sharing).
    ///
    /// # Errors
    /// [`Error::DuplicateModel`](crate::Error::DuplicateModel); those of [`Animator::with_mixer`] (masks
    /// of another rig, capacities, device limits, a lost device). On error
    /// the crowd is unchanged.
    pub fn add_mixed_model(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        name: &str,
        bound: &BoundLibrary,
        mixer: &MixerDesc,
    ) -> Result<ModelId> {
        self.desc.check_name(name)?;
        let animator = Animator::with_mixer(device, queue, bound, mixer)?;
        let model = CrowdModel {
            name: name.to_owned(),
            source: ModelSource::Bound(bound.clone()),
            mixer: Some(mixer.clone()),
            capacity: mixer.characters,
        };
        self.push(model, animator)
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
        self.desc.check_name(name)?;
        let animator = Animator::sampler_only(device, queue, library, max_instances)?;
        let model = CrowdModel {
            name: name.to_owned(),
            source: ModelSource::Sampled(library.clone()),
            mixer: None,
            capacity: max_instances,
        };
        self.push(model, animator)
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

    fn push(&mut self, model: CrowdModel, animator: Animator) -> Result<ModelId> {
        let id = self.desc.next_id()?;
        // Every per-frame vector gets its largest size now: a model never
        // holds more than its capacity, the crowd never more than the sum.
        let capacity = model.capacity as usize;
        let actions = model.mixer.as_ref().map_or(0, |m| {
            m.characters as usize * m.actions_per_character as usize
        });
        let characters = if model.mixer.is_some() { capacity } else { 0 };
        let total = capacity
            + self
                .models
                .iter()
                .map(|m| m.scratch.capacity())
                .sum::<usize>();
        self.slots.reserve(total.saturating_sub(self.slots.len()));
        self.next_slots
            .reserve(total.saturating_sub(self.next_slots.len()));
        self.desc.push(model)?;
        self.counts.push(0);
        self.models.push(Model {
            animator,
            scratch: Vec::with_capacity(capacity),
            actions: Vec::with_capacity(actions),
            counts: Vec::with_capacity(characters),
            crowd_index: Vec::with_capacity(characters),
        });
        Ok(id)
    }

    /// The models' ids, in the order they were added.
    pub fn model_ids(&self) -> impl Iterator<Item = ModelId> + '_ {
        self.desc.model_ids()
    }

    /// The model named `name`.
    #[must_use]
    pub fn model_by_name(&self, name: &str) -> Option<ModelId> {
        self.desc.model_by_name(name)
    }

    /// The model's name; `None` when `id` is not a model of this crowd.
    #[must_use]
    pub fn model_name(&self, id: ModelId) -> Option<&str> {
        self.desc.name(id)
    }

    /// The model's [`Animator`]: its buffers (joint matrices, globals,
    /// morph weights, sampled values) hold this model's instances of the
    /// last frame set, at the slots [`slot`](Self::slot) gives. `None` when
    /// `id` is not a model of this crowd.
    #[must_use]
    pub fn model(&self, id: ModelId) -> Option<&Animator> {
        Some(&self.models[self.desc.index(id)?].animator)
    }

    /// The clip named `name` of model `model`; `None` when the model has no
    /// such clip (or is not a model of this crowd).
    #[must_use]
    pub fn clip(&self, model: ModelId, name: &str) -> Option<ClipRef> {
        self.desc.clip(model, name)
    }

    /// Clip `index` of model `model`'s library; `None` out of range.
    #[must_use]
    pub fn clip_at(&self, model: ModelId, index: u32) -> Option<ClipRef> {
        self.desc.clip_at(model, index)
    }

    /// Crowd instances in the last frame set.
    #[must_use]
    pub fn instance_count(&self) -> usize {
        self.slots.len()
    }

    /// Where crowd instance `instance` of the last frame set landed: its
    /// model and its index in that model's buffers (the instance index of
    /// the model's [`Animator`] and [`Poses`](crate::Poses)). Instances of a model keep
    /// their crowd order. `None` past the last instance.
    #[must_use]
    pub fn slot(&self, instance: usize) -> Option<(ModelId, u32)> {
        let &(index, slot) = self.slots.get(instance)?;
        Some((self.desc.id_at(index as usize), slot))
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
    /// Naming the first bad instance: [`Error::UnknownModel`](crate::Error::UnknownModel) (an id of
    /// another crowd), [`Error::ClipOfOtherModel`](crate::Error::ClipOfOtherModel) (a clip of another model
    /// than the instance's), [`Error::ClipOutOfRange`](crate::Error::ClipOutOfRange),
    /// [`Error::InstanceTimeNotFinite`](crate::Error::InstanceTimeNotFinite); and [`Error::ModelFull`](crate::Error::ModelFull) when a
    /// model gets more instances than it was added for. On error nothing
    /// is written: every model keeps its previous table, and
    /// [`slot`](Self::slot) the previous frame's mapping.
    /// [`Error::DeviceLost`](crate::Error::DeviceLost) once a model's device is lost (checked first).
    pub fn set_instances(
        &mut self,
        queue: &wgpu::Queue,
        instances: &[CrowdInstance],
    ) -> Result<()> {
        self.check_devices("Crowd::set_instances")?;
        self.desc.check_instances(instances, &mut self.counts)?;
        for m in &mut self.models {
            m.scratch.clear();
        }
        self.slots.clear();
        for inst in instances {
            // Checked: the model is this crowd's.
            if let Some(m) = self.models.get_mut(inst.model.index()) {
                self.slots
                    .push((inst.model.index() as u32, m.scratch.len() as u32));
                m.scratch.push(Instance {
                    clip: inst.clip.clip(),
                    time: inst.time,
                    wrap: inst.wrap,
                });
            }
        }
        for m in &mut self.models {
            // Cannot fail: the check covered what the animator checks,
            // check_devices() the devices.
            m.animator.write_instances(queue, &m.scratch)?;
        }
        Ok(())
    }

    /// Writes this frame's actions of every model with a mixer
    /// ([`add_mixed_model`](Self::add_mixed_model)): `characters[c]` is
    /// crowd character `c`, its model and how many of `actions`
    /// (consecutive, in list order) are its own; each model's animator
    /// gets its characters in crowd order and blends them by the mixer's
    /// rules ([`Animator::set_actions`]). Models not named this frame, and
    /// models without a mixer, get no character. Crowd character `c` is at
    /// [`slot`](Self::slot)`(c)` of its model's buffers. Every character
    /// and action is checked before anything is written.
    ///
    /// ```no_run
    /// # fn f(device: &wgpu::Device, queue: &wgpu::Queue,
    /// #      xbot: &keyframe_gpu::BoundLibrary, robot: &keyframe_gpu::BoundLibrary)
    /// #      -> Result<(), keyframe_gpu::Error> {
    /// use keyframe_gpu::{Action, Crowd, CrowdCharacter, MixerDesc, WrapMode};
    /// let mut crowd = Crowd::new();
    /// let x = crowd.add_mixed_model(device, queue, "xbot", xbot, &MixerDesc::new(500, 2))?;
    /// let r = crowd.add_mixed_model(device, queue, "robot", robot, &MixerDesc::new(100, 2))?;
    /// let (idle, run) = (crowd.clip(x, "idle").expect("idle"), crowd.clip(x, "run").expect("run"));
    /// let dance = crowd.clip(r, "Dance").expect("dance");
    /// // An xbot halfway through a crossfade from idle to run, a robot dancing.
    /// let actions = [
    ///     Action::new(idle.clip(), 1.2).with_weight(0.5).with_wrap(WrapMode::Repeat),
    ///     Action::new(run.clip(), 1.2).with_weight(0.5).with_wrap(WrapMode::Repeat),
    ///     Action::new(dance.clip(), 0.4).with_wrap(WrapMode::Repeat),
    /// ];
    /// let characters = [CrowdCharacter::new(x, 2), CrowdCharacter::new(r, 1)];
    /// crowd.set_actions(queue, &characters, &actions)?;
    /// # Ok(()) }
    /// ```
    ///
    /// Allocates nothing in steady state.
    ///
    /// # Errors
    /// Naming the crowd's character: [`Error::UnknownModel`](crate::Error::UnknownModel) (its
    /// `instance` is the character), [`Error::ModelWithoutMixer`](crate::Error::ModelWithoutMixer), the
    /// action errors of [`MixError`](crate::MixError) (clip or mask out of
    /// range for the character's model, weights, times, too many actions),
    /// [`MixError::CountMismatch`](crate::MixError::CountMismatch);
    /// [`Error::ModelFull`](crate::Error::ModelFull) past a model's characters. On error nothing is
    /// written: every model keeps its previous frame.
    /// [`Error::DeviceLost`](crate::Error::DeviceLost) once a model's device is lost (checked first).
    pub fn set_actions(
        &mut self,
        queue: &wgpu::Queue,
        characters: &[CrowdCharacter],
        actions: &[Action],
    ) -> Result<()> {
        self.check_devices("Crowd::set_actions")?;
        self.desc
            .check_characters(characters, actions.len(), &mut self.counts)?;
        for m in &mut self.models {
            m.actions.clear();
            m.counts.clear();
            m.crowd_index.clear();
        }
        let mut slots = std::mem::take(&mut self.next_slots);
        slots.clear();
        let mut first = 0usize;
        for (c, ch) in characters.iter().enumerate() {
            let end = first + ch.actions as usize;
            // Checked: the model is this crowd's, the counts add up.
            if let (Some(m), Some(own)) = (
                self.models.get_mut(ch.model.index()),
                actions.get(first..end),
            ) {
                slots.push((ch.model.index() as u32, m.counts.len() as u32));
                m.actions.extend_from_slice(own);
                m.counts.push(ch.actions);
                m.crowd_index.push(c);
            }
            first = end;
        }
        // Every model's actions are packed (checked) before any is written.
        let packed = self
            .models
            .iter_mut()
            .filter(|m| m.animator.has_mixer())
            .try_for_each(|m| {
                m.animator
                    .pack_actions(&m.actions, &m.counts)
                    .map_err(|e| renumber(e, &m.crowd_index))
            });
        if let Err(e) = packed {
            // The frame in effect keeps its mapping.
            self.next_slots = slots;
            return Err(e);
        }
        self.next_slots = std::mem::replace(&mut self.slots, slots);
        for m in &mut self.models {
            if m.animator.has_mixer() {
                m.animator.write_packed(queue)?;
            } else {
                m.scratch.clear();
                m.animator.write_instances(queue, &m.scratch)?;
            }
        }
        Ok(())
    }

    /// [`Error::DeviceLost`](crate::Error::DeviceLost) when a model's device is lost: one poll (a
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

    /// [`record`](Self::record), with the compute pass's GPU time (every
    /// model's passes) measured by `timer` (when its previous measurement
    /// has been read). Records nothing once the device is known lost.
    pub fn record_timed(&self, encoder: &mut wgpu::CommandEncoder, timer: &mut PassTimer) {
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("keyframe-gpu.crowd"),
                timestamp_writes: timer.pass_writes(),
            });
            self.record_pass(&mut pass);
        }
        timer.resolve(encoder);
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
    /// Those of [`Animator::read_back`]: [`Error::DeviceLost`](crate::Error::DeviceLost) once the
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
