//! The skinner's compute passes: which kernel, in which module, binding
//! what ([`Pass`]), which passes each [`SkinStrategy`] records, and their
//! pipelines and bind groups (built from the binding tables of
//! `src/layout.rs`, paired by number: `src/gpu/bind.rs`).

use crate::error::Result;
use crate::layout::{Binding, MIX_MODULE_BINDINGS, POSE_BINDINGS, SKIN_MODULE_BINDINGS};

use super::{SkinStrategy, MIX_WGSL, POSE_WGSL, SKIN_WGSL, SKIN_WIDE_WGSL};

/// The WGSL module a pass's entry point is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RigModule {
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
    pub fn wgsl(self) -> &'static str {
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
    pub fn wgsl_with(self, wide: bool) -> &'static str {
        match self {
            RigModule::Skin if wide => SKIN_WIDE_WGSL,
            other => other.wgsl(),
        }
    }

    /// Every binding the module declares: [`POSE_BINDINGS`],
    /// [`SKIN_MODULE_BINDINGS`] or [`MIX_MODULE_BINDINGS`].
    #[must_use]
    pub fn bindings(self) -> &'static [Binding] {
        match self {
            RigModule::Pose => &POSE_BINDINGS,
            RigModule::Skin => &SKIN_MODULE_BINDINGS,
            RigModule::Mix => &MIX_MODULE_BINDINGS,
        }
    }
}

/// How many invocations a pass runs per instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lanes {
    /// One per node of the rig.
    Node,
    /// One per mesh (none when no mesh has morph targets).
    Mesh,
    /// One.
    One,
    /// One workgroup ([`super::SKIN_WORKGROUP_SIZE`] invocations).
    Workgroup,
    /// One per pointer target of the library.
    Pointer,
}

/// One compute pass: its entry point, its module, the bindings it uses
/// (its bind group layout holds exactly these) and its invocations per
/// instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pass {
    /// The entry point.
    pub entry: &'static str,
    /// The module it is in.
    pub module: RigModule,
    /// Binding numbers it uses.
    pub bindings: &'static [u32],
    /// Invocations per instance.
    pub lanes: Lanes,
}

/// The pose stage's pass (`pose_main`): local poses into `locals`.
pub const POSE_PASS: Pass = Pass {
    entry: "pose_main",
    module: RigModule::Pose,
    bindings: &[0, 1, 2, 3, 4, 5, 10, 11],
    lanes: Lanes::Node,
};

/// Morph weights (`morph_main`), part of the pose; every strategy.
pub const MORPH_PASS: Pass = Pass {
    entry: "morph_main",
    module: RigModule::Pose,
    bindings: &[0, 3, 4, 6, 7, 8, 9],
    lanes: Lanes::Mesh,
};

/// Hierarchy and joint matrices from the stored locals (`hierarchy_main`).
pub const HIERARCHY_PASS: Pass = Pass {
    entry: "hierarchy_main",
    module: RigModule::Skin,
    bindings: &[0, 1, 5, 10, 12, 13, 14, 15, 16, 17],
    lanes: Lanes::One,
};

/// Pose, hierarchy and joint matrices fused, one invocation per instance
/// (`skin_main`).
pub const SKIN_PASS: Pass = Pass {
    entry: "skin_main",
    module: RigModule::Skin,
    bindings: &[0, 1, 2, 3, 4, 10, 11, 12, 13, 14, 15, 16, 17],
    lanes: Lanes::One,
};

/// Pose, hierarchy and joint matrices fused, one workgroup per instance
/// (`skin_nodes_main`).
pub const SKIN_NODES_PASS: Pass = Pass {
    entry: "skin_nodes_main",
    module: RigModule::Skin,
    bindings: &[0, 1, 2, 3, 4, 10, 11, 12, 13, 14, 15, 16, 17],
    lanes: Lanes::Workgroup,
};

/// The mixer's pose stage (`mix_main`): each character's blended local
/// poses into `locals`.
pub const MIX_PASS: Pass = Pass {
    entry: "mix_main",
    module: RigModule::Mix,
    bindings: &[0, 1, 2, 3, 5, 10, 11, 18, 19, 20],
    lanes: Lanes::Node,
};

/// The mixer's morph weights (`mix_morph_main`).
pub const MIX_MORPH_PASS: Pass = Pass {
    entry: "mix_morph_main",
    module: RigModule::Mix,
    bindings: &[0, 3, 6, 7, 8, 9, 18, 19, 20],
    lanes: Lanes::Mesh,
};

/// The mixer's pointer properties (`mix_props_main`).
pub const MIX_PROPS_PASS: Pass = Pass {
    entry: "mix_props_main",
    module: RigModule::Mix,
    bindings: &[0, 3, 18, 19, 21, 22, 23, 24],
    lanes: Lanes::Pointer,
};

/// The passes of a skinner with a mixer, in order: the mixer's pose,
/// morph and pointer-property passes, then the staged hierarchy pass on
/// the blended locals.
pub const MIXED_PASSES: [Pass; 4] = [MIX_PASS, MIX_MORPH_PASS, MIX_PROPS_PASS, HIERARCHY_PASS];

/// Every pass of every strategy, and the mixer's.
pub const PASSES: [Pass; 8] = [
    POSE_PASS,
    MORPH_PASS,
    HIERARCHY_PASS,
    SKIN_PASS,
    SKIN_NODES_PASS,
    MIX_PASS,
    MIX_MORPH_PASS,
    MIX_PROPS_PASS,
];

impl SkinStrategy {
    /// The passes this strategy records, in order ([`SkinStrategy::Auto`]:
    /// those of the strategy it picks on a CPU adapter,
    /// [`SkinStrategy::PerInstance`]).
    #[must_use]
    pub fn passes(self) -> &'static [Pass] {
        match self {
            SkinStrategy::Staged => &[POSE_PASS, MORPH_PASS, HIERARCHY_PASS],
            SkinStrategy::Auto | SkinStrategy::PerInstance => &[MORPH_PASS, SKIN_PASS],
            SkinStrategy::PerNode => &[MORPH_PASS, SKIN_NODES_PASS],
        }
    }
}

/// A pass ready to record: its pipeline and bind group.
#[derive(Debug)]
pub(super) struct BuiltPass {
    pub pass: Pass,
    pub pipeline: wgpu::ComputePipeline,
    pub bind_group: wgpu::BindGroup,
}

/// Builds `pass`'s bind group layout (from its module's binding table),
/// bind group (from `resources`, the module's `(binding, resource)` pairs,
/// of which it takes those it uses) and pipeline, with the rig's
/// `overrides`.
/// What the host knows of a rig's tables, as the rig modules' overrides:
/// code that no table needs is left out of the pipelines (the fallback
/// adapters run every branch, taken or not).
#[derive(Debug, Clone, Copy)]
pub(super) struct RigOverrides {
    /// Every node's parent has a smaller index (skin.wgsl `PARENTS_FIRST`):
    /// no ancestor is recomputed.
    pub parents_first: bool,
    /// The node table fits in its uniform copy (`NODES_IN_HEAD`).
    pub nodes_in_head: bool,
    /// The pose channels fit in their uniform copy (`CHANNELS_IN_HEAD`).
    pub channels_in_head: bool,
    /// The joint slots and inverse binds fit in their uniform copies
    /// (`JOINTS_IN_HEAD`).
    pub joints_in_head: bool,
    /// The rig's node, mesh and pointer-target counts (`NODE_COUNT`,
    /// `MESH_COUNT`, `POINTER_COUNT`), at least 1.
    pub counts: [u32; 3],
    /// Every skin's mesh-node inverse is the identity
    /// (`MESH_INVERSES_IDENTITY`, [`SkinTables::mesh_inverses_are_identity`](crate::rig::SkinTables::mesh_inverses_are_identity)).
    pub mesh_inverses_identity: bool,
    /// Every inverse bind matrix is affine (`INVERSE_BINDS_AFFINE`,
    /// [`SkinTables::inverse_binds_are_affine`](crate::rig::SkinTables::inverse_binds_are_affine)).
    pub inverse_binds_affine: bool,
    /// Every sampled rotation the pose channels name is 4-float aligned
    /// (`ROTATIONS_ALIGNED4`, [`SkinTables::rotations_aligned4`](crate::rig::SkinTables::rotations_aligned4)).
    pub rotations_aligned4: bool,
    /// Some pose channel animates a translation (`ANIMATED_TRANSLATIONS`)
    /// and a scale (`ANIMATED_SCALES`): [`SkinTables::animates_translations`](crate::rig::SkinTables::animates_translations),
    /// [`SkinTables::animates_scales`](crate::rig::SkinTables::animates_scales).
    pub animated: [bool; 2],
    /// The most joint slots of one node (`NODE_SLOTS`,
    /// [`SkinTables::max_slots_per_node`](crate::rig::SkinTables::max_slots_per_node)).
    pub node_slots: u32,
}

pub(super) fn build(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    pass: Pass,
    resources: &[(u32, wgpu::BindingResource<'_>)],
    overrides: RigOverrides,
) -> Result<BuiltPass> {
    let layout =
        super::super::bind::layout(device, pass.entry, pass.module.bindings(), pass.bindings)?;
    let resources: Vec<_> = resources
        .iter()
        .filter(|(n, _)| pass.bindings.contains(n))
        .cloned()
        .collect();
    let bind_group =
        super::super::bind::group(device, pass.entry, &layout, pass.bindings, &resources)?;
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(pass.entry),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let flag = |b: bool| if b { 1.0 } else { 0.0 };
    // Every module has pose.wgsl's; the skin module skin.wgsl's too.
    let all = [
        ("NODES_IN_HEAD", flag(overrides.nodes_in_head)),
        ("CHANNELS_IN_HEAD", flag(overrides.channels_in_head)),
        ("NODE_COUNT", f64::from(overrides.counts[0].max(1))),
        ("MESH_COUNT", f64::from(overrides.counts[1].max(1))),
        ("POINTER_COUNT", f64::from(overrides.counts[2].max(1))),
        ("ROTATIONS_ALIGNED4", flag(overrides.rotations_aligned4)),
        ("ANIMATED_TRANSLATIONS", flag(overrides.animated[0])),
        ("ANIMATED_SCALES", flag(overrides.animated[1])),
        ("JOINTS_IN_HEAD", flag(overrides.joints_in_head)),
        ("PARENTS_FIRST", flag(overrides.parents_first)),
        (
            "MESH_INVERSES_IDENTITY",
            flag(overrides.mesh_inverses_identity),
        ),
        ("NODE_SLOTS", f64::from(overrides.node_slots)),
        ("INVERSE_BINDS_AFFINE", flag(overrides.inverse_binds_affine)),
    ];
    let constants: &[(&str, f64)] = match pass.module {
        RigModule::Skin => &all,
        RigModule::Pose | RigModule::Mix => &all[..8],
    };
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(pass.entry),
        layout: Some(&pipeline_layout),
        module,
        entry_point: Some(pass.entry),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants,
            ..Default::default()
        },
        cache: None,
    });
    Ok(BuiltPass {
        pass,
        pipeline,
        bind_group,
    })
}
