//! The "roofline" kernel: the sampler's dispatch shape and output, without
//! the key search and without interpolation.
//!
//! Each invocation does what the sampler must do in any case: read its
//! instance, clip and track rows (from the same buffers as the sampler, and
//! the key count from the sampler's track search texture, where the
//! sampler reads it), then for each output component read two
//! values (keys k and k + 1, where k comes from the time by one
//! multiplication: the memory traffic of a perfect key lookup) and write
//! their sum. Same workgroup size, same (x, y) grid, same output layout and
//! size. What it does not do: search the keys, compute an interpolation
//! factor, slerp or evaluate a spline. The sampler's time over this one is
//! the price of the search and the interpolation.

use keyframe_gpu::gpu::KeyTextures;
use keyframe_gpu::layout::{GpuInstance, GpuParams, GpuTrack, WORKGROUP_SIZE};
use keyframe_gpu::AnimationLibrary;
use wgpu::util::DeviceExt;

const ROOFLINE_WGSL: &str = r#"
struct Track {
    times_offset: u32,
    key_count: u32,
    values_offset: u32,
    width: u32,
    interpolation: u32,
    property: u32,
    output_offset: u32,
    node: u32,
    lookup_scale: f32,
    lookup_origin: f32,
}
struct Clip { track_offset: u32, track_count: u32, output_width: u32, duration: f32, group_first: array<u32, 5>, group_count: array<u32, 5>, }
struct Instance { clip: u32, time: f32, _pad0: u32, _pad1: u32, }
struct Params { instance_count: u32, tracks_per_instance: u32, output_stride: u32, row_invocations: u32, }

@group(0) @binding(0) var<storage, read> values: array<f32>;
@group(0) @binding(1) var<storage, read> tracks: array<Track>;
@group(0) @binding(2) var<storage, read> clips: array<Clip>;
@group(0) @binding(3) var<storage, read> instances: array<Instance>;
@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(5) var<storage, read_write> output: array<f32>;
@group(0) @binding(6) var track_search: texture_2d<u32>;

override ROW_SHIFT: u32 = 12u;

@compute @workgroup_size(64)
fn roofline_main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let index = gid.y * params.row_invocations + gid.x;
    let per_instance = params.tracks_per_instance;
    if (per_instance == 0u || index >= params.instance_count * per_instance) {
        return;
    }
    let i = index / per_instance;
    let j = index % per_instance;
    let inst = instances[i];
    let clip = clips[inst.clip];
    if (j >= clip.track_count) {
        return;
    }
    let row = clip.track_offset + j;
    let track = tracks[row];
    let key_count = textureLoad(track_search, vec2<u32>(row & ((1u << ROW_SHIFT) - 1u), row >> ROW_SHIFT), 0).y;
    let last = key_count - 1u;
    let f = clamp(inst.time / max(clip.duration, 1e-30), 0.0, 1.0);
    let k = min(u32(f * f32(last)), max(last, 1u) - 1u);
    var elements = 1u;
    if (track.interpolation == 2u) {
        elements = 3u;
    }
    let b0 = track.values_offset + k * elements * track.width;
    let b1 = b0 + elements * track.width;
    let out = i * params.output_stride + track.output_offset;
    for (var c = 0u; c < track.width; c++) {
        output[out + c] = values[b0 + c] + values[b1 + c];
    }
}
"#;

pub struct Roofline {
    _keys: KeyTextures,
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    instances: wgpu::Buffer,
    params: wgpu::Buffer,
    workgroups: (u32, u32),
}

impl Roofline {
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        library: &AnimationLibrary,
        capacity: u32,
    ) -> Result<Self, keyframe_gpu::Error> {
        let keys = KeyTextures::new(device, queue, library)?;
        // The WGSL Track above is the library's track row (src/layout.rs).
        const _: () = assert!(std::mem::size_of::<GpuTrack>() == 40);
        let storage = |label: &str, contents: &[u8], extra: wgpu::BufferUsages| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage: wgpu::BufferUsages::STORAGE | extra,
            })
        };
        let none = wgpu::BufferUsages::empty();
        let values = storage(
            "bench.roofline.values",
            bytemuck::cast_slice(library.values()),
            none,
        );
        let tracks = storage(
            "bench.roofline.tracks",
            bytemuck::cast_slice(library.tracks()),
            none,
        );
        let clips = storage(
            "bench.roofline.clips",
            bytemuck::cast_slice(library.clip_table()),
            none,
        );
        let instances = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("bench.roofline.instances"),
            size: u64::from(capacity.max(1)) * std::mem::size_of::<GpuInstance>() as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let params = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("bench.roofline.params"),
            size: std::mem::size_of::<GpuParams>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let output = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("bench.roofline.output"),
            size: (u64::from(capacity.max(1)) * u64::from(library.output_stride()) * 4).max(4),
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("bench.roofline.wgsl"),
            source: wgpu::ShaderSource::Wgsl(ROOFLINE_WGSL.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("bench.roofline"),
            layout: None,
            module: &module,
            entry_point: Some("roofline_main"),
            compilation_options: wgpu::PipelineCompilationOptions {
                constants: &[("ROW_SHIFT", f64::from(keys.row_shift()))],
                ..Default::default()
            },
            cache: None,
        });
        let layout = pipeline.get_bind_group_layout(0);
        let buffers = [&values, &tracks, &clips, &instances, &params, &output];
        let entries: Vec<_> = buffers
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: b.as_entire_binding(),
            })
            .chain(std::iter::once(wgpu::BindGroupEntry {
                binding: 6,
                resource: wgpu::BindingResource::TextureView(keys.track_search()),
            }))
            .collect();
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("bench.roofline.bind_group"),
            layout: &layout,
            entries: &entries,
        });
        Ok(Roofline {
            _keys: keys,
            pipeline,
            bind_group,
            instances,
            params,
            workgroups: (0, 0),
        })
    }

    /// Writes the resolved instance table and takes the sampler's dispatch
    /// grid (`workgroups` from `GpuSampler::workgroups`, same instances).
    pub fn set_instances(
        &mut self,
        queue: &wgpu::Queue,
        library: &AnimationLibrary,
        resolved: &[GpuInstance],
        workgroups: (u32, u32),
    ) {
        let params = GpuParams {
            instance_count: resolved.len() as u32,
            tracks_per_instance: library.tracks_per_instance(),
            output_stride: library.output_stride(),
            row_invocations: workgroups.0 * WORKGROUP_SIZE,
        };
        if !resolved.is_empty() {
            queue.write_buffer(&self.instances, 0, bytemuck::cast_slice(resolved));
        }
        queue.write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
        self.workgroups = workgroups;
    }

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
