//! [`Player`]: one character's actions (clip, playhead, speed, wrap,
//! weight and fade, layers) and the commands that change them. Its state
//! is the playback pass's records (`crate::layout::GpuCharacter`,
//! `GpuActionSlot`), changed by the same commands and stepped by the same
//! functions (`cpu::playback`), so a player is the CPU twin of a
//! character played on the GPU. Stepping and reporting a frame is in
//! `advance.rs`, reading the state back in `state.rs`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::clips::{ClipHandle, Clips};
use super::gpu::Command;
use super::root::RootMotion;
use super::spaces::Spaces;
use super::Frame;
use crate::cpu::playback::commands::{apply_command, new_character, LayerSettings, Playback};
use crate::error::{PlaybackError, Result};
use crate::layout::{
    GpuActionSlot, GpuCharacter, GpuPlaybackCommand, APPLIED, KEPT_WORDS, REFUSED_FULL,
};
use crate::model::crowd::ModelId;
use crate::model::mix::MaskId;
use crate::model::track::WrapMode;

/// Tells players apart in their [`LayerId`]s (a player's clones keep its
/// number).
static NEXT_PLAYER: AtomicU64 = AtomicU64::new(1);

/// How a layer plays over the base actions: its weight, mask, blend
/// (mixed in, additive or override), wrap, speed and repetitions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Layer {
    /// The layer's weight (before fades).
    pub weight: f32,
    /// Its mask ([`MixerDesc::add_mask`](crate::MixerDesc::add_mask)'s
    /// handle), `None` for every node.
    pub mask: Option<MaskId>,
    /// `Some(reference time)`: additive, relative to its clip at that time.
    pub additive: Option<f64>,
    /// An override layer: it replaces the pose under it by its weight (on
    /// its mask's nodes), as [`Action::overrides`](crate::Action::overrides).
    /// Not with `additive`.
    pub overrides: bool,
    /// How its playhead wraps.
    pub wrap: WrapMode,
    /// Its time scale, times the player's speed.
    pub speed: f64,
    /// How many passes it plays before it stops at the end of the last
    /// (`None`: no limit); see [`Command::SetRepetitions`](crate::playback::Command::SetRepetitions).
    pub repetitions: Option<u64>,
}

impl Default for Layer {
    fn default() -> Self {
        Layer {
            weight: 1.0,
            mask: None,
            additive: None,
            overrides: false,
            wrap: WrapMode::Repeat,
            speed: 1.0,
            repetitions: None,
        }
    }
}

/// A layer of one [`Player`], as [`Player::add_layer`] returns it. Only
/// valid for that player (and its clones): another player refuses it as
/// unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LayerId {
    pub(super) player: u64,
    pub(super) index: u32,
}

impl LayerId {
    /// The layer's number in its player (0 for the first added).
    #[must_use]
    pub fn index(self) -> u32 {
        self.index
    }
}

/// One character's playback: its actions, speed, pause, and the last
/// frame. See the [module](super) documentation.
#[derive(Debug, Clone)]
pub struct Player {
    pub(super) clips: Arc<Clips>,
    pub(super) id: u64,
    pub(super) character: u32,
    /// The character's record: speed, pause, the wrap and repetitions of
    /// clips without their own, the actions in use and the table's size.
    pub(super) state: GpuCharacter,
    /// The actions: `state.count` in use, the base actions (the oldest
    /// first), then the layers in the order they were added.
    pub(super) slots: Vec<GpuActionSlot>,
    /// Per clip, the wrap and repetitions it keeps once it has played or
    /// been given them (`KEPT_WORDS` each).
    pub(super) kept: Vec<u32>,
    pub(super) next_layer: u32,
    /// The crowd model it was made for ([`Crowd::player`](crate::Crowd::player)).
    pub(super) model: Option<ModelId>,
    pub(super) frame: Frame,
    /// Marker crossings of one step: (playhead position in ticks, marker).
    pub(super) hits: Vec<(i128, usize)>,
    pub(super) positions: Vec<i128>,
    /// The override actions' root motions of one step, applied after the
    /// normal ones: (motion, weight at the root, tracks it has).
    pub(super) override_motion: Vec<(RootMotion, f32, (bool, bool))>,
    /// Its blend spaces' parameters, weights, fades and phase.
    pub(super) spaces: Spaces,
}

impl Player {
    /// A player of `clips`, playing nothing (the rig's rest pose), speed
    /// 1; clips start with [`WrapMode::Repeat`] and no repetition limit
    /// until they have their own.
    #[must_use]
    pub fn new(clips: &Arc<Clips>) -> Player {
        let max = crate::MAX_ACTIONS;
        Player {
            clips: Arc::clone(clips),
            id: Player::new_id(),
            character: 0,
            state: new_character(max),
            slots: vec![bytemuck::Zeroable::zeroed(); max as usize],
            kept: vec![0; clips.len() * KEPT_WORDS as usize],
            next_layer: 0,
            model: None,
            frame: Frame::default(),
            hits: Vec::new(),
            positions: Vec::new(),
            override_motion: Vec::new(),
            spaces: Spaces::default(),
        }
    }

    /// The twin of a character whose state is `state`, `slots` (the slots
    /// in use first) and `kept` (the kept settings of every clip), its
    /// layers numbered from `next_layer` under `id` (a character played
    /// on the GPU: `GpuPlayers`).
    pub(crate) fn from_state(
        clips: &Arc<Clips>,
        (id, character, next_layer): (u64, u32, u32),
        state: GpuCharacter,
        mut slots: Vec<GpuActionSlot>,
        mut kept: Vec<u32>,
    ) -> Player {
        let room = (state.max_actions as usize).max(state.count as usize);
        slots.resize(room, bytemuck::Zeroable::zeroed());
        kept.resize(clips.len() * KEPT_WORDS as usize, 0);
        Player {
            id,
            character,
            state,
            slots,
            kept,
            next_layer,
            ..Player::new(clips)
        }
    }

    /// Its records: its state, its slots in use and every clip's kept
    /// settings (what the playback pass holds for a character).
    #[cfg(test)]
    pub(crate) fn records(&self) -> (&GpuCharacter, &[GpuActionSlot], &[u32]) {
        let count = (self.state.count as usize).min(self.slots.len());
        (&self.state, &self.slots[..count], &self.kept)
    }

    /// A number for a new player's (or character's) layers.
    pub(crate) fn new_id() -> u64 {
        NEXT_PLAYER.fetch_add(1, Ordering::Relaxed)
    }

    /// The same player, naming character `character` in its errors.
    #[must_use]
    pub fn with_character(self, character: u32) -> Player {
        Player { character, ..self }
    }

    /// The same player, its action table holding at most `max` actions
    /// (at least 1; by default [`MAX_ACTIONS`](crate::MAX_ACTIONS)): give
    /// it the mixer's
    /// [`actions_per_character`](crate::MixerDesc::actions_per_character)
    /// so that every frame fits ([`Crowd::player`](crate::Crowd::player)
    /// does for a crowd's model). A crossfade or fade-in that finds the
    /// table full drops the lightest base action (the oldest of equals);
    /// a crossfade gives its weight to the incoming action's start, so
    /// that the base's weights head where they headed. Applies to the
    /// actions added after it.
    #[must_use]
    pub fn with_max_actions(mut self, max: u32) -> Player {
        let max = max.max(1);
        self.state.max_actions = max;
        let slots = (max as usize).max(self.state.count as usize);
        self.slots.resize(slots, bytemuck::Zeroable::zeroed());
        self
    }

    /// The clips it plays.
    #[must_use]
    pub fn clips(&self) -> &Arc<Clips> {
        &self.clips
    }

    /// Its clip named `name` ([`Clips::clip`]).
    ///
    /// # Errors
    /// [`PlaybackError::NoClipNamed`].
    pub fn clip(&self, name: &str) -> Result<ClipHandle> {
        self.clips.clip(name)
    }

    /// `clip`'s index, if it is a clip of this player's [`Clips`].
    pub(super) fn own(
        &self,
        command: &'static str,
        clip: ClipHandle,
    ) -> std::result::Result<u32, PlaybackError> {
        if clip.clips() == self.clips.id() {
            return Ok(clip.index());
        }
        Err(PlaybackError::ClipOfOtherLibrary {
            character: self.character,
            command,
            clip: clip.index(),
            clips: clip.clips().get(),
            own: self.clips.id().get(),
        })
    }

    pub(super) fn too_many(&self, command: &'static str) -> PlaybackError {
        PlaybackError::TooManyActions {
            character: self.character,
            command,
            max: self.state.max_actions,
        }
    }

    pub(super) fn check_number(
        &self,
        command: &'static str,
        what: &'static str,
        value: f64,
        non_negative: bool,
    ) -> std::result::Result<(), PlaybackError> {
        check_number(self.character, command, what, (value, non_negative))
    }

    pub(super) fn check_duration(
        &self,
        command: &'static str,
        d: f64,
    ) -> std::result::Result<(), PlaybackError> {
        check_duration(self.character, command, d)
    }

    /// The player's records as a command sees them.
    fn playback(&mut self) -> Playback<'_> {
        Playback {
            character: &mut self.state,
            slots: &mut self.slots,
            kept: &mut self.kept,
            clips: self.clips.table(),
        }
    }

    /// Applies a checked command (`cpu::playback`, as the GPU pass does);
    /// what it refuses (a full table, a layer gone) is an error naming
    /// `command`, with nothing changed.
    pub(crate) fn apply(&mut self, command: &'static str, cmd: &GpuPlaybackCommand) -> Result<()> {
        match apply_command(&mut self.playback(), cmd) {
            APPLIED => Ok(()),
            REFUSED_FULL => Err(self.too_many(command).into()),
            _ => Err(PlaybackError::UnknownLayer {
                character: self.character,
                command,
                layer: cmd.layer,
            }
            .into()),
        }
    }

    /// Applies `command` now: [`Command`]'s variants are the player's
    /// vocabulary (see each), the same as
    /// [`GpuPlayers::command`](super::GpuPlayers::command) takes for a
    /// character on the GPU. A refused command changes nothing.
    ///
    /// # Errors
    /// [`PlaybackError::ClipOfOtherLibrary`] for a clip of other clips;
    /// [`PlaybackError::BadNumber`], [`PlaybackError::BadDuration`] for a
    /// number that is not finite, or a duration that is not positive;
    /// [`PlaybackError::TooManyActions`] when the table is full;
    /// [`PlaybackError::UnknownLayer`] for a layer not this player's (or
    /// removed); [`PlaybackError::AdditiveOverride`] as
    /// [`add_layer`](Self::add_layer);
    /// [`PlaybackError::NotAPlayerCommand`] for
    /// [`Command::SetPlacement`]; [`PlaybackError::UnknownBlendSpace`]
    /// for a blend space of other clips, [`PlaybackError::BadBlendParams`]
    /// for its parameters, [`PlaybackError::BadDuration`] for a negative
    /// duration of [`Command::PlayBlendSpace`] (0 enters at once),
    /// [`PlaybackError::TooManyActions`] when the space's clips do not fit.
    pub fn command(&mut self, command: Command) -> Result<()> {
        match command {
            Command::Play(..)
            | Command::Crossfade(..)
            | Command::CrossfadeAt(..)
            | Command::FadeIn(..)
            | Command::FadeOut(..) => self.base_command(command),
            Command::PlayBlendSpace(space, d) => self.play_blend_space(space, d),
            Command::SetBlendParams(space, params) => self.set_blend_params(space, params),
            Command::SetSpeed(speed) => self.set_speed(speed),
            Command::SetPaused(paused) => {
                self.set_paused(paused);
                Ok(())
            }
            Command::Seek(time) => {
                self.seek(time)?;
                self.resync();
                Ok(())
            }
            Command::SetWrap(wrap) => {
                self.set_wrap(wrap);
                Ok(())
            }
            Command::SetClipWrap(clip, wrap) => self.set_clip_wrap(clip, wrap),
            Command::SetRepetitions(n) => {
                self.set_repetitions(n);
                Ok(())
            }
            Command::SetClipRepetitions(clip, n) => self.set_clip_repetitions(clip, n),
            Command::SetLayer(layer, with) => self.set_layer(layer, with),
            Command::FadeLayer(layer, weight, d) => self.fade_layer(layer, weight, d),
            Command::RemoveLayer(layer) => self.remove_layer(layer),
            Command::SetPlacement(..) => Err(PlaybackError::NotAPlayerCommand {
                character: self.character,
                command: "set_placement",
            }
            .into()),
        }
    }

    /// A command that starts or fades base actions: the blend spaces
    /// playing stop first, their actions going on as plain ones (nothing
    /// changes when it is refused).
    fn base_command(&mut self, command: Command) -> Result<()> {
        let saved = (!self.spaces.is_empty()).then(|| (self.spaces.clone(), self.slots.clone()));
        self.release_spaces();
        let done = match command {
            Command::Play(clip) => self.play(clip),
            Command::Crossfade(to, d) => self.crossfade(to, d),
            Command::CrossfadeAt(to, d, t) => self.crossfade_at(to, d, t),
            Command::FadeIn(clip, d) => self.fade_in(clip, d),
            Command::FadeOut(clip, d) => self.fade_out(clip, d),
            _ => Ok(()),
        };
        if let (Err(_), Some((spaces, slots))) = (&done, saved) {
            (self.spaces, self.slots) = (spaces, slots);
        }
        done
    }

    /// Plays `clip` from its start at weight 1, alone in the base (the
    /// layers stay), with its clip's wrap and repetitions
    /// ([`set_wrap`](crate::playback::Command::SetWrap)).
    ///
    /// # Errors
    /// [`PlaybackError::ClipOfOtherLibrary`];
    /// [`PlaybackError::TooManyActions`] when the layers fill the table.
    pub(crate) fn play(&mut self, clip: ClipHandle) -> Result<()> {
        let clip = self.own("play", clip)?;
        self.apply("play", &GpuPlaybackCommand::play(0, clip))
    }

    /// Crossfades the base to `to` over `duration` seconds: every base
    /// action ramps linearly from its current weight to 0, and `to` from 0
    /// (or its current weight, when it is playing already) to the sum `S`
    /// of the weights the base's actions are heading for: a fading
    /// action's fade target, another's weight (1 after a
    /// [`play`](crate::playback::Command::Play), 1 after a [`fade_in`](crate::playback::Command::FadeIn) however
    /// far it got; 1 when that sum is 0). From a steady base `S` is the
    /// sum of its weights, which the crossfade keeps (three.js's
    /// `crossFadeTo`); a crossfade during a fade ends where that fade was
    /// going. `to` starts from its beginning unless it is playing
    /// already, and keeps its clip's wrap and repetitions. A full table
    /// drops its lightest base action first
    /// ([`with_max_actions`](Self::with_max_actions)).
    ///
    /// # Errors
    /// [`PlaybackError::ClipOfOtherLibrary`], [`PlaybackError::BadDuration`],
    /// [`PlaybackError::TooManyActions`] when the layers fill the table.
    pub(crate) fn crossfade(&mut self, to: ClipHandle, duration: f64) -> Result<()> {
        let to = self.own("crossfade", to)?;
        self.check_duration("crossfade", duration)?;
        let cmd = GpuPlaybackCommand::crossfade(0, to, duration, None);
        self.apply("crossfade", &cmd)
    }

    /// As [`crossfade`](crate::playback::Command::Crossfade), with `to`'s playhead moved to
    /// clip time `time` (folded by its wrap), whether it was playing or
    /// not: a game keeps a walk and a run in step, or each character of a
    /// crowd at its own phase, as three.js sets `action.time` before
    /// `crossFadeTo`. No event and no root motion across the move; its
    /// [repetitions](crate::playback::Command::SetRepetitions) count from there.
    ///
    /// # Errors
    /// Those of [`crossfade`](crate::playback::Command::Crossfade);
    /// [`PlaybackError::BadNumber`] for a `time` that is NaN or infinite.
    pub(crate) fn crossfade_at(&mut self, to: ClipHandle, duration: f64, time: f64) -> Result<()> {
        self.check_number("crossfade_at", "time", time, false)?;
        let to = self.own("crossfade_at", to)?;
        self.check_duration("crossfade_at", duration)?;
        let cmd = GpuPlaybackCommand::crossfade(0, to, duration, Some(time));
        self.apply("crossfade_at", &cmd)
    }

    /// Adds `clip` to the base, from its start, ramping from weight 0 to
    /// 1 over `duration` seconds, with its clip's wrap and repetitions; it
    /// becomes the current action ([`current`](Self::current)). A full
    /// table drops its lightest base action first
    /// ([`with_max_actions`](Self::with_max_actions)).
    ///
    /// # Errors
    /// [`PlaybackError::ClipOfOtherLibrary`], [`PlaybackError::BadDuration`],
    /// [`PlaybackError::TooManyActions`] when the layers fill the table.
    pub(crate) fn fade_in(&mut self, clip: ClipHandle, duration: f64) -> Result<()> {
        let clip = self.own("fade_in", clip)?;
        self.check_duration("fade_in", duration)?;
        self.apply(
            "fade_in",
            &GpuPlaybackCommand::fade(0, clip, duration, false),
        )
    }

    /// Ramps the base action of `clip` from its current weight to 0 over
    /// `duration` seconds; it is removed when it gets there. A clip the
    /// base does not play has nothing to fade: nothing changes.
    ///
    /// # Errors
    /// [`PlaybackError::ClipOfOtherLibrary`], [`PlaybackError::BadDuration`].
    pub(crate) fn fade_out(&mut self, clip: ClipHandle, duration: f64) -> Result<()> {
        let clip = self.own("fade_out", clip)?;
        self.check_duration("fade_out", duration)?;
        self.apply(
            "fade_out",
            &GpuPlaybackCommand::fade(0, clip, duration, true),
        )
    }

    /// Sets the speed every playhead moves at (negative plays backwards,
    /// 0 holds still; fades go on in real time).
    ///
    /// # Errors
    /// [`PlaybackError::BadNumber`] for NaN or infinity.
    pub(crate) fn set_speed(&mut self, speed: f64) -> Result<()> {
        self.check_number("speed", "speed", speed, false)?;
        self.apply("speed", &GpuPlaybackCommand::speed(0, speed))
    }

    /// Sets the wrap of the current action ([`current`](Self::current)),
    /// which its clip keeps for its next starts; the other actions, an
    /// outgoing one too, keep theirs. With no base action playing, sets
    /// the wrap that clips without one of their own start with.
    pub(crate) fn set_wrap(&mut self, wrap: WrapMode) {
        // Never refused.
        let _ = self.apply("set_wrap", &GpuPlaybackCommand::wrap(0, None, wrap));
    }

    /// Sets the wrap of `clip`, which it keeps from now on: every action
    /// of it playing (base or layer) and its next starts.
    ///
    /// # Errors
    /// [`PlaybackError::ClipOfOtherLibrary`].
    pub(crate) fn set_clip_wrap(&mut self, clip: ClipHandle, wrap: WrapMode) -> Result<()> {
        let clip = self.own("set_clip_wrap", clip)?;
        let cmd = GpuPlaybackCommand::wrap(0, Some(clip), wrap);
        self.apply("set_clip_wrap", &cmd)
    }

    /// Sets how many passes the current action ([`current`](Self::current))
    /// plays with [`WrapMode::Repeat`] or [`WrapMode::PingPong`] before it
    /// stops (its clip keeps the limit for its next starts; with no base
    /// action playing, the limit of clips without one of their own):
    /// `Some(n)` ends the `n`-th loop (repeat) or the `n`-th pass out or
    /// back (ping-pong) at its end, holds the playhead there and sets
    /// [`ActionState::finished`](super::ActionState::finished), as three.js's
    /// `AnimationAction.repetitions`; `None` (the default) plays on. The
    /// passes count from the action's start or its last
    /// [`seek`](crate::playback::Command::Seek); started backwards, its passage through the
    /// clip's start enters its first pass (three.js). An action with none
    /// left stops where it stands, and an action stopped by its limit
    /// holds until it is played or sought again.
    pub(crate) fn set_repetitions(&mut self, repetitions: Option<u64>) {
        // Never refused.
        let cmd = GpuPlaybackCommand::repetitions(0, None, repetitions);
        let _ = self.apply("set_repetitions", &cmd);
    }

    /// Sets the repetitions of `clip` ([`set_repetitions`](crate::playback::Command::SetRepetitions)),
    /// which it keeps from now on: every action of it playing (base or
    /// layer) and its next starts.
    ///
    /// # Errors
    /// [`PlaybackError::ClipOfOtherLibrary`].
    pub(crate) fn set_clip_repetitions(
        &mut self,
        clip: ClipHandle,
        repetitions: Option<u64>,
    ) -> Result<()> {
        let clip = self.own("set_clip_repetitions", clip)?;
        let cmd = GpuPlaybackCommand::repetitions(0, Some(clip), repetitions);
        self.apply("set_clip_repetitions", &cmd)
    }

    /// Pauses or resumes: a paused player's playheads and fades stand
    /// still, and it reports no root motion and no event.
    pub(crate) fn set_paused(&mut self, paused: bool) {
        // Never refused.
        let _ = self.apply("set_paused", &GpuPlaybackCommand::pause(0, paused));
    }

    /// Moves every base action's playhead to clip time `time` (folded by
    /// its wrap): no event and no root motion across the jump. Their
    /// [repetitions](crate::playback::Command::SetRepetitions) count again from there, as
    /// from a start.
    ///
    /// # Errors
    /// [`PlaybackError::BadNumber`] for NaN or infinity.
    pub(crate) fn seek(&mut self, time: f64) -> Result<()> {
        self.check_number("seek", "time", time, false)?;
        self.apply("seek", &GpuPlaybackCommand::seek(0, time))
    }
}

/// `value` is finite (and `>= 0` when `non_negative`), else
/// [`PlaybackError::BadNumber`] naming `character`, `command` and `what`.
pub(super) fn check_number(
    character: u32,
    command: &'static str,
    what: &'static str,
    (value, non_negative): (f64, bool),
) -> std::result::Result<(), PlaybackError> {
    if value.is_finite() && (!non_negative || value >= 0.0) {
        return Ok(());
    }
    Err(PlaybackError::BadNumber {
        character,
        command,
        what,
        value,
        non_negative,
    })
}

/// `d` is a finite duration `> 0`, else [`PlaybackError::BadDuration`].
pub(super) fn check_duration(
    character: u32,
    command: &'static str,
    d: f64,
) -> std::result::Result<(), PlaybackError> {
    if d.is_finite() && d > 0.0 {
        return Ok(());
    }
    Err(PlaybackError::BadDuration {
        character,
        command,
        duration: d,
    })
}

impl Layer {
    /// Its numbers and blend, checked for `command` of `character`.
    pub(super) fn check(&self, character: u32, command: &'static str) -> Result<()> {
        let number = |what, value, non_negative| {
            check_number(character, command, what, (value, non_negative))
        };
        number("weight", f64::from(self.weight), true)?;
        number("speed", self.speed, false)?;
        if let Some(r) = self.additive {
            number("reference time", r, false)?;
            if self.overrides {
                return Err(PlaybackError::AdditiveOverride { character, command }.into());
            }
        }
        Ok(())
    }

    /// The settings a layer command carries.
    pub(super) fn settings(&self) -> LayerSettings {
        LayerSettings {
            weight: self.weight,
            mask: self.mask.map(MaskId::index),
            additive: self.additive,
            overrides: self.overrides,
            wrap: self.wrap,
            speed: self.speed,
            repetitions: self.repetitions,
        }
    }
}
