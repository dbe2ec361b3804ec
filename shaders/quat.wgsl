// Quaternion helpers of the sample stage (slerp) and the pose and skin stages
// (normalize).
// Mirrored line by line by src/cpu/quat.rs: same operations, same order, same
// constants, so GPU and CPU differ only by the driver's rounding.
//
// sin and acos are polynomials here rather than WGSL builtins: WGSL only
// requires builtin sin within 2^-11 and acos within ~7e-5, too coarse for a
// 2e-5 bound, and a polynomial evaluates the same on every adapter.

// Above this dot product slerp falls back to normalized lerp (the contract:
// docs/ARCHITECTURE.md).
const SLERP_NLERP_THRESHOLD: f32 = 0.9995;

// sin(x) for x in [0, pi/2]: Taylor series to x^11, |error| < 6e-8 there in
// exact arithmetic (about 2.0e-7 measured evaluated in f32 on the CPU twin).
fn kf_sin(x: f32) -> f32 {
    let x2 = x * x;
    return x * (1.0 + x2 * (-0.16666667 + x2 * (0.008333334 + x2 * (-0.0001984127
        + x2 * (0.0000027557319 + x2 * -0.000000025052108)))));
}

// acos(x) for x in [0, 1] (Abramowitz & Stegun 4.4.46, |error| <= 2e-8 in
// exact arithmetic, about 2.4e-7 measured evaluated in f32 on the CPU twin):
// sqrt(1 - x) * (a0 + a1 x + ... + a7 x^7).
fn kf_acos(x: f32) -> f32 {
    let c = clamp(x, 0.0, 1.0);
    let p = 1.5707963050 + c * (-0.2145988016 + c * (0.0889789874 + c * (-0.0501743046
        + c * (0.0308918810 + c * (-0.0170881256 + c * (0.0066700901 + c * -0.0012624911))))));
    return sqrt(1.0 - c) * p;
}

// Normalizes q; a zero-length q is returned unchanged instead of NaN.
fn quat_normalize(q: vec4<f32>) -> vec4<f32> {
    let len2 = dot(q, q);
    return select(q, q / sqrt(len2), len2 > 0.0);
}

// Shortest-path slerp from q0 to q1 at t in [0, 1], with the nlerp fallback
// for nearly equal quaternions (dot > SLERP_NLERP_THRESHOLD).
//
// Both are normalize(w0 q0 + w1 q1): slerp's weights are
// sin((1 - t) theta) and sin(t theta) (the textbook formula divides both
// by sin(theta); the normalization makes that division, and a third sine,
// redundant, and leaves fewer roundings), nlerp's are 1 - t and t. The
// weights are selected rather than branched on, so SIMD adapters run one
// path.
fn quat_slerp(q0: vec4<f32>, q1_in: vec4<f32>, t: f32) -> vec4<f32> {
    let d_in = dot(q0, q1_in);
    let q1 = select(q1_in, -q1_in, d_in < 0.0);
    let d = abs(d_in);
    let theta = kf_acos(d);
    let near = d > SLERP_NLERP_THRESHOLD;
    let w0 = select(kf_sin((1.0 - t) * theta), 1.0 - t, near);
    let w1 = select(kf_sin(t * theta), t, near);
    return quat_normalize(w0 * q0 + w1 * q1);
}

// The Hamilton product a * b of quaternions (x, y, z, w).
fn quat_mul(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(
        a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
        a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
        a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
        a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
    );
}

// The mixer's blends, which mix.wgsl's pose mix and playback.wgsl's root
// motion share.

const PI: f32 = 3.14159265;

// mix(a, b, t) for vectors: a * (1 - t) + b * t per component.
fn vec_mix(a: vec4<f32>, b: vec4<f32>, t: f32) -> vec4<f32> {
    return a * (1.0 - t) + b * t;
}

// sin(x) for any x: x = k pi + r with r in [-pi/2, pi/2], sin(x) = +-sin(r)
// by the parity of k; r = x exactly when |x| < pi/2 (k = 0), so for
// t in [0, 1] the weights below equal quat_slerp's.
fn kf_sin_wide(x: f32) -> f32 {
    let k = round(x / PI);
    let s = kf_sin(x - k * PI);
    return select(s, -s, (i32(k) & 1) != 0);
}

// mix(a, b, t) for unit quaternions: bit-identical inputs return `a`;
// otherwise quat_slerp's shortest-path slerp (nlerp above
// SLERP_NLERP_THRESHOLD), for any t (not clamped: t > 1 extrapolates).
fn quat_mix(a: vec4<f32>, b_in: vec4<f32>, t: f32) -> vec4<f32> {
    if (all(a == b_in)) {
        return a;
    }
    let d_in = dot(a, b_in);
    let b = select(b_in, -b_in, d_in < 0.0);
    let d = abs(d_in);
    let theta = kf_acos(d);
    let near = d > SLERP_NLERP_THRESHOLD;
    let w0 = select(kf_sin_wide((1.0 - t) * theta), 1.0 - t, near);
    let w1 = select(kf_sin_wide(t * theta), t, near);
    return quat_normalize(w0 * a + w1 * b);
}

fn quat_conj(q: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(-q.xyz, q.w);
}
