//! The GPU side: [`Animator`] (the one object a renderer holds) and
//! [`Crowd`] (several models), [`ReadbackRing`] (readback that does not stall the next frame),
//! [`PassTimer`] (the passes' GPU time), the device requirements
//! ([`required_limits`], [`required_features`], [`optional_features`];
//! `DeviceProfile::of` reads what a device is good at). The device is the
//! application's: the crate never creates one.

mod animator;
mod bind;
mod chunk;
mod crowd;
pub(crate) mod exec;
pub(crate) mod key_textures;
mod limits;
mod loss;
pub(crate) mod playback;
pub(crate) mod players;
mod readback;
mod timer;

pub(crate) use self::crowd::CrowdStage;
pub use self::{
    animator::Animator,
    chunk::AnimatorChunk,
    crowd::Crowd,
    limits::{optional_features, required_features, required_limits},
    loss::is_device_lost,
    readback::{ReadbackFrame, ReadbackRing, Ticket, MAX_SLOTS},
    timer::PassTimer,
};
pub use crate::error::RingError;
pub(crate) use limits::{check_device, check_playback_device};
pub(crate) use loss::Health;

use std::num::NonZeroU64;

use crate::error::{Error, Result};

/// Records with `record` into an encoder of its own and submits it, inside
/// the error scopes of [`scoped`] (`during` names the call): the dispatch
/// of the `sample` conveniences.
pub(crate) fn submit_now(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    during: &'static str,
    record: impl FnOnce(&mut wgpu::CommandEncoder),
) -> Result<()> {
    scoped(device, during, || {
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("keyframe-gpu.sample.encoder"),
        });
        record(&mut encoder);
        queue.submit([encoder.finish()]);
    })
}

/// Runs `f` inside validation and out-of-memory error scopes and turns what
/// they catch into [`Error::Gpu`] or [`Error::OutOfMemory`]; on a lost
/// device (whose errors wgpu does not report to scopes) into
/// [`Error::DeviceLost`].
pub(crate) fn scoped<T>(
    device: &wgpu::Device,
    during: &'static str,
    f: impl FnOnce() -> T,
) -> Result<T> {
    let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let value = f();
    let v = pollster::block_on(validation.pop());
    let o = pollster::block_on(oom.pop());
    match scope_error(during, v, o) {
        Some(e) => Err(Health::of(device).explain(during, e)),
        None => Ok(value),
    }
}

/// What an operation's error scopes caught, as the crate's error. Out of
/// memory wins: a resource that could not be allocated makes the calls
/// that use it fail validation, and the allocation is the cause.
pub(crate) fn scope_error(
    during: &'static str,
    validation: Option<wgpu::Error>,
    oom: Option<wgpu::Error>,
) -> Option<Error> {
    match (oom, validation) {
        (Some(e), _) => Some(Error::OutOfMemory {
            during,
            message: e.to_string(),
        }),
        (None, Some(e)) => Some(Error::Gpu {
            during,
            message: e.to_string(),
        }),
        (None, None) => None,
    }
}

/// A buffer of `size` bytes, mapped at creation, written by `fill` (bytes
/// it leaves are zero), then unmapped.
pub(crate) fn buffer_filled(
    device: &wgpu::Device,
    label: &'static str,
    size: u64,
    usage: wgpu::BufferUsages,
    fill: impl FnOnce(&mut wgpu::BufferViewMut),
) -> Result<wgpu::Buffer> {
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage,
        mapped_at_creation: true,
    });
    {
        let mut view = buffer.get_mapped_range_mut(..).map_err(|e| Error::Gpu {
            during: label,
            message: e.to_string(),
        })?;
        fill(&mut view);
    }
    buffer.unmap();
    Ok(buffer)
}

/// Layout entry with which another pipeline binds an output buffer
/// read-only, `min_size` bytes at least: an animator's sampled values
/// ([`AnimatorChunk::sample_buffer`], `var<storage, read> ...: array<f32>`,
/// `min_size` 4, for example in a skinning vertex shader) or its results
/// ([`AnimatorChunk::joint_matrix_buffer`] and
/// [`AnimatorChunk::world_matrix_buffer`]: `array<mat4x4<f32>>`, 64;
/// [`AnimatorChunk::morph_weight_buffer`]: `array<f32>`, 4).
#[must_use]
pub fn output_layout_entry(
    binding: u32,
    visibility: wgpu::ShaderStages,
    min_size: u64,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only: true },
            has_dynamic_offset: false,
            min_binding_size: NonZeroU64::new(min_size),
        },
        count: None,
    }
}

/// Copies `buffer[..bytes]` into a staging buffer made for this one read
/// (a sampler or skinner that is never read back holds none), waits, and
/// returns it as `f32`s: the blocking readback under
/// [`AnimatorChunk::read_back`] and [`Animator::read_back`]. Per-frame
/// readback goes through [`ReadbackRing`].
pub(crate) fn read_buffer(
    health: &Health,
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    buffer: &wgpu::Buffer,
    bytes: u64,
) -> Result<Vec<f32>> {
    let staging = scoped(device, "blocking readback (copy)", || {
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("keyframe-gpu.readback"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("keyframe-gpu.readback"),
        });
        encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, bytes);
        queue.submit([encoder.finish()]);
        staging
    })?;
    map_read(health, device, &staging, bytes, |view| {
        bytemuck::pod_collect_to_vec::<u8, f32>(view)
    })
}

/// Maps `buffer[..bytes]` (a `MAP_READ` buffer), waits for it, passes the
/// mapped bytes to `read`, unmaps: the one map-and-wait of the crate and
/// its tools.
///
/// On a lost device it returns [`Error::DeviceLost`], never the buffer's
/// old contents: the loss is checked before mapping, when the mapping or
/// the wait fails, and after reading (a loss that came during the read).
/// The wait cannot hang on a lost device: wgpu's wait returns once the
/// work queued before the loss is done (checked on lavapipe and on GL's
/// llvmpipe), and mapping a buffer of a lost device fails at once.
pub(crate) fn map_read<T>(
    health: &Health,
    device: &wgpu::Device,
    buffer: &wgpu::Buffer,
    bytes: u64,
    read: impl FnOnce(&[u8]) -> T,
) -> Result<T> {
    const DURING: &str = "readback (map)";
    health.check_with(device, DURING)?;
    let slice = buffer.slice(..bytes);
    let (tx, rx) = std::sync::mpsc::channel();
    // In an error scope: on a lost device the buffer is invalid, and wgpu
    // reports the failed map as an error rather than through the callback.
    scoped(device, DURING, || {
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
    })?;
    let failed = |e: String| health.explain(DURING, Error::Readback(e));
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| failed(e.to_string()))?;
    // The wait ran the callback, unless another thread's poll took it
    // and is about to run it: wait for that a bounded time, never forever.
    let mapped = match rx.try_recv() {
        Err(std::sync::mpsc::TryRecvError::Empty) => rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .map_err(|e| e.to_string()),
        other => other.map_err(|e| e.to_string()),
    };
    match mapped {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(failed(e.to_string())),
        Err(e) => return Err(failed(format!("map callback: {e}"))),
    }
    let out = {
        let view = slice
            .get_mapped_range()
            .map_err(|e| failed(e.to_string()))?;
        read(&view)
    };
    buffer.unmap();
    health.check(DURING)?;
    Ok(out)
}
