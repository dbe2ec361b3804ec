// The mixer, a pose stage of its own: each character's local pose per node
// and morph weights per mesh, blended from its actions (sampled rows of the
// sampler's output) by the rules of three.js's AnimationMixer, with masks.
// Needs prelude.wgsl, quat.wgsl and pose.wgsl (whose bindings, node and
// channel readers it uses; the host prepends them). CPU twin:
// src/cpu/mix.rs. The contract (docs/USAGE.md, "Blending"), for node n,
// property p, and each action a whose clip has a track for (n, p), with
// w = weight(a) * mask(a)(n):
//   1. normal actions with w > 0, in order: the first sets acc = v, W = w;
//      each next: W += w, acc = mix(acc, v, w / W);
//   2. W < 1: acc = mix(acc, rest, 1 - W); no normal action: acc = rest;
//   3. additive actions with w > 0, in order: delta = conj(r) * v (rotation)
//      or v - r, r the action's clip at its reference time; add starts at
//      the identity; rotation: add = mix(add, add * delta, w), others:
//      add += w * delta;
//   4. any additive: rotation acc = acc * add, others acc += add.
//
// mix_main: one invocation per (character, node): mixed_pose() into
//   `locals`, which hierarchy_main (skin.wgsl) reads.
// mix_morph_main: one invocation per (character, mesh): the mesh's
//   weights, each blended like a vector component.
// mix_props_main: one invocation per (character, pointer target): the
//   target's blended value into `properties` (vectors like vectors;
//   int and bool targets, KIND_DISCRETE, take the incoming value when its
//   mix factor is at least 0.5, three.js's rule for non-numeric values).
//   Masks do not apply: a pointer target is not a node.
//
// A character here is what the other stages call an instance: `params`
// counts characters, and `locals`, `morph_weights` and everything after
// them are indexed by character. The sampler's rows are actions.

@group(0) @binding(18) var<storage, read> mix_actions: array<MixAction>;
// Per character: its first action in `mix_actions` and its action count.
@group(0) @binding(19) var<storage, read> characters: array<vec2<u32>>;
// Mask k's factor for node n at k * node_count + n.
@group(0) @binding(20) var<storage, read> masks: array<f32>;

// The library's pointer targets (KHR_animation_pointer), per (clip,
// target): the slot offset where the clip animates the target, -1 where it
// does not.
@group(0) @binding(21) var<storage, read> pointer_channels: array<i32>;
// Per target: slot offset, width, KIND_*, offset in a character's block of
// `properties` (and in `pointer_rest`).
@group(0) @binding(22) var<storage, read> pointer_targets: array<vec4<u32>>;
@group(0) @binding(23) var<storage, read> pointer_rest: array<f32>;
// Character c's blended pointer properties at c * property_stride.
@group(0) @binding(24) var<storage, read_write> properties: array<f32>;

const PI: f32 = 3.14159265;

// The factor of `mask` for node `n`: 1 without a mask (or for NO_NODE).
fn mask_factor(mask: u32, n: u32) -> f32 {
    if (mask == NO_MASK || n >= params.node_count) {
        return 1.0;
    }
    return masks[mask * params.node_count + n];
}

// mix(a, b, t) for vectors: a * (1 - t) + b * t per component.
fn vec_mix(a: vec4<f32>, b: vec4<f32>, t: f32) -> vec4<f32> {
    return a * (1.0 - t) + b * t;
}

fn scalar_mix(a: f32, b: f32, t: f32) -> f32 {
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

// One property's blend in progress: the normal actions' accumulator and
// total weight (rules 1-2) and the additive layer (rule 3).
struct Blend {
    acc: vec4<f32>,
    total: f32,
    add: vec4<f32>,
    added: bool,
}

fn blend_start(identity: vec4<f32>) -> Blend {
    return Blend(vec4<f32>(0.0), 0.0, identity, false);
}

// Rule 1 for a vector property: a normal action's value v at effective
// weight w, mixed with vec_mix (rotations: blend_rotation).
fn blend_normal(b: Blend, v: vec4<f32>, w: f32) -> Blend {
    var out = b;
    if (b.total == 0.0) {
        out.acc = v;
        out.total = w;
    } else {
        out.total = b.total + w;
        out.acc = vec_mix(b.acc, v, w / out.total);
    }
    return out;
}

// Rule 3 for a vector property: v sampled, r at the reference time.
fn add_vec(b: Blend, v: vec4<f32>, r: vec4<f32>, w: f32) -> Blend {
    var out = b;
    out.add = b.add + w * (v - r);
    out.added = true;
    return out;
}

// A rotation's rule 1 or 3 for an action of either kind, with one quat_mix:
// for a normal action, acc = v (the first) or quat_mix(acc, v, w / W); for
// an additive one (r: the action at its reference time), add =
// quat_mix(add, add * conj(r) * v, w). (The CPU twin's blend_normal and
// add_quat state the two rules on their own; a test checks this against
// them bit for bit.)
// The slerp's ends and factor are selected and it runs once per action,
// whatever its kind, where calling the two rules from the two blocks of a
// branch would write two slerps (plan/cpu_adapter.rs: on the CPU
// adapters a branch costs both of its sides).
fn blend_rotation(b: Blend, v: vec4<f32>, r: vec4<f32>, w: f32, additive: bool) -> Blend {
    var out = b;
    let total = b.total + w;
    let start = select(b.acc, b.add, additive);
    let end = select(v, quat_mul(b.add, quat_mul(quat_conj(r), v)), additive);
    let mixed = quat_mix(start, end, select(w / total, w, additive));
    if (additive) {
        out.add = mixed;
        out.added = true;
    } else if (b.total == 0.0) {
        out.acc = v;
        out.total = w;
    } else {
        out.acc = mixed;
        out.total = total;
    }
    return out;
}

// One scalar's blend in progress: a morph weight, or one component of a
// pointer target. A `discrete` value (int, bool) is replaced, not mixed:
// by an action whose mix factor is at least 0.5 (three.js's rule for
// values that cannot be interpolated).
struct Scalar {
    acc: f32,
    total: f32,
    add: f32,
    added: bool,
}

// Rule 1 for a scalar.
fn scalar_normal(b: Scalar, v: f32, w: f32, discrete: bool) -> Scalar {
    var out = b;
    if (b.total == 0.0) {
        out.acc = v;
        out.total = w;
    } else {
        out.total = b.total + w;
        let t = w / out.total;
        if (discrete) {
            out.acc = select(b.acc, v, t >= 0.5);
        } else {
            out.acc = scalar_mix(b.acc, v, t);
        }
    }
    return out;
}

// Rule 3 for a scalar: v sampled, r at the reference time (a discrete
// value replaces the layer at w >= 0.5 instead).
fn scalar_additive(b: Scalar, v: f32, r: f32, w: f32, discrete: bool) -> Scalar {
    var out = b;
    if (discrete) {
        if (w >= 0.5) {
            out.add = v;
            out.added = true;
        }
    } else {
        out.add = b.add + w * (v - r);
        out.added = true;
    }
    return out;
}

// Rules 2 and 4 for a scalar with rest value `rest`.
fn scalar_finish(b: Scalar, rest: f32, discrete: bool) -> f32 {
    var value = rest;
    if (b.total > 0.0) {
        value = b.acc;
        if (b.total < 1.0) {
            if (discrete) {
                value = select(value, rest, 1.0 - b.total >= 0.5);
            } else {
                value = scalar_mix(value, rest, 1.0 - b.total);
            }
        }
    }
    if (b.added) {
        value = select(value + b.add, b.add, discrete);
    }
    return value;
}

// Rules 2 and 4 with rest value `rest`: rotations mixed with quat_mix,
// the additive layer multiplied on the right, then normalized (as the pose
// stage's); vectors mixed with vec_mix, the layer added.
fn blend_finish(b: Blend, rest: vec4<f32>, rotation: bool) -> vec4<f32> {
    var acc = rest;
    if (b.total > 0.0) {
        acc = b.acc;
        if (b.total < 1.0) {
            if (rotation) {
                acc = quat_mix(acc, rest, 1.0 - b.total);
            } else {
                acc = vec_mix(acc, rest, 1.0 - b.total);
            }
        }
    }
    if (!rotation) {
        return select(acc, acc + b.add, b.added);
    }
    if (b.added) {
        acc = quat_mul(acc, b.add);
    }
    return quat_normalize(acc);
}

// The blended local pose of node n for character c.
fn mixed_pose(c: u32, n: u32) -> LocalPose {
    let node = node_at(n);
    let range = characters[c];
    var t = blend_start(vec4<f32>(0.0));
    var r = blend_start(vec4<f32>(0.0, 0.0, 0.0, 1.0));
    var s = blend_start(vec4<f32>(0.0));
    for (var k = 0u; k < min(range.y, MAX_ACTIONS); k++) {
        let a = mix_actions[range.x + k];
        let w = a.weight * mask_factor(a.mask, n);
        if (!(w > 0.0) || a.clip >= params.clip_count) {
            continue;
        }
        let ch = channel_at(a.clip * params.node_count + n);
        let base = a.row * params.output_stride;
        // The action's values, read once for either kind (the fallback
        // adapters run both blocks below, and every read in each).
        var vt = vec4<f32>(0.0);
        var vr = vec4<f32>(0.0);
        var vs = vec4<f32>(0.0);
        if (ANIMATED_TRANSLATIONS && ch.x >= 0) {
            vt = vec4<f32>(sample_vec3(base + u32(ch.x)), 0.0);
        }
        if (ch.y >= 0) {
            vr = sample_rotation(base + u32(ch.y));
        }
        if (ANIMATED_SCALES && ch.z >= 0) {
            vs = vec4<f32>(sample_vec3(base + u32(ch.z)), 0.0);
        }
        // An additive action's values at its reference time (the
        // rotation's for blend_rotation, which mixes either kind once).
        let additive = a.reference_row != NO_ROW;
        var ref_r = vec4<f32>(0.0, 0.0, 0.0, 1.0);
        if (additive) {
            let ref_base = a.reference_row * params.output_stride;
            if (ANIMATED_TRANSLATIONS && ch.x >= 0) {
                t = add_vec(t, vt, vec4<f32>(sample_vec3(ref_base + u32(ch.x)), 0.0), w);
            }
            if (ch.y >= 0) {
                ref_r = sample_rotation(ref_base + u32(ch.y));
            }
            if (ANIMATED_SCALES && ch.z >= 0) {
                s = add_vec(s, vs, vec4<f32>(sample_vec3(ref_base + u32(ch.z)), 0.0), w);
            }
        } else {
            if (ANIMATED_TRANSLATIONS && ch.x >= 0) {
                t = blend_normal(t, vt, w);
            }
            if (ANIMATED_SCALES && ch.z >= 0) {
                s = blend_normal(s, vs, w);
            }
        }
        if (ch.y >= 0) {
            r = blend_rotation(r, vr, ref_r, w, additive);
        }
    }
    return LocalPose(
        vec4<f32>(blend_finish(t, vec4<f32>(node.translation.xyz, 0.0), false).xyz, 0.0),
        blend_finish(r, node.rotation, true),
        vec4<f32>(blend_finish(s, vec4<f32>(node.scale.xyz, 0.0), false).xyz, 0.0),
    );
}

// Writes mesh m's blended weights for character c: each weight k is blended
// like one vector component, rest = the mesh's default weight.
fn write_mixed_morph_weights(c: u32, m: u32) {
    let mesh = meshes[m];
    let out = c * params.morph_stride + mesh.weights_offset;
    let range = characters[c];
    let count = min(range.y, MAX_ACTIONS);
    for (var k = 0u; k < mesh.target_count; k++) {
        var b = Scalar(0.0, 0.0, 0.0, false);
        for (var j = 0u; j < count; j++) {
            let a = mix_actions[range.x + j];
            let w = a.weight * mask_factor(a.mask, mesh.node);
            if (!(w > 0.0) || a.clip >= params.clip_count) {
                continue;
            }
            let src = morph_channels[a.clip * params.mesh_count + m];
            if (src < 0) {
                continue;
            }
            let v = sample_at(a.row * params.output_stride + u32(src) + k);
            if (a.reference_row == NO_ROW) {
                b = scalar_normal(b, v, w, false);
            } else {
                let at_ref = sample_at(a.reference_row * params.output_stride + u32(src) + k);
                b = scalar_additive(b, v, at_ref, w, false);
            }
        }
        morph_weights[out + k] = scalar_finish(b, default_weights[mesh.defaults_offset + k], false);
    }
}

// Writes pointer target k's blended value for character c. Vectors and
// rotations follow rules 1-4 (rotations with quat_mix); a discrete value
// (int, bool) is replaced by an action's when its mix factor (w / W in rule
// 1, 1 - W for the rest in rule 2, w for an additive action) is >= 0.5.
fn write_mixed_property(c: u32, k: u32) {
    let tgt = pointer_targets[k];
    let out = c * params.property_stride + tgt.w;
    let range = characters[c];
    let count = min(range.y, MAX_ACTIONS);
    if (tgt.z == KIND_ROTATION) {
        var b = blend_start(vec4<f32>(0.0, 0.0, 0.0, 1.0));
        for (var j = 0u; j < count; j++) {
            let a = mix_actions[range.x + j];
            if (!(a.weight > 0.0) || a.clip >= params.clip_count) {
                continue;
            }
            let src = pointer_channels[a.clip * params.pointer_count + k];
            if (src < 0) {
                continue;
            }
            let v = sample_vec4(a.row * params.output_stride + u32(src));
            let additive = a.reference_row != NO_ROW;
            var at_ref = vec4<f32>(0.0, 0.0, 0.0, 1.0);
            if (additive) {
                at_ref = sample_vec4(a.reference_row * params.output_stride + u32(src));
            }
            b = blend_rotation(b, v, at_ref, a.weight, additive);
        }
        let rest = vec4<f32>(pointer_rest[tgt.w], pointer_rest[tgt.w + 1u],
                             pointer_rest[tgt.w + 2u], pointer_rest[tgt.w + 3u]);
        let q = blend_finish(b, rest, true);
        for (var i = 0u; i < 4u; i++) {
            properties[out + i] = q[i];
        }
        return;
    }
    let discrete = tgt.z == KIND_DISCRETE;
    for (var i = 0u; i < tgt.y; i++) {
        var b = Scalar(0.0, 0.0, 0.0, false);
        for (var j = 0u; j < count; j++) {
            let a = mix_actions[range.x + j];
            if (!(a.weight > 0.0) || a.clip >= params.clip_count) {
                continue;
            }
            let src = pointer_channels[a.clip * params.pointer_count + k];
            if (src < 0) {
                continue;
            }
            let v = sample_at(a.row * params.output_stride + u32(src) + i);
            if (a.reference_row == NO_ROW) {
                b = scalar_normal(b, v, a.weight, discrete);
            } else {
                let at_ref = sample_at(a.reference_row * params.output_stride + u32(src) + i);
                b = scalar_additive(b, v, at_ref, a.weight, discrete);
            }
        }
        properties[out + i] = scalar_finish(b, pointer_rest[tgt.w + i], discrete);
    }
}

@compute @workgroup_size(SKIN_WORKGROUP_SIZE)
fn mix_props_main(@builtin(global_invocation_id) gid: vec3<u32>,
                  @builtin(num_workgroups) groups: vec3<u32>) {
    let index = flat_index(gid, groups);
    if (params.pointer_count == 0u || index >= params.instance_count * params.pointer_count) {
        return;
    }
    write_mixed_property(index / POINTER_COUNT, index % POINTER_COUNT);
}

@compute @workgroup_size(SKIN_WORKGROUP_SIZE)
fn mix_main(@builtin(global_invocation_id) gid: vec3<u32>,
            @builtin(num_workgroups) groups: vec3<u32>) {
    let index = flat_index(gid, groups);
    if (params.node_count == 0u || index >= params.instance_count * params.node_count) {
        return;
    }
    locals[index] = mixed_pose(index / NODE_COUNT, index % NODE_COUNT);
}

@compute @workgroup_size(SKIN_WORKGROUP_SIZE)
fn mix_morph_main(@builtin(global_invocation_id) gid: vec3<u32>,
                  @builtin(num_workgroups) groups: vec3<u32>) {
    let index = flat_index(gid, groups);
    if (params.mesh_count == 0u || index >= params.instance_count * params.mesh_count) {
        return;
    }
    write_mixed_morph_weights(index / MESH_COUNT, index % MESH_COUNT);
}
