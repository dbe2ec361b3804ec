//! The CPU twin of `shaders/playback.wgsl`: a character's playback state
//! (a [`GpuCharacter`] and its [`GpuActionSlot`]s) stepped by a frame's
//! time and changed by commands
//! ([`GpuPlaybackCommand`](crate::layout::GpuPlaybackCommand)). The playback
//! layer's `Player` keeps its state in these records and calls these
//! functions, so the GPU pass and the `Player` share one arithmetic:
//! playheads in integer ticks ([`clock`]), speeds applied to whole ticks,
//! fades as `f32` ramps over ticks. Each function mirrors the WGSL one of
//! the same name.

pub(crate) mod clock;
pub(crate) mod commands;

use clock::{clock_step_limited, join, scale_ticks, split, Step};

use crate::layout::{
    GpuActionSlot, GpuCharacter, GpuPlaybackClip, GpuRootTrack, CHARACTER_PAUSED, SLOT_FADING,
    SLOT_FINISHED, WRAP_BITS,
};

/// What the playback pass reads of a model's clips, uploaded once: each
/// clip's duration, markers and root motion ([`GpuPlaybackClip`]), the
/// root's tracks and their keys, the markers' times in ticks, and the
/// root's place in the model (its parent's rest transform, its factor in
/// each mask).
#[derive(Debug, Clone, Default)]
pub(crate) struct PlaybackTables {
    pub(crate) clips: Vec<GpuPlaybackClip>,
    pub(crate) root_tracks: Vec<GpuRootTrack>,
    /// The root tracks' key times, then their values, then the root's
    /// factor in each mask (from `mask_offset`).
    pub(crate) root_keys: Vec<f32>,
    pub(crate) mask_offset: u32,
    pub(crate) mask_count: u32,
    /// Every clip's markers' times in ticks (two words), clip after clip.
    pub(crate) markers: Vec<[u32; 2]>,
    /// With a root: the linear part (columns) and the rotation of its
    /// parent's rest world transform.
    pub(crate) root: Option<([[f32; 4]; 3], [f32; 4])>,
}

/// The duration in ticks of clip `clip` of `clips` (0 out of range).
pub(crate) fn clip_ticks(clips: &[GpuPlaybackClip], clip: u32) -> u64 {
    clips
        .get(clip as usize)
        .map_or(0, |c| join(c.ticks_lo, c.ticks_hi))
}

/// A slot's fade weight: `from + (to - from) * f`, `f` the part of the
/// fade played, `elapsed * rate` in `f32` (the elapsed ticks rounded to
/// `f32` once), at most 1, and exactly 1 once `elapsed >= duration`.
pub(crate) fn fade_weight(slot: &GpuActionSlot) -> f32 {
    let elapsed = join(slot.fade_elapsed_lo, slot.fade_elapsed_hi);
    let duration = join(slot.fade_duration_lo, slot.fade_duration_hi);
    let f = if elapsed >= duration {
        1.0
    } else {
        ((elapsed as f32) * slot.fade_rate).min(1.0)
    };
    slot.fade_from + (slot.fade_to - slot.fade_from) * f
}

/// Whether a slot's fade has played to its end.
pub(crate) fn fade_ended(slot: &GpuActionSlot) -> bool {
    slot.flags & SLOT_FADING != 0
        && join(slot.fade_elapsed_lo, slot.fade_elapsed_hi)
            >= join(slot.fade_duration_lo, slot.fade_duration_hi)
}

/// The ticks one frame's step of `dt` ticks moves `slot`'s playhead: `dt`
/// times the character's speed, then times the slot's own (each rounded
/// to a tick); none when paused.
pub(crate) fn slot_delta(character: &GpuCharacter, slot: &GpuActionSlot, dt: u64) -> i64 {
    if character.flags & CHARACTER_PAUSED != 0 {
        return 0;
    }
    let dt = i64::try_from(dt).unwrap_or(i64::MAX);
    let by_character = scale_ticks(dt, join(character.speed_lo, character.speed_hi));
    scale_ticks(by_character, join(slot.speed_lo, slot.speed_hi))
}

/// Steps one action by a frame of `dt` ticks in a clip of `d` ticks: its
/// playhead by [`slot_delta`] (stopping at its last repetition), its fade
/// by `dt` (neither when paused), its loop count and finished flag.
/// Returns the playhead's step.
pub(crate) fn step_slot(
    character: &GpuCharacter,
    slot: &mut GpuActionSlot,
    dt: u64,
    d: u64,
) -> Step {
    let moving = character.flags & CHARACTER_PAUSED == 0;
    let delta = slot_delta(character, slot, dt);
    let step = clock_step_limited(slot, delta, d, slot.flags & WRAP_BITS);
    if moving && slot.flags & SLOT_FADING != 0 {
        let elapsed = join(slot.fade_elapsed_lo, slot.fade_elapsed_hi).saturating_add(dt);
        (slot.fade_elapsed_lo, slot.fade_elapsed_hi) = split(elapsed);
        slot.weight = fade_weight(slot);
    }
    let loops = join(slot.loops_lo, slot.loops_hi).saturating_add(step.folds);
    (slot.loops_lo, slot.loops_hi) = split(loops);
    if step.reached_end {
        slot.flags |= SLOT_FINISHED;
    }
    step
}

/// After every action stepped: an action whose fade ended at a weight of
/// 0 (or below) is removed, the others keep their order; an ended fade
/// leaves its weight.
pub(crate) fn finish_character(character: &mut GpuCharacter, slots: &mut [GpuActionSlot]) {
    let count = (character.count as usize).min(slots.len());
    let mut kept = 0;
    for k in 0..count {
        let mut s = slots[k];
        let ended = fade_ended(&s);
        if ended && s.fade_to <= 0.0 {
            continue;
        }
        if ended {
            s.flags &= !SLOT_FADING;
        }
        slots[kept] = s;
        kept += 1;
    }
    character.count = kept as u32;
}

/// `v` turned by the unit quaternion `q` (x, y, z, w): the WGSL's
/// `quat_rotate`.
#[cfg(test)]
fn quat_rotate(q: [f32; 4], v: [f32; 3]) -> [f32; 3] {
    let cross = |a: [f32; 3], b: [f32; 3]| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    let u = [q[0], q[1], q[2]];
    let uv = cross(u, v);
    let uuv = cross(u, uv);
    std::array::from_fn(|i| v[i] + (uv[i] * q[3] + uuv[i]) * 2.0)
}

/// A character's placement (translation, rotation) moved by its root
/// motion of a frame (translation, rotation; in the model's space):
/// `translation += rotation * motion`, `rotation = normalize(rotation *
/// turn)`. The WGSL's `placement_main` (the GPU's placements are checked
/// against it).
#[cfg(test)]
pub(crate) fn move_placement(placement: [[f32; 4]; 2], motion: [[f32; 4]; 2]) -> [[f32; 4]; 2] {
    use crate::cpu::quat::{quat_mul, quat_normalize};
    let [t, r] = placement;
    let moved = quat_rotate(r, [motion[0][0], motion[0][1], motion[0][2]]);
    let turned = quat_normalize(quat_mul(
        glam::Vec4::from_array(r),
        glam::Vec4::from_array(motion[1]),
    ));
    [
        [t[0] + moved[0], t[1] + moved[1], t[2] + moved[2], 0.0],
        turned.to_array(),
    ]
}
