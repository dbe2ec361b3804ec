//! Rust twins of the WGSL structs, constants and bindings against naga's own
//! view of the shaders. Needs no adapter: drift fails `cargo test` anywhere.
//!
//! Each shader is parsed with naga's WGSL front end, validated, and laid out
//! with `naga::proc::Layouter`; every struct that has a `#[repr(C)]` twin is
//! compared member by member (name, offset, in order) and by size. The
//! helpers take the WGSL source and a table of twins, so a new shader is one
//! more call.

use std::mem::{offset_of, size_of};

use keyframe_gpu::layout::{
    MIX_WGSL, POSE_BINDINGS, POSE_WGSL, SKIN_BINDINGS, SKIN_WGSL, SKIN_WIDE_WGSL,
    SKIN_WORKGROUP_SIZE,
};

use keyframe_gpu::layout::{
    Binding, BindingKind, GpuBlockParams, GpuClip, GpuInstance, GpuJoint, GpuMesh, GpuNode,
    GpuParams, GpuSampleBlock, GpuSampleRow, GpuSkinParams, GpuTrack, BLOCK_HEAD, GROUP_ALL,
    GROUP_BLEND, GROUP_CUBIC, GROUP_CUBIC_ROTATION, GROUP_SLERP, GROUP_STEP, KEY_TEXTURE_ROW_SHIFT,
    MAX_FUSED_SKINS, MAX_PARALLEL_NODES, PRELUDE_WGSL, ROW_HEAD, SAMPLE_BINDINGS,
    SAMPLE_BLOCKS_USES, SAMPLE_GROUPS, SAMPLE_USES, SAMPLE_WGSL, UNIFORM_HEAD, WORKGROUP_SIZE,
};
use keyframe_gpu::{tables, Interpolation, Property, ValueKind};
use naga::valid::{Capabilities, ValidationFlags, Validator};

/// The skin pass writes a node's joint slots in straight code, not a
/// loop, when no node has more than this many
/// (`SkinTables::max_slots_per_node`; WGSL `MAX_UNROLLED_SLOTS` in the
/// prelude, and `NODE_SLOTS` in skin.wgsl). Only the shader uses it: the
/// host passes the rig's count as `NODE_SLOTS`, so the tests pin it here.
pub(crate) const MAX_UNROLLED_SLOTS: u32 = 4;

/// A Rust struct that must match a WGSL struct byte for byte.
struct Twin {
    /// The WGSL struct's name.
    wgsl: &'static str,
    /// `size_of` the Rust struct.
    size: usize,
    /// `(member name, offset_of)` of every Rust field, in declaration order.
    members: Vec<(&'static str, usize)>,
}

/// Declares a [`Twin`] from a WGSL name, a Rust type and its fields, so that
/// each field name is written once and used both as the expected WGSL
/// member name and in `offset_of!`.
macro_rules! twin {
    ($wgsl:literal, $ty:ty, [$($field:ident),* $(,)?]) => {
        Twin {
            wgsl: $wgsl,
            size: size_of::<$ty>(),
            members: vec![$((stringify!($field), offset_of!($ty, $field))),*],
        }
    };
}

/// The optional capabilities `source` may need: `SHADER_INT64` for the
/// skin module with wide accesses (used only on devices that have
/// it), none for every other module.
fn optional_capabilities(source: &str) -> Capabilities {
    if source == SKIN_WIDE_WGSL {
        Capabilities::SHADER_INT64
    } else {
        Capabilities::empty()
    }
}

/// Parses and validates `source`; panics with naga's report on failure.
fn parse_and_validate(label: &str, source: &str) -> (naga::Module, naga::valid::ModuleInfo) {
    let module = match naga::front::wgsl::parse_str(source) {
        Ok(m) => m,
        Err(e) => panic!("{label}: WGSL parse error:\n{}", e.emit_to_string(source)),
    };
    // Everything wgpu could enable: the shader must be valid whatever the
    // adapter offers.
    let info = Validator::new(ValidationFlags::all(), Capabilities::all())
        .validate(&module)
        .unwrap_or_else(|e| {
            panic!(
                "{label}: naga validation error (all capabilities):\n{}",
                e.emit_to_string(source)
            )
        });
    // And with no optional capability at all (the sampler runs on any
    // adapter, including the downlevel GL one), but for those its host
    // asks for before it picks the module.
    let optional = optional_capabilities(source);
    if let Err(e) = Validator::new(ValidationFlags::all(), optional).validate(&module) {
        panic!(
            "{label}: shader needs an optional capability:\n{}",
            e.emit_to_string(source)
        );
    }
    (module, info)
}

/// Compares every twin with the WGSL struct of the same name; returns the
/// list of mismatches (empty when all agree).
fn layout_mismatches(label: &str, source: &str, twins: &[Twin]) -> Vec<String> {
    let (module, _) = parse_and_validate(label, source);
    let mut layouter = naga::proc::Layouter::default();
    if let Err(e) = layouter.update(module.to_ctx()) {
        panic!("{label}: naga layouter failed: {e:?}");
    }
    let mut problems = Vec::new();
    for twin in twins {
        let found = module
            .types
            .iter()
            .find(|(_, ty)| ty.name.as_deref() == Some(twin.wgsl));
        let Some((handle, ty)) = found else {
            problems.push(format!("{label}: no WGSL struct named {}", twin.wgsl));
            continue;
        };
        let naga::TypeInner::Struct { members, span } = &ty.inner else {
            problems.push(format!("{label}: WGSL type {} is not a struct", twin.wgsl));
            continue;
        };
        let size = layouter[handle].size as usize;
        if size != twin.size || *span as usize != twin.size {
            problems.push(format!(
                "{label}: struct {}: WGSL size {size} (span {span}), Rust size {}",
                twin.wgsl, twin.size
            ));
        }
        if members.len() != twin.members.len() {
            problems.push(format!(
                "{label}: struct {}: WGSL has {} members, Rust has {}",
                twin.wgsl,
                members.len(),
                twin.members.len()
            ));
        }
        for (i, (m, &(rust_name, rust_offset))) in members.iter().zip(&twin.members).enumerate() {
            let wgsl_name = m.name.as_deref().unwrap_or("<unnamed>");
            if wgsl_name != rust_name || m.offset as usize != rust_offset {
                problems.push(format!(
                    "{label}: struct {} member {i}: WGSL {wgsl_name} at offset {}, Rust {rust_name} at offset {rust_offset}",
                    twin.wgsl, m.offset
                ));
            }
        }
    }
    problems
}

/// Asserts that every twin matches (see [`layout_mismatches`]).
fn check_layout(label: &str, source: &str, twins: &[Twin]) {
    let problems = layout_mismatches(label, source, twins);
    assert!(
        problems.is_empty(),
        "layout drift:\n  {}",
        problems.join("\n  ")
    );
}

/// The value of a scalar `u32` WGSL `const` named `name`.
fn u32_constant(module: &naga::Module, name: &str) -> Option<u32> {
    let (_, c) = module
        .constants
        .iter()
        .find(|(_, c)| c.name.as_deref() == Some(name))?;
    match module.global_expressions[c.init] {
        naga::Expression::Literal(naga::Literal::U32(v)) => Some(v),
        ref other => panic!("constant {name} is not a u32 literal: {other:?}"),
    }
}

fn sample_twins() -> Vec<Twin> {
    vec![
        twin!(
            "Track",
            GpuTrack,
            [
                times_offset,
                key_count,
                values_offset,
                width,
                interpolation,
                kind,
                output_offset,
                node,
                lookup_scale,
                lookup_origin,
                search_offset,
            ]
        ),
        twin!(
            "Clip",
            GpuClip,
            [
                track_offset,
                track_count,
                output_width,
                duration,
                group_first,
                group_count
            ]
        ),
        twin!("Instance", GpuInstance, [clip, time, _pad0, _pad1]),
        twin!(
            "SampleBlock",
            GpuSampleBlock,
            [first, count, row_first, row_count]
        ),
        twin!(
            "SampleRow",
            GpuSampleRow,
            [
                values_offset,
                output_offset,
                search_offset,
                key_count,
                lookup_scale,
                lookup_origin,
                width,
                interpolation,
            ]
        ),
        twin!(
            "BlockParams",
            GpuBlockParams,
            [
                block_base,
                block_count,
                output_stride,
                grid_width,
                head_first,
                _pad0,
                _pad1,
                _pad2
            ]
        ),
        twin!(
            "Params",
            GpuParams,
            [
                instance_count,
                tracks_per_instance,
                output_stride,
                row_invocations,
            ]
        ),
    ]
}

#[test]
fn sample_shader_parses_and_validates() {
    let (module, _) = parse_and_validate("sample.wgsl", SAMPLE_WGSL);
    let names: Vec<_> = module
        .entry_points
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(names, ["sample_main", "sample_blocks_main"]);
}

/// Each sampling entry point uses exactly the bindings its plan's layout
/// holds (`SAMPLE_USES`, `SAMPLE_BLOCKS_USES`), at most 8 of them storage
/// buffers, and every binding's min size is one element of a runtime-sized
/// array or the whole uniform.
#[test]
fn sample_entry_points_use_only_their_bindings() {
    let (module, info) = parse_and_validate("sample.wgsl", SAMPLE_WGSL);
    for (entry, uses) in [
        ("sample_main", &SAMPLE_USES[..]),
        ("sample_blocks_main", &SAMPLE_BLOCKS_USES[..]),
    ] {
        let index = module
            .entry_points
            .iter()
            .position(|ep| ep.name == entry)
            .unwrap();
        let used = bindings_used(&module, &info, index);
        assert_eq!(used, uses, "{entry}: bindings used");
        let storage = SAMPLE_BINDINGS
            .iter()
            .filter(|b| {
                uses.contains(&b.binding)
                    && matches!(
                        b.kind,
                        BindingKind::StorageRead | BindingKind::StorageReadWrite
                    )
            })
            .count();
        assert!(storage <= 8, "{entry}: {storage} storage buffers");
    }
    for (binding, want) in binding_sizes(&module) {
        let entry = SAMPLE_BINDINGS
            .iter()
            .find(|b| b.binding == binding)
            .unwrap();
        assert_eq!(
            entry.min_size,
            u64::from(want),
            "binding {binding} ({})",
            entry.name
        );
    }
    // The uniform heads stay within WebGPU's default 64 KiB binding.
    assert!(u64::from(BLOCK_HEAD) * size_of::<GpuSampleBlock>() as u64 <= 65536);
    assert!(u64::from(ROW_HEAD) * size_of::<GpuSampleRow>() as u64 <= 65536);
}

#[test]
fn sample_structs_match_rust_twins() {
    check_layout("sample.wgsl", SAMPLE_WGSL, &sample_twins());
}

/// The checker itself must notice drift: swapping two members in the WGSL
/// text (what a careless edit of the shader would do) must be reported.
#[test]
fn layout_check_detects_swapped_members() {
    let original = "struct Clip {\n    track_offset: u32,\n    track_count: u32,";
    assert!(
        SAMPLE_WGSL.contains(original),
        "test fixture out of date: Clip's first members changed"
    );
    let swapped = SAMPLE_WGSL.replacen(
        original,
        "struct Clip {\n    track_count: u32,\n    track_offset: u32,",
        1,
    );
    let problems = layout_mismatches("sample.wgsl (swapped)", &swapped, &sample_twins());
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].contains("member 0"), "{problems:?}");
    assert!(problems[1].contains("member 1"), "{problems:?}");

    // An inserted member shifts every later offset and grows the struct.
    let original = "struct Instance {\n    clip: u32,";
    assert!(SAMPLE_WGSL.contains(original));
    let grown = SAMPLE_WGSL.replacen(
        original,
        "struct Instance {\n    clip: u32,\n    extra: u32,",
        1,
    );
    let problems = layout_mismatches("sample.wgsl (grown)", &grown, &sample_twins());
    assert!(
        problems
            .iter()
            .any(|p| p.contains("struct Instance: WGSL size 20")),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.contains("WGSL has 5 members, Rust has 4")),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.contains("member 1: WGSL extra at offset 4")),
        "{problems:?}"
    );
}

/// Every constant that the prelude shares with Rust, with the Rust value:
/// the enums' discriminants and the constants of `src/layout/`.
fn shared_constants() -> Vec<(&'static str, u32)> {
    vec![
        ("INTERP_STEP", Interpolation::Step as u32),
        ("INTERP_LINEAR", Interpolation::Linear as u32),
        ("INTERP_CUBICSPLINE", Interpolation::CubicSpline as u32),
        ("KIND_VECTOR", ValueKind::Vector as u32),
        ("KIND_ROTATION", ValueKind::Rotation as u32),
        ("KIND_DISCRETE", ValueKind::Discrete as u32),
        ("PROP_TRANSLATION", Property::Translation as u32),
        ("PROP_ROTATION", Property::Rotation as u32),
        ("PROP_SCALE", Property::Scale as u32),
        ("PROP_WEIGHTS", Property::Weights as u32),
        ("WORKGROUP_SIZE", WORKGROUP_SIZE),
        ("GROUP_SLERP", GROUP_SLERP),
        ("GROUP_CUBIC", GROUP_CUBIC),
        ("GROUP_BLEND", GROUP_BLEND),
        ("GROUP_CUBIC_ROTATION", GROUP_CUBIC_ROTATION),
        ("GROUP_STEP", GROUP_STEP),
        ("GROUP_ALL", GROUP_ALL),
        ("SAMPLE_GROUPS", SAMPLE_GROUPS as u32),
        ("KEY_TEXTURE_ROW_SHIFT", KEY_TEXTURE_ROW_SHIFT),
        ("SEARCH_STEPS", keyframe_gpu::layout::SEARCH_STEPS),
        ("MAX_FUSED_SKINS", MAX_FUSED_SKINS),
        ("MAX_UNROLLED_SLOTS", MAX_UNROLLED_SLOTS),
        ("SKIN_WORKGROUP_SIZE", SKIN_WORKGROUP_SIZE),
        ("UNIFORM_HEAD", UNIFORM_HEAD),
        ("BLOCK_HEAD", BLOCK_HEAD),
        ("ROW_HEAD", ROW_HEAD),
        ("DECODE_HEAD", keyframe_gpu::layout::DECODE_HEAD),
        ("MAX_PARALLEL_NODES", MAX_PARALLEL_NODES),
        ("NO_ROW", keyframe_gpu::layout::NO_ROW),
        ("NO_MASK", keyframe_gpu::layout::NO_MASK),
        ("BLEND_MIX", keyframe_gpu::layout::BLEND_MIX),
        ("BLEND_ADDITIVE", keyframe_gpu::layout::BLEND_ADDITIVE),
        ("BLEND_OVERRIDE", keyframe_gpu::layout::BLEND_OVERRIDE),
        ("NO_NODE", keyframe_gpu::layout::NO_NODE),
        ("MAX_ACTIONS", keyframe_gpu::MAX_ACTIONS),
        (
            "COMPRESS_HEADER_WORDS",
            keyframe_gpu::layout::COMPRESS_HEADER_WORDS,
        ),
        (
            "ENC_VECTOR",
            keyframe_gpu::compress::Encoding::Vector as u32,
        ),
        (
            "ENC_SMALLEST_THREE",
            keyframe_gpu::compress::Encoding::SmallestThree as u32,
        ),
        ("ENC_RAW", keyframe_gpu::compress::Encoding::Raw as u32),
        (
            "ENC_FRAMED",
            keyframe_gpu::compress::Encoding::Framed as u32,
        ),
        ("FRAME_WORDS", keyframe_gpu::layout::FRAME_WORDS),
        ("VERBATIM_META", keyframe_gpu::layout::VERBATIM_META),
    ]
    .into_iter()
    .chain(playback_constants())
    .collect()
}

/// The playback pass's shared constants (`src/layout/playback.rs`).
fn playback_constants() -> Vec<(&'static str, u32)> {
    use keyframe_gpu::layout::*;
    use keyframe_gpu::WrapMode;
    vec![
        ("FLICKS_PER_SECOND", FLICKS_PER_SECOND),
        ("TICK_SHIFT", TICK_SHIFT),
        ("WRAP_CLAMP", WrapMode::Clamp as u32),
        ("WRAP_REPEAT", WrapMode::Repeat as u32),
        ("WRAP_PINGPONG", WrapMode::PingPong as u32),
        ("WRAP_BITS", WRAP_BITS),
        ("SLOT_BACKWARDS", SLOT_BACKWARDS),
        ("SLOT_DONE", SLOT_DONE),
        ("SLOT_FRESH", SLOT_FRESH),
        ("SLOT_FREE_FOLD", SLOT_FREE_FOLD),
        ("SLOT_FINISHED", SLOT_FINISHED),
        ("SLOT_FADING", SLOT_FADING),
        ("SLOT_REPS", SLOT_REPS),
        ("SLOT_LAYER", SLOT_LAYER),
        ("SLOT_OVERRIDES", SLOT_OVERRIDES),
        ("SLOT_ADDITIVE", SLOT_ADDITIVE),
        ("KEPT_SET", KEPT_SET),
        ("CHARACTER_PAUSED", CHARACTER_PAUSED),
        ("KEPT_WORDS", KEPT_WORDS),
        ("CMD_PLAY", CMD_PLAY),
        ("CMD_CROSSFADE", CMD_CROSSFADE),
        ("CMD_CROSSFADE_AT", CMD_CROSSFADE_AT),
        ("CMD_FADE_IN", CMD_FADE_IN),
        ("CMD_FADE_OUT", CMD_FADE_OUT),
        ("CMD_SPEED", CMD_SPEED),
        ("CMD_PAUSE", CMD_PAUSE),
        ("CMD_SEEK", CMD_SEEK),
        ("CMD_WRAP", CMD_WRAP),
        ("CMD_CLIP_WRAP", CMD_CLIP_WRAP),
        ("CMD_REPETITIONS", CMD_REPETITIONS),
        ("CMD_CLIP_REPETITIONS", CMD_CLIP_REPETITIONS),
        ("CMD_ADD_LAYER", CMD_ADD_LAYER),
        ("CMD_SET_LAYER", CMD_SET_LAYER),
        ("CMD_FADE_LAYER", CMD_FADE_LAYER),
        ("CMD_REMOVE_LAYER", CMD_REMOVE_LAYER),
        ("CMD_RESET", CMD_RESET),
        ("APPLIED", APPLIED),
        ("REFUSED_FULL", REFUSED_FULL),
        ("REFUSED_NO_LAYER", REFUSED_NO_LAYER),
        ("NO_CLIP", NO_CLIP),
        ("PLAYBACK_WORKGROUP_SIZE", PLAYBACK_WORKGROUP_SIZE),
        ("CMD_PLACE", CMD_PLACE),
        ("NO_TRACK", NO_TRACK),
        ("EVENTS_PER_CHARACTER", EVENTS_PER_CHARACTER),
        (
            "MAX_EVENTS_PER_STEP",
            keyframe_gpu::playback::MAX_EVENTS_PER_STEP as u32,
        ),
    ]
}

/// The playback pass's structs.
fn playback_twins() -> Vec<Twin> {
    use keyframe_gpu::layout::*;
    vec![
        twin!(
            "PlaybackCharacter",
            GpuCharacter,
            [
                speed_lo,
                speed_hi,
                flags,
                count,
                repetitions_lo,
                repetitions_hi,
                max_actions,
                _pad0
            ]
        ),
        twin!(
            "ActionSlot",
            GpuActionSlot,
            [
                clip,
                flags,
                layer,
                mask,
                time_lo,
                time_hi,
                passes_lo,
                passes_hi,
                loops_lo,
                loops_hi,
                repetitions_lo,
                repetitions_hi,
                speed_lo,
                speed_hi,
                weight,
                fade_from,
                fade_to,
                fade_rate,
                fade_elapsed_lo,
                fade_elapsed_hi,
                fade_duration_lo,
                fade_duration_hi,
                reference_lo,
                reference_hi,
                reference_time,
                _pad0,
                _pad1,
                _pad2
            ]
        ),
        twin!(
            "PlaybackClip",
            GpuPlaybackClip,
            [
                root_start_translation,
                root_end_translation,
                root_start_rotation,
                root_end_rotation,
                ticks_lo,
                ticks_hi,
                duration,
                marker_first,
                marker_count,
                root_translation,
                root_rotation,
                _pad0
            ]
        ),
        twin!(
            "RootTrack",
            GpuRootTrack,
            [
                interpolation,
                key_count,
                times_offset,
                values_offset,
                rate,
                _pad0,
                _pad1,
                _pad2
            ]
        ),
        twin!(
            "PlaybackCommand",
            GpuPlaybackCommand,
            [
                character,
                kind,
                clip,
                flags,
                duration_lo,
                duration_hi,
                time_lo,
                time_hi,
                rate,
                weight,
                speed_lo,
                speed_hi,
                repetitions_lo,
                repetitions_hi,
                mask,
                layer,
                reference_lo,
                reference_hi,
                reference_time,
                _pad0
            ]
        ),
        twin!(
            "PlaybackFrame",
            GpuPlaybackFrame,
            [dt_lo, dt_hi, command_count, _pad0]
        ),
        twin!(
            "PlaybackParams",
            GpuPlaybackParams,
            [
                first_character,
                character_count,
                actions,
                clip_count,
                reference_rows,
                tick_seconds,
                flick_seconds,
                has_root,
                root_linear,
                root_turn,
                mask_offset,
                mask_count,
                event_capacity,
                _pad0
            ]
        ),
    ]
}

/// The playback pass's structs and bindings against its Rust twins, and
/// its entry points' workgroup size.
#[test]
fn playback_shader_matches_rust_twins() {
    use keyframe_gpu::layout::{PLAYBACK_BINDINGS, PLAYBACK_WGSL, PLAYBACK_WORKGROUP_SIZE};
    check_layout("playback.wgsl", PLAYBACK_WGSL, &playback_twins());
    check_bindings("playback.wgsl", PLAYBACK_WGSL, &PLAYBACK_BINDINGS);
    let (module, _) = parse_and_validate("playback.wgsl", PLAYBACK_WGSL);
    for ep in &module.entry_points {
        assert_eq!(
            ep.workgroup_size,
            [PLAYBACK_WORKGROUP_SIZE, 1, 1],
            "{}",
            ep.name
        );
    }
}

/// Constants that a stage's WGSL defines for itself, derived from the
/// prelude or private to the kernel: no Rust twin. Any other `const`
/// outside the prelude fails [`stages_define_no_shared_constant_of_their_own`].
const STAGE_LOCAL_CONSTANTS: [&str; 8] = [
    "IDENTITY",
    "NODES_PER_LANE",
    "PI",
    // playback.wgsl's 64-bit words and marker points.
    "MAX_MARKER_POINTS",
    "U64_MAX",
    "I64_MAX",
    "ONE",
    "ZERO",
];

/// Every `const` of `source` that is a `u32` literal, by name. Constants
/// written as expressions are evaluated by naga's front end already.
fn u32_constants(module: &naga::Module) -> Vec<(String, Option<u32>)> {
    module
        .constants
        .iter()
        .filter_map(|(_, c)| {
            let name = c.name.clone()?;
            let value = match module.global_expressions[c.init] {
                naga::Expression::Literal(naga::Literal::U32(v)) => Some(v),
                _ => None,
            };
            Some((name, value))
        })
        .collect()
}

/// Differences between the prelude's constants and [`shared_constants`]:
/// a WGSL constant with no Rust twin, a twin with no WGSL constant, or a
/// value that differs.
fn constant_mismatches(prelude: &str) -> Vec<String> {
    let (module, _) = parse_and_validate("prelude.wgsl", prelude);
    let wgsl = u32_constants(&module);
    let rust = shared_constants();
    let mut problems = Vec::new();
    for (name, value) in &wgsl {
        match rust.iter().find(|(n, _)| n == name) {
            None => problems.push(format!("WGSL const {name} has no Rust twin")),
            Some((_, r)) if Some(*r) != *value => {
                problems.push(format!("const {name}: WGSL {value:?}, Rust {r}"))
            }
            Some(_) => {}
        }
    }
    for (name, _) in &rust {
        if !wgsl.iter().any(|(n, _)| n == name) {
            problems.push(format!("Rust constant {name} is not in the prelude"));
        }
    }
    problems
}

#[test]
fn prelude_constants_match_their_rust_twins() {
    let problems = constant_mismatches(PRELUDE_WGSL);
    assert!(
        problems.is_empty(),
        "constant drift:\n  {}",
        problems.join("\n  ")
    );
}

/// The check notices a constant changed on the WGSL side only, a constant
/// added to the prelude without a twin, and one removed from it.
#[test]
fn constant_check_detects_one_sided_changes() {
    let original = "const UNIFORM_HEAD: u32 = 256u;";
    assert!(PRELUDE_WGSL.contains(original), "test fixture out of date");
    let changed = PRELUDE_WGSL.replacen(original, "const UNIFORM_HEAD: u32 = 128u;", 1);
    let problems = constant_mismatches(&changed);
    assert_eq!(
        problems,
        ["const UNIFORM_HEAD: WGSL Some(128), Rust 256"],
        "{problems:?}"
    );
    let added = format!("{PRELUDE_WGSL}\nconst NEW_LIMIT: u32 = 3u;\n");
    let problems = constant_mismatches(&added);
    assert_eq!(problems, ["WGSL const NEW_LIMIT has no Rust twin"]);
    let removed = PRELUDE_WGSL.replacen("const GROUP_STEP: u32 = 4u;", "", 1);
    let problems = constant_mismatches(&removed);
    assert_eq!(problems, ["Rust constant GROUP_STEP is not in the prelude"]);
}

/// A constant both languages need lives in the prelude: the stages may
/// only define the derived or private ones listed in
/// [`STAGE_LOCAL_CONSTANTS`], besides the slerp threshold of `quat.wgsl`,
/// which is compared with the CPU twin's here.
#[test]
fn stages_define_no_shared_constant_of_their_own() {
    let (prelude, _) = parse_and_validate("prelude.wgsl", PRELUDE_WGSL);
    let in_prelude: Vec<String> = u32_constants(&prelude)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    for (label, source) in [
        ("sample", SAMPLE_WGSL),
        ("pose", POSE_WGSL),
        ("skin", SKIN_WGSL),
        ("mix", MIX_WGSL),
        ("playback", keyframe_gpu::layout::PLAYBACK_WGSL),
    ] {
        let (module, _) = parse_and_validate(label, source);
        for (_, c) in module.constants.iter() {
            let Some(name) = c.name.as_deref() else {
                continue;
            };
            if in_prelude.iter().any(|n| n == name) || STAGE_LOCAL_CONSTANTS.contains(&name) {
                continue;
            }
            // The f32 constants of the sample stage, compared with their
            // twins' here: the slerp threshold (quat.wgsl) and the rate
            // snap (decode.wgsl).
            let twin = match name {
                "SLERP_NLERP_THRESHOLD" => keyframe_gpu::cpu::quat::SLERP_NLERP_THRESHOLD,
                "RATE_SNAP" if label == "sample" => keyframe_gpu::compress::format::RATE_SNAP,
                _ => panic!("{label}: const {name} outside the prelude"),
            };
            match module.global_expressions[c.init] {
                naga::Expression::Literal(naga::Literal::F32(v)) => assert_eq!(
                    v.to_bits(),
                    twin.to_bits(),
                    "{label}: {name} vs the CPU twin"
                ),
                ref other => panic!("{label}: {name} is {other:?}"),
            }
        }
    }
}

#[test]
fn sample_entry_point_uses_the_shared_workgroup_size() {
    let (module, _) = parse_and_validate("sample.wgsl", SAMPLE_WGSL);
    let ep = &module.entry_points[0];
    assert_eq!(ep.workgroup_size, [WORKGROUP_SIZE, 1, 1]);
}

/// Checks every `@group(0) @binding(n)` global of `source` against `table`
/// (name, number, address space and access), and that neither side has a
/// binding the other lacks.
fn check_bindings(label: &str, source: &str, table: &[Binding]) {
    let (module, _) = parse_and_validate(label, source);
    let mut seen = Vec::new();
    for (_, var) in module.global_variables.iter() {
        let Some(rb) = &var.binding else {
            continue;
        };
        let name = var.name.as_deref().unwrap_or("<unnamed>");
        assert_eq!(
            rb.group, 0,
            "{label}: {name}: only group 0 is described by the table"
        );
        let Some(entry) = table.iter().find(|b| b.binding == rb.binding) else {
            panic!(
                "{label}: WGSL binding {} ({name}) is missing from the table",
                rb.binding
            );
        };
        assert_eq!(entry.name, name, "{label}: binding {}: name", rb.binding);
        let kind = match var.space {
            naga::AddressSpace::Uniform => BindingKind::Uniform,
            naga::AddressSpace::Storage { access } if access == naga::StorageAccess::LOAD => {
                BindingKind::StorageRead
            }
            naga::AddressSpace::Storage { access }
                if access == naga::StorageAccess::LOAD | naga::StorageAccess::STORE =>
            {
                BindingKind::StorageReadWrite
            }
            naga::AddressSpace::Handle => match module.types[var.ty].inner {
                naga::TypeInner::Image {
                    dim: naga::ImageDimension::D2,
                    arrayed: false,
                    class: naga::ImageClass::Sampled { kind, multi: false },
                } => match kind {
                    naga::ScalarKind::Float => BindingKind::TextureFloat,
                    naga::ScalarKind::Uint => BindingKind::TextureUint,
                    other => panic!(
                        "{label}: binding {} ({name}): {other:?} texture",
                        rb.binding
                    ),
                },
                ref other => panic!(
                    "{label}: binding {} ({name}): unexpected handle {other:?}",
                    rb.binding
                ),
            },
            ref other => panic!(
                "{label}: binding {} ({name}): unexpected space {other:?}",
                rb.binding
            ),
        };
        assert_eq!(
            entry.kind, kind,
            "{label}: binding {} ({name}): access",
            rb.binding
        );
        seen.push(rb.binding);
    }
    seen.sort_unstable();
    let mut numbers: Vec<u32> = table.iter().map(|b| b.binding).collect();
    numbers.sort_unstable();
    assert_eq!(seen, numbers, "{label}: bindings in WGSL vs the table");
    // No duplicate binding numbers (the sorted list has no repeats).
    assert!(
        numbers.windows(2).all(|w| w[0] < w[1]),
        "{label}: {numbers:?}"
    );
}

#[test]
fn sample_bindings_match_table() {
    check_bindings("sample.wgsl", SAMPLE_WGSL, &SAMPLE_BINDINGS);
}

/// The binding check notices a renamed or re-numbered binding.
#[test]
fn binding_check_detects_drift() {
    let original = "@group(0) @binding(5) var<uniform> params: Params;";
    assert!(SAMPLE_WGSL.contains(original), "test fixture out of date");
    let renumbered = SAMPLE_WGSL.replacen(
        original,
        "@group(0) @binding(9) var<uniform> params: Params;",
        1,
    );
    let caught = std::panic::catch_unwind(|| {
        check_bindings("sample.wgsl (renumbered)", &renumbered, &SAMPLE_BINDINGS)
    });
    assert!(caught.is_err(), "a re-numbered binding went unnoticed");
}

// --------------------------------------------------------------------------
// The rig shaders: pose.wgsl (after the prelude and quat.wgsl) and
// skin.wgsl (after those and pose.wgsl, whose bindings it shares).
// --------------------------------------------------------------------------

fn rig_twins() -> Vec<Twin> {
    use keyframe_gpu::layout::GpuLocalPose;
    vec![
        twin!(
            "Node",
            GpuNode,
            [
                translation,
                rotation,
                scale,
                parent,
                mesh,
                first_joint,
                chain
            ]
        ),
        twin!(
            "Mesh",
            GpuMesh,
            [weights_offset, target_count, defaults_offset, node]
        ),
        twin!(
            "MixAction",
            keyframe_gpu::layout::GpuMixAction,
            [row, reference_row, clip, mask, weight, blend]
        ),
        twin!("Joint", GpuJoint, [node, mesh_node, skin, next_joint]),
        twin!("LocalPose", GpuLocalPose, [translation, rotation, scale]),
        twin!(
            "SkinParams",
            GpuSkinParams,
            [
                instance_count,
                node_count,
                joint_count,
                mesh_count,
                morph_stride,
                output_stride,
                clip_count,
                skin_count,
                mesh_nodes,
                pointer_count,
                property_stride,
                _pad0,
                _pad1,
            ]
        ),
    ]
}

/// The rig modules with the binding table each is bound from.
fn rig_modules() -> [(&'static str, &'static str, &'static [Binding]); 4] {
    use keyframe_gpu::layout::{MIX_MODULE_BINDINGS, SKIN_MODULE_BINDINGS};
    [
        ("pose.wgsl", POSE_WGSL, &POSE_BINDINGS),
        ("skin.wgsl", SKIN_WGSL, &SKIN_MODULE_BINDINGS),
        ("mix.wgsl", MIX_WGSL, &MIX_MODULE_BINDINGS),
        (
            "skin.wgsl (wide accesses)",
            SKIN_WIDE_WGSL,
            &SKIN_MODULE_BINDINGS,
        ),
    ]
}

#[test]
fn rig_shaders_match_rust_twins() {
    use keyframe_gpu::layout::{MAX_FUSED_SKINS, MAX_PARALLEL_NODES, UNIFORM_HEAD};
    for (label, source, table) in rig_modules() {
        check_layout(label, source, &rig_twins());
        check_bindings(label, source, table);
        let (module, _) = parse_and_validate(label, source);
        for (name, value) in [
            ("SKIN_WORKGROUP_SIZE", SKIN_WORKGROUP_SIZE),
            ("MAX_FUSED_SKINS", MAX_FUSED_SKINS),
            ("MAX_UNROLLED_SLOTS", MAX_UNROLLED_SLOTS),
            ("MAX_PARALLEL_NODES", MAX_PARALLEL_NODES),
            ("UNIFORM_HEAD", UNIFORM_HEAD),
        ] {
            assert_eq!(u32_constant(&module, name), Some(value), "{label}: {name}");
        }
        for ep in &module.entry_points {
            assert_eq!(
                ep.workgroup_size,
                [SKIN_WORKGROUP_SIZE, 1, 1],
                "{label}: {}",
                ep.name
            );
        }
    }
    // The skin module's table is pose.wgsl's and skin.wgsl's, in order.
    let both: Vec<Binding> = POSE_BINDINGS
        .iter()
        .chain(&SKIN_BINDINGS)
        .copied()
        .collect();
    assert_eq!(rig_modules()[1].2, &both[..]);
    // The mix module's is pose.wgsl's and mix.wgsl's.
    let mixed: Vec<Binding> = POSE_BINDINGS
        .iter()
        .chain(&keyframe_gpu::layout::MIX_BINDINGS)
        .copied()
        .collect();
    assert_eq!(rig_modules()[2].2, &mixed[..]);
}

#[test]
fn rig_binding_min_sizes_are_one_element_or_the_whole_uniform() {
    // A binding's min_size (the layout's min_binding_size) is naga's stride
    // of a runtime-sized array (one element and its padding: wgpu's
    // minimum), or the size of the whole type; for the skin module's
    // matrices, the larger of the two io files' (16 for a vec3<f32>, 32
    // for a vec4<u64>), which both modules then meet.
    let mut wants: Vec<(&str, u32, u32)> = Vec::new();
    for (label, source, table) in rig_modules() {
        let (module, _) = parse_and_validate(label, source);
        for (binding, want) in binding_sizes(&module) {
            let entry = table.iter().find(|b| b.binding == binding).unwrap();
            assert!(
                entry.min_size >= u64::from(want),
                "{label}: binding {binding} ({}) under one element",
                entry.name
            );
            let module_name = label.split(' ').next().unwrap_or(label);
            wants.push((module_name, binding, want));
        }
    }
    for (label, _, table) in rig_modules() {
        for entry in table.iter() {
            let largest = wants
                .iter()
                .filter(|(m, b, _)| label.starts_with(m) && *b == entry.binding)
                .map(|(_, _, w)| *w)
                .max()
                .unwrap_or(0);
            assert_eq!(
                entry.min_size,
                u64::from(largest),
                "{label}: binding {} ({}): the largest element over the module's variants",
                entry.binding,
                entry.name
            );
        }
    }
    // The matrices are the only bindings whose element size the variants
    // make different (the uniform copies change type, not size).
    let skin = |b: u32| {
        let sizes: Vec<u32> = wants
            .iter()
            .filter(|(m, n, _)| *m == "skin.wgsl" && *n == b)
            .map(|(_, _, w)| *w)
            .collect();
        sizes
    };
    assert_eq!(skin(12), [16, 32]);
    assert_eq!(skin(15), [16, 32]);
    assert_eq!(skin(13), [16, 16]);
}

use keyframe_gpu::plan::passes;

/// Every pass of every strategy, and the mixer's.
const PASSES: [passes::Pass; 8] = [
    passes::POSE_PASS,
    passes::MORPH_PASS,
    passes::HIERARCHY_PASS,
    passes::SKIN_PASS,
    passes::SKIN_NODES_PASS,
    passes::MIX_PASS,
    passes::MIX_MORPH_PASS,
    passes::MIX_PROPS_PASS,
];

#[test]
fn rig_passes_exist_and_use_only_their_bindings() {
    use keyframe_gpu::SkinStrategy;
    // Each pass's entry point is in its module, and its layout holds
    // exactly the globals the entry point uses (wgpu refuses a pipeline
    // whose layout lacks one; an extra one would need a resource for
    // nothing), at most 8 of them storage buffers (the WebGPU default of
    // max_storage_buffers_per_shader_stage).
    for (pass, wide) in PASSES.iter().flat_map(|&p| [(p, false), (p, true)]) {
        let label = pass.entry;
        let (module, info) = parse_and_validate(label, pass.module.wgsl_with(wide));
        let Some(index) = module.entry_points.iter().position(|ep| ep.name == label) else {
            panic!("{label}: no such entry point in {:?}", pass.module);
        };
        let used = bindings_used(&module, &info, index);
        assert_eq!(used, pass.bindings, "{label}: bindings used");
        let storage = pass
            .module
            .bindings()
            .iter()
            .filter(|b| used.contains(&b.binding) && b.kind != BindingKind::Uniform)
            .count();
        assert!(storage <= 8, "{label}: {storage} storage buffers");
    }
    // Every pass belongs to a strategy and every strategy's passes are
    // listed; the staged pose pass is the only writer of `locals`.
    for strategy in [
        SkinStrategy::Staged,
        SkinStrategy::PerInstance,
        SkinStrategy::PerNode,
    ] {
        assert!(strategy.passes().iter().all(|p| PASSES.contains(p)));
    }
    use keyframe_gpu::plan::passes::MIXED_PASSES;
    assert!(MIXED_PASSES.iter().all(|p| PASSES.contains(p)));
    for pass in PASSES {
        assert!(
            [
                SkinStrategy::Staged,
                SkinStrategy::PerInstance,
                SkinStrategy::PerNode
            ]
            .iter()
            .any(|s| s.passes().contains(&pass))
                || MIXED_PASSES.contains(&pass),
            "{}: in no strategy",
            pass.entry
        );
    }
    let locals = POSE_BINDINGS.iter().find(|b| b.name == "locals").unwrap();
    let readers: Vec<&str> = PASSES
        .iter()
        .filter(|p| p.bindings.contains(&locals.binding))
        .map(|p| p.entry)
        .collect();
    assert_eq!(readers, ["pose_main", "hierarchy_main", "mix_main"]);
}

/// `GpuSampleRow::is_regular_run`, which lets the clip-blocks shader compute
/// a run's rows from its first two: true for rows in arithmetic progression
/// (increasing, decreasing in wrapping arithmetic, or a step of zero), for
/// a run of one row and for two rows whose other fields agree; false when
/// any one field of any one row departs from it, the second row's key
/// count included.
#[test]
fn regular_runs_are_exactly_the_arithmetic_ones() {
    let row = |i: u32| GpuSampleRow {
        values_offset: 1000 + 256 * i,
        output_offset: 4 * i,
        search_offset: 7 + 190 * i,
        key_count: 64,
        lookup_scale: 0.0,
        lookup_origin: 0.0,
        width: 4,
        interpolation: 1,
    };
    let run: Vec<GpuSampleRow> = (0..32).map(row).collect();
    assert!(GpuSampleRow::is_regular_run(&run));
    assert!(GpuSampleRow::is_regular_run(&[]));
    assert!(GpuSampleRow::is_regular_run(&run[..1]));
    assert!(GpuSampleRow::is_regular_run(&[row(0), row(5)]));
    let longer = GpuSampleRow {
        key_count: 65,
        ..row(1)
    };
    assert!(!GpuSampleRow::is_regular_run(&[row(0), longer]));
    let mut reversed = run.clone();
    reversed.reverse();
    assert!(GpuSampleRow::is_regular_run(&reversed));
    let shared: Vec<GpuSampleRow> = (0..8)
        .map(|i| GpuSampleRow {
            search_offset: 7,
            ..row(i)
        })
        .collect();
    assert!(GpuSampleRow::is_regular_run(&shared));
    let breaks: [fn(&mut GpuSampleRow); 8] = [
        |r| r.values_offset += 4,
        |r| r.output_offset += 4,
        |r| r.search_offset += 1,
        |r| r.key_count += 1,
        |r| r.lookup_scale = 0.5,
        |r| r.lookup_origin = -0.0,
        |r| r.width = 3,
        |r| r.interpolation = 0,
    ];
    for (b, f) in breaks.iter().enumerate() {
        for at in [2, 17, 31] {
            let mut bad = run.clone();
            f(&mut bad[at]);
            assert!(
                !GpuSampleRow::is_regular_run(&bad),
                "break {b} at row {at} not seen"
            );
            // Every field but the search offset counts for
            // is_regular_but_search too.
            assert_eq!(
                GpuSampleRow::is_regular_but_search(&bad),
                b == 2,
                "break {b} at row {at}"
            );
        }
    }
}

/// `tables::sample::regular_segments`, which picks the segments of a clip-blocks
/// group's runs whose rows the shader computes from their first two: the
/// whole run when it is regular; else the longest even length dividing the
/// run at which every segment is, down to `MIN_REGULAR_SEGMENT`; segments
/// with their search offsets in progression before those without; none
/// (`(0, true)`) when no length serves every run.
#[test]
fn regular_segments_are_the_longest_that_serve_every_run() {
    // Run r's segment of property p: rows of their own progression.
    let row = |p: u32, i: u32| GpuSampleRow {
        values_offset: 5000 * p + 900 * i,
        output_offset: 100 * p + 3 * i,
        search_offset: 3000 * p + 178 * i,
        key_count: 60,
        lookup_scale: 0.0,
        lookup_origin: 0.0,
        width: 3 + p % 2,
        interpolation: 1,
    };
    // A run of `per` rows of each of `properties` properties.
    let run = |properties: u32, per: u32| -> Vec<GpuSampleRow> {
        (0..properties)
            .flat_map(|p| (0..per).map(move |i| row(p, i)))
            .collect()
    };
    let segments = |runs: &[Vec<GpuSampleRow>], rows: u32| {
        let runs: Vec<&[GpuSampleRow]> = runs.iter().map(Vec::as_slice).collect();
        tables::sample::regular_segments(&runs, rows)
    };
    assert_eq!(segments(&[run(1, 32), run(1, 8)], 32), (32, true));
    assert_eq!(segments(&[run(3, 8)], 24), (8, true));
    assert_eq!(segments(&[run(2, 8), run(2, 8)], 16), (8, true));
    assert_eq!(segments(&[run(2, 16)], 32), (16, true));
    // A run of 12 + 12 rows: of 24's even divisors 12, 8, 6 and 4, 12 and
    // 4 keep each segment to one property, and 12 is the longer.
    assert_eq!(segments(&[run(2, 12)], 24), (12, true));
    // Segments of 6 serve runs of 6 + 6 rows, not runs of 4 + 4 + 4, and 4
    // the other way round: no length serves both.
    assert_eq!(segments(&[run(2, 6)], 12), (6, true));
    assert_eq!(segments(&[run(2, 6), run(3, 4)], 12), (0, true));
    // Properties of 3 rows: no even length of 4 or more keeps to one.
    assert_eq!(segments(&[run(4, 3)], 12), (0, true));
    // A run shorter than MIN_REGULAR_SEGMENT is one segment.
    assert_eq!(tables::sample::MIN_REGULAR_SEGMENT, 4);
    assert_eq!(segments(&[run(1, 3)], 3), (3, true));
    // One row's search offset out of step: its segment's rows still
    // follow but for it, so the search offsets are read.
    let mut uneven = run(3, 8);
    uneven[10].search_offset += 118;
    assert_eq!(segments(std::slice::from_ref(&uneven), 24), (8, false));
    // Rows 12-15 shifted together: in step in segments of 4, out of step
    // in those of 8; computed search offsets come first.
    let mut shifted = run(3, 8);
    for r in &mut shifted[12..16] {
        r.search_offset += 118;
    }
    assert_eq!(segments(std::slice::from_ref(&shifted), 24), (4, true));
    // A width that changes inside a property's rows: nothing serves.
    let mut wide = run(3, 8);
    wide[5].width = 4;
    assert_eq!(segments(std::slice::from_ref(&wide), 24), (0, true));
}

/// Every override a plan passes (`SampleOverrides::constants`,
/// `RigOverrides::constants_for`: the only places their names are written)
/// is one that naga finds in the module the pipeline is made from, and
/// every override the module declares without a default is passed: a
/// renamed override fails here, not in pipeline creation on a device.
#[test]
fn plan_overrides_are_the_modules_overrides() {
    use keyframe_gpu::plan::passes::RigModule;
    use keyframe_gpu::plan::{RigOverrides, SampleOverrides};
    let sample = SampleOverrides {
        group: 0,
        row_shift: 12,
        has_table: true,
        has_direct: true,
        blocks_in_uniform: true,
        rows_in_uniform: true,
        group_rows: 1,
        row_run: 1,
        run_keys: 0,
        table_bits: 8,
        table_texels: 1,
        run_base: 0,
        aligned4: false,
        interleaved: false,
        regular_segment: 0,
        regular_search: true,
        compressed: false,
        uniform_times: false,
        wide_rows: true,
        encodings: 15,
        heads_in_uniform: false,
        verbatim_start: u32::MAX,
    };
    let rig = RigOverrides {
        parents_first: true,
        nodes_in_head: true,
        channels_in_head: true,
        joints_in_head: true,
        counts: [1, 1, 1],
        mesh_inverses_identity: false,
        inverse_binds_affine: false,
        rotations_aligned4: false,
        animated: [true, true],
        node_slots: 1,
    };
    let check = |label: &str, source: &str, given: Vec<(&'static str, f64)>| {
        let (module, _) = parse_and_validate(label, source);
        let declared: Vec<(String, bool)> = module
            .overrides
            .iter()
            .map(|(_, o)| (o.name.clone().unwrap_or_default(), o.init.is_some()))
            .collect();
        for (name, _) in &given {
            assert!(
                declared.iter().any(|(d, _)| d == name),
                "{label}: override {name} is not in the module"
            );
        }
        for (name, has_default) in &declared {
            assert!(
                *has_default || given.iter().any(|(g, _)| g == name),
                "{label}: override {name} has no default and is not passed"
            );
        }
    };
    check("sample", SAMPLE_WGSL, sample.constants());
    for (label, m, wide) in [
        ("pose", RigModule::Pose, false),
        ("skin", RigModule::Skin, false),
        ("skin wide", RigModule::Skin, true),
        ("mix", RigModule::Mix, false),
    ] {
        check(label, m.wgsl_with(wide), rig.constants_for(m));
    }
    // A misspelt name is caught.
    let result = std::panic::catch_unwind(|| {
        check("sample", SAMPLE_WGSL, vec![("GROUPS", 0.0)]);
    });
    assert!(result.is_err());
}

/// The binding numbers entry point `index` of `module` writes, sorted.
fn bindings_written(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    index: usize,
) -> Vec<u32> {
    let ep_info = info.get_entry_point(index);
    let mut written: Vec<u32> = module
        .global_variables
        .iter()
        .filter(|(h, _)| ep_info[*h].contains(naga::valid::GlobalUse::WRITE))
        .filter_map(|(_, v)| v.binding.as_ref().map(|b| b.binding))
        .collect();
    written.sort_unstable();
    written
}

/// The binding numbers entry point `index` of `module` uses, sorted.
fn bindings_used(module: &naga::Module, info: &naga::valid::ModuleInfo, index: usize) -> Vec<u32> {
    let ep_info = info.get_entry_point(index);
    let mut used: Vec<u32> = module
        .global_variables
        .iter()
        .filter(|(h, _)| !ep_info[*h].is_empty())
        .filter_map(|(_, v)| v.binding.as_ref().map(|b| b.binding))
        .collect();
    used.sort_unstable();
    used
}

/// The stage table (`plan::passes::STAGE_TABLE`) is complete and true:
/// every compute entry point of every module is a row; each row's entry
/// point uses exactly its bindings and writes exactly its `writes`; its
/// twin (`cpu::exec::twin` of its kernel) exists in its file; and
/// docs/ARCHITECTURE.md's pass table has a line naming the entry point
/// with its twin.
#[test]
fn the_stage_table_lists_every_pass_with_its_bindings_and_twin() {
    use keyframe_gpu::layout::{MIX_WGSL, POSE_WGSL, SAMPLE_WGSL, SKIN_WGSL};
    use keyframe_gpu::plan::passes::{Module, RigModule, STAGE_TABLE};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let architecture = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    let modules = [
        (Module::Sample, SAMPLE_WGSL),
        (Module::Rig(RigModule::Pose), POSE_WGSL),
        (Module::Rig(RigModule::Skin), SKIN_WGSL),
        (Module::Rig(RigModule::Mix), MIX_WGSL),
        (Module::Playback, keyframe_gpu::layout::PLAYBACK_WGSL),
    ];
    for (module_id, source) in modules {
        let (module, info) = parse_and_validate(&format!("{module_id:?}"), source);
        for (index, ep) in module.entry_points.iter().enumerate() {
            if ep.stage != naga::ShaderStage::Compute {
                continue;
            }
            let Some(row) = STAGE_TABLE.iter().find(|r| r.entry == ep.name) else {
                panic!(
                    "{}: an entry point of {module_id:?} missing from the stage table",
                    ep.name
                );
            };
            // A rig entry point is in its row's module (the pose stage's
            // are also in the skin and mix modules, which include pose.wgsl).
            let home =
                row.module == module_id || matches!(row.module, Module::Rig(RigModule::Pose));
            assert!(
                home,
                "{}: listed in {:?}, found in {module_id:?}",
                ep.name, row.module
            );
            if row.module == module_id {
                assert_eq!(
                    bindings_used(&module, &info, index),
                    row.bindings,
                    "{}: bindings",
                    ep.name
                );
                assert_eq!(
                    bindings_written(&module, &info, index),
                    row.writes,
                    "{}: bindings written",
                    ep.name
                );
            }
        }
    }
    for row in STAGE_TABLE {
        let twin = keyframe_gpu::cpu::exec::twin(row.kernel).name;
        let (file, function) = twin.split_once("::").unwrap();
        let text = std::fs::read_to_string(root.join("src").join(file)).unwrap();
        assert!(
            text.contains(&format!("fn {function}(")),
            "{}: its twin {twin} does not exist",
            row.entry,
        );
        let documented = architecture.lines().any(|line| {
            line.starts_with('|')
                && line.contains(&format!("`{}`", row.entry))
                && line.contains(&format!("`{function}`"))
        });
        assert!(
            documented,
            "{}: docs/ARCHITECTURE.md's pass table has no line naming it with `{function}`",
            row.entry
        );
    }
}

/// Each binding of `module` with the smallest buffer it accepts: naga's
/// stride of a runtime-sized array (one element and its padding), 0 for a
/// texture, else the size of the whole type.
fn binding_sizes(module: &naga::Module) -> Vec<(u32, u32)> {
    let mut layouter = naga::proc::Layouter::default();
    layouter.update(module.to_ctx()).unwrap();
    module
        .global_variables
        .iter()
        .filter_map(|(_, var)| {
            let rb = var.binding.as_ref()?;
            let want = match module.types[var.ty].inner {
                naga::TypeInner::Array {
                    size: naga::ArraySize::Dynamic,
                    stride,
                    ..
                } => stride,
                naga::TypeInner::Image { .. } => 0,
                _ => layouter[var.ty].size,
            };
            Some((rb.binding, want))
        })
        .collect()
}
