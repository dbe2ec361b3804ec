//! `compressed`: a library of motion-capture-like clips, built in code
//! (`examples/common/mocap.rs`): a 65-joint skeleton, 8 clips of 10 s at
//! 30 fps (300 keys, `k / 30` in `f32`), per joint a LINEAR rotation
//! (swings plus noise), a translation (the root's moving, the others
//! constant) and a constant scale, as an exporter bakes a take. It is
//! compressed at the default bound (`CompressOptions::default()`), and
//! 4,000 instances (1,000 with `--quick`) at random times are sampled
//! from it and from the same library uncompressed, frame after frame in
//! alternation, with the same plan choice (`--plan`).
//!
//! `compressed_large`: the same with a 130-joint skeleton, 3,120 tracks,
//! more than one uniform binding of the block heads holds (2,048 rows):
//! on CPU adapters each clip-blocks dispatch runs in parts, one per window
//! of them.
//!
//! - `ratio`: bytes of key times and values, `f32` uncompressed over
//!   compressed (`AnimationLibrary::stored_bytes`);
//! - `max_error`: the compressor's largest world-space displacement of a
//!   virtual point, in the rig's units, with `bound`;
//! - `gpu_ms` and `uncompressed_ms`: the sampling pass of each;
//! - `gpu_over_uncompressed`: the median of the per-frame ratios;
//! - `max_abs_err`: the GPU's compressed output against the CPU twin's;
//! - `compress_ms`: the compressor's time on the host.

use std::time::Instant;

use keyframe_gpu::compress::{CompressOptions, CompressionReport};
use keyframe_gpu::{cpu, AnimationLibrary, Animator, DeviceProfile, Instance, Plan, SamplerPlan};

use crate::gpu::{fail, gpu_frame, Gpu};
use crate::measure::{measure, median, Frames};
use crate::mocap::{mocap_clip, skeleton, Rng};

/// A compressed workload's library: its name, joints and clips.
pub struct Shape {
    pub name: &'static str,
    pub joints: u32,
    pub clips: u32,
}

/// The workloads: `compressed` and `compressed_large`.
pub const SHAPES: [Shape; 2] = [
    Shape {
        name: "compressed",
        joints: 65,
        clips: 8,
    },
    Shape {
        name: "compressed_large",
        joints: 130,
        clips: 8,
    },
];

/// What a compressed workload measured.
pub struct Compressed {
    pub name: &'static str,
    pub instances: u32,
    pub joints: u32,
    pub clips: u32,
    pub keys: u32,
    pub samples: u64,
    pub gpu_ms: f64,
    pub uncompressed_ms: f64,
    pub gpu_over_uncompressed: f64,
    pub report: CompressionReport,
    pub compress_ms: f64,
    pub max_abs_err: f32,
    pub plan: SamplerPlan,
    pub uncompressed_plan: SamplerPlan,
}

pub fn run(gpu: &Gpu, shape: &Shape, quick: bool, frames: Frames) -> Compressed {
    let (joints, clips, keys) = (shape.joints, shape.clips, 300usize);
    let count: u32 = if quick { 1_000 } else { 4_000 };
    let (rig, rest) = skeleton(joints, 1.0);
    let mut rng = Rng::new(21);
    let takes = (0..clips)
        .map(|c| mocap_clip(&mut rng, &format!("take{c}"), &rest, 1.0, keys, 0.003))
        .collect();
    let library = fail("compressed", AnimationLibrary::new(takes));
    let bound = fail("bind", library.bind(&rig));
    let start = Instant::now();
    let (packed, report) = fail("compress", bound.compress(&CompressOptions::default()));
    let compress_ms = start.elapsed().as_secs_f64() * 1e3;
    let packed = packed.library().clone();
    let instances: Vec<Instance> = (0..count)
        .map(|i| {
            let clip = i % clips;
            let duration = library.clips()[clip as usize].duration();
            Instance::new(clip, f64::from(rng.next() * duration))
        })
        .collect();
    let profile = DeviceProfile::of(&gpu.h.device);
    let sampler = |lib: &AnimationLibrary| {
        let plan = fail("plan", Plan::sampling(lib, count, &profile, gpu.plan));
        fail(
            "sampler",
            Animator::from_plan(&gpu.h.device, &gpu.h.queue, &plan),
        )
    };
    let mut plain = sampler(&library);
    let mut small = sampler(&packed);
    let mut insts = instances.clone();
    let measured = measure(frames, &mut insts, &|_| {}, |insts| {
        let a = gpu_frame(gpu, &mut small, insts);
        let b = gpu_frame(gpu, &mut plain, insts);
        (a, b)
    });
    let gpu_ms = median(measured.iter().map(|m| m.0.gpu_ms).collect());
    let uncompressed_ms = median(measured.iter().map(|m| m.1.gpu_ms).collect());
    let gpu_over_uncompressed = median(measured.iter().map(|m| m.0.gpu_ms / m.1.gpu_ms).collect());
    let got = fail(
        "compressed readback",
        small.sample(&gpu.h.device, &gpu.h.queue, &instances),
    );
    let want = fail("cpu sample", cpu::sample(&packed, &instances));
    let max_abs_err = crate::track_diff::max_abs_diff(&got, &want);
    Compressed {
        name: shape.name,
        instances: count,
        joints,
        clips,
        keys: keys as u32,
        samples: u64::from(count) * u64::from(library.tracks_per_instance()),
        gpu_ms,
        uncompressed_ms,
        gpu_over_uncompressed,
        report,
        compress_ms,
        max_abs_err,
        plan: small.plan().sampler,
        uncompressed_plan: plain.plan().sampler,
    }
}

impl Compressed {
    pub fn json(&self, gpu: &Gpu) -> String {
        let r = &self.report;
        format!(
            "{{\"workload\": \"{}\", \"joints\": {}, \"clips\": {}, \"keys\": {}, \
             \"instances\": {}, \"samples\": {}, \"gpu_ms\": {:.6}, \"uncompressed_ms\": {:.6}, \
             \"gpu_over_uncompressed\": {:.4}, \"ratio\": {:.4}, \"uncompressed_bytes\": {}, \
             \"compressed_bytes\": {}, \"max_error\": {:e}, \"bound\": {:e}, \"distance\": {:e}, \
             \"max_abs_err\": {:e}, \"compress_ms\": {:.1}, \"plan\": \"{:?}\", \
             \"uncompressed_plan\": \"{:?}\", \"adapter\": {}, \"backend\": {}}}",
            self.name,
            self.joints,
            self.clips,
            self.keys,
            self.instances,
            self.samples,
            self.gpu_ms,
            self.uncompressed_ms,
            self.gpu_over_uncompressed,
            r.ratio(),
            r.uncompressed_bytes,
            r.compressed_bytes,
            r.max_error,
            r.bound,
            r.distance,
            self.max_abs_err,
            self.compress_ms,
            self.plan,
            self.uncompressed_plan,
            serde_json::Value::from(gpu.adapter.as_str()),
            serde_json::Value::from(gpu.backend.as_str()),
        )
    }

    pub fn print(&self, out: &mut dyn std::io::Write) {
        let r = &self.report;
        let _ = writeln!(
            out,
            "\n{}: {} instances of {} clips x {} joints (T, R, S) x {} keys at 30 fps, \
             compressed at the default bound in {:.0} ms\n\
             {:>10} {:>15} {:>8} {:>8} {:>12} {:>12} {:>9} {:>10} {:>10}\n\
             {:>10.3} {:>15.3} {:>8.3} {:>8.2} {:>12.3e} {:>12.3e} {:>9.1e} {:>10} {:>10}",
            self.name,
            self.instances,
            self.clips,
            self.joints,
            self.keys,
            self.compress_ms,
            "gpu_ms",
            "uncompressed_ms",
            "gpu/unc",
            "ratio",
            "max_error",
            "bound",
            "max|err|",
            "plan",
            "unc. plan",
            self.gpu_ms,
            self.uncompressed_ms,
            self.gpu_over_uncompressed,
            r.ratio(),
            r.max_error,
            r.bound,
            self.max_abs_err,
            format!("{:?}", self.plan),
            format!("{:?}", self.uncompressed_plan),
        );
    }
}
