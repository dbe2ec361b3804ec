//! Benchmark of the GPU sampler against a trivial kernel of the same shape
//! (the device's practical limit) and against the CPU reference.
//!
//! `cargo run --release --example bench -- [--json] [--quick] [--plot FILE.png]`
//!
//! Workloads (seeded random data built in code, see `bench/data.rs`):
//! `crowd_rot`, `crowd_mixed`, `crowd_coherent`, `long_keys`,
//! `long_keys_irregular`, `morph`, `skin_chain` (sampling followed by the
//! morph and skin passes of `gpu::skin`), `tiny`. For each, on the same
//! device in the same run, medians over frames after a warm-up:
//! - `gpu_ms`: `set_instances` + record + submit + wait (`device.poll`),
//!   no readback. With `Features::TIMESTAMP_QUERY` the time between the
//!   pass's begin and end timestamps; otherwise wall time of the whole frame.
//!   The wall time is printed in the table in both cases.
//! - `gpu_readback_ms`: wall time of one steady-state frame that also reads
//!   results back, pipelined through a two-slot `gpu::ReadbackRing`: set +
//!   record + copy into a staging slot + submit frame N + `map_async`, then
//!   wait for frame N-1 (its own submission only) and copy it into a reused
//!   `Vec` (`skin_chain`: the joint matrices). Frame N runs while frame
//!   N-1 is read; the blocking `read_back` would wait for frame N itself.
//! - `roofline_ms`: the kernel in `bench/roofline.rs`, measured like `gpu_ms`.
//! - `cpu_ms`: `resolve_instances_into` + `cpu::sample_resolved`, one thread
//!   (`skin_chain`: then `cpu_skin::pose_resolved`).
//! - `gpu_over_roofline`: the median over frames of `gpu_ms / roofline_ms`,
//!   each sampler frame paired with the roofline frame right after it (the
//!   same machine load), which is steadier on a shared machine than the
//!   ratio of the two medians.
//! - `skin_chain` also reports `sample_ms`, the sampling pass alone, timed
//!   in the same frames; "whole chain / sampling" is the median of the
//!   per-frame ratios; its roofline is that of the sampling shape.
//!
//! With `--json`, stdout holds one JSON object per workload per line and
//! nothing else; the table goes to stderr.

mod data;
mod plot;
mod roofline;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use keyframe_gpu::gpu::headless::{request_device, AdapterChoice};
use keyframe_gpu::gpu::skin::{GpuSkinner, SkinStrategy};
use keyframe_gpu::gpu::ReadbackRing;
use keyframe_gpu::layout::{GpuInstance, WORKGROUP_SIZE};
use keyframe_gpu::rig::{Rig, SkinTables};
use keyframe_gpu::{
    compare, cpu, cpu_skin, resolve_instances_into, AnimationLibrary, Clip, GpuSampler, Instance,
    WrapMode,
};

use data::{Rng, Spacing};
use roofline::Roofline;

/// Counts heap allocations, so that the bench can show how many happen per
/// frame in steady state, and where.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator; only adds a relaxed counter.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.load(Ordering::Relaxed)
}

#[derive(Parser, Debug)]
#[command(about = "Benchmark of the keyframe-gpu sampler")]
struct Args {
    /// One JSON object per workload per line on stdout (table on stderr).
    #[arg(long)]
    json: bool,
    /// Reduced sizes and frame counts (under a minute on 2 CPU cores).
    #[arg(long)]
    quick: bool,
    /// Also sweep key count and instance count and write a PNG chart.
    #[arg(long, value_name = "FILE.png")]
    plot: Option<std::path::PathBuf>,
    /// Run only the workloads whose names contain one of these (comma list).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// The skin pass's strategy for `skin_chain` (`gpu::skin::SkinStrategy`):
    /// auto picks per-instance on CPU adapters, per-node on GPUs.
    #[arg(long, value_enum, default_value = "auto")]
    skin_strategy: StrategyArg,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum StrategyArg {
    Auto,
    PerInstance,
    PerNode,
}

impl From<StrategyArg> for SkinStrategy {
    fn from(s: StrategyArg) -> Self {
        match s {
            StrategyArg::Auto => SkinStrategy::Auto,
            StrategyArg::PerInstance => SkinStrategy::PerInstance,
            StrategyArg::PerNode => SkinStrategy::PerNode,
        }
    }
}

/// How many frames to measure.
#[derive(Clone, Copy)]
struct Frames {
    warmup: usize,
    min: usize,
    max: usize,
    min_time: Duration,
}

/// Pass timestamps: a two-entry query set, resolved and copied to a
/// mappable buffer each frame. All created once.
struct Timer {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    read: wgpu::Buffer,
    period_ns: f64,
}

struct Gpu {
    device: wgpu::Device,
    queue: wgpu::Queue,
    timer: Option<Timer>,
    adapter: String,
    backend: String,
    max_workgroups_per_dim: u32,
    skin_strategy: SkinStrategy,
}

impl Gpu {
    fn new() -> Result<Self, String> {
        let h = request_device(AdapterChoice::PreferHardware).map_err(|e| e.to_string())?;
        let info = h.adapter.get_info();
        let adapter = info.name.clone();
        let backend = format!("{:?}", info.backend).to_lowercase();
        let has_ts = h
            .adapter
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY);
        let (device, queue) = if has_ts {
            // The same adapter and limits as request_device, plus timestamps.
            pollster::block_on(h.adapter.request_device(&wgpu::DeviceDescriptor {
                label: Some("bench.device"),
                required_features: wgpu::Features::TIMESTAMP_QUERY,
                required_limits: h.adapter.limits(),
                ..Default::default()
            }))
            .map_err(|e| e.to_string())?
        } else {
            (h.device, h.queue)
        };
        let timer = has_ts.then(|| Timer {
            queries: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("bench.timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            }),
            resolve: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("bench.timestamps.resolve"),
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            read: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("bench.timestamps.read"),
                size: 16,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            period_ns: f64::from(queue.get_timestamp_period()),
        });
        let max_workgroups_per_dim = device.limits().max_compute_workgroups_per_dimension;
        Ok(Gpu {
            device,
            queue,
            timer,
            adapter,
            backend,
            max_workgroups_per_dim,
            skin_strategy: SkinStrategy::Auto,
        })
    }

    fn timing(&self) -> &'static str {
        if self.timer.is_some() {
            "timestamp queries (compute pass begin..end)"
        } else {
            "wall clock (set_instances..poll wait); the adapter has no TIMESTAMP_QUERY"
        }
    }

    fn wait(&self) {
        if let Err(e) = self.device.poll(wgpu::PollType::wait_indefinitely()) {
            eprintln!("bench: device poll failed: {e}");
            std::process::exit(2);
        }
    }

    /// Reads the two timestamps of the last frame, in ms.
    fn read_timestamps(&self, timer: &Timer) -> f64 {
        let slice = timer.read.slice(..);
        slice.map_async(wgpu::MapMode::Read, |_| {});
        self.wait();
        let ms = match slice.get_mapped_range() {
            Ok(view) => {
                let ticks: &[u64] = bytemuck::cast_slice(&view);
                ticks[1].saturating_sub(ticks[0]) as f64 * timer.period_ns / 1e6
            }
            Err(e) => {
                eprintln!("bench: timestamp readback failed: {e}");
                std::process::exit(2);
            }
        };
        timer.read.unmap();
        ms
    }
}

/// Something that can be set up for a frame and recorded into a pass.
trait Kernel {
    fn set(&mut self, queue: &wgpu::Queue, instances: &[Instance]);
    fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>);
}

impl Kernel for GpuSampler {
    fn set(&mut self, queue: &wgpu::Queue, instances: &[Instance]) {
        if let Err(e) = self.set_instances(queue, instances) {
            eprintln!("bench: set_instances: {e}");
            std::process::exit(2);
        }
    }
    fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        GpuSampler::record_pass(self, pass);
    }
}

/// The roofline kernel with what it needs to resolve instances like the
/// sampler does (host wrap in f64) and to compute the same dispatch grid.
struct RooflineKernel<'a> {
    kernel: Roofline,
    library: &'a AnimationLibrary,
    scratch: Vec<GpuInstance>,
    max_dim: u32,
}

impl Kernel for RooflineKernel<'_> {
    fn set(&mut self, queue: &wgpu::Queue, instances: &[Instance]) {
        if let Err(e) = resolve_instances_into(self.library, instances, &mut self.scratch) {
            eprintln!("bench: resolve: {e}");
            std::process::exit(2);
        }
        // One dispatch over every (instance, track) of the widest clip: as
        // many invocations as the sampler's group dispatches together when
        // clips share one composition (every workload here).
        let invocations = self.scratch.len() as u32 * self.library.tracks_per_instance();
        let (x, y) = keyframe_gpu::gpu::dispatch_grid(invocations, WORKGROUP_SIZE, self.max_dim);
        self.kernel
            .set_instances(queue, self.library, &self.scratch, (x, y));
    }
    fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.kernel.record_pass(pass);
    }
}

/// One measured frame.
#[derive(Clone, Copy, Default)]
struct FrameTime {
    wall_ms: f64,
    gpu_ms: f64,
    allocs_set: u64,
    allocs_record: u64,
    allocs_submit: u64,
}

/// set + record + submit + wait; the time that counts is the timestamp
/// difference if there is a timer, else the wall time.
fn gpu_frame(gpu: &Gpu, kernel: &mut dyn Kernel, instances: &[Instance]) -> FrameTime {
    let a0 = allocations();
    let start = Instant::now();
    kernel.set(&gpu.queue, instances);
    let a1 = allocations();
    let mut encoder = gpu
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
        encoder.copy_buffer_to_buffer(&t.resolve, 0, &t.read, 0, 16);
    }
    let commands = encoder.finish();
    let a2 = allocations();
    gpu.queue.submit([commands]);
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

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

fn median_u64(v: &[u64]) -> u64 {
    let mut v = v.to_vec();
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// Runs `frame` for the warm-up frames, then measures until the frame
/// budget is met. `advance` moves the instances between frames (coherent
/// playback); it is not timed.
fn measure<T>(
    frames: Frames,
    instances: &mut [Instance],
    advance: &dyn Fn(&mut [Instance]),
    mut frame: impl FnMut(&[Instance]) -> T,
) -> Vec<T> {
    for _ in 0..frames.warmup {
        frame(instances);
        advance(instances);
    }
    let mut out = Vec::with_capacity(frames.max);
    let start = Instant::now();
    while out.len() < frames.max && (out.len() < frames.min || start.elapsed() < frames.min_time) {
        out.push(frame(instances));
        advance(instances);
    }
    out
}

/// A named workload: its library and its instances.
struct Workload {
    name: &'static str,
    clips: Vec<Clip>,
    instances: Vec<Instance>,
    /// Advance every instance by 1/60 s per frame.
    coherent: bool,
    note: &'static str,
    /// For `skin_chain`: the rig whose pose and joint passes follow the
    /// sampling pass.
    rig: Option<Rig>,
}

struct Sizes {
    crowd: usize,
    skin: usize,
    long_instances: usize,
    long_keys: usize,
}

/// A workload's name and how to build it (built only when it runs).
type Builder = (&'static str, Box<dyn Fn() -> Workload>);

/// How instances move between frames.
type Advance = Box<dyn Fn(&mut [Instance])>;

fn workloads(quick: bool) -> Vec<Builder> {
    let s = if quick {
        Sizes {
            crowd: 2_000,
            skin: 300,
            long_instances: 256,
            long_keys: 10_000,
        }
    } else {
        Sizes {
            crowd: 10_000,
            skin: 1_000,
            long_instances: 256,
            long_keys: 100_000,
        }
    };
    let crowd = s.crowd;
    let skin = s.skin;
    let (li, lk) = (s.long_instances, s.long_keys);
    let durations = |clips: &[Clip]| clips.iter().map(Clip::duration).collect::<Vec<_>>();
    vec![
        (
            "crowd_rot",
            Box::new(move || {
                let mut rng = Rng::new(1);
                let clips = data::rotation_clips(&mut rng, 16, 64, 64, Spacing::Irregular);
                let instances =
                    data::random_instances(&mut rng, crowd, &durations(&clips), WrapMode::Clamp);
                Workload {
                    name: "crowd_rot",
                    clips,
                    instances,
                    rig: None,
                    coherent: false,
                    note: "16 clips x 64 LINEAR rotation tracks x 64 irregular keys",
                }
            }),
        ),
        (
            "crowd_mixed",
            Box::new(move || {
                let mut rng = Rng::new(2);
                let clips = data::mixed_clips(&mut rng, 16, 24, 60);
                let instances =
                    data::random_instances(&mut rng, crowd, &durations(&clips), WrapMode::Clamp);
                Workload {
                    name: "crowd_mixed",
                    clips,
                    instances,
                    rig: None,
                    coherent: false,
                    note: "16 clips x 24 x (T, R, S), STEP/LINEAR/CUBICSPLINE, 60 irregular keys",
                }
            }),
        ),
        (
            "crowd_coherent",
            Box::new(move || {
                let mut rng = Rng::new(1);
                let clips = data::rotation_clips(&mut rng, 16, 64, 64, Spacing::Irregular);
                let instances =
                    data::random_instances(&mut rng, crowd, &durations(&clips), WrapMode::Repeat);
                Workload {
                    name: "crowd_coherent",
                    clips,
                    instances,
                    rig: None,
                    coherent: true,
                    note: "crowd_rot's data, every instance advancing 1/60 s per frame (repeat)",
                }
            }),
        ),
        (
            "long_keys",
            Box::new(move || {
                let mut rng = Rng::new(4);
                let clips = data::rotation_clips(&mut rng, 1, 64, lk, Spacing::Uniform30);
                let instances =
                    data::random_instances(&mut rng, li, &durations(&clips), WrapMode::Clamp);
                Workload {
                    name: "long_keys",
                    clips,
                    instances,
                    rig: None,
                    coherent: false,
                    note: "1 clip x 64 LINEAR rotation tracks, keys baked at 30 fps (k/30 in f32): equal in every track, so the library stores them once",
                }
            }),
        ),
        (
            "long_keys_irregular",
            Box::new(move || {
                let mut rng = Rng::new(5);
                let clips = data::rotation_clips(&mut rng, 1, 64, lk, Spacing::Irregular);
                let instances =
                    data::random_instances(&mut rng, li, &durations(&clips), WrapMode::Clamp);
                Workload {
                    name: "long_keys_irregular",
                    clips,
                    instances,
                    rig: None,
                    coherent: false,
                    note: "as long_keys with irregular key intervals, different in every track (no direct indexing, no sharing)",
                }
            }),
        ),
        (
            "morph",
            Box::new(move || {
                let mut rng = Rng::new(6);
                let clips = data::morph_clips(&mut rng, 16, 64, 32);
                let instances =
                    data::random_instances(&mut rng, crowd, &durations(&clips), WrapMode::Clamp);
                Workload {
                    name: "morph",
                    clips,
                    instances,
                    rig: None,
                    coherent: false,
                    note: "16 clips x 1 LINEAR weights track of 64 targets x 32 irregular keys",
                }
            }),
        ),
        (
            "skin_chain",
            Box::new(move || {
                let mut rng = Rng::new(8);
                let (rig, clips) = data::skin_chain(&mut rng, 4, 64, 60);
                let instances =
                    data::random_instances(&mut rng, skin, &durations(&clips), WrapMode::Clamp);
                Workload {
                    name: "skin_chain",
                    clips,
                    instances,
                    rig: Some(rig),
                    coherent: false,
                    note: "64-joint chain, 4 clips x 64 LINEAR rotation tracks x 60 keys; \
                           sampling + local pose, hierarchy and joint matrices",
                }
            }),
        ),
        (
            "tiny",
            Box::new(move || {
                let mut rng = Rng::new(7);
                let clips = data::rotation_clips(&mut rng, 1, 1, 64, Spacing::Irregular);
                let instances =
                    data::random_instances(&mut rng, 1, &durations(&clips), WrapMode::Clamp);
                Workload {
                    name: "tiny",
                    clips,
                    instances,
                    rig: None,
                    coherent: false,
                    note: "1 instance x 1 rotation track (per-frame overhead)",
                }
            }),
        ),
    ]
}

/// What one workload measured.
struct Measured {
    name: String,
    samples: u64,
    gpu_ms: f64,
    /// `skin_chain`: the sampling pass alone.
    sample_ms: Option<f64>,
    /// `skin_chain`: the skin pass's strategy.
    skin_strategy: Option<SkinStrategy>,
    gpu_wall_ms: f64,
    gpu_readback_ms: f64,
    roofline_ms: f64,
    /// Median over frames of gpu / roofline, each pair timed back to back.
    gpu_over_roofline: f64,
    /// `skin_chain`: median over frames of whole chain / sampling alone.
    chain_over_sampling: Option<f64>,
    cpu_ms: f64,
    max_abs_err: f32,
    allocs: [u64; 4],
}

impl Measured {
    fn json(&self, gpu: &Gpu) -> String {
        format!(
            "{{\"workload\": {}, \"samples\": {}, \"gpu_ms\": {}, \"gpu_readback_ms\": {}, \
             \"roofline_ms\": {}, \"cpu_ms\": {}, \"gpu_over_roofline\": {}, \"cpu_over_gpu\": {}, \
             \"adapter\": {}, \"backend\": {}{}}}",
            serde_json::Value::from(self.name.as_str()),
            self.samples,
            num(self.gpu_ms),
            num(self.gpu_readback_ms),
            num(self.roofline_ms),
            num(self.cpu_ms),
            num(self.gpu_over_roofline),
            num(self.cpu_ms / self.gpu_ms),
            serde_json::Value::from(gpu.adapter.as_str()),
            serde_json::Value::from(gpu.backend.as_str()),
            match (self.sample_ms, self.skin_strategy) {
                (Some(ms), Some(st)) => format!(
                    ", \"sample_ms\": {}, \"skin_strategy\": \"{st:?}\"",
                    num(ms)
                ),
                (Some(ms), None) => format!(", \"sample_ms\": {}", num(ms)),
                _ => String::new(),
            }
        )
    }
}

/// A JSON number (null if not finite), 6 significant digits.
fn num(x: f64) -> String {
    if x.is_finite() {
        format!("{}", format!("{x:.6e}").parse::<f64>().unwrap_or(x))
    } else {
        "null".into()
    }
}

fn fail<T>(what: &str, r: std::result::Result<T, keyframe_gpu::Error>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => {
            eprintln!("bench: {what}: {e}");
            std::process::exit(2);
        }
    }
}

/// The sampler, optionally followed by the skinning passes in the same
/// compute pass.
struct Chain {
    sampler: GpuSampler,
    skinner: Option<GpuSkinner>,
    with_skin: bool,
}

impl Kernel for Chain {
    fn set(&mut self, queue: &wgpu::Queue, instances: &[Instance]) {
        self.sampler.set(queue, instances);
        if let (true, Some(s)) = (self.with_skin, &mut self.skinner) {
            fail("skinner set_instances", s.set_instances(queue, instances));
        }
    }
    fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.sampler.record_pass(pass);
        if let (true, Some(s)) = (self.with_skin, &self.skinner) {
            s.record_pass(pass);
        }
    }
}

fn run_workload(gpu: &Gpu, w: Workload, frames: Frames) -> Measured {
    let library = fail(w.name, AnimationLibrary::new(w.clips));
    let n = w.instances.len() as u32;
    let samples: u64 = w
        .instances
        .iter()
        .map(|i| u64::from(library.clip_table()[i.clip as usize].track_count))
        .sum();
    let advance: Advance = if w.coherent {
        Box::new(|insts: &mut [Instance]| {
            for i in insts {
                i.time += 1.0 / 60.0;
            }
        })
    } else {
        Box::new(|_: &mut [Instance]| {})
    };
    let sampler = fail(
        w.name,
        GpuSampler::new(&gpu.device, &gpu.queue, &library, n),
    );
    let tables = w
        .rig
        .as_ref()
        .map(|rig| fail("skin tables", SkinTables::new(rig, &library)));
    let skinner = tables.as_ref().map(|t| {
        fail(
            "skinner",
            GpuSkinner::with_strategy(&gpu.device, &sampler, t, gpu.skin_strategy),
        )
    });
    let skin = skinner.is_some();
    let skin_strategy = skinner.as_ref().map(GpuSkinner::strategy);
    let mut chain = Chain {
        sampler,
        skinner,
        with_skin: skin,
    };
    let mut instances = w.instances;
    let start_instances = instances.clone();

    // GPU without readback, and the roofline kernel of the same shape,
    // frame after frame in alternation, so that both see the same machine
    // load (this machine is shared and noisy) and the same instances. With
    // a rig, a third frame times the sampling pass alone.
    let mut roof = RooflineKernel {
        kernel: fail(w.name, Roofline::new(&gpu.device, &gpu.queue, &library, n)),
        library: &library,
        scratch: Vec::with_capacity(n as usize),
        max_dim: gpu.max_workgroups_per_dim,
    };
    let triples = measure(frames, &mut instances, &*advance, |insts| {
        chain.with_skin = skin;
        let full = gpu_frame(gpu, &mut chain, insts);
        let alone = skin.then(|| {
            chain.with_skin = false;
            let t = gpu_frame(gpu, &mut chain, insts);
            chain.with_skin = skin;
            t
        });
        (full, gpu_frame(gpu, &mut roof, insts), alone)
    });
    drop(roof);
    let times: Vec<FrameTime> = triples.iter().map(|t| t.0).collect();
    let roofline_ms = median(triples.iter().map(|t| t.1.gpu_ms).collect());
    let sample_ms = skin.then(|| {
        median(
            triples
                .iter()
                .filter_map(|t| t.2)
                .map(|t| t.gpu_ms)
                .collect(),
        )
    });
    // Ratios frame by frame: each sampler frame and the roofline (and
    // sampling-alone) frame after it see the same machine load, so the
    // median of the per-frame ratios is steadier than a ratio of medians on
    // a shared machine.
    let gpu_over_roofline = median(triples.iter().map(|t| t.0.gpu_ms / t.1.gpu_ms).collect());
    let chain_over_sampling = skin.then(|| {
        median(
            triples
                .iter()
                .filter_map(|t| t.2.map(|alone| t.0.gpu_ms / alone.gpu_ms))
                .collect(),
        )
    });
    let gpu_ms = median(times.iter().map(|t| t.gpu_ms).collect());
    let gpu_wall_ms = median(times.iter().map(|t| t.wall_ms).collect());
    let allocs_set = median_u64(&times.iter().map(|t| t.allocs_set).collect::<Vec<_>>());
    let allocs_record = median_u64(&times.iter().map(|t| t.allocs_record).collect::<Vec<_>>());
    let allocs_submit = median_u64(&times.iter().map(|t| t.allocs_submit).collect::<Vec<_>>());

    // GPU with readback (wall time: the data is in host memory at the end;
    // with a rig, the joint matrices are read back).
    instances.copy_from_slice(&start_instances);
    let read = |chain: &mut Chain, insts: &[Instance]| -> Vec<f32> {
        chain.set(&gpu.queue, insts);
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        chain.sampler.record(&mut encoder);
        if let Some(s) = &chain.skinner {
            s.record(&mut encoder);
        }
        gpu.queue.submit([encoder.finish()]);
        match &chain.skinner {
            Some(s) => fail(
                "joint readback",
                s.read_back_joints(&gpu.device, &gpu.queue),
            ),
            None => fail("readback", chain.sampler.read_back(&gpu.device, &gpu.queue)),
        }
    };
    // Pipelined through a two-slot ReadbackRing: each frame records and
    // submits frame N, then reads frame N-1 (mapped while frame N was
    // recorded) into a reused Vec. The time is one steady-state frame.
    let mut ring = fail(
        "readback ring",
        match &chain.skinner {
            Some(s) => ReadbackRing::new(
                &gpu.device,
                u64::from(n) * u64::from(s.tables().joint_count()) * 64,
                2,
            ),
            None => ReadbackRing::for_sampler(&gpu.device, &chain.sampler, 2),
        },
    );
    let mut ring_out = Vec::with_capacity(ring.slot_bytes() as usize / 4);
    let readback = measure(frames, &mut instances, &*advance, |insts| {
        let start = Instant::now();
        chain.set(&gpu.queue, insts);
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        chain.sampler.record(&mut encoder);
        let ticket = match &chain.skinner {
            Some(s) => {
                s.record(&mut encoder);
                let bytes =
                    u64::from(s.instance_count()) * u64::from(s.tables().joint_count()) * 64;
                ring.record_buffer(
                    &mut encoder,
                    s.joint_matrix_buffer(),
                    bytes,
                    s.instance_count(),
                )
            }
            None => ring.record(&mut encoder, &chain.sampler),
        };
        let submission = gpu.queue.submit([encoder.finish()]);
        fail(
            "ring map",
            ring.map(fail("ring record", ticket), submission),
        );
        if ring.in_flight() == ring.slots() {
            fail("ring wait", ring.wait(&gpu.device, &mut ring_out));
        }
        start.elapsed().as_secs_f64() * 1e3
    });
    while fail("ring drain", ring.wait(&gpu.device, &mut ring_out)).is_some() {}
    drop(ring);
    let gpu_readback_ms = median(readback);

    // CPU reference, one thread, same frames (with a rig: sampling, then
    // cpu_skin's pose, hierarchy and joint matrices).
    instances.copy_from_slice(&start_instances);
    let mut resolved = Vec::with_capacity(n as usize);
    let mut out = vec![0.0f32; n as usize * library.output_stride() as usize];
    let mut clips = Vec::with_capacity(n as usize);
    let mut cpu_allocs = Vec::new();
    let cpu_frames = Frames {
        warmup: 1,
        min: frames.min.min(5),
        ..frames
    };
    let cpu_times = measure(cpu_frames, &mut instances, &*advance, |insts| {
        let a0 = allocations();
        let start = Instant::now();
        fail(
            "resolve",
            resolve_instances_into(&library, insts, &mut resolved),
        );
        cpu::sample_resolved(&library, &resolved, &mut out);
        if let Some(t) = &tables {
            clips.clear();
            clips.extend(resolved.iter().map(|r| r.clip));
            drop(cpu_skin::pose_resolved(t, &out, &clips));
        }
        let ms = start.elapsed().as_secs_f64() * 1e3;
        cpu_allocs.push(allocations() - a0);
        ms
    });
    let cpu_ms = median(cpu_times);

    // Correctness of what was timed: the GPU against the CPU reference for
    // the workload's first frame (with a rig: the joint matrices).
    let gpu_out = read(&mut chain, &start_instances);
    let cpu_out = fail("cpu sample", cpu::sample(&library, &start_instances));
    let max_abs_err = match &tables {
        Some(t) => {
            let clips: Vec<u32> = start_instances.iter().map(|i| i.clip).collect();
            let joints: Vec<f32> = cpu_skin::pose_resolved(t, &cpu_out, &clips)
                .joints
                .iter()
                .flat_map(|m| m.to_cols_array())
                .collect();
            compare::max_abs_diff(&gpu_out, &joints)
        }
        None => {
            let clips: Vec<u32> = start_instances.iter().map(|i| i.clip).collect();
            compare::compare(&library, &clips, &gpu_out, &cpu_out).max_abs_err()
        }
    };
    Measured {
        name: w.name.to_string(),
        samples,
        gpu_ms,
        sample_ms,
        skin_strategy,
        gpu_wall_ms,
        gpu_readback_ms,
        roofline_ms,
        gpu_over_roofline,
        chain_over_sampling,
        cpu_ms,
        max_abs_err,
        allocs: [
            allocs_set,
            allocs_record,
            allocs_submit,
            median_u64(&cpu_allocs),
        ],
    }
}

fn print_table(out: &mut dyn std::io::Write, gpu: &Gpu, results: &[Measured]) {
    let _ = writeln!(
        out,
        "{:<20} {:>9} {:>9} {:>9} {:>10} {:>9} {:>9} {:>7} {:>7} {:>9} {:>9}",
        "workload",
        "samples",
        "gpu_ms",
        "wall_ms",
        "+readback",
        "roof_ms",
        "cpu_ms",
        "gpu/rf",
        "cpu/gpu",
        "ns/sample",
        "max|err|"
    );
    for r in results {
        let _ = writeln!(
            out,
            "{:<20} {:>9} {:>9.3} {:>9.3} {:>10.3} {:>9.3} {:>9.3} {:>7.2} {:>7.2} {:>9.2} {:>9.1e}",
            r.name,
            r.samples,
            r.gpu_ms,
            r.gpu_wall_ms,
            r.gpu_readback_ms,
            r.roofline_ms,
            r.cpu_ms,
            r.gpu_over_roofline,
            r.cpu_ms / r.gpu_ms,
            r.gpu_ms * 1e6 / r.samples as f64,
            r.max_abs_err
        );
        if let Some(ms) = r.sample_ms {
            let _ = writeln!(
                out,
                "{:<20} sampling pass alone {:.3} ms; whole chain / sampling = {:.2}, skin pass {:?} \
                 (roofline and ns/sample refer to the sampling shape; max|err| to joint matrices)",
                "",
                ms,
                r.chain_over_sampling.unwrap_or(r.gpu_ms / ms),
                r.skin_strategy.unwrap_or_default()
            );
        }
    }
    let _ = writeln!(
        out,
        "\nheap allocations per frame (median, steady state), sampler frames:\n\
         {:<20} {:>14} {:>22} {:>13} {:>10}",
        "workload", "set_instances", "encoder+record+finish", "submit+wait", "cpu frame"
    );
    for r in results {
        let _ = writeln!(
            out,
            "{:<20} {:>14} {:>22} {:>13} {:>10}",
            r.name, r.allocs[0], r.allocs[1], r.allocs[2], r.allocs[3]
        );
    }
    let _ = writeln!(
        out,
        "(counted by the bench's global allocator: everything, wgpu included; \
         see tests/no_alloc.rs for what the crate itself does)\n\ntiming: {}; adapter: {} ({})\n\
         +readback (gpu_readback_ms): wall time of one steady-state frame that also reads its \
         results back, pipelined through a two-slot gpu::ReadbackRing (submit frame N, then \
         read frame N-1 into a reused Vec; skin_chain: joint matrices)",
        gpu.timing(),
        gpu.adapter,
        gpu.backend
    );
}

fn sweep(gpu: &Gpu, quick: bool, frames: Frames) -> Vec<plot::Panel> {
    let series = |points: &[(f64, Measured)]| -> Vec<plot::Series> {
        let per = |f: fn(&Measured) -> f64| -> Vec<(f64, f64)> {
            points
                .iter()
                .map(|(x, r)| (*x, f(r) * 1e6 / r.samples as f64))
                .collect()
        };
        vec![
            plot::Series {
                name: "GPU",
                color: [200, 40, 40],
                points: per(|r| r.gpu_ms),
            },
            plot::Series {
                name: "ROOFLINE",
                color: [40, 110, 200],
                points: per(|r| r.roofline_ms),
            },
            plot::Series {
                name: "CPU",
                color: [40, 150, 60],
                points: per(|r| r.cpu_ms),
            },
        ]
    };
    let key_counts: &[usize] = if quick {
        &[2, 10, 100, 1_000, 10_000, 100_000]
    } else {
        &[2, 10, 100, 1_000, 10_000, 100_000, 1_000_000]
    };
    let sweep_instances = if quick { 1_024 } else { 4_096 };
    let mut by_keys = Vec::new();
    for &keys in key_counts {
        let mut rng = Rng::new(100 + keys as u64);
        let clips = data::rotation_clips(&mut rng, 1, 4, keys, Spacing::Irregular);
        let durations: Vec<f32> = clips.iter().map(Clip::duration).collect();
        let instances =
            data::random_instances(&mut rng, sweep_instances, &durations, WrapMode::Clamp);
        let w = Workload {
            name: "sweep_keys",
            clips,
            instances,
            coherent: false,
            note: "",
            rig: None,
        };
        let r = run_workload(gpu, w, frames);
        eprintln!(
            "sweep keys={keys:>8}: gpu {:.3} ms, roofline {:.3} ms, cpu {:.3} ms",
            r.gpu_ms, r.roofline_ms, r.cpu_ms
        );
        by_keys.push((keys as f64, r));
    }
    let instance_counts: &[usize] = if quick {
        &[1, 10, 100, 1_000, 4_000]
    } else {
        &[1, 10, 100, 1_000, 10_000, 30_000]
    };
    let mut by_instances = Vec::new();
    for &n in instance_counts {
        let mut rng = Rng::new(200);
        let clips = data::rotation_clips(&mut rng, 4, 64, 64, Spacing::Irregular);
        let durations: Vec<f32> = clips.iter().map(Clip::duration).collect();
        let instances = data::random_instances(&mut rng, n, &durations, WrapMode::Clamp);
        let w = Workload {
            name: "sweep_instances",
            clips,
            instances,
            coherent: false,
            note: "",
            rig: None,
        };
        let r = run_workload(gpu, w, frames);
        eprintln!(
            "sweep instances={n:>6}: gpu {:.3} ms, roofline {:.3} ms, cpu {:.3} ms",
            r.gpu_ms, r.roofline_ms, r.cpu_ms
        );
        by_instances.push((n as f64, r));
    }
    vec![
        plot::Panel {
            title: format!("NS PER SAMPLE VS KEYS ({sweep_instances} INST x 4 ROT TRACKS)"),
            x_label: "KEYS PER TRACK",
            y_label: "NS PER SAMPLE",
            series: series(&by_keys),
        },
        plot::Panel {
            title: "NS PER SAMPLE VS INSTANCES (64 ROT TRACKS x 64 KEYS)".into(),
            x_label: "INSTANCES",
            y_label: "NS PER SAMPLE",
            series: series(&by_instances),
        },
    ]
}

fn main() {
    let args = Args::parse();
    let mut gpu = match Gpu::new() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("bench: no GPU adapter: {e}");
            std::process::exit(2);
        }
    };
    gpu.skin_strategy = args.skin_strategy.into();
    let frames = if args.quick {
        Frames {
            warmup: 2,
            min: 5,
            max: 40,
            min_time: Duration::from_millis(150),
        }
    } else {
        Frames {
            warmup: 3,
            min: 21,
            max: 200,
            min_time: Duration::from_millis(1500),
        }
    };
    eprintln!(
        "bench: adapter {} ({}), timing: {}{}",
        gpu.adapter,
        gpu.backend,
        gpu.timing(),
        if args.quick { ", quick sizes" } else { "" }
    );
    let mut results = Vec::new();
    for (name, build) in workloads(args.quick) {
        if !args.only.is_empty() && !args.only.iter().any(|o| name.contains(o.as_str())) {
            continue;
        }
        let w = build();
        eprintln!("bench: {name}: {} instances; {}", w.instances.len(), w.note);
        let r = run_workload(&gpu, w, frames);
        if args.json {
            println!("{}", r.json(&gpu));
        }
        results.push(r);
    }
    if args.json {
        print_table(&mut std::io::stderr(), &gpu, &results);
    } else {
        print_table(&mut std::io::stdout(), &gpu, &results);
    }
    if let Some(path) = &args.plot {
        let sweep_frames = Frames {
            warmup: 2,
            min: 5,
            max: 30,
            min_time: Duration::from_millis(if args.quick { 100 } else { 300 }),
        };
        let panels = sweep(&gpu, args.quick, sweep_frames);
        match plot::write_png(path, &panels) {
            Ok(()) => eprintln!("bench: wrote {}", path.display()),
            Err(e) => {
                eprintln!("bench: plot: {e}");
                std::process::exit(2);
            }
        }
    }
}
