//! Shared helpers for the integration tests.
#![allow(dead_code, reason = "each test binary uses a subset")]

#[path = "../../examples/common/track_diff.rs"]
pub mod track_diff;

#[path = "../../examples/common/headless.rs"]
pub mod headless;

use headless::{request_device_with, AdapterChoice, DeviceOptions, Headless};

/// The fallback adapter's device (or the backend `WGPU_BACKEND` selects),
/// with the crate's optional features where the adapter has them.
/// Without an adapter: prints a skip line and returns `None`, unless
/// `KEYFRAME_GPU_REQUIRE_ADAPTER=1`, where it panics (fails the test).
pub fn gpu(test: &str) -> Option<Headless> {
    gpu_with(test, &DeviceOptions::new(AdapterChoice::Fallback))
}

/// As [`gpu`], with no optional feature: the paths the crate takes on a
/// device without them.
pub fn gpu_plain(test: &str) -> Option<Headless> {
    let options = DeviceOptions {
        optional_features: wgpu::Features::empty(),
        ..DeviceOptions::new(AdapterChoice::Fallback)
    };
    gpu_with(test, &options)
}

/// As [`gpu`], with `options`.
pub fn gpu_with(test: &str, options: &DeviceOptions) -> Option<Headless> {
    match request_device_with(options, |l| l) {
        Ok(h) => {
            // Written past libtest's output capture so that CI logs show
            // which adapter and backend every GPU test really ran on.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "gpu test {test}: running on {}",
                h.describe()
            );
            if let Ok(want) = std::env::var("WGPU_BACKEND") {
                let got = format!("{:?}", h.adapter.get_info().backend).to_lowercase();
                assert!(
                    want.to_lowercase()
                        .split(',')
                        .any(|w| got.starts_with(w.trim())),
                    "{test}: WGPU_BACKEND={want} but the adapter runs on {got}"
                );
            }
            Some(h)
        }
        Err(e) => {
            if std::env::var("KEYFRAME_GPU_REQUIRE_ADAPTER").as_deref() == Ok("1") {
                panic!("{test}: KEYFRAME_GPU_REQUIRE_ADAPTER=1 but no adapter: {e}");
            }
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "SKIP {test}: no GPU adapter ({e})");
            None
        }
    }
}

/// An animator that only samples `library` with the sampler plan `plan`
/// (the plan for `device`'s profile), for up to `capacity` instances.
pub fn sampler_with_plan(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    library: &keyframe_gpu::AnimationLibrary,
    capacity: u32,
    plan: keyframe_gpu::SamplerPlan,
) -> keyframe_gpu::Result<keyframe_gpu::Animator> {
    let profile = keyframe_gpu::DeviceProfile::of(device);
    let plan = keyframe_gpu::Plan::sampling(library, capacity, &profile, plan)?;
    keyframe_gpu::Animator::from_plan(device, queue, &plan)
}

/// A LINEAR rotation track of `node` with keys at `times` and the
/// quaternions `values` (4 per key).
pub fn linear_rotation(node: u32, times: Vec<f32>, values: Vec<f32>) -> keyframe_gpu::Track {
    use keyframe_gpu::{Interpolation, Property, Track};
    Track::new(
        node,
        Property::Rotation,
        Interpolation::Linear,
        times,
        values,
    )
}
