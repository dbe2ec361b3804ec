// The mixer, a pose stage of its own: each character's local pose per node
// and morph weights per mesh, blended from its actions (sampled rows of the
// sampler's output) by the rules of three.js's AnimationMixer, with masks
// and override actions added. Needs prelude.wgsl, quat.wgsl and pose.wgsl
// (whose bindings, node and channel readers it uses; the host prepends
// them). CPU twin: src/cpu/mix.rs. The contract (docs/USAGE.md,
// "Blending"), for node n, property p, and each action a whose clip has a
// track for (n, p), with w = weight(a) * mask(a)(n):
//   1. normal actions with w > 0, in order: the first sets acc = v, W = w;
//      each next: W += w, acc = mix(acc, v, w / W);
//   2. W < 1: acc = mix(acc, rest, 1 - W); no normal action: acc = rest;
//   3. override actions with w > 0, in order: acc = v when w >= 1, else
//      acc = mix(acc, v, w);
//   4. additive actions with w > 0, in order: delta = conj(r) * v (rotation)
//      or v - r, r the action's clip at its reference time; add starts at
//      the identity; rotation: add = mix(add, add * delta, w), others:
//      add += w * delta;
//   5. any additive: rotation acc = acc * add, others acc += add.
// Rules 1 and 4 run in one pass over the actions (the additive layer does
// not depend on acc); rule 3 needs rule 2's result, so override actions
// take a second pass from the first of them: a loop of no turn for a
// character without one (a branch around it would cost the CPU adapters,
// which run both sides, as much as the pass itself).
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

// The factor of `mask` for node `n`: 1 without a mask (or for NO_NODE).
fn mask_factor(mask: u32, n: u32) -> f32 {
    if (mask == NO_MASK || n >= params.node_count) {
        return 1.0;
    }
    return masks[mask * params.node_count + n];
}

// mix(a, b, t) for scalars: a * (1 - t) + b * t.
fn scalar_mix(a: f32, b: f32, t: f32) -> f32 {
    return a * (1.0 - t) + b * t;
}

// One property's blend in progress: the normal actions' accumulator and
// total weight (rules 1-3) and the additive layer (rule 4).
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

// Rule 4 for a vector property: v sampled, r at the reference time.
fn add_vec(b: Blend, v: vec4<f32>, r: vec4<f32>, w: f32) -> Blend {
    var out = b;
    out.add = b.add + w * (v - r);
    out.added = true;
    return out;
}

// A rotation's rule 1 or 4 for an action of either kind, with one quat_mix:
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

// Rule 4 for a scalar: v sampled, r at the reference time (a discrete
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

// Rule 2 for a scalar with rest value `rest`: afterwards `acc` is the
// value the normal actions and the rest give (`total` as it was).
fn scalar_rest(b: Scalar, rest: f32, discrete: bool) -> Scalar {
    var out = b;
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
    out.acc = value;
    return out;
}

// Rule 3 for a scalar (after scalar_rest): an override action's value v
// at effective weight w replaces acc at w >= 1 (a discrete value at
// w >= 0.5), else is mixed in by w.
fn scalar_override(b: Scalar, v: f32, w: f32, discrete: bool) -> Scalar {
    var out = b;
    if (discrete) {
        out.acc = select(b.acc, v, w >= 0.5);
    } else {
        out.acc = select(scalar_mix(b.acc, v, w), v, w >= 1.0);
    }
    return out;
}

// Rule 5 for a scalar (after scalar_rest and any override).
fn scalar_finish(b: Scalar, discrete: bool) -> f32 {
    var value = b.acc;
    if (b.added) {
        value = select(value + b.add, b.add, discrete);
    }
    return value;
}

// Rule 2 with rest value `rest`: afterwards `acc` is the value the normal
// actions and the rest give (rotations mixed with quat_mix, vectors with
// vec_mix; `total` as it was).
fn blend_rest(b: Blend, rest: vec4<f32>, rotation: bool) -> Blend {
    var out = b;
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
    out.acc = acc;
    return out;
}

// Rule 3 (after blend_rest): an override action's value v at effective
// weight w replaces acc at w >= 1, bit for bit, else is mixed in by w.
fn blend_override(b: Blend, v: vec4<f32>, w: f32, rotation: bool) -> Blend {
    var out = b;
    var mixed = vec_mix(b.acc, v, w);
    if (rotation) {
        mixed = quat_mix(b.acc, v, w);
    }
    out.acc = select(mixed, v, w >= 1.0);
    return out;
}

// Rule 5 (after blend_rest and any override): rotations get the additive
// layer multiplied on the right, then are normalized (as the pose stage's);
// vectors get the layer added.
fn blend_finish(b: Blend, rotation: bool) -> vec4<f32> {
    var acc = b.acc;
    if (!rotation) {
        return select(acc, acc + b.add, b.added);
    }
    if (b.added) {
        acc = quat_mul(acc, b.add);
    }
    return quat_normalize(acc);
}

// A node's three properties in blending.
struct NodeBlend {
    t: Blend,
    r: Blend,
    s: Blend,
}

// Rule 3 for node n: the override actions of the character's `range`
// (first action, count) from its action `first` on, in order, over what
// rules 1-2 left in `b`.
fn override_node(range: vec2<u32>, first: u32, n: u32, b: NodeBlend) -> NodeBlend {
    var out = b;
    for (var k = first; k < min(range.y, MAX_ACTIONS); k++) {
        let a = mix_actions[range.x + k];
        let w = a.weight * mask_factor(a.mask, n);
        if (a.blend != BLEND_OVERRIDE || !(w > 0.0) || a.clip >= params.clip_count) {
            continue;
        }
        let ch = channel_at(a.clip * params.node_count + n);
        let base = a.row * params.output_stride;
        if (ANIMATED_TRANSLATIONS && ch.x >= 0) {
            out.t = blend_override(out.t, vec4<f32>(sample_vec3(base + u32(ch.x)), 0.0), w, false);
        }
        if (ch.y >= 0) {
            out.r = blend_override(out.r, sample_rotation(base + u32(ch.y)), w, true);
        }
        if (ANIMATED_SCALES && ch.z >= 0) {
            out.s = blend_override(out.s, vec4<f32>(sample_vec3(base + u32(ch.z)), 0.0), w, false);
        }
    }
    return out;
}

// The blended local pose of node n for character c.
fn mixed_pose(c: u32, n: u32) -> LocalPose {
    let node = node_at(n);
    let range = characters[c];
    var t = blend_start(vec4<f32>(0.0));
    var r = blend_start(vec4<f32>(0.0, 0.0, 0.0, 1.0));
    var s = blend_start(vec4<f32>(0.0));
    // The first override action (none: past the last action).
    var first_override = MAX_ACTIONS;
    for (var k = 0u; k < min(range.y, MAX_ACTIONS); k++) {
        let a = mix_actions[range.x + k];
        let w = a.weight * mask_factor(a.mask, n);
        if (a.blend == BLEND_OVERRIDE) {
            first_override = min(first_override, k);
        }
        if (a.blend == BLEND_OVERRIDE || !(w > 0.0) || a.clip >= params.clip_count) {
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
    var b = NodeBlend(
        blend_rest(t, vec4<f32>(node.translation.xyz, 0.0), false),
        blend_rest(r, node.rotation, true),
        blend_rest(s, vec4<f32>(node.scale.xyz, 0.0), false),
    );
    b = override_node(range, first_override, n, b);
    return LocalPose(
        vec4<f32>(blend_finish(b.t, false).xyz, 0.0),
        blend_finish(b.r, true),
        vec4<f32>(blend_finish(b.s, false).xyz, 0.0),
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
        var first_override = count;
        for (var j = 0u; j < count; j++) {
            let a = mix_actions[range.x + j];
            let w = a.weight * mask_factor(a.mask, mesh.node);
            if (a.blend == BLEND_OVERRIDE) {
                first_override = min(first_override, j);
            }
            if (a.blend == BLEND_OVERRIDE || !(w > 0.0) || a.clip >= params.clip_count) {
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
        b = scalar_rest(b, default_weights[mesh.defaults_offset + k], false);
        for (var j = first_override; j < count; j++) {
            let a = mix_actions[range.x + j];
            let w = a.weight * mask_factor(a.mask, mesh.node);
            if (a.blend != BLEND_OVERRIDE || !(w > 0.0) || a.clip >= params.clip_count) {
                continue;
            }
            let src = morph_channels[a.clip * params.mesh_count + m];
            if (src >= 0) {
                b = scalar_override(b, sample_at(a.row * params.output_stride + u32(src) + k), w, false);
            }
        }
        morph_weights[out + k] = scalar_finish(b, false);
    }
}

// Pointer target k's slot offset in action a's row, -1 where a's clip does
// not animate it or a does not blend (a weight that is not > 0, a clip out
// of range).
fn pointer_source(a: MixAction, k: u32) -> i32 {
    if (!(a.weight > 0.0) || a.clip >= params.clip_count) {
        return -1;
    }
    return pointer_channels[a.clip * params.pointer_count + k];
}

// Writes a rotation pointer target k's blended value for character c at
// `out` in `properties` (rules 1-5, quat_mix).
fn write_mixed_rotation_property(range: vec2<u32>, k: u32, out: u32) {
    let tgt = pointer_targets[k];
    let count = min(range.y, MAX_ACTIONS);
    var b = blend_start(vec4<f32>(0.0, 0.0, 0.0, 1.0));
    var first_override = count;
    for (var j = 0u; j < count; j++) {
        let a = mix_actions[range.x + j];
        if (a.blend == BLEND_OVERRIDE) {
            first_override = min(first_override, j);
        }
        let src = pointer_source(a, k);
        if (a.blend == BLEND_OVERRIDE || src < 0) {
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
    b = blend_rest(b, rest, true);
    for (var j = first_override; j < count; j++) {
        let a = mix_actions[range.x + j];
        let src = pointer_source(a, k);
        if (a.blend == BLEND_OVERRIDE && src >= 0) {
            b = blend_override(b, sample_vec4(a.row * params.output_stride + u32(src)), a.weight, true);
        }
    }
    let q = blend_finish(b, true);
    for (var i = 0u; i < 4u; i++) {
        properties[out + i] = q[i];
    }
}

// Writes pointer target k's blended value for character c. Vectors and
// rotations follow rules 1-5 (rotations with quat_mix); a discrete value
// (int, bool) is replaced by an action's when its mix factor (w / W in rule
// 1, 1 - W for the rest in rule 2, w for an override or additive action)
// is >= 0.5.
fn write_mixed_property(c: u32, k: u32) {
    let tgt = pointer_targets[k];
    let out = c * params.property_stride + tgt.w;
    let range = characters[c];
    let count = min(range.y, MAX_ACTIONS);
    if (tgt.z == KIND_ROTATION) {
        write_mixed_rotation_property(range, k, out);
        return;
    }
    let discrete = tgt.z == KIND_DISCRETE;
    for (var i = 0u; i < tgt.y; i++) {
        var b = Scalar(0.0, 0.0, 0.0, false);
        var first_override = count;
        for (var j = 0u; j < count; j++) {
            let a = mix_actions[range.x + j];
            if (a.blend == BLEND_OVERRIDE) {
                first_override = min(first_override, j);
            }
            let src = pointer_source(a, k);
            if (a.blend == BLEND_OVERRIDE || src < 0) {
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
        b = scalar_rest(b, pointer_rest[tgt.w + i], discrete);
        for (var j = first_override; j < count; j++) {
            let a = mix_actions[range.x + j];
            let src = pointer_source(a, k);
            if (a.blend == BLEND_OVERRIDE && src >= 0) {
                let v = sample_at(a.row * params.output_stride + u32(src) + i);
                b = scalar_override(b, v, a.weight, discrete);
            }
        }
        properties[out + i] = scalar_finish(b, discrete);
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
