//! GPU time of the animation passes from timestamp queries, read without
//! stalling the frame loop: a frame writes the compute pass's begin and
//! end timestamps only while the readback buffer is free; the buffer is
//! mapped after the submit and read a frame or more later, once the GPU
//! got there.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

const FREE: u8 = 0;
const MAPPING: u8 = 1;
const MAPPED: u8 = 2;

/// Bytes of the two resolved timestamps.
const BYTES: u64 = 16;

/// Timestamps around one compute pass per measured frame.
#[derive(Debug)]
pub struct GpuTimer {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    read: wgpu::Buffer,
    period_ns: f64,
    state: Arc<AtomicU8>,
    /// This frame's pass writes the timestamps.
    writing: bool,
    /// The last measured time, in ms (smoothed).
    last_ms: Option<f64>,
}

impl GpuTimer {
    /// A timer, when the device has `TIMESTAMP_QUERY` turned on.
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Option<GpuTimer> {
        if !device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return None;
        }
        Some(GpuTimer {
            queries: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("viewer.timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            }),
            resolve: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("viewer.timestamps.resolve"),
                size: BYTES,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            read: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("viewer.timestamps.read"),
                size: BYTES,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            period_ns: f64::from(queue.get_timestamp_period()),
            state: Arc::new(AtomicU8::new(FREE)),
            writing: false,
            last_ms: None,
        })
    }

    /// The timestamp writes for this frame's compute pass, or `None` while
    /// the previous measurement is still on its way back.
    pub fn pass_writes(&mut self) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        if self.state.load(Ordering::Acquire) != FREE {
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
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        if self.writing {
            encoder.resolve_query_set(&self.queries, 0..2, &self.resolve, 0);
            encoder.copy_buffer_to_buffer(&self.resolve, 0, &self.read, 0, BYTES);
        }
    }

    /// After the submit: starts mapping the readback buffer (the callback
    /// runs when the GPU is done and the device is polled).
    pub fn after_submit(&mut self) {
        if !std::mem::take(&mut self.writing) {
            return;
        }
        self.state.store(MAPPING, Ordering::Release);
        let state = self.state.clone();
        self.read.map_async(wgpu::MapMode::Read, .., move |r| {
            state.store(if r.is_ok() { MAPPED } else { FREE }, Ordering::Release);
        });
    }

    /// Reads a finished measurement, if one arrived (poll the device before).
    pub fn collect(&mut self) {
        if self.state.load(Ordering::Acquire) != MAPPED {
            return;
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
        if let Some(ticks) = ticks {
            let ms = ticks as f64 * self.period_ns * 1e-6;
            self.last_ms = Some(match self.last_ms {
                Some(prev) => 0.9 * prev + 0.1 * ms,
                None => ms,
            });
        }
    }

    /// The animation passes' GPU time, in ms (smoothed), once measured.
    pub fn last_ms(&self) -> Option<f64> {
        self.last_ms
    }
}
