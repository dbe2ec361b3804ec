//! One workload measured: sampler (and skin chain), the floor and tables
//! kernels, readback and CPU, frame after frame, and the check of what was
//! timed.

use std::time::Instant;

use crate::track_diff as compare;
use keyframe_gpu::gpu::ReadbackRing;
use keyframe_gpu::internals::{resolve_instances_into, LibraryTables};
use keyframe_gpu::internals::{GpuInstance, WORKGROUP_SIZE};
use keyframe_gpu::plan::PlanChoices;
use keyframe_gpu::{cpu, AnimationLibrary, Animator, BoundLibrary, Instance, Poses, Rig};
use keyframe_gpu::{DeviceProfile, Plan, SkinStrategy};

use crate::alloc::allocations;
use crate::floor::{Floor, FloorShape};
use crate::gpu::{fail, gpu_frame, FrameTime, Gpu, Kernel};
use crate::measure::{measure, median, median_u64, Advance, Frames};
use crate::tables::Tables;
use crate::workloads::Workload;

/// A reference kernel (`floor` or `tables`) with what it needs to resolve
/// instances like the sampler does (host wrap in f64) and to compute the
/// same dispatch grid.
struct Reference<'a, K> {
    kernel: K,
    library: &'a AnimationLibrary,
    scratch: Vec<GpuInstance>,
    max_dim: u32,
}

impl<K> Reference<'_, K> {
    /// Resolves the instances and returns the dispatch grid: one dispatch
    /// over every (instance, track) of the widest clip, as many
    /// invocations as the sampler's group dispatches together when clips
    /// share one composition (every workload here).
    fn resolve(&mut self, instances: &[Instance]) -> (u32, u32) {
        if let Err(e) = resolve_instances_into(self.library, instances, &mut self.scratch) {
            eprintln!("bench: resolve: {e}");
            std::process::exit(2);
        }
        let invocations = self.scratch.len() as u32 * self.library.tracks_per_instance();
        keyframe_gpu::internals::dispatch_grid(invocations, WORKGROUP_SIZE, self.max_dim)
    }
}

impl Kernel for Reference<'_, Tables> {
    fn set(&mut self, queue: &wgpu::Queue, instances: &[Instance]) {
        let grid = self.resolve(instances);
        self.kernel
            .set_instances(queue, self.library, &self.scratch, grid);
    }
    fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.kernel.record_pass(pass);
    }
}

impl Kernel for Reference<'_, (Floor, FloorShape)> {
    fn set(&mut self, queue: &wgpu::Queue, instances: &[Instance]) {
        let grid = self.resolve(instances);
        let (floor, shape) = &mut self.kernel;
        floor.set_instances(queue, shape, &self.scratch, grid);
    }
    fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.kernel.0.record_pass(pass);
    }
}

/// What one workload measured.
pub struct Measured {
    pub name: String,
    pub samples: u64,
    pub gpu_ms: f64,
    /// `skin_chain`: the sampling pass alone.
    pub sample_ms: Option<f64>,
    /// `skin_chain`: the skin pass's strategy.
    pub skin_strategy: Option<SkinStrategy>,
    pub gpu_wall_ms: f64,
    pub gpu_readback_ms: f64,
    /// The floor kernel (`floor.rs`): the least work of the shape.
    pub floor_ms: f64,
    /// Median over frames of gpu / floor, each pair timed back to back.
    pub gpu_over_floor: f64,
    /// The tables kernel (`tables.rs`): the sampler's table reads, no
    /// search, no interpolation.
    pub tables_ms: f64,
    /// Median over frames of gpu / tables, each pair timed back to back.
    pub gpu_over_tables: f64,
    /// `skin_chain`: median over frames of whole chain / sampling alone.
    pub chain_over_sampling: Option<f64>,
    pub cpu_ms: f64,
    /// The sampler's plan (`Auto` resolved).
    pub plan: keyframe_gpu::SamplerPlan,
    /// The entry point of every dispatch timed, in order: the plan as run.
    pub dispatches: Vec<&'static str>,
    pub max_abs_err: f32,
    pub allocs: [u64; 4],
}

/// The animator of the workload (with a rig: sampling and the skinning
/// passes in one compute pass) and, with a rig, an animator of the same
/// sampler plan without it: the sampling pass alone.
struct Chain {
    full: Animator,
    sampling: Option<Animator>,
    with_skin: bool,
}

impl Chain {
    /// The animator a frame runs.
    fn current(&mut self) -> &mut Animator {
        match (&mut self.sampling, self.with_skin) {
            (Some(alone), false) => alone,
            _ => &mut self.full,
        }
    }
}

impl Kernel for Chain {
    fn set(&mut self, queue: &wgpu::Queue, instances: &[Instance]) {
        self.current().set(queue, instances);
    }
    fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        match (&self.sampling, self.with_skin) {
            (Some(alone), false) => alone.record_pass(pass),
            _ => self.full.record_pass(pass),
        }
    }
}

pub fn run_workload(gpu: &Gpu, w: Workload, frames: Frames) -> Measured {
    let library = fail(w.name, AnimationLibrary::new(w.clips));
    let samples: u64 = w
        .instances
        .iter()
        .map(|i| library.clips()[i.clip as usize].tracks.len() as u64)
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
    let bound = w.rig.as_ref().map(|rig| fail("bind", library.bind(rig)));
    let mut chain = chain(
        gpu,
        w.name,
        &library,
        bound.as_ref(),
        w.instances.len() as u32,
    );
    let start = w.instances;
    let timed = time_gpu(gpu, w.name, &library, &mut chain, &start, frames, &*advance);
    let gpu_readback_ms = time_readback(gpu, &mut chain, w.rig.as_ref(), &start, frames, &*advance);
    let (cpu_ms, cpu_allocs) = time_cpu(&library, bound.as_ref(), &start, frames, &*advance);
    let max_abs_err = first_frame_error(gpu, &library, bound.as_ref(), &mut chain, &start);
    Measured {
        name: w.name.to_string(),
        samples,
        gpu_ms: timed.gpu_ms,
        sample_ms: timed.sample_ms,
        skin_strategy: chain.full.plan().skin,
        gpu_wall_ms: timed.gpu_wall_ms,
        gpu_readback_ms,
        floor_ms: timed.floor_ms,
        gpu_over_floor: timed.gpu_over_floor,
        tables_ms: timed.tables_ms,
        gpu_over_tables: timed.gpu_over_tables,
        chain_over_sampling: timed.chain_over_sampling,
        cpu_ms,
        plan: chain.full.plan().sampler,
        dispatches: entry_points(chain.full.plan()),
        max_abs_err,
        allocs: [
            timed.allocs[0],
            timed.allocs[1],
            timed.allocs[2],
            cpu_allocs,
        ],
    }
}

/// The workload's animators: with a rig, the whole chain for the device's
/// profile and the sampling pass alone of the same sampler plan; without,
/// the sampler of the bench's plan.
fn chain(
    gpu: &Gpu,
    name: &'static str,
    library: &AnimationLibrary,
    bound: Option<&BoundLibrary>,
    n: u32,
) -> Chain {
    let profile = DeviceProfile::of(&gpu.h.device);
    let animator = |plan: Plan| {
        fail(
            name,
            Animator::from_plan(&gpu.h.device, &gpu.h.queue, &plan),
        )
    };
    let sampling_plan = |sampler| fail(name, Plan::sampling(library, n, &profile, sampler));
    match bound {
        Some(bound) => {
            let choices = PlanChoices {
                sampler: gpu.plan,
                skin: gpu.skin_strategy,
            };
            let full = animator(fail(name, Plan::with_choices(bound, n, &profile, choices)));
            let alone = animator(sampling_plan(full.plan().sampler));
            Chain {
                full,
                sampling: Some(alone),
                with_skin: true,
            }
        }
        None => Chain {
            full: animator(sampling_plan(gpu.plan)),
            sampling: None,
            with_skin: false,
        },
    }
}

/// What the frames without readback measured.
struct GpuTimes {
    gpu_ms: f64,
    gpu_wall_ms: f64,
    sample_ms: Option<f64>,
    floor_ms: f64,
    gpu_over_floor: f64,
    tables_ms: f64,
    gpu_over_tables: f64,
    chain_over_sampling: Option<f64>,
    /// Allocations of set, record and submit (medians).
    allocs: [u64; 3],
}

/// One alternation of [`time_gpu`]: the workload's frame, the floor's,
/// the tables', and with a rig the sampling pass alone.
type Alternated = (FrameTime, FrameTime, FrameTime, Option<FrameTime>);

/// GPU without readback, then the floor and tables kernels of the same
/// shape, frame after frame in alternation, so that all see the same
/// machine load (this machine is shared and noisy) and the same
/// instances. With a rig, a fourth frame times the sampling pass alone.
fn time_gpu(
    gpu: &Gpu,
    name: &str,
    library: &AnimationLibrary,
    chain: &mut Chain,
    start: &[Instance],
    frames: Frames,
    advance: &(dyn Fn(&mut [Instance]) + '_),
) -> GpuTimes {
    let n = start.len() as u32;
    let skin = chain.sampling.is_some();
    let shape = match FloorShape::of(library) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("bench: {name}: floor: {e}");
            std::process::exit(2);
        }
    };
    let mut floor = Reference {
        kernel: (Floor::new(&gpu.h.device, shape, n), shape),
        library,
        scratch: Vec::with_capacity(n as usize),
        max_dim: gpu.max_workgroups_per_dim,
    };
    let mut table_reads = Reference {
        kernel: fail(name, Tables::new(&gpu.h.device, &gpu.h.queue, library, n)),
        library,
        scratch: Vec::with_capacity(n as usize),
        max_dim: gpu.max_workgroups_per_dim,
    };
    let mut instances = start.to_vec();
    let measured = measure(frames, &mut instances, advance, |insts| {
        chain.with_skin = skin;
        let full = gpu_frame(gpu, chain, insts);
        let alone = skin.then(|| {
            chain.with_skin = false;
            let t = gpu_frame(gpu, chain, insts);
            chain.with_skin = skin;
            t
        });
        let f = gpu_frame(gpu, &mut floor, insts);
        let t = gpu_frame(gpu, &mut table_reads, insts);
        (full, f, t, alone)
    });
    let times: Vec<FrameTime> = measured.iter().map(|t| t.0).collect();
    // Ratios frame by frame: each sampler frame and the floor, tables (and
    // sampling-alone) frames after it see the same machine load, so the
    // median of the per-frame ratios is steadier than a ratio of medians on
    // a shared machine.
    let ratio =
        |of: &dyn Fn(&Alternated) -> Option<f64>| median(measured.iter().filter_map(of).collect());
    GpuTimes {
        gpu_ms: median(times.iter().map(|t| t.gpu_ms).collect()),
        gpu_wall_ms: median(times.iter().map(|t| t.wall_ms).collect()),
        sample_ms: skin.then(|| ratio(&|t| t.3.map(|a| a.gpu_ms))),
        floor_ms: ratio(&|t| Some(t.1.gpu_ms)),
        gpu_over_floor: ratio(&|t| Some(t.0.gpu_ms / t.1.gpu_ms)),
        tables_ms: ratio(&|t| Some(t.2.gpu_ms)),
        gpu_over_tables: ratio(&|t| Some(t.0.gpu_ms / t.2.gpu_ms)),
        chain_over_sampling: skin.then(|| ratio(&|t| t.3.map(|a| t.0.gpu_ms / a.gpu_ms))),
        allocs: [
            median_u64(&times.iter().map(|t| t.allocs_set).collect::<Vec<_>>()),
            median_u64(&times.iter().map(|t| t.allocs_record).collect::<Vec<_>>()),
            median_u64(&times.iter().map(|t| t.allocs_submit).collect::<Vec<_>>()),
        ],
    }
}

/// GPU with readback (wall time: the data is in host memory at the end;
/// with a rig, the joint matrices are read back), pipelined through a
/// two-slot ReadbackRing: each frame records and submits frame N, then
/// reads frame N-1 (mapped while frame N was recorded) into a reused Vec.
/// The time is one steady-state frame.
fn time_readback(
    gpu: &Gpu,
    chain: &mut Chain,
    rig: Option<&Rig>,
    start: &[Instance],
    frames: Frames,
    advance: &(dyn Fn(&mut [Instance]) + '_),
) -> f64 {
    let n = start.len() as u32;
    // Joint matrices per instance (the joint buffer's stride).
    let joints_per_instance = rig.map_or(0, |rig| u64::from(rig.output_layout().joints()));
    let skin = chain.sampling.is_some();
    chain.with_skin = skin;
    let mut ring = fail(
        "readback ring",
        match skin {
            true => ReadbackRing::new(&gpu.h.device, u64::from(n) * joints_per_instance * 64, 2),
            false => ReadbackRing::for_chunk(&gpu.h.device, &chain.full.chunks()[0], 2),
        },
    );
    let mut ring_out = Vec::with_capacity(ring.slot_bytes() as usize / 4);
    let mut instances = start.to_vec();
    let readback = measure(frames, &mut instances, advance, |insts| {
        let begin = Instant::now();
        chain.set(&gpu.h.queue, insts);
        let mut encoder = gpu.h.device.create_command_encoder(&Default::default());
        let full = &chain.full;
        full.record(&mut encoder);
        let ticket = match full.chunks()[0].joint_matrix_buffer() {
            Some(joints) => {
                let count = full.instance_count();
                let bytes = u64::from(count) * joints_per_instance * 64;
                ring.record_buffer(&mut encoder, joints, bytes, count)
            }
            None => ring.record(&mut encoder, &full.chunks()[0]),
        };
        let submission = gpu.h.queue.submit([encoder.finish()]);
        fail(
            "ring map",
            ring.map(fail("ring record", ticket), submission),
        );
        if ring.in_flight() == ring.slots() {
            fail("ring wait", ring.wait(&gpu.h.device, &mut ring_out));
        }
        begin.elapsed().as_secs_f64() * 1e3
    });
    while fail("ring drain", ring.wait(&gpu.h.device, &mut ring_out)).is_some() {}
    median(readback)
}

/// CPU reference, one thread, same frames: the twin's sampling into a
/// reused buffer, or with a rig the twin's whole chain (`cpu::poses`:
/// sampling, local pose, hierarchy, joint matrices and morph weights).
/// The median frame's milliseconds and allocations.
fn time_cpu(
    library: &AnimationLibrary,
    bound: Option<&BoundLibrary>,
    start: &[Instance],
    frames: Frames,
    advance: &(dyn Fn(&mut [Instance]) + '_),
) -> (f64, u64) {
    let n = start.len();
    let mut instances = start.to_vec();
    let mut resolved = Vec::with_capacity(n);
    let mut out = vec![0.0f32; n * library.output_stride() as usize];
    let flat = fail("library tables", LibraryTables::of(library));
    let mut cpu_allocs = Vec::new();
    let cpu_frames = Frames {
        warmup: 1,
        min: frames.min.min(5),
        ..frames
    };
    let cpu_times = measure(cpu_frames, &mut instances, advance, |insts| {
        let a0 = allocations();
        let begin = Instant::now();
        match bound {
            Some(b) => drop(fail("cpu poses", cpu::poses(b, insts))),
            None => {
                fail(
                    "resolve",
                    resolve_instances_into(library, insts, &mut resolved),
                );
                keyframe_gpu::internals::sample_resolved(&flat, &resolved, &mut out);
            }
        }
        let ms = begin.elapsed().as_secs_f64() * 1e3;
        cpu_allocs.push(allocations() - a0);
        ms
    });
    (median(cpu_times), median_u64(&cpu_allocs))
}

/// Correctness of what was timed: the GPU against the CPU reference for
/// the workload's first frame (with a rig: the joint matrices).
fn first_frame_error(
    gpu: &Gpu,
    library: &AnimationLibrary,
    bound: Option<&BoundLibrary>,
    chain: &mut Chain,
    start: &[Instance],
) -> f32 {
    chain.with_skin = chain.sampling.is_some();
    let full = &mut chain.full;
    let samples = fail("readback", full.sample(&gpu.h.device, &gpu.h.queue, start));
    match bound {
        Some(b) => {
            let gpu_joints = joints(
                &fail(
                    "joint readback",
                    full.read_back(&gpu.h.device, &gpu.h.queue),
                ),
                b.rig(),
            );
            let twin = fail("cpu poses", cpu::poses(b, start));
            compare::max_abs_diff(&gpu_joints, &joints(&twin, b.rig()))
        }
        None => {
            let cpu_out = fail("cpu sample", cpu::sample(library, start));
            let clips: Vec<u32> = start.iter().map(|i| i.clip).collect();
            compare::compare(library, &clips, &samples, &cpu_out).max_abs_err()
        }
    }
}

/// Every instance's joint matrices of every skin of `rig`, in instance
/// order, column-major: what the joint matrix buffer holds.
pub fn joints(poses: &Poses, rig: &Rig) -> Vec<f32> {
    let skins = rig.skins().len() as u32;
    (0..poses.instance_count())
        .flat_map(|i| (0..skins).map(move |s| (i, s)))
        .flat_map(|(i, s)| poses.joints(i, s).unwrap_or(&[]).to_vec())
        .flat_map(|m| m.to_cols_array())
        .collect()
}

/// The WGSL entry points `plan` dispatches, in order, without repeats
/// (the report's `dispatches`).
fn entry_points(plan: &Plan) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for d in &plan.dispatches {
        if !out.contains(&d.entry_point) {
            out.push(d.entry_point);
        }
    }
    out
}
