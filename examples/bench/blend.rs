//! `blend_chain`: the mixer's whole chain. 1,000 characters (300 with
//! `--quick`) of `skin_chain`'s 64-joint rig, each with 3 actions: a
//! crossfade between two clips and an additive clip through a mask on
//! half the nodes; sampling every action, mixing, hierarchy and joint
//! matrices (`Animator::with_mixer`).
//!
//! Measured frame after frame in alternation, on the same device in the
//! same run:
//! - `gpu_ms`: the 3-action chain (`set_actions` + record + submit + wait);
//! - `one_action_ms`: the same mixer chain with one action per character
//!   (the first of the crossfade, weight 1);
//! - `unmixed_ms`: `Animator::with_rig` on the same instances (no mixer:
//!   its skin strategy, fused on CPU adapters);
//! - `gpu_over_one_action`: the median of the per-frame ratios of the
//!   first two; the target on the fallback adapter is <= 2.2.
//!
//! `cpu_ms` is the CPU twin (`cpu::mixed_poses`, one thread) on the 3-action
//! frame; `max_abs_err` the largest difference of the GPU's joint
//! matrices from it.

use keyframe_gpu::{Action, AnimationLibrary, Animator, Instance, Mask, MixerDesc, WrapMode};

use crate::data::{self, Rng};
use crate::gpu::{fail, gpu_frame, FrameTime, Gpu, Kernel};
use crate::measure::{measure, median, median_u64, Frames};

/// What `blend_chain` measured.
pub struct Blended {
    pub characters: u32,
    pub gpu_ms: f64,
    pub one_action_ms: f64,
    pub unmixed_ms: f64,
    pub gpu_over_one_action: f64,
    pub cpu_ms: f64,
    pub max_abs_err: f32,
    pub allocs_set: u64,
}

/// An animator and the actions it is given every frame.
struct Mixing {
    animator: Animator,
    actions: Vec<Action>,
    counts: Vec<u32>,
}

impl Kernel for Mixing {
    fn set(&mut self, queue: &wgpu::Queue, _: &[Instance]) {
        fail(
            "set_actions",
            self.animator
                .set_actions(queue, &self.actions, &self.counts),
        );
    }
    fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.animator.record_pass(pass);
    }
}

/// The unmixed animator, given plain instances.
struct Plain(Animator);

impl Kernel for Plain {
    fn set(&mut self, queue: &wgpu::Queue, instances: &[Instance]) {
        fail("set_instances", self.0.set_instances(queue, instances));
    }
    fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.0.record_pass(pass);
    }
}

pub fn run(gpu: &Gpu, quick: bool, frames: Frames) -> Blended {
    let characters: u32 = if quick { 300 } else { 1_000 };
    let mut rng = Rng::new(9);
    let (rig, clips) = data::skin_chain(&mut rng, 4, 64, 60);
    let library = fail("blend_chain", AnimationLibrary::new(clips));
    let durations: Vec<f32> = library.clips().iter().map(|c| c.duration()).collect();
    // Half the nodes (the chain's lower 32 joints) take the additive layer.
    let half: Vec<u32> = (0..32).collect();
    let mask = match Mask::nodes(&rig, &half) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("bench: blend_chain mask: {e}");
            std::process::exit(2);
        }
    };
    let mut actions = Vec::with_capacity(characters as usize * 3);
    let mut single = Vec::with_capacity(characters as usize);
    let mut instances = Vec::with_capacity(characters as usize);
    for _ in 0..characters {
        let fade = rng.range(0.0, 1.0);
        let t = f64::from(rng.range(0.0, durations[0]));
        let walk = Action::new(0, t).with_wrap(WrapMode::Repeat);
        actions.push(walk.with_weight(1.0 - fade));
        actions.push(
            Action::new(1, t)
                .with_wrap(WrapMode::Repeat)
                .with_weight(fade),
        );
        actions.push(
            Action::new(2, t)
                .with_wrap(WrapMode::Repeat)
                .additive(0.0)
                .with_mask(keyframe_gpu::MaskId::new(0)),
        );
        single.push(walk);
        instances.push(Instance::new(0, t).with_wrap(WrapMode::Repeat));
    }
    let mixer = |per: u32| {
        let desc = MixerDesc {
            characters,
            actions_per_character: per,
            masks: vec![mask.clone()],
        };
        fail(
            "blend_chain mixer",
            Animator::with_mixer(
                &gpu.h.device,
                &gpu.h.queue,
                &fail("bind", library.bind(&rig)),
                &desc,
            ),
        )
    };
    let mut three = Mixing {
        animator: mixer(3),
        actions: actions.clone(),
        counts: vec![3; characters as usize],
    };
    let mut one = Mixing {
        animator: mixer(1),
        actions: single,
        counts: vec![1; characters as usize],
    };
    let mut plain = Plain(fail(
        "blend_chain unmixed",
        Animator::new(
            &gpu.h.device,
            &gpu.h.queue,
            &fail("bind", library.bind(&rig)),
            characters,
        ),
    ));
    let mut insts = instances.clone();
    let measured: Vec<(FrameTime, FrameTime, FrameTime)> =
        measure(frames, &mut insts, &|_| {}, |insts| {
            let a = gpu_frame(gpu, &mut three, insts);
            let b = gpu_frame(gpu, &mut one, insts);
            let c = gpu_frame(gpu, &mut plain, insts);
            (a, b, c)
        });
    let gpu_ms = median(measured.iter().map(|m| m.0.gpu_ms).collect());
    let one_action_ms = median(measured.iter().map(|m| m.1.gpu_ms).collect());
    let unmixed_ms = median(measured.iter().map(|m| m.2.gpu_ms).collect());
    let gpu_over_one_action = median(measured.iter().map(|m| m.0.gpu_ms / m.1.gpu_ms).collect());
    let allocs_set = median_u64(&measured.iter().map(|m| m.0.allocs_set).collect::<Vec<_>>());

    // The CPU twin on the same frame, and the GPU's joint matrices
    // against it.
    let bound = fail("bind", library.bind(&rig));
    let masks = [mask];
    let cpu_frames = Frames {
        warmup: 1,
        min: frames.min.min(3),
        max: frames.max.min(10),
        ..frames
    };
    let mut cpu_out = None;
    let cpu_times = measure(cpu_frames, &mut insts, &|_| {}, |_| {
        let start = std::time::Instant::now();
        let out = fail(
            "cpu mix",
            keyframe_gpu::cpu::mixed_poses(&bound, &masks, &three.actions, &three.counts),
        );
        let ms = start.elapsed().as_secs_f64() * 1e3;
        cpu_out = Some(out);
        ms
    });
    let cpu_ms = median(cpu_times);
    three.set(&gpu.h.queue, &instances);
    let mut encoder = gpu.h.device.create_command_encoder(&Default::default());
    three.animator.record(&mut encoder);
    gpu.h.queue.submit([encoder.finish()]);
    let poses = fail(
        "joint readback",
        three.animator.read_back(&gpu.h.device, &gpu.h.queue),
    );
    let joints = crate::run::joints(&poses, &rig);
    let want = cpu_out.map_or_else(Vec::new, |twin| crate::run::joints(&twin, &rig));
    let max_abs_err = crate::track_diff::max_abs_diff(&joints, &want);
    Blended {
        characters,
        gpu_ms,
        one_action_ms,
        unmixed_ms,
        gpu_over_one_action,
        cpu_ms,
        max_abs_err,
        allocs_set,
    }
}

impl Blended {
    pub fn json(&self, gpu: &Gpu) -> String {
        format!(
            "{{\"workload\": \"blend_chain\", \"characters\": {}, \"actions\": 3, \"gpu_ms\": {:.6}, \
             \"one_action_ms\": {:.6}, \"unmixed_ms\": {:.6}, \"gpu_over_one_action\": {:.4}, \
             \"cpu_ms\": {:.6}, \"cpu_over_gpu\": {:.4}, \"max_abs_err\": {:e}, \
             \"allocs_set_actions\": {}, \"adapter\": {}, \"backend\": {}}}",
            self.characters,
            self.gpu_ms,
            self.one_action_ms,
            self.unmixed_ms,
            self.gpu_over_one_action,
            self.cpu_ms,
            self.cpu_ms / self.gpu_ms,
            self.max_abs_err,
            self.allocs_set,
            serde_json::Value::from(gpu.adapter.as_str()),
            serde_json::Value::from(gpu.backend.as_str()),
        )
    }

    pub fn print(&self, out: &mut dyn std::io::Write) {
        let _ = writeln!(
            out,
            "\nblend_chain: {} characters x 3 actions (crossfade + masked additive), 64-joint rig\n\
             {:>10} {:>14} {:>11} {:>13} {:>9} {:>9} {:>9}\n\
             {:>10.3} {:>14.3} {:>11.3} {:>13.2} {:>9.3} {:>9.1e} {:>9}",
            self.characters,
            "gpu_ms",
            "one_action_ms",
            "unmixed_ms",
            "gpu/one_act",
            "cpu_ms",
            "max|err|",
            "allocs",
            self.gpu_ms,
            self.one_action_ms,
            self.unmixed_ms,
            self.gpu_over_one_action,
            self.cpu_ms,
            self.max_abs_err,
            self.allocs_set
        );
    }
}
