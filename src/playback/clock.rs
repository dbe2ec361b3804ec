//! One action's playhead: where it is in its clip, how a step moves it
//! (folding by the wrap mode), and what the step crossed (loop ends,
//! markers). Device-free arithmetic in `f64`.

use crate::model::track::WrapMode;

/// A playhead in a clip of `duration` seconds: the clip time (in
/// `[0, duration]`) and, for ping-pong, the direction of the current pass.
///
/// A clock set (at a start or a seek) whose first step goes backwards
/// plays as three.js's `AnimationAction` does (`_updateTime`, loop count
/// -1 "just started"): its first fold, the initial transition through
/// the clip's start, is no pass and no loop (it enters the first pass),
/// and a ping-pong playhead plays that first pass from the end (its
/// phase moves by one duration: clip time `t` becomes `duration - t`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Clock {
    pub(crate) time: f64,
    /// Ping-pong: the current pass runs backwards.
    pub(crate) backwards: bool,
    /// Passes ended (loop ends, ping-pong turns) since the clock was set,
    /// the free fold (below) aside.
    pub(crate) passes: u64,
    /// The clock played its last repetition and holds at its end.
    pub(crate) done: bool,
    /// No step has moved it since it was set.
    pub(crate) fresh: bool,
    /// Its next fold is the initial transition of a start backwards: it
    /// counts as no pass (three.js's loop count going from -1 to 0).
    pub(crate) free_fold: bool,
}

/// What one step of a playhead did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Step {
    /// The clip time before and after.
    pub(crate) from: f64,
    pub(crate) to: f64,
    /// The step in the unfolded timeline (repeat: clip time plus whole
    /// loops; ping-pong: the phase over a period of two durations;
    /// clamp: clip time) from `start` to `end`.
    pub(crate) start: f64,
    pub(crate) end: f64,
    /// Repeat: whole loops crossed, signed (forward positive).
    pub(crate) wraps: i64,
    /// Loop ends (repeat) or turns (ping-pong) crossed, counted.
    pub(crate) folds: u64,
    /// Clamp: the step reached the end it moved towards.
    pub(crate) reached_end: bool,
}

impl Clock {
    /// A playhead at clip time `time`, folded into the clip by `wrap`.
    pub(crate) fn at(time: f64, duration: f64, wrap: WrapMode) -> Clock {
        let mut c = Clock {
            time: 0.0,
            backwards: false,
            passes: 0,
            done: false,
            fresh: true,
            free_fold: false,
        };
        if duration > 0.0 {
            let s = c.step(time, duration, wrap);
            c.time = s.to;
        }
        c
    }

    /// [`step`](Self::step), ending the clock's last pass where a limit of
    /// `repetitions` passes (repeat: loops; ping-pong: passes out or back)
    /// runs out: the playhead stops at the end of that pass (repeat: at
    /// the clip's end moving forward, at its start moving back; ping-pong:
    /// at the end the pass turns at), the step ends there with
    /// `reached_end`, and later steps hold it still. With no pass left
    /// it stops where it stands. `None`, or a [`WrapMode::Clamp`]
    /// playhead: no limit. The step's `folds` are the passes it ended:
    /// a fresh clock's first step backwards enters its first pass (see
    /// [`Clock`]).
    pub(crate) fn step_limited(
        &mut self,
        delta: f64,
        duration: f64,
        wrap: WrapMode,
        repetitions: Option<u64>,
    ) -> Step {
        // Passes left under the limit (`None`: no limit).
        let left = match repetitions {
            Some(n) if wrap != WrapMode::Clamp => Some(n.saturating_sub(self.passes)),
            _ => None,
        };
        if self.done || left == Some(0) {
            // Done, or no pass left (a limit lowered below the passes
            // played): the playhead stops where it stands.
            self.done = true;
            let mut s = self.step(0.0, duration, wrap);
            s.reached_end = true;
            return s;
        }
        self.start_moving(delta, duration, wrap);
        let before = *self;
        let mut s = self.step(delta, duration, wrap);
        // The free fold, when this step makes it, is the boundary crossed
        // before the counted ones.
        let extra = u64::from(before.free_fold && s.folds > 0);
        s.folds -= extra;
        self.free_fold = before.free_fold && extra == 0;
        let Some(left) = left else {
            self.passes = before.passes.saturating_add(s.folds);
            return s;
        };
        if s.folds < left {
            self.passes = before.passes + s.folds;
            return s;
        }
        self.stop_at_pass_end(&mut s, before, duration, wrap, (left, extra), delta);
        s
    }

    /// The first step that moves a fresh clock: backwards (repeat or
    /// ping-pong), its next fold is free, and a ping-pong phase moves by
    /// one duration so that the first pass plays from the end.
    fn start_moving(&mut self, delta: f64, duration: f64, wrap: WrapMode) {
        if !self.fresh || delta == 0.0 || duration <= 0.0 {
            return;
        }
        self.fresh = false;
        if delta > 0.0 || wrap == WrapMode::Clamp {
            return;
        }
        self.free_fold = true;
        if wrap == WrapMode::PingPong {
            let period = 2.0 * duration;
            let mut phase = self.phase(duration) + duration;
            if phase >= period {
                phase -= period;
            }
            self.backwards = phase > duration;
            self.time = if self.backwards {
                period - phase
            } else {
                phase
            };
        }
    }

    /// Ends step `s` (which started from clock `before`) at the end of the
    /// `left`-th pass it counts, the `extra` free fold crossed before
    /// them: the end is a multiple `m` of the duration in the unfolded
    /// timeline, the `(left + extra)`-th boundary from the start (moving
    /// forward the next one past it; moving back the start itself, or the
    /// one before it, as `Step::folds` counts them).
    fn stop_at_pass_end(
        &mut self,
        s: &mut Step,
        before: Clock,
        duration: f64,
        wrap: WrapMode,
        (left, extra): (u64, u64),
        delta: f64,
    ) {
        let k0 = (s.start / duration).floor();
        let j = (left + extra) as f64;
        let m = if delta > 0.0 { k0 + j } else { k0 - j + 1.0 };
        let end = m * duration;
        // Repeat: the clip's end (forward) or start (back); ping-pong: the
        // end the pass turns at, by the parity of `m`.
        let to = match wrap {
            WrapMode::Repeat if delta > 0.0 => duration,
            WrapMode::Repeat => 0.0,
            _ if m.rem_euclid(2.0) == 1.0 => duration,
            _ => 0.0,
        };
        s.end = end;
        s.to = to;
        // The whole loops between `from` and `to`, so that `wraps * d + to`
        // is still the unfolded end.
        s.wraps = if wrap == WrapMode::Repeat {
            (m - if delta > 0.0 { 1.0 } else { 0.0 }) as i64
        } else {
            0
        };
        s.folds = left;
        s.reached_end = true;
        *self = Clock {
            time: to,
            backwards: false,
            passes: before.passes.saturating_add(left),
            done: true,
            fresh: false,
            free_fold: false,
        };
    }

    /// The ping-pong phase of this playhead, in `[0, 2 * duration)`.
    fn phase(&self, duration: f64) -> f64 {
        if self.backwards {
            2.0 * duration - self.time
        } else {
            self.time
        }
    }

    /// Moves the playhead by `delta` seconds of clip time (negative:
    /// backwards) and returns what the step did. A clip of duration 0
    /// stays at 0.
    pub(crate) fn step(&mut self, delta: f64, duration: f64, wrap: WrapMode) -> Step {
        let from = self.time;
        if duration <= 0.0 || delta == 0.0 {
            return Step {
                from,
                to: from,
                start: from,
                end: from,
                wraps: 0,
                folds: 0,
                reached_end: false,
            };
        }
        match wrap {
            WrapMode::Clamp => {
                let to = (from + delta).clamp(0.0, duration);
                self.time = to;
                // Only ping-pong runs passes backwards; a later switch to
                // ping-pong starts moving forwards again.
                self.backwards = false;
                Step {
                    from,
                    to,
                    start: from,
                    end: to,
                    wraps: 0,
                    folds: 0,
                    reached_end: (delta > 0.0 && to >= duration) || (delta < 0.0 && to <= 0.0),
                }
            }
            WrapMode::Repeat => {
                let end = from + delta;
                let (loops, to) = fold(end, duration);
                self.time = to;
                self.backwards = false;
                // Saturates for steps past i64's range of loops.
                let wraps = loops as i64;
                Step {
                    from,
                    to: self.time,
                    start: from,
                    end,
                    wraps,
                    folds: wraps.unsigned_abs(),
                    reached_end: false,
                }
            }
            WrapMode::PingPong => {
                let period = 2.0 * duration;
                let start = self.phase(duration);
                let end = start + delta;
                let (_, q) = fold(end, period);
                self.backwards = q > duration;
                self.time = if self.backwards { period - q } else { q };
                let folds = ((end / duration).floor() - (start / duration).floor()).abs() as u64;
                Step {
                    from,
                    to: self.time,
                    start,
                    end,
                    wraps: 0,
                    folds,
                    reached_end: false,
                }
            }
        }
    }
}

/// `x` as whole periods of `period` and the rest, in `[0, period)`. When
/// rounding puts the rest at `period` it is the start of the next period;
/// below 0 (a product that rounded past `x`, or a step so long that `f64`
/// holds no fraction of a period), the start of this one. The periods
/// then always agree with the rest, so a loop is counted exactly when the
/// playhead folds.
fn fold(x: f64, period: f64) -> (f64, f64) {
    let mut periods = (x / period).floor();
    let mut rest = x - periods * period;
    if rest >= period {
        periods += 1.0;
        rest = 0.0;
    }
    if rest.is_nan() || rest < 0.0 {
        rest = 0.0;
    }
    (periods, rest)
}

/// The playhead positions in the unfolded timeline of `step` at which
/// clip time `marker` is passed, in playhead order, at most `limit` of
/// them: in `(start, end]` moving forward, `[end, start)` moving back.
pub(crate) fn crossings(
    step: &Step,
    marker: f64,
    duration: f64,
    wrap: WrapMode,
    limit: usize,
    out: &mut Vec<f64>,
) {
    let (start, end) = (step.start, step.end);
    if start == end || duration <= 0.0 || !(0.0..=duration).contains(&marker) {
        return;
    }
    let forward = end > start;
    let inside = |p: f64| {
        if forward {
            p > start && p <= end
        } else {
            p >= end && p < start
        }
    };
    let (lo, hi) = if forward { (start, end) } else { (end, start) };
    // Appended to `out` in place, so a step allocates nothing once `out`
    // has grown.
    let first = out.len();
    let found = out;
    match wrap {
        WrapMode::Clamp => {
            if inside(marker) {
                found.push(marker);
            }
        }
        WrapMode::Repeat => {
            // A marker at the duration is the instant a loop starts again.
            let m = if marker >= duration { 0.0 } else { marker };
            walk(lo, hi, duration, forward, first + limit, found, |j| {
                let p = m + j as f64 * duration;
                [inside(p).then_some(p), None]
            });
        }
        WrapMode::PingPong => {
            let period = 2.0 * duration;
            // The phases of the marker in one period: on the way out, and
            // on the way back (the same instant at either end).
            let back = (marker > 0.0 && marker < duration).then_some(period - marker);
            walk(lo, hi, period, forward, first + limit, found, |j| {
                let base = j as f64 * period;
                let out = marker + base;
                let back = back.map(|b| b + base);
                if forward {
                    [inside(out).then_some(out), back.filter(|&p| inside(p))]
                } else {
                    [back.filter(|&p| inside(p)), inside(out).then_some(out)]
                }
            });
        }
    }
    let mine = &mut found[first..];
    if forward {
        mine.sort_unstable_by(f64::total_cmp);
    } else {
        mine.sort_unstable_by(|a, b| b.total_cmp(a));
    }
    found.truncate(first + limit);
}

/// Calls `at(j)` for the periods `j` of length `period` that overlap
/// `[lo, hi]`, from the step's start (`lo` moving forward, `hi` moving
/// back), collecting what it finds until `found` holds more than `limit`.
fn walk(
    lo: f64,
    hi: f64,
    period: f64,
    forward: bool,
    limit: usize,
    found: &mut Vec<f64>,
    at: impl Fn(i64) -> [Option<f64>; 2],
) {
    // Float-to-int casts saturate; the walk stops at either end of i64.
    let (first, last) = (
        ((lo / period).floor() as i64).saturating_sub(1),
        (hi / period).ceil() as i64,
    );
    let mut j = Some(if forward { first } else { last });
    while let Some(k) = j.filter(|k| (first..=last).contains(k) && found.len() <= limit) {
        found.extend(at(k).into_iter().flatten());
        j = if forward {
            k.checked_add(1)
        } else {
            k.checked_sub(1)
        };
    }
}
