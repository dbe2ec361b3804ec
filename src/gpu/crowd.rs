//! [`Crowd`]: several models (rigs, each with the library of clips made
//! for it) in one object. A clip is named through its model ([`ClipRef`](crate::ClipRef)),
//! an instance names its model ([`CrowdInstance`]) or a character holding
//! a slot of it ([`CharacterId`]), and a clip of one model given to an
//! instance of another is refused. Each model is an [`Animator`] (in
//! chunks when its outputs would not fit the device's limits in one);
//! per frame the crowd's table is placed in the models' slots on the
//! host (no allocation in steady state) and every chunk's passes are
//! recorded into one compute pass. Models come, grow and go in place.

use super::animator::Animator;
use super::chunk::AnimatorChunk;
use super::playback::PlaybackPass;
use super::timer::PassTimer;
use crate::error::{Error, Result};
use crate::model::crowd::{
    CharacterId, CrowdCharacter, CrowdInstance, CrowdModels, CrowdPoses, ModelId,
};
use crate::model::crowd::{CrowdModel, MixedFrame, ModelFrame, ModelSource, Placement};
use crate::model::library::AnimationLibrary;
use crate::model::mix::{Action, MixerDesc};
use crate::model::BoundLibrary;
use crate::plan::ChunkModel;

/// One stage of a crowd's passes, recorded into a compute pass of its own
/// (the bench times each; `Crowd::record` records all of them, in this
/// order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CrowdStage {
    /// The playback passes of the models played on the GPU.
    Playback,
    /// Every chunk's sampling dispatches.
    Sampling,
    /// Every chunk's pose, mix and skin passes.
    Posing,
}

/// One model's GPU side: its animator (one chunk or several) and its
/// part of each frame; for a model played on the GPU, its playback pass.
#[derive(Debug)]
struct Model {
    animator: Animator,
    frame: ModelFrame,
    playback: Option<PlaybackPass>,
}

/// What an animator of `m` animates.
fn chunk_model(m: &CrowdModel) -> ChunkModel<'_> {
    match (&m.source, &m.mixer) {
        (ModelSource::Bound(b), Some(desc)) => ChunkModel::Mixed(b, desc),
        (ModelSource::Bound(b), None) => ChunkModel::Bound(b),
        (ModelSource::Sampled(l), _) => ChunkModel::Sampled(l),
    }
}

/// Several models animated together: each model is a library bound to a
/// rig ([`BoundLibrary`]; or a library alone, to sample only) with an
/// [`Animator`] of its own, split into chunks of equal capacity when its
/// outputs for its capacity would pass the device's limits in one
/// ([`plan::chunk_capacity`](crate::plan::chunk_capacity); or the crowd's
/// [`with_chunk_limit`](Self::with_chunk_limit)), each chunk with buffers
/// of its own and sharing the model's upload of its library, so that a
/// crowd is bounded by the device's memory, not by one binding. Models
/// whose libraries are the same library (two characters from different
/// files with the same skeleton names, bound to one library of clips)
/// share one upload of it. The one object a renderer of a crowd with
/// more than one kind of character holds.
///
/// Once: [`Crowd::new`], then [`add_model`](Self::add_model) per model.
/// Per frame: [`set_instances`](Self::set_instances) with every character
/// of every model in one slice (placed per model on the host, no
/// allocation in steady state), [`record`](Self::record) into your
/// encoder, then draw each model with its own mesh, binding the buffers
/// of each of that model's chunks
/// ([`model`](Self::model)`(id)?.chunks()`, then
/// [`AnimatorChunk::joint_matrix_buffer`](crate::AnimatorChunk::joint_matrix_buffer)
/// and the others); crowd instance
/// `i` is at [`slot`](Self::slot)`(i)` of its model, in the chunk
/// [`model`](Self::model) says.
///
/// # Slots that stay
///
/// An entry made with [`CrowdInstance::new`] or [`CrowdCharacter::new`]
/// takes its model's lowest free slot in frame order: when one leaves the
/// frame, the later ones move down. A character added with
/// [`add_character`](Self::add_character) holds its slot until it is
/// removed, whatever other characters and models do; a frame names it
/// with [`CrowdInstance::of`] or [`CrowdCharacter::of`], and its results
/// are at [`CharacterId::slot`] of its model (a character not named in a
/// frame is at rest there). Entries without a character fill the slots no
/// character holds.
///
/// # Changes in place
///
/// [`add_model`](Self::add_model) adds a model beside the others;
/// [`grow_model`](Self::grow_model) appends chunks to a model (its
/// buffers there stay, nothing is uploaded again);
/// [`remove_model`](Self::remove_model) drops a model's buffers. No other
/// model's buffers, uploads, ids or characters change.
///
/// ```no_run
/// # fn f(device: &wgpu::Device, queue: &wgpu::Queue,
/// #      knight_clips: &keyframe_gpu::AnimationLibrary, knight: &keyframe_gpu::Rig,
/// #      horse_clips: &keyframe_gpu::AnimationLibrary, horse: &keyframe_gpu::Rig)
/// #      -> Result<(), keyframe_gpu::Error> {
/// use keyframe_gpu::{Crowd, CrowdInstance};
/// let mut crowd = Crowd::new();
/// let k = crowd.add_model(device, queue, "knight", &knight_clips.bind(knight)?, 500)?;
/// let h = crowd.add_model(device, queue, "horse", &horse_clips.bind(horse)?, 100)?;
/// let walk = crowd.models().clip(k, "walk").expect("the knight walks");
/// let gallop = crowd.models().clip(h, "gallop").expect("the horse gallops");
/// // The hero keeps slot 0 of the knights' buffers while extras come and go.
/// let hero = crowd.add_character(k)?;
/// let frame = [
///     CrowdInstance::of(hero, walk, 0.5),
///     CrowdInstance::new(k, walk, 0.1),
///     CrowdInstance::new(h, gallop, 0.25),
/// ];
/// crowd.set_instances(queue, &frame)?;
/// let mut encoder = device.create_command_encoder(&Default::default());
/// crowd.record(&mut encoder);
/// queue.submit([encoder.finish()]);
/// // More knights: chunks are appended, the horses are untouched.
/// crowd.grow_model(device, k, 5_000)?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Crowd {
    /// The device-free description: names, libraries, mixers, capacities,
    /// characters.
    desc: CrowdModels,
    /// By model index; `None` for a removed model.
    models: Vec<Option<Model>>,
    /// The frame in effect's placement.
    placement: Placement,
    /// The next frame's, swapped in once it is accepted.
    next: Placement,
    /// Each character's first action, of the mixed frame being set.
    firsts: Vec<usize>,
    /// The most instances a chunk of a model added from now on holds.
    chunk_limit: u32,
    /// The table [`set_players`](Self::set_players) builds (in
    /// `players.rs`), kept for the next frame's.
    pub(crate) from_players: (Vec<CrowdCharacter>, Vec<Action>),
}

impl Default for Crowd {
    fn default() -> Self {
        Self::new()
    }
}

impl Crowd {
    /// A crowd with no model yet. It holds no GPU object of its own (each
    /// model's [`Animator`] holds its buffers), so it needs no device.
    #[must_use]
    pub fn new() -> Self {
        Crowd {
            desc: CrowdModels::new(),
            models: Vec::new(),
            placement: Placement::default(),
            next: Placement::default(),
            firsts: Vec::new(),
            chunk_limit: u32::MAX,
            from_players: (Vec::new(), Vec::new()),
        }
    }

    /// The same crowd, the models added after it split into chunks of at
    /// most `instances` instances (characters with a mixer; at least 1)
    /// even where the device would take more in one: smaller buffers, for
    /// a renderer that wants them, or to test the chunked path on a small
    /// crowd. By default a chunk is as large as the device allows.
    #[must_use]
    pub fn with_chunk_limit(self, instances: u32) -> Crowd {
        Crowd {
            chunk_limit: instances.max(1),
            ..self
        }
    }

    /// The crowd's models without their GPU objects (their ids, names,
    /// libraries and clips): what the CPU twin
    /// ([`cpu::crowd_poses`](crate::cpu::crowd_poses),
    /// [`cpu::crowd_mixed_poses`](crate::cpu::crowd_mixed_poses)) takes.
    #[must_use]
    pub fn models(&self) -> &CrowdModels {
        &self.desc
    }

    /// Adds a model named `name`: `bound` is the library of its clips bound
    /// to its rig, for up to `max_instances` instances of this model per
    /// frame. A model whose library is an earlier model's (one without a
    /// mixer) shares that model's upload of it ([`Animator::sharing`]).
    ///
    /// # Errors
    /// [`Error::DuplicateModel`] when the crowd already has a model of that
    /// name; those of [`Animator::new`] (a lost device, a library whose
    /// tables pass the device's limits). On error the crowd is unchanged.
    pub fn add_model(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        name: &str,
        bound: &BoundLibrary,
        max_instances: u32,
    ) -> Result<ModelId> {
        self.desc.check_name(name)?;
        let share = self
            .animators()
            .filter(|a| !a.has_mixer() && a.library().same_data(bound.library()))
            .find_map(|a| a.chunks().first());
        let model = ChunkModel::Bound(bound);
        let animator =
            Animator::chunked(device, queue, model, max_instances, self.chunk_limit, share)?;
        let source = ModelSource::Bound(bound.clone());
        self.push(CrowdModel::new(name, source, None, max_instances), animator)
    }

    /// Adds a model named `name` whose characters each blend several
    /// actions ([`Animator::with_mixer`]): `bound` is the library of its
    /// clips bound to its rig, `mixer` its capacity (characters, actions
    /// per character) and masks. Its characters take actions through
    /// [`set_actions`](Self::set_actions), or one clip each through
    /// [`set_instances`](Self::set_instances). Its chunks share one
    /// upload of its library.
    ///
    /// # Errors
    /// [`Error::DuplicateModel`]; those of [`Animator::with_mixer`] (masks
    /// of another rig, capacities, a lost device). On error the crowd is
    /// unchanged.
    pub fn add_mixed_model(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        name: &str,
        bound: &BoundLibrary,
        mixer: &MixerDesc,
    ) -> Result<ModelId> {
        self.desc.check_name(name)?;
        crate::model::mix::check_desc(bound.rig(), mixer)?;
        let model = ChunkModel::Mixed(bound, mixer);
        let capacity = mixer.characters;
        let animator = Animator::chunked(device, queue, model, capacity, self.chunk_limit, None)?;
        let source = ModelSource::Bound(bound.clone());
        let model = CrowdModel::new(name, source, Some(mixer.clone()), capacity);
        self.push(model, animator)
    }

    /// Adds a model that only samples `library` (no rig), for up to
    /// `max_instances` instances per frame.
    ///
    /// # Errors
    /// As [`add_model`](Self::add_model).
    pub fn add_sampled_model(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        name: &str,
        library: &AnimationLibrary,
        max_instances: u32,
    ) -> Result<ModelId> {
        self.desc.check_name(name)?;
        let model = ChunkModel::Sampled(library);
        let animator =
            Animator::chunked(device, queue, model, max_instances, self.chunk_limit, None)?;
        let source = ModelSource::Sampled(library.clone());
        self.push(CrowdModel::new(name, source, None, max_instances), animator)
    }

    fn push(&mut self, model: CrowdModel, animator: Animator) -> Result<ModelId> {
        let mut frame = ModelFrame::default();
        let per_character = model.mixer.as_ref().map_or(0, |m| m.actions_per_character);
        frame.reserve(model.capacity, per_character);
        let id = self.desc.push(model)?;
        self.models.push(Some(Model {
            animator,
            frame,
            playback: None,
        }));
        self.reserve();
        Ok(id)
    }

    /// Every per-frame vector at its largest size: a model never holds
    /// more than its capacity, a frame never more than their sum.
    fn reserve(&mut self) {
        let total: usize = self.desc.live().map(|(_, m)| m.capacity as usize).sum();
        self.placement.reserve(&self.desc, total);
        self.next.reserve(&self.desc, total);
        self.firsts.reserve(total.saturating_sub(self.firsts.len()));
    }

    /// Grows model `id` to `capacity` instances (characters with a
    /// mixer): chunks of its chunk capacity are appended, sharing its
    /// upload of the library, so nothing is uploaded again and its chunks
    /// there keep their buffers and contents; no other model changes, and
    /// every character keeps its slot. A capacity not above the model's
    /// changes nothing.
    ///
    /// # Errors
    /// [`Error::UnknownModel`] for an id not of this crowd; those of
    /// [`Animator::new`]. On error the crowd is unchanged.
    pub fn grow_model(&mut self, device: &wgpu::Device, id: ModelId, capacity: u32) -> Result<()> {
        let unknown = Error::UnknownModel {
            what: "model",
            entry: None,
            model: id.index(),
        };
        let (Some(m), Some(Some(model))) = (self.desc.get(id), self.models.get_mut(id.index()))
        else {
            return Err(unknown);
        };
        if capacity <= m.capacity {
            return Ok(());
        }
        model.animator.grow_to(device, chunk_model(m), capacity)?;
        if let Some(p) = &mut model.playback {
            p.grow(device, model.animator.chunks())?;
        }
        let per_character = m.mixer.as_ref().map_or(0, |d| d.actions_per_character);
        model.frame.reserve(capacity, per_character);
        self.desc.grow(id, capacity);
        self.reserve();
        Ok(())
    }

    /// Removes model `id` with its characters and buffers (an upload it
    /// shares with another model stays with that one); its id, its
    /// characters' and its clips' are refused from now on. The frame in
    /// effect keeps the other models' entries where they are (this
    /// model's entries read nothing). Returns whether `id` was a model of
    /// this crowd.
    pub fn remove_model(&mut self, id: ModelId) -> bool {
        if self.desc.remove(id).is_none() {
            return false;
        }
        if let Some(slot) = self.models.get_mut(id.index()) {
            *slot = None;
        }
        true
    }

    /// A new character of model `id`, holding the model's lowest free
    /// slot until [`remove_character`](Self::remove_character): its
    /// results stay at [`CharacterId::slot`] of the model's buffers
    /// whatever other characters and models do. Frames name it with
    /// [`CrowdInstance::of`] or [`CrowdCharacter::of`].
    ///
    /// # Errors
    /// [`Error::UnknownModel`]; [`Error::ModelFull`] when its characters
    /// hold every slot of the model (grow it first).
    pub fn add_character(&mut self, id: ModelId) -> Result<CharacterId> {
        let character = self.desc.add_character(id)?;
        if let Some(p) = self.playback_mut(id) {
            p.reset(character.slot());
        }
        Ok(character)
    }

    /// Removes a character: its slot is free for entries without a
    /// character and for the next character added; its handle is refused
    /// from now on. No other character moves.
    ///
    /// # Errors
    /// [`Error::UnknownCharacter`] for a character not in the crowd.
    pub fn remove_character(&mut self, character: CharacterId) -> Result<()> {
        self.desc.remove_character(character)?;
        if let Some(p) = self.playback_mut(character.model()) {
            p.reset(character.slot());
        }
        Ok(())
    }

    /// How many uploads of clip libraries the crowd's models hold: models
    /// whose bound libraries are the same library share one, and so do a
    /// model's chunks.
    #[must_use]
    pub fn uploads(&self) -> usize {
        let mut ids: Vec<usize> = self
            .animators()
            .flat_map(Animator::chunks)
            .map(AnimatorChunk::upload_id)
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids.len()
    }

    /// Every model's animator.
    fn animators(&self) -> impl Iterator<Item = &Animator> + '_ {
        self.models.iter().flatten().map(|m| &m.animator)
    }

    /// The model's [`Animator`]: its chunks hold this model's instances of
    /// the last frame set, at the slots [`slot`](Self::slot) gives (slot
    /// `s` is index `s % chunk_capacity` of
    /// [`chunks`](Animator::chunks)`()[s / chunk_capacity]`,
    /// [`chunk_capacity`](Animator::chunk_capacity)); bind a chunk's
    /// buffers to draw its instances. `None` when `id` is not a model of
    /// this crowd.
    #[must_use]
    pub fn model(&self, id: ModelId) -> Option<&Animator> {
        self.desc.index(id)?;
        Some(&self.models.get(id.index())?.as_ref()?.animator)
    }

    /// Crowd instances in the last frame set.
    #[must_use]
    pub fn instance_count(&self) -> usize {
        self.placement.slots.len()
    }

    /// Where crowd instance `instance` of the last frame set landed: its
    /// model and its slot in the model (the instance index of the model's
    /// [`Poses`](crate::Poses) in [`read_back`](Self::read_back), and of
    /// its [`Animator`], whose chunk holds it as [`model`](Self::model)
    /// says).
    /// Entries without a character keep their crowd order within their
    /// model. `None` past the last instance.
    #[must_use]
    pub fn slot(&self, instance: usize) -> Option<(ModelId, u32)> {
        let &(index, slot) = self.placement.slots.get(instance)?;
        Some((self.desc.id_at(index as usize), slot))
    }

    /// Writes this frame's instances of every model: each model's
    /// [`Animator`] gets the table of its slots (an entry of a character
    /// at its slot, the others in crowd order in the free slots; a slot of
    /// a character not named is at rest: clip 0 at time 0). Every
    /// instance is checked before anything is written, so errors name the
    /// index in `instances`.
    ///
    /// Allocates nothing in steady state: the tables are sized when the
    /// models are added (or grown).
    ///
    /// # Errors
    /// Naming the first bad instance: [`Error::UnknownModel`] (an id of
    /// another crowd, or of a removed model), [`Error::UnknownCharacter`],
    /// [`Error::CharacterTwice`], [`Error::ClipOfOtherModel`] (a clip of
    /// another model than the instance's), [`Error::ClipOutOfRange`],
    /// [`Error::InstanceTimeNotFinite`]; and [`Error::ModelFull`] when a
    /// model gets more instances than it has free slots. On error nothing
    /// is written: every model keeps its previous table, and
    /// [`slot`](Self::slot) the previous frame's mapping.
    /// [`Error::DeviceLost`] once a model's device is lost (checked first).
    pub fn set_instances(
        &mut self,
        queue: &wgpu::Queue,
        instances: &[CrowdInstance],
    ) -> Result<()> {
        self.check_devices("Crowd::set_instances")?;
        let models = instances.iter().map(|i| i.model);
        self.check_not_played("instance", models)?;
        self.next.place_instances(&self.desc, instances)?;
        for (index, m) in self.models.iter_mut().enumerate() {
            let Some(m) = m.as_mut().filter(|m| m.playback.is_none()) else {
                continue;
            };
            m.frame.fill_instances(&self.next, index, instances);
            // Cannot fail: the placement checked what the animator
            // checks, check_devices() the devices.
            m.animator.write_instances(queue, &m.frame.instances)?;
        }
        std::mem::swap(&mut self.placement, &mut self.next);
        Ok(())
    }

    /// Writes this frame's actions of every model with a mixer
    /// ([`add_mixed_model`](Self::add_mixed_model)): `characters[c]` is
    /// crowd character `c`, its model (or its [`CharacterId`]) and how
    /// many of `actions` (consecutive, in list order) are its own; each
    /// model's animator gets its characters in slot order (as
    /// [`set_instances`](Self::set_instances) places them) and blends
    /// them by the mixer's rules ([`Animator::set_actions`]). Models not
    /// named this frame, and models without a mixer, get no character.
    /// Crowd character `c` is at [`slot`](Self::slot)`(c)` of its model's
    /// buffers.
    ///
    /// A character with more actions than its mixer's
    /// `actions_per_character` drops its lightest base actions (normal,
    /// unmasked; the first of equal weights in its list) until they fit,
    /// then its lightest others if it must, as a `playback::Player` makes
    /// room: the other
    /// characters' frame goes on. Every other refusal refuses the whole
    /// frame: every character and action is checked before anything is
    /// written.
    ///
    /// ```no_run
    /// # fn f(device: &wgpu::Device, queue: &wgpu::Queue,
    /// #      xbot: &keyframe_gpu::BoundLibrary, robot: &keyframe_gpu::BoundLibrary)
    /// #      -> Result<(), keyframe_gpu::Error> {
    /// use keyframe_gpu::{Action, Crowd, CrowdCharacter, MixerDesc, WrapMode};
    /// let mut crowd = Crowd::new();
    /// let x = crowd.add_mixed_model(device, queue, "xbot", xbot, &MixerDesc::new(500, 2))?;
    /// let r = crowd.add_mixed_model(device, queue, "robot", robot, &MixerDesc::new(100, 2))?;
    /// let clips = crowd.models();
    /// let (idle, run) = (clips.clip(x, "idle").expect("idle"), clips.clip(x, "run").expect("run"));
    /// let dance = crowd.models().clip(r, "Dance").expect("dance");
    /// let dancer = crowd.add_character(r)?;
    /// // An xbot halfway through a crossfade from idle to run, a robot dancing.
    /// let actions = [
    ///     Action::new(idle.clip(), 1.2).with_weight(0.5).with_wrap(WrapMode::Repeat),
    ///     Action::new(run.clip(), 1.2).with_weight(0.5).with_wrap(WrapMode::Repeat),
    ///     Action::new(dance.clip(), 0.4).with_wrap(WrapMode::Repeat),
    /// ];
    /// let characters = [CrowdCharacter::new(x, 2), CrowdCharacter::of(dancer, 1)];
    /// crowd.set_actions(queue, &characters, &actions)?;
    /// # Ok(()) }
    /// ```
    ///
    /// Allocates nothing in steady state.
    ///
    /// # Errors
    /// Naming the crowd's character: [`Error::UnknownModel`],
    /// [`Error::UnknownCharacter`], [`Error::CharacterTwice`],
    /// [`Error::ModelWithoutMixer`], the action errors of
    /// [`MixError`](crate::MixError) (clip or mask out of range for the
    /// character's model, weights, times; the action named by its index
    /// in the character's own list),
    /// [`MixError::CountMismatch`](crate::MixError::CountMismatch);
    /// [`Error::ModelFull`] past a model's free slots. On error nothing is
    /// written: every model keeps its previous frame.
    /// [`Error::DeviceLost`] once a model's device is lost (checked first).
    pub fn set_actions(
        &mut self,
        queue: &wgpu::Queue,
        characters: &[CrowdCharacter],
        actions: &[Action],
    ) -> Result<()> {
        self.check_devices("Crowd::set_actions")?;
        self.check_not_played("character", characters.iter().map(|c| c.model))?;
        self.next
            .place_characters(&self.desc, characters, actions.len())?;
        MixedFrame::index(characters, &mut self.firsts);
        let frame = MixedFrame {
            characters,
            actions,
            firsts: &self.firsts,
        };
        // Every model's actions are packed (checked) before any is
        // written.
        for (index, m) in self.models.iter_mut().enumerate() {
            let m = m.as_mut().filter(|m| m.playback.is_none());
            let (Some(m), Some(Some(desc))) = (m, self.desc.models.get(index)) else {
                continue;
            };
            let Some(mixer) = &desc.mixer else { continue };
            let clips = desc.library().clips().len();
            m.frame
                .fill_actions(&self.next, index, &frame, mixer, clips)?;
            m.animator
                .pack_actions(&m.frame.actions, &m.frame.counts)
                .map_err(|e| m.frame.rename(e))?;
        }
        for m in self.models.iter_mut().flatten() {
            if m.playback.is_some() {
                continue;
            }
            if m.animator.has_mixer() {
                m.animator.write_packed(queue)?;
            } else {
                m.animator.write_instances(queue, &[])?;
            }
        }
        std::mem::swap(&mut self.placement, &mut self.next);
        Ok(())
    }

    /// [`Error::PlayedOnGpu`] for the first of `models` (entries of a
    /// frame) played on the GPU.
    fn check_not_played(
        &self,
        what: &'static str,
        models: impl Iterator<Item = ModelId>,
    ) -> Result<()> {
        for (entry, id) in models.enumerate() {
            let played = self.desc.index(id).is_some()
                && matches!(self.models.get(id.index()), Some(Some(m)) if m.playback.is_some());
            if played {
                return Err(Error::PlayedOnGpu {
                    what,
                    entry,
                    model: self.desc.name(id).unwrap_or_default().to_owned(),
                });
            }
        }
        Ok(())
    }

    /// Model `id`'s playback pass, when it is played on the GPU.
    pub(crate) fn playback_mut(&mut self, id: ModelId) -> Option<&mut PlaybackPass> {
        self.desc.index(id)?;
        self.models.get_mut(id.index())?.as_mut()?.playback.as_mut()
    }

    /// Plays model `id`'s characters on the GPU from now on: a playback
    /// pass (`gpu::playback`) over its chunks, which writes their sampler
    /// rows and mixer tables each frame; a model whose sampler sorts its
    /// rows on the host (the clip-blocks plan) is made again with the
    /// grouped plan first (its buffers are new then). Its characters keep
    /// their slots and start at rest. Nothing changes for a model played
    /// already.
    ///
    /// # Errors
    /// [`Error::UnknownModel`]; [`Error::ModelWithoutMixer`] for a model
    /// added without a mixer; those of [`Animator::with_mixer`].
    pub(crate) fn play_on_gpu(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        id: ModelId,
        clips: &crate::cpu::playback::PlaybackTables,
    ) -> Result<()> {
        let unknown = Error::UnknownModel {
            what: "model",
            entry: None,
            model: id.index(),
        };
        let (Some(desc), Some(Some(model))) = (self.desc.get(id), self.models.get_mut(id.index()))
        else {
            return Err(unknown);
        };
        if model.playback.is_some() {
            return Ok(());
        }
        // Before anything changes: a device short of the pass's limits.
        super::check_playback_device(device)?;
        let Some(mixer) = &desc.mixer else {
            return Err(Error::ModelWithoutMixer {
                character: 0,
                model: desc.name.clone(),
            });
        };
        if model.animator.plan().sampler == crate::plan::SamplerPlan::ClipBlocks {
            let limits = (desc.capacity, model.animator.chunk_capacity());
            let grouped = crate::plan::SamplerPlan::Grouped;
            let animator =
                Animator::chunked_with(device, queue, chunk_model(desc), limits, grouped)?;
            model.animator = animator;
        }
        let size = (model.animator.chunk_capacity(), mixer.actions_per_character);
        let chunks = model.animator.chunks_mut();
        let pass = PlaybackPass::new(device, queue, chunks, size, clips)?;
        // Characters added before start at rest as every slot does.
        model.playback = Some(pass);
        Ok(())
    }

    /// Writes model `id`'s next playback frame: a step of `dt` ticks and
    /// `commands`, sorted by character (`PlaybackPass::write_frame`).
    pub(crate) fn write_playback(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        id: ModelId,
        dt: u64,
        commands: &[crate::layout::GpuPlaybackCommand],
    ) -> Result<()> {
        self.desc.index(id).ok_or(Error::UnknownModel {
            what: "model",
            entry: None,
            model: id.index(),
        })?;
        let Some(Some(Model {
            animator,
            playback: Some(p),
            ..
        })) = self.models.get_mut(id.index())
        else {
            return Err(Error::Gpu {
                during: "GpuPlayers::advance",
                message: "the model is not played on the GPU".into(),
            });
        };
        p.write_frame(device, queue, animator.chunks_mut(), dt, commands)
    }

    /// Model `id`'s playback pass, when it is played on the GPU.
    pub(crate) fn playback(&self, id: ModelId) -> Option<&PlaybackPass> {
        self.desc.index(id)?;
        self.models.get(id.index())?.as_ref()?.playback.as_ref()
    }

    /// [`Error::DeviceLost`] when a model's device is lost: one poll (a
    /// crowd's models are on one device), then each chunk's probe.
    fn check_devices(&self, during: &'static str) -> Result<()> {
        let chunks = self.animators().flat_map(Animator::chunks);
        for (i, c) in chunks.enumerate() {
            let health = c.health();
            if i == 0 {
                health.check(during)?;
            } else {
                health.probe(during)?;
            }
        }
        Ok(())
    }

    /// Records every model's passes into `encoder`, in one compute pass
    /// labelled `keyframe-gpu.crowd`. Records nothing once the device is
    /// known lost (see [`Animator::record`]).
    pub fn record(&self, encoder: &mut wgpu::CommandEncoder) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("keyframe-gpu.crowd"),
            timestamp_writes: None,
        });
        self.record_pass(&mut pass);
    }

    /// [`record`](Self::record), with the compute pass's GPU time (every
    /// model's passes) measured by `timer` (when its previous measurement
    /// has been read). Records nothing once the device is known lost.
    pub fn record_timed(&self, encoder: &mut wgpu::CommandEncoder, timer: &mut PassTimer) {
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("keyframe-gpu.crowd"),
                timestamp_writes: timer.pass_writes(),
            });
            self.record_pass(&mut pass);
        }
        timer.resolve(encoder);
    }

    /// Records every model's passes into a compute pass the caller owns
    /// (a chunk without instances this frame records nothing).
    pub fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        for m in self.models.iter().flatten() {
            if let Some(p) = &m.playback {
                p.record_pass(pass);
            }
            m.animator.record_pass(pass);
        }
    }

    /// Records one stage of every model's passes (`internals::record_stage`).
    pub(crate) fn record_stage(&self, stage: CrowdStage, pass: &mut wgpu::ComputePass<'_>) {
        for m in self.models.iter().flatten() {
            match stage {
                CrowdStage::Playback => {
                    if let Some(p) = &m.playback {
                        p.record_pass(pass);
                    }
                }
                CrowdStage::Sampling => {
                    for c in m.animator.chunks() {
                        c.record_sampling(pass);
                    }
                }
                CrowdStage::Posing => {
                    for c in m.animator.chunks() {
                        c.record_posing(pass);
                    }
                }
            }
        }
    }

    /// Reads the current frame's results of every model back (blocking;
    /// see [`Animator::read_back`]): each model's [`Poses`](crate::Poses)
    /// by slot, with accessors by crowd instance and by character.
    ///
    /// # Errors
    /// Those of [`Animator::read_back`]: [`Error::DeviceLost`] once the
    /// device is lost.
    pub fn read_back(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<CrowdPoses> {
        self.check_devices("Crowd::read_back")?;
        let mut models = Vec::with_capacity(self.models.len());
        for m in &self.models {
            models.push(match m {
                Some(m) => Some(m.animator.read_back(device, queue)?),
                None => None,
            });
        }
        Ok(CrowdPoses {
            models,
            slots: self.placement.slots.clone(),
        })
    }
}
