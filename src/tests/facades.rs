//! The sampler and the skin stage as the crate's own tests drive them, one
//! step at a time: a sampler of a sampling plan, and a skin stage of a
//! rig plan over a sampler (it takes the sampler's upload and its
//! instances, and samples them into its own output). Both are chunks of
//! the one executor (`AnimatorChunk`, `src/gpu/exec.rs`); these only give
//! the tests their calls.

use std::ops::Range;

use keyframe_gpu::error::{Error, FitError, Result};
use keyframe_gpu::gpu::AnimatorChunk;
use keyframe_gpu::layout::GpuLocalPose;
use keyframe_gpu::plan::declare::names;
use keyframe_gpu::plan::passes::{Module, RigModule};
use keyframe_gpu::plan::{Plan, SamplerPlan};
use keyframe_gpu::tables::rig::SkinTables;
use keyframe_gpu::{AnimationLibrary, Instance};

/// A sampler: the chunk of a sampling plan, with the instances it was
/// last given.
#[derive(Debug)]
pub(crate) struct GpuSampler {
    chunk: AnimatorChunk,
    instances: Vec<Instance>,
}

impl GpuSampler {
    /// The sampler of `plan` (a sampling plan).
    pub(crate) fn from_plan(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        plan: &Plan,
    ) -> Result<Self> {
        Ok(GpuSampler {
            chunk: AnimatorChunk::from_plan(device, queue, plan)?,
            instances: Vec::new(),
        })
    }

    /// The plan it runs.
    pub(crate) fn plan(&self) -> SamplerPlan {
        self.chunk.plan.sampler
    }

    /// The library it samples.
    pub(crate) fn library(&self) -> &AnimationLibrary {
        self.chunk.library()
    }

    /// The most instances it samples.
    pub(crate) fn capacity(&self) -> u32 {
        self.chunk.plan.capacity
    }

    /// Instances in the current table.
    pub(crate) fn instance_count(&self) -> u32 {
        self.chunk.instance_count()
    }

    /// The output buffer.
    pub(crate) fn output_buffer(&self) -> &wgpu::Buffer {
        self.chunk.sample_buffer()
    }

    /// Writes the instance table; on error nothing is written.
    pub(crate) fn set_instances(
        &mut self,
        queue: &wgpu::Queue,
        instances: &[Instance],
    ) -> Result<()> {
        self.chunk.health().check("GpuSampler::set_instances")?;
        self.chunk.write_instances(queue, instances)?;
        self.instances.clear();
        self.instances.extend_from_slice(instances);
        Ok(())
    }

    /// Records the dispatches into a pass of the caller's.
    pub(crate) fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.chunk.record_pass(pass);
    }

    /// Records the dispatches into `encoder`.
    pub(crate) fn record(&self, encoder: &mut wgpu::CommandEncoder) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("keyframe-gpu.sample"),
            timestamp_writes: None,
        });
        self.record_pass(&mut pass);
    }

    /// The current instances' sampled values.
    pub(crate) fn read_back(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Vec<f32>> {
        self.chunk.health().check("GpuSampler::read_back")?;
        self.chunk.read_samples(device, queue)
    }

    /// Sets the instances, records and submits, reads back.
    pub(crate) fn sample(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        instances: &[Instance],
    ) -> Result<Vec<f32>> {
        self.set_instances(queue, instances)?;
        let mut encoder = device.create_command_encoder(&Default::default());
        self.record(&mut encoder);
        queue.submit([encoder.finish()]);
        self.read_back(device, queue)
    }

    /// Each dispatch part's track group and its workgroups this frame.
    pub(crate) fn workgroups(&self) -> impl Iterator<Item = (u32, (u32, u32, u32))> + '_ {
        let plan = &self.chunk.plan;
        let groups = plan
            .dispatches
            .iter()
            .flat_map(|d| d.parts.iter().map(move |_| d.group.unwrap_or(0)));
        groups
            .enumerate()
            .map(|(k, g)| (g, self.chunk.frame().grid(k)))
    }

    /// Each part's group and its run keys `(group, mode, bits)`.
    pub(crate) fn run_keys(&self) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        let t = &self.chunk.plan.sample_tables;
        self.parts().filter_map(move |g| {
            let k = t
                .run_keys
                .get(t.dispatches.iter().position(|&(x, _)| x == g)?)?;
            Some((g, k.mode as u32, k.bits))
        })
    }

    /// Each part's group with regular segments `(group, segment, search)`.
    pub(crate) fn regular_segments(&self) -> impl Iterator<Item = (u32, u32, bool)> + '_ {
        let t = &self.chunk.plan.sample_tables;
        self.parts().filter_map(move |g| {
            let r = t
                .regular
                .get(t.dispatches.iter().position(|&(x, _)| x == g)?)
                .filter(|r| r.0 > 0)?;
            Some((g, r.0, r.1))
        })
    }

    /// The runs of LINEAR rotation rows stored key by key.
    pub(crate) fn interleaved_runs(&self) -> usize {
        self.chunk.plan.sample_tables.interleaved.len()
    }

    /// Each part's track group.
    fn parts(&self) -> impl Iterator<Item = u32> + '_ {
        self.chunk
            .plan
            .dispatches
            .iter()
            .flat_map(|d| d.parts.iter().map(move |_| d.group.unwrap_or(0)))
    }
}

/// A skin stage: the chunk of a rig plan over a sampler's library and
/// sampler plan, sharing its upload; given the sampler's instances by
/// [`prepare`](Self::prepare).
#[derive(Debug)]
pub(crate) struct GpuSkinner {
    chunk: AnimatorChunk,
}

impl GpuSkinner {
    /// The skin stage of `plan` over `sampler` (a mixer's tables are not
    /// taken here: `mix` must be `None`).
    pub(crate) fn from_plan(
        device: &wgpu::Device,
        sampler: &GpuSampler,
        plan: &Plan,
        mix: Option<(u32, u32, &[f32])>,
    ) -> Result<Self> {
        if mix.is_some() || plan.skin_tables.is_none() {
            return Err(Error::Gpu {
                during: "GpuSkinner::new",
                message: "a rig plan without a mixer".into(),
            });
        }
        Ok(GpuSkinner {
            chunk: AnimatorChunk::sharing(device, plan, &sampler.chunk)?,
        })
    }

    /// The rig's tables.
    pub(crate) fn tables(&self) -> &SkinTables {
        self.chunk.plan.skin_tables.as_ref().expect("a rig plan")
    }

    /// Instances in the current table.
    pub(crate) fn instance_count(&self) -> u32 {
        self.chunk.instance_count()
    }

    /// Takes `sampler`'s current instances.
    ///
    /// # Errors
    /// [`FitError::OtherSampler`] for a sampler it was not built over.
    pub(crate) fn prepare(&mut self, queue: &wgpu::Queue, sampler: &GpuSampler) -> Result<()> {
        if sampler.chunk.upload_id() != self.chunk.upload_id() {
            return Err(FitError::OtherSampler.into());
        }
        self.chunk.health().check("GpuSkinner::prepare")?;
        self.chunk.write_instances(queue, &sampler.instances)
    }

    /// Records every dispatch (its own sampling, then the rig's).
    pub(crate) fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.chunk.record_pass(pass);
    }

    /// [`record_pass`](Self::record_pass) into a pass of its own.
    pub(crate) fn record(&self, encoder: &mut wgpu::CommandEncoder) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("keyframe-gpu.skin"),
            timestamp_writes: None,
        });
        self.record_pass(&mut pass);
    }

    /// The parts from the first through the last of the pose module's
    /// dispatches (its sampling and the pose stage).
    pub(crate) fn record_pose_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        let end = self.parts_of(|m| m == Module::Rig(RigModule::Pose)).end;
        self.chunk.record_range(pass, 0..end);
    }

    /// The skin module's dispatches alone.
    pub(crate) fn record_hierarchy_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        let range = self.parts_of(|m| m == Module::Rig(RigModule::Skin));
        self.chunk.record_range(pass, range);
    }

    /// The parts of the dispatches whose module passes `keep`, from the
    /// first to the last.
    fn parts_of(&self, keep: impl Fn(Module) -> bool) -> Range<usize> {
        let mut at = 0;
        let mut range: Option<Range<usize>> = None;
        for d in &self.chunk.plan.dispatches {
            let next = at + d.parts.len();
            if keep(d.module) {
                range = Some(range.map_or(at..next, |r| r.start..next));
            }
            at = next;
        }
        range.unwrap_or(0..0)
    }

    /// The local poses (staged only).
    pub(crate) fn locals_buffer(&self) -> Option<&wgpu::Buffer> {
        self.chunk.buffer(names::LOCALS)
    }

    fn read(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        name: &str,
        per: u64,
    ) -> Result<Vec<f32>> {
        let bytes = u64::from(self.instance_count()) * per;
        self.chunk.read(device, queue, name, bytes)
    }

    /// The current instances' local poses (empty unless staged).
    pub(crate) fn read_back_locals(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
    ) -> Result<Vec<GpuLocalPose>> {
        let per =
            u64::from(self.tables().node_count()) * std::mem::size_of::<GpuLocalPose>() as u64;
        Ok(bytemuck::pod_collect_to_vec(&self.read(
            device,
            queue,
            names::LOCALS,
            per,
        )?))
    }

    /// The current instances' global matrices.
    pub(crate) fn read_back_globals(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
    ) -> Result<Vec<f32>> {
        let per = u64::from(self.tables().node_count()) * 64;
        self.read(device, queue, names::GLOBALS, per)
    }

    /// The current instances' joint matrices.
    pub(crate) fn read_back_joints(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
    ) -> Result<Vec<f32>> {
        let per = u64::from(self.tables().joint_count()) * 64;
        self.read(device, queue, names::JOINT_MATRICES, per)
    }

    /// The current instances' morph weights.
    pub(crate) fn read_back_morph_weights(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
    ) -> Result<Vec<f32>> {
        let per = u64::from(self.tables().morph_stride()) * 4;
        self.read(device, queue, names::MORPH_WEIGHTS, per)
    }

    /// Every current instance's joint matrices, split per skin.
    pub(crate) fn read_back_skin_joints(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
    ) -> Result<Vec<Vec<super::twins::SkinJoints>>> {
        use super::twins::TestSkinTables;
        let flat = self.read_back_joints(device, queue)?;
        let mats: Vec<[f32; 16]> = flat
            .chunks_exact(16)
            .map(|c| {
                let mut m = [0.0; 16];
                m.copy_from_slice(c);
                m
            })
            .collect();
        let per = self.tables().joint_count() as usize;
        Ok((0..self.instance_count() as usize)
            .map(|i| {
                let block = mats.get(i * per..(i + 1) * per).unwrap_or(&[]);
                self.tables().split_joints(block)
            })
            .collect())
    }
}
