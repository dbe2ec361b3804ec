//! A [`Player`]'s blend spaces ([`super::BlendSpace`]): entering one
//! (at once, or crossfading into it), its parameters, and per step the
//! spaces' fades, smoothed weights and synced playheads. A space's clips
//! are base actions whose weights the player sets each step (the space's
//! weights times its fade, summed over the spaces playing); a synced
//! space's playheads move by the shared phase, so that root motion and
//! markers (`advance.rs`) just see the actions' steps and weights.

use std::sync::Arc;

use glam::Vec2;

use super::blend::{check_params, smooth, weights, BlendSpaceId, BlendSync};
use super::player::Player;
use crate::cpu::playback::clock::{
    clock_at, clock_step_limited, duration_ticks, join, scale_ticks, seconds, slot_time, split,
    Step, WRAP_REPEAT,
};
use crate::cpu::playback::{clip_ticks, fade_ended, fade_weight};
use crate::error::{PlaybackError, Result};
use crate::layout::{
    GpuActionSlot, GpuPlaybackCommand, CHARACTER_PAUSED, SLOT_FADING, SLOT_FINISHED, SLOT_LAYER,
    SLOT_REPS, WRAP_BITS,
};
use crate::model::track::Marker;

/// A player's blend-space state.
#[derive(Debug, Clone, Default)]
pub(crate) struct Spaces {
    /// Per space of the clips (by index, grown on use): its parameters
    /// and weights.
    states: Vec<SpaceState>,
    /// The spaces playing, the oldest first.
    active: Vec<Active>,
    /// The synced spaces' shared phase, in `[0, 1)`.
    phase: f64,
    /// Per clip: its weight from the spaces playing this step, whether a
    /// space plays it, whether a synced one does.
    clip_weights: Vec<(f32, bool, bool)>,
    /// Per action of this step: the step a synced playhead takes.
    deltas: Vec<Option<i64>>,
    /// Scratch of a step (kept, so that steps allocate nothing once
    /// sized): the synced actions, the clips' marks before spaces end.
    synced: Vec<usize>,
    before: Vec<(f32, bool, bool)>,
}

/// One space's points and weights.
#[derive(Debug, Clone, Default)]
struct SpaceState {
    /// The clips' points (so that setting parameters allocates nothing).
    points: Vec<Vec2>,
    /// The weights now (smoothed) and where they head.
    weights: Vec<f32>,
    targets: Vec<f32>,
}

/// A space playing: its fade, a linear ramp `from -> to` over
/// `duration` ticks.
#[derive(Debug, Clone, Copy)]
struct Active {
    space: usize,
    fade: f32,
    from: f32,
    to: f32,
    elapsed: u64,
    duration: u64,
}

impl Spaces {
    /// Whether no space plays.
    pub(super) fn is_empty(&self) -> bool {
        self.active.is_empty()
    }
}

impl Active {
    fn advance(&mut self, dt: u64) {
        self.elapsed = self.elapsed.saturating_add(dt);
        self.fade = if self.elapsed >= self.duration {
            self.to
        } else {
            let f = self.elapsed as f32 / self.duration as f32;
            self.from + (self.to - self.from) * f
        };
    }
}

impl Player {
    /// The index of space `id` among this player's clips' spaces.
    fn space_of(&self, command: &'static str, id: BlendSpaceId) -> Result<usize> {
        if id.clips == self.clips.id() && (id.index as usize) < self.clips.spaces.len() {
            return Ok(id.index as usize);
        }
        Err(PlaybackError::UnknownBlendSpace {
            character: self.character,
            command,
            space: id.index,
            own: self.clips.id().get(),
        }
        .into())
    }

    /// Space `k`'s state, made on first use (parameters at the origin).
    fn space_state(&mut self, k: usize) -> &mut SpaceState {
        let spaces = &self.clips.spaces;
        while self.spaces.states.len() <= k {
            let space = &spaces[self.spaces.states.len()];
            let n = space.clips.len();
            let mut s = SpaceState {
                points: space.clips.iter().map(|c| c.1).collect(),
                weights: vec![0.0; n],
                targets: vec![0.0; n],
            };
            weights(space.kind, &s.points, Vec2::ZERO, &mut s.targets);
            s.weights.copy_from_slice(&s.targets);
            self.spaces.states.push(s);
        }
        &mut self.spaces.states[k]
    }

    /// [`Command::SetBlendParams`](super::Command::SetBlendParams).
    pub(crate) fn set_blend_params(&mut self, id: BlendSpaceId, params: Vec2) -> Result<()> {
        let k = self.space_of("set_blend_params", id)?;
        let space = &self.clips.spaces[k];
        if let Some(reason) = check_params(space.kind, params) {
            return Err(PlaybackError::BadBlendParams {
                character: self.character,
                space: space.name.clone(),
                reason,
            }
            .into());
        }
        let mode = space.kind;
        let playing = self.spaces.active.iter().any(|a| a.space == k);
        let s = self.space_state(k);
        weights(mode, &s.points, params, &mut s.targets);
        if !playing {
            s.weights.copy_from_slice(&s.targets);
        }
        Ok(())
    }

    /// [`Command::PlayBlendSpace`](super::Command::PlayBlendSpace).
    pub(crate) fn play_blend_space(&mut self, id: BlendSpaceId, duration: f64) -> Result<()> {
        let k = self.space_of("play_blend_space", id)?;
        if duration != 0.0 {
            self.check_duration("play_blend_space", duration)?;
        }
        let clips = Arc::clone(&self.clips);
        let space = &clips.spaces[k];
        let base = self.base_len();
        let layers = self.state.count as usize - base;
        let missing = space
            .clips
            .iter()
            .filter(|(c, _)| !self.slots[..base].iter().any(|s| s.clip == c.index()))
            .count();
        let needed = match duration == 0.0 {
            true => layers + space.clips.len(),
            false => layers + base + missing,
        };
        if needed > self.state.max_actions as usize {
            return Err(self.too_many("play_blend_space").into());
        }
        let phase = self.current_phase();
        self.space_state(k);
        if duration == 0.0 {
            self.enter_at_once(k)?;
        } else {
            self.enter_over(k, duration)?;
        }
        if space.sync != BlendSync::Off {
            self.spaces.phase = phase;
            self.snap_synced();
        }
        Ok(())
    }

    /// The base actions' count (they come before the layers).
    fn base_len(&self) -> usize {
        let n = self.state.count as usize;
        (0..n)
            .position(|i| self.slots[i].flags & SLOT_LAYER != 0)
            .unwrap_or(n)
    }

    /// The phase a synced space entered now starts at: the synced spaces'
    /// when one plays, else the current action's fraction of its clip.
    fn current_phase(&self) -> f64 {
        let synced = self
            .spaces
            .active
            .iter()
            .any(|a| a.to > 0.0 && self.clips.spaces[a.space].sync != BlendSync::Off);
        if synced {
            return self.spaces.phase;
        }
        let Some(current) = self.slots[..self.base_len()].last() else {
            return 0.0;
        };
        let d = clip_ticks(self.clips.table(), current.clip);
        if d == 0 {
            return 0.0;
        }
        (slot_time(current) as f64 / d as f64).fract()
    }

    /// Space `k` alone in the base at once, its clips at their weights.
    fn enter_at_once(&mut self, k: usize) -> Result<()> {
        let clips = Arc::clone(&self.clips);
        let space = &clips.spaces[k];
        let first = space.clips[0].0.index();
        self.apply("play_blend_space", &GpuPlaybackCommand::play(0, first))?;
        for (c, _) in &space.clips[1..] {
            self.add_space_action(c.index())?;
        }
        self.spaces.active.clear();
        self.spaces.active.push(Active {
            space: k,
            fade: 1.0,
            from: 1.0,
            to: 1.0,
            elapsed: 0,
            duration: 0,
        });
        self.set_space_weights();
        Ok(())
    }

    /// Crossfades into space `k` over `duration` seconds: the base's
    /// other actions and the other spaces ramp to 0, `k` from its fade
    /// (0 when it starts) to 1.
    fn enter_over(&mut self, k: usize, duration: f64) -> Result<()> {
        let clips = Arc::clone(&self.clips);
        self.mark_clips();
        for i in 0..self.base_len() {
            let clip = self.slots[i].clip;
            if !self.spaces.clip_weights[clip as usize].1 {
                let out = GpuPlaybackCommand::fade(0, clip, duration, true);
                self.apply("play_blend_space", &out)?;
            }
        }
        let ticks = duration_ticks(duration).max(1);
        let mut found = false;
        for a in &mut self.spaces.active {
            let to = if a.space == k { 1.0 } else { 0.0 };
            found |= a.space == k;
            *a = Active {
                from: a.fade,
                to,
                elapsed: 0,
                duration: ticks,
                ..*a
            };
        }
        if !found {
            self.spaces.active.push(Active {
                space: k,
                fade: 0.0,
                from: 0.0,
                to: 1.0,
                elapsed: 0,
                duration: ticks,
            });
        }
        for (c, _) in &clips.spaces[k].clips {
            let base = self.base_len();
            if !self.slots[..base].iter().any(|s| s.clip == c.index()) {
                self.add_space_action(c.index())?;
            }
        }
        self.set_space_weights();
        Ok(())
    }

    /// Adds a base action of `clip` at weight 0, not fading: a space's.
    fn add_space_action(&mut self, clip: u32) -> Result<()> {
        let cmd = GpuPlaybackCommand::fade(0, clip, 1.0, false);
        self.apply("play_blend_space", &cmd)?;
        let at = self.base_len() - 1;
        let s = &mut self.slots[at];
        s.flags &= !SLOT_FADING;
        s.weight = 0.0;
        Ok(())
    }

    /// Every clip's weight from the spaces playing, and whether a space
    /// (a synced one) plays it.
    fn mark_clips(&mut self) {
        let clips = &self.clips;
        let marks = &mut self.spaces.clip_weights;
        marks.clear();
        marks.resize(clips.len(), (0.0, false, false));
        for a in &self.spaces.active {
            let space = &clips.spaces[a.space];
            let Some(state) = self.spaces.states.get(a.space) else {
                continue;
            };
            for ((c, _), &w) in space.clips.iter().zip(&state.weights) {
                let m = &mut marks[c.index() as usize];
                m.0 += a.fade * w;
                m.1 = true;
                m.2 |= space.sync != BlendSync::Off;
            }
        }
    }

    /// The weight of base action `i` when a space plays its clip: the
    /// spaces' part plus what is left of its own fade-out (an action the
    /// space took over while it faded out).
    pub(super) fn space_weight(&mut self, i: usize) {
        let s = &mut self.slots[i];
        let Some(&(w, true, _)) = self.spaces.clip_weights.get(s.clip as usize) else {
            return;
        };
        if s.flags & SLOT_LAYER != 0 {
            return;
        }
        let own = if s.flags & SLOT_FADING == 0 {
            0.0
        } else if fade_ended(s) {
            s.flags &= !SLOT_FADING;
            0.0
        } else {
            fade_weight(s)
        };
        s.weight = own + w;
    }

    /// Sets every base action's weight from the spaces (when a command
    /// changed them).
    fn set_space_weights(&mut self) {
        self.mark_clips();
        for i in 0..self.base_len() {
            self.space_weight(i);
        }
    }

    /// Moves every synced action's playhead to the phase (no event, no
    /// root motion across the move), repeating.
    fn snap_synced(&mut self) {
        self.mark_clips();
        for i in 0..self.base_len() {
            let s = &mut self.slots[i];
            if !self.spaces.clip_weights[s.clip as usize].2 {
                continue;
            }
            let d = clip_ticks(self.clips.table(), s.clip);
            s.flags = (s.flags & !(WRAP_BITS | SLOT_REPS | SLOT_FINISHED)) | WRAP_REPEAT;
            let t = (self.spaces.phase * d as f64).round() as i64;
            clock_at(s, t, d, WRAP_REPEAT);
        }
    }

    /// Before a step of `dt` ticks: the spaces' fades and smoothed
    /// weights move, and each synced action's playhead step is set from
    /// the phase.
    pub(super) fn prepare_spaces(&mut self, dt: u64) {
        self.spaces.deltas.clear();
        if self.spaces.active.is_empty() {
            self.spaces.clip_weights.clear();
            return;
        }
        let paused = self.state.flags & CHARACTER_PAUSED != 0;
        let dt = if paused { 0 } else { dt };
        let clips = Arc::clone(&self.clips);
        for a in &mut self.spaces.active {
            a.advance(dt);
            let space = &clips.spaces[a.space];
            let step = space.smoothing.map(|w| w * seconds(dt) as f32);
            if let Some(s) = self.spaces.states.get_mut(a.space) {
                smooth(&mut s.weights, &s.targets, step);
            }
        }
        self.mark_clips();
        let count = self.state.count as usize;
        self.spaces.deltas.resize(count, None);
        let speed = join(self.state.speed_lo, self.state.speed_hi);
        let advance = scale_ticks(i64::try_from(dt).unwrap_or(i64::MAX), speed);
        self.sync_deltas(advance);
    }

    /// The synced actions' steps for `advance` ticks of the blended cycle.
    fn sync_deltas(&mut self, advance: i64) {
        let markers = self
            .spaces
            .active
            .iter()
            .any(|a| self.clips.spaces[a.space].sync == BlendSync::Markers && a.to > 0.0);
        let mut synced = std::mem::take(&mut self.spaces.synced);
        synced.clear();
        let table = self.clips.table();
        synced.extend((0..self.base_len()).filter(|&i| {
            let s = &self.slots[i];
            self.spaces.clip_weights[s.clip as usize].2 && clip_ticks(table, s.clip) > 0
        }));
        self.step_group(&synced, advance, markers);
        self.spaces.synced = synced;
    }

    /// The steps of the synced actions `synced` for `advance` ticks of
    /// their blended cycle (`markers`: marker sync).
    fn step_group(&mut self, synced: &[usize], advance: i64, markers: bool) {
        let table = self.clips.table();
        let (mut sum_w, mut sum_wl) = (0.0f64, 0.0f64);
        let mut leader: Option<(usize, f32)> = None;
        for &i in synced {
            let s = &self.slots[i];
            let w = self.spaces.clip_weights[s.clip as usize].0;
            sum_w += f64::from(w);
            sum_wl += f64::from(w) * clip_ticks(table, s.clip) as f64;
            if leader.is_none_or(|(_, lw)| w > lw) {
                leader = Some((i, w));
            }
        }
        let Some((lead, _)) = leader else {
            return;
        };
        let cycle = if sum_w > 0.0 {
            sum_wl / sum_w
        } else {
            clip_ticks(table, self.slots[lead].clip) as f64
        };
        if markers {
            let d = clip_ticks(table, self.slots[lead].clip);
            self.spaces.phase = slot_time(&self.slots[lead]) as f64 / d as f64;
        }
        let by = advance as f64 / cycle;
        let u = self.spaces.phase + by;
        let loops = u.floor();
        self.spaces.phase = u - loops;
        for &i in synced {
            let s = &self.slots[i];
            let d = clip_ticks(table, s.clip);
            let target = (self.spaces.phase * d as f64).round() as i64;
            // In i128: a step of 2^63 ticks is as many whole cycles.
            let delta =
                loops as i128 * i128::from(d) + i128::from(target) - i128::from(slot_time(s));
            let delta = delta.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
            self.spaces.deltas[i] = Some(delta);
        }
        if markers {
            let d = clip_ticks(table, self.slots[lead].clip);
            let t = (self.spaces.phase * d as f64).round() as u64 % d;
            self.marker_deltas(synced, lead, t, by);
        }
    }

    /// Marker sync: the leader `lead` goes to clip time `t` (its step
    /// set already); each other synced action to the same fraction of the
    /// way between the same named markers around it (or to the phase when
    /// it lacks them), `by` cycles on.
    fn marker_deltas(&mut self, synced: &[usize], lead: usize, t: u64, by: f64) {
        let table = self.clips.table();
        let leader = self.slots[lead].clip;
        let Some((a, b, f)) = marker_span(&self.clips, leader, t) else {
            return;
        };
        let whole = by.abs().floor() as i64;
        for &i in synced.iter().filter(|&&i| i != lead) {
            let s = &self.slots[i];
            let d = clip_ticks(table, s.clip);
            let phase_target = (self.spaces.phase * d as f64).round() as u64 % d;
            let Some(target) = matching_time(&self.clips, s.clip, (&a, &b, f), phase_target) else {
                continue;
            };
            let (now, d) = (slot_time(s) as i64, d as i64);
            let delta = if by >= 0.0 {
                (target as i64 - now)
                    .rem_euclid(d)
                    .saturating_add(whole.saturating_mul(d))
            } else {
                (-(now - target as i64).rem_euclid(d)).saturating_sub(whole.saturating_mul(d))
            };
            self.spaces.deltas[i] = Some(delta);
        }
    }

    /// The step of action `i` when a synced space moves it.
    pub(super) fn synced_step(&mut self, i: usize, dt: u64) -> Option<Step> {
        let delta = (*self.spaces.deltas.get(i)?)?;
        let d = clip_ticks(self.clips.table(), self.slots[i].clip);
        let paused = self.state.flags & CHARACTER_PAUSED != 0;
        let s = &mut self.slots[i];
        let step = clock_step_limited(s, delta, d, WRAP_REPEAT);
        if !paused && s.flags & SLOT_FADING != 0 {
            let elapsed = join(s.fade_elapsed_lo, s.fade_elapsed_hi).saturating_add(dt);
            (s.fade_elapsed_lo, s.fade_elapsed_hi) = split(elapsed);
            s.weight = fade_weight(s);
        }
        let loops = join(s.loops_lo, s.loops_hi).saturating_add(step.folds);
        (s.loops_lo, s.loops_hi) = split(loops);
        Some(step)
    }

    /// After a step: spaces whose fade reached 0 stop; their actions no
    /// other space plays end with them.
    pub(super) fn finish_spaces(&mut self) {
        if !self
            .spaces
            .active
            .iter()
            .any(|a| a.fade <= 0.0 && a.to <= 0.0)
        {
            return;
        }
        self.spaces
            .active
            .retain(|a| !(a.fade <= 0.0 && a.to <= 0.0));
        let mut before = std::mem::take(&mut self.spaces.before);
        before.clear();
        before.extend_from_slice(&self.spaces.clip_weights);
        self.mark_clips();
        for i in 0..self.base_len() {
            let s = &mut self.slots[i];
            let c = s.clip as usize;
            if before[c].1 && !self.spaces.clip_weights[c].1 && s.flags & SLOT_FADING == 0 {
                end_now(s);
            }
        }
        self.spaces.before = before;
    }

    /// Before a base command of the player's own (play, crossfade, fade,
    /// seek): the spaces stop, their actions going on as plain actions at
    /// their weights (a fade-out they were in restarts from there).
    pub(super) fn release_spaces(&mut self) {
        if self.spaces.active.is_empty() {
            return;
        }
        self.spaces.active.clear();
        self.spaces.clip_weights.clear();
        for i in 0..self.base_len() {
            let s = &mut self.slots[i];
            if s.flags & SLOT_FADING != 0 {
                s.fade_from = s.weight;
                (s.fade_elapsed_lo, s.fade_elapsed_hi) = (0, 0);
            }
        }
    }
}

/// Ends a slot with the step (a fade to 0 that has ended).
fn end_now(s: &mut GpuActionSlot) {
    s.flags |= SLOT_FADING;
    s.fade_to = 0.0;
    (s.fade_duration_lo, s.fade_duration_hi) = (1, 0);
    (s.fade_elapsed_lo, s.fade_elapsed_hi) = (1, 0);
}

/// The markers of `clip` around clip time `t` ticks: the last at or
/// before it and the next after it (cyclically), and `t`'s fraction of
/// the way between them; `None` without markers. Allocates nothing.
fn marker_span(clips: &super::Clips, clip: u32, t: u64) -> Option<(Arc<str>, Arc<str>, f64)> {
    let markers = clips.markers(clip);
    let (first, last) = (markers.first()?, markers.last()?);
    let d = clip_ticks(clips.table(), clip) as i64;
    let at = |m: &Marker| duration_ticks(m.time) as i64;
    let t = t as i64;
    let (a, ta) = match markers.iter().rfind(|m| at(m) <= t) {
        Some(m) => (m, at(m)),
        None => (last, at(last) - d),
    };
    let (b, tb) = match markers.iter().find(|m| at(m) > t) {
        Some(m) => (m, at(m)),
        None => (first, at(first) + d),
    };
    let f = if tb > ta {
        (t - ta) as f64 / (tb - ta) as f64
    } else {
        0.0
    };
    Some((Arc::clone(&a.name), Arc::clone(&b.name), f))
}

/// The clip time of `clip` at fraction `f` of the way between a marker
/// named `a` and the next one, named `b` (cyclically), the nearest to
/// `near` of those; `None` when it has no such pair.
fn matching_time(
    clips: &super::Clips,
    clip: u32,
    (a, b, f): (&str, &str, f64),
    near: u64,
) -> Option<u64> {
    let markers = clips.markers(clip);
    let d = clip_ticks(clips.table(), clip) as i64;
    let n = markers.len();
    let mut best: Option<(i64, u64)> = None;
    for k in 0..n {
        let next = (k + 1) % n;
        if *markers[k].name != *a || *markers[next].name != *b {
            continue;
        }
        let ta = duration_ticks(markers[k].time) as i64;
        let mut tb = duration_ticks(markers[next].time) as i64;
        if tb <= ta {
            tb += d;
        }
        let t = (ta + ((tb - ta) as f64 * f).round() as i64).rem_euclid(d) as u64;
        let gap = (t as i64 - near as i64).rem_euclid(d);
        let gap = gap.min(d - gap);
        if best.is_none_or(|(g, _)| gap < g) {
            best = Some((gap, t));
        }
    }
    best.map(|(_, t)| t)
}

impl Player {
    /// After a seek: the synced spaces take their phase from the heaviest
    /// synced action's new place, and the others follow it.
    pub(super) fn resync(&mut self) {
        self.mark_clips();
        let table = self.clips.table();
        let lead = (0..self.base_len())
            .filter(|&i| self.spaces.clip_weights[self.slots[i].clip as usize].2)
            .max_by(|&a, &b| {
                let w = |i: usize| self.spaces.clip_weights[self.slots[i].clip as usize].0;
                w(a).total_cmp(&w(b))
            });
        let Some(lead) = lead else {
            return;
        };
        let d = clip_ticks(table, self.slots[lead].clip);
        if d > 0 {
            self.spaces.phase = (slot_time(&self.slots[lead]) as f64 / d as f64).fract();
            self.snap_synced();
        }
    }
}
