//! The playback layer: what drives the mixer each frame, without a
//! device. One [`Player`] per character holds its actions (clip,
//! playhead, speed, wrap, weight and fades, masked or additive layers);
//! [`Player::advance`] moves every playhead by a time step and gives the
//! frame's action table for [`Animator::set_actions`](crate::Animator::set_actions)
//! (or [`cpu::mixed_poses`](crate::cpu::mixed_poses)), the root motion of
//! a chosen node over the step and the markers crossed during it.
//! [`gather`] puts many players' tables into one for a crowd of
//! characters.
//!
//! The rules (`docs/USAGE.md`, "Playback", states them with formulas) are
//! three.js's `AnimationAction`'s: linear weight ramps, a crossfade's
//! weights summing to what they summed to before it. Root motion and
//! events are computed on the CPU from the root's tracks and the markers
//! alone, in the same frame: a game moves its entity and plays its sounds
//! with them, with no readback.
//!
//! ```
//! use std::sync::Arc;
//! use keyframe_gpu::playback::{Clips, Player};
//! use keyframe_gpu::{AnimationLibrary, Clip, Interpolation, Property, Track, WrapMode};
//! # fn main() -> Result<(), keyframe_gpu::Error> {
//! let step = |x: f32| Track::new(0, Property::Translation, Interpolation::Linear,
//!     vec![0.0, 1.0], vec![0.0, 0.0, 0.0, x, 0.0, 0.0]);
//! let library = AnimationLibrary::new(vec![Clip::new("walk", vec![step(1.0)]),
//!                                          Clip::new("run", vec![step(3.0)])])?;
//! let clips = Arc::new(Clips::new(&library));
//! let mut player = Player::new(&clips);
//! player.play(0)?;
//! player.set_wrap(WrapMode::Repeat);
//! player.advance(0.5)?;
//! player.crossfade(1, 0.25)?;
//! let frame = player.advance(0.125)?;
//! // Halfway through the crossfade: walk at 0.5, run at 0.5.
//! let weights: Vec<f32> = frame.actions.iter().map(|a| a.weight).collect();
//! assert_eq!(weights, [0.5, 0.5]);
//! # Ok(()) }
//! ```
//!
//! A crowd's frame, with root motion and a marker (`docs/USAGE.md`,
//! "Playback"):
//!
//! ```
//! use std::sync::Arc;
//! use keyframe_gpu::playback::{gather, Clips, Player};
//! use keyframe_gpu::{Action, BoundLibrary, Error};
//!
//! /// A hundred characters idling; character 3 starts running. `hips` is
//! /// the rig node whose motion moves the entities.
//! fn frames(bound: &BoundLibrary, hips: u32) -> Result<(Vec<Action>, Vec<u32>), Error> {
//!     let mut clips = Clips::with_root(bound, hips)?;
//!     clips.add_marker(1, 0.42, "footstep")?;
//!     let clips = Arc::new(clips);
//!     let mut players: Vec<Player> =
//!         (0..100).map(|c| Player::new(&clips).with_character(c)).collect();
//!     for p in &mut players {
//!         p.play(0)?; // idle, looping
//!     }
//!     players[3].crossfade(1, 0.3)?;
//!     for p in &mut players {
//!         let frame = p.advance(1.0 / 60.0)?;
//!         let _moved_by = frame.root_motion.translation; // move the entity
//!         for _event in &frame.events { /* play the footstep's sound */ }
//!     }
//!     let (mut actions, mut counts) = (Vec::new(), Vec::new());
//!     gather(&players, &mut actions, &mut counts);
//!     Ok((actions, counts)) // for animator.set_actions(queue, &actions, &counts)
//! }
//! ```

pub(crate) mod clock;
mod root;

use std::sync::Arc;

pub use crate::{error::playback::PlaybackError, model::track::Marker};
use clock::{crossings, Clock, Step};
pub use root::RootMotion;
use root::{Blend, RootTracks, Scratch};

use crate::error::Result;
use crate::model::library::AnimationLibrary;
use crate::model::mix::{Action, Mask, MaskId};
use crate::model::track::WrapMode;
use crate::model::BoundLibrary;

/// The most marker crossings one action reports in one step (a step much
/// longer than the clip crosses each marker once per loop).
pub const MAX_EVENTS_PER_STEP: usize = 256;

/// A marker crossed during a step.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The marker's name.
    pub name: Arc<str>,
    /// The clip.
    pub clip: u32,
    /// The marker's clip time.
    pub time: f64,
    /// The weight of the action that crossed it, after the step (as in
    /// the frame's action table): during a crossfade both clips report
    /// their markers, and a game may keep only the heavier one's.
    pub weight: f32,
}

/// What players of one library share: clip durations, markers, and the
/// root's tracks for root motion. Built once, shared through an `Arc`.
#[derive(Debug, Clone)]
pub struct Clips {
    durations: Vec<f64>,
    markers: Vec<Vec<Marker>>,
    root: Option<RootTracks>,
}

impl Clips {
    /// The clips of `library`: their durations and markers
    /// ([`Clip::markers`](crate::Clip::markers)), no root motion.
    #[must_use]
    pub fn new(library: &AnimationLibrary) -> Clips {
        let durations: Vec<f64> = library
            .clips()
            .iter()
            .map(|c| f64::from(c.duration()))
            .collect();
        Clips {
            markers: library.clips().iter().map(|c| c.markers.clone()).collect(),
            durations,
            root: None,
        }
    }

    /// The clips of `bound`'s library with root motion of rig node `root`
    /// (its translation and rotation tracks in each clip). A clip that
    /// animates neither moves the root by nothing.
    ///
    /// # Errors
    /// [`PlaybackError::UnknownRoot`] for a node the rig does not have.
    pub fn with_root(bound: &BoundLibrary, root: u32) -> Result<Clips> {
        let mut clips = Clips::new(bound.library());
        clips.root = Some(RootTracks::of(bound, root)?);
        Ok(clips)
    }

    /// Takes the mixer's masks ([`MixerDesc::masks`](crate::MixerDesc::masks),
    /// in the order of their [`MaskId`]s), so that a masked action's root
    /// motion weighs by its mask's factor at the root node, as the mixer
    /// weighs its pose. Without them (or without
    /// [`with_root`](Self::with_root)) a masked action moves no root.
    ///
    /// # Errors
    /// [`MixError::MaskOfOtherRig`](crate::MixError::MaskOfOtherRig) or
    /// [`MixError::MaskLength`](crate::MixError::MaskLength) for a mask of
    /// another rig than `bound`'s.
    pub fn set_masks(&mut self, bound: &BoundLibrary, masks: &[Mask]) -> Result<()> {
        crate::model::mix::check_masks(bound.rig(), masks)?;
        if let Some(root) = &mut self.root {
            root.set_masks(masks);
        }
        Ok(())
    }

    /// Adds a marker `name` at clip time `time` of clip `clip` (in
    /// `[0, duration]`; a time past the clip is kept and never crossed).
    ///
    /// # Errors
    /// [`PlaybackError::BadMarker`] for an unknown clip or a time that is
    /// NaN, infinite or negative.
    pub fn add_marker(&mut self, clip: u32, time: f64, name: &str) -> Result<()> {
        let bad = |reason| PlaybackError::BadMarker {
            clip,
            time,
            name: name.to_owned(),
            reason,
        };
        let Some(list) = self.markers.get_mut(clip as usize) else {
            return Err(bad("the library has no such clip").into());
        };
        if !time.is_finite() || time < 0.0 {
            return Err(bad("the time is not a finite number >= 0").into());
        }
        list.push(Marker {
            time,
            name: name.into(),
        });
        list.sort_by(|a, b| a.time.total_cmp(&b.time));
        Ok(())
    }

    /// Clips in the library.
    #[must_use]
    pub fn len(&self) -> usize {
        self.durations.len()
    }

    /// Whether the library has no clip.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.durations.is_empty()
    }

    /// Clip `clip`'s duration in seconds.
    #[must_use]
    pub fn duration(&self, clip: u32) -> Option<f64> {
        self.durations.get(clip as usize).copied()
    }

    /// Clip `clip`'s markers, by time.
    #[must_use]
    pub fn markers(&self, clip: u32) -> &[Marker] {
        self.markers.get(clip as usize).map_or(&[], Vec::as_slice)
    }
}

/// A weight ramp: from `from` to `to` over `duration` seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Fade {
    from: f32,
    to: f32,
    elapsed: f64,
    duration: f64,
}

impl Fade {
    fn weight(&self) -> f32 {
        let f = (self.elapsed / self.duration).clamp(0.0, 1.0) as f32;
        self.from + (self.to - self.from) * f
    }
}

/// One action of a player: a clip's playhead, its weight and fade, and
/// for a layer its mask or additive reference.
#[derive(Debug, Clone, PartialEq)]
struct Playing {
    clip: u32,
    clock: Clock,
    wrap: WrapMode,
    weight: f32,
    fade: Option<Fade>,
    /// The layer it belongs to (`None`: the base).
    layer: Option<u32>,
    mask: Option<MaskId>,
    reference_time: Option<f64>,
    /// This action's own time scale (layers), times the player's speed.
    speed: f64,
    /// Passes it plays before it stops (`None`: no limit).
    repetitions: Option<u64>,
}

/// How a layer plays: over the base actions, through a mask or added.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Layer {
    /// The layer's weight (before fades).
    pub weight: f32,
    /// Its mask ([`MixerDesc::add_mask`](crate::MixerDesc::add_mask)'s
    /// handle), `None` for every node.
    pub mask: Option<MaskId>,
    /// `Some(reference time)`: additive, relative to its clip at that time.
    pub additive: Option<f64>,
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
            wrap: WrapMode::Repeat,
            speed: 1.0,
            repetitions: None,
        }
    }
}

/// The state of a frame after [`Player::advance`].
#[derive(Debug, Clone, Default)]
pub struct Frame {
    /// The action table, base actions first (the oldest first), then the
    /// layers in the order they were added: what
    /// [`Animator::set_actions`](crate::Animator::set_actions) takes for
    /// this character. Times are clip times (already folded), with
    /// [`WrapMode::Clamp`].
    pub actions: Vec<Action>,
    /// The root's motion over the step (none without
    /// [`Clips::with_root`], or when paused).
    pub root_motion: RootMotion,
    /// The markers crossed during the step, in playhead order per action,
    /// actions in table order.
    pub events: Vec<Event>,
}

/// One character's playback: its actions, speed, pause and wrap, and the
/// last frame. See the [module](self) documentation.
#[derive(Debug, Clone)]
pub struct Player {
    clips: Arc<Clips>,
    character: u32,
    playing: Vec<Playing>,
    next_layer: u32,
    speed: f64,
    paused: bool,
    wrap: WrapMode,
    repetitions: Option<u64>,
    max_actions: u32,
    loops: u64,
    finished: bool,
    frame: Frame,
    scratch: Scratch,
    /// Marker crossings of one step: (playhead position, marker).
    hits: Vec<(f64, usize)>,
    positions: Vec<f64>,
}

impl Player {
    /// A player of `clips`, playing nothing (the rig's rest pose), speed
    /// 1, wrap [`WrapMode::Repeat`].
    #[must_use]
    pub fn new(clips: &Arc<Clips>) -> Player {
        Player {
            clips: Arc::clone(clips),
            character: 0,
            playing: Vec::new(),
            next_layer: 0,
            speed: 1.0,
            paused: false,
            wrap: WrapMode::Repeat,
            repetitions: None,
            max_actions: crate::MAX_ACTIONS,
            loops: 0,
            finished: false,
            frame: Frame::default(),
            scratch: Scratch::default(),
            hits: Vec::new(),
            positions: Vec::new(),
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
    /// that the base's weights keep their sum. Applies to the actions
    /// added after it.
    #[must_use]
    pub fn with_max_actions(self, max: u32) -> Player {
        Player {
            max_actions: max.max(1),
            ..self
        }
    }

    /// Drops the lightest base actions (the oldest of equals) until one
    /// more action fits in the table; returns their weights' sum.
    /// Refused, with nothing dropped, when the layers leave no room.
    fn make_room(&mut self, command: &'static str) -> std::result::Result<f32, PlaybackError> {
        let excess = (self.playing.len() + 1).saturating_sub(self.max_actions as usize);
        let base = self.playing.iter().filter(|p| p.layer.is_none()).count();
        if excess > base {
            return Err(PlaybackError::TooManyActions {
                character: self.character,
                command,
                max: self.max_actions,
            });
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

    fn check_clip(
        &self,
        command: &'static str,
        clip: u32,
    ) -> std::result::Result<f64, PlaybackError> {
        self.clips.duration(clip).ok_or(PlaybackError::UnknownClip {
            character: self.character,
            command,
            clip,
            clip_count: self.clips.len(),
        })
    }

    fn check_number(
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

    fn base_action(&self, clip: u32, weight: f32, fade: Option<Fade>) -> Playing {
        Playing {
            clip,
            clock: Clock::at(0.0, 0.0, self.wrap),
            wrap: self.wrap,
            weight,
            fade,
            layer: None,
            mask: None,
            reference_time: None,
            speed: 1.0,
            repetitions: self.repetitions,
        }
    }

    /// Ramps every base action from its weight to 0 over `duration`.
    fn fade_base_out(&mut self, duration: f64) {
        for p in self.playing.iter_mut().filter(|p| p.layer.is_none()) {
            p.fade = Some(Fade {
                from: p.weight,
                to: 0.0,
                elapsed: 0.0,
                duration,
            });
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

    /// Plays `clip` from its start at weight 1, alone in the base (the
    /// layers stay); the loop count and finished flag start again.
    ///
    /// # Errors
    /// [`PlaybackError::UnknownClip`]; [`PlaybackError::TooManyActions`]
    /// when the layers fill the table.
    pub fn play(&mut self, clip: u32) -> Result<()> {
        self.check_clip("play", clip)?;
        let layers = self.playing.iter().filter(|p| p.layer.is_some()).count();
        if layers >= self.max_actions as usize {
            return Err(PlaybackError::TooManyActions {
                character: self.character,
                command: "play",
                max: self.max_actions,
            }
            .into());
        }
        self.playing.retain(|p| p.layer.is_some());
        let action = self.base_action(clip, 1.0, None);
        self.playing.insert(0, action);
        self.loops = 0;
        self.finished = false;
        Ok(())
    }

    /// Crossfades the base to `to` over `duration` seconds: every base
    /// action ramps linearly from its current weight to 0, and `to` from 0
    /// (or its current weight, when it is fading out) to the sum of the
    /// base's current weights (1 after a [`play`](Self::play)). A
    /// crossfade during a fade starts from the current weights. `to`
    /// starts from its beginning unless it is playing already. A full
    /// table drops its lightest base action first
    /// ([`with_max_actions`](Self::with_max_actions)).
    ///
    /// # Errors
    /// [`PlaybackError::UnknownClip`], [`PlaybackError::BadDuration`],
    /// [`PlaybackError::TooManyActions`] when the layers fill the table.
    pub fn crossfade(&mut self, to: u32, duration: f64) -> Result<()> {
        self.crossfade_from("crossfade", to, duration)
    }

    /// As [`crossfade`](Self::crossfade), with `to`'s playhead moved to
    /// clip time `time` (folded by its wrap), whether it was playing or
    /// not: a game keeps a walk and a run in step, or each character of a
    /// crowd at its own phase, as three.js sets `action.time` before
    /// `crossFadeTo`. No event and no root motion across the move.
    ///
    /// # Errors
    /// Those of [`crossfade`](Self::crossfade);
    /// [`PlaybackError::BadNumber`] for a `time` that is NaN or infinite.
    pub fn crossfade_at(&mut self, to: u32, duration: f64, time: f64) -> Result<()> {
        self.check_number("crossfade_at", "time", time, false)?;
        self.crossfade_from("crossfade_at", to, duration)?;
        let d = self.clips.duration(to).unwrap_or(0.0);
        if let Some(p) = self.playing.iter_mut().rfind(|p| p.layer.is_none()) {
            p.clock = Clock::at(time, d, p.wrap);
        }
        Ok(())
    }

    /// [`crossfade`](Self::crossfade), its errors naming `command`.
    fn crossfade_from(&mut self, command: &'static str, to: u32, duration: f64) -> Result<()> {
        self.check_clip(command, to)?;
        self.check_duration(command, duration)?;
        let total: f32 = self
            .playing
            .iter()
            .filter(|p| p.layer.is_none())
            .map(|p| p.weight)
            .sum();
        let total = if total > 0.0 { total } else { 1.0 };
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
        self.fade_base_out(duration);
        let fade = Fade {
            from: incoming.weight,
            to: total,
            elapsed: 0.0,
            duration,
        };
        self.insert_base(Playing {
            fade: Some(fade),
            ..incoming
        });
        self.loops = 0;
        self.finished = false;
        Ok(())
    }

    /// Adds `clip` to the base, from its start, ramping from weight 0 to
    /// 1 over `duration` seconds; it becomes the current action
    /// ([`current`](Self::current)). A full table drops its lightest base
    /// action first ([`with_max_actions`](Self::with_max_actions)).
    ///
    /// # Errors
    /// [`PlaybackError::UnknownClip`], [`PlaybackError::BadDuration`],
    /// [`PlaybackError::TooManyActions`] when the layers fill the table.
    pub fn fade_in(&mut self, clip: u32, duration: f64) -> Result<()> {
        self.check_clip("fade_in", clip)?;
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
        self.loops = 0;
        self.finished = false;
        Ok(())
    }

    /// Ramps every base action from its current weight to 0 over
    /// `duration` seconds; they are removed when they reach it.
    ///
    /// # Errors
    /// [`PlaybackError::BadDuration`].
    pub fn fade_out(&mut self, duration: f64) -> Result<()> {
        self.check_duration("fade_out", duration)?;
        self.fade_base_out(duration);
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

    /// Sets how the base actions wrap (those playing and those to come).
    pub fn set_wrap(&mut self, wrap: WrapMode) {
        self.wrap = wrap;
        for p in self.playing.iter_mut().filter(|p| p.layer.is_none()) {
            p.wrap = wrap;
        }
        self.finished = false;
    }

    /// Sets how many passes the base actions (those playing and those to
    /// come) play with [`WrapMode::Repeat`] or [`WrapMode::PingPong`]
    /// before they stop: `Some(n)` ends the `n`-th loop (repeat) or the
    /// `n`-th pass out or back (ping-pong) at its end, holds the playhead
    /// there and sets [`finished`](Self::finished), as three.js's
    /// `AnimationAction.repetitions`; `None` (the default) plays on. The
    /// passes count from the action's start or its last
    /// [`seek`](Self::seek); an action with none left stops where it
    /// stands. An action stopped by its limit holds until it is played
    /// or sought again.
    pub fn set_repetitions(&mut self, repetitions: Option<u64>) {
        self.repetitions = repetitions;
        for p in self.playing.iter_mut().filter(|p| p.layer.is_none()) {
            p.repetitions = repetitions;
        }
    }

    /// Pauses or resumes: a paused player's playheads and fades stand
    /// still, and it reports no root motion and no event.
    pub fn set_paused(&mut self, paused: bool) {
        self.paused = paused;
    }

    /// Moves every base action's playhead to clip time `time` (folded by
    /// its wrap): no event and no root motion across the jump. Their
    /// [repetitions](Self::set_repetitions) count again from there.
    ///
    /// # Errors
    /// [`PlaybackError::BadNumber`] for NaN or infinity.
    pub fn seek(&mut self, time: f64) -> Result<()> {
        self.check_number("seek", "time", time, false)?;
        let clips = Arc::clone(&self.clips);
        for p in self.playing.iter_mut().filter(|p| p.layer.is_none()) {
            let d = clips.duration(p.clip).unwrap_or(0.0);
            p.clock = Clock::at(time, d, p.wrap);
        }
        self.finished = false;
        Ok(())
    }

    /// Adds a layer playing `clip` from its start over the base; returns
    /// its handle.
    ///
    /// # Errors
    /// [`PlaybackError::UnknownClip`]; [`PlaybackError::BadNumber`] for a
    /// weight or speed that is not finite, a negative weight or an
    /// additive reference time that is not finite;
    /// [`PlaybackError::TooManyActions`] when the table is full
    /// ([`with_max_actions`](Self::with_max_actions)).
    pub fn add_layer(&mut self, clip: u32, layer: Layer) -> Result<u32> {
        self.check_clip("add_layer", clip)?;
        self.check_number("add_layer", "weight", f64::from(layer.weight), true)?;
        self.check_number("add_layer", "speed", layer.speed, false)?;
        if let Some(r) = layer.additive {
            self.check_number("add_layer", "reference time", r, false)?;
        }
        if self.playing.len() >= self.max_actions as usize {
            return Err(PlaybackError::TooManyActions {
                character: self.character,
                command: "add_layer",
                max: self.max_actions,
            }
            .into());
        }
        let id = self.next_layer;
        self.next_layer += 1;
        self.playing.push(Playing {
            clip,
            clock: Clock::at(0.0, 0.0, layer.wrap),
            wrap: layer.wrap,
            weight: layer.weight,
            fade: None,
            layer: Some(id),
            mask: layer.mask,
            reference_time: layer.additive,
            speed: layer.speed,
            repetitions: layer.repetitions,
        });
        Ok(id)
    }

    /// Ramps layer `layer`'s weight to `weight` over `duration` seconds
    /// (to 0: the layer is removed when it gets there).
    ///
    /// # Errors
    /// [`PlaybackError::UnknownLayer`], [`PlaybackError::BadDuration`],
    /// [`PlaybackError::BadNumber`].
    pub fn fade_layer(&mut self, layer: u32, weight: f32, duration: f64) -> Result<()> {
        self.check_duration("fade_layer", duration)?;
        self.check_number("fade_layer", "weight", f64::from(weight), true)?;
        let character = self.character;
        let p = self
            .playing
            .iter_mut()
            .find(|p| p.layer == Some(layer))
            .ok_or(PlaybackError::UnknownLayer {
                character,
                command: "fade_layer",
                layer,
            })?;
        p.fade = Some(Fade {
            from: p.weight,
            to: weight,
            elapsed: 0.0,
            duration,
        });
        Ok(())
    }

    /// Removes layer `layer` at once.
    ///
    /// # Errors
    /// [`PlaybackError::UnknownLayer`].
    pub fn remove_layer(&mut self, layer: u32) -> Result<()> {
        let before = self.playing.len();
        self.playing.retain(|p| p.layer != Some(layer));
        if self.playing.len() == before {
            return Err(PlaybackError::UnknownLayer {
                character: self.character,
                command: "remove_layer",
                layer,
            }
            .into());
        }
        Ok(())
    }

    /// Advances every playhead by `dt * speed` seconds and every fade by
    /// `dt` (a paused player: neither), then reports the frame: the
    /// action table, the root motion over the step and the markers
    /// crossed.
    ///
    /// # Errors
    /// [`PlaybackError::BadNumber`] for a `dt` that is NaN, infinite or
    /// negative, or whose product with an action's speed is infinite;
    /// nothing advances.
    pub fn advance(&mut self, dt: f64) -> Result<&Frame> {
        self.check_number("advance", "dt", dt, true)?;
        // A step past f64's range (a huge dt times a huge speed) moves no
        // playhead anywhere meaningful: refused before anything moves.
        for p in &self.playing {
            self.check_number("advance", "dt * speed", dt * self.speed * p.speed, false)?;
        }
        self.frame.events.clear();
        let mut blend = Blend::new();
        let clips = Arc::clone(&self.clips);
        let moving = !self.paused;
        // The newest base action's step (the base comes first).
        let mut main_step = None;
        for i in 0..self.playing.len() {
            let p = &mut self.playing[i];
            let d = clips.duration(p.clip).unwrap_or(0.0);
            let delta = if moving {
                dt * self.speed * p.speed
            } else {
                0.0
            };
            let step = p.clock.step_limited(delta, d, p.wrap, p.repetitions);
            if moving {
                if let Some(f) = &mut p.fade {
                    f.elapsed += dt;
                    p.weight = f.weight();
                }
            }
            if p.layer.is_none() {
                main_step = Some(step);
            }
            // An action that stands still still takes its weight's part of
            // the blend, with no motion.
            if let (Some(root), None) = (&clips.root, p.reference_time) {
                // The mixer's weight of the action at the root.
                let w = p.weight * root.mask_factor(p.mask);
                if w > 0.0 {
                    let m = root.motion(p.clip, d, p.wrap, &step, &mut self.scratch);
                    blend.add(m, w, root.animates(p.clip));
                }
            }
            if step.start == step.end {
                continue;
            }
            self.push_marker_events(i, &step, d);
        }
        if let Some(step) = main_step {
            self.note_main_step(&step);
        }
        // Fades that reached 0 end their action; others keep their weight.
        self.playing.retain(|p| match p.fade {
            Some(f) if f.elapsed >= f.duration => f.to > 0.0,
            _ => true,
        });
        for p in &mut self.playing {
            if p.fade.is_some_and(|f| f.elapsed >= f.duration) {
                p.fade = None;
            }
        }
        self.frame.root_motion = blend.finish();
        self.frame.actions.clear();
        self.frame
            .actions
            .extend(self.playing.iter().map(|p| Action {
                clip: p.clip,
                time: p.clock.time,
                wrap: WrapMode::Clamp,
                weight: p.weight,
                mask: p.mask,
                reference_time: p.reference_time,
            }));
        Ok(&self.frame)
    }

    /// Reports the markers action `i`'s playhead crossed in `step` (of a
    /// clip `duration` seconds long) as events, in playhead order, at most
    /// [`MAX_EVENTS_PER_STEP`]; allocates nothing once its buffers have
    /// grown.
    fn push_marker_events(&mut self, i: usize, step: &Step, duration: f64) {
        let Some(p) = self.playing.get(i) else {
            return;
        };
        let markers = self.clips.markers(p.clip);
        // Every marker's crossings, then all of them in playhead order.
        self.hits.clear();
        for (k, marker) in markers.iter().enumerate() {
            let before = self.positions.len();
            crossings(
                step,
                marker.time,
                duration,
                p.wrap,
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
            let order = a.0.total_cmp(&b.0);
            let order = if forward { order } else { order.reverse() };
            order.then(a.1.cmp(&b.1))
        });
        self.hits.truncate(MAX_EVENTS_PER_STEP);
        for &(_, k) in &self.hits {
            let marker = &markers[k];
            self.frame.events.push(Event {
                name: Arc::clone(&marker.name),
                clip: p.clip,
                time: marker.time,
                weight: p.weight,
            });
        }
    }

    fn note_main_step(&mut self, step: &Step) {
        self.loops = self.loops.saturating_add(step.folds);
        if step.reached_end {
            self.finished = true;
        }
    }

    /// The last frame [`advance`](Self::advance) reported.
    #[must_use]
    pub fn frame(&self) -> &Frame {
        &self.frame
    }

    /// The loop ends (repeat) or turns (ping-pong) the current action
    /// (see [`current`](Self::current)) crossed since it started.
    #[must_use]
    pub fn loops(&self) -> u64 {
        self.loops
    }

    /// Whether the current action (see [`current`](Self::current))
    /// reached the end it moves towards, wrapped with [`WrapMode::Clamp`]
    /// (played once), or played its last
    /// [repetition](Self::set_repetitions).
    #[must_use]
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// The current action's clip and clip time, if any: the base action
    /// started last (by [`play`](Self::play), [`crossfade`](Self::crossfade)
    /// or [`fade_in`](Self::fade_in)), the one a crossfade goes to. Its
    /// loop count and finished flag are [`loops`](Self::loops) and
    /// [`finished`](Self::finished).
    #[must_use]
    pub fn current(&self) -> Option<(u32, f64)> {
        self.playing
            .iter()
            .rfind(|p| p.layer.is_none())
            .map(|p| (p.clip, p.clock.time))
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

/// Every player's actions in one table, `counts[c]` of them character
/// `c`'s (player `c`'s last frame), for
/// [`Animator::set_actions`](crate::Animator::set_actions) or
/// [`Crowd::set_actions`](crate::Crowd::set_actions). Clears both vectors
/// first; allocates nothing once they have the capacity.
pub fn gather<'a>(
    players: impl IntoIterator<Item = &'a Player>,
    actions: &mut Vec<Action>,
    counts: &mut Vec<u32>,
) {
    actions.clear();
    counts.clear();
    for p in players {
        actions.extend_from_slice(&p.frame.actions);
        counts.push(p.frame.actions.len() as u32);
    }
}

/// `bound` with root motion stripped from the pose: every translation
/// track of rig node `root` holds the node's rest translation on the axes
/// `axes` selects (x, y, z), at every key (CUBICSPLINE tangents of those
/// axes 0), so the GPU pose keeps the root in place there while
/// [`Clips::with_root`] of the original `bound` reports its motion. The
/// result is uncompressed: compress it afterwards if needed.
///
/// # Errors
/// [`PlaybackError::UnknownRoot`] for a node the rig does not have; the
/// library's own errors (none for a library that was valid).
pub fn in_place(bound: &BoundLibrary, root: u32, axes: [bool; 3]) -> Result<BoundLibrary> {
    use crate::kinds::{Interpolation, Property};
    let rig = bound.rig();
    let Some(node) = rig.nodes().get(root as usize) else {
        return Err(PlaybackError::UnknownRoot {
            node: root,
            node_count: rig.nodes().len(),
        }
        .into());
    };
    let rest = node.translation;
    let mut clips = bound.library().clips().to_vec();
    for (c, clip) in clips.iter_mut().enumerate() {
        for (t, track) in clip.tracks.iter_mut().enumerate() {
            if track.property != Property::Translation
                || bound.node(c as u32, t as u32) != Some(root)
            {
                continue;
            }
            let cubic = track.interpolation == Interpolation::CubicSpline;
            for (e, v) in track.values.chunks_exact_mut(3).enumerate() {
                // CUBICSPLINE elements: in-tangent, value, out-tangent.
                let value = !cubic || e % 3 == 1;
                for (axis, x) in v.iter_mut().enumerate() {
                    if axes[axis] {
                        *x = if value { rest[axis] } else { 0.0 };
                    }
                }
            }
        }
    }
    let library = AnimationLibrary::new(clips)?;
    Ok(bound.with_same_tracks(library))
}
