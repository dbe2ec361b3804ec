//! What the viewer draws, on models built in code: every part (rigid
//! parts under bones, two skins, a skin shared by two mesh nodes, a mesh
//! of two primitives), the base colour texture where it puts its colours
//! (its sampler's filter and wrap, `KHR_texture_transform`, images in a
//! file, a buffer view and a `data:` URI), vertex colours times the
//! factor, sRGB, alpha modes (mask, blend over an opaque part),
//! double-sided and mirrored parts, `--clips` and `--instances`.
//!
//! Each model is seen from straight ahead (`--yaw 0 --pitch 0`) and lies
//! (almost) in the plane z = 0, so the viewer's framing (the posed bounds
//! plus 5%, in a 40-degree vertical field of view) maps world x, y to
//! pixels by a scale and an offset that the tests compute from the
//! bounds. Materials are unlit (`KHR_materials_unlit`), so a pixel's
//! colour is the material's, encoded to sRGB: exact expectations, within
//! a few units for rounding.
//!
//! Every pixel test runs offscreen (no display) and in an X window under
//! `xvfb-run` (skipped without it, unless `KEYFRAME_GPU_REQUIRE_ADAPTER=1`),
//! on the backend `WGPU_BACKEND` names.
#![cfg(feature = "gltf")]

#[path = "common/gltf_builder.rs"]
mod gltf_builder;
#[path = "common/sample_cli.rs"]
mod sample_cli;
#[path = "common/scene_builder.rs"]
mod scene_builder;
#[path = "../examples/viewer/uniforms.rs"]
mod uniforms;
#[path = "common/viewer_cli.rs"]
mod viewer_cli;

use std::path::{Path, PathBuf};

use gltf_builder::{temp_dir, Builder};
use sample_cli::{gpu_ran, stderr, stdout};
use scene_builder::{png, quad, quadrants};
use serde_json::json;
use viewer_cli::{has_xvfb, read_png, run_headless, Route};

/// The viewer's background (sRGB).
const BACKGROUND: [u8; 3] = [20, 20, 26];
const RED: [u8; 3] = [255, 0, 0];
const GREEN: [u8; 3] = [0, 255, 0];
const BLUE: [u8; 3] = [0, 0, 255];
const CYAN: [u8; 3] = [0, 255, 255];
const YELLOW: [u8; 3] = [255, 255, 0];
const MAGENTA: [u8; 3] = [255, 0, 255];
const WHITE: [u8; 3] = [255, 255, 255];
/// sRGB 128 (linear 0.2158): a texel that must come back as it was.
const GREY: [u8; 3] = [128, 128, 128];

/// A screenshot.
struct Shot {
    px: Vec<[u8; 4]>,
    width: u32,
}

/// Whether `p` is `c` within `tol` per channel.
fn near(p: [u8; 3], c: [u8; 3], tol: u8) -> bool {
    (0..3).all(|i| p[i].abs_diff(c[i]) <= tol)
}

impl Shot {
    fn at(&self, x: f32, y: f32) -> [u8; 3] {
        let (x, y) = (x.round() as u32, y.round() as u32);
        let p = self.px[(y * self.width + x) as usize];
        [p[0], p[1], p[2]]
    }

    /// Pixels of colour `c` (within 6), and their centroid.
    fn find(&self, c: [u8; 3]) -> (usize, Option<(f32, f32)>) {
        let (mut n, mut sx, mut sy) = (0usize, 0.0f64, 0.0f64);
        for (i, p) in self.px.iter().enumerate() {
            if near([p[0], p[1], p[2]], c, 6) {
                n += 1;
                sx += (i as u32 % self.width) as f64;
                sy += (i as u32 / self.width) as f64;
            }
        }
        let centroid = (n > 0).then(|| ((sx / n as f64) as f32, (sy / n as f64) as f32));
        (n, centroid)
    }

    /// Pixels of colour `c` in the left and the right half.
    fn halves(&self, c: [u8; 3]) -> (usize, usize) {
        let mut counts = (0, 0);
        for (i, p) in self.px.iter().enumerate() {
            if near([p[0], p[1], p[2]], c, 6) {
                if (i as u32 % self.width) < self.width / 2 {
                    counts.0 += 1;
                } else {
                    counts.1 += 1;
                }
            }
        }
        counts
    }
}

/// The pixel of world point (x, y) (z = 0) for a model whose bounds are
/// the rectangle `lo..hi` in the plane z = 0, seen straight ahead in a
/// `width` x `height` view: the viewer's framing puts the rectangle's
/// limiting side at 1 / 1.05 of the view.
fn pixel_of(lo: [f32; 2], hi: [f32; 2], (width, height): (u32, u32), x: f32, y: f32) -> (f32, f32) {
    let (w, h) = (width as f32, height as f32);
    let half = [(hi[0] - lo[0]) * 0.5, (hi[1] - lo[1]) * 0.5];
    let centre = [(hi[0] + lo[0]) * 0.5, (hi[1] + lo[1]) * 0.5];
    // Pixels per world unit: the side that limits, at 1 / 1.05.
    let scale = (w * 0.5 / half[0]).min(h * 0.5 / half[1]) / 1.05;
    (
        w * 0.5 + (x - centre[0]) * scale,
        h * 0.5 - (y - centre[1]) * scale,
    )
}

/// Runs the viewer by `route` on `model` with `--yaw 0 --pitch 0 --frames
/// 1 --size SIZE` and `extra`, writing `dir/name.png`; `None` after a SKIP
/// line when there is no adapter (or, for the window, no `xvfb-run`).
fn shot(
    route: Route,
    dir: &Path,
    name: &str,
    model: &Path,
    size: (u32, u32),
    extra: &[&str],
) -> Option<Shot> {
    let test = format!("viewer scene {name} ({route:?})");
    if route == Route::Window && !has_xvfb(&test) {
        return None;
    }
    let path = dir.join(format!("{name}-{route:?}.png"));
    let size_arg = format!("{}x{}", size.0, size.1);
    let mut args = vec![
        model.to_str().unwrap(),
        "--screenshot",
        path.to_str().unwrap(),
        "--frames",
        "1",
        "--size",
        &size_arg,
        "--yaw",
        "0",
        "--pitch",
        "0",
    ];
    args.extend_from_slice(extra);
    let out = route.run(&args);
    if !gpu_ran(&test, &out) {
        return None;
    }
    let so = stdout(&out);
    assert!(out.status.success(), "{test}: {so}\n{}", stderr(&out));
    assert_eq!(
        so.contains("of the window"),
        route == Route::Window,
        "{test}: {so}"
    );
    // The run's adapter line names the backend: the one the suite runs on.
    if let Ok(want) = std::env::var("WGPU_BACKEND") {
        let line = so.to_lowercase();
        assert!(
            want.to_lowercase()
                .split(',')
                .any(|w| line.contains(&format!("({}, ", w.trim()))),
            "{test}: WGPU_BACKEND={want} but {so}"
        );
    }
    let (px, width, height) = read_png(&path);
    assert_eq!((width, height), size, "{test}");
    Some(Shot { px, width })
}

// ---------------------------------------------------------------------------
// Every part.

/// Bounds of the parts model over its clip (z = 0): red rises to y = 1.4.
const PARTS_LO: [f32; 2] = [-3.4, -1.6];
const PARTS_HI: [f32; 2] = [3.4, 1.4];
const PARTS_SIZE: (u32, u32) = (240, 120);

/// Joints "root" (the origin), "left" at (-3, 0, 0) and "right" at (3, 0,
/// 0). Rigid parts under the bones: red (0.8 square) under "left", and
/// under "right" a mesh of two primitives, green above white. Skin 0
/// (joint "left") is used by two mesh nodes, blue (x -1.4 to -0.6, y -0.4
/// to 0.4) and cyan (1.2 lower), whose own translations ((0, 5, 0), (7, 7,
/// 7)) glTF ignores; skin 1 (joint "right") by yellow (x 0.6 to 1.4). A
/// magenta mesh node outside the default scene. Clip "lift": "left" rises
/// by 1 over 1 s, carrying red, blue and cyan.
fn parts_model(dir: &Path) -> PathBuf {
    let mut b = Builder::new();
    let color = |b: &mut Builder, c: [f32; 3]| b.unlit([c[0], c[1], c[2], 1.0], None, json!({}));
    let (red, green, white) = (
        color(&mut b, [1.0, 0.0, 0.0]),
        color(&mut b, [0.0, 1.0, 0.0]),
        color(&mut b, [1.0, 1.0, 1.0]),
    );
    let (blue, cyan, yellow, magenta) = (
        color(&mut b, [0.0, 0.0, 1.0]),
        color(&mut b, [0.0, 1.0, 1.0]),
        color(&mut b, [1.0, 1.0, 0.0]),
        color(&mut b, [1.0, 0.0, 1.0]),
    );
    let red_mesh = b.mesh_of(&[quad(-0.4, -0.4, 0.4, 0.4, 0.0, 1.0).with_material(red)]);
    let two = b.mesh_of(&[
        quad(-0.4, 0.0, 0.4, 0.8, 0.0, 1.0).with_material(green),
        quad(-0.4, -0.8, 0.4, 0.0, 0.0, 1.0).with_material(white),
    ]);
    let skinned = |b: &mut Builder, y0: f32, x0: f32, m: usize| {
        b.mesh_of(&[quad(x0, y0, x0 + 0.8, y0 + 0.8, 0.0, 1.0)
            .with_material(m)
            .on_joint(0)])
    };
    let blue_mesh = skinned(&mut b, -0.4, -1.4, blue);
    let cyan_mesh = skinned(&mut b, -1.6, -1.4, cyan);
    let yellow_mesh = skinned(&mut b, -0.4, 0.6, yellow);
    let magenta_mesh = b.mesh_of(&[quad(-0.4, -0.4, 0.4, 0.4, 0.0, 1.0).with_material(magenta)]);
    let root = b.named("root", None, [0.0; 3], &[1, 2]);
    let left = b.named("left", None, [-3.0, 0.0, 0.0], &[3]);
    let right = b.named("right", None, [3.0, 0.0, 0.0], &[4]);
    b.named("red_part", Some(red_mesh), [0.0; 3], &[]);
    b.named("green_white_part", Some(two), [0.0; 3], &[]);
    let s0 = b.skin_of(&[left], &[[-3.0, 0.0, 0.0]]);
    let s1 = b.skin_of(&[right], &[[3.0, 0.0, 0.0]]);
    let n = b.named("blue_skinned", Some(blue_mesh), [0.0, 5.0, 0.0], &[]);
    b.nodes[n]["skin"] = json!(s0);
    let n = b.named("cyan_skinned", Some(cyan_mesh), [7.0, 7.0, 7.0], &[]);
    b.nodes[n]["skin"] = json!(s0);
    let n = b.named("yellow_skinned", Some(yellow_mesh), [0.0; 3], &[]);
    b.nodes[n]["skin"] = json!(s1);
    b.named("not_in_the_scene", Some(magenta_mesh), [0.0; 3], &[]);
    b.roots = Some(vec![root, 5, 6, 7]);
    b.slide("lift", left, [-3.0, 0.0, 0.0], [-3.0, 1.0, 0.0]);
    let path = dir.join("parts.glb");
    std::fs::write(&path, b.to_glb()).unwrap();
    path
}

/// Every part of the parts model at t = 0, where it stands; none of the
/// node outside the scene.
fn check_parts(route: Route) {
    let dir = temp_dir(&format!("viewer_parts_{route:?}"));
    let model = parts_model(&dir);
    let Some(s) = shot(route, &dir, "parts", &model, PARTS_SIZE, &[]) else {
        return;
    };
    let place = |x, y| pixel_of(PARTS_LO, PARTS_HI, PARTS_SIZE, x, y);
    // Pixels per world unit, and a 0.8 square's area in pixels.
    let unit = place(1.0, 0.0).0 - place(0.0, 0.0).0;
    let area = (0.8 * unit) * (0.8 * unit);
    for (name, c, x, y) in [
        ("red (rigid, under left)", RED, -3.0, 0.0),
        ("green (rigid, under right, primitive 0)", GREEN, 3.0, 0.4),
        ("white (rigid, under right, primitive 1)", WHITE, 3.0, -0.4),
        ("blue (skin 0, mesh node 1 of 2)", BLUE, -1.0, 0.0),
        ("cyan (skin 0, mesh node 2 of 2)", CYAN, -1.0, -1.2),
        ("yellow (skin 1)", YELLOW, 1.0, 0.0),
    ] {
        let (n, at) = s.find(c);
        let (px, py) = place(x, y);
        let (cx, cy) = at.unwrap_or_else(|| panic!("{route:?}: no {name} pixel"));
        println!(
            "{route:?}: {name}: {n} pixels around ({cx:.1}, {cy:.1}), expected ({px:.1}, {py:.1})"
        );
        assert!(
            n as f32 >= 0.7 * area,
            "{route:?}: {name}: {n} pixels, expected about {area:.0}"
        );
        assert!(
            (cx - px).abs() <= 2.0 && (cy - py).abs() <= 2.0,
            "{route:?}: {name} around ({cx}, {cy}), expected ({px}, {py})"
        );
    }
    let (n, _) = s.find(MAGENTA);
    assert_eq!(
        n, 0,
        "{route:?}: the node outside the default scene is drawn"
    );
}

#[test]
fn every_part_is_drawn_where_it_stands_offscreen() {
    check_parts(Route::Offscreen);
}

#[test]
fn every_part_is_drawn_where_it_stands_in_a_window() {
    check_parts(Route::Window);
}

/// At t = 0.5 "left" has risen by half a unit: red, blue and cyan (its
/// rigid child and the two nodes of its skin) rise by half a unit of
/// pixels; the parts of "right" stay. (The viewer repeats clips: at t = 1
/// the 1 s clip is back at its start.)
#[test]
fn parts_follow_their_bones() {
    let dir = temp_dir("viewer_parts_lift");
    let model = parts_model(&dir);
    let size = PARTS_SIZE;
    let Some(a) = shot(Route::Offscreen, &dir, "t0", &model, size, &[]) else {
        return;
    };
    let b = shot(
        Route::Offscreen,
        &dir,
        "t1",
        &model,
        size,
        &["--time", "0.5"],
    )
    .unwrap();
    let unit = pixel_of(PARTS_LO, PARTS_HI, size, 0.0, 0.0).1
        - pixel_of(PARTS_LO, PARTS_HI, size, 0.0, 0.5).1;
    for (name, c, rise) in [
        ("red", RED, unit),
        ("blue", BLUE, unit),
        ("cyan", CYAN, unit),
        ("green", GREEN, 0.0),
        ("yellow", YELLOW, 0.0),
    ] {
        let (_, p) = a.find(c);
        let (_, q) = b.find(c);
        let ((px, py), (qx, qy)) = (p.unwrap(), q.unwrap());
        assert!(
            (px - qx).abs() <= 1.0 && (py - qy - rise).abs() <= 1.5,
            "{name}: from ({px}, {py}) to ({qx}, {qy}), expected to rise {rise}"
        );
    }
}

/// `--instances 2`: two copies side by side, each with every part, and
/// the same picture with each copy in a chunk of its own (`--chunk-limit
/// 1`: buffers and a draw per chunk).
#[test]
fn instances_repeat_every_part() {
    let dir = temp_dir("viewer_parts_instances");
    let model = parts_model(&dir);
    let Some(s) = shot(
        Route::Offscreen,
        &dir,
        "two",
        &model,
        (320, 120),
        &["--instances", "2"],
    ) else {
        return;
    };
    for (name, c) in [
        ("red", RED),
        ("green", GREEN),
        ("white", WHITE),
        ("blue", BLUE),
        ("cyan", CYAN),
        ("yellow", YELLOW),
    ] {
        let (l, r) = s.halves(c);
        assert!(l >= 20 && r >= 20, "{name}: {l} pixels left, {r} right");
    }
    assert_eq!(s.find(MAGENTA).0, 0);
    // In chunks of one character (each its own buffers and draw), the same
    // picture.
    let chunked = shot(
        Route::Offscreen,
        &dir,
        "two_chunks",
        &model,
        (320, 120),
        &["--instances", "2", "--chunk-limit", "1"],
    )
    .unwrap();
    assert!(chunked.px == s.px, "chunks of one draw another picture");
}

// ---------------------------------------------------------------------------
// Materials.

const MATERIALS_LO: [f32; 2] = [-2.1, -2.1];
const MATERIALS_HI: [f32; 2] = [2.1, 2.1];
const MATERIALS_SIZE: (u32, u32) = (200, 200);
/// The quadrant texture's colours: top left, top right, bottom left,
/// bottom right.
const QUADRANTS: [[u8; 4]; 4] = [
    [255, 0, 0, 255],
    [0, 255, 0, 255],
    [0, 0, 255, 255],
    [128, 128, 128, 255],
];

/// Four 2 x 2 quads, unlit, in a .gltf with an embedded buffer:
/// - top left: a 64 x 64 texture of four quadrants (red, green; blue,
///   grey 128) from a PNG file beside the model, the default sampler;
/// - top right: COLOR_0, linear grey 0.5 on its upper part, (0, 1, 1) on
///   its lower part, times the factor (1, 0.5, 1);
/// - bottom left: the same four colours as a 2 x 2 texture in a buffer
///   view, nearest filtering and clamped to the edge, UVs 0 to 2;
/// - bottom right: the quadrant texture as a `data:` URI, shifted by
///   `KHR_texture_transform` offset (0.5, 0.5), repeating.
fn materials_model(dir: &Path) -> PathBuf {
    let mut b = Builder::new();
    std::fs::write(
        dir.join("quadrants.png"),
        png(64, 64, &quadrants(64, QUADRANTS)),
    )
    .unwrap();
    let file = b.image_uri("quadrants.png");
    let tex = b.texture(file, None);
    let top_left = b.unlit([1.0; 4], Some((tex, json!({}))), json!({}));
    let two = b.image_in_view(&png(2, 2, &quadrants(2, QUADRANTS)));
    // 9728 NEAREST, 33071 CLAMP_TO_EDGE.
    let tex = b.texture(two, Some([9728, 9728, 33071, 33071]));
    let bottom_left = b.unlit([1.0; 4], Some((tex, json!({}))), json!({}));
    let data = b.image_data_uri(&png(64, 64, &quadrants(64, QUADRANTS)));
    let tex = b.texture(data, None);
    let shift = json!({"extensions": {"KHR_texture_transform": {"offset": [0.5, 0.5]}}});
    let bottom_right = b.unlit([1.0; 4], Some((tex, shift)), json!({}));
    b.extensions_used.push("KHR_texture_transform".into());
    let colored = b.unlit([1.0, 0.5, 1.0, 1.0], None, json!({}));
    let mesh = b.mesh_of(&[
        quad(-2.1, 0.1, -0.1, 2.1, 0.0, 1.0).with_material(top_left),
        quad(0.1, 1.2, 2.1, 2.1, 0.0, 1.0)
            .with_material(colored)
            .colored([0.5, 0.5, 0.5, 1.0]),
        quad(0.1, 0.1, 2.1, 1.0, 0.0, 1.0)
            .with_material(colored)
            .colored([0.0, 1.0, 1.0, 1.0]),
        quad(-2.1, -2.1, -0.1, -0.1, 0.0, 2.0).with_material(bottom_left),
        quad(0.1, -2.1, 2.1, -0.1, 0.0, 1.0).with_material(bottom_right),
    ]);
    b.node(Some(mesh));
    let n = b.node(None);
    b.slide("still", n, [0.0; 3], [0.0; 3]);
    let path = dir.join("materials.gltf");
    std::fs::write(&path, b.to_gltf_embedded()).unwrap();
    path
}

/// (u, v) of the quad from (x0, y0) (bottom left) whose UVs run from 0 to
/// `uv_max` over its 2 units, as a pixel.
fn uv_pixel(x0: f32, y0: f32, uv_max: f32, u: f32, v: f32) -> (f32, f32) {
    let x = x0 + 2.0 * u / uv_max;
    let y = y0 + 2.0 - 2.0 * v / uv_max;
    pixel_of(MATERIALS_LO, MATERIALS_HI, MATERIALS_SIZE, x, y)
}

fn check_materials(route: Route) {
    let dir = temp_dir(&format!("viewer_materials_{route:?}"));
    let model = materials_model(&dir);
    let Some(s) = shot(route, &dir, "materials", &model, MATERIALS_SIZE, &[]) else {
        return;
    };
    let expect = |what: &str, (x, y): (f32, f32), c: [u8; 3], tol: u8| {
        let p = s.at(x, y);
        assert!(
            near(p, c, tol),
            "{route:?}: {what} at ({x:.0}, {y:.0}) is {p:?}, expected {c:?}"
        );
    };
    // The texture's quadrants where it puts them; grey 128 comes back as
    // 128 (decoded from sRGB by the sampler, encoded by the target).
    for (what, u, v, c) in [
        ("top left quadrant", 0.25, 0.25, RED),
        ("top right quadrant", 0.75, 0.25, GREEN),
        ("bottom left quadrant", 0.25, 0.75, BLUE),
        ("bottom right quadrant (sRGB 128)", 0.75, 0.75, GREY),
    ] {
        expect(what, uv_pixel(-2.1, 0.1, 1.0, u, v), c, 3);
    }
    // Vertex colours times the factor, in linear light, encoded: 0.5 ->
    // 188, 0.25 -> 137.
    expect(
        "COLOR_0 grey 0.5 x factor (1, 0.5, 1)",
        uv_pixel(0.1, 0.1, 1.0, 0.5, 0.2),
        [188, 137, 188],
        3,
    );
    expect(
        "COLOR_0 (0, 1, 1) x factor (1, 0.5, 1)",
        uv_pixel(0.1, 0.1, 1.0, 0.5, 0.75),
        [0, 188, 255],
        3,
    );
    // Nearest filtering: at u = 0.4, 0.1 texel from the texel edge, the
    // first texel alone (linear filtering would mix in 30% of green).
    expect(
        "nearest filter",
        uv_pixel(-2.1, -2.1, 2.0, 0.4, 0.25),
        RED,
        3,
    );
    // Clamped to the edge: past u = 1 the last column (green; repeating
    // would give red), past v = 1 the last row (blue; repeating: red).
    expect(
        "clamp to edge along u",
        uv_pixel(-2.1, -2.1, 2.0, 1.25, 0.25),
        GREEN,
        3,
    );
    expect(
        "clamp to edge along v",
        uv_pixel(-2.1, -2.1, 2.0, 0.25, 1.25),
        BLUE,
        3,
    );
    // KHR_texture_transform offset (0.5, 0.5), repeating: each quadrant
    // shows the diagonally opposite one.
    for (what, u, v, c) in [
        ("shifted top left", 0.25, 0.25, GREY),
        ("shifted top right", 0.75, 0.25, BLUE),
        ("shifted bottom left", 0.25, 0.75, GREEN),
        ("shifted bottom right", 0.75, 0.75, RED),
    ] {
        expect(what, uv_pixel(0.1, -2.1, 1.0, u, v), c, 3);
    }
}

#[test]
fn textures_vertex_colours_and_factors_offscreen() {
    check_materials(Route::Offscreen);
}

#[test]
fn textures_vertex_colours_and_factors_in_a_window() {
    check_materials(Route::Window);
}

/// Three 2 x 2 quads in a row: unlit with a red base colour but a blue
/// `KHR_materials_pbrSpecularGlossiness` diffuse (which glTF says to
/// prefer: blue); lit, black, with emissive factor (1, 1, 1) meant for an
/// emissive texture the viewer does not draw (black, not white); lit,
/// black, emissive (0.5, 0, 0) without a texture (linear 0.5: sRGB 188).
#[test]
fn diffuse_of_older_files_and_emissive_factors() {
    let dir = temp_dir("viewer_diffuse_emissive");
    let mut b = Builder::new();
    let mut gloss = serde_json::Map::new();
    gloss.insert(
        "KHR_materials_pbrSpecularGlossiness".into(),
        json!({"diffuseFactor": [0.0, 0.0, 1.0, 1.0]}),
    );
    let spec_gloss = b.unlit([1.0, 0.0, 0.0, 1.0], None, json!({}));
    b.materials[spec_gloss]["extensions"]
        .as_object_mut()
        .unwrap()
        .extend(gloss);
    b.extensions_used
        .push("KHR_materials_pbrSpecularGlossiness".into());
    let black = |c: [f32; 3]| json!({"pbrMetallicRoughness": {"baseColorFactor": [0.0, 0.0, 0.0, 1.0]}, "emissiveFactor": c});
    let white = b.image_in_view(&png(1, 1, &[255; 4]));
    let tex = b.texture(white, None);
    b.materials.push(black([1.0, 1.0, 1.0]));
    b.materials.last_mut().unwrap()["emissiveTexture"] = json!({ "index": tex });
    b.materials.push(black([0.5, 0.0, 0.0]));
    let mesh = b.mesh_of(&[
        quad(-3.2, -1.0, -1.2, 1.0, 0.0, 1.0).with_material(spec_gloss),
        quad(-1.0, -1.0, 1.0, 1.0, 0.0, 1.0).with_material(spec_gloss + 1),
        quad(1.2, -1.0, 3.2, 1.0, 0.0, 1.0).with_material(spec_gloss + 2),
    ]);
    b.node(Some(mesh));
    let n = b.node(None);
    b.slide("still", n, [0.0; 3], [0.0; 3]);
    let model = dir.join("older.glb");
    std::fs::write(&model, b.to_glb()).unwrap();
    let size = (192, 64);
    let Some(s) = shot(Route::Offscreen, &dir, "older", &model, size, &[]) else {
        return;
    };
    for (what, x, c) in [
        ("specular-glossiness diffuse", -2.2, BLUE),
        ("emissive factor of an emissive texture", 0.0, [0, 0, 0]),
        ("emissive factor alone", 2.2, [188, 0, 0]),
    ] {
        let (px, py) = pixel_of([-3.2, -1.0], [3.2, 1.0], size, x, 0.0);
        let p = s.at(px, py);
        assert!(near(p, c, 3), "{what}: {p:?}, expected {c:?}");
    }
}

// ---------------------------------------------------------------------------
// Alpha modes and faces.

const ALPHA_LO: [f32; 2] = [-1.5, -2.0];
const ALPHA_HI: [f32; 2] = [2.5, 2.0];
const ALPHA_SIZE: (u32, u32) = (200, 200);

/// Unlit quads in a .glb, in this node order:
/// 0. red, alpha 0.5, blended, x -0.5 to 1.5, y -0.5 to 0.5, z 0.05 (in
///    front of 1, and first in the file);
/// 1. blue, opaque, x -1.5 to 0.5, y -1 to 1;
/// 2. green, masked (cutoff 0.5) by a 2 x 1 texture of alpha 0.4 (left)
///    and 0.6 (right), nearest, x -1.5 to 1.5, y 1.2 to 2;
/// 3. magenta, single-sided, facing away (-Z), x -1.5 to -0.1, y -2 to -1.2;
/// 4. yellow, double-sided, facing away, x 0.1 to 1.5, y -2 to -1.2;
/// 5. cyan, single-sided, facing +Z in its mesh, on a node mirrored by
///    scale (-1, 1, 1): x 1.7 to 2.5, y -0.4 to 0.4 (glTF: a mirroring
///    transform makes clockwise triangles the front ones).
fn alpha_model(dir: &Path) -> PathBuf {
    let mut b = Builder::new();
    let blend = b.unlit([1.0, 0.0, 0.0, 0.5], None, json!({"alphaMode": "BLEND"}));
    let opaque = b.unlit([0.0, 0.0, 1.0, 1.0], None, json!({}));
    let halves = b.image_in_view(&png(2, 1, &[255, 255, 255, 102, 255, 255, 255, 153]));
    let tex = b.texture(halves, Some([9728, 9728, 33071, 33071]));
    let mask = b.unlit(
        [0.0, 1.0, 0.0, 1.0],
        Some((tex, json!({}))),
        json!({"alphaMode": "MASK", "alphaCutoff": 0.5}),
    );
    let single = b.unlit([1.0, 0.0, 1.0, 1.0], None, json!({}));
    let double = b.unlit([1.0, 1.0, 0.0, 1.0], None, json!({"doubleSided": true}));
    let mirrored = b.unlit([0.0, 1.0, 1.0, 1.0], None, json!({}));
    let meshes = [
        quad(-0.5, -0.5, 1.5, 0.5, 0.05, 1.0).with_material(blend),
        quad(-1.5, -1.0, 0.5, 1.0, 0.0, 1.0).with_material(opaque),
        quad(-1.5, 1.2, 1.5, 2.0, 0.0, 1.0).with_material(mask),
        quad(-1.5, -2.0, -0.1, -1.2, 0.0, 1.0)
            .flipped()
            .with_material(single),
        quad(0.1, -2.0, 1.5, -1.2, 0.0, 1.0)
            .flipped()
            .with_material(double),
        quad(-2.5, -0.4, -1.7, 0.4, 0.0, 1.0).with_material(mirrored),
    ];
    for m in meshes {
        let mesh = b.mesh_of(&[m]);
        b.node(Some(mesh));
    }
    b.nodes[5]["scale"] = json!([-1.0, 1.0, 1.0]);
    let n = b.node(None);
    b.slide("still", n, [0.0; 3], [0.0; 3]);
    let path = dir.join("alpha.glb");
    std::fs::write(&path, b.to_glb()).unwrap();
    path
}

fn check_alpha(route: Route) {
    let dir = temp_dir(&format!("viewer_alpha_{route:?}"));
    let model = alpha_model(&dir);
    let Some(s) = shot(route, &dir, "alpha", &model, ALPHA_SIZE, &[]) else {
        return;
    };
    let expect = |what: &str, x: f32, y: f32, c: [u8; 3], tol: u8| {
        let (px, py) = pixel_of(ALPHA_LO, ALPHA_HI, ALPHA_SIZE, x, y);
        let p = s.at(px, py);
        assert!(
            near(p, c, tol),
            "{route:?}: {what} at ({px:.0}, {py:.0}) is {p:?}, expected {c:?}"
        );
    };
    expect("the opaque part alone", -1.0, 0.7, BLUE, 3);
    // Half red over blue, mixed in linear light: (0.5, 0, 0.5) is sRGB
    // (188, 0, 188). Drawn before the opaque part (no depth write), the
    // blend would be painted over: pure blue.
    expect("blend over the opaque part", 0.0, 0.0, [188, 0, 188], 4);
    // Half red over the background (linear 0.007, 0.007, 0.010).
    expect("blend over the background", 1.2, 0.0, [188, 12, 17], 5);
    // The mask: alpha 0.4 is cut (the background shows), alpha 0.6 is
    // drawn fully opaque (not 60% green).
    expect("masked out", -0.75, 1.6, BACKGROUND, 2);
    expect("masked in", 0.75, 1.6, GREEN, 3);
    expect("a double-sided part seen from behind", 0.8, -1.6, YELLOW, 3);
    expect(
        "a single-sided part seen from behind",
        -0.8,
        -1.6,
        BACKGROUND,
        2,
    );
    assert_eq!(s.find(MAGENTA).0, 0, "{route:?}: a back face is drawn");
    expect("a mirrored part", 2.1, 0.0, CYAN, 3);
}

#[test]
fn alpha_modes_and_faces_offscreen() {
    check_alpha(Route::Offscreen);
}

#[test]
fn alpha_modes_and_faces_in_a_window() {
    check_alpha(Route::Window);
}

// ---------------------------------------------------------------------------
// --clips

/// A model without animations: node "Hips" with child "Body" (a red 1 x 1
/// quad at the origin), and a grey floor; "walk.gltf" animates "Hips" from
/// x = 0 to 2 over 1 s, and "Tail", which the model lacks; "other.gltf"
/// animates only "Nobody".
fn clips_files(dir: &Path) -> [PathBuf; 3] {
    let mut m = Builder::new();
    let red = m.unlit([1.0, 0.0, 0.0, 1.0], None, json!({}));
    let grey = m.unlit([0.2, 0.2, 0.2, 1.0], None, json!({}));
    let body = m.mesh_of(&[quad(-0.5, -0.5, 0.5, 0.5, 0.0, 1.0).with_material(red)]);
    let floor = m.mesh_of(&[quad(-1.0, -1.5, 3.0, -1.0, 0.0, 1.0).with_material(grey)]);
    m.named("Hips", None, [0.0; 3], &[1]);
    m.named("Body", Some(body), [0.0; 3], &[]);
    m.named("Floor", Some(floor), [0.0; 3], &[]);
    m.roots = Some(vec![0, 2]);
    let model = dir.join("model.gltf");
    std::fs::write(&model, m.to_gltf_embedded()).unwrap();

    let mut w = Builder::new();
    let hips = w.named("Hips", None, [0.0; 3], &[]);
    let tail = w.named("Tail", None, [0.0; 3], &[]);
    let times = w.accessor_f32(&[0.0, 1.0], "SCALAR");
    let slide = w.accessor_f32(&[0.0, 0.0, 0.0, 2.0, 0.0, 0.0], "VEC3");
    let wag = w.accessor_f32(&[0.0, 0.0, 0.0, 0.0, 1.0, 0.0], "VEC3");
    w.animation(
        "walk",
        &[(times, slide, "LINEAR"), (times, wag, "LINEAR")],
        &[(0, hips, "translation"), (1, tail, "translation")],
    );
    let walk = dir.join("walk.gltf");
    std::fs::write(&walk, w.to_gltf_embedded()).unwrap();

    let mut o = Builder::new();
    let nobody = o.named("Nobody", None, [0.0; 3], &[]);
    o.slide("dance", nobody, [0.0; 3], [1.0, 0.0, 0.0]);
    let other = dir.join("other.gltf");
    std::fs::write(&other, o.to_gltf_embedded()).unwrap();
    [model, walk, other]
}

/// A clip from an animation-only file plays on the model, bound by node
/// name; a file none of whose tracks binds is refused in one line.
#[test]
fn clips_from_another_file_play_on_the_model() {
    let dir = temp_dir("viewer_clips");
    let [model, walk, other] = clips_files(&dir);
    let clips = ["--clips", walk.to_str().unwrap()];
    let Some(a) = shot(Route::Offscreen, &dir, "walk0", &model, (200, 100), &clips) else {
        return;
    };
    // Halfway through the 1 s clip: one unit to the right.
    let mut late = clips.to_vec();
    late.extend(["--time", "0.5"]);
    let b = shot(Route::Offscreen, &dir, "walk1", &model, (200, 100), &late).unwrap();
    let unit = pixel_of([-1.0, -1.5], [3.0, 0.5], (200, 100), 1.0, 0.0).0
        - pixel_of([-1.0, -1.5], [3.0, 0.5], (200, 100), 0.0, 0.0).0;
    let ((ax, ay), (bx, by)) = (a.find(RED).1.unwrap(), b.find(RED).1.unwrap());
    assert!(
        (bx - ax - unit).abs() <= 1.5 && (by - ay).abs() <= 1.0,
        "Body from ({ax}, {ay}) to ({bx}, {by}), expected {unit} pixels to the right"
    );
    let out = run_headless(&[
        model.to_str().unwrap(),
        "--clips",
        walk.to_str().unwrap(),
        "--screenshot",
        dir.join("title.png").to_str().unwrap(),
        "--frames",
        "1",
        "--size",
        "64x32",
    ]);
    let so = stdout(&out);
    assert!(
        so.contains("clip 1 \"walk\": 1 tracks bound by name, 1 unbound"),
        "{so}"
    );
    assert!(so.contains("| clip 1/1 \"walk\" |"), "{so}");

    let out = run_headless(&[model.to_str().unwrap(), "--clips", other.to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("none of its tracks binds"), "{err}");
    assert!(err.contains("other.gltf"), "{err}");
    assert!(stdout(&out).is_empty());
}

// ---------------------------------------------------------------------------
// Image files

/// A model in `dir/model/` whose white unlit quad (x and y -1 to 1) is
/// textured by the image at `uri`.
fn textured_quad(dir: &Path, name: &str, uri: &str) -> PathBuf {
    let mut b = Builder::new();
    let image = b.image_uri(uri);
    let tex = b.texture(image, None);
    let m = b.unlit([1.0; 4], Some((tex, json!({}))), json!({}));
    let mesh = b.mesh_of(&[quad(-1.0, -1.0, 1.0, 1.0, 0.0, 1.0).with_material(m)]);
    b.node(Some(mesh));
    let n = b.node(None);
    b.slide("still", n, [0.0; 3], [0.0; 3]);
    std::fs::create_dir_all(dir.join("model")).unwrap();
    let path = dir.join("model").join(name);
    std::fs::write(&path, b.to_gltf_embedded()).unwrap();
    path
}

/// An image URI resolves inside the asset root (the model's folder unless
/// `--asset-root` widens it), like a buffer's; a broken PNG is one line and
/// exit 2; a format the viewer does not decode (WebP) is a note, and its
/// material is drawn without it.
#[test]
fn image_files_stay_inside_the_asset_root() {
    let dir = temp_dir("viewer_image_files");
    let red = [255, 0, 0, 255];
    std::fs::write(dir.join("outside.png"), png(4, 4, &quadrants(4, [red; 4]))).unwrap();
    let escape = textured_quad(&dir, "escape.gltf", "../outside.png");
    let broken = textured_quad(&dir, "broken.gltf", "broken.png");
    std::fs::write(
        dir.join("model/broken.png"),
        b"\x89PNG\r\n\x1a\n not really",
    )
    .unwrap();
    let webp = textured_quad(&dir, "webp.gltf", "picture.webp");
    std::fs::write(dir.join("model/picture.webp"), b"RIFF\0\0\0\0WEBPVP8 ").unwrap();
    let shot_path = dir.join("never.png");
    for (model, expect) in [(&escape, "refused"), (&broken, "PNG")] {
        let out = run_headless(&[
            model.to_str().unwrap(),
            "--screenshot",
            shot_path.to_str().unwrap(),
        ]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains("image 0") && err.contains(expect), "{err}");
    }
    assert!(!shot_path.exists());
    let root = dir.to_str().unwrap();
    let lo_hi = ([-1.0, -1.0], [1.0, 1.0]);
    let centre = pixel_of(lo_hi.0, lo_hi.1, (64, 64), 0.0, 0.0);
    let Some(s) = shot(
        Route::Offscreen,
        &dir,
        "root",
        &escape,
        (64, 64),
        &["--asset-root", root],
    ) else {
        return;
    };
    assert!(
        near(s.at(centre.0, centre.1), RED, 3),
        "inside a wider root"
    );
    let out = run_headless(&[
        webp.to_str().unwrap(),
        "--screenshot",
        dir.join("webp.png").to_str().unwrap(),
        "--frames",
        "1",
        "--size",
        "64x64",
        "--yaw",
        "0",
        "--pitch",
        "0",
    ]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("note: image 0 is WebP"), "{err}");
    let (px, _, _) = read_png(&dir.join("webp.png"));
    let p = px[(centre.1.round() as usize) * 64 + centre.0.round() as usize];
    assert!(
        near([p[0], p[1], p[2]], WHITE, 3),
        "WebP: {p:?}, expected the untextured white"
    );
}

// ---------------------------------------------------------------------------

/// `scene.wgsl`'s uniform structs and the Rust twins in `uniforms.rs`:
/// same members at the same offsets, same sizes (naga's layouter), and the
/// shared constants. No adapter needed.
#[test]
fn uniform_blocks_match_the_shader() {
    let source = include_str!("../examples/viewer/scene.wgsl");
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("scene.wgsl: {}", e.emit_to_string(source)));
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .unwrap_or_else(|e| panic!("scene.wgsl: {}", e.emit_to_string(source)));
    let mut layouter = naga::proc::Layouter::default();
    layouter
        .update(module.to_ctx())
        .unwrap_or_else(|e| panic!("layouter: {e:?}"));
    for (name, rust, size) in uniforms::layouts() {
        let (handle, ty) = module
            .types
            .iter()
            .find(|(_, ty)| ty.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("scene.wgsl has no struct {name}"));
        let naga::TypeInner::Struct { members, .. } = &ty.inner else {
            panic!("{name} is not a struct");
        };
        let wgsl: Vec<(&str, usize)> = members
            .iter()
            .map(|m| (m.name.as_deref().unwrap_or("?"), m.offset as usize))
            .collect();
        assert_eq!(wgsl, rust, "{name} members (name, byte offset)");
        assert_eq!(layouter[handle].size as usize, size, "{name} size");
    }
    for (name, value) in uniforms::constants() {
        let c = module
            .constants
            .iter()
            .find(|(_, c)| c.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("scene.wgsl has no constant {name}"))
            .1;
        let expr = &module.global_expressions[c.init];
        assert_eq!(
            *expr,
            naga::Expression::Literal(naga::Literal::U32(value)),
            "constant {name}"
        );
    }
}
