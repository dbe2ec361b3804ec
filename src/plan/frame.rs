//! [`HostFrame`]: the host's half of a frame of a plan, without a device:
//! every resource the host writes each frame ([`FrameSource`]: the
//! resolved instances, the clip sort and its blocks, each dispatch's
//! parameters, the mixer's actions and character ranges) and each
//! dispatch part's grid, computed from the frame's instances or actions
//! into vectors sized once for the plan's capacity. The GPU executor
//! writes its bytes and records the grids; the CPU executor reads the
//! same bytes.

use std::mem::size_of;

use super::declare::DispatchPart;
use super::passes::Module;
use super::resources::{Count, FrameSource, Grid, Source};
use super::{dispatch_grid, Plan};
use crate::error::{Error, MixError, Result};
use crate::layout::{GpuBlockParams, GpuInstance, GpuParams, GpuSkinParams};
use crate::model::instance::Instance;
use crate::model::mix::Action;
use crate::tables::blocks::{ClipSort, Part as BlockPart};
use crate::tables::instance::resolve_instances_into;
use crate::tables::mix::Packer;

/// One frame's host-written resources and grids, for a plan.
#[derive(Debug)]
pub(crate) struct HostFrame {
    /// The resolved instance rows in effect.
    resolved: Vec<GpuInstance>,
    /// The next frame's, swapped in once accepted.
    next: Vec<GpuInstance>,
    /// Instances, or a mixer's characters, in effect.
    characters: u32,
    /// The clip-blocks plan's sort.
    sort: Option<ClipSort>,
    /// The clip-blocks plan's parts, in recording order.
    block_parts: Vec<BlockPart>,
    /// Each sampler part's parameters, a slot each.
    sample_params: Vec<u8>,
    /// Each clip-blocks part's parameters, a slot each.
    block_params: Vec<u8>,
    /// The rig passes' parameters.
    skin_params: GpuSkinParams,
    /// The mixer's packer.
    packer: Option<Packer>,
    /// Each part's workgroups, in recording order.
    grids: Vec<(u32, u32, u32)>,
    /// The rows of a frame whose rows and mixer tables another pass
    /// writes (the GPU playback pass): the host writes none of them.
    driven: Option<u32>,
}

impl HostFrame {
    /// The vectors of a frame of `plan`, sized for its capacity, holding
    /// an empty frame.
    pub(crate) fn new(plan: &Plan) -> HostFrame {
        let counts = plan.counts(plan.capacity);
        let library = &plan.sample_tables.library;
        let parts: Vec<&DispatchPart> = plan.dispatches.iter().flat_map(|d| &d.parts).collect();
        let block_parts: Vec<BlockPart> = parts
            .iter()
            .filter_map(|p| match p.grid {
                Grid::Blocks { part, .. } => Some(part),
                Grid::Invocations { .. } => None,
            })
            .collect();
        let has = |s: FrameSource| {
            plan.resources
                .all()
                .iter()
                .any(|r| r.source == Source::Frame(s))
        };
        let slot = |s: FrameSource| {
            plan.resources
                .all()
                .iter()
                .find(|r| r.source == Source::Frame(s))
                .and_then(|r| r.size())
                .map_or(0, |size| size.at(&counts) as usize)
        };
        let sort = has(FrameSource::SortedInstances).then(|| {
            ClipSort::new(
                counts.rows,
                library.clip_table().len(),
                plan.sample_tables.dispatches.len(),
                block_parts.len(),
            )
        });
        let packer = plan
            .mixer
            .as_ref()
            .map(|m| Packer::new(plan.capacity, m.actions_per_character));
        let mut frame = HostFrame {
            resolved: Vec::with_capacity(counts.rows as usize),
            next: Vec::with_capacity(counts.rows as usize),
            characters: 0,
            sort,
            block_parts,
            sample_params: vec![0; slot(FrameSource::SampleParams)],
            block_params: vec![0; slot(FrameSource::BlockParams)],
            skin_params: plan
                .skin_tables
                .as_ref()
                .map_or(bytemuck::Zeroable::zeroed(), |t| t.params(0)),
            packer,
            grids: vec![(0, 0, 0); parts.len()],
            driven: None,
        };
        frame.commit(plan, 0);
        frame
    }

    /// Takes `instances` as the next frame (with a mixer: one action of
    /// weight 1 per character): every instance is checked first; on error
    /// nothing changes.
    ///
    /// # Errors
    /// [`Error::TooManyInstances`] (with a mixer,
    /// [`MixError::TooManyCharacters`]) past the capacity,
    /// [`Error::ClipOutOfRange`], [`Error::InstanceTimeNotFinite`].
    pub(crate) fn set_instances(&mut self, plan: &Plan, instances: &[Instance]) -> Result<()> {
        if plan.mixer.is_some() && instances.len() > plan.capacity as usize {
            return Err(MixError::TooManyCharacters {
                count: instances.len(),
                capacity: plan.capacity,
            }
            .into());
        }
        if instances.len() > plan.rows as usize {
            return Err(Error::TooManyInstances {
                requested: instances.len(),
                capacity: plan.rows,
            });
        }
        resolve_instances_into(&plan.library, instances, &mut self.next)?;
        if let Some(packer) = &mut self.packer {
            packer.pack_instances(instances);
        }
        std::mem::swap(&mut self.resolved, &mut self.next);
        self.driven = None;
        self.commit(plan, instances.len() as u32);
        Ok(())
    }

    /// Checks and packs a mixer's actions (`counts[c]` consecutive actions
    /// are character `c`'s) for [`take_actions`](Self::take_actions);
    /// nothing of the frame in effect changes.
    ///
    /// # Errors
    /// [`MixError::NoMixer`] without a mixer, and the packer's errors.
    pub(crate) fn pack_actions(
        &mut self,
        plan: &Plan,
        actions: &[Action],
        counts: &[u32],
    ) -> Result<()> {
        let (Some(packer), Some(desc)) = (&mut self.packer, &plan.mixer) else {
            return Err(MixError::NoMixer.into());
        };
        packer.pack(&plan.library, desc.masks.len(), actions, counts)?;
        Ok(())
    }

    /// Takes the actions [`pack_actions`](Self::pack_actions) packed as the
    /// next frame.
    ///
    /// # Errors
    /// [`MixError::NoMixer`] without a mixer; the instance errors of the
    /// rows (checked by the packing already).
    pub(crate) fn take_actions(&mut self, plan: &Plan) -> Result<()> {
        let Some(packer) = &self.packer else {
            return Err(MixError::NoMixer.into());
        };
        resolve_instances_into(&plan.library, &packer.rows, &mut self.next)?;
        let characters = packer.characters.len() as u32;
        std::mem::swap(&mut self.resolved, &mut self.next);
        self.driven = None;
        self.commit(plan, characters);
        Ok(())
    }

    /// Takes a frame of `rows` sampler rows and `characters` mixer
    /// characters whose rows and mixer tables another pass writes on the
    /// device (the GPU playback pass): only the parameters and grids are
    /// the host's. `false` (nothing changes) without a mixer or for a
    /// plan whose rows the host sorts (clip-blocks).
    pub(crate) fn drive(&mut self, plan: &Plan, rows: u32, characters: u32) -> bool {
        if self.sort.is_some() || self.packer.is_none() {
            return false;
        }
        let rows = rows.min(plan.rows);
        self.resolved.clear();
        self.driven = Some(rows);
        self.commit(plan, characters.min(plan.capacity));
        true
    }

    /// Sampler rows in effect (the host's, or those another pass writes).
    #[must_use]
    pub(crate) fn rows(&self) -> u32 {
        self.driven.unwrap_or(self.resolved.len() as u32)
    }

    /// Instances (a mixer's characters) in effect.
    #[must_use]
    pub(crate) fn characters(&self) -> u32 {
        self.characters
    }

    /// The sampler rows in effect, resolved.
    #[must_use]
    pub(crate) fn resolved(&self) -> &[GpuInstance] {
        &self.resolved
    }

    /// The workgroups of part `k` (in recording order) this frame.
    #[must_use]
    pub(crate) fn grid(&self, k: usize) -> (u32, u32, u32) {
        self.grids.get(k).copied().unwrap_or((0, 0, 0))
    }

    /// The bytes the host writes to the resource of `source` this frame
    /// (empty for a table it writes nothing to).
    #[must_use]
    pub(crate) fn bytes(&self, source: FrameSource) -> &[u8] {
        let others = matches!(
            source,
            FrameSource::Instances | FrameSource::MixActions | FrameSource::MixCharacters
        );
        if others && self.driven.is_some() {
            return &[];
        }
        match source {
            FrameSource::Instances => bytemuck::cast_slice(&self.resolved),
            FrameSource::SampleParams => &self.sample_params,
            FrameSource::SortedInstances => self
                .sort
                .as_ref()
                .map_or(&[][..], |s| bytemuck::cast_slice(s.sorted())),
            FrameSource::Blocks => self
                .sort
                .as_ref()
                .map_or(&[][..], |s| bytemuck::cast_slice(s.blocks())),
            FrameSource::BlockParams => &self.block_params,
            FrameSource::SkinParams => bytemuck::bytes_of(&self.skin_params),
            FrameSource::MixActions => self
                .packer
                .as_ref()
                .map_or(&[][..], |p| bytemuck::cast_slice(&p.actions)),
            FrameSource::MixCharacters => self
                .packer
                .as_ref()
                .map_or(&[][..], |p| bytemuck::cast_slice(&p.characters)),
        }
    }

    /// The frame of the resolved rows and `characters`: the clip sort, every
    /// part's grid and parameters, the rig's parameters.
    fn commit(&mut self, plan: &Plan, characters: u32) {
        self.characters = characters;
        let rows = self.rows();
        if let Some(sort) = &mut self.sort {
            sort.sort(
                &self.resolved,
                plan.sample_tables.library.clip_table(),
                &self.block_parts,
            );
        }
        let max_dim = plan
            .profile
            .limits
            .max_compute_workgroups_per_dimension
            .max(1);
        let stride = plan.sample_tables.library.output_stride();
        let align = plan.profile.limits.min_uniform_buffer_offset_alignment as usize;
        let (mut sample_slot, mut block_slot) = (0usize, 0usize);
        let parts = plan.dispatches.iter().flat_map(|d| {
            let sampler = d.module == Module::Sample;
            d.parts.iter().map(move |p| (d.per_instance, sampler, p))
        });
        for (k, (per_instance, sampler, part)) in parts.enumerate() {
            let grid = match part.grid {
                Grid::Invocations {
                    count,
                    per,
                    workgroup,
                    ..
                } => {
                    let n = if count == Count::Rows {
                        rows
                    } else {
                        characters
                    };
                    // Fits: checked against the capacity when the plan
                    // was made.
                    let (x, y) = dispatch_grid(n * per, workgroup, max_dim);
                    if sampler {
                        let params = GpuParams {
                            instance_count: rows,
                            tracks_per_instance: per_instance,
                            output_stride: stride,
                            row_invocations: x * workgroup,
                        };
                        put(&mut self.sample_params, sample_slot, align, &params);
                        sample_slot += 1;
                    }
                    (x, y, 1)
                }
                Grid::Blocks { part, runs } => {
                    let (base, count) = self.sort.as_ref().map_or((0, 0), |s| s.range(block_slot));
                    // Fits: checked against `max_blocks` when the plan
                    // was made.
                    let workgroups = count * runs;
                    let x = workgroups.min(max_dim);
                    let y = if x == 0 { 0 } else { workgroups.div_ceil(x) };
                    let params = GpuBlockParams {
                        block_base: base,
                        block_count: count,
                        output_stride: stride,
                        grid_width: x,
                        head_first: part.head_first,
                        _pad0: 0,
                        _pad1: 0,
                        _pad2: 0,
                    };
                    put(&mut self.block_params, block_slot, align, &params);
                    block_slot += 1;
                    (x, y, 1)
                }
            };
            self.grids[k] = grid;
        }
        if let Some(t) = &plan.skin_tables {
            self.skin_params = t.params(characters);
        }
    }
}

/// Writes `value` into slot `slot` of `bytes`, slots `max(align, size of
/// T)` bytes apart.
fn put<T: bytemuck::Pod>(bytes: &mut [u8], slot: usize, align: usize, value: &T) {
    let stride = align.max(size_of::<T>());
    let at = slot * stride;
    if let Some(out) = bytes.get_mut(at..at + size_of::<T>()) {
        out.copy_from_slice(bytemuck::bytes_of(value));
    }
}
