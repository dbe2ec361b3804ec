//! The CPU executor: a [`Plan`]'s resources in memory ([`Memory`], made
//! as the GPU executor makes them: the same tables uploaded, the same
//! bytes written by the host each frame, the same starting contents of
//! what the passes write) and its dispatches run in order through their
//! twins ([`twin`]: one per kernel of the stage table), each reading and
//! writing the resources its bindings name. A frame run here can be
//! compared with the GPU's dispatch by dispatch, resource by resource.
//!
//! Adding a stage adds its kernel's arm to [`twin`]; the `match` has one
//! arm per kernel, so a kernel without a twin does not compile.

use glam::Mat4;

use super::mix::{mix_main, mix_morph_main, mix_props_main, MixTables};
use super::pose::{morph_main, pose_main};
use super::sample::sample_group;
use super::skin::{hierarchy_main, skin_main};
use crate::layout::{GpuInstance, GpuLocalPose, GpuMixAction, GROUP_ALL};
use crate::plan::declare::DispatchPart;
use crate::plan::frame::HostFrame;
use crate::plan::passes::Kernel;
use crate::plan::resources::{Grid, ResourceId, Shape, Source};
use crate::plan::schedule::Dispatch;
use crate::plan::Plan;
use crate::tables::rig::SkinTables;

/// The twin of one kernel: its name (`FILE::FUNCTION` under `src/`, the
/// function each invocation runs) and the function that runs a dispatch
/// part of it over a plan's resources in memory.
#[derive(Clone, Copy)]
pub(crate) struct Twin {
    /// `FILE::FUNCTION` under `src/`: what one invocation runs.
    pub(crate) name: &'static str,
    /// Runs every invocation of a part.
    pub(crate) run: fn(&Call<'_>, &mut Memory),
}

/// The twin of `kernel`.
#[must_use]
pub(crate) fn twin(kernel: Kernel) -> Twin {
    let (name, run): (&'static str, fn(&Call<'_>, &mut Memory)) = match kernel {
        Kernel::Sample | Kernel::SampleBlocks => ("cpu/sample.rs::sample_group", run_sample),
        Kernel::Pose => ("cpu/pose.rs::pose_main", run_pose),
        Kernel::Morph => ("cpu/pose.rs::morph_main", run_morph),
        Kernel::Hierarchy => ("cpu/skin.rs::hierarchy_main", run_hierarchy),
        // The per-node kernel's scheduling (pointer jumping) has no twin:
        // it computes what the per-instance walk does, up to rounding.
        Kernel::Skin | Kernel::SkinNodes => ("cpu/skin.rs::skin_main", run_skin),
        Kernel::Mix => ("cpu/mix.rs::mix_main", run_mix),
        Kernel::MixMorph => ("cpu/mix.rs::mix_morph_main", run_mix_morph),
        Kernel::MixProps => ("cpu/mix.rs::mix_props_main", run_mix_props),
        // The playback kernels are recorded by `gpu::playback` with
        // resources of its own, not yet by a plan: their twins are
        // compared with the GPU by `src/tests/gpu_playback.rs` and
        // `tests/gpu_players.rs`, not through `Memory`.
        Kernel::PlaybackCommands => ("cpu/playback/commands.rs::apply_command", run_unplanned),
        Kernel::Playback => ("cpu/playback/mod.rs::step_slot", run_unplanned),
        Kernel::Placement => ("cpu/playback/mod.rs::move_placement", run_unplanned),
    };
    Twin { name, run }
}

/// A kernel no plan dispatches yet: never called by a plan's run.
fn run_unplanned(call: &Call<'_>, _: &mut Memory) {
    unreachable!("{:?} is in no plan", call.dispatch.kernel);
}

/// A plan's resources in memory, by id: each a buffer's bytes (a
/// texture's texels).
#[derive(Debug, Clone)]
pub(crate) struct Memory {
    bytes: Vec<Vec<u8>>,
}

impl Memory {
    /// `plan`'s resources, at its capacity: the tables as uploaded, what
    /// the passes write as it starts (its starting table repeated, or
    /// zeros), the host's frame sources as `frame` writes them.
    #[must_use]
    pub(crate) fn new(plan: &Plan, frame: &HostFrame) -> Memory {
        let counts = plan.counts(plan.capacity);
        let bytes = plan
            .resources
            .all()
            .iter()
            .map(|r| {
                let size = match r.shape {
                    Shape::Buffer(s) => s.at(&counts) as usize,
                    Shape::Texture { words, texels, .. } => texels as usize * words as usize * 4,
                };
                let mut out = vec![0u8; size];
                let (table, repeat) = match r.source {
                    Source::Table(t) => (Some(t), false),
                    Source::Pass { init, .. } => (init, true),
                    Source::Frame(_) => (None, false),
                };
                if let Some(t) = table {
                    let contents = plan.table(t);
                    let step = if repeat {
                        contents.len().max(1)
                    } else {
                        size.max(1)
                    };
                    for at in (0..size).step_by(step) {
                        let n = contents.len().min(size - at);
                        out[at..at + n].copy_from_slice(&contents[..n]);
                    }
                }
                out
            })
            .collect();
        let mut memory = Memory { bytes };
        memory.write_frame(plan, frame);
        memory
    }

    /// Writes the host's frame sources as `frame` has them.
    pub(crate) fn write_frame(&mut self, plan: &Plan, frame: &HostFrame) {
        for (r, bytes) in plan.resources.all().iter().zip(&mut self.bytes) {
            if let Source::Frame(s) = r.source {
                let new = frame.bytes(s);
                let n = new.len().min(bytes.len());
                bytes[..n].copy_from_slice(&new[..n]);
            }
        }
    }

    /// Resource `id`'s bytes.
    #[must_use]
    pub(crate) fn bytes(&self, id: ResourceId) -> &[u8] {
        self.bytes.get(id.0).map_or(&[][..], |b| &b[..])
    }

    /// Runs every part of dispatch `d` through its kernel's twin.
    pub(crate) fn run_dispatch(&mut self, plan: &Plan, d: &Dispatch, frame: &HostFrame) {
        let twin = twin(d.kernel);
        for part in &d.parts {
            let call = Call {
                plan,
                dispatch: d,
                part,
                frame,
            };
            (twin.run)(&call, self);
        }
    }

    /// The resource bound at `name` in `part`, as `T`s.
    fn read<T: bytemuck::Pod>(&self, part: &DispatchPart, name: &str) -> Vec<T> {
        let Some(b) = part.binds.iter().find(|b| b.name == name) else {
            return Vec::new();
        };
        let bytes = self.bytes(b.resource);
        let whole = bytes.len() / std::mem::size_of::<T>() * std::mem::size_of::<T>();
        bytemuck::pod_collect_to_vec(&bytes[..whole])
    }

    /// Writes `values` over the start of the resource bound at `name` in
    /// `part`.
    fn write<T: bytemuck::Pod>(&mut self, part: &DispatchPart, name: &str, values: &[T]) {
        let Some(b) = part.binds.iter().find(|b| b.name == name) else {
            return;
        };
        if let Some(bytes) = self.bytes.get_mut(b.resource.0) {
            let new: &[u8] = bytemuck::cast_slice(values);
            let n = new.len().min(bytes.len());
            bytes[..n].copy_from_slice(&new[..n]);
        }
    }
}

/// What a twin runs: one part of a dispatch of a plan, in a frame.
pub(crate) struct Call<'a> {
    plan: &'a Plan,
    dispatch: &'a Dispatch,
    part: &'a DispatchPart,
    frame: &'a HostFrame,
}

impl Call<'_> {
    /// The rig's tables (every rig dispatch has them).
    fn rig(&self) -> Option<&SkinTables> {
        self.plan.skin_tables.as_ref()
    }

    /// Each instance's clip, from the instance table its bindings name.
    fn clips(&self, memory: &Memory) -> Vec<u32> {
        let rows: Vec<GpuInstance> = memory.read(self.part, "instances");
        let n = self.frame.characters() as usize;
        rows.iter().take(n).map(|r| r.clip).collect()
    }
}

/// A sampler dispatch part: its group of tracks of the resolved
/// instances of its clips.
fn run_sample(call: &Call<'_>, memory: &mut Memory) {
    let library = &call.plan.sample_tables.library;
    let (group, clips) = match call.part.grid {
        Grid::Blocks { part, .. } => (part.group, part.clip_begin..part.clip_end),
        Grid::Invocations { .. } => (call.dispatch.group.unwrap_or(GROUP_ALL), 0..u32::MAX),
    };
    let name = "output";
    let mut output: Vec<f32> = memory.read(call.part, name);
    sample_group(library, call.frame.resolved(), group, clips, &mut output);
    memory.write(call.part, name, &output);
}

/// `pose_main` for every (instance, node).
fn run_pose(call: &Call<'_>, memory: &mut Memory) {
    let Some(t) = call.rig() else { return };
    let samples: Vec<f32> = memory.read(call.part, "samples");
    let clips = call.clips(memory);
    let mut locals: Vec<GpuLocalPose> = memory.read(call.part, "locals");
    for index in 0..clips.len() as u32 * t.node_count() {
        pose_main(t, &samples, &clips, index, &mut locals);
    }
    memory.write(call.part, "locals", &locals);
}

/// `morph_main` for every (instance, mesh).
fn run_morph(call: &Call<'_>, memory: &mut Memory) {
    let Some(t) = call.rig() else { return };
    let samples: Vec<f32> = memory.read(call.part, "samples");
    let clips = call.clips(memory);
    let mut weights: Vec<f32> = memory.read(call.part, "morph_weights");
    for index in 0..clips.len() as u32 * t.mesh_count() {
        morph_main(t, &samples, &clips, index, &mut weights);
    }
    memory.write(call.part, "morph_weights", &weights);
}

/// `hierarchy_main` for every instance (or character), on the stored
/// locals.
fn run_hierarchy(call: &Call<'_>, memory: &mut Memory) {
    let Some(t) = call.rig() else { return };
    let locals: Vec<GpuLocalPose> = memory.read(call.part, "locals");
    let mut globals: Vec<Mat4> = memory.read(call.part, "globals");
    let mut joints: Vec<Mat4> = memory.read(call.part, "joint_matrices");
    for i in 0..call.frame.characters() {
        hierarchy_main(t, &locals, i, &mut globals, &mut joints);
    }
    memory.write(call.part, "globals", &globals);
    memory.write(call.part, "joint_matrices", &joints);
}

/// `skin_main` for every instance: the pose stage fused in.
fn run_skin(call: &Call<'_>, memory: &mut Memory) {
    let Some(t) = call.rig() else { return };
    let samples: Vec<f32> = memory.read(call.part, "samples");
    let clips = call.clips(memory);
    let mut globals: Vec<Mat4> = memory.read(call.part, "globals");
    let mut joints: Vec<Mat4> = memory.read(call.part, "joint_matrices");
    for i in 0..clips.len() as u32 {
        skin_main(t, &samples, &clips, i, &mut globals, &mut joints);
    }
    memory.write(call.part, "globals", &globals);
    memory.write(call.part, "joint_matrices", &joints);
}

/// A mixer kernel over every (character, item), `per_character` items per
/// character: `kernel` reads the mixer's tables as its bindings name them
/// and the sampled rows, and writes the resource bound at `out`.
fn run_mixer<T: bytemuck::Pod>(
    call: &Call<'_>,
    memory: &mut Memory,
    out: &str,
    per_character: impl Fn(&SkinTables) -> u32,
    kernel: fn(&SkinTables, &MixTables<'_>, &[f32], u32, &mut [T]),
) {
    let Some(t) = call.rig() else { return };
    let actions: Vec<GpuMixAction> = memory.read(call.part, "mix_actions");
    let mut characters: Vec<[u32; 2]> = memory.read(call.part, "characters");
    characters.truncate(call.frame.characters() as usize);
    let masks: Vec<f32> = memory.read(call.part, "masks");
    let mix = MixTables {
        actions: &actions,
        characters: &characters,
        masks: &masks,
    };
    let samples: Vec<f32> = memory.read(call.part, "samples");
    let mut written: Vec<T> = memory.read(call.part, out);
    for index in 0..characters.len() as u32 * per_character(t) {
        kernel(t, &mix, &samples, index, &mut written);
    }
    memory.write(call.part, out, &written);
}

/// `mix_main` for every (character, node).
fn run_mix(call: &Call<'_>, memory: &mut Memory) {
    run_mixer(call, memory, "locals", SkinTables::node_count, mix_main);
}

/// `mix_morph_main` for every (character, mesh).
fn run_mix_morph(call: &Call<'_>, memory: &mut Memory) {
    run_mixer(
        call,
        memory,
        "morph_weights",
        SkinTables::mesh_count,
        mix_morph_main,
    );
}

/// `mix_props_main` for every (character, pointer target).
fn run_mix_props(call: &Call<'_>, memory: &mut Memory) {
    run_mixer(
        call,
        memory,
        "properties",
        |t| t.pointer_targets().len() as u32,
        mix_props_main,
    );
}
