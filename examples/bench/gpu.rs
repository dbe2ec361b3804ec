//! The device (from the examples' shared helper examples/common/headless.rs, with timestamp
//! queries where the adapter has them), pass timestamps, and one timed
//! frame of a kernel.

use std::time::Instant;

use crate::headless::{request_device_with, AdapterChoice, DeviceOptions, Headless};
use keyframe_gpu::internals::{GpuParams, WORKGROUP_SIZE};
use keyframe_gpu::SkinStrategy;
use keyframe_gpu::{Animator, Instance};

use crate::alloc::allocations;

/// Pass timestamps: a two-entry query set, resolved and copied to a
/// mappable buffer each frame. All created once.
pub struct Timer {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    read: wgpu::Buffer,
    period_ns: f64,
}

/// Bytes of the two resolved timestamps.
const TIMESTAMP_BYTES: u64 = 2 * std::mem::size_of::<u64>() as u64;

impl Timer {
    fn new(h: &Headless) -> Self {
        Timer {
            queries: h.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("bench.timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            }),
            resolve: h.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("bench.timestamps.resolve"),
                size: TIMESTAMP_BYTES,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            read: h.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("bench.timestamps.read"),
                size: TIMESTAMP_BYTES,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            period_ns: f64::from(h.queue.get_timestamp_period()),
        }
    }
}

/// The device, its timer and what the report says about it.
pub struct Gpu {
    pub h: Headless,
    timer: Option<Timer>,
    /// The adapter's name.
    pub adapter: String,
    /// The backend in lower case (`"vulkan"`, `"gl"`, ...).
    pub backend: String,
    pub max_workgroups_per_dim: u32,
    pub skin_strategy: SkinStrategy,
    /// The sampler's plan (`--plan`; `Auto` picks by adapter).
    pub plan: keyframe_gpu::SamplerPlan,
}

impl Gpu {
    /// A hardware adapter if there is one, else the fallback adapter, with
    /// its own limits and, where it has them, timestamp queries.
    pub fn new() -> Result<Self, String> {
        let options = DeviceOptions {
            label: "bench.device",
            ..DeviceOptions::new(AdapterChoice::PreferHardware).with_timestamps()
        };
        let h = request_device_with(&options, |l| l).map_err(|e| e.to_string())?;
        let timer = h
            .has(wgpu::Features::TIMESTAMP_QUERY)
            .then(|| Timer::new(&h));
        let info = h.adapter.get_info();
        Ok(Gpu {
            adapter: info.name,
            backend: format!("{:?}", info.backend).to_lowercase(),
            max_workgroups_per_dim: h.device.limits().max_compute_workgroups_per_dimension,
            h,
            timer,
            skin_strategy: SkinStrategy::Auto,
            plan: keyframe_gpu::SamplerPlan::Auto,
        })
    }

    /// How `gpu_ms` is timed, for the report.
    pub fn timing(&self) -> &'static str {
        if self.timer.is_some() {
            "timestamp queries (compute pass begin..end)"
        } else {
            "wall clock (set_instances..poll wait); the adapter has no TIMESTAMP_QUERY"
        }
    }

    /// Waits for the queue; a failure ends the bench.
    pub fn wait(&self) {
        if let Err(e) = self.h.wait() {
            eprintln!("bench: device poll failed: {e}");
            std::process::exit(2);
        }
    }

    /// Reads the two timestamps of the last frame, in ms.
    fn read_timestamps(&self, timer: &Timer) -> f64 {
        match self.h.read_buffer(&timer.read) {
            Ok(bytes) => {
                let ticks: [u64; 2] = bytemuck::pod_read_unaligned(&bytes);
                ticks[1].saturating_sub(ticks[0]) as f64 * timer.period_ns / 1e6
            }
            Err(e) => {
                eprintln!("bench: timestamp readback failed: {e}");
                std::process::exit(2);
            }
        }
    }
}

/// Something that can be set up for a frame and recorded into a pass.
pub trait Kernel {
    fn set(&mut self, queue: &wgpu::Queue, instances: &[Instance]);
    fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>);
}

impl Kernel for Animator {
    fn set(&mut self, queue: &wgpu::Queue, instances: &[Instance]) {
        if let Err(e) = self.set_instances(queue, instances) {
            eprintln!("bench: set_instances: {e}");
            std::process::exit(2);
        }
    }
    fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        Animator::record_pass(self, pass);
    }
}

/// One measured frame.
#[derive(Clone, Copy, Default)]
pub struct FrameTime {
    pub wall_ms: f64,
    pub gpu_ms: f64,
    pub allocs_set: u64,
    pub allocs_record: u64,
    pub allocs_submit: u64,
}

/// set + record + submit + wait; the time that counts is the timestamp
/// difference if there is a timer, else the wall time.
pub fn gpu_frame(gpu: &Gpu, kernel: &mut dyn Kernel, instances: &[Instance]) -> FrameTime {
    let a0 = allocations();
    let start = Instant::now();
    kernel.set(&gpu.h.queue, instances);
    let a1 = allocations();
    let mut encoder = gpu
        .h
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("bench.frame"),
        });
    {
        let timestamp_writes = gpu
            .timer
            .as_ref()
            .map(|t| wgpu::ComputePassTimestampWrites {
                query_set: &t.queries,
                beginning_of_pass_write_index: Some(0),
                end_of_pass_write_index: Some(1),
            });
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("bench.pass"),
            timestamp_writes,
        });
        kernel.record_pass(&mut pass);
    }
    if let Some(t) = &gpu.timer {
        encoder.resolve_query_set(&t.queries, 0..2, &t.resolve, 0);
        encoder.copy_buffer_to_buffer(&t.resolve, 0, &t.read, 0, TIMESTAMP_BYTES);
    }
    let commands = encoder.finish();
    let a2 = allocations();
    gpu.h.queue.submit([commands]);
    gpu.wait();
    let wall_ms = start.elapsed().as_secs_f64() * 1e3;
    let a3 = allocations();
    let gpu_ms = match &gpu.timer {
        Some(t) => gpu.read_timestamps(t),
        None => wall_ms,
    };
    FrameTime {
        wall_ms,
        gpu_ms,
        allocs_set: a1 - a0,
        allocs_record: a2 - a1,
        allocs_submit: a3 - a2,
    }
}

pub fn fail<T>(what: &str, r: std::result::Result<T, keyframe_gpu::Error>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => {
            eprintln!("bench: {what}: {e}");
            std::process::exit(2);
        }
    }
}

/// A bench kernel's pipeline and bind group, dispatched like the sampler:
/// over its (x, y) grid, with the prelude's `Params` uniform.
pub struct GridDispatch {
    pub pipeline: wgpu::ComputePipeline,
    pub bind_group: wgpu::BindGroup,
    pub params: wgpu::Buffer,
    pub workgroups: (u32, u32),
}

impl GridDispatch {
    /// Kernel `entry` of the WGSL `source` with its override `constants`,
    /// and a bind group of `entries` and a new `Params` buffer at
    /// `params_binding` (each next to its @binding number in the WGSL);
    /// labelled `label`, `{label}.wgsl`, `{label}.params` and
    /// `{label}.bind_group`. Dispatches nothing until [`Self::set`].
    pub fn new(
        device: &wgpu::Device,
        label: &str,
        source: String,
        entry: &str,
        constants: &[(&str, f64)],
        params_binding: u32,
        entries: &[wgpu::BindGroupEntry<'_>],
    ) -> Self {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(&format!("{label}.wgsl")),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(label),
            layout: None,
            module: &module,
            entry_point: Some(entry),
            compilation_options: wgpu::PipelineCompilationOptions {
                constants,
                ..Default::default()
            },
            cache: None,
        });
        let params = Self::params_buffer(device, &format!("{label}.params"));
        let mut all = vec![buffer_entry(params_binding, &params)];
        all.extend(entries.iter().cloned());
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(&format!("{label}.bind_group")),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &all,
        });
        GridDispatch {
            pipeline,
            bind_group,
            params,
            workgroups: (0, 0),
        }
    }

    /// The `Params` uniform buffer of a kernel, written by [`Self::set`].
    pub fn params_buffer(device: &wgpu::Device, label: &str) -> wgpu::Buffer {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: std::mem::size_of::<GpuParams>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Writes the `Params` of `instance_count` instances of
    /// `tracks_per_instance` tracks and `output_stride` floats each on the
    /// grid `workgroups` (the sampler's), and takes the grid.
    pub fn set(
        &mut self,
        queue: &wgpu::Queue,
        instance_count: u32,
        tracks_per_instance: u32,
        output_stride: u32,
        workgroups: (u32, u32),
    ) {
        let params = GpuParams {
            instance_count,
            tracks_per_instance,
            output_stride,
            row_invocations: workgroups.0 * WORKGROUP_SIZE,
        };
        queue.write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
        self.workgroups = workgroups;
    }

    /// Records the dispatch; nothing on an empty grid.
    pub fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        let (x, y) = self.workgroups;
        if x == 0 || y == 0 {
            return;
        }
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.dispatch_workgroups(x, y, 1);
    }
}

/// A bind group entry: the whole of buffer `b` at `binding` (written next
/// to its @binding number in the kernel's WGSL).
pub fn buffer_entry(binding: u32, b: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: b.as_entire_binding(),
    }
}
