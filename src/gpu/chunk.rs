//! [`AnimatorChunk`]: one chunk of an [`Animator`](super::Animator): the
//! sampler and, for a bound library, the pose and skin passes of up to its
//! capacity of instances, with buffers of its own. An animator (and each
//! model of a [`Crowd`](super::Crowd)) is one chunk, or several when its
//! capacity would pass the device's limits in one
//! ([`plan::chunk_capacity`](crate::plan::chunk_capacity)).

use super::exec::Executor;
use super::{check_device, output_layout_entry, Health};
use crate::error::{Error, Result};
use crate::model::instance::Instance;
use crate::model::library::AnimationLibrary;
use crate::model::mix::{check_desc, Action};
use crate::model::{BoundLibrary, Poses};
use crate::plan::declare::names;
use crate::plan::frame::HostFrame;
use crate::plan::passes::Module;
use crate::plan::{check_plan, ChunkModel, DeviceProfile, Plan, SamplerPlan};
use crate::tables::poses::Flat;

/// One chunk of an [`Animator`](super::Animator) (and so of a
/// [`Crowd`](super::Crowd)'s model): its buffers hold the instances (or
/// characters) `k * capacity ..` of the last frame set, chunk `k`'s
/// instance `i` at `i` in each buffer. The buffers a renderer binds are
/// a chunk's: draw an animator chunk by chunk
/// ([`Animator::chunks`](super::Animator::chunks); one chunk, `chunks()[0]`,
/// unless its capacity passes the device's limits).
pub struct AnimatorChunk {
    pub(crate) plan: Plan,
    /// The plan's resources and dispatches on the device.
    exec: Executor,
    /// What the host writes each frame, and the grids.
    frame: HostFrame,
    /// The sampler's output.
    output: wgpu::Buffer,
    /// The renderer's read-only bind group of the rig's outputs.
    outputs: Option<(wgpu::BindGroupLayout, wgpu::BindGroup)>,
}

impl std::fmt::Debug for AnimatorChunk {
    /// Its shape, not its tables.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnimatorChunk")
            .field("capacity", &self.plan.capacity)
            .field("instances", &self.instance_count())
            .field("mixer", &self.plan.mixer.is_some())
            .finish()
    }
}

impl AnimatorChunk {
    /// The chunk of `plan`, which must fit the device: its resources and
    /// dispatches are checked against the device's limits first
    /// (`plan::check_plan`), then it is built with an upload of its
    /// own.
    pub(crate) fn from_plan(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        plan: &Plan,
    ) -> Result<Self> {
        Self::over(device, Some(queue), plan.clone(), None)
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
        let plan = model.plan(capacity, profile, sampler)?;
        Self::over(device, queue, plan, share)
    }

    /// The executor of `plan` (checked against the device first), sharing
    /// `share`'s upload where it can.
    fn over(
        device: &wgpu::Device,
        queue: Option<&wgpu::Queue>,
        plan: Plan,
        share: Option<&AnimatorChunk>,
    ) -> Result<Self> {
        check_device(device)?;
        check_plan(&plan, &DeviceProfile::of(device).limits)?;
        if let (Some(bound), Some(desc)) = (&plan.bound, &plan.mixer) {
            check_desc(bound.rig(), desc)?;
        }
        let exec = Executor::new(device, queue, &plan, share.map(|s| &s.exec))?;
        let outputs = Self::output_binding(device, &exec, &plan);
        let output = exec
            .buffer(&plan, names::OUTPUT)
            .cloned()
            .ok_or_else(|| Error::Gpu {
                during: "Animator::new",
                message: "the plan has no sampler output".into(),
            })?;
        Ok(AnimatorChunk {
            frame: HostFrame::new(&plan),
            exec,
            output,
            outputs,
            plan,
        })
    }

    /// The read-only layout of the rig's outputs for a renderer and its
    /// bind group: binding 0 joint matrices, 1 morph weights, 2 globals;
    /// `None` without a rig.
    fn output_binding(
        device: &wgpu::Device,
        exec: &Executor,
        plan: &Plan,
    ) -> Option<(wgpu::BindGroupLayout, wgpu::BindGroup)> {
        let joints = exec.buffer(plan, names::JOINT_MATRICES)?;
        let morph = exec.buffer(plan, names::MORPH_WEIGHTS)?;
        let globals = exec.buffer(plan, names::GLOBALS)?;
        let vis = wgpu::ShaderStages::VERTEX_FRAGMENT | wgpu::ShaderStages::COMPUTE;
        let entry = output_layout_entry;
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("keyframe-gpu.skin.outputs"),
            entries: &[entry(0, vis, 64), entry(1, vis, 4), entry(2, vis, 64)],
        });
        let entries = [joints, morph, globals].map(|b| b.as_entire_binding());
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("keyframe-gpu.skin.outputs"),
            layout: &layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: entries[0].clone(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: entries[1].clone(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: entries[2].clone(),
                },
            ],
        });
        Some((layout, group))
    }

    /// Whether the chunk has a mixer.
    pub(crate) fn has_mixer(&self) -> bool {
        self.plan.mixer.is_some()
    }

    /// Checks and packs this chunk's actions; nothing reaches the device.
    pub(crate) fn pack_actions(&mut self, actions: &[Action], counts: &[u32]) -> Result<()> {
        self.frame.pack_actions(&self.plan, actions, counts)
    }

    /// Writes the actions [`pack_actions`](Self::pack_actions) packed.
    pub(crate) fn write_packed(&mut self, queue: &wgpu::Queue) -> Result<()> {
        self.frame.take_actions(&self.plan)?;
        self.exec.write_frame(queue, &self.frame);
        Ok(())
    }

    /// With a mixer: the tables a playback pass writes for this chunk (the
    /// sampler's rows, the mixer's action records and character ranges).
    pub(crate) fn playback_targets(&self) -> Option<[&wgpu::Buffer; 3]> {
        self.plan.mixer.as_ref()?;
        let find = |name| self.exec.buffer(&self.plan, name);
        Some([
            find(names::INSTANCES)?,
            find(names::MIX_ACTIONS)?,
            find(names::MIX_CHARACTERS)?,
        ])
    }

    /// With a mixer: samples `rows` rows and blends `characters`
    /// characters of tables a playback pass writes (only the parameters
    /// are written); `false` (nothing written) without a mixer or for a
    /// sampler plan that sorts its rows on the host.
    pub(crate) fn drive(&mut self, queue: &wgpu::Queue, rows: u32, characters: u32) -> bool {
        if !self.frame.drive(&self.plan, rows, characters) {
            return false;
        }
        self.exec.write_frame(queue, &self.frame);
        true
    }

    /// Writes this chunk's instance table (with a mixer: one action of
    /// weight 1 per character); on error nothing is written.
    pub(crate) fn write_instances(
        &mut self,
        queue: &wgpu::Queue,
        instances: &[Instance],
    ) -> Result<()> {
        self.frame.set_instances(&self.plan, instances)?;
        self.exec.write_frame(queue, &self.frame);
        Ok(())
    }

    /// Instances (characters with a mixer) of the last frame set in this
    /// chunk.
    #[must_use]
    pub fn instance_count(&self) -> u32 {
        self.frame.characters()
    }

    /// Sampler rows of the last frame set (instances, or a mixer's rows).
    pub(crate) fn sample_rows(&self) -> u32 {
        self.frame.rows()
    }

    /// Records the chunk's passes into a compute pass (nothing for a chunk
    /// without instances, or once the device is known lost).
    pub(crate) fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.exec.record(pass, &self.frame);
    }

    /// The dispatch parts of the sampler (the first in recording order).
    fn sampling_parts(&self) -> usize {
        let sampling = self.plan.dispatches.iter();
        let sampling = sampling.take_while(|d| d.module == Module::Sample);
        sampling.map(|d| d.parts.len()).sum()
    }

    /// Records the chunk's sampling dispatches alone.
    pub(crate) fn record_sampling(&self, pass: &mut wgpu::ComputePass<'_>) {
        let parts = self.sampling_parts();
        self.exec.record_range(pass, &self.frame, 0..parts);
    }

    /// Records the chunk's pose, mix and skin passes alone (after its
    /// sampling).
    pub(crate) fn record_posing(&self, pass: &mut wgpu::ComputePass<'_>) {
        let parts = self.sampling_parts();
        self.exec.record_range(pass, &self.frame, parts..usize::MAX);
    }

    /// The library bound to the rig, when built with one.
    pub(crate) fn bound(&self) -> Option<&BoundLibrary> {
        self.plan.bound.as_ref()
    }

    /// The library sampled.
    pub(crate) fn library(&self) -> &AnimationLibrary {
        &self.plan.library
    }

    /// The device's health.
    pub(crate) fn health(&self) -> &Health {
        self.exec.health()
    }

    /// The identity of the chunk's upload of its library: equal for
    /// chunks that share one.
    pub(crate) fn upload_id(&self) -> usize {
        self.exec.upload_id()
    }

    /// The sampled values' bytes at full capacity.
    pub(crate) fn sample_capacity_bytes(&self) -> u64 {
        u64::from(self.plan.rows) * u64::from(self.library().output_stride()) * 4
    }

    /// The buffer of the rig's output `name`, when built with a rig.
    fn rig_buffer(&self, name: &str) -> Option<&wgpu::Buffer> {
        self.plan.skin_tables.as_ref()?;
        self.exec.buffer(&self.plan, name)
    }

    /// The chunk's joint matrices (`array<mat4x4<f32>>`): its instance
    /// `i`'s block at `i * layout.joints()`, each skin's at its
    /// [`OutputLayout::skin_joints`](crate::OutputLayout::skin_joints) in
    /// it; when built with a rig.
    #[must_use]
    pub fn joint_matrix_buffer(&self) -> Option<&wgpu::Buffer> {
        self.rig_buffer(names::JOINT_MATRICES)
    }

    /// The chunk's world matrices of every node (`array<mat4x4<f32>>`,
    /// instance `i`'s node `n` at `i * layout.nodes() + n`): what rigid
    /// parts draw with; when built with a rig.
    #[must_use]
    pub fn world_matrix_buffer(&self) -> Option<&wgpu::Buffer> {
        self.rig_buffer(names::GLOBALS)
    }

    /// The chunk's morph weights (`array<f32>`: instance `i`'s block at
    /// `i * layout.morph_weights()`, each mesh's at its
    /// [`OutputLayout::mesh_weights`](crate::OutputLayout::mesh_weights)
    /// in it); when built with a rig.
    #[must_use]
    pub fn morph_weight_buffer(&self) -> Option<&wgpu::Buffer> {
        self.rig_buffer(names::MORPH_WEIGHTS)
    }

    /// With a mixer: each character's blended pointer properties
    /// (`KHR_animation_pointer` targets, `array<f32>`; read them by name
    /// with [`Poses::property`]). Without a mixer each instance's values
    /// are in the sampled values at the target's slot
    /// ([`AnimationLibrary::pointer_targets`](crate::AnimationLibrary::pointer_targets)).
    #[must_use]
    pub fn property_buffer(&self) -> Option<&wgpu::Buffer> {
        self.rig_buffer(names::PROPERTIES)
    }

    /// A read-only bind group of the chunk's skinning outputs (binding 0
    /// joint matrices, 1 morph weights, 2 world matrices) and its layout,
    /// when built with a rig.
    #[must_use]
    pub fn output_bind_group(&self) -> Option<(&wgpu::BindGroupLayout, &wgpu::BindGroup)> {
        self.outputs.as_ref().map(|(l, g)| (l, g))
    }

    /// The chunk's sampled values (`array<f32>`): row `i`'s block of
    /// [`output_stride`](crate::AnimationLibrary::output_stride) floats at
    /// `i * output_stride`, laid out as described on
    /// [`AnimationLibrary`](crate::AnimationLibrary) (a row per instance;
    /// with a mixer, two per action slot). Bind it read-only in your own
    /// pipeline with [`output_layout_entry`](super::output_layout_entry).
    #[must_use]
    pub fn sample_buffer(&self) -> &wgpu::Buffer {
        &self.output
    }

    /// Reads the chunk's current frame back (blocking: it waits for the
    /// GPU), indexed by the chunk's instances, as
    /// [`Animator::read_back`](super::Animator::read_back) reads a whole
    /// animator's.
    ///
    /// # Errors
    /// As [`Animator::read_back`](super::Animator::read_back).
    pub fn read_back(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Poses> {
        self.health().check("Animator::read_back")?;
        let samples = self.read_samples(device, queue)?;
        let (Some(bound), Some(tables)) = (&self.plan.bound, &self.plan.skin_tables) else {
            return Ok(Poses::unposed(
                self.library(),
                self.instance_count(),
                samples,
            ));
        };
        let n = u64::from(self.instance_count());
        let read = |name: &str, per: u64| self.exec.read(device, queue, &self.plan, name, n * per);
        let pose = std::mem::size_of::<crate::layout::GpuLocalPose>() as u64;
        let mut locals: Vec<crate::layout::GpuLocalPose> = bytemuck::pod_collect_to_vec(&read(
            names::LOCALS,
            u64::from(tables.node_count()) * pose,
        )?);
        if locals.is_empty() {
            for (i, inst) in self.frame.resolved().iter().enumerate() {
                for node in 0..tables.node_count() {
                    locals.push(crate::cpu::pose::local_pose(
                        tables, &samples, i as u32, inst.clip, node,
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
            world: matrices(read(names::GLOBALS, u64::from(tables.node_count()) * 64)?),
            joints: matrices(read(
                names::JOINT_MATRICES,
                u64::from(tables.joint_count()) * 64,
            )?),
            morph_weights: read(names::MORPH_WEIGHTS, u64::from(tables.morph_stride()) * 4)?,
            properties: match self.plan.mixer {
                Some(_) => Some(read(
                    names::PROPERTIES,
                    u64::from(tables.property_stride()) * 4,
                )?),
                None => None,
            },
        };
        Ok(crate::tables::poses::poses(
            bound.rig(),
            tables,
            self.library(),
            flat,
        ))
    }

    /// Reads the sampled values of the current rows back (blocking):
    /// `rows * output_stride` floats.
    ///
    /// # Errors
    /// As [`read_back`](Self::read_back).
    pub(crate) fn read_samples(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
    ) -> Result<Vec<f32>> {
        let bytes = u64::from(self.sample_rows()) * u64::from(self.library().output_stride()) * 4;
        self.exec
            .read(device, queue, &self.plan, names::OUTPUT, bytes)
    }
}

/// What the crate's own tests drive directly.
#[cfg(test)]
impl AnimatorChunk {
    /// The chunk of `plan` sharing `share`'s upload (the same library
    /// under the same sampler plan).
    pub(crate) fn sharing(
        device: &wgpu::Device,
        plan: &Plan,
        share: &AnimatorChunk,
    ) -> Result<Self> {
        Self::over(device, None, plan.clone(), Some(share))
    }

    /// The host's half of the frame in effect.
    pub(crate) fn frame(&self) -> &HostFrame {
        &self.frame
    }

    /// Records the parts of `range` (in recording order).
    pub(crate) fn record_range(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        range: std::ops::Range<usize>,
    ) {
        self.exec.record_range(pass, &self.frame, range);
    }

    /// The buffer of the resource named `name`.
    pub(crate) fn buffer(&self, name: &str) -> Option<&wgpu::Buffer> {
        self.exec.buffer(&self.plan, name)
    }

    /// The first `bytes` of the resource named `name`, read back.
    pub(crate) fn read(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        name: &str,
        bytes: u64,
    ) -> Result<Vec<f32>> {
        self.exec.read(device, queue, &self.plan, name, bytes)
    }
}
