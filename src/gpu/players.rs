//! [`Crowd::set_players`]: a crowd's frame from its characters' players
//! in one call. The players are the playback layer's (`playback::Player`,
//! made by `Crowd::player` for a model); this layer sees them through
//! [`CrowdPlayer`], which only they implement.

use super::crowd::Crowd;
use crate::error::{PlaybackError, Result};
use crate::model::crowd::{CharacterId, CrowdCharacter, CrowdModels, ModelId};
use crate::model::mix::Action;

/// What [`Crowd::set_players`] reads of a character's player: the crowd
/// model it was made for and its last frame's actions. Implemented by
/// `playback::Player` alone (the trait is not nameable outside the
/// crate).
pub trait CrowdPlayer {
    /// The crowd model the player was made for (`Crowd::player`); `None`
    /// for a player made without one.
    fn model(&self) -> Option<ModelId>;
    /// Its last frame's action table.
    fn actions(&self) -> &[Action];
}

impl Crowd {
    /// Sets this frame's actions of the crowd from its characters'
    /// players: each `(character, player)` gives the character's actions,
    /// the player's last frame (`Player::advance`; its base actions, then
    /// its layers with their masks, additive references and override
    /// modes), at the character's slot: [`set_actions`](Self::set_actions)
    /// with [`CrowdCharacter::of`]`(character, n)` and the players' tables
    /// one after another, which it calls. Each player must be one that
    /// `Crowd::player` made for the character's model (a
    /// `playback::Player`). Returns what the CPU twin takes for this
    /// frame: [`cpu::crowd_mixed_poses`](crate::cpu::crowd_mixed_poses)`(models,
    /// characters, actions)` gives the poses the GPU computes.
    ///
    /// ```no_run
    /// # fn f(device: &wgpu::Device, queue: &wgpu::Queue,
    /// #      fox: &keyframe_gpu::BoundLibrary, robot: &keyframe_gpu::BoundLibrary)
    /// #      -> Result<(), keyframe_gpu::Error> {
    /// use std::sync::Arc;
    /// use keyframe_gpu::playback::{Clips, Command};
    /// use keyframe_gpu::{cpu, Crowd, MixerDesc};
    /// let mut crowd = Crowd::new();
    /// let f = crowd.add_mixed_model(device, queue, "fox", fox, &MixerDesc::new(500, 3))?;
    /// let r = crowd.add_mixed_model(device, queue, "robot", robot, &MixerDesc::new(500, 3))?;
    /// let fox_clips = Arc::new(Clips::new(fox.library()));
    /// let robot_clips = Arc::new(Clips::new(robot.library()));
    /// let mut cast = Vec::new();
    /// for (model, clips) in [(f, &fox_clips), (r, &robot_clips)] {
    ///     for _ in 0..100 {
    ///         let mut player = crowd.player(model, clips)?; // the mixer's limit
    ///         player.command(Command::Play(clips.clip_at(0)?))?;
    ///         cast.push((crowd.add_character(model)?, player));
    ///     }
    /// }
    /// // Per frame: advance every player, then one call.
    /// for (_, player) in &mut cast {
    ///     player.advance(1.0 / 60.0)?;
    /// }
    /// let (models, characters, actions) =
    ///     crowd.set_players(queue, cast.iter().map(|(c, p)| (*c, p)))?;
    /// let twin = cpu::crowd_mixed_poses(models, characters, actions)?; // when checking
    /// # Ok(()) }
    /// ```
    ///
    /// A character whose player holds more actions than its mixer's
    /// limit drops its lightest base actions, as in `set_actions`.
    /// Allocates nothing in steady state (the table is kept from frame to
    /// frame).
    ///
    /// # Errors
    /// [`PlaybackError::PlayerOfOtherModel`] for a player not made by
    /// `Crowd::player` for the character's model (of another model,
    /// another crowd, or `Player::new`), naming the character's entry in
    /// `players`; the errors of [`set_actions`](Self::set_actions),
    /// naming the same entries
    /// ([`Error::UnknownCharacter`](crate::Error::UnknownCharacter) for a
    /// removed character). On error nothing is written: every model
    /// keeps its previous frame.
    pub fn set_players<'p, P: CrowdPlayer + 'p>(
        &mut self,
        queue: &wgpu::Queue,
        players: impl IntoIterator<Item = (CharacterId, &'p P)>,
    ) -> Result<(&CrowdModels, &[CrowdCharacter], &[Action])> {
        let (mut characters, mut actions) = std::mem::take(&mut self.from_players);
        let built = table(self.models(), players, &mut characters, &mut actions);
        let set = built.and_then(|()| self.set_actions(queue, &characters, &actions));
        self.from_players = (characters, actions);
        set?;
        let this: &Crowd = self;
        Ok((this.models(), &this.from_players.0, &this.from_players.1))
    }
}

/// The crowd's table of `players` into `characters` and `actions`
/// (cleared first), each player checked against its character's model.
fn table<'p, P: CrowdPlayer + 'p>(
    models: &CrowdModels,
    players: impl IntoIterator<Item = (CharacterId, &'p P)>,
    characters: &mut Vec<CrowdCharacter>,
    actions: &mut Vec<Action>,
) -> Result<()> {
    characters.clear();
    actions.clear();
    for (entry, (character, player)) in players.into_iter().enumerate() {
        if player.model() != Some(character.model()) {
            return Err(other_model(models, entry, character, player.model()).into());
        }
        let own = player.actions();
        characters.push(CrowdCharacter::of(character, own.len() as u32));
        actions.extend_from_slice(own);
    }
    Ok(())
}

/// [`PlaybackError::PlayerOfOtherModel`] for entry `entry`, a player made
/// for `made_for`.
fn other_model(
    models: &CrowdModels,
    entry: usize,
    character: CharacterId,
    made_for: Option<ModelId>,
) -> PlaybackError {
    let name = |m: ModelId| models.name(m).unwrap_or("removed, or of another crowd");
    let player = match made_for {
        None => "by Player::new".to_owned(),
        Some(m) => format!("for model {} ({:?})", m.index(), name(m)),
    };
    PlaybackError::PlayerOfOtherModel {
        entry,
        model: character.model().index(),
        name: name(character.model()).to_owned(),
        slot: character.slot(),
        player,
    }
}
