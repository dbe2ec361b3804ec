//! [`Player`]: one character's actions (clip, playhead, speed, wrap,
//! weight and fade, layers) and the commands that change them. Stepping
//! and reporting a frame is in `advance.rs`, reading the state back in
//! `state.rs`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::clips::{ClipHandle, Clips};
use super::clock::Clock;
use super::root::{RootMotion, Scratch};
use super::Frame;
use crate::error::{PlaybackError, Result};
use crate::model::mix::MaskId;
use crate::model::track::WrapMode;

/// Tells players apart in their [`LayerId`]s (a player's clones keep its
/// number).
static NEXT_PLAYER: AtomicU64 = AtomicU64::new(1);

/// A weight ramp: from `from` to `to` over `duration` seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Fade {
    pub(super) from: f32,
    pub(super) to: f32,
    pub(super) elapsed: f64,
    pub(super) duration: f64,
}

impl Fade {
    pub(super) fn weight(&self) -> f32 {
        let f = (self.elapsed / self.duration).clamp(0.0, 1.0) as f32;
        self.from + (self.to - self.from) * f
    }
}

/// One action of a player: a clip's playhead, its weight and fade, its
/// own wrap, repetitions and counts, and for a layer its mask and blend.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Playing {
    pub(super) clip: u32,
    pub(super) clock: Clock,
    pub(super) wrap: WrapMode,
    pub(super) weight: f32,
    pub(super) fade: Option<Fade>,
    /// The layer it is (its index; `None`: a base action).
    pub(super) layer: Option<u32>,
    pub(super) mask: Option<MaskId>,
    pub(super) reference_time: Option<f64>,
    pub(super) overrides: bool,
    /// Its own time scale (layers), times the player's speed.
    pub(super) speed: f64,
    /// Passes it plays before it stops (`None`: no limit).
    pub(super) repetitions: Option<u64>,
    /// Loop ends (repeat) or turns (ping-pong) crossed since it started.
    pub(super) loops: u64,
    /// It reached the end it moves towards (clamp) or its last repetition.
    pub(super) finished: bool,
}

impl Playing {
    /// Where its weight is heading: its fade's end, or its weight.
    pub(super) fn target(&self) -> f32 {
        self.fade.map_or(self.weight, |f| f.to)
    }
}

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
    /// (`None`: no limit); see [`Player::set_repetitions`].
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
    pub(super) playing: Vec<Playing>,
    pub(super) next_layer: u32,
    pub(super) speed: f64,
    pub(super) paused: bool,
    /// The wrap and repetitions of clips that have none of their own yet.
    pub(super) wrap: WrapMode,
    pub(super) repetitions: Option<u64>,
    /// Per clip: the wrap and repetitions it keeps, once it has played or
    /// been given them.
    pub(super) kept: Vec<Option<(WrapMode, Option<u64>)>>,
    pub(super) max_actions: u32,
    pub(super) frame: Frame,
    pub(super) scratch: Scratch,
    /// Marker crossings of one step: (playhead position, marker).
    pub(super) hits: Vec<(f64, usize)>,
    pub(super) positions: Vec<f64>,
    /// The override actions' root motions of one step, applied after the
    /// normal ones: (motion, weight at the root, tracks it has).
    pub(super) override_motion: Vec<(RootMotion, f32, (bool, bool))>,
}

impl Player {
    /// A player of `clips`, playing nothing (the rig's rest pose), speed
    /// 1; clips start with [`WrapMode::Repeat`] and no repetition limit
    /// until they have their own.
    #[must_use]
    pub fn new(clips: &Arc<Clips>) -> Player {
        Player {
            clips: Arc::clone(clips),
            id: NEXT_PLAYER.fetch_add(1, Ordering::Relaxed),
            character: 0,
            playing: Vec::new(),
            next_layer: 0,
            speed: 1.0,
            paused: false,
            wrap: WrapMode::Repeat,
            repetitions: None,
            kept: vec![None; clips.len()],
            max_actions: crate::MAX_ACTIONS,
            frame: Frame::default(),
            scratch: Scratch::default(),
            hits: Vec::new(),
            positions: Vec::new(),
            override_motion: Vec::new(),
        }
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
    /// so that every frame fits. A crossfade or fade-in that finds the
    /// table full drops the lightest base action (the oldest of equals);
    /// a crossfade gives its weight to the incoming action's start, so
    /// that the base's weights head where they headed. Applies to the
    /// actions added after it.
    #[must_use]
    pub fn with_max_actions(self, max: u32) -> Player {
        Player {
            max_actions: max.max(1),
            ..self
        }
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

    /// Drops the lightest base actions (the oldest of equals) until one
    /// more action fits in the table; returns their weights' sum.
    /// Refused, with nothing dropped, when the layers leave no room.
    fn make_room(&mut self, command: &'static str) -> std::result::Result<f32, PlaybackError> {
        let excess = (self.playing.len() + 1).saturating_sub(self.max_actions as usize);
        let base = self.playing.iter().filter(|p| p.layer.is_none()).count();
        if excess > base {
            return Err(self.too_many(command));
        }
        let mut freed = 0.0;
        for _ in 0..excess {
            let lightest = self
                .playing
                .iter()
                .enumerate()
                .filter(|(_, p)| p.layer.is_none())
                .min_by(|a, b| a.1.weight.total_cmp(&b.1.weight))
                .map(|(i, _)| i);
            if let Some(i) = lightest {
                freed += self.playing.remove(i).weight;
            }
        }
        Ok(freed)
    }

    pub(super) fn too_many(&self, command: &'static str) -> PlaybackError {
        PlaybackError::TooManyActions {
            character: self.character,
            command,
            max: self.max_actions,
        }
    }

    pub(super) fn check_number(
        &self,
        command: &'static str,
        what: &'static str,
        value: f64,
        non_negative: bool,
    ) -> std::result::Result<(), PlaybackError> {
        if value.is_finite() && (!non_negative || value >= 0.0) {
            return Ok(());
        }
        Err(PlaybackError::BadNumber {
            character: self.character,
            command,
            what,
            value,
            non_negative,
        })
    }

    fn check_duration(
        &self,
        command: &'static str,
        d: f64,
    ) -> std::result::Result<(), PlaybackError> {
        if d.is_finite() && d > 0.0 {
            return Ok(());
        }
        Err(PlaybackError::BadDuration {
            character: self.character,
            command,
            duration: d,
        })
    }

    /// The wrap and repetitions clip `clip` plays with: its own, or (the
    /// first time) the player's, which it keeps from then on.
    fn settings(&mut self, clip: u32) -> (WrapMode, Option<u64>) {
        let default = (self.wrap, self.repetitions);
        match self.kept.get_mut(clip as usize) {
            Some(kept) => *kept.get_or_insert(default),
            None => default,
        }
    }

    /// A base action of `clip` from its start, with its clip's settings.
    fn base_action(&mut self, clip: u32, weight: f32, fade: Option<Fade>) -> Playing {
        let (wrap, repetitions) = self.settings(clip);
        Playing {
            clip,
            clock: Clock::at(0.0, 0.0, wrap),
            wrap,
            weight,
            fade,
            layer: None,
            mask: None,
            reference_time: None,
            overrides: false,
            speed: 1.0,
            repetitions,
            loops: 0,
            finished: false,
        }
    }

    /// Adds `action` as the last base action, before the layers.
    fn insert_base(&mut self, action: Playing) {
        let at = self
            .playing
            .iter()
            .take_while(|p| p.layer.is_none())
            .count();
        self.playing.insert(at, action);
    }

    /// The current action: the base action started last.
    pub(super) fn current_mut(&mut self) -> Option<&mut Playing> {
        self.playing.iter_mut().rfind(|p| p.layer.is_none())
    }

    /// Plays `clip` from its start at weight 1, alone in the base (the
    /// layers stay), with its clip's wrap and repetitions
    /// ([`set_wrap`](Self::set_wrap)).
    ///
    /// # Errors
    /// [`PlaybackError::ClipOfOtherLibrary`];
    /// [`PlaybackError::TooManyActions`] when the layers fill the table.
    pub fn play(&mut self, clip: ClipHandle) -> Result<()> {
        let clip = self.own("play", clip)?;
        let layers = self.playing.iter().filter(|p| p.layer.is_some()).count();
        if layers >= self.max_actions as usize {
            return Err(self.too_many("play").into());
        }
        self.playing.retain(|p| p.layer.is_some());
        let action = self.base_action(clip, 1.0, None);
        self.playing.insert(0, action);
        Ok(())
    }

    /// Crossfades the base to `to` over `duration` seconds: every base
    /// action ramps linearly from its current weight to 0, and `to` from 0
    /// (or its current weight, when it is playing already) to the sum `S`
    /// of the weights the base's actions are heading for: a fading
    /// action's fade target, another's weight (1 after a
    /// [`play`](Self::play), 1 after a [`fade_in`](Self::fade_in) however
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
    pub fn crossfade(&mut self, to: ClipHandle, duration: f64) -> Result<()> {
        self.crossfade_from("crossfade", to, duration)
    }

    /// As [`crossfade`](Self::crossfade), with `to`'s playhead moved to
    /// clip time `time` (folded by its wrap), whether it was playing or
    /// not: a game keeps a walk and a run in step, or each character of a
    /// crowd at its own phase, as three.js sets `action.time` before
    /// `crossFadeTo`. No event and no root motion across the move; its
    /// [repetitions](Self::set_repetitions) count from there.
    ///
    /// # Errors
    /// Those of [`crossfade`](Self::crossfade);
    /// [`PlaybackError::BadNumber`] for a `time` that is NaN or infinite.
    pub fn crossfade_at(&mut self, to: ClipHandle, duration: f64, time: f64) -> Result<()> {
        self.check_number("crossfade_at", "time", time, false)?;
        self.crossfade_from("crossfade_at", to, duration)?;
        let clips = Arc::clone(&self.clips);
        if let Some(p) = self.current_mut() {
            let d = clips.duration(p.clip).unwrap_or(0.0);
            p.clock = Clock::at(time, d, p.wrap);
            p.finished = false;
        }
        Ok(())
    }

    /// [`crossfade`](Self::crossfade), its errors naming `command`.
    fn crossfade_from(
        &mut self,
        command: &'static str,
        to: ClipHandle,
        duration: f64,
    ) -> Result<()> {
        let to = self.own(command, to)?;
        self.check_duration(command, duration)?;
        // Where the base is heading, before anything is dropped: an
        // action dropped for room hands its part to the incoming one.
        let heading: f32 = self
            .playing
            .iter()
            .filter(|p| p.layer.is_none())
            .map(Playing::target)
            .sum();
        let target = if heading > 0.0 { heading } else { 1.0 };
        let existing = self
            .playing
            .iter()
            .position(|p| p.layer.is_none() && p.clip == to);
        let incoming = match existing {
            Some(i) => self.playing.remove(i),
            None => {
                let freed = self.make_room(command)?;
                self.base_action(to, freed, None)
            }
        };
        self.fade_base_out(None, duration);
        let fade = Fade {
            from: incoming.weight,
            to: target,
            elapsed: 0.0,
            duration,
        };
        self.insert_base(Playing {
            fade: Some(fade),
            ..incoming
        });
        Ok(())
    }

    /// Ramps the base actions of clip `clip` (all of them: `None`) from
    /// their weights to 0 over `duration`.
    fn fade_base_out(&mut self, clip: Option<u32>, duration: f64) {
        let fading = |p: &&mut Playing| p.layer.is_none() && clip.is_none_or(|c| c == p.clip);
        for p in self.playing.iter_mut().filter(fading) {
            p.fade = Some(Fade {
                from: p.weight,
                to: 0.0,
                elapsed: 0.0,
                duration,
            });
        }
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
    pub fn fade_in(&mut self, clip: ClipHandle, duration: f64) -> Result<()> {
        let clip = self.own("fade_in", clip)?;
        self.check_duration("fade_in", duration)?;
        self.make_room("fade_in")?;
        let fade = Fade {
            from: 0.0,
            to: 1.0,
            elapsed: 0.0,
            duration,
        };
        let action = self.base_action(clip, 0.0, Some(fade));
        self.insert_base(action);
        Ok(())
    }

    /// Ramps the base action of `clip` from its current weight to 0 over
    /// `duration` seconds; it is removed when it gets there. A clip the
    /// base does not play has nothing to fade: nothing changes.
    ///
    /// # Errors
    /// [`PlaybackError::ClipOfOtherLibrary`], [`PlaybackError::BadDuration`].
    pub fn fade_out(&mut self, clip: ClipHandle, duration: f64) -> Result<()> {
        let clip = self.own("fade_out", clip)?;
        self.check_duration("fade_out", duration)?;
        self.fade_base_out(Some(clip), duration);
        Ok(())
    }

    /// Sets the speed every playhead moves at (negative plays backwards,
    /// 0 holds still; fades go on in real time).
    ///
    /// # Errors
    /// [`PlaybackError::BadNumber`] for NaN or infinity.
    pub fn set_speed(&mut self, speed: f64) -> Result<()> {
        self.check_number("speed", "speed", speed, false)?;
        self.speed = speed;
        Ok(())
    }

    /// Sets the wrap of the current action ([`current`](Self::current)),
    /// which its clip keeps for its next starts; the other actions, an
    /// outgoing one too, keep theirs. With no base action playing, sets
    /// the wrap that clips without one of their own start with.
    pub fn set_wrap(&mut self, wrap: WrapMode) {
        let Some(p) = self.current_mut() else {
            self.wrap = wrap;
            return;
        };
        p.wrap = wrap;
        p.finished = false;
        let clip = p.clip;
        if let Some(kept) = self.kept.get_mut(clip as usize) {
            let repetitions = kept.map_or(self.repetitions, |k| k.1);
            *kept = Some((wrap, repetitions));
        }
    }

    /// Sets the wrap of `clip`, which it keeps from now on: every action
    /// of it playing (base or layer) and its next starts.
    ///
    /// # Errors
    /// [`PlaybackError::ClipOfOtherLibrary`].
    pub fn set_clip_wrap(&mut self, clip: ClipHandle, wrap: WrapMode) -> Result<()> {
        let clip = self.own("set_clip_wrap", clip)?;
        for p in self.playing.iter_mut().filter(|p| p.clip == clip) {
            p.wrap = wrap;
            p.finished = false;
        }
        if let Some(kept) = self.kept.get_mut(clip as usize) {
            let repetitions = kept.map_or(self.repetitions, |k| k.1);
            *kept = Some((wrap, repetitions));
        }
        Ok(())
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
    /// [`seek`](Self::seek); started backwards, its passage through the
    /// clip's start enters its first pass (three.js). An action with none
    /// left stops where it stands, and an action stopped by its limit
    /// holds until it is played or sought again.
    pub fn set_repetitions(&mut self, repetitions: Option<u64>) {
        let Some(p) = self.current_mut() else {
            self.repetitions = repetitions;
            return;
        };
        p.repetitions = repetitions;
        let clip = p.clip;
        if let Some(kept) = self.kept.get_mut(clip as usize) {
            let wrap = kept.map_or(self.wrap, |k| k.0);
            *kept = Some((wrap, repetitions));
        }
    }

    /// Sets the repetitions of `clip` ([`set_repetitions`](Self::set_repetitions)),
    /// which it keeps from now on: every action of it playing (base or
    /// layer) and its next starts.
    ///
    /// # Errors
    /// [`PlaybackError::ClipOfOtherLibrary`].
    pub fn set_clip_repetitions(
        &mut self,
        clip: ClipHandle,
        repetitions: Option<u64>,
    ) -> Result<()> {
        let clip = self.own("set_clip_repetitions", clip)?;
        for p in self.playing.iter_mut().filter(|p| p.clip == clip) {
            p.repetitions = repetitions;
        }
        if let Some(kept) = self.kept.get_mut(clip as usize) {
            let wrap = kept.map_or(self.wrap, |k| k.0);
            *kept = Some((wrap, repetitions));
        }
        Ok(())
    }

    /// Pauses or resumes: a paused player's playheads and fades stand
    /// still, and it reports no root motion and no event.
    pub fn set_paused(&mut self, paused: bool) {
        self.paused = paused;
    }

    /// Moves every base action's playhead to clip time `time` (folded by
    /// its wrap): no event and no root motion across the jump. Their
    /// [repetitions](Self::set_repetitions) count again from there, as
    /// from a start.
    ///
    /// # Errors
    /// [`PlaybackError::BadNumber`] for NaN or infinity.
    pub fn seek(&mut self, time: f64) -> Result<()> {
        self.check_number("seek", "time", time, false)?;
        let clips = Arc::clone(&self.clips);
        for p in self.playing.iter_mut().filter(|p| p.layer.is_none()) {
            let d = clips.duration(p.clip).unwrap_or(0.0);
            p.clock = Clock::at(time, d, p.wrap);
            p.finished = false;
        }
        Ok(())
    }
}
