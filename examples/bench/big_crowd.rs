//! `big_crowd`: a crowd past one storage binding. A RobotExpressive-like
//! rig built in code (84 nodes: an 80-joint skeleton, `mocap::skeleton`,
//! and 4 skinned mesh nodes; 4 skins of 40 joints each, overlapping as a
//! body, head and limbs do) animated by 8 motion-capture-like clips of
//! 80 joints (T, R, S), 100,000 characters (10,000 with `--quick`) at
//! random times, one model of one [`Crowd`]: sampling, the local pose,
//! the hierarchy and the joint matrices of every skin. At 100,000
//! characters the world matrices alone are 538 MB, past a 128 MiB
//! binding: the crowd splits the model into chunks of the capacity
//! `plan::chunk_capacity` finds for the device (each with buffers of its
//! own, sharing one upload of the library).
//!
//! - `gpu_ms`: one frame, set + record + submit + wait (timestamps where
//!   the adapter has them), median over a few frames;
//! - `ns_per_character_joint`: `gpu_ms` over characters x joint matrices
//!   (160 per character), and `ns_per_character_node` over characters x
//!   nodes;
//! - `chunks` and `chunk_capacity`: how the crowd split the model;
//! - `one_chunk_ms`: the first chunk's characters alone, in a crowd of
//!   one chunk (the same work per character, no split), timed in the
//!   frames right after the whole crowd's; `chunked_over_one_chunk`: the
//!   median of the per-frame ratios of their times per character, the
//!   cost of the split;
//! - `max_abs_err`: the worst difference of world matrices, joint
//!   matrices and local poses against the CPU twin (`cpu::poses`), on the
//!   characters of the first and the last chunk.

use keyframe_gpu::{
    cpu, AnimationLibrary, Crowd, CrowdInstance, Instance, ModelId, NodeTransform, Rig,
};

use crate::gpu::{fail, gpu_frame, Gpu, Kernel};
use crate::measure::{measure, median, Frames};
use crate::mocap::{mocap_clip, skeleton, Rng};

/// Joints of the skeleton; the rig adds one mesh node per skin.
const JOINTS: u32 = 80;
/// Skins, of [`SKIN_JOINTS`] joints each.
const SKINS: u32 = 4;
const SKIN_JOINTS: u32 = 40;

/// What `big_crowd` measured.
pub struct BigCrowd {
    pub characters: u32,
    pub nodes: u32,
    pub joint_matrices: u32,
    pub chunks: usize,
    pub chunk_capacity: u32,
    pub gpu_ms: f64,
    pub one_chunk_ms: f64,
    pub chunked_over_one_chunk: f64,
    pub ns_per_character_joint: f64,
    pub ns_per_character_node: f64,
    pub max_abs_err: f32,
    pub checked: usize,
}

/// The skeleton's nodes, then a mesh node per skin; skin `s` binds
/// joints `20 s .. 20 s + 40` (wrapping), with identity inverse binds.
fn robot() -> (Rig, Vec<[f32; 3]>) {
    let (skeleton, rest) = skeleton(JOINTS, 1.0);
    let mut b = Rig::builder();
    for n in skeleton.nodes() {
        let id = b.node(n.parent, NodeTransform::translation(n.translation));
        if let Some(name) = &n.name {
            b.name(id, name.clone());
        }
    }
    for s in 0..SKINS {
        let joints: Vec<u32> = (0..SKIN_JOINTS).map(|j| (20 * s + j) % JOINTS).collect();
        let ibm = vec![glam::Mat4::IDENTITY.to_cols_array(); joints.len()];
        let skin = b.skin(joints, ibm);
        let mesh = b.mesh(0, Vec::new());
        let node = b.node(None, NodeTransform::IDENTITY);
        b.attach(node, mesh, Some(skin));
    }
    (fail("the robot rig", b.build().map_err(Into::into)), rest)
}

/// One model of a crowd, driven by the bench's instance tables.
struct CrowdKernel {
    crowd: Crowd,
    model: ModelId,
    table: Vec<CrowdInstance>,
}

impl Kernel for CrowdKernel {
    fn set(&mut self, queue: &wgpu::Queue, instances: &[Instance]) {
        self.table.clear();
        for i in instances {
            let Some(clip) = self.crowd.models().clip_at(self.model, i.clip) else {
                eprintln!("bench: big_crowd: no clip {}", i.clip);
                std::process::exit(2);
            };
            self.table
                .push(CrowdInstance::new(self.model, clip, i.time).with_wrap(i.wrap));
        }
        if let Err(e) = self.crowd.set_instances(queue, &self.table) {
            eprintln!("bench: big_crowd: set_instances: {e}");
            std::process::exit(2);
        }
    }

    fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.crowd.record_pass(pass);
    }
}

/// The rig and its 8 motion-capture-like clips of 120 keys, from `rng`
/// (`crowd_playback` plays them too).
pub fn robot_library(rng: &mut Rng) -> (Rig, AnimationLibrary) {
    let (rig, rest) = robot();
    let takes = (0..8)
        .map(|c| mocap_clip(rng, &format!("take{c}"), &rest, 1.0, 120, 0.003))
        .collect();
    (rig, fail("big_crowd", AnimationLibrary::new(takes)))
}

pub fn run(gpu: &Gpu, quick: bool) -> BigCrowd {
    let characters: u32 = if quick { 10_000 } else { 100_000 };
    let clips = 8u32;
    let mut rng = Rng::new(84);
    let (rig, library) = robot_library(&mut rng);
    let bound = fail("bind", library.bind(&rig));
    let mut crowd = Crowd::new();
    let model = fail(
        "big_crowd model",
        crowd.add_model(&gpu.h.device, &gpu.h.queue, "robot", &bound, characters),
    );
    let chunks = crowd.model(model).map(|m| m.chunks().len()).unwrap_or(0);
    let chunk_capacity = crowd.model(model).map(|m| m.chunk_capacity()).unwrap_or(0);
    let mut instances: Vec<Instance> = (0..characters)
        .map(|i| {
            let clip = i % clips;
            let d = library.clips()[clip as usize].duration();
            Instance::new(clip, f64::from(rng.next() * d))
        })
        .collect();
    let mut kernel = CrowdKernel {
        crowd,
        model,
        table: Vec::with_capacity(characters as usize),
    };
    let mut alone = Crowd::new();
    let alone_model = fail(
        "big_crowd one chunk",
        alone.add_model(&gpu.h.device, &gpu.h.queue, "robot", &bound, chunk_capacity),
    );
    let mut one = CrowdKernel {
        crowd: alone,
        model: alone_model,
        table: Vec::with_capacity(chunk_capacity as usize),
    };
    let first = chunk_capacity as usize;
    // Frames of a second or more on a CPU adapter: a few are enough.
    let frames = Frames {
        warmup: 1,
        min: 3,
        max: 5,
        min_time: std::time::Duration::ZERO,
    };
    let measured = measure(frames, &mut instances, &|_| {}, |insts| {
        let all = gpu_frame(gpu, &mut kernel, insts);
        let part = gpu_frame(gpu, &mut one, &insts[..first]);
        (all, part)
    });
    let gpu_ms = median(measured.iter().map(|m| m.0.gpu_ms).collect());
    let one_chunk_ms = median(measured.iter().map(|m| m.1.gpu_ms).collect());
    let per_character = |ms: f64, n: usize| ms / n as f64;
    let chunked_over_one_chunk = median(
        measured
            .iter()
            .map(|(a, b)| {
                per_character(a.gpu_ms, characters as usize) / per_character(b.gpu_ms, first)
            })
            .collect(),
    );
    drop(one);
    kernel.set(&gpu.h.queue, &instances);
    let mut encoder = gpu.h.device.create_command_encoder(&Default::default());
    kernel.crowd.record(&mut encoder);
    gpu.h.queue.submit([encoder.finish()]);
    let (max_abs_err, checked) = check_chunks(gpu, &kernel.crowd, model, &bound, &instances);
    let joint_matrices = SKINS * SKIN_JOINTS;
    let nodes = rig.nodes().len() as u32;
    let per = |n: u32| gpu_ms * 1e6 / (f64::from(characters) * f64::from(n));
    BigCrowd {
        characters,
        nodes,
        joint_matrices,
        chunks,
        chunk_capacity,
        gpu_ms,
        one_chunk_ms,
        chunked_over_one_chunk,
        ns_per_character_joint: per(joint_matrices),
        ns_per_character_node: per(nodes),
        max_abs_err,
        checked,
    }
}

/// The first and the last chunk's results against the CPU twin of their
/// characters: the worst difference, and how many characters were checked.
fn check_chunks(
    gpu: &Gpu,
    crowd: &Crowd,
    model: ModelId,
    bound: &keyframe_gpu::BoundLibrary,
    instances: &[Instance],
) -> (f32, usize) {
    let size = crowd.model(model).map(|m| m.chunk_capacity()).unwrap_or(1) as usize;
    let last = crowd.model(model).map(|m| m.chunks().len()).unwrap_or(1) - 1;
    let mut worst = 0.0f32;
    let mut checked = 0;
    for k in [0, last] {
        let Some(animator) = crowd.model(model).and_then(|m| m.chunks().get(k)) else {
            continue;
        };
        let got = fail(
            "big_crowd readback",
            animator.read_back(&gpu.h.device, &gpu.h.queue),
        );
        let start = k * size;
        let end = (start + size).min(instances.len());
        let want = fail("big_crowd twin", cpu::poses(bound, &instances[start..end]));
        let c = fail("big_crowd compare", got.compare(&want));
        worst = c.max_abs.iter().fold(worst, |w, &d| w.max(d));
        checked += end - start;
        if k == last {
            break;
        }
    }
    (worst, checked)
}

impl BigCrowd {
    pub fn json(&self, gpu: &Gpu) -> String {
        format!(
            "{{\"workload\": \"big_crowd\", \"characters\": {}, \"nodes\": {}, \
             \"joint_matrices\": {}, \"chunks\": {}, \"chunk_capacity\": {}, \"gpu_ms\": {:.3}, \
             \"one_chunk_ms\": {:.3}, \"chunked_over_one_chunk\": {:.4}, \
             \"ns_per_character_joint\": {:.3}, \"ns_per_character_node\": {:.3}, \
             \"max_abs_err\": {:e}, \"checked\": {}, \"adapter\": {}, \"backend\": {}}}",
            self.characters,
            self.nodes,
            self.joint_matrices,
            self.chunks,
            self.chunk_capacity,
            self.gpu_ms,
            self.one_chunk_ms,
            self.chunked_over_one_chunk,
            self.ns_per_character_joint,
            self.ns_per_character_node,
            self.max_abs_err,
            self.checked,
            serde_json::Value::from(gpu.adapter.as_str()),
            serde_json::Value::from(gpu.backend.as_str()),
        )
    }

    pub fn print(&self, out: &mut dyn std::io::Write) {
        let _ = writeln!(
            out,
            "\nbig_crowd: {} characters of {} nodes and {} joint matrices (4 skins), one crowd model \
             in {} {} of {}\n\
             {:>10} {:>12} {:>14} {:>14} {:>14} {:>10} {:>9}\n\
             {:>10.1} {:>12.1} {:>14.3} {:>14.3} {:>14.3} {:>10.1e} {:>9}",
            self.characters,
            self.nodes,
            self.joint_matrices,
            self.chunks,
            if self.chunks == 1 { "chunk" } else { "chunks" },
            self.chunk_capacity,
            "gpu_ms",
            "one_chunk_ms",
            "chunked/one",
            "ns/char-joint",
            "ns/char-node",
            "max|err|",
            "checked",
            self.gpu_ms,
            self.one_chunk_ms,
            self.chunked_over_one_chunk,
            self.ns_per_character_joint,
            self.ns_per_character_node,
            self.max_abs_err,
            self.checked,
        );
    }
}
