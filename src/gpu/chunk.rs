//! [`AnimatorChunk`]: one chunk of an [`Animator`](super::Animator): the
//! sampler and, for a bound library, the pose and skin passes of up to its
//! capacity of instances, with buffers of its own. An animator (and each
//! model of a [`Crowd`](super::Crowd)) is one chunk, or several when its
//! capacity would pass the device's limits in one
//! ([`plan::chunk_capacity`](crate::plan::chunk_capacity)).

use super::skin::GpuSkinner;
use super::{check_device, GpuSampler};
use crate::error::{Error, MixError, Result};
use crate::model::instance::Instance;
use crate::model::mix::{check_desc, Action, MixerDesc};
use crate::model::{BoundLibrary, Poses};
use crate::plan::SkinStrategy;
use crate::plan::{check_plan, ChunkModel, DeviceProfile, Plan, PlanChoices, SamplerPlan};
use crate::tables::mix::{mask_table, Packer};
use crate::tables::poses::Flat;

/// One chunk of an [`Animator`](super::Animator) (and so of a
/// [`Crowd`](super::Crowd)'s model): its buffers hold the instances (or
/// characters) `k * capacity ..` of the last frame set, chunk `k`'s
/// instance `i` at `i` in each buffer. The buffers a renderer binds are
/// a chunk's: draw an animator chunk by chunk
/// ([`Animator::chunks`](super::Animator::chunks); one chunk, `chunks()[0]`,
/// unless its capacity passes the device's limits).
pub struct AnimatorChunk {
    pub(crate) sampler: GpuSampler,
    skin: Option<Posing>,
    mixer: Option<Mixer>,
    pub(crate) plan: Plan,
}

impl std::fmt::Debug for AnimatorChunk {
    /// Its shape, not its tables.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnimatorChunk")
            .field("capacity", &self.plan.capacity)
            .field("instances", &self.instance_count())
            .field("mixer", &self.mixer.is_some())
            .finish()
    }
}

/// The pose and skin passes of a bound library, with what they were built
/// from.
#[derive(Debug)]
struct Posing {
    bound: BoundLibrary,
    skinner: GpuSkinner,
}

/// The host side of a chunk's mixer: its capacity, its masks' count and
/// the packer it reuses every frame.
#[derive(Debug)]
struct Mixer {
    characters: u32,
    mask_count: usize,
    packer: Packer,
}

impl AnimatorChunk {
    /// The chunk of `plan`, which must fit the device: its buffers and
    /// dispatches are checked against the device's limits first
    /// (`plan::check_plan`), then it is built with an upload of its
    /// own.
    pub(crate) fn from_plan(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        plan: &Plan,
    ) -> Result<Self> {
        check_device(device)?;
        check_plan(plan, &DeviceProfile::of(device).limits)?;
        let sampler = GpuSampler::from_plan(device, queue, &plan.library, plan)?;
        Self::over(device, sampler, plan)
    }

    /// A chunk of `model` for `capacity` instances (characters with a
    /// mixer) planned for `profile` with the sampler plan `sampler`,
    /// sharing `share`'s upload of the library where that is the same
    /// library under the same sampler plan, else uploading it with
    /// `queue`.
    pub(crate) fn build(
        device: &wgpu::Device,
        queue: Option<&wgpu::Queue>,
        model: ChunkModel<'_>,
        capacity: u32,
        profile: &DeviceProfile,
        sampler: SamplerPlan,
        share: Option<&AnimatorChunk>,
    ) -> Result<Self> {
        check_device(device)?;
        let plan = Self::plan_of(model, capacity, profile, sampler)?;
        check_plan(&plan, &DeviceProfile::of(device).limits)?;
        let library = &plan.library;
        let sampler = match (share.filter(|s| s.sampler.can_share(library, &plan)), queue) {
            (Some(s), _) => s.sampler.sharing(device, &plan)?,
            (None, Some(queue)) => GpuSampler::from_plan(device, queue, library, &plan)?,
            (None, None) => {
                return Err(Error::Gpu {
                    during: "Animator (a chunk sharing another's upload)",
                    message: "the upload cannot be shared (another library or sampler plan)".into(),
                })
            }
        };
        Self::over(device, sampler, &plan)
    }

    /// The plan of a chunk of `model` for `capacity` instances (characters
    /// with a mixer: the mixer's `characters` is replaced by `capacity`).
    pub(crate) fn plan_of(
        model: ChunkModel<'_>,
        capacity: u32,
        profile: &DeviceProfile,
        sampler: SamplerPlan,
    ) -> Result<Plan> {
        match model {
            ChunkModel::Bound(bound) => {
                let choices = PlanChoices {
                    sampler,
                    skin: SkinStrategy::Auto,
                };
                Plan::with_choices(bound, capacity, profile, choices)
            }
            ChunkModel::Mixed(bound, desc) => {
                let desc = MixerDesc {
                    characters: capacity,
                    ..desc.clone()
                };
                Plan::for_mixer(bound, &desc, profile, sampler)
            }
            ChunkModel::Sampled(library) => Plan::sampling(library, capacity, profile, sampler),
        }
    }

    /// The rig stage of `plan` (with its mixer, if any) over `sampler`.
    fn over(device: &wgpu::Device, sampler: GpuSampler, plan: &Plan) -> Result<Self> {
        let Some(bound) = &plan.bound else {
            return Ok(AnimatorChunk {
                sampler,
                skin: None,
                mixer: None,
                plan: plan.clone(),
            });
        };
        let Some(desc) = &plan.mixer else {
            let skinner = GpuSkinner::from_plan(device, &sampler, plan, None)?;
            return Ok(AnimatorChunk {
                sampler,
                skin: Some(Posing {
                    bound: bound.clone(),
                    skinner,
                }),
                mixer: None,
                plan: plan.clone(),
            });
        };
        check_desc(bound.rig(), desc)?;
        let masks = mask_table(&desc.masks);
        let mix = Some((
            desc.characters,
            desc.actions_per_character,
            masks.as_slice(),
        ));
        let skinner = GpuSkinner::from_plan(device, &sampler, plan, mix)?;
        Ok(AnimatorChunk {
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

    /// Whether the chunk has a mixer.
    pub(crate) fn has_mixer(&self) -> bool {
        self.mixer.is_some()
    }

    /// Checks and packs this chunk's actions; nothing reaches the device.
    pub(crate) fn pack_actions(&mut self, actions: &[Action], counts: &[u32]) -> Result<()> {
        let Some(mixer) = &mut self.mixer else {
            return Err(MixError::NoMixer.into());
        };
        mixer
            .packer
            .pack(self.sampler.library(), mixer.mask_count, actions, counts)?;
        Ok(())
    }

    /// Writes the actions [`pack_actions`](Self::pack_actions) packed.
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

    /// With a mixer: the tables a playback pass writes for this chunk (the
    /// sampler's rows, the mixer's action records and character ranges).
    pub(crate) fn playback_targets(&self) -> Option<[&wgpu::Buffer; 3]> {
        self.mixer.as_ref()?;
        let (actions, characters) = self.skinner()?.mix_tables()?;
        Some([self.sampler.instance_buffer(), actions, characters])
    }

    /// With a mixer: samples `rows` rows and blends `characters`
    /// characters of tables a playback pass writes; `false` for a sampler
    /// plan that sorts its rows on the host.
    pub(crate) fn drive(&mut self, queue: &wgpu::Queue, rows: u32, characters: u32) -> bool {
        let Some(posing) = &mut self.skin else {
            return false;
        };
        if self.mixer.is_none() || !self.sampler.drive_rows(queue, rows) {
            return false;
        }
        posing.skinner.drive_characters(queue, characters);
        true
    }

    /// Writes this chunk's instance table (with a mixer: one action of
    /// weight 1 per character); on error nothing is written.
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

    /// Instances (characters with a mixer) of the last frame set in this
    /// chunk.
    #[must_use]
    pub fn instance_count(&self) -> u32 {
        match &self.skin {
            Some(posing) => posing.skinner.instance_count(),
            None => self.sampler.instance_count(),
        }
    }

    /// Records the chunk's passes into a compute pass (nothing for a chunk
    /// without instances, or once the device is known lost).
    pub(crate) fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.sampler.record_pass(pass);
        if let Some(posing) = &self.skin {
            posing.skinner.record_pass(pass);
        }
    }

    /// Records the chunk's sampling dispatches alone.
    pub(crate) fn record_sampling(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.sampler.record_pass(pass);
    }

    /// Records the chunk's pose, mix and skin passes alone (after its
    /// sampling).
    pub(crate) fn record_posing(&self, pass: &mut wgpu::ComputePass<'_>) {
        if let Some(posing) = &self.skin {
            posing.skinner.record_pass(pass);
        }
    }

    /// The library bound to the rig, when built with one.
    pub(crate) fn bound(&self) -> Option<&BoundLibrary> {
        self.skin.as_ref().map(|p| &p.bound)
    }

    /// The pose and skin passes, when built with a rig.
    pub(crate) fn skinner(&self) -> Option<&GpuSkinner> {
        self.skin.as_ref().map(|p| &p.skinner)
    }

    /// The chunk's joint matrices (`array<mat4x4<f32>>`): its instance
    /// `i`'s block at `i * layout.joints()`, each skin's at its
    /// [`OutputLayout::skin_joints`](crate::OutputLayout::skin_joints) in
    /// it; when built with a rig.
    #[must_use]
    pub fn joint_matrix_buffer(&self) -> Option<&wgpu::Buffer> {
        self.skinner().map(GpuSkinner::joint_matrix_buffer)
    }

    /// The chunk's world matrices of every node (`array<mat4x4<f32>>`,
    /// instance `i`'s node `n` at `i * layout.nodes() + n`): what rigid
    /// parts draw with; when built with a rig.
    #[must_use]
    pub fn world_matrix_buffer(&self) -> Option<&wgpu::Buffer> {
        self.skinner().map(GpuSkinner::global_buffer)
    }

    /// The chunk's morph weights (`array<f32>`: instance `i`'s block at
    /// `i * layout.morph_weights()`, each mesh's at its
    /// [`OutputLayout::mesh_weights`](crate::OutputLayout::mesh_weights)
    /// in it); when built with a rig.
    #[must_use]
    pub fn morph_weight_buffer(&self) -> Option<&wgpu::Buffer> {
        self.skinner().map(GpuSkinner::morph_weight_buffer)
    }

    /// With a mixer: each character's blended pointer properties
    /// (`KHR_animation_pointer` targets, `array<f32>`; read them by name
    /// with [`Poses::property`]). Without a mixer each instance's values
    /// are in the sampled values at the target's slot
    /// ([`AnimationLibrary::pointer_targets`](crate::AnimationLibrary::pointer_targets)).
    #[must_use]
    pub fn property_buffer(&self) -> Option<&wgpu::Buffer> {
        self.skinner().and_then(GpuSkinner::property_buffer)
    }

    /// A read-only bind group of the chunk's skinning outputs (binding 0
    /// joint matrices, 1 morph weights, 2 world matrices) and its layout,
    /// when built with a rig.
    #[must_use]
    pub fn output_bind_group(&self) -> Option<(&wgpu::BindGroupLayout, &wgpu::BindGroup)> {
        self.skinner()
            .map(|s| (s.output_bind_group_layout(), s.output_bind_group()))
    }

    /// The chunk's sampled values (`array<f32>`): row `i`'s block of
    /// [`output_stride`](crate::AnimationLibrary::output_stride) floats at
    /// `i * output_stride`, laid out as described on
    /// [`AnimationLibrary`](crate::AnimationLibrary) (a row per instance;
    /// with a mixer, two per action slot). Bind it read-only in your own
    /// pipeline with [`output_layout_entry`](super::output_layout_entry).
    #[must_use]
    pub fn sample_buffer(&self) -> &wgpu::Buffer {
        self.sampler.output_buffer()
    }

    /// Reads the chunk's current frame back (blocking: it waits for the
    /// GPU), indexed by the chunk's instances, as
    /// [`Animator::read_back`](super::Animator::read_back) reads a whole
    /// animator's.
    ///
    /// # Errors
    /// As [`Animator::read_back`](super::Animator::read_back).
    pub fn read_back(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Poses> {
        self.sampler.health().check("Animator::read_back")?;
        let samples = self.sampler.read_back(device, queue)?;
        let Some(posing) = &self.skin else {
            return Ok(Poses::unposed(
                self.sampler.library(),
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
            self.sampler.library(),
            flat,
        ))
    }
}
