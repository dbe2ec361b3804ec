//! What runs where: the one place where the crate chooses how its work is
//! laid out on a device, as values built without a device. Every choice
//! changes speed only, never a result: each plan is tested against the
//! same CPU twin.
//!
//! A [`Plan`] is built from a bound library, the capacity and a
//! [`DeviceProfile`] (what the device is good at: the only thing a plan
//! asks of it). It lists the dispatches the animator records, in order,
//! each with its WGSL entry point, its typed overrides
//! (`SampleOverrides`, `RigOverrides`), its workgroups at full
//! capacity and the tables it reads; it prints (`Display`), and
//! `Animator::from_plan` builds exactly what it lists.
//!
//! The sampler has three plans. [`SamplerPlan::Reference`] is the plain
//! one, and what a reader should read first: one dispatch samples every
//! track of every instance (`GROUP_ALL`), and the key search bisects the
//! track's keys from the middle one. [`SamplerPlan::Grouped`] makes one
//! dispatch per track group, each compiled without the other groups'
//! code, starts the key search from a bucket table or from the direct
//! index of uniformly spaced keys, reads and writes values as vec4s where
//! a group's tracks are aligned to 4 floats (`vec4_group`), and in the
//! STEP and vector groups samples two rows per invocation whose key
//! searches and loads run side by side (`invocation_rows`).
//! [`SamplerPlan::ClipBlocks`] is the grouped plan with the instances
//! sorted by clip each frame and a workgroup per block of 64 instances of
//! one clip and a run of up to 32 of its track rows (`block_row_run`),
//! so that the clip and row reads are the same for every lane and each
//! lane reads its instance once per run. Every plan runs on every device.
//!
//! What `Auto` picks is device-specific: on CPU adapters the choices of
//! `cpu_adapter` (the grouped or clip-blocks plan, the per-instance
//! skin walk, uniform copies of the small tables, 64-bit accesses where
//! `SHADER_INT64` is on), measured on lavapipe; on GPUs the reference
//! plan and the per-node skin strategy, with no CPU-adapter trick, until
//! a measurement on a GPU (`scripts/gpu_check`) says otherwise.

mod capacity;
pub(crate) mod cpu_adapter;
pub(crate) mod declare;
pub(crate) mod frame;
mod overrides;
pub(crate) mod passes;
mod print;
mod profile;
pub(crate) mod resources;
pub(crate) mod schedule;

pub use self::{
    capacity::{chunk_capacity, ChunkModel},
    passes::SkinStrategy,
    profile::{DeviceLimits, DeviceProfile},
    schedule::{Dispatch, Plan, PlanChoices, Stage},
};
pub(crate) use capacity::{check_plan, largest_fit};
pub(crate) use overrides::{RigOverrides, SampleOverrides};
pub(crate) use schedule::dispatch_grid;
#[cfg(test)]
pub(crate) use schedule::Overrides;

pub(crate) use crate::kinds::SamplerPlan;
pub(crate) use crate::tables::blocks::{block_row_run, max_blocks};

use crate::layout::{GROUP_ALL, SAMPLE_GROUPS, WORKGROUP_SIZE};
use crate::tables::library::LibraryTables;

impl SamplerPlan {
    /// This plan, with [`Auto`](Self::Auto) resolved for `library` and up
    /// to `max_instances` instances on a device of `profile`: the
    /// `cpu_adapter` choice on CPU adapters, [`Reference`](Self::Reference)
    /// on GPUs.
    #[must_use]
    pub(crate) fn resolve(
        self,
        profile: &DeviceProfile,
        library: &LibraryTables,
        max_instances: u32,
    ) -> SamplerPlan {
        match self {
            SamplerPlan::Auto if profile.cpu_adapter => {
                cpu_adapter::sampler_plan(profile, library, max_instances)
            }
            SamplerPlan::Auto => SamplerPlan::Reference,
            chosen => chosen,
        }
    }

    /// The plan's name, as `Debug` writes it.
    #[must_use]
    pub(crate) fn name(self) -> &'static str {
        match self {
            SamplerPlan::Auto => "Auto",
            SamplerPlan::Reference => "Reference",
            SamplerPlan::Grouped => "Grouped",
            SamplerPlan::ClipBlocks => "ClipBlocks",
        }
    }
}

/// Whether every track row of track group `g` starts its values and its
/// output at a multiple of 4 floats and is a multiple of 4 wide, in a
/// library whose output stride is one too: the tuned plans then read and
/// write the group's values as vec4s (the shader's override `ALIGNED4`).
/// Never for `GROUP_ALL` (the reference plan reads and writes floats).
/// Never for a compressed library, whose values are decoded.
#[must_use]
pub(crate) fn vec4_group(library: &LibraryTables, g: u32) -> bool {
    g != GROUP_ALL
        && !library.is_compressed()
        && library.output_stride().is_multiple_of(4)
        && library.tracks().iter().filter(|t| t.group() == g).all(|t| {
            t.values_offset.is_multiple_of(4)
                && t.width.is_multiple_of(4)
                && t.output_offset.is_multiple_of(4)
        })
}

/// Whether every track group of `library` is [`vec4_group`]: rotations
/// and morph weights of multiples of 4 targets, no translation or scale.
#[must_use]
pub(crate) fn vec4_library(library: &LibraryTables) -> bool {
    (0..SAMPLE_GROUPS as u32).all(|g| vec4_group(library, g))
}

/// Whether a sampler of `max_instances` instances of `library` has at
/// least [`WORKGROUP_SIZE`] (64) of them per clip on average, so that the
/// clip-blocks plan's blocks would be full: on a CPU adapter, where the
/// library has 3-float tracks, the clip-blocks plan is faster than the
/// grouped plan with full blocks and slower with mostly idle lanes.
#[must_use]
pub(crate) fn full_blocks(library: &LibraryTables, max_instances: u32) -> bool {
    let clips = library.clip_table().len() as u64;
    clips > 0 && u64::from(max_instances) >= u64::from(WORKGROUP_SIZE) * clips
}

/// Track rows of group `g` one invocation of the
/// [`Grouped`](SamplerPlan::Grouped) plan samples (the shader's
/// override `ROW_RUN` in `sample_main`): two consecutive rows of its
/// instance for the STEP, LINEAR-vector and CUBICSPLINE-vector groups of
/// two or more rows in a clip, one otherwise.
///
/// Two rows' key searches then run side by side in one loop
/// (`find_segment_pair`), and for LINEAR and CUBICSPLINE vectors their
/// key loads too, component by component (`blend_pair`, `spline_pair`):
/// each search's texel read and each track's first key load is likely a
/// cache miss, and side by side two wait for memory together, where one
/// row after the other they waited in turn. The rotation groups are left
/// single: `sample_main` holds both rows' track rows per lane, and with
/// the slerp's or the normalization's arithmetic between their loads the
/// pairs were slower on the CPU adapters. The clip-blocks plan, whose rows
/// are uniform, pairs every group's rows (its runs).
#[must_use]
pub(crate) fn invocation_rows(g: u32, group_rows: u32) -> u32 {
    if g == crate::layout::GROUP_STEP
        || g == crate::layout::GROUP_CUBIC
        || g == crate::layout::GROUP_BLEND
    {
        group_rows.clamp(1, 2)
    } else {
        1
    }
}
