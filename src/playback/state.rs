//! What a [`Player`] is doing, read back: its actions ([`ActionState`]:
//! clip, time, weight, fade, wrap, speed, repetitions, counts, layer),
//! the current one among them, the player's speed and pause.

use super::clips::ClipHandle;
use super::player::{LayerId, Player, Playing};
use super::Frame;
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
    fn state(&self, p: &Playing) -> ActionState {
        ActionState {
            clip: self.clips.handle(p.clip),
            time: p.clock.time,
            weight: p.weight,
            target: p.target(),
            fade_left: p.fade.map_or(0.0, |f| (f.duration - f.elapsed).max(0.0)),
            wrap: p.wrap,
            speed: self.speed * p.speed,
            repetitions: p.repetitions,
            loops: p.loops,
            finished: p.finished,
            layer: p.layer.map(|index| LayerId {
                player: self.id,
                index,
            }),
            mask: p.mask,
            additive: p.reference_time,
            overrides: p.overrides,
        }
    }

    /// Every action as it stands, in the table's order: the base actions
    /// (the oldest first), then the layers in the order they were added.
    pub fn actions(&self) -> impl Iterator<Item = ActionState> + '_ {
        self.playing.iter().map(|p| self.state(p))
    }

    /// Layer `layer` as it stands, if the player has it.
    #[must_use]
    pub fn layer(&self, layer: LayerId) -> Option<ActionState> {
        if layer.player != self.id {
            return None;
        }
        self.playing
            .iter()
            .find(|p| p.layer == Some(layer.index))
            .map(|p| self.state(p))
    }

    /// The last frame [`advance`](Self::advance) reported.
    #[must_use]
    pub fn frame(&self) -> &Frame {
        &self.frame
    }

    /// The current action as it stands, if any: the base action started
    /// last (by [`play`](Self::play), [`crossfade`](Self::crossfade) or
    /// [`fade_in`](Self::fade_in)), the one a crossfade goes to; the last
    /// base action of [`actions`](Self::actions). Its clip and time, the
    /// loop ends or turns it crossed ([`ActionState::loops`]) and whether
    /// it reached its end, wrapped with [`WrapMode::Clamp`] (played once),
    /// or played its last [repetition](Self::set_repetitions)
    /// ([`ActionState::finished`]).
    #[must_use]
    pub fn current(&self) -> Option<ActionState> {
        self.playing
            .iter()
            .rfind(|p| p.layer.is_none())
            .map(|p| self.state(p))
    }

    /// Whether the player is paused.
    #[must_use]
    pub fn paused(&self) -> bool {
        self.paused
    }

    /// The speed.
    #[must_use]
    pub fn speed(&self) -> f64 {
        self.speed
    }
}
