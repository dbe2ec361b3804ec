//! `sample FILE --clips A --clips B`: clips of animation-only files played
//! on FILE's rig, bound by node name (`common/pack.rs` builds a character
//! and its pack). Values by hand, the combined clip list's order, `node`
//! as FILE's index, `--mix` and `--joints` against the library's CPU twin,
//! GPU against CPU with `--compare`, and every refusal with one line and
//! exit 2.
#![cfg(feature = "gltf")]

mod common;
#[path = "common/gltf_builder.rs"]
mod gltf_builder;
#[path = "common/pack.rs"]
mod pack;
#[path = "common/sample_cli.rs"]
mod sample_cli;

use std::path::{Path, PathBuf};

use keyframe_gpu::gltf::{self, Document};
use keyframe_gpu::{cpu, Action, AnimationLibrary, Instance, Rig};
use sample_cli::{floats, gpu_ran, json_line, run, s, stderr, stdout};
use serde_json::{json, Value};

struct Files {
    dir: PathBuf,
    character: PathBuf,
    run: PathBuf,
    idle: PathBuf,
}

fn files(test: &str) -> Files {
    let dir = gltf_builder::temp_dir(test);
    let (character, run, idle) = pack::write(&dir);
    Files {
        dir,
        character,
        run,
        idle,
    }
}

fn close(got: &[f64], want: &[f64], tol: f64) -> bool {
    got.len() == want.len() && got.iter().zip(want).all(|(a, b)| (a - b).abs() <= tol)
}

/// The same library the command line builds: the first file's clips (none
/// here), then each `--clips` file's, bound to the character.
fn bound_to_character(f: &Files, clips: &[&Path]) -> keyframe_gpu::BoundLibrary {
    let rig = Rig::from_document(&Document::load(&f.character).unwrap()).unwrap();
    let all = clips
        .iter()
        .flat_map(|p| gltf::load(p).unwrap().library.clips().to_vec())
        .collect();
    AnimationLibrary::new(all).unwrap().bind(&rig).unwrap()
}

#[test]
fn a_clip_of_another_file_samples_on_the_characters_nodes() {
    let f = files("clips-json");
    let out = run(&[
        s(&f.character),
        "--clips",
        s(&f.run),
        "--json",
        "--backend",
        "cpu",
        "--times",
        "0.25",
    ]);
    let v = json_line(&out);
    assert_eq!(v["animation"], 0);
    let channels = v["samples"][0]["channels"].as_array().unwrap();
    // Hips, Spine and the two Hands, at the character's node indices
    // (2, 3, 7, 8); Tail and the unnamed node bind to nothing and are
    // left out.
    let nodes: Vec<(u64, &str)> = channels
        .iter()
        .map(|c| (c["node"].as_u64().unwrap(), c["path"].as_str().unwrap()))
        .collect();
    assert_eq!(
        nodes,
        [
            (2, "translation"),
            (3, "rotation"),
            (7, "rotation"),
            (8, "rotation")
        ]
    );
    // By hand at 0.25 s: Hips a quarter of the way from (0, 2, 0) to
    // (0, 2.4, 0.2); the right Hand before its STEP key: the identity.
    assert!(close(
        &floats(&channels[0]["value"]),
        &[0.0, 2.1, 0.05],
        1e-6
    ));
    assert!(close(
        &floats(&channels[3]["value"]),
        &[0.0, 0.0, 0.0, 1.0],
        0.0
    ));
}

#[test]
fn the_combined_list_is_the_first_files_clips_then_each_clips_file() {
    let f = files("clips-order");
    let out = run(&[
        s(&f.character),
        "--clips",
        s(&f.run),
        "--clips",
        s(&f.idle),
        "--animation",
        "1",
        "--json",
        "--backend",
        "cpu",
        "--times",
        "1",
    ]);
    let v = json_line(&out);
    assert_eq!(v["animation"], 1);
    let channels = v["samples"][0]["channels"].as_array().unwrap();
    // Idle: Head (node 4) rotation, Spine (node 3) scale, halfway at 1 s.
    assert_eq!(channels[0]["node"], 4);
    assert_eq!(channels[1]["node"], 3);
    assert!(close(
        &floats(&channels[1]["value"]),
        &[1.05, 0.95, 1.05],
        1e-6
    ));
    let q = floats(&channels[0]["value"]);
    assert!(close(&q, &[0.0, 0.0, 0.0, 1.0], 1e-6), "{q:?}");
    // A file that has its own clips keeps them first.
    let out = run(&[
        s(&f.run),
        "--clips",
        s(&f.idle),
        "--all-animations",
        "--json",
    ]);
    if gpu_ran("clips-own-first", &out) {
        let text = stdout(&out);
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        // Run on its own file: every track, the unnamed node and Tail too.
        assert_eq!(
            lines[0]["samples"][0]["channels"].as_array().unwrap().len(),
            6
        );
        // Idle bound by name to the run file's Head (8) and Spine (3).
        let idle = lines[1]["samples"][0]["channels"].as_array().unwrap();
        assert_eq!(
            (idle[0]["node"].clone(), idle[1]["node"].clone()),
            (json!(8), json!(3))
        );
    }
}

#[test]
fn mix_and_joints_index_the_combined_list() {
    let f = files("clips-mix");
    let mix = f.dir.join("mix.json");
    std::fs::write(
        &mix,
        json!({"samples": [
            {"actions": [
                {"animation": 0, "time": 0.3, "weight": 0.5},
                {"animation": 1, "time": 0.6, "weight": 0.5}
            ]},
            {"actions": [{"animation": 1, "time": 1.5, "weight": 1.0}]}
        ]})
        .to_string(),
    )
    .unwrap();
    let bound = bound_to_character(&f, &[&f.run, &f.idle]);
    let actions = [
        Action::new(0, 0.3).with_weight(0.5),
        Action::new(1, 0.6).with_weight(0.5),
        Action::new(1, 1.5),
    ];
    let twin = cpu::mixed_poses(&bound, &[], &actions, &[2, 1]).unwrap();
    for backend in ["cpu", "gpu"] {
        let out = run(&[
            s(&f.character),
            "--clips",
            s(&f.run),
            "--clips",
            s(&f.idle),
            "--mix",
            s(&mix),
            "--json",
            "--backend",
            backend,
        ]);
        if !gpu_ran("clips-mix", &out) {
            continue;
        }
        let v = json_line(&out);
        let samples = v["samples"].as_array().unwrap();
        assert_eq!(samples.len(), 2);
        for (c, sample) in samples.iter().enumerate() {
            let nodes = sample["nodes"].as_array().unwrap();
            assert_eq!(nodes.len(), 10, "every node of the character");
            for (n, node) in nodes.iter().enumerate() {
                let want = twin.local(c as u32, n as u32).unwrap();
                let t = floats(&node["translation"]);
                let want_t: Vec<f64> = want.translation.to_array().map(f64::from).to_vec();
                assert!(close(&t, &want_t, 1e-5), "{backend} {c} {n}: {t:?}");
                let r = floats(&node["rotation"]);
                let want_r: Vec<f64> = want.rotation.to_array().map(f64::from).to_vec();
                let neg: Vec<f64> = want_r.iter().map(|x| -x).collect();
                assert!(
                    close(&r, &want_r, 2e-5) || close(&r, &neg, 2e-5),
                    "{backend} {c} {n}: {r:?}"
                );
            }
        }
        // The Head in sample 1 is the idle's alone at 1.5 s: by hand,
        // 7.5 degrees about y, three quarters of the way from -15 to 15.
        let head = floats(&samples[1]["nodes"][4]["rotation"]);
        let want = pack::quat([0.0, 1.0, 0.0], 7.5).map(f64::from);
        assert!(close(&head, &want, 2e-5), "{head:?}");
    }
    // --joints: every skin's joint matrices of the blended pose, and of a
    // plain clip, as the twin gives them.
    let out = run(&[
        s(&f.character),
        "--clips",
        s(&f.run),
        "--joints",
        "--json",
        "--backend",
        "cpu",
        "--times",
        "0.4",
    ]);
    let v = json_line(&out);
    let joints = v["samples"][0]["skins"][0]["joints"].as_array().unwrap();
    assert_eq!(joints.len(), pack::CHARACTER_JOINTS.len());
    let run_bound = bound_to_character(&f, &[&f.run]);
    let twin = cpu::poses(&run_bound, &[Instance::new(0, 0.4)]).unwrap();
    for (j, m) in joints.iter().enumerate() {
        let want: Vec<f64> = twin.joints(0, 0).unwrap()[j]
            .to_cols_array()
            .map(f64::from)
            .to_vec();
        assert!(close(&floats(m), &want, 1e-5), "joint {j}");
    }
}

#[test]
fn gpu_and_cpu_agree_on_foreign_clips() {
    let f = files("clips-compare");
    for joints in [false, true] {
        let mut args = vec![
            s(&f.character),
            "--clips",
            s(&f.run),
            "--clips",
            s(&f.idle),
            "--all-animations",
            "--compare",
        ];
        if joints {
            args.push("--joints");
        }
        let out = run(&args);
        if !gpu_ran("clips-compare", &out) {
            return;
        }
        assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
        assert!(!stdout(&out).contains("FAIL"), "{}", stdout(&out));
    }
}

#[test]
fn refusals_are_one_line_and_exit_2() {
    let f = files("clips-refusals");
    // A file whose nodes share no name with the character.
    let stranger = f.dir.join("stranger.glb");
    let mut nodes = pack::idle_nodes();
    for (n, name) in nodes.iter_mut().zip(["A", "B", "C", "D"]) {
        n.name = Some(name);
    }
    std::fs::write(
        &stranger,
        pack::file(&nodes, Some(("Other", &pack::idle_channels())), None),
    )
    .unwrap();
    let broken = f.dir.join("broken.glb");
    std::fs::write(&broken, b"glTF\x02\x00\x00\x00 broken").unwrap();
    for (args, expect) in [
        (vec![s(&f.character)], "no animations"),
        (
            vec![s(&f.character), "--clips", s(&stranger)],
            "no track binds",
        ),
        (vec![s(&f.character), "--clips", s(&broken)], "broken.glb"),
        (vec!["--clips", s(&f.run)], "--clips needs a FILE"),
        (
            vec![s(&f.character), "--clips", s(&f.run), "--animation", "3"],
            "--animation 3",
        ),
    ] {
        let out = run(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains(expect),
            "{args:?}: expected {expect:?} in {err}"
        );
    }
}

#[test]
fn plan_prints_the_entry_points_it_dispatches() {
    let f = files("clips-plan");
    for extra in [&[][..], &["--clips", s(&f.idle)][..]] {
        let mut args = vec![
            s(&f.character),
            "--clips",
            s(&f.run),
            "--plan",
            "--instances",
            "200",
        ];
        args.extend_from_slice(extra);
        let out = run(&args);
        if !gpu_ran("clips-plan", &out) {
            return;
        }
        let text = stdout(&out);
        assert!(text.contains("plan for 200 instances"), "{text}");
        let entries: Vec<&str> = text
            .lines()
            .filter_map(|l| l.trim_start().split_once(": ").map(|(_, rest)| rest))
            .filter_map(|rest| rest.split_whitespace().next())
            .filter(|e| e.ends_with("_main"))
            .collect();
        assert!(entries.iter().any(|e| e.starts_with("sample")), "{text}");
        assert!(entries.iter().any(|e| e.starts_with("skin")), "{text}");
        // Each is an entry point of the shaders the crate builds its
        // modules from.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
        let shaders: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|f| {
                let path = f
                    .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                    .path();
                std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            })
            .collect();
        for e in entries {
            let decl = format!("fn {e}(");
            assert!(
                shaders.iter().any(|m| m.contains(&decl)),
                "{e} is not an entry point"
            );
        }
    }
}
