//! How many characters of a model one chunk holds on a device: every
//! buffer an animator of a plan creates, sized from the plan's capacity,
//! and every dispatch grid it records, checked against a
//! [`DeviceProfile`]'s limits without a device ([`chunk_capacity`]). The
//! animator runs the same check ([`check_plan`]) before it creates
//! anything, so the two cannot disagree: a capacity this module accepts
//! builds, and one more character is refused naming the limit it passes.

use super::passes::{Pass, MIXED_PASSES};
use super::schedule::{block_workgroups, resolve_sampler};
use super::{lanes_per_instance, max_blocks, DeviceLimits, DeviceProfile, Plan};
use super::{SamplerPlan, SkinStrategy};
use crate::error::{Error, Result};
use crate::layout::{
    GpuInstance, GpuLocalPose, GpuMixAction, GpuSampleBlock, GpuSampleRow, BLOCK_HEAD, ROW_HEAD,
    SAMPLE_GROUPS, SKIN_WORKGROUP_SIZE, UNIFORM_HEAD, WORKGROUP_SIZE,
};
use crate::model::library::AnimationLibrary;
use crate::model::mix::MixerDesc;
use crate::model::BoundLibrary;
use crate::tables::library::LibraryTables;
use crate::tables::rig::SkinTables;

/// What one chunk of a model animates, for [`chunk_capacity`]: what
/// `Animator::new`, `Animator::with_mixer` and `Animator::sampler_only`
/// take.
#[derive(Debug, Clone, Copy)]
pub enum ChunkModel<'a> {
    /// A library bound to a rig: sampled, posed and skinned.
    Bound(&'a BoundLibrary),
    /// A bound library whose characters each blend several actions (the
    /// mixer's `characters` is ignored: the capacity is the answer).
    Mixed(&'a BoundLibrary, &'a MixerDesc),
    /// A library sampled without a rig.
    Sampled(&'a AnimationLibrary),
}

impl<'a> ChunkModel<'a> {
    /// The library sampled.
    fn library(self) -> &'a AnimationLibrary {
        match self {
            ChunkModel::Bound(b) | ChunkModel::Mixed(b, _) => b.library(),
            ChunkModel::Sampled(l) => l,
        }
    }
}

/// The most characters (instances, or with a mixer characters) of `model`
/// one animator holds on a device of `profile`: every buffer the animator
/// sizes by its capacity (the instance table, the sampled values, the
/// clip-blocks tables, the world and joint matrices, the morph weights,
/// the local poses, the mixer's action, character and property tables)
/// within `max_storage_buffer_binding_size` and `max_buffer_size`, and
/// every dispatch within `max_compute_workgroups_per_dimension` (and
/// 32-bit indexing). The sampler plan and skin strategy are the ones
/// `Auto` picks for that capacity on that profile, as
/// [`Plan::new`](super::Plan::new) picks them.
///
/// A model with more characters is split into chunks of at most this
/// many (`Animator::chunk_capacity`, `Crowd::chunk_capacity`).
///
/// ```
/// use keyframe_gpu::plan::{chunk_capacity, ChunkModel};
/// use keyframe_gpu::{AnimationLibrary, Clip, DeviceProfile, Interpolation, Property, Track};
/// let track = Track::new(0, Property::Translation, Interpolation::Linear,
///     vec![0.0, 1.0], vec![0.0; 6]);
/// let library = AnimationLibrary::new(vec![Clip::new("move", vec![track])]).unwrap();
/// let fit = chunk_capacity(ChunkModel::Sampled(&library), &DeviceProfile::gpu()).unwrap();
/// // Each character takes a 16-byte row of the instance table (and 12
/// // bytes of sampled values): a 128 MiB binding holds 8,388,608 of them.
/// assert_eq!(fit, (128 << 20) / 16);
/// ```
///
/// # Errors
/// [`Error::LimitExceeded`] naming the buffer or dispatch that does not
/// fit even one character (a library whose tables pass the limits); the
/// errors of [`Plan::new`](super::Plan::new) (a rig whose tables do not
/// fit 32-bit indices).
pub fn chunk_capacity(model: ChunkModel<'_>, profile: &DeviceProfile) -> Result<u32> {
    largest_fit(model, profile, SamplerPlan::Auto, u32::MAX)
}

/// The largest capacity `n <= at_most` (at least 1) at which an animator
/// of `model` with the sampler plan `sampler` (resolved per capacity as
/// [`Plan`] resolves it) fits `profile`'s limits: `n` fits, and `n + 1`
/// does not unless `n` is `at_most`.
///
/// # Errors
/// As [`chunk_capacity`], when not even one character fits.
pub(crate) fn largest_fit(
    model: ChunkModel<'_>,
    profile: &DeviceProfile,
    sampler: SamplerPlan,
    at_most: u32,
) -> Result<u32> {
    let rig = match model {
        ChunkModel::Bound(b) => {
            let tables = SkinTables::of(b)?;
            let strategy = SkinStrategy::Auto.resolve(profile, &tables)?;
            Some((tables, strategy.passes(), strategy == SkinStrategy::Staged))
        }
        ChunkModel::Mixed(b, _) => Some((SkinTables::of(b)?, &MIXED_PASSES[..], true)),
        ChunkModel::Sampled(_) => None,
    };
    let mixer = match model {
        ChunkModel::Mixed(_, desc) => Some(MixerNeeds::of(desc)),
        _ => None,
    };
    // Mixer rows (characters x actions x 2) index as u32.
    let most = match &mixer {
        Some(m) => u32::MAX / (2 * m.per_character.max(1)),
        None => u32::MAX,
    };
    let at_most = at_most.clamp(1, most.max(1));
    let library = LibraryTables::of(model.library())?;
    let shape = |n: u32| {
        let rows = mixer.as_ref().map_or(n, |m| n * 2 * m.per_character);
        Shape {
            library: &library,
            sampler: resolve_sampler(sampler, profile, &library, rows),
            rows,
            characters: n,
            rig: rig.as_ref().map(|(tables, passes, staged)| RigShape {
                tables,
                passes,
                staged: *staged,
            }),
            mixer,
        }
    };
    shape(1).check(&profile.limits)?;
    if shape(at_most).check(&profile.limits).is_ok() {
        return Ok(at_most);
    }
    // shape(lo) fits and shape(hi) does not: the answer is a boundary.
    let (mut lo, mut hi) = (1u32, at_most);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if shape(mid).check(&profile.limits).is_ok() {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// Checks every buffer an animator of `plan` sizes by its capacity, and
/// every dispatch it records, against `limits`, before anything is
/// created: the check behind [`chunk_capacity`].
///
/// # Errors
/// [`Error::LimitExceeded`] naming the first that does not fit.
pub(crate) fn check_plan(plan: &Plan, limits: &DeviceLimits) -> Result<()> {
    let passes: Vec<Pass> = plan.dispatches.iter().filter_map(|d| d.rig_pass).collect();
    let rig = match (&plan.skin_tables, plan.skin) {
        (Some(tables), Some(strategy)) => Some(RigShape {
            tables,
            passes: &passes,
            staged: strategy == SkinStrategy::Staged || plan.mixer.is_some(),
        }),
        _ => None,
    };
    Shape {
        library: &plan.sample_tables.library,
        sampler: plan.sampler,
        rows: plan.rows,
        characters: plan.capacity,
        rig,
        mixer: plan.mixer.as_ref().map(MixerNeeds::of),
    }
    .check(limits)
}

/// What sizes a mixer's tables.
#[derive(Debug, Clone, Copy)]
struct MixerNeeds {
    per_character: u32,
    mask_bytes: u64,
}

impl MixerNeeds {
    fn of(desc: &MixerDesc) -> Self {
        MixerNeeds {
            per_character: desc.actions_per_character,
            mask_bytes: desc
                .masks
                .iter()
                .map(|m| m.factors().len() as u64 * 4)
                .sum(),
        }
    }
}

/// The rig stage of a chunk: its tables, its passes, and whether it
/// stores local poses.
struct RigShape<'a> {
    tables: &'a SkinTables,
    passes: &'a [Pass],
    staged: bool,
}

/// Everything that sizes one animator's buffers and grids.
struct Shape<'a> {
    library: &'a LibraryTables,
    sampler: SamplerPlan,
    /// Sampler rows.
    rows: u32,
    /// Instances or characters of the rig stage.
    characters: u32,
    rig: Option<RigShape<'a>>,
    mixer: Option<MixerNeeds>,
}

/// [`Error::LimitExceeded`] when a storage buffer of `bytes` passes the
/// binding or the buffer size limit (as the animator checks its buffers).
fn storage(limits: &DeviceLimits, what: &'static str, bytes: u64) -> Result<()> {
    let exceeded = |limit_name, limit| Error::LimitExceeded {
        what,
        needed: bytes,
        limit_name,
        limit,
    };
    if bytes > limits.max_storage_buffer_binding_size {
        return Err(exceeded(
            "max_storage_buffer_binding_size",
            limits.max_storage_buffer_binding_size,
        ));
    }
    if bytes > limits.max_buffer_size {
        return Err(exceeded("max_buffer_size", limits.max_buffer_size));
    }
    Ok(())
}

/// [`Error::LimitExceeded`] when a dispatch of `needed` workgroups (or
/// invocations) passes `most`.
fn grid(what: &'static str, needed: u64, most: u64, max_dim: u32) -> Result<()> {
    if needed > most.min(u64::from(u32::MAX)) {
        return Err(Error::LimitExceeded {
            what,
            needed,
            limit_name: "max_compute_workgroups_per_dimension",
            limit: u64::from(max_dim),
        });
    }
    Ok(())
}

impl Shape<'_> {
    fn check(&self, limits: &DeviceLimits) -> Result<()> {
        self.check_sampler(limits)?;
        if let Some(rig) = &self.rig {
            self.check_rig(rig, limits)?;
        }
        Ok(())
    }

    /// The sampler's upload, instance and output buffers, its clip-blocks
    /// tables and its dispatches.
    fn check_sampler(&self, limits: &DeviceLimits) -> Result<()> {
        let library = self.library;
        let values = match library.packed() {
            Some(p) => p.words().len() as u64 * 4,
            None => library.values().len() as u64 * 4,
        };
        storage(limits, "key values", values)?;
        let clips = std::mem::size_of_val(library.clip_table()) as u64;
        storage(limits, "clip table", clips)?;
        let clip_blocks = self.sampler == SamplerPlan::ClipBlocks;
        if clip_blocks {
            let rows = (library.tracks().len() as u64).max(u64::from(ROW_HEAD));
            let bytes = rows * std::mem::size_of::<GpuSampleRow>() as u64;
            storage(limits, "clip-blocks row table", bytes)?;
        }
        let r = u64::from(self.rows);
        let stride = u64::from(library.output_stride());
        storage(
            limits,
            "instance table",
            r * std::mem::size_of::<GpuInstance>() as u64,
        )?;
        storage(
            limits,
            "output buffer",
            (r * stride * 4).div_ceil(16).max(1) * 16,
        )?;
        let max_dim = limits.max_compute_workgroups_per_dimension.max(1);
        let dims = u64::from(max_dim) * u64::from(max_dim);
        // The sampler's dispatches: one per track group with tracks (the
        // tuned plans), or one over every track (the reference plan).
        let groups: Vec<u32> = match self.sampler {
            SamplerPlan::Grouped | SamplerPlan::ClipBlocks => (0..SAMPLE_GROUPS)
                .map(|g| library.group_tracks_per_instance(g))
                .filter(|&per| per > 0)
                .collect(),
            SamplerPlan::Reference | SamplerPlan::Auto => vec![library.tracks_per_instance()],
        };
        if clip_blocks {
            let entries =
                u64::from(max_blocks(self.rows, library.clip_table().len())) * groups.len() as u64;
            let entry = std::mem::size_of::<GpuSampleBlock>() as u64;
            storage(
                limits,
                "clip-blocks block table",
                entries.max(u64::from(BLOCK_HEAD)) * entry,
            )?;
            storage(limits, "sorted instance table", r * 8)?;
            grid(
                "clip-blocks dispatch (blocks x row runs per block)",
                block_workgroups(library, self.rows),
                dims,
                max_dim,
            )
        } else {
            let most = groups.iter().copied().max().unwrap_or(0);
            grid(
                "dispatch (instances x tracks per instance)",
                r * u64::from(most),
                dims * u64::from(WORKGROUP_SIZE),
                max_dim,
            )
        }
    }

    /// The rig stage's outputs, the mixer's tables, and its dispatches.
    fn check_rig(&self, rig: &RigShape<'_>, limits: &DeviceLimits) -> Result<()> {
        let t = rig.tables;
        let c = u64::from(self.characters.max(1));
        let nodes = u64::from(t.node_count());
        storage(limits, "global matrices", (c * nodes * 64).max(64))?;
        storage(
            limits,
            "joint matrices",
            (c * u64::from(t.joint_count()) * 64).max(64),
        )?;
        storage(
            limits,
            "morph weights",
            (c * u64::from(t.morph_stride()) * 4).max(4),
        )?;
        let pose = std::mem::size_of::<GpuLocalPose>() as u64;
        if rig.staged {
            storage(limits, "local poses", (c * nodes * pose).max(pose))?;
        }
        if let Some(m) = &self.mixer {
            let action = std::mem::size_of::<GpuMixAction>() as u64;
            storage(
                limits,
                "mixer actions",
                c * u64::from(m.per_character) * action,
            )?;
            storage(limits, "mixer masks", m.mask_bytes)?;
        }
        storage(
            limits,
            "pose channel table",
            std::mem::size_of_val(t.channels()) as u64,
        )?;
        let head = u64::from(UNIFORM_HEAD) * 64;
        if head > limits.max_uniform_buffer_binding_size {
            return Err(Error::LimitExceeded {
                what: "node and inverse-bind tables (uniform copies)",
                needed: head,
                limit_name: "max_uniform_buffer_binding_size",
                limit: limits.max_uniform_buffer_binding_size,
            });
        }
        if self.mixer.is_some() {
            storage(limits, "mixer characters", (c * 8).max(8))?;
            storage(
                limits,
                "mixer properties",
                (c * u64::from(t.property_stride()) * 4).max(4),
            )?;
        }
        let max_dim = limits.max_compute_workgroups_per_dimension.max(1);
        let most = u64::from(max_dim) * u64::from(max_dim) * u64::from(SKIN_WORKGROUP_SIZE);
        for pass in rig.passes {
            use super::passes::Lanes;
            let what = match pass.lanes {
                Lanes::Node => "dispatch (instances x nodes)",
                Lanes::Mesh => "dispatch (instances x meshes)",
                Lanes::One | Lanes::Workgroup => "dispatch (instances)",
                Lanes::Pointer => "dispatch (characters x pointer targets)",
            };
            let per = u64::from(lanes_per_instance(t, pass.lanes));
            grid(what, c * per, most, max_dim)?;
        }
        Ok(())
    }
}
