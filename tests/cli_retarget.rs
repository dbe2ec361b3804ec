//! `sample FILE --clips SOURCE --retarget MAP.json`: the clips of another
//! rig retargeted onto FILE's through a bone map (`common/pack.rs` builds
//! the character and its pack: the run file's hips rest twice as high as
//! the character's). Every node's local pose by hand, the combined clip
//! list's order, `--joints` against the library's CPU twin, GPU against
//! CPU with `--compare`, and every refusal with one line and exit 2.
#![cfg(feature = "gltf")]

#[path = "common/gltf_builder.rs"]
mod gltf_builder;
#[path = "common/pack.rs"]
mod pack;
#[path = "common/sample_cli.rs"]
mod sample_cli;

use std::path::PathBuf;

use keyframe_gpu::gltf::{self, Document};
use keyframe_gpu::{cpu, BoneMap, Instance, Rig, WrapMode};
use sample_cli::{floats, gpu_ran, json_line, run, s, stderr, stdout};
use serde_json::Value;

struct Files {
    dir: PathBuf,
    character: PathBuf,
    run: PathBuf,
    idle: PathBuf,
    map: PathBuf,
}

/// Hips, Spine and Head: nodes both pack files and the character have.
const MAP: &str =
    r#"{"root": "Hips", "bones": {"Hips": "Hips", "Spine": "Spine", "Head": "Head"}}"#;

fn files(test: &str) -> Files {
    let dir = gltf_builder::temp_dir(test);
    let (character, run, idle) = pack::write(&dir);
    let map = dir.join("map.json");
    std::fs::write(&map, MAP).unwrap();
    Files {
        dir,
        character,
        run,
        idle,
        map,
    }
}

fn assert_close(got: &Value, want: &[f64], tol: f64, what: &str) {
    let got = floats(got);
    assert!(
        got.len() == want.len() && got.iter().zip(want).all(|(a, b)| (a - b).abs() <= tol),
        "{what}: {got:?}, expected {want:?}"
    );
}

/// A rotation of `degrees` about z, as (x, y, z, w).
fn about_z(degrees: f64) -> [f64; 4] {
    let h = degrees.to_radians() / 2.0;
    [0.0, 0.0, h.sin(), h.cos()]
}

#[test]
fn retargeted_clips_pose_every_node_of_the_target() {
    let f = files("retarget-json");
    let out = run(&[
        s(&f.character),
        "--clips",
        s(&f.idle),
        "--clips",
        s(&f.run),
        "--retarget",
        s(&f.map),
        "--animation",
        "1",
        "--times",
        "0,0.5,1",
        "--json",
        "--backend",
        "cpu",
    ]);
    let v = json_line(&out);
    // The combined list: FILE's clips (none), then idle's, then run's.
    assert_eq!(v["animation"], 1);
    assert_eq!(v["file"], "character.glb");
    let samples = v["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 3);
    for (k, t) in [0.0, 0.5, 1.0].into_iter().enumerate() {
        assert_eq!(samples[k]["time"], t);
        let nodes = samples[k]["nodes"].as_array().unwrap();
        // Every node of the character, in index order.
        assert_eq!(nodes.len(), 10);
        for (n, node) in nodes.iter().enumerate() {
            assert_eq!(node["node"], n);
        }
        // The root: the run's hips climb from (0, 2, 0) to (0, 2.4, 0.2)
        // over 1 s; the character's hips rest at height 1, half the
        // run's, and move by half the step: (0, 1 + 0.2 t, 0.1 t).
        assert_close(
            &nodes[2]["translation"],
            &[0.0, 1.0 + 0.2 * t, 0.1 * t],
            1e-6,
            "hips",
        );
        // The head (mapped, not animated by Run) and the hands (animated
        // by Run, not mapped) stay at rest.
        for n in [4, 7, 8] {
            assert_close(&nodes[n]["rotation"], &[0.0, 0.0, 0.0, 1.0], 0.0, "at rest");
        }
        assert_close(
            &nodes[3]["translation"],
            &[0.0, 0.5, 0.0],
            0.0,
            "spine keeps its rest",
        );
    }
    // The spine (identity rests on both sides: no correction) turns as
    // Run's does: 30 degrees about z at 0.5 s, -20 at 1 s.
    assert_close(
        &samples[1]["nodes"][3]["rotation"],
        &about_z(30.0),
        1e-6,
        "spine at 0.5 s",
    );
    assert_close(
        &samples[2]["nodes"][3]["rotation"],
        &about_z(-20.0),
        1e-6,
        "spine at 1 s",
    );

    // Idle (animation 0): the head turns from -15 to 15 degrees about y;
    // the spine's scale track is left out by the retarget.
    let out = run(&[
        s(&f.character),
        "--clips",
        s(&f.idle),
        "--clips",
        s(&f.run),
        "--retarget",
        s(&f.map),
        "--times",
        "0",
        "--json",
        "--backend",
        "cpu",
    ]);
    let v = json_line(&out);
    assert_eq!(v["animation"], 0);
    let nodes = &v["samples"][0]["nodes"];
    let h = (-7.5f64).to_radians();
    assert_close(
        &nodes[4]["rotation"],
        &[0.0, h.sin(), 0.0, h.cos()],
        1e-6,
        "head",
    );
    assert_close(&nodes[3]["scale"], &[1.0, 1.0, 1.0], 0.0, "spine scale");
}

#[test]
fn the_maps_up_axis_measures_the_heights() {
    // Along (0, 0.6, 0.8) the character's hips rest at height 0.6 and the
    // run's at 1.2: the same ratio 1/2 as along +Y, the same motion.
    let f = files("retarget-up");
    let tilted = f.dir.join("tilted.json");
    std::fs::write(
        &tilted,
        r#"{"root": "Hips", "bones": {"Hips": "Hips", "Spine": "Spine"}, "up": [0, 0.6, 0.8]}"#,
    )
    .unwrap();
    let out = run(&[
        s(&f.character),
        "--clips",
        s(&f.run),
        "--retarget",
        s(&tilted),
        "--times",
        "1",
        "--json",
        "--backend",
        "cpu",
    ]);
    let v = json_line(&out);
    assert_close(
        &v["samples"][0]["nodes"][2]["translation"],
        &[0.0, 1.2, 0.1],
        1e-6,
        "hips at 1 s",
    );
}

/// The library the command line builds for `--clips run --retarget MAP`.
fn retargeted(f: &Files) -> keyframe_gpu::BoundLibrary {
    let target = Rig::from_document(&Document::load(&f.character).unwrap()).unwrap();
    let run = gltf::load(&f.run).unwrap();
    let source = Rig::from_document(&run.document).unwrap();
    let map: BoneMap = MAP.parse().unwrap();
    run.library.retarget(&source, &target, &map).unwrap()
}

#[test]
fn retargeted_joints_are_the_librarys() {
    let f = files("retarget-joints");
    let out = run(&[
        s(&f.character),
        "--clips",
        s(&f.run),
        "--retarget",
        s(&f.map),
        "--joints",
        "--times",
        "0.3,0.8",
        "--json",
        "--backend",
        "cpu",
    ]);
    let v = json_line(&out);
    let bound = retargeted(&f);
    let instances: Vec<Instance> = [0.3, 0.8]
        .iter()
        .map(|&t| Instance::new(0, t).with_wrap(WrapMode::Clamp))
        .collect();
    let poses = cpu::poses(&bound, &instances).unwrap();
    for i in 0..2 {
        let skins = v["samples"][i]["skins"].as_array().unwrap();
        let joints = skins[0]["joints"].as_array().unwrap();
        let want = poses.joints(i as u32, 0).unwrap();
        assert_eq!(joints.len(), want.len());
        for (j, m) in joints.iter().enumerate() {
            let w: Vec<f64> = want[j]
                .to_cols_array()
                .iter()
                .map(|&x| f64::from(x))
                .collect();
            assert_close(m, &w, 1e-6, &format!("sample {i} joint {j}"));
        }
    }
}

#[test]
fn retargeted_clips_on_the_gpu_match_the_cpu() {
    let f = files("retarget-compare");
    let out = run(&[
        s(&f.character),
        "--clips",
        s(&f.run),
        "--retarget",
        s(&f.map),
        "--compare",
        "--times",
        "0,0.25,0.6,1",
    ]);
    if !gpu_ran("retargeted_clips_on_the_gpu_match_the_cpu", &out) {
        return;
    }
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("compare gpu/cpu: local poses"),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains(": ok"), "{}", stdout(&out));
}

/// Runs `args` and checks it fails with exit 2 and one line naming
/// `needle`.
fn refused(args: &[&str], needle: &str) {
    let out = run(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
    assert!(stdout(&out).is_empty(), "{args:?}");
}

#[test]
fn bad_maps_and_options_are_refused_with_one_line() {
    let f = files("retarget-refusals");
    let map = |name: &str, text: &str| {
        let p = f.dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let cases = [
        (
            map(
                "neck.json",
                r#"{"root": "Hips", "bones": {"Hips": "Hips", "Neck": "Spine"}}"#,
            ),
            "target bone \"Neck\" is not a node of the target rig",
        ),
        (
            map(
                "tail.json",
                r#"{"root": "Hips", "bones": {"Hips": "Hips", "Spine": "Spine", "Sword": "Tail2"}}"#,
            ),
            "source bone \"Tail2\" is not a node of the source rig",
        ),
        (
            map(
                "hand.json",
                r#"{"root": "Hips", "bones": {"Hips": "Hips", "Hand": "Hand"}}"#,
            ),
            "\"Hand\" names 2 nodes",
        ),
        (
            map(
                "twice.json",
                r#"{"root": "Hips", "bones": {"Hips": "Hips", "Spine": "Hips"}}"#,
            ),
            "source bone \"Hips\" is mapped twice",
        ),
        (
            map(
                "root.json",
                r#"{"root": "Pelvis", "bones": {"Hips": "Hips"}}"#,
            ),
            "the root \"Pelvis\" is not one of the mapped target bones",
        ),
        (
            map(
                "order.json",
                r#"{"root": "Hips", "bones": {"Hips": "Spine", "Spine": "Hips"}}"#,
            ),
            "target bone \"Spine\" maps to \"Hips\"",
        ),
        (map("broken.json", "{\"root\": "), "bone map JSON"),
        // The up axis is read: along +Z both hips rest at height 0.
        (
            map(
                "z-up.json",
                r#"{"root": "Hips", "bones": {"Hips": "Hips"}, "up": [0, 0, 1]}"#,
            ),
            "rest heights (along the up axis [0.0, 0.0, 1.0]) 0 in the target rig and 0 in the source rig",
        ),
        (
            map(
                "long-up.json",
                r#"{"root": "Hips", "bones": {"Hips": "Hips"}, "up": [0, 0, 2]}"#,
            ),
            "up axis [0.0, 0.0, 2.0] is not a unit vector",
        ),
        (
            map(
                "bad-up.json",
                r#"{"root": "Hips", "bones": {"Hips": "Hips"}, "up": "y"}"#,
            ),
            "\"up\" is not an array of three numbers",
        ),
    ];
    for (path, needle) in &cases {
        refused(
            &[
                s(&f.character),
                "--clips",
                s(&f.run),
                "--retarget",
                s(path),
                "--backend",
                "cpu",
            ],
            needle,
        );
    }
    let missing = f.dir.join("missing.json");
    refused(
        &[
            s(&f.character),
            "--clips",
            s(&f.run),
            "--retarget",
            s(&missing),
        ],
        "cannot read",
    );
    refused(
        &[s(&f.character), "--retarget", s(&f.map)],
        "--retarget needs --clips",
    );
    refused(
        &[
            s(&f.character),
            "--clips",
            s(&f.run),
            "--retarget",
            s(&f.map),
            "--plot",
            "x.png",
        ],
        "--plot cannot be combined with --retarget",
    );
}
