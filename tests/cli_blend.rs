//! `sample FILE --play PLAY.json` with blend spaces (issue 60): the
//! weights at held-out parameters of 1D, Cartesian and directional spaces
//! against their formulas written again here, synced walk and run
//! crossing their footsteps in the same frame, smoothing bounded per
//! second, the root motion of a blend equal to the weighted motions, and
//! bad specs refused with exit 2 and one line.
#![cfg(feature = "gltf")]

#[path = "common/gltf_builder.rs"]
mod gltf_builder;
#[path = "common/sample_cli.rs"]
mod sample_cli;

use std::path::{Path, PathBuf};

use gltf_builder::*;
use sample_cli::{run, s, stderr, stdout};
use serde_json::{json, Value};

/// Node "hips" alone; animations (LINEAR, hips translation): 0 "idle"
/// (2 s, still), 1 "walk" (1 s, x 0 -> 1), 2 "run" (0.625 s, x 0 -> 3),
/// 3 "left" (1 s, x 0 -> -1), 4 "right" (1 s, z 0 -> 1), 5 "back" (1 s,
/// z 0 -> -1). Durations exact in `f32`.
fn asset(dir: &Path) -> PathBuf {
    let mut b = Builder::new();
    let hips = b.node(None);
    b.nodes[hips]["name"] = json!("hips");
    let clips: [(&str, f32, [f32; 3]); 6] = [
        ("idle", 2.0, [0.0, 0.0, 0.0]),
        ("walk", 1.0, [1.0, 0.0, 0.0]),
        ("run", 0.625, [3.0, 0.0, 0.0]),
        ("left", 1.0, [-1.0, 0.0, 0.0]),
        ("right", 1.0, [0.0, 0.0, 1.0]),
        ("back", 1.0, [0.0, 0.0, -1.0]),
    ];
    for (name, d, to) in clips {
        let times = b.accessor_f32(&[0.0, d], "SCALAR");
        let moves = b.accessor_f32(&[0.0, 0.0, 0.0, to[0], to[1], to[2]], "VEC3");
        b.animation(
            name,
            &[(times, moves, "LINEAR")],
            &[(0, hips, "translation")],
        );
    }
    let mut root = b.json(None);
    root["scenes"] = json!([{"nodes": [hips]}]);
    let path = dir.join("blend.glb");
    std::fs::write(
        &path,
        glb(&serde_json::to_vec(&root).unwrap(), Some(&b.bin)),
    )
    .unwrap();
    path
}

fn play(dir: &Path, file: &Path, name: &str, script: &Value) -> Vec<Value> {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec(script).unwrap()).unwrap();
    let o = run(&[s(file), "--play", s(&p)]);
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Character `k`'s weight of each animation in `frame` (0 when it has no
/// action), over `n` animations.
fn weights(frame: &Value, k: usize, n: usize) -> Vec<f64> {
    let mut w = vec![0.0; n];
    for a in frame["instances"][k]["actions"].as_array().unwrap() {
        w[a["animation"].as_u64().unwrap() as usize] += f(&a["weight"]);
    }
    w
}

fn close(got: &[f64], want: &[f64], tol: f64, at: &str) {
    assert_eq!(got.len(), want.len(), "{at}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < tol, "{at}: {got:?} vs {want:?}");
    }
}

/// A space's clips in PLAY.json: `(animation, point)`.
fn space_clips(points: &[(u32, &[f64])]) -> Value {
    Value::Array(
        points
            .iter()
            .map(|(a, at)| json!({"animation": a, "at": at}))
            .collect(),
    )
}

/// One frame per parameter, character 0 entering the space in frame 0.
fn held_out(space: Value, params: &[Vec<f64>]) -> Value {
    let frames: Vec<Value> = params
        .iter()
        .map(|p| {
            json!({"dt": 0.01, "commands": [
                {"instance": 0, "blend_space": "s", "params": p}]})
        })
        .collect();
    json!({"instances": 1, "blend_spaces": [space], "frames": frames})
}

#[test]
fn one_d_weights_at_held_out_speeds() {
    let dir = temp_dir("cli_blend_1d");
    let file = asset(&dir);
    // idle at 0, walk at 1.5, run at 4.
    let at = [0.0, 1.5, 4.0];
    let space = json!({"name": "s", "mode": "1d",
        "clips": space_clips(&[(0, &[at[0]]), (1, &[at[1]]), (2, &[at[2]])])});
    let xs = [0.7, 2.2, 3.9, 5.0, -1.0, 1.5];
    let params: Vec<Vec<f64>> = xs.iter().map(|&x| vec![x]).collect();
    let fr = play(&dir, &file, "p.json", &held_out(space, &params));
    for (k, &x) in xs.iter().enumerate() {
        // Linear between the neighbours, clamped at the ends.
        let mut want = vec![0.0; 6];
        let x = x.clamp(at[0], at[2]);
        let hi = at.iter().position(|&a| a >= x).unwrap().max(1);
        let t = (x - at[hi - 1]) / (at[hi] - at[hi - 1]);
        want[hi - 1] = 1.0 - t;
        want[hi] = t;
        close(&weights(&fr[k], 0, 6), &want, 1e-6, &format!("x {x}"));
    }
}

/// Gradient bands (Johansen 2009) in `f64` from the vectors of each pair.
fn bands(n: usize, vectors: impl Fn(usize, usize) -> ([f64; 2], [f64; 2])) -> Vec<f64> {
    let mut h = vec![1.0f64; n];
    for (i, hi) in h.iter_mut().enumerate() {
        for j in (0..n).filter(|&j| j != i) {
            let (ij, ip) = vectors(i, j);
            let t = (ip[0] * ij[0] + ip[1] * ij[1]) / (ij[0] * ij[0] + ij[1] * ij[1]);
            *hi = hi.min((1.0 - t).clamp(0.0, 1.0));
        }
    }
    let sum: f64 = h.iter().sum();
    h.iter().map(|x| x / sum).collect()
}

fn len(a: [f64; 2]) -> f64 {
    a[0].hypot(a[1])
}

/// The signed angle from `a` to `b` (0 at the origin).
fn angle(a: [f64; 2], b: [f64; 2]) -> f64 {
    if len(a) == 0.0 || len(b) == 0.0 {
        return 0.0;
    }
    (a[0] * b[1] - a[1] * b[0]).atan2(a[0] * b[0] + a[1] * b[1])
}

#[test]
fn two_d_weights_at_held_out_points_in_both_modes() {
    let dir = temp_dir("cli_blend_2d");
    let file = asset(&dir);
    // idle at the origin, walk ahead (0, 1), run further (0, 2.5), left,
    // right, back.
    let points: [[f64; 2]; 6] = [
        [0.0, 0.0],
        [0.0, 1.0],
        [0.0, 2.5],
        [-1.0, 0.0],
        [1.0, 0.0],
        [0.0, -1.0],
    ];
    let listed: Vec<(u32, &[f64])> = points
        .iter()
        .enumerate()
        .map(|(a, p)| (a as u32, &p[..]))
        .collect();
    let ps = [
        [0.3, 0.7],
        [-0.6, -0.2],
        [0.5, 1.8],
        [1.4, 0.4],
        [0.1, -3.0],
        [0.0, 0.0],
    ];
    let params: Vec<Vec<f64>> = ps.iter().map(|p| p.to_vec()).collect();
    for mode in ["cartesian", "directional"] {
        let space = json!({"name": "s", "mode": mode, "clips": space_clips(&listed)});
        let fr = play(
            &dir,
            &file,
            &format!("{mode}.json"),
            &held_out(space, &params),
        );
        for (k, p) in ps.iter().enumerate() {
            let want = bands(6, |i, j| {
                let (pi, pj) = (points[i], points[j]);
                if mode == "cartesian" {
                    ([pj[0] - pi[0], pj[1] - pi[1]], [p[0] - pi[0], p[1] - pi[1]])
                } else {
                    // Polar: relative speed, and twice the angle.
                    let m = (len(pi) + len(pj)) / 2.0;
                    (
                        [(len(pj) - len(pi)) / m, 2.0 * angle(pi, pj)],
                        [(len(*p) - len(pi)) / m, 2.0 * angle(pi, *p)],
                    )
                }
            });
            close(
                &weights(&fr[k], 0, 6),
                &want,
                1e-5,
                &format!("{mode} {p:?}"),
            );
        }
    }
}

/// Per character, the frames in which animation `a` crossed marker
/// `name`.
fn crossed(fr: &[Value], k: usize, a: u64, name: &str) -> Vec<usize> {
    fr.iter()
        .enumerate()
        .filter(|(_, frame)| {
            frame["instances"][k]["events"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["animation"] == a && e["name"] == name)
        })
        .map(|(n, _)| n)
        .collect()
}

/// Walk (1 s) and run (0.625 s) at 1 and 3 with `sync`, run's footsteps
/// at `run_steps`; characters at speeds 1.2, 2, 2.7 and 2.95, 150 frames
/// of 1/60 s.
fn synced_walk_run(name: &str, sync: &str, run_steps: [f64; 2]) -> Vec<Value> {
    let dir = temp_dir(name);
    let file = asset(&dir);
    let speeds = [1.2, 2.0, 2.7, 2.95];
    let enter: Vec<Value> = speeds
        .iter()
        .enumerate()
        .map(|(k, x)| json!({"instance": k, "blend_space": "loco", "params": [x]}))
        .collect();
    let mut frames = vec![json!({"dt": 1.0 / 60.0, "commands": enter})];
    frames.extend((1..150).map(|_| json!({"dt": 1.0 / 60.0})));
    let script = json!({"instances": speeds.len(),
        "markers": [{"animation": 1, "time": 0.25, "name": "left"},
                    {"animation": 1, "time": 0.75, "name": "right"},
                    {"animation": 2, "time": run_steps[0], "name": "left"},
                    {"animation": 2, "time": run_steps[1], "name": "right"}],
        "blend_spaces": [{"name": "loco", "mode": "1d", "sync": sync,
            "clips": space_clips(&[(1, &[1.0]), (2, &[3.0])])}],
        "frames": frames});
    play(&dir, &file, "p.json", &script)
}

#[test]
fn synced_footsteps_fall_in_the_same_frame_at_every_weight() {
    // Phase sync: run's footsteps at the same fractions (0.25, 0.75) as
    // walk's. Marker sync: at other fractions (0.2, 0.8).
    for (sync, steps) in [("phase", [0.15625, 0.46875]), ("markers", [0.125, 0.5])] {
        let fr = synced_walk_run(&format!("cli_blend_{sync}"), sync, steps);
        for k in 0..4 {
            for foot in ["left", "right"] {
                let (walk, run) = (crossed(&fr, k, 1, foot), crossed(&fr, k, 2, foot));
                assert!(walk.len() >= 2, "{sync} {k} {foot}: {walk:?}");
                assert_eq!(walk, run, "{sync}, character {k}, {foot}");
            }
        }
    }
    // Unsynced, the same clips drift apart: run's left foot falls in
    // other frames than walk's.
    let fr = synced_walk_run("cli_blend_none", "none", [0.15625, 0.46875]);
    assert_ne!(crossed(&fr, 1, 1, "left"), crossed(&fr, 1, 2, "left"));
}

#[test]
fn root_motion_of_a_blend_is_the_weighted_motions() {
    let dir = temp_dir("cli_blend_root");
    let file = asset(&dir);
    // Phase-synced walk (1 s, x +1 a cycle) and run (0.625 s, +3): at
    // speed 2 (0.5 each) the cycle is D = 0.5 + 0.3125 s and a step of dt
    // moves dt / D of a cycle: x by dt / D * (0.5 * 1 + 0.5 * 3); at 2.5
    // (0.25, 0.75) D = 0.25 + 0.46875, x by dt / D * 2.5.
    let frames: Vec<Value> = (0..40)
        .map(|n| match n {
            0 => json!({"dt": 0.05, "commands": [
                {"instance": 0, "blend_space": "loco", "params": [2.0]},
                {"instance": 1, "blend_space": "loco", "params": [2.5]}]}),
            _ => json!({"dt": 0.05}),
        })
        .collect();
    let script = json!({"instances": 2, "root": "hips",
        "blend_spaces": [{"name": "loco", "mode": "1d", "sync": "phase",
            "clips": space_clips(&[(1, &[1.0]), (2, &[3.0])])}],
        "frames": frames});
    let fr = play(&dir, &file, "p.json", &script);
    for (k, d, per_cycle) in [(0, 0.8125, 2.0), (1, 0.71875, 2.5)] {
        for (n, frame) in fr.iter().enumerate() {
            let t = &frame["instances"][k]["root_motion"]["translation"];
            let want = 0.05 / d * per_cycle;
            assert!(
                (f(&t[0]) - want).abs() < 1e-5,
                "{k}, frame {n}: {t} vs {want}"
            );
        }
    }
}

#[test]
fn smoothing_bounds_each_weight_per_second_and_duration_crossfades_in() {
    let dir = temp_dir("cli_blend_smooth");
    let file = asset(&dir);
    // Walk plays; frame 2 crossfades into the space at walk (1.5) over
    // 0.2 s; frame 6 jumps the parameter to run (4): weights move 2 per
    // second, 0.1 per frame of 0.05 s.
    let frames: Vec<Value> = (0..20)
        .map(|n| match n {
            0 => json!({"dt": 0.05, "commands": [{"instance": 0, "play": 0}]}),
            2 => json!({"dt": 0.05, "commands": [{"instance": 0, "blend_space": "s",
                                                 "params": [1.5], "duration": 0.2}]}),
            6 => json!({"dt": 0.05, "commands": [{"instance": 0, "blend_space": "s",
                                                 "params": [4.0]}]}),
            _ => json!({"dt": 0.05}),
        })
        .collect();
    let script = json!({"instances": 1,
        "blend_spaces": [{"name": "s", "mode": "1d", "smoothing": 2.0,
            "clips": space_clips(&[(0, &[0.0]), (1, &[1.5]), (2, &[4.0])])}],
        "frames": frames});
    let fr = play(&dir, &file, "p.json", &script);
    let w = |n: usize| weights(&fr[n], 0, 3);
    // The crossfade: idle 1 -> 0 and walk 0 -> 1 over 0.2 s, a quarter a
    // frame.
    for (n, q) in [(2, 0.25), (3, 0.5), (4, 0.75), (5, 1.0)] {
        close(&w(n), &[1.0 - q, q, 0.0], 1e-6, &format!("frame {n}"));
    }
    // After the jump: walk falls, run rises by 0.1 a frame, at most.
    for n in 6..20 {
        let moved = (0.1 * (n - 5) as f64).min(1.0);
        close(
            &w(n),
            &[0.0, 1.0 - moved, moved],
            1e-5,
            &format!("frame {n}"),
        );
        for (a, b) in w(n - 1).iter().zip(w(n)) {
            assert!((a - b).abs() <= 0.1 + 1e-6, "frame {n}");
        }
        assert!((w(n).iter().sum::<f64>() - 1.0).abs() < 1e-5, "frame {n}");
    }
}

#[test]
fn bad_blend_specs_are_refused_in_one_line() {
    let dir = temp_dir("cli_blend_bad");
    let file = asset(&dir);
    let space = |clips: Value| json!({"name": "s", "mode": "cartesian", "clips": clips});
    let with = |spaces: Value, cmd: Value| {
        json!({"instances": 1, "blend_spaces": spaces,
               "frames": [{"dt": 0.1, "commands": [cmd]}]})
    };
    let two = space_clips(&[(0, &[0.0, 0.0]), (1, &[0.0, 1.0])]);
    let cmd = |params: Value| json!({"instance": 0, "blend_space": "s", "params": params});
    let cases = [
        (
            with(
                json!([space(space_clips(&[(0, &[0.0, 1.0]), (1, &[0.0, 1.0])]))]),
                json!(null),
            ),
            "blend space \"s\", clip 1: it is at [0, 1], as clip 0",
        ),
        (
            with(json!([space(json!([]))]), json!(null)),
            "blend space \"s\": it has no clip",
        ),
        (
            with(json!([space(two.clone())]), cmd(json!(["NaN", 0]))),
            "\"params\" is not a finite number",
        ),
        (
            with(json!([space(two.clone())]), cmd(json!([1.0]))),
            "\"params\" is not an array of 2 numbers",
        ),
        (
            with(json!([space(space_clips(&[(0, &[0.0])]))]), json!(null)),
            "clip 0: \"at\" is not an array of 2 numbers",
        ),
        (
            with(
                json!([space(two.clone())]),
                json!({"instance": 0, "blend_space": "t", "params": [0, 0]}),
            ),
            "\"blend_space\" names no blend space: \"t\"",
        ),
        (
            with(
                json!([{"name": "s", "mode": "polar", "clips": two}]),
                json!(null),
            ),
            "\"mode\" is not \"1d\", \"cartesian\" or \"directional\"",
        ),
        (
            with(
                json!([{"name": "s", "mode": "1d", "smoothing": 0, "clips": space_clips(&[(0, &[0.0])])}]),
                json!(null),
            ),
            "smoothing 0 is not a finite number > 0",
        ),
        (
            with(
                json!([space(two.clone())]),
                json!({"instance": 0, "params": [0, 0]}),
            ),
            "\"params\" belongs to a \"blend_space\" command",
        ),
        (
            with(json!([space(two.clone()), space(two.clone())]), json!(null)),
            "\"name\" \"s\" is another space's",
        ),
    ];
    for (k, (v, want)) in cases.iter().enumerate() {
        let mut v = v.clone();
        if v["frames"][0]["commands"][0].is_null() {
            v["frames"][0]["commands"] = json!([]);
        }
        let p = dir.join(format!("bad{k}.json"));
        std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
        let o = run(&[s(&file), "--play", s(&p)]);
        assert_eq!(o.status.code(), Some(2), "case {k}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.trim().lines().count(), 1, "case {k}: {err}");
        assert!(err.contains(want), "case {k}: {err:?} lacks {want:?}");
        assert!(stdout(&o).is_empty(), "case {k}");
    }
}
