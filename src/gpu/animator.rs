//! [`Animator`]: the one object a renderer holds. It owns the sampler and,
//! for a bound library, the pose and skin passes, in one chunk or several
//! ([`AnimatorChunk`]) when its capacity would pass the device's limits in
//! one; takes the per-frame instance table once, records every pass into
//! the caller's encoder, and hands out the buffers a renderer binds, with
//! [`Poses`] for a readback.

use super::chunk::AnimatorChunk;
use super::timer::PassTimer;
use crate::error::{Error, MixError, Result};
use crate::model::crowd::renumber;
use crate::model::instance::Instance;
use crate::model::library::AnimationLibrary;
use crate::model::mix::{check_desc, Action, MixerDesc};
use crate::model::rig::Rig;
use crate::model::{BoundLibrary, Poses};
use crate::plan::{largest_fit, ChunkModel, DeviceProfile, Plan, SamplerPlan};

/// Animates many instances of a model on the GPU: sampling, then local
/// pose, hierarchy, joint matrices and morph weights, with no readback in
/// between.
///
/// Once: bind a library to a rig ([`AnimationLibrary::bind`]), then
/// [`Animator::new`] (or [`Animator::with_mixer`] to blend several actions
/// per character). Per frame: [`set_instances`](Self::set_instances) (clip
/// and time of each instance; one small buffer write),
/// [`record`](Self::record) into your encoder, then draw each of the
/// rig's [`parts`](Rig::parts) from each chunk's buffers
/// ([`chunks`](Self::chunks): [`AnimatorChunk::joint_matrix_buffer`] and
/// [`AnimatorChunk::world_matrix_buffer`], or the bind group of
/// [`AnimatorChunk::output_bind_group`]). Reading results back is
/// optional: [`read_back`](Self::read_back).
///
/// # Chunks
///
/// An animator whose capacity would pass the device's limits in one
/// buffer or dispatch (`max_storage_buffer_binding_size`,
/// `max_buffer_size`, `max_compute_workgroups_per_dimension`) is split
/// into chunks of [`chunk_capacity`](Self::chunk_capacity) instances
/// (characters with a mixer), the capacity
/// [`plan::chunk_capacity`](crate::plan::chunk_capacity) finds for this
/// device; each chunk has buffers of its own and shares the first's upload
/// of the library. Instance `i` of a frame is instance
/// `i % chunk_capacity` of [`chunks`](Self::chunks)`()[i / chunk_capacity]`.
/// The calls that take or give a whole frame ([`set_instances`](Self::set_instances),
/// [`set_actions`](Self::set_actions), [`record`](Self::record),
/// [`read_back`](Self::read_back)) cover every chunk; the buffers are
/// only reached through a chunk ([`AnimatorChunk`]), so a renderer draws
/// chunk by chunk whatever the count: an animator that fits in one chunk
/// has `chunks()[0]` alone. [`plan`](Self::plan) is the first chunk's
/// (every chunk runs the same plan).
///
/// ```no_run
/// # fn f(device: &wgpu::Device, queue: &wgpu::Queue,
/// #      library: &keyframe_gpu::AnimationLibrary, rig: &keyframe_gpu::Rig)
/// #      -> Result<(), keyframe_gpu::Error> {
/// use keyframe_gpu::{Animator, Instance};
/// let bound = library.bind(rig)?;
/// let mut animator = Animator::new(device, queue, &bound, 1_000)?;
/// let walk = library.clip_by_name("walk").unwrap_or(0);
/// let instances: Vec<Instance> = (0..1_000).map(|i| Instance::new(walk, i as f64 * 0.1)).collect();
/// animator.set_instances(queue, &instances)?;
/// let mut encoder = device.create_command_encoder(&Default::default());
/// animator.record(&mut encoder);
/// queue.submit([encoder.finish()]);
/// # Ok(()) }
/// ```
///
/// # Device loss
///
/// Once the device is lost, every fallible call returns
/// [`Error::DeviceLost`] from the first call
/// after the loss, whether or not the application ever waits on the
/// device, and [`record`](Self::record) records nothing once a call has
/// reported it (`docs/USAGE.md`, "Faults").
/// The model is device-free ([`AnimationLibrary`], [`Rig`],
/// [`BoundLibrary`], [`MixerDesc`]): rebuild from it on a new device.
///
/// ```no_run
/// use keyframe_gpu::{optional_features, required_features, required_limits};
/// use keyframe_gpu::{Action, Animator, BoundLibrary, Error, MixerDesc};
///
/// /// What lives on the device. The model (`bound`, `desc`) lives outside.
/// struct OnDevice {
///     animator: Animator,
///     device: wgpu::Device,
///     queue: wgpu::Queue,
/// }
///
/// /// The application's device, as the crate asks for one; `None` when no
/// /// adapter or device can be had (now).
/// fn new_device() -> Option<(wgpu::Device, wgpu::Queue)> {
///     let instance =
///         wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
///     let adapter = pollster::block_on(instance.request_adapter(&Default::default())).ok()?;
///     let descriptor = wgpu::DeviceDescriptor {
///         required_limits: required_limits(&adapter.limits()),
///         required_features: required_features() | (adapter.features() & optional_features()),
///         ..Default::default()
///     };
///     pollster::block_on(adapter.request_device(&descriptor)).ok()
/// }
///
/// fn build(bound: &BoundLibrary, desc: &MixerDesc) -> Result<Option<OnDevice>, Error> {
///     let Some((device, queue)) = new_device() else {
///         return Ok(None);
///     };
///     let animator = Animator::with_mixer(&device, &queue, bound, desc)?;
///     Ok(Some(OnDevice { animator, device, queue }))
/// }
///
/// /// One frame: the actions, recorded into the frame's encoder, submitted,
/// /// a poll that does not block. No wait anywhere.
/// fn frame(
///     on: &mut Option<OnDevice>,
///     bound: &BoundLibrary,
///     desc: &MixerDesc,
///     actions: &[Action],
///     counts: &[u32],
/// ) -> Result<(), Error> {
///     let lost = match on.as_mut() {
///         Some(o) => match o.animator.set_actions(&o.queue, actions, counts) {
///             Err(Error::DeviceLost { .. }) => true,
///             other => {
///                 other?;
///                 false
///             }
///         },
///         None => true,
///     };
///     if lost {
///         // The old objects and device go first, then the new ones come.
///         *on = None;
///         *on = build(bound, desc)?;
///         if let Some(o) = on.as_mut() {
///             o.animator.set_actions(&o.queue, actions, counts)?;
///         }
///     }
///     // No device this frame: try again next frame.
///     let Some(o) = on.as_ref() else { return Ok(()) };
///     let mut encoder = o.device.create_command_encoder(&Default::default());
///     o.animator.record(&mut encoder);
///     // ... the application's own passes, bound to the animator's buffers ...
///     o.queue.submit([encoder.finish()]);
///     let _ = o.device.poll(wgpu::PollType::Poll);
///     Ok(())
/// }
/// ```
pub struct Animator {
    /// Its chunks, in order: the first always exists.
    chunks: Vec<AnimatorChunk>,
    /// Instances (characters with a mixer) each chunk holds.
    chunk_capacity: u32,
    /// Instances (characters) per frame at most.
    capacity: u32,
}

impl std::fmt::Debug for Animator {
    /// Its shape, not its tables: the chunks, their capacity, the frame's
    /// instances and the plan's choices.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Animator")
            .field("chunks", &self.chunks.len())
            .field("chunk_capacity", &self.chunk_capacity)
            .field("capacity", &self.capacity)
            .field("instances", &self.instance_count())
            .field("mixer", &self.has_mixer())
            .field("sampler", &self.plan().sampler)
            .field("skin", &self.plan().skin)
            .finish()
    }
}

impl Animator {
    /// An animator that samples `bound`'s library and poses its rig with
    /// it: local pose, world transforms, joint matrices of every skin and
    /// morph weights of every mesh, for up to `max_instances` instances,
    /// as the [`Plan`] for this device's profile lays them out (in chunks
    /// where one would pass the device's limits: see "Chunks" above).
    ///
    /// # Errors
    /// [`Error::DeviceLimit`] for a device below
    /// [`required_limits`](crate::required_limits); a library whose tables
    /// alone pass the device's limits
    /// ([`Error::LimitExceeded`]);
    /// [`Error::Gpu`] when wgpu reports an error.
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        bound: &BoundLibrary,
        max_instances: u32,
    ) -> Result<Self> {
        let model = ChunkModel::Bound(bound);
        Self::chunked(device, queue, model, max_instances, u32::MAX, None)
    }

    /// An animator that runs `plan`: exactly the dispatches it lists, for
    /// its capacity, in one chunk (a plan made for another profile runs
    /// too: a GPU's plan on a CPU adapter, say). A plan made by
    /// [`Plan::for_mixer`] gives an animator with that mixer
    /// ([`Animator::with_mixer`]).
    ///
    /// # Errors
    /// As [`Animator::new`], and with a mixer as [`Animator::with_mixer`];
    /// [`Error::LimitExceeded`] when the
    /// plan's capacity does not fit the device in one chunk.
    pub fn from_plan(device: &wgpu::Device, queue: &wgpu::Queue, plan: &Plan) -> Result<Self> {
        let chunk = AnimatorChunk::from_plan(device, queue, plan)?;
        Ok(Animator {
            chunks: vec![chunk],
            chunk_capacity: plan.capacity,
            capacity: plan.capacity,
        })
    }

    /// An animator of another rig bound to the same library as `other`'s,
    /// sharing `other`'s upload of the library (its keys, values and
    /// tables are on the device once for both), for up to `max_instances`
    /// instances. `None` when `bound`'s library is not `other`'s, or
    /// `other` has a mixer (see [`Animator::new`] then).
    ///
    /// # Errors
    /// As [`Animator::new`].
    pub fn sharing(
        device: &wgpu::Device,
        other: &Animator,
        bound: &BoundLibrary,
        max_instances: u32,
    ) -> Result<Option<Self>> {
        if other.has_mixer() || !other.library().same_data(bound.library()) {
            return Ok(None);
        }
        let model = ChunkModel::Bound(bound);
        let share = other.first();
        // Never uploads: the library is `other`'s, under its sampler plan.
        let limits = (max_instances, u32::MAX);
        Self::chunked_on(device, None, model, limits, Some(share), SamplerPlan::Auto).map(Some)
    }

    /// An animator that only samples `library`, for up to `max_instances`
    /// instances, without a rig: the sampled values (and the pointer
    /// targets among them) are the output.
    ///
    /// # Errors
    /// As [`Animator::new`].
    pub fn sampler_only(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        library: &AnimationLibrary,
        max_instances: u32,
    ) -> Result<Self> {
        let model = ChunkModel::Sampled(library);
        Self::chunked(device, queue, model, max_instances, u32::MAX, None)
    }

    /// An animator whose characters each blend several actions (a
    /// crossfade, a masked layer, additive clips) into one pose of
    /// `bound`'s rig, by the rules of three.js's `AnimationMixer` with
    /// masks (`docs/USAGE.md`, "Blending"): every action is sampled, the
    /// mix pass blends them per node into the local poses, and the
    /// hierarchy and joint stages read the blended pose. Up to
    /// `desc.characters` characters of up to `desc.actions_per_character`
    /// actions; `desc.masks` are uploaded once per chunk. Per frame:
    /// [`set_actions`](Self::set_actions), then [`record`](Self::record).
    /// Outputs are indexed by character.
    ///
    /// The sampler holds two rows per action slot (the action's time and,
    /// for an additive action, its reference time); its output buffer is
    /// sized for that.
    ///
    /// # Errors
    /// [`MixError::ActionCapacity`] (0 or more than
    /// [`MAX_ACTIONS`](crate::MAX_ACTIONS) actions per character),
    /// [`MixError::MaskOfOtherRig`] and [`MixError::MaskLength`] (a mask
    /// made for another rig), and those of [`new`](Self::new).
    pub fn with_mixer(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        bound: &BoundLibrary,
        desc: &MixerDesc,
    ) -> Result<Self> {
        check_desc(bound.rig(), desc)?;
        let model = ChunkModel::Mixed(bound, desc);
        Self::chunked(device, queue, model, desc.characters, u32::MAX, None)
    }

    /// An animator of `model` for `capacity` instances in chunks of at
    /// most `chunk_limit`, the first sharing `share`'s upload (and
    /// sampler plan) where it can.
    pub(crate) fn chunked(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        model: ChunkModel<'_>,
        capacity: u32,
        chunk_limit: u32,
        share: Option<&AnimatorChunk>,
    ) -> Result<Self> {
        let sampler = SamplerPlan::Auto;
        Self::chunked_on(
            device,
            Some(queue),
            model,
            (capacity, chunk_limit),
            share,
            sampler,
        )
    }

    /// [`chunked`](Self::chunked) with the sampler plan `sampler`, no
    /// upload shared.
    pub(crate) fn chunked_with(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        model: ChunkModel<'_>,
        (capacity, chunk_limit): (u32, u32),
        sampler: SamplerPlan,
    ) -> Result<Self> {
        Self::chunked_on(
            device,
            Some(queue),
            model,
            (capacity, chunk_limit),
            None,
            sampler,
        )
    }

    /// [`chunked`](Self::chunked) with the sampler plan `sampler` (or
    /// `share`'s); without a queue only by sharing `share`'s upload. A
    /// chunk that shares runs under `share`'s profile (the upload was laid
    /// out for it); its capacity is fitted to this device's limits.
    fn chunked_on(
        device: &wgpu::Device,
        queue: Option<&wgpu::Queue>,
        model: ChunkModel<'_>,
        (capacity, chunk_limit): (u32, u32),
        share: Option<&AnimatorChunk>,
        sampler: SamplerPlan,
    ) -> Result<Self> {
        super::check_device(device)?;
        let capacity = capacity.max(1);
        let on_device = DeviceProfile::of(device);
        let profile = share.map_or(on_device, |s| s.plan.profile);
        let fit = DeviceProfile {
            limits: on_device.limits,
            ..profile
        };
        let sampler = share.map_or(sampler, |s| s.plan.sampler);
        let size = largest_fit(model, &fit, sampler, capacity.min(chunk_limit.max(1)))?;
        let first = AnimatorChunk::build(device, queue, model, size, &profile, sampler, share)?;
        let mut animator = Animator {
            chunks: vec![first],
            chunk_capacity: size,
            capacity: size,
        };
        animator.grow_to(device, model, capacity)?;
        Ok(animator)
    }

    /// Grows the animator to `capacity` instances (characters): chunks of
    /// the animator's chunk capacity are appended, each sharing the first
    /// chunk's upload; the chunks there are stay as they are (their
    /// buffers, bind groups and contents). A capacity not above the
    /// current one changes nothing.
    ///
    /// # Errors
    /// Those of [`new`](Self::new); on error the animator is unchanged.
    pub(crate) fn grow_to(
        &mut self,
        device: &wgpu::Device,
        model: ChunkModel<'_>,
        capacity: u32,
    ) -> Result<()> {
        if capacity <= self.capacity {
            return Ok(());
        }
        let size = self.chunk_capacity;
        let count = capacity.div_ceil(size) as usize;
        let first = self.first();
        let (profile, sampler) = (first.plan.profile, first.plan.sampler);
        let mut more = Vec::with_capacity(count.saturating_sub(self.chunks.len()));
        for _ in self.chunks.len()..count {
            let chunk =
                AnimatorChunk::build(device, None, model, size, &profile, sampler, Some(first))?;
            more.push(chunk);
        }
        self.chunks.extend(more);
        self.capacity = capacity;
        Ok(())
    }

    /// The first chunk.
    fn first(&self) -> &AnimatorChunk {
        // Every constructor makes one.
        &self.chunks[0]
    }

    /// The plan the first chunk runs (every chunk runs the same, for
    /// [`chunk_capacity`](Self::chunk_capacity) instances): its
    /// dispatches, their overrides and workgroups, the tables it uploaded.
    #[must_use]
    pub fn plan(&self) -> &Plan {
        &self.first().plan
    }

    /// The instances (characters with a mixer) each chunk holds: instance
    /// `i` of a frame is instance `i % chunk_capacity` of chunk
    /// `i / chunk_capacity`.
    #[must_use]
    pub fn chunk_capacity(&self) -> u32 {
        self.chunk_capacity
    }

    /// The chunks, in order (at least one: `chunks()[0]` always exists):
    /// chunk `k`'s buffers hold instances `k * chunk_capacity ..` of the
    /// last frame set. The buffers a renderer binds are each chunk's
    /// ([`AnimatorChunk::joint_matrix_buffer`] and the others); an animator
    /// that fits the device in one chunk has only `chunks()[0]`.
    #[must_use]
    pub fn chunks(&self) -> &[AnimatorChunk] {
        &self.chunks
    }

    /// Writes this frame's actions: `counts[c]` consecutive actions of
    /// `actions`, in list order, are character `c`'s (a flat table, no
    /// allocation per character). Every action is checked first: on error
    /// nothing is written and the previous frame's actions stay in effect.
    ///
    /// ```no_run
    /// # fn f(device: &wgpu::Device, queue: &wgpu::Queue,
    /// #      bound: &keyframe_gpu::BoundLibrary)
    /// #      -> Result<(), keyframe_gpu::Error> {
    /// use keyframe_gpu::{Action, Animator, MixerDesc, WrapMode};
    /// let mut animator = Animator::with_mixer(device, queue, bound, &MixerDesc::new(100, 2))?;
    /// let (walk, run) = (0, 1);
    /// // Character c started fading from walk to run at 2.0 s, over 0.25 s.
    /// let now = 2.1;
    /// let fade = ((now - 2.0) / 0.25_f64).clamp(0.0, 1.0) as f32;
    /// let mut actions = Vec::new();
    /// for c in 0..100 {
    ///     let t = now + c as f64 * 0.1;
    ///     actions.push(Action::new(walk, t).with_weight(1.0 - fade).with_wrap(WrapMode::Repeat));
    ///     actions.push(Action::new(run, t).with_weight(fade).with_wrap(WrapMode::Repeat));
    /// }
    /// animator.set_actions(queue, &actions, &[2; 100])?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`MixError::NoMixer`] on an animator made without
    /// [`with_mixer`](Self::with_mixer); the action errors of [`MixError`]
    /// (naming the character and the action): unknown clip or mask,
    /// negative or non-finite weight, non-finite time or reference time,
    /// more actions than the capacity; [`MixError::TooManyCharacters`],
    /// [`MixError::CountMismatch`]; on error nothing is written and the
    /// previous frame's actions stay in effect.
    /// [`Error::DeviceLost`] once the device is
    /// lost (checked first).
    pub fn set_actions(
        &mut self,
        queue: &wgpu::Queue,
        actions: &[Action],
        counts: &[u32],
    ) -> Result<()> {
        self.first().health().check("Animator::set_actions")?;
        self.pack_actions(actions, counts)?;
        self.write_packed(queue)
    }

    /// Whether the animator has a mixer ([`with_mixer`](Self::with_mixer)).
    pub(crate) fn has_mixer(&self) -> bool {
        self.first().has_mixer()
    }

    /// The host half of [`set_actions`](Self::set_actions): checks the
    /// frame and packs each chunk's characters (characters
    /// `k * chunk_capacity ..` are chunk `k`'s); nothing reaches the
    /// device. Errors name the animator's character.
    pub(crate) fn pack_actions(&mut self, actions: &[Action], counts: &[u32]) -> Result<()> {
        if !self.has_mixer() {
            return Err(MixError::NoMixer.into());
        }
        if let [only] = self.chunks.as_mut_slice() {
            return only.pack_actions(actions, counts);
        }
        if counts.len() > self.capacity as usize {
            return Err(MixError::TooManyCharacters {
                count: counts.len(),
                capacity: self.capacity,
            }
            .into());
        }
        let counted: u64 = counts.iter().map(|&n| u64::from(n)).sum();
        if counted != actions.len() as u64 {
            return Err(MixError::CountMismatch {
                counted,
                actions: actions.len(),
            }
            .into());
        }
        let size = self.chunk_capacity as usize;
        let mut first = 0usize;
        for (k, chunk) in self.chunks.iter_mut().enumerate() {
            let own = counts.get(k * size..counts.len().min((k + 1) * size));
            let own = own.unwrap_or(&[]);
            let end = first + own.iter().map(|&n| n as usize).sum::<usize>();
            chunk
                .pack_actions(&actions[first..end], own)
                .map_err(|e| renumber(e, |c| c + k * size))?;
            first = end;
        }
        Ok(())
    }

    /// The device half of [`set_actions`](Self::set_actions): writes what
    /// [`pack_actions`](Self::pack_actions) packed, every chunk.
    pub(crate) fn write_packed(&mut self, queue: &wgpu::Queue) -> Result<()> {
        for chunk in &mut self.chunks {
            chunk.write_packed(queue)?;
        }
        Ok(())
    }

    /// Characters (with a mixer) or instances in the current frame.
    #[must_use]
    pub fn instance_count(&self) -> u32 {
        self.chunks.iter().map(AnimatorChunk::instance_count).sum()
    }

    /// Writes this frame's instance table: every pass reads it, so the
    /// instances are given once.
    ///
    /// # Errors
    /// [`Error::TooManyInstances`] past the
    /// capacity, [`Error::ClipOutOfRange`] and
    /// [`Error::InstanceTimeNotFinite`]; on error nothing is written and the
    /// previous frame's table stays in effect.
    /// [`Error::DeviceLost`] once the device is
    /// lost (checked first).
    ///
    /// With a mixer, each instance is a character playing one action of
    /// weight 1 (the unblended pose, bit for bit).
    pub fn set_instances(&mut self, queue: &wgpu::Queue, instances: &[Instance]) -> Result<()> {
        self.first().health().check("Animator::set_instances")?;
        self.write_instances(queue, instances)
    }

    /// [`set_instances`](Self::set_instances) without the device check,
    /// for a crowd that checked its models' devices first: the whole
    /// table is checked, then each chunk gets its part.
    pub(crate) fn write_instances(
        &mut self,
        queue: &wgpu::Queue,
        instances: &[Instance],
    ) -> Result<()> {
        if let [only] = self.chunks.as_mut_slice() {
            return only.write_instances(queue, instances);
        }
        self.check_instances(instances)?;
        let size = self.chunk_capacity as usize;
        for (k, chunk) in self.chunks.iter_mut().enumerate() {
            let own = instances.get(k * size..instances.len().min((k + 1) * size));
            // Cannot fail: checked above, and each part fits its chunk.
            chunk.write_instances(queue, own.unwrap_or(&[]))?;
        }
        Ok(())
    }

    /// What each chunk's [`write_instances`](AnimatorChunk::write_instances)
    /// checks, for the whole table, naming the animator's instance.
    fn check_instances(&self, instances: &[Instance]) -> Result<()> {
        if instances.len() > self.capacity as usize {
            if self.has_mixer() {
                return Err(MixError::TooManyCharacters {
                    count: instances.len(),
                    capacity: self.capacity,
                }
                .into());
            }
            return Err(Error::TooManyInstances {
                requested: instances.len(),
                capacity: self.capacity,
            });
        }
        let clip_count = self.library().clips().len();
        for (instance, inst) in instances.iter().enumerate() {
            if inst.clip as usize >= clip_count {
                return Err(Error::ClipOutOfRange {
                    instance,
                    clip: inst.clip,
                    clip_count,
                });
            }
            if !inst.time.is_finite() {
                return Err(Error::InstanceTimeNotFinite {
                    instance,
                    time: inst.time,
                });
            }
        }
        Ok(())
    }

    /// Records every pass of every chunk (sampling, then pose and skin)
    /// into `encoder`, in one compute pass labelled
    /// `keyframe-gpu.animate`.
    ///
    /// Recording cannot fail, as wgpu's own recording cannot: once the
    /// device is known lost it records nothing, and the next fallible call
    /// ([`set_instances`](Self::set_instances), [`read_back`](Self::read_back))
    /// returns [`Error::DeviceLost`].
    pub fn record(&self, encoder: &mut wgpu::CommandEncoder) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("keyframe-gpu.animate"),
            timestamp_writes: None,
        });
        self.record_pass(&mut pass);
    }

    /// [`record`](Self::record), with the compute pass's GPU time measured
    /// by `timer` (when its previous measurement has been read). Records
    /// nothing once the device is known lost.
    pub fn record_timed(&self, encoder: &mut wgpu::CommandEncoder, timer: &mut PassTimer) {
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("keyframe-gpu.animate"),
                timestamp_writes: timer.pass_writes(),
            });
            self.record_pass(&mut pass);
        }
        timer.resolve(encoder);
    }

    /// Records every chunk's passes into a compute pass the caller owns
    /// (wgpu orders the dispatches' reads after the writes they depend
    /// on; a chunk without instances this frame records nothing). Records
    /// nothing once the device is known lost.
    pub fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        for chunk in &self.chunks {
            chunk.record_pass(pass);
        }
    }

    /// The library bound to the rig, when built with one.
    #[must_use]
    pub fn bound(&self) -> Option<&BoundLibrary> {
        self.first().bound()
    }

    /// The rig, when built with one.
    #[must_use]
    pub fn rig(&self) -> Option<&Rig> {
        self.bound().map(BoundLibrary::rig)
    }

    /// The library being sampled.
    #[must_use]
    pub fn library(&self) -> &AnimationLibrary {
        self.first().library()
    }

    /// Reads the current frame's results back (blocking: it waits for the
    /// GPU), every chunk's, as one [`Poses`] indexed by instance (or
    /// character). Call it after the encoder holding
    /// [`record`](Self::record) was submitted. For a readback every frame
    /// without the stall, see [`ReadbackRing`](crate::gpu::ReadbackRing).
    ///
    /// The local transforms are the pose pass's where it stores them (the
    /// staged strategy and the mixer); where the fused skin pass keeps them
    /// in registers they are computed here from the sampled values read
    /// back, by the CPU twin's `local_pose`.
    ///
    /// # Errors
    /// [`Error::DeviceLost`] once the device is
    /// lost: never the last frame it computed.
    /// [`Error::Readback`] or
    /// [`Error::Gpu`].
    pub fn read_back(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Poses> {
        let mut poses = self.first().read_back(device, queue)?;
        for chunk in self.chunks[1..].iter().filter(|c| c.instance_count() > 0) {
            poses.append(chunk.read_back(device, queue)?);
        }
        Ok(poses)
    }

    /// Convenience for tools and tests: sets the instances, records and
    /// submits this frame, and reads the sampled values back (the rows'
    /// blocks, as [`AnimatorChunk::sample_buffer`] holds them, chunk after
    /// chunk).
    ///
    /// # Errors
    /// Those of [`set_instances`](Self::set_instances) and
    /// [`read_back`](Self::read_back).
    pub fn sample(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        instances: &[Instance],
    ) -> Result<Vec<f32>> {
        self.set_instances(queue, instances)?;
        super::submit_now(device, queue, "Animator::sample (dispatch)", |encoder| {
            self.record(encoder);
        })?;
        let mut values = Vec::new();
        for chunk in &self.chunks {
            values.extend(chunk.read_samples(device, queue)?);
        }
        Ok(values)
    }

    /// Every chunk, in order, to change.
    pub(crate) fn chunks_mut(&mut self) -> &mut [AnimatorChunk] {
        &mut self.chunks
    }
}
