//! The `floor` kernel: the least work of the sampler's shape, the
//! reference every workload's `gpu/floor` ratio is taken against.
//!
//! Same dispatch as the sampler's: one invocation per (instance, track),
//! instance-major (`index = i * tracks_per_instance + j`), the same
//! workgroup size and (x, y) grid, and the same output buffer (instances x
//! `output_stride` floats), each instance writing as many floats as the
//! sampler writes for it. Invocation (i, j) reads, and nothing else:
//!
//! - `times[i]`: the instance's clip-local time, one dense `f32` per
//!   instance (resolved on the host like the sampler's, wrap applied);
//! - `params` (the prelude's `Params`, a uniform: the instance count, the
//!   output stride and the row width of the grid); the tracks per instance,
//!   which `index` is divided by, are a pipeline constant (`TRACKS`): a
//!   division by a uniform is one scalar division per lane on the CPU
//!   adapters, a division by a constant a multiplication (the floor took
//!   15-20% longer on crowd_rot with the uniform; the sampler divides by a
//!   constant too, `GROUP_ROWS`);
//! - two key values of track j, keys k and k + 1 with
//!   `k = min(u32(time * RATE), KEYS - 2)` (uniformly spaced keys: the
//!   index comes from the time arithmetically), from a dense value array
//!   indexed by (block, track, key, component): one block per clip of the
//!   library (so that a frame touches as many distinct values as the
//!   sampler's), instance i reading block `i % BLOCKS`, from its index, not
//!   from a table; where every clip's tracks share their key times
//!   (`KEY_MAJOR`: long_keys), by (block, key, track, component) instead,
//!   so that an instance's tracks read neighbouring values, as the
//!   sampler's clip-blocks plan stores such tracks (the least work of that
//!   shape: `src/tables/run_values.rs`);
//!
//! and writes, per component, the sum of the two values. Where every
//! track's width and the output stride are multiples of 4 (rotations,
//! morph weights), the loads and stores are `vec4` (`floor_vec4`: one
//! `vec4` load per key and one `vec4` store per four components); otherwise
//! (`floor_f32`, mixed T/R/S) one `f32` load per key and one `f32` store
//! per component. It reads no instance, clip or track struct and no search
//! table or texture, and it does no search and no interpolation.
//!
//! The widths come from the workload: an instance's output is
//! `WIDE_TRACKS` tracks of `WIDE` floats, then the others of `NARROW` floats
//! (the tracks of every clip of a workload have one such composition, which
//! [`FloorShape::of`] checks); the key count is the library's largest.
//!
//! Its WGSL is the crate's prelude (`layout::PRELUDE_WGSL`, for `Params`
//! and `WORKGROUP_SIZE`) followed by this kernel's plain bindings, the
//! shape as pipeline-overridable constants, and its two entry points.

use std::mem::size_of;

use keyframe_gpu::internals::{GpuInstance, PRELUDE_WGSL};
use keyframe_gpu::AnimationLibrary;
use wgpu::util::DeviceExt;

use crate::gpu::{buffer_entry, GridDispatch};

/// The kernel after the prelude: its bindings, its shape and its entry
/// points.
const FLOOR_KERNEL_WGSL: &str = r#"
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> times: array<f32>;
@group(0) @binding(2) var<storage, read> values: array<f32>;
@group(0) @binding(3) var<storage, read_write> output: array<f32>;
@group(0) @binding(4) var<storage, read> values4: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> output4: array<vec4<f32>>;

// Keys per track (at least 2), uniformly spaced: RATE keys per second.
override KEYS: u32 = 2u;
override RATE: f32 = 1.0;
// Value blocks: one per clip of the library.
override BLOCKS: u32 = 1u;
// An instance's output: WIDE_TRACKS tracks of WIDE floats, then the others
// of NARROW floats; TRACK_FLOATS in all (one key of every track).
override WIDE_TRACKS: u32 = 0u;
override WIDE: u32 = 4u;
override NARROW: u32 = 4u;
override TRACK_FLOATS: u32 = 4u;
// Tracks per instance, as a constant: the divisor of the instance-major
// index (a division by a constant is a multiplication; by a uniform, one
// scalar division per lane on the CPU adapters).
override TRACKS: u32 = 1u;
// Values key by key (every track of a clip at key k, then at k + 1)
// instead of track by track: for libraries whose tracks share their key
// times.
override KEY_MAJOR: bool = false;

// Every width a multiple of 4: vec4 loads and stores.
@compute @workgroup_size(WORKGROUP_SIZE)
fn floor_vec4(@builtin(global_invocation_id) gid: vec3<u32>) {
    let index = gid.y * params.row_invocations + gid.x;
    let per_instance = TRACKS;
    if (index >= params.instance_count * per_instance) {
        return;
    }
    let i = index / per_instance;
    let j = index % per_instance;
    let k = min(u32(times[i] * RATE), KEYS - 2u);
    let w4 = WIDE / 4u;
    let block = (i % BLOCKS) * KEYS * (TRACK_FLOATS / 4u);
    var b0 = block + (j * KEYS + k) * w4;
    var next = w4;
    if (KEY_MAJOR) {
        b0 = block + k * (TRACK_FLOATS / 4u) + j * w4;
        next = TRACK_FLOATS / 4u;
    }
    let out = i * (params.output_stride / 4u) + j * w4;
    for (var c = 0u; c < w4; c++) {
        output4[out + c] = values4[b0 + c] + values4[b0 + next + c];
    }
}

// Mixed widths: f32 loads and stores.
@compute @workgroup_size(WORKGROUP_SIZE)
fn floor_f32(@builtin(global_invocation_id) gid: vec3<u32>) {
    let index = gid.y * params.row_invocations + gid.x;
    let per_instance = TRACKS;
    if (index >= params.instance_count * per_instance) {
        return;
    }
    let i = index / per_instance;
    let j = index % per_instance;
    let k = min(u32(times[i] * RATE), KEYS - 2u);
    let wide = j < WIDE_TRACKS;
    let w = select(NARROW, WIDE, wide);
    let offset = select(WIDE_TRACKS * WIDE + (j - WIDE_TRACKS) * NARROW, j * WIDE, wide);
    let block = (i % BLOCKS) * KEYS * TRACK_FLOATS;
    var b0 = block + offset * KEYS + k * w;
    var next = w;
    if (KEY_MAJOR) {
        b0 = block + k * TRACK_FLOATS + offset;
        next = TRACK_FLOATS;
    }
    let out = i * params.output_stride + offset;
    for (var c = 0u; c < w; c++) {
        output[out + c] = values[b0 + c] + values[b0 + next + c];
    }
}
"#;

/// The whole shader: the crate's prelude, then the kernel.
pub fn floor_wgsl() -> String {
    format!("{PRELUDE_WGSL}\n{FLOOR_KERNEL_WGSL}")
}

/// The floor's shape, taken from a library.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloorShape {
    /// Keys per track: the library's largest key count, at least 2.
    pub keys: u32,
    /// Keys per second: `(keys - 1)` over the longest clip's duration.
    pub rate: f32,
    /// Value blocks: the library's clip count.
    pub blocks: u32,
    /// Tracks per instance (the dispatch's), `wide_tracks` of them `wide`
    /// floats wide, the others `narrow`.
    pub tracks: u32,
    pub wide_tracks: u32,
    pub wide: u32,
    pub narrow: u32,
    /// `f32`s per instance in the output (the sampler's).
    pub output_stride: u32,
    /// Every clip's tracks share their key times: values key by key.
    pub key_major: bool,
}

impl FloorShape {
    /// The shape of a library whose clips all have the same composition of
    /// track widths, of at most two widths; an error names what differs.
    pub fn of(library: &AnimationLibrary) -> Result<Self, String> {
        let mut composition: Option<Vec<u32>> = None;
        let mut keys = 2u32;
        let mut duration = 0.0f32;
        let mut key_major = true;
        for (c, clip) in library.clips().iter().enumerate() {
            let rows = &clip.tracks;
            // The library stores equal key times once.
            let bits =
                |t: &keyframe_gpu::Track| t.times.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            key_major &= rows.iter().all(|t| bits(t) == bits(&rows[0]));
            let mut widths: Vec<u32> = rows.iter().map(|t| t.width).collect();
            widths.sort_unstable_by(|a, b| b.cmp(a));
            keys = rows
                .iter()
                .map(|t| t.times.len() as u32)
                .fold(keys, u32::max);
            duration = duration.max(clip.duration());
            match &composition {
                None => composition = Some(widths),
                Some(w) if *w == widths => {}
                Some(_) => return Err(format!("clip {c}'s track widths differ from clip 0's")),
            }
        }
        let widths = composition.unwrap_or_default();
        let wide = widths.first().copied().unwrap_or(4);
        let wide_tracks = widths.iter().filter(|&&w| w == wide).count() as u32;
        let narrow = widths.last().copied().unwrap_or(wide);
        if widths.iter().any(|&w| w != wide && w != narrow) {
            return Err(format!("more than two track widths: {widths:?}"));
        }
        if widths.len() as u32 != library.tracks_per_instance() {
            return Err("the clips have fewer tracks than the dispatch".into());
        }
        Ok(FloorShape {
            keys,
            rate: if duration > 0.0 {
                (keys - 1) as f32 / duration
            } else {
                0.0
            },
            blocks: library.clips().len().max(1) as u32,
            tracks: widths.len() as u32,
            wide_tracks,
            wide,
            narrow,
            output_stride: library.output_stride(),
            key_major,
        })
    }

    /// `f32`s of one key of every track of an instance.
    pub fn track_floats(&self) -> u32 {
        self.wide_tracks * self.wide + (self.tracks - self.wide_tracks) * self.narrow
    }

    /// Whether `floor_vec4` applies: one width, a multiple of 4, and a
    /// stride that is one too.
    pub fn vec4(&self) -> bool {
        self.wide_tracks == self.tracks
            && self.wide.is_multiple_of(4)
            && self.output_stride.is_multiple_of(4)
    }
}

/// Value `n` of the floor's dense value array: a cheap hash of the index,
/// which the compiler cannot fold.
fn value(n: u64) -> f32 {
    ((n.wrapping_mul(2_654_435_761) >> 8) & 0xffff) as f32 / 65536.0
}

pub struct Floor {
    dispatch: GridDispatch,
    /// The output (the bind group holds it too); read back by the test.
    #[cfg_attr(not(test), expect(dead_code, reason = "read back by the test"))]
    output: wgpu::Buffer,
    times: wgpu::Buffer,
    scratch: Vec<f32>,
}

impl Floor {
    pub fn new(device: &wgpu::Device, shape: FloorShape, capacity: u32) -> Self {
        let floats = u64::from(shape.blocks)
            * u64::from(shape.keys)
            * u64::from(shape.track_floats().max(1));
        let data: Vec<f32> = (0..floats).map(value).collect();
        let values = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("bench.floor.values"),
            contents: bytemuck::cast_slice(&data),
            usage: wgpu::BufferUsages::STORAGE,
        });
        drop(data);
        let times = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("bench.floor.times"),
            size: u64::from(capacity.max(1)) * size_of::<f32>() as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let output = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("bench.floor.output"),
            size: (u64::from(capacity.max(1))
                * u64::from(shape.output_stride)
                * size_of::<f32>() as u64)
                .max(16),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let vec4 = shape.vec4();
        let constants = [
            ("KEYS", f64::from(shape.keys)),
            ("RATE", f64::from(shape.rate)),
            ("BLOCKS", f64::from(shape.blocks)),
            ("WIDE_TRACKS", f64::from(shape.wide_tracks)),
            ("WIDE", f64::from(shape.wide)),
            ("NARROW", f64::from(shape.narrow)),
            ("TRACK_FLOATS", f64::from(shape.track_floats())),
            ("TRACKS", f64::from(shape.tracks.max(1))),
            ("KEY_MAJOR", if shape.key_major { 1.0 } else { 0.0 }),
        ];
        // Each resource next to its @binding number in the WGSL above; the
        // entry point uses either (2, 3) or (4, 5).
        let (values_binding, output_binding) = if vec4 { (4, 5) } else { (2, 3) };
        let dispatch = GridDispatch::new(
            device,
            "bench.floor",
            floor_wgsl(),
            if vec4 { "floor_vec4" } else { "floor_f32" },
            &constants,
            0,
            &[
                buffer_entry(1, &times),
                buffer_entry(values_binding, &values),
                buffer_entry(output_binding, &output),
            ],
        );
        Floor {
            dispatch,
            output,
            times,
            scratch: Vec::with_capacity(capacity as usize),
        }
    }

    /// Writes the resolved instances' times and takes the sampler's
    /// dispatch grid (`workgroups`, same instances).
    pub fn set_instances(
        &mut self,
        queue: &wgpu::Queue,
        shape: &FloorShape,
        resolved: &[GpuInstance],
        workgroups: (u32, u32),
    ) {
        self.scratch.clear();
        self.scratch.extend(resolved.iter().map(|r| r.time));
        if !self.scratch.is_empty() {
            queue.write_buffer(&self.times, 0, bytemuck::cast_slice(&self.scratch));
        }
        let count = resolved.len() as u32;
        let (tracks, stride) = (shape.tracks, shape.output_stride);
        self.dispatch.set(queue, count, tracks, stride, workgroups);
    }

    pub fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.dispatch.record_pass(pass);
    }
}

#[cfg(test)]
mod tests {
    /// The prelude and the kernel make one valid module with both entry
    /// points, and neither reads a struct of the sampler's tables
    /// (`cargo test --example bench`).
    #[test]
    fn floor_wgsl_parses_and_validates() {
        let source = super::floor_wgsl();
        let module = crate::validated_wgsl(&source);
        for name in ["floor_vec4", "floor_f32"] {
            assert!(module.entry_points.iter().any(|e| e.name == name), "{name}");
        }
        // Its bindings: no struct of the sampler's tables, no texture.
        for (_, var) in module.global_variables.iter() {
            let mut ty = &module.types[var.ty];
            if let naga::TypeInner::Array { base, .. } = ty.inner {
                ty = &module.types[base];
            }
            assert!(
                !matches!(ty.inner, naga::TypeInner::Image { .. }),
                "the floor reads no texture: {:?}",
                var.name
            );
            let name = ty.name.as_deref().unwrap_or("");
            for table in ["Track", "Clip", "Instance", "SampleRow", "SampleBlock"] {
                assert_ne!(name, table, "the floor reads no {table}: {:?}", var.name);
            }
        }
    }
}

#[cfg(test)]
mod shape_tests {
    use super::FloorShape;
    use keyframe_gpu::AnimationLibrary;

    /// Every workload's clips have one composition the floor takes, and
    /// the floor writes as many floats per instance as each clip's tracks.
    #[test]
    fn every_workload_has_a_floor_shape() {
        for (name, build) in crate::workloads::workloads(true) {
            let w = build();
            let library = AnimationLibrary::new(w.clips).expect(name);
            let shape = FloorShape::of(&library).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(shape.keys >= 2, "{name}");
            for clip in library.clips() {
                let width: u32 = clip.tracks.iter().map(|t| t.width).sum();
                assert_eq!(shape.track_floats(), width, "{name}");
            }
            let expect_vec4 = !name.starts_with("crowd_mixed");
            assert_eq!(shape.vec4(), expect_vec4, "{name}: {shape:?}");
            // Key by key where every clip's tracks share their key times:
            // long_keys's 30 fps keys, and clips of one track.
            let shared = name == "long_keys" || name == "morph" || name == "tiny";
            assert_eq!(shape.key_major, shared, "{name}: {shape:?}");
        }
    }
}

#[cfg(test)]
mod gpu_tests {
    use super::{value, Floor, FloorShape};
    use keyframe_gpu::internals::resolve_instances_into;
    use keyframe_gpu::internals::WORKGROUP_SIZE;
    use keyframe_gpu::AnimationLibrary;

    /// What the floor computes, on the CPU: for every (instance, track),
    /// per component, the sum of keys k and k + 1 of the dense array.
    fn expected(shape: &FloorShape, times: &[f32]) -> Vec<f32> {
        let mut out = vec![0.0f32; times.len() * shape.output_stride as usize];
        let tf = u64::from(shape.track_floats());
        let keys = u64::from(shape.keys);
        for (i, &t) in times.iter().enumerate() {
            let k = u64::from(((t * shape.rate) as u32).min(shape.keys - 2));
            let block = i as u64 % u64::from(shape.blocks);
            for j in 0..shape.tracks {
                let wide = j < shape.wide_tracks;
                let w = if wide { shape.wide } else { shape.narrow };
                let offset = if wide {
                    j * shape.wide
                } else {
                    shape.wide_tracks * shape.wide + (j - shape.wide_tracks) * shape.narrow
                };
                let (b0, next) = if shape.key_major {
                    (block * keys * tf + k * tf + u64::from(offset), tf)
                } else {
                    (
                        block * keys * tf + u64::from(offset) * keys + k * u64::from(w),
                        u64::from(w),
                    )
                };
                for c in 0..u64::from(w) {
                    let o = i * shape.output_stride as usize + offset as usize + c as usize;
                    out[o] = value(b0 + c) + value(b0 + next + c);
                }
            }
        }
        out
    }

    /// The floor writes exactly what its documentation says, in both entry
    /// points (on the bench's adapter; skipped without one unless
    /// `KEYFRAME_GPU_REQUIRE_ADAPTER=1`).
    #[test]
    fn floor_writes_the_sum_of_two_keys() {
        let gpu = match crate::gpu::Gpu::new() {
            Ok(g) => g,
            Err(e) => {
                assert!(
                    std::env::var("KEYFRAME_GPU_REQUIRE_ADAPTER").as_deref() != Ok("1"),
                    "no adapter: {e}"
                );
                eprintln!("skipped: no adapter: {e}");
                return;
            }
        };
        let (device, queue) = (&gpu.h.device, &gpu.h.queue);
        for (name, build) in crate::workloads::workloads(true) {
            if !["crowd_rot", "crowd_mixed", "morph", "long_keys"].contains(&name) {
                continue;
            }
            let w = build();
            let library = AnimationLibrary::new(w.clips).expect(name);
            let shape = FloorShape::of(&library).expect(name);
            let instances = &w.instances[..37];
            let mut resolved = Vec::new();
            resolve_instances_into(&library, instances, &mut resolved).expect(name);
            let mut floor = Floor::new(device, shape, instances.len() as u32);
            let grid = keyframe_gpu::internals::dispatch_grid(
                instances.len() as u32 * shape.tracks,
                WORKGROUP_SIZE,
                gpu.max_workgroups_per_dim,
            );
            floor.set_instances(queue, &shape, &resolved, grid);
            let read = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("bench.floor.test.read"),
                size: floor.output.size(),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let mut encoder = device.create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                floor.record_pass(&mut pass);
            }
            encoder.copy_buffer_to_buffer(&floor.output, 0, &read, 0, floor.output.size());
            queue.submit([encoder.finish()]);
            let bytes = gpu.h.read_buffer(&read).expect(name);
            let got: Vec<f32> = bytemuck::pod_collect_to_vec(&bytes);
            let times: Vec<f32> = resolved.iter().map(|r| r.time).collect();
            assert_eq!(got, expected(&shape, &times), "{name}");
        }
    }
}
