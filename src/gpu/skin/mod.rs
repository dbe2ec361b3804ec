//! [`GpuSkinner`]: the pose stage (local pose per node, morph weights per
//! mesh: `shaders/pose.wgsl`) and the hierarchy and joint-matrix stage
//! (`shaders/skin.wgsl`), recorded after
//! the sampler's dispatches into the caller's
//! encoder. They read the sampler's output buffer and instance table
//! directly (no readback, instances given once) and leave global
//! matrices, joint matrices (`array<mat4x4<f32>>`) and morph weights
//! (`array<f32>`) in storage buffers that a renderer binds in its own
//! pipeline ([`GpuSkinner::output_bind_group_layout`]), and, with
//! [`SkinStrategy::Staged`], the local poses
//! (`GpuSkinner::locals_buffer`).
//!
//! Pieces: `passes` (which kernel each strategy records, their pipelines
//! and bind groups), `buffers` (limits, table upload, resources by binding
//! number).

mod buffers;
mod passes;

use super::scoped;
use crate::error::FitError;
use crate::error::{Error, Result};
use crate::layout::GpuLocalPose;
use crate::layout::GpuMixAction;
use crate::layout::SKIN_WORKGROUP_SIZE;
use crate::plan::passes::{Pass, RigModule};
use crate::plan::SkinStrategy;
use crate::plan::{lanes_per_instance, Overrides, Plan, RigOverrides};
use crate::tables::rig::SkinTables;
use buffers::{check_limits, Buffers, MixSpec};

/// Computes local poses, morph weights, global transforms and joint
/// matrices on the GPU for many instances, from a [`GpuSampler`]'s output.
///
/// Tables ([`SkinTables`]: rest pose, track-to-node map, skins, inverse
/// binds) are uploaded once by [`from_plan`](Self::from_plan). Per frame:
/// the sampler's instances, [`prepare_unchecked`](Self::prepare_unchecked)
/// with that sampler, then the sampler's passes and
/// [`record_pass`](Self::record_pass) into the same pass. The passes read each instance's clip from the
/// sampler's instance table: instances are given once.
///
/// Output layouts are those of [`SkinTables`]; the passes are those of the
/// [`SkinStrategy`] (`SkinStrategy::passes`): the morph pass (one
/// invocation per instance and mesh), then either the pose and hierarchy
/// passes ([`SkinStrategy::Staged`]) or one fused pass.
///
/// The fused per-instance pass ([`SkinStrategy::PerInstance`],
/// `skin_main`) visits the nodes in index order, computes each node's
/// local matrix from the sampler's output in registers and its global
/// with one matrix product from its parent's when the table lists parents
/// first (O(nodes) per instance, one dispatch for any depth; a child
/// listed before its parent walks up to an ancestor already done) and
/// writes the globals. With at most
/// `MAX_FUSED_SKINS` skins it first
/// inverts each skin's mesh node's global (computed on its own from the
/// locals up to the root) and writes each joint matrix right after its
/// joint node's global, from the global still in registers
/// (`GpuNode::first_joint` and
/// `GpuJoint::next_joint` link a node
/// to its slots); with more skins a loop after the walk computes the joint
/// matrices from the globals it wrote. The node, joint, pose-channel and
/// inverse-bind tables are also uploaded as uniform copies of their first
/// `UNIFORM_HEAD` entries, which the fallback adapter reads much faster
/// than storage buffers; see `shaders/skin.wgsl`. The staged hierarchy
/// pass (`hierarchy_main`) walks the same way, reading each local from the
/// locals buffer instead of computing it.
///
/// That suits the CPU fallback adapters; on a large GPU with fewer
/// instances than lanes it leaves most of the chip idle (the walk is
/// serial per instance), so on GPUs `Auto` picks
/// [`SkinStrategy::PerNode`] (one workgroup per instance) for rigs of up
/// to `MAX_PARALLEL_NODES` nodes.
///
/// [`GpuSampler`]: crate::gpu::GpuSampler
#[derive(Debug)]
pub(crate) struct GpuSkinner {
    /// The device, to tell whether it is lost (the sampler's).
    health: super::Health,
    passes: Vec<passes::BuiltPass>,
    buffers: Buffers,
    /// The sampler's instance table, bound by the passes: identifies the
    /// sampler that [`prepare_unchecked`](Self::prepare_unchecked) must be
    /// given.
    sampler_instances: wgpu::Buffer,
    output_layout: wgpu::BindGroupLayout,
    output_bind_group: wgpu::BindGroup,
    tables: SkinTables,
    capacity: u32,
    instance_count: u32,
    /// Per pass (in `passes` order), its grid for the current instances.
    groups: Vec<(u32, u32)>,
    max_dim: u32,
}

impl GpuSkinner {
    /// The skin stage `plan` lists: its rig dispatches (the strategy's
    /// passes, or the mixer's with `mix`) with their overrides, and its
    /// wide accesses where the device has `SHADER_INT64`, on `sampler`.
    pub(crate) fn from_plan(
        device: &wgpu::Device,
        sampler: &crate::gpu::GpuSampler,
        plan: &Plan,
        mix: Option<(u32, u32, &[f32])>,
    ) -> Result<Self> {
        let (Some(tables), Some(strategy)) = (&plan.skin_tables, plan.skin) else {
            return Err(Error::Gpu {
                during: "GpuSkinner::new",
                message: "the plan has no rig".into(),
            });
        };
        let mix = mix.map(|(characters, per_character, masks)| {
            (
                characters,
                MixSpec {
                    per_character,
                    masks,
                },
            )
        });
        let passes = plan
            .dispatches
            .iter()
            .filter_map(|d| match (d.rig_pass, &d.overrides) {
                (Some(pass), Overrides::Rig(o)) => Some((pass, *o)),
                _ => None,
            })
            .collect();
        Self::build(
            device,
            sampler,
            tables,
            passes,
            plan.wide_accesses,
            strategy,
            mix,
        )
    }

    /// `passes` with their overrides (those of a resolved `strategy`, or
    /// with `mix` the mixer's, `MIXED_PASSES`: `mix_main`,
    /// `mix_morph_main`, `mix_props_main`, then the staged hierarchy pass,
    /// for up to `characters` characters, whose outputs are indexed by
    /// character: the sampler's rows are the actions), the skin module
    /// wide where `wide` and the device compiles it.
    fn build(
        device: &wgpu::Device,
        sampler: &crate::gpu::GpuSampler,
        tables: &SkinTables,
        passes: Vec<(Pass, RigOverrides)>,
        wide: bool,
        strategy: SkinStrategy,
        mix: Option<(u32, MixSpec<'_>)>,
    ) -> Result<Self> {
        // The sampler's device, and its probe.
        let health = sampler.health().clone();
        health.check("GpuSkinner::new")?;
        let lib = sampler.library();
        if lib.output_stride() != tables.output_stride()
            || lib.clips().len() != tables.clip_count() as usize
        {
            return Err(FitError::LibraryMismatch {
                tables_stride: tables.output_stride(),
                tables_clips: tables.clip_count() as usize,
                sampler_stride: lib.output_stride(),
                sampler_clips: lib.clips().len(),
            }
            .into());
        }
        let limits = device.limits();
        let (capacity, spec) = match mix {
            Some((characters, spec)) => (characters.max(1), Some(spec)),
            None => (sampler.capacity().max(1), None),
        };
        let staged = strategy == SkinStrategy::Staged || mix.is_some();
        // The plan's choice, where the device can compile it.
        let wide = wide && device.features().contains(wgpu::Features::SHADER_INT64);
        let pass_list: Vec<Pass> = passes.iter().map(|p| p.0).collect();
        check_limits(&limits, tables, capacity, &pass_list, staged, spec)?;
        scoped(device, "GpuSkinner::new", || {
            let buffers = Buffers::new(device, tables, capacity, staged, spec)?;
            let passes = Self::build_passes(device, sampler, &passes, &buffers, wide)?;
            let (output_layout, output_bind_group) = Self::output_binding(device, &buffers);
            Ok(GpuSkinner {
                health,
                groups: vec![(0, 0); passes.len()],
                passes,
                buffers,
                sampler_instances: sampler.instance_buffer().clone(),
                output_layout,
                output_bind_group,
                tables: tables.clone(),
                capacity,
                instance_count: 0,
                max_dim: limits.max_compute_workgroups_per_dimension.max(1),
            })
        })?
    }

    /// The pipelines and bind groups of `pass_list`'s passes with their
    /// overrides, one shader module per [`RigModule`] they use.
    fn build_passes(
        device: &wgpu::Device,
        sampler: &crate::gpu::GpuSampler,
        pass_list: &[(Pass, RigOverrides)],
        buffers: &Buffers,
        wide: bool,
    ) -> Result<Vec<passes::BuiltPass>> {
        let module = |m: RigModule| {
            device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(match m {
                    RigModule::Pose => "keyframe-gpu.pose.wgsl",
                    RigModule::Skin => "keyframe-gpu.skin.wgsl",
                    RigModule::Mix => "keyframe-gpu.mix.wgsl",
                }),
                source: wgpu::ShaderSource::Wgsl(m.wgsl_with(wide).into()),
            })
        };
        let uses = |m: RigModule| pass_list.iter().any(|p| p.0.module == m);
        let pose_module = uses(RigModule::Pose).then(|| module(RigModule::Pose));
        let skin_module = uses(RigModule::Skin).then(|| module(RigModule::Skin));
        let mix_module = uses(RigModule::Mix).then(|| module(RigModule::Mix));
        let resources = buffers.resources(sampler);
        pass_list
            .iter()
            .map(|&(pass, overrides)| {
                let module = match pass.module {
                    RigModule::Pose => pose_module.as_ref(),
                    RigModule::Skin => skin_module.as_ref(),
                    RigModule::Mix => mix_module.as_ref(),
                };
                let module = module.ok_or_else(|| Error::Gpu {
                    during: "GpuSkinner::new",
                    message: format!("no shader module for {}", pass.entry),
                })?;
                passes::build(device, module, pass, &resources, &overrides)
            })
            .collect()
    }

    /// The read-only layout of the outputs for a renderer and its bind
    /// group: binding 0 joint matrices, 1 morph weights, 2 globals.
    fn output_binding(
        device: &wgpu::Device,
        buffers: &Buffers,
    ) -> (wgpu::BindGroupLayout, wgpu::BindGroup) {
        let vis = wgpu::ShaderStages::VERTEX_FRAGMENT | wgpu::ShaderStages::COMPUTE;
        let entry = super::output_layout_entry;
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("keyframe-gpu.skin.outputs"),
            entries: &[entry(0, vis, 64), entry(1, vis, 4), entry(2, vis, 64)],
        });
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("keyframe-gpu.skin.outputs"),
            layout: &layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: buffers.joint_matrices.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: buffers.morph_weights.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: buffers.globals.as_entire_binding(),
                },
            ],
        });
        (layout, group)
    }

    /// The tables this skinner was built from.
    #[must_use]
    pub(crate) fn tables(&self) -> &SkinTables {
        &self.tables
    }

    /// Instances in the current table.
    #[must_use]
    pub(crate) fn instance_count(&self) -> u32 {
        self.instance_count
    }

    /// Writes this frame's dispatch parameters from `sampler`'s instance
    /// count, without the device check (the animator checks first).
    pub(crate) fn prepare_unchecked(
        &mut self,
        queue: &wgpu::Queue,
        sampler: &crate::gpu::GpuSampler,
    ) -> Result<()> {
        if sampler.instance_buffer() != &self.sampler_instances {
            return Err(FitError::OtherSampler.into());
        }
        // At most the sampler's capacity, which is this skinner's.
        let n = sampler.instance_count().min(self.capacity);
        self.write_params(queue, n);
        Ok(())
    }

    /// Writes the mixer's tables for this frame (packed by
    /// [`crate::tables::mix::Packer`], already checked) and the parameters for
    /// `characters.len()` characters. Nothing happens without a mixer.
    pub(crate) fn write_mix(
        &mut self,
        queue: &wgpu::Queue,
        actions: &[GpuMixAction],
        characters: &[[u32; 2]],
    ) {
        let Some(mix) = &self.buffers.mix else {
            return;
        };
        if !actions.is_empty() {
            queue.write_buffer(&mix.actions, 0, bytemuck::cast_slice(actions));
        }
        if !characters.is_empty() {
            queue.write_buffer(&mix.characters, 0, bytemuck::cast_slice(characters));
        }
        let n = (characters.len() as u32).min(self.capacity);
        self.write_params(queue, n);
    }

    /// With a mixer: the action records and character ranges the mix
    /// passes read (written by the host, or by the playback pass).
    pub(crate) fn mix_tables(&self) -> Option<(&wgpu::Buffer, &wgpu::Buffer)> {
        self.buffers
            .mix
            .as_ref()
            .map(|m| (&m.actions, &m.characters))
    }

    /// Blends `n` characters whose tables another pass writes (the
    /// playback pass): only the parameters are written.
    pub(crate) fn drive_characters(&mut self, queue: &wgpu::Queue, n: u32) {
        let n = n.min(self.capacity);
        self.write_params(queue, n);
    }

    /// Writes the dispatch parameters and grids for `n` instances (or
    /// characters).
    ///
    /// Inlined, which once kept tests/no_alloc.rs's count of `prepare`'s
    /// allocations at its one `write_buffer`'s. The cause was the test's
    /// environment: with `RUST_BACKTRACE` set, wgpu-core built with debug
    /// assertions captures a backtrace per lock it takes (its lock
    /// tracing), whose allocations grow with the depth of the stack. The
    /// test now turns those backtraces off (`RUST_LIB_BACKTRACE=0`).
    #[inline(always)]
    fn write_params(&mut self, queue: &wgpu::Queue, n: u32) {
        let params = self.tables.params(n);
        queue.write_buffer(&self.buffers.params, 0, bytemuck::bytes_of(&params));
        for (g, built) in self.groups.iter_mut().zip(&self.passes) {
            let per = lanes_per_instance(&self.tables, built.pass.lanes);
            // Fits: checked against the capacity in new().
            *g = super::dispatch_grid(n * per, SKIN_WORKGROUP_SIZE, self.max_dim);
        }
        self.instance_count = n;
    }

    /// With a mixer: the blended pointer properties (`array<f32>`),
    /// character `c`'s target `k` at `c * property_stride +
    /// pointer_targets[k][3]` ([`SkinTables::pointer_targets`]); `None`
    /// without a mixer (each instance's values are in the sampler's
    /// output, at the target's slot).
    #[must_use]
    pub(crate) fn property_buffer(&self) -> Option<&wgpu::Buffer> {
        self.buffers.mix.as_ref().map(|m| &m.properties)
    }

    /// Optional readback of the blended pointer properties of the current
    /// characters (`instance_count * property_stride` floats); empty
    /// without a mixer.
    ///
    /// # Errors
    /// [`Error::DeviceLost`] once the device is lost; [`Error::Readback`]
    /// or [`Error::Gpu`].
    pub(crate) fn read_back_properties(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
    ) -> Result<Vec<f32>> {
        self.health.check("GpuSkinner::read_back")?;
        match &self.buffers.mix {
            Some(m) => self.read(
                device,
                queue,
                &m.properties,
                u64::from(self.tables.property_stride()) * 4,
            ),
            None => Ok(Vec::new()),
        }
    }

    /// Records the dispatches (`passes`) into a compute
    /// pass the caller owns, after the sampler's dispatch: the same as
    /// `record_pose_pass` then
    /// `record_hierarchy_pass`.
    pub(crate) fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.record_module(pass, None);
    }

    /// Records the dispatches of `module`'s passes (all for `None`).
    /// (The mixer's passes are the pose stage's.)
    fn record_module(&self, pass: &mut wgpu::ComputePass<'_>, module: Option<RigModule>) {
        if self.health.is_lost() {
            return;
        }
        let stage = |m: RigModule| match m {
            RigModule::Mix => RigModule::Pose,
            other => other,
        };
        for (built, &(x, y)) in self.passes.iter().zip(&self.groups) {
            if x == 0 || y == 0 || module.is_some_and(|m| m != stage(built.pass.module)) {
                continue;
            }
            pass.set_pipeline(&built.pipeline);
            pass.set_bind_group(0, &built.bind_group, &[]);
            pass.dispatch_workgroups(x, y, 1);
        }
    }

    /// Joint matrices, `array<mat4x4<f32>>`: instance `i`, joint slot `j`
    /// at `i * joint_count + j` (slots: see [`crate::OutputLayout::skin_joints`]).
    ///
    /// Each matrix's last row is its inverse bind's in every pose (exactly
    /// 0, 0, 0, 1 when every inverse bind is affine): it is written when
    /// the buffer is created, and the passes write the first three rows of
    /// each matrix, or whole columns with that same last row
    /// (`wide_accesses`). The buffer's
    /// usages have no `COPY_DST`: it is read-only to the caller.
    #[must_use]
    pub(crate) fn joint_matrix_buffer(&self) -> &wgpu::Buffer {
        &self.buffers.joint_matrices
    }

    /// Morph weights, `array<f32>`: `i * morph_stride + weights_offset + k`.
    #[must_use]
    pub(crate) fn morph_weight_buffer(&self) -> &wgpu::Buffer {
        &self.buffers.morph_weights
    }

    /// Global node matrices, `array<mat4x4<f32>>`: `i * node_count + node`
    /// (a renderer takes the mesh node's model matrix from here). Like the
    /// joint matrices: their last row, 0, 0, 0, 1, is written when the
    /// buffer is created, the rest by the passes.
    #[must_use]
    pub(crate) fn global_buffer(&self) -> &wgpu::Buffer {
        &self.buffers.globals
    }

    /// A read-only layout of the outputs for a renderer, visible to vertex,
    /// fragment and compute stages: binding 0 joint matrices, 1 morph
    /// weights, 2 global matrices.
    #[must_use]
    pub(crate) fn output_bind_group_layout(&self) -> &wgpu::BindGroupLayout {
        &self.output_layout
    }

    /// The bind group for [`output_bind_group_layout`](Self::output_bind_group_layout).
    #[must_use]
    pub(crate) fn output_bind_group(&self) -> &wgpu::BindGroup {
        &self.output_bind_group
    }

    fn read(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        buffer: &wgpu::Buffer,
        per_instance: u64,
    ) -> Result<Vec<f32>> {
        self.health.check("GpuSkinner::read_back")?;
        let bytes = u64::from(self.instance_count) * per_instance;
        if bytes == 0 {
            return Ok(Vec::new());
        }
        super::read_buffer(&self.health, device, queue, buffer, bytes)
    }

    /// Optional readback of the joint matrices of the current instances:
    /// `instance_count * joint_count * 16` floats, column-major.
    ///
    /// # Errors
    /// [`Error::DeviceLost`] once the device is lost; [`Error::Readback`]
    /// or [`Error::Gpu`].
    pub(crate) fn read_back_joints(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
    ) -> Result<Vec<f32>> {
        let per = u64::from(self.tables.joint_count()) * 64;
        self.read(device, queue, &self.buffers.joint_matrices, per)
    }

    /// Optional readback of the global matrices (`instance_count *
    /// node_count * 16` floats).
    ///
    /// # Errors
    /// [`Error::DeviceLost`] once the device is lost; [`Error::Readback`]
    /// or [`Error::Gpu`].
    pub(crate) fn read_back_globals(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
    ) -> Result<Vec<f32>> {
        let per = u64::from(self.tables.node_count()) * 64;
        self.read(device, queue, &self.buffers.globals, per)
    }

    /// Optional readback of the morph weights (`instance_count *
    /// morph_stride` floats).
    ///
    /// # Errors
    /// [`Error::DeviceLost`] once the device is lost; [`Error::Readback`]
    /// or [`Error::Gpu`].
    pub(crate) fn read_back_morph_weights(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
    ) -> Result<Vec<f32>> {
        let per = u64::from(self.tables.morph_stride()) * 4;
        self.read(device, queue, &self.buffers.morph_weights, per)
    }

    /// Optional readback of the local poses of the current instances
    /// (`instance_count * node_count`); empty unless the strategy is
    /// [`SkinStrategy::Staged`] (the only one that stores them).
    ///
    /// # Errors
    /// [`Error::DeviceLost`] once the device is lost; [`Error::Readback`]
    /// or [`Error::Gpu`].
    pub(crate) fn read_back_locals(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
    ) -> Result<Vec<GpuLocalPose>> {
        self.health.check("GpuSkinner::read_back")?;
        let Some(locals) = &self.buffers.locals else {
            return Ok(Vec::new());
        };
        let per = u64::from(self.tables.node_count()) * std::mem::size_of::<GpuLocalPose>() as u64;
        let flat = self.read(device, queue, locals, per)?;
        Ok(flat
            .chunks_exact(12)
            .map(|c| GpuLocalPose {
                translation: [c[0], c[1], c[2], c[3]],
                rotation: [c[4], c[5], c[6], c[7]],
                scale: [c[8], c[9], c[10], c[11]],
            })
            .collect())
    }
}

/// What the crate's own tests inspect and drive directly.
#[cfg(test)]
impl GpuSkinner {
    /// Prepares the next dispatches for the instances of `sampler`'s
    /// current table (set by [`GpuSampler::set_instances`]): writes the
    /// dispatch parameters only. The passes read the clip of each instance
    /// from the sampler's own instance table, so instances are given once.
    /// Call it after each `set_instances`, before [`record`](Self::record).
    ///
    /// # Errors
    /// [`FitError::OtherSampler`] when `sampler` is not the one this
    /// skinner was built from (its buffers are the ones bound); nothing is
    /// written then. [`Error::DeviceLost`] once the device is lost.
    ///
    /// [`GpuSampler::set_instances`]: crate::gpu::GpuSampler::set_instances
    pub(crate) fn prepare(
        &mut self,
        queue: &wgpu::Queue,
        sampler: &crate::gpu::GpuSampler,
    ) -> Result<()> {
        self.health.check("GpuSkinner::prepare")?;
        self.prepare_unchecked(queue, sampler)
    }

    /// Records the dispatches into `encoder`, in one compute pass labelled
    /// `keyframe-gpu.skin`. Record it after the sampler's dispatch. Records
    /// nothing once the device is known lost: the fallible calls report
    /// the loss.
    pub(crate) fn record(&self, encoder: &mut wgpu::CommandEncoder) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("keyframe-gpu.skin"),
            timestamp_writes: None,
        });
        self.record_pass(&mut pass);
    }

    /// Records the pose stage's dispatches (those of [`RigModule::Pose`]:
    /// with [`SkinStrategy::Staged`] the local poses into
    /// [`locals_buffer`](Self::locals_buffer) and the morph weights; with
    /// the fused strategies the morph weights only), after the sampler's
    /// dispatch. A pass of the caller's (a mixer) may then read and
    /// rewrite the local poses before
    /// [`record_hierarchy_pass`](Self::record_hierarchy_pass).
    pub(crate) fn record_pose_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.record_module(pass, Some(RigModule::Pose));
    }

    /// Records the hierarchy and joint-matrix dispatch (that of
    /// [`RigModule::Skin`]: with [`SkinStrategy::Staged`] it reads the
    /// local poses from [`locals_buffer`](Self::locals_buffer); the fused
    /// strategies compute them from the sampler's output), after
    /// [`record_pose_pass`](Self::record_pose_pass).
    pub(crate) fn record_hierarchy_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.record_module(pass, Some(RigModule::Skin));
    }

    /// The local poses ([`GpuLocalPose`], `array<LocalPose>`):
    /// `i * node_count + node`, written by the pose pass and read by the
    /// hierarchy pass of [`SkinStrategy::Staged`]; `None` with the fused
    /// strategies, which keep them in registers or workgroup memory.
    /// Usages `STORAGE | COPY_SRC | COPY_DST`: a pass of the caller's may
    /// read and rewrite it between
    /// [`record_pose_pass`](Self::record_pose_pass) and
    /// [`record_hierarchy_pass`](Self::record_hierarchy_pass) (rotations
    /// must stay unit: the hierarchy stage does not normalize them).
    #[must_use]
    pub(crate) fn locals_buffer(&self) -> Option<&wgpu::Buffer> {
        self.buffers.locals.as_ref()
    }

    /// Optional readback of every current instance's joint matrices, split
    /// per skin (column-major, in each skin's joint order, with the skin's
    /// mesh node): entry `i` is instance `i`. The GPU twin of
    /// `joint_matrices` (the tests' skin entries).
    ///
    /// # Errors
    /// [`Error::DeviceLost`] once the device is lost; [`Error::Readback`]
    /// or [`Error::Gpu`].
    pub(crate) fn read_back_skin_joints(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
    ) -> Result<Vec<Vec<crate::tests::twins::SkinJoints>>> {
        use crate::tests::twins::TestSkinTables;
        let flat = self.read_back_joints(device, queue)?;
        let mats: Vec<[f32; 16]> = flat
            .chunks_exact(16)
            .map(|c| {
                let mut m = [0.0; 16];
                m.copy_from_slice(c);
                m
            })
            .collect();
        let per = self.tables.joint_count() as usize;
        Ok((0..self.instance_count as usize)
            .map(|i| {
                let block = mats.get(i * per..(i + 1) * per).unwrap_or(&[]);
                self.tables.split_joints(block)
            })
            .collect())
    }
}
