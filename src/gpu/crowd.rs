//! [`Crowd`]: several models (rigs, each with the library of clips made
//! for it) in one object. A clip is named through its model ([`ClipRef`]),
//! an instance names its model ([`CrowdInstance`]), and a clip of one model
//! given to an instance of another is refused. Each model keeps its own
//! [`Animator`] (several, in chunks, when its outputs would not fit one
//! storage binding); per frame the crowd's instance table is split per
//! model and chunk on the host (no allocation in steady state) and every
//! chunk's passes are recorded into one compute pass.

use super::animator::Animator;
use super::timer::PassTimer;
use crate::error::{Error, Result};
use crate::model::crowd::{renumber, CrowdModel, ModelSource};
use crate::model::crowd::{
    ClipRef, CrowdCharacter, CrowdInstance, CrowdModels, CrowdPoses, ModelId,
};
use crate::model::instance::Instance;
use crate::model::library::AnimationLibrary;
use crate::model::mix::{Action, MixerDesc};
use crate::model::BoundLibrary;

/// One model's GPU side: its chunks, each an [`Animator`] of
/// `chunk_capacity` instances; the model's instance `i` is instance
/// `i % chunk_capacity` of chunk `i / chunk_capacity`.
#[derive(Debug)]
struct Model {
    chunks: Vec<Chunk>,
    chunk_capacity: u32,
    /// Instances (or characters) of this frame so far, while a frame is
    /// split.
    filled: u32,
}

/// One chunk's animator and its per-frame scratch.
#[derive(Debug)]
struct Chunk {
    animator: Animator,
    /// This frame's instances of the chunk, in crowd order; capacity
    /// reserved up front (the animator's), so never grown.
    scratch: Vec<Instance>,
    /// With a mixer: this frame's actions of the chunk's characters, their
    /// counts, and each character's index in the crowd's frame; capacities
    /// reserved up front.
    actions: Vec<Action>,
    counts: Vec<u32>,
    crowd_index: Vec<usize>,
}

impl Model {
    /// The chunk that holds the model's next instance, and that
    /// instance's index in the model.
    fn next(&mut self) -> (u32, Option<&mut Chunk>) {
        let local = self.filled;
        self.filled += 1;
        let chunk = (local / self.chunk_capacity.max(1)) as usize;
        (local, self.chunks.get_mut(chunk))
    }
}

/// Limits whose need grows with a chunk's instances: a chunk of fewer
/// instances may fit under them.
fn grows_with_instances(limit_name: &str) -> bool {
    matches!(
        limit_name,
        "max_storage_buffer_binding_size"
            | "max_buffer_size"
            | "max_compute_workgroups_per_dimension"
    )
}

/// The animators of `max` instances in chunks of at most `limit`: the
/// first chunk built by `build` at the largest size that fits the device
/// (a size past a limit that grows with the instances is cut to what the
/// error says fits, or halved), the others by `more` at that size.
/// Returns them and the chunk size.
fn build_chunks(
    max: u32,
    limit: u32,
    build: impl Fn(u32) -> Result<Animator>,
    more: impl Fn(&Animator, u32) -> Result<Animator>,
) -> Result<(Vec<Animator>, u32)> {
    let mut size = max.min(limit).max(1);
    let first = loop {
        match build(size) {
            Ok(a) => break a,
            Err(Error::LimitExceeded {
                needed,
                limit_name,
                limit,
                ..
            }) if size > 1 && grows_with_instances(limit_name) => {
                let fits = if limit_name == "max_compute_workgroups_per_dimension" {
                    u64::from(size / 2)
                } else {
                    // Bytes grow in proportion to the instances.
                    limit.saturating_mul(u64::from(size)) / needed.max(1)
                };
                size = (fits.min(u64::from(size - 1)) as u32).max(1);
            }
            Err(e) => return Err(e),
        }
    };
    let count = max.max(1).div_ceil(size);
    let mut chunks = Vec::with_capacity(count as usize);
    chunks.push(first);
    for _ in 1..count {
        let next = more(&chunks[0], size)?;
        chunks.push(next);
    }
    Ok((chunks, size))
}

/// Several models animated together: each model is a library bound to a
/// rig ([`BoundLibrary`]; or a library alone, to sample only), with its
/// own [`Animator`] inside, or several: when a model's outputs for its
/// capacity would pass the device's `max_storage_buffer_binding_size` (or
/// the crowd's [`with_chunk_limit`](Self::with_chunk_limit)), its
/// instances are split into chunks of equal capacity, each an animator
/// with buffers of its own (sharing the model's upload of its library,
/// except with a mixer), so that a crowd is bounded by the device's
/// memory, not by one binding. Models whose libraries are the same library
/// (two characters from different files with the same skeleton names,
/// bound to one library of clips) share one upload of it. The one object a renderer of a crowd with
/// more than one kind of character holds.
///
/// Once: [`Crowd::new`], then [`add_model`](Self::add_model) per model.
/// Per frame: [`set_instances`](Self::set_instances) with every character
/// of every model in one slice (split per model on the host, no allocation
/// in steady state), [`record`](Self::record) into your encoder, then draw
/// each model with its own mesh, binding that model's buffers
/// ([`chunk`](Self::chunk)`(id, k)?.joint_matrix_buffer()`); crowd
/// instance `i` is at [`locate`](Self::locate)`(i)`: its model, chunk and
/// index in that chunk's buffers.
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
    /// The most instances a chunk of a model added from now on holds.
    chunk_limit: u32,
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
            chunk_limit: u32::MAX,
        }
    }

    /// The same crowd, the models added after it split into chunks of at
    /// most `instances` instances (characters with a mixer; at least 1)
    /// even where the device would take more in one: smaller buffers, for
    /// a renderer that wants them, or to test the chunked path on a small
    /// crowd. By default a chunk is as large as the device allows.
    #[must_use]
    pub fn with_chunk_limit(self, instances: u32) -> Crowd {
        Crowd {
            chunk_limit: instances.max(1),
            ..self
        }
    }

    /// The crowd's models without their GPU objects (their ids, names,
    /// libraries and clips): what the CPU twin
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
        self.desc.check_name(name)?;
        let others: Vec<&Animator> = self.models.iter().map(|m| &m.chunks[0].animator).collect();
        let build = |size: u32| {
            for other in &others {
                if let Some(a) = Animator::sharing(device, other, bound, size)? {
                    return Ok(a);
                }
            }
            Animator::new(device, queue, bound, size)
        };
        let more =
            |first: &Animator, size: u32| match Animator::sharing(device, first, bound, size)? {
                Some(a) => Ok(a),
                None => Animator::new(device, queue, bound, size),
            };
        let chunks = build_chunks(max_instances, self.chunk_limit, build, more)?;
        let model = CrowdModel {
            name: name.to_owned(),
            source: ModelSource::Bound(bound.clone()),
            mixer: None,
            capacity: max_instances,
        };
        self.push(model, chunks)
    }

    /// Adds a model named `name` whose characters each blend several
    /// actions ([`Animator::with_mixer`]): `bound` is the library of its
    /// clips bound to its rig, `mixer` its capacity (characters, actions
    /// per character) and masks. Its characters take actions through
    /// [`set_actions`](Self::set_actions), or one clip each through
    /// [`set_instances`](Self::set_instances). A mixer's model uploads
    /// its library on its own (no sharing), once per chunk.
    ///
    /// # Errors
    /// [`Error::DuplicateModel`]; those of [`Animator::with_mixer`] (masks
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
        let build = &|size: u32| {
            let desc = MixerDesc {
                characters: size,
                ..mixer.clone()
            };
            Animator::with_mixer(device, queue, bound, &desc)
        };
        let chunks = build_chunks(mixer.characters, self.chunk_limit, build, |_, size| {
            build(size)
        })?;
        let model = CrowdModel {
            name: name.to_owned(),
            source: ModelSource::Bound(bound.clone()),
            mixer: Some(mixer.clone()),
            capacity: mixer.characters,
        };
        self.push(model, chunks)
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
        let build = &|size: u32| Animator::sampler_only(device, queue, library, size);
        let chunks = build_chunks(max_instances, self.chunk_limit, build, |_, size| {
            build(size)
        })?;
        let model = CrowdModel {
            name: name.to_owned(),
            source: ModelSource::Sampled(library.clone()),
            mixer: None,
            capacity: max_instances,
        };
        self.push(model, chunks)
    }

    /// How many uploads of clip libraries the crowd's models hold: models
    /// whose bound libraries are the same library share one.
    #[must_use]
    pub fn uploads(&self) -> usize {
        let mut ids: Vec<usize> = self
            .models
            .iter()
            .flat_map(|m| &m.chunks)
            .map(|c| c.animator.sampler.upload_id())
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids.len()
    }

    fn push(&mut self, model: CrowdModel, chunks: (Vec<Animator>, u32)) -> Result<ModelId> {
        let id = self.desc.next_id()?;
        let (animators, chunk_capacity) = chunks;
        // Every per-frame vector gets its largest size now: a chunk never
        // holds more than its capacity, the crowd never more than the sum.
        let size = chunk_capacity as usize;
        let actions = model
            .mixer
            .as_ref()
            .map_or(0, |m| size * m.actions_per_character as usize);
        let characters = if model.mixer.is_some() { size } else { 0 };
        let total = model.capacity as usize
            + self
                .models
                .iter()
                .flat_map(|m| &m.chunks)
                .map(|c| c.scratch.capacity())
                .sum::<usize>();
        self.slots.reserve(total.saturating_sub(self.slots.len()));
        self.next_slots
            .reserve(total.saturating_sub(self.next_slots.len()));
        self.desc.push(model)?;
        self.counts.push(0);
        let chunks = animators
            .into_iter()
            .map(|animator| Chunk {
                animator,
                scratch: Vec::with_capacity(size),
                actions: Vec::with_capacity(actions),
                counts: Vec::with_capacity(characters),
                crowd_index: Vec::with_capacity(characters),
            })
            .collect();
        self.models.push(Model {
            chunks,
            chunk_capacity,
            filled: 0,
        });
        Ok(id)
    }

    /// The model's [`Animator`] (its first chunk's; the only one unless
    /// the model is split, see [`chunk_count`](Self::chunk_count)): its
    /// buffers (joint matrices, globals, morph weights, sampled values)
    /// hold this model's instances of the last frame set, at the slots
    /// [`slot`](Self::slot) gives. `None` when `id` is not a model of this
    /// crowd.
    #[must_use]
    pub fn model(&self, id: ModelId) -> Option<&Animator> {
        self.chunk(id, 0)
    }

    /// How many chunks the model's instances are split into (1 when its
    /// outputs fit one binding).
    #[must_use]
    pub fn chunk_count(&self, id: ModelId) -> Option<usize> {
        Some(self.models[self.desc.index(id)?].chunks.len())
    }

    /// The instances (characters with a mixer) each chunk of the model
    /// holds: the model's instance `i` is instance `i % capacity` of chunk
    /// `i / capacity`.
    #[must_use]
    pub fn chunk_capacity(&self, id: ModelId) -> Option<u32> {
        Some(self.models[self.desc.index(id)?].chunk_capacity)
    }

    /// Chunk `chunk` of the model: an [`Animator`] whose buffers hold the
    /// model's instances `chunk * capacity ..` of the last frame set (see
    /// [`locate`](Self::locate)); bind them to draw those instances.
    #[must_use]
    pub fn chunk(&self, id: ModelId, chunk: usize) -> Option<&Animator> {
        let model = &self.models[self.desc.index(id)?];
        Some(&model.chunks.get(chunk)?.animator)
    }

    /// Where crowd instance `instance` of the last frame set landed: its
    /// model, the chunk and its index in that chunk's buffers. `None` past
    /// the last instance.
    #[must_use]
    pub fn locate(&self, instance: usize) -> Option<(ModelId, usize, u32)> {
        let &(index, slot) = self.slots.get(instance)?;
        let size = self.models.get(index as usize)?.chunk_capacity.max(1);
        Some((
            self.desc.id_at(index as usize),
            (slot / size) as usize,
            slot % size,
        ))
    }

    /// The clip named `name` of model `model`; `None` when the model has no
    /// such clip (or is not a model of this crowd).
    #[must_use]
    pub fn clip(&self, model: ModelId, name: &str) -> Option<ClipRef> {
        self.desc.clip(model, name)
    }

    /// Crowd instances in the last frame set.
    #[must_use]
    pub fn instance_count(&self) -> usize {
        self.slots.len()
    }

    /// Where crowd instance `instance` of the last frame set landed: its
    /// model and its index among the model's instances (the instance index
    /// of the model's [`Poses`](crate::Poses) in [`read_back`](Self::read_back), and of
    /// its [`Animator`] when the model is one chunk; [`locate`](Self::locate)
    /// gives the chunk). Instances of a model keep their crowd order.
    /// `None` past the last instance.
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
        self.desc.check_instances(instances, &mut self.counts)?;
        for m in &mut self.models {
            m.filled = 0;
            for c in &mut m.chunks {
                c.scratch.clear();
            }
        }
        self.slots.clear();
        for inst in instances {
            // Checked: the model is this crowd's, within its capacity.
            if let Some(m) = self.models.get_mut(inst.model.index()) {
                let (local, chunk) = m.next();
                self.slots.push((inst.model.index() as u32, local));
                if let Some(c) = chunk {
                    c.scratch.push(Instance {
                        clip: inst.clip.clip(),
                        time: inst.time,
                        wrap: inst.wrap,
                    });
                }
            }
        }
        for c in self.models.iter_mut().flat_map(|m| &mut m.chunks) {
            // Cannot fail: the check covered what the animator checks,
            // check_devices() the devices.
            c.animator.write_instances(queue, &c.scratch)?;
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
    /// Naming the crowd's character: [`Error::UnknownModel`] (its
    /// `instance` is the character), [`Error::ModelWithoutMixer`], the
    /// action errors of [`MixError`](crate::MixError) (clip or mask out of
    /// range for the character's model, weights, times, too many actions),
    /// [`MixError::CountMismatch`](crate::MixError::CountMismatch);
    /// [`Error::ModelFull`] past a model's characters. On error nothing is
    /// written: every model keeps its previous frame.
    /// [`Error::DeviceLost`] once a model's device is lost (checked first).
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
            m.filled = 0;
            for c in &mut m.chunks {
                c.actions.clear();
                c.counts.clear();
                c.crowd_index.clear();
            }
        }
        let mut slots = std::mem::take(&mut self.next_slots);
        slots.clear();
        let mut first = 0usize;
        for (k, ch) in characters.iter().enumerate() {
            let end = first + ch.actions as usize;
            // Checked: the model is this crowd's, within its capacity, the
            // counts add up.
            if let (Some(m), Some(own)) = (
                self.models.get_mut(ch.model.index()),
                actions.get(first..end),
            ) {
                let (local, chunk) = m.next();
                slots.push((ch.model.index() as u32, local));
                if let Some(c) = chunk {
                    c.actions.extend_from_slice(own);
                    c.counts.push(ch.actions);
                    c.crowd_index.push(k);
                }
            }
            first = end;
        }
        // Every chunk's actions are packed (checked) before any is written.
        let packed = self
            .models
            .iter_mut()
            .flat_map(|m| &mut m.chunks)
            .filter(|c| c.animator.has_mixer())
            .try_for_each(|c| {
                c.animator
                    .pack_actions(&c.actions, &c.counts)
                    .map_err(|e| renumber(e, &c.crowd_index))
            });
        if let Err(e) = packed {
            // The frame in effect keeps its mapping.
            self.next_slots = slots;
            return Err(e);
        }
        self.next_slots = std::mem::replace(&mut self.slots, slots);
        for c in self.models.iter_mut().flat_map(|m| &mut m.chunks) {
            if c.animator.has_mixer() {
                c.animator.write_packed(queue)?;
            } else {
                c.scratch.clear();
                c.animator.write_instances(queue, &c.scratch)?;
            }
        }
        Ok(())
    }

    /// [`Error::DeviceLost`] when a model's device is lost: one poll (a
    /// crowd's models are on one device), then each chunk's probe.
    fn check_devices(&self, during: &'static str) -> Result<()> {
        for (i, c) in self.models.iter().flat_map(|m| &m.chunks).enumerate() {
            let health = c.animator.sampler.health();
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
    /// (a chunk without instances this frame records nothing).
    pub fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        for c in self.models.iter().flat_map(|m| &m.chunks) {
            c.animator.record_pass(pass);
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
        let mut models = Vec::with_capacity(self.models.len());
        for m in &self.models {
            let mut chunks = m.chunks.iter();
            let Some(first) = chunks.next() else {
                continue;
            };
            let mut poses = first.animator.read_back(device, queue)?;
            for c in chunks.filter(|c| c.animator.instance_count() > 0) {
                poses.append(c.animator.read_back(device, queue)?);
            }
            models.push(poses);
        }
        Ok(CrowdPoses {
            models,
            slots: self.slots.clone(),
        })
    }
}
