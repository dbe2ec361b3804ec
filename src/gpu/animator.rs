//! [`Animator`]: the one object a renderer holds. It owns the sampler and,
//! for a rigged model, the pose and skin passes, takes the per-frame
//! instance table once, records every pass into the caller's encoder, and
//! hands out the buffers a renderer binds. The lower-level pieces
//! ([`GpuSampler`], [`GpuSkinner`]) stay available through it.

use super::skin::GpuSkinner;
use super::GpuSampler;
use crate::error::Result;
use crate::instance::Instance;
use crate::library::AnimationLibrary;
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
        })
    }

    /// Writes this frame's instance table: every pass reads it, so the
    /// instances are given once.
    ///
    /// # Errors
    /// Those of [`GpuSampler::set_instances`] (too many instances, a clip
    /// out of range, a non-finite time); on error nothing is written and the
    /// previous frame's table stays in effect.
    pub fn set_instances(&mut self, queue: &wgpu::Queue, instances: &[Instance]) -> Result<()> {
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
        let (joints, globals, morph_weights, tables) = match &self.skin {
            Some((_, skinner)) => (
                skinner.read_back_joints(device, queue)?,
                skinner.read_back_globals(device, queue)?,
                skinner.read_back_morph_weights(device, queue)?,
                Some(skinner.tables().clone()),
            ),
            None => (Vec::new(), Vec::new(), Vec::new(), None),
        };
        Ok(Poses {
            instance_count: self.sampler.instance_count(),
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

    /// Instance `i`'s block of sampled values (`output_stride` floats,
    /// layout on [`AnimationLibrary`]), `None` past the last instance.
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
