//! The WGSL modules the passes are built from, each the concatenation of
//! the shader files it needs, in order.

/// WGSL of the prelude every kernel is built from: the structs twinned
/// here and the constants both languages use (`shaders/prelude.wgsl`).
pub const PRELUDE_WGSL: &str = include_str!("../../shaders/prelude.wgsl");

/// WGSL source of the sampling stage: the prelude, `quat.wgsl`,
/// `sample.wgsl`, `decode.wgsl` (compressed tracks, compiled in only where
/// the override `COMPRESSED` is set).
pub(crate) const SAMPLE_WGSL: &str = concat!(
    include_str!("../../shaders/prelude.wgsl"),
    "\n",
    include_str!("../../shaders/quat.wgsl"),
    "\n",
    include_str!("../../shaders/sample.wgsl"),
    "\n",
    include_str!("../../shaders/decode.wgsl")
);

/// WGSL of the pose stage: `prelude.wgsl`, `quat.wgsl`, `pose_nodes.wgsl`,
/// `pose.wgsl` (entry points `pose_main` and `morph_main`).
pub(crate) const POSE_WGSL: &str = concat!(
    include_str!("../../shaders/prelude.wgsl"),
    "\n",
    include_str!("../../shaders/quat.wgsl"),
    "\n",
    include_str!("../../shaders/pose_nodes.wgsl"),
    "\n",
    include_str!("../../shaders/pose.wgsl")
);

/// WGSL of the hierarchy and joint-matrix stage: `prelude.wgsl`,
/// `quat.wgsl`, `pose_nodes.wgsl`, `pose.wgsl` (whose `local_pose` the
/// fused kernels call, and whose bindings are this module's too),
/// `skin_io.wgsl` (the matrix stores and inverse-bind reads), `skin.wgsl`
/// (entry points `hierarchy_main`, `skin_main` and `skin_nodes_main`; see
/// [`SkinStrategy`](crate::plan::SkinStrategy)).
pub(crate) const SKIN_WGSL: &str = concat!(
    include_str!("../../shaders/prelude.wgsl"),
    "\n",
    include_str!("../../shaders/quat.wgsl"),
    "\n",
    include_str!("../../shaders/pose_nodes.wgsl"),
    "\n",
    include_str!("../../shaders/pose.wgsl"),
    "\n",
    include_str!("../../shaders/skin_io.wgsl"),
    "\n",
    include_str!("../../shaders/skin.wgsl")
);

/// [`SKIN_WGSL`] with `skin_io_wide.wgsl` in place of `pose_nodes.wgsl` and
/// `skin_io.wgsl`: the matrices written and read two columns per
/// `vec4<u64>`, the node and inverse-bind tables' uniform copies read 64
/// bits a component. Needs `SHADER_INT64`; used on CPU adapters that have
/// it (`GpuSkinner::wide_accesses`).
pub(crate) const SKIN_WIDE_WGSL: &str = concat!(
    include_str!("../../shaders/prelude.wgsl"),
    "\n",
    include_str!("../../shaders/quat.wgsl"),
    "\n",
    include_str!("../../shaders/pose.wgsl"),
    "\n",
    include_str!("../../shaders/skin_io_wide.wgsl"),
    "\n",
    include_str!("../../shaders/skin.wgsl")
);

/// WGSL of the mixer's pose stage: `prelude.wgsl`, `quat.wgsl`,
/// `pose_nodes.wgsl`, `pose.wgsl` (its bindings and table readers),
/// `mix.wgsl` (entry points `mix_main` and `mix_morph_main`).
pub(crate) const MIX_WGSL: &str = concat!(
    include_str!("../../shaders/prelude.wgsl"),
    "\n",
    include_str!("../../shaders/quat.wgsl"),
    "\n",
    include_str!("../../shaders/pose_nodes.wgsl"),
    "\n",
    include_str!("../../shaders/pose.wgsl"),
    "\n",
    include_str!("../../shaders/mix.wgsl")
);
