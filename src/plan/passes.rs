//! The crate's compute passes, as data. [`STAGE_TABLE`] lists every one:
//! its entry point, its module, the bindings its layout holds and the CPU
//! twin it is tested against. The rig passes carry more ([`Pass`]: their
//! invocations per instance), and [`SkinStrategy`] says which of them each
//! strategy records. `src/gpu/` builds pipelines and bind groups from
//! these and the binding tables of `src/layout/`.

use crate::layout::{
    Binding, MIX_MODULE_BINDINGS, MIX_WGSL, PLACEMENT_USES, PLAYBACK_BINDINGS,
    PLAYBACK_COMMANDS_USES, PLAYBACK_USES, PLAYBACK_WGSL, POSE_BINDINGS, POSE_WGSL,
    SAMPLE_BINDINGS, SAMPLE_BLOCKS_USES, SAMPLE_USES, SAMPLE_WGSL, SKIN_MODULE_BINDINGS, SKIN_WGSL,
    SKIN_WIDE_WGSL,
};

/// How the skin stage spreads the pose, hierarchy and joint-matrix work
/// over the device. All give the same results up to rounding (the
/// hierarchy's products are associated differently); the tests check each
/// against the CPU twin of [`Staged`](Self::Staged), the reference.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SkinStrategy {
    /// What the device profile's plan picks: [`PerInstance`](Self::PerInstance)
    /// on CPU adapters; on GPUs [`PerNode`](Self::PerNode) for rigs of at
    /// most `MAX_PARALLEL_NODES`
    /// nodes, [`PerInstance`](Self::PerInstance) for larger ones (not yet
    /// measured on a GPU).
    #[default]
    Auto,
    /// The stages as separate passes, the reference: the pose pass
    /// (`pose_main`, one invocation per instance and node) writes each
    /// local pose to the locals buffer, then the hierarchy pass
    /// (`hierarchy_main`, one invocation per instance) reads them and walks
    /// the nodes as [`PerInstance`](Self::PerInstance) does, writing the
    /// world and joint matrices. A later pass (a mixer) can read and write
    /// the locals in between.
    Staged,
    /// One invocation per instance walks the instance's nodes in order
    /// (`skin_main`), computing each local pose in registers with the pose
    /// stage's function (no locals buffer). On a CPU adapter, where the
    /// SIMD lanes are few and a barrier is expensive, the fastest; on a
    /// GPU it keeps one lane per instance busy.
    PerInstance,
    /// One workgroup per instance, one lane per node (`skin_nodes_main`):
    /// locals (the pose stage's function) in workgroup memory, the
    /// hierarchy by pointer jumping in `ceil(log2(nodes))` rounds, one
    /// lane per joint slot; its per-lane tables read from storage. For
    /// GPUs; not yet timed on one. Refused for rigs of more than
    /// `MAX_PARALLEL_NODES` nodes.
    PerNode,
}

/// The WGSL module a dispatch's entry point is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Module {
    /// `SAMPLE_WGSL`.
    Sample,
    /// A rig module (`POSE_WGSL`, `SKIN_WGSL` or `SKIN_WIDE_WGSL`,
    /// `MIX_WGSL`).
    Rig(RigModule),
    /// `PLAYBACK_WGSL`: the playback pass, which writes a mixer's tables.
    Playback,
}

impl Module {
    /// The module's WGSL source, with 64-bit accesses where `wide`
    /// ([`RigModule::wgsl_with`]).
    #[must_use]
    pub(crate) fn wgsl(self, wide: bool) -> &'static str {
        match self {
            Module::Sample => SAMPLE_WGSL,
            Module::Rig(m) => m.wgsl_with(wide),
            Module::Playback => PLAYBACK_WGSL,
        }
    }

    /// The module's label on the device.
    #[must_use]
    pub(crate) fn label(self) -> &'static str {
        match self {
            Module::Sample => "keyframe-gpu.sample.wgsl",
            Module::Rig(RigModule::Pose) => "keyframe-gpu.pose.wgsl",
            Module::Rig(RigModule::Skin) => "keyframe-gpu.skin.wgsl",
            Module::Rig(RigModule::Mix) => "keyframe-gpu.mix.wgsl",
            Module::Playback => "keyframe-gpu.playback.wgsl",
        }
    }

    /// Every binding the module declares.
    #[must_use]
    pub(crate) fn bindings(self) -> &'static [Binding] {
        match self {
            Module::Sample => &SAMPLE_BINDINGS,
            Module::Rig(m) => m.bindings(),
            Module::Playback => &PLAYBACK_BINDINGS,
        }
    }
}

/// The WGSL module a rig pass's entry point is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RigModule {
    /// [`POSE_WGSL`]: the pose stage (`pose_main`, `morph_main`).
    Pose,
    /// [`SKIN_WGSL`]: pose.wgsl and skin.wgsl (`hierarchy_main`,
    /// `skin_main`, `skin_nodes_main`).
    Skin,
    /// [`MIX_WGSL`]: pose.wgsl and mix.wgsl (`mix_main`,
    /// `mix_morph_main`), the mixer's pose stage.
    Mix,
}

impl RigModule {
    /// The module's WGSL source.
    #[must_use]
    pub(crate) fn wgsl(self) -> &'static str {
        match self {
            RigModule::Pose => POSE_WGSL,
            RigModule::Skin => SKIN_WGSL,
            RigModule::Mix => MIX_WGSL,
        }
    }

    /// The module's WGSL source with wide accesses or without
    /// ([`SKIN_WIDE_WGSL`] for [`RigModule::Skin`] when `wide`; the
    /// other modules have one source).
    #[must_use]
    pub(crate) fn wgsl_with(self, wide: bool) -> &'static str {
        match self {
            RigModule::Skin if wide => SKIN_WIDE_WGSL,
            other => other.wgsl(),
        }
    }

    /// Every binding the module declares: [`POSE_BINDINGS`],
    /// [`SKIN_MODULE_BINDINGS`] or [`MIX_MODULE_BINDINGS`].
    #[must_use]
    pub(crate) fn bindings(self) -> &'static [Binding] {
        match self {
            RigModule::Pose => &POSE_BINDINGS,
            RigModule::Skin => &SKIN_MODULE_BINDINGS,
            RigModule::Mix => &MIX_MODULE_BINDINGS,
        }
    }
}

/// How many invocations a pass runs per instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lanes {
    /// One per node of the rig.
    Node,
    /// One per mesh (none when no mesh has morph targets).
    Mesh,
    /// One.
    One,
    /// One workgroup ([`SKIN_WORKGROUP_SIZE`](crate::layout::SKIN_WORKGROUP_SIZE) invocations).
    Workgroup,
    /// One per pointer target of the library.
    Pointer,
}

/// One compute pass: its entry point, its module, the bindings it uses
/// (its bind group layout holds exactly these) and its invocations per
/// instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pass {
    /// Its kernel: its row of [`STAGE_TABLE`].
    pub(crate) kernel: Kernel,
    /// The entry point.
    pub(crate) entry: &'static str,
    /// The module it is in.
    pub(crate) module: RigModule,
    /// Binding numbers it uses.
    pub(crate) bindings: &'static [u32],
    /// Those of them it writes.
    pub(crate) writes: &'static [u32],
    /// Invocations per instance.
    pub(crate) lanes: Lanes,
}

/// The pose stage's pass (`pose_main`): local poses into `locals`.
pub(crate) const POSE_PASS: Pass = Pass {
    kernel: Kernel::Pose,
    entry: "pose_main",
    module: RigModule::Pose,
    bindings: &[0, 1, 2, 3, 4, 5, 10, 11],
    writes: &[5],
    lanes: Lanes::Node,
};

/// Morph weights (`morph_main`), part of the pose; every strategy.
pub(crate) const MORPH_PASS: Pass = Pass {
    kernel: Kernel::Morph,
    entry: "morph_main",
    module: RigModule::Pose,
    bindings: &[0, 3, 4, 6, 7, 8, 9],
    writes: &[9],
    lanes: Lanes::Mesh,
};

/// Hierarchy and joint matrices from the stored locals (`hierarchy_main`).
pub(crate) const HIERARCHY_PASS: Pass = Pass {
    kernel: Kernel::Hierarchy,
    entry: "hierarchy_main",
    module: RigModule::Skin,
    bindings: &[0, 1, 5, 10, 12, 13, 14, 15, 16, 17],
    writes: &[12, 15],
    lanes: Lanes::One,
};

/// Pose, hierarchy and joint matrices fused, one invocation per instance
/// (`skin_main`).
pub(crate) const SKIN_PASS: Pass = Pass {
    kernel: Kernel::Skin,
    entry: "skin_main",
    module: RigModule::Skin,
    bindings: &[0, 1, 2, 3, 4, 10, 11, 12, 13, 14, 15, 16, 17],
    writes: &[12, 15],
    lanes: Lanes::One,
};

/// Pose, hierarchy and joint matrices fused, one workgroup per instance
/// (`skin_nodes_main`).
pub(crate) const SKIN_NODES_PASS: Pass = Pass {
    kernel: Kernel::SkinNodes,
    entry: "skin_nodes_main",
    module: RigModule::Skin,
    bindings: &[0, 1, 2, 3, 4, 10, 11, 12, 13, 14, 15, 16, 17],
    writes: &[12, 15],
    lanes: Lanes::Workgroup,
};

/// The mixer's pose stage (`mix_main`): each character's blended local
/// poses into `locals`.
pub(crate) const MIX_PASS: Pass = Pass {
    kernel: Kernel::Mix,
    entry: "mix_main",
    module: RigModule::Mix,
    bindings: &[0, 1, 2, 3, 5, 10, 11, 18, 19, 20],
    writes: &[5],
    lanes: Lanes::Node,
};

/// The mixer's morph weights (`mix_morph_main`).
pub(crate) const MIX_MORPH_PASS: Pass = Pass {
    kernel: Kernel::MixMorph,
    entry: "mix_morph_main",
    module: RigModule::Mix,
    bindings: &[0, 3, 6, 7, 8, 9, 18, 19, 20],
    writes: &[9],
    lanes: Lanes::Mesh,
};

/// The mixer's pointer properties (`mix_props_main`).
pub(crate) const MIX_PROPS_PASS: Pass = Pass {
    kernel: Kernel::MixProps,
    entry: "mix_props_main",
    module: RigModule::Mix,
    bindings: &[0, 3, 18, 19, 21, 22, 23, 24],
    writes: &[24],
    lanes: Lanes::Pointer,
};

/// The passes of a skinner with a mixer, in order: the mixer's pose,
/// morph and pointer-property passes, then the staged hierarchy pass on
/// the blended locals.
pub(crate) const MIXED_PASSES: [Pass; 4] =
    [MIX_PASS, MIX_MORPH_PASS, MIX_PROPS_PASS, HIERARCHY_PASS];

impl SkinStrategy {
    /// The passes this strategy records, in order ([`SkinStrategy::Auto`]:
    /// those of the strategy it picks on a CPU adapter,
    /// [`SkinStrategy::PerInstance`]).
    #[must_use]
    pub(crate) fn passes(self) -> &'static [Pass] {
        match self {
            SkinStrategy::Staged => &[POSE_PASS, MORPH_PASS, HIERARCHY_PASS],
            SkinStrategy::Auto | SkinStrategy::PerInstance => &[MORPH_PASS, SKIN_PASS],
            SkinStrategy::PerNode => &[MORPH_PASS, SKIN_NODES_PASS],
        }
    }
}

/// Every compute kernel (entry point) the crate records: the key of its
/// row of [`STAGE_TABLE`] and of its CPU twin (`cpu::exec::twin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kernel {
    /// `playback_commands_main`.
    PlaybackCommands,
    /// `playback_main`.
    Playback,
    /// `placement_main`.
    Placement,
    /// `sample_main`.
    Sample,
    /// `sample_blocks_main`.
    SampleBlocks,
    /// `pose_main`.
    Pose,
    /// `morph_main`.
    Morph,
    /// `hierarchy_main`.
    Hierarchy,
    /// `skin_main`.
    Skin,
    /// `skin_nodes_main`.
    SkinNodes,
    /// `mix_main`.
    Mix,
    /// `mix_morph_main`.
    MixMorph,
    /// `mix_props_main`.
    MixProps,
}

impl Kernel {
    /// Its row of [`STAGE_TABLE`].
    #[must_use]
    pub(crate) fn row(self) -> &'static StageRow {
        // Every kernel has a row: the table is indexed in this order
        // (checked by `src/tests/layout.rs`).
        &STAGE_TABLE[self as usize]
    }
}

/// One row of [`STAGE_TABLE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StageRow {
    /// Its kernel.
    pub(crate) kernel: Kernel,
    /// The entry point.
    pub(crate) entry: &'static str,
    /// The module it is in.
    pub(crate) module: Module,
    /// The binding numbers its layout holds: exactly those it uses.
    pub(crate) bindings: &'static [u32],
    /// Those of them it writes: what it leaves for the next stages.
    pub(crate) writes: &'static [u32],
}

/// A rig pass's row.
const fn rig_row(pass: Pass) -> StageRow {
    StageRow {
        kernel: pass.kernel,
        entry: pass.entry,
        module: Module::Rig(pass.module),
        bindings: pass.bindings,
        writes: pass.writes,
    }
}

/// Every compute pass the crate records, in stage order: the playback
/// pass (its commands, then its step, which writes a mixer's tables on
/// the GPU), sampling (two layouts of the same work, by
/// [`SamplerPlan`](crate::SamplerPlan)), the pose stage, the skin stage's
/// three strategies' passes, and the mixer's. A test checks each row against the module (the entry point
/// exists and uses exactly these bindings), that no module has an entry
/// point the table lacks, that each twin exists, and that
/// `docs/ARCHITECTURE.md`'s pass table says the same.
pub(crate) const STAGE_TABLE: [StageRow; 13] = [
    StageRow {
        kernel: Kernel::PlaybackCommands,
        entry: "playback_commands_main",
        module: Module::Playback,
        bindings: &PLAYBACK_COMMANDS_USES,
        writes: &[3, 4, 5, 13, 14],
    },
    StageRow {
        kernel: Kernel::Playback,
        entry: "playback_main",
        module: Module::Playback,
        bindings: &PLAYBACK_USES,
        writes: &[3, 4, 6, 7, 8, 12, 13],
    },
    StageRow {
        kernel: Kernel::Placement,
        entry: "placement_main",
        module: Module::Playback,
        bindings: &PLACEMENT_USES,
        writes: &[14],
    },
    StageRow {
        kernel: Kernel::Sample,
        entry: "sample_main",
        module: Module::Sample,
        bindings: &SAMPLE_USES,
        writes: &[6, 16],
    },
    StageRow {
        kernel: Kernel::SampleBlocks,
        entry: "sample_blocks_main",
        module: Module::Sample,
        bindings: &SAMPLE_BLOCKS_USES,
        writes: &[6, 16],
    },
    rig_row(POSE_PASS),
    rig_row(MORPH_PASS),
    rig_row(HIERARCHY_PASS),
    rig_row(SKIN_PASS),
    rig_row(SKIN_NODES_PASS),
    rig_row(MIX_PASS),
    rig_row(MIX_MORPH_PASS),
    rig_row(MIX_PROPS_PASS),
];
