//! `KHR_animation_pointer` import: files built
//! in code with a pointer channel of every supported kind, mixed with core
//! channels, sampled by the CPU twin and checked against values computed
//! by hand from the interpolation formulas; and one file per refusal, each
//! checked for its typed error naming the animation, channel and pointer.
#![cfg(feature = "gltf")]

#[path = "common/gltf_builder.rs"]
mod gltf_builder;

use gltf_builder::*;
use keyframe_gpu::gltf::PointerProblem;
use keyframe_gpu::gltf::{self, Imported};
use keyframe_gpu::{cpu, Error, ImportErrorKind, Instance, PointerType, Property};
use serde_json::{json, Value};

/// A channel whose target is `pointer`.
fn pointer_channel(sampler: usize, pointer: &str) -> Value {
    json!({"sampler": sampler, "target": {"path": "pointer",
        "extensions": {"KHR_animation_pointer": {"pointer": pointer}}}})
}

/// The document every test starts from: node 0 with a two-target mesh,
/// node 1 with KHR_node_visibility, node 2 plain; material 0 with every
/// object a supported pointer can name; a spot light; a perspective camera
/// (with zfar and aspectRatio) and an orthographic one.
fn document(b: &Builder, samplers: Vec<Value>, channels: Vec<Value>) -> Vec<u8> {
    let uri = format!("data:application/octet-stream;base64,{}", base64(&b.bin));
    let mut v = b.json(Some(uri));
    v["nodes"][1]["extensions"] = json!({"KHR_node_visibility": {"visible": true}});
    v["materials"] = json!([{
        "pbrMetallicRoughness": {
            "baseColorFactor": [0.5, 0.5, 0.5, 1.0],
            "baseColorTexture": {"index": 0, "extensions": {"KHR_texture_transform": {"offset": [0.0, 0.0]}}}
        },
        "normalTexture": {"index": 0},
        "occlusionTexture": {"index": 0},
        "emissiveTexture": {"index": 0, "extensions": {"KHR_texture_transform": {}}},
        "extensions": {
            "KHR_materials_emissive_strength": {"emissiveStrength": 2.0},
            "KHR_materials_clearcoat": {"clearcoatTexture": {"index": 0,
                "extensions": {"KHR_texture_transform": {"scale": [2.0, 2.0]}}}},
            "KHR_materials_ior": {"ior": 1.5}
        }
    }]);
    v["textures"] = json!([{"source": 0}]);
    v["images"] = json!([{"uri": "unused.png"}]);
    v["cameras"] = json!([
        {"type": "perspective", "perspective": {"yfov": 0.8, "znear": 0.1, "zfar": 100.0, "aspectRatio": 1.5}},
        {"type": "orthographic", "orthographic": {"xmag": 1.0, "ymag": 1.0, "znear": 0.1, "zfar": 10.0}},
        {"type": "perspective", "perspective": {"yfov": 0.8, "znear": 0.1}}
    ]);
    v["extensions"] = json!({"KHR_lights_punctual": {"lights": [
        {"type": "spot", "color": [1.0, 0.5, 0.25], "range": 10.0, "spot": {}},
        {"type": "point"}
    ]}});
    v["extensionsUsed"] = json!([
        "KHR_animation_pointer",
        "KHR_node_visibility",
        "KHR_texture_transform",
        "KHR_materials_emissive_strength",
        "KHR_lights_punctual",
        "KHR_materials_clearcoat",
        "KHR_materials_ior"
    ]);
    v["extensionsRequired"] = json!(["KHR_animation_pointer"]);
    v["animations"] = json!([{"name": "pointers", "samplers": samplers, "channels": channels}]);
    serde_json::to_vec(&v).unwrap()
}

/// Three nodes (node 0 with a two-target mesh).
fn builder() -> Builder {
    let mut b = Builder::new();
    let mesh = b.mesh_with_targets(2);
    b.node(Some(mesh));
    b.node(None);
    b.node(None);
    b
}

/// Keys at 0 and 1 of width `w`: `v0[k] = k + 1`, `v1[k] = 5 (k + 1)`, so
/// LINEAR at 0.25 gives `0.75 (k + 1) + 0.25 * 5 (k + 1) = 2 (k + 1)`.
fn ramp(w: usize) -> Vec<f32> {
    let v0: Vec<f32> = (0..w).map(|k| (k + 1) as f32).collect();
    let v1: Vec<f32> = (0..w).map(|k| 5.0 * (k + 1) as f32).collect();
    [v0, v1].concat()
}

fn ty_name(w: usize) -> &'static str {
    ["", "SCALAR", "VEC2", "VEC3", "VEC4"][w]
}

/// The `pointer`s that read `(width, type)` ramps, LINEAR.
const RAMPS: &[(&str, usize, PointerType)] = &[
    ("/nodes/0/translation", 3, PointerType::Float3),
    ("/nodes/0/scale", 3, PointerType::Float3),
    ("/materials/0/pbrMetallicRoughness/baseColorFactor", 4, PointerType::Float4),
    ("/materials/0/pbrMetallicRoughness/roughnessFactor", 1, PointerType::Float),
    ("/materials/0/emissiveFactor", 3, PointerType::Float3),
    ("/materials/0/normalTexture/scale", 1, PointerType::Float),
    ("/materials/0/occlusionTexture/strength", 1, PointerType::Float),
    ("/materials/0/pbrMetallicRoughness/baseColorTexture/extensions/KHR_texture_transform/offset", 2, PointerType::Float2),
    ("/materials/0/emissiveTexture/extensions/KHR_texture_transform/rotation", 1, PointerType::Float),
    ("/materials/0/emissiveTexture/extensions/KHR_texture_transform/scale", 2, PointerType::Float2),
    ("/materials/0/extensions/KHR_materials_clearcoat/clearcoatTexture/extensions/KHR_texture_transform/offset", 2, PointerType::Float2),
    ("/extensions/KHR_lights_punctual/lights/0/color", 3, PointerType::Float3),
    ("/extensions/KHR_lights_punctual/lights/0/intensity", 1, PointerType::Float),
    ("/extensions/KHR_lights_punctual/lights/0/range", 1, PointerType::Float),
    ("/extensions/KHR_lights_punctual/lights/0/spot/innerConeAngle", 1, PointerType::Float),
    ("/extensions/KHR_lights_punctual/lights/0/spot/outerConeAngle", 1, PointerType::Float),
    ("/cameras/0/perspective/yfov", 1, PointerType::Float),
    ("/cameras/0/perspective/znear", 1, PointerType::Float),
    ("/cameras/0/perspective/zfar", 1, PointerType::Float),
    ("/cameras/0/perspective/aspectRatio", 1, PointerType::Float),
    ("/cameras/1/orthographic/xmag", 1, PointerType::Float),
    ("/cameras/1/orthographic/ymag", 1, PointerType::Float),
    ("/cameras/1/orthographic/znear", 1, PointerType::Float),
    ("/cameras/1/orthographic/zfar", 1, PointerType::Float),
];

/// What a channel should read at 0.25 and at 1.
struct Expect {
    pointer: Option<&'static str>,
    at_quarter: Vec<f32>,
    at_end: Vec<f32>,
    tol: f32,
}

/// Every supported pointer, with core channels before, between and after.
fn every_pointer() -> (Vec<u8>, Vec<Expect>) {
    let mut b = builder();
    let times = b.accessor_f32(&[0.0, 1.0], "SCALAR");
    let mut samplers = Vec::new();
    let mut channels = Vec::new();
    let mut expect = Vec::new();
    let mut add = |b: &mut Builder, output: usize, interp: &str, channel: Value, e: Expect| {
        let _ = b;
        samplers.push(json!({"input": times, "output": output, "interpolation": interp}));
        let mut channel = channel;
        channel["sampler"] = json!(samplers.len() - 1);
        channels.push(channel);
        expect.push(e);
    };
    // A core channel first: node 2's translation.
    let out = b.accessor_f32(&ramp(3), "VEC3");
    add(
        &mut b,
        out,
        "LINEAR",
        json!({"target": {"node": 2, "path": "translation"}}),
        Expect {
            pointer: None,
            at_quarter: vec![2.0, 4.0, 6.0],
            at_end: vec![5.0, 10.0, 15.0],
            tol: 1e-6,
        },
    );
    for &(pointer, w, _) in RAMPS {
        let out = b.accessor_f32(&ramp(w), ty_name(w));
        add(
            &mut b,
            out,
            "LINEAR",
            pointer_channel(0, pointer),
            Expect {
                pointer: Some(pointer),
                at_quarter: (0..w).map(|k| 2.0 * (k + 1) as f32).collect(),
                at_end: (0..w).map(|k| 5.0 * (k + 1) as f32).collect(),
                tol: 1e-6,
            },
        );
    }
    // Rotation: identity to 90 degrees about z; slerp at 0.25 is 22.5
    // degrees: (0, 0, sin(pi/16), cos(pi/16)).
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let out = b.accessor_f32(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, h, h], "VEC4");
    let (s, c) = (
        (std::f64::consts::PI / 16.0).sin() as f32,
        (std::f64::consts::PI / 16.0).cos() as f32,
    );
    add(
        &mut b,
        out,
        "LINEAR",
        pointer_channel(0, "/nodes/0/rotation"),
        Expect {
            pointer: Some("/nodes/0/rotation"),
            at_quarter: vec![0.0, 0.0, s, c],
            at_end: vec![0.0, 0.0, h, h],
            tol: 2e-5,
        },
    );
    // Morph weights of node 0's two targets: SCALAR, two per key.
    let out = b.accessor_f32(&[0.0, 1.0, 1.0, 0.0], "SCALAR");
    add(
        &mut b,
        out,
        "LINEAR",
        pointer_channel(0, "/nodes/0/weights"),
        Expect {
            pointer: Some("/nodes/0/weights"),
            at_quarter: vec![0.25, 0.75],
            at_end: vec![1.0, 0.0],
            tol: 1e-6,
        },
    );
    // A core channel between pointer channels.
    let out = b.accessor_f32(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, h, h], "VEC4");
    add(
        &mut b,
        out,
        "LINEAR",
        json!({"target": {"node": 2, "path": "rotation"}}),
        Expect {
            pointer: None,
            at_quarter: vec![0.0, 0.0, s, c],
            at_end: vec![0.0, 0.0, h, h],
            tol: 2e-5,
        },
    );
    // bool from UNSIGNED_BYTE, STEP: 0 is false, 7 true.
    let out = b.accessor_raw(&[0, 7], UNSIGNED_BYTE, false, 2, "SCALAR");
    add(
        &mut b,
        out,
        "STEP",
        pointer_channel(0, "/nodes/1/extensions/KHR_node_visibility/visible"),
        Expect {
            pointer: Some("/nodes/1/extensions/KHR_node_visibility/visible"),
            at_quarter: vec![0.0],
            at_end: vec![1.0],
            tol: 0.0,
        },
    );
    // A float from normalized UNSIGNED_BYTE: 0 and 255 decode to 0 and 1,
    // then LINEAR: 0.25.
    let out = b.accessor_raw(&[0, 255], UNSIGNED_BYTE, true, 2, "SCALAR");
    add(
        &mut b,
        out,
        "LINEAR",
        pointer_channel(0, "/materials/0/pbrMetallicRoughness/metallicFactor"),
        Expect {
            pointer: Some("/materials/0/pbrMetallicRoughness/metallicFactor"),
            at_quarter: vec![0.25],
            at_end: vec![1.0],
            tol: 1e-6,
        },
    );
    // A float from non-normalized SHORT: 2 and 6 as they are: 3 at 0.25.
    let out = b.accessor_raw(&i16_bytes(&[2, 6]), SHORT, false, 2, "SCALAR");
    add(
        &mut b,
        out,
        "LINEAR",
        pointer_channel(0, "/materials/0/alphaCutoff"),
        Expect {
            pointer: Some("/materials/0/alphaCutoff"),
            at_quarter: vec![3.0],
            at_end: vec![6.0],
            tol: 1e-6,
        },
    );
    // CUBICSPLINE with zero tangents from 0 to 1: at t = 0.25 the Hermite
    // basis h01 = -2 t^3 + 3 t^2 = 0.15625.
    let out = b.accessor_f32(&[0.0, 0.0, 0.0, 0.0, 1.0, 0.0], "SCALAR");
    add(
        &mut b,
        out,
        "CUBICSPLINE",
        pointer_channel(
            0,
            "/materials/0/extensions/KHR_materials_emissive_strength/emissiveStrength",
        ),
        Expect {
            pointer: Some(
                "/materials/0/extensions/KHR_materials_emissive_strength/emissiveStrength",
            ),
            at_quarter: vec![0.15625],
            at_end: vec![1.0],
            tol: 1e-6,
        },
    );
    // A sparse output: zeros with element 1 set to 4 (0 to 4: 1 at 0.25).
    let idx = b.view(&u16_bytes(&[1]), None);
    let vals = b.view(&f32_bytes(&[4.0]), None);
    let out = b.accessor_json(json!({"componentType": FLOAT, "count": 2, "type": "SCALAR",
        "sparse": {"count": 1, "indices": {"bufferView": idx, "componentType": UNSIGNED_SHORT},
                   "values": {"bufferView": vals}}}));
    add(
        &mut b,
        out,
        "LINEAR",
        pointer_channel(0, "/extensions/KHR_lights_punctual/lights/1/intensity"),
        Expect {
            pointer: Some("/extensions/KHR_lights_punctual/lights/1/intensity"),
            at_quarter: vec![1.0],
            at_end: vec![4.0],
            tol: 1e-6,
        },
    );
    // A core channel last.
    let out = b.accessor_f32(&ramp(3), "VEC3");
    add(
        &mut b,
        out,
        "STEP",
        json!({"target": {"node": 2, "path": "scale"}}),
        Expect {
            pointer: None,
            at_quarter: vec![1.0, 2.0, 3.0],
            at_end: vec![5.0, 10.0, 15.0],
            tol: 0.0,
        },
    );
    (document(&b, samplers, channels), expect)
}

fn load(bytes: &[u8]) -> Imported {
    match gltf::from_slice(bytes, None) {
        Ok(i) => i,
        Err(e) => panic!("import failed: {e}"),
    }
}

#[test]
fn every_supported_pointer_is_sampled_as_computed_by_hand() {
    let (bytes, expect) = every_pointer();
    let imported = load(&bytes);
    let lib = &imported.library;
    let info = &imported.animations[0];
    assert_eq!(info.channels.len(), expect.len());
    let out = cpu::sample(lib, &[Instance::new(0, 0.25), Instance::new(0, 1.0)]).unwrap();
    let stride = lib.output_stride() as usize;
    for (j, e) in expect.iter().enumerate() {
        assert_eq!(
            info.channels[j].pointer.as_deref(),
            e.pointer,
            "channel {j}"
        );
        let (offset, width) = lib.track_output(0, j as u32).unwrap();
        assert_eq!(
            width as usize,
            e.at_quarter.len(),
            "channel {j} {:?}",
            e.pointer
        );
        for (i, want) in [&e.at_quarter, &e.at_end].into_iter().enumerate() {
            let at = i * stride + offset as usize;
            let got = &out[at..at + width as usize];
            for (g, w) in got.iter().zip(want.iter()) {
                assert!(
                    (g - w).abs() <= e.tol,
                    "channel {j} {:?} instance {i}: {got:?}, expected {want:?}",
                    e.pointer
                );
            }
        }
    }
    // Node pointers are node tracks, exactly as core channels: the pose
    // stage sees them.
    let clip = &lib.clips()[0];
    let by_pointer = |p: &str| {
        let j = info
            .channels
            .iter()
            .position(|c| c.pointer.as_deref() == Some(p))
            .unwrap();
        (&clip.tracks[j], &info.channels[j])
    };
    let (t, c) = by_pointer("/nodes/0/rotation");
    assert_eq!(
        (t.node, t.property, t.pointer.is_none()),
        (0, Property::Rotation, true)
    );
    assert_eq!((c.node, c.property), (0, Property::Rotation));
    let (t, _) = by_pointer("/nodes/0/weights");
    assert_eq!((t.property, t.width), (Property::Weights, 2));
    let (t, c) = by_pointer("/materials/0/emissiveFactor");
    assert_eq!(
        (t.property, c.property, c.node),
        (Property::Pointer, Property::Pointer, usize::MAX)
    );
    // The library lists each non-node target with its type and its value
    // in the document (or the spec's default) as its rest value.
    let target = |p: &str| {
        lib.pointer_target(p)
            .unwrap_or_else(|| panic!("{p} not listed"))
    };
    let base = target("/materials/0/pbrMetallicRoughness/baseColorFactor");
    assert_eq!(
        (base.ty, base.rest.as_slice()),
        (PointerType::Float4, &[0.5, 0.5, 0.5, 1.0][..])
    );
    let vis = target("/nodes/1/extensions/KHR_node_visibility/visible");
    assert_eq!(
        (vis.ty, vis.rest.as_slice()),
        (PointerType::Bool, &[1.0][..])
    );
    assert_eq!(target("/materials/0/emissiveFactor").rest, vec![0.0; 3]);
    assert_eq!(target("/materials/0/alphaCutoff").rest, vec![0.5]);
    assert_eq!(
        target("/materials/0/emissiveTexture/extensions/KHR_texture_transform/scale").rest,
        vec![1.0, 1.0]
    );
    assert_eq!(
        target("/extensions/KHR_lights_punctual/lights/0/color").rest,
        vec![1.0, 0.5, 0.25]
    );
    assert_eq!(
        target("/extensions/KHR_lights_punctual/lights/0/spot/outerConeAngle").rest,
        vec![std::f32::consts::FRAC_PI_4]
    );
    assert_eq!(target("/cameras/0/perspective/aspectRatio").rest, vec![1.5]);
    // Eight node pointers and core channels: no slot of their own.
    assert!(lib.pointer_target("/nodes/0/translation").is_none());
    assert_eq!(lib.pointer_targets().len(), RAMPS.len() - 2 + 5);
    // The document keeps its core channels in root, in order.
    assert_eq!(imported.document.root.animations[0].channels.len(), 3);
    assert!(imported.animations[0]
        .channels
        .iter()
        .any(|c| c.pointer.is_some()));
}

#[test]
fn files_without_pointer_channels_have_none() {
    let mut b = builder();
    let times = b.accessor_f32(&[0.0, 1.0], "SCALAR");
    let out = b.accessor_f32(&ramp(3), "VEC3");
    b.animation("a", &[(times, out, "LINEAR")], &[(0, 0, "translation")]);
    let imported = load(&b.to_glb());
    assert!(imported.library.pointer_targets().is_empty());
    assert_eq!(imported.animations[0].channels[0].pointer, None);
}

/// One animation of a LINEAR float3 ramp on `pointer` (channel 1, after a
/// core channel), plus whatever `edit` changes in the JSON.
fn one_pointer(pointer: &str, edit: impl FnOnce(&mut Value, &mut Builder)) -> Vec<u8> {
    let mut b = builder();
    let times = b.accessor_f32(&[0.0, 1.0], "SCALAR");
    let vec3 = b.accessor_f32(&ramp(3), "VEC3");
    let samplers = vec![
        json!({"input": times, "output": vec3, "interpolation": "LINEAR"}),
        json!({"input": times, "output": vec3, "interpolation": "LINEAR"}),
    ];
    let channels = vec![
        json!({"sampler": 0, "target": {"node": 2, "path": "translation"}}),
        pointer_channel(1, pointer),
    ];
    let bytes = document(&b, samplers, channels);
    let mut v: Value = serde_json::from_slice(&bytes).unwrap();
    edit(&mut v, &mut b);
    // The edit may have added accessors: write the buffer again.
    v["buffers"][0]["byteLength"] = json!(b.bin.len());
    v["buffers"][0]["uri"] = json!(format!(
        "data:application/octet-stream;base64,{}",
        base64(&b.bin)
    ));
    v["bufferViews"] = json!(b.views);
    v["accessors"] = json!(b.accessors);
    serde_json::to_vec(&v).unwrap()
}

/// The refusal's channel, pointer and problem; checks that the message is
/// one line naming the animation, the channel and the pointer.
fn refusal(bytes: &[u8]) -> (usize, String, PointerProblem) {
    let err = match gltf::from_slice(bytes, None) {
        Err(e) => e,
        Ok(_) => panic!("expected a refusal"),
    };
    let msg = err.to_string();
    assert!(!msg.contains('\n'), "{msg}");
    match err {
        Error::Import {
            animation: Some(0),
            channel: Some(c),
            kind: ImportErrorKind::Pointer { pointer, problem },
            ..
        } => {
            assert!(
                msg.contains("animation 0")
                    && msg.contains(&format!("channel {c}"))
                    && msg.contains(&pointer),
                "{msg}"
            );
            (c, pointer, *problem)
        }
        other => panic!("expected a pointer refusal, got {other:?}"),
    }
}

#[test]
fn pointers_that_do_not_resolve_are_refused() {
    for (pointer, edit) in [
        // No material 5.
        ("/materials/5/emissiveFactor", None),
        // zfar has no default: absent on camera 2.
        ("/cameras/2/perspective/zfar", None),
        // No orthographic object on camera 0.
        ("/cameras/0/orthographic/xmag", None),
        // The enclosing object is absent: no spot on light 1.
        (
            "/extensions/KHR_lights_punctual/lights/1/spot/innerConeAngle",
            None,
        ),
        // No light 7; a node without a mesh has no weights.
        ("/extensions/KHR_lights_punctual/lights/7/color", None),
        ("/nodes/2/weights", None),
        // No KHR_texture_transform on the occlusion texture.
        (
            "/materials/0/occlusionTexture/extensions/KHR_texture_transform/offset",
            None,
        ),
        // A node index that is not a number.
        ("/nodes/x/translation", None),
        // The enclosing normalTexture removed.
        ("/materials/0/normalTexture/scale", Some("normalTexture")),
        // KHR_node_visibility absent on node 0.
        ("/nodes/0/extensions/KHR_node_visibility/visible", None),
        ("", None),
    ] {
        let bytes = one_pointer(pointer, |v, _| {
            if let Some(key) = edit {
                v["materials"][0].as_object_mut().unwrap().remove(key);
            }
        });
        let (c, p, problem) = refusal(&bytes);
        assert_eq!((c, p.as_str()), (1, pointer));
        assert!(
            matches!(problem, PointerProblem::Unresolved(_)),
            "{pointer}: {problem:?}"
        );
    }
}

#[test]
fn malformed_component_and_unsupported_pointers_are_refused_by_name() {
    for (pointer, want) in [
        ("materials/0/emissiveFactor", "malformed"),
        ("/materials/0/emissive~2Factor", "malformed"),
        ("/materials/0/emissiveFactor~", "malformed"),
        ("/materials/00/emissiveFactor", "malformed"),
        ("/materials/0/emissiveFactor/0", "component"),
        (
            "/materials/0/pbrMetallicRoughness/baseColorFactor/3",
            "component",
        ),
        ("/nodes/0/translation/1", "component"),
        ("/nodes/0/rotation/0", "component"),
        (
            "/materials/0/extensions/KHR_materials_ior/ior",
            "unsupported",
        ),
        ("/meshes/0/weights", "unsupported"),
        ("/nodes/0/weights/0", "unsupported"),
        ("/nodes/0/matrix", "unsupported"),
        ("/asset/version", "unsupported"),
    ] {
        let (c, p, problem) = refusal(&one_pointer(pointer, |_, _| {}));
        assert_eq!((c, p.as_str()), (1, pointer));
        let ok = match want {
            "malformed" => matches!(problem, PointerProblem::Malformed(_)),
            "component" => matches!(problem, PointerProblem::VectorComponent),
            _ => matches!(problem, PointerProblem::Unsupported),
        };
        assert!(ok, "{pointer}: expected {want}, got {problem:?}");
    }
}

#[test]
fn outputs_that_do_not_fit_the_target_are_refused() {
    let visible = "/nodes/1/extensions/KHR_node_visibility/visible";
    type MakeOutput = Box<dyn Fn(&mut Builder) -> usize>;
    let cases: Vec<(&str, &str, MakeOutput)> = vec![
        // A float3 read from VEC4, a float from VEC3.
        (
            "/materials/0/emissiveFactor",
            "LINEAR",
            Box::new(|b| b.accessor_f32(&ramp(4), "VEC4")),
        ),
        (
            "/materials/0/alphaCutoff",
            "LINEAR",
            Box::new(|b| b.accessor_f32(&ramp(3), "VEC3")),
        ),
        (
            "/nodes/0/translation",
            "LINEAR",
            Box::new(|b| b.accessor_f32(&ramp(2), "VEC2")),
        ),
        // A bool from FLOAT, from BYTE, from VEC2 of UNSIGNED_BYTE.
        (
            visible,
            "STEP",
            Box::new(|b| b.accessor_f32(&[0.0, 1.0], "SCALAR")),
        ),
        (
            visible,
            "STEP",
            Box::new(|b| b.accessor_raw(&[0, 1], BYTE, false, 2, "SCALAR")),
        ),
        (
            visible,
            "STEP",
            Box::new(|b| b.accessor_raw(&[0, 1, 1, 0], UNSIGNED_BYTE, false, 2, "VEC2")),
        ),
    ];
    for (pointer, interp, make) in cases {
        let bytes = one_pointer(pointer, |v, b| {
            let out = make(b);
            v["animations"][0]["samplers"][1]["output"] = json!(out);
            v["animations"][0]["samplers"][1]["interpolation"] = json!(interp);
        });
        let (c, p, problem) = refusal(&bytes);
        assert_eq!((c, p.as_str()), (1, pointer));
        assert!(
            matches!(problem, PointerProblem::OutputType { .. }),
            "{pointer}: {problem:?}"
        );
    }
    // LINEAR and CUBICSPLINE on a bool.
    for interp in ["LINEAR", "CUBICSPLINE"] {
        let bytes = one_pointer(visible, |v, b| {
            let out = b.accessor_raw(&[0, 1, 0, 1, 0, 1], UNSIGNED_BYTE, false, 6, "SCALAR");
            v["animations"][0]["samplers"][1]["output"] = json!(out);
            v["animations"][0]["samplers"][1]["interpolation"] = json!(interp);
        });
        let (_, _, problem) = refusal(&bytes);
        assert!(
            matches!(problem, PointerProblem::NotStep { ty: PointerType::Bool, interpolation } if interpolation.to_string() == interp),
            "{interp}: {problem:?}"
        );
    }
}

#[test]
fn a_property_targeted_twice_is_refused() {
    // The same pointer twice.
    let bytes = one_pointer("/materials/0/emissiveFactor", |v, _| {
        let again = v["animations"][0]["channels"][1].clone();
        v["animations"][0]["channels"]
            .as_array_mut()
            .unwrap()
            .push(again);
    });
    let (c, _, problem) = refusal(&bytes);
    assert_eq!((c, problem), (2, PointerProblem::Duplicate { first: 1 }));
    // A pointer on node 2's translation after the core channel on it.
    let (c, p, problem) = refusal(&one_pointer("/nodes/2/translation", |_, _| {}));
    assert_eq!(
        (c, p.as_str(), problem),
        (
            1,
            "/nodes/2/translation",
            PointerProblem::Duplicate { first: 0 }
        )
    );
    // A core channel after a pointer on the same property.
    let bytes = one_pointer("/nodes/0/scale", |v, _| {
        let core = json!({"sampler": 0, "target": {"node": 0, "path": "scale"}});
        v["animations"][0]["channels"]
            .as_array_mut()
            .unwrap()
            .push(core);
    });
    let (c, p, problem) = refusal(&bytes);
    assert_eq!(
        (c, p.as_str(), problem),
        (2, "/nodes/0/scale", PointerProblem::Duplicate { first: 1 })
    );
}

#[test]
fn malformed_pointer_channels_are_refused() {
    // A pointer channel that sets target.node.
    let bytes = one_pointer("/materials/0/emissiveFactor", |v, _| {
        v["animations"][0]["channels"][1]["target"]["node"] = json!(0);
    });
    let (c, _, problem) = refusal(&bytes);
    assert_eq!(
        (c, problem),
        (1, PointerProblem::NodeSet { node: "0".into() })
    );
    // path "pointer" without the extension object, or without its pointer.
    for ext in [
        json!(null),
        json!({}),
        json!({"KHR_animation_pointer": {}}),
        json!({"KHR_animation_pointer": {"pointer": 3}}),
    ] {
        let bytes = one_pointer("/materials/0/emissiveFactor", |v, _| {
            v["animations"][0]["channels"][1]["target"]["extensions"] = ext.clone();
        });
        match gltf::from_slice(&bytes, None) {
            Err(Error::Import {
                animation: Some(0),
                channel: Some(1),
                kind: ImportErrorKind::PointerExtensionMissing,
                ..
            }) => {}
            other => panic!("{ext}: expected PointerExtensionMissing, got {other:?}"),
        }
    }
    // A sampler out of range is named as for core channels.
    let bytes = one_pointer("/materials/0/emissiveFactor", |v, _| {
        v["animations"][0]["channels"][1]["sampler"] = json!(9);
    });
    assert!(matches!(
        gltf::from_slice(&bytes, None),
        Err(Error::Import {
            animation: Some(0),
            channel: Some(1),
            kind: ImportErrorKind::IndexOutOfRange {
                what: "sampler",
                ..
            },
            ..
        })
    ));
    // Other required extensions are still refused.
    let bytes = one_pointer("/materials/0/emissiveFactor", |v, _| {
        v["extensionsRequired"] = json!(["KHR_animation_pointer", "EXT_unknown"]);
    });
    assert!(matches!(
        gltf::from_slice(&bytes, None),
        Err(Error::Import { kind: ImportErrorKind::UnsupportedExtension(e), .. }) if e == "EXT_unknown"
    ));
}

#[test]
fn pointer_files_keep_every_other_check_of_the_document() {
    // A broken core part (a node index that is not an integer) is refused
    // by the JSON model as before, pointer channels or not.
    let bytes = one_pointer("/materials/0/emissiveFactor", |v, _| {
        v["animations"][0]["channels"][0]["target"]["node"] = json!("two");
    });
    assert!(matches!(
        gltf::from_slice(&bytes, None),
        Err(Error::Import {
            kind: ImportErrorKind::Json(_),
            ..
        })
    ));
    // The rig reads a pointer file (its validation sees the core channels).
    let bytes = one_pointer("/materials/0/emissiveFactor", |_, _| {});
    let imported = load(&bytes);
    keyframe_gpu::Rig::from_document(&imported.document).unwrap();
}
