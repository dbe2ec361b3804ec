//! The headless skinning render (the `skinning` example's renderer): frames
//! at different times differ where the mesh moves, and time 0 of a clip
//! that starts at rest is the bind pose, pixel for pixel.
//!
//! The scene is the example's tube: 4 bones along +Y (joints at y = 0, 1,
//! 2, 3), radius 0.3, joints 1 to 3 bent by 35 degrees about +Z at t = 1,
//! straight at t = 0 and t = 2; a bulge morph target with weight 1 at t = 1
//! and 0 at t = 0 and t = 2. The camera is orthographic, looking down -Z at
//! x in [-2.75, 2.75], y in [-0.75, 4.75], so every expected pixel below is
//! computed by hand from world coordinates.

mod common;

// examples/skinning/render.rs names the examples' device helper as
// `crate::headless`, the tests' shared one here.
use common::headless;

#[path = "../examples/common/gfx.rs"]
mod gfx;
#[path = "../examples/skinning/render.rs"]
mod render;

use render::{Pose, Sheet, BACKGROUND};

const FRAME: u32 = 256;
const HALF: f32 = 2.75;
const CENTRE_Y: f32 = 2.0;

/// The pixel that world point (x, y) falls in.
fn pixel_of(x: f32, y: f32) -> (u32, u32) {
    let px = (x + HALF) / (2.0 * HALF) * FRAME as f32;
    let py = (HALF - (y - CENTRE_Y)) / (2.0 * HALF) * FRAME as f32;
    (px as u32, py as u32)
}

fn is_mesh(sheet: &Sheet, frame: u32, x: f32, y: f32) -> bool {
    let (px, py) = pixel_of(x, y);
    sheet.pixel(frame, px, py) != BACKGROUND
}

fn render_times(h: &common::headless::Headless, times: &[f64], pose: Pose) -> Sheet {
    let scene = render::tube_scene();
    let camera = render::front_ortho(CENTRE_Y, HALF);
    render::render(h, &scene, times, camera, FRAME, times.len() as u32, pose)
        .unwrap_or_else(|e| panic!("render failed: {e}"))
}

fn differing_pixels(a: &Sheet, fa: u32, b: &Sheet, fb: u32) -> usize {
    let mut n = 0;
    for y in 0..FRAME {
        for x in 0..FRAME {
            if a.pixel(fa, x, y) != b.pixel(fb, x, y) {
                n += 1;
            }
        }
    }
    n
}

#[test]
fn frames_at_different_times_differ_where_the_mesh_moves() {
    let Some(h) = common::gpu("skin render: moving") else {
        return;
    };
    let sheet = render_times(&h, &[0.0, 1.0], Pose::Animated);
    let a = 35f32.to_radians();
    // The tip region: covered by the straight tube at t = 0; at t = 1 the
    // chain is bent (35, 70, 105 degrees) and nothing reaches y = 3.8.
    assert!(is_mesh(&sheet, 0, 0.0, 3.8), "t=0: tube top at (0, 3.8)");
    assert!(!is_mesh(&sheet, 1, 0.0, 3.8), "t=1: (0, 3.8) is empty");
    // The middle of bone 2 at t = 1: joint 2 at (-sin a, 1 + cos a), bone 2
    // pointing at 2a: midpoint = joint 2 + 0.5 (-sin 2a, cos 2a).
    let (mx, my) = (
        -a.sin() - 0.5 * (2.0 * a).sin(),
        1.0 + a.cos() + 0.5 * (2.0 * a).cos(),
    );
    assert!(
        is_mesh(&sheet, 1, mx, my),
        "t=1: bent bone 2 at ({mx}, {my})"
    );
    assert!(!is_mesh(&sheet, 0, mx, my), "t=0: ({mx}, {my}) is empty");
    // The base (bone 0, never rotated) is drawn in both frames.
    assert!(is_mesh(&sheet, 0, 0.0, 0.4) && is_mesh(&sheet, 1, 0.0, 0.4));
    // The morph target: at t = 1 the bulge (0.25 sin(pi y / 4) outwards)
    // widens the static base at y = 0.6 from 0.3 to 0.41.
    assert!(!is_mesh(&sheet, 0, 0.36, 0.6), "t=0: no bulge");
    assert!(is_mesh(&sheet, 1, 0.36, 0.6), "t=1: bulge at (0.36, 0.6)");
    let n = differing_pixels(&sheet, 0, &sheet, 1);
    assert!(
        n > (FRAME * FRAME / 50) as usize,
        "only {n} pixels differ between t = 0 and t = 1"
    );
}

#[test]
fn time_zero_of_a_clip_starting_at_rest_is_the_bind_pose() {
    let Some(h) = common::gpu("skin render: bind pose") else {
        return;
    };
    // t = 0 (rest) and t = 2 (straight again, bulge weight 0) against the
    // stored positions drawn with no joints and no morphing. At rest the
    // joint matrices are exactly the identity (integer translations, unit
    // rotations), so the images match bit for bit.
    let animated = render_times(&h, &[0.0, 2.0], Pose::Animated);
    let bind = render_times(&h, &[0.0], Pose::Bind);
    assert!(is_mesh(&bind, 0, 0.0, 3.8) && !is_mesh(&bind, 0, 0.5, 2.0));
    for f in 0..2 {
        let n = differing_pixels(&animated, f, &bind, 0);
        assert_eq!(n, 0, "frame {f}: {n} pixels differ from the bind pose");
    }
}
