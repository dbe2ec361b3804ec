//! Sampling and skinning on the GPU or the CPU reference. The device comes
//! from the library's `gpu::headless` helper; it, the sampler and the
//! skinner are created on first use, so a CPU-only run never asks for an
//! adapter.

use keyframe_gpu::gpu::headless::{request_device, AdapterChoice, Headless};
use keyframe_gpu::gpu::skin::GpuSkinner;
use keyframe_gpu::rig::{SkinJoints, SkinTables};
use keyframe_gpu::{cpu, cpu_skin, AnimationLibrary, GpuSampler, Instance};

use crate::args::Backend;
use crate::Failure;

/// Samples instances on the GPU or the CPU.
pub struct Engine<'a> {
    library: &'a AnimationLibrary,
    headless: Option<Headless>,
    sampler: Option<GpuSampler>,
    skinner: Option<GpuSkinner>,
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
            skinner: None,
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

    /// The device, the sampler and the skinner slot, each created on first
    /// use (the skinner by the caller, which has the tables).
    fn gpu(&mut self) -> Result<(&Headless, &mut GpuSampler, &mut Option<GpuSkinner>), Failure> {
        self.device()?;
        let Some(h) = self.headless.as_ref() else {
            return Err(Failure::Message("no device".into()));
        };
        if self.sampler.is_none() {
            self.sampler = Some(GpuSampler::new(
                &h.device,
                &h.queue,
                self.library,
                self.capacity as u32,
            )?);
        }
        let Some(sampler) = self.sampler.as_mut() else {
            return Err(Failure::Message("no sampler".into()));
        };
        Ok((h, sampler, &mut self.skinner))
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
                let (h, sampler, _) = self.gpu()?;
                let mut out = Vec::new();
                for chunk in instances.chunks(capacity) {
                    out.extend(sampler.sample(&h.device, &h.queue, chunk)?);
                }
                Ok(out)
            }
        }
    }

    /// Keeps the node, global and joint matrices of one dispatch under
    /// 64 MiB each too. Call before the first GPU sampling.
    pub fn limit_for_skinning(&mut self, tables: &SkinTables) {
        let per = (tables.node_count().max(tables.joint_count()) as usize).max(1) * 64;
        self.capacity = self.capacity.min(((64usize << 20) / per).max(1));
    }

    /// Each instance's joint matrices per skin (entry `i`: instance `i`).
    pub fn joints(
        &mut self,
        backend: Backend,
        tables: &SkinTables,
        instances: &[Instance],
    ) -> Result<Vec<Vec<SkinJoints>>, Failure> {
        match backend {
            Backend::Cpu => {
                let out = cpu_skin::skin(tables, self.library, instances)?;
                let per = tables.joint_count() as usize;
                let block: Vec<[f32; 16]> = out.joints.iter().map(|m| m.to_cols_array()).collect();
                Ok((0..instances.len())
                    .map(|i| tables.split_joints(block.get(i * per..(i + 1) * per).unwrap_or(&[])))
                    .collect())
            }
            Backend::Gpu => {
                let capacity = self.capacity;
                let (h, sampler, skinner) = self.gpu()?;
                if skinner.is_none() {
                    *skinner = Some(GpuSkinner::new(&h.device, sampler, tables)?);
                }
                let Some(skinner) = skinner.as_mut() else {
                    return Err(Failure::Message("no skinner".into()));
                };
                let mut out = Vec::with_capacity(instances.len());
                for chunk in instances.chunks(capacity) {
                    sampler.set_instances(&h.queue, chunk)?;
                    skinner.prepare(&h.queue, sampler)?;
                    let mut encoder =
                        h.device
                            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                                label: Some("sample --joints"),
                            });
                    sampler.record(&mut encoder);
                    skinner.record(&mut encoder);
                    h.queue.submit([encoder.finish()]);
                    out.extend(skinner.read_back_skin_joints(&h.device, &h.queue)?);
                }
                Ok(out)
            }
        }
    }
}
