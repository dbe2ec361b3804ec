//! The playhead arithmetic the playback pass and the `Player` share
//! (`src/cpu/playback/clock.rs`), in ticks, against positions worked out
//! by hand.

use crate::cpu::playback::clock::{
    clock_at, clock_step, crossings, scale_ticks, slot_time, ticks, Step, WRAP_CLAMP,
    WRAP_PINGPONG, WRAP_REPEAT,
};
use crate::layout::{GpuActionSlot, SLOT_BACKWARDS};

/// Ticks a second: 2^16 flicks.
const S: i64 = 705_600_000 << 16;

/// A slot whose clock is at `t` seconds of a clip of `d` seconds.
fn at(t: f64, d: f64, wrap: u32) -> GpuActionSlot {
    let mut s: GpuActionSlot = bytemuck::Zeroable::zeroed();
    clock_at(&mut s, ticks(t), ticks(d) as u64, wrap);
    s
}

fn step(s: &mut GpuActionSlot, by: f64, d: f64, wrap: u32) -> Step {
    clock_step(s, ticks(by), ticks(d) as u64, wrap)
}

/// Seconds of a tick count (these are all exact).
fn sec(t: i128) -> f64 {
    t as f64 / S as f64
}

#[test]
fn seconds_are_whole_ticks_and_back() {
    assert_eq!(ticks(1.0), S);
    assert_eq!(ticks(0.25), S / 4);
    assert_eq!(ticks(-1.5), -3 * S / 2);
    // Decimal steps and frame rates are whole numbers of ticks.
    assert_eq!(ticks(0.1), S / 10);
    assert_eq!(ticks(1.0 / 60.0), S / 60);
    assert_eq!(ticks(1.0 / 144.0), S / 144);
    // A microsecond is not: the nearest.
    assert_eq!(ticks(1e-6), 46_242_202);
    // Every f32 duration of 0.25 s or more is.
    for d in [0.25f32, 0.7083333, 1.5416666, 3.4166667, 1234.567] {
        let t = ticks(f64::from(d));
        assert_eq!(t as f64 / S as f64, f64::from(d), "{d}");
    }
    // Past 2^63 ticks, saturated.
    assert_eq!(ticks(1e300), i64::MAX);
}

#[test]
fn repeat_folds_and_counts_loops_both_ways() {
    let mut c = at(0.25, 1.0, WRAP_REPEAT);
    let s = step(&mut c, 2.5, 1.0, WRAP_REPEAT);
    assert_eq!(
        (
            sec(i128::from(s.before)),
            sec(i128::from(s.after)),
            s.wraps,
            s.folds
        ),
        (0.25, 0.75, 2, 2)
    );
    let s = step(&mut c, -1.0, 1.0, WRAP_REPEAT);
    assert_eq!((sec(i128::from(s.after)), s.wraps), (0.75, -1));
}

#[test]
fn ping_pong_turns_at_the_ends() {
    let mut c = at(0.0, 2.0, WRAP_PINGPONG);
    let s = step(&mut c, 3.0, 2.0, WRAP_PINGPONG);
    // 0 -> 2 (turn) -> 1, moving back.
    let back = |c: &GpuActionSlot| c.flags & SLOT_BACKWARDS != 0;
    assert_eq!(
        (sec(i128::from(s.after)), back(&c), s.folds),
        (1.0, true, 1)
    );
    let s = step(&mut c, 2.0, 2.0, WRAP_PINGPONG);
    // 1 -> 0 (turn) -> 1, moving forward.
    assert_eq!(
        (sec(i128::from(s.after)), back(&c), s.folds),
        (1.0, false, 1)
    );
}

#[test]
fn clamp_stops_at_the_end_it_moves_to() {
    let mut c = at(0.5, 1.0, WRAP_CLAMP);
    let s = step(&mut c, 0.75, 1.0, WRAP_CLAMP);
    assert_eq!((sec(i128::from(s.after)), s.reached_end), (1.0, true));
    let s = step(&mut c, -0.25, 1.0, WRAP_CLAMP);
    assert_eq!((sec(i128::from(s.after)), s.reached_end), (0.75, false));
}

#[test]
fn speeds_scale_whole_ticks_exactly() {
    let bits = f64::to_bits;
    assert_eq!(scale_ticks(12_345, bits(1.0)), 12_345);
    assert_eq!(scale_ticks(12_345, bits(-1.0)), -12_345);
    assert_eq!(scale_ticks(12_345, bits(0.0)), 0);
    assert_eq!(scale_ticks(-7, bits(0.5)), -4, "halves away from zero");
    assert_eq!(scale_ticks(7, bits(0.5)), 4);
    assert_eq!(scale_ticks(S, bits(1.5)), 3 * S / 2);
    // 0.1 is 3602879701896397 / 2^55: the product rounded to a tick.
    let want = (S as u128 * 3_602_879_701_896_397 + (1 << 54)) >> 55;
    assert_eq!(scale_ticks(S, bits(0.1)) as u128, want);
    assert_eq!(scale_ticks(S, bits(1e300)), i64::MAX, "saturates");
    assert_eq!(scale_ticks(-S, bits(1e300)), -i64::MAX);
    assert_eq!(scale_ticks(S, bits(1e-300)), 0);
}

#[test]
fn markers_are_crossed_once_per_crossing_in_playhead_order() {
    let mut out = Vec::new();
    let m = |t: f64| ticks(t) as u64;
    let d = m(1.0);
    let secs = |out: &[i128]| out.iter().map(|&p| sec(p)).collect::<Vec<_>>();
    let mut c = at(0.5, 1.0, WRAP_REPEAT);
    let s = step(&mut c, 2.0, 1.0, WRAP_REPEAT);
    // The marker at 0.5 is where the step starts: not crossed there, but
    // at 1.5 and 2.5.
    crossings(&s, m(0.5), d, WRAP_REPEAT, 100, &mut out);
    assert_eq!(secs(&out), [1.5, 2.5]);
    out.clear();
    let mut c = at(0.5, 1.0, WRAP_REPEAT);
    let s = step(&mut c, -1.0, 1.0, WRAP_REPEAT);
    // Back from 0.5 to -0.5: 0.25 is passed; -0.75 is not reached.
    crossings(&s, m(0.25), d, WRAP_REPEAT, 100, &mut out);
    assert_eq!(secs(&out), [0.25]);
    out.clear();
    // Ping-pong from phase 0 over 3.5 s of a 1 s clip: 0.25 out (0.25),
    // back (1.75), out again (2.25); 3.5 is short of the next way back
    // (3.75).
    let mut c = at(0.0, 1.0, WRAP_PINGPONG);
    let s = step(&mut c, 3.5, 1.0, WRAP_PINGPONG);
    crossings(&s, m(0.25), d, WRAP_PINGPONG, 100, &mut out);
    assert_eq!(secs(&out), [0.25, 1.75, 2.25]);
    out.clear();
    // The limit holds at any step.
    let mut c = at(0.0, 1.0, WRAP_REPEAT);
    let s = step(&mut c, 1e5, 1.0, WRAP_REPEAT);
    crossings(&s, m(0.5), d, WRAP_REPEAT, 8, &mut out);
    assert_eq!(out.len(), 8);
    assert_eq!(sec(out[0]), 0.5);
    out.clear();
    // Backwards too: the crossings nearest the start come first.
    let mut c = at(0.5, 1.0, WRAP_REPEAT);
    let s = step(&mut c, -1e5, 1.0, WRAP_REPEAT);
    crossings(&s, m(0.25), d, WRAP_REPEAT, 3, &mut out);
    assert_eq!(secs(&out), [0.25, -0.75, -1.75]);
    assert_eq!(slot_time(&c), m(0.5), "a whole number of loops back");
}
