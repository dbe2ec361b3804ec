//! [`Animator`]: the one object a renderer holds. It owns the sampler and,
//! for a bound library, the pose and skin passes, takes the per-frame
//! instance table once, records every pass into the caller's encoder, and
//! hands out the buffers a renderer binds, with [`Poses`] for a readback.

use super::skin::GpuSkinner;
use super::timer::PassTimer;
use super::{check_device, GpuSampler};
use crate::error::MixError;
use crate::error::Result;
use crate::model::instance::Instance;
use crate::model::library::AnimationLibrary;
use crate::model::mix::{check_desc, Action, MixerDesc};
use crate::model::rig::Rig;
use crate::model::{BoundLibrary, OutputLayout, Part, Poses};
use crate::plan::{DeviceProfile, Plan, PlanChoices, SkinStrategy};
use crate::tables::mix::{mask_table, Packer};
use crate::tables::poses::Flat;

/// Animates many instances of a model on the GPU: sampling, then local
/// pose, hierarchy, joint matrices and morph weights, with no readback in
/// between.
///
/// Once: bind a library to a rig ([`AnimationLibrary::bind`]), then
/// [`Animator::new`] (or [`Animator::with_mixer`] to blend several actions
/// per character). Per frame: [`set_instances`](Self::set_instances) (clip
/// and time of each instance; one small buffer write),
/// [`record`](Self::record) into your encoder, then draw each of
/// [`parts`](Self::parts) from [`joint_matrix_buffer`](Self::joint_matrix_buffer)
/// and [`world_matrix_buffer`](Self::world_matrix_buffer) (or the bind
/// group of [`output_bind_group`](Self::output_bind_group)). Reading
/// results back is optional: [`read_back`](Self::read_back).
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
/// [`Error::DeviceLost`](crate::Error::DeviceLost) from the first call
/// after the loss, whether or not the application ever waits on the
/// device, and [`record`](Self::record) records nothing once a call has
/// reported it (`docs/USAGE.md`, "Faults").
/// The model is device-free ([`AnimationLibrary`], [`Rig`],
/// [`BoundLibrary`], [`MixerDesc`]): rebuild from it on a new device.
///
/// ```no_run
/// use keyframe_gpu::gpu::headless::{request_device, AdapterChoice, Headless};
/// use keyframe_gpu::{Action, Animator, BoundLibrary, Error, MixerDesc};
///
/// /// What lives on the device. The model (`bound`, `desc`) lives outside.
/// struct OnDevice {
///     animator: Animator,
///     gpu: Headless,
/// }
///
/// fn build(bound: &BoundLibrary, desc: &MixerDesc) -> Result<OnDevice, Error> {
///     let gpu = request_device(AdapterChoice::PreferHardware)?;
///     let animator = Animator::with_mixer(&gpu.device, &gpu.queue, bound, desc)?;
///     Ok(OnDevice { animator, gpu })
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
///         Some(o) => match o.animator.set_actions(&o.gpu.queue, actions, counts) {
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
///         let o = on.insert(build(bound, desc)?);
///         o.animator.set_actions(&o.gpu.queue, actions, counts)?;
///     }
///     let Some(o) = on.as_ref() else { return Ok(()) };
///     let mut encoder = o.gpu.device.create_command_encoder(&Default::default());
///     o.animator.record(&mut encoder);
///     // ... the application's own passes, bound to the animator's buffers ...
///     o.gpu.queue.submit([encoder.finish()]);
///     let _ = o.gpu.device.poll(wgpu::PollType::Poll);
///     Ok(())
/// }
/// ```
#[derive(Debug)]
pub struct Animator {
    pub(crate) sampler: GpuSampler,
    skin: Option<Posing>,
    mixer: Option<Mixer>,
    plan: Plan,
}

/// The pose and skin passes of a bound library, with what they were built
/// from.
#[derive(Debug)]
struct Posing {
    bound: BoundLibrary,
    skinner: GpuSkinner,
}

/// The host side of an animator's mixer: its capacity, its masks' count
/// and the packer it reuses every frame.
#[derive(Debug)]
struct Mixer {
    characters: u32,
    mask_count: usize,
    packer: Packer,
}

impl Animator {
    /// An animator that samples `bound`'s library and poses its rig with
    /// it: local pose, world transforms, joint matrices of every skin and
    /// morph weights of every mesh, for up to `max_instances` instances,
    /// as the [`Plan`] for this device's profile lays them out.
    ///
    /// # Errors
    /// [`Error::DeviceLimit`](crate::Error::DeviceLimit) for a device below
    /// [`required_limits`](crate::required_limits); buffers past the
    /// device's limits ([`Error::LimitExceeded`](crate::Error::LimitExceeded));
    /// [`Error::Gpu`](crate::Error::Gpu) when wgpu reports an error.
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        bound: &BoundLibrary,
        max_instances: u32,
    ) -> Result<Self> {
        let plan = Plan::new(bound, max_instances, &DeviceProfile::of(device))?;
        Self::from_plan(device, queue, &plan)
    }

    /// An animator that runs `plan`: exactly the dispatches it lists, for
    /// its capacity (a plan made for another profile runs too: a GPU's
    /// plan on a CPU adapter, say). A plan made by [`Plan::for_mixer`]
    /// gives an animator with that mixer ([`Animator::with_mixer`]).
    ///
    /// # Errors
    /// As [`Animator::new`], and with a mixer as [`Animator::with_mixer`].
    pub fn from_plan(device: &wgpu::Device, queue: &wgpu::Queue, plan: &Plan) -> Result<Self> {
        check_device(device)?;
        if plan.mixer.is_some() {
            return Self::mixer_from_plan(device, queue, plan);
        }
        let sampler = GpuSampler::from_plan(device, queue, &plan.library, plan)?;
        Self::posing(device, sampler, plan)
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
        if other.mixer.is_some() || !other.library().same_data(bound.library()) {
            return Ok(None);
        }
        let choices = PlanChoices {
            sampler: other.plan.sampler,
            skin: SkinStrategy::Auto,
        };
        let plan = Plan::with_choices(bound, max_instances, &other.plan.profile, choices)?;
        if !other.sampler.can_share(bound.library(), &plan) {
            return Ok(None);
        }
        let sampler = other.sampler.sharing(device, &plan)?;
        Self::posing(device, sampler, &plan).map(Some)
    }

    /// The skin stage of `plan` over `sampler`, without a mixer.
    fn posing(device: &wgpu::Device, sampler: GpuSampler, plan: &Plan) -> Result<Self> {
        let skin = match &plan.bound {
            Some(bound) => Some(Posing {
                bound: bound.clone(),
                skinner: GpuSkinner::from_plan(device, &sampler, plan, None)?,
            }),
            None => None,
        };
        Ok(Animator {
            sampler,
            skin,
            mixer: None,
            plan: plan.clone(),
        })
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
        let profile = DeviceProfile::of(device);
        let plan = Plan::sampling(library, max_instances, &profile, crate::SamplerPlan::Auto)?;
        Self::from_plan(device, queue, &plan)
    }

    /// An animator whose characters each blend several actions (a
    /// crossfade, a masked layer, additive clips) into one pose of
    /// `bound`'s rig, by the rules of three.js's `AnimationMixer` with
    /// masks (`docs/USAGE.md`, "Blending"): every action is sampled, the
    /// mix pass blends them per node into the local poses, and the
    /// hierarchy and joint stages read the blended pose. Up to
    /// `desc.characters` characters of up to `desc.actions_per_character`
    /// actions; `desc.masks` are uploaded once. Per frame:
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
    /// made for another rig),
    /// [`Error::LimitExceeded`](crate::Error::LimitExceeded) when the rows
    /// do not fit a `u32`, and those of [`new`](Self::new).
    pub fn with_mixer(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        bound: &BoundLibrary,
        desc: &MixerDesc,
    ) -> Result<Self> {
        check_desc(bound.rig(), desc)?;
        let profile = DeviceProfile::of(device);
        let plan = Plan::for_mixer(bound, desc, &profile, crate::SamplerPlan::Auto)?;
        Self::mixer_from_plan(device, queue, &plan)
    }

    /// The mixer's animator of `plan` (made by [`Plan::for_mixer`]).
    fn mixer_from_plan(device: &wgpu::Device, queue: &wgpu::Queue, plan: &Plan) -> Result<Self> {
        check_device(device)?;
        let (Some(desc), Some(bound)) = (&plan.mixer, &plan.bound) else {
            return Err(MixError::NoMixer.into());
        };
        check_desc(bound.rig(), desc)?;
        let sampler = GpuSampler::from_plan(device, queue, &plan.library, plan)?;
        let masks = mask_table(&desc.masks);
        let mix = Some((
            desc.characters,
            desc.actions_per_character,
            masks.as_slice(),
        ));
        let skinner = GpuSkinner::from_plan(device, &sampler, plan, mix)?;
        Ok(Animator {
            sampler,
            skin: Some(Posing {
                bound: bound.clone(),
                skinner,
            }),
            mixer: Some(Mixer {
                characters: desc.characters,
                mask_count: desc.masks.len(),
                packer: Packer::new(desc.characters, desc.actions_per_character),
            }),
            plan: plan.clone(),
        })
    }

    /// The plan this animator runs: its dispatches, their overrides and
    /// workgroups, the tables it uploaded.
    #[must_use]
    pub fn plan(&self) -> &Plan {
        &self.plan
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
    /// [`Error::DeviceLost`](crate::Error::DeviceLost) once the device is
    /// lost (checked first).
    pub fn set_actions(
        &mut self,
        queue: &wgpu::Queue,
        actions: &[Action],
        counts: &[u32],
    ) -> Result<()> {
        self.sampler.health().check("Animator::set_actions")?;
        self.pack_actions(actions, counts)?;
        self.write_packed(queue)
    }

    /// Whether the animator has a mixer ([`with_mixer`](Self::with_mixer)).
    pub(crate) fn has_mixer(&self) -> bool {
        self.mixer.is_some()
    }

    /// The host half of [`set_actions`](Self::set_actions): checks and
    /// packs the frame's actions; nothing reaches the device.
    pub(crate) fn pack_actions(&mut self, actions: &[Action], counts: &[u32]) -> Result<()> {
        let Some(mixer) = &mut self.mixer else {
            return Err(MixError::NoMixer.into());
        };
        mixer
            .packer
            .pack(self.sampler.library(), mixer.mask_count, actions, counts)?;
        Ok(())
    }

    /// The device half of [`set_actions`](Self::set_actions): writes the
    /// actions [`pack_actions`](Self::pack_actions) packed.
    pub(crate) fn write_packed(&mut self, queue: &wgpu::Queue) -> Result<()> {
        let (Some(mixer), Some(posing)) = (&mut self.mixer, &mut self.skin) else {
            return Err(MixError::NoMixer.into());
        };
        // Checked by the packing: every clip is in range, every time
        // finite, and the rows fit (two per action slot).
        self.sampler.write_instances(queue, &mixer.packer.rows)?;
        posing
            .skinner
            .write_mix(queue, &mixer.packer.actions, &mixer.packer.characters);
        Ok(())
    }

    /// Characters (with a mixer) or instances in the current frame.
    #[must_use]
    pub fn instance_count(&self) -> u32 {
        match &self.skin {
            Some(posing) => posing.skinner.instance_count(),
            None => self.sampler.instance_count(),
        }
    }

    /// Writes this frame's instance table: every pass reads it, so the
    /// instances are given once.
    ///
    /// # Errors
    /// [`Error::TooManyInstances`](crate::Error::TooManyInstances) past the
    /// capacity, [`Error::ClipOutOfRange`](crate::Error::ClipOutOfRange) and
    /// [`Error::InstanceTimeNotFinite`](crate::Error::InstanceTimeNotFinite); on error nothing is written and the
    /// previous frame's table stays in effect.
    /// [`Error::DeviceLost`](crate::Error::DeviceLost) once the device is
    /// lost (checked first).
    ///
    /// With a mixer, each instance is a character playing one action of
    /// weight 1 (the unblended pose, bit for bit).
    pub fn set_instances(&mut self, queue: &wgpu::Queue, instances: &[Instance]) -> Result<()> {
        self.sampler.health().check("Animator::set_instances")?;
        self.write_instances(queue, instances)
    }

    /// [`set_instances`](Self::set_instances) without the device check,
    /// for a crowd that checked its models' devices first.
    pub(crate) fn write_instances(
        &mut self,
        queue: &wgpu::Queue,
        instances: &[Instance],
    ) -> Result<()> {
        if let (Some(mixer), Some(posing)) = (&mut self.mixer, &mut self.skin) {
            if instances.len() > mixer.characters as usize {
                return Err(MixError::TooManyCharacters {
                    count: instances.len(),
                    capacity: mixer.characters,
                }
                .into());
            }
            self.sampler.write_instances(queue, instances)?;
            mixer.packer.pack_instances(instances);
            posing
                .skinner
                .write_mix(queue, &mixer.packer.actions, &mixer.packer.characters);
            return Ok(());
        }
        self.sampler.write_instances(queue, instances)?;
        if let Some(posing) = &mut self.skin {
            posing.skinner.prepare_unchecked(queue, &self.sampler)?;
        }
        Ok(())
    }

    /// Records every pass (sampling, then pose and skin) into `encoder`, in
    /// one compute pass labelled `keyframe-gpu.animate`.
    ///
    /// Recording cannot fail, as wgpu's own recording cannot: once the
    /// device is known lost it records nothing, and the next fallible call
    /// ([`set_instances`](Self::set_instances), [`read_back`](Self::read_back))
    /// returns [`Error::DeviceLost`](crate::Error::DeviceLost).
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

    /// Records every pass into a compute pass the caller owns (wgpu orders
    /// the dispatches' reads after the writes they depend on). Records
    /// nothing once the device is known lost.
    pub fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.sampler.record_pass(pass);
        if let Some(posing) = &self.skin {
            posing.skinner.record_pass(pass);
        }
    }

    /// The library bound to the rig, when built with one.
    #[must_use]
    pub fn bound(&self) -> Option<&BoundLibrary> {
        self.skin.as_ref().map(|p| &p.bound)
    }

    /// The rig, when built with one.
    #[must_use]
    pub fn rig(&self) -> Option<&Rig> {
        self.bound().map(BoundLibrary::rig)
    }

    /// The library being sampled.
    #[must_use]
    pub fn library(&self) -> &AnimationLibrary {
        self.sampler.library()
    }

    /// Every mesh node of the rig with where its matrices and morph
    /// weights sit in the output buffers: what a renderer draws (empty
    /// without a rig).
    #[must_use]
    pub fn parts(&self) -> Vec<Part> {
        self.rig().map(Rig::parts).unwrap_or_default()
    }

    /// Where one instance's results sit in the output buffers, when built
    /// with a rig.
    #[must_use]
    pub fn output_layout(&self) -> Option<OutputLayout> {
        self.rig().map(Rig::output_layout)
    }

    /// Joint matrices (`array<mat4x4<f32>>`): instance `i`'s block at
    /// `i * layout.joints()`, each skin's at its
    /// [`OutputLayout::skin_joints`] in it; when built with a rig.
    #[must_use]
    pub fn joint_matrix_buffer(&self) -> Option<&wgpu::Buffer> {
        self.skinner().map(GpuSkinner::joint_matrix_buffer)
    }

    /// World matrices of every node (`array<mat4x4<f32>>`, instance `i`'s
    /// node `n` at `i * layout.nodes() + n`): what rigid parts draw with;
    /// when built with a rig.
    #[must_use]
    pub fn world_matrix_buffer(&self) -> Option<&wgpu::Buffer> {
        self.skinner().map(GpuSkinner::global_buffer)
    }

    /// With a mixer: each character's blended pointer properties
    /// (`KHR_animation_pointer` targets, `array<f32>`; read them by name
    /// with [`Poses::property`]). Without a mixer each instance's values
    /// are in the sampler's output at the target's slot
    /// ([`AnimationLibrary::pointer_targets`]).
    #[must_use]
    pub fn property_buffer(&self) -> Option<&wgpu::Buffer> {
        self.skinner().and_then(GpuSkinner::property_buffer)
    }

    /// Morph weights (`array<f32>`: instance `i`'s block at
    /// `i * layout.morph_weights()`, each mesh's at its
    /// [`OutputLayout::mesh_weights`] in it); when built with a rig.
    #[must_use]
    pub fn morph_weight_buffer(&self) -> Option<&wgpu::Buffer> {
        self.skinner().map(GpuSkinner::morph_weight_buffer)
    }

    /// A read-only bind group of the skinning outputs for a renderer
    /// (binding 0 joint matrices, 1 morph weights, 2 world matrices), and
    /// its layout, when built with a rig.
    #[must_use]
    pub fn output_bind_group(&self) -> Option<(&wgpu::BindGroupLayout, &wgpu::BindGroup)> {
        self.skinner()
            .map(|s| (s.output_bind_group_layout(), s.output_bind_group()))
    }

    /// Reads the current frame's results back (blocking: it waits for the
    /// GPU). Call it after the encoder holding [`record`](Self::record) was
    /// submitted. For a readback every frame without the stall, see
    /// [`ReadbackRing`](crate::gpu::ReadbackRing).
    ///
    /// The local transforms are the pose pass's where it stores them (the
    /// staged strategy and the mixer); where the fused skin pass keeps them
    /// in registers they are computed here from the sampled values read
    /// back, by the CPU twin's `local_pose`.
    ///
    /// # Errors
    /// [`Error::DeviceLost`](crate::Error::DeviceLost) once the device is
    /// lost: never the last frame it computed.
    /// [`Error::Readback`](crate::Error::Readback) or
    /// [`Error::Gpu`](crate::Error::Gpu).
    pub fn read_back(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Poses> {
        self.sampler.health().check("Animator::read_back")?;
        let samples = self.sampler.read_back(device, queue)?;
        let Some(posing) = &self.skin else {
            return Ok(Poses::unposed(
                self.library(),
                self.instance_count(),
                samples,
            ));
        };
        let skinner = &posing.skinner;
        let mut locals = skinner.read_back_locals(device, queue)?;
        let tables = skinner.tables();
        if locals.is_empty() {
            for (i, inst) in self.sampler.resolved().iter().enumerate() {
                for n in 0..tables.node_count() {
                    locals.push(crate::cpu::pose::local_pose(
                        tables, &samples, i as u32, inst.clip, n,
                    ));
                }
            }
        }
        let matrices = |flat: Vec<f32>| -> Vec<glam::Mat4> {
            flat.chunks_exact(16)
                .map(glam::Mat4::from_cols_slice)
                .collect()
        };
        let flat = Flat {
            instance_count: self.instance_count(),
            samples,
            locals,
            world: matrices(skinner.read_back_globals(device, queue)?),
            joints: matrices(skinner.read_back_joints(device, queue)?),
            morph_weights: skinner.read_back_morph_weights(device, queue)?,
            properties: if self.mixer.is_some() {
                Some(skinner.read_back_properties(device, queue)?)
            } else {
                None
            },
        };
        Ok(crate::tables::poses::poses(
            posing.bound.rig(),
            tables,
            self.library(),
            flat,
        ))
    }

    /// The sampled values (`array<f32>`): row `i`'s block of
    /// [`output_stride`](AnimationLibrary::output_stride) floats at
    /// `i * output_stride`, laid out as described on [`AnimationLibrary`]
    /// (a row per instance; with a mixer, two per action slot). Bind it
    /// read-only in your own pipeline with
    /// [`output_layout_entry`](super::output_layout_entry).
    #[must_use]
    pub fn sample_buffer(&self) -> &wgpu::Buffer {
        self.sampler.output_buffer()
    }

    /// Convenience for tools and tests: sets the instances, records and
    /// submits this frame, and reads the sampled values back (the rows'
    /// blocks, as [`sample_buffer`](Self::sample_buffer) holds them).
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
        self.sampler.read_back(device, queue)
    }

    /// The pose and skin passes, when built with a rig.
    #[doc(hidden)]
    #[must_use]
    pub(crate) fn skinner(&self) -> Option<&GpuSkinner> {
        self.skin.as_ref().map(|p| &p.skinner)
    }
}
