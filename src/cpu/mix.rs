//! The CPU twin of `shaders/mix.wgsl`, the mixer's pose stage: each
//! character's local pose per node ([`mixed_pose`]) and morph weights per
//! mesh ([`write_mixed_morph_weights`]), blended from its actions' sampled
//! rows by the contract's rules (`docs/USAGE.md`, "Blending").
//!
//! One function per WGSL function, same names, the same `f32` operations in
//! the same order, reading the same flat tables ([`SkinTables`] and
//! [`MixTables`], the twin of the mix pass's bindings) and the sampler's
//! output. Pointer targets (`KHR_animation_pointer`) are blended by
//! [`write_mixed_property`] into each character's block of properties.
//! [`mix_resolved`] runs the mixer's whole chain (mix passes, then the
//! staged hierarchy pass) for every character; [`mix_with_samples`] also
//! samples.
//!
//! # Panics
//! Like the shader, the functions index the flat tables directly and panic
//! on offsets outside them; tables packed by the mixer's packer with the
//! sampler output of the same library are always in range.

use glam::{Vec3, Vec4};

use crate::cpu::pose::{channel_at, node_at, sample_vec3, sample_vec4};
use crate::cpu::quat::{kf_sin, quat_mul, quat_normalize, slerp_with};
use crate::cpu::sample::sample_resolved;
use crate::cpu::skin::{with_hierarchy, SkinOutput};
use crate::error::Result;
use crate::kinds::ValueKind;
use crate::layout::{GpuLocalPose, GpuMixAction, BLEND_OVERRIDE, MAX_ACTIONS, NO_MASK, NO_ROW};
use crate::model::library::AnimationLibrary;
use crate::model::mix::{Action, Mask};
use crate::tables::instance::resolve_instances;
use crate::tables::library::LibraryTables;
use crate::tables::mix::Packer;
use crate::tables::rig::SkinTables;

/// The mix pass's own tables (WGSL `mix_actions`, `characters`, `masks`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct MixTables<'a> {
    /// The action records.
    pub(crate) actions: &'a [GpuMixAction],
    /// Per character: first action and count.
    pub(crate) characters: &'a [[u32; 2]],
    /// Mask `k`'s factor of node `n` at `k * node_count + n`.
    pub(crate) masks: &'a [f32],
}

/// WGSL `PI`.
pub(crate) const PI: f32 = std::f32::consts::PI;

/// The factor of `mask` for node `n` (WGSL `mask_factor`).
#[must_use]
pub(crate) fn mask_factor(tables: &SkinTables, mix: &MixTables<'_>, mask: u32, n: u32) -> f32 {
    if mask == NO_MASK || n >= tables.node_count() {
        return 1.0;
    }
    mix.masks[(mask * tables.node_count() + n) as usize]
}

/// WGSL `vec_mix`: `a * (1 - t) + b * t` per component.
#[must_use]
pub(crate) fn vec_mix(a: Vec4, b: Vec4, t: f32) -> Vec4 {
    a * (1.0 - t) + b * t
}

/// WGSL `scalar_mix`.
#[must_use]
pub(crate) fn scalar_mix(a: f32, b: f32, t: f32) -> f32 {
    a * (1.0 - t) + b * t
}

/// WGSL `kf_sin_wide`: `sin(x)` for any `x`, folded to `[-pi/2, pi/2]`.
#[must_use]
pub(crate) fn kf_sin_wide(x: f32) -> f32 {
    // WGSL round() rounds halfway cases to even.
    let k = (x / PI).round_ties_even();
    let s = kf_sin(x - k * PI);
    if (k as i32) & 1 != 0 {
        -s
    } else {
        s
    }
}

/// WGSL `quat_mix`: `a` when both are bit-identical; otherwise the
/// shortest-path slerp (nlerp above the threshold) at any `t`.
#[must_use]
pub(crate) fn quat_mix(a: Vec4, b_in: Vec4, t: f32) -> Vec4 {
    // WGSL all(a == b_in).
    if a.cmpeq(b_in).all() {
        return a;
    }
    slerp_with(a, b_in, t, kf_sin_wide)
}

/// WGSL `quat_conj`.
#[must_use]
pub(crate) fn quat_conj(q: Vec4) -> Vec4 {
    Vec4::new(-q.x, -q.y, -q.z, q.w)
}

/// A blend in progress: WGSL `Blend` for a property ([`Blend`]),
/// `Scalar` for a morph weight or one component of a pointer target
/// ([`Scalar`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Accum<T> {
    /// The normal actions' accumulator.
    pub(crate) acc: T,
    /// Their total weight (0: none yet).
    pub(crate) total: f32,
    /// The additive layer (for a discrete scalar: the replacing value).
    pub(crate) add: T,
    /// Whether an additive action contributed.
    pub(crate) added: bool,
}

/// One property's blend in progress (WGSL `Blend`).
pub(crate) type Blend = Accum<Vec4>;

/// WGSL `blend_start`.
#[must_use]
pub(crate) fn blend_start(identity: Vec4) -> Blend {
    Blend {
        acc: Vec4::ZERO,
        total: 0.0,
        add: identity,
        added: false,
    }
}

/// Rule 1: a normal action's value `v` at effective weight `w`, rotations
/// mixed with [`quat_mix`], vectors with [`vec_mix`]. With `rotation`
/// false it is WGSL `blend_normal`; the shader mixes rotations with
/// [`blend_rotation`], which equals this with `rotation` true (tested).
#[must_use]
pub(crate) fn blend_normal(b: Blend, v: Vec4, w: f32, rotation: bool) -> Blend {
    let (acc, total) = accumulate(b.acc, b.total, v, w, |acc, v, t| {
        if rotation {
            quat_mix(acc, v, t)
        } else {
            vec_mix(acc, v, t)
        }
    });
    Blend { acc, total, ..b }
}

/// Rule 1's accumulation, which [`blend_normal`] and [`scalar_normal`]
/// share (the shader writes it out in each): the first action (`total`
/// 0) gives its value `v` and weight `w` as they are; a later one adds
/// `w` to `total` and mixes `v` into `acc` with `mix` at the factor
/// `w / (total + w)`. Returns the new accumulator and total weight.
fn accumulate<T>(acc: T, total: f32, v: T, w: f32, mix: impl Fn(T, T, f32) -> T) -> (T, f32) {
    if total == 0.0 {
        return (v, w);
    }
    let total = total + w;
    let t = w / total;
    (mix(acc, v, t), total)
}

/// WGSL `add_vec` (rule 4, vectors).
#[must_use]
pub(crate) fn add_vec(b: Blend, v: Vec4, r: Vec4, w: f32) -> Blend {
    let mut out = b;
    out.add = b.add + w * (v - r);
    out.added = true;
    out
}

/// WGSL `blend_rotation`: [`blend_normal`]`(b, v, w, true)` for a normal
/// action, `add_quat``(b, v, r, w)` for an additive one (`r`: the action
/// at its reference time), with one [`quat_mix`] whose ends and factor
/// depend on the kind; the same values.
#[must_use]
pub(crate) fn blend_rotation(b: Blend, v: Vec4, r: Vec4, w: f32, additive: bool) -> Blend {
    let mut out = b;
    let total = b.total + w;
    let (from, to, f) = if additive {
        (b.add, quat_mul(b.add, quat_mul(quat_conj(r), v)), w)
    } else {
        (b.acc, v, w / total)
    };
    let mixed = quat_mix(from, to, f);
    if additive {
        out.add = mixed;
        out.added = true;
    } else if b.total == 0.0 {
        out.acc = v;
        out.total = w;
    } else {
        out.acc = mixed;
        out.total = total;
    }
    out
}

/// One scalar's blend in progress (WGSL `Scalar`): a morph weight or one
/// component of a pointer target.
pub(crate) type Scalar = Accum<f32>;

/// WGSL `scalar_normal` (rule 1; a discrete value replaced at a factor
/// `>= 0.5`).
#[must_use]
pub(crate) fn scalar_normal(b: Scalar, v: f32, w: f32, discrete: bool) -> Scalar {
    let (acc, total) = accumulate(b.acc, b.total, v, w, |acc, v, t| {
        if discrete {
            if t >= 0.5 {
                v
            } else {
                acc
            }
        } else {
            scalar_mix(acc, v, t)
        }
    });
    Scalar { acc, total, ..b }
}

/// WGSL `scalar_additive` (rule 4; a discrete value replaces the layer at
/// `w >= 0.5`).
#[must_use]
pub(crate) fn scalar_additive(b: Scalar, v: f32, r: f32, w: f32, discrete: bool) -> Scalar {
    let mut out = b;
    if discrete {
        if w >= 0.5 {
            out.add = v;
            out.added = true;
        }
    } else {
        out.add = b.add + w * (v - r);
        out.added = true;
    }
    out
}

/// WGSL `scalar_rest` (rule 2 for a scalar): `acc` becomes the value of
/// the normal actions and the rest.
#[must_use]
pub(crate) fn scalar_rest(b: Scalar, rest: f32, discrete: bool) -> Scalar {
    let mut out = b;
    let mut value = rest;
    if b.total > 0.0 {
        value = b.acc;
        if b.total < 1.0 {
            if discrete {
                if 1.0 - b.total >= 0.5 {
                    value = rest;
                }
            } else {
                value = scalar_mix(value, rest, 1.0 - b.total);
            }
        }
    }
    out.acc = value;
    out
}

/// WGSL `scalar_override` (rule 3 for a scalar): `v` replaces `acc` at
/// `w >= 1` (a discrete value at `w >= 0.5`), else is mixed in by `w`.
#[must_use]
pub(crate) fn scalar_override(b: Scalar, v: f32, w: f32, discrete: bool) -> Scalar {
    let mut out = b;
    if discrete {
        if w >= 0.5 {
            out.acc = v;
        }
    } else {
        let mixed = scalar_mix(b.acc, v, w);
        out.acc = if w >= 1.0 { v } else { mixed };
    }
    out
}

/// WGSL `scalar_finish` (rule 5 for a scalar).
#[must_use]
pub(crate) fn scalar_finish(b: Scalar, discrete: bool) -> f32 {
    let mut value = b.acc;
    if b.added {
        value = if discrete { b.add } else { value + b.add };
    }
    value
}

/// WGSL `blend_rest` (rule 2): `acc` becomes the value of the normal
/// actions and the rest.
#[must_use]
pub(crate) fn blend_rest(b: Blend, rest: Vec4, rotation: bool) -> Blend {
    let mut out = b;
    let mut acc = rest;
    if b.total > 0.0 {
        acc = b.acc;
        if b.total < 1.0 {
            acc = if rotation {
                quat_mix(acc, rest, 1.0 - b.total)
            } else {
                vec_mix(acc, rest, 1.0 - b.total)
            };
        }
    }
    out.acc = acc;
    out
}

/// WGSL `blend_override` (rule 3): `v` replaces `acc` at `w >= 1`, bit for
/// bit, else is mixed in by `w`.
#[must_use]
pub(crate) fn blend_override(b: Blend, v: Vec4, w: f32, rotation: bool) -> Blend {
    let mut out = b;
    let mut mixed = vec_mix(b.acc, v, w);
    if rotation {
        mixed = quat_mix(b.acc, v, w);
    }
    out.acc = if w >= 1.0 { v } else { mixed };
    out
}

/// WGSL `blend_finish` (rule 5; a rotation normalized at the end).
#[must_use]
pub(crate) fn blend_finish(b: Blend, rotation: bool) -> Vec4 {
    let mut acc = b.acc;
    if !rotation {
        return if b.added { acc + b.add } else { acc };
    }
    if b.added {
        acc = quat_mul(acc, b.add);
    }
    quat_normalize(acc)
}

/// A node's three properties in blending (WGSL `NodeBlend`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct NodeBlend {
    pub(crate) t: Blend,
    pub(crate) r: Blend,
    pub(crate) s: Blend,
}

/// WGSL `override_node` (rule 3 for node `n`): the override actions of the
/// character's `range` (first action, count) from its action `first` on,
/// in order, over `b`.
#[must_use]
#[allow(
    clippy::neg_cmp_op_on_partial_ord,
    reason = "mirrors WGSL's !(w > 0.0), which also skips a NaN weight"
)]
pub(crate) fn override_node(
    tables: &SkinTables,
    mix: &MixTables<'_>,
    samples: &[f32],
    range: [u32; 2],
    first: u32,
    n: u32,
    b: NodeBlend,
) -> NodeBlend {
    let mut out = b;
    let stride = tables.output_stride();
    for k in first..range[1].min(MAX_ACTIONS) {
        let a = mix.actions[(range[0] + k) as usize];
        let w = a.weight * mask_factor(tables, mix, a.mask, n);
        if a.blend != BLEND_OVERRIDE || !(w > 0.0) || a.clip >= tables.clip_count() {
            continue;
        }
        let ch = channel_at(tables, a.clip * tables.node_count() + n);
        let base = (a.row * stride) as usize;
        if ch[0] >= 0 {
            let v = sample_vec3(samples, base + ch[0] as usize).extend(0.0);
            out.t = blend_override(out.t, v, w, false);
        }
        if ch[1] >= 0 {
            let v = sample_vec4(samples, base + ch[1] as usize);
            out.r = blend_override(out.r, v, w, true);
        }
        if ch[2] >= 0 {
            let v = sample_vec3(samples, base + ch[2] as usize).extend(0.0);
            out.s = blend_override(out.s, v, w, false);
        }
    }
    out
}

/// The blended local pose of node `n` for character `c` (WGSL
/// `mixed_pose`).
#[must_use]
#[allow(
    clippy::neg_cmp_op_on_partial_ord,
    reason = "mirrors WGSL's !(w > 0.0), which also skips a NaN weight"
)]
pub(crate) fn mixed_pose(
    tables: &SkinTables,
    mix: &MixTables<'_>,
    samples: &[f32],
    c: u32,
    n: u32,
) -> GpuLocalPose {
    let node = node_at(tables, n);
    let [first, count] = mix.characters[c as usize];
    let stride = tables.output_stride();
    let mut t = blend_start(Vec4::ZERO);
    let mut r = blend_start(Vec4::new(0.0, 0.0, 0.0, 1.0));
    let mut s = blend_start(Vec4::ZERO);
    // The first override action (none: past the last action).
    let mut first_override = MAX_ACTIONS;
    for k in 0..count.min(MAX_ACTIONS) {
        let a = mix.actions[(first + k) as usize];
        let w = a.weight * mask_factor(tables, mix, a.mask, n);
        if a.blend == BLEND_OVERRIDE {
            first_override = first_override.min(k);
        }
        if a.blend == BLEND_OVERRIDE || !(w > 0.0) || a.clip >= tables.clip_count() {
            continue;
        }
        let ch = channel_at(tables, a.clip * tables.node_count() + n);
        let base = (a.row * stride) as usize;
        // The action's values, read once for either kind (mix.wgsl).
        let mut vt = Vec4::ZERO;
        let mut vr = Vec4::ZERO;
        let mut vs = Vec4::ZERO;
        if ch[0] >= 0 {
            vt = sample_vec3(samples, base + ch[0] as usize).extend(0.0);
        }
        if ch[1] >= 0 {
            vr = sample_vec4(samples, base + ch[1] as usize);
        }
        if ch[2] >= 0 {
            vs = sample_vec3(samples, base + ch[2] as usize).extend(0.0);
        }
        let additive = a.reference_row != NO_ROW;
        let mut ref_r = Vec4::new(0.0, 0.0, 0.0, 1.0);
        if additive {
            let ref_base = (a.reference_row * stride) as usize;
            if ch[0] >= 0 {
                t = add_vec(
                    t,
                    vt,
                    sample_vec3(samples, ref_base + ch[0] as usize).extend(0.0),
                    w,
                );
            }
            if ch[1] >= 0 {
                ref_r = sample_vec4(samples, ref_base + ch[1] as usize);
            }
            if ch[2] >= 0 {
                s = add_vec(
                    s,
                    vs,
                    sample_vec3(samples, ref_base + ch[2] as usize).extend(0.0),
                    w,
                );
            }
        } else {
            if ch[0] >= 0 {
                t = blend_normal(t, vt, w, false);
            }
            if ch[2] >= 0 {
                s = blend_normal(s, vs, w, false);
            }
        }
        if ch[1] >= 0 {
            r = blend_rotation(r, vr, ref_r, w, additive);
        }
    }
    let rest_t = Vec3::from_slice(&node.translation[..3]).extend(0.0);
    let rest_s = Vec3::from_slice(&node.scale[..3]).extend(0.0);
    let mut b = NodeBlend {
        t: blend_rest(t, rest_t, false),
        r: blend_rest(r, Vec4::from_array(node.rotation), true),
        s: blend_rest(s, rest_s, false),
    };
    b = override_node(tables, mix, samples, [first, count], first_override, n, b);
    let tr = blend_finish(b.t, false);
    let sc = blend_finish(b.s, false);
    GpuLocalPose {
        translation: [tr.x, tr.y, tr.z, 0.0],
        rotation: blend_finish(b.r, true).to_array(),
        scale: [sc.x, sc.y, sc.z, 0.0],
    }
}

/// Writes mesh `m`'s blended weights for character `c` into
/// `morph_weights` (WGSL `write_mixed_morph_weights`).
#[allow(
    clippy::neg_cmp_op_on_partial_ord,
    reason = "mirrors WGSL's !(w > 0.0), which also skips a NaN weight"
)]
pub(crate) fn write_mixed_morph_weights(
    tables: &SkinTables,
    mix: &MixTables<'_>,
    samples: &[f32],
    c: u32,
    m: u32,
    morph_weights: &mut [f32],
) {
    let mesh = tables.meshes()[m as usize];
    let out = (c * tables.morph_stride() + mesh.weights_offset) as usize;
    let [first, count] = mix.characters[c as usize];
    let count = count.min(MAX_ACTIONS);
    let stride = tables.output_stride();
    for k in 0..mesh.target_count {
        let mut b = Scalar::default();
        let mut first_override = count;
        for j in 0..count {
            let a = mix.actions[(first + j) as usize];
            let w = a.weight * mask_factor(tables, mix, a.mask, mesh.node);
            if a.blend == BLEND_OVERRIDE {
                first_override = first_override.min(j);
            }
            if a.blend == BLEND_OVERRIDE || !(w > 0.0) || a.clip >= tables.clip_count() {
                continue;
            }
            let src = tables.morph_channels()[(a.clip * tables.mesh_count() + m) as usize];
            if src < 0 {
                continue;
            }
            let v = samples[(a.row * stride + src as u32 + k) as usize];
            if a.reference_row == NO_ROW {
                b = scalar_normal(b, v, w, false);
            } else {
                let at_ref = samples[(a.reference_row * stride + src as u32 + k) as usize];
                b = scalar_additive(b, v, at_ref, w, false);
            }
        }
        let rest = tables.default_weights()[(mesh.defaults_offset + k) as usize];
        b = scalar_rest(b, rest, false);
        for j in first_override..count {
            let a = mix.actions[(first + j) as usize];
            let w = a.weight * mask_factor(tables, mix, a.mask, mesh.node);
            if a.blend != BLEND_OVERRIDE || !(w > 0.0) || a.clip >= tables.clip_count() {
                continue;
            }
            let src = tables.morph_channels()[(a.clip * tables.mesh_count() + m) as usize];
            if src >= 0 {
                let v = samples[(a.row * stride + src as u32 + k) as usize];
                b = scalar_override(b, v, w, false);
            }
        }
        morph_weights[out + k as usize] = scalar_finish(b, false);
    }
}

/// WGSL `pointer_source`: pointer target `k`'s slot offset in action `a`'s
/// row, -1 where `a`'s clip does not animate it or `a` does not blend.
#[must_use]
#[allow(
    clippy::neg_cmp_op_on_partial_ord,
    reason = "mirrors WGSL's !(a.weight > 0.0), which also skips a NaN weight"
)]
pub(crate) fn pointer_source(tables: &SkinTables, a: &GpuMixAction, k: u32) -> i32 {
    if !(a.weight > 0.0) || a.clip >= tables.clip_count() {
        return -1;
    }
    let pointer_count = tables.pointer_targets().len() as u32;
    tables.pointer_channels()[(a.clip * pointer_count + k) as usize]
}

/// WGSL `write_mixed_rotation_property`: a rotation pointer target `k`'s
/// blended value for the character of `range`, at `out` in `properties`.
pub(crate) fn write_mixed_rotation_property(
    tables: &SkinTables,
    mix: &MixTables<'_>,
    samples: &[f32],
    range: [u32; 2],
    k: u32,
    out: usize,
    properties: &mut [f32],
) {
    let [_slot, _width, _kind, at] = tables.pointer_targets()[k as usize];
    let count = range[1].min(MAX_ACTIONS);
    let stride = tables.output_stride() as usize;
    let mut b = blend_start(Vec4::new(0.0, 0.0, 0.0, 1.0));
    let mut first_override = count;
    for j in 0..count {
        let a = mix.actions[(range[0] + j) as usize];
        if a.blend == BLEND_OVERRIDE {
            first_override = first_override.min(j);
        }
        let src = pointer_source(tables, &a, k);
        if a.blend == BLEND_OVERRIDE || src < 0 {
            continue;
        }
        let v = sample_vec4(samples, a.row as usize * stride + src as usize);
        let additive = a.reference_row != NO_ROW;
        let mut at_ref = Vec4::new(0.0, 0.0, 0.0, 1.0);
        if additive {
            at_ref = sample_vec4(samples, a.reference_row as usize * stride + src as usize);
        }
        b = blend_rotation(b, v, at_ref, a.weight, additive);
    }
    let rest_of = |i: u32| tables.pointer_rest()[(at + i) as usize];
    let rest = Vec4::new(rest_of(0), rest_of(1), rest_of(2), rest_of(3));
    b = blend_rest(b, rest, true);
    for j in first_override..count {
        let a = mix.actions[(range[0] + j) as usize];
        let src = pointer_source(tables, &a, k);
        if a.blend == BLEND_OVERRIDE && src >= 0 {
            let v = sample_vec4(samples, a.row as usize * stride + src as usize);
            b = blend_override(b, v, a.weight, true);
        }
    }
    let q = blend_finish(b, true);
    properties[out..out + 4].copy_from_slice(&q.to_array());
}

/// Writes pointer target `k`'s blended value for character `c` into
/// `properties` (WGSL `write_mixed_property`): vectors and rotations by
/// rules 1-5; a discrete value (int, bool) replaced by an action's when its
/// mix factor is at least 0.5.
pub(crate) fn write_mixed_property(
    tables: &SkinTables,
    mix: &MixTables<'_>,
    samples: &[f32],
    c: u32,
    k: u32,
    properties: &mut [f32],
) {
    let [_slot, width, kind, at] = tables.pointer_targets()[k as usize];
    let out = (c * tables.property_stride() + at) as usize;
    let range = mix.characters[c as usize];
    let count = range[1].min(MAX_ACTIONS);
    let stride = tables.output_stride();
    if kind == ValueKind::Rotation as u32 {
        write_mixed_rotation_property(tables, mix, samples, range, k, out, properties);
        return;
    }
    let discrete = kind == ValueKind::Discrete as u32;
    for i in 0..width {
        let mut b = Scalar::default();
        let mut first_override = count;
        for j in 0..count {
            let a = mix.actions[(range[0] + j) as usize];
            if a.blend == BLEND_OVERRIDE {
                first_override = first_override.min(j);
            }
            let src = pointer_source(tables, &a, k);
            if a.blend == BLEND_OVERRIDE || src < 0 {
                continue;
            }
            let v = samples[(a.row * stride + src as u32 + i) as usize];
            if a.reference_row == NO_ROW {
                b = scalar_normal(b, v, a.weight, discrete);
            } else {
                let at_ref = samples[(a.reference_row * stride + src as u32 + i) as usize];
                b = scalar_additive(b, v, at_ref, a.weight, discrete);
            }
        }
        b = scalar_rest(b, tables.pointer_rest()[(at + i) as usize], discrete);
        for j in first_override..count {
            let a = mix.actions[(range[0] + j) as usize];
            let src = pointer_source(tables, &a, k);
            if a.blend == BLEND_OVERRIDE && src >= 0 {
                let v = samples[(a.row * stride + src as u32 + i) as usize];
                b = scalar_override(b, v, a.weight, discrete);
            }
        }
        properties[out + i as usize] = scalar_finish(b, discrete);
    }
}

/// Invocation `index` of WGSL `mix_props_main`: pointer target `index %
/// pointer_count` of character `index / pointer_count`.
pub(crate) fn mix_props_main(
    tables: &SkinTables,
    mix: &MixTables<'_>,
    samples: &[f32],
    index: u32,
    properties: &mut [f32],
) {
    let targets = tables.pointer_targets().len() as u32;
    if targets == 0 || index >= mix.characters.len() as u32 * targets {
        return;
    }
    write_mixed_property(
        tables,
        mix,
        samples,
        index / targets,
        index % targets,
        properties,
    );
}

/// Invocation `index` of WGSL `mix_main`: node `index % node_count` of
/// character `index / node_count`, into `locals[index]`.
pub(crate) fn mix_main(
    tables: &SkinTables,
    mix: &MixTables<'_>,
    samples: &[f32],
    index: u32,
    locals: &mut [GpuLocalPose],
) {
    let nodes = tables.node_count();
    if nodes == 0 || index >= mix.characters.len() as u32 * nodes {
        return;
    }
    locals[index as usize] = mixed_pose(tables, mix, samples, index / nodes, index % nodes);
}

/// Invocation `index` of WGSL `mix_morph_main`: mesh `index % mesh_count`
/// of character `index / mesh_count`.
pub(crate) fn mix_morph_main(
    tables: &SkinTables,
    mix: &MixTables<'_>,
    samples: &[f32],
    index: u32,
    morph_weights: &mut [f32],
) {
    let meshes = tables.mesh_count();
    if meshes == 0 || index >= mix.characters.len() as u32 * meshes {
        return;
    }
    write_mixed_morph_weights(
        tables,
        mix,
        samples,
        index / meshes,
        index % meshes,
        morph_weights,
    );
}

/// The mixer's chain for every character, from the sampler's output
/// `samples` (every row the packer laid out): [`mix_main`] and
/// [`mix_morph_main`] for every invocation, then
/// [`hierarchy_main`](crate::cpu::skin::hierarchy_main) for every
/// character. Locals, globals, joints and morph weights are indexed by
/// character.
#[must_use]
pub(crate) fn mix_resolved(
    tables: &SkinTables,
    mix: &MixTables<'_>,
    samples: &[f32],
) -> SkinOutput {
    let count = mix.characters.len() as u32;
    let nodes = tables.node_count();
    let mut locals = vec![bytemuck::Zeroable::zeroed(); (count * nodes) as usize];
    for index in 0..count * nodes {
        mix_main(tables, mix, samples, index, &mut locals);
    }
    let mut morph_weights = vec![0.0; (count * tables.morph_stride()) as usize];
    for index in 0..count * tables.mesh_count() {
        mix_morph_main(tables, mix, samples, index, &mut morph_weights);
    }
    let mut properties = vec![0.0; (count * tables.property_stride()) as usize];
    for index in 0..count * tables.pointer_targets().len() as u32 {
        mix_props_main(tables, mix, samples, index, &mut properties);
    }
    with_hierarchy(tables, count, locals, morph_weights, properties)
}

/// Packs `actions` (`counts[c]` of them, consecutive, are character
/// `c`'s) as the GPU mixer does, samples every row on the CPU and runs
/// `mix_resolved`: the CPU reference of
/// `Animator::set_actions`, with the
/// sampled rows.
///
/// # Errors
/// [`Error::Mix`](crate::Error::Mix) for a refused action (as the GPU
/// mixer refuses it, with at most [`MAX_ACTIONS`] per character and no
/// limit on characters).
pub(crate) fn mix_with_samples(
    tables: &SkinTables,
    library: &AnimationLibrary,
    masks: &[Mask],
    actions: &[Action],
    counts: &[u32],
) -> Result<(SkinOutput, Vec<f32>)> {
    for mask in masks {
        if mask.factors().len() != tables.node_count() as usize {
            return Err(crate::error::MixError::MaskLength {
                len: mask.factors().len(),
                node_count: tables.node_count() as usize,
            }
            .into());
        }
    }
    let mut packer = Packer::new(counts.len() as u32, MAX_ACTIONS);
    packer.pack(library, masks.len(), actions, counts)?;
    let resolved = resolve_instances(library, &packer.rows)?;
    let mut samples = vec![0.0; resolved.len() * library.output_stride() as usize];
    sample_resolved(&*LibraryTables::cached(library)?, &resolved, &mut samples);
    let mask_table = crate::tables::mix::mask_table(masks);
    let tables_view = MixTables {
        actions: &packer.actions,
        characters: &packer.characters,
        masks: &mask_table,
    };
    let out = mix_resolved(tables, &tables_view, &samples);
    Ok((out, samples))
}
