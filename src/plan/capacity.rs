//! How many characters of a model one chunk holds on a device: every
//! buffer an animator of a plan creates, sized from the plan's capacity,
//! and every dispatch grid it records, checked against a
//! [`DeviceProfile`]'s limits without a device ([`chunk_capacity`]). The
//! animator runs the same check ([`check_plan`]) before it creates
//! anything, so the two cannot disagree: a capacity this module accepts
//! builds, and one more character is refused naming the limit it passes.

use super::resources::{Counts, Resource, Shape};
use super::schedule::resolve_sampler;
use super::{max_blocks, DeviceLimits, DeviceProfile, Plan, PlanChoices};
use super::{SamplerPlan, SkinStrategy};
use crate::error::{Error, Result};
use crate::layout::BindingKind;
use crate::model::library::AnimationLibrary;
use crate::model::mix::MixerDesc;
use crate::model::BoundLibrary;
use crate::tables::library::LibraryTables;

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

    /// The sampler rows a character takes: two per action slot with a
    /// mixer, one otherwise.
    fn rows_per_character(self) -> u32 {
        match self {
            ChunkModel::Mixed(_, desc) => 2 * desc.actions_per_character.max(1),
            _ => 1,
        }
    }

    /// The plan of a chunk of this model for `capacity` instances
    /// (characters with a mixer: the mixer's `characters` is replaced by
    /// `capacity`), with the sampler plan `sampler` and the skin strategy
    /// `Auto` picks.
    ///
    /// # Errors
    /// Those of [`Plan::with_choices`], [`Plan::for_mixer`] and
    /// [`Plan::sampling`].
    pub(crate) fn plan(
        self,
        capacity: u32,
        profile: &DeviceProfile,
        sampler: SamplerPlan,
    ) -> Result<Plan> {
        match self {
            ChunkModel::Bound(bound) => {
                let choices = PlanChoices {
                    sampler,
                    skin: SkinStrategy::Auto,
                };
                Plan::with_choices(bound, capacity, profile, choices)
            }
            ChunkModel::Mixed(bound, desc) => {
                let desc = MixerDesc {
                    characters: capacity,
                    ..desc.clone()
                };
                Plan::for_mixer(bound, &desc, profile, sampler)
            }
            ChunkModel::Sampled(library) => Plan::sampling(library, capacity, profile, sampler),
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
/// many (`Animator::chunk_capacity`; a crowd model's animator is one).
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
/// does not unless `n` is `at_most`. Each capacity is checked on the
/// resources and dispatches of the plan an animator of it would run
/// ([`Plan::check_at`]), one plan per sampler plan met.
///
/// # Errors
/// As [`chunk_capacity`], when not even one character fits.
pub(crate) fn largest_fit(
    model: ChunkModel<'_>,
    profile: &DeviceProfile,
    sampler: SamplerPlan,
    at_most: u32,
) -> Result<u32> {
    let per = model.rows_per_character();
    // Sampler rows (characters x rows per character) index as u32.
    let at_most = at_most.clamp(1, (u32::MAX / per).max(1));
    let library = LibraryTables::of(model.library())?;
    let mut plans: Vec<Plan> = Vec::new();
    let mut fits = |n: u32| -> Result<()> {
        let resolved = resolve_sampler(sampler, profile, &library, n * per);
        let at = match plans.iter().position(|p| p.sampler == resolved) {
            Some(at) => at,
            None => {
                plans.push(model.plan(n, profile, resolved)?);
                plans.len() - 1
            }
        };
        plans[at].check_at(n, &profile.limits)
    };
    fits(1)?;
    if fits(at_most).is_ok() {
        return Ok(at_most);
    }
    // `lo` fits and `hi` does not: the answer is a boundary.
    let (mut lo, mut hi) = (1u32, at_most);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid).is_ok() {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// Checks every resource an animator of `plan` makes and every dispatch
/// it records against `limits`, before anything is created: the check
/// behind [`chunk_capacity`].
///
/// # Errors
/// [`Error::LimitExceeded`] naming the first that does not fit.
pub(crate) fn check_plan(plan: &Plan, limits: &DeviceLimits) -> Result<()> {
    plan.check_at(plan.capacity, limits)
}

impl Plan {
    /// The counts its sizes and grids follow at `characters` instances
    /// (or characters with a mixer).
    #[must_use]
    pub(crate) fn counts(&self, characters: u32) -> Counts {
        let per = self
            .mixer
            .as_ref()
            .map_or(1, |m| 2 * m.actions_per_character.max(1));
        let rows = characters.saturating_mul(per).max(1);
        let t = &self.sample_tables;
        Counts {
            rows,
            characters,
            block_entries: u64::from(max_blocks(rows, t.library.clip_table().len()))
                * t.dispatches.len() as u64,
        }
    }

    /// Checks every resource of the plan, sized for `characters`, and
    /// every dispatch's grid at that count, against `limits`: a buffer's
    /// largest storage and uniform binding against the binding limits and
    /// its size against `max_buffer_size`, a texture's rows against
    /// `max_texture_dimension_2d`, a grid against
    /// `max_compute_workgroups_per_dimension` (and 32-bit indexing).
    ///
    /// # Errors
    /// [`Error::LimitExceeded`] or [`Error::TextureRowsExceeded`], naming
    /// the first resource or dispatch that does not fit.
    pub(crate) fn check_at(&self, characters: u32, limits: &DeviceLimits) -> Result<()> {
        let counts = self.counts(characters);
        for (i, r) in self.resources.all().iter().enumerate() {
            self.check_resource(i, r, &counts, limits)?;
        }
        let max_dim = limits.max_compute_workgroups_per_dimension.max(1);
        let clips = self.sample_tables.library.clip_table().len();
        for part in self.dispatches.iter().flat_map(|d| &d.parts) {
            let (needed, what, most) = part.grid.needed(&counts, clips, max_dim);
            if needed > most.min(u64::from(u32::MAX)) {
                return Err(Error::LimitExceeded {
                    what,
                    needed,
                    limit_name: "max_compute_workgroups_per_dimension",
                    limit: u64::from(max_dim),
                });
            }
        }
        Ok(())
    }

    /// Resource `i` (`r`) at `counts` against `limits`.
    fn check_resource(
        &self,
        i: usize,
        r: &Resource,
        counts: &Counts,
        limits: &DeviceLimits,
    ) -> Result<()> {
        let size = match r.shape {
            Shape::Buffer(size) => size.at(counts),
            Shape::Texture {
                texels, row_shift, ..
            } => {
                let rows = texels.div_ceil(1u64 << row_shift).max(1);
                let limit = limits.max_texture_dimension_2d;
                if rows > u64::from(limit) {
                    return Err(Error::TextureRowsExceeded {
                        what: r.name,
                        rows,
                        width: 1 << row_shift,
                        limit,
                    });
                }
                return Ok(());
            }
        };
        let exceeded = |needed, limit_name, limit| Error::LimitExceeded {
            what: r.name,
            needed,
            limit_name,
            limit,
        };
        // The largest range each kind of binding takes of it.
        let (mut storage, mut uniform) = (0u64, 0u64);
        for d in &self.dispatches {
            for b in d
                .parts
                .iter()
                .flat_map(|p| &p.binds)
                .filter(|b| b.resource.0 == i)
            {
                let range = b.window.map_or(size, |w| w.size);
                match d
                    .module
                    .bindings()
                    .iter()
                    .find(|x| x.binding == b.binding)
                    .map(|x| x.kind)
                {
                    Some(BindingKind::Uniform) => uniform = uniform.max(range),
                    Some(_) => storage = storage.max(range),
                    None => {}
                }
            }
        }
        if storage > limits.max_storage_buffer_binding_size {
            let limit = limits.max_storage_buffer_binding_size;
            return Err(exceeded(storage, "max_storage_buffer_binding_size", limit));
        }
        if uniform > limits.max_uniform_buffer_binding_size {
            let limit = limits.max_uniform_buffer_binding_size;
            return Err(exceeded(uniform, "max_uniform_buffer_binding_size", limit));
        }
        if size > limits.max_buffer_size {
            return Err(exceeded(size, "max_buffer_size", limits.max_buffer_size));
        }
        Ok(())
    }
}
