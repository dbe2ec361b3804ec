//! An orbit camera: yaw and pitch around a target at a distance, framed on
//! a bounding box.

use glam::{Mat4, Vec3};

/// Radians per pixel dragged.
const RADIANS_PER_PIXEL: f32 = 0.008;
/// Distance factor per wheel step (one line).
const ZOOM_PER_STEP: f32 = 0.9;

/// Looks at `target` from `distance` away, from the direction given by
/// `yaw` (about +Y; 0 looks down -Z, from +Z) and `pitch` (above the XZ
/// plane).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Orbit {
    target: Vec3,
    yaw: f32,
    pitch: f32,
    distance: f32,
    /// Radius of the framed box's bounding sphere (sets near and far).
    radius: f32,
    fov_y: f32,
}

impl Orbit {
    /// A camera from direction `yaw`, `pitch` (radians) that sees the
    /// whole of the box `lo..hi` in a view of `aspect` (width / height):
    /// the distance at which every corner of the box is inside the view,
    /// plus 5%.
    pub fn framing(lo: Vec3, hi: Vec3, aspect: f32, yaw: f32, pitch: f32) -> Orbit {
        let fov_y = 40f32.to_radians();
        let mut orbit = Orbit {
            target: (lo + hi) * 0.5,
            yaw,
            pitch: pitch.clamp(-1.5, 1.5),
            distance: 1.0,
            radius: ((hi - lo).length() * 0.5).max(1e-3),
            fov_y,
        };
        let (back, right, up) = orbit.axes();
        let tan_y = (0.5 * fov_y).tan();
        let tan_x = tan_y * aspect.max(1e-3);
        let mut distance = orbit.radius * 0.1;
        for corner in 0..8 {
            let pick = |bit: u32, l: f32, h: f32| if corner & bit == 0 { l } else { h };
            let p = Vec3::new(
                pick(1, lo.x, hi.x),
                pick(2, lo.y, hi.y),
                pick(4, lo.z, hi.z),
            ) - orbit.target;
            // The corner is in view when |x| <= tan_x (d - z), |y| <= tan_y (d - z).
            let z = p.dot(back);
            distance = distance
                .max(z + p.dot(right).abs() / tan_x)
                .max(z + p.dot(up).abs() / tan_y);
        }
        orbit.distance = distance * 1.05;
        orbit
    }

    /// The unit vectors from the target towards the eye, to the right and up
    /// on screen.
    fn axes(&self) -> (Vec3, Vec3, Vec3) {
        let (sy, cy) = self.yaw.sin_cos();
        let (sp, cp) = self.pitch.sin_cos();
        let back = Vec3::new(cp * sy, sp, cp * cy);
        let right = Vec3::Y.cross(back).normalize();
        (back, right, back.cross(right))
    }

    /// Turns by a drag of `dx`, `dy` pixels (right and down).
    pub fn rotate(&mut self, dx: f32, dy: f32) {
        self.yaw -= dx * RADIANS_PER_PIXEL;
        self.pitch = (self.pitch + dy * RADIANS_PER_PIXEL).clamp(-1.5, 1.5);
    }

    /// Moves closer by `steps` wheel steps (negative: away).
    pub fn zoom(&mut self, steps: f32) {
        self.distance = (self.distance * ZOOM_PER_STEP.powf(steps))
            .clamp(self.radius * 0.05, self.radius * 50.0);
    }

    /// Where the camera is.
    pub fn eye(&self) -> Vec3 {
        self.target + self.distance * self.axes().0
    }

    /// The direction towards the light: from behind the camera, above and
    /// to its left, so that it turns with the camera and the side seen is
    /// lit.
    pub fn light(&self) -> Vec3 {
        let (back, right, up) = self.axes();
        (back + 0.8 * up - 0.45 * right).normalize()
    }

    /// The view-projection matrix for a view of `aspect` (width / height).
    pub fn view_proj(&self, aspect: f32) -> Mat4 {
        let near = (self.distance - 2.0 * self.radius).max(self.distance * 0.01);
        let far = self.distance + 2.0 * self.radius;
        crate::gfx::perspective(self.fov_y, aspect.max(1e-3), near, far)
            * crate::gfx::look_at(self.eye(), self.target, Vec3::Y)
    }
}
