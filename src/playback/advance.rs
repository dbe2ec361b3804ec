//! [`Player::advance`]: a frame's step of every playhead and fade, and its
//! report (the action table, root motion, markers crossed).

use std::sync::Arc;

use super::player::Player;
use super::root::Blend;
use super::{Event, Frame, MAX_EVENTS_PER_STEP};
use crate::cpu::playback::clock::{
    crossings, duration_ticks, join, seconds, slot_time, ticks, Step,
};
use crate::cpu::playback::{clip_ticks, finish_character, step_slot};
use crate::error::Result;
use crate::layout::{NO_MASK, SLOT_ADDITIVE, SLOT_OVERRIDES, WRAP_BITS};
use crate::model::mix::{Action, MaskId};
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
        let speed = self.speed();
        for p in self.playing() {
            let own = f64::from_bits(join(p.speed_lo, p.speed_hi));
            self.check_number("advance", "dt * speed", dt * speed * own, false)?;
        }
        self.step(ticks(dt).unsigned_abs());
        Ok(&self.frame)
    }

    /// [`advance`](Self::advance) by `dt` ticks, checked (or, for a
    /// character's twin, stepped as the GPU steps it: a step past `i64`'s
    /// range is saturated, not refused).
    /// Reads a word of each cache line a [`step`](Self::step) starts from
    /// (the record, the actions in use, the action table) and returns
    /// their sum: a loop of these over many players has short, independent
    /// iterations, so the processor fetches their lines in parallel, where
    /// the steps themselves would miss one line after another.
    pub(crate) fn touch(&self) -> u32 {
        let table = self.frame.actions.first().map_or(0, |a| a.clip);
        self.playing()
            .iter()
            .fold(self.state.count ^ table, |sum, s| {
                sum.wrapping_add(s.clip ^ s.fade_elapsed_hi)
            })
    }

    pub(crate) fn step(&mut self, dt: u64) {
        self.frame.events.clear();
        self.override_motion.clear();
        let mut blend = Blend::new();
        self.prepare_spaces(dt);
        for i in 0..self.playing().len() {
            let d = clip_ticks(self.clips.table(), self.slots[i].clip);
            let step = match self.synced_step(i, dt) {
                Some(step) => step,
                None => step_slot(&self.state, &mut self.slots[i], dt, d),
            };
            self.space_weight(i);
            self.add_root_motion(i, &step, &mut blend);
            if step.start != step.end {
                self.push_marker_events(i, &step, d);
            }
        }
        for &(m, w, animates) in &self.override_motion {
            blend.overridden(m, w, animates);
        }
        self.finish_spaces();
        // Fades that reached 0 end their action; others keep their weight.
        finish_character(&mut self.state, &mut self.slots);
        self.frame.root_motion = blend.finish();
        self.fill_actions();
    }

    /// The frame's action table from the actions in use.
    pub(crate) fn fill_actions(&mut self) {
        self.frame.actions.clear();
        let count = self.state.count as usize;
        self.frame
            .actions
            .extend(self.slots[..count].iter().map(|p| {
                Action {
                    clip: p.clip,
                    time: seconds(slot_time(p)),
                    wrap: WrapMode::Clamp,
                    weight: p.weight,
                    mask: (p.mask != NO_MASK).then(|| MaskId::new(p.mask)),
                    reference_time: (p.flags & SLOT_ADDITIVE != 0)
                        .then(|| f64::from_bits(join(p.reference_lo, p.reference_hi))),
                    overrides: p.flags & SLOT_OVERRIDES != 0,
                }
            }));
    }

    /// Adds action `i`'s root motion over `step` to the frame's blend (an
    /// override action's waits for the normal ones in `override_motion`;
    /// an additive action moves no root). An action that stands still
    /// still takes its weight's part of the blend, with no motion.
    fn add_root_motion(&mut self, i: usize, step: &Step, blend: &mut Blend) {
        let Some(root) = &self.clips.root else {
            return;
        };
        let p = &self.slots[i];
        if p.flags & SLOT_ADDITIVE != 0 {
            return;
        }
        // The mixer's weight of the action at the root.
        let mask = (p.mask != NO_MASK).then(|| MaskId::new(p.mask));
        let w = p.weight * root.mask_factor(mask);
        if w.is_nan() || w <= 0.0 {
            return;
        }
        let duration = self.clips.duration(p.clip).unwrap_or(0.0);
        let m = root.motion(p.clip, duration, p.flags & WRAP_BITS, step);
        let animates = root.animates(p.clip);
        if p.flags & SLOT_OVERRIDES != 0 {
            self.override_motion.push((m, w, animates));
        } else {
            blend.add(m, w, animates);
        }
    }

    /// Reports the markers action `i`'s playhead crossed in `step` (of a
    /// clip `duration` seconds long) as events, in playhead order, at most
    /// [`MAX_EVENTS_PER_STEP`]; allocates nothing once its buffers have
    /// grown.
    fn push_marker_events(&mut self, i: usize, step: &Step, d: u64) {
        let Some(p) = self.playing().get(i).copied() else {
            return;
        };
        let markers = self.clips.markers(p.clip);
        // Every marker's crossings, then all of them in playhead order.
        self.hits.clear();
        for (k, marker) in markers.iter().enumerate() {
            let before = self.positions.len();
            crossings(
                step,
                duration_ticks(marker.time),
                d,
                p.flags & WRAP_BITS,
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
            let order = a.0.cmp(&b.0);
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
