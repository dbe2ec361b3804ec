//! `sample FILE --json` on files with `KHR_animation_pointer` channels:
//! pointer channels reported by their pointer in the
//! order of the animation's `channels`, mixed with core channels that keep
//! their schema, on the GPU and the CPU; `--plot` draws them; every
//! refused pointer ends with exit code 2 and one line on stderr.
#![cfg(feature = "gltf")]

#[path = "common/gltf_builder.rs"]
mod gltf_builder;
#[path = "common/sample_cli.rs"]
mod sample_cli;

use gltf_builder::*;
use sample_cli::{gpu_ran, run, stderr, stdout};
use serde_json::{json, Value};

const BASE: &str = "/materials/0/pbrMetallicRoughness/baseColorFactor";
const VISIBLE: &str = "/nodes/0/extensions/KHR_node_visibility/visible";
const OFFSET: &str =
    "/materials/0/pbrMetallicRoughness/baseColorTexture/extensions/KHR_texture_transform/offset";

fn pointer_channel(sampler: usize, pointer: &str) -> Value {
    json!({"sampler": sampler, "target": {"path": "pointer",
        "extensions": {"KHR_animation_pointer": {"pointer": pointer}}}})
}

/// Channels: base colour (LINEAR, keys 0 and 2), node 1 translation
/// (core, LINEAR, keys 0 and 1), visibility (STEP bool, keys 0 and 1),
/// texture offset (LINEAR), node 1 rotation through a pointer (LINEAR).
/// `pointer` replaces the base colour's pointer (for the refusals).
fn file(test: &str, pointer: &str, edit: impl FnOnce(&mut Value)) -> std::path::PathBuf {
    let mut b = Builder::new();
    b.node(None);
    b.node(None);
    let k2 = b.accessor_f32(&[0.0, 2.0], "SCALAR");
    let k1 = b.accessor_f32(&[0.0, 1.0], "SCALAR");
    let colour = b.accessor_f32(&[1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.5, 1.0], "VEC4");
    let tr = b.accessor_f32(&[0.0, 0.0, 0.0, 2.0, 4.0, 6.0], "VEC3");
    let vis = b.accessor_raw(&[1, 0], UNSIGNED_BYTE, false, 2, "SCALAR");
    let off = b.accessor_f32(&[0.0, 0.0, 1.0, -2.0], "VEC2");
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let rot = b.accessor_f32(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, h, h], "VEC4");
    let uri = format!("data:application/octet-stream;base64,{}", base64(&b.bin));
    let mut v = b.json(Some(uri));
    v["nodes"][0]["extensions"] = json!({"KHR_node_visibility": {"visible": true}});
    v["materials"] = json!([{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0,
        "extensions": {"KHR_texture_transform": {}}}}}]);
    v["textures"] = json!([{"source": 0}]);
    v["images"] = json!([{"uri": "unused.png"}]);
    v["extensionsUsed"] = json!([
        "KHR_animation_pointer",
        "KHR_node_visibility",
        "KHR_texture_transform"
    ]);
    v["animations"] = json!([{"samplers": [
        {"input": k2, "output": colour, "interpolation": "LINEAR"},
        {"input": k1, "output": tr, "interpolation": "LINEAR"},
        {"input": k1, "output": vis, "interpolation": "STEP"},
        {"input": k1, "output": off, "interpolation": "LINEAR"},
        {"input": k1, "output": rot, "interpolation": "LINEAR"}
    ], "channels": [
        pointer_channel(0, pointer),
        {"sampler": 1, "target": {"node": 1, "path": "translation"}},
        pointer_channel(2, VISIBLE),
        pointer_channel(3, OFFSET),
        pointer_channel(4, "/nodes/1/rotation")
    ]}]);
    edit(&mut v);
    let dir = temp_dir(test);
    let path = dir.join("pointers.gltf");
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    path
}

/// The channels of the one sample of a `--json` line.
fn channels(line: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(line).unwrap();
    let samples = v["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 1);
    samples[0]["channels"].as_array().unwrap().clone()
}

fn close(got: &Value, want: &[f64], tol: f64) -> bool {
    let got = got.as_array().unwrap();
    got.len() == want.len()
        && got
            .iter()
            .zip(want)
            .all(|(g, w)| (g.as_f64().unwrap() - w).abs() <= tol)
}

#[test]
fn json_reports_pointer_channels_in_channel_order() {
    let path = file("cli_pointer_json", BASE, |_| {});
    let p = path.to_str().unwrap();
    for backend in ["cpu", "gpu"] {
        let o = run(&[p, "--json", "--times", "0.5", "--backend", backend]);
        if backend == "gpu" && !gpu_ran("json_reports_pointer_channels_in_channel_order", &o) {
            continue;
        }
        assert!(o.status.success(), "{backend}: {}", stderr(&o));
        let lines: Vec<String> = stdout(&o).lines().map(String::from).collect();
        assert_eq!(lines.len(), 1);
        let ch = channels(&lines[0]);
        assert_eq!(ch.len(), 5);
        // Pointer channels have exactly "pointer" and "value"; core ones
        // keep "node", "path" and "value".
        let keys = |c: &Value| {
            let mut k: Vec<String> = c.as_object().unwrap().keys().cloned().collect();
            k.sort();
            k
        };
        assert_eq!(keys(&ch[0]), ["pointer", "value"]);
        assert_eq!(keys(&ch[1]), ["node", "path", "value"]);
        assert_eq!(ch[0]["pointer"], BASE);
        assert_eq!(
            (ch[1]["node"].as_u64(), ch[1]["path"].as_str()),
            (Some(1), Some("translation"))
        );
        assert_eq!(ch[2]["pointer"], VISIBLE);
        assert_eq!(ch[3]["pointer"], OFFSET);
        assert_eq!(ch[4]["pointer"], "/nodes/1/rotation");
        // By hand: colour at t = 0.25 of [0, 2]: 0.75 [1, 0, 0, 1] +
        // 0.25 [0, 1, 0.5, 1]; translation at 0.5: [1, 2, 3]; visibility
        // key 0 (true, STEP) printed as [1]; offset at 0.5: [0.5, -1];
        // rotation halfway to 90 degrees about z: 45 degrees.
        assert!(
            close(&ch[0]["value"], &[0.75, 0.25, 0.125, 1.0], 1e-6),
            "{backend}: {}",
            ch[0]
        );
        assert!(close(&ch[1]["value"], &[1.0, 2.0, 3.0], 1e-6), "{}", ch[1]);
        assert_eq!(ch[2]["value"], json!([1]), "{backend}");
        assert!(close(&ch[3]["value"], &[0.5, -1.0], 1e-6), "{}", ch[3]);
        let (s, c) = (
            (std::f64::consts::PI / 8.0).sin(),
            (std::f64::consts::PI / 8.0).cos(),
        );
        assert!(close(&ch[4]["value"], &[0.0, 0.0, s, c], 2e-5), "{}", ch[4]);
    }
    // After the visibility key at 1: false, printed [0].
    let o = run(&[p, "--json", "--times", "1.5", "--backend", "cpu"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ch = channels(stdout(&o).trim());
    assert_eq!(ch[2]["value"], json!([0]));
    assert!(
        close(&ch[0]["value"], &[0.25, 0.75, 0.375, 1.0], 1e-6),
        "{}",
        ch[0]
    );
}

#[test]
fn plot_and_table_draw_pointer_channels() {
    let path = file("cli_pointer_plot", BASE, |_| {});
    let png = path.with_file_name("plot.png");
    let o = run(&[
        path.to_str().unwrap(),
        "--backend",
        "cpu",
        "--plot",
        png.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains(BASE), "{}", stdout(&o));
    assert!(std::fs::metadata(&png).unwrap().len() > 1000);
}

#[test]
fn refused_pointers_exit_2_with_one_line() {
    type Edit = Box<dyn FnOnce(&mut Value)>;
    let cases: Vec<(&str, Edit)> = vec![
        ("/materials/3/emissiveFactor", Box::new(|_| {})),
        ("materials/0/emissiveFactor", Box::new(|_| {})),
        ("/materials/0/emissive~7Factor", Box::new(|_| {})),
        ("/materials/0/emissiveFactor/1", Box::new(|_| {})),
        (
            "/materials/0/extensions/KHR_materials_ior/ior",
            Box::new(|_| {}),
        ),
        ("/cameras/0/perspective/zfar", Box::new(|_| {})),
        // A float3 target read from a VEC4 accessor.
        ("/materials/0/emissiveFactor", Box::new(|_| {})),
        // LINEAR on a bool.
        (
            VISIBLE,
            Box::new(|v| v["animations"][0]["samplers"][0]["output"] = json!(4)),
        ),
        // Twice the same property (channel 2 is visibility already).
        (
            VISIBLE,
            Box::new(|v| {
                v["animations"][0]["samplers"][0] =
                    json!({"input": 1, "output": 4, "interpolation": "STEP"});
            }),
        ),
        // Pointer and core channel on node 1's translation.
        (
            "/nodes/1/translation",
            Box::new(|v| v["animations"][0]["samplers"][0]["output"] = json!(3)),
        ),
        // target.node set on a pointer channel.
        (
            BASE,
            Box::new(|v| v["animations"][0]["channels"][0]["target"]["node"] = json!(0)),
        ),
        // path "pointer" without the extension object.
        (
            BASE,
            Box::new(|v| {
                v["animations"][0]["channels"][0]["target"]
                    .as_object_mut()
                    .unwrap()
                    .remove("extensions");
            }),
        ),
    ];
    for (i, (pointer, edit)) in cases.into_iter().enumerate() {
        let path = file(&format!("cli_pointer_refused_{i}"), pointer, edit);
        let o = run(&[path.to_str().unwrap(), "--json", "--backend", "cpu"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{pointer}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{pointer}: {err}");
        assert!(
            err.contains("animation 0") && err.contains("channel"),
            "{pointer}: {err}"
        );
        assert!(!err.contains("internal error"), "{err}");
        assert!(stdout(&o).is_empty());
    }
}
