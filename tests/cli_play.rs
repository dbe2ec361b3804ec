//! `sample FILE --play PLAY.json`: the playback layer driven by a script
//! on a file built here with a known root displacement and markers:
//! crossfade weights and clip times frame by frame against the linear
//! ramp, root motion summed over loops against the clip's displacement,
//! events against the markers crossed, `--joints` on the GPU against the
//! CPU twin, and bad PLAY files refused with exit 2 and one line.
#![cfg(feature = "gltf")]

#[path = "common/gltf_builder.rs"]
mod gltf_builder;
#[path = "common/sample_cli.rs"]
mod sample_cli;

use std::path::{Path, PathBuf};

use gltf_builder::*;
use sample_cli::{gpu_ran, run, stderr, stdout};
use serde_json::{json, Value};

/// Nodes "hips" (a root) -> "spine" -> a skinned mesh node; animations
/// over [0, 1] s, LINEAR: 0 "walk" moves the hips from (0,0,0) to
/// (2,0,0) and bends the spine; 1 "run" moves the hips from (0,0,0) to
/// (0,0,4).
fn asset(dir: &Path) -> PathBuf {
    let mut b = Builder::new();
    let mesh = b.mesh_with_targets(0);
    let hips = b.node(None);
    let spine = b.node(None);
    let body = b.node(Some(mesh));
    b.nodes[hips]["name"] = json!("hips");
    b.nodes[spine]["name"] = json!("spine");
    b.nodes[hips]["children"] = json!([spine]);
    b.nodes[spine]["translation"] = json!([0.0, 1.0, 0.0]);
    let ibm = b.accessor_f32(
        &[
            [
                1.0f32, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
            ],
            [
                1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, -1.0, 0.0, 1.0,
            ],
        ]
        .concat(),
        "MAT4",
    );
    b.skins
        .push(json!({"joints": [hips, spine], "inverseBindMatrices": ibm}));
    b.nodes[body]["skin"] = json!(0);
    let times = b.accessor_f32(&[0.0, 1.0], "SCALAR");
    let walk = b.accessor_f32(&[0.0, 0.0, 0.0, 2.0, 0.0, 0.0], "VEC3");
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let bend = b.accessor_f32(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, h, h], "VEC4");
    b.animation(
        "walk",
        &[(times, walk, "LINEAR"), (times, bend, "LINEAR")],
        &[(0, hips, "translation"), (1, spine, "rotation")],
    );
    let run = b.accessor_f32(&[0.0, 0.0, 0.0, 0.0, 0.0, 4.0], "VEC3");
    b.animation(
        "run",
        &[(times, run, "LINEAR")],
        &[(0, hips, "translation")],
    );
    let mut root = b.json(None);
    root["scenes"] = json!([{"nodes": [hips, body]}]);
    let path = dir.join("play.glb");
    std::fs::write(
        &path,
        glb(&serde_json::to_vec(&root).unwrap(), Some(&b.bin)),
    )
    .unwrap();
    path
}

fn write(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec(v).unwrap()).unwrap();
    p
}

fn frames(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn a_script_plays_crossfades_moves_the_root_and_crosses_markers() {
    let dir = temp_dir("cli_play_script");
    let file = asset(&dir);
    // Character 0 walks (repeat) and crossfades to run at frame 4 over
    // 0.2 s; character 1 walks backwards. dt 0.1 throughout, 12 frames.
    let mut frames_json = vec![json!({"dt": 0.1, "commands": [
        {"instance": 0, "play": 0, "wrap": "repeat"},
        {"instance": 1, "play": 0, "wrap": "repeat", "speed": -1}
    ]})];
    for k in 1..12 {
        if k == 4 {
            frames_json.push(json!({"dt": 0.1, "commands": [
                {"instance": 0, "crossfade": {"to": 1, "duration": 0.2}}]}));
        } else {
            frames_json.push(json!({"dt": 0.1}));
        }
    }
    let play = write(
        &dir,
        "play.json",
        &json!({"instances": 2, "root": "hips",
                "markers": [{"animation": 0, "time": 0.25, "name": "left"},
                            {"animation": 0, "time": 0.75, "name": "right"}],
                "frames": frames_json}),
    );
    let o = run(&[file.to_str().unwrap(), "--play", play.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let fr = frames(&stdout(&o));
    assert_eq!(fr.len(), 12);
    // Frames 0-3: character 0 walks alone at clip time 0.1 (k + 1), the
    // root moving 0.2 along x per frame; the left marker at frame 2
    // (0.2 -> 0.3).
    for (k, frame) in fr.iter().enumerate().take(4) {
        let c0 = &frame["instances"][0];
        assert_eq!(c0["actions"].as_array().unwrap().len(), 1);
        assert!((f(&c0["actions"][0]["time"]) - 0.1 * (k + 1) as f64).abs() < 1e-6);
        assert!((f(&c0["root_motion"]["translation"][0]) - 0.2).abs() < 1e-5);
        let names: Vec<&str> = c0["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            if k == 2 { vec!["left"] } else { vec![] },
            "frame {k}"
        );
    }
    // Frame 4: the crossfade's first step, halfway (0.1 of 0.2): walk 0.5,
    // run 0.5; the root moves 0.5 * 0.2 along x and 0.5 * 0.4 along z.
    let c0 = &fr[4]["instances"][0];
    let w: Vec<f64> = c0["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| f(&a["weight"]))
        .collect();
    assert_eq!(w.len(), 2);
    assert!(
        (w[0] - 0.5).abs() < 1e-6 && (w[1] - 0.5).abs() < 1e-6,
        "{w:?}"
    );
    assert!((f(&c0["root_motion"]["translation"][0]) - 0.1).abs() < 1e-5);
    assert!((f(&c0["root_motion"]["translation"][2]) - 0.2).abs() < 1e-5);
    // Frame 5 on: run alone.
    for frame in &fr[5..] {
        let c0 = &frame["instances"][0];
        assert_eq!(c0["actions"][0]["animation"], 1);
        assert_eq!(c0["actions"].as_array().unwrap().len(), 1);
    }
    // Character 1, backwards: 12 frames of -0.1 s move the root -0.2 each
    // (-2.4 in all, across one loop start); it passes the right marker at
    // 0.75 (frame 2: 0.8 -> 0.7) and the left one at 0.25 (frame 7).
    let mut sum = 0.0;
    let mut events = Vec::new();
    for (k, frame) in fr.iter().enumerate() {
        let c1 = &frame["instances"][1];
        sum += f(&c1["root_motion"]["translation"][0]);
        for e in c1["events"].as_array().unwrap() {
            events.push((k, e["name"].as_str().unwrap().to_string()));
        }
    }
    assert!((sum + 2.4).abs() < 1e-4, "{sum}");
    assert_eq!(events, [(2, "right".to_string()), (7, "left".to_string())]);
}

#[test]
fn joints_on_the_gpu_equal_the_twins() {
    let name = "joints_on_the_gpu_equal_the_twins";
    let dir = temp_dir("cli_play_joints");
    let file = asset(&dir);
    let play = write(
        &dir,
        "play.json",
        &json!({"instances": 3, "frames": [
            {"dt": 0.0, "commands": [{"instance": 0, "play": 0}, {"instance": 1, "play": 1},
                                     {"instance": 2, "play": 0, "wrap": "pingpong"}]},
            {"dt": 0.3, "commands": [{"instance": 0, "crossfade": {"to": 1, "duration": 0.5}}]},
            {"dt": 0.4}]}),
    );
    let args = |backend: &str| {
        run(&[
            file.to_str().unwrap(),
            "--play",
            play.to_str().unwrap(),
            "--joints",
            "--backend",
            backend,
        ])
    };
    let gpu = args("gpu");
    if !gpu_ran(name, &gpu) {
        return;
    }
    assert!(gpu.status.success(), "{}", stderr(&gpu));
    let cpu = args("cpu");
    assert!(cpu.status.success(), "{}", stderr(&cpu));
    let (g, c) = (frames(&stdout(&gpu)), frames(&stdout(&cpu)));
    assert_eq!(g.len(), 3);
    let mut compared = 0;
    for (gf, cf) in g.iter().zip(&c) {
        for (gi, ci) in gf["instances"]
            .as_array()
            .unwrap()
            .iter()
            .zip(cf["instances"].as_array().unwrap())
        {
            let gm = gi["joints"][0]["joints"].as_array().unwrap();
            let cm = ci["joints"][0]["joints"].as_array().unwrap();
            assert_eq!(gm.len(), 2);
            for (a, b) in gm
                .iter()
                .flat_map(|m| m.as_array().unwrap())
                .zip(cm.iter().flat_map(|m| m.as_array().unwrap()))
            {
                assert!((f(a) - f(b)).abs() < 1e-4, "{a} vs {b}");
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 3 * 3 * 2 * 16);
    // By hand: character 1 runs at 0.7 s at frame 2: the hips' joint
    // matrix translates by (0, 0, 2.8).
    let hips = &g[2]["instances"][1]["joints"][0]["joints"][0];
    assert!((f(&hips[14]) - 2.8).abs() < 1e-4, "{hips}");
}

#[test]
fn bad_play_files_are_refused_in_one_line() {
    let dir = temp_dir("cli_play_bad");
    let file = asset(&dir);
    let frame = |cmd: Value| json!({"instances": 2, "frames": [{"dt": 0.1, "commands": [cmd]}]});
    let cases = [
        (json!([1, 2]), "top level"),
        (json!({"frames": []}), "\"instances\" is missing"),
        (json!({"instances": 0, "frames": []}), "\"instances\""),
        (
            json!({"instances": 1, "frames": [{"dt": -1.0}]}),
            "frame 0: \"dt\" -1 is negative",
        ),
        (
            json!({"instances": 1, "frames": [{"dt": 0.1, "speed": 2}]}),
            "unknown field \"speed\"",
        ),
        (
            frame(json!({"instance": 2, "play": 0})),
            "frame 0, command 0: \"instance\"",
        ),
        (
            frame(json!({"instance": 0, "play": 5})),
            "\"play\" 5 is out of range",
        ),
        (frame(json!({"instance": 0, "wrap": "loop"})), "\"wrap\""),
        (
            frame(json!({"instance": 0, "crossfade": {"to": 1, "duration": 0}})),
            "\"duration\" 0 is not > 0",
        ),
        (
            frame(json!({"instance": 0, "crossfde": {"to": 1, "duration": 1}})),
            "unknown field \"crossfde\"",
        ),
        (
            json!({"instances": 1, "root": "tail", "frames": []}),
            "\"root\" names no node",
        ),
        (
            json!({"instances": 1, "markers": [{"animation": 0, "time": "x", "name": "a"}], "frames": []}),
            "marker 0: \"time\"",
        ),
    ];
    for (k, (v, want)) in cases.iter().enumerate() {
        let p = write(&dir, &format!("bad{k}.json"), v);
        let o = run(&[file.to_str().unwrap(), "--play", p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "case {k}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.trim().lines().count(), 1, "case {k}: {err}");
        assert!(err.contains(want), "case {k}: {err:?} lacks {want:?}");
        assert!(stdout(&o).is_empty(), "case {k}");
    }
    let not_json = dir.join("nope.json");
    std::fs::write(&not_json, "{").unwrap();
    let o = run(&[file.to_str().unwrap(), "--play", not_json.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not valid JSON"));
}

#[test]
fn markers_in_an_animations_extras_are_imported_and_crossed() {
    use keyframe_gpu::playback::{Clips, Player};
    let dir = temp_dir("cli_play_extras");
    let mut b = Builder::new();
    let n = b.node(None);
    let times = b.accessor_f32(&[0.0, 1.0], "SCALAR");
    let t = b.accessor_f32(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0], "VEC3");
    b.animation("walk", &[(times, t, "LINEAR")], &[(0, n, "translation")]);
    b.animations[0]["extras"] = json!({"author": "someone",
        "markers": [{"name": "right", "time": 0.75}, {"name": "left", "time": 0.25}]});
    let path = dir.join("markers.glb");
    std::fs::write(&path, b.to_glb()).unwrap();
    let imported = keyframe_gpu::gltf::load(&path).unwrap();
    let clip = &imported.library.clips()[0];
    let got: Vec<(f64, &str)> = clip.markers.iter().map(|m| (m.time, &*m.name)).collect();
    assert_eq!(got, [(0.25, "left"), (0.75, "right")]);
    let clips = std::sync::Arc::new(Clips::new(&imported.library));
    let mut p = Player::new(&clips);
    p.play(clips.clip("walk").unwrap()).unwrap();
    let names: Vec<String> = p
        .advance(1.0)
        .unwrap()
        .events
        .iter()
        .map(|e| e.name.to_string())
        .collect();
    assert_eq!(names, ["left", "right"]);
    // --play reports them with no "markers" in PLAY.json.
    let play = write(
        &dir,
        "p.json",
        &json!({"instances": 1, "frames": [
        {"dt": 0.5, "commands": [{"instance": 0, "play": 0}]}]}),
    );
    let o = run(&[path.to_str().unwrap(), "--play", play.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("\"name\": \"left\""), "{}", stdout(&o));

    // Malformed markers: a typed error naming the animation.
    for (k, bad) in [
        json!({"markers": {"name": "x"}}),
        json!({"markers": [{"name": 3, "time": 0.1}]}),
        json!({"markers": [{"name": "x", "time": -1.0}]}),
    ]
    .into_iter()
    .enumerate()
    {
        b.animations[0]["extras"] = bad;
        let p = dir.join(format!("bad{k}.glb"));
        std::fs::write(&p, b.to_glb()).unwrap();
        match keyframe_gpu::gltf::load(&p) {
            Err(keyframe_gpu::Error::Import {
                animation: Some(0),
                kind: keyframe_gpu::ImportErrorKind::BadMarkers { .. },
                ..
            }) => {}
            other => panic!("case {k}: {other:?}"),
        }
    }
}
