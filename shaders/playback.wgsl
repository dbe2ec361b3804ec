// The playback pass: every character's actions (clip, playhead, speed,
// wrap, repetitions, fade, layers) live in storage buffers; each frame a
// command pass applies the frame's commands (playback_commands_main, one
// invocation per command, the first of each character's run applying its
// commands in order), then playback_main (one invocation per character)
// steps every action by the frame's time and writes what the sampler and
// the mixer read: the sampler's rows (clip, clip time), the mixer's
// action records and the character's range. The host writes only the
// commands. Twin: src/cpu/playback/ (the `Player` runs it too), function
// by function: the same integer arithmetic (here on pairs of u32 words,
// there on u64/i128) and the same f32 operations.

struct FrameCommands {
    head: PlaybackFrame,
    commands: array<PlaybackCommand>,
}

@group(0) @binding(0) var<uniform> playback_params: PlaybackParams;
@group(0) @binding(1) var<storage, read> frame: FrameCommands;
@group(0) @binding(2) var<storage, read> playback_clips: array<PlaybackClip>;
@group(0) @binding(3) var<storage, read_write> characters_state: array<PlaybackCharacter>;
@group(0) @binding(4) var<storage, read_write> slots: array<ActionSlot>;
@group(0) @binding(5) var<storage, read_write> kept: array<u32>;
@group(0) @binding(6) var<storage, read_write> rows: array<Instance>;
@group(0) @binding(7) var<storage, read_write> mix_actions_out: array<MixAction>;
@group(0) @binding(8) var<storage, read_write> ranges: array<vec2<u32>>;
@group(0) @binding(9) var<storage, read> root_tracks: array<RootTrack>;
@group(0) @binding(10) var<storage, read> root_keys: array<f32>;
@group(0) @binding(11) var<storage, read> markers: array<vec2<u32>>;
// Per character of the chunk: its root motion of the frame (translation,
// rotation), in the model's space.
@group(0) @binding(12) var<storage, read_write> motion: array<vec4<f32>>;
@group(0) @binding(13) var<storage, read_write> events: EventsOut;
// Per character of the chunk: its placement (translation, rotation).
@group(0) @binding(14) var<storage, read_write> placements: array<vec4<f32>>;

// The frame's markers crossed, every chunk's: a character reserves its
// entries at once (model slot, clip, marker, weight bits), in playhead
// order; what does not fit is counted in `dropped`.
struct EventsOut {
    count: atomic<u32>,
    dropped: atomic<u32>,
    capacity: u32,
    _pad0: u32,
    entries: array<vec4<u32>>,
}

// ------------------------------------------------ 64-bit unsigned words
// A u64 is a vec2<u32>: x the low word, y the high word.

const U64_MAX: vec2<u32> = vec2<u32>(0xffffffffu, 0xffffffffu);
const I64_MAX: vec2<u32> = vec2<u32>(0xffffffffu, 0x7fffffffu);
const ONE: vec2<u32> = vec2<u32>(1u, 0u);
const ZERO: vec2<u32> = vec2<u32>(0u, 0u);

fn u64_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}

fn u64_sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));
}

fn u64_lt(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.y < b.y || (a.y == b.y && a.x < b.x);
}

fn u64_le(a: vec2<u32>, b: vec2<u32>) -> bool {
    return !u64_lt(b, a);
}

fn u64_zero(a: vec2<u32>) -> bool {
    return a.x == 0u && a.y == 0u;
}

fn u64_min(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    return select(b, a, u64_lt(a, b));
}

fn u64_add_sat(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let s = u64_add(a, b);
    return select(s, U64_MAX, u64_lt(s, a));
}

fn u64_sub_sat(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    return select(u64_sub(a, b), ZERO, u64_lt(a, b));
}

// a << s, s < 64.
fn u64_shl(a: vec2<u32>, s: u32) -> vec2<u32> {
    if (s == 0u) {
        return a;
    }
    if (s >= 32u) {
        return vec2<u32>(0u, a.x << (s - 32u));
    }
    return vec2<u32>(a.x << s, (a.y << s) | (a.x >> (32u - s)));
}

// a >> s, s < 64.
fn u64_shr(a: vec2<u32>, s: u32) -> vec2<u32> {
    if (s == 0u) {
        return a;
    }
    if (s >= 32u) {
        return vec2<u32>(a.y >> (s - 32u), 0u);
    }
    return vec2<u32>((a.x >> s) | (a.y << (32u - s)), a.y >> s);
}

struct DivMod {
    q: vec2<u32>,
    r: vec2<u32>,
}

// n / d and n % d (d > 0, below 2^63): one or two subtractions for the
// usual quotients of 0 and 1, else bit by bit.
fn u64_divmod(n: vec2<u32>, d: vec2<u32>) -> DivMod {
    if (u64_lt(n, d)) {
        return DivMod(ZERO, n);
    }
    let n1 = u64_sub(n, d);
    if (u64_lt(n1, d)) {
        return DivMod(ONE, n1);
    }
    var q = ZERO;
    var r = ZERO;
    for (var i = 0u; i < 64u; i++) {
        let bit = 63u - i;
        let b = select((n.x >> bit) & 1u, (n.y >> (bit - 32u)) & 1u, bit >= 32u);
        r = vec2<u32>((r.x << 1u) | b, (r.y << 1u) | (r.x >> 31u));
        if (u64_le(d, r)) {
            r = u64_sub(r, d);
            q = select(vec2<u32>(q.x | (1u << bit), q.y), vec2<u32>(q.x, q.y | (1u << (bit - 32u))), bit >= 32u);
        }
    }
    return DivMod(q, r);
}

// a * b as 64 bits.
fn mul_wide(a: u32, b: u32) -> vec2<u32> {
    let al = a & 0xffffu;
    let ah = a >> 16u;
    let bl = b & 0xffffu;
    let bh = b >> 16u;
    let ll = al * bl;
    let lh = al * bh;
    let hl = ah * bl;
    let hh = ah * bh;
    let mid = lh + hl;
    let mid_carry = select(0u, 0x10000u, mid < lh);
    let lo = ll + (mid << 16u);
    let lo_carry = select(0u, 1u, lo < ll);
    return vec2<u32>(lo, hh + (mid >> 16u) + mid_carry + lo_carry);
}

// a * b as 128 bits (x the lowest word).
fn u64_mul_wide(a: vec2<u32>, b: vec2<u32>) -> vec4<u32> {
    let p00 = mul_wide(a.x, b.x);
    let p01 = mul_wide(a.x, b.y);
    let p10 = mul_wide(a.y, b.x);
    let p11 = mul_wide(a.y, b.y);
    var w1 = p00.y + p01.x;
    var c1 = select(0u, 1u, w1 < p01.x);
    w1 += p10.x;
    c1 += select(0u, 1u, w1 < p10.x);
    var w2 = p01.y + p10.y;
    var c2 = select(0u, 1u, w2 < p10.y);
    w2 += p11.x;
    c2 += select(0u, 1u, w2 < p11.x);
    w2 += c1;
    c2 += select(0u, 1u, w2 < c1);
    return vec4<u32>(p00.x, w1, w2, p11.y + c2);
}

// The low 64 bits of a * b.
fn u64_mul(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    return u64_mul_wide(a, b).xy;
}

// v + 2^bit (bit < 128) and v >> s (0 < s < 128), 128 bits.
fn u128_add_pow2(v: vec4<u32>, bit: u32) -> vec4<u32> {
    var w = array<u32, 4>(v.x, v.y, v.z, v.w);
    var carry = 1u << (bit % 32u);
    for (var i = bit / 32u; i < 4u; i++) {
        let s = w[i] + carry;
        carry = select(0u, 1u, s < w[i]);
        w[i] = s;
    }
    return vec4<u32>(w[0], w[1], w[2], w[3]);
}

fn u128_shr(v: vec4<u32>, s: u32) -> vec4<u32> {
    let w = array<u32, 4>(v.x, v.y, v.z, v.w);
    var out = array<u32, 4>(0u, 0u, 0u, 0u);
    let words = s / 32u;
    let bits = s % 32u;
    for (var i = 0u; i + words < 4u; i++) {
        var x = w[i + words] >> bits;
        if (bits > 0u && i + words + 1u < 4u) {
            x = x | (w[i + words + 1u] << (32u - bits));
        }
        out[i] = x;
    }
    return vec4<u32>(out[0], out[1], out[2], out[3]);
}

// The nearest f32 of a u64 (halves to even), as Rust's `as f32`.
fn u64_to_f32(v: vec2<u32>) -> f32 {
    if (v.y == 0u && v.x < 0x1000000u) {
        return f32(v.x);
    }
    let top = select(firstLeadingBit(v.x), 32u + firstLeadingBit(v.y), v.y != 0u);
    let shift = top - 23u;
    var m = u64_shr(v, shift).x;
    let rest = u64_sub(v, u64_shl(vec2<u32>(m, 0u), shift));
    let half = u64_shl(ONE, shift - 1u);
    if (u64_lt(half, rest) || (all(rest == half) && (m & 1u) == 1u)) {
        m += 1u;
    }
    return ldexp(f32(m), i32(shift));
}

// A signed 64-bit count as a sign and a magnitude (no negative zero).
struct Signed {
    neg: bool,
    mag: vec2<u32>,
}

// ticks * speed rounded to a whole tick (halves away from zero),
// saturated to 2^63 - 1 in magnitude, the speed an f64's bits: the
// product of the magnitude and the speed's 53-bit mantissa, shifted by
// its exponent.
fn scale_ticks(t: Signed, speed: vec2<u32>) -> Signed {
    // A speed of 1 (the usual one) leaves the ticks as they are.
    if (speed.x == 0u && speed.y == 0x3ff00000u) {
        return t;
    }
    let negative_speed = (speed.y >> 31u) != 0u;
    let exponent = (speed.y >> 20u) & 0x7ffu;
    var mantissa = vec2<u32>(speed.x, speed.y & 0xfffffu);
    var shift = -1074;
    if (exponent != 0u) {
        mantissa.y = mantissa.y | 0x100000u;
        shift = i32(exponent) - 1075;
    }
    let p = u64_mul_wide(t.mag, mantissa);
    var m = ZERO;
    if (all(p == vec4<u32>(0u))) {
        m = ZERO;
    } else if (shift >= 0) {
        let s = u32(shift);
        if (s > 63u || p.z != 0u || p.w != 0u || u64_lt(u64_shr(I64_MAX, s), p.xy)) {
            m = I64_MAX;
        } else {
            m = u64_shl(p.xy, s);
        }
    } else {
        let r = u32(-shift);
        if (r < 128u) {
            let v = u128_shr(u128_add_pow2(p, r - 1u), r);
            m = select(v.xy, I64_MAX, v.z != 0u || v.w != 0u || v.y > 0x7fffffffu);
        }
    }
    return Signed(negative_speed != t.neg && !u64_zero(m), m);
}

// A clip time in ticks as the sampler takes it: whole seconds and the
// ticks left over, each rounded to f32, the ticks scaled by seconds per
// tick in f32, then added.
fn ticks_to_f32(t: vec2<u32>) -> f32 {
    let qr = seconds_of(t);
    return u64_to_f32(qr.q) + u64_to_f32(qr.r) * playback_params.tick_seconds;
}

// Whole seconds of t ticks and the ticks left over: its flicks (t >>
// TICK_SHIFT) divided by FLICKS_PER_SECOND, below 2^42 flicks (6,233 s)
// from an f32 estimate of the quotient corrected by whole seconds, beyond
// bit by bit.
fn seconds_of(t: vec2<u32>) -> DivMod {
    let flicks = u64_shr(t, TICK_SHIFT);
    let per = vec2<u32>(FLICKS_PER_SECOND, 0u);
    var qr: DivMod;
    if (flicks.y >= 1024u) {
        qr = u64_divmod(flicks, per);
    } else {
        var q = u32(max(u64_to_f32(flicks) * playback_params.flick_seconds, 0.0));
        var product = mul_wide(q, FLICKS_PER_SECOND);
        while (u64_lt(flicks, product)) {
            q -= 1u;
            product = u64_sub(product, per);
        }
        var r = u64_sub(flicks, product);
        while (u64_le(per, r)) {
            q += 1u;
            r = u64_sub(r, per);
        }
        qr = DivMod(vec2<u32>(q, 0u), r);
    }
    // The ticks left: the flicks left, and the ticks below a flick.
    let low = t.x & ((1u << TICK_SHIFT) - 1u);
    let rest = u64_shl(qr.r, TICK_SHIFT);
    return DivMod(qr.q, vec2<u32>(rest.x | low, rest.y));
}

// ------------------------------------------------------------- the clock

// What one step of a playhead did (Step in the twin, whose `end` is
// `start` moved by `span` backwards or forwards): the clip time before
// and after.
struct Step {
    before: vec2<u32>,
    after: vec2<u32>,
    start: vec2<u32>,
    back: bool,
    span: vec2<u32>,
    wraps: Signed,
    folds: vec2<u32>,
    reached_end: bool,
}

fn slot_time(s: ActionSlot) -> vec2<u32> {
    return vec2<u32>(s.time_lo, s.time_hi);
}

fn set_time(s: ptr<function, ActionSlot>, t: vec2<u32>) {
    (*s).time_lo = t.x;
    (*s).time_hi = t.y;
}

fn set_flag(s: ptr<function, ActionSlot>, f: u32, on: bool) {
    (*s).flags = select((*s).flags & ~f, (*s).flags | f, on);
}

fn clock_phase(s: ActionSlot, d: vec2<u32>) -> vec2<u32> {
    if ((s.flags & SLOT_BACKWARDS) != 0u) {
        return u64_sub(u64_add(d, d), slot_time(s));
    }
    return slot_time(s);
}

// A count of loops (magnitude `q`, negative `neg`) saturated to i64.
fn saturated_wraps(neg: bool, q: vec2<u32>) -> Signed {
    if (neg) {
        return Signed(!u64_zero(q), u64_min(q, vec2<u32>(0u, 0x80000000u)));
    }
    return Signed(false, u64_min(q, I64_MAX));
}

fn clock_step(s: ptr<function, ActionSlot>, delta: Signed, d: vec2<u32>, wrap: u32) -> Step {
    let t0 = slot_time(*s);
    var st = Step(t0, t0, t0, false, ZERO, Signed(false, ZERO), ZERO, false);
    if (u64_zero(d) || u64_zero(delta.mag)) {
        return st;
    }
    st.back = delta.neg;
    st.span = delta.mag;
    if (wrap == WRAP_REPEAT) {
        var to = ZERO;
        var loops = ZERO;
        if (!delta.neg) {
            let qr = u64_divmod(u64_add(t0, delta.mag), d);
            to = qr.r;
            loops = qr.q;
        } else if (u64_le(delta.mag, t0)) {
            let qr = u64_divmod(u64_sub(t0, delta.mag), d);
            to = qr.r;
            loops = qr.q;
        } else {
            let qr = u64_divmod(u64_sub(delta.mag, t0), d);
            to = select(u64_sub(d, qr.r), ZERO, u64_zero(qr.r));
            loops = select(u64_add(qr.q, ONE), qr.q, u64_zero(qr.r));
        }
        let negative = delta.neg && u64_lt(t0, delta.mag);
        set_time(s, to);
        set_flag(s, SLOT_BACKWARDS, false);
        st.after = to;
        st.wraps = saturated_wraps(negative, loops);
        st.folds = st.wraps.mag;
        return st;
    }
    if (wrap == WRAP_PINGPONG) {
        let period = u64_add(d, d);
        let start = clock_phase(*s, d);
        let qr = u64_divmod(delta.mag, period);
        var turns = qr.q;
        var e = ZERO;
        if (!delta.neg) {
            e = u64_add(start, qr.r);
            if (u64_le(period, e)) {
                e = u64_sub(e, period);
                turns = u64_add(turns, ONE);
            }
        } else if (u64_le(qr.r, start)) {
            e = u64_sub(start, qr.r);
        } else {
            e = u64_sub(u64_add(start, period), qr.r);
            turns = u64_add(turns, ONE);
        }
        let fs = select(0u, 1u, u64_le(d, start));
        let fe = select(0u, 1u, u64_le(d, e));
        let twice = u64_add(turns, turns);
        st.folds = select(u64_sub(u64_add(twice, vec2<u32>(fe, 0u)), vec2<u32>(fs, 0u)),
            u64_sub(u64_add(twice, vec2<u32>(fs, 0u)), vec2<u32>(fe, 0u)), delta.neg);
        let backwards = u64_lt(d, e);
        let to = select(e, u64_sub(period, e), backwards);
        set_time(s, to);
        set_flag(s, SLOT_BACKWARDS, backwards);
        st.after = to;
        st.start = start;
        return st;
    }
    var to = ZERO;
    if (!delta.neg) {
        to = u64_min(u64_add(t0, delta.mag), d);
    } else if (u64_lt(delta.mag, t0)) {
        to = u64_sub(t0, delta.mag);
    }
    set_time(s, to);
    set_flag(s, SLOT_BACKWARDS, false);
    st.after = to;
    st.back = u64_lt(to, t0);
    st.span = select(u64_sub(to, t0), u64_sub(t0, to), st.back);
    st.reached_end = (!delta.neg && u64_le(d, to)) || (delta.neg && u64_zero(to));
    return st;
}

fn clock_at(s: ptr<function, ActionSlot>, t: Signed, d: vec2<u32>, wrap: u32) {
    set_time(s, ZERO);
    (*s).passes_lo = 0u;
    (*s).passes_hi = 0u;
    set_flag(s, SLOT_BACKWARDS | SLOT_DONE | SLOT_FREE_FOLD, false);
    set_flag(s, SLOT_FRESH, true);
    if (!u64_zero(d)) {
        clock_step(s, t, d, wrap);
    }
}

fn clock_start_moving(s: ptr<function, ActionSlot>, delta: Signed, d: vec2<u32>, wrap: u32) {
    if (((*s).flags & SLOT_FRESH) == 0u || u64_zero(delta.mag) || u64_zero(d)) {
        return;
    }
    set_flag(s, SLOT_FRESH, false);
    if (!delta.neg || wrap == WRAP_CLAMP) {
        return;
    }
    set_flag(s, SLOT_FREE_FOLD, true);
    if (wrap == WRAP_PINGPONG) {
        let period = u64_add(d, d);
        var phase = u64_add(clock_phase(*s, d), d);
        if (u64_le(period, phase)) {
            phase = u64_sub(phase, period);
        }
        let backwards = u64_lt(d, phase);
        set_flag(s, SLOT_BACKWARDS, backwards);
        set_time(s, select(phase, u64_sub(period, phase), backwards));
    }
}

fn clock_step_limited(s: ptr<function, ActionSlot>, delta: Signed, d: vec2<u32>, wrap: u32) -> Step {
    let limited = ((*s).flags & SLOT_REPS) != 0u && wrap != WRAP_CLAMP;
    let reps = vec2<u32>((*s).repetitions_lo, (*s).repetitions_hi);
    let passes_now = vec2<u32>((*s).passes_lo, (*s).passes_hi);
    let left = u64_sub_sat(reps, passes_now);
    if (((*s).flags & SLOT_DONE) != 0u || (limited && u64_zero(left))) {
        set_flag(s, SLOT_DONE, true);
        var still = clock_step(s, Signed(false, ZERO), d, wrap);
        still.reached_end = true;
        return still;
    }
    clock_start_moving(s, delta, d, wrap);
    let free_before = ((*s).flags & SLOT_FREE_FOLD) != 0u;
    let passes_before = vec2<u32>((*s).passes_lo, (*s).passes_hi);
    var st = clock_step(s, delta, d, wrap);
    let extra = free_before && !u64_zero(st.folds);
    if (extra) {
        st.folds = u64_sub(st.folds, ONE);
    }
    set_flag(s, SLOT_FREE_FOLD, free_before && !extra);
    if (!limited || u64_lt(st.folds, left)) {
        let passes = u64_add_sat(passes_before, st.folds);
        (*s).passes_lo = passes.x;
        (*s).passes_hi = passes.y;
        return st;
    }
    clock_stop_at_pass_end(s, &st, passes_before, left, extra, d, wrap);
    return st;
}

fn clock_stop_at_pass_end(s: ptr<function, ActionSlot>, st: ptr<function, Step>,
        passes_before: vec2<u32>, left: vec2<u32>, extra: bool, d: vec2<u32>, wrap: u32) {
    let back = (*st).back;
    let k0 = select(0u, 1u, u64_le(d, (*st).start));
    let j = u64_add(left, vec2<u32>(select(0u, 1u, extra), 0u));
    let jd = u64_mul(j, d);
    // m = k0 + j forward, k0 - j + 1 back; `to` is the end of the pass.
    var to = ZERO;
    if (wrap == WRAP_REPEAT) {
        to = select(d, ZERO, back);
    } else {
        let odd = ((k0 + j.x + select(0u, 1u, back)) & 1u) == 1u;
        to = select(ZERO, d, odd);
    }
    if (!back) {
        (*st).span = u64_sub(u64_add(jd, select(ZERO, d, k0 == 1u)), (*st).start);
    } else {
        (*st).span = u64_sub(u64_add(jd, (*st).start), u64_mul(vec2<u32>(k0 + 1u, 0u), d));
    }
    // Repeat's whole loops, m - 1 forward, m back.
    if (wrap == WRAP_REPEAT) {
        if (!back) {
            (*st).wraps = saturated_wraps(false, u64_sub(u64_add(j, vec2<u32>(k0, 0u)), ONE));
        } else if (u64_lt(vec2<u32>(k0, 0u), j)) {
            (*st).wraps = saturated_wraps(true, u64_sub(j, vec2<u32>(k0 + 1u, 0u)));
        } else {
            (*st).wraps = Signed(false, u64_sub(vec2<u32>(k0 + 1u, 0u), j));
        }
    } else {
        (*st).wraps = Signed(false, ZERO);
    }
    (*st).after = to;
    (*st).folds = left;
    (*st).reached_end = true;
    set_time(s, to);
    let passes = u64_add_sat(passes_before, left);
    (*s).passes_lo = passes.x;
    (*s).passes_hi = passes.y;
    set_flag(s, SLOT_BACKWARDS | SLOT_FRESH | SLOT_FREE_FOLD, false);
    set_flag(s, SLOT_DONE, true);
}

// ------------------------------------------------------- stepping a frame

fn clip_ticks(clip: u32) -> vec2<u32> {
    if (clip >= arrayLength(&playback_clips)) {
        return ZERO;
    }
    let c = playback_clips[clip];
    return vec2<u32>(c.ticks_lo, c.ticks_hi);
}

fn fade_weight(s: ActionSlot) -> f32 {
    let elapsed = vec2<u32>(s.fade_elapsed_lo, s.fade_elapsed_hi);
    let duration = vec2<u32>(s.fade_duration_lo, s.fade_duration_hi);
    var f = 1.0;
    if (u64_lt(elapsed, duration)) {
        f = min(u64_to_f32(elapsed) * s.fade_rate, 1.0);
    }
    return s.fade_from + (s.fade_to - s.fade_from) * f;
}

fn fade_ended(s: ActionSlot) -> bool {
    return (s.flags & SLOT_FADING) != 0u
        && u64_le(vec2<u32>(s.fade_duration_lo, s.fade_duration_hi),
            vec2<u32>(s.fade_elapsed_lo, s.fade_elapsed_hi));
}

fn slot_delta(c: PlaybackCharacter, s: ActionSlot, dt: vec2<u32>) -> Signed {
    if ((c.flags & CHARACTER_PAUSED) != 0u) {
        return Signed(false, ZERO);
    }
    let by_character = scale_ticks(Signed(false, dt), vec2<u32>(c.speed_lo, c.speed_hi));
    return scale_ticks(by_character, vec2<u32>(s.speed_lo, s.speed_hi));
}

fn step_slot(c: PlaybackCharacter, s: ptr<function, ActionSlot>, dt: vec2<u32>, d: vec2<u32>) -> Step {
    let moving = (c.flags & CHARACTER_PAUSED) == 0u;
    let delta = slot_delta(c, *s, dt);
    let st = clock_step_limited(s, delta, d, (*s).flags & WRAP_BITS);
    if (moving && ((*s).flags & SLOT_FADING) != 0u) {
        let elapsed = u64_add_sat(vec2<u32>((*s).fade_elapsed_lo, (*s).fade_elapsed_hi), dt);
        (*s).fade_elapsed_lo = elapsed.x;
        (*s).fade_elapsed_hi = elapsed.y;
        (*s).weight = fade_weight(*s);
    }
    let loops = u64_add_sat(vec2<u32>((*s).loops_lo, (*s).loops_hi), st.folds);
    (*s).loops_lo = loops.x;
    (*s).loops_hi = loops.y;
    if (st.reached_end) {
        (*s).flags = (*s).flags | SLOT_FINISHED;
    }
    return st;
}

// After every action stepped: those whose fade ended at 0 go.
fn finish_character(c: u32) {
    let base = c * playback_params.actions;
    let count = min(characters_state[c].count, playback_params.actions);
    var kept_count = 0u;
    for (var k = 0u; k < count; k++) {
        var s = slots[base + k];
        let ended = fade_ended(s);
        if (ended && s.fade_to <= 0.0) {
            continue;
        }
        if (ended) {
            s.flags = s.flags & ~SLOT_FADING;
        }
        slots[base + kept_count] = s;
        kept_count++;
    }
    characters_state[c].count = kept_count;
}

// The sampler's rows, the mixer's records and the range of character c.
fn write_tables(c: u32) {
    let a = playback_params.actions;
    let count = characters_state[c].count;
    for (var k = 0u; k < a; k++) {
        let row = c * a + k;
        let reference_row = playback_params.reference_rows + row;
        if (k >= count) {
            rows[row] = Instance(NO_CLIP, 0.0, 0u, 0u);
            rows[reference_row] = Instance(NO_CLIP, 0.0, 0u, 0u);
            continue;
        }
        let s = slots[row];
        let additive = (s.flags & SLOT_ADDITIVE) != 0u;
        rows[row] = Instance(s.clip, ticks_to_f32(slot_time(s)), 0u, 0u);
        rows[reference_row] = Instance(select(NO_CLIP, s.clip, additive), s.reference_time, 0u, 0u);
        var blend = BLEND_MIX;
        if ((s.flags & SLOT_OVERRIDES) != 0u) {
            blend = BLEND_OVERRIDE;
        } else if (additive) {
            blend = BLEND_ADDITIVE;
        }
        mix_actions_out[row] = MixAction(row, select(NO_ROW, reference_row, additive), s.clip,
            s.mask, s.weight, blend);
    }
    ranges[c] = vec2<u32>(c * a, count);
}

@compute @workgroup_size(PLAYBACK_WORKGROUP_SIZE)
fn playback_main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let c = gid.y * groups.x * PLAYBACK_WORKGROUP_SIZE + gid.x;
    if (c >= playback_params.character_count) {
        return;
    }
    let character = characters_state[c];
    let dt = vec2<u32>(frame.head.dt_lo, frame.head.dt_hi);
    let base = c * playback_params.actions;
    let count = min(character.count, playback_params.actions);
    var blend = Blend(Acc(vec4<f32>(0.0), 0.0), Acc(IDENTITY, 0.0), false);
    var overrides: array<Motion, MAX_ACTIONS>;
    var override_weights: array<vec4<f32>, MAX_ACTIONS>;
    var override_count = 0u;
    var walk: Walk;
    walk.slot = playback_params.first_character + c;
    for (var k = 0u; k < count; k++) {
        var s = slots[base + k];
        let d = clip_ticks(s.clip);
        let st = step_slot(character, &s, dt, d);
        slots[base + k] = s;
        // Additive actions move no root.
        let w = root_weight(s);
        if (playback_params.has_root == 1u && (s.flags & SLOT_ADDITIVE) == 0u && w > 0.0) {
            let m = root_motion(s.clip, st, s.flags & WRAP_BITS, ticks_to_f32(st.after));
            let clip = playback_clips[s.clip];
            let animates = vec2<bool>(clip.root_translation != NO_TRACK, clip.root_rotation != NO_TRACK);
            if ((s.flags & SLOT_OVERRIDES) != 0u) {
                overrides[override_count] = m;
                override_weights[override_count] = vec4<f32>(w, select(0.0, 1.0, animates.x),
                    select(0.0, 1.0, animates.y), 0.0);
                override_count++;
            } else {
                blend = blend_add(blend, m, w, animates);
            }
        }
        push_marker_events(&walk, s, st, d);
    }
    for (var k = 0u; k < override_count; k++) {
        let o = override_weights[k];
        blend = blend_overridden(blend, overrides[k], o.x, vec2<bool>(o.y > 0.0, o.z > 0.0));
    }
    blend = blend_settle(blend);
    motion[2u * c] = vec4<f32>(blend.translation.v.xyz, 0.0);
    motion[2u * c + 1u] = quat_normalize(blend.rotation.v);
    if (walk.dropped > 0u) {
        atomicAdd(&events.dropped, walk.dropped);
    }
    finish_character(c);
    write_tables(c);
}

// ----------------------------------------------------------- root motion
// The root's motion of each action over its step, sampled from the root's
// tracks alone and blended by the mixer's rules (twin: the Player's
// src/playback/root.rs, RootTracks::motion and Blend).

struct Motion {
    t: vec3<f32>,
    r: vec4<f32>,
}

const IDENTITY: vec4<f32> = vec4<f32>(0.0, 0.0, 0.0, 1.0);

// The glTF spline for one component (sample.wgsl's hermite).
fn hermite(v0: f32, b0: f32, v1: f32, a1: f32, t: f32, dt: f32) -> f32 {
    let t2 = t * t;
    let t3 = t2 * t;
    let h00 = 2.0 * t3 - 3.0 * t2 + 1.0;
    let h10 = t3 - 2.0 * t2 + t;
    let h01 = -2.0 * t3 + 3.0 * t2;
    let h11 = t3 - t2;
    return h00 * v0 + dt * h10 * b0 + h01 * v1 + dt * h11 * a1;
}

// Root track `index` (width 3: translation, 4: rotation) at clip time
// `time`, `rest` without a track: the sampler's segment (the largest key
// at or before the time) and interpolation.
fn root_sample(index: u32, time: f32, rest: vec4<f32>, width: u32) -> vec4<f32> {
    if (index == NO_TRACK) {
        return rest;
    }
    let track = root_tracks[index];
    let last = track.key_count - 1u;
    var k = 0u;
    if (track.rate > 0.0) {
        // Evenly spaced keys: from the key the time gives, a step or two
        // to the largest key at or before it (0 before the first).
        let guess = (time - root_keys[track.times_offset]) * track.rate;
        k = u32(clamp(guess, 0.0, f32(last)));
        while (k > 0u && root_keys[track.times_offset + k] > time) {
            k--;
        }
        while (k < last && root_keys[track.times_offset + k + 1u] <= time) {
            k++;
        }
    } else {
        var lo = 0u;
        var hi = track.key_count;
        while (lo < hi) {
            let mid = (lo + hi) / 2u;
            if (root_keys[track.times_offset + mid] <= time) {
                lo = mid + 1u;
            } else {
                hi = mid;
            }
        }
        k = max(lo, 1u) - 1u;
    }
    let t0 = root_keys[track.times_offset + k];
    let t1 = root_keys[track.times_offset + min(k + 1u, last)];
    let dt = t1 - t0;
    let exact = time <= t0 || k >= last;
    let t = select((time - t0) / dt, 0.0, exact);
    let moving = !(exact || track.interpolation == INTERP_STEP);
    let cubic = track.interpolation == INTERP_CUBICSPLINE;
    let e = select(k, 3u * k + 1u, cubic);
    var v = rest;
    var next = rest;
    for (var c = 0u; c < width; c++) {
        v[c] = root_keys[track.values_offset + e * width + c];
        if (moving && cubic) {
            let at = track.values_offset + c;
            v[c] = hermite(v[c], root_keys[at + (e + 1u) * width],
                root_keys[at + (e + 3u) * width], root_keys[at + (e + 2u) * width], t, dt);
        } else if (moving) {
            next[c] = root_keys[track.values_offset + (k + 1u) * width + c];
        }
    }
    if (width == 4u && moving && cubic) {
        return quat_normalize(v);
    }
    if (width == 4u && moving) {
        return quat_slerp(v, next, t);
    }
    if (moving && !cubic) {
        return (1.0 - t) * v + t * next;
    }
    return v;
}

// q to the power n (a u64), by squaring.
fn quat_power(q: vec4<f32>, n: vec2<u32>) -> vec4<f32> {
    var acc = IDENTITY;
    var base = q;
    for (var i = 0u; i < 64u; i++) {
        let word = select(n.x, n.y, i >= 32u);
        if (((word >> (i % 32u)) & 1u) == 1u) {
            acc = quat_normalize(quat_mul(acc, base));
        }
        if (u64_zero(u64_shr(n, min(i + 1u, 63u))) || i == 63u) {
            break;
        }
        base = quat_normalize(quat_mul(base, base));
    }
    return acc;
}

// The root's motion of clip `clip` over step `st` (played with `wrap`),
// in the model's space: the sampled difference, plus on repeat the clip's
// whole-loop motion per loop end crossed (RootTracks::motion).
fn root_motion(clip: u32, st: Step, wrap: u32, after: f32) -> Motion {
    if (u64_zero(st.span)) {
        return Motion(vec3<f32>(0.0), IDENTITY);
    }
    let c = playback_clips[clip];
    let before = ticks_to_f32(st.before);
    let t0 = root_sample(c.root_translation, before, c.root_start_translation, 3u);
    let t1 = root_sample(c.root_translation, after, c.root_start_translation, 3u);
    let r0 = root_sample(c.root_rotation, before, c.root_start_rotation, 4u);
    let r1 = root_sample(c.root_rotation, after, c.root_start_rotation, 4u);
    let ts = c.root_start_translation;
    let te = c.root_end_translation;
    let rs = c.root_start_rotation;
    let re = c.root_end_rotation;
    var k = Signed(false, ZERO);
    if (wrap == WRAP_REPEAT) {
        k = st.wraps;
    }
    let kf = select(u64_to_f32(k.mag), -u64_to_f32(k.mag), k.neg);
    let translation = t1.xyz - t0.xyz + (te.xyz - ts.xyz) * kf;
    var rotation = quat_mul(r1, quat_conj(r0));
    if (!u64_zero(k.mag)) {
        let n = u64_sub(k.mag, ONE);
        if (!k.neg) {
            let whole = quat_mul(re, quat_conj(rs));
            rotation = quat_mul(quat_mul(quat_mul(r1, quat_conj(rs)), quat_power(whole, n)),
                quat_mul(re, quat_conj(r0)));
        } else {
            let whole = quat_mul(rs, quat_conj(re));
            rotation = quat_mul(quat_mul(quat_mul(r1, quat_conj(re)), quat_power(whole, n)),
                quat_mul(rs, quat_conj(r0)));
        }
    }
    let l = playback_params.root_linear;
    let turn = playback_params.root_turn;
    let moved = l[0].xyz * translation.x + l[1].xyz * translation.y + l[2].xyz * translation.z;
    let turned = quat_mul(quat_mul(turn, quat_normalize(rotation)), quat_conj(turn));
    return Motion(moved, quat_normalize(turned));
}

// One property's running blend (root.rs's blend_in): its value and the
// weights' sum.
struct Acc {
    v: vec4<f32>,
    total: f32,
}

// A blend of root motions (root.rs's Blend): each property over the
// actions whose clips animate it.
struct Blend {
    translation: Acc,
    rotation: Acc,
    settled: bool,
}

// The mixer's rule 1: the first value sets it, each next mixes in by
// w / W.
fn blend_in(a: Acc, v: vec4<f32>, w: f32, rotation: bool) -> Acc {
    if (a.total == 0.0) {
        return Acc(v, w);
    }
    let total = a.total + w;
    let f = w / total;
    return Acc(select(vec_mix(a.v, v, f), quat_mix(a.v, v, f), rotation), total);
}

fn blend_add(b: Blend, m: Motion, w: f32, animates: vec2<bool>) -> Blend {
    var out = b;
    if (!(w > 0.0)) {
        return out;
    }
    if (animates.x) {
        out.translation = blend_in(b.translation, vec4<f32>(m.t, 0.0), w, false);
    }
    if (animates.y) {
        out.rotation = blend_in(b.rotation, m.r, w, true);
    }
    return out;
}

// The mixer's rule 2, once the normal actions are in.
fn blend_settle(b: Blend) -> Blend {
    var out = b;
    if (b.settled) {
        return out;
    }
    out.settled = true;
    if (b.translation.total < 1.0) {
        out.translation.v = vec_mix(b.translation.v, vec4<f32>(0.0), 1.0 - b.translation.total);
    }
    if (b.rotation.total < 1.0) {
        out.rotation.v = quat_mix(b.rotation.v, IDENTITY, 1.0 - b.rotation.total);
    }
    return out;
}

// The mixer's rule 3 after rule 2: an override replaces (w >= 1) or
// mixes in by w.
fn blend_overridden(b: Blend, m: Motion, w: f32, animates: vec2<bool>) -> Blend {
    var out = blend_settle(b);
    if (!(w > 0.0)) {
        return out;
    }
    let t = vec4<f32>(m.t, 0.0);
    if (animates.x) {
        out.translation.v = select(vec_mix(out.translation.v, t, w), t, w >= 1.0);
    }
    if (animates.y) {
        out.rotation.v = select(quat_mix(out.rotation.v, m.r, w), m.r, w >= 1.0);
    }
    return out;
}

// The action's weight at the root: its weight times its mask's factor
// there (a mask past those given moves no root).
fn root_weight(s: ActionSlot) -> f32 {
    if (s.mask == NO_MASK) {
        return s.weight;
    }
    if (s.mask >= playback_params.mask_count) {
        return 0.0;
    }
    return s.weight * root_keys[playback_params.mask_offset + s.mask];
}

// ---------------------------------------------------------------- events

// One action's walk over the markers its step crossed, in playhead
// order: period after period (a clip's length on repeat, two on
// ping-pong, one pass on clamp), each period's marker phases in the
// order the playhead meets them (ties by marker), every crossing within
// the step appended to the frame's events at once (the Player's
// push_marker_events and crossings: the same events in the same order).
struct Walk {
    slot: u32,
    clip: u32,
    weight: u32,
    first: u32,
    count: u32,
    d: vec2<u32>,
    // The step's start within its period, and its length.
    s0: vec2<u32>,
    span: vec2<u32>,
    back: bool,
    // Periods walked, times the period.
    base: vec2<u32>,
    // Events of this action, of the character (at most
    // EVENTS_PER_CHARACTER listed), and those past it.
    emitted: u32,
    listed: u32,
    dropped: u32,
    stop: bool,
}

// Marker i at phase p of the current period: appended if the step
// crosses it ((start, end] forwards, [end, start) backwards).
fn visit(w: ptr<function, Walk>, i: u32, p: vec2<u32>) {
    if ((*w).stop) {
        return;
    }
    var dist = ZERO;
    if (!(*w).back) {
        let x = u64_add((*w).base, p);
        if (u64_le(x, (*w).s0)) {
            return;
        }
        dist = u64_sub(x, (*w).s0);
    } else {
        let x = u64_add((*w).s0, (*w).base);
        if (u64_le(x, p)) {
            return;
        }
        dist = u64_sub(x, p);
    }
    if (u64_lt((*w).span, dist) || (*w).emitted == MAX_EVENTS_PER_STEP) {
        (*w).stop = true;
        return;
    }
    (*w).emitted += 1u;
    if ((*w).listed == EVENTS_PER_CHARACTER) {
        (*w).dropped += 1u;
        return;
    }
    (*w).listed += 1u;
    let at = atomicAdd(&events.count, 1u);
    if (at < playback_params.event_capacity) {
        events.entries[at] = vec4<u32>((*w).slot, (*w).clip, i, (*w).weight);
    } else {
        (*w).dropped += 1u;
    }
}

// The markers of `mode` (0: inside the clip, at phase m; 1: inside, at
// the ping-pong way back's phase 2d - m; 2: every one up to the end, at
// m; 3: at the start (m = 0); 4: at the end (m = d), at phase 0), in
// time order or (`reverse`) against it, equal times in marker order.
fn visit_markers(w: ptr<function, Walk>, mode: u32, reverse: bool) {
    let n = (*w).count;
    var i = 0u;
    while (i < n && !(*w).stop) {
        // The run of markers at the same time, from the start or the end.
        let k = select(i, n - 1u - i, reverse);
        let m = markers[(*w).first + k];
        var a = k;
        var b = k;
        while (a > 0u && all(markers[(*w).first + a - 1u] == m)) {
            a--;
        }
        while (b + 1u < n && all(markers[(*w).first + b + 1u] == m)) {
            b++;
        }
        let d = (*w).d;
        let inside = !u64_zero(m) && u64_lt(m, d);
        let take = select(select(select(u64_le(m, d), all(m == d), mode == 4u),
            u64_zero(m), mode == 3u), inside, mode <= 1u);
        for (var j = a; j <= b && take; j++) {
            let p = select(select(m, u64_sub(u64_add(d, d), m), mode == 1u), ZERO, mode >= 3u);
            visit(w, j, p);
        }
        i += b - a + 1u;
    }
}

// Appends the markers action `s` crossed in step `st` (of a clip of `d`
// ticks) to the frame's events.
fn push_marker_events(w: ptr<function, Walk>, s: ActionSlot, st: Step, d: vec2<u32>) {
    let clip = playback_clips[s.clip];
    let wrap = s.flags & WRAP_BITS;
    if (u64_zero(st.span) || u64_zero(d) || clip.marker_count == 0u) {
        return;
    }
    let period = select(d, u64_add(d, d), wrap == WRAP_PINGPONG);
    (*w).clip = s.clip;
    (*w).weight = bitcast<u32>(s.weight);
    (*w).first = clip.marker_first;
    (*w).count = clip.marker_count;
    (*w).d = d;
    (*w).s0 = select(u64_divmod(st.start, period).r, st.start, wrap == WRAP_CLAMP);
    (*w).span = st.span;
    (*w).back = st.back;
    (*w).base = ZERO;
    (*w).emitted = 0u;
    (*w).stop = false;
    // A clip whose markers are all past its end crosses none.
    if (u64_lt(d, markers[clip.marker_first])) {
        return;
    }
    loop {
        if (wrap == WRAP_REPEAT && !st.back) {
            visit_markers(w, 3u, false);
            visit_markers(w, 4u, false);
            visit_markers(w, 0u, false);
        } else if (wrap == WRAP_REPEAT) {
            visit_markers(w, 0u, true);
            visit_markers(w, 3u, false);
            visit_markers(w, 4u, false);
        } else if (wrap == WRAP_PINGPONG && !st.back) {
            visit_markers(w, 2u, false);
            visit_markers(w, 1u, true);
        } else if (wrap == WRAP_PINGPONG) {
            visit_markers(w, 1u, false);
            visit_markers(w, 2u, true);
        } else {
            visit_markers(w, 2u, st.back);
        }
        if ((*w).stop || wrap == WRAP_CLAMP) {
            return;
        }
        (*w).base = u64_add((*w).base, period);
    }
}

// ------------------------------------------------------------- placement

// v turned by the unit quaternion q.
fn quat_rotate(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    let u = q.xyz;
    let uv = cross(u, v);
    let uuv = cross(u, uv);
    return v + (uv * q.w + uuv) * 2.0;
}

// Moves character c's placement by its root motion of the frame:
// translation += rotation * motion, rotation *= turn (move_placement).
@compute @workgroup_size(PLAYBACK_WORKGROUP_SIZE)
fn placement_main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let c = gid.y * groups.x * PLAYBACK_WORKGROUP_SIZE + gid.x;
    if (c >= playback_params.character_count) {
        return;
    }
    let t = placements[2u * c];
    let r = placements[2u * c + 1u];
    let moved = quat_rotate(r, motion[2u * c].xyz);
    placements[2u * c] = vec4<f32>(t.xyz + moved, 0.0);
    placements[2u * c + 1u] = quat_normalize(quat_mul(r, motion[2u * c + 1u]));
}

// -------------------------------------------------------------- commands

fn action_count(c: u32) -> u32 {
    return min(characters_state[c].count, playback_params.actions);
}

// Base actions come first, before the layers.
fn base_count(c: u32) -> u32 {
    let n = action_count(c);
    let base = c * playback_params.actions;
    for (var k = 0u; k < n; k++) {
        if ((slots[base + k].flags & SLOT_LAYER) != 0u) {
            return k;
        }
    }
    return n;
}

fn remove_slot(c: u32, at: u32) -> ActionSlot {
    let base = c * playback_params.actions;
    let n = action_count(c);
    let removed = slots[base + at];
    for (var k = at; k + 1u < n; k++) {
        slots[base + k] = slots[base + k + 1u];
    }
    characters_state[c].count = n - 1u;
    return removed;
}

fn insert_slot(c: u32, at: u32, s: ActionSlot) {
    let base = c * playback_params.actions;
    let n = action_count(c);
    for (var k = n; k > at; k--) {
        slots[base + k] = slots[base + k - 1u];
    }
    slots[base + at] = s;
    characters_state[c].count = n + 1u;
}

// Drops the lightest base actions until one more fits; their weights'
// sum, or a negative number (nothing dropped) when the layers leave no
// room.
fn make_room(c: u32) -> f32 {
    let n = action_count(c);
    let max_actions = min(characters_state[c].max_actions, playback_params.actions);
    let excess = select(0u, n + 1u - max_actions, n + 1u > max_actions);
    if (excess > base_count(c)) {
        return -1.0;
    }
    let base = c * playback_params.actions;
    var freed = 0.0;
    for (var i = 0u; i < excess; i++) {
        var lightest = 0u;
        let bases = base_count(c);
        for (var k = 1u; k < bases; k++) {
            if (slots[base + k].weight < slots[base + lightest].weight) {
                lightest = k;
            }
        }
        freed += remove_slot(c, lightest).weight;
    }
    return freed;
}

fn kept_at(c: u32, clip: u32) -> u32 {
    return (c * playback_params.clip_count + clip) * KEPT_WORDS;
}

// The wrap and SLOT_REPS of `clip` (x) and its repetitions (yz): its own,
// or the character's, which it keeps from then on.
fn settings(c: u32, clip: u32) -> vec3<u32> {
    let ch = characters_state[c];
    if (clip >= playback_params.clip_count) {
        return vec3<u32>(ch.flags & (WRAP_BITS | SLOT_REPS), ch.repetitions_lo, ch.repetitions_hi);
    }
    let at = kept_at(c, clip);
    if ((kept[at] & KEPT_SET) == 0u) {
        kept[at] = KEPT_SET | (ch.flags & (WRAP_BITS | SLOT_REPS));
        kept[at + 1u] = ch.repetitions_lo;
        kept[at + 2u] = ch.repetitions_hi;
    }
    return vec3<u32>(kept[at] & (WRAP_BITS | SLOT_REPS), kept[at + 1u], kept[at + 2u]);
}

fn new_slot(clip: u32) -> ActionSlot {
    // speed 1.0 (f64 bits 0x3ff00000_00000000).
    return ActionSlot(clip, SLOT_FRESH, 0u, NO_MASK, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u,
        0x3ff00000u, 0.0, 0.0, 0.0, 1.0, 0u, 0u, 1u, 0u, 0u, 0u, 0.0, 0u, 0u, 0u);
}

fn base_action(c: u32, clip: u32, weight: f32) -> ActionSlot {
    let kept_settings = settings(c, clip);
    var s = new_slot(clip);
    s.flags = kept_settings.x | SLOT_FRESH;
    s.repetitions_lo = kept_settings.y;
    s.repetitions_hi = kept_settings.z;
    s.weight = weight;
    return s;
}

fn start_fade(s: ptr<function, ActionSlot>, to: f32, cmd: PlaybackCommand) {
    (*s).flags = (*s).flags | SLOT_FADING;
    (*s).fade_from = (*s).weight;
    (*s).fade_to = to;
    (*s).fade_rate = cmd.rate;
    (*s).fade_elapsed_lo = 0u;
    (*s).fade_elapsed_hi = 0u;
    (*s).fade_duration_lo = cmd.duration_lo;
    (*s).fade_duration_hi = cmd.duration_hi;
}

fn fade_base_out(c: u32, every: bool, clip: u32, cmd: PlaybackCommand) {
    let base = c * playback_params.actions;
    let bases = base_count(c);
    for (var k = 0u; k < bases; k++) {
        var s = slots[base + k];
        if (every || s.clip == clip) {
            start_fade(&s, 0.0, cmd);
            slots[base + k] = s;
        }
    }
}

fn command_play(c: u32, cmd: PlaybackCommand) -> u32 {
    let layers = action_count(c) - base_count(c);
    if (layers >= min(characters_state[c].max_actions, playback_params.actions)) {
        return REFUSED_FULL;
    }
    for (var bases = base_count(c); bases > 0u; bases--) {
        remove_slot(c, 0u);
    }
    insert_slot(c, 0u, base_action(c, cmd.clip, 1.0));
    return APPLIED;
}

fn command_crossfade(c: u32, cmd: PlaybackCommand) -> u32 {
    let base = c * playback_params.actions;
    var heading = 0.0;
    var existing = NO_ROW;
    let bases = base_count(c);
    for (var k = 0u; k < bases; k++) {
        let s = slots[base + k];
        heading += select(s.weight, s.fade_to, (s.flags & SLOT_FADING) != 0u);
        if (existing == NO_ROW && s.clip == cmd.clip) {
            existing = k;
        }
    }
    let aim = select(1.0, heading, heading > 0.0);
    var incoming: ActionSlot;
    if (existing != NO_ROW) {
        incoming = remove_slot(c, existing);
    } else {
        let freed = make_room(c);
        if (freed < 0.0) {
            return REFUSED_FULL;
        }
        incoming = base_action(c, cmd.clip, freed);
    }
    fade_base_out(c, true, 0u, cmd);
    start_fade(&incoming, aim, cmd);
    insert_slot(c, base_count(c), incoming);
    return APPLIED;
}

fn command_fade_in(c: u32, cmd: PlaybackCommand) -> u32 {
    if (make_room(c) < 0.0) {
        return REFUSED_FULL;
    }
    var s = base_action(c, cmd.clip, 0.0);
    start_fade(&s, 1.0, cmd);
    insert_slot(c, base_count(c), s);
    return APPLIED;
}

// A command's signed time in ticks.
fn command_time(cmd: PlaybackCommand) -> Signed {
    let t = vec2<u32>(cmd.time_lo, cmd.time_hi);
    if ((t.y >> 31u) != 0u) {
        return Signed(true, u64_sub(ZERO, t));
    }
    return Signed(false, t);
}

// Sets the clocks of base actions `first .. end` at the command's time.
fn seek_bases(c: u32, first: u32, end: u32, cmd: PlaybackCommand) {
    let base = c * playback_params.actions;
    for (var k = first; k < end; k++) {
        var s = slots[base + k];
        clock_at(&s, command_time(cmd), clip_ticks(s.clip), s.flags & WRAP_BITS);
        s.flags = s.flags & ~SLOT_FINISHED;
        slots[base + k] = s;
    }
}

fn command_settings(c: u32, cmd: PlaybackCommand) -> u32 {
    let wrap = cmd.kind == CMD_WRAP || cmd.kind == CMD_CLIP_WRAP;
    let bits = select(SLOT_REPS, WRAP_BITS, wrap);
    let value = cmd.flags & bits;
    let per_clip = cmd.kind == CMD_CLIP_WRAP || cmd.kind == CMD_CLIP_REPETITIONS;
    let bases = base_count(c);
    let base = c * playback_params.actions;
    if (!per_clip && bases == 0u) {
        var ch = characters_state[c];
        ch.flags = (ch.flags & ~bits) | value;
        if (!wrap) {
            ch.repetitions_lo = cmd.repetitions_lo;
            ch.repetitions_hi = cmd.repetitions_hi;
        }
        characters_state[c] = ch;
        return APPLIED;
    }
    var clip = cmd.clip;
    if (!per_clip) {
        clip = slots[base + bases - 1u].clip;
    }
    let n = action_count(c);
    for (var k = 0u; k < n; k++) {
        var s = slots[base + k];
        if ((per_clip && s.clip == clip) || (!per_clip && k + 1u == bases)) {
            s.flags = (s.flags & ~bits) | value;
            if (wrap) {
                s.flags = s.flags & ~SLOT_FINISHED;
            } else {
                s.repetitions_lo = cmd.repetitions_lo;
                s.repetitions_hi = cmd.repetitions_hi;
            }
            slots[base + k] = s;
        }
    }
    settings(c, clip);
    if (clip < playback_params.clip_count) {
        let at = kept_at(c, clip);
        kept[at] = (kept[at] & ~bits) | value;
        if (!wrap) {
            kept[at + 1u] = cmd.repetitions_lo;
            kept[at + 2u] = cmd.repetitions_hi;
        }
    }
    return APPLIED;
}

fn layer_settings(s: ptr<function, ActionSlot>, cmd: PlaybackCommand) {
    if ((((*s).flags ^ cmd.flags) & WRAP_BITS) != 0u) {
        (*s).flags = (*s).flags & ~SLOT_FINISHED;
    }
    let own = WRAP_BITS | SLOT_REPS | SLOT_OVERRIDES | SLOT_ADDITIVE | SLOT_FADING;
    (*s).flags = ((*s).flags & ~own)
        | (cmd.flags & (WRAP_BITS | SLOT_REPS | SLOT_OVERRIDES | SLOT_ADDITIVE));
    (*s).weight = cmd.weight;
    (*s).mask = cmd.mask;
    (*s).speed_lo = cmd.speed_lo;
    (*s).speed_hi = cmd.speed_hi;
    (*s).repetitions_lo = cmd.repetitions_lo;
    (*s).repetitions_hi = cmd.repetitions_hi;
    (*s).reference_lo = cmd.reference_lo;
    (*s).reference_hi = cmd.reference_hi;
    (*s).reference_time = cmd.reference_time;
}

fn command_add_layer(c: u32, cmd: PlaybackCommand) -> u32 {
    let n = action_count(c);
    if (n >= min(characters_state[c].max_actions, playback_params.actions)) {
        return REFUSED_FULL;
    }
    var s = new_slot(cmd.clip);
    s.flags = SLOT_LAYER | SLOT_FRESH;
    s.layer = cmd.layer;
    layer_settings(&s, cmd);
    insert_slot(c, n, s);
    return APPLIED;
}

fn command_layer(c: u32, cmd: PlaybackCommand) -> u32 {
    let base = c * playback_params.actions;
    let n = action_count(c);
    for (var k = 0u; k < n; k++) {
        var s = slots[base + k];
        if ((s.flags & SLOT_LAYER) == 0u || s.layer != cmd.layer) {
            continue;
        }
        if (cmd.kind == CMD_SET_LAYER) {
            layer_settings(&s, cmd);
            slots[base + k] = s;
        } else if (cmd.kind == CMD_FADE_LAYER) {
            start_fade(&s, cmd.weight, cmd);
            slots[base + k] = s;
        } else {
            remove_slot(c, k);
        }
        return APPLIED;
    }
    return REFUSED_NO_LAYER;
}

fn apply_command(c: u32, cmd: PlaybackCommand) -> u32 {
    switch (cmd.kind) {
        case CMD_PLAY: {
            return command_play(c, cmd);
        }
        case CMD_CROSSFADE: {
            return command_crossfade(c, cmd);
        }
        case CMD_CROSSFADE_AT: {
            let status = command_crossfade(c, cmd);
            if (status == APPLIED) {
                let current = base_count(c) - 1u;
                seek_bases(c, current, current + 1u, cmd);
            }
            return status;
        }
        case CMD_FADE_IN: {
            return command_fade_in(c, cmd);
        }
        case CMD_FADE_OUT: {
            fade_base_out(c, false, cmd.clip, cmd);
            return APPLIED;
        }
        case CMD_SPEED: {
            characters_state[c].speed_lo = cmd.speed_lo;
            characters_state[c].speed_hi = cmd.speed_hi;
            return APPLIED;
        }
        case CMD_PAUSE: {
            let flags = characters_state[c].flags;
            characters_state[c].flags = (flags & ~CHARACTER_PAUSED) | (cmd.flags & CHARACTER_PAUSED);
            return APPLIED;
        }
        case CMD_SEEK: {
            seek_bases(c, 0u, base_count(c), cmd);
            return APPLIED;
        }
        case CMD_WRAP, CMD_CLIP_WRAP, CMD_REPETITIONS, CMD_CLIP_REPETITIONS: {
            return command_settings(c, cmd);
        }
        case CMD_ADD_LAYER: {
            return command_add_layer(c, cmd);
        }
        case CMD_SET_LAYER, CMD_FADE_LAYER, CMD_REMOVE_LAYER: {
            return command_layer(c, cmd);
        }
        case CMD_PLACE: {
            placements[2u * c] = vec4<f32>(cmd.weight, cmd.rate, cmd.reference_time, 0.0);
            placements[2u * c + 1u] = vec4<f32>(bitcast<f32>(cmd.speed_lo), bitcast<f32>(cmd.speed_hi),
                bitcast<f32>(cmd.repetitions_lo), bitcast<f32>(cmd.repetitions_hi));
            return APPLIED;
        }
        case CMD_RESET: {
            // Speed 1.0 (f64 bits 0x3ff00000_00000000), clips on repeat.
            characters_state[c] = PlaybackCharacter(0u, 0x3ff00000u, WRAP_REPEAT, 0u, 0u, 0u,
                playback_params.actions, 0u);
            let first = kept_at(c, 0u);
            for (var k = 0u; k < playback_params.clip_count * KEPT_WORDS; k++) {
                kept[first + k] = 0u;
            }
            return APPLIED;
        }
        default: {
            return APPLIED;
        }
    }
}

// One invocation per command of the frame (every chunk's, sorted by
// character): the first command of each of this chunk's characters
// applies that character's commands in order.
@compute @workgroup_size(PLAYBACK_WORKGROUP_SIZE)
fn playback_commands_main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.y * groups.x * PLAYBACK_WORKGROUP_SIZE + gid.x;
    let n = frame.head.command_count;
    if (i == 0u && playback_params.first_character == 0u) {
        // The first chunk's first invocation: a new frame of events.
        atomicStore(&events.count, 0u);
        atomicStore(&events.dropped, 0u);
        events.capacity = playback_params.event_capacity;
    }
    if (i >= n) {
        return;
    }
    let character = frame.commands[i].character;
    let first = playback_params.first_character;
    if (character < first || character - first >= playback_params.character_count) {
        return;
    }
    if (i > 0u && frame.commands[i - 1u].character == character) {
        return;
    }
    let c = character - first;
    for (var k = i; k < n; k++) {
        let cmd = frame.commands[k];
        if (cmd.character != character) {
            break;
        }
        apply_command(c, cmd);
    }
}
