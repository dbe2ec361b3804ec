//! `sample --joints`: each skin's joint matrices, as JSON and as a summary,
//! on both backends, checked against a skinned chain whose joint matrices
//! this test computes by hand in f64 with glam's `D*` types (no code of the
//! crate involved); `--all-animations`, `--compare`, the "no skins" error,
//! and GPU vs CPU agreement on the skinned assets in ../shared/assets.
#![cfg(feature = "gltf")]

#[path = "common/gltf_builder.rs"]
mod gltf_builder;
#[path = "common/sample_cli.rs"]
mod sample_cli;

use std::path::{Path, PathBuf};

use glam::{DMat4, DQuat, DVec3};
use gltf_builder::*;
use sample_cli::{gpu_ran, run, stderr, stdout};
use serde_json::{json, Value};

// ---------------------------------------------------------------------------
// The asset and its joint matrices by hand.

const DEG: f64 = std::f64::consts::PI / 180.0;

/// Rest transforms (translation, rotation, scale) of the five nodes.
fn rest(node: usize) -> (DVec3, DQuat, DVec3) {
    match node {
        // Joint A (root, parent of 1 and 3).
        0 => (
            DVec3::new(1.0, 2.0, 0.0),
            DQuat::from_rotation_y(30.0 * DEG),
            DVec3::ONE,
        ),
        // Joint B (child of 0), non-uniform scale; rotation animated.
        1 => (
            DVec3::new(0.0, 2.0, 0.0),
            DQuat::IDENTITY,
            DVec3::new(2.0, 1.0, 1.0),
        ),
        // Mesh node of skin 0 (root), with a transform of its own.
        2 => (
            DVec3::new(0.0, 0.0, 3.0),
            DQuat::from_rotation_x(90.0 * DEG),
            DVec3::splat(2.0),
        ),
        // First mesh node of skin 1 (child of joint A).
        3 => (DVec3::new(0.0, 1.0, 0.0), DQuat::IDENTITY, DVec3::ONE),
        // Second node using skin 1 (root, identity).
        _ => (DVec3::ZERO, DQuat::IDENTITY, DVec3::ONE),
    }
}

/// Skin 0's inverse bind matrices (not the inverses of anything in
/// particular: any matrix must come through as given).
fn ibm(joint: usize) -> DMat4 {
    match joint {
        0 => DMat4::from_translation(DVec3::new(-1.0, -2.0, 0.0)),
        _ => {
            DMat4::from_translation(DVec3::new(0.0, -4.0, 0.5))
                * DMat4::from_rotation_z(10.0 * DEG)
                * DMat4::from_scale(DVec3::new(0.5, 1.0, 1.0))
        }
    }
}

fn to_f32(m: DMat4) -> Vec<f32> {
    m.to_cols_array().iter().map(|&x| x as f32).collect()
}

/// Nodes 0..5 as above; skin 0 = joints [0, 1] with [`ibm`], used by node
/// 2; skin 1 = joints [1, 0] without inverse bind matrices, used by nodes 3
/// and 4. Animation 0 ("bend"): node 1 rotation LINEAR about z, 0 degrees
/// at 1 s to 90 degrees at 2 s (the clip starts after 0). Animation 1
/// ("shift"): node 0 translation STEP, (1, 2, 0) at 0 s, (3, 0, -1) at 1 s.
/// Returns the builder and skin 0's inverse-bind-matrix accessor.
fn skinned() -> (Builder, usize) {
    let mut b = Builder::new();
    let mesh = b.mesh_with_targets(0);
    b.meshes[mesh]["primitives"][0]
        .as_object_mut()
        .unwrap()
        .remove("targets");
    for n in 0..5 {
        b.node(if n >= 2 { Some(mesh) } else { None });
        let (t, r, s) = rest(n);
        b.nodes[n]["translation"] = json!([t.x, t.y, t.z]);
        b.nodes[n]["rotation"] = json!([r.x, r.y, r.z, r.w]);
        b.nodes[n]["scale"] = json!([s.x, s.y, s.z]);
    }
    b.nodes[0]["children"] = json!([1, 3]);
    b.nodes[2]["skin"] = json!(0);
    b.nodes[3]["skin"] = json!(1);
    b.nodes[4]["skin"] = json!(1);
    let ibms: Vec<f32> = [ibm(0), ibm(1)].into_iter().flat_map(to_f32).collect();
    let ibm_acc = b.accessor_f32(&ibms, "MAT4");
    let keys = b.accessor_f32(&[1.0, 2.0], "SCALAR");
    let q = DQuat::from_rotation_z(90.0 * DEG);
    let rot = b.accessor_f32(
        &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, q.z as f32, q.w as f32],
        "VEC4",
    );
    b.animation("bend", &[(keys, rot, "LINEAR")], &[(0, 1, "rotation")]);
    let keys2 = b.accessor_f32(&[0.0, 1.0], "SCALAR");
    let tr = b.accessor_f32(&[1.0, 2.0, 0.0, 3.0, 0.0, -1.0], "VEC3");
    b.animation("shift", &[(keys2, tr, "STEP")], &[(0, 0, "translation")]);
    (b, ibm_acc)
}

fn skinned_glb() -> Vec<u8> {
    let (b, ibm_acc) = skinned();
    let mut root = b.json(None);
    root["skins"] = json!([
        {"joints": [0, 1], "inverseBindMatrices": ibm_acc},
        {"joints": [1, 0]},
    ]);
    root["scenes"] = json!([{"nodes": [0, 2, 4]}]);
    glb(&serde_json::to_vec(&root).unwrap(), Some(&b.bin))
}

fn write_skinned(test: &str) -> (PathBuf, PathBuf) {
    let dir = temp_dir(test);
    let path = dir.join("skinned chain.glb");
    std::fs::write(&path, skinned_glb()).unwrap();
    (dir, path)
}

/// Local matrix of `node` at time `t` of animation `anim`, by hand.
fn local(node: usize, anim: usize, t: f64) -> DMat4 {
    let (mut tr, mut r, s) = rest(node);
    if anim == 0 && node == 1 {
        // LINEAR slerp between two rotations about z is linear in angle.
        let u = (t - 1.0).clamp(0.0, 1.0);
        r = DQuat::from_rotation_z(90.0 * DEG * u);
    }
    if anim == 1 && node == 0 {
        tr = if t < 1.0 {
            DVec3::new(1.0, 2.0, 0.0)
        } else {
            DVec3::new(3.0, 0.0, -1.0)
        };
    }
    DMat4::from_scale_rotation_translation(s, r, tr)
}

/// Expected `[(skin, node, joints)]` at time `t` of animation `anim`.
fn expected(anim: usize, t: f64) -> Vec<(u64, u64, Vec<DMat4>)> {
    let l = |n| local(n, anim, t);
    let g0 = l(0);
    let g1 = g0 * l(1);
    let g2 = l(2);
    let g3 = g0 * l(3);
    vec![
        (
            0,
            2,
            vec![g2.inverse() * g0 * ibm(0), g2.inverse() * g1 * ibm(1)],
        ),
        (1, 3, vec![g3.inverse() * g1, g3.inverse() * g0]),
    ]
}

/// One `--joints --json` line checked against the schema: samples as
/// (time, [(skin, node, joints)]).
type Skins = Vec<(u64, Option<u64>, Vec<Vec<f64>>)>;

fn parse_joints(line: &str, file: &str, animation: u64) -> Vec<(f64, Skins)> {
    let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["animation", "file", "samples"], "{line}");
    assert_eq!(v["file"], file);
    assert_eq!(v["animation"], animation);
    v["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let mut keys: Vec<&str> = s.as_object().unwrap().keys().map(String::as_str).collect();
            keys.sort_unstable();
            assert_eq!(keys, ["skins", "time"], "{s}");
            let skins = s["skins"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| {
                    let mut keys: Vec<&str> =
                        k.as_object().unwrap().keys().map(String::as_str).collect();
                    keys.sort_unstable();
                    assert_eq!(keys, ["joints", "node", "skin"], "{k}");
                    let joints = k["joints"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|m| {
                            let m = m.as_array().unwrap();
                            assert_eq!(m.len(), 16, "{k}");
                            m.iter().map(|x| x.as_f64().unwrap()).collect()
                        })
                        .collect();
                    (k["skin"].as_u64().unwrap(), k["node"].as_u64(), joints)
                })
                .collect();
            (s["time"].as_f64().unwrap(), skins)
        })
        .collect()
}

fn check_against_hand(samples: &[(f64, Skins)], anim: usize, times: &[f64], what: &str) {
    const TOL: f64 = 2e-5;
    assert_eq!(samples.len(), times.len(), "{what}");
    for ((time, skins), &t) in samples.iter().zip(times) {
        assert_eq!(*time, t, "{what}");
        let want = expected(anim, t);
        assert_eq!(skins.len(), want.len(), "{what} t={t}");
        for ((skin, node, joints), (ws, wn, wj)) in skins.iter().zip(&want) {
            assert_eq!(*skin, *ws, "{what} t={t}");
            assert_eq!(*node, Some(*wn), "{what} t={t} skin {skin}");
            assert_eq!(joints.len(), wj.len(), "{what} t={t} skin {skin}");
            for (j, (got, w)) in joints.iter().zip(wj).enumerate() {
                let w = w.to_cols_array();
                let err = got
                    .iter()
                    .zip(w)
                    .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
                assert!(
                    err <= TOL,
                    "{what} anim {anim} t={t} skin {skin} joint {j}: error {err:e}\n got  {got:?}\n want {w:?}"
                );
            }
        }
    }
}

const TIMES: [f64; 6] = [1.5, 0.0, 1.25, 2.0, 7.0, -1.0];
const TIMES_ARG: &str = "1.5,0,1.25,2,7,-1";

#[test]
fn joints_json_on_the_cpu_backend_match_the_hand_computed_chain() {
    let (dir, path) = write_skinned("cli-joints-cpu");
    let p = path.to_str().unwrap();
    let o = run(&[
        p,
        "--joints",
        "--json",
        "--backend",
        "cpu",
        "--times",
        TIMES_ARG,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 1, "{out}");
    let samples = parse_joints(out.trim(), "skinned chain.glb", 0);
    check_against_hand(&samples, 0, &TIMES, "cpu");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn joints_json_on_the_gpu_backend_match_the_hand_computed_chain() {
    let (dir, path) = write_skinned("cli-joints-gpu");
    let p = path.to_str().unwrap();
    // --backend gpu is the default.
    let o = run(&[p, "--joints", "--json", "--times", TIMES_ARG]);
    if gpu_ran("joints_json_gpu", &o) {
        assert!(o.status.success(), "{}", stderr(&o));
        let out = stdout(&o);
        assert_eq!(out.lines().count(), 1, "{out}");
        let samples = parse_joints(out.trim(), "skinned chain.glb", 0);
        check_against_hand(&samples, 0, &TIMES, "gpu");
    }
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn joints_all_animations_one_line_each_and_default_times() {
    let (dir, path) = write_skinned("cli-joints-all");
    let p = path.to_str().unwrap();
    for backend in ["cpu", "gpu"] {
        let o = run(&[
            p,
            "--joints",
            "--json",
            "--all-animations",
            "--backend",
            backend,
        ]);
        if backend == "gpu" && !gpu_ran("joints_all_animations", &o) {
            continue;
        }
        assert!(o.status.success(), "{backend}: {}", stderr(&o));
        let out = stdout(&o);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{backend}: {out}");
        // Default times: the keys plus the midpoints.
        let s0 = parse_joints(lines[0], "skinned chain.glb", 0);
        check_against_hand(&s0, 0, &[1.0, 1.5, 2.0], backend);
        let s1 = parse_joints(lines[1], "skinned chain.glb", 1);
        check_against_hand(&s1, 1, &[0.0, 0.5, 1.0], backend);
    }
    // --animation 1 alone, explicit times around the STEP key.
    let o = run(&[
        p,
        "--joints",
        "--json",
        "--animation",
        "1",
        "--backend",
        "cpu",
        "--times",
        "0.999,1,3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = parse_joints(stdout(&o).trim(), "skinned chain.glb", 1);
    check_against_hand(&s, 1, &[0.999, 1.0, 3.0], "cpu --animation 1");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn joints_compare_reports_per_skin_and_keeps_stdout_json() {
    let (dir, path) = write_skinned("cli-joints-compare");
    let p = path.to_str().unwrap();
    let o = run(&[p, "--joints", "--json", "--compare", "--times", TIMES_ARG]);
    if gpu_ran("joints_compare", &o) {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let out = stdout(&o);
        assert_eq!(out.lines().count(), 1, "{out}");
        let samples = parse_joints(out.trim(), "skinned chain.glb", 0);
        check_against_hand(&samples, 0, &TIMES, "compare json");
        let err = stderr(&o);
        let last = err.lines().last().unwrap_or_default();
        assert!(last.starts_with("max_abs_err="), "{err}");
        assert!(last.ends_with(" ok"), "{err}");
        let worst: f64 = last["max_abs_err=".len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(worst <= 1e-4, "{err}");
        // One row per skin.
        assert_eq!(
            err.lines()
                .filter(|l| l.trim_start().starts_with("0 ") || l.trim_start().starts_with("1 "))
                .count(),
            2,
            "{err}"
        );
    }
    // Without --json: the report on stdout.
    let o = run(&[p, "--joints", "--compare", "--times", "1.5"]);
    if gpu_ran("joints_compare_text", &o) {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let out = stdout(&o);
        assert!(out.contains("GPU vs CPU"), "{out}");
        assert!(
            out.lines().last().unwrap().starts_with("max_abs_err="),
            "{out}"
        );
    }
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn joints_summary_without_json() {
    let (dir, path) = write_skinned("cli-joints-text");
    let p = path.to_str().unwrap();
    let o = run(&[p, "--joints", "--backend", "cpu", "--times", "1.5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("time 1.5"), "{out}");
    let want = expected(0, 1.5);
    for (skin, node, joints) in want {
        let largest = joints
            .iter()
            .flat_map(|m| m.to_cols_array())
            .fold(0.0f64, |m, x| m.max(x.abs()));
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("skin {skin} ")))
            .unwrap_or_else(|| panic!("no line for skin {skin}:\n{out}"));
        assert!(line.contains(&format!("node {node} ")), "{line}");
        assert!(line.contains("2 joint(s)"), "{line}");
        let v: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        assert!((v - largest).abs() <= 1e-4, "{line}: want {largest}");
    }
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn joints_on_a_file_without_skins_is_one_line_and_exit_2() {
    let dir = temp_dir("cli-joints-noskin");
    let mut b = Builder::new();
    let n = b.node(None);
    let k = b.accessor_f32(&[0.0, 1.0], "SCALAR");
    let v = b.accessor_f32(&[0.0, 0.0, 0.0, 1.0, 1.0, 1.0], "VEC3");
    b.animation("a", &[(k, v, "LINEAR")], &[(0, n, "translation")]);
    let path = dir.join("plain.glb");
    std::fs::write(&path, b.to_glb()).unwrap();
    for backend in ["gpu", "cpu"] {
        let o = run(&[
            path.to_str().unwrap(),
            "--joints",
            "--json",
            "--backend",
            backend,
        ]);
        assert_eq!(o.status.code(), Some(2), "{backend}");
        assert!(o.stdout.is_empty(), "{backend}");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("no skins in"), "{err}");
        assert!(err.contains("plain.glb"), "{err}");
    }
    // No FILE (the demo has no skins) and --plot: errors too.
    let o = run(&["--joints", "--json"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    let (d2, skinned) = write_skinned("cli-joints-plot");
    let plot = d2.join("p.png");
    let o = run(&[
        skinned.to_str().unwrap(),
        "--joints",
        "--plot",
        plot.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    std::fs::remove_dir_all(dir).ok();
    std::fs::remove_dir_all(d2).ok();
}

#[test]
fn joints_gpu_and_cpu_agree_on_the_shared_skinned_assets() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/assets");
    let files = [
        "RiggedSimple.gltf",
        "Fox.glb",
        "SimpleSkin.gltf",
        "RiggedFigure.gltf",
    ];
    let mut ran = 0;
    for name in files {
        let path = dir.join(name);
        if !path.exists() {
            println!("SKIP {name}: not in {}", dir.display());
            continue;
        }
        let p = path.to_str().unwrap();
        let cpu = run(&[
            p,
            "--joints",
            "--json",
            "--all-animations",
            "--backend",
            "cpu",
        ]);
        assert!(cpu.status.success(), "{name}: {}", stderr(&cpu));
        let gpu = run(&[
            p,
            "--joints",
            "--json",
            "--all-animations",
            "--backend",
            "gpu",
        ]);
        if !gpu_ran(name, &gpu) {
            continue;
        }
        assert!(gpu.status.success(), "{name}: {}", stderr(&gpu));
        let (c, g) = (stdout(&cpu), stdout(&gpu));
        assert_eq!(c.lines().count(), g.lines().count(), "{name}");
        assert!(c.lines().count() >= 1, "{name}");
        let mut worst = 0.0f64;
        for (a, (lc, lg)) in c.lines().zip(g.lines()).enumerate() {
            let sc = parse_joints(lc, name, a as u64);
            let sg = parse_joints(lg, name, a as u64);
            assert_eq!(sc.len(), sg.len(), "{name}");
            assert!(!sc.is_empty(), "{name}");
            for ((tc, kc), (tg, kg)) in sc.iter().zip(&sg) {
                assert_eq!(tc, tg, "{name}");
                assert!(!kc.is_empty(), "{name}");
                assert_eq!(kc.len(), kg.len(), "{name}");
                for (x, y) in kc.iter().zip(kg) {
                    assert_eq!((x.0, x.1), (y.0, y.1), "{name}");
                    assert!(x.1.is_some(), "{name}: skin {} has a mesh node", x.0);
                    assert_eq!(x.2.len(), y.2.len(), "{name}");
                    assert!(!x.2.is_empty(), "{name}");
                    for (mx, my) in x.2.iter().zip(&y.2) {
                        for (u, v) in mx.iter().zip(my) {
                            worst = worst.max((u - v).abs());
                        }
                    }
                }
            }
        }
        println!("{name}: joint matrices GPU vs CPU max_abs_err={worst:e}");
        assert!(worst <= 1e-4, "{name}: {worst:e}");
        ran += 1;
    }
    println!("{ran} shared skinned asset(s) compared");
}

/// The rig reads no vertex data: POSITION bounds may be missing (the
/// generated asset above has none), but a POSITION index out of range is a
/// one-line error, not a panic inside the gltf crate's validation.
#[test]
fn joints_with_a_position_accessor_out_of_range_is_one_line_and_exit_2() {
    let dir = temp_dir("cli-joints-badpos");
    let (b, ibm_acc) = skinned();
    let mut root = b.json(None);
    root["skins"] = json!([{"joints": [0, 1], "inverseBindMatrices": ibm_acc}]);
    for n in [3, 4] {
        root["nodes"][n].as_object_mut().unwrap().remove("skin");
    }
    root["scenes"] = json!([{"nodes": [0, 2, 4]}]);
    root["meshes"][0]["primitives"][0]["attributes"]["POSITION"] = json!(999);
    let path = dir.join("bad position.glb");
    std::fs::write(
        &path,
        glb(&serde_json::to_vec(&root).unwrap(), Some(&b.bin)),
    )
    .unwrap();
    let o = run(&[
        path.to_str().unwrap(),
        "--joints",
        "--json",
        "--backend",
        "cpu",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("POSITION") && err.contains("999"), "{err}");
    assert!(!err.contains("internal error"), "{err}");
    std::fs::remove_dir_all(dir).ok();
}

// ---------------------------------------------------------------------------
// The shared assets against an independent f64 chain.

/// One channel of an independent f64 sampler (glTF rules): clamped at
/// both ends, STEP, LINEAR (lerp, or glam's shortest-path slerp for
/// rotations), CUBICSPLINE (Hermite with tangents scaled by the interval);
/// rotations normalized.
fn channel_f64(times: &[f64], values: &[[f64; 4]], interp: &str, rot: bool, t: f64) -> [f64; 4] {
    let cubic = interp == "CUBICSPLINE";
    let val = |k: usize| if cubic { values[3 * k + 1] } else { values[k] };
    let last = times.len() - 1;
    let v: [f64; 4] = if t <= times[0] {
        val(0)
    } else if t >= times[last] {
        val(last)
    } else {
        let k = times.iter().rposition(|&x| x <= t).unwrap();
        let (t0, t1) = (times[k], times[k + 1]);
        let s = (t - t0) / (t1 - t0);
        if t == t0 || interp == "STEP" {
            val(k)
        } else if cubic {
            let dt = t1 - t0;
            let (s2, s3) = (s * s, s * s * s);
            let (p0, m0, p1, m1) = (
                values[3 * k + 1],
                values[3 * k + 2],
                values[3 * k + 4],
                values[3 * k + 3],
            );
            std::array::from_fn(|c| {
                (2.0 * s3 - 3.0 * s2 + 1.0) * p0[c]
                    + dt * (s3 - 2.0 * s2 + s) * m0[c]
                    + (-2.0 * s3 + 3.0 * s2) * p1[c]
                    + dt * (s3 - s2) * m1[c]
            })
        } else if rot {
            let q = |v: [f64; 4]| DQuat::from_array(v).normalize();
            q(val(k)).slerp(q(val(k + 1)), s).to_array()
        } else {
            let (a, b) = (val(k), val(k + 1));
            std::array::from_fn(|c| a[c] + (b[c] - a[c]) * s)
        }
    };
    if rot {
        DQuat::from_array(v).normalize().to_array()
    } else {
        v
    }
}

/// Per skin, the joint matrices of animation `anim` at `t`, from the file's
/// JSON and buffers with the `gltf` crate and glam in f64: globals by
/// recursion from the roots, `inverse(global(lowest node using the skin)) *
/// global(joint) * inverseBindMatrix`.
fn independent_f64(
    doc: &gltf::Document,
    buffers: &[Vec<u8>],
    anim: usize,
    t: f64,
) -> Vec<Vec<DMat4>> {
    let get = |b: gltf::Buffer<'_>| buffers.get(b.index()).map(Vec::as_slice);
    let mut trs: Vec<(DVec3, DQuat, DVec3)> = doc
        .nodes()
        .map(|n| match n.transform() {
            gltf::scene::Transform::Matrix { matrix } => {
                let m = DMat4::from_cols_array_2d(&matrix.map(|c| c.map(f64::from)));
                let (s, r, t) = m.to_scale_rotation_translation();
                (t, r, s)
            }
            gltf::scene::Transform::Decomposed {
                translation: t,
                rotation: r,
                scale: s,
            } => (
                DVec3::from_array(t.map(f64::from)),
                DQuat::from_array(r.map(f64::from)).normalize(),
                DVec3::from_array(s.map(f64::from)),
            ),
        })
        .collect();
    let animation = doc.animations().nth(anim).unwrap();
    for ch in animation.channels() {
        let reader = ch.reader(get);
        let times: Vec<f64> = reader.read_inputs().unwrap().map(f64::from).collect();
        let interp = match ch.sampler().interpolation() {
            gltf::animation::Interpolation::Step => "STEP",
            gltf::animation::Interpolation::Linear => "LINEAR",
            gltf::animation::Interpolation::CubicSpline => "CUBICSPLINE",
        };
        let node = ch.target().node().index();
        use gltf::animation::util::ReadOutputs;
        let v3 = |x: [f32; 3]| [f64::from(x[0]), f64::from(x[1]), f64::from(x[2]), 0.0];
        match reader.read_outputs().unwrap() {
            ReadOutputs::Translations(v) => {
                let v: Vec<[f64; 4]> = v.map(v3).collect();
                let r = channel_f64(&times, &v, interp, false, t);
                trs[node].0 = DVec3::new(r[0], r[1], r[2]);
            }
            ReadOutputs::Rotations(v) => {
                let v: Vec<[f64; 4]> = v.into_f32().map(|x| x.map(f64::from)).collect();
                trs[node].1 = DQuat::from_array(channel_f64(&times, &v, interp, true, t));
            }
            ReadOutputs::Scales(v) => {
                let v: Vec<[f64; 4]> = v.map(v3).collect();
                let r = channel_f64(&times, &v, interp, false, t);
                trs[node].2 = DVec3::new(r[0], r[1], r[2]);
            }
            ReadOutputs::MorphTargetWeights(_) => {}
        }
    }
    fn visit(n: gltf::Node<'_>, parent: DMat4, trs: &[(DVec3, DQuat, DVec3)], out: &mut [DMat4]) {
        let (t, r, s) = trs[n.index()];
        let g = parent * DMat4::from_scale_rotation_translation(s, r, t);
        out[n.index()] = g;
        for c in n.children() {
            visit(c, g, trs, out);
        }
    }
    let mut global = vec![DMat4::IDENTITY; trs.len()];
    let is_child: std::collections::HashSet<usize> = doc
        .nodes()
        .flat_map(|n| n.children().map(|c| c.index()))
        .collect();
    for n in doc.nodes().filter(|n| !is_child.contains(&n.index())) {
        visit(n, DMat4::IDENTITY, &trs, &mut global);
    }
    doc.skins()
        .map(|skin| {
            let inv_mesh = doc
                .nodes()
                .find(|n| n.skin().map(|s| s.index()) == Some(skin.index()))
                .map_or(DMat4::IDENTITY, |n| global[n.index()].inverse());
            let ibms: Vec<DMat4> = match skin.reader(get).read_inverse_bind_matrices() {
                Some(m) => m
                    .map(|c| DMat4::from_cols_array_2d(&c.map(|col| col.map(f64::from))))
                    .collect(),
                None => vec![DMat4::IDENTITY; skin.joints().count()],
            };
            skin.joints()
                .zip(ibms)
                .map(|(j, ibm)| inv_mesh * global[j.index()] * ibm)
                .collect()
        })
        .collect()
}

/// The acceptance check, from outside: `--joints --json` on each
/// skinned shared asset, every animation at its default times (keys and
/// midpoints), both backends, within 1e-4 of an f64 chain.
#[test]
fn joints_on_the_shared_assets_match_an_independent_f64_chain() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/assets");
    for name in [
        "RiggedSimple.gltf",
        "Fox.glb",
        "SimpleSkin.gltf",
        "RiggedFigure.gltf",
    ] {
        let path = dir.join(name);
        if !path.exists() {
            println!("SKIP {name}: not in {}", dir.display());
            continue;
        }
        // The loader only to get the JSON and buffer bytes.
        let imported = keyframe_gpu::gltf::load(&path).unwrap();
        let doc = gltf::Document::from_json(imported.document.root.clone()).unwrap();
        let buffers = &imported.document.buffers;
        let p = path.to_str().unwrap();
        for backend in ["cpu", "gpu"] {
            let o = run(&[
                p,
                "--joints",
                "--json",
                "--all-animations",
                "--backend",
                backend,
            ]);
            if backend == "gpu" && !gpu_ran(name, &o) {
                continue;
            }
            assert!(o.status.success(), "{name} {backend}: {}", stderr(&o));
            let out = stdout(&o);
            assert_eq!(out.lines().count(), doc.animations().count(), "{name}");
            let (mut worst, mut count) = (0.0f64, 0usize);
            for (a, line) in out.lines().enumerate() {
                for (t, skins) in parse_joints(line, name, a as u64) {
                    let want = independent_f64(&doc, buffers, a, t);
                    assert_eq!(skins.len(), want.len(), "{name}");
                    for ((s, _, joints), w) in skins.iter().zip(&want) {
                        assert_eq!(joints.len(), w.len(), "{name} skin {s}");
                        for (m, wm) in joints.iter().zip(w) {
                            for (x, y) in m.iter().zip(wm.to_cols_array()) {
                                worst = worst.max((x - y).abs());
                            }
                            count += 1;
                        }
                    }
                }
            }
            println!(
                "{name} {backend}: {count} joint matrices, max abs error vs f64 chain {worst:e}"
            );
            assert!(count > 0, "{name}");
            assert!(worst <= 1e-4, "{name} {backend}: {worst:e}");
        }
    }
}

/// Vertex-data faults the rig does not read (no POSITION attribute at all;
/// the generated asset never has POSITION bounds either) do not stop
/// `--joints`; the matrices are those computed by hand.
#[test]
fn joints_ignore_vertex_data_the_rig_does_not_read() {
    let dir = temp_dir("cli-joints-noposition");
    let (b, ibm_acc) = skinned();
    let mut root = b.json(None);
    root["skins"] = json!([
        {"joints": [0, 1], "inverseBindMatrices": ibm_acc},
        {"joints": [1, 0]},
    ]);
    root["scenes"] = json!([{"nodes": [0, 2, 4]}]);
    root["meshes"][0]["primitives"][0]["attributes"] = json!({});
    let path = dir.join("no position.glb");
    std::fs::write(
        &path,
        glb(&serde_json::to_vec(&root).unwrap(), Some(&b.bin)),
    )
    .unwrap();
    let o = run(&[
        path.to_str().unwrap(),
        "--joints",
        "--json",
        "--backend",
        "cpu",
        "--times",
        "1.5",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let samples = parse_joints(stdout(&o).trim(), "no position.glb", 0);
    check_against_hand(&samples, 0, &[1.5], "no POSITION");
    std::fs::remove_dir_all(dir).ok();
}
