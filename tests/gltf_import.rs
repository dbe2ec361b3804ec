//! glTF import: assets generated in code, loaded through the importer, and
//! checked against the values the test put in; broken files checked for
//! their specific error.
#![cfg(feature = "gltf")]

#[path = "common/gltf_builder.rs"]
mod gltf_builder;

use std::sync::Arc;

use gltf_builder::*;
use keyframe_gpu::gltf::{self, Imported};
use keyframe_gpu::{cpu, Error, ImportErrorKind, Instance, Interpolation, Property, TrackError};
use serde_json::json;

fn load(bytes: &[u8]) -> Imported {
    match gltf::from_slice(bytes, None) {
        Ok(i) => i,
        Err(e) => panic!("import failed: {e}"),
    }
}

fn property(path: &str) -> Property {
    match path {
        "translation" => Property::Translation,
        "rotation" => Property::Rotation,
        "scale" => Property::Scale,
        "weights" => Property::Weights,
        _ => unreachable!(),
    }
}

fn interpolation(s: &str) -> Interpolation {
    match s {
        "STEP" => Interpolation::Step,
        "LINEAR" => Interpolation::Linear,
        "CUBICSPLINE" => Interpolation::CubicSpline,
        _ => unreachable!(),
    }
}

/// The import error's fields, or a panic with what came instead.
fn import_error(
    r: Result<Imported, Error>,
) -> (Option<usize>, Option<usize>, Option<usize>, ImportErrorKind) {
    match r {
        Err(Error::Import {
            animation,
            channel,
            skin,
            accessor,
            kind,
        }) => {
            // Animation imports never point into a skin.
            assert_eq!(skin, None, "{kind:?}");
            // The message is one line and names what it has.
            let msg = Error::Import {
                animation,
                channel,
                skin,
                accessor,
                kind: kind.clone(),
            }
            .to_string();
            assert!(!msg.contains('\n'), "{msg}");
            if let Some(a) = animation {
                assert!(msg.contains(&format!("animation {a}")), "{msg}");
            }
            if let Some(a) = accessor {
                assert!(msg.contains(&format!("accessor {a}")), "{msg}");
            }
            (animation, channel, accessor, kind)
        }
        Err(other) => panic!("expected an import error, got {other}"),
        Ok(_) => panic!("expected an import error, got success"),
    }
}

#[test]
fn every_interpolation_path_and_component_type() {
    let (b, stored) = full_asset();
    let imported = load(&b.to_gltf_embedded());
    let clips = imported.library.clips();
    assert_eq!(clips.len(), 3);
    assert_eq!(imported.animations.len(), 3);
    let mut seen = std::collections::HashSet::new();
    for (a, channels) in stored.iter().enumerate() {
        let clip = &clips[a];
        assert_eq!(clip.name, ["STEP", "LINEAR", "CUBICSPLINE"][a]);
        assert_eq!(clip.tracks.len(), channels.len());
        assert_eq!(imported.animations[a].channels.len(), channels.len());
        for (c, s) in channels.iter().enumerate() {
            let track = &clip.tracks[c];
            let info = &imported.animations[a].channels[c];
            assert_eq!(track.node as usize, s.node, "anim {a} channel {c}");
            assert_eq!(info.node, s.node);
            assert_eq!(track.property, property(s.path));
            assert_eq!(info.property, property(s.path));
            assert_eq!(track.interpolation, interpolation(s.interpolation));
            assert_eq!(track.width as usize, s.width);
            assert_eq!(&track.times[..], &FULL_TIMES[..]);
            assert_eq!(
                track.values, s.expected,
                "anim {a} channel {c}: {} {}",
                s.path, s.component_type
            );
            seen.insert((s.interpolation, s.path, s.component_type));
        }
    }
    // 3 interpolations x (translation + scale + 5 rotation + 5 weights types).
    assert_eq!(seen.len(), 3 * 12);
}

#[test]
fn normalized_integers_follow_the_spec_formulas() {
    // Hand-picked raw values with their spec values written out.
    let mut b = Builder::new();
    let mesh = b.mesh_with_targets(4);
    let node = b.node(Some(mesh));
    let rnode = b.node(None);
    let input = b.accessor_f32(&[0.0], "SCALAR");
    let w_i8 = b.accessor_raw(&i8_bytes(&[-128, -127, 127, 0]), BYTE, true, 4, "SCALAR");
    let w_u8 = b.accessor_raw(&[0, 51, 255, 1], UNSIGNED_BYTE, true, 4, "SCALAR");
    let w_i16 = b.accessor_raw(
        &i16_bytes(&[-32768, -32767, 32767, 0]),
        SHORT,
        true,
        4,
        "SCALAR",
    );
    let w_u16 = b.accessor_raw(
        &u16_bytes(&[0, 13107, 65535, 1]),
        UNSIGNED_SHORT,
        true,
        4,
        "SCALAR",
    );
    let r_i16 = b.accessor_raw(&i16_bytes(&[0, 0, 0, 32767]), SHORT, true, 1, "VEC4");
    b.animation(
        "ints",
        &[
            (input, w_i8, "STEP"),
            (input, w_u8, "STEP"),
            (input, w_i16, "STEP"),
            (input, w_u16, "STEP"),
            (input, r_i16, "LINEAR"),
        ],
        &[
            (0, node, "weights"),
            (1, node, "weights"),
            (2, node, "weights"),
            (3, node, "weights"),
            (4, rnode, "rotation"),
        ],
    );
    let imported = load(&b.to_glb());
    let t = &imported.library.clips()[0].tracks;
    assert_eq!(t[0].values, [-1.0, -1.0, 1.0, 0.0]);
    assert_eq!(t[1].values, [0.0, 0.2, 1.0, 1.0 / 255.0]);
    assert_eq!(t[2].values, [-1.0, -1.0, 1.0, 0.0]);
    assert_eq!(t[3].values, [0.0, 0.2, 1.0, 1.0 / 65535.0]);
    assert_eq!(t[4].values, [0.0, 0.0, 0.0, 1.0]);
}

#[test]
fn containers_agree_embedded_glb_and_external() {
    let (b, _) = full_asset();
    let embedded = load(&b.to_gltf_embedded());
    let binary = load(&b.to_glb());
    let dir = temp_dir("containers");
    let path = b.write_external(&dir, "asset with space");
    let external = gltf::load(&path).unwrap();
    for other in [&binary, &external] {
        assert_eq!(embedded.library.clips(), other.library.clips());
        assert_eq!(embedded.animations, other.animations);
    }
    // A percent-encoded URI names the same file.
    let j = b.json(Some("asset%20with%20space.bin".into()));
    let encoded = dir.join("encoded.gltf");
    std::fs::write(&encoded, serde_json::to_vec(&j).unwrap()).unwrap();
    let e = gltf::load(&encoded).unwrap();
    assert_eq!(embedded.library.clips(), e.library.clips());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn shared_input_is_uploaded_once() {
    let mut b = Builder::new();
    let n0 = b.node(None);
    let n1 = b.node(None);
    let input = b.accessor_f32(&[0.0, 1.0, 2.0, 3.0], "SCALAR");
    let t = b.accessor_f32(&[0.0; 12], "VEC3");
    let s = b.accessor_f32(&[1.0; 12], "VEC3");
    b.animation(
        "shared",
        &[(input, t, "LINEAR"), (input, s, "LINEAR")],
        &[
            (0, n0, "translation"),
            (1, n1, "scale"),
            (0, n1, "translation"),
        ],
    );
    let imported = load(&b.to_glb());
    let tracks = &imported.library.clips()[0].tracks;
    assert_eq!(tracks.len(), 3);
    assert!(Arc::ptr_eq(&tracks[0].times, &tracks[1].times));
    assert!(Arc::ptr_eq(&tracks[0].times, &tracks[2].times));
    // Stored once: the 4 key times, then three tracks of 4 VEC3 keys.
    assert_eq!(imported.library.stored_bytes(), 4 * (4 + 3 * 12));
    // Channel order is the channels array's order, not the samplers'.
    let paths: Vec<_> = tracks.iter().map(|t| (t.node, t.property)).collect();
    assert_eq!(
        paths,
        [
            (0, Property::Translation),
            (1, Property::Scale),
            (1, Property::Translation)
        ]
    );
}

#[test]
fn single_key_and_times_after_zero() {
    let mut b = Builder::new();
    let n = b.node(None);
    let one = b.accessor_f32(&[0.75], "SCALAR");
    let v1 = b.accessor_f32(&[1.0, 2.0, 3.0], "VEC3");
    let late = b.accessor_f32(&[2.0, 4.0], "SCALAR");
    let v2 = b.accessor_f32(&[10.0, 0.0, 0.0, 20.0, 0.0, 0.0], "VEC3");
    b.animation(
        "a",
        &[(one, v1, "LINEAR"), (late, v2, "LINEAR")],
        &[(0, n, "scale"), (1, n, "translation")],
    );
    let imported = load(&b.to_gltf_embedded());
    let clip = &imported.library.clips()[0];
    assert_eq!(&clip.tracks[0].times[..], &[0.75]);
    assert_eq!(clip.duration(), 4.0);
    // CPU reference: the single key holds everywhere; before 2 s the late
    // track holds its first key, at 3 s it is halfway.
    let out = cpu::sample(
        &imported.library,
        &[
            Instance::new(0, 0.0),
            Instance::new(0, 3.0),
            Instance::new(0, 9.0),
        ],
    )
    .unwrap();
    let stride = imported.library.output_stride() as usize;
    assert_eq!(&out[0..6], &[1.0, 2.0, 3.0, 10.0, 0.0, 0.0]);
    assert_eq!(&out[stride..stride + 6], &[1.0, 2.0, 3.0, 15.0, 0.0, 0.0]);
    assert_eq!(
        &out[2 * stride..2 * stride + 6],
        &[1.0, 2.0, 3.0, 20.0, 0.0, 0.0]
    );
}

#[test]
fn sparse_accessors() {
    let mut b = Builder::new();
    let n = b.node(None);
    let mesh = b.mesh_with_targets(3);
    let mn = b.node(Some(mesh));
    // Sparse input: dense [0, 1, 9, 3] with index 2 replaced by 2.
    let base = b.view(&f32_bytes(&[0.0, 1.0, 9.0, 3.0]), None);
    let idx = b.view(&u16_bytes(&[2]), None);
    let val = b.view(&f32_bytes(&[2.0]), None);
    let input = b.accessor_json(json!({
        "bufferView": base, "componentType": FLOAT, "count": 4, "type": "SCALAR",
        "sparse": {"count": 1, "indices": {"bufferView": idx, "componentType": UNSIGNED_SHORT},
                   "values": {"bufferView": val}}}));
    // Sparse output on a dense base: elements 1 and 3 replaced.
    let base = b.view(&f32_bytes(&[1.0; 12]), None);
    let idx = b.view(&[1u8, 3], None);
    let val = b.view(&f32_bytes(&[5.0, 6.0, 7.0, 8.0, 9.0, 10.0]), None);
    let out = b.accessor_json(json!({
        "bufferView": base, "componentType": FLOAT, "count": 4, "type": "VEC3",
        "sparse": {"count": 2, "indices": {"bufferView": idx, "componentType": UNSIGNED_BYTE},
                   "values": {"bufferView": val}}}));
    // Sparse weights without a buffer view: zeros, then normalized shorts at
    // elements 4 and 11 (u32 indices, with a byte offset on the values).
    let idx = b.view(&u32_bytes(&[4, 11]), None);
    let val = b.view(&i16_bytes(&[0, 32767, -32767]), None);
    let weights = b.accessor_json(json!({
        "componentType": SHORT, "normalized": true, "count": 12, "type": "SCALAR",
        "sparse": {"count": 2, "indices": {"bufferView": idx, "componentType": UNSIGNED_INT},
                   "values": {"bufferView": val, "byteOffset": 2}}}));
    b.animation(
        "sparse",
        &[(input, out, "STEP"), (input, weights, "LINEAR")],
        &[(0, n, "translation"), (1, mn, "weights")],
    );
    let imported = load(&b.to_glb());
    let tracks = &imported.library.clips()[0].tracks;
    assert_eq!(&tracks[0].times[..], &[0.0, 1.0, 2.0, 3.0]);
    assert_eq!(
        tracks[0].values,
        [1.0, 1.0, 1.0, 5.0, 6.0, 7.0, 1.0, 1.0, 1.0, 8.0, 9.0, 10.0]
    );
    let mut w = vec![0.0; 12];
    w[4] = 1.0;
    w[11] = -1.0;
    assert_eq!(tracks[1].width, 3);
    assert_eq!(tracks[1].values, w);
}

#[test]
fn morph_mesh_with_64_targets() {
    let mut b = Builder::new();
    let mesh = b.mesh_with_targets(64);
    let n = b.node(Some(mesh));
    let input = b.accessor_f32(&[0.0, 1.0], "SCALAR");
    let values: Vec<f32> = (0..128).map(|i| i as f32 / 128.0).collect();
    let out = b.accessor_f32(&values, "SCALAR");
    b.animation("morph", &[(input, out, "LINEAR")], &[(0, n, "weights")]);
    let imported = load(&b.to_glb());
    let t = &imported.library.clips()[0].tracks[0];
    assert_eq!(t.width, 64);
    assert_eq!(t.values, values);
    // Halfway: each weight is the mean of its two keys (i/128 and (64+i)/128).
    let out = cpu::sample(&imported.library, &[Instance::new(0, 0.5)]).unwrap();
    for (i, v) in out.iter().take(64).enumerate() {
        let want = (i as f32 + 32.0) / 128.0;
        assert!((v - want).abs() < 1e-6, "weight {i}: {v} vs {want}");
    }
}

#[test]
fn morph_width_from_default_weights() {
    let mut b = Builder::new();
    b.meshes
        .push(json!({"primitives": [{"attributes": {}}], "weights": [0.5, 0.5]}));
    let n = b.node(Some(0));
    let input = b.accessor_f32(&[0.0], "SCALAR");
    let out = b.accessor_f32(&[0.25, 0.75], "SCALAR");
    b.animation("w", &[(input, out, "STEP")], &[(0, n, "weights")]);
    let imported = load(&b.to_gltf_embedded());
    assert_eq!(imported.library.clips()[0].tracks[0].width, 2);
}

#[test]
fn mesh_quantization_required_loads() {
    let (mut b, stored) = full_asset();
    b.extensions_required.push("KHR_mesh_quantization".into());
    let imported = load(&b.to_glb());
    assert_eq!(
        imported.library.clips()[2].tracks[3].values,
        stored[2][3].expected
    );
}

// ---------------------------------------------------------------------------
// Broken files.

/// A valid one-channel asset to break: node 0 translation, LINEAR, 2 keys;
/// accessor 0 input, accessor 1 output.
fn base() -> Builder {
    let mut b = Builder::new();
    b.node(None);
    b.accessor_f32(&[0.0, 1.0], "SCALAR");
    b.accessor_f32(&[0.0, 0.0, 0.0, 1.0, 2.0, 3.0], "VEC3");
    b.animation("a", &[(0, 1, "LINEAR")], &[(0, 0, "translation")]);
    b
}

fn try_json(v: &serde_json::Value, b: &Builder) -> Result<Imported, Error> {
    let mut v = v.clone();
    if v["buffers"][0].get("uri").is_none() {
        v["buffers"][0]["uri"] = json!(format!(
            "data:application/octet-stream;base64,{}",
            base64(&b.bin)
        ));
    }
    gltf::from_slice(&serde_json::to_vec(&v).unwrap(), None)
}

#[test]
fn base_asset_is_valid() {
    let b = base();
    let imported = load(&b.to_gltf_embedded());
    assert_eq!(
        imported.library.clips()[0].tracks[0].values[3..],
        [1.0, 2.0, 3.0]
    );
}

#[test]
fn weights_on_node_without_mesh() {
    let mut b = base();
    b.accessor_f32(&[0.0, 1.0], "SCALAR");
    b.animation(
        "w",
        &[(0, 1, "LINEAR"), (0, 2, "LINEAR")],
        &[(0, 0, "translation"), (1, 0, "weights")],
    );
    let (a, c, _, kind) = import_error(try_json(&b.json(None), &b));
    assert_eq!((a, c), (Some(1), Some(1)));
    assert_eq!(kind, ImportErrorKind::NodeWithoutMesh { node: 0 });
}

#[test]
fn weights_count_mismatch() {
    let mut b = base();
    let mesh = b.mesh_with_targets(3);
    let n = b.node(Some(mesh));
    let out = b.accessor_f32(&[0.0, 1.0, 0.0, 1.0], "SCALAR"); // 2 keys x 2, not x 3
    b.animation("w", &[(0, out, "LINEAR")], &[(0, n, "weights")]);
    let (a, c, acc, kind) = import_error(try_json(&b.json(None), &b));
    assert_eq!((a, c, acc), (Some(1), Some(0), Some(out)));
    assert_eq!(
        kind,
        ImportErrorKind::CountMismatch {
            input: 2,
            output: 4,
            expected: 6
        }
    );
}

#[test]
fn primitives_disagree_on_target_count() {
    let mut b = base();
    b.meshes.push(json!({"primitives": [
        {"attributes": {}, "targets": [{"POSITION": 1}]},
        {"attributes": {}, "targets": [{"POSITION": 1}, {"POSITION": 1}]}]}));
    let n = b.node(Some(0));
    b.animation("w", &[(0, 0, "LINEAR")], &[(0, n, "weights")]);
    let (a, _, _, kind) = import_error(try_json(&b.json(None), &b));
    assert_eq!(a, Some(1));
    assert!(
        matches!(kind, ImportErrorKind::MorphTargets { mesh: 0, .. }),
        "{kind:?}"
    );
}

#[test]
fn accessor_past_view_end() {
    let b = base();
    let mut j = b.json(None);
    j["accessors"][1]["count"] = json!(3);
    let (_, _, acc, kind) = import_error(try_json(&j, &b));
    assert_eq!(acc, Some(1));
    // count 3 fails the count check against 2 keys first; make keys 3 too.
    assert!(
        matches!(kind, ImportErrorKind::CountMismatch { .. }),
        "{kind:?}"
    );
    j["accessors"][0]["count"] = json!(3);
    let (_, _, acc, kind) = import_error(try_json(&j, &b));
    assert_eq!(acc, Some(0));
    assert_eq!(
        kind,
        ImportErrorKind::AccessorOutOfRange {
            part: "accessor",
            view: 0,
            end: 12,
            length: 8
        }
    );
    // An offset past the end.
    let mut j = b.json(None);
    j["accessors"][1]["byteOffset"] = json!(4);
    let (_, _, acc, kind) = import_error(try_json(&j, &b));
    assert_eq!(acc, Some(1));
    assert!(
        matches!(kind, ImportErrorKind::AccessorOutOfRange { end: 28, .. }),
        "{kind:?}"
    );
}

#[test]
fn counts_that_overflow() {
    let b = base();
    let mut j = b.json(None);
    j["accessors"][0]["count"] = json!(u64::MAX / 2);
    j["accessors"][1]["count"] = json!(u64::MAX / 2);
    let (_, _, acc, kind) = import_error(try_json(&j, &b));
    assert_eq!(acc, Some(0));
    assert!(
        matches!(
            kind,
            ImportErrorKind::AccessorOutOfRange { .. } | ImportErrorKind::TooLarge { .. }
        ),
        "{kind:?}"
    );
    // Without a buffer view the size is not bounded by the file: refused.
    let mut j = b.json(None);
    j["accessors"][0] = json!({"componentType": FLOAT, "count": 1u64 << 40, "type": "SCALAR"});
    let (_, _, acc, kind) = import_error(try_json(&j, &b));
    assert_eq!(acc, Some(0));
    assert!(matches!(kind, ImportErrorKind::TooLarge { .. }), "{kind:?}");
}

#[test]
fn view_past_buffer_end_and_buffer_too_short() {
    let b = base();
    let mut j = b.json(None);
    j["bufferViews"][1]["byteLength"] = json!(1000);
    let (_, _, acc, kind) = import_error(try_json(&j, &b));
    assert_eq!(acc, Some(1));
    assert!(
        matches!(
            kind,
            ImportErrorKind::ViewOutOfRange {
                view: 1,
                buffer: 0,
                ..
            }
        ),
        "{kind:?}"
    );
    let mut j = b.json(None);
    j["buffers"][0]["byteLength"] = json!(1u64 << 50);
    let (_, _, _, kind) = import_error(try_json(&j, &b));
    assert!(
        matches!(kind, ImportErrorKind::BufferTooShort { buffer: 0, .. }),
        "{kind:?}"
    );
}

#[test]
fn bad_strides() {
    let b = base();
    for stride in [4, 2, 256] {
        let mut j = b.json(None);
        j["bufferViews"][1]["byteStride"] = json!(stride);
        let (_, _, acc, kind) = import_error(try_json(&j, &b));
        assert_eq!(acc, Some(1));
        assert_eq!(
            kind,
            ImportErrorKind::BadStride {
                view: 1,
                stride,
                element_size: 12
            }
        );
    }
}

#[test]
fn strided_output_is_read_per_stride() {
    // Two VEC3 elements at stride 16 (4 bytes of padding each).
    let mut b = Builder::new();
    b.node(None);
    b.accessor_f32(&[0.0, 1.0], "SCALAR");
    let view = b.view(
        &f32_bytes(&[1.0, 2.0, 3.0, 99.0, 4.0, 5.0, 6.0, 99.0]),
        Some(16),
    );
    b.accessor_json(
        json!({"bufferView": view, "componentType": FLOAT, "count": 2, "type": "VEC3"}),
    );
    b.animation("s", &[(0, 1, "STEP")], &[(0, 0, "scale")]);
    let imported = load(&b.to_glb());
    assert_eq!(
        imported.library.clips()[0].tracks[0].values,
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    );
}

#[test]
fn indices_out_of_range() {
    let b = base();
    let cases: [(&str, serde_json::Value, &str); 5] = [
        ("/animations/0/channels/0/sampler", json!(5), "sampler"),
        ("/animations/0/channels/0/target/node", json!(7), "node"),
        ("/animations/0/samplers/0/output", json!(9), "accessor"),
        ("/accessors/1/bufferView", json!(8), "bufferView"),
        ("/bufferViews/1/buffer", json!(3), "buffer"),
    ];
    for (ptr, value, what) in cases {
        let mut j = b.json(None);
        *j.pointer_mut(ptr).unwrap() = value;
        let (a, c, _, kind) = import_error(try_json(&j, &b));
        assert_eq!((a, c), (Some(0), Some(0)), "{ptr}");
        assert!(
            matches!(kind, ImportErrorKind::IndexOutOfRange { what: w, .. } if w == what),
            "{ptr}: {kind:?}"
        );
    }
}

#[test]
fn unknown_interpolation_and_path() {
    let b = base();
    let mut j = b.json(None);
    j["animations"][0]["samplers"][0]["interpolation"] = json!("SMOOTH");
    let (_, _, _, kind) = import_error(try_json(&j, &b));
    assert_eq!(kind, ImportErrorKind::UnknownInterpolation);
    let mut j = b.json(None);
    j["animations"][0]["channels"][0]["target"]["path"] = json!("color");
    let (_, _, _, kind) = import_error(try_json(&j, &b));
    assert_eq!(kind, ImportErrorKind::UnknownPath);
}

#[test]
fn missing_interpolation_means_linear() {
    let b = base();
    let mut j = b.json(None);
    j["animations"][0]["samplers"][0]
        .as_object_mut()
        .unwrap()
        .remove("interpolation");
    let imported = try_json(&j, &b).unwrap();
    assert_eq!(
        imported.library.clips()[0].tracks[0].interpolation,
        Interpolation::Linear
    );
}

#[test]
fn bad_component_types() {
    let b = base();
    // Translation must be FLOAT.
    let mut j = b.json(None);
    j["accessors"][1]["componentType"] = json!(BYTE);
    j["accessors"][1]["normalized"] = json!(true);
    let (_, _, acc, kind) = import_error(try_json(&j, &b));
    assert_eq!(acc, Some(1));
    assert!(
        matches!(
            kind,
            ImportErrorKind::BadComponentType {
                usage: "translation output",
                ..
            }
        ),
        "{kind:?}"
    );
    // Input must be FLOAT.
    let mut j = b.json(None);
    j["accessors"][0]["componentType"] = json!(UNSIGNED_INT);
    let (_, _, acc, _) = import_error(try_json(&j, &b));
    assert_eq!(acc, Some(0));
    // Integer rotations must be normalized.
    let mut b2 = Builder::new();
    b2.node(None);
    b2.accessor_f32(&[0.0], "SCALAR");
    b2.accessor_raw(&i16_bytes(&[0, 0, 0, 1]), SHORT, false, 1, "VEC4");
    b2.animation("r", &[(0, 1, "STEP")], &[(0, 0, "rotation")]);
    let (_, _, acc, kind) = import_error(try_json(&b2.json(None), &b2));
    assert_eq!(acc, Some(1));
    assert!(
        matches!(
            kind,
            ImportErrorKind::BadComponentType {
                normalized: false,
                ..
            }
        ),
        "{kind:?}"
    );
    // Wrong accessor type.
    let mut j = b.json(None);
    j["accessors"][1]["type"] = json!("VEC4");
    j["accessors"][1]["count"] = json!(1);
    let (_, _, acc, kind) = import_error(try_json(&j, &b));
    assert_eq!(acc, Some(1));
    assert!(
        matches!(
            kind,
            ImportErrorKind::BadAccessorType {
                expected: "VEC3",
                ..
            }
        ),
        "{kind:?}"
    );
}

#[test]
fn bad_key_times_name_the_input_accessor() {
    let mut b = Builder::new();
    b.node(None);
    b.accessor_f32(&[0.0, 1.0, 1.0], "SCALAR");
    b.accessor_f32(&[0.0; 9], "VEC3");
    b.animation("t", &[(0, 1, "LINEAR")], &[(0, 0, "translation")]);
    let (a, c, acc, kind) = import_error(try_json(&b.json(None), &b));
    assert_eq!((a, c, acc), (Some(0), Some(0), Some(0)));
    assert_eq!(
        kind,
        ImportErrorKind::InvalidTrack(TrackError::TimesNotIncreasing {
            key: 2,
            previous: 1.0,
            time: 1.0
        })
    );
    // Negative times (glTF requires time[0] >= 0).
    let mut b = Builder::new();
    b.node(None);
    b.accessor_f32(&[-0.5, 1.0], "SCALAR");
    b.accessor_f32(&[0.0; 6], "VEC3");
    b.animation("t", &[(0, 1, "LINEAR")], &[(0, 0, "translation")]);
    let (_, _, acc, kind) = import_error(try_json(&b.json(None), &b));
    assert_eq!(acc, Some(0));
    assert_eq!(kind, ImportErrorKind::NegativeTime { key: 0, time: -0.5 });
    // NaN values name the output accessor.
    let mut b = Builder::new();
    b.node(None);
    b.accessor_f32(&[0.0, 1.0], "SCALAR");
    b.accessor_f32(&[0.0, 0.0, 0.0, 0.0, f32::NAN, 0.0], "VEC3");
    b.animation("t", &[(0, 1, "LINEAR")], &[(0, 0, "translation")]);
    let (_, _, acc, kind) = import_error(try_json(&b.json(None), &b));
    assert_eq!(acc, Some(1));
    assert!(
        matches!(
            kind,
            ImportErrorKind::InvalidTrack(TrackError::ValueNotFinite {
                key: 1,
                component: 1,
                ..
            })
        ),
        "{kind:?}"
    );
    // CUBICSPLINE with one key.
    let mut b = Builder::new();
    b.node(None);
    b.accessor_f32(&[0.0], "SCALAR");
    b.accessor_f32(&[0.0; 9], "VEC3");
    b.animation("t", &[(0, 1, "CUBICSPLINE")], &[(0, 0, "translation")]);
    let (_, _, acc, kind) = import_error(try_json(&b.json(None), &b));
    assert_eq!(acc, Some(0));
    assert_eq!(
        kind,
        ImportErrorKind::InvalidTrack(TrackError::CubicSplineTooFewKeys { keys: 1 })
    );
}

#[test]
fn sparse_errors() {
    let mut b = base();
    let idx = b.view(&u16_bytes(&[1, 1]), None);
    let val = b.view(&f32_bytes(&[0.0; 6]), None);
    let mut j = b.json(None);
    let sparse = |count: u64, idx_ct: u32| {
        json!({"count": count, "indices": {"bufferView": idx, "componentType": idx_ct},
               "values": {"bufferView": val}})
    };
    // Indices not strictly increasing.
    j["accessors"][1]["sparse"] = sparse(2, UNSIGNED_SHORT);
    let (_, _, acc, kind) = import_error(try_json(&j, &b));
    assert_eq!(acc, Some(1));
    assert!(matches!(kind, ImportErrorKind::Sparse(_)), "{kind:?}");
    // More entries than elements.
    j["accessors"][1]["sparse"] = sparse(3, UNSIGNED_SHORT);
    assert!(matches!(
        import_error(try_json(&j, &b)).3,
        ImportErrorKind::Sparse(_)
    ));
    // Index past the accessor's count (u16 index 1 read as u32 = 65537).
    j["accessors"][1]["sparse"] = sparse(1, UNSIGNED_INT);
    assert!(matches!(
        import_error(try_json(&j, &b)).3,
        ImportErrorKind::Sparse(_)
    ));
    // Indices of a non-index component type.
    j["accessors"][1]["sparse"] = sparse(1, FLOAT);
    assert!(matches!(
        import_error(try_json(&j, &b)).3,
        ImportErrorKind::BadComponentType { .. }
    ));
}

#[test]
fn unsupported_required_extension() {
    let mut b = base();
    b.extensions_required.push("EXT_unheard_of".into());
    let (_, _, _, kind) = import_error(gltf::from_slice(&b.to_glb(), None));
    assert_eq!(
        kind,
        ImportErrorKind::UnsupportedExtension("EXT_unheard_of".into())
    );
}

#[test]
fn bad_uris_and_missing_files() {
    let b = base();
    let bytes = |uri: &str| serde_json::to_vec(&b.json(Some(uri.into()))).unwrap();
    let (_, _, _, kind) = import_error(gltf::from_slice(
        &bytes("data:application/octet-stream;base64,AA*A"),
        None,
    ));
    assert!(
        matches!(kind, ImportErrorKind::BadUri { buffer: 0, .. }),
        "{kind:?}"
    );
    let (_, _, _, kind) = import_error(gltf::from_slice(
        &bytes("data:application/octet-stream,plain"),
        None,
    ));
    assert!(
        matches!(kind, ImportErrorKind::BadUri { buffer: 0, .. }),
        "{kind:?}"
    );
    let (_, _, _, kind) = import_error(gltf::from_slice(&bytes("http://example.com/a.bin"), None));
    assert!(matches!(kind, ImportErrorKind::BadUri { .. }), "{kind:?}");
    let (_, _, _, kind) = import_error(gltf::from_slice(
        &bytes("/etc/passwd"),
        Some(std::path::Path::new(".")),
    ));
    assert!(
        matches!(
            kind,
            ImportErrorKind::UnsafeUri {
                buffer: 0,
                why: gltf::UriEscape::Absolute,
                ..
            }
        ),
        "{kind:?}"
    );
    let dir = temp_dir("missing");
    let (_, _, _, kind) = import_error(gltf::from_slice(&bytes("nowhere.bin"), Some(&dir)));
    assert!(matches!(kind, ImportErrorKind::Io { .. }), "{kind:?}");
    let (_, _, _, kind) = import_error(gltf::load(dir.join("absent.gltf")));
    assert!(matches!(kind, ImportErrorKind::Io { .. }), "{kind:?}");
    // A buffer without uri in a .gltf has no data.
    let (_, _, _, kind) = import_error(gltf::from_slice(
        &serde_json::to_vec(&b.json(None)).unwrap(),
        None,
    ));
    assert_eq!(kind, ImportErrorKind::MissingBuffer { buffer: 0 });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn broken_containers_and_json() {
    let b = base();
    let glb = b.to_glb();
    for cut in [3, 11, 12, 19, 40, glb.len() - 1] {
        let (_, _, _, kind) = import_error(gltf::from_slice(&glb[..cut], None));
        assert!(
            matches!(kind, ImportErrorKind::Glb(_) | ImportErrorKind::Json(_)),
            "cut {cut}: {kind:?}"
        );
    }
    // A chunk length past the end.
    let mut bad = glb.clone();
    bad[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(
        import_error(gltf::from_slice(&bad, None)).3,
        ImportErrorKind::Glb(_)
    ));
    // Version 1.
    let mut bad = glb.clone();
    bad[4] = 1;
    assert!(matches!(
        import_error(gltf::from_slice(&bad, None)).3,
        ImportErrorKind::Glb(_)
    ));
    for text in [&b"{"[..], b"[]", b"{\"asset\": 5}", b"", b"\xff\xfe"] {
        let (_, _, _, kind) = import_error(gltf::from_slice(text, None));
        assert!(matches!(kind, ImportErrorKind::Json(_)), "{kind:?}");
    }
    // Valid glTF without animations.
    let mut j = b.json(None);
    j["animations"] = json!([]);
    assert_eq!(
        import_error(try_json(&j, &b)).3,
        ImportErrorKind::NoAnimations
    );
}

#[test]
fn many_channels_sharing_a_large_output_are_refused() {
    // 100,000 rotation keys (1.6 MB) shared by 90 channels would decode to
    // 36 million floats, past the importer's limit of 2^24.
    let mut b = Builder::new();
    let n = b.node(None);
    let times: Vec<f32> = (0..100_000).map(|i| i as f32).collect();
    let input = b.accessor_f32(&times, "SCALAR");
    let q: Vec<f32> = (0..400_000)
        .map(|i| if i % 4 == 3 { 1.0 } else { 0.0 })
        .collect();
    let out = b.accessor_f32(&q, "VEC4");
    let channels: Vec<(usize, usize, &str)> = (0..90).map(|_| (0, n, "rotation")).collect();
    b.animation("big", &[(input, out, "LINEAR")], &channels);
    let (a, c, acc, kind) = import_error(gltf::from_slice(&b.to_glb(), None));
    assert_eq!((a, acc), (Some(0), Some(out)));
    // 41 channels of 400,000 floats fit in 2^24 = 16,777,216; the 42nd does not.
    assert_eq!(c, Some(41));
    assert_eq!(
        kind,
        ImportErrorKind::TooLarge {
            what: "key values of all channels",
            count: 42 * 400_000,
            limit: 1 << 24
        }
    );
    // Fewer channels load.
    let mut b2 = b.clone();
    b2.animations[0]["channels"] = json!(b.animations[0]["channels"].as_array().unwrap()[..10]);
    assert_eq!(load(&b2.to_glb()).library.clips()[0].tracks.len(), 10);
}
