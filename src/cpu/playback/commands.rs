//! The commands of a character's playback ([`GpuPlaybackCommand`]), as
//! `shaders/playback.wgsl` applies them: play, crossfades and fades,
//! speed, pause, seek, wraps and repetitions, layers. Each is the rule of
//! the `Player` method of the same name (`docs/USAGE.md`, "Playback"),
//! applied to the character's records; what depends on the state (a
//! table with no room, a layer gone) is refused here with nothing
//! changed, and reported as a status.
//!
//! The builders ([`GpuPlaybackCommand::play`] and the others) are the
//! host's half: the arguments, checked by the caller, turned into a
//! record (ticks, the rate of a fade, bits of `f64`s).

use super::clip_ticks;
use super::clock::{clock_at, duration_ticks, join, split, ticks, wrap_bits, WRAP_REPEAT};
use crate::layout::{
    GpuActionSlot, GpuCharacter, GpuPlaybackClip, GpuPlaybackCommand, APPLIED, CHARACTER_PAUSED,
    CMD_ADD_LAYER, CMD_CLIP_REPETITIONS, CMD_CLIP_WRAP, CMD_CROSSFADE, CMD_CROSSFADE_AT,
    CMD_FADE_IN, CMD_FADE_LAYER, CMD_FADE_OUT, CMD_PAUSE, CMD_PLACE, CMD_PLAY, CMD_REMOVE_LAYER,
    CMD_REPETITIONS, CMD_RESET, CMD_SEEK, CMD_SET_LAYER, CMD_SPEED, CMD_WRAP, KEPT_SET, KEPT_WORDS,
    NO_MASK, REFUSED_FULL, REFUSED_NO_LAYER, SLOT_ADDITIVE, SLOT_FADING, SLOT_FINISHED, SLOT_FRESH,
    SLOT_LAYER, SLOT_OVERRIDES, SLOT_REPS, WRAP_BITS,
};
use crate::model::track::WrapMode;

/// A character's records as one command sees them: its state, its slots
/// (as many as it may hold) and its kept settings per clip.
pub(crate) struct Playback<'a> {
    pub(crate) character: &'a mut GpuCharacter,
    pub(crate) slots: &'a mut [GpuActionSlot],
    pub(crate) kept: &'a mut [u32],
    pub(crate) clips: &'a [GpuPlaybackClip],
}

/// A character playing nothing: speed 1, clips starting on repeat with no
/// repetition limit, room for `max_actions` actions.
pub(crate) fn new_character(max_actions: u32) -> GpuCharacter {
    let (speed_lo, speed_hi) = split(1.0f64.to_bits());
    GpuCharacter {
        speed_lo,
        speed_hi,
        flags: WRAP_REPEAT,
        count: 0,
        repetitions_lo: 0,
        repetitions_hi: 0,
        max_actions,
        _pad0: 0,
    }
}

impl GpuPlaybackCommand {
    /// A command of `kind` for `character` naming `clip`, nothing else set.
    fn of(character: u32, kind: u32, clip: u32) -> Self {
        GpuPlaybackCommand {
            character,
            kind,
            clip,
            flags: 0,
            duration_lo: 1,
            duration_hi: 0,
            time_lo: 0,
            time_hi: 0,
            rate: 1.0,
            weight: 0.0,
            speed_lo: 0,
            speed_hi: 0,
            repetitions_lo: 0,
            repetitions_hi: 0,
            mask: NO_MASK,
            layer: 0,
            reference_lo: 0,
            reference_hi: 0,
            reference_time: 0.0,
            _pad0: 0,
        }
    }

    /// The same command with a fade of `seconds > 0` (at least one tick).
    fn with_duration(mut self, seconds: f64) -> Self {
        let d = duration_ticks(seconds).max(1);
        (self.duration_lo, self.duration_hi) = split(d);
        self.rate = (1.0 / d as f64) as f32;
        self
    }

    /// The same command with a time of `seconds` (finite).
    fn with_time(mut self, seconds: f64) -> Self {
        (self.time_lo, self.time_hi) = split(ticks(seconds) as u64);
        self
    }

    fn with_repetitions(mut self, repetitions: Option<u64>) -> Self {
        if let Some(n) = repetitions {
            self.flags |= SLOT_REPS;
            (self.repetitions_lo, self.repetitions_hi) = split(n);
        }
        self
    }

    /// `play(clip)`.
    pub(crate) fn play(character: u32, clip: u32) -> Self {
        Self::of(character, CMD_PLAY, clip)
    }

    /// `crossfade(to, seconds)`, or `crossfade_at(to, seconds, at)`.
    pub(crate) fn crossfade(character: u32, to: u32, seconds: f64, at: Option<f64>) -> Self {
        match at {
            Some(t) => Self::of(character, CMD_CROSSFADE_AT, to)
                .with_duration(seconds)
                .with_time(t),
            None => Self::of(character, CMD_CROSSFADE, to).with_duration(seconds),
        }
    }

    /// `fade_in(clip, seconds)` (`out`: `fade_out`).
    pub(crate) fn fade(character: u32, clip: u32, seconds: f64, out: bool) -> Self {
        let kind = if out { CMD_FADE_OUT } else { CMD_FADE_IN };
        Self::of(character, kind, clip).with_duration(seconds)
    }

    /// `set_speed(speed)`.
    pub(crate) fn speed(character: u32, speed: f64) -> Self {
        let mut c = Self::of(character, CMD_SPEED, 0);
        (c.speed_lo, c.speed_hi) = split(speed.to_bits());
        c
    }

    /// `set_paused(paused)`.
    pub(crate) fn pause(character: u32, paused: bool) -> Self {
        let mut c = Self::of(character, CMD_PAUSE, 0);
        if paused {
            c.flags |= CHARACTER_PAUSED;
        }
        c
    }

    /// `seek(seconds)`.
    pub(crate) fn seek(character: u32, seconds: f64) -> Self {
        Self::of(character, CMD_SEEK, 0).with_time(seconds)
    }

    /// `set_wrap(wrap)` (`clip`: `set_clip_wrap(clip, wrap)`).
    pub(crate) fn wrap(character: u32, clip: Option<u32>, wrap: WrapMode) -> Self {
        let mut c = match clip {
            Some(clip) => Self::of(character, CMD_CLIP_WRAP, clip),
            None => Self::of(character, CMD_WRAP, 0),
        };
        c.flags |= wrap_bits(wrap);
        c
    }

    /// `set_repetitions(n)` (`clip`: `set_clip_repetitions(clip, n)`).
    pub(crate) fn repetitions(character: u32, clip: Option<u32>, n: Option<u64>) -> Self {
        match clip {
            Some(clip) => Self::of(character, CMD_CLIP_REPETITIONS, clip),
            None => Self::of(character, CMD_REPETITIONS, 0),
        }
        .with_repetitions(n)
    }

    /// `add_layer` (`add`) or `set_layer` of layer number `layer` playing
    /// `clip` with these settings; `reference` is an additive layer's
    /// reference time with the clip's duration, for the sampler's `f32`.
    pub(crate) fn layer(
        character: u32,
        clip: u32,
        layer: u32,
        add: bool,
        s: &LayerSettings,
    ) -> Self {
        let kind = if add { CMD_ADD_LAYER } else { CMD_SET_LAYER };
        let mut c = Self::of(character, kind, clip).with_repetitions(s.repetitions);
        c.flags |= wrap_bits(s.wrap);
        c.layer = layer;
        c.weight = s.weight;
        c.mask = s.mask.unwrap_or(NO_MASK);
        (c.speed_lo, c.speed_hi) = split(s.speed.to_bits());
        if s.overrides {
            c.flags |= SLOT_OVERRIDES;
        }
        if let Some(r) = s.additive {
            c.flags |= SLOT_ADDITIVE;
            (c.reference_lo, c.reference_hi) = split(r.to_bits());
            c.reference_time = WrapMode::Clamp.clip_time(r, 0.0);
        }
        c
    }

    /// `fade_layer(layer, weight, seconds)`.
    pub(crate) fn fade_layer(character: u32, layer: u32, weight: f32, seconds: f64) -> Self {
        let mut c = Self::of(character, CMD_FADE_LAYER, 0).with_duration(seconds);
        c.layer = layer;
        c.weight = weight;
        c
    }

    /// A character placed at `translation`, turned by `rotation`.
    pub(crate) fn place(character: u32, translation: [f32; 3], rotation: [f32; 4]) -> Self {
        let mut c = Self::of(character, CMD_PLACE, 0);
        (c.weight, c.rate, c.reference_time) = (translation[0], translation[1], translation[2]);
        let r = rotation.map(f32::to_bits);
        (c.speed_lo, c.speed_hi, c.repetitions_lo, c.repetitions_hi) = (r[0], r[1], r[2], r[3]);
        c
    }

    /// A character that came or went: its state reset.
    pub(crate) fn reset(character: u32) -> Self {
        Self::of(character, CMD_RESET, 0)
    }

    /// `remove_layer(layer)`.
    pub(crate) fn remove_layer(character: u32, layer: u32) -> Self {
        let mut c = Self::of(character, CMD_REMOVE_LAYER, 0);
        c.layer = layer;
        c
    }
}

/// A layer's settings as a command carries them (the playback layer's
/// `Layer`, its mask as an index).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LayerSettings {
    pub(crate) weight: f32,
    pub(crate) mask: Option<u32>,
    pub(crate) additive: Option<f64>,
    pub(crate) overrides: bool,
    pub(crate) wrap: WrapMode,
    pub(crate) speed: f64,
    pub(crate) repetitions: Option<u64>,
}

/// Applies `cmd` to the character; returns `APPLIED`, or the reason it
/// was refused (nothing changed then).
pub(crate) fn apply_command(p: &mut Playback<'_>, cmd: &GpuPlaybackCommand) -> u32 {
    match cmd.kind {
        CMD_PLAY => command_play(p, cmd),
        CMD_CROSSFADE => command_crossfade(p, cmd),
        CMD_CROSSFADE_AT => {
            let status = command_crossfade(p, cmd);
            if status == APPLIED {
                let t = join(cmd.time_lo, cmd.time_hi) as i64;
                let current = base_count(p) - 1;
                let s = &mut p.slots[current];
                let d = clip_ticks(p.clips, s.clip);
                clock_at(s, t, d, s.flags & WRAP_BITS);
                s.flags &= !SLOT_FINISHED;
            }
            status
        }
        CMD_FADE_IN => command_fade_in(p, cmd),
        CMD_FADE_OUT => {
            fade_base_out(p, Some(cmd.clip), cmd);
            APPLIED
        }
        CMD_SPEED => {
            (p.character.speed_lo, p.character.speed_hi) = (cmd.speed_lo, cmd.speed_hi);
            APPLIED
        }
        CMD_PAUSE => {
            p.character.flags =
                (p.character.flags & !CHARACTER_PAUSED) | (cmd.flags & CHARACTER_PAUSED);
            APPLIED
        }
        CMD_SEEK => {
            let t = join(cmd.time_lo, cmd.time_hi) as i64;
            for k in 0..base_count(p) {
                let s = &mut p.slots[k];
                let d = clip_ticks(p.clips, s.clip);
                clock_at(s, t, d, s.flags & WRAP_BITS);
                s.flags &= !SLOT_FINISHED;
            }
            APPLIED
        }
        CMD_WRAP | CMD_CLIP_WRAP | CMD_REPETITIONS | CMD_CLIP_REPETITIONS => {
            command_settings(p, cmd)
        }
        CMD_ADD_LAYER => command_add_layer(p, cmd),
        CMD_SET_LAYER | CMD_FADE_LAYER | CMD_REMOVE_LAYER => command_layer(p, cmd),
        CMD_RESET => {
            *p.character = new_character(p.character.max_actions);
            p.kept.fill(0);
            APPLIED
        }
        _ => APPLIED,
    }
}

/// Actions in use.
fn count(p: &Playback<'_>) -> usize {
    (p.character.count as usize).min(p.slots.len())
}

/// Base actions: they come first in the table, before the layers.
fn base_count(p: &Playback<'_>) -> usize {
    let n = count(p);
    (0..n)
        .position(|k| p.slots[k].flags & SLOT_LAYER != 0)
        .unwrap_or(n)
}

/// Removes slot `at`, moving the later ones down.
fn remove_slot(p: &mut Playback<'_>, at: usize) -> GpuActionSlot {
    let n = count(p);
    let removed = p.slots[at];
    for k in at..n - 1 {
        p.slots[k] = p.slots[k + 1];
    }
    p.character.count -= 1;
    removed
}

/// Puts `slot` at `at`, moving the later ones up (there is room).
fn insert_slot(p: &mut Playback<'_>, at: usize, slot: GpuActionSlot) {
    let n = count(p);
    let mut k = n;
    while k > at {
        p.slots[k] = p.slots[k - 1];
        k -= 1;
    }
    p.slots[at] = slot;
    p.character.count += 1;
}

/// Drops the lightest base actions (the first of equal weights) until one
/// more action fits; returns their weights' sum, or `None` (nothing
/// dropped) when the layers leave no room.
fn make_room(p: &mut Playback<'_>) -> Option<f32> {
    let excess = (count(p) + 1).saturating_sub(p.character.max_actions as usize);
    if excess > base_count(p) {
        return None;
    }
    let mut freed = 0.0;
    for _ in 0..excess {
        let mut lightest = 0;
        for k in 1..base_count(p) {
            if p.slots[k].weight < p.slots[lightest].weight {
                lightest = k;
            }
        }
        freed += remove_slot(p, lightest).weight;
    }
    Some(freed)
}

/// The kept settings of `clip`: `[flags, repetitions low, high]`.
fn kept_at(clip: u32) -> usize {
    (clip * KEPT_WORDS) as usize
}

/// The wrap and repetitions clip `clip` plays with (flags as a slot's:
/// wrap bits and `SLOT_REPS`; repetitions): its own, or (the first time)
/// the character's, which it keeps from then on.
fn settings(p: &mut Playback<'_>, clip: u32) -> (u32, u64) {
    let at = kept_at(clip);
    if at + KEPT_WORDS as usize > p.kept.len() {
        let c = &p.character;
        return (
            c.flags & (WRAP_BITS | SLOT_REPS),
            join(c.repetitions_lo, c.repetitions_hi),
        );
    }
    if p.kept[at] & KEPT_SET == 0 {
        let c = &p.character;
        p.kept[at] = KEPT_SET | (c.flags & (WRAP_BITS | SLOT_REPS));
        p.kept[at + 1] = c.repetitions_lo;
        p.kept[at + 2] = c.repetitions_hi;
    }
    (
        p.kept[at] & (WRAP_BITS | SLOT_REPS),
        join(p.kept[at + 1], p.kept[at + 2]),
    )
}

/// A base action of `clip` from its start at `weight`, with its clip's
/// wrap and repetitions.
fn base_action(p: &mut Playback<'_>, clip: u32, weight: f32) -> GpuActionSlot {
    let (flags, repetitions) = settings(p, clip);
    let (speed_lo, speed_hi) = split(1.0f64.to_bits());
    let (repetitions_lo, repetitions_hi) = split(repetitions);
    GpuActionSlot {
        clip,
        flags: flags | SLOT_FRESH,
        mask: NO_MASK,
        repetitions_lo,
        repetitions_hi,
        speed_lo,
        speed_hi,
        weight,
        fade_duration_lo: 1,
        fade_rate: 1.0,
        ..bytemuck::Zeroable::zeroed()
    }
}

/// `slot` fading from its weight to `to` over the command's duration.
fn start_fade(slot: &mut GpuActionSlot, to: f32, cmd: &GpuPlaybackCommand) {
    slot.flags |= SLOT_FADING;
    slot.fade_from = slot.weight;
    slot.fade_to = to;
    slot.fade_rate = cmd.rate;
    slot.fade_elapsed_lo = 0;
    slot.fade_elapsed_hi = 0;
    slot.fade_duration_lo = cmd.duration_lo;
    slot.fade_duration_hi = cmd.duration_hi;
}

/// Ramps the base actions of clip `clip` (every one: `None`) to 0.
fn fade_base_out(p: &mut Playback<'_>, clip: Option<u32>, cmd: &GpuPlaybackCommand) {
    for k in 0..base_count(p) {
        let s = &mut p.slots[k];
        if clip.is_none_or(|c| c == s.clip) {
            start_fade(s, 0.0, cmd);
        }
    }
}

/// `play`: the clip alone in the base at weight 1, the layers kept.
fn command_play(p: &mut Playback<'_>, cmd: &GpuPlaybackCommand) -> u32 {
    let layers = count(p) - base_count(p);
    if layers >= p.character.max_actions as usize {
        return REFUSED_FULL;
    }
    while base_count(p) > 0 {
        remove_slot(p, 0);
    }
    let action = base_action(p, cmd.clip, 1.0);
    insert_slot(p, 0, action);
    APPLIED
}

/// `crossfade`: every base action to 0, `to` from its weight (0 when it
/// starts) to where the base was heading (1 when that is 0).
fn command_crossfade(p: &mut Playback<'_>, cmd: &GpuPlaybackCommand) -> u32 {
    // Where the base is heading, before anything is dropped: an action
    // dropped for room hands its part to the incoming one.
    let mut heading = 0.0f32;
    for k in 0..base_count(p) {
        let s = &p.slots[k];
        heading += if s.flags & SLOT_FADING != 0 {
            s.fade_to
        } else {
            s.weight
        };
    }
    let target = if heading > 0.0 { heading } else { 1.0 };
    let existing = (0..base_count(p)).find(|&k| p.slots[k].clip == cmd.clip);
    let mut incoming = match existing {
        Some(k) => remove_slot(p, k),
        None => {
            let Some(freed) = make_room(p) else {
                return REFUSED_FULL;
            };
            base_action(p, cmd.clip, freed)
        }
    };
    fade_base_out(p, None, cmd);
    start_fade(&mut incoming, target, cmd);
    let at = base_count(p);
    insert_slot(p, at, incoming);
    APPLIED
}

/// `fade_in`: the clip added last to the base, from 0 to 1.
fn command_fade_in(p: &mut Playback<'_>, cmd: &GpuPlaybackCommand) -> u32 {
    if make_room(p).is_none() {
        return REFUSED_FULL;
    }
    let mut action = base_action(p, cmd.clip, 0.0);
    start_fade(&mut action, 1.0, cmd);
    let at = base_count(p);
    insert_slot(p, at, action);
    APPLIED
}

/// `set_wrap`, `set_clip_wrap`, `set_repetitions`, `set_clip_repetitions`:
/// the current action's (or the clip's every action's) wrap or
/// repetitions, which the clip keeps; with no current action, the
/// character's for clips without their own.
fn command_settings(p: &mut Playback<'_>, cmd: &GpuPlaybackCommand) -> u32 {
    let wrap = matches!(cmd.kind, CMD_WRAP | CMD_CLIP_WRAP);
    let bits = if wrap { WRAP_BITS } else { SLOT_REPS };
    let value = cmd.flags & bits;
    let per_clip = matches!(cmd.kind, CMD_CLIP_WRAP | CMD_CLIP_REPETITIONS);
    let clip = if per_clip {
        cmd.clip
    } else if base_count(p) > 0 {
        p.slots[base_count(p) - 1].clip
    } else {
        let c = &mut *p.character;
        c.flags = (c.flags & !bits) | value;
        if !wrap {
            (c.repetitions_lo, c.repetitions_hi) = (cmd.repetitions_lo, cmd.repetitions_hi);
        }
        return APPLIED;
    };
    let current = base_count(p).wrapping_sub(1);
    for k in 0..count(p) {
        let s = &mut p.slots[k];
        if (per_clip && s.clip == clip) || (!per_clip && k == current) {
            s.flags = (s.flags & !bits) | value;
            if wrap {
                s.flags &= !SLOT_FINISHED;
            } else {
                (s.repetitions_lo, s.repetitions_hi) = (cmd.repetitions_lo, cmd.repetitions_hi);
            }
        }
    }
    // The clip keeps the new setting and its other one (its own, or the
    // character's when it had none).
    settings(p, clip);
    let at = kept_at(clip);
    if at + 2 < p.kept.len() {
        p.kept[at] = (p.kept[at] & !bits) | value;
        if !wrap {
            p.kept[at + 1] = cmd.repetitions_lo;
            p.kept[at + 2] = cmd.repetitions_hi;
        }
    }
    APPLIED
}

/// `add_layer`: the clip over the base, after the other layers.
fn command_add_layer(p: &mut Playback<'_>, cmd: &GpuPlaybackCommand) -> u32 {
    if count(p) >= p.character.max_actions as usize {
        return REFUSED_FULL;
    }
    let mut s = GpuActionSlot {
        clip: cmd.clip,
        flags: SLOT_LAYER | SLOT_FRESH,
        layer: cmd.layer,
        fade_duration_lo: 1,
        fade_rate: 1.0,
        ..bytemuck::Zeroable::zeroed()
    };
    layer_settings(&mut s, cmd);
    let at = count(p);
    insert_slot(p, at, s);
    APPLIED
}

/// A layer's settings from `cmd`: weight (ending any fade), mask, blend,
/// wrap, speed and repetitions; a changed wrap clears finished.
fn layer_settings(s: &mut GpuActionSlot, cmd: &GpuPlaybackCommand) {
    if (s.flags ^ cmd.flags) & WRAP_BITS != 0 {
        s.flags &= !SLOT_FINISHED;
    }
    let own = WRAP_BITS | SLOT_REPS | SLOT_OVERRIDES | SLOT_ADDITIVE | SLOT_FADING;
    s.flags =
        (s.flags & !own) | (cmd.flags & (WRAP_BITS | SLOT_REPS | SLOT_OVERRIDES | SLOT_ADDITIVE));
    s.weight = cmd.weight;
    s.mask = cmd.mask;
    (s.speed_lo, s.speed_hi) = (cmd.speed_lo, cmd.speed_hi);
    (s.repetitions_lo, s.repetitions_hi) = (cmd.repetitions_lo, cmd.repetitions_hi);
    (s.reference_lo, s.reference_hi) = (cmd.reference_lo, cmd.reference_hi);
    s.reference_time = cmd.reference_time;
}

/// `set_layer`, `fade_layer`, `remove_layer` on layer number `cmd.layer`.
fn command_layer(p: &mut Playback<'_>, cmd: &GpuPlaybackCommand) -> u32 {
    let found = (0..count(p)).find(|&k| {
        let s = &p.slots[k];
        s.flags & SLOT_LAYER != 0 && s.layer == cmd.layer
    });
    let Some(k) = found else {
        return REFUSED_NO_LAYER;
    };
    match cmd.kind {
        CMD_SET_LAYER => layer_settings(&mut p.slots[k], cmd),
        CMD_FADE_LAYER => start_fade(&mut p.slots[k], cmd.weight, cmd),
        _ => {
            remove_slot(p, k);
        }
    }
    APPLIED
}
