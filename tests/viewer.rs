//! The `viewer` example as a user runs it, on its built-in demo (an arm
//! bending on a plinth: the tube's clips "bend", "curl" and "wiggle", 4 s
//! each) and on small files: in a real X window (under
//! `xvfb-run`, on whatever adapter the window gets) with `--screenshot`,
//! the PNG shows the model and two screenshots at different times differ
//! where it moves; without a display it renders offscreen with
//! `--screenshot` and refuses in one line without; a clip change
//! (`--switch-at`, as keys 1-9) is a crossfade, mid-way unlike either clip
//! and at its end the new clip exactly, in both paths; broken input, a
//! model with nothing animated and a missing adapter end in one line on
//! stderr and exit code 2. `tests/viewer_scene.rs` checks what the
//! viewer draws: every part, materials, alpha modes, `--clips`.
//!
//! The window test needs `xvfb-run` (Debian's `xvfb`): without it, it prints
//! a SKIP line, unless `KEYFRAME_GPU_REQUIRE_ADAPTER=1` (as in CI), where it
//! fails.
#![cfg(feature = "gltf")]

#[path = "common/gltf_builder.rs"]
mod gltf_builder;
#[path = "common/sample_cli.rs"]
mod sample_cli;
#[path = "common/viewer_cli.rs"]
mod viewer_cli;

use std::path::{Path, PathBuf};
use std::process::Command;

use gltf_builder::{temp_dir, Builder};
use sample_cli::{gpu_ran, stderr, stdout};
use viewer_cli::{differing_much, has_xvfb, read_png, run_headless, run_in_window, viewer, Route};

/// Small frames keep the CPU adapter quick.
const SIZE: &str = "192x160";

/// Pixels that are not the background (the top-left pixel's colour: the
/// model is framed away from the corners).
fn model_pixels(px: &[[u8; 4]]) -> Vec<bool> {
    px.iter().map(|p| *p != px[0]).collect()
}

/// Checks a screenshot: the size asked for and at least 1% of its pixels
/// on the model; returns which pixels are.
fn check_shows_model(path: &Path) -> Vec<bool> {
    let (px, w, h) = read_png(path);
    assert_eq!(format!("{w}x{h}"), SIZE, "{}", path.display());
    let model = model_pixels(&px);
    let n = model.iter().filter(|&&m| m).count();
    assert!(
        n * 100 >= px.len(),
        "{}: only {n} of {} pixels differ from the background",
        path.display(),
        px.len()
    );
    model
}

/// Checks that screenshots `a` and `b` of one model at different times
/// differ in at least 0.5% of the pixels, and only where the model is in one
/// of them (nothing else changes).
fn check_moved(a: &Path, b: &Path) {
    let (pa, _, _) = read_png(a);
    let (pb, _, _) = read_png(b);
    let (ma, mb) = (model_pixels(&pa), model_pixels(&pb));
    let mut differ = 0;
    for i in 0..pa.len() {
        if pa[i] != pb[i] {
            differ += 1;
            assert!(
                ma[i] || mb[i],
                "pixel {i} differs but is background in both screenshots"
            );
        }
    }
    assert!(
        differ * 200 >= pa.len(),
        "only {differ} of {} pixels differ between {} and {}",
        pa.len(),
        a.display(),
        b.display()
    );
}

/// Pixels that differ between two screenshots of the same size.
fn differing(a: &Path, b: &Path) -> usize {
    let (pa, wa, ha) = read_png(a);
    let (pb, wb, hb) = read_png(b);
    assert_eq!((wa, ha), (wb, hb), "{} and {}", a.display(), b.display());
    pa.iter().zip(&pb).filter(|(x, y)| x != y).count()
}

#[test]
fn in_a_real_window_the_screenshot_shows_the_model_moving() {
    let test = "viewer in an X window";
    if !has_xvfb(test) {
        return;
    }
    let dir = temp_dir("viewer_window");
    let shots: Vec<PathBuf> = ["0", "1"]
        .iter()
        .map(|time| {
            let path = dir.join(format!("t{time}.png"));
            let out = run_in_window(&[
                "--screenshot",
                path.to_str().unwrap(),
                "--frames",
                "3",
                "--size",
                SIZE,
                "--time",
                time,
            ]);
            let (so, se) = (stdout(&out), stderr(&out));
            assert!(
                out.status.success(),
                "{test}: viewer failed ({:?}):\n{so}\n{se}",
                out.status.code()
            );
            // The frames came from the window, not the offscreen path.
            assert!(so.starts_with("window "), "{test}: {so}");
            assert!(so.contains("of the window"), "{test}: {so}");
            // Past libtest's capture, so that CI logs show the window's adapter.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "{test}: {}",
                so.lines().next().unwrap_or("")
            );
            path
        })
        .collect();
    check_shows_model(&shots[0]);
    check_shows_model(&shots[1]);
    // The demo's arm is straight at t = 0 (plus 2/30 s) and bent by 3 x
    // 35 degrees at t = 1.
    check_moved(&shots[0], &shots[1]);
}

#[test]
fn without_a_display_screenshot_renders_offscreen() {
    let dir = temp_dir("viewer_offscreen");
    let a = dir.join("a.png");
    let b = dir.join("b.png");
    for (path, time) in [(&a, "0"), (&b, "1")] {
        let out = run_headless(&[
            "--screenshot",
            path.to_str().unwrap(),
            "--frames",
            "2",
            "--size",
            SIZE,
            "--time",
            time,
            "--instances",
            "4",
        ]);
        if !gpu_ran("viewer offscreen", &out) {
            return;
        }
        let so = stdout(&out);
        assert!(so.contains("rendered offscreen"), "{so}");
        assert!(so.contains("4 instances"), "{so}");
        assert!(so.contains("no display"), "{so}");
    }
    check_shows_model(&a);
    check_moved(&a, &b);
}

/// The demo, 2 instances (at 0 s and 2 s past the clock), from `--time
/// 2.5`: `--frames N` shows clock time 2.5 + (N - 1) / 30 s. The viewer
/// spreads the instances' times over the first clip's duration; the demo's
/// clips all last 4 s, so a run that starts on another clip gives them the
/// same times and its frames compare pixel for pixel.
const FADE_FROM: &str = "2.5";

/// `viewer` by `route` writing frame `frames` to `dir/name.png` with
/// `extra` arguments; the PNG and the title line (stdout's, as the window
/// would show it), or `None` after a SKIP line when there is no adapter.
fn fade_shot(
    route: Route,
    dir: &Path,
    name: &str,
    frames: u32,
    extra: &[&str],
) -> Option<(PathBuf, String)> {
    let test = format!("viewer crossfade ({route:?}) {name}");
    let png = dir.join(format!("{name}.png"));
    let frames = frames.to_string();
    let mut args = vec![
        "--screenshot",
        png.to_str().unwrap(),
        "--frames",
        &frames,
        "--size",
        SIZE,
        "--time",
        FADE_FROM,
        "--instances",
        "2",
    ];
    args.extend_from_slice(extra);
    let out = route.run(&args);
    if !gpu_ran(&test, &out) {
        return None;
    }
    let so = stdout(&out);
    assert!(out.status.success(), "{test}: {so}\n{}", stderr(&out));
    let from_window = so.contains("of the window");
    assert_eq!(from_window, route == Route::Window, "{test}: {so}");
    let title = so
        .lines()
        .find(|l| l.starts_with("keyframe-gpu viewer |"))
        .unwrap_or_else(|| panic!("{test}: no title line in {so}"))
        .to_string();
    Some((png, title))
}

/// Clip 0 ("bend", key 1) fades to clip 1 ("curl", key 2) from 2.6 s to
/// 2.9 s (`--switch-at 2.6:1`). Frame 8
/// (2.733 s, the new clip's weight 0.44) differs from both clips alone at
/// that time in at least 0.2% of the pixels and its title says
/// `"bend" -> "curl"`; frame 14 (2.933 s, the fade over) equals "curl"
/// alone pixel for pixel: after the fade each instance plays one action of
/// weight 1, the same action table as a run that never switched, so the
/// GPU computes the same thing (no tolerance is needed, and none is given).
fn check_crossfade(route: Route, dir: &Path) {
    let shot = |name: &str, frames, extra: &[&str]| fade_shot(route, dir, name, frames, extra);
    let Some((old_mid, _)) = shot("old_mid", 8, &["--animation", "0"]) else {
        return;
    };
    let (new_mid, _) = shot("new_mid", 8, &["--animation", "1"]).unwrap();
    let (fade_mid, title) = shot("fade_mid", 8, &["--switch-at", "2.6:1"]).unwrap();
    let (new_end, _) = shot("new_end", 14, &["--animation", "1"]).unwrap();
    let (fade_end, end_title) = shot("fade_end", 14, &["--switch-at", "2.6:1"]).unwrap();
    check_shows_model(&fade_mid);
    assert!(
        title.contains("clip 1/3 \"bend\" -> 2/3 \"curl\" |"),
        "{route:?}: {title}"
    );
    assert!(
        end_title.contains("clip 2/3 \"curl\" |"),
        "{route:?}: {end_title}"
    );
    let total = SIZE
        .split('x')
        .map(|v| v.parse::<usize>().unwrap())
        .product::<usize>();
    for (other, clip) in [(&old_mid, "bend"), (&new_mid, "curl")] {
        let n = differing(&fade_mid, other);
        println!("{route:?}: mid-fade, {n} of {total} pixels differ from {clip} alone");
        assert!(
            n * 500 >= total,
            "{route:?}: mid-fade, only {n} of {total} pixels differ from {clip} alone"
        );
    }
    let n = differing(&fade_end, &new_end);
    assert_eq!(
        n, 0,
        "{route:?}: after the fade, {n} pixels differ from curl alone"
    );
}

#[test]
fn a_clip_change_crossfades_offscreen() {
    check_crossfade(Route::Offscreen, &temp_dir("viewer_fade_offscreen"));
}

#[test]
fn a_clip_change_crossfades_in_a_real_window() {
    if has_xvfb("viewer crossfade in an X window") {
        check_crossfade(Route::Window, &temp_dir("viewer_fade_window"));
    }
}

/// A change during a fade is the playback layer's crossfade with two
/// actions per character: the lighter clip goes and the new one starts
/// from its weight. "bend" -> "curl" from 2.6 s, then at 2.7 s ("curl" at
/// 0.33) a change to "wiggle" drops "curl" ("bend" -> "wiggle"), at 2.78 s
/// ("curl" at 0.6) drops "bend" ("curl" -> "wiggle"); a change back to
/// "bend" at 2.65 s fades "bend" in again from 0.83 ("curl" -> "bend" at
/// 2.73 s, "bend" alone once 2.95 s is past); and a fade that replaced
/// another ends on its new clip exactly.
#[test]
fn a_change_during_a_fade_drops_the_lighter_clip() {
    let dir = temp_dir("viewer_fade_interrupted");
    let shot =
        |name: &str, frames, extra: &[&str]| fade_shot(Route::Offscreen, &dir, name, frames, extra);
    let Some((_, title)) = shot(
        "to_wiggle_early",
        8,
        &["--switch-at", "2.6:1", "--switch-at", "2.7:2"],
    ) else {
        return;
    };
    assert!(
        title.contains("clip 1/3 \"bend\" -> 3/3 \"wiggle\" |"),
        "{title}"
    );
    let (_, title) = shot(
        "to_wiggle_late",
        10,
        &["--switch-at", "2.6:1", "--switch-at", "2.78:2"],
    )
    .unwrap();
    assert!(
        title.contains("clip 2/3 \"curl\" -> 3/3 \"wiggle\" |"),
        "{title}"
    );
    // Given in reverse: the changes run in time order.
    let back = ["--switch-at", "2.65:0", "--switch-at", "2.6:1"];
    let (back_mid, title) = shot("back_mid", 8, &back).unwrap();
    assert!(
        title.contains("clip 2/3 \"curl\" -> 1/3 \"bend\" |"),
        "{title}"
    );
    let (bend_mid, _) = shot("bend_mid", 8, &[]).unwrap();
    assert!(
        differing(&back_mid, &bend_mid) > 0,
        "back to bend: curl (0.12) has gone at once"
    );
    // 2.5 s + 14 / 30 = 2.967 s: the fade back ended at 2.95 s.
    let (back_end, title) = shot("back_end", 15, &back).unwrap();
    assert!(title.contains("clip 1/3 \"bend\" |"), "{title}");
    let (bend_end, _) = shot("bend_end", 15, &[]).unwrap();
    assert_eq!(
        differing(&back_end, &bend_end),
        0,
        "after the fade back: not bend alone"
    );
    // bend -> wiggle from 2.62 s ends at 2.92 s, before frame 14 (2.933 s).
    let (ended, title) = shot(
        "ended",
        14,
        &["--switch-at", "2.6:1", "--switch-at", "2.62:2"],
    )
    .unwrap();
    assert!(title.contains("clip 3/3 \"wiggle\" |"), "{title}");
    let (wiggle, _) = shot("wiggle", 14, &["--animation", "2"]).unwrap();
    assert_eq!(
        differing(&ended, &wiggle),
        0,
        "after the second fade: not wiggle alone"
    );
}

#[test]
fn without_a_display_and_without_screenshot_one_line_and_exit_2() {
    let out = run_headless(&[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.starts_with("error: cannot open a window"), "{err}");
    assert!(err.contains("--screenshot"), "{err}");
}

#[test]
fn broken_file_nothing_animated_and_no_adapter_are_one_line_and_exit_2() {
    let dir = temp_dir("viewer_errors");
    let broken = dir.join("broken.glb");
    std::fs::write(&broken, b"glTF\x02\x00\x00\x00 not really").unwrap();
    let mut still = Builder::new();
    let mesh = still.mesh_with_targets(0);
    still.node(Some(mesh));
    let still_path = dir.join("still.glb");
    std::fs::write(&still_path, still.to_glb()).unwrap();
    // A buffer URI that leaves the model's folder (the file it names is
    // valid, so only the asset-root check stops it).
    let mut moving = Builder::new();
    let n = moving.node(None);
    let k = moving.accessor_f32(&[0.0, 1.0], "SCALAR");
    let v = moving.accessor_f32(&[0.0, 0.0, 0.0, 1.0, 1.0, 1.0], "VEC3");
    moving.animation("move", &[(k, v, "LINEAR")], &[(0, n, "translation")]);
    std::fs::create_dir_all(dir.join("model")).unwrap();
    std::fs::write(dir.join("outside.bin"), &moving.bin).unwrap();
    let escape = dir.join("model/escape.gltf");
    let json = moving.json(Some("../outside.bin".into()));
    std::fs::write(&escape, serde_json::to_vec(&json).unwrap()).unwrap();
    let shot = dir.join("never.png");
    let shot = shot.to_str().unwrap();
    for (args, env, expect) in [
        (vec![escape.to_str().unwrap()], None, "refused"),
        // With the common folder as the root it loads, and stops later:
        // the file has nothing to draw.
        (
            vec![
                escape.to_str().unwrap(),
                "--asset-root",
                dir.to_str().unwrap(),
            ],
            None,
            "no mesh",
        ),
        (vec![broken.to_str().unwrap()], None, "broken.glb"),
        (vec![still_path.to_str().unwrap()], None, "no animations"),
        (
            vec![dir.join("absent.glb").to_str().unwrap()],
            None,
            "absent.glb",
        ),
        (vec!["--instances", "0"], None, "--instances"),
        (vec!["--switch-at", "1:7"], None, "--switch-at: clip 7"),
        (vec!["--switch-at", "1.5"], None, "--switch-at"),
        (vec!["--switch-at", "inf:1"], None, "--switch-at"),
        // No Metal on these machines: no adapter at all.
        (
            vec!["--screenshot", shot, "--frames", "1"],
            Some(("WGPU_BACKEND", "metal")),
            "no GPU adapter",
        ),
    ] {
        let mut cmd = Command::new(viewer());
        cmd.args(&args)
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("WAYLAND_SOCKET");
        if let Some((k, v)) = env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains(expect),
            "{args:?}: expected {expect:?} in {err}"
        );
        assert!(stdout(&out).is_empty(), "{args:?}: {}", stdout(&out));
    }
    assert!(!Path::new(shot).exists());
}

/// One triangle on node 0, turned a quarter about Z over a second
/// (clip "turn"); an unmoving triangle on node 1, two units along X.
fn rigid_turn(dir: &Path) -> PathBuf {
    let mut b = Builder::new();
    let mesh = b.mesh_with_targets(0);
    let n0 = b.node(Some(mesh));
    b.node(Some(mesh));
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let times = b.accessor_f32(&[0.0, 1.0], "SCALAR");
    let rot = b.accessor_f32(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, h, h], "VEC4");
    b.animation("turn", &[(times, rot, "LINEAR")], &[(0, n0, "rotation")]);
    // The gltf crate's validation (which the viewer's mesh reader runs)
    // wants POSITION's bounds.
    let mut json: serde_json::Value = serde_json::from_slice(&b.to_gltf_embedded()).unwrap();
    let pos = json["meshes"][0]["primitives"][0]["attributes"]["POSITION"].clone();
    let pos = pos.as_u64().unwrap() as usize;
    json["accessors"][pos]["min"] = serde_json::json!([0.0, 0.0, 0.0]);
    json["accessors"][pos]["max"] = serde_json::json!([1.0, 1.0, 0.0]);
    let path = dir.join("rigid.gltf");
    std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();
    path
}

#[test]
fn a_file_without_skins_shows_its_animated_nodes() {
    let dir = temp_dir("viewer_rigid");
    let path = rigid_turn(&dir);
    let a = dir.join("a.png");
    let c = dir.join("c.png");
    for (shot, time) in [(&a, "0"), (&c, "0.9")] {
        let out = run_headless(&[
            path.to_str().unwrap(),
            "--screenshot",
            shot.to_str().unwrap(),
            "--frames",
            "1",
            "--size",
            SIZE,
            "--time",
            time,
        ]);
        if !gpu_ran("viewer rigid", &out) {
            return;
        }
        assert!(stdout(&out).contains("\"turn\""), "{}", stdout(&out));
    }
    check_shows_model(&a);
    check_moved(&a, &c);
}

/// In a real window the viewer recovers from each fault, injected by its
/// test flags: minimised (0 x 0) and resized back through winit, its
/// surface lost and made again, its device destroyed and everything
/// rebuilt on a new one from the model. Each run exits 0 with its last
/// frame showing the model; after the device loss the frame is the one a
/// run without it draws, pixel for pixel.
#[test]
fn in_a_window_the_viewer_recovers_from_a_minimised_window_a_lost_surface_and_device() {
    let test = "viewer faults in an X window";
    if !has_xvfb(test) {
        return;
    }
    let dir = temp_dir("viewer_faults");
    let run = |name: &str, extra: &[&str]| {
        let path = dir.join(format!("{name}.png"));
        let mut args = vec![
            "--screenshot",
            path.to_str().unwrap(),
            "--frames",
            "6",
            "--size",
            SIZE,
        ];
        args.extend_from_slice(extra);
        let out = run_in_window(&args);
        let (so, se) = (stdout(&out), stderr(&out));
        assert!(
            out.status.success(),
            "{test} {name}: viewer failed ({:?}):\n{so}\n{se}",
            out.status.code()
        );
        assert!(so.contains("of the window"), "{test} {name}: {so}");
        (path, so)
    };
    let (resized, so) = run(
        "resized",
        &[
            "--resize-at",
            "2:0x0",
            "--resize-at",
            "5:160x120",
            "--lose-surface-at",
            "7",
        ],
    );
    assert!(so.contains("surface lost at redraw 7, made again"), "{so}");
    let (px, w, h) = read_png(&resized);
    assert_eq!((w, h), (160, 120), "the window's new size");
    let model = model_pixels(&px).iter().filter(|&&m| m).count();
    assert!(
        model * 100 >= px.len(),
        "{model} model pixels after the resizes"
    );
    let (rebuilt, so) = run("rebuilt", &["--lose-device-at", "3"]);
    assert!(so.contains("device destroyed at redraw 3"), "{so}");
    assert!(so.contains("the device was lost; rebuilt on"), "{so}");
    check_shows_model(&rebuilt);
    let (plain, _) = run("plain", &[]);
    assert_eq!(
        differing(&rebuilt, &plain),
        0,
        "the rebuilt device draws the frame a run without the loss draws"
    );
}

/// A walker built in code: node 0 "stage" (scale 2, no mesh) holds node 1
/// "body" (one triangle), which holds node 2 "hand" (no mesh). Clip 0
/// "walk" moves body from (0, 0, 0) to (0.5, 0.1, 0) and hand from
/// (0, 0, 0) to (0, 0.2, 0) over 1 s; clip 1 "run" moves body to
/// (1, 0, 0) over 1 s. In the world (the stage's scale) a walk's loop
/// goes 1 along X and 0.2 up.
fn walker(dir: &Path) -> PathBuf {
    let mut b = Builder::new();
    let mesh = b.mesh_with_targets(0);
    let stage = b.node(None);
    let body = b.node(Some(mesh));
    let hand = b.node(None);
    let times = b.accessor_f32(&[0.0, 1.0], "SCALAR");
    let walk = b.accessor_f32(&[0.0, 0.0, 0.0, 0.5, 0.1, 0.0], "VEC3");
    let lift = b.accessor_f32(&[0.0, 0.0, 0.0, 0.0, 0.2, 0.0], "VEC3");
    let run = b.accessor_f32(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0], "VEC3");
    b.animation(
        "walk",
        &[(times, walk, "LINEAR"), (times, lift, "LINEAR")],
        &[(0, body, "translation"), (1, hand, "translation")],
    );
    b.animation(
        "run",
        &[(times, run, "LINEAR")],
        &[(0, body, "translation")],
    );
    let mut json: serde_json::Value = serde_json::from_slice(&b.to_gltf_embedded()).unwrap();
    json["nodes"][stage] =
        serde_json::json!({"name": "stage", "scale": [2.0, 2.0, 2.0], "children": [body]});
    json["nodes"][body]["name"] = serde_json::json!("body");
    json["nodes"][body]["children"] = serde_json::json!([hand]);
    json["nodes"][hand]["name"] = serde_json::json!("hand");
    json["scenes"][0]["nodes"] = serde_json::json!([stage]);
    let pos = json["meshes"][0]["primitives"][0]["attributes"]["POSITION"].clone();
    let pos = pos.as_u64().unwrap() as usize;
    json["accessors"][pos]["min"] = serde_json::json!([0.0, 0.0, 0.0]);
    json["accessors"][pos]["max"] = serde_json::json!([1.0, 1.0, 0.0]);
    let path = dir.join("walker.gltf");
    std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();
    path
}

/// The distance the viewer's last line says character 0 of `model` walked.
fn walked(out: &str, model: &str) -> [f32; 3] {
    let prefix = format!("root motion of {model}: body moved character 0 by (");
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no root motion line for {model} in {out}"));
    let v: Vec<f32> = line
        .trim_end_matches(')')
        .split(", ")
        .map(|x| x.parse().unwrap())
        .collect();
    [v[0], v[1], v[2]]
}

/// `--root-motion`: the root (body, the translated node nearest the top;
/// not hand, below it) moves the character by its horizontal motion,
/// turned into the world by its parent (the stage's scale 2): 1.5 s of
/// walking is 1.5 loops of 1 along X, and nothing upwards (the vertical
/// stays in the pose). Within the first loop the character stands where
/// the clip alone puts it.
#[test]
fn root_motion_walks_the_character_on_across_loops() {
    let dir = temp_dir("viewer_root_motion");
    let file = walker(&dir);
    let shot = |name: &str, frames: &str, extra: &[&str]| {
        let png = dir.join(format!("{name}.png"));
        let mut args = vec![
            file.to_str().unwrap(),
            "--screenshot",
            png.to_str().unwrap(),
            "--frames",
            frames,
            "--size",
            SIZE,
        ];
        args.extend_from_slice(extra);
        let out = run_headless(&args);
        (out, png)
    };
    let (out, _) = shot("walked", "46", &["--root-motion"]);
    if !gpu_ran("viewer root motion", &out) {
        return;
    }
    assert!(out.status.success(), "{}", stderr(&out));
    let d = walked(&stdout(&out), "walker.gltf");
    let want = [1.5, 0.0, 0.0];
    for k in 0..3 {
        assert!((d[k] - want[k]).abs() < 1e-3, "walked {d:?}, want {want:?}");
    }
    // Named, the same root; a crossfade to run at 1 s (over 0.3 s)
    // blends the clips' motions: walk goes 1 per second, run 2, and each
    // frame's step weighs by the action's weight after it (the frame's
    // table): 30 frames of walk, 9 of the fade (run at k / 9), 6 of run.
    let (out, _) = shot("named", "46", &["--root-motion=body", "--switch-at", "1:1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let d = walked(&stdout(&out), "walker.gltf");
    let fade: f32 = (1..=9).map(|k| (1.0 + k as f32 / 9.0) / 30.0).sum();
    let want = 1.0 + fade + 6.0 * 2.0 / 30.0;
    assert!(
        (d[0] - want).abs() < 1e-3,
        "walked {d:?}, want {want} along x"
    );
    // Within the first loop, pose and place together are the clip's.
    let (on, on_png) = shot("on_the_spot", "16", &["--root-motion"]);
    let (_, off_png) = shot("as_authored", "16", &[]);
    assert!(on.status.success(), "{}", stderr(&on));
    check_shows_model(&on_png);
    let (px, _, _) = read_png(&on_png);
    let n = differing_much(&on_png, &off_png);
    assert!(
        n * 500 <= px.len(),
        "0.5 s with root motion: {n} of {} pixels differ from the clip alone",
        px.len()
    );
    // A node the model does not have.
    let (out, _) = shot("nothing", "1", &["--root-motion=tail"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let e = stderr(&out);
    assert!(e.contains("--root-motion") && e.contains("\"tail\""), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
}

/// Several files are one crowd: their characters alternate on one grid
/// (with one character each, the first model on the left, the second on
/// the right), the title names both and counts every character, a key of a
/// clip one model lacks changes only the other, and the same file twice
/// gets a second name.
#[test]
fn several_models_play_as_one_crowd() {
    let dir = temp_dir("viewer_crowd");
    let walker = walker(&dir);
    let shot = |files: &[&Path], name: &str, extra: &[&str]| {
        let png = dir.join(format!("{name}.png"));
        let mut args: Vec<&str> = files.iter().map(|f| f.to_str().unwrap()).collect();
        args.extend_from_slice(&[
            "--screenshot",
            png.to_str().unwrap(),
            "--frames",
            "8",
            "--size",
            SIZE,
            "--yaw",
            "0",
            "--pitch",
            "0",
        ]);
        args.extend_from_slice(extra);
        (run_headless(&args), png)
    };
    let (out, _) = shot(&[&walker, &walker], "twice", &["--instances", "2"]);
    if !gpu_ran("viewer crowd", &out) {
        return;
    }
    assert!(out.status.success(), "{}", stderr(&out));
    let so = stdout(&out);
    assert!(
        so.contains("| walker.gltf + walker.gltf (2) |") && so.contains("| 4 instances |"),
        "{so}"
    );
    // One character each: both drawn, side by side.
    // The turning triangles have one clip: clip 2 leaves them on "turn".
    let rigid = rigid_turn(&dir);
    let (out, png) = shot(&[&rigid, &walker], "pair", &["--switch-at", "0.1:1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let model = check_shows_model(&png);
    let (_, w, h) = read_png(&png);
    let half = |left: bool| {
        (0..h as usize)
            .flat_map(|y| (0..w as usize).map(move |x| (x, y)))
            .filter(|&(x, y)| (x < w as usize / 2) == left && model[y * w as usize + x])
            .count()
    };
    assert!(
        half(true) > 0 && half(false) > 0,
        "left {} right {}",
        half(true),
        half(false)
    );
    let so = stdout(&out);
    assert!(
        so.contains("| rigid.gltf + walker.gltf |")
            && so.contains("clip 1/1 \"turn\" + 1/2 \"walk\" -> 2/2 \"run\" |")
            && so.contains("| 2 instances |"),
        "{so}"
    );
}
