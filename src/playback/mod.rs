//! The playback layer: what drives the mixer each frame, without a
//! device. One [`Player`] per character holds its actions (clip,
//! playhead, speed, wrap, weight and fades, masked, additive or override
//! layers); [`Player::advance`] moves every playhead by a time step and
//! gives the frame's action table for [`Animator::set_actions`](crate::Animator::set_actions)
//! (or [`cpu::mixed_poses`](crate::cpu::mixed_poses)), the root motion of
//! a chosen node over the step and the markers crossed during it.
//! [`Crowd::player`](crate::Crowd::player) makes a player for a crowd's
//! model and [`Crowd::set_players`](crate::Crowd::set_players) sets the
//! crowd's frame from its characters' players in one call.
//!
//! A player's commands name clips by [`ClipHandle`]: a clip of one
//! [`Clips`] (`clips.clip("run")?`, `clips.clip_at(1)?`,
//! `player.clip("run")?`), refused by a player of other clips, so that a
//! clip of one model never plays the clip of the same index of another.
//!
//! A [`BlendSpace`] ([`Clips::add_blend_space`]) weighs its clips from
//! parameters a game sets each frame (1D linear, or Johansen's gradient
//! bands in a plane, Cartesian or polar), smoothed, its clips kept in
//! step by a shared phase or their markers
//! ([`Command::PlayBlendSpace`], [`Command::SetBlendParams`];
//! `docs/USAGE.md`, "Blend spaces").
//!
//! The rules (`docs/USAGE.md`, "Playback", states them with formulas) are
//! three.js's `AnimationAction`'s: linear weight ramps, a crossfade's
//! weights ending where the base was heading, wrap and repetitions per
//! action. Root motion and events are computed on the CPU from the root's
//! tracks and the markers alone, in the same frame: a game moves its
//! entity and plays its sounds with them, with no readback.
//!
//! ```
//! use std::sync::Arc;
//! use keyframe_gpu::playback::{Clips, Command, Player};
//! use keyframe_gpu::{AnimationLibrary, Clip, Interpolation, Property, Track, WrapMode};
//! # fn main() -> Result<(), keyframe_gpu::Error> {
//! let step = |x: f32| Track::new(0, Property::Translation, Interpolation::Linear,
//!     vec![0.0, 1.0], vec![0.0, 0.0, 0.0, x, 0.0, 0.0]);
//! let library = AnimationLibrary::new(vec![Clip::new("walk", vec![step(1.0)]),
//!                                          Clip::new("run", vec![step(3.0)])])?;
//! let clips = Arc::new(Clips::new(&library));
//! let (walk, run) = (clips.clip("walk")?, clips.clip("run")?);
//! let mut player = Player::new(&clips);
//! player.command(Command::Play(walk))?;
//! player.command(Command::SetWrap(WrapMode::Repeat))?;
//! player.advance(0.5)?;
//! player.command(Command::Crossfade(run, 0.25))?;
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
//! use keyframe_gpu::playback::{Clips, Command, Player};
//! use keyframe_gpu::{BoundLibrary, CharacterId, Crowd, Error, ModelId};
//!
//! /// A hundred characters of `model` (added with a mixer) idling;
//! /// character 3 starts running. `hips` is the rig node whose motion
//! /// moves the entities.
//! fn frame(crowd: &mut Crowd, queue: &wgpu::Queue, model: ModelId,
//!          bound: &BoundLibrary, hips: u32) -> Result<(), Error> {
//!     let mut clips = Clips::with_root(bound, hips)?;
//!     clips.add_marker(1, 0.42, "footstep")?;
//!     let clips = Arc::new(clips);
//!     let (idle, run) = (clips.clip_at(0)?, clips.clip_at(1)?);
//!     let mut cast: Vec<(CharacterId, Player)> = Vec::new();
//!     for _ in 0..100 {
//!         let mut player = crowd.player(model, &clips)?; // the mixer's limit
//!         player.command(Command::Play(idle))?; // looping
//!         cast.push((crowd.add_character(model)?, player));
//!     }
//!     cast[3].1.command(Command::Crossfade(run, 0.3))?;
//!     for (_, player) in &mut cast {
//!         let frame = player.advance(1.0 / 60.0)?;
//!         let _moved_by = frame.root_motion.translation; // move the entity
//!         for _event in &frame.events { /* play the footstep's sound */ }
//!     }
//!     crowd.set_players(queue, cast.iter().map(|(c, p)| (*c, p)))?;
//!     Ok(()) // then crowd.record(&mut encoder)
//! }
//! ```

mod advance;
pub(crate) mod blend;
mod clips;
mod crowd;
mod gpu;
mod ground;
mod layers;
mod player;
mod root;
mod spaces;
mod state;

use std::sync::Arc;

pub use self::{
    blend::{BlendMode, BlendSpace, BlendSpaceId, BlendSync},
    clips::{ClipHandle, Clips, ClipsId},
    gpu::{Command, GpuPlayers},
    ground::{in_place, in_place_with_up},
    player::{Layer, LayerId, Player},
    root::RootMotion,
    state::ActionState,
};
pub use crate::{error::playback::PlaybackError, model::track::Marker};

use crate::model::mix::Action;

/// The most marker crossings one action reports in one step (a step much
/// longer than the clip crosses each marker once per loop).
pub const MAX_EVENTS_PER_STEP: usize = 256;

/// A marker crossed during a step.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The marker's name.
    pub name: Arc<str>,
    /// The clip.
    pub clip: ClipHandle,
    /// The marker's clip time.
    pub time: f64,
    /// The weight of the action that crossed it, after the step (as in
    /// the frame's action table): during a crossfade both clips report
    /// their markers, and a game may keep only the heavier one's.
    pub weight: f32,
}

/// The state of a frame after [`Player::advance`].
#[derive(Debug, Clone, Default)]
pub struct Frame {
    /// The action table, base actions first (the oldest first), then the
    /// layers in the order they were added: what
    /// [`Animator::set_actions`](crate::Animator::set_actions) takes for
    /// this character (its length in `counts`), and
    /// [`Crowd::set_players`](crate::Crowd::set_players) sets for a
    /// crowd's character. Times are clip times (already folded), with
    /// [`WrapMode::Clamp`](crate::WrapMode::Clamp).
    pub actions: Vec<Action>,
    /// The root's motion over the step, in the model's space (none
    /// without [`Clips::with_root`], or when paused).
    pub root_motion: RootMotion,
    /// The markers crossed during the step, in playhead order per action,
    /// actions in table order.
    pub events: Vec<Event>,
}
