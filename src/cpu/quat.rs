//! The CPU twin of `shaders/quat.wgsl`: polynomial `sin` and `acos`,
//! normalize, shortest-path slerp with the nlerp fallback, and the
//! Hamilton product, with the same `f32` operations in the same order and
//! the same constants as the shader. The sample, pose, mix and decode
//! twins use them as their shaders use `quat.wgsl`.

use glam::Vec4;

/// Above this dot product slerp falls back to normalized lerp.
pub(crate) const SLERP_NLERP_THRESHOLD: f32 = 0.9995;

/// `sin(x)` for `x` in `[0, pi/2]`: Taylor series to `x^11` (error < 6e-8 in
/// exact arithmetic; evaluated in `f32`, about 2.0e-7 measured, see `src/tests/cpu_reference.rs`).
#[must_use]
#[allow(clippy::excessive_precision, reason = "same literals as the WGSL")]
pub(crate) fn kf_sin(x: f32) -> f32 {
    let x2 = x * x;
    x * (1.0
        + x2 * (-0.16666667
            + x2 * (0.008333334
                + x2 * (-0.0001984127 + x2 * (0.0000027557319 + x2 * -0.000000025052108)))))
}

/// `acos(x)` for `x` in `[0, 1]` (Abramowitz & Stegun 4.4.46, error <= 2e-8
/// in exact arithmetic; evaluated in `f32`, about 2.4e-7 measured); `x` is clamped
/// to that range.
#[must_use]
#[allow(clippy::excessive_precision, reason = "same literals as the WGSL")]
pub(crate) fn kf_acos(x: f32) -> f32 {
    let c = x.clamp(0.0, 1.0);
    let p = 1.5707963050
        + c * (-0.2145988016
            + c * (0.0889789874
                + c * (-0.0501743046
                    + c * (0.0308918810
                        + c * (-0.0170881256 + c * (0.0066700901 + c * -0.0012624911))))));
    (1.0 - c).sqrt() * p
}

/// Normalizes `q`; a zero-length `q` is returned unchanged.
#[must_use]
pub(crate) fn quat_normalize(q: Vec4) -> Vec4 {
    let len2 = dot(q, q);
    if len2 > 0.0 {
        return q / len2.sqrt();
    }
    q
}

/// WGSL's `dot` of two `vec4`s: `((x*x' + y*y') + z*z') + w*w'`.
pub(crate) fn dot(a: Vec4, b: Vec4) -> f32 {
    a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w
}

/// Shortest-path slerp from `q0` to `q1` at `t`, with the nlerp fallback
/// above [`SLERP_NLERP_THRESHOLD`].
#[must_use]
pub(crate) fn quat_slerp(q0: Vec4, q1_in: Vec4, t: f32) -> Vec4 {
    slerp_with(q0, q1_in, t, kf_sin)
}

/// The body of [`quat_slerp`] with the sine `sin`: [`kf_sin`] there (`t`
/// in `[0, 1]`), `kf_sin_wide` in the mixer's `quat_mix` (any `t`). The
/// shader writes the body out in each function.
#[must_use]
pub(crate) fn slerp_with(q0: Vec4, q1_in: Vec4, t: f32, sin: impl Fn(f32) -> f32) -> Vec4 {
    let d_in = dot(q0, q1_in);
    // WGSL: select(q1_in, -q1_in, d_in < 0.0)
    let q1 = if d_in < 0.0 { -q1_in } else { q1_in };
    let d = d_in.abs();
    let theta = kf_acos(d);
    let near = d > SLERP_NLERP_THRESHOLD;
    // normalize(s0 q0 + s1 q1) equals normalize((s0 q0 + s1 q1) / sin(theta)):
    // the division is left out, as in the shader; nlerp's weights are 1 - t, t.
    let w0 = if near {
        1.0 - t
    } else {
        sin((1.0 - t) * theta)
    };
    let w1 = if near { t } else { sin(t * theta) };
    quat_normalize(w0 * q0 + w1 * q1)
}

/// WGSL `quat_mul`: the Hamilton product `a * b` (x, y, z, w).
#[must_use]
pub(crate) fn quat_mul(a: Vec4, b: Vec4) -> Vec4 {
    Vec4::new(
        a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
        a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
        a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
        a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
    )
}
