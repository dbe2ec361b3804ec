//! The `tables` kernel: the sampler's table reads and dispatch shape,
//! without the key search and without interpolation. Not a floor (that is
//! `floor.rs`): it shares the sampler's indirections, so the sampler's time
//! over this one is the price of the search and the interpolation alone,
//! and this one's time over the floor is the price of the tables.
//!
//! Each invocation reads what the sampler's `sample_main` (the reference
//! and CPU-adapter plans) reads in any case, from the same textures: its
//! instance, its clip's first row and row count (one `clip_groups` texel,
//! all the clip's rows), the two texels of its track row
//! (`track_search`), then for each output component two values (keys k
//! and k + 1, where k comes from the time by one multiplication at 30 keys
//! a second, the bench's rate: the memory traffic of a perfect key
//! lookup), and writes their sum. Same workgroup size, same (x, y) grid,
//! same output layout and size. What it does not do: search the keys,
//! compute an interpolation factor, slerp or evaluate a spline. (The
//! clip-blocks plan reads less per lane: its rows come from uniforms.)
//!
//! Its WGSL is the crate's prelude (`layout::PRELUDE_WGSL`: `Instance`,
//! `Params` and the shared constants, the same text every kernel of the
//! crate is built from) followed by this kernel's own bindings and entry
//! point, so no struct is declared twice.

use std::mem::size_of;

use keyframe_gpu::internals::{GpuInstance, PRELUDE_WGSL};
use keyframe_gpu::internals::{KeyTextures, LibraryTables};
use keyframe_gpu::AnimationLibrary;
use wgpu::util::DeviceExt;

use crate::gpu::{buffer_entry, GridDispatch};

/// The kernel after the prelude: its bindings and its entry point.
const TABLES_KERNEL_WGSL: &str = r#"
@group(0) @binding(0) var<storage, read> values: array<f32>;
@group(0) @binding(3) var<storage, read> instances: array<Instance>;
@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(5) var<storage, read_write> output: array<f32>;
@group(0) @binding(6) var track_search: texture_2d<u32>;
@group(0) @binding(7) var clip_groups: texture_2d<u32>;

override ROW_SHIFT: u32 = KEY_TEXTURE_ROW_SHIFT;
// Tracks per instance as a constant, as the sampler divides by it.
override TRACKS: u32 = 1u;

fn texel(i: u32) -> vec2<u32> {
    return vec2<u32>(i & ((1u << ROW_SHIFT) - 1u), i >> ROW_SHIFT);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn tables_main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let index = gid.y * params.row_invocations + gid.x;
    let per_instance = TRACKS;
    if (index >= params.instance_count * per_instance) {
        return;
    }
    let i = index / per_instance;
    let j = index % per_instance;
    let inst = instances[i];
    let group = textureLoad(clip_groups, texel(inst.clip * (SAMPLE_GROUPS + 1u) + GROUP_ALL), 0);
    if (j >= group.y) {
        return;
    }
    let row = group.x + j;
    let search = textureLoad(track_search, texel(2u * row), 0);
    let track = textureLoad(track_search, texel(2u * row + 1u), 0);
    let values_offset = track.x;
    let output_offset = track.y;
    let width = track.z;
    let interpolation = track.w & 0xffffu;
    let last = search.y - 1u;
    let k = min(u32(max(inst.time, 0.0) * 30.0), max(last, 1u) - 1u);
    var elements = 1u;
    if (interpolation == INTERP_CUBICSPLINE) {
        elements = 3u;
    }
    let b0 = values_offset + k * elements * width;
    let b1 = b0 + elements * width;
    let out = i * params.output_stride + output_offset;
    for (var c = 0u; c < width; c++) {
        output[out + c] = values[b0 + c] + values[b1 + c];
    }
}
"#;

/// The whole shader: the crate's prelude, then the kernel.
pub fn tables_wgsl() -> String {
    format!("{PRELUDE_WGSL}\n{TABLES_KERNEL_WGSL}")
}

pub struct Tables {
    _keys: KeyTextures,
    dispatch: GridDispatch,
    instances: wgpu::Buffer,
}

impl Tables {
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        library: &AnimationLibrary,
        capacity: u32,
    ) -> Result<Self, keyframe_gpu::Error> {
        let flat = LibraryTables::of(library)?;
        let keys = KeyTextures::new(device, queue, &flat)?;
        let storage = |label: &str, contents: &[u8], extra: wgpu::BufferUsages| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage: wgpu::BufferUsages::STORAGE | extra,
            })
        };
        let none = wgpu::BufferUsages::empty();
        let values = storage(
            "bench.tables.values",
            bytemuck::cast_slice(flat.values()),
            none,
        );
        let instances = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("bench.tables.instances"),
            size: u64::from(capacity.max(1)) * size_of::<GpuInstance>() as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let output = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("bench.tables.output"),
            size: (u64::from(capacity.max(1))
                * u64::from(library.output_stride())
                * size_of::<f32>() as u64)
                .max(size_of::<f32>() as u64),
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let constants = [
            ("ROW_SHIFT", f64::from(keys.row_shift())),
            ("TRACKS", f64::from(library.tracks_per_instance().max(1))),
        ];
        // Each resource next to its @binding number in the WGSL above.
        let dispatch = GridDispatch::new(
            device,
            "bench.tables",
            tables_wgsl(),
            "tables_main",
            &constants,
            4,
            &[
                buffer_entry(0, &values),
                buffer_entry(3, &instances),
                buffer_entry(5, &output),
                wgpu::BindGroupEntry {
                    binding: 6,
                    resource: wgpu::BindingResource::TextureView(keys.track_search()),
                },
                wgpu::BindGroupEntry {
                    binding: 7,
                    resource: wgpu::BindingResource::TextureView(keys.clip_groups()),
                },
            ],
        );
        Ok(Tables {
            _keys: keys,
            dispatch,
            instances,
        })
    }

    /// Writes the resolved instance table and takes the sampler's dispatch
    /// grid (the sampler's grid for the same instances).
    pub fn set_instances(
        &mut self,
        queue: &wgpu::Queue,
        library: &AnimationLibrary,
        resolved: &[GpuInstance],
        workgroups: (u32, u32),
    ) {
        if !resolved.is_empty() {
            queue.write_buffer(&self.instances, 0, bytemuck::cast_slice(resolved));
        }
        let count = resolved.len() as u32;
        let tracks = library.tracks_per_instance();
        let stride = library.output_stride();
        self.dispatch.set(queue, count, tracks, stride, workgroups);
    }

    pub fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.dispatch.record_pass(pass);
    }
}

#[cfg(test)]
mod tests {
    /// The prelude and the kernel make one valid module: no struct or
    /// constant is missing or declared twice (`cargo test --example bench`).
    #[test]
    fn tables_wgsl_parses_and_validates() {
        let source = super::tables_wgsl();
        let module = crate::validated_wgsl(&source);
        assert!(module.entry_points.iter().any(|e| e.name == "tables_main"));
    }
}
