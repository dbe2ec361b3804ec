//! Blend spaces: clips placed at points of a parameter line or plane,
//! weighed from a parameter by linear interpolation (1D) or gradient
//! bands (2D, Johansen 2009: Cartesian, or polar for clips that differ
//! by direction). [`BlendSpace`] describes one, [`Clips::add_blend_space`]
//! checks and keeps it; a [`Player`](super::Player) plays it
//! (`spaces.rs`). The weight functions here are pure; `docs/USAGE.md`,
//! "Blend spaces", states their formulas.

use glam::Vec2;

use super::clips::{ClipHandle, Clips, ClipsId};
use crate::error::{PlaybackError, Result};

/// How a [`BlendSpace`] weighs its clips from its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlendMode {
    /// Clips on one axis (the points' `x`; their `y` is 0): a parameter
    /// between two neighbours weighs them linearly, clamped at the ends.
    OneD,
    /// Clips at points of a plane (a velocity's x and z, say): gradient
    /// band interpolation in Cartesian space.
    Cartesian,
    /// Clips that differ by direction (walk forward, left, right, back,
    /// an idle at the origin): gradient band interpolation in polar space,
    /// directions weighing twice as much as speeds.
    Directional,
}

/// How the clips of a [`BlendSpace`] keep in step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlendSync {
    /// Each clip plays at its own speed.
    Off,
    /// One normalised phase for every clip, advancing by `dt / D` with
    /// `D = sum(w_i L_i) / sum(w_i)`; clip `i` at `phase * L_i`.
    Phase,
    /// The heaviest clip leads (at the blended rate, as with
    /// [`Phase`](Self::Phase)); the others keep its fraction of the way
    /// between the same two named markers (its phase where they lack
    /// them).
    Markers,
}

/// A blend space: clips at points, weighed from a parameter by `mode`,
/// their weights moving at most `smoothing` per second when given, kept
/// in step by `sync`. Added to [`Clips`] by [`Clips::add_blend_space`].
#[derive(Debug, Clone, PartialEq)]
pub struct BlendSpace {
    /// Its name, unique among its clips' spaces (errors name it).
    pub name: String,
    /// How the weights follow the parameter.
    pub kind: BlendMode,
    /// The clips and their points (1D: `(x, 0)`).
    pub clips: Vec<(ClipHandle, Vec2)>,
    /// `Some(w)`: the weights move toward their targets together, each by
    /// at most `w` per second (`> 0`), keeping their sum; `None`: at once.
    pub smoothing: Option<f32>,
    /// How its clips keep in step.
    pub sync: BlendSync,
}

/// A blend space of one [`Clips`] ([`Clips::add_blend_space`]): what
/// [`Command::PlayBlendSpace`](super::Command::PlayBlendSpace) and
/// [`Command::SetBlendParams`](super::Command::SetBlendParams) take; a
/// player of other clips refuses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlendSpaceId {
    pub(super) clips: ClipsId,
    pub(super) index: u32,
}

impl Clips {
    /// Checks `space` and keeps it with these clips; returns its handle.
    ///
    /// # Errors
    /// [`PlaybackError::BadBlendSpace`] naming the space (and the clip)
    /// for a space with no clip, a name another space has, a clip of other
    /// clips or listed twice, a point that is not finite, a 1D point with
    /// a `y`, two clips at one point, or a smoothing that is not a finite
    /// number `> 0`.
    pub fn add_blend_space(&mut self, space: BlendSpace) -> Result<BlendSpaceId> {
        check_space(self.id(), &space, &self.spaces)?;
        let index = self.spaces.len() as u32;
        self.spaces.push(space);
        Ok(BlendSpaceId {
            clips: self.id(),
            index,
        })
    }
}

/// `space` is playable with clips `own` beside `others`.
fn check_space(own: ClipsId, space: &BlendSpace, others: &[BlendSpace]) -> Result<()> {
    let bad = |clip: Option<u32>, reason: String| PlaybackError::BadBlendSpace {
        space: space.name.clone(),
        clip,
        reason,
    };
    if space.clips.is_empty() {
        return Err(bad(None, "it has no clip".into()).into());
    }
    if others.iter().any(|s| s.name == space.name) {
        return Err(bad(None, "another blend space has its name".into()).into());
    }
    if let Some(w) = space.smoothing {
        if !w.is_finite() || w <= 0.0 {
            return Err(bad(None, format!("smoothing {w} is not a finite number > 0")).into());
        }
    }
    for (k, &(clip, at)) in space.clips.iter().enumerate() {
        let c = Some(clip.index());
        if clip.clips() != own {
            let reason = format!(
                "it belongs to clips #{}, not #{}",
                clip.clips().get(),
                own.get()
            );
            return Err(bad(c, reason).into());
        }
        if !at.is_finite() {
            return Err(bad(c, format!("its point {at} is not finite")).into());
        }
        if space.kind == BlendMode::OneD && at.y != 0.0 {
            let reason = format!("a 1D space's points have one coordinate, not {at}");
            return Err(bad(c, reason).into());
        }
        for &(other, there) in &space.clips[..k] {
            if other == clip {
                return Err(bad(c, "it is listed twice".into()).into());
            }
            if there == at {
                let reason = format!("it is at {at}, as clip {}", other.index());
                return Err(bad(c, reason).into());
            }
        }
    }
    Ok(())
}

/// The parameters `params` for a space of mode `mode`: why not, if they
/// are not finite or (1D) have a `y`.
pub(crate) fn check_params(mode: BlendMode, params: Vec2) -> Option<String> {
    if !params.is_finite() {
        return Some(format!("parameters {params} are not finite"));
    }
    if mode == BlendMode::OneD && params.y != 0.0 {
        return Some(format!("a 1D space takes one parameter, not {params}"));
    }
    None
}

/// The target weights of `points` (a checked space's, in its mode) at
/// `params` (checked), in `out` (as long as `points`).
pub(crate) fn weights(mode: BlendMode, points: &[Vec2], params: Vec2, out: &mut [f32]) {
    match mode {
        BlendMode::OneD => weights_1d(points, params.x, out),
        BlendMode::Cartesian => weights_cartesian(points, params, out),
        BlendMode::Directional => weights_directional(points, params, out),
    }
}

/// 1D: at `x` between the nearest points below and above, `a` and `b`,
/// `w_a = 1 - t`, `w_b = t`, `t = (x - a) / (b - a)`; below the lowest
/// point or above the highest, that point alone.
pub(crate) fn weights_1d(points: &[Vec2], x: f32, out: &mut [f32]) {
    out.fill(0.0);
    let below = points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.x <= x)
        .max_by(|a, b| a.1.x.total_cmp(&b.1.x));
    let above = points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.x > x)
        .min_by(|a, b| a.1.x.total_cmp(&b.1.x));
    match (below, above) {
        (Some((a, pa)), Some((b, pb))) => {
            let t = (x - pa.x) / (pb.x - pa.x);
            out[a] = 1.0 - t;
            out[b] = t;
        }
        (Some((k, _)), None) | (None, Some((k, _))) => out[k] = 1.0,
        (None, None) => {}
    }
}

/// Gradient bands: `h_i = min_j clamp(1 - v_ip . v_ij / |v_ij|^2, 0, 1)`
/// over `j != i`, normalised to sum 1, with `v_ij` and `v_ip` from
/// `vectors(i, j)`. With one point, it alone; with every `h_i` 0 (not
/// reached by the two gradient band forms), the nearest point alone.
fn gradient_bands(
    points: &[Vec2],
    params: Vec2,
    out: &mut [f32],
    vectors: impl Fn(usize, usize) -> (Vec2, Vec2),
) {
    let mut total = 0.0;
    for (i, h) in out.iter_mut().enumerate() {
        let mut w = 1.0f32;
        for j in (0..points.len()).filter(|&j| j != i) {
            let (ij, ip) = vectors(i, j);
            w = w.min((1.0 - ip.dot(ij) / ij.length_squared()).clamp(0.0, 1.0));
        }
        *h = w;
        total += w;
    }
    if total > 0.0 {
        out.iter_mut().for_each(|h| *h /= total);
        return;
    }
    let nearest = (0..points.len()).min_by(|&a, &b| {
        let (da, db) = (points[a].distance(params), points[b].distance(params));
        da.total_cmp(&db)
    });
    if let Some(k) = nearest {
        out[k] = 1.0;
    }
}

/// Cartesian gradient bands: `v_ij = p_j - p_i`, `v_ip = p - p_i`.
pub(crate) fn weights_cartesian(points: &[Vec2], p: Vec2, out: &mut [f32]) {
    gradient_bands(points, p, out, |i, j| {
        (points[j] - points[i], p - points[i])
    });
}

/// How much an angle (radians) weighs against a relative change of
/// speed in polar gradient bands (Johansen's `alpha`).
const ANGLE_WEIGHT: f32 = 2.0;

/// The signed angle from `a` to `b` in `(-pi, pi]` (counter-clockwise
/// positive); 0 when either is the origin.
fn signed_angle(a: Vec2, b: Vec2) -> f32 {
    if a == Vec2::ZERO || b == Vec2::ZERO {
        return 0.0;
    }
    a.perp_dot(b).atan2(a.dot(b))
}

/// Polar gradient bands (Johansen 2009, section 6.3, equations 6.14 and
/// 6.15): with `m = (|p_i| + |p_j|) / 2`,
/// `v_ij = ((|p_j| - |p_i|) / m, alpha * angle(p_i, p_j))` and
/// `v_ip = ((|p| - |p_i|) / m, alpha * angle(p_i, p))`, `alpha = 2`.
pub(crate) fn weights_directional(points: &[Vec2], p: Vec2, out: &mut [f32]) {
    gradient_bands(points, p, out, |i, j| {
        let (pi, pj) = (points[i], points[j]);
        let (li, lj) = (pi.length(), pj.length());
        let m = (li + lj) * 0.5;
        let ij = Vec2::new((lj - li) / m, ANGLE_WEIGHT * signed_angle(pi, pj));
        let ip = Vec2::new((p.length() - li) / m, ANGLE_WEIGHT * signed_angle(pi, p));
        (ij, ip)
    });
}

/// `weights` moved toward `targets` along the straight line between
/// them, the weight farthest from its target by `step` (`None`, or a
/// step that reaches them: set to them): each moves by at most `step`,
/// and weights that sum to 1 toward targets that do keep their sum (the
/// mixer would blend a sum below 1 with the rest pose).
pub(crate) fn smooth(weights: &mut [f32], targets: &[f32], step: Option<f32>) {
    let far = weights
        .iter()
        .zip(targets)
        .map(|(w, t)| (t - w).abs())
        .fold(0.0f32, f32::max);
    match step {
        Some(s) if far > s => {
            let f = s / far;
            for (w, &t) in weights.iter_mut().zip(targets) {
                *w += (t - *w) * f;
            }
        }
        _ => weights.copy_from_slice(targets),
    }
}
