//! A headless device for tools, examples and tests. The sampler itself never
//! creates a device; this is a convenience for code that has none.

use crate::error::{Error, Result};

/// Which adapter [`request_device`] looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdapterChoice {
    /// Only a CPU fallback adapter (lavapipe on Vulkan, llvmpipe on GL), as
    /// the tests use. `WGPU_BACKEND` still selects the backend.
    Fallback,
    /// A hardware adapter if there is one (high performance), else the
    /// fallback adapter.
    PreferHardware,
}

/// A device and what it runs on.
#[derive(Debug)]
pub struct Headless {
    /// The adapter.
    pub adapter: wgpu::Adapter,
    /// The device, with the adapter's own limits.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
}

impl Headless {
    /// `"<adapter name> (<backend>)"`, for logs and reports.
    #[must_use]
    pub fn describe(&self) -> String {
        let info = self.adapter.get_info();
        format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type)
    }
}

/// Creates an instance from the environment (`WGPU_BACKEND` chooses
/// `vulkan`, `gl`, ...), picks an adapter per `choice`, and requests a
/// device with the adapter's own limits (the CPU adapters support more
/// storage buffers per stage than wgpu's downlevel defaults).
///
/// # Errors
/// [`Error::NoAdapter`] with wgpu's reason.
pub fn request_device(choice: AdapterChoice) -> Result<Headless> {
    request_device_with_limits(choice, |l| l)
}

/// As [`request_device`], with the limits passed through `adjust` first
/// (tests use it to lower limits and exercise splitting and refusals).
///
/// # Errors
/// [`Error::NoAdapter`] with wgpu's reason.
pub fn request_device_with_limits(
    choice: AdapterChoice,
    adjust: impl FnOnce(wgpu::Limits) -> wgpu::Limits,
) -> Result<Headless> {
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let fallback = wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::None,
        force_fallback_adapter: true,
        compatible_surface: None,
        apply_limit_buckets: false,
    };
    let adapter = match choice {
        AdapterChoice::Fallback => pollster::block_on(instance.request_adapter(&fallback)),
        AdapterChoice::PreferHardware => {
            pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                force_fallback_adapter: false,
                compatible_surface: None,
                apply_limit_buckets: false,
            }))
            .or_else(|_| pollster::block_on(instance.request_adapter(&fallback)))
        }
    }
    .map_err(|e| Error::NoAdapter(e.to_string()))?;
    let limits = adjust(adapter.limits());
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("keyframe-gpu.headless"),
        required_features: wgpu::Features::empty(),
        required_limits: limits,
        ..Default::default()
    }))
    .map_err(|e| Error::NoAdapter(e.to_string()))?;
    Ok(Headless {
        adapter,
        device,
        queue,
    })
}
