//! [`Player::advance`]: a frame's step of every playhead and fade, and its
//! report (the action table, root motion, markers crossed).

use std::sync::Arc;

use super::clock::{crossings, Step};
use super::player::Player;
use super::root::Blend;
use super::{Event, Frame, MAX_EVENTS_PER_STEP};
use crate::error::Result;
use crate::model::mix::Action;
use crate::model::track::WrapMode;

impl Player {
    /// Advances every playhead by `dt * speed` seconds and every fade by
    /// `dt` (a paused player: neither), then reports the frame: the
    /// action table, the root motion over the step and the markers
    /// crossed.
    ///
    /// # Errors
    /// [`PlaybackError::BadNumber`](crate::playback::PlaybackError::BadNumber)
    /// for a `dt` that is NaN, infinite or negative, or whose product with
    /// an action's speed is infinite; nothing advances.
    pub fn advance(&mut self, dt: f64) -> Result<&Frame> {
        self.check_number("advance", "dt", dt, true)?;
        // A step past f64's range (a huge dt times a huge speed) moves no
        // playhead anywhere meaningful: refused before anything moves.
        for p in &self.playing {
            self.check_number("advance", "dt * speed", dt * self.speed * p.speed, false)?;
        }
        self.frame.events.clear();
        self.override_motion.clear();
        let mut blend = Blend::new();
        for i in 0..self.playing.len() {
            let (step, duration) = self.step_action(i, dt);
            self.add_root_motion(i, &step, duration, &mut blend);
            if step.start != step.end {
                self.push_marker_events(i, &step, duration);
            }
        }
        for &(m, w, animates) in &self.override_motion {
            blend.overridden(m, w, animates);
        }
        // Fades that reached 0 end their action; others keep their weight.
        self.playing.retain(|p| match p.fade {
            Some(f) if f.elapsed >= f.duration => f.to > 0.0,
            _ => true,
        });
        for p in &mut self.playing {
            if p.fade.is_some_and(|f| f.elapsed >= f.duration) {
                p.fade = None;
            }
        }
        self.frame.root_motion = blend.finish();
        self.frame.actions.clear();
        self.frame
            .actions
            .extend(self.playing.iter().map(|p| Action {
                clip: p.clip,
                time: p.clock.time,
                wrap: WrapMode::Clamp,
                weight: p.weight,
                mask: p.mask,
                reference_time: p.reference_time,
                overrides: p.overrides,
            }));
        Ok(&self.frame)
    }

    /// Moves action `i`'s playhead and fade by one step of `dt` (none
    /// when paused), counting its loops and noting when it finishes;
    /// returns the step and the clip's duration.
    fn step_action(&mut self, i: usize, dt: f64) -> (Step, f64) {
        let moving = !self.paused;
        let speed = self.speed;
        let clips = Arc::clone(&self.clips);
        let p = &mut self.playing[i];
        let d = clips.duration(p.clip).unwrap_or(0.0);
        let delta = if moving { dt * speed * p.speed } else { 0.0 };
        let step = p.clock.step_limited(delta, d, p.wrap, p.repetitions);
        if moving {
            if let Some(f) = &mut p.fade {
                f.elapsed += dt;
                p.weight = f.weight();
            }
        }
        p.loops = p.loops.saturating_add(step.folds);
        if step.reached_end {
            p.finished = true;
        }
        (step, d)
    }

    /// Adds action `i`'s root motion over `step` to the frame's blend (an
    /// override action's waits for the normal ones in `override_motion`;
    /// an additive action moves no root). An action that stands still
    /// still takes its weight's part of the blend, with no motion.
    fn add_root_motion(&mut self, i: usize, step: &Step, duration: f64, blend: &mut Blend) {
        let Some(root) = &self.clips.root else {
            return;
        };
        let p = &self.playing[i];
        if p.reference_time.is_some() {
            return;
        }
        // The mixer's weight of the action at the root.
        let w = p.weight * root.mask_factor(p.mask);
        if w.is_nan() || w <= 0.0 {
            return;
        }
        let m = root.motion(p.clip, duration, p.wrap, step, &mut self.scratch);
        let animates = root.animates(p.clip);
        if p.overrides {
            self.override_motion.push((m, w, animates));
        } else {
            blend.add(m, w, animates);
        }
    }

    /// Reports the markers action `i`'s playhead crossed in `step` (of a
    /// clip `duration` seconds long) as events, in playhead order, at most
    /// [`MAX_EVENTS_PER_STEP`]; allocates nothing once its buffers have
    /// grown.
    fn push_marker_events(&mut self, i: usize, step: &Step, duration: f64) {
        let Some(p) = self.playing.get(i) else {
            return;
        };
        let markers = self.clips.markers(p.clip);
        // Every marker's crossings, then all of them in playhead order.
        self.hits.clear();
        for (k, marker) in markers.iter().enumerate() {
            let before = self.positions.len();
            crossings(
                step,
                marker.time,
                duration,
                p.wrap,
                MAX_EVENTS_PER_STEP,
                &mut self.positions,
            );
            self.hits
                .extend(self.positions.drain(before..).map(|at| (at, k)));
        }
        // By playhead position, then (markers at the same time) by
        // marker; unstable, as the keys are distinct, so nothing is
        // allocated.
        let forward = step.end > step.start;
        self.hits.sort_unstable_by(|a, b| {
            let order = a.0.total_cmp(&b.0);
            let order = if forward { order } else { order.reverse() };
            order.then(a.1.cmp(&b.1))
        });
        self.hits.truncate(MAX_EVENTS_PER_STEP);
        let clip = self.clips.handle(p.clip);
        for &(_, k) in &self.hits {
            let marker = &markers[k];
            self.frame.events.push(Event {
                name: Arc::clone(&marker.name),
                clip,
                time: marker.time,
                weight: p.weight,
            });
        }
    }
}
