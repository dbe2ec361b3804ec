//! [`Animator`]: the one object a renderer holds. It owns the sampler and,
//! for a rigged model, the pose and skin passes, takes the per-frame
//! instance table once, records every pass into the caller's encoder, and
//! hands out the buffers a renderer binds. The lower-level pieces
//! ([`GpuSampler`], [`GpuSkinner`]) stay available through it.

use super::skin::GpuSkinner;
use super::GpuSampler;
use crate::error::Result;
use crate::instance::Instance;
use crate::layout::GpuLocalPose;
use crate::library::AnimationLibrary;
use crate::mix::{check_desc, mask_table, Action, MixError, MixerDesc, Packer};
use crate::rig::{Rig, SkinTables};

/// Animates many instances of a model on the GPU: sampling, then (with a
/// rig) local pose, hierarchy, joint matrices and morph weights, with no
/// readback in between.
///
/// Once: [`Animator::new`] (sampling only) or [`Animator::with_rig`].
/// Per frame: [`set_instances`](Self::set_instances) (clip and time of each
/// instance; one small buffer write), [`record`](Self::record) into your
/// encoder, then bind [`joint_matrix_buffer`](Self::joint_matrix_buffer)
/// (or [`output_bind_group`](Self::output_bind_group)) in your skinning
/// pipeline. Reading results back is optional:
/// [`read_back`](Self::read_back).
///
/// ```no_run
/// # fn f(device: &wgpu::Device, queue: &wgpu::Queue,
/// #      library: &keyframe_gpu::AnimationLibrary, rig: &keyframe_gpu::Rig)
/// #      -> Result<(), keyframe_gpu::Error> {
/// use keyframe_gpu::{Animator, Instance};
/// let mut animator = Animator::with_rig(device, queue, library, rig, 1_000)?;
/// let walk = library.clip_by_name("walk").unwrap_or(0);
/// let instances: Vec<Instance> = (0..1_000).map(|i| Instance::new(walk, i as f64 * 0.1)).collect();
/// animator.set_instances(queue, &instances)?;
/// let mut encoder = device.create_command_encoder(&Default::default());
/// animator.record(&mut encoder);
/// queue.submit([encoder.finish()]);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Animator {
    sampler: GpuSampler,
    skin: Option<(Rig, GpuSkinner)>,
    mixer: Option<Mixer>,
}

/// The host side of an animator's mixer: its capacity, its masks' count
/// and the packer it reuses every frame.
#[derive(Debug)]
struct Mixer {
    characters: u32,
    per_character: u32,
    mask_count: usize,
    packer: Packer,
}

impl Animator {
    /// An animator that samples `library` for up to `max_instances`
    /// instances (no rig: the sampled values are the output).
    ///
    /// # Errors
    /// Those of [`GpuSampler::new`].
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        library: &AnimationLibrary,
        max_instances: u32,
    ) -> Result<Self> {
        Ok(Animator {
            sampler: GpuSampler::new(device, queue, library, max_instances)?,
            skin: None,
            mixer: None,
        })
    }

    /// An animator that samples `library` and poses `rig` with it: local
    /// pose, global transforms, joint matrices of every skin and morph
    /// weights of every mesh, for up to `max_instances` instances.
    ///
    /// # Errors
    /// Those of [`GpuSampler::new`], [`SkinTables::new`] (a track of the
    /// library that does not fit the rig) and [`GpuSkinner::new`].
    pub fn with_rig(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        library: &AnimationLibrary,
        rig: &Rig,
        max_instances: u32,
    ) -> Result<Self> {
        let sampler = GpuSampler::new(device, queue, library, max_instances)?;
        let tables = SkinTables::new(rig, library)?;
        let skinner = GpuSkinner::new(device, &sampler, &tables)?;
        Ok(Animator {
            sampler,
            skin: Some((rig.clone(), skinner)),
            mixer: None,
        })
    }

    /// An animator whose characters each blend several actions (a
    /// crossfade, a masked layer, additive clips) into one pose of `rig`,
    /// by the rules of three.js's `AnimationMixer` with masks (the README,
    /// "Blending"): every action is sampled, the mix pass blends them per
    /// node into the local poses, and the hierarchy and joint stages read
    /// the blended pose. Up to `desc.characters` characters of up to
    /// `desc.actions_per_character` actions; `desc.masks` are uploaded
    /// once. Per frame: [`set_actions`](Self::set_actions), then
    /// [`record`](Self::record). Outputs are indexed by character.
    ///
    /// The sampler holds two rows per action slot (the action's time and,
    /// for an additive action, its reference time); its output buffer is
    /// sized for that.
    ///
    /// # Errors
    /// [`MixError::ActionCapacity`] (0 or more than
    /// [`MAX_ACTIONS`](crate::MAX_ACTIONS) actions per character),
    /// [`MixError::MaskLength`] (a mask built for another rig),
    /// [`Error::LimitExceeded`](crate::Error::LimitExceeded) when the rows
    /// do not fit a `u32`, and those of [`with_rig`](Self::with_rig).
    pub fn with_mixer(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        library: &AnimationLibrary,
        rig: &Rig,
        desc: &MixerDesc,
    ) -> Result<Self> {
        check_desc(rig, desc)?;
        let rows = u64::from(desc.characters) * u64::from(desc.actions_per_character) * 2;
        let rows = u32::try_from(rows).map_err(|_| crate::Error::LimitExceeded {
            what: "mixer rows (characters x actions x 2)",
            needed: rows,
            limit_name: "u32 indexing",
            limit: u64::from(u32::MAX),
        })?;
        let sampler = GpuSampler::new(device, queue, library, rows)?;
        let tables = SkinTables::new(rig, library)?;
        let skinner = GpuSkinner::with_mixer(
            device,
            &sampler,
            &tables,
            desc.characters,
            desc.actions_per_character,
            &mask_table(&desc.masks),
        )?;
        Ok(Animator {
            sampler,
            skin: Some((rig.clone(), skinner)),
            mixer: Some(Mixer {
                characters: desc.characters,
                per_character: desc.actions_per_character,
                mask_count: desc.masks.len(),
                packer: Packer::new(desc.characters, desc.actions_per_character),
            }),
        })
    }

    /// Writes this frame's actions: `counts[c]` consecutive actions of
    /// `actions`, in list order, are character `c`'s (a flat table, no
    /// allocation per character). Every action is checked first: on error
    /// nothing is written and the previous frame's actions stay in effect.
    ///
    /// ```no_run
    /// # fn f(device: &wgpu::Device, queue: &wgpu::Queue,
    /// #      library: &keyframe_gpu::AnimationLibrary, rig: &keyframe_gpu::Rig)
    /// #      -> Result<(), keyframe_gpu::Error> {
    /// use keyframe_gpu::{Action, Animator, MixerDesc, WrapMode};
    /// let desc = MixerDesc { characters: 100, actions_per_character: 2, masks: vec![] };
    /// let mut animator = Animator::with_mixer(device, queue, library, rig, &desc)?;
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
    /// [`MixError::CountMismatch`].
    pub fn set_actions(
        &mut self,
        queue: &wgpu::Queue,
        actions: &[Action],
        counts: &[u32],
    ) -> Result<()> {
        let (Some(mixer), Some((_, skinner))) = (&mut self.mixer, &mut self.skin) else {
            return Err(MixError::NoMixer.into());
        };
        mixer.packer.pack(
            self.sampler.library(),
            mixer.mask_count,
            mixer.characters,
            mixer.per_character,
            actions,
            counts,
        )?;
        // Checked: every clip is in range, every time finite, and the rows
        // fit (two per action slot).
        self.sampler.set_instances(queue, &mixer.packer.rows)?;
        skinner.write_mix(queue, &mixer.packer.actions, &mixer.packer.characters);
        Ok(())
    }

    /// Characters (with a mixer) or instances in the current frame.
    #[must_use]
    pub fn instance_count(&self) -> u32 {
        match &self.skin {
            Some((_, skinner)) => skinner.instance_count(),
            None => self.sampler.instance_count(),
        }
    }

    /// Writes this frame's instance table: every pass reads it, so the
    /// instances are given once.
    ///
    /// # Errors
    /// Those of [`GpuSampler::set_instances`] (too many instances, a clip
    /// out of range, a non-finite time); on error nothing is written and the
    /// previous frame's table stays in effect.
    ///
    /// With a mixer, each instance is a character playing one action of
    /// weight 1 (the unblended pose, bit for bit).
    pub fn set_instances(&mut self, queue: &wgpu::Queue, instances: &[Instance]) -> Result<()> {
        if let (Some(mixer), Some((_, skinner))) = (&mut self.mixer, &mut self.skin) {
            if instances.len() > mixer.characters as usize {
                return Err(MixError::TooManyCharacters {
                    count: instances.len(),
                    capacity: mixer.characters,
                }
                .into());
            }
            self.sampler.set_instances(queue, instances)?;
            mixer.packer.pack_instances(instances);
            skinner.write_mix(queue, &mixer.packer.actions, &mixer.packer.characters);
            return Ok(());
        }
        self.sampler.set_instances(queue, instances)?;
        if let Some((_, skinner)) = &mut self.skin {
            skinner.prepare(queue, &self.sampler)?;
        }
        Ok(())
    }

    /// Records every pass (sampling, then pose and skin) into `encoder`, in
    /// one compute pass labelled `keyframe-gpu.animate`.
    pub fn record(&self, encoder: &mut wgpu::CommandEncoder) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("keyframe-gpu.animate"),
            timestamp_writes: None,
        });
        self.record_pass(&mut pass);
    }

    /// Records every pass into a compute pass the caller owns (wgpu orders
    /// the dispatches' reads after the writes they depend on).
    pub fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.sampler.record_pass(pass);
        if let Some((_, skinner)) = &self.skin {
            skinner.record_pass(pass);
        }
    }

    /// The sampler: its output buffer holds every instance's sampled track
    /// values (layout on [`AnimationLibrary`]).
    #[must_use]
    pub fn sampler(&self) -> &GpuSampler {
        &self.sampler
    }

    /// The pose and skin passes, when built with a rig.
    #[must_use]
    pub fn skinner(&self) -> Option<&GpuSkinner> {
        self.skin.as_ref().map(|(_, s)| s)
    }

    /// The rig, when built with one.
    #[must_use]
    pub fn rig(&self) -> Option<&Rig> {
        self.skin.as_ref().map(|(r, _)| r)
    }

    /// The library being sampled.
    #[must_use]
    pub fn library(&self) -> &AnimationLibrary {
        self.sampler.library()
    }

    /// Joint matrices (`array<mat4x4<f32>>`, instance `i`'s skin `s` joint
    /// `j` at `i * joint_count + skin_offsets[s] + j`), when built with a
    /// rig.
    #[must_use]
    pub fn joint_matrix_buffer(&self) -> Option<&wgpu::Buffer> {
        self.skinner().map(GpuSkinner::joint_matrix_buffer)
    }

    /// Global node matrices (`array<mat4x4<f32>>`, `i * node_count +
    /// node`), when built with a rig.
    #[must_use]
    pub fn global_buffer(&self) -> Option<&wgpu::Buffer> {
        self.skinner().map(GpuSkinner::global_buffer)
    }

    /// With a mixer: each character's blended pointer properties
    /// (`KHR_animation_pointer` targets, `array<f32>`): character `c`'s
    /// target `k` (in [`AnimationLibrary::pointer_targets`] order) at `c *
    /// property_stride + pointer_targets[k][3]` of the rig's
    /// [`SkinTables`]. Without a mixer each instance's values are in the
    /// sampler's output at the target's slot.
    #[must_use]
    pub fn property_buffer(&self) -> Option<&wgpu::Buffer> {
        self.skinner().and_then(GpuSkinner::property_buffer)
    }

    /// Morph weights (`array<f32>`), when built with a rig.
    #[must_use]
    pub fn morph_weight_buffer(&self) -> Option<&wgpu::Buffer> {
        self.skinner().map(GpuSkinner::morph_weight_buffer)
    }

    /// A read-only bind group of the skinning outputs for a renderer
    /// (binding 0 joint matrices, 1 morph weights, 2 globals), and its
    /// layout, when built with a rig.
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
    /// # Errors
    /// [`Error::Readback`](crate::Error::Readback) or
    /// [`Error::Gpu`](crate::Error::Gpu).
    pub fn read_back(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Poses> {
        let samples = self.sampler.read_back(device, queue)?;
        let (joints, globals, morph_weights, locals, properties, tables) = match &self.skin {
            Some((_, skinner)) => (
                skinner.read_back_joints(device, queue)?,
                skinner.read_back_globals(device, queue)?,
                skinner.read_back_morph_weights(device, queue)?,
                skinner.read_back_locals(device, queue)?,
                skinner.read_back_properties(device, queue)?,
                Some(skinner.tables().clone()),
            ),
            None => (
                Vec::new(),
                Vec::new(),
                Vec::new(),
                Vec::new(),
                Vec::new(),
                None,
            ),
        };
        Ok(Poses {
            instance_count: self.instance_count(),
            pointers: if self.mixer.is_some() {
                self.sampler
                    .library()
                    .pointer_targets()
                    .iter()
                    .map(|p| p.pointer.clone())
                    .collect()
            } else {
                Vec::new()
            },
            locals,
            properties,
            output_stride: self.sampler.library().output_stride(),
            samples,
            joints,
            globals,
            morph_weights,
            tables,
        })
    }
}

/// One frame's results read back by [`Animator::read_back`], indexed by
/// instance, node, skin and mesh instead of by offset arithmetic.
#[derive(Debug, Clone)]
pub struct Poses {
    instance_count: u32,
    pointers: Vec<String>,
    locals: Vec<GpuLocalPose>,
    properties: Vec<f32>,
    output_stride: u32,
    samples: Vec<f32>,
    joints: Vec<f32>,
    globals: Vec<f32>,
    morph_weights: Vec<f32>,
    tables: Option<SkinTables>,
}

/// The 16 floats at matrix index `m` of `flat`.
fn matrix(flat: &[f32], m: usize) -> Option<[f32; 16]> {
    let s = flat.get(m.checked_mul(16)?..m.checked_mul(16)?.checked_add(16)?)?;
    let mut out = [0.0; 16];
    out.copy_from_slice(s);
    Some(out)
}

impl Poses {
    /// Instances in the frame.
    #[must_use]
    pub fn instance_count(&self) -> u32 {
        self.instance_count
    }

    /// Instance `i`'s local pose of `node` (translation, unit rotation,
    /// scale: with a mixer, the blended pose); `None` without a rig, out
    /// of range, or when the skin strategy keeps the locals in registers
    /// (only [`SkinStrategy::Staged`](crate::SkinStrategy::Staged) and the
    /// mixer store them).
    #[must_use]
    pub fn local(&self, i: u32, node: u32) -> Option<GpuLocalPose> {
        let t = self.tables.as_ref()?;
        if i >= self.instance_count || node >= t.node_count() {
            return None;
        }
        self.locals
            .get(i as usize * t.node_count() as usize + node as usize)
            .copied()
    }

    /// With a mixer: character `c`'s blended value of the pointer target
    /// `pointer` (e.g. `/materials/0/pbrMetallicRoughness/baseColorFactor`);
    /// `None` without a mixer, out of range, or for a pointer no clip
    /// animates.
    #[must_use]
    pub fn property(&self, c: u32, pointer: &str) -> Option<&[f32]> {
        let t = self.tables.as_ref()?;
        if c >= self.instance_count {
            return None;
        }
        let k = self.pointer_index(pointer)?;
        let [_, width, _, at] = *t.pointer_targets().get(k)?;
        let start = c as usize * t.property_stride() as usize + at as usize;
        self.properties.get(start..start + width as usize)
    }

    fn pointer_index(&self, pointer: &str) -> Option<usize> {
        self.pointers.iter().position(|p| p == pointer)
    }

    /// Row `i`'s block of sampled values (`output_stride` floats, layout
    /// on [`AnimationLibrary`]: instance `i`, or with a mixer the `i`-th
    /// action in the frame's flat order), `None` past the last row.
    #[must_use]
    pub fn samples(&self, i: u32) -> Option<&[f32]> {
        let stride = self.output_stride as usize;
        self.samples
            .get(i as usize * stride..(i as usize + 1) * stride)
    }

    /// Instance `i`'s joint matrices of skin `skin` (column-major, in the
    /// skin's joint order); `None` without a rig or out of range.
    #[must_use]
    pub fn skin_joints(&self, i: u32, skin: u32) -> Option<Vec<[f32; 16]>> {
        let t = self.tables.as_ref()?;
        if i >= self.instance_count {
            return None;
        }
        let offsets = t.skin_offsets();
        let first = *offsets.get(skin as usize)?;
        let end = offsets
            .get(skin as usize + 1)
            .copied()
            .unwrap_or(t.joint_count());
        let base = i as usize * t.joint_count() as usize;
        (first..end)
            .map(|j| matrix(&self.joints, base + j as usize))
            .collect()
    }

    /// Instance `i`'s global transform of `node` (column-major: the node's
    /// model matrix, for attaching an object to a bone); `None` without a
    /// rig or out of range.
    #[must_use]
    pub fn global(&self, i: u32, node: u32) -> Option<[f32; 16]> {
        let t = self.tables.as_ref()?;
        if i >= self.instance_count || node >= t.node_count() {
            return None;
        }
        matrix(
            &self.globals,
            i as usize * t.node_count() as usize + node as usize,
        )
    }

    /// Instance `i`'s morph weights of mesh `mesh`; `None` without a rig or
    /// out of range (empty for a mesh without morph targets).
    #[must_use]
    pub fn morph_weights(&self, i: u32, mesh: u32) -> Option<&[f32]> {
        let t = self.tables.as_ref()?;
        if i >= self.instance_count {
            return None;
        }
        let m = t.meshes().get(mesh as usize)?;
        let at = i as usize * t.morph_stride() as usize + m.weights_offset as usize;
        self.morph_weights.get(at..at + m.target_count as usize)
    }
}
