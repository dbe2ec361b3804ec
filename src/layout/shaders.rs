//! The WGSL modules the passes are built from, each the concatenation of
//! the shader files it needs, in order.

/// The files `shaders/NAME.wgsl` for each NAME, in order, one after the
/// other with a newline between them.
macro_rules! wgsl_module {
    ($first:literal $(, $rest:literal)*) => {
        concat!(
            include_str!(concat!("../../shaders/", $first, ".wgsl"))
            $(, "\n", include_str!(concat!("../../shaders/", $rest, ".wgsl")))*
        )
    };
}

/// WGSL of the prelude every kernel is built from: the structs twinned
/// here and the constants both languages use (`shaders/prelude.wgsl`).
pub const PRELUDE_WGSL: &str = include_str!("../../shaders/prelude.wgsl");

/// WGSL source of the sampling stage: the prelude, `quat.wgsl`,
/// `sample.wgsl`, `decode.wgsl` (compressed tracks, compiled in only where
/// the override `COMPRESSED` is set).
pub(crate) const SAMPLE_WGSL: &str = wgsl_module!("prelude", "quat", "sample", "decode");

/// WGSL of the pose stage: `prelude.wgsl`, `quat.wgsl`, `pose_nodes.wgsl`,
/// `pose.wgsl` (entry points `pose_main` and `morph_main`).
pub(crate) const POSE_WGSL: &str = wgsl_module!("prelude", "quat", "pose_nodes", "pose");

/// WGSL of the hierarchy and joint-matrix stage: `prelude.wgsl`,
/// `quat.wgsl`, `pose_nodes.wgsl`, `pose.wgsl` (whose `local_pose` the
/// fused kernels call, and whose bindings are this module's too),
/// `skin_io.wgsl` (the matrix stores and inverse-bind reads), `skin.wgsl`
/// (entry points `hierarchy_main`, `skin_main` and `skin_nodes_main`; see
/// `SkinStrategy`).
pub(crate) const SKIN_WGSL: &str =
    wgsl_module!("prelude", "quat", "pose_nodes", "pose", "skin_io", "skin");

/// [`SKIN_WGSL`] with `skin_io_wide.wgsl` in place of `pose_nodes.wgsl` and
/// `skin_io.wgsl`: the matrices written and read two columns per
/// `vec4<u64>`, the node and inverse-bind tables' uniform copies read 64
/// bits a component. Needs `SHADER_INT64`; used on CPU adapters that have
/// it (`GpuSkinner::wide_accesses`).
pub(crate) const SKIN_WIDE_WGSL: &str =
    wgsl_module!("prelude", "quat", "pose", "skin_io_wide", "skin");

/// WGSL of the mixer's pose stage: `prelude.wgsl`, `quat.wgsl`,
/// `pose_nodes.wgsl`, `pose.wgsl` (its bindings and table readers),
/// `mix.wgsl` (entry points `mix_main` and `mix_morph_main`).
pub(crate) const MIX_WGSL: &str = wgsl_module!("prelude", "quat", "pose_nodes", "pose", "mix");

/// WGSL of the playback pass: `prelude.wgsl`, `quat.wgsl` (the root
/// motion's slerp), `playback.wgsl` (entry points
/// `playback_commands_main`, `playback_main` and `placement_main`; its
/// twin is `cpu::playback` and the `Player`).
pub(crate) const PLAYBACK_WGSL: &str = wgsl_module!("prelude", "quat", "playback");
