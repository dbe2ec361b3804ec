//! The `skinning` example's material demo (`--material-demo`): a tube whose
//! material's base colour, emissive strength and base colour texture
//! offset are animated by `KHR_animation_pointer` tracks built in code, and
//! which the fragment shader colours from the sampler's output buffer (no
//! readback). Two frames rendered; the colour of a known pixel and the
//! place of the checker's edges are computed by hand from the keys.
//!
//! The scene ([`render::material_scene`]): the tube of radius 0.3 along +Y
//! (24 segments, a vertex every 15 degrees starting at +X), bent at joints
//! 1 to 3 only, so below y = 0.75 (bone 0, weight 1) it stays in its bind
//! pose at every time. Keys (LINEAR):
//! - base colour: t = 0 (0.1, 0.55, 0.9, 1), t = 2 (0.95, 0.8, 0.1, 1);
//! - emissive strength: t = 0: 0, t = 2: 2; emissive factor (0.25, 0.1, 0.02);
//! - texture offset: t = 0 (0, 0), t = 4 (2/3, 1/4).
//!
//! At t = 1 that is base (0.525, 0.675, 0.5), strength 1, offset (1/6,
//! 1/16). The shader's colour is `base * checker(uv + offset) * light +
//! emissive * strength`, with uv = (angle about +Y from +X / 2 pi, y / 4),
//! a checker of 6 x 8 cells (1 on even cells, 0.35 on odd), and `light =
//! 0.25 + 0.75 |n . l|` (l = (0.4, 0.7, 0.6) normalized, n the flat face's
//! normal). The camera is the orthographic front view of
//! `tests/skin_render.rs`: x in [-2.75, 2.75], y in [-0.75, 4.75], 256
//! pixels.

mod common;

// examples/skinning/render.rs names the examples' device helper as
// `crate::headless`, the tests' shared one here.
use common::headless;

#[path = "../examples/common/gfx.rs"]
mod gfx;
#[path = "../examples/skinning/render.rs"]
mod render;

use render::Sheet;

const FRAME: u32 = 256;
const HALF: f32 = 2.75;
const CENTRE_Y: f32 = 2.0;
const RADIUS: f32 = 0.3;

/// World (x, y) of the centre of pixel (px, py).
fn world_of(px: u32, py: u32) -> (f32, f32) {
    let size = 2.0 * HALF / FRAME as f32;
    (
        -HALF + (px as f32 + 0.5) * size,
        CENTRE_Y + HALF - (py as f32 + 0.5) * size,
    )
}

/// The pixel row that world height y falls in.
fn row_of(y: f32) -> f32 {
    (HALF - (y - CENTRE_Y)) / (2.0 * HALF) * FRAME as f32
}

fn render_times(h: &common::headless::Headless, times: &[f64]) -> Sheet {
    let scene = render::material_scene();
    let camera = render::front_ortho(CENTRE_Y, HALF);
    render::render(
        h,
        &scene,
        times,
        camera,
        FRAME,
        times.len() as u32,
        render::Pose::Animated,
    )
    .unwrap_or_else(|e| panic!("render failed: {e}"))
}

/// The front face between the vertices at 75 and 90 degrees (x from
/// 0.3 cos 75 = 0.078 to 0): its flat normal points at 82.5 degrees, and
/// the point of the face seen at x lies on the chord between the two
/// vertices. Returns (u, light) for x.
fn front_face(x: f32) -> (f32, f32) {
    let (a, b) = (75f32.to_radians(), 90f32.to_radians());
    let (p, q) = (
        glam::Vec2::new(a.cos(), a.sin()) * RADIUS,
        glam::Vec2::new(b.cos(), b.sin()) * RADIUS,
    );
    assert!(x > q.x && x < p.x, "x = {x} is not on the face");
    let s = (x - p.x) / (q.x - p.x);
    let point = p + s * (q - p);
    let u = point.y.atan2(point.x) / std::f32::consts::TAU;
    let mid = 82.5f32.to_radians();
    let n = glam::Vec3::new(mid.cos(), 0.0, mid.sin());
    let l = glam::Vec3::new(0.4, 0.7, 0.6).normalize();
    (u, 0.25 + 0.75 * n.dot(l).abs())
}

/// 1 on even checker cells, 0.35 on odd ones.
fn checker(u: f32, v: f32) -> f32 {
    let cells = (u * 6.0).floor() as i32 + (v * 8.0).floor() as i32;
    if cells % 2 == 0 {
        1.0
    } else {
        0.35
    }
}

fn to_unorm8(c: f32) -> u8 {
    (c.clamp(0.0, 1.0) * 255.0).round() as u8
}

fn assert_close(got: [u8; 4], want: [f32; 3], what: &str) {
    let want8 = want.map(to_unorm8);
    for c in 0..3 {
        assert!(
            got[c].abs_diff(want8[c]) <= 2,
            "{what}: pixel {got:?}, expected {want8:?} ({want:?}) within 2/255"
        );
    }
}

#[test]
fn pixel_colour_follows_the_animated_base_colour_and_emissive_strength() {
    let Some(h) = common::gpu("material render: colour") else {
        return;
    };
    let sheet = render_times(&h, &[0.0, 1.0]);
    // A pixel on the front face, on bone 0 (y about 0.61).
    let (px, py) = (129, 192);
    let (x, y) = world_of(px, py);
    let (u, light) = front_face(x);
    let v = y / 4.0;
    // t = 0: base colour of the first key, no emission, no offset. The
    // pixel's cell: u * 6 = 1.4, v * 8 = 1.2: even, the bright one.
    assert_eq!(checker(u, v), 1.0, "u = {u}, v = {v}");
    let t0 = [0.1, 0.55, 0.9].map(|c| c * light);
    assert_close(sheet.pixel(0, px, py), t0, "t = 0");
    // t = 1: halfway between the first two keys; the offset moves the
    // pixel to cell (2, 1): odd, the dark one.
    let (du, dv) = (1.0 / 6.0, 1.0 / 16.0);
    assert_eq!(checker(u + du, v + dv), 0.35, "u = {u}, v = {v} + offset");
    let base = [0.525, 0.675, 0.5];
    let emissive = [0.25, 0.1, 0.02];
    let t1 = [0, 1, 2].map(|c| base[c] * 0.35 * light + emissive[c] * 1.0);
    assert_close(sheet.pixel(1, px, py), t1, "t = 1");
}

#[test]
fn the_checker_slides_with_the_animated_texture_offset() {
    let Some(h) = common::gpu("material render: offset") else {
        return;
    };
    let sheet = render_times(&h, &[0.0, 1.0]);
    // Down the column of the front face, over bone 0 (y from 0.05 to 0.7),
    // the only change of colour is the checker's edge between rows of
    // cells: where (y / 4 + offset.y) * 8 = 1, at y = 0.5 at t = 0 and
    // y = 0.25 at t = 1 (offset.y 1/16), a quarter of a world unit lower.
    let px = 129;
    let (top, bottom) = (row_of(0.7) as u32, row_of(0.05) as u32);
    for (frame, edge_y) in [(0, 0.5f32), (1, 0.25)] {
        let edges: Vec<u32> = (top..bottom)
            .filter(|&py| {
                let (a, b) = (sheet.pixel(frame, px, py), sheet.pixel(frame, px, py + 1));
                (0..3).any(|c| a[c].abs_diff(b[c]) > 20)
            })
            .collect();
        // The edge lies between rows py and py + 1: row_of(edge_y) is
        // py + 1 up to the pixel grid.
        let want = row_of(edge_y);
        assert!(
            edges.len() == 1 && (edges[0] as f32 + 1.0 - want).abs() <= 1.0,
            "frame {frame}: edges after rows {edges:?}, expected one near row {want}"
        );
    }
}

/// `render.wgsl`'s `Draw` and the Rust twin in `render.rs`: same members
/// at the same offsets, same size (naga's layouter). No adapter needed.
#[test]
fn draw_block_matches_the_shader() {
    let source = include_str!("../examples/skinning/render.wgsl");
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("render.wgsl: {}", e.emit_to_string(source)));
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .unwrap_or_else(|e| panic!("render.wgsl: {}", e.emit_to_string(source)));
    let mut layouter = naga::proc::Layouter::default();
    layouter
        .update(module.to_ctx())
        .unwrap_or_else(|e| panic!("layouter: {e:?}"));
    let (handle, ty) = module
        .types
        .iter()
        .find(|(_, ty)| ty.name.as_deref() == Some("Draw"))
        .expect("render.wgsl has a struct Draw");
    let naga::TypeInner::Struct { members, .. } = &ty.inner else {
        panic!("Draw is not a struct");
    };
    let wgsl: Vec<(&str, usize)> = members
        .iter()
        .map(|m| (m.name.as_deref().unwrap_or("?"), m.offset as usize))
        .collect();
    let (rust, size) = render::draw_layout();
    assert_eq!(wgsl, rust, "Draw members (name, byte offset)");
    assert_eq!(layouter[handle].size as usize, size, "Draw size");
}
