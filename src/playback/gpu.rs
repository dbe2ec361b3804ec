//! [`GpuPlayers`]: the [`Player`] commands on the characters of a crowd
//! model whose playback state lives on the GPU, and CPU twins of the
//! characters a game subscribes.

use std::collections::HashMap;
use std::sync::Arc;

use glam::{Quat, Vec2, Vec3};

use super::blend::BlendSpaceId;
use super::clips::{ClipHandle, Clips};
use super::player::{check_duration, check_number, Layer, LayerId, Player};
use super::{Event, RootMotion};
use crate::cpu::playback::clock::ticks;
use crate::cpu::playback::commands::new_character;
use crate::error::{Error, PlaybackError, Result};
use crate::gpu::playback::decode_events;
use crate::gpu::Crowd;
use crate::layout::GpuPlaybackCommand;
use crate::model::crowd::{CharacterId, ModelId};
use crate::model::track::WrapMode;

/// The characters of one model of a [`Crowd`] played on the GPU: each
/// character's actions (clip, playhead, speed, wrap, repetitions, fades,
/// layers) live in GPU buffers, and a compute pass recorded with the
/// crowd's ([`Crowd::record`]) applies the frame's commands and steps them
/// by the rules of [`Player`] (its CPU twin: the same records and
/// arithmetic), then writes the sampler's rows and the mixer's tables
/// itself. The host writes only the frame's commands, in one buffer
/// write: a frame in which no character is given a command costs the
/// CPU the same for ten characters or a hundred thousand.
///
/// The commands are [`Player`]'s ([`Command`]), naming a character of the model
/// ([`Crowd::add_character`]) and clips of the [`Clips`] the players
/// were made with; they take effect in the next
/// [`advance`](Self::advance), in the order given. Each is checked when
/// given (a clip of other clips, a bad number or duration: an error,
/// nothing queued); what depends on the character's state (a table with
/// no room, a layer gone) is decided on the GPU, which skips the command
/// as [`Player`] refuses it (nothing changes).
///
/// A game that needs a character's root motion, events or pose in the
/// same frame (the player's own character, one a camera follows)
/// [`subscribe`](Self::subscribe)s it: the crate then keeps the exact
/// CPU twin of that character, a [`Player`] started from the GPU's state
/// and driven by the same commands and steps ([`subscribed`](Self::subscribed)
/// gives its frame). Its cost is that of a [`Player`] per subscribed
/// character.
///
/// ```no_run
/// # fn f(device: &wgpu::Device, queue: &wgpu::Queue, bound: &keyframe_gpu::BoundLibrary)
/// #      -> Result<(), keyframe_gpu::Error> {
/// use std::sync::Arc;
/// use keyframe_gpu::playback::{Clips, Command, GpuPlayers};
/// use keyframe_gpu::{Crowd, MixerDesc};
/// let mut crowd = Crowd::new();
/// let fox = crowd.add_mixed_model(device, queue, "fox", bound, &MixerDesc::new(100_000, 2))?;
/// let clips = Arc::new(Clips::new(bound.library()));
/// let mut players = GpuPlayers::new(device, queue, &mut crowd, fox, &clips)?;
/// let (walk, run) = (clips.clip("Walk")?, clips.clip("Run")?);
/// let hero = crowd.add_character(fox)?;
/// players.command(hero, Command::Play(walk))?;
/// players.subscribe(device, queue, &crowd, hero)?;
/// // Each frame: this frame's commands, then the step, then the passes.
/// players.command(hero, Command::Crossfade(run, 0.3))?;
/// players.advance(device, queue, &mut crowd, 1.0 / 60.0)?;
/// let _moved = players.subscribed(hero).map(|p| p.frame().root_motion);
/// let mut encoder = device.create_command_encoder(&Default::default());
/// crowd.record(&mut encoder);
/// queue.submit([encoder.finish()]);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct GpuPlayers {
    clips: Arc<Clips>,
    model: ModelId,
    /// The model's actions per character.
    actions: u32,
    /// This frame's commands, in the order given, with their characters.
    pending: Vec<(CharacterId, GpuPlaybackCommand)>,
    /// The same sorted by slot, for the GPU.
    sorted: Vec<GpuPlaybackCommand>,
    /// Per character that has layers (or a twin): the number its
    /// [`LayerId`]s carry and its next layer's.
    layers: HashMap<CharacterId, (u64, u32)>,
    /// The subscribed characters' twins.
    twins: HashMap<CharacterId, Player>,
}

impl GpuPlayers {
    /// Plays the characters of `crowd`'s model `model` on the GPU from now
    /// on, with clips `clips` (made from the model's library: the same
    /// clips, names and durations): its frames come from the playback
    /// pass, no longer from [`Crowd::set_actions`] (which refuses the
    /// model's characters: [`Error::PlayedOnGpu`]). Its characters start at
    /// rest. A model whose sampler sorts its rows on the host (the CPU
    /// adapters' clip-blocks plan) is made again with the grouped plan,
    /// which samples the rows where the pass writes them.
    ///
    /// # Errors
    /// [`Error::UnknownModel`]; [`Error::ModelWithoutMixer`] for a model
    /// added without a mixer; [`PlaybackError::ClipsOfOtherModel`] when
    /// `clips` are not the model's; [`Error::DeviceLimit`] for a device
    /// short of the pass's limits (twelve storage buffers in one stage:
    /// `required_limits` asks for them where the adapter has them),
    /// nothing changed; those of [`Crowd::add_mixed_model`].
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        crowd: &mut Crowd,
        model: ModelId,
        clips: &Arc<Clips>,
    ) -> Result<GpuPlayers> {
        let unknown = Error::UnknownModel {
            what: "model",
            entry: None,
            model: model.index(),
        };
        let library = crowd.models().library(model).ok_or(unknown)?;
        if !clips.fits(library) {
            return Err(PlaybackError::ClipsOfOtherModel {
                clips: clips.id().get(),
                model: crowd.models().name(model).unwrap_or_default().to_owned(),
            }
            .into());
        }
        crowd.play_on_gpu(device, queue, model, &clips.playback_tables())?;
        let actions = crowd
            .models()
            .get(model)
            .and_then(|m| m.mixer.as_ref())
            .map_or(1, |m| m.actions_per_character);
        Ok(GpuPlayers {
            clips: Arc::clone(clips),
            model,
            actions,
            pending: Vec::new(),
            sorted: Vec::new(),
            layers: HashMap::new(),
            twins: HashMap::new(),
        })
    }

    /// The clips the characters play.
    #[cfg(test)]
    pub(crate) fn clips(&self) -> &Arc<Clips> {
        &self.clips
    }

    /// The model.
    #[cfg(test)]
    #[must_use]
    pub(crate) fn model(&self) -> ModelId {
        self.model
    }

    /// `clip`'s index, if it is one of these clips; `character` of this
    /// model.
    fn own(&self, command: &'static str, character: CharacterId, clip: ClipHandle) -> Result<u32> {
        self.check_character(character)?;
        if clip.clips() == self.clips.id() {
            return Ok(clip.index());
        }
        Err(PlaybackError::ClipOfOtherLibrary {
            character: character.slot(),
            command,
            clip: clip.index(),
            clips: clip.clips().get(),
            own: self.clips.id().get(),
        }
        .into())
    }

    fn check_character(&self, character: CharacterId) -> Result<()> {
        if character.model() == self.model {
            return Ok(());
        }
        Err(Error::UnknownCharacter {
            what: "character",
            entry: None,
            model: character.model().index(),
            slot: character.slot(),
        })
    }

    /// Gives `character` `command` (a [`Player`] command), applied in
    /// the next [`advance`](Self::advance) after the commands given before
    /// it.
    ///
    /// # Errors
    /// [`Error::UnknownCharacter`] for a character of another model;
    /// [`PlaybackError::ClipOfOtherLibrary`] for a clip of other clips;
    /// [`PlaybackError::BadDuration`] and [`PlaybackError::BadNumber`] as
    /// the [`Player`] method of the same name;
    /// [`PlaybackError::UnknownLayer`] for a layer not given to the
    /// character ([`add_layer`](Self::add_layer));
    /// [`PlaybackError::NotOnGpu`] for [`Command::PlayBlendSpace`] and
    /// [`Command::SetBlendParams`] (blend spaces play on a [`Player`]
    /// alone for now). Nothing is queued on error.
    pub fn command(&mut self, character: CharacterId, command: Command) -> Result<()> {
        let cmd = match command.clip() {
            Some((name, clip)) => {
                let clip = self.own(name, character, clip)?;
                clip_command(character.slot(), clip, command)?
            }
            None => self.other_command(character, command)?,
        };
        self.pending.push((character, cmd));
        Ok(())
    }

    /// The record of `command`, which names no clip.
    fn other_command(
        &self,
        character: CharacterId,
        command: Command,
    ) -> Result<GpuPlaybackCommand> {
        self.check_character(character)?;
        let slot = character.slot();
        Ok(match command {
            Command::SetSpeed(speed) => {
                check_number(slot, "speed", "speed", (speed, false))?;
                GpuPlaybackCommand::speed(slot, speed)
            }
            Command::SetPaused(paused) => GpuPlaybackCommand::pause(slot, paused),
            Command::Seek(time) => {
                check_number(slot, "seek", "time", (time, false))?;
                GpuPlaybackCommand::seek(slot, time)
            }
            Command::SetWrap(wrap) => GpuPlaybackCommand::wrap(slot, None, wrap),
            Command::SetRepetitions(n) => GpuPlaybackCommand::repetitions(slot, None, n),
            Command::SetLayer(layer, with) => {
                let index = self.layer_of("set_layer", character, layer)?;
                with.check(slot, "set_layer")?;
                GpuPlaybackCommand::layer(slot, 0, index, false, &with.settings())
            }
            Command::FadeLayer(layer, weight, duration) => {
                check_duration(slot, "fade_layer", duration)?;
                check_number(slot, "fade_layer", "weight", (f64::from(weight), true))?;
                let index = self.layer_of("fade_layer", character, layer)?;
                GpuPlaybackCommand::fade_layer(slot, index, weight, duration)
            }
            Command::RemoveLayer(layer) => {
                let index = self.layer_of("remove_layer", character, layer)?;
                GpuPlaybackCommand::remove_layer(slot, index)
            }
            Command::PlayBlendSpace(..) | Command::SetBlendParams(..) => {
                let command = match command {
                    Command::PlayBlendSpace(..) => "play_blend_space",
                    _ => "set_blend_params",
                };
                return Err(PlaybackError::NotOnGpu {
                    character: slot,
                    command,
                }
                .into());
            }
            Command::SetPlacement(translation, rotation) => {
                for v in translation
                    .to_array()
                    .into_iter()
                    .chain(rotation.to_array())
                {
                    check_number(slot, "set_placement", "placement", (f64::from(v), false))?;
                }
                let (t, r) = (translation.to_array(), rotation.normalize().to_array());
                GpuPlaybackCommand::place(slot, t, r)
            }
            // Commands naming a clip are `clip_command`'s.
            _ => return Err(unknown(character)),
        })
    }

    /// The number `character`'s layers carry, and its next layer's.
    fn layer_numbers(&mut self, character: CharacterId) -> &mut (u64, u32) {
        self.layers
            .entry(character)
            .or_insert_with(|| (Player::new_id(), 0))
    }

    /// [`Player::add_layer`] for `character`: the layer's handle, which
    /// its other layer commands (and its twin, once subscribed) take. A
    /// layer the character's table has no room for is skipped on the GPU
    /// (its handle then names no layer).
    ///
    /// # Errors
    /// As [`play`](crate::playback::Command::Play); the numbers and blend of
    /// [`Player::add_layer`].
    pub fn add_layer(
        &mut self,
        character: CharacterId,
        clip: ClipHandle,
        layer: Layer,
    ) -> Result<LayerId> {
        let clip = self.own("add_layer", character, clip)?;
        layer.check(character.slot(), "add_layer")?;
        let numbers = self.layer_numbers(character);
        let (player, index) = (numbers.0, numbers.1);
        numbers.1 += 1;
        let cmd = GpuPlaybackCommand::layer(character.slot(), clip, index, true, &layer.settings());
        self.pending.push((character, cmd));
        Ok(LayerId { player, index })
    }

    /// `layer`'s number, if it is a layer `character` was given.
    fn layer_of(
        &self,
        command: &'static str,
        character: CharacterId,
        layer: LayerId,
    ) -> Result<u32> {
        self.check_character(character)?;
        match self.layers.get(&character) {
            Some(&(player, next)) if player == layer.player && layer.index < next => {
                Ok(layer.index)
            }
            _ => Err(PlaybackError::UnknownLayer {
                character: character.slot(),
                command,
                layer: layer.index,
            }
            .into()),
        }
    }

    /// Keeps the exact CPU twin of `character` from now on: a [`Player`]
    /// started from its state on the GPU (read back, blocking: call it
    /// between frames, after the last frame's submission) and driven by
    /// the same commands and steps, so that its frame (root motion,
    /// events, the action table for a CPU pose of attachments) is there
    /// in the same frame. A character subscribed already keeps its twin.
    ///
    /// # Errors
    /// [`Error::UnknownCharacter`] for a character `crowd` does not hold
    /// or of another model; [`Error::DeviceLost`] and the readback's
    /// errors.
    pub fn subscribe(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        crowd: &Crowd,
        character: CharacterId,
    ) -> Result<()> {
        self.check_character(character)?;
        if !crowd.models().holds(character) {
            return Err(unknown(character));
        }
        if self.twins.contains_key(&character) {
            return Ok(());
        }
        let twin = self.snapshots(device, queue, crowd, &[character])?.pop();
        let twin = twin.ok_or_else(|| unknown(character))?;
        self.twins.insert(character, twin);
        Ok(())
    }

    /// Players holding what the GPU holds for `characters` (read back,
    /// blocking: call it after the last frame's submission): each one's
    /// actions, speed and pause as [`Player::actions`] and the others show
    /// them, its layers under the [`LayerId`]s these players gave, and as
    /// its [`frame`](Player::frame) the GPU's last frame of it: the action
    /// table, its root motion and the events it reported. A snapshot:
    /// nothing keeps it in step (see [`subscribe`](Self::subscribe) for
    /// that).
    ///
    /// # Errors
    /// As [`subscribe`](Self::subscribe).
    pub fn read_back(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        crowd: &Crowd,
        characters: &[CharacterId],
    ) -> Result<Vec<Player>> {
        for &c in characters {
            self.check_character(c)?;
            if !crowd.models().holds(c) {
                return Err(unknown(c));
            }
        }
        self.snapshots(device, queue, crowd, characters)
    }

    /// [`read_back`](Self::read_back), the characters checked.
    fn snapshots(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        crowd: &Crowd,
        characters: &[CharacterId],
    ) -> Result<Vec<Player>> {
        let Some(pass) = crowd.playback(self.model) else {
            return Err(characters.first().map_or(
                Error::UnknownModel {
                    what: "model",
                    entry: None,
                    model: self.model.index(),
                },
                |&c| unknown(c),
            ));
        };
        // Characters added since the last frame start at rest: the GPU
        // resets them with the next frame.
        let fresh = |c: &CharacterId| pass.resets(c.slot());
        let stale: Vec<u32> = characters
            .iter()
            .filter(|c| !fresh(c))
            .map(|c| c.slot())
            .collect();
        let (states, events, _) = pass.read_states(device, queue, &stale)?;
        let mut read = states.into_iter();
        let mut out = Vec::with_capacity(characters.len());
        for c in characters {
            let at_rest = (new_character(self.actions), Vec::new(), Vec::new(), REST);
            let (state, slots, kept, motion) = match fresh(c) {
                true => at_rest,
                false => read.next().unwrap_or(at_rest),
            };
            let &mut (id, next) = self.layer_numbers(*c);
            let numbers = (id, c.slot(), next);
            let mut p = Player::from_state(&self.clips, numbers, state, slots, kept);
            p.fill_actions();
            p.frame.root_motion = RootMotion {
                translation: Vec3::from_slice(&motion[0][..3]),
                rotation: Quat::from_array(motion[1]),
            };
            let mine = events.iter().filter(|e| e[0] == c.slot());
            p.frame.events.extend(mine.filter_map(|e| self.event(e)));
            out.push(p);
        }
        Ok(out)
    }

    /// The event of an entry of the events buffer (model slot, clip,
    /// marker, weight bits); `None` for a clip or marker these clips lack.
    fn event(&self, e: &[u32; 4]) -> Option<Event> {
        let marker = self.clips.markers(e[1]).get(e[2] as usize)?;
        Some(Event {
            name: Arc::clone(&marker.name),
            clip: self.clips.clip_at(e[1]).ok()?,
            time: marker.time,
            weight: f32::from_bits(e[3]),
        })
    }

    /// Decodes a copy of the events buffer ([`buffers`](Self::buffers);
    /// the floats a ring gives) into `out`, cleared first: per event the
    /// character's model slot ([`CharacterId::slot`]) and the [`Event`].
    /// Returns how many events of that frame did not fit.
    pub fn events_from(&self, data: &[f32], out: &mut Vec<(u32, Event)>) -> u32 {
        out.clear();
        let bytes: Vec<u8> = data.iter().flat_map(|f| f.to_ne_bytes()).collect();
        let (entries, dropped) = decode_events(&bytes);
        out.extend(
            entries
                .iter()
                .filter_map(|e| self.event(e).map(|ev| (e[0], ev))),
        );
        dropped
    }

    /// Moves every character's placement by its root motion each frame on
    /// the GPU, from the next frame (`on`), or stops: `translation +=
    /// rotation * motion.translation`, then `rotation = rotation *
    /// motion.rotation` (normalized), the motion in the model's space
    /// ([`Clips::with_root`]). A walking crowd then needs nothing of the
    /// CPU per character; a renderer binds the placements
    /// ([`buffers`](Self::buffers)).
    ///
    /// # Errors
    /// [`Error::UnknownModel`] for a model removed since.
    pub fn move_placements(&self, crowd: &mut Crowd, on: bool) -> Result<()> {
        let model = self.model;
        let pass = crowd.playback_mut(model).ok_or(Error::UnknownModel {
            what: "model",
            entry: None,
            model: model.index(),
        })?;
        pass.set_moving(on);
        Ok(())
    }

    /// The buffers the playback pass writes for chunk `chunk` of the
    /// model's `Animator::chunks`, for a renderer or a readback ring to
    /// bind or copy: `(placements, root_motions, events)`.
    ///
    /// - `placements`: per character of the chunk two `vec4<f32>`, its
    ///   translation (w 0) and its rotation (x, y, z, w).
    /// - `root_motions`: per character its root motion of the last frame,
    ///   two `vec4<f32>`, the translation (w 0) and the rotation, in the
    ///   model's space (identity without [`Clips::with_root`]).
    /// - `events` (the model's, the same for every chunk): the markers
    ///   every character crossed in the frame: a head of four words
    ///   (events written, events that did not fit, capacity, 0), then per
    ///   event four words (the character's model slot, the clip, the
    ///   marker's index in the clip, the action's weight as `f32` bits),
    ///   each character's together and in playhead order. Copy it with a
    ///   [`ReadbackRing`](crate::gpu::ReadbackRing) after
    ///   [`Crowd::record`] (`record_buffer(encoder, buffer,
    ///   buffer.size(), 0)`) and decode it a frame or two later with
    ///   [`events_from`](Self::events_from): events come back as late as
    ///   the ring brings them. A character reports at most 16 events a
    ///   frame on the GPU (the others are counted as not fitting).
    ///
    /// `None` for a chunk the model lacks, or a model removed since.
    #[must_use]
    pub fn buffers<'a>(&self, crowd: &'a Crowd, chunk: usize) -> Option<ChunkBuffers<'a>> {
        let pass = crowd.playback(self.model)?;
        let (placements, motions) = pass.chunk_outputs(chunk)?;
        Some((placements, motions, pass.events()))
    }

    /// Drops `character`'s twin; returns whether it had one.
    pub fn unsubscribe(&mut self, character: CharacterId) -> bool {
        self.twins.remove(&character).is_some()
    }

    /// `character`'s CPU twin, when subscribed: its [`Player::frame`] is
    /// the last [`advance`](Self::advance)'s (root motion, events, action
    /// table), equal to what the GPU computed for it.
    #[must_use]
    pub fn subscribed(&self, character: CharacterId) -> Option<&Player> {
        self.twins.get(&character)
    }

    /// The frame: writes the commands given since the last frame (sorted
    /// by character, each character's in the order given) and a step of
    /// `dt` seconds to the model's playback pass, in one buffer write, and
    /// steps the subscribed characters' twins the same way. The pass runs
    /// in the next [`Crowd::record`]. A twin whose character the crowd no
    /// longer holds is dropped.
    ///
    /// # Errors
    /// [`PlaybackError::BadNumber`] for a `dt` that is NaN, infinite or
    /// negative; [`Error::UnknownCharacter`] for a command's character
    /// the crowd no longer holds (removed since): those commands are
    /// dropped and nothing is written this call (the others stay for the
    /// next); [`Error::DeviceLost`].
    pub fn advance(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        crowd: &mut Crowd,
        dt: f64,
    ) -> Result<()> {
        check_number(0, "advance", "dt", (dt, true))?;
        let held = crowd.models();
        if let Some(&(gone, _)) = self.pending.iter().find(|(c, _)| !held.holds(*c)) {
            self.pending.retain(|(c, _)| held.holds(*c));
            return Err(unknown(gone));
        }
        self.twins.retain(|c, _| held.holds(*c));
        self.layers.retain(|c, _| held.holds(*c));
        self.sorted.clear();
        self.sorted.extend(self.pending.iter().map(|p| p.1));
        self.sorted.sort_by_key(|c| c.character);
        let step = ticks(dt).unsigned_abs();
        crowd.write_playback(device, queue, self.model, step, &self.sorted)?;
        for (character, cmd) in &self.pending {
            if let Some(twin) = self.twins.get_mut(character) {
                // Refused as the GPU skips it: nothing changes.
                let _ = twin.apply("gpu", cmd);
            }
        }
        // The twins' memory first (one short loop whose loads overlap),
        // then their steps, which find it in cache.
        let touched = self
            .twins
            .values()
            .fold(0u32, |sum, twin| sum ^ twin.touch());
        std::hint::black_box(touched);
        for twin in self.twins.values_mut() {
            twin.step(step);
        }
        self.pending.clear();
        Ok(())
    }
}

/// A playback command: for a [`Player`] ([`Player::command`]) or a
/// character of [`GpuPlayers`] ([`GpuPlayers::command`]), with the same
/// rules on both. Seconds are `f64`; what a command depends on (a table
/// with no room, a layer gone) is decided when it is applied.
/// [`SetPlacement`](Self::SetPlacement) is for [`GpuPlayers`] alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Command {
    /// Plays the clip from its start at weight 1, alone in the base (the
    /// layers stay), with its clip's wrap and repetitions.
    Play(ClipHandle),
    /// Crossfades the base to the clip over the duration (seconds): every
    /// base action ramps from its weight to 0, and the clip from 0 (or its
    /// weight, when it is playing already) to the sum of the weights the
    /// base was heading for (1 after a `Play`), as three.js's
    /// `crossFadeTo`. The clip starts from its beginning unless it is
    /// playing already.
    Crossfade(ClipHandle, f64),
    /// As [`Crossfade`](Self::Crossfade) (the clip, the duration), with
    /// the clip's playhead moved to the time (seconds into the clip,
    /// folded by its wrap): no event and no root motion across the move.
    CrossfadeAt(ClipHandle, f64, f64),
    /// Adds the clip to the base from its start, ramping from weight 0 to
    /// 1 over the duration; it becomes the current action. A full table
    /// drops its lightest base action first.
    FadeIn(ClipHandle, f64),
    /// Ramps the clip's base action from its weight to 0 over the
    /// duration; it is removed there (a clip the base does not play:
    /// nothing changes).
    FadeOut(ClipHandle, f64),
    /// The speed every playhead moves at (negative plays backwards, 0
    /// holds still; fades go on in real time).
    SetSpeed(f64),
    /// Pauses (`true`) or resumes: a paused character's playheads and
    /// fades stand still, and it reports no root motion and no event.
    SetPaused(bool),
    /// Moves every base action's playhead to the time (seconds, folded by
    /// its wrap): no event and no root motion across the jump; their
    /// repetitions count again from there.
    Seek(f64),
    /// The wrap of the current action, which its clip keeps for its next
    /// starts (with no base action playing: the wrap clips without one of
    /// their own start with).
    SetWrap(WrapMode),
    /// One clip's wrap, kept from now on: every action of it playing
    /// (base or layer) and its next starts.
    SetClipWrap(ClipHandle, WrapMode),
    /// How many passes the current action plays (repeat, or ping-pong out
    /// or back) before it stops and holds at its end, as three.js's
    /// `AnimationAction.repetitions` (`None`, the default: on and on); its
    /// clip keeps it for its next starts.
    SetRepetitions(Option<u64>),
    /// One clip's repetitions, kept from now on as
    /// [`SetClipWrap`](Self::SetClipWrap) keeps a wrap.
    SetClipRepetitions(ClipHandle, Option<u64>),
    /// Changes a layer (from [`Player::add_layer`] or
    /// [`GpuPlayers::add_layer`]) to the settings: its weight (at once,
    /// ending a fade), mask, blend, wrap, speed and repetitions; its
    /// playhead goes on.
    SetLayer(LayerId, Layer),
    /// Ramps a layer's weight to the weight over the duration (to 0: the
    /// layer is removed there).
    FadeLayer(LayerId, f32, f64),
    /// Removes a layer at once.
    RemoveLayer(LayerId),
    /// Places the character (where the renderer draws it, which
    /// [`GpuPlayers::move_placements`] moves by its root motion): its
    /// translation and rotation (normalized). Its components must be
    /// finite ([`PlaybackError::BadNumber`]).
    SetPlacement(Vec3, Quat),
    /// Plays a blend space ([`Clips::add_blend_space`](super::Clips::add_blend_space)):
    /// at once alone in the base (duration 0), or crossfading into it over
    /// the duration (seconds, `> 0`): the base's other actions and the
    /// other spaces ramp to 0, the space from 0 to 1. Its clips are base
    /// actions weighed by the space's weights times its fade; a synced
    /// space keeps the phase of the synced space playing, or of the
    /// current action. A base command (play, crossfade, fade) stops the
    /// spaces, their actions going on as plain ones. [`Player`] alone for
    /// now: [`GpuPlayers`] refuses it ([`PlaybackError::NotOnGpu`]).
    PlayBlendSpace(BlendSpaceId, f64),
    /// A blend space's parameters (1D: `(x, 0)`), kept for when it plays:
    /// its weights head for the weights there, at once or at its
    /// smoothing's rate. [`Player`] alone for now, as
    /// [`PlayBlendSpace`](Self::PlayBlendSpace).
    SetBlendParams(BlendSpaceId, Vec2),
}

impl Command {
    /// The command's name and clip, for those that name one.
    fn clip(&self) -> Option<(&'static str, ClipHandle)> {
        match *self {
            Command::Play(c) => Some(("play", c)),
            Command::Crossfade(c, _) => Some(("crossfade", c)),
            Command::CrossfadeAt(c, _, _) => Some(("crossfade_at", c)),
            Command::FadeIn(c, _) => Some(("fade_in", c)),
            Command::FadeOut(c, _) => Some(("fade_out", c)),
            Command::SetClipWrap(c, _) => Some(("set_clip_wrap", c)),
            Command::SetClipRepetitions(c, _) => Some(("set_clip_repetitions", c)),
            _ => None,
        }
    }
}

/// The record of `command`, which names clip `clip` (its index) for the
/// character in model slot `slot`.
fn clip_command(slot: u32, clip: u32, command: Command) -> Result<GpuPlaybackCommand> {
    let (name, duration) = match command {
        Command::Crossfade(_, d) => ("crossfade", d),
        Command::CrossfadeAt(_, d, _) => ("crossfade_at", d),
        Command::FadeIn(_, d) => ("fade_in", d),
        Command::FadeOut(_, d) => ("fade_out", d),
        _ => ("", 0.0),
    };
    if !name.is_empty() {
        check_duration(slot, name, duration)?;
    }
    Ok(match command {
        Command::Crossfade(_, d) => GpuPlaybackCommand::crossfade(slot, clip, d, None),
        Command::CrossfadeAt(_, d, t) => {
            check_number(slot, "crossfade_at", "time", (t, false))?;
            GpuPlaybackCommand::crossfade(slot, clip, d, Some(t))
        }
        Command::FadeIn(_, d) => GpuPlaybackCommand::fade(slot, clip, d, false),
        Command::FadeOut(_, d) => GpuPlaybackCommand::fade(slot, clip, d, true),
        Command::SetClipWrap(_, wrap) => GpuPlaybackCommand::wrap(slot, Some(clip), wrap),
        Command::SetClipRepetitions(_, n) => GpuPlaybackCommand::repetitions(slot, Some(clip), n),
        _ => GpuPlaybackCommand::play(slot, clip),
    })
}

/// A chunk's placements, root motions and the model's events
/// ([`GpuPlayers::buffers`]).
type ChunkBuffers<'a> = (&'a wgpu::Buffer, &'a wgpu::Buffer, &'a wgpu::Buffer);

/// A root motion of no motion, as read back.
const REST: [[f32; 4]; 2] = [[0.0; 4], [0.0, 0.0, 0.0, 1.0]];

fn unknown(character: CharacterId) -> Error {
    Error::UnknownCharacter {
        what: "character",
        entry: None,
        model: character.model().index(),
        slot: character.slot(),
    }
}
