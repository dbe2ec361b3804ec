//! The mixer: the CPU twin (`cpu::mix`) against the contract's numbered
//! rules computed by hand in f64 (an independent implementation below:
//! `oracle`, std trigonometry, its own slerp), the single-action case
//! against the unblended pose bit for bit, the refusals, and the GPU
//! against the CPU twin on fixed and random mixes (proptest) on the
//! adapter `WGPU_BACKEND` picks (CI runs Vulkan and GL).
//!
//! Sampled values: the oracle needs each action's sampled value, which it
//! takes from the key values written below, so the actions play at key
//! times (0 and 1 s, and times past the duration that repeat or ping-pong
//! onto a key), where the sampler returns a key's value as is.
//!
//! Tolerances: CPU vs hand 1e-5 (f32 against f64 over a few mixes); GPU vs
//! CPU 1e-4 per element (as for the unblended chain: src/tests/skinning.rs).

use super::common;
use crate::tests::twins::TestSkinTables;

use super::skin_entries as cpu_skin;
use super::twins::mix as cpu_mix;
use glam::{Quat, Vec4};
use keyframe_gpu::layout::GpuLocalPose;
use keyframe_gpu::model::rig::{NodeTransform, Rig};
use keyframe_gpu::tables::rig::SkinTables;
use keyframe_gpu::{
    Action, AnimationLibrary, Animator, Clip, Error, Instance, Interpolation, Mask, MixError,
    MixerDesc, Property, Track, WrapMode, MAX_ACTIONS,
};

const HAND_TOL: f64 = 1e-5;
const GPU_TOL: f32 = 1e-4;

// ---------------------------------------------------------------- the model

/// Quaternion (x, y, z, w) in f64.
type Q = [f64; 4];

fn q(r: Quat) -> Q {
    r.to_array().map(f64::from)
}

fn rot_x(a: f32) -> Quat {
    Quat::from_rotation_x(a)
}
fn rot_y(a: f32) -> Quat {
    Quat::from_rotation_y(a)
}
fn rot_z(a: f32) -> Quat {
    Quat::from_rotation_z(a)
}

// Rest poses.
const REST_T: [[f32; 3]; 4] = [
    [1.0, 2.0, 3.0],
    [0.0, 1.0, 0.0],
    [0.0, 0.0, 1.0],
    [4.0, 0.0, 0.0],
];
const REST_S: [[f32; 3]; 4] = [[1.0; 3], [2.0; 3], [1.0; 3], [1.0; 3]];
fn rest_r(n: usize) -> Quat {
    [rot_x(0.3), Quat::IDENTITY, rot_y(0.2), Quat::IDENTITY][n]
}
const DEFAULT_WEIGHTS: [f32; 2] = [0.1, 0.2];

/// Key values (key 0 at t = 0, key 1 at t = 1) of each clip's tracks: the
/// node, the property and the two keys (3 or 4 floats, or 2 weights).
struct Keys {
    node: u32,
    prop: Property,
    k0: Vec<f32>,
    k1: Vec<f32>,
}

fn keys(node: u32, prop: Property, k0: &[f32], k1: &[f32]) -> Keys {
    Keys {
        node,
        prop,
        k0: k0.to_vec(),
        k1: k1.to_vec(),
    }
}

fn qa(r: Quat) -> Vec<f32> {
    r.to_array().to_vec()
}

/// Clips 0 walk, 1 run, 2 breathe (played additive), 3 flip (its key 1 is
/// a negated quaternion, on the other hemisphere from walk's), 4 wave
/// (node 2 only).
fn clip_keys() -> Vec<Vec<Keys>> {
    use Property::*;
    vec![
        vec![
            keys(0, Translation, &[0.0, 0.0, 0.0], &[10.0, 0.0, 0.0]),
            keys(0, Rotation, &qa(rot_z(0.4)), &qa(rot_z(1.2))),
            keys(1, Weights, &[1.0, 0.0], &[0.0, 1.0]),
            keys(2, Scale, &[1.0, 1.0, 1.0], &[3.0, 3.0, 3.0]),
        ],
        vec![
            keys(0, Translation, &[0.0, 4.0, 0.0], &[0.0, 8.0, 0.0]),
            keys(0, Rotation, &qa(rot_x(-0.5)), &qa(rot_y(2.0))),
            keys(1, Weights, &[0.5, 0.5], &[1.0, 1.0]),
            keys(2, Translation, &[1.0, 0.0, 0.0], &[2.0, 0.0, 0.0]),
        ],
        vec![
            keys(0, Translation, &[0.0, 0.0, 0.0], &[0.0, 1.0, 0.0]),
            keys(0, Rotation, &qa(Quat::IDENTITY), &qa(rot_z(0.5))),
            keys(1, Weights, &[0.0, 0.0], &[0.25, 0.5]),
            keys(2, Scale, &[1.0, 1.0, 1.0], &[1.5, 1.5, 1.5]),
        ],
        vec![keys(0, Rotation, &qa(rot_y(0.3)), &qa(-rot_y(0.6)))],
        vec![keys(2, Rotation, &qa(rot_x(0.1)), &qa(rot_x(0.9)))],
    ]
}

/// Four nodes: 0 a root, 1 its child with a mesh of two morph targets, 2
/// a child of 1, 3 another root no clip animates. A skin over 0..3 so
/// that joint matrices exist.
fn model() -> (Rig, AnimationLibrary) {
    let mut b = Rig::builder();
    let trs = |n: usize| NodeTransform::Trs {
        translation: REST_T[n],
        rotation: rest_r(n).to_array(),
        scale: REST_S[n],
    };
    let n0 = b.node(None, trs(0));
    let n1 = b.node(Some(n0), trs(1));
    let n2 = b.node(Some(n1), trs(2));
    let n3 = b.node(None, trs(3));
    let mesh = b.mesh(2, DEFAULT_WEIGHTS.to_vec());
    let skin = b.skin(
        vec![n0, n1, n2],
        vec![glam::Mat4::IDENTITY.to_cols_array(); 3],
    );
    b.attach(n1, mesh, Some(skin));
    let _ = n3;
    let rig = b.build().unwrap();
    let names = ["walk", "run", "breathe", "flip", "wave"];
    let clips = clip_keys()
        .into_iter()
        .zip(names)
        .map(|(ks, name)| {
            let tracks = ks
                .into_iter()
                .map(|k| {
                    let values = [k.k0.clone(), k.k1.clone()].concat();
                    if k.prop == Property::Weights {
                        Track::weights(k.node, 2, Interpolation::Linear, vec![0.0, 1.0], values)
                    } else {
                        Track::new(
                            k.node,
                            k.prop,
                            Interpolation::Linear,
                            vec![0.0, 1.0],
                            values,
                        )
                    }
                })
                .collect();
            Clip::new(name, tracks)
        })
        .collect();
    (rig, AnimationLibrary::new(clips).unwrap())
}

/// The three masks of the tests: 0 = default 0, node 0 at 1, node 2 at
/// 0.5; 1 = node 0 only (0 elsewhere: the other nodes untouched); 2 =
/// every node at 0.5, node 1 (the mesh node) at 0.25.
fn masks(rig: &Rig) -> Vec<Mask> {
    let mut m0 = Mask::filled(rig, 0.0).unwrap();
    m0.set(0, 1.0).unwrap();
    m0.set(2, 0.5).unwrap();
    let m1 = Mask::nodes(rig, &[0]).unwrap();
    let mut m2 = Mask::filled(rig, 0.5).unwrap();
    m2.set(1, 0.25).unwrap();
    vec![m0, m1, m2]
}

// ---------------------------------------------------------------- the oracle

fn dot(a: Q, b: Q) -> f64 {
    a.iter().zip(&b).map(|(x, y)| x * y).sum()
}
fn scale(a: Q, s: f64) -> Q {
    a.map(|x| x * s)
}
fn add(a: Q, b: Q) -> Q {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]]
}
fn normalize(a: Q) -> Q {
    scale(a, 1.0 / dot(a, a).sqrt())
}
/// mix for vectors: a (1 - t) + b t.
fn lerp(a: Q, b: Q, t: f64) -> Q {
    add(scale(a, 1.0 - t), scale(b, t))
}
/// mix for quaternions, from the contract's words: identical inputs give
/// a; negate b when the dot is negative; above 0.9995 lerp then
/// normalize; else the textbook slerp.
fn slerp(a: Q, b: Q, t: f64) -> Q {
    if a == b {
        return a;
    }
    let mut b = b;
    let mut d = dot(a, b);
    if d < 0.0 {
        b = scale(b, -1.0);
        d = -d;
    }
    if d > 0.9995 {
        return normalize(lerp(a, b, t));
    }
    let theta = d.min(1.0).acos();
    normalize(scale(
        add(
            scale(a, ((1.0 - t) * theta).sin()),
            scale(b, (t * theta).sin()),
        ),
        1.0 / theta.sin(),
    ))
}
/// Hamilton product (x, y, z, w).
fn qmul(a: Q, b: Q) -> Q {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}
fn conj(a: Q) -> Q {
    [-a[0], -a[1], -a[2], a[3]]
}

/// One action as the oracle sees it for one (node, property): its sampled
/// value (None: the clip has no track for it), its value at the reference
/// time when additive, whether it overrides, and its effective weight
/// w = weight * mask(n).
struct Input {
    v: Option<Q>,
    r: Option<Q>,
    additive: bool,
    overrides: bool,
    w: f64,
}

/// Rules 1-5 for one property; `rot` selects the quaternion forms.
fn oracle(rest: Q, inputs: &[Input], rot: bool) -> Q {
    let mix = |a, b, t| if rot { slerp(a, b, t) } else { lerp(a, b, t) };
    // Rule 1.
    let mut acc: Option<(Q, f64)> = None;
    for i in inputs
        .iter()
        .filter(|i| !i.additive && !i.overrides && i.w > 0.0)
    {
        let Some(v) = i.v else { continue };
        acc = Some(match acc {
            None => (v, i.w),
            Some((a, total)) => {
                let total = total + i.w;
                (mix(a, v, i.w / total), total)
            }
        });
    }
    // Rule 2.
    let mut out = match acc {
        None => rest,
        Some((a, total)) if total < 1.0 => mix(a, rest, 1.0 - total),
        Some((a, _)) => a,
    };
    // Rule 3: override actions replace (w >= 1) or mix in by w, in order.
    for i in inputs.iter().filter(|i| i.overrides && i.w > 0.0) {
        let Some(v) = i.v else { continue };
        out = if i.w >= 1.0 { v } else { mix(out, v, i.w) };
    }
    // Rule 4.
    let identity = if rot { [0.0, 0.0, 0.0, 1.0] } else { [0.0; 4] };
    let mut add_acc = identity;
    let mut added = false;
    for i in inputs.iter().filter(|i| i.additive && i.w > 0.0) {
        let (Some(v), Some(r)) = (i.v, i.r) else {
            continue;
        };
        added = true;
        if rot {
            let delta = qmul(conj(r), v);
            add_acc = slerp(add_acc, qmul(add_acc, delta), i.w);
        } else {
            add_acc = add(add_acc, scale(add(v, scale(r, -1.0)), i.w));
        }
    }
    // Rule 5.
    if added {
        out = if rot {
            qmul(out, add_acc)
        } else {
            add(out, add_acc)
        };
    }
    if rot {
        normalize(out)
    } else {
        out
    }
}

/// The key value a clip's track for (node, prop) has at `time` mapped by
/// `wrap` (a key time: 0 or 1), padded to 4; None without such a track.
fn keyed(clip: u32, node: u32, prop: Property, time: f64, wrap: WrapMode) -> Option<Q> {
    let all = clip_keys();
    let k = all[clip as usize]
        .iter()
        .find(|k| k.node == node && k.prop == prop)?;
    let t = wrap.clip_time(time, 1.0);
    let vals = if t <= 0.0 {
        &k.k0
    } else if t >= 1.0 {
        &k.k1
    } else {
        panic!("test fixture: time {time} ({t} in the clip) is not on a key")
    };
    let mut out = [0.0; 4];
    for (o, v) in out.iter_mut().zip(vals) {
        *o = f64::from(*v);
    }
    Some(out)
}

/// The oracle's pose of `node` (translation, rotation, scale) for one
/// character's `actions`.
fn oracle_pose(rig_masks: &[Mask], actions: &[Action], node: u32) -> [Q; 3] {
    let n = node as usize;
    let props = [Property::Translation, Property::Rotation, Property::Scale];
    let rests = [
        [
            f64::from(REST_T[n][0]),
            f64::from(REST_T[n][1]),
            f64::from(REST_T[n][2]),
            0.0,
        ],
        q(rest_r(n)),
        [
            f64::from(REST_S[n][0]),
            f64::from(REST_S[n][1]),
            f64::from(REST_S[n][2]),
            0.0,
        ],
    ];
    let mut out = [[0.0; 4]; 3];
    for (p, prop) in props.into_iter().enumerate() {
        let inputs = inputs_for(rig_masks, actions, node, prop, 0);
        out[p] = oracle(rests[p], &inputs, prop == Property::Rotation);
    }
    out
}

/// The oracle's inputs for (node, prop), component `c` of a weights track
/// moved to component 0 when `prop` is Weights.
fn inputs_for(
    rig_masks: &[Mask],
    actions: &[Action],
    node: u32,
    prop: Property,
    c: usize,
) -> Vec<Input> {
    actions
        .iter()
        .map(|a| {
            let m = a
                .mask
                .map_or(1.0, |m| rig_masks[m.index() as usize].factor(node).unwrap());
            let pick = |v: Option<Q>| {
                v.map(|v| {
                    if prop == Property::Weights {
                        [v[c], 0.0, 0.0, 0.0]
                    } else {
                        v
                    }
                })
            };
            Input {
                v: pick(keyed(a.clip, node, prop, a.time, a.wrap)),
                r: a.reference_time
                    .and_then(|rt| pick(keyed(a.clip, node, prop, rt, a.wrap))),
                additive: a.reference_time.is_some(),
                overrides: a.overrides,
                w: f64::from(a.weight) * f64::from(m),
            }
        })
        .collect()
}

/// The oracle's morph weights of the mesh on node 1.
fn oracle_weights(rig_masks: &[Mask], actions: &[Action]) -> [f64; 2] {
    let mut out = [0.0; 2];
    for (c, o) in out.iter_mut().enumerate() {
        let inputs = inputs_for(rig_masks, actions, 1, Property::Weights, c);
        let rest = [f64::from(DEFAULT_WEIGHTS[c]), 0.0, 0.0, 0.0];
        *o = oracle(rest, &inputs, false)[0];
    }
    out
}

fn close(label: &str, got: &[f32], want: &[f64], tol: f64) {
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (f64::from(*g) - w).abs() <= tol,
            "{label}[{k}]: got {got:?}, want {want:?}"
        );
    }
}

// ---------------------------------------------------------------- scenarios

/// Named mixes, each one character's actions, covering every rule.
fn scenarios() -> Vec<(&'static str, Vec<Action>)> {
    use WrapMode::*;
    let a = Action::new;
    vec![
        ("one action, weight 1", vec![a(0, 1.0)]),
        (
            "two summing to 1",
            vec![a(0, 1.0).with_weight(0.6), a(1, 0.0).with_weight(0.4)],
        ),
        (
            "two summing below 1",
            vec![a(0, 1.0).with_weight(0.3), a(1, 1.0).with_weight(0.2)],
        ),
        (
            "two summing above 1",
            vec![a(0, 0.0), a(1, 1.0).with_weight(1.5)],
        ),
        (
            "three in order",
            vec![
                a(0, 1.0).with_weight(0.5),
                a(1, 0.0).with_weight(0.25),
                a(3, 0.0).with_weight(0.25),
            ],
        ),
        (
            "a zero weight",
            vec![a(0, 1.0).with_weight(0.5), a(1, 1.0).with_weight(0.0)],
        ),
        ("only a zero weight", vec![a(0, 1.0).with_weight(0.0)]),
        (
            "mask 0/0.5/1",
            vec![a(0, 1.0), a(1, 1.0).with_mask(keyframe_gpu::MaskId::new(0))],
        ),
        (
            "mask 0 leaves nodes untouched",
            vec![a(1, 1.0).with_mask(keyframe_gpu::MaskId::new(1))],
        ),
        (
            "fractional mask on the mesh node",
            vec![a(0, 0.0), a(1, 1.0).with_mask(keyframe_gpu::MaskId::new(2))],
        ),
        (
            "opposite hemispheres",
            vec![a(0, 0.0).with_weight(0.7), a(3, 1.0).with_weight(0.3)],
        ),
        (
            "opposite hemispheres, below 1",
            vec![a(3, 1.0).with_weight(0.4)],
        ),
        ("additive", vec![a(0, 1.0), a(2, 1.0).additive(0.0)]),
        (
            "two additive",
            vec![
                a(0, 1.0),
                a(2, 1.0).additive(0.0).with_weight(0.5),
                a(4, 1.0).additive(0.0),
            ],
        ),
        (
            "additive weight 2",
            vec![a(1, 0.0), a(2, 1.0).additive(0.0).with_weight(2.0)],
        ),
        (
            "additive against another reference",
            vec![a(0, 1.0), a(2, 0.0).additive(1.0)],
        ),
        (
            "additive only",
            vec![a(2, 1.0).additive(0.0).with_weight(0.8)],
        ),
        (
            "additive masked",
            vec![
                a(1, 1.0),
                a(2, 1.0)
                    .additive(0.0)
                    .with_mask(keyframe_gpu::MaskId::new(0)),
            ],
        ),
        (
            "repeat and ping-pong past the end",
            vec![
                a(0, 3.0).with_wrap(Repeat).with_weight(0.5),
                a(1, 3.0).with_wrap(PingPong).with_weight(0.5),
            ],
        ),
        (
            "clamped past the end and before the start",
            vec![a(0, 7.5).with_weight(0.5), a(1, -2.0).with_weight(0.5)],
        ),
        ("no actions", vec![]),
    ]
    .into_iter()
    .chain(override_scenarios())
    .collect()
}

/// Named mixes with override actions (rule 3).
fn override_scenarios() -> Vec<(&'static str, Vec<Action>)> {
    let a = Action::new;
    vec![
        (
            "override at 1 through a mask",
            vec![
                a(0, 1.0),
                a(1, 1.0)
                    .overriding()
                    .with_mask(keyframe_gpu::MaskId::new(1)),
            ],
        ),
        (
            "override at 0.5",
            vec![a(0, 1.0), a(1, 0.0).overriding().with_weight(0.5)],
        ),
        (
            "override over nothing",
            vec![a(1, 1.0).overriding().with_weight(0.25)],
        ),
        (
            "override before a normal in the list",
            vec![a(3, 0.0).overriding().with_weight(0.6), a(0, 1.0)],
        ),
        (
            "two overrides in order",
            vec![
                a(0, 1.0).with_weight(0.5),
                a(1, 1.0).overriding().with_weight(0.5),
                a(3, 1.0).overriding().with_weight(0.5),
            ],
        ),
        (
            "override weight 2 replaces",
            vec![a(0, 0.0), a(1, 1.0).overriding().with_weight(2.0)],
        ),
        (
            "override under an additive",
            vec![a(0, 1.0), a(4, 1.0).overriding(), a(2, 1.0).additive(0.0)],
        ),
        (
            "override through fractional masks",
            vec![
                a(0, 0.0),
                a(1, 1.0)
                    .overriding()
                    .with_mask(keyframe_gpu::MaskId::new(2)),
                a(4, 1.0)
                    .overriding()
                    .with_mask(keyframe_gpu::MaskId::new(0)),
            ],
        ),
    ]
}

fn local_parts(p: &GpuLocalPose) -> [[f32; 4]; 3] {
    [p.translation, p.rotation, p.scale]
}

#[test]
fn cpu_mixer_follows_the_rules_computed_by_hand() {
    let (rig, lib) = model();
    let tables = SkinTables::new(&rig, &lib).unwrap();
    let masks = masks(&rig);
    for (name, actions) in scenarios() {
        let out = cpu_mix(&tables, &lib, &masks, &actions, &[actions.len() as u32]).unwrap();
        for node in 0..4u32 {
            let want = oracle_pose(&masks, &actions, node);
            let got = local_parts(&out.locals[node as usize]);
            for (p, label) in ["translation", "rotation", "scale"].iter().enumerate() {
                let w = if p == 1 { &want[p][..] } else { &want[p][..3] };
                let g = if p == 1 { &got[p][..] } else { &got[p][..3] };
                close(&format!("{name}: node {node} {label}"), g, w, HAND_TOL);
            }
        }
        let w = oracle_weights(&masks, &actions);
        close(
            &format!("{name}: weights"),
            &out.morph_weights,
            &w,
            HAND_TOL,
        );
    }
}

/// The oracle itself, on numbers worked out on paper: translation of node
/// 0 under walk at 1 s (10, 0, 0) weight 0.3 and run at 1 s (0, 8, 0)
/// weight 0.2: rule 1 gives (10, 0, 0) * 0.6 + (0, 8, 0) * 0.4 = (6, 3.2,
/// 0), W = 0.5; rule 2 mixes with the rest (1, 2, 3) at 0.5: (3.5, 2.6,
/// 1.5). Rotations: rest identity, additive rot_z(0.5) at weight 1 over
/// walk at 1 s rot_z(1.2) gives rot_z(1.7).
#[test]
fn the_oracle_agrees_with_paper() {
    let (rig, _) = model();
    let masks = masks(&rig);
    let acts = [
        Action::new(0, 1.0).with_weight(0.3),
        Action::new(1, 1.0).with_weight(0.2),
    ];
    let [t, _, _] = oracle_pose(&masks, &acts, 0);
    // (The weights are f32 0.3 and 0.2, which differ from 0.3 and 0.2 by
    // ~1e-8.)
    for (g, w) in t.iter().zip([3.5, 2.6, 1.5]) {
        assert!((g - w).abs() < 1e-6, "{t:?}");
    }
    let acts = [Action::new(0, 1.0), Action::new(2, 1.0).additive(0.0)];
    let [_, r, _] = oracle_pose(&masks, &acts, 0);
    let want = q(rot_z(1.7));
    assert!(
        r.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-6),
        "{r:?} vs {want:?}"
    );
    // Weights: walk at 1 s (0, 1) weight 0.5 alone: W = 0.5 < 1, mixed with
    // the defaults (0.1, 0.2) at 0.5: (0.05, 0.6).
    let w = oracle_weights(&masks, &[Action::new(0, 1.0).with_weight(0.5)]);
    assert!(
        (w[0] - 0.05).abs() < 1e-6 && (w[1] - 0.6).abs() < 1e-6,
        "{w:?}"
    );
    // Rule 3: walk at 1 s (10, 0, 0) at weight 1, run at 1 s (0, 8, 0)
    // overriding at 0.25: (10, 0, 0) * 0.75 + (0, 8, 0) * 0.25 = (7.5, 2,
    // 0); over nothing, the rest (1, 2, 3) instead: (0.75, 3.5, 2.25); at
    // weight 1, run's (0, 8, 0) itself. After a normal action in the list,
    // still over it (rule 3 comes after rules 1-2): the same (7.5, 2, 0).
    let run = Action::new(1, 1.0).overriding();
    for (acts, want) in [
        (
            vec![Action::new(0, 1.0), run.with_weight(0.25)],
            [7.5, 2.0, 0.0],
        ),
        (vec![run.with_weight(0.25)], [0.75, 3.5, 2.25]),
        (vec![Action::new(0, 1.0), run], [0.0, 8.0, 0.0]),
        (
            vec![run.with_weight(0.25), Action::new(0, 1.0)],
            [7.5, 2.0, 0.0],
        ),
    ] {
        let [t, _, _] = oracle_pose(&masks, &acts, 0);
        for (g, w) in t.iter().zip(want) {
            assert!((g - w).abs() < 1e-6, "{acts:?}: {t:?}");
        }
    }
}

/// Node by node and property by property, which single clip an override
/// at weight 1 through `mask` over `base` must equal: the override's clip
/// where the mask is 1 and the clip has a track, the base elsewhere.
fn override_source(mask: &Mask, base: u32, over: u32, node: u32, prop: Property) -> u32 {
    let tracked = clip_keys()[over as usize]
        .iter()
        .any(|k| k.node == node && k.prop == prop);
    if mask.factor(node) == Some(1.0) && tracked {
        over
    } else {
        base
    }
}

/// An override at weight 1 reproduces its clip bit for bit on its mask's
/// nodes (where it has tracks) and leaves the other nodes exactly as the
/// base alone poses them, in the CPU twin, at key times and between keys.
#[test]
fn an_override_at_weight_one_is_its_clip_on_its_nodes_bit_for_bit() {
    let (rig, lib) = model();
    let tables = SkinTables::new(&rig, &lib).unwrap();
    // Node 1's subtree (nodes 1, 2: the mesh node and its child), and
    // every node.
    let masks = [
        Mask::subtree(&rig, 1).unwrap(),
        Mask::filled(&rig, 1.0).unwrap(),
    ];
    for (m, mask) in masks.iter().enumerate() {
        for (base, over) in [(0u32, 1u32), (1, 0), (0, 4), (2, 3)] {
            for (tb, to) in [(0.3, 0.8), (1.0, 0.0), (0.55, 0.55)] {
                let id = keyframe_gpu::MaskId::new(m as u32);
                let both = [
                    Action::new(base, tb),
                    Action::new(over, to).overriding().with_mask(id),
                ];
                let got = cpu_mix(&tables, &lib, &masks, &both, &[2]).unwrap();
                let alone = |c: u32, t: f64| {
                    cpu_mix(&tables, &lib, &[], &[Action::new(c, t)], &[1]).unwrap()
                };
                let (b, o) = (alone(base, tb), alone(over, to));
                let label = format!("mask {m}, clip {over} over {base} at {to}/{tb}");
                for n in 0..4u32 {
                    let props = [Property::Translation, Property::Rotation, Property::Scale];
                    for (p, prop) in props.into_iter().enumerate() {
                        let from = if override_source(mask, base, over, n, prop) == over {
                            &o
                        } else {
                            &b
                        };
                        let bits = |x: &GpuLocalPose| local_parts(x)[p].map(f32::to_bits);
                        assert_eq!(
                            bits(&got.locals[n as usize]),
                            bits(&from.locals[n as usize]),
                            "{label}: node {n} {prop:?}"
                        );
                    }
                }
                let from = if override_source(mask, base, over, 1, Property::Weights) == over {
                    &o
                } else {
                    &b
                };
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(&got.morph_weights),
                    bits(&from.morph_weights),
                    "{label}: weights"
                );
            }
        }
    }
}

/// One action of weight 1 is today's pose, bit for bit, at any time (on
/// keys and between them), through the whole chain.
#[test]
fn one_action_of_weight_one_is_the_unblended_pose_bit_for_bit() {
    let (rig, lib) = model();
    let tables = SkinTables::new(&rig, &lib).unwrap();
    for clip in 0..lib.clips().len() as u32 {
        for time in [0.0, 0.25, 0.5, 0.8, 1.0, 1.7, -1.0] {
            for wrap in [WrapMode::Clamp, WrapMode::Repeat, WrapMode::PingPong] {
                let mixed = cpu_mix(
                    &tables,
                    &lib,
                    &[],
                    &[Action::new(clip, time).with_wrap(wrap)],
                    &[1],
                )
                .unwrap();
                let plain =
                    cpu_skin::skin(&tables, &lib, &[Instance::new(clip, time).with_wrap(wrap)])
                        .unwrap();
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                let locals = |o: &cpu_skin::SkinOutput| {
                    o.locals
                        .iter()
                        .flat_map(|p| local_parts(p).concat())
                        .collect::<Vec<_>>()
                };
                let mats =
                    |m: &[glam::Mat4]| m.iter().flat_map(|m| m.to_cols_array()).collect::<Vec<_>>();
                let label = format!("clip {clip} t {time} {wrap:?}");
                assert_eq!(
                    bits(&locals(&mixed)),
                    bits(&locals(&plain)),
                    "{label}: locals"
                );
                assert_eq!(
                    bits(&mats(&mixed.globals)),
                    bits(&mats(&plain.globals)),
                    "{label}"
                );
                assert_eq!(
                    bits(&mats(&mixed.joints)),
                    bits(&mats(&plain.joints)),
                    "{label}"
                );
                assert_eq!(
                    bits(&mixed.morph_weights),
                    bits(&plain.morph_weights),
                    "{label}"
                );
            }
        }
    }
}

/// Several characters in one call: each gets its own actions' pose.
#[test]
fn characters_are_independent() {
    let (rig, lib) = model();
    let tables = SkinTables::new(&rig, &lib).unwrap();
    let masks = masks(&rig);
    let all = scenarios();
    let actions: Vec<Action> = all.iter().flat_map(|(_, a)| a.clone()).collect();
    let counts: Vec<u32> = all.iter().map(|(_, a)| a.len() as u32).collect();
    let out = cpu_mix(&tables, &lib, &masks, &actions, &counts).unwrap();
    for (c, (name, acts)) in all.iter().enumerate() {
        let alone = cpu_mix(&tables, &lib, &masks, acts, &[acts.len() as u32]).unwrap();
        assert_eq!(
            out.locals[c * 4..c * 4 + 4],
            alone.locals[..],
            "character {c} ({name})"
        );
        assert_eq!(out.morph_weights[c * 2..c * 2 + 2], alone.morph_weights[..]);
    }
}

#[test]
fn masks_are_built_from_nodes_subtrees_and_factors() {
    let (rig, _) = model();
    assert_eq!(
        Mask::nodes(&rig, &[0, 2]).unwrap().factors(),
        [1.0, 0.0, 1.0, 0.0]
    );
    // Node 1's subtree: 1 and its child 2.
    assert_eq!(
        Mask::subtree(&rig, 1).unwrap().factors(),
        [0.0, 1.0, 1.0, 0.0]
    );
    assert_eq!(
        Mask::subtree(&rig, 0).unwrap().factors(),
        [1.0, 1.0, 1.0, 0.0]
    );
    let m = Mask::from_factors(&rig, vec![0.0, 0.25, 0.5, 1.0]).unwrap();
    assert_eq!(m.factor(1), Some(0.25));
    assert_eq!(
        Mask::nodes(&rig, &[4]),
        Err(MixError::MaskNodeOutOfRange {
            node: 4,
            node_count: 4
        })
    );
    assert_eq!(
        Mask::subtree(&rig, 9).unwrap_err(),
        MixError::MaskNodeOutOfRange {
            node: 9,
            node_count: 4
        }
    );
    assert!(matches!(
        Mask::from_factors(&rig, vec![0.0, 1.5, 0.0, 0.0]),
        Err(MixError::MaskFactor { node: 1, .. })
    ));
    assert!(matches!(
        Mask::from_factors(&rig, vec![0.0, f32::NAN, 0.0, 0.0]),
        Err(MixError::MaskFactor { node: 1, .. })
    ));
    assert!(matches!(
        Mask::from_factors(&rig, vec![0.0; 3]),
        Err(MixError::MaskLength {
            len: 3,
            node_count: 4
        })
    ));
    assert!(matches!(
        Mask::filled(&rig, -0.5),
        Err(MixError::MaskFactor { .. })
    ));
}

/// Every bad action is refused naming the character and the action.
fn refusals() -> Vec<(Vec<Action>, Vec<u32>, MixError)> {
    let ok = Action::new(0, 0.5);
    vec![
        (
            vec![ok, ok, Action::new(9, 0.0)],
            vec![1, 2],
            MixError::UnknownClip {
                character: 1,
                action: 1,
                clip: 9,
                clip_count: 5,
            },
        ),
        (
            vec![ok.with_mask(keyframe_gpu::MaskId::new(3))],
            vec![1],
            MixError::UnknownMask {
                character: 0,
                action: 0,
                mask: 3,
                mask_count: 3,
            },
        ),
        (
            vec![ok, ok.with_weight(-0.1)],
            vec![2],
            MixError::BadWeight {
                character: 0,
                action: 1,
                weight: -0.1,
            },
        ),
        (
            vec![ok.with_weight(f32::INFINITY)],
            vec![1],
            MixError::BadWeight {
                character: 0,
                action: 0,
                weight: f32::INFINITY,
            },
        ),
        (
            vec![ok, Action::new(0, f64::INFINITY)],
            vec![1, 1],
            MixError::TimeNotFinite {
                character: 1,
                action: 0,
                field: "time",
                time: f64::INFINITY,
            },
        ),
        (
            vec![ok.additive(f64::NEG_INFINITY)],
            vec![1],
            MixError::TimeNotFinite {
                character: 0,
                action: 0,
                field: "reference time",
                time: f64::NEG_INFINITY,
            },
        ),
        (
            vec![ok; 3],
            vec![2],
            MixError::CountMismatch {
                counted: 2,
                actions: 3,
            },
        ),
        (
            vec![ok, ok.overriding().additive(0.0)],
            vec![2],
            MixError::AdditiveOverride {
                character: 0,
                action: 1,
            },
        ),
    ]
}

#[test]
fn bad_actions_are_refused_naming_character_and_action() {
    let (rig, lib) = model();
    let tables = SkinTables::new(&rig, &lib).unwrap();
    let masks = masks(&rig);
    for (actions, counts, want) in refusals() {
        match cpu_mix(&tables, &lib, &masks, &actions, &counts) {
            Err(Error::Mix(e)) => assert_eq!(e, want),
            other => panic!("{want:?}: got {other:?}"),
        }
    }
    // NaN weight and time (NaN != NaN: matched by shape).
    let r = cpu_mix(&tables, &lib, &masks, &[Action::new(0, f64::NAN)], &[1]);
    assert!(matches!(
        r,
        Err(Error::Mix(MixError::TimeNotFinite {
            character: 0,
            action: 0,
            ..
        }))
    ));
    let r = cpu_mix(
        &tables,
        &lib,
        &masks,
        &[Action::new(0, 0.0).with_weight(f32::NAN)],
        &[1],
    );
    assert!(matches!(
        r,
        Err(Error::Mix(MixError::BadWeight {
            character: 0,
            action: 0,
            ..
        }))
    ));
    // More actions than the hard maximum.
    let many = vec![Action::new(0, 0.0); MAX_ACTIONS as usize + 1];
    let r = cpu_mix(&tables, &lib, &masks, &many, &[MAX_ACTIONS + 1]);
    assert!(matches!(
        r,
        Err(Error::Mix(MixError::TooManyActions { character: 0, count, capacity: MAX_ACTIONS }))
            if count == MAX_ACTIONS + 1
    ));
}

// ---------------------------------------------------------------- the GPU

fn gpu_locals_close(label: &str, gpu: &[GpuLocalPose], cpu: &[GpuLocalPose]) {
    assert_eq!(gpu.len(), cpu.len(), "{label}: locals");
    for (k, (g, c)) in gpu.iter().zip(cpu).enumerate() {
        let (gr, cr) = (Vec4::from(g.rotation), Vec4::from(c.rotation));
        // Up to sign: a mix at a dot product within rounding of 0 may pick
        // the other hemisphere on one side.
        let rot = (gr - cr)
            .abs()
            .max_element()
            .min((gr + cr).abs().max_element());
        let t = (Vec4::from(g.translation) - Vec4::from(c.translation))
            .abs()
            .max_element();
        let s = (Vec4::from(g.scale) - Vec4::from(c.scale))
            .abs()
            .max_element();
        assert!(
            rot <= GPU_TOL && t <= GPU_TOL && s <= GPU_TOL,
            "{label}: local {k}: gpu {g:?} cpu {c:?}"
        );
    }
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// Runs `actions` on the GPU mixer and compares every output with the CPU
/// twin.
#[allow(
    clippy::too_many_arguments,
    reason = "a test helper: the model's parts and one frame"
)]
fn gpu_matches_cpu(
    label: &str,
    h: &crate::tests::common::headless::Headless,
    animator: &mut Animator,
    tables: &SkinTables,
    lib: &AnimationLibrary,
    masks: &[Mask],
    actions: &[Action],
    counts: &[u32],
) {
    animator.set_actions(&h.queue, actions, counts).unwrap();
    let mut enc = h.device.create_command_encoder(&Default::default());
    animator.record(&mut enc);
    h.queue.submit([enc.finish()]);
    let poses = animator.read_back(&h.device, &h.queue).unwrap();
    let cpu = cpu_mix(tables, lib, masks, actions, counts).unwrap();
    assert_eq!(poses.instance_count(), counts.len() as u32);
    let mut locals = Vec::new();
    for c in 0..counts.len() as u32 {
        for n in 0..tables.node_count() {
            let t = poses.local(c, n).unwrap();
            locals.push(GpuLocalPose {
                translation: t.translation.extend(0.0).to_array(),
                rotation: t.rotation.to_array(),
                scale: t.scale.extend(0.0).to_array(),
            });
        }
    }
    gpu_locals_close(label, &locals, &cpu.locals);
    let mut globals = Vec::new();
    for c in 0..counts.len() as u32 {
        for n in 0..tables.node_count() {
            globals.extend(poses.world(c, n).unwrap().to_cols_array());
        }
    }
    let cpu_globals: Vec<f32> = cpu.globals.iter().flat_map(|m| m.to_cols_array()).collect();
    let d = max_diff(&globals, &cpu_globals);
    assert!(d <= GPU_TOL, "{label}: globals differ by {d}");
    let mut joints = Vec::new();
    for c in 0..counts.len() as u32 {
        for m in poses.joints(c, 0).unwrap() {
            joints.extend(m.to_cols_array());
        }
    }
    let cpu_joints: Vec<f32> = cpu.joints.iter().flat_map(|m| m.to_cols_array()).collect();
    let d = max_diff(&joints, &cpu_joints);
    assert!(d <= GPU_TOL, "{label}: joints differ by {d}");
    let mut weights = Vec::new();
    for c in 0..counts.len() as u32 {
        let mesh_node = tables.meshes()[0].node;
        weights.extend_from_slice(poses.morph_weights(c, mesh_node).unwrap());
    }
    let d = max_diff(&weights, &cpu.morph_weights);
    assert!(d <= GPU_TOL, "{label}: morph weights differ by {d}");
}

#[test]
fn gpu_mixer_matches_cpu_on_every_scenario() {
    let Some(h) = common::gpu("gpu_mixer_matches_cpu_on_every_scenario") else {
        return;
    };
    let (rig, lib) = model();
    let tables = SkinTables::new(&rig, &lib).unwrap();
    let masks = masks(&rig);
    let all = scenarios();
    let desc = MixerDesc {
        characters: all.len() as u32,
        actions_per_character: 4,
        masks: masks.clone(),
    };
    let mut animator =
        Animator::with_mixer(&h.device, &h.queue, &lib.bind(&rig).unwrap(), &desc).unwrap();
    let actions: Vec<Action> = all.iter().flat_map(|(_, a)| a.clone()).collect();
    let counts: Vec<u32> = all.iter().map(|(_, a)| a.len() as u32).collect();
    gpu_matches_cpu(
        "scenarios",
        &h,
        &mut animator,
        &tables,
        &lib,
        &masks,
        &actions,
        &counts,
    );

    // A refused frame writes nothing: the previous frame's results stay.
    let before = animator.read_back(&h.device, &h.queue).unwrap();
    for (bad, counts, want) in refusals() {
        match animator.set_actions(&h.queue, &bad, &counts) {
            Err(Error::Mix(e)) => assert_eq!(e, want),
            other => panic!("{want:?}: got {other:?}"),
        }
    }
    let too_many = vec![Action::new(0, 0.0); 5];
    assert!(matches!(
        animator.set_actions(&h.queue, &too_many, &[5]),
        Err(Error::Mix(MixError::TooManyActions {
            character: 0,
            count: 5,
            capacity: 4
        }))
    ));
    let many_chars = vec![1u32; all.len() + 1];
    let acts = vec![Action::new(0, 0.0); all.len() + 1];
    assert!(matches!(
        animator.set_actions(&h.queue, &acts, &many_chars),
        Err(Error::Mix(MixError::TooManyCharacters { .. }))
    ));
    let mut enc = h.device.create_command_encoder(&Default::default());
    animator.record(&mut enc);
    h.queue.submit([enc.finish()]);
    let after = animator.read_back(&h.device, &h.queue).unwrap();
    for c in 0..counts.len() as u32 {
        for n in 0..4 {
            assert_eq!(before.local(c, n), after.local(c, n));
        }
    }
}

/// On the GPU too, an override at weight 1 is its clip bit for bit on its
/// mask's nodes (where it has tracks) and the base alone elsewhere: one
/// frame holds each mix beside its two clips alone.
#[test]
fn gpu_override_at_weight_one_is_its_clip_on_its_nodes_bit_for_bit() {
    let Some(h) = common::gpu("gpu_override_at_weight_one_is_its_clip_on_its_nodes_bit_for_bit")
    else {
        return;
    };
    let (rig, lib) = model();
    let masks = vec![
        Mask::subtree(&rig, 1).unwrap(),
        Mask::filled(&rig, 1.0).unwrap(),
    ];
    let mut cases = Vec::new();
    for m in 0..masks.len() as u32 {
        for (base, over) in [(0u32, 1u32), (1, 0), (0, 4), (2, 3)] {
            for (tb, to) in [(0.3, 0.8), (1.0, 0.0)] {
                cases.push((m, base, over, tb, to));
            }
        }
    }
    let mut actions = Vec::new();
    let mut counts = Vec::new();
    for &(m, base, over, tb, to) in &cases {
        let id = keyframe_gpu::MaskId::new(m);
        actions.push(Action::new(base, tb));
        actions.push(Action::new(over, to).overriding().with_mask(id));
        actions.push(Action::new(base, tb));
        actions.push(Action::new(over, to));
        counts.extend([2, 1, 1]);
    }
    let desc = MixerDesc {
        characters: counts.len() as u32,
        actions_per_character: 2,
        masks: masks.clone(),
    };
    let mut animator =
        Animator::with_mixer(&h.device, &h.queue, &lib.bind(&rig).unwrap(), &desc).unwrap();
    animator.set_actions(&h.queue, &actions, &counts).unwrap();
    let mut enc = h.device.create_command_encoder(&Default::default());
    animator.record(&mut enc);
    h.queue.submit([enc.finish()]);
    let poses = animator.read_back(&h.device, &h.queue).unwrap();
    let mesh_node = rig.parts()[0].node;
    for (k, &(m, base, over, tb, to)) in cases.iter().enumerate() {
        let (mixed, b, o) = (3 * k as u32, 3 * k as u32 + 1, 3 * k as u32 + 2);
        let label = format!("mask {m}, clip {over} over {base} at {to}/{tb}");
        for n in 0..4u32 {
            let parts = |c: u32| {
                let l = poses.local(c, n).unwrap();
                [
                    l.translation.to_array().map(f32::to_bits).to_vec(),
                    l.rotation.to_array().map(f32::to_bits).to_vec(),
                    l.scale.to_array().map(f32::to_bits).to_vec(),
                ]
            };
            let props = [Property::Translation, Property::Rotation, Property::Scale];
            for (p, prop) in props.into_iter().enumerate() {
                let from = if override_source(&masks[m as usize], base, over, n, prop) == over {
                    o
                } else {
                    b
                };
                assert_eq!(
                    parts(mixed)[p],
                    parts(from)[p],
                    "{label}: node {n} {prop:?}"
                );
            }
        }
        let from = if override_source(&masks[m as usize], base, over, 1, Property::Weights) == over
        {
            o
        } else {
            b
        };
        let bits = |c: u32| {
            let w = poses.morph_weights(c, mesh_node).unwrap();
            w.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        };
        assert_eq!(bits(mixed), bits(from), "{label}: weights");
    }
}

/// An animator with a mixer given plain instances, or one action of weight
/// 1 per character, poses them as the animator without a mixer does.
#[test]
fn gpu_one_action_per_character_matches_the_unmixed_animator() {
    let Some(h) = common::gpu("gpu_one_action_per_character_matches_the_unmixed_animator") else {
        return;
    };
    let (rig, lib) = model();
    let instances: Vec<Instance> = (0..40)
        .map(|i| Instance::new(i % 5, f64::from(i) * 0.11).with_wrap(WrapMode::PingPong))
        .collect();
    let actions: Vec<Action> = instances
        .iter()
        .map(|i| Action::new(i.clip, i.time).with_wrap(i.wrap))
        .collect();
    let run = |animator: &Animator| {
        let mut enc = h.device.create_command_encoder(&Default::default());
        animator.record(&mut enc);
        h.queue.submit([enc.finish()]);
        animator.read_back(&h.device, &h.queue).unwrap()
    };
    let mut plain = Animator::new(&h.device, &h.queue, &lib.bind(&rig).unwrap(), 40).unwrap();
    plain.set_instances(&h.queue, &instances).unwrap();
    let want = run(&plain);
    let desc = MixerDesc {
        characters: 40,
        actions_per_character: 1,
        masks: vec![],
    };
    let mut mixed =
        Animator::with_mixer(&h.device, &h.queue, &lib.bind(&rig).unwrap(), &desc).unwrap();
    for by_actions in [false, true] {
        if by_actions {
            mixed.set_actions(&h.queue, &actions, &[1; 40]).unwrap();
        } else {
            mixed.set_instances(&h.queue, &instances).unwrap();
        }
        let got = run(&mixed);
        for i in 0..40 {
            let flat = |p: &keyframe_gpu::Poses| -> Vec<f32> {
                p.joints(i, 0)
                    .unwrap()
                    .iter()
                    .flat_map(|m| m.to_cols_array())
                    .collect()
            };
            let (a, b) = (flat(&got), flat(&want));
            assert!(
                max_diff(&a, &b) <= GPU_TOL,
                "instance {i} (by actions: {by_actions})"
            );
            let mesh_node = rig.parts()[0].node;
            assert_eq!(
                got.morph_weights(i, mesh_node),
                want.morph_weights(i, mesh_node)
            );
        }
    }
    // A mixer's capacity is checked when it is made.
    for per in [0, MAX_ACTIONS + 1] {
        let desc = MixerDesc {
            characters: 1,
            actions_per_character: per,
            masks: vec![],
        };
        assert!(matches!(
            Animator::with_mixer(&h.device, &h.queue, &lib.bind(&rig).unwrap(), &desc),
            Err(Error::Mix(MixError::ActionCapacity { .. }))
        ));
    }
    // Actions on an animator without a mixer.
    assert!(matches!(
        plain.set_actions(&h.queue, &actions, &[1; 40]),
        Err(Error::Mix(MixError::NoMixer))
    ));
}

mod random {
    use super::*;
    use proptest::prelude::*;

    fn action() -> impl Strategy<Value = Action> {
        (
            0u32..5,
            -0.5f64..3.5,
            0u8..3,
            prop_oneof![Just(0.0f32), 0.0f32..2.0],
            prop_oneof![Just(None), (0u32..3).prop_map(Some)],
            prop_oneof![3 => Just(None), 1 => (-0.5f64..1.5).prop_map(Some)],
            prop_oneof![3 => Just(false), 1 => Just(true)],
        )
            .prop_map(|(clip, time, wrap, weight, mask, reference, overrides)| {
                let wrap = [WrapMode::Clamp, WrapMode::Repeat, WrapMode::PingPong][wrap as usize];
                let mut a = Action::new(clip, time).with_wrap(wrap).with_weight(weight);
                a.mask = mask.map(keyframe_gpu::MaskId::new);
                a.reference_time = reference;
                // An action is additive or override, not both.
                a.overrides = overrides && reference.is_none();
                a
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// Random mixes of up to 4 actions for up to 6 characters: GPU
        /// against the CPU twin (times anywhere, between keys too).
        #[test]
        fn gpu_mixer_matches_cpu_on_random_mixes(
            chars in proptest::collection::vec(proptest::collection::vec(action(), 0..=4), 1..=6)
        ) {
            let Some(h) = common::gpu("gpu_mixer_matches_cpu_on_random_mixes") else {
                return Ok(());
            };
            let (rig, lib) = model();
            let tables = SkinTables::new(&rig, &lib).unwrap();
            let masks = masks(&rig);
            let desc = MixerDesc { characters: 6, actions_per_character: 4, masks: masks.clone() };
            let mut animator = Animator::with_mixer(&h.device, &h.queue, &lib.bind(&rig).unwrap(), &desc).unwrap();
            let actions: Vec<Action> = chars.iter().flatten().copied().collect();
            let counts: Vec<u32> = chars.iter().map(|c| c.len() as u32).collect();
            gpu_matches_cpu("random", &h, &mut animator, &tables, &lib, &masks, &actions, &counts);
        }
    }
}

// ---------------------------------------------------------------- pointer targets

/// One node and three pointer targets (`KHR_animation_pointer`): a colour
/// (float4, rest white), a visibility (bool, rest true) and an emissive
/// strength (float, rest 1). Clips: 0 red turns blue over 1 s and hides at
/// 1 s; 1 green, hidden; 2 glow, emissive 0 to 2; 3 moves the node only
/// (no pointer track: its rest-value filler must not count as animating).
fn pointer_model() -> (Rig, AnimationLibrary) {
    use keyframe_gpu::{PointerTarget, PointerType};
    use std::sync::Arc;
    let mut b = Rig::builder();
    b.node(None, NodeTransform::IDENTITY);
    let rig = b.build().unwrap();
    let colour = Arc::new(PointerTarget::new(
        "/materials/0/pbrMetallicRoughness/baseColorFactor",
        PointerType::Float4,
        vec![1.0; 4],
    ));
    let visible = Arc::new(PointerTarget::new(
        "/nodes/0/extensions/KHR_node_visibility/visible",
        PointerType::Bool,
        vec![1.0],
    ));
    let glow = Arc::new(PointerTarget::new(
        "/materials/0/extensions/KHR_materials_emissive_strength/emissiveStrength",
        PointerType::Float,
        vec![1.0],
    ));
    let lin = Interpolation::Linear;
    let clips = vec![
        Clip::new(
            "red",
            vec![
                Track::for_pointer(
                    colour.clone(),
                    lin,
                    vec![0.0, 1.0],
                    vec![1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0],
                ),
                Track::for_pointer(
                    visible.clone(),
                    Interpolation::Step,
                    vec![0.0, 1.0],
                    vec![1.0, 0.0],
                ),
            ],
        ),
        Clip::new(
            "green",
            vec![
                Track::for_pointer(colour, lin, vec![0.0], vec![0.0, 1.0, 0.0, 1.0]),
                Track::for_pointer(visible, Interpolation::Step, vec![0.0], vec![0.0]),
            ],
        ),
        Clip::new(
            "glow",
            vec![Track::for_pointer(
                glow,
                lin,
                vec![0.0, 1.0],
                vec![0.0, 2.0],
            )],
        ),
        Clip::new(
            "move",
            vec![Track::new(
                0,
                Property::Translation,
                lin,
                vec![0.0, 1.0],
                vec![0.0; 6],
            )],
        ),
    ];
    (rig, AnimationLibrary::new(clips).unwrap())
}

/// Mixes of the pointer model with their properties worked out by hand:
/// (colour, visible, emissive strength).
/// A named mix and its expected (colour, visible, emissive strength).
type PointerCase = (&'static str, Vec<Action>, [f32; 4], f32, f32);

fn pointer_cases() -> Vec<PointerCase> {
    let a = Action::new;
    vec![
        // Colour: blue (W 0.3), then green at 0.2 / 0.5 = 0.4:
        // (0, 0.4, 0.6, 1); W = 0.5, mixed with white at 0.5:
        // (0.5, 0.7, 0.8, 1). Visible: both hidden, but 1 - W = 0.5 >= 0.5
        // brings back the rest (true). Glow: not animated, rest 1.
        (
            "below 1",
            vec![a(0, 1.0).with_weight(0.3), a(1, 0.0).with_weight(0.2)],
            [0.5, 0.7, 0.8, 1.0],
            1.0,
            1.0,
        ),
        // Visible: red at 0 s shows (1); green's factor 1.5 / 2.5 = 0.6
        // >= 0.5 replaces it (0). Colour: red (1, 0, 0, 1) mixed with green
        // at 0.6: (0.4, 0.6, 0, 1).
        (
            "discrete replaced",
            vec![a(0, 0.0), a(1, 0.0).with_weight(1.5)],
            [0.4, 0.6, 0.0, 1.0],
            0.0,
            1.0,
        ),
        // Green's factor 0.6 / 1.6 = 0.375 < 0.5: red's visible (1) stays.
        (
            "discrete kept",
            vec![a(0, 0.0), a(1, 0.0).with_weight(0.6)],
            [0.625, 0.375, 0.0, 1.0],
            1.0,
            1.0,
        ),
        // "move" has no pointer track: red alone at W = 0.25, mixed with
        // white at 0.75: (0.75, 0.75, 1, 1); visible back to the rest.
        (
            "filler does not count",
            vec![a(3, 0.5), a(0, 1.0).with_weight(0.25)],
            [0.75, 0.75, 1.0, 1.0],
            1.0,
            1.0,
        ),
        // Additive glow at 1 s against 0 s, weight 0.5, over the rest 1:
        // 1 + 0.5 * (2 - 0) = 2.
        (
            "additive float",
            vec![a(2, 1.0).additive(0.0).with_weight(0.5)],
            [1.0; 4],
            1.0,
            2.0,
        ),
        // An additive discrete value replaces at w >= 0.5: hidden.
        (
            "additive discrete",
            vec![a(0, 0.0), a(1, 0.0).additive(0.0)],
            [1.0, 0.0, 0.0, 1.0],
            0.0,
            1.0,
        ),
        // Rule 3: green overriding red at 0.5: (1, 0, 0, 1) * 0.5 + (0, 1,
        // 0, 1) * 0.5 = (0.5, 0.5, 0, 1); its hidden replaces the visible
        // at w = 0.5 >= 0.5.
        (
            "override at 0.5",
            vec![a(0, 0.0), a(1, 0.0).overriding().with_weight(0.5)],
            [0.5, 0.5, 0.0, 1.0],
            0.0,
            1.0,
        ),
        // At 0.4 < 0.5 the visible stays; colour (0.6, 0.4, 0, 1).
        (
            "override keeps a discrete below 0.5",
            vec![a(0, 0.0), a(1, 0.0).overriding().with_weight(0.4)],
            [0.6, 0.4, 0.0, 1.0],
            1.0,
            1.0,
        ),
        // Glow overriding at 1: 2 at 1 s, whatever lies under it.
        (
            "override at 1 replaces",
            vec![a(0, 0.0), a(2, 1.0).overriding()],
            [1.0, 0.0, 0.0, 1.0],
            1.0,
            2.0,
        ),
        // Over nothing: the rest, white, mixed with green at 0.25: (0.75,
        // 1, 0.75, 1); visible stays (0.25 < 0.5).
        (
            "override over the rest",
            vec![a(1, 0.0).overriding().with_weight(0.25)],
            [0.75, 1.0, 0.75, 1.0],
            1.0,
            1.0,
        ),
    ]
}

#[test]
fn pointer_properties_follow_the_rules_by_hand() {
    let (rig, lib) = pointer_model();
    let tables = SkinTables::new(&rig, &lib).unwrap();
    assert_eq!(tables.property_stride(), 6);
    let colour = lib
        .pointer_target("/materials/0/pbrMetallicRoughness/baseColorFactor")
        .unwrap();
    let k = lib
        .pointer_targets()
        .iter()
        .position(|p| p.pointer == colour.pointer)
        .unwrap();
    // "move" (clip 3) does not animate the colour, whatever its filler.
    assert_eq!(
        tables.pointer_channels()[3 * 3 + k],
        keyframe_gpu::tables::rig::REST
    );
    let at = |name: &str| {
        let k = lib
            .pointer_targets()
            .iter()
            .position(|p| p.pointer.ends_with(name))
            .unwrap();
        tables.pointer_targets()[k][3] as usize
    };
    for (name, actions, want_colour, want_visible, want_glow) in pointer_cases() {
        let out = cpu_mix(&tables, &lib, &[], &actions, &[actions.len() as u32]).unwrap();
        let p = &out.properties;
        let c = &p[at("baseColorFactor")..at("baseColorFactor") + 4];
        for (g, w) in c.iter().zip(want_colour) {
            assert!(
                (g - w).abs() < 1e-6,
                "{name}: colour {c:?} vs {want_colour:?}"
            );
        }
        assert_eq!(p[at("visible")], want_visible, "{name}: visible");
        assert!(
            (p[at("emissiveStrength")] - want_glow).abs() < 1e-6,
            "{name}: glow {p:?}"
        );
    }
}

#[test]
fn gpu_pointer_properties_match_cpu() {
    let Some(h) = common::gpu("gpu_pointer_properties_match_cpu") else {
        return;
    };
    let (rig, lib) = pointer_model();
    let tables = SkinTables::new(&rig, &lib).unwrap();
    let cases = pointer_cases();
    let desc = MixerDesc {
        characters: cases.len() as u32,
        actions_per_character: 2,
        masks: vec![],
    };
    let mut animator =
        Animator::with_mixer(&h.device, &h.queue, &lib.bind(&rig).unwrap(), &desc).unwrap();
    assert!(animator.chunks()[0].property_buffer().is_some());
    let actions: Vec<Action> = cases.iter().flat_map(|c| c.1.clone()).collect();
    let counts: Vec<u32> = cases.iter().map(|c| c.1.len() as u32).collect();
    animator.set_actions(&h.queue, &actions, &counts).unwrap();
    let mut enc = h.device.create_command_encoder(&Default::default());
    animator.record(&mut enc);
    h.queue.submit([enc.finish()]);
    let poses = animator.read_back(&h.device, &h.queue).unwrap();
    let cpu = cpu_mix(&tables, &lib, &[], &actions, &counts).unwrap();
    let stride = tables.property_stride() as usize;
    for (c, (name, ..)) in cases.iter().enumerate() {
        for p in lib.pointer_targets() {
            let got = poses.property(c as u32, &p.pointer).unwrap();
            let k = lib
                .pointer_targets()
                .iter()
                .position(|q| q.pointer == p.pointer)
                .unwrap();
            let at = c * stride + tables.pointer_targets()[k][3] as usize;
            let want = &cpu.properties[at..at + p.width as usize];
            assert!(
                max_diff(got, want) <= GPU_TOL,
                "{name}: {} gpu {got:?} cpu {want:?}",
                p.pointer
            );
        }
    }
    assert!(poses.property(0, "/nope").is_none());
}

/// `cpu::mix::blend_rotation`, the one-slerp form the shader's mixed pose
/// and pointer rotations use, against the two rules it merges: rule 1
/// (`blend_normal`, rotation) for a normal action, the first and a later
/// one, and rule 4 (`add_quat`) for an additive one, equal to the last bit.
#[test]
fn blend_rotation_is_rule_1_or_rule_4() {
    use super::twins::add_quat;
    use keyframe_gpu::cpu::mix::{blend_normal, blend_rotation, blend_start};
    let bits = |b: keyframe_gpu::cpu::mix::Blend| {
        (
            b.acc.to_array().map(f32::to_bits),
            b.total.to_bits(),
            b.add.to_array().map(f32::to_bits),
            b.added,
        )
    };
    let q = |r: Quat| Vec4::from(r);
    let v = q(rot_x(0.7) * rot_y(-0.4));
    let at_ref = q(rot_z(0.25));
    let empty = blend_start(Vec4::new(0.0, 0.0, 0.0, 1.0));
    let one = blend_normal(empty, q(rot_y(1.1)), 0.6, true);
    let layered = add_quat(one, q(rot_x(-0.3)), q(rot_x(0.1)), 0.5);
    for (name, b) in [("empty", empty), ("one action", one), ("layered", layered)] {
        for w in [0.25, 1.0] {
            assert_eq!(
                bits(blend_rotation(b, v, at_ref, w, false)),
                bits(blend_normal(b, v, w, true)),
                "{name}, normal, w {w}"
            );
            assert_eq!(
                bits(blend_rotation(b, v, at_ref, w, true)),
                bits(add_quat(b, v, at_ref, w)),
                "{name}, additive, w {w}"
            );
        }
    }
    // The two rules differ here, so the comparisons above can tell them apart.
    assert_ne!(
        bits(blend_rotation(one, v, at_ref, 0.25, true)),
        bits(blend_normal(one, v, 0.25, true))
    );
}
