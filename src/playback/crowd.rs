//! A [`Crowd`] of players: [`Crowd::player`] makes a [`Player`] for one
//! of the crowd's models (its clips checked against the model's, its
//! table limited to the model's mixer), which
//! [`Crowd::set_players`] (in the GPU layer: this layer names no device
//! type) takes for that model's characters.

use std::sync::Arc;

use super::clips::Clips;
use super::player::Player;
use crate::error::{Error, PlaybackError, Result};
use crate::gpu::players::CrowdPlayer;
use crate::gpu::Crowd;
use crate::model::crowd::{ModelId, CHARACTER};
use crate::model::mix::Action;

impl Crowd {
    /// A player of `clips` for a character of model `model` (one added
    /// with a mixer, [`add_mixed_model`](Self::add_mixed_model)): its
    /// action table holds at most the mixer's
    /// [`actions_per_character`](crate::MixerDesc::actions_per_character)
    /// ([`Player::with_max_actions`]), so every frame fits the model's
    /// mixer, and [`set_players`](Self::set_players) takes it for that
    /// model's characters only. `clips` must be the model's clips:
    /// [`Clips::new`] or [`Clips::with_root`] of its library, or of a
    /// library with the same clips (names and durations), such as the one
    /// [`in_place`](super::in_place) made the model's from. Otherwise as
    /// [`Player::new`]; share one `Arc<Clips>` between a model's players.
    ///
    /// # Errors
    /// [`Error::UnknownModel`] for a model not in the crowd;
    /// [`PlaybackError::NoPlayerForModel`] for a model without a mixer,
    /// or clips that are not the model's (naming the first clip that
    /// differs).
    pub fn player(&self, model: ModelId, clips: &Arc<Clips>) -> Result<Player> {
        let Some(m) = self.models().get(model) else {
            return Err(Error::UnknownModel {
                what: CHARACTER,
                entry: None,
                model: model.index(),
            });
        };
        let refuse = |reason: String| PlaybackError::NoPlayerForModel {
            model: model.index(),
            name: m.name.clone(),
            reason,
        };
        let Some(mixer) = &m.mixer else {
            let reason = "it was added without a mixer (Crowd::add_mixed_model)";
            return Err(refuse(reason.to_owned()).into());
        };
        if let Some(reason) = clips.mismatch(m.library()) {
            return Err(refuse(reason).into());
        }
        let mut player = Player::new(clips).with_max_actions(mixer.actions_per_character);
        player.model = Some(model);
        Ok(player)
    }
}

impl CrowdPlayer for Player {
    fn model(&self) -> Option<ModelId> {
        self.model
    }

    fn actions(&self) -> &[Action] {
        &self.frame.actions
    }
}
