//! The playback layer's playhead arithmetic (`src/playback/clock.rs`),
//! against positions worked out by hand.

use crate::model::track::WrapMode;
use crate::playback::clock::{crossings, Clock};

#[test]
fn repeat_folds_and_counts_loops_both_ways() {
    let mut c = Clock::at(0.25, 1.0, WrapMode::Repeat);
    let s = c.step(2.5, 1.0, WrapMode::Repeat);
    assert_eq!((s.from, s.to, s.wraps, s.folds), (0.25, 0.75, 2, 2));
    let s = c.step(-1.0, 1.0, WrapMode::Repeat);
    assert_eq!((s.to, s.wraps), (0.75, -1));
}

#[test]
fn ping_pong_turns_at_the_ends() {
    let mut c = Clock::at(0.0, 2.0, WrapMode::PingPong);
    let s = c.step(3.0, 2.0, WrapMode::PingPong);
    // 0 -> 2 (turn) -> 1, moving back.
    assert_eq!((s.to, c.backwards, s.folds), (1.0, true, 1));
    let s = c.step(2.0, 2.0, WrapMode::PingPong);
    // 1 -> 0 (turn) -> 1, moving forward.
    assert_eq!((s.to, c.backwards, s.folds), (1.0, false, 1));
}

#[test]
fn clamp_stops_at_the_end_it_moves_to() {
    let mut c = Clock::at(0.5, 1.0, WrapMode::Clamp);
    let s = c.step(0.75, 1.0, WrapMode::Clamp);
    assert_eq!((s.to, s.reached_end), (1.0, true));
    let s = c.step(-0.25, 1.0, WrapMode::Clamp);
    assert_eq!((s.to, s.reached_end), (0.75, false));
}

#[test]
fn markers_are_crossed_once_per_crossing_in_playhead_order() {
    let mut out = Vec::new();
    let mut c = Clock::at(0.5, 1.0, WrapMode::Repeat);
    let s = c.step(2.0, 1.0, WrapMode::Repeat);
    // The marker at 0.5 is where the step starts: not crossed there, but
    // at 1.5 and 2.5.
    crossings(&s, 0.5, 1.0, WrapMode::Repeat, 100, &mut out);
    assert_eq!(out, [1.5, 2.5]);
    out.clear();
    let mut c = Clock::at(0.5, 1.0, WrapMode::Repeat);
    let s = c.step(-1.0, 1.0, WrapMode::Repeat);
    // Back from 0.5 to -0.5: 0.25 is passed; -0.75 is not reached.
    crossings(&s, 0.25, 1.0, WrapMode::Repeat, 100, &mut out);
    assert_eq!(out, [0.25]);
    out.clear();
    // Ping-pong from phase 0 over 3.5 s of a 1 s clip: 0.25 out (0.25),
    // back (1.75), out again (2.25); 3.5 is short of the next way back
    // (3.75).
    let mut c = Clock::at(0.0, 1.0, WrapMode::PingPong);
    let s = c.step(3.5, 1.0, WrapMode::PingPong);
    crossings(&s, 0.25, 1.0, WrapMode::PingPong, 100, &mut out);
    assert_eq!(out, [0.25, 1.75, 2.25]);
    out.clear();
    // The limit holds at any step.
    let mut c = Clock::at(0.0, 1.0, WrapMode::Repeat);
    let s = c.step(1e6, 1.0, WrapMode::Repeat);
    crossings(&s, 0.5, 1.0, WrapMode::Repeat, 8, &mut out);
    assert_eq!(out.len(), 8);
    assert_eq!(out[0], 0.5);
    out.clear();
    // Backwards too: the crossings nearest the start come first.
    let mut c = Clock::at(0.5, 1.0, WrapMode::Repeat);
    let s = c.step(-1e6, 1.0, WrapMode::Repeat);
    crossings(&s, 0.25, 1.0, WrapMode::Repeat, 3, &mut out);
    assert_eq!(out, [0.25, -0.75, -1.75]);
}
