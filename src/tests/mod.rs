//! The tests that reach the implementation's pieces: the layout structs
//! against naga's view of the shaders, the CPU twin's per-stage functions,
//! the skin stage, the instance resolution and the compressed format built
//! by hand. They were integration tests; they run inside the crate, where
//! those pieces stay private, through the same `keyframe_gpu::` paths (the
//! crate names itself so under `cfg(test)`).

#[path = "../../tests/common/mod.rs"]
mod common;

mod compressed;
mod cpu_reference;
mod gpu_vs_cpu;
mod hostile_instances;
mod key_lookup;
mod layout;
mod loss;
mod mixer;
mod plans;
mod playback;
mod skinning;

use keyframe_gpu::gpu::GpuSampler;
use keyframe_gpu::{AnimationLibrary, DeviceProfile, Plan, SamplerPlan};

/// A sampler of `library` for up to `capacity` instances with `plan`,
/// built as an animator builds it: the plan for this device
/// (`Plan::sampling`), then `GpuSampler::from_plan`.
pub(crate) fn sampler_with(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    library: &AnimationLibrary,
    capacity: u32,
    plan: SamplerPlan,
) -> keyframe_gpu::Result<GpuSampler> {
    keyframe_gpu::gpu::check_device(device)?;
    let plan = Plan::sampling(library, capacity, &DeviceProfile::of(device), plan)?;
    GpuSampler::from_plan(device, queue, library, &plan)
}

/// [`sampler_with`] the plan the profile picks.
pub(crate) fn sampler(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    library: &AnimationLibrary,
    capacity: u32,
) -> keyframe_gpu::Result<GpuSampler> {
    sampler_with(device, queue, library, capacity, SamplerPlan::Auto)
}
