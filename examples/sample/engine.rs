//! Sampling and posing on the GPU or the CPU reference. The device comes
//! from the examples' shared `headless` helper (examples/common/headless.rs); it and the sampler are
//! created on first use, so a CPU-only run never asks for an adapter.

use crate::headless::{request_device, AdapterChoice, Headless};
use crate::mix::SkinJoints;
use keyframe_gpu::Rig;
use keyframe_gpu::{cpu, AnimationLibrary, Animator, BoundLibrary, Instance};

use crate::args::Backend;
use crate::Failure;

/// Samples instances on the GPU or the CPU.
pub struct Engine<'a> {
    library: &'a AnimationLibrary,
    headless: Option<Headless>,
    sampler: Option<Animator>,
    /// Instances per dispatch.
    capacity: usize,
}

impl<'a> Engine<'a> {
    pub fn new(library: &'a AnimationLibrary) -> Self {
        // At most 64 MiB of output per dispatch, at most 4096 instances.
        let stride = (library.output_stride() as usize).max(1);
        let capacity = ((64usize << 20) / (stride * 4)).clamp(1, 4096);
        Engine {
            library,
            headless: None,
            sampler: None,
            capacity,
        }
    }

    /// The device, requested on first use.
    pub fn device(&mut self) -> Result<&Headless, Failure> {
        if self.headless.is_none() {
            self.headless = Some(request_device(AdapterChoice::PreferHardware)?);
        }
        self.headless
            .as_ref()
            .ok_or_else(|| Failure::Message("no device".into()))
    }

    /// The device and the sampler, each created on first use.
    fn gpu(&mut self) -> Result<(&Headless, &mut Animator), Failure> {
        self.device()?;
        let Some(h) = self.headless.as_ref() else {
            return Err(Failure::Message("no device".into()));
        };
        if self.sampler.is_none() {
            self.sampler = Some(Animator::sampler_only(
                &h.device,
                &h.queue,
                self.library,
                self.capacity as u32,
            )?);
        }
        let Some(sampler) = self.sampler.as_mut() else {
            return Err(Failure::Message("no sampler".into()));
        };
        Ok((h, sampler))
    }

    /// The adapter line's value: `"<name> (backend <backend>, <type>)"`.
    pub fn describe(&mut self) -> Result<String, Failure> {
        let h = self.device()?;
        let info = h.adapter.get_info();
        Ok(format!(
            "{} (backend {:?}, {:?})",
            info.name, info.backend, info.device_type
        ))
    }

    /// Every instance's output block, one after another.
    pub fn sample(
        &mut self,
        backend: Backend,
        instances: &[Instance],
    ) -> Result<Vec<f32>, Failure> {
        match backend {
            Backend::Cpu => Ok(cpu::sample(self.library, instances)?),
            Backend::Gpu => {
                let capacity = self.capacity;
                let (h, sampler) = self.gpu()?;
                let mut out = Vec::new();
                for chunk in instances.chunks(capacity) {
                    out.extend(sampler.sample(&h.device, &h.queue, chunk)?);
                }
                Ok(out)
            }
        }
    }

    /// Keeps the node, world and joint matrices of one dispatch under
    /// 64 MiB each too. Call before the first GPU posing.
    pub fn limit_for_skinning(&mut self, rig: &Rig) {
        let layout = rig.output_layout();
        let per = (layout.nodes().max(layout.joints()) as usize).max(1) * 64;
        self.capacity = self.capacity.min(((64usize << 20) / per).max(1));
    }

    /// Each instance's joint matrices per skin (entry `i`: instance `i`),
    /// from the GPU's readback or the CPU twin's poses: the same
    /// [`Poses`](keyframe_gpu::Poses) either way.
    pub fn joints(
        &mut self,
        backend: Backend,
        bound: &BoundLibrary,
        instances: &[Instance],
    ) -> Result<Vec<Vec<SkinJoints>>, Failure> {
        let rig = bound.rig();
        let mut out = Vec::with_capacity(instances.len());
        self.poses(backend, bound, instances, |poses| {
            for i in 0..poses.instance_count() {
                let skins = crate::mix::skins_of(rig, poses, i)
                    .ok_or_else(|| Failure::Message(format!("no joints for instance {i}")))?;
                out.push(skins);
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// Poses `instances` of `bound` on the GPU (in chunks, read back) or
    /// with the CPU twin, and hands each frame to `each`, in order.
    pub fn poses(
        &mut self,
        backend: Backend,
        bound: &BoundLibrary,
        instances: &[Instance],
        mut each: impl FnMut(&keyframe_gpu::Poses) -> Result<(), Failure>,
    ) -> Result<(), Failure> {
        match backend {
            Backend::Cpu => each(&cpu::poses(bound, instances)?)?,
            Backend::Gpu => {
                let capacity = self.capacity;
                let h = self.device()?;
                let mut animator = Animator::new(&h.device, &h.queue, bound, capacity as u32)?;
                for chunk in instances.chunks(capacity) {
                    animator.set_instances(&h.queue, chunk)?;
                    let mut encoder =
                        h.device
                            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                                label: Some("sample poses"),
                            });
                    animator.record(&mut encoder);
                    h.queue.submit([encoder.finish()]);
                    each(&animator.read_back(&h.device, &h.queue)?)?;
                }
            }
        }
        Ok(())
    }
}
