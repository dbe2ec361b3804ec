//! [`PassTimer`]: the GPU time of the animation passes, from timestamp
//! queries, read without stalling the frame loop.
//!
//! A frame writes the compute pass's begin and end timestamps only while
//! the timer's readback buffer is free; the buffer is mapped after the
//! submit and read a frame or more later, once the GPU got there. So
//! measurements arrive a few frames late and not for every frame, and
//! measuring never waits.
//!
//! On a lost device the timer writes and maps nothing and measures
//! nothing: [`PassTimer::poll`] returns `None`, never a measurement of a
//! frame before the loss.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::Health;

const FREE: u8 = 0;
const MAPPING: u8 = 1;
const MAPPED: u8 = 2;

/// Bytes of the two resolved timestamps.
const BYTES: u64 = 16;

/// Timestamps around the animation's compute pass
/// ([`Animator::record_timed`](crate::Animator::record_timed)), where the
/// device has `TIMESTAMP_QUERY` (request it with
/// [`optional_features`](crate::optional_features)).
///
/// ```no_run
/// # fn f(device: &wgpu::Device, queue: &wgpu::Queue, animator: &keyframe_gpu::Animator) {
/// use keyframe_gpu::gpu::PassTimer;
/// let mut timer = PassTimer::new(device, queue); // None without timestamp queries
/// // Every frame:
/// let mut encoder = device.create_command_encoder(&Default::default());
/// match &mut timer {
///     Some(timer) => animator.record_timed(&mut encoder, timer),
///     None => animator.record(&mut encoder),
/// }
/// queue.submit([encoder.finish()]);
/// if let Some(timer) = &mut timer {
///     timer.after_submit();
///     let _ = device.poll(wgpu::PollType::Poll);
///     if let Some(gpu_time) = timer.poll() {
///         println!("animation passes: {gpu_time:?}");
///     }
/// }
/// # }
/// ```
#[derive(Debug)]
pub struct PassTimer {
    /// The device, to tell whether it is lost.
    health: Health,
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    read: wgpu::Buffer,
    period_ns: f64,
    state: Arc<AtomicU8>,
    /// This frame's pass writes the timestamps.
    writing: bool,
    last: Option<Duration>,
}

impl PassTimer {
    /// A timer, when the device has `TIMESTAMP_QUERY` turned on; `None`
    /// otherwise, and on a lost device.
    #[must_use]
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Option<PassTimer> {
        if !device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return None;
        }
        let health = Health::of(device);
        health.check("PassTimer::new").ok()?;
        let buffer = |label, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: BYTES,
                usage,
                mapped_at_creation: false,
            })
        };
        Some(PassTimer {
            health,
            queries: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("keyframe-gpu.timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            }),
            resolve: buffer(
                "keyframe-gpu.timestamps.resolve",
                wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            ),
            read: buffer(
                "keyframe-gpu.timestamps.read",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            ),
            period_ns: f64::from(queue.get_timestamp_period()),
            state: Arc::new(AtomicU8::new(FREE)),
            writing: false,
            last: None,
        })
    }

    /// The timestamp writes for this frame's compute pass, or `None` while
    /// the previous measurement is still on its way back.
    pub(crate) fn pass_writes(&mut self) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        if self.state.load(Ordering::Acquire) != FREE || self.health.is_lost() {
            return None;
        }
        self.writing = true;
        Some(wgpu::ComputePassTimestampWrites {
            query_set: &self.queries,
            beginning_of_pass_write_index: Some(0),
            end_of_pass_write_index: Some(1),
        })
    }

    /// After the pass: resolves this frame's timestamps into the readback
    /// buffer.
    pub(crate) fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        if self.writing {
            encoder.resolve_query_set(&self.queries, 0..2, &self.resolve, 0);
            encoder.copy_buffer_to_buffer(&self.resolve, 0, &self.read, 0, BYTES);
        }
    }

    /// Call after submitting the encoder the pass was recorded into: starts
    /// mapping this frame's timestamps (the mapping completes when the GPU
    /// is done and the device is polled). Nothing once the device is
    /// known lost.
    pub fn after_submit(&mut self) {
        if !std::mem::take(&mut self.writing) || self.health.is_lost() {
            return;
        }
        self.state.store(MAPPING, Ordering::Release);
        let state = self.state.clone();
        self.read.map_async(wgpu::MapMode::Read, .., move |r| {
            state.store(if r.is_ok() { MAPPED } else { FREE }, Ordering::Release);
        });
    }

    /// A measurement that arrived since the last call (poll the device
    /// before), or `None`; `None` once the device is known lost. Never
    /// blocks.
    pub fn poll(&mut self) -> Option<Duration> {
        if self.state.load(Ordering::Acquire) != MAPPED || self.health.is_lost() {
            return None;
        }
        let ticks = match self.read.get_mapped_range(..) {
            Ok(view) => {
                let t: &[u64] = bytemuck::cast_slice(&view);
                Some(t[1].saturating_sub(t[0]))
            }
            Err(_) => None,
        };
        self.read.unmap();
        self.state.store(FREE, Ordering::Release);
        let time = Duration::from_secs_f64(ticks? as f64 * self.period_ns * 1e-9);
        self.last = Some(time);
        Some(time)
    }
}
