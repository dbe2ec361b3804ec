//! One action's playhead in integer ticks: how a step moves it (folding by
//! the wrap mode, stopping at the last repetition), what the step crossed
//! (loop ends, markers), and how a speed scales a step. The twin of the
//! clock functions of `shaders/playback.wgsl`: the same integer
//! arithmetic, here in `u64`/`i128`, there in pairs of `u32` words; an
//! integer result does not depend on how it is computed.

use crate::layout::{
    GpuActionSlot, SLOT_BACKWARDS, SLOT_DONE, SLOT_FREE_FOLD, SLOT_FRESH, SLOT_REPS,
    TICKS_PER_SECOND, WRAP_BITS,
};
use crate::model::track::WrapMode;

/// `WrapMode::Clamp` in a slot's wrap bits.
pub(crate) const WRAP_CLAMP: u32 = WrapMode::Clamp as u32;
/// `WrapMode::Repeat` in a slot's wrap bits.
pub(crate) const WRAP_REPEAT: u32 = WrapMode::Repeat as u32;
/// `WrapMode::PingPong` in a slot's wrap bits.
pub(crate) const WRAP_PINGPONG: u32 = WrapMode::PingPong as u32;

/// The wrap bits of `wrap`.
pub(crate) fn wrap_bits(wrap: WrapMode) -> u32 {
    wrap as u32
}

/// The wrap mode of wrap bits `bits` (anything else than the three modes
/// is clamp).
pub(crate) fn wrap_mode(bits: u32) -> WrapMode {
    match bits & WRAP_BITS {
        WRAP_REPEAT => WrapMode::Repeat,
        WRAP_PINGPONG => WrapMode::PingPong,
        _ => WrapMode::Clamp,
    }
}

/// Ticks per second, as an `f64`.
const PER_SECOND: f64 = TICKS_PER_SECOND as f64;

/// `seconds` in ticks, rounded to the nearest (halves away from zero),
/// saturated to `i64`'s range (a step past 2^63 ticks, 55.4 hours, is cut
/// to that): the exact product of the `f64` and [`TICKS_PER_SECOND`],
/// rounded once. Host only: the GPU receives ticks.
pub(crate) fn ticks(seconds: f64) -> i64 {
    scale_ticks(TICKS_PER_SECOND as i64, seconds.to_bits())
}

/// A duration of `seconds >= 0` in ticks.
pub(crate) fn duration_ticks(seconds: f64) -> u64 {
    ticks(seconds).unsigned_abs()
}

/// `ticks` in seconds, the nearest `f64`.
pub(crate) fn seconds(ticks: u64) -> f64 {
    ticks as f64 / PER_SECOND
}

/// A clip time in ticks as the sampler takes it (`ticks_to_f32` in the
/// WGSL): whole seconds and the ticks left over, each rounded to `f32`
/// (halves to even), the ticks scaled by `1 / TICKS_PER_SECOND` in `f32`,
/// then added: within about an `f32` ulp of the exact time.
#[cfg(test)]
pub(crate) fn clip_time(ticks: u64) -> f32 {
    use crate::layout::{FLICKS_PER_SECOND, TICK_SHIFT};
    let whole = (ticks >> TICK_SHIFT) / u64::from(FLICKS_PER_SECOND);
    let rest = ticks - whole * TICKS_PER_SECOND;
    (whole as f32) + (rest as f32) * (1.0 / PER_SECOND) as f32
}

/// A `u64` of two words.
pub(crate) fn join(lo: u32, hi: u32) -> u64 {
    u64::from(lo) | (u64::from(hi) << 32)
}

/// The two words (low, high) of `v`.
pub(crate) fn split(v: u64) -> (u32, u32) {
    (v as u32, (v >> 32) as u32)
}

/// `ticks * speed` rounded to a whole tick (halves away from zero),
/// saturated to `i64`'s range, with `speed` an `f64`'s bits: the integer
/// product of `|ticks|` and the speed's 53-bit mantissa, shifted by its
/// exponent. Exact for every finite speed (1 gives `ticks` itself, 0
/// gives 0).
pub(crate) fn scale_ticks(ticks: i64, speed: u64) -> i64 {
    // A speed of 1 (the usual one) leaves the ticks as they are.
    if speed == 1.0f64.to_bits() {
        return ticks;
    }
    let negative_speed = (speed >> 63) != 0;
    let exponent = ((speed >> 52) & 0x7ff) as i32;
    let fraction = speed & ((1u64 << 52) - 1);
    let (mantissa, shift) = if exponent == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1u64 << 52), exponent - 1075)
    };
    let product = u128::from(ticks.unsigned_abs()) * u128::from(mantissa);
    let max = i64::MAX as u128;
    let magnitude = if product == 0 {
        0
    } else if shift >= 0 {
        if shift > 63 || product > (max >> shift) {
            max
        } else {
            product << shift
        }
    } else {
        let right = shift.unsigned_abs();
        if right >= 128 {
            0
        } else {
            ((product + (1u128 << (right - 1))) >> right).min(max)
        }
    };
    let magnitude = magnitude as i64;
    if negative_speed != (ticks < 0) {
        -magnitude
    } else {
        magnitude
    }
}

/// What one step of a playhead did, in ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Step {
    /// The clip time before and after the step.
    pub(crate) before: u64,
    pub(crate) after: u64,
    /// The step in the unfolded timeline (repeat: clip time plus whole
    /// loops; ping-pong: the phase over a period of two durations;
    /// clamp: clip time) from `start` to `end`.
    pub(crate) start: i128,
    pub(crate) end: i128,
    /// Repeat: whole loops crossed, signed (forward positive).
    pub(crate) wraps: i64,
    /// Loop ends (repeat) or turns (ping-pong) crossed, counted.
    pub(crate) folds: u64,
    /// Clamp: the step reached the end it moved towards; a limited
    /// clock: it played its last repetition.
    pub(crate) reached_end: bool,
}

/// The slot's playhead in ticks.
pub(crate) fn slot_time(slot: &GpuActionSlot) -> u64 {
    join(slot.time_lo, slot.time_hi)
}

fn set_time(slot: &mut GpuActionSlot, t: u64) {
    (slot.time_lo, slot.time_hi) = split(t);
}

pub(crate) fn slot_passes(slot: &GpuActionSlot) -> u64 {
    join(slot.passes_lo, slot.passes_hi)
}

fn set_passes(slot: &mut GpuActionSlot, v: u64) {
    (slot.passes_lo, slot.passes_hi) = split(v);
}

fn flag(slot: &GpuActionSlot, f: u32) -> bool {
    slot.flags & f != 0
}

fn set_flag(slot: &mut GpuActionSlot, f: u32, on: bool) {
    if on {
        slot.flags |= f;
    } else {
        slot.flags &= !f;
    }
}

/// The ping-pong phase of the slot's playhead, in `[0, 2 d)`.
fn clock_phase(slot: &GpuActionSlot, d: u64) -> u64 {
    if flag(slot, SLOT_BACKWARDS) {
        2 * d - slot_time(slot)
    } else {
        slot_time(slot)
    }
}

/// `i128` saturated to `i64`.
fn saturate(v: i128) -> i64 {
    v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// Moves the playhead by `delta` ticks of clip time (negative: backwards)
/// in a clip of `d` ticks played with `wrap`, and returns what the step
/// did. A clip of duration 0, or a step of 0, leaves it where it is.
pub(crate) fn clock_step(slot: &mut GpuActionSlot, delta: i64, d: u64, wrap: u32) -> Step {
    let from = slot_time(slot);
    let still = Step {
        before: from,
        after: from,
        start: i128::from(from),
        end: i128::from(from),
        wraps: 0,
        folds: 0,
        reached_end: false,
    };
    if d == 0 || delta == 0 {
        return still;
    }
    let (dd, delta128) = (i128::from(d), i128::from(delta));
    match wrap {
        WRAP_REPEAT => {
            let end = i128::from(from) + delta128;
            let to = end.rem_euclid(dd) as u64;
            set_time(slot, to);
            set_flag(slot, SLOT_BACKWARDS, false);
            let wraps = saturate(end.div_euclid(dd));
            Step {
                after: to,
                end,
                wraps,
                folds: wraps.unsigned_abs(),
                ..still
            }
        }
        WRAP_PINGPONG => {
            let period = 2 * dd;
            let start = i128::from(clock_phase(slot, d));
            let end = start + delta128;
            let q = end.rem_euclid(period);
            let backwards = q > dd;
            let to = if backwards { period - q } else { q } as u64;
            set_time(slot, to);
            set_flag(slot, SLOT_BACKWARDS, backwards);
            let folds = (end.div_euclid(dd) - start.div_euclid(dd)).unsigned_abs();
            Step {
                after: to,
                start,
                end,
                folds: folds.min(u128::from(u64::MAX)) as u64,
                ..still
            }
        }
        _ => {
            let to = (i128::from(from) + delta128).clamp(0, dd) as u64;
            set_time(slot, to);
            // Only ping-pong runs passes backwards; a later switch to
            // ping-pong starts moving forwards again.
            set_flag(slot, SLOT_BACKWARDS, false);
            Step {
                after: to,
                end: i128::from(to),
                reached_end: (delta > 0 && to >= d) || (delta < 0 && to == 0),
                ..still
            }
        }
    }
}

/// Sets the slot's clock at clip time `t` ticks, folded into a clip of `d`
/// ticks by `wrap` (a step from 0): fresh, no pass played, not done.
pub(crate) fn clock_at(slot: &mut GpuActionSlot, t: i64, d: u64, wrap: u32) {
    set_time(slot, 0);
    set_passes(slot, 0);
    set_flag(slot, SLOT_BACKWARDS, false);
    set_flag(slot, SLOT_DONE, false);
    set_flag(slot, SLOT_FREE_FOLD, false);
    set_flag(slot, SLOT_FRESH, true);
    if d > 0 {
        clock_step(slot, t, d, wrap);
    }
}

/// The first step that moves a fresh clock: backwards (repeat or
/// ping-pong), its next fold is free (three.js's loop count going from
/// -1 to 0), and a ping-pong phase moves by one duration so that the
/// first pass plays from the end.
fn clock_start_moving(slot: &mut GpuActionSlot, delta: i64, d: u64, wrap: u32) {
    if !flag(slot, SLOT_FRESH) || delta == 0 || d == 0 {
        return;
    }
    set_flag(slot, SLOT_FRESH, false);
    if delta > 0 || wrap == WRAP_CLAMP {
        return;
    }
    set_flag(slot, SLOT_FREE_FOLD, true);
    if wrap == WRAP_PINGPONG {
        let period = 2 * u128::from(d);
        let mut phase = u128::from(clock_phase(slot, d)) + u128::from(d);
        if phase >= period {
            phase -= period;
        }
        let backwards = phase > u128::from(d);
        set_flag(slot, SLOT_BACKWARDS, backwards);
        set_time(slot, if backwards { period - phase } else { phase } as u64);
    }
}

/// [`clock_step`], ending the clock's last pass where its repetition limit
/// (`SLOT_REPS`: repeat loops, ping-pong passes out or back) runs out: the
/// playhead stops at the end of that pass, the step ends there with
/// `reached_end`, and later steps hold it still; with no pass left it
/// stops where it stands. No limit, or clamp: a plain step. The step's
/// `folds` are the passes it ended: a fresh clock's first step backwards
/// enters its first pass (its first fold is free).
pub(crate) fn clock_step_limited(slot: &mut GpuActionSlot, delta: i64, d: u64, wrap: u32) -> Step {
    let limited = flag(slot, SLOT_REPS) && wrap != WRAP_CLAMP;
    let reps = join(slot.repetitions_lo, slot.repetitions_hi);
    let left = reps.saturating_sub(slot_passes(slot));
    if flag(slot, SLOT_DONE) || (limited && left == 0) {
        set_flag(slot, SLOT_DONE, true);
        let mut s = clock_step(slot, 0, d, wrap);
        s.reached_end = true;
        return s;
    }
    clock_start_moving(slot, delta, d, wrap);
    let free_before = flag(slot, SLOT_FREE_FOLD);
    let passes_before = slot_passes(slot);
    let mut s = clock_step(slot, delta, d, wrap);
    // The free fold, when this step makes it, is the boundary crossed
    // before the counted ones.
    let extra = u64::from(free_before && s.folds > 0);
    s.folds -= extra;
    set_flag(slot, SLOT_FREE_FOLD, free_before && extra == 0);
    if !limited || s.folds < left {
        set_passes(slot, passes_before.saturating_add(s.folds));
        return s;
    }
    clock_stop_at_pass_end(slot, &mut s, (passes_before, left, extra), d, wrap, delta);
    s
}

/// Ends step `s` at the end of the `left`-th pass it counts, the `extra`
/// free fold crossed before them: the end is a multiple `m` of the
/// duration in the unfolded timeline, the `(left + extra)`-th boundary
/// from the start (moving forward the next one past it; moving back the
/// start itself, or the one before it, as `Step::folds` counts them).
fn clock_stop_at_pass_end(
    slot: &mut GpuActionSlot,
    s: &mut Step,
    (passes_before, left, extra): (u64, u64, u64),
    d: u64,
    wrap: u32,
    delta: i64,
) {
    let dd = i128::from(d);
    let k0 = s.start.div_euclid(dd);
    let j = i128::from(left) + i128::from(extra);
    let m = if delta > 0 { k0 + j } else { k0 - j + 1 };
    // Repeat: the clip's end (forward) or start (back); ping-pong: the
    // end the pass turns at, by the parity of `m`.
    let to = match wrap {
        WRAP_REPEAT if delta > 0 => d,
        WRAP_REPEAT => 0,
        _ if m.rem_euclid(2) == 1 => d,
        _ => 0,
    };
    s.end = m * dd;
    s.after = to;
    // The whole loops between `from` and `to`, so that `wraps * d + to` is
    // still the unfolded end.
    s.wraps = if wrap == WRAP_REPEAT {
        saturate(m - i128::from(delta > 0))
    } else {
        0
    };
    s.folds = left;
    s.reached_end = true;
    set_time(slot, to);
    set_passes(slot, passes_before.saturating_add(left));
    set_flag(slot, SLOT_BACKWARDS, false);
    set_flag(slot, SLOT_DONE, true);
    set_flag(slot, SLOT_FRESH, false);
    set_flag(slot, SLOT_FREE_FOLD, false);
}

/// The unfolded positions of `step` at which clip time `marker` (ticks)
/// is passed, in playhead order, at most `limit` of them appended to
/// `out`: in `(start, end]` moving forward, `[end, start)` moving back.
/// Host only (the GPU's markers: `shaders/playback.wgsl`'s events).
pub(crate) fn crossings(
    step: &Step,
    marker: u64,
    d: u64,
    wrap: u32,
    limit: usize,
    out: &mut Vec<i128>,
) {
    let (start, end) = (step.start, step.end);
    if start == end || d == 0 || marker > d {
        return;
    }
    let forward = end > start;
    let inside = |p: i128| {
        if forward {
            p > start && p <= end
        } else {
            p >= end && p < start
        }
    };
    let (lo, hi) = if forward { (start, end) } else { (end, start) };
    let first = out.len();
    let (dd, m) = (i128::from(d), i128::from(marker));
    match wrap {
        WRAP_REPEAT => {
            // A marker at the duration is the instant a loop starts again.
            let m = if marker >= d { 0 } else { m };
            walk(lo, hi, dd, forward, first + limit, out, |j| {
                let p = m + j * dd;
                [inside(p).then_some(p), None]
            });
        }
        WRAP_PINGPONG => {
            let period = 2 * dd;
            // The phases of the marker in one period: on the way out, and
            // on the way back (the same instant at either end).
            let back = (marker > 0 && marker < d).then_some(period - m);
            walk(lo, hi, period, forward, first + limit, out, |j| {
                let base = j * period;
                let away = m + base;
                let back = back.map(|b| b + base);
                if forward {
                    [inside(away).then_some(away), back.filter(|&p| inside(p))]
                } else {
                    [back.filter(|&p| inside(p)), inside(away).then_some(away)]
                }
            });
        }
        _ => {
            if inside(m) {
                out.push(m);
            }
        }
    }
    let mine = &mut out[first..];
    if forward {
        mine.sort_unstable();
    } else {
        mine.sort_unstable_by(|a, b| b.cmp(a));
    }
    out.truncate(first + limit);
}

/// Calls `at(j)` for the periods `j` of length `period` that overlap
/// `[lo, hi]`, from the step's start (`lo` moving forward, `hi` moving
/// back), collecting what it finds until `found` holds more than `limit`.
fn walk(
    lo: i128,
    hi: i128,
    period: i128,
    forward: bool,
    limit: usize,
    found: &mut Vec<i128>,
    at: impl Fn(i128) -> [Option<i128>; 2],
) {
    let first = lo.div_euclid(period) - 1;
    let last = -((-hi).div_euclid(period));
    let mut j = if forward { first } else { last };
    while (first..=last).contains(&j) && found.len() <= limit {
        found.extend(at(j).into_iter().flatten());
        j += if forward { 1 } else { -1 };
    }
}
