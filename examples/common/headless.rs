//! A headless device for the examples and the tests: the crate itself
//! never creates a device (an application brings its own); this sets one
//! up the way `docs/USAGE.md` ("Backends, features and limits") asks, in
//! one place for the tools and the tests. Included by path (`#[path]`):
//! Cargo has no library target for examples.
//!
//! - the backend comes from the environment (`WGPU_BACKEND=vulkan`, `gl`,
//!   ...), the adapter from an [`AdapterChoice`];
//! - the device gets the adapter's own limits, optionally adjusted, and
//!   the optional features the adapter has, such as timestamp queries for
//!   a benchmark ([`request_device_with`], [`DeviceOptions`]);
//! - [`Headless`] names what it runs on ([`Headless::describe`]), waits
//!   for the queue ([`Headless::wait`]) and reads a mappable buffer back
//!   ([`Headless::read_buffer`]).
//!
//! Errors are one-line messages (`String`): no adapter, a lost device, a
//! failed map.
#![allow(dead_code, reason = "each example and test uses a subset")]

use std::time::Duration;

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

/// What [`request_device_with`] asks of the adapter and the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceOptions {
    /// Which adapter to look for.
    pub adapter: AdapterChoice,
    /// Features turned on when the adapter has them, left off otherwise
    /// (never an error): check [`Headless::has`] afterwards.
    pub optional_features: wgpu::Features,
    /// The device's label.
    pub label: &'static str,
}

impl DeviceOptions {
    /// `adapter`, the crate's `optional_features()` as optional features,
    /// the label `"keyframe-gpu.headless"`.
    pub fn new(adapter: AdapterChoice) -> Self {
        DeviceOptions {
            adapter,
            optional_features: keyframe_gpu::optional_features(),
            label: "keyframe-gpu.headless",
        }
    }

    /// Also asks for `wgpu::Features::TIMESTAMP_QUERY` when the adapter has
    /// it (pass timestamps for timing).
    pub fn with_timestamps(mut self) -> Self {
        self.optional_features |= wgpu::Features::TIMESTAMP_QUERY;
        self
    }
}

/// A device and what it runs on.
#[derive(Debug)]
pub struct Headless {
    /// The adapter.
    pub adapter: wgpu::Adapter,
    /// The device, with the adapter's own limits (unless adjusted).
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
}

impl Headless {
    /// `"<adapter name> (<backend>, <device type>)"`, for logs and reports,
    /// e.g. `"llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan, Cpu)"`.
    pub fn describe(&self) -> String {
        let info = self.adapter.get_info();
        format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type)
    }

    /// Whether the device has every feature of `features` turned on (see
    /// [`DeviceOptions::optional_features`]).
    pub fn has(&self, features: wgpu::Features) -> bool {
        self.device.features().contains(features)
    }

    /// Blocks until the GPU has finished everything submitted so far.
    ///
    /// # Errors
    /// When the device is lost (`keyframe_gpu::gpu::is_device_lost`, before
    /// or after the wait) or the poll fails.
    pub fn wait(&self) -> Result<(), String> {
        self.lost("Headless::wait")?;
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| format!("Headless::wait: {e}"))?;
        self.lost("Headless::wait")
    }

    /// Maps the whole of `buffer` (created with `MAP_READ`) for reading,
    /// waits for everything submitted so far, copies its bytes out and
    /// unmaps it.
    ///
    /// # Errors
    /// When the device is lost, or the poll or the mapping fails.
    pub fn read_buffer(&self, buffer: &wgpu::Buffer) -> Result<Vec<u8>, String> {
        const DURING: &str = "Headless::read_buffer";
        self.lost(DURING)?;
        let slice = buffer.slice(..);
        let (tx, rx) = std::sync::mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| format!("{DURING}: {e}"))?;
        rx.recv_timeout(Duration::from_secs(10))
            .map_err(|e| format!("{DURING}: map callback: {e}"))?
            .map_err(|e| format!("{DURING}: {e}"))?;
        let bytes = slice
            .get_mapped_range()
            .map(|view| view.to_vec())
            .map_err(|e| format!("{DURING}: {e}"));
        buffer.unmap();
        self.lost(DURING)?;
        bytes
    }

    /// An error naming `during` when the device is lost.
    fn lost(&self, during: &str) -> Result<(), String> {
        if keyframe_gpu::gpu::is_device_lost(&self.device) {
            return Err(format!("{during}: the device is lost"));
        }
        Ok(())
    }
}

/// Creates an instance from the environment (`WGPU_BACKEND` chooses
/// `vulkan`, `gl`, ...), picks an adapter per `choice`, and requests a
/// device with the adapter's own limits (the CPU adapters support more
/// storage buffers per stage than wgpu's downlevel defaults).
///
/// # Errors
/// No adapter, or no device, with wgpu's reason.
pub fn request_device(choice: AdapterChoice) -> Result<Headless, String> {
    request_device_with(&DeviceOptions::new(choice), |l| l)
}

/// As [`request_device`], with `options` (optional features, label) and
/// the adapter's limits passed through `adjust` (`|l| l` keeps them; tests
/// lower them to exercise splitting and refusals).
///
/// # Errors
/// No adapter, or no device, with wgpu's reason.
pub fn request_device_with(
    options: &DeviceOptions,
    adjust: impl FnOnce(wgpu::Limits) -> wgpu::Limits,
) -> Result<Headless, String> {
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = request_adapter(&instance, options.adapter)?;
    let limits = adjust(adapter.limits());
    let features = options.optional_features & adapter.features();
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some(options.label),
        required_features: features,
        required_limits: limits,
        ..Default::default()
    }))
    .map_err(|e| format!("no device: {e}"))?;
    Ok(Headless {
        adapter,
        device,
        queue,
    })
}

/// The adapter `choice` names, from `instance`.
fn request_adapter(
    instance: &wgpu::Instance,
    choice: AdapterChoice,
) -> Result<wgpu::Adapter, String> {
    let fallback = wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::None,
        force_fallback_adapter: true,
        compatible_surface: None,
        apply_limit_buckets: false,
    };
    match choice {
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
    .map_err(|e| format!("no adapter: {e}"))
}
