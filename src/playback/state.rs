//! What a [`Player`] is doing, read back: its actions ([`ActionState`]:
//! clip, time, weight, fade, wrap, speed, repetitions, counts, layer),
//! the current one among them, the player's speed and pause.

use super::clips::ClipHandle;
use super::player::{LayerId, Player};
use super::Frame;
use crate::cpu::playback::clock::{join, seconds, slot_time, wrap_mode};
use crate::layout::{
    GpuActionSlot, CHARACTER_PAUSED, NO_MASK, SLOT_ADDITIVE, SLOT_FADING, SLOT_FINISHED,
    SLOT_LAYER, SLOT_OVERRIDES, SLOT_REPS,
};
use crate::model::mix::MaskId;
use crate::model::track::WrapMode;

/// One action of a [`Player`] as it stands ([`Player::actions`]): a base
/// action or a layer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ActionState {
    /// Its clip.
    pub clip: ClipHandle,
    /// Its playhead: the clip time, folded by its wrap.
    pub time: f64,
    /// Its weight now.
    pub weight: f32,
    /// The weight its fade is heading for (its weight when not fading).
    pub target: f32,
    /// Seconds left of its fade (0 when not fading).
    pub fade_left: f64,
    /// How its playhead wraps.
    pub wrap: WrapMode,
    /// The speed its playhead moves at: its own time scale times the
    /// player's.
    pub speed: f64,
    /// The passes it plays before it stops (`None`: no limit).
    pub repetitions: Option<u64>,
    /// The loop ends (repeat) or turns (ping-pong) it crossed since it
    /// started (its passage through the clip's start when started
    /// backwards aside).
    pub loops: u64,
    /// Whether it reached the end it moves towards (played once) or
    /// played its last repetition.
    pub finished: bool,
    /// The layer it is (`None`: a base action).
    pub layer: Option<LayerId>,
    /// Its mask (layers).
    pub mask: Option<MaskId>,
    /// `Some(reference time)`: an additive layer.
    pub additive: Option<f64>,
    /// An override layer.
    pub overrides: bool,
}

impl Player {
    fn state(&self, p: &GpuActionSlot) -> ActionState {
        let fading = p.flags & SLOT_FADING != 0;
        let elapsed = join(p.fade_elapsed_lo, p.fade_elapsed_hi);
        let duration = join(p.fade_duration_lo, p.fade_duration_hi);
        ActionState {
            clip: self.clips.handle(p.clip),
            time: seconds(slot_time(p)),
            weight: p.weight,
            target: if fading { p.fade_to } else { p.weight },
            fade_left: if fading {
                seconds(duration.saturating_sub(elapsed))
            } else {
                0.0
            },
            wrap: wrap_mode(p.flags),
            speed: self.speed() * f64::from_bits(join(p.speed_lo, p.speed_hi)),
            repetitions: (p.flags & SLOT_REPS != 0)
                .then(|| join(p.repetitions_lo, p.repetitions_hi)),
            loops: join(p.loops_lo, p.loops_hi),
            finished: p.flags & SLOT_FINISHED != 0,
            layer: (p.flags & SLOT_LAYER != 0).then_some(LayerId {
                player: self.id,
                index: p.layer,
            }),
            mask: (p.mask != NO_MASK).then(|| MaskId::new(p.mask)),
            additive: (p.flags & SLOT_ADDITIVE != 0)
                .then(|| f64::from_bits(join(p.reference_lo, p.reference_hi))),
            overrides: p.flags & SLOT_OVERRIDES != 0,
        }
    }

    /// The actions in use.
    pub(super) fn playing(&self) -> &[GpuActionSlot] {
        &self.slots[..(self.state.count as usize).min(self.slots.len())]
    }

    /// Every action as it stands, in the table's order: the base actions
    /// (the oldest first), then the layers in the order they were added.
    pub fn actions(&self) -> impl Iterator<Item = ActionState> + '_ {
        self.playing().iter().map(|p| self.state(p))
    }

    /// Layer `layer` as it stands, if the player has it.
    #[must_use]
    pub fn layer(&self, layer: LayerId) -> Option<ActionState> {
        if layer.player != self.id {
            return None;
        }
        self.playing()
            .iter()
            .find(|p| p.flags & SLOT_LAYER != 0 && p.layer == layer.index)
            .map(|p| self.state(p))
    }

    /// The last frame [`advance`](Self::advance) reported.
    #[must_use]
    pub fn frame(&self) -> &Frame {
        &self.frame
    }

    /// The current action as it stands, if any: the base action started
    /// last (by [`play`](crate::playback::Command::Play), [`crossfade`](crate::playback::Command::Crossfade) or
    /// [`fade_in`](crate::playback::Command::FadeIn)), the one a crossfade goes to; the last
    /// base action of [`actions`](Self::actions). Its clip and time, the
    /// loop ends or turns it crossed ([`ActionState::loops`]) and whether
    /// it reached its end, wrapped with [`WrapMode::Clamp`] (played once),
    /// or played its last [repetition](crate::playback::Command::SetRepetitions)
    /// ([`ActionState::finished`]).
    #[must_use]
    pub fn current(&self) -> Option<ActionState> {
        self.playing()
            .iter()
            .rfind(|p| p.flags & SLOT_LAYER == 0)
            .map(|p| self.state(p))
    }

    /// Whether the player is paused.
    #[must_use]
    pub fn paused(&self) -> bool {
        self.state.flags & CHARACTER_PAUSED != 0
    }

    /// The speed.
    #[must_use]
    pub fn speed(&self) -> f64 {
        f64::from_bits(join(self.state.speed_lo, self.state.speed_hi))
    }
}
