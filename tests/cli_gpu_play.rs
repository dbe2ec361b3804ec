//! `sample FILE --play PLAY.json --gpu-playback`: the same scripts as
//! `--play`, their characters played on the GPU, print the same frames:
//! every frame, every character, each action's animation, finished flag
//! and loop count equal, its clip time and weight within 1e-5; the
//! layers' modes and weights; the root motion and the events. Scripts of
//! every command (tests/cli_play.rs's kinds), a long run of uneven steps
//! with random commands, and refusals on the GPU's state.
#![cfg(feature = "gltf")]

#[path = "common/gltf_builder.rs"]
mod gltf_builder;
#[path = "common/play_asset.rs"]
mod play_asset;
#[path = "common/sample_cli.rs"]
mod sample_cli;

use std::path::Path;

use gltf_builder::temp_dir;
use play_asset::{asset, per_action_commands};
use sample_cli::{gpu_ran, run, stderr, stdout, write_json as write};
use serde_json::{json, Value};

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn close(a: &Value, b: &Value, tol: f64, at: &str) {
    assert!((f(a) - f(b)).abs() <= tol, "{at}: {a} vs {b}");
}

/// One action row of both runs: the same animation, finished flag and
/// loops; time and weight within 1e-5.
fn same_row(a: &Value, b: &Value, at: &str) {
    for key in ["animation", "finished", "loops"] {
        assert_eq!(a[key], b[key], "{at}: {key}");
    }
    close(&a["time"], &b["time"], 1e-5, &format!("{at}: time"));
    close(&a["weight"], &b["weight"], 1e-5, &format!("{at}: weight"));
}

fn same_list(a: &Value, b: &Value, at: &str, each: impl Fn(&Value, &Value, &str)) {
    let (a, b) = (a.as_array().unwrap(), b.as_array().unwrap());
    assert_eq!(a.len(), b.len(), "{at}: {a:?} vs {b:?}");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        each(x, y, &format!("{at} [{i}]"));
    }
}

/// Every frame of `--play`'s output `cpu` against `--gpu-playback`'s
/// `gpu`.
fn same_frames(cpu: &str, gpu: &str, label: &str) {
    let (a, b): (Vec<&str>, Vec<&str>) = (cpu.lines().collect(), gpu.lines().collect());
    assert_eq!(a.len(), b.len(), "{label}: frames");
    for (k, (x, y)) in a.iter().zip(&b).enumerate() {
        let (x, y): (Value, Value) = (
            serde_json::from_str(x).unwrap(),
            serde_json::from_str(y).unwrap(),
        );
        assert_eq!(x["frame"], y["frame"]);
        let at = format!("{label}, frame {k}");
        same_list(&x["instances"], &y["instances"], &at, |c, g, at| {
            same_list(
                &c["actions"],
                &g["actions"],
                &format!("{at} actions"),
                same_row,
            );
            same_list(
                &c["layers"],
                &g["layers"],
                &format!("{at} layers"),
                |c, g, at| {
                    assert_eq!(c["mode"], g["mode"], "{at}");
                    close(&c["weight"], &g["weight"], 1e-5, at);
                    same_list(&c["actions"], &g["actions"], at, same_row);
                },
            );
            for part in ["translation", "rotation"] {
                let (c, g) = (&c["root_motion"][part], &g["root_motion"][part]);
                same_list(c, g, &format!("{at} root {part}"), |c, g, at| {
                    close(c, g, 1e-5, at)
                });
            }
            assert_eq!(c["events"], g["events"], "{at}: events");
            if c.get("nodes").is_some() {
                same_list(
                    &c["nodes"],
                    &g["nodes"],
                    &format!("{at} nodes"),
                    |c, g, at| {
                        for key in ["translation", "rotation", "scale"] {
                            same_list(&c[key], &g[key], &format!("{at} {key}"), |c, g, at| {
                                close(c, g, 1e-4, at)
                            });
                        }
                    },
                );
            }
        });
    }
}

/// Runs `play` both ways (with `extra` options) and compares; `false`
/// when the GPU run was skipped for lack of an adapter.
fn both_ways(file: &Path, play: &Path, extra: &[&str], label: &str) -> bool {
    let args = |gpu: bool| {
        let mut a = vec![file.to_str().unwrap(), "--play", play.to_str().unwrap()];
        a.extend_from_slice(extra);
        if gpu {
            a.push("--gpu-playback");
        }
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let cpu = run(&args(false).iter().map(String::as_str).collect::<Vec<_>>());
    assert!(cpu.status.success(), "{label}: {}", stderr(&cpu));
    let gpu = run(&args(true).iter().map(String::as_str).collect::<Vec<_>>());
    if !gpu_ran(label, &gpu) {
        return false;
    }
    assert!(gpu.status.success(), "{label}: {}", stderr(&gpu));
    same_frames(&stdout(&cpu), &stdout(&gpu), label);
    true
}

/// The scripts of tests/cli_play.rs's kinds: crossfades with root motion
/// and markers; fades, crossfade_at, repetitions and wraps per action,
/// ping-pong backwards; layers (override, mix, additive, masks) added,
/// updated, faded and removed; speed, pause and seek.
fn scripts() -> Vec<(&'static str, Value)> {
    let steps = |frames: usize, dt: f64, at: &dyn Fn(usize) -> Vec<Value>| -> Vec<Value> {
        (0..frames)
            .map(|k| json!({"dt": dt, "commands": at(k)}))
            .collect()
    };
    let crossfades = steps(24, 1.0 / 30.0, &|k| match k {
        0 => vec![
            json!({"instance": 0, "play": 0}),
            json!({"instance": 1, "play": 1, "speed": 1.5}),
        ],
        5 => vec![json!({"instance": 0, "crossfade": {"to": 1, "duration": 0.3}})],
        9 => vec![json!({"instance": 1, "crossfade": {"to": 0, "duration": 0.2}})],
        12 => vec![json!({"instance": 0, "crossfade": {"to": 0, "duration": 0.5}})],
        _ => vec![],
    });
    let per_action = steps(20, 0.125, &per_action_commands);
    let layers = steps(12, 0.25, &|k| match k {
        0 => vec![
            json!({"instance": 0, "play": 0, "layer": {"animation": 2, "mode": "override", "mask": {"subtrees": ["spine"]}}}),
            json!({"instance": 1, "play": 1, "layer": {"animation": 2, "weight": 0.5, "mode": "additive"}}),
        ],
        1 => vec![
            json!({"instance": 0, "layer": {"animation": 2, "weight": 0.5, "mode": "override", "mask": {"subtrees": ["spine"]}}}),
        ],
        2 => vec![json!({"instance": 0, "layer": {"animation": 2, "mode": "mix"}})],
        3 => vec![json!({"instance": 0, "remove": 2})],
        5 => vec![json!({"instance": 1, "animation": 2, "wrap": "pingpong", "repetitions": 3})],
        _ => vec![],
    });
    let speeds = steps(30, 0.05, &|k| match k {
        0 => vec![json!({"instance": 0, "play": 1, "speed": 0.5})],
        6 => vec![json!({"instance": 0, "pause": true})],
        10 => vec![json!({"instance": 0, "pause": false, "seek": 0.8})],
        14 => vec![json!({"instance": 0, "speed": -2, "wrap": "repeat"})],
        22 => vec![json!({"instance": 0, "seek": -0.3, "crossfade": {"to": 0, "duration": 0.1}})],
        _ => vec![],
    });
    let markers = json!([
        {"animation": 0, "time": 0.25, "name": "left"},
        {"animation": 0, "time": 0.75, "name": "right"},
        {"animation": 1, "time": 0.5, "name": "step"}
    ]);
    vec![
        (
            "crossfades",
            json!({"instances": 2, "root": "hips", "markers": markers, "frames": crossfades}),
        ),
        ("per action", json!({"instances": 4, "frames": per_action})),
        (
            "layers",
            json!({"instances": 2, "root": "hips", "frames": layers}),
        ),
        (
            "speeds",
            json!({"instances": 1, "root": "hips", "markers": markers, "frames": speeds}),
        ),
    ]
}

#[test]
fn every_script_prints_the_same_frames_on_the_gpu() {
    let dir = temp_dir("cli_gpu_play_scripts");
    let file = asset(&dir);
    for (label, script) in scripts() {
        let play = write(&dir, "play.json", &script);
        if !both_ways(&file, &play, &[], label) {
            return;
        }
    }
    // With the nodes' poses: the mixer fed by the playback pass.
    let (label, script) = scripts().swap_remove(2);
    let play = write(&dir, "play.json", &script);
    both_ways(&file, &play, &["--nodes"], label);
}

/// A small xorshift generator: the same script on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A command of a random kind for `instance` (those a script may give at
/// any time: nothing a full table or a missing layer refuses).
fn random_command(rng: &mut Rng, instance: usize) -> Value {
    let a = rng.next() % 3;
    let d = 0.05 + rng.unit() * 0.6;
    let speed = [1.0, -1.0, 0.5, 1.7, 0.0][(rng.next() % 5) as usize];
    let wrap = ["once", "repeat", "pingpong"][(rng.next() % 3) as usize];
    let reps = [json!(null), json!(1), json!(3)][(rng.next() % 3) as usize].clone();
    match rng.next() % 9 {
        0 => json!({"instance": instance, "play": a}),
        1 => json!({"instance": instance, "crossfade": {"to": a, "duration": d}}),
        2 => {
            json!({"instance": instance, "crossfade_at": {"to": a, "duration": d, "at": rng.unit() * 2.0 - 0.5}})
        }
        3 => json!({"instance": instance, "speed": speed}),
        4 => json!({"instance": instance, "wrap": wrap}),
        5 => json!({"instance": instance, "animation": a, "repetitions": reps}),
        6 => json!({"instance": instance, "seek": rng.unit() * 3.0 - 1.0}),
        7 => json!({"instance": instance, "pause": rng.next().is_multiple_of(4)}),
        _ => json!({"instance": instance, "fade_out": {"animation": a, "duration": d}}),
    }
}

#[test]
fn a_long_run_of_uneven_steps_prints_the_same_frames_on_the_gpu() {
    let dir = temp_dir("cli_gpu_play_long");
    let file = asset(&dir);
    let mut rng = Rng(0x51ed_2705_9e37_79b9);
    let frames: Vec<Value> = (0..3000)
        .map(|k| {
            let dt = match rng.next() % 50 {
                0 => 0.0,
                1 => 1.3 + rng.unit(),
                _ => rng.unit() * 0.05,
            };
            let mut commands = Vec::new();
            for i in 0..6 {
                if k == 0 {
                    commands.push(json!({"instance": i, "play": i % 3}));
                } else if rng.next().is_multiple_of(40) {
                    commands.push(random_command(&mut rng, i));
                }
            }
            json!({"dt": dt, "commands": commands})
        })
        .collect();
    let markers = json!([{"animation": 0, "time": 0.5, "name": "mid"}, {"animation": 2, "time": 0.1, "name": "early"}]);
    let script = json!({"instances": 6, "root": "hips", "markers": markers, "frames": frames});
    let play = write(&dir, "long.json", &script);
    both_ways(&file, &play, &[], "3000 uneven frames");
}

#[test]
fn a_refused_command_is_refused_as_play_refuses_it() {
    // A layer removed twice: the second is refused, in one line, after
    // the same frames.
    let dir = temp_dir("cli_gpu_play_refused");
    let file = asset(&dir);
    let script = json!({"instances": 1, "frames": [
        {"dt": 0.1, "commands": [{"instance": 0, "play": 0, "layer": {"animation": 2}}]},
        {"dt": 0.1, "commands": [{"instance": 0, "remove": 2}]},
        {"dt": 0.1, "commands": [{"instance": 0, "remove": 2}]}
    ]});
    let play = write(&dir, "refused.json", &script);
    // The first two frames alone run alike (or there is no adapter).
    let fine = json!({"instances": 1, "frames": script["frames"].as_array().unwrap()[..2]});
    if !both_ways(
        &file,
        &write(&dir, "fine.json", &fine),
        &[],
        "before the refusal",
    ) {
        return;
    }
    let args = |gpu: bool| {
        let mut a = vec![file.to_str().unwrap(), "--play", play.to_str().unwrap()];
        if gpu {
            a.push("--gpu-playback");
        }
        run(&a)
    };
    let (cpu, gpu) = (args(false), args(true));
    assert_eq!(cpu.status.code(), Some(2));
    assert_eq!(gpu.status.code(), Some(2));
    assert_eq!(stderr(&cpu).trim(), stderr(&gpu).trim());
    assert_eq!(stderr(&gpu).trim().lines().count(), 1, "{}", stderr(&gpu));
    // Both printed the frames before the refusal alike.
    same_frames(&stdout(&cpu), &stdout(&gpu), "before the refusal");
}
