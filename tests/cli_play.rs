//! `sample FILE --play PLAY.json`: the playback layer driven by a script
//! on a file built here with a known root displacement and markers:
//! crossfade weights and clip times frame by frame against the linear
//! ramp, root motion summed over loops against the clip's displacement,
//! events against the markers crossed, `--joints` on the GPU against the
//! CPU twin, and bad PLAY files refused with exit 2 and one line.
#![cfg(feature = "gltf")]

#[path = "common/gltf_builder.rs"]
mod gltf_builder;
#[path = "common/play_asset.rs"]
mod play_asset;
#[path = "common/sample_cli.rs"]
mod sample_cli;

use gltf_builder::*;
use play_asset::{asset, per_action_commands};
use sample_cli::{gpu_ran, run, stderr, stdout, write_json as write};
use serde_json::{json, Value};

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
    use keyframe_gpu::playback::{Clips, Command, Player};
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
    p.command(Command::Play(clips.clip("walk").unwrap()))
        .unwrap();
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

/// An action row: `(animation, time, weight, finished, loops)`.
type Row = (u64, f64, f64, bool, u64);

/// Character `instance`'s rows of its base actions in `frame`.
fn rows(frame: &Value, instance: usize) -> Vec<Row> {
    frame["instances"][instance]["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["animation"].as_u64().unwrap(),
                f(&a["time"]),
                f(&a["weight"]),
                a["finished"].as_bool().unwrap(),
                a["loops"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn rows_close(got: &[Row], want: &[Row], at: &str) {
    assert_eq!(got.len(), want.len(), "{at}: {got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        let same = g.0 == w.0
            && (g.1 - w.1).abs() < 1e-6
            && (g.2 - w.2).abs() < 1e-6
            && g.3 == w.3
            && g.4 == w.4;
        assert!(same, "{at}: {got:?} vs {want:?}");
    }
}

#[test]
fn fades_crossfade_at_repetitions_and_wraps_per_action() {
    let dir = temp_dir("cli_play_commands");
    let file = asset(&dir);
    // dt 0.125 throughout (exact in binary), 20 frames.
    // 0: fade_in walk over 0.5; crossfade_at run (clip time 0.5) over
    //    0.25 in frame 1, during the fade-in; fade_out run over 0.5 in
    //    frame 3.
    // 1: walk repeating twice.
    // 2: run ping-pong backwards from 0 (three.js: first pass from the
    //    end).
    // 3: walk, run's wrap set to once before it comes in frame 1.
    let cmd = per_action_commands;
    let frames_json: Vec<Value> = (0..20)
        .map(|k| json!({"dt": 0.125, "commands": cmd(k)}))
        .collect();
    let play = write(
        &dir,
        "play.json",
        &json!({"instances": 4, "frames": frames_json}),
    );
    let o = run(&[file.to_str().unwrap(), "--play", play.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let fr = frames(&stdout(&o));
    assert_eq!(fr.len(), 20);
    // Character 0. Frame 0: walk fading in, 0.125 / 0.5 of the way.
    // Frame 1: walk 0.25 heading for 1; the crossfade ramps it to 0 and
    // run from 0 to 1 (where the fade-in was going) over 0.25: halfway,
    // walk 0.125, run 0.5 at 0.5 + 0.125. Frame 2: run alone at 1.
    // Frames 3-6: run fading out over 0.5 from 1: 0.75, 0.5, 0.25, gone;
    // its clip time passes 1.0 in frame 4 (one loop).
    let expect: [&[Row]; 7] = [
        &[(0, 0.125, 0.25, false, 0)],
        &[(0, 0.25, 0.125, false, 0), (1, 0.625, 0.5, false, 0)],
        &[(1, 0.75, 1.0, false, 0)],
        &[(1, 0.875, 0.75, false, 0)],
        &[(1, 0.0, 0.5, false, 1)],
        &[(1, 0.125, 0.25, false, 1)],
        &[],
    ];
    for (k, want) in expect.iter().enumerate() {
        rows_close(&rows(&fr[k], 0), want, &format!("character 0, frame {k}"));
    }
    // Character 1: walk repeating twice: one loop at frame 7 (eight steps
    // of 0.125 s: 1 s), finished at its end at frame 15 (2 s), held there
    // after.
    rows_close(&rows(&fr[6], 1), &[(0, 0.875, 1.0, false, 0)], "1/6");
    rows_close(&rows(&fr[7], 1), &[(0, 0.0, 1.0, false, 1)], "1/7");
    rows_close(&rows(&fr[15], 1), &[(0, 1.0, 1.0, true, 2)], "1/15");
    rows_close(&rows(&fr[19], 1), &[(0, 1.0, 1.0, true, 2)], "1/19");
    // Character 2: run from the end backwards, 0.875 after one step; at 0
    // after eight (its passage through the start no loop), then out
    // again after a turn at 0 (one loop).
    rows_close(&rows(&fr[0], 2), &[(1, 0.875, 1.0, false, 0)], "2/0");
    rows_close(&rows(&fr[7], 2), &[(1, 0.0, 1.0, false, 0)], "2/7");
    rows_close(&rows(&fr[8], 2), &[(1, 0.125, 1.0, false, 1)], "2/8");
    // Character 3: walk keeps repeating while it fades out; run, played
    // once, stops at its end at frame 8 (from frame 1, eight steps) and is
    // finished.
    rows_close(
        &rows(&fr[1], 3),
        &[(0, 0.25, 0.5, false, 0), (1, 0.125, 0.5, false, 0)],
        "3/1",
    );
    rows_close(&rows(&fr[7], 3), &[(1, 0.875, 1.0, false, 0)], "3/7");
    rows_close(&rows(&fr[8], 3), &[(1, 1.0, 1.0, true, 0)], "3/8");
    rows_close(&rows(&fr[12], 3), &[(1, 1.0, 1.0, true, 0)], "3/12");
    // Every row has its layers listed apart (none here).
    assert_eq!(fr[0]["instances"][0]["layers"], json!([]));
}

/// `[x, y, z, w]` of a JSON array.
fn quat(v: &Value) -> [f64; 4] {
    let a: Vec<f64> = v.as_array().unwrap().iter().map(f).collect();
    [a[0], a[1], a[2], a[3]]
}

#[test]
fn layers_override_add_update_and_remove_with_nodes() {
    let name = "layers_override_add_update_and_remove_with_nodes";
    let dir = temp_dir("cli_play_layers");
    let file = asset(&dir);
    // walk on the base; wave as an override layer on the spine's subtree
    // (frame 0), then at weight 0.5 (frame 1), then as a mix layer
    // (frame 2), then removed (frame 3). dt 0.25.
    let layer = |w: f64, mode: &str| {
        json!({"instance": 0, "layer": {"animation": 2, "weight": w, "mode": mode,
                                        "mask": {"subtrees": ["spine"]}}})
    };
    let play = write(
        &dir,
        "play.json",
        &json!({"instances": 1, "frames": [
            {"dt": 0.25, "commands": [{"instance": 0, "play": 0}, layer(1.0, "override")]},
            {"dt": 0.25, "commands": [layer(0.5, "override")]},
            {"dt": 0.25, "commands": [layer(1.0, "mix")]},
            {"dt": 0.25, "commands": [{"instance": 0, "remove": 2}]}]}),
    );
    let args = |backend: &str| {
        run(&[
            file.to_str().unwrap(),
            "--play",
            play.to_str().unwrap(),
            "--nodes",
            "--backend",
            backend,
        ])
    };
    let cpu = args("cpu");
    assert!(cpu.status.success(), "{}", stderr(&cpu));
    let fr = frames(&stdout(&cpu));
    assert_eq!(fr.len(), 4);
    let c0 = |k: usize| &fr[k]["instances"][0];
    // The layers are listed apart, with their mode, weight and the
    // layer's action row (its own playhead: 0.25 s a frame).
    assert_eq!(c0(0)["actions"].as_array().unwrap().len(), 1);
    let l = &c0(0)["layers"][0];
    assert_eq!(
        (l["mode"].as_str(), f(&l["weight"])),
        (Some("override"), 1.0)
    );
    assert_eq!(l["actions"][0]["animation"], 2);
    assert_eq!(f(&l["actions"][0]["time"]), 0.25);
    assert_eq!(f(&c0(1)["layers"][0]["weight"]), 0.5);
    assert_eq!(f(&c0(1)["layers"][0]["actions"][0]["time"]), 0.5);
    assert_eq!(c0(2)["layers"][0]["mode"], "mix");
    assert_eq!(c0(3)["layers"], json!([]));
    // Nodes: 0 hips, 1 spine. Frame 0 (0.25 s): the override at weight 1
    // poses the spine as wave alone, 22.5 degrees about x: (sin 11.25, 0,
    // 0, cos 11.25); the hips, outside the mask, as walk: (0.5, 0, 0).
    let nodes = |k: usize| c0(k)["nodes"].as_array().unwrap().clone();
    let (s, c) = (11.25f64.to_radians().sin(), 11.25f64.to_radians().cos());
    let spine = quat(&nodes(0)[1]["rotation"]);
    for (g, w) in spine.iter().zip([s, 0.0, 0.0, c]) {
        assert!((g - w).abs() < 1e-6, "{spine:?}");
    }
    let hips: Vec<f64> = nodes(0)[0]["translation"]
        .as_array()
        .unwrap()
        .iter()
        .map(f)
        .collect();
    assert!((hips[0] - 0.5).abs() < 1e-6 && hips[1].abs() < 1e-6 && hips[2].abs() < 1e-6);
    // Frame 2 (0.75 s): wave mixed in at weight 1 with walk at 1: the
    // spine halfway between walk's bend (67.5 degrees about z) and wave's
    // turn (67.5 degrees about x), no longer wave alone.
    let spine = quat(&nodes(2)[1]["rotation"]);
    let (s, c) = (33.75f64.to_radians().sin(), 33.75f64.to_radians().cos());
    let (bend, turn) = ([0.0, 0.0, s, c], [s, 0.0, 0.0, c]);
    let half: Vec<f64> = bend.iter().zip(turn).map(|(a, b)| a + b).collect();
    let norm = half.iter().map(|x| x * x).sum::<f64>().sqrt();
    for (g, w) in spine.iter().zip(&half) {
        assert!((g - w / norm).abs() < 1e-6, "{spine:?}");
    }
    // Frame 3 (1 s, no layer): walk alone, its loop ended (clip time 0,
    // one loop): the spine at walk's first key, unbent.
    rows_close(&rows(&fr[3], 0), &[(0, 0.0, 1.0, false, 1)], "frame 3");
    let spine = quat(&nodes(3)[1]["rotation"]);
    for (g, w) in spine.iter().zip([0.0, 0.0, 0.0, 1.0]) {
        assert!((g - w).abs() < 1e-6, "{spine:?}");
    }
    // The GPU poses the same nodes.
    let gpu = args("gpu");
    if !gpu_ran(name, &gpu) {
        return;
    }
    assert!(gpu.status.success(), "{}", stderr(&gpu));
    assert_eq!(same_nodes(&frames(&stdout(&gpu)), &fr), 4 * 3 * 10);
}

/// Checks character 0's nodes of two runs' frames against each other
/// (within 1e-5); returns how many numbers it compared.
fn same_nodes(a: &[Value], b: &[Value]) -> usize {
    let mut compared = 0;
    for (af, bf) in a.iter().zip(b) {
        let (an, bn) = (&af["instances"][0]["nodes"], &bf["instances"][0]["nodes"]);
        for (x, y) in an.as_array().unwrap().iter().zip(bn.as_array().unwrap()) {
            for key in ["translation", "rotation", "scale"] {
                let (xs, ys) = (x[key].as_array().unwrap(), y[key].as_array().unwrap());
                for (p, q) in xs.iter().zip(ys) {
                    assert!((f(p) - f(q)).abs() < 1e-5, "{key}: {p} vs {q}");
                    compared += 1;
                }
            }
        }
    }
    compared
}

#[test]
fn bad_commands_are_refused_in_one_line() {
    let dir = temp_dir("cli_play_bad_commands");
    let file = asset(&dir);
    let frame = |cmd: Value| json!({"instances": 1, "frames": [{"dt": 0.1, "commands": [cmd]}]});
    let cases = [
        (
            frame(json!({"instance": 0, "fade_in": {"animation": 7, "duration": 1}})),
            "\"animation\" 7 is out of range",
        ),
        (
            frame(json!({"instance": 0, "fade_out": {"animation": 0, "duration": -1}})),
            "\"duration\" -1 is not > 0",
        ),
        (
            frame(json!({"instance": 0, "crossfade_at": {"to": 1, "duration": 0.5}})),
            "\"at\" is missing",
        ),
        (
            frame(json!({"instance": 0, "repetitions": -1})),
            "\"repetitions\" is not an integer >= 0 or null",
        ),
        (
            frame(json!({"instance": 0, "layer": {"animation": 0, "mode": "blend"}})),
            "\"mode\" is not \"mix\", \"additive\" or \"override\"",
        ),
        (
            frame(json!({"instance": 0, "layer": {"animation": 0, "weight": -0.5}})),
            "\"weight\" -0.5 is not a finite number >= 0",
        ),
        (
            frame(
                json!({"instance": 0, "layer": {"animation": 2, "mask": {"subtrees": ["tail"]}}}),
            ),
            "names no node of the rig: \"tail\"",
        ),
        (
            frame(json!({"instance": 0, "animation": 1})),
            "\"animation\" names what",
        ),
        (
            frame(json!({"instance": 0, "remove": 2})),
            "frame 0, command 0: \"remove\": animation 2 has no layer here",
        ),
        (
            frame(json!({"instance": 0, "layer": {"animation": 1, "wieght": 1}})),
            "unknown field \"wieght\"",
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
    // --nodes belongs to --play.
    let o = run(&[file.to_str().unwrap(), "--nodes"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--nodes needs --play"));
}
