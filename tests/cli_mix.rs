//! `sample FILE --mix MIX.json`: blended local poses as JSON, checked
//! against values worked out by hand from the mixer's rules for a file
//! built here; GPU against CPU (`--compare`, and the two `--json`
//! outputs); `--joints`; and hostile MIX.json files, each refused with
//! exit 2 and one line naming the sample, the action and the field.
#![cfg(feature = "gltf")]

#[path = "common/gltf_builder.rs"]
mod gltf_builder;
#[path = "common/sample_cli.rs"]
mod sample_cli;

use std::path::{Path, PathBuf};

use gltf_builder::*;
use sample_cli::{gpu_ran, run, stderr, stdout};
use serde_json::{json, Value};

/// Three nodes in a chain: 0 (rest translation (1, 0, 0)) -> 1 (a mesh of
/// two morph targets, weights (0.1, 0.2)) -> 2. Animations, keys at 0 and
/// 1 s, LINEAR: 0 moves node 0 from (0, 0, 0) to (10, 0, 0) and node 1's
/// weights from (1, 0) to (0, 1); 1 moves node 0 from (0, 4, 0) to
/// (0, 8, 0) and turns node 2 from identity to 90 degrees about z; 2 moves
/// node 0 from (0, 0, 0) to (0, 1, 0).
fn asset(dir: &Path) -> PathBuf {
    let mut b = Builder::new();
    let mesh = b.mesh_with_targets(2);
    b.meshes[mesh]["weights"] = json!([0.1, 0.2]);
    let n0 = b.node(None);
    let n1 = b.node(Some(mesh));
    let n2 = b.node(None);
    b.nodes[n0]["translation"] = json!([1.0, 0.0, 0.0]);
    b.nodes[n0]["children"] = json!([n1]);
    b.nodes[n1]["children"] = json!([n2]);
    let times = b.accessor_f32(&[0.0, 1.0], "SCALAR");
    let t0 = b.accessor_f32(&[0.0, 0.0, 0.0, 10.0, 0.0, 0.0], "VEC3");
    let w0 = b.accessor_f32(&[1.0, 0.0, 0.0, 1.0], "SCALAR");
    b.animation(
        "walk",
        &[(times, t0, "LINEAR"), (times, w0, "LINEAR")],
        &[(0, n0, "translation"), (1, n1, "weights")],
    );
    let t1 = b.accessor_f32(&[0.0, 4.0, 0.0, 0.0, 8.0, 0.0], "VEC3");
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let r1 = b.accessor_f32(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, h, h], "VEC4");
    b.animation(
        "run",
        &[(times, t1, "LINEAR"), (times, r1, "LINEAR")],
        &[(0, n0, "translation"), (1, n2, "rotation")],
    );
    let t2 = b.accessor_f32(&[0.0, 0.0, 0.0, 0.0, 1.0, 0.0], "VEC3");
    b.animation(
        "breathe",
        &[(times, t2, "LINEAR")],
        &[(0, n0, "translation")],
    );
    // The scene lists roots only.
    let mut root = b.json(None);
    root["scenes"] = json!([{"nodes": [n0]}]);
    let path = dir.join("mix.glb");
    std::fs::write(
        &path,
        glb(&serde_json::to_vec(&root).unwrap(), Some(&b.bin)),
    )
    .unwrap();
    path
}

fn write_mix(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec(v).unwrap()).unwrap();
    p
}

fn the_mix() -> Value {
    json!({
        "masks": [{"default": 1.0, "nodes": {"0": 0.0}}],
        "samples": [
            // walk 0.3 + run 0.2 at 1 s: W = 0.5, mixed with the rest.
            {"actions": [
                {"animation": 0, "time": 1.0, "weight": 0.3},
                {"animation": 1, "time": 1.0, "weight": 0.2}
            ]},
            // walk at 0.5 s plus breathe added at 3 s ping-ponged (1 s)
            // against 0 s.
            {"actions": [
                {"animation": 0, "time": 0.5, "weight": 1.0},
                {"animation": 2, "time": 3.0, "weight": 1.0, "additive": true,
                 "reference_time": 0.0, "wrap": "pingpong"}
            ]},
            // run through a mask that leaves node 0 out, clamped past the end.
            {"actions": [{"animation": 1, "time": 2.0, "weight": 1.0, "mask": 0}]}
        ]
    })
}

fn close(label: &str, got: &Value, want: &[f64]) {
    let got: Vec<f64> = got
        .as_array()
        .unwrap_or_else(|| panic!("{label}: {got}"))
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(got.len(), want.len(), "{label}: {got:?}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-5, "{label}: got {got:?}, want {want:?}");
    }
}

#[test]
fn mix_json_matches_the_rules_by_hand_on_both_backends() {
    let dir = temp_dir("cli_mix");
    let file = asset(&dir);
    let mix = write_mix(&dir, "mix.json", &the_mix());
    let (f, m) = (file.to_str().unwrap(), mix.to_str().unwrap());
    let s18 = 18f64.to_radians() / 2.0;
    let s45 = 45f64.to_radians();
    for backend in ["cpu", "gpu"] {
        let o = run(&[f, "--mix", m, "--json", "--backend", backend]);
        if !gpu_ran("mix_json_matches_the_rules_by_hand_on_both_backends", &o) {
            continue;
        }
        assert!(o.status.success(), "{backend}: {}", stderr(&o));
        let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
        assert_eq!(v["backend"], backend);
        assert_eq!(v["file"], "mix.glb");
        let samples = v["samples"].as_array().unwrap();
        assert_eq!(samples.len(), 3);
        let node = |s: usize, n: usize| &samples[s]["nodes"][n];
        for sample in samples {
            let nodes = sample["nodes"].as_array().unwrap();
            assert_eq!(nodes.len(), 3);
            for (n, nv) in nodes.iter().enumerate() {
                assert_eq!(nv["node"], n);
                // Only the mesh node carries weights.
                assert_eq!(nv.get("weights").is_some(), n == 1, "{nv}");
            }
        }
        // Sample 0, node 0: (10,0,0) * 0.6 + (0,8,0) * 0.4 = (6, 3.2, 0),
        // W = 0.5, then mixed with the rest (1,0,0) at 0.5: (3.5, 1.6, 0).
        close("s0 n0 t", &node(0, 0)["translation"], &[3.5, 1.6, 0.0]);
        // Node 1's weights: walk's (0, 1) at W = 0.3, mixed with the
        // defaults (0.1, 0.2) at 0.7: (0.07, 0.44).
        close("s0 n1 w", &node(0, 1)["weights"], &[0.07, 0.44]);
        // Node 2: run's 90 degrees at W = 0.2, slerped to the rest
        // (identity) at 0.8: 18 degrees about z.
        close(
            "s0 n2 r",
            &node(0, 2)["rotation"],
            &[0.0, 0.0, s18.sin(), s18.cos()],
        );
        // Sample 1: walk at 0.5 s (5, 0, 0) plus breathe's delta between
        // 1 s (3 s ping-ponged) and 0 s, (0, 1, 0): (5, 1, 0).
        close("s1 n0 t", &node(1, 0)["translation"], &[5.0, 1.0, 0.0]);
        close("s1 n1 w", &node(1, 1)["weights"], &[0.5, 0.5]);
        // Node 2: no action animates it: the rest.
        close("s1 n2 r", &node(1, 2)["rotation"], &[0.0, 0.0, 0.0, 1.0]);
        // Sample 2: the mask leaves node 0 at rest, node 2 gets run's end.
        close("s2 n0 t", &node(2, 0)["translation"], &[1.0, 0.0, 0.0]);
        close(
            "s2 n2 r",
            &node(2, 2)["rotation"],
            &[0.0, 0.0, s45.sin(), s45.cos()],
        );
        close("s2 n1 w", &node(2, 1)["weights"], &[0.1, 0.2]);
    }
}

#[test]
fn additive_delta_and_compare() {
    let dir = temp_dir("cli_mix_add");
    let file = asset(&dir);
    // breathe at 0.5 s (ping-pong from 2.5 s) against 0 s, weight 2, over
    // run at 0 s: (0, 4, 0) + 2 * (0, 0.5, 0) = (0, 5, 0).
    let mix = write_mix(
        &dir,
        "add.json",
        &json!({"samples": [{"actions": [
            {"animation": 1, "time": 0.0, "weight": 1.0},
            {"animation": 2, "time": 2.5, "weight": 2.0, "additive": true, "wrap": "pingpong"}
        ]}]}),
    );
    let (f, m) = (file.to_str().unwrap(), mix.to_str().unwrap());
    let o = run(&[f, "--mix", m, "--json", "--backend", "cpu"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    close(
        "t",
        &v["samples"][0]["nodes"][0]["translation"],
        &[0.0, 5.0, 0.0],
    );
    // GPU against CPU: the local poses and, with --joints on a file without
    // skins, a one-line refusal.
    let o = run(&[f, "--mix", m, "--compare"]);
    if gpu_ran("additive_delta_and_compare", &o) {
        assert!(o.status.success(), "{}", stdout(&o));
        assert!(stdout(&o).contains(": ok"), "{}", stdout(&o));
    }
    let o = run(&[f, "--mix", m, "--joints", "--backend", "cpu"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no skins"), "{}", stderr(&o));
}

#[test]
fn override_mode_replaces_the_pose_under_it_by_hand() {
    let dir = temp_dir("cli_mix_override");
    let file = asset(&dir);
    let mix = write_mix(
        &dir,
        "over.json",
        &json!({"masks": [{"default": 1.0, "nodes": {"0": 0.0}}], "samples": [
            {"actions": [
                {"animation": 0, "time": 1.0, "weight": 1.0},
                {"animation": 1, "time": 1.0, "weight": 0.25, "mode": "override"}]},
            {"actions": [
                {"animation": 0, "time": 1.0, "weight": 1.0, "mode": "mix"},
                {"animation": 1, "time": 1.0, "weight": 1.0, "mode": "override", "mask": 0}]}
        ]}),
    );
    let (f, m) = (file.to_str().unwrap(), mix.to_str().unwrap());
    let s225 = 22.5f64.to_radians() / 2.0;
    let s45 = 45f64.to_radians();
    for backend in ["cpu", "gpu"] {
        let o = run(&[f, "--mix", m, "--json", "--backend", backend]);
        if !gpu_ran("override_mode_replaces_the_pose_under_it_by_hand", &o) {
            continue;
        }
        assert!(o.status.success(), "{backend}: {}", stderr(&o));
        let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
        let node = |s: usize, n: usize| &v["samples"][s]["nodes"][n];
        // Sample 0: walk's (10, 0, 0) overridden by run's (0, 8, 0) at
        // 0.25: (7.5, 2, 0); run has no weights: walk's (0, 1); node 2,
        // which walk leaves at rest, turned a quarter of run's 90 degrees.
        close("s0 n0 t", &node(0, 0)["translation"], &[7.5, 2.0, 0.0]);
        close("s0 n1 w", &node(0, 1)["weights"], &[0.0, 1.0]);
        close(
            "s0 n2 r",
            &node(0, 2)["rotation"],
            &[0.0, 0.0, s225.sin(), s225.cos()],
        );
        // Sample 1: at weight 1 through a mask without node 0: walk's
        // place there, run's 90 degrees on node 2.
        close("s1 n0 t", &node(1, 0)["translation"], &[10.0, 0.0, 0.0]);
        close(
            "s1 n2 r",
            &node(1, 2)["rotation"],
            &[0.0, 0.0, s45.sin(), s45.cos()],
        );
    }
}

#[test]
fn hostile_mix_files_exit_2_with_one_line() {
    let dir = temp_dir("cli_mix_hostile");
    let file = asset(&dir);
    let f = file.to_str().unwrap();
    let act = |extra: Value| {
        let mut a = json!({"animation": 0, "time": 0.5, "weight": 1.0});
        for (k, v) in extra.as_object().unwrap() {
            a[k] = v.clone();
        }
        json!({"masks": [{"nodes": {"1": 1.0}}], "samples": [
            {"actions": [{"animation": 1, "time": 0.0, "weight": 0.5}]},
            {"actions": [{"animation": 1, "time": 0.0, "weight": 0.5}, a]}
        ]})
    };
    let cases: Vec<(&str, String, &[&str])> = vec![
        ("not json", "{\"samples\": [".into(), &["not valid JSON"]),
        ("no samples", "{}".into(), &["\"samples\""]),
        ("unknown animation", act(json!({"animation": 7})).to_string(), &["sample 1, action 1", "\"animation\" 7"]),
        ("negative animation", act(json!({"animation": -1})).to_string(), &["sample 1, action 1", "\"animation\""]),
        ("unknown mask", act(json!({"mask": 1})).to_string(), &["sample 1, action 1", "\"mask\" 1"]),
        ("negative weight", act(json!({"weight": -0.5})).to_string(), &["sample 1, action 1", "\"weight\""]),
        ("weight a string", act(json!({"weight": "NaN"})).to_string(), &["sample 1, action 1", "\"weight\""]),
        ("weight huge", act(json!({"weight": 1e300})).to_string(), &["sample 1, action 1", "\"weight\""]),
        ("time missing", act(json!({"time": null})).to_string(), &["sample 1, action 1", "\"time\""]),
        ("time a string", act(json!({"time": "later"})).to_string(), &["sample 1, action 1", "\"time\""]),
        ("bad wrap", act(json!({"wrap": "loop"})).to_string(), &["sample 1, action 1", "\"wrap\""]),
        ("additive not a bool", act(json!({"additive": 1})).to_string(), &["sample 1, action 1", "\"additive\""]),
        ("reference time a string", act(json!({"additive": true, "reference_time": "x"})).to_string(), &["sample 1, action 1", "\"reference_time\""]),
        ("unknown mode", act(json!({"mode": "blend"})).to_string(), &["sample 1, action 1", "\"mode\""]),
        ("mode and additive", act(json!({"mode": "additive", "additive": true})).to_string(), &["sample 1, action 1", "\"mode\" or \"additive\""]),
        ("override with a reference", act(json!({"mode": "override", "reference_time": 0.0})).to_string(), &["sample 1, action 1", "\"reference_time\""]),
        ("mask node out of range", json!({"masks": [{"nodes": {"3": 1.0}}], "samples": []}).to_string(), &["mask 0", "node 3"]),
        ("mask node not a number", json!({"masks": [{"nodes": {"x": 1.0}}], "samples": []}).to_string(), &["mask 0", "\"x\""]),
        ("mask factor above 1", json!({"masks": [{"nodes": {"1": 1.5}}], "samples": []}).to_string(), &["mask 0", "1.5"]),
        ("mask default negative", json!({"masks": [{"default": -1}], "samples": []}).to_string(), &["mask 0", "default"]),
        ("actions not an array", json!({"samples": [{"actions": 3}]}).to_string(), &["sample 0", "\"actions\""]),
        ("too many actions", json!({"samples": [{"actions": vec![json!({"animation": 0, "time": 0.0, "weight": 1.0}); 17]}]}).to_string(), &["sample 0", "17 actions"]),
    ];
    for (name, text, needles) in cases {
        let p = dir.join(format!("{}.json", name.replace(' ', "_")));
        std::fs::write(&p, &text).unwrap();
        for backend in ["cpu", "gpu"] {
            let o = run(&[
                f,
                "--mix",
                p.to_str().unwrap(),
                "--json",
                "--backend",
                backend,
            ]);
            assert_eq!(
                o.status.code(),
                Some(2),
                "{name} ({backend}): {}",
                stdout(&o)
            );
            let err = stderr(&o);
            assert_eq!(err.trim_end().lines().count(), 1, "{name}: {err}");
            assert!(
                !err.contains("panicked") && !err.contains("internal error"),
                "{name}: {err}"
            );
            for n in needles {
                assert!(err.contains(n), "{name}: {err:?} lacks {n:?}");
            }
            assert!(stdout(&o).is_empty(), "{name}: printed {}", stdout(&o));
        }
    }
    // Options that MIX.json overrides are refused, not ignored.
    let good = dir.join("good.json");
    std::fs::write(&good, the_mix().to_string()).unwrap();
    for extra in [["--times", "0.5"], ["--animation", "1"]] {
        let o = run(&[f, "--mix", good.to_str().unwrap(), extra[0], extra[1]]);
        assert_eq!(o.status.code(), Some(2), "{extra:?}");
        assert!(
            stderr(&o).contains("cannot be combined with --mix"),
            "{}",
            stderr(&o)
        );
    }
    // A missing file and --mix without FILE.
    let o = run(&[f, "--mix", dir.join("absent.json").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["--mix", "x.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("needs a FILE"), "{}", stderr(&o));
}
