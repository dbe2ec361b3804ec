//! [`Plan`]: the dispatches an animator records for a bound library, at a
//! capacity, on a device profile, as a value: built, printed and checked
//! without a device. `Animator::from_plan` builds what it lists.

use std::sync::Arc;

use super::declare::DispatchPart;
use super::passes::{Kernel, Lanes, Module, Pass, StageRow, MIXED_PASSES};
use super::resources::Resources;
use super::{
    block_row_run, cpu_adapter, invocation_rows, max_blocks, vec4_group, DeviceProfile,
    RigOverrides, SampleOverrides, SamplerPlan, SkinStrategy,
};
use crate::error::{Error, FitError, Result};
use crate::kinds::Interpolation;
use crate::layout::{
    Binding, BLOCK_HEAD, ENC_FRAMED, ENC_RAW, ENC_SMALLEST_THREE, ENC_VECTOR, GROUP_ALL,
    GROUP_SLERP, KEY_TEXTURE_ROW_SHIFT, MAX_PARALLEL_NODES, ROW_HEAD, SAMPLE_BINDINGS,
    SAMPLE_BLOCKS_USES, SAMPLE_GROUPS, SAMPLE_USES, SKIN_WORKGROUP_SIZE, UNIFORM_HEAD,
    WORKGROUP_SIZE,
};
use crate::model::library::AnimationLibrary;
use crate::model::mix::MixerDesc;
use crate::model::BoundLibrary;
use crate::tables::library::LibraryTables;
use crate::tables::rig::SkinTables;
use crate::tables::sample::SampleTables;

/// The stage of the pipeline a dispatch runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Key search and interpolation (`shaders/sample.wgsl`).
    Sample,
    /// Local poses (`pose.wgsl`).
    Pose,
    /// Morph weights (`pose.wgsl`).
    Morph,
    /// Hierarchy and joint matrices from stored locals (`skin.wgsl`).
    Hierarchy,
    /// Pose, hierarchy and joint matrices fused (`skin.wgsl`).
    Skin,
    /// The mixer's blended local poses (`mix.wgsl`).
    Mix,
    /// The mixer's morph weights (`mix.wgsl`).
    MixMorph,
    /// The mixer's pointer properties (`mix.wgsl`).
    MixProperties,
}

/// A dispatch's overrides, typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overrides {
    /// A sampler dispatch's.
    Sample(SampleOverrides),
    /// A rig module's (pose, skin, mix).
    Rig(RigOverrides),
}

impl Overrides {
    /// The pipeline constants, by WGSL name.
    #[must_use]
    pub(crate) fn constants(&self, module: Module) -> Vec<(&'static str, f64)> {
        match (self, module) {
            (Overrides::Rig(r), Module::Rig(m)) => r.constants_for(m),
            (Overrides::Rig(r), Module::Sample | Module::Playback) => r.constants(),
            (Overrides::Sample(s), _) => s.constants(),
        }
    }
}

/// One dispatch of a plan, in recording order.
#[derive(Debug, Clone, PartialEq)]
pub struct Dispatch {
    /// Its stage.
    pub stage: Stage,
    /// The WGSL entry point.
    pub entry_point: &'static str,
    /// The module it is in.
    pub(crate) module: Module,
    /// Its overrides.
    pub(crate) overrides: Overrides,
    /// Its workgroups `(x, y, z)` at the plan's full capacity (a frame
    /// with fewer instances dispatches fewer).
    pub workgroups: (u32, u32, u32),
    /// The bindings it reads and writes, by WGSL name.
    pub tables: Vec<&'static str>,
    /// The sampler's track group (`None` for rig passes).
    pub group: Option<u32>,
    /// Rows per instance (sampler) or invocations per instance (rig).
    pub per_instance: u32,
    /// Rows one invocation samples (`ROW_RUN`; 1 for rig passes).
    pub row_run: u32,
    /// The rig pass it runs (`None` for the sampler's dispatches): what
    /// the skin stage builds its pipeline from.
    pub(crate) rig_pass: Option<Pass>,
    /// The windows of a compressed library's block heads it binds, one
    /// part of the dispatch each (empty where it reads none).
    pub(crate) head_windows: Vec<crate::tables::sample::HeadWindow>,
    /// Its kernel: its row of the stage table and its CPU twin.
    pub(crate) kernel: Kernel,
    /// The dispatches it is recorded as, each with its bindings by name
    /// and its grid.
    pub(crate) parts: Vec<DispatchPart>,
}

impl Dispatch {
    /// Its row of the stage table.
    #[must_use]
    pub(crate) fn row(&self) -> &'static StageRow {
        self.kernel.row()
    }
}

/// What the caller chooses of a plan; `Auto` leaves it to the profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PlanChoices {
    /// The sampler's plan.
    pub sampler: SamplerPlan,
    /// The skin strategy (ignored with a mixer, which runs the staged
    /// hierarchy).
    pub skin: SkinStrategy,
}

/// What an animator runs: built from a bound library (or a library alone,
/// to sample only), a capacity and a [`DeviceProfile`], without a device.
/// `Display` prints it, a dispatch a line.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The profile it was made for.
    pub profile: DeviceProfile,
    /// Instances (with a mixer: characters) per frame at most.
    pub capacity: u32,
    /// Sampler rows per frame at most (the capacity, or two per action
    /// slot with a mixer).
    pub rows: u32,
    /// The sampler's plan, resolved.
    pub sampler: SamplerPlan,
    /// The skin strategy, resolved; `None` without a rig.
    pub skin: Option<SkinStrategy>,
    /// The mixer whose passes replace the pose stage, if any.
    pub mixer: Option<MixerDesc>,
    /// Whether the skin module accesses memory 64 bits a component.
    pub wide_accesses: bool,
    /// The dispatches, in recording order.
    pub dispatches: Vec<Dispatch>,
    /// Every buffer and texture the dispatches bind, with its size and
    /// where its contents come from.
    pub(crate) resources: Resources,
    /// What the sampler uploads (shared by samplers of the same library
    /// and plan).
    pub(crate) sample_tables: Arc<SampleTables>,
    /// The rig's tables; `None` without a rig.
    pub(crate) skin_tables: Option<SkinTables>,
    /// The library sampled.
    pub(crate) library: AnimationLibrary,
    /// The library bound to the rig posed; `None` without a rig.
    pub(crate) bound: Option<BoundLibrary>,
}

/// The workgroup grid `(x, y)` of a dispatch of `invocations` invocations
/// in workgroups of `workgroup_size`: one row while the count fits in
/// `max_per_dim`, then rows of `max_per_dim` workgroups (the shaders
/// rebuild the flat index from the row width). `(0, 0)` for none.
#[must_use]
pub fn dispatch_grid(invocations: u32, workgroup_size: u32, max_per_dim: u32) -> (u32, u32) {
    let workgroups = invocations.div_ceil(workgroup_size);
    let x = workgroups.min(max_per_dim);
    let y = if x == 0 { 0 } else { workgroups.div_ceil(x) };
    (x, y)
}

/// log2 of the key textures' row width on a device of `profile`.
pub(crate) fn key_row_shift(profile: &DeviceProfile) -> u32 {
    KEY_TEXTURE_ROW_SHIFT.min(profile.limits.max_texture_dimension_2d.max(1).ilog2())
}

/// The texels the key search texture can hold on a device of `profile`.
pub(crate) fn key_texture_texels(profile: &DeviceProfile) -> u64 {
    let max_dim = profile.limits.max_texture_dimension_2d.max(1);
    (1u64 << key_row_shift(profile)) * u64::from(max_dim)
}

/// Invocations per instance of a rig pass with `lanes`.
pub(crate) fn lanes_per_instance(tables: &SkinTables, lanes: Lanes) -> u32 {
    match lanes {
        Lanes::Node => tables.node_count(),
        // None when no mesh has morph targets (it would write nothing).
        Lanes::Mesh if tables.morph_stride() > 0 => tables.mesh_count(),
        Lanes::Mesh => 0,
        Lanes::One => u32::from(tables.node_count() > 0),
        Lanes::Workgroup => u32::from(tables.node_count() > 0) * SKIN_WORKGROUP_SIZE,
        Lanes::Pointer => tables.pointer_targets().len() as u32,
    }
}

impl SkinStrategy {
    /// This strategy, with `Auto` resolved for a device of `profile` and a
    /// rig of `tables`: the `cpu_adapter` choice on CPU adapters; on
    /// GPUs [`PerNode`](Self::PerNode) for rigs of at most
    /// `MAX_PARALLEL_NODES` nodes, [`PerInstance`](Self::PerInstance)
    /// for larger ones.
    ///
    /// # Errors
    /// [`Error::LimitExceeded`] for [`PerNode`](Self::PerNode) with a rig
    /// of more than `MAX_PARALLEL_NODES` nodes.
    pub(crate) fn resolve(
        self,
        profile: &DeviceProfile,
        tables: &SkinTables,
    ) -> Result<SkinStrategy> {
        let too_many = tables.node_count() > MAX_PARALLEL_NODES;
        match self {
            SkinStrategy::Auto if profile.cpu_adapter => Ok(cpu_adapter::skin_strategy(profile)),
            SkinStrategy::Auto if too_many => Ok(SkinStrategy::PerInstance),
            SkinStrategy::Auto => Ok(SkinStrategy::PerNode),
            SkinStrategy::PerNode if too_many => Err(Error::LimitExceeded {
                what: "rig nodes (SkinStrategy::PerNode)",
                needed: u64::from(tables.node_count()),
                limit_name: "MAX_PARALLEL_NODES",
                limit: u64::from(MAX_PARALLEL_NODES),
            }),
            chosen => Ok(chosen),
        }
    }
}

impl Plan {
    /// The plan `Auto` picks for `bound` at up to `capacity` instances on
    /// a device of `profile`.
    ///
    /// # Errors
    /// [`Error::LimitExceeded`] when a table's index does not fit.
    pub fn new(bound: &BoundLibrary, capacity: u32, profile: &DeviceProfile) -> Result<Plan> {
        Plan::with_choices(bound, capacity, profile, PlanChoices::default())
    }

    /// [`Plan::new`] with the caller's choices.
    ///
    /// # Errors
    /// As [`Plan::new`]; [`SkinStrategy::PerNode`] for a rig too large
    /// for it.
    pub fn with_choices(
        bound: &BoundLibrary,
        capacity: u32,
        profile: &DeviceProfile,
        choices: PlanChoices,
    ) -> Result<Plan> {
        let tables = SkinTables::of(bound)?;
        let mut plan = Plan::with_tables(bound.library(), tables, capacity, profile, choices)?;
        plan.bound = Some(bound.clone());
        Ok(plan)
    }

    /// The plan of [`with_choices`](Self::with_choices) from `library`
    /// and the rig tables made for it (which the skin stage checks against
    /// the sampler's library).
    pub(crate) fn with_tables(
        library: &AnimationLibrary,
        tables: SkinTables,
        capacity: u32,
        profile: &DeviceProfile,
        choices: PlanChoices,
    ) -> Result<Plan> {
        if library.output_stride() != tables.output_stride()
            || library.clips().len() != tables.clip_count() as usize
        {
            return Err(FitError::LibraryMismatch {
                tables_stride: tables.output_stride(),
                tables_clips: tables.clip_count() as usize,
                sampler_stride: library.output_stride(),
                sampler_clips: library.clips().len(),
            }
            .into());
        }
        let capacity = capacity.max(1);
        let skin = choices.skin.resolve(profile, &tables)?;
        let mut plan = Plan::sampling_rows(library, capacity, capacity, profile, choices)?;
        plan.add_rig(tables, skin, strategy_passes(skin), capacity)?;
        Ok(plan)
    }

    /// The plan of a mixer of `desc` over `bound`: the sampler over two rows
    /// per action slot, the mixer's passes, the staged hierarchy.
    ///
    /// # Errors
    /// As [`Plan::new`]; [`Error::LimitExceeded`] when the rows do not fit
    /// a `u32`.
    pub fn for_mixer(
        bound: &BoundLibrary,
        desc: &MixerDesc,
        profile: &DeviceProfile,
        sampler: SamplerPlan,
    ) -> Result<Plan> {
        let rows = u64::from(desc.characters) * u64::from(desc.actions_per_character) * 2;
        let rows = u32::try_from(rows).map_err(|_| Error::LimitExceeded {
            what: "mixer rows (characters x actions x 2)",
            needed: rows,
            limit_name: "u32 indexing",
            limit: u64::from(u32::MAX),
        })?;
        let characters = desc.characters.max(1);
        let choices = PlanChoices {
            sampler,
            skin: SkinStrategy::Staged,
        };
        let mut plan = Plan::sampling_rows(bound.library(), characters, rows, profile, choices)?;
        plan.mixer = Some(desc.clone());
        plan.add_rig(
            SkinTables::of(bound)?,
            SkinStrategy::Staged,
            &MIXED_PASSES,
            characters,
        )?;
        plan.bound = Some(bound.clone());
        Ok(plan)
    }

    /// The plan of a sampler alone (no rig) of `library` at up to
    /// `capacity` instances.
    ///
    /// # Errors
    /// As [`Plan::new`].
    pub fn sampling(
        library: &AnimationLibrary,
        capacity: u32,
        profile: &DeviceProfile,
        sampler: SamplerPlan,
    ) -> Result<Plan> {
        let choices = PlanChoices {
            sampler,
            ..PlanChoices::default()
        };
        let capacity = capacity.max(1);
        Plan::sampling_rows(library, capacity, capacity, profile, choices)
    }

    /// The sampler's part: its plan resolved (the clip-blocks plan falls
    /// back to the grouped one where its grid would pass the device's
    /// workgroup limit), its tables and its dispatches for `rows` rows.
    fn sampling_rows(
        model: &AnimationLibrary,
        capacity: u32,
        rows: u32,
        profile: &DeviceProfile,
        choices: PlanChoices,
    ) -> Result<Plan> {
        let rows = rows.max(1);
        let library = LibraryTables::of(model)?;
        let sampler = resolve_sampler(choices.sampler, profile, &library, rows);
        let tables = SampleTables::build(
            library,
            sampler,
            key_texture_texels(profile),
            cpu_adapter::uniform_heads(profile),
        );
        let library = &tables.library;
        let dispatches = sample_dispatches(library, &tables, rows, profile);
        let mut plan = Plan {
            profile: *profile,
            capacity,
            rows,
            sampler,
            skin: None,
            mixer: None,
            wide_accesses: false,
            dispatches,
            resources: Resources::default(),
            skin_tables: None,
            library: model.clone(),
            bound: None,
            sample_tables: Arc::new(tables),
        };
        plan.declare()?;
        Ok(plan)
    }

    /// Adds the rig passes `passes` of `strategy` over `tables`.
    fn add_rig(
        &mut self,
        tables: SkinTables,
        strategy: SkinStrategy,
        passes: &'static [Pass],
        capacity: u32,
    ) -> Result<()> {
        self.wide_accesses = cpu_adapter::wide_accesses(&self.profile);
        let max_dim = self
            .profile
            .limits
            .max_compute_workgroups_per_dimension
            .max(1);
        for &pass in passes {
            let overrides = rig_overrides(&tables, &self.profile, pass);
            let per = lanes_per_instance(&tables, pass.lanes);
            let (x, y) = dispatch_grid(capacity.saturating_mul(per), SKIN_WORKGROUP_SIZE, max_dim);
            self.dispatches.push(Dispatch {
                stage: stage_of(pass),
                entry_point: pass.entry,
                module: Module::Rig(pass.module),
                overrides: Overrides::Rig(overrides),
                workgroups: (x, y, 1),
                tables: binding_names(pass.module.bindings(), pass.bindings),
                group: None,
                per_instance: per,
                row_run: 1,
                rig_pass: Some(pass),
                head_windows: Vec::new(),
                kernel: pass.kernel,
                parts: Vec::new(),
            });
        }
        self.skin = Some(strategy);
        self.skin_tables = Some(tables);
        self.declare()
    }
}

/// The passes a (resolved) strategy records.
fn strategy_passes(strategy: SkinStrategy) -> &'static [Pass] {
    strategy.passes()
}

fn stage_of(pass: Pass) -> Stage {
    match pass.entry {
        "pose_main" => Stage::Pose,
        "morph_main" => Stage::Morph,
        "hierarchy_main" => Stage::Hierarchy,
        "mix_main" => Stage::Mix,
        "mix_morph_main" => Stage::MixMorph,
        "mix_props_main" => Stage::MixProperties,
        _ => Stage::Skin,
    }
}

/// The names of `uses` in `table`.
fn binding_names(table: &[Binding], uses: &[u32]) -> Vec<&'static str> {
    uses.iter()
        .filter_map(|n| table.iter().find(|b| b.binding == *n).map(|b| b.name))
        .collect()
}

/// `choice` resolved for `rows` rows of `library` on a device of
/// `profile`: `Auto`'s pick, the clip-blocks plan falling back to the
/// grouped one where its grid would pass the device's workgroup limit.
pub(crate) fn resolve_sampler(
    choice: SamplerPlan,
    profile: &DeviceProfile,
    library: &LibraryTables,
    rows: u32,
) -> SamplerPlan {
    let sampler = choice.resolve(profile, library, rows);
    if choice == SamplerPlan::Auto
        && sampler == SamplerPlan::ClipBlocks
        && !block_grid_fits(library, rows, profile)
    {
        return SamplerPlan::Grouped;
    }
    sampler
}

/// Whether the clip-blocks plan's grid (blocks x row runs) fits the
/// device's workgroup-count limit for `rows` rows.
pub(crate) fn block_grid_fits(library: &LibraryTables, rows: u32, profile: &DeviceProfile) -> bool {
    let max_dim = u64::from(profile.limits.max_compute_workgroups_per_dimension.max(1));
    block_workgroups(library, rows) <= (max_dim * max_dim).min(u64::from(u32::MAX))
}

/// The clip-blocks plan's workgroups for `rows` rows: per group up to
/// `max_blocks` blocks, a workgroup per block and run of the group's rows,
/// over x and then y; the largest group's.
pub(crate) fn block_workgroups(library: &LibraryTables, rows: u32) -> u64 {
    let group_blocks = max_blocks(rows, library.clip_table().len());
    (0..SAMPLE_GROUPS)
        .map(|g| {
            let per = library.group_tracks_per_instance(g);
            u64::from(group_blocks) * u64::from(per.div_ceil(block_row_run(per)))
        })
        .max()
        .unwrap_or(0)
}

/// The sampler's dispatches for `rows` rows: one per track group with
/// tracks (one over every track in the reference plan), each with its
/// overrides and its grid at full capacity.
fn sample_dispatches(
    library: &LibraryTables,
    tables: &SampleTables,
    rows: u32,
    profile: &DeviceProfile,
) -> Vec<Dispatch> {
    let clip_blocks = tables.plan == SamplerPlan::ClipBlocks;
    let max_dim = profile.limits.max_compute_workgroups_per_dimension.max(1);
    let uses: &[u32] = if clip_blocks {
        &SAMPLE_BLOCKS_USES
    } else {
        &SAMPLE_USES
    };
    (0..tables.dispatches.len())
        .map(|slot| {
            let overrides = sample_overrides(library, tables, slot, rows, profile);
            let per = overrides.group_rows;
            let (x, y) = if clip_blocks {
                let blocks = max_blocks(rows, library.clip_table().len());
                let workgroups = blocks.saturating_mul(per.div_ceil(overrides.row_run));
                let x = workgroups.min(max_dim);
                (x, if x == 0 { 0 } else { workgroups.div_ceil(x) })
            } else {
                let invocations = rows.saturating_mul(per.div_ceil(overrides.row_run));
                dispatch_grid(invocations, WORKGROUP_SIZE, max_dim)
            };
            Dispatch {
                stage: Stage::Sample,
                entry_point: if clip_blocks {
                    "sample_blocks_main"
                } else {
                    "sample_main"
                },
                module: Module::Sample,
                overrides: Overrides::Sample(overrides),
                workgroups: (x, y, 1),
                tables: binding_names(&SAMPLE_BINDINGS, uses),
                group: Some(tables.dispatches[slot].0),
                per_instance: tables.dispatches[slot].1,
                row_run: overrides.row_run,
                rig_pass: None,
                head_windows: tables.head_windows.get(slot).cloned().unwrap_or_default(),
                kernel: if clip_blocks {
                    Kernel::SampleBlocks
                } else {
                    Kernel::Sample
                },
                parts: Vec::new(),
            }
        })
        .collect()
}

/// The overrides of sampler dispatch `slot` for `rows` rows.
pub(crate) fn sample_overrides(
    library: &LibraryTables,
    tables: &SampleTables,
    slot: usize,
    rows: u32,
    profile: &DeviceProfile,
) -> SampleOverrides {
    let (g, per_instance) = tables.dispatches[slot];
    let run_keys = tables.run_keys[slot];
    let regular = tables.regular[slot];
    // The reference plan searches every key; the tuned plans compile in
    // the lookup paths the library's tracks take.
    let tuned = tables.plan != SamplerPlan::Reference;
    let block_entries =
        u64::from(max_blocks(rows, library.clip_table().len())) * tables.dispatches.len() as u64;
    let heads = cpu_adapter::uniform_heads(profile);
    let row_run = match tables.plan {
        SamplerPlan::ClipBlocks => block_row_run(per_instance),
        SamplerPlan::Reference | SamplerPlan::Auto => 1,
        SamplerPlan::Grouped => invocation_rows(g, per_instance),
    };
    SampleOverrides {
        group: g,
        row_shift: key_row_shift(profile),
        has_table: tuned && library.tracks().iter().any(|t| t.lookup_scale > 0.0),
        // A compressed library's negative scales are uniform times, which
        // have no texels to guess from (decode.wgsl's rate_segment).
        has_direct: tuned
            && !library.is_compressed()
            && library.tracks().iter().any(|t| t.lookup_scale < 0.0),
        blocks_in_uniform: heads && block_entries <= u64::from(BLOCK_HEAD),
        rows_in_uniform: heads && library.tracks().len() as u64 <= u64::from(ROW_HEAD),
        group_rows: per_instance.max(1),
        row_run,
        run_keys: run_keys.mode as u32,
        table_bits: run_keys.bits,
        table_texels: run_keys.table_texels,
        run_base: tables.run_base,
        aligned4: tuned && vec4_group(library, g),
        interleaved: g == GROUP_SLERP && !tables.interleaved.is_empty(),
        regular_segment: regular.0,
        regular_search: regular.1,
        compressed: library.is_compressed(),
        // A compressed row with uniform times has a negative scale.
        uniform_times: library.is_compressed()
            && library
                .tracks()
                .iter()
                .filter(|t| g == GROUP_ALL || t.group() == g)
                .all(|t| t.lookup_scale < 0.0),
        wide_rows: !library.is_compressed()
            || library
                .tracks()
                .iter()
                .any(|t| (g == GROUP_ALL || t.group() == g) && t.width > 4),
        encodings: stream_encodings(library, g),
        // Built only where the profile takes uniform heads and the
        // group's clips fit windows.
        heads_in_uniform: tables.head_windows.get(slot).is_some_and(|w| !w.is_empty()),
        verbatim_start: if library.is_compressed() {
            library.verbatim_start()
        } else {
            u32::MAX
        },
    }
}

/// Every encoding's bit (the shader's default `ENCODINGS`).
const ALL_ENCODINGS: u32 =
    1 << ENC_VECTOR | 1 << ENC_SMALLEST_THREE | 1 << ENC_RAW | 1 << ENC_FRAMED;

/// The encodings of the compressed streams (values, and CUBICSPLINE
/// tangents) of group `g`'s tracks, bit `1 << e` for encoding `e` (the
/// block header's meta word: value encoding in bits 0..8, tangent encoding
/// in bits 16..24); every bit for an uncompressed library, which never
/// decodes.
fn stream_encodings(library: &LibraryTables, g: u32) -> u32 {
    let Some(packed) = library.packed() else {
        return ALL_ENCODINGS;
    };
    let mut bits = 0;
    for t in library
        .tracks()
        .iter()
        .filter(|t| g == GROUP_ALL || t.group() == g)
    {
        let Some([values, tangents]) = packed.encodings(t.values_offset) else {
            return ALL_ENCODINGS;
        };
        bits |= 1 << values.min(31);
        if t.interpolation == Interpolation::CubicSpline as u32 {
            bits |= 1 << tangents.min(31);
        }
    }
    bits
}

/// The rig overrides of `pass` on a device of `profile`: uniform copies of
/// the small tables on CPU adapters only, and never for the per-node
/// pass, whose lanes read them at per-lane indices.
pub(crate) fn rig_overrides(
    tables: &SkinTables,
    profile: &DeviceProfile,
    pass: Pass,
) -> RigOverrides {
    let head = UNIFORM_HEAD as usize;
    let heads = cpu_adapter::uniform_heads(profile) && pass.lanes != Lanes::Workgroup;
    RigOverrides {
        parents_first: tables.parents_first(),
        nodes_in_head: heads && tables.nodes().len() <= head,
        channels_in_head: heads && tables.channels().len() <= head,
        joints_in_head: heads && tables.joints().len() <= head,
        mesh_inverses_identity: tables.mesh_inverses_are_identity(),
        rotations_aligned4: tables.rotations_aligned4(),
        animated: [tables.animates_translations(), tables.animates_scales()],
        inverse_binds_affine: tables.inverse_binds_are_affine(),
        node_slots: tables.max_slots_per_node(),
        counts: [
            tables.node_count(),
            tables.mesh_count(),
            tables.pointer_targets().len() as u32,
        ],
    }
}
